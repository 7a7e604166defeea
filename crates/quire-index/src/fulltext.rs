//! The tantivy full-text index, derived from the store.
//!
//! One document per chunk. Text fields (title, heading path, body) go through
//! [`crate::analyzer`]; `path`, `folder`, `tag` and `type` are untouched keyword fields used as
//! filters. Each commit carries the store generation it reflects as its payload, so a crash
//! between the store commit and this one is seen on the next open and repaired by a rebuild.

use std::path::Path;

use tantivy::collector::TopDocs;
use tantivy::query::{BooleanQuery, BoostQuery, Occur, Query, TermQuery};
use tantivy::schema::{
    Field, IndexRecordOption, STORED, STRING, Schema, TextFieldIndexing, TextOptions, Value,
};
use tantivy::{Index, IndexReader, IndexWriter, ReloadPolicy, TantivyDocument, Term, doc};

use crate::analyzer::{ANALYZER, analyze, strip_html, text_analyzer};
use crate::error::IndexError;

/// Field boosts for BM25 (Obsidian-Copilot's defaults: title ×5, heading ×2).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Boosts {
    /// Weight of a match in the note's title.
    pub title: f32,
    /// Weight of a match in the chunk's heading path.
    pub heading: f32,
    /// Weight of a match in the chunk's text (0 or less: the field is not searched, as for the
    /// others).
    pub body: f32,
}

impl Default for Boosts {
    fn default() -> Self {
        Boosts {
            title: 5.0,
            heading: 2.0,
            body: 1.0,
        }
    }
}

/// What is indexed for one chunk (or one document of an evaluation set).
#[derive(Debug, Clone, Default)]
pub struct FullTextDoc {
    /// Unique key of the document (for notes: `path` + NUL + chunk id).
    pub key: String,
    /// Vault-relative path of the note; a folder filter matches every folder above it.
    pub path: String,
    /// The note's title.
    pub title: String,
    /// The chunk's heading path, joined with ` / `.
    pub headings: String,
    /// The chunk's text; HTML is stripped before indexing.
    pub body: String,
    /// Lowercased tags; each tag also adds its parents (`a/b` adds `a`).
    pub tags: Vec<String>,
    /// The note's `type` property, when it is a string (indexed lowercased).
    pub doc_type: Option<String>,
}

/// Filters that every hit must pass.
#[derive(Debug, Clone, Default)]
pub struct Filter {
    /// Only notes in this folder (vault-relative, any depth).
    pub folder: Option<String>,
    /// Only this one note (its vault-relative path, exactly as indexed): asking one document,
    /// a PDF for instance, through the vault's index.
    pub note: Option<String>,
    /// Only notes with this tag (or a tag below it).
    pub tag: Option<String>,
    /// Only notes whose properties pass all of these (checked against the store by the
    /// searcher, not by the full-text index).
    pub conditions: Vec<crate::filter::Condition>,
    /// Only notes dated on or after this day (`YYYY-MM-DD`; see [`crate::filter::note_date`]).
    pub since: Option<String>,
    /// Only notes dated on or before this day.
    pub until: Option<String>,
}

impl Filter {
    /// Whether it has conditions the full-text index cannot check (properties, dates).
    pub fn needs_store(&self) -> bool {
        !self.conditions.is_empty() || self.since.is_some() || self.until.is_some()
    }
}

/// One BM25 hit.
#[derive(Debug, Clone, PartialEq)]
pub struct FullTextHit {
    /// The document's key, as indexed.
    pub key: String,
    /// The document's `path`.
    pub path: String,
    /// BM25 score with the boosts applied, over live documents only.
    pub score: f32,
}

#[derive(Clone, Copy)]
struct Fields {
    key: Field,
    path: Field,
    folder: Field,
    title: Field,
    headings: Field,
    body: Field,
    tag: Field,
    doc_type: Field,
}

fn schema() -> (Schema, Fields) {
    let mut b = Schema::builder();
    let text = TextOptions::default().set_indexing_options(
        TextFieldIndexing::default()
            .set_tokenizer(ANALYZER)
            .set_index_option(IndexRecordOption::WithFreqsAndPositions),
    );
    let fields = Fields {
        key: b.add_text_field("key", STRING | STORED),
        path: b.add_text_field("path", STRING | STORED),
        folder: b.add_text_field("folder", STRING),
        title: b.add_text_field("title", text.clone()),
        headings: b.add_text_field("headings", text.clone()),
        body: b.add_text_field("body", text),
        tag: b.add_text_field("tag", STRING),
        doc_type: b.add_text_field("type", STRING),
    };
    (b.build(), fields)
}

