//! Errors of the index crate.

use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
pub enum IndexError {
    #[error("index store: {source}")]
    Store {
        #[source]
        source: rusqlite::Error,
    },
    #[error("full-text index: {source}")]
    FullText {
        #[source]
        source: tantivy::TantivyError,
    },
    #[error(
        "the index was written by a newer quire (schema {found}, this build reads up to {supported}); upgrade quire or rebuild the index with `quire index --rebuild`"
    )]
    NewerSchema { found: i64, supported: i64 },
    #[error("the index is locked by pid {pid} (lock file {}); wait for it to finish, or remove the lock file if that process is gone", path.display())]
    Locked { pid: String, path: PathBuf },
    #[error(transparent)]
    Vault(#[from] quire_vault::VaultError),
    #[error(transparent)]
    Embed(#[from] quire_embed::EmbedError),
    #[error(
        "the index holds embeddings of another space ({stored}) than the configured model ({configured}); nothing was mixed or deleted. Re-embed with `quire index --rebuild` (old vectors stay cached), or configure the model the index was built with"
    )]
    SpaceMismatch { stored: String, configured: String },
    #[error(
        "the full-text index ({}) does not match the store (generation {store}): an index run was interrupted. Run `quire index` to repair it",
        match fulltext { Some(g) => format!("generation {g}"), None => "never committed".to_string() }
    )]
    Inconsistent { store: u64, fulltext: Option<u64> },
    #[error("{}: {source}", path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

impl From<tantivy::TantivyError> for IndexError {
    fn from(source: tantivy::TantivyError) -> Self {
        IndexError::FullText { source }
    }
}

impl From<rusqlite::Error> for IndexError {
    fn from(source: rusqlite::Error) -> Self {
        IndexError::Store { source }
    }
}
