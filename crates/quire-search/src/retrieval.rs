//! The storage boundary under search: [`Retrieval`] is what a search reads from an index (its
//! two rankings, the chunks they name, the facts filters need), and [`search`] is the one search
//! over any of them: filters, hybrid fusion, grouping by note, snippets.
//!
//! The local index (SQLite + tantivy + vectors, [`crate::Searcher`]) and a database backend
//! (`quire-pg`) implement the trait; both answer a [`SearchRequest`] with the same code, so a
//! search ranks the same way wherever its index lives. An implementation must read one
//! consistent state of its index for the whole of a search (a generation: never half a sync).

use std::cell::OnceCell;
use std::collections::{HashMap, HashSet};

use quire_index::store::ChunkRow;
use quire_index::sync::ChunkKey;
use quire_index::{Boosts, Filter};
use quire_vault::pdf::{is_pdf, page_link, page_of};

use crate::{
    Mode, NoteHit, SearchError, SearchRequest, SearchResults, SectionHit, fusion, snippet,
};

/// What a search reads from an index. Rankings are chunk keys with their scores, best first.
pub trait Retrieval {
    /// The generation of the index state this reader sees.
    fn generation(&self) -> Result<u64, SearchError>;
    /// Every note's vault-relative path.
    fn note_paths(&self) -> Result<Vec<String>, SearchError>;
    /// Every `(note path, tag)` pair, tags lowercased as indexed.
    fn tags(&self) -> Result<Vec<(String, String)>, SearchError>;
    /// Every note's path with its properties as a JSON object's text.
    fn properties(&self) -> Result<Vec<(String, String)>, SearchError>;
    /// The titles of the notes at `paths` (a note the index does not have is left out).
    fn note_titles(&self, paths: &[&str]) -> Result<HashMap<String, String>, SearchError>;
    /// The chunks named by `keys`, in their order (`None` for a chunk the index does not have);
    /// one call for a whole page of results, so a database answers in one round trip.
    fn chunks(&self, keys: &[&ChunkKey]) -> Result<Vec<Option<ChunkRow>>, SearchError>;
    /// At most `want` chunks ranked by full-text relevance to `query` with `boosts`, among the
    /// notes `filter`'s folder and tag let through (its other conditions are applied by the
    /// caller).
    fn lexical(
        &self,
        query: &str,
        want: usize,
        filter: &Filter,
        boosts: Boosts,
    ) -> Result<Vec<(ChunkKey, f32)>, SearchError>;
    /// At most `want` chunks ranked by the cosine of their vector with `query` (a unit vector of
    /// the index's embedding space), among the notes `allowed` (all when `None`).
    fn semantic(
        &self,
        query: &[f32],
        want: usize,
        allowed: Option<&HashSet<String>>,
    ) -> Result<Vec<(ChunkKey, f32)>, SearchError>;
    /// At most `want` notes ranked by the cosine of `query` with their note vector (the
    /// normalised mean of their chunk vectors), among the notes `allowed`.
    fn note_ranking(
        &self,
        query: &[f32],
        want: usize,
        allowed: Option<&HashSet<String>>,
    ) -> Result<Vec<(String, f32)>, SearchError>;
    /// The first chunk of each note whose title is `title` (letters compared without case), in
    /// path order: a query that is a note's whole title finds that note first.
    fn titled(&self, title: &str) -> Result<Vec<ChunkKey>, SearchError>;
    /// The first chunk with a vector of each of `paths` (a note found only by its note vector
    /// is shown with it); notes without one are left out.
    fn first_chunks(&self, paths: &[String]) -> Result<Vec<ChunkKey>, SearchError>;
    /// The stored vectors of `keys`, in order (`None` for a chunk without one), for
    /// pseudo-relevance feedback ([`crate::fusion::Fusion::prf`]); an index that cannot read
    /// them returns an empty list, and the search goes without feedback.
    fn chunk_vectors(&self, keys: &[&ChunkKey]) -> Result<Vec<Option<Vec<f32>>>, SearchError> {
        let _ = keys;
        Ok(Vec::new())
    }
}

/// Hybrid fusion's answer: chunks with scores, best first, and each note's own fused score
/// (empty for a chunk-level fusion).
type Fused = (Vec<(ChunkKey, f32)>, HashMap<String, f32>);