/// The full-text index.
pub struct FullText {
    index: Index,
    reader: IndexReader,
    fields: Fields,
}

impl FullText {
    /// Opens the index in `dir`, creating it if there is none.
    pub fn open(dir: &Path) -> Result<FullText, IndexError> {
        std::fs::create_dir_all(dir).map_err(|source| IndexError::Io {
            path: dir.to_path_buf(),
            source,
        })?;
        let (schema, fields) = schema();
        let directory =
            tantivy::directory::MmapDirectory::open(dir).map_err(tantivy::TantivyError::from)?;
        let index = Index::open_or_create(directory, schema)?;
        Self::with_index(index, fields)
    }

    /// An index in memory (evaluation sets, tests).
    pub fn in_memory() -> Result<FullText, IndexError> {
        let (schema, fields) = schema();
        Self::with_index(Index::create_in_ram(schema), fields)
    }

    fn with_index(index: Index, fields: Fields) -> Result<FullText, IndexError> {
        index.tokenizers().register(ANALYZER, text_analyzer());
        let reader = index
            .reader_builder()
            .reload_policy(ReloadPolicy::Manual)
            .try_into()?;
        Ok(FullText {
            index,
            reader,
            fields,
        })
    }

    /// The store generation of the last commit (`None` before the first).
    pub fn generation(&self) -> Result<Option<u64>, IndexError> {
        let metas = self.index.load_metas()?;
        Ok(metas.payload.and_then(|p| p.parse().ok()))
    }

    /// A writer: 1 thread and a 50 MB budget (this is a laptop tool, and the store is the truth).
    pub fn writer(&self) -> Result<FullTextWriter, IndexError> {
        let writer: IndexWriter = self.index.writer_with_num_threads(1, 50_000_000)?;
        Ok(FullTextWriter {
            writer,
            fields: self.fields,
        })
    }

    /// Makes the last commit visible to searches.
    pub fn reload(&self) -> Result<(), IndexError> {
        self.reader.reload()?;
        Ok(())
    }

    /// Documents visible to searches (deleted ones excluded).
    pub fn num_docs(&self) -> u64 {
        self.reader.searcher().num_docs()
    }

    /// Whether the live documents hold every term of `text` (analyzed as a query is), each in
    /// some document's title, heading path or body; `None` when `text` has no term (a stop word,
    /// punctuation). Offline `ask` asks this of a question's words: a weighty word that no note
    /// holds is a thing the vault never mentions, and a compound ("gluten-free") counts as held
    /// only when each of its parts is.
    pub fn mentions(&self, text: &str) -> Result<Option<bool>, IndexError> {
        let terms = analyze(text);
        if terms.is_empty() {
            return Ok(None);
        }
        let searcher = self.reader.searcher();
        let f = self.fields;
        for term in &terms {
            let mut held = false;
            for field in [f.title, f.headings, f.body] {
                if live_doc_freq(&searcher, &Term::from_field_text(field, term), 1)? > 0 {
                    held = true;
                    break;
                }
            }
            if !held {
                return Ok(Some(false));
            }
        }
        Ok(Some(true))
    }

