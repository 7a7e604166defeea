//! The structural audit of an Obsidian vault: what can be said about its shape from the files
//! alone, with no index and no model. Folders and their depth; tags, their hierarchy, singletons
//! and near-duplicates (`#todo`, `#todos`, `#ToDo`); orphans, dead ends, unresolved links with
//! their line; attachments no note links to; the components of the link graph and their small
//! islands; hubs; empty, oversized and heading-less notes; titles that several notes share.
//!
//! Everything is read from a parsed [`quire_vault::Vault`]: links are resolved by the vault's
//! own [`quire_vault::links::LinkResolver`] and [`quire_vault::links::LinkGraph`], so an orphan
//! or an unresolved link here is exactly one in `quire manifest`. This crate does no I/O: it
//! turns a vault into an [`AuditReport`] (serializable, every list in a stable order, so the
//! same vault gives the same bytes), renders it as Markdown ([`render_markdown`]: tables, long
//! lists cut with "… and N more") and lays the vault out as a JSON Canvas 1.0 map ([`canvas()`]).
//!
//! ```
//! use quire_audit::{AuditOptions, audit, render_markdown};
//! use quire_vault::{OpenOptions, Vault};
//!
//! let dir = tempfile::tempdir().unwrap();
//! std::fs::write(dir.path().join("Home.md"), "# Home\n\nSee [[Trip]] and [[Nowhere]].\n").unwrap();
//! std::fs::write(dir.path().join("Trip.md"), "Packing list #travel\n").unwrap();
//! std::fs::write(dir.path().join("Alone.md"), "").unwrap();
//! let vault = Vault::open(dir.path(), &OpenOptions::default()).unwrap();
//!
//! let report = audit(&vault, &AuditOptions::default());
//! assert_eq!(report.orphans, ["Alone.md"]);
//! assert_eq!(report.dead_ends, ["Trip.md"]);
//! assert_eq!(report.unresolved_links[0].target, "Nowhere");
//! assert_eq!(report.unresolved_links[0].line, 3);
//! assert_eq!(report.empty_notes, ["Alone.md"]);
//! assert!(render_markdown(&report).contains("## Unresolved links"));
//! ```

pub mod canvas;
pub mod findings;
mod graph;
mod render;
mod tags;
pub mod topics;

use std::collections::{BTreeMap, BTreeSet};

use quire_vault::Vault;
use quire_vault::links::Resolution;
use serde::Serialize;

pub use canvas::{Canvas, Grouping, canvas};
pub use findings::{Finding, FindingKind, findings};
pub use render::render_markdown;

/// The settings of an audit: how many hubs to list, and the thresholds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct AuditOptions {
    /// Hubs listed in each ranking (most linked, most linking).
    pub top: usize,
    /// A note with more words than this (body words outside comments, as
    /// [`quire_vault::Note::word_count`] counts them) is oversized.
    pub oversized_words: usize,
    /// A component of the link graph with at least 2 and at most this many notes, not the
    /// largest, is an island whose notes are listed.
    pub island_max_notes: usize,
}

impl Default for AuditOptions {
    /// Top 10, oversized above 5,000 words, islands of at most 3 notes.
    fn default() -> Self {
        AuditOptions {
            top: 10,
            oversized_words: 5_000,
            island_max_notes: 3,
        }
    }
}

