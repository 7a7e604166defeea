//! The context of an answer: which passages of which notes a model gets to read.
//!
//! Three steps, after the ask-your-vault design that retrieval-augmented note tools share:
//!
//! 1. [`retrieve`]: the index's hybrid (or BM25) search proposes candidates, up to
//!    `candidate_notes` notes with up to `candidate_chunks` chunks each, as the store recorded them
//!    (stable chunk id, content hash, lines);
//! 2. [`materialize`]: each candidate note is read again from its **current file** and chunked
//!    with the same chunker and settings as the index ([`quire_vault::chunk_note`] with the vault's
//!    [`VaultSettings`] and [`ApproxTokenCounter`], as `quire_index::sync` does). A chunk is kept
//!    only if a chunk with the same id still exists and has the same content hash; otherwise it
//!    is dropped and reported, never sent from the stale index. The text sent is the current one;
//! 3. [`select`] (pure): diversity and budget. The first round takes one passage from each note,
//!    best note first, until `notes` notes are chosen; later rounds add further passages of the
//!    chosen notes, up to `chunks_per_note`. A passage that does not fit the code-point budget
//!    is left out and the next one is tried, so one long note cannot crowd out the others.
//!
//! The result, a [`FrozenContext`], owns all its text: nothing in it borrows the index, so the
//! searcher can be dropped (and the index rebuilt) while a model writes.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

use quire_search::{AnswerIndex, Mode, SearchRequest};
use quire_vault::chunk::{ApproxTokenCounter, chunk_note};
use quire_vault::scan::{decode_note, read_note_bytes};
use quire_vault::vault::check_confined;
use quire_vault::{Chunk, Note, OpenOptions, VaultSettings, parse_note};
use serde::Serialize;

use crate::dates::DateRange;
use crate::error::AssistError;

/// How much context a model gets. The defaults are the seed's: 12 candidate notes × 3 chunks,
/// then at most 6 notes × 2 chunks within 12,000 code points.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct ContextLimits {
    /// Notes asked of the index.
    pub candidate_notes: usize,
    /// Chunks per candidate note.
    pub candidate_chunks: usize,
    /// Notes in the final context.
    pub notes: usize,
    /// Passages per note in the final context.
    pub chunks_per_note: usize,
    /// The most Unicode code points of passage text in the final context.
    pub budget: usize,
}

impl Default for ContextLimits {
    fn default() -> ContextLimits {
        ContextLimits {
            candidate_notes: 12,
            candidate_chunks: 3,
            notes: 6,
            chunks_per_note: 2,
            budget: 12_000,
        }
    }
}

/// What to retrieve.
#[derive(Debug, Clone)]
pub struct RetrievalRequest {
    /// What to search for; blank: no search, only the notes of `only`.
    pub query: String,
    /// The retriever (BM25 from [`RetrievalRequest::new`]).
    pub mode: Mode,
    /// How many candidates to ask for.
    pub limits: ContextLimits,
    /// When set, only these notes may be candidates (a date phrase's daily notes). Those the
    /// search does not rank are added after the ranked ones, in this order.
    pub only: Option<Vec<String>>,
    /// Notes never used (the note being drafted).
    pub exclude: Vec<String>,
    /// The date range that produced `only`, for the report.
    pub date_range: Option<DateRange>,
    /// The search's filter (folder, tag, frontmatter conditions, dates).
    pub filter: quire_index::Filter,
    /// A passage a model wrote for the query, searched with it ([`write_expansion`]).
    pub expansion: Option<String>,
}

/// Has `model` write a passage that could answer `question` (two or three sentences, at most 96
/// tokens, temperature 0), for a search with the question and the passage (query2doc). Returns
/// the passage (blank when the model wrote nothing) and the model's seconds.
///
/// On the paraphrase dev set with a local 1.5B model this lifted the answering note's recall@5
/// from 0.492 to 0.569 at about 4 s a question (docs/fusion-variants.md).
pub fn write_expansion(
    model: &dyn quire_llm::ChatModel,
    question: &str,
    cancel: &quire_llm::CancelToken,
) -> Result<(String, f64), crate::error::AssistError> {
    let request = quire_llm::ChatRequest {
        temperature: Some(0.0),
        max_tokens: Some(96),
        ..quire_llm::ChatRequest::new(crate::prompt::expansion_messages(question))
    };
    let started = std::time::Instant::now();
    let answer = model.stream(&request, cancel, &mut |_| {})?;
    Ok((
        answer.text.trim().to_string(),
        started.elapsed().as_secs_f64(),
    ))
}

