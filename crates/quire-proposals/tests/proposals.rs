//! Proposals over a real vault copy: made, listed, applied (backups, atomic writes), refused when
//! a file changed, rejected, refused outside the vault; the vault's bytes checked around each.
#![allow(clippy::unwrap_used)]

use std::collections::BTreeMap;
use std::fs;
use std::path::Path;

use quire_proposals::{
    ApplyOptions, ChangeKind, ChangeRequest, NewProposal, ProposalError, ProposalStore, Status,
    sha256_hex,
};

const VAULT: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../../shared/corpora/vaults/obsidian-starter-vault"
);

/// Every file of the folder (hidden ones too) and its sha256.
fn snapshot(root: &Path) -> BTreeMap<String, String> {
    fn walk(root: &Path, dir: &Path, out: &mut BTreeMap<String, String>) {
        for entry in fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                walk(root, &path, out);
            } else {
                let rel = path.strip_prefix(root).unwrap().display().to_string();
                out.insert(rel, sha256_hex(&fs::read(&path).unwrap()));
            }
        }
    }
    let mut out = BTreeMap::new();
    walk(root, root, &mut out);
    out
}

fn copy_dir(from: &Path, to: &Path) {
    fs::create_dir_all(to).unwrap();
    for entry in fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            fs::copy(entry.path(), &target).unwrap();
        }
    }
}

struct Setup {
    _tmp: tempfile::TempDir,
    vault: std::path::PathBuf,
    index: std::path::PathBuf,
    store: ProposalStore,
}

fn setup() -> Setup {
    let tmp = tempfile::tempdir().unwrap();
    let vault = tmp.path().join("vault");
    copy_dir(Path::new(VAULT), &vault);
    let index = tmp.path().join("index");
    let store = ProposalStore::open(&index, &vault).unwrap();
    Setup {
        _tmp: tmp,
        vault,
        index,
        store,
    }
}

/// Some Markdown note of the vault and its text.
fn some_note(vault: &Path) -> (String, String) {
    let mut notes: Vec<_> = snapshot(vault)
        .into_keys()
        .filter(|p| p.ends_with(".md") && !p.starts_with('.'))
        .collect();
    notes.sort();
    let path = notes.into_iter().next().unwrap();
    let text = fs::read_to_string(vault.join(&path)).unwrap();
    (path, text)
}

fn proposal(changes: Vec<ChangeRequest>) -> NewProposal {
    NewProposal {
        title: "A test\nproposal".into(),
        command: "test".into(),
        sources: vec!["a source".into()],
        changes,
    }
}

