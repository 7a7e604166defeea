//! What the server reads from, kept fresh while it runs: the searcher over the index and the parsed
//! vault. Each is one generation behind a lock held only long enough to clone an `Arc`, and is
//! replaced whole after the watcher syncs, so a request in flight finishes on the generation it
//! started with.
//!
//! Nothing here blocks startup on work that grows with the vault: the searcher opens the index as
//! it is (milliseconds), and the vault is parsed on a background thread. A request that needs
//! something not there yet (the first parse of a large vault, the first index) waits for it a
//! bounded time, then gets a message that says so.

use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, OnceLock};
use std::time::{Duration, Instant};

use quire_embed::Embedder;
use quire_index::IndexLocation;
use quire_search::Searcher;
use quire_vault::reasoning::{Manifest, TreeFolder, manifest, vault_tree};
use quire_vault::{OpenOptions, Vault, VaultSettings};

use crate::error::{AppError, StartError};

/// How long a request waits for the first parse of the vault.
pub const VAULT_WAIT: Duration = Duration::from_secs(30);
/// How long a search waits for the first sync when there is no index yet.
pub const INDEX_WAIT: Duration = Duration::from_secs(20);

/// A parsed vault and the reasoning-index views built from it on first use.
pub struct VaultSnapshot {
    /// The vault as parsed at one moment: notes, attachments, skipped files, links.
    pub vault: Vault,
    tree: OnceLock<TreeFolder>,
    manifest: OnceLock<Manifest>,
}

impl VaultSnapshot {
    fn new(vault: Vault) -> Self {
        VaultSnapshot {
            vault,
            tree: OnceLock::new(),
            manifest: OnceLock::new(),
        }
    }

    /// The vault's folder tree (built on first use).
    pub fn tree(&self) -> &TreeFolder {
        self.tree.get_or_init(|| vault_tree(&self.vault))
    }

    /// Rows in the order of `vault.notes`.
    pub fn manifest(&self) -> &Manifest {
        self.manifest.get_or_init(|| manifest(&self.vault))
    }
}

enum VaultState {
    Reading { since: Instant },
    Ready(Arc<VaultSnapshot>),
    Failed(String),
}

/// `Searcher` holds a SQLite connection, which is `Send` but not `Sync`: one query at a time per
/// searcher. A generation has a small pool of them (one for the agents' server, where one client asks at a
/// time; more for `quire serve`), all opened on the same generation.
pub type SharedSearcher = Arc<Mutex<Searcher>>;

struct IndexState {
    /// The pool of the current generation; empty when there is no usable index.
    searchers: Vec<SharedSearcher>,
    /// Why there is no searcher, or why the last reload failed.
    problem: Option<String>,
    /// The watcher's first sync has not finished: an index may still appear.
    first_sync_pending: bool,
}

/// A value that changes as a whole, and readers that can wait for a change.
struct Slot<T> {
    value: Mutex<T>,
    changed: Condvar,
}

impl<T> Slot<T> {
    fn new(value: T) -> Self {
        Slot {
            value: Mutex::new(value),
            changed: Condvar::new(),
        }
    }

    /// The lock, even after a panic elsewhere: the value is only ever replaced whole.
    fn lock(&self) -> MutexGuard<'_, T> {
        self.value.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn update(&self, change: impl FnOnce(&mut T)) {
        change(&mut self.lock());
        self.changed.notify_all();
    }

    /// The lock once `waiting` is false, or when `timeout` has passed.
    fn wait_while(
        &self,
        timeout: Duration,
        waiting: impl FnMut(&mut T) -> bool,
    ) -> MutexGuard<'_, T> {
        match self
            .changed
            .wait_timeout_while(self.lock(), timeout, waiting)
        {
            Ok((guard, _)) => guard,
            Err(poisoned) => poisoned.into_inner().0,
        }
    }
}

/// The server's state: settings fixed at startup, and the two generations.
pub struct Live {
    /// Canonical vault root.
    pub root: PathBuf,
    /// How the vault is read, loaded once at startup (the config file under `root` and the flags).
    pub settings: VaultSettings,
    /// With the index directory in `skip_dirs`, as the sync adds it.
    pub open: OpenOptions,
    /// Where the vault's index lives.
    pub index: IndexLocation,
    /// The model that embeds queries; `None`: BM25 only.
    pub embedder: Option<Arc<dyn Embedder>>,
    /// Who writes the log lines (the command: `quire serve`, …).
    pub name: &'static str,
    /// Searchers per generation (at least 1).
    pool_size: usize,
    /// Picks the next searcher of the pool when all are busy.
    turn: AtomicUsize,
    vault: Slot<VaultState>,
    /// Held for a whole re-parse, so parses install in the order they started reading: the
    /// snapshot in place is never older than one already installed.
    reparse: Mutex<()>,
    searcher: Slot<IndexState>,
    /// A team's database (`--backend`): searches and similar notes read it, not the local index.
    database: Option<DatabasePool>,
}