/// The structural audit of one vault. Paths are vault-relative; every list is sorted (by path,
/// or by count then path), so the same vault always gives the same report.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct AuditReport {
    /// The settings the audit ran with.
    pub options: AuditOptions,
    /// The counts, at a glance.
    pub summary: Summary,
    /// Every folder that holds a note (directly or below), the root (`""`) first, then by path.
    pub folders: Vec<FolderStat>,
    /// Notes by the depth of their folder (0: the vault's root), by depth.
    pub depths: Vec<DepthCount>,
    /// Every tag as written (case kept), most used first, then by name.
    pub tags: Vec<TagStat>,
    /// The tag hierarchy (`a/b/c` under `a/b` under `a`), each level counting the notes tagged
    /// with it or below it, as Obsidian's tag pane does.
    pub tag_tree: Vec<TagNode>,
    /// Tags only one note has, by name.
    pub singleton_tags: Vec<String>,
    /// Tags that differ only in case, `-`/`_`, or a plural `s`/`es` (`todo`, `todos`, `ToDo`).
    pub near_duplicate_tags: Vec<TagFamily>,
    /// Notes with no link to another note and none from one (as `quire manifest` says).
    pub orphans: Vec<String>,
    /// Notes other notes link to that link to no note.
    pub dead_ends: Vec<String>,
    /// Links that find no note or attachment, by note and line.
    pub unresolved_links: Vec<UnresolvedLinkAt>,
    /// Attachments (non-Markdown files) that no note links to or embeds.
    pub unlinked_attachments: Vec<String>,
    /// The connected components of the link graph, links taken in both directions.
    pub components: Components,
    /// The notes most other notes link to (at most [`AuditOptions::top`], count > 0).
    pub most_linked: Vec<Hub>,
    /// The notes that link to the most other notes (at most [`AuditOptions::top`], count > 0).
    pub most_linking: Vec<Hub>,
    /// Notes with nothing but whitespace after their frontmatter.
    pub empty_notes: Vec<String>,
    /// Notes over [`AuditOptions::oversized_words`] words, largest first.
    pub oversized_notes: Vec<NoteSize>,
    /// Notes that are not empty and have no heading.
    pub notes_without_headings: Vec<String>,
    /// Titles (compared case-insensitively) that more than one note has.
    pub duplicate_titles: Vec<TitleGroup>,
}

/// The counts of an [`AuditReport`].
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Summary {
    /// Notes read.
    pub notes: usize,
    /// Attachments (files that are not notes).
    pub attachments: usize,
    /// Files the scan left out or could not read as notes.
    pub skipped: usize,
    /// Folders holding a note, the root included.
    pub folders: usize,
    /// The deepest folder holding a note (0: only the root).
    pub max_depth: usize,
    /// Distinct tags as written.
    pub tags: usize,
    /// Links between two different notes, counted once per pair and direction.
    pub note_links: usize,
    /// Links that find nothing, counted once per occurrence.
    pub unresolved_links: usize,
    /// See [`AuditReport::orphans`].
    pub orphans: usize,
    /// See [`AuditReport::dead_ends`].
    pub dead_ends: usize,
    /// See [`AuditReport::unlinked_attachments`].
    pub unlinked_attachments: usize,
    /// Components of the link graph, single notes included.
    pub components: usize,
    /// See [`AuditReport::empty_notes`].
    pub empty_notes: usize,
    /// See [`AuditReport::oversized_notes`].
    pub oversized_notes: usize,
    /// See [`AuditReport::notes_without_headings`].
    pub notes_without_headings: usize,
    /// Titles shared by several notes.
    pub duplicate_titles: usize,
}

/// One folder of the vault.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FolderStat {
    /// Vault-relative, `/`-separated; `""` for the root.
    pub path: String,
    /// 0 for the root, 1 for a top-level folder, and so on.
    pub depth: usize,
    /// Notes directly in it.
    pub notes: usize,
    /// Notes in it and in its sub-folders.
    pub notes_below: usize,
}

/// How many notes sit at one folder depth.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct DepthCount {
    /// The folder depth (0: the root).
    pub depth: usize,
    /// Notes whose folder has this depth.
    pub notes: usize,
}

/// One tag as written.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct TagStat {
    /// The tag without `#`, case kept.
    pub name: String,
    /// Distinct notes that have it.
    pub notes: usize,
    /// Times it is written (frontmatter and inline).
    pub uses: usize,
}

/// A level of the tag hierarchy.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct TagNode {
    /// This level's name (`c` of `a/b/c`).
    pub name: String,
    /// The whole tag up to this level (`a/b/c`).
    pub path: String,
    /// Distinct notes tagged with this tag or one below it.
    pub notes: usize,
    /// The levels below, by name.
    pub children: Vec<TagNode>,
}

