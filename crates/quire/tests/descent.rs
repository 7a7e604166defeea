//! `quire ask --retriever tree|auto` end to end against the scripted fake server: the model is
//! shown the manifest, then the chosen notes' outlines, picks ids (unknown ones dropped and shown
//! in the trace), and the answer is written from exactly the sections it chose; a note changed
//! since it was indexed, a reply that never validates and a descent that finds nothing all fall
//! back to search; `auto` descends only when search's evidence is weak or the question is about
//! the vault's structure.

#![allow(clippy::unwrap_used)] // tests stop at the first surprise

use quire_testkit as support;

use serde_json::{Value, json};
use support::{FakeChat, answer, json as json_of, messages, ok};

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
    fn ask(&self, server: &FakeChat, retriever: &str, question: &str) -> Value {
        json_of(
            &self
                .quire(Some(server))
                .args(["--json", "ask", "--retriever", retriever, question])
                .output()
                .unwrap(),
        )
    }

    /// The descent's id of a note: `D` and its 1-based place among the indexed paths.
    fn id_of(&self, path: &str) -> String {
        let mut paths: Vec<String> = support::file_hashes(&self.vault)
            .into_keys()
            .filter(|p| p.ends_with(".md"))
            .collect();
        paths.sort();
        format!("D{}", paths.iter().position(|p| p == path).unwrap() + 1)
    }
}

fn choice(ids: &[&str], why: &str) -> String {
    json!({"choose": ids, "why": why}).to_string()
}

#[test]
fn the_model_descends_to_the_sections_it_chose_and_unknown_ids_are_dropped() {
    let setup = setup();
    let note = setup.id_of(STARTER);
    let server = FakeChat::start(vec![
        answer(&[&choice(&["D999", &note], "the starter note")]),
        // Section 2 of the starter note is "Feeding schedule" (1 is the text under the title).
        answer(&[&choice(
            &[&format!("{note}.2"), &format!("{note}.99"), "D1.1"],
            "feeding",
        )]),
        answer(&["Feed it once a day [S1]."]),
    ]);
    let reply = setup.ask(&server, "tree", "How often should the starter be fed?");
    let retrieval = &reply["retrieval"];
    assert_eq!(retrieval["retriever"], "tree");
    let descent = &retrieval["descent"];
    assert_eq!(descent["requests"], 2);
    assert_eq!(descent["steps"][0]["kind"], "notes");
    assert_eq!(descent["steps"][0]["invalid"], json!(["D999"]));
    assert_eq!(
        descent["steps"][0]["chose"],
        json!([format!("{note} {STARTER}")])
    );
    assert_eq!(descent["steps"][0]["why"], "the starter note");
    assert_eq!(descent["steps"][1]["kind"], "sections");
    assert_eq!(
        descent["steps"][1]["invalid"],
        json!([format!("{note}.99"), "D1.1"])
    );
    let section = &descent["sections"][0];
    assert_eq!(section["path"], STARTER);
    assert_eq!(
        section["heading_path"].as_array().unwrap().last().unwrap(),
        "Feeding schedule"
    );
    // The answer's sources are exactly that section, and the citation is valid.
    let sources = reply["sources"].as_array().unwrap();
    assert!(!sources.is_empty());
    for source in sources {
        assert_eq!(source["path"], STARTER);
        assert!(source["start_line"].as_u64().unwrap() >= 13);
        assert!(source["end_line"].as_u64().unwrap() <= 20);
    }
    assert_eq!(reply["invalid_citations"], json!([]));
    // What the model was shown: the manifest, then the note's outline with line ranges.
    let requests = server.requests();
    assert_eq!(
        requests[0]["response_format"]["json_schema"]["name"],
        "descent_choice"
    );
    let manifest = &messages(&requests[0])[1].1;
    assert!(
        manifest.contains(&format!("{note} {STARTER} — Sourdough Starter")),
        "{manifest}"
    );
    assert!(manifest.contains("Feeding schedule"), "{manifest}");
    let outline = &messages(&requests[1])[1].1;
    assert!(
        outline.contains(&format!("{note}.2 Feeding schedule (lines 13–")),
        "{outline}"
    );
    assert!(
        !outline.contains("Running"),
        "only the chosen note is opened: {outline}"
    );
    // The human output shows the trace.
    let server = FakeChat::start(vec![
        answer(&[&choice(&[&note], "starter")]),
        answer(&[&choice(&[&format!("{note}.2")], "feeding")]),
        answer(&["Once a day [S1]."]),
    ]);
    let text = ok(&setup
        .quire(Some(&server))
        .args([
            "ask",
            "--retriever",
            "tree",
            "How often should the starter be fed?",
        ])
        .output()
        .unwrap());
    assert!(text.contains("descent (tree, 2 model calls):"), "{text}");
    assert!(
        text.contains(&format!(
            "chose {note}.2 {STARTER} › Sourdough Starter › Feeding schedule"
        )),
        "{text}"
    );
}

