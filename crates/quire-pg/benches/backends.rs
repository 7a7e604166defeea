//! The two index backends on the same data: a generated vault (`scripts/bench/gen_large_vault.py`,
//! `QUIRE_PG_BENCH_NOTES` notes, default 19,000 ≈ 10⁵ chunks) indexed locally, then published to
//! a real PostgreSQL 18 + pgvector (`quire_testkit::pg`); then the same queries on both.
//!
//! Vectors are synthetic (a deterministic embedder: clustered unit vectors of 384 values, seeded
//! by the text's hash), so the figures are about storage and ranking cost, not quality; embedding
//! 10⁵ chunks with the real model would take about an hour here. Printed: local sync and publish
//! times (cold, no-op, one edited note), database size, query p50/p99 per mode on each backend
//! with the ratio Postgres/local, recall@10 of pgvector's HNSW against the local exact scan, and
//! throughput and latency with 1 and 10 concurrent readers. `cargo bench -p quire-pg --bench
//! backends`.

#![allow(clippy::unwrap_used)] // benches stop at the first surprise

use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

use quire_embed::{EmbedError, Embedder, EmbeddingSpace};
use quire_index::{IndexLocation, Store, SyncOptions, sync};
use quire_pg::{PgSearcher, PublishOptions};
use quire_search::{Mode, SearchRequest, SearchResults, Searcher};
use quire_testkit::VectorRng;

fn percentile(mut xs: Vec<f64>, p: f64) -> f64 {
    xs.sort_by(f64::total_cmp);
    xs[((xs.len() - 1) as f64 * p).round() as usize]
}

const DIM: usize = 384;
const CLUSTERS: u64 = 600;

/// Clustered unit vectors seeded by the text: the same text always gets the same vector, texts
/// fall into 600 clusters.
struct Synthetic {
    centres: Vec<Vec<f32>>,
}

impl Synthetic {
    fn new() -> Synthetic {
        let mut rng = VectorRng(7);
        Synthetic {
            centres: (0..CLUSTERS).map(|_| rng.unit(DIM, None, 1.0)).collect(),
        }
    }
    fn vector(&self, text: &str) -> Vec<f32> {
        let h = blake3::hash(text.as_bytes());
        let seed = u64::from_le_bytes(h.as_bytes()[..8].try_into().unwrap()) | 1;
        let centre = &self.centres[(seed % CLUSTERS) as usize];
        VectorRng(seed).unit(DIM, Some(centre), 0.15)
    }
}

impl Embedder for Synthetic {
    fn space(&self) -> EmbeddingSpace {
        EmbeddingSpace {
            provider: "bench-synthetic".into(),
            model: "clustered-384".into(),
            dimension: DIM,
            query_prefix: String::new(),
            passage_prefix: String::new(),
        }
    }
    fn embed_passages(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        Ok(texts.iter().map(|t| self.vector(t)).collect())
    }
    fn embed_query(&self, text: &str) -> Result<Vec<f32>, EmbedError> {
        Ok(self.vector(text))
    }
}

fn request(query: &str, mode: Mode) -> SearchRequest {
    SearchRequest {
        mode,
        k: 10,
        ..SearchRequest::new(query)
    }
}

fn secs(t: Instant) -> f64 {
    t.elapsed().as_secs_f64()
}

/// The time of `run` on each of `queries`, in ms.
fn timed(queries: &[String], run: impl Fn(&str) -> SearchResults) -> Vec<f64> {
    queries
        .iter()
        .map(|q| {
            let t = Instant::now();
            std::hint::black_box(run(q));
            secs(t) * 1000.0
        })
        .collect()
}

/// p50 and p99 in ms of `run` over `queries`.
fn latencies(queries: &[String], run: impl Fn(&str) -> SearchResults) -> (f64, f64) {
    let ms = timed(queries, run);
    (percentile(ms.clone(), 0.5), percentile(ms, 0.99))
}

