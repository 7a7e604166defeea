//! A whole vault in memory: scanned, read, parsed and linked.

use std::path::{Path, PathBuf};

use crate::chunk::{ApproxTokenCounter, Chunk, ChunkOptions, chunk_note};
use crate::config::VaultConfig;
use crate::daily::DailyNotes;
use crate::document::read_document;
use crate::error::VaultError;
use crate::links::{LinkGraph, LinkResolver, Resolution};
use crate::model::Note;
use crate::parse::ParseOptions;
use crate::scan::{DocumentKind, ScanOptions, Skipped, scan_vault};

/// How to open a vault: command-line settings that add to the vault's config file.
#[derive(Debug, Clone, Default)]
pub struct OpenOptions {
    /// Include globs, added to the config's.
    pub include: Vec<String>,
    /// Exclude globs, added to the config's.
    pub exclude: Vec<String>,
    /// Overrides the config's size cap.
    pub max_file_bytes: Option<u64>,
    /// Directories never walked (the index directory when it lives inside the vault).
    pub skip_dirs: Vec<PathBuf>,
}

/// Everything that decides how a vault is read: its root, config file, scan rules, daily-notes
/// settings and chunk sizes. Loaded once; used by [`Vault::open`] and by the index's sync.
#[derive(Debug, Clone)]
pub struct VaultSettings {
    /// Canonical root directory.
    pub root: PathBuf,
    /// The vault's config file as read.
    pub config: VaultConfig,
    /// The scan rules: the config's and the flags' together.
    pub scan: ScanOptions,
    /// How notes are parsed (the daily-notes settings of `.obsidian/daily-notes.json`).
    pub parse: ParseOptions,
    /// Chunk sizes from the config, or the defaults.
    pub chunk: ChunkOptions,
}

impl VaultSettings {
    /// Reads `.quire/config.toml` and `.obsidian/daily-notes.json` under `root`, then applies the
    /// command-line `options` on top.
    pub fn load(root: &Path, options: &OpenOptions) -> Result<VaultSettings, VaultError> {
        let canonical = root.canonicalize().map_err(|e| VaultError::Root {
            path: root.to_path_buf(),
            message: e.to_string(),
        })?;
        if !canonical.is_dir() {
            return Err(VaultError::Root {
                path: canonical,
                message: "not a directory".into(),
            });
        }
        let config = VaultConfig::load(&canonical)?;
        let configured = match config.vault.max_file_mb {
            Some(mb) if !(mb.is_finite() && mb > 0.0) => {
                return Err(VaultError::Config {
                    path: canonical.join(".quire/config.toml"),
                    message: format!(
                        "max_file_mb must be a positive number of MiB, not {mb} (a cap of 0 would skip every note)"
                    ),
                });
            }
            Some(mb) => Some((mb * 1024.0 * 1024.0) as u64),
            None => None,
        };
        let max_file_bytes = options
            .max_file_bytes
            .or(configured)
            .unwrap_or(crate::scan::DEFAULT_MAX_FILE_BYTES);
        let scan = ScanOptions {
            include: [config.vault.include.clone(), options.include.clone()].concat(),
            exclude: [config.vault.exclude.clone(), options.exclude.clone()].concat(),
            max_file_bytes,
            max_pdf_bytes: crate::scan::DEFAULT_MAX_PDF_BYTES,
            skip_dirs: options.skip_dirs.clone(),
        };
        let daily_notes = std::fs::read_to_string(canonical.join(".obsidian/daily-notes.json"))
            .map(|json| DailyNotes::from_settings_json(&json))
            .unwrap_or_default();
        let defaults = ChunkOptions::default();
        let max_tokens = config
            .chunk
            .max_tokens
            .unwrap_or(defaults.max_tokens)
            .max(16);
        let chunk = ChunkOptions {
            target_tokens: config
                .chunk
                .target_tokens
                .unwrap_or(defaults.target_tokens)
                .min(max_tokens),
            max_tokens,
        };
        Ok(VaultSettings {
            root: canonical,
            config,
            scan,
            parse: ParseOptions { daily_notes },
            chunk,
        })
    }
}

