//! The offline split loses nothing: on every note of the four shared vaults that has at least two
//! sections, every non-empty line of the original is a line of the map or of a new note, and the
//! new notes' paths are free and distinct. (Reads the vaults in place; writes nothing.)

#![allow(clippy::unwrap_used)] // tests stop at the first surprise

use std::collections::HashSet;

use quire_assist::split::split_by_headings;
use quire_vault::{OpenOptions, Vault};

#[test]
fn every_line_of_every_split_note_of_the_shared_vaults_is_kept() {
    let mut split = 0;
    let mut lines_checked = 0;
    for name in [
        "kepano-obsidian",
        "obsidian-starter-vault",
        "obsidian-tasks-demo",
        "obsidian-tasks-docs",
    ] {
        let root = quire_testkit::corpora()
            .join("vaults")
            .join(name)
            .join("vault");
        let vault = Vault::open(&root, &OpenOptions::default()).unwrap();
        let paths: HashSet<String> = vault.notes.iter().map(|n| n.path.to_lowercase()).collect();
        let names: HashSet<String> = vault
            .notes
            .iter()
            .map(|n| {
                n.path
                    .rsplit('/')
                    .next()
                    .unwrap()
                    .trim_end_matches(".md")
                    .to_lowercase()
            })
            .collect();
        let taken = |p: &str| paths.contains(&p.to_lowercase());
        let name_taken = |n: &str| names.contains(&n.to_lowercase());
        let mut vault_split = 0;
        for note in &vault.notes {
            let Ok(plan) = split_by_headings(note, &taken, &name_taken) else {
                continue;
            };
            vault_split += 1;
            assert!(plan.notes.len() >= 2, "{}", note.path);
            let mut kept: HashSet<&str> = plan.map.lines().collect();
            for new in &plan.notes {
                assert!(!taken(&new.path), "{} → {} is taken", note.path, new.path);
                kept.extend(new.content.lines());
            }
            let distinct: HashSet<String> =
                plan.notes.iter().map(|n| n.path.to_lowercase()).collect();
            assert_eq!(distinct.len(), plan.notes.len(), "{}", note.path);
            for line in note.source.lines().filter(|l| !l.trim().is_empty()) {
                assert!(kept.contains(line), "{}: lost {line:?}", note.path);
                lines_checked += 1;
            }
        }
        assert!(vault_split > 0, "{name}: no note split");
        split += vault_split;
    }
    assert!(split > 50, "only {split} notes split");
    assert!(lines_checked > 1_000, "{lines_checked}");
}
