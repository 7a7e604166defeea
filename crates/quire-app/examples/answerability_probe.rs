//! Probe for offline answerability: for each question of a set (`eval/answerability/*.jsonl`),
//! the passages `quire ask` would quote, and for each of the question's words
//! ([`quire_assist::evidence::probe_words`]) how far dropping it moves the question's vector
//! (`dq`, 1 − cosine), how much it brings the best passage closer (`dp`) and whether any note
//! holds it (`mentioned`). This is what calibrated `Calibration::unmatched_word_share`,
//! `unmatched_word_gain` and the `absent_word_*` pair (a sweep over the
//! printed lines, figures in docs/benchmarks.md). Prints one JSON line per question. Indexes are read from `INDEX_DIR/<vault>` (made by
//! `scripts/eval-answerability.py --index-dir`). Usage:
//! `cargo run --release -p quire-app --example answerability_probe SET INDEX_DIR`

#![allow(clippy::unwrap_used)] // an evaluation script stops at the first surprise

use std::path::PathBuf;
use std::sync::Arc;

use quire_app::ask::{AskRequest, ask_context};
use quire_assist::context::{ContextLimits, SourceReader};
use quire_assist::descent::Retriever;
use quire_embed::{Embedder, default_model_path, dot, load_local};
use quire_index::IndexLocation;
use quire_index::sync::ChunkKey;
use quire_search::{AnswerIndex, Searcher};
use serde_json::{Value, json};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let set = &args[0];
    let index_dir = PathBuf::from(&args[1]);
    let corpora = std::env::var_os("QUIRE_CORPORA")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("../shared/corpora"));
    let model: Arc<dyn Embedder> = Arc::from(load_local(&default_model_path()).unwrap());
    for line in std::fs::read_to_string(set).unwrap().lines() {
        if line.trim().is_empty() {
            continue;
        }
        let row: Value = serde_json::from_str(line).unwrap();
        let vault = row["vault"].as_str().unwrap();
        let question = row["question"].as_str().unwrap();
        let root = if vault == "sample" {
            PathBuf::from("examples/vault")
        } else {
            corpora.join("vaults").join(vault).join("vault")
        };
        let searcher = Searcher::open(&IndexLocation::new(index_dir.join(vault)))
            .unwrap()
            .with_embedder(model.clone());
        let reader = SourceReader::open(&root, &Default::default()).unwrap();
        let request = AskRequest {
            question,
            query: question,
            mode: None,
            limits: ContextLimits::default(),
            today: chrono::Local::now().date_naive(),
            retriever: Retriever::Hybrid,
            model: None,
            filter: Default::default(),
            expand: false,
        };
        let frozen = ask_context(&searcher, &reader, &request).unwrap();
        let keys: Vec<ChunkKey> = frozen
            .passages
            .iter()
            .map(|p| ChunkKey::new(&p.path, &p.chunk_id))
            .collect();
        let best = |text: &str| -> (f32, usize) {
            let c = searcher.cosines(text, &keys).unwrap();
            c.iter()
                .enumerate()
                .filter_map(|(i, c)| c.map(|c| (c, i)))
                .fold((f32::MIN, 0), |a, b| if b.0 > a.0 { b } else { a })
        };
        let (base, at) = best(question);
        let q = model.embed_query(question).unwrap();
        let mut words = Vec::new();
        for word in quire_assist::evidence::probe_words(question) {
            let without = quire_assist::evidence::without_word(question, &word);
            let v = model.embed_query(&without).unwrap();
            let (b, _) = best(&without);
            let mentioned = if quire_index::analyzer::content_terms(&word).is_empty() {
                None
            } else {
                AnswerIndex::mentions(&searcher, &word).unwrap()
            };
            words.push(json!({
                "word": word, "dq": 1.0 - dot(&q, &v), "dp": base - b, "mentioned": mentioned,
            }));
        }
        let candidates = quire_assist::lead::candidates(&frozen.passages);
        let texts: Vec<&str> = candidates.iter().map(|c| c.sentence.as_str()).collect();
        let sentences = searcher
            .sentence_scores(question, &texts)
            .unwrap()
            .unwrap_or_default();
        let best_sentence = sentences.iter().copied().fold(f32::MIN, f32::max);
        println!(
            "{}",
            json!({
                "vault": vault, "question": question, "answerable": row["answerable"],
                "best": base, "best_path": frozen.passages.get(at).map(|p| p.path.clone()),
                "relevant": row["relevant"], "best_sentence": best_sentence,
                "paths": frozen.passages.iter().map(|p| p.path.clone()).collect::<Vec<_>>(),
                "words": words,
            })
        );
    }
}
