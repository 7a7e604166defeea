//! Does the passage a sentence cites say what the sentence says? quire already removes citations
//! of ids it never gave; this module reads the text. An answer is split into sentences
//! ([`split_sentences`]: `.`, `!`, `?` before a space, `。！？` anywhere, a line break; a list
//! item is one sentence; a citation written just after the full stop belongs to the sentence
//! before it), and each sentence is compared with every source of the answer:
//!
//! - **words**: the share of the sentence's content words found in the passage (its title and
//!   headings included), as the full-text index's analyzer makes them (lowercased, stemmed by
//!   script, CJK as bigrams; words that carry no claim and words under three letters left out:
//!   `quire_index::analyzer::content_terms`, which [`crate::evidence`] uses too).
//! - **cosine**, when an embedder is available: the sentence's vector against the passage's
//!   stored vector (the caller computes them, see `quire_app::ask::check_support`).
//!
//! A cited passage is [`SupportStatus::Supported`] when it passes the thresholds
//! ([`Thresholds::DEFAULT`], calibrated on `eval/citations/dev.jsonl`), and
//! [`SupportStatus::Misattributed`] when another source passes them and fits far better (that
//! source is named), else [`SupportStatus::Unsupported`]. A sentence with no citation is given
//! the source that supports it best, when one passes the thresholds, as a citation
//! `added_by_quire` (never shown as the model's); otherwise it stays unattributed ("I could not
//! find that" needs no source).
//!
//! An extractive answer quotes its passages, so its sentences are supported by construction:
//! [`by_construction`] says so instead of checking.

use std::collections::HashSet;

use quire_llm::parse_citations;
use serde::Serialize;

use crate::context::Source;
use quire_index::analyzer::content_terms;

/// The thresholds of the support check.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Thresholds {
    /// Without vectors, a passage supports a sentence when it has at least this share of the
    /// sentence's content words.
    pub words: f32,
    /// With vectors, a passage supports a sentence when their cosine is at least this…
    pub cosine: f32,
    /// …or when it has at least this share of the sentence's words (and the cosine is at least
    /// [`Thresholds::cosine_floor`]).
    pub words_with_vectors: f32,
    /// The cosine below which words alone never make support.
    pub cosine_floor: f32,
    /// Another source fits "far better" than a cited one that passes the thresholds when its
    /// cosine is higher by this much (with vectors)…
    pub cosine_margin: f32,
    /// …and its share of words by this much (with and without vectors).
    pub words_margin: f32,
}

impl Thresholds {
    /// quire's thresholds for multilingual-e5-small (`passage:` prefix on both sides), chosen
    /// on the dev set: a starting point, not a fit (figures in docs/ask.md).
    pub const DEFAULT: Thresholds = Thresholds {
        words: 0.5,
        cosine: 0.90,
        words_with_vectors: 0.5,
        cosine_floor: 0.80,
        cosine_margin: 0.04,
        words_margin: 0.4,
    };
}

impl Thresholds {
    /// The thresholds for vectors of the model `calibration` was measured for (the share of
    /// words is the same for every model).
    pub fn for_model(calibration: &quire_embed::Calibration) -> Thresholds {
        Thresholds {
            cosine: calibration.support_cosine,
            cosine_floor: calibration.support_cosine_floor,
            cosine_margin: calibration.support_cosine_margin,
            ..Thresholds::DEFAULT
        }
    }
}

impl Default for Thresholds {
    fn default() -> Thresholds {
        Thresholds::DEFAULT
    }
}

/// What a citation of a sentence is worth.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum SupportStatus {
    /// The passage says what the sentence says.
    Supported,
    /// Another source says it far better (named in [`SentenceCitation::better`]).
    Misattributed,
    /// No source says it.
    Unsupported,
}

impl SupportStatus {
    /// Its name, as in the JSON.
    pub fn as_str(self) -> &'static str {
        match self {
            SupportStatus::Supported => "supported",
            SupportStatus::Misattributed => "misattributed",
            SupportStatus::Unsupported => "unsupported",
        }
    }
}

