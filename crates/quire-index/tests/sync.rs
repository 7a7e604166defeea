//! The incremental sync on a copy of the sample vault: what it reads again, what it keeps, and
//! that any sequence of edits ends in the same index as a fresh build.

#![allow(clippy::unwrap_used)] // tests and benches stop at the first surprise

use std::fs;
use std::path::PathBuf;

use quire_index::lock::WriterLock;
use quire_index::{Boosts, Filter, FullText, IndexError, IndexLocation, Store, SyncOptions, sync};

use quire_testkit::sample_vault;

use quire_testkit::copy_tree as copy_dir;

struct Fixture {
    _dir: tempfile::TempDir,
    vault: PathBuf,
    index: IndexLocation,
}

fn fixture() -> Fixture {
    let dir = tempfile::tempdir().unwrap();
    let vault = dir.path().join("vault");
    copy_dir(&sample_vault(), &vault);
    let index = IndexLocation::new(dir.path().join("index"));
    Fixture {
        vault,
        index,
        _dir: dir,
    }
}

fn run(f: &Fixture) -> quire_index::SyncStats {
    sync(&f.vault, &f.index, &SyncOptions::default(), &()).unwrap()
}

/// Everything an index holds, in a comparable form: notes with hashes, chunks, document count,
/// and the matches of some searches.
type Dump = (Vec<(String, String)>, Vec<String>, u64, Vec<Vec<String>>);

fn dump(index: &IndexLocation) -> Dump {
    let store = Store::open(&index.store_path()).unwrap();
    let notes = store
        .notes()
        .unwrap()
        .into_iter()
        .map(|n| (n.path, n.sha256))
        .collect();
    let chunks = store
        .chunks(None)
        .unwrap()
        .into_iter()
        .map(|c| {
            format!(
                "{} {} {} {}-{} {:?}",
                c.note_path, c.id, c.content_hash, c.start_line, c.end_line, c.heading_path
            )
        })
        .collect();
    let fulltext = FullText::open(&index.fulltext_dir()).unwrap();
    fulltext.reload().unwrap();
    // The matching documents of some searches. (Not their scores: BM25 statistics count deleted
    // documents until segments merge, so scores drift slightly between an edited and a fresh index.)
    let searches = [
        "sourdough starter",
        "tempo run",
        "乌龙茶",
        "Достоевский",
        "kyoto budget",
        "rust borrow",
    ]
    .iter()
    .map(|q| {
        let mut keys: Vec<String> = fulltext
            .search(q, 1000, &Filter::default(), Boosts::default())
            .unwrap()
            .into_iter()
            .map(|h| h.key)
            .collect();
        keys.sort();
        keys
    })
    .collect();
    (notes, chunks, fulltext.num_docs(), searches)
}

#[test]
fn only_changed_notes_are_read_again() {
    let f = fixture();
    let first = run(&f);
    assert_eq!(first.notes_indexed, 47);
    assert_eq!(first.generation, 1);
    assert!(first.chunks_total > 100);

    let again = run(&f);
    assert_eq!(
        (again.notes_indexed, again.notes_unchanged, again.generation),
        (0, 47, 1)
    );

    // Touching a file without changing it costs no re-parse.
    let sleep = f.vault.join("Areas/Sleep.md");
    let text = fs::read_to_string(&sleep).unwrap();
    fs::write(&sleep, &text).unwrap();
    let touched = run(&f);
    assert_eq!((touched.notes_indexed, touched.notes_unchanged), (0, 47));

    // One paragraph edited: one note re-indexed, a new generation.
    fs::write(
        &sleep,
        text.replacen("\n\n", "\n\nA new sentence about naps.\n\n", 1),
    )
    .unwrap();
    let edited = run(&f);
    assert_eq!((edited.notes_indexed, edited.notes_deleted), (1, 0));
    assert_eq!(edited.generation, touched.generation + 1);

    // A rename is a delete plus a new note.
    fs::rename(&sleep, f.vault.join("Areas/Sleep log.md")).unwrap();
    let renamed = run(&f);
    assert_eq!((renamed.notes_indexed, renamed.notes_deleted), (1, 1));

    fs::remove_file(f.vault.join("Areas/Sleep log.md")).unwrap();
    let deleted = run(&f);
    assert_eq!(
        (
            deleted.notes_indexed,
            deleted.notes_deleted,
            deleted.chunks_total < renamed.chunks_total
        ),
        (0, 1, true)
    );
}

