//! Errors of the MCP server: [`ServeError`] stops the server before or while it serves (a tool
//! that cannot answer is a [`quire_app::AppError`], shown to the client as a tool result).

use std::net::SocketAddr;

/// What keeps the server from starting or from serving.
#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    #[error(transparent)]
    Start(#[from] quire_app::StartError),
    #[error("cannot start the async runtime: {0}")]
    Runtime(#[source] std::io::Error),
    #[error("cannot listen on {addr}: {source}")]
    Bind {
        addr: SocketAddr,
        #[source]
        source: std::io::Error,
    },
    #[error("MCP transport: {0}")]
    Transport(String),
}
