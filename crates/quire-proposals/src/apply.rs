//! Applying a proposal (checked, backed up, staged, committed) and finishing one a crash
//! interrupted; the steps and what a crash at each leaves are in the crate docs.

use std::fs;
use std::path::PathBuf;
use std::time::Duration;

use quire_vault::atomic;
use serde::{Deserialize, Serialize};

use crate::diff::unified_diff;
use crate::error::ProposalError;
use crate::model::{ChangeKind, FileChange, Proposal, Status};
use crate::store::{ProposalStore, sha256_hex};

/// How an apply runs.
#[derive(Debug, Clone, Default)]
pub struct ApplyOptions {
    /// Wait this long after each file is committed. For crash tests only (a test kills the
    /// process between two files); never set by a user-facing path.
    pub pause_between_files: Option<Duration>,
}

/// A proposal written into the vault.
#[derive(Debug, Clone, Serialize)]
pub struct Applied {
    /// The proposal, now [`Status::Applied`].
    pub proposal: Proposal,
    /// The vault-relative paths written (created, replaced or renamed to).
    pub written: Vec<String>,
    /// Where the files it replaced are kept (`<index>/backups/<id>/<path>`).
    pub backup_dir: PathBuf,
    /// Files that could not be written in the commit phase (a note that cannot be replaced: an
    /// immutable file, a folder put in its place): left as they are, their new content kept
    /// beside the backups as `<path>.proposed`. The other files were written.
    pub not_written: Vec<NotWritten>,
}

/// A file an apply could not write, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct NotWritten {
    /// The vault-relative path.
    pub path: String,
    /// The operating system's (or the check's) reason.
    pub reason: String,
}

/// What opening the store did with an apply a crash interrupted.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Recovered {
    /// The proposal.
    pub id: String,
    /// What was done.
    pub outcome: RecoveryOutcome,
}

