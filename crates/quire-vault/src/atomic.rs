//! The one way quire writes a file that may already exist: a new temporary file beside it, then a
//! rename over it; and the one way it reads a note file without trusting what the path is.
//!
//! Rules every write follows (a vault can be shared or synced, so anyone who can write into it may
//! have planted a link where quire is about to write):
//! - the temporary file gets a random name and is created with `O_CREAT|O_EXCL` (the `tempfile`
//!   crate), so an existing file or symbolic link of that name is never opened or followed;
//! - its permissions are copied from the target through the open handle, never through the path;
//! - a target that is a symbolic link (or anything but a regular file) is refused, not replaced;
//! - just before the rename, the temporary path must still be the file quire created (same device
//!   and inode): if someone swapped it for a link meanwhile, nothing is renamed;
//! - the file is synced before the rename and the directory after it, so a crash leaves the old
//!   file or the new one, never a mix.
//!
//! [`write_new`] is for files that must not exist yet (backups): `O_EXCL`, no link followed.
//!
//! A write of several files in one go (a proposal) splits [`write_atomic`] in two:
//! [`stage_beside`] writes and syncs each new content under a random dot-name beside its target
//! and keeps it (a journal names it, so it survives a crash), and [`commit_staged`] renames it
//! over the target (or, for a file that must be new, links it there without replacing
//! anything) with the same checks.

use std::fs::{self, File};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};

/// Why an atomic write did not happen. Nothing was changed at `path` in every case.
#[derive(Debug, thiserror::Error)]
pub enum WriteError {
    /// The target is a symbolic link.
    #[error("{} is a symbolic link: quire does not replace links (write to the file it points to instead)", path.display())]
    Symlink {
        /// The target.
        path: PathBuf,
    },
    /// The target exists and is not a regular file (a directory, a FIFO, …).
    #[error("{} is not a regular file: refused", path.display())]
    NotAFile {
        /// The target.
        path: PathBuf,
    },
    /// The temporary file was swapped for something else before the rename.
    #[error("the temporary file beside {} was replaced while quire wrote it: nothing was written", path.display())]
    Tampered {
        /// The target.
        path: PathBuf,
    },
    /// Creating, writing, syncing or renaming a file failed.
    #[error("{}: {source}", path.display())]
    Io {
        /// The file or directory the step acted on (the target, its directory or the temporary
        /// file).
        path: PathBuf,
        /// The operating system's reason.
        #[source]
        source: std::io::Error,
    },
}

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> WriteError + '_ {
    move |source| WriteError::Io {
        path: path.to_path_buf(),
        source,
    }
}

/// Replaces (or creates) `path` with `bytes` atomically; see the module docs.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), WriteError> {
    write_atomic_checked(path, bytes, || Ok::<(), WriteError>(()))
}

/// [`write_atomic`] with a last check that runs after the new content is on disk and before the
/// rename; an error from it leaves the target untouched and removes the temporary file.
pub fn write_atomic_checked<E: From<WriteError>>(
    path: &Path,
    bytes: &[u8],
    before_commit: impl FnOnce() -> Result<(), E>,
) -> Result<(), E> {
    let temp = synced_temp_beside(path, bytes, ".quire-tmp")?;
    let temp_path = temp.path().to_path_buf();
    before_commit()?;
    // The target may have become a link since the first look.
    check_target(path)?;
    if !same_file(temp.as_file(), &temp_path) {
        // Keep the planted entry where it is; only forget our handle.
        let _ = temp.into_temp_path().keep();
        return Err(WriteError::Tampered {
            path: path.to_path_buf(),
        }
        .into());
    }
    temp.persist(path).map_err(|e| WriteError::Io {
        path: path.to_path_buf(),
        source: e.error,
    })?;
    // Make the rename itself durable (a no-op where directories cannot be synced).
    if let Ok(handle) = File::open(parent_dir(path)) {
        let _ = handle.sync_all();
    }
    Ok(())
}

/// Writes `bytes` to `path`, which must not exist yet (no link is followed), and syncs it.
pub fn write_new(path: &Path, bytes: &[u8]) -> Result<(), WriteError> {
    let mut file = fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(path)
        .map_err(io(path))?;
    file.write_all(bytes)
        .and_then(|_| file.sync_all())
        .map_err(io(path))
}

/// Writes `bytes` to a new file beside `path` (random dot-name ending in `.quire-stage`, created
/// with `O_EXCL`, the target's permissions, synced) and keeps it: the staged file's path, to be
/// renamed over `path` by [`commit_staged`]. A target that is a link or not a regular file is
/// refused before anything is written.
pub fn stage_beside(path: &Path, bytes: &[u8]) -> Result<PathBuf, WriteError> {
    let temp = synced_temp_beside(path, bytes, ".quire-stage")?;
    let temp_path = temp.path().to_path_buf();
    temp.into_temp_path().keep().map_err(|e| WriteError::Io {
        path: temp_path.clone(),
        source: e.error,
    })?;
    Ok(temp_path)
}

