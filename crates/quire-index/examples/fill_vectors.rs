//! Fills an index's store with synthetic vectors for every chunk that has none in a space, so
//! that a vault too large to embed here (a million chunks would take hours on 2 cores) can be
//! searched end to end in hybrid mode: BM25 over the real text, the query embedded by the real
//! model, the approximate index and exact rescoring over these vectors. Only for benchmarks
//! (`scripts/bench/million.sh`): the vectors mean nothing, so rankings are not judged, only timed.
//!
//! Vectors are unit length and clustered like real ones (the chunks of a folder near a shared
//! centre), deterministic for a given index.
//!
//! Usage: `cargo run --release -p quire-index --example fill_vectors -- INDEX_DIR [MODEL]`
//! (the model file or folder whose embedding space the vectors are stored under; default the
//! default model). Run it when nothing else writes the index; then `quire index` with that model
//! finds nothing left to embed and builds the approximate index as it would after embedding.

#![allow(clippy::unwrap_used)] // a benchmark tool stops at the first surprise

use std::collections::HashMap;
use std::time::Instant;

use quire_index::Store;
use quire_testkit::VectorRng;

/// Clusters the vectors are drawn around (folders share them by hash).
const CENTRES: u64 = 4_096;

fn main() {
    let mut args = std::env::args_os().skip(1);
    let index_dir =
        std::path::PathBuf::from(args.next().expect("usage: fill_vectors INDEX_DIR [MODEL]"));
    let model = args
        .next()
        .map(std::path::PathBuf::from)
        .unwrap_or_else(quire_embed::default_model_path);
    let space = quire_embed::load_local(&model).unwrap().space();
    let (space_id, dim) = (space.id(), space.dimension);
    let started = Instant::now();
    let mut store = Store::open(&index_dir.join("quire.sqlite")).unwrap();
    let have = store.embedded_hashes(&space_id).unwrap();
    let mut centres: HashMap<u64, Vec<f32>> = HashMap::new();
    let mut rng = VectorRng(0x005e_ed0f_ba5e);
    let mut seen = std::collections::HashSet::new();
    let mut batch: Vec<(String, Vec<f32>)> = Vec::new();
    let mut written = 0usize;
    for (note, _, hash) in store.chunk_hashes().unwrap() {
        if have.contains(&hash) || !seen.insert(hash.clone()) {
            continue;
        }
        let folder = note.rsplit_once('/').map_or("", |(f, _)| f);
        let key = u64::from_le_bytes(
            blake3::hash(folder.as_bytes()).as_bytes()[..8]
                .try_into()
                .unwrap(),
        ) % CENTRES;
        let centre = centres
            .entry(key)
            .or_insert_with(|| {
                VectorRng(key.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1).unit(dim, None, 1.0)
            })
            .clone();
        batch.push((hash, rng.unit(dim, Some(&centre), 0.12)));
        if batch.len() == 20_000 {
            store.put_embeddings(&space_id, &batch).unwrap();
            written += batch.len();
            batch.clear();
            eprintln!("fill_vectors: {written} vectors");
        }
    }
    written += batch.len();
    store.put_embeddings(&space_id, &batch).unwrap();
    println!(
        "fill_vectors: {written} synthetic vectors of {dim} in space {space_id} ({}) in {:.1} s",
        space.model,
        started.elapsed().as_secs_f64()
    );
}
