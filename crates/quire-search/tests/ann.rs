//! Vector search through the approximate index on the sample vault with the real model
//! (`scripts/fetch-model.sh`): the same chunks as the exact scan, notes added after the build
//! found through the exact delta, a filter honoured, and a searcher pinned to a generation never
//! sees a later sync's notes, even once a new build covers them.

#![allow(clippy::unwrap_used)] // tests stop at the first surprise

use std::sync::{Arc, OnceLock};

use quire_embed::{E5Model, Embedder, default_e5_path};
use quire_index::{AnnRefresh, AnnSettings, Filter, IndexLocation, SyncOptions, sync};
use quire_search::{Mode, SearchRequest, Searcher};

fn model() -> Arc<dyn Embedder> {
    static MODEL: OnceLock<Arc<E5Model>> = OnceLock::new();
    MODEL
        .get_or_init(|| Arc::new(E5Model::load(&default_e5_path()).unwrap()))
        .clone()
}

fn options(min_rows: usize, max_delta: usize) -> SyncOptions {
    SyncOptions {
        embedder: Some(model()),
        ann: Some(AnnSettings {
            min_rows,
            max_delta,
        }),
        ..SyncOptions::default()
    }
}

fn vector(query: &str, k: usize) -> SearchRequest {
    SearchRequest {
        mode: Mode::Vector,
        k,
        sections_per_note: 3,
        ..SearchRequest::new(query)
    }
}

/// (path, chunk id, score) of every section returned.
fn sections(searcher: &Searcher, request: &SearchRequest) -> Vec<(String, String, f32)> {
    searcher
        .search(request)
        .unwrap()
        .results
        .into_iter()
        .flat_map(|n| {
            n.sections
                .into_iter()
                .map(move |s| (n.path.clone(), s.chunk_id, s.score))
        })
        .collect()
}

const QUERIES: &[&str] = &[
    "how do I keep a sourdough starter alive",
    "getting better sleep",
    "weekly review of projects",
    "notes about a trip",
    "reading list of books",
];

#[test]
fn the_approximate_index_returns_what_the_exact_scan_returns() {
    let dir = tempfile::tempdir().unwrap();
    let vault = dir.path().join("vault");
    quire_testkit::copy_tree(&quire_testkit::sample_vault(), &vault);
    let location = IndexLocation::new(dir.path().join("index"));
    let stats = sync(&vault, &location, &options(10, 0), &()).unwrap();
    assert!(
        matches!(stats.ann, Some(AnnRefresh::Built { .. })),
        "{:?}",
        stats.ann
    );
    let approximate = Searcher::open(&location).unwrap().with_embedder(model());
    let mut with_ann = Vec::new();
    for q in QUERIES {
        with_ann.push(sections(&approximate, &vector(q, 5)));
    }
    // The same index without its build: the exact scan.
    std::fs::remove_dir_all(location.dir.join("ann")).unwrap();
    // A graph search is approximate (a node the graph links poorly can be missed, and which one
    // depends on the order the build's threads inserted), so what must hold: the best result is
    // the exact one, at least 90% of the exact results are found, and each found result has its
    // exact score (candidates are rescored from the stored vectors).
    let exact = Searcher::open(&location).unwrap().with_embedder(model());
    let (mut found, mut total) = (0, 0);
    for (q, got) in QUERIES.iter().zip(&with_ann) {
        let want = sections(&exact, &vector(q, 5));
        assert!(!want.is_empty());
        assert_eq!(got.len(), want.len(), "{q}");
        assert_eq!((&got[0].0, &got[0].1), (&want[0].0, &want[0].1), "{q}");
        for w in &want {
            total += 1;
            if let Some(g) = got.iter().find(|g| (&g.0, &g.1) == (&w.0, &w.1)) {
                found += 1;
                assert!((g.2 - w.2).abs() < 1e-5, "{q}: {} vs {}", g.2, w.2);
            }
        }
    }
    assert!(
        found * 10 >= total * 9,
        "{found} of {total} exact results found"
    );
}

#[test]
fn later_notes_come_from_the_delta_and_a_pinned_searcher_keeps_its_generation() {
    let dir = tempfile::tempdir().unwrap();
    let vault = dir.path().join("vault");
    quire_testkit::copy_tree(&quire_testkit::sample_vault(), &vault);
    let location = IndexLocation::new(dir.path().join("index"));
    sync(&vault, &location, &options(10, 0), &()).unwrap();

    let text = "Axolotls regrow their limbs, their hearts and parts of their brains.";
    let pinned = Searcher::open(&location).unwrap().with_embedder(model());
    pinned.store().pin_snapshot().unwrap();
    let before = sections(&pinned, &vector(text, 3));

    // A new note: kept out of the build (the delta limit is high), found through the delta.
    std::fs::write(vault.join("Axolotl.md"), format!("# Axolotl\n\n{text}\n")).unwrap();
    let stats = sync(&vault, &location, &options(10, 1_000), &()).unwrap();
    assert!(
        matches!(stats.ann, Some(AnnRefresh::Kept { delta: 1.., .. })),
        "{:?}",
        stats.ann
    );
    let fresh = Searcher::open(&location).unwrap().with_embedder(model());
    let found = sections(&fresh, &vector(text, 3));
    assert_eq!(found[0].0, "Axolotl.md");
    assert!(found[0].2 > 0.9, "{found:?}");

    // A filter is honoured on the approximate path.
    let filtered = SearchRequest {
        filter: Filter {
            folder: Some("Areas".into()),
            ..Filter::default()
        },
        ..vector(text, 3)
    };
    let in_folder = sections(&fresh, &filtered);
    assert!(!in_folder.is_empty());
    assert!(
        in_folder.iter().all(|s| s.0.starts_with("Areas/")),
        "{in_folder:?}"
    );

    // A new build now covers the note; the searcher pinned before both syncs still answers
    // from its own generation.
    std::fs::write(
        vault.join("Newt.md"),
        "# Newt\n\nNewts also regrow limbs.\n",
    )
    .unwrap();
    let stats = sync(&vault, &location, &options(10, 0), &()).unwrap();
    assert!(
        matches!(stats.ann, Some(AnnRefresh::Built { .. })),
        "{:?}",
        stats.ann
    );
    let again = sections(&pinned, &vector(text, 3));
    assert_eq!(again, before);
    assert!(
        again
            .iter()
            .all(|s| s.0 != "Axolotl.md" && s.0 != "Newt.md")
    );
}
