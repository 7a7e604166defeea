//! `POST /api/moc`: maps of content for topic clusters, as proposals (`quire moc`). The body is
//! JSON (`{"cluster": 3}` or `{"all": true}`, optionally `"folder"`), like the other routes that
//! change anything (see `proposals` for the CSRF reasoning); nothing is written into the vault,
//! the proposals are applied through `/api/proposals/{id}/apply`. `POST /api/audit/canvas`
//! likewise proposes the vault's JSON Canvas map.

use std::sync::Arc;

use axum::Json;
use axum::extract::State;
use axum::extract::rejection::JsonRejection;
use quire_app::audit::Grouping;
use quire_app::limits::{MAX_PATH_CHARS, check_length};
use quire_app::moc::{MocChoice, MocRequest};
use quire_app::topics::TopicOptions;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

use crate::AppState;
use crate::api::blocking;
use crate::error::ApiError;
use crate::generate::body;

/// The body of `POST /api/moc`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct MocBody {
    /// One cluster, by its id in the audit's topics.
    #[schemars(range(min = 1))]
    cluster: Option<usize>,
    /// Every cluster (instead of `cluster`).
    #[serde(default)]
    all: bool,
    /// The vault folder the maps go in (default: the vault's root).
    #[schemars(length(max = MAX_PATH_CHARS))]
    folder: Option<String>,
}

/// `POST /api/moc`: `{"proposals": [...], "skipped": [...]}`.
pub(crate) async fn moc(
    State(state): State<Arc<AppState>>,
    request: Result<Json<MocBody>, JsonRejection>,
) -> Result<Json<Value>, ApiError> {
    let request = body(request)?;
    let choice = match (request.cluster, request.all) {
        (Some(id), false) => MocChoice::Cluster(id),
        (None, true) => MocChoice::All,
        _ => {
            return Err(ApiError::bad_request(
                "give either `cluster` (a topic id of /api/audit's topics) or `all: true`",
            ));
        }
    };
    if let Some(folder) = &request.folder {
        check_length("folder", folder, MAX_PATH_CHARS).map_err(ApiError::bad_request)?;
    }
    let request = MocRequest {
        choice,
        folder: request.folder,
        created: chrono::Local::now().date_naive(),
        topics: TopicOptions::default(),
        command: "quire serve POST /api/moc".to_string(),
    };
    blocking(move || {
        let outcome = quire_app::moc::propose_mocs_live(&state.live, &request)?;
        Ok(Json(serde_json::to_value(&outcome).map_err(|e| {
            ApiError::internal(format!("cannot serialize the maps: {e}"))
        })?))
    })
    .await
}

/// The body of `POST /api/audit/canvas`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct CanvasBody {
    /// The vault-relative `.canvas` file; default `Vault map.canvas`. Its folder must exist
    /// inside the vault (400 `path_outside_vault` otherwise, symbolic links resolved).
    #[schemars(length(max = MAX_PATH_CHARS))]
    path: Option<String>,
    /// How notes are grouped: `folder` (default) or `component`.
    #[schemars(extend("enum" = ["folder", "component", null]))]
    group: Option<String>,
}

/// The canvas map's default file, at the vault's root.
const CANVAS_PATH: &str = "Vault map.canvas";

/// `POST /api/audit/canvas`: the vault's JSON Canvas map as a proposal (`quire audit --canvas`
/// inside the vault): `{"proposal": {...}}`, applied through `/api/proposals/{id}/apply`.
pub(crate) async fn canvas(
    State(state): State<Arc<AppState>>,
    request: Result<Json<CanvasBody>, JsonRejection>,
) -> Result<Json<Value>, ApiError> {
    let request = body(request)?;
    let path = request.path.unwrap_or_else(|| CANVAS_PATH.to_string());
    check_length("path", &path, MAX_PATH_CHARS).map_err(ApiError::bad_request)?;
    let group: Grouping = match request.group.as_deref() {
        None => Grouping::Folder,
        Some(name) => name
            .parse()
            .map_err(|e: quire_app::audit::UnknownGrouping| ApiError::bad_request(e.to_string()))?,
    };
    blocking(move || {
        let proposal = quire_app::audit::propose_canvas_live(
            &state.live,
            &path,
            group,
            "quire serve POST /api/audit/canvas",
        )?;
        Ok(Json(json!({ "proposal": proposal })))
    })
    .await
}