impl RetrievalRequest {
    /// A BM25 retrieval of `query` with no filter.
    pub fn new(query: impl Into<String>, limits: ContextLimits) -> RetrievalRequest {
        RetrievalRequest {
            query: query.into(),
            mode: Mode::Bm25,
            limits,
            only: None,
            exclude: Vec::new(),
            date_range: None,
            filter: quire_index::Filter::default(),
            expansion: None,
        }
    }
}

/// A chunk as the index recorded it.
#[derive(Debug, Clone, PartialEq)]
pub struct ChunkRef {
    /// The chunk's stable id within its note.
    pub id: String,
    /// blake3 of the chunk's indexed text, as the store recorded it.
    pub content_hash: String,
    /// The headings above the chunk, outermost first.
    pub heading_path: Vec<String>,
    /// First line, 1-based, when it was indexed.
    pub start_line: usize,
    /// Last line, inclusive, when it was indexed.
    pub end_line: usize,
    /// The chunk's search score (0 for a chunk of a note `only` added unranked).
    pub score: f32,
}

/// A note the index proposes, with its best chunks.
#[derive(Debug, Clone, PartialEq)]
pub struct Candidate {
    /// Vault-relative path.
    pub path: String,
    /// The note's title, as indexed.
    pub title: String,
    /// The wikilink target that names this note ([`link_target`]).
    pub link: String,
    /// The score of its best chunk (0 for a note `only` added unranked).
    pub score: f32,
    /// At most `candidate_chunks` chunks, best first (a note added unranked: its first ones).
    pub chunks: Vec<ChunkRef>,
}

/// The candidates of one retrieval, before the files are read again.
#[derive(Debug, Clone)]
pub struct Retrieval {
    /// The query searched.
    pub query: String,
    /// The retriever used.
    pub mode: Mode,
    /// The index generation the candidates come from.
    pub generation: u64,
    /// The date range that limited the candidates, if any.
    pub date_range: Option<DateRange>,
    /// Ranked notes best first, then the notes of `only` the search did not rank, in their order.
    pub candidates: Vec<Candidate>,
}

/// A passage verified against the current file: what a model may read.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Passage {
    /// Vault-relative path of its note.
    pub path: String,
    /// The note's title, from the file as it is now.
    pub title: String,
    /// The wikilink target of its note.
    pub link: String,
    /// The chunk's stable id within its note.
    pub chunk_id: String,
    /// blake3 of the chunk's indexed text; equal to the index's, or the passage would be dropped.
    pub content_hash: String,
    /// The headings above the passage, outermost first.
    pub heading_path: Vec<String>,
    /// First line in the current file, 1-based.
    pub start_line: usize,
    /// Last line in the current file, inclusive.
    pub end_line: usize,
    /// The chunk's Markdown as it is in the file now (comments removed).
    pub text: String,
    /// The chunk's search score (0 for a note added unranked).
    pub score: f32,
}

impl Passage {
    /// For a passage of a PDF, its page (the chunker's `Page N` section).
    pub fn pdf_page(&self) -> Option<u32> {
        quire_vault::pdf::is_pdf(&self.path)
            .then(|| quire_vault::pdf::page_of(&self.heading_path))
            .flatten()
    }

    /// The wikilink target of the passage's place: the note's link, or for a PDF the link that
    /// opens it at the passage's page (`x.pdf#page=3`).
    pub fn place_link(&self) -> String {
        match self.pdf_page() {
            Some(page) => quire_vault::pdf::page_link(&self.link, page),
            None => self.link.clone(),
        }
    }

