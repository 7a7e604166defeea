//! The `quire` command line: flags in, a call into the library crates, output out. Each command
//! (or group) lives in its own module; this file declares the flags and dispatches.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Result;
use clap::{Parser, Subcommand};

/// `println!` into the output buffer (writing to a `String` cannot fail).
macro_rules! outln {
    ($out:expr, $($arg:tt)*) => {{
        use std::fmt::Write as _;
        let _ = writeln!($out, $($arg)*);
    }};
}

mod assist;
mod audit;
mod common;
mod eval;
mod export;
mod index;
mod moc;
mod notes;
mod progress;
mod proposals;
mod search;
mod serving;

/// Exit code of a failed command (also in docs/cli.md).
const EXIT_ERROR: u8 = 1;

#[derive(Parser, Debug)]
#[command(
    name = "quire",
    version,
    about = "A local-first knowledge engine for Markdown vaults"
)]
struct Cli {
    /// The vault directory (default: $QUIRE_VAULT, else the current directory).
    #[arg(long, global = true, env = "QUIRE_VAULT")]
    vault: Option<PathBuf>,
    /// Print JSON instead of text.
    #[arg(long, global = true)]
    json: bool,
    /// Only read notes matching this glob (repeatable; adds to the config's `include`).
    #[arg(long, global = true)]
    include: Vec<String>,
    /// Skip notes matching this glob (repeatable; adds to the config's `exclude`).
    #[arg(long, global = true)]
    exclude: Vec<String>,
    /// Skip notes larger than this many MiB (default 5, or the config's `max_file_mb`).
    #[arg(long, global = true, value_parser = parse_size_cap)]
    max_file_mb: Option<f64>,
    /// Where the index lives (default: a per-user data directory keyed by the vault's path).
    #[arg(long, global = true, env = "QUIRE_INDEX_DIR")]
    index_dir: Option<PathBuf>,
    /// A PostgreSQL database (postgres://…) that holds the index for a team: `index` publishes
    /// the local index to it after syncing, `search` and `similar` read from it (no local index
    /// or vault needed there). Default: $QUIRE_BACKEND, else the local index only.
    #[arg(long, global = true, env = "QUIRE_BACKEND", value_name = "URL")]
    backend: Option<String>,
    /// The embedding model: `gemma` (EmbeddingGemma-300M), `e5-small`, or a path: a QGEM1 or
    /// E5S1 file, or a folder with config.json, model.safetensors and tokenizer.json (default:
    /// `[embedding] model` of .quire/config.toml, else $QUIRE_MODEL, else the default model
    /// that scripts/fetch-model.sh fetched).
    #[arg(long, global = true)]
    model: Option<PathBuf>,
    /// Do not load an embedding model: BM25 only.
    #[arg(long, global = true)]
    no_embeddings: bool,
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// The vault's folders and notes, with heading counts.
    Tree,
    /// One row per note: title, selected properties, tags, top headings, links, sha256.
    Manifest,
    /// A note's heading tree with line ranges.
    Outline { note: String },
    /// Print a note, or exactly some of its lines.
    Read {
        note: String,
        /// Lines A-B (1-based, inclusive), or a single line A.
        #[arg(long, conflicts_with = "heading")]
        lines: Option<String>,
        /// The section under a heading, as a path of heading texts: "Plan/Week 2".
        #[arg(long)]
        heading: Option<String>,
        /// A PDF's page N (its extracted text, as indexed).
        #[arg(long, conflicts_with_all = ["heading", "lines"])]
        page: Option<u32>,
    },
    /// A note's outgoing links, backlinks and unresolved links.
    Links { note: String },
    /// A note's chunks: id, heading path, lines, content hash.
    Chunks { note: String },
    /// Write the reasoning index (tree, manifest, outlines) to OUT_DIR, or check it.
    ExportIndex {
        out_dir: PathBuf,
        /// Do not write: list notes whose sha256 no longer matches the export (exit 3 if any).
        #[arg(long)]
        check: bool,
        /// Overwrite an export made from a newer vault state, or a non-export directory.
        #[arg(long)]
        force: bool,
    },
    /// What was read, and every file skipped or with problems, with the reason.
    Scan,
    /// ask, draft, reflect, questions, config (crates/quire-assist).
    #[command(flatten)]
    Assist(assist::AssistCommand),
    /// Serve the vault read-only to AI clients over MCP: on stdin/stdout, or streamable HTTP
    /// with --http. Keeps the index fresh while it runs (the watcher) unless --no-watch.
    #[command(args_conflicts_with_subcommands = true)]
    Mcp {
        /// `install`: set an AI client up to start `quire mcp` on this vault.
        #[command(subcommand)]
        action: Option<serving::McpAction>,
        /// Serve streamable HTTP at http://ADDR/mcp instead of stdio: HOST:PORT, or a bare PORT
        /// on 127.0.0.1 (port 0 picks a free one; the URL is printed on stderr).
        #[arg(long, value_name = "ADDR")]
        http: Option<String>,
        /// Do not watch the vault: serve the index as it is.
        #[arg(long)]
        no_watch: bool,
        /// The watcher's quiet time after the last change, in milliseconds (default 1500).
        #[arg(long, hide = true)]
        debounce_ms: Option<u64>,
        /// Add the tool `propose_note_change`: an AI client may suggest a change to a note as a
        /// proposal (never applied by it: `quire proposals apply ID` is yours).
        #[arg(long)]
        allow_proposals: bool,
    },
    /// Serve the vault over HTTP: a JSON API (/api, documented at /api/openapi.json), a web page
    /// at /, and MCP at /mcp. Keeps the index in sync while it runs unless --no-watch.
    Serve {
        /// The address to listen on. Anything but a loopback address needs a token.
        #[arg(long, default_value = "127.0.0.1")]
        host: String,
        /// The port (0 picks a free one; the URL is printed on stderr).
        #[arg(long, default_value_t = quire_serve::DEFAULT_PORT)]
        port: u16,
        /// A secret every request must carry (`Authorization: Bearer …`, or open /?token=…).
        /// Required with a non-loopback --host; at least 16 characters.
        #[arg(long, env = "QUIRE_TOKEN", hide_env_values = true)]
        token: Option<String>,
        /// A second secret that opens /mcp only: give it to AI clients, which can then propose
        /// changes but never apply one (applying takes --token). At least 16 characters.
        #[arg(long, env = "QUIRE_MCP_TOKEN", hide_env_values = true)]
        mcp_token: Option<String>,
        /// Do not watch the vault: serve the index as it is.
        #[arg(long)]
        no_watch: bool,
        /// The watcher's quiet time after the last change, in milliseconds (default 1500).
        #[arg(long, hide = true)]
        debounce_ms: Option<u64>,
    },
    /// Keep the index in sync with the vault until Ctrl-C (the watcher of `serve`, alone).
    Watch {
        /// The quiet time after the last change, in milliseconds (default 1500).
        #[arg(long, hide = true)]
        debounce_ms: Option<u64>,
    },
    /// Bring the index up to date with the vault (only changed notes are read again).
    Index {
        /// Re-read every note and rebuild the full-text index.
        #[arg(long)]
        rebuild: bool,
    },
    /// The index's coverage: notes, chunks, skipped files with reasons, generation, sizes.
    Status,
    /// Search the vault; results are grouped by note with their best sections.
    Search {
        query: String,
        /// Notes to return.
        #[arg(short = 'k', long, default_value_t = 10)]
        k: usize,
        /// hybrid, bm25 or vector (default: hybrid when the index has embeddings, else bm25).
        #[arg(long)]
        mode: Option<quire_app::types::Mode>,
        #[command(flatten)]
        filter: common::FilterArgs,
        /// Say why each note ranked where it did: its BM25 rank and score, its vector rank and
        /// similarity, the fused score and the section that carried it.
        #[arg(long)]
        explain: bool,
    },
    /// Notes most similar to NOTE (from the index's vectors; no new embedding calls).
    Similar {
        note: String,
        #[arg(short = 'k', long, default_value_t = 10)]
        k: usize,
    },
    /// Pairs of notes that look like copies of each other (candidates only; nothing is merged).
    ///
    /// Two tests, both needed: the notes' vectors are close (cosine ≥ --threshold), and their own
    /// text overlaps (≥ --min-overlap). Own text is what is left of a note once its template
    /// lines are gone: a line is a template line when most of its word pairs occur in 4 notes or
    /// more (headings, property keys, task stubs a template stamps into each note). Overlap is
    /// the Jaccard of the two notes' word pairs (shared / either). Daily notes made from one
    /// template are close as vectors but share little text of their own, so they are not
    /// flagged; neither are notes with fewer than 8 word pairs of their own (an unfilled
    /// template). Pairs come largest overlap first.
    Duplicates {
        /// Cosine of the note vectors a pair needs to be looked at (default: the one measured for
        /// the index's model: 0.90 for e5-small, 0.80 for EmbeddingGemma).
        #[arg(long)]
        threshold: Option<f32>,
        /// Jaccard overlap of the two notes' own text (0 to 1) a pair needs to be flagged.
        #[arg(long, default_value_t = quire_app::types::DEFAULT_MIN_OVERLAP)]
        min_overlap: f32,
        /// At most this many pairs, largest overlap first.
        #[arg(long, default_value_t = 50)]
        limit: usize,
    },
    /// The vault's structure audited: folders, tags (near-duplicates, singletons), orphans, dead
    /// ends, unresolved links, unlinked attachments, link-graph islands, hubs, empty, oversized
    /// and heading-less notes, duplicate titles. Markdown, or JSON with --json.
    Audit {
        /// Also write a JSON Canvas map (file nodes, groups, link edges) to this .canvas file;
        /// inside the vault it becomes a proposal to apply.
        #[arg(long, value_name = "FILE.canvas")]
        canvas: Option<PathBuf>,
        /// Group the canvas's notes by `folder` or by link `component`.
        #[arg(long, default_value = "folder", value_name = "folder|component")]
        group: quire_app::audit::Grouping,
        /// Hubs listed in each ranking.
        #[arg(long, default_value_t = 10)]
        top: usize,
        /// A note with more words than this is oversized.
        #[arg(long, default_value_t = 5000)]
        oversized_words: usize,
        #[command(flatten)]
        deep: assist::deep_audit::DeepArgs,
        /// Add the topic clusters: the notes grouped by meaning from the index's vectors,
        /// labelled by their distinctive words (needs an index built with the model).
        #[arg(long)]
        clusters: bool,
    },
    /// The audit's findings as an inbox: each orphan, dead end, unresolved link, near-duplicate
    /// tag family, duplicate title, empty, oversized or heading-less note, unlinked attachment
    /// and island, with an id; what is new since the last run; dismissed and snoozed ones left
    /// out (kept in the index folder, never in the vault).
    Findings {
        #[command(subcommand)]
        action: Option<audit::FindingsAction>,
    },
    /// A map of content for a topic cluster (its id in `quire audit --clusters`) or for --all:
    /// the cluster's notes as wikilinks, grouped by sub-topic, made as a proposal. A cluster one
    /// note already links to (80% of its notes or more) is left alone.
    Moc {
        /// The cluster's id.
        cluster: Option<usize>,
        /// Every cluster.
        #[arg(long, conflicts_with = "cluster")]
        all: bool,
        /// Apply each proposal at once.
        #[arg(long)]
        apply: bool,
        /// The vault folder the maps go in (default: the vault's root).
        #[arg(long, value_name = "FOLDER")]
        folder: Option<String>,
    },
    /// Proposed changes to the vault: list them (default), show one's diff, apply or reject it.
    /// Every write quire makes into a note is a proposal you apply.
    Proposals {
        #[command(subcommand)]
        action: Option<proposals::ProposalAction>,
    },
    /// Retrieval quality on a BEIR-layout test set (corpus.jsonl, queries.jsonl, qrels/test.tsv).
    /// Retrieval quality (nDCG@10, recall@10/100, MRR@10 for bm25, vector, hybrid): on a BEIR-layout
    /// test set DIR, or without DIR on the vault itself (`quire eval --vault PATH`), with queries
    /// made from its headings and link lines (the index is brought up to date first).
    Eval {
        dir: Option<PathBuf>,
        /// Vault queries per kind (headings, link lines) when evaluating the vault.
        #[arg(long, default_value_t = 200)]
        queries: usize,
        /// Print the generated vault queries and their answers instead of evaluating.
        #[arg(long)]
        list_queries: bool,
        /// Evaluate the vault on your own questions instead of generated ones: a JSON-lines
        /// file of `{"question": "…", "relevant": ["note.md"]}`.
        #[arg(long, value_name = "FILE", conflicts_with = "dir")]
        questions: Option<PathBuf>,
        /// BM25 weight of the title field. 1 by default here: the titles of test-set documents
        /// (article titles) are not note titles, for which search uses 5.
        #[arg(long, default_value_t = 1.0)]
        title_boost: f32,
    },
}

