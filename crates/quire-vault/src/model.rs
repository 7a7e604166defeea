//! The data a parsed note carries. Plain values: no I/O, no parsing here.

use std::collections::BTreeMap;

use chrono::NaiveDate;
use serde::Serialize;

/// A vault-relative path with `/` separators, e.g. `Projects/Home lab.md`.
pub type NotePath = String;

/// One parsed Markdown note.
///
/// Lines are 1-based and inclusive; byte ranges are half-open offsets into [`Note::source`].
#[derive(Debug, Clone, Serialize)]
pub struct Note {
    /// Vault-relative path, `/`-separated.
    pub path: NotePath,
    /// The first H1 heading, else the file name without `.md`.
    pub title: String,
    /// Frontmatter properties as JSON values, sorted by key.
    pub properties: BTreeMap<String, serde_json::Value>,
    /// The values of the `aliases` (or `alias`) property, in order: other names links may use.
    pub aliases: Vec<String>,
    /// Frontmatter tags first, then inline tags in order of appearance (duplicates kept, each with its line).
    pub tags: Vec<Tag>,
    /// Headings in document order (flat); see [`crate::Outline`] for the tree.
    pub headings: Vec<Heading>,
    /// Links in property values first, then links in the body in order of appearance.
    pub links: Vec<Link>,
    /// Callouts (`> [!note]`), in document order.
    pub callouts: Vec<Callout>,
    /// Task list items (`- [ ]`, `- [x]`), in document order.
    pub tasks: Vec<Task>,
    /// Block ids (`^id` ending a line of text), in document order.
    pub block_ids: Vec<BlockId>,
    /// The date of a daily note, from the daily-notes settings or a `YYYY-MM-DD` file name.
    pub daily_date: Option<NaiveDate>,
    /// What could not be read as intended (YAML that does not parse, an unterminated code fence,
    /// …), sorted by line.
    pub warnings: Vec<ParseWarning>,
    /// The line where the body starts (1 if there is no frontmatter).
    pub body_start_line: usize,
    /// Lines in the note; a final line break opens no new line, and an empty note has one line.
    pub line_count: usize,
    /// Words of the body outside Obsidian comments (frontmatter excluded).
    pub word_count: usize,
    /// Lowercase hex sha256 of the file's bytes.
    pub sha256: String,
    /// Top-level blocks (document children) used by the chunker.
    #[serde(skip)]
    pub blocks: Vec<Block>,
    /// Byte ranges of Obsidian comments (`%%…%%`), hidden from chunks.
    #[serde(skip)]
    pub comments: Vec<std::ops::Range<usize>>,
    /// The note's text (after a UTF-8 byte-order mark, if any, was removed).
    #[serde(skip)]
    pub source: String,
}

impl Note {
    /// All distinct tag names (without `#`), sorted.
    pub fn tag_names(&self) -> Vec<String> {
        let mut names: Vec<String> = self.tags.iter().map(|t| t.name.clone()).collect();
        names.sort();
        names.dedup();
        names
    }

    /// The note's file name without the `.md` extension.
    pub fn stem(&self) -> &str {
        let name = self.path.rsplit('/').next().unwrap_or(&self.path);
        name.strip_suffix(".md").unwrap_or(name)
    }

    /// The text of lines `start..=end` (1-based, inclusive), exactly as in the file.
    pub fn lines(&self, start: usize, end: usize) -> Option<&str> {
        let index = crate::lines::LineIndex::new(&self.source);
        let range = index.span(&self.source, start, end)?;
        Some(&self.source[range])
    }
}

/// A tag of a note: `#tag` in the body or an entry of the `tags` (or `tag`) property.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Tag {
    /// The tag without `#`, case kept (Obsidian matches tags case-insensitively).
    pub name: String,
    /// The line it is on (1 for frontmatter tags).
    pub line: usize,
    /// Where it was written.
    pub source: TagSource,
}

/// Where a [`Tag`] was written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum TagSource {
    /// In the `tags` (or `tag`) property.
    Frontmatter,
    /// As `#tag` in the body.
    Inline,
}

/// A heading of a note, ATX (`## Text`) or setext.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Heading {
    /// 1 to 6 (`#` to `######`).
    pub level: u8,
    /// The heading's text, without the `#` marks.
    pub text: String,
    /// The heading's first line.
    pub line: usize,
    /// The last line of its section: the line before the next heading of the same or higher level,
    /// or the last line of the note.
    pub end_line: usize,
}

/// How a [`Link`] is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum LinkKind {
    /// `[[target]]`
    Wiki,
    /// `![[target]]`
    Embed,
    /// `[text](target)`
    Markdown,
    /// `![alt](target)`
    MarkdownEmbed,
}

/// A link from a note to a note, a heading, a block or a file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Link {
    /// How it is written.
    pub kind: LinkKind,
    /// The link path without subpath or alias (`Folder/Note` of `[[Folder/Note#H|alias]]`),
    /// percent-decoded for Markdown links. Empty for a link into the same note (`[[#Heading]]`).
    pub target: String,
    /// `#Heading`, `#H1#H2` or `#^block` part, without the leading `#`.
    pub subpath: Option<String>,
    /// The alias or link text, if any.
    pub display: Option<String>,
    /// The line it is on.
    pub line: usize,
    /// A link written in a property value (`up: "[[Parent]]"`), which Obsidian also counts.
    pub in_frontmatter: bool,
}

/// An Obsidian callout: a block quote opening with `[!type]`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Callout {
    /// The callout type, lowercased (`note`, `warning`, …).
    pub kind: String,
    /// The title after `[!type]`, if written.
    pub title: Option<String>,
    /// `+` (expanded), `-` (collapsed) or none.
    pub fold: Option<char>,
    /// Its first line.
    pub line: usize,
    /// Its last line, inclusive.
    pub end_line: usize,
}

/// A task list item.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Task {
    /// The line it is on.
    pub line: usize,
    /// The character between the brackets, `' '` when open.
    pub status: char,
    /// Whether `status` is `x` or `X`; any other character counts as open.
    pub done: bool,
    /// The item's text, without the checkbox.
    pub text: String,
}

/// A block id (`^id` ending a line of text), the target of `[[Note#^id]]`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct BlockId {
    /// The id without `^`.
    pub id: String,
    /// The line it is on.
    pub line: usize,
}

/// Something in a note that could not be read as intended; the note is parsed anyway.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ParseWarning {
    /// Where, 1-based.
    pub line: usize,
    /// What was wrong, for people.
    pub message: String,
}

/// What kind of top-level block a [`Block`] is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum BlockKind {
    /// A heading line (ATX or setext).
    Heading,
    /// A paragraph: consecutive lines of text.
    Paragraph,
    /// One top-level list item with its nested items.
    ListItem,
    /// A fenced or indented code block.
    Code,
    /// A pipe table.
    Table,
    /// A block quote that is not a callout.
    Quote,
    /// A callout (`> [!type]`).
    Callout,
    /// A raw HTML block.
    Html,
    /// A thematic break (`---`).
    Rule,
    /// An Obsidian comment (`%%…%%`) standing as a block.
    Comment,
    /// Anything else (a footnote definition, a math block, …).
    Other,
}

/// A top-level block of the body with its line span (1-based, inclusive).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Block {
    /// What kind of block it is.
    pub kind: BlockKind,
    /// Its first line.
    pub start_line: usize,
    /// Its last line, inclusive.
    pub end_line: usize,
}
