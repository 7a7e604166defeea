//! The incremental sync: bring the index up to date with the vault's files.
//!
//! Files are diffed by modification time and size, then by sha256; a changed note is parsed and
//! chunked again and its rows replaced (PDFs and canvases too, read by [`quire_vault::document`];
//! their sha256 is the file's, compared before a PDF is extracted again). All store writes of one
//! sync go into one SQLite transaction that also bumps the generation; the full-text index is
//! committed after it with the same generation as payload. If the process dies between the two
//! commits, the next open sees the mismatch and rebuilds the full-text index from the store.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::time::Instant;

use quire_vault::chunk::{ApproxTokenCounter, chunk_note_bounded};
use quire_vault::document::{document_from_bytes, read_document_bytes, sha256_hex};
use quire_vault::scan::{NoteFile, scan_vault};
use quire_vault::{
    Chunk, DocumentKind, Note, OpenOptions, ScanReport, SkipReason, Skipped, VaultSettings,
};
use serde::Serialize;

use crate::error::IndexError;
use crate::fulltext::{FullText, FullTextDoc};
use crate::lock::WriterLock;
use crate::store::ChunkRow;
use crate::store::Store;

/// Where an index lives: `quire.sqlite` and `fulltext/` in one directory.
#[derive(Debug, Clone)]
pub struct IndexLocation {
    /// The index's directory; it holds nothing else of value.
    pub dir: PathBuf,
}

impl IndexLocation {
    /// The index in `dir` (created by the first sync).
    pub fn new(dir: impl Into<PathBuf>) -> Self {
        IndexLocation { dir: dir.into() }
    }

    /// The per-user default for a vault: `<data dir>/quire/indexes/<vault name>-<hash of its path>`,
    /// outside the vault so sync tools never see it.
    pub fn default_for(vault_root: &Path) -> Self {
        let base = dirs::data_local_dir().unwrap_or_else(std::env::temp_dir);
        let name: String = vault_root
            .file_name()
            .map(|n| {
                n.to_string_lossy()
                    .chars()
                    .filter(|c| c.is_alphanumeric() || *c == '-' || *c == '_')
                    .collect()
            })
            .unwrap_or_default();
        let hash = blake3::hash(vault_root.to_string_lossy().as_bytes()).to_hex();
        IndexLocation::new(
            base.join("quire")
                .join("indexes")
                .join(format!("{name}-{}", &hash[..12])),
        )
    }

    /// `dir/quire.sqlite`, the store.
    pub fn store_path(&self) -> PathBuf {
        self.dir.join("quire.sqlite")
    }

    /// `dir/fulltext`, the full-text index.
    pub fn fulltext_dir(&self) -> PathBuf {
        self.dir.join("fulltext")
    }

    fn create(&self) -> Result<(), IndexError> {
        std::fs::create_dir_all(&self.dir).map_err(|source| IndexError::Io {
            path: self.dir.clone(),
            source,
        })
    }
}

/// Where the two halves of an index stand: the store's generation and the full-text index's.
/// They differ only when a sync died between its two commits (or a directory was restored).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Consistency {
    /// The store's last committed generation (0 for a new store).
    pub store_generation: u64,
    /// `None` before the full-text index's first commit.
    pub fulltext_generation: Option<u64>,
    /// The full text's terms were made by another analyzer than this build's (see
    /// [`crate::analyzer::ANALYZER_VERSION`]): a query's terms would not meet them.
    pub analyzer_behind: bool,
}

impl Consistency {
    /// Reads both generations and the analyzer version.
    pub fn read(store: &Store, fulltext: &FullText) -> Result<Consistency, IndexError> {
        let store_generation = store.generation()?;
        Ok(Consistency {
            store_generation,
            fulltext_generation: fulltext.generation()?,
            analyzer_behind: store_generation > 0 && analyzer_behind(store)?,
        })
    }

    /// Whether searches over this index see what the store holds.
    pub fn is_consistent(&self) -> bool {
        !self.analyzer_behind
            && match self.fulltext_generation {
                Some(g) => g == self.store_generation,
                None => self.store_generation == 0,
            }
    }

    /// The error a reader reports for an inconsistent index.
    pub fn error(&self) -> IndexError {
        if self.analyzer_behind && self.fulltext_generation == Some(self.store_generation) {
            return IndexError::AnalyzerBehind;
        }
        IndexError::Inconsistent {
            store: self.store_generation,
            fulltext: self.fulltext_generation,
        }
    }
}

/// Whether the store says its full text was made by another analyzer than this build's (an
/// index from before the analyzer was versioned has no key: its terms are version 1's).
fn analyzer_behind(store: &Store) -> Result<bool, IndexError> {
    Ok(store.meta(ANALYZER_KEY)?.as_deref()
        != Some(crate::analyzer::ANALYZER_VERSION.to_string().as_str()))
}