/// One citation of a sentence, checked.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SentenceCitation {
    /// The source's id (`S2`).
    pub id: String,
    /// Supported, misattributed or unsupported.
    pub status: SupportStatus,
    /// For a misattributed citation, the source that fits far better.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub better: Option<String>,
    /// `true` when the model did not cite it: quire attributed the sentence to this source.
    pub added_by_quire: bool,
    /// Share of the sentence's content words found in the passage, 0 to 1.
    pub words: f32,
    /// Cosine between the sentence and the passage, when vectors were compared.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cosine: Option<f32>,
}

/// One sentence of an answer and its checked citations.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CheckedSentence {
    /// The sentence as shown, citations included.
    pub text: String,
    /// Where it starts in the answer, a byte offset (UTF-8).
    pub start: usize,
    /// Where it ends in the answer, a byte offset, exclusive.
    pub end: usize,
    /// The model's citations, checked, or the one quire added; empty when unattributed.
    pub citations: Vec<SentenceCitation>,
}

impl CheckedSentence {
    /// Whether the model cited this sentence.
    pub fn is_cited(&self) -> bool {
        self.citations.iter().any(|c| !c.added_by_quire)
    }

    /// Whether one of the model's citations is unsupported or misattributed.
    pub fn fails(&self) -> bool {
        self.citations
            .iter()
            .any(|c| !c.added_by_quire && c.status != SupportStatus::Supported)
    }
}

/// How sentences were compared with their sources.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum SupportMethod {
    /// Shared words and embedding cosines.
    WordsAndEmbeddings,
    /// Shared words only: no embedder (offline without the model, or a BM25-only index).
    WordsOnly,
    /// Not checked: an extractive answer quotes its passages.
    ByConstruction,
}

/// The summary of the support check (`support` in `quire ask --json`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SupportReport {
    /// How the sentences were compared.
    pub method: SupportMethod,
    /// Why the method is what it is, when it is not the full check.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    /// Sentences of the answer.
    pub sentences: usize,
    /// Sentences the model cited.
    pub cited: usize,
    /// Cited sentences whose every citation is supported.
    pub supported: usize,
    /// Cited sentences with a misattributed citation (and none unsupported).
    pub misattributed: usize,
    /// Cited sentences with an unsupported citation.
    pub unsupported: usize,
    /// Uncited sentences quire attributed to a source.
    pub added_by_quire: usize,
    /// Uncited sentences no source supports clearly.
    pub unattributed: usize,
}

impl SupportReport {
    /// The report of an extractive answer: quoted passages are their own support.
    pub fn by_construction() -> SupportReport {
        SupportReport {
            method: SupportMethod::ByConstruction,
            note: Some(
                "extractive answer: every passage is quoted as written, so nothing was checked"
                    .to_string(),
            ),
            sentences: 0,
            cited: 0,
            supported: 0,
            misattributed: 0,
            unsupported: 0,
            added_by_quire: 0,
            unattributed: 0,
        }
    }

    /// The one-line summary for people: `2 of 5 cited sentences unsupported: …`.
    pub fn summary(&self, sentences: &[CheckedSentence]) -> String {
        if self.method == SupportMethod::ByConstruction {
            return self.note.clone().unwrap_or_default();
        }
        let how = match self.method {
            SupportMethod::WordsAndEmbeddings => "words and embeddings",
            _ => "words only, no embedder",
        };
        let mut parts = Vec::new();
        if self.cited > 0 {
            parts.push(format!(
                "{} of {} cited sentences supported",
                self.supported, self.cited
            ));
        }
        for (count, what, status) in [
            (self.unsupported, "unsupported", SupportStatus::Unsupported),
            (
                self.misattributed,
                "misattributed",
                SupportStatus::Misattributed,
            ),
        ] {
            if count > 0 {
                let which: Vec<String> = sentences
                    .iter()
                    .filter(|s| {
                        s.citations
                            .iter()
                            .any(|c| !c.added_by_quire && c.status == status)
                    })
                    .map(quoted)
                    .collect();
                parts.push(format!("{count} {what}: {}", which.join("; ")));
            }
        }
        if self.added_by_quire > 0 {
            parts.push(format!(
                "{} uncited sentences attributed by quire (not by the model)",
                self.added_by_quire
            ));
        }
        if parts.is_empty() {
            parts.push("no sentence to check".to_string());
        }
        format!("citations checked ({how}): {}", parts.join("; "))
    }
}

