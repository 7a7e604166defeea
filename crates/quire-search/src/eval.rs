//! `quire eval`: retrieval quality on a BEIR-layout test set (`corpus.jsonl`, `queries.jsonl`,
//! `qrels/test.tsv`), so anyone can check the retrievers on public data or their own.

use std::collections::{BTreeMap, HashMap};
use std::path::Path;

use quire_embed::Embedder;
use quire_index::{Boosts, Filter, FullText, FullTextDoc};

use crate::fusion::{Fusion, Ranking, Signal, fuse};
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
    /// Median time per query in milliseconds, by retriever: BM25's search; the vector
    /// search's query embedding and scan; for a hybrid, both plus its fusion.
    pub latency_ms: BTreeMap<String, f64>,
    /// Queries evaluated (those with judgments).
    pub queries: usize,
    /// Documents in the corpus.
    pub documents: usize,
}

/// Runs BM25, and with an embedder also vector and hybrid retrieval (fused by
/// [`Fusion::default`], reported as `hybrid`), over the test set; each of `variants` adds a
/// hybrid row `hybrid[name]` fused its way from the same two rankings (a document is one
/// chunk, so a note-level fusion is the chunk-level one and a document's centroid is its
/// vector). Corpus vectors are cached in `cache_dir` (keyed by embedding space and corpus
/// content) so a second run does not embed again.
pub fn evaluate(
    set: &TestSet,
    boosts: Boosts,
    embedder: Option<&dyn Embedder>,
    cache_dir: Option<&Path>,
    variants: &[(String, Fusion)],
    written: &HashMap<String, String>,
    dims: &[usize],
) -> Result<EvalReport, SearchError> {
    // The default fusion with the semantic weight measured for this model.
    let default =
        Fusion::default().for_model(&embedder.map_or(quire_embed::Calibration::E5_SMALL, |e| {
            e.space().calibration()
        }));
    let mut hybrids: Vec<(String, Fusion)> = vec![("hybrid".to_string(), default)];
    hybrids.extend(
        variants
            .iter()
            .map(|(name, f)| (format!("hybrid[{name}]"), *f)),
    );
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
    // The same vectors cut to their first `d` values and normalised again (a Matryoshka model
    // such as EmbeddingGemma is trained to be read this way), to measure what a smaller index
    // would cost in quality.
    let cut: Vec<(usize, VectorMatrix)> = match &matrix {
        Some(m) => dims
            .iter()
            .filter(|&&d| d > 0 && d < m.dimension)
            .map(|&d| {
                let mut data = Vec::with_capacity(m.len() * d);
                for i in 0..m.len() {
                    data.extend(truncated(m.row(i), d));
                }
                let keys = m.keys.clone();
                (
                    d,
                    VectorMatrix {
                        keys,
                        data,
                        dimension: d,
                    },
                )
            })
            .collect(),
        None => Vec::new(),
    };
    let mut sums: BTreeMap<String, [f64; 4]> = BTreeMap::new();
    let mut times: BTreeMap<String, Vec<f64>> = BTreeMap::new();
    let ms = |since: std::time::Instant| since.elapsed().as_secs_f64() * 1000.0;
    for (qid, text) in &set.queries {
        let rel = &set.qrels[qid];
        let started = std::time::Instant::now();
        let bm25: Vec<(String, f32)> = fulltext
            .search(text, 100, &Filter::default(), boosts)?
            .into_iter()
            .map(|h| (h.key, h.score))
            .collect();
        let bm25_ms = ms(started);
        let keys = |list: &[(String, f32)]| list.iter().map(|(k, _)| k.clone()).collect();
        let mut runs: Vec<(String, Vec<String>, f64)> =
            vec![("bm25".to_string(), keys(&bm25), bm25_ms)];
        if let (Some(e), Some(m)) = (embedder, &matrix) {
            // The 100 documents nearest a query vector.
            let nearest = |v: &[f32]| -> Vec<(String, f32)> {
                top_k(m.scores(v), 100)
                    .into_iter()
                    .map(|(i, s)| (m.keys[i].0.clone(), s))
                    .collect()
            };
            let started = std::time::Instant::now();
            let q = e.embed_query(text)?;
            let vector = nearest(&q);
            let vector_ms = ms(started);
            runs.push(("vector".to_string(), keys(&vector), vector_ms));
            for (name, fusion) in &hybrids {
                let started = std::time::Instant::now();
                let mut ranked = fuse_documents(&bm25, &vector, *fusion);
                if fusion.prf > 0.0 {
                    // Pseudo-relevance feedback, as a search does it (see `Fusion::prf`).
                    let feedback: Vec<&[f32]> = ranked
                        .iter()
                        .take(crate::fusion::PRF_DEPTH)
                        .filter_map(|key| m.keys.iter().position(|(k, _)| k == key))
                        .map(|i| m.row(i))
                        .collect();
                    let moved = crate::fusion::rocchio(&q, &feedback, fusion.prf);
                    ranked = fuse_documents(&bm25, &nearest(&moved), *fusion);
                }
                runs.push((name.clone(), ranked, bm25_ms + vector_ms + ms(started)));
            }
            for (d, small) in &cut {
                let started = std::time::Instant::now();
                let vector: Vec<(String, f32)> = top_k(small.scores(&truncated(&q, *d)), 100)
                    .into_iter()
                    .map(|(i, s)| (small.keys[i].0.clone(), s))
                    .collect();
                let took = ms(started);
                runs.push((format!("vector[d={d}]"), keys(&vector), took));
                let ranked = fuse_documents(&bm25, &vector, default);
                runs.push((format!("hybrid[d={d}]"), ranked, bm25_ms + took));
            }
            if let Some(passage) = written.get(text) {
                // query2doc, as `ask --expand` searches: BM25 on the query and the passage, the
                // vector side the mean of their vectors (see `SearchRequest::expansion`).
                let started = std::time::Instant::now();
                let lexical: Vec<(String, f32)> = fulltext
                    .search(
                        &format!("{text} {passage}"),
                        100,
                        &Filter::default(),
                        boosts,
                    )?
                    .into_iter()
                    .map(|h| (h.key, h.score))
                    .collect();
                let written_vector = crate::retrieval::one_passage(e, passage)?;
                let vector = nearest(&crate::fusion::rocchio(&q, &[&written_vector], 1.0));
                let took = ms(started);
                runs.push(("vector[hyde]".to_string(), keys(&vector), took));
                let ranked = fuse_documents(&lexical, &vector, default);
                runs.push(("hybrid[q2d]".to_string(), ranked, took));
            }
        }
        for (name, ranked, took) in runs {
            times.entry(name.clone()).or_default().push(took);
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
            .map(|(k, v)| (k.clone(), v[m] / n))
            .collect::<BTreeMap<_, _>>()
    };
    Ok(EvalReport {
        ndcg_at_10: metric(0),
        recall_at_10: metric(1),
        recall_at_100: metric(2),
        mrr_at_10: metric(3),
        latency_ms: times.into_iter().map(|(k, v)| (k, median(v))).collect(),
        queries: set.queries.len(),
        documents: set.corpus.len(),
    })
}

/// The median of `values` (0 for none).
pub(crate) fn median(mut values: Vec<f64>) -> f64 {
    if values.is_empty() {
        return 0.0;
    }
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}

/// A test set's hybrid ranking: its documents are single chunks, so the centroid ranking is
/// the vector ranking itself.
fn fuse_documents(bm25: &[(String, f32)], vector: &[(String, f32)], fusion: Fusion) -> Vec<String> {
    let mut rankings = vec![
        Ranking {
            items: bm25,
            signal: Signal::Lexical,
        },
        Ranking {
            items: vector,
            signal: Signal::Semantic,
        },
    ];
    if fusion.centroid {
        rankings.push(Ranking {
            items: vector,
            signal: Signal::Semantic,
        });
    }
    fuse(&rankings, fusion.method)
        .into_iter()
        .take(100)
        .map(|(k, _)| k)
        .collect()
}

/// The corpus embedded as passages (`title text`), from the cache when possible.
/// The first `d` values of `v`, normalised to unit length.
fn truncated(v: &[f32], d: usize) -> Vec<f32> {
    let mut out = v[..d.min(v.len())].to_vec();
    let norm = out.iter().map(|x| x * x).sum::<f32>().sqrt();
    if norm > 0.0 {
        out.iter_mut().for_each(|x| *x /= norm);
    }
    out
}

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
        let docs: Vec<(&str, &str)> = set
            .corpus
            .iter()
            .map(|(_, title, text)| (title.trim(), text.trim()))
            .collect();
        for batch in docs.chunks(64) {
            for v in embedder.embed_documents(batch)? {
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
