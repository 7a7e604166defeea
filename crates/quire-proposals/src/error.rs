//! Why a proposal could not be made, applied or read. Every variant that refuses a write says
//! that nothing was written.

use std::path::PathBuf;

/// Why a proposal operation failed.
#[derive(Debug, thiserror::Error)]
pub enum ProposalError {
    /// No proposal has this id.
    #[error("no proposal `{0}`: `quire proposals` lists them")]
    NotFound(String),
    /// The proposal was already applied or rejected.
    #[error("proposal {id} is {status}: only a pending proposal can be applied or rejected")]
    NotPending {
        /// The proposal.
        id: String,
        /// `applied` or `rejected`.
        status: String,
    },
    /// A file changed since the proposal was made from it.
    #[error(
        "{path} changed since proposal {id} was made from it (sha256 {expected}…, now {found}): nothing was written; make the proposal again"
    )]
    Changed {
        /// The proposal.
        id: String,
        /// The vault-relative path.
        path: String,
        /// The first 12 hex digits of the hash the proposal was made from.
        expected: String,
        /// The first 12 hex digits of the hash on disk, or `missing`.
        found: String,
    },
    /// A file the proposal creates (or renames to) exists already.
    #[error("{path} already exists: proposal {id} would create it; nothing was written")]
    Exists {
        /// The proposal.
        id: String,
        /// The vault-relative path.
        path: String,
    },
    /// A path that is not a plain vault-relative path (absolute, `..`, a hidden folder, a link
    /// out of the vault) or a change that cannot be made (no such note, no such heading).
    #[error("{path}: {reason}")]
    BadChange {
        /// The path as given.
        path: String,
        /// What is wrong.
        reason: String,
    },
    /// The proposal is larger than the limits ([`crate::MAX_CHANGES`],
    /// [`crate::MAX_CONTENT_BYTES`]) or has no change.
    #[error("{0}")]
    TooLarge(String),
    /// A stored proposal that is not as quire wrote it (its id, a path, a hash or its content
    /// against its diff): it is never applied.
    #[error(
        "proposal {id} was changed after quire stored it ({path}: {reason}): it cannot be applied; nothing was written"
    )]
    Tampered {
        /// The proposal (as asked for).
        id: String,
        /// The file of the proposal, or the change, that is wrong.
        path: String,
        /// What is wrong.
        reason: String,
    },
    /// Another apply holds the lock.
    #[error("another proposal is being applied to this vault: try again when it ends")]
    Busy,
    /// Writing a file of the vault failed (see [`quire_vault::atomic::WriteError`]).
    #[error("{0}")]
    Write(#[from] quire_vault::atomic::WriteError),
    /// Reading or writing the proposal store failed.
    #[error("{}: {source}", path.display())]
    Io {
        /// The file or folder.
        path: PathBuf,
        /// The operating system's reason.
        #[source]
        source: std::io::Error,
    },
    /// A stored proposal or journal that is not valid JSON.
    #[error("{}: not a valid proposal file: {source}", path.display())]
    Corrupt {
        /// The file.
        path: PathBuf,
        /// The decoder's reason.
        #[source]
        source: serde_json::Error,
    },
}

impl ProposalError {
    pub(crate) fn io(path: impl Into<PathBuf>) -> impl FnOnce(std::io::Error) -> ProposalError {
        let path = path.into();
        move |source| ProposalError::Io { path, source }
    }

    pub(crate) fn tampered(id: &str, path: &str, reason: impl Into<String>) -> ProposalError {
        ProposalError::Tampered {
            id: id.to_string(),
            path: path.to_string(),
            reason: reason.into(),
        }
    }

    pub(crate) fn bad(path: &str, reason: impl Into<String>) -> ProposalError {
        ProposalError::BadChange {
            path: path.to_string(),
            reason: reason.into(),
        }
    }
}
