//! The ask flow, once for every face: a question's passages are retrieved and frozen before the
//! model is called. A date phrase ("last week", "on Jan 5", "2026-W48") in a question about the
//! user's own days ([`is_about_own_days`]: "what did I do last week?") limits the candidates to
//! the daily notes of those days, with room for one note per day (up to the candidate count);
//! when those days have no daily note, or the question asks how something works ("what happens
//! to tasks due today?"), the whole vault is searched.
//! [`Conversations`] keeps the multi-turn conversations of a server.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use chrono::NaiveDate;
use quire_assist::FrozenContext;
use quire_assist::ask::{Answer, AnswerKind, Conversation};
use quire_assist::context::Retrieval;
use quire_assist::context::Source;
use quire_assist::context::{self, ContextLimits, RetrievalRequest, SourceReader};
use quire_assist::dates::{date_range_in, is_about_own_days};
use quire_assist::descent::{DescentOptions, Retriever, descend, is_structural};
use quire_assist::evidence::{Evidence, WordRule, WordWeight};
use quire_assist::reflect::daily_paths_in;
use quire_assist::support::{Thresholds, split_sentences};
use quire_index::sync::ChunkKey;
use quire_llm::{CancelToken, ChatModel};
use quire_search::{AnswerIndex, Mode};

use crate::error::AppError;
use quire_vault::VaultError;

/// The passage `ask --expand` searches with, written by the model for a question (also what
/// `quire eval` measures).
pub use quire_assist::context::write_expansion;
/// Reorders candidates with the model (measured by `quire eval`, not used to answer).
pub use quire_assist::rerank::rerank;

/// What to retrieve for one question.
#[derive(Clone)]
pub struct AskRequest<'a> {
    /// The question as asked (its date phrase is read from it).
    pub question: &'a str,
    /// The text searched for: the question, or in a conversation the question with what it
    /// refers back to.
    pub query: &'a str,
    /// The retriever; `None` is the index's default (hybrid with embeddings, else BM25).
    pub mode: Option<Mode>,
    /// How many notes and passages to retrieve and keep; a date phrase raises `notes` to one per
    /// day of its range (up to `candidate_notes`).
    pub limits: ContextLimits,
    /// The day date phrases are read against.
    pub today: NaiveDate,
    /// Search, tree descent, or search then descent when search's evidence is weak.
    pub retriever: Retriever,
    /// The model that descends (`tree`, `auto`); `auto` without one searches only.
    pub model: Option<&'a dyn ChatModel>,
    /// Only passages of notes that pass this filter (search; the descent sees every note, so
    /// with `filter.note`, one note asked, search alone answers whatever `retriever` says).
    pub filter: quire_index::Filter,
    /// Have `model` write a passage that could answer the question first, and search with the
    /// question and that passage (query2doc; about 4 s of a local 1.5B model). Needs a model.
    pub expand: bool,
}

/// Retrieves the passages for `request` from the index `searcher` reads, re-reads them from the
/// vault through `reader` (only passages that still match the file are kept) and freezes them.
pub fn ask_context(
    searcher: &dyn AnswerIndex,
    reader: &SourceReader,
    request: &AskRequest<'_>,
) -> Result<FrozenContext, AppError> {
    let (mut retrieval, widened) = retrieval_for(searcher, reader, request)?;
    let expanded = expand(request, &mut retrieval)?;
    let found = context::retrieve(searcher, &retrieval)?;
    let mut frozen = context::materialize(reader, found.clone(), &retrieval.limits);
    frozen.report.notes.extend(widened);
    frozen.report.notes.extend(expanded);
    frozen.report.expansion = retrieval.expansion.clone();
    weigh(searcher, request, &mut frozen)?;
    let descend_now = should_descend(request, &mut frozen)?;
    frozen.report.retriever = if request.filter.note.is_some() {
        Retriever::Hybrid
    } else {
        request.retriever
    };
    match request.model {
        Some(model) if descend_now => {
            descend_and_merge(searcher, reader, request, model, found, frozen, &retrieval)
        }
        _ => Ok(frozen),
    }
}

