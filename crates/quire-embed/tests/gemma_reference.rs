//! quire's EmbeddingGemma encoder (8-bit weights, int8 activations, the `QGEM1` file) against
//! reference vectors recorded once with sentence-transformers on CPU torch in f32
//! (`fixtures/gemma_reference.json`: 15 texts in 11 languages and 9 scripts, 3 to 1,992 tokens,
//! the query and document prompts): token ids exactly, vectors to cosine ≥ 0.999, a text alone
//! as in a batch. Needs the model (`scripts/fetch-model.sh gemma`, run by `scripts/test.sh`).

#![allow(clippy::unwrap_used)] // tests stop at the first surprise

use std::sync::OnceLock;

use quire_embed::{Embedder, GemmaModel, default_gemma_path, dot};
use serde_json::Value;

fn model() -> &'static GemmaModel {
    static MODEL: OnceLock<GemmaModel> = OnceLock::new();
    MODEL.get_or_init(|| {
        let path = default_gemma_path();
        assert!(
            path.exists(),
            "model missing at {}: run scripts/fetch-model.sh gemma",
            path.display()
        );
        GemmaModel::load(&path).expect("model loads")
    })
}

struct Case {
    name: String,
    input: String,
    ids: Vec<u32>,
    vector: Vec<f32>,
}

fn cases() -> Vec<Case> {
    let text = include_str!("fixtures/gemma_reference.json");
    let json: Value = serde_json::from_str(text).unwrap();
    json["cases"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| Case {
            name: c["name"].as_str().unwrap().to_string(),
            input: c["input"].as_str().unwrap().to_string(),
            ids: c["ids"]
                .as_array()
                .unwrap()
                .iter()
                .map(|v| v.as_u64().unwrap() as u32)
                .collect(),
            vector: c["vector"]
                .as_array()
                .unwrap()
                .iter()
                .map(|v| v.as_f64().unwrap() as f32)
                .collect(),
        })
        .collect()
}

#[test]
fn token_ids_match_the_reference_tokenizer() {
    let m = model();
    let all = cases();
    assert!(all.len() >= 12);
    for c in &all {
        assert_eq!(m.token_ids(&c.input).unwrap(), c.ids, "{}", c.name);
    }
    // Lengths from 3 tokens to past the sliding window (512) and close to the 2,048 limit.
    let lengths: Vec<usize> = all.iter().map(|c| c.ids.len()).collect();
    assert!(lengths.iter().any(|&n| n <= 3));
    assert!(lengths.iter().any(|&n| (600..1000).contains(&n)));
    assert!(lengths.iter().any(|&n| n > 1900));
}

#[test]
fn vectors_match_the_reference_alone_and_in_a_batch() {
    let m = model();
    let all = cases();
    let inputs: Vec<&str> = all.iter().map(|c| c.input.as_str()).collect();
    let batch = m.embed_inputs(&inputs).unwrap();
    let mut worst = (1.0f32, String::new());
    for (c, got) in all.iter().zip(&batch) {
        assert_eq!(got.len(), 768);
        let cos = dot(got, &c.vector);
        eprintln!("{:<20} {} tokens: cosine {cos:.5}", c.name, c.ids.len());
        if cos < worst.0 {
            worst = (cos, c.name.clone());
        }
        let alone = m.embed_inputs(&[c.input.as_str()]).unwrap();
        let same = dot(&alone[0], got);
        assert!(same > 0.99999, "{}: alone vs in a batch {same}", c.name);
    }
    assert!(worst.0 >= 0.999, "{}: cosine {}", worst.1, worst.0);
    // Which texts are near each other holds too: the most similar reference pair is the most
    // similar pair here.
    let best = |vs: &[&[f32]]| {
        let mut best = (0, 0, -1.0f32);
        for i in 0..vs.len() {
            for j in i + 1..vs.len() {
                let s = dot(vs[i], vs[j]);
                if s > best.2 {
                    best = (i, j, s);
                }
            }
        }
        (best.0, best.1)
    };
    let refs: Vec<&[f32]> = all.iter().map(|c| c.vector.as_slice()).collect();
    let ours: Vec<&[f32]> = batch.iter().map(Vec::as_slice).collect();
    assert_eq!(best(&refs), best(&ours));
}

