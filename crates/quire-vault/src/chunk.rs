//! Structure-aware chunking: a note becomes the pieces that get embedded and indexed.
//!
//! Fixed token windows cut notes in the middle of a thought; these chunks follow the note's
//! structure instead (the lesson of Obsidian-Copilot and Vault Audit AI):
//!
//! 1. Every heading starts a *section*; text before the first heading is the preamble section.
//! 2. Inside a section the units are the top-level blocks: each top-level list item with its
//!    sub-items, each paragraph, code block, table, quote or callout. The heading line belongs to
//!    the section's first unit, and lines between blocks (link definitions, blank lines) to the
//!    unit before them, so every visible byte of the body lands in exactly one chunk.
//! 3. Neighbouring units merge up to a target size; a unit over the maximum splits at blank lines,
//!    then lines, then sentences, then words (then characters, for text without spaces).
//!
//! ## Stable ids
//! A chunk id is `blake3(section key, ordinal)`, where the section key is the heading path of its
//! section (with an occurrence number when the same path repeats in the note) and the ordinal is
//! the chunk's position inside its section. Editing one section therefore never changes the ids of
//! chunks in other sections (one exception: a heading with no text of its own joins its first
//! child's chunk, so giving it text changes that child's chunks too); editing inside a section can shift the ordinals after the edit, which
//! the index handles by also matching chunks by content hash. Ids are unique within a note and do
//! not include the path, so a renamed note keeps its chunk ids; `(path, id)` is unique in a vault.
//!
//! ## The note card
//! A note whose content is in its properties (a Bases/Dataview-style note: `type: shrine`,
//! `loc: "[[Kyoto]]"`, no body) would otherwise have no chunk at all, and could be found neither
//! by words nor by meaning. So a note with properties or aliases, or with no body chunk, also
//! gets a *card*: its title, aliases and properties as `key: value` lines (a link-valued property
//! by its target's name, `[[Kyoto|the city]]` → `Kyoto`). The card comes first, covers the
//! frontmatter's lines, and has the fixed section key [`CARD_KEY`], so its id never changes.
//!
//! Sizes are in tokens of the embedding model's tokenizer, through [`TokenCounter`]; until a model
//! is loaded, [`ApproxTokenCounter`] estimates them.

use std::ops::Range;

use serde::Serialize;

use crate::lines::LineIndex;
use crate::model::{BlockKind, Note};
use crate::parse::is_cjk;

/// Bump when chunk boundaries, ids or texts change, so indexes know to rebuild.
pub const CHUNKER_VERSION: u32 = 3;

/// The section key of the note card (no heading path can be it: it starts with a NUL).
pub const CARD_KEY: &str = "\u{0}card";
/// The longest property value a card shows, in characters (a longer one is cut).
const CARD_VALUE_CHARS: usize = 300;

/// Counts tokens the way the embedding model will.
pub trait TokenCounter: Send + Sync {
    /// The number of tokens `text` makes.
    fn count_tokens(&self, text: &str) -> usize;
}

/// An estimate of subword tokens without a tokenizer: about four characters per token in words
/// of alphabetic scripts, one token per CJK/Thai character. It errs on the high side so chunks
/// stay under a real model's limit.
#[derive(Debug, Clone, Copy, Default)]
pub struct ApproxTokenCounter;

impl TokenCounter for ApproxTokenCounter {
    fn count_tokens(&self, text: &str) -> usize {
        if text.is_ascii() {
            // Fast path: whitespace-separated runs of bytes, a token per four.
            let mut tokens = 0;
            let mut run = 0usize;
            for &b in text.as_bytes() {
                if b.is_ascii_whitespace() {
                    tokens += run.div_ceil(4);
                    run = 0;
                } else {
                    run += 1;
                }
            }
            return tokens + run.div_ceil(4);
        }
        let mut tokens = 0;
        for word in text.split_whitespace() {
            let mut run = 0usize;
            for c in word.chars() {
                if is_cjk(c) {
                    tokens += run.div_ceil(4) + 1;
                    run = 0;
                } else {
                    run += 1;
                }
            }
            tokens += run.div_ceil(4);
        }
        tokens
    }
}

