//! What fewer bits per weight would cost EmbeddingGemma: the reference texts of
//! `tests/fixtures/gemma_reference.json` (sentence-transformers, f32 on CPU torch) embedded with
//! the 8-bit weights of the `QGEM1` file and with them rounded again to 6 and 4 bits
//! ([`GemmaModel::load_with_bits`]), as the cosine with the reference: worst and mean.
//! Usage: `cargo run --release -p quire-embed --example gemma_precision [MODEL]`

#![allow(clippy::unwrap_used)] // a measuring script stops at the first surprise

use quire_embed::{GemmaModel, default_gemma_path, dot};
use serde_json::Value;

fn main() {
    let path = std::env::args()
        .nth(1)
        .map(std::path::PathBuf::from)
        .unwrap_or_else(default_gemma_path);
    let json: Value =
        serde_json::from_str(include_str!("../tests/fixtures/gemma_reference.json")).unwrap();
    let cases = json["cases"].as_array().unwrap();
    let inputs: Vec<&str> = cases.iter().map(|c| c["input"].as_str().unwrap()).collect();
    let reference: Vec<Vec<f32>> = cases
        .iter()
        .map(|c| {
            c["vector"]
                .as_array()
                .unwrap()
                .iter()
                .map(|v| v.as_f64().unwrap() as f32)
                .collect()
        })
        .collect();
    println!("| weights | worst cosine | mean cosine | embedding time, s |");
    println!("|---|---|---|---|");
    for bits in [8, 6, 4] {
        let model = GemmaModel::load_with_bits(&path, 768, bits).unwrap();
        let started = std::time::Instant::now();
        let got = model.embed_inputs(&inputs).unwrap();
        let took = started.elapsed().as_secs_f64();
        let cosines: Vec<f32> = got.iter().zip(&reference).map(|(a, b)| dot(a, b)).collect();
        let worst = cosines.iter().copied().fold(f32::MAX, f32::min);
        let mean = cosines.iter().sum::<f32>() / cosines.len() as f32;
        println!("| {bits}-bit | {worst:.4} | {mean:.4} | {took:.2} |");
    }
}
