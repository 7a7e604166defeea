//! The writer: what the local index holds, copied into the database as one generation.

use std::collections::{HashMap, HashSet};
use std::time::Instant;

use pgvector::Vector;
use postgres::Client;
use quire_embed::EmbeddingSpace;
use quire_index::FullTextDoc;
use quire_index::Store;
use quire_index::store::{ChunkRow, NoteRow};
use quire_index::sync::{SPACE_KEY, docs_with_chunks};
use quire_search::vectors::VectorMatrix;

use crate::{PgError, schema, text};

/// How to publish.
#[derive(Debug, Clone, Default)]
pub struct PublishOptions {
    /// Drop every quire table first (another embedding model, a new layout).
    pub rebuild: bool,
    /// The vault's folder on the writer's machine, recorded for readers' messages.
    pub vault_root: Option<String>,
}

/// What a publish did.
#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct PublishStats {
    /// Notes in the database afterwards.
    pub notes: usize,
    /// Notes new to the database.
    pub added: usize,
    /// Notes written again (their text, chunks or vectors changed).
    pub updated: usize,
    /// Notes removed.
    pub removed: usize,
    /// Chunk rows written.
    pub chunks_written: usize,
    /// Of those, rows written with a vector.
    pub vectors_written: usize,
    /// The generation the database holds now (the local index's).
    pub generation: u64,
    /// Wall time, milliseconds.
    pub millis: u64,
}

/// Copies the local index in `store` into the database as one transaction: notes whose
/// fingerprint (text, chunks, vectors) changed are replaced, notes gone are removed, and the
/// generation is the store's. Another writer holding the lock is [`PgError::Busy`]; a database
/// of another embedding space is [`PgError::SpaceMismatch`] unless `options.rebuild`.
pub fn publish(
    store: &Store,
    client: &mut Client,
    options: &PublishOptions,
) -> Result<PublishStats, PgError> {
    // Every read of the local index below sees one generation, whatever a sync commits
    // meanwhile (a watcher beside a `quire index`).
    store.pin_snapshot()?;
    let published = publish_pinned(store, client, options);
    store.release_snapshot();
    published
}

fn publish_pinned(
    store: &Store,
    client: &mut Client,
    options: &PublishOptions,
) -> Result<PublishStats, PgError> {
    let started = Instant::now();
    let space: Option<EmbeddingSpace> = store
        .meta(SPACE_KEY)?
        .and_then(|s| serde_json::from_str(&s).ok());
    let dimension = space.as_ref().map_or(DEFAULT_DIMENSION, |s| s.dimension);
    let local_space = space
        .as_ref()
        .and_then(|s| serde_json::to_string(s).ok())
        .unwrap_or_default();
    let generation = store.generation()?;

    let mut tx = client.transaction()?;
    let target = Target::open(&mut tx, options, dimension, &local_space)?;
    // The local index, grouped by note.
    let notes = store.notes()?;
    // Nothing changed since the last publish (the same generation, notes and vectors): done,
    // without reading the chunks, their text or the vectors.
    let digest = source_digest(store, &notes, generation, space.as_ref())?;
    if !options.rebuild && target.meta.get("source_digest") == Some(&digest) {
        tx.commit()?;
        return Ok(PublishStats {
            notes: notes.len(),
            generation: target.generation,
            millis: started.elapsed().as_millis() as u64,
            ..PublishStats::default()
        });
    }
    let plan = Plan::of(store, &mut tx, &notes, space.as_ref())?;
    let mut stats = PublishStats {
        removed: plan.removed,
        added: plan.added,
        updated: plan.updated,
        notes: notes.len(),
        generation,
        ..PublishStats::default()
    };
    // Read for the notes to write alone when they are few.
    let few = plan.write.len() * 4 < notes.len();
    let paths: Vec<&str> = plan.write.iter().map(|(n, _)| n.path.as_str()).collect();
    let rows = NoteRows::read(store, few.then_some(paths.as_slice()), space.as_ref())?;
    if !plan.replaced.is_empty() {
        tx.execute(
            "DELETE FROM quire_notes WHERE path = ANY($1)",
            &[&plan.replaced],
        )?;
    }
    rows.write(&mut tx, plan.write, &mut stats)?;
    if target.cold {
        // Built once over all the rows: far faster than growing the graphs row by row.
        tx.batch_execute("SET LOCAL maintenance_work_mem = '512MB'")?;
        tx.batch_execute(schema::INDEXES)?;
    }
    // A second local index of the vault (another machine, a rebuilt index) publishing after
    // the first counts on from the database's generation, never back.
    stats.generation = generation.max(target.generation + 1);
    let published = Published {
        dimension,
        generation: stats.generation,
        digest: &digest,
        space: &local_space,
        vault_root: options.vault_root.as_deref(),
    };
    published.record(&mut tx)?;
    quire_index::sync::failpoint("pg_before_commit");
    tx.commit()?;
    stats.millis = started.elapsed().as_millis() as u64;
    Ok(stats)
}

