//! The default embedding model, EmbeddingGemma-300M, through the CLI on a copy of a real vault:
//! a first index killed after its first batch of vectors resumes without embedding those again,
//! questions in other words (and another language) than their notes find them, and the
//! thresholds read off the model's calibration. Needs the model (`scripts/fetch-model.sh gemma`,
//! run by `scripts/test.sh` and CI).

#![allow(clippy::unwrap_used)] // tests stop at the first surprise

use std::path::{Path, PathBuf};
use std::process::Command;

fn gemma() -> PathBuf {
    let path = quire_embed::default_gemma_path();
    assert!(
        path.exists(),
        "EmbeddingGemma missing at {}: run scripts/fetch-model.sh gemma",
        path.display()
    );
    path
}

/// `quire` on the vault with the default model: no `QUIRE_MODEL`, the fetched EmbeddingGemma.
fn quire(vault: &Path, index: &Path) -> Command {
    let mut c = quire_testkit::quire(env!("CARGO_BIN_EXE_quire"), vault, index);
    c.env_remove("QUIRE_MODEL");
    c
}

#[test]
fn default_model_indexes_resumes_and_finds_notes_by_meaning() {
    gemma();
    let dir = tempfile::tempdir().unwrap();
    let vault = dir.path().join("vault");
    let index = dir.path().join("index");
    quire_testkit::copy_tree(
        &quire_testkit::corpora().join("vaults/kepano-obsidian/vault"),
        &vault,
    );

    // Killed right after the first batch of vectors is stored.
    let killed = quire(&vault, &index)
        .env("QUIRE_FAILPOINT", "after_embed_batch")
        .args(["--json", "index"])
        .output()
        .unwrap();
    assert!(!killed.status.success(), "the failpoint aborts the run");
    let first = quire_testkit::json(
        &quire(&vault, &index)
            .args(["--json", "index"])
            .output()
            .unwrap(),
    );
    let chunks = first["chunks_total"].as_u64().unwrap_or(0);
    let embedded = first["chunks_embedded"].as_u64().unwrap();
    assert!(chunks > 100, "{first}");
    // The 32 vectors of the killed run's batch were kept; only the rest were embedded.
    assert!(embedded <= chunks - 32 && embedded > 0, "{first}");

    // The index is in EmbeddingGemma's space.
    let status = quire_testkit::json(
        &quire(&vault, &index)
            .args(["--json", "status"])
            .output()
            .unwrap(),
    );
    assert!(status.to_string().contains("embeddinggemma"), "{status}");

    // Questions in the user's own words, one in German (held-out questions of
    // eval/answerability/near.jsonl, not used to choose any setting).
    let questions = [
        (
            "Which sock brand did I say costs about four times as much as cheap socks but pays for itself?",
            "Clippings/Buy wisely.md",
        ),
        (
            "In the list of birthday advice I clipped, what is being enthusiastic supposedly worth?",
            "Clippings/68 Bits of Unsolicited Advice.md",
        ),
        (
            "Could I make my summer stone-fruit tart with pears instead?",
            "References/Brown butter nectarine tart.md",
        ),
        (
            "Wann habe ich Futurama zuletzt gesehen, und wie habe ich die Serie bewertet?",
            "References/Futurama.md",
        ),
    ];
    for (question, note) in questions {
        let found = quire_testkit::json(
            &quire(&vault, &index)
                .args(["--json", "search", question, "-k", "3"])
                .output()
                .unwrap(),
        );
        let paths: Vec<&str> = found["results"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|r| r["path"].as_str())
            .collect();
        assert!(paths.contains(&note), "{question}: {paths:?}");
    }

    // --explain says where each retriever put a note; the fusion is EmbeddingGemma's (80% vector).
    let explained = quire_testkit::json(
        &quire(&vault, &index)
            .args([
                "--json",
                "search",
                "cost per use of socks",
                "-k",
                "3",
                "--explain",
            ])
            .output()
            .unwrap(),
    );
    let first = &explained["results"][0];
    let why = &first["explain"];
    assert_eq!(why["fusion"], "zu:0.8", "{explained}");
    assert_eq!(
        why["chunk_id"], first["sections"][0]["chunk_id"],
        "{explained}"
    );
    assert!(
        why["vector_rank"].as_u64().is_some_and(|r| r >= 1),
        "{explained}"
    );
    assert!(
        why["vector_similarity"]
            .as_f64()
            .is_some_and(|s| s > 0.3 && s <= 1.0),
        "{explained}"
    );
    assert!(
        why["bm25_rank"].as_u64().is_some_and(|r| r >= 1),
        "{explained}"
    );
    assert!((why["score"].as_f64().unwrap() - first["score"].as_f64().unwrap()).abs() < 1e-6);
    // Without the flag, no explanation.
    let plain = quire_testkit::json(
        &quire(&vault, &index)
            .args(["--json", "search", "cost per use of socks", "-k", "3"])
            .output()
            .unwrap(),
    );
    assert!(plain["results"][0].get("explain").is_none(), "{plain}");

    // Offline ask flags a near miss by the word no passage speaks to (the recipe is there, its
    // being gluten-free is not, nor anywhere in the notes), and answers a question its notes
    // cover.
    let ask = |question: &str| {
        quire_testkit::json(
            &quire(&vault, &index)
                .args(["--json", "ask", question])
                .output()
                .unwrap(),
        )
    };
    let near_miss = ask("Is the nectarine tart gluten-free?");
    assert_eq!(near_miss["covered"], false, "{near_miss}");
    assert_eq!(
        near_miss["evidence"]["unmatched"], "gluten-free",
        "{near_miss}"
    );
    assert_eq!(near_miss["evidence"]["absent"], true, "{near_miss}");
    assert!(
        near_miss["answer"]
            .as_str()
            .unwrap()
            .contains("“gluten-free” is in none of your notes"),
        "{near_miss}"
    );

    let covered = ask("Where in Kyoto is Fushimi Inari?");
    assert_eq!(covered["covered"], true, "{covered}");
    assert!(covered["evidence"].get("unmatched").is_none(), "{covered}");

    // Duplicates read their default threshold off the model's calibration.
    let dups = quire_testkit::json(
        &quire(&vault, &index)
            .args(["--json", "duplicates"])
            .output()
            .unwrap(),
    );
    let threshold = dups["threshold"].as_f64().unwrap();
    assert!((threshold - 0.80).abs() < 1e-6, "{dups}");
}
