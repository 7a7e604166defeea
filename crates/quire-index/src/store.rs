//! The SQLite store: what quire derived from the vault (notes, chunks, tags, links), the expensive
//! parts (embeddings, keyed by embedding space and content hash), and the generation counter.
//! The full-text index is derived from this store and can always be rebuilt from it.

use std::path::Path;

use rusqlite::{Connection, OptionalExtension, params};
use serde::Serialize;

use crate::error::IndexError;

/// The schema version this build writes; older stores are migrated forward on open.
pub const SCHEMA_VERSION: i64 = 3;

const MIGRATIONS: &[&str] = &[
    // 1: the first schema.
    "CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
     CREATE TABLE notes (
        path TEXT PRIMARY KEY, title TEXT NOT NULL, mtime_ns TEXT NOT NULL, size INTEGER NOT NULL,
        sha256 TEXT NOT NULL, properties TEXT NOT NULL, daily_date TEXT, word_count INTEGER NOT NULL,
        generation INTEGER NOT NULL);
     CREATE TABLE chunks (
        note_path TEXT NOT NULL, id TEXT NOT NULL, ordinal INTEGER NOT NULL, heading_path TEXT NOT NULL,
        start_line INTEGER NOT NULL, end_line INTEGER NOT NULL, byte_start INTEGER NOT NULL,
        byte_end INTEGER NOT NULL, content_hash TEXT NOT NULL, text TEXT NOT NULL, token_count INTEGER NOT NULL,
        seq INTEGER NOT NULL,
        PRIMARY KEY (note_path, id));
     CREATE INDEX chunks_by_hash ON chunks(content_hash);
     CREATE TABLE tags (note_path TEXT NOT NULL, tag TEXT NOT NULL, line INTEGER NOT NULL);
     CREATE INDEX tags_by_note ON tags(note_path);
     CREATE TABLE links (note_path TEXT NOT NULL, target TEXT NOT NULL, subpath TEXT, kind TEXT NOT NULL,
        line INTEGER NOT NULL);
     CREATE INDEX links_by_note ON links(note_path);
     CREATE TABLE skipped (path TEXT PRIMARY KEY, reason TEXT NOT NULL, message TEXT NOT NULL);
     CREATE TABLE embeddings (space_id TEXT NOT NULL, content_hash TEXT NOT NULL, vector BLOB NOT NULL,
        PRIMARY KEY (space_id, content_hash));",
    // 2: the bytes a costly document (PDF, canvas) failed with, so they are not read again.
    "ALTER TABLE skipped ADD COLUMN sha256 TEXT;",
    // 3: notes by title, letters compared without case: every search asks whether its query is
    // a note's whole title (`first_chunks_titled`), which must not scan a large vault's notes.
    "CREATE INDEX IF NOT EXISTS notes_by_title ON notes(title COLLATE NOCASE);",
];

/// The first chunk of each note with a title (see [`Store::first_chunks_titled`]); found through
/// the `notes_by_title` index.
const TITLED: &str = "SELECT c.note_path, c.id FROM notes n JOIN chunks c ON c.note_path = n.path
     WHERE n.title = ?1 COLLATE NOCASE
       AND c.ordinal = (SELECT MIN(ordinal) FROM chunks WHERE note_path = n.path)
     ORDER BY n.path";

/// The tables [`Store::count`] counts (a closed set: no SQL is built from an argument).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Table {
    /// One row per indexed note.
    Notes,
    /// One row per chunk of an indexed note.
    Chunks,
    /// One row per stored vector: per embedding space and distinct chunk text, kept after the text
    /// is gone.
    Embeddings,
}

/// One note's row.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct NoteRow {
    /// Vault-relative path.
    pub path: String,
    /// The note's title.
    pub title: String,
    /// The file's modification time when indexed, in nanoseconds since the Unix epoch.
    pub mtime_ns: u128,
    /// The file's size when indexed, in bytes.
    pub size: u64,
    /// Lowercase hex sha256 of the file's bytes when indexed.
    pub sha256: String,
}

/// One chunk's row.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ChunkRow {
    /// Vault-relative path of its note.
    pub note_path: String,
    /// Stable id, unique within the note.
    pub id: String,
    /// Position of the chunk within its section, from 0.
    pub ordinal: usize,
    /// Texts of the headings above the chunk, outermost first.
    pub heading_path: Vec<String>,
    /// First line, 1-based.
    pub start_line: usize,
    /// Last line, inclusive.
    pub end_line: usize,
    /// blake3 of `text`, 32 hex digits: the key of its vectors.
    pub content_hash: String,
    /// What was embedded and indexed: the context line (title, headings), a blank line, the body.
    pub text: String,
}

