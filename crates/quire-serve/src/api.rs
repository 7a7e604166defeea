//! The JSON routes: search, notes, outlines, similar notes, status, the audit, and the OpenAPI
//! document.
//! Every handler runs its work on tokio's blocking pool (SQLite, tantivy and file reads block).

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use axum::Json;
use axum::extract::rejection::{PathRejection, QueryRejection};
use axum::extract::{Path, Query, State};
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use quire_app::args::{FindRelatedNotesArgs, GetNoteArgs, GetOutlineArgs};
use quire_app::limits::{
    MAX_PARAM_CHARS, MAX_PATH_CHARS, MAX_QUERY_CHARS, MAX_RESULT_BYTES, check_length,
};
use quire_app::resolve::check_request_path;
use quire_app::types::{Mode, SearchRequest};
use quire_app::{fit_result, ops as tools};
use serde_json::{Value, json};

use crate::AppState;
use crate::error::ApiError;

/// How long a search waits for the watcher's first sync when there is no index yet.
const INDEX_WAIT: Duration = Duration::from_secs(5);
pub(crate) type Params = HashMap<String, String>;

/// Runs blocking work off the async workers.
/// Cancels the model's work when the request is dropped (the client went away or pressed Stop):
/// hold it in the handler until the work's answer is in.
pub(crate) struct CancelOnDrop(pub(crate) quire_app::types::CancelToken);

impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        self.0.cancel();
    }
}

pub(crate) async fn blocking<T: Send + 'static>(
    work: impl FnOnce() -> Result<T, ApiError> + Send + 'static,
) -> Result<T, ApiError> {
    tokio::task::spawn_blocking(work)
        .await
        .map_err(|e| ApiError::internal(format!("the request failed inside the server: {e}")))?
}

/// The query parameters, or a JSON 400 when the query string cannot be decoded.
pub(crate) fn params(query: Result<Query<Params>, QueryRejection>) -> Result<Params, ApiError> {
    query
        .map(|Query(params)| params)
        .map_err(|e| ApiError::bad_request(format!("bad query string: {}", e.body_text())))
}

/// Every `where` parameter (it may repeat), each at most [`MAX_PARAM_CHARS`] characters.
fn where_params(list: &[(String, String)]) -> Result<Vec<String>, ApiError> {
    list.iter()
        .filter(|(name, value)| name == "where" && !value.trim().is_empty())
        .map(|(_, value)| {
            check_length("where", value, MAX_PARAM_CHARS).map_err(ApiError::bad_request)?;
            Ok(value.trim().to_string())
        })
        .collect()
}

/// An optional text parameter, trimmed, empty as absent, at most `max` characters.
pub(crate) fn text_param(
    params: &Params,
    name: &str,
    max: usize,
) -> Result<Option<String>, ApiError> {
    let Some(value) = params.get(name).map(|v| v.trim()).filter(|v| !v.is_empty()) else {
        return Ok(None);
    };
    check_length(name, value, max).map_err(ApiError::bad_request)?;
    Ok(Some(value.to_string()))
}

/// A count parameter in `1..=max`.
pub(crate) fn count_param(params: &Params, name: &str, default: u32) -> Result<u32, ApiError> {
    let Some(value) = params.get(name).filter(|v| !v.is_empty()) else {
        return Ok(default);
    };
    let max = quire_app::limits::MAX_RESULTS;
    match value.parse::<u64>() {
        Ok(k) => quire_app::limits::check_count(name, k, max)
            .map(|k| k as u32)
            .map_err(ApiError::bad_request),
        Err(_) => Err(ApiError::bad_request(quire_app::limits::count_message(
            name,
            &format!("`{value}`"),
            max,
        ))),
    }
}

/// The `mode` parameter: `hybrid`, `bm25` or `vector`.
pub(crate) fn mode_param(value: Option<&str>) -> Result<Option<Mode>, ApiError> {
    value
        .map(|m| m.parse::<Mode>().map_err(ApiError::bad_request))
        .transpose()
}