#[test]
fn a_proposal_writes_nothing_until_applied_then_writes_all_and_keeps_backups() {
    let s = setup();
    let (path, original) = some_note(&s.vault);
    let before = snapshot(&s.vault);
    let made = s
        .store
        .create(proposal(vec![
            ChangeRequest::AppendUnderHeading {
                path: path.clone(),
                base: None,
                heading: "Added by a test".into(),
                level: 2,
                text: "A new line.".into(),
            },
            ChangeRequest::Create {
                path: "New folder/Fresh note.md".into(),
                content: "# Fresh\n\nBody.\n".into(),
            },
        ]))
        .unwrap();
    assert_eq!(
        snapshot(&s.vault),
        before,
        "making a proposal wrote into the vault"
    );
    assert_eq!(made.title, "A test proposal");
    assert_eq!(made.status, Status::Pending);
    assert_eq!(made.changes[0].kind, ChangeKind::Append);
    assert_eq!(
        made.changes[0].base_sha256.as_deref(),
        Some(before[&path].as_str())
    );
    let diff = made.diff();
    assert!(diff.contains(&format!("--- a/{path}")), "{diff}");
    assert!(diff.contains("+## Added by a test\n"), "{diff}");
    assert!(diff.contains("+A new line.\n"), "{diff}");
    assert!(
        diff.contains("--- /dev/null\n+++ b/New folder/Fresh note.md"),
        "{diff}"
    );

    // Survives a restart.
    let reopened = ProposalStore::open(&s.index, &s.vault).unwrap();
    let listed = reopened.list().unwrap();
    assert_eq!(listed.len(), 1);
    assert_eq!(listed[0].id, made.id);
    assert_eq!(
        listed[0].files,
        vec![path.clone(), "New folder/Fresh note.md".to_string()]
    );
    assert_eq!(
        listed[0].lines_added,
        made.diff()
            .lines()
            .filter(|l| l.starts_with('+') && !l.starts_with("+++"))
            .count()
    );

    let applied = reopened.apply(&made.id, &ApplyOptions::default()).unwrap();
    assert_eq!(applied.proposal.status, Status::Applied);
    let now = fs::read_to_string(s.vault.join(&path)).unwrap();
    assert_eq!(now, made.changes[0].content);
    assert!(
        now.starts_with(original.trim_end()),
        "the note's text was not kept before the addition"
    );
    assert!(
        now.ends_with("## Added by a test\n\nA new line.\n"),
        "{now:?}"
    );
    assert_eq!(
        fs::read_to_string(s.vault.join("New folder/Fresh note.md")).unwrap(),
        "# Fresh\n\nBody.\n"
    );
    // The backup restores the original bytes.
    assert_eq!(
        fs::read_to_string(applied.backup_dir.join(&path)).unwrap(),
        original
    );
    // Only the two files changed, and no staged or temporary file is left.
    let after = snapshot(&s.vault);
    let changed: Vec<_> = after
        .iter()
        .filter(|(p, h)| before.get(*p) != Some(*h))
        .map(|(p, _)| p.clone())
        .collect();
    assert_eq!(
        changed,
        vec!["New folder/Fresh note.md".to_string(), path.clone()]
    );
    assert_eq!(after.len(), before.len() + 1);
    // Applied once only.
    assert!(matches!(
        reopened.apply(&made.id, &ApplyOptions::default()),
        Err(ProposalError::NotPending { .. })
    ));
}

#[test]
fn a_file_changed_after_the_proposal_is_refused_by_name_and_nothing_is_written() {
    let s = setup();
    let (path, original) = some_note(&s.vault);
    let made = s
        .store
        .create(proposal(vec![
            ChangeRequest::Create {
                path: "Created first.md".into(),
                content: "x\n".into(),
            },
            ChangeRequest::Replace {
                path: path.clone(),
                base: Some(original.clone().into_bytes()),
                content: format!("{original}\nmore\n"),
            },
        ]))
        .unwrap();
    // The user edits the note meanwhile.
    fs::write(s.vault.join(&path), format!("{original}\nuser edit\n")).unwrap();
    let before = snapshot(&s.vault);
    let err = s
        .store
        .apply(&made.id, &ApplyOptions::default())
        .unwrap_err();
    assert!(
        matches!(&err, ProposalError::Changed { path: p, .. } if p == &path),
        "{err}"
    );
    assert!(err.to_string().contains("nothing was written"), "{err}");
    assert_eq!(
        snapshot(&s.vault),
        before,
        "a refused apply changed the vault"
    );
    assert_eq!(s.store.get(&made.id).unwrap().status, Status::Pending);

    // A proposal made from stale bytes is refused when made.
    let err = s
        .store
        .create(proposal(vec![ChangeRequest::Replace {
            path: path.clone(),
            base: Some(original.into_bytes()),
            content: "y".into(),
        }]))
        .unwrap_err();
    assert!(matches!(err, ProposalError::Changed { .. }), "{err}");
}

