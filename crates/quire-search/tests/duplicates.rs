//! Duplicates on real vaults with planted near-copies, with each local model at its calibrated
//! threshold (multilingual-e5-small, `scripts/fetch-model.sh`, and EmbeddingGemma,
//! `scripts/fetch-model.sh gemma`): exactly the copies are flagged, not the daily notes that share a
//! template, not the identical unfilled daily notes of the kepano vault, and the cap is not hit.

#![allow(clippy::unwrap_used)] // tests and benches stop at the first surprise

use std::path::Path;
use std::sync::Arc;

use quire_embed::{
    Calibration, E5Model, Embedder, GemmaModel, default_e5_path, default_gemma_path,
};
use quire_index::{IndexLocation, SyncOptions, sync};
use quire_search::Searcher;
use quire_search::duplicates::{DEFAULT_MIN_OVERLAP, DEFAULT_THRESHOLD};

/// A copy of `from` with every 14th word of three letters or more replaced: about 7% of the
/// words edited, as a note copied and then reworked a little.
fn plant_near_copy(vault: &Path, from: &str, to: &str) {
    let text = std::fs::read_to_string(vault.join(from)).unwrap();
    let mut words = 0;
    let edited: Vec<&str> = text
        .split(' ')
        .map(|word| {
            let plain = word.len() >= 3 && word.chars().all(|c| c.is_ascii_alphabetic());
            words += usize::from(plain);
            if plain && words % 14 == 0 {
                "altered"
            } else {
                word
            }
        })
        .collect();
    std::fs::write(vault.join(to), edited.join(" ")).unwrap();
}

/// The flagged pairs of a copy of `source` with `plants` (from, to) added, at the defaults.
fn flagged(
    source: &Path,
    plants: &[(&str, &str)],
    model: &Arc<dyn Embedder>,
    threshold: f32,
) -> (Vec<(String, String)>, Searcher, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let vault = dir.path().join("vault");
    quire_testkit::copy_tree(source, &vault);
    for (from, to) in plants {
        plant_near_copy(&vault, from, to);
    }
    let location = IndexLocation::new(dir.path().join("index"));
    let options = SyncOptions {
        embedder: Some(model.clone()),
        ..SyncOptions::default()
    };
    sync(&vault, &location, &options, &()).unwrap();
    let searcher = Searcher::open(&location)
        .unwrap()
        .with_embedder(model.clone());
    let pairs = searcher
        .duplicates(threshold, DEFAULT_MIN_OVERLAP, 50)
        .unwrap()
        .into_iter()
        .map(|p| (p.a, p.b))
        .collect();
    (pairs, searcher, dir)
}

fn pair(a: &str, b: &str) -> (String, String) {
    (a.to_string(), b.to_string())
}

#[test]
fn near_copies_are_flagged_and_notes_sharing_a_template_are_not_e5() {
    let model =
        E5Model::load(&default_e5_path()).expect("the embedding model: run scripts/fetch-model.sh");
    assert_eq!(DEFAULT_THRESHOLD, Calibration::E5_SMALL.duplicate_cosine);
    check(Arc::new(model), DEFAULT_THRESHOLD);
}

#[test]
fn near_copies_are_flagged_and_notes_sharing_a_template_are_not_gemma() {
    let model = GemmaModel::load(&default_gemma_path())
        .expect("EmbeddingGemma: run scripts/fetch-model.sh gemma");
    assert_eq!(model.space().calibration(), Calibration::GEMMA);
    check(Arc::new(model), Calibration::GEMMA.duplicate_cosine);
}

fn check(model: Arc<dyn Embedder>, threshold: f32) {
    // The sample vault: 14 daily notes from one template, and two planted copies (one of them
    // a daily note, copied to another day and edited).
    let (pairs, searcher, _dir) = flagged(
        &quire_testkit::sample_vault(),
        &[
            (
                "Resources/Rust Ownership.md",
                "Resources/Rust Ownership (old).md",
            ),
            ("Journal/2026-11-17.md", "Journal/2026-12-17.md"),
        ],
        &model,
        threshold,
    );
    assert_eq!(
        pairs,
        vec![
            pair("Journal/2026-11-17.md", "Journal/2026-12-17.md"),
            pair(
                "Resources/Rust Ownership (old).md",
                "Resources/Rust Ownership.md"
            ),
        ]
    );
    // Without the own-text test the daily notes would be flagged: vectors alone cannot tell.
    let by_vectors = searcher.duplicates(threshold, 0.0, 1000).unwrap();
    let dailies: Vec<_> = by_vectors
        .iter()
        .filter(|p| p.a.starts_with("Journal/") && p.b.starts_with("Journal/"))
        .filter(|p| p.b != "Journal/2026-12-17.md" && p.a != "Journal/2026-11-17.md")
        .collect();
    assert!(
        dailies.len() >= 2,
        "{dailies:?} pairs of distinct daily notes"
    );

    // One note's copies among its similar notes (what the related-notes pane shows): the
    // planted copy, and for a daily note none, although other daily notes are as close.
    let copies_of = |path: &str| {
        let similar = searcher.similar(path, 10).unwrap();
        let copies = searcher
            .copies_among(path, &similar, threshold, DEFAULT_MIN_OVERLAP)
            .unwrap();
        let close = similar.iter().filter(|n| n.score >= threshold).count();
        (copies, close)
    };
    let (copies, _) = copies_of("Resources/Rust Ownership.md");
    let paths: Vec<&str> = copies.iter().map(|c| c.path.as_str()).collect();
    assert_eq!(paths, ["Resources/Rust Ownership (old).md"]);
    assert!(copies[0].overlap >= DEFAULT_MIN_OVERLAP, "{copies:?}");
    assert!(copies[0].score >= threshold, "{copies:?}");
    let (copies, close) = copies_of(&dailies[0].a);
    assert!(copies.is_empty(), "{copies:?}");
    assert!(
        close >= 1,
        "other daily notes are as close as a copy by vectors"
    );

    // kepano's vault: its daily notes are the same unfilled template (no own text), and the old
    // rule hit the cap of 50 there. Kyoto is its City template with a few properties filled in.
    let kepano = quire_testkit::corpora()
        .join("vaults")
        .join("kepano-obsidian")
        .join("vault");
    let (pairs, _searcher, _dir) = flagged(
        &kepano,
        &[(
            "References/Brown butter nectarine tart.md",
            "References/Nectarine tart (copy).md",
        )],
        &model,
        threshold,
    );
    assert_eq!(
        pairs,
        vec![
            pair("References/Kyoto.md", "Templates/City Template.md"),
            pair(
                "References/Brown butter nectarine tart.md",
                "References/Nectarine tart (copy).md"
            ),
        ]
    );
}
