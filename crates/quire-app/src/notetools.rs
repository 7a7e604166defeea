//! The writing tools on one note, once for every face: `split`, `flashcards`, `transform`. Each
//! reads the note (its bytes kept as the proposal's base), asks the model where one is needed
//! (the note as untrusted data, the reply validated, one repair request), and returns a
//! proposal; nothing is written into the vault until the user applies it.

use std::collections::HashSet;

use quire_assist::context::SourceReader;
use quire_assist::flashcards::{self, Cards};
use quire_assist::split::{SplitPlan, split_by_headings, split_by_topics};
use quire_assist::transform::{clean_reply, splice_lines, transform_messages};
use quire_llm::{CancelToken, ChatModel, ChatRequest, Message};
use quire_proposals::{ChangeRequest, NewProposal};
use quire_vault::Note;
use serde::Serialize;

use crate::error::AppError;
use crate::proposals::{Proposal, ProposalStore};

/// A note as a tool reads it: its path, bytes (the proposal's base) and parse.
struct Target {
    path: String,
    bytes: Vec<u8>,
    note: Note,
}

fn read(reader: &SourceReader, path: &str) -> Result<Target, AppError> {
    let (_, bytes) = reader.read_bytes(path)?;
    let note = reader.parse(path, bytes.clone())?;
    Ok(Target {
        path: path.to_string(),
        bytes,
        note,
    })
}

/// The model's whole reply to `request`.
fn reply(
    model: &dyn ChatModel,
    request: &ChatRequest,
    cancel: &CancelToken,
) -> Result<String, AppError> {
    Ok(model
        .stream(request, cancel, &mut |_| {})
        .map_err(quire_assist::AssistError::from)?
        .text)
}

fn needs_model(tool: &str) -> AppError {
    AppError::bad_arguments(
        tool,
        format!(
            "`{tool}` needs a language model (see `quire config`: a provider, or the local model in a `local-llm` build)"
        ),
    )
}

/// What a split proposes.
#[derive(Debug, Clone, Serialize)]
pub struct SplitOutcome {
    /// The new notes and the map.
    pub plan: SplitPlan,
    /// The proposal that makes them.
    pub proposal: Proposal,
}

/// Splits the note at `path` (see `quire_assist::split`): by topic with `model`, else (or with
/// `by_headings`) by headings. `vault_paths` are the vault's note and attachment paths (the
/// new notes' names must be free).
pub fn split(
    store: &ProposalStore,
    reader: &SourceReader,
    vault_paths: &[String],
    path: &str,
    model: Option<&dyn ChatModel>,
    by_headings: bool,
    cancel: &CancelToken,
) -> Result<SplitOutcome, AppError> {
    let target = read(reader, path)?;
    let paths: HashSet<String> = vault_paths.iter().map(|p| p.to_lowercase()).collect();
    let names: HashSet<String> = vault_paths
        .iter()
        .filter_map(|p| p.strip_suffix(".md"))
        .map(|p| p.rsplit('/').next().unwrap_or(p).to_lowercase())
        .collect();
    let root = reader.root().to_path_buf();
    let taken = |p: &str| {
        paths.contains(&p.to_lowercase()) || std::fs::symlink_metadata(root.join(p)).is_ok()
    };
    let name_taken = |n: &str| names.contains(&n.to_lowercase());
    let plan = match model {
        Some(model) if !by_headings => {
            split_by_topics(model, &target.note, &taken, &name_taken, cancel)?
        }
        _ => split_by_headings(&target.note, &taken, &name_taken),
    }
    .map_err(|reason| AppError::bad_arguments("split", format!("{path}: {reason}")))?;
    let mut changes: Vec<ChangeRequest> = plan
        .notes
        .iter()
        .map(|n| ChangeRequest::Create {
            path: n.path.clone(),
            content: n.content.clone(),
        })
        .collect();
    changes.push(ChangeRequest::Replace {
        path: target.path.clone(),
        base: Some(target.bytes),
        content: plan.map.clone(),
    });
    let proposal = store.create(NewProposal {
        title: format!(
            "Split {} into {} notes (by {})",
            target.path,
            plan.notes.len(),
            plan.method
        ),
        command: format!("quire split {}", target.path),
        sources: vec![target.path.clone()],
        changes,
    })?;
    Ok(SplitOutcome { plan, proposal })
}

/// What `flashcards` made.
#[derive(Debug, Clone, Serialize)]
pub struct FlashcardsOutcome {
    /// The cards, and those dropped.
    pub cards: Cards,
    /// The note's tags (for an Anki export).
    pub tags: Vec<String>,
    /// The proposal that adds them under `## Flashcards` (none when there is no new card).
    pub proposal: Option<Proposal>,
}

