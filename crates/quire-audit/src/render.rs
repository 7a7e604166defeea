//! The report as Markdown: a heading per finding, tables for counts, long lists cut with
//! "… and N more" (the JSON form is always complete).

use std::fmt::Write as _;

use crate::{AuditReport, TagNode};

/// Rows or items shown per list before "… and N more".
const SHOWN: usize = 20;
/// Levels of the tag hierarchy shown.
const TAG_TREE_DEPTH: usize = 3;

/// `text` safe in a table cell: `|` escaped, line breaks as spaces.
fn cell(text: &str) -> String {
    text.replace('|', "\\|").replace(['\n', '\r'], " ")
}

/// A path as inline code (with backticks doubled around paths that hold one).
fn code(text: &str) -> String {
    if text.contains('`') {
        format!("`` {text} ``")
    } else {
        format!("`{text}`")
    }
}

/// The folder as shown: the root is `(root)`.
fn folder_name(path: &str) -> String {
    if path.is_empty() {
        "(root)".into()
    } else {
        code(path)
    }
}

/// A table of `rows` (cut at [`SHOWN`]) under `header`, or "None." when there are none.
fn table(out: &mut String, header: &[&str], rows: Vec<Vec<String>>) {
    if rows.is_empty() {
        out.push_str("None.\n\n");
        return;
    }
    let _ = writeln!(out, "| {} |", header.join(" | "));
    let _ = writeln!(out, "|{}", "---|".repeat(header.len()));
    let total = rows.len();
    for row in rows.into_iter().take(SHOWN) {
        let _ = writeln!(out, "| {} |", row.join(" | "));
    }
    more(out, total);
    out.push('\n');
}

/// A bullet list of `items` (cut at [`SHOWN`]), or `none` when empty.
fn list(out: &mut String, items: Vec<String>, none: &str) {
    if items.is_empty() {
        let _ = writeln!(out, "{none}\n");
        return;
    }
    let total = items.len();
    for item in items.into_iter().take(SHOWN) {
        let _ = writeln!(out, "- {item}");
    }
    more(out, total);
    out.push('\n');
}

/// `heading (count)`, what counts (when said), then the notes' paths.
fn paths_section(out: &mut String, heading: &str, about: &str, paths: &[String]) {
    let _ = writeln!(out, "{heading} ({})\n", paths.len());
    if !about.is_empty() {
        let _ = writeln!(out, "{about}\n");
    }
    list(out, paths.iter().map(|p| code(p)).collect(), "None.");
}

fn more(out: &mut String, total: usize) {
    if total > SHOWN {
        let _ = writeln!(out, "\n… and {} more", total - SHOWN);
    }
}

fn tag_lines(out: &mut Vec<String>, nodes: &[TagNode], depth: usize) {
    for node in nodes {
        let indent = "  ".repeat(depth);
        out.push(format!("{indent}#{} ({})", node.name, node.notes));
        if depth + 1 < TAG_TREE_DEPTH {
            tag_lines(out, &node.children, depth + 1);
        }
    }
}

/// The report as a Markdown document.
pub fn render_markdown(report: &AuditReport) -> String {
    let mut out = String::new();
    summary(&mut out, report);
    folders(&mut out, report);
    tags(&mut out, report);
    orphans(&mut out, report);
    dead_ends(&mut out, report);
    unresolved_links(&mut out, report);
    unlinked_attachments(&mut out, report);
    components(&mut out, report);
    hubs(&mut out, report);
    note_sizes(&mut out, report);
    while out.ends_with("\n\n") {
        out.pop();
    }
    out
}

/// The title and the table of counts.
fn summary(out: &mut String, report: &AuditReport) {
    let s = &report.summary;
    let o = &report.options;
    out.push_str("# Vault audit\n\n");
    table(
        out,
        &["", "count"],
        [
            ("notes", s.notes),
            ("folders", s.folders),
            ("deepest folder", s.max_depth),
            ("attachments", s.attachments),
            ("skipped files", s.skipped),
            ("tags", s.tags),
            ("links between notes", s.note_links),
            ("unresolved links", s.unresolved_links),
            ("orphans", s.orphans),
            ("dead ends", s.dead_ends),
            ("unlinked attachments", s.unlinked_attachments),
            ("link-graph components", s.components),
            ("empty notes", s.empty_notes),
            (
                &format!("oversized notes (> {} words)", o.oversized_words),
                s.oversized_notes,
            ),
            ("notes without headings", s.notes_without_headings),
            ("duplicate titles", s.duplicate_titles),
        ]
        .into_iter()
        .map(|(name, count)| vec![name.to_string(), count.to_string()])
        .collect(),
    );
}

