//! Errors of the index crate.

use std::path::PathBuf;

/// Why the index could not be opened, read, written or synced.
#[derive(Debug, thiserror::Error)]
pub enum IndexError {
    /// The approximate vector index could not be built or searched (searches fall back to the
    /// exact scan when a build does not open).
    #[error("approximate vector index: {0}")]
    Ann(String),
    /// SQLite failed.
    #[error("index store: {source}")]
    Store {
        /// SQLite's error.
        #[source]
        source: rusqlite::Error,
    },
    /// tantivy failed.
    #[error("full-text index: {source}")]
    FullText {
        /// tantivy's error.
        #[source]
        source: tantivy::TantivyError,
    },
    /// The store's schema is newer than this build reads.
    #[error(
        "the index was written by a newer quire (schema {found}, this build reads up to {supported}); upgrade quire or rebuild the index with `quire index --rebuild`"
    )]
    NewerSchema {
        /// The store's schema version.
        found: i64,
        /// The newest version this build reads ([`crate::store::SCHEMA_VERSION`]).
        supported: i64,
    },
    /// Another process holds the lock (a sync writing, or a watcher running).
    #[error("the index is locked by pid {pid} (lock file {}); wait for it to finish, or remove the lock file if that process is gone", path.display())]
    Locked {
        /// The holder's process id, as its lock file records it (empty if not yet written).
        pid: String,
        /// The lock file.
        path: PathBuf,
    },
    /// The vault could not be read: its root, its config file or its scan rules.
    #[error(transparent)]
    Vault(#[from] quire_vault::VaultError),
    /// The embedding model failed to embed chunk texts.
    #[error(transparent)]
    Embed(#[from] quire_embed::EmbedError),
    /// The model's embedding space is not the one the index's vectors are in: a search cannot
    /// compare vectors until a sync has embedded the notes with the configured model.
    #[error(
        "the index holds embeddings of another space ({stored}) than the configured model ({configured}); run `quire index` to embed the notes with the configured model (the old vectors stay cached, so switching back embeds nothing), or configure the model the index was built with"
    )]
    SpaceMismatch {
        /// The index's space, as JSON.
        stored: String,
        /// The model's space, as JSON.
        configured: String,
    },
    /// The full-text index is at another generation than the store: a sync died between its two
    /// commits.
    #[error(
        "the full-text index ({}) does not match the store (generation {store}): an index run was interrupted. Run `quire index` to repair it",
        match fulltext { Some(g) => format!("generation {g}"), None => "never committed".to_string() }
    )]
    Inconsistent {
        /// The store's generation.
        store: u64,
        /// The full-text index's generation; `None` before its first commit.
        fulltext: Option<u64>,
    },
    /// The full text was built by an older analyzer (before Greek, Cyrillic and Arabic words
    /// were stemmed in their language); the next sync or reader rebuilds it from the store.
    #[error(
        "the full-text index was built by an older version of quire's analyzer: run `quire index` to rebuild it (from the store: nothing is embedded again)"
    )]
    AnalyzerBehind,
    /// A file or directory of the index could not be created, opened or written.
    #[error("{}: {source}", path.display())]
    Io {
        /// The file or directory.
        path: PathBuf,
        /// The operating system's reason.
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
