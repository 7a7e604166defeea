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
//! - **an absent word**: a word that no note of the vault holds (none of its terms, as the
//!   full-text index has them) counts from a lower weight, when the passages are no closer with
//!   it than without and most of the question's other content words are in the vault
//!   ([`MIN_KNOWN_SHARE`]; a question with no other content word is never flagged this way).
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
    /// The unmatched word is in none of the vault's notes.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub absent: bool,
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
            absent: false,
            weak,
        }
    }

    /// Marks the evidence weak because of `word` (see [`unmatched_word`]).
    pub fn with_unmatched(mut self, word: Unmatched) -> Evidence {
        self.unmatched = Some(word.word);
        self.absent = word.absent;
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

/// What dropping one word did to the question (see [`unmatched_word`]).
#[derive(Debug, Clone, PartialEq)]
pub struct WordWeight {
    /// The word, as [`probe_words`] gave it.
    pub word: String,
    /// How far dropping it moves the question's vector (1 − cosine).
    pub share: f32,
    /// The best passage cosine of the question without it.
    pub best_without: f32,
    /// Whether any note of the vault holds it (its terms, as the full-text index has them);
    /// `None` for a word without content terms (a question word, a stop word) or not looked up.
    pub mentioned: Option<bool>,
}

/// The thresholds of [`unmatched_word`], from the model's calibration
/// ([`quire_embed::Calibration`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct WordRule {
    /// A word carries a real part of the question at this share; `0.0` turns the check off.
    pub min_share: f32,
    /// … and the passages ignore it when dropping it gains them at most this (≤ 0: they are no
    /// further without it).
    pub max_gain: f32,
    /// A word that no note holds counts from this (lower) share; `0.0` turns that off.
    pub absent_min_share: f32,
    /// … with this gain at most.
    pub absent_max_gain: f32,
}

/// A word the passages do not speak to (see [`unmatched_word`]).
#[derive(Debug, Clone, PartialEq)]
pub struct Unmatched {
    /// The word.
    pub word: String,
    /// No note of the vault holds it at all.
    pub absent: bool,
}

/// An absent word counts only when at least this share of the question's other content words
/// are in the vault: a question in another language than the notes has most of its words in
/// none of them, and there an absent word says nothing (measured on the paraphrase dev set's
/// questions in other languages, docs/benchmarks.md).
pub const MIN_KNOWN_SHARE: f32 = 0.3;

