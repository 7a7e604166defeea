//! Warm query latency at 10k and 100k chunks: BM25 (tantivy), exact vector top-k over the matrix,
//! and hybrid (both + RRF), with and without the query embedding by the local model. Prints p50
//! and p95 over repeated queries; the baseline in the same run is the query embedding alone, so
//! the figures can be read as "search cost on top of embedding the query".
//!
//! Run: `cargo bench -p quire-search --bench query` (after scripts/fetch-model.sh);
//! `QUIRE_BENCH_MODEL=DIR` measures another model (e.g. the MiniLM folder).

#![allow(clippy::unwrap_used)] // tests and benches stop at the first surprise

use std::time::{Duration, Instant};

use quire_embed::{default_model_path, load_local};
use quire_index::{Boosts, Filter, FullText, FullTextDoc};
use quire_search::fusion::{RRF_K, reciprocal_rank_fusion};
use quire_search::vectors::{VectorMatrix, top_k};

const WORDS: &[&str] = &[
    "sourdough",
    "starter",
    "flour",
    "hydration",
    "tempo",
    "interval",
    "marathon",
    "recovery",
    "oolong",
    "steep",
    "kyoto",
    "temple",
    "rust",
    "borrow",
    "lifetime",
    "trait",
    "garden",
    "compost",
    "review",
    "habit",
    "sleep",
    "deep",
    "work",
    "focus",
    "book",
    "chapter",
    "note",
    "link",
    "vault",
    "search",
    "question",
    "answer",
];

/// A small deterministic generator (no dependency needed for noise).
struct Lcg(u64);
impl Lcg {
    fn next(&mut self) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        self.0 >> 33
    }
    fn unit(&mut self) -> f32 {
        (self.next() % 2_000_001) as f32 / 1_000_000.0 - 1.0
    }
}

fn percentile(mut xs: Vec<Duration>, p: f64) -> Duration {
    xs.sort();
    xs[((xs.len() - 1) as f64 * p).round() as usize]
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

fn main() {
    // `QUIRE_BENCH_MODEL`: another model file or folder (default: the e5 file).
    let path = std::env::var_os("QUIRE_BENCH_MODEL")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(default_model_path);
    let model = load_local(&path).ok();
    let queries = [
        "how often should I feed the starter",
        "tempo run pace for a 10k",
        "oolong steeping temperature",
        "borrow checker lifetimes",
        "temples to visit in kyoto",
        "weekly review habit",
        "compost in the garden",
        "deep work and focus",
    ];
    let mut embed_times = Vec::new();
    let query_vectors: Vec<Vec<f32>> = match &model {
        Some(m) => queries
            .iter()
            .map(|q| {
                let start = Instant::now();
                let v = m.embed_query(q).unwrap();
                embed_times.push(start.elapsed());
                v
            })
            .collect(),
        None => {
            println!(
                "(no model: vector queries use random vectors and the embedding cost is not measured)"
            );
            let mut rng = Lcg(7);
            queries
                .iter()
                .map(|_| (0..384).map(|_| rng.unit()).collect())
                .collect()
        }
    };
    if !embed_times.is_empty() {
        // Warm again: the first call pays one-time costs.
        embed_times.clear();
        for _ in 0..3 {
            for q in &queries {
                let start = Instant::now();
                std::hint::black_box(model.as_ref().unwrap().embed_query(q).unwrap());
                embed_times.push(start.elapsed());
            }
        }
        println!(
            "query embedding (baseline): p50 {:.1} ms  p95 {:.1} ms",
            ms(percentile(embed_times.clone(), 0.5)),
            ms(percentile(embed_times.clone(), 0.95))
        );
    }
    let embed_p50 = if embed_times.is_empty() {
        Duration::ZERO
    } else {
        percentile(embed_times.clone(), 0.5)
    };

    for n in [10_000usize, 100_000] {
        let mut rng = Lcg(42);
        let fulltext = FullText::in_memory().unwrap();
        let mut writer = fulltext.writer().unwrap();
        let mut keys = Vec::with_capacity(n);
        let mut data = Vec::with_capacity(n * 384);
        for i in 0..n {
            let body: Vec<&str> = (0..60)
                .map(|_| WORDS[(rng.next() as usize) % WORDS.len()])
                .collect();
            writer
                .add(&FullTextDoc {
                    key: format!("n{}.md\0{i}", i / 4),
                    path: format!("n{}.md", i / 4),
                    title: format!("note {} {}", i / 4, WORDS[i % WORDS.len()]),
                    headings: WORDS[(i / 3) % WORDS.len()].to_string(),
                    body: body.join(" "),
                    ..Default::default()
                })
                .unwrap();
            keys.push((format!("n{}.md", i / 4), i.to_string()));
            let v: Vec<f32> = (0..384).map(|_| rng.unit()).collect();
            let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
            data.extend(v.into_iter().map(|x| x / norm));
        }
        writer.commit(1).unwrap();
        fulltext.reload().unwrap();
        let matrix = VectorMatrix {
            keys,
            data,
            dimension: 384,
        };
        let (mut bm25, mut vector, mut hybrid) = (Vec::new(), Vec::new(), Vec::new());
        for _ in 0..5 {
            for (q, qv) in queries.iter().zip(&query_vectors) {
                let start = Instant::now();
                let lexical: Vec<String> = fulltext
                    .search(q, 100, &Filter::default(), Boosts::default())
                    .unwrap()
                    .into_iter()
                    .map(|h| h.key)
                    .collect();
                bm25.push(start.elapsed());
                let start = Instant::now();
                let semantic: Vec<String> = top_k(matrix.scores(qv), 100)
                    .into_iter()
                    .map(|(i, _)| format!("{}\0{}", matrix.keys[i].0, matrix.keys[i].1))
                    .collect();
                vector.push(start.elapsed());
                let start = Instant::now();
                std::hint::black_box(reciprocal_rank_fusion(
                    &[(&lexical, 1.0), (&semantic, 1.0)],
                    RRF_K,
                ));
                let fuse = start.elapsed();
                hybrid.push(
                    bm25.last().copied().unwrap_or_default()
                        + vector.last().copied().unwrap_or_default()
                        + fuse,
                );
            }
        }
        let line = |name: &str, xs: &Vec<Duration>, with_embedding: bool| {
            let extra = if with_embedding {
                embed_p50
            } else {
                Duration::ZERO
            };
            println!(
                "{n:>7} chunks  {name:<28} p50 {:>7.2} ms  p95 {:>7.2} ms",
                ms(percentile(xs.clone(), 0.5) + extra),
                ms(percentile(xs.clone(), 0.95) + extra)
            );
        };
        line("bm25", &bm25, false);
        line("vector (search only)", &vector, false);
        line("vector incl. query embedding", &vector, true);
        line("hybrid incl. query embedding", &hybrid, true);
    }
}
