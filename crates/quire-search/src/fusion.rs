//! How hybrid search combines its rankings: a lexical one (BM25 scores) and one or more semantic
//! ones (cosine similarities). Pure: ranked lists in, one ranked list out.
//!
//! The default ([`Fusion::default`]) is a convex combination of z-scores at the chunk level:
//! each ranking's scores are standardised for the query (`(s − mean) / sd`; BM25 over every
//! candidate of the fusion, a candidate it did not match scoring 0), and a chunk scores
//! `0.4·z(BM25) + 0.6·z(cosine)`. The other methods ([`Method`]), reciprocal-rank fusion among
//! them, and the note-level granularities are kept for `quire eval`, so the measurements in
//! `docs/fusion-variants.md` can be repeated (`QUIRE_FUSION`, see [`Fusion::from_str`]).

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
    sorted(scores)
}

/// Whether a ranking's scores are BM25 scores or cosine similarities.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Signal {
    /// BM25: unbounded, ≥ 0, on a scale that depends on the query.
    Lexical,
    /// Cosine similarity of unit vectors.
    Semantic,
}

/// A ranking to fuse: keys with their scores, best first.
#[derive(Debug, Clone, Copy)]
pub struct Ranking<'a, K> {
    /// Keys and scores, best first.
    pub items: &'a [(K, f32)],
    /// What the scores are.
    pub signal: Signal,
}

/// How score-based fusion puts BM25 and cosine scores on one scale.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Norm {
    /// `(s − min) / (max − min)` within each list.
    MinMax,
    /// `(s − mean) / standard deviation` within each list.
    ZScore,
    /// z-scores where BM25 is standardised over every candidate of the fusion (the union of
    /// the lists), a candidate it did not match scoring 0, as BM25 scores it: a lone exact
    /// match (a rare word, a title) then stands far above the rest instead of getting the z of
    /// a one-element list, 0. Cosines as [`Norm::ZScore`].
    ZScoreUnion,
    /// BM25 divided by its top score (its theoretical minimum, 0, stays 0), cosine min-max: a
    /// flat BM25 ranking then adds about the same to every note and reorders little.
    TopScaled,
}

/// How the rankings are combined.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Method {
    /// Reciprocal-rank fusion with a weight per signal: `Σ weight / (k + rank)`; the semantic
    /// weight is shared by the semantic rankings (two of them weigh half each).
    Rrf {
        /// The rank constant.
        k: f32,
        /// The weight of the lexical ranking.
        lexical: f32,
        /// The weight of the semantic side, shared by its rankings.
        semantic: f32,
    },
    /// Reciprocal-rank fusion where the lexical ranking's weight is its [`spread`]: BM25 counts
    /// fully when its top score stands out from the tenth, little when its scores are flat.
    GatedRrf {
        /// The rank constant.
        k: f32,
    },
    /// A convex combination of normalised scores: `(1 − α)·lexical + α·mean(semantic)`; a key
    /// missing from a list gets that list's lowest normalised value.
    Convex {
        /// How scores are normalised.
        norm: Norm,
        /// α, the weight of the semantic side.
        semantic: f32,
    },
}

/// Hybrid search's fusion: a method, and at which granularity it runs.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Fusion {
    /// How rankings are combined.
    pub method: Method,
    /// Fuse note rankings (each list collapsed to its notes, a note where its best chunk is)
    /// rather than chunk rankings: a note that BM25 finds by one section and the vectors by
    /// another is then found by both.
    pub notes: bool,
    /// With `notes`: add a ranking of the notes by the cosine of the query with their centroid
    /// (the normalised mean of their chunk vectors), a signal about the note as a whole; it
    /// shares the semantic weight with the chunk-vector ranking.
    pub centroid: bool,
    /// Pseudo-relevance feedback: when above 0, the query vector is moved toward the mean vector
    /// of the first fusion's [`PRF_DEPTH`] best chunks by this weight (Rocchio, then normalised),
    /// the vector side searched again with it and fused again with the same BM25 list. No model
    /// call: the vectors are the index's.
    pub prf: f32,
}