    /// BM25 over title, heading path and body with boosts, at most `k` hits, best first.
    pub fn search(
        &self,
        query: &str,
        k: usize,
        filter: &Filter,
        boosts: Boosts,
    ) -> Result<Vec<FullTextHit>, IndexError> {
        let terms = analyze(query);
        if terms.is_empty() || k == 0 {
            return Ok(Vec::new());
        }
        let f = self.fields;
        let mut should: Vec<(Occur, Box<dyn Query>)> = Vec::new();
        for (field, boost) in [
            (f.title, boosts.title),
            (f.headings, boosts.heading),
            (f.body, boosts.body),
        ] {
            if boost <= 0.0 {
                continue;
            }
            for term in &terms {
                let q = TermQuery::new(
                    Term::from_field_text(field, term),
                    IndexRecordOption::WithFreqs,
                );
                should.push((Occur::Should, Box::new(BoostQuery::new(Box::new(q), boost))));
            }
        }
        let mut clauses: Vec<(Occur, Box<dyn Query>)> =
            vec![(Occur::Must, Box::new(BooleanQuery::new(should)))];
        if let Some(folder) = &filter.folder {
            let folder = folder.trim_matches('/');
            clauses.push((
                Occur::Must,
                Box::new(TermQuery::new(
                    Term::from_field_text(f.folder, folder),
                    IndexRecordOption::Basic,
                )),
            ));
        }
        if let Some(note) = &filter.note {
            clauses.push((
                Occur::Must,
                Box::new(TermQuery::new(
                    Term::from_field_text(f.path, note),
                    IndexRecordOption::Basic,
                )),
            ));
        }
        if let Some(tag) = &filter.tag {
            let tag = tag.trim_start_matches('#').to_lowercase();
            clauses.push((
                Occur::Must,
                Box::new(TermQuery::new(
                    Term::from_field_text(f.tag, &tag),
                    IndexRecordOption::Basic,
                )),
            ));
        }
        let query = BooleanQuery::new(clauses);
        let searcher = self.reader.searcher();
        let stats = AliveStatistics(&searcher);
        let top = searcher.search_with_statistics_provider(
            &query,
            &TopDocs::with_limit(k).order_by_score(),
            &stats,
        )?;
        let mut hits = Vec::with_capacity(top.len());
        for (score, address) in top {
            let doc: TantivyDocument = searcher.doc(address)?;
            let get = |field| {
                doc.get_first(field)
                    .and_then(|v| v.as_str())
                    .unwrap_or_default()
                    .to_string()
            };
            hits.push(FullTextHit {
                key: get(f.key),
                path: get(f.path),
                score,
            });
        }
        Ok(hits)
    }
}

/// The length BM25 uses for a field of `tokens` tokens: the index keeps a field's length in one
/// byte (exact up to 40, coarser above), and scores with that. The team database stores the same
/// value so that both score alike.
pub fn stored_field_length(tokens: u32) -> u32 {
    tantivy::fieldnorm::FieldNormReader::id_to_fieldnorm(
        tantivy::fieldnorm::FieldNormReader::fieldnorm_to_id(tokens),
    )
}

/// BM25's term-frequency saturation, as the index scores it.
pub const BM25_K1: f64 = 1.2;
/// BM25's length normalisation, as the index scores it.
pub const BM25_B: f64 = 0.75;

/// BM25's inverse document frequency of a term in `doc_freq` of `docs` documents, as the index
/// scores it.
pub fn bm25_idf(doc_freq: u64, docs: u64) -> f64 {
    let x = (docs.saturating_sub(doc_freq) as f64 + 0.5) / (doc_freq as f64 + 0.5);
    (1.0 + x).ln()
}

/// How many live documents hold `term`, counting no further than `limit` (a deleted document's
/// postings stay until a merge, so they are walked where a segment has deletions).
fn live_doc_freq(searcher: &tantivy::Searcher, term: &Term, limit: u64) -> tantivy::Result<u64> {
    use tantivy::DocSet;
    let mut total = 0u64;
    for segment in searcher.segment_readers() {
        if total >= limit {
            break;
        }
        let index = segment.inverted_index(term.field())?;
        let Some(alive) = segment.alive_bitset() else {
            total += u64::from(index.doc_freq(term)?);
            continue;
        };
        let Some(mut postings) = index.read_postings(term, IndexRecordOption::Basic)? else {
            continue;
        };
        let mut doc = postings.doc();
        while doc != tantivy::TERMINATED && total < limit {
            if alive.is_alive(doc) {
                total += 1;
            }
            doc = postings.advance();
        }
    }
    Ok(total.min(limit))
}

/// BM25 statistics over the live documents only.
///
/// tantivy's own statistics count documents that were deleted but not yet merged away, so after
/// incremental syncs the scores (and sometimes the order) differed from a fresh build of the same
/// vault. Here the document count and document frequencies count live documents exactly; the
/// token total subtracts the deleted documents' field lengths as the index stores them (exact up
/// to 40 tokens per field, within about 10% above), so the average length is off by at most a
/// fraction of the deleted documents' share. Segments without deletions cost what tantivy's own
/// statistics cost.
struct AliveStatistics<'a>(&'a tantivy::Searcher);

