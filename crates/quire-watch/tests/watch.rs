//! The watcher on a temporary copy of a real vault (`obsidian-starter-vault` from the shared
//! corpora): edits made while it runs, edits made while it did not, and a locked index all end in
//! the same index as a fresh build.

#![allow(clippy::unwrap_used)] // tests and benches stop at the first surprise

use std::fs;
use std::path::{Path, PathBuf};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

use quire_index::lock::WriterLock;
use quire_index::store::{ChunkRow, NoteRow};
use quire_index::{FullText, IndexLocation, Store, SyncOptions, SyncStats, sync};
use quire_watch::{ChangeSet, WatchError, WatchEvent, WatchHandle, WatchOptions, spawn};

const DEBOUNCE: Duration = Duration::from_millis(300);

/// How long a test waits for an event before it fails (a sync of this vault takes well under a
/// second; the margin is for a loaded machine).
const PATIENCE: Duration = Duration::from_secs(60);

fn starter_vault() -> PathBuf {
    let corpora = std::env::var_os("QUIRE_CORPORA")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/corpora")
        });
    let vault = corpora.join("vaults/obsidian-starter-vault/vault");
    assert!(
        vault.is_dir(),
        "{} not found: set QUIRE_CORPORA to the shared corpora",
        vault.display()
    );
    vault
}

/// Every file below `dir`, at any depth.
fn files_below(dir: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    for entry in fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            files.extend(files_below(&path));
        } else {
            files.push(path);
        }
    }
    files
}

/// The vault paths of the notes below `dir`.
fn notes_below(vault: &Path, dir: &Path) -> Vec<String> {
    files_below(dir)
        .into_iter()
        .filter(|p| p.extension().is_some_and(|e| e == "md"))
        .map(|p| {
            p.strip_prefix(vault)
                .unwrap()
                .to_str()
                .unwrap()
                .replace('\\', "/")
        })
        .collect()
}

struct Fixture {
    dir: tempfile::TempDir,
    vault: PathBuf,
    index: IndexLocation,
}

/// A copy of the starter vault, with its index in `index_dir` (relative to the temp dir).
fn fixture(index_dir: &str) -> Fixture {
    let dir = tempfile::tempdir().unwrap();
    let vault = dir.path().join("vault");
    let source = starter_vault();
    for file in files_below(&source) {
        let target = vault.join(file.strip_prefix(&source).unwrap());
        fs::create_dir_all(target.parent().unwrap()).unwrap();
        fs::copy(&file, &target).unwrap();
    }
    let index = IndexLocation::new(dir.path().join(index_dir));
    Fixture { dir, vault, index }
}

fn options() -> WatchOptions {
    // No embedder: BM25 only, fast.
    WatchOptions {
        debounce: DEBOUNCE,
        sync: SyncOptions::default(),
    }
}

fn watch(f: &Fixture) -> (WatchHandle, Receiver<WatchEvent>) {
    let (sender, events) = mpsc::channel();
    let handle = spawn(f.vault.clone(), f.index.clone(), options(), move |event| {
        let _ = sender.send(event);
    })
    .unwrap();
    (handle, events)
}

/// The next outcome of a sync attempt (`Synced` or `Failed`); each must come right after the
/// `Started` of its attempt.
fn next_event(events: &Receiver<WatchEvent>) -> WatchEvent {
    let receive = || {
        events
            .recv_timeout(PATIENCE)
            .expect("no watch event in time")
    };
    match receive() {
        WatchEvent::Started { .. } => {}
        other => panic!("an attempt must be announced by `Started` first, got {other:?}"),
    }
    let outcome = receive();
    assert!(
        !matches!(outcome, WatchEvent::Started { .. }),
        "two `Started` in a row"
    );
    outcome
}

fn next_sync(events: &Receiver<WatchEvent>) -> (SyncStats, ChangeSet) {
    match next_event(events) {
        WatchEvent::Synced { stats, changes } => (*stats, changes),
        WatchEvent::Failed { message, .. } => panic!("sync failed: {message}"),
        WatchEvent::Started { .. } => unreachable!("next_event returns outcomes"),
    }
}

/// No event arrives for a few debounce periods: nothing is left to sync.
fn assert_quiet(events: &Receiver<WatchEvent>) {
    match events.recv_timeout(DEBOUNCE * 4) {
        Err(RecvTimeoutError::Timeout) => {}
        other => panic!("expected no more events, got {other:?}"),
    }
}

fn set(paths: &[&str]) -> std::collections::BTreeSet<String> {
    paths.iter().map(|p| p.to_string()).collect()
}

