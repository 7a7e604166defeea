//! The generation commands: `ask`, `draft`, `reflect`, `questions`, and `config`. Flags in,
//! `quire_assist` calls, output out: the answer streams to stdout as it arrives (human mode) or
//! comes as one JSON object at the end (`--json`). Ctrl-C cancels the request in flight.

use std::io::{BufRead, IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::{Arc, Mutex};

use anyhow::{Context, Result, bail};
use clap::{Args, Subcommand};
use quire_assist::AssistError;
use quire_assist::ask::{Answer, AnswerKind, Conversation, SourceCard};
use quire_assist::context::{self, ContextLimits, RetrievalReport, RetrievalRequest, SourceReader};
use quire_assist::dates::{DateRange, parse_date};
use quire_assist::draft::{DraftTarget, insert_draft, write_draft};
use quire_assist::questions::{self, Scope, Topic};
use quire_assist::reflect::reflect;
use quire_llm::{CancelToken, ChatModel, OpenAiCompatible, ProviderConfig};
use quire_search::Mode;
use serde_json::json;

use crate::{
    Cli, find_note, index_location, load_embedder, open_options, open_searcher, open_vault,
    print_json, vault_root,
};

/// The exit code after Ctrl-C (128 + SIGINT, as shells report it).
const EXIT_CANCELLED: u8 = 130;
/// Names a preset (`openai`, `openrouter`, `groq`, `ollama`, `llamacpp`).
const ENV_PRESET: &str = "QUIRE_LLM_PRESET";

#[derive(Subcommand, Debug)]
pub enum AssistCommand {
    /// Ask your vault: an answer from your notes, with checked citations.
    ///
    /// The configured language model writes the answer from the passages quire retrieved and
    /// re-read; every citation [S1] is checked against them. Without a model (see `quire
    /// config`), the best passages are quoted instead (an extractive answer).
    Ask {
        question: String,
        /// Go on with follow-up questions read from stdin, one per line (an empty line or the
        /// end of input stops). With --json, one JSON object per line and turn.
        #[arg(long)]
        chat: bool,
        #[command(flatten)]
        context: ContextArgs,
        /// hybrid, bm25 or vector (default: hybrid when the index has embeddings, else bm25).
        #[arg(long)]
        mode: Option<Mode>,
        /// The day that "last week" and "on Jan 5" count from (default: today).
        #[arg(long, hide = true)]
        today: Option<String>,
    },
    /// Draft a section of NOTE from what your other notes say.
    ///
    /// A few paragraphs with [[wikilink]] sources. --insert writes the draft under the heading
    /// (atomically, only if the note is unchanged since it was read, keeping a backup).
    Draft {
        note: String,
        /// The section: "## Section" or "Section".
        #[arg(long)]
        heading: String,
        /// Write the draft into the note under the heading.
        #[arg(long)]
        insert: bool,
        /// Where --insert keeps the copy of the note as it was (default: backups/ in the
        /// index directory, outside the vault).
        #[arg(long)]
        backup_dir: Option<PathBuf>,
        #[command(flatten)]
        context: ContextArgs,
        /// hybrid, bm25 or vector (default: hybrid when the index has embeddings, else bm25).
        #[arg(long)]
        mode: Option<Mode>,
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
        target: String,
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
    fn limits(&self) -> ContextLimits {
        ContextLimits {
            candidate_notes: self.candidates.clamp(1, 200),
            candidate_chunks: self.candidate_chunks.clamp(1, 20),
            notes: self.notes.clamp(1, 100),
            chunks_per_note: self.chunks_per_note.clamp(1, 20),
            budget: self.budget.max(1),
        }
    }
}

pub fn run(cli: &Cli, command: &AssistCommand, out: &mut String) -> Result<ExitCode> {
    match command {
        AssistCommand::Config => config(cli, out),
        AssistCommand::Ask {
            question,
            chat,
            context,
            mode,
            today,
        } => ask(
            cli,
            question,
            *chat,
            context.limits(),
            *mode,
            today.as_deref(),
            out,
        ),
        AssistCommand::Draft {
            note,
            heading,
            insert,
            backup_dir,
            context,
            mode,
        } => draft(
            cli,
            note,
            heading,
            *insert,
            backup_dir.as_deref(),
            context.limits(),
            *mode,
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
            reflect_range(cli, range, *budget, out)
        }
        AssistCommand::Questions { target } => questions(cli, target, out),
    }
}

/// The chat model, or `None` to work offline (extractive answers): the configured provider
/// first; else, in a build with the `local-llm` feature, the local GGUF model once it has been
/// fetched (`scripts/fetch-llm.sh`), unless `QUIRE_LLM_LOCAL=0`.
pub(crate) fn chat_model() -> Result<Option<Box<dyn ChatModel>>> {
    if let Some(p) = ProviderConfig::from_env()? {
        return Ok(Some(Box::new(OpenAiCompatible::new(p))));
    }
    local_model()
}

/// The local model file that [`chat_model`] would load, if any.
#[cfg(feature = "local-llm")]
fn local_model_path() -> Option<PathBuf> {
    if std::env::var("QUIRE_LLM_LOCAL").is_ok_and(|v| v.trim() == "0") {
        return None;
    }
    Some(quire_llm::default_local_model_path()).filter(|path| path.is_file())
}

#[cfg(not(feature = "local-llm"))]
fn local_model_path() -> Option<PathBuf> {
    None
}

#[cfg(feature = "local-llm")]
fn local_model() -> Result<Option<Box<dyn ChatModel>>> {
    let Some(path) = local_model_path() else {
        return Ok(None);
    };
    let options = quire_llm::LocalOptions::from_env()?;
    let model = quire_llm::LocalLlama::load(&path, options)
        .with_context(|| format!("loading the local model {}", path.display()))?;
    Ok(Some(Box::new(model)))
}

#[cfg(not(feature = "local-llm"))]
fn local_model() -> Result<Option<Box<dyn ChatModel>>> {
    Ok(None)
}

fn today_or(given: Option<&str>) -> Result<chrono::NaiveDate> {
    Ok(match given {
        Some(day) => parse_date(day)?,
        None => chrono::Local::now().date_naive(),
    })
}

/// Ctrl-C cancels the request in flight (its partial answer stays on screen and quire exits
/// with 130); between requests it ends quire at once, as usual.
struct Interrupt {
    current: Arc<Mutex<Option<CancelToken>>>,
}

impl Interrupt {
    fn install() -> Interrupt {
        let current: Arc<Mutex<Option<CancelToken>>> = Arc::new(Mutex::new(None));
        let handler = Arc::clone(&current);
        let installed = ctrlc::set_handler(move || {
            let token = handler.lock().ok().and_then(|t| t.clone());
            match token {
                Some(token) => token.cancel(),
                None => std::process::exit(i32::from(EXIT_CANCELLED)),
            }
        });
        if let Err(e) = installed {
            eprintln!("quire: Ctrl-C will end quire without showing the partial answer: {e}");
        }
        Interrupt { current }
    }

    /// A fresh token for one request: the next Ctrl-C cancels it.
    fn arm(&self) -> CancelToken {
        let token = CancelToken::new();
        if let Ok(mut current) = self.current.lock() {
            *current = Some(token.clone());
        }
        token
    }

    fn disarm(&self) {
        if let Ok(mut current) = self.current.lock() {
            *current = None;
        }
    }
}

/// Writes to stdout as text arrives. When stdout closes (`quire ask … | head`), the request is
/// cancelled instead of finishing for nobody.
struct Printer {
    enabled: bool,
    cancel: Option<CancelToken>,
    ends_with_newline: bool,
}

impl Printer {
    fn new(enabled: bool) -> Printer {
        Printer {
            enabled,
            cancel: None,
            ends_with_newline: true,
        }
    }

    fn text(&mut self, text: &str) {
        if !self.enabled || text.is_empty() {
            return;
        }
        let mut stdout = std::io::stdout().lock();
        if stdout
            .write_all(text.as_bytes())
            .and_then(|_| stdout.flush())
            .is_err()
        {
            self.enabled = false;
            if let Some(token) = &self.cancel {
                token.cancel();
            }
        }
        self.ends_with_newline = text.ends_with('\n');
    }

    /// Ends the streamed text on its own line.
    fn end_line(&mut self) {
        if !self.ends_with_newline {
            self.text("\n");
        }
    }
}

/// The model requests of one command: Ctrl-C cancels the one in flight, and the text it shows
/// streams to stdout (except with `--json`).
struct Streaming {
    interrupt: Interrupt,
    printer: Printer,
}

impl Streaming {
    fn new(cli: &Cli) -> Streaming {
        Streaming {
            interrupt: Interrupt::install(),
            printer: Printer::new(!cli.json),
        }
    }

    /// Runs `call` with a fresh cancel token and stdout as its text sink. `Ok(None)` when
    /// Ctrl-C cancelled it: the partial text stays on screen and stderr says so.
    fn run<T>(
        &mut self,
        call: impl FnOnce(&CancelToken, &mut dyn FnMut(&str)) -> Result<T, AssistError>,
    ) -> Result<Option<T>> {
        let token = self.interrupt.arm();
        self.printer.cancel = Some(token.clone());
        let printer = &mut self.printer;
        let result = call(&token, &mut |text| printer.text(text));
        self.interrupt.disarm();
        match result {
            Ok(value) => Ok(Some(value)),
            Err(e) if e.is_cancelled() => {
                self.printer.end_line();
                eprintln!("quire: cancelled");
                Ok(None)
            }
            Err(e) => Err(e.into()),
        }
    }

    fn text(&mut self, text: &str) {
        self.printer.text(text);
    }
}

#[allow(clippy::too_many_arguments)]
fn ask(
    cli: &Cli,
    question: &str,
    chat: bool,
    limits: ContextLimits,
    mode: Option<Mode>,
    today: Option<&str>,
    out: &mut String,
) -> Result<ExitCode> {
    let today = today_or(today)?;
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
    loop {
        // The searcher lives for one retrieval: the answer depends only on the frozen context,
        // and the next question sees whatever the index holds by then.
        let frozen = {
            let searcher = open_searcher(cli, embedder.clone())?;
            let query = conversation.retrieval_query(&question);
            let request = quire_app::ask::AskRequest {
                question: &question,
                query: &query,
                mode,
                limits,
                today,
            };
            quire_app::ask::ask_context(&searcher, &reader, &request)?
        };
        let asked = streaming.run(|token, on_text| {
            conversation.ask(model.as_deref(), frozen, &question, token, on_text)
        })?;
        let Some(answer) = asked else {
            return Ok(ExitCode::from(EXIT_CANCELLED));
        };
        if cli.json && chat {
            println!("{}", serde_json::to_string(&answer)?);
        } else if cli.json {
            print_json(out, &answer);
        } else {
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
    Ok(ExitCode::SUCCESS)
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
fn answer_footer(answer: &Answer) -> String {
    let mut text = String::new();
    text.push_str(&source_cards(&answer.sources));
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

fn source_cards(cards: &[SourceCard]) -> String {
    if cards.is_empty() {
        return String::new();
    }
    let mut text = String::from("\nSources:\n");
    for card in cards {
        text.push_str(&format!(
            "  [{}] {}:{}-{}  {}{}\n",
            card.id,
            card.path,
            card.start_line,
            card.end_line,
            card.heading_path.join(" › "),
            if card.cited { "  (cited)" } else { "" }
        ));
    }
    text
}

fn retrieval_summary(report: &RetrievalReport) -> String {
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
    text
}

#[allow(clippy::too_many_arguments)]
fn draft(
    cli: &Cli,
    note: &str,
    heading: &str,
    insert: bool,
    backup_dir: Option<&Path>,
    limits: ContextLimits,
    mode: Option<Mode>,
    out: &mut String,
) -> Result<ExitCode> {
    let model = chat_model()?;
    if insert && model.is_none() {
        bail!(
            "--insert writes a generated draft, and no language model is configured (see `quire config`); without --insert, quire lists the material for the section"
        );
    }
    let vault = open_vault(cli)?;
    let path = vault.notes[find_note(&vault, note)?].path.clone();
    let reader = SourceReader::open(&vault.root, &open_options(cli))?;
    drop(vault);
    let target = DraftTarget::read(&reader, &path, heading)?;
    let embedder = if mode == Some(Mode::Bm25) {
        None
    } else {
        load_embedder(cli)?
    };
    let frozen = {
        let searcher = open_searcher(cli, embedder)?;
        let mut request = RetrievalRequest::new(target.query(), limits);
        request.mode = match mode {
            Some(mode) => mode,
            None => searcher.default_mode()?,
        };
        request.exclude = vec![path.clone()];
        let retrieval = context::retrieve(&searcher, &request)?;
        context::materialize(&reader, retrieval, &limits)
    };
    let mut streaming = Streaming::new(cli);
    let written = streaming
        .run(|token, on_text| write_draft(model.as_deref(), &target, frozen, token, on_text))?;
    let Some(draft) = written else {
        return Ok(ExitCode::from(EXIT_CANCELLED));
    };
    streaming.printer.end_line();
    let inserted = if insert {
        if draft.kind != AnswerKind::Generated || draft.draft.trim().is_empty() {
            bail!("the model wrote no draft: nothing was inserted");
        }
        let backups = match backup_dir {
            Some(dir) => dir.to_path_buf(),
            None => index_location(cli)?.dir.join("backups"),
        };
        Some(insert_draft(&target, &draft.draft, &backups)?)
    } else {
        None
    };
    if cli.json {
        let mut value = serde_json::to_value(&draft)?;
        value["inserted"] = serde_json::to_value(&inserted)?;
        print_json(out, &value);
        return Ok(ExitCode::SUCCESS);
    }
    let mut text = source_cards(&draft.sources);
    for warning in &draft.warnings {
        text.push_str(&format!("warning: {warning}\n"));
    }
    text.push_str(&retrieval_summary(&draft.retrieval));
    match &inserted {
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
    streaming.text(&text);
    Ok(ExitCode::SUCCESS)
}

fn reflect_range(cli: &Cli, range: DateRange, budget: usize, out: &mut String) -> Result<ExitCode> {
    let reader = SourceReader::open(&vault_root(cli)?, &open_options(cli))?;
    let (days, skipped) = quire_app::reflect::days_of(&reader, range)?;
    for s in &skipped {
        eprintln!("quire: skipped {}: {}", s.path, s.message);
    }
    let model = chat_model()?;
    let mut streaming = Streaming::new(cli);
    let written = streaming.run(|token, on_text| {
        reflect(
            model.as_deref(),
            range,
            &days,
            budget.max(1),
            token,
            on_text,
        )
    })?;
    let Some(reflection) = written else {
        return Ok(ExitCode::from(EXIT_CANCELLED));
    };
    if cli.json {
        print_json(out, &reflection);
        return Ok(ExitCode::SUCCESS);
    }
    streaming.printer.end_line();
    let mut text = String::new();
    if !reflection.days.is_empty() {
        text.push_str("\nDays:\n");
        for day in &reflection.days {
            text.push_str(&format!(
                "  [{}] {}  {}{}\n",
                day.id,
                day.date,
                day.path,
                if day.cited { "  (cited)" } else { "" }
            ));
        }
    }
    for warning in &reflection.warnings {
        text.push_str(&format!("warning: {warning}\n"));
    }
    streaming.text(&text);
    Ok(ExitCode::SUCCESS)
}

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

fn questions(cli: &Cli, target: &str, out: &mut String) -> Result<ExitCode> {
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

fn topic_lines(topic: &Topic) -> String {
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

fn config(cli: &Cli, out: &mut String) -> Result<ExitCode> {
    let root = vault_root(cli).ok();
    let index = index_location(cli).ok();
    let embeddings = if cli.no_embeddings {
        json!({"kind": "none", "reason": "--no-embeddings"})
    } else if let Some(remote) = quire_embed::RemoteConfig::from_env() {
        json!({"kind": "remote", "base_url": remote.base_url, "model": remote.model})
    } else {
        let path = cli
            .model
            .clone()
            .unwrap_or_else(quire_embed::default_model_path);
        json!({"kind": "local", "path": path, "present": path.exists()})
    };
    let llm = ProviderConfig::from_env()?.map(|p| p.effective());
    let local = if llm.is_none() {
        local_model_path()
    } else {
        None
    };
    if cli.json {
        print_json(
            out,
            &json!({
                "vault": root,
                "index_dir": index.as_ref().map(|i| &i.dir),
                "index_exists": index.as_ref().is_some_and(|i| i.store_path().exists()),
                "embeddings": embeddings,
                "llm": llm,
                "local_llm": local,
            }),
        );
        return Ok(ExitCode::SUCCESS);
    }
    use std::fmt::Write as _;
    let show = |p: Option<&PathBuf>| p.map_or("(none)".to_string(), |p| p.display().to_string());
    let _ = writeln!(out, "vault        {}", show(root.as_ref()));
    let _ = writeln!(
        out,
        "index        {}{}",
        show(index.as_ref().map(|i| &i.dir)),
        match &index {
            Some(i) if i.store_path().exists() => "",
            _ => "  (not built yet: run `quire index`)",
        }
    );
    let embedding_line = match embeddings["kind"].as_str() {
        Some("remote") => format!(
            "remote {} (model {})",
            embeddings["base_url"].as_str().unwrap_or_default(),
            embeddings["model"].as_str().unwrap_or_default()
        ),
        Some("local") if embeddings["present"] == true => format!(
            "local model {}",
            embeddings["path"].as_str().unwrap_or_default()
        ),
        Some("local") => format!(
            "none: no model at {} (scripts/fetch-model.sh); search is BM25-only",
            embeddings["path"].as_str().unwrap_or_default()
        ),
        _ => "none (--no-embeddings)".to_string(),
    };
    let _ = writeln!(out, "embeddings   {embedding_line}");
    match &llm {
        Some(p) => {
            let key = match &p.api_key_env {
                Some(var) if p.api_key_set => format!("key from ${var} (set)"),
                Some(var) => format!("key from ${var} (NOT set)"),
                None => "no key".to_string(),
            };
            let _ = writeln!(
                out,
                "llm          {} at {}, model {}; {key}",
                p.provider, p.base_url, p.model
            );
        }
        None if local.is_some() => {
            let _ = writeln!(
                out,
                "llm          local model {} (in-process, llama.cpp); set {ENV_PRESET} or QUIRE_LLM_BASE_URL and QUIRE_LLM_MODEL to use a server instead",
                show(local.as_ref())
            );
        }
        None => {
            let _ = writeln!(
                out,
                "llm          none: ask, draft, reflect and questions work offline (extractive); set {ENV_PRESET} or QUIRE_LLM_BASE_URL and QUIRE_LLM_MODEL (and QUIRE_LLM_API_KEY) to use a model"
            );
        }
    }
    Ok(ExitCode::SUCCESS)
}
