//! Ask an article (the chatpdf seed, 002): answers and questions from a text that is not in the
//! vault, once for every face (`quire ask --file`, `quire questions --file`, `POST
//! /api/article/ask`).
//!
//! The article goes through the vault's own pipeline, in memory: [`parse_note`] and
//! [`chunk_note_bounded`] with the vault's parse and chunk settings (as
//! [`SourceReader::chunks`](quire_assist::context::SourceReader::chunks) cuts notes), the index's
//! embedding model over each chunk's `text` (what `quire_index::sync` embeds), and a hybrid
//! retrieval like the index's: BM25 from an in-memory full-text index with the vault's schema
//! and analyzer ([`quire_index::FullText::in_memory`]) and cosine over the chunk vectors, fused with the index's default method
//! ([`quire_search::fusion::Fusion`]). The chosen passages become an ordinary
//! [`FrozenContext`] under the same [`ContextLimits`], so the prompt, the `[S1]` citation
//! contract, the checks and the offline extractive answer are `quire_assist::ask`'s.
//!
//! **Nothing here is a vault note.** A passage's `path` is the article's display name (its file
//! name, or `stdin`), never resolved in the vault; the answer keeps `[S1]` as written (ask never
//! turns citations into links), and each source card's `link` is the article's location,
//! `NAME:12-18`, in place of the `[[wikilink]]` a note's card carries. Nothing is written into
//! the vault or the index's store.
//!
//! **Cached vectors.** Chunk vectors are kept in [`VectorCache`], `<index>/article-cache/<space
//! id>/<content hash>` (the chunk text's blake3, as the index keys its embeddings, under the
//! embedding space's id, which names the model and its weights): asking the same article again
//! embeds only the question.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use quire_assist::ask::{Answer, AnswerKind, Conversation};
use quire_assist::context::{
    ContextLimits, FrozenContext, Passage, RetrievalReport, Source, select,
};
use quire_assist::descent::Retriever;
use quire_assist::evidence::Evidence;
use quire_assist::questions::Paragraph;
use quire_assist::support::{Thresholds, split_sentences};
use quire_embed::{Embedder, EmbeddingSpace};
use quire_index::{Boosts, Filter, FullText, FullTextDoc};
use quire_llm::{CancelToken, ChatModel};
use quire_search::Mode;
use quire_search::fusion::{Fusion, Ranking, Signal, fuse};
use quire_vault::chunk::{ApproxTokenCounter, chunk_note_bounded};
use quire_vault::scan::{SkipReason, decode_note};
use quire_vault::{Chunk, VaultSettings, parse_note};
use serde::Serialize;

use crate::error::AppError;

/// The largest article read from a file or stdin: 5 MiB, about 2,000 chunks' worth of text
/// (the most one note gives, [`quire_vault::chunk::MAX_CHUNKS_PER_NOTE`]). Over HTTP the body
/// limit ([`crate::limits::MAX_BODY_BYTES`], 64 KiB with the JSON around the text) comes first.
pub const MAX_ARTICLE_BYTES: usize = 5 * 1024 * 1024;

/// The folder of the vector cache inside the index directory.
pub const CACHE_DIR: &str = "article-cache";

/// Paragraphs shorter than this many words are not a topic's material (as
/// `quire_assist::questions` leaves out a lone heading or link).
const MIN_QUESTION_WORDS: usize = 4;

/// The refusal of an article of `bytes` bytes, more than [`MAX_ARTICLE_BYTES`] (known from its
/// size, before anything is read).
pub fn article_too_large(name: &str, bytes: u64) -> AppError {
    AppError::bad_arguments(
        "ask --file",
        format!(
            "{name}: {bytes} bytes is more than an article may have ({} MiB): ask about a part of it",
            MAX_ARTICLE_BYTES / (1024 * 1024)
        ),
    )
}

