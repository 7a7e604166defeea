//! `ask`: answers written from the notes, with every citation checked against quire's records.
//!
//! A [`Conversation`] holds the sources given so far and the turns so far. Each turn brings a
//! [`FrozenContext`] (retrieved and verified before generation), numbers its passages (a passage
//! given in an earlier turn keeps its id, new ones continue the numbering), streams the answer
//! through a [`CitationRewriter`](crate::CitationRewriter) and then checks the citations: ids
//! the conversation never gave are removed from the answer and reported, never turned into
//! paths. The source cards are built from the [`Source`] records, not from the answer's text.
//!
//! Without a model the answer is *extractive*: the best passages quoted as they are, with their
//! ids, and labelled as such.

use quire_llm::{CancelToken, ChatModel, ChatRequest, Message, Usage};
use serde::Serialize;

use crate::cite::{removed_warning, stream_cited};
use crate::context::{FrozenContext, Passage, RetrievalReport, Source};
use crate::error::AssistError;
use crate::evidence::Evidence;
use crate::prompt;
use crate::support::{self, CheckedSentence, SupportReport, Thresholds};

/// Passages quoted in an extractive answer.
const EXTRACTIVE_PASSAGES: usize = 3;
/// The longest quote of one passage in an extractive answer, in code points.
const EXTRACTIVE_QUOTE: usize = 700;

/// How an answer was made.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum AnswerKind {
    /// Written by the model from the sources.
    Generated,
    /// No model is configured: the best passages, quoted.
    Extractive,
    /// No passage matched, so no model was asked.
    NothingFound,
}

/// A source as the user sees it, from quire's records.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SourceCard {
    /// The id the model saw (`S1`, …).
    pub id: String,
    /// Vault-relative path of the note.
    pub path: String,
    /// The note's title.
    pub title: String,
    /// The headings above the passage, outermost first.
    pub heading_path: Vec<String>,
    /// First line of the passage in the note, 1-based.
    pub start_line: usize,
    /// Last line of the passage, inclusive.
    pub end_line: usize,
    /// An Obsidian link to the passage's section: `[[Note#Heading]]`, or for a PDF to its page:
    /// `[[paper.pdf#page=3]]`.
    pub link: String,
    /// For a PDF, the passage's page (its lines are lines of the extracted text).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub page: Option<u32>,
    /// Whether the answer cites it.
    pub cited: bool,
}

impl SourceCard {
    /// The card of `source`; `cited` says whether the answer cites it.
    pub fn of(source: &Source, cited: bool) -> SourceCard {
        let p = &source.passage;
        let page = p.pdf_page();
        let link = match (page, p.heading_path.last()) {
            (Some(_), _) => format!("[[{}]]", p.place_link()),
            (None, Some(heading)) => format!("[[{}#{}]]", p.link, heading),
            (None, None) => format!("[[{}]]", p.link),
        };
        SourceCard {
            id: source.id.clone(),
            path: p.path.clone(),
            title: p.title.clone(),
            heading_path: p.heading_path.clone(),
            start_line: p.start_line,
            end_line: p.end_line,
            link,
            page,
            cited,
        }
    }
}

/// One valid citation: the id and where it points.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CitedSource {
    /// The id as cited (`S3`).
    pub id: String,
    /// Vault-relative path of the cited note.
    pub path: String,
    /// First line of the cited passage, 1-based.
    pub start_line: usize,
    /// Last line of the cited passage, inclusive.
    pub end_line: usize,
    /// For a PDF, the cited passage's page: `path#page=N` opens it there.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub page: Option<u32>,
}

