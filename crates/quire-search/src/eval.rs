//! `quire eval`: retrieval quality on a BEIR-layout test set (`corpus.jsonl`, `queries.jsonl`,
//! `qrels/test.tsv`), so anyone can check the retrievers on public data or their own.

use std::collections::{BTreeMap, HashMap};
use std::path::Path;

use quire_index::{Boosts, Filter, FullText, FullTextDoc};
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
    pub corpus: Vec<(String, String, String)>,
    /// Queries that have judgments, in file order.
    pub queries: Vec<(String, String)>,
    pub qrels: HashMap<String, HashMap<String, u32>>,
}

fn read(path: &Path) -> Result<String, SearchError> {
    std::fs::read_to_string(path).map_err(|e| SearchError::Eval(format!("{}: {e}", path.display())))
}

impl TestSet {
    pub fn load(dir: &Path) -> Result<TestSet, SearchError> {
        let mut corpus = Vec::new();
        for (n, line) in read(&dir.join("corpus.jsonl"))?.lines().enumerate() {
            if line.trim().is_empty() {
                continue;
            }
            let doc: CorpusLine = serde_json::from_str(line)
                .map_err(|e| SearchError::Eval(format!("corpus.jsonl line {}: {e}", n + 1)))?;
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
                .map_err(|e| SearchError::Eval(format!("qrels line {}: {e}", n + 1)))?;
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
            let q: QueryLine = serde_json::from_str(line)
                .map_err(|e| SearchError::Eval(format!("queries.jsonl line {}: {e}", n + 1)))?;
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
    pub ndcg_at_10: BTreeMap<String, f64>,
    pub recall_at_10: BTreeMap<String, f64>,
    pub recall_at_100: BTreeMap<String, f64>,
    pub mrr_at_10: BTreeMap<String, f64>,
    pub queries: usize,
    pub documents: usize,
}

/// Runs BM25 over the test set. (Vector and hybrid join when an embedding model is configured.)
pub fn evaluate_bm25(set: &TestSet, boosts: Boosts) -> Result<EvalReport, SearchError> {
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
    let mut sums = [0.0f64; 4];
    for (qid, text) in &set.queries {
        let hits = fulltext.search(text, 100, &Filter::default(), boosts)?;
        let ranked: Vec<String> = hits.into_iter().map(|h| h.key).collect();
        let rel = &set.qrels[qid];
        sums[0] += ndcg_at_k(&ranked, rel, 10);
        sums[1] += recall_at_k(&ranked, rel, 10);
        sums[2] += recall_at_k(&ranked, rel, 100);
        sums[3] += mrr_at_k(&ranked, rel, 10);
    }
    let n = set.queries.len().max(1) as f64;
    let one = |v: f64| BTreeMap::from([("bm25".to_string(), v / n)]);
    Ok(EvalReport {
        ndcg_at_10: one(sums[0]),
        recall_at_10: one(sums[1]),
        recall_at_100: one(sums[2]),
        mrr_at_10: one(sums[3]),
        queries: set.queries.len(),
        documents: set.corpus.len(),
    })
}