    /// Its length in Unicode code points, the unit of the budget.
    pub fn code_points(&self) -> usize {
        self.text.chars().count()
    }
}

/// A passage with the id quire gave it (`S1`, `S2`, …). The model sees the id and the text; the
/// path and lines stay in quire's records.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Source {
    /// `S1`, `S2`, …: what the model cites.
    pub id: String,
    /// The passage, serialized inline beside the id.
    #[serde(flatten)]
    pub passage: Passage,
}

/// Numbers passages `S{first}`, `S{first+1}`, ….
pub fn number_sources(passages: Vec<Passage>, first: usize) -> Vec<Source> {
    passages
        .into_iter()
        .enumerate()
        .map(|(i, passage)| Source {
            id: format!("S{}", first + i),
            passage,
        })
        .collect()
}

/// Why a candidate chunk was not sent.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum DropReason {
    /// The note's file is gone.
    NoteMissing,
    /// The file exists but is not readable text (or is too large).
    Unreadable,
    /// No chunk of the current file has this id any more.
    ChunkGone,
    /// The chunk with this id now has other content.
    Changed,
}

impl std::fmt::Display for DropReason {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            DropReason::NoteMissing => "the note is gone",
            DropReason::Unreadable => "the note cannot be read",
            DropReason::ChunkGone => "the passage is gone from the note",
            DropReason::Changed => "the passage changed since it was indexed",
        })
    }
}

/// A candidate chunk that was not sent, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Dropped {
    /// Vault-relative path of the note.
    pub path: String,
    /// The chunk id the index recorded.
    pub chunk_id: String,
    /// Why it was not sent.
    pub reason: DropReason,
}

/// How a context was put together (the `retrieval` object of `quire ask --json`).
#[derive(Debug, Clone, Serialize)]
pub struct RetrievalReport {
    /// The query searched.
    pub query: String,
    /// The retriever used.
    pub mode: Mode,
    /// The index generation the candidates came from.
    pub generation: u64,
    /// The date range that limited the candidates, if any.
    pub date_range: Option<DateRange>,
    /// Notes the index proposed.
    pub candidate_notes: usize,
    /// Chunks of those notes, in all.
    pub candidate_chunks: usize,
    /// Candidate chunks that no longer match their file (`quire index` brings the index up to date).
    pub dropped: Vec<Dropped>,
    /// Verified passages whose text repeats an earlier passage.
    pub duplicates: usize,
    /// Verified passages left out by the note, per-note or budget limits.
    pub left_out: usize,
    /// Passages in the context.
    pub sources: usize,
    /// Their text's length in Unicode code points (at most `limits.budget`).
    pub code_points: usize,
    /// The limits applied.
    pub limits: ContextLimits,
    /// What the user should know about how the passages were chosen (e.g. a date phrase whose
    /// days have no daily notes, so the whole vault was searched).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
    /// The retriever that chose the passages (`hybrid` covers BM25 and vector search too).
    pub retriever: crate::descent::Retriever,
    /// What the tree descent opened and why, when it ran.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub descent: Option<crate::descent::DescentTrace>,
    /// The passage the model wrote for the question and the search used with it, when the
    /// question was expanded.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub expansion: Option<String>,
}

impl RetrievalReport {
    /// `hybrid`, `tree` or `auto`.
    pub fn retriever_name(&self) -> &'static str {
        match self.retriever {
            crate::descent::Retriever::Hybrid => "hybrid",
            crate::descent::Retriever::Tree => "tree",
            crate::descent::Retriever::Auto => "auto",
        }
    }
}

/// The passages of an answer, read and verified before generation starts. It owns its text.
#[derive(Debug, Clone)]
pub struct FrozenContext {
    /// What the model reads: note by note in rank order, within a note in document order.
    pub passages: Vec<Passage>,
    /// How the passages were chosen, and what was dropped or left out.
    pub report: RetrievalReport,
    /// Whether the passages seem to answer the question at all (set by the ask flow).
    pub evidence: Option<crate::evidence::Evidence>,
    /// The sentences of the passages closest in meaning to the question, best first (set by the
    /// ask flow when the answer will be extractive and a model ranks sentences; see
    /// [`crate::lead`]).
    pub lead: Vec<crate::lead::LeadSentence>,
}

