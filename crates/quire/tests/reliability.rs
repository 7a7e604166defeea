//! Reliability end to end, on the real binary: crashes between and around the index's two commits
//! (failpoints and SIGKILL at random points), incremental BM25 equal to a fresh build, special
//! files (FIFOs, link loops, broken links), adversarial notes, random file operations under
//! `quire watch`, and that no command changes a byte outside the vault.
//!
//! Each test compares against an index built from scratch in another directory, read with
//! quire-index's own types (an independent view of the store and the full-text generation).

#![allow(clippy::unwrap_used)] // tests and benches stop at the first surprise

use quire_testkit as support;

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use quire_index::{FullText, IndexLocation, Store};
use serde_json::Value;

fn quire(vault: &Path, index: &Path) -> Command {
    support::quire(env!("CARGO_BIN_EXE_quire"), vault, index)
}

use support::{corpora, json, ok};

/// What an index holds, read directly: notes with their hashes, chunks with their content
/// hashes, the skipped files, and whether the full-text index is at the store's generation.
#[derive(Debug, PartialEq)]
struct Digest {
    notes: Vec<(String, String)>,
    chunks: Vec<(String, String, String)>,
    skipped: Vec<(String, String)>,
}

fn digest(index: &Path) -> Digest {
    let location = IndexLocation::new(index);
    let store = Store::open(&location.store_path()).unwrap();
    let mut notes: Vec<(String, String)> = store
        .notes()
        .unwrap()
        .into_iter()
        .map(|n| (n.path, n.sha256))
        .collect();
    notes.sort();
    let mut chunks: Vec<(String, String, String)> = store
        .chunks(None)
        .unwrap()
        .into_iter()
        .map(|c| (c.note_path, c.id, c.content_hash))
        .collect();
    chunks.sort();
    let mut skipped = store.skipped().unwrap();
    skipped.sort();
    Digest {
        notes,
        chunks,
        skipped,
    }
}

/// (store generation, full-text generation) read with quire-index's own types.
fn generations(index: &Path) -> (u64, Option<u64>) {
    let location = IndexLocation::new(index);
    let store = Store::open(&location.store_path()).unwrap();
    let fulltext = FullText::open(&location.fulltext_dir()).unwrap();
    (store.generation().unwrap(), fulltext.generation().unwrap())
}

/// BM25 results: (path, score) per note, best first.
fn bm25(vault: &Path, index: &Path, query: &str) -> Vec<(String, f64)> {
    ranked(quire(vault, index).args(["--json", "search", query, "--mode", "bm25", "-k", "10"]))
}

/// A search's results: (path, score) per note, best first.
fn ranked(search: &mut Command) -> Vec<(String, f64)> {
    let v = json(&search.output().unwrap());
    v["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["path"].as_str().unwrap().to_string(),
                r["score"].as_f64().unwrap(),
            )
        })
        .collect()
}

fn fresh_index(vault: &Path, index: &Path) {
    ok(&quire(vault, index).arg("index").output().unwrap());
}

/// A small deterministic generator (xorshift), so a failing run can be repeated from its seed.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

