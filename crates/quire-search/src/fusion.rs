//! Reciprocal-rank fusion (Cormack, Clarke & Büttcher, 2009): each list adds `weight / (k + rank)`
//! for every key it ranks (rank from 1). Pure.

use std::collections::HashMap;
use std::hash::Hash;

/// The default `k` of reciprocal-rank fusion.
pub const RRF_K: f32 = 60.0;

/// Fuses ranked lists of keys; returns keys with fused scores, best first (ties by key).
pub fn reciprocal_rank_fusion<K: Clone + Eq + Hash + Ord>(
    lists: &[(&[K], f32)],
    k: f32,
) -> Vec<(K, f32)> {
    let mut scores: HashMap<&K, f32> = HashMap::new();
    for (list, weight) in lists {
        for (rank, key) in list.iter().enumerate() {
            *scores.entry(key).or_default() += weight / (k + rank as f32 + 1.0);
        }
    }
    let mut fused: Vec<(K, f32)> = scores
        .into_iter()
        .map(|(key, s)| (key.clone(), s))
        .collect();
    fused.sort_by(|a, b| b.1.total_cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    fused
}

#[cfg(test)]
mod tests {
    use super::*;

    fn keys(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn agreement_wins_and_weights_count() {
        let a = keys(&["x", "y", "z"]);
        let b = keys(&["y", "x", "w"]);
        let fused = reciprocal_rank_fusion(&[(&a, 1.0), (&b, 1.0)], 60.0);
        assert_eq!(fused[0].0, "x"); // tie on score with y, broken by key
        assert_eq!(fused[1].0, "y");
        assert!((fused[0].1 - (1.0 / 61.0 + 1.0 / 62.0)).abs() < 1e-6);
        let weighted = reciprocal_rank_fusion(&[(&a, 1.0), (&b, 3.0)], 60.0);
        assert_eq!(weighted[0].0, "y");
        assert_eq!(weighted.len(), 4);
    }
}
