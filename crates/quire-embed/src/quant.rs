//! Dense layers over 4-bit or 8-bit integer weights and 8-bit activations. For e5 this is the
//! reference engine's arithmetic (`docs/e5s1-format.md` §3.7): each Q4_0 weight stays the 4-bit
//! integer its file stores (with
//! its block's scale), each input row is quantized per block of 32 values to int8 with a scale of
//! `max|x| / 127`, and a block's product is an integer dot product, scaled once. The weights
//! take a quarter of the memory of f32 ones, and on CPUs with AVX-512 VNNI one instruction does
//! 64 multiply-adds (`vpdpbusd`), about four times the f32 product's rate.
//!
//! The weights are unpacked at load into the layout that instruction wants: for 16 outputs and
//! 4 consecutive inputs, 64 bytes (output-major, 4 inputs each), so that one broadcast of 4 input
//! bytes multiplies 16 outputs at once. The value stored is unsigned: the nibble (0..15) with a
//! zero point of 8, or an 8-bit weight plus 128 (EmbeddingGemma's `QGEM1` file stores them so,
//! `docs/qgem1-format.md`); the zero point is taken off once per block as `zero · Σ input`. Integer sums are exact, so the AVX-512
//! kernel and the portable one give the same products; only the f32 sum of the blocks'
//! scaled products may round differently.

/// Values per Q4_0 block, and per activation block.
pub(crate) const BLOCK: usize = 32;
/// Outputs per tile of the packed layout (the i32 lanes of one AVX-512 register).
const TILE: usize = 16;
/// Bytes of one tile's block: 32 inputs × 16 outputs.
const TILE_BLOCK: usize = BLOCK * TILE;

/// Packed weight bytes: unpacked at load, or a range of a mapped model file already laid out
/// for the kernel (`docs/qgem1-format.md`), so that a process reads only what it multiplies by.
pub(crate) enum Packed {
    Owned(Vec<u8>),
    Mapped(
        std::sync::Arc<crate::e5s1::ModelBytes>,
        std::ops::Range<usize>,
    ),
}

impl std::ops::Deref for Packed {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        match self {
            Packed::Owned(v) => v,
            Packed::Mapped(m, r) => &m[r.clone()],
        }
    }
}

/// A dense layer `y = x·Wᵀ + b` with 4-bit or 8-bit integer weights, `out` a multiple of 16 and
/// `inp` of 32.
pub(crate) struct QDense {
    pub out: usize,
    pub inp: usize,
    /// Unsigned weights in the tile layout: `[out/16][inp/32][8 groups][16 outputs][4 inputs]`,
    /// each the integer weight plus [`QDense::zero`].
    nibbles: Packed,
    /// The zero point stored weights carry: 8 for 4-bit weights (0..15), 128 for 8-bit ones.
    zero: i32,
    /// Block scales: `[out/16][inp/32][16 outputs]`.
    scales: Vec<f32>,
    pub b: Vec<f32>,
    /// The same weights as bf16 tiles for AMX, made on the first large batch that uses them.
    amx: std::sync::OnceLock<Option<crate::amx::AmxDense>>,
}

