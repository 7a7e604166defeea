//! Vector search through the approximate index (`quire_index::ann`) when the index keeps one: the
//! graph's candidates plus the rows added after its build (scanned exactly), all bounded by the
//! last embedding row the reader's store snapshot sees, rescored exactly with the stored f32
//! vectors, then mapped to the chunks of the reader's generation. Nothing here loads the whole
//! vector matrix: a large index is searched with the graph (memory-mapped) and a few hundred row
//! lookups.

use std::collections::HashSet;
use std::sync::Mutex;

use quire_index::sync::ChunkKey;
use quire_index::{AnnBase, Store};

use crate::SearchError;
use crate::vectors::{VectorMatrix, top_k};

/// An approximate index opened by a searcher, with what it does not cover.
pub(crate) struct AnnView {
    /// The graph; searches take turns (usearch keeps a fixed number of search contexts).
    base: Mutex<AnnBase>,
    rows: usize,
    /// The last embedding row the searcher's snapshot sees.
    up_to: i64,
    /// Rows after the build, up to `up_to`, by rowid.
    delta_rowids: Vec<i64>,
    delta: Vec<f32>,
    space_id: String,
    dimension: usize,
}

impl AnnView {
    /// Opens the newest build of `space_id` for `store`'s snapshot; `None` when the index keeps
    /// none (a small vault: the exact scan serves).
    pub(crate) fn open(
        index_dir: &std::path::Path,
        store: &Store,
        space_id: &str,
        dimension: usize,
    ) -> Result<Option<AnnView>, SearchError> {
        let Some((up_to, _)) = store.last_embedding(space_id)? else {
            return Ok(None);
        };
        let Some(base) = AnnBase::open(index_dir, store, space_id, dimension)? else {
            return Ok(None);
        };
        let mut delta_rowids = Vec::new();
        let mut delta = Vec::new();
        if up_to > base.last_rowid {
            store.each_embedding(space_id, dimension, (base.last_rowid, up_to), |rowid, v| {
                delta_rowids.push(rowid);
                delta.extend_from_slice(v);
            })?;
        }
        Ok(Some(AnnView {
            rows: base.rows,
            base: Mutex::new(base),
            up_to,
            delta_rowids,
            delta,
            space_id: space_id.to_string(),
            dimension,
        }))
    }

    /// The `want` chunks nearest to `query` (a unit vector) among the notes `allowed` (all when
    /// `None`), best first, with their exact cosines.
    pub(crate) fn ranking(
        &self,
        store: &Store,
        query: &[f32],
        want: usize,
        allowed: Option<&HashSet<String>>,
    ) -> Result<Vec<(ChunkKey, f32)>, SearchError> {
        if let Some(allowed) = allowed {
            // A filter names the notes: their vectors are read and scanned exactly (a graph
            // search would have to walk past every vector the filter refuses).
            let mut paths: Vec<&str> = allowed.iter().map(String::as_str).collect();
            paths.sort_unstable();
            let (keys, data) = store.vectors_of_notes(&self.space_id, self.dimension, &paths)?;
            let matrix = VectorMatrix {
                keys,
                data,
                dimension: self.dimension,
            };
            return Ok(top_k(matrix.scores(query), want)
                .into_iter()
                .map(|(i, s)| (ChunkKey::new(&matrix.keys[i].0, &matrix.keys[i].1), s))
                .collect());
        }
        let available = self.rows + self.delta_rowids.len();
        // Candidates are vectors; several chunks may share one (the same text), and some belong
        // to no chunk of this generation (text since removed): ask for more until `want`
        // chunks are found or every vector was a candidate.
        let mut count = (want * 2).max(64);
        loop {
            let mut candidates: Vec<i64> = {
                let base = self.base.lock().unwrap_or_else(|e| e.into_inner());
                base.search(query, count, self.up_to)?
                    .into_iter()
                    .map(|(rowid, _)| rowid)
                    .collect()
            };
            let scores = self
                .delta
                .chunks_exact(self.dimension)
                .enumerate()
                .map(|(i, row)| (i, quire_embed::dot(query, row)));
            candidates.extend(
                top_k(scores, count)
                    .into_iter()
                    .map(|(i, _)| self.delta_rowids[i]),
            );
            let mut scored: Vec<(String, f32)> = store
                .embeddings_by_rowid(&self.space_id, self.dimension, &candidates)?
                .into_iter()
                .map(|(_, hash, v)| (hash, quire_embed::dot(query, &v)))
                .collect();
            scored.sort_by(|a, b| b.1.total_cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
            let mut out: Vec<(ChunkKey, f32)> = Vec::new();
            for (hash, score) in &scored {
                for (path, id) in store.chunks_with_hash(hash)? {
                    out.push((ChunkKey::new(&path, &id), *score));
                }
                if out.len() >= want {
                    break;
                }
            }
            if out.len() >= want || count >= available {
                out.truncate(want);
                return Ok(out);
            }
            count = count.saturating_mul(4);
        }
    }

    /// The stored vectors of `keys` (`None` for a chunk with none), read from the store.
    pub(crate) fn vectors_of(
        &self,
        store: &Store,
        keys: &[ChunkKey],
    ) -> Result<Vec<Option<Vec<f32>>>, SearchError> {
        keys.iter()
            .map(|k| Ok(store.chunk_vector(&self.space_id, self.dimension, &k.path, &k.id)?))
            .collect()
    }
}
