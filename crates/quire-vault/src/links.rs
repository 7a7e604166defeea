//! Link resolution as Obsidian does it, and the link graph built from it.
//!
//! A link path resolves, in order: relative to the linking note's folder (`./`, `../`), as a full
//! vault path, as the end of a path (`Folder/Note` matches `A/Folder/Note.md`), by file name, and by
//! alias; all case-insensitive, `.md` optional. When several notes share a name, the one in the
//! linking note's folder wins, then the shortest path (Obsidian's "shortest path when possible").
//! Targets with another extension (`.png`, `.pdf`, `.canvas`) resolve against the vault's other
//! files. Pure: works on paths and parsed notes only.

use std::collections::{BTreeSet, HashMap};

use serde::Serialize;

use crate::model::{Link, LinkKind, Note};

/// What a link points to.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", content = "path", rename_all = "snake_case")]
pub enum Resolution {
    /// A note, by index into the vault's notes.
    Note(usize),
    /// A non-Markdown file of the vault, by vault-relative path.
    Attachment(String),
}

/// Finds link targets among a vault's notes and attachments.
#[derive(Debug, Clone, Default)]
pub struct LinkResolver {
    note_paths: Vec<String>,
    by_path: HashMap<String, usize>,
    by_name: HashMap<String, Vec<usize>>,
    by_alias: HashMap<String, Vec<usize>>,
    attachments: Vec<String>,
    attachment_by_path: HashMap<String, usize>,
    attachment_by_name: HashMap<String, Vec<usize>>,
}

fn key(path: &str) -> String {
    let lower = path.to_lowercase();
    match lower.strip_suffix(".md") {
        Some(stem) => stem.to_string(),
        None => lower,
    }
}

fn folder_of(path: &str) -> &str {
    path.rsplit_once('/').map(|(dir, _)| dir).unwrap_or("")
}

fn file_name(path: &str) -> &str {
    path.rsplit('/').next().unwrap_or(path)
}

/// `../../images/a.png` → `images/a.png`.
fn strip_leading_dots(path: &str) -> &str {
    let mut rest = path;
    loop {
        if let Some(r) = rest.strip_prefix("../") {
            rest = r;
        } else if let Some(r) = rest.strip_prefix("./") {
            rest = r;
        } else {
            return rest;
        }
    }
}

/// Joins `relative` onto `folder`, applying `.` and `..`; `None` if it climbs above the vault root.
pub fn join_relative(folder: &str, relative: &str) -> Option<String> {
    let mut parts: Vec<&str> = folder.split('/').filter(|p| !p.is_empty()).collect();
    for part in relative.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                parts.pop()?;
            }
            p => parts.push(p),
        }
    }
    Some(parts.join("/"))
}

impl LinkResolver {
    /// A resolver over `notes` (by path, file name and alias) and `attachments` (vault-relative
    /// paths).
    pub fn new(notes: &[Note], attachments: &[String]) -> Self {
        let mut r = LinkResolver {
            note_paths: notes.iter().map(|n| n.path.clone()).collect(),
            attachments: attachments.to_vec(),
            ..Default::default()
        };
        for (i, note) in notes.iter().enumerate() {
            r.by_path.entry(key(&note.path)).or_insert(i);
            r.by_name
                .entry(key(file_name(&note.path)))
                .or_default()
                .push(i);
            for alias in &note.aliases {
                r.by_alias.entry(alias.to_lowercase()).or_default().push(i);
            }
        }
        for (i, path) in attachments.iter().enumerate() {
            r.attachment_by_path.entry(path.to_lowercase()).or_insert(i);
            r.attachment_by_name
                .entry(file_name(path).to_lowercase())
                .or_default()
                .push(i);
        }
        r
    }

