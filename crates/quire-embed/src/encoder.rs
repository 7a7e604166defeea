//! The BERT encoder both local models share: embeddings (word + position + token type,
//! LayerNorm), post-LayerNorm transformer layers with exact-erf GELU, then pooling over the
//! tokens. Where the weights and the token ids come from is the caller's business
//! ([`crate::E5Model`] reads an `E5S1` file, [`crate::BertDirModel`] a safetensors folder); the
//! caller also supplies word-embedding rows, so a 4-bit table can stay 4-bit.
//!
//! The forward pass is written here over plain `f32` buffers rather than as candle tensor
//! operations, for speed: the windows of a batch are packed end to end with no padding (every
//! dense layer is one matrix product over all the batch's tokens, attention runs per window and
//! head), Q, K and V are one product, bias and residual are folded into the products, and the
//! products (the `gemm` crate, which candle itself uses) and the element-wise kernels
//! ([`crate::kernels`]) are split over a small thread pool. Candle's version of the same model
//! ran at 0.44–0.70× PyTorch's speed on 2 cores; see docs/benchmarks.md for the figures of this one.

use rayon::prelude::*;

use crate::EmbedError;
use crate::amx;
use crate::kernels;
use crate::quant::{self, QDense, QRows};

/// A dense layer: weight `[out, in]` (row-major, as PyTorch stores it) and bias `[out]`.
pub(crate) struct Dense {
    w: Vec<f32>,
    b: Vec<f32>,
    inp: usize,
    out: usize,
}

impl Dense {
    /// Checks the sizes: `w` is `out × inp` values, `b` is `out`.
    pub fn new(w: Vec<f32>, b: Vec<f32>, out: usize, inp: usize) -> Result<Dense, EmbedError> {
        if w.len() != out * inp || b.len() != out {
            return Err(EmbedError::Format(format!(
                "a {out}×{inp} layer has {} weights and {} biases",
                w.len(),
                b.len()
            )));
        }
        Ok(Dense { w, b, inp, out })
    }

    /// Stacks layers with the same input into one whose outputs follow each other.
    fn stack(parts: Vec<Dense>) -> Dense {
        let inp = parts[0].inp;
        let out = parts.iter().map(|p| p.out).sum();
        let mut w = Vec::with_capacity(out * inp);
        let mut b = Vec::with_capacity(out);
        for p in parts {
            w.extend(p.w);
            b.extend(p.b);
        }
        Dense { w, b, inp, out }
    }
}

/// A dense layer's weights: f32, or 4-bit with int8 activations ([`crate::quant`]).
pub(crate) enum Linear {
    F32(Dense),
    Q4(QDense),
}

impl Linear {
    pub(crate) fn inp(&self) -> usize {
        match self {
            Linear::F32(d) => d.inp,
            Linear::Q4(d) => d.inp,
        }
    }
    pub(crate) fn out(&self) -> usize {
        match self {
            Linear::F32(d) => d.out,
            Linear::Q4(d) => d.out,
        }
    }
    fn bias(&self) -> &[f32] {
        match self {
            Linear::F32(d) => &d.b,
            Linear::Q4(d) => &d.b,
        }
    }
    /// Stacks layers with the same input and the same kind of weights (Q, K and V; a gate and
    /// its up projection) into one product.
    pub(crate) fn stack(parts: Vec<Linear>) -> Result<Linear, EmbedError> {
        let mut f32s = Vec::new();
        let mut ints = Vec::new();
        for p in parts {
            match p {
                Linear::F32(d) => f32s.push(d),
                Linear::Q4(d) => ints.push(d),
            }
        }
        match (f32s.is_empty(), ints.is_empty()) {
            (false, true) => Ok(Linear::F32(Dense::stack(f32s))),
            (true, false) if ints.iter().all(|d| d.same_kind(&ints[0])) => {
                Ok(Linear::Q4(QDense::stack(ints)))
            }
            _ => Err(EmbedError::Format(
                "layers stacked into one product are stored in different formats".into(),
            )),
        }
    }
}

/// A LayerNorm: scale and shift.
pub(crate) struct Norm {
    pub w: Vec<f32>,
    pub b: Vec<f32>,
}

