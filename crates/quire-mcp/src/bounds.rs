//! Size bounds on results. A client pastes results into a model's context, so every result stays
//! under a fixed budget; what does not fit is cut where a reader can pick up again (a line, a
//! level of a tree, a page of rows) and the result says so and how to get the rest.

use std::ops::Range;

use quire_vault::Note;
use quire_vault::lines::LineIndex;
use serde_json::{Map, Value as Json};

/// The most JSON one result carries, in bytes (about 16k tokens).
pub(crate) const MAX_RESULT_BYTES: usize = 60_000;
/// The most note text `get_note` returns at once, in bytes.
pub(crate) const MAX_NOTE_TEXT_BYTES: usize = 40_000;

/// Lines `start..=end` of `note` cut to at most `budget` bytes at a line break: the byte range
/// and the last line it holds. A first line longer than the budget is cut inside the line (at a
/// character boundary), and then the last line is `start`.
pub(crate) fn lines_within(
    note: &Note,
    start: usize,
    end: usize,
    budget: usize,
) -> (Range<usize>, usize) {
    let text = note.source.as_str();
    let index = LineIndex::new(text);
    let from = index.line_start(start);
    let mut last = start;
    while last < end && index.line_end(text, last + 1) - from <= budget {
        last += 1;
    }
    let to = index.line_end(text, last);
    if to - from <= budget {
        return (from..to, last);
    }
    let mut cut = from + budget;
    while !text.is_char_boundary(cut) {
        cut -= 1;
    }
    (from..cut, start)
}

/// Bytes of `node` as JSON, leaving out its `children_key` array.
fn own_size(node: &Json, children_key: &str) -> usize {
    match node {
        Json::Object(map) => {
            let own: Map<String, Json> = map
                .iter()
                .filter(|(k, _)| k.as_str() != children_key)
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect();
            Json::Object(own).to_string().len()
        }
        other => other.to_string().len(),
    }
}

fn children<'a>(node: &'a Json, key: &str) -> &'a [Json] {
    node.get(key)
        .and_then(Json::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default()
}

/// A tree cut to about `budget` bytes, breadth first: all of a level is kept before any of the
/// next, so the top of the tree is always there and the cut falls on the deepest levels. The root
/// holds its children under `root_key`, every other node under `"children"`. A node that lost
/// children gets `"omitted_children": n`. Returns the tree and the number of nodes left out.
pub(crate) fn prune_breadth_first(root: &Json, root_key: &str, budget: usize) -> (Json, usize) {
    // Number the nodes level by level (a queue): (node, parent).
    let mut nodes: Vec<(&Json, usize)> = vec![(root, 0)];
    let mut i = 0;
    while i < nodes.len() {
        let key = if i == 0 { root_key } else { "children" };
        for child in children(nodes[i].0, key) {
            nodes.push((child, i));
        }
        i += 1;
    }
    // Keep the longest prefix of that order that fits.
    let mut kept = vec![false; nodes.len()];
    let mut used = 0;
    for n in 0..nodes.len() {
        let key = if n == 0 { root_key } else { "children" };
        let size = own_size(nodes[n].0, key) + 32;
        if n > 0 && used + size > budget {
            break;
        }
        used += size;
        kept[n] = true;
    }
    let omitted = kept.iter().filter(|k| !**k).count();
    let mut child_ids: Vec<Vec<usize>> = vec![Vec::new(); nodes.len()];
    for (n, &(_, parent)) in nodes.iter().enumerate().skip(1) {
        child_ids[parent].push(n);
    }
    (rebuild(0, &nodes, &child_ids, &kept, root_key), omitted)
}

fn rebuild(
    n: usize,
    nodes: &[(&Json, usize)],
    child_ids: &[Vec<usize>],
    kept: &[bool],
    root_key: &str,
) -> Json {
    let key = if n == 0 { root_key } else { "children" };
    let Json::Object(map) = nodes[n].0 else {
        return nodes[n].0.clone();
    };
    let mut out: Map<String, Json> = map
        .iter()
        .filter(|(k, _)| k.as_str() != key)
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    if map.contains_key(key) {
        let shown: Vec<Json> = child_ids[n]
            .iter()
            .filter(|&&c| kept[c])
            .map(|&c| rebuild(c, nodes, child_ids, kept, root_key))
            .collect();
        let left_out = child_ids[n].len() - shown.len();
        if left_out > 0 {
            out.insert("omitted_children".into(), left_out.into());
        }
        out.insert(key.into(), Json::Array(shown));
    }
    Json::Object(out)
}

/// Rows `offset..` that fit `limit` and `budget`: the rows and the offset of the next page (if
/// any rows are left).
pub(crate) fn page(
    rows: &[&Json],
    offset: usize,
    limit: usize,
    budget: usize,
) -> (Vec<Json>, Option<usize>) {
    let mut shown = Vec::new();
    let mut used = 0;
    for row in rows.iter().skip(offset).take(limit) {
        let size = row.to_string().len() + 2;
        if !shown.is_empty() && used + size > budget {
            break;
        }
        used += size;
        shown.push((*row).clone());
    }
    let next = offset + shown.len();
    (shown, (next < rows.len()).then_some(next))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn note(text: &str) -> Note {
        quire_vault::parse_note("n.md", text, &Default::default())
    }

    #[test]
    fn lines_are_cut_at_a_line_break() {
        let n = note("aaaa\nbbbb\ncccc\ndddd\n");
        let (range, last) = lines_within(&n, 1, 4, 12);
        assert_eq!(&n.source[range], "aaaa\nbbbb");
        assert_eq!(last, 2);
        let (range, last) = lines_within(&n, 2, 3, 1000);
        assert_eq!(&n.source[range], "bbbb\ncccc");
        assert_eq!(last, 3);
    }

    #[test]
    fn an_overlong_first_line_is_cut_at_a_char_boundary() {
        let n = note("ééééé\nx\n");
        let (range, last) = lines_within(&n, 1, 2, 5);
        assert_eq!(&n.source[range], "éé");
        assert_eq!(last, 1);
    }

    #[test]
    fn trees_keep_their_top_levels() {
        let leaf = |name: &str| json!({"name": name, "children": []});
        let tree = json!({"name": "root", "children": [
            {"name": "a", "children": [leaf("a1"), leaf("a2"), leaf("a3")]},
            {"name": "b", "children": [leaf("b1")]},
        ]});
        let (whole, omitted) = prune_breadth_first(&tree, "children", 10_000);
        assert_eq!(omitted, 0);
        assert_eq!(whole, tree);
        let (top, omitted) = prune_breadth_first(&tree, "children", 150);
        assert_eq!(omitted, 4);
        assert_eq!(top["children"][0]["name"], "a");
        assert_eq!(top["children"][0]["omitted_children"], 3);
        assert_eq!(top["children"][1]["omitted_children"], 1);
        assert!(top.to_string().len() < 300);
    }

    #[test]
    fn pages_stop_at_the_limit_or_the_budget() {
        let rows: Vec<Json> = (0..10).map(|i| json!({"i": i})).collect();
        let refs: Vec<&Json> = rows.iter().collect();
        let (shown, next) = page(&refs, 0, 4, 10_000);
        assert_eq!((shown.len(), next), (4, Some(4)));
        let (shown, next) = page(&refs, 8, 4, 10_000);
        assert_eq!((shown.len(), next), (2, None));
        let (shown, next) = page(&refs, 0, 10, 20);
        assert_eq!((shown.len(), next), (2, Some(2)));
    }
}
