//! EmbeddingGemma-300M: a bidirectional Gemma-3 encoder (24 layers, hidden 768, 3 query heads
//! sharing one key/value head of 256, sliding-window and full attention, RMSNorm with `1 + w`,
//! rotary positions, a tanh-GELU gated feed-forward), mean pooling, two dense layers 768 → 3,072
//! → 768 and L2 normalisation, with the model card's prompts. Weights come from quire's own
//! `QGEM1` file (`docs/qgem1-format.md`, made once by `scripts/fetch-model.sh gemma`), mapped
//! rather than read: the 262k-row embedding table stays 8-bit in the map and only the rows a
//! batch uses are read; the encoder's matrices are stored in the int8 kernel's tile layout, so
//! they are multiplied straight from the map ([`crate::quant`], 8-bit weights × int8
//! activations); norms, rotary positions, softmax and the pooling head run in f32.
//!
//! The layer, as the reference (Hugging Face's `Gemma3TextModel` with
//! `use_bidirectional_attention`) computes it, per window of at most 2,048 tokens:
//! `x = emb[id]·√768`; per layer `x += N₂(attn(N₁(x)))`, `x += N₄(W_d(GELU_tanh(W_g·N₃(x)) ⊙
//! W_u·N₃(x)))`; then a final RMSNorm. Attention normalises each query and key head (RMSNorm over
//! 256), rotates them (base 10,000 on sliding layers, 1,000,000 on the full-attention ones),
//! scales by `query_pre_attn_scalar^-½`, and on sliding layers lets token i see token j only
//! where |i − j| < `sliding_window / 2 + 1` (the reference halves the window for bidirectional
//! attention). No activation is ever held in f16.

use std::path::Path;
use std::sync::Arc;

use rayon::prelude::*;
use serde::Deserialize;

use crate::e5s1::ModelBytes;
use crate::encoder::{Dense, Linear, Shared, gemm, linear, mean_of_windows, thread_pool, windows};
use crate::gemma_tokenizer::GemmaTokenizer;
use crate::kernels;
use crate::quant::{Packed, QDense, QRows};
use crate::{EmbedError, Embedder, EmbeddingSpace};

/// The first bytes of a `QGEM1` file.
pub const MAGIC: &[u8; 8] = b"QGEM1\0\0\0";

/// The model card's query prompt (retrieval).
pub const QUERY_PROMPT: &str = "task: search result | query: ";

/// Tokens per forward pass: bounds the buffers (the gated feed-forward's is tokens × 2,304).
const TOKENS_PER_PASS: usize = 4096;

#[derive(Debug, Clone, Deserialize)]
struct Config {
    hidden: usize,
    layers: usize,
    heads: usize,
    kv_heads: usize,
    head_dim: usize,
    intermediate: usize,
    rms_norm_eps: f32,
    rope_theta: f32,
    rope_local_base_freq: f32,
    sliding_window: usize,
    full_attention: Vec<bool>,
    query_pre_attn_scalar: f32,
    max_positions: usize,
    vocab: usize,
}

#[derive(Debug, Clone, Deserialize)]
struct TensorInfo {
    dtype: String,
    shape: Vec<usize>,
    /// `[offset, length]` of each array, relative to the data section.
    data: Vec<[usize; 2]>,
}

#[derive(Debug, Clone, Deserialize)]
struct Header {
    format: u32,
    model: String,
    precision: String,
    config: Config,
    #[serde(default)]
    prompts: std::collections::HashMap<String, String>,
    tokenizer: [usize; 2],
    added_tokens: Vec<(String, u32)>,
    tensors: std::collections::HashMap<String, TensorInfo>,
}

/// The word-embedding table, left in the map.
enum Table {
    /// 8-bit values `[rows, hidden]` and f32 scales `[rows, hidden/32]` (absolute offsets).
    Q8 { values: usize, scales: usize },
    /// f32 rows (absolute offset).
    F32(usize),
}