/// Makes the full-text index match the store again if it does not (rebuilt from the store, no
/// note is read), taking the writer lock; while another process holds the lock (a sync between
/// its two commits), waits up to `wait` for it. Returns whether anything was rebuilt.
pub fn repair_fulltext(
    location: &IndexLocation,
    wait: std::time::Duration,
) -> Result<bool, IndexError> {
    let deadline = Instant::now() + wait;
    loop {
        let lock = match WriterLock::acquire(&location.dir) {
            Ok(lock) => lock,
            Err(IndexError::Locked { .. }) if Instant::now() < deadline => {
                std::thread::sleep(std::time::Duration::from_millis(100));
                continue;
            }
            Err(err) => return Err(err),
        };
        let store = Store::open(&location.store_path())?;
        let fulltext = FullText::open(&location.fulltext_dir())?;
        let state = Consistency::read(&store, &fulltext)?;
        if state.is_consistent() {
            return Ok(false);
        }
        let mut writer = fulltext.writer()?;
        writer.delete_all()?;
        for d in docs_from_store(&store)? {
            writer.add(&d)?;
        }
        writer.commit(state.store_generation)?;
        if state.analyzer_behind {
            let mut store = store;
            let tx = store.begin()?;
            tx.set_meta(ANALYZER_KEY, &crate::analyzer::ANALYZER_VERSION.to_string())?;
            tx.commit(state.store_generation)?;
        }
        drop(lock);
        return Ok(true);
    }
}

/// A skipped file in the sync report.
#[derive(Debug, Clone, Serialize)]
pub struct SkippedNote {
    /// Vault-relative path.
    pub path: String,
    /// Why it was skipped, in words.
    pub reason: String,
}

/// What a sync did (the `--json` output of `quire index`).
#[derive(Debug, Clone, Serialize)]
pub struct SyncStats {
    /// The model the index's vectors came from, when this sync switched to another one (every
    /// chunk was embedded again with the configured model, the old vectors kept).
    pub model_changed_from: Option<String>,
    /// Notes parsed and written because they are new or their content changed.
    pub notes_indexed: usize,
    /// Notes whose file has the same mtime and size, or the same sha256, as when indexed.
    pub notes_unchanged: usize,
    /// Notes removed from the index: their file is gone, or could not be read or parsed.
    pub notes_deleted: usize,
    /// Every file left out (by the scan or by this sync), by path.
    pub notes_skipped: Vec<SkippedNote>,
    /// PDFs and canvases among `notes_skipped` that failed before with the same bytes: reported
    /// again, not read again (they are, once their bytes change).
    pub documents_not_retried: usize,
    /// Chunks in the store after the sync.
    pub chunks_total: u64,
    /// Chunk texts sent to the embedding model.
    pub chunks_embedded: usize,
    /// Chunks whose embedding was found by content hash.
    pub chunks_reused: usize,
    /// The store's generation after the sync: one more than before, or the same when there was
    /// nothing to do.
    pub generation: u64,
    /// Whether the full-text index had to be rebuilt from the store (after a crash or on request).
    pub fulltext_rebuilt: bool,
    /// What the sync did to the approximate vector index (`None` without an embedder).
    pub ann: Option<crate::ann::AnnRefresh>,
    /// Wall-clock time of the sync.
    pub seconds: f64,
    /// Where that time went.
    pub phases: SyncPhases,
}

/// Milliseconds each step of a sync took (what the scale benchmarks report).
#[derive(Debug, Clone, Default, Serialize)]
pub struct SyncPhases {
    /// Opening the store and the full-text index, and taking the writer lock.
    pub open_ms: f64,
    /// Walking the vault: every file's path, size and modification time.
    pub scan_ms: f64,
    /// Comparing with the store, and reading, parsing and chunking new or changed notes.
    pub read_ms: f64,
    /// Writing the store's transaction.
    pub store_ms: f64,
    /// Updating (or rebuilding) the full-text index and committing it.
    pub fulltext_ms: f64,
    /// Finding texts without a vector and embedding them.
    pub embed_ms: f64,
    /// Keeping the approximate vector index.
    pub ann_ms: f64,
}

/// Milliseconds since `since`, and `since` moved to now.
fn lap(since: &mut Instant) -> f64 {
    let now = Instant::now();
    let ms = now.duration_since(*since).as_secs_f64() * 1e3;
    *since = now;
    ms
}

/// Progress of a sync, for progress bars.
pub trait SyncProgress {
    /// `done` of the `total` note files are read (called once per file).
    fn reading(&self, _done: usize, _total: usize) {}
    /// `done` of the `total` chunk texts without a vector are embedded (called once per batch).
    fn embedding(&self, _done: usize, _total: usize) {}
}

impl SyncProgress for () {}