/// What a search embeds: the query, or a passage written for it ([`SearchRequest::expansion`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Embed {
    /// The query (the model's query prefix).
    Query,
    /// A passage (the model's passage prefix).
    Passage,
}

/// How [`search`] embeds a text of a kind.
pub type EmbedFn<'a> = dyn Fn(&str, Embed) -> Result<Vec<f32>, SearchError> + 'a;

/// `text` embedded as one passage.
pub fn one_passage(
    embedder: &dyn quire_embed::Embedder,
    text: &str,
) -> Result<Vec<f32>, SearchError> {
    embedder.embed_passages(&[text])?.pop().ok_or_else(|| {
        SearchError::NoEmbeddings("the model returned no vector for a passage".into())
    })
}

/// The notes that best match `request` in `index`, each with its best sections; filters apply to
/// notes. `embed` embeds the query, and the passage of a query2doc expansion (each at most once,
/// only in the vector and hybrid modes). A query that is a note's whole title puts that note
/// first ([`title_first`]).
pub fn search(
    index: &dyn Retrieval,
    embed: &EmbedFn<'_>,
    request: &SearchRequest,
) -> Result<SearchResults, SearchError> {
    // The notes the filter lets through, computed once for both retrievers. Folder and tag are
    // also in the full-text query; property and date conditions only in this set, so the
    // full-text side returns more hits and those of other notes are dropped.
    let allowed = if request.mode == Mode::Bm25 && !request.filter.needs_store() {
        None
    } else {
        filter_paths(index, &request.filter)?
    };
    let mut ranking = rank(index, embed, request, allowed.as_ref())?;
    title_first(index, request, allowed.as_ref(), &mut ranking)?;
    let (order, picked) = page(ranking.chunks, request);
    let mut notes = note_hits(index, request, &order, &picked, &ranking.notes)?;
    if request.explain {
        for hit in &mut notes {
            hit.explain = explanation(request, hit, &ranking.explain, &ranking.titled);
        }
    }
    notes.truncate(request.k);
    Ok(SearchResults {
        query: request.query.clone(),
        mode: request.mode,
        generation: index.generation()?,
        results: notes,
    })
}

/// A search's chunks, best first, before they are grouped into notes.
struct Ranking {
    chunks: Vec<(ChunkKey, f32)>,
    /// A note's own fused score, when fusion ranks notes rather than chunks.
    notes: HashMap<String, f32>,
    /// Where each retriever put each note (`explain` only).
    explain: Ranks,
    /// The notes put first because the query is their title.
    titled: HashSet<String>,
}

/// Each retriever's note ranking: a note's rank (1 = first) and its best chunk's score.
#[derive(Default)]
struct Ranks {
    bm25: HashMap<String, (usize, f32)>,
    vector: HashMap<String, (usize, f32)>,
}

impl Ranks {
    /// Records `list`'s note ranking into `into` when `explain` asks for it.
    fn keep(explain: bool, into: &mut HashMap<String, (usize, f32)>, list: &[(ChunkKey, f32)]) {
        if !explain {
            return;
        }
        for (key, score) in list {
            let next = into.len() + 1;
            into.entry(key.path.clone()).or_insert((next, *score));
        }
    }
}