    /// Resolves a link path written in the note at `from`. An empty target is the note itself.
    pub fn resolve(&self, from: &str, target: &str) -> Option<Resolution> {
        let target = target.trim().trim_start_matches('/');
        if target.is_empty() {
            return self.by_path.get(&key(from)).copied().map(Resolution::Note);
        }
        let folder = folder_of(from);
        let ext = file_name(target)
            .rsplit_once('.')
            .map(|(_, e)| e.to_lowercase());
        let is_note = match ext.as_deref() {
            None | Some("md") => true,
            // A dot in a note name ("v1.2 notes") is not an extension unless such a file exists.
            Some(_) => !self.attachment_exists(folder, target),
        };
        if is_note {
            self.resolve_note(folder, target).map(Resolution::Note)
        } else {
            self.resolve_attachment(folder, target)
                .map(Resolution::Attachment)
        }
    }

    fn attachment_exists(&self, folder: &str, target: &str) -> bool {
        self.resolve_attachment(folder, target).is_some()
    }

    fn resolve_note(&self, folder: &str, target: &str) -> Option<usize> {
        let wanted = key(target);
        if (target.starts_with("./") || target.starts_with("../") || target.contains('/'))
            && let Some(joined) = join_relative(folder, &wanted)
            && let Some(&i) = self.by_path.get(&joined)
        {
            return Some(i);
        }
        if let Some(&i) = self.by_path.get(&wanted) {
            return Some(i);
        }
        if wanted.contains('/') {
            let suffix = format!("/{}", strip_leading_dots(&wanted));
            let found = self
                .note_paths
                .iter()
                .enumerate()
                .filter(|(_, p)| key(p).ends_with(&suffix))
                .map(|(i, _)| i);
            return self.best(folder, found);
        }
        if let Some(found) = self.by_name.get(&wanted) {
            return self.best(folder, found.iter().copied());
        }
        let by_alias = self.by_alias.get(&target.to_lowercase())?;
        self.best(folder, by_alias.iter().copied())
    }

    fn resolve_attachment(&self, folder: &str, target: &str) -> Option<String> {
        let wanted = target.to_lowercase();
        if let Some(joined) = join_relative(&folder.to_lowercase(), &wanted)
            && let Some(&i) = self.attachment_by_path.get(&joined)
        {
            return Some(self.attachments[i].clone());
        }
        if let Some(&i) = self.attachment_by_path.get(&wanted) {
            return Some(self.attachments[i].clone());
        }
        // Last, by file name: a path written for another layout (`../../images/a.png` from a
        // docs site) still finds the vault's file whose path ends the same way.
        let found = self.attachment_by_name.get(file_name(&wanted))?;
        let tail = strip_leading_dots(&wanted);
        found
            .iter()
            .map(|&i| &self.attachments[i])
            .filter(|p| {
                let p = p.to_lowercase();
                !tail.contains('/') || p == tail || p.ends_with(&format!("/{tail}"))
            })
            .min_by_key(|p| (p.len(), (*p).clone()))
            .cloned()
    }

    /// The candidate in the linking folder, else the one with the shortest path.
    fn best(&self, folder: &str, candidates: impl Iterator<Item = usize>) -> Option<usize> {
        candidates.min_by_key(|&i| {
            let path = &self.note_paths[i];
            (folder_of(path) != folder, path.len(), path.clone())
        })
    }
}

/// A link that found no target.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct UnresolvedLink {
    /// The link path as written (see [`crate::Link::target`]).
    pub target: String,
    /// The line of the link in its note.
    pub line: usize,
}

/// Who links to whom, for every note of a vault (indexes into the vault's notes).
#[derive(Debug, Clone, Default)]
pub struct LinkGraph {
    /// Per note, per link (same order as `Note::links`): where it points, if anywhere.
    pub resolutions: Vec<Vec<Option<Resolution>>>,
    /// Distinct notes each note links to (self links left out), ascending.
    pub outgoing: Vec<Vec<usize>>,
    /// Distinct notes linking to each note (self links left out), ascending.
    pub backlinks: Vec<Vec<usize>>,
    /// Per note, its links that point to no note or attachment, in link order.
    pub unresolved: Vec<Vec<UnresolvedLink>>,
    /// Index notes (maps of content).
    pub is_moc: Vec<bool>,
    /// Per note, the index notes that link to it, ascending.
    pub moc_parents: Vec<Vec<usize>>,
}

