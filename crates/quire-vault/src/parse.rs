//! Obsidian-flavoured Markdown → [`Note`], with exact line numbers.
//!
//! comrak does the CommonMark/GFM block and inline parsing (with Obsidian wikilinks, callouts and
//! `%%comments%%`); we read its syntax tree with source positions. Frontmatter is found and blanked
//! here (spaces, line breaks kept) so that every position comrak reports is a position in the file.
//! Tags and block ids are scanned from text nodes only, so code spans, code blocks, link targets and
//! comments never yield them. This module does no I/O.

use comrak::nodes::{AstNode, CalloutFold, NodeValue};
use comrak::{Arena, Options};
use regex::Regex;
use sha2::{Digest, Sha256};
use std::sync::LazyLock;

use crate::daily::DailyNotes;
use crate::frontmatter::{find_frontmatter, parse_properties};
use crate::lines::LineIndex;
use crate::model::*;

/// Settings that change how a note is read.
#[derive(Debug, Clone, Default)]
pub struct ParseOptions {
    /// Which notes are daily notes, and how their file names give their dates.
    pub daily_notes: DailyNotes,
}

static TAG: LazyLock<Regex> = LazyLock::new(|| {
    // Obsidian: `#` at the start of the text or after white space (its own pattern is
    // `(^|\s)#…`, obsidianmd/obsidian-help#816), so never after `[`, `(`, `,` or a letter; then
    // letters, digits, `_`, `-`, `/` (any script); a tag needs one character that is not a digit.
    // `^` is the start of a text node: `opens_tag` decides what came before it.
    Regex::new(r"(?:^|\s)#([\p{L}\p{M}\p{N}_/\-]+)").expect("static regex")
});
static BLOCK_ID: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?:^|\s)\^([A-Za-z0-9][A-Za-z0-9-]*)\s*$").expect("static regex")
});
static WIKILINK: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"(!?)\[\[([^\[\]\n]+?)\]\]").expect("static regex"));
/// Stands in, in the text comrak reads, for each `|` of a wikilink after its first (see
/// [`mask_extra_pipes`]); one byte, like the `|`, so every position stays a position in the file.
const PIPE_STAND_IN: char = '\u{1f}';
static URL_SCHEME: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^[A-Za-z][A-Za-z0-9+.\-]*:").expect("static regex"));

/// The comrak settings quire parses notes with (CommonMark + GFM + Obsidian extensions).
pub fn markdown_options() -> Options<'static> {
    let mut o = Options::default();
    o.extension.table = true;
    o.extension.tasklist = true;
    o.extension.strikethrough = true;
    o.extension.footnotes = true;
    o.extension.highlight = true;
    o.extension.math_dollars = true;
    o.extension.wikilinks_title_after_pipe = true;
    o.extension.ofm_callouts = true;
    o.extension.ofm_comments = true;
    o.parse.relaxed_tasklist_matching = true;
    o
}