/// Chunk size limits, in tokens.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ChunkOptions {
    /// Neighbouring units merge while the chunk stays at or under this size.
    pub target_tokens: usize,
    /// No chunk is larger than this (a unit larger than it is split).
    pub max_tokens: usize,
}

impl Default for ChunkOptions {
    fn default() -> Self {
        // e5/BERT models take 512 tokens; leave room for the prefix and the heading context.
        ChunkOptions {
            target_tokens: 256,
            max_tokens: 448,
        }
    }
}

/// A piece of a note that is embedded and indexed on its own.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Chunk {
    /// Stable id, 16 hex characters, unique within the note (see the module docs).
    pub id: String,
    /// Vault-relative path of its note.
    pub note_path: String,
    /// Texts of the headings above the chunk, outermost first.
    pub heading_path: Vec<String>,
    /// Position of the chunk within its section, from 0.
    pub ordinal: usize,
    /// Bytes of the note source this chunk covers (comments inside are left out of the texts).
    pub byte_range: Range<usize>,
    /// First line of `byte_range`, 1-based.
    pub start_line: usize,
    /// Last line of `byte_range`, inclusive.
    pub end_line: usize,
    /// The chunk's Markdown as the reader sees it (comments removed).
    pub body: String,
    /// What gets embedded and indexed: title and heading path as context, then the body.
    pub text: String,
    /// blake3 of `text`, 32 hex characters.
    pub content_hash: String,
    /// Tokens of `text`, by the [`TokenCounter`] given to the chunker.
    pub token_count: usize,
}

struct Section {
    key: String,
    heading_path: Vec<String>,
    start_line: usize,
    end_line: usize,
}

/// The most chunks one note gives. A note past it (say, a 3 MB log with 100,000 headings) would
/// otherwise take hours to embed; the index keeps its first chunks and reports the rest as not
/// indexed ([`crate::SkipReason::TooManyChunks`]). 2,000 chunks is about 500,000 tokens of text.
pub const MAX_CHUNKS_PER_NOTE: usize = 2_000;

/// Splits a note into chunks, in document order, at most [`MAX_CHUNKS_PER_NOTE`] of them.
pub fn chunk_note(note: &Note, options: &ChunkOptions, counter: &dyn TokenCounter) -> Vec<Chunk> {
    chunk_note_bounded(note, options, counter).0
}

/// [`chunk_note`], and whether the note had more chunks than [`MAX_CHUNKS_PER_NOTE`] (then only
/// the first ones are returned).
pub fn chunk_note_bounded(
    note: &Note,
    options: &ChunkOptions,
    counter: &dyn TokenCounter,
) -> (Vec<Chunk>, bool) {
    let source = note.source.as_str();
    let index = LineIndex::new(source);
    let visible = visible_text(note, &index);
    let content = content_starts(note);
    let mut chunks = Vec::new();
    let card = card(note, &index, counter);
    for section in sections(note) {
        if chunks.len() > MAX_CHUNKS_PER_NOTE {
            break;
        }
        let units = section_units(&section, &content, &index, &visible);
        let mut pieces = Vec::new();
        for unit in units {
            split_to_fit(
                &visible,
                unit,
                Level::BlankLine,
                options.max_tokens,
                counter,
                &mut pieces,
            );
        }
        let mut ordinal = 0;
        let mut current: Option<(Range<usize>, usize)> = None;
        for (range, tokens) in pieces {
            current = match current {
                Some((cur, cur_tokens)) if cur_tokens + tokens <= options.target_tokens => {
                    Some((cur.start..range.end, cur_tokens + tokens))
                }
                Some((cur, _)) => {
                    chunks.push(make_chunk(
                        note, &section, ordinal, cur, &index, &visible, counter,
                    ));
                    ordinal += 1;
                    Some((range, tokens))
                }
                None => Some((range, tokens)),
            };
        }
        if let Some((cur, _)) = current {
            chunks.push(make_chunk(
                note, &section, ordinal, cur, &index, &visible, counter,
            ));
        }
    }
    if let Some(card) = card.filter(|_| needs_card(note, &chunks)) {
        chunks.insert(0, card);
    }
    let truncated = chunks.len() > MAX_CHUNKS_PER_NOTE;
    chunks.truncate(MAX_CHUNKS_PER_NOTE);
    // Section keys are unique and an id hashes (key, ordinal), so ids are unique; this only
    // guards against a collision of the 64-bit hash prefix.
    let mut ids = std::collections::HashSet::with_capacity(chunks.len());
    for chunk in &mut chunks {
        let mut salt = 0u32;
        while !ids.insert(chunk.id.clone()) {
            salt += 1;
            let input = format!("{}\u{1e}{salt}", chunk.id);
            chunk.id = blake3::hash(input.as_bytes()).to_hex()[..16].to_string();
        }
    }
    (chunks, truncated)
}