pub(crate) struct Layer {
    /// Q, K and V stacked: `[3·hidden, hidden]`.
    qkv: Linear,
    attn_out: Linear,
    attn_norm: Norm,
    ffn_in: Linear,
    ffn_out: Linear,
    out_norm: Norm,
}

/// The weights of one transformer layer, as the loaders read them.
pub(crate) struct LayerWeights {
    pub q: Linear,
    pub k: Linear,
    pub v: Linear,
    pub attn_out: Linear,
    pub attn_norm: Norm,
    pub ffn_in: Linear,
    pub ffn_out: Linear,
    pub out_norm: Norm,
}

impl Layer {
    pub fn new(l: LayerWeights, hidden: usize) -> Result<Layer, EmbedError> {
        let square = [&l.q, &l.k, &l.v, &l.attn_out]
            .iter()
            .all(|d| d.inp() == hidden && d.out() == hidden);
        let ffn = l.ffn_in.inp() == hidden
            && l.ffn_out.out() == hidden
            && l.ffn_out.inp() == l.ffn_in.out();
        let norms = [&l.attn_norm, &l.out_norm]
            .iter()
            .all(|n| n.w.len() == hidden && n.b.len() == hidden);
        if !(square && ffn && norms) {
            return Err(EmbedError::Format(format!(
                "a layer's weights do not fit the hidden size {hidden}"
            )));
        }
        Ok(Layer {
            qkv: Linear::stack(vec![l.q, l.k, l.v])?,
            attn_out: l.attn_out,
            attn_norm: l.attn_norm,
            ffn_in: l.ffn_in,
            ffn_out: l.ffn_out,
            out_norm: l.out_norm,
        })
    }
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
    pub pool: rayon::ThreadPool,
}

/// Writes the word embedding of a token id into a row; shared by the worker threads.
pub(crate) type WordRow<'a> = dyn Fn(u32, &mut [f32]) + Sync + 'a;

/// How many threads one model uses to embed: `QUIRE_EMBED_THREADS` if set, else one per core.
pub fn embed_threads() -> usize {
    std::env::var("QUIRE_EMBED_THREADS")
        .ok()
        .and_then(|v| v.trim().parse::<usize>().ok())
        .filter(|n| *n > 0)
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
}

/// The model's own thread pool ([`embed_threads`] threads), apart from rayon's global one.
pub(crate) fn thread_pool() -> Result<rayon::ThreadPool, EmbedError> {
    rayon::ThreadPoolBuilder::new()
        .num_threads(embed_threads())
        .thread_name(|i| format!("quire-embed-{i}"))
        .build()
        .map_err(EmbedError::Threads)
}

/// Rows (tokens) from which a 4-bit layer runs on AMX tiles where the CPU has them: below, the
/// VNNI kernel over the 4-bit weights is as fast and needs no bf16 copy of the weights (a query
/// never makes one).
const AMX_MIN_ROWS: usize = 64;

/// Tokens per forward pass: bounds the buffers (the FFN's is tokens × 1,536 floats).
const TOKENS_PER_PASS: usize = 4096;

/// A pointer that worker threads write through, each to its own disjoint part.
#[derive(Clone, Copy)]
pub(crate) struct Shared(pub(crate) *mut f32);
// SAFETY: every use hands each thread a region of the buffer no other thread touches, and the
// buffer outlives the parallel section (it is borrowed mutably for its whole length).
unsafe impl Send for Shared {}
unsafe impl Sync for Shared {}

impl Shared {
    /// The pointer; a method, so that closures capture the whole `Shared` (which is `Send`).
    pub(crate) fn ptr(self) -> *mut f32 {
        self.0
    }
}

