//! How often the sentence an offline answer would lead with holds the answer: on XQuAD's
//! questions (the answer span known), the gold paragraph is split into sentences
//! (`support::split_sentences`) and ranked against the question with the embedding model
//! (question as a query, sentences as documents); a hit is a leading sentence containing the
//! answer. Baselines in the same run: the paragraph's first sentence, and the sentence sharing
//! the most of the question's words. Usage:
//! `cargo run --release -p quire-assist --example lead_sentence [LANG…]` (default: all 12).

#![allow(clippy::unwrap_used)] // an evaluation script stops at the first surprise

use std::collections::{HashMap, HashSet};

use quire_assist::support::split_sentences;
use quire_embed::{default_model_path, dot, load_local};
use serde_json::Value;

fn words(text: &str) -> HashSet<String> {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|w| w.chars().count() > 2)
        .map(str::to_lowercase)
        .collect()
}

fn main() {
    let corpora = std::env::var_os("QUIRE_CORPORA")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| std::path::PathBuf::from("../shared/corpora"));
    let mut langs: Vec<String> = std::env::args().skip(1).collect();
    if langs.is_empty() {
        langs = "ar de el en es hi ro ru th tr vi zh"
            .split(' ')
            .map(String::from)
            .collect();
    }
    let model = load_local(&default_model_path()).unwrap();
    println!("model {}", model.space().model);
    println!("| lang | questions | model's lead | first sentence | most shared words |");
    println!("|---|---|---|---|---|");
    let (mut all, mut all_hits) = (0, [0usize; 3]);
    for lang in &langs {
        let dir = corpora.join("ir/xquad").join(lang);
        let mut contexts: HashMap<String, String> = HashMap::new();
        for line in std::fs::read_to_string(dir.join("corpus.jsonl"))
            .unwrap()
            .lines()
        {
            let d: Value = serde_json::from_str(line).unwrap();
            contexts.insert(
                d["_id"].as_str().unwrap().into(),
                d["text"].as_str().unwrap().into(),
            );
        }
        let mut sentence_vectors: HashMap<String, (Vec<String>, Vec<Vec<f32>>)> = HashMap::new();
        let (mut n, mut hits) = (0, [0usize; 3]);
        // Every 4th question: 300 a language.
        for line in std::fs::read_to_string(dir.join("qa.jsonl"))
            .unwrap()
            .lines()
            .step_by(4)
        {
            let q: Value = serde_json::from_str(line).unwrap();
            let cid = q["context_id"].as_str().unwrap();
            let answers: Vec<&str> = q["answers"]
                .as_array()
                .unwrap()
                .iter()
                .filter_map(|a| a.as_str())
                .collect();
            let (sentences, vectors) =
                sentence_vectors.entry(cid.to_string()).or_insert_with(|| {
                    let text = &contexts[cid];
                    let s: Vec<String> = split_sentences(text, &[])
                        .into_iter()
                        .map(|s| s.claim)
                        .filter(|s| !s.trim().is_empty())
                        .collect();
                    let refs: Vec<&str> = s.iter().map(String::as_str).collect();
                    let v = model.embed_passages(&refs).unwrap();
                    (s, v)
                });
            if sentences.is_empty() {
                continue;
            }
            let question = q["question"].as_str().unwrap();
            let qv = model.embed_query(question).unwrap();
            let best = (0..sentences.len())
                .max_by(|&a, &b| dot(&qv, &vectors[a]).total_cmp(&dot(&qv, &vectors[b])))
                .unwrap();
            let qw = words(question);
            let lexical = (0..sentences.len())
                .max_by_key(|&i| {
                    (
                        words(&sentences[i]).intersection(&qw).count(),
                        usize::MAX - i,
                    )
                })
                .unwrap();
            let holds = |i: usize| answers.iter().any(|a| sentences[i].contains(a));
            n += 1;
            for (k, i) in [best, 0, lexical].into_iter().enumerate() {
                hits[k] += usize::from(holds(i));
            }
        }
        let pct = |h: usize| 100.0 * h as f64 / n.max(1) as f64;
        println!(
            "| {lang} | {n} | {:.1}% | {:.1}% | {:.1}% |",
            pct(hits[0]),
            pct(hits[1]),
            pct(hits[2])
        );
        all += n;
        for k in 0..3 {
            all_hits[k] += hits[k];
        }
    }
    let pct = |h: usize| 100.0 * h as f64 / all.max(1) as f64;
    println!(
        "| all | {all} | {:.1}% | {:.1}% | {:.1}% |",
        pct(all_hits[0]),
        pct(all_hits[1]),
        pct(all_hits[2])
    );
}
