//! The proposal store: `<index>/proposals/<id>.json`, made from requests with every base read and
//! hashed, listed, shown and rejected. Applying is in `apply`.

use std::fs;
use std::path::{Path, PathBuf};

use quire_vault::atomic::{self, ReadError};
use quire_vault::edit::insert_under_heading;
use quire_vault::{ParseOptions, parse_note};
use serde::Serialize;
use sha2::{Digest, Sha256};

use crate::apply::{Recovered, recover};
use crate::diff::unified_diff;
use crate::error::ProposalError;
use crate::model::{
    ChangeKind, ChangeRequest, FileChange, NewProposal, Proposal, ProposalSummary, Status,
};

/// The most file changes one proposal holds.
pub const MAX_CHANGES: usize = 200;
/// The most bytes of new content one proposal holds (all files together).
pub const MAX_CONTENT_BYTES: usize = 32 * 1024 * 1024;

/// sha256 of `bytes`, in lowercase hex.
pub fn sha256_hex(bytes: &[u8]) -> String {
    let digest = Sha256::digest(bytes);
    digest.iter().map(|b| format!("{b:02x}")).collect()
}

/// The proposals of one vault, kept in its index directory.
#[derive(Debug)]
pub struct ProposalStore {
    pub(crate) dir: PathBuf,
    pub(crate) backups: PathBuf,
    pub(crate) root: PathBuf,
    recovered: Vec<Recovered>,
}

/// The proposals of a store (see [`ProposalStore::listing`]).
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Listing {
    /// Those that read back as quire wrote them, newest first.
    pub proposals: Vec<ProposalSummary>,
    /// Those that do not, newest first.
    pub unreadable: Vec<Unreadable>,
}

/// A stored proposal that cannot be read back as quire wrote it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Unreadable {
    /// Its id (its file's name).
    pub id: String,
    /// Why it cannot be read.
    pub reason: String,
}

impl ProposalStore {
    /// The store of the vault at `vault_root` in `index_dir` (created if missing). An apply that
    /// a crash interrupted is finished (or undone, if no note had changed yet) first; see
    /// [`ProposalStore::recovered`].
    pub fn open(index_dir: &Path, vault_root: &Path) -> Result<ProposalStore, ProposalError> {
        let dir = index_dir.join("proposals");
        fs::create_dir_all(&dir).map_err(ProposalError::io(&dir))?;
        let root = vault_root
            .canonicalize()
            .map_err(ProposalError::io(vault_root))?;
        let mut store = ProposalStore {
            backups: index_dir.join("backups"),
            dir,
            root,
            recovered: Vec::new(),
        };
        // Recovery needs the apply lock; when another process holds it, that process is applying
        // (and recovers first itself), so opening the store to read or propose never waits or
        // fails for it.
        match store.lock() {
            Ok(lock) => {
                store.recovered = recover(&store)?;
                drop(lock);
            }
            Err(ProposalError::Busy) => {}
            Err(e) => return Err(e),
        }
        Ok(store)
    }

    /// What opening the store finished or undid after a crash (empty almost always).
    pub fn recovered(&self) -> &[Recovered] {
        &self.recovered
    }

    /// The vault's root (canonical).
    pub fn vault_root(&self) -> &Path {
        &self.root
    }

    /// Where the files an apply replaces are kept: `<index>/backups/<id>/`.
    pub fn backup_dir(&self, id: &str) -> PathBuf {
        self.backups.join(id)
    }

    /// Makes a proposal: reads every file it changes, hashes it, computes the new content and
    /// the diff, and stores it. Nothing in the vault is written.
    pub fn create(&self, new: NewProposal) -> Result<Proposal, ProposalError> {
        if new.changes.is_empty() {
            return Err(ProposalError::TooLarge(
                "a proposal needs at least one change".into(),
            ));
        }
        if new.changes.len() > MAX_CHANGES {
            return Err(ProposalError::TooLarge(format!(
                "a proposal holds at most {MAX_CHANGES} file changes, not {}",
                new.changes.len()
            )));
        }
        // Provisional: the id is settled when the proposal is stored (see `save_new`).
        let id = new_id();
        let mut changes = Vec::with_capacity(new.changes.len());
        let mut total = 0usize;
        for request in &new.changes {
            let change = self.file_change(&id, request)?;
            total += change.content.len();
            if total > MAX_CONTENT_BYTES {
                return Err(ProposalError::TooLarge(format!(
                    "a proposal holds at most {} MiB of new content",
                    MAX_CONTENT_BYTES / (1024 * 1024)
                )));
            }
            changes.push(change);
        }
        let mut seen = std::collections::BTreeSet::new();
        for change in &changes {
            for path in [Some(change.path.as_str()), change.new_path.as_deref()]
                .into_iter()
                .flatten()
            {
                if !seen.insert(path.to_lowercase()) {
                    return Err(ProposalError::bad(
                        path,
                        "changed twice in one proposal: make it one change",
                    ));
                }
            }
        }
        let mut proposal = Proposal {
            id,
            title: one_line(&new.title),
            command: one_line(&new.command),
            sources: new.sources,
            created: chrono::Local::now().to_rfc3339(),
            status: Status::Pending,
            decided: None,
            backup_dir: None,
            conflicts: Vec::new(),
            changes,
        };
        self.save_new(&mut proposal)?;
        Ok(proposal)
    }

