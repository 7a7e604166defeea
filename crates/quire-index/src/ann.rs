//! Approximate nearest neighbours for large indexes: an HNSW graph (usearch, chosen because it is
//! maintained, single-file, memory-maps a saved index and quantizes to int8 itself) over the
//! vectors of one embedding space, quantized to int8, keyed by each vector's rowid in the store's
//! `embeddings` table. Searches rescore its candidates exactly with the stored f32 vectors.
//!
//! **The file.** A build is one immutable file, `<index>/ann/<space key>-<last rowid>-<rows>-<hash
//! prefix>.usearch`: the space it holds, the last embedding row it covers, how many rows, and the
//! first characters of that last row's content hash (checked against the store on open, so a file
//! that does not belong to this store is never used). It is written beside its final name, synced
//! and renamed: a crash at any point leaves either the previous build or the new one, never part
//! of one; leftovers are removed by the next build.
//!
//! **Consistency.** Embedding rows are only ever added (they are a cache keyed by content hash),
//! so a build stays true for the rows it covers. A reader uses the newest build and scans the rows
//! after it exactly (the *delta*), both bounded by the last rowid its store snapshot sees: a search
//! never sees vectors of a later sync, and candidates that belong to no chunk of the reader's
//! generation are dropped when keys are mapped to chunks. The writer ([`refresh`], at the end of a
//! sync) extends the build once the delta passes [`AnnSettings::max_delta`] rows, and removes
//! every build when the space falls under [`AnnSettings::min_rows`].

use std::path::{Path, PathBuf};

use usearch::{Index, IndexOptions, MetricKind, ScalarKind};

use crate::error::IndexError;
use crate::store::Store;

/// When and how the approximate index is built.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AnnSettings {
    /// Below this many vectors in a space no build is kept: the exact scan is fast enough and
    /// exact (see docs/index.md's measurements for where the two cross).
    pub min_rows: usize,
    /// Vectors added since the last build that readers scan exactly before a sync extends it.
    pub max_delta: usize,
}

impl Default for AnnSettings {
    fn default() -> Self {
        AnnSettings {
            min_rows: DEFAULT_MIN_ROWS,
            max_delta: DEFAULT_MAX_DELTA,
        }
    }
}

impl AnnSettings {
    /// The defaults, with `QUIRE_ANN_MIN_ROWS` and `QUIRE_ANN_MAX_DELTA` read from the
    /// environment when set to a number (tests and benchmarks use them).
    pub fn from_env() -> AnnSettings {
        let number = |key: &str, default: usize| {
            std::env::var(key)
                .ok()
                .and_then(|v| v.trim().parse().ok())
                .unwrap_or(default)
        };
        AnnSettings {
            min_rows: number("QUIRE_ANN_MIN_ROWS", DEFAULT_MIN_ROWS),
            max_delta: number("QUIRE_ANN_MAX_DELTA", DEFAULT_MAX_DELTA),
        }
    }
}

/// The default [`AnnSettings::min_rows`].
pub const DEFAULT_MIN_ROWS: usize = 50_000;
/// The default [`AnnSettings::max_delta`].
pub const DEFAULT_MAX_DELTA: usize = 4_000;

/// Graph degree: 16 links a node, usearch's own default, a good recall/memory balance at 384
/// dimensions.
const CONNECTIVITY: usize = 16;
/// Candidates kept while inserting (higher: a better graph, a slower build).
const EXPANSION_ADD: usize = 128;
/// Candidates kept while searching, at least (a search asks for more when it wants more).
const EXPANSION_SEARCH: usize = 96;

/// What a sync did to the approximate index.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(tag = "action", rename_all = "snake_case")]
pub enum AnnRefresh {
    /// The space has fewer vectors than the threshold: searches scan exactly.
    Exact {
        /// The space's vectors.
        rows: usize,
    },
    /// The last build covers all but `delta` vectors, which readers scan exactly.
    Kept {
        /// Vectors in the build.
        rows: usize,
        /// Vectors after it.
        delta: usize,
    },
    /// A build was written (from scratch, or the last one extended).
    Built {
        /// Vectors in the new build.
        rows: usize,
        /// Vectors added to the graph by this build.
        added: usize,
        /// Milliseconds it took.
        millis: u128,
    },
    /// The build failed (searches scan exactly until a later sync builds it).
    Failed {
        /// Why.
        error: String,
    },
}

