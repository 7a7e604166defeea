//! PDFs and canvases end to end: the real binary on a small vault with PDFs written from known
//! text (quire-testkit), an encrypted and a broken PDF, a canvas; search, read, ask (against the
//! fake chat server) citing `#page=N`, the coverage of scan and status, and the incremental sync
//! on adding, editing, renaming and deleting a PDF, checked against a fresh index.

#![allow(clippy::unwrap_used)] // tests stop at the first surprise

use quire_testkit::pdf::{encrypted_pdf, pdf_from_pages};
use quire_testkit::{FakeChat, answer, json, messages, ok, quire, skipped_list, write_file};
use serde_json::Value;

const BIN: &str = env!("CARGO_BIN_EXE_quire");

const KELP: [&str; 3] = [
    "Photosynthesis in kelp forests\nCarbon is fixed near the surface.",
    "Grazing by sea urchins\nUrchin barrens follow the loss of otters.",
    "Recovery after marine heatwaves\nKelp returns within four years.",
];

const CANVAS: &str = r#"{"nodes":[
  {"id":"a","type":"text","text":"Quarterly zeppelin roadmap","x":0,"y":0,"width":200,"height":80},
  {"id":"b","type":"file","file":"Reading/Kelp notes.md","x":300,"y":0,"width":200,"height":80}
],"edges":[{"id":"e","fromNode":"a","toNode":"b"}]}"#;

struct Fixture {
    dir: tempfile::TempDir,
}

impl Fixture {
    fn new() -> Fixture {
        let fixture = Fixture {
            dir: tempfile::tempdir().unwrap(),
        };
        let vault = fixture.vault();
        write_file(
            &vault,
            "Reading/Kelp notes.md",
            b"# Kelp notes\n\nMy notes on the kelp paper: see the grazing chapter.\n",
        );
        write_file(&vault, "Papers/Kelp.pdf", &pdf_from_pages(&KELP));
        write_file(&vault, "Papers/Locked.pdf", &encrypted_pdf(&KELP));
        write_file(
            &vault,
            "Papers/Broken.pdf",
            b"%PDF-1.4\nthis is not a PDF body\n",
        );
        write_file(&vault, "Boards/Plan.canvas", CANVAS.as_bytes());
        fixture
    }

    fn vault(&self) -> std::path::PathBuf {
        self.dir.path().join("vault")
    }

    fn run(&self, index: &str, server: Option<&FakeChat>, args: &[&str]) -> Value {
        let mut command = quire(BIN, &self.vault(), &self.dir.path().join(index));
        if let Some(server) = server {
            command
                .env("QUIRE_LLM_BASE_URL", &server.url)
                .env("QUIRE_LLM_MODEL", "fake-model");
        }
        json(&command.arg("--json").args(args).output().unwrap())
    }

    fn text(&self, args: &[&str]) -> String {
        let mut command = quire(BIN, &self.vault(), &self.dir.path().join("index"));
        ok(&command.args(args).output().unwrap())
    }

    /// The (path, section link or path, lines) of every result of a BM25 search.
    fn hits(&self, index: &str, query: &str) -> Vec<(String, String, String)> {
        let v = self.run(index, None, &["search", "--mode", "bm25", query]);
        v["results"]
            .as_array()
            .unwrap()
            .iter()
            .flat_map(|note| {
                let path = note["path"].as_str().unwrap().to_string();
                note["sections"].as_array().unwrap().iter().map(move |s| {
                    (
                        path.clone(),
                        s["link"].as_str().unwrap_or(&path).to_string(),
                        format!("{}-{}", s["start_line"], s["end_line"]),
                    )
                })
            })
            .collect()
    }
}