fn main() {
    let notes: usize = std::env::var("QUIRE_PG_BENCH_NOTES")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(19_000);
    let dir = tempfile::tempdir().unwrap();
    let vault = dir.path().join("vault");
    let script =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scripts/bench/gen_large_vault.py");
    let status = std::process::Command::new("python3")
        .arg(&script)
        .arg(&vault)
        .arg(notes.to_string())
        .status()
        .unwrap();
    assert!(status.success());
    let location = IndexLocation::new(dir.path().join("index"));
    let model: Arc<dyn Embedder> = Arc::new(Synthetic::new());
    let options = SyncOptions {
        embedder: Some(model.clone()),
        ..SyncOptions::default()
    };
    let t = Instant::now();
    let stats = sync(&vault, &location, &options, &()).unwrap();
    let local_index = secs(t);
    println!(
        "vault: {} notes, {} chunks; local index (BM25 + synthetic vectors, exact scan below 50,000 rows, HNSW above): {local_index:.1} s",
        stats.notes_indexed, stats.chunks_total
    );

    let url = quire_testkit::pg::database();
    let store = Store::open(&location.store_path()).unwrap();
    let mut client = quire_pg::connect(&url).unwrap();
    let t = Instant::now();
    let published = quire_pg::publish(&store, &mut client, &PublishOptions::default()).unwrap();
    println!(
        "publish to PostgreSQL, cold: {:.1} s ({} chunks, {} vectors; rows in batches, then the GIN and two HNSW indexes built)",
        secs(t),
        published.chunks_written,
        published.vectors_written
    );
    let t = Instant::now();
    quire_pg::publish(&store, &mut client, &PublishOptions::default()).unwrap();
    println!("publish, nothing changed: {:.2} s", secs(t));
    let size: i64 = client
        .query_one("SELECT pg_database_size(current_database())", &[])
        .unwrap()
        .get(0);
    println!(
        "database size: {:.0} MB; local index directory: {:.0} MB",
        size as f64 / 1e6,
        dir_mb(&location.dir)
    );

    // A one-note edit: local sync, then publish.
    let edited = store.notes().unwrap()[notes / 2].path.clone();
    drop(store);
    let file = vault.join(&edited);
    let mut text = std::fs::read_to_string(&file).unwrap();
    text.push_str("\n\nAn added line with a zyzzyvaword.\n");
    std::fs::write(&file, text).unwrap();
    let t = Instant::now();
    sync(&vault, &location, &options, &()).unwrap();
    let edit_sync = secs(t);
    let store = Store::open(&location.store_path()).unwrap();
    let t = Instant::now();
    let p = quire_pg::publish(&store, &mut client, &PublishOptions::default()).unwrap();
    println!(
        "one edited note: local sync {edit_sync:.2} s, then publish {:.2} s ({} updated)",
        secs(t),
        p.updated
    );

    // The same queries on both backends: 200 note titles (made-up words BM25 finds).
    let all = store.notes().unwrap();
    let queries: Vec<String> = (0..200)
        .map(|i| all[(i * 7919) % all.len()].title.clone())
        .collect();
    let local = Searcher::open(&location)
        .unwrap()
        .with_embedder(model.clone());
    let pg = PgSearcher::connect(&url)
        .unwrap()
        .with_embedder(model.clone());
    // Warm both (the local matrix or graph is opened on first use).
    local.search(&request(&queries[0], Mode::Hybrid)).unwrap();
    pg.search(&request(&queries[0], Mode::Hybrid)).unwrap();
    println!("queries: 200, k = 10, one warm searcher each (ms)");
    println!("mode    local p50  local p99  pg p50  pg p99  ratio p50 (pg/local)");
    for mode in [Mode::Bm25, Mode::Vector, Mode::Hybrid] {
        let (lp50, lp99) = latencies(&queries, |q| local.search(&request(q, mode)).unwrap());
        let (pp50, pp99) = latencies(&queries, |q| pg.search(&request(q, mode)).unwrap());
        println!(
            "{mode:<7} {lp50:>9.2}  {lp99:>9.2}  {pp50:>6.2}  {pp99:>6.2}  {:>8.2}",
            pp50 / lp50
        );
    }
    // Recall@10 of pgvector's HNSW against the local ranking (exact below 50,000 vectors).
    let mut hits = 0;
    let mut total = 0;
    for q in &queries {
        let a = local.search(&request(q, Mode::Vector)).unwrap();
        let b = pg.search(&request(q, Mode::Vector)).unwrap();
        let want: Vec<&str> = a.results.iter().map(|n| n.path.as_str()).collect();
        total += want.len();
        hits += b
            .results
            .iter()
            .filter(|n| want.contains(&n.path.as_str()))
            .count();
    }
    println!(
        "vector notes@10 of pgvector HNSW vs the local ranking: {:.3}",
        hits as f64 / total as f64
    );

    // Concurrent readers: each its own connection (Postgres) or searcher (local).
    for readers in [1usize, 10] {
        for backend in ["local", "postgres"] {
            let per_reader = 400 / readers;
            let t = Instant::now();
            let handles: Vec<_> = (0..readers)
                .map(|r| {
                    let url = url.clone();
                    let location = location.clone();
                    let model = model.clone();
                    let queries = queries.clone();
                    let backend = backend.to_string();
                    std::thread::spawn(move || {
                        let run: Box<dyn Fn(&str) -> SearchResults> = if backend == "local" {
                            let s = Searcher::open(&location).unwrap().with_embedder(model);
                            Box::new(move |q| s.search(&request(q, Mode::Hybrid)).unwrap())
                        } else {
                            let s = PgSearcher::connect(&url).unwrap().with_embedder(model);
                            Box::new(move |q| s.search(&request(q, Mode::Hybrid)).unwrap())
                        };
                        let mine: Vec<String> = (0..per_reader)
                            .map(|i| queries[(r * 31 + i) % queries.len()].clone())
                            .collect();
                        timed(&mine, run)
                    })
                })
                .collect();
            let ms: Vec<f64> = handles
                .into_iter()
                .flat_map(|h| h.join().unwrap())
                .collect();
            let wall = secs(t);
            println!(
                "{readers:>2} reader(s), {backend:<8}: {:>4} hybrid queries in {wall:.1} s = {:.0} q/s, p50 {:.1} ms, p99 {:.1} ms (first query of each reader included)",
                ms.len(),
                ms.len() as f64 / wall,
                percentile(ms.clone(), 0.5),
                percentile(ms, 0.99)
            );
        }
    }
}

fn dir_mb(dir: &Path) -> f64 {
    std::fs::read_dir(dir)
        .map(|entries| {
            entries
                .flatten()
                .map(|e| match e.metadata() {
                    Ok(m) if m.is_dir() => dir_mb(&e.path()) * 1e6,
                    Ok(m) => m.len() as f64,
                    Err(_) => 0.0,
                })
                .sum::<f64>()
        })
        .unwrap_or(0.0)
        / 1e6
}