/// One answer (the `--json` output of `quire ask`).
#[derive(Debug, Clone, Serialize)]
pub struct Answer {
    /// Generated, extractive, or nothing found.
    pub kind: AnswerKind,
    /// The answer as shown: unknown citations removed.
    pub answer: String,
    /// The known ids it cites, in order of first use.
    pub citations: Vec<CitedSource>,
    /// Ids it cites that no source has; they were removed from `answer`.
    pub invalid_citations: Vec<String>,
    /// This turn's sources, then any earlier source the answer cites.
    pub sources: Vec<SourceCard>,
    /// Things the reader should know (no citation at all, removed citations).
    pub warnings: Vec<String>,
    /// How this turn's context was put together.
    pub retrieval: RetrievalReport,
    /// The model that wrote the answer ([`ChatModel::name`]); `None` unless generated.
    pub model: Option<String>,
    /// Token counts, when the model's server reported them.
    pub usage: Option<Usage>,
    /// How well the passages seem to support an answer (see [`crate::evidence`]).
    pub evidence: Option<Evidence>,
    /// Offline: `false` when the notes do not seem to cover the question (the passages are the
    /// closest, shown as such); `None` when not assessed.
    pub covered: Option<bool>,
    /// Each sentence of a generated answer with its citations checked against the text of the
    /// sources, and those quire added to uncited sentences (see [`crate::support`]).
    pub sentences: Vec<CheckedSentence>,
    /// The summary of that check; `None` when nothing was answered.
    pub support: Option<SupportReport>,
}

impl Answer {
    /// Checks a generated answer's sentences against `sources` (every source of the
    /// conversation): `cosines[sentence][source]` as [`support::check`] takes them, or `None`
    /// for words only, with `note` saying why; `thresholds` for the model that made the
    /// cosines ([`Thresholds::for_model`]). Other answers are left as they are.
    pub fn check_support(
        &mut self,
        sources: &[Source],
        cosines: Option<&[Vec<Option<f32>>]>,
        note: Option<String>,
        thresholds: &Thresholds,
    ) {
        if self.kind != AnswerKind::Generated {
            return;
        }
        let (sentences, report) = support::check(&self.answer, sources, cosines, note, thresholds);
        self.sentences = sentences;
        self.support = Some(report);
    }

    /// Why `--strict` withholds this answer: a sentence the model cited is unsupported or
    /// misattributed. `None` when it may be shown.
    pub fn strict_refusal(&self) -> Option<String> {
        let report = self.support.as_ref()?;
        let failing = report.unsupported + report.misattributed;
        (failing > 0).then(|| {
            format!(
                "{failing} of {} cited sentences are not supported by the source they cite",
                report.cited
            )
        })
    }
}

/// Why a words-only check was all there was.
pub const WORDS_ONLY_NOTE: &str =
    "no embedder: sentences were compared with their sources by shared words only";

/// A conversation: one-shot `ask` is a conversation of one turn.
#[derive(Debug, Clone, Default)]
pub struct Conversation {
    /// Every source given so far, with its id.
    sources: Vec<Source>,
    /// The user and assistant messages of the turns so far (the system prompt is added per call).
    history: Vec<Message>,
    questions: Vec<String>,
}

impl Conversation {
    /// A conversation with no turn yet.
    pub fn new() -> Conversation {
        Conversation::default()
    }

    /// Every source given so far, in id order (`S1` first).
    pub fn sources(&self) -> &[Source] {
        &self.sources
    }

    /// The user and assistant messages of the generated turns so far, as the model sees them again.
    pub fn history(&self) -> &[Message] {
        &self.history
    }

    /// What to search for: a follow-up ("and in summer?") is searched together with the
    /// question before it, which names what it is about.
    pub fn retrieval_query(&self, question: &str) -> String {
        match self.questions.last() {
            Some(previous) => format!("{previous} {question}"),
            None => question.to_string(),
        }
    }

