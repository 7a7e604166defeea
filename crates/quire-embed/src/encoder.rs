//! The BERT encoder both local models share, in candle: embeddings (word + position + token
//! type, LayerNorm), post-LayerNorm transformer layers with exact-erf GELU, then pooling over
//! the tokens. Where the weights and the token ids come from is the caller's business
//! ([`crate::E5Model`] reads an `E5S1` file, [`crate::BertDirModel`] a safetensors folder); the
//! caller also supplies word-embedding rows, so a 4-bit table can stay 4-bit.

use candle_core::{D, DType, Device, Tensor};

use crate::EmbedError;

/// A linear layer: weight kept transposed to `[in, out]` for `x·W`, and bias.
pub(crate) type Linear = (Tensor, Tensor);
/// A LayerNorm: scale and shift.
pub(crate) type Norm = (Tensor, Tensor);

pub(crate) struct Layer {
    pub q: Linear,
    pub k: Linear,
    pub v: Linear,
    pub attn_out: Linear,
    pub attn_norm: Norm,
    pub ffn_in: Linear,
    pub ffn_out: Linear,
    pub out_norm: Norm,
}

/// How token states become one vector.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pooling {
    /// The mean over the sequence's tokens (e5, MiniLM).
    Mean,
    /// The first token's state (`[CLS]`; bge and others).
    Cls,
}

pub(crate) struct Encoder {
    pub hidden: usize,
    pub heads: usize,
    pub layer_norm_eps: f32,
    /// Rows of the position table (the longest window, special tokens included).
    pub max_positions: usize,
    pub positions: Vec<f32>,
    /// Row 0 of the token-type table (every token is type 0).
    pub token_type: Vec<f32>,
    pub emb_norm: Norm,
    pub layers: Vec<Layer>,
    pub pooling: Pooling,
    pub device: Device,
}

pub(crate) fn candle(e: candle_core::Error) -> EmbedError {
    EmbedError::Model(e.to_string())
}

/// Sequences per forward pass; windows are sorted by length so padding stays small.
const BATCH: usize = 16;

impl Encoder {
    fn layer_norm(x: &Tensor, (w, b): &Norm, eps: f32) -> candle_core::Result<Tensor> {
        let mean = x.mean_keepdim(D::Minus1)?;
        let centered = x.broadcast_sub(&mean)?;
        let var = centered.sqr()?.mean_keepdim(D::Minus1)?;
        let normed = centered.broadcast_div(&(var + eps as f64)?.sqrt()?)?;
        normed.broadcast_mul(w)?.broadcast_add(b)
    }

    fn linear(x: &Tensor, (w, b): &Linear) -> candle_core::Result<Tensor> {
        x.broadcast_matmul(w)?.broadcast_add(b)
    }

