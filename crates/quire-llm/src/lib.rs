//! Chat models for quire: the [`ChatModel`] trait that every generator talks to, a streaming
//! client for any OpenAI-compatible chat-completions endpoint ([`OpenAiCompatible`]), the
//! provider settings with presets for OpenAI, OpenRouter, Groq, Ollama and llama.cpp's server
//! ([`ProviderConfig`]), and the parsing of `[S1]` citations in what a model writes
//! ([`parse_citations`], [`CitationScanner`]). With the cargo feature `local-llm` it also runs a
//! GGUF model in-process through llama.cpp (`LocalLlama`, in the `local` module): the offline
//! generator, whose only file access is reading that model.
//!
//! This crate owns the conversation with a model: request bodies, server-sent events, timeouts,
//! retries with backoff (and `Retry-After`) on 429 and 5xx before the first token, cancellation
//! through a [`CancelToken`], token usage. It never retrieves, never reads or writes files and
//! never builds prompts: callers (`quire-assist`) hand it finished messages. It never stores an
//! API key: configurations name the environment variable that holds it, and the key is read
//! when a request is sent. It depends on no other quire crate and is synchronous: streaming runs
//! on a helper thread, not an async runtime.
//!
//! ```no_run
//! use quire_llm::{CancelToken, ChatModel, ChatRequest, Message, OpenAiCompatible, ProviderConfig};
//!
//! // What the config file's [llm] table says; QUIRE_LLM_BASE_URL, QUIRE_LLM_MODEL and
//! // QUIRE_LLM_API_KEY override it.
//! let config = ProviderConfig {
//!     preset: Some("ollama".into()),
//!     model: Some("llama3.2".into()),
//!     ..ProviderConfig::default()
//! };
//! let provider = ProviderConfig::from_env_and(Some(config))
//!     .unwrap()
//!     .expect("a provider is configured");
//! let model = OpenAiCompatible::new(provider);
//! let request = ChatRequest::new(vec![
//!     Message::system("Answer only from the sources and cite them as [S1]."),
//!     Message::user("S1: Feed the starter twice a day.\n\nHow often do I feed it?"),
//! ]);
//! let cancel = CancelToken::new(); // give a clone to a Ctrl-C handler
//! let answer = model.stream(&request, &cancel, &mut |piece| print!("{piece}")).unwrap();
//! let cited = quire_llm::parse_citations(&answer.text, &["S1"]);
//! assert!(cited.invalid.is_empty());
//! ```

pub mod chat;
pub mod citations;
pub mod error;
// llama.cpp's log callback is a C function; its pointers are read in unsafe code.
#[cfg(feature = "local-llm")]
#[allow(unsafe_code)]
pub mod local;
pub mod openai;
pub mod provider;
mod sse;

pub use chat::{CancelToken, ChatModel, ChatRequest, Completion, JsonSchema, Message, Role, Usage};
pub use citations::{Citation, CitationScanner, Citations, parse_citations};
pub use error::LlmError;
#[cfg(feature = "local-llm")]
pub use local::{LocalLlama, LocalOptions, LocalTimings, REPEAT_WINDOW, default_local_model_path};
pub use openai::{OpenAiCompatible, Timeouts};
pub use provider::{EffectiveProvider, PRESETS, Preset, Provider, ProviderConfig};
pub use quire_openai::RetryPolicy;
