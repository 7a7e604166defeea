//! The audit of the four shared vaults, checked against a second computation written here from
//! the files alone (a directory walk, a line scanner for frontmatter, tags, headings and links,
//! resolution by file name), and against `quire manifest`'s numbers. Each vault is audited in a
//! temporary copy.
#![allow(clippy::unwrap_used)]

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use quire_audit::{AuditOptions, AuditReport, Grouping, audit, canvas, render_markdown};
use quire_vault::reasoning::manifest;
use quire_vault::{OpenOptions, Vault};

const VAULTS: [&str; 4] = [
    "kepano-obsidian",
    "obsidian-starter-vault",
    "obsidian-tasks-demo",
    "obsidian-tasks-docs",
];

// ---------------------------------------------------------------------------------------------
// The second computation: plain string handling, no quire code.

/// A note as the plain reading sees it.
struct PlainNote {
    path: String,
    /// Frontmatter text (without the `---` lines), empty when there is none.
    frontmatter: String,
    /// The text after the frontmatter.
    body: String,
}

/// Files of the vault as Obsidian shows them: no dot-names, no `node_modules`.
fn walk(root: &Path, rel: &str, notes: &mut Vec<String>, others: &mut Vec<String>) {
    for entry in std::fs::read_dir(root.join(rel)).unwrap() {
        let entry = entry.unwrap();
        let name = entry.file_name().to_string_lossy().to_string();
        if name.starts_with('.') || name == "node_modules" {
            continue;
        }
        let path = if rel.is_empty() {
            name.clone()
        } else {
            format!("{rel}/{name}")
        };
        if entry.file_type().unwrap().is_dir() {
            walk(root, &path, notes, others);
        } else if name.to_lowercase().ends_with(".md") {
            notes.push(path);
        } else {
            // A canvas is a note too (its text and file nodes), and still an attachment to link to.
            if name.to_lowercase().ends_with(".canvas") {
                notes.push(path.clone());
            }
            others.push(path);
        }
    }
}

/// Splits `---` frontmatter off the text.
fn split_frontmatter(text: &str) -> (String, String) {
    let text = text.trim_start_matches('\u{feff}');
    let mut lines = text.split_inclusive('\n');
    if lines.next().map(str::trim_end) != Some("---") {
        return (String::new(), text.to_string());
    }
    let mut front = String::new();
    let mut offset = text.find('\n').map_or(text.len(), |i| i + 1);
    for line in lines {
        offset += line.len();
        if line.trim_end() == "---" {
            return (front, text[offset..].to_string());
        }
        front.push_str(line);
    }
    (String::new(), text.to_string())
}

/// The body with fenced code blocks blanked out, and unless `keep_code_spans`, `inline code`,
/// `%%comments%%` and `<!-- HTML comments -->` too.
fn visible(body: &str, keep_code_spans: bool) -> String {
    let mut out = String::new();
    // The open fence: its character and length. A fence closes with a run of the same character
    // at least as long and nothing after it (```` around ``` stays open).
    let mut fence: Option<(char, usize)> = None;
    for line in body.lines() {
        let trimmed = line.trim_start();
        let marker = trimmed.chars().next().filter(|c| *c == '`' || *c == '~');
        let run = marker.map_or(0, |m| trimmed.chars().take_while(|c| *c == m).count());
        let opens = run >= 3;
        match fence {
            Some((m, len))
                if marker == Some(m) && run >= len && trimmed[run..].trim().is_empty() =>
            {
                fence = None
            }
            Some(_) => {}
            None if opens => fence = marker.map(|m| (m, run)),
            None if keep_code_spans => out.push_str(line),
            None => {
                // Drop `code spans`.
                let mut kept = String::new();
                for (k, piece) in line.split('`').enumerate() {
                    if k % 2 == 0 {
                        kept.push_str(piece);
                    }
                    kept.push(' ');
                }
                out.push_str(&kept);
            }
        }
        out.push('\n');
    }
    if keep_code_spans {
        // A `%%` or `<!--` inside a code span opens no comment: the link scanner sees to them.
        return out;
    }
    // Drop %%comments%% and <!-- HTML comments --> (they may span lines).
    let mut kept = String::new();
    for (k, piece) in out.split("%%").enumerate() {
        if k % 2 == 0 {
            kept.push_str(piece);
        }
    }
    let mut visible = String::new();
    let mut rest = kept.as_str();
    while let Some(start) = rest.find("<!--") {
        visible.push_str(&rest[..start]);
        rest = rest[start..]
            .find("-->")
            .map_or("", |end| &rest[start + end + 3..]);
    }
    visible.push_str(rest);
    visible
}

