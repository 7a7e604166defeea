//! [`LlmError`], the one error type of this crate.

/// Why a chat call or a provider configuration failed. Network errors name the URL; HTTP errors
/// carry the status and the server's own message. No variant ever holds an API key.
#[derive(Debug, thiserror::Error)]
pub enum LlmError {
    /// The configuration names a preset that is not one of [`crate::provider::PRESETS`].
    #[error("unknown LLM provider preset `{name}` (known presets: {known})")]
    UnknownPreset {
        /// The name asked for.
        name: String,
        /// The known presets' names, comma-separated.
        known: String,
    },

    /// The configuration is incomplete or invalid (the message says which setting to fix).
    #[error("LLM provider: {0}")]
    Config(String),

    /// Nothing answers at the address: the server is not running, or the host does not exist.
    #[error("cannot reach {url}: {reason}")]
    Unreachable {
        /// The URL requested.
        url: String,
        /// What the connection attempt reported.
        reason: String,
    },

    /// The server went silent for longer than the read timeout, or connecting took too long.
    #[error("{url}: timed out ({reason})")]
    Timeout {
        /// The URL requested.
        url: String,
        /// Which wait ran out (connecting, or silence from the server) and for how long.
        reason: String,
    },

    /// The connection failed in some other way (reset, TLS, broken stream).
    #[error("{url}: {reason}")]
    Transport {
        /// The URL requested.
        url: String,
        /// What failed; when the reply broke off midway, how many characters had arrived.
        reason: String,
    },

    /// The server answered with an error status.
    #[error("{url}: HTTP {status}: {message}")]
    Http {
        /// The URL requested.
        url: String,
        /// The HTTP status of the last attempt.
        status: u16,
        /// The server's error message (from its JSON body), else the start of the body.
        message: String,
    },

    /// The server reported an error inside a successful reply (an `error` event in the stream).
    #[error("{url}: the server reported an error: {message}")]
    Remote {
        /// The URL requested.
        url: String,
        /// The server's error message.
        message: String,
    },

    /// The reply could not be understood: malformed JSON, a stream that ends too early.
    #[error("{url}: unreadable reply: {reason}")]
    BadResponse {
        /// The URL requested.
        url: String,
        /// What was wrong with the reply.
        reason: String,
    },

    /// The in-process model (feature `local-llm`) failed: the file is missing or not a model,
    /// llama.cpp refused it, or a generation step failed. `model` is the model file's path.
    #[error("{model}: {reason}")]
    Local {
        /// The model file's path.
        model: String,
        /// What failed.
        reason: String,
    },

    /// The caller cancelled the call; `partial` is the answer received until then.
    #[error("cancelled after {} characters of the answer", partial.chars().count())]
    Cancelled {
        /// The answer's text received before the cancel (empty when none had arrived).
        partial: String,
    },
}