/// The chunks whose vectors pseudo-relevance feedback averages ([`Fusion::prf`]).
pub const PRF_DEPTH: usize = 3;

/// `query` moved toward the mean of `feedback` by `weight`, normalised to unit length (the
/// query itself when there is no feedback vector).
pub fn rocchio(query: &[f32], feedback: &[&[f32]], weight: f32) -> Vec<f32> {
    let mut moved = query.to_vec();
    if feedback.is_empty() {
        return moved;
    }
    let share = weight / feedback.len() as f32;
    for v in feedback {
        for (m, x) in moved.iter_mut().zip(v.iter()) {
            *m += share * x;
        }
    }
    let norm = moved.iter().map(|x| x * x).sum::<f32>().sqrt();
    if norm > 0.0 {
        moved.iter_mut().for_each(|x| *x /= norm);
    }
    moved
}

/// The default fusion, chosen on the measurements in `docs/fusion-variants.md`: z-scores
/// ([`Norm::ZScoreUnion`]), combined `0.4·BM25 + 0.6·cosine`, chunk level.
///
/// Reciprocal-rank fusion (the default before) keeps only ranks: a BM25 ranking with nothing to
/// go on (a question in other words, or another language, than its note) counts as much as a
/// vector ranking whose first hit stands far above the rest, and hybrid fell below vector alone
/// on the paraphrase dev set and on five XQuAD languages. Standardised scores keep how far a
/// hit stands out in its own list, on a scale that does not depend on the model's cosine range
/// or the query's BM25 range. BM25 is standardised over all candidates, its misses at 0, so
/// that a lone exact match (a title, a rare word) stands out as it should: over its own list,
/// a one-hit BM25 ranking would get z = 0 and `search "Readme"` would miss the note Readme
/// (the findability test caught it). The semantic weight was read off a curve (0.5 … 0.8): the
/// paraphrase set is flat from 0.6 up, SciFact falls from 0.5 on; 0.6 is the lowest weight on
/// the paraphrase plateau.
/// The fusion in the syntax `QUIRE_FUSION` and `quire eval` take (`zu:0.8`, `rrf:v=2+notes`).
impl std::fmt::Display for Fusion {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.method {
            Method::Rrf {
                k,
                lexical,
                semantic,
            } => write!(f, "rrf:k={k},v={},l={lexical}", semantic)?,
            Method::GatedRrf { k } => write!(f, "gate:k={k}")?,
            Method::Convex { norm, semantic } => {
                let name = match norm {
                    Norm::MinMax => "mm",
                    Norm::ZScore => "z",
                    Norm::ZScoreUnion => "zu",
                    Norm::TopScaled => "top",
                };
                write!(f, "{name}:{semantic}")?
            }
        }
        if self.notes {
            f.write_str("+notes")?;
        }
        if self.centroid {
            f.write_str("+centroid")?;
        }
        if self.prf > 0.0 {
            write!(f, "+prf={}", self.prf)?;
        }
        Ok(())
    }
}

impl Fusion {
    /// The default fusion with the semantic weight measured for the model whose vectors are
    /// searched ([`quire_embed::Calibration`]); any other fusion as it is.
    pub fn for_model(self, calibration: &quire_embed::Calibration) -> Fusion {
        if self != Fusion::default() {
            return self;
        }
        Fusion {
            method: Method::Convex {
                norm: Norm::ZScoreUnion,
                semantic: calibration.semantic_weight,
            },
            ..self
        }
    }
}

impl Default for Fusion {
    fn default() -> Self {
        Fusion {
            method: Method::Convex {
                norm: Norm::ZScoreUnion,
                semantic: 0.6,
            },
            notes: false,
            centroid: false,
            prf: 0.0,
        }
    }
}

impl Fusion {
    /// Chunk-level RRF with equal weights and no centroid: quire's fusion before the
    /// measurements, the baseline of the variants table.
    pub fn baseline() -> Self {
        Fusion {
            method: Method::Rrf {
                k: RRF_K,
                lexical: 1.0,
                semantic: 1.0,
            },
            notes: false,
            centroid: false,
            prf: 0.0,
        }
    }
}

