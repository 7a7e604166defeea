//! PDF text: the pages of a PDF as plain text, for the index and for `quire read`.
//!
//! The extractor is `pdf-extract` (pure Rust, over `lopdf`): text in content-stream order with
//! line breaks from glyph positions. It was chosen after measuring it on real PDFs (see the
//! "PDFs and canvases" section of docs/index.md). Extraction crates panic and can be made to loop or to
//! allocate without bound, so [`extract_pdf`] never hands them a file it has not bounded first:
//!
//! - every compressed stream is inflated once here, with a budget for all of them together
//!   ([`PdfLimits::max_inflated_bytes`]), so a deflate bomb is refused before `lopdf` inflates it;
//! - form XObjects that draw themselves (directly or through others) or nest deeper than
//!   [`PdfLimits::max_form_depth`] are refused (the extractor would recurse until the stack
//!   overflows, which no `catch_unwind` can stop);
//! - only the first [`PdfLimits::max_pages`] pages are read, each inside `catch_unwind` (a page
//!   the extractor panics on is an empty page, not a failed file);
//! - the text of a whole document is capped ([`PdfLimits::max_text_bytes`]): pages past it are
//!   left out and the file is reported as partly indexed;
//! - [`extract_pdf_bounded`] runs all of it in a child process when the program has said it can
//!   serve as one ([`set_worker_program`], [`serve_worker`]): the child's address space is capped
//!   ([`PdfLimits::max_memory_bytes`]), so whatever a filter chain or a stream referenced a
//!   thousand times decodes to, it cannot take more, and it is killed after
//!   [`PdfLimits::timeout`], so nothing keeps running once quire has given up. Without a worker
//!   program (a library caller, unit tests) it runs on a thread that stops at the next page once
//!   the time is up.
//!
//! The text is cleaned for search: ligatures (`ﬁ`) become letters, soft hyphens go, a word
//! hyphenated at a line end is joined on the first line, control characters are dropped.
//! [`pdf_note`] turns the pages into a [`Note`] whose source has a `# Page N` heading per page,
//! so the chunker cuts PDFs by the same rules as notes and a chunk's heading path names its page.

use std::collections::HashSet;
use std::io::{Read, Write};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Once, OnceLock};
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use pdf_extract::{Dictionary, Document, Object, ObjectId};

use crate::model::{Block, BlockKind, Heading, Note};

/// Bounds on what one PDF may cost.
#[derive(Debug, Clone)]
pub struct PdfLimits {
    /// Pages read; later pages are left out (and the file reported as partly indexed).
    pub max_pages: usize,
    /// What all compressed streams of the file may inflate to, together.
    pub max_inflated_bytes: u64,
    /// How deep form XObjects may nest.
    pub max_form_depth: usize,
    /// How long [`extract_pdf_bounded`] waits for the extractor.
    pub timeout: Duration,
    /// Extracted text kept from one document, all pages together; later pages are left out.
    pub max_text_bytes: usize,
    /// The address space of the worker process ([`serve_worker`]): decoding past it fails there.
    pub max_memory_bytes: u64,
}

impl Default for PdfLimits {
    fn default() -> Self {
        PdfLimits {
            max_pages: 2_000,
            max_inflated_bytes: 512 * 1024 * 1024,
            max_form_depth: 12,
            timeout: Duration::from_secs(60),
            max_text_bytes: 32 * 1024 * 1024,
            max_memory_bytes: 576 * 1024 * 1024,
        }
    }
}

