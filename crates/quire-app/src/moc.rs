//! Maps of content from topic clusters (`quire moc`, `POST /api/moc`): for each cluster of
//! [`crate::topics`], a note that lists the cluster's notes as wikilinks, grouped by sub-topic,
//! made as a proposal (nothing is written into the vault until the user applies it).
//!
//! The note, offline: a title from the cluster's label terms (`Dates, Due and Scheduled`), one
//! line saying what it gathers, then the notes as `[[links]]` (the file name, or the path when
//! several notes share the name, always the link Obsidian resolves to that note). A cluster of
//! at least [`SUB_TOPIC_MIN_NOTES`] notes is split again by k-means into 2 to 4 sub-topics,
//! each under a `##` heading of its own c-TF-IDF label; a smaller one is one list. Frontmatter:
//! `tags: [moc]` and `created`. The file is `<folder>/<Title> MOC.md`, with " 2", " 3", … when
//! the name is taken (by a file, or by a pending proposal).
//!
//! A cluster already mapped is left alone: when one note links to at least [`MAPPED_SHARE`]
//! of the cluster's notes (the vault's resolved links), no map is proposed and the answer names
//! that note instead. A cluster of fewer than [`MIN_MAP_NOTES`] notes gets no map either.

use std::collections::BTreeSet;

use chrono::NaiveDate;
use quire_proposals::{ChangeRequest, NewProposal, ProposalStore, Status};
use quire_search::Searcher;
use quire_vault::Vault;
use quire_vault::links::Resolution;
use serde::Serialize;

use crate::error::AppError;
use crate::live::{INDEX_WAIT, Live, VAULT_WAIT};
use crate::proposals::open_store;
use crate::resolve::check_request_path;
use crate::topics::{NoteVectors, TopicCluster, TopicOptions};

/// The operation's name in error messages.
const MOC: &str = "moc";

/// How the titles of the proposals made here begin.
const MAP_TITLE: &str = "Map of content";

/// A cluster counts as mapped when one note links to at least this share of its notes.
pub const MAPPED_SHARE: f64 = 0.8;

/// A cluster with fewer notes than this gets no map: a list of one or two links maps nothing.
pub const MIN_MAP_NOTES: usize = 3;

/// A cluster with at least this many notes is split into sub-topics.
pub const SUB_TOPIC_MIN_NOTES: usize = 8;

/// Which clusters to map.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MocChoice {
    /// One cluster, by its id in `quire audit --clusters` (1-based).
    Cluster(usize),
    /// Every cluster.
    All,
}

/// What `quire moc` is asked.
#[derive(Debug, Clone)]
pub struct MocRequest {
    /// The clusters to map.
    pub choice: MocChoice,
    /// The vault folder the maps go in (vault-relative); `None`: the vault's root.
    pub folder: Option<String>,
    /// The `created` date written in the maps' frontmatter.
    pub created: NaiveDate,
    /// How the notes are clustered (the ids refer to this clustering).
    pub topics: TopicOptions,
    /// The command shown with the proposals (`quire moc --all`, `POST /api/moc`).
    pub command: String,
}

/// A map of content proposed for one cluster.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MocProposal {
    /// The cluster's id.
    pub cluster: usize,
    /// The cluster's label.
    pub label: String,
    /// The map's title (its `# ` heading).
    pub title: String,
    /// The vault-relative path the map will be created at.
    pub path: String,
    /// The notes it links to.
    pub notes: usize,
    /// Its sub-topic headings (empty: one flat list).
    pub sub_topics: Vec<String>,
    /// The pending proposal that creates it.
    pub proposal: String,
}

/// A cluster left alone: a note already maps it, or it is too small to need a map.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MocSkipped {
    /// The cluster's id.
    pub cluster: usize,
    /// The cluster's label.
    pub label: String,
    /// The cluster's notes.
    pub notes: usize,
    /// `"already_mapped"`, `"pending"` (a pending proposal of `quire moc` maps the same notes)
    /// or `"too_small"` (fewer than [`MIN_MAP_NOTES`] notes).
    pub reason: &'static str,
    /// The note that already links to most of the cluster (vault-relative path).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mapped_by: Option<String>,
    /// The same note as a wikilink (`[[Tasks MOC]]`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub link: Option<String>,
    /// How many of the cluster's notes it links to.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub linked: Option<usize>,
    /// The pending proposal that already maps the same notes.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub proposal: Option<String>,
}