/// Parses one note. `path` is vault-relative with `/` separators; `text` is the whole file.
/// Never fails: problems become [`ParseWarning`]s.
pub fn parse_note(path: &str, text: &str, options: &ParseOptions) -> Note {
    let sha256 = hex(&Sha256::digest(text.as_bytes()));
    let source = text.strip_prefix('\u{feff}').unwrap_or(text).to_string();
    let index = LineIndex::new(&source);
    let mut warnings = Vec::new();

    // Frontmatter: parse it, then blank it so comrak sees blank lines at the same offsets.
    let mut masked = source.clone();
    let mut body_start_line = 1;
    let mut properties = Default::default();
    let mut frontmatter_links = Vec::new();
    if let Some(span) = find_frontmatter(&source) {
        let props = parse_properties(&source[span.yaml.clone()], 2);
        if let Some((line, message)) = &props.error {
            warnings.push(ParseWarning {
                line: *line,
                message: message.clone(),
            });
        }
        if props.error.is_none() {
            frontmatter_links = property_links(&source, span.yaml.clone(), &index);
        }
        properties = props;
        body_start_line = span.end_line + 1;
        blank(&mut masked, 0..span.body_start);
    }

    mask_extra_pipes(&mut masked);
    let arena = Arena::new();
    let root = comrak::parse_document(&arena, &masked, &markdown_options());
    let mut reader = TreeReader {
        index: &index,
        note: NoteParts::default(),
    };
    reader.read_blocks(root);
    reader.read_inlines(root);
    let mut parts = reader.note;
    frontmatter_links.append(&mut parts.links);
    parts.links = frontmatter_links;

    for (line, message) in parts.warnings.drain(..) {
        warnings.push(ParseWarning { line, message });
    }
    let line_count = index.line_count();
    close_sections(&mut parts.headings, line_count);

    let stem = {
        let name = path.rsplit('/').next().unwrap_or(path);
        name.strip_suffix(".md").unwrap_or(name).to_string()
    };
    // A template's `# {{title}}` or `# <% tp.file.title %>` is not a title: the file name is.
    let is_template = |text: &str| text.starts_with("{{") || text.starts_with("<%");
    let title = parts
        .headings
        .iter()
        .find(|h| h.level == 1 && !h.text.is_empty() && !is_template(h.text.trim_start()))
        .map(|h| h.text.clone())
        .unwrap_or(stem);

    let mut tags: Vec<Tag> = properties
        .tags
        .iter()
        .map(|name| Tag {
            name: name.clone(),
            line: 1,
            source: TagSource::Frontmatter,
        })
        .collect();
    tags.extend(parts.tags);

    // Words of the visible body: the text between comments.
    let mut word_count = 0;
    let mut at = 0;
    for range in &parts.comments {
        word_count += count_words(masked.get(at..range.start).unwrap_or(""));
        at = range.end;
    }
    word_count += count_words(masked.get(at..).unwrap_or(""));

    warnings.sort_by_key(|w| w.line);
    Note {
        path: path.to_string(),
        title,
        properties: properties.values,
        aliases: properties.aliases,
        tags,
        headings: parts.headings,
        links: parts.links,
        callouts: parts.callouts,
        tasks: parts.tasks,
        block_ids: parts.block_ids,
        daily_date: options.daily_notes.date_of(path),
        warnings,
        body_start_line,
        line_count,
        word_count,
        sha256,
        blocks: parts.blocks,
        comments: parts.comments,
        source,
    }
}

/// Wikilinks inside property values, e.g. `categories: ["[[Books]]"]`, with their lines.
fn property_links(source: &str, yaml: std::ops::Range<usize>, index: &LineIndex) -> Vec<Link> {
    WIKILINK
        .captures_iter(&source[yaml.clone()])
        .filter_map(|cap| {
            let whole = cap.get(0)?;
            let inner = &cap[2];
            let (path, display) = match inner.split_once('|') {
                Some((p, d)) => (p, Some(d.trim().to_string())),
                None => (inner, None),
            };
            let (target, subpath) = split_subpath(path);
            Some(Link {
                kind: if cap[1].is_empty() {
                    LinkKind::Wiki
                } else {
                    LinkKind::Embed
                },
                target,
                subpath,
                display,
                line: index.line_of(yaml.start + whole.start()),
                in_frontmatter: true,
            })
        })
        .collect()
}

/// Replaces every byte of `range` except line breaks with a space (byte offsets are kept).
fn blank(text: &mut String, range: std::ops::Range<usize>) {
    let start = range.start.min(text.len());
    let end = range.end.min(text.len());
    if !text.is_char_boundary(start) || !text.is_char_boundary(end) {
        return;
    }
    let replaced: String = text[start..end]
        .chars()
        .flat_map(|c| {
            let keep = c == '\n' || c == '\r';
            let n = if keep { 1 } else { c.len_utf8() };
            std::iter::repeat_n(if keep { c } else { ' ' }, n)
        })
        .collect();
    text.replace_range(start..end, &replaced);
}

/// Words as Obsidian counts them: runs of non-space characters, and each CJK character alone.
pub fn count_words(text: &str) -> usize {
    let bytes = text.as_bytes();
    let mut words = 0;
    let mut in_word = false;
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        if b < 0x80 {
            // ASCII, read byte by byte (most notes are mostly ASCII).
            if b.is_ascii_alphanumeric() {
                words += usize::from(!in_word);
                in_word = true;
            } else {
                // An apostrophe or hyphen inside a word does not end it.
                in_word = in_word && (b == b'\'' || b == b'-');
            }
            i += 1;
            continue;
        }
        let c = text[i..].chars().next().unwrap_or(' ');
        i += c.len_utf8();
        if is_cjk(c) {
            words += 1;
            in_word = false;
        } else if c.is_alphanumeric() {
            words += usize::from(!in_word);
            in_word = true;
        } else {
            in_word = in_word && c == '’';
        }
    }
    words
}

