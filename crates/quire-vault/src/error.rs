//! Errors of the vault crate.

use std::path::PathBuf;

/// Something that stops a vault from being opened or a request from being answered.
/// Problems with single files are not errors: they are reported as [`crate::Skipped`].
#[derive(Debug, thiserror::Error)]
pub enum VaultError {
    /// The vault root does not exist, cannot be resolved, or is not a directory.
    #[error("cannot open vault {}: {message}", path.display())]
    Root {
        /// The root as given, or resolved when it is not a directory.
        path: PathBuf,
        /// What is wrong with it.
        message: String,
    },
    /// An include or exclude pattern is not a valid glob.
    #[error("invalid glob pattern `{pattern}`: {message}")]
    BadPattern {
        /// The pattern as configured.
        pattern: String,
        /// globset's reason.
        message: String,
    },
    /// `.quire/config.toml` exists but cannot be read or is not valid TOML for quire.
    #[error("cannot read config {}: {message}", path.display())]
    Config {
        /// The config file.
        path: PathBuf,
        /// The read or TOML error.
        message: String,
    },
    /// A requested path could leave the vault (absolute, a drive prefix, `..`, a NUL byte);
    /// the path as given.
    #[error("`{0}` is outside the vault: refused")]
    OutsideVault(String),
    /// No note has this path or name (the query as given).
    #[error("no note matches `{0}`")]
    NoteNotFound(String),
    /// A request the vault cannot answer: an empty path, a bad line range, a heading the note
    /// lacks, an export directory that is not quire's; the message says which.
    #[error("{0}")]
    BadRequest(String),
    /// Replacing a file failed; nothing was half-written.
    #[error(transparent)]
    Write(#[from] crate::atomic::WriteError),
    /// A file or directory of an export could not be read, created or removed.
    #[error("{}: {source}", path.display())]
    Io {
        /// The file or directory.
        path: PathBuf,
        /// The operating system's reason.
        #[source]
        source: std::io::Error,
    },
}
