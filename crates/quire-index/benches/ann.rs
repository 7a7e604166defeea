//! The approximate vector index against the exact scan, on synthetic clustered unit vectors
//! (384 dimensions, as the default model's): build time, query latency (p50, p99) of the exact
//! scan and of the graph search with exact rescoring from the store, recall@10, the process's
//! peak RSS (the exact scan's f32 matrix included) and its RSS after the graph's queries (the
//! matrix freed: the mapped graph and the store, what a search process holds). Sizes from
//! `QUIRE_ANN_BENCH_SIZES` (default `10000,50000,100000`); real vectors for recall from
//! `QUIRE_ANN_BENCH_VECTORS` (see [`real_vectors`]). `cargo bench -p quire-index --bench ann`.

#![allow(clippy::unwrap_used)] // benches stop at the first surprise

use std::time::Instant;

use quire_index::Store;
use quire_index::ann::{AnnBase, AnnSettings, refresh};
use quire_testkit::VectorRng;

const DIM: usize = 384;
const SPACE: &str = "bench";

fn percentile(mut xs: Vec<f64>, p: f64) -> f64 {
    xs.sort_by(f64::total_cmp);
    xs[((xs.len() - 1) as f64 * p).round() as usize]
}

/// A memory figure of this process from /proc (`VmHWM:` peak, `VmRSS:` now), in MB.
fn rss_mb(field: &str) -> f64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with(field))
                .and_then(|l| l.split_whitespace().nth(1)?.parse::<f64>().ok())
        })
        .map_or(0.0, |kb| kb / 1024.0)
}

/// Real vectors for the recall figure: `QUIRE_ANN_BENCH_VECTORS` names a file of little-endian
/// f32 rows of 384 (the corpus cache `quire eval` writes, e.g. SciFact's abstracts embedded by
/// e5); every 200th-part row is then also a query (its own nearest neighbour counts).
fn real_vectors() -> Option<Vec<f32>> {
    let path = std::env::var_os("QUIRE_ANN_BENCH_VECTORS")?;
    let bytes = std::fs::read(&path).unwrap();
    assert!(bytes.len().is_multiple_of(4 * DIM), "not rows of {DIM} f32");
    Some(
        bytes
            .chunks_exact(4)
            .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
            .collect(),
    )
}

fn main() {
    let real = real_vectors();
    let sizes: Vec<usize> = match &real {
        Some(rows) => vec![rows.len() / DIM],
        None => std::env::var("QUIRE_ANN_BENCH_SIZES")
            .unwrap_or_else(|_| "10000,50000,100000".into())
            .split(',')
            .filter_map(|s| s.trim().parse().ok())
            .collect(),
    };
    println!(
        "size\tbuild_s\texact_p50_ms\texact_p99_ms\tann_p50_ms\tann_p99_ms\tratio_p50\trecall@10\tfile_mb\tpeak_rss_mb\trss_after_ann_mb"
    );
    for n in sizes {
        let dir = tempfile::tempdir().unwrap();
        let mut store = Store::open(&dir.path().join("quire.sqlite")).unwrap();
        let mut rng = VectorRng(0x5eed ^ n as u64);
        let centres: Vec<Vec<f32>> = (0..(n / 50).max(50))
            .map(|_| rng.unit(DIM, None, 1.0))
            .collect();
        let mut matrix: Vec<f32> = Vec::with_capacity(n * DIM);
        for start in (0..n).step_by(10_000) {
            let rows: Vec<(String, Vec<f32>)> = (start..(start + 10_000).min(n))
                .map(|i| {
                    let v = match &real {
                        Some(rows) => rows[i * DIM..(i + 1) * DIM].to_vec(),
                        None => rng.unit(DIM, Some(&centres[i % centres.len()]), 0.12),
                    };
                    matrix.extend_from_slice(&v);
                    (format!("{:012x}{:052x}", i, 0), v)
                })
                .collect();
            store.put_embeddings(SPACE, &rows).unwrap();
        }
        // The exact scan first (its matrix is then freed, so the RSS read after the graph's
        // queries is the vector side of a search process: the mapped graph, the store).
        let queries: Vec<Vec<f32>> = (0..200)
            .map(|q| match &real {
                Some(_) => matrix[(q * n / 200) * DIM..(q * n / 200 + 1) * DIM].to_vec(),
                None => rng.unit(DIM, Some(&centres[(q * 7) % centres.len()]), 0.15),
            })
            .collect();
        let mut exact_ms = Vec::new();
        let truths: Vec<Vec<i64>> = queries
            .iter()
            .map(|query| {
                let t = Instant::now();
                let mut exact: Vec<(usize, f32)> = matrix
                    .chunks_exact(DIM)
                    .enumerate()
                    .map(|(i, row)| (i, quire_embed::dot(query, row)))
                    .collect();
                exact.select_nth_unstable_by(9, |a, b| b.1.total_cmp(&a.1));
                exact_ms.push(t.elapsed().as_secs_f64() * 1e3);
                exact[..10].iter().map(|(i, _)| *i as i64 + 1).collect()
            })
            .collect();
        drop(matrix);
        let settings = AnnSettings {
            min_rows: 1,
            max_delta: 0,
        };
        let started = Instant::now();
        refresh(dir.path(), &store, SPACE, DIM, &settings).unwrap();
        let build = started.elapsed().as_secs_f64();
        let file_mb: f64 = std::fs::read_dir(dir.path().join("ann"))
            .unwrap()
            .filter_map(Result::ok)
            .filter_map(|e| e.metadata().ok())
            .map(|m| m.len() as f64 / 1e6)
            .sum();
        let base = AnnBase::open(dir.path(), &store, SPACE, DIM)
            .unwrap()
            .unwrap();
        let (mut ann_ms, mut found) = (Vec::new(), 0usize);
        for (query, truth) in queries.iter().zip(&truths) {
            // As a search does it: 64 candidates, rescored from the store's f32 vectors.
            let t = Instant::now();
            let rowids: Vec<i64> = base
                .search(query, 64, i64::MAX)
                .unwrap()
                .into_iter()
                .map(|(r, _)| r)
                .collect();
            let mut rescored: Vec<(i64, f32)> = store
                .embeddings_by_rowid(SPACE, DIM, &rowids)
                .unwrap()
                .into_iter()
                .map(|(r, _, v)| (r, quire_embed::dot(query, &v)))
                .collect();
            rescored.sort_by(|a, b| b.1.total_cmp(&a.1));
            ann_ms.push(t.elapsed().as_secs_f64() * 1e3);
            found += rescored[..10]
                .iter()
                .filter(|(r, _)| truth.contains(r))
                .count();
        }
        let queries = queries.len();
        let (e50, a50) = (
            percentile(exact_ms.clone(), 0.5),
            percentile(ann_ms.clone(), 0.5),
        );
        println!(
            "{n}\t{build:.1}\t{e50:.2}\t{:.2}\t{a50:.2}\t{:.2}\t{:.2}\t{:.3}\t{file_mb:.0}\t{:.0}\t{:.0}",
            percentile(exact_ms, 0.99),
            percentile(ann_ms, 0.99),
            a50 / e50,
            found as f64 / (queries * 10) as f64,
            rss_mb("VmHWM:"),
            rss_mb("VmRSS:")
        );
    }
}