/// Moves a file staged by [`stage_beside`] to `path`. With `replace`, an existing regular file
/// at `path` is replaced (a rename); without, `path` must not exist and nothing there is ever
/// replaced (a hard link, then the staged name removed). A link at `path`, a staged file that is
/// no longer a regular file, or an existing target without `replace` → nothing is moved. The
/// directory is synced after.
pub fn commit_staged(staged: &Path, path: &Path, replace: bool) -> Result<(), WriteError> {
    let existing = check_target(path)?;
    match fs::symlink_metadata(staged) {
        Ok(meta) if meta.is_file() => {}
        Ok(_) => {
            return Err(WriteError::Tampered {
                path: path.to_path_buf(),
            });
        }
        Err(source) => {
            return Err(WriteError::Io {
                path: staged.to_path_buf(),
                source,
            });
        }
    }
    if replace {
        fs::rename(staged, path).map_err(io(path))?;
    } else {
        if existing.is_some() {
            return Err(WriteError::Io {
                path: path.to_path_buf(),
                source: std::io::Error::from(std::io::ErrorKind::AlreadyExists),
            });
        }
        // link(2) fails if the target exists: nothing is ever replaced.
        fs::hard_link(staged, path).map_err(io(path))?;
        fs::remove_file(staged).map_err(io(staged))?;
    }
    if let Ok(handle) = File::open(parent_dir(path)) {
        let _ = handle.sync_all();
    }
    Ok(())
}

/// A new file beside `path` holding `bytes`, synced: a random dot-name ending in `suffix` (so a
/// scan running meanwhile never reads it as a note), created with `O_EXCL`, with the target's
/// permissions. The target must be a regular file or absent.
fn synced_temp_beside(
    path: &Path,
    bytes: &[u8],
    suffix: &str,
) -> Result<tempfile::NamedTempFile, WriteError> {
    let existing = check_target(path)?;
    let dir = parent_dir(path);
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let mut temp = tempfile::Builder::new()
        .prefix(&format!(".{name}."))
        .suffix(suffix)
        .rand_bytes(10)
        .tempfile_in(dir)
        .map_err(io(dir))?;
    let temp_path = temp.path().to_path_buf();
    temp.write_all(bytes).map_err(io(&temp_path))?;
    if let Some(meta) = &existing {
        // Through the handle (fchmod), never the path.
        temp.as_file()
            .set_permissions(meta.permissions())
            .map_err(io(&temp_path))?;
    }
    temp.as_file().sync_all().map_err(io(&temp_path))?;
    Ok(temp)
}

/// The folder a file is in (`.` for a bare name).
fn parent_dir(path: &Path) -> &Path {
    match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    }
}

/// The target's metadata if it is a regular file, `None` if it does not exist.
fn check_target(path: &Path) -> Result<Option<fs::Metadata>, WriteError> {
    match fs::symlink_metadata(path) {
        Ok(meta) if meta.file_type().is_symlink() => Err(WriteError::Symlink {
            path: path.to_path_buf(),
        }),
        Ok(meta) if !meta.is_file() => Err(WriteError::NotAFile {
            path: path.to_path_buf(),
        }),
        Ok(meta) => Ok(Some(meta)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(WriteError::Io {
            path: path.to_path_buf(),
            source: e,
        }),
    }
}

#[cfg(unix)]
fn same_file(file: &File, path: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    match (file.metadata(), fs::symlink_metadata(path)) {
        (Ok(a), Ok(b)) => a.dev() == b.dev() && a.ino() == b.ino() && b.file_type().is_file(),
        _ => false,
    }
}

#[cfg(not(unix))]
fn same_file(_file: &File, path: &Path) -> bool {
    fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_file())
}

/// Why a note file could not be opened for reading as a regular file.
#[derive(Debug)]
pub enum ReadError {
    /// A FIFO, socket, device or directory: never opened for reading (a FIFO would block).
    NotAFile {
        /// What it is, in words ([`file_kind`]).
        kind: &'static str,
    },
    /// The file is larger than the cap.
    TooLarge {
        /// Its size in bytes, or the bytes read when it grew past the cap while being read.
        bytes: u64,
    },
    /// Opening, inspecting or reading the file failed.
    Io(std::io::Error),
}