/// The id of every note's card (computed once).
pub fn card_id() -> &'static str {
    static ID: std::sync::LazyLock<String> = std::sync::LazyLock::new(|| {
        blake3::hash(format!("{CARD_KEY}\u{1e}0").as_bytes()).to_hex()[..16].to_string()
    });
    &ID
}

impl Chunk {
    /// Whether this is the note's card (title, aliases, properties) rather than a piece of its
    /// body.
    pub fn is_card(&self) -> bool {
        self.heading_path.is_empty() && self.id == card_id()
    }
}

/// Whether a note gets a card: it has properties or aliases, or no chunk of its own.
fn needs_card(note: &Note, chunks: &[Chunk]) -> bool {
    !note.properties.is_empty() || !note.aliases.is_empty() || chunks.is_empty()
}

/// The note card (see the module docs): `None` only for a note without a title.
fn card(note: &Note, index: &LineIndex, counter: &dyn TokenCounter) -> Option<Chunk> {
    if note.title.trim().is_empty() {
        return None;
    }
    let mut lines = Vec::new();
    if !note.aliases.is_empty() {
        lines.push(format!("aliases: {}", note.aliases.join(", ")));
    }
    for (key, value) in &note.properties {
        if key.eq_ignore_ascii_case("aliases") || key.eq_ignore_ascii_case("alias") {
            continue;
        }
        let shown = property_text(value);
        if !shown.is_empty() {
            lines.push(format!("{key}: {shown}"));
        }
    }
    let body = if lines.is_empty() {
        note.title.clone()
    } else {
        lines.join("\n")
    };
    let text = format!("{}\n\n{}", note.title, body);
    let end = index
        .line_start(note.body_start_line)
        .min(note.source.len());
    Some(Chunk {
        id: card_id().to_string(),
        note_path: note.path.clone(),
        heading_path: Vec::new(),
        ordinal: 0,
        start_line: 1,
        end_line: note.body_start_line.saturating_sub(1).max(1),
        byte_range: 0..end,
        token_count: counter.count_tokens(&text),
        content_hash: blake3::hash(text.as_bytes()).to_hex()[..32].to_string(),
        body,
        text,
    })
}

/// A property value as words: lists joined with commas, links by their target's name, nested
/// objects by their values; cut at [`CARD_VALUE_CHARS`].
fn property_text(value: &serde_json::Value) -> String {
    use serde_json::Value;
    let text = match value {
        Value::Null => String::new(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => n.to_string(),
        Value::String(s) => link_names(s),
        Value::Array(items) => items
            .iter()
            .map(property_text)
            .filter(|s| !s.is_empty())
            .collect::<Vec<_>>()
            .join(", "),
        Value::Object(fields) => fields
            .values()
            .map(property_text)
            .filter(|s| !s.is_empty())
            .collect::<Vec<_>>()
            .join(", "),
    };
    match text.char_indices().nth(CARD_VALUE_CHARS) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text,
    }
}

