//! `quire proposals` and `draft --propose/--insert` end to end: the real binary on a copy of the
//! sample vault. Nothing is written until a proposal is applied (every file of the vault hashed
//! before and after), a changed note is refused by name, and an apply killed with SIGKILL
//! between two files is finished by the next `quire proposals`.

#![allow(clippy::unwrap_used)] // tests stop at the first surprise

use quire_testkit as support;

use std::process::{Output, Stdio};
use std::time::{Duration, Instant};

use quire_app::proposals::{ChangeRequest, NewProposal, ProposalStore, Status};
use support::{FakeChat, answer, json, ok};

const EXPERIMENT: &str = "Projects/Sourdough Experiment.md";
const STARTER: &str = "Resources/Sourdough Starter.md";

struct Setup(support::SampleVault);

impl std::ops::Deref for Setup {
    type Target = support::SampleVault;
    fn deref(&self) -> &support::SampleVault {
        &self.0
    }
}

fn setup() -> Setup {
    Setup(support::SampleVault::indexed(env!("CARGO_BIN_EXE_quire")))
}

impl Setup {
    fn run(&self, args: &[&str]) -> Output {
        self.quire(None).args(args).output().unwrap()
    }

    fn store(&self) -> ProposalStore {
        ProposalStore::open(&self.index, &self.vault).unwrap()
    }
}

fn failed(out: &Output) -> String {
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[test]
fn a_proposed_draft_is_listed_shown_and_written_only_when_applied() {
    let setup = setup();
    let original = std::fs::read_to_string(setup.vault.join(EXPERIMENT)).unwrap();
    let before = support::file_hashes(&setup.vault);
    let server = FakeChat::start(vec![answer(&["Feed it at 1:5:5 [S1]."])]);
    let out = ok(&setup
        .quire(Some(&server))
        .args(["draft", EXPERIMENT, "--heading", "## Setup", "--propose"])
        .output()
        .unwrap());
    assert!(
        out.contains("proposed under “Setup” at Projects/Sourdough Experiment.md:"),
        "{out}"
    );
    assert_eq!(
        support::file_hashes(&setup.vault),
        before,
        "--propose wrote into the vault"
    );

    let listed = json(&setup.run(&["--json", "proposals"]));
    let rows = listed.as_array().unwrap();
    assert_eq!(rows.len(), 1, "{listed}");
    let id = rows[0]["id"].as_str().unwrap().to_string();
    assert_eq!(rows[0]["status"], "pending");
    assert_eq!(rows[0]["files"], serde_json::json!([EXPERIMENT]));
    assert!(out.contains(&id));

    let shown = ok(&setup.run(&["proposals", "show", &id]));
    assert!(
        shown.contains(&format!("--- a/{EXPERIMENT}\n+++ b/{EXPERIMENT}\n")),
        "{shown}"
    );
    assert!(shown.contains("\n+Feed it at 1:5:5 [["), "{shown}");
    assert!(
        !shown.contains('\x1b'),
        "no colour when stdout is not a terminal"
    );
    assert!(shown.contains("made by: quire draft"), "{shown}");

    let applied = ok(&setup.run(&["proposals", "apply", &id]));
    assert!(applied.contains(&format!("applied {id}")), "{applied}");
    let now = std::fs::read_to_string(setup.vault.join(EXPERIMENT)).unwrap();
    let setup_at = now.find("## Setup").unwrap();
    let draft_at = now.find("Feed it at 1:5:5 [[").unwrap();
    let results_at = now.find("## Results").unwrap();
    assert!(setup_at < draft_at && draft_at < results_at, "{now}");
    let backup = setup.index.join("backups").join(&id).join(EXPERIMENT);
    assert_eq!(std::fs::read_to_string(backup).unwrap(), original);
    let after = support::file_hashes(&setup.vault);
    let changed: Vec<_> = after
        .keys()
        .filter(|k| before.get(*k) != after.get(*k))
        .collect();
    assert_eq!(changed, [EXPERIMENT]);

    // Applied is final: not again, not rejected; the list of pending ones is empty.
    assert!(failed(&setup.run(&["proposals", "apply", &id])).contains("is applied"));
    assert!(failed(&setup.run(&["proposals", "reject", &id])).contains("is applied"));
    assert!(ok(&setup.run(&["proposals"])).starts_with("no pending proposals"));
    assert_eq!(
        json(&setup.run(&["--json", "proposals", "list", "--all"]))
            .as_array()
            .unwrap()
            .len(),
        1
    );
    assert!(failed(&setup.run(&["proposals", "show", "../../etc/passwd"])).contains("no proposal"));

    // A proposal file cut short by hand: the list still answers, with the others, and names it.
    let broken = setup.index.join("proposals").join(format!("{id}.json"));
    let text = std::fs::read_to_string(&broken).unwrap();
    std::fs::write(&broken, &text[..text.len() / 2]).unwrap();
    let out = setup.run(&["--json", "proposals", "list", "--all"]);
    assert!(out.status.success(), "{out:?}");
    assert_eq!(json(&out).as_array().unwrap().len(), 0);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains(&format!("skipped proposal {id}")),
        "{stderr}"
    );
}

