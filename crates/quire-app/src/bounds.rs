//! Size bounds on results. A client pastes results into a model's context, so every result stays
//! under a fixed budget; what does not fit is cut where a reader can pick up again (a line, a
//! level of a tree, a page of rows) and the result says so and how to get the rest.

use std::ops::Range;

use quire_vault::Note;
use quire_vault::lines::LineIndex;
use serde_json::{Map, Value as Json};

use crate::limits::{MAX_FIELD_CHARS, MAX_RESULT_BYTES};

/// Bytes `c` takes inside a JSON string (serde_json's escapes).
fn escaped_len(c: char) -> usize {
    match c {
        '"' | '\\' | '\n' | '\r' | '\t' | '\u{8}' | '\u{c}' => 2,
        c if (c as u32) < 0x20 => 6,
        c => c.len_utf8(),
    }
}

/// Bytes `text` takes as a JSON string, quotes left out.
pub fn escaped_size(text: &str) -> usize {
    text.chars().map(escaped_len).sum()
}

/// A piece of a note's text that fits a budget, and where the rest begins.
#[derive(Debug, PartialEq, Eq)]
pub struct Piece {
    /// The bytes of the note's source.
    pub range: Range<usize>,
    /// The line the piece begins in (1-based).
    pub first_line: usize,
    /// The line it ends in.
    pub last_line: usize,
    /// When the budget cut the piece short: the line the rest begins in, and how many
    /// characters into that line (0: at its start).
    pub rest: Option<(usize, usize)>,
}

/// Lines `start..=end` of `note`, less the first `offset` characters, cut to at most `budget`
/// bytes of JSON string (escapes counted, so a reply never outgrows the budget). The cut falls
/// at a line break when the first line fits; a longer line is cut inside (at a character), and
/// `rest` says how far into it the next piece starts. `Err` when `offset` is past the end.
pub fn text_within(
    note: &Note,
    start: usize,
    end: usize,
    offset: usize,
    budget: usize,
) -> Result<Piece, String> {
    let text = note.source.as_str();
    let index = LineIndex::new(text);
    let from = index.line_start(start);
    let to = index.line_end(text, end).max(from);
    let (p, first) = if offset == 0 {
        (from, start)
    } else {
        let selected = &text[from..to];
        match selected.char_indices().nth(offset) {
            Some((i, _)) => (from + i, index.line_of(from + i)),
            None => {
                return Err(format!(
                    "`offset` is {offset}, but the selected text has only {} characters",
                    selected.chars().count()
                ));
            }
        }
    };
    // `p` may sit on the line break that ends `first`.
    let end_of = |line: usize| index.line_end(text, line).max(p);
    let mut used = escaped_size(&text[p..end_of(first)]);
    if used > budget {
        let mut cut = p;
        let mut size = 0;
        for (i, c) in text[p..end_of(first)].char_indices() {
            size += escaped_len(c);
            if size > budget {
                break;
            }
            cut = p + i + c.len_utf8();
        }
        let into_line = text[index.line_start(first)..cut].chars().count();
        return Ok(Piece {
            range: p..cut,
            first_line: first,
            last_line: first,
            rest: Some((first, into_line)),
        });
    }
    let mut last = first;
    while last < end {
        let added = escaped_size(&text[end_of(last)..end_of(last + 1)]);
        if used + added > budget {
            break;
        }
        used += added;
        last += 1;
    }
    Ok(Piece {
        range: p..end_of(last),
        first_line: first,
        last_line: last,
        rest: (last < end).then_some((last + 1, 0)),
    })
}

/// `text` cut to `max` characters, with `…` when cut.
pub fn clip(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        Some((i, _)) => format!("{}…", &text[..i]),
        None => text.to_string(),
    }
}

fn json_size(value: &Json) -> usize {
    serde_json::to_string(value).map_or(0, |s| s.len())
}

/// Shortens every string longer than [`MAX_FIELD_CHARS`] except note text and paths (bounded
/// elsewhere, and a path must stay whole to be asked for). Returns how many it shortened.
fn clip_fields(value: &mut Json, key: Option<&str>) -> usize {
    match value {
        Json::String(s)
            if !matches!(key, Some("text" | "path"))
                && s.len() > MAX_FIELD_CHARS
                && s.chars().nth(MAX_FIELD_CHARS).is_some() =>
        {
            *s = clip(s, MAX_FIELD_CHARS);
            1
        }
        Json::Array(items) => items.iter_mut().map(|v| clip_fields(v, key)).sum(),
        Json::Object(map) => map
            .iter_mut()
            .map(|(k, v)| clip_fields(v, Some(k.as_str())))
            .sum(),
        _ => 0,
    }
}

/// The array inside `value` that takes the most bytes, with its size.
fn largest_array(value: &mut Json) -> Option<(&mut Vec<Json>, usize)> {
    let own = match value {
        Json::Array(_) => Some(json_size(value)),
        _ => None,
    };
    let mut best: Option<(&mut Vec<Json>, usize)> = None;
    match value {
        Json::Array(items) => {
            // An array of arrays: the inner one may be the better cut, but cutting the outer
            // one is always right, so it is kept as the candidate.
            let size = own.unwrap_or(0);
            best = Some((items, size));
        }
        Json::Object(map) => {
            for child in map.values_mut() {
                if let Some((items, size)) = largest_array(child)
                    && best.as_ref().is_none_or(|(_, s)| size > *s)
                {
                    best = Some((items, size));
                }
            }
        }
        _ => {}
    }
    best.filter(|(items, _)| !items.is_empty())
}

