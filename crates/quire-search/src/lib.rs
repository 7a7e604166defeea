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

pub mod eval;
pub mod fusion;
pub mod metrics;
pub mod snippet;

use std::collections::HashMap;

use quire_index::sync::split_chunk_key;
use quire_index::{Boosts, Filter, FullText, IndexError, IndexLocation, Store};
use serde::Serialize;

#[derive(Debug, thiserror::Error)]
pub enum SearchError {
    #[error(transparent)]
    Index(#[from] IndexError),
    #[error("no index at {0}: run `quire index` first")]
    NoIndex(String),
    #[error(
        "search mode `{0}` needs an embedding model, and none is configured yet; use --mode bm25"
    )]
    NoEmbeddings(String),
    #[error("evaluation: {0}")]
    Eval(String),
}

/// Which retriever answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum Mode {
    #[default]
    Hybrid,
    Bm25,
    Vector,
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
    pub query: String,
    /// Notes to return.
    pub k: usize,
    pub mode: Mode,
    pub filter: Filter,
    pub boosts: Boosts,
    /// Sections shown per note.
    pub sections_per_note: usize,
}

impl SearchRequest {
    pub fn new(query: impl Into<String>) -> Self {
        SearchRequest {
            query: query.into(),
            k: 10,
            mode: Mode::Bm25,
            filter: Filter::default(),
            boosts: Boosts::default(),
            sections_per_note: 3,
        }
    }
}

/// A matching section of a note.
#[derive(Debug, Clone, Serialize)]
pub struct SectionHit {
    pub chunk_id: String,
    pub heading_path: Vec<String>,
    pub start_line: usize,
    pub end_line: usize,
    pub snippet: String,
    /// Byte ranges of matched words inside `snippet`.
    pub highlights: Vec<(usize, usize)>,
    pub score: f32,
}

/// A matching note with its strongest sections.
#[derive(Debug, Clone, Serialize)]
pub struct NoteHit {
    pub path: String,
    pub title: String,
    pub score: f32,
    pub sections: Vec<SectionHit>,
}

#[derive(Debug, Clone, Serialize)]
pub struct SearchResults {
    pub query: String,
    pub mode: Mode,
    pub generation: u64,
    pub results: Vec<NoteHit>,
}

/// Reads an index to answer searches.
pub struct Searcher {
    store: Store,
    fulltext: FullText,
}

impl Searcher {
    pub fn open(location: &IndexLocation) -> Result<Searcher, SearchError> {
        if !location.store_path().exists() {
            return Err(SearchError::NoIndex(location.dir.display().to_string()));
        }
        let store = Store::open(&location.store_path())?;
        let fulltext = FullText::open(&location.fulltext_dir())?;
        fulltext.reload()?;
        Ok(Searcher { store, fulltext })
    }

    pub fn store(&self) -> &Store {
        &self.store
    }

    pub fn search(&self, request: &SearchRequest) -> Result<SearchResults, SearchError> {
        if request.mode != Mode::Bm25 {
            return Err(SearchError::NoEmbeddings(
                format!("{:?}", request.mode).to_lowercase(),
            ));
        }
        // Enough chunks that k notes survive grouping.
        let want = (request.k * request.sections_per_note * 4).clamp(20, 1000);
        let hits = self
            .fulltext
            .search(&request.query, want, &request.filter, request.boosts)?;
        let titles: HashMap<String, String> = self
            .store
            .notes()?
            .into_iter()
            .map(|n| (n.path, n.title))
            .collect();
        let terms = snippet::query_terms(&request.query);
        let mut notes: Vec<NoteHit> = Vec::new();
        let mut position: HashMap<String, usize> = HashMap::new();
        for hit in hits {
            let Some((path, id)) = split_chunk_key(&hit.key) else {
                continue;
            };
            let i = *position.entry(path.to_string()).or_insert_with(|| {
                notes.push(NoteHit {
                    path: path.to_string(),
                    title: titles.get(path).cloned().unwrap_or_default(),
                    score: hit.score,
                    sections: Vec::new(),
                });
                notes.len() - 1
            });
            if notes[i].sections.len() >= request.sections_per_note {
                continue;
            }
            let Some(chunk) = self.store.chunk(path, id)? else {
                continue;
            };
            let body = chunk
                .text
                .split_once("\n\n")
                .map(|(_, b)| b)
                .unwrap_or(&chunk.text);
            let (snippet, highlights) = snippet::snippet(body, &terms, 220);
            notes[i].sections.push(SectionHit {
                chunk_id: chunk.id,
                heading_path: chunk.heading_path,
                start_line: chunk.start_line,
                end_line: chunk.end_line,
                snippet,
                highlights,
                score: hit.score,
            });
        }
        notes.truncate(request.k);
        Ok(SearchResults {
            query: request.query.clone(),
            mode: request.mode,
            generation: self.store.generation()?,
            results: notes,
        })
    }
}