/// The article's text from `bytes`: at most [`MAX_ARTICLE_BYTES`], UTF-8, not binary. `name`
/// is how errors name it.
pub fn decode_article(name: &str, bytes: Vec<u8>) -> Result<String, AppError> {
    let refuse = |message: String| AppError::bad_arguments("ask --file", message);
    if bytes.len() > MAX_ARTICLE_BYTES {
        return Err(article_too_large(name, bytes.len() as u64));
    }
    match decode_note(bytes) {
        Ok(text) => Ok(text),
        Err(SkipReason::Binary) => Err(refuse(format!(
            "{name}: not a text file (it contains NUL bytes): give the article as Markdown or plain text"
        ))),
        Err(reason) => Err(refuse(format!(
            "{name}: {reason}: save the article as UTF-8"
        ))),
    }
}

/// A name safe to show as an article's `path`: one line, no control characters, at most 200
/// code points; empty becomes `article`.
pub fn display_name(name: &str) -> String {
    let one_line: String = name
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect::<String>()
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    let short: String = one_line.chars().take(200).collect();
    if short.is_empty() {
        "article".to_string()
    } else {
        short
    }
}

/// Chunk vectors kept on disk by content hash and embedding space, so an article asked about
/// again is not embedded again. One file per vector: `<dir>/<space id>/<content hash>`, the
/// vector's `f32`s little-endian. A file of the wrong size is ignored (and rewritten); a write
/// that fails only costs the next run an embedding. Safe to delete at any time.
#[derive(Debug, Clone)]
pub struct VectorCache {
    dir: PathBuf,
}

impl VectorCache {
    /// The cache of the index in `index_dir`: `<index_dir>/article-cache/`.
    pub fn in_index(index_dir: &Path) -> VectorCache {
        VectorCache {
            dir: index_dir.join(CACHE_DIR),
        }
    }

    /// The cache's folder.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    fn file(&self, space: &EmbeddingSpace, hash: &str) -> Option<PathBuf> {
        // Content hashes are quire's own hex digests; anything else never becomes a path.
        let hex = |s: &str| !s.is_empty() && s.chars().all(|c| c.is_ascii_hexdigit());
        let space_id = space.id();
        (hex(hash) && hex(&space_id)).then(|| self.dir.join(space_id).join(hash))
    }

    /// The vector of the text whose content hash is `hash`, if cached.
    pub fn get(&self, space: &EmbeddingSpace, hash: &str) -> Option<Vec<f32>> {
        let path = self.file(space, hash)?;
        let bytes = std::fs::read(path).ok()?;
        if bytes.len() != space.dimension * 4 {
            return None;
        }
        Some(
            bytes
                .chunks_exact(4)
                .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
                .collect(),
        )
    }

    /// Keeps `vector` for `hash`.
    pub fn put(&self, space: &EmbeddingSpace, hash: &str, vector: &[f32]) -> Result<(), String> {
        let path = self
            .file(space, hash)
            .ok_or_else(|| format!("not a content hash: {hash}"))?;
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).map_err(|e| format!("{}: {e}", parent.display()))?;
        }
        let bytes: Vec<u8> = vector.iter().flat_map(|x| x.to_le_bytes()).collect();
        quire_vault::atomic::write_atomic(&path, &bytes)
            .map_err(|e| format!("{}: {e}", path.display()))
    }
}

/// What became of the article on its way in (the `article` object of `--json`).
#[derive(Debug, Clone, Serialize)]
pub struct ArticleReport {
    /// The article's display name: what its passages' `path` and cards say.
    pub name: String,
    /// Its size in bytes.
    pub bytes: usize,
    /// Its lines.
    pub lines: usize,
    /// Its chunks (at most [`quire_vault::chunk::MAX_CHUNKS_PER_NOTE`]).
    pub chunks: usize,
    /// Whether chunks past the per-note limit were left out.
    pub truncated: bool,
    /// Chunk vectors computed by this run (0 when every one was cached, or without a model).
    pub embedded: usize,
    /// Chunk vectors found in the cache.
    pub cached: usize,
    /// Where vectors are cached; `None` without a cache or a model.
    pub cache_dir: Option<String>,
    /// What the reader should know (a cache that could not be written).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
}

