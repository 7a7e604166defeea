//! `quire audit` end to end: the report agrees with `quire manifest`, the canvas goes outside the
//! vault as a file and inside it as a proposal, and the vault's bytes never change unless that
//! proposal is applied.

#![allow(clippy::unwrap_used)] // tests stop at the first surprise

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use quire_testkit::{copy_tree, corpora, json, ok, sample_vault};
use serde_json::Value;

struct Fixture {
    _dir: tempfile::TempDir,
    vault: PathBuf,
    index: PathBuf,
    outside: PathBuf,
}

fn fixture(source: &Path) -> Fixture {
    let dir = tempfile::tempdir().unwrap();
    let vault = dir.path().join("vault");
    copy_tree(source, &vault);
    let outside = dir.path().join("out");
    std::fs::create_dir(&outside).unwrap();
    Fixture {
        vault: vault.canonicalize().unwrap(),
        index: dir.path().join("index"),
        outside,
        _dir: dir,
    }
}

fn quire(f: &Fixture) -> Command {
    quire_testkit::quire(env!("CARGO_BIN_EXE_quire"), &f.vault, &f.index)
}

/// Every file under `dir` with its bytes.
fn snapshot(dir: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    let mut files = BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(folder) = stack.pop() {
        for entry in std::fs::read_dir(&folder).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
            } else {
                files.insert(path.clone(), std::fs::read(&path).unwrap());
            }
        }
    }
    files
}