struct GemmaLayer {
    /// Q (heads × head_dim), K and V (kv_heads × head_dim each) as one product.
    qkv: Linear,
    o: Linear,
    /// The gate and up projections as one product: `[gate | up]` per token.
    gate_up: Linear,
    down: Linear,
    /// RMSNorm weights with Gemma's `1 +` folded in.
    input_norm: Vec<f32>,
    post_attn_norm: Vec<f32>,
    pre_ff_norm: Vec<f32>,
    post_ff_norm: Vec<f32>,
    q_norm: Vec<f32>,
    k_norm: Vec<f32>,
    full: bool,
}

/// The local EmbeddingGemma model.
pub struct GemmaModel {
    data: Arc<ModelBytes>,
    config: Config,
    table: Table,
    tokenizer: GemmaTokenizer,
    /// Where the original `tokenizer.json` lies in the file (kept for checks).
    tokenizer_json: std::ops::Range<usize>,
    layers: Vec<GemmaLayer>,
    final_norm: Vec<f32>,
    /// The pooling head's two bias-free dense layers.
    head: [Linear; 2],
    query_prompt: String,
    /// Values kept of each 768-d vector (Matryoshka: 768, 512, 256 or 128), renormalised.
    dimension: usize,
    pool: rayon::ThreadPool,
    model_name: String,
    bos: u32,
    eos: u32,
}

fn format_error(what: impl std::fmt::Display) -> EmbedError {
    EmbedError::Format(what.to_string())
}

/// A mapped `QGEM1` file, its header read and checked: each tensor is read from it by name,
/// with its shape, storage and place in the file checked (see `docs/qgem1-format.md`).
struct QgemFile<'a> {
    data: &'a Arc<ModelBytes>,
    header: Header,
    /// Where the data section starts (tensor offsets are relative to it).
    base: usize,
    /// Round the 8-bit weights again to this many bits (8: as stored).
    bits: u32,
}

impl<'a> QgemFile<'a> {
    fn parse(path: &Path, data: &'a Arc<ModelBytes>, bits: u32) -> Result<Self, EmbedError> {
        let bytes: &[u8] = data;
        if bytes.len() < 16 || &bytes[..8] != MAGIC {
            return Err(format_error(format!(
                "{}: not a QGEM1 file (make one with scripts/fetch-model.sh gemma)",
                path.display()
            )));
        }
        let head_len = u64::from_le_bytes(bytes[8..16].try_into().unwrap_or_default()) as usize;
        let head_end = 16usize
            .checked_add(head_len)
            .filter(|&e| e <= bytes.len())
            .ok_or_else(|| format_error("QGEM1 header runs past the end of the file"))?;
        let header: Header =
            serde_json::from_slice(&bytes[16..head_end]).map_err(|source| EmbedError::Json {
                path: path.to_path_buf(),
                source,
            })?;
        if header.format != 1 {
            return Err(format_error(format!(
                "QGEM1 format {} is newer than this quire reads",
                header.format
            )));
        }
        let c = &header.config;
        let checks = c.hidden.is_multiple_of(32)
            && c.head_dim.is_multiple_of(2)
            && c.kv_heads == 1
            && c.heads >= 1
            && c.full_attention.len() == c.layers
            && c.max_positions >= 8;
        if !checks {
            return Err(format_error("QGEM1 config is not one this encoder runs"));
        }
        Ok(QgemFile {
            data,
            header,
            base: head_end.next_multiple_of(64),
            bits,
        })
    }

