//! `quire serve`: one vault over HTTP for people (a web page) and programs (a JSON API, and the
//! Obsidian plugin), kept in sync with the Markdown files while it runs.
//!
//! | route | answers |
//! |---|---|
//! | `GET /` | the web page (HTML, CSS and JS embedded in the binary, no build step) |
//! | `GET /api/search?q=&k=&mode=&folder=&tag=&explain=` | notes, best first, with their best sections (and, with `explain=true`, why each ranked where it did) |
//! | `GET /api/notes/{path}?lines=A-B` or `?heading=H1/H2` | a note's current text from disk |
//! | `GET /api/outline/{path}` | a note's heading tree with line ranges |
//! | `GET /api/similar/{path}?k=` | similar notes (vectors), backlinks, outgoing links |
//! | `GET /api/questions/{path}` | the questions a note or folder answers, one per topic (`quire questions --json`) |
//! | `GET /api/status` | the coverage report: notes, chunks, skipped files with reasons, last sync |
//! | `GET /api/audit?top=` | the structural audit (`quire audit --json`): folders, tags, orphans, dead ends, unresolved links, islands, hubs, note sizes, duplicate titles |
//! | `POST /api/audit/canvas` | the vault's JSON Canvas map as a proposal (`{"path"?, "group"?}`; `quire audit --canvas`) |
//! | `POST /api/ask`, `POST /api/draft` | server-sent events: `token`s, then `done` with citations and source cards |
//! | `POST /api/article/ask` | the same for a pasted article that is not in the vault (`{"text", "name"?, "question"}`; cards point at its lines) |
//! | `GET /api/findings`, `POST /api/findings/{id}/dismiss`, `…/snooze` | the audit's findings as an inbox (new since the last run; dismissed and snoozed left out); dismiss one, or snooze it `{"days": N}` |
//! | `GET /api/proposals`, `GET /api/proposals/{id}` | proposed changes (pending; `?all=true` for all), one with its diff |
//! | `POST /api/proposals`, `POST /api/proposals/{id}/apply`, `…/reject` | make a proposal (`propose_note_change`'s arguments); apply or reject one (the only write into the vault) |
//! | `POST /api/moc` | maps of content for topic clusters (`{"cluster": N}` or `{"all": true}`), made as proposals; the clusters already mapped are listed instead |
//! | `POST /api/flashcards`, `/api/split`, `/api/transform`, `/api/complete`, `/api/dataview`, `/api/batch` | the writing tools: one JSON object with the proposal made (nothing written until applied) |
//! | `GET /api/events` | server-sent events: `index` after each sync (generation, changed paths) |
//! | `GET /api/openapi.json` | the OpenAPI 3.1 description of all of the above |
//! | `/mcp` | the read-only MCP server (streamable HTTP), over the same state, when the binary mounts it ([`ServeConfig::mount`]) |
//!
//! It is a thin layer: requests, auth, serialization and streaming live here; the live state,
//! the read operations and path confinement are the application core's (`quire-app`: the same
//! functions answer MCP's tools), answering `quire-assist`'s, and the watcher `quire-watch`'s.
//! This crate never depends on another face: the binary mounts MCP's HTTP service through
//! [`ServeConfig::mount`].
//!
//! What holds for every request:
//! - **Writes only by proposal.** Nothing here writes to the vault but
//!   `POST /api/proposals/{id}/apply`, which applies a proposal the user reviewed (see
//!   `proposals` for why another site cannot make that request). `draft` streams a draft; the
//!   watcher's sync writes the index directory.
//! - **Guarded** (see `guard`): loopback by default, where only loopback `Host` headers pass; a
//!   token is required beyond loopback and checked on every request, `/mcp` included (which
//!   then answers any `Host`, like the rest); CORS admits only the page and `app://obsidian.md`.
//! - **Confined.** A note path is vault-relative: `..`, absolute paths, percent-encoded escapes
//!   and symlinks that lead out of the vault are refused with 400 `path_outside_vault`.
//! - **Bounded.** The limits are `quire_app::limits`, the same as `quire mcp`'s: request bodies
//!   ≤ 64 KiB (`/mcp` too), `k` ≤ 50, queries ≤ 1,000 and questions ≤ 4,000 characters, note
//!   paths ≤ 1,000 and other parameters ≤ 500; two answers generated at a time (429 `busy`
//!   beyond); note text ≤ 40 KB a response (a longer text says how to ask for the rest).
//! - **Never blocked by a sync.** Each index generation has its own searchers, pinned to it; a
//!   search that runs while the watcher syncs reads the previous generation, whole.
//! - **Errors** are `{"error": {"code", "message"}}` with a stable `code`.
//!
//! ```no_run
//! use quire_app::IndexLocation;
//! use quire_serve::{ServeConfig, serve};
//!
//! let vault = std::path::PathBuf::from("/path/to/vault");
//! let index = IndexLocation::default_for(&vault.canonicalize().unwrap());
//! let mut config = ServeConfig::new(quire_app::AppConfig::new(vault, index));
//! config.port = 0; // a free port; the URL is printed on stderr
//! serve(config).unwrap();
//! ```

