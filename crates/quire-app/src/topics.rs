//! Topic clusters: the vault's notes grouped by meaning, offline. Each note's vector is the one
//! the index already holds (the normalised mean of its chunk vectors,
//! [`quire_search::Searcher::note_vectors`]); the notes are grouped by spherical k-means
//! ([`quire_search::cluster::kmeans`], a fixed seed, so the same index gives the same
//! clusters), and each cluster is labelled by its most distinctive words (c-TF-IDF over the
//! notes' text as the vault holds it now, [`quire_audit::topics`]). No model is called: this is
//! the offline half of the deep audit, and what `quire moc` maps.
//!
//! How many clusters: five values of k from `round(√(n/2))` up (for `n` notes; between 2 and
//! 30, see [`cluster_count`]) are tried, and the one whose clustering has the best mean
//! silhouette (cosine distance; measured on at most [`SILHOUETTE_SAMPLE`] notes) is kept. Not
//! below the rule: the silhouette alone prefers the fewest clusters, and on the sample vault
//! its best k (3) is one cluster of 37 notes of 45 beside a split by language. Measured as how
//! much more often two notes of the same top folder share a cluster than chance would put them
//! together (same cluster sizes): the Tasks documentation vault (111 notes clustered) gets
//! k = 9, 1.89× (the rule alone: k = 7, 1.52×); the sample vault k = 6, 2.01× (the rule: k = 5,
//! 1.82×). Maps of content (notes the link graph takes for one: tagged or typed
//! `moc`, or mostly links) are left out: they are about every topic they list, and a map quire
//! made would otherwise join its own topic at the next index run.

use std::collections::HashMap;

use quire_audit::topics::{Weighting, cluster_terms, label};
use quire_search::Searcher;
use quire_search::cluster::{kmeans, silhouette};
use quire_vault::Vault;
use serde::Serialize;

use crate::error::AppError;

/// The k-means seed: fixed, so the clusters depend on the index alone.
pub const SEED: u64 = 0x70_91c5;

/// Terms in a cluster's label.
pub const LABEL_TERMS: usize = 3;

/// How many values of k are tried, from [`cluster_count`] up.
pub const K_CANDIDATES: usize = 5;

/// The silhouette of a clustering is measured on at most this many notes (an even sample).
pub const SILHOUETTE_SAMPLE: usize = 400;

/// One value of k tried, and the silhouette of its clustering.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct KScore {
    /// The number of clusters asked of k-means.
    pub k: usize,
    /// The mean silhouette of the clustering (`None` with one cluster).
    pub silhouette: Option<f32>,
}

/// The clustering kept, and the values of k tried for it.
pub(crate) struct Chosen {
    pub(crate) k: usize,
    pub(crate) clusters: Vec<TopicCluster>,
    pub(crate) silhouette: Option<f32>,
    pub(crate) tried: Vec<KScore>,
}

/// The settings of a clustering.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TopicOptions {
    /// The number of clusters; `None`: [`cluster_count`] of the notes clustered.
    pub k: Option<usize>,
    /// Distinctive terms kept per cluster (the label is the first [`LABEL_TERMS`]).
    pub terms: usize,
}

impl Default for TopicOptions {
    /// k chosen from the number of notes, 10 terms per cluster.
    fn default() -> Self {
        TopicOptions { k: None, terms: 10 }
    }
}

/// One topic: notes close in meaning, and the words that set them apart.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TopicCluster {
    /// 1-based; clusters come largest first (ties: the one whose first note path sorts first).
    /// `quire moc N` names a cluster by this id.
    pub id: usize,
    /// The first [`LABEL_TERMS`] terms, joined by ", ".
    pub label: String,
    /// The cluster's most distinctive terms by c-TF-IDF, heaviest first.
    pub terms: Vec<String>,
    /// Vault-relative paths, closest to the cluster's centre first (ties by path).
    pub notes: Vec<String>,
    /// The mean cosine of the notes to the cluster's centre (1: all alike).
    pub cohesion: f32,
}