/// Flashcards from the note at `path` (see `quire_assist::flashcards`).
pub fn flashcards(
    store: &ProposalStore,
    reader: &SourceReader,
    path: &str,
    model: Option<&dyn ChatModel>,
    cancel: &CancelToken,
) -> Result<FlashcardsOutcome, AppError> {
    let model = model.ok_or_else(|| needs_model("flashcards"))?;
    let target = read(reader, path)?;
    let mut request = ChatRequest::new(flashcards::flashcard_messages(&target.note));
    request.temperature = Some(0.0);
    request.max_tokens = Some(1_500);
    request.response_format = Some(flashcards::cards_schema());
    let first = reply(model, &request, cancel)?;
    let cards = match flashcards::parse_cards(&first, &target.note) {
        Ok(cards) => cards,
        Err(error) => {
            request.messages.push(Message::assistant(first));
            request.messages.push(Message::user(format!(
                "That reply cannot be used: {error}. Reply again with only the JSON object."
            )));
            let again = reply(model, &request, cancel)?;
            flashcards::parse_cards(&again, &target.note).map_err(|error| {
                AppError::bad_arguments(
                    "flashcards",
                    format!("the model's cards never validated: {error}"),
                )
            })?
        }
    };
    let tags: Vec<String> = target.note.tags.iter().map(|t| t.name.clone()).collect();
    let proposal = if cards.cards.is_empty() {
        None
    } else {
        Some(store.create(NewProposal {
            title: format!("{} flashcards for {}", cards.cards.len(), target.path),
            command: format!("quire flashcards {}", target.path),
            sources: vec![target.path.clone()],
            changes: vec![ChangeRequest::AppendUnderHeading {
                path: target.path.clone(),
                base: Some(target.bytes),
                heading: "Flashcards".into(),
                level: 2,
                text: flashcards::render_cards(&cards.cards),
            }],
        })?)
    };
    Ok(FlashcardsOutcome {
        cards,
        tags,
        proposal,
    })
}

/// What `transform` rewrites.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Selection {
    /// Lines `A-B`, 1-based, inclusive.
    Lines(usize, usize),
    /// The section under a heading (its text, matched ignoring case).
    Heading(String),
    /// The note after its properties.
    Body,
}

/// The selection's lines in `note`.
fn selected_lines(note: &Note, selection: &Selection) -> Result<(usize, usize), String> {
    match selection {
        Selection::Lines(a, b) if *a >= 1 && a <= b && *b <= note.line_count => Ok((*a, *b)),
        Selection::Lines(a, b) => Err(format!(
            "lines {a}-{b} are not lines of the note (it has {})",
            note.line_count
        )),
        Selection::Heading(text) => {
            let wanted = text.trim().trim_start_matches('#').trim();
            note.headings
                .iter()
                .find(|h| h.text.trim().eq_ignore_ascii_case(wanted))
                .map(|h| (h.line, h.end_line))
                .ok_or_else(|| format!("the note has no heading `{wanted}`"))
        }
        Selection::Body if note.body_start_line <= note.line_count => {
            Ok((note.body_start_line, note.line_count))
        }
        Selection::Body => Err("the note has nothing after its properties".into()),
    }
}

/// Rewrites the selection of the note at `path` as `instruction` says; the proposal replaces
/// exactly those lines.
pub fn transform(
    store: &ProposalStore,
    reader: &SourceReader,
    path: &str,
    selection: &Selection,
    instruction: &str,
    model: Option<&dyn ChatModel>,
    cancel: &CancelToken,
) -> Result<Proposal, AppError> {
    let model = model.ok_or_else(|| needs_model("transform"))?;
    let target = read(reader, path)?;
    let (start, end) = selected_lines(&target.note, selection)
        .map_err(|reason| AppError::bad_arguments("transform", reason))?;
    let text = String::from_utf8_lossy(&target.bytes).into_owned();
    let (selected, _) = splice_lines(&text, start, end, "")
        .ok_or_else(|| AppError::bad_arguments("transform", "the selection is not in the note"))?;
    let mut request = ChatRequest::new(transform_messages(&target.note, &selected, instruction));
    request.temperature = Some(0.2);
    request.max_tokens = Some((quire_assist::audit::approx_tokens(&selected) as u32 * 2).max(300));
    let rewritten = clean_reply(&reply(model, &request, cancel)?).ok_or_else(|| {
        AppError::bad_arguments(
            "transform",
            "the model wrote nothing: the note is unchanged",
        )
    })?;
    let (_, content) = splice_lines(&text, start, end, &rewritten)
        .ok_or_else(|| AppError::bad_arguments("transform", "the selection is not in the note"))?;
    Ok(store.create(NewProposal {
        title: format!(
            "Rewrite lines {start}-{end} of {}: {}",
            target.path,
            instruction.trim()
        ),
        command: format!("quire transform {}", target.path),
        sources: vec![target.path.clone()],
        changes: vec![ChangeRequest::Replace {
            path: target.path.clone(),
            base: Some(target.bytes),
            content,
        }],
    })?)
}
