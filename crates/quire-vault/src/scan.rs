//! Walking a vault: which files are notes, which are attachments, and which were skipped and why.
//!
//! Follows Obsidian's view of a vault: `*.md` files are notes; hidden entries (`.obsidian/`,
//! `.trash/`, `.git/`, any dot-name) and `node_modules/` are not part of it. Symbolic links are
//! followed only while they stay inside the vault; a link out of it, a broken link and a link loop
//! are reported, never followed.

use std::fs;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::UNIX_EPOCH;

use globset::{Glob, GlobSet, GlobSetBuilder};
use serde::Serialize;

use crate::error::VaultError;

/// Rules for a scan.
#[derive(Debug, Clone)]
pub struct ScanOptions {
    /// Only notes matching one of these globs (vault-relative) are read; empty means all.
    pub include: Vec<String>,
    /// Notes matching one of these globs are skipped.
    pub exclude: Vec<String>,
    /// Notes (and canvases) larger than this are skipped.
    pub max_file_bytes: u64,
    /// PDFs larger than this are skipped.
    pub max_pdf_bytes: u64,
    /// Directories never walked (e.g. the index directory), as absolute paths.
    pub skip_dirs: Vec<PathBuf>,
}

impl ScanOptions {
    /// The size cap of a document of this kind.
    pub fn limit_for(&self, kind: DocumentKind) -> u64 {
        match kind {
            DocumentKind::Pdf => self.max_pdf_bytes,
            DocumentKind::Markdown | DocumentKind::Canvas => self.max_file_bytes,
        }
    }
}

/// What kind of document a note file is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum DocumentKind {
    /// `*.md`: a Markdown note.
    Markdown,
    /// `*.canvas`: a JSON Canvas, read as its text and links ([`crate::canvas`]).
    Canvas,
    /// `*.pdf`: a PDF, read as the text of its pages ([`crate::pdf`]).
    Pdf,
}

impl DocumentKind {
    /// The kind of the file at `path`, by its extension (any case); `None` for other files.
    pub fn of(path: &str) -> Option<DocumentKind> {
        let name = path.rsplit('/').next().unwrap_or(path);
        let (_, ext) = name.rsplit_once('.')?;
        match ext.to_ascii_lowercase().as_str() {
            "md" => Some(DocumentKind::Markdown),
            "canvas" => Some(DocumentKind::Canvas),
            "pdf" => Some(DocumentKind::Pdf),
            _ => None,
        }
    }
}

/// Bytes in a mebibyte: sizes and the size cap (`max_file_mb`) are in MiB.
const MIB: f64 = 1024.0 * 1024.0;

/// The default [`ScanOptions::max_file_bytes`]: 5 MiB.
pub const DEFAULT_MAX_FILE_BYTES: u64 = 5 * 1024 * 1024;

/// The default [`ScanOptions::max_pdf_bytes`]: 64 MiB.
pub const DEFAULT_MAX_PDF_BYTES: u64 = 64 * 1024 * 1024;

impl Default for ScanOptions {
    fn default() -> Self {
        ScanOptions {
            include: Vec::new(),
            exclude: Vec::new(),
            max_file_bytes: DEFAULT_MAX_FILE_BYTES,
            max_pdf_bytes: DEFAULT_MAX_PDF_BYTES,
            skip_dirs: Vec::new(),
        }
    }
}

