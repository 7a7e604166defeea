//! `quire ask`: an answer from the notes with checked citations, one question or a chat.

use std::io::{BufRead, IsTerminal};
use std::process::ExitCode;

use anyhow::{Context, Result};
use quire_app::types::Mode;
use quire_app::types::{
    Answer, AnswerKind, ContextLimits, Conversation, RetrievalReport, SourceCard, SourceReader,
};

use super::streaming::Streaming;
use super::{ENV_PRESET, EXIT_CANCELLED, chat_model, today_or};
use crate::Cli;
use crate::common::{load_embedder, open_backend, open_options, print_json, vault_root};

/// `ask`'s flags.
pub(super) struct AskFlags<'a> {
    pub question: &'a str,
    /// Read follow-up questions from stdin after the answer.
    pub chat: bool,
    pub limits: ContextLimits,
    pub mode: Option<Mode>,
    /// Search, tree descent or auto.
    pub retriever: quire_app::types::Retriever,
    /// Only passages of notes that pass this filter.
    pub filter: quire_app::types::Filter,
    /// Only this note's passages (a path or name, resolved in the vault).
    pub note: Option<&'a str>,
    /// Withhold an answer whose cited sentences are not supported (exit 4).
    pub strict: bool,
    /// Search with a passage the model writes for the question too (query2doc).
    pub expand: bool,
    /// The day date phrases are read against (tests).
    pub today: Option<&'a str>,
}

/// The exit code of `ask --strict` when it withheld an answer.
pub(super) const EXIT_WITHHELD: u8 = 4;

pub(super) fn ask(cli: &Cli, flags: AskFlags<'_>, out: &mut String) -> Result<ExitCode> {
    let AskFlags {
        question,
        chat,
        limits,
        mode,
        retriever,
        mut filter,
        note,
        strict,
        expand,
        today,
    } = flags;
    let today = today_or(today)?;
    // Resolved against the index by the core (a PDF is a note of the index, not of the
    // parsed vault).
    filter.note = note.map(str::to_string);
    let reader = SourceReader::open(&vault_root(cli)?, &open_options(cli))?;
    let embedder = if mode == Some(Mode::Bm25) {
        None
    } else {
        load_embedder(cli)?
    };
    let model = chat_model()?;
    let mut streaming = Streaming::new(cli);
    let mut conversation = Conversation::new();
    let mut question = question.trim().to_string();
    let mut withheld = false;
    loop {
        // The searcher lives for one retrieval: the answer depends only on the frozen context,
        // and the next question sees whatever the index holds by then.
        let frozen = {
            let searcher = open_backend(cli, embedder.clone())?;
            let query = conversation.retrieval_query(&question);
            let request = quire_app::ask::AskRequest {
                question: &question,
                query: &query,
                mode,
                limits,
                today,
                retriever,
                model: model.as_deref(),
                filter: filter.clone(),
                expand,
            };
            quire_app::ask::ask_context(searcher.answer_index(), &reader, &request)?
        };
        // The sentences are checked with the index's embedder (words only without one).
        let checker = match &embedder {
            Some(_) => Some(open_backend(cli, embedder.clone())?),
            None => None,
        };
        let asked = streaming.run(|token, on_text| {
            quire_app::ask::answer_turn(
                &mut conversation,
                model.as_deref(),
                frozen,
                &question,
                checker.as_ref().map(|c| c.answer_index()),
                strict,
                token,
                on_text,
            )
        })?;
        let Some(turn) = asked else {
            return Ok(ExitCode::from(EXIT_CANCELLED));
        };
        let (answer, refusal) = (turn.answer, turn.withheld);
        withheld |= refusal.is_some();
        let mut shown = serde_json::to_value(&answer)?;
        if let Some(reason) = &refusal {
            shown["answer"] = "".into();
            shown["withheld"] = reason.as_str().into();
        }
        if cli.json && chat {
            println!("{}", serde_json::to_string(&shown)?);
        } else if cli.json {
            print_json(out, &shown);
        } else if let Some(reason) = &refusal {
            eprintln!("{}", withheld_text(reason, &answer));
        } else {
            if strict {
                streaming.text(&answer.answer);
            }
            streaming.printer.end_line();
            streaming.text(&answer_footer(&answer));
        }
        if !chat {
            break;
        }
        match next_question()? {
            Some(next) => question = next,
            None => break,
        }
    }
    Ok(if withheld {
        ExitCode::from(EXIT_WITHHELD)
    } else {
        ExitCode::SUCCESS
    })
}