    /// Stores a new proposal under an id no other proposal has: the file is created with
    /// no-clobber semantics (staged, then hard-linked to its name), and a taken id is drawn
    /// again, so an id once answered always names this proposal.
    fn save_new(&self, proposal: &mut Proposal) -> Result<(), ProposalError> {
        for _ in 0..64 {
            let path = self.proposal_path(&proposal.id);
            let json =
                serde_json::to_vec_pretty(&*proposal).map_err(|source| ProposalError::Corrupt {
                    path: path.clone(),
                    source,
                })?;
            let staged = atomic::stage_beside(&path, &json)?;
            match atomic::commit_staged(&staged, &path, false) {
                Ok(()) => return Ok(()),
                Err(atomic::WriteError::Io { source, .. })
                    if source.kind() == std::io::ErrorKind::AlreadyExists =>
                {
                    let _ = fs::remove_file(&staged);
                    proposal.id = new_id();
                }
                Err(e) => {
                    let _ = fs::remove_file(&staged);
                    return Err(e.into());
                }
            }
        }
        Err(ProposalError::io(&self.dir)(std::io::Error::other(
            "no free proposal id after 64 draws",
        )))
    }

    /// Every proposal that reads back as quire wrote it, newest first (see [`Self::listing`]
    /// for the ones left out).
    pub fn list(&self) -> Result<Vec<ProposalSummary>, ProposalError> {
        Ok(self.listing()?.proposals)
    }

    /// Every proposal, newest first: those that read back as quire wrote it, and apart, those
    /// that do not (a file edited or cut short by hand, a disk error), with why. One bad file
    /// leaves the others listed instead of hiding them all; applying it is still refused.
    pub fn listing(&self) -> Result<Listing, ProposalError> {
        let mut ids = Vec::new();
        for entry in fs::read_dir(&self.dir).map_err(ProposalError::io(&self.dir))? {
            let entry = entry.map_err(ProposalError::io(&self.dir))?;
            let name = entry.file_name().to_string_lossy().into_owned();
            if let Some(id) = name.strip_suffix(".json")
                && valid_id(id)
            {
                ids.push(id.to_string());
            }
        }
        ids.sort_unstable_by(|a, b| b.cmp(a));
        let mut listing = Listing::default();
        for id in ids {
            match self.get(&id) {
                Ok(proposal) => listing.proposals.push(proposal.summary()),
                Err(e) => listing.unreadable.push(Unreadable {
                    id,
                    reason: e.to_string(),
                }),
            }
        }
        Ok(listing)
    }

