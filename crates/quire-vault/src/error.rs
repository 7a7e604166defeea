//! Errors of the vault crate.

use std::path::PathBuf;

/// Something that stops a vault from being opened or a request from being answered.
/// Problems with single files are not errors: they are reported as [`crate::Skipped`].
#[derive(Debug, thiserror::Error)]
pub enum VaultError {
    #[error("cannot open vault {}: {message}", path.display())]
    Root { path: PathBuf, message: String },
    #[error("invalid glob pattern `{pattern}`: {message}")]
    BadPattern { pattern: String, message: String },
    #[error("cannot read config {}: {message}", path.display())]
    Config { path: PathBuf, message: String },
    #[error("`{0}` is outside the vault: refused")]
    OutsideVault(String),
    #[error("no note matches `{0}`")]
    NoteNotFound(String),
    #[error("{0}")]
    BadRequest(String),
    #[error(transparent)]
    Write(#[from] crate::atomic::WriteError),
    #[error("{}: {source}", path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}
