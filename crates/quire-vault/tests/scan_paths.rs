//! `scan_paths` against the whole scan: for every file of a real vault, judged alone, the same
//! verdict (a note with its size and time, skipped with the same reason, or left out).

#![allow(clippy::unwrap_used)] // tests and benches stop at the first surprise

use std::path::Path;

use quire_vault::scan::scan_vault;
use quire_vault::{ScanOptions, scan_paths};

fn files(root: &Path, dir: &Path, out: &mut Vec<String>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let entry = entry.unwrap();
        let path = entry.path();
        if entry.file_type().unwrap().is_dir() {
            files(root, &path, out);
        } else {
            out.push(
                path.strip_prefix(root)
                    .unwrap()
                    .to_string_lossy()
                    .replace('\\', "/"),
            );
        }
    }
}

#[test]
fn every_file_judged_alone_gets_the_whole_scans_verdict() {
    let dir = tempfile::tempdir().unwrap();
    let vault = dir.path().join("vault");
    quire_testkit::copy_tree(
        &quire_testkit::corpora().join("vaults/obsidian-tasks-docs"),
        &vault,
    );
    std::fs::write(vault.join("Big note.md"), "word ".repeat(3_000)).unwrap();
    std::fs::create_dir_all(vault.join("node_modules/x")).unwrap();
    std::fs::write(vault.join("node_modules/x/readme.md"), "# x\n").unwrap();
    let options = ScanOptions {
        exclude: vec!["vault/Queries/**".into()],
        max_file_bytes: 10_000,
        ..ScanOptions::default()
    };
    let whole = scan_vault(&vault, &options).unwrap();
    let mut all = Vec::new();
    files(&vault, &vault, &mut all);
    all.push("Gone/Missing.md".into());
    let alone = scan_paths(&vault, &options, &all).unwrap().unwrap();
    let notes = |r: &quire_vault::ScanReport| -> Vec<(String, u64, u128)> {
        r.notes
            .iter()
            .map(|n| (n.path.clone(), n.size, n.mtime_ns))
            .collect()
    };
    assert!(whole.notes.len() > 50, "{}", whole.notes.len());
    assert_eq!(notes(&alone), notes(&whole));
    assert!(
        whole
            .skipped
            .iter()
            .any(|s| s.path.starts_with("vault/Queries/"))
            && whole.skipped.iter().any(|s| s.path == "Big note.md"),
        "{:?}",
        whole.skipped
    );
    assert_eq!(alone.skipped, whole.skipped);

    // What only the walk can judge.
    #[cfg(unix)]
    {
        std::os::unix::fs::symlink(vault.join("vault"), vault.join("Linked")).unwrap();
        let first = whole.notes[0].path.clone();
        for path in ["Linked/anything.md", "a/../b.md", "/etc/passwd.md", ""] {
            let verdict = scan_paths(&vault, &options, &[first.clone(), path.to_string()]).unwrap();
            assert!(verdict.is_none(), "{path}");
        }
    }
}