/// Why a file was not read as a note.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, serde::Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum SkipReason {
    /// The path matches an exclude pattern.
    Excluded {
        /// The exclude glob that matched, as configured.
        pattern: String,
    },
    /// Include patterns are set, and none matches the path.
    NotIncluded,
    /// A symbolic link that resolves outside the vault.
    SymlinkOutsideVault {
        /// The link's resolved target, an absolute path.
        target: String,
    },
    /// A symbolic link whose target does not exist.
    BrokenSymlink,
    /// A symbolic link that leads back to itself.
    SymlinkLoop,
    /// The file or folder could not be read (permissions, an I/O error).
    Unreadable {
        /// The operating system's reason, as text.
        error: String,
    },
    /// The file is not valid UTF-8 text.
    NotUtf8 {
        /// The line of the first invalid byte, 1-based.
        line: usize,
        /// The offset of the first invalid byte in the file.
        byte: usize,
    },
    /// The file has a NUL byte in its first 8 KiB.
    Binary,
    /// The file is larger than [`ScanOptions::max_file_bytes`].
    TooLarge {
        /// The file's size, in bytes.
        bytes: u64,
        /// The cap, in bytes.
        limit: u64,
    },
    /// The file's path is not valid UTF-8.
    BadFileName,
    /// A FIFO, socket or device with a note's name: never opened (a FIFO would block a reader).
    NotAFile {
        /// What it is (`named pipe (FIFO)`, `socket`, …).
        file_type: String,
    },
    /// The note has more chunks than one note may have: only the first `limit` are indexed.
    TooManyChunks {
        /// [`crate::chunk::MAX_CHUNKS_PER_NOTE`].
        limit: usize,
    },
    /// A PDF encrypted with a password.
    Encrypted,
    /// A PDF with no text on any page (a scan or images; there is no OCR).
    NoTextLayer {
        /// Its page count.
        pages: usize,
    },
    /// A PDF or canvas that cannot be read as one (or that quire refuses: a deflate bomb, forms
    /// nested without end, an extraction that took too long).
    Malformed {
        /// What is wrong with it.
        error: String,
    },
    /// A PDF with more pages than [`crate::pdf::PdfLimits::max_pages`]: only the first are indexed.
    TooManyPages {
        /// Its page count.
        pages: usize,
        /// The pages indexed.
        limit: usize,
    },
    /// A canvas with more nodes than [`crate::canvas::MAX_NODES`]: only the first are indexed.
    TooManyNodes {
        /// Its node count.
        nodes: usize,
        /// The nodes indexed.
        limit: usize,
    },
}

impl SkipReason {
    /// The reason a PDF gave no text.
    pub fn from_pdf(error: crate::pdf::PdfError) -> SkipReason {
        match error {
            crate::pdf::PdfError::Encrypted => SkipReason::Encrypted,
            crate::pdf::PdfError::NoTextLayer { pages } => SkipReason::NoTextLayer { pages },
            other => SkipReason::Malformed {
                error: other.to_string(),
            },
        }
    }

    /// Whether the file is still indexed, only in part (too many chunks or pages).
    pub fn is_partial(&self) -> bool {
        matches!(
            self,
            SkipReason::TooManyChunks { .. }
                | SkipReason::TooManyPages { .. }
                | SkipReason::TooManyNodes { .. }
        )
    }
}

impl std::fmt::Display for SkipReason {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SkipReason::Excluded { pattern } => write!(f, "excluded by pattern `{pattern}`"),
            SkipReason::NotIncluded => write!(f, "not matched by any include pattern"),
            SkipReason::SymlinkOutsideVault { target } => {
                write!(
                    f,
                    "symbolic link to {target}, outside the vault: not followed"
                )
            }
            SkipReason::BrokenSymlink => write!(f, "broken symbolic link"),
            SkipReason::SymlinkLoop => write!(f, "symbolic link loop: not followed"),
            SkipReason::Unreadable { error } => write!(f, "not readable: {error}"),
            SkipReason::NotUtf8 { line, byte } => {
                write!(f, "not valid UTF-8 (line {line}, byte offset {byte})")
            }
            SkipReason::Binary => write!(f, "binary file (contains NUL bytes)"),
            SkipReason::TooLarge { bytes, limit } => write!(
                f,
                "larger than the size cap ({:.1} MiB > {:.1} MiB)",
                *bytes as f64 / MIB,
                *limit as f64 / MIB
            ),
            SkipReason::BadFileName => write!(f, "file name is not valid UTF-8"),
            SkipReason::NotAFile { file_type } => {
                write!(f, "not a regular file ({file_type}): not read")
            }
            SkipReason::TooManyChunks { limit } => write!(
                f,
                "more than {limit} chunks: only the first {limit} are indexed (split the note to index the rest)"
            ),
            SkipReason::Encrypted => write!(f, "encrypted PDF (needs a password): not indexed"),
            SkipReason::NoTextLayer { pages } => write!(
                f,
                "no text layer ({pages} page{} of scans or images; quire does no OCR)",
                if *pages == 1 { "" } else { "s" }
            ),
            SkipReason::Malformed { error } => write!(f, "cannot be read: {error}"),
            SkipReason::TooManyPages { pages, limit } => {
                write!(f, "{pages} pages: only the first {limit} are indexed")
            }
            SkipReason::TooManyNodes { nodes, limit } => {
                write!(
                    f,
                    "{nodes} canvas nodes: only the first {limit} are indexed"
                )
            }
        }
    }
}

