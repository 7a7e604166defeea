//! The readers: searches and similar notes answered from the database, each inside one
//! read-only `REPEATABLE READ` transaction (one published generation for the whole answer).

use std::cell::RefCell;
use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};

use pgvector::Vector;
use postgres::{Client, IsolationLevel, Transaction};
use quire_embed::{Embedder, EmbeddingSpace};
use quire_index::store::ChunkRow;
use quire_index::sync::ChunkKey;
use quire_index::{Boosts, Filter, IndexError};
use quire_search::{
    AnswerIndex, Mode, Retrieval, SearchError, SearchRequest, SearchResults, SimilarNote, retrieval,
};

use crate::{PgError, describe, text};

/// Searches an index published to PostgreSQL. One connection, used by one search at a time
/// (a server opens one per worker).
pub struct PgSearcher {
    client: Mutex<Client>,
    embedder: Option<Arc<dyn Embedder>>,
}

impl PgSearcher {
    /// Connects to the database at `url`; a database without a published quire index is
    /// [`PgError::Empty`].
    pub fn connect(url: &str) -> Result<PgSearcher, PgError> {
        let mut client = crate::connect(url)?;
        let exists: bool = client
            .query_one("SELECT to_regclass('quire_meta') IS NOT NULL", &[])?
            .get(0);
        if !exists {
            return Err(PgError::Empty);
        }
        Ok(PgSearcher {
            client: Mutex::new(client),
            embedder: None,
        })
    }

    /// Adds the model that embeds queries (it must be the published index's embedding space).
    pub fn with_embedder(mut self, embedder: Arc<dyn Embedder>) -> Self {
        self.embedder = Some(embedder);
        self
    }

    /// What the database holds: one snapshot's counts and the writer's records.
    pub fn status(&self) -> Result<PgStatus, PgError> {
        let mut client = self.client.lock().unwrap_or_else(|e| e.into_inner());
        let mut tx = client
            .build_transaction()
            .isolation_level(IsolationLevel::RepeatableRead)
            .read_only(true)
            .start()?;
        let meta: HashMap<String, String> = tx
            .query("SELECT key, value FROM quire_meta", &[])?
            .into_iter()
            .map(|r| (r.get(0), r.get(1)))
            .collect();
        let counts = tx.query_one(
            "SELECT (SELECT count(*) FROM quire_notes), (SELECT count(*) FROM quire_chunks),
                    (SELECT count(*) FROM quire_chunks WHERE embedding IS NOT NULL),
                    pg_database_size(current_database())",
            &[],
        )?;
        let count = |i: usize| u64::try_from(counts.get::<_, i64>(i)).unwrap_or_default();
        let status = PgStatus {
            generation: meta
                .get("generation")
                .and_then(|g| g.parse().ok())
                .unwrap_or_default(),
            notes: count(0),
            chunks: count(1),
            vectors: count(2),
            database_bytes: count(3),
            embedding_model: meta
                .get("space")
                .and_then(|s| serde_json::from_str::<EmbeddingSpace>(s).ok())
                .map(|s| s.model),
            vault_root: meta.get("vault_root").cloned(),
        };
        tx.commit()?;
        Ok(status)
    }

    /// Whether the connection is gone (the server restarted or dropped it): open another.
    pub fn is_closed(&self) -> bool {
        // A connection in use by a search is open; only an idle one is asked.
        self.client.try_lock().is_ok_and(|c| c.is_closed())
    }

    /// A value the writer recorded (`generation`, `vault_root`, `space`, …).
    pub fn meta(&self, key: &str) -> Result<Option<String>, PgError> {
        let mut client = self.client.lock().unwrap_or_else(|e| e.into_inner());
        Ok(client
            .query_opt("SELECT value FROM quire_meta WHERE key = $1", &[&key])?
            .map(|r| r.get(0)))
    }

    /// The mode of a search that names none: hybrid with a model and published vectors, else
    /// BM25 (as the local index). Read from the database each time: the writer may publish
    /// vectors, or another model's, while this reader runs.
    pub fn default_mode(&self) -> Result<Mode, PgError> {
        Ok(if self.embedder.is_some() && self.space()?.is_some() {
            Mode::Hybrid
        } else {
            Mode::Bm25
        })
    }