/// The database a publish writes into, as this transaction found it: locked for this writer,
/// its tables present, and checked to hold the same embedding space and vault.
struct Target {
    /// The database's generation before this publish (0 when new).
    generation: u64,
    /// No notes yet (a first publish, a rebuild): rows go in first, indexes after.
    cold: bool,
    /// `quire_meta` as stored.
    meta: HashMap<String, String>,
}

impl Target {
    fn open(
        tx: &mut postgres::Transaction<'_>,
        options: &PublishOptions,
        dimension: usize,
        local_space: &str,
    ) -> Result<Target, PgError> {
        let locked: bool = tx
            .query_one(
                "SELECT pg_try_advisory_xact_lock($1, hashtext(current_schema()))",
                &[&schema::WRITER_LOCK],
            )?
            .get(0);
        if !locked {
            return Err(PgError::Busy);
        }
        // The database's generation only moves forward, through rebuilds too: read it before
        // anything is dropped.
        let has_meta: bool = tx
            .query_one("SELECT to_regclass('quire_meta') IS NOT NULL", &[])?
            .get(0);
        let generation: u64 = if has_meta {
            tx.query_opt("SELECT value FROM quire_meta WHERE key = 'generation'", &[])?
                .and_then(|row| row.get::<_, String>(0).parse().ok())
                .unwrap_or(0)
        } else {
            0
        };
        if options.rebuild {
            tx.batch_execute(schema::DROP)?;
        }
        tx.batch_execute(&schema::tables(dimension))?;
        // An empty database (a first publish, a rebuild) gets its rows first and its indexes
        // after; later publishes keep the indexes and change few rows. No reader can see the
        // tables before this transaction commits, so building the indexes here blocks nobody.
        let cold: bool = !tx
            .query_one("SELECT EXISTS (SELECT 1 FROM quire_notes)", &[])?
            .get::<_, bool>(0);
        if !cold {
            tx.batch_execute(schema::INDEXES)?;
        }
        let meta: HashMap<String, String> = tx
            .query("SELECT key, value FROM quire_meta", &[])?
            .into_iter()
            .map(|r| (r.get(0), r.get(1)))
            .collect();
        check_space(&meta, dimension, local_space)?;
        // Another vault's index is never replaced by accident (a reader's server left watching
        // an empty folder, a second writer elsewhere): that takes a rebuild.
        if let (Some(stored), Some(ours)) = (meta.get("vault_root"), &options.vault_root)
            && stored != ours
            && !options.rebuild
        {
            return Err(PgError::OtherVault {
                stored: stored.clone(),
                ours: ours.clone(),
            });
        }
        Ok(Target {
            generation,
            cold,
            meta,
        })
    }
}

/// [`PgError::SpaceMismatch`] when the database holds vectors of another dimension, layout or
/// embedding space than the local index.
fn check_space(
    meta: &HashMap<String, String>,
    dimension: usize,
    local_space: &str,
) -> Result<(), PgError> {
    let stored_space = meta.get("space").cloned().unwrap_or_default();
    let mismatch = meta
        .get("dimension")
        .is_some_and(|d| *d != dimension.to_string())
        || meta
            .get("schema_version")
            .is_some_and(|v| v != schema::SCHEMA_VERSION)
        || (!stored_space.is_empty() && !local_space.is_empty() && stored_space != local_space);
    if !mismatch {
        return Ok(());
    }
    Err(PgError::SpaceMismatch {
        stored: if stored_space.is_empty() {
            format!(
                "dimension {}",
                meta.get("dimension").cloned().unwrap_or_default()
            )
        } else {
            stored_space
        },
        local: if local_space.is_empty() {
            format!("dimension {dimension}")
        } else {
            local_space.to_string()
        },
    })
}

