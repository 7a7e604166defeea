//! `/api/proposals`: list, show, make, apply and reject proposed changes to the vault. Only
//! `apply` writes into the vault, and only what the proposal shows.
//!
//! Why a web page elsewhere cannot apply one (CSRF): the routes that change anything are
//! `POST`s with a JSON body, and `apply`/`reject` require `Content-Type: application/json` — a
//! type no HTML form can send and that a cross-origin `fetch` may send only after a CORS
//! preflight, which the guard answers for the page itself and Obsidian only. Browsers add
//! `Origin` to every `POST`, and a foreign one is refused (403) before any handler runs; a
//! rebound DNS name fails the loopback `Host` check; and when a token is set, every request,
//! these included, must carry it (a cookie is sent only to the page's own origin).

use std::sync::Arc;

use axum::Json;
use axum::extract::rejection::{JsonRejection, PathRejection, QueryRejection};
use axum::extract::{Path, Query, State};
use quire_app::args::ProposeNoteChangeArgs;
use quire_app::proposals::{self, ApplyOptions, ProposalStore, Status};
use serde_json::{Value, json};

use crate::AppState;
use crate::api::{Params, blocking, params};
use crate::error::ApiError;
use crate::generate::body;

fn store(state: &AppState) -> Result<ProposalStore, ApiError> {
    Ok(proposals::open_store(&state.live.root, &state.live.index)?)
}

fn proposal_id(id: Result<Path<String>, PathRejection>) -> Result<String, ApiError> {
    let Path(id) =
        id.map_err(|e| ApiError::bad_request(format!("bad proposal id: {}", e.body_text())))?;
    Ok(id)
}

/// `GET /api/proposals?all=true`: pending proposals (all of them with `all`), newest first.
pub(crate) async fn list(
    State(state): State<Arc<AppState>>,
    query: Result<Query<Params>, QueryRejection>,
) -> Result<Json<Value>, ApiError> {
    let params = params(query)?;
    let all = matches!(params.get("all").map(String::as_str), Some("true" | "1"));
    blocking(move || {
        let listing = store(&state)?.listing()?;
        let rows: Vec<_> = listing
            .proposals
            .into_iter()
            .filter(|p| all || p.status == Status::Pending)
            .collect();
        Ok(Json(
            json!({ "proposals": rows, "unreadable": listing.unreadable }),
        ))
    })
    .await
}

/// `GET /api/proposals/{id}`: one proposal with its changes and diff.
pub(crate) async fn show(
    State(state): State<Arc<AppState>>,
    id: Result<Path<String>, PathRejection>,
) -> Result<Json<Value>, ApiError> {
    let id = proposal_id(id)?;
    blocking(move || {
        let proposal = store(&state)?.get(&id)?;
        let diff = proposal.diff();
        let mut value =
            serde_json::to_value(&proposal).map_err(|e| ApiError::internal(e.to_string()))?;
        value["diff"] = Value::String(diff);
        Ok(Json(value))
    })
    .await
}

/// `POST /api/proposals` with `propose_note_change`'s arguments: a new pending proposal.
pub(crate) async fn create(
    State(state): State<Arc<AppState>>,
    request: Result<Json<ProposeNoteChangeArgs>, JsonRejection>,
) -> Result<Json<Value>, ApiError> {
    let args = body(request)?;
    blocking(move || {
        let proposal =
            proposals::propose_note_change(&store(&state)?, &args, "quire serve /api/proposals")?;
        Ok(Json(
            serde_json::to_value(&proposal).map_err(|e| ApiError::internal(e.to_string()))?,
        ))
    })
    .await
}

/// `POST /api/proposals/{id}/apply` (body `{}`): writes the proposal into the vault.
pub(crate) async fn apply(
    State(state): State<Arc<AppState>>,
    id: Result<Path<String>, PathRejection>,
    request: Result<Json<Value>, JsonRejection>,
) -> Result<Json<Value>, ApiError> {
    decide(state, id, request, |store, id| {
        json_of(&store.apply(id, &ApplyOptions::default())?)
    })
    .await
}

/// `POST /api/proposals/{id}/reject` (body `{}`): sets the proposal aside.
pub(crate) async fn reject(
    State(state): State<Arc<AppState>>,
    id: Result<Path<String>, PathRejection>,
    request: Result<Json<Value>, JsonRejection>,
) -> Result<Json<Value>, ApiError> {
    decide(state, id, request, |store, id| json_of(&store.reject(id)?)).await
}

/// A decision on one proposal: the id checked, a JSON body required (see the module docs), the
/// work run off the async workers.
async fn decide(
    state: Arc<AppState>,
    id: Result<Path<String>, PathRejection>,
    request: Result<Json<Value>, JsonRejection>,
    work: impl FnOnce(&ProposalStore, &str) -> Result<Json<Value>, ApiError> + Send + 'static,
) -> Result<Json<Value>, ApiError> {
    let id = proposal_id(id)?;
    body(request)?;
    blocking(move || work(&store(&state)?, &id)).await
}

fn json_of(value: &impl serde::Serialize) -> Result<Json<Value>, ApiError> {
    Ok(Json(
        serde_json::to_value(value).map_err(|e| ApiError::internal(e.to_string()))?,
    ))
}