mod api;
mod article;
mod deep_audit;
mod error;
mod events;
mod findings;
mod generate;
mod guard;
mod moc;
mod openapi;
mod page;
mod proposals;
mod questions;
mod tools;

use std::net::{SocketAddr, ToSocketAddrs};
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::extract::DefaultBodyLimit;
use axum::routing::{get, post};
use quire_app::IndexLocation;
use quire_app::Live;
use quire_app::types::{ChatModel, IndexError, SourceReader, WatchEvent, WriterLock};
use tokio::sync::{Semaphore, broadcast};

pub use error::{ApiError, ServeError};

/// The default port.
pub const DEFAULT_PORT: u16 = 7878;
/// The shortest token accepted, in characters other than whitespace.
pub const MIN_TOKEN_LEN: usize = 16;
/// The largest request body (the same limit as `quire mcp`'s).
pub const MAX_BODY_BYTES: usize = quire_app::limits::MAX_BODY_BYTES;
/// Answers (ask, draft) generated at once.
const MAX_GENERATIONS: usize = 2;
/// Searchers per index generation: searches that run at once.
const SEARCHERS: usize = 2;

/// Routes another face adds to the server (the binary mounts MCP at `/mcp` this way), made once
/// the live state exists: it gets the live vault, the address the server listens on, and
/// whether it listens on loopback only (then only loopback `Host`s may pass; beyond loopback the
/// guard has checked the token on every request before a mounted route sees it).
pub type Mount = Box<dyn FnOnce(Arc<Live>, SocketAddr, bool) -> Router + Send>;

/// What to serve and how.
pub struct ServeConfig {
    /// The vault, index, embedder and watch settings (shared with `quire mcp`).
    pub live: quire_app::AppConfig,
    /// The address to bind: an IP or a host name (default `127.0.0.1`).
    pub host: String,
    /// The port (default 7878; 0 picks a free one).
    pub port: u16,
    /// Required on every request when set; must be set to bind beyond loopback.
    pub token: Option<String>,
    /// A token that opens `/mcp` only: give it to AI clients, which may then propose changes
    /// but never apply one (applying, like the rest of the API, takes [`ServeConfig::token`]).
    pub mcp_token: Option<String>,
    /// The chat model for `ask` and `draft`; `None` answers offline (extractive answers,
    /// gathered material).
    pub chat: Option<Arc<dyn ChatModel>>,
    /// More routes, behind the same guard and body limit (see [`Mount`]).
    pub mount: Option<Mount>,
}

impl ServeConfig {
    /// Loopback, port 7878, no token, offline answers, nothing mounted.
    pub fn new(live: quire_app::AppConfig) -> Self {
        ServeConfig {
            live,
            host: "127.0.0.1".into(),
            port: DEFAULT_PORT,
            token: None,
            mcp_token: None,
            chat: None,
            mount: None,
        }
    }
}