/// Why a PDF gave no text.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error, Serialize, Deserialize)]
pub enum PdfError {
    /// Encrypted with a password quire does not have (an empty user password is tried).
    #[error("encrypted (needs a password)")]
    Encrypted,
    /// No page has any text: a scan without a text layer, or only images.
    #[error("no text layer ({pages} page(s) of images or scans; quire does no OCR)")]
    NoTextLayer {
        /// The document's page count.
        pages: usize,
    },
    /// Not a PDF the parser can read, or a structure quire refuses (a form that draws itself).
    #[error("malformed PDF: {0}")]
    Malformed(String),
    /// Its compressed streams inflate past [`PdfLimits::max_inflated_bytes`] (a deflate bomb).
    #[error("its streams inflate to more than {limit_mib} MiB")]
    InflatesTooMuch {
        /// The budget, in MiB.
        limit_mib: u64,
    },
    /// The extractor did not finish within [`PdfLimits::timeout`].
    #[error("text extraction took longer than {seconds} s")]
    TimedOut {
        /// The limit, in seconds.
        seconds: u64,
    },
    /// Reading it needed more memory than [`PdfLimits::max_memory_bytes`] (the worker process
    /// ran out of its address space: a decompression bomb of some other shape).
    #[error("reading it needs more than {limit_mib} MiB of memory")]
    NeedsTooMuchMemory {
        /// The cap, in MiB.
        limit_mib: u64,
    },
}

/// The text of a PDF, page by page.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PdfText {
    /// The text of pages `1..=pages.len()`, cleaned (see the module docs); an empty string for a
    /// page without text.
    pub pages: Vec<String>,
    /// The document's page count (more than `pages.len()` when [`PdfLimits::max_pages`] cut it).
    pub page_count: usize,
    /// Pages the extractor failed on (given as empty).
    pub failed_pages: Vec<u32>,
}

/// Extracts the text of every page of the PDF in `bytes` on this thread (see the module docs for
/// the bounds); [`extract_pdf_bounded`] adds a time limit.
pub fn extract_pdf(bytes: &[u8], limits: &PdfLimits) -> Result<PdfText, PdfError> {
    extract_pdf_until(bytes, limits, &AtomicBool::new(false))
}

/// [`extract_pdf`] that stops before the next page once `stop` is set (its result is then
/// dropped by the caller).
fn extract_pdf_until(
    bytes: &[u8],
    limits: &PdfLimits,
    stop: &AtomicBool,
) -> Result<PdfText, PdfError> {
    quiet_extractor_panics();
    check_inflated_size(bytes, limits.max_inflated_bytes)?;
    let loaded = std::panic::catch_unwind(|| Document::load_mem(bytes));
    let mut doc = match loaded {
        Ok(Ok(doc)) => doc,
        Ok(Err(pdf_extract::Error::Decryption(_))) => return Err(PdfError::Encrypted),
        Ok(Err(e)) => return Err(PdfError::Malformed(e.to_string())),
        Err(_) => return Err(PdfError::Malformed("the parser failed on it".into())),
    };
    if doc.is_encrypted() {
        let decrypted =
            std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| doc.decrypt("").is_ok()));
        if !matches!(decrypted, Ok(true)) {
            return Err(PdfError::Encrypted);
        }
    }
    let pages = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| doc.get_pages()))
        .map_err(|_| PdfError::Malformed("the page tree cannot be read".into()))?;
    if pages.is_empty() {
        return Err(PdfError::Malformed("no pages".into()));
    }
    check_forms(&doc, &pages, limits.max_form_depth)?;
    let page_count = pages.len();
    let mut text = Vec::new();
    let mut failed_pages = Vec::new();
    let mut text_bytes = 0usize;
    for &number in pages.keys().take(limits.max_pages) {
        if stop.load(Ordering::Relaxed) || text_bytes >= limits.max_text_bytes {
            break;
        }
        let mut out = String::new();
        let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            let mut output = pdf_extract::PlainTextOutput::new(&mut out);
            pdf_extract::output_doc_page(&doc, &mut output, number)
        }));
        if !matches!(result, Ok(Ok(()))) {
            failed_pages.push(number);
            out.clear();
        }
        let page = clean_page_text(&out);
        text_bytes += page.len();
        text.push(page);
    }
    if text.iter().all(|t| t.trim().is_empty()) {
        if failed_pages.len() == text.len() {
            return Err(PdfError::Malformed(
                "the extractor failed on every page".into(),
            ));
        }
        return Err(PdfError::NoTextLayer { pages: page_count });
    }
    Ok(PdfText {
        pages: text,
        page_count,
        failed_pages,
    })
}