/// Reads notes from the vault as they are now, with the index's parse and chunk settings.
#[derive(Debug, Clone)]
pub struct SourceReader {
    settings: VaultSettings,
}

impl SourceReader {
    /// Loads the vault's settings (config file, daily-notes settings, chunk sizes) as
    /// `quire_index::sync` does.
    pub fn open(root: &Path, options: &OpenOptions) -> Result<SourceReader, AssistError> {
        Ok(SourceReader {
            settings: VaultSettings::load(root, options)?,
        })
    }

    /// The canonical vault root.
    pub fn root(&self) -> &Path {
        &self.settings.root
    }

    /// The vault's settings: scan rules, parse and chunk options.
    pub fn settings(&self) -> &VaultSettings {
        &self.settings
    }

    /// The absolute path of a vault-relative note path; paths that could leave the vault are
    /// refused.
    pub fn absolute(&self, path: &str) -> Result<PathBuf, AssistError> {
        check_confined(path)?;
        Ok(self.settings.root.join(path))
    }

    /// The note's bytes as they are on disk now, and its absolute path.
    pub fn read_bytes(&self, path: &str) -> Result<(PathBuf, Vec<u8>), AssistError> {
        let abs = self.absolute(path)?;
        // A regular file only (a FIFO is refused without blocking), within the size cap.
        let bytes = read_note_bytes(&abs, self.settings.scan.max_file_bytes).map_err(|reason| {
            AssistError::Unreadable {
                path: path.to_string(),
                reason: reason.to_string(),
            }
        })?;
        Ok((abs, bytes))
    }

    /// Parses note bytes read from `path` with the vault's settings.
    pub fn parse(&self, path: &str, bytes: Vec<u8>) -> Result<Note, AssistError> {
        let text = decode_note(bytes).map_err(|reason| AssistError::Unreadable {
            path: path.to_string(),
            reason: reason.to_string(),
        })?;
        Ok(parse_note(path, &text, &self.settings.parse))
    }

    /// The note at `path` as it is on disk now: a Markdown note parsed, a canvas or a PDF read as
    /// the index reads it ([`quire_vault::document`]), so a PDF's passages are its pages' text.
    pub fn read_note(&self, path: &str) -> Result<Note, AssistError> {
        let abs = self.absolute(path)?;
        quire_vault::document::read_document(path, &abs, &self.settings)
            .map(|loaded| loaded.note)
            .map_err(|reason| AssistError::Unreadable {
                path: path.to_string(),
                reason: reason.to_string(),
            })
    }

    /// The note's chunks, cut exactly as the index cuts them.
    pub fn chunks(&self, note: &Note) -> Vec<Chunk> {
        chunk_note(note, &self.settings.chunk, &ApproxTokenCounter)
    }

    /// The candidate's chunks that still match the current file, as passages, and the rest as
    /// dropped.
    pub fn verified_passages(&self, candidate: &Candidate) -> (Vec<Passage>, Vec<Dropped>) {
        let dropped = |chunk: &ChunkRef, reason| Dropped {
            path: candidate.path.clone(),
            chunk_id: chunk.id.clone(),
            reason,
        };
        let note = match self.read_note(&candidate.path) {
            Ok(note) => note,
            Err(_) => {
                let reason = match self.absolute(&candidate.path) {
                    Ok(abs) if abs.exists() => DropReason::Unreadable,
                    _ => DropReason::NoteMissing,
                };
                let lost = candidate
                    .chunks
                    .iter()
                    .map(|c| dropped(c, reason))
                    .collect();
                return (Vec::new(), lost);
            }
        };
        let current = self.chunks(&note);
        let mut passages = Vec::new();
        let mut lost = Vec::new();
        for wanted in &candidate.chunks {
            match verify(&current, wanted) {
                Ok(chunk) => passages.push(Passage {
                    path: candidate.path.clone(),
                    title: note.title.clone(),
                    link: candidate.link.clone(),
                    chunk_id: chunk.id.clone(),
                    content_hash: chunk.content_hash.clone(),
                    heading_path: chunk.heading_path.clone(),
                    start_line: chunk.start_line,
                    end_line: chunk.end_line,
                    text: chunk.body.trim_end().to_string(),
                    score: wanted.score,
                }),
                Err(reason) => lost.push(dropped(wanted, reason)),
            }
        }
        (passages, lost)
    }
}