/// How an interrupted apply ended.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "outcome", rename_all = "snake_case")]
pub enum RecoveryOutcome {
    /// No note had been written yet: the staged files were removed; the proposal is pending.
    RolledBack,
    /// Some notes had been written: the rest were written from the journal; the proposal is
    /// applied. `conflicts` are files someone changed meanwhile, left as they were.
    Completed {
        /// Vault-relative paths not written because they changed (or could not be written).
        conflicts: Vec<String>,
    },
    /// The journal was not one quire wrote for a stored proposal (unreadable, or naming a file
    /// outside the vault, a proposal that does not exist or changes it does not hold): nothing
    /// it names was touched, and it was moved aside to `kept`.
    Discarded {
        /// What was wrong with it.
        reason: String,
        /// Where it is now (inside the index directory).
        kept: PathBuf,
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
enum Phase {
    /// Staged files exist; no note was written.
    Staged,
    /// Renames have started.
    Committing,
}

/// One file's step, as the journal records it.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct Step {
    /// Where the content goes (vault-relative).
    target: String,
    /// The staged file beside it (absolute).
    staged: PathBuf,
    /// The target exists and is replaced (else it must not exist).
    replace: bool,
    /// The target's hash before, when it exists.
    base_sha256: Option<String>,
    /// The content's hash.
    new_sha256: String,
    /// The old path of a rename, removed after the target is written (its hash is the base).
    remove: Option<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
struct Journal {
    id: String,
    phase: Phase,
    steps: Vec<Step>,
}

impl ProposalStore {
    /// Applies a pending proposal: every base hash re-checked (a changed file → refused, nothing
    /// written, the file named), every replaced file backed up, every file written atomically,
    /// all or nothing as the crate docs say.
    pub fn apply(&self, id: &str, options: &ApplyOptions) -> Result<Applied, ProposalError> {
        let _lock = self.lock()?;
        // A crash of another process since this store was opened.
        recover(self)?;
        let mut proposal = self.get(id)?;
        if proposal.status != Status::Pending {
            return Err(ProposalError::NotPending {
                id: proposal.id,
                status: proposal.status.as_str().into(),
            });
        }
        let id = proposal.id.clone();

        // 1. Bases, and every stored content against the diff that was shown for it.
        let mut originals = Vec::new();
        for change in &proposal.changes {
            let original = self.check_base(&id, change)?;
            self.check_diff(&id, change, original.as_deref())?;
            originals.push(original);
        }
        // 2. Backups of every file replaced or moved.
        let backup_dir = self.backup_dir(&id);
        for (change, original) in proposal.changes.iter().zip(&originals) {
            if let Some(bytes) = original {
                let backup = backup_dir.join(&change.path);
                if let Some(parent) = backup.parent() {
                    fs::create_dir_all(parent).map_err(ProposalError::io(parent))?;
                }
                // A backup of an earlier attempt of this proposal holds the same bytes.
                if !backup.exists() {
                    atomic::write_new(&backup, bytes)?;
                }
            }
        }
        // 3. Stage.
        let mut steps = Vec::new();
        let staged = self.stage(&proposal.changes, &mut steps);
        let mut journal = Journal {
            id: id.clone(),
            phase: Phase::Staged,
            steps,
        };
        if let Err(e) = staged.and_then(|()| self.write_journal(&journal)) {
            discard(&journal.steps);
            let _ = fs::remove_file(self.journal_path());
            return Err(e);
        }
        // 4. Last check, then commit.
        for change in &proposal.changes {
            if let Err(e) = self.check_base(&id, change) {
                discard(&journal.steps);
                let _ = fs::remove_file(self.journal_path());
                return Err(e);
            }
        }
        journal.phase = Phase::Committing;
        self.write_journal(&journal)?;
        // A file that cannot be written now (immutable, a folder in its place) stops neither
        // the other files nor the store: it is reported, its content kept beside the backups.
        let mut written = Vec::new();
        let mut not_written = Vec::new();
        for step in &journal.steps {
            match self.commit_step(step) {
                Ok(()) => written.push(step.target.clone()),
                Err(e) => {
                    keep_staged(self, &id, step);
                    not_written.push(NotWritten {
                        path: step.target.clone(),
                        reason: e.to_string(),
                    });
                }
            }
            if let Some(pause) = options.pause_between_files {
                std::thread::sleep(pause);
            }
        }
        // 5. Done.
        proposal.status = Status::Applied;
        proposal.decided = Some(chrono::Local::now().to_rfc3339());
        proposal.backup_dir = Some(backup_dir.display().to_string());
        proposal.conflicts = not_written.iter().map(|n| n.path.clone()).collect();
        self.save(&proposal)?;
        let _ = fs::remove_file(self.journal_path());
        Ok(Applied {
            written,
            proposal,
            backup_dir,
            not_written,
        })
    }

    /// Refuses a stored change whose content is not what its diff shows (the file was edited
    /// after quire wrote it): what `show` displayed is what `apply` writes, or nothing is.
    fn check_diff(
        &self,
        id: &str,
        change: &FileChange,
        original: Option<&[u8]>,
    ) -> Result<(), ProposalError> {
        let expected = match (change.kind, original) {
            (ChangeKind::Create, _) => unified_diff(None, "", Some(&change.path), &change.content),
            (ChangeKind::Rename, Some(bytes)) => {
                let old = String::from_utf8_lossy(bytes);
                if old != change.content {
                    return Err(ProposalError::tampered(
                        id,
                        &change.path,
                        "a rename's content differs from the file it moves",
                    ));
                }
                unified_diff(
                    Some(&change.path),
                    &old,
                    Some(change.target()),
                    &change.content,
                )
            }
            (_, Some(bytes)) => unified_diff(
                Some(&change.path),
                &String::from_utf8_lossy(bytes),
                Some(&change.path),
                &change.content,
            ),
            (_, None) => return Ok(()),
        };
        if expected != change.diff {
            return Err(ProposalError::tampered(
                id,
                &change.path,
                "its content is not what its diff shows",
            ));
        }
        Ok(())
    }

    /// The file's current bytes if the change may go ahead (`None` for a file to create).
    fn check_base(&self, id: &str, change: &FileChange) -> Result<Option<Vec<u8>>, ProposalError> {
        let free = |path: &str| -> Result<(), ProposalError> {
            if fs::symlink_metadata(self.vault_path(path)?).is_ok() {
                return Err(ProposalError::Exists {
                    id: id.into(),
                    path: path.into(),
                });
            }
            Ok(())
        };
        match change.kind {
            ChangeKind::Create => {
                free(&change.path)?;
                Ok(None)
            }
            ChangeKind::Replace | ChangeKind::Append | ChangeKind::Rename => {
                if let Some(new_path) = &change.new_path {
                    free(new_path)?;
                }
                let expected = change.base_sha256.as_deref().unwrap_or_default();
                let bytes = match self.read_existing(&change.path) {
                    Ok(bytes) => bytes,
                    Err(ProposalError::BadChange { .. }) => {
                        return Err(ProposalError::Changed {
                            id: id.into(),
                            path: change.path.clone(),
                            expected: expected.chars().take(12).collect(),
                            found: "missing".into(),
                        });
                    }
                    Err(e) => return Err(e),
                };
                let found = sha256_hex(&bytes);
                if found != expected {
                    return Err(ProposalError::Changed {
                        id: id.into(),
                        path: change.path.clone(),
                        expected: expected.chars().take(12).collect(),
                        found: found[..12].to_string(),
                    });
                }
                Ok(Some(bytes))
            }
        }
    }

    /// Stages every change beside its target, recording each in `steps` as it goes (so a
    /// failure can remove what was staged).
    fn stage(&self, changes: &[FileChange], steps: &mut Vec<Step>) -> Result<(), ProposalError> {
        for change in changes {
            let target = change.target().to_string();
            let abs = self.vault_path(&target)?;
            if let Some(parent) = abs.parent() {
                fs::create_dir_all(parent).map_err(ProposalError::io(parent))?;
            }
            // The folders just made must still be inside the vault.
            self.vault_path(&target)?;
            let staged = atomic::stage_beside(&abs, change.content.as_bytes())?;
            steps.push(Step {
                target,
                staged,
                replace: matches!(change.kind, ChangeKind::Replace | ChangeKind::Append),
                base_sha256: change.base_sha256.clone(),
                new_sha256: change.new_sha256.clone(),
                remove: (change.kind == ChangeKind::Rename).then(|| change.path.clone()),
            });
        }
        Ok(())
    }

    fn commit_step(&self, step: &Step) -> Result<(), ProposalError> {
        self.commit_step_without_remove(step)?;
        if let Some(old) = &step.remove {
            let old_abs = self.vault_path(old)?;
            fs::remove_file(&old_abs).map_err(ProposalError::io(&old_abs))?;
            if let Some(parent) = old_abs.parent()
                && let Ok(dir) = fs::File::open(parent)
            {
                let _ = dir.sync_all();
            }
        }
        Ok(())
    }

    pub(crate) fn journal_path(&self) -> PathBuf {
        self.dir.join("journal.json")
    }

    fn write_journal(&self, journal: &Journal) -> Result<(), ProposalError> {
        let json = serde_json::to_vec_pretty(journal).map_err(|source| ProposalError::Corrupt {
            path: self.journal_path(),
            source,
        })?;
        atomic::write_atomic(&self.journal_path(), &json)?;
        Ok(())
    }

    /// sha256 of a vault file now, `None` when it does not exist.
    fn current_hash(&self, rel: &str) -> Result<Option<String>, ProposalError> {
        match self.read_existing(rel) {
            Ok(bytes) => Ok(Some(sha256_hex(&bytes))),
            Err(ProposalError::BadChange { .. }) => Ok(None),
            Err(e) => Err(e),
        }
    }
}

/// Removes staged files (an apply that stopped before any note was written).
fn discard(steps: &[Step]) {
    for step in steps {
        let _ = fs::remove_file(&step.staged);
    }
}

/// Moves a staged file that could not be committed next to the backups (`<path>.proposed`), so
/// its content is not lost and nothing is left in the vault; removes it when that fails too.
fn keep_staged(store: &ProposalStore, id: &str, step: &Step) {
    if fs::symlink_metadata(&step.staged).is_err() {
        return;
    }
    let keep = store
        .backup_dir(id)
        .join(format!("{}.proposed", step.target));
    let moved = keep
        .parent()
        .is_some_and(|parent| fs::create_dir_all(parent).is_ok())
        && fs::rename(&step.staged, &keep).is_ok();
    if !moved {
        let _ = fs::remove_file(&step.staged);
    }
}

/// Finishes (or undoes) the apply a crash interrupted, from the journal; the caller holds the
/// lock.
pub(crate) fn recover(store: &ProposalStore) -> Result<Vec<Recovered>, ProposalError> {
    let path = store.journal_path();
    let bytes = match fs::read(&path) {
        Ok(bytes) => bytes,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(ProposalError::io(&path)(e)),
    };
    let journal = match serde_json::from_slice::<Journal>(&bytes)
        .map_err(|e| format!("not valid JSON ({e})"))
        .and_then(|journal| validate_journal(store, &journal).map(|()| journal))
    {
        Ok(journal) => journal,
        Err(reason) => return set_aside(store, &path, reason),
    };
    let outcome = match journal.phase {
        Phase::Staged => {
            discard(&journal.steps);
            RecoveryOutcome::RolledBack
        }
        Phase::Committing => {
            let mut conflicts = Vec::new();
            for step in &journal.steps {
                // A step that fails (the file cannot be replaced) is a conflict, never a wedge.
                if !finish_step(store, &journal.id, step).unwrap_or(false) {
                    keep_staged(store, &journal.id, step);
                    conflicts.push(step.target.clone());
                }
            }
            let mut proposal = store.get(&journal.id)?;
            proposal.status = Status::Applied;
            proposal.decided = Some(chrono::Local::now().to_rfc3339());
            proposal.backup_dir = Some(store.backup_dir(&journal.id).display().to_string());
            proposal.conflicts = conflicts.clone();
            store.save(&proposal)?;
            RecoveryOutcome::Completed { conflicts }
        }
    };
    fs::remove_file(&path).map_err(ProposalError::io(&path))?;
    Ok(vec![Recovered {
        id: journal.id,
        outcome,
    }])
}

/// Moves a journal that cannot be trusted out of the way (inside the index directory), touching
/// nothing it names.
fn set_aside(
    store: &ProposalStore,
    path: &std::path::Path,
    reason: String,
) -> Result<Vec<Recovered>, ProposalError> {
    let stamp = chrono::Local::now().format("%Y%m%d-%H%M%S%.f");
    let kept = store.dir.join(format!("journal.json.discarded-{stamp}"));
    fs::rename(path, &kept).map_err(ProposalError::io(&kept))?;
    Ok(vec![Recovered {
        id: String::new(),
        outcome: RecoveryOutcome::Discarded { reason, kept },
    }])
}

/// A journal is trusted only when it is the one an apply of a stored proposal wrote: a valid
/// id naming a proposal whose changes are exactly its steps, every path inside the vault, every
/// staged file a `.quire-stage` dot-file beside its target.
fn validate_journal(store: &ProposalStore, journal: &Journal) -> Result<(), String> {
    let proposal = store
        .get(&journal.id)
        .map_err(|e| format!("names no stored proposal ({e})"))?;
    if proposal.changes.len() != journal.steps.len() {
        return Err(format!(
            "has {} steps for a proposal of {} changes",
            journal.steps.len(),
            proposal.changes.len()
        ));
    }
    for (step, change) in journal.steps.iter().zip(&proposal.changes) {
        let consistent = step.target == change.target()
            && step.new_sha256 == change.new_sha256
            && step.base_sha256 == change.base_sha256
            && step.replace == matches!(change.kind, ChangeKind::Replace | ChangeKind::Append)
            && step.remove.as_deref()
                == (change.kind == ChangeKind::Rename).then_some(change.path.as_str());
        if !consistent {
            return Err(format!(
                "its step for {} is not the proposal's change",
                step.target
            ));
        }
        let target = store.vault_path(&step.target).map_err(|e| e.to_string())?;
        let name = target
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let staged_name = step
            .staged
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let beside = step.staged.parent() == target.parent()
            && staged_name.starts_with(&format!(".{name}."))
            && staged_name.ends_with(".quire-stage")
            && !staged_name.contains('/');
        if !beside {
            return Err(format!(
                "its staged file {} is not beside {}",
                step.staged.display(),
                step.target
            ));
        }
    }
    Ok(())
}

/// One step of an interrupted commit: `false` when the target (or a renamed file's old path)
/// changed meanwhile and was left alone.
fn finish_step(store: &ProposalStore, id: &str, step: &Step) -> Result<bool, ProposalError> {
    let current = store.current_hash(&step.target)?;
    let staged_exists = fs::symlink_metadata(&step.staged).is_ok();
    let mut done = true;
    if current.as_deref() == Some(step.new_sha256.as_str()) {
        // Written already (a no-clobber link may have left the staged name behind).
        if staged_exists {
            let _ = fs::remove_file(&step.staged);
        }
    } else if staged_exists
        && current
            == (if step.replace {
                step.base_sha256.clone()
            } else {
                None
            })
    {
        store.commit_step_without_remove(step)?;
    } else {
        done = false;
        if staged_exists {
            // Keep what would have been written next to the backups, never over the file.
            let keep = store
                .backup_dir(id)
                .join(format!("{}.proposed", step.target));
            if let Some(parent) = keep.parent() {
                fs::create_dir_all(parent).map_err(ProposalError::io(parent))?;
            }
            fs::rename(&step.staged, &keep).map_err(ProposalError::io(&keep))?;
        }
    }
    if let Some(old) = &step.remove
        && done
    {
        match store.current_hash(old)? {
            Some(hash) if Some(&hash) == step.base_sha256.as_ref() => {
                let abs = store.vault_path(old)?;
                fs::remove_file(&abs).map_err(ProposalError::io(&abs))?;
            }
            Some(_) => done = false,
            None => {}
        }
    }
    Ok(done)
}

impl ProposalStore {
    fn commit_step_without_remove(&self, step: &Step) -> Result<(), ProposalError> {
        let abs = self.vault_path(&step.target)?;
        atomic::commit_staged(&step.staged, &abs, step.replace)?;
        Ok(())
    }
}