    /// The embedding space of the published vectors, if any.
    fn space(&self) -> Result<Option<EmbeddingSpace>, PgError> {
        Ok(self
            .meta("space")?
            .and_then(|s| serde_json::from_str(&s).ok()))
    }

    /// Whether no search is using the connection now.
    pub fn is_idle(&self) -> bool {
        self.client.try_lock().is_ok()
    }

    /// The embedder, checked against `space`, the published one as the snapshot reads it.
    fn embedder(
        &self,
        what: &str,
        space: Option<&EmbeddingSpace>,
    ) -> Result<&dyn Embedder, SearchError> {
        let Some(embedder) = &self.embedder else {
            return Err(SearchError::NoEmbeddings(format!(
                "{what} needs the embedding model, and none is loaded (fetch it with scripts/fetch-model.sh, or use --mode bm25)"
            )));
        };
        match space {
            Some(space) if *space == embedder.space() => Ok(embedder.as_ref()),
            Some(space) => Err(SearchError::Index(IndexError::SpaceMismatch {
                stored: serde_json::to_string(space).unwrap_or_default(),
                configured: serde_json::to_string(&embedder.space()).unwrap_or_default(),
            })),
            None => Err(SearchError::NoEmbeddings(format!(
                "{what} needs embeddings, and the database has none: publish an index built with the model"
            ))),
        }
    }

    /// Runs `f` on a read-only snapshot of the database (one published generation).
    fn snapshot<T>(
        &self,
        f: impl FnOnce(&Snapshot<'_>) -> Result<T, SearchError>,
    ) -> Result<T, SearchError> {
        let mut client = self.client.lock().unwrap_or_else(|e| e.into_inner());
        let tx = client
            .build_transaction()
            .isolation_level(IsolationLevel::RepeatableRead)
            .read_only(true)
            .start()
            .map_err(PgError::from)?;
        let mut snapshot = Snapshot {
            tx: RefCell::new(tx),
            space: None,
        };
        snapshot.space = snapshot
            .meta_value("space")?
            .and_then(|s| serde_json::from_str(&s).ok());
        let result = f(&snapshot)?;
        snapshot.tx.into_inner().commit().map_err(PgError::from)?;
        Ok(result)
    }

    /// The notes that best match `request`: the same search as the local index's
    /// ([`quire_search::retrieval::search`]) over this database's rankings.
    pub fn search(&self, request: &SearchRequest) -> Result<SearchResults, SearchError> {
        self.snapshot(|snapshot| {
            let embed = |text: &str, kind: retrieval::Embed| -> Result<Vec<f32>, SearchError> {
                let embedder = self.embedder("vector search", snapshot.space.as_ref())?;
                match kind {
                    retrieval::Embed::Query => Ok(embedder.embed_query(text)?),
                    retrieval::Embed::Passage => retrieval::one_passage(embedder, text),
                }
            };
            let calibration = snapshot
                .space
                .as_ref()
                .map_or(quire_embed::Calibration::E5_SMALL, |s| s.calibration());
            let mut request = request.clone();
            request.fusion = request.fusion.for_model(&calibration);
            retrieval::search(snapshot, &embed, &request)
        })
    }

    /// Notes most similar to `path` by their note vectors (no embedding call).
    pub fn similar(&self, path: &str, k: usize) -> Result<Vec<SimilarNote>, SearchError> {
        self.snapshot(|s| {
            self.embedder("similar notes", s.space.as_ref())?;
            let row = s
                .tx
                .borrow_mut()
                .query_opt("SELECT centroid FROM quire_notes WHERE path = $1", &[&path])
                .map_err(db)?;
            let Some(row) = row else {
                return Err(SearchError::NoNote(path.to_string()));
            };
            let Some(own) = row.get::<_, Option<Vector>>(0) else {
                return Err(SearchError::NoEmbeddings(format!(
                    "{path} has no note vector in the database (not embedded, or its chunk vectors cancel out)"
                )));
            };
            // The note vector ranking hybrid search uses (the HNSW graph), the note itself
            // left out.
            let ranked: Vec<(String, f32)> = s
                .note_ranking(own.as_slice(), k + 1, None)?
                .into_iter()
                .filter(|(p, _)| p != path)
                .take(k)
                .collect();
            let paths: Vec<&str> = ranked.iter().map(|(p, _)| p.as_str()).collect();
            let mut titles = s.note_titles(&paths)?;
            Ok(ranked
                .into_iter()
                .map(|(path, score)| SimilarNote {
                    title: titles.remove(&path).unwrap_or_default(),
                    path,
                    score,
                })
                .collect())
        })
    }
}

/// What a database backend holds (see [`PgSearcher::status`]).
#[derive(Debug, Clone, serde::Serialize)]
pub struct PgStatus {
    /// The generation last published.
    pub generation: u64,
    /// Notes.
    pub notes: u64,
    /// Chunk rows.
    pub chunks: u64,
    /// Chunk rows with a vector.
    pub vectors: u64,
    /// The whole database's size on disk.
    pub database_bytes: u64,
    /// The embedding model of the published vectors, if any.
    pub embedding_model: Option<String>,
    /// The vault's folder on the writer's machine.
    pub vault_root: Option<String>,
}

/// One read-only transaction: what a search reads.
struct Snapshot<'a> {
    tx: RefCell<Transaction<'a>>,
    /// The embedding space of the vectors this snapshot sees.
    space: Option<EmbeddingSpace>,
}

