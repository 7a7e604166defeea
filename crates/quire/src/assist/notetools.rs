//! `flashcards`, `split` and `transform`: the writing tools on one note (`quire_app::notetools`).
//! Each prints its proposal (title, diff) and how to apply it; `--apply` applies it at once.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Result, bail};
use clap::Args;
use quire_app::notetools::{self, Selection};
use quire_app::proposals::{Proposal, ProposalStore, Saved};
use quire_app::types::CancelToken;
use quire_app::types::{Preset, SourceReader};
use serde_json::json;

use super::chat_model;
use crate::Cli;
use crate::common::{find_note, index_location, open_options, open_vault, print_json};
use crate::proposals::{applied_text, apply, colour, render};

/// The flags every note tool shares.
#[derive(Args, Debug, Clone)]
pub(crate) struct ToolArgs {
    /// Apply the proposal at once (otherwise review it with `quire proposals show ID`).
    #[arg(long)]
    pub(crate) apply: bool,
}

/// The note's vault path, the vault's paths, and a reader.
fn note_and_vault(cli: &Cli, note: &str) -> Result<(String, Vec<String>, SourceReader)> {
    let vault = open_vault(cli)?;
    let path = vault.notes[find_note(&vault, note)?].path.clone();
    let mut paths: Vec<String> = vault.notes.iter().map(|n| n.path.clone()).collect();
    paths.extend(vault.attachments.iter().cloned());
    let reader = SourceReader::open(&vault.root, &open_options(cli))?;
    Ok((path, paths, reader))
}

/// Prints a proposal (or applies it with `--apply`).
fn finish(
    cli: &Cli,
    store: &ProposalStore,
    proposal: &Proposal,
    args: &ToolArgs,
    extra: serde_json::Value,
    out: &mut String,
) -> Result<ExitCode> {
    let applied = if args.apply {
        Some(apply(store, &proposal.id)?)
    } else {
        None
    };
    if cli.json {
        let mut value = extra;
        value["proposal"] = serde_json::to_value(proposal)?;
        value["applied"] = serde_json::to_value(&applied)?;
        print_json(out, &value);
        return Ok(ExitCode::SUCCESS);
    }
    out.push_str(&render(proposal, colour()));
    match applied {
        Some(applied) => out.push_str(&applied_text(&applied)),
        None => outln!(
            out,
            "\nNothing is written yet: `quire proposals apply {}` writes it, `quire proposals reject {}` drops it.",
            proposal.id,
            proposal.id
        ),
    }
    Ok(ExitCode::SUCCESS)
}

pub(crate) fn split(
    cli: &Cli,
    note: &str,
    by_headings: bool,
    args: &ToolArgs,
    out: &mut String,
) -> Result<ExitCode> {
    let (path, paths, reader) = note_and_vault(cli, note)?;
    let model = chat_model()?;
    let store = crate::proposals::open(cli)?;
    let outcome = notetools::split(
        &store,
        &reader,
        &paths,
        &path,
        model.as_deref(),
        by_headings,
        &CancelToken::new(),
    )?;
    let extra = json!({"method": outcome.plan.method, "notes": outcome.plan.notes.iter().map(|n| &n.path).collect::<Vec<_>>()});
    finish(cli, &store, &outcome.proposal, args, extra, out)
}

pub(crate) fn flashcards(
    cli: &Cli,
    note: &str,
    anki: Option<&PathBuf>,
    args: &ToolArgs,
    out: &mut String,
) -> Result<ExitCode> {
    let (path, _, reader) = note_and_vault(cli, note)?;
    let model = chat_model()?;
    let store = crate::proposals::open(cli)?;
    let outcome = notetools::flashcards(
        &store,
        &reader,
        &path,
        model.as_deref(),
        &CancelToken::new(),
    )?;
    if outcome.cards.already_in_note + outcome.cards.bad_lines > 0 {
        eprintln!(
            "quire: left out: {} cards the note already has, {} whose answer is in no line of the note",
            outcome.cards.already_in_note, outcome.cards.bad_lines
        );
    }
    if outcome.cards.relocated > 0 {
        eprintln!(
            "quire: {} cards cited lines without their answer: they cite the line that has it",
            outcome.cards.relocated
        );
    }
    if let Some(target) = anki {
        let mut tags = outcome.tags.clone();
        tags.push("quire".into());
        let tsv = quire_app::notetools::anki_tsv(&outcome.cards.cards, &tags);
        let saved = quire_app::proposals::save_file(
            reader.root(),
            &index_location(cli)?,
            target,
            &tsv,
            &format!("Anki cards of {path}"),
            &format!("quire flashcards {path} --anki {}", target.display()),
        )?;
        match saved {
            Saved::Written(file) => eprintln!(
                "quire: {} cards written to {} (Anki: File › Import)",
                outcome.cards.cards.len(),
                file.display()
            ),
            Saved::Proposed(proposal) => eprintln!(
                "quire: {} is inside the vault, so it is proposal {}",
                target.display(),
                proposal.id
            ),
        }
    }
    let Some(proposal) = &outcome.proposal else {
        if cli.json {
            print_json(out, &json!({"cards": outcome.cards, "proposal": null}));
        } else {
            outln!(
                out,
                "no new cards: the note has them all, or nothing to ask"
            );
        }
        return Ok(ExitCode::SUCCESS);
    };
    let extra = json!({"cards": outcome.cards});
    finish(cli, &store, proposal, args, extra, out)
}

