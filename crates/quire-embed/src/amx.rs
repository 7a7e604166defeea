//! Dense layers on Intel AMX tiles (bf16 products accumulated in f32), for the large batches of
//! indexing on CPUs that have them (Sapphire Rapids and later Xeons). One `tdpbf16ps` multiplies
//! a 16 × 32 tile of activations by a 32 × 16 tile of weights (8,192 multiply-adds); the
//! AVX-512 VNNI kernel of [`crate::quant`] needs 128 instructions for the same, plus a scaling
//! step per block of 32 inputs that bf16 products, summed in f32 over the whole row, do not need.
//!
//! The weights are the 4-bit layer's own values (`scale · (nibble − 8)`), rounded to bf16 once,
//! on the first large batch, into the layout the instruction reads: for each 16 outputs and 32
//! inputs, 16 rows of 16 output pairs `[input 2p, input 2p + 1]`. Activations are rounded to
//! bf16 per value (8 bits of mantissa, about the precision of the int8 path's per-block
//! quantization). Short inputs (a query) keep the VNNI path, which reads the 4-bit weights as
//! they are.
//!
//! Written with inline assembly because Rust's AMX intrinsics are not stable; every pointer the
//! assembly reads or writes is checked against its slice in safe code first. Linux only: the
//! process must ask the kernel for the tile state (`arch_prctl(ARCH_REQ_XCOMP_PERM)`).

use std::sync::atomic::{AtomicBool, Ordering};

/// Inputs per tile row (32 bf16 = 64 bytes).
const K_TILE: usize = 32;
/// Rows of a tile, and outputs of a tile (16 f32 = 64 bytes).
const N_TILE: usize = 16;
/// Rows one kernel step takes: two activation tiles.
pub(crate) const ROW_STEP: usize = 2 * N_TILE;

/// Whether the AMX path may be used (a switch for benchmarks and tests).
static ENABLED: AtomicBool = AtomicBool::new(true);

/// Turns the AMX path on or off for this process (on by default where the CPU and the kernel
/// allow it): lets a benchmark or a test compare it with the VNNI path in one run.
pub fn set_amx(on: bool) {
    ENABLED.store(on, Ordering::Relaxed);
}

/// Whether dense layers run on AMX tiles now: the CPU has AMX-TILE and AMX-BF16, the operating
/// system saves their state, this process was granted it, `QUIRE_EMBED_AMX` is not `0`, and
/// [`set_amx`] did not turn it off.
pub fn amx_active() -> bool {
    ENABLED.load(Ordering::Relaxed) && supported()
}

fn supported() -> bool {
    static SUPPORTED: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *SUPPORTED.get_or_init(|| {
        std::env::var("QUIRE_EMBED_AMX").map_or(true, |v| v.trim() != "0") && detect()
    })
}

#[cfg(all(target_arch = "x86_64", target_os = "linux"))]
fn detect() -> bool {
    use std::arch::x86_64::{__cpuid, __cpuid_count};
    let (leaf1, leaf7) = (__cpuid(1), __cpuid_count(7, 0));
    let osxsave = leaf1.ecx & (1 << 27) != 0;
    let amx_bf16 = leaf7.edx & (1 << 22) != 0;
    let amx_tile = leaf7.edx & (1 << 24) != 0;
    if !(osxsave && amx_bf16 && amx_tile) {
        return false;
    }
    #[target_feature(enable = "xsave")]
    fn xcr0() -> u64 {
        // SAFETY: OSXSAVE is set (checked by the caller), so xgetbv is allowed.
        unsafe { std::arch::x86_64::_xgetbv(0) }
    }
    // SAFETY: the CPU has XSAVE (OSXSAVE implies it).
    let xcr0 = unsafe { xcr0() };
    // XTILECFG (bit 17) and XTILEDATA (bit 18) enabled by the operating system.
    if xcr0 & (3 << 17) != 3 << 17 {
        return false;
    }
    const ARCH_REQ_XCOMP_PERM: libc::c_long = 0x1023;
    const XFEATURE_XTILEDATA: libc::c_long = 18;
    // SAFETY: a plain system call with integer arguments; it only grants this process the
    // right to use the tile registers.
    let granted = unsafe {
        libc::syscall(
            libc::SYS_arch_prctl,
            ARCH_REQ_XCOMP_PERM,
            XFEATURE_XTILEDATA,
        )
    };
    granted == 0
}

#[cfg(not(all(target_arch = "x86_64", target_os = "linux")))]
fn detect() -> bool {
    false
}

