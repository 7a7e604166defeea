//! `POST /api/audit/deep`: `quire audit --deep` over HTTP, answered as one JSON object when it is
//! done (the CLI's `--json`). It takes one of the generation slots (429 `busy` beyond), so a long
//! audit never starves `ask`. `{"dry_run": true}` says what would be sent and sends nothing.

use std::sync::Arc;
use std::time::Duration;

use axum::Json;
use axum::extract::State;
use axum::extract::rejection::JsonRejection;
use quire_app::deep_audit::{DeepAuditOptions, deep_audit};
use quire_app::types::{CancelToken, MapOptions};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;

use crate::AppState;
use crate::api::{CancelOnDrop, blocking};
use crate::error::ApiError;
use crate::generate::{body, busy};

/// How long the audit waits for the first parse or the first sync.
const WAIT: Duration = Duration::from_secs(5);

/// The body of `POST /api/audit/deep`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct DeepBody {
    /// Only the plan: say what would be sent, send nothing.
    #[serde(default)]
    dry_run: bool,
    /// Forget cached records first.
    #[serde(default)]
    full: bool,
}

pub(crate) async fn deep(
    State(state): State<Arc<AppState>>,
    request: Result<Json<DeepBody>, JsonRejection>,
) -> Result<Json<Value>, ApiError> {
    let request = body(request)?;
    let permit = Arc::clone(&state.generating)
        .try_acquire_owned()
        .map_err(|_| busy())?;
    // A client that goes away (the plugin's Stop) stops the model's work: the notes it reviewed
    // keep their cached records, so the next run sends only the rest.
    let guard = CancelOnDrop(CancelToken::new());
    let cancel = guard.0.clone();
    let answer = blocking(move || {
        let _permit = permit;
        let snapshot = state.live.vault(WAIT)?;
        let searcher = state.live.searcher(WAIT).ok();
        let guard = searcher
            .as_ref()
            .map(|s| s.lock().unwrap_or_else(|p| p.into_inner()));
        let options = DeepAuditOptions {
            map: MapOptions {
                full: request.full,
                ..MapOptions::default()
            },
            dry_run: request.dry_run,
            ..DeepAuditOptions::default()
        };
        let report = deep_audit(
            &snapshot.vault,
            guard.as_deref(),
            &state.live.index,
            state.chat.as_deref(),
            &options,
            &cancel,
            &|_, _| {},
        )?;
        let value = serde_json::to_value(&report).map_err(|e| ApiError::internal(e.to_string()))?;
        Ok(Json(value))
    })
    .await;
    drop(guard);
    answer
}
