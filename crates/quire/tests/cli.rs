//! The `quire` binary end to end, on the bundled sample vault and on vaults built with bad input.

#![allow(clippy::unwrap_used)] // tests and benches stop at the first surprise

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use quire_testkit::{copy_tree as copy_dir, sample_vault};
use serde_json::Value;

fn quire() -> Command {
    Command::new(env!("CARGO_BIN_EXE_quire"))
}

fn run(vault: &Path, args: &[&str]) -> Output {
    quire()
        .arg("--vault")
        .arg(vault)
        .args(args)
        .output()
        .expect("quire runs")
}

fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

fn json(out: &Output) -> Value {
    assert!(out.status.success(), "quire failed: {}", stderr(out));
    serde_json::from_slice(&out.stdout).expect("valid JSON on stdout")
}

fn assert_no_panic(out: &Output) {
    let err = stderr(out);
    assert!(!err.contains("panicked"), "quire panicked: {err}");
}

#[test]
fn outline_json_has_the_documented_shape() {
    let v = json(&run(
        &sample_vault(),
        &["--json", "outline", "Areas/Weekly Review.md"],
    ));
    assert_eq!(v["path"], "Areas/Weekly Review.md");
    let work = &v["headings"][1];
    assert_eq!(work["text"], "Work");
    assert_eq!(work["level"], 1);
    let wins = &work["children"][0];
    assert_eq!(wins["text"], "Wins");
    let line = wins["line"].as_u64().unwrap() as usize;
    let end = wins["end_line"].as_u64().unwrap() as usize;
    // The lines point at the real heading and stop before the next sibling.
    let text = fs::read_to_string(sample_vault().join("Areas/Weekly Review.md")).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines[line - 1], "## Wins");
    assert_eq!(lines[end], "## Loose ends");
}

#[test]
fn read_prints_exactly_the_requested_lines() {
    let path = sample_vault().join("Resources/Spaced Repetition.md");
    let text = fs::read_to_string(&path).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    let out = run(
        &sample_vault(),
        &["read", "Spaced Repetition", "--lines", "2-4"],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout(&out), format!("{}\n", lines[1..4].join("\n")));

    // --heading prints the heading's whole section.
    let outline = json(&run(
        &sample_vault(),
        &["--json", "outline", "Spaced Repetition"],
    ));
    let first_h2 = &outline["headings"][0]["children"][0];
    let (a, b) = (
        first_h2["line"].as_u64().unwrap() as usize,
        first_h2["end_line"].as_u64().unwrap() as usize,
    );
    let heading = first_h2["text"].as_str().unwrap();
    let out = run(
        &sample_vault(),
        &["read", "Spaced Repetition", "--heading", heading],
    );
    assert_eq!(stdout(&out), format!("{}\n", lines[a - 1..b].join("\n")));

    let bad = run(
        &sample_vault(),
        &["read", "Spaced Repetition", "--lines", "9-3"],
    );
    assert_eq!(bad.status.code(), Some(1));
    assert!(stderr(&bad).contains("bad line range"));
}

#[test]
fn links_resolve_aliases_and_report_unresolved() {
    let v = json(&run(
        &sample_vault(),
        &["--json", "links", "Areas/Learning Russian.md"],
    ));
    let srs = v["outgoing"]
        .as_array()
        .unwrap()
        .iter()
        .find(|l| l["target"] == "SRS")
        .expect("an [[SRS]] link");
    assert_eq!(srs["path"], "Resources/Spaced Repetition.md");
    let home = json(&run(&sample_vault(), &["--json", "links", "Home"]));
    let unresolved: Vec<&str> = home["unresolved"]
        .as_array()
        .unwrap()
        .iter()
        .map(|u| u["target"].as_str().unwrap())
        .collect();
    assert!(unresolved.contains(&"Ideas for 2027"), "{unresolved:?}");
    // The running MOC links to the home note, and Home is an index note for the notes it lists.
    let sleep = json(&run(&sample_vault(), &["--json", "links", "Sleep"]));
    assert!(
        sleep["moc_parents"]
            .as_array()
            .unwrap()
            .iter()
            .any(|m| m == "Home.md"),
        "{sleep}"
    );
}