/// Reads a chunk row selected as `note_path, id, ordinal, heading_path, start_line, end_line,
/// content_hash, text`.
fn chunk_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<ChunkRow> {
    let heading: String = r.get(3)?;
    Ok(ChunkRow {
        note_path: r.get(0)?,
        id: r.get(1)?,
        ordinal: r.get::<_, i64>(2)? as usize,
        heading_path: serde_json::from_str(&heading).unwrap_or_default(),
        start_line: r.get::<_, i64>(4)? as usize,
        end_line: r.get::<_, i64>(5)? as usize,
        content_hash: r.get(6)?,
        text: r.get(7)?,
    })
}

/// A link of the store (see [`Store::links`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LinkRow {
    /// The note the link is in.
    pub note_path: String,
    /// The target as written (not resolved).
    pub target: String,
    /// The heading or block after `#`, if any.
    pub subpath: Option<String>,
    /// `wikilink`, `embed`, `markdown`, …
    pub kind: String,
    /// The line it is on, 1-based.
    pub line: usize,
}

/// Chunk keys (note path, chunk id) and their vectors as one row-major matrix.
pub type ChunkVectors = (Vec<(String, String)>, Vec<f32>);

/// The store. One writer at a time (see [`crate::lock`]); readers may open it concurrently (WAL).
pub struct Store {
    conn: Connection,
}

fn db_err(e: rusqlite::Error) -> IndexError {
    IndexError::Store { source: e }
}

impl Store {
    /// Opens (creating and migrating as needed) the store at `path`.
    pub fn open(path: &Path) -> Result<Store, IndexError> {
        let conn = Connection::open(path).map_err(db_err)?;
        conn.pragma_update(None, "journal_mode", "WAL")
            .map_err(db_err)?;
        conn.pragma_update(None, "synchronous", "NORMAL")
            .map_err(db_err)?;
        conn.busy_timeout(std::time::Duration::from_secs(10))
            .map_err(db_err)?;
        let mut store = Store { conn };
        store.migrate()?;
        Ok(store)
    }

    fn migrate(&mut self) -> Result<(), IndexError> {
        let version: i64 = self
            .conn
            .pragma_query_value(None, "user_version", |r| r.get(0))
            .map_err(db_err)?;
        if version > SCHEMA_VERSION {
            return Err(IndexError::NewerSchema {
                found: version,
                supported: SCHEMA_VERSION,
            });
        }
        for (i, sql) in MIGRATIONS.iter().enumerate().skip(version as usize) {
            let tx = self.conn.transaction().map_err(db_err)?;
            tx.execute_batch(sql).map_err(db_err)?;
            tx.pragma_update(None, "user_version", (i + 1) as i64)
                .map_err(db_err)?;
            tx.commit().map_err(db_err)?;
        }
        Ok(())
    }

    /// The value stored under `key` in the meta table (`generation`, `vault_root`,
    /// `embedding_space`, …); `None` when unset.
    pub fn meta(&self, key: &str) -> Result<Option<String>, IndexError> {
        self.conn
            .query_row("SELECT value FROM meta WHERE key = ?1", [key], |r| r.get(0))
            .optional()
            .map_err(db_err)
    }

    /// Opens a read transaction that lasts as long as this connection: every later read sees
    /// the store as it is now, whatever syncs commit meanwhile (SQLite WAL snapshot isolation).
    /// A server pins each searcher so that a search reads one generation from start to end,
    /// and swaps in a new searcher after each sync. Use it only on a store that reads.
    pub fn pin_snapshot(&self) -> Result<u64, IndexError> {
        self.conn.execute_batch("BEGIN DEFERRED").map_err(db_err)?;
        // The first read takes the snapshot.
        self.generation()
    }

    /// Ends a [`Store::pin_snapshot`]: later reads see what syncs committed (nothing happens
    /// when none is pinned).
    pub fn release_snapshot(&self) {
        let _ = self.conn.execute_batch("COMMIT");
    }

    /// The last committed generation (0 for a new store).
    pub fn generation(&self) -> Result<u64, IndexError> {
        Ok(self
            .meta("generation")?
            .and_then(|g| g.parse().ok())
            .unwrap_or(0))
    }