#[test]
fn a_note_changed_after_the_proposal_is_refused_by_name_and_a_rejected_one_writes_nothing() {
    let setup = setup();
    let server = FakeChat::start(vec![
        answer(&["First draft [S1]."]),
        answer(&["Second draft [S1]."]),
    ]);
    for _ in 0..2 {
        ok(&setup
            .quire(Some(&server))
            .args(["draft", EXPERIMENT, "--heading", "Next", "--propose"])
            .output()
            .unwrap());
    }
    let rows = json(&setup.run(&["--json", "proposals"]));
    let ids: Vec<String> = rows
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["id"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(ids.len(), 2);
    // The user edits the note in Obsidian.
    support::edit_file(&setup.vault.join(EXPERIMENT), "## Next", "## Next steps");
    let before = support::file_hashes(&setup.vault);
    let err = failed(&setup.run(&["proposals", "apply", &ids[0]]));
    assert!(
        err.contains(&format!("{EXPERIMENT} changed since proposal")),
        "{err}"
    );
    assert!(err.contains("nothing was written"), "{err}");
    let rejected = ok(&setup.run(&["proposals", "reject", &ids[1]]));
    assert!(rejected.contains("nothing was written"), "{rejected}");
    assert_eq!(support::file_hashes(&setup.vault), before);
    // A refused apply makes no backup: the hashes are checked first.
    assert!(!setup.index.join("backups").join(&ids[0]).exists());
}

#[test]
fn an_apply_killed_between_two_files_is_finished_by_the_next_open() {
    let setup = setup();
    let originals: Vec<(String, String)> = [EXPERIMENT, STARTER]
        .iter()
        .map(|p| {
            (
                p.to_string(),
                std::fs::read_to_string(setup.vault.join(p)).unwrap(),
            )
        })
        .collect();
    let proposal = setup
        .store()
        .create(NewProposal {
            title: "Three files".into(),
            command: "test".into(),
            sources: Vec::new(),
            changes: vec![
                ChangeRequest::Replace {
                    path: EXPERIMENT.into(),
                    base: None,
                    content: format!("{}\nFirst change.\n", originals[0].1),
                },
                ChangeRequest::Replace {
                    path: STARTER.into(),
                    base: None,
                    content: format!("{}\nSecond change.\n", originals[1].1),
                },
                ChangeRequest::Create {
                    path: "Projects/New plan.md".into(),
                    content: "# New plan\n".into(),
                },
            ],
        })
        .unwrap();

    let mut child = setup
        .quire(None)
        .args(["proposals", "apply", &proposal.id])
        .env("QUIRE_TEST_APPLY_PAUSE_MS", "2000")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    // Wait for the first file to be written, then SIGKILL.
    let started = Instant::now();
    while std::fs::read_to_string(setup.vault.join(EXPERIMENT)).unwrap() == originals[0].1 {
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "the apply never started"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    child.kill().unwrap();
    child.wait().unwrap();
    // Midway: the first file is new, the second still old, the third missing.
    assert!(
        std::fs::read_to_string(setup.vault.join(EXPERIMENT))
            .unwrap()
            .ends_with("First change.\n")
    );
    assert_eq!(
        std::fs::read_to_string(setup.vault.join(STARTER)).unwrap(),
        originals[1].1
    );
    assert!(!setup.vault.join("Projects/New plan.md").exists());
    assert_eq!(setup.store_status_without_recovery(&proposal.id), "pending");

    let out = setup.run(&["proposals", "list", "--all"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("finished from its journal"), "{stderr}");
    assert!(ok(&out).contains("applied"));
    assert!(
        std::fs::read_to_string(setup.vault.join(EXPERIMENT))
            .unwrap()
            .ends_with("First change.\n")
    );
    assert!(
        std::fs::read_to_string(setup.vault.join(STARTER))
            .unwrap()
            .ends_with("Second change.\n")
    );
    assert_eq!(
        std::fs::read_to_string(setup.vault.join("Projects/New plan.md")).unwrap(),
        "# New plan\n"
    );
    assert_eq!(
        setup.store().get(&proposal.id).unwrap().status,
        Status::Applied
    );
    // No staged file is left in the vault, and the backups hold the original bytes.
    assert!(
        support::file_hashes(&setup.vault)
            .keys()
            .all(|p| !p.contains(".quire-stage"))
    );
    for (path, text) in &originals {
        let backup = setup.index.join("backups").join(&proposal.id).join(path);
        assert_eq!(&std::fs::read_to_string(backup).unwrap(), text);
    }
}

impl Setup {
    /// The proposal's stored status, read from its file (opening the store would recover it).
    fn store_status_without_recovery(&self, id: &str) -> String {
        let text = std::fs::read_to_string(self.index.join("proposals").join(format!("{id}.json")))
            .unwrap();
        let value: serde_json::Value = serde_json::from_str(&text).unwrap();
        value["status"].as_str().unwrap().to_string()
    }
}