#[test]
fn manifest_knows_orphans_daily_notes_and_broken_yaml() {
    let v = json(&run(&sample_vault(), &["--json", "manifest"]));
    let notes = v["notes"].as_array().unwrap();
    let find = |p: &str| {
        notes
            .iter()
            .find(|n| n["path"] == p)
            .unwrap_or_else(|| panic!("{p} missing"))
    };
    let loose = find("Resources/Loose thought.md");
    assert_eq!(loose["backlinks_count"], 0);
    assert_eq!(loose["links_out"].as_array().unwrap().len(), 0);
    let dailies = notes.iter().filter(|n| !n["daily_date"].is_null()).count();
    assert_eq!(dailies, 14);
    assert_eq!(find("Journal/2026-11-24.md")["daily_date"], "2026-11-24");
    assert_eq!(find("Home.md")["is_moc"], true);
    let scan = json(&run(&sample_vault(), &["--json", "scan"]));
    let warnings = scan["warnings"].as_array().unwrap();
    assert!(
        warnings
            .iter()
            .any(|w| w["path"] == "Resources/Podcast Queue.md"
                && w["message"].as_str().unwrap().contains("broken YAML"))
    );
    // The note with broken YAML still has its body parsed.
    let podcast = find("Resources/Podcast Queue.md");
    assert!(podcast["word_count"].as_u64().unwrap() > 20);
}

#[test]
fn chunks_list_ids_lines_and_hashes() {
    let v = json(&run(
        &sample_vault(),
        &["--json", "chunks", "Running Training"],
    ));
    let chunks = v["chunks"].as_array().unwrap();
    assert!(chunks.len() >= 3);
    let text = fs::read_to_string(sample_vault().join("Areas/Running Training.md")).unwrap();
    for c in chunks {
        assert_eq!(c["id"].as_str().unwrap().len(), 16);
        let range = c["byte_range"].clone();
        let (start, end) = (
            range["start"].as_u64().unwrap() as usize,
            range["end"].as_u64().unwrap() as usize,
        );
        let start_line = text[..start].matches('\n').count() + 1;
        assert_eq!(c["start_line"].as_u64().unwrap() as usize, start_line);
        assert!(end <= text.len());
    }
}

