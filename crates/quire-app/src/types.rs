//! The types of the libraries under this crate that a face shows or passes through (a request's
//! mode and filter, a chat model, a cancel token, the errors it maps to its own codes), named
//! here so that a face depends on `quire-app` alone.

pub use quire_assist::AssistError;
pub use quire_assist::FrozenContext;
pub use quire_assist::ask::{Answer, AnswerKind, Conversation, SourceCard};
pub use quire_assist::audit::MapOptions;
pub use quire_assist::context::{ContextLimits, RetrievalReport, SourceReader};
pub use quire_assist::dates::DateRange;
pub use quire_assist::descent::Retriever;
pub use quire_assist::draft::{Draft, DraftTarget};
pub use quire_assist::rerank::RerankCandidate;
pub use quire_assist::transform::Preset;
pub use quire_embed::{EmbedError, Embedder, RemoteConfig};
pub use quire_index::lock::WriterLock;
pub use quire_index::sync::SyncProgress;
pub use quire_index::{Boosts, Filter, IndexError, IndexLocation, SyncOptions, SyncStats};
pub use quire_llm::{CancelToken, ChatModel, EffectiveProvider, ProviderConfig};
pub use quire_search::duplicates::DEFAULT_MIN_OVERLAP;
pub use quire_search::{Mode, SearchError, SearchRequest, SearchResults, Searcher};
pub use quire_vault::VaultError;
pub use quire_watch::{WatchError, WatchEvent, WatchHandle};
