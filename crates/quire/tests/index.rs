//! `quire index`, `status`, `search` and `eval` end to end.

#![allow(clippy::unwrap_used)] // tests and benches stop at the first surprise

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::Duration;

use quire_testkit::{corpora, sample_vault};
use serde_json::Value;

fn quire(index: &Path) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_quire"));
    c.env("QUIRE_INDEX_DIR", index);
    // BM25 only unless a test passes --model: embedding is slow, and most tests are about the rest.
    c.env("QUIRE_MODEL", "/nonexistent/quire-model.bin");
    c
}

fn json(out: &Output) -> Value {
    assert!(
        out.status.success(),
        "quire failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("JSON on stdout")
}

#[test]
fn search_groups_by_note_with_lines_that_point_at_the_text() {
    let dir = tempfile::tempdir().unwrap();
    let index = dir.path().join("index");
    let vault = sample_vault();
    let stats = json(
        &quire(&index)
            .arg("--vault")
            .arg(&vault)
            .args(["--json", "index"])
            .output()
            .unwrap(),
    );
    assert_eq!(stats["notes_indexed"], 47);
    assert_eq!(stats["notes_skipped"].as_array().unwrap().len(), 0);
    let v = json(
        &quire(&index)
            .arg("--vault")
            .arg(&vault)
            .args(["--json", "search", "feeding the starter", "-k", "3"])
            .output()
            .unwrap(),
    );
    let results = v["results"].as_array().unwrap();
    assert_eq!(results[0]["path"], "Resources/Sourdough Starter.md");
    assert!(results.len() <= 3);
    let paths: Vec<&str> = results
        .iter()
        .map(|r| r["path"].as_str().unwrap())
        .collect();
    let mut unique = paths.clone();
    unique.dedup();
    assert_eq!(paths, unique, "one entry per note");
    let text = fs::read_to_string(vault.join("Resources/Sourdough Starter.md")).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    for s in results[0]["sections"].as_array().unwrap() {
        let start = s["start_line"].as_u64().unwrap() as usize;
        let heading = s["heading_path"]
            .as_array()
            .unwrap()
            .last()
            .unwrap()
            .as_str()
            .unwrap();
        assert!(lines[start - 1].contains(heading) || start > 1, "{s}");
        let snippet = s["snippet"].as_str().unwrap();
        for h in s["highlights"].as_array().unwrap() {
            let (a, b) = (
                h[0].as_u64().unwrap() as usize,
                h[1].as_u64().unwrap() as usize,
            );
            let word = snippet[a..b].to_lowercase();
            assert!(
                word.starts_with("feed") || word.starts_with("starter"),
                "{word}"
            );
        }
    }
    // Human output carries path:line and an obsidian:// link.
    let human = quire(&index)
        .arg("--vault")
        .arg(&vault)
        .args(["search", "乌龙茶", "-k", "1"])
        .output()
        .unwrap();
    let human = String::from_utf8_lossy(&human.stdout);
    assert!(human.contains("Languages/乌龙茶入门.md:"), "{human}");
    assert!(
        human.contains("obsidian://open?vault=vault&file=Languages%2F"),
        "{human}"
    );
    // Modes that need embeddings say so.
    let out = quire(&index)
        .arg("--vault")
        .arg(&vault)
        .args(["search", "x", "--mode", "vector"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("needs the embedding model"));
    // Status reports the coverage.
    let status = json(
        &quire(&index)
            .arg("--vault")
            .arg(&vault)
            .args(["--json", "status"])
            .output()
            .unwrap(),
    );
    assert_eq!(status["notes_indexed"], 47);
    assert_eq!(status["chunks"], stats["chunks_total"]);
}

fn generated_vault(dir: &Path, notes: usize) {
    for i in 0..notes {
        let folder = dir.join(format!("f{}", i % 10));
        fs::create_dir_all(&folder).unwrap();
        let mut text = format!("# Note {i}\n\n");
        for s in 0..6 {
            text.push_str(&format!("## Part {s}\n\nWords about topic {} and [[Note {}]] #t{}.\n\n- a point\n- another point\n\n", i % 37, (i + s) % notes, s));
        }
        fs::write(folder.join(format!("Note {i}.md")), text).unwrap();
    }
}

#[test]
fn a_killed_index_run_leaves_an_index_that_opens_and_finishes() {
    let dir = tempfile::tempdir().unwrap();
    let vault = dir.path().join("vault");
    generated_vault(&vault, 3000);
    let index = dir.path().join("index");
    for delay_ms in [150, 400, 900] {
        let mut child = quire(&index)
            .arg("--vault")
            .arg(&vault)
            .arg("index")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        std::thread::sleep(Duration::from_millis(delay_ms));
        child.kill().unwrap(); // SIGKILL
        child.wait().unwrap();
        // Whatever state it left, reading the index works or says there is none yet.
        let status = quire(&index)
            .arg("--vault")
            .arg(&vault)
            .args(["--json", "status"])
            .output()
            .unwrap();
        assert!(!String::from_utf8_lossy(&status.stderr).contains("panicked"));
    }
    let finished = json(
        &quire(&index)
            .arg("--vault")
            .arg(&vault)
            .args(["--json", "index"])
            .output()
            .unwrap(),
    );
    let fresh_index = dir.path().join("fresh");
    let fresh = json(
        &quire(&fresh_index)
            .arg("--vault")
            .arg(&vault)
            .args(["--json", "index"])
            .output()
            .unwrap(),
    );
    assert_eq!(finished["chunks_total"], fresh["chunks_total"]);
    let status = json(
        &quire(&index)
            .arg("--vault")
            .arg(&vault)
            .args(["--json", "status"])
            .output()
            .unwrap(),
    );
    assert_eq!(status["notes_indexed"], 3000);
    let search = |idx: &Path| -> Vec<String> {
        let v = json(
            &quire(idx)
                .arg("--vault")
                .arg(&vault)
                .args(["--json", "search", "topic 7", "-k", "50"])
                .output()
                .unwrap(),
        );
        let mut paths: Vec<String> = v["results"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["path"].as_str().unwrap().to_string())
            .collect();
        paths.sort();
        paths
    };
    assert_eq!(search(&index), search(&fresh_index));
}

#[test]
fn eval_computes_metrics_on_a_beir_layout_set() {
    let dir = tempfile::tempdir().unwrap();
    let set = dir.path();
    fs::create_dir_all(set.join("qrels")).unwrap();
    fs::write(
        set.join("corpus.jsonl"),
        r#"{"_id":"d1","title":"Sourdough","text":"feed the starter flour and water"}
{"_id":"d2","title":"Running","text":"tempo runs and intervals"}
{"_id":"d3","title":"Tea","text":"oolong tea brewing temperature"}
"#,
    )
    .unwrap();
    fs::write(set.join("queries.jsonl"), "{\"_id\":\"q1\",\"text\":\"starter flour\"}\n{\"_id\":\"q2\",\"text\":\"oolong\"}\n{\"_id\":\"q3\",\"text\":\"no judgments\"}\n").unwrap();
    fs::write(
        set.join("qrels/test.tsv"),
        "query-id\tcorpus-id\tscore\nq1\td1\t1\nq2\td2\t1\n",
    )
    .unwrap();
    let v = json(
        &quire(&dir.path().join("i"))
            .args(["--json", "eval"])
            .arg(set)
            .output()
            .unwrap(),
    );
    assert_eq!(v["queries"], 2);
    // q1 finds d1 first; q2's judged document (d2) does not contain "oolong".
    assert_eq!(v["ndcg_at_10"]["bm25"], 0.5);
    assert_eq!(v["mrr_at_10"]["bm25"], 0.5);
    assert_eq!(v["recall_at_100"]["bm25"], 0.5);
}

#[test]
fn bm25_reaches_the_published_scifact_score_and_carries_chinese_and_thai() {
    let ir = corpora().join("ir");
    let scifact = json(
        &quire(Path::new("/nonexistent"))
            .args(["--json", "eval"])
            .arg(ir.join("scifact"))
            .output()
            .unwrap(),
    );
    assert_eq!(scifact["queries"], 300);
    let ndcg = scifact["ndcg_at_10"]["bm25"].as_f64().unwrap();
    assert!(ndcg >= 0.66, "SciFact BM25 nDCG@10 {ndcg}");
    for lang in ["zh", "th"] {
        let v = json(
            &quire(Path::new("/nonexistent"))
                .args(["--json", "eval"])
                .arg(ir.join("xquad").join(lang))
                .output()
                .unwrap(),
        );
        let ndcg = v["ndcg_at_10"]["bm25"].as_f64().unwrap();
        assert!(ndcg >= 0.9, "XQuAD {lang} BM25 nDCG@10 {ndcg}");
    }
}

#[test]
fn hybrid_search_similar_notes_and_duplicates_with_the_local_model() {
    let model = quire_embed_path();
    let dir = tempfile::tempdir().unwrap();
    let index = dir.path().join("index");
    let vault = sample_vault();
    let run = |args: &[&str]| -> Value {
        json(
            &quire(&index)
                .arg("--vault")
                .arg(&vault)
                .arg("--model")
                .arg(&model)
                .arg("--json")
                .args(args)
                .output()
                .unwrap(),
        )
    };
    let stats = run(&["index"]);
    assert_eq!(stats["chunks_embedded"], stats["chunks_total"]);
    let status = run(&["status"]);
    assert_eq!(status["embeddings"], stats["chunks_total"]);
    assert_eq!(status["embedding_space"]["dimension"], 384);

    // Meaning across languages: an English phrase finds the Chinese note that says it, which
    // words alone cannot.
    let first_path = |v: &Value| {
        v["results"][0]["path"]
            .as_str()
            .unwrap_or_default()
            .to_string()
    };
    let vector = run(&[
        "search",
        "Tieguanyin tea with a floral aroma",
        "--mode",
        "vector",
        "-k",
        "3",
    ]);
    assert_eq!(first_path(&vector), "Languages/乌龙茶入门.md");
    let bm25 = run(&[
        "search",
        "Tieguanyin tea with a floral aroma",
        "--mode",
        "bm25",
        "-k",
        "3",
    ]);
    assert_ne!(first_path(&bm25), "Languages/乌龙茶入门.md");
    // Hybrid is the default mode with a model; the starter note leads for a paraphrase.
    let h = run(&["search", "keeping my levain alive and bubbly", "-k", "3"]);
    assert_eq!(h["mode"], "hybrid");
    let first = h["results"][0]["path"].as_str().unwrap();
    assert!(first.contains("Sourdough"), "{first}");

    let similar = run(&["similar", "Sourdough Starter", "-k", "3"]);
    let sims: Vec<&str> = similar["similar"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["path"].as_str().unwrap())
        .collect();
    assert!(
        sims.contains(&"Projects/Sourdough Experiment.md"),
        "{sims:?}"
    );
    assert!(!sims.contains(&"Resources/Sourdough Starter.md"));
    let scores: Vec<f64> = similar["similar"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["score"].as_f64().unwrap())
        .collect();
    assert!(scores.windows(2).all(|w| w[0] >= w[1]));
    // No note of the sample vault is a copy of another.
    assert_eq!(similar["near_copies"], serde_json::json!([]), "{similar}");

    // The sample vault holds no copies: its daily notes share a template, and the two tea notes
    // (Chinese) are close as vectors, but none shares text of its own with another.
    let dups = run(&["duplicates"]);
    assert_eq!(dups["pairs"].as_array().map(Vec::len), Some(0), "{dups}");
    // Without the own-text test, pairs close as vectors come, largest overlap first.
    let dups = run(&[
        "duplicates",
        "--threshold",
        "0.95",
        "--min-overlap",
        "0",
        "--limit",
        "3",
    ]);
    let pairs = dups["pairs"].as_array().unwrap();
    assert!(pairs.len() == 3, "{dups}");
    assert!(
        pairs
            .iter()
            .all(|p| p["score"].as_f64().unwrap() >= 0.95 && p["a"] != p["b"])
    );
    let overlaps: Vec<f64> = pairs
        .iter()
        .map(|p| p["overlap"].as_f64().unwrap())
        .collect();
    assert!(overlaps.windows(2).all(|w| w[0] >= w[1]), "{overlaps:?}");

    // A second run embeds nothing.
    let again = run(&["index"]);
    assert_eq!(again["chunks_embedded"], 0);
}

fn quire_embed_path() -> PathBuf {
    let path = std::env::var_os("QUIRE_MODEL")
        .map(PathBuf::from)
        .unwrap_or_else(|| dirs_data().join("quire/models/e5-small-q4.bin"));
    assert!(
        path.exists(),
        "model missing at {}: run scripts/fetch-model.sh",
        path.display()
    );
    path
}

fn dirs_data() -> PathBuf {
    std::env::var_os("XDG_DATA_HOME")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(std::env::var_os("HOME").unwrap_or_default()).join(".local/share")
        })
}

