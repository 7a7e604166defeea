//! Retrieval for quire: search over the index, grouped by note with each note's strongest
//! sections, plus reciprocal-rank fusion and the evaluation harness (`quire eval`).
//!
//! Ranking code here is pure ([`fusion`], [`metrics`], [`snippet`]); [`Searcher`] reads the index
//! through `quire-index` and never writes.
//!
//! ```no_run
//! use quire_search::{Searcher, SearchRequest};
//! let searcher = Searcher::open(&quire_index::IndexLocation::new("/tmp/index")).unwrap();
//! let results = searcher.search(&SearchRequest::new("sourdough starter")).unwrap();
//! for note in results.results {
//!     println!("{} {:.2}", note.path, note.score);
//! }
//! ```

mod ann;
pub mod cluster;
pub mod duplicates;
pub mod eval;
pub mod fusion;
pub mod metrics;
pub mod retrieval;
pub mod snippet;
pub mod vault_eval;
pub mod vectors;

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, OnceLock};

use quire_embed::{Embedder, EmbeddingSpace};
use quire_index::store::ChunkRow;
use quire_index::sync::{ChunkKey, SPACE_KEY};
use quire_index::{Boosts, Filter, FullText, IndexError, IndexLocation, Store};
pub use retrieval::{AnswerIndex, Retrieval};
use serde::Serialize;

/// Why a search, a similar-notes or duplicates query, or an evaluation failed.
#[derive(Debug, thiserror::Error)]
pub enum SearchError {
    /// The index could not be read, its halves disagree, or its embedding space is not the model's.
    #[error(transparent)]
    Index(#[from] IndexError),
    /// No index at this directory (the directory as given).
    #[error("no index at {0}: run `quire index` first")]
    NoIndex(String),
    /// The query needs vectors, and there is no model, the index has none, or the note's vectors
    /// cancel out; the message says which and what to do.
    #[error("{0}")]
    NoEmbeddings(String),
    /// The model could not embed the query.
    #[error(transparent)]
    Embed(#[from] quire_embed::EmbedError),
    /// A database backend failed (its message).
    #[error("{0}")]
    Backend(String),
    /// The note (vault-relative path) has no vectors in the index: not indexed, or not embedded.
    #[error("no note `{0}` in the index")]
    NoNote(String),
    /// A file of a test set could not be read.
    #[error("evaluation: {}: {source}", path.display())]
    EvalIo {
        /// The test set file.
        path: std::path::PathBuf,
        /// The operating system's reason.
        #[source]
        source: std::io::Error,
    },
    /// A line of a test set is malformed.
    #[error("evaluation: {file} line {line}: {source}")]
    EvalLine {
        /// The test set file's name.
        file: &'static str,
        /// The line, 1-based.
        line: usize,
        /// Why the line cannot be read.
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },
}

/// Which retriever answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum Mode {
    /// BM25 and vector rankings fused by reciprocal rank (needs the embedding model).
    #[default]
    Hybrid,
    /// BM25 over titles, headings and text, with the request's field boosts.
    Bm25,
    /// Cosine similarity of the query's vector to every chunk's (needs the embedding model).
    Vector,
}

impl std::fmt::Display for Mode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Mode::Hybrid => "hybrid",
            Mode::Bm25 => "bm25",
            Mode::Vector => "vector",
        })
    }
}

impl std::str::FromStr for Mode {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "hybrid" => Ok(Mode::Hybrid),
            "bm25" => Ok(Mode::Bm25),
            "vector" => Ok(Mode::Vector),
            other => Err(format!("unknown mode `{other}` (hybrid, bm25, vector)")),
        }
    }
}

/// A search.
#[derive(Debug, Clone)]
pub struct SearchRequest {
    /// What to look for, as typed.
    pub query: String,
    /// Notes to return.
    pub k: usize,
    /// The retriever (BM25 from [`SearchRequest::new`]).
    pub mode: Mode,
    /// Folder and tag filters every note must pass.
    pub filter: Filter,
    /// BM25 field weights (title, heading, body).
    pub boosts: Boosts,
    /// Sections shown per note.
    pub sections_per_note: usize,
    /// How hybrid search fuses its rankings ([`fusion::Fusion::default`] unless an evaluation
    /// compares variants).
    pub fusion: fusion::Fusion,
    /// A passage written for the query by a model (query2doc): BM25 searches the query followed
    /// by it, the vector side the normalised mean of the query's vector and the passage's
    /// (embedded as a passage). Snippets still highlight the query's own words.
    pub expansion: Option<String>,
    /// Say why each note ranked where it did ([`NoteHit::explain`]).
    pub explain: bool,
}