/// A sentence shortened for a summary line, with its citations' verdicts.
fn quoted(sentence: &CheckedSentence) -> String {
    let text = crate::ask::shorten(&sentence.text, 80);
    let better: Vec<String> = sentence
        .citations
        .iter()
        .filter_map(|c| c.better.as_ref().map(|b| format!("{} → {b}", c.id)))
        .collect();
    if better.is_empty() {
        format!("\"{text}\"")
    } else {
        format!("\"{text}\" ({})", better.join(", "))
    }
}

/// A sentence of an answer, before it is checked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Sentence {
    /// Byte offset of its first character in the answer.
    pub start: usize,
    /// Byte offset just after it.
    pub end: usize,
    /// The claim to check: the sentence without its citations and list marker.
    pub claim: String,
    /// The ids it cites, among the known ones, in order.
    pub cited: Vec<String>,
}

/// Splits `text` into sentences (see the module docs); `known` are the ids a citation may name.
pub fn split_sentences(text: &str, known: &[&str]) -> Vec<Sentence> {
    let mut sentences = Vec::new();
    let mut offset = 0;
    for line in text.split_inclusive('\n') {
        let line_start = offset;
        offset += line.len();
        let trimmed = line.trim();
        if trimmed.is_empty() || is_structure(trimmed) {
            continue;
        }
        let body_start = line_start + (line.len() - line.trim_start().len());
        let body = &text[body_start..line_start + line.trim_end().len()];
        let marker = list_marker(body);
        if marker > 0 {
            // A list item is one sentence.
            push_sentence(
                &mut sentences,
                text,
                body_start,
                body_start + body.len(),
                known,
            );
            continue;
        }
        let mut start = body_start;
        for end in sentence_ends(body) {
            push_sentence(&mut sentences, text, start, body_start + end, known);
            start = body_start + end;
        }
        push_sentence(&mut sentences, text, start, body_start + body.len(), known);
    }
    sentences
}

/// Headings, rules and table separators: structure, not claims.
fn is_structure(line: &str) -> bool {
    line.starts_with('#')
        || line
            .chars()
            .all(|c| matches!(c, '-' | '*' | '_' | '|' | ':' | ' '))
}

/// The length of a list marker at the start of `line` (`- `, `* `, `+ `, `1. `, `2) `), or 0.
fn list_marker(line: &str) -> usize {
    let bytes = line.as_bytes();
    if bytes.len() >= 2 && matches!(bytes[0], b'-' | b'*' | b'+') && bytes[1] == b' ' {
        return 2;
    }
    let digits = bytes.iter().take_while(|b| b.is_ascii_digit()).count();
    if (1..=3).contains(&digits)
        && bytes.len() > digits + 1
        && matches!(bytes[digits], b'.' | b')')
        && bytes[digits + 1] == b' '
    {
        return digits + 2;
    }
    0
}

/// Byte offsets in `line` where a sentence ends (exclusive): after `.`, `!` or `?` followed by
/// a space and a character that is not a lowercase letter (so "e.g. the" and "5.5" stay
/// whole), after `。！？` at once; a citation right after the mark belongs to the sentence.
fn sentence_ends(line: &str) -> Vec<usize> {
    let chars: Vec<(usize, char)> = line.char_indices().collect();
    let mut ends = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let (_, c) = chars[i];
        let wide = matches!(c, '。' | '！' | '？');
        if !(wide || matches!(c, '.' | '!' | '?')) {
            i += 1;
            continue;
        }
        // Closing marks stay with the sentence.
        let mut j = i + 1;
        while j < chars.len() && matches!(chars[j].1, '.' | '!' | '?' | '"' | '”' | '」' | ')') {
            j += 1;
        }
        let mut next = j;
        while next < chars.len() && chars[next].1 == ' ' {
            next += 1;
        }
        if !wide && (next == j || next == chars.len()) {
            i = j;
            continue;
        }
        // A citation after the full stop: "… daily. [S1] Then …".
        if next < chars.len() && chars[next].1 == '[' {
            let rest = &line[chars[next].0..];
            if let Some(close) = rest.find(']')
                && is_citation(&rest[..=close])
            {
                let after = chars[next].0 + close + 1;
                j = chars
                    .iter()
                    .position(|(b, _)| *b >= after)
                    .unwrap_or(chars.len());
                next = j;
                while next < chars.len() && chars[next].1 == ' ' {
                    next += 1;
                }
            }
        }
        if next >= chars.len() {
            break;
        }
        if !wide && chars[next].1.is_lowercase() {
            i = j;
            continue;
        }
        ends.push(chars.get(j).map_or(line.len(), |(b, _)| *b));
        i = j;
    }
    ends
}

