//! quire's team backend: the index kept in PostgreSQL with pgvector, for vaults that many
//! people search from several machines.
//!
//! The writer runs where the files are: `quire index` syncs the local index as always (the
//! vault's source of truth stays the Markdown files, the local index its working copy), then
//! [`publish`] copies what changed into the database — notes, chunks with their full-text
//! documents and vectors, tags, links, note vectors — in **one transaction** under an advisory
//! lock (one writer at a time; a second one is refused, never interleaved). Readers
//! ([`PgSearcher`], on any machine) read each search inside one `REPEATABLE READ` transaction,
//! so a search sees one whole published generation, never half a sync, and many readers never
//! block the writer or each other.
//!
//! The search itself is `quire_search::retrieval::search`, the same code as the local index's:
//! only the two rankings come from Postgres (a `tsvector` of quire's own analyzer terms, scored
//! with BM25 exactly as the local index scores it: the same field boosts, the same collection
//! statistics recorded at publish, the same stored field lengths; and pgvector's HNSW cosine
//! search), so filters, fusion, grouping and snippets cannot drift apart, and a query ranks the
//! same notes first on both.
//!
//! ```no_run
//! # fn main() -> Result<(), quire_pg::PgError> {
//! let mut client = quire_pg::connect("postgresql://quire@db.example/quire")?;
//! let store = quire_index::Store::open(std::path::Path::new("/tmp/index/store.sqlite"))?;
//! let stats = quire_pg::publish(&store, &mut client, &quire_pg::PublishOptions::default())?;
//! println!("generation {}: {} notes written", stats.generation, stats.added + stats.updated);
//! # Ok(())
//! # }
//! ```

mod publish;
mod reader;
mod schema;
pub mod text;

pub use publish::{PublishOptions, PublishStats, publish};
pub use reader::{PgSearcher, PgStatus};
pub use schema::WRITER_LOCK;

/// Why the database backend failed.
#[derive(Debug, thiserror::Error)]
pub enum PgError {
    /// The database refused a statement or the connection failed (Postgres' own message).
    #[error("PostgreSQL: {0}")]
    Db(String),
    /// Another writer holds the database's quire lock.
    #[error(
        "another `quire index` is publishing to this database; wait for it (one writer at a time)"
    )]
    Busy,
    /// The database holds vectors of another embedding model or size.
    #[error(
        "the database holds vectors of another embedding space ({stored}; this index: {local}): publish with `quire index --rebuild` to replace them"
    )]
    SpaceMismatch {
        /// What the database holds.
        stored: String,
        /// What the local index holds.
        local: String,
    },
    /// The database holds the index of another vault (another folder published it).
    #[error(
        "the database holds the index of the vault at {stored}, not {ours}: publish with `quire index --rebuild` to replace it"
    )]
    OtherVault {
        /// The vault the database holds.
        stored: String,
        /// The vault publishing now.
        ours: String,
    },
    /// The database has no quire index yet.
    #[error(
        "no quire index in this database yet: run `quire --backend URL index` where the vault is"
    )]
    Empty,
    /// The local index could not be read.
    #[error(transparent)]
    Index(#[from] quire_index::IndexError),
}

impl From<postgres::Error> for PgError {
    fn from(e: postgres::Error) -> Self {
        PgError::Db(describe(&e))
    }
}

impl From<PgError> for quire_search::SearchError {
    fn from(e: PgError) -> Self {
        quire_search::SearchError::Backend(e.to_string())
    }
}

/// A Postgres error with the server's own message (the client's `Display` says only "db
/// error").
pub(crate) fn describe(e: &postgres::Error) -> String {
    match e.as_db_error() {
        Some(db) => match db.detail() {
            Some(detail) => format!("{} ({detail})", db.message()),
            None => db.message().to_string(),
        },
        None => e.to_string(),
    }
}

/// Whether `location` names a PostgreSQL database (`postgres://` or `postgresql://`).
pub fn is_database_url(location: &str) -> bool {
    location.starts_with("postgres://") || location.starts_with("postgresql://")
}

/// `url` with its password, if any, replaced by `***` (for messages and logs).
pub fn redacted(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return url.to_string();
    };
    let authority_end = rest.find(['/', '?']).unwrap_or(rest.len());
    let (authority, tail) = rest.split_at(authority_end);
    // A password may also be a query parameter (`?password=…`), in any letter case.
    let tail = match tail.split_once('?') {
        Some((path, query)) => {
            let params: Vec<String> = query
                .split('&')
                .map(|param| match param.split_once('=') {
                    Some((key, _)) if key.eq_ignore_ascii_case("password") => {
                        format!("{key}=***")
                    }
                    _ => param.to_string(),
                })
                .collect();
            format!("{path}?{}", params.join("&"))
        }
        None => tail.to_string(),
    };
    match authority.rsplit_once('@') {
        Some((userinfo, host)) => match userinfo.split_once(':') {
            Some((user, _)) => format!("{scheme}://{user}:***@{host}{tail}"),
            None => format!("{scheme}://{authority}{tail}"),
        },
        None => format!("{scheme}://{authority}{tail}"),
    }
}

/// Connects to the database at `url` (a libpq-style URL; `?host=/path` for a Unix socket).
pub fn connect(url: &str) -> Result<postgres::Client, PgError> {
    postgres::Client::connect(url, postgres::NoTls).map_err(|e| {
        PgError::Db(format!(
            "cannot connect to {}: {}",
            redacted(url),
            describe(&e)
        ))
    })
}

#[cfg(test)]
mod tests {
    use super::redacted;

    #[test]
    fn a_password_never_reaches_a_message() {
        assert_eq!(
            redacted("postgresql://quire:s3cret@db:5432/quire?sslmode=disable"),
            "postgresql://quire:***@db:5432/quire?sslmode=disable"
        );
        assert_eq!(
            redacted("postgresql://quire@db/quire"),
            "postgresql://quire@db/quire"
        );
        assert_eq!(
            redacted("postgresql://postgres:@/postgres?host=/tmp/x"),
            "postgresql://postgres:***@/postgres?host=/tmp/x"
        );
        assert_eq!(
            redacted("postgres:///db?host=/run/pg"),
            "postgres:///db?host=/run/pg"
        );
        assert_eq!(
            redacted("postgresql://quire@db/quire?sslmode=disable&password=s3cret"),
            "postgresql://quire@db/quire?sslmode=disable&password=***"
        );
        assert_eq!(
            redacted("postgres:///db?PassWord=s3cret&host=/run/pg"),
            "postgres:///db?PassWord=***&host=/run/pg"
        );
    }
}