/// `[[Target#Heading|label]]` → `Target` (and `[label](Target.md)` → `Target`); other text as
/// it is.
fn link_names(text: &str) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(open) = rest.find("[[") {
        out.push_str(&rest[..open]);
        let after = &rest[open + 2..];
        let Some(close) = after.find("]]") else {
            out.push_str(&rest[open..]);
            return out.trim().to_string();
        };
        let inner = &after[..close];
        let target = inner.split(['|', '#', '^']).next().unwrap_or(inner).trim();
        let name = target.rsplit('/').next().unwrap_or(target);
        out.push_str(name.strip_suffix(".md").unwrap_or(name));
        rest = &after[close + 2..];
    }
    out.push_str(rest);
    out.trim().to_string()
}

/// The source with frontmatter and comments blanked (same byte offsets).
fn visible_text(note: &Note, index: &LineIndex) -> String {
    let mut out = note.source.as_bytes().to_vec();
    let body_start = index.line_start(note.body_start_line);
    let mut hide = |range: Range<usize>| {
        for b in &mut out[range.start.min(range.end)..range.end.min(note.source.len())] {
            if *b != b'\n' && *b != b'\r' {
                *b = b' ';
            }
        }
    };
    hide(0..body_start);
    for c in &note.comments {
        hide(c.clone());
    }
    // Only whole UTF-8 sequences were replaced (comment and frontmatter bounds are char
    // boundaries), so this is valid UTF-8; fall back to a lossy copy rather than panic.
    String::from_utf8(out).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned())
}

fn sections(note: &Note) -> Vec<Section> {
    let mut sections = Vec::new();
    let first_heading = note
        .headings
        .first()
        .map(|h| h.line)
        .unwrap_or(note.line_count + 1);
    if first_heading > note.body_start_line {
        sections.push(Section {
            key: String::new(),
            heading_path: Vec::new(),
            start_line: note.body_start_line,
            end_line: first_heading - 1,
        });
    }
    let mut stack: Vec<(u8, String)> = Vec::new();
    let mut seen: std::collections::HashMap<String, usize> = Default::default();
    let mut used: std::collections::HashSet<String> = Default::default();
    for (i, h) in note.headings.iter().enumerate() {
        while stack.last().is_some_and(|(level, _)| *level >= h.level) {
            stack.pop();
        }
        stack.push((h.level, h.text.clone()));
        let heading_path: Vec<String> = stack.iter().map(|(_, t)| t.clone()).collect();
        let base = heading_path.join("\u{1f}");
        let n = seen.entry(base.clone()).or_insert(0);
        *n += 1;
        let mut key = if *n == 1 {
            base.clone()
        } else {
            format!("{base}\u{1f}#{n}")
        };
        // A repeat's key can equal another heading's own path (`# A`, `# A`, `## #2` gives
        // "A␟#2" twice): count on until the key is new, so keys (and ids) are unique by
        // construction. Notes without such a clash keep the keys they always had.
        while !used.insert(key.clone()) {
            *n += 1;
            key = format!("{base}\u{1f}#{n}");
        }
        let end_line = note
            .headings
            .get(i + 1)
            .map(|next| next.line - 1)
            .unwrap_or(note.line_count);
        sections.push(Section {
            key,
            heading_path,
            start_line: h.line,
            end_line: end_line.max(h.line),
        });
    }
    // A heading with nothing under it but deeper headings ("## Progress" then "### Week 5") joins
    // the first child section instead of becoming a chunk of one line. Walked from the end, so a
    // merged child can absorb its grandparent next; linear in the sections (binary search for
    // content), as a note may have 100,000 headings.
    let content = content_starts(note);
    let has_content = |section: &Section| {
        let i = content.partition_point(|&l| l <= section.start_line);
        content.get(i).is_some_and(|&l| l <= section.end_line)
    };
    let mut kept: Vec<Section> = Vec::with_capacity(sections.len());
    let mut pending = sections.into_iter().rev();
    if let Some(mut child) = pending.next() {
        for parent in pending {
            // A child by its heading path, not just by depth: after an earlier merge the next
            // section may be a deeper heading under a different parent ("# A", "# B", "## C"
            // with B empty).
            let is_child = child.heading_path.len() > parent.heading_path.len()
                && !parent.heading_path.is_empty()
                && child.heading_path.starts_with(&parent.heading_path);
            if is_child && !has_content(&parent) {
                child.start_line = parent.start_line;
            } else {
                kept.push(std::mem::replace(&mut child, parent));
            }
        }
        kept.push(child);
    }
    kept.reverse();
    kept
}

