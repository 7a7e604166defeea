//! `quire eval --vault`: a retrieval test set made from the user's own notes, so retrieval can be
//! checked on the vault it serves rather than on public data only.
//!
//! Two kinds of queries, both with one relevant note:
//! - **heading**: the text of a level-2+ heading that occurs in one note only (a heading shared by
//!   many notes, like "Related", names no note) → the note holding it;
//! - **link**: the line around a wikilink, with every link removed (what the writer said about
//!   the target in their own words) → the linked note. The note the line comes from is left out of
//!   the ranking, since it holds the query text verbatim; a user writing that line wants the other
//!   note.
//!
//! Query building is pure (no I/O); [`evaluate_vault`] runs the queries through a [`Searcher`].

use std::collections::{BTreeMap, HashMap};

use quire_vault::Vault;
use quire_vault::links::Resolution;
use serde::Serialize;

use crate::fusion::Fusion;
use crate::metrics::{mrr_at_k, ndcg_at_k, recall_at_k};
use crate::{Mode, SearchError, SearchRequest, Searcher};

/// Where a query came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum QueryKind {
    /// A level-2+ heading found in one note only; its note answers it.
    Heading,
    /// The line around a wikilink, links removed; the linked note answers it.
    Link,
    /// A question written by a person, from a file (`quire eval --questions`).
    Question,
}

/// One query with its answer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct VaultQuery {
    /// How the query was made.
    pub kind: QueryKind,
    /// What is searched for.
    pub text: String,
    /// The note that answers the query.
    pub relevant: String,
    /// Other notes that answer it as well (questions from a file may list several).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub also_relevant: Vec<String>,
    /// A note left out of the ranking (the link's source note).
    pub exclude: Option<String>,
}

/// Fewest words a query must have to say something.
const MIN_WORDS: usize = 2;

/// Builds at most `per_kind` queries of each kind, chosen deterministically (by a hash of the
/// query text, so the sample does not favour any folder or the alphabet).
pub fn vault_queries(vault: &Vault, per_kind: usize) -> Vec<VaultQuery> {
    let mut headings: HashMap<String, Vec<usize>> = HashMap::new();
    for (i, note) in vault.notes.iter().enumerate() {
        for h in note.headings.iter().filter(|h| h.level >= 2) {
            let key = normalize(&h.text);
            let owners = headings.entry(key).or_default();
            if owners.last() != Some(&i) {
                owners.push(i);
            }
        }
    }
    let mut heading_queries: Vec<VaultQuery> = Vec::new();
    for note in &vault.notes {
        for h in note.headings.iter().filter(|h| h.level >= 2) {
            let text = h.text.trim();
            if words(text) < MIN_WORDS
                || headings.get(&normalize(text)).is_none_or(|o| o.len() != 1)
            {
                continue;
            }
            heading_queries.push(VaultQuery {
                kind: QueryKind::Heading,
                text: text.to_string(),
                relevant: note.path.clone(),
                also_relevant: Vec::new(),
                exclude: None,
            });
        }
    }

    let mut link_queries: Vec<VaultQuery> = Vec::new();
    for (i, note) in vault.notes.iter().enumerate() {
        let lines: Vec<&str> = note.source.lines().collect();
        for (link, resolution) in note.links.iter().zip(&vault.graph.resolutions[i]) {
            let Some(Resolution::Note(target)) = resolution else {
                continue;
            };
            if *target == i || link.in_frontmatter {
                continue;
            }
            let Some(line) = link.line.checked_sub(1).and_then(|l| lines.get(l)) else {
                continue;
            };
            let text = line_without_links(line);
            if words(&text) < MIN_WORDS + 1 {
                continue;
            }
            link_queries.push(VaultQuery {
                kind: QueryKind::Link,
                text,
                relevant: vault.notes[*target].path.clone(),
                also_relevant: Vec::new(),
                exclude: Some(note.path.clone()),
            });
        }
    }
    let mut out = sample(heading_queries, per_kind);
    out.extend(sample(link_queries, per_kind));
    out
}

