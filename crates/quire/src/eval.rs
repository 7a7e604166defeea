//! `quire eval`: retrieval quality on a BEIR-layout test set, or on the vault itself.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context, Result, bail};
use quire_app::types::SyncOptions;

use crate::Cli;
use crate::common::{
    index_location, load_embedder, open_options, open_searcher, open_vault, print_json,
};
use crate::progress;
use quire_app::eval::VaultEvalReport;
use std::collections::HashMap;

/// `quire eval DIR`: nDCG@10, recall@10/100 and MRR@10 of every retriever on a test set.
pub(crate) fn test_set(
    cli: &Cli,
    dir: &Path,
    title_boost: f32,
    out: &mut String,
) -> Result<ExitCode> {
    let set = quire_app::eval::TestSet::load(dir)?;
    let boosts = quire_app::types::Boosts {
        title: title_boost,
        ..Default::default()
    };
    let embedder = match weight_bits()? {
        Some(bits) => Some(quire_app::models::gemma_with_bits(bits)?),
        None => load_embedder(cli)?,
    };
    let cache = dirs_cache();
    let written = if embedder.is_some() {
        hypothetical_answers(set.queries.iter().map(|(_, text)| text.as_str()))?
    } else {
        HashMap::new()
    };
    let report = quire_app::eval::evaluate(
        &set,
        boosts,
        embedder.as_deref(),
        Some(&cache),
        &fusion_variants()?,
        &written,
        &dimensions()?,
    )?;
    if cli.json {
        print_json(out, &report);
        return Ok(ExitCode::SUCCESS);
    }
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
    Ok(ExitCode::SUCCESS)
}

/// EmbeddingGemma with its weights rounded to fewer bits (`QUIRE_GEMMA_BITS=4`, for measuring
/// what a smaller file would cost, not a setting; see `GemmaModel::load_with_bits`).
fn weight_bits() -> Result<Option<u32>> {
    let Ok(bits) = std::env::var("QUIRE_GEMMA_BITS") else {
        return Ok(None);
    };
    match bits.trim().parse::<u32>() {
        Ok(b) if (2..=8).contains(&b) => Ok(Some(b)),
        _ => bail!("QUIRE_GEMMA_BITS takes 2 to 8, not `{bits}`"),
    }
}

/// Shorter vectors to measure (`QUIRE_DIMS=512,256`, for measuring, not a setting): the corpus
/// and query vectors cut to that many values and normalised again, as rows `vector[d=512]` and
/// `hybrid[d=512]`.
fn dimensions() -> Result<Vec<usize>> {
    let Ok(list) = std::env::var("QUIRE_DIMS") else {
        return Ok(Vec::new());
    };
    list.split(',')
        .map(|d| {
            d.trim()
                .parse::<usize>()
                .map_err(|e| anyhow::anyhow!("QUIRE_DIMS: `{d}`: {e}"))
        })
        .collect()
}

/// The hybrid fusions to compare with the default, from `QUIRE_FUSION` (names separated by
/// commas, see `quire_app::eval::Fusion`'s `FromStr`): for reproducing
/// docs/fusion-variants.md, not a setting.
fn fusion_variants() -> Result<Vec<(String, quire_app::eval::Fusion)>> {
    let Ok(list) = std::env::var("QUIRE_FUSION") else {
        return Ok(Vec::new());
    };
    list.split(',')
        .map(str::trim)
        .filter(|name| !name.is_empty())
        .map(|name| {
            name.parse()
                .map(|f| (name.to_string(), f))
                .map_err(|e: String| anyhow::anyhow!("QUIRE_FUSION: {e}"))
        })
        .collect()
}

/// With `QUIRE_HYDE=1` (for measuring query rewriting, not a setting): a passage the chat
/// model writes for each question that might answer it, by query text; empty otherwise. The
/// model's seconds per question go to stderr (median and total).
fn hypothetical_answers<'a>(
    queries: impl IntoIterator<Item = &'a str>,
) -> Result<HashMap<String, String>> {
    if std::env::var("QUIRE_HYDE").map_or(true, |v| v.trim() != "1") {
        return Ok(HashMap::new());
    }
    let Some(model) = crate::assist::chat_model()? else {
        bail!(
            "QUIRE_HYDE=1 needs a chat model (a provider, or the local model in a local-llm build)"
        );
    };
    let mut written = HashMap::new();
    let mut seconds = Vec::new();
    for text in queries {
        // The passage `ask --expand` searches with.
        let (passage, took) = quire_app::ask::write_expansion(
            model.as_ref(),
            text,
            &quire_app::types::CancelToken::new(),
        )?;
        seconds.push(took);
        written.insert(text.to_string(), passage);
    }
    let total: f64 = seconds.iter().sum();
    seconds.sort_by(f64::total_cmp);
    eprintln!(
        "QUIRE_HYDE: {} passages by {}, median {:.2} s, total {:.1} s",
        written.len(),
        model.name(),
        seconds.get(seconds.len() / 2).copied().unwrap_or(0.0),
        total
    );
    Ok(written)
}

