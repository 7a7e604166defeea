//! The generation commands: `ask`, `draft`, `reflect`, `questions`, and `config`. Flags in,
//! `quire_app` calls, output out: the answer streams to stdout as it arrives (human mode) or
//! comes as one JSON object at the end (`--json`). Ctrl-C cancels the request in flight. One
//! module per command; [`streaming`] is what they share.

mod article;
mod ask;
mod config;
pub(crate) mod deep_audit;
mod draft;
mod notetools;
mod questions;
mod reflect;
mod streaming;

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Result;
use clap::{Args, Subcommand};
use quire_app::reflect::parse_date;
use quire_app::types::ChatModel;
use quire_app::types::ContextLimits;
use quire_app::types::Mode;

use crate::Cli;

/// The exit code after Ctrl-C (128 + SIGINT, as shells report it).
pub(super) const EXIT_CANCELLED: u8 = 130;
/// Names a preset (`openai`, `openrouter`, `groq`, `ollama`, `llamacpp`).
pub(super) const ENV_PRESET: &str = "QUIRE_LLM_PRESET";
#[derive(Subcommand, Debug)]
pub enum AssistCommand {
    /// Ask your vault: an answer from your notes, with checked citations.
    ///
    /// The configured language model writes the answer from the passages quire retrieved and
    /// re-read; every citation [S1] is checked against them. Without a model (see `quire
    /// config`), the best passages are quoted instead (an extractive answer).
    Ask {
        question: String,
        /// Ask this article instead of the vault: a Markdown or text file (in the vault or
        /// not), or `-` for stdin; at most 5 MiB. It is chunked and embedded in memory, its
        /// vectors cached in <index>/article-cache/; citations point at its lines.
        #[arg(long, value_name = "ARTICLE", conflicts_with_all = ["chat", "retriever"])]
        file: Option<PathBuf>,
        /// Go on with follow-up questions read from stdin, one per line (an empty line or the
        /// end of input stops). With --json, one JSON object per line and turn.
        #[arg(long)]
        chat: bool,
        #[command(flatten)]
        context: ContextArgs,
        /// hybrid, bm25 or vector (default: hybrid when the index has embeddings, else bm25).
        #[arg(long)]
        mode: Option<Mode>,
        /// hybrid (search), tree (the model descends the vault: folders, notes, sections) or
        /// auto (search, then descend when the evidence is weak or the question is about the
        /// vault's structure). tree and auto need a language model.
        #[arg(long, default_value = "hybrid", value_parser = parse_retriever)]
        retriever: quire_app::types::Retriever,
        /// Only passages of notes that pass these filters (search; the tree descent sees the
        /// whole vault).
        #[command(flatten)]
        filter: crate::common::FilterArgs,
        /// Ask this one note or PDF of the vault (path or name): only its passages, found
        /// through the index (search; not the tree descent). For a file outside the vault, see
        /// --file.
        #[arg(long, value_name = "NOTE", conflicts_with_all = ["file", "chat"])]
        note: Option<String>,
        /// Withhold a generated answer when a sentence it cites is unsupported or misattributed
        /// by its source: print the reason and those sentences, and exit with 4.
        #[arg(long)]
        strict: bool,
        /// Have the language model first write a passage that could answer the question, and
        /// search with the question and that passage (finds notes worded unlike the question;
        /// costs one short model call, about 4 s with the local model). Needs a language model.
        #[arg(long, conflicts_with = "file")]
        expand: bool,
        /// The day that "last week" and "on Jan 5" count from (default: today).
        #[arg(long, hide = true)]
        today: Option<String>,
    },
    /// Draft a section of NOTE from what your other notes say.
    ///
    /// A few paragraphs with [[wikilink]] sources. --propose makes the draft a proposal to put
    /// under the heading (see `quire proposals`); --insert makes it and applies it at once
    /// (atomically, only if the note is unchanged since it was read, keeping a backup).
    Draft {
        note: String,
        /// The section: "## Section" or "Section".
        #[arg(long)]
        heading: String,
        /// Write the draft into the note under the heading (a proposal, applied at once).
        #[arg(long, conflicts_with = "propose")]
        insert: bool,
        /// Make the draft a proposal to review and apply later (`quire proposals`).
        #[arg(long)]
        propose: bool,
        #[command(flatten)]
        context: ContextArgs,
        /// hybrid, bm25 or vector (default: hybrid when the index has embeddings, else bm25).
        #[arg(long)]
        mode: Option<Mode>,
    },
    /// Flashcards from NOTE (question::answer, citing its lines), proposed under `## Flashcards`.
    ///
    /// Cards the note already has are not made again. --anki FILE.tsv also writes them for Anki's
    /// import (tags: the note's and `quire`). Needs a language model.
    Flashcards {
        note: String,
        /// Also write the cards as an Anki import file (outside the vault; inside, a proposal).
        #[arg(long, value_name = "FILE.tsv")]
        anki: Option<PathBuf>,
        #[command(flatten)]
        tool: notetools::ToolArgs,
    },
    /// Split NOTE into atomic notes and make it a map of them, losing no line (a proposal).
    ///
    /// With a language model the note is split by topic; without one (or with --by-headings) by
    /// its headings.
    Split {
        note: String,
        /// Split by headings even when a model is configured.
        #[arg(long)]
        by_headings: bool,
        #[command(flatten)]
        tool: notetools::ToolArgs,
    },
    /// Continue NOTE after a line (default: its end); a proposal, or printed with --print.
    ///
    /// --smart gives the model passages of your other notes, cited as [[wikilinks]]. Needs a
    /// language model.
    Complete {
        note: String,
        /// Continue after this line (1-based; default: the last line).
        #[arg(long)]
        at: Option<usize>,
        /// Retrieve passages of other notes for the text before the cursor and cite them.
        #[arg(long)]
        smart: bool,
        /// Stream the continuation to stdout instead of proposing it.
        #[arg(long, conflicts_with = "apply")]
        print: bool,
        #[command(flatten)]
        tool: notetools::ToolArgs,
    },
    /// A Dataview (DQL) query for QUESTION, naming only the vault's real folders, tags and
    /// properties (checked); printed, or added to a note with --into (a proposal).
    Dataview {
        question: String,
        /// Add the query at the end of this note (a proposal).
        #[arg(long, value_name = "NOTE")]
        into: Option<String>,
        #[command(flatten)]
        tool: notetools::ToolArgs,
    },
    /// Transform many notes at once (their body, as `transform` does): one proposal per note.
    ///
    /// The notes and a token estimate first (--dry-run stops there); a progress bar; Ctrl-C stops,
    /// and the same command again skips the notes already done.
    Batch {
        /// Notes in this folder (any depth).
        #[arg(long)]
        folder: Option<String>,
        /// Notes with this tag (or one below it).
        #[arg(long)]
        tag: Option<String>,
        /// Notes with this property (`status`) or value (`status=draft`).
        #[arg(long, value_name = "KEY[=VALUE]")]
        property: Option<String>,
        /// The notes a search for this finds (at most 20).
        #[arg(long)]
        query: Option<String>,
        /// improve, shorten, grammar, examples or translate:LANGUAGE.
        #[arg(long, conflicts_with = "instruction")]
        preset: Option<String>,
        /// What to do, in your words.
        #[arg(long)]
        instruction: Option<String>,
        /// List the notes and the token estimate; send nothing.
        #[arg(long)]
        dry_run: bool,
        /// Notes rewritten at once.
        #[arg(long, default_value_t = 2)]
        concurrency: usize,
        #[command(flatten)]
        tool: notetools::ToolArgs,
    },
    /// Rewrite part of NOTE (lines, a section, or the whole body) as a preset or an instruction
    /// says; shown as a diff, written only when applied. Needs a language model.
    Transform {
        note: String,
        /// Lines A-B (1-based, inclusive), or a single line A.
        #[arg(long, conflicts_with = "heading")]
        lines: Option<String>,
        /// The section under this heading.
        #[arg(long)]
        heading: Option<String>,
        /// improve, shorten, grammar, examples or translate:LANGUAGE.
        #[arg(long, conflicts_with = "instruction")]
        preset: Option<String>,
        /// What to do, in your words.
        #[arg(long)]
        instruction: Option<String>,
        #[command(flatten)]
        tool: notetools::ToolArgs,
    },
    /// Reflect on a week of daily notes, each point linked to its day.
    ///
    /// What happened, themes, open loops and a plan for next week (default range: the seven
    /// days ending today).
    Reflect {
        /// An ISO week, e.g. 2026-W48.
        #[arg(long, conflicts_with_all = ["from", "to"])]
        week: Option<String>,
        /// The first day (YYYY-MM-DD), with --to.
        #[arg(long, requires = "to")]
        from: Option<String>,
        /// The last day (YYYY-MM-DD), with --from.
        #[arg(long, requires = "from")]
        to: Option<String>,
        /// Code points of daily-note text sent to the model, shared among the days.
        #[arg(long, default_value_t = 12_000)]
        budget: usize,
        /// The day the default range ends on (default: today).
        #[arg(long, hide = true)]
        today: Option<String>,
    },
    /// The questions a note or folder answers, one per topic.
    ///
    /// Its paragraphs are grouped into topics (k-means over the index's vectors) and the model
    /// writes one short question per topic; offline, each topic's central passage is shown.
    Questions {
        /// A note, or a folder of the vault (`Resources/`).
        #[arg(required_unless_present = "file", conflicts_with = "file")]
        target: Option<String>,
        /// The questions an article answers instead: a Markdown or text file, or `-` for stdin
        /// (at most 5 MiB; embedded in memory, vectors cached as for `ask --file`).
        #[arg(long, value_name = "ARTICLE")]
        file: Option<PathBuf>,
    },
    /// The effective configuration: vault, index, embedding model, language model.
    ///
    /// The API key is never shown, only the variable that holds it and whether it is set.
    Config,
}