impl QDense {
    /// Unpacks a `[out, inp]` Q4_0 matrix (18 bytes per block: an f16 scale, 16 bytes of
    /// nibbles, low nibbles first) with its bias.
    pub fn from_q4_0(
        q4: &[u8],
        b: Vec<f32>,
        out: usize,
        inp: usize,
    ) -> Result<QDense, crate::EmbedError> {
        let blocks = inp / BLOCK;
        if !out.is_multiple_of(TILE)
            || !inp.is_multiple_of(BLOCK)
            || q4.len() != out * blocks * 18
            || b.len() != out
        {
            return Err(crate::EmbedError::Format(format!(
                "a {out}×{inp} 4-bit layer has {} bytes and {} biases",
                q4.len(),
                b.len()
            )));
        }
        let mut nibbles = vec![0u8; out * inp];
        let mut scales = vec![0f32; out * blocks];
        for (o, row) in q4.chunks_exact(blocks * 18).enumerate() {
            let (tile, lane) = (o / TILE, o % TILE);
            for (blk, block) in row.chunks_exact(18).enumerate() {
                let at = tile * blocks + blk;
                scales[at * TILE + lane] =
                    half::f16::from_bits(u16::from_le_bytes([block[0], block[1]])).to_f32();
                let base = at * TILE_BLOCK + lane * 4;
                for (j, &q) in block[2..].iter().enumerate() {
                    // Input j is the low nibble, input j + 16 the high one.
                    for (k, v) in [(j, q & 0x0F), (j + 16, q >> 4)] {
                        nibbles[base + (k / 4) * TILE * 4 + k % 4] = v;
                    }
                }
            }
        }
        Ok(QDense {
            out,
            inp,
            nibbles: Packed::Owned(nibbles),
            zero: 8,
            scales,
            b,
            amx: std::sync::OnceLock::new(),
        })
    }

    /// A layer of 8-bit weights already in the tile layout (values plus 128) with their block
    /// scales in the same order (`[out/16][inp/32][16 outputs]`), and no bias.
    pub fn from_q8_tiles(
        values: Packed,
        scales: Vec<f32>,
        out: usize,
        inp: usize,
    ) -> Result<QDense, crate::EmbedError> {
        if !out.is_multiple_of(TILE)
            || !inp.is_multiple_of(BLOCK)
            || values.len() != out * inp
            || scales.len() != out * inp / BLOCK
        {
            return Err(crate::EmbedError::Format(format!(
                "a {out}×{inp} 8-bit layer has {} values and {} scales",
                values.len(),
                scales.len()
            )));
        }
        Ok(QDense {
            out,
            inp,
            nibbles: values,
            zero: 128,
            scales,
            b: vec![0.0; out],
            amx: std::sync::OnceLock::new(),
        })
    }

    /// This 8-bit layer with its weights rounded again to `bits` bits per block of 32 (symmetric
    /// levels −2^(bits−1) … 2^(bits−1)−1, the block's scale `max|w| / (2^(bits−1)−1)`): what a file
    /// of `bits`-bit weights would compute, kept in the same bytes, for measuring the quality such
    /// a file would cost (`docs/benchmarks.md`). A layer of 4-bit weights is returned as it is.
    pub fn requantized(&self, bits: u32) -> QDense {
        let mut values = self.nibbles.to_vec();
        let mut scales = self.scales.clone();
        if self.zero == 128 && (2..8).contains(&bits) {
            let top = ((1i32 << (bits - 1)) - 1) as f32;
            let blocks = self.inp / BLOCK;
            for at in 0..self.out / TILE * blocks {
                for lane in 0..TILE {
                    let base = at * TILE_BLOCK + lane * 4;
                    let index = |k: usize| base + (k / 4) * TILE * 4 + k % 4;
                    let scale = self.scales[at * TILE + lane];
                    let w: Vec<f32> = (0..BLOCK)
                        .map(|k| (i32::from(values[index(k)]) - self.zero) as f32 * scale)
                        .collect();
                    let max = w.iter().fold(0f32, |m, x| m.max(x.abs()));
                    let step = if max > 0.0 { max / top } else { 0.0 };
                    for (k, w) in w.iter().enumerate() {
                        let q = if step > 0.0 {
                            (w / step).round().clamp(-top - 1.0, top) as i32
                        } else {
                            0
                        };
                        values[index(k)] = (q + self.zero) as u8;
                    }
                    scales[at * TILE + lane] = step;
                }
            }
        }
        QDense {
            out: self.out,
            inp: self.inp,
            nibbles: Packed::Owned(values),
            zero: self.zero,
            scales,
            b: self.b.clone(),
            amx: std::sync::OnceLock::new(),
        }
    }

