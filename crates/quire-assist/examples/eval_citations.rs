//! Calibration of the citation check (`quire_assist::support`) on the hand-written dev set
//! `eval/citations/dev.jsonl`: each item is one answer sentence as a model would write it (with
//! its citation, or none), the sources it was written from (real passages of the shared vaults
//! and the sample vault, named by note and a phrase they contain) and the right verdict.
//!
//! ```text
//! cargo run -p quire-assist --example eval_citations [-- DEV_SET] [--verbose]
//! ```
//!
//! Each passage is the index's own chunk (same chunker), its vector the default model's vector
//! of the chunk's text (as `quire index` embeds it, without the title); each sentence goes through
//! [`support::check`] exactly as an answer does, once with vectors (when the model is
//! installed, see `scripts/fetch-model.sh`) and once with words only. Prints precision and
//! recall per label at quire's thresholds, then at a few others: a starting point, not a fit.

#![allow(clippy::unwrap_used, clippy::expect_used)] // a calibration program stops at the first surprise

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use quire_assist::context::{Passage, Source};
use quire_assist::support::{self, Thresholds};
use quire_vault::chunk::ApproxTokenCounter;
use quire_vault::{ChunkOptions, ParseOptions, chunk_note, parse_note};
use serde_json::Value;

struct Item {
    id: String,
    sentence: String,
    label: String,
    expected: Option<String>,
    sources: Vec<(Source, String)>,
}

fn vault_dir(root: &Path, name: &str) -> PathBuf {
    if name == "sample" {
        return root.join("examples/vault");
    }
    let corpora = std::env::var_os("QUIRE_CORPORA")
        .map(PathBuf::from)
        .unwrap_or_else(|| root.join("../shared/corpora"));
    corpora.join("vaults").join(name).join("vault")
}

/// The chunk of `path` whose text contains `phrase`, as a source with its indexed text.
fn source(vault: &Path, path: &str, phrase: &str, id: &str) -> (Source, String) {
    let text = std::fs::read_to_string(vault.join(path)).expect(path);
    let note = parse_note(path, &text, &ParseOptions::default());
    let chunks = chunk_note(&note, &ChunkOptions::default(), &ApproxTokenCounter);
    let chunk = chunks
        .into_iter()
        .find(|c| c.body.contains(phrase))
        .unwrap_or_else(|| panic!("no chunk of {path} contains {phrase:?}"));
    let passage = Passage {
        path: path.to_string(),
        title: note.title.clone(),
        link: note.title.clone(),
        chunk_id: chunk.id.clone(),
        content_hash: chunk.content_hash.clone(),
        heading_path: chunk.heading_path.clone(),
        start_line: chunk.start_line,
        end_line: chunk.end_line,
        text: chunk.body.trim_end().to_string(),
        score: 0.0,
    };
    (
        Source {
            id: id.to_string(),
            passage,
        },
        chunk.text,
    )
}

fn load(root: &Path, dev: &Path) -> Vec<Item> {
    let text = std::fs::read_to_string(dev).expect("the dev set");
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .map(|line| {
            let v: Value = serde_json::from_str(line).expect("a JSON line");
            let vault = vault_dir(root, v["vault"].as_str().unwrap());
            let sources = v["sources"]
                .as_array()
                .unwrap()
                .iter()
                .map(|s| {
                    source(
                        &vault,
                        s["path"].as_str().unwrap(),
                        s["contains"].as_str().unwrap(),
                        s["id"].as_str().unwrap(),
                    )
                })
                .collect();
            Item {
                id: v["id"].as_str().unwrap().to_string(),
                sentence: v["sentence"].as_str().unwrap().to_string(),
                label: v["label"].as_str().unwrap().to_string(),
                expected: v["source"].as_str().map(str::to_string),
                sources,
            }
        })
        .collect()
}

/// The cosines of each item's sentence (as [`support::split_sentences`] gives its claim) with
/// each of its sources, when the embedding model is installed, and that model's calibration.
type Cosines = Vec<Vec<Vec<Option<f32>>>>;