#[test]
fn eval_on_the_vault_itself_builds_checkable_queries_and_scores_them() {
    let dir = tempfile::tempdir().unwrap();
    let index = dir.path().join("index");
    let vault = corpora().join("vaults/obsidian-tasks-docs/vault");
    let listed = json(
        &quire(&index)
            .arg("--vault")
            .arg(&vault)
            .args(["--json", "eval", "--list-queries"])
            .output()
            .unwrap(),
    );
    let queries = listed.as_array().unwrap();
    assert!(queries.len() >= 5, "too few queries: {queries:?}");
    // Every query's answer is a real note, and a link query names the note it came from, whose
    // file holds a link on a line containing the query's words.
    for q in queries {
        let relevant = q["relevant"].as_str().unwrap();
        assert!(vault.join(relevant).is_file(), "{relevant}");
        if q["kind"] == "heading" {
            let text = fs::read_to_string(vault.join(relevant)).unwrap();
            let heading = q["text"].as_str().unwrap();
            // Inline markup (`code`, *emphasis*) is not part of a heading's text.
            let plain = |s: &str| s.replace(['`', '*'], "").trim().to_string();
            assert!(
                text.lines()
                    .any(|l| l.starts_with("##")
                        && plain(l.trim_start_matches('#')) == plain(heading)),
                "{heading} not a heading of {relevant}"
            );
        } else {
            let source = q["exclude"].as_str().unwrap();
            assert_ne!(source, relevant);
            let text = fs::read_to_string(vault.join(source)).unwrap();
            let first_word = q["text"]
                .as_str()
                .unwrap()
                .split_whitespace()
                .next()
                .unwrap();
            assert!(
                text.lines()
                    .any(|l| l.contains("[[") && l.contains(first_word)),
                "no link line with {first_word} in {source}"
            );
        }
    }
    let report = json(
        &quire(&index)
            .arg("--vault")
            .arg(&vault)
            .args(["--json", "eval"])
            .output()
            .unwrap(),
    );
    assert_eq!(report["queries"].as_u64().unwrap() as usize, queries.len());
    let ndcg = report["ndcg_at_10"]["bm25"].as_f64().unwrap();
    let recall = report["recall_at_100"]["bm25"].as_f64().unwrap();
    assert!((0.0..=1.0).contains(&ndcg) && ndcg > 0.2, "nDCG@10 {ndcg}");
    assert!(recall >= ndcg, "recall@100 {recall} below nDCG@10 {ndcg}");
    // Without a model only BM25 runs, and the index was built by eval itself.
    assert!(report["ndcg_at_10"].get("hybrid").is_none());
    assert!(index.join("quire.sqlite").is_file());
}