#[test]
fn the_json_report_agrees_with_the_manifest_on_a_shared_vault() {
    let f = fixture(&corpora().join("vaults/kepano-obsidian"));
    let before = snapshot(&f.vault);
    let report = json(&quire(&f).args(["--json", "audit"]).output().unwrap());
    let manifest = json(&quire(&f).args(["--json", "manifest"]).output().unwrap());
    assert_eq!(report["summary"]["notes"], manifest["note_count"]);
    assert_eq!(report["orphans"], manifest["orphans"]);
    let unresolved: usize = manifest["notes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|row| row["unresolved_links"].as_array().unwrap().len())
        .sum();
    // The manifest lists each note's unresolved targets once; the audit every occurrence.
    let mut distinct = std::collections::BTreeSet::new();
    for link in report["unresolved_links"].as_array().unwrap() {
        distinct.insert((link["note"].clone().to_string(), link["target"].to_string()));
        assert!(link["line"].as_u64().unwrap() >= 1);
    }
    assert_eq!(distinct.len(), unresolved);
    assert_eq!(snapshot(&f.vault), before, "the audit changed the vault");
}

#[test]
fn the_markdown_report_and_a_canvas_outside_the_vault() {
    let f = fixture(&sample_vault());
    let before = snapshot(&f.vault);
    let target = f.outside.join("map.canvas");
    let out = quire(&f)
        .args(["audit", "--group", "component", "--canvas"])
        .arg(&target)
        .output()
        .unwrap();
    let text = ok(&out);
    assert!(text.starts_with("# Vault audit\n"), "{text}");
    for heading in [
        "## Folders",
        "## Tags",
        "## Orphans (1)",
        "## Unresolved links (4)",
        "## Hubs",
    ] {
        assert!(text.contains(heading), "{heading} missing");
    }
    assert!(text.contains("| `Home.md:51` | `Ideas for 2027` |"));
    assert!(String::from_utf8_lossy(&out.stderr).contains("canvas written to"));

    let canvas: Value = serde_json::from_slice(&std::fs::read(&target).unwrap()).unwrap();
    let nodes = canvas["nodes"].as_array().unwrap();
    let files: Vec<&Value> = nodes.iter().filter(|n| n["type"] == "file").collect();
    assert_eq!(files.len(), 47);
    for file in &files {
        assert!(f.vault.join(file["file"].as_str().unwrap()).is_file());
    }
    // The sample vault is one component and one orphan: one group of 46, one of 1.
    let labels: Vec<&str> = nodes
        .iter()
        .filter(|n| n["type"] == "group")
        .map(|n| n["label"].as_str().unwrap())
        .collect();
    assert_eq!(labels.len(), 2, "{labels:?}");
    assert!(labels[0].ends_with("(46 notes)"), "{labels:?}");
    assert_eq!(labels[1], "Notes without links (1)");
    assert_eq!(canvas["edges"].as_array().unwrap().len(), 153);
    assert_eq!(
        snapshot(&f.vault),
        before,
        "writing outside changed the vault"
    );

    // Not a .canvas file: refused, nothing written.
    let out = quire(&f)
        .args(["audit", "--canvas"])
        .arg(f.outside.join("map.json"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("not a .canvas file"));
    assert!(!f.outside.join("map.json").exists());
}

#[test]
fn a_canvas_inside_the_vault_is_a_proposal_until_applied() {
    let f = fixture(&sample_vault());
    let before = snapshot(&f.vault);
    let inside = f.vault.join("Maps/Vault.canvas");
    std::fs::create_dir(f.vault.join("Maps")).unwrap();
    let out = quire(&f)
        .args(["audit", "--canvas"])
        .arg(&inside)
        .output()
        .unwrap();
    ok(&out);
    let stderr = String::from_utf8_lossy(&out.stderr).to_string();
    assert!(stderr.contains("is a proposal"), "{stderr}");
    assert!(!inside.exists(), "the canvas was written into the vault");
    let mut after = snapshot(&f.vault);
    assert_eq!(after, before, "a proposal changed the vault");

    let id = stderr
        .split("quire proposals apply ")
        .nth(1)
        .and_then(|rest| rest.split('`').next())
        .unwrap()
        .to_string();
    let listed = json(&quire(&f).args(["--json", "proposals"]).output().unwrap());
    assert!(listed.to_string().contains(&id), "{listed}");

    // Applied, the file is the map the same command writes outside the vault (made before the
    // apply: once applied, the canvas is part of the vault and of its next map).
    let outside = f.outside.join("same.canvas");
    ok(&quire(&f)
        .args(["audit", "--canvas"])
        .arg(&outside)
        .output()
        .unwrap());
    ok(&quire(&f)
        .args(["proposals", "apply", &id])
        .output()
        .unwrap());
    assert_eq!(
        std::fs::read(&inside).unwrap(),
        std::fs::read(&outside).unwrap()
    );
    after.insert(inside.clone(), std::fs::read(&outside).unwrap());
    assert_eq!(
        snapshot(&f.vault),
        after,
        "applying wrote more than the canvas"
    );
}

#[test]
fn findings_are_an_inbox_that_remembers_dismissals_snoozes_and_what_is_new() {
    let f = fixture(&sample_vault());
    let before = snapshot(&f.vault);
    let run = |args: &[&str]| -> Value {
        json(
            &quire(&f)
                .args(["--json", "findings"])
                .args(args)
                .output()
                .unwrap(),
        )
    };
    let first = run(&[]);
    assert_eq!(first["first_run"], true);
    assert_eq!(first["new_since_last"], "");
    let findings = first["findings"].as_array().unwrap().clone();
    assert!(!findings.is_empty());
    // Each finding says what it is about, and where to open it.
    let orphan = findings
        .iter()
        .find(|f| f["kind"] == "orphan")
        .expect("the sample vault has an orphan note");
    assert!(orphan["path"].as_str().unwrap().ends_with(".md"));
    let dismissed = orphan["id"].as_str().unwrap().to_string();
    let snoozed = findings
        .iter()
        .find(|f| f["id"] != dismissed.as_str())
        .unwrap()["id"]
        .as_str()
        .unwrap()
        .to_string();
    ok(&quire(&f)
        .args(["findings", "dismiss", &dismissed])
        .output()
        .unwrap());
    let said = ok(&quire(&f)
        .args(["findings", "snooze", &snoozed, "--days", "3"])
        .output()
        .unwrap());
    assert!(said.contains("until"), "{said}");
    // A new note with a link to nowhere: new since the last run, by kind.
    std::fs::write(
        f.vault.join("Fresh.md"),
        "# Fresh\n\nSee [[Nowhere at all]] and [[Home]].\n",
    )
    .unwrap();
    let second = run(&[]);
    assert_eq!(second["first_run"], false);
    assert!(
        second["new_since_last"]
            .as_str()
            .unwrap()
            .contains("1 new unresolved link"),
        "{}",
        second["new_since_last"]
    );
    let ids: Vec<&str> = second["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["id"].as_str().unwrap())
        .collect();
    assert!(!ids.contains(&dismissed.as_str()) && !ids.contains(&snoozed.as_str()));
    assert_eq!(second["dismissed"], 1);
    assert_eq!(second["snoozed"].as_array().unwrap().len(), 1);
    let new: Vec<&Value> = second["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["new"] == true)
        .collect();
    assert!(
        new.iter()
            .any(|f| f["kind"] == "unresolved_link" && f["path"] == "Fresh.md" && f["line"] == 3)
    );
    // Fixed: the finding drops out by itself; the vault holds nothing of the inbox.
    std::fs::write(f.vault.join("Fresh.md"), "# Fresh\n\nSee [[Home]].\n").unwrap();
    let third = run(&[]);
    assert!(
        !third["findings"]
            .as_array()
            .unwrap()
            .iter()
            .any(|f| f["kind"] == "unresolved_link" && f["path"] == "Fresh.md")
    );
    let mut after = snapshot(&f.vault);
    after.remove(&f.vault.join("Fresh.md"));
    assert_eq!(after, before);
    // A bad id is refused, saying what an id is.
    let out = quire(&f)
        .args(["findings", "dismiss", "../x"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("16 hex digits"));
}
