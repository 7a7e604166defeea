//! Every note can be found by its own title: by words in all four shared vaults, and by meaning
//! (the real local model, `scripts/fetch-model.sh`) in the kepano vault, where 42 of 103 notes
//! are properties only and used to have no chunk at all. Those notes also count in similar notes.

#![allow(clippy::unwrap_used)] // tests and benches stop at the first surprise

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;

use quire_embed::{E5Model, Embedder, default_e5_path};
use quire_index::{IndexLocation, SyncOptions, sync};
use quire_search::{Mode, SearchRequest, Searcher};
use quire_vault::{OpenOptions, Vault};

/// The four shared vaults.
const VAULTS: [&str; 4] = [
    "kepano-obsidian",
    "obsidian-starter-vault",
    "obsidian-tasks-demo",
    "obsidian-tasks-docs",
];

fn vault_dir(name: &str) -> PathBuf {
    quire_testkit::corpora()
        .join("vaults")
        .join(name)
        .join("vault")
}

/// Indexes `name` into a temporary directory (the vault itself is only read).
fn index(name: &str, embedder: Option<Arc<dyn Embedder>>) -> (tempfile::TempDir, Searcher) {
    let dir = tempfile::tempdir().unwrap();
    let location = IndexLocation::new(dir.path().join("index"));
    let options = SyncOptions {
        embedder: embedder.clone(),
        ..SyncOptions::default()
    };
    sync(&vault_dir(name), &location, &options, &()).unwrap();
    let searcher = Searcher::open(&location).unwrap();
    let searcher = match embedder {
        Some(e) => searcher.with_embedder(e),
        None => searcher,
    };
    (dir, searcher)
}

/// How many notes of `vault` have each title (lowercased).
fn same_titles(vault: &Vault) -> HashMap<String, usize> {
    let mut same_title: HashMap<String, usize> = HashMap::new();
    for note in &vault.notes {
        *same_title.entry(note.title.to_lowercase()).or_default() += 1;
    }
    same_title
}

/// The notes of `name` that a search for their own title does not return in the top 10 (plus
/// one place for each other note with the same title).
fn not_found_by_title(name: &str, searcher: &Searcher, mode: Mode) -> Vec<String> {
    let vault = Vault::open(&vault_dir(name), &OpenOptions::default()).unwrap();
    let same_title = same_titles(&vault);
    let mut missing = Vec::new();
    for note in &vault.notes {
        let mut request = SearchRequest::new(note.title.clone());
        request.mode = mode;
        request.k = 9 + same_title[&note.title.to_lowercase()];
        let results = searcher.search(&request).unwrap();
        if !results.results.iter().any(|hit| hit.path == note.path) {
            missing.push(format!("{} ({})", note.path, note.title));
        }
    }
    assert!(vault.notes.len() > 20, "{name}: the corpus is missing");
    missing
}

#[test]
fn every_note_of_the_four_vaults_is_found_by_its_title_in_words() {
    for name in VAULTS {
        let (_dir, searcher) = index(name, None);
        let missing = not_found_by_title(name, &searcher, Mode::Bm25);
        assert!(
            missing.is_empty(),
            "{name}: not found by title: {missing:#?}"
        );
    }
}

