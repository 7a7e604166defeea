//! `quire search`, `quire similar` and `quire duplicates`: the commands that rank notes from
//! the index.

use std::path::Path;
use std::process::ExitCode;

use anyhow::Result;
use quire_app::types::{Mode, SearchRequest, SearchResults};
use serde_json::json;

use crate::Cli;
use crate::common::{
    find_note, load_embedder, needs_vectors, open_backend, open_searcher, open_vault, print_json,
    truncate,
};

/// `search`'s flags.
pub(crate) struct SearchFlags<'a> {
    pub query: &'a str,
    pub k: usize,
    pub mode: Option<Mode>,
    pub filter: &'a crate::common::FilterArgs,
    pub explain: bool,
}

pub(crate) fn search(cli: &Cli, flags: SearchFlags<'_>, out: &mut String) -> Result<ExitCode> {
    let embedder = if flags.mode != Some(Mode::Bm25) {
        load_embedder(cli)?
    } else {
        None
    };
    let searcher = open_backend(cli, embedder)?;
    let mut request = SearchRequest::new(flags.query.to_string());
    request.k = quire_app::limits::check_count("k", flags.k as u64, quire_app::limits::MAX_RESULTS)
        .map_err(anyhow::Error::msg)?;
    request.mode = match flags.mode {
        Some(mode) => mode,
        None => searcher.default_mode()?,
    };
    request.filter = flags.filter.filter()?;
    request.explain = flags.explain;
    let results = searcher.search(&request)?;
    if cli.json {
        print_json(out, &results);
    } else {
        let root = searcher.vault_root()?.unwrap_or_default();
        let vault_name = Path::new(&root)
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        render_results(out, flags.query, &vault_name, &results);
    }
    Ok(ExitCode::SUCCESS)
}

fn render_results(out: &mut String, query: &str, vault_name: &str, results: &SearchResults) {
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
        outln!(out, "   {}", obsidian_uri(vault_name, &note.path));
        if let Some(e) = &note.explain {
            let side = |rank: Option<usize>, score: Option<f32>, what: &str| match (rank, score) {
                (Some(r), Some(s)) => format!("{what} #{r} ({s:.3})"),
                _ => format!("{what} —"),
            };
            outln!(
                out,
                "   why: {}{}, {}, fused {:.3} ({}) by {}",
                if e.title_match {
                    "the query is its title, first; "
                } else {
                    ""
                },
                side(e.bm25_rank, e.bm25_score, "bm25"),
                side(e.vector_rank, e.vector_similarity, "vector"),
                e.score,
                e.fusion,
                if e.heading_path.is_empty() {
                    format!("chunk {} (no heading)", e.chunk_id)
                } else {
                    e.heading_path.join(" > ")
                }
            );
        }
        for s in &note.sections {
            outln!(
                out,
                "   {}:{}-{}  {}",
                s.link.as_deref().unwrap_or(&note.path),
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

pub(crate) fn similar(cli: &Cli, note: &str, k: usize, out: &mut String) -> Result<ExitCode> {
    let searcher = open_backend(cli, load_embedder(cli)?)?;
    // With a database backend the vault may be on another machine: the note is named by its
    // vault-relative path there.
    let path = match (&cli.backend, open_vault(cli)) {
        (None, vault) => {
            let vault = vault?;
            vault.notes[find_note(&vault, note)?].path.clone()
        }
        (Some(_), Ok(vault)) => match find_note(&vault, note) {
            Ok(i) => vault.notes[i].path.clone(),
            Err(_) => note.to_string(),
        },
        (Some(_), Err(_)) => note.to_string(),
    };
    let similar = searcher
        .similar(
            &path,
            quire_app::limits::check_count("k", k as u64, quire_app::limits::MAX_RESULTS)
                .map_err(anyhow::Error::msg)?,
        )
        .map_err(|e| needs_vectors(cli, e))?;
    let copies = searcher.near_copies(&path, &similar)?;
    if cli.json {
        let mut value = json!({ "path": path, "similar": similar });
        if let Some(copies) = &copies {
            value["near_copies"] = serde_json::to_value(copies)?;
        }
        print_json(out, &value);
    } else {
        for s in &similar {
            let copy = copies
                .iter()
                .flatten()
                .find(|c| c.path == s.path)
                .map(|c| {
                    format!(
                        "  (near copy: {:.0}% of its own text shared)",
                        c.overlap * 100.0
                    )
                })
                .unwrap_or_default();
            outln!(out, "{:.3}  {} — {}{copy}", s.score, s.path, s.title);
        }
    }
    Ok(ExitCode::SUCCESS)
}

pub(crate) fn duplicates(
    cli: &Cli,
    threshold: Option<f32>,
    min_overlap: f32,
    limit: usize,
    out: &mut String,
) -> Result<ExitCode> {
    let searcher = open_searcher(cli, load_embedder(cli)?)?;
    let threshold = match threshold {
        Some(t) => t,
        None => searcher.calibration()?.duplicate_cosine,
    };
    let pairs = searcher
        .duplicates(threshold, min_overlap, limit)
        .map_err(|e| needs_vectors(cli, e))?;
    if cli.json {
        print_json(
            out,
            &json!({ "threshold": threshold, "min_overlap": min_overlap, "pairs": pairs }),
        );
    } else if pairs.is_empty() {
        outln!(
            out,
            "no pairs of notes with similarity ≥ {threshold} and own-text overlap ≥ {min_overlap}"
        );
    } else {
        outln!(out, "overlap  cosine  notes");
        for p in &pairs {
            outln!(
                out,
                "{:.2}     {:.3}   {}  ~  {}",
                p.overlap,
                p.score,
                p.a,
                p.b
            );
        }
    }
    Ok(ExitCode::SUCCESS)
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