fn main() -> ExitCode {
    // This binary is also its own PDF worker: extraction runs in a child process whose memory
    // and time are capped (see `quire_app::vault::pdf`).
    let mut args = std::env::args_os().skip(1);
    if args.next().as_deref() == Some(std::ffi::OsStr::new(quire_app::vault::pdf::WORKER_ARG)) {
        let rest: Vec<String> = args.map(|a| a.to_string_lossy().into_owned()).collect();
        return ExitCode::from(quire_app::vault::pdf::serve_worker(&rest) as u8);
    }
    if let Ok(program) = std::env::current_exe() {
        quire_app::vault::pdf::set_worker_program(program);
    }
    let cli = Cli::parse();
    let mut out = String::new();
    let code = match run(&cli, &mut out) {
        Ok(code) => code,
        Err(err) => {
            eprintln!("quire: error: {err:#}");
            ExitCode::from(EXIT_ERROR)
        }
    };
    // Output is written once at the end; a closed pipe (`quire tree | head`) is not an error.
    use std::io::Write;
    let mut stdout = std::io::stdout().lock();
    if let Err(e) = stdout
        .write_all(out.as_bytes())
        .and_then(|_| stdout.flush())
        && e.kind() != std::io::ErrorKind::BrokenPipe
    {
        eprintln!("quire: error: cannot write output: {e}");
        return ExitCode::from(EXIT_ERROR);
    }
    code
}

