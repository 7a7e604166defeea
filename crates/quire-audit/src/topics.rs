//! What a group of notes is about, in words: class-based TF-IDF (c-TF-IDF, as BERTopic labels
//! its topics; Grootendorst 2022, "BERTopic: neural topic modeling with a class-based TF-IDF
//! procedure"). The notes of each cluster are read as one document, and a term weighs
//!
//! ```text
//! W(t, c) = tf(t, c) · ln(1 + A / tf(t))
//! ```
//!
//! where `tf(t, c)` is how often `t` occurs in cluster `c`, `tf(t)` how often it occurs in all
//! clusters, and `A` the average number of words per cluster. A term that is frequent in one
//! cluster and rare elsewhere comes first; a term every cluster uses often sinks. quire counts
//! `tf(t, c)` as its square root by default ([`Weighting::ReduceFrequent`], as BERTopic's
//! `reduce_frequent_words`), so that a word the whole vault repeats does not label every
//! cluster on its count alone. The clusters
//! themselves come from elsewhere (`quire_app::topics` clusters the index's note vectors); this
//! module only reads text, and does no I/O.
//!
//! ```
//! use quire_audit::topics::{Weighting, cluster_terms};
//!
//! let clusters = [
//!     vec!["Sourdough starter: feed the starter with flour.", "Bake the loaf hot."],
//!     vec!["Marathon training: long runs on Sunday.", "Easy runs, tempo runs."],
//! ];
//! let terms = cluster_terms(&clusters, 2, Weighting::Plain);
//! assert_eq!(terms[0][0].term, "starter");
//! assert_eq!(terms[1][0].term, "runs");
//! ```

use quire_vault::parse::is_cjk;
use std::collections::{BTreeMap, HashMap};

use serde::Serialize;

/// Terms shorter than this (in characters) are left out: "of", "to", "a", and most noise.
pub const MIN_TERM_CHARS: usize = 3;

/// Common English words that say nothing about a topic. Other languages keep all their words:
/// their function words are spread over every cluster, so c-TF-IDF weighs them low anyway.
const STOPWORDS: &[&str] = &[
    "about",
    "above",
    "after",
    "again",
    "against",
    "all",
    "also",
    "and",
    "any",
    "are",
    "aren",
    "because",
    "been",
    "before",
    "being",
    "below",
    "between",
    "both",
    "but",
    "can",
    "cannot",
    "could",
    "did",
    "does",
    "doing",
    "don",
    "down",
    "during",
    "each",
    "etc",
    "even",
    "every",
    "few",
    "for",
    "from",
    "further",
    "get",
    "gets",
    "got",
    "had",
    "has",
    "have",
    "having",
    "her",
    "here",
    "hers",
    "herself",
    "him",
    "himself",
    "his",
    "how",
    "however",
    "http",
    "https",
    "into",
    "its",
    "itself",
    "just",
    "let",
    "like",
    "made",
    "make",
    "many",
    "may",
    "might",
    "more",
    "most",
    "much",
    "must",
    "myself",
    "never",
    "nor",
    "not",
    "now",
    "off",
    "once",
    "one",
    "only",
    "other",
    "our",
    "ours",
    "ourselves",
    "out",
    "over",
    "own",
    "same",
    "see",
    "she",
    "should",
    "since",
    "some",
    "still",
    "such",
    "than",
    "that",
    "the",
    "their",
    "theirs",
    "them",
    "themselves",
    "then",
    "there",
    "these",
    "they",
    "this",
    "those",
    "through",
    "too",
    "under",
    "until",
    "upon",
    "use",
    "used",
    "uses",
    "using",
    "very",
    "via",
    "was",
    "way",
    "well",
    "were",
    "what",
    "when",
    "where",
    "whether",
    "which",
    "while",
    "who",
    "whom",
    "whose",
    "why",
    "will",
    "with",
    "within",
    "without",
    "would",
    "www",
    "yet",
    "you",
    "your",
    "yours",
    "yourself",
    "yourselves",
];