/// What a `moc` request did.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MocOutcome {
    /// The maps proposed, by cluster id.
    pub proposals: Vec<MocProposal>,
    /// The clusters already mapped, by cluster id.
    pub skipped: Vec<MocSkipped>,
}

/// A map of content's path and text, before it is proposed.
#[derive(Debug, Clone, PartialEq)]
pub struct MocNote {
    /// The title (the `# ` heading, and the file name before " MOC").
    pub title: String,
    /// The vault-relative path.
    pub path: String,
    /// The sub-topic headings, in order (empty: one flat list).
    pub sub_topics: Vec<String>,
    /// The whole note.
    pub content: String,
}

/// Proposes a map of content for each cluster `request` chooses that no note maps yet (see the
/// module docs); `store` is the vault's proposal store. Nothing is applied.
pub fn propose_mocs(
    searcher: &Searcher,
    vault: &Vault,
    store: &ProposalStore,
    request: &MocRequest,
) -> Result<MocOutcome, AppError> {
    let folder = folder(request.folder.as_deref())?;
    let vectors = NoteVectors::load(searcher, vault)?;
    let clusters = vectors.cluster_all(vault, &request.topics).clusters;
    let chosen: Vec<&TopicCluster> = match request.choice {
        MocChoice::All => clusters.iter().collect(),
        MocChoice::Cluster(id) => vec![clusters.iter().find(|c| c.id == id).ok_or_else(|| {
            AppError::bad_arguments(
                MOC,
                format!(
                    "there is no cluster {id}: the vault has {} (1 to {}; `quire audit --clusters` lists them)",
                    clusters.len(),
                    clusters.len()
                ),
            )
        })?],
    };
    let mut taken = pending_paths(store)?;
    let mut outcome = MocOutcome {
        proposals: Vec::new(),
        skipped: Vec::new(),
    };
    for cluster in chosen {
        if cluster.notes.len() < MIN_MAP_NOTES {
            outcome.skipped.push(MocSkipped {
                cluster: cluster.id,
                label: cluster.label.clone(),
                notes: cluster.notes.len(),
                reason: "too_small",
                mapped_by: None,
                link: None,
                linked: None,
                proposal: None,
            });
            continue;
        }
        if let Some(skipped) = already_mapped(vault, cluster) {
            outcome.skipped.push(skipped);
            continue;
        }
        if let Some(id) = pending_map(store, cluster)? {
            outcome.skipped.push(MocSkipped {
                cluster: cluster.id,
                label: cluster.label.clone(),
                notes: cluster.notes.len(),
                reason: "pending",
                mapped_by: None,
                link: None,
                linked: None,
                proposal: Some(id),
            });
            continue;
        }
        let sub_topics = sub_topics(vault, &vectors, cluster, request.topics.terms);
        let note = moc_note(
            vault,
            cluster,
            &sub_topics,
            &folder,
            request.created,
            &taken,
        );
        taken.insert(note.path.to_lowercase());
        let proposal = store.create(NewProposal {
            title: format!(
                "{MAP_TITLE} for topic {} ({}): {}",
                cluster.id, cluster.label, note.path
            ),
            command: request.command.clone(),
            sources: cluster.notes.clone(),
            changes: vec![ChangeRequest::Create {
                path: note.path.clone(),
                content: note.content,
            }],
        })?;
        outcome.proposals.push(MocProposal {
            cluster: cluster.id,
            label: cluster.label.clone(),
            title: note.title,
            path: note.path,
            notes: cluster.notes.len(),
            sub_topics: note.sub_topics,
            proposal: proposal.id,
        });
    }
    Ok(outcome)
}

/// [`propose_mocs`] on the vault a server holds: its parsed vault (waiting for the first parse
/// at most [`VAULT_WAIT`]), a searcher of its index's current generation, its proposal store.
pub fn propose_mocs_live(live: &Live, request: &MocRequest) -> Result<MocOutcome, AppError> {
    let snapshot = live.vault(VAULT_WAIT)?;
    let searcher = live.searcher(INDEX_WAIT)?;
    let searcher = searcher.lock().unwrap_or_else(|e| e.into_inner());
    let store = open_store(&live.root, &live.index)?;
    propose_mocs(&searcher, &snapshot.vault, &store, request)
}