/// [`extract_pdf`] bounded in time (and, in a worker process, in memory): in a child process
/// when [`set_worker_program`] was called, else on a thread of its own that stops at the next
/// page when the time is up (its result is then dropped).
pub fn extract_pdf_bounded(bytes: Vec<u8>, limits: &PdfLimits) -> Result<PdfText, PdfError> {
    match WORKER.get() {
        Some(program) => extract_in_worker(program, bytes, limits),
        None => extract_on_thread(bytes, limits),
    }
}

fn extract_on_thread(bytes: Vec<u8>, limits: &PdfLimits) -> Result<PdfText, PdfError> {
    let (send, receive) = std::sync::mpsc::sync_channel(1);
    let thread_limits = limits.clone();
    let stop = Arc::new(AtomicBool::new(false));
    let thread_stop = Arc::clone(&stop);
    let spawned = std::thread::Builder::new()
        .name(EXTRACTOR_THREAD.into())
        .stack_size(16 * 1024 * 1024)
        .spawn(move || {
            let _ = send.send(extract_pdf_until(&bytes, &thread_limits, &thread_stop));
        });
    if spawned.is_err() {
        return Err(PdfError::Malformed(
            "no thread could be started to read it".into(),
        ));
    }
    match receive.recv_timeout(limits.timeout) {
        Ok(result) => result,
        Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {
            stop.store(true, Ordering::Relaxed);
            Err(PdfError::TimedOut {
                seconds: limits.timeout.as_secs(),
            })
        }
        Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => {
            Err(PdfError::Malformed("the extractor failed on it".into()))
        }
    }
}

/// The program [`extract_pdf_bounded`] starts as its worker, once set.
static WORKER: OnceLock<PathBuf> = OnceLock::new();

/// The first argument that makes a program act as the PDF worker: it must then call
/// [`serve_worker`] with the arguments after it, and do nothing else.
pub const WORKER_ARG: &str = "__quire-pdf-worker";

/// Makes [`extract_pdf_bounded`] extract in a child process, `program WORKER_ARG …`, from now on
/// (the first call wins). The `quire` binary names itself.
pub fn set_worker_program(program: PathBuf) {
    let _ = WORKER.set(program);
}

/// The worker's side: reads a PDF on stdin, caps its own address space, extracts with the
/// limits given in `args` (as [`extract_in_worker`] writes them), and writes the result as JSON
/// on stdout. Returns the process's exit code.
pub fn serve_worker(args: &[String]) -> i32 {
    let number = |name: &str| -> Option<u64> {
        let at = args.iter().position(|a| a == name)?;
        args.get(at + 1)?.parse().ok()
    };
    let defaults = PdfLimits::default();
    let limits = PdfLimits {
        max_pages: number("--max-pages").map_or(defaults.max_pages, |n| n as usize),
        max_inflated_bytes: number("--max-inflated").unwrap_or(defaults.max_inflated_bytes),
        max_form_depth: number("--max-form-depth").map_or(defaults.max_form_depth, |n| n as usize),
        max_text_bytes: number("--max-text").map_or(defaults.max_text_bytes, |n| n as usize),
        max_memory_bytes: number("--max-memory").unwrap_or(defaults.max_memory_bytes),
        timeout: defaults.timeout,
    };
    cap_address_space(limits.max_memory_bytes);
    let mut bytes = Vec::new();
    if std::io::stdin().read_to_end(&mut bytes).is_err() {
        return 2;
    }
    let worker = std::thread::Builder::new()
        .name(EXTRACTOR_THREAD.into())
        .stack_size(16 * 1024 * 1024)
        .spawn(move || extract_pdf(&bytes, &limits));
    let result = match worker.map(std::thread::JoinHandle::join) {
        Ok(Ok(result)) => result,
        _ => Err(PdfError::Malformed("the extractor failed on it".into())),
    };
    let Ok(json) = serde_json::to_vec(&result) else {
        return 2;
    };
    let mut stdout = std::io::stdout().lock();
    if stdout
        .write_all(&json)
        .and_then(|()| stdout.flush())
        .is_err()
    {
        return 2;
    }
    0
}