/// Reads a variant name as written in `docs/fusion-variants.md`: a method, then `+notes` and/or
/// `+centroid` (which implies `+notes`) and/or `+prf` (feedback weight 0.5) or `+prf=W`. Methods: `rrf`, `rrf:v=W` (each semantic list weighs
/// W, BM25 1), `rrf:k=K`, `gate` (gated RRF), `mm:A`, `z:A`, `zu:A`, `top:A` (convex combination
/// with semantic weight A and min-max, z-score, z-score over the union or top-scaled
/// normalisation), `default`.
impl std::str::FromStr for Fusion {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        let s = s.trim();
        if s == "default" {
            return Ok(Fusion::default());
        }
        let mut parts = s.split('+');
        let head = parts.next().unwrap_or_default();
        let mut fusion = Fusion::baseline();
        for flag in parts {
            match flag {
                "notes" => fusion.notes = true,
                "centroid" => {
                    fusion.notes = true;
                    fusion.centroid = true;
                }
                "prf" => fusion.prf = 0.5,
                other if other.starts_with("prf=") => {
                    fusion.prf = other["prf=".len()..]
                        .parse::<f32>()
                        .ok()
                        .filter(|w| w.is_finite() && *w >= 0.0)
                        .ok_or_else(|| {
                            format!("`{other}` in fusion `{s}`: the weight is not a number ≥ 0")
                        })?;
                }
                other => {
                    return Err(format!(
                        "unknown fusion flag `+{other}` (notes, centroid, prf, prf=W)"
                    ));
                }
            }
        }
        let number = |v: &str| {
            v.parse::<f32>()
                .ok()
                .filter(|x| x.is_finite() && *x >= 0.0)
                .ok_or_else(|| format!("`{v}` in fusion `{s}` is not a number ≥ 0"))
        };
        let (name, arg) = head.split_once(':').unwrap_or((head, ""));
        fusion.method = match (name, arg) {
            ("rrf", "") => fusion.method,
            ("rrf", arg) => {
                let (mut k, mut semantic) = (RRF_K, 1.0);
                for setting in arg.split(',') {
                    match setting.split_once('=') {
                        Some(("k", v)) => k = number(v)?,
                        Some(("v", v)) => semantic = number(v)?,
                        _ => return Err(format!("unknown rrf setting `{setting}` (k=, v=)")),
                    }
                }
                Method::Rrf {
                    k,
                    lexical: 1.0,
                    semantic,
                }
            }
            ("default", "") => Fusion::default().method,
            ("gate", "") => Method::GatedRrf { k: RRF_K },
            ("mm" | "z" | "zu" | "top", arg) => Method::Convex {
                norm: match name {
                    "mm" => Norm::MinMax,
                    "z" => Norm::ZScore,
                    "zu" => Norm::ZScoreUnion,
                    _ => Norm::TopScaled,
                },
                semantic: number(arg)?.min(1.0),
            },
            _ => {
                return Err(format!(
                    "unknown fusion `{s}` (rrf, rrf:v=W, rrf:k=K, gate, mm:A, z:A, zu:A, top:A, default; +notes, +centroid)"
                ));
            }
        };
        Ok(fusion)
    }
}

/// How far BM25's top score stands above its tenth: `(s₁ − s₁₀) / s₁`, in [0, 1]. A list with
/// fewer than ten hits counts the missing ones as 0 (few documents have the words: the
/// ranking is telling). An empty list or a zero top score is 0.
pub fn spread(scores: &[f32]) -> f32 {
    let Some(&top) = scores.first() else {
        return 0.0;
    };
    if top <= 0.0 {
        return 0.0;
    }
    let tenth = scores.get(9).copied().unwrap_or(0.0).max(0.0);
    ((top - tenth) / top).clamp(0.0, 1.0)
}