/// An article chunked and embedded in memory, ready to be asked.
pub struct Article {
    chunks: Vec<Chunk>,
    /// One per chunk, unit length; `None` without an embedder.
    vectors: Option<Vec<Vec<f32>>>,
    embedder: Option<std::sync::Arc<dyn Embedder>>,
    /// The chunks in an in-memory full-text index: the vault's schema, analyzer and BM25, one
    /// document per chunk keyed by its position.
    fulltext: FullText,
    /// How it was read, chunked and embedded.
    pub report: ArticleReport,
}

impl std::fmt::Debug for Article {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Article")
            .field("report", &self.report)
            .finish_non_exhaustive()
    }
}

impl Article {
    /// Parses and chunks `text` with the vault's `settings` (as the index chunks a note named
    /// `name`) and embeds its chunks with `embedder`, taking what `cache` holds.
    pub fn load(
        name: &str,
        text: &str,
        settings: &VaultSettings,
        embedder: Option<std::sync::Arc<dyn Embedder>>,
        cache: Option<&VectorCache>,
    ) -> Result<Article, AppError> {
        let name = display_name(name);
        let note = parse_note(&name, text, &settings.parse);
        let (chunks, truncated) = chunk_note_bounded(&note, &settings.chunk, &ApproxTokenCounter);
        let mut report = ArticleReport {
            name,
            bytes: text.len(),
            lines: text.lines().count(),
            chunks: chunks.len(),
            truncated,
            embedded: 0,
            cached: 0,
            cache_dir: None,
            warnings: Vec::new(),
        };
        let vectors = match &embedder {
            Some(embedder) => Some(embed_chunks(
                embedder.as_ref(),
                &chunks,
                cache,
                &mut report,
            )?),
            None => None,
        };
        let fulltext = lexical_index(&report.name, &chunks)?;
        Ok(Article {
            chunks,
            vectors,
            embedder,
            fulltext,
            report,
        })
    }

    /// The article's chunk count.
    pub fn len(&self) -> usize {
        self.chunks.len()
    }

    /// Whether the article has no chunk (an empty text).
    pub fn is_empty(&self) -> bool {
        self.chunks.is_empty()
    }

    /// The thresholds of the article's embedding model (e5-small's without one).
    fn calibration(&self) -> quire_embed::Calibration {
        self.embedder
            .as_ref()
            .map_or(quire_embed::Calibration::E5_SMALL, |e| {
                e.space().calibration()
            })
    }

    fn passage(&self, i: usize, score: f32) -> Passage {
        let chunk = &self.chunks[i];
        Passage {
            path: self.report.name.clone(),
            title: self.report.name.clone(),
            // An article is not a note: no wikilink target (see the module docs).
            link: String::new(),
            chunk_id: chunk.id.clone(),
            content_hash: chunk.content_hash.clone(),
            heading_path: chunk.heading_path.clone(),
            start_line: chunk.start_line,
            end_line: chunk.end_line,
            text: chunk.body.trim_end().to_string(),
            score,
        }
    }