/// Rounds an f32 to bf16 (nearest, ties to even), as bits. Integer arithmetic only, so a loop
/// of it vectorises. NaN is not preserved (it may come out as infinity); the encoder has none.
#[inline(always)]
pub(crate) fn bf16_bits(x: f32) -> u16 {
    let bits = x.to_bits();
    let rounding = 0x7FFF + ((bits >> 16) & 1);
    (bits.wrapping_add(rounding) >> 16) as u16
}

/// Rounds rows of f32 values to bf16 into `out` (the same length).
pub(crate) fn to_bf16(x: &[f32], out: &mut [u16]) {
    for (o, v) in out.iter_mut().zip(x) {
        *o = bf16_bits(*v);
    }
}

/// A dense layer's weights as bf16 in the tile layout: `[out/16][inp/32][16 pairs][16 outputs][2]`.
pub(crate) struct AmxDense {
    pub out: usize,
    pub inp: usize,
    packed: Vec<u16>,
}

impl AmxDense {
    /// Packs a `[out, inp]` row-major weight matrix; `None` unless `out` is a multiple of 32 and
    /// `inp` of 32 (the kernel takes output tiles two at a time).
    pub fn pack(weight: impl Fn(usize, usize) -> f32, out: usize, inp: usize) -> Option<AmxDense> {
        if out == 0 || inp == 0 || !out.is_multiple_of(2 * N_TILE) || !inp.is_multiple_of(K_TILE) {
            return None;
        }
        let kbs = inp / K_TILE;
        let mut packed = vec![0u16; out * inp];
        for o in 0..out {
            let (tile, lane) = (o / N_TILE, o % N_TILE);
            for k in 0..inp {
                let (kb, within) = (k / K_TILE, k % K_TILE);
                let at = (tile * kbs + kb) * K_TILE * N_TILE
                    + (within / 2) * N_TILE * 2
                    + lane * 2
                    + within % 2;
                packed[at] = bf16_bits(weight(o, k));
            }
        }
        Some(AmxDense { out, inp, packed })
    }
}

/// `out[r][..d.out] += x_r · Wᵀ` for the `rows` first rows of `x` (bf16 bits, `d.inp` per row),
/// where `x` holds a whole number of [`ROW_STEP`] rows (the rows past `rows` are padding and
/// their products are dropped). `out` holds `rows` rows of `d.out` values.
///
/// Must only be called when [`amx_active`] is true.
pub(crate) fn matmul(x: &[u16], rows: usize, d: &AmxDense, out: &mut [f32]) {
    let padded = x.len() / d.inp.max(1);
    // The bounds the assembly relies on, checked here.
    assert!(amx_active(), "AMX available");
    assert_eq!(x.len(), padded * d.inp, "whole rows of inp values");
    assert!(
        padded.is_multiple_of(ROW_STEP) && rows <= padded,
        "padded rows"
    );
    assert_eq!(out.len(), rows * d.out, "rows × out outputs");
    assert_eq!(d.packed.len(), d.out * d.inp, "packed weights");
    #[cfg(all(target_arch = "x86_64", target_os = "linux"))]
    // SAFETY: the shapes were checked above and the CPU and process may use the tiles.
    unsafe {
        tiles::matmul(x, rows, d, out)
    }
}

/// Head width the tile attention takes: one tile row of bf16.
pub(crate) const HEAD: usize = K_TILE;

/// Buffers of one head's attention on tiles, reused from job to job.
#[derive(Default)]
pub(crate) struct HeadScratch {
    /// Q · scale as bf16, `[lp][32]`.
    q: Vec<u16>,
    /// K in weight-tile layout, `[lp/16][16 pairs][16 keys][2]`.
    k: Vec<u16>,
    /// V in weight-tile layout, `[lp/32][2 halves of the head][16 pairs][16 dims][2]`.
    v: Vec<u16>,
    /// Scores, then probabilities, `[lp][lp]` f32.
    scores: Vec<f32>,
    /// Probabilities as bf16, `[lp][lp]`.
    p: Vec<u16>,
    /// The head's output, `[lp][32]` f32.
    pub out: Vec<f32>,
}