    /// Answers `question` from `context`, streaming the shown text to `on_text`. Without a
    /// model the answer is extractive. A cancelled or failed turn leaves the conversation as
    /// it was.
    pub fn ask(
        &mut self,
        model: Option<&dyn ChatModel>,
        context: FrozenContext,
        question: &str,
        cancel: &CancelToken,
        on_text: &mut dyn FnMut(&str),
    ) -> Result<Answer, AssistError> {
        let FrozenContext {
            passages,
            report,
            evidence,
            lead,
        } = context;
        let (turn, new) = self.number(passages);
        if turn.is_empty() && self.sources.is_empty() {
            // Nothing to answer from: asking a model would only invite an answer from elsewhere.
            let text = nothing_found(&report);
            on_text(&text);
            return Ok(answer(
                AnswerKind::NothingFound,
                text,
                &[],
                &[],
                &[],
                Vec::new(),
                report,
            ));
        }
        let Some(model) = model else {
            let weak = evidence.clone().filter(|e| e.weak);
            let text = match &weak {
                Some(evidence) => not_covered_answer(&turn, evidence),
                None => extractive_answer(&turn, &lead),
            };
            on_text(&text);
            // Offline turns are remembered too: the next follow-up is searched with this
            // question, and a passage keeps its id for the rest of the conversation.
            self.sources.extend(new);
            self.questions.push(question.to_string());
            let quoted: Vec<&str> = turn
                .iter()
                .take(EXTRACTIVE_PASSAGES)
                .map(|s| s.id.as_str())
                .collect();
            let mut result = answer(
                AnswerKind::Extractive,
                text,
                &turn,
                &turn,
                &quoted,
                Vec::new(),
                report,
            );
            let covered = evidence.is_some();
            result.evidence = evidence;
            if weak.is_some() {
                result.covered = Some(false);
                result.warnings.push(
                    "the notes do not seem to cover this question: the passages shown are the closest, probably not an answer"
                        .to_string(),
                );
            } else if covered {
                result.covered = Some(true);
            }
            result.support = Some(SupportReport::by_construction());
            return Ok(result);
        };
        let earlier = self.sources.len();
        let all: Vec<Source> = self.sources.iter().chain(&new).cloned().collect();
        let known: Vec<&str> = all.iter().map(|s| s.id.as_str()).collect();
        let user = prompt::ask_turn(&new, earlier, question);
        let mut messages = vec![prompt::system(prompt::ASK_SYSTEM)];
        messages.extend(self.history.iter().cloned());
        messages.push(Message::user(user.clone()));
        let mut request = ChatRequest::new(messages);
        request.temperature = Some(0.2);
        let cited = stream_cited(
            model,
            &request,
            &known,
            |ids| format!("[{}]", ids.join(", ")),
            cancel,
            on_text,
        )?;

        self.sources.extend(new);
        self.history.push(Message::user(user));
        // The model sees its earlier answers as shown: without the ids it invented.
        self.history.push(Message::assistant(cited.text.clone()));
        self.questions.push(question.to_string());

        let valid: Vec<&str> = cited.citations.valid.iter().map(String::as_str).collect();
        let mut result = answer(
            AnswerKind::Generated,
            cited.text,
            &turn,
            &self.sources,
            &valid,
            cited.citations.invalid,
            report,
        );
        result.model = Some(model.name());
        result.usage = cited.usage;
        result.evidence = evidence;
        // Words only here; a caller with an embedder checks again with cosines
        // (`quire_app::ask::check_support`).
        result.check_support(
            &self.sources,
            None,
            Some(WORDS_ONLY_NOTE.to_string()),
            &Thresholds::DEFAULT,
        );
        Ok(result)
    }

    /// Gives each passage its id: the id it had when an earlier turn gave it, else the next
    /// one. Returns this turn's sources and the new ones among them.
    fn number(&self, passages: Vec<Passage>) -> (Vec<Source>, Vec<Source>) {
        let mut turn = Vec::new();
        let mut new: Vec<Source> = Vec::new();
        for passage in passages {
            let same = |s: &&Source| {
                s.passage.path == passage.path
                    && s.passage.chunk_id == passage.chunk_id
                    && s.passage.content_hash == passage.content_hash
            };
            if let Some(known) = self.sources.iter().find(same) {
                turn.push(known.clone());
                continue;
            }
            let source = Source {
                id: format!("S{}", self.sources.len() + new.len() + 1),
                passage,
            };
            new.push(source.clone());
            turn.push(source);
        }
        (turn, new)
    }
}