#[test]
fn after_any_edits_the_index_equals_a_fresh_build() {
    let f = fixture();
    run(&f);
    fs::write(
        f.vault.join("Projects/New idea.md"),
        "# New idea\n\n## Why\nBecause #idea\n",
    )
    .unwrap();
    run(&f);
    let home = f.vault.join("Home.md");
    let text = fs::read_to_string(&home).unwrap();
    fs::write(&home, text.replace("## ", "### ")).unwrap();
    fs::remove_file(f.vault.join("Resources/Tea Basics.md")).unwrap();
    fs::rename(f.vault.join("Areas"), f.vault.join("Life areas")).unwrap();
    fs::write(
        f.vault.join("Projects/New idea.md"),
        "# New idea\n\nRewritten entirely.\n",
    )
    .unwrap();
    run(&f);

    let fresh = IndexLocation::new(f._dir.path().join("fresh"));
    sync(&f.vault, &fresh, &SyncOptions::default(), &()).unwrap();
    assert_eq!(dump(&f.index), dump(&fresh));
}

#[test]
fn a_full_text_index_behind_the_store_is_rebuilt() {
    let f = fixture();
    run(&f);
    let before = dump(&f.index);
    // As if the process died after the store commit and before the full-text commit.
    {
        let mut store = Store::open(&f.index.store_path()).unwrap();
        let tx = store.begin().unwrap();
        tx.commit(2).unwrap();
    }
    let repaired = run(&f);
    assert!(repaired.fulltext_rebuilt);
    assert_eq!(repaired.generation, 3);
    let fulltext = FullText::open(&f.index.fulltext_dir()).unwrap();
    assert_eq!(fulltext.generation().unwrap(), Some(3));
    assert_eq!(dump(&f.index), before);
}

#[test]
fn a_full_text_index_of_an_older_analyzer_is_rebuilt_from_the_store() {
    let f = fixture();
    run(&f);
    let before = dump(&f.index);
    let version = |f: &Fixture| {
        Store::open(&f.index.store_path())
            .unwrap()
            .meta("analyzer_version")
            .unwrap()
    };
    assert_eq!(
        version(&f),
        Some(quire_index::analyzer::ANALYZER_VERSION.to_string())
    );
    // As an index built before the analyzer stemmed Greek, Cyrillic and Arabic words.
    {
        let mut store = Store::open(&f.index.store_path()).unwrap();
        let tx = store.begin().unwrap();
        tx.set_meta("analyzer_version", "1").unwrap();
        tx.commit(1).unwrap();
    }
    let rebuilt = run(&f);
    assert!(rebuilt.fulltext_rebuilt);
    assert_eq!(rebuilt.notes_indexed, 0, "nothing is read or chunked again");
    assert_eq!(
        version(&f),
        Some(quire_index::analyzer::ANALYZER_VERSION.to_string())
    );
    assert_eq!(dump(&f.index), before);
    // Once rebuilt, the next sync has nothing to do.
    assert!(!run(&f).fulltext_rebuilt);

    // A reader finds it too: the index is not consistent until the full text is rebuilt.
    let consistency = |f: &Fixture| {
        let store = Store::open(&f.index.store_path()).unwrap();
        let fulltext = FullText::open(&f.index.fulltext_dir()).unwrap();
        quire_index::Consistency::read(&store, &fulltext).unwrap()
    };
    {
        let mut store = Store::open(&f.index.store_path()).unwrap();
        let generation = store.generation().unwrap();
        let tx = store.begin().unwrap();
        tx.set_meta("analyzer_version", "1").unwrap();
        tx.commit(generation).unwrap();
    }
    let state = consistency(&f);
    assert!(state.analyzer_behind && !state.is_consistent());
    assert!(matches!(state.error(), IndexError::AnalyzerBehind));
    assert!(quire_index::repair_fulltext(&f.index, std::time::Duration::ZERO).unwrap());
    assert!(consistency(&f).is_consistent());
    assert_eq!(dump(&f.index), before);
}

