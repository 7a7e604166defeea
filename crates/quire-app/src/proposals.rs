//! Proposals, once for every face: the store of a vault, a draft made into a proposal, and the
//! one change an agent may propose (`propose_note_change`). Applying is always the user's act
//! (the CLI's `proposals apply`, HTTP's `POST /api/proposals/{id}/apply`); no agent's operation applies.

use std::path::Path;

use quire_assist::draft::DraftTarget;
use quire_index::IndexLocation;
pub use quire_proposals::{
    Applied, ApplyOptions, ChangeRequest, NewProposal, Proposal, ProposalError, ProposalStore,
    ProposalSummary, Recovered, RecoveryOutcome, Status, sha256_hex,
};

use crate::args::{ProposeNoteChangeArgs, ProposedChange};
use crate::error::AppError;
use crate::resolve::check_request_path;

/// The operation by which an agent makes a proposal (its tool name too).
pub const PROPOSE_TOOL: &str = "propose_note_change";

/// The proposal store of the vault at `root`, in its index directory; an apply a crash
/// interrupted is finished first (see `quire_proposals`).
pub fn open_store(root: &Path, index: &IndexLocation) -> Result<ProposalStore, AppError> {
    Ok(ProposalStore::open(&index.dir, root)?)
}

/// A proposal that puts `draft` under the target's heading, made from the note's bytes as the
/// draft target read them (a note changed since → [`quire_assist::AssistError::Changed`]).
pub fn propose_draft(
    store: &ProposalStore,
    target: &DraftTarget,
    draft: &str,
    sources: Vec<String>,
) -> Result<Proposal, AppError> {
    if draft.trim().is_empty() {
        return Err(AppError::bad_arguments(
            "draft",
            "the draft is empty: nothing to insert",
        ));
    }
    let base = target.unchanged_bytes()?;
    Ok(store.create(NewProposal {
        title: format!("Draft of “{}” in {}", target.heading, target.path),
        command: format!("quire draft {} \"{}\"", target.path, target.heading),
        sources,
        changes: vec![ChangeRequest::AppendUnderHeading {
            path: target.path.clone(),
            base: Some(base),
            heading: target
                .section
                .as_ref()
                .map_or_else(|| target.heading.clone(), |h| h.text.clone()),
            level: target
                .section
                .as_ref()
                .map_or(target.level.unwrap_or(2), |h| h.level),
            text: draft.to_string(),
        }],
    })?)
}

/// `propose_note_change`: one change to one Markdown note, as a pending proposal. Never applied
/// here; `made_by` says who asked (shown with the proposal).
pub fn propose_note_change(
    store: &ProposalStore,
    args: &ProposeNoteChangeArgs,
    made_by: &str,
) -> Result<Proposal, AppError> {
    args.check(PROPOSE_TOOL)?;
    let path = args.path.trim().trim_start_matches("./").to_string();
    check_request_path(&path)?;
    if !path.to_lowercase().ends_with(".md") {
        return Err(AppError::bad_arguments(
            PROPOSE_TOOL,
            format!("`{path}` is not a Markdown note: the path must end in .md"),
        ));
    }
    if args.heading.is_some() && args.change != ProposedChange::Append {
        return Err(AppError::bad_arguments(
            PROPOSE_TOOL,
            "`heading` goes with `change: append` only",
        ));
    }
    let (verb, change) = match args.change {
        ProposedChange::Create => (
            "Create",
            ChangeRequest::Create {
                path: path.clone(),
                content: args.text.clone(),
            },
        ),
        ProposedChange::Replace => (
            "Rewrite",
            ChangeRequest::Replace {
                path: path.clone(),
                base: None,
                content: args.text.clone(),
            },
        ),
        ProposedChange::Append => (
            "Add to",
            ChangeRequest::AppendUnderHeading {
                path: path.clone(),
                base: None,
                heading: args.heading.clone().unwrap_or_default(),
                level: 2,
                text: args.text.clone(),
            },
        ),
    };
    let title = args
        .title
        .clone()
        .filter(|t| !t.trim().is_empty())
        .unwrap_or_else(|| format!("{verb} {path}"));
    Ok(store.create(NewProposal {
        title,
        command: format!("{PROPOSE_TOOL} ({made_by})"),
        sources: Vec::new(),
        changes: vec![change],
    })?)
}

/// Where a file quire made for the user (a canvas, an Anki export) went.
#[derive(Debug)]
pub enum Saved {
    /// Written outside the vault, at this path.
    Written(std::path::PathBuf),
    /// Inside the vault: a pending proposal that creates (or replaces) the file.
    Proposed(Box<Proposal>),
}

/// Saves `text` at `target` (relative to the current directory, or absolute): outside the vault
/// at `root` it is written at once (`quire_vault::atomic`), inside it becomes a proposal titled
/// `title`, made by `command`, and nothing in the vault is written. The folder must exist;
/// symbolic links are resolved before deciding, so a link into the vault counts as inside.
pub fn save_file(
    root: &Path,
    index: &IndexLocation,
    target: &Path,
    text: &str,
    title: &str,
    command: &str,
) -> Result<Saved, AppError> {
    let bad = |message: String| AppError::bad_arguments("save", message);
    let name = target
        .file_name()
        .ok_or_else(|| bad(format!("`{}` names no file", target.display())))?;
    let parent = match target.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => std::path::PathBuf::from("."),
    };
    let folder = parent.canonicalize().map_err(|e| {
        bad(format!(
            "cannot write {}: its folder {} cannot be opened ({e})",
            target.display(),
            parent.display()
        ))
    })?;
    let path = folder.join(name);
    let root = root.canonicalize().unwrap_or_else(|_| root.to_path_buf());
    let Ok(inside) = path.strip_prefix(&root) else {
        quire_vault::atomic::write_atomic(&path, text.as_bytes())
            .map_err(quire_vault::VaultError::from)?;
        return Ok(Saved::Written(path));
    };
    let relative = inside.to_string_lossy().replace('\\', "/");
    let change = if path.exists() {
        ChangeRequest::Replace {
            path: relative.clone(),
            base: None,
            content: text.to_string(),
        }
    } else {
        ChangeRequest::Create {
            path: relative.clone(),
            content: text.to_string(),
        }
    };
    let store = open_store(&root, index)?;
    let proposal = store.create(NewProposal {
        title: title.to_string(),
        command: command.to_string(),
        sources: Vec::new(),
        changes: vec![change],
    })?;
    Ok(Saved::Proposed(Box::new(proposal)))
}