/// What the handlers share.
pub(crate) struct AppState {
    pub live: Arc<Live>,
    pub reader: SourceReader,
    pub chat: Option<Arc<dyn ChatModel>>,
    pub token: Option<String>,
    /// The token that opens `/mcp` only (see [`ServeConfig::mcp_token`]).
    pub mcp_token: Option<String>,
    /// Only loopback `Host` headers pass (the server listens on loopback).
    pub loopback_only: bool,
    pub watching: bool,
    pub events: broadcast::Sender<events::IndexEvent>,
    /// Whether a sync runs, and the last attempt's outcome, for `/api/status`.
    pub sync: Arc<events::SyncState>,
    pub generating: Arc<Semaphore>,
    /// The conversations of `/api/ask`.
    pub conversations: quire_app::ask::Conversations,
    /// The vault folder's name: Obsidian's vault name for `obsidian://` links.
    pub vault_name: String,
    pub started: chrono::DateTime<chrono::Utc>,
}

/// The address `host:port` names (the first, when a name resolves to several).
fn bind_address(host: &str, port: u16) -> Result<SocketAddr, ServeError> {
    let bad = |reason: String| ServeError::BadHost {
        host: host.to_string(),
        reason,
    };
    let host_only = host.trim_start_matches('[').trim_end_matches(']');
    if let Ok(ip) = host_only.parse::<std::net::IpAddr>() {
        return Ok(SocketAddr::new(ip, port));
    }
    (host, port)
        .to_socket_addrs()
        .map_err(|e| bad(e.to_string()))?
        .next()
        .ok_or_else(|| bad("it names no address".into()))
}

/// The token as requests must present it: trimmed, `None` when none was given (an empty
/// `QUIRE_TOKEN` is none). Refused with a clear error when it has control characters or fewer
/// than [`MIN_TOKEN_LEN`] characters that are not whitespace (sixteen spaces are no secret).
fn checked_token(token: Option<String>) -> Result<Option<String>, ServeError> {
    let Some(token) = token.filter(|t| !t.is_empty()) else {
        return Ok(None);
    };
    let token = token.trim();
    if token.chars().any(char::is_control) {
        return Err(ServeError::TokenControlCharacters);
    }
    if token.chars().filter(|c| !c.is_whitespace()).count() < MIN_TOKEN_LEN {
        return Err(ServeError::WeakToken { min: MIN_TOKEN_LEN });
    }
    Ok(Some(token.to_string()))
}

/// Takes the watcher's lock of the index: one `quire serve`/`quire watch` per index.
fn lock_watcher(index: &IndexLocation) -> Result<WriterLock, ServeError> {
    quire_app::lock_watcher(index).map_err(|e| match e {
        IndexError::Locked { pid, path } => ServeError::AlreadyWatched { pid, path },
        other => other.into(),
    })
}

fn runtime(name: &str) -> Result<tokio::runtime::Runtime, ServeError> {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .thread_name(name)
        .build()
        .map_err(ServeError::Runtime)
}

/// The routes, the guard and the body limit over `state`.
fn router(state: Arc<AppState>, mounted: Option<Router>) -> Router {
    let router = Router::new()
        .route("/", get(page::index))
        .route("/assets/{name}", get(page::asset))
        .route("/api/openapi.json", get(api::openapi))
        .route("/api/status", get(api::status))
        .route("/api/audit", get(api::audit))
        .route("/api/search", get(api::search))
        .route("/api/notes/{*path}", get(api::note))
        .route("/api/outline/{*path}", get(api::outline))
        .route("/api/similar/{*path}", get(api::similar))
        .route("/api/questions/{*path}", get(questions::questions))
        .route("/api/ask", post(generate::ask))
        .route("/api/article/ask", post(article::ask))
        .route("/api/draft", post(generate::draft))
        .route("/api/reflect", post(generate::reflect))
        .route("/api/events", get(events::stream))
        .route(
            "/api/proposals",
            get(proposals::list).post(proposals::create),
        )
        .route("/api/audit/deep", post(deep_audit::deep))
        .route("/api/audit/canvas", post(moc::canvas))
        .route("/api/flashcards", post(tools::flashcards))
        .route("/api/split", post(tools::split))
        .route("/api/transform", post(tools::transform))
        .route("/api/complete", post(tools::complete))
        .route("/api/dataview", post(tools::dataview))
        .route("/api/batch", post(tools::batch))
        .route("/api/findings", get(findings::list))
        .route("/api/findings/{id}/dismiss", post(findings::dismiss))
        .route("/api/findings/{id}/snooze", post(findings::snooze))
        .route("/api/proposals/{id}", get(proposals::show))
        .route("/api/proposals/{id}/apply", post(proposals::apply))
        .route("/api/proposals/{id}/reject", post(proposals::reject))
        .route("/api/moc", post(moc::moc))
        .route_layer(axum::middleware::from_fn(guard::known_query));
    // A mounted service (MCP) reads its own body and must enforce MAX_BODY_BYTES itself while
    // it streams in (DefaultBodyLimit only reaches axum's extractors).
    let mut router: Router = router.with_state(Arc::clone(&state));
    if let Some(mounted) = mounted {
        router = router.merge(mounted);
    }
    router
        .fallback(api::not_found)
        .method_not_allowed_fallback(api::method_not_allowed)
        .layer(axum::middleware::from_fn_with_state(state, guard::guard))
        .layer(DefaultBodyLimit::max(MAX_BODY_BYTES))
}

