//! `flashcards`, `split` and `transform`: the writing tools on one note (`quire_app::notetools`).
//! Each prints its proposal (title, diff) and how to apply it; `--apply` applies it at once.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Result, bail};
use clap::Args;
use quire_app::notetools::{self, Selection};
use quire_app::proposals::{Proposal, ProposalStore, Saved};
use quire_assist::context::SourceReader;
use quire_assist::transform::Preset;
use quire_llm::CancelToken;
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
            "quire: {} cards the note already has and {} citing lines it does not have were left out",
            outcome.cards.already_in_note, outcome.cards.bad_lines
        );
    }
    if let Some(target) = anki {
        let mut tags = outcome.tags.clone();
        tags.push("quire".into());
        let tsv = quire_assist::flashcards::anki_tsv(&outcome.cards.cards, &tags);
        let saved = quire_app::proposals::save_file(
            &reader.root().to_path_buf(),
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
    let instruction = match (flags.preset, flags.instruction) {
        (Some(preset), None) => preset
            .parse::<Preset>()
            .map_err(anyhow::Error::msg)?
            .instruction(),
        (None, Some(text)) if !text.trim().is_empty() => text.trim().to_string(),
        _ => bail!(
            "give --preset improve|shorten|grammar|examples|translate:LANG or --instruction \"…\""
        ),
    };
    let selection = match (flags.lines, flags.heading) {
        (Some(lines), _) => {
            let (a, b) = lines.split_once('-').unwrap_or((lines, lines));
            match (a.trim().parse(), b.trim().parse()) {
                (Ok(a), Ok(b)) => Selection::Lines(a, b),
                _ => bail!("--lines takes A-B or A, not `{lines}`"),
            }
        }
        (None, Some(heading)) => Selection::Heading(heading.to_string()),
        (None, None) => Selection::Body,
    };
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