impl SearchRequest {
    /// A BM25 search for `query`: 10 notes, 3 sections each, no filter, default boosts and fusion.
    pub fn new(query: impl Into<String>) -> Self {
        SearchRequest {
            query: query.into(),
            k: 10,
            mode: Mode::Bm25,
            filter: Filter::default(),
            boosts: Boosts::default(),
            sections_per_note: 3,
            fusion: fusion::Fusion::default(),
            expansion: None,
            explain: false,
        }
    }
}

/// A matching section of a note.
#[derive(Debug, Clone, Serialize)]
pub struct SectionHit {
    /// The chunk's stable id within its note.
    pub chunk_id: String,
    /// The headings above the section, outermost first.
    pub heading_path: Vec<String>,
    /// First line of the chunk, 1-based.
    pub start_line: usize,
    /// Last line of the chunk, inclusive.
    pub end_line: usize,
    /// Up to 220 characters of the chunk's body around its first matching word (from the start
    /// when no word matches).
    pub snippet: String,
    /// Byte ranges of matched words inside `snippet`.
    pub highlights: Vec<(usize, usize)>,
    /// The chunk's score in the request's mode: BM25, cosine similarity, or fused reciprocal rank.
    pub score: f32,
    /// For a PDF, the page the section is on (its lines are lines of the extracted text).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub page: Option<u32>,
    /// For a PDF, the link that opens it at that page: `Papers/x.pdf#page=3`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub link: Option<String>,
}

/// A matching note with its strongest sections.
#[derive(Debug, Clone, Serialize)]
pub struct NoteHit {
    /// Vault-relative path.
    pub path: String,
    /// The note's title, as indexed.
    pub title: String,
    /// The score of its best chunk; notes are ranked by it.
    pub score: f32,
    /// Its best chunks, best first, at most `sections_per_note`.
    pub sections: Vec<SectionHit>,
    /// Why it ranked where it did, when the request asked ([`SearchRequest::explain`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub explain: Option<Explanation>,
}

/// Why a note ranked where it did: where each retriever put it, and the fused score.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Explanation {
    /// The note's rank among the notes of the BM25 ranking (1 = first; by its best chunk), and
    /// that chunk's BM25 score; `None` when BM25 did not find it (or did not run).
    pub bm25_rank: Option<usize>,
    /// See `bm25_rank`.
    pub bm25_score: Option<f32>,
    /// The note's rank among the notes of the vector ranking, and its best chunk's cosine
    /// similarity to the query; `None` when the vector search did not find it (or did not run).
    pub vector_rank: Option<usize>,
    /// See `vector_rank`.
    pub vector_similarity: Option<f32>,
    /// The score the note was ranked by (the fused one in hybrid mode).
    pub score: f32,
    /// The chunk that carried the note (its best section).
    pub chunk_id: String,
    /// That chunk's headings, outermost first.
    pub heading_path: Vec<String>,
    /// How the rankings were combined (`zu:0.8`: z-scores of both lists, 80% vector).
    pub fusion: String,
    /// The query is the note's whole title, which put it first.
    pub title_match: bool,
}

/// The answer to a [`SearchRequest`].
#[derive(Debug, Clone, Serialize)]
pub struct SearchResults {
    /// The query as asked.
    pub query: String,
    /// The retriever used.
    pub mode: Mode,
    /// The index generation the results come from.
    pub generation: u64,
    /// At most `k` notes, best first.
    pub results: Vec<NoteHit>,
}

/// A note similar to another one.
#[derive(Debug, Clone, Serialize)]
pub struct SimilarNote {
    /// Vault-relative path.
    pub path: String,
    /// The note's title, as indexed.
    pub title: String,
    /// Cosine similarity of the two notes' vectors (the normalised means of their chunk vectors).
    pub score: f32,
}

pub use duplicates::{DuplicatePair, NearCopy};

/// A note's path and its vector (`None`: its chunk vectors cancel out), see
/// [`Searcher::note_vectors`].
pub type NoteVector = (String, Option<Vec<f32>>);

/// Cosines of several texts with several chunks: `rows[text][chunk]`, `None` for a chunk with
/// no stored vector (see [`Searcher::text_cosines`]).
pub type CosineRows = Vec<Vec<Option<f32>>>;

/// The cosine of each of `vectors` with each of `stored` (`None` where a chunk has none):
/// `result[vector][chunk]`.
pub fn cosine_rows(vectors: &[Vec<f32>], stored: &[Option<Vec<f32>>]) -> CosineRows {
    vectors
        .iter()
        .map(|v| {
            stored
                .iter()
                .map(|row| row.as_ref().map(|r| quire_embed::dot(v, r)))
                .collect()
        })
        .collect()
}