/// Which notes a publish writes, decided from chunk ids, text hashes and which texts have
/// vectors, without reading any text or vector.
struct Plan<'n> {
    /// The notes to write, with their fingerprints.
    write: Vec<(&'n NoteRow, String)>,
    /// The paths whose rows go first: notes removed from the vault, and notes rewritten.
    replaced: Vec<String>,
    added: usize,
    updated: usize,
    removed: usize,
}

impl<'n> Plan<'n> {
    fn of(
        store: &Store,
        tx: &mut postgres::Transaction<'_>,
        notes: &'n [NoteRow],
        space: Option<&EmbeddingSpace>,
    ) -> Result<Plan<'n>, PgError> {
        let mut hashes: HashMap<String, Vec<(String, String)>> = HashMap::new();
        for (path, id, hash) in store.chunk_hashes()? {
            hashes.entry(path).or_default().push((id, hash));
        }
        let embedded = match space {
            Some(space) => store.embedded_hashes(&space.id())?,
            None => HashSet::new(),
        };
        let stored: HashMap<String, String> = tx
            .query("SELECT path, fingerprint FROM quire_notes", &[])?
            .into_iter()
            .map(|r| (r.get(0), r.get(1)))
            .collect();
        let local_paths: HashSet<&str> = notes.iter().map(|n| n.path.as_str()).collect();
        let mut replaced: Vec<String> = stored
            .keys()
            .filter(|p| !local_paths.contains(p.as_str()))
            .cloned()
            .collect();
        let removed = replaced.len();
        let (mut added, mut updated) = (0, 0);
        let mut write = Vec::new();
        for note in notes {
            let own = hashes
                .get(&note.path)
                .map(Vec::as_slice)
                .unwrap_or_default();
            let fp = fingerprint(note, own, &embedded);
            match stored.get(&note.path) {
                Some(old) if *old == fp => continue,
                Some(_) => {
                    updated += 1;
                    replaced.push(note.path.clone());
                }
                None => added += 1,
            }
            write.push((note, fp));
        }
        Ok(Plan {
            write,
            replaced,
            added,
            updated,
            removed,
        })
    }
}

/// Each chunk's (path, id) row in a [`VectorMatrix`].
type RowOf = HashMap<(String, String), usize>;

/// What the notes to write need from the local index: their chunks with full-text documents,
/// links, properties, vectors and note vectors.
struct NoteRows {
    properties: HashMap<String, String>,
    chunks: HashMap<String, Vec<(ChunkRow, FullTextDoc)>>,
    links: HashMap<String, Vec<quire_index::store::LinkRow>>,
    /// The chunk vectors, and each chunk's row in them.
    vectors: Option<(VectorMatrix, RowOf)>,
    centroids: HashMap<String, Option<Vec<f32>>>,
}

impl NoteRows {
    /// Read for the notes at `only` (all notes: `None`).
    fn read(
        store: &Store,
        only: Option<&[&str]>,
        space: Option<&EmbeddingSpace>,
    ) -> Result<NoteRows, PgError> {
        let properties: HashMap<String, String> = store.properties()?.into_iter().collect();
        let mut chunks: HashMap<String, Vec<(ChunkRow, FullTextDoc)>> = HashMap::new();
        for (c, d) in docs_with_chunks(store, only)? {
            chunks.entry(c.note_path.clone()).or_default().push((c, d));
        }
        let mut links: HashMap<String, Vec<quire_index::store::LinkRow>> = HashMap::new();
        for l in store.links(only)? {
            links.entry(l.note_path.clone()).or_default().push(l);
        }
        let (vectors, centroids) = match space {
            Some(space) => {
                let (keys, data) = match only {
                    Some(paths) => store.vectors_of_notes(&space.id(), space.dimension, paths)?,
                    None => store.vectors(&space.id(), space.dimension)?,
                };
                let matrix = VectorMatrix {
                    keys,
                    data,
                    dimension: space.dimension,
                };
                let centroids: HashMap<String, Option<Vec<f32>>> =
                    matrix.note_centroids().into_iter().collect();
                let rows: RowOf = matrix
                    .keys
                    .iter()
                    .cloned()
                    .enumerate()
                    .map(|(i, k)| (k, i))
                    .collect();
                (Some((matrix, rows)), centroids)
            }
            None => (None, HashMap::new()),
        };
        Ok(NoteRows {
            properties,
            chunks,
            links,
            vectors,
            centroids,
        })
    }