    /// Stacks layers with the same input and zero point into one whose outputs follow each
    /// other (tiles are whole outputs, so the packed arrays simply follow each other too).
    pub fn stack(parts: impl IntoIterator<Item = QDense>) -> QDense {
        let parts: Vec<QDense> = parts.into_iter().collect();
        let inp = parts.first().map_or(0, |p| p.inp);
        let zero = parts.first().map_or(8, |p| p.zero);
        let out = parts.iter().map(|p| p.out).sum();
        let mut nibbles = Vec::with_capacity(out * inp);
        let mut d = QDense {
            out,
            inp,
            nibbles: Packed::Owned(Vec::new()),
            zero,
            scales: Vec::with_capacity(out * inp / BLOCK),
            b: Vec::with_capacity(out),
            amx: std::sync::OnceLock::new(),
        };
        for p in parts {
            nibbles.extend_from_slice(&p.nibbles);
            d.scales.extend(p.scales);
            d.b.extend(p.b);
        }
        d.nibbles = Packed::Owned(nibbles);
        d
    }

    /// Whether two layers can be stacked into one product (the same input, the same zero point).
    pub fn same_kind(&self, other: &QDense) -> bool {
        self.inp == other.inp && self.zero == other.zero
    }

    /// Output tiles of 16.
    pub fn tiles(&self) -> usize {
        self.out / TILE
    }

    /// The weight of output `o` for input `k`: its block's scale times its stored value less the
    /// zero point.
    pub fn weight(&self, o: usize, k: usize) -> f32 {
        let blocks = self.inp / BLOCK;
        let (tile, lane) = (o / TILE, o % TILE);
        let (blk, within) = (k / BLOCK, k % BLOCK);
        let at = tile * blocks + blk;
        let nibble =
            self.nibbles[at * TILE_BLOCK + (within / 4) * TILE * 4 + lane * 4 + within % 4];
        self.scales[at * TILE + lane] * (nibble as i32 - self.zero) as f32
    }

    /// The layer as bf16 tiles for AMX ([`crate::amx`]), packed on first use; `None` where its
    /// shape does not suit the kernel.
    pub fn amx(&self) -> Option<&crate::amx::AmxDense> {
        self.amx
            .get_or_init(|| {
                crate::amx::AmxDense::pack(|o, k| self.weight(o, k), self.out, self.inp)
            })
            .as_ref()
    }
}

/// Input rows quantized per block: int8 values, each block's scale, and the block's sum (times
/// a layer's zero point, the zero point's share of the product).
#[derive(Default)]
pub(crate) struct QRows {
    pub values: Vec<i8>,
    pub scales: Vec<f32>,
    pub sums: Vec<i32>,
}

impl QRows {
    /// Sizes the buffers for `rows` rows of `inp` values.
    pub fn resize(&mut self, rows: usize, inp: usize) {
        self.values.resize(rows * inp, 0);
        self.scales.resize(rows * inp / BLOCK, 0.0);
        self.sums.resize(rows * inp / BLOCK, 0);
    }
}

impl QRows {
    /// Rows `rows` of the quantized input, `blocks` blocks each.
    pub fn view(&self, rows: std::ops::Range<usize>, blocks: usize) -> QView<'_> {
        let inp = blocks * BLOCK;
        QView {
            values: &self.values[rows.start * inp..rows.end * inp],
            scales: &self.scales[rows.start * blocks..rows.end * blocks],
            sums: &self.sums[rows.start * blocks..rows.end * blocks],
        }
    }
}

/// Some rows of a [`QRows`].
pub(crate) struct QView<'a> {
    values: &'a [i8],
    scales: &'a [f32],
    sums: &'a [i32],
}