fn cosines(items: &[Item]) -> Option<(Cosines, quire_embed::Calibration)> {
    let path = quire_embed::default_model_path();
    let embedder = match quire_embed::load_local(&path) {
        Ok(e) => e,
        Err(e) => {
            eprintln!("no embedding model at {} ({e}): words only", path.display());
            return None;
        }
    };
    let mut out = Vec::new();
    for item in items {
        let ids: Vec<&str> = item.sources.iter().map(|(s, _)| s.id.as_str()).collect();
        let claims: Vec<String> = support::split_sentences(&item.sentence, &ids)
            .into_iter()
            .map(|s| s.claim)
            .collect();
        let claims: Vec<&str> = claims.iter().map(String::as_str).collect();
        let passages: Vec<&str> = item.sources.iter().map(|(_, t)| t.as_str()).collect();
        let sentence_vectors = embedder.embed_passages(&claims).unwrap();
        let passage_vectors = embedder.embed_passages(&passages).unwrap();
        out.push(
            sentence_vectors
                .iter()
                .map(|s| {
                    passage_vectors
                        .iter()
                        .map(|p| Some(quire_embed::dot(s, p)))
                        .collect()
                })
                .collect(),
        );
    }
    Some((out, embedder.space().calibration()))
}

/// The verdict as a label: the model's citation's status, or for an uncited sentence whether
/// quire attributed it; and the source named (the better one, or the one quire added).
fn verdict(
    item: &Item,
    cosines: Option<&[Vec<Option<f32>>]>,
    t: &Thresholds,
) -> (String, Option<String>, String) {
    let sources: Vec<Source> = item.sources.iter().map(|(s, _)| s.clone()).collect();
    let (sentences, _) = support::check(&item.sentence, &sources, cosines, None, t);
    let Some(sentence) = sentences.first() else {
        return ("unattributed".into(), None, String::new());
    };
    let detail = sentence
        .citations
        .iter()
        .map(|c| format!("{} words {:.2} cos {:?}", c.id, c.words, c.cosine))
        .collect::<Vec<_>>()
        .join("; ");
    match sentence.citations.first() {
        None => ("unattributed".into(), None, detail),
        Some(c) if c.added_by_quire => ("attributed".into(), Some(c.id.clone()), detail),
        Some(c) => (c.status.as_str().to_string(), c.better.clone(), detail),
    }
}

/// One line per (cosine, floor, margin): the share of items labelled right, on all items and on
/// the even and odd halves (a setting that only one half likes is a fit, not a finding), and
/// the recall of each label.
fn sweep_vectors(items: &[Item], cosines: &[Vec<Vec<Option<f32>>>]) {
    println!("\n## vectors: cosine, floor, margin → right (all / even / odd); recall per label");
    for cosine in [0.45, 0.5, 0.55, 0.6, 0.65, 0.7, 0.75, 0.8, 0.9] {
        for drop in [0.1, 0.2, 0.3] {
            for margin in [0.02, 0.04, 0.06, 0.08] {
                let t = Thresholds {
                    cosine,
                    cosine_floor: cosine - drop,
                    cosine_margin: margin,
                    ..Thresholds::DEFAULT
                };
                let mut right = [0usize; 3];
                let mut total = [0usize; 3];
                let mut per_label: BTreeMap<&str, (usize, usize)> = BTreeMap::new();
                for (n, item) in items.iter().enumerate() {
                    let (predicted, _, _) = verdict(item, Some(cosines[n].as_slice()), &t);
                    let ok = predicted == item.label;
                    for half in [0, 1 + n % 2] {
                        total[half] += 1;
                        right[half] += usize::from(ok);
                    }
                    let entry = per_label.entry(label_of(&item.label)).or_default();
                    entry.0 += usize::from(ok);
                    entry.1 += 1;
                }
                let share = |h: usize| right[h] as f32 / total[h].max(1) as f32;
                let recalls: Vec<String> = LABELS
                    .iter()
                    .map(|l| {
                        let (r, t) = per_label.get(l).copied().unwrap_or_default();
                        format!("{l} {:.2}", r as f32 / t.max(1) as f32)
                    })
                    .collect();
                println!(
                    "{cosine:.2} {:.2} {margin:.2} → {:.2} / {:.2} / {:.2}; {}",
                    cosine - drop,
                    share(0),
                    share(1),
                    share(2),
                    recalls.join(", ")
                );
            }
        }
    }
}