#[test]
fn a_second_writer_is_refused_with_the_holders_pid() {
    let f = fixture();
    fs::create_dir_all(&f.index.dir).unwrap();
    let lock = WriterLock::acquire(&f.index.dir).unwrap();
    match sync(&f.vault, &f.index, &SyncOptions::default(), &()) {
        Err(IndexError::Locked { pid, .. }) => assert_eq!(pid, std::process::id().to_string()),
        other => panic!("expected a lock error, got {other:?}"),
    }
    drop(lock);
    assert_eq!(run(&f).notes_indexed, 47);
}

#[test]
fn filters_and_scripts_without_spaces_are_searchable() {
    let f = fixture();
    run(&f);
    let fulltext = FullText::open(&f.index.fulltext_dir()).unwrap();
    fulltext.reload().unwrap();
    let paths = |q: &str, filter: Filter| -> Vec<String> {
        fulltext
            .search(q, 50, &filter, Boosts::default())
            .unwrap()
            .into_iter()
            .map(|h| h.path)
            .collect()
    };
    assert_eq!(
        paths("京都", Filter::default()).first().map(String::as_str),
        Some("Languages/京都旅行の計画.md")
    );
    assert_eq!(
        paths("乌龙茶", Filter::default())
            .first()
            .map(String::as_str),
        Some("Languages/乌龙茶入门.md")
    );
    let journal = paths(
        "run",
        Filter {
            folder: Some("Journal".into()),
            ..Filter::default()
        },
    );
    assert!(
        !journal.is_empty() && journal.iter().all(|p| p.starts_with("Journal/")),
        "{journal:?}"
    );
    let tagged = paths(
        "homelab",
        Filter {
            tag: Some("project".into()),
            ..Filter::default()
        },
    );
    assert!(!tagged.is_empty());
    assert!(
        tagged.iter().all(|p| p == "Projects/Homelab.md"
            || p.starts_with("Journal/")
            || p.starts_with("Projects/")),
        "{tagged:?}"
    );
}

#[test]
fn a_note_the_store_refuses_is_rolled_back_alone() {
    use quire_vault::chunk::{ApproxTokenCounter, ChunkOptions, chunk_note};
    let dir = tempfile::tempdir().unwrap();
    let mut store = Store::open(&dir.path().join("quire.sqlite")).unwrap();
    let parse = |path: &str, text: &str| quire_vault::parse_note(path, text, &Default::default());
    let bad = parse("Bad.md", "# A\n\none\n\n# B\n\ntwo\n");
    let mut bad_chunks = chunk_note(&bad, &ChunkOptions::default(), &ApproxTokenCounter);
    // Two chunks with one id: the UNIQUE constraint refuses the second.
    bad_chunks[1].id = bad_chunks[0].id.clone();
    let good = parse("Good.md", "# Good\n\nfine\n");
    let good_chunks = chunk_note(&good, &ChunkOptions::default(), &ApproxTokenCounter);
    let tx = store.begin().unwrap();
    let err = tx.put_note(&bad, &bad_chunks, 1, 10, 1).unwrap_err();
    assert!(err.to_string().contains("UNIQUE"), "{err}");
    tx.put_note(&good, &good_chunks, 1, 10, 1).unwrap();
    tx.commit(1).unwrap();
    let notes: Vec<String> = store.notes().unwrap().into_iter().map(|n| n.path).collect();
    assert_eq!(notes, ["Good.md"], "nothing of the refused note is kept");
    assert_eq!(store.chunks(Some("Bad.md")).unwrap().len(), 0);
    assert_eq!(
        store.chunks(Some("Good.md")).unwrap().len(),
        good_chunks.len()
    );
}

/// The skipped files as the store lists them.
fn skipped(index: &IndexLocation) -> Vec<(String, String)> {
    Store::open(&index.store_path()).unwrap().skipped().unwrap()
}

