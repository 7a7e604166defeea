//! Searching with a given query vector, a query vector moved toward a written passage (HyDE,
//! `Searcher::expanded_query_vector`), and pseudo-relevance feedback (`+prf` fusions), over the
//! kepano vault with the real local model (`scripts/fetch-model.sh`).

#![allow(clippy::unwrap_used)] // tests stop at the first surprise

use std::sync::Arc;

use quire_embed::{E5Model, Embedder, default_e5_path};
use quire_index::{IndexLocation, SyncOptions, sync};
use quire_search::{Mode, SearchRequest, Searcher};

fn kepano() -> (tempfile::TempDir, Searcher) {
    let path = default_e5_path();
    assert!(
        path.exists(),
        "model missing at {}: run scripts/fetch-model.sh",
        path.display()
    );
    let model: Arc<dyn Embedder> = Arc::new(E5Model::load(&path).unwrap());
    let dir = tempfile::tempdir().unwrap();
    let location = IndexLocation::new(dir.path().join("index"));
    let options = SyncOptions {
        embedder: Some(model.clone()),
        ..SyncOptions::default()
    };
    let vault = quire_testkit::corpora().join("vaults/kepano-obsidian/vault");
    sync(&vault, &location, &options, &()).unwrap();
    let searcher = Searcher::open(&location).unwrap().with_embedder(model);
    (dir, searcher)
}

fn paths(searcher: &Searcher, request: &SearchRequest, vector: Option<&[f32]>) -> Vec<String> {
    let found = match vector {
        Some(v) => searcher.search_with_vector(request, v).unwrap(),
        None => searcher.search(request).unwrap(),
    };
    found.results.into_iter().map(|hit| hit.path).collect()
}

#[test]
fn a_written_passage_moves_the_query_vector_and_prf_keeps_exact_matches_first() {
    let (_dir, searcher) = kepano();
    let shrine = "References/Fushimi Inari.md";

    // The query's own vector, given: the same ranking as embedding it.
    let mut request = SearchRequest::new("somewhere to travel in spring");
    request.mode = Mode::Hybrid;
    request.k = 10;
    let own = searcher
        .expanded_query_vector("somewhere to travel in spring", &[])
        .unwrap();
    let norm: f32 = own.iter().map(|x| x * x).sum::<f32>().sqrt();
    assert!((norm - 1.0).abs() < 1e-4, "norm {norm}");
    assert_eq!(
        paths(&searcher, &request, Some(&own)),
        paths(&searcher, &request, None)
    );

    // A passage about the shrine pulls it up for a query that does not name it.
    request.mode = Mode::Vector;
    let plain = paths(&searcher, &request, None);
    let moved = searcher
        .expanded_query_vector(
            "somewhere to travel in spring",
            &["Fushimi Inari is a Shinto shrine in Kyoto, known for its thousands of torii gates."],
        )
        .unwrap();
    let expanded = paths(&searcher, &request, Some(&moved));
    let rank = |list: &[String]| list.iter().position(|p| p == shrine);
    assert!(
        rank(&expanded).is_some_and(|r| r < 3),
        "{shrine} not in the top 3 with the passage: {expanded:#?}"
    );
    assert!(
        rank(&plain).is_none_or(|r| r > rank(&expanded).unwrap_or(usize::MAX)),
        "the passage did not move {shrine} up: {plain:#?} vs {expanded:#?}"
    );

    // Feedback from the first results keeps a title's own note first, and changes nothing
    // for a search whose fusion has none.
    for prf in ["zu:0.6+prf=0.5", "zu:0.6+prf=1"] {
        let mut request = SearchRequest::new("Catan");
        request.mode = Mode::Hybrid;
        request.fusion = prf.parse().unwrap();
        let found = paths(&searcher, &request, None);
        assert_eq!(
            found.first().map(String::as_str),
            Some("References/Catan.md"),
            "{prf}: {found:#?}"
        );
    }
}