    /// Pooled hidden states of a batch of windows (not normalised), one row per window.
    /// `word_row(id, out)` writes the word embedding of token `id` into `out`.
    fn forward(
        &self,
        batch: &[Vec<u32>],
        word_row: &dyn Fn(u32, &mut [f32]),
    ) -> Result<Vec<Vec<f32>>, EmbedError> {
        let hidden = self.hidden;
        let (b, l) = (
            batch.len(),
            batch.iter().map(|w| w.len()).max().unwrap_or(0),
        );
        let mut emb = vec![0f32; b * l * hidden];
        let mut mask = vec![0f32; b * l];
        let mut row = vec![0f32; hidden];
        for (i, ids) in batch.iter().enumerate() {
            for (t, &id) in ids.iter().enumerate().take(self.max_positions) {
                word_row(id, &mut row);
                let out = &mut emb[(i * l + t) * hidden..(i * l + t + 1) * hidden];
                let pos = &self.positions[t * hidden..(t + 1) * hidden];
                for d in 0..hidden {
                    out[d] = row[d] + pos[d] + self.token_type[d];
                }
                mask[i * l + t] = 1.0;
            }
        }
        let run = || -> candle_core::Result<Vec<Vec<f32>>> {
            let dev = &self.device;
            let mut x = Tensor::from_vec(emb, (b, l, hidden), dev)?;
            x = Self::layer_norm(&x, &self.emb_norm, self.layer_norm_eps)?;
            let mask_t = Tensor::from_vec(mask.clone(), (b, l), dev)?;
            // Additive attention mask: 0 for tokens, a large negative number for padding.
            let additive = ((mask_t.clone() - 1.0)? * 1e9)?.reshape((b, 1, 1, l))?;
            let heads = self.heads;
            let head_dim = hidden / heads;
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
                    .reshape((b, l, hidden))?;
                let attn = Self::linear(&ctx, &layer.attn_out)?;
                x = Self::layer_norm(&(x + attn)?, &layer.attn_norm, self.layer_norm_eps)?;
                let inner = Self::linear(&x, &layer.ffn_in)?.gelu_erf()?;
                let out = Self::linear(&inner, &layer.ffn_out)?;
                x = Self::layer_norm(&(x + out)?, &layer.out_norm, self.layer_norm_eps)?;
            }
            let pooled = match self.pooling {
                Pooling::Mean => {
                    let m = mask_t.reshape((b, l, 1))?;
                    let summed = x.broadcast_mul(&m)?.sum(1)?;
                    let counts = m.sum(1)?;
                    summed.broadcast_div(&counts)?
                }
                Pooling::Cls => x.narrow(1, 0, 1)?.squeeze(1)?,
            };
            pooled.to_dtype(DType::F32)?.to_vec2::<f32>()
        };
        run().map_err(candle)
    }

    /// Embeds texts given as windows of token ids (`windows[i]` are text `i`'s windows, each
    /// with its special tokens): sorted by length, batched, the windows of a long text averaged
    /// by their token counts, then L2-normalised.
    pub fn embed_windows(
        &self,
        windows: Vec<Vec<Vec<u32>>>,
        word_row: &dyn Fn(u32, &mut [f32]),
    ) -> Result<Vec<Vec<f32>>, EmbedError> {
        let texts = windows.len();
        let flat: Vec<(usize, Vec<u32>)> = windows
            .into_iter()
            .enumerate()
            .flat_map(|(i, ws)| ws.into_iter().map(move |w| (i, w)))
            .collect();
        let mut order: Vec<usize> = (0..flat.len()).collect();
        order.sort_by_key(|&j| flat[j].1.len());
        let mut sums = vec![vec![0f32; self.hidden]; texts];
        let mut weights = vec![0f32; texts];
        for group in order.chunks(BATCH) {
            let batch: Vec<Vec<u32>> = group.iter().map(|&j| flat[j].1.clone()).collect();
            let pooled = self.forward(&batch, word_row)?;
            for (&j, vector) in group.iter().zip(pooled) {
                let (text, ids) = (&flat[j].0, &flat[j].1);
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

/// Splits content ids into windows of at most `max_len` ids including `bos` and `eos`.
pub(crate) fn windows(content: &[u32], max_len: usize, bos: u32, eos: u32) -> Vec<Vec<u32>> {
    let size = max_len.saturating_sub(2).max(1);
    let mut out: Vec<Vec<u32>> = content
        .chunks(size)
        .map(|piece| {
            let mut ids = Vec::with_capacity(piece.len() + 2);
            ids.push(bos);
            ids.extend_from_slice(piece);
            ids.push(eos);
            ids
        })
        .collect();
    if out.is_empty() {
        out.push(vec![bos, eos]);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::windows;

    #[test]
    fn windows_carry_their_special_tokens_and_never_exceed_the_length() {
        let content: Vec<u32> = (10..17).collect();
        let w = windows(&content, 5, 1, 2);
        assert_eq!(
            w,
            vec![
                vec![1, 10, 11, 12, 2],
                vec![1, 13, 14, 15, 2],
                vec![1, 16, 2]
            ]
        );
        assert_eq!(windows(&[], 5, 1, 2), vec![vec![1, 2]]);
    }
}
