//! The element-wise parts of the encoder, written so the compiler vectorises them: GELU with
//! erf, a row softmax and LayerNorm. Written by hand because candle's CPU versions are scalar
//! (`erf` and `exp` called once per element were 15% of embedding time in a profile). Each public
//! function runs a copy compiled for AVX-512 (F, BW, DQ, VL) or else AVX2+FMA when the CPU has
//! them (checked at run time), else the portable copy: same code, same results up to rounding.

/// Lanes of the explicit accumulators: wide enough for one AVX register of f32.
const LANES: usize = 8;

/// Runs `$body` (an `#[inline(always)]` function over slices) compiled for AVX2+FMA when the CPU
/// has them, else as it is.
macro_rules! dispatch {
    ($avx:ident, $generic:ident, ($($arg:ident: $ty:ty),*) $(-> $ret:ty)?) => {
        #[cfg(target_arch = "x86_64")]
        #[target_feature(enable = "avx2,fma")]
        unsafe fn $avx($($arg: $ty),*) $(-> $ret)? {
            $generic($($arg),*)
        }
        #[cfg(target_arch = "x86_64")]
        #[target_feature(enable = "avx512f,avx512bw,avx512dq,avx512vl,avx2,fma")]
        unsafe fn wide($($arg: $ty),*) $(-> $ret)? {
            $generic($($arg),*)
        }
        #[cfg(target_arch = "x86_64")]
        if std::arch::is_x86_feature_detected!("avx512f") && std::arch::is_x86_feature_detected!("avx512bw") && std::arch::is_x86_feature_detected!("avx512dq") && std::arch::is_x86_feature_detected!("avx512vl") {
            // SAFETY: the CPU has AVX-512 F, BW, DQ and VL, checked just above.
            return unsafe { wide($($arg),*) };
        }
        #[cfg(target_arch = "x86_64")]
        if std::arch::is_x86_feature_detected!("avx2") && std::arch::is_x86_feature_detected!("fma") {
            // SAFETY: the CPU has AVX2 and FMA, checked just above.
            return unsafe { $avx($($arg),*) };
        }
        return $generic($($arg),*);
    };
}

/// 1.5·2²³: a float of that size has no fraction bits, so adding it to |x| < 2²² rounds x to
/// the nearest integer (ties to even), and taking it away again gives that integer as a float.
/// `f32::round` is a library call the compiler does not vectorise (it was most of the
/// softmax's time).
pub(crate) const ROUND_MAGIC: f32 = 12_582_912.0;

/// The integer `n` of `n as f32 + ROUND_MAGIC` (|n| < 2²²), read from its bits: the low
/// mantissa bits hold `n` above the magic number's own. Pure integer arithmetic, so it
/// vectorises where `as i32` does not.
#[inline(always)]
pub(crate) fn magic_to_int(shifted: f32) -> i32 {
    (shifted.to_bits() as i32).wrapping_sub(ROUND_MAGIC.to_bits() as i32)
}

/// e^x for the softmax: Cody–Waite range reduction to 2^n · e^r with |r| ≤ ln2/2 and a degree-6
/// polynomial for e^r; relative error about 2e-7. Arguments below −87 give 0.
#[inline(always)]
fn exp(x: f32) -> f32 {
    let x = x.clamp(-87.0, 88.0);
    // n = round(x·log2 e) as a float and, from the same sum's bits, as an integer: a float cast
    // (`as i32`) saturates and checks for NaN element by element, which the compiler cannot
    // vectorise (it was most of the softmax's time in a profile).
    let shifted = x * std::f32::consts::LOG2_E + ROUND_MAGIC;
    let n = shifted - ROUND_MAGIC;
    let ni = magic_to_int(shifted);
    let r = x - n * 0.693_145_75 - n * 1.428_606_8e-6;
    let p = 1.0
        + r * (1.0
            + r * (0.5
                + r * (0.166_666_67
                    + r * (0.041_666_668 + r * (0.008_333_334 + r * 0.001_388_889)))));
    f32::from_bits(((ni + 127) as u32) << 23) * p
}

/// erf(x) by Abramowitz & Stegun 7.1.26 (absolute error below 1.5e-7), with e^(−x²) from [`exp`].
#[inline(always)]
fn erf(x: f32) -> f32 {
    let a = x.abs();
    let t = 1.0 / (1.0 + 0.327_591_1 * a);
    let poly = t
        * (0.254_829_6
            + t * (-0.284_496_74 + t * (1.421_413_8 + t * (-1.453_152_1 + t * 1.061_405_4))));
    let y = 1.0 - poly * exp(-a * a);
    y.copysign(x)
}

#[inline(always)]
fn gelu_generic(xs: &mut [f32]) {
    for x in xs.iter_mut() {
        *x = 0.5 * *x * (1.0 + erf(*x * std::f32::consts::FRAC_1_SQRT_2));
    }
}