#[test]
fn a_sync_of_the_changed_paths_alone_equals_a_whole_vault_sync() {
    let f = fixture();
    fs::create_dir_all(f.vault.join(".quire")).unwrap();
    fs::write(
        f.vault.join(".quire/config.toml"),
        "[vault]\nexclude = [\"Archive/**\"]\nmax_file_mb = 0.004\n",
    )
    .unwrap();
    fs::create_dir_all(f.vault.join("Archive")).unwrap();
    run(&f);
    // Edits of every kind the events name: a change, a new note, a deletion, a rename, a new
    // note in a new folder, an excluded note, one over the size limit, a hidden file, a path
    // that names nothing, and a file that is not a note.
    let sleep = f.vault.join("Areas/Sleep.md");
    let text = fs::read_to_string(&sleep).unwrap();
    fs::write(
        &sleep,
        text.replacen("\n\n", "\n\nNaps zanzibarite.\n\n", 1),
    )
    .unwrap();
    fs::write(f.vault.join("Fresh.md"), "# Fresh\n\nquokkaword here.\n").unwrap();
    fs::remove_file(f.vault.join("Resources/Sourdough Starter.md")).unwrap();
    fs::rename(f.vault.join("Home.md"), f.vault.join("Home renamed.md")).unwrap();
    fs::create_dir_all(f.vault.join("New/Deep")).unwrap();
    fs::write(f.vault.join("New/Deep/Inner.md"), "# Inner\n\nDeep text.\n").unwrap();
    fs::write(f.vault.join("Archive/Old.md"), "# Old\n\nexcluded\n").unwrap();
    fs::write(f.vault.join("Big.md"), "word ".repeat(2_000)).unwrap();
    fs::write(f.vault.join(".hidden.md"), "# Hidden\n").unwrap();
    fs::write(f.vault.join("image.png"), b"\x89PNG").unwrap();
    let paths: Vec<String> = [
        "Areas/Sleep.md",
        "Fresh.md",
        "Resources/Sourdough Starter.md",
        "Home.md",
        "Home renamed.md",
        "New/Deep/Inner.md",
        "Archive/Old.md",
        "Big.md",
        ".hidden.md",
        "Nowhere/Missing.md",
        "image.png",
    ]
    .iter()
    .map(|p| p.to_string())
    .collect();
    let options = SyncOptions {
        only: Some(paths.clone()),
        ..SyncOptions::default()
    };
    let stats = sync(&f.vault, &f.index, &options, &()).unwrap();
    assert_eq!(
        (stats.notes_indexed, stats.notes_deleted),
        (4, 2),
        "{stats:?}"
    );
    // The skipped list: the two new entries, and every earlier one kept.
    let listed = skipped(&f.index);
    assert!(
        listed
            .iter()
            .any(|(p, m)| p == "Archive/Old.md" && m.contains("Archive/**")),
        "{listed:?}"
    );
    assert!(listed.iter().any(|(p, _)| p == "Big.md"), "{listed:?}");

    // The same vault synced whole, from scratch: the same index.
    let fresh = IndexLocation::new(f._dir.path().join("fresh"));
    sync(&f.vault, &fresh, &SyncOptions::default(), &()).unwrap();
    assert_eq!(dump(&f.index), dump(&fresh));
    assert_eq!(listed, skipped(&fresh));

    // A link on the way is the whole scan's business: the sync falls back to it.
    #[cfg(unix)]
    {
        std::os::unix::fs::symlink(f.vault.join("New"), f.vault.join("Linked")).unwrap();
        let options = SyncOptions {
            only: Some(vec!["Linked/Deep/Inner.md".into()]),
            ..SyncOptions::default()
        };
        let stats = sync(&f.vault, &f.index, &options, &()).unwrap();
        assert!(stats.notes_unchanged > 40, "a whole scan: {stats:?}");
        let linked = IndexLocation::new(f._dir.path().join("linked"));
        sync(&f.vault, &linked, &SyncOptions::default(), &()).unwrap();
        assert_eq!(dump(&f.index), dump(&linked));
    }
}