/// `## Folders`: a table of the folders, then the notes by folder depth.
fn folders(out: &mut String, report: &AuditReport) {
    out.push_str("## Folders\n\n");
    table(
        out,
        &["folder", "depth", "notes", "with sub-folders"],
        report
            .folders
            .iter()
            .map(|f| {
                vec![
                    cell(&folder_name(&f.path)),
                    f.depth.to_string(),
                    f.notes.to_string(),
                    f.notes_below.to_string(),
                ]
            })
            .collect(),
    );
    let depths: Vec<String> = report
        .depths
        .iter()
        .map(|d| format!("{} at depth {}", d.notes, d.depth))
        .collect();
    let _ = writeln!(out, "Notes by folder depth: {}.\n", depths.join(", "));
}

/// `## Tags`: the tag table and its sub-sections, or "No tags.".
fn tags(out: &mut String, report: &AuditReport) {
    out.push_str("## Tags\n\n");
    if report.tags.is_empty() {
        out.push_str("No tags.\n\n");
        return;
    }
    table(
        out,
        &["tag", "notes", "uses"],
        report
            .tags
            .iter()
            .map(|t| {
                vec![
                    cell(&code(&format!("#{}", t.name))),
                    t.notes.to_string(),
                    t.uses.to_string(),
                ]
            })
            .collect(),
    );
    tag_hierarchy(out, report);
    near_duplicate_tags(out, report);
    singleton_tags(out, report);
}

/// `### Tag hierarchy`: the nested tags as an indented tree (cut at twice [`SHOWN`] lines).
fn tag_hierarchy(out: &mut String, report: &AuditReport) {
    out.push_str("### Tag hierarchy\n\nNested tags, each level counting the notes tagged with it or below it.\n\n");
    let nested: Vec<TagNode> = report
        .tag_tree
        .iter()
        .filter(|t| !t.children.is_empty())
        .cloned()
        .collect();
    let mut lines = Vec::new();
    tag_lines(&mut lines, &nested, 0);
    if nested.is_empty() {
        out.push_str("No nested tags.\n\n");
    } else {
        let total = lines.len();
        out.push_str("```\n");
        for line in lines.iter().take(SHOWN * 2) {
            let _ = writeln!(out, "{line}");
        }
        out.push_str("```\n");
        if total > SHOWN * 2 {
            let _ = writeln!(out, "\n… and {} more", total - SHOWN * 2);
        }
        out.push('\n');
    }
}

/// `### Near-duplicate tags`: each group of variants with their note counts.
fn near_duplicate_tags(out: &mut String, report: &AuditReport) {
    out.push_str("### Near-duplicate tags\n\n");
    list(
        out,
        report
            .near_duplicate_tags
            .iter()
            .map(|f| {
                f.variants
                    .iter()
                    .map(|v| format!("{} ({})", code(&format!("#{}", v.name)), v.notes))
                    .collect::<Vec<_>>()
                    .join(", ")
            })
            .collect(),
        "None: no two tags differ only in case, `-`/`_` or a plural.",
    );
}

/// `### Tags used by one note`.
fn singleton_tags(out: &mut String, report: &AuditReport) {
    let _ = writeln!(
        out,
        "### Tags used by one note ({})\n",
        report.singleton_tags.len()
    );
    list(
        out,
        report
            .singleton_tags
            .iter()
            .map(|t| code(&format!("#{t}")))
            .collect(),
        "None.",
    );
}

/// `## Orphans`: notes with no link either way.
fn orphans(out: &mut String, report: &AuditReport) {
    paths_section(
        out,
        "## Orphans",
        "Notes with no link to another note and none from one.",
        &report.orphans,
    );
}

/// `## Dead ends`: notes linked to that link to no note.
fn dead_ends(out: &mut String, report: &AuditReport) {
    paths_section(
        out,
        "## Dead ends",
        "Notes that other notes link to, which link to no note.",
        &report.dead_ends,
    );
}