/// `#tags` of visible text: `#` at a line start, after white space or `>`, then letters, digits,
/// `_`, `-`, `/`, with at least one character that is not a digit.
fn inline_tags(text: &str) -> Vec<String> {
    let chars: Vec<char> = text.chars().collect();
    let mut tags = Vec::new();
    for k in 0..chars.len() {
        // After an inline HTML tag (`<span>#tag</span>`) Obsidian sees a tag too.
        if chars[k] != '#' || (k > 0 && !chars[k - 1].is_whitespace() && chars[k - 1] != '>') {
            continue;
        }
        let name: String = chars[k + 1..]
            .iter()
            .take_while(|c| c.is_alphanumeric() || matches!(c, '_' | '-' | '/'))
            .collect();
        if !name.is_empty() && name.chars().any(|c| !c.is_ascii_digit()) {
            tags.push(name);
        }
    }
    tags
}

/// The entries of a frontmatter list property (`key: a`, `key: [a, b]`, `key:\n  - a`), split
/// at commas (and at spaces too with `words`: Obsidian reads `tags: a b` as two tags), without
/// quotes or `#`.
fn property_list(front: &str, keys: &[&str], words: bool) -> Vec<String> {
    let mut values = Vec::new();
    let mut in_list = false;
    for line in front.lines() {
        if in_list {
            if let Some(item) = line.trim_start().strip_prefix("- ") {
                values.push(item.to_string());
                continue;
            }
            if line.trim() == "-" {
                continue;
            }
            in_list = false;
        }
        let Some((key, value)) = line.split_once(':') else {
            continue;
        };
        if line.starts_with(' ') || !keys.contains(&key.trim()) {
            continue;
        }
        let value = value.trim();
        if value.is_empty() {
            in_list = true;
        } else {
            let value = value.trim_start_matches('[').trim_end_matches(']');
            values.extend(value.split(',').map(str::to_string));
        }
    }
    if words {
        values = values
            .iter()
            .flat_map(|v| v.split_whitespace().map(str::to_string).collect::<Vec<_>>())
            .collect();
    }
    values
        .iter()
        .map(|v| {
            v.trim()
                .trim_matches(|c| c == '"' || c == '\'')
                .trim()
                .trim_start_matches('#')
                .to_string()
        })
        .filter(|v| !v.is_empty())
        .collect()
}

/// Link targets: `[[target#h|alias]]`, `![[…]]` and `[text](target)` (not URLs), without the
/// `#` part, `%20` decoded. A link inside a `code span`, a `%%comment%%` or an
/// `<!-- HTML comment -->` is none; a wikilink that opens
/// outside one runs to its `]]`, backticks and all (Templater's `[[<% `…` %>]]`); its target
/// ends at the first `|` (`![[a.jpg | center | 64]]`).
fn link_targets(text: &str) -> Vec<String> {
    let mut targets = Vec::new();
    let mut in_code = false;
    let mut k = 0;
    while k < text.len() {
        let rest = &text[k..];
        if rest.starts_with('\n') {
            in_code = false;
        } else if rest.starts_with('`') {
            in_code = !in_code;
        } else if !in_code && rest.starts_with("<!--") {
            // An HTML comment hides its links, and so does an Obsidian comment.
            k += rest.find("-->").map_or(rest.len(), |end| end + 3);
            continue;
        } else if !in_code && rest.starts_with("%%") {
            k += rest[2..].find("%%").map_or(rest.len(), |end| end + 4);
            continue;
        } else if !in_code && rest.starts_with("[[") {
            if let Some(end) = rest[2..].find("]]") {
                let inner = &rest[2..2 + end];
                if !inner.contains('\n') {
                    // In a table the alias's `|` is written `\|`.
                    let path = inner.split('|').next().unwrap().trim_end_matches('\\');
                    let path = path.split('#').next().unwrap();
                    targets.push(path.trim().to_string());
                    k += 2 + end + 2;
                    continue;
                }
            }
        } else if !in_code
            && rest.starts_with("](")
            && let Some(end) = rest[2..].find(')')
        {
            let url = rest[2..2 + end]
                .trim()
                .trim_start_matches('<')
                .trim_end_matches('>');
            let url = url.split(' ').next().unwrap_or("");
            if !url.contains(':') && !url.starts_with('#') && !url.is_empty() {
                targets.push(url.split('#').next().unwrap().replace("%20", " "));
            }
        }
        k += rest.chars().next().map_or(1, char::len_utf8);
    }
    targets.into_iter().filter(|t| !t.is_empty()).collect()
}