/// The words of `text` that can name a topic, in order: split at every character that is not
/// a letter or a digit (Unicode), lowercased, without stopwords, terms shorter than
/// [`MIN_TERM_CHARS`] characters, and pure numbers. Chinese and Japanese, written without
/// spaces, give the overlapping pairs of characters of each run instead (as the full-text
/// index's analyzer does), so a sentence is not one "word".
pub fn terms_of(text: &str) -> impl Iterator<Item = String> + '_ {
    text.split(|c: char| !c.is_alphanumeric())
        .flat_map(|word| {
            if word.chars().any(is_cjk) {
                cjk_pairs(word)
            } else {
                vec![word.to_lowercase()]
            }
        })
        .filter(|w| w.chars().any(is_cjk) || w.chars().count() >= MIN_TERM_CHARS)
        .filter(|w| !w.chars().all(|c| c.is_numeric()))
        .filter(|w| STOPWORDS.binary_search(&w.as_str()).is_err())
}

/// The overlapping character pairs of each CJK run of `word` (a lone character stands alone;
/// pairs of hiragana are left out), and its other runs as lowercase words.
fn cjk_pairs(word: &str) -> Vec<String> {
    let chars: Vec<char> = word.chars().collect();
    let mut out = Vec::new();
    let mut start = 0;
    while start < chars.len() {
        let cjk = is_cjk(chars[start]);
        let end = (start..chars.len())
            .find(|&i| is_cjk(chars[i]) != cjk)
            .unwrap_or(chars.len());
        let run = &chars[start..end];
        if !cjk {
            out.push(run.iter().collect::<String>().to_lowercase());
        } else if run.len() == 1 {
            out.push(run[0].to_string());
        } else {
            // Pairs of hiragana alone are Japanese grammar (です, ます), never a topic.
            out.extend(
                run.windows(2)
                    .filter(|pair| !pair.iter().all(|c| ('\u{3040}'..='\u{309F}').contains(c)))
                    .map(|pair| pair.iter().collect::<String>()),
            );
        }
        start = end;
    }
    out
}

/// A term and its c-TF-IDF weight in one cluster.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct WeightedTerm {
    /// The term, lowercased.
    pub term: String,
    /// `tf(t, c) · ln(1 + A / tf(t))` (see the module docs).
    pub weight: f32,
}

/// How a term's count in its cluster enters its weight.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Weighting {
    /// `tf(t, c)` as counted: the formula of the module docs.
    Plain,
    /// `√tf(t, c)`: BERTopic's `reduce_frequent_words`. A word every note of a vault uses
    /// ("tasks" in a vault about a tasks plugin) otherwise labels most clusters on its count
    /// alone; on the Tasks documentation vault (9 clusters) "task" or "tasks" was in 4 of the 9
    /// labels with `Plain`, in 1 with this.
    #[default]
    ReduceFrequent,
}

impl Weighting {
    fn tf(self, count: usize) -> f64 {
        match self {
            Weighting::Plain => count as f64,
            Weighting::ReduceFrequent => (count as f64).sqrt(),
        }
    }
}

/// The `top` terms of each cluster by c-TF-IDF, heaviest first (ties by term, so the same
/// input gives the same output). `clusters[c]` holds the texts of cluster `c`'s notes; the
/// answer has one list per cluster, in the same order, shorter when a cluster has fewer terms.
pub fn cluster_terms<S: AsRef<str>>(
    clusters: &[Vec<S>],
    top: usize,
    weighting: Weighting,
) -> Vec<Vec<WeightedTerm>> {
    let counts: Vec<HashMap<String, usize>> = clusters
        .iter()
        .map(|texts| {
            let mut tf: HashMap<String, usize> = HashMap::new();
            for text in texts {
                for term in terms_of(text.as_ref()) {
                    *tf.entry(term).or_default() += 1;
                }
            }
            tf
        })
        .collect();
    let mut total: BTreeMap<&str, usize> = BTreeMap::new();
    for tf in &counts {
        for (term, n) in tf {
            *total.entry(term.as_str()).or_default() += n;
        }
    }
    let words: usize = total.values().sum();
    let average = words as f64 / clusters.len().max(1) as f64;
    counts
        .iter()
        .map(|tf| {
            let mut weighted: Vec<WeightedTerm> = tf
                .iter()
                .map(|(term, &n)| {
                    let all = total.get(term.as_str()).copied().unwrap_or(n).max(1);
                    WeightedTerm {
                        term: term.clone(),
                        weight: (weighting.tf(n) * (1.0 + average / all as f64).ln()) as f32,
                    }
                })
                .collect();
            weighted.sort_by(|a, b| b.weight.total_cmp(&a.weight).then(a.term.cmp(&b.term)));
            weighted.truncate(top);
            weighted
        })
        .collect()
}

