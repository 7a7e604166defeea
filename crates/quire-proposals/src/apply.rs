//! Applying a proposal (checked, backed up, staged, committed) and finishing one a crash
//! interrupted; the steps and what a crash at each leaves are in the crate docs.

use std::fs;
use std::path::PathBuf;
use std::time::Duration;

use quire_vault::atomic;
use serde::{Deserialize, Serialize};

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
        /// Vault-relative paths not written because they changed.
        conflicts: Vec<String>,
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

        // 1. Bases.
        let mut originals = Vec::new();
        for change in &proposal.changes {
            originals.push(self.check_base(&id, change)?);
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
        for step in &journal.steps {
            self.commit_step(step)
                .map_err(|e| ProposalError::Interrupted {
                    id: id.clone(),
                    reason: e.to_string(),
                })?;
            if let Some(pause) = options.pause_between_files {
                std::thread::sleep(pause);
            }
        }
        // 5. Done.
        proposal.status = Status::Applied;
        proposal.decided = Some(chrono::Local::now().to_rfc3339());
        proposal.backup_dir = Some(backup_dir.display().to_string());
        self.save(&proposal)?;
        let _ = fs::remove_file(self.journal_path());
        Ok(Applied {
            written: proposal
                .changes
                .iter()
                .map(|c| c.target().to_string())
                .collect(),
            proposal,
            backup_dir,
        })
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

/// Finishes (or undoes) the apply a crash interrupted, from the journal; the caller holds the
/// lock.
pub(crate) fn recover(store: &ProposalStore) -> Result<Vec<Recovered>, ProposalError> {
    let path = store.journal_path();
    let bytes = match fs::read(&path) {
        Ok(bytes) => bytes,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(ProposalError::io(&path)(e)),
    };
    let journal: Journal =
        serde_json::from_slice(&bytes).map_err(|source| ProposalError::Corrupt {
            path: path.clone(),
            source,
        })?;
    let outcome = match journal.phase {
        Phase::Staged => {
            discard(&journal.steps);
            RecoveryOutcome::RolledBack
        }
        Phase::Committing => {
            let mut conflicts = Vec::new();
            for step in &journal.steps {
                if !finish_step(store, &journal.id, step)? {
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