    fn vector_of(&self, path: &str, id: &str) -> Option<Vec<f32>> {
        let (matrix, rows) = self.vectors.as_ref()?;
        let i = *rows.get(&(path.to_string(), id.to_string()))?;
        Some(matrix.row(i).to_vec())
    }

    /// Writes the rows of `write` in batches (one statement of arrays per batch, not one round
    /// trip per row), counting chunks and vectors into `stats`.
    fn write(
        &self,
        tx: &mut postgres::Transaction<'_>,
        write: Vec<(&NoteRow, String)>,
        stats: &mut PublishStats,
    ) -> Result<(), PgError> {
        let mut batch = Batch::default();
        for (note, fp) in write {
            batch.note(
                note,
                fp,
                self.properties
                    .get(&note.path)
                    .cloned()
                    .unwrap_or_else(|| "{}".into()),
                self.centroids
                    .get(&note.path)
                    .cloned()
                    .flatten()
                    .map(Vector::from),
            );
            let own = self
                .chunks
                .get(&note.path)
                .map(Vec::as_slice)
                .unwrap_or_default();
            for (seq, (c, doc)) in own.iter().enumerate() {
                let embedding = self.vector_of(&c.note_path, &c.id).map(Vector::from);
                stats.vectors_written += usize::from(embedding.is_some());
                stats.chunks_written += 1;
                batch.chunk(c, seq, doc, embedding);
            }
            // A note's tags (lowercased, as the store keeps them) are on each of its chunks'
            // documents.
            for tag in own
                .first()
                .map(|(_, doc)| doc.tags.as_slice())
                .unwrap_or_default()
            {
                batch.tag(&note.path, tag);
            }
            for l in self
                .links
                .get(&note.path)
                .map(Vec::as_slice)
                .unwrap_or_default()
            {
                batch.link(l);
            }
            if batch.chunks.path.len() >= BATCH_ROWS {
                batch.flush(tx)?;
            }
        }
        batch.flush(tx)
    }
}

/// What a publish records in `quire_meta`, with BM25's collection statistics as the local
/// index keeps them (chunks, and terms per field).
struct Published<'a> {
    dimension: usize,
    generation: u64,
    digest: &'a str,
    space: &'a str,
    vault_root: Option<&'a str>,
}

impl Published<'_> {
    fn record(&self, tx: &mut postgres::Transaction<'_>) -> Result<(), PgError> {
        let totals = tx.query_one(
            "SELECT count(*), coalesce(sum(lengths[1]), 0), coalesce(sum(lengths[2]), 0),
                    coalesce(sum(lengths[3]), 0)
             FROM quire_chunks",
            &[],
        )?;
        let bm25 = serde_json::json!({
            "docs": totals.get::<_, i64>(0),
            "tokens": [totals.get::<_, i64>(1), totals.get::<_, i64>(2), totals.get::<_, i64>(3)],
        });
        let mut put_meta = |key: &str, value: &str| -> Result<(), PgError> {
            tx.execute(
                "INSERT INTO quire_meta (key, value) VALUES ($1, $2)
                 ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value",
                &[&key, &value],
            )?;
            Ok(())
        };
        put_meta("schema_version", schema::SCHEMA_VERSION)?;
        put_meta("dimension", &self.dimension.to_string())?;
        put_meta("generation", &self.generation.to_string())?;
        put_meta("source_digest", self.digest)?;
        put_meta("bm25", &bm25.to_string())?;
        if !self.space.is_empty() {
            put_meta("space", self.space)?;
        }
        if let Some(root) = self.vault_root {
            put_meta("vault_root", root)?;
        }
        Ok(())
    }
}

/// `text` fit for a PostgreSQL text column, which refuses NUL: each one becomes U+FFFD. The
/// vault's reader already leaves none (see `quire_vault::scan::decode_note`); this keeps one
/// that slipped through from failing every later publish.
fn no_nul(text: &str) -> String {
    if text.contains('\0') {
        text.replace('\0', "\u{FFFD}")
    } else {
        text.to_string()
    }
}

/// Chunk rows per insert statement.
const BATCH_ROWS: usize = 2_000;

/// Separates the items of a list sent as one text (folders, tags): not in any name a vault
/// can give (a control character).
const SEP: &str = "\u{1f}";

