//! `quire ask --file` and `quire questions --file`: an article that is not in the vault, asked
//! with the vault's chunker, embedding model, limits and citation checks
//! ([`quire_app::article`]).

use std::io::Read;
use std::path::Path;
use std::process::ExitCode;

use anyhow::{Context, Result, bail};
use quire_app::article::{
    Article, ArticleReport, MAX_ARTICLE_BYTES, VectorCache, article_too_large, decode_article,
};
use quire_app::types::Mode;
use quire_app::types::{AnswerKind, ContextLimits, SourceReader};
use quire_app::vault::atomic::ReadError;
use serde_json::json;

use super::ask::{EXIT_WITHHELD, answer_footer};
use super::questions::topic_lines;
use super::streaming::Streaming;
use super::{EXIT_CANCELLED, chat_model};
use crate::Cli;
use crate::common::{index_location, load_embedder, open_options, print_json, vault_root};

/// `ask --file`'s flags.
pub(super) struct AskFlags<'a> {
    pub file: &'a Path,
    pub question: &'a str,
    pub limits: ContextLimits,
    /// `bm25` asks without loading the embedding model.
    pub mode: Option<Mode>,
    pub strict: bool,
}

/// The article's display name and text: a file (its name), or stdin for `-`.
fn read_article(file: &Path) -> Result<(String, String)> {
    if file.as_os_str() == "-" {
        let mut bytes = Vec::new();
        std::io::stdin()
            .lock()
            .take(MAX_ARTICLE_BYTES as u64 + 1)
            .read_to_end(&mut bytes)
            .context("cannot read the article from stdin")?;
        return Ok(("stdin".into(), decode_article("stdin", bytes)?));
    }
    let name = file
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| file.display().to_string());
    let bytes = match quire_app::vault::atomic::read_regular(file, MAX_ARTICLE_BYTES as u64) {
        Ok(bytes) => bytes,
        // Refused by its size, with the same words as an over-long stdin; nothing is allocated.
        Err(ReadError::TooLarge { bytes }) => return Err(article_too_large(&name, bytes).into()),
        Err(ReadError::NotAFile { kind }) => {
            bail!("{}: a {kind}, not an article file", file.display())
        }
        Err(ReadError::Io(e)) => bail!("cannot read the article {}: {e}", file.display()),
    };
    Ok((name.clone(), decode_article(&name, bytes)?))
}

/// Reads, chunks and embeds the article (vectors from the index's article cache when there).
fn load(cli: &Cli, file: &Path, mode: Option<Mode>) -> Result<Article> {
    let (name, text) = read_article(file)?;
    let reader = SourceReader::open(&vault_root(cli)?, &open_options(cli))?;
    let embedder = if mode == Some(Mode::Bm25) {
        None
    } else {
        load_embedder(cli)?
    };
    if mode == Some(Mode::Vector) && embedder.is_none() {
        bail!("--mode vector needs the embedding model (scripts/fetch-model.sh)");
    }
    let cache = VectorCache::in_index(&index_location(cli)?.dir);
    let article = Article::load(&name, &text, reader.settings(), embedder, Some(&cache))?;
    if article.is_empty() {
        bail!("{name}: the article has no text to answer from");
    }
    Ok(article)
}

pub(super) fn ask(cli: &Cli, flags: AskFlags<'_>, out: &mut String) -> Result<ExitCode> {
    let article = load(cli, flags.file, flags.mode)?;
    let model = chat_model()?;
    let question = flags.question.trim();
    let strict = flags.strict;
    let mut streaming = Streaming::new(cli);
    let asked = streaming.run(|token, on_text| {
        let on_text: &mut dyn FnMut(&str) = if strict { &mut |_| {} } else { on_text };
        quire_app::article::ask(
            model.as_deref(),
            &article,
            question,
            &flags.limits,
            token,
            on_text,
        )
        .map_err(into_assist)
    })?;
    let Some(answered) = asked else {
        return Ok(ExitCode::from(EXIT_CANCELLED));
    };
    let refusal = answered.answer.strict_refusal().filter(|_| strict);
    if cli.json {
        let mut shown = serde_json::to_value(&answered)?;
        if let Some(reason) = &refusal {
            shown["answer"] = "".into();
            shown["withheld"] = reason.as_str().into();
        }
        print_json(out, &shown);
    } else if let Some(reason) = &refusal {
        eprintln!("quire: answer withheld (--strict): {reason}");
    } else {
        let answer = &answered.answer;
        if strict {
            streaming.text(&answer.answer);
        }
        streaming.printer.end_line();
        let mut text = answer_footer(answer);
        text.push_str(&article_line(&answered.article));
        streaming.text(&text);
    }
    Ok(if refusal.is_some() {
        ExitCode::from(EXIT_WITHHELD)
    } else {
        ExitCode::SUCCESS
    })
}

pub(super) fn questions(cli: &Cli, file: &Path, out: &mut String) -> Result<ExitCode> {
    let article = load(cli, file, None)?;
    let paragraphs = article.paragraphs()?;
    if paragraphs.is_empty() {
        bail!(
            "{}: no paragraph of four words or more to find questions in",
            article.report.name
        );
    }
    let n = paragraphs.len();
    let (k, topics) = quire_app::questions::topics_of(paragraphs);
    let model = chat_model()?;
    let mut streaming = Streaming::new(cli);
    let name = article.report.name.clone();
    streaming.text(&format!("{name}: {n} paragraphs in {k} topics\n\n"));
    let asked = streaming.run(|token, on_text| {
        quire_app::questions::ask_questions(model.as_deref(), &topics, token, &mut |topic| {
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
                "scope": name, "kind": kind, "paragraphs": n, "k": k,
                "topics": found, "article": article.report,
            }),
        );
    } else {
        let mut text = String::new();
        if kind == AnswerKind::Extractive {
            text.push_str("note: no language model is configured, so each topic shows its most central passage instead of a question (see `quire config`)\n");
        }
        text.push_str(&article_line(&article.report));
        streaming.text(&text);
    }
    Ok(ExitCode::SUCCESS)
}

/// `article: NAME, 120 lines, 14 chunks; 0 embedded, 14 cached (DIR)`.
fn article_line(report: &ArticleReport) -> String {
    let vectors = match &report.cache_dir {
        Some(dir) => format!(
            "; {} embedded, {} cached ({dir})",
            report.embedded, report.cached
        ),
        None => "; no embedding model (BM25 only)".to_string(),
    };
    format!(
        "article: {}, {} lines, {} chunks{vectors}\n",
        report.name, report.lines, report.chunks
    )
}

/// The streaming helper speaks `AssistError`; an application error is carried through it.
fn into_assist(e: quire_app::AppError) -> quire_app::types::AssistError {
    match e {
        quire_app::AppError::Assist(e) => e,
        other => quire_app::types::AssistError::Unusable(other.to_string()),
    }
}