/// A line of a questions file: `{"question": "…", "relevant": ["note.md", …]}` (other fields,
/// such as `lang` or `why`, are ignored).
#[derive(serde::Deserialize)]
struct QuestionLine {
    question: String,
    relevant: Vec<String>,
}

/// Reads questions written by a person (JSON lines, see [`QuestionLine`]'s fields: `question`
/// and `relevant`, the vault-relative paths of the notes that answer it). Blank lines are
/// skipped; a line without a relevant note is an error.
pub fn questions_from_jsonl(text: &str) -> Result<Vec<VaultQuery>, SearchError> {
    let mut out = Vec::new();
    for (n, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let bad = |e: Box<dyn std::error::Error + Send + Sync>| SearchError::EvalLine {
            file: "questions",
            line: n + 1,
            source: e,
        };
        let q: QuestionLine = serde_json::from_str(line).map_err(|e| bad(Box::new(e)))?;
        let mut relevant = q.relevant.into_iter();
        let Some(first) = relevant.next() else {
            return Err(bad("`relevant` names no note".into()));
        };
        out.push(VaultQuery {
            kind: QueryKind::Question,
            text: q.question,
            relevant: first,
            also_relevant: relevant.collect(),
            exclude: None,
        });
    }
    Ok(out)
}

fn normalize(text: &str) -> String {
    text.trim().to_lowercase()
}

fn words(text: &str) -> usize {
    text.split_whitespace()
        .filter(|w| w.chars().any(char::is_alphanumeric))
        .count()
        // Scripts written without spaces: count characters in pairs instead.
        .max(text.chars().filter(|c| is_unspaced_script(*c)).count() / 2)
}

fn is_unspaced_script(c: char) -> bool {
    matches!(c as u32, 0x3040..=0x30FF | 0x3400..=0x4DBF | 0x4E00..=0x9FFF | 0x0E00..=0x0E7F)
}

/// The line with `[[…]]`/`![[…]]` links and Markdown list, quote and heading markers removed.
/// Markdown links keep their text: `[text](url)` reads as `text`.
pub fn line_without_links(line: &str) -> String {
    let mut out = String::with_capacity(line.len());
    let mut rest = line;
    while let Some(start) = rest.find("[[") {
        let before = rest[..start].strip_suffix('!').unwrap_or(&rest[..start]);
        out.push_str(before);
        match rest[start..].find("]]") {
            Some(end) => {
                out.push(' ');
                rest = &rest[start + end + 2..];
            }
            None => {
                rest = "";
            }
        }
    }
    out.push_str(rest);
    // `[text](target)` → `text`
    let mut plain = String::with_capacity(out.len());
    let mut s = out.as_str();
    while let Some(open) = s.find('[') {
        let after = &s[open + 1..];
        match after.find("](").and_then(|close| {
            after[close + 2..]
                .find(')')
                .map(|paren| (close, close + 2 + paren))
        }) {
            Some((close, paren)) => {
                plain.push_str(&s[..open]);
                plain.push_str(&after[..close]);
                s = &after[paren + 1..];
            }
            None => {
                plain.push_str(&s[..=open]);
                s = after;
            }
        }
    }
    plain.push_str(s);
    let trimmed = plain
        .trim()
        .trim_start_matches(['#', '>', '-', '*', '+', ' '])
        .trim_start_matches("[ ] ")
        .trim_start_matches("[x] ");
    trimmed.split_whitespace().collect::<Vec<_>>().join(" ")
}

fn sample(mut queries: Vec<VaultQuery>, n: usize) -> Vec<VaultQuery> {
    queries.sort_by(|a, b| a.text.cmp(&b.text).then(a.relevant.cmp(&b.relevant)));
    queries.dedup_by(|a, b| a.text == b.text && a.relevant == b.relevant);
    queries.sort_by_cached_key(|q| {
        blake3::hash(format!("{}\0{}", q.text, q.relevant).as_bytes())
            .to_hex()
            .to_string()
    });
    queries.truncate(n);
    queries
}

