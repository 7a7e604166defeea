//! The watcher thread: the reconciliation sync, then events → debounce → flush → sync, with
//! retries when a sync fails. Nothing here ends the thread except [`Message::Stop`] or the
//! handle going away.

use std::any::Any;
use std::collections::BTreeMap;
use std::fmt;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::PathBuf;
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::sync::{Condvar, Mutex, PoisonError};
use std::time::{Duration, Instant};

use quire_index::{IndexError, IndexLocation, Store, SyncOptions, SyncStats};

use crate::WatchEvent;
use crate::coalesce::{Coalescer, RawEvent};
use crate::translate::raw_events;

/// Past this many changed notes in one window the whole vault is scanned (as cheap, by then).
const TARGETED_MAX: usize = 2_000;

/// What the watcher thread receives: file events from `notify`'s thread, or the handle's stop.
pub(crate) enum Message {
    Fs(notify::Result<notify::Event>),
    Stop,
}

/// Set once the reconciliation sync has succeeded; [`crate::WatchHandle::wait_reconciled`]
/// waits for it.
#[derive(Default)]
pub(crate) struct Reconciled {
    done: Mutex<bool>,
    signal: Condvar,
}

impl Reconciled {
    fn set(&self) {
        *self.done.lock().unwrap_or_else(PoisonError::into_inner) = true;
        self.signal.notify_all();
    }

    pub(crate) fn wait(&self, timeout: Duration) -> bool {
        let done = self.done.lock().unwrap_or_else(PoisonError::into_inner);
        let (done, _) = self
            .signal
            .wait_timeout_while(done, timeout, |done| !*done)
            .unwrap_or_else(PoisonError::into_inner);
        *done
    }
}

/// While another writer holds the index lock, this many attempts in a row fail quietly (logged);
/// the last of them is reported as [`WatchEvent::Failed`]. Any other failure is reported at once.
const LOCKED_ATTEMPTS_PER_REPORT: u32 = 4;

/// The wait after the first failed attempt; it doubles with each failure in a row.
const FIRST_RETRY: Duration = Duration::from_millis(100);

/// The longest wait between two attempts.
const MAX_RETRY: Duration = Duration::from_secs(60);

/// Under a steady stream of events (a sync tool copying a whole folder in), a flush happens at
/// the latest this many debounce periods after the first event of the window.
const MAX_WAIT_DEBOUNCES: u32 = 10;

/// The wait before attempt `failures + 1`: 100 ms, 200 ms, 400 ms, … up to a minute.
pub(crate) fn backoff(failures: u32) -> Duration {
    let doublings = failures.saturating_sub(1).min(16);
    FIRST_RETRY.saturating_mul(1 << doublings).min(MAX_RETRY)
}

/// When the next flush is due.
#[derive(Debug, Clone)]
pub(crate) struct Schedule {
    debounce: Duration,
    /// The first and the last relevant event since the last flush.
    window: Option<(Instant, Instant)>,
    /// A flush wanted at this time whatever the events: the reconciliation, a retry.
    wanted: Option<Instant>,
    /// No flush before this (after a failure).
    not_before: Option<Instant>,
}

impl Schedule {
    pub(crate) fn new(debounce: Duration) -> Schedule {
        Schedule {
            debounce,
            window: None,
            wanted: None,
            not_before: None,
        }
    }

    /// A relevant event arrived: the flush moves to `debounce` after it.
    pub(crate) fn event(&mut self, now: Instant) {
        let first = self.window.map_or(now, |(first, _)| first);
        self.window = Some((first, now));
    }

    /// Asks for a flush at `at` even without events.
    pub(crate) fn want(&mut self, at: Instant) {
        self.wanted = Some(self.wanted.map_or(at, |w| w.min(at)));
    }

    /// The last attempt failed: try again at `at`, not sooner.
    pub(crate) fn retry_at(&mut self, at: Instant) {
        self.wanted = Some(at);
        self.not_before = Some(at);
    }

    /// The flush succeeded (or had nothing to do): wait for events.
    pub(crate) fn flushed(&mut self) {
        *self = Schedule::new(self.debounce);
    }

    /// When the next flush is due; `None` while nothing is pending.
    pub(crate) fn due(&self) -> Option<Instant> {
        let quiet = self.window.and_then(|(first, last)| {
            let after_last = last.checked_add(self.debounce);
            let latest = first.checked_add(self.debounce.saturating_mul(MAX_WAIT_DEBOUNCES));
            match (after_last, latest) {
                (Some(a), Some(b)) => Some(a.min(b)),
                (a, b) => a.or(b),
            }
        });
        // Pending events decide (a file is read only once it is quiet); else a wanted flush.
        let due = quiet.or(self.wanted)?;
        Some(self.not_before.map_or(due, |n| due.max(n)))
    }
}

/// Why one sync attempt failed.
enum SyncFailure {
    Index(IndexError),
    /// A bug in the sync; the watcher survives it and tries again later.
    Panic(String),
}

impl SyncFailure {
    fn is_locked(&self) -> bool {
        matches!(self, SyncFailure::Index(IndexError::Locked { .. }))
    }
}

