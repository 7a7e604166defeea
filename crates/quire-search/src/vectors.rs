//! Exact nearest neighbours over the index's vectors: one contiguous row-major matrix, a SIMD dot
//! product per row, a bounded heap for the top k. Note vectors for similar notes and duplicate
//! candidates are the normalised means of a note's chunk vectors. Pure (no I/O).

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use quire_embed::dot;

/// Rows of unit vectors with their keys.
#[derive(Debug, Clone, Default)]
pub struct VectorMatrix {
    /// Each row's `(note path, chunk id)`, grouped by note.
    pub keys: Vec<(String, String)>,
    /// The rows, one after another: `keys.len() × dimension` values.
    pub data: Vec<f32>,
    /// Values per row.
    pub dimension: usize,
}

/// An f32 that orders totally (for heaps).
#[derive(Debug, Clone, Copy, PartialEq)]
struct Score(f32);
impl Eq for Score {}
impl PartialOrd for Score {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Score {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.0.total_cmp(&other.0)
    }
}

/// A heap entry that keeps the lowest score on top (so the heap holds the best ones).
type Ranked<T> = Reverse<(Score, Reverse<T>)>;

/// The `k` best (index, score) pairs of an iterator, best first, in O(k) memory.
pub fn top_k(scores: impl Iterator<Item = (usize, f32)>, k: usize) -> Vec<(usize, f32)> {
    let mut heap: BinaryHeap<Ranked<usize>> = BinaryHeap::with_capacity(k + 1);
    for (i, s) in scores {
        if k == 0 || s.is_nan() {
            continue;
        }
        heap.push(Reverse((Score(s), Reverse(i))));
        if heap.len() > k {
            heap.pop();
        }
    }
    let mut out: Vec<(usize, f32)> = heap
        .into_iter()
        .map(|Reverse((Score(s), Reverse(i)))| (i, s))
        .collect();
    out.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    out
}

impl VectorMatrix {
    /// The number of rows.
    pub fn len(&self) -> usize {
        self.keys.len()
    }

    /// Whether there is no row.
    pub fn is_empty(&self) -> bool {
        self.keys.is_empty()
    }

    /// Row `i`; panics when `i` is not below [`VectorMatrix::len`].
    pub fn row(&self, i: usize) -> &[f32] {
        &self.data[i * self.dimension..(i + 1) * self.dimension]
    }

    /// Scores of every row against `query`.
    pub fn scores<'a>(&'a self, query: &'a [f32]) -> impl Iterator<Item = (usize, f32)> + 'a {
        (0..self.len()).map(move |i| (i, dot(self.row(i), query)))
    }

    /// One vector per note: the normalised mean of its chunk vectors. Rows must be grouped by note
    /// (the store returns them so). A note whose mean is near zero (chunks pointing in opposite
    /// directions) gets `None`: it is reported, never matched.
    /// A note's card (its title and properties) counts only for a note with no other chunk:
    /// cards of notes made from one template are alike, and would pull their notes together.
    pub fn note_centroids(&self) -> Vec<(String, Option<Vec<f32>>)> {
        let card = quire_vault::chunk::card_id();
        let mut out: Vec<(String, Option<Vec<f32>>)> = Vec::new();
        let mut i = 0;
        while i < self.len() {
            let path = &self.keys[i].0;
            let mut sum = vec![0f32; self.dimension];
            let mut n = 0;
            let mut card_row = None;
            while i < self.len() && &self.keys[i].0 == path {
                if self.keys[i].1 == card {
                    card_row = Some(i);
                } else {
                    for (s, v) in sum.iter_mut().zip(self.row(i)) {
                        *s += v;
                    }
                    n += 1;
                }
                i += 1;
            }
            if let (0, Some(row)) = (n, card_row) {
                sum.copy_from_slice(self.row(row));
                n = 1;
            }
            if n == 0 {
                out.push((path.clone(), None));
                continue;
            }
            let norm = sum.iter().map(|x| x * x).sum::<f32>().sqrt() / n as f32;
            let centroid = (norm > 1e-3).then(|| {
                let len = sum.iter().map(|x| x * x).sum::<f32>().sqrt();
                sum.into_iter().map(|x| x / len).collect()
            });
            out.push((path.clone(), centroid));
        }
        out
    }
}

/// The most similar pairs among `vectors` with similarity at least `threshold`, best first, at
/// most `limit`; memory stays O(n + limit) however many pairs pass.
pub fn top_pairs(vectors: &[&[f32]], threshold: f32, limit: usize) -> Vec<(usize, usize, f32)> {
    let mut heap: BinaryHeap<Ranked<(usize, usize)>> = BinaryHeap::with_capacity(limit + 1);
    for i in 0..vectors.len() {
        for j in i + 1..vectors.len() {
            let s = dot(vectors[i], vectors[j]);
            if s < threshold || limit == 0 {
                continue;
            }
            heap.push(Reverse((Score(s), Reverse((i, j)))));
            if heap.len() > limit {
                heap.pop();
            }
        }
    }
    let mut out: Vec<(usize, usize, f32)> = heap
        .into_iter()
        .map(|Reverse((Score(s), Reverse((i, j))))| (i, j, s))
        .collect();
    out.sort_by(|a, b| b.2.total_cmp(&a.2).then((a.0, a.1).cmp(&(b.0, b.1))));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn top_k_keeps_the_best_in_order() {
        let scores = [0.1, 0.9, 0.5, 0.9, -1.0, f32::NAN].into_iter().enumerate();
        assert_eq!(top_k(scores, 3), vec![(1, 0.9), (3, 0.9), (2, 0.5)]);
    }

    #[test]
    fn centroids_average_and_guard_near_zero() {
        let m = VectorMatrix {
            keys: vec![
                ("a".into(), "1".into()),
                ("a".into(), "2".into()),
                ("b".into(), "1".into()),
                ("b".into(), "2".into()),
            ],
            data: vec![1.0, 0.0, 0.0, 1.0, 1.0, 0.0, -1.0, 0.0],
            dimension: 2,
        };
        let c = m.note_centroids();
        let a = c[0].1.as_ref().unwrap();
        assert!((a[0] - 0.70710677).abs() < 1e-6 && (a[1] - 0.70710677).abs() < 1e-6);
        assert_eq!(c[1], ("b".to_string(), None));
    }

    #[test]
    fn pairs_are_bounded_and_thresholded() {
        let v: Vec<Vec<f32>> = vec![
            vec![1.0, 0.0],
            vec![0.99, 0.141],
            vec![0.0, 1.0],
            vec![1.0, 0.0],
        ];
        let refs: Vec<&[f32]> = v.iter().map(|x| x.as_slice()).collect();
        let pairs = top_pairs(&refs, 0.95, 2);
        assert_eq!(pairs.len(), 2);
        assert_eq!((pairs[0].0, pairs[0].1), (0, 3));
        assert!(pairs.iter().all(|p| p.2 >= 0.95));
    }
}