/// Builds an [`Answer`]: citations resolved through `all` (every source of the conversation),
/// cards for this turn's sources plus the earlier ones it cites.
fn answer(
    kind: AnswerKind,
    text: String,
    turn: &[Source],
    all: &[Source],
    valid: &[&str],
    invalid: Vec<String>,
    retrieval: RetrievalReport,
) -> Answer {
    let citations: Vec<CitedSource> = valid
        .iter()
        .filter_map(|id| all.iter().find(|s| s.id == *id))
        .map(|s| CitedSource {
            id: s.id.clone(),
            path: s.passage.path.clone(),
            start_line: s.passage.start_line,
            end_line: s.passage.end_line,
            page: s.passage.pdf_page(),
        })
        .collect();
    let mut sources: Vec<SourceCard> = turn
        .iter()
        .map(|s| SourceCard::of(s, valid.contains(&s.id.as_str())))
        .collect();
    for id in valid {
        if !turn.iter().any(|s| s.id == *id)
            && let Some(earlier) = all.iter().find(|s| s.id == *id)
        {
            sources.push(SourceCard::of(earlier, true));
        }
    }
    let mut warnings = Vec::new();
    if kind == AnswerKind::Generated && citations.is_empty() {
        warnings.push(
            "the answer cites no source: check it against the sources before relying on it"
                .to_string(),
        );
    }
    warnings.extend(removed_warning("sources", &invalid));
    warnings.extend(retrieval.notes.iter().cloned());
    Answer {
        kind,
        answer: text,
        citations,
        invalid_citations: invalid,
        sources,
        warnings,
        retrieval,
        model: None,
        usage: None,
        evidence: None,
        covered: None,
        sentences: Vec::new(),
        support: None,
    }
}

/// The offline answer when the evidence is weak: says so, then the closest passages.
pub fn not_covered_answer(sources: &[Source], evidence: &Evidence) -> String {
    let measure = match (&evidence.unmatched, evidence.best_cosine) {
        (Some(word), _) if evidence.absent => format!("“{word}” is in none of your notes"),
        (Some(word), _) => format!("no passage speaks to “{word}”"),
        (None, Some(cosine)) => format!("best similarity {cosine:.2}"),
        (None, None) => format!(
            "the best passage has {:.0}% of the question's words",
            evidence.coverage * 100.0
        ),
    };
    let mut text = format!(
        "Your notes do not seem to cover this question ({measure}). The closest passages, \
         probably not an answer:\n"
    );
    quote_sources(&mut text, sources);
    text
}

/// The offline answer: the sentences closest to the question first (`lead`, when a model ranked
/// them), then the best passages quoted as written, each under its source header.
pub fn extractive_answer(sources: &[Source], lead: &[crate::lead::LeadSentence]) -> String {
    let mut text = String::from(
        "Extractive answer (no language model is configured): the passages of your notes that \
         best match the question, quoted as written. Nothing here is generated.\n",
    );
    let led: Vec<String> = lead
        .iter()
        .filter_map(|l| {
            let source = sources
                .iter()
                .find(|s| s.passage.path == l.path && s.passage.chunk_id == l.chunk_id)?;
            Some(format!(
                "> {} [{}] ({}:{})\n",
                l.sentence.replace('\n', " "),
                source.id,
                l.path,
                l.line
            ))
        })
        .collect();
    if !led.is_empty() {
        text.push_str("\nThe sentences closest to the question:\n");
        for line in led {
            text.push_str(&line);
        }
    }
    quote_sources(&mut text, sources);
    text
}

/// The first [`EXTRACTIVE_PASSAGES`] sources, each quoted under its header.
fn quote_sources(text: &mut String, sources: &[Source]) {
    for source in sources.iter().take(EXTRACTIVE_PASSAGES) {
        text.push('\n');
        text.push_str(&prompt::source_header(source));
        text.push('\n');
        for line in shorten(&source.passage.text, EXTRACTIVE_QUOTE).lines() {
            text.push_str("> ");
            text.push_str(line);
            text.push('\n');
        }
    }
}

fn nothing_found(report: &RetrievalReport) -> String {
    match (&report.date_range, report.dropped.is_empty()) {
        (Some(range), _) => format!(
            "No passage of your notes matches the question in the daily notes of {range}, so there is nothing to answer from."
        ),
        (None, false) => "The passages that matched changed since the index was built, so there is nothing current to answer from: run `quire index` and ask again.".to_string(),
        (None, true) => "No passage of your notes matches the question, so there is nothing to answer from.".to_string(),
    }
}

/// `text` cut to `max` code points at a line or word end, with `…` when cut.
pub(crate) fn shorten(text: &str, max: usize) -> String {
    let text = text.trim();
    if text.chars().count() <= max {
        return text.to_string();
    }
    let cut: String = text.chars().take(max).collect();
    let end = cut
        .rfind('\n')
        .filter(|&i| i > cut.len() / 2)
        .or_else(|| cut.rfind(' ').filter(|&i| i > cut.len() / 2))
        .unwrap_or(cut.len());
    format!("{}…", cut[..end].trim_end())
}