/// The search a question makes: its limits (one note asked: that note's passages take the
/// places of the other notes'), the note resolved against the index, the mode, and a date
/// phrase's daily notes; with a line for the report when a date phrase found no daily notes.
fn retrieval_for(
    searcher: &dyn AnswerIndex,
    reader: &SourceReader,
    request: &AskRequest<'_>,
) -> Result<(RetrievalRequest, Option<String>), AppError> {
    let mut limits = request.limits;
    if request.filter.note.is_some() {
        // One note asked: its passages take the places of the other notes' (the same number
        // of passages and the same budget in all).
        limits.chunks_per_note *= limits.notes.max(1);
        limits.candidate_chunks *= limits.candidate_notes.max(1);
    }
    let mut retrieval = RetrievalRequest::new(request.query, limits);
    retrieval.filter = request.filter.clone();
    if let Some(note) = &request.filter.note {
        retrieval.filter.note = Some(indexed_note(searcher, note)?);
    }
    retrieval.mode = match request.mode {
        Some(mode) => mode,
        None => searcher.default_mode()?,
    };
    let mut widened = None;
    // A date phrase narrows a question to the daily notes of its range, unless one note is
    // asked: its passages are the only ones wanted, whatever days the question names.
    if let Some(range) = date_range_in(request.question, request.today)
        && request.filter.note.is_none()
        && is_about_own_days(request.question)
    {
        let notes = searcher.notes()?;
        let days = daily_paths_in(reader, notes.iter().map(|(path, _)| path.as_str()), range);
        if days.is_empty() {
            widened = Some(format!(
                "no daily notes between {} and {}: the whole vault was searched",
                range.from, range.to
            ));
        } else {
            // A date phrase asks about every day of its range: room for one note per day.
            limits.notes = limits.notes.max(days.len().min(limits.candidate_notes));
            retrieval.limits = limits;
            retrieval.only = Some(days);
            retrieval.date_range = Some(range);
        }
    }
    Ok((retrieval, widened))
}

/// `--expand`: the model writes a passage that could answer the question, searched with it;
/// the line the report gets.
fn expand(
    request: &AskRequest<'_>,
    retrieval: &mut RetrievalRequest,
) -> Result<Option<String>, AppError> {
    if !request.expand {
        return Ok(None);
    }
    let Some(model) = request.model else {
        return Err(AppError::bad_arguments(
            "ask",
            "expanding the question needs a language model to write the passage (see `quire config`)",
        ));
    };
    let (passage, seconds) =
        context::write_expansion(model, request.question, &CancelToken::new())?;
    Ok(Some(if passage.is_empty() {
        "expand: the model wrote no passage, so the question alone was searched".to_string()
    } else {
        retrieval.expansion = Some(passage);
        format!(
            "expand: searched with the question and a passage the model wrote for it ({seconds:.1} s)"
        )
    }))
}

/// How well the frozen passages answer the question (the evidence), and without a model the
/// sentences an extractive answer leads with.
fn weigh(
    searcher: &dyn AnswerIndex,
    request: &AskRequest<'_>,
    frozen: &mut FrozenContext,
) -> Result<(), AppError> {
    frozen.evidence = Some(evidence_of(searcher, request.question, frozen)?);
    if request.model.is_none() {
        frozen.lead = lead_of(searcher, request.question, frozen)?;
    }
    Ok(())
}

/// Whether the retriever asked for descends the vault after searching (`tree` always; `auto`
/// when the evidence is weak or the question is about the vault's structure); the report says
/// why not when it does not.
fn should_descend(request: &AskRequest<'_>, frozen: &mut FrozenContext) -> Result<bool, AppError> {
    Ok(match (request.retriever, request.model) {
        (Retriever::Hybrid, _) => false,
        // One note asked (`filter.note`): the descent would read the whole vault.
        (_, _) if request.filter.note.is_some() => {
            frozen.report.notes.push(
                "one note asked: search within it answered (the tree descent reads the whole vault)"
                    .into(),
            );
            false
        }
        (Retriever::Tree, None) => {
            return Err(AppError::bad_arguments(
                "ask",
                "the tree retriever needs a language model to descend the vault (see `quire config`); use --retriever hybrid",
            ));
        }
        (Retriever::Tree, Some(_)) => true,
        (Retriever::Auto, None) => {
            frozen
                .report
                .notes
                .push("auto: no language model to descend with, so search alone answered".into());
            false
        }
        (Retriever::Auto, Some(_)) => {
            let weak = frozen.evidence.as_ref().is_some_and(|e| e.weak);
            let structural = is_structural(request.question);
            if !weak && !structural {
                frozen.report.notes.push(
                    "auto: search found good evidence, so the vault was not descended".into(),
                );
            }
            weak || structural
        }
    })
}