#[test]
fn reject_and_rename_and_paths_outside_the_vault() {
    let s = setup();
    let (path, original) = some_note(&s.vault);
    let made = s
        .store
        .create(proposal(vec![ChangeRequest::Rename {
            from: path.clone(),
            to: "Moved/Renamed.md".into(),
        }]))
        .unwrap();
    assert!(
        made.diff()
            .starts_with(&format!("rename from {path}\nrename to Moved/Renamed.md\n"))
    );
    let before = snapshot(&s.vault);
    let rejected = s.store.reject(&made.id).unwrap();
    assert_eq!(rejected.status, Status::Rejected);
    assert_eq!(snapshot(&s.vault), before);
    assert!(matches!(
        s.store.apply(&made.id, &ApplyOptions::default()),
        Err(ProposalError::NotPending { .. })
    ));

    let again = s
        .store
        .create(proposal(vec![ChangeRequest::Rename {
            from: path.clone(),
            to: "Moved/Renamed.md".into(),
        }]))
        .unwrap();
    s.store.apply(&again.id, &ApplyOptions::default()).unwrap();
    assert!(!s.vault.join(&path).exists());
    assert_eq!(
        fs::read_to_string(s.vault.join("Moved/Renamed.md")).unwrap(),
        original
    );

    for bad in [
        "../outside.md",
        "/etc/x.md",
        ".obsidian/app.json",
        "a//b.md",
        "C:/x.md",
    ] {
        let err = s
            .store
            .create(proposal(vec![ChangeRequest::Create {
                path: bad.into(),
                content: "x".into(),
            }]))
            .unwrap_err();
        assert!(
            matches!(err, ProposalError::BadChange { .. }),
            "{bad}: {err}"
        );
    }
    #[cfg(unix)]
    {
        let outside = s.vault.parent().unwrap().join("outside");
        fs::create_dir_all(&outside).unwrap();
        std::os::unix::fs::symlink(&outside, s.vault.join("link")).unwrap();
        let err = s
            .store
            .create(proposal(vec![ChangeRequest::Create {
                path: "link/escape.md".into(),
                content: "x".into(),
            }]))
            .unwrap_err();
        assert!(err.to_string().contains("symbolic link"), "{err}");
        assert_eq!(fs::read_dir(&outside).unwrap().count(), 0);
    }
    let err = s
        .store
        .create(proposal(vec![ChangeRequest::Create {
            path: "Moved/Renamed.md".into(),
            content: "x".into(),
        }]))
        .unwrap_err();
    assert!(matches!(err, ProposalError::Exists { .. }), "{err}");
    assert!(matches!(
        s.store.get("../../secrets"),
        Err(ProposalError::NotFound(_))
    ));
}

/// The stored file of a proposal, as JSON, to edit as someone with access to the index would.
fn stored(s: &Setup, id: &str) -> (std::path::PathBuf, serde_json::Value) {
    let path = s.index.join("proposals").join(format!("{id}.json"));
    let json = serde_json::from_slice(&fs::read(&path).unwrap()).unwrap();
    (path, json)
}

/// A pending proposal adding `text` at the end of the note at `path`.
fn append_at_end(s: &Setup, path: &str, text: &str) -> quire_proposals::Proposal {
    s.store
        .create(proposal(vec![ChangeRequest::AppendUnderHeading {
            path: path.to_string(),
            base: None,
            heading: String::new(),
            level: 2,
            text: text.into(),
        }]))
        .unwrap()
}

#[test]
fn an_edited_proposal_file_is_never_applied_and_an_id_never_names_a_path() {
    let s = setup();
    let (path, _) = some_note(&s.vault);
    let made = append_at_end(&s, &path, "a benign line");
    let before = snapshot(&s.vault);

    // Content swapped and its hash updated to match: the diff still shows the benign line.
    let (file, mut json) = stored(&s, &made.id);
    let evil = "everything replaced\n";
    json["changes"][0]["content"] = evil.into();
    json["changes"][0]["new_sha256"] = sha256_hex(evil.as_bytes()).into();
    fs::write(&file, serde_json::to_vec(&json).unwrap()).unwrap();
    let err = s
        .store
        .apply(&made.id, &ApplyOptions::default())
        .unwrap_err();
    assert!(matches!(err, ProposalError::Tampered { .. }), "{err}");
    assert_eq!(snapshot(&s.vault), before);

    // Content swapped without the hash: refused when read back at all.
    json["changes"][0]["new_sha256"] = made.changes[0].new_sha256.clone().into();
    fs::write(&file, serde_json::to_vec(&json).unwrap()).unwrap();
    assert!(matches!(
        s.store.get(&made.id),
        Err(ProposalError::Tampered { .. })
    ));

    // An id inside that is an absolute path: nothing is written there, nor beside it.
    let outside = s.vault.parent().unwrap().join("planted");
    let (_, mut json) = stored(&s, &made.id);
    json["id"] = outside.display().to_string().into();
    json["changes"][0]["content"] = made.changes[0].content.clone().into();
    fs::write(&file, serde_json::to_vec(&json).unwrap()).unwrap();
    let err = s
        .store
        .apply(&made.id, &ApplyOptions::default())
        .unwrap_err();
    assert!(matches!(err, ProposalError::Tampered { .. }), "{err}");
    assert!(!outside.with_extension("json").exists());
    assert!(!s.index.join("backups").join(&outside).exists());
    assert_eq!(snapshot(&s.vault), before);
}