/// Quantizes rows of f32 values (a whole number of blocks each) into `values`, `scales`, `sums`
/// (one entry per block): round half to even of `x · 127 / max|x|`, as the reference does.
pub(crate) fn quantize(x: &[f32], values: &mut [i8], scales: &mut [f32], sums: &mut [i32]) {
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2,fma")]
    fn quantize_avx(x: &[f32], values: &mut [i8], scales: &mut [f32], sums: &mut [i32]) {
        quantize_generic(x, values, scales, sums)
    }
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") && std::arch::is_x86_feature_detected!("fma") {
        // SAFETY: the CPU has AVX2 and FMA, checked just above.
        return unsafe { quantize_avx(x, values, scales, sums) };
    }
    quantize_generic(x, values, scales, sums)
}

#[inline(always)]
fn quantize_generic(x: &[f32], values: &mut [i8], scales: &mut [f32], sums: &mut [i32]) {
    for (((block, q), scale), sum8) in x
        .chunks_exact(BLOCK)
        .zip(values.chunks_exact_mut(BLOCK))
        .zip(scales.iter_mut())
        .zip(sums.iter_mut())
    {
        // Eight running maxima, so the compiler can keep them in one register.
        let mut lanes = [0f32; 8];
        for c in block.chunks_exact(8) {
            for i in 0..8 {
                lanes[i] = lanes[i].max(c[i].abs());
            }
        }
        let amax = lanes.iter().fold(0f32, |m, &v| m.max(v));
        let d = amax / 127.0;
        let inv = if d > 0.0 { 1.0 / d } else { 0.0 };
        let mut rounded = [0i32; BLOCK];
        for (o, v) in rounded.iter_mut().zip(block) {
            // |v · inv| ≤ 127 (up to rounding, and the nearest integer of 127.00001 is 127), well
            // within the magic number's range; read as an integer from the bits, which
            // vectorises where a float cast (saturating, NaN-checked) does not.
            let scaled = (v * inv).clamp(-128.0, 127.0);
            *o = crate::kernels::magic_to_int(scaled + crate::kernels::ROUND_MAGIC);
        }
        for (o, r) in q.iter_mut().zip(&rounded) {
            *o = *r as i8;
        }
        *scale = d;
        *sum8 = rounded.iter().sum::<i32>();
    }
}

/// `out[r][t·16..] += x_r · W_tᵀ` for every quantized input row `r` and output tile `t` in
/// `tiles`; `out` holds the rows with `out_stride` values each, starting at tile `tiles.start`.
pub(crate) fn matmul(
    x: &QView<'_>,
    d: &QDense,
    tiles: std::ops::Range<usize>,
    out: &mut [f32],
    out_stride: usize,
) {
    let blocks = d.inp / BLOCK;
    let rows = x.scales.len() / blocks.max(1);
    // The shapes the kernels index by: checked once here.
    assert_eq!(x.values.len(), rows * d.inp, "quantized rows of inp values");
    assert_eq!(x.sums.len(), rows * blocks, "one sum per block");
    assert!(tiles.end <= d.tiles(), "tiles within the layer");
    assert!(
        rows == 0 || out.len() >= (rows - 1) * out_stride + tiles.len() * TILE,
        "output rows fit"
    );
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx512f")
        && std::arch::is_x86_feature_detected!("avx512bw")
        && std::arch::is_x86_feature_detected!("avx512vnni")
    {
        // SAFETY: the CPU has the features, checked just above; the kernel reads and writes only
        // through bounds-checked slices.
        unsafe { vnni::matmul(x, d, tiles, out, out_stride) };
        return;
    }
    matmul_portable(x, d, tiles, out, out_stride);
}