/// The retrievers `request.mode` asks for, run and fused.
fn rank(
    index: &dyn Retrieval,
    embed: &EmbedFn<'_>,
    request: &SearchRequest,
    allowed: Option<&HashSet<String>>,
) -> Result<Ranking, SearchError> {
    // Enough chunks that k notes survive grouping.
    let want = (request.k * request.sections_per_note * 4).clamp(20, 1000);
    let vector = OnceCell::new();
    let query = || -> Result<&Vec<f32>, SearchError> {
        if let Some(v) = vector.get() {
            return Ok(v);
        }
        let mut v = embed(&request.query, Embed::Query)?;
        if let Some(passage) = &request.expansion {
            let written = embed(passage, Embed::Passage)?;
            v = fusion::rocchio(&v, &[&written], 1.0);
        }
        Ok(vector.get_or_init(|| v))
    };
    let lexical_text = match &request.expansion {
        Some(passage) => format!("{} {passage}", request.query),
        None => request.query.clone(),
    };
    let bm25 = || -> Result<Vec<(ChunkKey, f32)>, SearchError> {
        let k = if request.filter.needs_store() {
            want.max(2000)
        } else {
            want
        };
        Ok(index
            .lexical(&lexical_text, k, &request.filter, request.boosts)?
            .into_iter()
            .filter(|(key, _)| allowed.is_none_or(|set| set.contains(&key.path)))
            .take(want)
            .collect())
    };
    let mut explain = Ranks::default();
    let mut notes = HashMap::new();
    let chunks = match request.mode {
        Mode::Bm25 => {
            let lexical = bm25()?;
            Ranks::keep(request.explain, &mut explain.bm25, &lexical);
            lexical
        }
        Mode::Vector => {
            let semantic = index.semantic(query()?, want, allowed)?;
            Ranks::keep(request.explain, &mut explain.vector, &semantic);
            semantic
        }
        Mode::Hybrid => {
            let lexical = bm25()?;
            let semantic = index.semantic(query()?, want, allowed)?;
            Ranks::keep(request.explain, &mut explain.bm25, &lexical);
            Ranks::keep(request.explain, &mut explain.vector, &semantic);
            let centroid = if request.fusion.notes && request.fusion.centroid {
                Some(index.note_ranking(query()?, want, allowed)?)
            } else {
                None
            };
            let (mut ranked, mut fused) =
                fuse(index, request, &lexical, &semantic, centroid.clone())?;
            if request.fusion.prf > 0.0 {
                let top: Vec<&ChunkKey> = ranked
                    .iter()
                    .take(fusion::PRF_DEPTH)
                    .map(|(k, _)| k)
                    .collect();
                let found = index.chunk_vectors(&top)?;
                let feedback: Vec<&[f32]> = found.iter().flatten().map(Vec::as_slice).collect();
                if !feedback.is_empty() {
                    let moved = fusion::rocchio(query()?, &feedback, request.fusion.prf);
                    let semantic = index.semantic(&moved, want, allowed)?;
                    (ranked, fused) = fuse(index, request, &lexical, &semantic, centroid)?;
                }
            }
            notes = fused;
            ranked
        }
    };
    Ok(Ranking {
        chunks,
        notes,
        explain,
        titled: HashSet::new(),
    })
}

/// A query that is a note's whole title (letters compared without case) puts that note first,
/// with its ranked chunks (or its first chunk when no retriever found it), as a quick switcher
/// would: a title is the name a person knows a note by, and neither retriever can tell
/// `inheritance_task_listitem_task` from its near namesakes, nor a note titled "Header 1" from
/// the six templates whose names hold those words. Its score is raised to the best one, so
/// scores still fall down the list. Notes the filter excludes stay out, and a search by meaning
/// alone (`Mode::Vector`) is left as the model ranked it.
fn title_first(
    index: &dyn Retrieval,
    request: &SearchRequest,
    allowed: Option<&HashSet<String>>,
    ranking: &mut Ranking,
) -> Result<(), SearchError> {
    let title = request.query.trim();
    if title.is_empty() || request.expansion.is_some() || request.mode == Mode::Vector {
        return Ok(());
    }
    let mut titled = index.titled(title)?;
    if titled.is_empty() {
        return Ok(());
    }
    // In BM25 mode folder and tag were checked by the full-text query only.
    let computed;
    let allowed = match allowed {
        Some(set) => Some(set),
        None => {
            computed = filter_paths(index, &request.filter)?;
            computed.as_ref()
        }
    };
    titled.retain(|key| allowed.is_none_or(|set| set.contains(&key.path)));
    if titled.is_empty() {
        return Ok(());
    }
    let best_chunk = ranking.chunks.first().map_or(0.0, |(_, s)| *s);
    let best_note = ranking
        .notes
        .values()
        .copied()
        .fold(f32::MIN, f32::max)
        .max(best_chunk);
    let paths: HashSet<String> = titled.iter().map(|k| k.path.clone()).collect();
    let (mut first, rest): (Vec<_>, Vec<_>) = std::mem::take(&mut ranking.chunks)
        .into_iter()
        .partition(|(key, _)| paths.contains(&key.path));
    for key in titled {
        if !first.iter().any(|(k, _)| k.path == key.path) {
            first.push((key, best_chunk));
        }
    }
    // The titled notes in the order their best chunks had (path order for the ones added).
    let mut order: Vec<String> = Vec::new();
    for (key, _) in &first {
        if !order.contains(&key.path) {
            order.push(key.path.clone());
        }
    }
    first.sort_by_key(|(key, _)| order.iter().position(|p| p == &key.path));
    for (_, score) in &mut first {
        *score = score.max(best_chunk);
    }
    if !ranking.notes.is_empty() {
        for path in &paths {
            ranking.notes.insert(path.clone(), best_note);
        }
    }
    first.extend(rest);
    ranking.chunks = first;
    ranking.titled = paths;
    Ok(())
}