/// The row of each chunk's stored vector in `matrix` (`None` for a chunk with none).
fn stored_rows(matrix: &vectors::VectorMatrix, keys: &[ChunkKey]) -> Vec<Option<usize>> {
    let rows: HashMap<(&str, &str), usize> = matrix
        .keys
        .iter()
        .enumerate()
        .map(|(i, (path, id))| ((path.as_str(), id.as_str()), i))
        .collect();
    keys.iter()
        .map(|k| rows.get(&(k.path.as_str(), k.id.as_str())).copied())
        .collect()
}

/// Reads an index to answer searches.
pub struct Searcher {
    store: Store,
    fulltext: FullText,
    embedder: Option<Arc<dyn Embedder>>,
    vectors: OnceLock<vectors::VectorMatrix>,
    /// The index's directory (for its approximate vector index).
    dir: std::path::PathBuf,
    /// The approximate vector index, when the index keeps one (opened on first use).
    ann: OnceLock<Option<ann::AnnView>>,
    /// One vector per note (centroids of the chunk vectors), for hybrid fusion's note ranking.
    centroids: OnceLock<Vec<(String, Option<Vec<f32>>)>>,
    /// Every note's own text (template lines left out), for telling copies apart.
    own_text: OnceLock<duplicates::OwnText>,
    /// The last query embedded, with its vector: the ask flow searches a question and then
    /// compares it with its passages, and embeds it once for both.
    last_query: std::sync::Mutex<Option<(String, Vec<f32>)>>,
}

impl Searcher {
    /// Opens the index; an inconsistent one (see [`quire_index::Consistency`]) is an error.
    pub fn open(location: &IndexLocation) -> Result<Searcher, SearchError> {
        let searcher = Searcher::open_any(location)?;
        // A sync that died between its store commit and its full-text commit leaves the two at
        // different generations: BM25 would return deleted notes and miss new text. Refuse
        // (the caller may repair with quire_index::repair_fulltext and open again).
        let state = searcher.consistency()?;
        if !state.is_consistent() {
            return Err(SearchError::Index(state.error()));
        }
        Ok(searcher)
    }

    /// Opens the index even when its two halves disagree: for reports (`quire status`) that
    /// say so, never for answering searches.
    pub fn open_any(location: &IndexLocation) -> Result<Searcher, SearchError> {
        if !location.store_path().exists() {
            return Err(SearchError::NoIndex(location.dir.display().to_string()));
        }
        let store = Store::open(&location.store_path())?;
        let fulltext = FullText::open(&location.fulltext_dir())?;
        fulltext.reload()?;
        Ok(Searcher {
            store,
            fulltext,
            embedder: None,
            vectors: OnceLock::new(),
            dir: location.dir.clone(),
            ann: OnceLock::new(),
            centroids: OnceLock::new(),
            own_text: OnceLock::new(),
            last_query: std::sync::Mutex::new(None),
        })
    }

    /// Adds the model that embeds queries (it must be the index's embedding space).
    pub fn with_embedder(mut self, embedder: Arc<dyn Embedder>) -> Self {
        self.embedder = Some(embedder);
        self
    }

    /// The index's store, for reads beyond search (notes, chunks, meta).
    pub fn store(&self) -> &Store {
        &self.store
    }

    /// The generations of the store and of the full-text index.
    pub fn consistency(&self) -> Result<quire_index::Consistency, SearchError> {
        Ok(quire_index::Consistency::read(&self.store, &self.fulltext)?)
    }

    /// The embedding space stored with the index, if any.
    pub fn space(&self) -> Result<Option<EmbeddingSpace>, SearchError> {
        Ok(self
            .store
            .meta(SPACE_KEY)?
            .and_then(|s| serde_json::from_str(&s).ok()))
    }

    /// The thresholds measured for the model of the stored vectors (e5-small's without any).
    pub fn calibration(&self) -> Result<quire_embed::Calibration, SearchError> {
        Ok(self
            .space()?
            .map_or(quire_embed::Calibration::E5_SMALL, |s| s.calibration()))
    }

    /// The mode of a search that names none: hybrid when a model is loaded and the index has
    /// embeddings of its space, else BM25 (so a vault indexed without the model, or with
    /// another model until `quire index` has embedded it again, still answers).
    pub fn default_mode(&self) -> Result<Mode, SearchError> {
        let same_space = match (&self.embedder, self.space()?) {
            (Some(embedder), Some(space)) => space == embedder.space(),
            _ => false,
        };
        Ok(if same_space { Mode::Hybrid } else { Mode::Bm25 })
    }