/// `softmax(Q·Kᵀ·scale)·V` of one head over one window of `len` tokens, on tiles: row `r` of Q,
/// K and V is `qkv[r·stride + q_at..][..32]` (and `k_at`, `v_at`); the result is the first `len`
/// rows of `scratch.out` (32 values each). The scores and the softmax stay f32; Q, K, V and the
/// probabilities are rounded to bf16 for the products.
///
/// Must only be called when [`amx_active`] is true.
#[allow(clippy::too_many_arguments)]
pub(crate) fn attention_head(
    qkv: &[f32],
    stride: usize,
    (q_at, k_at, v_at): (usize, usize, usize),
    len: usize,
    scale: f32,
    softmax: impl Fn(&mut [f32]),
    scratch: &mut HeadScratch,
) {
    assert!(amx_active(), "AMX available");
    assert!(len > 0, "a window has tokens");
    assert!(
        [q_at, k_at, v_at]
            .iter()
            .all(|&at| (len - 1) * stride + at + HEAD <= qkv.len()),
        "Q, K and V rows inside qkv"
    );
    let lp = len.next_multiple_of(ROW_STEP);
    let HeadScratch {
        q,
        k,
        v,
        scores,
        p,
        out,
    } = scratch;
    q.clear();
    q.resize(lp * HEAD, 0);
    k.clear();
    k.resize(lp * HEAD, 0);
    v.clear();
    v.resize(lp * HEAD, 0);
    for r in 0..len {
        let row = &qkv[r * stride..];
        for (o, x) in q[r * HEAD..(r + 1) * HEAD]
            .iter_mut()
            .zip(&row[q_at..q_at + HEAD])
        {
            *o = bf16_bits(x * scale);
        }
        // Key r is column r of the score tiles: tile r/16, lane r%16, pair i/2, element i%2.
        let kt = (r / N_TILE) * K_TILE * N_TILE + (r % N_TILE) * 2;
        for (i, x) in row[k_at..k_at + HEAD].iter().enumerate() {
            k[kt + (i / 2) * N_TILE * 2 + i % 2] = bf16_bits(*x);
        }
        // Value r is input r of the output tiles: block r/32, pair (r%32)/2, element r%2.
        let vt = (r / K_TILE) * 2 * K_TILE * N_TILE + ((r % K_TILE) / 2) * N_TILE * 2 + r % 2;
        for (i, x) in row[v_at..v_at + HEAD].iter().enumerate() {
            v[vt + (i / N_TILE) * K_TILE * N_TILE + (i % N_TILE) * 2] = bf16_bits(*x);
        }
    }
    // The tile stores write every value of `scores` and `out`, so they are only sized; `p` is
    // zeroed, its padding (columns and rows past `len`) taking part in the products.
    scores.resize(lp * lp, 0.0);
    p.clear();
    p.resize(lp * lp, 0);
    out.resize(lp * HEAD, 0.0);
    #[cfg(all(target_arch = "x86_64", target_os = "linux"))]
    // SAFETY: every buffer was sized above for lp (a multiple of 32) rows and columns.
    unsafe {
        tiles::scores(q, k, lp, scores)
    };
    for (r, row) in scores.chunks_exact_mut(lp).take(len).enumerate() {
        let row = &mut row[..len];
        softmax(row);
        for (o, x) in p[r * lp..r * lp + len].iter_mut().zip(row.iter()) {
            *o = bf16_bits(*x);
        }
    }
    #[cfg(all(target_arch = "x86_64", target_os = "linux"))]
    // SAFETY: as above.
    unsafe {
        tiles::weighted(p, v, lp, out)
    };
}

#[cfg(all(target_arch = "x86_64", target_os = "linux"))]
mod tiles {
    use std::arch::asm;

    use super::{AmxDense, K_TILE, N_TILE, ROW_STEP};

    /// The 64-byte tile configuration `ldtilecfg` reads (palette 1).
    #[repr(C, align(64))]
    struct Config {
        palette: u8,
        start_row: u8,
        reserved: [u8; 14],
        colsb: [u16; 16],
        rows: [u8; 16],
        tail: [u8; 16],
    }

    fn config() -> Config {
        let mut cfg = Config {
            palette: 1,
            start_row: 0,
            reserved: [0; 14],
            colsb: [0; 16],
            rows: [0; 16],
            tail: [0; 16],
        };
        for t in 0..8 {
            cfg.colsb[t] = 64;
            cfg.rows[t] = N_TILE as u8;
        }
        cfg
    }

