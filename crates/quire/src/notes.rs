//! The commands that read the parsed vault (no index needed): `tree`, `manifest`, `outline`,
//! `read`, `links`, `chunks` and `scan`. Each builds a value that serializes for `--json` and
//! renders as text otherwise.

use std::process::ExitCode;

use anyhow::{Result, anyhow, bail};
use quire_app::vault::reasoning::{self, TreeFolder, TreeNode};
use quire_app::vault::select_lines;
use quire_app::vault::{Chunk, LinkKind, Outline, OutlineNode, Skipped, Vault};
use quire_app::vault::{Resolution, describe_link};
use serde::Serialize;

use crate::Cli;
use crate::common::{find_note, open_options, open_vault, print_json, truncate, vault_root};

/// Prints `value` as JSON with `--json`, else `render`s it.
fn emit<T: Serialize>(
    cli: &Cli,
    out: &mut String,
    value: &T,
    render: impl FnOnce(&mut String, &T),
) -> Result<ExitCode> {
    if cli.json {
        print_json(out, value);
    } else {
        render(out, value);
    }
    Ok(ExitCode::SUCCESS)
}

pub(crate) fn tree(cli: &Cli, out: &mut String) -> Result<ExitCode> {
    let vault = open_vault(cli)?;
    let tree = reasoning::vault_tree(&vault);
    emit(cli, out, &tree, |out, tree| {
        outln!(
            out,
            "{} ({} notes)",
            vault.root.display(),
            vault.notes.len()
        );
        print_tree(out, tree, "");
    })
}

fn print_tree(out: &mut String, folder: &TreeFolder, prefix: &str) {
    for (i, child) in folder.children.iter().enumerate() {
        let last = i + 1 == folder.children.len();
        let (branch, next) = if last {
            ("└── ", "    ")
        } else {
            ("├── ", "│   ")
        };
        match child {
            TreeNode::Folder(sub) => {
                outln!(
                    out,
                    "{prefix}{branch}{}/ ({} notes)",
                    sub.name,
                    sub.note_count
                );
                print_tree(out, sub, &format!("{prefix}{next}"));
            }
            TreeNode::Note(note) => {
                outln!(
                    out,
                    "{prefix}{branch}{}  [{} headings]",
                    note.name,
                    note.heading_count
                );
            }
        }
    }
}

pub(crate) fn manifest(cli: &Cli, out: &mut String) -> Result<ExitCode> {
    let vault = open_vault(cli)?;
    let manifest = reasoning::manifest(&vault);
    emit(cli, out, &manifest, |out, manifest| {
        for row in &manifest.notes {
            outln!(
                out,
                "{}\t{}\ttags: {}\tout: {}\tback: {}\twords: {}",
                row.path,
                row.title,
                row.tags.join(","),
                row.links_out.len(),
                row.backlinks_count,
                row.word_count,
            );
        }
    })
}

pub(crate) fn outline(cli: &Cli, note: &str, out: &mut String) -> Result<ExitCode> {
    let vault = open_vault(cli)?;
    let i = find_note(&vault, note)?;
    let outline = Outline::of(&vault.notes[i]);
    emit(cli, out, &outline, |out, outline| {
        outln!(
            out,
            "{} — {} ({} lines)",
            outline.path,
            outline.title,
            outline.line_count
        );
        print_outline(out, &outline.headings, &outline.path, 0);
    })
}

fn print_outline(out: &mut String, nodes: &[OutlineNode], path: &str, depth: usize) {
    for n in nodes {
        outln!(
            out,
            "{}{} {}  {}:{}-{}",
            "  ".repeat(depth),
            "#".repeat(n.level as usize),
            n.text,
            path,
            n.line,
            n.end_line
        );
        print_outline(out, &n.children, path, depth + 1);
    }
}
/// `quire read`: some lines of a note, with the hash of the note they were read from.
#[derive(Debug, Serialize)]
struct Lines {
    path: String,
    start_line: usize,
    end_line: usize,
    text: String,
    sha256: String,
}

