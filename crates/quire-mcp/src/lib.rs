//! quire's MCP server: a read-only window on a Markdown vault for AI clients (Claude, Cursor,
//! Codex and others), so they can use a person's notes as memory without being able to change
//! them.
//!
//! [`serve_stdio`] speaks the Model Context Protocol on stdin/stdout (the client starts
//! `quire mcp`); [`serve_http`] serves streamable HTTP at `http://ADDR/mcp`. Both offer six tools
//! and every note as a resource `quire://note/{path}`:
//!
//! | tool | answers |
//! |---|---|
//! | `search_notes(query, k?, mode?, folder?, tag?)` | notes, best first, with sections: heading path, line range, snippet |
//! | `get_note(path, lines?, heading?, offset?)` | the current text from disk, with its line range and sha256 |
//! | `find_related_notes(path, k?)` | similar notes (vectors), backlinks, outgoing links, index-note parents |
//! | `get_outline(path)` | the heading tree with line ranges |
//! | `list_notes(folder?, tag?, property?, offset?, limit?)` | manifest rows, paged |
//! | `vault_tree(folder?)` | folders and notes with counts |
//!
//! What holds for every request:
//! - **Read-only.** Nothing here writes to the vault. The only writer is the watcher's sync
//!   (`quire-watch`), which writes the index directory.
//! - **Confined.** A path is vault-relative; `..`, absolute paths, percent-encoded escapes and
//!   symlinks that lead out of the vault are refused (see `resolve`).
//! - **Errors are results.** Malformed arguments, unknown notes, a missing index: the tool result
//!   has `isError: true` and a message that says what to do; the server keeps serving.
//! - **Bounded.** A message from the client is at most 64 KiB (a longer stdio line gets a
//!   JSON-RPC error, a longer HTTP body 413), and every text argument has a length limit
//!   ([`limits`]); an argument over it is a tool error that states the limit and never quotes
//!   the value. A result stays under about 60 KB; longer text, trees and lists are cut where a
//!   reader can continue, with a marker and a hint (`lines` and `offset`, `folder`, `offset`).
//! - **Every line answered.** On stdio, a line that is not JSON gets JSON-RPC's parse error
//!   (-32700) and a line over the limit an invalid-request error (-32600), both with `id: null`
//!   unless the id could be read; the server keeps serving.
//! - **Fresh, and fast to start.** Nothing is re-indexed before the first answer: search uses the
//!   index as it is, notes are read from disk, and the vault is parsed in the background. The
//!   watcher then syncs the index, and after each sync the server swaps in a new searcher (and a
//!   new parse when notes changed).
//! - **Protocol on stdout only.** Logs go to stderr.
//!
//! [`install`] writes (or removes) the entry that starts `quire mcp` in an AI client's own
//! configuration file (`quire mcp install --client …`).
//!
//! What the tools answer is the application core's (`quire-app`): this crate only speaks the
//! protocol. The functions here block until the server stops.
//!
//! ```no_run
//! use quire_app::{AppConfig, IndexLocation};
//! use quire_mcp::serve_stdio;
//!
//! let vault = std::path::PathBuf::from("/path/to/vault");
//! let index = IndexLocation::default_for(&vault.canonicalize().unwrap());
//! serve_stdio(AppConfig::new(vault, index), false).unwrap();
//! ```

mod error;
mod http;
pub mod install;
mod server;
mod stdio;
mod tools;

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use quire_app::{AppConfig, start_live};
use rmcp::ServiceExt;

pub use error::ServeError;
pub use http::{AllowedHosts, ENDPOINT, McpService, http_service};
pub use server::QuireServer;

fn runtime() -> Result<tokio::runtime::Runtime, ServeError> {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .thread_name("quire-mcp")
        .build()
        .map_err(ServeError::Runtime)
}

/// Serves MCP on stdin/stdout until the client closes stdin. Lines pass the filter of
/// `stdio` first (size limit, JSON-RPC errors for what is not JSON).
/// With `allow_proposals`, the `propose_note_change` tool is listed too.
pub fn serve_stdio(config: AppConfig, allow_proposals: bool) -> Result<(), ServeError> {
    let running = start_live(config, |_| {})?;
    let runtime = runtime()?;
    let result = runtime.block_on(async {
        let (stdin, stdout) = rmcp::transport::stdio_pipes();
        let (pipe, writer) = stdio::filtered(stdin, stdout);
        let service = QuireServer::new(Arc::clone(&running.live))
            .allow_proposals(allow_proposals)
            .serve(pipe)
            .await
            .map_err(|e| ServeError::Transport(e.to_string()))?;
        service
            .waiting()
            .await
            .map_err(|e| ServeError::Transport(e.to_string()))?;
        // The last replies reach stdout before the process ends.
        let _ = tokio::time::timeout(Duration::from_secs(2), writer).await;
        Ok(())
    });
    // Blocking tasks still running (a long parse) must not keep the process alive.
    runtime.shutdown_timeout(Duration::from_secs(1));
    result
}

/// Serves streamable HTTP on `addr` (endpoint [`ENDPOINT`]) until Ctrl-C.
/// With `allow_proposals`, the `propose_note_change` tool is listed too.
pub fn serve_http(
    config: AppConfig,
    addr: SocketAddr,
    allow_proposals: bool,
) -> Result<(), ServeError> {
    let running = start_live(config, |_| {})?;
    let runtime = runtime()?;
    let server = QuireServer::new(Arc::clone(&running.live)).allow_proposals(allow_proposals);
    let result = runtime.block_on(http::serve(server, addr));
    runtime.shutdown_timeout(Duration::from_secs(1));
    result
}