/// Rows waiting to be inserted, column by column (each column one array parameter).
#[derive(Default)]
struct Batch {
    notes: NoteColumns,
    chunks: ChunkColumns,
    tags: (Vec<String>, Vec<String>),
    links: LinkColumns,
}

#[derive(Default)]
struct NoteColumns {
    path: Vec<String>,
    title: Vec<String>,
    sha256: Vec<String>,
    fingerprint: Vec<String>,
    properties: Vec<String>,
    centroid: Vec<Option<Vector>>,
}

#[derive(Default)]
struct ChunkColumns {
    path: Vec<String>,
    id: Vec<String>,
    seq: Vec<i32>,
    ordinal: Vec<i32>,
    heading_path: Vec<String>,
    start_line: Vec<i32>,
    end_line: Vec<i32>,
    content_hash: Vec<String>,
    text: Vec<String>,
    tsv: Vec<String>,
    /// Terms in the title, heading path and body (BM25's field lengths), column by column.
    lengths: [Vec<i32>; 3],
    /// The same lengths as the local index stores them (see `stored_field_length`).
    norms: [Vec<f32>; 3],
    folders: Vec<String>,
    tags: Vec<String>,
    embedding: Vec<Option<Vector>>,
}

#[derive(Default)]
struct LinkColumns {
    path: Vec<String>,
    target: Vec<String>,
    subpath: Vec<Option<String>>,
    kind: Vec<String>,
    line: Vec<i32>,
}

impl Batch {
    fn note(
        &mut self,
        note: &quire_index::store::NoteRow,
        fingerprint: String,
        properties: String,
        centroid: Option<Vector>,
    ) {
        let n = &mut self.notes;
        n.path.push(note.path.clone());
        n.title.push(no_nul(&note.title));
        n.sha256.push(note.sha256.clone());
        n.fingerprint.push(fingerprint);
        n.properties.push(no_nul(&properties));
        n.centroid.push(centroid);
    }

    /// A chunk, the `seq`-th of its note.
    fn chunk(
        &mut self,
        c: &quire_index::store::ChunkRow,
        seq: usize,
        doc: &FullTextDoc,
        embedding: Option<Vector>,
    ) {
        let (tsv, lengths) = text::tsvector(&doc.title, &doc.headings, &doc.body);
        let tags = text::tag_terms(&doc.tags);
        let k = &mut self.chunks;
        for (field, length) in lengths.into_iter().enumerate() {
            k.lengths[field].push(i32::try_from(length).unwrap_or(i32::MAX));
            k.norms[field].push(quire_index::fulltext::stored_field_length(length) as f32);
        }
        k.path.push(c.note_path.clone());
        k.id.push(c.id.clone());
        k.seq.push(to_i32(seq));
        k.ordinal.push(to_i32(c.ordinal));
        k.heading_path.push(no_nul(
            &serde_json::to_string(&c.heading_path).unwrap_or_default(),
        ));
        k.start_line.push(to_i32(c.start_line));
        k.end_line.push(to_i32(c.end_line));
        k.content_hash.push(c.content_hash.clone());
        k.text.push(no_nul(&c.text));
        k.tsv.push(no_nul(&tsv));
        k.folders.push(text::folders(&c.note_path).join(SEP));
        k.tags.push(no_nul(&tags.join(SEP)));
        k.embedding.push(embedding);
    }

    fn tag(&mut self, path: &str, tag: &str) {
        self.tags.0.push(path.to_string());
        self.tags.1.push(no_nul(tag));
    }

    fn link(&mut self, l: &quire_index::store::LinkRow) {
        let k = &mut self.links;
        k.path.push(l.note_path.clone());
        k.target.push(no_nul(&l.target));
        k.subpath.push(l.subpath.as_deref().map(no_nul));
        k.kind.push(l.kind.clone());
        k.line.push(to_i32(l.line));
    }

