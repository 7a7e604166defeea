//! `GET /api/questions/{path}`: the questions a note or a folder answers (`quire questions`),
//! one per topic of its paragraphs, as one JSON object (`quire questions --json`'s). With a
//! language model configured, the model writes the questions, which takes one model call per
//! topic and counts as one of the answers being written (429 `busy` when none is free); without
//! one, each topic shows its most central passage. Nothing is written.

use std::sync::Arc;

use axum::Json;
use axum::extract::rejection::PathRejection;
use axum::extract::{Path, State};
use quire_app::types::CancelToken;
use serde_json::Value;

use crate::AppState;
use crate::api::{CancelOnDrop, blocking, note_path};
use crate::error::ApiError;
use crate::generate::busy;

pub(crate) async fn questions(
    State(state): State<Arc<AppState>>,
    path: Result<Path<String>, PathRejection>,
) -> Result<Json<Value>, ApiError> {
    let target = note_path(path)?;
    let permit = match state.chat {
        Some(_) => Some(
            Arc::clone(&state.generating)
                .try_acquire_owned()
                .map_err(|_| busy())?,
        ),
        None => None,
    };
    let guard = CancelOnDrop(CancelToken::new());
    let cancel = guard.0.clone();
    let answer = blocking(move || {
        let _permit = permit;
        let found = quire_app::questions::questions_live(
            &state.live,
            &state.reader,
            &target,
            state.chat.as_deref(),
            &cancel,
        )?;
        serde_json::to_value(&found)
            .map_err(|e| ApiError::internal(format!("cannot serialize the questions: {e}")))
    })
    .await?;
    drop(guard);
    Ok(Json(answer))
}
