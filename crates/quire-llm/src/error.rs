//! [`LlmError`], the one error type of this crate.

/// Why a chat call or a provider configuration failed. Network errors name the URL; HTTP errors
/// carry the status and the server's own message. No variant ever holds an API key.
#[derive(Debug, thiserror::Error)]
pub enum LlmError {
    #[error("unknown LLM provider preset `{name}` (known presets: {known})")]
    UnknownPreset { name: String, known: String },

    /// The configuration is incomplete or invalid (the message says which setting to fix).
    #[error("LLM provider: {0}")]
    Config(String),

    /// Nothing answers at the address: the server is not running, or the host does not exist.
    #[error("cannot reach {url}: {reason}")]
    Unreachable { url: String, reason: String },

    /// The server went silent for longer than the read timeout, or connecting took too long.
    #[error("{url}: timed out ({reason})")]
    Timeout { url: String, reason: String },

    /// The connection failed in some other way (reset, TLS, broken stream).
    #[error("{url}: {reason}")]
    Transport { url: String, reason: String },

    /// The server answered with an error status.
    #[error("{url}: HTTP {status}: {message}")]
    Http {
        url: String,
        status: u16,
        message: String,
    },

    /// The server reported an error inside a successful reply (an `error` event in the stream).
    #[error("{url}: the server reported an error: {message}")]
    Remote { url: String, message: String },

    /// The reply could not be understood: malformed JSON, a stream that ends too early.
    #[error("{url}: unreadable reply: {reason}")]
    BadResponse { url: String, reason: String },

    /// The in-process model (feature `local-llm`) failed: the file is missing or not a model,
    /// llama.cpp refused it, or a generation step failed. `model` is the model file's path.
    #[error("{model}: {reason}")]
    Local { model: String, reason: String },

    /// The caller cancelled the call; `partial` is the answer received until then.
    #[error("cancelled after {} characters of the answer", partial.chars().count())]
    Cancelled { partial: String },
}
