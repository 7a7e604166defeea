//! The tables quire keeps in a database. All are prefixed `quire_`; put them in a schema of
//! their own with the URL's `options=-csearch_path=…` to keep several vaults in one database.

/// The layout version; a database at another one is refused until `quire index --rebuild`.
pub(crate) const SCHEMA_VERSION: &str = "3";

/// The first half of the advisory lock key of the one writer ('quir' as a number); the second
/// half is the hash of the schema the tables are in, so that vaults kept in schemas of their
/// own have a writer each. A transaction holding
/// `pg_advisory_xact_lock(WRITER_LOCK, hashtext(current_schema()))` blocks publishing.
pub const WRITER_LOCK: i32 = 0x7175_6972;

/// The statements that create the tables for vectors of `dimension` values (a number, so
/// nothing of a user's is ever spliced into SQL).
pub(crate) fn tables(dimension: usize) -> String {
    format!(
        "CREATE EXTENSION IF NOT EXISTS vector;
         CREATE TABLE IF NOT EXISTS quire_meta (key text PRIMARY KEY, value text NOT NULL);
         CREATE TABLE IF NOT EXISTS quire_notes (
            path text PRIMARY KEY, title text NOT NULL, sha256 text NOT NULL,
            fingerprint text NOT NULL, properties text NOT NULL, centroid vector({dimension}));
         CREATE TABLE IF NOT EXISTS quire_chunks (
            path text NOT NULL REFERENCES quire_notes (path) ON DELETE CASCADE,
            id text NOT NULL, seq integer NOT NULL, ordinal integer NOT NULL,
            heading_path text NOT NULL,
            start_line integer NOT NULL, end_line integer NOT NULL, content_hash text NOT NULL,
            text text NOT NULL, tsv tsvector NOT NULL,
            lengths integer[] NOT NULL, norms real[] NOT NULL, folders text[] NOT NULL,
            tags text[] NOT NULL, embedding vector({dimension}),
            PRIMARY KEY (path, id));
         CREATE TABLE IF NOT EXISTS quire_tags (
            path text NOT NULL REFERENCES quire_notes (path) ON DELETE CASCADE,
            tag text NOT NULL);
         CREATE INDEX IF NOT EXISTS quire_tags_by_note ON quire_tags (path);
         CREATE TABLE IF NOT EXISTS quire_links (
            path text NOT NULL REFERENCES quire_notes (path) ON DELETE CASCADE,
            target text NOT NULL, subpath text, kind text NOT NULL, line integer NOT NULL);
         CREATE INDEX IF NOT EXISTS quire_links_by_note ON quire_links (path);
"
    )
}

/// The search indexes: full text (GIN over the tsvectors) and pgvector HNSW graphs (cosine) over
/// chunk vectors and note vectors.
pub(crate) const INDEXES: &str = "
    CREATE INDEX IF NOT EXISTS quire_chunks_tsv ON quire_chunks USING gin (tsv);
    CREATE INDEX IF NOT EXISTS quire_chunks_embedding ON quire_chunks
       USING hnsw (embedding vector_cosine_ops);
    CREATE INDEX IF NOT EXISTS quire_notes_centroid ON quire_notes
       USING hnsw (centroid vector_cosine_ops);
    CREATE INDEX IF NOT EXISTS quire_notes_title ON quire_notes (lower(title COLLATE \"C\"));";

/// The statement that removes every quire table (a rebuild).
pub(crate) const DROP: &str =
    "DROP TABLE IF EXISTS quire_links, quire_tags, quire_chunks, quire_notes, quire_meta CASCADE;";