    /// The embedder, checked against the index's space.
    fn embedder(&self, what: &str) -> Result<&dyn Embedder, SearchError> {
        let Some(embedder) = &self.embedder else {
            // Only a search has a BM25 mode to fall back to.
            let instead = if what == "vector search" {
                ", or use --mode bm25"
            } else {
                ""
            };
            return Err(SearchError::NoEmbeddings(format!(
                "{what} needs the embedding model, and none is loaded (fetch it with scripts/fetch-model.sh{instead})"
            )));
        };
        match self.space()? {
            Some(space) if space == embedder.space() => Ok(embedder.as_ref()),
            Some(space) => Err(SearchError::Index(IndexError::SpaceMismatch {
                stored: serde_json::to_string(&space).unwrap_or_default(),
                configured: serde_json::to_string(&embedder.space()).unwrap_or_default(),
            })),
            None => Err(SearchError::NoEmbeddings(format!(
                "{what} needs embeddings, and the index has none yet: run `quire index` with the model available"
            ))),
        }
    }

    /// The cosine between `query`'s vector and each chunk's stored vector (`None` for a chunk
    /// with none); empty when there is no embedder or the index has no vectors of its space.
    pub fn cosines(&self, query: &str, keys: &[ChunkKey]) -> Result<Vec<Option<f32>>, SearchError> {
        let Ok(embedder) = self.embedder("comparing passages") else {
            return Ok(Vec::new());
        };
        let query = self.query_vector(embedder, query)?;
        Ok(self
            .key_vectors(embedder, keys)?
            .into_iter()
            .map(|v| v.map(|v| quire_embed::dot(&query, &v)))
            .collect())
    }

    /// The cosine between each of `texts` and each chunk's stored vector (`None` for a chunk
    /// with none): `result[t][k]`. The texts are embedded in one batch, as passages (an
    /// answer's sentence is compared with a passage as a peer, not searched for). `None` when
    /// there is no embedder or none of the chunks has a vector.
    pub fn text_cosines(
        &self,
        texts: &[&str],
        keys: &[ChunkKey],
    ) -> Result<Option<CosineRows>, SearchError> {
        let Ok(embedder) = self.embedder("comparing sentences with passages") else {
            return Ok(None);
        };
        let rows = self.key_vectors(embedder, keys)?;
        if texts.is_empty() || rows.iter().all(Option::is_none) {
            return Ok(None);
        }
        let vectors = embedder.embed_passages(texts)?;
        Ok(Some(cosine_rows(&vectors, &rows)))
    }

    /// The similarity of each of `sentences` (embedded as documents) to `question` (embedded
    /// as a query); `None` without a model (ranking sentences needs no stored vector).
    pub fn sentence_scores(
        &self,
        question: &str,
        sentences: &[&str],
    ) -> Result<Option<Vec<f32>>, SearchError> {
        let Some(embedder) = self.embedder.as_deref() else {
            return Ok(None);
        };
        Ok(Some(score_sentences(embedder, question, sentences)?))
    }

    /// One vector per note of the index, from the vectors already stored (no model needed, no
    /// embedding call): the normalised mean of its chunk vectors, its card left out unless it
    /// is the note's only chunk (see [`vectors::VectorMatrix::note_centroids`]); `None` for a
    /// note whose chunk vectors cancel out. Notes without any vector are not listed. An index
    /// with no embeddings is [`SearchError::NoEmbeddings`], its message naming `what`.
    pub fn note_vectors(&self, what: &str) -> Result<Vec<NoteVector>, SearchError> {
        let Some(space) = self.space()? else {
            return Err(SearchError::NoEmbeddings(format!(
                "{what} needs embeddings, and the index has none: run `quire index` with the embedding model (scripts/fetch-model.sh fetches it)"
            )));
        };
        let centroids = self.matrix_of(&space)?.note_centroids();
        if centroids.is_empty() {
            return Err(SearchError::NoEmbeddings(format!(
                "{what} needs embeddings, and no note of the index has a vector yet: run `quire index` with the embedding model"
            )));
        }
        Ok(centroids)
    }

    /// The stored vectors of `keys` (`None` for a chunk with none): looked up one by one when
    /// the index keeps an approximate index (a large one: the matrix is never loaded), else
    /// from the matrix.
    fn key_vectors(
        &self,
        embedder: &dyn Embedder,
        keys: &[ChunkKey],
    ) -> Result<Vec<Option<Vec<f32>>>, SearchError> {
        if let Some(ann) = self.ann(embedder)? {
            return ann.vectors_of(&self.store, keys);
        }
        let matrix = self.matrix(embedder)?;
        Ok(stored_rows(matrix, keys)
            .into_iter()
            .map(|row| row.map(|i| matrix.row(i).to_vec()))
            .collect())
    }

