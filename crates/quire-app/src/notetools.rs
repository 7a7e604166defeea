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
/// Flashcards as Anki imports them (tab-separated, with tags): how `quire flashcards --anki`
/// writes them.
pub use quire_assist::flashcards::anki_tsv;

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

impl Selection {
    /// The selection a face was given: `lines` as `A-B` or `A` (1-based, inclusive), or a
    /// `heading`, or neither for the whole body; both is an error.
    pub fn of(lines: Option<&str>, heading: Option<&str>) -> Result<Selection, AppError> {
        let bad = |message: String| AppError::bad_arguments("transform", message);
        match (lines, heading) {
            (Some(lines), None) => {
                let (a, b) = lines.split_once('-').unwrap_or((lines, lines));
                match (a.trim().parse(), b.trim().parse()) {
                    (Ok(a), Ok(b)) => Ok(Selection::Lines(a, b)),
                    _ => Err(bad(format!("`lines` takes A-B or A, not `{lines}`"))),
                }
            }
            (None, Some(heading)) => Ok(Selection::Heading(heading.to_string())),
            (None, None) => Ok(Selection::Body),
            (Some(_), Some(_)) => Err(bad("give `lines` or `heading`, not both".to_string())),
        }
    }
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

/// What `complete` did.
#[derive(Debug, Clone, Serialize)]
pub struct CompleteOutcome {
    /// The continuation and its sources.
    pub completion: quire_assist::complete::Completion,
    /// The proposal that inserts it (none when only printed).
    pub proposal: Option<Proposal>,
}

/// Continues the note at `path` after line `at` (default: its last line), streaming the text
/// to `on_text`; `smart` gives the model passages of other notes from `searcher` to cite. With
/// `propose`, a proposal inserts the text after that line.
#[allow(clippy::too_many_arguments)] // one tool's inputs; a struct would only rename them
pub fn complete(
    store: &ProposalStore,
    reader: &SourceReader,
    searcher: Option<&quire_search::Searcher>,
    path: &str,
    at: Option<usize>,
    model: Option<&dyn ChatModel>,
    propose: bool,
    cancel: &CancelToken,
    on_text: &mut dyn FnMut(&str),
) -> Result<CompleteOutcome, AppError> {
    let model = model.ok_or_else(|| needs_model("complete"))?;
    let target = read(reader, path)?;
    let at = at.unwrap_or(target.note.line_count.max(1));
    if at == 0 || at > target.note.line_count.max(1) {
        return Err(AppError::bad_arguments(
            "complete",
            format!(
                "--at {at} is not a line of the note (it has {})",
                target.note.line_count
            ),
        ));
    }
    let sources = match searcher {
        Some(searcher) => {
            quire_assist::complete::smart_sources(searcher, reader, &target.note, at)?
        }
        None => Vec::new(),
    };
    let completion =
        quire_assist::complete::complete(model, &target.note, at, &sources, cancel, on_text)?;
    if completion.text.is_empty() {
        return Err(AppError::bad_arguments(
            "complete",
            "the model wrote nothing: the note is unchanged",
        ));
    }
    let proposal = if propose {
        let text = String::from_utf8_lossy(&target.bytes).into_owned();
        let line = text.lines().nth(at - 1).unwrap_or_default().to_string();
        let (_, content) = splice_lines(&text, at, at, &format!("{line}\n{}", completion.text))
            .or_else(|| {
                (text.is_empty()).then(|| (String::new(), format!("{}\n", completion.text)))
            })
            .ok_or_else(|| AppError::bad_arguments("complete", "the line is not in the note"))?;
        Some(store.create(NewProposal {
            title: format!("Continue {} after line {at}", target.path),
            command: format!("quire complete {}", target.path),
            sources: completion.sources.iter().map(|s| s.path.clone()).collect(),
            changes: vec![ChangeRequest::Replace {
                path: target.path.clone(),
                base: Some(target.bytes),
                content,
            }],
        })?)
    } else {
        None
    };
    Ok(CompleteOutcome {
        completion,
        proposal,
    })
}

/// What `dataview` wrote.
#[derive(Debug, Clone, Serialize)]
pub struct DataviewOutcome {
    /// The query (checked: every folder, tag and field it names exists).
    pub query: String,
    /// Whether a repair request was needed.
    pub repaired: bool,
    /// The proposal that adds it to a note, when asked.
    pub proposal: Option<Proposal>,
}

/// The folders, tags and property names of `vault`.
pub fn dataview_schema(vault: &quire_vault::Vault) -> quire_assist::dataview::Schema {
    let mut schema = quire_assist::dataview::Schema::default();
    for note in &vault.notes {
        let mut folder = note.path.as_str();
        while let Some((parent, _)) = folder.rsplit_once('/') {
            schema.folders.insert(parent.to_string());
            folder = parent;
        }
        for tag in &note.tags {
            schema
                .tags
                .insert(tag.name.trim_start_matches('#').to_string());
        }
        schema.properties.extend(note.properties.keys().cloned());
    }
    schema
}

/// A Dataview query for `question` over `vault`'s real names (see `quire_assist::dataview`); with
/// `into` (a store, a reader and a note path) a proposal adds it at the end of that note.
pub fn dataview(
    vault: &quire_vault::Vault,
    question: &str,
    model: Option<&dyn ChatModel>,
    into: Option<(&ProposalStore, &SourceReader, &str)>,
    cancel: &CancelToken,
) -> Result<DataviewOutcome, AppError> {
    use quire_assist::dataview::{dataview_messages, query_of, unknown_names};
    let model = model.ok_or_else(|| needs_model("dataview"))?;
    let schema = dataview_schema(vault);
    let mut request = ChatRequest::new(dataview_messages(&schema, question));
    request.temperature = Some(0.0);
    request.max_tokens = Some(400);
    let first = query_of(&reply(model, &request, cancel)?);
    let mut unknown = unknown_names(&first, &schema);
    let (query, repaired) = if unknown.is_empty() {
        (first, false)
    } else {
        request.messages.push(Message::assistant(first));
        request.messages.push(Message::user(format!(
            "That query names what the vault does not have: {}. Write it again using only the folders, tags and properties given.",
            unknown.join(", ")
        )));
        let second = query_of(&reply(model, &request, cancel)?);
        unknown = unknown_names(&second, &schema);
        (second, true)
    };
    if !unknown.is_empty() {
        return Err(AppError::bad_arguments(
            "dataview",
            format!(
                "the model's query names what the vault does not have, even after a second try: {}",
                unknown.join(", ")
            ),
        ));
    }
    let proposal = match into {
        Some((store, reader, path)) => {
            let target = read(reader, path)?;
            Some(store.create(NewProposal {
                title: format!("Dataview query in {path}: {}", question.trim()),
                command: format!("quire dataview --into {path}"),
                sources: Vec::new(),
                changes: vec![ChangeRequest::AppendUnderHeading {
                    path: path.to_string(),
                    base: Some(target.bytes),
                    heading: String::new(),
                    level: 2,
                    text: format!("```dataview\n{query}\n```"),
                }],
            })?)
        }
        None => None,
    };
    Ok(DataviewOutcome {
        query,
        repaired,
        proposal,
    })
}

/// Which notes a batch transforms (at least one criterion; all must hold).
#[derive(Debug, Clone, Default)]
pub struct BatchSelect {
    /// Notes in this folder or below.
    pub folder: Option<String>,
    /// Notes with this tag (or one below it).
    pub tag: Option<String>,
    /// Notes whose property `key` is present (`key`) or has this value (`key=value`; an item of
    /// a list counts; case ignored).
    pub property: Option<String>,
    /// The notes a search for this finds (at most 20, best first).
    pub query: Option<String>,
}

/// A batch before it runs: the notes, those already done by an earlier run, and the cost.
#[derive(Debug, Clone, Serialize)]
pub struct BatchPlan {
    /// The notes selected, in order.
    pub notes: Vec<String>,
    /// Notes an earlier run of the same batch already made a proposal for (skipped).
    pub done: Vec<String>,
    /// About how many tokens the remaining notes send (and as many come back).
    pub estimated_tokens: usize,
    /// Where the batch remembers what it did (`<index>/batches/<hash>.json`).
    pub state_file: std::path::PathBuf,
}

/// What a batch did.
#[derive(Debug, Clone, Default, Serialize)]
pub struct BatchOutcome {
    /// One proposal per note: (note, proposal id).
    pub proposals: Vec<(String, String)>,
    /// Notes that failed, and why.
    pub failed: Vec<(String, String)>,
    /// Stopped by Ctrl-C (what was done is remembered).
    pub cancelled: bool,
}

fn has_property(note: &Note, spec: &str) -> bool {
    let (key, value) = match spec.split_once('=') {
        Some((k, v)) => (k.trim(), Some(v.trim().to_lowercase())),
        None => (spec.trim(), None),
    };
    let Some(found) = note
        .properties
        .iter()
        .find(|(k, _)| k.eq_ignore_ascii_case(key))
        .map(|(_, v)| v)
    else {
        return false;
    };
    let Some(value) = value else { return true };
    let matches = |v: &serde_json::Value| match v {
        serde_json::Value::String(s) => s.trim().to_lowercase() == value,
        other => other.to_string().to_lowercase() == value,
    };
    match found {
        serde_json::Value::Array(items) => items.iter().any(matches),
        other => matches(other),
    }
}

/// Selects a batch's notes and reads what an earlier run of the same batch (the same notes and
/// instruction) already did.
pub fn batch_plan(
    vault: &quire_vault::Vault,
    searcher: Option<&quire_search::Searcher>,
    select: &BatchSelect,
    instruction: &str,
    index: &quire_index::IndexLocation,
) -> Result<BatchPlan, AppError> {
    if select.folder.is_none()
        && select.tag.is_none()
        && select.property.is_none()
        && select.query.is_none()
    {
        return Err(AppError::bad_arguments(
            "batch",
            "say which notes: --folder, --tag, --property or --query",
        ));
    }
    let searched: Option<Vec<String>> = match (&select.query, searcher) {
        (Some(query), Some(searcher)) => {
            let mut request = quire_search::SearchRequest::new(query.clone());
            request.k = 20;
            request.mode = searcher.default_mode()?;
            Some(
                searcher
                    .search(&request)?
                    .results
                    .into_iter()
                    .map(|r| r.path)
                    .collect(),
            )
        }
        (Some(_), None) => {
            return Err(AppError::NotReady(
                "--query needs the index: run `quire index`".into(),
            ));
        }
        _ => None,
    };
    let folder = select
        .folder
        .as_deref()
        .map(|f| f.trim_matches('/').to_lowercase());
    let tag = select
        .tag
        .as_deref()
        .map(|t| t.trim_start_matches('#').to_lowercase());
    let mut notes: Vec<&Note> = vault
        .notes
        .iter()
        .filter(|n| {
            folder
                .as_ref()
                .is_none_or(|f| n.path.to_lowercase().starts_with(&format!("{f}/")))
        })
        .filter(|n| {
            tag.as_ref().is_none_or(|t| {
                n.tags.iter().any(|tag| {
                    let name = tag.name.trim_start_matches('#').to_lowercase();
                    name == *t || name.starts_with(&format!("{t}/"))
                })
            })
        })
        .filter(|n| {
            select
                .property
                .as_deref()
                .is_none_or(|p| has_property(n, p))
        })
        .filter(|n| searched.as_ref().is_none_or(|s| s.contains(&n.path)))
        .collect();
    if let Some(order) = &searched {
        notes.sort_by_key(|n| order.iter().position(|p| *p == n.path));
    }
    let paths: Vec<String> = notes.iter().map(|n| n.path.clone()).collect();
    let key =
        quire_assist::audit::content_hash(&format!("{instruction}\u{0}{}", paths.join("\u{0}")));
    let state_file = index
        .dir
        .join("batches")
        .join(format!("{}.json", &key[..16]));
    let done: Vec<String> = std::fs::read(&state_file)
        .ok()
        .and_then(|bytes| {
            serde_json::from_slice::<std::collections::BTreeMap<String, String>>(&bytes).ok()
        })
        .map(|m| m.into_keys().filter(|p| paths.contains(p)).collect())
        .unwrap_or_default();
    let system = quire_assist::audit::approx_tokens(quire_assist::transform::TRANSFORM_SYSTEM);
    let estimated_tokens = notes
        .iter()
        .filter(|n| !done.contains(&n.path))
        // The note twice (as context and as the selection), the instruction, the prompt.
        .map(|n| 2 * quire_assist::audit::approx_tokens(&n.source) + system + 60)
        .sum();
    Ok(BatchPlan {
        notes: paths,
        done,
        estimated_tokens,
        state_file,
    })
}

/// Runs a batch: `transform` of each note's body not done yet, `concurrency` at a time, each
/// proposal remembered in the state file as soon as it is made (a later run skips it).
#[allow(clippy::too_many_arguments)] // one tool's inputs; a struct would only rename them
pub fn run_batch(
    store: &ProposalStore,
    reader: &SourceReader,
    plan: &BatchPlan,
    instruction: &str,
    model: &dyn ChatModel,
    concurrency: usize,
    cancel: &CancelToken,
    on_note: &(dyn Fn(usize, usize) + Sync),
) -> Result<BatchOutcome, AppError> {
    use std::sync::Mutex;
    use std::sync::atomic::{AtomicUsize, Ordering};
    let todo: Vec<&String> = plan
        .notes
        .iter()
        .filter(|p| !plan.done.contains(p))
        .collect();
    let mut state: std::collections::BTreeMap<String, String> = std::fs::read(&plan.state_file)
        .ok()
        .and_then(|bytes| serde_json::from_slice(&bytes).ok())
        .unwrap_or_default();
    if let Some(parent) = plan.state_file.parent() {
        std::fs::create_dir_all(parent)
            .map_err(|e| AppError::Internal(format!("{}: {e}", parent.display())))?;
    }
    let next = AtomicUsize::new(0);
    let finished = AtomicUsize::new(0);
    let outcome = Mutex::new(BatchOutcome::default());
    let state_lock = Mutex::new(&mut state);
    std::thread::scope(|scope| {
        for _ in 0..concurrency.clamp(1, 8) {
            scope.spawn(|| {
                loop {
                    if cancel.is_cancelled() {
                        break;
                    }
                    let Some(path) = todo.get(next.fetch_add(1, Ordering::SeqCst)) else {
                        break;
                    };
                    let result = transform(
                        store,
                        reader,
                        path,
                        &Selection::Body,
                        instruction,
                        Some(model),
                        cancel,
                    );
                    let mut out = outcome.lock().unwrap_or_else(|p| p.into_inner());
                    match result {
                        Ok(proposal) => {
                            out.proposals.push((path.to_string(), proposal.id.clone()));
                            let mut state = state_lock.lock().unwrap_or_else(|p| p.into_inner());
                            state.insert(path.to_string(), proposal.id);
                            if let Ok(json) = serde_json::to_vec_pretty(&**state) {
                                let _ = quire_vault::atomic::write_atomic(&plan.state_file, &json);
                            }
                        }
                        Err(AppError::Assist(e)) if e.is_cancelled() => break,
                        Err(e) => out.failed.push((path.to_string(), e.to_string())),
                    }
                    drop(out);
                    on_note(finished.fetch_add(1, Ordering::SeqCst) + 1, todo.len());
                }
            });
        }
    });
    let mut outcome = outcome.into_inner().unwrap_or_else(|p| p.into_inner());
    outcome.cancelled = cancel.is_cancelled();
    Ok(outcome)
}