/// GELU with erf (BERT's exact form), in place.
pub(crate) fn gelu(xs: &mut [f32]) {
    dispatch!(gelu_avx, gelu_generic, (xs: &mut [f32]));
}

#[inline(always)]
fn sum(xs: &[f32]) -> f32 {
    let mut acc = [0f32; LANES];
    let chunks = xs.chunks_exact(LANES);
    let tail: f32 = chunks.remainder().iter().sum();
    for c in chunks {
        for i in 0..LANES {
            acc[i] += c[i];
        }
    }
    acc.iter().sum::<f32>() + tail
}

#[inline(always)]
fn softmax_generic(row: &mut [f32]) {
    let mut acc = [f32::NEG_INFINITY; LANES];
    let chunks = row.chunks_exact(LANES);
    let tail = chunks
        .remainder()
        .iter()
        .fold(f32::NEG_INFINITY, |m, &x| m.max(x));
    for c in chunks {
        for i in 0..LANES {
            acc[i] = acc[i].max(c[i]);
        }
    }
    let max = acc.iter().fold(tail, |m, &x| m.max(x));
    for x in row.iter_mut() {
        *x = exp(*x - max);
    }
    let inv = 1.0 / sum(row);
    for x in row.iter_mut() {
        *x *= inv;
    }
}

/// Softmax of one row of attention scores, in place.
pub(crate) fn softmax(row: &mut [f32]) {
    dispatch!(softmax_avx, softmax_generic, (row: &mut [f32]));
}

#[inline(always)]
fn layer_norm_generic(row: &mut [f32], w: &[f32], b: &[f32], eps: f32) {
    let n = row.len() as f32;
    let mean = sum(row) / n;
    let mut acc = [0f32; LANES];
    let chunks = row.chunks_exact(LANES);
    let tail: f32 = chunks
        .remainder()
        .iter()
        .map(|x| (x - mean) * (x - mean))
        .sum();
    for c in chunks {
        for i in 0..LANES {
            acc[i] += (c[i] - mean) * (c[i] - mean);
        }
    }
    let var = (acc.iter().sum::<f32>() + tail) / n;
    let inv = 1.0 / (var + eps).sqrt();
    for ((x, w), b) in row.iter_mut().zip(w).zip(b) {
        *x = (*x - mean) * inv * w + b;
    }
}

/// LayerNorm of one row in place: `(x − mean) / sqrt(var + eps) · w + b`.
pub(crate) fn layer_norm(row: &mut [f32], w: &[f32], b: &[f32], eps: f32) {
    dispatch!(layer_norm_avx, layer_norm_generic, (row: &mut [f32], w: &[f32], b: &[f32], eps: f32));
}

#[inline(always)]
fn rms_norm_generic(row: &mut [f32], w: &[f32], eps: f32) {
    let mut acc = [0f32; LANES];
    let chunks = row.chunks_exact(LANES);
    let tail: f32 = chunks.remainder().iter().map(|x| x * x).sum();
    for c in chunks {
        for i in 0..LANES {
            acc[i] += c[i] * c[i];
        }
    }
    let mean_square = (acc.iter().sum::<f32>() + tail) / row.len().max(1) as f32;
    let inv = 1.0 / (mean_square + eps).sqrt();
    for (x, w) in row.iter_mut().zip(w) {
        *x *= inv * w;
    }
}

/// RMSNorm of one row in place: `x / sqrt(mean(x²) + eps) · w` (Gemma's `1 + weight` is folded
/// into `w` by the caller).
pub(crate) fn rms_norm(row: &mut [f32], w: &[f32], eps: f32) {
    dispatch!(rms_norm_avx, rms_norm_generic, (row: &mut [f32], w: &[f32], eps: f32));
}

#[inline(always)]
fn gelu_tanh_gate_generic(gate: &mut [f32], up: &[f32]) {
    const C: f32 = 0.797_884_6; // √(2/π)
    for (g, u) in gate.iter_mut().zip(up) {
        let x = *g;
        // tanh(z) = 1 − 2 / (e^{2z} + 1), with the vectorised exp; exact at both saturations.
        let z = C * (x + 0.044_715 * x * x * x);
        let t = 1.0 - 2.0 / (exp(2.0 * z) + 1.0);
        *g = 0.5 * x * (1.0 + t) * u;
    }
}

/// Gemma's gated feed-forward activation in place: `gate = GELU_tanh(gate) · up`.
pub(crate) fn gelu_tanh_gate(gate: &mut [f32], up: &[f32]) {
    dispatch!(gelu_tanh_gate_avx, gelu_tanh_gate_generic, (gate: &mut [f32], up: &[f32]));
}

#[cfg(test)]
mod tests {
    use super::*;

