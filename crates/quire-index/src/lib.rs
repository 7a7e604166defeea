//! quire's durable index of a vault: the SQLite store (notes, chunks, tags, links, skipped files,
//! embeddings, generation), the tantivy full-text index derived from it, and the incremental sync
//! that keeps both in step with the Markdown files.
//!
//! Invariants: the Markdown files are the truth and the index is always rebuildable from them;
//! the full-text index is derived from the store and rebuildable from it; a sync commits a new
//! generation to the store in one transaction, then to the full-text index with the same
//! generation, and a mismatch (a crash between the two commits) is seen by every reader
//! ([`Consistency`]: searches refuse an inconsistent index rather than answer wrongly) and
//! repaired by the next sync or by [`repair_fulltext`]; one writer at a
//! time holds [`lock::WriterLock`]. Nothing here writes into the vault.
//!
//! ```no_run
//! use quire_index::{IndexLocation, SyncOptions, sync};
//! let vault = std::path::Path::new("examples/vault");
//! let location = IndexLocation::default_for(&vault.canonicalize().unwrap());
//! let stats = sync(vault, &location, &SyncOptions::default(), &()).unwrap();
//! println!("generation {}: {} chunks", stats.generation, stats.chunks_total);
//! ```

pub mod analyzer;
pub mod ann;
pub mod audit_cache;
pub mod error;
pub mod filter;
pub mod fulltext;
pub mod lock;
pub mod store;
pub mod sync;

pub use ann::{AnnBase, AnnRefresh, AnnSettings};
pub use audit_cache::{AuditCache, AuditKey};
pub use error::IndexError;
pub use fulltext::{Boosts, Filter, FullText, FullTextDoc, FullTextHit};
pub use store::Store;
pub use sync::{
    Consistency, IndexLocation, SyncOptions, SyncPhases, SyncStats, repair_fulltext, sync,
};
