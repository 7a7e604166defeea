//! The vault as a JSON Canvas 1.0 map (<https://jsoncanvas.org/spec/1.0/>), the format of
//! Obsidian's `.canvas` files: a file node per note, a group per folder (or per component of the
//! link graph) around its notes, an edge per link between two notes.
//!
//! The layout is a grid, deterministic and without overlaps: inside a group its notes fill rows
//! of `⌈√n⌉` cells; groups are placed left to right on shelves no wider than about 1.5 × the
//! side of a square holding them all, each shelf below the tallest group of the one above. Nodes
//! are listed groups first, so that (the spec orders nodes by z-index, ascending) every group is
//! drawn under its notes. Ids are short and unique by construction: `g…` groups, `n…` notes,
//! `e…` edges.

use std::collections::BTreeMap;
use std::str::FromStr;

use quire_vault::Vault;
use serde::Serialize;

use crate::folder_of;
use crate::graph::component_of;

/// Width of a note's node.
pub const NODE_WIDTH: i64 = 400;
/// Height of a note's node (its title and a line or two of text).
pub const NODE_HEIGHT: i64 = 120;
/// Space between two notes of a group.
const NODE_GAP: i64 = 40;
/// Space between a group's edge and its notes.
const GROUP_PADDING: i64 = 40;
/// Space between two groups (room for the label Obsidian draws above a group).
const GROUP_GAP: i64 = 160;
/// The color of an orphan's node (the spec's preset 1, red).
const ORPHAN_COLOR: &str = "1";

/// How notes are gathered into groups.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Grouping {
    /// One group per folder (the notes directly in it).
    #[default]
    Folder,
    /// One group per connected component of the link graph; notes without links share one.
    Component,
}

/// A grouping name that is neither `folder` nor `component`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown grouping `{0}`: use `folder` or `component`")]
pub struct UnknownGrouping(pub String);

impl FromStr for Grouping {
    type Err = UnknownGrouping;

    fn from_str(name: &str) -> Result<Self, Self::Err> {
        match name.trim().to_lowercase().as_str() {
            "folder" | "folders" => Ok(Grouping::Folder),
            "component" | "components" => Ok(Grouping::Component),
            _ => Err(UnknownGrouping(name.to_string())),
        }
    }
}

/// A JSON Canvas 1.0 document.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Canvas {
    /// Groups first, then notes (ascending z-index).
    pub nodes: Vec<Node>,
    /// One per link from a note to another note (distinct pairs, self links left out).
    pub edges: Vec<Edge>,
}

/// A node of the canvas.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "type", rename_all = "lowercase")]
pub enum Node {
    /// A note of the vault.
    File(FileNode),
    /// A box around notes.
    Group(GroupNode),
}

impl Node {
    /// The node's id.
    pub fn id(&self) -> &str {
        match self {
            Node::File(n) => &n.id,
            Node::Group(n) => &n.id,
        }
    }
}

/// A node that shows a file of the vault (`"type": "file"`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FileNode {
    /// Unique among nodes and edges.
    pub id: String,
    /// Left edge, in pixels.
    pub x: i64,
    /// Top edge, in pixels.
    pub y: i64,
    /// In pixels.
    pub width: i64,
    /// In pixels.
    pub height: i64,
    /// The vault-relative path of the note.
    pub file: String,
    /// A preset color (`"1"` to `"6"`): orphans are red.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub color: Option<String>,
}

/// A group around notes (`"type": "group"`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct GroupNode {
    /// Unique among nodes and edges.
    pub id: String,
    /// Left edge, in pixels.
    pub x: i64,
    /// Top edge, in pixels.
    pub y: i64,
    /// In pixels.
    pub width: i64,
    /// In pixels.
    pub height: i64,
    /// The folder, or what the component is about.
    pub label: String,
}

/// A link from one note's node to another's.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Edge {
    /// Unique among nodes and edges.
    pub id: String,
    /// The linking note's node.
    pub from_node: String,
    /// The linked note's node.
    pub to_node: String,
}

/// Groups of notes (indexes into the vault's notes, ascending) with their labels.
fn groups(vault: &Vault, grouping: Grouping) -> Vec<(String, Vec<usize>)> {
    match grouping {
        Grouping::Folder => {
            let mut by_folder: BTreeMap<&str, Vec<usize>> = BTreeMap::new();
            for (i, note) in vault.notes.iter().enumerate() {
                by_folder.entry(folder_of(&note.path)).or_default().push(i);
            }
            by_folder
                .into_iter()
                .map(|(folder, notes)| {
                    let label = if folder.is_empty() {
                        "(vault root)".to_string()
                    } else {
                        folder.to_string()
                    };
                    (label, notes)
                })
                .collect()
        }
        Grouping::Component => {
            let (_, components) = component_of(vault);
            let (linked, alone): (Vec<_>, Vec<_>) =
                components.into_iter().partition(|c| c.len() > 1);
            let mut groups: Vec<(String, Vec<usize>)> = linked
                .into_iter()
                .map(|notes| {
                    // Named after its most linked-to note (the first by path on a tie).
                    let hub = notes
                        .iter()
                        .copied()
                        .max_by_key(|&i| (vault.graph.backlinks[i].len(), std::cmp::Reverse(i)))
                        .unwrap_or(notes[0]);
                    let label =
                        format!("Around {} ({} notes)", vault.notes[hub].title, notes.len());
                    (label, notes)
                })
                .collect();
            let alone: Vec<usize> = alone.into_iter().flatten().collect();
            if !alone.is_empty() {
                groups.push((format!("Notes without links ({})", alone.len()), alone));
            }
            groups
        }
    }
}

