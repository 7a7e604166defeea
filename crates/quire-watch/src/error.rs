//! Errors of starting a watcher. Once it runs, failures are [`crate::WatchEvent::Failed`] events,
//! never errors: a failed sync does not stop the watcher.

use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
pub enum WatchError {
    #[error("vault {}: {source}", path.display())]
    Root {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("index directory {}: {source}", path.display())]
    IndexDir {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("cannot watch {}: {source}", path.display())]
    Notify {
        path: PathBuf,
        #[source]
        source: notify::Error,
    },
    #[error("cannot start the watcher thread: {0}")]
    Thread(#[source] std::io::Error),
}