    /// Every note's path, mtime, size and sha256.
    pub fn notes(&self) -> Result<Vec<NoteRow>, IndexError> {
        let mut stmt = self
            .conn
            .prepare("SELECT path, title, mtime_ns, size, sha256 FROM notes ORDER BY path")
            .map_err(db_err)?;
        let rows = stmt.query_map([], note_row).map_err(db_err)?;
        rows.collect::<Result<_, _>>().map_err(db_err)
    }

    /// The notes at these paths (those the index has), in the order asked.
    pub fn notes_at(&self, paths: &[String]) -> Result<Vec<NoteRow>, IndexError> {
        let mut stmt = self
            .conn
            .prepare_cached("SELECT path, title, mtime_ns, size, sha256 FROM notes WHERE path = ?1")
            .map_err(db_err)?;
        let mut out = Vec::new();
        for path in paths {
            let row = stmt
                .query_row([path], note_row)
                .optional()
                .map_err(db_err)?;
            out.extend(row);
        }
        Ok(out)
    }

    /// Chunks of one note, or of every note (`None`), in note order then document order.
    pub fn chunks(&self, note_path: Option<&str>) -> Result<Vec<ChunkRow>, IndexError> {
        let sql =
            "SELECT note_path, id, ordinal, heading_path, start_line, end_line, content_hash, text
                   FROM chunks WHERE ?1 IS NULL OR note_path = ?1 ORDER BY note_path, seq";
        let mut stmt = self.conn.prepare(sql).map_err(db_err)?;
        let rows = stmt.query_map([note_path], chunk_row).map_err(db_err)?;
        rows.collect::<Result<_, _>>().map_err(db_err)
    }

    /// Every chunk's identity and text hash, (note path, id, content hash), in the order of
    /// [`Store::chunks`], without the text.
    pub fn chunk_hashes(&self) -> Result<Vec<(String, String, String)>, IndexError> {
        let mut stmt = self
            .conn
            .prepare("SELECT note_path, id, content_hash FROM chunks ORDER BY note_path, seq")
            .map_err(db_err)?;
        let rows = stmt
            .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
            .map_err(db_err)?;
        rows.collect::<Result<_, _>>().map_err(db_err)
    }

    /// The content hashes that have a vector in `space_id`.
    pub fn embedded_hashes(
        &self,
        space_id: &str,
    ) -> Result<std::collections::HashSet<String>, IndexError> {
        let mut stmt = self
            .conn
            .prepare("SELECT content_hash FROM embeddings WHERE space_id = ?1")
            .map_err(db_err)?;
        let rows = stmt.query_map([space_id], |r| r.get(0)).map_err(db_err)?;
        rows.collect::<Result<_, _>>().map_err(db_err)
    }

    /// One chunk by note path and id.
    pub fn chunk(&self, note_path: &str, id: &str) -> Result<Option<ChunkRow>, IndexError> {
        let sql =
            "SELECT note_path, id, ordinal, heading_path, start_line, end_line, content_hash, text
                   FROM chunks WHERE note_path = ?1 AND id = ?2";
        self.conn
            .prepare_cached(sql)
            .and_then(|mut stmt| stmt.query_row([note_path, id], chunk_row).optional())
            .map_err(db_err)
    }

    /// The title of one note, if the store has it (a search looks up only the notes it
    /// returns, rather than loading every note's row).
    pub fn note_title(&self, path: &str) -> Result<Option<String>, IndexError> {
        self.conn
            .prepare_cached("SELECT title FROM notes WHERE path = ?1")
            .and_then(|mut stmt| stmt.query_row([path], |r| r.get(0)).optional())
            .map_err(db_err)
    }

    /// The first chunk (path, chunk id) of each note whose title is `title`, letters compared
    /// without case (ASCII letters: SQLite's `NOCASE`), in path order. Notes without a chunk are
    /// left out.
    pub fn first_chunks_titled(&self, title: &str) -> Result<Vec<(String, String)>, IndexError> {
        let mut stmt = self.conn.prepare_cached(TITLED).map_err(db_err)?;
        let rows = stmt
            .query_map([title], |r| Ok((r.get(0)?, r.get(1)?)))
            .map_err(db_err)?;
        rows.collect::<Result<_, _>>().map_err(db_err)
    }

    /// Tags of every note, lowercased, as (path, tag) pairs.
    pub fn tags(&self) -> Result<Vec<(String, String)>, IndexError> {
        self.string_pairs("SELECT note_path, tag FROM tags")
    }