/// The instruction of `--preset` or `--instruction` (exactly one of them).
fn instruction_of(preset: Option<&str>, instruction: Option<&str>) -> Result<String> {
    match (preset, instruction) {
        (Some(preset), None) => Ok(preset
            .parse::<Preset>()
            .map_err(anyhow::Error::msg)?
            .instruction()),
        (None, Some(text)) if !text.trim().is_empty() => Ok(text.trim().to_string()),
        _ => bail!(
            "give --preset improve|shorten|grammar|examples|translate:LANG or --instruction \"…\""
        ),
    }
}

/// An application error as the streaming runner takes it (a cancellation stays one).
fn as_assist(error: quire_app::AppError) -> quire_app::types::AssistError {
    match error {
        quire_app::AppError::Assist(e) => e,
        other => quire_app::types::AssistError::Unusable(other.to_string()),
    }
}

/// `transform`'s selection and instruction flags.
pub(crate) struct TransformFlags<'a> {
    pub(crate) note: &'a str,
    pub(crate) lines: Option<&'a str>,
    pub(crate) heading: Option<&'a str>,
    pub(crate) preset: Option<&'a str>,
    pub(crate) instruction: Option<&'a str>,
}

pub(crate) fn transform(
    cli: &Cli,
    flags: TransformFlags<'_>,
    args: &ToolArgs,
    out: &mut String,
) -> Result<ExitCode> {
    let instruction = instruction_of(flags.preset, flags.instruction)?;
    // clap keeps --lines and --heading apart; --lines wins as before if both ever came.
    let selection = Selection::of(flags.lines, flags.heading.filter(|_| flags.lines.is_none()))?;
    let (path, _, reader) = note_and_vault(cli, flags.note)?;
    let model = chat_model()?;
    let store = crate::proposals::open(cli)?;
    let proposal = notetools::transform(
        &store,
        &reader,
        &path,
        &selection,
        &instruction,
        model.as_deref(),
        &CancelToken::new(),
    )?;
    finish(cli, &store, &proposal, args, json!({}), out)
}

/// `complete`'s flags.
pub(crate) struct CompleteFlags<'a> {
    pub(crate) note: &'a str,
    pub(crate) at: Option<usize>,
    pub(crate) smart: bool,
    pub(crate) print: bool,
}

pub(crate) fn complete(
    cli: &Cli,
    flags: CompleteFlags<'_>,
    args: &ToolArgs,
    out: &mut String,
) -> Result<ExitCode> {
    let (path, _, reader) = note_and_vault(cli, flags.note)?;
    let model = chat_model()?;
    let store = crate::proposals::open(cli)?;
    let searcher = if flags.smart {
        Some(crate::common::open_searcher(
            cli,
            crate::common::load_embedder(cli)?,
        )?)
    } else {
        None
    };
    let mut streaming = super::streaming::Streaming::new(cli);
    let printing = flags.print && !cli.json;
    let done = streaming.run(|token, on_text| {
        let mut sink = |text: &str| {
            if printing {
                on_text(text)
            }
        };
        notetools::complete(
            &store,
            &reader,
            searcher.as_ref(),
            &path,
            flags.at,
            model.as_deref(),
            !flags.print,
            token,
            &mut sink,
        )
        .map_err(as_assist)
    })?;
    let Some(outcome) = done else {
        return Ok(ExitCode::from(super::EXIT_CANCELLED));
    };
    if printing {
        streaming.printer.end_line();
    }
    match &outcome.proposal {
        Some(proposal) => finish(
            cli,
            &store,
            proposal,
            args,
            json!({"completion": outcome.completion}),
            out,
        ),
        None => {
            if cli.json {
                print_json(out, &outcome);
            }
            Ok(ExitCode::SUCCESS)
        }
    }
}