    /// The passages for `question` under `limits`, frozen: BM25 and (with vectors) cosine
    /// rankings of the chunks, fused as the index fuses them, `candidate_notes ×
    /// candidate_chunks` candidates, then at most `notes × chunks_per_note` passages within the
    /// code-point budget, best first. Evidence (best cosine, word coverage) is assessed as for
    /// notes.
    pub fn context(
        &self,
        question: &str,
        limits: &ContextLimits,
    ) -> Result<FrozenContext, AppError> {
        let wanted = (limits.candidate_notes * limits.candidate_chunks).max(1);
        let lexical: Vec<(usize, f32)> = self
            .fulltext
            .search(
                question,
                self.chunks.len(),
                &Filter::default(),
                Boosts::default(),
            )
            .map_err(|e| AppError::Internal(format!("searching the article: {e}")))?
            .into_iter()
            .filter_map(|hit| Some((hit.key.parse::<usize>().ok()?, hit.score)))
            .collect();
        let query_vector = match (&self.embedder, &self.vectors) {
            (Some(embedder), Some(_)) => Some(
                embedder
                    .embed_query(question)
                    .map_err(|e| AppError::Internal(format!("embedding the question: {e}")))?,
            ),
            _ => None,
        };
        let cosines: Option<Vec<f32>> = query_vector.as_ref().and_then(|q| {
            self.vectors
                .as_ref()
                .map(|vs| vs.iter().map(|v| quire_embed::dot(q, v)).collect())
        });
        let (ranked, mode): (Vec<(usize, f32)>, Mode) = match &cosines {
            Some(cosines) => {
                let mut semantic: Vec<(usize, f32)> = cosines.iter().copied().enumerate().collect();
                semantic.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
                semantic.truncate(wanted);
                let lexical: Vec<(usize, f32)> = lexical.iter().copied().take(wanted).collect();
                // One article is one note: the index's method, at the chunk level.
                let fused = fuse(
                    &[
                        Ranking {
                            items: &lexical,
                            signal: Signal::Lexical,
                        },
                        Ranking {
                            items: &semantic,
                            signal: Signal::Semantic,
                        },
                    ],
                    Fusion::default().for_model(&self.calibration()).method,
                );
                (fused, Mode::Hybrid)
            }
            None => (lexical, Mode::Bm25),
        };
        let candidates: Vec<(usize, f32)> = ranked.into_iter().take(wanted).collect();
        // Each chunk its own group: the per-note diversity rule has nothing to spread over in
        // one article, so the final count is notes × chunks_per_note, best first.
        let groups: Vec<Vec<Passage>> = candidates
            .iter()
            .map(|&(i, score)| vec![self.passage(i, score)])
            .collect();
        let per_article = ContextLimits {
            notes: (limits.notes * limits.chunks_per_note).max(1),
            chunks_per_note: 1,
            ..*limits
        };
        let selection = select(groups, &per_article);
        let passage_cosines: Vec<Option<f32>> = match &cosines {
            Some(cosines) => selection
                .passages
                .iter()
                .map(|p| {
                    self.chunks
                        .iter()
                        .position(|c| c.id == p.chunk_id)
                        .map(|i| cosines[i])
                })
                .collect(),
            None => Vec::new(),
        };
        let evidence = Evidence::assess_with(
            question,
            &selection.passages,
            &passage_cosines,
            self.calibration().weak_answer_cosine_alone,
        );
        Ok(FrozenContext {
            lead: Vec::new(),
            report: RetrievalReport {
                query: question.to_string(),
                mode,
                generation: 0,
                date_range: None,
                candidate_notes: usize::from(!candidates.is_empty()),
                candidate_chunks: candidates.len(),
                dropped: Vec::new(),
                duplicates: selection.duplicates,
                left_out: selection.left_out,
                sources: selection.passages.len(),
                code_points: selection.code_points,
                limits: *limits,
                notes: Vec::new(),
                retriever: Retriever::Hybrid,
                descent: None,
                expansion: None,
            },
            passages: selection.passages,
            evidence: Some(evidence),
        })
    }

    /// The article's paragraphs with their vectors, in document order, for
    /// [`quire_assist::questions::topics`]; very short chunks (a lone heading) left out. An
    /// error without vectors.
    pub fn paragraphs(&self) -> Result<Vec<Paragraph>, AppError> {
        let Some(vectors) = &self.vectors else {
            return Err(AppError::NotReady(
                "questions --file groups the article's paragraphs by their vectors, and no embedding model is loaded: fetch it (scripts/fetch-model.sh) or leave out --no-embeddings".into(),
            ));
        };
        Ok(self
            .chunks
            .iter()
            .zip(vectors)
            .enumerate()
            .filter(|(_, (c, _))| c.body.split_whitespace().count() >= MIN_QUESTION_WORDS)
            .map(|(i, (_, v))| Paragraph {
                passage: self.passage(i, 0.0),
                vector: v.clone(),
            })
            .collect())
    }

