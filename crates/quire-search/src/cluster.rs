//! Clustering unit vectors, pure and deterministic: spherical k-means ([`kmeans`]) and the
//! silhouette that judges a clustering ([`silhouette`]). The one home of both: the questions a
//! note answers group its paragraphs with them, and the vault's topic clusters its notes.

use quire_embed::dot;

/// A k-means result: each point's cluster, and the clusters' unit-length centres.
#[derive(Debug, Clone, PartialEq)]
pub struct Clustering {
    /// For each point, in input order, the index of its cluster in `centroids`.
    pub assignments: Vec<usize>,
    /// The clusters' centres, unit length.
    pub centroids: Vec<Vec<f32>>,
}

/// SplitMix64: a tiny, well-mixed generator; enough for seeding and no dependency.
struct SplitMix(u64);

impl SplitMix {
    fn next_f64(&mut self) -> f64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^= z >> 31;
        (z >> 11) as f64 / (1u64 << 53) as f64
    }
}

fn normalised(mut v: Vec<f32>) -> Vec<f32> {
    let norm = dot(&v, &v).sqrt();
    if norm > 1e-12 {
        v.iter_mut().for_each(|x| *x /= norm);
    }
    v
}

/// Spherical k-means over unit vectors (similarity = dot product), seeded by k-means++ with
/// `seed` (Arthur & Vassilvitskii 2007: each new centre drawn with probability proportional to
/// its squared distance, here 1 − cosine, from the nearest centre so far). `k` is clamped to
/// the number of points. A cluster left empty takes the point farthest from its own centre.
pub fn kmeans(points: &[&[f32]], k: usize, seed: u64) -> Clustering {
    let n = points.len();
    let k = k.min(n);
    if k == 0 {
        return Clustering {
            assignments: Vec::new(),
            centroids: Vec::new(),
        };
    }
    let mut rng = SplitMix(seed);
    let first = ((rng.next_f64() * n as f64) as usize).min(n - 1);
    let mut centroids: Vec<Vec<f32>> = vec![points[first].to_vec()];
    let distance = |p: &[f32], centroids: &[Vec<f32>]| {
        centroids
            .iter()
            .map(|c| (1.0 - dot(p, c)).max(0.0) as f64)
            .fold(f64::INFINITY, f64::min)
    };
    while centroids.len() < k {
        let weights: Vec<f64> = points
            .iter()
            .map(|p| distance(p, &centroids).powi(2))
            .collect();
        let total: f64 = weights.iter().sum();
        let next = if total <= 0.0 {
            // Every point sits on a centre already (duplicates): take any point not chosen.
            (0..n)
                .find(|&i| !centroids.iter().any(|c| c.as_slice() == points[i]))
                .unwrap_or(centroids.len() % n)
        } else {
            let mut target = rng.next_f64() * total;
            let mut chosen = n - 1;
            for (i, w) in weights.iter().enumerate() {
                if target < *w {
                    chosen = i;
                    break;
                }
                target -= w;
            }
            chosen
        };
        centroids.push(points[next].to_vec());
    }
    let nearest = |p: &[f32], centroids: &[Vec<f32>]| {
        let mut best = (0, f32::NEG_INFINITY);
        for (c, centre) in centroids.iter().enumerate() {
            let s = dot(p, centre);
            if s > best.1 {
                best = (c, s);
            }
        }
        best.0
    };
    let mut assignments: Vec<usize> = points.iter().map(|p| nearest(p, &centroids)).collect();
    for _ in 0..100 {
        // New centres: the normalised mean of each cluster's points.
        let dimension = points[0].len();
        let mut sums = vec![vec![0.0f32; dimension]; k];
        let mut counts = vec![0usize; k];
        for (p, &c) in points.iter().zip(&assignments) {
            counts[c] += 1;
            sums[c].iter_mut().zip(p.iter()).for_each(|(s, x)| *s += x);
        }
        for c in 0..k {
            if counts[c] == 0 {
                // Reseed an empty cluster with the point its own centre fits worst.
                let worst = (0..n)
                    .filter(|&i| counts[assignments[i]] > 1)
                    .min_by(|&a, &b| {
                        let sa = dot(points[a], &centroids[assignments[a]]);
                        let sb = dot(points[b], &centroids[assignments[b]]);
                        sa.total_cmp(&sb)
                    });
                if let Some(i) = worst {
                    counts[assignments[i]] -= 1;
                    assignments[i] = c;
                    counts[c] = 1;
                    sums[c] = points[i].to_vec();
                }
            }
        }
        centroids = sums.into_iter().map(normalised).collect();
        let next: Vec<usize> = points.iter().map(|p| nearest(p, &centroids)).collect();
        if next == assignments {
            break;
        }
        assignments = next;
    }
    Clustering {
        assignments,
        centroids,
    }
}

