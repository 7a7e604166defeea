//! `questions`: what a note or a folder answers, as one short question per topic (as
//! ask-a-document tools suggest questions for a newly opened article).
//!
//! The paragraphs are the index's chunks of the note or folder, verified against the current
//! files like `ask`'s passages, with the vectors the index already holds: no new embedding call.
//! They are clustered by spherical k-means (cosine similarity of unit vectors) seeded by
//! k-means++ with a fixed seed, so the same text gives the same topics; `k` grows with the
//! square root of the paragraph count ([`cluster_count`]). Each topic's passages are ordered by
//! closeness to its centre; the model gets the closest few and writes one question in their
//! language. Offline, the topic's most central passage is shown instead.

use quire_search::cluster::kmeans;
use std::collections::HashMap;

use quire_llm::{CancelToken, ChatModel, ChatRequest};
use quire_search::Searcher;
use serde::Serialize;

use crate::ask::shorten;
use crate::context::{
    Candidate, ChunkRef, Dropped, Passage, SourceReader, link_target, number_sources,
};
use crate::error::AssistError;
use crate::prompt;

/// The seed of k-means++: fixed, so topics are reproducible.
pub const SEED: u64 = 0x5eed_0f90_1700;
/// Passages per topic given to the model.
const PASSAGES_PER_QUESTION: usize = 3;
/// Code points of one passage given to the model.
const PASSAGE_BUDGET: usize = 1_200;
/// Paragraphs shorter than this many words (a lone heading, a link) are not a topic's material.
const MIN_WORDS: usize = 4;

/// A note or a folder.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Scope {
    /// One note, by vault-relative path.
    Note(String),
    /// A vault-relative folder, any depth below it included (`""` is the whole vault).
    Folder(String),
}

impl Scope {
    /// Whether the note at vault-relative `path` is in the scope.
    pub fn contains(&self, path: &str) -> bool {
        match self {
            Scope::Note(note) => note == path,
            Scope::Folder(folder) => {
                let folder = folder.trim_matches('/');
                folder.is_empty()
                    || path
                        .strip_prefix(folder)
                        .is_some_and(|rest| rest.starts_with('/'))
            }
        }
    }
}

impl std::fmt::Display for Scope {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Scope::Note(path) => f.write_str(path),
            Scope::Folder(folder) => write!(f, "{}/", folder.trim_matches('/')),
        }
    }
}

/// How many topics `paragraphs` paragraphs make: √(n/2) rounded, between 2 and 8, and never
/// more than there are paragraphs.
pub fn cluster_count(paragraphs: usize) -> usize {
    let k = ((paragraphs as f64 / 2.0).sqrt().round() as usize).clamp(2, 8);
    k.min(paragraphs)
}

/// A paragraph verified against its file, with its vector from the index.
#[derive(Debug, Clone)]
pub struct Paragraph {
    /// The chunk as it is in the file now.
    pub passage: Passage,
    /// The chunk's unit vector, from the index.
    pub vector: Vec<f32>,
}