/// A parsed vault.
#[derive(Debug, Clone)]
pub struct Vault {
    /// Canonical root directory.
    pub root: PathBuf,
    /// The vault's config file as read.
    pub config: VaultConfig,
    /// Notes and canvases sorted by path (PDFs are in the index only).
    pub notes: Vec<Note>,
    /// Modification times of `notes`, same order (ns since the epoch).
    pub mtimes_ns: Vec<u128>,
    /// Files that are not notes (images, PDFs, canvases), vault-relative, sorted.
    pub attachments: Vec<String>,
    /// Files left out by the scan or unreadable as notes, sorted by path.
    pub skipped: Vec<Skipped>,
    /// Resolves link targets among `notes` and `attachments`.
    pub resolver: LinkResolver,
    /// Every note's resolved links, backlinks and maps of content.
    pub graph: LinkGraph,
    /// Chunk sizes from the config, as the index uses them.
    pub chunk_options: ChunkOptions,
    /// See [`crate::ScanReport::newest_mtime_ns`].
    pub newest_mtime_ns: u128,
}

impl Vault {
    /// Scans, reads and parses the vault at `root`. Files that cannot be read are reported in
    /// [`Vault::skipped`]; only a missing root or a broken config is an error.
    pub fn open(root: &Path, options: &OpenOptions) -> Result<Vault, VaultError> {
        let settings = VaultSettings::load(root, options)?;
        let canonical = settings.root.clone();
        let config = settings.config.clone();
        let report = scan_vault(&canonical, &settings.scan)?;

        let mut skipped = report.skipped;
        let mut notes = Vec::with_capacity(report.notes.len());
        let mut mtimes_ns = Vec::with_capacity(report.notes.len());
        // PDFs are in the index only: they link nowhere, and extracting every one at each open
        // would cost seconds; links to them resolve as attachments.
        for file in report.notes.iter().filter(|f| f.kind != DocumentKind::Pdf) {
            match read_document(&file.path, &file.abs_path, &settings) {
                Ok(loaded) => {
                    notes.push(loaded.note);
                    mtimes_ns.push(file.mtime_ns);
                }
                Err(reason) => skipped.push(Skipped::new(file.path.clone(), reason)),
            }
        }
        skipped.sort_by(|a, b| a.path.cmp(&b.path));
        let resolver = LinkResolver::new(&notes, &report.attachments);
        let graph = LinkGraph::build(&notes, &resolver);
        Ok(Vault {
            root: canonical,
            config,
            notes,
            mtimes_ns,
            attachments: report.attachments,
            skipped,
            resolver,
            graph,
            chunk_options: settings.chunk,
            newest_mtime_ns: report.newest_mtime_ns,
        })
    }

    /// This vault with the files at `paths` (vault-relative) read again, whether they changed,
    /// appeared or vanished, and every other note kept as parsed: what a watcher needs after a
    /// sync of those paths, at the cost of those notes and the links rather than of the whole
    /// vault. When a path needs the whole scan (see [`crate::scan_paths`]) the vault is opened
    /// again from scratch.
    pub fn refreshed(&self, options: &OpenOptions, paths: &[String]) -> Result<Vault, VaultError> {
        let settings = VaultSettings::load(&self.root, options)?;
        let Some(report) = crate::scan::scan_paths(&settings.root, &settings.scan, paths)? else {
            return Vault::open(&self.root, options);
        };
        let named: std::collections::HashSet<&str> = paths.iter().map(String::as_str).collect();
        let mut notes: Vec<(Note, u128)> = self
            .notes
            .iter()
            .zip(&self.mtimes_ns)
            .filter(|(note, _)| !named.contains(note.path.as_str()))
            .map(|(note, mtime)| (note.clone(), *mtime))
            .collect();
        let mut skipped: Vec<Skipped> = self
            .skipped
            .iter()
            .filter(|s| !named.contains(s.path.as_str()))
            .cloned()
            .chain(report.skipped)
            .collect();
        for file in report.notes.iter().filter(|f| f.kind != DocumentKind::Pdf) {
            match read_document(&file.path, &file.abs_path, &settings) {
                Ok(loaded) => notes.push((loaded.note, file.mtime_ns)),
                Err(reason) => skipped.push(Skipped::new(file.path.clone(), reason)),
            }
        }
        notes.sort_by(|a, b| a.0.path.cmp(&b.0.path));
        skipped.sort_by(|a, b| a.path.cmp(&b.path));
        let mut attachments: Vec<String> = self
            .attachments
            .iter()
            .filter(|a| !named.contains(a.as_str()))
            .cloned()
            .chain(
                report
                    .notes
                    .iter()
                    .filter(|f| f.kind != DocumentKind::Markdown)
                    .map(|f| f.path.clone()),
            )
            .collect();
        attachments.sort();
        let (notes, mtimes_ns): (Vec<Note>, Vec<u128>) = notes.into_iter().unzip();
        let resolver = LinkResolver::new(&notes, &attachments);
        let graph = LinkGraph::build(&notes, &resolver);
        Ok(Vault {
            root: settings.root,
            config: settings.config,
            notes,
            mtimes_ns,
            attachments,
            skipped,
            resolver,
            graph,
            chunk_options: settings.chunk,
            newest_mtime_ns: self.newest_mtime_ns.max(report.newest_mtime_ns),
        })
    }

