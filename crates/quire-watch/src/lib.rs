//! Keeps a vault's index in sync with its Markdown files while a server (`quire mcp`,
//! `quire serve`) runs.
//!
//! [`spawn`] starts one background thread. It first runs a reconciliation sync, which picks up
//! whatever changed while quire was not running. Then it turns file events into syncs:
//!
//! ```text
//! notify (recursive) ─► translate ─► Coalescer ─► debounce ─► flush ─► quire_index::sync ─► on_event
//!   OS events          RawEvent,     net change   `debounce`   ChangeSet   whole-vault,       Synced / Failed
//!                      vault paths   per note     after the    non-empty?  incremental
//!                                                 last event
//! ```
//!
//! - **Translate** (`translate`): each `notify` event becomes vault-relative [`RawEvent`]s.
//!   Events in hidden folders (`.obsidian/`, `.git/`, `.trash/`, any dot-name), in
//!   `node_modules/` and in the index directory, and events on files that are not `*.md`, never
//!   reach the index, so they never restart the debounce. Folder events do reach it.
//! - **Coalesce** ([`coalesce`], pure): a window of events becomes one [`ChangeSet`]. A burst of
//!   writes is one upsert. A note created and removed within the window is no change. A note
//!   removed and written again is an upsert. A rename is a delete plus an upsert. A folder event
//!   or lost events ask for a rescan.
//! - **Flush**: `debounce` after the last relevant event (at the latest ten debounces after the
//!   first), when the change set is not empty, the thread runs `quire_index::sync`. That sync
//!   diffs the whole vault by mtime and size, then by sha256, so it is the correctness baseline:
//!   the change set only decides whether a sync is needed and is what gets reported. Files are
//!   read at flush time. After a rescan, the change set also holds what the sync found changed,
//!   by comparing the index's notes before and after.
//!
//! Invariants:
//! - One writer: every sync takes the index's `WriterLock`. While another process holds it
//!   (`quire index`), the flush is retried with backoff (100 ms doubling up to a minute), and
//!   every fourth failed attempt in a row is reported as [`WatchEvent::Failed`]. Any other
//!   failure is reported at once and retried the same way. No failure, not even a panic inside
//!   the sync, stops the thread; only [`WatchHandle::stop`] does. A sync runs on a scoped thread
//!   that this one watches: one still running after a minute is reported as
//!   [`WatchEvent::Failed`] (and on stderr) every minute until it ends, so a server never shows
//!   the last good sync while the index has stopped following the vault.
//! - Readers are never blocked: a sync commits a whole generation (SQLite WAL, then the
//!   full-text index), so a server answering queries meanwhile sees the old generation or the
//!   new one.
//! - Nothing is written into the vault; logs go to stderr (stdout carries the MCP protocol).
//! - Changes made while no watcher ran, or pending when it stopped, are picked up by the next
//!   reconciliation.
//!
//! ```no_run
//! use std::time::Duration;
//! use quire_index::IndexLocation;
//! use quire_watch::{WatchEvent, WatchOptions, spawn};
//!
//! let vault = std::path::PathBuf::from("examples/vault");
//! let location = IndexLocation::default_for(&vault.canonicalize().unwrap());
//! let handle = spawn(vault, location, WatchOptions::default(), |event| match event {
//!     WatchEvent::Synced { stats, changes } => eprintln!(
//!         "generation {}: {} upserts, {} deletes",
//!         stats.generation,
//!         changes.upserts.len(),
//!         changes.deletes.len()
//!     ),
//!     WatchEvent::Failed { message, .. } => eprintln!("{message}"),
//!     WatchEvent::Started { .. } => {}
//! })
//! .unwrap();
//! handle.wait_reconciled(Duration::from_secs(60));
//! // … serve requests …
//! handle.stop();
//! ```

pub mod coalesce;
mod error;
mod translate;
mod watcher;

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::mpsc::{self, Sender};
use std::thread::JoinHandle;
use std::time::Duration;

use notify::{RecommendedWatcher, RecursiveMode, Watcher};
use quire_index::{IndexLocation, SyncOptions, SyncStats};

pub use coalesce::{ChangeSet, RawEvent};
pub use error::WatchError;

use crate::coalesce::{Coalescer, Scope};
use crate::watcher::{Message, Reconciled, Schedule, Worker};

/// Settings of a watcher.
#[derive(Clone)]
pub struct WatchOptions {
    /// Quiet time after the last event before the index is synced. Default 1500 ms.
    pub debounce: Duration,
    /// The settings of every sync. `rebuild` applies to the reconciliation sync only.
    pub sync: SyncOptions,
}

impl Default for WatchOptions {
    fn default() -> Self {
        WatchOptions {
            debounce: Duration::from_millis(1500),
            sync: SyncOptions::default(),
        }
    }
}