pub(crate) fn dataview(
    cli: &Cli,
    question: &str,
    into: Option<&str>,
    args: &ToolArgs,
    out: &mut String,
) -> Result<ExitCode> {
    let vault = open_vault(cli)?;
    let model = chat_model()?;
    let store = crate::proposals::open(cli)?;
    let reader = SourceReader::open(&vault.root, &open_options(cli))?;
    let into_path = match into {
        Some(note) => Some(vault.notes[find_note(&vault, note)?].path.clone()),
        None => None,
    };
    let outcome = notetools::dataview(
        &vault,
        question,
        model.as_deref(),
        into_path.as_deref().map(|p| (&store, &reader, p)),
        &CancelToken::new(),
    )?;
    match &outcome.proposal {
        Some(proposal) => finish(
            cli,
            &store,
            proposal,
            args,
            json!({"query": outcome.query}),
            out,
        ),
        None => {
            if cli.json {
                print_json(out, &outcome);
            } else {
                outln!(out, "```dataview\n{}\n```", outcome.query);
            }
            Ok(ExitCode::SUCCESS)
        }
    }
}

/// `batch`'s flags.
pub(crate) struct BatchFlags<'a> {
    pub(crate) select: notetools::BatchSelect,
    pub(crate) preset: Option<&'a str>,
    pub(crate) instruction: Option<&'a str>,
    pub(crate) dry_run: bool,
    pub(crate) concurrency: usize,
}

pub(crate) fn batch(
    cli: &Cli,
    flags: BatchFlags<'_>,
    args: &ToolArgs,
    out: &mut String,
) -> Result<ExitCode> {
    let instruction = instruction_of(flags.preset, flags.instruction)?;
    let vault = open_vault(cli)?;
    let searcher = match &flags.select.query {
        Some(_) => Some(crate::common::open_searcher(
            cli,
            crate::common::load_embedder(cli)?,
        )?),
        None => None,
    };
    let index = index_location(cli)?;
    let plan = notetools::batch_plan(
        &vault,
        searcher.as_ref(),
        &flags.select,
        &instruction,
        &index,
    )?;
    if !cli.json || flags.dry_run {
        let lines: Vec<String> = plan
            .notes
            .iter()
            .map(|p| {
                format!(
                    "  {p}{}",
                    if plan.done.contains(p) {
                        "  (done by an earlier run)"
                    } else {
                        ""
                    }
                )
            })
            .collect();
        let text = format!(
            "{} notes, {} done before; about {} tokens to send (and about as many back)\n{}\n",
            plan.notes.len(),
            plan.done.len(),
            plan.estimated_tokens,
            lines.join("\n")
        );
        if flags.dry_run {
            if cli.json {
                print_json(out, &plan);
            } else {
                out.push_str(&text);
            }
            return Ok(ExitCode::SUCCESS);
        }
        eprint!("{text}");
    }
    let model = chat_model()?.ok_or_else(|| anyhow::anyhow!("`batch` needs a language model (see `quire config`); --dry-run lists the notes without one"))?;
    let reader = SourceReader::open(&vault.root, &open_options(cli))?;
    let store = crate::proposals::open(cli)?;
    let bar = crate::progress::NoteBar::new(cli.json, "rewriting notes");
    let mut streaming = super::streaming::Streaming::new(cli);
    let result = streaming.run(|token, _| {
        notetools::run_batch(
            &store,
            &reader,
            &plan,
            &instruction,
            model.as_ref(),
            flags.concurrency,
            token,
            &|done, total| bar.set(done, total),
        )
        .map_err(as_assist)
    })?;
    bar.finish();
    let Some(outcome) = result else {
        return Ok(ExitCode::from(super::EXIT_CANCELLED));
    };
    let mut applied = Vec::new();
    if args.apply {
        for (_, id) in &outcome.proposals {
            applied.push(apply(&store, id)?);
        }
    }
    if cli.json {
        print_json(
            out,
            &json!({"plan": plan, "outcome": outcome, "applied": applied}),
        );
    } else {
        for (path, id) in &outcome.proposals {
            outln!(out, "{id}  {path}");
        }
        for (path, reason) in &outcome.failed {
            outln!(out, "failed  {path}: {reason}");
        }
        outln!(
            out,
            "{} proposals{}; `quire proposals show ID` to review, `apply ID` to write{}",
            outcome.proposals.len(),
            if args.apply { " applied" } else { "" },
            if outcome.cancelled {
                " (stopped by Ctrl-C: run the same command again to go on)"
            } else {
                ""
            }
        );
    }
    Ok(if outcome.cancelled {
        ExitCode::from(super::EXIT_CANCELLED)
    } else {
        ExitCode::SUCCESS
    })
}
