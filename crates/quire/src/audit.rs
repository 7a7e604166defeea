//! `quire audit`: the structural audit of the vault as Markdown (or JSON with `--json`), and
//! with `--canvas FILE.canvas` its JSON Canvas map, written outside the vault or proposed inside
//! it (`quire_app::audit`).

use std::path::Path;
use std::process::ExitCode;

use anyhow::Result;
use quire_app::audit::{AuditOptions, CanvasSaved, Grouping};
use quire_app::topics::TopicOptions;

use crate::Cli;
use crate::common::{index_location, open_searcher, open_vault, print_json};

/// The flags of `quire audit`.
pub(crate) struct AuditFlags<'a> {
    pub(crate) canvas: Option<&'a Path>,
    pub(crate) group: Grouping,
    pub(crate) top: usize,
    pub(crate) oversized_words: usize,
    /// Add the topic clusters (`quire_app::topics`).
    pub(crate) clusters: bool,
}

pub(crate) fn run(cli: &Cli, flags: AuditFlags<'_>, out: &mut String) -> Result<ExitCode> {
    let vault = open_vault(cli)?;
    let options = AuditOptions {
        top: flags.top,
        oversized_words: flags.oversized_words,
        ..AuditOptions::default()
    };
    let report = quire_app::audit::audit_vault(&vault, &options);
    let topics = if flags.clusters {
        let searcher = open_searcher(cli, None)?;
        Some(quire_app::topics::topic_report(
            &searcher,
            &vault,
            &TopicOptions::default(),
        )?)
    } else {
        None
    };
    if cli.json {
        match &topics {
            Some(topics) => {
                let mut value = serde_json::to_value(&report)?;
                value["topics"] = serde_json::to_value(topics)?;
                print_json(out, &value);
            }
            None => print_json(out, &report),
        }
    } else {
        out.push_str(&quire_app::audit::render_markdown(&report));
        out.push('\n');
        if let Some(topics) = &topics {
            out.push('\n');
            out.push_str(&quire_app::topics::render_markdown(topics));
        }
    }
    if let Some(target) = flags.canvas {
        let canvas = quire_app::audit::canvas(&vault, flags.group);
        let command = format!("quire audit --canvas {}", target.display());
        let saved = quire_app::audit::save_canvas(
            &vault,
            &index_location(cli)?,
            &canvas,
            target,
            &command,
        )?;
        // The report is the output; where the map went is said on stderr.
        match saved {
            CanvasSaved::Written(path) => eprintln!(
                "quire: canvas written to {} ({} notes, {} links)",
                path.display(),
                vault.notes.len(),
                canvas.edges.len()
            ),
            CanvasSaved::Proposed(proposal) => eprintln!(
                "quire: the canvas is inside the vault, so it is a proposal: {}\n\
                 quire: review it with `quire proposals show {}`, apply with `quire proposals apply {}`",
                proposal.id, proposal.id, proposal.id
            ),
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// `quire findings`'s subcommands.
#[derive(clap::Subcommand, Debug)]
pub(crate) enum FindingsAction {
    /// Dismiss a finding for good (by the id `quire findings` shows).
    Dismiss {
        /// The finding's id.
        id: String,
    },
    /// Leave a finding out for some days.
    Snooze {
        /// The finding's id.
        id: String,
        /// For how many days (1 to 365).
        #[arg(long, default_value_t = 7)]
        days: u64,
    },
}

/// `quire findings`: the inbox (the audit's findings, less the dismissed and snoozed ones, what
/// is new since the last run), or a dismissal or snooze.
pub(crate) fn findings(
    cli: &Cli,
    action: Option<&FindingsAction>,
    out: &mut String,
) -> Result<ExitCode> {
    let index_dir = index_location(cli)?.dir;
    let today = chrono::Local::now().date_naive();
    match action {
        Some(FindingsAction::Dismiss { id }) => {
            quire_app::findings::dismiss(&index_dir, id)?;
            outln!(out, "dismissed {id}: it stays out of `quire findings`");
        }
        Some(FindingsAction::Snooze { id, days }) => {
            let until = quire_app::findings::snooze(&index_dir, id, *days, today)?;
            outln!(out, "snoozed {id} until {until}");
        }
        None => {
            let vault = open_vault(cli)?;
            let report = quire_app::audit::audit_vault(&vault, &Default::default());
            let inbox = quire_app::findings::inbox(&index_dir, &report, today)?;
            if cli.json {
                print_json(out, &inbox);
                return Ok(ExitCode::SUCCESS);
            }
            if !inbox.new_since_last.is_empty() {
                outln!(out, "since the last run: {}", inbox.new_since_last);
            }
            for f in &inbox.findings {
                let place = match (&f.finding.path, f.finding.line) {
                    (Some(path), Some(line)) => format!("{path}:{line}"),
                    (Some(path), None) => path.clone(),
                    _ => String::new(),
                };
                outln!(
                    out,
                    "{}{}  {:<22} {}  {}",
                    if f.new { "* " } else { "  " },
                    f.id,
                    f.finding.kind.words(1),
                    place,
                    f.finding.message
                );
            }
            outln!(
                out,
                "{} findings ({} dismissed, {} snoozed); `quire findings dismiss ID` or `snooze ID --days N`",
                inbox.findings.len(),
                inbox.dismissed,
                inbox.snoozed.len()
            );
        }
    }
    Ok(ExitCode::SUCCESS)
}
