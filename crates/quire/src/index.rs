//! `quire index` and `quire status`: bring the index up to date, and report its coverage.

use std::path::Path;
use std::process::ExitCode;

use anyhow::Result;
use quire_app::types::Searcher;
use quire_app::types::SyncOptions;

use crate::Cli;
use crate::common::{index_location, load_embedder, open_options, print_json, vault_root};
use crate::progress;

pub(crate) fn index(cli: &Cli, rebuild: bool, out: &mut String) -> Result<ExitCode> {
    let location = index_location(cli)?;
    let options = SyncOptions {
        open: open_options(cli),
        rebuild,
        embedder: load_embedder(cli)?,
        ann: None,
        only: None,
    };
    let progress = progress::SyncBar::new(cli.json);
    let stats = quire_app::index::sync(&vault_root(cli)?, &location, &options, &progress)?;
    progress.finish();
    // A team's database gets the new generation once the local index has it.
    let published = match &cli.backend {
        Some(url) => Some(quire_app::backend::publish(
            &location,
            url,
            &quire_app::backend::PublishOptions {
                rebuild,
                vault_root: Some(vault_root(cli)?.display().to_string()),
            },
        )?),
        None => None,
    };
    if cli.json {
        let mut value = serde_json::to_value(&stats)?;
        if let Some(p) = &published {
            value["published"] = serde_json::to_value(p)?;
        }
        print_json(out, &value);
        return Ok(ExitCode::SUCCESS);
    }
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
    if stats.documents_not_retried > 0 {
        outln!(
            out,
            "{} of them failed before with the same bytes: not read again until they change (`index --rebuild` retries them)",
            stats.documents_not_retried
        );
    }
    if let Some(from) = &stats.model_changed_from {
        outln!(
            out,
            "the embedding model changed since the last index (from {from}): the notes were embedded again with the configured one; the old vectors stay cached, so switching back embeds nothing"
        );
    }
    outln!(out, "index: {}", location.dir.display());
    if let Some(p) = &published {
        outln!(
            out,
            "published generation {} to the database: {} notes ({} added, {} updated, {} removed; {} chunks written, {} with vectors) in {:.2}s",
            p.generation,
            p.notes,
            p.added,
            p.updated,
            p.removed,
            p.chunks_written,
            p.vectors_written,
            p.millis as f64 / 1000.0
        );
    }
    Ok(ExitCode::SUCCESS)
}

pub(crate) fn status(cli: &Cli, out: &mut String) -> Result<ExitCode> {
    if let Some(url) = &cli.backend {
        let status = quire_app::backend::database_status(url)?;
        if cli.json {
            print_json(out, &status);
        } else {
            outln!(
                out,
                "database: generation {}, {} notes, {} chunks ({} with vectors{}), {:.1} MB",
                status.generation,
                status.notes,
                status.chunks,
                status.vectors,
                status
                    .embedding_model
                    .as_deref()
                    .map(|m| format!(", model {m}"))
                    .unwrap_or_default(),
                status.database_bytes as f64 / 1e6
            );
            if let Some(root) = &status.vault_root {
                outln!(out, "published from: {root}");
            }
        }
        return Ok(ExitCode::SUCCESS);
    }
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
    Ok(ExitCode::SUCCESS)
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