    /// `scores[lp][lp] = q[lp][32] · kᵀ`, `k` in weight-tile layout.
    ///
    /// # Safety
    /// The tiles may be used; `q` and `k` hold `lp · 32` values, `scores` `lp · lp`, `lp` a
    /// multiple of 16.
    pub(super) unsafe fn scores(q: &[u16], k: &[u16], lp: usize, scores: &mut [f32]) {
        assert!(q.len() >= lp * 32 && k.len() >= lp * 32 && scores.len() >= lp * lp);
        let cfg = config();
        let s_stride = lp * 4;
        // SAFETY: the caller's sizes: tile i of Q is rows 16i.. (64 bytes each), tile j of K one
        // whole 1 KiB tile, and the output block rows 16i.., columns 16j.. of `scores`.
        unsafe {
            asm!("ldtilecfg [{}]", in(reg) &cfg as *const Config, options(nostack, readonly));
            for i in 0..lp / N_TILE {
                asm!(
                    "tileloadd tmm4, [{a} + {s}*1]",
                    a = in(reg) q.as_ptr().add(i * N_TILE * K_TILE),
                    s = in(reg) 64usize,
                    options(nostack, readonly)
                );
                for j in 0..lp / N_TILE {
                    asm!(
                        "tilezero tmm0",
                        "tileloadd tmm6, [{b} + {s}*1]",
                        "tdpbf16ps tmm0, tmm4, tmm6",
                        "tilestored [{c} + {cs}*1], tmm0",
                        b = in(reg) k.as_ptr().add(j * N_TILE * K_TILE),
                        s = in(reg) 64usize,
                        c = in(reg) scores.as_mut_ptr().add(i * N_TILE * lp + j * N_TILE),
                        cs = in(reg) s_stride,
                        options(nostack)
                    );
                }
            }
            asm!("tilerelease", options(nostack, nomem));
        }
    }

    /// `out[lp][32] = p[lp][lp] · v`, `v` in weight-tile layout (two 16-wide halves per block
    /// of 32 values).
    ///
    /// # Safety
    /// The tiles may be used; `p` holds `lp · lp` values, `v` and `out` `lp · 32`, `lp` a
    /// multiple of 32.
    pub(super) unsafe fn weighted(p: &[u16], v: &[u16], lp: usize, out: &mut [f32]) {
        assert!(p.len() >= lp * lp && v.len() >= lp * 32 && out.len() >= lp * 32);
        let cfg = config();
        // SAFETY: the caller's sizes: rows 16i.. of P, columns 32kb.. (64 bytes each), the two
        // 1 KiB tiles of V's block kb, and rows 16i.. of `out` (128 bytes each).
        unsafe {
            asm!("ldtilecfg [{}]", in(reg) &cfg as *const Config, options(nostack, readonly));
            for i in 0..lp / N_TILE {
                asm!("tilezero tmm0", "tilezero tmm1", options(nostack, nomem));
                for kb in 0..lp / K_TILE {
                    asm!(
                        "tileloadd tmm4, [{a} + {sa}*1]",
                        "tileloadd tmm6, [{b0} + {s}*1]",
                        "tileloadd tmm7, [{b1} + {s}*1]",
                        "tdpbf16ps tmm0, tmm4, tmm6",
                        "tdpbf16ps tmm1, tmm4, tmm7",
                        a = in(reg) p.as_ptr().add(i * N_TILE * lp + kb * K_TILE),
                        sa = in(reg) lp * 2,
                        b0 = in(reg) v.as_ptr().add(kb * 2 * K_TILE * N_TILE),
                        b1 = in(reg) v.as_ptr().add((kb * 2 + 1) * K_TILE * N_TILE),
                        s = in(reg) 64usize,
                        options(nostack, readonly)
                    );
                }
                asm!(
                    "tilestored [{c} + {s}*1], tmm0",
                    "tilestored [{c} + {s}*1 + 64], tmm1",
                    c = in(reg) out.as_mut_ptr().add(i * N_TILE * K_TILE),
                    s = in(reg) 128usize,
                    options(nostack)
                );
            }
            asm!("tilerelease", options(nostack, nomem));
        }
    }

