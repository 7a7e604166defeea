//! `quire draft`: a section written from the other notes, printed, or inserted with `--insert`.

use std::path::Path;
use std::process::ExitCode;

use anyhow::{Result, bail};
use quire_assist::ask::AnswerKind;
use quire_assist::context::{ContextLimits, SourceReader};
use quire_assist::draft::{Draft, DraftTarget, Inserted, insert_draft, write_draft};
use quire_search::Mode;

use super::ask::{retrieval_summary, source_cards};
use super::streaming::Streaming;
use super::{EXIT_CANCELLED, chat_model};
use crate::Cli;
use crate::common::{
    find_note, index_location, load_embedder, open_options, open_searcher, open_vault, print_json,
};

/// `draft`'s flags.
pub(super) struct DraftFlags<'a> {
    pub note: &'a str,
    pub heading: &'a str,
    pub insert: bool,
    pub backup_dir: Option<&'a Path>,
    pub limits: ContextLimits,
    pub mode: Option<Mode>,
}

pub(super) fn draft(cli: &Cli, flags: DraftFlags<'_>, out: &mut String) -> Result<ExitCode> {
    let model = chat_model()?;
    if flags.insert && model.is_none() {
        bail!(
            "--insert writes a generated draft, and no language model is configured (see `quire config`); without --insert, quire lists the material for the section"
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
        let searcher = open_searcher(cli, embedder)?;
        quire_app::draft::draft_context(
            &searcher,
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
    let inserted = if flags.insert {
        Some(insert(cli, &target, &draft, flags.backup_dir)?)
    } else {
        None
    };
    if cli.json {
        let mut value = serde_json::to_value(&draft)?;
        value["inserted"] = serde_json::to_value(&inserted)?;
        print_json(out, &value);
    } else {
        streaming.text(&draft_footer(&target, &draft, inserted.as_ref()));
    }
    Ok(ExitCode::SUCCESS)
}

/// Inserts a generated draft under its heading, keeping the note as it was in the backups.
fn insert(
    cli: &Cli,
    target: &DraftTarget,
    draft: &Draft,
    backup_dir: Option<&Path>,
) -> Result<Inserted> {
    if draft.kind != AnswerKind::Generated || draft.draft.trim().is_empty() {
        bail!("the model wrote no draft: nothing was inserted");
    }
    let backups = match backup_dir {
        Some(dir) => dir.to_path_buf(),
        None => index_location(cli)?.dir.join("backups"),
    };
    Ok(insert_draft(target, &draft.draft, &backups)?)
}

/// The lines after a draft: source cards, warnings, retrieval, and where it went.
fn draft_footer(target: &DraftTarget, draft: &Draft, inserted: Option<&Inserted>) -> String {
    let mut text = source_cards(&draft.sources);
    for warning in &draft.warnings {
        text.push_str(&format!("warning: {warning}\n"));
    }
    text.push_str(&retrieval_summary(&draft.retrieval));
    match inserted {
        Some(inserted) => text.push_str(&format!(
            "inserted under “{}” at {}:{}{}; the note as it was is kept in {}\n",
            target.heading,
            inserted.path,
            inserted.line,
            if inserted.heading_added {
                " (heading added at the end)"
            } else {
                ""
            },
            inserted.backup.display()
        )),
        None if draft.kind == AnswerKind::Generated => {
            text.push_str("(not written into the note: add --insert to do so)\n")
        }
        None => {}
    }
    text
}