    /// The rows of a query that selects two text columns (a constant: nothing is built from
    /// arguments).
    fn string_pairs(&self, sql: &'static str) -> Result<Vec<(String, String)>, IndexError> {
        let mut stmt = self.conn.prepare(sql).map_err(db_err)?;
        let rows = stmt
            .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
            .map_err(db_err)?;
        rows.collect::<Result<_, _>>().map_err(db_err)
    }

    /// The links of the notes at `paths` (`None`: every note) as indexed, by note and line.
    pub fn links(&self, paths: Option<&[&str]>) -> Result<Vec<LinkRow>, IndexError> {
        const COLUMNS: &str = "SELECT note_path, target, subpath, kind, line FROM links";
        let row = |r: &rusqlite::Row<'_>| {
            Ok(LinkRow {
                note_path: r.get(0)?,
                target: r.get(1)?,
                subpath: r.get(2)?,
                kind: r.get(3)?,
                line: r.get::<_, i64>(4)? as usize,
            })
        };
        let Some(paths) = paths else {
            let mut stmt = self
                .conn
                .prepare(&format!("{COLUMNS} ORDER BY note_path, line"))
                .map_err(db_err)?;
            let rows = stmt.query_map([], row).map_err(db_err)?;
            return rows.collect::<Result<_, _>>().map_err(db_err);
        };
        // One note at a time, through the index on note_path.
        let mut stmt = self
            .conn
            .prepare_cached(&format!("{COLUMNS} WHERE note_path = ?1 ORDER BY line"))
            .map_err(db_err)?;
        let mut links = Vec::new();
        for path in paths {
            let rows = stmt.query_map([path], row).map_err(db_err)?;
            for link in rows {
                links.push(link.map_err(db_err)?);
            }
        }
        Ok(links)
    }

    /// Every note's properties, as (path, JSON object text).
    pub fn properties(&self) -> Result<Vec<(String, String)>, IndexError> {
        self.string_pairs("SELECT path, properties FROM notes")
    }

    /// The `type` property of every note that has a string one.
    pub fn note_types(&self) -> Result<std::collections::HashMap<String, String>, IndexError> {
        let mut stmt = self
            .conn
            .prepare("SELECT path, properties FROM notes")
            .map_err(db_err)?;
        let rows = stmt
            .query_map([], |r| Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?)))
            .map_err(db_err)?;
        let mut types = std::collections::HashMap::new();
        for row in rows {
            let (path, properties) = row.map_err(db_err)?;
            let value: serde_json::Value = serde_json::from_str(&properties).unwrap_or_default();
            if let Some(t) = value.get("type").and_then(|t| t.as_str()) {
                types.insert(path, t.to_string());
            }
        }
        Ok(types)
    }

    /// Documents whose reading failed, by path: the sha256 of the bytes that failed and the
    /// reason (as stored JSON).
    pub fn failed_documents(
        &self,
    ) -> Result<std::collections::HashMap<String, (String, String)>, IndexError> {
        let mut statement = self
            .conn
            .prepare("SELECT path, sha256, reason FROM skipped WHERE sha256 IS NOT NULL")
            .map_err(db_err)?;
        let rows = statement
            .query_map([], |r| Ok((r.get(0)?, (r.get(1)?, r.get(2)?))))
            .map_err(db_err)?;
        rows.collect::<Result<_, _>>().map_err(db_err)
    }

    /// Files skipped by the last sync, with reasons.
    pub fn skipped(&self) -> Result<Vec<(String, String)>, IndexError> {
        self.string_pairs("SELECT path, message FROM skipped ORDER BY path")
    }

    /// The number of rows of `table`.
    pub fn count(&self, table: Table) -> Result<u64, IndexError> {
        let sql = match table {
            Table::Notes => "SELECT COUNT(*) FROM notes",
            Table::Chunks => "SELECT COUNT(*) FROM chunks",
            Table::Embeddings => "SELECT COUNT(*) FROM embeddings",
        };
        self.conn
            .query_row(sql, [], |r| r.get::<_, i64>(0))
            .map(|n| n as u64)
            .map_err(db_err)
    }

    /// Distinct chunk texts (by content hash) that have no embedding in `space_id` yet.
    pub fn missing_embeddings(&self, space_id: &str) -> Result<Vec<(String, String)>, IndexError> {
        let mut stmt = self
            .conn
            .prepare(
                "SELECT c.content_hash, MIN(c.text) FROM chunks c
                 LEFT JOIN embeddings e ON e.space_id = ?1 AND e.content_hash = c.content_hash
                 WHERE e.content_hash IS NULL GROUP BY c.content_hash ORDER BY c.content_hash",
            )
            .map_err(db_err)?;
        let rows = stmt
            .query_map([space_id], |r| Ok((r.get(0)?, r.get(1)?)))
            .map_err(db_err)?;
        rows.collect::<Result<_, _>>().map_err(db_err)
    }

    /// Stores vectors (little-endian f32) in one transaction; already present ones are kept.
    pub fn put_embeddings(
        &mut self,
        space_id: &str,
        vectors: &[(String, Vec<f32>)],
    ) -> Result<(), IndexError> {
        let tx = self.conn.transaction().map_err(db_err)?;
        {
            let mut stmt = tx
                .prepare_cached("INSERT OR IGNORE INTO embeddings (space_id, content_hash, vector) VALUES (?1, ?2, ?3)")
                .map_err(db_err)?;
            for (hash, v) in vectors {
                let bytes: Vec<u8> = v.iter().flat_map(|x| x.to_le_bytes()).collect();
                stmt.execute(params![space_id, hash, bytes])
                    .map_err(db_err)?;
            }
        }
        tx.commit().map_err(db_err)
    }

    /// Every chunk that has a vector in `space_id`: its (note path, chunk id) and the vectors as one
    /// contiguous row-major matrix of `dimension` columns.
    pub fn vectors(&self, space_id: &str, dimension: usize) -> Result<ChunkVectors, IndexError> {
        let mut stmt = self
            .conn
            .prepare(
                "SELECT c.note_path, c.id, e.vector FROM chunks c
                 JOIN embeddings e ON e.space_id = ?1 AND e.content_hash = c.content_hash
                 ORDER BY c.note_path, c.seq",
            )
            .map_err(db_err)?;
        let mut keys = Vec::new();
        let mut matrix = Vec::new();
        let mut rows = stmt.query([space_id]).map_err(db_err)?;
        while let Some(row) = rows.next().map_err(db_err)? {
            let bytes: Vec<u8> = row.get(2).map_err(db_err)?;
            if bytes.len() != dimension * 4 {
                continue;
            }
            keys.push((row.get(0).map_err(db_err)?, row.get(1).map_err(db_err)?));
            matrix.extend(
                bytes
                    .chunks_exact(4)
                    .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]])),
            );
        }
        Ok((keys, matrix))
    }

    /// The embedding row (its SQLite rowid) last added in `space_id`, with its content hash;
    /// `None` when the space has none. Embedding rows are only ever added (a cache), so rowids
    /// name rows for good: the approximate index ([`crate::ann`]) keys its vectors by them.
    pub fn last_embedding(&self, space_id: &str) -> Result<Option<(i64, String)>, IndexError> {
        // Scanning the table backwards by rowid stops at the first row of the space: O(1) when
        // the store holds one space, as it almost always does.
        self.conn
            .prepare_cached(
                "SELECT rowid, content_hash FROM embeddings NOT INDEXED
                 WHERE space_id = ?1 ORDER BY rowid DESC LIMIT 1",
            )
            .and_then(|mut stmt| {
                stmt.query_row([space_id], |r| Ok((r.get(0)?, r.get(1)?)))
                    .optional()
            })
            .map_err(db_err)
    }

    /// How many vectors `space_id` has.
    pub fn count_embeddings(&self, space_id: &str) -> Result<usize, IndexError> {
        self.conn
            .prepare_cached("SELECT COUNT(*) FROM embeddings WHERE space_id = ?1")
            .and_then(|mut stmt| stmt.query_row([space_id], |r| r.get::<_, i64>(0)))
            .map(|n| n as usize)
            .map_err(db_err)
    }

    /// The content hash of the embedding row `rowid` in `space_id`, if there is one.
    pub fn embedding_hash(&self, space_id: &str, rowid: i64) -> Result<Option<String>, IndexError> {
        self.conn
            .prepare_cached(
                "SELECT content_hash FROM embeddings WHERE rowid = ?1 AND space_id = ?2",
            )
            .and_then(|mut stmt| {
                stmt.query_row(params![rowid, space_id], |r| r.get(0))
                    .optional()
            })
            .map_err(db_err)
    }

    /// Calls `each` with the rowid and vector of every embedding row of `space_id` whose rowid
    /// is in `after < rowid <= up_to`, in rowid order, without holding them all in memory.
    /// Rows whose length is not `dimension` values are passed over.
    pub fn each_embedding(
        &self,
        space_id: &str,
        dimension: usize,
        (after, up_to): (i64, i64),
        mut each: impl FnMut(i64, &[f32]),
    ) -> Result<(), IndexError> {
        let mut stmt = self
            .conn
            .prepare_cached(
                "SELECT rowid, vector FROM embeddings
                 WHERE rowid > ?1 AND rowid <= ?2 AND space_id = ?3 ORDER BY rowid",
            )
            .map_err(db_err)?;
        let mut rows = stmt
            .query(params![after, up_to, space_id])
            .map_err(db_err)?;
        let mut vector = Vec::with_capacity(dimension);
        while let Some(row) = rows.next().map_err(db_err)? {
            let rowid: i64 = row.get(0).map_err(db_err)?;
            let bytes = row.get_ref(1).map_err(db_err)?.as_blob().map_err(|e| {
                db_err(rusqlite::Error::FromSqlConversionFailure(
                    1,
                    rusqlite::types::Type::Blob,
                    Box::new(e),
                ))
            })?;
            if bytes.len() != dimension * 4 {
                continue;
            }
            vector.clear();
            vector.extend(
                bytes
                    .chunks_exact(4)
                    .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]])),
            );
            each(rowid, &vector);
        }
        Ok(())
    }

    /// The vectors of the embedding rows `rowids` of `space_id` (rows that are not there, or
    /// not `dimension` long, are left out), with their content hashes.
    pub fn embeddings_by_rowid(
        &self,
        space_id: &str,
        dimension: usize,
        rowids: &[i64],
    ) -> Result<Vec<(i64, String, Vec<f32>)>, IndexError> {
        let mut stmt = self
            .conn
            .prepare_cached(
                "SELECT content_hash, vector FROM embeddings WHERE rowid = ?1 AND space_id = ?2",
            )
            .map_err(db_err)?;
        let mut out = Vec::with_capacity(rowids.len());
        for &rowid in rowids {
            let row: Option<(String, Vec<u8>)> = stmt
                .query_row(params![rowid, space_id], |r| Ok((r.get(0)?, r.get(1)?)))
                .optional()
                .map_err(db_err)?;
            if let Some((hash, bytes)) = row
                && bytes.len() == dimension * 4
            {
                let vector = bytes
                    .chunks_exact(4)
                    .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
                    .collect();
                out.push((rowid, hash, vector));
            }
        }
        Ok(out)
    }

    /// The stored vector of one chunk in `space_id`, if it has one of `dimension` values.
    pub fn chunk_vector(
        &self,
        space_id: &str,
        dimension: usize,
        note_path: &str,
        id: &str,
    ) -> Result<Option<Vec<f32>>, IndexError> {
        let bytes: Option<Vec<u8>> = self
            .conn
            .prepare_cached(
                "SELECT e.vector FROM chunks c
                 JOIN embeddings e ON e.space_id = ?1 AND e.content_hash = c.content_hash
                 WHERE c.note_path = ?2 AND c.id = ?3",
            )
            .and_then(|mut stmt| {
                stmt.query_row(params![space_id, note_path, id], |r| r.get(0))
                    .optional()
            })
            .map_err(db_err)?;
        Ok(bytes.filter(|b| b.len() == dimension * 4).map(|b| {
            b.chunks_exact(4)
                .map(|x| f32::from_le_bytes([x[0], x[1], x[2], x[3]]))
                .collect()
        }))
    }

    /// The chunks (note path, chunk id) whose text has `content_hash`, in note then document
    /// order.
    pub fn chunks_with_hash(
        &self,
        content_hash: &str,
    ) -> Result<Vec<(String, String)>, IndexError> {
        let mut stmt = self
            .conn
            .prepare_cached(
                "SELECT note_path, id FROM chunks WHERE content_hash = ?1 ORDER BY note_path, seq",
            )
            .map_err(db_err)?;
        let rows = stmt
            .query_map([content_hash], |r| Ok((r.get(0)?, r.get(1)?)))
            .map_err(db_err)?;
        rows.collect::<Result<_, _>>().map_err(db_err)
    }

    /// The stored vectors of the chunks of the notes `paths` in `space_id`, as
    /// [`Store::vectors`] gives them for the whole index.
    pub fn vectors_of_notes(
        &self,
        space_id: &str,
        dimension: usize,
        paths: &[&str],
    ) -> Result<ChunkVectors, IndexError> {
        let mut stmt = self
            .conn
            .prepare_cached(
                "SELECT c.id, e.vector FROM chunks c
                 JOIN embeddings e ON e.space_id = ?1 AND e.content_hash = c.content_hash
                 WHERE c.note_path = ?2 ORDER BY c.seq",
            )
            .map_err(db_err)?;
        let mut keys = Vec::new();
        let mut matrix = Vec::new();
        for path in paths {
            let mut rows = stmt.query(params![space_id, path]).map_err(db_err)?;
            while let Some(row) = rows.next().map_err(db_err)? {
                let bytes: Vec<u8> = row.get(1).map_err(db_err)?;
                if bytes.len() != dimension * 4 {
                    continue;
                }
                keys.push((path.to_string(), row.get(0).map_err(db_err)?));
                matrix.extend(
                    bytes
                        .chunks_exact(4)
                        .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]])),
                );
            }
        }
        Ok((keys, matrix))
    }

    /// Starts the one transaction a sync writes in.
    pub fn begin(&mut self) -> Result<StoreTransaction<'_>, IndexError> {
        Ok(StoreTransaction {
            tx: self.conn.transaction().map_err(db_err)?,
        })
    }
}