/// The model descends the local index; its sections come first, search's after them (`auto`),
/// or in their place when the descent found nothing or a note it chose changed since it was
/// indexed (`tree`). A database backend has no reasoning records to descend: search answers.
fn descend_and_merge(
    searcher: &dyn AnswerIndex,
    reader: &SourceReader,
    request: &AskRequest<'_>,
    model: &dyn ChatModel,
    found: Retrieval,
    mut frozen: FrozenContext,
    retrieval: &RetrievalRequest,
) -> Result<FrozenContext, AppError> {
    let Some(local) = searcher.local() else {
        if request.retriever == Retriever::Tree {
            return Err(AppError::bad_arguments(
                "ask",
                "the tree retriever descends the local index, and this index is a database: use --retriever hybrid",
            ));
        }
        frozen.report.notes.push(
            "auto: the index is a database, which cannot be descended: search answered".into(),
        );
        return Ok(frozen);
    };
    let (tree, trace) = descend(
        model,
        local,
        reader,
        request.question,
        DescentOptions::default(),
        &CancelToken::new(),
    )?;
    let mut notes = frozen.report.notes.clone();
    let mut candidates = tree;
    let fall_back = candidates.is_empty() || !trace.stale.is_empty();
    if request.retriever == Retriever::Auto || fall_back {
        if candidates.is_empty() {
            notes.push("the descent found nothing: search answered".into());
        }
        if !trace.stale.is_empty() {
            notes.push(format!(
                "changed since indexed, so searched instead of descended: {}",
                trace.stale.join(", ")
            ));
        }
        for candidate in found.candidates {
            if !candidates.iter().any(|c| c.path == candidate.path) {
                candidates.push(candidate);
            }
        }
    }
    let merged = Retrieval {
        candidates,
        ..found
    };
    let mut frozen = context::materialize(reader, merged, &retrieval.limits);
    frozen.report.notes = notes;
    frozen.report.retriever = request.retriever;
    frozen.report.descent = Some(trace);
    weigh(searcher, request, &mut frozen)?;
    Ok(frozen)
}

/// The sentences an extractive answer leads with: those of its quoted passages closest in
/// meaning to the question (none without a model to rank them, or when the evidence is weak).
fn lead_of(
    searcher: &dyn AnswerIndex,
    question: &str,
    frozen: &FrozenContext,
) -> Result<Vec<quire_assist::lead::LeadSentence>, AppError> {
    if frozen.evidence.as_ref().is_some_and(|e| e.weak) {
        return Ok(Vec::new());
    }
    let candidates = quire_assist::lead::candidates(&frozen.passages);
    let texts: Vec<&str> = candidates.iter().map(|c| c.sentence.as_str()).collect();
    Ok(match searcher.sentence_scores(question, &texts)? {
        Some(scores) => quire_assist::lead::pick(candidates, &scores),
        None => Vec::new(),
    })
}

