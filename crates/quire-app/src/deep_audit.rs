//! `quire audit --deep`, once for every face: the structural audit, the topic clusters, and with
//! a model the map-reduce of `quire_assist::audit` over every note, cached in the audit index
//! (`<index>/audit.sqlite`). Offline it gives what needs no model (structure, clusters labelled
//! by their distinctive terms) and says what needs one.

use std::collections::{BTreeSet, HashMap};

use quire_assist::audit::{
    self as map_reduce, AuditNote, ClusterBrief, FailedBatch, Item, MapOptions, MapOutcome,
    MapPlan, NoteRecord,
};
use quire_index::{AuditCache, IndexLocation};
use quire_llm::{CancelToken, ChatModel};
use quire_search::Searcher;
use quire_vault::Vault;
use quire_vault::links::Resolution;
use serde::Serialize;

use crate::error::AppError;
use crate::topics::{TopicOptions, TopicReport, topic_report};

/// How a deep audit runs.
#[derive(Debug, Clone, Default)]
pub struct DeepAuditOptions {
    /// Batching, concurrency, budget, `--full`.
    pub map: MapOptions,
    /// Say what would be sent, send nothing.
    pub dry_run: bool,
    /// The clustering.
    pub topics: TopicOptions,
}

/// A topic cluster as the report shows it.
#[derive(Debug, Clone, Serialize)]
pub struct NamedCluster {
    /// The cluster's id (as `quire moc` takes it).
    pub id: usize,
    /// The model's name for it, else its distinctive terms.
    pub name: String,
    /// Whether the model named it.
    pub named_by_model: bool,
    /// Its distinctive terms (c-TF-IDF).
    pub terms: Vec<String>,
    /// Its notes.
    pub notes: Vec<String>,
}

/// A note the model found weak.
#[derive(Debug, Clone, Serialize)]
pub struct QualityFinding {
    /// The note.
    pub path: String,
    /// 1–5.
    pub score: u8,
    /// What is wrong.
    pub issues: Vec<String>,
}

/// The deep audit's report.
#[derive(Debug, Clone, Serialize)]
pub struct DeepAuditReport {
    /// The model, if one is configured.
    pub model: Option<String>,
    /// What the map sends (or would send, with `--dry-run`).
    pub plan: Option<MapPlan>,
    /// Only the plan was made.
    pub dry_run: bool,
    /// The structural audit.
    pub structural: quire_audit::AuditReport,
    /// The clustering, when the index has embeddings.
    pub topics: Option<TopicReport>,
    /// Why there are no clusters.
    pub topics_unavailable: Option<String>,
    /// The clusters, named.
    pub clusters: Vec<NamedCluster>,
    /// What the map did (with a model).
    pub map: Option<MapOutcome>,
    /// Notes the model scored 2 or lower, or found issues in; weakest first.
    pub quality_findings: Vec<QualityFinding>,
    /// The reduce's recommendations.
    pub recommendations: Vec<Item>,
    /// The reduce's action plan.
    pub action_plan: Vec<Item>,
    /// Requests the reduce sent (0 when its reply was cached).
    pub reduce_requests: usize,
    /// Why the reduce gave nothing (its reply never validated).
    pub reduce_error: Option<String>,
    /// Paths the reduce named that are not notes (dropped).
    pub dropped_paths: usize,
    /// What this run could not do without a model.
    pub needs_model: Vec<String>,
}

/// The notes as the map reads them (their text as parsed).
fn audit_notes(vault: &Vault) -> Vec<AuditNote> {
    vault
        .notes
        .iter()
        .map(|n| AuditNote {
            path: n.path.clone(),
            title: n.title.clone(),
            text: n.source.clone(),
        })
        .collect()
}

/// A link text the model suggested → the note it names: as a wikilink resolves from the vault's
/// root, else a note whose title is that text (ignoring case).
fn resolver(vault: &Vault) -> impl Fn(&str) -> Option<String> + Sync + '_ {
    let by_title: HashMap<String, usize> = vault
        .notes
        .iter()
        .enumerate()
        .map(|(i, n)| (n.title.to_lowercase(), i))
        .collect();
    move |text: &str| {
        let target = text.split(['|', '#']).next().unwrap_or_default().trim();
        if target.is_empty() {
            return None;
        }
        match vault.resolver.resolve("", target) {
            Some(Resolution::Note(i)) => Some(vault.notes[i].path.clone()),
            _ => by_title
                .get(&target.to_lowercase())
                .map(|&i| vault.notes[i].path.clone()),
        }
    }
}