/// Connections to a team's database, opened on first use (at most the pool's size), each one
/// search at a time.
struct DatabasePool {
    url: String,
    searchers: Mutex<Vec<Arc<quire_pg::PgSearcher>>>,
}

impl Live {
    /// Reads the vault's settings (a missing root or a broken config file is an error) and opens
    /// the index if there is one. Does not parse the vault: see [`Live::reload_vault`].
    pub fn new(
        root: PathBuf,
        mut open: OpenOptions,
        index: IndexLocation,
        embedder: Option<Arc<dyn Embedder>>,
        watching: bool,
        name: &'static str,
        pool_size: usize,
    ) -> Result<Live, StartError> {
        open.skip_dirs.push(index.dir.clone());
        let settings = VaultSettings::load(&root, &open)?;
        let live = Live {
            root: settings.root.clone(),
            settings,
            open,
            index,
            embedder,
            name,
            pool_size: pool_size.max(1),
            turn: AtomicUsize::new(0),
            vault: Slot::new(VaultState::Reading {
                since: Instant::now(),
            }),
            reparse: Mutex::new(()),
            searcher: Slot::new(IndexState {
                searchers: Vec::new(),
                problem: None,
                first_sync_pending: watching,
            }),
            database: None,
        };
        live.reload_index();
        Ok(live)
    }

    /// Searches and similar notes read the database at `url` (a team's index, published by
    /// the writer) instead of the local index.
    pub fn with_database(mut self, url: Option<String>) -> Live {
        self.database = url.map(|url| DatabasePool {
            url,
            searchers: Mutex::new(Vec::new()),
        });
        self
    }

    /// A searcher of the database: an idle connection of the pool, else a new one while the
    /// pool is not full (connected outside the pool's lock), else the next one in turn (its
    /// searches wait for each other). Connections the server dropped are replaced.
    fn database_searcher(
        &self,
        pool: &DatabasePool,
    ) -> Result<Arc<quire_pg::PgSearcher>, AppError> {
        {
            let mut searchers = pool.searchers.lock().unwrap_or_else(|e| e.into_inner());
            searchers.retain(|s| !s.is_closed());
            if let Some(idle) = searchers.iter().find(|s| s.is_idle()) {
                return Ok(Arc::clone(idle));
            }
            if searchers.len() >= self.pool_size {
                let turn = self.turn.fetch_add(1, Ordering::Relaxed);
                return Ok(Arc::clone(&searchers[turn % searchers.len()]));
            }
        }
        let url = crate::backend::checked_url(&pool.url)?;
        let searcher =
            quire_pg::PgSearcher::connect(url).map_err(quire_search::SearchError::from)?;
        let searcher = Arc::new(match &self.embedder {
            Some(e) => searcher.with_embedder(Arc::clone(e)),
            None => searcher,
        });
        let mut searchers = pool.searchers.lock().unwrap_or_else(|e| e.into_inner());
        if searchers.len() < self.pool_size {
            searchers.push(Arc::clone(&searcher));
        }
        Ok(searcher)
    }

    /// The notes that best match `request`, its mode `mode` or else the index's default
    /// (hybrid with a model and vectors): from the team's database when there is one, else
    /// from a searcher of the local index (waiting up to `wait` for the first sync).
    pub fn search(
        &self,
        wait: Duration,
        mode: Option<quire_search::Mode>,
        mut request: quire_search::SearchRequest,
    ) -> Result<quire_search::SearchResults, AppError> {
        if let Some(pool) = &self.database {
            let searcher = self.database_searcher(pool)?;
            request.mode = match mode {
                Some(mode) => mode,
                None => searcher
                    .default_mode()
                    .map_err(quire_search::SearchError::from)?,
            };
            return Ok(searcher.search(&request)?);
        }
        let searcher = self.searcher(wait)?;
        let searcher = searcher.lock().unwrap_or_else(|e| e.into_inner());
        request.mode = match mode {
            Some(mode) => mode,
            None => searcher.default_mode()?,
        };
        Ok(searcher.search(&request)?)
    }