/// A label from a cluster's terms: the first `n` joined by ", " (`"tasks, query, filter"`).
pub fn label(terms: &[WeightedTerm], n: usize) -> String {
    terms
        .iter()
        .take(n)
        .map(|t| t.term.as_str())
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_stopword_list_is_sorted_for_binary_search() {
        assert!(STOPWORDS.windows(2).all(|w| w[0] < w[1]));
    }

    #[test]
    fn terms_drop_stopwords_short_words_and_numbers_in_any_script() {
        let terms: Vec<String> =
            terms_of("The Café's 2024 budget: 12 croissants, ÉCLAIRS and 東京タワー x1 v2.0")
                .collect();
        assert_eq!(
            terms,
            [
                "café",
                "budget",
                "croissants",
                "éclairs",
                "東京",
                "京タ",
                "タワ",
                "ワー"
            ]
        );
        let mixed: Vec<String> = terms_of("乌龙茶ABCD茶").collect();
        assert_eq!(mixed, ["乌龙", "龙茶", "abcd", "茶"]);
        let japanese: Vec<String> = terms_of("勉強します").collect();
        assert_eq!(japanese, ["勉強", "強し"]);
    }

    #[test]
    fn each_cluster_is_labelled_by_what_sets_it_apart() {
        // Three obvious topics; "notes" is everywhere and must not label any of them.
        let clusters = [
            vec![
                "Sourdough notes: the starter wants flour and water.",
                "Feed the starter before baking. Starter smells sour.",
                "Bake the loaf at 250 degrees; sourdough loaf crust.",
            ],
            vec![
                "Marathon notes: long runs on Sunday, tempo runs on Wednesday.",
                "Training plan: runs, intervals, marathon pace.",
            ],
            vec![
                "Tea notes: oolong steeping at 90 degrees.",
                "Green tea, oolong, and the second steeping.",
            ],
        ];
        let terms = cluster_terms(&clusters, 3, Weighting::Plain);
        let words = |c: usize| terms[c].iter().map(|t| t.term.as_str()).collect::<Vec<_>>();
        assert_eq!(words(0), ["starter", "loaf", "sourdough"]);
        assert_eq!(words(1), ["runs", "marathon", "intervals"]);
        assert_eq!(words(2), ["oolong", "steeping", "tea"]);
        assert!(terms.iter().flatten().all(|t| t.term != "notes"));
        assert_eq!(label(&terms[0], 2), "starter, loaf");
        // The weight is the formula's: "starter" occurs 3 times here and nowhere else.
        let words_total: usize = clusters.iter().flatten().map(|t| terms_of(t).count()).sum();
        let average = words_total as f64 / 3.0;
        let expected = 3.0 * (1.0 + average / 3.0).ln();
        assert!((terms[0][0].weight as f64 - expected).abs() < 1e-4);
    }

    #[test]
    fn a_term_shared_evenly_weighs_less_than_a_distinctive_one_of_the_same_count() {
        let clusters = [vec!["alpha shared shared"], vec!["beta beta shared"]];
        let terms = cluster_terms(&clusters, 5, Weighting::Plain);
        let weight = |c: usize, t: &str| terms[c].iter().find(|w| w.term == t).unwrap().weight;
        assert!(weight(1, "beta") > weight(0, "shared"));
        assert!(weight(0, "alpha") > 0.0);
        assert!(cluster_terms::<&str>(&[], 3, Weighting::Plain).is_empty());
        assert_eq!(
            cluster_terms(&[Vec::<&str>::new()], 3, Weighting::Plain),
            vec![Vec::new()]
        );
    }

    #[test]
    fn reducing_frequent_words_lets_a_rarer_distinctive_word_win() {
        // "tasks" is 9 times in cluster 0 and 3 times elsewhere; "recurrence" 3 times, only here.
        let clusters = [
            vec![
                "tasks tasks tasks tasks tasks tasks tasks tasks tasks recurrence recurrence recurrence",
            ],
            vec!["tasks tasks tasks query query query filter filter sort"],
        ];
        let plain = cluster_terms(&clusters, 1, Weighting::Plain);
        let reduced = cluster_terms(&clusters, 1, Weighting::ReduceFrequent);
        assert_eq!(plain[0][0].term, "tasks");
        assert_eq!(reduced[0][0].term, "recurrence");
    }
}
