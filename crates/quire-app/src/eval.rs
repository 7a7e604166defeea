//! Measuring retrieval, as `quire eval` does: on a test set in BEIR layout ([`TestSet`],
//! [`evaluate`]: nDCG@10, recall and MRR of every retriever) and on a vault itself
//! ([`vault_queries`] or [`questions_from_jsonl`], then [`evaluate_vault`]). The scoring is
//! `quire_search`'s; this is the door the CLI measures through.

pub use quire_search::eval::{TestSet, evaluate};
pub use quire_search::fusion::Fusion;
pub use quire_search::vault_eval::{
    QueryKind, VaultEvalReport, evaluate_vault, questions_from_jsonl, vault_queries,
};
