//! [`AssistError`], the one error type of this crate.

/// Why an assist command failed. Errors about files name the file.
#[derive(Debug, thiserror::Error)]
pub enum AssistError {
    /// Retrieval failed: no index, no embeddings for the mode, or the index could not be read.
    #[error(transparent)]
    Search(#[from] quire_search::SearchError),

    /// The index's store could not be read.
    #[error(transparent)]
    Index(#[from] quire_index::IndexError),

    /// The vault refused a path or a settings file, or a write failed.
    #[error(transparent)]
    Vault(#[from] quire_vault::VaultError),

    /// The chat model failed or was cancelled (`LlmError::Cancelled` carries the partial answer).
    #[error(transparent)]
    Llm(#[from] quire_llm::LlmError),

    /// A note could not be read as text (missing, too large, binary, not UTF-8).
    #[error("{path}: {reason}")]
    Unreadable {
        /// Vault-relative path of the note.
        path: String,
        /// Why it cannot be read.
        reason: String,
    },

    /// The note changed on disk after quire read it, so writing would lose that change.
    #[error(
        "{path} changed since quire read it (its hash is no longer {expected}): nothing was written; run the command again"
    )]
    Changed {
        /// Vault-relative path of the note.
        path: String,
        /// The first 12 hex digits of the blake3 hash the note had when it was read.
        expected: String,
    },

    /// A date, week or range that cannot be read.
    #[error("{0}")]
    BadDate(String),

    /// The command cannot run on this input (the message says why and what to do).
    #[error("{0}")]
    Unusable(String),
}

impl AssistError {
    /// Whether this is a cancellation by the user (Ctrl-C), not a failure.
    pub fn is_cancelled(&self) -> bool {
        matches!(
            self,
            AssistError::Llm(quire_llm::LlmError::Cancelled { .. })
        )
    }
}
