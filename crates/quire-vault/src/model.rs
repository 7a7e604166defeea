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
    pub path: NotePath,
    /// The first H1 heading, else the file name without `.md`.
    pub title: String,
    /// Frontmatter properties as JSON values, sorted by key.
    pub properties: BTreeMap<String, serde_json::Value>,
    pub aliases: Vec<String>,
    /// Frontmatter tags first, then inline tags in order of appearance (duplicates kept, each with its line).
    pub tags: Vec<Tag>,
    /// Headings in document order (flat); see [`crate::Outline`] for the tree.
    pub headings: Vec<Heading>,
    pub links: Vec<Link>,
    pub callouts: Vec<Callout>,
    pub tasks: Vec<Task>,
    pub block_ids: Vec<BlockId>,
    /// The date of a daily note, from the daily-notes settings or a `YYYY-MM-DD` file name.
    pub daily_date: Option<NaiveDate>,
    pub warnings: Vec<ParseWarning>,
    /// The line where the body starts (1 if there is no frontmatter).
    pub body_start_line: usize,
    pub line_count: usize,
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

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Tag {
    /// The tag without `#`, case kept (Obsidian matches tags case-insensitively).
    pub name: String,
    pub line: usize,
    pub source: TagSource,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum TagSource {
    Frontmatter,
    Inline,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Heading {
    pub level: u8,
    pub text: String,
    /// The heading's first line.
    pub line: usize,
    /// The last line of its section: the line before the next heading of the same or higher level,
    /// or the last line of the note.
    pub end_line: usize,
}

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

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Link {
    pub kind: LinkKind,
    /// The link path without subpath or alias (`Folder/Note` of `[[Folder/Note#H|alias]]`),
    /// percent-decoded for Markdown links. Empty for a link into the same note (`[[#Heading]]`).
    pub target: String,
    /// `#Heading`, `#H1#H2` or `#^block` part, without the leading `#`.
    pub subpath: Option<String>,
    /// The alias or link text, if any.
    pub display: Option<String>,
    pub line: usize,
    /// A link written in a property value (`up: "[[Parent]]"`), which Obsidian also counts.
    pub in_frontmatter: bool,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Callout {
    /// The callout type, lowercased (`note`, `warning`, …).
    pub kind: String,
    pub title: Option<String>,
    /// `+` (expanded), `-` (collapsed) or none.
    pub fold: Option<char>,
    pub line: usize,
    pub end_line: usize,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Task {
    pub line: usize,
    /// The character between the brackets, `' '` when open.
    pub status: char,
    pub done: bool,
    pub text: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct BlockId {
    pub id: String,
    pub line: usize,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ParseWarning {
    pub line: usize,
    pub message: String,
}

/// What kind of top-level block a [`Block`] is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum BlockKind {
    Heading,
    Paragraph,
    /// One top-level list item with its nested items.
    ListItem,
    Code,
    Table,
    Quote,
    Callout,
    Html,
    Rule,
    Comment,
    Other,
}

/// A top-level block of the body with its line span (1-based, inclusive).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Block {
    pub kind: BlockKind,
    pub start_line: usize,
    pub end_line: usize,
}