/// What an index holds: its note rows (path, title, mtime, size, sha256), its chunk rows (ids,
/// lines, content hashes, texts) and the number of full-text documents.
type Dump = (Vec<NoteRow>, Vec<ChunkRow>, u64);

fn dump(index: &IndexLocation) -> Dump {
    let store = Store::open(&index.store_path()).unwrap();
    let fulltext = FullText::open(&index.fulltext_dir()).unwrap();
    fulltext.reload().unwrap();
    (
        store.notes().unwrap(),
        store.chunks(None).unwrap(),
        fulltext.num_docs(),
    )
}

/// The index a fresh build of the vault makes, in a directory of its own.
fn fresh_build(f: &Fixture) -> Dump {
    let index = IndexLocation::new(f.dir.path().join("fresh-index"));
    let _ = fs::remove_dir_all(&index.dir);
    sync(&f.vault, &index, &SyncOptions::default(), &()).unwrap();
    dump(&index)
}

#[test]
fn edits_while_watching_end_in_the_same_index_as_a_fresh_build() {
    let f = fixture("index");
    let (handle, events) = watch(&f);
    assert!(handle.wait_reconciled(PATIENCE));
    let (stats, changes) = next_sync(&events);
    assert_eq!((stats.notes_indexed, stats.notes_deleted), (100, 0));
    assert!(changes.rescan);
    assert_eq!(changes.upserts.len(), 100);
    eprintln!(
        "reconciliation (empty index): sync took {:.3} s",
        stats.seconds
    );
    let mut syncs = 1;

    // A new note.
    let idea = f.vault.join("Inbox/Watched idea.md");
    let written = Instant::now();
    fs::write(
        &idea,
        "# Watched idea\n\nA note written while the watcher runs.\n",
    )
    .unwrap();
    let (stats, changes) = next_sync(&events);
    eprintln!(
        "new note: synced {:.3} s after the write (debounce {:.3} s, sync {:.3} s)",
        written.elapsed().as_secs_f64(),
        DEBOUNCE.as_secs_f64(),
        stats.seconds
    );
    syncs += 1;
    assert_eq!(changes.upserts, set(&["Inbox/Watched idea.md"]));
    assert!(changes.deletes.is_empty() && !changes.rescan);
    assert_eq!((stats.notes_indexed, stats.notes_deleted), (1, 0));

    // Five writes to one note within the debounce: one sync, one upsert.
    let solar = f.vault.join("Notes/Solar Cycle Duration.md");
    let mut text = fs::read_to_string(&solar).unwrap();
    let burst = Instant::now();
    for i in 0..5 {
        text.push_str(&format!("\nEdit {i} of the burst.\n"));
        fs::write(&solar, &text).unwrap();
        std::thread::sleep(Duration::from_millis(30));
    }
    assert!(
        burst.elapsed() < DEBOUNCE,
        "the burst took {:?}",
        burst.elapsed()
    );
    let (stats, changes) = next_sync(&events);
    syncs += 1;
    assert_eq!(changes.upserts, set(&["Notes/Solar Cycle Duration.md"]));
    assert!(changes.deletes.is_empty());
    assert_eq!(stats.notes_indexed, 1);

    // Rewriting a note with the same text: a sync that re-indexes nothing (the no-change flush).
    fs::write(&solar, &text).unwrap();
    let (stats, changes) = next_sync(&events);
    syncs += 1;
    assert_eq!(changes.upserts, set(&["Notes/Solar Cycle Duration.md"]));
    // Only the note the events named was looked at (the other 100 were not even listed).
    assert_eq!((stats.notes_indexed, stats.notes_unchanged), (0, 1));
    eprintln!("no-change flush: sync took {:.3} s", stats.seconds);

    // A rename: the old path deleted and the new one added, in one sync.
    fs::rename(
        f.vault.join("Notes/Radiation Belt Locations.md"),
        f.vault.join("Notes/Radiation Belts.md"),
    )
    .unwrap();
    let (stats, changes) = next_sync(&events);
    syncs += 1;
    assert_eq!(changes.upserts, set(&["Notes/Radiation Belts.md"]));
    assert_eq!(changes.deletes, set(&["Notes/Radiation Belt Locations.md"]));
    assert_eq!((stats.notes_indexed, stats.notes_deleted), (1, 1));

    // A deletion.
    fs::remove_file(f.vault.join("Inbox/Inbox.md")).unwrap();
    let (stats, changes) = next_sync(&events);
    syncs += 1;
    assert_eq!(changes.deletes, set(&["Inbox/Inbox.md"]));
    assert!(changes.upserts.is_empty());
    assert_eq!((stats.notes_indexed, stats.notes_deleted), (0, 1));

    // A folder moved into a new folder: a rescan, reported note by note.
    let board = f.vault.join("Concept Board");
    let moved_from = notes_below(&f.vault, &board);
    assert_eq!(moved_from.len(), 3);
    fs::create_dir(f.vault.join("Archive")).unwrap();
    fs::rename(&board, f.vault.join("Archive/Concept Board")).unwrap();
    let (stats, changes) = next_sync(&events);
    syncs += 1;
    assert!(changes.rescan);
    assert_eq!(changes.deletes, moved_from.iter().cloned().collect());
    assert_eq!(
        changes.upserts,
        moved_from.iter().map(|p| format!("Archive/{p}")).collect()
    );
    assert_eq!((stats.notes_indexed, stats.notes_deleted), (3, 3));

    // One sync per step (the reconciliation and six edits), and nothing after them.
    assert_quiet(&events);
    assert_eq!(syncs, 7);
    assert_eq!(dump(&f.index), fresh_build(&f));

    // After `stop` the thread is gone (it dropped the callback), and edits are not watched.
    handle.stop();
    fs::remove_file(&idea).unwrap();
    assert!(matches!(
        events.recv_timeout(DEBOUNCE * 2),
        Err(RecvTimeoutError::Disconnected)
    ));
}

