//! Errors of the application: [`AppError`] is why one operation could not be answered (MCP
//! shows it as a tool result with `isError: true`, HTTP as a JSON error with a status chosen by
//! variant); [`StartError`] keeps the live state from starting.

/// Why one tool call (or resource read) could not be answered. The message is written for the
/// agent that made the call: it says what was wrong and what to do instead. The server keeps
/// serving.
#[derive(Debug, thiserror::Error)]
pub enum AppError {
    #[error("invalid arguments for `{tool}`: {message}")]
    BadArguments { tool: String, message: String },
    #[error(transparent)]
    Vault(#[from] quire_vault::VaultError),
    #[error(transparent)]
    Search(#[from] quire_search::SearchError),
    #[error(transparent)]
    Assist(#[from] quire_assist::AssistError),
    #[error("{path}: cannot be read as a note: {reason}")]
    Unreadable { path: String, reason: String },
    #[error("{0}")]
    NotReady(String),
    /// Something the request names does not exist (a conversation that ended).
    #[error("{0}")]
    NotFound(String),
    /// What the request needs is in use by another request: try again later.
    #[error("{0}")]
    Busy(String),
    #[error("unknown resource `{0}`: note resources look like quire://note/Folder/Note.md")]
    UnknownResource(String),
    #[error("internal error: {0} (the server keeps running)")]
    Internal(String),
}

impl AppError {
    pub fn bad_arguments(tool: &str, message: impl Into<String>) -> Self {
        AppError::BadArguments {
            tool: tool.to_string(),
            message: message.into(),
        }
    }
}

/// What keeps the live state of a vault from starting.
#[derive(Debug, thiserror::Error)]
pub enum StartError {
    #[error(transparent)]
    Vault(#[from] quire_vault::VaultError),
    #[error("cannot start a background thread: {0}")]
    Thread(#[source] std::io::Error),
    #[error(transparent)]
    Watch(#[from] quire_watch::WatchError),
}
