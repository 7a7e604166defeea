//! Errors of starting a watcher. Once it runs, failures are [`crate::WatchEvent::Failed`] events,
//! never errors: a failed sync does not stop the watcher.

use std::path::PathBuf;

/// Why [`crate::spawn`] could not start a watcher.
#[derive(Debug, thiserror::Error)]
pub enum WatchError {
    /// The vault root could not be resolved to a canonical path.
    #[error("vault {}: {source}", path.display())]
    Root {
        /// The vault root as given.
        path: PathBuf,
        /// The operating system's reason.
        #[source]
        source: std::io::Error,
    },
    /// The index directory could not be created or resolved to a canonical path.
    #[error("index directory {}: {source}", path.display())]
    IndexDir {
        /// The index directory as given.
        path: PathBuf,
        /// The operating system's reason.
        #[source]
        source: std::io::Error,
    },
    /// The OS refused the watcher or the recursive watch of the vault.
    #[error("cannot watch {}: {source}", path.display())]
    Notify {
        /// The canonical vault root.
        path: PathBuf,
        /// notify's reason.
        #[source]
        source: notify::Error,
    },
    /// The background thread could not be spawned.
    #[error("cannot start the watcher thread: {0}")]
    Thread(#[source] std::io::Error),
}
