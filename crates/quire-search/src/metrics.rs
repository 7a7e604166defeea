//! Retrieval metrics over ranked results and graded relevance judgments (as BEIR computes them):
//! nDCG@k with gain = relevance grade, recall@k, MRR@k. Pure.

use std::collections::HashMap;

/// nDCG@k: DCG of the ranking over the ideal DCG of the judgments.
pub fn ndcg_at_k(ranked: &[String], relevant: &HashMap<String, u32>, k: usize) -> f64 {
    let dcg: f64 = ranked
        .iter()
        .take(k)
        .enumerate()
        .map(|(i, id)| relevant.get(id).copied().unwrap_or(0) as f64 / (i as f64 + 2.0).log2())
        .sum();
    let mut grades: Vec<u32> = relevant.values().copied().filter(|&g| g > 0).collect();
    grades.sort_unstable_by(|a, b| b.cmp(a));
    let ideal: f64 = grades
        .iter()
        .take(k)
        .enumerate()
        .map(|(i, &g)| g as f64 / (i as f64 + 2.0).log2())
        .sum();
    if ideal == 0.0 { 0.0 } else { dcg / ideal }
}

/// Share of the relevant documents found in the first `k`.
pub fn recall_at_k(ranked: &[String], relevant: &HashMap<String, u32>, k: usize) -> f64 {
    let total = relevant.values().filter(|&&g| g > 0).count();
    if total == 0 {
        return 0.0;
    }
    let found = ranked
        .iter()
        .take(k)
        .filter(|id| relevant.get(*id).is_some_and(|&g| g > 0))
        .count();
    found as f64 / total as f64
}

/// Reciprocal rank of the first relevant document within the first `k` (0 if none).
pub fn mrr_at_k(ranked: &[String], relevant: &HashMap<String, u32>, k: usize) -> f64 {
    ranked
        .iter()
        .take(k)
        .position(|id| relevant.get(id).is_some_and(|&g| g > 0))
        .map(|i| 1.0 / (i as f64 + 1.0))
        .unwrap_or(0.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ids(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn metrics_match_hand_computed_values() {
        let rel: HashMap<String, u32> = [("a".to_string(), 1), ("b".to_string(), 1)].into();
        let ranked = ids(&["x", "a", "y", "b"]);
        let dcg = 1.0 / 3f64.log2() + 1.0 / 5f64.log2();
        let idcg = 1.0 + 1.0 / 3f64.log2();
        assert!((ndcg_at_k(&ranked, &rel, 10) - dcg / idcg).abs() < 1e-12);
        assert_eq!(recall_at_k(&ranked, &rel, 2), 0.5);
        assert_eq!(recall_at_k(&ranked, &rel, 10), 1.0);
        assert_eq!(mrr_at_k(&ranked, &rel, 10), 0.5);
        assert_eq!(mrr_at_k(&ranked, &rel, 1), 0.0);
        assert_eq!(ndcg_at_k(&ids(&["a", "b"]), &rel, 10), 1.0);
    }
}