impl fmt::Display for SyncFailure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SyncFailure::Index(e) => write!(f, "{e}"),
            SyncFailure::Panic(message) => write!(f, "the sync panicked: {message}"),
        }
    }
}

fn panic_message(panic: &(dyn Any + Send)) -> String {
    panic
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| panic.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "unknown panic".to_string())
}

/// The notes of the index (path → sha256), read to report what a rescan changed. An index not
/// created yet has none; a read error is logged and only costs the report its details.
fn index_notes(location: &IndexLocation) -> Option<BTreeMap<String, String>> {
    let path = location.store_path();
    if !path.exists() {
        return Some(BTreeMap::new());
    }
    match Store::open(&path).and_then(|store| store.notes()) {
        Ok(notes) => Some(notes.into_iter().map(|n| (n.path, n.sha256)).collect()),
        Err(e) => {
            eprintln!("quire watch: cannot read the index to report its changes: {e}");
            None
        }
    }
}

/// The state of the watcher thread.
pub(crate) struct Worker<F> {
    pub(crate) vault_root: PathBuf,
    pub(crate) location: IndexLocation,
    pub(crate) sync: SyncOptions,
    pub(crate) on_event: F,
    pub(crate) messages: Receiver<Message>,
    pub(crate) reconciled: std::sync::Arc<Reconciled>,
    pub(crate) pending: Coalescer,
    pub(crate) schedule: Schedule,
    /// The reconciliation sync has not succeeded yet.
    pub(crate) reconciling: bool,
    /// Failed attempts in a row.
    pub(crate) failures: u32,
    /// A `Started` was sent and its outcome not yet: a retry whose failure is not reported (a
    /// locked index) is not announced again.
    pub(crate) announced: bool,
}

impl<F: Fn(WatchEvent)> Worker<F> {
    pub(crate) fn run(mut self) {
        self.schedule.want(Instant::now());
        loop {
            let message = match self.schedule.due() {
                Some(due) => {
                    let wait = due.saturating_duration_since(Instant::now());
                    match self.messages.recv_timeout(wait) {
                        Ok(message) => Some(message),
                        Err(RecvTimeoutError::Timeout) => None,
                        Err(RecvTimeoutError::Disconnected) => return,
                    }
                }
                None => match self.messages.recv() {
                    Ok(message) => Some(message),
                    Err(_) => return,
                },
            };
            match message {
                Some(Message::Stop) => return,
                Some(Message::Fs(result)) => {
                    if self.absorb(result) {
                        self.schedule.event(Instant::now());
                    }
                }
                None => self.flush(),
            }
        }
    }

    /// Adds one `notify` event to the window; returns whether it concerns the index.
    fn absorb(&mut self, result: notify::Result<notify::Event>) -> bool {
        let events = match result {
            Ok(event) => raw_events(&event, self.pending.scope()),
            Err(error) => {
                eprintln!("quire watch: {error}; the next sync rescans the vault");
                vec![RawEvent::Overflow]
            }
        };
        let mut relevant = false;
        for event in events {
            relevant |= self.pending.push(event);
        }
        relevant
    }

    /// Syncs the index if the window changed anything: the notes the events named, or the whole
    /// vault after a folder event, lost events or at the reconciliation (a rescan). Each file is
    /// read now, at flush time, not when its event arrived.
    fn flush(&mut self) {
        let mut changes = self.pending.changes();
        changes.rescan |= self.reconciling;
        if changes.is_empty() {
            self.pending.clear();
            self.schedule.flushed();
            return;
        }
        let before = if changes.rescan {
            index_notes(&self.location)
        } else {
            None
        };
        if !self.announced {
            self.announced = true;
            self.emit(WatchEvent::Started {
                changes: changes.clone(),
            });
        }
        let mut options = self.sync.clone();
        // A requested rebuild is done once, by the reconciliation; later flushes are incremental.
        options.rebuild &= self.reconciling;
        // Without a rescan the events name every note that changed: only those are looked at
        // (a one-note edit costs the same in a vault of any size). The sync itself falls back
        // to the whole scan for a path it cannot judge alone (a link on the way).
        if !changes.rescan && changes.upserts.len() + changes.deletes.len() <= TARGETED_MAX {
            options.only = Some(changes.paths());
        }
        let result = self.sync_watched(&options);
        let result: Result<SyncStats, SyncFailure> = match result {
            Ok(result) => result.map_err(SyncFailure::Index),
            Err(panic) => Err(SyncFailure::Panic(panic_message(panic.as_ref()))),
        };
        match result {
            Ok(stats) => {
                if let Some(before) = before
                    && let Some(after) = index_notes(&self.location)
                {
                    changes.add_index_diff(&before, &after);
                }
                self.pending.clear();
                self.schedule.flushed();
                self.failures = 0;
                if self.reconciling {
                    self.reconciling = false;
                    self.reconciled.set();
                }
                self.announced = false;
                self.emit(WatchEvent::Synced {
                    stats: Box::new(stats),
                    changes,
                });
            }
            Err(failure) => {
                // The window is kept: the retry syncs it together with any later events.
                self.failures += 1;
                let delay = backoff(self.failures);
                self.schedule.retry_at(Instant::now() + delay);
                let message = format!(
                    "sync of {} failed: {failure}; retrying in {:.1} s",
                    self.vault_root.display(),
                    delay.as_secs_f64()
                );
                eprintln!("quire watch: {message}");
                if !failure.is_locked() || self.failures.is_multiple_of(LOCKED_ATTEMPTS_PER_REPORT)
                {
                    self.announced = false;
                    self.emit(WatchEvent::Failed {
                        message,
                        running: false,
                    });
                }
            }
        }
    }