/// The folder a request names, checked (inside the vault, no hidden part), without slashes at
/// its ends; `""` for the root.
fn folder(folder: Option<&str>) -> Result<String, AppError> {
    let folder = folder.unwrap_or("").trim().trim_matches('/').to_string();
    if folder.is_empty() {
        return Ok(folder);
    }
    check_request_path(&folder)?;
    if folder.split('/').any(|part| part.starts_with('.')) {
        return Err(AppError::bad_arguments(
            MOC,
            format!("`{folder}`: quire writes no note into a hidden folder"),
        ));
    }
    Ok(folder)
}

/// The paths pending proposals will create or write, lowercased: a new map must not collide
/// with one of them when both are applied.
fn pending_paths(store: &ProposalStore) -> Result<BTreeSet<String>, AppError> {
    Ok(store
        .list()?
        .into_iter()
        .filter(|p| p.status == Status::Pending)
        .flat_map(|p| p.files)
        .map(|f| f.to_lowercase())
        .collect())
}

/// A pending map-of-content proposal made from exactly `cluster`'s notes (its sources), so a
/// second run before the first map is applied proposes no second one.
fn pending_map(store: &ProposalStore, cluster: &TopicCluster) -> Result<Option<String>, AppError> {
    let notes: BTreeSet<&str> = cluster.notes.iter().map(String::as_str).collect();
    for summary in store.list()? {
        if summary.status != Status::Pending || !summary.title.starts_with(MAP_TITLE) {
            continue;
        }
        let proposal = store.get(&summary.id)?;
        if proposal
            .sources
            .iter()
            .map(String::as_str)
            .collect::<BTreeSet<_>>()
            == notes
        {
            return Ok(Some(summary.id));
        }
    }
    Ok(None)
}

/// The note that links to the most of `cluster`'s notes (ties: the first by path), when it
/// links to at least [`MAPPED_SHARE`] of them.
pub fn already_mapped(vault: &Vault, cluster: &TopicCluster) -> Option<MocSkipped> {
    let members: BTreeSet<usize> = cluster
        .notes
        .iter()
        .filter_map(|p| vault.index_of(p))
        .collect();
    let (linked, by) = (0..vault.notes.len())
        .map(|j| {
            let linked = vault.graph.outgoing[j]
                .iter()
                .filter(|t| members.contains(t))
                .count();
            (linked, j)
        })
        .max_by(|a, b| {
            a.0.cmp(&b.0)
                .then_with(|| vault.notes[b.1].path.cmp(&vault.notes[a.1].path))
        })?;
    let n = cluster.notes.len();
    if n == 0 || (linked as f64) < MAPPED_SHARE * n as f64 {
        return None;
    }
    let path = vault.notes[by].path.clone();
    Some(MocSkipped {
        cluster: cluster.id,
        label: cluster.label.clone(),
        notes: n,
        reason: "already_mapped",
        link: Some(format!("[[{}]]", link_text(vault, "", by))),
        mapped_by: Some(path),
        linked: Some(linked),
        proposal: None,
    })
}

/// The sub-topics of a cluster of at least [`SUB_TOPIC_MIN_NOTES`] notes (2 to 4:
/// `round(√(n/4))`), labelled against each other; a smaller cluster has none.
fn sub_topics(
    vault: &Vault,
    vectors: &NoteVectors,
    cluster: &TopicCluster,
    terms: usize,
) -> Vec<TopicCluster> {
    let n = cluster.notes.len();
    if n < SUB_TOPIC_MIN_NOTES {
        return Vec::new();
    }
    let rows: Vec<usize> = cluster
        .notes
        .iter()
        .filter_map(|p| vectors.row_of(vault, p))
        .collect();
    let k = ((n as f64 / 4.0).sqrt().round() as usize).clamp(2, 4);
    let (groups, _) = vectors.group(vault, &rows, k, terms);
    if groups.len() < 2 {
        return Vec::new();
    }
    groups
}

/// The text of a link from a note in `folder` that Obsidian resolves to note `i`: its file
/// name when that finds it, else its path without `.md`, else its whole path.
pub fn link_text(vault: &Vault, folder: &str, i: usize) -> String {
    let path = vault.notes[i].path.as_str();
    let from = if folder.is_empty() {
        "moc.md".to_string()
    } else {
        format!("{folder}/moc.md")
    };
    let without_md = path.strip_suffix(".md").unwrap_or(path);
    let stem = without_md.rsplit('/').next().unwrap_or(without_md);
    [stem, without_md]
        .into_iter()
        .find(|text| vault.resolver.resolve(&from, text) == Some(Resolution::Note(i)))
        .unwrap_or(path)
        .to_string()
}