/// Chunk keys as two columns (paths, ids), for `unnest`.
fn key_columns<'k>(keys: impl Iterator<Item = &'k ChunkKey>) -> (Vec<&'k str>, Vec<&'k str>) {
    keys.map(|k| (k.path.as_str(), k.id.as_str())).unzip()
}

/// BM25's collection statistics as the writer recorded them: chunks, and terms per field (title,
/// heading path, body).
fn bm25_statistics(tx: &mut Transaction<'_>) -> Result<(u64, [u64; 3]), SearchError> {
    let recorded: Option<String> = tx
        .query_opt("SELECT value FROM quire_meta WHERE key = 'bm25'", &[])
        .map_err(db)?
        .map(|r| r.get(0));
    let value: serde_json::Value = recorded
        .and_then(|v| serde_json::from_str(&v).ok())
        .unwrap_or_default();
    let docs = value["docs"].as_u64().unwrap_or(0);
    let mut tokens = [0u64; 3];
    for (field, total) in tokens.iter_mut().enumerate() {
        *total = value["tokens"][field].as_u64().unwrap_or(0);
    }
    Ok((docs, tokens))
}

fn db(e: postgres::Error) -> SearchError {
    SearchError::Backend(format!("PostgreSQL: {}", describe(&e)))
}

/// How far pgvector's HNSW search looks: enough candidates for `want` results (its limit is
/// 1,000).
fn ef_search(want: usize) -> String {
    format!(
        "SET LOCAL hnsw.ef_search = {}; SET LOCAL enable_indexscan = on;",
        want.clamp(64, 1000)
    )
}

impl Snapshot<'_> {
    /// The stored vectors of `keys`, in their order (`None` for a chunk without one).
    fn vectors(&self, keys: &[ChunkKey]) -> Result<Vec<Option<Vec<f32>>>, SearchError> {
        let (paths, ids) = key_columns(keys.iter());
        let rows = self
            .tx
            .borrow_mut()
            .query(
                "SELECT c.embedding FROM unnest($1::text[], $2::text[]) WITH ORDINALITY
                     AS k (path, id, n)
                 LEFT JOIN quire_chunks c ON c.path = k.path AND c.id = k.id
                 ORDER BY k.n",
                &[&paths, &ids],
            )
            .map_err(db)?;
        Ok(rows
            .into_iter()
            .map(|r| r.get::<_, Option<Vector>>(0).map(|v| v.to_vec()))
            .collect())
    }

    /// A value the writer recorded, as this snapshot sees it.
    fn meta_value(&self, key: &str) -> Result<Option<String>, SearchError> {
        Ok(self
            .tx
            .borrow_mut()
            .query_opt("SELECT value FROM quire_meta WHERE key = $1", &[&key])
            .map_err(db)?
            .map(|r| r.get(0)))
    }

    /// The rows of a nearest-neighbour query `sql` (parameters: the query vector, the allowed
    /// paths or NULL, the limit), with pgvector's search widened for `want` results.
    /// With `allowed` notes the graph is not used: the allowed notes' vectors are compared
    /// exactly (as the local index does), since a graph search past a selective filter can stop
    /// before it finds enough rows that pass.
    fn nearest(
        &self,
        sql: &str,
        query: &[f32],
        want: usize,
        allowed: Option<&HashSet<String>>,
    ) -> Result<Vec<postgres::Row>, SearchError> {
        let mut tx = self.tx.borrow_mut();
        if allowed.is_some() {
            tx.batch_execute("SET LOCAL enable_indexscan = off")
                .map_err(db)?;
        } else {
            tx.batch_execute(&ef_search(want)).map_err(db)?;
        }
        let query = Vector::from(query.to_vec());
        let allowed: Option<Vec<&String>> = allowed.map(|set| set.iter().collect());
        let limit = i64::try_from(want).unwrap_or(i64::MAX);
        tx.query(sql, &[&query, &allowed, &limit]).map_err(db)
    }

    fn pairs(&self, sql: &str) -> Result<Vec<(String, String)>, SearchError> {
        Ok(self
            .tx
            .borrow_mut()
            .query(sql, &[])
            .map_err(db)?
            .into_iter()
            .map(|r| (r.get(0), r.get(1)))
            .collect())
    }
}

