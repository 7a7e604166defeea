//! Errors: [`ServeError`] keeps the server from starting or serving; [`ApiError`] is one failed
//! request, sent as `{"error": {"code", "message"}}` with a stable `code` that clients can match.

use std::net::SocketAddr;
use std::path::PathBuf;

use axum::Json;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use quire_app::AppError;
use quire_app::proposals::ProposalError;
use quire_app::types::{AssistError, EmbedError, IndexError, SearchError, VaultError, WatchError};
use serde_json::json;

/// What keeps `quire serve` (or `quire watch`) from starting, or stops it.
#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    /// The server would listen beyond loopback without a token.
    #[error(
        "binding {addr} (not a loopback address) requires a token: pass --token or set QUIRE_TOKEN (at least {min} characters)"
    )]
    TokenRequired {
        /// The address asked for.
        addr: SocketAddr,
        /// [`crate::MIN_TOKEN_LEN`].
        min: usize,
    },
    /// The token has fewer than `min` characters that are not whitespace.
    #[error(
        "the token must be at least {min} characters long, not counting spaces or other whitespace (it is trimmed)"
    )]
    WeakToken {
        /// [`crate::MIN_TOKEN_LEN`].
        min: usize,
    },
    /// The token holds a control character.
    #[error(
        "the token must not contain control characters (tabs, line breaks, escapes): use letters, digits and punctuation"
    )]
    TokenControlCharacters,
    /// `--host` is neither an IP address nor a name that resolves.
    #[error("bad --host `{host}`: {reason}")]
    BadHost {
        /// `--host` as given.
        host: String,
        /// Why it names no address: the resolver's error, or that it resolved to none.
        reason: String,
    },
    /// The listener could not bind `addr` (or read its local address).
    #[error("cannot listen on {addr}: {source}")]
    Bind {
        /// The address asked for (port 0: any free port).
        addr: SocketAddr,
        /// The operating system's reason.
        #[source]
        source: std::io::Error,
    },
    /// Another `quire serve` or `quire watch` holds the watcher's lock of this index.
    #[error(
        "index is locked by pid {pid}: another `quire serve` or `quire watch` keeps this index in sync (lock file {}); stop it, or start this one with --no-watch",
        path.display()
    )]
    AlreadyWatched {
        /// The process holding the lock, as its lock file records it.
        pid: String,
        /// The lock file.
        path: PathBuf,
    },
    /// The tokio runtime could not be built.
    #[error("cannot start the async runtime: {0}")]
    Runtime(#[source] std::io::Error),
    /// The index directory could not be created or its watcher's lock taken.
    #[error(transparent)]
    Index(#[from] IndexError),
    /// The vault's running state could not start: the vault, a thread or the watcher.
    #[error(transparent)]
    Live(#[from] quire_app::StartError),
    /// The vault's settings (for reading notes into answers) could not be loaded.
    #[error(transparent)]
    Assist(#[from] AssistError),
    /// `quire watch` could not start its watcher.
    #[error(transparent)]
    Watch(#[from] WatchError),
    /// The HTTP server failed while serving.
    #[error("server: {0}")]
    Server(#[source] std::io::Error),
}

/// One failed request. `code` is part of the API (see `openapi.json`); `message` is for people.
#[derive(Debug, Clone)]
pub struct ApiError {
    /// The response's HTTP status.
    pub status: StatusCode,
    /// A stable, machine-readable name (`bad_request`, `note_not_found`, …), listed in
    /// `openapi.json`.
    pub code: &'static str,
    /// What went wrong, for people.
    pub message: String,
}

impl ApiError {
    /// An error with this status, code and message.
    pub fn new(status: StatusCode, code: &'static str, message: impl Into<String>) -> Self {
        ApiError {
            status,
            code,
            message: message.into(),
        }
    }

    /// 400, code `bad_request`: the request's arguments are wrong.
    pub fn bad_request(message: impl Into<String>) -> Self {
        ApiError::new(StatusCode::BAD_REQUEST, "bad_request", message)
    }

    /// 500, code `internal`: a failure that is not the client's.
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
            SearchError::Embed(EmbedError::Http(_) | EmbedError::Response(_)) => {
                ApiError::new(StatusCode::BAD_GATEWAY, "embedding_error", message)
            }
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
            AppError::Busy(_) => ApiError::new(StatusCode::CONFLICT, "conversation_busy", message),
            AppError::ConversationFull(_) => {
                ApiError::new(StatusCode::CONFLICT, "conversation_full", message)
            }
            AppError::Proposal(e) => e.into(),
            AppError::Internal(_) => ApiError::internal(message),
        }
    }
}

impl From<AssistError> for ApiError {
    fn from(e: AssistError) -> Self {
        use AssistError as E;
        let message = e.to_string();
        match e {
            E::Search(e) => e.into(),
            E::Vault(e) => e.into(),
            E::Unreadable { .. } => {
                ApiError::new(StatusCode::UNPROCESSABLE_ENTITY, "note_unreadable", message)
            }
            E::Unusable(_) => ApiError::bad_request(message),
            E::Changed { .. } => ApiError::new(StatusCode::CONFLICT, "note_changed", message),
            E::Llm(_) => ApiError::new(StatusCode::BAD_GATEWAY, "llm_error", message),
            _ => ApiError::internal(message),
        }
    }
}

impl From<ProposalError> for ApiError {
    fn from(e: ProposalError) -> Self {
        let message = e.to_string();
        match e {
            ProposalError::NotFound(_) => {
                ApiError::new(StatusCode::NOT_FOUND, "proposal_not_found", message)
            }
            ProposalError::NotPending { .. } => {
                ApiError::new(StatusCode::CONFLICT, "proposal_not_pending", message)
            }
            ProposalError::Changed { .. } => {
                ApiError::new(StatusCode::CONFLICT, "note_changed", message)
            }
            ProposalError::Exists { .. } => {
                ApiError::new(StatusCode::CONFLICT, "file_exists", message)
            }
            ProposalError::BadChange { .. } | ProposalError::TooLarge(_) => {
                ApiError::bad_request(message)
            }
            ProposalError::Busy => ApiError::new(StatusCode::CONFLICT, "apply_busy", message),
            ProposalError::Tampered { .. } => ApiError::new(
                StatusCode::UNPROCESSABLE_ENTITY,
                "proposal_tampered",
                message,
            ),
            ProposalError::Write(_) | ProposalError::Io { .. } | ProposalError::Corrupt { .. } => {
                ApiError::internal(message)
            }
        }
    }
}