/// Scores per retriever for each metric, overall and per query kind.
#[derive(Debug, Clone, Serialize)]
pub struct VaultEvalReport {
    /// Mean nDCG@10 by retriever (`hybrid`, `bm25`, `vector`: the modes run).
    pub ndcg_at_10: BTreeMap<String, f64>,
    /// Mean recall@10 by retriever.
    pub recall_at_10: BTreeMap<String, f64>,
    /// Mean recall@100 by retriever.
    pub recall_at_100: BTreeMap<String, f64>,
    /// Mean reciprocal rank of the answering note in the top 10, by retriever.
    pub mrr_at_10: BTreeMap<String, f64>,
    /// Queries run.
    pub queries: usize,
    /// nDCG@10 per query kind and retriever.
    pub ndcg_at_10_by_kind: BTreeMap<QueryKind, BTreeMap<String, f64>>,
    /// Queries run of each kind.
    pub queries_by_kind: BTreeMap<QueryKind, usize>,
    /// Median time of one search in milliseconds, by retriever, with the query's vector
    /// already computed (embedding the query costs every vector and hybrid search the same).
    pub latency_ms: BTreeMap<String, f64>,
    /// For each query, in order: the rank (from 1) of its first relevant note among the top
    /// 100, by retriever (`None`: not found).
    pub ranks: Vec<BTreeMap<String, Option<usize>>>,
}

/// The notes of a search, best first.
fn paths(found: crate::SearchResults) -> Vec<String> {
    found.results.into_iter().map(|hit| hit.path).collect()
}