#[test]
fn prompts_follow_the_model_card_and_cut_vectors_stay_unit_length() {
    let m = model();
    let space = m.space();
    assert_eq!(space.query_prefix, "task: search result | query: ");
    assert_eq!(space.dimension, 768);
    let q = m.embed_query("how do I feed a sourdough starter").unwrap();
    let by_hand = m
        .embed_inputs(&["task: search result | query: how do I feed a sourdough starter"])
        .unwrap();
    assert!(dot(&q, &by_hand[0]) > 0.99999);
    // A document's title goes into its prompt: the same text under another title differs.
    let docs = m
        .embed_documents(&[
            ("Sourdough", "Feed it twice a day."),
            ("Cat care", "Feed it twice a day."),
        ])
        .unwrap();
    let plain = m
        .embed_inputs(&["title: Sourdough | text: Feed it twice a day."])
        .unwrap();
    assert!(dot(&docs[0], &plain[0]) > 0.99999);
    assert!(dot(&docs[0], &docs[1]) < 0.999);
    let cut = GemmaModel::load_with(&default_gemma_path(), 256).unwrap();
    let short = cut
        .embed_query("how do I feed a sourdough starter")
        .unwrap();
    assert_eq!(short.len(), 256);
    assert!((dot(&short, &short) - 1.0).abs() < 1e-4);
    // The first 256 values point the same way as the full vector's first 256.
    let head_norm = q[..256].iter().map(|x| x * x).sum::<f32>().sqrt();
    assert!((dot(&short, &q[..256]) / head_norm - 1.0).abs() < 1e-4);
    assert!(GemmaModel::load_with(&default_gemma_path(), 300).is_err());
}

/// Every Markdown file under `dir`, recursively.
fn markdown_files(dir: &std::path::Path, out: &mut Vec<std::path::PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() {
            markdown_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "md") {
            out.push(p);
        }
    }
}

#[test]
fn own_tokenizer_gives_the_ids_of_the_tokenizers_crate() {
    let m = model();
    let reference = tokenizers::Tokenizer::from_bytes(m.tokenizer_json()).unwrap();
    let corpora = std::env::var_os("QUIRE_CORPORA")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| {
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/corpora")
        });
    let mut files = Vec::new();
    markdown_files(&corpora.join("vaults"), &mut files);
    assert!(
        files.len() > 400,
        "the shared vaults at {}",
        corpora.display()
    );
    let mut texts: Vec<String> = files
        .iter()
        .filter_map(|p| std::fs::read_to_string(p).ok())
        .collect();
    // XQuAD's paragraphs in its twelve languages and scripts.
    let mut languages = 0;
    for entry in std::fs::read_dir(corpora.join("ir/xquad"))
        .unwrap()
        .flatten()
    {
        let Ok(text) = std::fs::read_to_string(entry.path().join("corpus.jsonl")) else {
            continue;
        };
        languages += 1;
        for line in text.lines().take(40) {
            let doc: Value = serde_json::from_str(line).unwrap();
            texts.push(doc["text"].as_str().unwrap().to_string());
        }
    }
    assert_eq!(languages, 12);
    // Inputs that exercise the added tokens and the byte fallback.
    texts.extend(
        [
            "<bos>x<eos>  \t\t two  spaces\n\n\nthree newlines",
            "emoji 🦀🧪 and a rare script 𐌰𐌱𐌲 and a NUL \u{0} and U+FFFF \u{FFFF}",
            "▁▁▁ literal metaspaces ▁ and <unused5> <start_of_turn>user",
            "",
        ]
        .map(String::from),
    );
    let mut tokens = 0;
    for t in &texts {
        let want = reference
            .encode(t.as_str(), false)
            .unwrap()
            .get_ids()
            .to_vec();
        let got = m.token_ids(t).unwrap();
        assert_eq!(
            &got[1..got.len() - 1],
            want.as_slice(),
            "{:?}",
            &t[..t.len().min(200)]
        );
        tokens += want.len();
    }
    assert!(tokens > 300_000, "{tokens} tokens compared");
}