    fn bytes(&self) -> &'a [u8] {
        self.data
    }

    /// The absolute byte range of `[offset, length]` in the data section.
    fn range(&self, at: [usize; 2]) -> Result<std::ops::Range<usize>, EmbedError> {
        let start = self.base + at[0];
        let end = start + at[1];
        if end > self.bytes().len() {
            return Err(format_error("a QGEM1 tensor runs past the end of the file"));
        }
        Ok(start..end)
    }

    fn tensor(&self, name: &str, shape: &[usize]) -> Result<&TensorInfo, EmbedError> {
        let t = self
            .header
            .tensors
            .get(name)
            .ok_or_else(|| format_error(format!("QGEM1 file has no tensor `{name}`")))?;
        if t.shape != shape {
            return Err(format_error(format!(
                "tensor `{name}` is {:?}, expected {shape:?}",
                t.shape
            )));
        }
        Ok(t)
    }

    fn f32s(&self, r: std::ops::Range<usize>) -> Vec<f32> {
        self.bytes()[r]
            .chunks_exact(4)
            .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
            .collect()
    }

    /// `n` f32 values; `plus_one`: Gemma's RMSNorm weight `1 + w`, folded in.
    fn vector(&self, name: &str, n: usize, plus_one: bool) -> Result<Vec<f32>, EmbedError> {
        let t = self.tensor(name, &[n])?;
        let r = self.range(*t.data.first().ok_or_else(|| format_error("no data"))?)?;
        if t.dtype != "f32" || r.len() != 4 * n {
            return Err(format_error(format!(
                "tensor `{name}` is not {n} f32 values"
            )));
        }
        let mut v = self.f32s(r);
        if plus_one {
            v.iter_mut().for_each(|w| *w += 1.0);
        }
        Ok(v)
    }

    /// An `out × inp` weight matrix: 8-bit tiles left in the map (rounded again to fewer bits
    /// when asked), or f32.
    fn matrix(&self, name: &str, out: usize, inp: usize) -> Result<Linear, EmbedError> {
        let t = self.tensor(name, &[out, inp])?;
        match (t.dtype.as_str(), t.data.as_slice()) {
            ("q8_tiles", [values, scales]) => {
                let values = Packed::Mapped(self.data.clone(), self.range(*values)?);
                let scales = self.f32s(self.range(*scales)?);
                QDense::from_q8_tiles(values, scales, out, inp)
                    .map(|q| {
                        if self.bits < 8 {
                            q.requantized(self.bits)
                        } else {
                            q
                        }
                    })
                    .map(Linear::Q4)
            }
            ("f32", [w]) => {
                let r = self.range(*w)?;
                Dense::new(self.f32s(r), vec![0.0; out], out, inp).map(Linear::F32)
            }
            _ => Err(format_error(format!(
                "tensor `{name}` has a storage this encoder does not read"
            ))),
        }
    }

    /// Transformer layer `l`.
    fn layer(&self, l: usize) -> Result<GemmaLayer, EmbedError> {
        let c = &self.header.config;
        let (h, hd) = (c.hidden, c.head_dim);
        let q_out = c.heads * hd;
        let p = format!("l{l}.");
        Ok(GemmaLayer {
            qkv: self.matrix(&format!("{p}qkv_proj"), q_out + 2 * hd, h)?,
            o: self.matrix(&format!("{p}o_proj"), h, q_out)?,
            gate_up: self.matrix(&format!("{p}gate_up_proj"), 2 * c.intermediate, h)?,
            down: self.matrix(&format!("{p}down_proj"), h, c.intermediate)?,
            input_norm: self.vector(&format!("{p}input_layernorm"), h, true)?,
            post_attn_norm: self.vector(&format!("{p}post_attention_layernorm"), h, true)?,
            pre_ff_norm: self.vector(&format!("{p}pre_feedforward_layernorm"), h, true)?,
            post_ff_norm: self.vector(&format!("{p}post_feedforward_layernorm"), h, true)?,
            q_norm: self.vector(&format!("{p}q_norm"), hd, true)?,
            k_norm: self.vector(&format!("{p}k_norm"), hd, true)?,
            full: c.full_attention[l],
        })
    }

    /// The word-embedding table, left in the map (rows are read per token).
    fn table(&self) -> Result<Table, EmbedError> {
        let c = &self.header.config;
        let (vocab, h) = (c.vocab, c.hidden);
        let emb = self.tensor("embed", &[vocab, h])?;
        match (emb.dtype.as_str(), emb.data.as_slice()) {
            ("q8_rows", [values, scales])
                if values[1] == vocab * h && scales[1] == vocab * h / 32 * 4 =>
            {
                Ok(Table::Q8 {
                    values: self.range(*values)?.start,
                    scales: self.range(*scales)?.start,
                })
            }
            ("f32", [w]) if w[1] == vocab * h * 4 => Ok(Table::F32(self.range(*w)?.start)),
            _ => Err(format_error(
                "the embedding table is not one this encoder reads",
            )),
        }
    }

    /// The tokenizer from its tables, and the ids of `<bos>` and `<eos>`.
    fn tokenizer(&self) -> Result<(GemmaTokenizer, u32, u32), EmbedError> {
        let table_bytes = |name: &str| -> Result<&[u8], EmbedError> {
            let t = self
                .header
                .tensors
                .get(name)
                .filter(|t| t.dtype == "u32")
                .ok_or_else(|| format_error(format!("QGEM1 file has no table `{name}`")))?;
            let at = *t.data.first().ok_or_else(|| format_error("no data"))?;
            Ok(&self.bytes()[self.range(at)?])
        };
        let tokenizer = GemmaTokenizer::new(
            table_bytes("tok.merges")?,
            table_bytes("tok.chars")?,
            table_bytes("tok.bytes")?,
            self.header.added_tokens.clone(),
        )?;
        let id = |t: &str| {
            self.header
                .added_tokens
                .iter()
                .find(|(text, _)| text == t)
                .map(|(_, id)| *id)
                .ok_or_else(|| format_error(format!("the tokenizer has no {t}")))
        };
        Ok((tokenizer, id("<bos>")?, id("<eos>")?))
    }
}