/// A file that was not read, with the reason.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Skipped {
    /// Vault-relative path; the absolute path (shown lossily) when it is not valid UTF-8 or lies
    /// outside the vault, empty when the walk could not say.
    pub path: String,
    /// Why, for programs.
    pub reason: SkipReason,
    /// Why, for people: `reason` as text.
    pub message: String,
    /// The sha256 of the bytes that failed, for a document whose reading is costly (a PDF or a
    /// canvas): the index keeps it so the same bytes are not read again.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sha256: Option<String>,
}

impl Skipped {
    /// A skipped file at `path`, its message written from `reason`.
    pub fn new(path: impl Into<String>, reason: SkipReason) -> Self {
        let message = reason.to_string();
        Skipped {
            path: path.into(),
            reason,
            message,
            sha256: None,
        }
    }

    /// [`Skipped::new`] for a document whose bytes (`sha256`) failed: remembered by the index,
    /// not read again until they change.
    pub fn failed(path: impl Into<String>, reason: SkipReason, sha256: String) -> Self {
        Skipped {
            sha256: Some(sha256),
            ..Skipped::new(path, reason)
        }
    }
}

/// A note file found by the scan (not yet read): Markdown, a canvas or a PDF.
#[derive(Debug, Clone)]
pub struct NoteFile {
    /// Vault-relative, `/`-separated.
    pub path: String,
    /// What kind of document it is (by its extension).
    pub kind: DocumentKind,
    /// Where to read it: the vault root joined with `path`.
    pub abs_path: PathBuf,
    /// Size in bytes when scanned.
    pub size: u64,
    /// Modification time, nanoseconds since the Unix epoch (0 if unknown).
    pub mtime_ns: u128,
}

/// What a scan found.
#[derive(Debug, Clone, Default)]
pub struct ScanReport {
    /// The canonical vault root.
    pub root: PathBuf,
    /// Note files (Markdown, canvases, PDFs), sorted by path.
    pub notes: Vec<NoteFile>,
    /// Files that are not Markdown (images, PDFs, canvases), vault-relative, sorted: what links
    /// to attachments resolve to.
    pub attachments: Vec<String>,
    /// Files and folders left out, with why (hidden and `node_modules/` entries are not listed).
    pub skipped: Vec<Skipped>,
    /// The newest modification time among notes and folders (a folder's changes when a note in it
    /// is added, removed or renamed), nanoseconds since the Unix epoch.
    pub newest_mtime_ns: u128,
}

fn build_globs(patterns: &[String]) -> Result<Vec<(String, GlobSet)>, VaultError> {
    patterns
        .iter()
        .map(|p| {
            let glob = Glob::new(p).map_err(|e| VaultError::BadPattern {
                pattern: p.clone(),
                message: e.to_string(),
            })?;
            let mut set = GlobSetBuilder::new();
            set.add(glob);
            // Also match everything below a directory pattern (`Archive` → `Archive/**`).
            if let Ok(below) = Glob::new(&format!("{}/**", p.trim_end_matches('/'))) {
                set.add(below);
            }
            let set = set.build().map_err(|e| VaultError::BadPattern {
                pattern: p.clone(),
                message: e.to_string(),
            })?;
            Ok((p.clone(), set))
        })
        .collect()
}

fn mtime_ns(meta: &fs::Metadata) -> u128 {
    meta.modified()
        .ok()
        .and_then(|t| t.duration_since(UNIX_EPOCH).ok())
        .map(|d| d.as_nanos())
        .unwrap_or(0)
}

/// The vault-relative `/` path of `path` under `root`, if it is valid UTF-8.
fn relative(root: &Path, path: &Path) -> Option<String> {
    let rel = path.strip_prefix(root).ok()?;
    let parts: Option<Vec<&str>> = rel.components().map(|c| c.as_os_str().to_str()).collect();
    Some(parts?.join("/"))
}

/// The scan's rules, ready to apply: the canonical root, the globs, the folders to skip.
struct Rules {
    root: PathBuf,
    include: Vec<(String, GlobSet)>,
    exclude: Vec<(String, GlobSet)>,
    skip_dirs: Vec<PathBuf>,
}