    /// # Safety
    /// The shapes are those [`super::matmul`] checked, and the tiles may be used.
    pub(super) unsafe fn matmul(x: &[u16], rows: usize, d: &AmxDense, out: &mut [f32]) {
        // tmm0–3 accumulate 16 × 16 f32; tmm4–5 hold activations (16 rows × 32 bf16), tmm6–7
        // weights (16 pairs × 16 outputs × 2): every tile 16 rows of 64 bytes.
        let cfg = config();
        let kbs = d.inp / K_TILE;
        let a_stride = d.inp * 2;
        let b_tile = K_TILE * N_TILE; // u16 values per weight tile
        let mut c = [[0f32; N_TILE * N_TILE]; 4];
        // SAFETY: `cfg` is a valid palette-1 configuration; every load reads 16 rows of 64 bytes
        // inside `x` (rows r0..r0+32 of a padded multiple of 32, columns kb·32..kb·32+32), inside
        // `packed` (one whole tile) or inside `out` (rows r0..r0+32, all below `rows`, columns
        // j·16..j·16+32, within the d.out of a row); every store writes the same part of `out`
        // or one 1 KiB array of `c`.
        unsafe {
            asm!("ldtilecfg [{}]", in(reg) &cfg as *const Config, options(nostack, readonly));
            let xp = x.as_ptr();
            let wp = d.packed.as_ptr();
            for j in (0..d.out / N_TILE).step_by(2) {
                for r0 in (0..x.len() / d.inp).step_by(ROW_STEP) {
                    // Rows that all exist in `out` accumulate onto it in place (bias and
                    // residual already there); the last, partial group goes through `c`.
                    let whole = r0 + ROW_STEP <= rows;
                    let o_stride = d.out * 4;
                    let o0 = out.as_mut_ptr().add(r0 * d.out + j * N_TILE);
                    if whole {
                        let o1 = o0.add(N_TILE * d.out);
                        asm!(
                            "tileloadd tmm0, [{o0} + {s}*1]",
                            "tileloadd tmm1, [{o0} + {s}*1 + 64]",
                            "tileloadd tmm2, [{o1} + {s}*1]",
                            "tileloadd tmm3, [{o1} + {s}*1 + 64]",
                            o0 = in(reg) o0,
                            o1 = in(reg) o1,
                            s = in(reg) o_stride,
                            options(nostack, readonly)
                        );
                    } else {
                        asm!(
                            "tilezero tmm0",
                            "tilezero tmm1",
                            "tilezero tmm2",
                            "tilezero tmm3",
                            options(nostack, nomem)
                        );
                    }
                    for kb in 0..kbs {
                        let a0 = xp.add(r0 * d.inp + kb * K_TILE);
                        let a1 = xp.add((r0 + N_TILE) * d.inp + kb * K_TILE);
                        let b0 = wp.add((j * kbs + kb) * b_tile);
                        let b1 = wp.add(((j + 1) * kbs + kb) * b_tile);
                        asm!(
                            "tileloadd tmm4, [{a0} + {sa}*1]",
                            "tileloadd tmm5, [{a1} + {sa}*1]",
                            "tileloadd tmm6, [{b0} + {sb}*1]",
                            "tileloadd tmm7, [{b1} + {sb}*1]",
                            "tdpbf16ps tmm0, tmm4, tmm6",
                            "tdpbf16ps tmm1, tmm4, tmm7",
                            "tdpbf16ps tmm2, tmm5, tmm6",
                            "tdpbf16ps tmm3, tmm5, tmm7",
                            a0 = in(reg) a0,
                            a1 = in(reg) a1,
                            b0 = in(reg) b0,
                            b1 = in(reg) b1,
                            sa = in(reg) a_stride,
                            sb = in(reg) 64usize,
                            options(nostack, readonly)
                        );
                    }
                    if whole {
                        let o1 = o0.add(N_TILE * d.out);
                        asm!(
                            "tilestored [{o0} + {s}*1], tmm0",
                            "tilestored [{o0} + {s}*1 + 64], tmm1",
                            "tilestored [{o1} + {s}*1], tmm2",
                            "tilestored [{o1} + {s}*1 + 64], tmm3",
                            o0 = in(reg) o0,
                            o1 = in(reg) o1,
                            s = in(reg) o_stride,
                            options(nostack)
                        );
                        continue;
                    }
                    asm!(
                        "tilestored [{c0} + {s}*1], tmm0",
                        "tilestored [{c1} + {s}*1], tmm1",
                        "tilestored [{c2} + {s}*1], tmm2",
                        "tilestored [{c3} + {s}*1], tmm3",
                        c0 = in(reg) c[0].as_mut_ptr(),
                        c1 = in(reg) c[1].as_mut_ptr(),
                        c2 = in(reg) c[2].as_mut_ptr(),
                        c3 = in(reg) c[3].as_mut_ptr(),
                        s = in(reg) 64usize,
                        options(nostack)
                    );
                    // c[2·half + side] holds rows r0 + 16·half.., outputs (j + side)·16..
                    for (t, tile) in c.iter().enumerate() {
                        let (half, side) = (t / 2, t % 2);
                        for i in 0..N_TILE {
                            let r = r0 + half * N_TILE + i;
                            if r >= rows {
                                break;
                            }
                            let col = (j + side) * N_TILE;
                            let o = &mut out[r * d.out + col..r * d.out + col + N_TILE];
                            for (o, v) in o.iter_mut().zip(&tile[i * N_TILE..(i + 1) * N_TILE]) {
                                *o += v;
                            }
                        }
                    }
                }
            }
            asm!("tilerelease", options(nostack, nomem));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bf16_rounds_to_nearest_even() {
        assert_eq!(bf16_bits(1.0), 0x3F80);
        assert_eq!(bf16_bits(-2.0), 0xC000);
        // 1 + 2⁻⁸ is halfway between 1 and 1 + 2⁻⁷: ties to the even mantissa (1).
        assert_eq!(bf16_bits(1.0 + 1.0 / 256.0), 0x3F80);
        // Just above halfway rounds up.
        assert_eq!(bf16_bits(1.0 + 1.0 / 256.0 + 1.0 / 65536.0), 0x3F81);
    }

    #[test]
    fn tile_attention_matches_f32_attention() {
        let mut scratch = HeadScratch::default();
        // Windows shorter than a tile, not a multiple of one, and several tiles long.
        for len in [5usize, 37, 70] {
            let (hidden, stride) = (64, 3 * 64);
            let qkv: Vec<f32> = (0..len * stride)
                .map(|i| ((i as f32) * 0.713).sin() * 1.5)
                .collect();
            // Head 1 of 2: Q, K and V at columns 32.., 96.., 160.. of each row.
            let at = (HEAD, hidden + HEAD, 2 * hidden + HEAD);
            let scale = 1.0 / (HEAD as f32).sqrt();
            let mut want = vec![0f32; len * HEAD];
            for r in 0..len {
                let q = &qkv[r * stride + at.0..][..HEAD];
                let mut s: Vec<f32> = (0..len)
                    .map(|c| {
                        let k = &qkv[c * stride + at.1..][..HEAD];
                        q.iter().zip(k).map(|(a, b)| a * b).sum::<f32>() * scale
                    })
                    .collect();
                let max = s.iter().cloned().fold(f32::MIN, f32::max);
                s.iter_mut().for_each(|x| *x = (*x - max).exp());
                let total: f32 = s.iter().sum();
                for (c, w) in s.iter().enumerate() {
                    let v = &qkv[c * stride + at.2..][..HEAD];
                    for (o, x) in want[r * HEAD..(r + 1) * HEAD].iter_mut().zip(v) {
                        *o += w / total * x;
                    }
                }
            }
            if !amx_active() {
                continue;
            }
            attention_head(
                &qkv,
                stride,
                at,
                len,
                scale,
                crate::kernels::softmax,
                &mut scratch,
            );
            for (i, (g, w)) in scratch.out[..len * HEAD].iter().zip(&want).enumerate() {
                // bf16 rounding of Q, K (scores within ~1%), the probabilities and V.
                assert!(
                    (g - w).abs() < 0.03 * (1.0 + w.abs()),
                    "len {len}, {i}: {g} vs {w}"
                );
            }
        }
    }

    #[test]
    fn tile_products_match_f32_within_bf16_rounding() {
        let (out, inp, rows) = (64, 96, 37);
        let w = |o: usize, k: usize| ((o * 7 + k * 3) % 17) as f32 * 0.01 - 0.08;
        let d = AmxDense::pack(w, out, inp).unwrap();
        assert!(
            AmxDense::pack(w, 48, inp).is_none(),
            "outputs two tiles at a time"
        );
        if !amx_active() {
            return;
        }
        let x: Vec<f32> = (0..rows * inp).map(|i| ((i as f32) * 0.37).sin()).collect();
        let padded = rows.next_multiple_of(ROW_STEP);
        let mut xb = vec![0u16; padded * inp];
        to_bf16(&x, &mut xb[..rows * inp]);
        let mut got = vec![1f32; rows * out];
        matmul(&xb, rows, &d, &mut got);
        for r in 0..rows {
            for o in 0..out {
                let exact: f32 = (0..inp).map(|k| x[r * inp + k] * w(o, k)).sum();
                let bound: f32 = (0..inp)
                    .map(|k| (x[r * inp + k] * w(o, k)).abs() * 2.0 / 256.0)
                    .sum();
                let g = got[r * out + o] - 1.0;
                assert!((g - exact).abs() <= bound + 1e-5, "{r},{o}: {g} vs {exact}");
            }
        }
    }
}