/// Characters of scripts written without spaces between words.
pub fn is_cjk(c: char) -> bool {
    matches!(c as u32,
        0x3040..=0x30FF | 0x3400..=0x4DBF | 0x4E00..=0x9FFF | 0xF900..=0xFAFF | 0xAC00..=0xD7AF
        | 0x0E00..=0x0E7F | 0x20000..=0x2FFFF)
}

fn close_sections(headings: &mut [Heading], line_count: usize) {
    for i in 0..headings.len() {
        let level = headings[i].level;
        let end = headings[i + 1..]
            .iter()
            .find(|h| h.level <= level)
            .map(|h| h.line.saturating_sub(1))
            .unwrap_or(line_count);
        headings[i].end_line = end.max(headings[i].line);
    }
}

pub(crate) fn hex(bytes: &[u8]) -> String {
    use std::fmt::Write;
    let mut s = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        let _ = write!(s, "{b:02x}");
    }
    s
}

#[derive(Default)]
struct NoteParts {
    headings: Vec<Heading>,
    blocks: Vec<Block>,
    links: Vec<Link>,
    tags: Vec<Tag>,
    callouts: Vec<Callout>,
    tasks: Vec<Task>,
    block_ids: Vec<BlockId>,
    comments: Vec<std::ops::Range<usize>>,
    warnings: Vec<(usize, String)>,
}

struct TreeReader<'i> {
    index: &'i LineIndex,
    note: NoteParts,
}