/// `--max-file-mb`: a positive, finite number of MiB (0 or less would skip every note).
fn parse_size_cap(text: &str) -> Result<f64, String> {
    match text.trim().parse::<f64>() {
        Ok(mb) if mb.is_finite() && mb > 0.0 => Ok(mb),
        _ => Err(format!("`{text}` is not a positive number of MiB")),
    }
}

/// Whether `command` answers from the local index and has no database path yet (so a
/// `--backend` given with it would be silently ignored).
fn reads_the_local_index_only(command: &Command) -> bool {
    match command {
        // The structural audit reads the vault alone; its clusters and deep audit read the
        // local index.
        Command::Audit { deep, clusters, .. } => deep.deep || *clusters,
        // Asking the vault (not an article, which has an index of its own).
        Command::Assist(assist::AssistCommand::Ask { file, .. }) => file.is_some(),
        Command::Assist(assist::AssistCommand::Draft { .. }) => false,
        _ => !matches!(
            command,
            Command::Index { .. }
                | Command::Watch { .. }
                | Command::Serve { .. }
                | Command::Mcp { .. }
                | Command::Status
                | Command::Search { .. }
                | Command::Similar { .. }
                | Command::Tree
                | Command::Manifest
                | Command::Outline { .. }
                | Command::Read { .. }
                | Command::Links { .. }
                | Command::Chunks { .. }
                | Command::Scan
                | Command::ExportIndex { .. }
        ),
    }
}