/// With `QUIRE_RERANK=N` (for measuring listwise reranking, not a setting): for each question,
/// the default hybrid search's first N notes (at most 20) in the order the chat model puts
/// them ([`quire_app::ask::rerank`]), by query text; empty otherwise. The model's seconds per
/// question go to stderr (median and total), with how often it moved the first note.
fn reranked_notes<'a>(
    searcher: &quire_app::types::Searcher,
    queries: impl IntoIterator<Item = &'a str>,
) -> Result<HashMap<String, Vec<String>>> {
    let Ok(depth) = std::env::var("QUIRE_RERANK") else {
        return Ok(HashMap::new());
    };
    let depth: usize = depth
        .trim()
        .parse()
        .ok()
        .filter(|n| (2..=20).contains(n))
        .context("QUIRE_RERANK is the number of notes to rerank, 2 to 20")?;
    let Some(model) = crate::assist::chat_model()? else {
        bail!(
            "QUIRE_RERANK needs a chat model (a provider, or the local model in a local-llm build)"
        );
    };
    let mut out = HashMap::new();
    let mut seconds = Vec::new();
    let mut moved = 0;
    for text in queries {
        let mut request = quire_app::types::SearchRequest::new(text.to_string());
        request.mode = quire_app::types::Mode::Hybrid;
        request.k = depth;
        let found = searcher.search(&request)?.results;
        let candidates: Vec<quire_app::types::RerankCandidate> = found
            .iter()
            .map(|hit| quire_app::types::RerankCandidate {
                path: hit.path.clone(),
                title: hit.title.clone(),
                sections: hit
                    .sections
                    .iter()
                    .take(2)
                    .map(|s| (s.heading_path.join(" > "), s.snippet.clone()))
                    .collect(),
            })
            .collect();
        let (order, took) = quire_app::ask::rerank(
            model.as_ref(),
            text,
            &candidates,
            &quire_app::types::CancelToken::new(),
        )?;
        seconds.push(took);
        moved += usize::from(order.first().is_some_and(|&i| i != 0));
        out.insert(
            text.to_string(),
            order.into_iter().map(|i| found[i].path.clone()).collect(),
        );
    }
    let total: f64 = seconds.iter().sum();
    seconds.sort_by(f64::total_cmp);
    eprintln!(
        "QUIRE_RERANK: {} rankings of {depth} notes by {}, median {:.2} s, total {:.1} s, first note changed {moved} times",
        out.len(),
        model.name(),
        seconds.get(seconds.len() / 2).copied().unwrap_or(0.0),
        total
    );
    Ok(out)
}

/// `quire eval` without DIR: queries made from the vault's own headings and link lines (or
/// read from `questions`), run against its index (synced first) in every mode the index
/// supports.
pub(crate) fn vault(
    cli: &Cli,
    per_kind: usize,
    list: bool,
    questions: Option<&Path>,
    out: &mut String,
) -> Result<ExitCode> {
    let vault = open_vault(cli)?;
    let queries = match questions {
        Some(file) => {
            let text = std::fs::read_to_string(file)
                .with_context(|| format!("reading questions from {}", file.display()))?;
            quire_app::eval::questions_from_jsonl(&text)
                .with_context(|| format!("questions file {}", file.display()))?
        }
        None => quire_app::eval::vault_queries(&vault, per_kind),
    };
    if list {
        if cli.json {
            print_json(out, &queries);
        } else {
            for q in &queries {
                outln!(out, "{:?}\t{}\t{}", q.kind, q.text, q.relevant);
            }
        }
        return Ok(ExitCode::SUCCESS);
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
        ann: None,
        only: None,
    };
    let progress = progress::SyncBar::new(cli.json);
    quire_app::index::sync(&vault.root, &location, &options, &progress)?;
    progress.finish();
    let searcher = open_searcher(cli, embedder.clone())?;
    let mut modes = vec![quire_app::types::Mode::Bm25];
    if embedder.is_some() && searcher.space()?.is_some() {
        modes.extend([
            quire_app::types::Mode::Vector,
            quire_app::types::Mode::Hybrid,
        ]);
    }
    let written = if modes.contains(&quire_app::types::Mode::Hybrid) {
        hypothetical_answers(queries.iter().map(|q| q.text.as_str()))?
    } else {
        HashMap::new()
    };
    let reranked = if modes.contains(&quire_app::types::Mode::Hybrid) {
        reranked_notes(&searcher, queries.iter().map(|q| q.text.as_str()))?
    } else {
        HashMap::new()
    };
    let report = quire_app::eval::evaluate_vault(
        &searcher,
        &queries,
        &modes,
        &fusion_variants()?,
        &written,
        &reranked,
    )?;
    if cli.json {
        print_json(out, &report);
    } else {
        render_vault_report(out, &vault.root, &report);
    }
    Ok(ExitCode::SUCCESS)
}

fn render_vault_report(out: &mut String, root: &Path, report: &VaultEvalReport) {
    outln!(
        out,
        "{}: {} queries ({} headings, {} link lines, {} written questions)",
        root.display(),
        report.queries,
        report
            .queries_by_kind
            .get(&quire_app::eval::QueryKind::Heading)
            .copied()
            .unwrap_or(0),
        report
            .queries_by_kind
            .get(&quire_app::eval::QueryKind::Link)
            .copied()
            .unwrap_or(0),
        report
            .queries_by_kind
            .get(&quire_app::eval::QueryKind::Question)
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
            kind(quire_app::eval::QueryKind::Heading),
            kind(quire_app::eval::QueryKind::Link),
        );
    }
}
/// Where `quire eval` caches corpus vectors.
fn dirs_cache() -> PathBuf {
    quire_app::models::default_model_path()
        .parent()
        .and_then(Path::parent)
        .map(|p| p.join("eval-cache"))
        .unwrap_or_else(|| std::env::temp_dir().join("quire-eval-cache"))
}