    /// One proposal.
    pub fn get(&self, id: &str) -> Result<Proposal, ProposalError> {
        let id = id.trim();
        if !valid_id(id) {
            return Err(ProposalError::NotFound(id.chars().take(40).collect()));
        }
        let path = self.proposal_path(id);
        let bytes = match fs::read(&path) {
            Ok(bytes) => bytes,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Err(ProposalError::NotFound(id.to_string()));
            }
            Err(e) => return Err(ProposalError::io(&path)(e)),
        };
        let proposal: Proposal = serde_json::from_slice(&bytes)
            .map_err(|source| ProposalError::Corrupt { path, source })?;
        self.validate(id, &proposal)?;
        Ok(proposal)
    }

    /// A proposal read back is used only when it is as quire wrote it: its own id, at most
    /// [`MAX_CHANGES`] changes, plain vault paths, each content matching its hash, each kind's
    /// fields consistent. (Its diff is checked against the note at apply, where the base is
    /// read.)
    fn validate(&self, id: &str, proposal: &Proposal) -> Result<(), ProposalError> {
        let file = format!("{id}.json");
        if proposal.id != id {
            return Err(ProposalError::tampered(
                id,
                &file,
                "the id inside is not the file's",
            ));
        }
        if proposal.changes.is_empty() || proposal.changes.len() > MAX_CHANGES {
            return Err(ProposalError::tampered(
                id,
                &file,
                "no changes, or more than a proposal holds",
            ));
        }
        for change in &proposal.changes {
            for path in [Some(change.path.as_str()), change.new_path.as_deref()]
                .into_iter()
                .flatten()
            {
                check_path(path).map_err(|e| ProposalError::tampered(id, path, e.to_string()))?;
            }
            let consistent = match change.kind {
                ChangeKind::Create => change.base_sha256.is_none() && change.new_path.is_none(),
                ChangeKind::Replace | ChangeKind::Append => {
                    change.base_sha256.is_some() && change.new_path.is_none()
                }
                ChangeKind::Rename => {
                    change.new_path.is_some()
                        && change.base_sha256.as_deref() == Some(change.new_sha256.as_str())
                }
            };
            if !consistent {
                return Err(ProposalError::tampered(
                    id,
                    &change.path,
                    "its fields do not fit its kind",
                ));
            }
            if sha256_hex(change.content.as_bytes()) != change.new_sha256 {
                return Err(ProposalError::tampered(
                    id,
                    &change.path,
                    "its content does not match its hash",
                ));
            }
        }
        Ok(())
    }

    /// Marks a pending proposal rejected; nothing in the vault is written.
    pub fn reject(&self, id: &str) -> Result<Proposal, ProposalError> {
        let _lock = self.lock()?;
        let mut proposal = self.get(id)?;
        if proposal.status != Status::Pending {
            return Err(ProposalError::NotPending {
                id: proposal.id,
                status: proposal.status.as_str().into(),
            });
        }
        proposal.status = Status::Rejected;
        proposal.decided = Some(chrono::Local::now().to_rfc3339());
        self.save(&proposal)?;
        Ok(proposal)
    }

    pub(crate) fn proposal_path(&self, id: &str) -> PathBuf {
        self.dir.join(format!("{id}.json"))
    }

    pub(crate) fn save(&self, proposal: &Proposal) -> Result<(), ProposalError> {
        let json =
            serde_json::to_vec_pretty(proposal).map_err(|source| ProposalError::Corrupt {
                path: self.proposal_path(&proposal.id),
                source,
            })?;
        atomic::write_atomic(&self.proposal_path(&proposal.id), &json)?;
        Ok(())
    }

    /// The one apply (or reject) at a time: an OS lock, released when the process ends.
    pub(crate) fn lock(&self) -> Result<fs::File, ProposalError> {
        let path = self.dir.join("apply.lock");
        let file = fs::OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(false)
            .open(&path)
            .map_err(ProposalError::io(&path))?;
        match file.try_lock() {
            Ok(()) => Ok(file),
            Err(fs::TryLockError::WouldBlock) => Err(ProposalError::Busy),
            Err(fs::TryLockError::Error(e)) => Err(ProposalError::io(&path)(e)),
        }
    }

    /// The absolute path of a vault-relative path, if it is a plain path inside the vault: no
    /// `..`, no absolute path, no hidden folder or file (`.obsidian`, `.git`), no symbolic link
    /// on the way.
    pub(crate) fn vault_path(&self, rel: &str) -> Result<PathBuf, ProposalError> {
        check_path(rel)?;
        let parts: Vec<&str> = rel.split('/').collect();
        let mut path = self.root.clone();
        for (n, part) in parts.iter().enumerate() {
            path.push(part);
            match fs::symlink_metadata(&path) {
                Ok(meta) if meta.file_type().is_symlink() => {
                    return Err(ProposalError::bad(
                        rel,
                        if n + 1 == parts.len() {
                            "is a symbolic link: quire writes only to plain files of the vault (write to the file it points to instead)"
                        } else {
                            "goes through a symbolic link: quire writes only to plain files of the vault"
                        },
                    ));
                }
                Ok(_) => {}
                Err(_) => break,
            }
        }
        Ok(self.root.join(rel))
    }

    /// The current bytes of an existing file of the vault.
    pub(crate) fn read_existing(&self, rel: &str) -> Result<Vec<u8>, ProposalError> {
        let abs = self.vault_path(rel)?;
        atomic::read_regular(&abs, MAX_CONTENT_BYTES as u64).map_err(|e| match e {
            ReadError::Io(e) if e.kind() == std::io::ErrorKind::NotFound => {
                ProposalError::bad(rel, "no such file in the vault")
            }
            ReadError::Io(e) => ProposalError::io(abs)(e),
            ReadError::NotAFile { kind } => {
                ProposalError::bad(rel, format!("is a {kind}, not a file"))
            }
            ReadError::TooLarge { bytes } => {
                ProposalError::bad(rel, format!("is too large to change ({bytes} bytes)"))
            }
        })
    }

    /// The text of an existing file and its hash, refused when `base` is given and the file
    /// holds other bytes now.
    fn current_text(
        &self,
        id: &str,
        path: &str,
        base: Option<&[u8]>,
    ) -> Result<(String, String), ProposalError> {
        let current = self.read_existing(path)?;
        let base_sha = sha256_hex(&current);
        if let Some(base) = base
            && sha256_hex(base) != base_sha
        {
            return Err(ProposalError::Changed {
                id: id.into(),
                path: path.into(),
                expected: sha256_hex(base)[..12].to_string(),
                found: base_sha[..12].to_string(),
            });
        }
        Ok((text(path, current)?, base_sha))
    }

    fn file_change(&self, id: &str, request: &ChangeRequest) -> Result<FileChange, ProposalError> {
        Ok(match request {
            ChangeRequest::Create { path, content } => {
                let abs = self.vault_path(path)?;
                if fs::symlink_metadata(&abs).is_ok() {
                    return Err(ProposalError::Exists {
                        id: id.into(),
                        path: path.clone(),
                    });
                }
                FileChange {
                    kind: ChangeKind::Create,
                    path: path.clone(),
                    new_path: None,
                    heading: None,
                    line: None,
                    base_sha256: None,
                    new_sha256: sha256_hex(content.as_bytes()),
                    diff: unified_diff(None, "", Some(path), content),
                    content: content.clone(),
                }
            }
            ChangeRequest::Replace {
                path,
                base,
                content,
            } => {
                let (old, base_sha) = self.current_text(id, path, base.as_deref())?;
                if old == *content {
                    return Err(ProposalError::bad(
                        path,
                        "already holds exactly that text: nothing to change",
                    ));
                }
                FileChange {
                    kind: ChangeKind::Replace,
                    path: path.clone(),
                    new_path: None,
                    heading: None,
                    line: None,
                    base_sha256: Some(base_sha),
                    new_sha256: sha256_hex(content.as_bytes()),
                    diff: unified_diff(Some(path), &old, Some(path), content),
                    content: content.clone(),
                }
            }
            ChangeRequest::AppendUnderHeading {
                path,
                base,
                heading,
                level,
                text,
            } => {
                let (old, base_sha) = self.current_text(id, path, base.as_deref())?;
                let (content, line) = append_under(path, &old, heading, *level, text);
                FileChange {
                    kind: ChangeKind::Append,
                    path: path.clone(),
                    new_path: None,
                    heading: Some(heading.trim().to_string()).filter(|h| !h.is_empty()),
                    line: Some(line),
                    base_sha256: Some(base_sha),
                    new_sha256: sha256_hex(content.as_bytes()),
                    diff: unified_diff(Some(path), &old, Some(path), &content),
                    content,
                }
            }
            ChangeRequest::Rename { from, to } => {
                let current = self.read_existing(from)?;
                let base_sha = sha256_hex(&current);
                let abs_to = self.vault_path(to)?;
                if fs::symlink_metadata(&abs_to).is_ok() {
                    return Err(ProposalError::Exists {
                        id: id.into(),
                        path: to.clone(),
                    });
                }
                let old = text(from, current)?;
                FileChange {
                    kind: ChangeKind::Rename,
                    path: from.clone(),
                    new_path: Some(to.clone()),
                    heading: None,
                    line: None,
                    base_sha256: Some(base_sha.clone()),
                    new_sha256: base_sha,
                    diff: unified_diff(Some(from), &old, Some(to), &old),
                    content: old,
                }
            }
        })
    }
}