    /// erf to double precision by its Taylor series, for |x| ≤ 4 (the reference).
    fn erf_reference(x: f64) -> f64 {
        let mut term = x;
        let mut total = x;
        for n in 1..200 {
            term *= -x * x / n as f64;
            total += term / (2 * n + 1) as f64;
        }
        total * 2.0 / std::f64::consts::PI.sqrt()
    }

    #[test]
    fn exp_is_within_a_few_ulps_of_std() {
        let mut worst = 0f64;
        for i in -8000..=8000 {
            let x = i as f32 / 100.0;
            let (got, want) = (exp(x) as f64, (x as f64).exp());
            worst = worst.max(((got - want) / want).abs());
        }
        assert!(worst < 1e-6, "relative error {worst}");
        assert_eq!(exp(-1000.0), exp(-87.0));
        assert!(exp(-1000.0) < 1e-37);
    }

    #[test]
    fn gelu_matches_the_erf_definition() {
        let mut xs: Vec<f32> = (-600..=600).map(|i| i as f32 / 100.0).collect();
        let want: Vec<f64> = xs
            .iter()
            .map(|&x| {
                let x = x as f64;
                0.5 * x * (1.0 + erf_reference(x / 2f64.sqrt()))
            })
            .collect();
        gelu(&mut xs);
        for (got, want) in xs.iter().zip(&want) {
            assert!((*got as f64 - want).abs() < 1e-6, "{got} vs {want}");
        }
    }

    #[test]
    fn softmax_sums_to_one_and_keeps_order() {
        let mut row: Vec<f32> = (0..37).map(|i| (i as f32 * 0.37).sin() * 20.0).collect();
        let orig = row.clone();
        softmax(&mut row);
        let total: f32 = row.iter().sum();
        assert!((total - 1.0).abs() < 1e-5);
        let max = orig.iter().cloned().fold(f32::MIN, f32::max);
        let denom: f64 = orig.iter().map(|&x| ((x - max) as f64).exp()).sum();
        for (p, x) in row.iter().zip(&orig) {
            let want = ((x - max) as f64).exp() / denom;
            assert!((*p as f64 - want).abs() < 1e-6);
        }
    }

    #[test]
    fn rms_norm_and_tanh_gelu_match_their_definitions() {
        let mut row: Vec<f32> = (0..77).map(|i| (i as f32 * 0.3).sin() * 4.0).collect();
        let w: Vec<f32> = (0..77).map(|i| 1.0 + i as f32 / 100.0).collect();
        let ms: f64 = row.iter().map(|&x| (x as f64).powi(2)).sum::<f64>() / 77.0;
        let want: Vec<f64> = row
            .iter()
            .zip(&w)
            .map(|(&x, &w)| x as f64 / (ms + 1e-6).sqrt() * w as f64)
            .collect();
        rms_norm(&mut row, &w, 1e-6);
        for (g, w) in row.iter().zip(&want) {
            assert!((*g as f64 - w).abs() < 1e-5, "{g} vs {w}");
        }
        let mut gate: Vec<f32> = (-800..=800).map(|i| i as f32 / 100.0).collect();
        let up: Vec<f32> = (0..gate.len()).map(|i| 0.5 + (i % 7) as f32).collect();
        let want: Vec<f64> = gate
            .iter()
            .zip(&up)
            .map(|(&x, &u)| {
                let x = x as f64;
                let z = (2.0 / std::f64::consts::PI).sqrt() * (x + 0.044715 * x.powi(3));
                0.5 * x * (1.0 + z.tanh()) * u as f64
            })
            .collect();
        gelu_tanh_gate(&mut gate, &up);
        for (g, w) in gate.iter().zip(&want) {
            assert!((*g as f64 - w).abs() < 1e-5 * (1.0 + w.abs()), "{g} vs {w}");
        }
    }

    #[test]
    fn layer_norm_gives_zero_mean_unit_variance_before_scale() {
        let mut row: Vec<f32> = (0..384)
            .map(|i| (i as f32 * 0.11).cos() * 3.0 + 1.5)
            .collect();
        let ones = vec![1.0; 384];
        let zeros = vec![0.0; 384];
        layer_norm(&mut row, &ones, &zeros, 1e-12);
        let mean: f32 = row.iter().sum::<f32>() / 384.0;
        let var: f32 = row.iter().map(|x| (x - mean) * (x - mean)).sum::<f32>() / 384.0;
        assert!(mean.abs() < 1e-5, "{mean}");
        assert!((var - 1.0).abs() < 1e-4, "{var}");
        let mut shifted = vec![2.0f32; 5];
        layer_norm(&mut shifted, &[3.0; 5], &[0.5; 5], 1e-5);
        assert!(shifted.iter().all(|x| (x - 0.5).abs() < 1e-6));
    }
}