/// Settings of a sync.
#[derive(Clone, Default)]
pub struct SyncOptions {
    /// Scan settings from flags, added to the vault's config file (the index directory is always
    /// skipped).
    pub open: OpenOptions,
    /// Re-read every note and rebuild the full-text index. (An embedder of another space than
    /// the index's switches it to that space with or without it: see
    /// [`SyncStats::model_changed_from`].)
    pub rebuild: bool,
    /// The model that embeds new chunk texts; without one the index is BM25-only.
    pub embedder: Option<std::sync::Arc<dyn quire_embed::Embedder>>,
    /// When to keep an approximate vector index; `None`: [`crate::ann::AnnSettings::from_env`].
    pub ann: Option<crate::ann::AnnSettings>,
    /// Only these vault-relative paths may have changed (a watcher's events): they alone are
    /// looked at, and the rest of the index is kept as it is, so a one-note edit costs the same
    /// in a vault of any size. `None`, a rebuild, or a path only a whole scan can judge (see
    /// [`quire_vault::scan_paths`]): the whole vault is scanned. The stats then count and list
    /// only these paths.
    pub only: Option<Vec<String>>,
}

/// The meta key holding the index's embedding space (JSON).
pub const SPACE_KEY: &str = "embedding_space";

/// Chunk texts sent to the model per call (and per store transaction).
const EMBED_BATCH: usize = 32;

/// The chunker version the stored chunks were made with; another one forces re-chunking.
const CHUNKER_KEY: &str = "chunker_version";

/// The analyzer version the full-text index was built with
/// ([`crate::analyzer::ANALYZER_VERSION`]); another one rebuilds the full text from the store.
const ANALYZER_KEY: &str = "analyzer_version";

/// Brings the index at `location` up to date with the vault at `vault_root`.
///
/// The phases, in order, each timed in [`SyncPhases`]: open (the writer lock is taken here and
/// held to the end), scan, read, the store's commit, the full text's commit, embedding, and the
/// approximate vector index.
pub fn sync(
    vault_root: &Path,
    location: &IndexLocation,
    options: &SyncOptions,
    progress: &dyn SyncProgress,
) -> Result<SyncStats, IndexError> {
    let mut run = Run::open(vault_root, location, options, progress)?;
    run.phases.open_ms = run.lap();
    let (report, only) = run.scan()?;
    run.phases.scan_ms = run.lap();
    failpoint("stall_after_scan");
    let mut changes = run.read(&report, only)?;
    let fulltext_behind = run.fulltext_behind()?;
    let nothing_to_do = changes.is_empty() && !fulltext_behind && !run.rebuild_all;
    run.phases.read_ms = run.lap();
    let mut new_generation = run.generation;
    if !nothing_to_do || run.generation == 0 {
        new_generation = run.generation + 1;
        run.commit_store(&mut changes, only, new_generation)?;
        failpoint("after_store_commit");
    }
    run.record_space(new_generation)?;
    run.phases.store_ms = run.lap();
    let rebuild_fulltext = fulltext_behind || run.rebuild_all;
    run.commit_fulltext(&changes, new_generation, rebuild_fulltext)?;
    run.phases.fulltext_ms = run.lap();
    let embedded = run.embed()?;
    run.phases.embed_ms = run.lap();
    let ann = run.update_ann();
    run.phases.ann_ms = run.lap();
    run.stats(changes, embedded, ann, new_generation, rebuild_fulltext)
}

/// One sync's state, carried from phase to phase. It holds the writer lock from [`Run::open`]
/// until it is dropped, after everything else (the last field).
struct Run<'a> {
    location: &'a IndexLocation,
    options: &'a SyncOptions,
    progress: &'a dyn SyncProgress,
    /// The vault's settings (the index directory skipped).
    settings: VaultSettings,
    store: Store,
    fulltext: FullText,
    /// The store's generation before the sync.
    generation: u64,
    /// The configured embedder's space (`None` without one).
    space: Option<quire_embed::EmbeddingSpace>,
    /// See [`SyncStats::model_changed_from`].
    model_changed: Option<String>,
    /// This build's chunker version.
    chunker: String,
    /// Every note is read again and the full text rebuilt: asked for, or the chunker changed.
    rebuild_all: bool,
    /// When the sync started.
    started: Instant,
    /// When the current phase started.
    mark: Instant,
    phases: SyncPhases,
    /// The writer lock, let go last.
    _lock: WriterLock,
}

