//! The reasoning index: a deterministic, structure-only map of a vault for a reader or a model to
//! descend — vault tree → note manifest → heading tree with line ranges → the original lines.
//! (After the "Reasoning Index" built on PageIndex's idea; no model and no vectors.)
//!
//! Same vault, same bytes: keys and paths are sorted, and nothing time-dependent is written into
//! `tree.json`, `manifest.json` or `outlines/`. The export also writes `state.json`, the only file
//! that holds a time (the newest modification time seen), so that an export from an older copy of
//! the vault never overwrites one made from a newer copy.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::Value as Json;

use crate::error::VaultError;
use crate::outline::Outline;
use crate::vault::Vault;

/// Bump when the layout of the exported files changes.
pub const FORMAT_VERSION: u32 = 1;

/// Keys whose values count as dates in the manifest, besides the configured ones.
fn is_selected(key: &str, selected: &[String]) -> bool {
    selected.iter().any(|s| s.eq_ignore_ascii_case(key))
}

/// A node of the vault tree: a folder or a note (each serializes its own `kind`, `folder` or
/// `note`, so the root folder carries it too).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum TreeNode {
    /// A folder: its sub-folders, then its notes.
    Folder(TreeFolder),
    /// A note, with its title and heading count.
    Note(TreeNote),
}

/// A folder of the vault tree (the root has an empty name and path).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename = "folder")]
pub struct TreeFolder {
    /// The folder's name (empty for the root).
    pub name: String,
    /// Vault-relative, `/`-separated.
    pub path: String,
    /// Notes in this folder and below.
    pub note_count: usize,
    /// Sub-folders (by name), then notes (in vault order).
    pub children: Vec<TreeNode>,
}

/// A note of the vault tree.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename = "note")]
pub struct TreeNote {
    /// The file name.
    pub name: String,
    /// Vault-relative path, `/`-separated.
    pub path: String,
    /// The note's title.
    pub title: String,
    /// Headings in the note, all levels.
    pub heading_count: usize,
}

impl TreeFolder {
    /// The sub-folder `name` (case-sensitive), if there is one.
    pub fn folder(&self, name: &str) -> Option<&TreeFolder> {
        self.children.iter().find_map(|child| match child {
            TreeNode::Folder(folder) if folder.name == name => Some(folder),
            _ => None,
        })
    }
}

/// Folders → notes, with heading counts.
pub fn vault_tree(vault: &Vault) -> TreeFolder {
    #[derive(Default)]
    struct Folder {
        folders: BTreeMap<String, Folder>,
        notes: Vec<TreeNote>,
        note_count: usize,
    }
    let mut root = Folder::default();
    for note in &vault.notes {
        let mut folder = &mut root;
        folder.note_count += 1;
        let parts: Vec<&str> = note.path.split('/').collect();
        for part in &parts[..parts.len() - 1] {
            folder = folder.folders.entry(part.to_string()).or_default();
            folder.note_count += 1;
        }
        folder.notes.push(TreeNote {
            name: parts[parts.len() - 1].to_string(),
            path: note.path.clone(),
            title: note.title.clone(),
            heading_count: note.headings.len(),
        });
    }
    fn render(name: &str, path: &str, folder: Folder) -> TreeFolder {
        let mut children: Vec<TreeNode> = folder
            .folders
            .into_iter()
            .map(|(child, sub)| {
                let child_path = if path.is_empty() {
                    child.clone()
                } else {
                    format!("{path}/{child}")
                };
                TreeNode::Folder(render(&child, &child_path, sub))
            })
            .collect();
        children.extend(folder.notes.into_iter().map(TreeNode::Note));
        TreeFolder {
            name: name.to_string(),
            path: path.to_string(),
            note_count: folder.note_count,
            children,
        }
    }
    render("", "", root)
}

#[cfg(test)]
mod tree_tests {
    use super::*;