    /// The approximate vector index of the embedder's space, when the index keeps one.
    fn ann(&self, embedder: &dyn Embedder) -> Result<Option<&ann::AnnView>, SearchError> {
        if let Some(view) = self.ann.get() {
            return Ok(view.as_ref());
        }
        let space = embedder.space();
        let view = ann::AnnView::open(&self.dir, &self.store, &space.id(), space.dimension)?;
        Ok(self.ann.get_or_init(|| view).as_ref())
    }

    /// The index's vectors, loaded once.
    fn matrix(&self, embedder: &dyn Embedder) -> Result<&vectors::VectorMatrix, SearchError> {
        self.matrix_of(&embedder.space())
    }

    /// The index's vectors of `space`, loaded once (a searcher's embedder, when it has one, is
    /// checked against the stored space before its vectors are compared, so one space is ever
    /// loaded).
    fn matrix_of(&self, space: &EmbeddingSpace) -> Result<&vectors::VectorMatrix, SearchError> {
        if let Some(m) = self.vectors.get() {
            return Ok(m);
        }
        let (keys, data) = self.store.vectors(&space.id(), space.dimension)?;
        Ok(self.vectors.get_or_init(|| vectors::VectorMatrix {
            keys,
            data,
            dimension: space.dimension,
        }))
    }

    /// `text`'s query vector, embedded once for consecutive calls with the same text.
    fn query_vector(&self, embedder: &dyn Embedder, text: &str) -> Result<Vec<f32>, SearchError> {
        let mut last = self.last_query.lock().unwrap_or_else(|e| e.into_inner());
        if let Some((cached, vector)) = last.as_ref()
            && cached == text
        {
            return Ok(vector.clone());
        }
        let vector = embedder.embed_query(text)?;
        *last = Some((text.to_string(), vector.clone()));
        Ok(vector)
    }

    /// Notes most similar to `path` (no new embedding calls: note vectors come from the index).
    pub fn similar(&self, path: &str, k: usize) -> Result<Vec<SimilarNote>, SearchError> {
        let embedder = self.embedder("similar notes")?;
        let centroids = self.matrix(embedder)?.note_centroids();
        let Some((_, own)) = centroids.iter().find(|(p, _)| p == path) else {
            // In the index but without vectors (not embedded yet), or not in the index at all.
            return Err(match self.store.note_title(path)? {
                Some(_) => SearchError::NoEmbeddings(format!(
                    "{path} has no vectors yet: run `quire index` with the embedding model to embed it"
                )),
                None => SearchError::NoNote(path.to_string()),
            });
        };
        let Some(own) = own else {
            return Err(SearchError::NoEmbeddings(format!(
                "{path}: its chunk vectors cancel out (near-zero mean), so it has no direction to compare"
            )));
        };
        let titles: HashMap<String, String> = self
            .store
            .notes()?
            .into_iter()
            .map(|n| (n.path, n.title))
            .collect();
        let scores = centroids
            .iter()
            .enumerate()
            .filter(|(_, (p, c))| p != path && c.is_some())
            .map(|(i, (_, c))| {
                (
                    i,
                    c.as_ref()
                        .map(|c| quire_embed::dot(c, own))
                        .unwrap_or(f32::NAN),
                )
            });
        Ok(vectors::top_k(scores, k)
            .into_iter()
            .map(|(i, score)| {
                let path = centroids[i].0.clone();
                SimilarNote {
                    title: titles.get(&path).cloned().unwrap_or_default(),
                    path,
                    score,
                }
            })
            .collect())
    }

    /// Which of `similar` (the notes most similar to `path`, from [`Searcher::similar`] or a
    /// database) look like copies of it: the rule of [`Searcher::duplicates`] for one note,
    /// cosine ≥ `threshold` and own text overlapping by ≥ `min_overlap`. Each is given with its
    /// overlap, the largest first. The notes' own text is read once per searcher.
    pub fn copies_among(
        &self,
        path: &str,
        similar: &[SimilarNote],
        threshold: f32,
        min_overlap: f32,
    ) -> Result<Vec<NearCopy>, SearchError> {
        let close: Vec<&SimilarNote> = similar.iter().filter(|n| n.score >= threshold).collect();
        if close.is_empty() {
            return Ok(Vec::new());
        }
        let text = match self.own_text.get() {
            Some(text) => text,
            None => {
                let text = duplicates::OwnText::new(&self.store.chunks(None)?);
                self.own_text.get_or_init(|| text)
            }
        };
        let own = text.own(path);
        let mut copies: Vec<NearCopy> = close
            .into_iter()
            .filter_map(|note| {
                let overlap = duplicates::overlap(&own, &text.own(&note.path))?;
                (overlap >= min_overlap).then(|| NearCopy {
                    path: note.path.clone(),
                    title: note.title.clone(),
                    score: note.score,
                    overlap,
                })
            })
            .collect();
        copies.sort_by(|a, b| {
            b.overlap
                .total_cmp(&a.overlap)
                .then_with(|| a.path.cmp(&b.path))
        });
        Ok(copies)
    }