/// What reading the scanned files found: what the store's transaction writes, and what the stats
/// count.
#[derive(Default)]
struct Changes {
    /// New or changed notes, parsed and chunked, with their file's mtime and size.
    changed: Vec<(Note, Vec<Chunk>, u128, u64)>,
    /// Notes whose content (sha256) is unchanged under a new mtime or size: only those two are
    /// written.
    touched: Vec<(String, u128, u64)>,
    /// Paths whose file is there and indexed (or about to be).
    present: HashSet<String>,
    /// Notes the index knows whose file is gone, or could not be read or parsed.
    deleted: Vec<String>,
    /// Notes the store refused (see [`Run::commit_store`]): out of the index like deleted ones,
    /// but not counted so.
    refused: Vec<String>,
    /// Every file left out (by the scan or by this sync).
    skipped: Vec<Skipped>,
    /// Notes whose file has the same mtime and size, or the same sha256, as when indexed.
    unchanged: usize,
    /// See [`SyncStats::documents_not_retried`].
    not_retried: usize,
    /// A PDF or canvas failed with other bytes than the ones remembered.
    failures_changed: bool,
}

impl Changes {
    /// Whether the store has nothing to write (the full text may still be behind).
    fn is_empty(&self) -> bool {
        self.changed.is_empty()
            && !self.failures_changed
            && self.deleted.is_empty()
            && self.touched.is_empty()
    }
}

impl<'a> Run<'a> {
    /// Loads the vault's settings, takes the writer lock, opens the store and the full-text index,
    /// and decides whether to rebuild everything (asked for, or another chunker).
    fn open(
        vault_root: &Path,
        location: &'a IndexLocation,
        options: &'a SyncOptions,
        progress: &'a dyn SyncProgress,
    ) -> Result<Run<'a>, IndexError> {
        let started = Instant::now();
        let mut open = options.open.clone();
        open.skip_dirs.push(location.dir.clone());
        let settings = VaultSettings::load(vault_root, &open)?;
        location.create()?;
        let lock = WriterLock::acquire(&location.dir)?;
        let store = Store::open(&location.store_path())?;
        let fulltext = FullText::open(&location.fulltext_dir())?;
        let generation = store.generation()?;

