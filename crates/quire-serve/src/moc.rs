//! `POST /api/moc`: maps of content for topic clusters, as proposals (`quire moc`). The body is
//! JSON (`{"cluster": 3}` or `{"all": true}`, optionally `"folder"`), like the other routes that
//! change anything (see `proposals` for the CSRF reasoning); nothing is written into the vault,
//! the proposals are applied through `/api/proposals/{id}/apply`.

use std::sync::Arc;

use axum::Json;
use axum::extract::State;
use axum::extract::rejection::JsonRejection;
use quire_app::limits::{MAX_PATH_CHARS, check_length};
use quire_app::moc::{MocChoice, MocRequest};
use quire_app::topics::TopicOptions;
use serde::Deserialize;
use serde_json::Value;

use crate::AppState;
use crate::api::blocking;
use crate::error::ApiError;
use crate::generate::body;

/// The body of `POST /api/moc`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct MocBody {
    /// One cluster, by its id in the audit's topics.
    cluster: Option<usize>,
    /// Every cluster.
    #[serde(default)]
    all: bool,
    /// The vault folder the maps go in (default: the root).
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