    /// Checks a generated answer's sentences against `sources` with the article's vectors
    /// (as `quire_app::ask::check_support` does with the index's); words only without them.
    fn check_support(&self, sources: &[Source], answer: &mut Answer) {
        let (Some(embedder), Some(vectors)) = (&self.embedder, &self.vectors) else {
            return;
        };
        let ids: Vec<&str> = sources.iter().map(|s| s.id.as_str()).collect();
        let sentences = split_sentences(&answer.answer, &ids);
        let claims: Vec<&str> = sentences.iter().map(|s| s.claim.as_str()).collect();
        if claims.is_empty() {
            return;
        }
        let thresholds = Thresholds::for_model(&embedder.space().calibration());
        let rows: Vec<Option<&Vec<f32>>> = sources
            .iter()
            .map(|s| {
                self.chunks
                    .iter()
                    .position(|c| c.id == s.passage.chunk_id)
                    .map(|i| &vectors[i])
            })
            .collect();
        match embedder.embed_passages(&claims) {
            Ok(claim_vectors) => {
                let cosines: Vec<Vec<Option<f32>>> = claim_vectors
                    .iter()
                    .map(|v| {
                        rows.iter()
                            .map(|row| row.map(|r| quire_embed::dot(v, r)))
                            .collect()
                    })
                    .collect();
                answer.check_support(sources, Some(&cosines), None, &thresholds);
            }
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
}

/// Embeds the chunks not in `cache`, keeps the new vectors there, and counts both in `report`.
fn embed_chunks(
    embedder: &dyn Embedder,
    chunks: &[Chunk],
    cache: Option<&VectorCache>,
    report: &mut ArticleReport,
) -> Result<Vec<Vec<f32>>, AppError> {
    let space = embedder.space();
    let mut vectors: Vec<Option<Vec<f32>>> = chunks
        .iter()
        .map(|c| cache.and_then(|cache| cache.get(&space, &c.content_hash)))
        .collect();
    report.cached = vectors.iter().filter(|v| v.is_some()).count();
    report.cache_dir = cache.map(|c| c.dir().display().to_string());
    // The same text twice (a repeated paragraph) is embedded once.
    let mut missing: Vec<usize> = Vec::new();
    let mut seen: HashMap<&str, ()> = HashMap::new();
    for (i, v) in vectors.iter().enumerate() {
        if v.is_none() && seen.insert(&chunks[i].content_hash, ()).is_none() {
            missing.push(i);
        }
    }
    let mut fresh: HashMap<String, Vec<f32>> = HashMap::new();
    for batch in missing.chunks(32) {
        let texts: Vec<&str> = batch.iter().map(|&i| chunks[i].text.as_str()).collect();
        let embedded = embedder
            .embed_passages(&texts)
            .map_err(|e| AppError::Internal(format!("embedding the article: {e}")))?;
        if embedded.len() != batch.len() {
            return Err(AppError::Internal(
                "embedding the article: the model returned fewer vectors than texts".into(),
            ));
        }
        for (&i, vector) in batch.iter().zip(embedded) {
            if let Some(cache) = cache
                && let Err(e) = cache.put(&space, &chunks[i].content_hash, &vector)
                && report.warnings.is_empty()
            {
                report
                    .warnings
                    .push(format!("the vector cache could not be written: {e}"));
            }
            fresh.insert(chunks[i].content_hash.clone(), vector);
        }
    }
    report.embedded = fresh.len();
    Ok(vectors
        .iter_mut()
        .zip(chunks)
        .map(|(v, c)| {
            v.take()
                .or_else(|| fresh.get(&c.content_hash).cloned())
                .unwrap_or_default()
        })
        .collect())
}

/// An answer about an article (`quire ask --file --json`, `/api/article/ask`'s `done`):
/// `quire ask`'s object, with the article's report beside it.
#[derive(Debug, Clone, Serialize)]
pub struct ArticleAnswer {
    /// The answer, its citations and source cards (cards point at the article's lines).
    #[serde(flatten)]
    pub answer: Answer,
    /// How the article was read and embedded.
    pub article: ArticleReport,
}

/// Answers `question` from `article`, streaming the shown text to `on_text`: the passages under
/// `limits`, then `quire_assist`'s ask (the model's answer with checked `[S1]` citations, or
/// offline the extractive answer, worded for an article). Source cards point at the article's
/// lines.
pub fn ask(
    model: Option<&dyn ChatModel>,
    article: &Article,
    question: &str,
    limits: &ContextLimits,
    cancel: &CancelToken,
    on_text: &mut dyn FnMut(&str),
) -> Result<ArticleAnswer, AppError> {
    let frozen = article.context(question, limits)?;
    let mut conversation = Conversation::new();
    let mut answer = match model {
        Some(model) if !frozen.passages.is_empty() => {
            conversation.ask(Some(model), frozen, question, cancel, on_text)?
        }
        _ => {
            // The offline (or nothing-found) answer is shown at once; its wording speaks of
            // notes, so it is collected, reworded for an article, and then shown.
            let mut offline = String::new();
            let mut answer = conversation.ask(model, frozen, question, cancel, &mut |t| {
                offline.push_str(t)
            })?;
            answer.answer = about_the_article(&answer.answer);
            answer.warnings = answer
                .warnings
                .iter()
                .map(|w| about_the_article(w))
                .collect();
            on_text(&about_the_article(&offline));
            answer
        }
    };
    if answer.kind == AnswerKind::Generated {
        article.check_support(conversation.sources(), &mut answer);
    }
    for card in &mut answer.sources {
        card.link = format!("{}:{}-{}", card.path, card.start_line, card.end_line);
    }
    let mut report = article.report.clone();
    answer.warnings.append(&mut report.warnings);
    if report.truncated {
        answer.warnings.push(format!(
            "the article has more than {} chunks: only its first {} were read",
            quire_vault::chunk::MAX_CHUNKS_PER_NOTE,
            report.chunks
        ));
    }
    Ok(ArticleAnswer {
        answer,
        article: report,
    })
}

/// An offline answer's or warning's words about "your notes" said of the article instead.
fn about_the_article(text: &str) -> String {
    text.replacen(
        "the passages of your notes that best match",
        "the passages of the article that best match",
        1,
    )
    .replacen(
        "Your notes do not seem to cover",
        "The article does not seem to cover",
        1,
    )
    .replacen(
        "the notes do not seem to cover",
        "the article does not seem to cover",
        1,
    )
    .replacen(
        "No passage of your notes matches",
        "No passage of the article matches",
        1,
    )
}

/// The article's chunks in an in-memory full-text index, as the vault's chunks are indexed
/// (body, heading path and the article's name as the title), so a question matches an article's
/// words as it would a note's.
fn lexical_index(name: &str, chunks: &[Chunk]) -> Result<FullText, AppError> {
    let failed =
        |e: quire_index::IndexError| AppError::Internal(format!("indexing the article: {e}"));
    let fulltext = FullText::in_memory().map_err(failed)?;
    let mut writer = fulltext.writer().map_err(failed)?;
    for (i, chunk) in chunks.iter().enumerate() {
        writer
            .add(&FullTextDoc {
                key: i.to_string(),
                path: name.to_string(),
                title: name.to_string(),
                headings: chunk.heading_path.join(" / "),
                body: chunk.body.clone(),
                ..Default::default()
            })
            .map_err(failed)?;
    }
    writer.commit(1).map_err(failed)?;
    fulltext.reload().map_err(failed)?;
    Ok(fulltext)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_rank_the_chunk_with_the_rare_word_first() {
        let text = "# Starter\n\nThe starter is fed daily.\n\n# Bread\n\nBread needs flour, water and salt.\n\n# Keeping it\n\nFeeding the sourdough starter twice a day keeps it active.\n";
        let dir = tempfile::tempdir().unwrap();
        let settings = VaultSettings::load(dir.path(), &quire_vault::OpenOptions::default())
            .expect("settings of an empty folder");
        let article = Article::load("a.md", text, &settings, None, None).unwrap();
        let ranked = article
            .fulltext
            .search(
                "how do I keep a sourdough starter active?",
                10,
                &Filter::default(),
                Boosts::default(),
            )
            .unwrap();
        let best = ranked[0].key.parse::<usize>().unwrap();
        assert!(
            article.chunks[best]
                .body
                .contains("sourdough starter twice")
        );
        assert!(ranked.iter().all(|h| {
            !article.chunks[h.key.parse::<usize>().unwrap()]
                .body
                .contains("flour")
        }));
        assert!(
            article
                .fulltext
                .search("the a of", 10, &Filter::default(), Boosts::default())
                .unwrap()
                .is_empty()
        );
    }

    #[test]
    fn articles_that_are_too_large_or_not_text_are_refused_clearly() {
        let big = vec![b'a'; MAX_ARTICLE_BYTES + 1];
        let e = decode_article("big.md", big).unwrap_err().to_string();
        assert!(e.contains("big.md") && e.contains("5 MiB"), "{e}");
        let e = decode_article("x.pdf", b"%PDF\0\x01".to_vec())
            .unwrap_err()
            .to_string();
        assert!(e.contains("NUL"), "{e}");
        let e = decode_article("latin1.txt", b"caf\xe9\n".to_vec())
            .unwrap_err()
            .to_string();
        assert!(e.contains("UTF-8"), "{e}");
        assert_eq!(
            decode_article("ok.md", b"# Hi\n".to_vec()).unwrap(),
            "# Hi\n"
        );
    }

    #[test]
    fn names_are_one_line() {
        assert_eq!(display_name("a\nb\u{7}c.md"), "a b c.md");
        assert_eq!(display_name("  "), "article");
    }

    #[test]
    fn the_offline_wording_speaks_of_the_article() {
        let text = quire_assist::ask::extractive_answer(&[], &[]);
        assert!(
            about_the_article(&text).contains("the passages of the article"),
            "quire_assist's wording changed: {text}"
        );
    }

    #[test]
    fn an_article_without_a_model_is_answered_from_its_own_passages() {
        let dir = tempfile::tempdir().unwrap();
        let settings = VaultSettings::load(dir.path(), &quire_vault::OpenOptions::default())
            .expect("settings of an empty folder");
        let text = "# Bees\n\nHoney bees dance to show where flowers are.\n\n## Winter\n\nIn winter the colony forms a cluster to stay warm.\n";
        let article = Article::load("bees.md", text, &settings, None, None).unwrap();
        assert!(!article.is_empty());
        let mut shown = String::new();
        let answer = ask(
            None,
            &article,
            "How do bees stay warm in winter?",
            &ContextLimits::default(),
            &CancelToken::new(),
            &mut |t| shown.push_str(t),
        )
        .unwrap();
        assert_eq!(answer.answer.kind, AnswerKind::Extractive);
        assert_eq!(shown, answer.answer.answer);
        let first = &answer.answer.sources[0];
        assert_eq!(first.path, "bees.md");
        assert_eq!(
            first.link,
            format!("bees.md:{}-{}", first.start_line, first.end_line)
        );
        assert!(
            first.heading_path.iter().any(|h| h == "Winter"),
            "{first:?}"
        );
        assert!(!answer.answer.answer.contains("[["));
    }
}