/// The same products in plain Rust, for CPUs without AVX-512 VNNI.
fn matmul_portable(
    x: &QView<'_>,
    d: &QDense,
    tiles: std::ops::Range<usize>,
    out: &mut [f32],
    out_stride: usize,
) {
    let blocks = d.inp / BLOCK;
    let rows = x.scales.len() / blocks.max(1);
    for r in 0..rows {
        let xq = &x.values[r * d.inp..(r + 1) * d.inp];
        for (ti, tile) in tiles.clone().enumerate() {
            let mut acc = [0f32; TILE];
            for blk in 0..blocks {
                let at = tile * blocks + blk;
                let w = &d.nibbles[at * TILE_BLOCK..(at + 1) * TILE_BLOCK];
                let a = &xq[blk * BLOCK..(blk + 1) * BLOCK];
                let mut dots = [0i32; TILE];
                for g in 0..BLOCK / 4 {
                    let wg = &w[g * TILE * 4..(g + 1) * TILE * 4];
                    for (lane, dot) in dots.iter_mut().enumerate() {
                        for u in 0..4 {
                            *dot += wg[lane * 4 + u] as i32 * a[g * 4 + u] as i32;
                        }
                    }
                }
                let xs = x.scales[r * blocks + blk];
                let sum8 = d.zero * x.sums[r * blocks + blk];
                let ws = &d.scales[at * TILE..(at + 1) * TILE];
                for lane in 0..TILE {
                    acc[lane] += (dots[lane] - sum8) as f32 * (ws[lane] * xs);
                }
            }
            let o = &mut out[r * out_stride + ti * TILE..r * out_stride + (ti + 1) * TILE];
            for (o, a) in o.iter_mut().zip(acc) {
                *o += a;
            }
        }
    }
}

#[cfg(target_arch = "x86_64")]
mod vnni {
    use std::arch::x86_64::*;

    use super::{BLOCK, QDense, QView, TILE, TILE_BLOCK};

    /// Rows handled together: each weight register is used this many times.
    const ROWS: usize = 4;

    /// # Safety
    /// The CPU has AVX-512 F, BW and VNNI; the shapes are those [`super::matmul`] checked.
    #[target_feature(enable = "avx512f,avx512bw,avx512vnni")]
    pub(super) unsafe fn matmul(
        x: &QView<'_>,
        d: &QDense,
        tiles: std::ops::Range<usize>,
        out: &mut [f32],
        out_stride: usize,
    ) {
        let blocks = d.inp / BLOCK;
        let rows = x.scales.len() / blocks.max(1);
        let mut r = 0;
        while r < rows {
            let n = ROWS.min(rows - r);
            let mut t = tiles.start;
            while t < tiles.end {
                let pair = t + 1 < tiles.end;
                let col = (t - tiles.start) * TILE;
                // SAFETY: rows r..r+n and tiles t..t+1(+1) are in bounds (checked by the caller).
                unsafe {
                    match (n, pair) {
                        (4, true) => kernel::<4, 2>(x, d, r, t, out, out_stride, col),
                        (4, false) => kernel::<4, 1>(x, d, r, t, out, out_stride, col),
                        (3, true) => kernel::<3, 2>(x, d, r, t, out, out_stride, col),
                        (3, false) => kernel::<3, 1>(x, d, r, t, out, out_stride, col),
                        (2, true) => kernel::<2, 2>(x, d, r, t, out, out_stride, col),
                        (2, false) => kernel::<2, 1>(x, d, r, t, out, out_stride, col),
                        (_, true) => kernel::<1, 2>(x, d, r, t, out, out_stride, col),
                        (_, false) => kernel::<1, 1>(x, d, r, t, out, out_stride, col),
                    }
                }
                t += if pair { 2 } else { 1 };
            }
            r += n;
        }
    }

