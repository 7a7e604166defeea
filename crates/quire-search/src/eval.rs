//! `quire eval`: retrieval quality on a BEIR-layout test set (`corpus.jsonl`, `queries.jsonl`,
//! `qrels/test.tsv`), so anyone can check the retrievers on public data or their own.

use std::collections::{BTreeMap, HashMap};
use std::path::Path;

use quire_embed::Embedder;
use quire_index::{Boosts, Filter, FullText, FullTextDoc};

use crate::fusion::{RRF_K, reciprocal_rank_fusion};
use crate::vectors::{VectorMatrix, top_k};
use serde::{Deserialize, Serialize};

use crate::SearchError;
use crate::metrics::{mrr_at_k, ndcg_at_k, recall_at_k};

#[derive(Deserialize)]
struct CorpusLine {
    #[serde(rename = "_id")]
    id: String,
    #[serde(default)]
    title: String,
    #[serde(default)]
    text: String,
}

#[derive(Deserialize)]
struct QueryLine {
    #[serde(rename = "_id")]
    id: String,
    text: String,
}

/// A loaded test set.
pub struct TestSet {
    /// Each document as `(id, title, text)`, in file order.
    pub corpus: Vec<(String, String, String)>,
    /// Queries that have judgments, in file order.
    pub queries: Vec<(String, String)>,
    /// The judgments: query id → document id → relevance grade (0 is not relevant).
    pub qrels: HashMap<String, HashMap<String, u32>>,
}

/// Line `index` (from 0) of `file` did not parse.
fn bad_line(
    file: &'static str,
    index: usize,
    error: impl std::error::Error + Send + Sync + 'static,
) -> SearchError {
    SearchError::EvalLine {
        file,
        line: index + 1,
        source: Box::new(error),
    }
}

fn read(path: &Path) -> Result<String, SearchError> {
    std::fs::read_to_string(path).map_err(|source| SearchError::EvalIo {
        path: path.to_path_buf(),
        source,
    })
}

impl TestSet {
    /// Reads `corpus.jsonl`, `queries.jsonl` and `qrels/test.tsv` under `dir`; blank lines and the
    /// qrels header are skipped.
    pub fn load(dir: &Path) -> Result<TestSet, SearchError> {
        let mut corpus = Vec::new();
        for (n, line) in read(&dir.join("corpus.jsonl"))?.lines().enumerate() {
            if line.trim().is_empty() {
                continue;
            }
            let doc: CorpusLine =
                serde_json::from_str(line).map_err(|e| bad_line("corpus.jsonl", n, e))?;
            corpus.push((doc.id, doc.title, doc.text));
        }
        let mut qrels: HashMap<String, HashMap<String, u32>> = HashMap::new();
        for (n, line) in read(&dir.join("qrels/test.tsv"))?.lines().enumerate() {
            let cols: Vec<&str> = line.split('\t').collect();
            if cols.len() < 3 || (n == 0 && cols[2].parse::<u32>().is_err()) {
                continue; // header
            }
            let grade = cols[2]
                .trim()
                .parse::<u32>()
                .map_err(|e| bad_line("qrels/test.tsv", n, e))?;
            qrels
                .entry(cols[0].to_string())
                .or_default()
                .insert(cols[1].to_string(), grade);
        }
        let mut queries = Vec::new();
        for (n, line) in read(&dir.join("queries.jsonl"))?.lines().enumerate() {
            if line.trim().is_empty() {
                continue;
            }
            let q: QueryLine =
                serde_json::from_str(line).map_err(|e| bad_line("queries.jsonl", n, e))?;
            if qrels.contains_key(&q.id) {
                queries.push((q.id, q.text));
            }
        }
        Ok(TestSet {
            corpus,
            queries,
            qrels,
        })
    }
}

/// Scores per metric, per retriever (only the retrievers that ran appear).
#[derive(Debug, Clone, Serialize)]
pub struct EvalReport {
    /// Mean nDCG@10 by retriever (`bm25`, `vector`, `hybrid`).
    pub ndcg_at_10: BTreeMap<String, f64>,
    /// Mean recall@10 by retriever.
    pub recall_at_10: BTreeMap<String, f64>,
    /// Mean recall@100 by retriever.
    pub recall_at_100: BTreeMap<String, f64>,
    /// Mean reciprocal rank of the first relevant document in the top 10, by retriever.
    pub mrr_at_10: BTreeMap<String, f64>,
    /// Queries evaluated (those with judgments).
    pub queries: usize,
    /// Documents in the corpus.
    pub documents: usize,
}

