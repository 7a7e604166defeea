//! `POST /api/ask`, `POST /api/draft` and `POST /api/reflect`: answers written from the notes,
//! streamed as server-sent events.
//!
//! `ask` is multi-turn: its `done` object carries a `conversation` id; sending it back with the
//! next question continues that conversation (earlier sources keep their ids, the model sees the
//! earlier turns, a follow-up is searched together with the question before it).
//!
//! A request is answered in two phases. First, before the response starts, the context is
//! retrieved and every passage re-read from its file and verified (`quire_app::ask`):
//! a problem there (no index, an unknown note) is an ordinary JSON error with its status. Then
//! the stream: `token` events (`{"text"}`, the answer as shown, citations already checked), and
//! one `done` event with the whole result (`quire ask --json`'s object: `answer`, `citations`,
//! `invalid_citations`, `sources` (the source cards), `warnings`, `retrieval`), or one `error`
//! event (`{"error": {"code", "message"}}`). A client that goes away cancels the model call.
//!
//! Without a configured model the answer is extractive (ask) or the gathered material (draft),
//! as on the command line. Drafts are never written into the note here.

use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;

use axum::Json;
use axum::extract::State;
use axum::extract::rejection::JsonRejection;
use axum::http::StatusCode;
use axum::response::sse::{Event, KeepAlive, Sse};
use futures_util::Stream;
use quire_app::draft::write_draft;
use quire_app::limits::{
    MAX_CONTEXT_NOTES, MAX_PARAM_CHARS, MAX_PATH_CHARS, MAX_QUESTION_CHARS, check_length,
};
use quire_app::ops::MAX_CONDITIONS;
use quire_app::reflect::DaysAsked;
use quire_app::reflect::write_reflection;
use quire_app::resolve::resolve_note_path;
use quire_app::types::{AssistError, CancelToken, ContextLimits, FrozenContext, Mode, Retriever};
use schemars::JsonSchema;
use serde::Deserialize;
use serde::Serialize;
use serde_json::{Value, json};
use tokio::sync::mpsc;

use crate::AppState;
use crate::api::{blocking, mode_param};
use crate::error::ApiError;

/// How long retrieval waits for the watcher's first sync when there is no index yet.
const INDEX_WAIT: Duration = Duration::from_secs(5);

/// The body of `POST /api/ask`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct AskBody {
    /// The question.
    #[schemars(length(max = MAX_QUESTION_CHARS))]
    question: String,
    /// How passages are searched: `hybrid`, `bm25` or `vector` (default: hybrid when the index
    /// has embeddings).
    #[schemars(extend("enum" = ["hybrid", "bm25", "vector", null]))]
    mode: Option<String>,
    /// Notes in the final context (default 6).
    #[schemars(range(min = 1, max = MAX_CONTEXT_NOTES))]
    notes: Option<u32>,
    /// Continue this conversation (the `conversation` of an earlier answer's `done` event).
    #[schemars(length(max = MAX_PARAM_CHARS))]
    conversation: Option<String>,
    /// `hybrid` (search, the default), `tree` (the model descends the vault), `auto` (search,
    /// then descent when the evidence is weak or the question is about structure). `tree`
    /// needs a language model.
    #[schemars(extend("enum" = ["hybrid", "tree", "auto", null]))]
    retriever: Option<String>,
    /// Only passages of notes in this folder (at any depth).
    #[schemars(length(max = MAX_PARAM_CHARS))]
    folder: Option<String>,
    /// Only passages of notes with this tag (or one below it).
    #[schemars(length(max = MAX_PARAM_CHARS))]
    tag: Option<String>,
    /// Frontmatter conditions, as `/api/search`'s `where` (all must pass).
    #[serde(rename = "where", default)]
    #[schemars(length(max = MAX_CONDITIONS), inner(length(max = MAX_PARAM_CHARS)))]
    conditions: Vec<String>,
    /// Only notes dated on or after this day (`YYYY-MM-DD`).
    #[schemars(extend("format" = "date"), length(max = MAX_PARAM_CHARS))]
    since: Option<String>,
    /// Only notes dated on or before this day (`YYYY-MM-DD`).
    #[schemars(extend("format" = "date"), length(max = MAX_PARAM_CHARS))]
    until: Option<String>,
    /// Ask this one note or PDF (vault-relative path, `.md` optional, or its file name): only its
    /// passages, found through the index. Search answers (a `retriever` of tree or auto is not
    /// used: the descent reads the whole vault). 404 `note_not_found` when the index has no
    /// such note.
    #[schemars(length(max = MAX_PARAM_CHARS))]
    note: Option<String>,
    /// Have the language model first write a passage that could answer the question, and search
    /// with the question and that passage (finds notes worded unlike the question; one short
    /// model call). Needs a language model.
    #[serde(default)]
    expand: bool,
}

