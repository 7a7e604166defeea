//! The `quire` command line: flags in, library calls, output out. No parsing or ranking here.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context, Result, bail};
use clap::{Parser, Subcommand};
use std::sync::Arc;

use quire_embed::Embedder;
use quire_index::{Filter, IndexLocation, SyncOptions, sync};
use quire_search::{SearchRequest, Searcher};
use quire_vault::links::{Resolution, describe_link};
use quire_vault::outline::select_lines;
use quire_vault::reasoning::{self, to_canonical_json};
use quire_vault::{OpenOptions, Outline, OutlineNode, Vault, VaultError};

mod assist;
mod progress;
use serde_json::json;

/// `println!` into the output buffer (writing to a `String` cannot fail).
macro_rules! outln {
    ($out:expr, $($arg:tt)*) => {{
        use std::fmt::Write as _;
        let _ = writeln!($out, $($arg)*);
    }};
}

/// Exit codes (also in the README).
const EXIT_ERROR: u8 = 1;
const EXIT_STALE: u8 = 3;

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
    /// Skip notes larger than this many megabytes (default 5, or the config's `max_file_mb`).
    #[arg(long, global = true)]
    max_file_mb: Option<f64>,
    /// Where the index lives (default: a per-user data directory keyed by the vault's path).
    #[arg(long, global = true, env = "QUIRE_INDEX_DIR")]
    index_dir: Option<PathBuf>,
    /// The embedding model: an E5S1 file, or a folder with config.json, model.safetensors and
    /// tokenizer.json (default: $QUIRE_MODEL, else the file scripts/fetch-model.sh fetched).
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
    Mcp {
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
        mode: Option<quire_search::Mode>,
        /// Only notes in this folder (any depth).
        #[arg(long)]
        folder: Option<String>,
        /// Only notes with this tag (or a tag below it).
        #[arg(long)]
        tag: Option<String>,
    },
    /// Notes most similar to NOTE (from the index's vectors; no new embedding calls).
    Similar {
        note: String,
        #[arg(short = 'k', long, default_value_t = 10)]
        k: usize,
    },
    /// Pairs of notes that are nearly the same (candidates only; nothing is merged).
    Duplicates {
        #[arg(long, default_value_t = 0.95)]
        threshold: f32,
        /// At most this many pairs, best first.
        #[arg(long, default_value_t = 50)]
        limit: usize,
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
        /// BM25 weight of the title field. 1 by default here: the titles of test-set documents
        /// (article titles) are not note titles, for which search uses 5.
        #[arg(long, default_value_t = 1.0)]
        title_boost: f32,
    },
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let mut out = String::new();
    let code = match run(cli, &mut out) {
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

fn open_vault(cli: &Cli) -> Result<Vault> {
    let root = match &cli.vault {
        Some(dir) => dir.clone(),
        None => std::env::current_dir().context("cannot read the current directory")?,
    };
    Ok(Vault::open(&root, &open_options(cli))?)
}

/// The scan settings given by flags (added to the vault's config file).
fn open_options(cli: &Cli) -> OpenOptions {
    OpenOptions {
        include: cli.include.clone(),
        exclude: cli.exclude.clone(),
        max_file_bytes: cli.max_file_mb.map(|mb| (mb * 1024.0 * 1024.0) as u64),
        skip_dirs: Vec::new(),
    }
}

/// A NOTE argument: a vault-relative path or a name resolved like a wikilink, else a path to a
/// file inside the vault (relative to the current directory, or absolute). Anything that leads
/// outside the vault is refused.
fn find_note(vault: &Vault, arg: &str) -> Result<usize> {
    let as_path = Path::new(arg);
    // A name or path that is a note of the vault wins over a file of the same name in the
    // current directory (`quire --vault V outline README.md` run beside another README.md).
    if !as_path.is_absolute()
        && let Ok(i) = vault.find_note(arg)
    {
        return Ok(i);
    }
    if (as_path.is_absolute() || as_path.exists())
        && let Ok(canonical) = as_path.canonicalize()
    {
        let Ok(rel) = canonical.strip_prefix(&vault.root) else {
            return Err(VaultError::OutsideVault(arg.to_string()).into());
        };
        let rel = rel.to_string_lossy().replace('\\', "/");
        return vault.index_of(&rel).ok_or_else(|| {
            anyhow::anyhow!(
                "`{arg}` is in the vault but is not a note that was read (see `quire scan`)"
            )
        });
    }
    Ok(vault.find_note(arg)?)
}

fn print_json(out: &mut String, value: &impl serde::Serialize) {
    out.push_str(&to_canonical_json(value));
}

fn vault_root(cli: &Cli) -> Result<PathBuf> {
    let root = match &cli.vault {
        Some(dir) => dir.clone(),
        None => std::env::current_dir().context("cannot read the current directory")?,
    };
    root.canonicalize()
        .with_context(|| format!("cannot open vault {}", root.display()))
}

fn index_location(cli: &Cli) -> Result<IndexLocation> {
    Ok(match &cli.index_dir {
        Some(dir) => IndexLocation::new(dir.clone()),
        None => IndexLocation::default_for(&vault_root(cli)?),
    })
}

fn run(cli: Cli, out: &mut String) -> Result<ExitCode> {
    if let Command::Mcp {
        http,
        no_watch,
        debounce_ms,
    } = &cli.command
    {
        return run_mcp(&cli, http.as_deref(), *no_watch, *debounce_ms);
    }
    if let Command::Serve { .. } | Command::Watch { .. } = &cli.command {
        return run_serve(&cli);
    }
    if let Command::Assist(command) = &cli.command {
        return assist::run(&cli, command, out);
    }
    match &cli.command {
        Command::Index { .. }
        | Command::Status
        | Command::Search { .. }
        | Command::Eval { .. }
        | Command::Similar { .. }
        | Command::Duplicates { .. } => {
            return run_index_command(&cli, out);
        }
        _ => {}
    }
    let vault = open_vault(&cli)?;
    match &cli.command {
        Command::Tree => {
            let tree = reasoning::vault_tree(&vault);
            if cli.json {
                print_json(out, &tree);
            } else {
                outln!(
                    out,
                    "{} ({} notes)",
                    vault.root.display(),
                    vault.notes.len()
                );
                print_tree(out, &tree, "");
            }
        }
        Command::Manifest => {
            let manifest = reasoning::manifest(&vault);
            if cli.json {
                print_json(out, &manifest);
            } else {
                for row in manifest["notes"].as_array().into_iter().flatten() {
                    outln!(
                        out,
                        "{}\t{}\ttags: {}\tout: {}\tback: {}\twords: {}",
                        row["path"].as_str().unwrap_or_default(),
                        row["title"].as_str().unwrap_or_default(),
                        join_strings(&row["tags"]),
                        row["links_out"].as_array().map_or(0, |a| a.len()),
                        row["backlinks_count"],
                        row["word_count"],
                    );
                }
            }
        }
        Command::Outline { note } => {
            let i = find_note(&vault, note)?;
            let outline = Outline::of(&vault.notes[i]);
            if cli.json {
                print_json(out, &outline);
            } else {
                outln!(
                    out,
                    "{} — {} ({} lines)",
                    outline.path,
                    outline.title,
                    outline.line_count
                );
                print_outline(out, &outline.headings, &outline.path, 0);
            }
        }
        Command::Read {
            note,
            lines,
            heading,
        } => {
            let i = find_note(&vault, note)?;
            let n = &vault.notes[i];
            let (start, end) = select_lines(n, lines.as_deref(), heading.as_deref())?;
            let text = n.lines(start, end).unwrap_or_default();
            if cli.json {
                print_json(
                    out,
                    &json!({
                        "path": n.path, "start_line": start, "end_line": end, "text": text, "sha256": n.sha256,
                    }),
                );
            } else {
                outln!(out, "{text}");
            }
        }
        Command::Links { note } => {
            let i = find_note(&vault, note)?;
            let n = &vault.notes[i];
            let outgoing: Vec<_> = n
                .links
                .iter()
                .zip(&vault.graph.resolutions[i])
                .map(|(link, res)| {
                    let (kind, resolved) = match res {
                        Some(Resolution::Note(j)) => ("note", Some(vault.notes[*j].path.clone())),
                        Some(Resolution::Attachment(p)) => ("attachment", Some(p.clone())),
                        None => ("unresolved", None),
                    };
                    json!({
                        "link": describe_link(link), "kind": link.kind, "target": link.target,
                        "subpath": link.subpath, "line": link.line, "resolves_to": kind, "path": resolved,
                    })
                })
                .collect();
            let backlinks: Vec<&str> = vault.graph.backlinks[i]
                .iter()
                .map(|&j| vault.notes[j].path.as_str())
                .collect();
            let mocs: Vec<&str> = vault.graph.moc_parents[i]
                .iter()
                .map(|&j| vault.notes[j].path.as_str())
                .collect();
            if cli.json {
                print_json(
                    out,
                    &json!({
                        "path": n.path, "outgoing": outgoing, "backlinks": backlinks,
                        "unresolved": vault.graph.unresolved[i], "moc_parents": mocs,
                    }),
                );
            } else {
                outln!(out, "{} — outgoing:", n.path);
                for o in &outgoing {
                    let to = o["path"].as_str().unwrap_or("(unresolved)");
                    outln!(
                        out,
                        "  {}:{}  {}  → {}",
                        n.path,
                        o["line"],
                        o["link"].as_str().unwrap_or_default(),
                        to
                    );
                }
                outln!(out, "backlinks ({}):", backlinks.len());
                for b in &backlinks {
                    outln!(out, "  {b}");
                }
                if !mocs.is_empty() {
                    outln!(out, "in maps of content: {}", mocs.join(", "));
                }
            }
        }
        Command::Chunks { note } => {
            let i = find_note(&vault, note)?;
            let (chunks, truncated) = vault.chunks_bounded(i);
            if cli.json {
                print_json(
                    out,
                    &json!({ "path": vault.notes[i].path, "chunks": chunks, "truncated": truncated }),
                );
            } else {
                for c in &chunks {
                    let first = c.body.lines().next().unwrap_or_default();
                    outln!(
                        out,
                        "{}  {}:{}-{}  [{}]  {} tokens  {}\n    {}",
                        c.id,
                        c.note_path,
                        c.start_line,
                        c.end_line,
                        c.heading_path.join(" > "),
                        c.token_count,
                        &c.content_hash[..12],
                        truncate(first, 90)
                    );
                }
                if truncated {
                    outln!(
                        out,
                        "only the first {} chunks: the rest of the note is not indexed (split it to index the rest)",
                        quire_vault::chunk::MAX_CHUNKS_PER_NOTE
                    );
                }
            }
        }
        Command::ExportIndex {
            out_dir,
            check,
            force,
        } => {
            if *check {
                let stale = reasoning::check_export(&vault, out_dir)?;
                if cli.json {
                    print_json(
                        out,
                        &json!({ "up_to_date": stale.is_empty(), "stale": stale }),
                    );
                } else if stale.is_empty() {
                    outln!(
                        out,
                        "{}: up to date ({} notes)",
                        out_dir.display(),
                        vault.notes.len()
                    );
                } else {
                    for s in &stale {
                        outln!(out, "{}\t{}", s.status, s.path);
                    }
                    eprintln!(
                        "quire: {} notes differ from the export in {}",
                        stale.len(),
                        out_dir.display()
                    );
                }
                return Ok(if stale.is_empty() {
                    ExitCode::SUCCESS
                } else {
                    ExitCode::from(EXIT_STALE)
                });
            }
            let summary = reasoning::export(&vault, out_dir, *force)?;
            if cli.json {
                print_json(out, &summary);
            } else {
                outln!(
                    out,
                    "wrote the reasoning index of {} notes to {} ({} files, {} stale outlines removed)",
                    summary.notes,
                    summary.out_dir.display(),
                    summary.files_written,
                    summary.outlines_removed
                );
            }
        }
        Command::Index { .. }
        | Command::Status
        | Command::Search { .. }
        | Command::Eval { .. }
        | Command::Similar { .. }
        | Command::Duplicates { .. } => unreachable!("handled by run_index_command"),
        Command::Mcp { .. } => unreachable!("handled by run_mcp"),
        Command::Serve { .. } | Command::Watch { .. } => unreachable!("handled by run_serve"),
        Command::Assist(_) => unreachable!("handled by assist::run"),
        Command::Scan => {
            let warnings: Vec<_> = vault
                .notes
                .iter()
                .flat_map(|n| {
                    n.warnings
                        .iter()
                        .map(move |w| json!({"path": n.path, "line": w.line, "message": w.message}))
                })
                .collect();
            if cli.json {
                print_json(
                    out,
                    &json!({
                        "root": vault.root, "notes": vault.notes.len(), "attachments": vault.attachments.len(),
                        "skipped": vault.skipped, "warnings": warnings,
                    }),
                );
            } else {
                outln!(
                    out,
                    "{}: {} notes read, {} attachments, {} skipped, {} warnings",
                    vault.root.display(),
                    vault.notes.len(),
                    vault.attachments.len(),
                    vault.skipped.len(),
                    warnings.len()
                );
                for s in &vault.skipped {
                    outln!(out, "skipped  {}: {}", s.path, s.message);
                }
                for w in &warnings {
                    outln!(
                        out,
                        "warning  {}:{}: {}",
                        w["path"].as_str().unwrap_or_default(),
                        w["line"],
                        w["message"].as_str().unwrap_or_default()
                    );
                }
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// The embedding model, if one is available (a missing default model is not an error: quire
/// then works with BM25 alone and says so).
fn load_embedder(cli: &Cli) -> Result<Option<Arc<dyn Embedder>>> {
    if cli.no_embeddings {
        return Ok(None);
    }
    // An OpenAI-compatible server when QUIRE_EMBED_BASE_URL is set; else the local model.
    if let Some(config) = quire_embed::RemoteConfig::from_env() {
        let url = config.base_url.clone();
        let remote = quire_embed::RemoteEmbedder::connect(config)
            .with_context(|| format!("cannot reach the embeddings endpoint {url}"))?;
        return Ok(Some(Arc::new(remote)));
    }
    let path = cli
        .model
        .clone()
        .unwrap_or_else(quire_embed::default_model_path);
    if !path.exists() {
        if cli.model.is_some() {
            bail!("no model file at {}", path.display());
        }
        eprintln!(
            "quire: no embedding model at {} (run scripts/fetch-model.sh): using BM25 only",
            path.display()
        );
        return Ok(None);
    }
    let model = quire_embed::load_local(&path)
        .with_context(|| format!("cannot load the model {}", path.display()))?;
    Ok(Some(Arc::from(model)))
}

/// What similar notes and duplicates say when they cannot run without vectors: with
/// `--no-embeddings` that the flag is why, not that a model must be fetched.
fn needs_vectors(cli: &Cli, err: quire_search::SearchError) -> anyhow::Error {
    match err {
        quire_search::SearchError::NoEmbeddings(_) if cli.no_embeddings => anyhow::anyhow!(
            "this command compares the notes' vectors, and --no-embeddings loads no model: run it without --no-embeddings"
        ),
        other => other.into(),
    }
}

fn open_searcher(cli: &Cli, embedder: Option<Arc<dyn Embedder>>) -> Result<Searcher> {
    let location = index_location(cli)?;
    let searcher = quire_app::live::open_searcher(&location, "quire")?;
    Ok(match embedder {
        Some(e) => searcher.with_embedder(e),
        None => searcher,
    })
}

/// Commands that work on the index rather than on the parsed vault.
fn run_index_command(cli: &Cli, out: &mut String) -> Result<ExitCode> {
    match &cli.command {
        Command::Similar { note, k } => {
            let searcher = open_searcher(cli, load_embedder(cli)?)?;
            let vault = open_vault(cli)?;
            let path = vault.notes[find_note(&vault, note)?].path.clone();
            let similar = searcher
                .similar(&path, (*k).clamp(1, 200))
                .map_err(|e| needs_vectors(cli, e))?;
            if cli.json {
                print_json(out, &json!({ "path": path, "similar": similar }));
            } else {
                for s in &similar {
                    outln!(out, "{:.3}  {} — {}", s.score, s.path, s.title);
                }
            }
        }
        Command::Duplicates { threshold, limit } => {
            let searcher = open_searcher(cli, load_embedder(cli)?)?;
            let pairs = searcher
                .duplicates(*threshold, *limit)
                .map_err(|e| needs_vectors(cli, e))?;
            if cli.json {
                print_json(out, &json!({ "threshold": threshold, "pairs": pairs }));
            } else if pairs.is_empty() {
                outln!(out, "no pairs of notes with similarity ≥ {threshold}");
            } else {
                for p in &pairs {
                    outln!(out, "{:.3}  {}  ~  {}", p.score, p.a, p.b);
                }
            }
        }
        Command::Index { rebuild } => {
            let location = index_location(cli)?;
            let options = SyncOptions {
                open: open_options(cli),
                rebuild: *rebuild,
                embedder: load_embedder(cli)?,
            };
            let progress = progress::SyncBar::new(cli.json);
            let stats = sync(&vault_root(cli)?, &location, &options, &progress)?;
            progress.finish();
            if cli.json {
                print_json(out, &stats);
            } else {
                outln!(
                    out,
                    "indexed {} notes ({} unchanged, {} deleted, {} skipped); {} chunks, {} embedded, {} reused; generation {} in {:.2}s",
                    stats.notes_indexed,
                    stats.notes_unchanged,
                    stats.notes_deleted,
                    stats.notes_skipped.len(),
                    stats.chunks_total,
                    stats.chunks_embedded,
                    stats.chunks_reused,
                    stats.generation,
                    stats.seconds
                );
                for s in &stats.notes_skipped {
                    outln!(out, "skipped  {}: {}", s.path, s.reason);
                }
                outln!(out, "index: {}", location.dir.display());
            }
        }
        Command::Status => {
            let location = index_location(cli)?;
            let searcher = Searcher::open_any(&location)?;
            let report = quire_app::StatusReport::of(&searcher, location.dir.clone(), usize::MAX)?;
            let index_bytes = dir_size(&location.dir);
            if cli.json {
                let mut status = serde_json::to_value(&report)?;
                status["index_bytes"] = index_bytes.into();
                print_json(out, &status);
            } else {
                let text = quire_app::status::StatusText {
                    report: &report,
                    index_bytes,
                };
                out.push_str(&text.to_string());
            }
        }
        Command::Search {
            query,
            k,
            mode,
            folder,
            tag,
        } => {
            let wants_vectors = *mode != Some(quire_search::Mode::Bm25);
            let embedder = if wants_vectors {
                load_embedder(cli)?
            } else {
                None
            };
            let searcher = open_searcher(cli, embedder)?;
            let mut request = SearchRequest::new(query.clone());
            request.k = (*k).clamp(1, 200);
            request.mode = match mode {
                Some(mode) => *mode,
                None => searcher.default_mode()?,
            };
            request.filter = Filter {
                folder: folder.clone(),
                tag: tag.clone(),
            };
            let results = searcher.search(&request)?;
            if cli.json {
                print_json(out, &results);
            } else {
                let root = searcher.store().meta("vault_root")?.unwrap_or_default();
                let vault_name = Path::new(&root)
                    .file_name()
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or_default();
                if results.results.is_empty() {
                    outln!(out, "no results for `{query}`");
                }
                for (rank, note) in results.results.iter().enumerate() {
                    outln!(
                        out,
                        "{}. {} — {}  ({:.2})",
                        rank + 1,
                        note.path,
                        note.title,
                        note.score
                    );
                    outln!(out, "   {}", obsidian_uri(&vault_name, &note.path));
                    for s in &note.sections {
                        outln!(
                            out,
                            "   {}:{}-{}  {}",
                            note.path,
                            s.start_line,
                            s.end_line,
                            s.heading_path.join(" > ")
                        );
                        outln!(
                            out,
                            "      {}",
                            truncate(&s.snippet.replace('\n', " "), 160)
                        );
                    }
                }
            }
        }
        Command::Eval {
            dir: None,
            queries,
            list_queries,
            ..
        } => eval_vault(cli, *queries, *list_queries, out)?,
        Command::Eval {
            dir: Some(dir),
            title_boost,
            ..
        } => {
            let set = quire_search::eval::TestSet::load(dir)?;
            let boosts = quire_index::Boosts {
                title: *title_boost,
                ..Default::default()
            };
            let embedder = load_embedder(cli)?;
            let cache = dirs_cache();
            let report =
                quire_search::eval::evaluate(&set, boosts, embedder.as_deref(), Some(&cache))?;
            if cli.json {
                print_json(out, &report);
            } else {
                outln!(
                    out,
                    "{}: {} queries over {} documents",
                    dir.display(),
                    report.queries,
                    report.documents
                );
                outln!(out, "retriever  nDCG@10  recall@10  recall@100  MRR@10");
                for name in report.ndcg_at_10.keys() {
                    outln!(
                        out,
                        "{name:<9}  {:.4}   {:.4}     {:.4}      {:.4}",
                        report.ndcg_at_10[name],
                        report.recall_at_10[name],
                        report.recall_at_100[name],
                        report.mrr_at_10[name]
                    );
                }
                if embedder.is_none() {
                    outln!(
                        out,
                        "{}",
                        if cli.no_embeddings {
                            "(vector and hybrid were not run: --no-embeddings was given)"
                        } else {
                            "(vector and hybrid need the embedding model: run scripts/fetch-model.sh)"
                        }
                    );
                }
            }
        }
        _ => unreachable!("not an index command"),
    }
    Ok(ExitCode::SUCCESS)
}

/// `quire eval` without DIR: queries made from the vault's own headings and link lines, run
/// against its index (synced first) in every mode the index supports.
fn eval_vault(cli: &Cli, per_kind: usize, list: bool, out: &mut String) -> Result<()> {
    let vault = open_vault(cli)?;
    let queries = quire_search::vault_eval::vault_queries(&vault, per_kind);
    if list {
        if cli.json {
            print_json(out, &queries);
        } else {
            for q in &queries {
                outln!(out, "{:?}\t{}\t{}", q.kind, q.text, q.relevant);
            }
        }
        return Ok(());
    }
    if queries.is_empty() {
        bail!(
            "the vault has no headings (level 2+, unique, two words or more) or link lines to make queries from"
        );
    }
    let embedder = load_embedder(cli)?;
    let location = index_location(cli)?;
    let options = SyncOptions {
        open: open_options(cli),
        rebuild: false,
        embedder: embedder.clone(),
    };
    let progress = progress::SyncBar::new(cli.json);
    sync(&vault.root, &location, &options, &progress)?;
    progress.finish();
    let searcher = open_searcher(cli, embedder.clone())?;
    let mut modes = vec![quire_search::Mode::Bm25];
    if embedder.is_some() && searcher.space()?.is_some() {
        modes.extend([quire_search::Mode::Vector, quire_search::Mode::Hybrid]);
    }
    let report = quire_search::vault_eval::evaluate_vault(&searcher, &queries, &modes)?;
    if cli.json {
        print_json(out, &report);
        return Ok(());
    }
    outln!(
        out,
        "{}: {} queries from the vault ({} headings, {} link lines); one relevant note each",
        vault.root.display(),
        report.queries,
        report
            .queries_by_kind
            .get(&quire_search::vault_eval::QueryKind::Heading)
            .copied()
            .unwrap_or(0),
        report
            .queries_by_kind
            .get(&quire_search::vault_eval::QueryKind::Link)
            .copied()
            .unwrap_or(0),
    );
    outln!(
        out,
        "retriever  nDCG@10  recall@10  recall@100  MRR@10   nDCG@10 headings  links"
    );
    for name in report.ndcg_at_10.keys() {
        let kind = |k| {
            report
                .ndcg_at_10_by_kind
                .get(&k)
                .and_then(|m| m.get(name))
                .map(|v| format!("{v:.4}"))
                .unwrap_or_else(|| "-".into())
        };
        outln!(
            out,
            "{name:<9}  {:.4}   {:.4}     {:.4}      {:.4}   {:<16}  {}",
            report.ndcg_at_10[name],
            report.recall_at_10[name],
            report.recall_at_100[name],
            report.mrr_at_10[name],
            kind(quire_search::vault_eval::QueryKind::Heading),
            kind(quire_search::vault_eval::QueryKind::Link),
        );
    }
    Ok(())
}

/// The settings of a vault served by `mcp`, `serve` or `watch`, from the global flags.
fn served_vault(
    cli: &Cli,
    no_watch: bool,
    debounce_ms: Option<u64>,
    name: &'static str,
) -> Result<quire_app::AppConfig> {
    let mut config = quire_app::AppConfig::new(vault_root(cli)?, index_location(cli)?);
    config.open = open_options(cli);
    config.embedder = load_embedder(cli)?;
    config.watch = !no_watch;
    config.debounce = debounce_ms.map(std::time::Duration::from_millis);
    config.name = name;
    Ok(config)
}

/// `quire mcp`: the read-only MCP server. stdout carries the protocol, so everything else
/// (the model note, sync reports) goes to stderr.
fn run_mcp(
    cli: &Cli,
    http: Option<&str>,
    no_watch: bool,
    debounce_ms: Option<u64>,
) -> Result<ExitCode> {
    let config = served_vault(cli, no_watch, debounce_ms, "quire mcp")?;
    match http {
        Some(spec) => quire_mcp::serve_http(config, listen_addr(spec)?)?,
        None => quire_mcp::serve_stdio(config)?,
    }
    Ok(ExitCode::SUCCESS)
}

/// `quire serve` and `quire watch`: the settings of the served vault, then the library call.
fn run_serve(cli: &Cli) -> Result<ExitCode> {
    let (no_watch, debounce_ms) = match &cli.command {
        Command::Serve {
            no_watch,
            debounce_ms,
            ..
        } => (*no_watch, *debounce_ms),
        Command::Watch { debounce_ms } => (false, *debounce_ms),
        _ => unreachable!("only serve and watch come here"),
    };
    let live = served_vault(cli, no_watch, debounce_ms, "quire serve")?;
    let Command::Serve {
        host, port, token, ..
    } = &cli.command
    else {
        quire_serve::watch(live)?;
        return Ok(ExitCode::SUCCESS);
    };
    // The same model `quire ask` uses: the configured provider (QUIRE_LLM_PRESET or
    // QUIRE_LLM_BASE_URL), else in a `local-llm` build the fetched local model, else none
    // (extractive answers).
    let chat: Option<Arc<dyn quire_llm::ChatModel>> = assist::chat_model()?.map(Arc::from);
    let mut config = quire_serve::ServeConfig::new(live);
    config.host = host.clone();
    config.port = *port;
    config.token = token.clone();
    config.chat = chat;
    config.mount = Some(Box::new(mount_mcp));
    quire_serve::serve(config)?;
    Ok(ExitCode::SUCCESS)
}

/// MCP's streamable HTTP service at `/mcp` on `quire serve`'s router, over the same live vault.
/// On loopback it keeps its own DNS-rebinding check; beyond loopback serve's guard has checked
/// the token on every request, and `/mcp` answers the same Hosts as the rest of the server.
fn mount_mcp(
    live: Arc<quire_app::Live>,
    local: std::net::SocketAddr,
    loopback_only: bool,
) -> axum::Router {
    let hosts = if loopback_only {
        quire_mcp::AllowedHosts::LoopbackOr(local)
    } else {
        quire_mcp::AllowedHosts::CheckedByCaller
    };
    let service = quire_mcp::http_service(quire_mcp::QuireServer::new(live), hosts);
    axum::Router::new().route_service(quire_mcp::ENDPOINT, service)
}

/// `--http ADDR`: `HOST:PORT`, or a bare port on 127.0.0.1.
fn listen_addr(spec: &str) -> Result<std::net::SocketAddr> {
    use std::net::ToSocketAddrs;
    if let Ok(port) = spec.parse::<u16>() {
        return Ok(([127, 0, 0, 1], port).into());
    }
    spec.to_socket_addrs()
        .ok()
        .and_then(|mut addrs| addrs.next())
        .with_context(|| {
            format!("bad --http address `{spec}`: expected HOST:PORT, e.g. 127.0.0.1:8765")
        })
}

/// Where `quire eval` caches corpus vectors.
fn dirs_cache() -> PathBuf {
    quire_embed::default_model_path()
        .parent()
        .and_then(Path::parent)
        .map(|p| p.join("eval-cache"))
        .unwrap_or_else(|| std::env::temp_dir().join("quire-eval-cache"))
}

/// `obsidian://open?vault=…&file=…` for a note.
fn obsidian_uri(vault: &str, path: &str) -> String {
    let file = path.strip_suffix(".md").unwrap_or(path);
    format!(
        "obsidian://open?vault={}&file={}",
        uri_encode(vault),
        uri_encode(file)
    )
}

fn uri_encode(s: &str) -> String {
    let mut out = String::new();
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || b"-_.~".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

fn dir_size(dir: &Path) -> u64 {
    std::fs::read_dir(dir)
        .map(|entries| {
            entries
                .flatten()
                .map(|e| match e.metadata() {
                    Ok(m) if m.is_dir() => dir_size(&e.path()),
                    Ok(m) => m.len(),
                    Err(_) => 0,
                })
                .sum()
        })
        .unwrap_or(0)
}

fn join_strings(v: &serde_json::Value) -> String {
    v.as_array()
        .map(|a| {
            a.iter()
                .filter_map(|x| x.as_str())
                .collect::<Vec<_>>()
                .join(",")
        })
        .unwrap_or_default()
}

fn truncate(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        s.to_string()
    } else {
        format!("{}…", s.chars().take(max).collect::<String>())
    }
}

fn print_tree(out: &mut String, node: &serde_json::Value, prefix: &str) {
    let children = node["children"].as_array().cloned().unwrap_or_default();
    for (i, child) in children.iter().enumerate() {
        let last = i + 1 == children.len();
        let (branch, next) = if last {
            ("└── ", "    ")
        } else {
            ("├── ", "│   ")
        };
        let name = child["name"].as_str().unwrap_or_default();
        if child["kind"] == "folder" {
            outln!(
                out,
                "{prefix}{branch}{name}/ ({} notes)",
                child["note_count"]
            );
            print_tree(out, child, &format!("{prefix}{next}"));
        } else {
            outln!(
                out,
                "{prefix}{branch}{name}  [{} headings]",
                child["heading_count"]
            );
        }
    }
}

fn print_outline(out: &mut String, nodes: &[OutlineNode], path: &str, depth: usize) {
    for n in nodes {
        outln!(
            out,
            "{}{} {}  {}:{}-{}",
            "  ".repeat(depth),
            "#".repeat(n.level as usize),
            n.text,
            path,
            n.line,
            n.end_line
        );
        print_outline(out, &n.children, path, depth + 1);
    }
}