/// Fuses `rankings` with `method`; returns keys with fused scores, best first (ties by key).
pub fn fuse<K: Clone + Eq + Hash + Ord>(
    rankings: &[Ranking<'_, K>],
    method: Method,
) -> Vec<(K, f32)> {
    let semantic_lists = rankings
        .iter()
        .filter(|r| r.signal == Signal::Semantic)
        .count()
        .max(1) as f32;
    match method {
        Method::Rrf {
            k,
            lexical,
            semantic,
        } => rrf(rankings, k, |r| match r.signal {
            Signal::Lexical => lexical,
            Signal::Semantic => semantic / semantic_lists,
        }),
        Method::GatedRrf { k } => rrf(rankings, k, |r| match r.signal {
            Signal::Lexical => spread(&r.items.iter().map(|(_, s)| *s).collect::<Vec<_>>()),
            Signal::Semantic => 1.0 / semantic_lists,
        }),
        Method::Convex { norm, semantic } => convex(rankings, norm, semantic),
    }
}

fn rrf<K: Clone + Eq + Hash + Ord>(
    rankings: &[Ranking<'_, K>],
    k: f32,
    weight: impl Fn(&Ranking<'_, K>) -> f32,
) -> Vec<(K, f32)> {
    let mut scores: HashMap<&K, f32> = HashMap::new();
    for r in rankings {
        let w = weight(r);
        for (rank, (key, _)) in r.items.iter().enumerate() {
            *scores.entry(key).or_default() += w / (k + rank as f32 + 1.0);
        }
    }
    sorted(scores)
}

fn convex<K: Clone + Eq + Hash + Ord>(
    rankings: &[Ranking<'_, K>],
    norm: Norm,
    alpha: f32,
) -> Vec<(K, f32)> {
    let semantic_lists = rankings
        .iter()
        .filter(|r| r.signal == Signal::Semantic)
        .count()
        .max(1) as f32;
    let mut scores: HashMap<&K, f32> = HashMap::new();
    for r in rankings {
        for (key, _) in r.items {
            scores.entry(key).or_default();
        }
    }
    // Each list's normalised scores, and the value a key missing from it gets.
    let normalised: Vec<(Vec<f32>, f32, f32)> = rankings
        .iter()
        .map(|r| {
            let mut scores: Vec<f32> = r.items.iter().map(|(_, s)| *s).collect();
            let listed = scores.len();
            if norm == Norm::ZScoreUnion && r.signal == Signal::Lexical && listed > 0 {
                scores.resize(listed.max(union_size(rankings)), 0.0);
            }
            let (mut values, floor) = normalise(&scores, norm, r.signal);
            values.truncate(listed);
            let weight = match r.signal {
                Signal::Lexical => 1.0 - alpha,
                Signal::Semantic => alpha / semantic_lists,
            };
            (values, floor, weight)
        })
        .collect();
    for (r, (values, floor, weight)) in rankings.iter().zip(&normalised) {
        let mine: HashMap<&K, f32> = r
            .items
            .iter()
            .zip(values)
            .map(|((key, _), v)| (key, *v))
            .collect();
        for (key, total) in scores.iter_mut() {
            *total += weight * mine.get(key).copied().unwrap_or(*floor);
        }
    }
    sorted(scores)
}

/// How many distinct keys the rankings hold together.
fn union_size<K: Eq + Hash>(rankings: &[Ranking<'_, K>]) -> usize {
    rankings
        .iter()
        .flat_map(|r| r.items.iter().map(|(k, _)| k))
        .collect::<std::collections::HashSet<_>>()
        .len()
}

/// A list's normalised scores and the value for a key it does not hold.
fn normalise(scores: &[f32], norm: Norm, signal: Signal) -> (Vec<f32>, f32) {
    if scores.is_empty() {
        return (Vec::new(), 0.0);
    }
    let max = scores.iter().copied().fold(f32::MIN, f32::max);
    let min = scores.iter().copied().fold(f32::MAX, f32::min);
    let min_max = || {
        let range = max - min;
        let values = scores
            .iter()
            .map(|s| if range > 0.0 { (s - min) / range } else { 1.0 })
            .collect();
        (values, 0.0)
    };
    match (norm, signal) {
        (Norm::MinMax, _) | (Norm::TopScaled, Signal::Semantic) => min_max(),
        (Norm::TopScaled, Signal::Lexical) => {
            let values = scores
                .iter()
                .map(|s| if max > 0.0 { s / max } else { 0.0 })
                .collect();
            (values, 0.0)
        }
        (Norm::ZScore | Norm::ZScoreUnion, _) => {
            let n = scores.len() as f32;
            let mean = scores.iter().sum::<f32>() / n;
            let sd = (scores.iter().map(|s| (s - mean).powi(2)).sum::<f32>() / n).sqrt();
            let z = |s: f32| if sd > 0.0 { (s - mean) / sd } else { 0.0 };
            (scores.iter().map(|s| z(*s)).collect(), z(min))
        }
    }
}

/// Keys by score, best first, ties by key.
fn sorted<K: Clone + Ord>(scores: HashMap<&K, f32>) -> Vec<(K, f32)> {
    let mut fused: Vec<(K, f32)> = scores
        .into_iter()
        .map(|(key, s)| (key.clone(), s))
        .collect();
    fused.sort_by(|a, b| b.1.total_cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    fused
}

/// Collapses a ranking of chunks to a ranking of their notes: each note once, where its best
/// chunk ranks, with that chunk's score.
pub fn collapse<K, N: Clone + Eq + Hash>(
    items: &[(K, f32)],
    note: impl Fn(&K) -> N,
) -> Vec<(N, f32)> {
    let mut seen = std::collections::HashSet::new();
    items
        .iter()
        .filter_map(|(key, score)| {
            let n = note(key);
            seen.insert(n.clone()).then_some((n, *score))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prf_flags_parse_and_rocchio_moves_toward_the_feedback_at_unit_length() {
        let f: Fusion = "zu:0.6+prf".parse().unwrap();
        assert_eq!(f.prf, 0.5);
        assert_eq!(f.method, Fusion::default().method);
        let f: Fusion = "default+prf=0.3".parse().unwrap();
        assert_eq!((f.method, f.prf), (Fusion::default().method, 0.3));
        assert_eq!(Fusion::default().prf, 0.0);
        assert!("zu:0.6+prf=-1".parse::<Fusion>().is_err());
        assert!("zu:0.6+prf=x".parse::<Fusion>().is_err());

        let query = [1.0, 0.0, 0.0];
        assert_eq!(rocchio(&query, &[], 0.5), query.to_vec());
        let a = [0.0, 1.0, 0.0];
        let b = [0.0, 0.0, 1.0];
        let moved = rocchio(&query, &[&a, &b], 1.0);
        let norm: f32 = moved.iter().map(|x| x * x).sum::<f32>().sqrt();
        assert!((norm - 1.0).abs() < 1e-6, "{moved:?}");
        // q + (a + b) / 2 = (1, 0.5, 0.5), normalised.
        let expect = 1.0 / 1.5_f32.sqrt();
        assert!((moved[0] - expect).abs() < 1e-6 && (moved[1] - 0.5 * expect).abs() < 1e-6);
        // A weight equal to the number of passages is their mean with the query.
        let mean = rocchio(&query, &[&a], 1.0);
        assert!((mean[0] - mean[1]).abs() < 1e-6);
    }

    fn keys(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    fn scored(v: &[(&str, f32)]) -> Vec<(String, f32)> {
        v.iter().map(|(k, s)| (k.to_string(), *s)).collect()
    }

    fn pair<'a>(bm25: &'a [(String, f32)], cos: &'a [(String, f32)]) -> [Ranking<'a, String>; 2] {
        [
            Ranking {
                items: bm25,
                signal: Signal::Lexical,
            },
            Ranking {
                items: cos,
                signal: Signal::Semantic,
            },
        ]
    }

    fn convex(norm: Norm, semantic: f32) -> Method {
        Method::Convex { norm, semantic }
    }

    fn order(fused: &[(String, f32)]) -> Vec<&str> {
        fused.iter().map(|(k, _)| k.as_str()).collect()
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

    #[test]
    fn fuse_rrf_matches_the_plain_function() {
        let bm25 = scored(&[("x", 9.0), ("y", 5.0), ("z", 1.0)]);
        let cos = scored(&[("y", 0.9), ("x", 0.8), ("w", 0.7)]);
        let fused = fuse(&pair(&bm25, &cos), Fusion::baseline().method);
        let plain = reciprocal_rank_fusion(
            &[
                (&keys(&["x", "y", "z"]), 1.0),
                (&keys(&["y", "x", "w"]), 1.0),
            ],
            RRF_K,
        );
        assert_eq!(fused, plain);
    }

    #[test]
    fn a_heavier_semantic_weight_lets_the_vectors_win() {
        // BM25 and vectors disagree on the top: equal weights tie (broken by key), vector
        // weight 2 puts the vector's first first.
        let bm25 = scored(&[("b", 3.0), ("v", 2.0)]);
        let cos = scored(&[("v", 0.9), ("b", 0.8)]);
        let lists = pair(&bm25, &cos);
        let equal = fuse(
            &lists,
            Method::Rrf {
                k: 60.0,
                lexical: 1.0,
                semantic: 1.0,
            },
        );
        assert_eq!(order(&equal), ["b", "v"]);
        let heavier = fuse(
            &lists,
            Method::Rrf {
                k: 60.0,
                lexical: 1.0,
                semantic: 2.0,
            },
        );
        assert_eq!(order(&heavier), ["v", "b"]);
    }

    #[test]
    fn spread_tells_flat_from_peaked_rankings() {
        let flat = [5.0, 4.9, 4.8, 4.8, 4.7, 4.7, 4.6, 4.6, 4.5, 4.5, 4.4];
        let peaked = [12.0, 3.0, 2.9, 2.8, 2.7, 2.6, 2.5, 2.4, 2.3, 2.2];
        assert!((spread(&flat) - 0.1).abs() < 1e-6);
        assert!((spread(&peaked) - (12.0 - 2.2) / 12.0).abs() < 1e-6);
        assert_eq!(spread(&[3.0]), 1.0); // one hit: the words are rare
        assert_eq!(spread(&[]), 0.0);
        assert_eq!(spread(&[0.0, 0.0]), 0.0);
    }

    #[test]
    fn a_flat_bm25_ranking_barely_counts_when_gated() {
        // Ten BM25 hits with flat scores put n1 first; the vectors put v first. Plain RRF ties
        // them (n1 leads by key); gated RRF weighs BM25 by its spread, 0.09, and v, w lead.
        let bm25: Vec<(String, f32)> = (1..=10)
            .map(|i| (format!("n{i}"), 5.0 - i as f32 * 0.05))
            .collect();
        let cos = scored(&[("v", 0.9), ("w", 0.85), ("z", 0.6)]);
        let lists = pair(&bm25, &cos);
        let plain = fuse(&lists, Fusion::baseline().method);
        assert_eq!(plain[0].0, "n1");
        let gated = fuse(&lists, Method::GatedRrf { k: 60.0 });
        assert_eq!(order(&gated)[..2], ["v", "w"]);
    }

    #[test]
    fn convex_fusion_normalises_each_list() {
        let bm25 = scored(&[("a", 10.0), ("b", 5.0), ("c", 0.0)]);
        let cos = scored(&[("c", 0.9), ("b", 0.8), ("a", 0.7)]);
        let lists = pair(&bm25, &cos);
        // Min-max: a = (1−α)·1, b = 0.5, c = α·1.
        let fused = fuse(&lists, convex(Norm::MinMax, 0.7));
        assert_eq!(order(&fused), ["c", "b", "a"]);
        assert!((fused[0].1 - 0.7).abs() < 1e-6);
        assert!((fused[1].1 - 0.5).abs() < 1e-6);
        let lexical = fuse(&lists, convex(Norm::MinMax, 0.2));
        assert_eq!(order(&lexical), ["a", "b", "c"]);
        // A key absent from a list gets that list's floor (0 after min-max).
        let only_bm25 = scored(&[("d", 1.0)]);
        let lists = pair(&only_bm25, &cos);
        let fused = fuse(&lists, convex(Norm::MinMax, 0.5));
        assert_eq!(fused.iter().find(|(k, _)| k == "d").map(|x| x.1), Some(0.5));
        assert_eq!(fused.iter().find(|(k, _)| k == "a").map(|x| x.1), Some(0.0));
    }

    #[test]
    fn top_scaling_keeps_a_flat_bm25_ranking_flat() {
        // Min-max stretches a flat BM25 list to [0, 1]; top scaling keeps it near 1 for every
        // key, so the cosines decide.
        let bm25 = scored(&[("a", 5.0), ("b", 4.9), ("c", 4.8)]);
        let cos = scored(&[("c", 0.9), ("b", 0.85), ("a", 0.6)]);
        let lists = pair(&bm25, &cos);
        let mm = fuse(&lists, convex(Norm::MinMax, 0.5));
        assert_eq!(order(&mm), ["b", "a", "c"]); // a and c tie at 0.5, broken by key
        let top = fuse(&lists, convex(Norm::TopScaled, 0.5));
        assert_eq!(order(&top), ["c", "b", "a"]);
    }

    #[test]
    fn z_scores_centre_each_list() {
        let (values, floor) = normalise(&[3.0, 2.0, 1.0], Norm::ZScore, Signal::Lexical);
        assert!((values[1]).abs() < 1e-6);
        assert!((values[0] + values[2]).abs() < 1e-6);
        assert_eq!(floor, values[2]);
    }

    #[test]
    fn a_lone_bm25_match_stands_out_over_the_union() {
        // One BM25 hit (a title matched exactly); the vectors rank 100 other chunks, not it.
        // Plain z-scores give a one-element list z = 0, the same as a miss, so the vectors
        // decide; over the union the hit is far above the BM25 misses and comes first.
        let bm25 = scored(&[("readme", 28.0)]);
        let cos: Vec<(String, f32)> = (0..100)
            .map(|i| (format!("c{i}"), 0.85 - i as f32 * 0.001))
            .collect();
        let lists = pair(&bm25, &cos);
        let plain = fuse(&lists, convex(Norm::ZScore, 0.6));
        assert_ne!(plain[0].0, "readme");
        let union = fuse(&lists, convex(Norm::ZScoreUnion, 0.6));
        assert_eq!(union[0].0, "readme");
    }

    #[test]
    fn collapse_keeps_each_note_at_its_best_chunk() {
        let chunks = scored(&[("a#1", 0.9), ("b#1", 0.8), ("a#2", 0.7), ("c#1", 0.6)]);
        let notes = collapse(&chunks, |k: &String| {
            k.split('#').next().unwrap_or_default().to_string()
        });
        assert_eq!(notes, scored(&[("a", 0.9), ("b", 0.8), ("c", 0.6)]));
    }

    #[test]
    fn variant_names_parse() {
        assert_eq!("rrf".parse::<Fusion>(), Ok(Fusion::baseline()));
        assert_eq!("default".parse::<Fusion>(), Ok(Fusion::default()));
        assert_eq!("zu:0.6".parse::<Fusion>(), Ok(Fusion::default()));
        let centroid: Fusion = "rrf+centroid".parse().unwrap();
        assert!(centroid.notes && centroid.centroid);
        let v2: Fusion = "rrf:v=2+notes".parse().unwrap();
        assert_eq!(
            v2.method,
            Method::Rrf {
                k: 60.0,
                lexical: 1.0,
                semantic: 2.0
            }
        );
        assert!(v2.notes && !v2.centroid);
        assert_eq!(
            "top:0.7".parse::<Fusion>().map(|f| f.method),
            Ok(Method::Convex {
                norm: Norm::TopScaled,
                semantic: 0.7
            })
        );
        assert!("rrf:v=x".parse::<Fusion>().is_err());
        assert!("rrf+everything".parse::<Fusion>().is_err());
        assert!("cosine".parse::<Fusion>().is_err());
    }
}