/// What `--strict` prints instead of an answer: the reason and each failing sentence.
fn withheld_text(reason: &str, answer: &Answer) -> String {
    let mut text = format!("quire: answer withheld (--strict): {reason}\n");
    for sentence in answer.sentences.iter().filter(|s| s.fails()) {
        let verdicts: Vec<String> = sentence
            .citations
            .iter()
            .filter(|c| !c.added_by_quire)
            .map(|c| match &c.better {
                Some(better) => format!("{}: misattributed, {better} fits better", c.id),
                None => format!("{}: {}", c.id, c.status.as_str()),
            })
            .collect();
        text.push_str(&format!(
            "  \"{}\" ({})\n",
            sentence.text,
            verdicts.join("; ")
        ));
    }
    text
}

/// The next follow-up from stdin; `None` at an empty line or the end of input.
fn next_question() -> Result<Option<String>> {
    let stdin = std::io::stdin();
    if stdin.is_terminal() {
        eprint!("\nfollow-up (empty line to stop)> ");
    }
    let mut line = String::new();
    stdin
        .lock()
        .read_line(&mut line)
        .context("cannot read the next question from stdin")?;
    let line = line.trim();
    Ok((!line.is_empty()).then(|| line.to_string()))
}

/// The lines after an answer: source cards, warnings, and how the context was built.
pub(super) fn answer_footer(answer: &Answer) -> String {
    let mut text = String::new();
    text.push_str(&source_cards(&answer.sources));
    if let Some(support) = &answer.support {
        text.push_str(&format!("{}\n", support.summary(&answer.sentences)));
    }
    for warning in &answer.warnings {
        text.push_str(&format!("warning: {warning}\n"));
    }
    if answer.kind == AnswerKind::Extractive {
        text.push_str(&format!(
            "note: no language model is configured; set {ENV_PRESET} or QUIRE_LLM_BASE_URL and QUIRE_LLM_MODEL to have answers written (see `quire config`)\n"
        ));
    }
    text.push_str(&retrieval_summary(&answer.retrieval));
    text
}

pub(super) fn source_cards(cards: &[SourceCard]) -> String {
    if cards.is_empty() {
        return String::new();
    }
    let mut text = String::from("\nSources:\n");
    for card in cards {
        let place = match card.page {
            Some(page) => quire_app::vault::pdf::page_link(&card.path, page),
            None => card.path.clone(),
        };
        text.push_str(&format!(
            "  [{}] {}:{}-{}  {}{}\n",
            card.id,
            place,
            card.start_line,
            card.end_line,
            card.heading_path.join(" › "),
            if card.cited { "  (cited)" } else { "" }
        ));
    }
    text
}

pub(super) fn retrieval_summary(report: &RetrievalReport) -> String {
    let mut text = String::new();
    for dropped in &report.dropped {
        text.push_str(&format!(
            "left out: {} (chunk {}): {}; run `quire index` to bring the index up to date\n",
            dropped.path, dropped.chunk_id, dropped.reason
        ));
    }
    let dates = report
        .date_range
        .map(|r| format!(", daily notes of {r}"))
        .unwrap_or_default();
    text.push_str(&format!(
        "retrieval: {}{dates}, {} candidate notes ({} chunks), {} sources, {} of {} code points\n",
        report.mode,
        report.candidate_notes,
        report.candidate_chunks,
        report.sources,
        report.code_points,
        report.limits.budget
    ));
    if let Some(descent) = &report.descent {
        text.push_str(&format!(
            "descent ({}, {} model calls):\n",
            report.retriever_name(),
            descent.requests
        ));
        for step in &descent.steps {
            text.push_str(&format!(
                "  {}: chose {}{}{}\n",
                step.shown,
                if step.chose.is_empty() {
                    "nothing".to_string()
                } else {
                    step.chose.join(", ")
                },
                if step.invalid.is_empty() {
                    String::new()
                } else {
                    format!(" (unknown ids dropped: {})", step.invalid.join(", "))
                },
                if step.why.is_empty() {
                    String::new()
                } else {
                    format!(" — {}", step.why)
                }
            ));
        }
        if let Some(stopped) = &descent.stopped {
            text.push_str(&format!("  stopped: {stopped}\n"));
        }
    }
    text
}