impl GemmaModel {
    /// Whether the file at `path` starts as a `QGEM1` file does.
    pub fn is_gemma_file(path: &Path) -> bool {
        let mut magic = [0u8; 8];
        std::fs::File::open(path)
            .and_then(|mut f| std::io::Read::read_exact(&mut f, &mut magic))
            .is_ok()
            && &magic == MAGIC
    }

    /// Loads a `QGEM1` file with all 768 dimensions.
    pub fn load(path: &Path) -> Result<GemmaModel, EmbedError> {
        GemmaModel::load_with(path, 768)
    }

    /// Loads a `QGEM1` file keeping the first `dimension` values of each vector (768, 512, 256
    /// or 128: the sizes the model was trained to be cut to).
    pub fn load_with(path: &Path, dimension: usize) -> Result<GemmaModel, EmbedError> {
        GemmaModel::load_with_bits(path, dimension, 8)
    }

    /// [`GemmaModel::load_with`] with the transformer's and the head's 8-bit weights rounded
    /// again to `bits` bits ([`QDense::requantized`]; 8 keeps them): for measuring what a file of
    /// fewer bits would cost in quality, never a setting. The vectors' space names the bits, so
    /// nothing embedded one way is mixed with the other.
    pub fn load_with_bits(
        path: &Path,
        dimension: usize,
        bits: u32,
    ) -> Result<GemmaModel, EmbedError> {
        let data = Arc::new(ModelBytes::map(path)?);
        let file = QgemFile::parse(path, &data, bits)?;
        let c = file.header.config.clone();
        if !matches!(dimension, 128 | 256 | 512 | 768) || dimension > c.hidden {
            return Err(format_error(format!(
                "EmbeddingGemma vectors can be cut to 768, 512, 256 or 128 values, not {dimension}"
            )));
        }
        let layers = (0..c.layers)
            .map(|l| file.layer(l))
            .collect::<Result<Vec<_>, _>>()?;
        let final_norm = file.vector("norm", c.hidden, true)?;
        let wide = file
            .header
            .tensors
            .get("dense0")
            .and_then(|t| t.shape.first().copied())
            .unwrap_or(0);
        let head = [
            file.matrix("dense0", wide, c.hidden)?,
            file.matrix("dense1", c.hidden, wide)?,
        ];
        let table = file.table()?;
        let (tokenizer, bos, eos) = file.tokenizer()?;
        let tokenizer_json = file.range(file.header.tokenizer)?;
        let query_prompt = file
            .header
            .prompts
            .get("query")
            .cloned()
            .unwrap_or_else(|| QUERY_PROMPT.to_string());
        let mut model_name = format!(
            "{}-{}@{}",
            file.header.model,
            file.header.precision,
            crate::e5::weights_hash(path, &data)
        );
        if bits < 8 {
            model_name.push_str(&format!("+w{bits}"));
        }
        Ok(GemmaModel {
            config: c,
            table,
            tokenizer,
            tokenizer_json,
            layers,
            final_norm,
            head,
            query_prompt,
            dimension,
            pool: thread_pool()?,
            model_name,
            bos,
            eos,
            data,
        })
    }