const MOC_MARKERS: [&str; 5] = ["moc", "index", "map", "hub", "map-of-content"];

impl LinkGraph {
    /// Resolves every link of `notes` (indexes as in the slice) and derives backlinks, orphans and
    /// maps of content.
    pub fn build(notes: &[Note], resolver: &LinkResolver) -> Self {
        let n = notes.len();
        let mut graph = LinkGraph {
            resolutions: Vec::with_capacity(n),
            outgoing: vec![Vec::new(); n],
            backlinks: vec![Vec::new(); n],
            unresolved: vec![Vec::new(); n],
            is_moc: vec![false; n],
            moc_parents: vec![Vec::new(); n],
        };
        for (i, note) in notes.iter().enumerate() {
            let mut out = BTreeSet::new();
            let mut resolved = Vec::with_capacity(note.links.len());
            for link in &note.links {
                let r = resolver.resolve(&note.path, &link.target);
                match &r {
                    Some(Resolution::Note(j)) if *j != i => {
                        out.insert(*j);
                    }
                    None => graph.unresolved[i].push(UnresolvedLink {
                        target: link.target.clone(),
                        line: link.line,
                    }),
                    _ => {}
                }
                resolved.push(r);
            }
            for &j in &out {
                graph.backlinks[j].push(i);
            }
            graph.is_moc[i] = looks_like_moc(note, out.len());
            graph.outgoing[i] = out.into_iter().collect();
            graph.resolutions.push(resolved);
        }
        for i in 0..n {
            if graph.is_moc[i] {
                for &j in &graph.outgoing[i].clone() {
                    graph.moc_parents[j].push(i);
                }
            }
        }
        graph
    }

    /// Notes with no links in or out.
    pub fn orphans(&self) -> Vec<usize> {
        (0..self.outgoing.len())
            .filter(|&i| self.outgoing[i].is_empty() && self.backlinks[i].is_empty())
            .collect()
    }
}

/// An index note is typed or tagged as one, or, if it is not a daily note, mostly links: at least
/// five distinct notes linked and links on at least half of its non-blank body lines.
fn looks_like_moc(note: &Note, distinct_targets: usize) -> bool {
    let marked = |s: &str| {
        let lower = s.to_lowercase();
        MOC_MARKERS
            .iter()
            .any(|m| lower == *m || lower.rsplit('/').next() == Some(*m))
    };
    let typed = match note.properties.get("type") {
        Some(serde_json::Value::String(t)) => marked(t),
        Some(serde_json::Value::Array(items)) => {
            items.iter().filter_map(|v| v.as_str()).any(marked)
        }
        _ => false,
    };
    if typed || note.tags.iter().any(|t| marked(&t.name)) {
        return true;
    }
    // A daily note full of links is a journal, not a map of content (unless marked as one).
    if note.daily_date.is_some() || distinct_targets < 5 {
        return false;
    }
    let link_lines: BTreeSet<usize> = note
        .links
        .iter()
        .filter(|l| matches!(l.kind, LinkKind::Wiki | LinkKind::Markdown))
        .map(|l| l.line)
        .collect();
    let body_lines = note
        .source
        .lines()
        .skip(note.body_start_line.saturating_sub(1))
        .filter(|l| !l.trim().is_empty() && !l.trim_start().starts_with('#'))
        .count();
    link_lines.len() * 2 >= body_lines
}

/// The link as Obsidian would write it back: `[[target#sub|display]]` or `[text](target)`.
pub fn describe_link(link: &Link) -> String {
    let sub = link
        .subpath
        .as_ref()
        .map(|s| format!("#{s}"))
        .unwrap_or_default();
    match link.kind {
        LinkKind::Wiki => format!("[[{}{}]]", link.target, sub),
        LinkKind::Embed => format!("![[{}{}]]", link.target, sub),
        LinkKind::Markdown => format!("[]({}{})", link.target, sub),
        LinkKind::MarkdownEmbed => format!("![]({}{})", link.target, sub),
    }
}