/// A vault with one of every kind of bad input.
fn bad_vault() -> (tempfile::TempDir, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let outside = tempfile::tempdir().unwrap();
    let v = dir.path();
    fs::write(
        v.join("good.md"),
        "# Good\n\nFine note with #tag and [[broken yaml]].\n",
    )
    .unwrap();
    fs::write(
        v.join("bad-utf8.md"),
        b"# Bad\nvalid line\n\xff\xfe invalid\n",
    )
    .unwrap();
    fs::write(v.join("binary.md"), b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR").unwrap();
    fs::write(v.join("huge.md"), "a".repeat(20 * 1024 * 1024)).unwrap();
    fs::write(
        v.join("broken yaml.md"),
        "---\ntags: [a, b\ntitle: x\n---\n# Still parsed\n#body-tag\n",
    )
    .unwrap();
    fs::write(
        v.join("fence.md"),
        "# Fence\n```rust\nfn main() {}\n# not a heading\n",
    )
    .unwrap();
    fs::write(outside.path().join("secret.md"), "# Secret\n").unwrap();
    std::os::unix::fs::symlink(".", v.join("loop")).unwrap();
    std::os::unix::fs::symlink(outside.path(), v.join("out")).unwrap();
    std::os::unix::fs::symlink(outside.path().join("secret.md"), v.join("secret-link.md")).unwrap();
    fs::write(v.join("unreadable.md"), "# Hidden\n").unwrap();
    use std::os::unix::fs::PermissionsExt;
    fs::set_permissions(v.join("unreadable.md"), fs::Permissions::from_mode(0o000)).unwrap();
    // Readable by an unprivileged user (the test drops root for the unreadable file to count).
    fs::set_permissions(v, fs::Permissions::from_mode(0o755)).unwrap();
    fs::set_permissions(outside.path(), fs::Permissions::from_mode(0o755)).unwrap();
    (dir, outside)
}

/// Runs quire as an unprivileged user when we are root, since root reads any file.
fn run_unprivileged(vault: &Path, args: &[&str]) -> Output {
    let is_root = Command::new("id")
        .arg("-u")
        .output()
        .map(|o| o.stdout == b"0\n")
        .unwrap_or(false);
    if is_root {
        Command::new("setpriv")
            .args(["--reuid=65534", "--regid=65534", "--clear-groups", "--"])
            .arg(env!("CARGO_BIN_EXE_quire"))
            .arg("--vault")
            .arg(vault)
            .args(args)
            .output()
            .expect("setpriv runs")
    } else {
        run(vault, args)
    }
}

#[test]
fn bad_input_is_skipped_with_a_reason_never_a_panic() {
    let (dir, _outside) = bad_vault();
    let out = run_unprivileged(dir.path(), &["--json", "scan"]);
    assert_no_panic(&out);
    let v = json(&out);
    let reasons = quire_testkit::skip_reasons(&v);
    let expect = [
        ("bad-utf8.md", "not_utf8"),
        ("binary.md", "binary"),
        ("huge.md", "too_large"),
        ("loop", "symlink_loop"),
        ("out", "symlink_outside_vault"),
        ("secret-link.md", "symlink_outside_vault"),
        ("unreadable.md", "unreadable"),
    ];
    for (path, kind) in expect {
        assert_eq!(
            reasons.get(path).map(String::as_str),
            Some(kind),
            "{path}: {reasons:?}"
        );
    }
    assert_eq!(v["notes"], 3, "good, broken yaml, fence");
    let messages: Vec<&str> = v["skipped"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["message"].as_str().unwrap())
        .collect();
    assert!(
        messages
            .iter()
            .any(|m| m.contains("not valid UTF-8 (line 3")),
        "{messages:?}"
    );
    assert!(
        messages
            .iter()
            .any(|m| m.contains("larger than the size cap (20.0 MiB > 5.0 MiB)")),
        "{messages:?}"
    );
    let warnings = v["warnings"].as_array().unwrap();
    assert!(warnings.iter().any(|w| w["path"] == "broken yaml.md"));
    assert!(warnings.iter().any(
        |w| w["path"] == "fence.md" && w["message"].as_str().unwrap().contains("unterminated")
    ));

    // Human output names each skipped file and why.
    let human = stdout(&run_unprivileged(dir.path(), &["scan"]));
    assert!(human.contains("skipped  binary.md: binary file"), "{human}");
}

#[test]
fn a_huge_single_line_note_is_parsed_and_chunked_up_to_the_chunk_cap() {
    let (dir, _outside) = bad_vault();
    let out = run(
        dir.path(),
        &["--json", "--max-file-mb", "30", "chunks", "huge"],
    );
    assert_no_panic(&out);
    let v = json(&out);
    let chunks = v["chunks"].as_array().unwrap();
    // 20 MiB of one letter: split into windows, all on line 1, covering the line in order from
    // its start, up to the cap on chunks per note (the rest is reported as not indexed).
    assert_eq!(chunks.len(), quire_vault::chunk::MAX_CHUNKS_PER_NOTE);
    assert_eq!(v["truncated"], true);
    let mut next = 0;
    for c in chunks {
        assert_eq!(c["start_line"], 1);
        assert_eq!(c["byte_range"]["start"].as_u64().unwrap(), next);
        next = c["byte_range"]["end"].as_u64().unwrap();
    }
    assert!(next > 1024 * 1024 && next < 20 * 1024 * 1024, "{next}");
}

#[test]
fn paths_that_leave_the_vault_are_refused() {
    let (dir, outside) = bad_vault();
    let secret = outside.path().join("secret.md");
    let cases: Vec<String> = vec![
        "../secret.md".into(),
        format!("{}", secret.display()),
        "out/secret.md".into(),
        "secret-link.md".into(),
        "sub/../../secret.md".into(),
    ];
    for arg in &cases {
        for cmd in ["read", "outline", "links", "chunks"] {
            let out = quire()
                .current_dir(dir.path())
                .args(["--vault", ".", cmd, arg])
                .output()
                .unwrap();
            assert_no_panic(&out);
            assert_eq!(out.status.code(), Some(1), "{cmd} {arg}: {}", stderr(&out));
            assert!(
                !stdout(&out).contains("Secret"),
                "{cmd} {arg} leaked the file"
            );
            let err = stderr(&out);
            assert!(
                err.contains("outside the vault") || err.contains("no note matches"),
                "{cmd} {arg}: {err}"
            );
        }
    }
}

#[test]
fn usage_errors_exit_2_and_missing_notes_exit_1() {
    let out = run(&sample_vault(), &["outline"]);
    assert_eq!(out.status.code(), Some(2));
    let out = run(&sample_vault(), &["outline", "No Such Note"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("no note matches `No Such Note`"));
    let out = quire()
        .args(["--vault", "/nonexistent/vault", "tree"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("cannot open vault"));
}

fn read_tree(dir: &Path) -> std::collections::BTreeMap<String, Vec<u8>> {
    let mut files = std::collections::BTreeMap::new();
    fn walk(base: &Path, dir: &Path, files: &mut std::collections::BTreeMap<String, Vec<u8>>) {
        for e in fs::read_dir(dir).unwrap() {
            let e = e.unwrap();
            if e.file_type().unwrap().is_dir() {
                walk(base, &e.path(), files);
            } else {
                let rel = e
                    .path()
                    .strip_prefix(base)
                    .unwrap()
                    .to_string_lossy()
                    .into_owned();
                files.insert(rel, fs::read(e.path()).unwrap());
            }
        }
    }
    walk(dir, dir, &mut files);
    files
}

#[test]
fn export_index_is_byte_identical_checkable_and_never_overwritten_from_an_older_state() {
    let work = tempfile::tempdir().unwrap();
    let a = work.path().join("a");
    copy_dir(&sample_vault(), &a);
    let out1 = work.path().join("out1");
    let out2 = work.path().join("out2");
    assert!(
        run(&a, &["export-index", out1.to_str().unwrap()])
            .status
            .success()
    );
    assert!(
        run(&a, &["export-index", out2.to_str().unwrap()])
            .status
            .success()
    );
    let (t1, t2) = (read_tree(&out1), read_tree(&out2));
    assert_eq!(t1, t2, "two exports of the same vault differ");
    assert!(t1.contains_key("outlines/Areas/Weekly Review.md.json"));
    let manifest: Value = serde_json::from_slice(&t1["manifest.json"]).unwrap();
    assert_eq!(manifest["note_count"], 47);
    // Sorted keys: "aliases" comes before "title" in every row.
    let text = String::from_utf8(t1["manifest.json"].clone()).unwrap();
    assert!(text.find("\"aliases\"").unwrap() < text.find("\"title\"").unwrap());

    // A copy elsewhere (other mtimes, other root) exports the same content files.
    let b = work.path().join("b");
    copy_dir(&sample_vault(), &b);
    let out3 = work.path().join("out3");
    assert!(
        run(&b, &["export-index", out3.to_str().unwrap()])
            .status
            .success()
    );
    let mut t3 = read_tree(&out3);
    let mut t1_content = t1.clone();
    t3.remove("state.json");
    t1_content.remove("state.json");
    assert_eq!(t1_content, t3);

    // --check: clean, then a changed and a new note → exit 3 with both listed.
    let check = run(&a, &["export-index", "--check", out1.to_str().unwrap()]);
    assert_eq!(check.status.code(), Some(0), "{}", stderr(&check));
    fs::write(a.join("Resources/Loose thought.md"), "changed\n").unwrap();
    fs::write(a.join("New note.md"), "# New\n").unwrap();
    let check = run(
        &a,
        &["--json", "export-index", "--check", out1.to_str().unwrap()],
    );
    assert_eq!(check.status.code(), Some(3));
    let v: Value = serde_json::from_slice(&check.stdout).unwrap();
    let stale: Vec<(String, String)> = v["stale"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            (
                s["path"].as_str().unwrap().to_string(),
                s["status"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    assert_eq!(
        stale,
        vec![
            ("New note.md".into(), "new".into()),
            ("Resources/Loose thought.md".into(), "changed".into())
        ]
    );

    // Vault `a` was just edited, so it is newer than `old` (a copy with its times set back).
    let old = work.path().join("old");
    copy_dir(&sample_vault(), &old);
    set_tree_mtime(
        &old,
        std::time::SystemTime::UNIX_EPOCH + std::time::Duration::from_secs(1_000_000_000),
    );
    let newer = run(&a, &["export-index", out1.to_str().unwrap()]);
    assert!(newer.status.success(), "{}", stderr(&newer));
    let before = read_tree(&out1);
    let refused = run(&old, &["export-index", out1.to_str().unwrap()]);
    assert_eq!(refused.status.code(), Some(1));
    assert!(
        stderr(&refused).contains("newer state of the vault"),
        "{}",
        stderr(&refused)
    );
    assert_eq!(read_tree(&out1), before, "a refused export changed files");
    let forced = run(&old, &["export-index", "--force", out1.to_str().unwrap()]);
    assert!(forced.status.success());
    assert!(
        !read_tree(&out1).contains_key("outlines/New note.md.json"),
        "stale outline left behind"
    );

    // A directory that is not an export is never written into.
    let foreign = work.path().join("foreign");
    fs::create_dir(&foreign).unwrap();
    fs::write(foreign.join("keep.txt"), "mine").unwrap();
    let out = run(&a, &["export-index", foreign.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(fs::read_dir(&foreign).unwrap().count(), 1);
}

fn set_tree_mtime(dir: &Path, time: std::time::SystemTime) {
    for e in fs::read_dir(dir).unwrap() {
        let e = e.unwrap();
        if e.file_type().unwrap().is_dir() {
            set_tree_mtime(&e.path(), time);
        } else {
            fs::File::options()
                .write(true)
                .open(e.path())
                .unwrap()
                .set_modified(time)
                .unwrap();
        }
    }
    fs::File::open(dir).unwrap().set_modified(time).unwrap();
}

#[test]
fn tree_json_lists_folders_and_notes_with_heading_counts() {
    let v = json(&run(&sample_vault(), &["--json", "tree"]));
    assert_eq!(v["kind"], "folder");
    assert_eq!(v["note_count"], 47);
    let journal = v["children"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == "Journal")
        .unwrap();
    assert_eq!(journal["note_count"], 14);
    let first = &journal["children"][0];
    assert_eq!(first["path"], "Journal/2026-11-16.md");
    assert!(first["heading_count"].as_u64().unwrap() >= 1);
}

#[test]
fn exclude_and_include_globs_and_the_config_file_decide_what_is_read() {
    let work = tempfile::tempdir().unwrap();
    let v = work.path().join("v");
    copy_dir(&sample_vault(), &v);
    let scan = json(&run(&v, &["--json", "--exclude", "Journal", "scan"]));
    assert_eq!(scan["notes"], 33);
    let skipped = scan["skipped"].as_array().unwrap();
    assert_eq!(skipped.len(), 14);
    assert!(
        skipped
            .iter()
            .all(|s| s["reason"]["kind"] == "excluded" && s["reason"]["pattern"] == "Journal")
    );

    fs::create_dir_all(v.join(".quire")).unwrap();
    fs::write(
        v.join(".quire/config.toml"),
        "[vault]\ninclude = [\"Languages/**\"]\n",
    )
    .unwrap();
    let scan = json(&run(&v, &["--json", "scan"]));
    assert_eq!(scan["notes"], 6);

    fs::write(
        v.join(".quire/config.toml"),
        "[vault]\ninclude = [\"Languages/**\"\n",
    )
    .unwrap();
    let out = run(&v, &["scan"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains(".quire/config.toml"),
        "{}",
        stderr(&out)
    );
    let bad_glob = run(&sample_vault(), &["--exclude", "a[", "scan"]);
    assert_eq!(bad_glob.status.code(), Some(1));
    assert!(stderr(&bad_glob).contains("invalid glob pattern `a[`"));
}

#[test]
fn manifest_lists_orphans() {
    let v = json(&run(&sample_vault(), &["--json", "manifest"]));
    let orphans: Vec<&str> = v["orphans"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| o.as_str().unwrap())
        .collect();
    assert!(
        orphans.contains(&"Resources/Loose thought.md"),
        "{orphans:?}"
    );
    assert!(!orphans.contains(&"Home.md"));
}

#[test]
fn a_note_name_resolves_in_the_vault_before_the_current_directory() {
    let dir = tempfile::tempdir().unwrap();
    let vault = dir.path().join("vault");
    fs::create_dir_all(&vault).unwrap();
    fs::write(vault.join("README.md"), "# Vault readme\n\n## Inside\n").unwrap();
    let elsewhere = dir.path().join("elsewhere");
    fs::create_dir_all(&elsewhere).unwrap();
    fs::write(elsewhere.join("README.md"), "# Another readme\n").unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_quire"))
        .current_dir(&elsewhere)
        .env("QUIRE_INDEX_DIR", dir.path().join("index"))
        .arg("--vault")
        .arg(&vault)
        .args(["outline", "README.md"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        text.contains("Vault readme") && text.contains("Inside"),
        "{text}"
    );
    // An absolute path to the file outside the vault is still refused.
    let out = Command::new(env!("CARGO_BIN_EXE_quire"))
        .current_dir(&elsewhere)
        .arg("--vault")
        .arg(&vault)
        .arg("outline")
        .arg(elsewhere.join("README.md"))
        .output()
        .unwrap();
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("outside the vault"), "{stderr}");
}

#[test]
fn similar_without_embeddings_says_why_without_a_wrong_flag() {
    let dir = tempfile::tempdir().unwrap();
    let vault = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../examples/vault");
    let index = dir.path().join("index");
    let quire = || {
        let mut c = Command::new(env!("CARGO_BIN_EXE_quire"));
        c.env("QUIRE_INDEX_DIR", &index).arg("--vault").arg(&vault);
        c
    };
    assert!(
        quire()
            .args(["--no-embeddings", "index"])
            .output()
            .unwrap()
            .status
            .success()
    );
    let out = quire()
        .args(["--no-embeddings", "similar", "Sourdough Starter"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("--no-embeddings loads no model"),
        "{stderr}"
    );
    assert!(
        !stderr.contains("--mode"),
        "similar has no --mode: {stderr}"
    );
}

#[test]
fn search_filters_by_properties_and_dates() {
    // The sample vault's notes carry `type`, `status` and `created`; its daily notes are dated
    // by their file names.
    let vault = sample_vault();
    let dir = tempfile::tempdir().unwrap();
    let index = dir.path().join("index");
    let quire = || quire_testkit::quire(env!("CARGO_BIN_EXE_quire"), &vault, &index);
    quire_testkit::ok(&quire().arg("index").output().unwrap());
    let paths = |args: &[&str]| -> Vec<String> {
        let v = quire_testkit::json(
            &quire()
                .args(["--json", "search"])
                .args(args)
                .output()
                .unwrap(),
        );
        v["results"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["path"].as_str().unwrap().to_string())
            .collect()
    };
    let projects = paths(&["project", "-k", "50", "--where", "type=project"]);
    assert!(projects.len() >= 4, "{projects:?}");
    for p in &projects {
        let text = fs::read_to_string(vault.join(p)).unwrap();
        assert!(text.contains("\ntype: project\n"), "{p} is not a project");
    }
    // Every project of the sample vault is active.
    let active = paths(&[
        "project",
        "-k",
        "50",
        "--where",
        "type=project",
        "--where",
        "status=active",
    ]);
    assert_eq!(active, projects);
    let inactive = paths(&[
        "project",
        "-k",
        "50",
        "--where",
        "type=project",
        "--where",
        "status!=active",
    ]);
    assert!(inactive.is_empty(), "{inactive:?}");
    let days = paths(&[
        "run",
        "-k",
        "50",
        "--since",
        "2026-11-20",
        "--until",
        "2026-11-22",
    ]);
    assert!(!days.is_empty());
    for p in &days {
        let day = p.trim_start_matches("Journal/").trim_end_matches(".md");
        assert!(
            p.starts_with("Journal/") && ("2026-11-20"..="2026-11-22").contains(&day),
            "{days:?}"
        );
    }
    let created = paths(&["notes", "-k", "50", "--where", "created>=2026-10-20"]);
    assert!(!created.is_empty());
    assert!(
        !created.contains(&"Areas/Writing Habits.md".to_string()),
        "{created:?}"
    );
    // Mistakes are refused with what is wrong.
    for (args, says) in [
        (vec!["x", "--where", "status"], "expected KEY=VALUE"),
        (vec!["x", "--since", "November"], "YYYY-MM-DD"),
    ] {
        let out = quire().arg("search").args(&args).output().unwrap();
        assert!(!out.status.success());
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.contains(says), "{args:?}: {stderr}");
    }
}
