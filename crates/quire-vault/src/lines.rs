//! Line/byte bookkeeping shared by the parser and the chunker.
//!
//! Line breaks follow CommonMark (and comrak): `\n`, `\r\n`, or a lone `\r`. A final line break does
//! not open a new line, so `"a\nb\n"` has two lines.

use std::ops::Range;

use crate::error::VaultError;

/// Byte offsets of the start of every line of a text.
#[derive(Debug, Clone)]
pub struct LineIndex {
    starts: Vec<usize>,
    len: usize,
}

impl LineIndex {
    /// The line starts of `text`, with CommonMark's line breaks (see the module docs).
    pub fn new(text: &str) -> Self {
        let bytes = text.as_bytes();
        let mut starts = vec![0];
        if memchr::memchr(b'\r', bytes).is_none() {
            // The common case, found with a vectorized search.
            starts.extend(
                memchr::memchr_iter(b'\n', bytes)
                    .map(|i| i + 1)
                    .filter(|&s| s < bytes.len()),
            );
        } else {
            for (i, &b) in bytes.iter().enumerate() {
                let is_break = b == b'\n' || (b == b'\r' && bytes.get(i + 1) != Some(&b'\n'));
                if is_break && i + 1 < bytes.len() {
                    starts.push(i + 1);
                }
            }
        }
        LineIndex {
            starts,
            len: bytes.len(),
        }
    }

    /// Number of lines (an empty text has one empty line).
    pub fn line_count(&self) -> usize {
        self.starts.len()
    }

    /// The 1-based line holding byte `offset` (offsets past the end map to the last line).
    pub fn line_of(&self, offset: usize) -> usize {
        match self.starts.binary_search(&offset) {
            Ok(i) => i + 1,
            Err(i) => i.max(1),
        }
    }

    /// The byte offset where 1-based `line` starts (clamped to the text).
    pub fn line_start(&self, line: usize) -> usize {
        if line == 0 {
            return 0;
        }
        self.starts.get(line - 1).copied().unwrap_or(self.len)
    }

    /// The byte offset where 1-based `line` ends, its line break excluded.
    pub fn line_end(&self, text: &str, line: usize) -> usize {
        let start = self.line_start(line);
        let mut end = self
            .starts
            .get(line)
            .copied()
            .unwrap_or(self.len)
            .min(text.len());
        // Line content never ends in '\r' or '\n' (a lone '\r' is itself a break), so every
        // trailing break byte belongs to this line's terminator.
        let bytes = text.as_bytes();
        while end > start && matches!(bytes[end - 1], b'\n' | b'\r') {
            end -= 1;
        }
        end
    }

    /// Byte offset of a 1-based (line, byte column) position, clamped to the text.
    pub fn offset(&self, line: usize, column: usize) -> usize {
        (self.line_start(line) + column.saturating_sub(1)).min(self.len)
    }

    /// Bytes of lines `start..=end` (1-based, inclusive) without the last line break;
    /// `None` if the range is empty or out of bounds.
    pub fn span(&self, text: &str, start: usize, end: usize) -> Option<Range<usize>> {
        if start == 0 || start > end || end > self.line_count() {
            return None;
        }
        Some(self.line_start(start)..self.line_end(text, end))
    }
}

/// Parses a line range as the CLI's `--lines` and the MCP server's `lines` take it: `A-B`
/// (1-based, inclusive), `A` (one line) or `A-` (to the end), clamped to `line_count`.
pub fn parse_line_range(spec: &str, line_count: usize) -> Result<(usize, usize), VaultError> {
    let bad = |why: &str| VaultError::BadRequest(format!("bad line range `{spec}`: {why}"));
    let (a, b) = match spec.split_once('-') {
        Some((a, b)) => (a.trim(), b.trim()),
        None => (spec.trim(), spec.trim()),
    };
    let start: usize = a.parse().map_err(|_| bad("expected A-B"))?;
    let end: usize = if b.is_empty() {
        line_count
    } else {
        b.parse().map_err(|_| bad("expected A-B"))?
    };
    if start == 0 || start > end {
        return Err(bad("lines are 1-based and A must not exceed B"));
    }
    if start > line_count {
        return Err(VaultError::BadRequest(format!(
            "line {start} is past the end of the note ({line_count} lines)"
        )));
    }
    Ok((start, end.min(line_count)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_ranges_parse_and_clamp() {
        assert_eq!(parse_line_range("2-4", 10).unwrap(), (2, 4));
        assert_eq!(parse_line_range("3", 10).unwrap(), (3, 3));
        assert_eq!(parse_line_range("8-", 10).unwrap(), (8, 10));
        assert_eq!(parse_line_range("8-99", 10).unwrap(), (8, 10));
        for bad in ["0-2", "5-2", "x", "-3", "11"] {
            assert!(parse_line_range(bad, 10).is_err(), "{bad}");
        }
    }

    #[test]
    fn lines_and_offsets_follow_commonmark_breaks() {
        let text = "a\r\nbc\rd\n\ne\n";
        let idx = LineIndex::new(text);
        assert_eq!(idx.line_count(), 5);
        assert_eq!(&text[idx.span(text, 1, 1).unwrap()], "a");
        assert_eq!(&text[idx.span(text, 2, 2).unwrap()], "bc");
        assert_eq!(&text[idx.span(text, 3, 3).unwrap()], "d");
        assert_eq!(&text[idx.span(text, 4, 4).unwrap()], "");
        assert_eq!(&text[idx.span(text, 2, 5).unwrap()], "bc\rd\n\ne");
        assert_eq!(idx.line_of(idx.line_start(3)), 3);
        assert!(idx.span(text, 0, 1).is_none());
        assert!(idx.span(text, 2, 6).is_none());
    }

    #[test]
    fn empty_text_has_one_line() {
        let idx = LineIndex::new("");
        assert_eq!(idx.line_count(), 1);
        assert_eq!(idx.span("", 1, 1), Some(0..0));
    }
}
