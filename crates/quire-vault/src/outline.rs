//! A note's headings as a tree with line ranges: the map a reader (or a model) uses to go
//! straight to the lines it needs.

use serde::Serialize;

use crate::error::VaultError;
use crate::lines::parse_line_range;
use crate::model::{Heading, Note};

/// One heading and the headings nested under it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct OutlineNode {
    /// 1 to 6 (`#` to `######`).
    pub level: u8,
    /// The heading's text, without the `#` marks.
    pub text: String,
    /// First line of the heading (1-based).
    pub line: usize,
    /// Last line of its section.
    pub end_line: usize,
    /// The headings of deeper levels directly under it, in document order.
    pub children: Vec<OutlineNode>,
}

/// A note's heading tree.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Outline {
    /// Vault-relative path of the note.
    pub path: String,
    /// The note's title.
    pub title: String,
    /// Lines in the note.
    pub line_count: usize,
    /// The top-level headings (those under no other), in document order.
    pub headings: Vec<OutlineNode>,
}

impl Outline {
    /// The outline of `note`, from its flat heading list.
    pub fn of(note: &Note) -> Outline {
        Outline {
            path: note.path.clone(),
            title: note.title.clone(),
            line_count: note.line_count,
            headings: build_tree(&note.headings),
        }
    }

    /// The heading at a `/`-separated path of heading texts (`"Plan/Week 2"`), matched
    /// case-insensitively; leading `#`s on each part are ignored.
    pub fn find(&self, heading_path: &str) -> Option<&OutlineNode> {
        let parts: Vec<String> = heading_path
            .split('/')
            .map(|p| p.trim().trim_start_matches('#').trim().to_lowercase())
            .filter(|p| !p.is_empty())
            .collect();
        let (first, rest) = parts.split_first()?;
        // The first part may match a heading at any depth; the rest descend from it.
        let mut stack: Vec<&OutlineNode> = self.headings.iter().collect();
        while let Some(node) = stack.pop() {
            if node.text.to_lowercase() == *first
                && let Some(found) = descend(node, rest)
            {
                return Some(found);
            }
            stack.extend(node.children.iter().rev());
        }
        None
    }
}

/// The lines a reader asked for: `lines` (`A-B`, see [`crate::lines::parse_line_range`]), the
/// section under `heading` (a path as [`Outline::find`] takes it), or the whole note.
pub fn select_lines(
    note: &Note,
    lines: Option<&str>,
    heading: Option<&str>,
) -> Result<(usize, usize), VaultError> {
    match (lines, heading) {
        (Some(spec), _) => parse_line_range(spec, note.line_count),
        (None, Some(h)) => {
            let outline = Outline::of(note);
            let node = outline.find(h).ok_or_else(|| {
                VaultError::BadRequest(format!("no heading `{h}` in {}", note.path))
            })?;
            Ok((node.line, node.end_line))
        }
        (None, None) => Ok((1, note.line_count)),
    }
}

fn descend<'a>(node: &'a OutlineNode, rest: &[String]) -> Option<&'a OutlineNode> {
    match rest.split_first() {
        None => Some(node),
        Some((next, tail)) => node
            .children
            .iter()
            .filter(|c| c.text.to_lowercase() == *next)
            .find_map(|c| descend(c, tail)),
    }
}

fn build_tree(headings: &[Heading]) -> Vec<OutlineNode> {
    fn take(headings: &[Heading], i: &mut usize, parent_level: u8) -> Vec<OutlineNode> {
        let mut nodes = Vec::new();
        while *i < headings.len() && headings[*i].level > parent_level {
            let h = &headings[*i];
            *i += 1;
            let children = take(headings, i, h.level);
            nodes.push(OutlineNode {
                level: h.level,
                text: h.text.clone(),
                line: h.line,
                end_line: h.end_line,
                children,
            });
        }
        nodes
    }
    let mut i = 0;
    take(headings, &mut i, 0)
}