/// Whether a bracket group is a citation (`[S1]`, `[S1, S3]`).
fn is_citation(group: &str) -> bool {
    let found = parse_citations(group, &[]);
    !found.valid.is_empty() || !found.invalid.is_empty()
}

/// Adds the sentence `text[start..end]`, trimmed, if it has a letter.
fn push_sentence(
    sentences: &mut Vec<Sentence>,
    text: &str,
    start: usize,
    end: usize,
    known: &[&str],
) {
    let span = &text[start..end];
    let start = start + (span.len() - span.trim_start().len());
    let end = start + span.trim().len();
    let span = &text[start..end];
    if !span.chars().any(char::is_alphabetic) {
        return;
    }
    let (claim, cited) = claim_and_citations(span, known);
    if !claim.chars().any(char::is_alphabetic) {
        return;
    }
    sentences.push(Sentence {
        start,
        end,
        claim,
        cited,
    });
}

/// The sentence without its list marker and citations, and the known ids it cites.
fn claim_and_citations(span: &str, known: &[&str]) -> (String, Vec<String>) {
    let span = &span[list_marker(span)..];
    let mut claim = String::new();
    let mut cited: Vec<String> = Vec::new();
    let mut rest = span;
    while let Some(open) = rest.find('[') {
        claim.push_str(&rest[..open]);
        let after = &rest[open..];
        match after.find(']') {
            Some(close) if is_citation(&after[..=close]) => {
                for id in parse_citations(&after[..=close], known).valid {
                    if !cited.contains(&id) {
                        cited.push(id);
                    }
                }
                rest = &after[close + 1..];
            }
            _ => {
                claim.push('[');
                rest = &after[1..];
            }
        }
    }
    claim.push_str(rest);
    (
        claim.split_whitespace().collect::<Vec<_>>().join(" "),
        cited,
    )
}

/// The content terms of `text` (see the module docs), as a set.
pub fn content_stems(text: &str) -> HashSet<String> {
    content_terms(text).into_iter().collect()
}

/// The share of `claim`'s stems in `passage`'s (0 for a claim without content words).
pub fn word_share(claim: &HashSet<String>, passage: &HashSet<String>) -> f32 {
    if claim.is_empty() {
        return 0.0;
    }
    claim.iter().filter(|w| passage.contains(*w)).count() as f32 / claim.len() as f32
}

/// The text a source is compared on: its note's title, its headings and the passage.
pub fn source_text(source: &Source) -> String {
    let p = &source.passage;
    format!("{} {} {}", p.title, p.heading_path.join(" "), p.text)
}

/// How well one source fits one sentence.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Fit {
    /// Share of the sentence's content words in the source.
    pub words: f32,
    /// Cosine of the sentence and the source, when compared.
    pub cosine: Option<f32>,
}

impl Fit {
    /// Whether the source supports the sentence under `t`.
    pub fn supports(&self, t: &Thresholds) -> bool {
        match self.cosine {
            Some(cosine) => {
                cosine >= t.cosine
                    || (self.words >= t.words_with_vectors && cosine >= t.cosine_floor)
            }
            None => self.words >= t.words,
        }
    }

    /// Whether `self` fits far better than `other`.
    fn far_better_than(&self, other: &Fit, t: &Thresholds) -> bool {
        let words = self.words - other.words >= t.words_margin;
        match (self.cosine, other.cosine) {
            (Some(a), Some(b)) => words && a - b >= t.cosine_margin,
            _ => words,
        }
    }

    /// The key sources are ranked by: cosine first when there is one, then words.
    fn rank(&self) -> (f32, f32) {
        (self.cosine.unwrap_or(self.words), self.words)
    }
}

/// How one claim fits a source: a sentence's [`Fit`] to each source, for [`judge`].
pub fn fits(claim: &str, sources: &[HashSet<String>], cosines: Option<&[Option<f32>]>) -> Vec<Fit> {
    let stems = content_stems(claim);
    sources
        .iter()
        .enumerate()
        .map(|(i, source)| Fit {
            words: word_share(&stems, source),
            cosine: cosines.and_then(|c| c.get(i).copied().flatten()),
        })
        .collect()
}