fn file_name(path: &str) -> &str {
    path.rsplit('/').next().unwrap()
}

fn folder(path: &str) -> &str {
    path.rsplit_once('/').map_or("", |(f, _)| f)
}

/// What a plain lookup makes of a link.
#[derive(Debug, Clone, PartialEq)]
enum Plain {
    Note(usize),
    Attachment(String),
    Unresolved,
    /// Several notes share the name, or only an alias or a partial path matches: this simple
    /// reading does not decide, and the comparison leaves the link's notes out.
    Undecided(Vec<usize>),
}

struct PlainVault {
    notes: Vec<PlainNote>,
    attachments: Vec<String>,
    /// Per note, what each of its links is.
    links: Vec<Vec<(String, Plain)>>,
}

impl PlainVault {
    fn read(root: &Path, skipped: &BTreeSet<String>) -> PlainVault {
        let (mut paths, mut attachments) = (Vec::new(), Vec::new());
        walk(root, "", &mut paths, &mut attachments);
        paths.retain(|p| !skipped.contains(p));
        paths.sort();
        attachments.sort();
        let notes: Vec<PlainNote> = paths
            .iter()
            .map(|p| {
                let mut text = std::fs::read_to_string(root.join(p)).unwrap();
                if p.ends_with(".canvas") {
                    // Its JSON as the text and wikilinks of its nodes (quire_vault::canvas).
                    text = quire_vault::canvas::canvas_markdown(&text).unwrap();
                }
                let (frontmatter, body) = split_frontmatter(&text);
                PlainNote {
                    path: p.clone(),
                    frontmatter,
                    body,
                }
            })
            .collect();
        let stem = |p: &str| {
            file_name(p)
                .to_lowercase()
                .trim_end_matches(".md")
                .to_string()
        };
        let mut by_stem: BTreeMap<String, Vec<usize>> = BTreeMap::new();
        let mut aliases: BTreeSet<String> = BTreeSet::new();
        for (i, n) in notes.iter().enumerate() {
            by_stem.entry(stem(&n.path)).or_default().push(i);
            for a in property_list(&n.frontmatter, &["aliases", "alias"], false) {
                aliases.insert(a.to_lowercase());
            }
        }
        let by_path: BTreeMap<String, usize> = notes
            .iter()
            .enumerate()
            .map(|(i, n)| (n.path.to_lowercase().trim_end_matches(".md").to_string(), i))
            .collect();
        let attachment_names: BTreeSet<String> = attachments
            .iter()
            .map(|a| file_name(a).to_lowercase())
            .collect();
        let links = notes
            .iter()
            .map(|n| {
                let text = format!("{}\n{}", n.frontmatter, visible(&n.body, true));
                link_targets(&text)
                    .into_iter()
                    .map(|target| {
                        let lower = target.to_lowercase();
                        let name = file_name(&lower).to_string();
                        let plain = if attachment_names.contains(&name) {
                            Plain::Attachment(name)
                        } else if lower.contains('.') && !lower.ends_with(".md") {
                            // Another extension, no such file: a note named with a dot, or a
                            // missing attachment.
                            match by_stem.get(&name) {
                                Some(found) => Plain::Undecided(found.clone()),
                                None => Plain::Unresolved,
                            }
                        } else {
                            let key = lower.trim_end_matches(".md").to_string();
                            let joined = format!("{}/{}", folder(&n.path).to_lowercase(), key);
                            let exact = by_path
                                .get(&key)
                                .or_else(|| by_path.get(joined.trim_start_matches('/')));
                            match (exact, by_stem.get(stem(&key).as_str())) {
                                (Some(&i), _) if !key.contains("..") => Plain::Note(i),
                                (_, Some(found)) if found.len() == 1 && !key.contains('/') => {
                                    Plain::Note(found[0])
                                }
                                (_, Some(found)) => Plain::Undecided(found.clone()),
                                (_, None) if aliases.contains(&lower) => {
                                    Plain::Undecided(Vec::new())
                                }
                                (_, None) => Plain::Unresolved,
                            }
                        };
                        (target, plain)
                    })
                    .collect()
            })
            .collect();
        PlainVault {
            notes,
            attachments,
            links,
        }
    }