/// `dst[m×n] = (read_dst ? dst : 0) + beta · lhs[m×k] · rhs[k×n]`, single-threaded, with unit
/// column strides for `dst` and `lhs` and the given strides for `rhs`.
///
/// # Safety
/// Every pointer must be valid for the rows and strides given.
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn gemm(
    (m, n, k): (usize, usize, usize),
    dst: *mut f32,
    dst_rs: usize,
    read_dst: bool,
    lhs: *const f32,
    lhs_rs: usize,
    rhs: *const f32,
    (rhs_rs, rhs_cs): (usize, usize),
    beta: f32,
) {
    // SAFETY: the caller's contract.
    unsafe {
        gemm::gemm(
            m,
            n,
            k,
            dst,
            1,
            dst_rs as isize,
            read_dst,
            lhs,
            1,
            lhs_rs as isize,
            rhs,
            rhs_cs as isize,
            rhs_rs as isize,
            1.0,
            beta,
            false,
            false,
            false,
            gemm::Parallelism::None,
        )
    }
}

/// `out = (residual or 0) + bias + input · Wᵀ` over the rows of `input`.
pub(crate) fn linear(
    threads: usize,
    input: &[f32],
    d: &Linear,
    out: &mut [f32],
    residual: Option<&[f32]>,
    scratch: &mut QRows,
) {
    let rows = input.len() / d.inp();
    assert_eq!(
        out.len(),
        rows * d.out(),
        "output rows of {} values",
        d.out()
    );
    if let Linear::Q4(q4) = d
        && linear_on_tiles(input, q4, out, residual)
    {
        return;
    }
    let bias = d.bias();
    out.par_chunks_mut(d.out())
        .enumerate()
        .for_each(|(r, row)| {
            row.copy_from_slice(bias);
            if let Some(res) = residual {
                for (o, x) in row.iter_mut().zip(&res[r * d.out()..(r + 1) * d.out()]) {
                    *o += x;
                }
            }
        });
    match d {
        Linear::F32(d) => dense(threads, input, d, out, residual),
        Linear::Q4(d) => dense_q4(threads, input, d, out, scratch),
    }
}

/// `out += input · Wᵀ` with 4-bit weights: the input quantized per block, then split over the
/// pool by rows when there are many, else by output tiles.
fn dense_q4(threads: usize, input: &[f32], d: &QDense, out: &mut [f32], q: &mut QRows) {
    let rows = input.len() / d.inp;
    assert_eq!(input.len(), rows * d.inp, "input rows of {} values", d.inp);
    q.resize(rows, d.inp);
    let per_block = quant::BLOCK;
    let chunk = 64;
    input
        .par_chunks(chunk * d.inp)
        .zip(q.values.par_chunks_mut(chunk * d.inp))
        .zip(q.scales.par_chunks_mut(chunk * d.inp / per_block))
        .zip(q.sums.par_chunks_mut(chunk * d.inp / per_block))
        .for_each(|(((x, v), s), m)| quant::quantize(x, v, s, m));
    let q = &*q;
    if rows >= 16 * threads {
        let per = rows.div_ceil(threads * 4).max(16);
        let blocks = d.inp / per_block;
        out.par_chunks_mut(per * d.out)
            .enumerate()
            .for_each(|(part, o)| {
                let r0 = part * per;
                let n = o.len() / d.out;
                quant::matmul(&q.view(r0..r0 + n, blocks), d, 0..d.tiles(), o, d.out);
            });
    } else {
        let tiles = d.tiles();
        let per = tiles.div_ceil(threads);
        let parts: Vec<(usize, Vec<f32>)> = (0..tiles.div_ceil(per))
            .into_par_iter()
            .map(|part| {
                let range = part * per..((part + 1) * per).min(tiles);
                let width = range.len() * 16;
                let mut o = vec![0f32; rows * width];
                quant::matmul(&q.view(0..rows, d.inp / per_block), d, range, &mut o, width);
                (part * per * 16, o)
            })
            .collect();
        for (c0, o) in parts {
            let width = o.len() / rows.max(1);
            for (r, src) in o.chunks_exact(width.max(1)).enumerate() {
                for (dst, v) in out[r * d.out + c0..r * d.out + c0 + width]
                    .iter_mut()
                    .zip(src)
                {
                    *dst += v;
                }
            }
        }
    }
}

