//! The application core of quire: the running state of one vault and every read operation on it,
//! written once for all faces. The CLI, the HTTP server (and its web page) and the agents' server
//! only translate their input into these calls and their results into their output; no protocol
//! is spoken here.
//!
//! - [`live`]: [`Live`], the state of a served vault: searchers pinned to an index generation
//!   (reopened after every sync), the parsed vault (re-parsed in the background), the embedder;
//!   [`start_live`] starts it with the watcher that keeps the index in sync.
//! - [`ops`]: the read operations (search, read a note, related notes, outline, list notes,
//!   vault tree), each a function over [`Live`] with typed arguments ([`args`]) and a bounded
//!   JSON result of data ([`bounds`]).
//! - [`models`]: which embedding and chat models a session runs; [`index`]: the sync;
//!   [`eval`]: measuring retrieval; [`vault`] and [`types`]: what a face shows, named here.
//! - [`resolve`]: path confinement: every note path any face receives goes through it.
//! - [`limits`]: one set of limits for every face (bodies, arguments, results).
//! - [`article`]: ask an article that is not in the vault: chunked, embedded (vectors cached by
//!   content hash in `<index>/article-cache/`) and retrieved in memory, then asked as notes are.
//! - [`ask`]: the ask flow (date phrase, daily notes, limits, retrieval, frozen passages) and
//!   the conversations of a server.
//! - [`draft`]: the draft flow (the section read with its hash, its material retrieved).
//! - [`reflect`]: the days a reflection covers and their daily notes.
//! - [`proposals`]: the proposal store of a vault, drafts as proposals, and the one change an
//!   agent may propose; every write into the vault is a proposal the user applies.
//! - [`audit`]: the structural audit of a vault and where its canvas map may be saved (outside
//!   the vault at once, inside as a proposal).
//! - [`topics`]: topic clusters of the notes from the index's vectors (k-means, fixed seed),
//!   labelled by their distinctive words (c-TF-IDF); no model.
//! - [`moc`]: maps of content from those clusters, as proposals (never a second map of a
//!   cluster a note already maps).
//! - [`status`]: the coverage report of an index, built once for `quire status` and
//!   `/api/status`.
//!
//! Invariants: nothing here writes into the vault but an applied proposal (the watcher's sync
//! writes the index directory, proposals are stored there too); every path is confined to the vault; every result stays under
//! [`limits::MAX_RESULT_BYTES`]. No face crate depends on another face crate: they depend on
//! this one, and the binary wires them together.
//!
//! ```no_run
//! use quire_app::args::VaultTreeArgs;
//! use quire_app::types::IndexLocation;
//! use quire_app::{AppConfig, start_live};
//!
//! let vault = std::path::PathBuf::from("/path/to/vault");
//! let index = IndexLocation::default_for(&vault.canonicalize().unwrap());
//! let running = start_live(AppConfig::new(vault, index), |_| {}).unwrap();
//! let tree = quire_app::ops::vault_tree(&running.live, VaultTreeArgs::default()).unwrap();
//! println!("{tree}");
//! ```

pub mod args;
pub mod article;
pub mod ask;
pub mod audit;
pub mod backend;
pub mod bounds;
pub mod deep_audit;
pub mod draft;
mod error;
pub mod eval;
pub mod findings;
pub mod index;
pub mod limits;
pub mod live;
pub mod moc;
pub mod models;
pub mod notetools;
pub mod ops;
pub mod proposals;
pub mod questions;
pub mod reflect;
pub mod resolve;
pub mod status;
pub mod topics;
pub mod types;
pub mod vault;

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use quire_embed::Embedder;
use quire_index::{IndexError, SyncOptions};
use quire_vault::OpenOptions;
use quire_watch::{WatchEvent, WatchHandle, WatchOptions};

pub use bounds::fit_result;
pub use error::{AppError, StartError};
pub use live::{Live, SharedSearcher, VaultSnapshot};
/// Where a vault's index lives: what every face names when it opens a vault.
pub use quire_index::IndexLocation;
pub use status::StatusReport;

use crate::live::spawn_first_parse;

/// The vault a face serves, and how its live state is kept.
pub struct AppConfig {
    /// The vault's root folder, as given (the live state canonicalizes it).
    pub vault_root: PathBuf,
    /// Scan settings from flags, added to the vault's config file.
    pub open: OpenOptions,
    /// Where the vault's index lives.
    pub index: IndexLocation,
    /// The model that embeds queries (and new chunks, when watching); `None`: BM25 only.
    pub embedder: Option<Arc<dyn Embedder>>,
    /// Keep the index in sync with the vault while serving.
    pub watch: bool,
    /// Quiet time after the last file event before a sync (default: the watcher's 1.5 s).
    pub debounce: Option<Duration>,
    /// Who writes the log lines on stderr (the command: `quire serve`, …).
    pub name: &'static str,
    /// Searchers opened per index generation, so that this many searches run at once.
    pub searchers: usize,
    /// A team's PostgreSQL database (`--backend`): `watch` publishes each sync to it.
    pub database: Option<String>,
}

