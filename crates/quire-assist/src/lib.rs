//! What users ask quire for, built on the index and a chat model: **ask** (answers from the notes
//! with checked `[S1]` citations), **draft** (a few paragraphs for a section of a note, optionally
//! written into it), **reflect** (a week of daily notes → what happened, themes, open loops, a
//! plan) and **questions** (the questions a note or folder answers, one per topic).
//!
//! Every feature has an offline default for when no model is configured: ask shows the best
//! passages as an *extractive* answer, reflect lists what the daily notes say, questions shows
//! each topic's most central passage.
//!
//! The contract that makes answers trustworthy, in the order the data flows:
//!
//! 1. [`context::retrieve`] asks the index for candidates (≤12 notes × ≤3 chunks by default);
//! 2. [`context::materialize`] re-reads each candidate note from the **current file**, chunks it
//!    again with the index's chunker and keeps a chunk only if its stable id and content hash
//!    still match; it then picks the final passages (≤6 notes × ≤2 chunks, ≤12,000 code points)
//!    and returns a [`FrozenContext`] that owns its text, so the index may change while a model
//!    writes;
//! 3. quire numbers the passages `S1..Sn` ([`Source`]); [`prompt`] shows the model ids and text
//!    only, framed as untrusted data whose instructions must not be followed;
//! 4. the answer streams through a [`CitationRewriter`], and afterwards its citations are checked
//!    against the sources: unknown ids are removed and reported, never turned into paths, and the
//!    source cards come from quire's own records.
//!
//! Prompt building ([`prompt`]), passage selection ([`context::select`]), citation rewriting,
//! date phrases ([`dates`]) and clustering ([`questions::kmeans`]) are pure; file reads and
//! nothing here writes into the vault (a draft is written as a proposal, by `quire-app`); file
//! reads happen only in [`context::SourceReader`], [`draft::DraftTarget`] and
//! [`reflect::daily_notes_in`].
//!
//! ```no_run
//! use quire_assist::context::{self, ContextLimits, RetrievalRequest, SourceReader};
//! use quire_assist::ask::Conversation;
//! use quire_llm::{CancelToken, OpenAiCompatible, Provider};
//!
//! let vault = std::path::Path::new("examples/vault");
//! let searcher = quire_search::Searcher::open(&quire_index::IndexLocation::new("/tmp/index")).unwrap();
//! let reader = SourceReader::open(vault, &Default::default()).unwrap();
//! let request = RetrievalRequest::new("How often do I feed the starter?", ContextLimits::default());
//! let candidates = context::retrieve(&searcher, &request).unwrap();
//! let frozen = context::materialize(&reader, candidates, &request.limits);
//! drop(searcher); // the frozen context owns everything it needs
//!
//! let model = OpenAiCompatible::new(Provider::new("http://127.0.0.1:8080/v1", "local"));
//! let mut chat = Conversation::new();
//! let answer = chat
//!     .ask(Some(&model), frozen, "How often do I feed the starter?", &CancelToken::new(), &mut |t| print!("{t}"))
//!     .unwrap();
//! for card in &answer.sources {
//!     println!("[{}] {}:{}-{}", card.id, card.path, card.start_line, card.end_line);
//! }
//! ```

pub mod ask;
pub mod audit;
pub mod cite;
pub mod complete;
pub mod context;
pub mod dataview;
pub mod dates;
pub mod descent;
pub mod draft;
pub mod error;
pub mod evidence;
pub mod flashcards;
pub mod lead;
pub mod prompt;
pub mod questions;
pub mod reflect;
pub mod rerank;
pub mod split;
pub mod support;
pub mod transform;

pub use ask::{Answer, AnswerKind, Conversation, SourceCard};
pub use cite::CitationRewriter;
pub use context::{ContextLimits, FrozenContext, Passage, RetrievalReport, Source};
pub use dates::DateRange;
pub use error::AssistError;
