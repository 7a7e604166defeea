//! The questions a note or a folder answers (the ask-an-article seed's suggested questions, over
//! the vault), once for every face: `quire questions` and `GET /api/questions/{path}`.
//!
//! Two steps, so a face can say what it is about to do before the model is called: [`plan`]
//! reads the scope's indexed paragraphs (their vectors from the index, their text verified
//! against the files) and groups them into topics; [`ask`] has the model write one question per
//! topic, handing each to the face's sink as it is ready. Without a model each topic shows its
//! most central passage instead. Nothing is written.

use std::path::Path;

use quire_assist::AssistError;
use quire_assist::ask::AnswerKind;
use quire_assist::context::{Dropped, Passage, SourceReader};
use quire_llm::{CancelToken, ChatModel};
use quire_search::Searcher;
use quire_vault::vault::check_confined;
use serde::Serialize;

use crate::error::AppError;
use crate::live::{INDEX_WAIT, Live};
use crate::resolve::{check_request_path, resolve_note_path};

pub use quire_assist::questions::{PassageRef, Scope, Topic, ask_questions};

/// The topics of paragraphs read outside the index (an article): `k` by their number, and the
/// paragraphs grouped into `k` topics by their vectors (each topic's passages).
pub fn topics_of(
    paragraphs: Vec<quire_assist::questions::Paragraph>,
) -> (usize, Vec<Vec<quire_assist::Passage>>) {
    let k = quire_assist::questions::cluster_count(paragraphs.len());
    (k, quire_assist::questions::topics(paragraphs, k))
}

/// The tool's name in errors.
const QUESTIONS: &str = "questions";

/// A scope's paragraphs grouped into topics, before any question is written.
#[derive(Debug, Clone)]
pub struct TopicPlan {
    /// The note or folder.
    pub scope: Scope,
    /// How many paragraphs were grouped.
    pub paragraphs: usize,
    /// The topics, each its passages closest to its centre first.
    pub topics: Vec<Vec<Passage>>,
    /// Indexed chunks that no longer match their files, left out.
    pub dropped: Vec<Dropped>,
}

/// The questions of a scope, as every face shows them.
#[derive(Debug, Clone, Serialize)]
pub struct Questions {
    /// The note's path, or the folder with a trailing `/`.
    pub scope: String,
    /// `generated` (the model wrote the questions) or `extractive` (central passages).
    pub kind: AnswerKind,
    /// How many paragraphs were grouped.
    pub paragraphs: usize,
    /// How many topics they made.
    pub k: usize,
    /// One per topic.
    pub topics: Vec<Topic>,
    /// Indexed chunks that no longer match their files, left out.
    pub dropped: Vec<Dropped>,
}

/// The scope `target` names inside the vault at `root`: a folder (vault-relative, `""` or `/`
/// for the whole vault), else a note looked up by `find_note` (its vault-relative path).
pub fn scope_of(
    root: &Path,
    target: &str,
    find_note: impl FnOnce(&str) -> Result<String, AppError>,
) -> Result<Scope, AppError> {
    let relative = target.trim().trim_matches('/');
    if relative.is_empty() {
        return Ok(Scope::Folder(String::new()));
    }
    check_confined(relative)?;
    check_request_path(relative)?;
    let folder = root.join(relative);
    if folder.is_dir() {
        if let Ok(canonical) = folder.canonicalize()
            && !canonical.starts_with(root)
        {
            return Err(quire_vault::VaultError::OutsideVault(target.to_string()).into());
        }
        return Ok(Scope::Folder(relative.to_string()));
    }
    Ok(Scope::Note(find_note(target.trim())?))
}

/// [`scope_of`] for a server's vault: notes are resolved like every other note path a client
/// sends.
pub fn scope_live(live: &Live, target: &str) -> Result<Scope, AppError> {
    scope_of(&live.root, target, |query| resolve_note_path(live, query))
}

/// Reads `scope`'s paragraphs and groups them by their vectors (no embedding call: the vectors
/// are the index's).
pub fn plan(
    searcher: &Searcher,
    reader: &SourceReader,
    scope: Scope,
) -> Result<TopicPlan, AppError> {
    let (paragraphs, dropped) = quire_assist::questions::load_paragraphs(searcher, reader, &scope)?;
    if paragraphs.is_empty() {
        return Err(AppError::bad_arguments(
            QUESTIONS,
            format!(
                "no indexed paragraphs with vectors in {scope}: run `quire index` (with the embedding model)"
            ),
        ));
    }
    let n = paragraphs.len();
    let k = quire_assist::questions::cluster_count(n);
    Ok(TopicPlan {
        scope,
        paragraphs: n,
        topics: quire_assist::questions::topics(paragraphs, k),
        dropped,
    })
}

/// Writes one question per topic of `plan` with `model` (each handed to `on_topic` when ready),
/// or, without a model, shows each topic's central passage. A cancelled `cancel` ends it with
/// the model's cancellation error, as [`crate::ask::answer_turn`] does.
pub fn ask(
    plan: TopicPlan,
    model: Option<&dyn ChatModel>,
    cancel: &CancelToken,
    on_topic: &mut dyn FnMut(&Topic),
) -> Result<Questions, AssistError> {
    let topics = quire_assist::questions::ask_questions(model, &plan.topics, cancel, on_topic)?;
    Ok(Questions {
        scope: plan.scope.to_string(),
        kind: if model.is_some() {
            AnswerKind::Generated
        } else {
            AnswerKind::Extractive
        },
        paragraphs: plan.paragraphs,
        k: plan.topics.len(),
        topics,
        dropped: plan.dropped,
    })
}

/// The questions of the scope `target` names in a server's vault, whole (no streaming).
pub fn questions_live(
    live: &Live,
    reader: &SourceReader,
    target: &str,
    model: Option<&dyn ChatModel>,
    cancel: &CancelToken,
) -> Result<Questions, AppError> {
    let scope = scope_live(live, target)?;
    let searcher = live.searcher(INDEX_WAIT)?;
    let plan = {
        let searcher = searcher.lock().unwrap_or_else(|e| e.into_inner());
        plan(&searcher, reader, scope)?
    };
    Ok(ask(plan, model, cancel, &mut |_| {})?)
}