impl AppConfig {
    /// Watching, no model, the vault's own scan settings.
    pub fn new(vault_root: PathBuf, index: IndexLocation) -> Self {
        AppConfig {
            vault_root,
            open: OpenOptions::default(),
            index,
            embedder: None,
            watch: true,
            debounce: None,
            name: "quire",
            searchers: 1,
            database: None,
        }
    }
}

/// The lock of the one watcher of an index (`serve` and `watch` hold it while they run): `Err`
/// `IndexError::Locked` names the process that holds it.
pub fn lock_watcher(index: &IndexLocation) -> Result<quire_index::lock::WriterLock, IndexError> {
    std::fs::create_dir_all(&index.dir).map_err(|source| IndexError::Io {
        path: index.dir.clone(),
        source,
    })?;
    quire_index::lock::WriterLock::acquire_named(&index.dir, quire_index::lock::WATCHER_LOCK)
}

/// The watcher alone (`quire watch`): syncs the vault of `config` into its index until the
/// handle is stopped, calling `on_event` after each sync or failure.
pub fn watch_only(
    config: &AppConfig,
    on_event: impl Fn(WatchEvent) + Send + 'static,
) -> Result<WatchHandle, quire_watch::WatchError> {
    let options = watch_options(&config.open, config.embedder.clone(), config.debounce);
    quire_watch::spawn(
        config.vault_root.clone(),
        config.index.clone(),
        options,
        on_event,
    )
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
            ann: None,
            only: None,
        },
        ..WatchOptions::default()
    };
    if let Some(debounce) = debounce {
        options.debounce = debounce;
    }
    options
}

/// What the refresh thread parses again after a sync.
enum Reparse {
    No,
    Named(Vec<String>),
    Whole,
}

/// The live state of a served vault and its watcher. Dropping it stops the watcher.
pub struct LiveVault {
    /// The state every request reads from; faces hold clones of it.
    pub live: Arc<Live>,
    _watcher: Option<WatchHandle>,
}

/// Opens what can be opened at once and starts the background work: the first parse of the vault
/// and, when watching, the watcher (whose first sync reconciles the index with the vault).
/// `on_event` hears every sync attempt after the new searchers are in place and the vault's
/// changed notes are parsed again, in sync order, on a refresh thread of its own; `quire serve`
/// passes it on to its clients.
pub fn start_live(
    config: AppConfig,
    on_event: impl Fn(&WatchEvent) + Send + 'static,
) -> Result<LiveVault, StartError> {
    let live = Arc::new(
        Live::new(
            config.vault_root,
            config.open,
            config.index,
            config.embedder,
            config.watch,
            config.name,
            config.searchers,
        )?
        .with_database(config.database.clone()),
    );
    spawn_first_parse(Arc::clone(&live))?;
    let watcher = if config.watch {
        let options = watch_options(&live.open, live.embedder.clone(), config.debounce);
        let on_sync = Arc::clone(&live);
        let name = live.name;
        // The vault is parsed again on a thread of its own, then `on_event` is called there, in
        // sync order: a client that refreshes on the event sees the new links (similar notes,
        // backlinks) with the new results, while the watcher goes on syncing the next edits and
        // searches see each new index at once (a re-parse takes seconds in a large vault).
        let (refresh, refreshes) = std::sync::mpsc::channel::<(WatchEvent, Reparse)>();
        let refresher = Arc::clone(&live);
        std::thread::Builder::new()
            .name("quire-vault-refresh".into())
            .spawn(move || {
                for (event, reparse) in refreshes {
                    match reparse {
                        Reparse::No => {}
                        Reparse::Named(paths) => refresher.reload_vault(Some(&paths)),
                        Reparse::Whole => refresher.reload_vault(None),
                    }
                    on_event(&event);
                }
            })
            .map_err(StartError::Thread)?;
        let handle = quire_watch::spawn(
            live.root.clone(),
            live.index.clone(),
            options,
            move |event| {
                let mut reparse = Reparse::No;
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
                        on_sync.reload_index();
                        // The writer's server publishes each generation to the team's database.
                        if let Some(url) = on_sync.database() {
                            backend::publish_after_sync(
                                &on_sync.index,
                                url,
                                &on_sync.root.display().to_string(),
                                name,
                            );
                        }
                        // Release searches waiting for the first sync.
                        on_sync.first_sync_done(None);
                        if notes_changed {
                            reparse = if changes.rescan {
                                Reparse::Whole
                            } else {
                                Reparse::Named(changes.paths())
                            };
                        }
                    }
                    WatchEvent::Started { .. } => {}
                    WatchEvent::Failed { message, .. } => {
                        eprintln!("{name}: index sync failed: {message}");
                        on_sync.first_sync_done(Some(message.clone()));
                    }
                }
                // The refresh thread ends only when this sender is dropped.
                let _ = refresh.send((event, reparse));
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
