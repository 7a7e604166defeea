//! Fuzzes PDF text extraction (`quire_vault::pdf::extract_pdf`, the sync's entry point without
//! its timer thread): any bytes must give text or a reason, never a panic that escapes, a stack
//! overflow, a hang (libFuzzer's `-timeout`) or unbounded memory (`-rss_limit_mb`); text that
//! comes out must make a note the chunker cuts inside its lines. Seeds: `fuzz/seeds/pdf_extract`
//! (PDFs written by quire-testkit, and `scan_no_text.pdf` from the obsidian-tasks demo vault, MIT).
#![no_main]

use libfuzzer_sys::fuzz_target;
use quire_vault::chunk::{ApproxTokenCounter, ChunkOptions, chunk_note};
use quire_vault::pdf::{PdfLimits, extract_pdf, pdf_note, quietly};

fuzz_target!(|data: &[u8]| {
    let limits = PdfLimits {
        max_pages: 50,
        max_inflated_bytes: 64 * 1024 * 1024,
        ..PdfLimits::default()
    };
    let Ok(text) = quietly(|| extract_pdf(data, &limits)) else {
        return;
    };
    assert!(!text.pages.is_empty() && text.pages.len() <= text.page_count);
    let note = pdf_note("Fuzz/File.pdf", &text, String::new());
    assert_eq!(note.headings.len(), text.pages.len());
    let options = ChunkOptions {
        target_tokens: 16,
        max_tokens: 32,
    };
    for chunk in chunk_note(&note, &options, &ApproxTokenCounter) {
        assert!(chunk.start_line <= chunk.end_line && chunk.end_line <= note.line_count);
        assert!(quire_vault::pdf::page_of(&chunk.heading_path).is_some());
    }
});