/// Runs every query through the index with each of `modes` (note-level ranking, the way search
/// results are shown) and averages the metrics. Each of `variants` adds a hybrid row
/// `hybrid[name]` with that fusion (the `hybrid` row is [`Fusion::default`]).
///
/// `written` maps a query's text to passages a model wrote for it (a hypothetical answer, as
/// in HyDE); each query that has one adds three rows: `vector[hyde]` and `hybrid[hyde]` search
/// with [`Searcher::expanded_query_vector`] (BM25 still on the query), and `hybrid[q2d]` also
/// gives BM25 the query followed by the passage (query2doc).
/// `reranked` maps a query's text to the notes a chat model put in order (listwise reranking
/// of the default hybrid's first notes, see `quire_assist::rerank`): a row `hybrid[rerank]`.
pub fn evaluate_vault(
    searcher: &Searcher,
    queries: &[VaultQuery],
    modes: &[Mode],
    variants: &[(String, Fusion)],
    written: &HashMap<String, String>,
    reranked: &HashMap<String, Vec<String>>,
) -> Result<VaultEvalReport, SearchError> {
    let mut runs: Vec<(String, Mode, Fusion)> = modes
        .iter()
        .map(|m| (m.to_string(), *m, Fusion::default()))
        .collect();
    if modes.contains(&Mode::Hybrid) {
        runs.extend(
            variants
                .iter()
                .map(|(name, f)| (format!("hybrid[{name}]"), Mode::Hybrid, *f)),
        );
    }
    if modes.contains(&Mode::Hybrid) && !written.is_empty() {
        runs.push(("vector[hyde]".into(), Mode::Vector, Fusion::default()));
        runs.push(("hybrid[hyde]".into(), Mode::Hybrid, Fusion::default()));
        runs.push(("hybrid[q2d]".into(), Mode::Hybrid, Fusion::default()));
    }
    if modes.contains(&Mode::Hybrid) && !reranked.is_empty() {
        runs.push(("hybrid[rerank]".into(), Mode::Hybrid, Fusion::default()));
    }
    let mut sums: BTreeMap<String, [f64; 4]> = BTreeMap::new();
    let mut by_kind: BTreeMap<QueryKind, BTreeMap<String, f64>> = BTreeMap::new();
    let mut counts: BTreeMap<QueryKind, usize> = BTreeMap::new();
    let mut times: BTreeMap<String, Vec<f64>> = BTreeMap::new();
    let mut ranks = Vec::new();
    for q in queries {
        *counts.entry(q.kind).or_default() += 1;
        let relevant: HashMap<String, u32> = std::iter::once(&q.relevant)
            .chain(&q.also_relevant)
            .map(|p| (p.clone(), 1))
            .collect();
        // Embed the query once, untimed, so every timed search compares the same work.
        searcher.cosines(&q.text, &[])?;
        let mut mine = BTreeMap::new();
        for (name, mode, fusion) in &runs {
            let mut request = SearchRequest::new(q.text.clone());
            request.mode = *mode;
            request.fusion = *fusion;
            // Written questions are searched as `quire search` does by default (10 notes, 3
            // sections each), since the depth of the chunk lists changes what fusion sees;
            // generated queries go to 100 notes for recall@100.
            if q.kind != QueryKind::Question {
                request.k = 101;
                request.sections_per_note = 1;
            }
            let started = std::time::Instant::now();
            let ranked: Vec<String> = match (name.as_str(), written.get(&q.text)) {
                ("hybrid[rerank]", _) => reranked.get(&q.text).cloned().unwrap_or_default(),
                ("vector[hyde]" | "hybrid[hyde]" | "hybrid[q2d]", Some(passage)) => {
                    paths(if name == "hybrid[q2d]" {
                        // As `ask` searches with an expansion.
                        request.expansion = Some(passage.clone());
                        searcher.search(&request)?
                    } else {
                        let vector = searcher.expanded_query_vector(&q.text, &[passage])?;
                        searcher.search_with_vector(&request, &vector)?
                    })
                }
                _ => paths(searcher.search(&request)?),
            };
            times
                .entry(name.clone())
                .or_default()
                .push(started.elapsed().as_secs_f64() * 1000.0);
            let ranked: Vec<String> = ranked
                .into_iter()
                .filter(|p| Some(p) != q.exclude.as_ref())
                .take(100)
                .collect();
            mine.insert(
                name.clone(),
                ranked
                    .iter()
                    .position(|p| relevant.contains_key(p))
                    .map(|i| i + 1),
            );
            let name = name.clone();
            let ndcg = ndcg_at_k(&ranked, &relevant, 10);
            let s = sums.entry(name.clone()).or_insert([0.0; 4]);
            s[0] += ndcg;
            s[1] += recall_at_k(&ranked, &relevant, 10);
            s[2] += recall_at_k(&ranked, &relevant, 100);
            s[3] += mrr_at_k(&ranked, &relevant, 10);
            *by_kind.entry(q.kind).or_default().entry(name).or_default() += ndcg;
        }
        ranks.push(mine);
    }
    let n = queries.len().max(1) as f64;
    let metric = |m: usize| {
        sums.iter()
            .map(|(k, v)| (k.clone(), v[m] / n))
            .collect::<BTreeMap<_, _>>()
    };
    for (kind, scores) in by_kind.iter_mut() {
        let n = counts[kind].max(1) as f64;
        scores.values_mut().for_each(|v| *v /= n);
    }
    Ok(VaultEvalReport {
        ndcg_at_10: metric(0),
        recall_at_10: metric(1),
        recall_at_100: metric(2),
        mrr_at_10: metric(3),
        queries: queries.len(),
        ndcg_at_10_by_kind: by_kind,
        queries_by_kind: counts,
        latency_ms: times
            .into_iter()
            .map(|(k, v)| (k, crate::eval::median(v)))
            .collect(),
        ranks,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn links_and_markers_are_removed_from_the_line() {
        assert_eq!(
            line_without_links("- See [[Tempo runs|my tempo notes]] for pacing ![[chart.png]]"),
            "See for pacing"
        );
        assert_eq!(
            line_without_links("> read [the guide](guide.md) first"),
            "read the guide first"
        );
        assert_eq!(
            line_without_links("- [ ] ask about [[Kyoto]] temples"),
            "ask about temples"
        );
        assert_eq!(line_without_links("unclosed [[link and more"), "unclosed");
        assert_eq!(line_without_links("a [bracket] stays"), "a [bracket] stays");
    }

    #[test]
    fn words_counts_unspaced_scripts_by_pairs() {
        assert_eq!(words("hello there"), 2);
        assert_eq!(words("- ---"), 0);
        assert_eq!(words("東京の寺院"), 2);
    }
}