impl tantivy::query::Bm25StatisticsProvider for AliveStatistics<'_> {
    fn total_num_tokens(&self, field: Field) -> tantivy::Result<u64> {
        let mut total = 0u64;
        for segment in self.0.segment_readers() {
            let all = segment.inverted_index(field)?.total_num_tokens();
            let Some(alive) = segment.alive_bitset() else {
                total += all;
                continue;
            };
            let norms = segment.get_fieldnorms_reader(field)?;
            let deleted: u64 = (0..segment.max_doc())
                .filter(|&doc| alive.is_deleted(doc))
                .map(|doc| u64::from(norms.fieldnorm(doc)))
                .sum();
            total += all.saturating_sub(deleted);
        }
        Ok(total)
    }

    fn total_num_docs(&self) -> tantivy::Result<u64> {
        Ok(self.0.num_docs())
    }

    fn doc_freq(&self, term: &Term) -> tantivy::Result<u64> {
        live_doc_freq(self.0, term, u64::MAX)
    }
}

/// Adds and deletes documents; nothing is visible until [`FullTextWriter::commit`].
pub struct FullTextWriter {
    writer: IndexWriter,
    fields: Fields,
}

impl FullTextWriter {
    /// Deletes every document.
    pub fn delete_all(&mut self) -> Result<(), IndexError> {
        self.writer.delete_all_documents()?;
        Ok(())
    }

    /// Deletes every document of a note.
    pub fn delete_path(&mut self, path: &str) {
        self.writer
            .delete_term(Term::from_field_text(self.fields.path, path));
    }

    /// Adds a document (it does not replace one with the same key: delete its note first).
    pub fn add(&mut self, d: &FullTextDoc) -> Result<(), IndexError> {
        let f = self.fields;
        let mut document = doc!(
            f.key => d.key.as_str(),
            f.path => d.path.as_str(),
            f.title => strip_html(&d.title).as_ref(),
            f.headings => strip_html(&d.headings).as_ref(),
            f.body => strip_html(&d.body).as_ref(),
        );
        // Every ancestor folder, so a folder filter matches notes at any depth below it.
        let mut folder = String::new();
        let parts: Vec<&str> = d.path.split('/').collect();
        for part in &parts[..parts.len().saturating_sub(1)] {
            if !folder.is_empty() {
                folder.push('/');
            }
            folder.push_str(part);
            document.add_text(f.folder, &folder);
        }
        for tag in &d.tags {
            let mut prefix = String::new();
            for part in tag.split('/') {
                if !prefix.is_empty() {
                    prefix.push('/');
                }
                prefix.push_str(part);
                document.add_text(f.tag, &prefix);
            }
        }
        if let Some(t) = &d.doc_type {
            document.add_text(f.doc_type, t.to_lowercase());
        }
        self.writer.add_document(document)?;
        Ok(())
    }

    /// Commits, recording the store generation this state reflects.
    pub fn commit(mut self, generation: u64) -> Result<(), IndexError> {
        let mut prepared = self.writer.prepare_commit()?;
        prepared.set_payload(&generation.to_string());
        prepared.commit()?;
        self.writer.wait_merging_threads()?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn doc(key: &str, title: &str, body: &str) -> FullTextDoc {
        FullTextDoc {
            key: key.into(),
            path: format!("{key}.md"),
            title: title.into(),
            headings: String::new(),
            body: body.into(),
            tags: Vec::new(),
            doc_type: None,
        }
    }

    #[test]
    fn a_word_is_mentioned_by_any_of_its_forms_until_its_notes_are_deleted()
    -> Result<(), IndexError> {
        let index = FullText::in_memory()?;
        let mut writer = index.writer()?;
        writer.add(&doc("a", "Sourdough", "Feeding the starter twice a day."))?;
        writer.add(&doc("b", "Tea", "Green tea steeps for two minutes."))?;
        writer.commit(1)?;
        index.reload()?;
        assert_eq!(index.mentions("sourdough")?, Some(true), "a title's word");
        assert_eq!(
            index.mentions("Feeds")?,
            Some(true),
            "another form of a body's word"
        );
        assert_eq!(index.mentions("focaccia")?, Some(false));
        assert_eq!(
            index.mentions("the")?,
            None,
            "a stop word has no term to look for"
        );
        let mut writer = index.writer()?;
        writer.delete_path("b.md");
        writer.commit(2)?;
        index.reload()?;
        assert_eq!(
            index.mentions("steeping")?,
            Some(false),
            "a deleted note mentions nothing"
        );
        Ok(())
    }
}