/// The body of `POST /api/reflect`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct ReflectBody {
    /// An ISO week (`2026-W48`); or give `from` and `to`; neither: the seven days ending today.
    #[schemars(example = "2026-W48")]
    week: Option<String>,
    /// The first day (`YYYY-MM-DD`).
    #[schemars(extend("format" = "date"))]
    from: Option<String>,
    /// The last day (`YYYY-MM-DD`).
    #[schemars(extend("format" = "date"))]
    to: Option<String>,
    /// Code points of daily-note text given to the model, shared among the days (default
    /// 12,000).
    #[schemars(range(min = 1, max = quire_app::limits::MAX_REFLECT_BUDGET))]
    budget: Option<usize>,
}

/// The body of `POST /api/draft`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct DraftBody {
    /// The note (vault-relative path or name).
    #[schemars(length(max = MAX_PATH_CHARS))]
    note: String,
    /// The section: `## Section` or `Section`.
    #[schemars(length(max = MAX_PARAM_CHARS), example = "## Setup")]
    heading: String,
    /// How its material is searched: `hybrid`, `bm25` or `vector`.
    #[schemars(extend("enum" = ["hybrid", "bm25", "vector", null]))]
    mode: Option<String>,
}

/// What the generating thread sends to the response stream.
pub(crate) enum Streamed {
    Text(String),
    Done(Value),
    Failed(ApiError),
}

pub(crate) fn body<T>(body: Result<Json<T>, JsonRejection>) -> Result<T, ApiError> {
    body.map(|Json(b)| b).map_err(|rejection| {
        let status = rejection.status();
        let code = match status {
            StatusCode::PAYLOAD_TOO_LARGE => "payload_too_large",
            StatusCode::UNSUPPORTED_MEDIA_TYPE => "unsupported_media_type",
            _ => "bad_request",
        };
        let status = if code == "bad_request" {
            StatusCode::BAD_REQUEST
        } else {
            status
        };
        ApiError::new(status, code, rejection.body_text())
    })
}

pub(crate) fn busy() -> ApiError {
    ApiError::new(
        StatusCode::TOO_MANY_REQUESTS,
        "busy",
        "answers are being written for other requests: try again when one has finished",
    )
}

pub(crate) fn limited(text: &str, name: &str, max: usize) -> Result<String, ApiError> {
    let text = text.trim();
    if text.is_empty() {
        return Err(ApiError::bad_request(format!("`{name}` is empty")));
    }
    check_length(name, text, max).map_err(ApiError::bad_request)?;
    Ok(text.to_string())
}

/// How an `/api/ask` request retrieves, from its body.
struct AskChoices {
    mode: Option<Mode>,
    limits: ContextLimits,
    retriever: Retriever,
    filter: quire_app::types::Filter,
    expand: bool,
}

/// Retrieves and freezes the context of a question (the application's ask flow, as `quire ask`).
fn ask_context(
    state: &AppState,
    question: &str,
    query: &str,
    choices: AskChoices,
) -> Result<FrozenContext, ApiError> {
    let request = quire_app::ask::AskRequest {
        question,
        query,
        mode: choices.mode,
        limits: choices.limits,
        today: chrono::Local::now().date_naive(),
        retriever: choices.retriever,
        model: state.chat.as_deref(),
        filter: choices.filter,
        expand: choices.expand,
    };
    Ok(state.live.with_answer_index(INDEX_WAIT, |index| {
        quire_app::ask::ask_context(index, &state.reader, &request)
    })??)
}