    /// Notes some undecided link starts from or may point to.
    fn undecided(&self) -> BTreeSet<usize> {
        let mut out = BTreeSet::new();
        for (i, links) in self.links.iter().enumerate() {
            for (_, plain) in links {
                if let Plain::Undecided(candidates) = plain {
                    out.insert(i);
                    out.extend(candidates);
                }
            }
        }
        out
    }

    /// Distinct other notes each note links to.
    fn outgoing(&self) -> Vec<BTreeSet<usize>> {
        self.links
            .iter()
            .enumerate()
            .map(|(i, links)| {
                links
                    .iter()
                    .filter_map(|(_, p)| match p {
                        Plain::Note(j) if *j != i => Some(*j),
                        _ => None,
                    })
                    .collect()
            })
            .collect()
    }
}

// ---------------------------------------------------------------------------------------------

fn open_copy(name: &str) -> (tempfile::TempDir, Vault) {
    let source = quire_testkit::corpora().join("vaults").join(name);
    let dir = tempfile::tempdir().unwrap();
    quire_testkit::copy_tree(&source, dir.path());
    let vault = Vault::open(dir.path(), &OpenOptions::default()).unwrap();
    (dir, vault)
}

fn paths(vault: &Vault, set: impl IntoIterator<Item = usize>) -> Vec<String> {
    set.into_iter()
        .map(|i| vault.notes[i].path.clone())
        .collect()
}

