//! Duplicate notes: near-copies, told apart from notes that merely share a template.
//!
//! Note vectors alone cannot tell them apart: with an E5 model, two daily notes made from one
//! template sit at a cosine of 0.93–0.96, as close as a note and its lightly edited copy
//! (0.98–0.995). So a pair is flagged in two steps:
//!
//! 1. **Candidates**: note vectors (as for similar notes) with cosine ≥ the threshold.
//! 2. **Own text**: each note's lines are cut into word pairs (lower-cased runs of letters and
//!    digits, two at a time; a one-word line is its word). A line is a *template line* when most
//!    of its word pairs occur in [`TEMPLATE_NOTES`] notes or more: headings, frontmatter keys, task
//!    stubs and code a template stamps into every note it makes (an edited template line still
//!    counts, its other word pairs being common). What is left is the note's own text. A pair is
//!    flagged when both notes have at least [`MIN_OWN_PAIRS`] word pairs of their own and the
//!    Jaccard overlap of those sets (shared / either) is ≥ the minimum overlap.
//!
//! Distinct daily notes share their template and little else (overlap ≤ 0.1 on the shared vaults);
//! a copy with 5–10% of its words edited keeps 0.4–0.9. Two instances of an unfilled template
//! have no own text and are never flagged. Lines come from the index's chunks (the note card's
//! title and property lines included, the context line of each chunk left out), so this needs no
//! access to the vault.

use std::collections::{HashMap, HashSet};
use std::hash::{DefaultHasher, Hash, Hasher};

use quire_index::store::ChunkRow;
use serde::Serialize;

/// The default cosine threshold for multilingual-e5-small (other models: their
/// [`quire_embed::Calibration::duplicate_cosine`]).
pub const DEFAULT_THRESHOLD: f32 = 0.90;
/// Default Jaccard overlap of the two notes' own text (`quire duplicates --min-overlap`).
pub const DEFAULT_MIN_OVERLAP: f32 = 0.4;
/// A word pair found in this many notes or more is template text.
pub const TEMPLATE_NOTES: usize = 4;
/// Word pairs of its own a note needs before it can be called a copy: fewer, and the pair is
/// a template and an instance of it that nobody filled in.
pub const MIN_OWN_PAIRS: usize = 8;
/// Candidates looked at, at the most (the best by cosine): bounds the work on a huge vault.
pub(crate) const MAX_CANDIDATES: usize = 20_000;

/// A pair of notes that look like copies of each other (never merged automatically).
#[derive(Debug, Clone, Serialize)]
pub struct DuplicatePair {
    /// Vault-relative path of one note.
    pub a: String,
    /// Vault-relative path of the other.
    pub b: String,
    /// Cosine similarity of their note vectors, at least the threshold asked for.
    pub score: f32,
    /// Jaccard overlap of the two notes' own text (template lines left out), from 0 to 1: the
    /// share of word pairs they have in common. Pairs are ranked by it.
    pub overlap: f32,
}

/// A note that looks like a copy of another one (see
/// [`Searcher::copies_among`](crate::Searcher::copies_among)).
#[derive(Debug, Clone, Serialize)]
pub struct NearCopy {
    /// Vault-relative path.
    pub path: String,
    /// The note's title, as indexed.
    pub title: String,
    /// Cosine similarity of the two notes' vectors.
    pub score: f32,
    /// Jaccard overlap of the two notes' own text, from 0 to 1.
    pub overlap: f32,
}

/// Each note's lines as sets of hashed word pairs, and in how many notes each word pair occurs.
pub(crate) struct OwnText {
    lines: HashMap<String, Vec<Vec<u64>>>,
    notes_with: HashMap<u64, usize>,
}

impl OwnText {
    /// Reads the lines of every chunk (all notes of the index, grouped by path).
    pub(crate) fn new(chunks: &[ChunkRow]) -> OwnText {
        let mut lines: HashMap<String, Vec<Vec<u64>>> = HashMap::new();
        for chunk in chunks {
            // The stored text is a context line (title, headings), a blank line, the body.
            let body = chunk
                .text
                .split_once("\n\n")
                .map_or(chunk.text.as_str(), |(_, body)| body);
            let note = lines.entry(chunk.note_path.clone()).or_default();
            note.extend(body.lines().map(word_pairs).filter(|l| !l.is_empty()));
        }
        let mut notes_with: HashMap<u64, usize> = HashMap::new();
        for note in lines.values() {
            let distinct: HashSet<u64> = note.iter().flatten().copied().collect();
            for pair in distinct {
                *notes_with.entry(pair).or_default() += 1;
            }
        }
        OwnText { lines, notes_with }
    }