    /// Pairs of notes that look like copies of each other, at most `limit`, the largest overlap
    /// first: note vectors with cosine ≥ `threshold`, whose own text (lines that are not
    /// template lines) overlaps by at least `min_overlap` (Jaccard of word pairs). The rule, and
    /// why vectors alone flag distinct notes made from one template: [`mod@crate::duplicates`].
    pub fn duplicates(
        &self,
        threshold: f32,
        min_overlap: f32,
        limit: usize,
    ) -> Result<Vec<DuplicatePair>, SearchError> {
        let embedder = self.embedder("duplicate detection")?;
        let centroids = self.matrix(embedder)?.note_centroids();
        let usable: Vec<(&String, &[f32])> = centroids
            .iter()
            .filter_map(|(p, c)| c.as_ref().map(|c| (p, c.as_slice())))
            .collect();
        let refs: Vec<&[f32]> = usable.iter().map(|(_, c)| *c).collect();
        let candidates = vectors::top_pairs(&refs, threshold, duplicates::MAX_CANDIDATES);
        if candidates.is_empty() {
            return Ok(Vec::new());
        }
        let text = duplicates::OwnText::new(&self.store.chunks(None)?);
        let mut own: HashMap<usize, HashSet<u64>> = HashMap::new();
        let mut pairs = Vec::new();
        for (i, j, score) in candidates {
            for k in [i, j] {
                own.entry(k).or_insert_with(|| text.own(usable[k].0));
            }
            match duplicates::overlap(&own[&i], &own[&j]) {
                Some(overlap) if overlap >= min_overlap => pairs.push(DuplicatePair {
                    a: usable[i].0.clone(),
                    b: usable[j].0.clone(),
                    score,
                    overlap,
                }),
                _ => {}
            }
        }
        pairs.sort_by(|x, y| {
            y.overlap
                .total_cmp(&x.overlap)
                .then(y.score.total_cmp(&x.score))
                .then_with(|| (&x.a, &x.b).cmp(&(&y.a, &y.b)))
        });
        pairs.truncate(limit);
        Ok(pairs)
    }

    /// The notes that best match `request`, each with its best sections; filters apply to notes
    /// (the one search over any index: [`retrieval::search`]).
    pub fn search(&self, request: &SearchRequest) -> Result<SearchResults, SearchError> {
        let embed = |text: &str, kind: retrieval::Embed| {
            let embedder = self.embedder("vector search")?;
            match kind {
                retrieval::Embed::Query => self.query_vector(embedder, text),
                retrieval::Embed::Passage => retrieval::one_passage(embedder, text),
            }
        };
        let mut request = request.clone();
        request.fusion = request.fusion.for_model(&self.calibration()?);
        retrieval::search(self, &embed, &request)
    }

    /// [`Searcher::search`] with the query's vector given instead of embedded from
    /// `request.query` (which still drives BM25 and the snippets).
    pub fn search_with_vector(
        &self,
        request: &SearchRequest,
        vector: &[f32],
    ) -> Result<SearchResults, SearchError> {
        let mut request = request.clone();
        request.fusion = request.fusion.for_model(&self.calibration()?);
        let request = &request;
        retrieval::search(
            self,
            &|text: &str, kind: retrieval::Embed| match kind {
                retrieval::Embed::Query => Ok(vector.to_vec()),
                retrieval::Embed::Passage => {
                    retrieval::one_passage(self.embedder("vector search")?, text)
                }
            },
            request,
        )
    }

    /// A query vector moved toward passages written for the query (hypothetical answers, as in
    /// HyDE): the normalised mean of the query's vector and the passages' (embedded as
    /// passages). With no passage, the query's own vector.
    pub fn expanded_query_vector(
        &self,
        query: &str,
        passages: &[&str],
    ) -> Result<Vec<f32>, SearchError> {
        let embedder = self.embedder("vector search")?;
        let own = self.query_vector(embedder, query)?;
        let written = if passages.is_empty() {
            Vec::new()
        } else {
            embedder.embed_passages(passages)?
        };
        let refs: Vec<&[f32]> = written.iter().map(Vec::as_slice).collect();
        // Each passage weighs as much as the query: the mean of all of them.
        Ok(fusion::rocchio(&own, &refs, refs.len() as f32))
    }
}