impl Rules {
    fn new(root: &Path, options: &ScanOptions) -> Result<Rules, VaultError> {
        let root = root.canonicalize().map_err(|e| VaultError::Root {
            path: root.to_path_buf(),
            message: e.to_string(),
        })?;
        if !root.is_dir() {
            return Err(VaultError::Root {
                path: root.clone(),
                message: "not a directory".into(),
            });
        }
        Ok(Rules {
            root,
            include: build_globs(&options.include)?,
            exclude: build_globs(&options.exclude)?,
            skip_dirs: options
                .skip_dirs
                .iter()
                .filter_map(|d| d.canonicalize().ok())
                .collect(),
        })
    }

    /// The scan's verdict on one note file (`rel`, of `kind`, at `abs`): a note to read, or
    /// skipped because it is excluded, not included or too large.
    fn judge(
        &self,
        options: &ScanOptions,
        rel: String,
        kind: DocumentKind,
        abs: PathBuf,
        meta: &fs::Metadata,
    ) -> Result<NoteFile, Skipped> {
        if let Some((pattern, _)) = self.exclude.iter().find(|(_, set)| set.is_match(&rel)) {
            let pattern = pattern.clone();
            return Err(Skipped::new(rel, SkipReason::Excluded { pattern }));
        }
        if !self.include.is_empty() && !self.include.iter().any(|(_, set)| set.is_match(&rel)) {
            return Err(Skipped::new(rel, SkipReason::NotIncluded));
        }
        let limit = options.limit_for(kind);
        if meta.len() > limit {
            let bytes = meta.len();
            return Err(Skipped::new(rel, SkipReason::TooLarge { bytes, limit }));
        }
        Ok(NoteFile {
            path: rel,
            kind,
            abs_path: abs,
            size: meta.len(),
            mtime_ns: mtime_ns(meta),
        })
    }
}

/// Walks the vault at `root` (which must exist and be a directory).
pub fn scan_vault(root: &Path, options: &ScanOptions) -> Result<ScanReport, VaultError> {
    let rules = Rules::new(root, options)?;
    let root = rules.root.clone();
    let skip_dirs = rules.skip_dirs.clone();

    let skipped = Arc::new(Mutex::new(Vec::new()));
    let filter_skipped = Arc::clone(&skipped);
    let filter_root = root.clone();
    let mut walker = ignore::WalkBuilder::new(&root);
    walker
        .standard_filters(false)
        .follow_links(true)
        .filter_entry(move |entry| {
            if entry.depth() == 0 {
                return true;
            }
            let name = entry.file_name().to_string_lossy();
            if name.starts_with('.') || name == "node_modules" {
                return false;
            }
            let rel = relative(&filter_root, entry.path())
                .unwrap_or_else(|| entry.path().display().to_string());
            if entry.path_is_symlink() {
                let target = match entry.path().canonicalize() {
                    Ok(t) => t,
                    Err(_) => {
                        // Loops also fail to canonicalize (ELOOP); tell them apart for the report.
                        let reason = match fs::metadata(entry.path()) {
                            Err(e) if is_link_loop(&e) => SkipReason::SymlinkLoop,
                            _ => SkipReason::BrokenSymlink,
                        };
                        if let Ok(mut s) = filter_skipped.lock() {
                            s.push(Skipped::new(rel, reason));
                        }
                        return false;
                    }
                };
                if !target.starts_with(&filter_root) {
                    if let Ok(mut s) = filter_skipped.lock() {
                        s.push(Skipped::new(
                            rel,
                            SkipReason::SymlinkOutsideVault {
                                target: target.display().to_string(),
                            },
                        ));
                    }
                    return false;
                }
            }
            if let Ok(canonical) = entry.path().canonicalize()
                && skip_dirs.iter().any(|d| canonical.starts_with(d))
            {
                return false;
            }
            true
        });

    let mut report = ScanReport {
        root: root.clone(),
        ..Default::default()
    };
    for result in walker.build() {
        let entry = match result {
            Ok(entry) => entry,
            Err(err) => {
                let (path, reason) = describe_walk_error(&root, &err);
                if let Ok(mut s) = skipped.lock() {
                    s.push(Skipped::new(path, reason));
                }
                continue;
            }
        };
        let meta = match entry.metadata() {
            Ok(m) => m,
            Err(e) => {
                let path = relative(&root, entry.path())
                    .unwrap_or_else(|| entry.path().display().to_string());
                let reason = match (link_reason(entry.path()), e.io_error()) {
                    (Some(reason), _) => reason,
                    (None, Some(io)) => io_reason(entry.path(), io),
                    (None, None) => SkipReason::Unreadable {
                        error: e.to_string(),
                    },
                };
                if let Ok(mut s) = skipped.lock() {
                    s.push(Skipped::new(path, reason));
                }
                continue;
            }
        };
        report.newest_mtime_ns = report.newest_mtime_ns.max(mtime_ns(&meta));
        if meta.is_dir() {
            continue;
        }
        if !meta.is_file() {
            // A FIFO, socket or device: opening a FIFO to read it blocks until someone writes.
            let path =
                relative(&root, entry.path()).unwrap_or_else(|| entry.path().display().to_string());
            report.skipped.push(Skipped::new(
                path,
                SkipReason::NotAFile {
                    file_type: crate::atomic::file_kind(&meta.file_type()).to_string(),
                },
            ));
            continue;
        }
        let Some(rel) = relative(&root, entry.path()) else {
            if let Ok(mut s) = skipped.lock() {
                s.push(Skipped::new(
                    entry.path().display().to_string(),
                    SkipReason::BadFileName,
                ));
            }
            continue;
        };
        let kind = DocumentKind::of(&rel);
        if kind != Some(DocumentKind::Markdown) {
            report.attachments.push(rel.clone());
        }
        let Some(kind) = kind else {
            continue;
        };
        match rules.judge(options, rel, kind, entry.path().to_path_buf(), &meta) {
            Ok(note) => report.notes.push(note),
            Err(skip) => report.skipped.push(skip),
        }
    }
    if let Ok(mut s) = skipped.lock() {
        report.skipped.append(&mut s);
    }
    report.notes.sort_by(|a, b| a.path.cmp(&b.path));
    report.attachments.sort();
    report.skipped.sort_by(|a, b| a.path.cmp(&b.path));
    report.skipped.dedup();
    Ok(report)
}

