//! `quire draft`: a section written from the other notes, printed, proposed (`--propose`) or
//! inserted (`--insert`: proposed and applied at once).

use std::process::ExitCode;

use anyhow::{Result, bail};
use quire_app::draft::write_draft;
use quire_app::proposals::{Applied, Proposal};
use quire_app::types::Mode;
use quire_app::types::{AnswerKind, ContextLimits, Draft, DraftTarget, SourceReader};
use serde::Serialize;

use super::ask::{retrieval_summary, source_cards};
use super::streaming::Streaming;
use super::{EXIT_CANCELLED, chat_model};
use crate::Cli;
use crate::common::{find_note, load_embedder, open_backend, open_options, open_vault, print_json};

/// `draft`'s flags.
pub(super) struct DraftFlags<'a> {
    pub note: &'a str,
    pub heading: &'a str,
    pub insert: bool,
    pub propose: bool,
    pub limits: ContextLimits,
    pub mode: Option<Mode>,
}

pub(super) fn draft(cli: &Cli, flags: DraftFlags<'_>, out: &mut String) -> Result<ExitCode> {
    let model = chat_model()?;
    if (flags.insert || flags.propose) && model.is_none() {
        bail!(
            "--insert and --propose write a generated draft, and no language model is configured (see `quire config`); without them, quire lists the material for the section"
        );
    }
    let vault = open_vault(cli)?;
    let path = vault.notes[find_note(&vault, flags.note)?].path.clone();
    let reader = SourceReader::open(&vault.root, &open_options(cli))?;
    drop(vault);
    let embedder = if flags.mode == Some(Mode::Bm25) {
        None
    } else {
        load_embedder(cli)?
    };
    let (target, frozen) = {
        let searcher = open_backend(cli, embedder)?;
        quire_app::draft::draft_context(
            searcher.answer_index(),
            &reader,
            &path,
            flags.heading,
            flags.mode,
            flags.limits,
        )?
    };
    let mut streaming = Streaming::new(cli);
    let written = streaming
        .run(|token, on_text| write_draft(model.as_deref(), &target, frozen, token, on_text))?;
    let Some(draft) = written else {
        return Ok(ExitCode::from(EXIT_CANCELLED));
    };
    streaming.printer.end_line();
    let written = if flags.insert || flags.propose {
        Some(propose(cli, &target, &draft, flags.insert)?)
    } else {
        None
    };
    if cli.json {
        let mut value = serde_json::to_value(&draft)?;
        value["proposal"] = serde_json::to_value(&written)?;
        print_json(out, &value);
    } else {
        streaming.text(&draft_footer(&target, &draft, written.as_ref()));
    }
    Ok(ExitCode::SUCCESS)
}

/// What `--propose` or `--insert` did with the draft.
#[derive(Serialize)]
struct Written {
    /// The proposal (applied with `--insert`).
    proposal: Proposal,
    /// The draft's first line in the note.
    line: usize,
    /// Whether the heading was added at the end because the note did not have it.
    heading_added: bool,
    /// With `--insert`: what was written and where the backup is.
    applied: Option<Applied>,
}

/// Makes the draft a proposal to put under its heading, and applies it with `apply`.
fn propose(cli: &Cli, target: &DraftTarget, draft: &Draft, apply: bool) -> Result<Written> {
    if draft.kind != AnswerKind::Generated || draft.draft.trim().is_empty() {
        bail!("the model wrote no draft: nothing was proposed or inserted");
    }
    let store = crate::proposals::open(cli)?;
    let sources = draft.sources.iter().map(|s| s.path.clone()).collect();
    let proposal = quire_app::proposals::propose_draft(&store, target, &draft.draft, sources)?;
    let line = proposal.changes[0].line.unwrap_or(1);
    let applied = if apply {
        Some(crate::proposals::apply(&store, &proposal.id)?)
    } else {
        None
    };
    Ok(Written {
        proposal: applied.as_ref().map_or(proposal, |a| a.proposal.clone()),
        line,
        heading_added: target.section.is_none(),
        applied,
    })
}

/// The lines after a draft: source cards, warnings, retrieval, and where it went.
fn draft_footer(target: &DraftTarget, draft: &Draft, written: Option<&Written>) -> String {
    let mut text = source_cards(&draft.sources);
    for warning in &draft.warnings {
        text.push_str(&format!("warning: {warning}\n"));
    }
    text.push_str(&retrieval_summary(&draft.retrieval));
    let added = |w: &Written| {
        if w.heading_added {
            " (heading added at the end)"
        } else {
            ""
        }
    };
    match written {
        Some(w @ Written {
            applied: Some(applied),
            ..
        }) => text.push_str(&format!(
            "inserted under “{}” at {}:{}{} (proposal {}); the note as it was is kept in {}\n",
            target.heading,
            target.path,
            w.line,
            added(w),
            w.proposal.id,
            applied.backup_dir.display()
        )),
        Some(w) => text.push_str(&format!(
            "proposed under “{}” at {}:{}{}: proposal {} (`quire proposals show {}`, then `apply` or `reject`)\n",
            target.heading,
            target.path,
            w.line,
            added(w),
            w.proposal.id,
            w.proposal.id
        )),
        None if draft.kind == AnswerKind::Generated => {
            text.push_str("(not written into the note: --propose makes it a proposal, --insert writes it)\n")
        }
        None => {}
    }
    text
}
