//! `draft`: a few paragraphs for one section of a note, from what the rest of the vault says,
//! and, only on request, written into the note.
//!
//! Retrieval searches with the section's heading, the note's title and the headings around it,
//! and leaves the note itself out. The model cites `[S1]`; the draft shows `[[wikilinks]]` made
//! from quire's own records (unknown ids are removed).
//!
//! Writing is not done here: a draft goes into the note as a proposal (the `quire-proposals`
//! crate, through `quire_app::proposals::propose_draft`), made from the bytes
//! [`DraftTarget::unchanged_bytes`] returns: the note as [`DraftTarget::read`] read it (blake3 of
//! the bytes), or an error if it changed since.

use std::path::PathBuf;

use quire_llm::{CancelToken, ChatModel, ChatRequest};
/// The note's text with a draft put under its heading (the one pure edit, shared with proposals).
pub use quire_vault::edit::insert_under_heading as splice_draft;
use quire_vault::{Heading, Note, Outline};
use serde::Serialize;

use crate::ask::{AnswerKind, SourceCard, shorten};
use crate::cite::{removed_warning, stream_wikilinked};
use crate::context::{FrozenContext, RetrievalReport, Source, SourceReader, number_sources};
use crate::error::AssistError;
use crate::prompt::{self, DraftBrief};

/// The most code points of the note's own text shown to the model (for language and voice).
const NOTE_TEXT_BUDGET: usize = 3_000;

/// The note and section a draft is for, as read from disk.
#[derive(Debug, Clone)]
pub struct DraftTarget {
    /// Vault-relative path.
    pub path: String,
    /// The note's absolute path, inside the vault.
    pub abs_path: PathBuf,
    /// blake3 of the file's bytes when read: [`insert_draft`] writes only if it is unchanged.
    pub hash: String,
    /// The note as parsed when read.
    pub note: Note,
    /// The heading level asked for (`## Section` → 2), if any.
    pub level: Option<u8>,
    /// The heading text asked for.
    pub heading: String,
    /// The heading in the note, when the note has it.
    pub section: Option<Heading>,
    /// The headings above the section, then the section's own.
    pub heading_path: Vec<String>,
}

impl DraftTarget {
    /// The note's bytes now, if they still hash as when [`DraftTarget::read`] read them; else
    /// [`AssistError::Changed`]. A draft is proposed from these bytes.
    pub fn unchanged_bytes(&self) -> Result<Vec<u8>, AssistError> {
        let bytes =
            quire_vault::scan::read_note_bytes(&self.abs_path, u64::MAX).map_err(|reason| {
                AssistError::Unreadable {
                    path: self.path.clone(),
                    reason: reason.to_string(),
                }
            })?;
        if blake3::hash(&bytes).to_hex().as_str() != self.hash {
            return Err(AssistError::Changed {
                path: self.path.clone(),
                expected: self.hash[..12].to_string(),
            });
        }
        Ok(bytes)
    }

    /// Reads the note and finds the heading: `## Section` (a level, then the text) or
    /// `Section`, matched case-insensitively; `Parent/Child` paths are tried as well. A heading
    /// the note lacks is not an error: the draft is written for it, and inserting appends it.
    pub fn read(
        reader: &SourceReader,
        path: &str,
        heading: &str,
    ) -> Result<DraftTarget, AssistError> {
        let (abs_path, bytes) = reader.read_bytes(path)?;
        let hash = blake3::hash(&bytes).to_hex().to_string();
        let note = reader.parse(path, bytes)?;
        let trimmed = heading.trim();
        let hashes = trimmed.chars().take_while(|c| *c == '#').count();
        let level = (1..=6).contains(&hashes).then_some(hashes as u8);
        let text = trimmed.trim_start_matches('#').trim().to_string();
        if text.is_empty() {
            return Err(AssistError::Unusable(format!(
                "`{heading}` names no heading: write it as \"## Section\" or \"Section\""
            )));
        }
        let section = note
            .headings
            .iter()
            .find(|h| h.text.eq_ignore_ascii_case(&text) && level.is_none_or(|l| l == h.level))
            .or_else(|| {
                note.headings
                    .iter()
                    .find(|h| h.text.to_lowercase() == text.to_lowercase())
            })
            .or_else(|| {
                let found = Outline::of(&note).find(&text).map(|n| n.line)?;
                note.headings.iter().find(|h| h.line == found)
            })
            .cloned();
        let heading_path = match &section {
            Some(h) => heading_path(&note.headings, h),
            None => vec![text.clone()],
        };
        Ok(DraftTarget {
            path: path.to_string(),
            abs_path,
            hash,
            note,
            level,
            heading: section.as_ref().map_or(text, |h| h.text.clone()),
            section,
            heading_path,
        })
    }

