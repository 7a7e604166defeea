//! Does the context answer the question at all? Offline `ask` quotes passages, and quoting twelve
//! unrelated passages for a question the vault never mentions is worse than saying so. The rule
//! is calibrated on a dev set of answerable and unanswerable questions over the shared vaults
//! (`eval/answerability/`, figures in docs/ask.md):
//!
//! - **coverage**: the share of the question's content terms found in its best passage (the
//!   full-text index's analyzer: Snowball stems by script, CJK bigrams; see
//!   `quire_index::analyzer::content_terms`). Pure, no model.
//! - **cosine**: when the index has vectors, the best cosine between the question's vector and
//!   the passages' stored vectors.
//!
//! - **an unmatched word** (with vectors, for a model where it was measured): the question is
//!   embedded again without each of its words ([`probe_words`]). A word whose removal moves the
//!   question's vector a good deal carries a real part of what is asked; when dropping it leaves
//!   the best passage *closer* to the question, no passage speaks to it ("Does the plugin work in
//!   Logseq?" over notes that never mention Logseq, whose best passage is about the plugin).
//!   Near misses like this sit at the same best cosine as answered questions, so the cosine
//!   alone cannot flag them ([`unmatched_word`]).
//!
//! The evidence is weak when the cosine is below the model's threshold
//! ([`quire_embed::Calibration::weak_answer_cosine`]; [`WEAK_COSINE`] for e5-small) or a word is
//! unmatched, with vectors; without them, when the coverage is below [`WEAK_COVERAGE`].

use quire_index::analyzer::content_terms;
use quire_vault::parse::is_cjk;
use serde::Serialize;

use crate::context::Passage;

/// Below this best cosine (multilingual-e5-small, "query:"/"passage:" prefixes) the passages are
/// probably not about the question.
pub const WEAK_COSINE: f32 = 0.85;
/// Below this share of the question's content words in its best passage (without vectors), the
/// passages are probably not about the question.
pub const WEAK_COVERAGE: f32 = 0.4;

/// How well the passages support answering the question.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Evidence {
    /// Share of the question's content words in its best passage, 0 to 1.
    pub coverage: f32,
    /// Best cosine between the question and a passage, when the index has vectors.
    pub best_cosine: Option<f32>,
    /// A word of the question that carries a real part of it and that no passage speaks to
    /// (see [`unmatched_word`]), when one was found.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub unmatched: Option<String>,
    /// The notes do not seem to cover the question.
    pub weak: bool,
}

impl Evidence {
    /// Assesses `passages` for `question`; `cosines` are the passages' cosines to the question
    /// (same order; `None` for a passage with no stored vector), or empty without vectors.
    pub fn assess(question: &str, passages: &[Passage], cosines: &[Option<f32>]) -> Evidence {
        Evidence::assess_with(question, passages, cosines, WEAK_COSINE)
    }

    /// [`Evidence::assess`] with the weak-cosine threshold of the model that made the cosines.
    pub fn assess_with(
        question: &str,
        passages: &[Passage],
        cosines: &[Option<f32>],
        weak_cosine: f32,
    ) -> Evidence {
        let wanted = content_words(question);
        let coverage = passages
            .iter()
            .map(|p| covered(&wanted, &format!("{} {}", p.title, p.text)))
            .fold(0.0f32, f32::max);
        let best_cosine = cosines.iter().flatten().copied().reduce(f32::max);
        let weak = passages.is_empty()
            || match best_cosine {
                Some(cosine) => cosine < weak_cosine,
                None => coverage < WEAK_COVERAGE,
            };
        Evidence {
            coverage,
            best_cosine,
            unmatched: None,
            weak,
        }
    }

    /// Marks the evidence weak because of `word` (see [`unmatched_word`]).
    pub fn with_unmatched(mut self, word: String) -> Evidence {
        self.unmatched = Some(word);
        self.weak = true;
        self
    }
}

/// The question's words worth weighing, each once, in order: runs of letters and digits (an
/// apostrophe or hyphen inside a word kept, so "Tasks'" and "5000-task" stay whole) of three
/// characters or more or holding a digit, at most [`MAX_PROBE_WORDS`]. Scripts written without
/// spaces (CJK) have no words to drop this way and give none.
pub fn probe_words(question: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let words = question
        .split(|c: char| !(c.is_alphanumeric() || c == '\'' || c == '-'))
        .map(|w| w.trim_matches(|c: char| c == '\'' || c == '-'))
        .filter(|w| w.chars().count() >= 3 || w.chars().any(|c| c.is_ascii_digit()))
        .filter(|w| !w.chars().any(is_cjk));
    for word in words {
        if !out.iter().any(|o| o == word) && out.len() < MAX_PROBE_WORDS {
            out.push(word.to_string());
        }
    }
    out
}

/// Words of one question weighed at the most (each costs one query embedding).
pub const MAX_PROBE_WORDS: usize = 16;

/// `question` with the first occurrence of `word` taken out.
pub fn without_word(question: &str, word: &str) -> String {
    question
        .replacen(word, "", 1)
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
}