    /// Token ids of a text as given (prompt included), with `<bos>` and `<eos>`, not windowed.
    pub fn token_ids(&self, text: &str) -> Result<Vec<u32>, EmbedError> {
        let mut ids = vec![self.bos];
        ids.extend(self.content_ids(text)?);
        ids.push(self.eos);
        Ok(ids)
    }

    fn content_ids(&self, text: &str) -> Result<Vec<u32>, EmbedError> {
        Ok(self.tokenizer.encode(text))
    }

    /// The model's original `tokenizer.json`, as shipped (kept in the file so that quire's own
    /// tokenizer can be checked against the `tokenizers` crate).
    pub fn tokenizer_json(&self) -> &[u8] {
        &self.data[self.tokenizer_json.clone()]
    }

    /// The document prompt of the model card with a note's title (`none` when there is none).
    pub fn document_input(title: &str, text: &str) -> String {
        let title = title.trim();
        let title = if title.is_empty() { "none" } else { title };
        format!("title: {title} | text: {text}")
    }

    /// Embeds texts given in full (prompt included): the full 768-d vectors, unit length.
    pub fn embed_inputs(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        let mut all = Vec::with_capacity(texts.len());
        for t in texts {
            let content = self.content_ids(t)?;
            all.push(windows(
                &content,
                self.config.max_positions,
                self.bos,
                self.eos,
            ));
        }
        let pooled = self.embed_windows(all)?;
        Ok(pooled
            .into_iter()
            .map(|v| {
                let mut v = v;
                v.truncate(self.dimension);
                let norm = v.iter().map(|x| x * x).sum::<f32>().max(1e-24).sqrt();
                v.iter_mut().for_each(|x| *x /= norm);
                v
            })
            .collect())
    }

    /// Pooled vectors through the dense head (not normalised): windows packed into passes, the
    /// windows of a long text averaged by their content tokens (the head is linear, so averaging
    /// before or after it is the same).
    fn embed_windows(&self, windows: Vec<Vec<Vec<u32>>>) -> Result<Vec<Vec<f32>>, EmbedError> {
        let hidden = self.config.hidden;
        let means = mean_of_windows(&windows, hidden, TOKENS_PER_PASS, |batch| {
            self.forward(batch)
                .chunks_exact(hidden)
                .map(<[f32]>::to_vec)
                .collect()
        });
        let rows = means.len();
        let pooled: Vec<f32> = means.concat();
        let threads = self.pool.current_num_threads().max(1);
        let [d0, d1] = &self.head;
        let mut wide = vec![0f32; rows * d0.out()];
        let mut out = vec![0f32; rows * hidden];
        let mut scratch = QRows::default();
        self.pool.install(|| {
            linear(threads, &pooled, d0, &mut wide, None, &mut scratch);
            linear(threads, &wide, d1, &mut out, None, &mut scratch);
        });
        Ok(out.chunks_exact(hidden).map(<[f32]>::to_vec).collect())
    }

