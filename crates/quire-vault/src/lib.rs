//! The vault model of quire: everything that can be known about an Obsidian vault from its files
//! alone, with no index, no model and no network.
//!
//! - [`scan`] walks the vault (notes, attachments, and every skipped file with its reason);
//! - [`document`] reads any note file: Markdown, a canvas ([`canvas`]) or a PDF ([`pdf`], the
//!   text of each page, bounded against malformed and hostile files);
//! - [`parse`] reads Obsidian-flavoured Markdown into a [`Note`] with exact line numbers:
//!   properties, headings, links and embeds, tags, callouts, tasks, block ids, daily-note dates;
//! - [`links`] resolves links as Obsidian does and builds backlinks, orphans and index-note parents;
//! - [`chunk`] cuts notes into structure-aware chunks with stable ids;
//! - [`outline`] and [`reasoning`] build the deterministic reasoning index (tree, manifest, outlines);
//! - [`edit`] computes edits of a note's text (a text under a heading) for proposals.
//!
//! Parsing, linking, chunking and the reasoning index are pure functions of text; only [`scan`],
//! [`Vault::open`], the config loader, [`atomic`] (the one way quire replaces a file and reads a
//! note file) and [`reasoning::export`] touch the file system.
//!
//! ```
//! use quire_vault::{parse_note, chunk::{chunk_note, ChunkOptions, ApproxTokenCounter}};
//!
//! let note = parse_note("Plans/Trip.md", "# Trip\n\n## Budget\n- flights #travel\n", &Default::default());
//! assert_eq!(note.title, "Trip");
//! assert_eq!(note.headings[1].text, "Budget");
//! assert_eq!(note.tags[0].name, "travel");
//! let chunks = chunk_note(&note, &ChunkOptions::default(), &ApproxTokenCounter);
//! assert_eq!(chunks.last().unwrap().heading_path, vec!["Trip", "Budget"]);
//! ```

pub mod atomic;
pub mod canvas;
pub mod chunk;
pub mod config;
pub mod daily;
pub mod document;
pub mod edit;
pub mod error;
pub mod frontmatter;
pub mod lines;
pub mod links;
pub mod model;
pub mod outline;
pub mod parse;
pub mod pdf;
pub mod reasoning;
pub mod scan;
pub mod vault;

pub use chunk::{Chunk, ChunkOptions, chunk_note};
pub use error::VaultError;
pub use model::*;
pub use outline::{Outline, OutlineNode};
pub use parse::{ParseOptions, parse_note};
pub use scan::{DocumentKind, ScanOptions, ScanReport, SkipReason, Skipped, scan_paths};
pub use vault::{OpenOptions, Vault, VaultSettings};