/// The verdicts of one sentence: `cited` are indexes into `fits` (the model's citations);
/// `ids` name the sources. Without a citation, the best-fitting source that supports the
/// sentence is added as quire's; with none, the result is empty.
pub fn judge(cited: &[usize], fits: &[Fit], ids: &[&str], t: &Thresholds) -> Vec<SentenceCitation> {
    let citation = |i: usize, status, better: Option<usize>, added_by_quire| SentenceCitation {
        id: ids[i].to_string(),
        status,
        better: better.map(|b| ids[b].to_string()),
        added_by_quire,
        words: round(fits[i].words),
        cosine: fits[i].cosine.map(round),
    };
    let best_among = |skip: &dyn Fn(usize) -> bool| {
        (0..fits.len())
            .filter(|&i| !skip(i) && fits[i].supports(t))
            .max_by(|&a, &b| {
                fits[a]
                    .rank()
                    .partial_cmp(&fits[b].rank())
                    .unwrap_or(std::cmp::Ordering::Equal)
            })
    };
    if cited.is_empty() {
        return best_among(&|_| false)
            .map(|i| citation(i, SupportStatus::Supported, None, true))
            .into_iter()
            .collect();
    }
    // A sentence that cites several sources may take a part from each: a citation counts as
    // supported when it supports alone, or when another cited source does and it shares words.
    let any_cited_supports = cited.iter().any(|&i| fits[i].supports(t));
    let other = best_among(&|i| cited.contains(&i));
    cited
        .iter()
        .map(|&i| {
            let fit = &fits[i];
            let alone = fit.supports(t);
            let together = cited.len() > 1 && any_cited_supports && fit.words >= t.words / 2.0;
            match other {
                Some(o) if !(alone || together) || fits[o].far_better_than(fit, t) => {
                    citation(i, SupportStatus::Misattributed, Some(o), false)
                }
                _ if alone || together => citation(i, SupportStatus::Supported, None, false),
                _ => citation(i, SupportStatus::Unsupported, None, false),
            }
        })
        .collect()
}

fn round(x: f32) -> f32 {
    (x * 1000.0).round() / 1000.0
}

/// Checks every sentence of `answer` against `sources` (every source of the conversation).
/// `cosines[s][k]` is the cosine of sentence `s` of [`split_sentences`] with source `k`;
/// `None` checks words only, and `note` says why.
pub fn check(
    answer: &str,
    sources: &[Source],
    cosines: Option<&[Vec<Option<f32>>]>,
    note: Option<String>,
    t: &Thresholds,
) -> (Vec<CheckedSentence>, SupportReport) {
    let ids: Vec<&str> = sources.iter().map(|s| s.id.as_str()).collect();
    let source_stems: Vec<HashSet<String>> = sources
        .iter()
        .map(|s| content_stems(&source_text(s)))
        .collect();
    let sentences = split_sentences(answer, &ids);
    let checked: Vec<CheckedSentence> = sentences
        .iter()
        .enumerate()
        .map(|(n, sentence)| {
            let row = cosines.and_then(|c| c.get(n)).map(Vec::as_slice);
            let fits = fits(&sentence.claim, &source_stems, row);
            let cited: Vec<usize> = sentence
                .cited
                .iter()
                .filter_map(|id| ids.iter().position(|known| known == id))
                .collect();
            CheckedSentence {
                text: answer[sentence.start..sentence.end].to_string(),
                start: sentence.start,
                end: sentence.end,
                citations: judge(&cited, &fits, &ids, t),
            }
        })
        .collect();
    let method = if cosines.is_some() {
        SupportMethod::WordsAndEmbeddings
    } else {
        SupportMethod::WordsOnly
    };
    let report = report(method, note, &checked);
    (checked, report)
}