/// Checks one vault; returns a line of figures for the log.
fn check_vault(name: &str) -> String {
    let (dir, vault) = open_copy(name);
    let report = audit(&vault, &AuditOptions::default());
    let skipped: BTreeSet<String> = vault.skipped.iter().map(|s| s.path.clone()).collect();
    let plain = PlainVault::read(dir.path(), &skipped);
    let n = plain.notes.len();

    // Notes and attachments: the walk finds what the scan read.
    assert_eq!(report.summary.notes, n, "{name}: notes");
    assert_eq!(
        plain
            .notes
            .iter()
            .map(|p| p.path.clone())
            .collect::<Vec<_>>(),
        paths(&vault, 0..vault.notes.len()),
        "{name}: note paths"
    );
    assert_eq!(
        report.summary.attachments,
        plain.attachments.len(),
        "{name}: attachments"
    );

    // Notes per folder, and every ancestor folder counted with what is below it.
    let mut direct: BTreeMap<&str, usize> = BTreeMap::new();
    for note in &plain.notes {
        *direct.entry(folder(&note.path)).or_default() += 1;
    }
    let audited: BTreeMap<&str, usize> = report
        .folders
        .iter()
        .filter(|f| f.notes > 0)
        .map(|f| (f.path.as_str(), f.notes))
        .collect();
    assert_eq!(audited, direct, "{name}: notes per folder");
    for f in &report.folders {
        let below = plain
            .notes
            .iter()
            .filter(|p| f.path.is_empty() || p.path.starts_with(&format!("{}/", f.path)))
            .count();
        assert_eq!(f.notes_below, below, "{name}: notes below {}", f.path);
        let depth = if f.path.is_empty() {
            0
        } else {
            f.path.matches('/').count() + 1
        };
        assert_eq!(f.depth, depth, "{name}: depth of {}", f.path);
    }
    let deepest = direct
        .keys()
        .map(|f| {
            if f.is_empty() {
                0
            } else {
                f.matches('/').count() + 1
            }
        })
        .max()
        .unwrap_or(0);
    assert_eq!(report.summary.max_depth, deepest, "{name}: deepest folder");

    // Tags: the notes of each tag as written (frontmatter lists and visible `#tags`). Notes with
    // JSON frontmatter (`{"tags": …}`, valid YAML that this line reader does not parse) are left
    // out.
    let tag_undecided: BTreeSet<usize> = (0..n)
        .filter(|&i| plain.notes[i].frontmatter.trim_start().starts_with('{'))
        .collect();
    let mut plain_tags: BTreeMap<String, BTreeSet<usize>> = BTreeMap::new();
    for (i, note) in plain.notes.iter().enumerate() {
        if tag_undecided.contains(&i) {
            continue;
        }
        let mut names = property_list(&note.frontmatter, &["tags", "tag"], true);
        names.extend(inline_tags(&visible(&note.body, false)));
        for tag in names {
            plain_tags.entry(tag).or_default().insert(i);
        }
    }
    let plain_counts: BTreeMap<&str, usize> = plain_tags
        .iter()
        .map(|(t, notes)| (t.as_str(), notes.len()))
        .collect();
    // The audit's count, less the left-out notes quire found the tag in.
    let left_out = |tag: &str| {
        tag_undecided
            .iter()
            .filter(|&&i| vault.notes[i].tags.iter().any(|t| t.name == tag))
            .count()
    };
    let audited_counts: BTreeMap<&str, usize> = report
        .tags
        .iter()
        .map(|t| (t.name.as_str(), t.notes - left_out(&t.name)))
        .filter(|(_, count)| *count > 0)
        .collect();
    assert_eq!(audited_counts, plain_counts, "{name}: notes per tag");
    let singletons: Vec<&str> = plain_counts
        .iter()
        .filter(|(t, c)| **c == 1 && left_out(t) == 0)
        .map(|(t, _)| *t)
        .collect();
    let audited_singletons: Vec<&str> = report
        .singleton_tags
        .iter()
        .map(String::as_str)
        .filter(|t| left_out(t) == 0)
        .collect();
    assert_eq!(audited_singletons, singletons, "{name}: singleton tags");

    // Links. Where this plain resolution decides, it must agree with the vault's; notes that an
    // undecided link (a shared file name, an alias, a partial path) starts from or may point to
    // are left out of the graph comparisons, as their links and backlinks cannot be known here.
    let undecided = plain.undecided();
    let decided = |i: &usize| !undecided.contains(i);
    let outgoing = plain.outgoing();
    let mut compared_links = 0;
    for i in (0..n).filter(decided) {
        let expected: Vec<String> = paths(&vault, outgoing[i].iter().copied());
        assert_eq!(
            paths(&vault, vault.graph.outgoing[i].iter().copied()),
            expected,
            "{name}: links of {}",
            plain.notes[i].path
        );
        compared_links += expected.len();
    }
    let mut backlinks = vec![BTreeSet::new(); n];
    for (i, targets) in outgoing.iter().enumerate() {
        for &j in targets {
            backlinks[j].insert(i);
        }
    }
    // Orphans and dead ends among the decided notes; backlinks of a decided note can only come
    // from a decided note (an undecided link makes its candidates undecided).
    let compare = |what: &str, audited: &[String], linked_to: bool| {
        let plain_list: Vec<String> = (0..n)
            .filter(decided)
            .filter(|&i| outgoing[i].is_empty())
            .filter(|&i| backlinks[i].is_empty() != linked_to)
            .map(|i| plain.notes[i].path.clone())
            .collect();
        let audited: Vec<String> = audited
            .iter()
            .filter(|p| decided(&vault.index_of(p).unwrap()))
            .cloned()
            .collect();
        assert_eq!(audited, plain_list, "{name}: {what}");
    };
    // Orphans: no link out, none in. Dead ends: no link out, some in.
    compare("orphans", &report.orphans, false);
    compare("dead ends", &report.dead_ends, true);
    for hub in report.most_linked.iter().chain(&report.most_linking) {
        let i = vault.index_of(&hub.path).unwrap();
        if decided(&i) {
            let counts = [backlinks[i].len(), outgoing[i].len()];
            assert!(
                counts.contains(&hub.count),
                "{name}: hub {} {}",
                hub.path,
                hub.count
            );
        }
    }
    // Unresolved links of decided notes: the same targets, note by note.
    let mut compared_unresolved = 0;
    for i in (0..n).filter(decided) {
        let expected: BTreeSet<String> = plain.links[i]
            .iter()
            .filter(|(_, p)| *p == Plain::Unresolved)
            .map(|(t, _)| t.to_lowercase())
            .collect();
        let audited: BTreeSet<String> = report
            .unresolved_links
            .iter()
            .filter(|u| u.note == plain.notes[i].path)
            .map(|u| u.target.to_lowercase())
            .collect();
        assert_eq!(
            audited, expected,
            "{name}: unresolved links of {}",
            plain.notes[i].path
        );
        compared_unresolved += expected.len();
    }

    // Attachments no link names (by file name, which is how this plain reading matches them).
    let named: BTreeSet<String> = plain
        .links
        .iter()
        .flatten()
        .filter_map(|(_, link)| match link {
            Plain::Attachment(name) => Some(name.clone()),
            _ => None,
        })
        .collect();
    let plain_unlinked: Vec<String> = plain
        .attachments
        .iter()
        .filter(|a| !named.contains(&file_name(a).to_lowercase()))
        .cloned()
        .collect();
    assert_eq!(
        report.unlinked_attachments, plain_unlinked,
        "{name}: unlinked attachments"
    );

    // Empty notes, notes without headings (ATX `# `; the shared vaults write no setext
    // headings, which the assertion would catch), duplicate titles.
    let plain_empty: Vec<String> = plain
        .notes
        .iter()
        .filter(|p| p.body.trim().is_empty())
        .map(|p| p.path.clone())
        .collect();
    assert_eq!(report.empty_notes, plain_empty, "{name}: empty notes");
    let heading_of = |line: &str| {
        let hashes = line.chars().take_while(|c| *c == '#').count();
        ((1..=6).contains(&hashes)
            && line[hashes..]
                .chars()
                .next()
                .is_none_or(|c| c == ' ' || c == '\t'))
        .then(|| line[hashes..].trim().to_string())
        .map(|text| (hashes, text))
    };
    let headings = |p: &PlainNote| -> Vec<(usize, String)> {
        visible(&p.body, false)
            .lines()
            .filter_map(|l| heading_of(l.trim_start_matches([' '])))
            .collect()
    };
    let plain_headless: Vec<String> = plain
        .notes
        .iter()
        .filter(|p| !p.body.trim().is_empty() && headings(p).is_empty())
        .map(|p| p.path.clone())
        .collect();
    assert_eq!(
        report.notes_without_headings, plain_headless,
        "{name}: notes without headings"
    );
    let mut by_title: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for p in &plain.notes {
        let title = headings(p)
            .into_iter()
            // Obsidian's rule as quire follows it: a template's `# {{title}}` or
            // `# <% tp.file.title %>` is no title.
            .find(|(level, t)| {
                *level == 1 && !t.is_empty() && !t.starts_with("{{") && !t.starts_with("<%")
            })
            .map(|(_, t)| t)
            .unwrap_or_else(|| file_name(&p.path).trim_end_matches(".md").to_string());
        by_title
            .entry(title.to_lowercase())
            .or_default()
            .push(p.path.clone());
    }
    let plain_duplicates: Vec<Vec<String>> =
        by_title.into_values().filter(|g| g.len() > 1).collect();
    let audited_duplicates: Vec<Vec<String>> = report
        .duplicate_titles
        .iter()
        .map(|t| t.paths.clone())
        .collect();
    assert_eq!(
        audited_duplicates, plain_duplicates,
        "{name}: duplicate titles"
    );

    check_against_manifest(name, &vault, &report);
    for grouping in [Grouping::Folder, Grouping::Component] {
        check_canvas(name, &vault, grouping);
    }
    let markdown = render_markdown(&report);
    assert!(markdown.starts_with("# Vault audit\n"));
    assert!(markdown.contains(&format!("## Orphans ({})", report.orphans.len())));

    format!(
        "{name}: {n} notes, {} folders (depth {}), {} tags ({} singletons, {} near-duplicate families), \
         {} orphans, {} dead ends, {} unresolved, {} unlinked attachments, {} components (largest {}), \
         {} empty, {} without headings, {} duplicate titles; compared independently: {} of {n} notes' links \
         ({compared_links} links, {compared_unresolved} unresolved)",
        report.summary.folders,
        report.summary.max_depth,
        report.summary.tags,
        report.singleton_tags.len(),
        report.near_duplicate_tags.len(),
        report.summary.orphans,
        report.summary.dead_ends,
        report.summary.unresolved_links,
        report.summary.unlinked_attachments,
        report.summary.components,
        report.components.largest,
        report.summary.empty_notes,
        report.summary.notes_without_headings,
        report.summary.duplicate_titles,
        n - undecided.len(),
    )
}