/// What [`scan_vault`] would say about these vault-relative paths alone, without walking the
/// vault: for a watcher that knows which files changed. A path that is gone, hidden, under a
/// skipped folder or not a note kind is simply absent from the report (as from a whole scan);
/// excluded, not included and too large files are `skipped` with the scan's reasons.
///
/// `Ok(None)` when only the walk can tell (a symbolic link on the way, something other than a
/// regular file, an error reading metadata, a name that is not a plain relative path): the
/// caller scans the whole vault instead. Attachments are not listed.
pub fn scan_paths(
    root: &Path,
    options: &ScanOptions,
    paths: &[String],
) -> Result<Option<ScanReport>, VaultError> {
    let rules = Rules::new(root, options)?;
    let mut report = ScanReport {
        root: rules.root.clone(),
        ..Default::default()
    };
    'paths: for rel in paths {
        let parts: Vec<&str> = rel.split('/').collect();
        if parts
            .iter()
            .any(|p| p.is_empty() || *p == "." || *p == ".." || p.contains('\\'))
        {
            return Ok(None);
        }
        if parts
            .iter()
            .any(|p| p.starts_with('.') || *p == "node_modules")
        {
            continue;
        }
        let Some(kind) = DocumentKind::of(rel) else {
            continue;
        };
        // Every folder on the way, then the file itself, without following links (a link is
        // not a directory nor a file here): where a link points decides whether it is in the
        // vault, which is the walk's business.
        let Some((file, folders)) = parts.split_last() else {
            return Ok(None);
        };
        let mut abs = rules.root.clone();
        for folder in folders {
            abs.push(folder);
            match fs::symlink_metadata(&abs) {
                Ok(m) if m.is_dir() => {}
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue 'paths,
                _ => return Ok(None),
            }
        }
        abs.push(file);
        let meta = match fs::symlink_metadata(&abs) {
            Ok(m) if m.is_file() => m,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
            _ => return Ok(None),
        };
        if rules.skip_dirs.iter().any(|d| abs.starts_with(d)) {
            continue;
        }
        report.newest_mtime_ns = report.newest_mtime_ns.max(mtime_ns(&meta));
        match rules.judge(options, rel.clone(), kind, abs, &meta) {
            Ok(note) => report.notes.push(note),
            Err(skip) => report.skipped.push(skip),
        }
    }
    report.notes.sort_by(|a, b| a.path.cmp(&b.path));
    report.notes.dedup_by(|a, b| a.path == b.path);
    report.skipped.sort_by(|a, b| a.path.cmp(&b.path));
    report.skipped.dedup();
    Ok(Some(report))
}