pub(crate) async fn ask(
    State(state): State<Arc<AppState>>,
    request: Result<Json<AskBody>, JsonRejection>,
) -> Result<Sse<impl Stream<Item = Result<Event, Infallible>>>, ApiError> {
    let request = body(request)?;
    let question = limited(&request.question, "question", MAX_QUESTION_CHARS)?;
    for text in [
        &request.folder,
        &request.tag,
        &request.since,
        &request.until,
        &request.note,
    ]
    .into_iter()
    .flatten()
    .chain(&request.conditions)
    {
        check_length("filter", text, MAX_PARAM_CHARS).map_err(ApiError::bad_request)?;
    }
    let mut filter = quire_app::ops::search_filter(
        request.folder.clone(),
        request.tag.clone(),
        &request.conditions,
        request.since.clone(),
        request.until.clone(),
    )
    .map_err(ApiError::bad_request)?;
    // The one note asked, as given: the core resolves it against the index.
    filter.note = request.note.clone();
    let retriever = match request.retriever.as_deref() {
        None => Retriever::Hybrid,
        Some(name) => name.parse::<Retriever>().map_err(ApiError::bad_request)?,
    };
    let mode = mode_param(request.mode.as_deref())?;
    let limits =
        quire_app::limits::context_limits(request.notes.map(u64::from), None, None, None, None)
            .map_err(ApiError::bad_request)?;
    if let Some(id) = &request.conversation {
        check_length("conversation", id, MAX_PARAM_CHARS).map_err(ApiError::bad_request)?;
    }
    let permit = Arc::clone(&state.generating)
        .try_acquire_owned()
        .map_err(|_| busy())?;
    let turn = state.conversations.take(request.conversation.as_deref())?;
    let query = turn.conversation.retrieval_query(&question);
    let frozen = {
        let state = Arc::clone(&state);
        let question = question.clone();
        let choices = AskChoices {
            mode,
            limits,
            retriever,
            filter,
            expand: request.expand,
        };
        blocking(move || ask_context(&state, &question, &query, choices)).await
    };
    let frozen = match frozen {
        Ok(frozen) => frozen,
        Err(e) => {
            state.conversations.put_back(turn, false);
            return Err(e);
        }
    };
    let (sender, receiver) = mpsc::channel(256);
    tokio::task::spawn_blocking(move || {
        let _permit = permit;
        let cancel = CancelToken::new();
        let mut turn = turn;
        let mut sink = text_sink(&sender, &cancel);
        let mut frozen = Some(frozen);
        let mut answered = None;
        // The sentences are checked with the live index's embedder (words only without, or
        // when the index cannot be had now).
        let _ = state.live.with_answer_index(INDEX_WAIT, |index| {
            if let Some(frozen) = frozen.take() {
                answered = Some(quire_app::ask::answer_turn(
                    &mut turn.conversation,
                    state.chat.as_deref(),
                    frozen,
                    &question,
                    Some(index),
                    false,
                    &cancel,
                    &mut sink,
                ));
            }
        });
        let answered = match (answered, frozen) {
            (Some(answered), _) => answered,
            (None, Some(frozen)) => quire_app::ask::answer_turn(
                &mut turn.conversation,
                state.chat.as_deref(),
                frozen,
                &question,
                None,
                false,
                &cancel,
                &mut sink,
            ),
            (None, None) => Err(AssistError::Unusable(
                "the answer could not be written".into(),
            )),
        }
        .map(|answered| answered.answer);
        let id = turn.id.clone();
        state.conversations.put_back(turn, answered.is_ok());
        let answered = answered.map(|answer| {
            let mut value = serde_json::to_value(&answer).unwrap_or_default();
            value["conversation"] = id.into();
            value
        });
        finish(&sender, answered);
    });
    Ok(stream(receiver))
}