/// One approximate index build, opened for searching (memory-mapped, read-only).
pub struct AnnBase {
    index: Index,
    /// The last embedding row it covers.
    pub last_rowid: i64,
    /// The vectors it holds.
    pub rows: usize,
}

impl std::fmt::Debug for AnnBase {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AnnBase")
            .field("last_rowid", &self.last_rowid)
            .field("rows", &self.rows)
            .finish()
    }
}

fn ann_err(what: &str, e: impl std::fmt::Display) -> IndexError {
    IndexError::Ann(format!("{what}: {e}"))
}

/// The directory of an index's approximate builds.
pub fn ann_dir(index_dir: &Path) -> PathBuf {
    index_dir.join("ann")
}

/// The short key of a space in file names (the space id itself may hold any character).
fn space_key(space_id: &str) -> String {
    blake3::hash(space_id.as_bytes()).to_hex()[..16].to_string()
}

/// A build's name, parsed.
#[derive(Debug, Clone, PartialEq, Eq)]
struct BuildName {
    last_rowid: i64,
    rows: usize,
    /// The file's length: a file of another length (torn, truncated) is never memory-mapped.
    bytes: u64,
    hash_prefix: String,
}

const HASH_PREFIX: usize = 12;

impl BuildName {
    fn file_name(&self, space: &str) -> String {
        format!(
            "{}-{}-{}-{}-{}.usearch",
            space_key(space),
            self.last_rowid,
            self.rows,
            self.bytes,
            self.hash_prefix
        )
    }

    fn parse(name: &str, space: &str) -> Option<BuildName> {
        let rest = name
            .strip_prefix(&space_key(space))?
            .strip_prefix('-')?
            .strip_suffix(".usearch")?;
        let mut parts = rest.split('-');
        let last_rowid = parts.next()?.parse().ok()?;
        let rows = parts.next()?.parse().ok()?;
        let bytes = parts.next()?.parse().ok()?;
        let hash_prefix = parts.next()?.to_string();
        if parts.next().is_some() || hash_prefix.len() != HASH_PREFIX {
            return None;
        }
        Some(BuildName {
            last_rowid,
            rows,
            bytes,
            hash_prefix,
        })
    }
}

/// The builds of `space` in `dir`, newest (highest last rowid) first.
fn builds(dir: &Path, space: &str) -> Vec<(BuildName, PathBuf)> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut found: Vec<(BuildName, PathBuf)> = entries
        .filter_map(Result::ok)
        .filter_map(|e| {
            let name = e.file_name();
            let parsed = BuildName::parse(name.to_str()?, space)?;
            Some((parsed, e.path()))
        })
        .collect();
    found.sort_by_key(|b| std::cmp::Reverse(b.0.last_rowid));
    found
}

/// Whether a build is whole (its length is the one its name records) and belongs to `store`
/// (its last row is there with the content hash its name records).
fn usable(store: &Store, space: &str, name: &BuildName, path: &Path) -> Result<bool, IndexError> {
    let length = std::fs::metadata(path).map(|m| m.len()).ok();
    Ok(length == Some(name.bytes)
        && store
            .embedding_hash(space, name.last_rowid)?
            .is_some_and(|hash| hash.starts_with(&name.hash_prefix)))
}

fn options(dimension: usize) -> IndexOptions {
    IndexOptions {
        dimensions: dimension,
        // The vectors are unit length: cosine on the int8 copies, exact dot products on rescoring.
        metric: MetricKind::Cos,
        quantization: ScalarKind::I8,
        connectivity: CONNECTIVITY,
        expansion_add: EXPANSION_ADD,
        expansion_search: EXPANSION_SEARCH,
        multi: false,
    }
}