/// The mean silhouette of a clustering (Rousseeuw 1987) under cosine distance `1 − a·b` (the
/// vectors are unit length): for each point, `(b − a) / max(a, b)` with `a` its mean distance to
/// the rest of its cluster and `b` its mean distance to the nearest other cluster; a point alone
/// in its cluster scores 0. Near 1: tight, separate clusters; near 0: overlapping ones. `None`
/// with fewer than 2 clusters. O(n²) dot products.
pub fn silhouette(points: &[&[f32]], assignments: &[usize]) -> Option<f32> {
    let k = assignments.iter().max().map_or(0, |m| m + 1);
    if k < 2 || points.len() != assignments.len() {
        return None;
    }
    let mut sizes = vec![0usize; k];
    for &c in assignments {
        sizes[c] += 1;
    }
    if sizes.iter().filter(|&&s| s > 0).count() < 2 {
        return None;
    }
    let mut total = 0f64;
    for (i, p) in points.iter().enumerate() {
        let own = assignments[i];
        if sizes[own] < 2 {
            continue;
        }
        let mut sums = vec![0f64; k];
        for (j, q) in points.iter().enumerate() {
            if i != j {
                let d: f32 = 1.0 - p.iter().zip(q.iter()).map(|(x, y)| x * y).sum::<f32>();
                sums[assignments[j]] += d.max(0.0) as f64;
            }
        }
        let a = sums[own] / (sizes[own] - 1) as f64;
        let b = (0..k)
            .filter(|&c| c != own && sizes[c] > 0)
            .map(|c| sums[c] / sizes[c] as f64)
            .fold(f64::INFINITY, f64::min);
        let spread = a.max(b);
        if spread > 0.0 {
            total += (b - a) / spread;
        }
    }
    Some((total / points.len() as f64) as f32)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Any fixed seed: the tests check that a seed reproduces its clustering.
    const SEED: u64 = 7;

    fn unit(angle: f32) -> Vec<f32> {
        vec![angle.cos(), angle.sin(), 0.0]
    }

    #[test]
    fn kmeans_finds_separated_groups_and_is_reproducible() {
        let raw: Vec<Vec<f32>> = [0.0, 0.05, 0.1, 1.5, 1.55, 1.6, 3.0, 3.05]
            .iter()
            .map(|&a| unit(a))
            .collect();
        let points: Vec<&[f32]> = raw.iter().map(Vec::as_slice).collect();
        let a = kmeans(&points, 3, SEED);
        let b = kmeans(&points, 3, SEED);
        assert_eq!(a, b);
        let groups = &a.assignments;
        assert!(groups[0] == groups[1] && groups[1] == groups[2]);
        assert!(groups[3] == groups[4] && groups[4] == groups[5]);
        assert_eq!(groups[6], groups[7]);
        assert!(groups[0] != groups[3] && groups[3] != groups[6] && groups[0] != groups[6]);
        for c in &a.centroids {
            assert!((dot(c, c) - 1.0).abs() < 1e-5);
        }
    }

    #[test]
    fn duplicates_and_tiny_inputs_do_not_break_it() {
        let same = unit(0.3);
        let points: Vec<&[f32]> = vec![&same, &same, &same];
        let c = kmeans(&points, 2, SEED);
        assert_eq!(c.assignments.len(), 3);
        assert_eq!(c.centroids.len(), 2);
        assert_eq!(kmeans(&[], 3, SEED).assignments, Vec::<usize>::new());
    }

    #[test]
    fn silhouette_is_high_for_separate_groups_and_low_for_mixed_ones() {
        let x = [1.0f32, 0.0];
        let x2 = [0.995f32, 0.0998];
        let y = [0.0f32, 1.0];
        let y2 = [0.0998f32, 0.995];
        let points: Vec<&[f32]> = vec![&x, &x2, &y, &y2];
        let good = silhouette(&points, &[0, 0, 1, 1]).unwrap();
        let bad = silhouette(&points, &[0, 1, 0, 1]).unwrap();
        assert!(good > 0.8, "{good}");
        assert!(bad < 0.0, "{bad}");
        assert_eq!(silhouette(&points, &[0, 0, 0, 0]), None);
    }
}