/// The clusters of a vault and what was left out of them.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TopicReport {
    /// The number of clusters asked of k-means: the one of [`TopicReport::k_tried`] with the
    /// best silhouette, or the one [`TopicOptions::k`] set.
    pub k: usize,
    /// The notes clustered (each is in exactly one cluster).
    pub notes_clustered: usize,
    /// The mean silhouette of the clustering under cosine distance (near 0: overlapping
    /// topics, near 1: separate ones); `None` with fewer than two clusters.
    pub silhouette: Option<f32>,
    /// The values of k tried, with their silhouettes; `k` is the best of them.
    pub k_tried: Vec<KScore>,
    /// The clusters, largest first.
    pub clusters: Vec<TopicCluster>,
    /// Notes of the vault the index has no vector for (not indexed yet, or their chunk
    /// vectors cancel out), sorted.
    pub without_vectors: Vec<String>,
    /// Maps of content, left out on purpose (see the module docs), sorted.
    pub maps_left_out: Vec<String>,
}

/// `round(√(n/2))` clusters for `n` notes, between 2 and 30, and never more than `n`.
pub fn cluster_count(notes: usize) -> usize {
    let k = ((notes as f64 / 2.0).sqrt().round() as usize).clamp(2, 30);
    k.min(notes)
}

/// The topic clusters of `vault` from the vectors of `searcher`'s index (see the module docs).
/// An index without embeddings is an error that says to run `quire index` with the model.
pub fn topic_clusters(
    searcher: &Searcher,
    vault: &Vault,
    options: &TopicOptions,
) -> Result<Vec<TopicCluster>, AppError> {
    Ok(topic_report(searcher, vault, options)?.clusters)
}

/// [`topic_clusters`] with the figures of the clustering and the notes left out.
pub fn topic_report(
    searcher: &Searcher,
    vault: &Vault,
    options: &TopicOptions,
) -> Result<TopicReport, AppError> {
    Ok(NoteVectors::load(searcher, vault)?.report(vault, options))
}

/// The vectors of a vault's notes that can be clustered, in path order.
pub(crate) struct NoteVectors {
    /// `(vault note index, unit vector)`, sorted by path.
    pub(crate) notes: Vec<(usize, Vec<f32>)>,
    without_vectors: Vec<String>,
    maps_left_out: Vec<String>,
}

impl NoteVectors {
    /// Reads the index's note vectors for the notes of `vault`: a note the index holds but the
    /// vault no longer has is ignored, a vault note with no vector is listed as such.
    pub(crate) fn load(searcher: &Searcher, vault: &Vault) -> Result<NoteVectors, AppError> {
        let stored: HashMap<String, Option<Vec<f32>>> = searcher
            .note_vectors("topic clusters")?
            .into_iter()
            .collect();
        let mut notes = Vec::new();
        let mut without_vectors = Vec::new();
        let mut maps_left_out = Vec::new();
        let mut order: Vec<usize> = (0..vault.notes.len()).collect();
        order.sort_by(|&a, &b| vault.notes[a].path.cmp(&vault.notes[b].path));
        for i in order {
            let path = &vault.notes[i].path;
            if vault.graph.is_moc.get(i).copied().unwrap_or(false) {
                maps_left_out.push(path.clone());
                continue;
            }
            match stored.get(path) {
                Some(Some(vector)) => notes.push((i, vector.clone())),
                _ => without_vectors.push(path.clone()),
            }
        }
        if notes.is_empty() {
            return Err(AppError::NotReady(
                "topic clusters need the notes' vectors, and no note of this vault has one in the index: run `quire index` with the embedding model".into(),
            ));
        }
        Ok(NoteVectors {
            notes,
            without_vectors,
            maps_left_out,
        })
    }