/// Where the manifest says the same thing, the audit says exactly what it says.
fn check_against_manifest(name: &str, vault: &Vault, report: &AuditReport) {
    let manifest = manifest(vault);
    assert_eq!(report.orphans, manifest.orphans, "{name}: manifest orphans");
    assert_eq!(report.summary.notes, manifest.note_count);
    let mut unresolved: BTreeMap<&str, BTreeSet<&str>> = BTreeMap::new();
    for u in &report.unresolved_links {
        unresolved.entry(&u.note).or_default().insert(&u.target);
    }
    for row in &manifest.notes {
        let audited = unresolved.remove(row.path.as_str()).unwrap_or_default();
        let listed: BTreeSet<&str> = row.unresolved_links.iter().map(String::as_str).collect();
        assert_eq!(
            audited, listed,
            "{name}: manifest unresolved links of {}",
            row.path
        );
    }
    assert!(unresolved.is_empty());
    let rows: BTreeMap<&str, _> = manifest
        .notes
        .iter()
        .map(|r| (r.path.as_str(), r))
        .collect();
    let dead_ends: Vec<String> = manifest
        .notes
        .iter()
        .filter(|r| r.backlinks_count > 0 && r.links_out.is_empty())
        .map(|r| r.path.clone())
        .collect();
    assert_eq!(report.dead_ends, dead_ends, "{name}: manifest dead ends");
    let mut by_backlinks: Vec<(usize, &str)> = manifest
        .notes
        .iter()
        .filter(|r| r.backlinks_count > 0)
        .map(|r| (r.backlinks_count, r.path.as_str()))
        .collect();
    by_backlinks.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(b.1)));
    let top: Vec<(usize, &str)> = report
        .most_linked
        .iter()
        .map(|h| (h.count, h.path.as_str()))
        .collect();
    assert_eq!(top, by_backlinks[..top.len()], "{name}: most linked");
    for hub in &report.most_linking {
        assert_eq!(rows[hub.path.as_str()].links_out.len(), hub.count);
    }
    let links: usize = manifest.notes.iter().map(|r| r.links_out.len()).sum();
    assert_eq!(
        report.summary.note_links, links,
        "{name}: links between notes"
    );
}