#[test]
fn changes_made_while_no_watcher_ran_are_picked_up_by_the_reconciliation() {
    // The index lies inside the vault: the watcher must not react to its own writes.
    let f = fixture("vault/_quire_index");
    sync(&f.vault, &f.index, &SyncOptions::default(), &()).unwrap();
    let journal = f.vault.join("Journal/Entries/2023-07-21.md");
    let mut text = fs::read_to_string(&journal).unwrap();
    text.push_str("\nWritten while quire was off.\n");
    fs::write(&journal, text).unwrap();
    fs::write(
        f.vault.join("Offline note.md"),
        "# Offline\n\nNew while quire was off.\n",
    )
    .unwrap();
    fs::remove_file(f.vault.join("Learning/Learning Dashboard.md")).unwrap();

    let (handle, events) = watch(&f);
    assert!(handle.wait_reconciled(PATIENCE));
    let (stats, changes) = next_sync(&events);
    assert!(changes.rescan);
    assert_eq!(
        changes.upserts,
        set(&["Journal/Entries/2023-07-21.md", "Offline note.md"])
    );
    assert_eq!(changes.deletes, set(&["Learning/Learning Dashboard.md"]));
    assert_eq!((stats.notes_indexed, stats.notes_deleted), (2, 1));
    assert_quiet(&events);
    assert_eq!(dump(&f.index), fresh_build(&f));
    handle.stop();
}

#[test]
fn a_locked_index_is_retried_until_the_lock_is_released() {
    let f = fixture("index");
    fs::create_dir_all(&f.index.dir).unwrap();
    let lock = WriterLock::acquire(&f.index.dir).unwrap();
    // `spawn` returns while the reconciliation cannot even start.
    let (handle, events) = watch(&f);
    match next_event(&events) {
        WatchEvent::Failed { message, .. } => {
            let pid = format!("locked by pid {}", std::process::id());
            assert!(message.contains(&pid), "{message}");
            assert!(message.contains("retrying in"), "{message}");
        }
        other => panic!("expected a failure while locked, got {other:?}"),
    }
    assert!(!handle.wait_reconciled(Duration::ZERO));

    drop(lock);
    let (stats, changes) = next_sync(&events);
    assert!(changes.rescan);
    assert_eq!(stats.notes_indexed, 100);
    assert!(handle.wait_reconciled(Duration::ZERO));
    assert_eq!(dump(&f.index), fresh_build(&f));
    handle.stop();
}

#[test]
fn spawn_names_a_missing_vault() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("no-such-vault");
    let result = spawn(
        missing.clone(),
        IndexLocation::new(dir.path().join("index")),
        options(),
        |_| {},
    );
    match result {
        Err(error @ WatchError::Root { .. }) => {
            assert!(error.to_string().contains("no-such-vault"), "{error}");
        }
        Err(other) => panic!("expected a root error, got {other}"),
        Ok(_) => panic!("a missing vault was watched"),
    }
}

#[test]
fn the_handle_can_move_to_another_thread() {
    fn is_send<T: Send>() {}
    is_send::<WatchHandle>();
    is_send::<WatchEvent>();
}