#[cfg(unix)]
fn cap_address_space(bytes: u64) {
    use rustix::process::{Resource, Rlimit, setrlimit};
    let limit = Rlimit {
        current: Some(bytes),
        maximum: Some(bytes),
    };
    let _ = setrlimit(Resource::As, limit);
}

#[cfg(not(unix))]
fn cap_address_space(_bytes: u64) {}

/// Runs the extraction in `program` (see [`serve_worker`]): the bytes on its stdin, its answer
/// on its stdout, the child killed when [`PdfLimits::timeout`] passes. A child that dies
/// without an answer ran out of its memory (an abort) or crashed.
fn extract_in_worker(
    program: &std::path::Path,
    bytes: Vec<u8>,
    limits: &PdfLimits,
) -> Result<PdfText, PdfError> {
    let spawned = std::process::Command::new(program)
        .arg(WORKER_ARG)
        .args(["--max-pages", &limits.max_pages.to_string()])
        .args(["--max-inflated", &limits.max_inflated_bytes.to_string()])
        .args(["--max-form-depth", &limits.max_form_depth.to_string()])
        .args(["--max-text", &limits.max_text_bytes.to_string()])
        .args(["--max-memory", &limits.max_memory_bytes.to_string()])
        // One malloc arena: a second thread's arena would reserve address space for nothing.
        .env("MALLOC_ARENA_MAX", "1")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn();
    let mut child = match spawned {
        Ok(child) => child,
        // No child can be started (a sandbox forbids it): read it here, bounded in time only.
        Err(_) => return extract_on_thread(bytes, limits),
    };
    let stdin = child.stdin.take();
    let writer = std::thread::spawn(move || {
        if let Some(mut stdin) = stdin {
            // A child that stopped reading (it died) makes this fail; that is reported below.
            let _ = stdin.write_all(&bytes);
        }
    });
    let stdout = child.stdout.take();
    let reader = std::thread::spawn(move || {
        let mut answer = Vec::new();
        if let Some(stdout) = stdout {
            let _ = stdout.take(256 * 1024 * 1024).read_to_end(&mut answer);
        }
        answer
    });
    let deadline = Instant::now() + limits.timeout;
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break Some(status),
            Ok(None) if Instant::now() >= deadline => {
                let _ = child.kill();
                let _ = child.wait();
                break None;
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(5)),
            Err(_) => {
                let _ = child.kill();
                let _ = child.wait();
                break None;
            }
        }
    };
    let _ = writer.join();
    let answer = reader.join().unwrap_or_default();
    let Some(status) = status else {
        return Err(PdfError::TimedOut {
            seconds: limits.timeout.as_secs(),
        });
    };
    if status.success()
        && let Ok(result) = serde_json::from_slice::<Result<PdfText, PdfError>>(&answer)
    {
        return result;
    }
    if ran_out_of_memory(&status) {
        return Err(PdfError::NeedsTooMuchMemory {
            limit_mib: limits.max_memory_bytes / (1024 * 1024),
        });
    }
    Err(PdfError::Malformed(format!(
        "the extractor crashed on it ({status})"
    )))
}

/// An allocation that fails aborts a Rust program (SIGABRT); the kernel's OOM killer sends
/// SIGKILL.
#[cfg(unix)]
fn ran_out_of_memory(status: &std::process::ExitStatus) -> bool {
    use std::os::unix::process::ExitStatusExt;
    matches!(status.signal(), Some(6 | 9))
}

#[cfg(not(unix))]
fn ran_out_of_memory(_status: &std::process::ExitStatus) -> bool {
    false
}

/// The name of the extractor's threads: their panics are expected and not printed.
const EXTRACTOR_THREAD: &str = "quire-pdf";