/// Whether the frozen passages seem to answer the question (best cosine, term coverage, and
/// with a model measured for it, a weighty word of the question that no passage speaks to).
fn evidence_of(
    searcher: &dyn AnswerIndex,
    question: &str,
    frozen: &FrozenContext,
) -> Result<Evidence, AppError> {
    let keys: Vec<ChunkKey> = frozen
        .passages
        .iter()
        .map(|p| ChunkKey::new(&p.path, &p.chunk_id))
        .collect();
    let cosines = searcher.cosines(question, &keys)?;
    let calibration = searcher.calibration()?;
    let evidence = Evidence::assess_with(
        question,
        &frozen.passages,
        &cosines,
        calibration.weak_answer_cosine,
    );
    let (Some(best_cosine), false) = (evidence.best_cosine, evidence.weak) else {
        return Ok(evidence);
    };
    if calibration.unmatched_word_share <= 0.0 {
        return Ok(evidence);
    }
    // The question again without each of its words, one query embedding a word.
    let words = quire_assist::evidence::probe_words(question);
    let variants: Vec<String> = words
        .iter()
        .map(|w| quire_assist::evidence::without_word(question, w))
        .collect();
    let texts: Vec<&str> = std::iter::once(question)
        .chain(variants.iter().map(String::as_str))
        .collect();
    let Some(weighed) = searcher.query_cosines(&texts, &keys)? else {
        return Ok(evidence);
    };
    let best = |row: &[Option<f32>]| row.iter().flatten().copied().fold(f32::MIN, f32::max);
    let mut weights = Vec::with_capacity(words.len());
    for (i, word) in words.into_iter().enumerate() {
        // Question words and stop words have no content terms: nothing to look up. A failed
        // lookup leaves the word unknown rather than failing the answer.
        let mentioned = if calibration.absent_word_share <= 0.0
            || quire_index::analyzer::content_terms(&word).is_empty()
        {
            None
        } else {
            searcher.mentions(&word).ok().flatten()
        };
        weights.push(WordWeight {
            share: 1.0 - weighed.to_first.get(i + 1).copied().unwrap_or(1.0),
            best_without: weighed.rows.get(i + 1).map_or(f32::MIN, |r| best(r)),
            mentioned,
            word,
        });
    }
    // The whole question's best, from the same embedding call as the variants'.
    let whole = weighed.rows.first().map_or(best_cosine, |r| best(r));
    let rule = WordRule {
        min_share: calibration.unmatched_word_share,
        max_gain: calibration.unmatched_word_gain,
        absent_min_share: calibration.absent_word_share,
        absent_max_gain: calibration.absent_word_gain,
    };
    Ok(
        match quire_assist::evidence::unmatched_word(&weights, whole, rule) {
            Some(word) => evidence.with_unmatched(word),
            None => evidence,
        },
    )
}

/// Checks a generated answer's sentences against `sources` (every source of its conversation,
/// [`Conversation::sources`]) with `searcher`'s embedder: each sentence is embedded (one batch)
/// and compared with the sources' stored vectors, as well as by shared words (see
/// [`quire_assist::support`]). Without an embedder or vectors the words-only check that
/// [`Conversation::ask`] made stays; an embedding failure falls back to it too, and says why.
pub fn check_support(searcher: &dyn AnswerIndex, sources: &[Source], answer: &mut Answer) {
    if answer.kind != AnswerKind::Generated {
        return;
    }
    let ids: Vec<&str> = sources.iter().map(|s| s.id.as_str()).collect();
    let sentences = split_sentences(&answer.answer, &ids);
    let claims: Vec<&str> = sentences.iter().map(|s| s.claim.as_str()).collect();
    let keys: Vec<ChunkKey> = sources
        .iter()
        .map(|s| ChunkKey::new(&s.passage.path, &s.passage.chunk_id))
        .collect();
    // The cosine thresholds of the model whose vectors the index holds.
    let thresholds = searcher
        .calibration()
        .map(|c| Thresholds::for_model(&c))
        .unwrap_or_default();
    match searcher.text_cosines(&claims, &keys) {
        Ok(Some(cosines)) => answer.check_support(sources, Some(&cosines), None, &thresholds),
        Ok(None) => {}
        Err(e) => answer.check_support(
            sources,
            None,
            Some(format!(
                "the embedder failed ({e}): sentences were compared by shared words only"
            )),
            &thresholds,
        ),
    }
}

/// One answered turn: the answer, and under `strict` why it was withheld.
#[derive(Debug, Clone)]
pub struct Answered {
    /// The answer, its citations checked (with the index's embedder where it has one).
    pub answer: Answer,
    /// Set when `strict` withheld the answer: why (its cited sentences do not hold).
    pub withheld: Option<String>,
}

/// One turn of a conversation, whole, for every face: the answer written from the frozen
/// context (streamed to `on_text`; under `strict` nothing is streamed, as an answer is shown
/// only once its citations are checked), each cited sentence checked against its source with
/// `check_with`'s embedder (by shared words without one), and under `strict` the verdict.
#[allow(clippy::too_many_arguments)]
pub fn answer_turn(
    conversation: &mut Conversation,
    model: Option<&dyn ChatModel>,
    frozen: FrozenContext,
    question: &str,
    check_with: Option<&dyn AnswerIndex>,
    strict: bool,
    cancel: &CancelToken,
    on_text: &mut dyn FnMut(&str),
) -> Result<Answered, quire_assist::AssistError> {
    let on_text: &mut dyn FnMut(&str) = if strict { &mut |_| {} } else { on_text };
    let mut answer = conversation.ask(model, frozen, question, cancel, on_text)?;
    if let Some(index) = check_with {
        check_support(index, conversation.sources(), &mut answer);
    }
    let withheld = if strict {
        answer.strict_refusal()
    } else {
        None
    };
    Ok(Answered { answer, withheld })
}