        let space = options.embedder.as_ref().map(|e| e.space());
        let model_changed = space_change(&store, space.as_ref())?;
        let chunker = quire_vault::chunk::CHUNKER_VERSION.to_string();
        let chunker_changed = store.meta(CHUNKER_KEY)?.is_some_and(|v| v != chunker);
        let rebuild_all = options.rebuild || chunker_changed;
        Ok(Run {
            location,
            options,
            progress,
            settings,
            store,
            fulltext,
            generation,
            space,
            model_changed,
            chunker,
            rebuild_all,
            started,
            mark: started,
            phases: SyncPhases::default(),
            _lock: lock,
        })
    }

    /// Milliseconds since the current phase started, and the next one started.
    fn lap(&mut self) -> f64 {
        lap(&mut self.mark)
    }

    /// The scan: only [`SyncOptions::only`]'s paths when they alone can be judged (and returned
    /// with the report), else the whole vault.
    fn scan(&self) -> Result<(ScanReport, Option<&'a Vec<String>>), IndexError> {
        let options: &'a SyncOptions = self.options;
        let targeted = match &options.only {
            Some(paths) if !self.rebuild_all => {
                quire_vault::scan_paths(&self.settings.root, &self.settings.scan, paths)?
                    .map(|r| (paths, r))
            }
            _ => None,
        };
        Ok(match targeted {
            Some((paths, report)) => (report, Some(paths)),
            None => (scan_vault(&self.settings.root, &self.settings.scan)?, None),
        })
    }

    /// Compares the scanned files with the store (only the notes at `only`'s paths when it is
    /// set) and reads, parses and chunks the new or changed ones.
    fn read(&self, report: &ScanReport, only: Option<&Vec<String>>) -> Result<Changes, IndexError> {
        let known: HashMap<String, crate::store::NoteRow> = match only {
            Some(paths) => self.store.notes_at(paths)?,
            None => self.store.notes()?,
        }
        .into_iter()
        .map(|n| (n.path.clone(), n))
        .collect();

        let mut changes = Changes {
            skipped: report.skipped.clone(),
            ..Changes::default()
        };
        // PDFs and canvases that failed (or timed out), by the hash of the bytes that failed: the
        // same bytes are reported again, not read again.
        let failed_before = self.store.failed_documents()?;
        let total = report.notes.len();
        for (n, file) in report.notes.iter().enumerate() {
            self.progress.reading(n + 1, total);
            self.read_file(&mut changes, file, known.get(&file.path), &failed_before);
        }
        changes.deleted = known
            .keys()
            .filter(|p| !changes.present.contains(*p))
            .cloned()
            .collect();
        changes.skipped.sort_by(|a, b| a.path.cmp(&b.path));
        Ok(changes)
    }

    /// One scanned file into `changes`: unchanged by mtime and size (or, for a PDF or canvas, by
    /// the sha256 of its bytes), skipped when unreadable or failed before with the same bytes,
    /// else parsed and chunked by [`Run::parse_file`]. `previous` is the store's row for it.
    fn read_file(
        &self,
        changes: &mut Changes,
        file: &NoteFile,
        previous: Option<&crate::store::NoteRow>,
        failed_before: &HashMap<String, (String, String)>,
    ) {
        let settings = &self.settings;
        let rebuild_all = self.rebuild_all;
        if !rebuild_all
            && let Some(row) = previous
            && row.mtime_ns == file.mtime_ns
            && row.size == file.size
        {
            changes.present.insert(file.path.clone());
            changes.unchanged += 1;
            return;
        }
        let bytes = match read_document_bytes(&file.abs_path, file.kind, settings) {
            Ok(bytes) => bytes,
            Err(reason) => {
                changes
                    .skipped
                    .push(Skipped::new(file.path.clone(), reason));
                return;
            }
        };
        // A PDF or canvas whose bytes are unchanged is not read again (extraction costs time).
        let digest = (file.kind != DocumentKind::Markdown).then(|| sha256_hex(&bytes));
        if let Some(digest) = &digest
            && !rebuild_all
        {
            if previous.is_some_and(|row| row.sha256 == *digest) {
                changes.present.insert(file.path.clone());
                changes
                    .touched
                    .push((file.path.clone(), file.mtime_ns, file.size));
                changes.unchanged += 1;
                return;
            }
            if let Some(remembered) = remembered_failure(failed_before, &file.path, digest) {
                changes.skipped.push(remembered);
                changes.not_retried += 1;
                return;
            }
        }
        self.parse_file(changes, file, previous, bytes, digest, failed_before);
    }

    /// A file's `bytes` parsed and chunked into `changes` (`digest`: the sha256 of a PDF's or
    /// canvas's bytes): skipped when the parser or the chunker fails (a document's failure kept
    /// with its digest), unchanged when the parsed note's sha256 is `previous`'s.
    fn parse_file(
        &self,
        changes: &mut Changes,
        file: &NoteFile,
        previous: Option<&crate::store::NoteRow>,
        bytes: Vec<u8>,
        digest: Option<String>,
        failed_before: &HashMap<String, (String, String)>,
    ) {
        let settings = &self.settings;
        // A note that makes the parser or chunker fail is skipped and reported; the sync goes on.
        let parsed = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            document_from_bytes(&file.path, file.kind, bytes, settings)
        }));
        let failure = match parsed {
            Ok(Ok(loaded)) => Ok(loaded),
            Ok(Err(reason)) => Err(Skipped::new(file.path.clone(), reason)),
            Err(_) => Err(note_failed(&file.path, "the parser failed on it")),
        };
        let loaded = match (failure, digest) {
            (Ok(loaded), _) => loaded,
            (Err(skip), None) => {
                changes.skipped.push(skip);
                return;
            }
            (Err(skip), Some(digest)) => {
                changes.failures_changed |=
                    failed_before.get(&file.path).map(|(sha, _)| sha) != Some(&digest);
                changes
                    .skipped
                    .push(Skipped::failed(skip.path, skip.reason, digest));
                return;
            }
        };
        if let Some(partial) = loaded.partial {
            changes
                .skipped
                .push(Skipped::new(file.path.clone(), partial));
        }
        let note = loaded.note;
        changes.present.insert(file.path.clone());
        if !self.rebuild_all && previous.is_some_and(|row| row.sha256 == note.sha256) {
            changes
                .touched
                .push((file.path.clone(), file.mtime_ns, file.size));
            changes.unchanged += 1;
            return;
        }
        let chunked = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            chunk_note_bounded(&note, &settings.chunk, &ApproxTokenCounter)
        }));
        let Ok((chunks, truncated)) = chunked else {
            changes.present.remove(&file.path);
            changes
                .skipped
                .push(note_failed(&file.path, "the chunker failed on it"));
            return;
        };
        if truncated {
            changes.skipped.push(Skipped::new(
                file.path.clone(),
                SkipReason::TooManyChunks {
                    limit: quire_vault::chunk::MAX_CHUNKS_PER_NOTE,
                },
            ));
        }
        changes
            .changed
            .push((note, chunks, file.mtime_ns, file.size));
    }

    /// Whether the full-text index is behind the store (a sync died between its two commits, or
    /// its terms are another analyzer's), for an index that has been written before.
    fn fulltext_behind(&self) -> Result<bool, IndexError> {
        let analyzer_changed = analyzer_behind(&self.store)?;
        Ok(
            (self.fulltext.generation()? != Some(self.generation) || analyzer_changed)
                && self.generation > 0,
        )
    }

    /// The store's transaction at `generation`: deleted notes removed, touched ones' mtime and
    /// size updated, changed ones written, the skipped files (of `only`'s paths when set) and the
    /// chunker's and analyzer's versions recorded; then committed.
    fn commit_store(
        &mut self,
        changes: &mut Changes,
        only: Option<&Vec<String>>,
        generation: u64,
    ) -> Result<(), IndexError> {
        let analyzer = crate::analyzer::ANALYZER_VERSION.to_string();
        let tx = self.store.begin()?;
        for path in &changes.deleted {
            tx.delete_note(path)?;
        }
        for (path, mtime, size) in &changes.touched {
            tx.touch_note(path, *mtime, *size)?;
        }
        // One note's rows that the store refuses are rolled back alone (a savepoint); the note is
        // then left out, like a deleted one, and reported, so one note never fails the sync.
        for (note, chunks, mtime, size) in &changes.changed {
            if let Err(err) = tx.put_note(note, chunks, *mtime, *size, generation) {
                tx.delete_note(&note.path)?;
                changes.skipped.push(note_failed(
                    &note.path,
                    &format!("the index refused it: {err}"),
                ));
                changes.refused.push(note.path.clone());
            }
        }
        changes.skipped.sort_by(|a, b| a.path.cmp(&b.path));
        let refused = &changes.refused;
        changes
            .changed
            .retain(|(note, ..)| !refused.contains(&note.path));
        match only {
            Some(paths) => tx.replace_skipped(paths, &changes.skipped)?,
            None => tx.set_skipped(&changes.skipped)?,
        }
        tx.set_meta(CHUNKER_KEY, &self.chunker)?;
        tx.set_meta(ANALYZER_KEY, &analyzer)?;
        tx.set_meta("vault_root", &self.settings.root.to_string_lossy())?;
        tx.commit(generation)
    }

    /// Records the embedding space when it is new to this index (first use of a model, or a
    /// rebuild), at `generation`.
    fn record_space(&mut self, generation: u64) -> Result<(), IndexError> {
        if let Some(space) = &self.space {
            let json = serde_json::to_string(space).unwrap_or_default();
            if self.store.meta(SPACE_KEY)?.as_deref() != Some(json.as_str()) {
                let tx = self.store.begin()?;
                tx.set_meta(SPACE_KEY, &json)?;
                tx.commit(generation)?;
            }
        }
        Ok(())
    }

    /// The full-text index follows the store to `generation`: incrementally when it was at the
    /// previous generation, else (`rebuild`) rebuilt from the store; left alone when neither
    /// the store moved nor a rebuild is due.
    fn commit_fulltext(
        &self,
        changes: &Changes,
        generation: u64,
        rebuild: bool,
    ) -> Result<(), IndexError> {
        if generation != self.generation || rebuild {
            let gone: Vec<&String> = changes.deleted.iter().chain(&changes.refused).collect();
            update_fulltext(
                &self.fulltext,
                &self.store,
                rebuild,
                &gone,
                &changes.changed,
                generation,
            )?;
        }
        Ok(())
    }

    /// Embeddings are a cache keyed by (space, content hash): only texts never embedded in this
    /// space are sent to the model, so renames and moved paragraphs cost nothing. Each batch is
    /// committed on its own; an interrupted run leaves fewer vectors, which the next run fills.
    /// Returns how many texts were embedded (0 without an embedder).
    fn embed(&mut self) -> Result<usize, IndexError> {
        Ok(match &self.options.embedder {
            Some(embedder) => embed_missing(&mut self.store, embedder.as_ref(), self.progress)?,
            None => 0,
        })
    }

    /// The approximate index follows the vectors (after them: a crash before this point leaves a
    /// build that covers fewer rows, and readers scan the rest exactly). `None` without an
    /// embedder.
    fn update_ann(&self) -> Option<crate::ann::AnnRefresh> {
        self.options.embedder.as_ref().map(|embedder| {
            refresh_ann(
                self.location,
                &self.store,
                embedder.as_ref(),
                self.options.ann,
            )
        })
    }

    /// What the sync did; the writer lock is let go after it, with the rest of the run.
    fn stats(
        self,
        changes: Changes,
        embedded: usize,
        ann: Option<crate::ann::AnnRefresh>,
        generation: u64,
        fulltext_rebuilt: bool,
    ) -> Result<SyncStats, IndexError> {
        let changed_chunks: usize = changes.changed.iter().map(|(_, c, _, _)| c.len()).sum();
        Ok(SyncStats {
            notes_indexed: changes.changed.len(),
            notes_unchanged: changes.unchanged,
            notes_deleted: changes.deleted.len(),
            notes_skipped: changes
                .skipped
                .iter()
                .map(|s| SkippedNote {
                    path: s.path.clone(),
                    reason: s.message.clone(),
                })
                .collect(),
            documents_not_retried: changes.not_retried,
            model_changed_from: self.model_changed,
            chunks_total: self.store.count(crate::store::Table::Chunks)?,
            chunks_embedded: embedded,
            chunks_reused: if self.options.embedder.is_some() {
                changed_chunks.saturating_sub(embedded)
            } else {
                0
            },
            generation,
            fulltext_rebuilt,
            ann,
            seconds: self.started.elapsed().as_secs_f64(),
            phases: self.phases,
        })
    }
}

