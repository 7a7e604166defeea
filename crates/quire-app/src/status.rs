//! The coverage report of an index, built once for every face (`quire status`, `/api/status`):
//! what is indexed, with which embedding model, whether the two halves of the index agree, and
//! every skipped file with its reason.

use std::fmt;
use std::path::PathBuf;

use quire_embed::EmbeddingSpace;
use quire_index::store::Table;
use quire_search::{SearchError, Searcher};
use serde::Serialize;

/// A file the index left out, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SkippedFile {
    /// Vault-relative path.
    pub path: String,
    /// Why it was left out, in words, as the last sync recorded it.
    pub reason: String,
}

/// What an index holds.
#[derive(Debug, Clone, Serialize)]
pub struct StatusReport {
    /// The index's directory.
    pub index_dir: PathBuf,
    /// The vault the index was built from, as recorded by the last sync.
    pub vault_root: Option<String>,
    /// The store's generation: the last committed sync's (0 before the first).
    pub generation: u64,
    /// The full-text index's generation (`None` before its first commit).
    pub fulltext_generation: Option<u64>,
    /// Whether the full-text index is at the store's generation (see `quire_index::Consistency`).
    pub consistent: bool,
    /// Notes in the store.
    pub notes_indexed: u64,
    /// Chunks in the store.
    pub chunks: u64,
    /// Stored vectors, one per distinct chunk text and embedding space, of any space and
    /// including texts no chunk has any more (the store never deletes a vector).
    pub embeddings: u64,
    /// The space the index's vectors are in (recorded by the last sync with a model); `None`
    /// when no sync had one.
    pub embedding_space: Option<EmbeddingSpace>,
    /// The skipped files, at most as many as asked for.
    pub skipped: Vec<SkippedFile>,
    /// How many files the last sync skipped in all.
    pub skipped_total: usize,
    /// PDFs and canvases: how many are indexed, and which were left out (or indexed in part) and
    /// why.
    pub attachments: AttachmentCoverage,
}

/// The PDFs and canvases of an index.
#[derive(Debug, Clone, Default, Serialize)]
pub struct AttachmentCoverage {
    /// PDFs in the index.
    pub pdfs_indexed: u64,
    /// Canvases in the index.
    pub canvases_indexed: u64,
    /// PDFs and canvases the last sync left out or read in part (encrypted, no text layer, too
    /// large, malformed, too many pages), every one with its reason.
    pub skipped: Vec<SkippedFile>,
}

impl AttachmentCoverage {
    fn of(paths: impl Iterator<Item = String>, skipped: &[(String, String)]) -> AttachmentCoverage {
        use quire_vault::DocumentKind;
        let mut coverage = AttachmentCoverage::default();
        for path in paths {
            match DocumentKind::of(&path) {
                Some(DocumentKind::Pdf) => coverage.pdfs_indexed += 1,
                Some(DocumentKind::Canvas) => coverage.canvases_indexed += 1,
                _ => {}
            }
        }
        coverage.skipped = skipped
            .iter()
            .filter(|(path, _)| DocumentKind::of(path).is_some_and(|k| k != DocumentKind::Markdown))
            .map(|(path, reason)| SkippedFile {
                path: path.clone(),
                reason: reason.clone(),
            })
            .collect();
        coverage
    }
}

impl StatusReport {
    /// The report of the index `searcher` reads (opened with `Searcher::open_any`, so an
    /// inconsistent index is reported rather than refused), listing at most `max_skipped`
    /// skipped files.
    pub fn of(
        searcher: &Searcher,
        index_dir: PathBuf,
        max_skipped: usize,
    ) -> Result<StatusReport, SearchError> {
        let store = searcher.store();
        let consistency = searcher.consistency()?;
        let skipped = store.skipped()?;
        let attachments =
            AttachmentCoverage::of(store.notes()?.into_iter().map(|n| n.path), &skipped);
        Ok(StatusReport {
            attachments,
            index_dir,
            vault_root: store.meta("vault_root")?,
            generation: consistency.store_generation,
            fulltext_generation: consistency.fulltext_generation,
            consistent: consistency.is_consistent(),
            notes_indexed: store.count(Table::Notes)?,
            chunks: store.count(Table::Chunks)?,
            embeddings: store.count(Table::Embeddings)?,
            embedding_space: searcher.space()?,
            skipped_total: skipped.len(),
            skipped: skipped
                .into_iter()
                .take(max_skipped)
                .map(|(path, reason)| SkippedFile { path, reason })
                .collect(),
        })
    }

    /// The text `quire status` prints, without the size line the CLI adds.
    fn lines(&self) -> Vec<String> {
        let mut lines = vec![
            format!("index       {}", self.index_dir.display()),
            format!("generation  {}", self.generation),
        ];
        if !self.consistent {
            // Both halves at one generation and still not consistent: the analyzer is behind.
            let error = if self.fulltext_generation == Some(self.generation) {
                quire_index::IndexError::AnalyzerBehind
            } else {
                quire_index::IndexError::Inconsistent {
                    store: self.generation,
                    fulltext: self.fulltext_generation,
                }
            };
            lines.push(format!("consistent  no: {error}"));
        }
        lines.push(format!("notes       {}", self.notes_indexed));
        lines.push(format!("chunks      {}", self.chunks));
        let a = &self.attachments;
        lines.push(format!(
            "attachments {} PDFs and {} canvases indexed, {} left out or in part{}",
            a.pdfs_indexed,
            a.canvases_indexed,
            a.skipped.len(),
            if a.skipped.is_empty() { "" } else { ":" }
        ));
        lines.extend(
            a.skipped
                .iter()
                .map(|s| format!("  {}: {}", s.path, s.reason)),
        );
        lines.push(match &self.embedding_space {
            Some(space) => format!(
                "embeddings  {} ({}, {} dimensions)",
                self.embeddings, space.model, space.dimension
            ),
            None => "embeddings  none (no embedding model was available: search runs in bm25 mode)"
                .to_string(),
        });
        lines
    }

    /// The skipped files as `quire status` lists them.
    fn skipped_lines(&self) -> Vec<String> {
        let mut lines = vec![format!("skipped     {}", self.skipped_total)];
        lines.extend(
            self.skipped
                .iter()
                .map(|s| format!("  {}: {}", s.path, s.reason)),
        );
        lines
    }
}

/// The report as text, with the index size (the CLI knows it) before the skipped files.
pub struct StatusText<'a> {
    /// The report to print.
    pub report: &'a StatusReport,
    /// The size of the index directory's files, in bytes (printed in MB).
    pub index_bytes: u64,
}

impl fmt::Display for StatusText<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for line in self.report.lines() {
            writeln!(f, "{line}")?;
        }
        writeln!(f, "size        {:.1} MB", self.index_bytes as f64 / 1e6)?;
        for line in self.report.skipped_lines() {
            writeln!(f, "{line}")?;
        }
        Ok(())
    }
}