/// `out += input · Wᵀ` over `t` rows, split over the pool: by rows when there are many,
/// else by output columns (a short query reads each weight once).
fn dense(threads: usize, input: &[f32], d: &Dense, out: &mut [f32], residual: Option<&[f32]>) {
    let t = input.len() / d.inp;
    // The shapes the raw-pointer products below rely on: checked here, in the safe caller.
    assert_eq!(input.len(), t * d.inp, "input rows of {} values", d.inp);
    assert_eq!(out.len(), t * d.out, "output rows of {} values", d.out);
    assert_eq!(d.w.len(), d.out * d.inp, "weights out × inp");
    assert_eq!(d.b.len(), d.out, "one bias per output");
    if let Some(res) = residual {
        assert_eq!(res.len(), out.len(), "residual shaped like the output");
    }
    if t >= 32 * threads {
        // Several chunks per thread, so a thread slowed by other work gets fewer of them;
        // none smaller than 128 rows, where the product gets less efficient.
        let rows = t.div_ceil(threads * 4).max(128).min(t.div_ceil(threads));
        out.par_chunks_mut(rows * d.out)
            .zip(input.par_chunks(rows * d.inp))
            .for_each(|(o, i)| {
                let m = i.len() / d.inp;
                // SAFETY: `o` is m × out, `i` is m × inp, `w` is out × inp, all row-major.
                unsafe {
                    gemm(
                        (m, d.out, d.inp),
                        o.as_mut_ptr(),
                        d.out,
                        true,
                        i.as_ptr(),
                        d.inp,
                        d.w.as_ptr(),
                        (1, d.inp),
                        1.0,
                    )
                }
            });
    } else {
        let cols = d.out.div_ceil(threads).next_multiple_of(16);
        let dst = Shared(out.as_mut_ptr());
        (0..d.out.div_ceil(cols)).into_par_iter().for_each(|part| {
            let c0 = part * cols;
            let n = cols.min(d.out - c0);
            // SAFETY: each part writes only its own columns c0..c0+n of the t × out output;
            // the weight rows c0..c0+n are in bounds.
            unsafe {
                gemm(
                    (t, n, d.inp),
                    dst.ptr().add(c0),
                    d.out,
                    true,
                    input.as_ptr(),
                    d.inp,
                    d.w.as_ptr().add(c0 * d.inp),
                    (1, d.inp),
                    1.0,
                )
            }
        });
    }
}

/// `out = (residual or 0) + bias + input · Wᵀ` on AMX tiles, a few rows at a time (each
/// block's rows rounded to bf16, multiplied, and written while in the core's cache). False,
/// with `out` untouched, where the tiles are not used (few rows, no AMX, a shape the kernel
/// does not take).
fn linear_on_tiles(input: &[f32], d: &QDense, out: &mut [f32], residual: Option<&[f32]>) -> bool {
    let rows = input.len() / d.inp;
    if rows < AMX_MIN_ROWS || !amx::amx_active() {
        return false;
    }
    let Some(tiles) = d.amx() else {
        return false;
    };
    const ROWS: usize = 2 * amx::ROW_STEP;
    let (inp, width) = (d.inp, d.out);
    out.par_chunks_mut(ROWS * width).enumerate().for_each_init(
        || vec![0u16; ROWS * inp],
        |xb, (part, o)| {
            let n = o.len() / width;
            let r0 = part * ROWS;
            amx::to_bf16(&input[r0 * inp..(r0 + n) * inp], &mut xb[..n * inp]);
            for (r, row) in o.chunks_exact_mut(width).enumerate() {
                row.copy_from_slice(&d.b);
                if let Some(res) = residual {
                    let res = &res[(r0 + r) * width..(r0 + r + 1) * width];
                    row.iter_mut().zip(res).for_each(|(o, x)| *o += x);
                }
            }
            // Rows past n (up to a whole tile) are padding: their products are dropped.
            amx::matmul(&xb[..n.next_multiple_of(amx::ROW_STEP) * inp], n, tiles, o);
        },
    );
    true
}

impl Encoder {
    fn threads(&self) -> usize {
        self.pool.current_num_threads().max(1)
    }

