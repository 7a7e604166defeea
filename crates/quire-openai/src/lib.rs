//! The one OpenAI-compatible HTTP client of quire. Chat (`quire-llm`) and remote embeddings
//! (`quire-embed`) both speak to their servers through it, so they share:
//!
//! - [`Endpoint`]: a base URL and the *name* of the environment variable that holds the API key.
//!   The key is read when a request is sent and never stored in a struct, a config file or a
//!   log line.
//! - [`agent`]: the `ureq` agent with connect and read timeouts (HTTP statuses are answers, not
//!   transport errors).
//! - [`RetryPolicy`]: one rule for 429, 5xx and dropped connections: the server's
//!   `Retry-After` when it sends one (refused when it asks for more than the policy's longest
//!   wait), else exponential backoff with jitter; every wait cut short by a [`CancelToken`].
//! - [`post_json`]: a JSON request with that policy applied, for calls that are not streamed.
//!   Streamed chat keeps its own loop over [`Endpoint::post`] (a retry is only allowed before
//!   the first token) with the same policy.
//!
//! Hand-written because no maintained crate fits a blocking, cancellable client that several
//! providers share: `async-openai` needs tokio and owns the request types.

mod cancel;
mod client;
mod retry;

pub use cancel::{CANCEL_POLL, CancelToken};
pub use client::{Endpoint, HttpError, agent, is_retryable, post_json};
pub use retry::{RetryPolicy, parse_retry_after, sleep_unless_cancelled};