/// The model the index's vectors came from, when the configured one is another (the user chose
/// another model, or fetched the default): this sync embeds every chunk again in the new space.
/// Vectors are stored by space, so the two never mix: searches read only the configured
/// space's, and the old ones stay cached (switching back embeds nothing). The index records
/// the new space before embedding, so an interrupted switch resumes like a first index.
fn space_change(
    store: &Store,
    space: Option<&quire_embed::EmbeddingSpace>,
) -> Result<Option<String>, IndexError> {
    let (Some(space), Some(stored)) = (space, store.meta(SPACE_KEY)?) else {
        return Ok(None);
    };
    let stored = serde_json::from_str::<quire_embed::EmbeddingSpace>(&stored).ok();
    Ok(match stored {
        Some(stored) if &stored == space => None,
        Some(stored) => Some(stored.model),
        None => Some("an unreadable space".to_string()),
    })
}

/// The full-text index brought to `generation`: rebuilt from the store, or the notes `gone`
/// removed and the `changed` ones written again.
fn update_fulltext(
    fulltext: &FullText,
    store: &Store,
    rebuild: bool,
    gone: &[&String],
    changed: &[(Note, Vec<Chunk>, u128, u64)],
    generation: u64,
) -> Result<(), IndexError> {
    let mut writer = fulltext.writer()?;
    if rebuild {
        writer.delete_all()?;
        for d in docs_from_store(store)? {
            writer.add(&d)?;
        }
    } else {
        for path in gone {
            writer.delete_path(path);
        }
        for (note, chunks, _, _) in changed {
            writer.delete_path(&note.path);
            for c in chunks {
                writer.add(&doc_for_chunk(note, c))?;
            }
        }
    }
    failpoint("before_fulltext_commit");
    writer.commit(generation)
}

