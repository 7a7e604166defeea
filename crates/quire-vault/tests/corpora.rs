//! Snapshot and fact tests over the four real vaults in `../shared/corpora/vaults`.
//!
//! The snapshots record, for every note, its outline, tags, links (with what they resolve to) and
//! chunks (ids, lines, hashes). A change in any of them shows up as a reviewed diff; a change to
//! chunk ids or texts also means bumping `CHUNKER_VERSION`.

#![allow(clippy::unwrap_used)] // tests and benches stop at the first surprise

use std::fmt::Write;
use std::path::PathBuf;

use quire_vault::links::Resolution;
use quire_vault::{LinkKind, OpenOptions, Vault};

fn corpora() -> PathBuf {
    let dir = std::env::var_os("QUIRE_CORPORA")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/corpora")
        });
    assert!(
        dir.join("vaults").is_dir(),
        "the shared corpora are missing at {} (set QUIRE_CORPORA)",
        dir.display()
    );
    dir
}

fn open(name: &str) -> Vault {
    // Read-only use: nothing here writes, so the corpus is opened in place.
    Vault::open(
        &corpora().join("vaults").join(name).join("vault"),
        &OpenOptions::default(),
    )
    .unwrap()
}

fn digest(vault: &Vault) -> String {
    let mut out = String::new();
    let orphans = vault.graph.orphans().len();
    let mocs: Vec<&str> = (0..vault.notes.len())
        .filter(|&i| vault.graph.is_moc[i])
        .map(|i| vault.notes[i].path.as_str())
        .collect();
    writeln!(
        out,
        "notes={} attachments={} skipped={} orphans={orphans}",
        vault.notes.len(),
        vault.attachments.len(),
        vault.skipped.len()
    )
    .unwrap();
    writeln!(out, "mocs={mocs:?}").unwrap();
    for s in &vault.skipped {
        writeln!(out, "skipped {}: {}", s.path, s.message).unwrap();
    }
    for (i, note) in vault.notes.iter().enumerate() {
        writeln!(
            out,
            "\n## {}  title={:?} lines={} words={} daily={:?} sha={}",
            note.path,
            note.title,
            note.line_count,
            note.word_count,
            note.daily_date.map(|d| d.to_string()),
            &note.sha256[..12]
        )
        .unwrap();
        for w in &note.warnings {
            writeln!(out, "  warn L{}: {}", w.line, w.message).unwrap();
        }
        for h in &note.headings {
            writeln!(
                out,
                "  h L{}-{} {} {}",
                h.line,
                h.end_line,
                "#".repeat(h.level as usize),
                h.text
            )
            .unwrap();
        }
        for t in &note.tags {
            writeln!(out, "  tag L{} {} ({:?})", t.line, t.name, t.source).unwrap();
        }
        for (link, res) in note.links.iter().zip(&vault.graph.resolutions[i]) {
            let to = match res {
                Some(Resolution::Note(j)) => vault.notes[*j].path.clone(),
                Some(Resolution::Attachment(p)) => format!("file:{p}"),
                None => "UNRESOLVED".to_string(),
            };
            let sub = link
                .subpath
                .as_ref()
                .map(|s| format!("#{s}"))
                .unwrap_or_default();
            writeln!(
                out,
                "  link L{} {:?} {}{} -> {}",
                link.line, link.kind, link.target, sub, to
            )
            .unwrap();
        }
        for c in vault.chunks(i) {
            writeln!(
                out,
                "  chunk {} L{}-{} {:?} {} tok={}",
                c.id,
                c.start_line,
                c.end_line,
                c.heading_path,
                &c.content_hash[..8],
                c.token_count
            )
            .unwrap();
        }
    }
    out
}

#[test]
fn snapshot_kepano_obsidian() {
    insta::assert_snapshot!("kepano-obsidian", digest(&open("kepano-obsidian")));
}

#[test]
fn snapshot_obsidian_tasks_docs() {
    insta::assert_snapshot!("obsidian-tasks-docs", digest(&open("obsidian-tasks-docs")));
}

#[test]
fn snapshot_obsidian_tasks_demo() {
    insta::assert_snapshot!("obsidian-tasks-demo", digest(&open("obsidian-tasks-demo")));
}

#[test]
fn snapshot_obsidian_starter_vault() {
    insta::assert_snapshot!(
        "obsidian-starter-vault",
        digest(&open("obsidian-starter-vault"))
    );
}