/// The paragraphs of `scope` with the index's vectors, in note and document order, and the
/// chunks that no longer match their files.
pub fn load_paragraphs(
    searcher: &Searcher,
    reader: &SourceReader,
    scope: &Scope,
) -> Result<(Vec<Paragraph>, Vec<Dropped>), AssistError> {
    let space = searcher.space()?.ok_or_else(|| {
        AssistError::Unusable(
            "questions groups the paragraphs by their vectors, and this index has none: fetch the \
             model (scripts/fetch-model.sh) and run `quire index`"
                .to_string(),
        )
    })?;
    let store = searcher.store();
    let (keys, matrix) = store.vectors(&space.id(), space.dimension)?;
    let mut vectors: HashMap<(&str, &str), &[f32]> = HashMap::new();
    for (i, (path, id)) in keys.iter().enumerate() {
        if scope.contains(path) {
            let row = &matrix[i * space.dimension..(i + 1) * space.dimension];
            vectors.insert((path.as_str(), id.as_str()), row);
        }
    }
    let notes = store.notes()?;
    let mut paragraphs = Vec::new();
    let mut dropped = Vec::new();
    for note in notes.iter().filter(|n| scope.contains(&n.path)) {
        let chunks: Vec<ChunkRef> = store
            .chunks(Some(&note.path))?
            .into_iter()
            .filter(|c| vectors.contains_key(&(note.path.as_str(), c.id.as_str())))
            .map(|c| ChunkRef {
                id: c.id,
                content_hash: c.content_hash,
                heading_path: c.heading_path,
                start_line: c.start_line,
                end_line: c.end_line,
                score: 0.0,
            })
            .collect();
        let candidate = Candidate {
            path: note.path.clone(),
            title: note.title.clone(),
            link: link_target(&note.path, notes.iter().map(|n| n.path.as_str())),
            score: 0.0,
            chunks,
        };
        let (passages, lost) = reader.verified_passages(&candidate);
        dropped.extend(lost);
        for passage in passages {
            if passage.text.split_whitespace().count() < MIN_WORDS {
                continue;
            }
            if let Some(vector) = vectors.get(&(note.path.as_str(), passage.chunk_id.as_str())) {
                paragraphs.push(Paragraph {
                    vector: vector.to_vec(),
                    passage,
                });
            }
        }
    }
    Ok((paragraphs, dropped))
}

fn dot(a: &[f32], b: &[f32]) -> f32 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

/// The paragraphs grouped into `k` topics: largest topic first (ties: the one whose first
/// paragraph comes first), each topic's passages closest to its centre first.
pub fn topics(paragraphs: Vec<Paragraph>, k: usize) -> Vec<Vec<Passage>> {
    let points: Vec<&[f32]> = paragraphs.iter().map(|p| p.vector.as_slice()).collect();
    let clustering = kmeans(&points, k, SEED);
    let mut groups: Vec<Vec<(f32, usize)>> = vec![Vec::new(); clustering.centroids.len()];
    for (i, &c) in clustering.assignments.iter().enumerate() {
        groups[c].push((dot(points[i], &clustering.centroids[c]), i));
    }
    for group in &mut groups {
        group.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
    }
    groups.retain(|g| !g.is_empty());
    groups.sort_by_key(|g| {
        (
            std::cmp::Reverse(g.len()),
            g.iter().map(|(_, i)| *i).min().unwrap_or(0),
        )
    });
    groups
        .into_iter()
        .map(|g| {
            g.into_iter()
                .map(|(_, i)| paragraphs[i].passage.clone())
                .collect()
        })
        .collect()
}

/// Where a passage is.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PassageRef {
    /// Vault-relative path of the note.
    pub path: String,
    /// The headings above the passage, outermost first.
    pub heading_path: Vec<String>,
    /// First line, 1-based.
    pub start_line: usize,
    /// Last line, inclusive.
    pub end_line: usize,
}

impl PassageRef {
    fn of(p: &Passage) -> PassageRef {
        PassageRef {
            path: p.path.clone(),
            heading_path: p.heading_path.clone(),
            start_line: p.start_line,
            end_line: p.end_line,
        }
    }
}

/// One topic: its question (or, offline, its most central passage) and where its text is.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Topic {
    /// The topic's position among the topics asked about, from 1.
    pub number: usize,
    /// The model's question; `None` offline or when the model gave nothing usable.
    pub question: Option<String>,
    /// The passage closest to the topic's centre.
    pub central: PassageRef,
    /// The central passage's text, cut at a line or word end to at most 600 code points (then
    /// `…` marks the cut).
    pub central_text: String,
    /// Every passage of the topic, closest first.
    pub passages: Vec<PassageRef>,
}

