//! Note paths that arrive from clients: confined to the vault, looked up like the CLI's NOTE
//! argument, and read again from disk.
//!
//! A path is refused before any lookup when it could leave the vault: `..` components, absolute
//! paths, drive prefixes and NUL bytes (`quire_vault::vault::check_confined`), the same spelled
//! with percent escapes (`%2e%2e/`, also double-encoded), and a name whose file is a symlink to
//! something outside the vault. After the lookup, the note's canonical path must still lie under
//! the vault root.

use std::borrow::Cow;

use percent_encoding::percent_decode_str;
use quire_vault::vault::{check_confined, literal_note_path};
use quire_vault::{Note, VaultError};

use crate::error::AppError;
use crate::live::{Live, VAULT_WAIT};

/// Percent-decodes `text` once; `None` when it holds no escape or the escapes are not UTF-8.
fn percent_decoded(text: &str) -> Option<String> {
    match percent_decode_str(text).decode_utf8() {
        Ok(Cow::Owned(decoded)) => Some(decoded),
        _ => None,
    }
}

/// Refuses a request path that could name something outside the vault, however it is spelled.
pub fn check_request_path(query: &str) -> Result<(), VaultError> {
    check_confined(query)?;
    // Clients and proxies decode URLs, sometimes twice: refuse what any decoding would turn
    // into an escape, whatever the literal spelling looks like.
    let mut spelled = query.to_string();
    for _ in 0..3 {
        let Some(decoded) = percent_decoded(&spelled) else {
            break;
        };
        check_confined(&decoded).map_err(|_| VaultError::OutsideVault(query.to_string()))?;
        spelled = decoded;
    }
    Ok(())
}

/// The vault-relative path of the note `query` names: an exact path (`.md` optional), the same
/// ignoring case, or (once the vault has been parsed) a name resolved like a wikilink.
pub fn resolve_note_path(live: &Live, query: &str) -> Result<String, AppError> {
    let query = query.trim();
    if query.is_empty() {
        return Err(VaultError::BadRequest("empty note path".into()).into());
    }
    check_request_path(query)?;
    let literal = literal_note_path(query);
    for candidate in [query, literal.as_str()] {
        if let Ok(target) = live.root.join(candidate).canonicalize()
            && !target.starts_with(&live.root)
        {
            return Err(VaultError::OutsideVault(query.to_string()).into());
        }
    }
    let path = match live.vault_if_ready() {
        Some(snapshot) => snapshot.vault.notes[snapshot.vault.find_note(query)?]
            .path
            .clone(),
        // Before the first parse of a large vault has finished, the index knows the paths.
        None => match indexed_path(live, &literal) {
            Some(path) => path,
            None => {
                let snapshot = live.vault(VAULT_WAIT)?;
                snapshot.vault.notes[snapshot.vault.find_note(query)?]
                    .path
                    .clone()
            }
        },
    };
    match live.root.join(&path).canonicalize() {
        Ok(target) if !target.starts_with(&live.root) => {
            Err(VaultError::OutsideVault(query.to_string()).into())
        }
        _ => Ok(path),
    }
}

/// `literal` (a vault-relative path with `.md`) as the index spells it, matched exactly, then
/// ignoring case. `None` when there is no index or no such note in it.
fn indexed_path(live: &Live, literal: &str) -> Option<String> {
    let searcher = live.searcher(std::time::Duration::ZERO).ok()?;
    let searcher = searcher.lock().unwrap_or_else(|e| e.into_inner());
    let notes = searcher.store().notes().ok()?;
    let lower = literal.to_lowercase();
    notes
        .iter()
        .find(|n| n.path == literal)
        .or_else(|| notes.iter().find(|n| n.path.to_lowercase() == lower))
        .map(|n| n.path.clone())
}

/// The note at vault-relative `path` as it is on disk now, read with the vault's settings (a
/// canvas or a PDF as the index reads it).
pub fn read_current(live: &Live, path: &str) -> Result<Note, AppError> {
    let abs_path = live.root.join(path);
    std::fs::metadata(&abs_path).map_err(|e| match e.kind() {
        std::io::ErrorKind::NotFound => AppError::Vault(VaultError::NoteNotFound(path.into())),
        _ => AppError::Unreadable {
            path: path.into(),
            reason: e.to_string(),
        },
    })?;
    quire_vault::document::read_document(path, &abs_path, &live.settings)
        .map(|loaded| loaded.note)
        .map_err(|reason| AppError::Unreadable {
            path: path.into(),
            reason: reason.to_string(),
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_are_refused_however_spelled() {
        for bad in [
            "../x",
            "a/../../x",
            "/etc/passwd",
            "C:/x",
            "\\\\server\\share",
            "a\0b",
            "%2e%2e/x",
            "%2E%2E%2Fx",
            "%252e%252e/x",
            "%2fetc%2fpasswd",
            "..%5cx",
        ] {
            assert!(check_request_path(bad).is_err(), "{bad:?} was accepted");
        }
        for good in [
            "Notes/Idea.md",
            "Notes/Idea",
            "100% done.md",
            "a%20b.md",
            "x..y.md",
        ] {
            assert!(check_request_path(good).is_ok(), "{good:?} was refused");
        }
    }
}