/// A note's whole title, typed as the query, finds it first: within the places of the notes that
/// share that title (compared without case), in all four vaults; with a folder filter that
/// excludes it, it is not brought in; `explain` says why it is first.
#[test]
fn a_title_typed_whole_puts_its_note_first() {
    for name in VAULTS {
        let (_dir, searcher) = index(name, None);
        let vault = Vault::open(&vault_dir(name), &OpenOptions::default()).unwrap();
        let same_title = same_titles(&vault);
        let mut late = Vec::new();
        for note in &vault.notes {
            let mut request = SearchRequest::new(note.title.clone());
            request.mode = Mode::Bm25;
            request.k = same_title[&note.title.to_lowercase()];
            let results = searcher.search(&request).unwrap();
            if !results.results.iter().any(|hit| hit.path == note.path) {
                late.push(format!("{} ({})", note.path, note.title));
            }
        }
        assert!(late.is_empty(), "{name}: not first by title: {late:#?}");
    }
    // The two notes words alone ranked below their namesakes.
    let (_dir, searcher) = index("obsidian-tasks-demo", None);
    let mut request = SearchRequest::new("inheritance_task_listitem_task");
    request.mode = Mode::Bm25;
    request.k = 3;
    request.explain = true;
    let results = searcher.search(&request).unwrap().results;
    assert_eq!(
        results[0].path,
        "Test Data/inheritance_task_listitem_task.md"
    );
    assert!(results[0].explain.as_ref().unwrap().title_match);
    assert!(
        results[1..]
            .iter()
            .all(|hit| !hit.explain.as_ref().unwrap().title_match)
    );
    assert!(
        results.windows(2).all(|w| w[0].score >= w[1].score),
        "scores fall down the list: {results:?}"
    );
    // Another letter case finds it too; a folder that excludes it keeps it out.
    request.query = "INHERITANCE_TASK_LISTITEM_TASK".into();
    assert_eq!(
        searcher.search(&request).unwrap().results[0].path,
        "Test Data/inheritance_task_listitem_task.md"
    );
    request.filter.folder = Some("Daily Notes".into());
    let excluded = searcher.search(&request).unwrap().results;
    assert!(
        excluded
            .iter()
            .all(|hit| !hit.path.starts_with("Test Data/")),
        "{excluded:?}"
    );
    let (_dir, searcher) = index("obsidian-starter-vault", None);
    let mut request = SearchRequest::new("Header 1");
    request.k = 1;
    request.mode = Mode::Bm25;
    assert_eq!(
        searcher.search(&request).unwrap().results[0].path,
        "Element Structure and Formats.md"
    );
}

#[test]
fn notes_of_properties_only_are_found_by_meaning_and_have_similar_notes() {
    let path = default_e5_path();
    assert!(
        path.exists(),
        "model missing at {}: run scripts/fetch-model.sh",
        path.display()
    );
    let model: Arc<dyn Embedder> = Arc::new(E5Model::load(&path).unwrap());
    let (_dir, searcher) = index("kepano-obsidian", Some(model));
    // Every note by its title in the default mode (hybrid)…
    let missing = not_found_by_title("kepano-obsidian", &searcher, Mode::Hybrid);
    assert!(missing.is_empty(), "not found in hybrid mode: {missing:#?}");
    // …and every note of properties only (its card is its one chunk) by meaning alone.
    let vault = Vault::open(&vault_dir("kepano-obsidian"), &OpenOptions::default()).unwrap();
    let cards_only: Vec<&quire_vault::Note> = (0..vault.notes.len())
        .filter(|&i| vault.chunks(i).iter().all(|c| c.is_card()))
        .map(|i| &vault.notes[i])
        .collect();
    assert!(
        cards_only.len() >= 40,
        "{} notes of properties only",
        cards_only.len()
    );
    let mut by_meaning = Vec::new();
    for note in &cards_only {
        let mut request = SearchRequest::new(note.title.clone());
        request.mode = Mode::Vector;
        request.k = 10;
        let found = searcher.search(&request).unwrap().results;
        if !found.iter().any(|hit| hit.path == note.path) {
            by_meaning.push(note.path.clone());
        }
    }
    assert!(
        by_meaning.is_empty(),
        "not found by meaning: {by_meaning:#?}"
    );
    // The examples: a board game and a shrine described only by their properties.
    for (query, wanted) in [
        ("Catan", "References/Catan.md"),
        ("Fushimi Inari shrine", "References/Fushimi Inari.md"),
    ] {
        for mode in [Mode::Bm25, Mode::Vector, Mode::Hybrid] {
            let mut request = SearchRequest::new(query);
            request.mode = mode;
            request.k = 5;
            let paths: Vec<String> = searcher
                .search(&request)
                .unwrap()
                .results
                .into_iter()
                .map(|hit| hit.path)
                .collect();
            assert!(
                paths.iter().any(|p| p == wanted),
                "{query} ({mode}): {paths:?}"
            );
        }
    }
    let similar = searcher.similar("References/Catan.md", 5).unwrap();
    assert_eq!(similar.len(), 5, "{similar:?}");
    assert!(similar.iter().all(|s| s.path != "References/Catan.md"));
}