/// Embeds every chunk text the store has no vector for in `embedder`'s space, a batch at a time,
/// each batch committed on its own (an interrupted run leaves fewer vectors, which the next run
/// fills). Returns how many texts were embedded.
fn embed_missing(
    store: &mut Store,
    embedder: &dyn quire_embed::Embedder,
    progress: &dyn SyncProgress,
) -> Result<usize, IndexError> {
    let space_id = embedder.space().id();
    let missing = store.missing_embeddings(&space_id)?;
    let mut embedded = 0;
    for batch in missing.chunks(EMBED_BATCH) {
        // The context line (title > headings) goes where the model's prompt wants a title.
        let docs: Vec<(&str, &str)> = batch
            .iter()
            .map(|(_, t)| quire_vault::chunk::split_context(t))
            .collect();
        let vectors = embedder.embed_documents(&docs)?;
        let rows: Vec<(String, Vec<f32>)> =
            batch.iter().map(|(h, _)| h.clone()).zip(vectors).collect();
        store.put_embeddings(&space_id, &rows)?;
        // A kill here (Ctrl-C, kill -9, a closed laptop) keeps every batch stored so far.
        failpoint("after_embed_batch");
        embedded += rows.len();
        progress.embedding(embedded, missing.len());
    }
    Ok(embedded)
}

/// The approximate vector index refreshed for `embedder`'s space. It is derived and optional: a
/// build that fails (a full disk) is reported, and searches scan exactly meanwhile; the sync
/// itself stands.
fn refresh_ann(
    location: &IndexLocation,
    store: &Store,
    embedder: &dyn quire_embed::Embedder,
    settings: Option<crate::ann::AnnSettings>,
) -> crate::ann::AnnRefresh {
    let space = embedder.space();
    let settings = settings.unwrap_or_else(crate::ann::AnnSettings::from_env);
    crate::ann::refresh(
        &location.dir,
        store,
        &space.id(),
        space.dimension,
        &settings,
    )
    .unwrap_or_else(|e| crate::ann::AnnRefresh::Failed {
        error: e.to_string(),
    })
}

/// A note left out of the index because of a problem with it alone.
/// The failure remembered for `path` when its bytes (`digest`) are the ones that failed (in the
/// same words as the first time: an incremental sync reports what a fresh one does).
fn remembered_failure(
    failed_before: &HashMap<String, (String, String)>,
    path: &str,
    digest: &str,
) -> Option<Skipped> {
    let (sha, reason) = failed_before.get(path)?;
    if sha != digest {
        return None;
    }
    let reason: SkipReason = serde_json::from_str(reason).ok()?;
    Some(Skipped::failed(path, reason, digest.to_string()))
}