pub(crate) fn read(
    cli: &Cli,
    note: &str,
    lines: Option<&str>,
    heading: Option<&str>,
    out: &mut String,
) -> Result<ExitCode> {
    let vault = open_vault(cli)?;
    let n = &vault.notes[find_note(&vault, note)?];
    let (start, end) = select_lines(n, lines, heading)?;
    let read = Lines {
        path: n.path.clone(),
        start_line: start,
        end_line: end,
        text: n.lines(start, end).unwrap_or_default().to_string(),
        sha256: n.sha256.clone(),
    };
    emit(cli, out, &read, |out, read| outln!(out, "{}", read.text))
}

/// `quire read FILE.pdf --page N`: the page's text as the index has it, with its lines.
pub(crate) fn read_page(cli: &Cli, path: &str, page: u32, out: &mut String) -> Result<ExitCode> {
    let settings = quire_app::vault::VaultSettings::load(&vault_root(cli)?, &open_options(cli))?;
    quire_app::vault::check_confined(path)?;
    let path = path.trim().replace('\\', "/");
    if !quire_app::vault::pdf::is_pdf(&path) {
        bail!("--page reads a PDF's page; {path} is not a PDF");
    }
    let loaded = quire_app::vault::read_document(&path, &settings.root.join(&path), &settings)
        .map_err(|reason| anyhow!("cannot read {path}: {reason}"))?;
    let n = &loaded.note;
    let Some((start, end)) = quire_app::vault::pdf::page_lines(n, page) else {
        bail!(
            "{path} has {} pages read; there is no page {page}",
            n.headings.len()
        );
    };
    let read = Lines {
        path: quire_app::vault::pdf::page_link(&path, page),
        start_line: start,
        end_line: end,
        text: n
            .lines(start, end)
            .unwrap_or_default()
            .trim_end()
            .to_string(),
        sha256: n.sha256.clone(),
    };
    emit(cli, out, &read, |out, read| outln!(out, "{}", read.text))
}

/// `quire links`: a note's links both ways.
#[derive(Debug, Serialize)]
struct Links {
    path: String,
    outgoing: Vec<OutgoingLink>,
    backlinks: Vec<String>,
    unresolved: Vec<quire_app::vault::UnresolvedLink>,
    moc_parents: Vec<String>,
}

#[derive(Debug, Serialize)]
struct OutgoingLink {
    /// The link as written.
    link: String,
    kind: LinkKind,
    target: String,
    subpath: Option<String>,
    line: usize,
    /// `note`, `attachment` or `unresolved`.
    resolves_to: &'static str,
    path: Option<String>,
}

fn links_of(vault: &Vault, i: usize) -> Links {
    let n = &vault.notes[i];
    let paths = |ids: &[usize]| ids.iter().map(|&j| vault.notes[j].path.clone()).collect();
    let outgoing = n
        .links
        .iter()
        .zip(&vault.graph.resolutions[i])
        .map(|(link, resolution)| {
            let (resolves_to, path) = match resolution {
                Some(Resolution::Note(j)) => ("note", Some(vault.notes[*j].path.clone())),
                Some(Resolution::Attachment(p)) => ("attachment", Some(p.clone())),
                None => ("unresolved", None),
            };
            OutgoingLink {
                link: describe_link(link),
                kind: link.kind,
                target: link.target.clone(),
                subpath: link.subpath.clone(),
                line: link.line,
                resolves_to,
                path,
            }
        })
        .collect();
    Links {
        path: n.path.clone(),
        outgoing,
        backlinks: paths(&vault.graph.backlinks[i]),
        unresolved: vault.graph.unresolved[i].clone(),
        moc_parents: paths(&vault.graph.moc_parents[i]),
    }
}

pub(crate) fn links(cli: &Cli, note: &str, out: &mut String) -> Result<ExitCode> {
    let vault = open_vault(cli)?;
    let links = links_of(&vault, find_note(&vault, note)?);
    emit(cli, out, &links, |out, links| {
        outln!(out, "{} — outgoing:", links.path);
        for o in &links.outgoing {
            let to = o.path.as_deref().unwrap_or("(unresolved)");
            outln!(out, "  {}:{}  {}  → {}", links.path, o.line, o.link, to);
        }
        outln!(out, "backlinks ({}):", links.backlinks.len());
        for b in &links.backlinks {
            outln!(out, "  {b}");
        }
        if !links.moc_parents.is_empty() {
            outln!(out, "in maps of content: {}", links.moc_parents.join(", "));
        }
    })
}