    /// The retrieval query: the section's heading, the note's title and the headings around
    /// the section (its parents and its neighbours).
    pub fn query(&self) -> String {
        let mut words: Vec<&str> = vec![self.heading.as_str(), self.note.title.as_str()];
        words.extend(self.heading_path.iter().map(String::as_str));
        if let Some(section) = &self.section {
            let at = self.note.headings.iter().position(|h| h == section);
            if let Some(i) = at {
                let before = i.checked_sub(1).map(|j| &self.note.headings[j]);
                let after = self.note.headings.get(i + 1);
                words.extend(before.into_iter().chain(after).map(|h| h.text.as_str()));
            }
        }
        let mut seen = std::collections::HashSet::new();
        words.retain(|w| seen.insert(w.to_lowercase()));
        words.join(" ")
    }

    /// What the prompt says about the section and the note.
    fn brief_parts(&self) -> (Vec<String>, String) {
        let outline = self
            .note
            .headings
            .iter()
            .map(|h| format!("{} {}", "#".repeat(h.level as usize), h.text))
            .collect();
        let body = self
            .note
            .lines(self.note.body_start_line.max(1), self.note.line_count)
            .unwrap_or(&self.note.source);
        (outline, shorten(body, NOTE_TEXT_BUDGET))
    }
}

/// The texts of the headings that contain `target`, outermost first, then its own.
fn heading_path(headings: &[Heading], target: &Heading) -> Vec<String> {
    let mut stack: Vec<&Heading> = Vec::new();
    for h in headings {
        while stack.last().is_some_and(|top| top.level >= h.level) {
            stack.pop();
        }
        stack.push(h);
        if h == target {
            break;
        }
    }
    stack.into_iter().map(|h| h.text.clone()).collect()
}

/// A written (or, offline, gathered) draft: the `--json` output of `quire draft`.
#[derive(Debug, Clone, Serialize)]
pub struct Draft {
    /// Generated; offline, extractive (passages gathered) or nothing found.
    pub kind: AnswerKind,
    /// Vault-relative path of the note drafted for.
    pub note: String,
    /// The heading text the draft is for.
    pub heading: String,
    /// The draft as shown, citations as wikilinks.
    pub draft: String,
    /// The ids it cites, in order of first use.
    pub citations: Vec<String>,
    /// Ids it cites that no source has; they were removed from `draft`.
    pub invalid_citations: Vec<String>,
    /// Every source given, marked cited or not.
    pub sources: Vec<SourceCard>,
    /// Things the reader should know (no source matched, none cited, citations removed).
    pub warnings: Vec<String>,
    /// How the context was put together.
    pub retrieval: RetrievalReport,
    /// The model that wrote the draft; `None` offline.
    pub model: Option<String>,
}