    /// Runs one sync on a scoped thread while this one watches it: a sync still running after
    /// [`stall_report`] (a file that blocks reading, a dead network share) is reported as a
    /// failure every [`stall_report`] until it ends, so status, events and stderr say the index is
    /// not being kept fresh instead of showing the last good sync.
    fn sync_watched(
        &self,
        options: &quire_index::SyncOptions,
    ) -> std::thread::Result<Result<SyncStats, quire_index::IndexError>> {
        let (done, finished) = std::sync::mpsc::channel();
        std::thread::scope(|scope| {
            let (vault, location) = (&self.vault_root, &self.location);
            let worker = std::thread::Builder::new()
                .name("quire-sync".into())
                .spawn_scoped(scope, move || {
                    let result = catch_unwind(AssertUnwindSafe(|| {
                        quire_index::sync(vault, location, options, &())
                    }));
                    let _ = done.send(());
                    result
                });
            let worker = match worker {
                Ok(worker) => worker,
                // No thread to be had: sync on this one, unwatched.
                Err(_) => {
                    return catch_unwind(AssertUnwindSafe(|| {
                        quire_index::sync(vault, location, options, &())
                    }));
                }
            };
            let started = Instant::now();
            while let Err(RecvTimeoutError::Timeout) = finished.recv_timeout(stall_report()) {
                let message = format!(
                    "the sync of {} has been running for {:.0} s and has not finished: notes saved meanwhile are not searchable yet",
                    self.vault_root.display(),
                    started.elapsed().as_secs_f64()
                );
                eprintln!("quire watch: {message}");
                self.emit(WatchEvent::Failed {
                    message,
                    running: true,
                });
            }
            worker.join().unwrap_or_else(Err)
        })
    }

    fn emit(&self, event: WatchEvent) {
        if catch_unwind(AssertUnwindSafe(|| (self.on_event)(event))).is_err() {
            eprintln!("quire watch: the event callback panicked; the watcher goes on");
        }
    }
}

/// How long a sync may run before the watcher reports that it has not finished: 60 s, or
/// `QUIRE_WATCH_STALL_MS` (for tests).
fn stall_report() -> Duration {
    std::env::var("QUIRE_WATCH_STALL_MS")
        .ok()
        .and_then(|ms| ms.parse().ok())
        .map(Duration::from_millis)
        .unwrap_or(Duration::from_secs(60))
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: Duration = Duration::from_millis(1);

    #[test]
    fn the_flush_follows_the_last_event() {
        let t0 = Instant::now();
        let mut s = Schedule::new(300 * MS);
        assert_eq!(s.due(), None);
        s.event(t0);
        assert_eq!(s.due(), Some(t0 + 300 * MS));
        s.event(t0 + 200 * MS);
        assert_eq!(s.due(), Some(t0 + 500 * MS));
        s.flushed();
        assert_eq!(s.due(), None);
    }

    #[test]
    fn a_steady_stream_of_events_is_flushed_after_ten_debounces() {
        let t0 = Instant::now();
        let mut s = Schedule::new(100 * MS);
        for i in 0..100 {
            s.event(t0 + i * 50 * MS);
        }
        assert_eq!(s.due(), Some(t0 + 1000 * MS));
    }

    #[test]
    fn a_retry_is_never_earlier_than_asked_and_happens_without_events() {
        let t0 = Instant::now();
        let mut s = Schedule::new(300 * MS);
        s.want(t0);
        assert_eq!(s.due(), Some(t0));
        s.retry_at(t0 + 800 * MS);
        assert_eq!(s.due(), Some(t0 + 800 * MS));
        // An event during the wait does not bring the retry forward…
        s.event(t0 + 100 * MS);
        assert_eq!(s.due(), Some(t0 + 800 * MS));
        // …and one just before it delays it: a file is read only once it is quiet.
        s.event(t0 + 790 * MS);
        assert_eq!(s.due(), Some(t0 + 1090 * MS));
    }

    #[test]
    fn a_huge_debounce_does_not_overflow() {
        let mut s = Schedule::new(Duration::MAX);
        s.event(Instant::now());
        assert_eq!(s.due(), None);
    }

    #[test]
    fn backoff_doubles_up_to_a_minute() {
        let waits: Vec<u128> = (1..=4).map(|n| backoff(n).as_millis()).collect();
        assert_eq!(waits, [100, 200, 400, 800]);
        assert_eq!(backoff(30), Duration::from_secs(60));
        assert_eq!(backoff(u32::MAX), Duration::from_secs(60));
    }
}
