//! `/api/findings`: the audit's findings as an inbox (`quire findings`), and dismissing or
//! snoozing one. Both decisions are JSON `POST`s (the reasoning of `proposals` holds: another
//! site cannot send one) and write only `<index>/findings.json`, never the vault.

use std::sync::Arc;

use axum::Json;
use axum::extract::rejection::{JsonRejection, PathRejection};
use axum::extract::{Path, State};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

use crate::AppState;
use crate::api::blocking;
use crate::error::ApiError;
use crate::generate::body;

fn finding_id(id: Result<Path<String>, PathRejection>) -> Result<String, ApiError> {
    let Path(id) = id.map_err(|e| ApiError::bad_request(e.body_text()))?;
    Ok(id)
}

fn today() -> chrono::NaiveDate {
    chrono::Local::now().date_naive()
}

/// `GET /api/findings`: the findings to look at, what is new since the last run, how many are
/// dismissed and snoozed.
pub(crate) async fn list(State(state): State<Arc<AppState>>) -> Result<Json<Value>, ApiError> {
    blocking(move || {
        let report = quire_app::audit::audit(&state.live, &Default::default())?;
        let inbox = quire_app::findings::inbox(&state.live.index.dir, &report, today())?;
        let value = serde_json::to_value(inbox)
            .map_err(|e| ApiError::internal(format!("cannot serialize the findings: {e}")))?;
        Ok(Json(quire_app::fit_result(
            value,
            quire_app::limits::MAX_RESULT_BYTES,
        )))
    })
    .await
}

/// `POST /api/findings/{id}/dismiss` (body `{}`): out of the inbox for good.
pub(crate) async fn dismiss(
    State(state): State<Arc<AppState>>,
    id: Result<Path<String>, PathRejection>,
    request: Result<Json<Value>, JsonRejection>,
) -> Result<Json<Value>, ApiError> {
    let id = finding_id(id)?;
    body(request)?;
    blocking(move || {
        quire_app::findings::dismiss(&state.live.index.dir, &id)?;
        Ok(Json(json!({ "id": id, "dismissed": true })))
    })
    .await
}

/// The body of `POST /api/findings/{id}/snooze`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct SnoozeBody {
    /// Days to leave it out of the inbox.
    #[schemars(range(min = 1, max = quire_app::findings::MAX_SNOOZE_DAYS))]
    days: u64,
}

/// `POST /api/findings/{id}/snooze` (body `{"days": N}`): out of the inbox until then.
pub(crate) async fn snooze(
    State(state): State<Arc<AppState>>,
    id: Result<Path<String>, PathRejection>,
    request: Result<Json<SnoozeBody>, JsonRejection>,
) -> Result<Json<Value>, ApiError> {
    let id = finding_id(id)?;
    let days = body(request)?.days;
    blocking(move || {
        let until = quire_app::findings::snooze(&state.live.index.dir, &id, days, today())?;
        Ok(Json(json!({ "id": id, "until": until })))
    })
    .await
}
