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

/// Writes the word embedding of a token id into a row; shared by the worker threads.
pub(crate) type WordRow<'a> = dyn Fn(u32, &mut [f32]) + Sync + 'a;

/// How many threads run batches side by side. When candle itself runs on one thread
/// (`CANDLE_NUM_THREADS=1` and `RAYON_NUM_THREADS=1`, which the quire binary sets unless the user
/// did), quire runs whole batches in parallel instead, one per core (`QUIRE_EMBED_THREADS`
/// overrides): no barrier between threads inside an operation, which on a 2-core machine that is
/// also busy with other work made candle's own threading 2–5× slower than one thread. Otherwise
/// candle parallelises inside each operation and batches run one at a time.
pub fn batch_workers() -> usize {
    let candle_single = ["CANDLE_NUM_THREADS", "RAYON_NUM_THREADS"]
        .iter()
        .all(|var| std::env::var(var).is_ok_and(|v| v.trim() == "1"));
    if !candle_single {
        return 1;
    }
    std::env::var("QUIRE_EMBED_THREADS")
        .ok()
        .and_then(|v| v.trim().parse::<usize>().ok())
        .filter(|n| *n > 0)
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
}

/// Makes candle run each operation on one thread, so that [`batch_workers`] runs whole batches
/// side by side instead, unless the user set `CANDLE_NUM_THREADS` or `RAYON_NUM_THREADS`.
///
/// # Safety
/// It sets environment variables: call it first thing in `main`, before any other thread exists.
pub unsafe fn prefer_batch_parallel() {
    if std::env::var_os("CANDLE_NUM_THREADS").is_none()
        && std::env::var_os("RAYON_NUM_THREADS").is_none()
    {
        // SAFETY: the caller guarantees that no other thread exists yet.
        unsafe {
            std::env::set_var("CANDLE_NUM_THREADS", "1");
            std::env::set_var("RAYON_NUM_THREADS", "1");
        }
    }
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
    fn forward(&self, batch: &[Vec<u32>], word_row: &WordRow) -> Result<Vec<Vec<f32>>, EmbedError> {
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
        word_row: &WordRow,
    ) -> Result<Vec<Vec<f32>>, EmbedError> {
        let texts = windows.len();
        let flat: Vec<(usize, Vec<u32>)> = windows
            .into_iter()
            .enumerate()
            .flat_map(|(i, ws)| ws.into_iter().map(move |w| (i, w)))
            .collect();
        let mut order: Vec<usize> = (0..flat.len()).collect();
        order.sort_by_key(|&j| flat[j].1.len());
        // With several workers, smaller batches so that every core gets one.
        let wanted = batch_workers();
        let size = if wanted > 1 {
            order.len().div_ceil(wanted).clamp(1, BATCH)
        } else {
            BATCH
        };
        let groups: Vec<&[usize]> = order.chunks(size).collect();
        let run_group = |group: &[usize]| -> Result<Vec<Vec<f32>>, EmbedError> {
            let batch: Vec<Vec<u32>> = group.iter().map(|&j| flat[j].1.clone()).collect();
            self.forward(&batch, word_row)
        };
        let workers = wanted.min(groups.len()).max(1);
        let pooled: Vec<Result<Vec<Vec<f32>>, EmbedError>> = if workers == 1 {
            groups.iter().map(|g| run_group(g)).collect()
        } else {
            // Whole batches side by side: each worker takes the next batch until none is left.
            let next = std::sync::atomic::AtomicUsize::new(0);
            let mut results: Vec<Option<Result<Vec<Vec<f32>>, EmbedError>>> =
                (0..groups.len()).map(|_| None).collect();
            let joined = std::thread::scope(|scope| {
                let handles: Vec<_> = (0..workers)
                    .map(|_| {
                        scope.spawn(|| {
                            let mut mine = Vec::new();
                            loop {
                                let g = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                                let Some(group) = groups.get(g) else { break };
                                mine.push((g, run_group(group)));
                            }
                            mine
                        })
                    })
                    .collect();
                handles.into_iter().map(|h| h.join()).collect::<Vec<_>>()
            });
            for mine in joined {
                let mine =
                    mine.map_err(|_| EmbedError::Model("an embedding thread panicked".into()))?;
                for (g, result) in mine {
                    results[g] = Some(result);
                }
            }
            results
                .into_iter()
                .map(|r| r.unwrap_or_else(|| Err(EmbedError::Model("a batch was lost".into()))))
                .collect()
        };
        let mut sums = vec![vec![0f32; self.hidden]; texts];
        let mut weights = vec![0f32; texts];
        for (group, pooled) in groups.iter().zip(pooled) {
            for (&j, vector) in group.iter().zip(pooled?) {
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