/// The word that carries the most of the question among those the passages do not speak to,
/// given each word's [`WordWeight`] and the whole question's best passage cosine.
///
/// A word qualifies when its share reaches `rule.min_share` and the passages are no closer
/// with it than without (`best_cosine − best_without ≤ rule.max_gain`), or when no note of the
/// vault holds it, its share reaches `rule.absent_min_share` with a gain of at most
/// `rule.absent_max_gain`, and the question's other content words are mostly in the vault
/// ([`MIN_KNOWN_SHARE`]): "Can Tasks sync with Todoist?" over notes that never name Todoist.
pub fn unmatched_word(words: &[WordWeight], best_cosine: f32, rule: WordRule) -> Option<Unmatched> {
    if rule.min_share <= 0.0 {
        return None;
    }
    let gain = |w: &WordWeight| best_cosine - w.best_without;
    let weighty = words
        .iter()
        .filter(|w| w.share >= rule.min_share && gain(w) <= rule.max_gain)
        .max_by(|a, b| a.share.total_cmp(&b.share));
    if let Some(w) = weighty {
        return Some(Unmatched {
            word: w.word.clone(),
            absent: w.mentioned == Some(false),
        });
    }
    if rule.absent_min_share <= 0.0 {
        return None;
    }
    let known_share = |skip: usize| {
        let others: Vec<bool> = words
            .iter()
            .enumerate()
            .filter(|(i, _)| *i != skip)
            .filter_map(|(_, w)| w.mentioned)
            .collect();
        let known = others.iter().filter(|m| **m).count();
        known as f32 / others.len().max(1) as f32
    };
    words
        .iter()
        .enumerate()
        .filter(|(_, w)| w.mentioned == Some(false))
        .filter(|(_, w)| w.share >= rule.absent_min_share && gain(w) <= rule.absent_max_gain)
        .filter(|(i, _)| known_share(*i) >= MIN_KNOWN_SHARE)
        .max_by(|a, b| a.1.share.total_cmp(&b.1.share))
        .map(|(_, w)| Unmatched {
            word: w.word.clone(),
            absent: true,
        })
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

    fn weights(rows: &[(&str, f32, f32, Option<bool>)]) -> Vec<WordWeight> {
        rows.iter()
            .map(|&(word, share, best_without, mentioned)| WordWeight {
                word: word.into(),
                share,
                best_without,
                mentioned,
            })
            .collect()
    }

    const RULE: WordRule = WordRule {
        min_share: 0.15,
        max_gain: -0.02,
        absent_min_share: 0.08,
        absent_max_gain: 0.0,
    };

    #[test]
    fn a_weighty_word_the_passages_ignore_is_unmatched() {
        // Dropping "Logseq" moves the question most and brings the best passage closer.
        let words = weights(&[
            ("plugin", 0.09, 0.47, Some(true)),
            ("Logseq", 0.21, 0.66, Some(false)),
            ("work", 0.01, 0.58, Some(true)),
        ]);
        let found = unmatched_word(&words, 0.58, RULE);
        assert_eq!(
            found,
            Some(Unmatched {
                word: "Logseq".into(),
                absent: true
            })
        );
        // The passages answer to it (dropping it lowers their cosine): matched.
        let words = weights(&[
            ("plugin", 0.09, 0.47, Some(true)),
            ("Logseq", 0.21, 0.50, Some(true)),
            ("work", 0.01, 0.58, Some(true)),
        ]);
        assert_eq!(unmatched_word(&words, 0.58, RULE), None);
        // A share of 0 turns the check off.
        let off = WordRule {
            min_share: 0.0,
            ..RULE
        };
        let words = weights(&[("Logseq", 0.21, 0.66, Some(false))]);
        assert_eq!(unmatched_word(&words, 0.58, off), None);
    }

    #[test]
    fn a_lighter_word_counts_when_no_note_holds_it_and_the_rest_of_the_question_is_known() {
        // "Todoist" moves the question less than the weighty-word rule asks, but no note holds
        // it and the passages are no closer with it.
        let words = weights(&[
            ("Tasks", 0.05, 0.45, Some(true)),
            ("sync", 0.11, 0.52, Some(true)),
            ("to-dos", 0.04, 0.50, Some(true)),
            ("Todoist", 0.08, 0.53, Some(false)),
        ]);
        let found = unmatched_word(&words, 0.51, RULE);
        assert_eq!(
            found.map(|u| (u.word, u.absent)),
            Some(("Todoist".into(), true))
        );
        // Held by some note: the lower share does not count.
        let mut held = words.clone();
        held[3].mentioned = Some(true);
        assert_eq!(unmatched_word(&held, 0.51, RULE), None);
        // The passages come closer with it: it is spoken to, in other words.
        let mut spoken = words.clone();
        spoken[3].best_without = 0.48;
        assert_eq!(unmatched_word(&spoken, 0.51, RULE), None);
        // A question in another language than the notes: its other words are absent too.
        let foreign = weights(&[
            ("backe", 0.10, 0.50, Some(false)),
            ("Obstkuchen", 0.12, 0.53, Some(false)),
            ("Rezept", 0.09, 0.52, Some(false)),
            ("Mutter", 0.05, 0.45, Some(true)),
            ("Boden", 0.06, 0.49, Some(false)),
        ]);
        assert_eq!(unmatched_word(&foreign, 0.51, RULE), None);
        // Words with no lookup (question words) count neither as held nor as absent: one
        // held word beside three of them keeps the gate open (1 of 1 held; as absent it would
        // be 1 of 4), one absent word beside them keeps it shut (0 of 1; as held, 3 of 4).
        let unknown = |word: &str| WordWeight {
            word: word.into(),
            share: 0.02,
            best_without: 0.51,
            mentioned: None,
        };
        let mut open = weights(&[
            ("sync", 0.04, 0.52, Some(true)),
            ("Todoist", 0.08, 0.53, Some(false)),
        ]);
        open.extend(["How", "Which", "When"].map(unknown));
        assert_eq!(
            unmatched_word(&open, 0.51, RULE).map(|u| u.word),
            Some("Todoist".into())
        );
        let mut shut = weights(&[
            ("Synchronisation", 0.04, 0.52, Some(false)),
            ("Todoist", 0.08, 0.53, Some(false)),
        ]);
        shut.extend(["How", "Which", "When"].map(unknown));
        assert_eq!(unmatched_word(&shut, 0.51, RULE), None);
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