pub(crate) async fn reflect(
    State(state): State<Arc<AppState>>,
    request: Result<Json<ReflectBody>, JsonRejection>,
) -> Result<Sse<impl Stream<Item = Result<Event, Infallible>>>, ApiError> {
    let request = body(request)?;
    let budget = quire_app::limits::check_count(
        "budget",
        request
            .budget
            .map_or(quire_app::limits::REFLECT_BUDGET, |b| b as u64),
        quire_app::limits::MAX_REFLECT_BUDGET,
    )
    .map_err(ApiError::bad_request)?;
    let asked = DaysAsked {
        week: request.week.as_deref(),
        from: request.from.as_deref(),
        to: request.to.as_deref(),
    };
    let range = asked.range(chrono::Local::now().date_naive())?;
    let permit = Arc::clone(&state.generating)
        .try_acquire_owned()
        .map_err(|_| busy())?;
    let (days, skipped) = {
        let state = Arc::clone(&state);
        blocking(move || Ok(quire_app::reflect::days_of(&state.reader, range)?)).await?
    };
    let (sender, receiver) = mpsc::channel(256);
    tokio::task::spawn_blocking(move || {
        let _permit = permit;
        let cancel = CancelToken::new();
        let written = write_reflection(
            state.chat.as_deref(),
            range,
            &days,
            budget,
            &cancel,
            &mut text_sink(&sender, &cancel),
        );
        let written = written.map(|mut reflection| {
            reflection.warnings.extend(
                skipped
                    .iter()
                    .map(|s| format!("skipped {}: {}", s.path, s.message)),
            );
            reflection
        });
        finish(&sender, written);
    });
    Ok(stream(receiver))
}

pub(crate) async fn draft(
    State(state): State<Arc<AppState>>,
    request: Result<Json<DraftBody>, JsonRejection>,
) -> Result<Sse<impl Stream<Item = Result<Event, Infallible>>>, ApiError> {
    let request = body(request)?;
    let note = limited(&request.note, "note", MAX_PATH_CHARS)?;
    let heading = limited(&request.heading, "heading", MAX_PARAM_CHARS)?;
    let mode = mode_param(request.mode.as_deref())?;
    let permit = Arc::clone(&state.generating)
        .try_acquire_owned()
        .map_err(|_| busy())?;
    let (target, frozen) = {
        let state = Arc::clone(&state);
        blocking(move || {
            let path = resolve_note_path(&state.live, &note)?;
            Ok(state.live.with_answer_index(INDEX_WAIT, |index| {
                quire_app::draft::draft_context(
                    index,
                    &state.reader,
                    &path,
                    &heading,
                    mode,
                    ContextLimits::default(),
                )
            })??)
        })
        .await?
    };
    let (sender, receiver) = mpsc::channel(256);
    tokio::task::spawn_blocking(move || {
        let _permit = permit;
        let cancel = CancelToken::new();
        let written = write_draft(
            state.chat.as_deref(),
            &target,
            frozen,
            &cancel,
            &mut text_sink(&sender, &cancel),
        );
        finish(&sender, written);
    });
    Ok(stream(receiver))
}

/// Passes streamed text on; when the client has gone, cancels the model call instead.
pub(crate) fn text_sink<'a>(
    sender: &'a mpsc::Sender<Streamed>,
    cancel: &'a CancelToken,
) -> impl FnMut(&str) + 'a {
    move |text: &str| {
        if !text.is_empty()
            && sender
                .blocking_send(Streamed::Text(text.to_string()))
                .is_err()
        {
            cancel.cancel();
        }
    }
}

/// Sends the final event: the result, or the error.
pub(crate) fn finish<T: Serialize>(
    sender: &mpsc::Sender<Streamed>,
    result: Result<T, AssistError>,
) {
    let last = match result {
        Ok(value) => match serde_json::to_value(&value) {
            Ok(value) => Streamed::Done(value),
            Err(e) => Streamed::Failed(ApiError::internal(format!(
                "cannot serialize the answer: {e}"
            ))),
        },
        // The client is gone; nobody reads this.
        Err(e) if e.is_cancelled() => return,
        Err(e) => Streamed::Failed(e.into()),
    };
    let _ = sender.blocking_send(last);
}

pub(crate) fn stream(
    receiver: mpsc::Receiver<Streamed>,
) -> Sse<impl Stream<Item = Result<Event, Infallible>>> {
    let events = futures_util::stream::unfold(receiver, |mut receiver| async move {
        let event = match receiver.recv().await? {
            Streamed::Text(text) => Event::default()
                .event("token")
                .data(json!({ "text": text }).to_string()),
            Streamed::Done(value) => Event::default().event("done").data(value.to_string()),
            Streamed::Failed(error) => Event::default()
                .event("error")
                .data(error.body().to_string()),
        };
        Some((Ok(event), receiver))
    });
    Sse::new(events).keep_alive(KeepAlive::new().interval(Duration::from_secs(15)))
}