/// The first lines of the note's content blocks (not headings, not comments), ascending.
fn content_starts(note: &Note) -> Vec<usize> {
    let mut starts: Vec<usize> = note
        .blocks
        .iter()
        .filter(|b| !matches!(b.kind, BlockKind::Heading | BlockKind::Comment))
        .map(|b| b.start_line)
        .collect();
    starts.sort_unstable();
    starts.dedup();
    starts
}

/// The byte ranges of a section's units (trimmed; units with no visible text dropped).
fn section_units(
    section: &Section,
    content: &[usize],
    index: &LineIndex,
    visible: &str,
) -> Vec<Range<usize>> {
    let from = content.partition_point(|&l| l <= section.start_line);
    let to = content.partition_point(|&l| l <= section.end_line);
    let mut starts: Vec<usize> = content[from..to.max(from)].to_vec();
    // The heading line (or the preamble's first line) belongs to the section's first unit, so a
    // heading never stands alone when its section has content.
    match starts.first_mut() {
        Some(first) => *first = section.start_line,
        None => starts.push(section.start_line),
    }
    let mut units = Vec::new();
    for (i, &start) in starts.iter().enumerate() {
        let end = starts.get(i + 1).map(|s| s - 1).unwrap_or(section.end_line);
        let Some(span) = index.span(visible, start, end) else {
            continue;
        };
        if let Some(trimmed) = trim_range(visible, span) {
            units.push(trimmed);
        }
    }
    units
}

/// Shrinks a range to start at its first non-space character and end after its last one.
fn trim_range(text: &str, range: Range<usize>) -> Option<Range<usize>> {
    let slice = &text[range.clone()];
    let lead = slice.len() - slice.trim_start().len();
    let trail = slice.len() - slice.trim_end().len();
    let (start, end) = (range.start + lead, range.end - trail);
    (start < end).then_some(start..end)
}

#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Debug)]
enum Level {
    BlankLine,
    Line,
    Sentence,
    Word,
    Char,
}

impl Level {
    fn next(self) -> Option<Level> {
        match self {
            Level::BlankLine => Some(Level::Line),
            Level::Line => Some(Level::Sentence),
            Level::Sentence => Some(Level::Word),
            Level::Word => Some(Level::Char),
            Level::Char => None,
        }
    }
}

/// Pushes `range` (if it fits) or its pieces at `level` and finer, each with its token count.
fn split_to_fit(
    text: &str,
    range: Range<usize>,
    level: Level,
    max: usize,
    counter: &dyn TokenCounter,
    out: &mut Vec<(Range<usize>, usize)>,
) {
    let tokens = counter.count_tokens(&text[range.clone()]);
    if tokens <= max || range.len() <= 1 {
        out.push((range, tokens));
        return;
    }
    let cuts = cut_points(text, range.clone(), level, max);
    if cuts.len() <= 1 {
        match level.next() {
            Some(next) => split_to_fit(text, range, next, max, counter, out),
            None => out.push((range, tokens)),
        }
        return;
    }
    // Greedy packing of the segments between cut points, each segment split further if needed.
    let mut segments = Vec::new();
    for (i, &start) in cuts.iter().enumerate() {
        let end = cuts.get(i + 1).copied().unwrap_or(range.end);
        if let Some(seg) = trim_range(text, start..end) {
            segments.push(seg);
        }
    }
    let mut current: Option<(Range<usize>, usize)> = None;
    for seg in segments {
        let seg_tokens = counter.count_tokens(&text[seg.clone()]);
        if seg_tokens > max {
            if let Some(cur) = current.take() {
                out.push(cur);
            }
            match level.next() {
                Some(next) => split_to_fit(text, seg, next, max, counter, out),
                None => out.push((seg, seg_tokens)),
            }
            continue;
        }
        current = match current {
            Some((cur, cur_tokens)) if cur_tokens + seg_tokens <= max => {
                Some((cur.start..seg.end, cur_tokens + seg_tokens))
            }
            Some(cur) => {
                out.push(cur);
                Some((seg, seg_tokens))
            }
            None => Some((seg, seg_tokens)),
        };
    }
    if let Some(cur) = current {
        out.push(cur);
    }
}

