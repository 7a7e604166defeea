//! Endpoints, agents and the retried JSON request.

use std::time::Duration;

use serde::de::DeserializeOwned;
use ureq::RequestBuilder;
use ureq::typestate::WithBody;

use crate::cancel::CancelToken;
use crate::retry::{RetryPolicy, parse_retry_after, sleep_unless_cancelled};

/// Where an OpenAI-compatible server is, and which environment variable holds its key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Endpoint {
    /// Up to and including `/v1` (e.g. `http://127.0.0.1:11434/v1`); a trailing `/` is ignored.
    pub base_url: String,
    /// The variable the API key is read from, at request time; `None`: no key.
    pub api_key_env: Option<String>,
}

impl Endpoint {
    /// An endpoint at `base_url` (up to and including `/v1`) whose key, if any, is read from the
    /// variable named `api_key_env`.
    pub fn new(base_url: impl Into<String>, api_key_env: Option<String>) -> Endpoint {
        Endpoint {
            base_url: base_url.into(),
            api_key_env,
        }
    }

    /// `base_url` + `/` + `path`.
    pub fn url(&self, path: &str) -> String {
        format!(
            "{}/{}",
            self.base_url.trim_end_matches('/'),
            path.trim_start_matches('/')
        )
    }

    /// The API key, read now from the variable named by `api_key_env` (an empty value is no key).
    pub fn api_key(&self) -> Option<String> {
        let name = self.api_key_env.as_deref()?;
        std::env::var(name)
            .ok()
            .filter(|key| !key.trim().is_empty())
    }

    /// A POST to `path` with a JSON body type and the key (if any) as a bearer token.
    pub fn post(&self, agent: &ureq::Agent, path: &str) -> RequestBuilder<WithBody> {
        let request = agent
            .post(&self.url(path))
            .header("Content-Type", "application/json");
        match self.api_key() {
            Some(key) => request.header("Authorization", &format!("Bearer {key}")),
            None => request,
        }
    }
}

/// An agent that waits `connect` for a connection and `read` for each read, and returns HTTP
/// error statuses as responses (so their bodies and `Retry-After` can be read).
pub fn agent(connect: Duration, read: Duration) -> ureq::Agent {
    ureq::Agent::new_with_config(
        ureq::Agent::config_builder()
            .timeout_connect(Some(connect))
            .timeout_per_read(Some(read))
            .http_status_as_error(false)
            .build(),
    )
}

/// Why a request got no usable answer.
#[derive(Debug, thiserror::Error)]
pub enum HttpError {
    /// No response: the server could not be reached, or the connection failed.
    #[error("{url}: {source}")]
    Transport {
        /// The URL requested.
        url: String,
        /// Why the request failed.
        #[source]
        source: ureq::Error,
    },
    /// The server answered with an error status (after any retries).
    #[error("{url}: HTTP {status}: {message}")]
    Status {
        /// The URL requested.
        url: String,
        /// The HTTP status code of the last attempt.
        status: u16,
        /// The start of the response body.
        message: String,
    },
    /// A 2xx response whose body is not what was expected.
    #[error("{url}: unreadable response: {source}")]
    Decode {
        /// The URL requested.
        url: String,
        /// Why the body could not be read as the expected JSON.
        #[source]
        source: ureq::Error,
    },
    /// The [`CancelToken`] was cancelled before an attempt or during a wait between attempts.
    #[error("cancelled")]
    Cancelled,
}

/// Whether a status is worth trying again: rate limits and server errors.
pub fn is_retryable(status: u16) -> bool {
    status == 429 || status >= 500
}

/// POSTs `body` to `path` and decodes the JSON answer, retrying 429, 5xx and failed connections
/// by `policy` (the server's `Retry-After` first). `cancel` stops the waits between attempts.
pub fn post_json<T: DeserializeOwned>(
    agent: &ureq::Agent,
    endpoint: &Endpoint,
    path: &str,
    body: &serde_json::Value,
    policy: &RetryPolicy,
    cancel: &CancelToken,
) -> Result<T, HttpError> {
    let url = endpoint.url(path);
    let mut retry = 0;
    loop {
        if cancel.is_cancelled() {
            return Err(HttpError::Cancelled);
        }
        let (failure, retry_after) = match endpoint.post(agent, path).send_json(body) {
            Ok(mut response) => {
                let status = response.status().as_u16();
                if (200..300).contains(&status) {
                    return response
                        .body_mut()
                        .read_json()
                        .map_err(|source| HttpError::Decode { url, source });
                }
                let retry_after = response
                    .headers()
                    .get("retry-after")
                    .and_then(|v| v.to_str().ok())
                    .and_then(parse_retry_after);
                let text = response.body_mut().read_to_string().unwrap_or_default();
                let failure = HttpError::Status {
                    url: url.clone(),
                    status,
                    message: text.chars().take(300).collect(),
                };
                if !is_retryable(status) {
                    return Err(failure);
                }
                (failure, retry_after)
            }
            Err(source) => (
                HttpError::Transport {
                    url: url.clone(),
                    source,
                },
                None,
            ),
        };
        let Some(wait) = policy.delay(retry, retry_after) else {
            return Err(failure);
        };
        if !sleep_unless_cancelled(wait, cancel) {
            return Err(HttpError::Cancelled);
        }
        retry += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_join_without_double_slashes() {
        let endpoint = Endpoint::new("http://h:1/v1/", None);
        assert_eq!(endpoint.url("/embeddings"), "http://h:1/v1/embeddings");
        assert_eq!(
            endpoint.url("chat/completions"),
            "http://h:1/v1/chat/completions"
        );
    }

    #[test]
    fn the_key_is_read_from_the_named_variable() {
        // PATH is set in every test environment; the other name in none.
        let path = std::env::var("PATH").unwrap_or_default();
        let endpoint = Endpoint::new("http://h", Some("PATH".to_string()));
        assert_eq!(endpoint.api_key(), Some(path).filter(|p| !p.is_empty()));
        let unset = Endpoint::new("http://h", Some("QUIRE_OPENAI_NO_SUCH_VARIABLE".into()));
        assert_eq!(unset.api_key(), None);
        assert_eq!(Endpoint::new("http://h", None).api_key(), None);
    }

    #[test]
    fn only_rate_limits_and_server_errors_are_retried() {
        assert!(is_retryable(429) && is_retryable(500) && is_retryable(503));
        assert!(!is_retryable(400) && !is_retryable(401) && !is_retryable(404));
    }
}