/// The state and router of one server at `local` (the watcher started when `watching`), without
/// a listener: [`serve`] binds it, and the fuzz target (`fuzz/fuzz_targets/http_request.rs`)
/// drives it over an in-memory connection. Keep the [`quire_app::LiveVault`] alive as long as
/// the router answers.
fn build_app(
    config: ServeConfig,
    local: SocketAddr,
    loopback_only: bool,
    token: Option<String>,
    watching: bool,
) -> Result<(Router, quire_app::LiveVault, Arc<AppState>), ServeError> {
    let (sender, _) = broadcast::channel(64);
    let mount = config.mount;
    let mut live_config = config.live;
    live_config.name = "quire serve";
    live_config.searchers = live_config.searchers.max(SEARCHERS);
    let reader = SourceReader::open(&live_config.vault_root, &live_config.open)?;
    let vault_name = reader
        .root()
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    // Made before the watcher starts, so that its first events (the reconciliation) count.
    let sync = Arc::new(events::SyncState::default());
    let on_event = {
        let (sync, sender) = (Arc::clone(&sync), sender.clone());
        move |event: &WatchEvent| events::publish(&sync, &sender, event)
    };
    let running = quire_app::start_live(live_config, on_event)?;
    let state = Arc::new(AppState {
        live: Arc::clone(&running.live),
        reader,
        chat: config.chat,
        token,
        mcp_token: config.mcp_token,
        loopback_only,
        watching,
        events: sender,
        sync,
        generating: Arc::new(Semaphore::new(MAX_GENERATIONS)),
        conversations: quire_app::ask::Conversations::new(),
        vault_name,
        started: chrono::Utc::now(),
    });
    let mounted = mount.map(|mount| mount(Arc::clone(&running.live), local, loopback_only));
    let app = router(Arc::clone(&state), mounted);
    Ok((app, running, state))
}

/// The router of a server on loopback with no watcher, no listener and no token: for fuzzing and
/// in-process tests. Requests need a loopback `Host` (e.g. `127.0.0.1:7878`).
#[doc(hidden)]
pub fn loopback_app(mut config: ServeConfig) -> Result<(Router, quire_app::LiveVault), ServeError> {
    config.live.watch = false;
    let local = SocketAddr::from(([127, 0, 0, 1], config.port));
    let (app, running, _) = build_app(config, local, true, None, false)?;
    Ok((app, running))
}