/// A note path from the URL, checked before any lookup.
pub(crate) fn note_path(path: Result<Path<String>, PathRejection>) -> Result<String, ApiError> {
    let Path(path) =
        path.map_err(|e| ApiError::bad_request(format!("bad note path: {}", e.body_text())))?;
    check_length("path", &path, MAX_PATH_CHARS).map_err(ApiError::bad_request)?;
    check_request_path(&path)?;
    Ok(path)
}

pub(crate) async fn openapi() -> Response {
    (
        [(header::CONTENT_TYPE, "application/json")],
        crate::openapi::document(),
    )
        .into_response()
}

pub(crate) async fn not_found() -> ApiError {
    ApiError::new(
        StatusCode::NOT_FOUND,
        "not_found",
        "no such route: see /api/openapi.json",
    )
}

pub(crate) async fn method_not_allowed() -> ApiError {
    ApiError::new(
        StatusCode::METHOD_NOT_ALLOWED,
        "method_not_allowed",
        "this route does not take that method: see /api/openapi.json",
    )
}

pub(crate) async fn search(
    State(state): State<Arc<AppState>>,
    query: Result<Query<Vec<(String, String)>>, QueryRejection>,
) -> Result<Json<Value>, ApiError> {
    let params_list = query
        .map(|Query(list)| list)
        .map_err(|e| ApiError::bad_request(format!("bad query string: {}", e.body_text())))?;
    let params: Params = params_list.iter().cloned().collect();
    let q = text_param(&params, "q", MAX_QUERY_CHARS)?
        .ok_or_else(|| ApiError::bad_request("`q` (the query) is missing or empty"))?;
    let k = count_param(&params, "k", 10)?;
    let mode = mode_param(
        params
            .get("mode")
            .map(String::as_str)
            .filter(|m| !m.is_empty()),
    )?;
    // `where` may repeat: `?where=status%3Ddone&where=rating%3E%3D7`.
    let conditions = where_params(&params_list)?;
    let filter = quire_app::ops::search_filter(
        text_param(&params, "folder", MAX_PARAM_CHARS)?,
        text_param(&params, "tag", MAX_PARAM_CHARS)?,
        &conditions,
        text_param(&params, "since", MAX_PARAM_CHARS)?,
        text_param(&params, "until", MAX_PARAM_CHARS)?,
    )
    .map_err(ApiError::bad_request)?;
    let explain = match params.get("explain").map(String::as_str) {
        None | Some("" | "false" | "0") => false,
        Some("true" | "1") => true,
        Some(other) => {
            return Err(ApiError::bad_request(format!(
                "`explain` is true or false, not `{}`",
                other.chars().take(40).collect::<String>()
            )));
        }
    };
    blocking(move || {
        let mut request = SearchRequest::new(q);
        request.k = k as usize;
        request.filter = filter;
        request.explain = explain;
        let results = state.live.search(INDEX_WAIT, mode, request)?;
        let value = serde_json::to_value(results)
            .map_err(|e| ApiError::internal(format!("cannot serialize the results: {e}")))?;
        Ok(Json(fit_result(value, MAX_RESULT_BYTES)))
    })
    .await
}

pub(crate) async fn note(
    State(state): State<Arc<AppState>>,
    path: Result<Path<String>, PathRejection>,
    query: Result<Query<Params>, QueryRejection>,
) -> Result<Json<Value>, ApiError> {
    let path = note_path(path)?;
    let params = params(query)?;
    let offset = match params.get("offset").filter(|v| !v.is_empty()) {
        None => None,
        Some(value) => Some(value.parse::<u32>().map_err(|_| {
            ApiError::bad_request(
                "`offset` must be a whole number of characters (from `next_offset`)",
            )
        })?),
    };
    let args = GetNoteArgs {
        path,
        lines: text_param(&params, "lines", MAX_PARAM_CHARS)?,
        heading: text_param(&params, "heading", MAX_PARAM_CHARS)?,
        offset,
    };
    blocking(move || Ok(Json(tools::get_note(&state.live, args)?))).await
}