#[test]
fn every_markdown_and_canvas_file_of_the_corpora_is_read() {
    for (name, expected) in [
        ("kepano-obsidian", 103),
        ("obsidian-tasks-docs", 118),
        ("obsidian-tasks-demo", 206), // 205 notes and a canvas
        ("obsidian-starter-vault", 100),
    ] {
        let vault = open(name);
        assert_eq!(vault.notes.len(), expected, "{name}: {:?}", vault.skipped);
    }
}

#[test]
fn code_fence_comments_are_not_headings_in_tasks_docs() {
    let vault = open("obsidian-tasks-docs");
    let note = &vault.notes[vault.find_note("Queries/Combining Filters").unwrap()];
    assert!(
        note.headings
            .iter()
            .all(|h| !h.text.starts_with("Show all tasks"))
    );
    let h = note
        .headings
        .iter()
        .find(|h| h.text == "In One of Several Locations")
        .unwrap();
    assert_eq!(h.level, 4);
    let line = note.lines(h.line, h.line).unwrap();
    assert_eq!(line, "#### In One of Several Locations");
    // The section ends right before the next heading of the same or higher level.
    let next = note
        .headings
        .iter()
        .find(|n| n.line > h.line && n.level <= 4)
        .unwrap();
    assert_eq!(h.end_line, next.line - 1);
}

#[test]
fn property_wikilinks_resolve_in_kepano() {
    let vault = open("kepano-obsidian");
    let i = vault.find_note("References/Bass on Top").unwrap();
    let resolved: Vec<(String, Option<String>)> = vault.notes[i]
        .links
        .iter()
        .zip(&vault.graph.resolutions[i])
        .filter(|(l, _)| l.in_frontmatter && l.kind == LinkKind::Wiki)
        .map(|(l, r)| {
            let to = match r {
                Some(Resolution::Note(j)) => Some(vault.notes[*j].path.clone()),
                _ => None,
            };
            (l.target.clone(), to)
        })
        .collect();
    assert!(
        resolved.contains(&("Albums".into(), Some("Categories/Albums.md".into()))),
        "{resolved:?}"
    );
    // Daily notes follow the vault's daily-notes settings.
    let dailies = vault
        .notes
        .iter()
        .filter(|n| n.daily_date.is_some())
        .count();
    assert!(dailies >= 1);
}

#[test]
fn a_vault_refreshed_at_the_changed_paths_equals_the_vault_opened_again() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("vault");
    quire_testkit::copy_tree(&corpora().join("vaults/kepano-obsidian/vault"), &root);
    let before = Vault::open(&root, &OpenOptions::default()).unwrap();
    let first = before.notes[0].path.clone();
    let second = before.notes[1].path.clone();
    let gone = before.notes[2].path.clone();
    // An edit that adds links (to a note and to one that does not exist yet), a new note that
    // links back, a deletion, a rename, a new canvas, a path that names nothing.
    let text = std::fs::read_to_string(root.join(&first)).unwrap();
    std::fs::write(
        root.join(&first),
        format!(
            "{text}\n\nSee [[Brand new]] and [[{}]].\n",
            second.trim_end_matches(".md")
        ),
    )
    .unwrap();
    std::fs::write(
        root.join("Brand new.md"),
        format!(
            "# Brand new\n\nBack to [[{}]].\n",
            first.trim_end_matches(".md")
        ),
    )
    .unwrap();
    std::fs::remove_file(root.join(&gone)).unwrap();
    let renamed = format!("Moved {}", second.rsplit('/').next().unwrap());
    std::fs::rename(root.join(&second), root.join(&renamed)).unwrap();
    std::fs::write(
        root.join("Board.canvas"),
        r#"{"nodes":[{"id":"a","type":"text","text":"canvas words","x":0,"y":0,"width":10,"height":10}],"edges":[]}"#,
    )
    .unwrap();
    let paths: Vec<String> = [
        first.as_str(),
        "Brand new.md",
        gone.as_str(),
        second.as_str(),
        renamed.as_str(),
        "Board.canvas",
        "Nowhere/Missing.md",
    ]
    .iter()
    .map(|p| p.to_string())
    .collect();
    let refreshed = before.refreshed(&OpenOptions::default(), &paths).unwrap();
    let reopened = Vault::open(&root, &OpenOptions::default()).unwrap();
    assert_eq!(refreshed.notes.len(), before.notes.len() + 1);
    assert_eq!(digest(&refreshed), digest(&reopened));
    assert_eq!(refreshed.mtimes_ns, reopened.mtimes_ns);
    assert_eq!(refreshed.graph.backlinks, reopened.graph.backlinks);
    assert_eq!(refreshed.graph.moc_parents, reopened.graph.moc_parents);
    let brand = refreshed.index_of("Brand new.md").unwrap();
    assert!(!refreshed.graph.backlinks[brand].is_empty());
}