impl AnnBase {
    /// Opens the newest build of `space` under `index_dir` that belongs to `store`, memory-mapped;
    /// `None` when there is none (or none that opens: the caller scans exactly).
    pub fn open(
        index_dir: &Path,
        store: &Store,
        space: &str,
        dimension: usize,
    ) -> Result<Option<AnnBase>, IndexError> {
        for (name, path) in builds(&ann_dir(index_dir), space) {
            if !usable(store, space, &name, &path)? {
                continue;
            }
            let Some(path_str) = path.to_str() else {
                continue;
            };
            let Ok(index) = Index::restore_view(path_str) else {
                continue;
            };
            if index.dimensions() != dimension || index.size() != name.rows {
                continue;
            }
            return Ok(Some(AnnBase {
                index,
                last_rowid: name.last_rowid,
                rows: name.rows,
            }));
        }
        Ok(None)
    }

    /// The `count` nearest rows to `query` among rows up to `up_to` (a reader's snapshot), as
    /// (rowid, approximate cosine), nearest first.
    pub fn search(
        &self,
        query: &[f32],
        count: usize,
        up_to: i64,
    ) -> Result<Vec<(i64, f32)>, IndexError> {
        let count = count.min(self.rows);
        if count == 0 {
            return Ok(Vec::new());
        }
        self.index
            .change_expansion_search(EXPANSION_SEARCH.max(count));
        let matches = if up_to >= self.last_rowid {
            self.index.search(query, count)
        } else {
            self.index
                .filtered_search(query, count, |key: u64| key as i64 <= up_to)
        }
        .map_err(|e| ann_err("searching the approximate index", e))?;
        Ok(matches
            .keys
            .iter()
            .zip(&matches.distances)
            .map(|(k, d)| (*k as i64, 1.0 - d))
            .collect())
    }
}

/// Brings the approximate index of `space` up to date with the store (the writer's part, at the
/// end of a sync; the caller holds the writer lock).
pub fn refresh(
    index_dir: &Path,
    store: &Store,
    space: &str,
    dimension: usize,
    settings: &AnnSettings,
) -> Result<AnnRefresh, IndexError> {
    let dir = ann_dir(index_dir);
    let Some((last_rowid, last_hash)) = store.last_embedding(space)? else {
        remove_builds(&dir, space, None);
        return Ok(AnnRefresh::Exact { rows: 0 });
    };
    let total = store.count_embeddings(space)?;
    if total < settings.min_rows {
        remove_builds(&dir, space, None);
        return Ok(AnnRefresh::Exact { rows: total });
    }
    let mut current = None;
    for (name, path) in builds(&dir, space) {
        if usable(store, space, &name, &path)? {
            current = Some((name, path));
            break;
        }
    }
    let started = std::time::Instant::now();
    let (index, after) = match &current {
        Some((name, path)) => {
            let delta = total.saturating_sub(name.rows);
            if delta <= settings.max_delta {
                return Ok(AnnRefresh::Kept {
                    rows: name.rows,
                    delta,
                });
            }
            let index =
                Index::new(&options(dimension)).map_err(|e| ann_err("creating the index", e))?;
            let loaded = path
                .to_str()
                .map(|p| index.load(p).is_ok() && index.size() == name.rows)
                .unwrap_or(false);
            if loaded {
                (index, name.last_rowid)
            } else {
                (
                    Index::new(&options(dimension))
                        .map_err(|e| ann_err("creating the index", e))?,
                    0,
                )
            }
        }
        None => (
            Index::new(&options(dimension)).map_err(|e| ann_err("creating the index", e))?,
            0,
        ),
    };
    let before = index.size();
    let threads = std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1);
    index
        .reserve_capacity_and_threads(total + 16, threads)
        .map_err(|e| ann_err("reserving the index", e))?;
    add_rows(
        &index,
        store,
        space,
        dimension,
        (after, last_rowid),
        threads,
    )?;
    let rows = index.size();
    std::fs::create_dir_all(&dir).map_err(|e| ann_err("creating the ann directory", e))?;
    let temp = dir.join(format!(
        ".{}-{}.{}.tmp",
        space_key(space),
        last_rowid,
        std::process::id()
    ));
    let temp_str = temp
        .to_str()
        .ok_or_else(|| ann_err("the index path", "not UTF-8"))?;
    index
        .save(temp_str)
        .map_err(|e| ann_err("saving the approximate index", e))?;
    let bytes = std::fs::File::open(&temp)
        .and_then(|f| f.sync_all().and_then(|()| f.metadata()))
        .map_err(|e| ann_err("syncing the approximate index", e))?
        .len();
    let name = BuildName {
        last_rowid,
        rows,
        bytes,
        hash_prefix: last_hash.chars().take(HASH_PREFIX).collect(),
    };
    let final_path = dir.join(name.file_name(space));
    crate::sync::failpoint("ann_before_rename");
    std::fs::rename(&temp, &final_path)
        .map_err(|e| ann_err("renaming the approximate index", e))?;
    if let Ok(d) = std::fs::File::open(&dir) {
        let _ = d.sync_all();
    }
    remove_builds(&dir, space, Some(&final_path));
    Ok(AnnRefresh::Built {
        rows,
        added: rows - before,
        millis: started.elapsed().as_millis(),
    })
}