/// `quire chunks`: a note's chunks as indexed.
#[derive(Debug, Serialize)]
struct Chunks {
    path: String,
    chunks: Vec<Chunk>,
    /// The note has more chunks than are indexed.
    truncated: bool,
}

pub(crate) fn chunks(cli: &Cli, note: &str, out: &mut String) -> Result<ExitCode> {
    let vault = open_vault(cli)?;
    let i = find_note(&vault, note)?;
    let (chunks, truncated) = vault.chunks_bounded(i);
    let chunks = Chunks {
        path: vault.notes[i].path.clone(),
        chunks,
        truncated,
    };
    emit(cli, out, &chunks, |out, chunks| {
        for c in &chunks.chunks {
            let first = c.body.lines().next().unwrap_or_default();
            outln!(
                out,
                "{}  {}:{}-{}  [{}]  {} tokens  {}\n    {}",
                c.id,
                c.note_path,
                c.start_line,
                c.end_line,
                c.heading_path.join(" > "),
                c.token_count,
                &c.content_hash[..12],
                truncate(first, 90)
            );
        }
        if chunks.truncated {
            outln!(
                out,
                "only the first {} chunks: the rest of the note is not indexed (split it to index the rest)",
                quire_app::vault::MAX_CHUNKS_PER_NOTE
            );
        }
    })
}

/// `quire scan`: what was read, and what was skipped or has problems.
#[derive(Debug, Serialize)]
struct Scan<'a> {
    root: &'a std::path::Path,
    notes: usize,
    attachments: usize,
    /// Every PDF and canvas the scan kept, read as the index reads it: pages, or why not.
    attachments_read: Vec<quire_app::vault::AttachmentRead>,
    skipped: &'a [Skipped],
    warnings: Vec<ScanWarning<'a>>,
}

#[derive(Debug, Serialize)]
struct ScanWarning<'a> {
    path: &'a str,
    line: usize,
    message: &'a str,
}

pub(crate) fn scan(cli: &Cli, out: &mut String) -> Result<ExitCode> {
    let vault = open_vault(cli)?;
    let warnings = vault
        .notes
        .iter()
        .flat_map(|n| {
            n.warnings.iter().map(move |w| ScanWarning {
                path: &n.path,
                line: w.line,
                message: &w.message,
            })
        })
        .collect();
    // PDFs and canvases the scan itself left out (excluded, too large) are in `skipped` already.
    let settings = quire_app::vault::VaultSettings::load(&vault.root, &open_options(cli))?;
    let readable: Vec<String> = vault
        .attachments
        .iter()
        .filter(|a| !vault.skipped.iter().any(|s| &s.path == *a))
        .cloned()
        .collect();
    let read = quire_app::vault::read_attachments(&readable, &settings);
    let scan = Scan {
        root: &vault.root,
        notes: vault.notes.len(),
        attachments: vault.attachments.len(),
        attachments_read: read,
        skipped: &vault.skipped,
        warnings,
    };
    emit(cli, out, &scan, |out, scan| {
        outln!(
            out,
            "{}: {} notes read, {} attachments, {} skipped, {} warnings",
            scan.root.display(),
            scan.notes,
            scan.attachments,
            scan.skipped.len(),
            scan.warnings.len()
        );
        for s in scan.skipped {
            outln!(out, "skipped  {}: {}", s.path, s.message);
        }
        for a in &scan.attachments_read {
            match (&a.skipped, a.pages) {
                (Some(reason), _) if !reason.is_partial() => {
                    outln!(out, "skipped  {}: {reason}", a.path)
                }
                (partial, pages) => outln!(
                    out,
                    "indexed  {}{}{}",
                    a.path,
                    pages.map(|p| format!(": {p} pages")).unwrap_or_default(),
                    partial
                        .as_ref()
                        .map(|r| format!(" ({r})"))
                        .unwrap_or_default()
                ),
            }
        }
        for w in &scan.warnings {
            outln!(out, "warning  {}:{}: {}", w.path, w.line, w.message);
        }
    })
}