/// Runs BM25, and with an embedder also vector and hybrid (RRF) retrieval, over the test set.
/// Corpus vectors are cached in `cache_dir` (keyed by embedding space and corpus content) so a
/// second run does not embed again.
pub fn evaluate(
    set: &TestSet,
    boosts: Boosts,
    embedder: Option<&dyn Embedder>,
    cache_dir: Option<&Path>,
) -> Result<EvalReport, SearchError> {
    let fulltext = FullText::in_memory()?;
    let mut writer = fulltext.writer()?;
    for (id, title, text) in &set.corpus {
        writer.add(&FullTextDoc {
            key: id.clone(),
            path: id.clone(),
            title: title.clone(),
            body: text.clone(),
            ..Default::default()
        })?;
    }
    writer.commit(1)?;
    fulltext.reload()?;
    let matrix = match embedder {
        Some(e) => Some(corpus_vectors(set, e, cache_dir)?),
        None => None,
    };
    let mut sums: BTreeMap<&str, [f64; 4]> = BTreeMap::new();
    for (qid, text) in &set.queries {
        let rel = &set.qrels[qid];
        let bm25: Vec<String> = fulltext
            .search(text, 100, &Filter::default(), boosts)?
            .into_iter()
            .map(|h| h.key)
            .collect();
        let mut runs: Vec<(&str, Vec<String>)> = vec![("bm25", bm25.clone())];
        if let (Some(e), Some(m)) = (embedder, &matrix) {
            let q = e.embed_query(text)?;
            let vector: Vec<String> = top_k(m.scores(&q), 100)
                .into_iter()
                .map(|(i, _)| m.keys[i].0.clone())
                .collect();
            let hybrid: Vec<String> =
                reciprocal_rank_fusion(&[(&bm25, 1.0), (&vector, 1.0)], RRF_K)
                    .into_iter()
                    .take(100)
                    .map(|(k, _)| k)
                    .collect();
            runs.push(("vector", vector));
            runs.push(("hybrid", hybrid));
        }
        for (name, ranked) in runs {
            let s = sums.entry(name).or_insert([0.0; 4]);
            s[0] += ndcg_at_k(&ranked, rel, 10);
            s[1] += recall_at_k(&ranked, rel, 10);
            s[2] += recall_at_k(&ranked, rel, 100);
            s[3] += mrr_at_k(&ranked, rel, 10);
        }
    }
    let n = set.queries.len().max(1) as f64;
    let metric = |m: usize| {
        sums.iter()
            .map(|(k, v)| (k.to_string(), v[m] / n))
            .collect::<BTreeMap<_, _>>()
    };
    Ok(EvalReport {
        ndcg_at_10: metric(0),
        recall_at_10: metric(1),
        recall_at_100: metric(2),
        mrr_at_10: metric(3),
        queries: set.queries.len(),
        documents: set.corpus.len(),
    })
}

/// The corpus embedded as passages (`title text`), from the cache when possible.
fn corpus_vectors(
    set: &TestSet,
    embedder: &dyn Embedder,
    cache_dir: Option<&Path>,
) -> Result<VectorMatrix, SearchError> {
    let space = embedder.space();
    let mut hasher = blake3::Hasher::new();
    for (id, title, text) in &set.corpus {
        for part in [id, title, text] {
            hasher.update(part.as_bytes());
            hasher.update(&[0]);
        }
    }
    let cache = cache_dir.map(|d| {
        d.join(format!(
            "{}-{}.f32",
            space.id(),
            &hasher.finalize().to_hex()[..16]
        ))
    });
    let expected = set.corpus.len() * space.dimension;
    let mut data: Vec<f32> = cache
        .as_ref()
        .and_then(|p| std::fs::read(p).ok())
        .map(|bytes| {
            bytes
                .chunks_exact(4)
                .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
                .collect()
        })
        .unwrap_or_default();
    if data.len() != expected {
        data.clear();
        let texts: Vec<String> = set
            .corpus
            .iter()
            .map(|(_, title, text)| format!("{title} {text}").trim().to_string())
            .collect();
        for batch in texts.chunks(64) {
            let refs: Vec<&str> = batch.iter().map(String::as_str).collect();
            for v in embedder.embed_passages(&refs)? {
                data.extend(v);
            }
        }
        if let Some(path) = &cache {
            if let Some(parent) = path.parent() {
                let _ = std::fs::create_dir_all(parent);
            }
            let bytes: Vec<u8> = data.iter().flat_map(|x| x.to_le_bytes()).collect();
            let _ = std::fs::write(path, bytes);
        }
    }
    Ok(VectorMatrix {
        keys: set
            .corpus
            .iter()
            .map(|(id, _, _)| (id.clone(), String::new()))
            .collect(),
        data,
        dimension: space.dimension,
    })
}