/// Offsets where pieces of `range` may begin at a given level (the first is `range.start`).
fn cut_points(text: &str, range: Range<usize>, level: Level, max: usize) -> Vec<usize> {
    let slice = &text[range.clone()];
    let base = range.start;
    let mut cuts = vec![base];
    match level {
        Level::BlankLine | Level::Line => {
            let mut prev_blank = false;
            let mut offset = 0;
            for line in slice.split_inclusive('\n') {
                let blank = line.trim().is_empty();
                if offset > 0 && !blank && (level == Level::Line || prev_blank) {
                    cuts.push(base + offset);
                }
                prev_blank = blank;
                offset += line.len();
            }
        }
        Level::Sentence => {
            let mut chars = slice.char_indices().peekable();
            while let Some((i, c)) = chars.next() {
                let cjk_stop = matches!(c, '。' | '！' | '？' | '；');
                let stop = matches!(c, '.' | '!' | '?' | ';');
                let next_is_space = chars.peek().is_some_and(|(_, n)| n.is_whitespace());
                if cjk_stop || (stop && next_is_space) {
                    let at = i + c.len_utf8();
                    if at < slice.len() {
                        cuts.push(base + at);
                    }
                }
            }
        }
        Level::Word => {
            let mut prev_space = false;
            for (i, c) in slice.char_indices() {
                if !c.is_whitespace() && prev_space {
                    cuts.push(base + i);
                }
                prev_space = c.is_whitespace();
            }
        }
        Level::Char => {
            // Text without spaces (a long CJK run, a data blob): windows of `max` characters, which
            // no counter scores above one token per character.
            cuts.extend(
                slice
                    .char_indices()
                    .step_by(max.max(1))
                    .skip(1)
                    .map(|(i, _)| base + i),
            );
        }
    }
    cuts
}

/// A chunk's [`Chunk::text`] split into its context line (the note's title and heading path) and
/// its body, as an embedding model with a title in its document prompt wants them.
pub fn split_context(text: &str) -> (&str, &str) {
    text.split_once("\n\n").unwrap_or(("", text))
}

fn make_chunk(
    note: &Note,
    section: &Section,
    ordinal: usize,
    range: Range<usize>,
    index: &LineIndex,
    visible: &str,
    counter: &dyn TokenCounter,
) -> Chunk {
    let body = squeeze_blank_runs(&visible[range.clone()]);
    let mut context: Vec<&str> = vec![note.title.as_str()];
    for (i, h) in section.heading_path.iter().enumerate() {
        if i == 0 && h == &note.title {
            continue;
        }
        context.push(h);
    }
    let text = format!("{}\n\n{}", context.join(" > "), body);
    let id_input = format!("{}\u{1e}{}", section.key, ordinal);
    let id = blake3::hash(id_input.as_bytes()).to_hex()[..16].to_string();
    let content_hash = blake3::hash(text.as_bytes()).to_hex()[..32].to_string();
    Chunk {
        id,
        note_path: note.path.clone(),
        heading_path: section.heading_path.clone(),
        ordinal,
        start_line: index.line_of(range.start),
        end_line: index.line_of(range.end.saturating_sub(1).max(range.start)),
        byte_range: range,
        token_count: counter.count_tokens(&text),
        body,
        text,
        content_hash,
    }
}

/// Drops the spaces left where comments were, and collapses the blank lines that remain.
pub(crate) fn squeeze_blank_runs(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut blank_run = 0;
    for line in text.lines() {
        let line = line.trim_end();
        if line.trim().is_empty() {
            blank_run += 1;
            if blank_run > 1 {
                continue;
            }
        } else {
            blank_run = 0;
        }
        out.push_str(line);
        out.push('\n');
    }
    out.trim_end().to_string()
}
