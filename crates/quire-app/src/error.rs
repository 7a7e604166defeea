//! Errors of the application: [`AppError`] is why one operation could not be answered (each
//! face shows it its own way: an error result, a JSON error with a status chosen by variant, a
//! message and an exit code); [`StartError`] keeps the live state from starting.

/// Why one operation could not be answered. The message is written for whoever asked, a person
/// or an agent: it says what was wrong and what to do instead. A server keeps serving.
#[derive(Debug, thiserror::Error)]
pub enum AppError {
    /// The arguments break a rule: a missing or malformed value, a limit, an unknown operation.
    #[error("invalid arguments for `{operation}`: {message}")]
    BadArguments {
        /// The operation called (`search_notes`, `reflect`, …).
        operation: String,
        /// What is wrong and how to correct it.
        message: String,
    },
    /// The vault refused the request: a path outside it, no such note, a bad request.
    #[error(transparent)]
    Vault(#[from] quire_vault::VaultError),
    /// The index could not answer: there is none, it has no embeddings for the mode asked, the
    /// note is not in it, or reading it failed.
    #[error(transparent)]
    Search(#[from] quire_search::SearchError),
    /// Ask, draft or reflect failed (retrieval, the model, reading a note).
    #[error(transparent)]
    Assist(#[from] quire_assist::AssistError),
    /// A proposal could not be made, applied or rejected (a file changed since, a bad path, no
    /// such proposal).
    #[error(transparent)]
    Proposal(#[from] quire_proposals::ProposalError),
    /// The note's file exists but cannot be read as a note (no permission, too large, not a
    /// regular file, not text).
    #[error("{path}: cannot be read as a note: {reason}")]
    Unreadable {
        /// The note's vault-relative path.
        path: String,
        /// Why it cannot be read.
        reason: String,
    },
    /// What the request needs is not there yet (the first parse, the first index) or not at all;
    /// the message says which and what to do.
    #[error("{0}")]
    NotReady(String),
    /// Something the request names does not exist (a conversation that ended).
    #[error("{0}")]
    NotFound(String),
    /// What the request needs is in use by another request: try again later.
    #[error("{0}")]
    Busy(String),
    /// A conversation has had as many turns as it may.
    #[error("{0}")]
    ConversationFull(String),
    /// A failure that is not the caller's (a task that panicked, a bug); the server keeps serving.
    #[error("internal error: {0} (the server keeps running)")]
    Internal(String),
}

impl AppError {
    /// [`AppError::BadArguments`] for `operation`.
    pub fn bad_arguments(operation: &str, message: impl Into<String>) -> Self {
        AppError::BadArguments {
            operation: operation.to_string(),
            message: message.into(),
        }
    }
}

/// What keeps the live state of a vault from starting.
#[derive(Debug, thiserror::Error)]
pub enum StartError {
    /// The vault's settings could not be loaded: a missing root or a broken config file.
    #[error(transparent)]
    Vault(#[from] quire_vault::VaultError),
    /// The thread of the first parse could not be spawned.
    #[error("cannot start a background thread: {0}")]
    Thread(#[source] std::io::Error),
    /// The watcher could not start.
    #[error(transparent)]
    Watch(#[from] quire_watch::WatchError),
}