/// Columns of a group of `n` notes: `⌈√n⌉`.
fn columns(n: usize) -> i64 {
    let mut c = 1;
    while c * c < n {
        c += 1;
    }
    c as i64
}

/// The size of a group of `n` notes.
fn group_size(n: usize) -> (i64, i64) {
    let cols = columns(n);
    let rows = (n as i64 + cols - 1) / cols;
    (
        2 * GROUP_PADDING + cols * NODE_WIDTH + (cols - 1) * NODE_GAP,
        2 * GROUP_PADDING + rows * NODE_HEIGHT + (rows - 1) * NODE_GAP,
    )
}

/// The map of `vault`: its notes gathered by `grouping`, its links as edges.
pub fn canvas(vault: &Vault, grouping: Grouping) -> Canvas {
    let groups = groups(vault, grouping);
    let sizes: Vec<(i64, i64)> = groups
        .iter()
        .map(|(_, notes)| group_size(notes.len()))
        .collect();
    let area: i64 = sizes
        .iter()
        .map(|(w, h)| (w + GROUP_GAP) * (h + GROUP_GAP))
        .sum();
    let widest = sizes.iter().map(|(w, _)| *w).max().unwrap_or(0);
    let mut side = 0i64;
    while side * side < area {
        side += 100;
    }
    let shelf_width = widest.max(side * 3 / 2);

    let mut nodes = Vec::with_capacity(groups.len() + vault.notes.len());
    let mut files = Vec::with_capacity(vault.notes.len());
    let mut node_of = vec![String::new(); vault.notes.len()];
    let orphan: Vec<bool> = (0..vault.notes.len())
        .map(|i| vault.graph.outgoing[i].is_empty() && vault.graph.backlinks[i].is_empty())
        .collect();
    let (mut x, mut y, mut shelf_height) = (0i64, 0i64, 0i64);
    for (g, ((label, notes), (width, height))) in groups.iter().zip(&sizes).enumerate() {
        if x > 0 && x + width > shelf_width {
            x = 0;
            y += shelf_height + GROUP_GAP;
            shelf_height = 0;
        }
        nodes.push(Node::Group(GroupNode {
            id: format!("g{g}"),
            x,
            y,
            width: *width,
            height: *height,
            label: label.clone(),
        }));
        let cols = columns(notes.len());
        for (k, &i) in notes.iter().enumerate() {
            let (row, col) = (k as i64 / cols, k as i64 % cols);
            let id = format!("n{i}");
            node_of[i] = id.clone();
            files.push(Node::File(FileNode {
                id,
                x: x + GROUP_PADDING + col * (NODE_WIDTH + NODE_GAP),
                y: y + GROUP_PADDING + row * (NODE_HEIGHT + NODE_GAP),
                width: NODE_WIDTH,
                height: NODE_HEIGHT,
                file: vault.notes[i].path.clone(),
                color: orphan[i].then(|| ORPHAN_COLOR.to_string()),
            }));
        }
        x += width + GROUP_GAP;
        shelf_height = shelf_height.max(*height);
    }
    nodes.extend(files);

    let mut edges = Vec::new();
    for (i, targets) in vault.graph.outgoing.iter().enumerate() {
        for &j in targets {
            edges.push(Edge {
                id: format!("e{}", edges.len()),
                from_node: node_of[i].clone(),
                to_node: node_of[j].clone(),
            });
        }
    }
    Canvas { nodes, edges }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn groups_are_square_ish_grids() {
        assert_eq!(columns(1), 1);
        assert_eq!(columns(4), 2);
        assert_eq!(columns(5), 3);
        assert_eq!(group_size(1), (480, 200));
        assert_eq!(group_size(5), (80 + 3 * 400 + 2 * 40, 80 + 2 * 120 + 40));
    }

    #[test]
    fn groupings_parse_by_name() {
        assert_eq!("folder".parse::<Grouping>(), Ok(Grouping::Folder));
        assert_eq!("Component".parse::<Grouping>(), Ok(Grouping::Component));
        assert!("tags".parse::<Grouping>().is_err());
    }
}
