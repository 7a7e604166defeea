//! Errors of the MCP server: [`ServeError`] stops the server before or while it serves (a tool
//! that cannot answer is a [`quire_app::AppError`], shown to the client as a tool result).

use std::net::SocketAddr;

/// What keeps the server from starting or from serving.
#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    /// The vault's running state could not start: the vault, a thread or the watcher.
    #[error(transparent)]
    Start(#[from] quire_app::StartError),
    /// The tokio runtime could not be built.
    #[error("cannot start the async runtime: {0}")]
    Runtime(#[source] std::io::Error),
    /// The HTTP listener could not bind `addr` (or read its local address).
    #[error("cannot listen on {addr}: {source}")]
    Bind {
        /// The address asked for (port 0: any free port).
        addr: SocketAddr,
        /// The operating system's reason.
        #[source]
        source: std::io::Error,
    },
    /// The MCP session on stdin/stdout failed to start or ended with an error (the message of
    /// rmcp's error).
    #[error("MCP transport: {0}")]
    Transport(String),
}