    /// Writes the scaled word embedding of `id` into `row`.
    fn word_row(&self, id: u32, row: &mut [f32]) {
        let h = self.config.hidden;
        let id = (id as usize).min(self.config.vocab - 1);
        let bytes: &[u8] = &self.data;
        let scale = (h as f32).sqrt();
        match self.table {
            Table::Q8 { values, scales } => {
                let v = &bytes[values + id * h..values + (id + 1) * h];
                let s = &bytes[scales + id * h / 8..scales + (id + 1) * h / 8];
                for ((out, block), sc) in row
                    .chunks_exact_mut(32)
                    .zip(v.chunks_exact(32))
                    .zip(s.chunks_exact(4))
                {
                    let d = f32::from_le_bytes([sc[0], sc[1], sc[2], sc[3]]) * scale;
                    for (o, &q) in out.iter_mut().zip(block) {
                        *o = q as i8 as f32 * d;
                    }
                }
            }
            Table::F32(at) => {
                let v = &bytes[at + id * h * 4..at + (id + 1) * h * 4];
                for (o, b) in row.iter_mut().zip(v.chunks_exact(4)) {
                    *o = f32::from_le_bytes([b[0], b[1], b[2], b[3]]) * scale;
                }
            }
        }
    }

    /// Mean-pooled final states of windows packed end to end, `hidden` values per window.
    fn forward(&self, batch: &[&[u32]]) -> Vec<f32> {
        let c = &self.config;
        let (h, hd) = (c.hidden, c.head_dim);
        let q_out = c.heads * hd;
        let qkv_w = q_out + 2 * hd;
        let mut spans = Vec::with_capacity(batch.len());
        let mut t = 0;
        for ids in batch {
            let len = ids.len().clamp(1, c.max_positions);
            spans.push((t, len));
            t += len;
        }
        let longest = spans.iter().map(|s| s.1).max().unwrap_or(1);
        let rope_local = rope_table(c.rope_local_base_freq, hd, longest);
        let rope_global = rope_table(c.rope_theta, hd, longest);
        let threads = self.pool.current_num_threads().max(1);
        let eps = c.rms_norm_eps;
        let mut x = vec![0f32; t * h];
        let mut normed = vec![0f32; t * h];
        let mut y = vec![0f32; t * h];
        let mut ctx = vec![0f32; t * q_out];
        let mut qkv = vec![0f32; t * qkv_w];
        let mut gu = vec![0f32; t * 2 * c.intermediate];
        let mut inner = vec![0f32; t * c.intermediate];
        let mut scratch = QRows::default();
        // Token p of its window, for the rotary positions.
        let mut positions = Vec::with_capacity(t);
        for &(_, len) in &spans {
            positions.extend(0..len);
        }
        self.pool.install(|| {
            let mut row_ids = Vec::with_capacity(t);
            for (ids, &(_, len)) in batch.iter().zip(&spans) {
                row_ids.extend((0..len).map(|p| ids.get(p).copied().unwrap_or(self.bos)));
            }
            x.par_chunks_mut(h)
                .zip(row_ids.par_iter())
                .for_each(|(row, &id)| self.word_row(id, row));
            let norm_into = |src: &[f32], dst: &mut [f32], w: &[f32]| {
                dst.par_chunks_mut(h)
                    .zip(src.par_chunks(h))
                    .for_each(|(d, s)| {
                        d.copy_from_slice(s);
                        kernels::rms_norm(d, w, eps);
                    });
            };
            let add_normed = |x: &mut [f32], y: &mut [f32], w: &[f32]| {
                x.par_chunks_mut(h)
                    .zip(y.par_chunks_mut(h))
                    .for_each(|(x, y)| {
                        kernels::rms_norm(y, w, eps);
                        x.iter_mut().zip(y.iter()).for_each(|(a, b)| *a += b);
                    });
            };
            for layer in &self.layers {
                norm_into(&x, &mut normed, &layer.input_norm);
                linear(threads, &normed, &layer.qkv, &mut qkv, None, &mut scratch);
                let rope = if layer.full {
                    &rope_global
                } else {
                    &rope_local
                };
                qkv.par_chunks_mut(qkv_w)
                    .zip(positions.par_iter())
                    .for_each(|(row, &p)| {
                        let (cos, sin) = (&rope.0[p * hd / 2..], &rope.1[p * hd / 2..]);
                        for (i, head) in row.chunks_exact_mut(hd).enumerate() {
                            if i < c.heads {
                                kernels::rms_norm(head, &layer.q_norm, eps);
                            } else if i == c.heads {
                                kernels::rms_norm(head, &layer.k_norm, eps);
                            } else {
                                break;
                            }
                            rotate(head, cos, sin);
                        }
                    });
                let window = if layer.full {
                    usize::MAX
                } else {
                    c.sliding_window / 2 + 1
                };
                self.attention(&qkv, &spans, window, &mut ctx);
                linear(threads, &ctx, &layer.o, &mut y, None, &mut scratch);
                add_normed(&mut x, &mut y, &layer.post_attn_norm);
                norm_into(&x, &mut normed, &layer.pre_ff_norm);
                linear(
                    threads,
                    &normed,
                    &layer.gate_up,
                    &mut gu,
                    None,
                    &mut scratch,
                );
                let m = c.intermediate;
                inner
                    .par_chunks_mut(m)
                    .zip(gu.par_chunks_mut(2 * m))
                    .for_each(|(dst, row)| {
                        let (gate, up) = row.split_at_mut(m);
                        kernels::gelu_tanh_gate(gate, up);
                        dst.copy_from_slice(gate);
                    });
                linear(threads, &inner, &layer.down, &mut y, None, &mut scratch);
                add_normed(&mut x, &mut y, &layer.post_ff_norm);
            }
            x.par_chunks_mut(h)
                .for_each(|row| kernels::rms_norm(row, &self.final_norm, eps));
        });
        let mut pooled = vec![0f32; spans.len() * h];
        for (out, &(start, len)) in pooled.chunks_exact_mut(h).zip(&spans) {
            for row in x[start * h..(start + len) * h].chunks_exact(h) {
                out.iter_mut().zip(row).for_each(|(a, b)| *a += b);
            }
            out.iter_mut().for_each(|a| *a /= len as f32);
        }
        pooled
    }

