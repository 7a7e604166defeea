//! The writing tools over HTTP: `POST /api/flashcards`, `/api/split`, `/api/transform`,
//! `/api/complete`, `/api/dataview` and `/api/batch`. Each answers one JSON object when done with
//! the proposal it made (nothing is written into the vault until the proposal is applied through
//! `/api/proposals/{id}/apply`). The model calls take one of the generation slots (429 `busy`
//! beyond), like `ask`.

use std::sync::Arc;
use std::time::Duration;

use axum::Json;
use axum::extract::State;
use axum::extract::rejection::JsonRejection;
use quire_app::limits::{MAX_PARAM_CHARS, MAX_PATH_CHARS, check_length};
use quire_app::notetools::{self, BatchSelect, Selection};
use quire_app::proposals::{ProposalStore, open_store};
use quire_app::resolve::resolve_note_path;
use quire_app::types::{CancelToken, Preset};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

use crate::AppState;
use crate::api::blocking;
use crate::error::ApiError;
use crate::generate::{body, busy};

/// How long a tool waits for the first parse of the vault.
const WAIT: Duration = Duration::from_secs(5);

/// Longest instruction (`transform`, `batch`) and Dataview question, in characters.
const MAX_INSTRUCTION_CHARS: usize = 2_000;

/// The body of `POST /api/flashcards`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct FlashcardsBody {
    /// The note (a path or a name resolved like a wikilink).
    #[schemars(length(max = MAX_PATH_CHARS))]
    note: String,
}

/// The body of `POST /api/split`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct SplitBody {
    /// The note (a path or a name resolved like a wikilink).
    #[schemars(length(max = MAX_PATH_CHARS))]
    note: String,
    /// Split at its headings even when a language model is configured.
    #[serde(default)]
    by_headings: bool,
}

/// The body of `POST /api/transform`: what to rewrite (`lines` or `heading`; neither: the whole
/// body) and how (`preset` or `instruction`).
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct TransformBody {
    /// The note (a path or a name resolved like a wikilink).
    #[schemars(length(max = MAX_PATH_CHARS))]
    note: String,
    /// Lines `A-B` (1-based, inclusive).
    #[schemars(length(max = MAX_PARAM_CHARS), example = "12-18")]
    lines: Option<String>,
    /// A heading's section.
    #[schemars(length(max = MAX_PARAM_CHARS))]
    heading: Option<String>,
    /// `improve`, `shorten`, `grammar`, `examples` or `translate:LANGUAGE`.
    #[schemars(length(max = MAX_PARAM_CHARS), example = "translate:French")]
    preset: Option<String>,
    /// An instruction in your words (instead of `preset`).
    #[schemars(length(max = MAX_INSTRUCTION_CHARS))]
    instruction: Option<String>,
}

/// The body of `POST /api/complete`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct CompleteBody {
    /// The note (a path or a name resolved like a wikilink).
    #[schemars(length(max = MAX_PATH_CHARS))]
    note: String,
    /// Continue after this line (1-based; default: the note's end).
    #[schemars(range(min = 1))]
    at: Option<usize>,
    /// Cite the vault's other notes (searched for the paragraph).
    #[serde(default)]
    smart: bool,
}

/// The body of `POST /api/dataview`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct DataviewBody {
    /// What the query should find, in your words.
    #[schemars(length(min = 1, max = MAX_INSTRUCTION_CHARS))]
    question: String,
    /// Add the query to this note (a proposal; a path or a name resolved like a wikilink).
    #[schemars(length(max = MAX_PATH_CHARS))]
    into: Option<String>,
}

/// The body of `POST /api/batch`: which notes (any of `folder`, `tag`, `property`, `query`) and
/// how to transform each (`preset` or `instruction`).
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct BatchBody {
    /// Notes in this folder.
    #[schemars(length(max = MAX_PARAM_CHARS))]
    folder: Option<String>,
    /// Notes with this tag.
    #[schemars(length(max = MAX_PARAM_CHARS))]
    tag: Option<String>,
    /// Notes with this property (`name` or `name=value`).
    #[schemars(length(max = MAX_PARAM_CHARS))]
    property: Option<String>,
    /// The notes a search finds.
    #[schemars(length(max = MAX_PARAM_CHARS))]
    query: Option<String>,
    /// As `transform`'s.
    #[schemars(length(max = MAX_PARAM_CHARS))]
    preset: Option<String>,
    /// As `transform`'s.
    #[schemars(length(max = MAX_INSTRUCTION_CHARS))]
    instruction: Option<String>,
    /// Only the plan: which notes, and nothing proposed.
    #[serde(default)]
    dry_run: bool,
}