    /// Inserts what is waiting (notes first: chunks, tags and links refer to them).
    fn flush(&mut self, tx: &mut postgres::Transaction<'_>) -> Result<(), PgError> {
        let b = std::mem::take(self);
        let n = &b.notes;
        if !n.path.is_empty() {
            tx.execute(
                "INSERT INTO quire_notes (path, title, sha256, fingerprint, properties, centroid)
                 SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[],
                                      $6::vector[])",
                &[
                    &n.path,
                    &n.title,
                    &n.sha256,
                    &n.fingerprint,
                    &n.properties,
                    &n.centroid,
                ],
            )?;
        }
        let c = &b.chunks;
        if !c.path.is_empty() {
            tx.execute(
                "INSERT INTO quire_chunks (path, id, ordinal, heading_path, start_line, end_line,
                    content_hash, text, tsv, lengths, norms, folders, tags, embedding, seq)
                 SELECT path, id, ordinal, heading_path, start_line, end_line, content_hash,
                        text, tsv::tsvector, ARRAY[la, lb, lc], ARRAY[na, nb, nc],
                        string_to_array(folders, $13), string_to_array(tags, $13), embedding, seq
                 FROM unnest($1::text[], $2::text[], $3::int[], $4::text[], $5::int[],
                             $6::int[], $7::text[], $8::text[], $9::text[], $10::text[],
                             $11::text[], $12::vector[], $14::int[], $15::int[], $16::int[],
                             $17::int[], $18::real[], $19::real[], $20::real[])
                   AS t (path, id, ordinal, heading_path, start_line, end_line, content_hash,
                         text, tsv, folders, tags, embedding, seq, la, lb, lc, na, nb, nc)",
                &[
                    &c.path,
                    &c.id,
                    &c.ordinal,
                    &c.heading_path,
                    &c.start_line,
                    &c.end_line,
                    &c.content_hash,
                    &c.text,
                    &c.tsv,
                    &c.folders,
                    &c.tags,
                    &c.embedding,
                    &SEP,
                    &c.seq,
                    &c.lengths[0],
                    &c.lengths[1],
                    &c.lengths[2],
                    &c.norms[0],
                    &c.norms[1],
                    &c.norms[2],
                ],
            )?;
        }
        if !b.tags.0.is_empty() {
            tx.execute(
                "INSERT INTO quire_tags (path, tag) SELECT * FROM unnest($1::text[], $2::text[])",
                &[&b.tags.0, &b.tags.1],
            )?;
        }
        let l = &b.links;
        if !l.path.is_empty() {
            tx.execute(
                "INSERT INTO quire_links (path, target, subpath, kind, line)
                 SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::int[])",
                &[&l.path, &l.target, &l.subpath, &l.kind, &l.line],
            )?;
        }
        Ok(())
    }
}

/// The vector size of a database published from an index without embeddings (the default
/// model's), so that vectors added later fit.
const DEFAULT_DIMENSION: usize = 384;

/// A number as a Postgres `integer` (line numbers and ordinals never come near its limit; a
/// larger one is stored as the limit rather than wrapped).
fn to_i32(n: usize) -> i32 {
    i32::try_from(n).unwrap_or(i32::MAX)
}

/// What the local index holds, in short: its generation, every note's path, title and file
/// hash, and how many vectors it has (vectors fill in after a first BM25-only index).
fn source_digest(
    store: &Store,
    notes: &[quire_index::store::NoteRow],
    generation: u64,
    space: Option<&EmbeddingSpace>,
) -> Result<String, PgError> {
    let mut h = blake3::Hasher::new();
    h.update(schema::SCHEMA_VERSION.as_bytes());
    h.update(text::TERMS_VERSION.as_bytes());
    h.update(&generation.to_le_bytes());
    if let Some(space) = space {
        h.update(space.id().as_bytes());
        h.update(&store.count_embeddings(&space.id())?.to_le_bytes());
    }
    for n in notes {
        for part in [&n.path, &n.title, &n.sha256] {
            h.update(part.as_bytes());
            h.update(b"\0");
        }
    }
    Ok(h.finalize().to_hex().to_string())
}

/// What decides whether a note is written again: its file's hash, its chunks (ids and text
/// hashes: a new chunker or settings change them without changing the file), and which chunks
/// have a vector (vectors fill in after a first BM25-only index).
fn fingerprint(
    note: &quire_index::store::NoteRow,
    chunks: &[(String, String)],
    embedded: &HashSet<String>,
) -> String {
    let mut h = blake3::Hasher::new();
    h.update(text::TERMS_VERSION.as_bytes());
    h.update(note.sha256.as_bytes());
    h.update(b"\0");
    h.update(note.title.as_bytes());
    for (id, hash) in chunks {
        h.update(b"\0");
        h.update(id.as_bytes());
        h.update(b"\0");
        h.update(hash.as_bytes());
        h.update(if embedded.contains(hash) { b"v" } else { b"-" });
    }
    h.finalize().to_hex()[..32].to_string()
}