/// Asks the model for one question per topic, calling `on_topic` as each is ready. Without a
/// model each topic shows its central passage.
pub fn ask_questions(
    model: Option<&dyn ChatModel>,
    topics: &[Vec<Passage>],
    cancel: &CancelToken,
    on_topic: &mut dyn FnMut(&Topic),
) -> Result<Vec<Topic>, AssistError> {
    let mut out = Vec::new();
    for (n, passages) in topics.iter().enumerate() {
        let Some(central) = passages.first() else {
            continue;
        };
        let question = match model {
            None => None,
            Some(model) => {
                let material: Vec<Passage> = passages
                    .iter()
                    .take(PASSAGES_PER_QUESTION)
                    .map(|p| Passage {
                        text: shorten(&p.text, PASSAGE_BUDGET),
                        ..p.clone()
                    })
                    .collect();
                let sources = number_sources(material, 1);
                let mut request = ChatRequest::new(prompt::question_messages(&sources));
                request.temperature = Some(0.3);
                let completion = model.stream(&request, cancel, &mut |_| {})?;
                question_line(&completion.text)
            }
        };
        let topic = Topic {
            number: n + 1,
            question,
            central: PassageRef::of(central),
            central_text: shorten(&central.text, 600),
            passages: passages.iter().map(PassageRef::of).collect(),
        };
        on_topic(&topic);
        out.push(topic);
    }
    Ok(out)
}

/// The question in a model's reply: its first non-empty line, without list marks, quotes or
/// citations.
fn question_line(reply: &str) -> Option<String> {
    let line = reply.lines().map(str::trim).find(|l| !l.is_empty())?;
    let line = crate::cite::rewrite_citations(line, &[], |_| String::new());
    let line = strip_list_mark(&line)
        .trim()
        .trim_start_matches(['"', '\'', '“', '«', '「'])
        .trim_end_matches(['"', '\'', '”', '»', '」'])
        .trim();
    let line = shorten(line, 240);
    (!line.is_empty()).then_some(line)
}

/// `1. `, `2) `, `- `, `* ` at the start of a line, and nothing else: "3D printing…" keeps its 3.
fn strip_list_mark(line: &str) -> &str {
    let digits = line.len() - line.trim_start_matches(|c: char| c.is_ascii_digit()).len();
    let rest = &line[digits..];
    let marked = if digits > 0 {
        rest.strip_prefix(['.', ')'])
    } else {
        rest.strip_prefix(['-', '*'])
    };
    match marked {
        Some(after) if after.is_empty() || after.starts_with(char::is_whitespace) => after,
        _ => line,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn k_grows_with_the_square_root_of_the_length() {
        let ks: Vec<usize> = [0, 1, 2, 3, 8, 18, 32, 50, 128, 1000]
            .iter()
            .map(|&n| cluster_count(n))
            .collect();
        assert_eq!(ks, [0, 1, 2, 2, 2, 3, 4, 5, 8, 8]);
    }

    #[test]
    fn folders_contain_notes_at_any_depth() {
        let folder = Scope::Folder("Resources/".into());
        assert!(folder.contains("Resources/Recipes/Miso Soup.md"));
        assert!(!folder.contains("Resources2/x.md"));
        assert!(Scope::Folder(String::new()).contains("Home.md"));
    }

    #[test]
    fn the_question_is_the_first_line_without_decoration() {
        assert_eq!(
            question_line("\n1. \"How often is the starter fed?\" [S1]\nMore").as_deref(),
            Some("How often is the starter fed?")
        );
        assert_eq!(question_line("  \n "), None);
        // A leading number that is not a list mark is part of the question.
        assert_eq!(
            question_line("3D printing: what layer height do I use?").as_deref(),
            Some("3D printing: what layer height do I use?")
        );
        assert_eq!(
            question_line("2) - Which tea?").as_deref(),
            Some("- Which tea?")
        );
        assert_eq!(question_line("* Which tea?").as_deref(), Some("Which tea?"));
    }
}