/// Adds the rows `after < rowid <= up_to` to `index` from the store, `threads` at a time.
fn add_rows(
    index: &Index,
    store: &Store,
    space: &str,
    dimension: usize,
    range: (i64, i64),
    threads: usize,
) -> Result<(), IndexError> {
    // Rows are read in batches and inserted by `threads` workers (usearch's add is thread-safe).
    const BATCH: usize = 4_096;
    let mut batch: Vec<(i64, Vec<f32>)> = Vec::with_capacity(BATCH);
    let mut failed: Option<IndexError> = None;
    let flush = |batch: &mut Vec<(i64, Vec<f32>)>| -> Result<(), IndexError> {
        let per = batch.len().div_ceil(threads.max(1)).max(1);
        let results: Vec<Result<(), IndexError>> = std::thread::scope(|scope| {
            let handles: Vec<_> = batch
                .chunks(per)
                .map(|part| {
                    scope.spawn(move || {
                        for (rowid, v) in part {
                            index
                                .add(*rowid as u64, v)
                                .map_err(|e| ann_err("adding a vector", e))?;
                        }
                        Ok(())
                    })
                })
                .collect();
            handles
                .into_iter()
                .map(|h| {
                    h.join()
                        .unwrap_or_else(|_| Err(ann_err("adding vectors", "a worker panicked")))
                })
                .collect()
        });
        batch.clear();
        results.into_iter().collect()
    };
    store.each_embedding(space, dimension, range, |rowid, v| {
        if failed.is_some() {
            return;
        }
        batch.push((rowid, v.to_vec()));
        if batch.len() == BATCH
            && let Err(e) = flush(&mut batch)
        {
            failed = Some(e);
        }
    })?;
    if let Some(e) = failed {
        return Err(e);
    }
    flush(&mut batch)
}

/// Removes every build of `space` (and leftover temporary files) but `keep`.
fn remove_builds(dir: &Path, space: &str, keep: Option<&Path>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let key = space_key(space);
    for entry in entries.filter_map(Result::ok) {
        let path = entry.path();
        let name = entry.file_name();
        let Some(name) = name.to_str() else { continue };
        let ours = name.starts_with(&key) || name.starts_with(&format!(".{key}"));
        if ours && Some(path.as_path()) != keep {
            let _ = std::fs::remove_file(&path);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn build_names_round_trip_and_foreign_names_are_ignored() {
        let name = BuildName {
            last_rowid: 42,
            rows: 40,
            bytes: 9_000,
            hash_prefix: "0123456789ab".into(),
        };
        let file = name.file_name("e5-small");
        assert_eq!(BuildName::parse(&file, "e5-small"), Some(name));
        assert_eq!(BuildName::parse(&file, "another space"), None);
        assert_eq!(
            BuildName::parse(&format!(".{file}.7.tmp"), "e5-small"),
            None
        );
        assert_eq!(BuildName::parse("notes.md", "e5-small"), None);
    }
}