    /// The notes most similar to `path`, from the team's database when there is one, else the
    /// local index.
    pub fn similar(
        &self,
        wait: Duration,
        path: &str,
        k: usize,
    ) -> Result<Vec<quire_search::SimilarNote>, AppError> {
        if let Some(pool) = &self.database {
            return Ok(self.database_searcher(pool)?.similar(path, k)?);
        }
        let searcher = self.searcher(wait)?;
        let searcher = searcher.lock().unwrap_or_else(|e| e.into_inner());
        Ok(searcher.similar(path, k)?)
    }

    /// Which of `similar` (notes similar to `path`) look like copies of it, by `quire
    /// duplicates`' rule at the model's calibrated threshold, each with its own-text overlap;
    /// `None` over a team's database (the rule reads every note's lines from the local index).
    pub fn near_copies(
        &self,
        path: &str,
        similar: &[quire_search::SimilarNote],
    ) -> Result<Option<Vec<quire_search::NearCopy>>, AppError> {
        if self.database.is_some() {
            return Ok(None);
        }
        let searcher = self.searcher(Duration::ZERO)?;
        let searcher = searcher.lock().unwrap_or_else(|e| e.into_inner());
        let threshold = searcher.calibration()?.duplicate_cosine;
        Ok(Some(searcher.copies_among(
            path,
            similar,
            threshold,
            quire_search::duplicates::DEFAULT_MIN_OVERLAP,
        )?))
    }

    /// Runs `f` on the index a question is answered from: the team's database when there is
    /// one, else a searcher of the local index (waiting up to `wait` for the first sync).
    pub fn with_answer_index<T>(
        &self,
        wait: Duration,
        f: impl FnOnce(&dyn quire_search::AnswerIndex) -> T,
    ) -> Result<T, AppError> {
        if let Some(pool) = &self.database {
            let searcher = self.database_searcher(pool)?;
            return Ok(f(searcher.as_ref()));
        }
        let searcher = self.searcher(wait)?;
        let searcher = searcher.lock().unwrap_or_else(|e| e.into_inner());
        Ok(f(&*searcher))
    }

    /// The team's database, when searches read one.
    pub fn database(&self) -> Option<&str> {
        self.database.as_ref().map(|p| p.url.as_str())
    }

    /// Opens one searcher on the index as it is now, pinned to the current generation: every
    /// read it makes sees that generation, whatever a sync commits meanwhile, so a search that
    /// runs during a sync returns whole results from the previous generation.
    fn open_searcher(&self) -> Result<SharedSearcher, quire_search::SearchError> {
        let searcher = open_searcher(&self.index, self.name)?;
        searcher.store().pin_snapshot()?;
        let searcher = match &self.embedder {
            Some(e) => searcher.with_embedder(Arc::clone(e)),
            None => searcher,
        };
        Ok(Arc::new(Mutex::new(searcher)))
    }

    /// Opens the index again (after a sync) and swaps the new searchers in; searches in flight
    /// finish on the searchers they hold.
    pub fn reload_index(&self) {
        let opened: Result<Vec<SharedSearcher>, _> =
            (0..self.pool_size).map(|_| self.open_searcher()).collect();
        let name = self.name;
        self.searcher.update(|state| match opened {
            Ok(searchers) => {
                state.searchers = searchers;
                state.problem = None;
            }
            Err(quire_search::SearchError::NoIndex(dir)) => {
                state.problem = Some(format!("there is no index at {dir}"));
            }
            Err(e) => {
                // Searchers that could be opened before stay: they still answer.
                if !state.searchers.is_empty() {
                    eprintln!("{name}: cannot reopen the index (answering from the previous generation): {e}");
                }
                state.problem = Some(e.to_string());
            }
        });
    }

    /// The watcher finished a sync attempt: a waiting search can stop waiting for the first one.
    pub fn first_sync_done(&self, failure: Option<String>) {
        self.searcher.update(|state| {
            state.first_sync_pending = false;
            if let Some(message) = failure
                && state.searchers.is_empty()
            {
                state.problem = Some(message);
            }
        });
    }