fn note_failed(path: &str, why: &str) -> Skipped {
    Skipped::new(
        path.to_string(),
        SkipReason::Unreadable {
            error: format!("not indexed: {why}"),
        },
    )
}

/// Crash tests stop the process here when `QUIRE_FAILPOINT` names this point (abort, as a kill
/// would: nothing is flushed or unwound). Costs one environment lookup per point per sync.
/// A point whose name starts with `stall` sleeps 5 s instead (a sync that hangs, for the
/// watcher's stall report).
pub fn failpoint(name: &str) {
    if std::env::var_os("QUIRE_FAILPOINT").is_some_and(|v| v == name) {
        if name.starts_with("stall") {
            std::thread::sleep(std::time::Duration::from_secs(5));
            return;
        }
        eprintln!("quire: failpoint {name}: aborting");
        std::process::abort();
    }
}

fn note_type(properties: &std::collections::BTreeMap<String, serde_json::Value>) -> Option<String> {
    match properties.get("type") {
        Some(serde_json::Value::String(s)) => Some(s.clone()),
        _ => None,
    }
}

/// The full-text document of a chunk.
pub fn doc_for_chunk(note: &Note, chunk: &Chunk) -> FullTextDoc {
    FullTextDoc {
        key: ChunkKey::new(&note.path, &chunk.id).encode(),
        path: note.path.clone(),
        title: note.title.clone(),
        headings: chunk.heading_path.join(" / "),
        body: chunk.body.clone(),
        tags: note
            .tag_names()
            .into_iter()
            .map(|t| t.to_lowercase())
            .collect(),
        doc_type: note_type(&note.properties),
    }
}

/// A chunk's identity everywhere in the index: its note's vault-relative path and its id within
/// the note. The full-text index stores it [`encode`](ChunkKey::encode)d as one string.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ChunkKey {
    /// Vault-relative path of the note.
    pub path: String,
    /// The chunk's stable id within the note.
    pub id: String,
}

impl ChunkKey {
    /// The key of chunk `id` of the note at `path`.
    pub fn new(path: impl Into<String>, id: impl Into<String>) -> ChunkKey {
        ChunkKey {
            path: path.into(),
            id: id.into(),
        }
    }

    /// The full-text index's form: path, NUL, id (neither holds a NUL: paths come from the
    /// file system and ids from heading text with control characters removed).
    pub fn encode(&self) -> String {
        format!("{}\u{0}{}", self.path, self.id)
    }

    /// Reads an [`encode`](ChunkKey::encode)d key back; `None` if it is not one.
    pub fn decode(key: &str) -> Option<ChunkKey> {
        let (path, id) = key.split_once('\u{0}')?;
        Some(ChunkKey::new(path, id))
    }
}

/// Every chunk of the store as a full-text document (for a rebuild without re-reading the vault,
/// or a database backend's copy of the index).
pub fn docs_from_store(store: &Store) -> Result<Vec<FullTextDoc>, IndexError> {
    Ok(docs_with_chunks(store, None)?
        .into_iter()
        .map(|(_, d)| d)
        .collect())
}

/// The full-text documents of the chunks of the notes at `paths` (`None`: every note), in the
/// store's order, each with the document of the chunk it came from.
pub fn docs_with_chunks(
    store: &Store,
    paths: Option<&[&str]>,
) -> Result<Vec<(ChunkRow, FullTextDoc)>, IndexError> {
    let titles: HashMap<String, String> = store
        .notes()?
        .into_iter()
        .map(|n| (n.path, n.title))
        .collect();
    let mut tags: HashMap<String, Vec<String>> = HashMap::new();
    for (path, tag) in store.tags()? {
        tags.entry(path).or_default().push(tag);
    }
    let types = store.note_types()?;
    let chunks = match paths {
        None => store.chunks(None)?,
        Some(paths) => {
            let mut chunks = Vec::new();
            for path in paths {
                chunks.extend(store.chunks(Some(path))?);
            }
            chunks
        }
    };
    Ok(chunks
        .into_iter()
        .map(|c| {
            // The stored text is "context\n\nbody" (see quire_vault::chunk); the context line never
            // holds a blank line.
            let body = c
                .text
                .split_once("\n\n")
                .map(|(_, b)| b.to_string())
                .unwrap_or_default();
            let mut note_tags = tags.get(&c.note_path).cloned().unwrap_or_default();
            note_tags.sort();
            note_tags.dedup();
            let doc = FullTextDoc {
                key: ChunkKey::new(&c.note_path, &c.id).encode(),
                title: titles.get(&c.note_path).cloned().unwrap_or_default(),
                headings: c.heading_path.join(" / "),
                body,
                tags: note_tags,
                doc_type: types.get(&c.note_path).cloned(),
                path: c.note_path.clone(),
            };
            (c, doc)
        })
        .collect())
}