/// How many conversations a server keeps (the least recently used goes first).
pub const MAX_CONVERSATIONS: usize = 32;
/// How many turns one conversation may have.
pub const MAX_TURNS: usize = 20;
/// How long an idle conversation is kept.
pub const CONVERSATION_IDLE: Duration = Duration::from_secs(60 * 60);

/// The conversations of a server (`POST /api/ask` with a `conversation` id): each keeps its
/// sources and their ids, so a follow-up's citations keep naming the same passages, and the
/// turns the model sees again. Kept in memory, at most [`MAX_CONVERSATIONS`], each for
/// [`CONVERSATION_IDLE`] after its last turn; a turn takes its conversation out while it is
/// answered, so two turns of one conversation never run at once.
#[derive(Debug, Default)]
pub struct Conversations {
    kept: Mutex<HashMap<String, Kept>>,
}

#[derive(Debug)]
struct Kept {
    /// `None` while a turn is being answered.
    conversation: Option<Conversation>,
    turns: usize,
    last_used: Instant,
}

/// A conversation taken out for one turn: give it back with [`Conversations::put_back`].
#[derive(Debug)]
pub struct Turn {
    /// The conversation's id: 32 hex digits, new when the turn starts a conversation.
    pub id: String,
    /// The sources and turns so far; the caller answers with it, then gives it back.
    pub conversation: Conversation,
    /// The turns answered before this one.
    pub turns: usize,
}

impl Conversations {
    /// No conversations yet.
    pub fn new() -> Conversations {
        Conversations::default()
    }

    /// Takes conversation `id` out for a turn, or starts a new one when `id` is `None`.
    pub fn take(&self, id: Option<&str>) -> Result<Turn, AppError> {
        let mut kept = self.kept.lock().unwrap_or_else(|e| e.into_inner());
        let now = Instant::now();
        kept.retain(|_, k| k.conversation.is_none() || now - k.last_used < CONVERSATION_IDLE);
        let Some(id) = id else {
            if kept.len() >= MAX_CONVERSATIONS {
                let oldest = kept
                    .iter()
                    .filter(|(_, k)| k.conversation.is_some())
                    .min_by_key(|(_, k)| k.last_used)
                    .map(|(id, _)| id.clone());
                match oldest {
                    Some(oldest) => {
                        kept.remove(&oldest);
                    }
                    None => {
                        return Err(AppError::Busy(
                            "every conversation slot is answering a question".into(),
                        ));
                    }
                }
            }
            let id = new_id();
            kept.insert(
                id.clone(),
                Kept {
                    conversation: None,
                    turns: 0,
                    last_used: now,
                },
            );
            return Ok(Turn {
                id,
                conversation: Conversation::new(),
                turns: 0,
            });
        };
        let Some(entry) = kept.get_mut(id) else {
            return Err(AppError::NotFound(format!(
                "no conversation `{id}`: it ended (conversations are kept for an hour after their last turn, and while the server runs); start a new one without `conversation`"
            )));
        };
        if entry.turns >= MAX_TURNS {
            return Err(AppError::ConversationFull(format!(
                "conversation `{id}` has had {MAX_TURNS} turns: start a new one"
            )));
        }
        let Some(conversation) = entry.conversation.take() else {
            return Err(AppError::Busy(format!(
                "conversation `{id}` is answering its previous question: wait for it"
            )));
        };
        entry.last_used = now;
        Ok(Turn {
            id: id.to_string(),
            conversation,
            turns: entry.turns,
        })
    }

    /// Gives a turn's conversation back: `answered` counts the turn (a failed or cancelled
    /// turn leaves the conversation as it was).
    pub fn put_back(&self, turn: Turn, answered: bool) {
        let mut kept = self.kept.lock().unwrap_or_else(|e| e.into_inner());
        let Turn {
            id,
            conversation,
            turns,
        } = turn;
        if answered || turns > 0 {
            kept.insert(
                id,
                Kept {
                    conversation: Some(conversation),
                    turns: turns + usize::from(answered),
                    last_used: Instant::now(),
                },
            );
        } else {
            // A new conversation whose first turn failed: nothing to keep.
            kept.remove(&id);
        }
    }
}

