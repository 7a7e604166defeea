//! `quire questions`: the questions a note or folder answers, one per topic.

use std::path::Path;
use std::process::ExitCode;

use anyhow::Result;
use quire_app::AppError;
use quire_app::questions::{Scope, Topic};
use quire_app::types::{AnswerKind, SourceReader};

use super::streaming::Streaming;
use super::{EXIT_CANCELLED, chat_model};
use crate::Cli;
use crate::common::{find_note, open_options, open_searcher, open_vault, print_json, vault_root};

/// A QUESTIONS target: a folder of the vault given as a path from here, else what the core
/// reads as a scope (a vault-relative folder, else a note).
fn questions_scope(cli: &Cli, target: &str) -> Result<Scope> {
    let root = vault_root(cli)?;
    let here = Path::new(target);
    if here.is_dir()
        && let Ok(canonical) = here.canonicalize()
        && let Ok(rel) = canonical.strip_prefix(&root)
    {
        return Ok(Scope::Folder(rel.to_string_lossy().replace('\\', "/")));
    }
    Ok(quire_app::questions::scope_of(&root, target, |query| {
        let vault = open_vault(cli).map_err(|e| AppError::NotReady(format!("{e:#}")))?;
        let i = find_note(&vault, query)
            .map_err(|e| AppError::bad_arguments("questions", format!("{e:#}")))?;
        Ok(vault.notes[i].path.clone())
    })?)
}

pub(super) fn questions(cli: &Cli, target: &str, out: &mut String) -> Result<ExitCode> {
    let scope = questions_scope(cli, target)?;
    let reader = SourceReader::open(&vault_root(cli)?, &open_options(cli))?;
    let plan = {
        // No query is embedded: the paragraphs' vectors are read from the index.
        let searcher = open_searcher(cli, None)?;
        quire_app::questions::plan(&searcher, &reader, scope)?
    };
    let model = chat_model()?;
    let mut streaming = Streaming::new(cli);
    streaming.text(&format!(
        "{}: {} paragraphs in {} topics\n\n",
        plan.scope,
        plan.paragraphs,
        plan.topics.len()
    ));
    let asked = streaming.run(|token, on_text| {
        quire_app::questions::ask(plan, model.as_deref(), token, &mut |topic| {
            on_text(&topic_lines(topic))
        })
    })?;
    let Some(found) = asked else {
        return Ok(ExitCode::from(EXIT_CANCELLED));
    };
    if cli.json {
        print_json(out, &found);
    } else {
        let mut text = String::new();
        for d in &found.dropped {
            text.push_str(&format!(
                "left out: {} (chunk {}): {}\n",
                d.path, d.chunk_id, d.reason
            ));
        }
        if found.kind == AnswerKind::Extractive {
            text.push_str("note: no language model is configured, so each topic shows its most central passage instead of a question (see `quire config`)\n");
        }
        streaming.text(&text);
    }
    Ok(ExitCode::SUCCESS)
}

pub(super) fn topic_lines(topic: &Topic) -> String {
    let c = &topic.central;
    let place = format!("{}:{}-{}", c.path, c.start_line, c.end_line);
    let more = match topic.passages.len() {
        1 => String::new(),
        n => format!(" (+{} passages)", n - 1),
    };
    match &topic.question {
        Some(question) => format!("{}. {question}\n   {place}{more}\n", topic.number),
        None => {
            let quote: String = topic
                .central_text
                .lines()
                .map(|l| format!("   > {l}\n"))
                .collect();
            format!("{}. {place}{more}\n{quote}", topic.number)
        }
    }
}