/// How much context a model gets.
#[derive(Args, Debug)]
pub struct ContextArgs {
    /// Notes in the final context.
    #[arg(short = 'k', long = "notes", default_value_t = 6)]
    notes: usize,
    /// Candidate notes asked of the index.
    #[arg(long, default_value_t = 12)]
    candidates: usize,
    /// Chunks per candidate note.
    #[arg(long, default_value_t = 3)]
    candidate_chunks: usize,
    /// Passages per note in the final context.
    #[arg(long, default_value_t = 2)]
    chunks_per_note: usize,
    /// The most Unicode code points of note text in the final context.
    #[arg(long, default_value_t = 12_000)]
    budget: usize,
}

impl ContextArgs {
    /// The limits, each checked as every face checks them (`quire_app::limits`).
    fn limits(&self) -> Result<ContextLimits> {
        quire_app::limits::context_limits(
            Some(self.notes as u64),
            Some(self.candidates as u64),
            Some(self.candidate_chunks as u64),
            Some(self.chunks_per_note as u64),
            Some(self.budget as u64),
        )
        .map_err(anyhow::Error::msg)
    }
}

pub fn run(cli: &Cli, command: &AssistCommand, out: &mut String) -> Result<ExitCode> {
    match command {
        AssistCommand::Config => config::config(cli, out),
        AssistCommand::Ask {
            question,
            file: Some(file),
            context,
            mode,
            strict,
            ..
        } => article::ask(
            cli,
            article::AskFlags {
                file,
                question,
                limits: context.limits()?,
                mode: *mode,
                strict: *strict,
            },
            out,
        ),
        AssistCommand::Ask {
            question,
            file: None,
            chat,
            context,
            mode,
            retriever,
            filter,
            note,
            strict,
            expand,
            today,
        } => ask::ask(
            cli,
            ask::AskFlags {
                question,
                chat: *chat,
                limits: context.limits()?,
                mode: *mode,
                retriever: *retriever,
                filter: filter.filter()?,
                note: note.as_deref(),
                strict: *strict,
                expand: *expand,
                today: today.as_deref(),
            },
            out,
        ),
        AssistCommand::Flashcards { note, anki, tool } => {
            notetools::flashcards(cli, note, anki.as_ref(), tool, out)
        }
        AssistCommand::Split {
            note,
            by_headings,
            tool,
        } => notetools::split(cli, note, *by_headings, tool, out),
        AssistCommand::Complete {
            note,
            at,
            smart,
            print,
            tool,
        } => notetools::complete(
            cli,
            notetools::CompleteFlags {
                note,
                at: *at,
                smart: *smart,
                print: *print,
            },
            tool,
            out,
        ),
        AssistCommand::Dataview {
            question,
            into,
            tool,
        } => notetools::dataview(cli, question, into.as_deref(), tool, out),
        AssistCommand::Batch {
            folder,
            tag,
            property,
            query,
            preset,
            instruction,
            dry_run,
            concurrency,
            tool,
        } => notetools::batch(
            cli,
            notetools::BatchFlags {
                select: quire_app::notetools::BatchSelect {
                    folder: folder.clone(),
                    tag: tag.clone(),
                    property: property.clone(),
                    query: query.clone(),
                },
                preset: preset.as_deref(),
                instruction: instruction.as_deref(),
                dry_run: *dry_run,
                concurrency: *concurrency,
            },
            tool,
            out,
        ),
        AssistCommand::Transform {
            note,
            lines,
            heading,
            preset,
            instruction,
            tool,
        } => notetools::transform(
            cli,
            notetools::TransformFlags {
                note,
                lines: lines.as_deref(),
                heading: heading.as_deref(),
                preset: preset.as_deref(),
                instruction: instruction.as_deref(),
            },
            tool,
            out,
        ),
        AssistCommand::Draft {
            note,
            heading,
            insert,
            propose,
            context,
            mode,
        } => draft::draft(
            cli,
            draft::DraftFlags {
                note,
                heading,
                insert: *insert,
                propose: *propose,
                limits: context.limits()?,
                mode: *mode,
            },
            out,
        ),
        AssistCommand::Reflect {
            week,
            from,
            to,
            budget,
            today,
        } => {
            let asked = quire_app::reflect::DaysAsked {
                week: week.as_deref(),
                from: from.as_deref(),
                to: to.as_deref(),
            };
            let range = asked.range(today_or(today.as_deref())?)?;
            reflect::reflect_range(cli, range, *budget, out)
        }
        AssistCommand::Questions {
            file: Some(file), ..
        } => article::questions(cli, file, out),
        AssistCommand::Questions { target, .. } => {
            questions::questions(cli, target.as_deref().unwrap_or_default(), out)
        }
    }
}

/// `--retriever`: hybrid, tree or auto.
fn parse_retriever(text: &str) -> Result<quire_app::types::Retriever, String> {
    text.parse()
}

/// The chat model, or `None` to work offline (extractive answers): chosen by the core
/// ([`quire_app::models::chat_model`]).
pub(crate) fn chat_model() -> Result<Option<Box<dyn ChatModel>>> {
    Ok(quire_app::models::chat_model()?)
}

pub(super) fn today_or(given: Option<&str>) -> Result<chrono::NaiveDate> {
    Ok(match given {
        Some(day) => parse_date(day)?,
        None => chrono::Local::now().date_naive(),
    })
}
