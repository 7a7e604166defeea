//! One writer per index: an exclusive lock on a file in the index directory, holding the owner's
//! pid so a second writer can say who holds it. The operating system releases the lock when the
//! process ends, even by SIGKILL, so a crash never leaves the index locked.

use std::fs::{File, OpenOptions};
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use crate::error::IndexError;

/// The file a long-running watcher (`quire serve`, `quire watch`) locks for its lifetime.
pub const WATCHER_LOCK: &str = "watch.lock";

/// Held while a sync writes; dropping it releases the lock.
#[derive(Debug)]
pub struct WriterLock {
    file: File,
    path: PathBuf,
}

impl WriterLock {
    /// Takes the lock at `dir/lock` or fails at once with the holder's pid.
    pub fn acquire(dir: &Path) -> Result<WriterLock, IndexError> {
        WriterLock::acquire_named(dir, "lock")
    }

    /// Takes the lock on `dir/name` or fails at once with the holder's pid. Other roles than
    /// the sync's use their own file: `quire serve` and `quire watch` hold [`WATCHER_LOCK`] for
    /// as long as they run, so a second one on the same index fails at start.
    pub fn acquire_named(dir: &Path, name: &str) -> Result<WriterLock, IndexError> {
        let path = dir.join(name);
        let io = |source| IndexError::Io {
            path: path.clone(),
            source,
        };
        let mut file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(&path)
            .map_err(io)?;
        match file.try_lock() {
            Ok(()) => {}
            Err(std::fs::TryLockError::Error(source)) => {
                return Err(IndexError::Io { path, source });
            }
            Err(std::fs::TryLockError::WouldBlock) => {
                let mut pid = String::new();
                let _ = file.read_to_string(&mut pid);
                return Err(IndexError::Locked {
                    pid: pid.trim().to_string(),
                    path,
                });
            }
        }
        file.set_len(0).map_err(io)?;
        file.seek(SeekFrom::Start(0)).map_err(io)?;
        write!(file, "{}", std::process::id()).map_err(io)?;
        file.flush().map_err(io)?;
        Ok(WriterLock { file, path })
    }

    /// The lock file.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl Drop for WriterLock {
    fn drop(&mut self) {
        let _ = self.file.set_len(0);
        let _ = self.file.unlock();
    }
}
