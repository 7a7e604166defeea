//! `quire moc [CLUSTER | --all] [--apply] [--folder F]`: a map of content for each chosen topic
//! cluster (`quire audit --clusters` numbers them), made as a proposal (`quire_app::moc`);
//! `--apply` applies each at once.

use std::process::ExitCode;

use anyhow::{Result, bail};
use quire_app::moc::{MocChoice, MocRequest};
use quire_app::topics::TopicOptions;
use serde_json::json;

use crate::Cli;
use crate::common::{open_searcher, open_vault, print_json};
use crate::proposals::{applied_text, apply, open};

/// The flags of `quire moc`.
pub(crate) struct MocFlags<'a> {
    pub(crate) cluster: Option<usize>,
    pub(crate) all: bool,
    pub(crate) apply: bool,
    pub(crate) folder: Option<&'a str>,
}

pub(crate) fn run(cli: &Cli, flags: MocFlags<'_>, out: &mut String) -> Result<ExitCode> {
    let choice = match (flags.cluster, flags.all) {
        (Some(id), false) => MocChoice::Cluster(id),
        (None, true) => MocChoice::All,
        _ => {
            bail!("name one cluster (`quire moc 3`; `quire audit --clusters` lists them) or --all")
        }
    };
    let vault = open_vault(cli)?;
    let searcher = open_searcher(cli, None)?;
    let store = open(cli)?;
    let mut command = String::from("quire moc");
    match choice {
        MocChoice::Cluster(id) => command.push_str(&format!(" {id}")),
        MocChoice::All => command.push_str(" --all"),
    }
    if let Some(folder) = flags.folder {
        command.push_str(&format!(" --folder {folder}"));
    }
    let request = MocRequest {
        choice,
        folder: flags.folder.map(str::to_string),
        created: chrono::Local::now().date_naive(),
        topics: TopicOptions::default(),
        command,
    };
    let outcome = quire_app::moc::propose_mocs(&searcher, &vault, &store, &request)?;
    let mut applied = Vec::new();
    if flags.apply {
        for made in &outcome.proposals {
            applied.push(apply(&store, &made.proposal)?);
        }
    }
    if cli.json {
        print_json(
            out,
            &json!({
                "proposals": outcome.proposals,
                "skipped": outcome.skipped,
                "applied": applied,
            }),
        );
        return Ok(ExitCode::SUCCESS);
    }
    // One line per cluster, in cluster order.
    let mut lines: Vec<(usize, String)> = Vec::new();
    for skipped in &outcome.skipped {
        let why = match (&skipped.link, skipped.linked, &skipped.proposal) {
            (_, _, Some(id)) => format!(
                "a pending proposal maps these notes already: {id} (`quire proposals show {id}`)"
            ),
            (Some(link), Some(linked), _) => {
                format!(
                    "already mapped by {link} ({linked} of {} notes)",
                    skipped.notes
                )
            }
            _ => format!("{} notes, too few for a map", skipped.notes),
        };
        lines.push((
            skipped.cluster,
            format!(
                "topic {} ({}): {why}; no map proposed",
                skipped.cluster, skipped.label
            ),
        ));
    }
    for made in &outcome.proposals {
        let grouping = if made.sub_topics.is_empty() {
            String::new()
        } else {
            format!(" in {} sub-topics", made.sub_topics.len())
        };
        lines.push((
            made.cluster,
            format!(
                "topic {} ({}): {}  {} notes{grouping}  proposal {}",
                made.cluster, made.label, made.path, made.notes, made.proposal
            ),
        ));
    }
    lines.sort();
    for (_, line) in lines {
        outln!(out, "{line}");
    }
    if flags.apply {
        for done in &applied {
            out.push_str(&applied_text(done));
        }
    } else if let Some(first) = outcome.proposals.first() {
        outln!(
            out,
            "\nNothing is written yet. Review with `quire proposals show {id}`, write with `quire proposals apply {id}` (or run again with --apply).",
            id = first.proposal
        );
    }
    Ok(ExitCode::SUCCESS)
}