/// The word of `words` that carries the most of the question among those the passages do not
/// speak to: `share[i]` is how far dropping word `i` moves the question's vector (1 − cosine),
/// `best[i]` the best passage cosine of the question without it, `best_cosine` that of the
/// whole question. A word qualifies when `share[i] ≥ min_share` and the passages are no
/// closer with it than without (`best_cosine − best[i] ≤ max_gain`, a gain ≤ 0). `min_share`
/// 0 turns the check off.
pub fn unmatched_word(
    words: &[String],
    share: &[f32],
    best: &[f32],
    best_cosine: f32,
    min_share: f32,
    max_gain: f32,
) -> Option<String> {
    if min_share <= 0.0 {
        return None;
    }
    words
        .iter()
        .zip(share.iter().zip(best))
        .filter(|(_, (s, b))| **s >= min_share && best_cosine - **b <= max_gain)
        .max_by(|a, b| a.1.0.total_cmp(b.1.0))
        .map(|(w, _)| w.clone())
}

/// The question's content terms ([`content_terms`]), each once.
fn content_words(text: &str) -> Vec<String> {
    let mut words = content_terms(text);
    words.sort();
    words.dedup();
    words
}

/// The share of `wanted` terms found in `text`.
fn covered(wanted: &[String], text: &str) -> f32 {
    if wanted.is_empty() {
        return 0.0;
    }
    let have: std::collections::HashSet<String> = content_terms(text).into_iter().collect();
    wanted.iter().filter(|w| have.contains(*w)).count() as f32 / wanted.len() as f32
}

#[cfg(test)]
mod tests {
    use super::*;

    fn passage(title: &str, text: &str) -> Passage {
        Passage {
            path: format!("{title}.md"),
            title: title.into(),
            link: title.into(),
            chunk_id: "c".into(),
            content_hash: "h".into(),
            heading_path: Vec::new(),
            start_line: 1,
            end_line: 1,
            text: text.into(),
            score: 1.0,
        }
    }

    #[test]
    fn words_are_probed_once_with_their_inner_marks() {
        assert_eq!(
            probe_words("Can I add a task by speaking to Siri? Siri's 5000-task test, a 10k"),
            [
                "Can",
                "add",
                "task",
                "speaking",
                "Siri",
                "Siri's",
                "5000-task",
                "test",
                "10k"
            ]
        );
        assert!(probe_words("铁观音的香气").is_empty());
        assert_eq!(
            without_word("Does the plugin work in Logseq?", "Logseq"),
            "Does the plugin work in ?"
        );
    }

    #[test]
    fn a_weighty_word_the_passages_ignore_is_unmatched() {
        let words: Vec<String> = ["plugin", "Logseq", "work"].map(String::from).into();
        // Dropping "Logseq" moves the question most and brings the best passage closer.
        let share = [0.09, 0.21, 0.01];
        let best = [0.47, 0.66, 0.58];
        assert_eq!(
            unmatched_word(&words, &share, &best, 0.58, 0.15, -0.02).as_deref(),
            Some("Logseq")
        );
        // The passages answer to it (dropping it lowers their cosine): matched.
        let best = [0.47, 0.50, 0.58];
        assert_eq!(
            unmatched_word(&words, &share, &best, 0.58, 0.15, -0.02),
            None
        );
        // A light word is never the reason, and a share of 0 turns the check off.
        let best = [0.70, 0.70, 0.70];
        assert_eq!(
            unmatched_word(&words, &share, &best, 0.58, 0.25, -0.02),
            None
        );
        assert_eq!(
            unmatched_word(&words, &share, &best, 0.58, 0.0, -0.02),
            None
        );
    }

    #[test]
    fn coverage_counts_content_words_by_stem() {
        let passages = [passage(
            "Sourdough Starter",
            "Feed the starter once a day at room temperature.",
        )];
        let e = Evidence::assess("How often do I feed my sourdough starter?", &passages, &[]);
        // "often" is missing; "feed", "sourdough", "starter" are there.
        assert!((e.coverage - 0.75).abs() < 1e-6, "{e:?}");
        assert!(!e.weak);
        let e = Evidence::assess("Who won the 2018 World Cup?", &passages, &[]);
        assert_eq!(e.coverage, 0.0);
        assert!(e.weak);
    }

    #[test]
    fn with_vectors_the_cosine_decides() {
        let passages = [passage("Tea Basics", "Oolong is steeped at 90 °C.")];
        let strong = Evidence::assess("oolong water temperature", &passages, &[Some(0.86)]);
        assert!(!strong.weak, "{strong:?}");
        let weak = Evidence::assess("oolong water temperature", &passages, &[Some(0.74)]);
        assert!(weak.weak, "{weak:?}");
        assert!(Evidence::assess("anything", &[], &[]).weak);
    }

    #[test]
    fn cjk_counts_by_bigram() {
        let passages = [passage("茶的笔记", "乌龙茶用九十度的水冲泡。")];
        let e = Evidence::assess("乌龙茶", &passages, &[]);
        assert_eq!(e.coverage, 1.0);
    }
}