    /// `out = (residual or 0) + bias + input · Wᵀ`, split over the model's pool.
    fn linear(
        &self,
        input: &[f32],
        d: &Linear,
        out: &mut [f32],
        residual: Option<&[f32]>,
        scratch: &mut QRows,
    ) {
        linear(self.threads(), input, d, out, residual, scratch)
    }

    /// The feed-forward block of a layer on AMX tiles, a few rows at a time so that the wide
    /// intermediate rows stay in the core's cache: `y = LayerNorm(x + W₂·GELU(W₁·x + b₁) + b₂)`.
    /// Done one layer-wide step after another, the 1,536 values a token has in between were
    /// written, read and written again through memory (the GELU pass alone was 9% of the time,
    /// waiting on memory). False, with `y` untouched, where the tiles are not used (few rows,
    /// f32 weights, no AMX).
    fn feed_forward_on_tiles(&self, x: &[f32], layer: &Layer, y: &mut [f32]) -> bool {
        let hidden = self.hidden;
        let rows = x.len() / hidden.max(1);
        let (Linear::Q4(fi), Linear::Q4(fo)) = (&layer.ffn_in, &layer.ffn_out) else {
            return false;
        };
        if rows < AMX_MIN_ROWS || !amx::amx_active() {
            return false;
        }
        let (Some(ti), Some(to)) = (fi.amx(), fo.amx()) else {
            return false;
        };
        let inter = fi.out;
        assert_eq!(y.len(), x.len(), "y shaped like x");
        const ROWS: usize = 2 * amx::ROW_STEP;
        let eps = self.layer_norm_eps;
        let norm = &layer.out_norm;
        y.par_chunks_mut(ROWS * hidden)
            .zip(x.par_chunks(ROWS * hidden))
            .for_each_init(
                || {
                    (
                        vec![0u16; ROWS * hidden],
                        vec![0f32; ROWS * inter],
                        vec![0u16; ROWS * inter],
                    )
                },
                |(xb, inner, ib), (yo, xi)| {
                    let n = xi.len() / hidden;
                    // Rows past n (up to a whole tile) are padding: their products are dropped.
                    let padded = n.next_multiple_of(amx::ROW_STEP);
                    amx::to_bf16(xi, &mut xb[..n * hidden]);
                    let inner = &mut inner[..n * inter];
                    for row in inner.chunks_exact_mut(inter) {
                        row.copy_from_slice(&fi.b);
                    }
                    amx::matmul(&xb[..padded * hidden], n, ti, inner);
                    kernels::gelu(inner);
                    amx::to_bf16(inner, &mut ib[..n * inter]);
                    for (row, res) in yo.chunks_exact_mut(hidden).zip(xi.chunks_exact(hidden)) {
                        for ((o, b), r) in row.iter_mut().zip(&fo.b).zip(res) {
                            *o = b + r;
                        }
                    }
                    amx::matmul(&ib[..padded * inter], n, to, yo);
                    for row in yo.chunks_exact_mut(hidden) {
                        kernels::layer_norm(row, &norm.w, &norm.b, eps);
                    }
                },
            );
        true
    }