/// Installs (once) a panic hook that keeps the extractor's panics, which are caught and reported
/// as a skipped file, off stderr; every other panic is printed as before.
fn quiet_extractor_panics() {
    static HOOK: Once = Once::new();
    HOOK.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            let extracting = std::thread::current().name() == Some(EXTRACTOR_THREAD)
                || EXTRACTING.with(|e| e.get());
            if !extracting {
                previous(info);
            }
        }));
    });
}

thread_local! {
    /// Set while [`extract_pdf`] runs on a thread that is not an extractor thread (tests, fuzzing).
    static EXTRACTING: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Inflates every compressed stream once, within `budget` bytes for all of them together.
///
/// Streams are found by their `stream` keyword rather than by the parser (which inflates object
/// streams while it loads, before anything could bound it); each is inflated as zlib, or as raw
/// deflate when it has no zlib header, until it ends, fails, or the budget is spent.
fn check_inflated_size(bytes: &[u8], budget: u64) -> Result<(), PdfError> {
    let limit_mib = budget / (1024 * 1024);
    let mut left = budget;
    let mut sink = vec![0u8; 64 * 1024];
    for at in memchr::memmem::find_iter(bytes, b"stream") {
        if at >= 3 && &bytes[at - 3..at] == b"end" {
            continue;
        }
        let mut start = at + b"stream".len();
        if bytes.get(start) == Some(&b'\r') {
            start += 1;
        }
        if bytes.get(start) == Some(&b'\n') {
            start += 1;
        }
        let data = &bytes[start.min(bytes.len())..];
        let zlib = data.len() >= 2 && (u16::from(data[0]) << 8 | u16::from(data[1])) % 31 == 0;
        let used = if zlib {
            drain(flate2::read::ZlibDecoder::new(data), &mut sink, left)
        } else {
            drain(flate2::read::DeflateDecoder::new(data), &mut sink, left)
        };
        match used {
            Some(n) => left -= n,
            None => return Err(PdfError::InflatesTooMuch { limit_mib }),
        }
    }
    Ok(())
}

/// Reads `reader` to its end or first error; `None` when it gives more than `budget` bytes.
fn drain(mut reader: impl Read, sink: &mut [u8], budget: u64) -> Option<u64> {
    let mut total = 0u64;
    loop {
        match reader.read(sink) {
            Ok(0) | Err(_) => return Some(total),
            Ok(n) => {
                total += n as u64;
                if total > budget {
                    return None;
                }
            }
        }
    }
}

/// Refuses form XObjects that would make the extractor recurse without end or too deep.
///
/// A form with its own resources can draw the forms named there; a form without them draws with
/// the resources of whatever drew it (as `pdf-extract` does), so it can reach those forms, and
/// itself, when its content has a `Do`.
fn check_forms(
    doc: &Document,
    pages: &std::collections::BTreeMap<u32, ObjectId>,
    max_depth: usize,
) -> Result<(), PdfError> {
    let mut visits = 0usize;
    for &page in pages.values() {
        let Some(resources) = page_resources(doc, page) else {
            continue;
        };
        let forms = forms_in(doc, resources);
        let mut path = Vec::new();
        for form in &forms {
            walk_form(doc, *form, &forms, &mut path, max_depth, &mut visits)?;
        }
    }
    Ok(())
}

/// Form visits allowed in total: a wide tree of forms costs the extractor as much as a deep one.
const MAX_FORM_VISITS: usize = 100_000;

fn walk_form(
    doc: &Document,
    form: ObjectId,
    context: &[ObjectId],
    path: &mut Vec<ObjectId>,
    max_depth: usize,
    visits: &mut usize,
) -> Result<(), PdfError> {
    if path.contains(&form) {
        return Err(PdfError::Malformed("a form XObject draws itself".into()));
    }
    if path.len() >= max_depth {
        return Err(PdfError::Malformed(format!(
            "form XObjects nested deeper than {max_depth}"
        )));
    }
    *visits += 1;
    if *visits > MAX_FORM_VISITS {
        return Err(PdfError::Malformed(format!(
            "more than {MAX_FORM_VISITS} form XObjects drawn"
        )));
    }
    let Ok(stream) = doc.get_object(form).and_then(Object::as_stream) else {
        return Ok(());
    };
    let own = stream
        .dict
        .get(b"Resources")
        .ok()
        .and_then(|r| resolve_dict(doc, r));
    let children: Vec<ObjectId> = match own {
        Some(resources) => forms_in(doc, resources),
        None if draws_xobjects(stream) => context.to_vec(),
        None => Vec::new(),
    };
    path.push(form);
    for child in &children {
        walk_form(doc, *child, &children, path, max_depth, visits)?;
    }
    path.pop();
    Ok(())
}

/// Whether a content stream may hold a `Do` operator (a conservative byte test).
fn draws_xobjects(stream: &pdf_extract::Stream) -> bool {
    let content = stream
        .decompressed_content()
        .unwrap_or_else(|_| stream.content.clone());
    memchr::memmem::find(&content, b"Do").is_some()
}

/// The page's resources, inherited from its ancestors when it has none (as the extractor reads
/// them); ancestors are followed at most 64 levels up.
fn page_resources(doc: &Document, page: ObjectId) -> Option<&Dictionary> {
    let mut node = doc.get_dictionary(page).ok()?;
    let mut seen = HashSet::new();
    for _ in 0..64 {
        if let Some(resources) = node
            .get(b"Resources")
            .ok()
            .and_then(|r| resolve_dict(doc, r))
        {
            return Some(resources);
        }
        let parent = node.get(b"Parent").ok()?.as_reference().ok()?;
        if !seen.insert(parent) {
            return None;
        }
        node = doc.get_dictionary(parent).ok()?;
    }
    None
}

/// The XObjects named in a resource dictionary that the extractor would draw as forms.
fn forms_in(doc: &Document, resources: &Dictionary) -> Vec<ObjectId> {
    let Some(xobjects) = resources
        .get(b"XObject")
        .ok()
        .and_then(|x| resolve_dict(doc, x))
    else {
        return Vec::new();
    };
    xobjects
        .iter()
        .filter_map(|(_, value)| value.as_reference().ok())
        .filter(|id| {
            doc.get_object(*id)
                .and_then(Object::as_stream)
                .ok()
                .and_then(|s| s.dict.get(b"Subtype").ok())
                .and_then(|s| s.as_name().ok())
                // The extractor draws any XObject that is not an image as a form, whatever its
                // Subtype says (found by fuzzing: a mutated /Subtype recursed without end).
                != Some(b"Image".as_slice())
        })
        .collect()
}

/// A dictionary, given directly or by one reference.
fn resolve_dict<'a>(doc: &'a Document, object: &'a Object) -> Option<&'a Dictionary> {
    match object {
        Object::Dictionary(d) => Some(d),
        Object::Reference(id) => doc.get_dictionary(*id).ok(),
        _ => None,
    }
}

/// The extractor's text of one page made fit to search (see the module docs); lines are kept
/// (a hyphenated word's end moves up to its start), trailing spaces and runs of blank lines go.
pub fn clean_page_text(raw: &str) -> String {
    let mut text = String::with_capacity(raw.len());
    for c in raw.chars() {
        match c {
            '\u{FB00}' => text.push_str("ff"),
            '\u{FB01}' => text.push_str("fi"),
            '\u{FB02}' => text.push_str("fl"),
            '\u{FB03}' => text.push_str("ffi"),
            '\u{FB04}' => text.push_str("ffl"),
            '\u{FB05}' | '\u{FB06}' => text.push_str("st"),
            '\u{00AD}' => {}
            '\r' => text.push('\n'),
            '\t' => text.push(' '),
            c if c.is_control() && c != '\n' => {}
            c => text.push(c),
        }
    }
    let mut lines: Vec<String> = text.lines().map(|l| l.trim_end().to_string()).collect();
    for i in 0..lines.len().saturating_sub(1) {
        join_hyphenated(&mut lines, i);
    }
    crate::chunk::squeeze_blank_runs(&lines.join("\n"))
        .trim_start_matches('\n')
        .to_string()
}

/// `algo-` / `rithm is` → `algorithm` / `is`: a line ending in a letter and a hyphen, followed by
/// a line starting with a lowercase letter, takes that line's first word. A real compound cut at
/// its hyphen (`well-` / `known`) loses its hyphen too: the PDF does not say which it was.
fn join_hyphenated(lines: &mut [String], i: usize) {
    let line = &lines[i];
    let Some(stem) = line.strip_suffix('-') else {
        return;
    };
    if !stem.chars().last().is_some_and(char::is_alphabetic) {
        return;
    }
    let next = lines[i + 1].trim_start();
    if !next.chars().next().is_some_and(char::is_lowercase) {
        return;
    }
    let word_end = next.find(char::is_whitespace).unwrap_or(next.len());
    let joined = format!("{stem}{}", &next[..word_end]);
    let rest = next[word_end..].trim_start().to_string();
    lines[i] = joined;
    lines[i + 1] = rest;
}

/// The page a PDF chunk is on, from its heading path (`["Page 3"]` → 3).
pub fn page_of(heading_path: &[String]) -> Option<u32> {
    heading_path.first()?.strip_prefix("Page ")?.parse().ok()
}

/// Whether a vault-relative path names a PDF.
pub fn is_pdf(path: &str) -> bool {
    path.rsplit_once('.')
        .is_some_and(|(_, ext)| ext.eq_ignore_ascii_case("pdf"))
}

/// The link that opens a PDF at a page, as Obsidian reads it: `Papers/x.pdf#page=3`.
pub fn page_link(path: &str, page: u32) -> String {
    format!("{path}#page={page}")
}

/// The lines of `page` (1-based) in a PDF note's source, as `(first, last)`, heading included.
pub fn page_lines(note: &Note, page: u32) -> Option<(usize, usize)> {
    let heading = note
        .headings
        .iter()
        .find(|h| h.text == format!("Page {page}"))?;
    Some((heading.line, heading.end_line))
}

/// A PDF's pages as a [`Note`] at `path`: the source is `# Page N`, a blank line and the page's
/// text, for every page; each heading opens a section and each run of lines is a paragraph
/// block, so [`crate::chunk::chunk_note`] cuts it like a note. The page text is never read as
/// Markdown: no links, tags or properties come from it. `sha256` is the file's.
pub fn pdf_note(path: &str, text: &PdfText, sha256: String) -> Note {
    let mut source = String::new();
    let mut headings = Vec::new();
    let mut blocks = Vec::new();
    let mut line = 1;
    let mut words = 0;
    for (i, page) in text.pages.iter().enumerate() {
        let heading_line = line;
        source.push_str(&format!("# Page {}\n\n", i + 1));
        blocks.push(Block {
            kind: BlockKind::Heading,
            start_line: line,
            end_line: line,
        });
        line += 2;
        let mut paragraph_start = None;
        for text_line in page.lines() {
            if text_line.trim().is_empty() {
                if let Some(start) = paragraph_start.take() {
                    blocks.push(paragraph(start, line - 1));
                }
            } else {
                words += text_line.split_whitespace().count();
                paragraph_start.get_or_insert(line);
            }
            source.push_str(text_line);
            source.push('\n');
            line += 1;
        }
        if let Some(start) = paragraph_start {
            blocks.push(paragraph(start, line - 1));
        }
        source.push('\n');
        line += 1;
        headings.push(Heading {
            level: 1,
            text: format!("Page {}", i + 1),
            line: heading_line,
            end_line: line - 1,
        });
    }
    let line_count = line - 1;
    if let Some(last) = headings.last_mut() {
        last.end_line = line_count.max(last.line);
    }
    let name = path.rsplit('/').next().unwrap_or(path);
    let title = name
        .rsplit_once('.')
        .map(|(stem, _)| stem)
        .unwrap_or(name)
        .to_string();
    Note {
        path: path.to_string(),
        title,
        properties: Default::default(),
        aliases: Vec::new(),
        tags: Vec::new(),
        headings,
        links: Vec::new(),
        callouts: Vec::new(),
        tasks: Vec::new(),
        block_ids: Vec::new(),
        daily_date: None,
        warnings: Vec::new(),
        body_start_line: 1,
        line_count,
        word_count: words,
        sha256,
        blocks,
        comments: Vec::new(),
        source,
    }
}

fn paragraph(start_line: usize, end_line: usize) -> Block {
    Block {
        kind: BlockKind::Paragraph,
        start_line,
        end_line,
    }
}

/// Runs `f` with the extractor's panics kept off stderr on this thread (for callers of
/// [`extract_pdf`] that are not on an extractor thread).
pub fn quietly<T>(f: impl FnOnce() -> T) -> T {
    quiet_extractor_panics();
    let before = EXTRACTING.with(|e| e.replace(true));
    let out = f();
    EXTRACTING.with(|e| e.set(before));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ligatures_hyphens_and_blank_runs_are_cleaned() {
        let raw = "The e\u{FB03}cient algo-\nrithm is well-\nKnown\n\n\n\nnext\u{0007} para\u{00AD}graph  ";
        assert_eq!(
            clean_page_text(raw),
            "The efficient algorithm\nis well-\nKnown\n\nnext paragraph"
        );
    }

    #[test]
    fn pages_become_sections_with_their_numbers() {
        let text = PdfText {
            pages: vec!["first page\nmore".into(), String::new(), "third".into()],
            page_count: 3,
            failed_pages: vec![],
        };
        let note = pdf_note("Papers/Study.pdf", &text, "abc".into());
        assert_eq!(note.title, "Study");
        assert_eq!(note.headings.len(), 3);
        let (first, last) = page_lines(&note, 3).expect("page 3");
        assert_eq!(note.lines(first, last), Some("# Page 3\n\nthird\n"));
        assert_eq!(note.lines(3, 4), Some("first page\nmore"));
        let chunks = crate::chunk::chunk_note(
            &note,
            &Default::default(),
            &crate::chunk::ApproxTokenCounter,
        );
        let pages: Vec<Option<u32>> = chunks.iter().map(|c| page_of(&c.heading_path)).collect();
        assert!(
            pages.contains(&Some(1)) && pages.contains(&Some(3)),
            "{pages:?}"
        );
        assert!(
            chunks
                .iter()
                .all(|c| !c.body.contains("Page 2") || c.body.trim() == "# Page 2")
        );
    }

    #[test]
    fn garbage_is_malformed_not_a_panic() {
        for bytes in [
            &b""[..],
            b"%PDF-1.4\n",
            b"not a pdf at all",
            b"%PDF-1.7\n1 0 obj <<>> stream\nxx",
        ] {
            let result = quietly(|| extract_pdf(bytes, &PdfLimits::default()));
            assert!(matches!(result, Err(PdfError::Malformed(_))), "{result:?}");
        }
    }

    #[test]
    fn a_deflate_bomb_is_refused_before_it_is_inflated() {
        use std::io::Write;
        let mut encoder = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::best());
        let zeros = vec![0u8; 1024 * 1024];
        for _ in 0..8 {
            encoder.write_all(&zeros).expect("in memory");
        }
        let bomb = encoder.finish().expect("in memory");
        let mut pdf = b"%PDF-1.4\n1 0 obj << /Length 1 /Filter /FlateDecode >> stream\n".to_vec();
        pdf.extend_from_slice(&bomb);
        pdf.extend_from_slice(b"\nendstream endobj\n");
        let limits = PdfLimits {
            max_inflated_bytes: 4 * 1024 * 1024,
            ..Default::default()
        };
        assert_eq!(
            extract_pdf(&pdf, &limits),
            Err(PdfError::InflatesTooMuch { limit_mib: 4 })
        );
    }
}