/// Each note's chunks on the page, best first.
type Sections = HashMap<String, Vec<(ChunkKey, f32)>>;

/// The chunks grouped into the page: at most k notes, in the order of their best chunk, each
/// with its first `sections_per_note` chunks.
fn page(ranked: Vec<(ChunkKey, f32)>, request: &SearchRequest) -> (Vec<String>, Sections) {
    let mut order: Vec<String> = Vec::new();
    let mut picked: Sections = HashMap::new();
    for (key, score) in ranked {
        let sections = match picked.get_mut(&key.path) {
            Some(sections) => sections,
            None if order.len() >= request.k => continue,
            None => {
                order.push(key.path.clone());
                picked.entry(key.path.clone()).or_default()
            }
        };
        if sections.len() < request.sections_per_note {
            sections.push((key, score));
        }
    }
    (order, picked)
}

/// The page's notes with their titles and sections (snippets, pages of a PDF), reading the
/// titles and the chunks' texts once each.
fn note_hits(
    index: &dyn Retrieval,
    request: &SearchRequest,
    order: &[String],
    picked: &Sections,
    note_scores: &HashMap<String, f32>,
) -> Result<Vec<NoteHit>, SearchError> {
    let paths: Vec<&str> = order.iter().map(String::as_str).collect();
    let titles = index.note_titles(&paths)?;
    let keys: Vec<&ChunkKey> = order
        .iter()
        .flat_map(|p| picked[p].iter().map(|(k, _)| k))
        .collect();
    let mut rows = index.chunks(&keys)?.into_iter();
    let terms = snippet::query_terms(&request.query);
    let mut notes: Vec<NoteHit> = Vec::new();
    for path in order {
        let sections = &picked[path];
        let mut hit = NoteHit {
            path: path.clone(),
            title: titles.get(path).cloned().unwrap_or_default(),
            score: note_scores
                .get(path)
                .copied()
                .unwrap_or_else(|| sections.first().map_or(0.0, |(_, s)| *s)),
            sections: Vec::new(),
            explain: None,
        };
        for (_, score) in sections {
            let Some(Some(chunk)) = rows.next() else {
                continue;
            };
            let body = chunk
                .text
                .split_once("\n\n")
                .map(|(_, b)| b)
                .unwrap_or(&chunk.text);
            let (snippet, highlights) = snippet::snippet(body, &terms, 220);
            let page = is_pdf(path).then(|| page_of(&chunk.heading_path)).flatten();
            hit.sections.push(SectionHit {
                page,
                link: page.map(|p| page_link(path, p)),
                chunk_id: chunk.id,
                heading_path: chunk.heading_path,
                start_line: chunk.start_line,
                end_line: chunk.end_line,
                snippet,
                highlights,
                score: *score,
            });
        }
        notes.push(hit);
    }
    Ok(notes)
}

/// Why `hit` ranked where it did (`None` for a note without a section).
fn explanation(
    request: &SearchRequest,
    hit: &NoteHit,
    ranks: &Ranks,
    titled: &HashSet<String>,
) -> Option<crate::Explanation> {
    let best = hit.sections.first()?;
    let (bm25_rank, bm25_score) = ranks.bm25.get(&hit.path).copied().unzip();
    let (vector_rank, vector_similarity) = ranks.vector.get(&hit.path).copied().unzip();
    Some(crate::Explanation {
        bm25_rank,
        bm25_score,
        vector_rank,
        vector_similarity,
        score: hit.score,
        chunk_id: best.chunk_id.clone(),
        heading_path: best.heading_path.clone(),
        fusion: match request.mode {
            Mode::Hybrid => request.fusion.to_string(),
            Mode::Bm25 => "bm25 only".into(),
            Mode::Vector => "vector only".into(),
        },
        title_match: titled.contains(&hit.path),
    })
}