/// `"dates, due, scheduled"` → `"Dates, Due and Scheduled"`.
fn title_of(terms: &[&str]) -> String {
    let words: Vec<String> = terms.iter().map(|t| capitalised(t)).collect();
    match words.split_last() {
        None => "Topic".to_string(),
        Some((last, [])) => last.clone(),
        Some((last, rest)) => format!("{} and {last}", rest.join(", ")),
    }
}

fn capitalised(word: &str) -> String {
    let mut chars = word.chars();
    match chars.next() {
        Some(first) => first.to_uppercase().chain(chars).collect(),
        None => String::new(),
    }
}

/// The map of `cluster` (with `sub_topics`, possibly none) in `folder`: its free path (none of
/// `taken`, lowercased, nor a file of the vault) and its text.
pub fn moc_note(
    vault: &Vault,
    cluster: &TopicCluster,
    sub_topics: &[TopicCluster],
    folder: &str,
    created: NaiveDate,
    taken: &BTreeSet<String>,
) -> MocNote {
    let label_terms: Vec<&str> = cluster
        .label
        .split(", ")
        .filter(|t| !t.is_empty())
        .collect();
    let title = title_of(&label_terms);
    let about = match label_terms.split_last() {
        None => "one topic".to_string(),
        Some((last, [])) => last.to_string(),
        Some((last, rest)) => format!("{} and {last}", rest.join(", ")),
    };
    let path = free_path(vault, folder, &title, taken);
    let link = |p: &String| {
        vault
            .index_of(p)
            .map(|i| format!("- [[{}]]\n", link_text(vault, folder, i)))
            .unwrap_or_default()
    };
    let mut content = format!(
        "---\ntags: [moc]\ncreated: {created}\n---\n\n# {title}\n\nNotes about {about} ({} notes), gathered by quire from their meaning.\n",
        cluster.notes.len()
    );
    let mut headings = Vec::new();
    if sub_topics.is_empty() {
        content.push('\n');
        cluster
            .notes
            .iter()
            .for_each(|p| content.push_str(&link(p)));
    } else {
        for sub in sub_topics {
            let heading = capitalised(&sub.label);
            content.push_str(&format!("\n## {heading}\n\n"));
            sub.notes.iter().for_each(|p| content.push_str(&link(p)));
            headings.push(heading);
        }
    }
    MocNote {
        title,
        path,
        sub_topics: headings,
        content,
    }
}

/// `<folder>/<title> MOC.md`, or with " 2", " 3", … before " MOC" while the name is taken.
fn free_path(vault: &Vault, folder: &str, title: &str, taken: &BTreeSet<String>) -> String {
    let prefix = if folder.is_empty() {
        String::new()
    } else {
        format!("{folder}/")
    };
    let notes: BTreeSet<String> = vault.notes.iter().map(|n| n.path.to_lowercase()).collect();
    let free = |path: &String| {
        let lower = path.to_lowercase();
        !taken.contains(&lower) && !notes.contains(&lower) && !vault.root.join(path).exists()
    };
    (1..)
        .map(|n| match n {
            1 => format!("{prefix}{title} MOC.md"),
            n => format!("{prefix}{title} {n} MOC.md"),
        })
        .find(free)
        .unwrap_or_else(|| format!("{prefix}{title} MOC.md"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn titles_capitalise_the_label_terms() {
        assert_eq!(
            title_of(&["dates", "due", "scheduled"]),
            "Dates, Due and Scheduled"
        );
        assert_eq!(title_of(&["été", "plage"]), "Été and Plage");
        assert_eq!(title_of(&["tea"]), "Tea");
        assert_eq!(title_of(&[]), "Topic");
    }

    #[test]
    fn a_folder_is_checked_and_trimmed() {
        assert_eq!(folder(Some("/Maps/")).unwrap(), "Maps");
        assert_eq!(folder(None).unwrap(), "");
        assert!(folder(Some("../out")).is_err());
        assert!(folder(Some(".obsidian")).is_err());
    }
}