/// The current chunk that the index's chunk still describes: the same stable id and the same
/// content hash. Anything else is stale.
pub fn verify<'c>(current: &'c [Chunk], wanted: &ChunkRef) -> Result<&'c Chunk, DropReason> {
    let chunk = current
        .iter()
        .find(|c| c.id == wanted.id)
        .ok_or(DropReason::ChunkGone)?;
    if chunk.content_hash != wanted.content_hash {
        return Err(DropReason::Changed);
    }
    Ok(chunk)
}

/// The wikilink target for the note at `path`: its file name when no other note shares it (as
/// Obsidian writes links), else its path; `.md` left out either way.
pub fn link_target<'a>(path: &str, all_paths: impl IntoIterator<Item = &'a str>) -> String {
    let stem = |p: &str| -> String {
        let name = p.rsplit('/').next().unwrap_or(p);
        name.strip_suffix(".md").unwrap_or(name).to_lowercase()
    };
    let own = stem(path);
    let namesakes = all_paths.into_iter().filter(|p| stem(p) == own).count();
    let without_md = path.strip_suffix(".md").unwrap_or(path);
    if namesakes <= 1 {
        without_md
            .rsplit('/')
            .next()
            .unwrap_or(without_md)
            .to_string()
    } else {
        without_md.to_string()
    }
}

/// Asks the index for candidates.
pub fn retrieve(
    searcher: &dyn AnswerIndex,
    request: &RetrievalRequest,
) -> Result<Retrieval, AssistError> {
    let notes = searcher.notes()?;
    let titles: HashMap<&str, &str> = notes
        .iter()
        .map(|(path, title)| (path.as_str(), title.as_str()))
        .collect();
    let link = |path: &str| link_target(path, notes.iter().map(|(p, _)| p.as_str()));
    let limits = &request.limits;
    let wanted = limits.candidate_notes.max(1);
    let only: Option<HashSet<&str>> = request
        .only
        .as_ref()
        .map(|o| o.iter().map(String::as_str).collect());
    let allowed = |path: &str| {
        only.as_ref().is_none_or(|o| o.contains(path)) && !request.exclude.iter().any(|e| e == path)
    };

    let mut candidates: Vec<Candidate> = Vec::new();
    let mut generation = searcher.generation()?;
    if !request.query.trim().is_empty() {
        let mut search = SearchRequest::new(request.query.clone());
        search.mode = request.mode;
        search.expansion = request.expansion.clone().filter(|p| !p.trim().is_empty());
        search.filter = request.filter.clone();
        search.sections_per_note = limits.candidate_chunks.max(1);
        // Filters apply after ranking, so a filtered search asks for more notes than it keeps.
        let filtered = only.is_some() || !request.exclude.is_empty();
        search.k = if filtered {
            (wanted * 4).max(100)
        } else {
            wanted
        };
        let results = searcher.search(&search)?;
        generation = results.generation;
        for hit in results.results {
            if candidates.len() >= wanted {
                break;
            }
            if !allowed(&hit.path) {
                continue;
            }
            let mut chunks = Vec::new();
            for section in &hit.sections {
                // The search's sections carry no content hash; the store has it.
                if let Some(row) = searcher.chunk(&hit.path, &section.chunk_id)? {
                    chunks.push(ChunkRef {
                        id: row.id,
                        content_hash: row.content_hash,
                        heading_path: row.heading_path,
                        start_line: row.start_line,
                        end_line: row.end_line,
                        score: section.score,
                    });
                }
            }
            candidates.push(Candidate {
                link: link(&hit.path),
                path: hit.path,
                title: hit.title,
                score: hit.score,
                chunks,
            });
        }
    }
    // Notes the filter names but the search did not rank: their first chunks, in the given order
    // (for "what did I do last week?" the words rank nothing, the dates decide).
    for path in request.only.iter().flatten() {
        if candidates.len() >= wanted {
            break;
        }
        if candidates.iter().any(|c| &c.path == path) || !allowed(path) {
            continue;
        }
        let chunks: Vec<ChunkRef> = searcher
            .note_chunks(path)?
            .into_iter()
            .take(limits.candidate_chunks.max(1))
            .map(|row| ChunkRef {
                id: row.id,
                content_hash: row.content_hash,
                heading_path: row.heading_path,
                start_line: row.start_line,
                end_line: row.end_line,
                score: 0.0,
            })
            .collect();
        if chunks.is_empty() {
            continue;
        }
        candidates.push(Candidate {
            path: path.clone(),
            title: titles
                .get(path.as_str())
                .copied()
                .unwrap_or_default()
                .into(),
            link: link(path),
            score: 0.0,
            chunks,
        });
    }
    Ok(Retrieval {
        query: request.query.clone(),
        mode: request.mode,
        generation,
        date_range: request.date_range,
        candidates,
    })
}