/// What the watcher reports after each sync attempt, on its own thread.
#[derive(Debug, Clone)]
pub enum WatchEvent {
    /// A sync attempt starts, for these changes (a status line can say "syncing"). Every
    /// `Started` is followed by a `Synced` or a `Failed` for the same attempt.
    Started {
        /// What the attempt syncs: the coalesced window (before a rescan adds what it found).
        changes: ChangeSet,
    },
    /// A sync succeeded: what it did, and the changes that caused it.
    Synced {
        /// What the sync did, and the generation it committed.
        stats: Box<SyncStats>,
        /// The changes synced; after a rescan, with the notes the sync found added, changed or
        /// removed.
        changes: ChangeSet,
    },
    /// A sync failed (the message says why and when it is retried; the watcher goes on), or,
    /// with `running`, an attempt has been running for long and has not finished yet (reported
    /// every minute until its `Synced` or final `Failed`).
    Failed {
        /// For people: what failed and when it is retried, or how long the attempt has run.
        message: String,
        /// `true`: the attempt is still running (a stall report), not a failure that ended it.
        running: bool,
    },
}

/// A running watcher. Dropping it stops the watcher like [`WatchHandle::stop`].
pub struct WatchHandle {
    watcher: Option<RecommendedWatcher>,
    messages: Sender<Message>,
    thread: Option<JoinHandle<()>>,
    reconciled: Arc<Reconciled>,
}

impl WatchHandle {
    /// Stops watching; waits for a running sync to finish. Changes still waiting for their
    /// debounce are not synced: the next start's reconciliation picks them up.
    pub fn stop(mut self) {
        self.shutdown();
    }

    /// Blocks until the first (reconciliation) sync has finished (for tests and CLIs that want
    /// it). Returns `false` if it has not succeeded within `timeout`: it may still be running,
    /// or failing and being retried (the [`WatchEvent::Failed`] events say why).
    pub fn wait_reconciled(&self, timeout: Duration) -> bool {
        self.reconciled.wait(timeout)
    }

    fn shutdown(&mut self) {
        // No more file events, then the stop; the thread ends after its current sync.
        drop(self.watcher.take());
        let _ = self.messages.send(Message::Stop);
        if let Some(thread) = self.thread.take()
            // Stopped from inside `on_event`: the thread ends when the callback returns.
            && thread.thread().id() != std::thread::current().id()
        {
            let _ = thread.join();
        }
    }
}

impl Drop for WatchHandle {
    fn drop(&mut self) {
        self.shutdown();
    }
}

/// Starts a background thread: first a reconciliation sync (what changed while quire was off),
/// then file events via `notify` → debounce (flush `debounce` after the LAST event) → coalesced
/// [`ChangeSet`] → `quire_index::sync` at flush time.
///
/// Returns immediately (never blocks the caller on the first sync); the watch is registered
/// before it returns, so no change made after `spawn` is missed. `on_event` is called after every
/// sync (success or failure). Fails when the vault root or the index directory cannot be
/// resolved (the index directory is created), or the OS refuses the watch.
pub fn spawn(
    vault_root: PathBuf,
    location: IndexLocation,
    options: WatchOptions,
    on_event: impl Fn(WatchEvent) + Send + 'static,
) -> Result<WatchHandle, WatchError> {
    let root = vault_root
        .canonicalize()
        .map_err(|source| WatchError::Root {
            path: vault_root.clone(),
            source,
        })?;
    let index_dir_error = |source| WatchError::IndexDir {
        path: location.dir.clone(),
        source,
    };
    std::fs::create_dir_all(&location.dir).map_err(index_dir_error)?;
    let index_dir = location.dir.canonicalize().map_err(index_dir_error)?;

    let (sender, messages) = mpsc::channel();
    let events = sender.clone();
    let notify_error = |source| WatchError::Notify {
        path: root.clone(),
        source,
    };
    let mut watcher = notify::recommended_watcher(move |event| {
        // The receiver is gone only when the thread has ended; nothing is left to tell.
        let _ = events.send(Message::Fs(event));
    })
    .map_err(notify_error)?;
    watcher
        .watch(&root, RecursiveMode::Recursive)
        .map_err(notify_error)?;

    let reconciled = Arc::new(Reconciled::default());
    let worker = Worker {
        pending: Coalescer::new(Scope::new(&root, &index_dir)),
        vault_root: root,
        location,
        schedule: Schedule::new(options.debounce),
        sync: options.sync,
        on_event,
        messages,
        reconciled: Arc::clone(&reconciled),
        reconciling: true,
        failures: 0,
        announced: false,
    };
    let thread = std::thread::Builder::new()
        .name("quire-watch".into())
        .spawn(move || worker.run())
        .map_err(WatchError::Thread)?;
    Ok(WatchHandle {
        watcher: Some(watcher),
        messages: sender,
        thread: Some(thread),
        reconciled,
    })
}