/// Hybrid search's fusion of the BM25 and vector chunk rankings with `request.fusion`: the
/// chunks, best first, and (for a note-level fusion) each note's fused score. A note-level
/// fusion orders notes by their fused score and each note's chunks by the chunk-level one;
/// `centroid` is the note ranking of the `+centroid` variant.
fn fuse(
    index: &dyn Retrieval,
    request: &SearchRequest,
    lexical: &[(ChunkKey, f32)],
    semantic: &[(ChunkKey, f32)],
    centroid: Option<Vec<(String, f32)>>,
) -> Result<Fused, SearchError> {
    use fusion::{Ranking, Signal};
    let plan = request.fusion;
    let chunks = fusion::fuse(
        &[
            Ranking {
                items: lexical,
                signal: Signal::Lexical,
            },
            Ranking {
                items: semantic,
                signal: Signal::Semantic,
            },
        ],
        plan.method,
    );
    if !plan.notes {
        return Ok((chunks, HashMap::new()));
    }
    let note_of = |k: &ChunkKey| k.path.clone();
    let lexical_notes = fusion::collapse(lexical, note_of);
    let semantic_notes = fusion::collapse(semantic, note_of);
    let mut rankings = vec![
        Ranking {
            items: lexical_notes.as_slice(),
            signal: Signal::Lexical,
        },
        Ranking {
            items: semantic_notes.as_slice(),
            signal: Signal::Semantic,
        },
    ];
    if let Some(centroid) = &centroid {
        rankings.push(Ranking {
            items: centroid.as_slice(),
            signal: Signal::Semantic,
        });
    }
    let notes: HashMap<String, f32> = fusion::fuse(&rankings, plan.method).into_iter().collect();
    let mut ranked: Vec<(ChunkKey, f32)> = chunks;
    // A note only the centroid ranking found still needs a section: its first chunk with a
    // vector.
    let present: HashSet<&str> = ranked.iter().map(|(k, _)| k.path.as_str()).collect();
    let mut missing: Vec<String> = notes
        .keys()
        .filter(|p| !present.contains(p.as_str()))
        .cloned()
        .collect();
    missing.sort();
    let firsts = if missing.is_empty() {
        Vec::new()
    } else {
        index.first_chunks(&missing)?
    };
    ranked.extend(firsts.into_iter().map(|k| {
        let score = notes.get(&k.path).copied().unwrap_or_default();
        (k, score)
    }));
    // Stable: within a note, chunks keep their chunk-level order.
    ranked.sort_by(|(a, _), (b, _)| {
        let (sa, sb) = (notes.get(&a.path), notes.get(&b.path));
        sb.unwrap_or(&f32::MIN)
            .total_cmp(sa.unwrap_or(&f32::MIN))
            .then_with(|| a.path.cmp(&b.path))
    });
    Ok((ranked, notes))
}

/// The notes a filter lets through (`None`: no filter).
pub fn filter_paths(
    index: &dyn Retrieval,
    filter: &Filter,
) -> Result<Option<HashSet<String>>, SearchError> {
    if filter.folder.is_none()
        && filter.note.is_none()
        && filter.tag.is_none()
        && !filter.needs_store()
    {
        return Ok(None);
    }
    let passes = property_paths(index, filter)?;
    let folder = filter
        .folder
        .as_ref()
        .map(|f| format!("{}/", f.trim_matches('/')));
    let tag = filter
        .tag
        .as_ref()
        .map(|t| t.trim_start_matches('#').to_lowercase());
    let mut tagged: HashSet<String> = HashSet::new();
    if let Some(tag) = &tag {
        for (path, t) in index.tags()? {
            if &t == tag || t.starts_with(&format!("{tag}/")) {
                tagged.insert(path);
            }
        }
    }
    Ok(Some(
        index
            .note_paths()?
            .into_iter()
            .filter(|p| folder.as_ref().is_none_or(|f| p.starts_with(f.as_str())))
            .filter(|p| filter.note.as_ref().is_none_or(|n| p == n))
            .filter(|p| tag.is_none() || tagged.contains(p))
            .filter(|p| passes.as_ref().is_none_or(|set| set.contains(p)))
            .collect(),
    ))
}

