//! `quire audit --deep`: the structural audit, topic clusters, and with a model the map-reduce
//! over every note (`quire_app::deep_audit`). It says what it will send first; `--dry-run` stops
//! there. A progress bar on a terminal; Ctrl-C keeps the records made so far.

use std::io::IsTerminal;
use std::process::ExitCode;

use anyhow::Result;
use clap::Args;
use indicatif::{ProgressBar, ProgressStyle};
use quire_app::deep_audit::{DeepAuditOptions, deep_audit, render_deep_markdown};
use quire_app::types::{AssistError, MapOptions};

use super::streaming::Streaming;
use super::{EXIT_CANCELLED, chat_model};
use crate::Cli;
use crate::common::{index_location, load_embedder, open_searcher, open_vault, print_json};

/// The flags of `quire audit --deep`.
#[derive(Args, Debug, Clone)]
pub(crate) struct DeepArgs {
    /// The deep audit: with a language model, a record per note (main idea, key points,
    /// entities, quality, tags, topics, links), cached in the audit index, then topic names,
    /// recommendations and an action plan; offline, the clusters and the structure.
    #[arg(long)]
    pub(crate) deep: bool,
    /// With --deep: say how many notes, requests and tokens would be sent, and send nothing.
    #[arg(long, requires = "deep")]
    pub(crate) dry_run: bool,
    /// With --deep: forget the cached records and audit every note again.
    #[arg(long, requires = "deep")]
    pub(crate) full: bool,
    /// With --deep: requests in flight at once.
    #[arg(long, default_value_t = 2, requires = "deep")]
    pub(crate) concurrency: usize,
    /// With --deep: tokens of notes per request (about).
    #[arg(long, default_value_t = 3_000, requires = "deep")]
    pub(crate) batch_tokens: usize,
    /// With --deep: stop after sending about this many tokens (run again to go on).
    #[arg(long, requires = "deep")]
    pub(crate) budget_tokens: Option<usize>,
}

pub(crate) fn run(cli: &Cli, args: &DeepArgs, out: &mut String) -> Result<ExitCode> {
    let model = chat_model()?;
    let vault = open_vault(cli)?;
    let searcher = match open_searcher(cli, load_embedder(cli)?) {
        Ok(searcher) => Some(searcher),
        Err(e) => {
            eprintln!("quire: no topic clusters: {e:#}");
            None
        }
    };
    let index = index_location(cli)?;
    let options = DeepAuditOptions {
        map: MapOptions {
            concurrency: args.concurrency.max(1),
            batch_tokens: args.batch_tokens.max(200),
            budget_tokens: args.budget_tokens,
            full: args.full,
            ..MapOptions::default()
        },
        dry_run: true,
        ..DeepAuditOptions::default()
    };
    let cancel = quire_app::types::CancelToken::new();
    // First the plan, always: what will be sent.
    let planned = deep_audit(
        &vault,
        searcher.as_ref(),
        &index,
        model.as_deref(),
        &options,
        &cancel,
        &|_, _| {},
    )?;
    if let Some(plan) = &planned.plan {
        eprintln!(
            "quire: audit of {} notes with {}: {} cached, {} to send in {} requests (about {} tokens)",
            plan.notes,
            planned.model.as_deref().unwrap_or("?"),
            plan.cached,
            plan.to_send,
            plan.requests,
            plan.estimated_tokens
        );
    }
    let report = if args.dry_run || model.is_none() {
        // Offline nothing is ever sent: the report is the whole offline audit.
        let mut planned = planned;
        planned.dry_run = args.dry_run;
        planned
    } else {
        let bar = (!cli.json && std::io::stderr().is_terminal()).then(|| {
            let bar = ProgressBar::new(0);
            bar.set_style(
                ProgressStyle::with_template(
                    "{spinner} auditing notes {bar:30} {pos}/{len} requests",
                )
                .unwrap_or_else(|_| ProgressStyle::default_bar()),
            );
            bar
        });
        let on_batch = |done: usize, total: usize| {
            if let Some(bar) = &bar {
                bar.set_length(total as u64);
                bar.set_position(done as u64);
            }
        };
        let options = DeepAuditOptions {
            dry_run: false,
            ..options
        };
        let mut streaming = Streaming::new(cli);
        let result = streaming.run(|token, _| {
            Ok::<_, AssistError>(deep_audit(
                &vault,
                searcher.as_ref(),
                &index,
                model.as_deref(),
                &options,
                token,
                &on_batch,
            ))
        })?;
        if let Some(bar) = &bar {
            bar.finish_and_clear();
        }
        match result {
            Some(report) => report?,
            None => return Ok(ExitCode::from(EXIT_CANCELLED)),
        }
    };
    if cli.json {
        print_json(out, &report);
    } else {
        out.push_str(&render_deep_markdown(&report));
    }
    let cancelled = report.map.as_ref().is_some_and(|m| m.cancelled);
    Ok(if cancelled {
        ExitCode::from(EXIT_CANCELLED)
    } else {
        ExitCode::SUCCESS
    })
}