/// Reads every candidate note again, verifies its chunks and selects the final passages.
pub fn materialize(
    reader: &SourceReader,
    retrieval: Retrieval,
    limits: &ContextLimits,
) -> FrozenContext {
    let mut dropped = Vec::new();
    let mut verified = Vec::new();
    let candidate_chunks = retrieval.candidates.iter().map(|c| c.chunks.len()).sum();
    for candidate in &retrieval.candidates {
        let (passages, lost) = reader.verified_passages(candidate);
        dropped.extend(lost);
        verified.push(passages);
    }
    let selection = select(verified, limits);
    FrozenContext {
        lead: Vec::new(),
        report: RetrievalReport {
            query: retrieval.query,
            mode: retrieval.mode,
            generation: retrieval.generation,
            date_range: retrieval.date_range,
            candidate_notes: retrieval.candidates.len(),
            candidate_chunks,
            dropped,
            duplicates: selection.duplicates,
            left_out: selection.left_out,
            sources: selection.passages.len(),
            code_points: selection.code_points,
            limits: *limits,
            notes: Vec::new(),
            retriever: crate::descent::Retriever::Hybrid,
            descent: None,
            expansion: None,
        },
        passages: selection.passages,
        evidence: None,
    }
}

/// The passages chosen from verified candidates.
#[derive(Debug, Clone, PartialEq)]
pub struct Selection {
    /// Note by note in rank order; within a note, in document order.
    pub passages: Vec<Passage>,
    /// Passages dropped because their text repeats a better one's.
    pub duplicates: usize,
    /// Distinct passages not chosen (note, per-note or budget limits).
    pub left_out: usize,
    /// The chosen passages' length in Unicode code points.
    pub code_points: usize,
}

