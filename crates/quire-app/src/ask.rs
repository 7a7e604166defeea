//! The ask flow, once for every face: a question's passages are retrieved and frozen before the
//! model is called. A date phrase ("last week", "on Jan 5", "2026-W48") limits the candidates to
//! the daily notes of those days, with room for one note per day (up to the candidate count).

use chrono::NaiveDate;
use quire_assist::FrozenContext;
use quire_assist::context::{self, ContextLimits, RetrievalRequest, SourceReader};
use quire_assist::dates::date_range_in;
use quire_assist::reflect::daily_paths_in;
use quire_search::{Mode, Searcher};

use crate::error::AppError;

/// What to retrieve for one question.
#[derive(Debug, Clone)]
pub struct AskRequest<'a> {
    /// The question as asked (its date phrase is read from it).
    pub question: &'a str,
    /// The text searched for: the question, or in a conversation the question with what it
    /// refers back to.
    pub query: &'a str,
    /// The retriever; `None` is the index's default (hybrid with embeddings, else BM25).
    pub mode: Option<Mode>,
    pub limits: ContextLimits,
    /// The day date phrases are read against.
    pub today: NaiveDate,
}

/// Retrieves the passages for `request` from the index `searcher` reads, re-reads them from the
/// vault through `reader` (only passages that still match the file are kept) and freezes them.
pub fn ask_context(
    searcher: &Searcher,
    reader: &SourceReader,
    request: &AskRequest<'_>,
) -> Result<FrozenContext, AppError> {
    let mut limits = request.limits;
    let mut retrieval = RetrievalRequest::new(request.query, limits);
    retrieval.mode = match request.mode {
        Some(mode) => mode,
        None => searcher.default_mode()?,
    };
    if let Some(range) = date_range_in(request.question, request.today) {
        let notes = searcher
            .store()
            .notes()
            .map_err(quire_search::SearchError::from)?;
        let days = daily_paths_in(reader, notes.iter().map(|n| n.path.as_str()), range);
        // A date phrase asks about every day of its range: room for one note per day.
        limits.notes = limits.notes.max(days.len().min(limits.candidate_notes));
        retrieval.limits = limits;
        retrieval.only = Some(days);
        retrieval.date_range = Some(range);
    }
    let found = context::retrieve(searcher, &retrieval)?;
    Ok(context::materialize(reader, found, &limits))
}