/// Writes the draft from `context` (retrieved with [`DraftTarget::query`], the note excluded),
/// streaming the shown text. Without a model, the passages are gathered under the heading
/// instead, each with its wikilink.
pub fn write_draft(
    model: Option<&dyn ChatModel>,
    target: &DraftTarget,
    context: FrozenContext,
    cancel: &CancelToken,
    on_text: &mut dyn FnMut(&str),
) -> Result<Draft, AssistError> {
    let FrozenContext {
        passages, report, ..
    } = context;
    let sources = number_sources(passages, 1);
    let mut draft = Draft {
        kind: AnswerKind::Generated,
        note: target.path.clone(),
        heading: target.heading.clone(),
        draft: String::new(),
        citations: Vec::new(),
        invalid_citations: Vec::new(),
        sources: Vec::new(),
        warnings: Vec::new(),
        retrieval: report,
        model: None,
    };
    let Some(model) = model else {
        draft.kind = if sources.is_empty() {
            AnswerKind::NothingFound
        } else {
            AnswerKind::Extractive
        };
        draft.draft = gathered(&target.heading, &sources);
        on_text(&draft.draft);
        draft.citations = sources.iter().map(|s| s.id.clone()).collect();
        draft.sources = sources.iter().map(|s| SourceCard::of(s, true)).collect();
        return Ok(draft);
    };
    if sources.is_empty() {
        draft.warnings.push(
            "no other note matched the section: the draft rests on the note alone".to_string(),
        );
    }
    let (outline, note_text) = target.brief_parts();
    let brief = DraftBrief {
        note_path: &target.path,
        note_title: &target.note.title,
        heading_path: &target.heading_path,
        outline: &outline,
        note_text: &note_text,
    };
    let mut request = ChatRequest::new(prompt::draft_messages(&brief, &sources));
    request.temperature = Some(0.4);
    let cited = stream_wikilinked(model, &request, &sources, cancel, on_text)?;
    draft.model = Some(model.name());
    draft.draft = cited.text;
    draft.sources = sources
        .iter()
        .map(|s| SourceCard::of(s, cited.citations.valid.contains(&s.id)))
        .collect();
    if cited.citations.valid.is_empty() && !sources.is_empty() {
        draft
            .warnings
            .push("the draft cites no source: check it before keeping it".to_string());
    }
    draft
        .warnings
        .extend(removed_warning("sources", &cited.citations.invalid));
    draft.citations = cited.citations.valid;
    draft.invalid_citations = cited.citations.invalid;
    Ok(draft)
}

/// The offline draft: the passages that match the section, as a list to write from.
fn gathered(heading: &str, sources: &[Source]) -> String {
    if sources.is_empty() {
        return format!("No other note says anything about “{heading}”.\n");
    }
    let mut text = format!(
        "Material for “{heading}” from your notes (no language model is configured, so this is a list to write from; nothing here is generated):\n\n"
    );
    for source in sources {
        let line = shorten(&source.passage.text, 300)
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ");
        text.push_str(&format!("- {line} [[{}]]\n", source.passage.link));
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    fn heading(level: u8, text: &str, line: usize, end_line: usize) -> Heading {
        Heading {
            level,
            text: text.into(),
            line,
            end_line,
        }
    }

    #[test]
    fn the_draft_goes_after_the_section_text_and_before_the_next_heading() {
        let text = "# T\n\n## Plan\n\nFirst.\n\n\n## Next\nx\n";
        let (new, line) = splice_draft(text, Some(&heading(2, "Plan", 3, 7)), 2, "Plan", "A\nB\n");
        assert_eq!(new, "# T\n\n## Plan\n\nFirst.\n\nA\nB\n\n\n## Next\nx\n");
        assert_eq!(line, 7);
        assert_eq!(new.lines().nth(line - 1), Some("A"));
    }

    #[test]
    fn an_empty_section_and_a_last_line_without_a_break() {
        let (new, line) = splice_draft("## Plan", Some(&heading(2, "Plan", 1, 1)), 2, "Plan", "A");
        assert_eq!(new, "## Plan\n\nA");
        assert_eq!(line, 3);
    }

    #[test]
    fn crlf_files_get_crlf_and_a_bom_stays_first() {
        let text = "\u{feff}## Plan\r\nOld\r\n";
        let (new, line) = splice_draft(text, Some(&heading(2, "Plan", 1, 2)), 2, "Plan", "A\nB");
        assert_eq!(new, "\u{feff}## Plan\r\nOld\r\n\r\nA\r\nB\r\n");
        assert_eq!(line, 4);
    }

    #[test]
    fn a_missing_heading_is_appended() {
        let (new, line) = splice_draft("# T\nbody", None, 3, "Ideas", "A");
        assert_eq!(new, "# T\nbody\n\n### Ideas\n\nA\n");
        assert_eq!(line, 6);
    }

    #[test]
    fn heading_paths_follow_levels() {
        let hs = vec![
            heading(1, "T", 1, 9),
            heading(2, "A", 2, 4),
            heading(3, "A1", 3, 4),
            heading(2, "B", 5, 9),
            heading(3, "B1", 6, 9),
        ];
        assert_eq!(heading_path(&hs, &hs[4]), ["T", "B", "B1"]);
        assert_eq!(heading_path(&hs, &hs[1]), ["T", "A"]);
    }
}