    #[test]
    fn every_tree_node_names_its_kind_and_reads_back() {
        let tree = TreeFolder {
            children: vec![
                TreeNode::Folder(TreeFolder {
                    name: "A".into(),
                    path: "A".into(),
                    note_count: 0,
                    children: Vec::new(),
                }),
                TreeNode::Note(TreeNote {
                    name: "n.md".into(),
                    path: "n.md".into(),
                    title: "n".into(),
                    heading_count: 2,
                }),
            ],
            note_count: 1,
            ..Default::default()
        };
        let json = serde_json::to_value(&tree).unwrap();
        assert_eq!(json["kind"], "folder");
        assert_eq!(json["children"][0]["kind"], "folder");
        assert_eq!(json["children"][1]["kind"], "note");
        let back: TreeFolder = serde_json::from_value(json).unwrap();
        assert_eq!(back, tree);
    }
}

/// The top headings: the shallowest level present, or, when that is a single heading equal to
/// the title, the level under it.
fn top_headings(note: &crate::Note) -> Vec<String> {
    let outline = Outline::of(note);
    let roots = &outline.headings;
    let picked = if roots.len() == 1 && roots[0].text == note.title && !roots[0].children.is_empty()
    {
        &roots[0].children
    } else {
        roots
    };
    picked.iter().map(|h| h.text.clone()).collect()
}

/// The note manifest: one row per note, in vault order, and the orphans.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Manifest {
    /// [`FORMAT_VERSION`].
    pub format: u32,
    /// Notes in the vault.
    pub note_count: usize,
    /// One row per note, in vault order (by path).
    pub notes: Vec<ManifestRow>,
    /// Notes with no link in or out.
    pub orphans: Vec<String>,
}

/// One note of the manifest.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ManifestRow {
    /// Vault-relative path, `/`-separated.
    pub path: String,
    /// The note's title.
    pub title: String,
    /// The properties the config selects (`manifest.properties`), by key.
    pub properties: BTreeMap<String, Json>,
    /// Distinct tag names without `#`, sorted.
    pub tags: Vec<String>,
    /// Other names of the note (its `aliases` property).
    pub aliases: Vec<String>,
    /// `YYYY-MM-DD` for a daily note.
    pub daily_date: Option<String>,
    /// The texts of the shallowest headings (under a lone top heading equal to the title: the level
    /// below it).
    pub top_headings: Vec<String>,
    /// Headings in the note, all levels.
    pub heading_count: usize,
    /// Paths of the notes it links to.
    pub links_out: Vec<String>,
    /// Link targets that name no note or attachment.
    pub unresolved_links: BTreeSet<String>,
    /// Distinct other notes that link to it.
    pub backlinks_count: usize,
    /// Whether it is a map of content: typed or tagged as one, or mostly links (see
    /// [`crate::links::LinkGraph::is_moc`]).
    pub is_moc: bool,
    /// Paths of the maps of content that list it.
    pub moc_parents: Vec<String>,
    /// Words of the body outside comments.
    pub word_count: usize,
    /// Lines in the note.
    pub line_count: usize,
    /// Lowercase hex sha256 of the file's bytes.
    pub sha256: String,
}

