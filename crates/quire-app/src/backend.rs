//! Where the index is read from: the local index (SQLite + tantivy + vectors, the default) or a
//! PostgreSQL database a writer published it to (`--backend postgres://…`, a team's shared
//! index). Both answer with the same search (`quire_search::retrieval`); the faces only pick.

use std::sync::Arc;

use quire_embed::Embedder;
use quire_index::{IndexLocation, Store};
use quire_pg::PgSearcher;
pub use quire_pg::{PgStatus, PublishOptions, PublishStats, redacted};
use quire_search::{Mode, SearchError, SearchRequest, SearchResults, Searcher, SimilarNote};

use crate::AppError;

/// A searcher over either backend.
pub enum SearchBackend {
    /// The local index.
    Local(Box<Searcher>),
    /// An index published to PostgreSQL.
    Postgres(Box<PgSearcher>),
}

impl SearchBackend {
    /// Opens the database at `database` when given (checked to be a `postgres://` URL), else
    /// the local index at `location` (repaired if a sync was interrupted, see
    /// [`crate::live::open_searcher`]).
    pub fn open(
        database: Option<&str>,
        location: &IndexLocation,
        embedder: Option<Arc<dyn Embedder>>,
        who: &str,
    ) -> Result<SearchBackend, AppError> {
        Ok(match database {
            Some(url) => {
                let searcher = PgSearcher::connect(checked_url(url)?).map_err(SearchError::from)?;
                SearchBackend::Postgres(Box::new(match embedder {
                    Some(e) => searcher.with_embedder(e),
                    None => searcher,
                }))
            }
            None => {
                let searcher = crate::live::open_searcher(location, who)?;
                SearchBackend::Local(Box::new(match embedder {
                    Some(e) => searcher.with_embedder(e),
                    None => searcher,
                }))
            }
        })
    }

    /// The mode of a search that names none (hybrid with a model and vectors, else BM25).
    pub fn default_mode(&self) -> Result<Mode, SearchError> {
        match self {
            SearchBackend::Local(s) => s.default_mode(),
            SearchBackend::Postgres(s) => Ok(s.default_mode()?),
        }
    }

    /// The notes that best match `request`.
    pub fn search(&self, request: &SearchRequest) -> Result<SearchResults, SearchError> {
        match self {
            SearchBackend::Local(s) => s.search(request),
            SearchBackend::Postgres(s) => s.search(request),
        }
    }

    /// The notes most similar to `path`.
    pub fn similar(&self, path: &str, k: usize) -> Result<Vec<SimilarNote>, SearchError> {
        match self {
            SearchBackend::Local(s) => s.similar(path, k),
            SearchBackend::Postgres(s) => s.similar(path, k),
        }
    }

    /// Which of `similar` look like copies of `path` (see [`crate::Live::near_copies`]); `None`
    /// over a team's database.
    pub fn near_copies(
        &self,
        path: &str,
        similar: &[SimilarNote],
    ) -> Result<Option<Vec<quire_search::NearCopy>>, SearchError> {
        match self {
            SearchBackend::Local(s) => Ok(Some(s.copies_among(
                path,
                similar,
                s.calibration()?.duplicate_cosine,
                quire_search::duplicates::DEFAULT_MIN_OVERLAP,
            )?)),
            SearchBackend::Postgres(_) => Ok(None),
        }
    }

    /// The index a question is answered from (`ask`, drafting).
    pub fn answer_index(&self) -> &dyn quire_search::AnswerIndex {
        match self {
            SearchBackend::Local(s) => s.as_ref(),
            SearchBackend::Postgres(s) => s.as_ref(),
        }
    }

    /// The vault's folder where the index was built (for links into Obsidian).
    pub fn vault_root(&self) -> Result<Option<String>, SearchError> {
        Ok(match self {
            SearchBackend::Local(s) => s.store().meta("vault_root")?,
            SearchBackend::Postgres(s) => s.meta("vault_root")?,
        })
    }
}

/// `url` when it names a PostgreSQL database, else a clear error (the only database backend).
pub fn checked_url(url: &str) -> Result<&str, AppError> {
    if quire_pg::is_database_url(url) {
        Ok(url)
    } else {
        Err(AppError::bad_arguments(
            "backend",
            format!(
                "`{}` is not a PostgreSQL URL (postgres://… or postgresql://…)",
                quire_pg::redacted(url)
            ),
        ))
    }
}

/// Copies the local index at `location` into the database at `url` as one generation (the
/// writer's step after a sync; see `quire_pg::publish`).
pub fn publish(
    location: &IndexLocation,
    url: &str,
    options: &PublishOptions,
) -> Result<PublishStats, AppError> {
    let store = Store::open(&location.store_path()).map_err(SearchError::from)?;
    let mut client = quire_pg::connect(checked_url(url)?).map_err(SearchError::from)?;
    Ok(quire_pg::publish(&store, &mut client, options).map_err(SearchError::from)?)
}

/// After a sync of the local index at `location`: publishes it to the database at `url` and
/// says so on stderr as `who` (a failure is reported, and the next sync's publish catches up:
/// it compares the whole index).
pub fn publish_after_sync(location: &IndexLocation, url: &str, vault_root: &str, who: &str) {
    let options = PublishOptions {
        rebuild: false,
        vault_root: Some(vault_root.to_string()),
    };
    match publish(location, url, &options) {
        Ok(p) => eprintln!(
            "{who}: published generation {} to the database ({} added, {} updated, {} removed) in {:.2}s",
            p.generation,
            p.added,
            p.updated,
            p.removed,
            p.millis as f64 / 1000.0
        ),
        Err(e) => eprintln!("{who}: publishing to the database failed: {e}"),
    }
}

/// What the database at `url` holds (for `quire status --backend`).
pub fn database_status(url: &str) -> Result<PgStatus, AppError> {
    let searcher = PgSearcher::connect(checked_url(url)?).map_err(SearchError::from)?;
    Ok(searcher.status().map_err(SearchError::from)?)
}
