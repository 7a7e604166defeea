//! EmbeddingGemma-300M against multilingual-e5-small in one run: embedding throughput (passages
//! of about 200 tokens, batch 32, chunks per second), a warm 12-word query's latency, and the
//! load time of each model file (a cold process pays it once). Medians of several runs, and each
//! figure as a ratio to e5-small's from the same process. Needs both models
//! (`scripts/fetch-model.sh` and `scripts/fetch-model.sh gemma`):
//!
//! ```sh
//! cargo bench -p quire-embed --bench gemma
//! ```

#![allow(clippy::unwrap_used)] // benches stop at the first surprise

use std::time::Instant;

use quire_embed::{default_e5_path, default_gemma_path, load_local};

fn median(mut xs: Vec<f64>) -> f64 {
    xs.sort_by(f64::total_cmp);
    xs[xs.len() / 2]
}

/// About 200 tokens of varied English prose.
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
        "garden",
        "tomato",
        "recurring",
        "task",
        "deadline",
        "meeting",
        "project",
        "review",
        "weekly",
    ];
    (0..150)
        .map(|j| words[(i * 7 + j * 13 + j / 5) % words.len()])
        .collect::<Vec<_>>()
        .join(" ")
}

struct Figures {
    load_s: f64,
    chunks_per_s: f64,
    query_ms: f64,
}

fn measure(path: &std::path::Path, texts: &[String]) -> Figures {
    let load = Instant::now();
    let model = load_local(path).unwrap();
    let load_s = load.elapsed().as_secs_f64();
    let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
    model.embed_passages(&refs[..4]).unwrap(); // warm up
    let rates: Vec<f64> = (0..3)
        .map(|_| {
            let t = Instant::now();
            model.embed_passages(&refs).unwrap();
            refs.len() as f64 / t.elapsed().as_secs_f64()
        })
        .collect();
    let query = "how often should I feed the sourdough starter in a warm kitchen";
    let times: Vec<f64> = (0..21)
        .map(|_| {
            let t = Instant::now();
            std::hint::black_box(model.embed_query(query).unwrap());
            t.elapsed().as_secs_f64() * 1000.0
        })
        .collect();
    Figures {
        load_s,
        chunks_per_s: median(rates),
        query_ms: median(times),
    }
}

fn main() {
    let (e5, gemma) = (default_e5_path(), default_gemma_path());
    assert!(e5.exists() && gemma.exists(), "fetch both models first");
    let texts: Vec<String> = (0..32).map(passage).collect();
    println!(
        "32 passages of 150 words; embedding threads {}",
        quire_embed::embed_threads()
    );
    let a = measure(&e5, &texts);
    let b = measure(&gemma, &texts);
    println!("| | e5-small (q4) | EmbeddingGemma (q8) | ratio |");
    println!("|---|---|---|---|");
    println!(
        "| chunks per second (batch 32) | {:.1} | {:.1} | {:.2} |",
        a.chunks_per_s,
        b.chunks_per_s,
        b.chunks_per_s / a.chunks_per_s
    );
    println!(
        "| warm 12-word query, ms (median of 21) | {:.1} | {:.1} | {:.2} |",
        a.query_ms,
        b.query_ms,
        b.query_ms / a.query_ms
    );
    println!(
        "| model load, s | {:.3} | {:.3} | {:.2} |",
        a.load_s,
        b.load_s,
        b.load_s / a.load_s
    );
}