/// `## Unresolved links`: a table of where each one is and its target.
fn unresolved_links(out: &mut String, report: &AuditReport) {
    let _ = writeln!(
        out,
        "## Unresolved links ({})\n",
        report.unresolved_links.len()
    );
    table(
        out,
        &["where", "link"],
        report
            .unresolved_links
            .iter()
            .map(|u| {
                vec![
                    cell(&code(&format!("{}:{}", u.note, u.line))),
                    cell(&code(&u.target)),
                ]
            })
            .collect(),
    );
}

/// `## Attachments no note links to`.
fn unlinked_attachments(out: &mut String, report: &AuditReport) {
    paths_section(
        out,
        "## Attachments no note links to",
        "",
        &report.unlinked_attachments,
    );
}

/// `## Link-graph components`: their sizes, then the small islands.
fn components(out: &mut String, report: &AuditReport) {
    let c = &report.components;
    let _ = writeln!(out, "## Link-graph components ({})\n", c.count);
    let singles = c.sizes.iter().filter(|&&size| size == 1).count();
    let shown: Vec<String> = c.sizes.iter().take(SHOWN).map(usize::to_string).collect();
    let _ = writeln!(
        out,
        "Sizes, largest first: {}{}. The largest holds {} of {} notes; notes standing alone: {}.\n",
        shown.join(", "),
        if c.sizes.len() > SHOWN {
            format!(" … and {} more", c.sizes.len() - SHOWN)
        } else {
            String::new()
        },
        c.largest,
        report.summary.notes,
        singles
    );
    let _ = writeln!(
        out,
        "### Small islands ({}: 2 to {} notes, apart from the rest)\n",
        c.islands.len(),
        report.options.island_max_notes
    );
    list(
        out,
        c.islands
            .iter()
            .map(|notes| notes.iter().map(|p| code(p)).collect::<Vec<_>>().join(", "))
            .collect(),
        "None.",
    );
}

/// `## Hubs`: the notes most linked to, then the most linking.
fn hubs(out: &mut String, report: &AuditReport) {
    out.push_str("## Hubs\n\n");
    out.push_str("### Most linked to\n\n");
    table(
        out,
        &["note", "notes linking to it"],
        hub_rows(&report.most_linked),
    );
    out.push_str("### Most linking\n\n");
    table(
        out,
        &["note", "notes it links to"],
        hub_rows(&report.most_linking),
    );
}

/// A hub ranking's table rows: the note and its count.
fn hub_rows(hubs: &[crate::Hub]) -> Vec<Vec<String>> {
    hubs.iter()
        .map(|h| vec![cell(&code(&h.path)), h.count.to_string()])
        .collect()
}

/// `## Note sizes and structure`: empty, oversized and heading-less notes, duplicate titles.
fn note_sizes(out: &mut String, report: &AuditReport) {
    out.push_str("## Note sizes and structure\n\n");
    paths_section(
        out,
        "### Empty notes",
        "Nothing but whitespace after the frontmatter.",
        &report.empty_notes,
    );
    oversized_notes(out, report);
    paths_section(
        out,
        "### Notes without headings",
        "",
        &report.notes_without_headings,
    );
    duplicate_titles(out, report);
}

/// `### Oversized notes`: a table of their words and bytes.
fn oversized_notes(out: &mut String, report: &AuditReport) {
    let _ = writeln!(
        out,
        "### Oversized notes ({}: over {} words)\n",
        report.oversized_notes.len(),
        report.options.oversized_words
    );
    table(
        out,
        &["note", "words", "bytes"],
        report
            .oversized_notes
            .iter()
            .map(|n| {
                vec![
                    cell(&code(&n.path)),
                    n.words.to_string(),
                    n.bytes.to_string(),
                ]
            })
            .collect(),
    );
}

/// `### Duplicate titles`: each shared title with the notes that share it.
fn duplicate_titles(out: &mut String, report: &AuditReport) {
    let _ = writeln!(
        out,
        "### Duplicate titles ({})\n\nTitles (first H1, else the file name) that several notes share, ignoring case.\n",
        report.duplicate_titles.len()
    );
    list(
        out,
        report
            .duplicate_titles
            .iter()
            .map(|t| {
                format!(
                    "\"{}\": {}",
                    t.title,
                    t.paths
                        .iter()
                        .map(|p| code(p))
                        .collect::<Vec<_>>()
                        .join(", ")
                )
            })
            .collect(),
        "None.",
    );
}