/// `--model DIR` loads a Hugging Face folder (all-MiniLM-L6-v2 from `scripts/fetch-model.sh
/// minilm`); its vectors live in their own space, and switching back to the default model on the
/// same index is refused with the rebuild command, never mixed.
#[test]
fn a_model_folder_indexes_and_searches_in_its_own_space() {
    let model = dirs_data().join("quire/models/all-MiniLM-L6-v2");
    assert!(
        model.join("model.safetensors").is_file(),
        "model folder missing at {}: run scripts/fetch-model.sh minilm",
        model.display()
    );
    let dir = tempfile::tempdir().unwrap();
    let index = dir.path().join("index");
    let vault = sample_vault();
    let with = |model: &Path, args: &[&str]| -> Output {
        quire(&index)
            .arg("--vault")
            .arg(&vault)
            .arg("--model")
            .arg(model)
            .arg("--json")
            .args(args)
            .output()
            .unwrap()
    };
    let stats = json(&with(&model, &["index"]));
    assert_eq!(stats["chunks_embedded"], stats["chunks_total"]);
    let status = json(&with(&model, &["status"]));
    let space = &status["embedding_space"];
    assert_eq!(space["dimension"], 384);
    assert_eq!(space["provider"], "local-safetensors");
    assert!(
        space["model"]
            .as_str()
            .unwrap()
            .starts_with("all-MiniLM-L6-v2@"),
        "{space}"
    );
    // An English paraphrase with no shared keyword finds the starter note by meaning.
    let found = json(&with(
        &model,
        &[
            "search",
            "keeping my levain alive and bubbly",
            "--mode",
            "vector",
            "-k",
            "3",
        ],
    ));
    let paths: Vec<&str> = found["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["path"].as_str().unwrap())
        .collect();
    assert!(
        paths.contains(&"Resources/Sourdough Starter.md"),
        "{paths:?}"
    );
    // Another model on this index: searches fall back to words until the notes are embedded
    // again, and `index` embeds them again, saying so.
    let before = json(&with(
        &quire_embed_path(),
        &["search", "keeping my levain alive and bubbly"],
    ));
    assert_eq!(before["mode"], "bm25", "{before}");
    let switched = json(&with(&quire_embed_path(), &["index"]));
    assert!(
        switched["model_changed_from"]
            .as_str()
            .is_some_and(|m| m.starts_with("all-MiniLM-L6-v2@")),
        "{switched}"
    );
    assert_eq!(switched["chunks_embedded"], switched["chunks_total"]);
    let after = json(&with(
        &quire_embed_path(),
        &["search", "keeping my levain alive and bubbly"],
    ));
    assert_eq!(after["mode"], "hybrid", "{after}");
}