/// The canvas against the JSON Canvas 1.0 rules, on its JSON form.
fn check_canvas(name: &str, vault: &Vault, grouping: Grouping) {
    let map = canvas(vault, grouping);
    let json = serde_json::to_value(&map).unwrap();
    let nodes = json["nodes"].as_array().unwrap();
    let edges = json["edges"].as_array().unwrap();
    let mut ids = BTreeSet::new();
    let mut rects = Vec::new();
    for node in nodes {
        let id = node["id"].as_str().unwrap();
        assert!(ids.insert(id.to_string()), "{name}: duplicate id {id}");
        for key in ["x", "y", "width", "height"] {
            assert!(
                node[key].is_i64(),
                "{name}: {key} of {id} is not an integer"
            );
        }
        assert!(node["width"].as_i64().unwrap() > 0 && node["height"].as_i64().unwrap() > 0);
        match node["type"].as_str().unwrap() {
            "file" => {
                let file = node["file"].as_str().unwrap();
                assert!(vault.index_of(file).is_some(), "{name}: {file} is a note");
            }
            "group" => assert!(node["label"].is_string()),
            other => panic!("{name}: unexpected node type {other}"),
        }
        if let Some(color) = node.get("color") {
            assert!(["1", "2", "3", "4", "5", "6"].contains(&color.as_str().unwrap()));
        }
        let r = |k: &str| node[k].as_i64().unwrap();
        rects.push((
            node["type"].as_str().unwrap() == "group",
            id,
            r("x"),
            r("y"),
            r("x") + r("width"),
            r("y") + r("height"),
        ));
    }
    for edge in edges {
        let id = edge["id"].as_str().unwrap();
        assert!(ids.insert(id.to_string()), "{name}: duplicate id {id}");
        for end in ["fromNode", "toNode"] {
            let node = edge[end].as_str().unwrap();
            assert!(
                ids.contains(node) && node.starts_with('n'),
                "{name}: {id} {end} {node}"
            );
        }
    }
    // One file node per note, one edge per linked pair.
    let files = rects.iter().filter(|r| !r.0).count();
    assert_eq!(files, vault.notes.len());
    assert_eq!(
        edges.len(),
        vault.graph.outgoing.iter().map(Vec::len).sum::<usize>()
    );
    // Groups come first (drawn below), never overlap, and each file lies inside exactly one.
    let groups: Vec<_> = rects.iter().filter(|r| r.0).collect();
    assert!(
        nodes
            .iter()
            .take(groups.len())
            .all(|n| n["type"] == "group")
    );
    let overlap = |a: &(bool, &str, i64, i64, i64, i64), b: &(bool, &str, i64, i64, i64, i64)| {
        a.2 < b.4 && b.2 < a.4 && a.3 < b.5 && b.3 < a.5
    };
    for (k, a) in groups.iter().enumerate() {
        for b in &groups[k + 1..] {
            assert!(!overlap(a, b), "{name}: groups {} and {} overlap", a.1, b.1);
        }
    }
    let files: Vec<_> = rects.iter().filter(|r| !r.0).collect();
    for f in &files {
        let inside = groups
            .iter()
            .filter(|g| g.2 <= f.2 && g.3 <= f.3 && f.4 <= g.4 && f.5 <= g.5)
            .count();
        assert_eq!(inside, 1, "{name}: {} lies in {inside} groups", f.1);
    }
    for (k, a) in files.iter().enumerate() {
        for b in &files[k + 1..] {
            assert!(!overlap(a, b), "{name}: notes {} and {} overlap", a.1, b.1);
        }
    }
    if grouping == Grouping::Folder {
        let folders: BTreeSet<&str> = vault.notes.iter().map(|n| folder(&n.path)).collect();
        assert_eq!(groups.len(), folders.len(), "{name}: a group per folder");
    }
    // Deterministic: the same vault gives the same bytes.
    assert!(
        serde_json::to_value(canvas(vault, grouping)).unwrap() == json,
        "{name}: same canvas"
    );
}

#[test]
fn the_audit_of_each_shared_vault_matches_a_plain_count() {
    let mut lines = Vec::new();
    for name in VAULTS {
        lines.push(check_vault(name));
    }
    for line in &lines {
        println!("{line}");
    }
}

#[test]
fn the_same_vault_gives_the_same_report() {
    let (_dir, vault) = open_copy("obsidian-starter-vault");
    let first = serde_json::to_string(&audit(&vault, &AuditOptions::default())).unwrap();
    let (_dir2, again) = open_copy("obsidian-starter-vault");
    assert_eq!(
        serde_json::to_string(&audit(&again, &AuditOptions::default())).unwrap(),
        first
    );
}