    /// The word pairs of `path`'s lines that are not template lines.
    pub(crate) fn own(&self, path: &str) -> HashSet<u64> {
        let common = |p: &u64| self.notes_with.get(p).copied().unwrap_or(0) >= TEMPLATE_NOTES;
        self.lines
            .get(path)
            .into_iter()
            .flatten()
            .filter(|line| 2 * line.iter().filter(|p| common(p)).count() < line.len())
            .flatten()
            .copied()
            .collect()
    }
}

/// The Jaccard overlap of two notes' own text, or `None` when either has too little of its own
/// to say (fewer than [`MIN_OWN_PAIRS`] word pairs).
pub(crate) fn overlap(a: &HashSet<u64>, b: &HashSet<u64>) -> Option<f32> {
    if a.len() < MIN_OWN_PAIRS || b.len() < MIN_OWN_PAIRS {
        return None;
    }
    let shared = a.intersection(b).count();
    Some(shared as f32 / (a.len() + b.len() - shared) as f32)
}

/// A line's words (lower-cased runs of letters and digits; each character of a script written
/// without spaces, such as Chinese, is a word) two at a time, hashed; a line of one word gives
/// that word. Pairs rather than single words: two notes on one topic share words, copies share
/// their order.
fn word_pairs(line: &str) -> Vec<u64> {
    let mut words: Vec<String> = Vec::new();
    let mut word = String::new();
    for c in line.chars() {
        let cjk = quire_vault::parse::is_cjk(c);
        if c.is_alphanumeric() && !cjk {
            word.extend(c.to_lowercase());
            continue;
        }
        if !word.is_empty() {
            words.push(std::mem::take(&mut word));
        }
        if cjk {
            words.push(c.to_string());
        }
    }
    if !word.is_empty() {
        words.push(word);
    }
    let hash = |items: &[String]| {
        let mut h = DefaultHasher::new();
        items.hash(&mut h);
        h.finish()
    };
    match words.len() {
        0 => Vec::new(),
        1 => vec![hash(&words)],
        _ => words.windows(2).map(hash).collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chunk(path: &str, body: &str) -> ChunkRow {
        ChunkRow {
            note_path: path.into(),
            id: "x".into(),
            ordinal: 0,
            heading_path: Vec::new(),
            start_line: 1,
            end_line: 1,
            content_hash: String::new(),
            text: format!("{path}\n\n{body}"),
        }
    }

    #[test]
    fn template_lines_are_not_own_text_and_copies_overlap() {
        let template = "## Tasks\n- [ ] feed the starter every morning\n## Notes of the day\n";
        let days = [
            "long run along the canal in light rain, knee fine afterwards",
            "planning meeting ran over, nothing decided about the migration",
            "baked a rye loaf with the new starter, crumb too dense",
            "read two chapters of the novel on the train home",
            "fixed the leaking tap in the kitchen and cleaned the oven",
        ];
        let mut chunks: Vec<ChunkRow> = days
            .iter()
            .enumerate()
            .map(|(d, text)| chunk(&format!("day{d}.md"), &format!("{template}{text}\n")))
            .collect();
        let copy = "long run along the canal in heavy rain, knee fine afterwards";
        chunks.push(chunk("copy.md", &format!("{template}{copy}\n")));
        let text = OwnText::new(&chunks);
        let own0 = text.own("day0.md");
        assert!(
            !own0.contains(&word_pairs("feed the")[0]),
            "a template line"
        );
        let days = overlap(&own0, &text.own("day1.md")).unwrap();
        let copy = overlap(&own0, &text.own("copy.md")).unwrap();
        assert!(days < 0.1 && copy > 0.6, "copy {copy}, days {days}");
    }

    #[test]
    fn words_are_lower_cased_and_cjk_characters_count_alone() {
        assert_eq!(word_pairs("Hello, World"), word_pairs("hello world"));
        assert_eq!(word_pairs("喝茶笔记").len(), 3);
        assert_eq!(word_pairs("--- ***"), Vec::<u64>::new());
    }

    #[test]
    fn too_little_own_text_is_no_verdict() {
        let few: HashSet<u64> = (0..3).collect();
        let many: HashSet<u64> = (0..20).collect();
        assert_eq!(overlap(&few, &few), None);
        assert_eq!(overlap(&many, &many), Some(1.0));
    }
}