/// The local index (SQLite store, tantivy, vectors) behind the search boundary.
impl Retrieval for Searcher {
    fn generation(&self) -> Result<u64, SearchError> {
        Ok(self.store.generation()?)
    }

    fn note_paths(&self) -> Result<Vec<String>, SearchError> {
        Ok(self.store.notes()?.into_iter().map(|n| n.path).collect())
    }

    fn tags(&self) -> Result<Vec<(String, String)>, SearchError> {
        Ok(self.store.tags()?)
    }

    fn properties(&self) -> Result<Vec<(String, String)>, SearchError> {
        Ok(self.store.properties()?)
    }

    fn note_titles(&self, paths: &[&str]) -> Result<HashMap<String, String>, SearchError> {
        let mut titles = HashMap::new();
        for path in paths {
            if let Some(title) = self.store.note_title(path)? {
                titles.insert(path.to_string(), title);
            }
        }
        Ok(titles)
    }

    fn titled(&self, title: &str) -> Result<Vec<ChunkKey>, SearchError> {
        Ok(self
            .store
            .first_chunks_titled(title)?
            .into_iter()
            .map(|(path, id)| ChunkKey::new(&path, &id))
            .collect())
    }

    fn chunks(&self, keys: &[&ChunkKey]) -> Result<Vec<Option<ChunkRow>>, SearchError> {
        keys.iter()
            .map(|k| Ok(self.store.chunk(&k.path, &k.id)?))
            .collect()
    }

    fn lexical(
        &self,
        query: &str,
        want: usize,
        filter: &Filter,
        boosts: Boosts,
    ) -> Result<Vec<(ChunkKey, f32)>, SearchError> {
        Ok(self
            .fulltext
            .search(query, want, filter, boosts)?
            .into_iter()
            .filter_map(|h| Some((ChunkKey::decode(&h.key)?, h.score)))
            .collect())
    }

    fn semantic(
        &self,
        query: &[f32],
        want: usize,
        allowed: Option<&HashSet<String>>,
    ) -> Result<Vec<(ChunkKey, f32)>, SearchError> {
        let embedder = self.embedder("vector search")?;
        if let Some(ann) = self.ann(embedder)? {
            return ann.ranking(&self.store, query, want, allowed);
        }
        let matrix = self.matrix(embedder)?;
        let scores = matrix
            .scores(query)
            .filter(|(i, _)| allowed.is_none_or(|set| set.contains(&matrix.keys[*i].0)));
        Ok(vectors::top_k(scores, want)
            .into_iter()
            .map(|(i, score)| (ChunkKey::new(&matrix.keys[i].0, &matrix.keys[i].1), score))
            .collect())
    }

    fn note_ranking(
        &self,
        query: &[f32],
        want: usize,
        allowed: Option<&HashSet<String>>,
    ) -> Result<Vec<(String, f32)>, SearchError> {
        let embedder = self.embedder("vector search")?;
        let matrix = self.matrix(embedder)?;
        let centroids = self.centroids.get_or_init(|| matrix.note_centroids());
        let scores = centroids.iter().enumerate().filter_map(|(i, (path, c))| {
            let c = c.as_ref()?;
            allowed
                .is_none_or(|set| set.contains(path))
                .then(|| (i, quire_embed::dot(query, c)))
        });
        Ok(vectors::top_k(scores, want)
            .into_iter()
            .map(|(i, score)| (centroids[i].0.clone(), score))
            .collect())
    }

    fn chunk_vectors(&self, keys: &[&ChunkKey]) -> Result<Vec<Option<Vec<f32>>>, SearchError> {
        let space = self.embedder("vector search")?.space();
        let space_id = space.id();
        keys.iter()
            .map(|k| {
                Ok(self
                    .store
                    .chunk_vector(&space_id, space.dimension, &k.path, &k.id)?)
            })
            .collect()
    }

    fn first_chunks(&self, paths: &[String]) -> Result<Vec<ChunkKey>, SearchError> {
        let embedder = self.embedder("vector search")?;
        let matrix = self.matrix(embedder)?;
        let wanted: HashSet<&str> = paths.iter().map(String::as_str).collect();
        let mut seen: HashSet<&str> = HashSet::new();
        Ok(matrix
            .keys
            .iter()
            .filter(|(path, _)| wanted.contains(path.as_str()) && seen.insert(path.as_str()))
            .map(|(path, id)| ChunkKey::new(path, id))
            .collect())
    }
}