/// A sync's writes, committed together with the new generation or not at all.
pub struct StoreTransaction<'c> {
    tx: rusqlite::Transaction<'c>,
}

impl StoreTransaction<'_> {
    /// Removes a note and everything derived from it.
    pub fn delete_note(&self, path: &str) -> Result<(), IndexError> {
        for sql in [
            "DELETE FROM chunks WHERE note_path = ?1",
            "DELETE FROM tags WHERE note_path = ?1",
            "DELETE FROM links WHERE note_path = ?1",
            "DELETE FROM notes WHERE path = ?1",
        ] {
            self.tx.execute(sql, [path]).map_err(db_err)?;
        }
        Ok(())
    }

    /// Records that a note's file changed time but not content.
    pub fn touch_note(&self, path: &str, mtime_ns: u128, size: u64) -> Result<(), IndexError> {
        self.tx
            .execute(
                "UPDATE notes SET mtime_ns = ?2, size = ?3 WHERE path = ?1",
                params![path, mtime_ns.to_string(), size as i64],
            )
            .map_err(db_err)?;
        Ok(())
    }

    /// Writes a note with its chunks, tags and links (replacing what was there). On an error
    /// nothing of this call is kept (a savepoint), and the rest of the transaction stands.
    pub fn put_note(
        &self,
        note: &quire_vault::Note,
        chunks: &[quire_vault::Chunk],
        mtime_ns: u128,
        size: u64,
        generation: u64,
    ) -> Result<(), IndexError> {
        self.tx
            .execute_batch("SAVEPOINT quire_note")
            .map_err(db_err)?;
        match self.put_note_rows(note, chunks, mtime_ns, size, generation) {
            Ok(()) => self.tx.execute_batch("RELEASE quire_note").map_err(db_err),
            Err(err) => {
                self.tx
                    .execute_batch("ROLLBACK TO quire_note; RELEASE quire_note")
                    .map_err(db_err)?;
                Err(err)
            }
        }
    }

    fn put_note_rows(
        &self,
        note: &quire_vault::Note,
        chunks: &[quire_vault::Chunk],
        mtime_ns: u128,
        size: u64,
        generation: u64,
    ) -> Result<(), IndexError> {
        self.delete_note(&note.path)?;
        let properties = serde_json::to_string(&note.properties).unwrap_or_else(|_| "{}".into());
        self.tx
            .execute(
                "INSERT INTO notes (path, title, mtime_ns, size, sha256, properties, daily_date, word_count, generation)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
                params![
                    note.path,
                    note.title,
                    mtime_ns.to_string(),
                    size as i64,
                    note.sha256,
                    properties,
                    note.daily_date.map(|d| d.to_string()),
                    note.word_count as i64,
                    generation as i64
                ],
            )
            .map_err(db_err)?;
        let mut insert_chunk = self
            .tx
            .prepare_cached(
                "INSERT INTO chunks (note_path, id, ordinal, heading_path, start_line, end_line, byte_start, byte_end,
                 content_hash, text, token_count, seq) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)",
            )
            .map_err(db_err)?;
        for (seq, c) in chunks.iter().enumerate() {
            insert_chunk
                .execute(params![
                    c.note_path,
                    c.id,
                    c.ordinal as i64,
                    serde_json::to_string(&c.heading_path).unwrap_or_else(|_| "[]".into()),
                    c.start_line as i64,
                    c.end_line as i64,
                    c.byte_range.start as i64,
                    c.byte_range.end as i64,
                    c.content_hash,
                    c.text,
                    c.token_count as i64,
                    seq as i64
                ])
                .map_err(db_err)?;
        }
        let mut insert_tag = self
            .tx
            .prepare_cached("INSERT INTO tags (note_path, tag, line) VALUES (?1, ?2, ?3)")
            .map_err(db_err)?;
        for t in &note.tags {
            insert_tag
                .execute(params![note.path, t.name.to_lowercase(), t.line as i64])
                .map_err(db_err)?;
        }
        let mut insert_link = self
            .tx
            .prepare_cached("INSERT INTO links (note_path, target, subpath, kind, line) VALUES (?1, ?2, ?3, ?4, ?5)")
            .map_err(db_err)?;
        for l in &note.links {
            let kind = serde_json::to_value(l.kind)
                .ok()
                .and_then(|v| v.as_str().map(String::from))
                .unwrap_or_default();
            insert_link
                .execute(params![note.path, l.target, l.subpath, kind, l.line as i64])
                .map_err(db_err)?;
        }
        Ok(())
    }

    /// Replaces the list of skipped files.
    pub fn set_skipped(&self, skipped: &[quire_vault::Skipped]) -> Result<(), IndexError> {
        self.tx.execute("DELETE FROM skipped", []).map_err(db_err)?;
        self.insert_skipped(skipped)
    }

    /// Replaces the skipped entries of `paths` alone with those of `skipped` (a sync of some
    /// paths: the other files' entries stand).
    pub fn replace_skipped(
        &self,
        paths: &[String],
        skipped: &[quire_vault::Skipped],
    ) -> Result<(), IndexError> {
        for path in paths {
            self.tx
                .execute("DELETE FROM skipped WHERE path = ?1", params![path])
                .map_err(db_err)?;
        }
        self.insert_skipped(skipped)
    }

    fn insert_skipped(&self, skipped: &[quire_vault::Skipped]) -> Result<(), IndexError> {
        for s in skipped {
            let reason = serde_json::to_string(&s.reason).unwrap_or_default();
            self.tx
                .execute(
                    "INSERT OR REPLACE INTO skipped (path, reason, message, sha256) VALUES (?1, ?2, ?3, ?4)",
                    params![s.path, reason, s.message, s.sha256],
                )
                .map_err(db_err)?;
        }
        Ok(())
    }

    /// Sets `key` to `value` in the meta table, replacing any earlier value.
    pub fn set_meta(&self, key: &str, value: &str) -> Result<(), IndexError> {
        self.tx
            .execute(
                "INSERT OR REPLACE INTO meta (key, value) VALUES (?1, ?2)",
                params![key, value],
            )
            .map_err(db_err)?;
        Ok(())
    }

    /// Commits everything with the new generation number.
    pub fn commit(self, generation: u64) -> Result<(), IndexError> {
        self.set_meta("generation", &generation.to_string())?;
        self.tx.commit().map_err(db_err)
    }
}