    /// The index of the note at exactly this vault-relative path.
    pub fn index_of(&self, path: &str) -> Option<usize> {
        self.notes
            .binary_search_by(|n| n.path.as_str().cmp(path))
            .ok()
    }

    /// Finds a note by a vault-relative path (`.md` optional, case-insensitive) or a name resolved
    /// like a wikilink (file name, alias). Absolute paths and paths that climb out with `..` are
    /// refused: this is the lookup servers use for paths from requests.
    pub fn find_note(&self, query: &str) -> Result<usize, VaultError> {
        let query = query.trim();
        if query.is_empty() {
            return Err(VaultError::BadRequest("empty note path".into()));
        }
        check_confined(query)?;
        // A note file that is not Markdown (a PDF, a canvas) is named with its extension.
        let exact = query.replace('\\', "/");
        let exact = exact.trim_start_matches("./");
        let with_md = literal_note_path(query);
        for path in [exact, with_md.as_str()] {
            if let Some(i) = self.index_of(path) {
                return Ok(i);
            }
        }
        for path in [exact, with_md.as_str()] {
            let lower = path.to_lowercase();
            if let Some(i) = self
                .notes
                .iter()
                .position(|n| n.path.to_lowercase() == lower)
            {
                return Ok(i);
            }
        }
        let normalized = query.replace('\\', "/");
        match self
            .resolver
            .resolve("", normalized.trim_start_matches("./"))
        {
            Some(Resolution::Note(i)) => Ok(i),
            _ => Err(VaultError::NoteNotFound(query.to_string())),
        }
    }

    /// The chunks of note `i` with the vault's settings and the approximate token counter.
    pub fn chunks(&self, i: usize) -> Vec<Chunk> {
        chunk_note(&self.notes[i], &self.chunk_options, &ApproxTokenCounter)
    }

    /// [`Vault::chunks`], and whether the note had more than
    /// [`crate::chunk::MAX_CHUNKS_PER_NOTE`] (then only the first ones are given, as indexed).
    pub fn chunks_bounded(&self, i: usize) -> (Vec<Chunk>, bool) {
        crate::chunk::chunk_note_bounded(&self.notes[i], &self.chunk_options, &ApproxTokenCounter)
    }
}

/// The vault-relative path a NOTE argument names when taken literally: `\\` becomes `/`, a
/// leading `./` is dropped and `.md` is added when missing. [`Vault::find_note`] tries it first;
/// callers that only have a list of note paths (the index) can match it the same way.
pub fn literal_note_path(query: &str) -> String {
    let normalized = query.trim().replace('\\', "/");
    let normalized = normalized.trim_start_matches("./");
    if normalized.to_lowercase().ends_with(".md") {
        normalized.to_string()
    } else {
        format!("{normalized}.md")
    }
}

/// Refuses absolute paths, drive prefixes, NUL bytes and any `..` component.
pub fn check_confined(query: &str) -> Result<(), VaultError> {
    let refused = query.contains('\0')
        || query.starts_with('/')
        || query.starts_with('\\')
        || is_drive_prefix(query)
        || query.split(['/', '\\']).any(|part| part == "..");
    if refused {
        return Err(VaultError::OutsideVault(query.to_string()));
    }
    Ok(())
}

/// `C:`, `C:\…` or `C:/…`: a Windows drive, outside any vault. A note named `Q: ideas.md` is not
/// one.
fn is_drive_prefix(query: &str) -> bool {
    let mut chars = query.chars();
    matches!(
        (chars.next(), chars.next(), chars.next()),
        (Some(letter), Some(':'), None | Some('/' | '\\')) if letter.is_ascii_alphabetic()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_colon_is_a_drive_only_after_one_letter_at_the_start() {
        for outside in [
            "C:",
            "C:\\Windows",
            "d:/notes/x.md",
            "/etc/passwd",
            "a/../../b",
            "\\x",
        ] {
            assert!(check_confined(outside).is_err(), "{outside}");
        }
        for inside in [
            "Q: ideas.md",
            "Meeting: plans.md",
            "Projects/C: notes.md",
            "a/b.md",
        ] {
            assert!(check_confined(inside).is_ok(), "{inside}");
        }
    }
}