/// The local index answering a question (see [`AnswerIndex`]).
impl AnswerIndex for Searcher {
    fn search(&self, request: &SearchRequest) -> Result<SearchResults, SearchError> {
        Searcher::search(self, request)
    }

    fn default_mode(&self) -> Result<Mode, SearchError> {
        Searcher::default_mode(self)
    }

    fn calibration(&self) -> Result<quire_embed::Calibration, SearchError> {
        Searcher::calibration(self)
    }

    fn mentions(&self, word: &str) -> Result<Option<bool>, SearchError> {
        Ok(self.fulltext.mentions(word)?)
    }

    fn sentence_scores(
        &self,
        question: &str,
        sentences: &[&str],
    ) -> Result<Option<Vec<f32>>, SearchError> {
        Searcher::sentence_scores(self, question, sentences)
    }

    fn generation(&self) -> Result<u64, SearchError> {
        Ok(self.store.generation()?)
    }

    fn notes(&self) -> Result<Vec<(String, String)>, SearchError> {
        Ok(self
            .store
            .notes()?
            .into_iter()
            .map(|n| (n.path, n.title))
            .collect())
    }

    fn chunk(&self, path: &str, id: &str) -> Result<Option<ChunkRow>, SearchError> {
        Ok(self.store.chunk(path, id)?)
    }

    fn note_chunks(&self, path: &str) -> Result<Vec<ChunkRow>, SearchError> {
        Ok(self.store.chunks(Some(path))?)
    }

    fn cosines(&self, query: &str, keys: &[ChunkKey]) -> Result<Vec<Option<f32>>, SearchError> {
        Searcher::cosines(self, query, keys)
    }

    fn text_cosines(
        &self,
        texts: &[&str],
        keys: &[ChunkKey],
    ) -> Result<Option<CosineRows>, SearchError> {
        Searcher::text_cosines(self, texts, keys)
    }

    fn query_cosines(
        &self,
        texts: &[&str],
        keys: &[ChunkKey],
    ) -> Result<Option<QueryCosines>, SearchError> {
        let Ok(embedder) = self.embedder("weighing the question's words") else {
            return Ok(None);
        };
        // The question itself was embedded a moment ago for its cosines: the searcher's cache
        // of the last query gives it back instead of a second embedding.
        query_cosines(
            &|text| self.query_vector(embedder, text),
            texts,
            &self.key_vectors(embedder, keys)?,
        )
    }

    fn local(&self) -> Option<&Searcher> {
        Some(self)
    }
}

/// Several texts embedded as queries, compared with the first of them and with stored chunk
/// vectors (see [`AnswerIndex::query_cosines`]).
#[derive(Debug, Clone, PartialEq)]
pub struct QueryCosines {
    /// Each text's cosine with the first text (1 for the first).
    pub to_first: Vec<f32>,
    /// Each text's cosine with each chunk's stored vector: `rows[text][chunk]`.
    pub rows: CosineRows,
}

/// [`QueryCosines`] of `texts` (each embedded by `embed_query`) against `stored` (`None` when
/// there is no text or no chunk has a vector).
pub fn query_cosines(
    embed_query: &dyn Fn(&str) -> Result<Vec<f32>, SearchError>,
    texts: &[&str],
    stored: &[Option<Vec<f32>>],
) -> Result<Option<QueryCosines>, SearchError> {
    if texts.is_empty() || stored.iter().all(Option::is_none) {
        return Ok(None);
    }
    let vectors = texts
        .iter()
        .map(|t| embed_query(t))
        .collect::<Result<Vec<_>, _>>()?;
    Ok(Some(QueryCosines {
        to_first: vectors
            .iter()
            .map(|v| quire_embed::dot(&vectors[0], v))
            .collect(),
        rows: cosine_rows(&vectors, stored),
    }))
}

/// The similarity of each of `sentences` (documents without a title) to `question` (a query).
pub fn score_sentences(
    embedder: &dyn Embedder,
    question: &str,
    sentences: &[&str],
) -> Result<Vec<f32>, SearchError> {
    if sentences.is_empty() {
        return Ok(Vec::new());
    }
    let query = embedder.embed_query(question)?;
    let docs: Vec<(&str, &str)> = sentences.iter().map(|s| ("", *s)).collect();
    Ok(embedder
        .embed_documents(&docs)?
        .iter()
        .map(|v| quire_embed::dot(&query, v))
        .collect())
}
