//! The offline answer's lead: the one or two sentences of the passages closest in meaning to
//! the question, quoted first with their lines, so that the sentence that answers is not lost
//! inside three quoted passages. On XQuAD (300 questions a language, the gold paragraph split
//! into sentences), EmbeddingGemma's closest sentence holds the answer for 83% of the questions
//! in English, German and Chinese, against 64% for the sentence sharing most of the question's
//! words and 32% for the first sentence (`examples/lead_sentence.rs`).
//!
//! Pure: [`candidates`] splits the passages; the caller scores the sentences with the embedding
//! model (the question as a query, the sentences as documents) and [`pick`] keeps the best.

use serde::Serialize;

use crate::context::Passage;
use crate::support::split_sentences;

/// Passages whose sentences are ranked: those an extractive answer quotes.
pub const PASSAGES: usize = 3;
/// Sentences led with.
pub const SENTENCES: usize = 2;
/// Sentences shorter than this (in characters) are not led with: a fragment answers nothing.
const MIN_CHARS: usize = 20;

/// A sentence led with, and where it is.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LeadSentence {
    /// Its note.
    pub path: String,
    /// Its passage's chunk id.
    pub chunk_id: String,
    /// The sentence as written (citations and list marker removed).
    pub sentence: String,
    /// The line it starts on in the note now, 1-based.
    pub line: usize,
    /// Its similarity to the question.
    pub score: f32,
}

/// The sentences of the first [`PASSAGES`] passages that could lead, each with its place.
pub fn candidates(passages: &[Passage]) -> Vec<LeadSentence> {
    let mut out = Vec::new();
    for p in passages.iter().take(PASSAGES) {
        for s in split_sentences(&p.text, &[]) {
            let sentence = without_block_id(s.claim.trim());
            if sentence.chars().count() < MIN_CHARS {
                continue;
            }
            let line = p.start_line + p.text[..s.start].matches('\n').count();
            out.push(LeadSentence {
                path: p.path.clone(),
                chunk_id: p.chunk_id.clone(),
                sentence: sentence.to_string(),
                line,
                score: 0.0,
            });
        }
    }
    out
}

/// `text` without a trailing Obsidian block id (` ^feeding-ratio`), which is markup, not prose.
fn without_block_id(text: &str) -> &str {
    match text.rsplit_once(" ^") {
        Some((before, id))
            if !id.is_empty() && id.chars().all(|c| c.is_ascii_alphanumeric() || c == '-') =>
        {
            before.trim_end()
        }
        _ => text,
    }
}

/// The best [`SENTENCES`] of `candidates` by `scores` (same order), best first.
pub fn pick(mut candidates: Vec<LeadSentence>, scores: &[f32]) -> Vec<LeadSentence> {
    if scores.len() != candidates.len() {
        return Vec::new();
    }
    for (c, s) in candidates.iter_mut().zip(scores) {
        c.score = *s;
    }
    candidates.sort_by(|a, b| b.score.total_cmp(&a.score));
    candidates.truncate(SENTENCES);
    candidates
}

#[cfg(test)]
mod tests {
    use super::*;

    fn passage(path: &str, start_line: usize, text: &str) -> Passage {
        Passage {
            path: path.into(),
            title: "T".into(),
            link: "T".into(),
            chunk_id: format!("{path}#1"),
            content_hash: String::new(),
            heading_path: Vec::new(),
            start_line,
            end_line: start_line + text.lines().count(),
            text: text.into(),
            score: 1.0,
        }
    }

    #[test]
    fn sentences_carry_their_lines_and_the_best_two_lead() {
        let passages = [
            passage(
                "FAQ.md",
                10,
                "## Refunds\nWe offer full refunds within 7 days of purchase. Contact us by mail for a refund.\n- Sync and Publish are billed yearly in advance. ^billing",
            ),
            passage(
                "Other.md",
                3,
                "Short.\nThe second passage has one longer sentence here.",
            ),
        ];
        let c = candidates(&passages);
        let found: Vec<(&str, usize)> = c.iter().map(|l| (l.sentence.as_str(), l.line)).collect();
        assert_eq!(
            found,
            vec![
                ("We offer full refunds within 7 days of purchase.", 11),
                ("Contact us by mail for a refund.", 11),
                ("Sync and Publish are billed yearly in advance.", 12),
                ("The second passage has one longer sentence here.", 4),
            ]
        );
        let picked = pick(c, &[0.9, 0.1, 0.5, 0.7]);
        let order: Vec<&str> = picked.iter().map(|l| l.sentence.as_str()).collect();
        assert_eq!(
            order,
            vec![
                "We offer full refunds within 7 days of purchase.",
                "The second passage has one longer sentence here."
            ]
        );
        assert!(pick(candidates(&passages), &[0.1]).is_empty());
    }
}