    /// The clustering of every note.
    fn report(self, vault: &Vault, options: &TopicOptions) -> TopicReport {
        let chosen = self.cluster_all(vault, options);
        TopicReport {
            k: chosen.k,
            notes_clustered: self.notes.len(),
            silhouette: chosen.silhouette,
            k_tried: chosen.tried,
            clusters: chosen.clusters,
            without_vectors: self.without_vectors,
            maps_left_out: self.maps_left_out,
        }
    }

    /// Every note clustered: into `options.k` clusters, or into the one of [`K_CANDIDATES`]
    /// numbers from [`cluster_count`] up whose clustering has the best silhouette.
    pub(crate) fn cluster_all(&self, vault: &Vault, options: &TopicOptions) -> Chosen {
        let all: Vec<usize> = (0..self.notes.len()).collect();
        let n = all.len();
        let candidates: Vec<usize> = match options.k {
            Some(k) => vec![k.clamp(1, n)],
            None => {
                let least = cluster_count(n);
                let mut ks: Vec<usize> = (least..least + K_CANDIDATES)
                    .filter(|&k| (2..=30).contains(&k) && k <= n)
                    .collect();
                if ks.is_empty() {
                    ks.push(least.max(1));
                }
                ks
            }
        };
        let mut best: Option<Chosen> = None;
        let mut tried = Vec::new();
        for k in candidates {
            let (clusters, silhouette) = self.group(vault, &all, k, options.terms);
            tried.push(KScore { k, silhouette });
            let better = match &best {
                None => true,
                Some(b) => silhouette.unwrap_or(-1.0) > b.silhouette.unwrap_or(-1.0),
            };
            if better {
                best = Some(Chosen {
                    k,
                    clusters,
                    silhouette,
                    tried: Vec::new(),
                });
            }
        }
        let mut chosen = best.unwrap_or(Chosen {
            k: 0,
            clusters: Vec::new(),
            silhouette: None,
            tried: Vec::new(),
        });
        chosen.tried = tried;
        chosen
    }

    /// The rows `members` (indexes into `self.notes`) grouped into `k` clusters, ordered and
    /// labelled against each other, with the clustering's silhouette. Used for topics and for
    /// the sub-topics of one topic.
    pub(crate) fn group(
        &self,
        vault: &Vault,
        members: &[usize],
        k: usize,
        terms: usize,
    ) -> (Vec<TopicCluster>, Option<f32>) {
        let points: Vec<&[f32]> = members
            .iter()
            .map(|&m| self.notes[m].1.as_slice())
            .collect();
        let clustering = kmeans(&points, k, SEED);
        // The silhouette costs n² dot products: an even sample of the notes is enough to
        // compare a few values of k.
        let step = points.len().div_ceil(SILHOUETTE_SAMPLE).max(1);
        let sample: Vec<&[f32]> = points.iter().step_by(step).copied().collect();
        let sampled: Vec<usize> = clustering
            .assignments
            .iter()
            .step_by(step)
            .copied()
            .collect();
        let score = silhouette(&sample, &sampled);
        let mut groups: Vec<Vec<(f32, usize)>> = vec![Vec::new(); clustering.centroids.len()];
        for (p, &c) in clustering.assignments.iter().enumerate() {
            let closeness = quire_embed::dot(points[p], &clustering.centroids[c]);
            groups[c].push((closeness, members[p]));
        }
        groups.retain(|g| !g.is_empty());
        let path = |m: usize| vault.notes[self.notes[m].0].path.as_str();
        for group in &mut groups {
            group.sort_by(|a, b| b.0.total_cmp(&a.0).then_with(|| path(a.1).cmp(path(b.1))));
        }
        let first_path = |g: &[(f32, usize)]| g.iter().map(|&(_, m)| path(m)).min();
        groups.sort_by(|a, b| {
            b.len()
                .cmp(&a.len())
                .then_with(|| first_path(a).cmp(&first_path(b)))
        });
        let texts: Vec<Vec<&str>> = groups
            .iter()
            .map(|g| {
                g.iter()
                    .map(|&(_, m)| body(&vault.notes[self.notes[m].0]))
                    .collect()
            })
            .collect();
        let weighted = cluster_terms(&texts, terms.max(LABEL_TERMS), Weighting::default());
        let clusters = groups
            .iter()
            .zip(weighted)
            .enumerate()
            .map(|(i, (group, mut words))| {
                let label = label(&words, LABEL_TERMS);
                words.truncate(terms);
                TopicCluster {
                    id: i + 1,
                    label,
                    terms: words.into_iter().map(|w| w.term).collect(),
                    notes: group.iter().map(|&(_, m)| path(m).to_string()).collect(),
                    cohesion: group.iter().map(|g| g.0).sum::<f32>() / group.len() as f32,
                }
            })
            .collect();
        (clusters, score)
    }