impl Retrieval for Snapshot<'_> {
    fn generation(&self) -> Result<u64, SearchError> {
        let value: Option<String> = self
            .tx
            .borrow_mut()
            .query_opt("SELECT value FROM quire_meta WHERE key = 'generation'", &[])
            .map_err(db)?
            .map(|r| r.get(0));
        Ok(value.and_then(|v| v.parse().ok()).unwrap_or(0))
    }

    fn note_paths(&self) -> Result<Vec<String>, SearchError> {
        Ok(self
            .tx
            .borrow_mut()
            .query("SELECT path FROM quire_notes", &[])
            .map_err(db)?
            .into_iter()
            .map(|r| r.get(0))
            .collect())
    }

    fn tags(&self) -> Result<Vec<(String, String)>, SearchError> {
        self.pairs("SELECT path, tag FROM quire_tags")
    }

    fn properties(&self) -> Result<Vec<(String, String)>, SearchError> {
        self.pairs("SELECT path, properties FROM quire_notes")
    }

    fn note_titles(&self, paths: &[&str]) -> Result<HashMap<String, String>, SearchError> {
        Ok(self
            .tx
            .borrow_mut()
            .query(
                "SELECT path, title FROM quire_notes WHERE path = ANY ($1)",
                &[&paths],
            )
            .map_err(db)?
            .into_iter()
            .map(|r| (r.get(0), r.get(1)))
            .collect())
    }

    fn titled(&self, title: &str) -> Result<Vec<ChunkKey>, SearchError> {
        // The same letters without case as the local store's (ASCII `NOCASE`).
        let rows = self
            .tx
            .borrow_mut()
            .query(
                "SELECT DISTINCT ON (c.path) c.path, c.id
                 FROM quire_notes n JOIN quire_chunks c ON c.path = n.path
                 WHERE lower(n.title COLLATE \"C\") = lower($1::text COLLATE \"C\")
                 ORDER BY c.path, c.ordinal",
                &[&title],
            )
            .map_err(db)?;
        Ok(rows
            .into_iter()
            .map(|r| ChunkKey::new(r.get::<_, &str>(0), r.get::<_, &str>(1)))
            .collect())
    }

    fn chunks(&self, keys: &[&ChunkKey]) -> Result<Vec<Option<ChunkRow>>, SearchError> {
        let (paths, ids) = key_columns(keys.iter().copied());
        let rows = self
            .tx
            .borrow_mut()
            .query(
                "SELECT c.path, c.id, c.ordinal, c.heading_path, c.start_line, c.end_line,
                        c.content_hash, c.text
                 FROM unnest($1::text[], $2::text[]) AS k (path, id)
                 JOIN quire_chunks c ON c.path = k.path AND c.id = k.id",
                &[&paths, &ids],
            )
            .map_err(db)?;
        let mut found: HashMap<(String, String), ChunkRow> = rows
            .into_iter()
            .map(|r| {
                let row = ChunkRow {
                    note_path: r.get(0),
                    id: r.get(1),
                    ordinal: usize::try_from(r.get::<_, i32>(2)).unwrap_or_default(),
                    heading_path: serde_json::from_str(&r.get::<_, String>(3)).unwrap_or_default(),
                    start_line: usize::try_from(r.get::<_, i32>(4)).unwrap_or_default(),
                    end_line: usize::try_from(r.get::<_, i32>(5)).unwrap_or_default(),
                    content_hash: r.get(6),
                    text: r.get(7),
                };
                ((row.note_path.clone(), row.id.clone()), row)
            })
            .collect();
        Ok(keys
            .iter()
            .map(|k| found.remove(&(k.path.clone(), k.id.clone())))
            .collect())
    }

    /// BM25 as the local index scores it (see `quire_index::fulltext`): per field (title A,
    /// heading path B, body C in the `tsvector`), each query term's inverse document frequency
    /// over all chunks, its frequency in the chunk, the field's stored length against its average,
    /// times the field's boost; summed. The statistics are the writer's (`bm25` in `quire_meta`);
    /// the chunks holding any term come from the GIN index.
    fn lexical(
        &self,
        query: &str,
        want: usize,
        filter: &Filter,
        boosts: Boosts,
    ) -> Result<Vec<(ChunkKey, f32)>, SearchError> {
        let terms = text::query_terms(query);
        let Some(tsquery) = text::tsquery(query) else {
            return Ok(Vec::new());
        };
        let mut tx = self.tx.borrow_mut();
        let (docs, tokens) = bm25_statistics(&mut tx)?;
        if docs == 0 {
            return Ok(Vec::new());
        }
        let mut counted: Vec<(&str, usize)> = Vec::new();
        for term in &terms {
            match counted.iter_mut().find(|(t, _)| t == term) {
                Some((_, n)) => *n += 1,
                None => counted.push((term, 1)),
            }
        }
        // One row per (term, field) that is searched: a field without weight is not, as in
        // the local index.
        let mut rows: Vec<(String, String, i32, f64)> = Vec::new();
        let mut queries: Vec<String> = Vec::new();
        for (term, times) in &counted {
            for (field, boost) in [boosts.title, boosts.heading, boosts.body]
                .into_iter()
                .enumerate()
            {
                if boost <= 0.0 {
                    continue;
                }
                let weight = text::FIELD_WEIGHTS[field];
                queries.push(text::field_tsquery(term, weight));
                rows.push((
                    (*term).to_string(),
                    weight.to_string(),
                    field as i32 + 1,
                    f64::from(boost) * *times as f64,
                ));
            }
        }
        if rows.is_empty() {
            return Ok(Vec::new());
        }
        let freqs: Vec<i64> = tx
            .query(
                "SELECT (SELECT count(*) FROM quire_chunks WHERE tsv @@ CAST(w.q AS tsquery))
                 FROM unnest($1::text[]) WITH ORDINALITY AS w (q, n) ORDER BY w.n",
                &[&queries],
            )
            .map_err(db)?
            .into_iter()
            .map(|r| r.get(0))
            .collect();
        let (mut w_term, mut w_weight, mut w_field, mut w_factor, mut w_avg) =
            (Vec::new(), Vec::new(), Vec::new(), Vec::new(), Vec::new());
        for ((term, weight, field, boost), freq) in rows.into_iter().zip(freqs) {
            let idf = quire_index::fulltext::bm25_idf(u64::try_from(freq).unwrap_or(0), docs);
            let field_tokens = tokens[usize::try_from(field - 1).unwrap_or(0)];
            w_term.push(term);
            w_weight.push(weight);
            w_field.push(field);
            w_factor.push(boost * idf * (1.0 + quire_index::fulltext::BM25_K1));
            w_avg.push((field_tokens as f64 / docs as f64).max(f64::MIN_POSITIVE));
        }
        let folder = filter
            .folder
            .as_ref()
            .map(|f| f.trim_matches('/').to_string());
        let tag = filter
            .tag
            .as_ref()
            .map(|t| t.trim_start_matches('#').to_lowercase());
        let limit = i64::try_from(want).unwrap_or(i64::MAX);
        let (k1, b) = (
            quire_index::fulltext::BM25_K1,
            quire_index::fulltext::BM25_B,
        );
        let rows = tx
            .query(
                "SELECT c.path, c.id,
                        sum(w.factor * t.tf
                            / (t.tf + $9::float8 * (1 - $10::float8 + $10::float8 * c.norms[w.field] / w.avg)))::real
                          AS score
                 FROM quire_chunks c
                 CROSS JOIN LATERAL (
                    SELECT u.lexeme, x.weight, count(*)::float8 AS tf
                    FROM unnest(c.tsv) AS u, unnest(u.weights) AS x (weight)
                    WHERE u.lexeme = ANY ($2)
                    GROUP BY u.lexeme, x.weight) AS t
                 JOIN unnest($2::text[], $3::text[], $4::int[], $5::float8[], $6::float8[])
                    AS w (term, weight, field, factor, avg)
                   ON w.term = t.lexeme AND w.weight = t.weight
                 WHERE c.tsv @@ CAST($1::text AS tsquery)
                   AND ($7::text IS NULL OR $7 = ANY (c.folders))
                   AND ($8::text IS NULL OR $8 = ANY (c.tags))
                   AND ($12::text IS NULL OR c.path = $12)
                 GROUP BY c.path, c.id
                 ORDER BY score DESC, c.path, c.id LIMIT $11",
                &[
                    &tsquery, &w_term, &w_weight, &w_field, &w_factor, &w_avg, &folder, &tag,
                    &k1, &b, &limit, &filter.note,
                ],
            )
            .map_err(db)?;
        Ok(rows
            .into_iter()
            .map(|r| {
                (
                    ChunkKey::new(r.get::<_, &str>(0), r.get::<_, &str>(1)),
                    r.get::<_, f32>(2),
                )
            })
            .filter(|(_, score)| *score > 0.0)
            .collect())
    }

    fn semantic(
        &self,
        query: &[f32],
        want: usize,
        allowed: Option<&HashSet<String>>,
    ) -> Result<Vec<(ChunkKey, f32)>, SearchError> {
        let rows = self.nearest(
            "SELECT path, id, (1 - (embedding <=> $1))::real AS score FROM quire_chunks
             WHERE embedding IS NOT NULL AND ($2::text[] IS NULL OR path = ANY ($2))
             ORDER BY embedding <=> $1 LIMIT $3",
            query,
            want,
            allowed,
        )?;
        Ok(rows
            .into_iter()
            .map(|r| {
                (
                    ChunkKey::new(r.get::<_, &str>(0), r.get::<_, &str>(1)),
                    r.get::<_, f32>("score"),
                )
            })
            .collect())
    }

    fn note_ranking(
        &self,
        query: &[f32],
        want: usize,
        allowed: Option<&HashSet<String>>,
    ) -> Result<Vec<(String, f32)>, SearchError> {
        let rows = self.nearest(
            "SELECT path, (1 - (centroid <=> $1))::real AS score FROM quire_notes
             WHERE centroid IS NOT NULL AND ($2::text[] IS NULL OR path = ANY ($2))
             ORDER BY centroid <=> $1 LIMIT $3",
            query,
            want,
            allowed,
        )?;
        Ok(rows
            .into_iter()
            .map(|r| (r.get(0), r.get("score")))
            .collect())
    }

    fn first_chunks(&self, paths: &[String]) -> Result<Vec<ChunkKey>, SearchError> {
        let rows = self
            .tx
            .borrow_mut()
            .query(
                "SELECT DISTINCT ON (path) path, id FROM quire_chunks
                 WHERE path = ANY ($1) AND embedding IS NOT NULL ORDER BY path, seq",
                &[&paths],
            )
            .map_err(db)?;
        Ok(rows
            .into_iter()
            .map(|r| ChunkKey::new(r.get::<_, &str>(0), r.get::<_, &str>(1)))
            .collect())
    }
}

