//! Canvas files (`*.canvas`, JSON Canvas 1.0) as notes: their text is searchable and the notes
//! they show count as links.
//!
//! A canvas becomes Markdown that [`crate::parse_note`] reads like any note: each text node's
//! Markdown (so its `[[links]]` and `#tags` count), each group's label, each link node's URL, and
//! each file node as a wikilink to its file (`[[Folder/Note]]`, with its subpath), nodes in
//! reading order (top to bottom, then left to right), separated by blank lines. Lines of the
//! canvas note are lines of that text, not of the JSON. The spec: <https://jsoncanvas.org/spec/1.0/>.

use serde::Deserialize;

use crate::model::Note;
use crate::parse::{ParseOptions, parse_note};

/// A node of a canvas, as far as quire reads it.
#[derive(Debug, Deserialize)]
struct CanvasNode {
    #[serde(rename = "type", default)]
    kind: String,
    #[serde(default)]
    x: f64,
    #[serde(default)]
    y: f64,
    #[serde(default)]
    text: Option<String>,
    #[serde(default)]
    file: Option<String>,
    #[serde(default)]
    subpath: Option<String>,
    #[serde(default)]
    url: Option<String>,
    #[serde(default)]
    label: Option<String>,
}

#[derive(Debug, Deserialize)]
struct CanvasFile {
    #[serde(default)]
    nodes: Vec<CanvasNode>,
}

/// Nodes read from one canvas at most (a larger canvas keeps its first ones, and is reported as
/// indexed in part).
pub const MAX_NODES: usize = 20_000;

/// The Markdown a canvas's JSON stands for (see the module docs); the reason when it is not a
/// JSON Canvas.
pub fn canvas_markdown(json: &str) -> Result<String, String> {
    canvas_markdown_counted(json).map(|(markdown, _)| markdown)
}

/// [`canvas_markdown`] and the number of nodes in the file (more than [`MAX_NODES`] when some
/// were left out).
fn canvas_markdown_counted(json: &str) -> Result<(String, usize), String> {
    let canvas: CanvasFile =
        serde_json::from_str(json).map_err(|e| format!("not a JSON Canvas file: {e}"))?;
    let mut nodes: Vec<&CanvasNode> = canvas.nodes.iter().take(MAX_NODES).collect();
    nodes.sort_by(|a, b| a.y.total_cmp(&b.y).then(a.x.total_cmp(&b.x)));
    let mut parts = Vec::new();
    for node in nodes {
        let part = match node.kind.as_str() {
            "text" => node.text.clone(),
            "group" => node.label.clone(),
            "link" => node.url.clone(),
            "file" => node
                .file
                .as_deref()
                .and_then(|file| file_link(file, node.subpath.as_deref())),
            _ => None,
        };
        if let Some(part) = part.filter(|p| !p.trim().is_empty()) {
            parts.push(part.trim_end().to_string());
        }
    }
    Ok((parts.join("\n\n") + "\n", canvas.nodes.len()))
}

/// `[[Folder/Note#Heading]]` for a file node; `None` for a path a wikilink cannot hold.
fn file_link(file: &str, subpath: Option<&str>) -> Option<String> {
    if file.contains(['[', ']', '|', '\n']) {
        return None;
    }
    let target = file.strip_suffix(".md").unwrap_or(file);
    let subpath = subpath.filter(|s| s.starts_with('#') && !s.contains([']', '|', '\n']));
    Some(format!("[[{target}{}]]", subpath.unwrap_or("")))
}

/// The canvas at `path` as a note: [`canvas_markdown`] parsed, titled by its file name, with
/// `sha256` the file's.
pub fn canvas_note(
    path: &str,
    json: &str,
    sha256: String,
    options: &ParseOptions,
) -> Result<(Note, usize), String> {
    let (markdown, nodes) = canvas_markdown_counted(json)?;
    let mut note = parse_note(path, &markdown, options);
    let name = path.rsplit('/').next().unwrap_or(path);
    note.title = name.strip_suffix(".canvas").unwrap_or(name).to_string();
    note.sha256 = sha256;
    Ok((note, nodes))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_and_file_nodes_in_reading_order() {
        let json = r##"{"nodes":[
            {"id":"b","type":"file","file":"Projects/Roadmap.md","subpath":"#Q3","x":400,"y":0,"width":10,"height":10},
            {"id":"a","type":"text","text":"Launch **plan** with [[Budget]] #planning","x":0,"y":0,"width":10,"height":10},
            {"id":"c","type":"group","label":"Risks","x":0,"y":500,"width":10,"height":10},
            {"id":"d","type":"file","file":"diagram.png","x":0,"y":900,"width":10,"height":10}
        ],"edges":[]}"##;
        let (note, nodes) = canvas_note(
            "Boards/Launch.canvas",
            json,
            "x".into(),
            &Default::default(),
        )
        .expect("a canvas");
        assert_eq!(nodes, 4);
        assert_eq!(note.title, "Launch");
        assert_eq!(
            note.source,
            "Launch **plan** with [[Budget]] #planning\n\n[[Projects/Roadmap#Q3]]\n\nRisks\n\n[[diagram.png]]\n"
        );
        let targets: Vec<&str> = note.links.iter().map(|l| l.target.as_str()).collect();
        assert_eq!(targets, ["Budget", "Projects/Roadmap", "diagram.png"]);
        assert_eq!(note.tag_names(), ["planning"]);
    }

    #[test]
    fn not_json_is_a_reason() {
        assert!(canvas_markdown("{nodes: oops").is_err());
        assert_eq!(canvas_markdown("{}").as_deref(), Ok("\n"));
    }
}