/// Runs one command; its output goes to `out` (printed once at the end).
fn run(cli: &Cli, out: &mut String) -> Result<ExitCode> {
    if let Some(url) = &cli.backend
        && reads_the_local_index_only(&cli.command)
    {
        let url = quire_app::backend::redacted(url);
        anyhow::bail!(
            "--backend {url}: only `index` and `watch` (publish to the database), `search`, `similar`, `status`, `ask` (about the vault), `draft`, and the search, similar notes and ask of `serve` and `mcp` use a database backend so far; run this command without --backend (and without QUIRE_BACKEND) where the local index is"
        );
    }
    match &cli.command {
        Command::Tree => notes::tree(cli, out),
        Command::Manifest => notes::manifest(cli, out),
        Command::Outline { note } => notes::outline(cli, note, out),
        Command::Read {
            note,
            lines,
            heading,
            page,
        } => match page {
            Some(page) => notes::read_page(cli, note, *page, out),
            None => notes::read(cli, note, lines.as_deref(), heading.as_deref(), out),
        },
        Command::Links { note } => notes::links(cli, note, out),
        Command::Chunks { note } => notes::chunks(cli, note, out),
        Command::Scan => notes::scan(cli, out),
        Command::ExportIndex {
            out_dir,
            check,
            force,
        } => export::run(cli, out_dir, *check, *force, out),
        Command::Assist(command) => assist::run(cli, command, out),
        Command::Mcp {
            action: Some(action),
            ..
        } => serving::mcp_install(cli, action, out),
        Command::Mcp {
            action: None,
            http,
            no_watch,
            debounce_ms,
            allow_proposals,
        } => serving::mcp(
            cli,
            http.as_deref(),
            *no_watch,
            *debounce_ms,
            *allow_proposals,
        ),
        Command::Serve {
            host,
            port,
            token,
            mcp_token,
            no_watch,
            debounce_ms,
        } => serving::serve(
            cli,
            serving::ServeFlags {
                host,
                port: *port,
                token: token.as_deref(),
                mcp_token: mcp_token.as_deref(),
                no_watch: *no_watch,
                debounce_ms: *debounce_ms,
            },
        ),
        Command::Watch { debounce_ms } => serving::watch(cli, *debounce_ms),
        Command::Index { rebuild } => index::index(cli, *rebuild, out),
        Command::Status => index::status(cli, out),
        Command::Search {
            query,
            k,
            mode,
            filter,
            explain,
        } => search::search(
            cli,
            search::SearchFlags {
                query,
                k: *k,
                mode: *mode,
                filter,
                explain: *explain,
            },
            out,
        ),
        Command::Similar { note, k } => search::similar(cli, note, *k, out),
        Command::Duplicates {
            threshold,
            min_overlap,
            limit,
        } => search::duplicates(cli, *threshold, *min_overlap, *limit, out),
        Command::Audit { deep, .. } if deep.deep => assist::deep_audit::run(cli, deep, out),
        Command::Audit {
            canvas,
            group,
            top,
            oversized_words,
            clusters,
            ..
        } => audit::run(
            cli,
            audit::AuditFlags {
                canvas: canvas.as_deref(),
                group: *group,
                top: *top,
                oversized_words: *oversized_words,
                clusters: *clusters,
            },
            out,
        ),
        Command::Findings { action } => audit::findings(cli, action.as_ref(), out),
        Command::Moc {
            cluster,
            all,
            apply,
            folder,
        } => moc::run(
            cli,
            moc::MocFlags {
                cluster: *cluster,
                all: *all,
                apply: *apply,
                folder: folder.as_deref(),
            },
            out,
        ),
        Command::Proposals { action } => proposals::run(cli, action.as_ref(), out),
        Command::Eval {
            dir: Some(dir),
            title_boost,
            ..
        } => eval::test_set(cli, dir, *title_boost, out),
        Command::Eval {
            dir: None,
            queries,
            list_queries,
            questions,
            ..
        } => eval::vault(cli, *queries, *list_queries, questions.as_deref(), out),
    }
}