fn describe_walk_error(root: &Path, err: &ignore::Error) -> (String, SkipReason) {
    match err {
        ignore::Error::WithPath { path, err } => {
            let reason = match link_reason(path) {
                Some(reason) => reason,
                None => describe_walk_error(root, err).1,
            };
            (
                relative(root, path).unwrap_or_else(|| path.display().to_string()),
                reason,
            )
        }
        ignore::Error::WithDepth { err, .. } | ignore::Error::WithLineNumber { err, .. } => {
            describe_walk_error(root, err)
        }
        ignore::Error::Loop { child, .. } => (
            relative(root, child).unwrap_or_else(|| child.display().to_string()),
            SkipReason::SymlinkLoop,
        ),
        ignore::Error::Io(e) => (String::new(), io_reason(Path::new(""), e)),
        other => (
            String::new(),
            SkipReason::Unreadable {
                error: other.to_string(),
            },
        ),
    }
}

/// Reads a note file, checking the size cap, binary content and UTF-8.
pub fn read_note_file(file: &NoteFile, max_file_bytes: u64) -> Result<String, SkipReason> {
    read_note_path(&file.abs_path, max_file_bytes)
}

/// Reads the note at `path` as [`read_note_file`] does: only a regular file (a FIFO put there
/// after a scan is refused without blocking, see [`crate::atomic::read_regular`]), at most
/// `max_file_bytes`, text only.
pub fn read_note_path(path: &Path, max_file_bytes: u64) -> Result<String, SkipReason> {
    let bytes = read_note_bytes(path, max_file_bytes)?;
    decode_note(bytes)
}

/// The bytes of the regular file at `path`, at most `max_file_bytes`, with the reason if not.
pub fn read_note_bytes(path: &Path, max_file_bytes: u64) -> Result<Vec<u8>, SkipReason> {
    use crate::atomic::{ReadError, read_regular};
    read_regular(path, max_file_bytes).map_err(|e| match e {
        ReadError::NotAFile { kind } => SkipReason::NotAFile {
            file_type: kind.to_string(),
        },
        ReadError::TooLarge { bytes } => SkipReason::TooLarge {
            bytes,
            limit: max_file_bytes,
        },
        ReadError::Io(e) => io_reason(path, &e),
    })
}

/// Why the symbolic link at `path` cannot be followed (a loop, or a missing target), if it is one.
fn link_reason(path: &Path) -> Option<SkipReason> {
    if !fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink()) {
        return None;
    }
    match fs::metadata(path) {
        Err(e) if is_link_loop(&e) => Some(SkipReason::SymlinkLoop),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Some(SkipReason::BrokenSymlink),
        _ => None,
    }
}

/// Whether an I/O error is "too many levels of symbolic links".
fn is_link_loop(error: &std::io::Error) -> bool {
    #[cfg(unix)]
    {
        error.raw_os_error() == Some(libc::ELOOP)
    }
    #[cfg(not(unix))]
    {
        let _ = error;
        false
    }
}

/// The documented reason for an I/O error on `path`: a link loop and a broken link by name.
pub fn io_reason(path: &Path, error: &std::io::Error) -> SkipReason {
    if is_link_loop(error) {
        return SkipReason::SymlinkLoop;
    }
    // The walker wraps its errors without the OS code: ask the file system about the link.
    if let Some(reason) = link_reason(path) {
        return reason;
    }
    SkipReason::Unreadable {
        error: error.to_string(),
    }
}

/// Checks that note bytes are text: no NUL byte in the first 8 KiB, valid UTF-8.
pub fn decode_note(mut bytes: Vec<u8>) -> Result<String, SkipReason> {
    if bytes.iter().take(8192).any(|&b| b == 0) {
        return Err(SkipReason::Binary);
    }
    // A NUL later in a text file is read as a space: one byte for one, so every line and byte
    // offset stays the file's, and no index (PostgreSQL refuses NUL in text) gets one.
    for byte in bytes.iter_mut().filter(|b| **b == 0) {
        *byte = b' ';
    }
    String::from_utf8(bytes).map_err(|e| {
        let at = e.utf8_error().valid_up_to();
        let line = e.as_bytes()[..at].iter().filter(|&&b| b == b'\n').count() + 1;
        SkipReason::NotUtf8 { line, byte: at }
    })
}