    /// Attention of every window and query head (all heads share the one key/value head):
    /// `ctx = softmax(Q·Kᵀ·s) · V`, where token i sees token j only if |i − j| < `window`.
    fn attention(&self, qkv: &[f32], spans: &[(usize, usize)], window: usize, ctx: &mut [f32]) {
        let c = &self.config;
        let hd = c.head_dim;
        let q_out = c.heads * hd;
        let stride = q_out + 2 * hd;
        let scale = 1.0 / c.query_pre_attn_scalar.sqrt();
        // The bounds the raw-pointer products below rely on: checked here, in the safe caller.
        assert_eq!(
            qkv.len() / stride * q_out,
            ctx.len(),
            "a ctx row per qkv row"
        );
        assert!(
            spans
                .iter()
                .all(|&(start, len)| (start + len) * stride <= qkv.len()),
            "every window lies inside qkv"
        );
        let dst = Shared(ctx.as_mut_ptr());
        let heads = c.heads;
        (0..spans.len() * heads).into_par_iter().for_each_init(
            Vec::new,
            |scores: &mut Vec<f32>, job| {
                let (start, len) = spans[job / heads];
                let head = job % heads;
                scores.clear();
                scores.resize(len * len, 0.0);
                let q = qkv[start * stride + head * hd..].as_ptr();
                let k = qkv[start * stride + q_out..].as_ptr();
                let v = qkv[start * stride + q_out + hd..].as_ptr();
                // SAFETY: Q, K and V of this window are `len` rows of `hd` values `stride` apart
                // inside `qkv`; scores is len × len.
                unsafe {
                    gemm(
                        (len, len, hd),
                        scores.as_mut_ptr(),
                        len,
                        false,
                        q,
                        stride,
                        k,
                        (1, stride),
                        scale,
                    );
                }
                for (i, row) in scores.chunks_exact_mut(len).enumerate() {
                    let lo = i.saturating_sub(window - 1);
                    let hi = i.saturating_add(window).min(len);
                    kernels::softmax(&mut row[lo..hi]);
                    row[..lo].iter_mut().for_each(|p| *p = 0.0);
                    row[hi..].iter_mut().for_each(|p| *p = 0.0);
                }
                // SAFETY: this job alone writes rows start..start+len, columns
                // head·hd..(head+1)·hd of `ctx`, which has a row per qkv row (checked above).
                unsafe {
                    gemm(
                        (len, hd, len),
                        dst.ptr().add(start * q_out + head * hd),
                        q_out,
                        false,
                        scores.as_ptr(),
                        len,
                        v,
                        (stride, 1),
                        1.0,
                    );
                }
            },
        );
    }
}