/// 128 random bits in hex: a conversation id another client cannot guess.
fn new_id() -> String {
    let mut bytes = [0u8; 16];
    if getrandom::fill(&mut bytes).is_err() {
        // No system randomness: fall back to the clock and a counter (still unique).
        static COUNTER: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or_default();
        let count = COUNTER.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        bytes[..8].copy_from_slice(&(nanos as u64).to_le_bytes());
        bytes[8..].copy_from_slice(&count.to_le_bytes());
    }
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// The path of the note `query` names among the indexed ones (PDFs and canvases included, which
/// the parsed vault does not hold): its path (`.md` optional; any letter case), or its file
/// name when exactly one note has it.
pub fn indexed_note(searcher: &dyn AnswerIndex, query: &str) -> Result<String, AppError> {
    let query = query.trim();
    quire_vault::vault::check_confined(query)?;
    let exact = query.replace('\\', "/");
    let exact = exact.trim_start_matches("./").to_string();
    if exact.is_empty() {
        return Err(VaultError::BadRequest("empty note path".into()).into());
    }
    let paths: Vec<String> = searcher.notes()?.into_iter().map(|(p, _)| p).collect();
    let with_md = quire_vault::vault::literal_note_path(&exact);
    let wanted = [exact.to_lowercase(), with_md.to_lowercase()];
    for path in [&exact, &with_md] {
        if paths.contains(path) {
            return Ok(path.clone());
        }
    }
    if let Some(path) = paths.iter().find(|p| wanted.contains(&p.to_lowercase())) {
        return Ok(path.clone());
    }
    let named: Vec<&String> = paths
        .iter()
        .filter(|p| {
            let name = p.rsplit('/').next().unwrap_or(p).to_lowercase();
            wanted.contains(&name)
        })
        .collect();
    match named.as_slice() {
        [one] => Ok((*one).clone()),
        [] => Err(VaultError::NoteNotFound(query.to_string()).into()),
        several => Err(VaultError::BadRequest(format!(
            "`{query}` names {} notes ({}): give its path",
            several.len(),
            several
                .iter()
                .map(|p| p.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        ))
        .into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_conversation_is_taken_for_a_turn_and_given_back() {
        let conversations = Conversations::new();
        let first = conversations.take(None).unwrap();
        assert_eq!(first.id.len(), 32);
        let id = first.id.clone();
        // While its first turn runs, it cannot be taken again.
        assert!(matches!(
            conversations.take(Some(&id)),
            Err(AppError::Busy(_))
        ));
        conversations.put_back(first, true);
        let second = conversations.take(Some(&id)).unwrap();
        assert_eq!(second.turns, 1);
        // A failed later turn keeps the conversation, with its turns.
        conversations.put_back(second, false);
        assert_eq!(conversations.take(Some(&id)).unwrap().turns, 1);
        assert!(matches!(
            conversations.take(Some("0123")),
            Err(AppError::NotFound(_))
        ));
    }

    #[test]
    fn a_new_conversation_whose_first_turn_failed_is_not_kept() {
        let conversations = Conversations::new();
        let turn = conversations.take(None).unwrap();
        let id = turn.id.clone();
        conversations.put_back(turn, false);
        assert!(matches!(
            conversations.take(Some(&id)),
            Err(AppError::NotFound(_))
        ));
    }

    #[test]
    fn turns_and_conversations_are_bounded() {
        let conversations = Conversations::new();
        let mut turn = conversations.take(None).unwrap();
        let id = turn.id.clone();
        let mut answered = 0;
        let refused = loop {
            conversations.put_back(turn, true);
            answered += 1;
            match conversations.take(Some(&id)) {
                Ok(next) => turn = next,
                Err(e) => break e,
            }
        };
        assert!(
            matches!(refused, AppError::ConversationFull(_)),
            "{refused}"
        );
        assert_eq!(answered, MAX_TURNS);
        let ids: Vec<String> = (0..MAX_CONVERSATIONS + 3)
            .map(|_| {
                let turn = conversations.take(None).unwrap();
                let id = turn.id.clone();
                conversations.put_back(turn, true);
                id
            })
            .collect();
        // The least recently used went first; the newest are kept.
        assert!(matches!(
            conversations.take(Some(&ids[0])),
            Err(AppError::NotFound(_))
        ));
        let last = ids.last().unwrap();
        assert_eq!(conversations.take(Some(last)).unwrap().turns, 1);
    }
}
