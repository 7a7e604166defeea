//! Reading any note file into a [`Note`]: Markdown is parsed, a canvas is read as its text and
//! links ([`crate::canvas`]), a PDF as the text of its pages ([`crate::pdf`]). The one place
//! that knows the kinds, so the sync, the vault, `read` and ask's re-reading agree on what a
//! file says.

use std::path::Path;

use sha2::{Digest, Sha256};

use crate::model::Note;
use crate::parse::parse_note;
use crate::pdf::{PdfLimits, extract_pdf_bounded, pdf_note};
use crate::scan::{DocumentKind, SkipReason, decode_note, read_note_bytes};
use crate::vault::VaultSettings;

/// The limits PDFs are read with: the defaults, with the time limit from `QUIRE_PDF_TIMEOUT_SECS`
/// when it is set (a positive number of seconds).
fn pdf_limits() -> PdfLimits {
    let mut limits = PdfLimits::default();
    if let Some(seconds) = std::env::var("QUIRE_PDF_TIMEOUT_SECS")
        .ok()
        .and_then(|s| s.trim().parse::<f64>().ok())
        .filter(|s| s.is_finite() && *s > 0.0)
    {
        limits.timeout = std::time::Duration::from_secs_f64(seconds.min(86_400.0));
    }
    limits
}

/// A note file read, and why it is indexed only in part, if it is.
#[derive(Debug, Clone)]
pub struct Loaded {
    /// The document as a note.
    pub note: Note,
    /// Set when only part of it is in `note` (a PDF with more pages than are read).
    pub partial: Option<SkipReason>,
}

/// The bytes of the note file at `abs` within its kind's size cap (see
/// [`crate::scan::ScanOptions::limit_for`]).
pub fn read_document_bytes(
    abs: &Path,
    kind: DocumentKind,
    settings: &VaultSettings,
) -> Result<Vec<u8>, SkipReason> {
    read_note_bytes(abs, settings.scan.limit_for(kind))
}

/// Reads the note file at `abs` (vault-relative `path`) as its kind says.
pub fn read_document(
    path: &str,
    abs: &Path,
    settings: &VaultSettings,
) -> Result<Loaded, SkipReason> {
    let kind = DocumentKind::of(path).unwrap_or(DocumentKind::Markdown);
    let bytes = read_document_bytes(abs, kind, settings)?;
    document_from_bytes(path, kind, bytes, settings)
}

/// The note that the bytes of a file of this kind make.
pub fn document_from_bytes(
    path: &str,
    kind: DocumentKind,
    bytes: Vec<u8>,
    settings: &VaultSettings,
) -> Result<Loaded, SkipReason> {
    match kind {
        DocumentKind::Markdown => {
            let text = decode_note(bytes)?;
            Ok(Loaded {
                note: parse_note(path, &text, &settings.parse),
                partial: None,
            })
        }
        DocumentKind::Canvas => {
            let sha256 = sha256_hex(&bytes);
            let text = decode_note(bytes)?;
            let (note, nodes) = crate::canvas::canvas_note(path, &text, sha256, &settings.parse)
                .map_err(|error| SkipReason::Malformed { error })?;
            let limit = crate::canvas::MAX_NODES;
            Ok(Loaded {
                note,
                partial: (nodes > limit).then_some(SkipReason::TooManyNodes { nodes, limit }),
            })
        }
        DocumentKind::Pdf => {
            let sha256 = sha256_hex(&bytes);
            let limits = pdf_limits();
            let text = extract_pdf_bounded(bytes, &limits).map_err(SkipReason::from_pdf)?;
            let partial =
                (text.page_count > text.pages.len()).then_some(SkipReason::TooManyPages {
                    pages: text.page_count,
                    limit: text.pages.len(),
                });
            Ok(Loaded {
                note: pdf_note(path, &text, sha256),
                partial,
            })
        }
    }
}

/// Lowercase hex sha256 of `bytes`, as [`Note::sha256`] holds it.
pub fn sha256_hex(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// How a PDF or canvas fares when read, for the coverage report of `quire scan`.
#[derive(Debug, Clone, serde::Serialize)]
pub struct AttachmentRead {
    /// Vault-relative path.
    pub path: String,
    /// PDF or canvas.
    pub kind: DocumentKind,
    /// Pages with text read (a PDF that was read), else `None`.
    pub pages: Option<usize>,
    /// Why it is left out or read in part, if it is.
    pub skipped: Option<SkipReason>,
}

/// Reads every PDF and canvas of `paths` (vault-relative; other files are passed over) as the
/// index would, and says what it gives. Costs a full extraction of each PDF.
pub fn read_attachments(paths: &[String], settings: &VaultSettings) -> Vec<AttachmentRead> {
    paths
        .iter()
        .filter_map(|path| {
            let kind = DocumentKind::of(path).filter(|k| *k != DocumentKind::Markdown)?;
            let read = read_document(path, &settings.root.join(path), settings);
            Some(match read {
                Ok(loaded) => AttachmentRead {
                    path: path.clone(),
                    kind,
                    pages: (kind == DocumentKind::Pdf).then_some(loaded.note.headings.len()),
                    skipped: loaded.partial,
                },
                Err(reason) => AttachmentRead {
                    path: path.clone(),
                    kind,
                    pages: None,
                    skipped: Some(reason),
                },
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_canvas_over_the_node_cap_is_indexed_in_part_and_says_so() {
        let limit = crate::canvas::MAX_NODES;
        let nodes: Vec<String> = (0..=limit)
            .map(|i| {
                format!(
                    r#"{{"id":"n{i}","type":"text","text":"node {i}","x":0,"y":{i},"width":1,"height":1}}"#
                )
            })
            .collect();
        let json = format!(r#"{{"nodes":[{}]}}"#, nodes.join(","));
        let dir = tempfile::tempdir().expect("a temporary folder");
        let settings =
            VaultSettings::load(dir.path(), &Default::default()).expect("an empty vault");
        let loaded = document_from_bytes(
            "Big.canvas",
            DocumentKind::Canvas,
            json.into_bytes(),
            &settings,
        )
        .expect("a canvas");
        assert_eq!(
            loaded.partial,
            Some(SkipReason::TooManyNodes {
                nodes: limit + 1,
                limit
            })
        );
        assert!(loaded.note.source.contains(&format!("node {}", limit - 1)));
        assert!(!loaded.note.source.contains(&format!("node {limit}")));
    }
}