/// Tags that are probably one tag written several ways.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct TagFamily {
    /// The spellings, by name.
    pub variants: Vec<TagStat>,
}

/// A link that finds no note or attachment.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct UnresolvedLinkAt {
    /// The note it is written in.
    pub note: String,
    /// The line it is on, 1-based.
    pub line: usize,
    /// The link path as written (without `#heading` or `|alias`).
    pub target: String,
}

/// The connected components of the link graph.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Components {
    /// Components, single notes included.
    pub count: usize,
    /// Their sizes, largest first.
    pub sizes: Vec<usize>,
    /// Notes in the largest component.
    pub largest: usize,
    /// Small islands: components other than the largest with 2 to
    /// [`AuditOptions::island_max_notes`] notes, each listing its notes (by path). Single notes
    /// are the orphans.
    pub islands: Vec<Vec<String>>,
}

/// A note and how many distinct notes link to it (or it links to).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Hub {
    /// The note.
    pub path: String,
    /// Distinct other notes.
    pub count: usize,
}

/// An oversized note.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct NoteSize {
    /// The note.
    pub path: String,
    /// Words of its body outside comments.
    pub words: usize,
    /// Bytes of its text.
    pub bytes: usize,
}

/// Notes that share a title.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct TitleGroup {
    /// The title as the first of the notes (by path) writes it.
    pub title: String,
    /// The notes, by path.
    pub paths: Vec<String>,
}

/// Audits `vault`.
pub fn audit(vault: &Vault, options: &AuditOptions) -> AuditReport {
    let notes = &vault.notes;
    let graph = &vault.graph;
    let path = |i: usize| notes[i].path.clone();

    let (folders, depths) = folders(vault);
    let tags = tags::tag_stats(notes);
    let tag_tree = tags::tag_tree(notes);
    let singleton_tags = tags
        .iter()
        .filter(|t| t.notes == 1)
        .map(|t| t.name.clone())
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    let near_duplicate_tags = tags::near_duplicates(&tags);

    let orphans: Vec<String> = graph.orphans().into_iter().map(path).collect();
    let dead_ends: Vec<String> = (0..notes.len())
        .filter(|&i| !graph.backlinks[i].is_empty() && graph.outgoing[i].is_empty())
        .map(path)
        .collect();
    let mut unresolved_links: Vec<UnresolvedLinkAt> = graph
        .unresolved
        .iter()
        .enumerate()
        .flat_map(|(i, links)| {
            links.iter().map(move |link| UnresolvedLinkAt {
                note: notes[i].path.clone(),
                line: link.line,
                target: link.target.clone(),
            })
        })
        .collect();
    unresolved_links
        .sort_by(|a, b| (&a.note, a.line, &a.target).cmp(&(&b.note, b.line, &b.target)));

    let linked: BTreeSet<&str> = graph
        .resolutions
        .iter()
        .flatten()
        .filter_map(|r| match r {
            Some(Resolution::Attachment(p)) => Some(p.as_str()),
            _ => None,
        })
        .collect();
    let unlinked_attachments: Vec<String> = vault
        .attachments
        .iter()
        .filter(|a| !linked.contains(a.as_str()))
        .cloned()
        .collect();

    let components = graph::components(vault, options.island_max_notes);
    let most_linked = graph::top(vault, &graph.backlinks, options.top);
    let most_linking = graph::top(vault, &graph.outgoing, options.top);

    let empty: Vec<bool> = notes.iter().map(is_empty).collect();
    let empty_notes: Vec<String> = (0..notes.len()).filter(|&i| empty[i]).map(path).collect();
    let mut oversized_notes: Vec<NoteSize> = notes
        .iter()
        .filter(|n| n.word_count > options.oversized_words)
        .map(|n| NoteSize {
            path: n.path.clone(),
            words: n.word_count,
            bytes: n.source.len(),
        })
        .collect();
    oversized_notes.sort_by(|a, b| b.words.cmp(&a.words).then_with(|| a.path.cmp(&b.path)));
    let notes_without_headings: Vec<String> = (0..notes.len())
        .filter(|&i| !empty[i] && notes[i].headings.is_empty())
        .map(path)
        .collect();
    let duplicate_titles = duplicate_titles(vault);

    let summary = Summary {
        notes: notes.len(),
        attachments: vault.attachments.len(),
        skipped: vault.skipped.len(),
        folders: folders.len(),
        max_depth: depths.last().map_or(0, |d| d.depth),
        tags: tags.len(),
        note_links: graph.outgoing.iter().map(Vec::len).sum(),
        unresolved_links: unresolved_links.len(),
        orphans: orphans.len(),
        dead_ends: dead_ends.len(),
        unlinked_attachments: unlinked_attachments.len(),
        components: components.count,
        empty_notes: empty_notes.len(),
        oversized_notes: oversized_notes.len(),
        notes_without_headings: notes_without_headings.len(),
        duplicate_titles: duplicate_titles.len(),
    };
    AuditReport {
        options: *options,
        summary,
        folders,
        depths,
        tags,
        tag_tree,
        singleton_tags,
        near_duplicate_tags,
        orphans,
        dead_ends,
        unresolved_links,
        unlinked_attachments,
        components,
        most_linked,
        most_linking,
        empty_notes,
        oversized_notes,
        notes_without_headings,
        duplicate_titles,
    }
}