/// A journal as an attacker plants it: one step naming `staged` for the vault file `target`.
fn plant_journal(s: &Setup, id: &str, phase: &str, target: &str, staged: &Path, base: &str) {
    let journal = serde_json::json!({
        "id": id,
        "phase": phase,
        "steps": [{
            "target": target,
            "staged": staged,
            "replace": true,
            "base_sha256": base,
            "new_sha256": base,
            "remove": null,
        }],
    });
    fs::write(
        s.index.join("proposals/journal.json"),
        serde_json::to_vec(&journal).unwrap(),
    )
    .unwrap();
}

#[test]
fn a_planted_journal_touches_nothing_it_names() {
    let s = setup();
    let (path, original) = some_note(&s.vault);
    let made = append_at_end(&s, &path, "x");
    let victim = s.vault.parent().unwrap().join("victim.txt");
    let base = made.changes[0].base_sha256.clone().unwrap();
    for phase in ["staged", "committing"] {
        fs::write(&victim, "keep me").unwrap();
        plant_journal(&s, &made.id, phase, &path, &victim, &base);
        let store = ProposalStore::open(&s.index, &s.vault).unwrap();
        assert_eq!(fs::read_to_string(&victim).unwrap(), "keep me", "{phase}");
        assert_eq!(
            fs::read_to_string(s.vault.join(&path)).unwrap(),
            original,
            "{phase}"
        );
        assert!(
            matches!(
                store.recovered()[0].outcome,
                quire_proposals::RecoveryOutcome::Discarded { .. }
            ),
            "{phase}: {:?}",
            store.recovered()
        );
        assert!(!s.index.join("proposals/journal.json").exists());
        // The store stays usable.
        assert_eq!(store.get(&made.id).unwrap().status, Status::Pending);
    }
}

#[test]
fn ids_are_unique_under_concurrent_creates_and_opening_never_waits_for_an_apply() {
    let s = setup();
    // Another process applying holds the lock: opening and proposing go on.
    let lock = fs::OpenOptions::new()
        .write(true)
        .open(s.index.join("proposals/apply.lock"))
        .unwrap();
    lock.try_lock().unwrap();
    let threads: Vec<_> = (0..8)
        .map(|t| {
            let (index, vault) = (s.index.clone(), s.vault.clone());
            std::thread::spawn(move || {
                let store = ProposalStore::open(&index, &vault).unwrap();
                (0..60)
                    .map(|n| {
                        let content = format!("thread {t} note {n}\n");
                        let made = store
                            .create(proposal(vec![ChangeRequest::Create {
                                path: format!("New/{t}-{n}.md"),
                                content: content.clone(),
                            }]))
                            .unwrap();
                        (made.id, content)
                    })
                    .collect::<Vec<_>>()
            })
        })
        .collect();
    let made: Vec<(String, String)> = threads
        .into_iter()
        .flat_map(|t| t.join().unwrap())
        .collect();
    drop(lock);
    let ids: std::collections::BTreeSet<_> = made.iter().map(|(id, _)| id.clone()).collect();
    assert_eq!(ids.len(), made.len());
    assert_eq!(s.store.list().unwrap().len(), made.len());
    for (id, content) in &made {
        assert_eq!(&s.store.get(id).unwrap().changes[0].content, content);
    }
}