/// `label` as one of [`LABELS`].
fn label_of(label: &str) -> &'static str {
    LABELS
        .iter()
        .copied()
        .find(|l| *l == label)
        .unwrap_or("unsupported")
}

const LABELS: [&str; 5] = [
    "supported",
    "misattributed",
    "unsupported",
    "attributed",
    "unattributed",
];

fn report(
    name: &str,
    items: &[Item],
    cosines: Option<&[Vec<Vec<Option<f32>>>]>,
    t: &Thresholds,
    verbose: bool,
) {
    // (label, predicted) → count
    let mut counts: BTreeMap<(String, String), usize> = BTreeMap::new();
    let mut right_source = 0;
    let mut with_source = 0;
    for (n, item) in items.iter().enumerate() {
        let row = cosines.map(|c| c[n].as_slice());
        let (predicted, named, detail) = verdict(item, row, t);
        *counts
            .entry((item.label.clone(), predicted.clone()))
            .or_default() += 1;
        if predicted == item.label && item.expected.is_some() && item.label != "supported" {
            with_source += 1;
            if named == item.expected {
                right_source += 1;
            }
        }
        if verbose && predicted != item.label {
            println!(
                "  {:<10} {:<13} → {:<13} {}  [{}]",
                item.id, item.label, predicted, item.sentence, detail
            );
        }
    }
    println!("\n## {name}");
    println!(
        "{:<14} {:>9} {:>9} {:>6}",
        "label", "precision", "recall", "items"
    );
    for label in LABELS {
        let truth: usize = counts
            .iter()
            .filter(|((l, _), _)| l == label)
            .map(|(_, c)| c)
            .sum();
        let predicted: usize = counts
            .iter()
            .filter(|((_, p), _)| p == label)
            .map(|(_, c)| c)
            .sum();
        let right = counts
            .get(&(label.to_string(), label.to_string()))
            .copied()
            .unwrap_or(0);
        let ratio = |a: usize, b: usize| {
            if b == 0 {
                "-".to_string()
            } else {
                format!("{:.2}", a as f32 / b as f32)
            }
        };
        println!(
            "{label:<14} {:>9} {:>9} {truth:>6}",
            ratio(right, predicted),
            ratio(right, truth)
        );
    }
    println!("right source named (misattributed, attributed): {right_source} of {with_source}");
}

fn main() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..");
    let args: Vec<String> = std::env::args().skip(1).collect();
    let verbose = args.iter().any(|a| a == "--verbose");
    let dev = args
        .iter()
        .find(|a| !a.starts_with("--"))
        .map(PathBuf::from)
        .unwrap_or_else(|| root.join("eval/citations/dev.jsonl"));
    let items = load(&root, &dev);
    println!("{} items from {}", items.len(), dev.display());
    let (vectors, calibration) = match cosines(&items) {
        Some((c, calibration)) => (Some(c), Some(calibration)),
        None => (None, None),
    };
    // The vectors' model's thresholds; the share of words is the same for every model.
    let t = calibration
        .map(|c| Thresholds::for_model(&c))
        .unwrap_or_default();
    if let Some(c) = &vectors {
        report(
            "words and embeddings, quire's thresholds",
            &items,
            Some(c),
            &t,
            verbose,
        );
    }
    report("words only, quire's thresholds", &items, None, &t, verbose);
    if args.iter().any(|a| a == "--sweep") {
        for words in [0.34, 0.4, 0.5, 0.6, 0.67] {
            let t = Thresholds {
                words,
                ..Thresholds::DEFAULT
            };
            report(
                &format!("words only, words ≥ {words}"),
                &items,
                None,
                &t,
                false,
            );
        }
        if let Some(c) = &vectors {
            sweep_vectors(&items, c);
            for cosine in [0.86, 0.88, 0.90, 0.92] {
                for words_with_vectors in [0.4, 0.5, 0.6] {
                    let t = Thresholds {
                        cosine,
                        words_with_vectors,
                        ..Thresholds::DEFAULT
                    };
                    report(
                        &format!("vectors, cosine ≥ {cosine} or words ≥ {words_with_vectors}"),
                        &items,
                        Some(c),
                        &t,
                        false,
                    );
                }
            }
        }
    }
}