/// The database answering a question (`ask`, drafting): each call reads its own snapshot; the
/// passages are re-read from the vault's files and checked against their text hashes anyway.
impl AnswerIndex for PgSearcher {
    fn search(&self, request: &SearchRequest) -> Result<SearchResults, SearchError> {
        PgSearcher::search(self, request)
    }

    fn default_mode(&self) -> Result<Mode, SearchError> {
        Ok(PgSearcher::default_mode(self)?)
    }

    fn calibration(&self) -> Result<quire_embed::Calibration, SearchError> {
        self.snapshot(|s| {
            Ok(s.space
                .as_ref()
                .map_or(quire_embed::Calibration::E5_SMALL, |s| s.calibration()))
        })
    }

    fn mentions(&self, word: &str) -> Result<Option<bool>, SearchError> {
        // Each term on its own, as the local index asks it: a compound is held when every
        // part is in some chunk.
        let Some(terms) = text::term_queries(word) else {
            return Ok(None);
        };
        self.snapshot(|s| {
            let row =
                s.tx.borrow_mut()
                    .query_one(
                        "SELECT bool_and(EXISTS (SELECT 1 FROM quire_chunks \
                         WHERE tsv @@ CAST(t.q AS tsquery))) \
                         FROM unnest($1::text[]) AS t (q)",
                        &[&terms],
                    )
                    .map_err(db)?;
            Ok(Some(row.get::<_, Option<bool>>(0).unwrap_or(false)))
        })
    }