/// What kind of file system entry this is, in words.
pub fn file_kind(file_type: &fs::FileType) -> &'static str {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if file_type.is_fifo() {
            return "named pipe (FIFO)";
        }
        if file_type.is_socket() {
            return "socket";
        }
        if file_type.is_block_device() || file_type.is_char_device() {
            return "device";
        }
    }
    if file_type.is_dir() {
        "directory"
    } else if file_type.is_symlink() {
        "symbolic link"
    } else if file_type.is_file() {
        "regular file"
    } else {
        "special file"
    }
}

/// Reads the regular file at `path` (following links), at most `max_bytes`: opened without
/// blocking, and checked to be a regular file on the open handle, so a FIFO or device planted
/// under a note's name (even after a scan looked at it) never hangs the reader.
pub fn read_regular(path: &Path, max_bytes: u64) -> Result<Vec<u8>, ReadError> {
    let mut options = fs::OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        // O_NONBLOCK: opening a FIFO for reading would otherwise wait for a writer forever.
        options.custom_flags(libc::O_NONBLOCK);
    }
    let file = options.open(path).map_err(ReadError::Io)?;
    let meta = file.metadata().map_err(ReadError::Io)?;
    if !meta.is_file() {
        return Err(ReadError::NotAFile {
            kind: file_kind(&meta.file_type()),
        });
    }
    if meta.len() > max_bytes {
        return Err(ReadError::TooLarge { bytes: meta.len() });
    }
    let mut bytes = Vec::with_capacity(meta.len() as usize);
    // One byte more than allowed tells a file that grew past the cap since the fstat.
    file.take(max_bytes.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(ReadError::Io)?;
    if bytes.len() as u64 > max_bytes {
        return Err(ReadError::TooLarge {
            bytes: bytes.len() as u64,
        });
    }
    Ok(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replaces_content_and_keeps_permissions() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("note.md");
        fs::write(&target, "old").unwrap();
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            fs::set_permissions(&target, fs::Permissions::from_mode(0o640)).unwrap();
        }
        write_atomic(&target, b"new").unwrap();
        assert_eq!(fs::read_to_string(&target).unwrap(), "new");
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = fs::metadata(&target).unwrap().permissions().mode() & 0o777;
            assert_eq!(mode, 0o640);
        }
        // No temporary file is left behind.
        let names: Vec<_> = fs::read_dir(dir.path()).unwrap().collect();
        assert_eq!(names.len(), 1);
    }

    #[cfg(unix)]
    #[test]
    fn refuses_to_replace_a_symlink_and_leaves_its_target_alone() {
        let dir = tempfile::tempdir().unwrap();
        let outside = dir.path().join("outside.txt");
        fs::write(&outside, "victim").unwrap();
        let link = dir.path().join("note.md");
        std::os::unix::fs::symlink(&outside, &link).unwrap();
        let err = write_atomic(&link, b"evil").unwrap_err();
        assert!(matches!(err, WriteError::Symlink { .. }), "{err}");
        assert_eq!(fs::read_to_string(&outside).unwrap(), "victim");
        assert!(
            fs::symlink_metadata(&link)
                .unwrap()
                .file_type()
                .is_symlink()
        );
    }

    #[test]
    fn a_failed_check_writes_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("note.md");
        fs::write(&target, "old").unwrap();
        let result = write_atomic_checked(&target, b"new", || {
            Err(WriteError::NotAFile {
                path: PathBuf::from("x"),
            })
        });
        assert!(result.is_err());
        assert_eq!(fs::read_to_string(&target).unwrap(), "old");
        assert_eq!(fs::read_dir(dir.path()).unwrap().count(), 1);
    }

    #[cfg(unix)]
    #[test]
    fn write_new_does_not_follow_a_planted_link() {
        let dir = tempfile::tempdir().unwrap();
        let outside = dir.path().join("outside.txt");
        fs::write(&outside, "victim").unwrap();
        let planted = dir.path().join("backup.md");
        std::os::unix::fs::symlink(&outside, &planted).unwrap();
        assert!(write_new(&planted, b"x").is_err());
        assert_eq!(fs::read_to_string(&outside).unwrap(), "victim");
    }

    #[cfg(unix)]
    #[test]
    fn read_regular_refuses_a_fifo_without_blocking() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("pipe.md");
        let status = std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap();
        assert!(status.success());
        match read_regular(&fifo, 1 << 20) {
            Err(ReadError::NotAFile { kind }) => assert_eq!(kind, "named pipe (FIFO)"),
            other => panic!("expected NotAFile, got {:?}", other.map(|b| b.len())),
        }
    }

    #[test]
    fn read_regular_enforces_the_cap() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("big.md");
        fs::write(&file, vec![b'a'; 100]).unwrap();
        assert!(matches!(
            read_regular(&file, 99),
            Err(ReadError::TooLarge { bytes: 100 })
        ));
        assert_eq!(read_regular(&file, 100).unwrap().len(), 100);
    }
}
