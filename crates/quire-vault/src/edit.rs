//! Pure edits of a note's text: what a proposal to change a note computes before anything is
//! written (see the `quire-proposals` crate).

use crate::lines::LineIndex;
use crate::model::Heading;

/// The note's text with `text_to_insert` put under a heading, and the inserted text's first
/// line. Pure.
///
/// Under an existing heading the text goes after the section's last non-blank line, separated
/// by a blank line, so the section's text stays before it and the next heading after it. A
/// missing heading is appended at the end with the text under it. Every other byte is kept,
/// and the text takes the file's line breaks (`\r\n` if the file uses them).
pub fn insert_under_heading(
    text: &str,
    section: Option<&Heading>,
    level: u8,
    heading: &str,
    text_to_insert: &str,
) -> (String, usize) {
    let eol = if text.contains("\r\n") { "\r\n" } else { "\n" };
    let body = text_to_insert.trim().lines().collect::<Vec<_>>().join(eol);
    // Line numbers count from after a byte-order mark, as the parser's do.
    let bom = if text.starts_with('\u{feff}') { 3 } else { 0 };
    let source = &text[bom..];
    let lines = LineIndex::new(source);
    let (at, insertion, text_from) = match section {
        Some(h) => {
            let blank = |n: usize| {
                lines
                    .span(source, n, n)
                    .is_none_or(|r| source[r].trim().is_empty())
            };
            let mut last = h.end_line.min(lines.line_count()).max(h.line);
            while last > h.line && blank(last) {
                last -= 1;
            }
            let at = bom + lines.line_end(source, last);
            let lead = format!("{eol}{eol}");
            (at, format!("{lead}{body}"), lead.len())
        }
        None => {
            let mut lead = String::new();
            if !source.is_empty() && !source.ends_with(['\n', '\r']) {
                lead.push_str(eol);
            }
            if !source.trim().is_empty() {
                lead.push_str(eol);
            }
            lead.push_str(&format!(
                "{} {heading}{eol}{eol}",
                "#".repeat(level.clamp(1, 6) as usize)
            ));
            (text.len(), format!("{lead}{body}{eol}"), lead.len())
        }
    };
    let mut new_text = String::with_capacity(text.len() + insertion.len());
    new_text.push_str(&text[..at]);
    new_text.push_str(&insertion);
    new_text.push_str(&text[at..]);
    let line = LineIndex::new(&new_text[bom..]).line_of(at - bom + text_from);
    (new_text, line)
}