    fn generation(&self) -> Result<u64, SearchError> {
        self.snapshot(|s| s.generation())
    }

    fn notes(&self) -> Result<Vec<(String, String)>, SearchError> {
        self.snapshot(|s| s.pairs("SELECT path, title FROM quire_notes ORDER BY path"))
    }

    fn chunk(&self, path: &str, id: &str) -> Result<Option<ChunkRow>, SearchError> {
        let key = ChunkKey::new(path, id);
        self.snapshot(|s| Ok(s.chunks(&[&key])?.pop().flatten()))
    }

    fn note_chunks(&self, path: &str) -> Result<Vec<ChunkRow>, SearchError> {
        self.snapshot(|s| {
            let ids: Vec<String> =
                s.tx.borrow_mut()
                    .query(
                        "SELECT id FROM quire_chunks WHERE path = $1 ORDER BY seq",
                        &[&path],
                    )
                    .map_err(db)?
                    .into_iter()
                    .map(|r| r.get(0))
                    .collect();
            let keys: Vec<ChunkKey> = ids.iter().map(|id| ChunkKey::new(path, id)).collect();
            let refs: Vec<&ChunkKey> = keys.iter().collect();
            Ok(s.chunks(&refs)?.into_iter().flatten().collect())
        })
    }

    fn cosines(&self, query: &str, keys: &[ChunkKey]) -> Result<Vec<Option<f32>>, SearchError> {
        self.snapshot(|s| {
            let Ok(embedder) = self.embedder("comparing passages", s.space.as_ref()) else {
                return Ok(Vec::new());
            };
            let query = embedder.embed_query(query)?;
            Ok(s.vectors(keys)?
                .into_iter()
                .map(|v| v.map(|v| quire_embed::dot(&query, &v)))
                .collect())
        })
    }