#[test]
fn pdf_pages_are_searched_read_and_cited_by_page() {
    let f = Fixture::new();
    let stats = f.run("index", None, &["index"]);
    let left_out = skipped_list(&stats, "notes_skipped");
    assert!(
        left_out
            .iter()
            .any(|(p, r)| p == "Papers/Locked.pdf" && r.contains("encrypted")),
        "{left_out:?}"
    );
    assert!(
        left_out
            .iter()
            .any(|(p, r)| p == "Papers/Broken.pdf" && r.contains("cannot be read")),
        "{left_out:?}"
    );

    let hits = f.hits("index", "urchin barrens");
    assert_eq!(hits[0].0, "Papers/Kelp.pdf", "{hits:?}");
    assert_eq!(hits[0].1, "Papers/Kelp.pdf#page=2", "{hits:?}");
    let text = f.text(&["search", "--mode", "bm25", "urchin barrens"]);
    assert!(text.contains("Papers/Kelp.pdf#page=2:"), "{text}");

    let page = f.text(&["read", "Papers/Kelp.pdf", "--page", "3"]);
    assert!(page.starts_with("# Page 3\n"), "{page}");
    assert!(page.contains("Kelp returns within four years."), "{page}");
    assert!(!page.contains("urchin"), "{page}");
    let read = f.run("index", None, &["read", "Papers/Kelp.pdf", "--page", "2"]);
    assert_eq!(read["path"], "Papers/Kelp.pdf#page=2");
    let lines = format!("{}-{}", read["start_line"], read["end_line"]);
    assert!(
        hits[0].2.starts_with(&read["start_line"].to_string()),
        "{hits:?} vs {lines}"
    );

    let status = f.run("index", None, &["status"]);
    assert_eq!(status["attachments"]["pdfs_indexed"], 1);
    assert_eq!(status["attachments"]["canvases_indexed"], 1);
    let reasons = skipped_list(&status["attachments"], "skipped");
    assert_eq!(reasons.len(), 2, "{reasons:?}");
    let scan = f.text(&["scan"]);
    assert!(scan.contains("indexed  Papers/Kelp.pdf: 3 pages"), "{scan}");
    assert!(
        scan.contains("skipped  Papers/Locked.pdf: encrypted PDF"),
        "{scan}"
    );

    // Ask: the page's text is a source like a note's, fenced as data; the citation points at the page.
    let server = FakeChat::start(vec![answer(&["Urchin barrens follow otter loss [S1]."])]);
    let v = f.run(
        "index",
        Some(&server),
        &["ask", "What follows the loss of otters?"],
    );
    assert_eq!(v["citations"][0]["path"], "Papers/Kelp.pdf", "{v}");
    assert_eq!(v["citations"][0]["page"], 2, "{v}");
    assert_eq!(v["sources"][0]["link"], "[[Kelp.pdf#page=2]]", "{v}");
    let prompt = messages(&server.requests()[0])
        .into_iter()
        .map(|(_, text)| text)
        .collect::<Vec<_>>()
        .join("\n");
    assert!(
        prompt.contains("Urchin barrens follow the loss of otters."),
        "{prompt}"
    );
}