/// The structural findings in a few lines, for the reduce.
fn structural_summary(report: &quire_audit::AuditReport) -> String {
    let s = &report.summary;
    let mut text = format!(
        "{} notes in {} folders; {} orphans (no link in or out), {} dead ends, {} unresolved links, {} unlinked attachments, {} link-graph components, {} empty notes, {} notes without headings.\n",
        s.notes,
        s.folders,
        s.orphans,
        s.dead_ends,
        s.unresolved_links,
        s.unlinked_attachments,
        s.components,
        s.empty_notes,
        s.notes_without_headings
    );
    let list = |name: &str, items: &[String]| {
        if items.is_empty() {
            String::new()
        } else {
            let shown: Vec<&str> = items.iter().take(15).map(String::as_str).collect();
            format!("{name}: {}\n", shown.join(", "))
        }
    };
    text.push_str(&list("Orphans", &report.orphans));
    text.push_str(&list("Empty notes", &report.empty_notes));
    text
}

/// Runs the deep audit (see the module docs). `searcher` is the vault's index (clusters need
/// its vectors); `model` `None` is the offline audit; `on_batch` hears each map batch.
pub fn deep_audit(
    vault: &Vault,
    searcher: Option<&Searcher>,
    index: &IndexLocation,
    model: Option<&dyn ChatModel>,
    options: &DeepAuditOptions,
    cancel: &CancelToken,
    on_batch: &(dyn Fn(usize, usize) + Sync),
) -> Result<DeepAuditReport, AppError> {
    let structural = quire_audit::audit(vault, &quire_audit::AuditOptions::default());
    let (topics, topics_unavailable) = match searcher {
        Some(searcher) => match topic_report(searcher, vault, &options.topics) {
            Ok(report) => (Some(report), None),
            Err(e) => (None, Some(e.to_string())),
        },
        None => (None, Some("no index: run `quire index` first".to_string())),
    };
    let mut report = DeepAuditReport {
        model: model.map(|m| m.name()),
        plan: None,
        dry_run: options.dry_run,
        clusters: topics
            .iter()
            .flat_map(|t| &t.clusters)
            .map(|c| NamedCluster {
                id: c.id,
                name: c.label.clone(),
                named_by_model: false,
                terms: c.terms.clone(),
                notes: c.notes.clone(),
            })
            .collect(),
        structural,
        topics,
        topics_unavailable,
        map: None,
        quality_findings: Vec::new(),
        recommendations: Vec::new(),
        action_plan: Vec::new(),
        reduce_requests: 0,
        reduce_error: None,
        dropped_paths: 0,
        needs_model: Vec::new(),
    };
    let Some(model) = model else {
        report.needs_model = vec![
            "a record per note: main idea, key points, entities, quality score and issues, suggested tags, topics and links".into(),
            "names for the topic clusters (shown here by their distinctive terms)".into(),
            "recommendations and an action plan".into(),
        ];
        return Ok(report);
    };
    let cache = AuditCache::open(&index.dir).map_err(quire_search::SearchError::from)?;
    let notes = audit_notes(vault);
    let model_name = model.name();
    if options.map.full && !options.dry_run {
        cache.clear().map_err(quire_search::SearchError::from)?;
    }
    let plan = map_reduce::plan(
        &notes,
        &cache,
        &model_name,
        model.context_tokens(),
        &options.map,
    )?;
    report.plan = Some(plan.clone());
    if options.dry_run {
        return Ok(report);
    }
    let resolve = resolver(vault);
    let outcome = map_reduce::run_map(
        model,
        &notes,
        &plan,
        &cache,
        &resolve,
        &options.map,
        cancel,
        on_batch,
    )?;
    report.quality_findings = quality_findings(&outcome.records);
    if !outcome.cancelled && !outcome.records.is_empty() {
        let briefs: Vec<ClusterBrief> = report
            .clusters
            .iter()
            .map(|c| ClusterBrief {
                id: c.id,
                terms: c.terms.clone(),
                notes: c.notes.clone(),
            })
            .collect();
        let paths: BTreeSet<&str> = vault.notes.iter().map(|n| n.path.as_str()).collect();
        let is_note = |p: &str| paths.contains(p);
        let structural = structural_summary(&report.structural);
        let input = map_reduce::ReduceInput {
            clusters: &briefs,
            records: &outcome.records,
            structural: &structural,
        };
        match map_reduce::run_reduce(model, &cache, &input, &is_note, cancel) {
            Ok((reduced, sent)) => {
                report.reduce_requests = sent;
                match reduced {
                    Ok(reduced) => {
                        for cluster in &mut report.clusters {
                            if let Some(name) = reduced.cluster_names.get(&cluster.id) {
                                cluster.name = name.clone();
                                cluster.named_by_model = true;
                            }
                        }
                        report.recommendations = reduced.recommendations;
                        report.action_plan = reduced.action_plan;
                        report.dropped_paths = reduced.dropped_paths;
                    }
                    Err(invalid) => report.reduce_error = Some(invalid),
                }
            }
            Err(e) if e.is_cancelled() => {}
            Err(e) => report.reduce_error = Some(e.to_string()),
        }
    }
    report.map = Some(outcome);
    Ok(report)
}