    fn sentence_scores(
        &self,
        question: &str,
        sentences: &[&str],
    ) -> Result<Option<Vec<f32>>, SearchError> {
        self.snapshot(|s| {
            let Ok(embedder) = self.embedder("ranking sentences", s.space.as_ref()) else {
                return Ok(None);
            };
            Ok(Some(quire_search::score_sentences(
                embedder, question, sentences,
            )?))
        })
    }

    fn query_cosines(
        &self,
        texts: &[&str],
        keys: &[ChunkKey],
    ) -> Result<Option<quire_search::QueryCosines>, SearchError> {
        self.snapshot(|s| {
            let Ok(embedder) = self.embedder("weighing the question's words", s.space.as_ref())
            else {
                return Ok(None);
            };
            quire_search::query_cosines(
                &|text| Ok(embedder.embed_query(text)?),
                texts,
                &s.vectors(keys)?,
            )
        })
    }

    fn text_cosines(
        &self,
        texts: &[&str],
        keys: &[ChunkKey],
    ) -> Result<Option<quire_search::CosineRows>, SearchError> {
        self.snapshot(|s| {
            let Ok(embedder) = self.embedder("comparing sentences", s.space.as_ref()) else {
                return Ok(None);
            };
            let rows = s.vectors(keys)?;
            if texts.is_empty() || rows.iter().all(Option::is_none) {
                return Ok(None);
            }
            let vectors = embedder.embed_passages(texts)?;
            Ok(Some(quire_search::cosine_rows(&vectors, &rows)))
        })
    }
}