#[test]
fn a_file_that_cannot_be_written_is_reported_and_the_rest_is_applied() {
    let s = setup();
    let files = ["Split/One.md", "Split/Two.md", "Split/Three.md"];
    let made = s
        .store
        .create(proposal(
            files
                .iter()
                .map(|path| ChangeRequest::Create {
                    path: (*path).into(),
                    content: format!("# {path}\n"),
                })
                .collect(),
        ))
        .unwrap();
    let other = s
        .store
        .create(proposal(vec![ChangeRequest::Create {
            path: "Other.md".into(),
            content: "other\n".into(),
        }]))
        .unwrap();
    // Once the first file is written, a folder takes the third one's place.
    let vault = s.vault.clone();
    let blocker = std::thread::spawn(move || {
        while !vault.join(files[0]).exists() {
            std::thread::sleep(std::time::Duration::from_millis(2));
        }
        fs::create_dir_all(vault.join(files[2])).unwrap();
    });
    let applied = s
        .store
        .apply(
            &made.id,
            &ApplyOptions {
                pause_between_files: Some(std::time::Duration::from_millis(150)),
            },
        )
        .unwrap();
    blocker.join().unwrap();
    assert_eq!(applied.written, vec![files[0], files[1]]);
    assert_eq!(applied.not_written.len(), 1);
    assert_eq!(applied.not_written[0].path, files[2]);
    assert!(s.vault.join(files[2]).is_dir());
    assert_eq!(
        fs::read_to_string(
            s.index
                .join("backups")
                .join(&made.id)
                .join("Split/Three.md.proposed")
        )
        .unwrap(),
        "# Split/Three.md\n"
    );
    // The store is not wedged: a new open, a list and another apply all work.
    let store = ProposalStore::open(&s.index, &s.vault).unwrap();
    assert!(store.recovered().is_empty());
    let listed = store.get(&made.id).unwrap();
    assert_eq!(listed.status, Status::Applied);
    assert_eq!(listed.conflicts, vec![files[2].to_string()]);
    store.apply(&other.id, &ApplyOptions::default()).unwrap();
    assert_eq!(
        fs::read_to_string(s.vault.join("Other.md")).unwrap(),
        "other\n"
    );
}

#[test]
fn a_name_too_long_for_the_file_system_is_refused_when_proposed() {
    let s = setup();
    let long = format!("{}.md", "n".repeat(300));
    let err = s
        .store
        .create(proposal(vec![ChangeRequest::Create {
            path: format!("Folder/{long}"),
            content: "x".into(),
        }]))
        .unwrap_err();
    assert!(matches!(err, ProposalError::BadChange { .. }), "{err}");
    assert!(err.to_string().contains("303 bytes"), "{err}");
    assert!(s.store.list().unwrap().is_empty());
}

/// A proposal file edited or cut short by hand is left out of the listing, named with why, and
/// the others still list; applying it is refused and writes nothing.
#[test]
fn an_unreadable_proposal_is_reported_and_hides_no_other() {
    let s = setup();
    let make = |name: &str| {
        s.store
            .create(proposal(vec![ChangeRequest::Create {
                path: format!("{name}.md"),
                content: format!("# {name}\n"),
            }]))
            .unwrap()
    };
    let (first, second) = (make("First"), make("Second"));
    let file = s.index.join("proposals").join(format!("{}.json", first.id));
    let text = fs::read_to_string(&file).unwrap();
    fs::write(&file, &text[..text.len() / 2]).unwrap();

    let listing = s.store.listing().unwrap();
    let ids: Vec<&str> = listing.proposals.iter().map(|p| p.id.as_str()).collect();
    assert_eq!(ids, [second.id.as_str()]);
    assert_eq!(listing.unreadable.len(), 1);
    assert_eq!(listing.unreadable[0].id, first.id);
    assert!(!listing.unreadable[0].reason.is_empty());
    assert_eq!(s.store.list().unwrap().len(), 1);

    let before = snapshot(&s.vault);
    assert!(s.store.apply(&first.id, &ApplyOptions::default()).is_err());
    assert_eq!(snapshot(&s.vault), before);
}
