//! The audit index: what the deep audit's model said about each note, kept apart from the search
//! index on purpose (the seed's "two indexes"). Its own file, `<index>/audit.sqlite`, with its own
//! lifecycle: `quire index --rebuild` never clears it, `quire audit --deep --full` does. A record
//! is keyed by the note's content hash, the prompt's version and the model, so an unchanged note
//! is never sent again, and a new prompt or model recomputes.

use std::path::Path;

use rusqlite::{Connection, OptionalExtension, params};

use crate::error::IndexError;

/// The file of the audit index inside the index directory.
pub const AUDIT_FILE: &str = "audit.sqlite";

/// The audit index of one vault.
pub struct AuditCache {
    conn: Connection,
}

/// What a record is keyed by.
#[derive(Debug, Clone, Copy)]
pub struct AuditKey<'a> {
    /// sha256 (hex) of the note's text as sent.
    pub content_hash: &'a str,
    /// The map prompt's version.
    pub prompt_version: u32,
    /// The model that wrote the record.
    pub model: &'a str,
}

fn db_err(e: rusqlite::Error) -> IndexError {
    IndexError::Store { source: e }
}

impl AuditCache {
    /// Opens (creating) the audit index in `index_dir`.
    pub fn open(index_dir: &Path) -> Result<AuditCache, IndexError> {
        std::fs::create_dir_all(index_dir).map_err(|source| IndexError::Io {
            path: index_dir.to_path_buf(),
            source,
        })?;
        let conn = Connection::open(index_dir.join(AUDIT_FILE)).map_err(db_err)?;
        conn.pragma_update(None, "journal_mode", "WAL")
            .map_err(db_err)?;
        conn.busy_timeout(std::time::Duration::from_secs(10))
            .map_err(db_err)?;
        conn.execute_batch(
            "CREATE TABLE IF NOT EXISTS audit_records (
                content_hash TEXT NOT NULL,
                prompt_version INTEGER NOT NULL,
                model TEXT NOT NULL,
                path TEXT NOT NULL,
                record TEXT NOT NULL,
                created TEXT NOT NULL,
                PRIMARY KEY (content_hash, prompt_version, model)
            )",
        )
        .map_err(db_err)?;
        Ok(AuditCache { conn })
    }

    /// The record (JSON) stored for `key`, if any.
    pub fn get(&self, key: AuditKey<'_>) -> Result<Option<String>, IndexError> {
        self.conn
            .query_row(
                "SELECT record FROM audit_records
                 WHERE content_hash = ?1 AND prompt_version = ?2 AND model = ?3",
                params![key.content_hash, key.prompt_version, key.model],
                |row| row.get(0),
            )
            .optional()
            .map_err(db_err)
    }

    /// Stores the record (JSON) of the note at `path` under `key`, replacing an older one.
    pub fn put(&self, key: AuditKey<'_>, path: &str, record: &str) -> Result<(), IndexError> {
        self.conn
            .execute(
                "INSERT OR REPLACE INTO audit_records
                 (content_hash, prompt_version, model, path, record, created)
                 VALUES (?1, ?2, ?3, ?4, ?5, datetime('now'))",
                params![
                    key.content_hash,
                    key.prompt_version,
                    key.model,
                    path,
                    record
                ],
            )
            .map_err(db_err)?;
        Ok(())
    }

    /// Forgets every record (`--full`).
    pub fn clear(&self) -> Result<usize, IndexError> {
        self.conn
            .execute("DELETE FROM audit_records", [])
            .map_err(db_err)
    }

    /// How many records are stored.
    pub fn len(&self) -> Result<usize, IndexError> {
        self.conn
            .query_row("SELECT COUNT(*) FROM audit_records", [], |row| {
                row.get::<_, i64>(0)
            })
            .map(|n| n.max(0) as usize)
            .map_err(db_err)
    }

    /// Whether no record is stored.
    pub fn is_empty(&self) -> Result<bool, IndexError> {
        Ok(self.len()? == 0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_are_found_by_hash_prompt_and_model_and_survive_reopening() {
        let dir = tempfile::tempdir().unwrap();
        let key = AuditKey {
            content_hash: "abc",
            prompt_version: 1,
            model: "m",
        };
        let cache = AuditCache::open(dir.path()).unwrap();
        assert_eq!(cache.get(key).unwrap(), None);
        cache.put(key, "A.md", "{\"x\":1}").unwrap();
        drop(cache);
        let cache = AuditCache::open(dir.path()).unwrap();
        assert_eq!(cache.get(key).unwrap().as_deref(), Some("{\"x\":1}"));
        let other_model = AuditKey { model: "n", ..key };
        let other_prompt = AuditKey {
            prompt_version: 2,
            ..key
        };
        assert_eq!(cache.get(other_model).unwrap(), None);
        assert_eq!(cache.get(other_prompt).unwrap(), None);
        assert_eq!(cache.len().unwrap(), 1);
        assert_eq!(cache.clear().unwrap(), 1);
        assert!(cache.is_empty().unwrap());
    }
}