#[test]
fn a_stale_note_an_invalid_reply_and_an_empty_descent_fall_back_to_search() {
    let setup = setup();
    let note = setup.id_of(STARTER);
    // The note changes after it was indexed: its branch goes to search instead.
    support::edit_file(
        &setup.vault.join(STARTER),
        "## Feeding schedule",
        "## Feeding plan",
    );
    let server = FakeChat::start(vec![
        answer(&[&choice(&[&note], "starter")]),
        answer(&[&choice(&[&format!("{note}.2")], "feeding")]),
        answer(&["An answer [S1]."]),
    ]);
    let reply = setup.ask(&server, "tree", "How often should the starter be fed?");
    let retrieval = &reply["retrieval"];
    assert_eq!(retrieval["descent"]["stale"], json!([STARTER]));
    let warnings = reply["warnings"].to_string();
    assert!(warnings.contains("changed since indexed"), "{warnings}");
    assert!(
        !reply["sources"].as_array().unwrap().is_empty(),
        "search answered"
    );

    // A reply that never validates: one repair, then search.
    let server = FakeChat::start(vec![
        answer(&["I think D3 is best."]),
        answer(&["Still D3."]),
        answer(&["An answer [S1]."]),
    ]);
    let reply = setup.ask(&server, "tree", "How do I keep a sourdough starter alive?");
    let descent = &reply["retrieval"]["descent"];
    assert_eq!(descent["requests"], 2);
    assert!(
        descent["stopped"]
            .as_str()
            .unwrap()
            .contains("never validated"),
        "{descent}"
    );
    assert!(
        reply["warnings"]
            .to_string()
            .contains("the descent found nothing")
    );
    assert!(!reply["sources"].as_array().unwrap().is_empty());
    let repair = messages(&server.requests()[1]);
    assert!(repair[3].1.contains("cannot be used"), "{}", repair[3].1);

    // Nothing chosen: search answers.
    let server = FakeChat::start(vec![
        answer(&[&choice(&[], "nothing fits")]),
        answer(&["An answer [S1]."]),
    ]);
    let reply = setup.ask(&server, "tree", "What is the airspeed of a swallow?");
    assert_eq!(reply["retrieval"]["descent"]["requests"], 1);
    assert!(
        reply["warnings"]
            .to_string()
            .contains("the descent found nothing")
    );
}

#[test]
fn auto_descends_only_for_weak_evidence_or_a_question_about_structure_and_tree_needs_a_model() {
    let setup = setup();
    let note = setup.id_of(STARTER);
    // Strong evidence: no descent, one request (the answer).
    let server = FakeChat::start(vec![answer(&["Once a day [S1]."])]);
    let reply = setup.ask(
        &server,
        "auto",
        "How often do I feed the sourdough starter?",
    );
    assert_eq!(reply["retrieval"]["retriever"], "auto");
    assert!(reply["retrieval"]["descent"].is_null());
    assert_eq!(server.requests().len(), 1);
    // A question about the vault's structure: descend, and merge with search.
    let server = FakeChat::start(vec![
        answer(&[&choice(&[&note], "the starter note")]),
        answer(&[&choice(&[&format!("{note}.2")], "feeding")]),
        answer(&["The starter note [S1]."]),
    ]);
    let reply = setup.ask(
        &server,
        "auto",
        "Which notes mention the sourdough starter?",
    );
    assert_eq!(reply["retrieval"]["descent"]["requests"], 2);
    assert_eq!(
        reply["sources"][0]["path"], STARTER,
        "the tree's sections come first"
    );
    // tree without a model: a clear error.
    let out = setup
        .quire(None)
        .args(["ask", "--retriever", "tree", "anything"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("needs a language model"));
}

#[test]
fn filters_narrow_the_passages_of_an_answer() {
    let setup = setup();
    let offline = |args: &[&str]| {
        let mut command = setup.quire(None);
        command.args(["--json", "ask", "What did I learn and how did it go?"]);
        command.args(args);
        json_of(&command.output().unwrap())
    };
    let paths = |reply: &Value| -> Vec<String> {
        reply["sources"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| s["path"].as_str().unwrap().to_string())
            .collect()
    };
    let everything = paths(&offline(&[]));
    assert!(
        everything
            .iter()
            .any(|p| !p.starts_with("Resources/Books/")),
        "{everything:?}"
    );
    let books = paths(&offline(&["--folder", "Resources/Books"]));
    assert!(!books.is_empty());
    assert!(
        books.iter().all(|p| p.starts_with("Resources/Books/")),
        "{books:?}"
    );
    let rated = paths(&offline(&[
        "--folder",
        "Resources/Books",
        "--where",
        "rating>=5",
    ]));
    assert!(!rated.is_empty());
    let five_stars = [
        "Resources/Books/Crime and Punishment.md",
        "Resources/Books/The Rust Programming Language.md",
    ];
    assert!(
        rated.iter().all(|p| five_stars.contains(&p.as_str())),
        "{rated:?}"
    );
    let bad = setup
        .quire(None)
        .args(["ask", "x", "--since", "last tuesday"])
        .output()
        .unwrap();
    assert_eq!(bad.status.code(), Some(1));
}