fn report(
    method: SupportMethod,
    note: Option<String>,
    checked: &[CheckedSentence],
) -> SupportReport {
    let has = |s: &CheckedSentence, status| {
        s.citations
            .iter()
            .any(|c| !c.added_by_quire && c.status == status)
    };
    let cited: Vec<&CheckedSentence> = checked.iter().filter(|s| s.is_cited()).collect();
    let unsupported = cited
        .iter()
        .filter(|s| has(s, SupportStatus::Unsupported))
        .count();
    let misattributed = cited
        .iter()
        .filter(|s| has(s, SupportStatus::Misattributed) && !has(s, SupportStatus::Unsupported))
        .count();
    let added = checked
        .iter()
        .filter(|s| !s.is_cited() && !s.citations.is_empty())
        .count();
    SupportReport {
        method,
        note,
        sentences: checked.len(),
        cited: cited.len(),
        supported: cited.len() - unsupported - misattributed,
        misattributed,
        unsupported,
        added_by_quire: added,
        unattributed: checked.len() - cited.len() - added,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn claims(text: &str) -> Vec<(String, Vec<String>)> {
        split_sentences(text, &["S1", "S2", "S3"])
            .into_iter()
            .map(|s| (text[s.start..s.end].to_string(), s.cited))
            .collect()
    }

    #[test]
    fn sentences_end_at_full_stops_lines_and_cjk_marks() {
        let got = claims(
            "Feed it once a day [S1]. In the fridge, once a week. [S2] It peaks after 8 hours, e.g. at 22 °C.\n\n\
             - Ratio 1:5:5 in winter. 1:3:3 in summer [S1]\n\
             2. Flour is half rye.\n\
             ## Heading\n\
             乌龙茶用九十五度的水[S3]。绿茶用八十度。",
        );
        let texts: Vec<&str> = got.iter().map(|(t, _)| t.as_str()).collect();
        assert_eq!(
            texts,
            [
                "Feed it once a day [S1].",
                "In the fridge, once a week. [S2]",
                "It peaks after 8 hours, e.g. at 22 °C.",
                "- Ratio 1:5:5 in winter. 1:3:3 in summer [S1]",
                "2. Flour is half rye.",
                "乌龙茶用九十五度的水[S3]。",
                "绿茶用八十度。",
            ]
        );
        assert_eq!(got[0].1, ["S1"]);
        assert_eq!(got[1].1, ["S2"]);
        assert!(got[2].1.is_empty());
        assert_eq!(got[5].1, ["S3"]);
    }

    #[test]
    fn claims_leave_out_citations_and_list_markers() {
        let s = split_sentences("- Bake at 250 °C [S1, S2] (see [the note]).", &["S1", "S2"]);
        assert_eq!(s[0].claim, "Bake at 250 °C (see [the note]).");
        assert_eq!(s[0].cited, ["S1", "S2"]);
    }

    #[test]
    fn content_words_drop_stopwords_and_short_tokens() {
        let stems = content_stems("It is fed at 22 °C, once a day, in the Fridge");
        let mut stems: Vec<&str> = stems.iter().map(String::as_str).collect();
        stems.sort();
        assert_eq!(stems, ["22", "day", "fed", "fridg", "onc"]);
    }

    fn fit(words: f32, cosine: Option<f32>) -> Fit {
        Fit { words, cosine }
    }

    #[test]
    fn verdicts_follow_the_thresholds() {
        let t = Thresholds::DEFAULT;
        let ids = ["S1", "S2", "S3"];
        // Words only: the cited source has the words → supported.
        let fits = [fit(0.8, None), fit(0.2, None), fit(0.0, None)];
        assert_eq!(
            judge(&[0], &fits, &ids, &t)[0].status,
            SupportStatus::Supported
        );
        // Cited to S2, which lacks them, while S1 has them → misattributed, S1 named.
        let v = &judge(&[1], &fits, &ids, &t)[0];
        assert_eq!(v.status, SupportStatus::Misattributed);
        assert_eq!(v.better.as_deref(), Some("S1"));
        // Nobody has them → unsupported.
        let none = [fit(0.2, None), fit(0.1, None), fit(0.0, None)];
        assert_eq!(
            judge(&[0], &none, &ids, &t)[0].status,
            SupportStatus::Unsupported
        );
        // No citation: quire adds the best supporting source, or nothing.
        let added = judge(&[], &fits, &ids, &t);
        assert_eq!(added.len(), 1);
        assert!(added[0].added_by_quire);
        assert_eq!(added[0].id, "S1");
        assert!(judge(&[], &none, &ids, &t).is_empty());
    }
}