/// Chooses passages with diversity and within the budget (see the module docs). `notes` holds
/// each candidate note's verified passages, best note first, best passage first.
pub fn select(notes: Vec<Vec<Passage>>, limits: &ContextLimits) -> Selection {
    // The same text twice (a template, a pasted paragraph) is sent once, from the better note.
    let mut seen: HashSet<String> = HashSet::new();
    let mut duplicates = 0;
    let notes: Vec<Vec<Passage>> = notes
        .into_iter()
        .map(|passages| {
            passages
                .into_iter()
                .filter(|p| {
                    let new = seen.insert(p.text.clone());
                    duplicates += usize::from(!new);
                    new
                })
                .collect()
        })
        .collect();
    let total: usize = notes.iter().map(Vec::len).sum();
    let mut taken: Vec<Vec<bool>> = notes.iter().map(|n| vec![false; n.len()]).collect();
    let mut chosen: Vec<usize> = Vec::new();
    let mut used = 0;
    for round in 0..limits.chunks_per_note {
        for (n, passages) in notes.iter().enumerate() {
            let member = chosen.contains(&n);
            if (round == 0 && chosen.len() >= limits.notes) || (round > 0 && !member) {
                continue;
            }
            let next = (0..passages.len())
                .find(|&p| !taken[n][p] && used + passages[p].code_points() <= limits.budget);
            if let Some(p) = next {
                taken[n][p] = true;
                used += passages[p].code_points();
                if !member {
                    chosen.push(n);
                }
            }
        }
    }
    let mut passages = Vec::new();
    for &n in &chosen {
        let mut picked: Vec<&Passage> = notes[n]
            .iter()
            .zip(&taken[n])
            .filter(|(_, t)| **t)
            .map(|(p, _)| p)
            .collect();
        picked.sort_by_key(|p| p.start_line);
        passages.extend(picked.into_iter().cloned());
    }
    Selection {
        left_out: total - passages.len(),
        passages,
        duplicates,
        code_points: used,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn passage(path: &str, line: usize, text: &str) -> Passage {
        Passage {
            path: path.into(),
            title: path.into(),
            link: path.into(),
            chunk_id: format!("{path}:{line}"),
            content_hash: String::new(),
            heading_path: Vec::new(),
            start_line: line,
            end_line: line,
            text: text.into(),
            score: 1.0,
        }
    }

    fn limits(notes: usize, per_note: usize, budget: usize) -> ContextLimits {
        ContextLimits {
            notes,
            chunks_per_note: per_note,
            budget,
            ..ContextLimits::default()
        }
    }

    fn picked(selection: &Selection) -> Vec<String> {
        selection
            .passages
            .iter()
            .map(|p| p.chunk_id.clone())
            .collect()
    }

    #[test]
    fn one_big_note_cannot_fill_the_context() {
        let a: Vec<Passage> = (1..=3).map(|i| passage("a", i, &format!("a{i}"))).collect();
        let b = vec![passage("b", 5, "b5"), passage("b", 1, "b1")];
        let c = vec![passage("c", 1, "c1")];
        let s = select(vec![a, b, c], &limits(6, 2, 1000));
        // Two passages at most per note, notes in rank order, lines in document order.
        assert_eq!(picked(&s), ["a:1", "a:2", "b:1", "b:5", "c:1"]);
        assert_eq!(s.left_out, 1);
    }

    #[test]
    fn the_note_limit_keeps_the_best_notes() {
        let notes: Vec<Vec<Passage>> = ["a", "b", "c"]
            .iter()
            .map(|n| vec![passage(n, 1, n)])
            .collect();
        let s = select(notes, &limits(2, 2, 1000));
        assert_eq!(picked(&s), ["a:1", "b:1"]);
        assert_eq!(s.left_out, 1);
    }

    #[test]
    fn the_budget_counts_code_points_and_skips_what_does_not_fit() {
        // 4 code points each in Cyrillic (8 bytes): the budget is not in bytes.
        let a = vec![passage("a", 1, "абвг"), passage("a", 2, "дежз")];
        let b = vec![passage("b", 1, &"x".repeat(50)), passage("b", 2, "ий")];
        let s = select(vec![a, b], &limits(6, 2, 10));
        // Round one: a:1 (4), b:1 does not fit, b:2 does (6); round two: a:2 (10).
        assert_eq!(picked(&s), ["a:1", "a:2", "b:2"]);
        assert_eq!(s.code_points, 10);
    }

    #[test]
    fn repeated_text_is_sent_once() {
        let a = vec![passage("a", 1, "same")];
        let b = vec![passage("b", 1, "same"), passage("b", 2, "other")];
        let s = select(vec![a, b], &limits(6, 2, 1000));
        assert_eq!(picked(&s), ["a:1", "b:2"]);
        assert_eq!(s.duplicates, 1);
    }

    #[test]
    fn link_targets_are_file_names_unless_shared() {
        let paths = ["A/Note.md", "B/note.md", "C/Other.md"];
        assert_eq!(link_target("C/Other.md", paths), "Other");
        assert_eq!(link_target("A/Note.md", paths), "A/Note");
    }
}