fn bad(message: impl Into<String>) -> ApiError {
    ApiError::bad_request(message.into())
}

/// The limits each body's type states in the OpenAPI document (`#[schemars(length(…))]`),
/// enforced: `(name, value, most characters)`.
fn within(fields: &[(&str, Option<&str>, usize)]) -> Result<(), ApiError> {
    for (name, value, max) in fields {
        if let Some(value) = value {
            check_length(name, value, *max).map_err(bad)?;
        }
    }
    Ok(())
}

fn instruction(preset: Option<&str>, text: Option<&str>) -> Result<String, ApiError> {
    match (preset, text) {
        (Some(preset), None) => Ok(preset.parse::<Preset>().map_err(bad)?.instruction()),
        (None, Some(text)) if !text.trim().is_empty() => {
            check_length("instruction", text, MAX_INSTRUCTION_CHARS).map_err(bad)?;
            Ok(text.trim().to_string())
        }
        _ => Err(bad("give either `preset` or a non-empty `instruction`")),
    }
}

fn store(state: &AppState) -> Result<ProposalStore, ApiError> {
    Ok(open_store(&state.live.root, &state.live.index)?)
}

fn to_json(value: &impl serde::Serialize) -> Result<Json<Value>, ApiError> {
    Ok(Json(
        serde_json::to_value(value).map_err(|e| ApiError::internal(e.to_string()))?,
    ))
}

/// Runs `work` off the async workers with a generation slot held.
async fn with_slot(
    state: Arc<AppState>,
    work: impl FnOnce(&AppState) -> Result<Json<Value>, ApiError> + Send + 'static,
) -> Result<Json<Value>, ApiError> {
    let permit = Arc::clone(&state.generating)
        .try_acquire_owned()
        .map_err(|_| busy())?;
    blocking(move || {
        let _permit = permit;
        work(&state)
    })
    .await
}

/// `POST /api/flashcards` `{"note"}`.
pub(crate) async fn flashcards(
    State(state): State<Arc<AppState>>,
    request: Result<Json<FlashcardsBody>, JsonRejection>,
) -> Result<Json<Value>, ApiError> {
    let request = body(request)?;
    within(&[("note", Some(&request.note), MAX_PATH_CHARS)])?;
    with_slot(state, move |state| {
        let path = resolve_note_path(&state.live, &request.note)?;
        let outcome = notetools::flashcards(
            &store(state)?,
            &state.reader,
            &path,
            state.chat.as_deref(),
            &CancelToken::new(),
        )?;
        to_json(&outcome)
    })
    .await
}

/// `POST /api/split` `{"note", "by_headings"?}`.
pub(crate) async fn split(
    State(state): State<Arc<AppState>>,
    request: Result<Json<SplitBody>, JsonRejection>,
) -> Result<Json<Value>, ApiError> {
    let request = body(request)?;
    within(&[("note", Some(&request.note), MAX_PATH_CHARS)])?;
    with_slot(state, move |state| {
        let path = resolve_note_path(&state.live, &request.note)?;
        let snapshot = state.live.vault(WAIT)?;
        let mut paths: Vec<String> = snapshot
            .vault
            .notes
            .iter()
            .map(|n| n.path.clone())
            .collect();
        paths.extend(snapshot.vault.attachments.iter().cloned());
        let outcome = notetools::split(
            &store(state)?,
            &state.reader,
            &paths,
            &path,
            state.chat.as_deref(),
            request.by_headings,
            &CancelToken::new(),
        )?;
        to_json(&outcome)
    })
    .await
}

/// `POST /api/transform` `{"note", "lines"? | "heading"?, "preset" | "instruction"}`.
pub(crate) async fn transform(
    State(state): State<Arc<AppState>>,
    request: Result<Json<TransformBody>, JsonRejection>,
) -> Result<Json<Value>, ApiError> {
    let request = body(request)?;
    within(&[
        ("note", Some(&request.note), MAX_PATH_CHARS),
        ("lines", request.lines.as_deref(), MAX_PARAM_CHARS),
        ("heading", request.heading.as_deref(), MAX_PARAM_CHARS),
        ("preset", request.preset.as_deref(), MAX_PARAM_CHARS),
    ])?;
    let instruction = instruction(request.preset.as_deref(), request.instruction.as_deref())?;
    let selection = Selection::of(request.lines.as_deref(), request.heading.as_deref())?;
    with_slot(state, move |state| {
        let path = resolve_note_path(&state.live, &request.note)?;
        let proposal = notetools::transform(
            &store(state)?,
            &state.reader,
            &path,
            &selection,
            &instruction,
            state.chat.as_deref(),
            &CancelToken::new(),
        )?;
        to_json(&json!({ "proposal": proposal }))
    })
    .await
}