impl TreeReader<'_> {
    /// Top-level blocks: headings and the units the chunker works with.
    fn read_blocks<'a>(&mut self, root: &'a AstNode<'a>) {
        for node in root.children() {
            let data = node.data();
            let (start, end) = (
                data.sourcepos.start.line,
                data.sourcepos.end.line.max(data.sourcepos.start.line),
            );
            let kind = match &data.value {
                NodeValue::Heading(h) => {
                    self.note.headings.push(Heading {
                        level: h.level,
                        text: inline_text(node).trim().to_string(),
                        line: start,
                        end_line: start,
                    });
                    BlockKind::Heading
                }
                NodeValue::Paragraph => BlockKind::Paragraph,
                NodeValue::List(_) => {
                    for item in node.children() {
                        let pos = item.data().sourcepos;
                        self.note.blocks.push(Block {
                            kind: BlockKind::ListItem,
                            start_line: pos.start.line,
                            end_line: pos.end.line.max(pos.start.line),
                        });
                    }
                    continue;
                }
                NodeValue::CodeBlock(code) => {
                    if code.fenced && !code.closed {
                        self.note.warnings.push((
                            start,
                            format!("unterminated code fence opened at line {start} runs to the end of the note"),
                        ));
                    }
                    BlockKind::Code
                }
                NodeValue::Table(_) => BlockKind::Table,
                NodeValue::BlockQuote | NodeValue::MultilineBlockQuote(_) => BlockKind::Quote,
                NodeValue::Callout(_) => BlockKind::Callout,
                NodeValue::HtmlBlock(_) => BlockKind::Html,
                NodeValue::ThematicBreak => BlockKind::Rule,
                NodeValue::MultilineComment(_) => BlockKind::Comment,
                NodeValue::FrontMatter(_) => continue,
                _ => BlockKind::Other,
            };
            self.note.blocks.push(Block {
                kind,
                start_line: start,
                end_line: end,
            });
        }
    }

    /// Links, tags, tasks, callouts, block ids and comments anywhere in the tree.
    fn read_inlines<'a>(&mut self, root: &'a AstNode<'a>) {
        for node in root.descendants() {
            let data = node.data();
            let pos = data.sourcepos;
            let line = pos.start.line;
            match &data.value {
                NodeValue::WikiLink(w) => {
                    // In a table cell the alias's `|` is written `\|`, and comrak hands the
                    // whole `target|alias` over as the URL.
                    let (url, alias) = match w.url.split_once('|') {
                        Some((url, alias)) => (url, Some(alias.trim().to_string())),
                        None => (w.url.as_str(), None),
                    };
                    let (target, subpath) = split_subpath(url);
                    let text = inline_text(node);
                    let display = alias
                        .or_else(|| (!text.is_empty() && text != w.url).then_some(text))
                        .filter(|d| !d.is_empty());
                    self.note.links.push(Link {
                        kind: if w.embed {
                            LinkKind::Embed
                        } else {
                            LinkKind::Wiki
                        },
                        target,
                        subpath,
                        display,
                        line,
                        in_frontmatter: false,
                    });
                }
                NodeValue::Link(l) | NodeValue::Image(l) => {
                    if URL_SCHEME.is_match(&l.url) || l.url.is_empty() {
                        continue;
                    }
                    let decoded = percent_encoding::percent_decode_str(&l.url)
                        .decode_utf8_lossy()
                        .to_string();
                    let (target, subpath) = split_subpath(&decoded);
                    let text = inline_text(node);
                    let is_image = matches!(data.value, NodeValue::Image(_));
                    self.note.links.push(Link {
                        kind: if is_image {
                            LinkKind::MarkdownEmbed
                        } else {
                            LinkKind::Markdown
                        },
                        target,
                        subpath,
                        display: (!text.is_empty()).then_some(text),
                        line,
                        in_frontmatter: false,
                    });
                }
                NodeValue::Text(text) => {
                    let maybe_tag = text.contains('#');
                    let maybe_id = text.contains('^');
                    if !(maybe_tag || maybe_id) || has_ancestor_link(node) {
                        continue;
                    }
                    // `[[…]]` that comrak left as text (a `[` inside, escaped brackets) holds
                    // no tag either.
                    let in_brackets: Vec<std::ops::Range<usize>> = if maybe_tag {
                        WIKILINK.find_iter(text).map(|m| m.range()).collect()
                    } else {
                        Vec::new()
                    };
                    for cap in TAG.captures_iter(if maybe_tag { text } else { "" }) {
                        let Some(whole) = cap.get(0) else { continue };
                        let hash = whole.end() - cap[1].len() - 1;
                        if (hash == 0 && !opens_tag(node))
                            || in_brackets.iter().any(|r| r.contains(&hash))
                        {
                            continue;
                        }
                        let name = cap[1].trim_end_matches('/');
                        if name.chars().any(|c| !c.is_ascii_digit()) && !name.is_empty() {
                            self.note.tags.push(Tag {
                                name: name.to_string(),
                                line,
                                source: TagSource::Inline,
                            });
                        }
                    }
                    let ends_line = node.next_sibling().is_none_or(|n| {
                        matches!(n.data().value, NodeValue::SoftBreak | NodeValue::LineBreak)
                    });
                    if maybe_id
                        && ends_line
                        && let Some(cap) = BLOCK_ID.captures(text)
                    {
                        self.note.block_ids.push(BlockId {
                            id: cap[1].to_string(),
                            line,
                        });
                    }
                }
                NodeValue::TaskItem(task) => {
                    let status = task.symbol.unwrap_or(' ');
                    let text = node
                        .children()
                        .find(|c| matches!(c.data().value, NodeValue::Paragraph))
                        .map(inline_text)
                        .unwrap_or_default();
                    self.note.tasks.push(Task {
                        line,
                        status,
                        done: matches!(status, 'x' | 'X'),
                        text: text.trim().to_string(),
                    });
                }
                NodeValue::Callout(c) => {
                    let title = node
                        .children()
                        .find(|ch| matches!(ch.data().value, NodeValue::CalloutTitle))
                        .map(|t| inline_text(t).trim().to_string())
                        .filter(|t| !t.is_empty());
                    self.note.callouts.push(Callout {
                        kind: c.callout_type.to_lowercase(),
                        title,
                        fold: match c.fold {
                            CalloutFold::None => None,
                            CalloutFold::Expanded => Some('+'),
                            CalloutFold::Collapsed => Some('-'),
                        },
                        line,
                        end_line: pos.end.line.max(line),
                    });
                }
                NodeValue::CommentInline(_) | NodeValue::MultilineComment(_) => {
                    let start = self.index.offset(pos.start.line, pos.start.column);
                    let end = self.index.offset(pos.end.line, pos.end.column + 1);
                    if start < end {
                        self.note.comments.push(start..end);
                    }
                }
                _ => {}
            }
        }
        self.note.comments.sort_by_key(|r| r.start);
    }
}