/// The notes whose properties and date pass `filter`'s conditions (`None`: it has none).
fn property_paths(
    index: &dyn Retrieval,
    filter: &Filter,
) -> Result<Option<HashSet<String>>, SearchError> {
    if !filter.needs_store() {
        return Ok(None);
    }
    let mut passing = HashSet::new();
    for (path, properties) in index.properties()? {
        let properties: serde_json::Value = serde_json::from_str(&properties).unwrap_or_default();
        let dated = quire_index::filter::note_date(&path, &properties);
        let in_range = match (&filter.since, &filter.until, dated) {
            (None, None, _) => true,
            (_, _, None) => false,
            (since, until, Some(day)) => {
                since.as_deref().is_none_or(|s| day >= s)
                    && until.as_deref().is_none_or(|u| day <= u)
            }
        };
        if in_range && filter.conditions.iter().all(|c| c.matches(&properties)) {
            passing.insert(path);
        }
    }
    Ok(Some(passing))
}

/// What answering a question reads from an index beyond one search: the notes, a note's chunks
/// (the passages are then re-read from the files and checked against their text hashes), and
/// the stored vectors that the answer checks compare with. The local [`crate::Searcher`] and
/// the database reader (`quire-pg`) both answer it, so `ask` and drafting run over either.
pub trait AnswerIndex {
    /// The notes that best match `request`.
    fn search(&self, request: &SearchRequest) -> Result<SearchResults, SearchError>;
    /// The mode of a search that names none (hybrid with a model and vectors, else BM25).
    fn default_mode(&self) -> Result<Mode, SearchError>;
    /// The generation read.
    fn generation(&self) -> Result<u64, SearchError>;
    /// Every note's path and title.
    fn notes(&self) -> Result<Vec<(String, String)>, SearchError>;
    /// One chunk, `None` when the index has no such chunk.
    fn chunk(&self, path: &str, id: &str) -> Result<Option<ChunkRow>, SearchError>;
    /// A note's chunks in order.
    fn note_chunks(&self, path: &str) -> Result<Vec<ChunkRow>, SearchError>;
    /// The cosine of `query`'s vector with each chunk's stored vector (`None` for a chunk with
    /// none); empty without a model or vectors.
    fn cosines(&self, query: &str, keys: &[ChunkKey]) -> Result<Vec<Option<f32>>, SearchError>;
    /// The cosine of each of `texts` (embedded as passages) with each chunk's stored vector;
    /// `None` without a model or when no chunk has a vector.
    fn text_cosines(
        &self,
        texts: &[&str],
        keys: &[ChunkKey],
    ) -> Result<Option<crate::CosineRows>, SearchError>;
    /// Each of `texts` embedded as a query, compared with the first text and with each chunk's
    /// stored vector (offline `ask` weighs a question's words this way: the question, then the
    /// question without one word at a time); `None` without a model or stored vectors.
    fn query_cosines(
        &self,
        texts: &[&str],
        keys: &[ChunkKey],
    ) -> Result<Option<crate::QueryCosines>, SearchError>;
    /// The similarity of each of `sentences` (embedded as documents) to `question` (embedded
    /// as a query); `None` without a model.
    fn sentence_scores(
        &self,
        question: &str,
        sentences: &[&str],
    ) -> Result<Option<Vec<f32>>, SearchError>;
    /// The thresholds of the model whose vectors this index holds (multilingual-e5-small's
    /// when it holds none).
    fn calibration(&self) -> Result<quire_embed::Calibration, SearchError>;
    /// Whether any note holds `word` (in any form the full-text analyzer gives it: its title,
    /// headings or text); `None` when the word has no term (a stop word).
    fn mentions(&self, word: &str) -> Result<Option<bool>, SearchError>;
    /// The local index's searcher, when this is one (the tree descent reads its store).
    fn local(&self) -> Option<&crate::Searcher> {
        None
    }
}