    /// Rows `r0..r0+R` against output tiles `t0..t0+T`, added into output columns `col..`.
    ///
    /// # Safety
    /// As [`matmul`], with those rows and tiles in bounds.
    #[inline]
    #[target_feature(enable = "avx512f,avx512bw,avx512vnni")]
    unsafe fn kernel<const R: usize, const T: usize>(
        x: &QView<'_>,
        d: &QDense,
        r0: usize,
        t0: usize,
        out: &mut [f32],
        out_stride: usize,
        col: usize,
    ) {
        let blocks = d.inp / BLOCK;
        let mut acc = [[_mm512_setzero_ps(); T]; R];
        let xv = x.values.as_ptr();
        let wp = d.nibbles.as_ptr();
        for blk in 0..blocks {
            let mut dots = [[_mm512_setzero_si512(); T]; R];
            for g in 0..BLOCK / 4 {
                let mut w = [_mm512_setzero_si512(); T];
                for (j, w) in w.iter_mut().enumerate() {
                    let at = ((t0 + j) * blocks + blk) * TILE_BLOCK + g * 64;
                    // SAFETY: 64 bytes of the tile's block, inside `nibbles`.
                    *w = unsafe { _mm512_loadu_si512(wp.add(at).cast()) };
                }
                for (i, row) in dots.iter_mut().enumerate() {
                    let at = (r0 + i) * d.inp + blk * BLOCK + g * 4;
                    // SAFETY: 4 bytes of row r0+i, inside `values`.
                    let four = unsafe { xv.add(at).cast::<i32>().read_unaligned() };
                    let a = _mm512_set1_epi32(four);
                    for (dot, w) in row.iter_mut().zip(&w) {
                        *dot = _mm512_dpbusd_epi32(*dot, *w, a);
                    }
                }
            }
            let mut ws = [_mm512_setzero_ps(); T];
            for (j, ws) in ws.iter_mut().enumerate() {
                let at = ((t0 + j) * blocks + blk) * TILE;
                // SAFETY: the 16 scales of the tile's block, inside `scales`.
                *ws = unsafe { _mm512_loadu_ps(d.scales.as_ptr().add(at)) };
            }
            for i in 0..R {
                let k = (r0 + i) * blocks + blk;
                let zero = _mm512_set1_epi32(d.zero * x.sums[k]);
                let xs = _mm512_set1_ps(x.scales[k]);
                for j in 0..T {
                    let exact = _mm512_cvtepi32_ps(_mm512_sub_epi32(dots[i][j], zero));
                    acc[i][j] = _mm512_fmadd_ps(exact, _mm512_mul_ps(ws[j], xs), acc[i][j]);
                }
            }
        }
        for (i, row) in acc.iter().enumerate() {
            for (j, a) in row.iter().enumerate() {
                let start = (r0 + i) * out_stride + col + j * TILE;
                let o = &mut out[start..start + TILE];
                // SAFETY: `o` is 16 f32 values.
                unsafe {
                    let sum = _mm512_add_ps(_mm512_loadu_ps(o.as_ptr()), *a);
                    _mm512_storeu_ps(o.as_mut_ptr(), sum);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A Q4_0 matrix with varied nibbles and scales.
    fn matrix(out: usize, inp: usize) -> Vec<u8> {
        let mut bytes = Vec::new();
        for o in 0..out {
            for b in 0..inp / BLOCK {
                let d = 0.01 + 0.003 * ((o * 7 + b * 3) % 11) as f32;
                bytes.extend(half::f16::from_f32(d).to_bits().to_le_bytes());
                bytes.extend((0..16).map(|j| ((o * 31 + b * 17 + j * 13) % 256) as u8));
            }
        }
        bytes
    }

    fn dequantized(q4: &[u8], out: usize, inp: usize) -> Vec<f32> {
        let mut w = vec![0f32; out * inp];
        crate::e5s1::dequantize_q4_0(q4, &mut w);
        w
    }

    #[test]
    fn requantized_weights_keep_their_blocks_to_the_new_step() {
        let (out, inp) = (32, 64);
        let values: Vec<u8> = (0..out * inp).map(|i| ((i * 37) % 255) as u8 + 1).collect();
        let scales: Vec<f32> = (0..out * inp / BLOCK)
            .map(|i| 0.001 + 0.0005 * (i % 7) as f32)
            .collect();
        let q8 = QDense::from_q8_tiles(Packed::Owned(values), scales, out, inp).unwrap();
        let same = q8.requantized(8);
        assert_eq!(&*same.nibbles, &*q8.nibbles, "8 bits keep the weights");
        let q4 = q8.requantized(4);
        for o in 0..out {
            let block_max = |k0: usize| {
                (k0..k0 + BLOCK)
                    .map(|k| q8.weight(o, k).abs())
                    .fold(0f32, f32::max)
            };
            for k in 0..inp {
                let step = block_max(k / BLOCK * BLOCK) / 7.0;
                let (a, b) = (q8.weight(o, k), q4.weight(o, k));
                assert!((a - b).abs() <= step / 2.0 + 1e-6, "{o},{k}: {a} vs {b}");
            }
        }
        // Sixteen levels at most: stored values stay within the zero point's -8..7.
        assert!(q4.nibbles.iter().all(|&v| (120..=135).contains(&v)));
    }

    #[test]
    fn products_match_f32_and_both_kernels_agree() {
        let (out, inp, rows) = (48, 96, 7);
        let q4 = matrix(out, inp);
        let bias: Vec<f32> = (0..out).map(|i| i as f32 * 0.1).collect();
        let d = QDense::from_q4_0(&q4, bias, out, inp).unwrap();
        let x: Vec<f32> = (0..rows * inp)
            .map(|i| ((i as f32) * 0.37).sin() * (1.0 + (i % 5) as f32))
            .collect();
        let mut q = QRows::default();
        q.resize(rows, inp);
        quantize(&x, &mut q.values, &mut q.scales, &mut q.sums);
        let mut fast = vec![0f32; rows * out];
        let all = q.view(0..rows, inp / BLOCK);
        matmul(&all, &d, 0..d.tiles(), &mut fast, out);
        let mut portable = vec![0f32; rows * out];
        matmul_portable(&all, &d, 0..d.tiles(), &mut portable, out);
        let w = dequantized(&q4, out, inp);
        for r in 0..rows {
            for o in 0..out {
                let exact: f32 = (0..inp).map(|k| x[r * inp + k] * w[o * inp + k]).sum();
                let (f, p) = (fast[r * out + o], portable[r * out + o]);
                assert!((f - p).abs() <= 1e-5 * (1.0 + p.abs()), "{f} vs {p}");
                // int8 activations: each value within half a step (max|x| / 254 of its block)
                // of the f32 one, so the product within Σ|w|·step/2.
                let bound: f32 = (0..inp)
                    .map(|k| {
                        let blk = &x[r * inp + k / BLOCK * BLOCK..][..BLOCK];
                        let amax = blk.iter().fold(0f32, |m, v| m.max(v.abs()));
                        w[o * inp + k].abs() * amax / 254.0
                    })
                    .sum();
                assert!((f - exact).abs() <= bound * 1.001 + 1e-5, "{f} vs {exact}");
                assert!(
                    bound
                        < 0.1
                            * (0..inp)
                                .map(|k| (x[r * inp + k] * w[o * inp + k]).abs())
                                .sum::<f32>()
                );
            }
        }
        // A tile range writes only its own columns.
        let mut part = vec![0f32; rows * 16];
        matmul(&all, &d, 1..2, &mut part, 16);
        assert_eq!(part[..16], fast[16..32]);
    }

    #[test]
    fn stacked_layers_are_their_parts_side_by_side() {
        let parts = [16, 32, 16]
            .map(|out| QDense::from_q4_0(&matrix(out, 64), vec![0.0; out], out, 64).unwrap());
        let s = QDense::stack(parts);
        assert_eq!((s.out, s.inp, s.tiles()), (64, 64, 4));
        assert!(QDense::from_q4_0(&matrix(8, 64), vec![0.0; 8], 8, 64).is_err());
    }
}