/// Whether a `#` at the very start of this text node may open a tag: the node starts its block
/// or line, or follows white space or an inline HTML tag (`<span>#tag</span>`). Text after
/// other markup (`[`, a code span, a link, `\[`) does not: Obsidian wants `^` or white space.
/// An emphasis that starts with the text (`**#tag**`) is judged by what comes before it.
fn opens_tag<'a>(node: &'a AstNode<'a>) -> bool {
    let Some(before) = node.previous_sibling() else {
        return match node.parent() {
            Some(parent) => match parent.data().value {
                NodeValue::Emph
                | NodeValue::Strong
                | NodeValue::Strikethrough
                | NodeValue::Highlight
                | NodeValue::Underline => opens_tag(parent),
                _ => true,
            },
            None => true,
        };
    };
    match &before.data().value {
        NodeValue::SoftBreak | NodeValue::LineBreak | NodeValue::HtmlInline(_) => true,
        NodeValue::Text(t) => t.ends_with(char::is_whitespace),
        _ => false,
    }
}

/// Lets comrak read a wikilink with more than one `|`. Obsidian splits `[[target|alias]]` at the
/// first `|` and keeps the rest as the alias or an embed's size and attributes
/// (`![[a.png|center|400]]`, `[[#a#b||alias]]`); comrak's wikilink scanner gives up at a second
/// `|`. So every `|` after the first becomes [`PIPE_STAND_IN`] here, and [`inline_text`] turns it
/// back. Lines with a `|` outside `[[…]]` may be table rows, where a `|` splits cells (Obsidian
/// wants `\|` there): those are left alone.
fn mask_extra_pipes(text: &mut String) {
    if text.contains(PIPE_STAND_IN) || !text.contains("[[") {
        return;
    }
    let mut positions = Vec::new();
    let mut line_start = 0;
    for line in text.split_inclusive('\n') {
        let links: Vec<_> = WIKILINK.find_iter(line).collect();
        let outside = links.iter().fold(line.matches('|').count(), |n, m| {
            n - m.as_str().matches('|').count()
        });
        if outside == 0 {
            for m in &links {
                let pipes = m.as_str().match_indices('|').skip(1);
                positions.extend(pipes.map(|(i, _)| line_start + m.start() + i));
            }
        }
        line_start += line.len();
    }
    if positions.is_empty() {
        return;
    }
    let mut out = String::with_capacity(text.len());
    let mut copied = 0;
    for at in positions {
        out.push_str(&text[copied..at]);
        out.push(PIPE_STAND_IN);
        copied = at + 1;
    }
    out.push_str(&text[copied..]);
    *text = out;
}

fn has_ancestor_link<'a>(node: &'a AstNode<'a>) -> bool {
    node.ancestors().skip(1).any(|a| {
        matches!(
            a.data().value,
            NodeValue::Link(_) | NodeValue::Image(_) | NodeValue::WikiLink(_)
        )
    })
}

/// `Note#Heading^x` → (`Note`, `Heading^x`); `#Heading` → (``, `Heading`).
fn split_subpath(url: &str) -> (String, Option<String>) {
    match url.split_once('#') {
        Some((target, sub)) => (
            target.trim().to_string(),
            Some(sub.trim().to_string()).filter(|s| !s.is_empty()),
        ),
        None => (url.trim().to_string(), None),
    }
}

/// The plain text of a node's inlines (code spans included, markup dropped). An embed inside
/// shows a file, not words: its `|…` (a size, attributes) is left out.
fn inline_text<'a>(node: &'a AstNode<'a>) -> String {
    fn push_text<'a>(node: &'a AstNode<'a>, out: &mut String) {
        for d in node.children() {
            match &d.data().value {
                NodeValue::Text(t) => out.push_str(t),
                NodeValue::Code(c) => out.push_str(&c.literal),
                NodeValue::SoftBreak | NodeValue::LineBreak => out.push(' '),
                NodeValue::Math(m) => out.push_str(&m.literal),
                NodeValue::WikiLink(w) if w.embed => {}
                _ => push_text(d, out),
            }
        }
    }
    let mut out = String::new();
    push_text(node, &mut out);
    if out.contains(PIPE_STAND_IN) {
        out = out.replace(PIPE_STAND_IN, "|");
    }
    out
}
