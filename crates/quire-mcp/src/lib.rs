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
//! The async runtime (tokio) lives in this crate only; the functions here block until the
//! server stops.
//!
//! ```no_run
//! use quire_index::IndexLocation;
//! use quire_mcp::{ServerConfig, serve_stdio};
//!
//! let vault = std::path::PathBuf::from("/path/to/vault");
//! let index = IndexLocation::default_for(&vault.canonicalize().unwrap());
//! serve_stdio(ServerConfig::new(vault, index)).unwrap();
//! ```

pub mod args;
mod bounds;
mod error;
mod http;
pub mod limits;
pub mod live;
pub mod resolve;
mod server;
mod stdio;
pub mod tools;

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use quire_embed::Embedder;
use quire_index::{IndexLocation, SyncOptions};
use quire_vault::OpenOptions;
use quire_watch::{WatchEvent, WatchHandle, WatchOptions};
use rmcp::ServiceExt;

pub use bounds::fit_result;
pub use error::{ServeError, ToolError};
pub use http::{AllowedHosts, ENDPOINT, http_service};
pub use live::{Live, SharedSearcher, VaultSnapshot};
pub use server::QuireServer;

use crate::live::spawn_vault_reader;

/// What to serve and how.
pub struct ServerConfig {
    pub vault_root: PathBuf,
    /// Scan settings from flags, added to the vault's config file.
    pub open: OpenOptions,
    pub index: IndexLocation,
    /// The model that embeds queries (and new chunks, when watching); `None`: BM25 only.
    pub embedder: Option<Arc<dyn Embedder>>,
    /// Keep the index in sync with the vault while serving.
    pub watch: bool,
    /// Quiet time after the last file event before a sync (default: the watcher's 1.5 s).
    pub debounce: Option<Duration>,
    /// Who writes the log lines on stderr (`quire mcp`, `quire serve`).
    pub name: &'static str,
    /// Searchers opened per index generation, so that this many searches run at once.
    pub searchers: usize,
}

impl ServerConfig {
    /// Watching, no model, the vault's own scan settings.
    pub fn new(vault_root: PathBuf, index: IndexLocation) -> Self {
        ServerConfig {
            vault_root,
            open: OpenOptions::default(),
            index,
            embedder: None,
            watch: true,
            debounce: None,
            name: "quire mcp",
            searchers: 1,
        }
    }
}

/// The watcher's settings: every sync with these scan options and embedder; `debounce` or the
/// watcher's default.
pub fn watch_options(
    open: &OpenOptions,
    embedder: Option<Arc<dyn Embedder>>,
    debounce: Option<Duration>,
) -> WatchOptions {
    let mut options = WatchOptions {
        sync: SyncOptions {
            open: open.clone(),
            rebuild: false,
            embedder,
        },
        ..WatchOptions::default()
    };
    if let Some(debounce) = debounce {
        options.debounce = debounce;
    }
    options
}

/// The live state of a served vault and its watcher. Dropping it stops the watcher.
pub struct LiveVault {
    pub live: Arc<Live>,
    _watcher: Option<WatchHandle>,
}

impl LiveVault {
    /// The MCP handler over this state (to mount the MCP endpoint in another server).
    pub fn mcp_server(&self) -> QuireServer {
        QuireServer::new(Arc::clone(&self.live))
    }
}

/// Opens what can be opened at once and starts the background work: the first parse of the vault
/// and, when watching, the watcher (whose first sync reconciles the index with the vault).
/// `on_event` hears every sync attempt after the new searchers are in place; `quire serve`
/// passes it on to its clients.
pub fn start_live(
    config: ServerConfig,
    on_event: impl Fn(&WatchEvent) + Send + 'static,
) -> Result<LiveVault, ServeError> {
    let live = Arc::new(Live::new(
        config.vault_root,
        config.open,
        config.index,
        config.embedder,
        config.watch,
        config.name,
        config.searchers,
    )?);
    let read_vault = spawn_vault_reader(Arc::clone(&live))?;
    // The receiver lives as long as the reader thread, which outlives every sender.
    let _ = read_vault.send(());
    let watcher = if config.watch {
        let options = watch_options(&live.open, live.embedder.clone(), config.debounce);
        let on_sync = Arc::clone(&live);
        let name = live.name;
        let handle = quire_watch::spawn(
            live.root.clone(),
            live.index.clone(),
            options,
            move |event| {
                match &event {
                    WatchEvent::Synced { stats, changes } => {
                        let notes_changed = stats.notes_indexed > 0
                            || stats.notes_deleted > 0
                            || !changes.upserts.is_empty()
                            || !changes.deletes.is_empty();
                        eprintln!(
                            "{name}: index at generation {} ({} notes indexed, {} deleted)",
                            stats.generation, stats.notes_indexed, stats.notes_deleted
                        );
                        // Reopen first, then release searches waiting for the first sync.
                        on_sync.reload_index();
                        on_sync.first_sync_done(None);
                        if notes_changed {
                            let _ = read_vault.send(());
                        }
                    }
                    WatchEvent::Failed { message } => {
                        eprintln!("{name}: index sync failed: {message}");
                        on_sync.first_sync_done(Some(message.clone()));
                    }
                }
                on_event(&event);
            },
        )?;
        Some(handle)
    } else {
        None
    };
    Ok(LiveVault {
        live,
        _watcher: watcher,
    })
}

fn runtime() -> Result<tokio::runtime::Runtime, ServeError> {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .thread_name("quire-mcp")
        .build()
        .map_err(ServeError::Runtime)
}

/// Serves MCP on stdin/stdout until the client closes stdin. Lines pass the filter of
/// `stdio` first (size limit, JSON-RPC errors for what is not JSON).
pub fn serve_stdio(config: ServerConfig) -> Result<(), ServeError> {
    let running = start_live(config, |_| {})?;
    let runtime = runtime()?;
    let result = runtime.block_on(async {
        let (stdin, stdout) = rmcp::transport::stdio_pipes();
        let (pipe, writer) = stdio::filtered(stdin, stdout);
        let service = running
            .mcp_server()
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
pub fn serve_http(config: ServerConfig, addr: SocketAddr) -> Result<(), ServeError> {
    let running = start_live(config, |_| {})?;
    let runtime = runtime()?;
    let result = runtime.block_on(http::serve(running.mcp_server(), addr));
    runtime.shutdown_timeout(Duration::from_secs(1));
    result
}
