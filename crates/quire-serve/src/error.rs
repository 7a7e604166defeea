//! Errors: [`ServeError`] keeps the server from starting or serving; [`ApiError`] is one failed
//! request, sent as `{"error": {"code", "message"}}` with a stable `code` that clients can match.

use std::net::SocketAddr;
use std::path::PathBuf;

use axum::Json;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use quire_app::AppError;
use quire_index::IndexError;
use quire_search::SearchError;
use quire_vault::VaultError;
use serde_json::json;

/// What keeps `quire serve` (or `quire watch`) from starting, or stops it.
#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    #[error(
        "binding {addr} (not a loopback address) requires a token: pass --token or set QUIRE_TOKEN (at least {min} characters)"
    )]
    TokenRequired { addr: SocketAddr, min: usize },
    #[error(
        "the token must be at least {min} characters long, not counting spaces or other whitespace (it is trimmed)"
    )]
    WeakToken { min: usize },
    #[error(
        "the token must not contain control characters (tabs, line breaks, escapes): use letters, digits and punctuation"
    )]
    TokenControlCharacters,
    #[error("bad --host `{host}`: {reason}")]
    BadHost { host: String, reason: String },
    #[error("cannot listen on {addr}: {source}")]
    Bind {
        addr: SocketAddr,
        #[source]
        source: std::io::Error,
    },
    #[error(
        "index is locked by pid {pid}: another `quire serve` or `quire watch` keeps this index in sync (lock file {}); stop it, or start this one with --no-watch",
        path.display()
    )]
    AlreadyWatched { pid: String, path: PathBuf },
    #[error("cannot start the async runtime: {0}")]
    Runtime(#[source] std::io::Error),
    #[error(transparent)]
    Index(#[from] IndexError),
    #[error(transparent)]
    Vault(#[from] VaultError),
    #[error(transparent)]
    Live(#[from] quire_app::StartError),
    #[error(transparent)]
    Assist(#[from] quire_assist::AssistError),
    #[error(transparent)]
    Watch(#[from] quire_watch::WatchError),
    #[error("server: {0}")]
    Server(#[source] std::io::Error),
}

/// One failed request. `code` is part of the API (see `openapi.json`); `message` is for people.
#[derive(Debug, Clone)]
pub struct ApiError {
    pub status: StatusCode,
    pub code: &'static str,
    pub message: String,
}

impl ApiError {
    pub fn new(status: StatusCode, code: &'static str, message: impl Into<String>) -> Self {
        ApiError {
            status,
            code,
            message: message.into(),
        }
    }

    pub fn bad_request(message: impl Into<String>) -> Self {
        ApiError::new(StatusCode::BAD_REQUEST, "bad_request", message)
    }

    pub fn internal(message: impl Into<String>) -> Self {
        ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, "internal", message)
    }

    /// The JSON body, also sent as the `error` event of a stream.
    pub fn body(&self) -> serde_json::Value {
        json!({"error": {"code": self.code, "message": self.message}})
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        (self.status, Json(self.body())).into_response()
    }
}

impl From<VaultError> for ApiError {
    fn from(e: VaultError) -> Self {
        let message = e.to_string();
        match e {
            VaultError::OutsideVault(_) => {
                ApiError::new(StatusCode::BAD_REQUEST, "path_outside_vault", message)
            }
            VaultError::NoteNotFound(_) => {
                ApiError::new(StatusCode::NOT_FOUND, "note_not_found", message)
            }
            VaultError::BadRequest(_) => ApiError::bad_request(message),
            _ => ApiError::internal(message),
        }
    }
}

impl From<SearchError> for ApiError {
    fn from(e: SearchError) -> Self {
        let message = e.to_string();
        match e {
            SearchError::NoIndex(_) => {
                ApiError::new(StatusCode::SERVICE_UNAVAILABLE, "no_index", message)
            }
            SearchError::NoEmbeddings(_) => {
                ApiError::new(StatusCode::CONFLICT, "no_embeddings", message)
            }
            SearchError::NoNote(_) => {
                ApiError::new(StatusCode::NOT_FOUND, "note_not_indexed", message)
            }
            SearchError::Index(IndexError::SpaceMismatch { .. }) => {
                ApiError::new(StatusCode::CONFLICT, "embedding_space_mismatch", message)
            }
            SearchError::Index(IndexError::Vault(e)) => e.into(),
            // The remote embeddings endpoint failed or answered nonsense: not our fault.
            SearchError::Embed(
                quire_embed::EmbedError::Http(_) | quire_embed::EmbedError::Response(_),
            ) => ApiError::new(StatusCode::BAD_GATEWAY, "embedding_error", message),
            _ => ApiError::internal(message),
        }
    }
}

impl From<AppError> for ApiError {
    fn from(e: AppError) -> Self {
        let message = e.to_string();
        match e {
            AppError::BadArguments { message, .. } => ApiError::bad_request(message),
            AppError::Vault(e) => e.into(),
            AppError::Search(e) => e.into(),
            AppError::Assist(e) => e.into(),
            AppError::Unreadable { .. } => {
                ApiError::new(StatusCode::UNPROCESSABLE_ENTITY, "note_unreadable", message)
            }
            AppError::NotReady(_) => {
                ApiError::new(StatusCode::SERVICE_UNAVAILABLE, "not_ready", message)
            }
            AppError::NotFound(_) => ApiError::new(StatusCode::NOT_FOUND, "not_found", message),
            AppError::Busy(_) => ApiError::new(StatusCode::CONFLICT, "busy", message),
            AppError::UnknownResource(_) => {
                ApiError::new(StatusCode::NOT_FOUND, "not_found", message)
            }
            AppError::Internal(_) => ApiError::internal(message),
        }
    }
}

impl From<quire_assist::AssistError> for ApiError {
    fn from(e: quire_assist::AssistError) -> Self {
        use quire_assist::AssistError as E;
        let message = e.to_string();
        match e {
            E::Search(e) => e.into(),
            E::Vault(e) => e.into(),
            E::Unreadable { .. } => {
                ApiError::new(StatusCode::UNPROCESSABLE_ENTITY, "note_unreadable", message)
            }
            E::Unusable(_) => ApiError::bad_request(message),
            E::Llm(_) => ApiError::new(StatusCode::BAD_GATEWAY, "llm_error", message),
            _ => ApiError::internal(message),
        }
    }
}
