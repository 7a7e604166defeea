//! Does the context answer the question at all? Offline `ask` quotes passages, and quoting twelve
//! unrelated passages for a question the vault never mentions is worse than saying so. The rule
//! is calibrated on a dev set of answerable and unanswerable questions over the shared vaults
//! (`eval/answerability/`, figures in docs/ask.md):
//!
//! - **coverage**: the share of the question's content words found in its best passage (a word
//!   counts when a passage word shares its first five letters, a crude stem; CJK text counts by
//!   characters). Pure, no model.
//! - **cosine**: when the index has vectors, the best cosine between the question's vector and
//!   the passages' stored vectors.
//!
//! The evidence is weak when the cosine is below the model's threshold
//! ([`quire_embed::Calibration::weak_answer_cosine`]; [`WEAK_COSINE`] for e5-small) with vectors,
//! or, without them, when the coverage is below [`WEAK_COVERAGE`].

use serde::Serialize;

use crate::context::Passage;

/// Below this best cosine (multilingual-e5-small, "query:"/"passage:" prefixes) the passages are
/// probably not about the question.
pub const WEAK_COSINE: f32 = 0.85;
/// Below this share of the question's content words in its best passage (without vectors), the
/// passages are probably not about the question.
pub const WEAK_COVERAGE: f32 = 0.4;

/// How well the passages support answering the question.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Evidence {
    /// Share of the question's content words in its best passage, 0 to 1.
    pub coverage: f32,
    /// Best cosine between the question and a passage, when the index has vectors.
    pub best_cosine: Option<f32>,
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
            weak,
        }
    }
}

/// Words that carry no topic.
pub(crate) const STOPWORDS: &[&str] = &[
    "a",
    "about",
    "after",
    "all",
    "am",
    "an",
    "and",
    "any",
    "are",
    "as",
    "at",
    "be",
    "been",
    "before",
    "but",
    "by",
    "can",
    "could",
    "did",
    "do",
    "does",
    "doing",
    "for",
    "from",
    "get",
    "had",
    "has",
    "have",
    "how",
    "i",
    "if",
    "in",
    "into",
    "is",
    "it",
    "its",
    "me",
    "my",
    "of",
    "on",
    "or",
    "our",
    "should",
    "so",
    "some",
    "than",
    "that",
    "the",
    "their",
    "them",
    "then",
    "there",
    "these",
    "they",
    "this",
    "to",
    "use",
    "used",
    "using",
    "was",
    "we",
    "were",
    "what",
    "when",
    "where",
    "which",
    "who",
    "whom",
    "why",
    "will",
    "with",
    "would",
    "you",
    "your",
    "и",
    "в",
    "во",
    "на",
    "что",
    "как",
    "я",
    "мы",
    "мой",
    "моя",
    "мои",
    "это",
    "ли",
    "не",
    "по",
    "с",
    "со",
    "к",
    "о",
    "об",
    "у",
    "за",
    "из",
    "для",
    "чем",
    "где",
    "когда",
];

/// The question's content words as stems (first five letters), or single CJK characters.
fn content_words(text: &str) -> Vec<String> {
    let mut words: Vec<String> = tokens(text)
        .into_iter()
        .filter(|w| !STOPWORDS.contains(&w.as_str()))
        .map(|w| stem(&w))
        .collect();
    words.sort();
    words.dedup();
    words
}

pub(crate) fn tokens(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut word = String::new();
    for c in text.chars().flat_map(char::to_lowercase) {
        if is_cjk(c) {
            if !word.is_empty() {
                out.push(std::mem::take(&mut word));
            }
            out.push(c.to_string());
        } else if c.is_alphanumeric() {
            word.push(c);
        } else if !word.is_empty() {
            out.push(std::mem::take(&mut word));
        }
    }
    if !word.is_empty() {
        out.push(word);
    }
    out
}

pub(crate) fn stem(word: &str) -> String {
    word.chars().take(5).collect()
}

pub(crate) fn is_cjk(c: char) -> bool {
    matches!(c as u32, 0x3040..=0x30ff | 0x3400..=0x4dbf | 0x4e00..=0x9fff | 0xac00..=0xd7af)
}

/// The share of `wanted` stems found in `text`.
fn covered(wanted: &[String], text: &str) -> f32 {
    if wanted.is_empty() {
        return 0.0;
    }
    let have: std::collections::HashSet<String> = tokens(text).iter().map(|w| stem(w)).collect();
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
    fn cjk_counts_by_character() {
        let passages = [passage("茶的笔记", "乌龙茶用九十度的水冲泡。")];
        let e = Evidence::assess("乌龙茶", &passages, &[]);
        assert_eq!(e.coverage, 1.0);
    }
}