    /// The row of the note at `path`.
    pub(crate) fn row_of(&self, vault: &Vault, path: &str) -> Option<usize> {
        self.notes
            .iter()
            .position(|(i, _)| vault.notes[*i].path == path)
    }
}

/// The topics as the "Topics" section of an audit report (Markdown): one row per cluster with
/// its label, size, cohesion, more of its terms and its closest notes, then what was left out.
pub fn render_markdown(report: &TopicReport) -> String {
    let mut out = format!("## Topics ({})\n\n", report.clusters.len());
    out.push_str(&format!(
        "The notes grouped by meaning: k-means over the index's note vectors ({} notes, k = {}{}), each topic labelled by its most distinctive words (c-TF-IDF). `quire moc N` proposes a map of content for topic N.\n\n",
        report.notes_clustered,
        report.k,
        report
            .silhouette
            .map(|s| format!(", silhouette {s:.2}"))
            .unwrap_or_default()
    ));
    out.push_str("| topic | label | notes | cohesion | more terms | closest notes |\n|---|---|---|---|---|---|\n");
    for c in &report.clusters {
        let more: Vec<&str> = c
            .terms
            .iter()
            .skip(LABEL_TERMS)
            .take(4)
            .map(String::as_str)
            .collect();
        let closest: Vec<String> = c.notes.iter().take(3).map(|p| format!("`{p}`")).collect();
        let rest = match c.notes.len().saturating_sub(3) {
            0 => String::new(),
            n => format!(" … and {n} more"),
        };
        out.push_str(&format!(
            "| {} | {} | {} | {:.2} | {} | {}{rest} |\n",
            c.id,
            c.label,
            c.notes.len(),
            c.cohesion,
            more.join(", "),
            closest.join(", ")
        ));
    }
    if !report.maps_left_out.is_empty() {
        out.push_str(&format!(
            "\nLeft out: {} maps of content (they list other topics' notes).\n",
            report.maps_left_out.len()
        ));
    }
    if !report.without_vectors.is_empty() {
        out.push_str(&format!(
            "\n{} notes have no vector in the index yet (run `quire index` with the model): {}\n",
            report.without_vectors.len(),
            report
                .without_vectors
                .iter()
                .take(5)
                .map(|p| format!("`{p}`"))
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    out
}

/// A note's text after its frontmatter: what its topic words are drawn from.
fn body(note: &quire_vault::Note) -> &str {
    let skip = note.body_start_line.saturating_sub(1);
    if skip == 0 {
        return &note.source;
    }
    let mut offset = 0;
    for (n, line) in note.source.split_inclusive('\n').enumerate() {
        if n == skip {
            break;
        }
        offset += line.len();
    }
    &note.source[offset..]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn k_grows_with_the_square_root_and_stays_in_bounds() {
        assert_eq!(cluster_count(1), 1);
        assert_eq!(cluster_count(3), 2);
        assert_eq!(cluster_count(50), 5);
        assert_eq!(cluster_count(118), 8);
        assert_eq!(cluster_count(100_000), 30);
    }
}