/// Cosines and sines of the rotary angles `p · base^(−2i/d)` for positions `0..len` and
/// `i < d/2`, computed in f32 as the reference does.
fn rope_table(base: f32, head_dim: usize, len: usize) -> (Vec<f32>, Vec<f32>) {
    let half = head_dim / 2;
    let inv: Vec<f32> = (0..half)
        .map(|i| 1.0 / base.powf((2 * i) as f32 / head_dim as f32))
        .collect();
    let mut cos = Vec::with_capacity(len * half);
    let mut sin = Vec::with_capacity(len * half);
    for p in 0..len {
        for f in &inv {
            let angle = p as f32 * f;
            cos.push(angle.cos());
            sin.push(angle.sin());
        }
    }
    (cos, sin)
}

/// Rotates one head's vector by its position (the halves-rotated form: value i pairs with
/// value i + d/2).
fn rotate(v: &mut [f32], cos: &[f32], sin: &[f32]) {
    let half = v.len() / 2;
    let (a, b) = v.split_at_mut(half);
    for i in 0..half {
        let (x, y) = (a[i], b[i]);
        a[i] = x * cos[i] - y * sin[i];
        b[i] = y * cos[i] + x * sin[i];
    }
}

impl Embedder for GemmaModel {
    fn space(&self) -> EmbeddingSpace {
        EmbeddingSpace {
            provider: "local-qgem1".into(),
            model: self.model_name.clone(),
            dimension: self.dimension,
            query_prefix: self.query_prompt.clone(),
            passage_prefix: "title: {title} | text: ".into(),
        }
    }

    fn embed_passages(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        let inputs: Vec<String> = texts
            .iter()
            .map(|t| GemmaModel::document_input("", t))
            .collect();
        let refs: Vec<&str> = inputs.iter().map(String::as_str).collect();
        self.embed_inputs(&refs)
    }

    fn embed_documents(&self, docs: &[(&str, &str)]) -> Result<Vec<Vec<f32>>, EmbedError> {
        let inputs: Vec<String> = docs
            .iter()
            .map(|(title, text)| GemmaModel::document_input(title, text))
            .collect();
        let refs: Vec<&str> = inputs.iter().map(String::as_str).collect();
        self.embed_inputs(&refs)
    }

    fn embed_query(&self, text: &str) -> Result<Vec<f32>, EmbedError> {
        let input = format!("{}{text}", self.query_prompt);
        let mut v = self.embed_inputs(&[&input])?;
        v.pop().ok_or(EmbedError::NoVector)
    }
}
