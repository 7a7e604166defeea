//! The vocabulary every chat model shares: messages in, a streamed [`Completion`] out, and the
//! [`CancelToken`] that stops it.

use serde::{Deserialize, Serialize};

use crate::LlmError;

/// Who speaks a [`Message`]. Serialized in lowercase, as the chat-completions API spells it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// The instructions the model follows.
    System,
    /// The person asking.
    User,
    /// The model (its earlier answers, when a conversation is replayed).
    Assistant,
}

/// One turn of a conversation.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Message {
    /// Who says it.
    pub role: Role,
    /// What is said, as plain text.
    pub content: String,
}

impl Message {
    /// A [`Role::System`] message.
    pub fn system(content: impl Into<String>) -> Message {
        Message {
            role: Role::System,
            content: content.into(),
        }
    }

    /// A [`Role::User`] message.
    pub fn user(content: impl Into<String>) -> Message {
        Message {
            role: Role::User,
            content: content.into(),
        }
    }

    /// A [`Role::Assistant`] message.
    pub fn assistant(content: impl Into<String>) -> Message {
        Message {
            role: Role::Assistant,
            content: content.into(),
        }
    }
}

/// What to send to a model. `None` leaves a setting to the server's default.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ChatRequest {
    /// The conversation so far, oldest first; the model answers the last message.
    pub messages: Vec<Message>,
    /// Sampling temperature: lower is more deterministic.
    pub temperature: Option<f32>,
    /// The most tokens the answer may have.
    pub max_tokens: Option<u32>,
    /// Ask for a JSON answer following this schema: OpenAI-compatible servers get it as
    /// `response_format` (`json_schema`); the local model is held to JSON by a llama.cpp grammar.
    /// The caller still validates the answer: not every server enforces a schema.
    pub response_format: Option<JsonSchema>,
}

/// A named JSON schema for a structured answer.
#[derive(Debug, Clone, PartialEq)]
pub struct JsonSchema {
    /// A short name (letters, digits, `_`, `-`), as OpenAI requires.
    pub name: String,
    /// The JSON Schema the answer should follow.
    pub schema: serde_json::Value,
}

impl ChatRequest {
    /// A request for `messages` with every setting left to the server.
    pub fn new(messages: Vec<Message>) -> ChatRequest {
        ChatRequest {
            messages,
            ..ChatRequest::default()
        }
    }
}

/// Token counts as the server reports them (servers that report nothing give no `Usage`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Usage {
    /// Tokens of the request's messages (0 when the server omits it).
    #[serde(default)]
    pub prompt_tokens: u64,
    /// Tokens of the answer (0 when the server omits it).
    #[serde(default)]
    pub completion_tokens: u64,
}

/// A finished answer.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Completion {
    /// The whole answer: the concatenation of every piece given to `on_token`.
    pub text: String,
    /// Token counts, when the server reports them.
    pub usage: Option<Usage>,
    /// Why the model stopped (`stop`, `length`, …), when the server says.
    pub finish_reason: Option<String>,
    /// Wall-clock time of the whole call, retries included.
    pub seconds: f64,
}

pub use quire_openai::CancelToken;

/// A chat model that streams its answer.
///
/// This is the extension point for providers: the OpenAI-compatible client in this crate, a local
/// model later, scripted models in other crates' tests.
pub trait ChatModel: Send + Sync {
    /// Which model this is, for people and as part of cache keys (model and endpoint).
    fn name(&self) -> String;

    /// How many tokens a request (prompt and answer together) may hold, when the model says;
    /// callers that batch work size their requests to it. `None`: unknown (a server's model).
    fn context_tokens(&self) -> Option<usize> {
        None
    }

    /// Sends `request` and calls `on_token` with each piece of the answer as it arrives, in
    /// order. Returns the whole answer when the model is done.
    ///
    /// When `cancel` is set the call returns [`LlmError::Cancelled`] promptly, carrying the
    /// text received so far; the pieces already given to `on_token` stay given.
    fn stream(
        &self,
        request: &ChatRequest,
        cancel: &CancelToken,
        on_token: &mut dyn FnMut(&str),
    ) -> Result<Completion, LlmError>;
}