/// One manifest row per note.
pub fn manifest(vault: &Vault) -> Manifest {
    let selected = &vault.config.manifest.properties;
    let notes: Vec<ManifestRow> = vault
        .notes
        .iter()
        .enumerate()
        .map(|(i, note)| {
            let path_of = |j: &usize| vault.notes[*j].path.clone();
            ManifestRow {
                path: note.path.clone(),
                title: note.title.clone(),
                properties: note
                    .properties
                    .iter()
                    .filter(|(k, _)| is_selected(k, selected))
                    .map(|(k, v)| (k.clone(), v.clone()))
                    .collect(),
                tags: note.tag_names(),
                aliases: note.aliases.clone(),
                daily_date: note.daily_date.map(|d| d.to_string()),
                top_headings: top_headings(note),
                heading_count: note.headings.len(),
                links_out: vault.graph.outgoing[i].iter().map(path_of).collect(),
                unresolved_links: vault.graph.unresolved[i]
                    .iter()
                    .map(|u| u.target.clone())
                    .collect(),
                backlinks_count: vault.graph.backlinks[i].len(),
                is_moc: vault.graph.is_moc[i],
                moc_parents: vault.graph.moc_parents[i].iter().map(path_of).collect(),
                word_count: note.word_count,
                line_count: note.line_count,
                sha256: note.sha256.clone(),
            }
        })
        .collect();
    let orphans: Vec<String> = vault
        .graph
        .orphans()
        .into_iter()
        .map(|i| vault.notes[i].path.clone())
        .collect();
    Manifest {
        format: FORMAT_VERSION,
        note_count: notes.len(),
        notes,
        orphans,
    }
}

/// Serializes with sorted keys (serde_json's default map is ordered by key), two-space indent and
/// a final newline.
pub fn to_canonical_json<T: Serialize>(value: &T) -> String {
    let value = serde_json::to_value(value).unwrap_or(Json::Null);
    let mut text = serde_json::to_string_pretty(&value).unwrap_or_default();
    text.push('\n');
    text
}

/// `state.json`: which vault state an export was made from.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ExportState {
    /// [`FORMAT_VERSION`] of the export.
    pub format: u32,
    /// Notes exported.
    pub note_count: usize,
    /// Newest modification time of the notes and folders read, ns since the epoch (as a string:
    /// JSON numbers lose precision past 2^53).
    pub newest_mtime_ns: String,
}

/// What an export did.
#[derive(Debug, Clone, Serialize)]
pub struct ExportSummary {
    /// The directory written.
    pub out_dir: PathBuf,
    /// Notes exported.
    pub notes: usize,
    /// Files written: `tree.json`, `manifest.json`, `state.json` and one outline per note.
    pub files_written: usize,
    /// Outline files removed because their note is gone.
    pub outlines_removed: usize,
}

/// Writes `tree.json`, `manifest.json`, `outlines/<note path>.json` and `state.json` into `out`.
/// Refuses a non-empty directory that is not an export, and an export made from a newer vault
/// state, unless `force`. Files are written atomically (temporary file, then rename).
pub fn export(vault: &Vault, out: &Path, force: bool) -> Result<ExportSummary, VaultError> {
    let io = |path: &Path| {
        let path = path.to_path_buf();
        move |source| VaultError::Io { path, source }
    };
    if out.exists() {
        let state_path = out.join("state.json");
        let is_export = state_path.exists() || out.join("manifest.json").exists();
        let is_empty = fs::read_dir(out).map_err(io(out))?.next().is_none();
        if !is_export && !is_empty && !force {
            return Err(VaultError::BadRequest(format!(
                "{} is not empty and holds no quire export: refusing to write into it",
                out.display()
            )));
        }
        if let Ok(text) = fs::read_to_string(&state_path)
            && let Ok(previous) = serde_json::from_str::<ExportState>(&text)
        {
            let previous_ns: u128 = previous.newest_mtime_ns.parse().unwrap_or(0);
            if previous_ns > vault.newest_mtime_ns && !force {
                return Err(VaultError::BadRequest(format!(
                    "the export in {} was made from a newer state of the vault than the one read now \
                     (newest change {} ns vs {} ns): not overwritten (use --force to overwrite)",
                    out.display(),
                    previous_ns,
                    vault.newest_mtime_ns
                )));
            }
        }
    }
    fs::create_dir_all(out.join("outlines")).map_err(io(out))?;
    let mut written = 0;
    write_atomic(
        &out.join("tree.json"),
        &to_canonical_json(&vault_tree(vault)),
    )?;
    write_atomic(
        &out.join("manifest.json"),
        &to_canonical_json(&manifest(vault)),
    )?;
    written += 2;
    let mut expected = std::collections::HashSet::new();
    for note in &vault.notes {
        let file = out.join("outlines").join(format!("{}.json", note.path));
        if let Some(parent) = file.parent() {
            fs::create_dir_all(parent).map_err(io(parent))?;
        }
        write_atomic(&file, &to_canonical_json(&Outline::of(note)))?;
        expected.insert(file);
        written += 1;
    }
    let removed = remove_stale_outlines(&out.join("outlines"), &expected)?;
    let state = ExportState {
        format: FORMAT_VERSION,
        note_count: vault.notes.len(),
        newest_mtime_ns: vault.newest_mtime_ns.to_string(),
    };
    write_atomic(&out.join("state.json"), &to_canonical_json(&state))?;
    Ok(ExportSummary {
        out_dir: out.to_path_buf(),
        notes: vault.notes.len(),
        files_written: written + 1,
        outlines_removed: removed,
    })
}