/// Serves until Ctrl-C: binds, prints `quire serve: listening on http://ADDR/` on stderr, starts
/// the watcher (unless `config.live.watch` is false) and answers requests.
pub fn serve(config: ServeConfig) -> Result<(), ServeError> {
    let addr = bind_address(&config.host, config.port)?;
    let loopback_only = addr.ip().is_loopback();
    let token = checked_token(config.token.clone())?;
    let mut config = config;
    config.mcp_token = checked_token(config.mcp_token.take())?;
    if token.is_none() && !loopback_only {
        return Err(ServeError::TokenRequired {
            addr,
            min: MIN_TOKEN_LEN,
        });
    }
    let watching = config.live.watch;
    let _watcher_lock = if watching {
        Some(lock_watcher(&config.live.index)?)
    } else {
        None
    };
    let runtime = runtime("quire-serve")?;
    let listener = runtime
        .block_on(tokio::net::TcpListener::bind(addr))
        .map_err(|source| ServeError::Bind { addr, source })?;
    let local = listener
        .local_addr()
        .map_err(|source| ServeError::Bind { addr, source })?;

    let (app, running, state) = build_app(config, local, loopback_only, token, watching)?;
    eprintln!("quire serve: listening on http://{local}/");
    if state.token.is_some() {
        eprintln!(
            "quire serve: a token is required: open http://{local}/?token=<token>, or send `Authorization: Bearer <token>`"
        );
    }
    let result = runtime.block_on(async move {
        let server = axum::serve(listener, app).with_graceful_shutdown(async {
            let _ = tokio::signal::ctrl_c().await;
        });
        // Event streams (an open page) never end by themselves: after Ctrl-C, requests in
        // flight get a moment to finish, then the server stops anyway.
        let deadline = async {
            let _ = tokio::signal::ctrl_c().await;
            tokio::time::sleep(Duration::from_secs(1)).await;
        };
        tokio::select! {
            result = std::future::IntoFuture::into_future(server) => result,
            () = deadline => Ok(()),
        }
    });
    // Streams still open (events, answers) must not keep the process alive.
    runtime.shutdown_timeout(Duration::from_secs(1));
    drop(running);
    result.map_err(ServeError::Server)
}

/// `quire watch`: keeps the index in sync with the vault until Ctrl-C, reporting each sync on
/// stderr. Holds the watcher's lock like `serve`.
pub fn watch(config: quire_app::AppConfig) -> Result<(), ServeError> {
    let _lock = lock_watcher(&config.index)?;
    let (index, database) = (config.index.clone(), config.database.clone());
    let root = config.vault_root.display().to_string();
    let handle = quire_app::watch_only(&config, move |event| match event {
        WatchEvent::Synced { stats, changes } => {
            eprintln!(
                "quire watch: generation {}: {} notes indexed, {} deleted, {} chunks embedded ({} upserts, {} deletes) in {:.2}s",
                stats.generation,
                stats.notes_indexed,
                stats.notes_deleted,
                stats.chunks_embedded,
                changes.upserts.len(),
                changes.deletes.len(),
                stats.seconds
            );
            // A team's database gets each generation.
            if let Some(url) = &database {
                quire_app::backend::publish_after_sync(&index, url, &root, "quire watch");
            }
        }
        WatchEvent::Failed { message, .. } => eprintln!("quire watch: sync failed: {message}"),
        WatchEvent::Started { .. } => {}
    })?;
    eprintln!(
        "quire watch: watching {} (index {}); Ctrl-C stops",
        config.vault_root.display(),
        config.index.dir.display()
    );
    let runtime = runtime("quire-watch-signal")?;
    runtime.block_on(async {
        let _ = tokio::signal::ctrl_c().await;
    });
    handle.stop();
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hosts_become_addresses() {
        assert_eq!(
            bind_address("127.0.0.1", 1).unwrap(),
            "127.0.0.1:1".parse().unwrap()
        );
        assert_eq!(
            bind_address("[::1]", 2).unwrap(),
            "[::1]:2".parse().unwrap()
        );
        assert!(bind_address("localhost", 3).unwrap().ip().is_loopback());
        assert!(bind_address("no such host.invalid", 4).is_err());
    }

    #[test]
    fn tokens_are_trimmed_and_need_sixteen_characters_that_are_not_whitespace() {
        assert_eq!(checked_token(None).unwrap(), None);
        assert_eq!(checked_token(Some(String::new())).unwrap(), None);
        assert_eq!(
            checked_token(Some("  correct-horse-battery-staple\n".into())).unwrap(),
            Some("correct-horse-battery-staple".into())
        );
        for weak in [
            " ".repeat(16),
            "\t".repeat(20),
            "short".into(),
            "a b c d e f g h i j".into(),
        ] {
            assert!(
                matches!(
                    checked_token(Some(weak.clone())),
                    Err(ServeError::WeakToken { min: 16 })
                ),
                "{weak:?}"
            );
        }
        assert!(matches!(
            checked_token(Some("correct-horse\u{7}battery-staple".into())),
            Err(ServeError::TokenControlCharacters)
        ));
    }
}