/// `value` (one result) brought under `budget` bytes of JSON: first long text fields are
/// shortened (see [`clip_fields`]), then entries are left out from the ends of the largest
/// lists. A result that had to be cut says so in `"cut_to_fit"`. Every tool's result passes
/// here last, so no reply outgrows the budget whatever the notes hold (a megabyte-long title,
/// thousands of headings).
pub fn fit_result(mut value: Json, budget: usize) -> Json {
    if json_size(&value) <= budget {
        return value;
    }
    let clipped = clip_fields(&mut value, None);
    let mut left_out = 0;
    // Room for the `cut_to_fit` message itself.
    let budget = budget.saturating_sub(400);
    loop {
        let excess = json_size(&value).saturating_sub(budget);
        if excess == 0 {
            break;
        }
        let Some((items, _)) = largest_array(&mut value) else {
            break;
        };
        let mut freed = 0;
        while freed < excess
            && let Some(item) = items.pop()
        {
            freed += json_size(&item) + 1;
            left_out += 1;
        }
    }
    if let Json::Object(map) = &mut value {
        map.insert(
            "cut_to_fit".into(),
            format!(
                "this result was cut to stay under {MAX_RESULT_BYTES} bytes: {clipped} long texts were shortened (they end in …) and {left_out} list entries were left out from the ends of the longest lists; narrow the request (a smaller k, a folder, a line range) to see them"
            )
            .into(),
        );
    }
    value
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
pub fn prune_breadth_first(root: &Json, root_key: &str, budget: usize) -> (Json, usize) {
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
pub fn page<T: serde::Serialize>(
    rows: &[&T],
    offset: usize,
    limit: usize,
    budget: usize,
) -> (Vec<Json>, Option<usize>) {
    let mut shown = Vec::new();
    let mut used = 0;
    for row in rows.iter().skip(offset).take(limit) {
        let row = serde_json::to_value(row).unwrap_or_default();
        let size = row.to_string().len() + 2;
        if !shown.is_empty() && used + size > budget {
            break;
        }
        used += size;
        shown.push(row);
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

    fn piece<'a>(n: &'a Note, p: &Piece) -> &'a str {
        &n.source[p.range.clone()]
    }

    #[test]
    fn lines_are_cut_at_a_line_break() {
        let n = note("aaaa\nbbbb\ncccc\ndddd\n");
        let p = text_within(&n, 1, 4, 0, 12).unwrap();
        assert_eq!(piece(&n, &p), "aaaa\nbbbb");
        assert_eq!((p.first_line, p.last_line, p.rest), (1, 2, Some((3, 0))));
        let p = text_within(&n, 2, 3, 0, 1000).unwrap();
        assert_eq!(piece(&n, &p), "bbbb\ncccc");
        assert_eq!((p.first_line, p.last_line, p.rest), (2, 3, None));
    }

    #[test]
    fn an_overlong_line_is_cut_inside_and_says_where_to_go_on() {
        let n = note("ééééé\nx\n");
        let p = text_within(&n, 1, 2, 0, 5).unwrap();
        assert_eq!(piece(&n, &p), "éé");
        assert_eq!((p.first_line, p.last_line, p.rest), (1, 1, Some((1, 2))));
        let p = text_within(&n, 1, 2, 2, 5).unwrap();
        assert_eq!(piece(&n, &p), "éé");
        assert_eq!(p.rest, Some((1, 4)));
        let p = text_within(&n, 1, 2, 4, 5).unwrap();
        assert_eq!(piece(&n, &p), "é\nx");
        assert_eq!((p.first_line, p.last_line, p.rest), (1, 2, None));
        assert!(
            text_within(&n, 1, 2, 7, 5)
                .unwrap_err()
                .contains("only 7 characters")
        );
    }

    #[test]
    fn the_budget_counts_json_escapes() {
        let n = note(&"\"".repeat(10));
        let p = text_within(&n, 1, 1, 0, 8).unwrap();
        assert_eq!(piece(&n, &p), "\"\"\"\"");
        assert_eq!(p.rest, Some((1, 4)));
        let n = note("a\u{1}b");
        assert_eq!(escaped_size(&n.source), 8);
    }

    #[test]
    fn a_long_line_read_in_pieces_is_whole_again() {
        let line: String = (0..5_000)
            .map(|i| ['a', 'é', '"', '\\', '漢', '\t'][i % 6])
            .collect();
        let n = note(&format!("# T\n{line}\nlast\n"));
        let (mut lines, mut offset, mut read) = (1, 0, String::new());
        loop {
            let p = text_within(&n, lines, 3, offset, 1_000).unwrap();
            let text = piece(&n, &p);
            assert!(escaped_size(text) <= 1_000);
            // A piece that starts a line again follows a cut at a line break.
            if offset == 0 && lines > 1 {
                read.push('\n');
            }
            read.push_str(text);
            match p.rest {
                Some((line, into)) => (lines, offset) = (line, into),
                None => break,
            }
        }
        assert_eq!(read, format!("# T\n{line}\nlast"));
    }

    #[test]
    fn results_over_the_budget_are_cut_and_say_so() {
        let small = json!({"results": [1, 2, 3]});
        assert_eq!(fit_result(small.clone(), 1_000), small);
        let rows: Vec<Json> = (0..100)
            .map(|i| json!({"path": format!("n{i}.md"), "title": "t".repeat(5_000)}))
            .collect();
        let fitted = fit_result(json!({"query": "q", "results": rows}), 20_000);
        assert!(fitted.to_string().len() <= 20_000);
        let kept = fitted["results"].as_array().unwrap();
        assert!(!kept.is_empty() && kept.len() < 100);
        assert_eq!(kept[0]["path"], "n0.md");
        assert_eq!(kept[0]["title"].as_str().unwrap().chars().count(), 1_001);
        assert!(fitted["cut_to_fit"].as_str().unwrap().contains("left out"));
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
