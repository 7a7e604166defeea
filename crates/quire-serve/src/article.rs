//! `POST /api/article/ask` `{"text", "name"?, "question"}`: an answer from a pasted article
//! that is not in the vault, streamed like `/api/ask` (server-sent events: `token`s, then
//! `done` with `quire ask --file --json`'s object, or `error`).
//!
//! The flow is `quire_app::article`'s: the text chunked with the vault's settings, embedded with
//! the server's model (vectors cached in `<index>/article-cache/`), retrieved in memory, and
//! answered with the usual `[S1]` citations; source cards point at the article's lines
//! (`name:12-18`). The article is bounded by the body limit (64 KiB with the JSON around it);
//! chunking and embedding happen before the stream starts, so a problem there is an ordinary
//! JSON error. Nothing is written into the vault or the index's store.

use std::convert::Infallible;
use std::sync::Arc;

use axum::Json;
use axum::extract::State;
use axum::extract::rejection::JsonRejection;
use axum::response::sse::{Event, Sse};
use futures_util::Stream;
use quire_app::article::{Article, VectorCache};
use quire_app::limits::{MAX_PATH_CHARS, MAX_QUESTION_CHARS, check_length};
use quire_app::types::{AssistError, CancelToken, ContextLimits};
use schemars::JsonSchema;
use serde::Deserialize;
use tokio::sync::mpsc;

use crate::AppState;
use crate::api::blocking;
use crate::error::ApiError;
use crate::generate::{body, busy, finish, limited, stream, text_sink};

/// The body of `POST /api/article/ask`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct ArticleAskBody {
    /// The article's Markdown or plain text (the whole body is at most 64 KiB).
    text: String,
    /// How its passages are named in source cards and citations' places (`name:12-18`);
    /// default `article`.
    #[schemars(length(max = quire_app::limits::MAX_PATH_CHARS))]
    name: Option<String>,
    /// The question.
    #[schemars(length(max = MAX_QUESTION_CHARS))]
    question: String,
}

pub(crate) async fn ask(
    State(state): State<Arc<AppState>>,
    request: Result<Json<ArticleAskBody>, JsonRejection>,
) -> Result<Sse<impl Stream<Item = Result<Event, Infallible>>>, ApiError> {
    let request = body(request)?;
    let question = limited(&request.question, "question", MAX_QUESTION_CHARS)?;
    if request.text.trim().is_empty() {
        return Err(ApiError::bad_request("`text` is empty: paste the article"));
    }
    let name = request.name.unwrap_or_default();
    check_length("name", &name, MAX_PATH_CHARS).map_err(ApiError::bad_request)?;
    let permit = Arc::clone(&state.generating)
        .try_acquire_owned()
        .map_err(|_| busy())?;
    let text = request.text;
    let article = {
        let state = Arc::clone(&state);
        blocking(move || {
            let cache = VectorCache::in_index(&state.live.index.dir);
            Ok(Article::load(
                &name,
                &text,
                state.reader.settings(),
                state.live.embedder.clone(),
                Some(&cache),
            )?)
        })
        .await?
    };
    let (sender, receiver) = mpsc::channel(256);
    tokio::task::spawn_blocking(move || {
        let _permit = permit;
        let cancel = CancelToken::new();
        let answered = quire_app::article::ask(
            state.chat.as_deref(),
            &article,
            &question,
            &ContextLimits::default(),
            &cancel,
            &mut text_sink(&sender, &cancel),
        );
        let answered = answered.map_err(|e| match e {
            quire_app::AppError::Assist(e) => e,
            other => AssistError::Unusable(other.to_string()),
        });
        finish(&sender, answered);
    });
    Ok(stream(receiver))
}