/// The most bytes of one file or folder name in a proposal: file systems allow 255, and an apply
/// stages a longer dot-name beside the file (and keeps `<name>.proposed` among the backups).
pub const MAX_NAME_BYTES: usize = 200;

/// A plain vault-relative path, checked without touching the disk: no `..`, no absolute path,
/// no empty, hidden or over-long part, `/` between folders.
fn check_path(rel: &str) -> Result<(), ProposalError> {
    quire_vault::vault::check_confined(rel).map_err(|e| ProposalError::bad(rel, e.to_string()))?;
    let parts: Vec<&str> = rel.split('/').collect();
    if rel.contains('\\') || parts.iter().any(|p| p.is_empty() || p.starts_with('.')) {
        return Err(ProposalError::bad(
            rel,
            "not a plain vault-relative path (no empty, `.` or hidden parts, `/` between folders)",
        ));
    }
    if let Some(part) = parts.iter().find(|p| p.len() > MAX_NAME_BYTES) {
        return Err(ProposalError::bad(
            rel,
            format!(
                "the name `{}…` is {} bytes long: quire writes names of at most {MAX_NAME_BYTES} bytes",
                part.chars().take(24).collect::<String>(),
                part.len()
            ),
        ));
    }
    Ok(())
}

/// Bytes as text, or a refusal: proposals change text files only.
fn text(path: &str, bytes: Vec<u8>) -> Result<String, ProposalError> {
    String::from_utf8(bytes).map_err(|_| {
        ProposalError::bad(
            path,
            "is not UTF-8 text: quire proposes changes to text only",
        )
    })
}