fn seed() -> u64 {
    std::env::var("QUIRE_TEST_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0x5eed_1234_abcd_0001)
}

fn note_text(rng: &mut Rng, n: usize) -> String {
    let words = [
        "starter", "garden", "ledger", "orbit", "harbour", "lantern", "meadow", "quartz",
        "thimble", "violet", "walnut", "zephyr",
    ];
    let mut text = format!("# Note {n}\n\n");
    for s in 0..1 + rng.below(4) {
        text.push_str(&format!("## Part {s}\n\n"));
        for _ in 0..2 + rng.below(6) {
            text.push_str(words[rng.below(words.len())]);
            text.push(' ');
        }
        text.push_str(&format!(
            "[[Note {}]] #t{}\n\n",
            rng.below(300),
            rng.below(5)
        ));
    }
    text
}

fn generated_vault(dir: &Path, notes: usize, rng: &mut Rng) {
    for i in 0..notes {
        let folder = dir.join(format!("f{}", i % 10));
        fs::create_dir_all(&folder).unwrap();
        fs::write(folder.join(format!("Note {i}.md")), note_text(rng, i)).unwrap();
    }
}

/// Edits, deletes and adds a few notes of a generated vault, so the next sync has work.
fn mutate(vault: &Path, notes: usize, rng: &mut Rng, round: usize) {
    for _ in 0..20 {
        let i = rng.below(notes);
        let path = vault.join(format!("f{}/Note {i}.md", i % 10));
        match rng.below(3) {
            0 => {
                let _ = fs::remove_file(&path);
            }
            _ => {
                let _ = fs::write(&path, note_text(rng, i));
            }
        }
    }
    let extra = vault.join("extra");
    fs::create_dir_all(&extra).unwrap();
    fs::write(
        extra.join(format!("Round {round}.md")),
        format!("# Round {round}\n\nroundword{round} appears here only.\n"),
    )
    .unwrap();
}

#[test]
fn a_crash_between_the_two_commits_is_reported_and_repaired() {
    let dir = tempfile::tempdir().unwrap();
    let vault = dir.path().join("vault");
    support::copy_tree(&support::sample_vault(), &vault);
    let index = dir.path().join("index");

    // The very first index dies after the store commit: chunks in the store, no full-text index.
    let out = quire(&vault, &index)
        .env("QUIRE_FAILPOINT", "after_store_commit")
        .arg("index")
        .output()
        .unwrap();
    assert!(!out.status.success(), "the failpoint aborts the process");
    assert_eq!(generations(&index), (1, None));
    let status = json(
        &quire(&vault, &index)
            .args(["--json", "status"])
            .output()
            .unwrap(),
    );
    assert_eq!(status["consistent"], false, "{status}");
    assert_eq!(status["generation"], 1);
    assert_eq!(status["fulltext_generation"], Value::Null);
    // Search does not answer from the half-built index (it used to give 0 results, exit 0): it
    // rebuilds the full-text half from the store, says so, and answers.
    let out = quire(&vault, &index)
        .args(["--json", "search", "sourdough", "--mode", "bm25"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("rebuilt it from the store"), "{stderr}");
    let results = json(&out);
    assert!(
        !results["results"].as_array().unwrap().is_empty(),
        "{results}"
    );
    assert_eq!(generations(&index), (1, Some(1)));

    // An older full-text directory restored under a newer store.
    let saved = dir.path().join("fulltext-gen1");
    support::copy_tree(&index.join("fulltext"), &saved);
    let victim = "Resources/Sourdough Starter.md";
    fs::remove_file(vault.join(victim)).unwrap();
    fs::write(
        vault.join("Fresh.md"),
        "# Fresh\n\nA zanzibarite note written after the first index.\n",
    )
    .unwrap();
    ok(&quire(&vault, &index).arg("index").output().unwrap());
    fs::remove_dir_all(index.join("fulltext")).unwrap();
    support::copy_tree(&saved, &index.join("fulltext"));
    assert_eq!(generations(&index), (2, Some(1)));
    let status = ok(&quire(&vault, &index).arg("status").output().unwrap());
    assert!(
        status.contains("consistent  no: the full-text index (generation 1) does not match the store (generation 2)"),
        "{status}"
    );
    let found = bm25(&vault, &index, "zanzibarite");
    assert_eq!(found.first().map(|(p, _)| p.as_str()), Some("Fresh.md"));
    let starter = bm25(&vault, &index, "starter feeding");
    assert!(
        starter.iter().all(|(p, _)| p != victim),
        "a deleted note came back: {starter:?}"
    );

    // The sync dies after writing the full-text documents but before committing them.
    fs::write(vault.join("Later.md"), "# Later\n\nquokkaword\n").unwrap();
    let out = quire(&vault, &index)
        .env("QUIRE_FAILPOINT", "before_fulltext_commit")
        .arg("index")
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert_eq!(generations(&index), (3, Some(2)));
    // The next sync repairs it (as a new generation) and equals a fresh build.
    ok(&quire(&vault, &index).arg("index").output().unwrap());
    assert_eq!(generations(&index), (4, Some(4)));
    let fresh = dir.path().join("fresh");
    fresh_index(&vault, &fresh);
    assert_eq!(digest(&index), digest(&fresh));
    assert_eq!(
        bm25(&vault, &index, "quokkaword"),
        bm25(&vault, &fresh, "quokkaword")
    );
}

#[test]
fn kill_9_at_thirty_random_points_of_index_and_sync_leaves_a_truthful_index() {
    const NOTES: usize = 1500;
    let mut rng = Rng(seed());
    let dir = tempfile::tempdir().unwrap();
    let vault = dir.path().join("vault");
    generated_vault(&vault, NOTES, &mut rng);
    let index = dir.path().join("index");
    // How long a first index takes here, to spread the kills over it.
    let started = Instant::now();
    fresh_index(&vault, &dir.path().join("timing"));
    let full = started.elapsed().as_millis() as u64;
    let mut kills = 0;
    let mut inconsistent_seen = 0;
    for round in 0..40 {
        if round % 5 == 4 {
            // A run that finishes now and then, so kills also hit an index whose halves agree.
            ok(&quire(&vault, &index).arg("index").output().unwrap());
        }
        mutate(&vault, NOTES, &mut rng, round);
        // Mostly full rebuilds (every note read, both halves rewritten: a kill can land in the
        // reading, between the commits or in the full-text rebuild), and incremental syncs.
        let rebuild = round % 4 != 3;
        let mut command = quire(&vault, &index);
        command.arg("index");
        if rebuild {
            command.arg("--rebuild");
        }
        let mut child = command
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let span = if rebuild { full } else { full / 4 };
        let delay = rng.next() % span.max(1);
        std::thread::sleep(Duration::from_millis(delay));
        let finished = child.try_wait().unwrap().is_some();
        child.kill().ok(); // SIGKILL
        child.wait().unwrap();
        if !finished {
            kills += 1;
        }
        // Whatever state it left: status opens and tells the truth about the two halves.
        if !index.join("quire.sqlite").exists() {
            continue;
        }
        let status = json(
            &quire(&vault, &index)
                .args(["--json", "status"])
                .output()
                .unwrap(),
        );
        let (store, fulltext) = generations(&index);
        let consistent = fulltext == Some(store) || (store == 0 && fulltext.is_none());
        assert_eq!(status["generation"], store);
        assert_eq!(status["consistent"], consistent, "round {round}: {status}");
        if !consistent {
            inconsistent_seen += 1;
        }
    }
    assert!(
        kills >= 30,
        "only {kills} runs were killed before they ended"
    );
    // The next sync brings it to exactly what a fresh build gives.
    ok(&quire(&vault, &index).arg("index").output().unwrap());
    let fresh = dir.path().join("fresh");
    fresh_index(&vault, &fresh);
    assert_eq!(digest(&index), digest(&fresh));
    for query in ["starter garden", "roundword31", "zephyr walnut", "orbit"] {
        let (a, b) = (bm25(&vault, &index, query), bm25(&vault, &fresh, query));
        assert_eq!(
            a.iter().map(|r| &r.0).collect::<Vec<_>>(),
            b.iter().map(|r| &r.0).collect::<Vec<_>>(),
            "{query}"
        );
    }
    eprintln!("killed {kills} runs; {inconsistent_seen} left the two halves apart");
}

#[test]
fn bm25_after_incremental_syncs_ranks_like_a_fresh_build() {
    let dir = tempfile::tempdir().unwrap();
    let vault = dir.path().join("vault");
    support::copy_tree(&corpora().join("vaults/obsidian-tasks-docs"), &vault);
    let index = dir.path().join("index");
    fresh_index(&vault, &index);
    // Delete and rewrite notes: their old documents stay in the segments until a merge.
    let mut notes: Vec<PathBuf> = walk_md(&vault);
    notes.sort();
    for (i, note) in notes.iter().enumerate() {
        if i % 7 == 0 {
            fs::remove_file(note).unwrap();
        } else if i % 5 == 0 {
            let text = fs::read_to_string(note).unwrap();
            fs::write(
                note,
                format!("{text}\n\nAn added line about filters and dates.\n"),
            )
            .unwrap();
        }
    }
    ok(&quire(&vault, &index).arg("index").output().unwrap());
    let fresh = dir.path().join("fresh");
    fresh_index(&vault, &fresh);
    let queries = [
        "due date",
        "recurring tasks",
        "filter by tag",
        "priority",
        "query block",
        "done date",
        "custom statuses",
        "dataview",
        "group by folder",
        "sort by urgency",
        "explain query",
        "global filter",
        "scheduled",
        "start date",
        "cancelled tasks",
    ];
    for query in queries {
        let (a, b) = (bm25(&vault, &index, query), bm25(&vault, &fresh, query));
        assert_eq!(
            a.iter().map(|r| &r.0).collect::<Vec<_>>(),
            b.iter().map(|r| &r.0).collect::<Vec<_>>(),
            "ranking of {query:?} differs from a fresh build"
        );
        for ((_, x), (_, y)) in a.iter().zip(&b) {
            assert!(
                (x - y).abs() <= 0.01 * y.abs().max(1.0),
                "{query}: {x} vs {y}"
            );
        }
    }
}

fn walk_md(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for entry in fs::read_dir(dir).unwrap() {
        let entry = entry.unwrap();
        let path = entry.path();
        let kind = entry.file_type().unwrap();
        if kind.is_dir() {
            if !entry.file_name().to_string_lossy().starts_with('.') {
                out.extend(walk_md(&path));
            }
        } else if kind.is_file() && path.extension().is_some_and(|e| e == "md") {
            out.push(path);
        }
    }
    out
}

fn mkfifo(path: &Path) {
    let status = Command::new("mkfifo").arg(path).status().unwrap();
    assert!(status.success(), "mkfifo {}", path.display());
}

/// Runs a command that must end within `limit` (a FIFO used to block quire forever).
fn bounded(command: &mut Command, limit: Duration) -> Output {
    let mut child = command
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let started = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if started.elapsed() > limit {
            child.kill().ok();
            panic!("{command:?} did not finish within {limit:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    child.wait_with_output().unwrap()
}

#[cfg(unix)]
#[test]
fn special_files_are_skipped_with_their_reason_and_never_block() {
    use std::os::unix::fs::symlink;
    let dir = tempfile::tempdir().unwrap();
    let vault = dir.path().join("vault");
    support::copy_tree(&support::sample_vault(), &vault);
    mkfifo(&vault.join("Pipe.md"));
    symlink("Loop B.md", vault.join("Loop A.md")).unwrap();
    symlink("Loop A.md", vault.join("Loop B.md")).unwrap();
    symlink("Missing target.md", vault.join("Broken.md")).unwrap();
    let index = dir.path().join("index");
    let limit = Duration::from_secs(60);
    let scan = bounded(quire(&vault, &index).args(["--json", "scan"]), limit);
    let scan = json(&scan);
    let reasons = support::skip_reasons(&scan);
    assert_eq!(
        reasons.get("Pipe.md").map(String::as_str),
        Some("not_a_file")
    );
    assert_eq!(
        reasons.get("Loop A.md").map(String::as_str),
        Some("symlink_loop")
    );
    assert_eq!(
        reasons.get("Loop B.md").map(String::as_str),
        Some("symlink_loop")
    );
    assert_eq!(
        reasons.get("Broken.md").map(String::as_str),
        Some("broken_symlink")
    );
    let tree = bounded(quire(&vault, &index).arg("tree"), limit);
    assert!(!ok(&tree).contains("Pipe"));
    let indexed = bounded(quire(&vault, &index).args(["--json", "index"]), limit);
    let stats = json(&indexed);
    let skipped: Vec<&str> = stats["notes_skipped"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["path"].as_str().unwrap())
        .collect();
    assert!(skipped.contains(&"Pipe.md"), "{stats}");
    let status = ok(&quire(&vault, &index).arg("status").output().unwrap());
    assert!(
        status.contains("Pipe.md: not a regular file (named pipe (FIFO)): not read"),
        "{status}"
    );
}

#[test]
fn a_note_whose_heading_paths_clash_is_indexed_with_unique_chunk_ids() {
    let dir = tempfile::tempdir().unwrap();
    let vault = dir.path().join("vault");
    fs::create_dir_all(&vault).unwrap();
    // `# A` twice, then `## #2` under the second: the repeat's key once equalled the child's.
    fs::write(
        vault.join("Clash.md"),
        "# A\n\nfirst\n\n# A\n\nsecond\n\n## #2\n\nthird clashword\n\n# A\n\n## #3\n\nfourth\n",
    )
    .unwrap();
    fs::write(vault.join("Other.md"), "# Other\n\nplain note\n").unwrap();
    let index = dir.path().join("index");
    let stats = json(
        &quire(&vault, &index)
            .args(["--json", "index"])
            .output()
            .unwrap(),
    );
    assert_eq!(stats["notes_indexed"], 2, "{stats}");
    let d = digest(&index);
    let clash: Vec<_> = d.chunks.iter().filter(|c| c.0 == "Clash.md").collect();
    // The third `# A` has no text of its own and joins its child `## #3`.
    assert_eq!(clash.len(), 4, "{clash:?}");
    let found = bm25(&vault, &index, "clashword");
    assert_eq!(found.first().map(|r| r.0.as_str()), Some("Clash.md"));
}

#[test]
fn a_note_with_a_hundred_thousand_headings_is_capped_and_reported() {
    let dir = tempfile::tempdir().unwrap();
    let vault = dir.path().join("vault");
    fs::create_dir_all(&vault).unwrap();
    let mut huge = String::with_capacity(3_000_000);
    for i in 0..100_000 {
        huge.push_str(&format!("## H{i}\nline {i}\n"));
    }
    fs::write(vault.join("Huge.md"), &huge).unwrap();
    fs::write(vault.join("Small.md"), "# Small\n\nnormal text\n").unwrap();
    let index = dir.path().join("index");
    let stats = json(&bounded(
        quire(&vault, &index).args(["--json", "index"]),
        Duration::from_secs(300),
    ));
    assert_eq!(stats["notes_indexed"], 2, "{stats}");
    let cap = quire_vault::chunk::MAX_CHUNKS_PER_NOTE;
    let d = digest(&index);
    assert_eq!(d.chunks.iter().filter(|c| c.0 == "Huge.md").count(), cap);
    let reported = stats["notes_skipped"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["path"] == "Huge.md")
        .map(|s| s["reason"].as_str().unwrap().to_string());
    assert_eq!(
        reported.as_deref(),
        Some(
            format!(
                "more than {cap} chunks: only the first {cap} are indexed (split the note to index the rest)"
            )
            .as_str()
        )
    );
}

/// Every file under `dir` (links not followed) with its bytes' hash, or its link target.
fn tree_hash(dir: &Path) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    fn walk(root: &Path, dir: &Path, out: &mut BTreeMap<String, String>) {
        for entry in fs::read_dir(dir).unwrap() {
            let entry = entry.unwrap();
            let path = entry.path();
            let rel = path.strip_prefix(root).unwrap().display().to_string();
            let kind = entry.file_type().unwrap();
            if kind.is_symlink() {
                out.insert(
                    rel,
                    format!("link:{}", fs::read_link(&path).unwrap().display()),
                );
            } else if kind.is_dir() {
                out.insert(rel.clone(), "dir".into());
                walk(root, &path, out);
            } else {
                let bytes = fs::read(&path).unwrap();
                out.insert(rel, content_hash(&bytes));
            }
        }
    }
    walk(dir, dir, &mut out);
    out
}

fn content_hash(bytes: &[u8]) -> String {
    // FNV-1a and the length: enough to see any change to a handful of small files.
    let mut h: u64 = 0xcbf29ce484222325;
    for b in bytes {
        h ^= u64::from(*b);
        h = h.wrapping_mul(0x100000001b3);
    }
    format!("{h:016x}:{}", bytes.len())
}

#[cfg(unix)]
#[test]
fn no_command_changes_a_byte_outside_the_vault() {
    use std::os::unix::fs::symlink;
    let dir = tempfile::tempdir().unwrap();
    let vault = dir.path().join("vault");
    support::copy_tree(&support::sample_vault(), &vault);
    let sentinel = dir.path().join("sentinel");
    fs::create_dir_all(sentinel.join("deep")).unwrap();
    fs::write(sentinel.join("victim.md"), "# Victim\n\noutside text\n").unwrap();
    fs::write(sentinel.join("deep/secret.txt"), "secret").unwrap();
    // Links out of the vault, where a careless write would land.
    symlink(sentinel.join("victim.md"), vault.join("Outside link.md")).unwrap();
    symlink(&sentinel, vault.join("Outside folder")).unwrap();
    symlink(
        sentinel.join("deep/secret.txt"),
        vault.join("Projects/secret.txt"),
    )
    .unwrap();
    // A note that is itself a link to a file outside: drafting into it must not follow it.
    let before = tree_hash(&sentinel);
    let vault_before = tree_hash(&vault);

    let index = dir.path().join("index");
    let export = dir.path().join("export");
    let run = |args: &[&str]| {
        let out = quire(&vault, &index).args(args).output().unwrap();
        assert!(
            !String::from_utf8_lossy(&out.stderr).contains("panicked"),
            "{args:?}"
        );
        out
    };
    for args in [
        &["scan"][..],
        &["tree"],
        &["manifest"],
        &["index"],
        &["status"],
        &["search", "sourdough"],
        &["outline", "Outside link"],
        &["read", "Outside link"],
        &["read", "../sentinel/victim.md"],
        &["links", "Outside link"],
        &["chunks", "Outside link"],
        &["export-index", export.to_str().unwrap()],
        &["ask", "what is outside?"],
        &["reflect", "--week", "2026-W48"],
        &["eval", "--queries", "5"],
        &["index", "--rebuild"],
    ] {
        run(args);
    }
    // Drafting with a model into the outside link, into a note, and a read of the link.
    let server = support::FakeChat::start(vec![
        support::answer(&["A drafted paragraph [S1]."]),
        support::answer(&["A drafted paragraph [S1]."]),
    ]);
    let draft = |note: &str| {
        quire(&vault, &index)
            .env("QUIRE_LLM_BASE_URL", &server.url)
            .env("QUIRE_LLM_MODEL", "fake-model")
            .args(["draft", note, "--heading", "## Drafted", "--insert"])
            .output()
            .unwrap()
    };
    let refused = draft("Outside link");
    assert!(
        !refused.status.success(),
        "drafting into a link out of the vault is refused"
    );
    let drafted = draft("Projects/Sourdough Experiment");
    ok(&drafted);
    assert_eq!(
        tree_hash(&sentinel),
        before,
        "bytes outside the vault changed"
    );
    // Inside the vault only the drafted note changed.
    let vault_after = tree_hash(&vault);
    let changed: Vec<&String> = vault_after
        .iter()
        .filter(|(k, v)| vault_before.get(*k) != Some(*v))
        .map(|(k, _)| k)
        .collect();
    assert_eq!(changed, ["Projects/Sourdough Experiment.md"]);
}

/// Waits until the index generation has not moved for `quiet` and no sync holds the writer lock,
/// up to `limit`.
fn wait_settled(index: &Path, quiet: Duration, limit: Duration) {
    let started = Instant::now();
    let mut last = (u64::MAX, None);
    let mut since = Instant::now();
    while started.elapsed() < limit {
        let now = if index.join("quire.sqlite").exists() {
            generations(index)
        } else {
            (0, None)
        };
        if now != last {
            last = now;
            since = Instant::now();
        } else if since.elapsed() >= quiet
            && now.1 == Some(now.0)
            // No sync is running: its writer lock is free (taken and released at once).
            && quire_index::lock::WriterLock::acquire(index).is_ok()
        {
            return;
        }
        std::thread::sleep(Duration::from_millis(200));
    }
    panic!("the index did not settle within {limit:?}");
}

#[cfg(unix)]
#[test]
fn a_thousand_random_file_operations_under_watch_end_equal_to_a_fresh_build() {
    use std::os::unix::fs::symlink;
    let mut rng = Rng(seed() ^ 0x77);
    let dir = tempfile::tempdir().unwrap();
    let vault = dir.path().join("vault");
    support::copy_tree(&corpora().join("vaults/obsidian-tasks-demo"), &vault);
    let outside = dir.path().join("outside");
    fs::create_dir_all(&outside).unwrap();
    fs::write(outside.join("Out.md"), "# Out\n\noutside words\n").unwrap();
    let index = dir.path().join("index");
    let mut watch = quire(&vault, &index)
        .args(["watch", "--debounce-ms", "300"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    wait_settled(&index, Duration::from_secs(2), Duration::from_secs(120));

    let folders = ["w0", "w1", "w2/deep", "w3"];
    for f in folders {
        fs::create_dir_all(vault.join(f)).unwrap();
    }
    let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
    let mut next = 0usize;
    for op in 0..1000 {
        let mut notes = walk_md(&vault);
        notes.sort();
        let pick = |rng: &mut Rng, notes: &[PathBuf]| notes[rng.below(notes.len())].clone();
        let kind = match rng.below(100) {
            0..=24 => "create",
            25..=49 => "edit",
            50..=61 => "rename",
            62..=71 => "delete",
            72..=77 => "folder_move",
            78..=82 => "fifo",
            83..=88 => "symlink_in",
            89..=92 => "symlink_out",
            93..=95 => "symlink_loop",
            _ => "remove_special",
        };
        let folder = vault.join(folders[rng.below(folders.len())]);
        fs::create_dir_all(&folder).unwrap();
        let done = match kind {
            "create" => {
                next += 1;
                fs::write(
                    folder.join(format!("New {next}.md")),
                    note_text(&mut rng, next),
                )
                .is_ok()
            }
            "edit" if !notes.is_empty() => {
                let note = pick(&mut rng, &notes);
                fs::write(&note, note_text(&mut rng, op)).is_ok()
            }
            "rename" if !notes.is_empty() => {
                let note = pick(&mut rng, &notes);
                next += 1;
                fs::rename(&note, folder.join(format!("Renamed {next}.md"))).is_ok()
            }
            "delete" if !notes.is_empty() => fs::remove_file(pick(&mut rng, &notes)).is_ok(),
            "folder_move" => {
                let from = vault.join(folders[rng.below(folders.len())]);
                next += 1;
                let to = vault.join(format!("moved{next}"));
                let moved = fs::rename(&from, &to).is_ok();
                fs::create_dir_all(&from).unwrap();
                moved
            }
            "fifo" => {
                next += 1;
                Command::new("mkfifo")
                    .arg(folder.join(format!("Pipe {next}.md")))
                    .status()
                    .is_ok_and(|s| s.success())
            }
            "symlink_in" if !notes.is_empty() => {
                next += 1;
                symlink(
                    pick(&mut rng, &notes),
                    folder.join(format!("Alias {next}.md")),
                )
                .is_ok()
            }
            "symlink_out" => {
                next += 1;
                symlink(
                    outside.join("Out.md"),
                    folder.join(format!("Out {next}.md")),
                )
                .is_ok()
            }
            "symlink_loop" => {
                next += 1;
                let a = folder.join(format!("LoopA {next}.md"));
                let b = folder.join(format!("LoopB {next}.md"));
                symlink(&b, &a).is_ok() && symlink(&a, &b).is_ok()
            }
            "remove_special" => {
                let special: Vec<PathBuf> = walk_all(&vault)
                    .into_iter()
                    .filter(|p| fs::symlink_metadata(p).is_ok_and(|m| !m.is_file() && !m.is_dir()))
                    .collect();
                !special.is_empty() && fs::remove_file(&special[rng.below(special.len())]).is_ok()
            }
            _ => false,
        };
        if done {
            *counts.entry(kind).or_default() += 1;
        }
        // Bursts with pauses, so syncs run while operations go on.
        if op % 50 == 49 {
            std::thread::sleep(Duration::from_millis(400));
        }
    }
    // One last change in a folder that was never moved, so a sync surely runs after all of them.
    std::thread::sleep(Duration::from_millis(500));
    fs::write(vault.join("Final.md"), "# Final\n\nthe last write\n").unwrap();
    wait_settled(&index, Duration::from_secs(3), Duration::from_secs(180));
    watch.kill().ok();
    watch.wait().unwrap();
    let fresh = dir.path().join("fresh");
    fresh_index(&vault, &fresh);
    let (watched, built) = (digest(&index), digest(&fresh));
    assert_eq!(watched.notes, built.notes);
    assert_eq!(watched.chunks, built.chunks);
    assert_eq!(watched.skipped, built.skipped);
    let total: usize = counts.values().sum();
    assert!(
        total >= 900,
        "only {total} operations took effect: {counts:?}"
    );
    eprintln!("operations: {counts:?}");
}

/// Every entry under `dir`, links not followed, hidden folders included.
fn walk_all(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    if let Ok(entries) = fs::read_dir(dir) {
        for entry in entries.flatten() {
            let path = entry.path();
            if entry.file_type().is_ok_and(|k| k.is_dir()) {
                out.extend(walk_all(&path));
            }
            out.push(path);
        }
    }
    out
}

#[cfg(unix)]
#[test]
fn draft_insert_into_a_note_that_is_a_link_is_refused_and_the_link_kept() {
    let dir = tempfile::tempdir().unwrap();
    let vault = dir.path().join("vault");
    support::copy_tree(&support::sample_vault(), &vault);
    let target = vault.join("Projects/Sourdough Experiment.md");
    let original = fs::read(&target).unwrap();
    std::os::unix::fs::symlink(&target, vault.join("Alias.md")).unwrap();
    let index = dir.path().join("index");
    fresh_index(&vault, &index);
    let server = support::FakeChat::start(vec![support::answer(&["Drafted text [S1]."])]);
    let out = quire(&vault, &index)
        .env("QUIRE_LLM_BASE_URL", &server.url)
        .env("QUIRE_LLM_MODEL", "fake-model")
        .args(["draft", "Alias", "--heading", "## More", "--insert"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("is a symbolic link"), "{stderr}");
    assert!(
        fs::symlink_metadata(vault.join("Alias.md"))
            .unwrap()
            .file_type()
            .is_symlink(),
        "the link was replaced by a file"
    );
    assert_eq!(fs::read(&target).unwrap(), original);
    // No temporary file is left beside the note.
    let leftovers: Vec<_> = fs::read_dir(&vault)
        .unwrap()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().contains("quire"))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
}

#[test]
fn a_sync_that_does_not_finish_is_reported_while_it_runs() {
    let dir = tempfile::tempdir().unwrap();
    let vault = dir.path().join("vault");
    support::copy_tree(&support::sample_vault(), &vault);
    let index = dir.path().join("index");
    // The sync sleeps 5 s after its scan; the watcher reports a sync running past 1 s.
    let mut watch = quire(&vault, &index)
        .env("QUIRE_FAILPOINT", "stall_after_scan")
        .env("QUIRE_WATCH_STALL_MS", "1000")
        .arg("watch")
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let stderr = watch.stderr.take().unwrap();
    let lines = std::thread::spawn(move || {
        use std::io::BufRead;
        let mut seen = Vec::new();
        for line in std::io::BufReader::new(stderr)
            .lines()
            .map_while(Result::ok)
        {
            let done = line.contains("generation 1");
            seen.push(line);
            if done {
                break;
            }
        }
        seen
    });
    let started = Instant::now();
    while !lines.is_finished() && started.elapsed() < Duration::from_secs(60) {
        std::thread::sleep(Duration::from_millis(100));
    }
    watch.kill().ok();
    watch.wait().unwrap();
    let seen = lines.join().unwrap();
    let stalls: Vec<&String> = seen
        .iter()
        .filter(|l| l.contains("has been running for") && l.contains("has not finished"))
        .collect();
    assert!(stalls.len() >= 2, "{seen:#?}");
    // …and the sync, once it ends, is reported as done.
    assert!(seen.last().unwrap().contains("generation 1"), "{seen:#?}");
}

/// Vector search results: (path, score) per note, best first.
fn vector(vault: &Path, index: &Path, query: &str, min_rows: &str) -> Vec<(String, f64)> {
    ranked(
        with_model(vault, index)
            .env("QUIRE_ANN_MIN_ROWS", min_rows)
            .args(["--json", "search", query, "--mode", "vector", "-k", "8"]),
    )
}

/// `quire` with multilingual-e5-small (fetched by scripts/fetch-model.sh): the fast model, enough
/// for what these tests check (the approximate index against exact search).
fn with_model(vault: &Path, index: &Path) -> Command {
    let mut c = quire(vault, index);
    c.env("QUIRE_MODEL", quire_embed::default_e5_path());
    c
}

/// `quire --json index` with an approximate index past 10 vectors: the sync's stats.
fn index_with_ann(vault: &Path, index: &Path) -> Value {
    json(
        &with_model(vault, index)
            .env("QUIRE_ANN_MIN_ROWS", "10")
            .args(["--json", "index"])
            .output()
            .unwrap(),
    )
}

/// The files of `<index>/ann/`, sorted.
fn ann_files(index: &Path) -> Vec<String> {
    let mut names: Vec<String> = fs::read_dir(index.join("ann"))
        .map(|entries| {
            entries
                .filter_map(Result::ok)
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    names
}

#[test]
fn a_sync_killed_while_writing_the_approximate_index_leaves_a_searchable_index() {
    let dir = tempfile::tempdir().unwrap();
    let vault = dir.path().join("vault");
    support::copy_tree(&support::sample_vault(), &vault);
    let index = dir.path().join("index");
    let exact_index = dir.path().join("exact");
    // The reference: the same vault with vectors searched exactly (no approximate index).
    ok(&with_model(&vault, &exact_index)
        .env("QUIRE_ANN_MIN_ROWS", "1000000000")
        .arg("index")
        .output()
        .unwrap());
    assert!(ann_files(&exact_index).is_empty());
    let queries = [
        "keeping a sourdough starter alive",
        "what to pack for a trip",
        "how do I plan my week",
    ];
    let expected: Vec<Vec<String>> = queries
        .iter()
        .map(|q| {
            vector(&vault, &exact_index, q, "1000000000")
                .into_iter()
                .map(|(p, _)| p)
                .collect()
        })
        .collect();
    assert!(expected.iter().all(|r| r.len() >= 3), "{expected:?}");

    // The first sync that builds the approximate index is killed after writing it, before the
    // rename that publishes it.
    let out = with_model(&vault, &index)
        .env("QUIRE_ANN_MIN_ROWS", "10")
        .env("QUIRE_FAILPOINT", "ann_before_rename")
        .arg("index")
        .output()
        .unwrap();
    assert!(!out.status.success(), "the failpoint aborts the process");
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("failpoint ann_before_rename"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let left = ann_files(&index);
    assert!(
        !left.is_empty()
            && left
                .iter()
                .all(|n| n.starts_with('.') && n.ends_with(".tmp")),
        "only the unpublished build is on disk: {left:?}"
    );
    let status = json(
        &with_model(&vault, &index)
            .args(["--json", "status"])
            .output()
            .unwrap(),
    );
    assert_eq!(status["consistent"], true, "{status}");
    // Searches scan exactly meanwhile and find what the reference finds.
    for (q, want) in queries.iter().zip(&expected) {
        let got: Vec<String> = vector(&vault, &index, q, "10")
            .into_iter()
            .map(|(p, _)| p)
            .collect();
        assert_eq!(&got, want, "{q}");
    }

    // The next sync publishes a build and removes the leftover; searches through it agree.
    let stats = index_with_ann(&vault, &index);
    assert_eq!(stats["ann"]["action"], "built", "{stats}");
    let files = ann_files(&index);
    assert_eq!(files.len(), 1, "{files:?}");
    assert!(files[0].ends_with(".usearch"), "{files:?}");
    // Through the graph (approximate: the best note and 90% of the exact top notes, each with
    // its exact score, as candidates are rescored from the stored vectors).
    let (mut found, mut total) = (0, 0);
    for q in &queries {
        let got = vector(&vault, &index, q, "10");
        let reference = vector(&vault, &exact_index, q, "1000000000");
        // The best note, or one whose exact score ties with the best's (within 0.005): the
        // graph may order a near tie either way, never a clearly worse note first.
        let (best, best_score) = reference.first().unwrap();
        let (top, _) = got.first().unwrap();
        let top_exact = reference
            .iter()
            .find(|(p, _)| p == top)
            .map_or(f64::MIN, |(_, s)| *s);
        assert!(
            top == best || best_score - top_exact < 0.005,
            "{q}: {top} ({top_exact}) first, exact best {best} ({best_score})"
        );
        for (path, score) in &reference {
            total += 1;
            if let Some((_, s)) = got.iter().find(|(p, _)| p == path) {
                found += 1;
                assert!((s - score).abs() < 1e-4, "{q}: {path} {s} vs exact {score}");
            }
        }
    }
    assert!(
        found * 10 >= total * 9,
        "{found} of {total} exact results found"
    );
    // A second sync with nothing new keeps the build.
    let stats = index_with_ann(&vault, &index);
    assert_eq!(stats["ann"]["action"], "kept", "{stats}");
    assert_eq!(ann_files(&index), files);
}
