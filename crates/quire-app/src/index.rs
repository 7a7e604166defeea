//! Bringing a vault's index up to date, as `quire index`, `quire eval` and the watcher do:
//! [`sync`] commits the store, then the full text, then embeds what changed (see
//! `quire_index::sync` for its guarantees). Its options, statistics and progress hook are in
//! [`crate::types`].

pub use quire_index::sync;