pub(crate) async fn outline(
    State(state): State<Arc<AppState>>,
    path: Result<Path<String>, PathRejection>,
) -> Result<Json<Value>, ApiError> {
    let args = GetOutlineArgs {
        path: note_path(path)?,
    };
    blocking(move || Ok(Json(tools::get_outline(&state.live, args)?))).await
}

pub(crate) async fn similar(
    State(state): State<Arc<AppState>>,
    path: Result<Path<String>, PathRejection>,
    query: Result<Query<Params>, QueryRejection>,
) -> Result<Json<Value>, ApiError> {
    let path = note_path(path)?;
    let params = params(query)?;
    let args = FindRelatedNotesArgs {
        path,
        k: Some(count_param(&params, "k", 10)?),
    };
    blocking(move || Ok(Json(tools::find_related_notes(&state.live, args)?))).await
}

/// The most skipped files listed by `/api/status` (`skipped_total` counts them all).
const SKIPPED_SHOWN: usize = 200;

pub(crate) async fn status(State(state): State<Arc<AppState>>) -> Result<Json<Value>, ApiError> {
    blocking(move || {
        let mut value = json!({
            "version": env!("CARGO_PKG_VERSION"),
            "vault": state.vault_name,
            "vault_root": state.live.root,
            "index_dir": state.live.index.dir,
            "watching": state.watching,
            "syncing": state.sync.syncing.load(std::sync::atomic::Ordering::SeqCst),
            "started": state.started.to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
            "llm": state.chat.as_ref().map(|c| c.name()),
            "embedding_model": state.live.embedder.as_ref().map(|e| e.space().model),
        });
        value["last_sync"] = match state.sync.last.lock() {
            Ok(last) => last
                .as_ref()
                .map_or(Value::Null, |e| json!({"kind": e.kind, "data": e.data})),
            Err(_) => Value::Null,
        };
        match state.live.searcher(Duration::ZERO) {
            Ok(searcher) => {
                let searcher = searcher.lock().unwrap_or_else(|e| e.into_inner());
                let report = quire_app::StatusReport::of(
                    &searcher,
                    state.live.index.dir.clone(),
                    SKIPPED_SHOWN,
                )?;
                if let Value::Object(fields) = serde_json::to_value(&report).unwrap_or_default() {
                    for (key, field) in fields {
                        // The server's own root (canonical) stays as it is.
                        if key != "vault_root" {
                            value[key.as_str()] = field;
                        }
                    }
                }
                value["ready"] = true.into();
                value["default_mode"] = searcher.default_mode()?.to_string().into();
            }
            Err(e) => {
                value["ready"] = false.into();
                value["message"] = e.to_string().into();
            }
        }
        Ok(Json(value))
    })
    .await
}

/// `GET /api/audit?top=`: the structural audit of the vault as `quire audit --json` gives it
/// (`top`: hubs per ranking, 1 to 50), cut to the result budget when a large vault outgrows it
/// (the answer then says so in `cut_to_fit`).
pub(crate) async fn audit(
    State(state): State<Arc<AppState>>,
    query: Result<Query<Params>, QueryRejection>,
) -> Result<Json<Value>, ApiError> {
    let params = params(query)?;
    let options = quire_app::audit::AuditOptions {
        top: count_param(&params, "top", 10)? as usize,
        ..Default::default()
    };
    blocking(move || {
        let report = quire_app::audit::audit(&state.live, &options)?;
        let value = serde_json::to_value(report)
            .map_err(|e| ApiError::internal(format!("cannot serialize the audit: {e}")))?;
        Ok(Json(fit_result(value, MAX_RESULT_BYTES)))
    })
    .await
}