/// A `notes` row (path, title, mtime_ns, size, sha256) as a [`NoteRow`].
fn note_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<NoteRow> {
    let mtime: String = r.get(2)?;
    Ok(NoteRow {
        path: r.get(0)?,
        title: r.get(1)?,
        mtime_ns: mtime.parse().unwrap_or(0),
        size: r.get::<_, i64>(3)? as u64,
        sha256: r.get(4)?,
    })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn a_title_is_looked_up_through_its_index_not_by_a_scan() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(&dir.path().join("store.sqlite")).unwrap();
        let version: i64 = store
            .conn
            .pragma_query_value(None, "user_version", |r| r.get(0))
            .unwrap();
        assert_eq!(version, SCHEMA_VERSION);
        let mut plan = store
            .conn
            .prepare(&format!("EXPLAIN QUERY PLAN {TITLED}"))
            .unwrap();
        let steps: Vec<String> = plan
            .query_map(["Header 1"], |r| r.get::<_, String>(3))
            .unwrap()
            .map(Result::unwrap)
            .collect();
        assert!(
            steps
                .iter()
                .any(|s| s.contains("USING INDEX notes_by_title")),
            "{steps:?}"
        );
        assert!(
            !steps.iter().any(|s| s == "SCAN n"),
            "the notes are scanned: {steps:?}"
        );
    }
}