/// The folder of a vault-relative path (`""` for the root).
pub(crate) fn folder_of(path: &str) -> &str {
    path.rsplit_once('/').map_or("", |(folder, _)| folder)
}

/// The depth of a folder: 0 for the root.
fn depth_of(folder: &str) -> usize {
    if folder.is_empty() {
        0
    } else {
        folder.split('/').count()
    }
}

/// Every folder holding a note (with its ancestors and the root), and notes per depth.
fn folders(vault: &Vault) -> (Vec<FolderStat>, Vec<DepthCount>) {
    let mut direct: BTreeMap<&str, usize> = BTreeMap::new();
    let mut below: BTreeMap<&str, usize> = BTreeMap::new();
    let mut depths: BTreeMap<usize, usize> = BTreeMap::new();
    below.insert("", 0);
    for note in &vault.notes {
        let folder = folder_of(&note.path);
        *direct.entry(folder).or_default() += 1;
        *depths.entry(depth_of(folder)).or_default() += 1;
        *below.entry("").or_default() += 1;
        for (i, _) in folder.match_indices('/') {
            *below.entry(&folder[..i]).or_default() += 1;
        }
        if !folder.is_empty() {
            *below.entry(folder).or_default() += 1;
        }
    }
    let folders = below
        .into_iter()
        .map(|(path, notes_below)| FolderStat {
            path: path.to_string(),
            depth: depth_of(path),
            notes: direct.get(path).copied().unwrap_or(0),
            notes_below,
        })
        .collect();
    let depths = depths
        .into_iter()
        .map(|(depth, notes)| DepthCount { depth, notes })
        .collect();
    (folders, depths)
}

/// Nothing but whitespace after the frontmatter.
fn is_empty(note: &quire_vault::Note) -> bool {
    note.lines(note.body_start_line, note.line_count)
        .is_none_or(|body| body.trim().is_empty())
}

/// Titles more than one note has, compared case-insensitively; by lowercase title.
fn duplicate_titles(vault: &Vault) -> Vec<TitleGroup> {
    let mut by_title: BTreeMap<String, Vec<usize>> = BTreeMap::new();
    for (i, note) in vault.notes.iter().enumerate() {
        by_title
            .entry(note.title.trim().to_lowercase())
            .or_default()
            .push(i);
    }
    by_title
        .into_values()
        .filter(|group| group.len() > 1)
        .map(|group| TitleGroup {
            title: vault.notes[group[0]].title.clone(),
            paths: group.iter().map(|&i| vault.notes[i].path.clone()).collect(),
        })
        .collect()
}