fn quality_findings(records: &[NoteRecord]) -> Vec<QualityFinding> {
    let mut findings: Vec<QualityFinding> = records
        .iter()
        .filter(|r| r.quality.score <= 2 || !r.quality.issues.is_empty())
        .map(|r| QualityFinding {
            path: r.path.clone(),
            score: r.quality.score,
            issues: r.quality.issues.clone(),
        })
        .collect();
    findings.sort_by(|a, b| a.score.cmp(&b.score).then_with(|| a.path.cmp(&b.path)));
    findings
}

/// The deep audit as Markdown: the structural report, then topics, quality, recommendations,
/// the action plan, and what was left undone.
pub fn render_deep_markdown(report: &DeepAuditReport) -> String {
    let mut out = quire_audit::render_markdown(&report.structural);
    out.push_str("\n# Deep audit\n\n");
    match (&report.model, &report.plan) {
        (Some(model), Some(plan)) => out.push_str(&format!(
            "Model: {model}. {} notes: {} with a cached record, {} to send in {} requests (about {} tokens).\n",
            plan.notes, plan.cached, plan.to_send, plan.requests, plan.estimated_tokens
        )),
        _ => out.push_str("No language model is configured (see `quire config`).\n"),
    }
    if report.dry_run {
        out.push_str("\n--dry-run: nothing was sent.\n");
        return out;
    }
    if let Some(map) = &report.map {
        out.push_str(&format!(
            "{} requests sent for the notes and {} for the review, {} records from the audit index, {} replies repaired, {} invented links dropped.\n",
            map.requests, report.reduce_requests, map.from_cache, map.repaired, map.invented_links
        ));
        if map.cancelled {
            out.push_str(
                "Stopped by Ctrl-C: the records made so far are kept; run it again to go on.\n",
            );
        }
        if map.budget_reached {
            out.push_str("Stopped at the token budget (--budget-tokens): run it again to go on.\n");
        }
        for FailedBatch { paths, reason } in &map.failed {
            out.push_str(&format!(
                "Not audited (the reply never validated: {reason}): {}\n",
                paths.join(", ")
            ));
        }
    }
    out.push_str("\n## Topics\n\n");
    if let Some(why) = &report.topics_unavailable {
        out.push_str(&format!("No clusters: {why}\n"));
    }
    for cluster in &report.clusters {
        out.push_str(&format!(
            "### {}. {} ({} notes)\n\n",
            cluster.id,
            cluster.name,
            cluster.notes.len()
        ));
        for path in cluster.notes.iter().take(10) {
            out.push_str(&format!("- {}\n", wikilink(path)));
        }
        if cluster.notes.len() > 10 {
            out.push_str(&format!("- … and {} more\n", cluster.notes.len() - 10));
        }
        if cluster.named_by_model {
            out.push_str(&format!("\nTerms: {}\n", cluster.terms.join(", ")));
        }
        out.push('\n');
    }
    if !report.quality_findings.is_empty() {
        out.push_str("## Quality\n\n| note | score | issues |\n|---|---|---|\n");
        for finding in report.quality_findings.iter().take(30) {
            out.push_str(&format!(
                "| {} | {} | {} |\n",
                wikilink(&finding.path),
                finding.score,
                finding.issues.join("; ").replace('|', "\\|")
            ));
        }
        if report.quality_findings.len() > 30 {
            out.push_str(&format!(
                "\n… and {} more (`--json` has them all)\n",
                report.quality_findings.len() - 30
            ));
        }
        out.push('\n');
    }
    for (title, items) in [
        ("Recommendations", &report.recommendations),
        ("Action plan", &report.action_plan),
    ] {
        if items.is_empty() {
            continue;
        }
        out.push_str(&format!("## {title}\n\n"));
        for (n, item) in items.iter().enumerate() {
            let notes: Vec<String> = item.notes.iter().map(|p| wikilink(p)).collect();
            out.push_str(&format!("{}. {}", n + 1, item.text));
            if !notes.is_empty() {
                out.push_str(&format!(" ({})", notes.join(", ")));
            }
            out.push('\n');
        }
        out.push('\n');
    }
    if let Some(error) = &report.reduce_error {
        out.push_str(&format!(
            "The vault-wide review failed: {error}. The records per note are kept.\n"
        ));
    }
    if !report.needs_model.is_empty() {
        out.push_str("## Needs a model\n\n");
        for item in &report.needs_model {
            out.push_str(&format!("- {item}\n"));
        }
    }
    out
}

/// `[[path without .md]]`.
fn wikilink(path: &str) -> String {
    format!("[[{}]]", path.strip_suffix(".md").unwrap_or(path))
}