    /// A searcher of the current generation (an idle one when the pool has one); while the
    /// watcher's first sync may still create the index, waits up to `wait` for it.
    pub fn searcher(&self, wait: Duration) -> Result<SharedSearcher, AppError> {
        let state = self
            .searcher
            .wait_while(wait, |s| s.searchers.is_empty() && s.first_sync_pending);
        if !state.searchers.is_empty() {
            let idle = state.searchers.iter().find(|s| s.try_lock().is_ok());
            let chosen = idle.unwrap_or_else(|| {
                let turn = self.turn.fetch_add(1, Ordering::Relaxed);
                &state.searchers[turn % state.searchers.len()]
            });
            return Ok(Arc::clone(chosen));
        }
        let why = state
            .problem
            .clone()
            .unwrap_or_else(|| "there is no index yet".into());
        Err(AppError::NotReady(if state.first_sync_pending {
            format!("{why}: the first sync is still building it, try again in a moment")
        } else {
            format!(
                "no usable index for this vault ({why}). Build it with `quire index --vault {}`, or start the server without --no-watch to build it and keep it fresh. Reading notes, outlines, the note list and the folder tree works without an index",
                self.root.display()
            )
        }))
    }

    /// Parses the vault again (at startup, and after a sync that changed notes) and swaps the
    /// new snapshot in. Takes seconds on a large vault: call it off the request path.
    pub fn reload_vault(&self, changed: Option<&[String]>) {
        let _one_at_a_time = self.reparse.lock().unwrap_or_else(|e| e.into_inner());
        let started = Instant::now();
        // After a sync of named notes only those are read again (the rest of a large vault
        // would cost seconds); otherwise, or before the first read, the whole vault.
        let opened = match (changed, self.vault_if_ready()) {
            (Some(paths), Some(current)) => current.vault.refreshed(&self.open, paths),
            _ => Vault::open(&self.root, &self.open),
        };
        self.vault.update(|state| match opened {
            Ok(vault) => {
                eprintln!(
                    "{}: read {} notes in {:.2}s",
                    self.name,
                    vault.notes.len(),
                    started.elapsed().as_secs_f64()
                );
                *state = VaultState::Ready(Arc::new(VaultSnapshot::new(vault)));
            }
            Err(e) => {
                eprintln!("{}: cannot read the vault: {e}", self.name);
                if !matches!(state, VaultState::Ready(_)) {
                    *state = VaultState::Failed(e.to_string());
                }
            }
        });
    }

    /// The parsed vault, if it has been read.
    pub fn vault_if_ready(&self) -> Option<Arc<VaultSnapshot>> {
        match &*self.vault.lock() {
            VaultState::Ready(snapshot) => Some(Arc::clone(snapshot)),
            _ => None,
        }
    }

    /// The parsed vault, waiting up to `wait` for the first read to finish.
    pub fn vault(&self, wait: Duration) -> Result<Arc<VaultSnapshot>, AppError> {
        let state = self
            .vault
            .wait_while(wait, |s| matches!(s, VaultState::Reading { .. }));
        match &*state {
            VaultState::Ready(snapshot) => Ok(Arc::clone(snapshot)),
            VaultState::Failed(message) => Err(AppError::NotReady(format!(
                "the vault could not be read: {message}"
            ))),
            VaultState::Reading { since } => Err(AppError::NotReady(format!(
                "still reading the vault (for {:.0}s so far): try again in a moment",
                since.elapsed().as_secs_f64()
            ))),
        }
    }
}

/// Opens a searcher on the index at `index`. An index whose two halves disagree (a sync died
/// between its commits) is repaired first: the full-text half is rebuilt from the store (no
/// note is read again), waiting up to 10 s for a sync that is between its commits right now.
/// `who` names the process in the note on stderr. Every face opens its searchers here.
pub fn open_searcher(
    index: &IndexLocation,
    who: &str,
) -> Result<Searcher, quire_search::SearchError> {
    match Searcher::open(index) {
        Err(quire_search::SearchError::Index(
            error @ (quire_index::IndexError::Inconsistent { .. }
            | quire_index::IndexError::AnalyzerBehind),
        )) => {
            if quire_index::repair_fulltext(index, Duration::from_secs(10))? {
                let why = match error {
                    quire_index::IndexError::AnalyzerBehind => {
                        "was built by an older version of quire's analyzer"
                    }
                    _ => "did not match the store (an index run was interrupted)",
                };
                eprintln!("{who}: the full-text index {why}: rebuilt it from the store");
            }
            Searcher::open(index)
        }
        other => other,
    }
}

/// Starts the thread that parses the vault for the first time, so startup does not wait for it.
/// Later parses run on the watcher's thread (see [`crate::start_live`]).
pub(crate) fn spawn_first_parse(live: Arc<Live>) -> Result<(), StartError> {
    std::thread::Builder::new()
        .name("quire-vault-reader".into())
        .spawn(move || live.reload_vault(None))
        .map_err(StartError::Thread)?;
    Ok(())
}
