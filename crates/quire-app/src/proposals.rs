//! Proposals, once for every face: the store of a vault, a draft made into a proposal, and the
//! one change an agent may propose (`propose_note_change`). Applying is always the user's act
//! (the CLI's `proposals apply`, HTTP's `POST /api/proposals/{id}/apply`); no MCP tool applies.

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

/// The MCP tool (and operation) that makes a proposal.
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
