//! Errors of the MCP server: [`ToolError`] is what a client sees as a tool result with
//! `isError: true`; [`ServeError`] stops the server before or while it serves.

use std::net::SocketAddr;

/// Why one tool call (or resource read) could not be answered. The message is written for the
/// agent that made the call: it says what was wrong and what to do instead. The server keeps
/// serving.
#[derive(Debug, thiserror::Error)]
pub enum ToolError {
    #[error("invalid arguments for `{tool}`: {message}")]
    BadArguments { tool: String, message: String },
    #[error(transparent)]
    Vault(#[from] quire_vault::VaultError),
    #[error(transparent)]
    Search(#[from] quire_search::SearchError),
    #[error("{path}: cannot be read as a note: {reason}")]
    Unreadable { path: String, reason: String },
    #[error("{0}")]
    NotReady(String),
    #[error("unknown resource `{0}`: note resources look like quire://note/Folder/Note.md")]
    UnknownResource(String),
    #[error("internal error: {0} (the server keeps running)")]
    Internal(String),
}

impl ToolError {
    pub(crate) fn bad_arguments(tool: &str, message: impl Into<String>) -> Self {
        ToolError::BadArguments {
            tool: tool.to_string(),
            message: message.into(),
        }
    }
}

/// What keeps the server from starting or from serving.
#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    #[error(transparent)]
    Vault(#[from] quire_vault::VaultError),
    #[error("cannot start the async runtime: {0}")]
    Runtime(#[source] std::io::Error),
    #[error("cannot listen on {addr}: {source}")]
    Bind {
        addr: SocketAddr,
        #[source]
        source: std::io::Error,
    },
    #[error(transparent)]
    Watch(#[from] quire_watch::WatchError),
    #[error("MCP transport: {0}")]
    Transport(String),
}