/// Removes `*.md.json` outline files of notes that no longer exist (and nothing else).
fn remove_stale_outlines(
    dir: &Path,
    expected: &std::collections::HashSet<PathBuf>,
) -> Result<usize, VaultError> {
    let mut removed = 0;
    let Ok(entries) = fs::read_dir(dir) else {
        return Ok(0);
    };
    for entry in entries.flatten() {
        let path = entry.path();
        let Ok(kind) = entry.file_type() else {
            continue;
        };
        if kind.is_dir() {
            removed += remove_stale_outlines(&path, expected)?;
            let _ = fs::remove_dir(&path); // only succeeds when empty
        } else if kind.is_file()
            && path.to_string_lossy().ends_with(".md.json")
            && !expected.contains(&path)
        {
            fs::remove_file(&path).map_err(|source| VaultError::Io {
                path: path.clone(),
                source,
            })?;
            removed += 1;
        }
    }
    Ok(removed)
}

/// Writes a file atomically (see [`crate::atomic`]): a random temporary name, no link followed,
/// a link at the target refused.
pub fn write_atomic(path: &Path, text: &str) -> Result<(), VaultError> {
    Ok(crate::atomic::write_atomic(path, text.as_bytes())?)
}

/// A note whose export entry no longer matches the vault.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct StaleEntry {
    /// Vault-relative path of the note.
    pub path: String,
    /// `changed` (sha256 differs), `deleted` (in the export, not in the vault) or `new`.
    pub status: &'static str,
}

/// Compares an export's manifest with the vault by sha256. Empty means up to date.
pub fn check_export(vault: &Vault, out: &Path) -> Result<Vec<StaleEntry>, VaultError> {
    let manifest_path = out.join("manifest.json");
    let text = fs::read_to_string(&manifest_path).map_err(|source| VaultError::Io {
        path: manifest_path.clone(),
        source,
    })?;
    let manifest: Json = serde_json::from_str(&text).map_err(|e| {
        VaultError::BadRequest(format!(
            "{} is not a quire manifest: {e}",
            manifest_path.display()
        ))
    })?;
    let mut exported: BTreeMap<String, String> = BTreeMap::new();
    for row in manifest["notes"].as_array().into_iter().flatten() {
        if let (Some(path), Some(sha)) = (row["path"].as_str(), row["sha256"].as_str()) {
            exported.insert(path.to_string(), sha.to_string());
        }
    }
    let mut stale = Vec::new();
    for note in &vault.notes {
        match exported.remove(&note.path) {
            Some(sha) if sha == note.sha256 => {}
            Some(_) => stale.push(StaleEntry {
                path: note.path.clone(),
                status: "changed",
            }),
            None => stale.push(StaleEntry {
                path: note.path.clone(),
                status: "new",
            }),
        }
    }
    stale.extend(exported.into_keys().map(|path| StaleEntry {
        path,
        status: "deleted",
    }));
    stale.sort_by(|a, b| a.path.cmp(&b.path));
    Ok(stale)
}