/// `POST /api/complete` `{"note", "at"?, "smart"?}`.
pub(crate) async fn complete(
    State(state): State<Arc<AppState>>,
    request: Result<Json<CompleteBody>, JsonRejection>,
) -> Result<Json<Value>, ApiError> {
    let request = body(request)?;
    within(&[("note", Some(&request.note), MAX_PATH_CHARS)])?;
    with_slot(state, move |state| {
        let path = resolve_note_path(&state.live, &request.note)?;
        let searcher = if request.smart {
            Some(state.live.searcher(WAIT)?)
        } else {
            None
        };
        let guard = searcher
            .as_ref()
            .map(|s| s.lock().unwrap_or_else(|p| p.into_inner()));
        let outcome = notetools::complete(
            &store(state)?,
            &state.reader,
            guard.as_deref(),
            &path,
            request.at,
            state.chat.as_deref(),
            true,
            &CancelToken::new(),
            &mut |_| {},
        )?;
        to_json(&outcome)
    })
    .await
}

/// `POST /api/dataview` `{"question", "into"?}`.
pub(crate) async fn dataview(
    State(state): State<Arc<AppState>>,
    request: Result<Json<DataviewBody>, JsonRejection>,
) -> Result<Json<Value>, ApiError> {
    let request = body(request)?;
    if request.question.trim().is_empty() {
        return Err(bad("`question` is empty"));
    }
    within(&[
        ("question", Some(&request.question), MAX_INSTRUCTION_CHARS),
        ("into", request.into.as_deref(), MAX_PATH_CHARS),
    ])?;
    with_slot(state, move |state| {
        let snapshot = state.live.vault(WAIT)?;
        let into = match &request.into {
            Some(note) => Some(resolve_note_path(&state.live, note)?),
            None => None,
        };
        let store = store(state)?;
        let outcome = notetools::dataview(
            &snapshot.vault,
            &request.question,
            state.chat.as_deref(),
            into.as_deref().map(|p| (&store, &state.reader, p)),
            &CancelToken::new(),
        )?;
        to_json(&outcome)
    })
    .await
}

/// `POST /api/batch` `{"folder"?, "tag"?, "property"?, "query"?, "preset" | "instruction",
/// "dry_run"?}`: the plan, and unless `dry_run` one proposal per note.
pub(crate) async fn batch(
    State(state): State<Arc<AppState>>,
    request: Result<Json<BatchBody>, JsonRejection>,
) -> Result<Json<Value>, ApiError> {
    let request = body(request)?;
    let instruction = instruction(request.preset.as_deref(), request.instruction.as_deref())?;
    within(&[
        ("folder", request.folder.as_deref(), MAX_PARAM_CHARS),
        ("tag", request.tag.as_deref(), MAX_PARAM_CHARS),
        ("property", request.property.as_deref(), MAX_PARAM_CHARS),
        ("query", request.query.as_deref(), MAX_PARAM_CHARS),
        ("preset", request.preset.as_deref(), MAX_PARAM_CHARS),
    ])?;
    with_slot(state, move |state| {
        let snapshot = state.live.vault(WAIT)?;
        let select = BatchSelect {
            folder: request.folder,
            tag: request.tag,
            property: request.property,
            query: request.query,
        };
        let searcher = match &select.query {
            Some(_) => Some(state.live.searcher(WAIT)?),
            None => None,
        };
        let guard = searcher
            .as_ref()
            .map(|s| s.lock().unwrap_or_else(|p| p.into_inner()));
        let plan = notetools::batch_plan(
            &snapshot.vault,
            guard.as_deref(),
            &select,
            &instruction,
            &state.live.index,
        )?;
        drop(guard);
        if request.dry_run {
            return to_json(&json!({ "plan": plan }));
        }
        let model = state.chat.as_deref().ok_or_else(|| {
            bad("`batch` needs a language model (see `quire config`); `dry_run` works without one")
        })?;
        let outcome = notetools::run_batch(
            &store(state)?,
            &state.reader,
            &plan,
            &instruction,
            model,
            2,
            &CancelToken::new(),
            &|_, _| {},
        )?;
        to_json(&json!({ "plan": plan, "outcome": outcome }))
    })
    .await
}