#[test]
fn asking_one_pdf_keeps_to_its_pages() {
    let f = Fixture::new();
    f.run("index", None, &["index"]);
    let sources = |v: &Value| -> Vec<String> {
        v["sources"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| s["path"].as_str().unwrap().to_string())
            .collect()
    };
    let question = "Which chapter of the kelp paper is about grazing?";
    // The whole vault: the reading note speaks of the paper's grazing chapter too.
    let server = FakeChat::start(vec![answer(&["The grazing chapter [S1]."])]);
    let all = f.run("index", Some(&server), &["ask", question]);
    assert!(
        sources(&all).contains(&"Reading/Kelp notes.md".to_string()),
        "{all}"
    );
    // One PDF, named as a path or by its name: only its pages are passages.
    for note in ["Papers/Kelp.pdf", "Kelp.pdf"] {
        let server = FakeChat::start(vec![answer(&["Grazing by sea urchins [S1]."])]);
        let one = f.run("index", Some(&server), &["ask", question, "--note", note]);
        let paths = sources(&one);
        assert!(!paths.is_empty(), "{one}");
        assert!(
            paths.iter().all(|p| p == "Papers/Kelp.pdf"),
            "{note}: {one}"
        );
        // Every passage is a page, the grazing one among them, and cites as one.
        let pages: Vec<u64> = one["sources"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| s["page"].as_u64().unwrap())
            .collect();
        assert!(pages.contains(&2), "{one}");
        // One note asked: its passages are not held to the two a note gets among others.
        assert_eq!(pages.len(), 3, "{one}");
        assert_eq!(one["citations"][0]["path"], "Papers/Kelp.pdf", "{one}");
    }
    // A note that is not in the vault is an error that names it.
    let mut command = quire(BIN, &f.vault(), &f.dir.path().join("index"));
    let out = command
        .args(["ask", question, "--note", "Papers/Nowhere.pdf"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("Nowhere"), "{err}");
}

#[test]
fn canvas_text_is_searchable_and_its_file_nodes_are_links() {
    let f = Fixture::new();
    f.run("index", None, &["index"]);
    let hits = f.hits("index", "zeppelin roadmap");
    assert_eq!(hits[0].0, "Boards/Plan.canvas", "{hits:?}");
    // A note file that is not Markdown is named by its path with its extension.
    let read = f.text(&["read", "Boards/Plan.canvas"]);
    assert!(read.contains("Quarterly zeppelin roadmap"), "{read}");
    let links = f.run("index", None, &["links", "Reading/Kelp notes"]);
    let backlinks: Vec<&str> = links["backlinks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| b.as_str().unwrap())
        .collect();
    assert_eq!(backlinks, ["Boards/Plan.canvas"]);
}

#[test]
fn pdf_add_edit_rename_delete_sync_incrementally_as_a_fresh_index_would() {
    let f = Fixture::new();
    let vault = f.vault();
    f.run("index", None, &["index"]);
    let fresh_matches = |query: &str| {
        let fresh = format!("fresh-{}", query.replace(' ', "-"));
        f.run(&fresh, None, &["index"]);
        assert_eq!(f.hits("index", query), f.hits(&fresh, query), "{query}");
    };

    // Add.
    write_file(
        &vault,
        "Papers/Otters.pdf",
        &pdf_from_pages(&["Sea otters eat urchins", "Otters use stones as tools"]),
    );
    let stats = f.run("index", None, &["index"]);
    assert_eq!(stats["notes_indexed"], 1, "{stats}");
    assert_eq!(
        f.hits("index", "stones tools")[0].1,
        "Papers/Otters.pdf#page=2"
    );
    fresh_matches("stones tools");

    // Touch without change: not extracted again.
    write_file(
        &vault,
        "Papers/Otters.pdf",
        &pdf_from_pages(&["Sea otters eat urchins", "Otters use stones as tools"]),
    );
    let stats = f.run("index", None, &["index"]);
    assert_eq!(stats["notes_indexed"], 0, "{stats}");

    // Edit: page 2 says something else.
    write_file(
        &vault,
        "Papers/Otters.pdf",
        &pdf_from_pages(&["Sea otters eat urchins", "Otters hold hands while sleeping"]),
    );
    let stats = f.run("index", None, &["index"]);
    assert_eq!(stats["notes_indexed"], 1, "{stats}");
    assert!(f.hits("index", "stones tools").is_empty());
    assert_eq!(f.hits("index", "sleeping")[0].1, "Papers/Otters.pdf#page=2");
    fresh_matches("otters");

    // Rename.
    std::fs::rename(
        vault.join("Papers/Otters.pdf"),
        vault.join("Papers/Sea otters.pdf"),
    )
    .unwrap();
    let stats = f.run("index", None, &["index"]);
    assert_eq!(
        (
            stats["notes_indexed"].clone(),
            stats["notes_deleted"].clone()
        ),
        (1.into(), 1.into()),
        "{stats}"
    );
    assert_eq!(
        f.hits("index", "sleeping")[0].1,
        "Papers/Sea otters.pdf#page=2"
    );
    fresh_matches("sleeping");

    // Delete.
    std::fs::remove_file(vault.join("Papers/Sea otters.pdf")).unwrap();
    let stats = f.run("index", None, &["index"]);
    assert_eq!(stats["notes_deleted"], 1, "{stats}");
    assert!(f.hits("index", "sleeping").is_empty());
    fresh_matches("urchins");
}
