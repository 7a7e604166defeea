//! Fuzzes the Markdown parser and the chunker: any UTF-8 input must parse and chunk without a
//! panic, and the chunks must stay inside the note in order.
#![no_main]

use libfuzzer_sys::fuzz_target;
use quire_vault::chunk::{ApproxTokenCounter, ChunkOptions, chunk_note};
use quire_vault::{Outline, ParseOptions, parse_note};

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let note = parse_note("Fuzz/Note.md", text, &ParseOptions::default());
    let _ = Outline::of(&note);
    let options = ChunkOptions {
        target_tokens: 8,
        max_tokens: 16,
    };
    let mut last = 0;
    for chunk in chunk_note(&note, &options, &ApproxTokenCounter) {
        assert!(chunk.byte_range.start >= last && chunk.byte_range.end <= note.source.len());
        assert!(chunk.start_line <= chunk.end_line && chunk.end_line <= note.line_count);
        last = chunk.byte_range.end;
    }
    for h in &note.headings {
        assert!(h.line <= h.end_line && h.end_line <= note.line_count);
    }
});