/// `text` under `heading` of the note `old` (the heading added at the end when the note has
/// none), or at the end of the note when `heading` is empty; and the added text's first line.
fn append_under(path: &str, old: &str, heading: &str, level: u8, text: &str) -> (String, usize) {
    let heading = heading.trim().trim_start_matches('#').trim();
    if heading.is_empty() {
        let mut content = old.to_string();
        let eol = if old.contains("\r\n") { "\r\n" } else { "\n" };
        if !content.is_empty() && !content.ends_with('\n') {
            content.push_str(eol);
        }
        if !content.trim().is_empty() {
            content.push_str(eol);
        }
        let line = content.matches('\n').count() + 1;
        content.push_str(&text.trim().lines().collect::<Vec<_>>().join(eol));
        content.push_str(eol);
        return (content, line);
    }
    let note = parse_note(path, old, &ParseOptions::default());
    let section = note
        .headings
        .iter()
        .find(|h| h.text.trim().eq_ignore_ascii_case(heading));
    insert_under_heading(old, section, level, heading, text)
}

fn one_line(text: &str) -> String {
    let line: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
    line.chars().take(300).collect()
}

/// `YYYYMMDD-HHMMSS-xxxxxxxx`: local time, then 32 random bits. Uniqueness does not rest on
/// the draw: the store creates the file no-clobber and draws again on a taken id.
fn new_id() -> String {
    let mut bytes = [0u8; 4];
    // A failing random source still gives a varied id from the clock's nanoseconds.
    if getrandom::fill(&mut bytes).is_err() {
        bytes = chrono::Local::now().timestamp_subsec_nanos().to_le_bytes();
    }
    format!(
        "{}-{}",
        chrono::Local::now().format("%Y%m%d-%H%M%S"),
        bytes.iter().map(|b| format!("{b:02x}")).collect::<String>()
    )
}

/// An id as [`new_id`] makes them (or as earlier versions did, with 16 random bits): digits,
/// `-` and lowercase hex in that shape, so it is never a path.
pub(crate) fn valid_id(id: &str) -> bool {
    let bytes = id.as_bytes();
    let hex = |s: &[u8]| {
        s.iter()
            .all(|c| c.is_ascii_digit() || (b'a'..=b'f').contains(c))
    };
    (bytes.len() == 20 || bytes.len() == 24)
        && bytes[..8].iter().all(u8::is_ascii_digit)
        && bytes[8] == b'-'
        && bytes[9..15].iter().all(u8::is_ascii_digit)
        && bytes[15] == b'-'
        && hex(&bytes[16..])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_sort_by_time_and_are_never_paths() {
        let id = new_id();
        assert!(valid_id(&id), "{id}");
        assert!(!valid_id("../../etc/passwd"));
        assert!(!valid_id("20261203-180000-zz00"));
    }

    #[test]
    fn an_append_without_heading_goes_at_the_end_after_a_blank_line() {
        assert_eq!(
            append_under("N.md", "a\nb", "", 2, "new"),
            ("a\nb\n\nnew\n".into(), 4)
        );
        assert_eq!(
            append_under("N.md", "# T\n## Log\nx\n## End\n", "log", 2, "y"),
            ("# T\n## Log\nx\n\ny\n## End\n".into(), 5)
        );
        assert_eq!(
            append_under("N.md", "# T\n", "## Ideas", 2, "z"),
            ("# T\n\n## Ideas\n\nz\n".into(), 5)
        );
    }
}
