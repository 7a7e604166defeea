//! `quire questions`: the questions a note or folder answers, one per topic.

use std::path::Path;
use std::process::ExitCode;

use anyhow::{Result, bail};
use quire_assist::ask::AnswerKind;
use quire_assist::context::SourceReader;
use quire_assist::questions::{self, Scope, Topic};
use serde_json::json;

use super::streaming::Streaming;
use super::{EXIT_CANCELLED, chat_model};
use crate::Cli;
use crate::common::{find_note, open_options, open_searcher, open_vault, print_json, vault_root};

/// A QUESTIONS target: a folder of the vault (as a path from here, or vault-relative), else a
/// note.
fn questions_scope(cli: &Cli, target: &str) -> Result<Scope> {
    let root = vault_root(cli)?;
    let here = Path::new(target);
    if here.is_dir()
        && let Ok(canonical) = here.canonicalize()
        && let Ok(rel) = canonical.strip_prefix(&root)
    {
        return Ok(Scope::Folder(rel.to_string_lossy().replace('\\', "/")));
    }
    let relative = target.trim().trim_end_matches('/');
    quire_vault::vault::check_confined(relative)?;
    if root.join(relative).is_dir() {
        return Ok(Scope::Folder(relative.to_string()));
    }
    let vault = open_vault(cli)?;
    Ok(Scope::Note(
        vault.notes[find_note(&vault, target)?].path.clone(),
    ))
}

pub(super) fn questions(cli: &Cli, target: &str, out: &mut String) -> Result<ExitCode> {
    let scope = questions_scope(cli, target)?;
    let reader = SourceReader::open(&vault_root(cli)?, &open_options(cli))?;
    let (paragraphs, dropped) = {
        // No query is embedded: the paragraphs' vectors are read from the index.
        let searcher = open_searcher(cli, None)?;
        questions::load_paragraphs(&searcher, &reader, &scope)?
    };
    if paragraphs.is_empty() {
        bail!(
            "no indexed paragraphs with vectors in {scope}: run `quire index` (with the embedding model)"
        );
    }
    let n = paragraphs.len();
    let k = questions::cluster_count(n);
    let topics = questions::topics(paragraphs, k);
    let model = chat_model()?;
    let mut streaming = Streaming::new(cli);
    streaming.text(&format!("{scope}: {n} paragraphs in {k} topics\n\n"));
    let asked = streaming.run(|token, on_text| {
        questions::ask_questions(model.as_deref(), &topics, token, &mut |topic| {
            on_text(&topic_lines(topic))
        })
    })?;
    let Some(found) = asked else {
        return Ok(ExitCode::from(EXIT_CANCELLED));
    };
    let kind = if model.is_some() {
        AnswerKind::Generated
    } else {
        AnswerKind::Extractive
    };
    if cli.json {
        print_json(
            out,
            &json!({
                "scope": scope.to_string(), "kind": kind, "paragraphs": n, "k": k,
                "topics": found, "dropped": dropped,
            }),
        );
    } else {
        let mut text = String::new();
        for d in &dropped {
            text.push_str(&format!(
                "left out: {} (chunk {}): {}\n",
                d.path, d.chunk_id, d.reason
            ));
        }
        if kind == AnswerKind::Extractive {
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