    /// Self-attention of every window and head: `ctx = softmax(Q·Kᵀ/√d) · V`, read from the
    /// stacked `qkv` rows and written into `ctx`, one job per (window, head).
    fn attention(&self, qkv: &[f32], spans: &[(usize, usize)], ctx: &mut [f32]) {
        let (hidden, heads) = (self.hidden, self.heads);
        let d = hidden / heads;
        let scale = 1.0 / (d as f32).sqrt();
        let stride = 3 * hidden;
        // The bounds the raw-pointer products below rely on: checked here, in the safe caller.
        assert_eq!(d * heads, hidden, "heads divide the hidden size");
        assert_eq!(
            qkv.len() / stride * hidden,
            ctx.len(),
            "ctx has a row per qkv row"
        );
        assert!(
            spans
                .iter()
                .all(|&(start, len)| (start + len) * stride <= qkv.len()),
            "every window lies inside qkv"
        );
        let dst = Shared(ctx.as_mut_ptr());
        if d == amx::HEAD && qkv.len() / stride >= AMX_MIN_ROWS && amx::amx_active() {
            (0..spans.len() * heads).into_par_iter().for_each_init(
                amx::HeadScratch::default,
                |scratch, job| {
                    let (start, len) = spans[job / heads];
                    let head = job % heads;
                    let window = &qkv[start * stride..(start + len) * stride];
                    let at = (head * d, hidden + head * d, 2 * hidden + head * d);
                    amx::attention_head(window, stride, at, len, scale, kernels::softmax, scratch);
                    for (r, row) in scratch.out.chunks_exact(d).take(len).enumerate() {
                        // SAFETY: this job alone writes row start+r, columns head·d..(head+1)·d
                        // of `ctx`, which has a row per qkv row (checked above).
                        unsafe {
                            std::ptr::copy_nonoverlapping(
                                row.as_ptr(),
                                dst.ptr().add((start + r) * hidden + head * d),
                                d,
                            );
                        }
                    }
                },
            );
            return;
        }
        (0..spans.len() * heads).into_par_iter().for_each_init(
            Vec::new,
            |scores: &mut Vec<f32>, job| {
                let (start, len) = spans[job / heads];
                let head = job % heads;
                scores.clear();
                scores.resize(len * len, 0.0);
                let q = qkv[start * stride + head * d..].as_ptr();
                let k = qkv[start * stride + hidden + head * d..].as_ptr();
                let v = qkv[start * stride + 2 * hidden + head * d..].as_ptr();
                // SAFETY: Q, K and V of this window are `len` rows of `d` values at `stride`
                // apart inside `qkv`; scores is len × len; this job alone writes rows
                // start..start+len, columns head·d..(head+1)·d of `ctx`.
                unsafe {
                    gemm(
                        (len, len, d),
                        scores.as_mut_ptr(),
                        len,
                        false,
                        q,
                        stride,
                        k,
                        (1, stride),
                        scale,
                    );
                    for row in scores.chunks_exact_mut(len) {
                        kernels::softmax(row);
                    }
                    gemm(
                        (len, d, len),
                        dst.ptr().add(start * hidden + head * d),
                        hidden,
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

    /// Pooled hidden states of windows packed end to end (not normalised), one row per window.
    /// `word_row(id, out)` writes the word embedding of token `id` into `out`.
    fn forward(&self, batch: &[&[u32]], word_row: &WordRow) -> Vec<Vec<f32>> {
        let hidden = self.hidden;
        let mut spans = Vec::with_capacity(batch.len());
        let mut t = 0;
        for ids in batch {
            let len = ids.len().clamp(1, self.max_positions);
            spans.push((t, len));
            t += len;
        }
        let eps = self.layer_norm_eps;
        let mut x = vec![0f32; t * hidden];
        let mut y = vec![0f32; t * hidden];
        let mut ctx = vec![0f32; t * hidden];
        let mut qkv = vec![0f32; t * 3 * hidden];
        let inter = self.layers.first().map_or(0, |l| l.ffn_in.out());
        let mut scratch = QRows::default();
        let mut inner = vec![0f32; t * inter];
        self.pool.install(|| {
            // Embeddings: each window's rows are its own, so windows go in parallel.
            let mut rest: &mut [f32] = &mut x;
            let mut pieces = Vec::with_capacity(spans.len());
            for &(_, len) in &spans {
                let (head, tail) = rest.split_at_mut(len * hidden);
                pieces.push(head);
                rest = tail;
            }
            pieces
                .into_par_iter()
                .zip(batch.par_iter())
                .for_each(|(rows, ids)| {
                    for (p, row) in rows.chunks_exact_mut(hidden).enumerate() {
                        word_row(ids.get(p).copied().unwrap_or(0), row);
                        let pos = &self.positions[p * hidden..(p + 1) * hidden];
                        for ((o, a), b) in row.iter_mut().zip(pos).zip(&self.token_type) {
                            *o += a + b;
                        }
                        kernels::layer_norm(row, &self.emb_norm.w, &self.emb_norm.b, eps);
                    }
                });
            let norm_rows = |buf: &mut [f32], n: &Norm| {
                buf.par_chunks_mut(hidden)
                    .for_each(|row| kernels::layer_norm(row, &n.w, &n.b, eps));
            };
            for layer in &self.layers {
                self.linear(&x, &layer.qkv, &mut qkv, None, &mut scratch);
                self.attention(&qkv, &spans, &mut ctx);
                self.linear(&ctx, &layer.attn_out, &mut y, Some(&x), &mut scratch);
                norm_rows(&mut y, &layer.attn_norm);
                std::mem::swap(&mut x, &mut y);
                if !self.feed_forward_on_tiles(&x, layer, &mut y) {
                    self.linear(&x, &layer.ffn_in, &mut inner, None, &mut scratch);
                    inner
                        .par_chunks_mut(inter.max(1) * 16)
                        .for_each(kernels::gelu);
                    self.linear(&inner, &layer.ffn_out, &mut y, Some(&x), &mut scratch);
                    norm_rows(&mut y, &layer.out_norm);
                }
                std::mem::swap(&mut x, &mut y);
            }
        });
        spans
            .iter()
            .map(|&(start, len)| {
                let rows = &x[start * hidden..(start + len) * hidden];
                match self.pooling {
                    Pooling::Mean => {
                        let mut v = vec![0f32; hidden];
                        for row in rows.chunks_exact(hidden) {
                            for (a, b) in v.iter_mut().zip(row) {
                                *a += b;
                            }
                        }
                        v.iter_mut().for_each(|a| *a /= len as f32);
                        v
                    }
                    Pooling::Cls => rows[..hidden].to_vec(),
                }
            })
            .collect()
    }

    /// Embeds texts given as windows of token ids (`windows[i]` are text `i`'s windows, each
    /// with its special tokens): packed into passes of at most [`TOKENS_PER_PASS`] tokens, the
    /// windows of a long text averaged by their token counts, then L2-normalised.
    pub fn embed_windows(
        &self,
        windows: Vec<Vec<Vec<u32>>>,
        word_row: &WordRow,
    ) -> Result<Vec<Vec<f32>>, EmbedError> {
        let means = mean_of_windows(&windows, self.hidden, TOKENS_PER_PASS, |batch| {
            self.forward(batch, word_row)
        });
        Ok(means
            .into_iter()
            .map(|mut v| {
                let norm = v.iter().map(|x| x * x).sum::<f32>().max(1e-12).sqrt();
                v.iter_mut().for_each(|x| *x /= norm);
                v
            })
            .collect())
    }
}

/// Each text's pooled vector from its windows (`windows[i]` are text `i`'s, each with its two
/// special tokens): the windows packed into passes of at most `max_tokens` tokens, each pass
/// run by `forward` (one pooled row of `width` values per window), and a text's windows
/// averaged by their content tokens. Not normalised.
pub(crate) fn mean_of_windows(
    windows: &[Vec<Vec<u32>>],
    width: usize,
    max_tokens: usize,
    mut forward: impl FnMut(&[&[u32]]) -> Vec<Vec<f32>>,
) -> Vec<Vec<f32>> {
    let flat: Vec<(usize, &[u32])> = windows
        .iter()
        .enumerate()
        .flat_map(|(i, ws)| ws.iter().map(move |w| (i, w.as_slice())))
        .collect();
    let mut sums = vec![vec![0f32; width]; windows.len()];
    let mut weights = vec![0f32; windows.len()];
    let mut start = 0;
    while start < flat.len() {
        let mut end = start;
        let mut tokens = 0;
        while end < flat.len() && (end == start || tokens + flat[end].1.len() <= max_tokens) {
            tokens += flat[end].1.len();
            end += 1;
        }
        let batch: Vec<&[u32]> = flat[start..end].iter().map(|(_, w)| *w).collect();
        for ((text, ids), vector) in flat[start..end].iter().zip(forward(&batch)) {
            let weight = ids.len().saturating_sub(2).max(1) as f32;
            for (s, v) in sums[*text].iter_mut().zip(vector) {
                *s += v * weight;
            }
            weights[*text] += weight;
        }
        start = end;
    }
    for (v, w) in sums.iter_mut().zip(weights) {
        v.iter_mut().for_each(|x| *x /= w.max(1e-12));
    }
    sums
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
