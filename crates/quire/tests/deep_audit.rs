//! `quire audit --deep` end to end: the real binary on a copy of the sample vault against the
//! scripted fake server. The plan first (`--dry-run` sends nothing), then one map request and one
//! review request, invented links and paths dropped and counted, the vault untouched, and a
//! second run that sends nothing at all.

#![allow(clippy::unwrap_used)] // tests stop at the first surprise

use quire_testkit as support;

use serde_json::{Value, json};
use support::{FakeChat, answer, json as json_of, messages, ok};

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
    /// `audit --deep --json` with every note in one request.
    fn deep(&self, server: &FakeChat, extra: &[&str]) -> Value {
        json_of(
            &self
                .quire(Some(server))
                .args(["--json", "audit", "--deep", "--batch-tokens", "1000000"])
                .args(extra)
                .output()
                .unwrap(),
        )
    }
}

#[test]
fn a_deep_audit_sends_its_plan_once_validates_every_record_and_then_runs_from_its_cache() {
    let setup = setup();
    let before = support::file_hashes(&setup.vault);
    let notes = support::file_hashes(&setup.vault)
        .keys()
        .filter(|p| p.ends_with(".md"))
        .count();
    // Offline: structure, and a list of what needs a model.
    let offline = json_of(
        &setup
            .quire(None)
            .args(["--json", "audit", "--deep"])
            .output()
            .unwrap(),
    );
    assert!(offline["model"].is_null());
    assert_eq!(offline["needs_model"].as_array().unwrap().len(), 3);
    assert_eq!(offline["structural"]["summary"]["notes"], notes);

    let records: Vec<Value> = (1..=notes)
        .map(|n| {
            json!({"id": format!("N{n}"), "main_idea": "An idea.", "key_points": [],
                   "entities": [], "quality": {"score": if n == 1 { 1 } else { 4 },
                   "issues": if n == 1 { vec!["a stub"] } else { vec![] }},
                   "suggested_tags": [], "topics": [],
                   "suggested_links": if n == 2 { vec!["Home", "No Such Note"] } else { vec![] }})
        })
        .collect();
    let map_reply = json!({ "records": records }).to_string();
    let review = json!({
        "clusters": [],
        "recommendations": [{"text": "Link the stub from Home.", "notes": ["Home.md", "Invented/Note.md"]}],
        "action_plan": [{"step": "Write the stub out.", "notes": ["Home.md"]}],
    })
    .to_string();
    let server = FakeChat::start(vec![answer(&[&map_reply]), answer(&[&review])]);

    let plan = setup.deep(&server, &["--dry-run"]);
    assert_eq!(plan["plan"]["to_send"], notes);
    assert_eq!(plan["plan"]["requests"], 1);
    assert!(plan["map"].is_null());
    assert!(server.requests().is_empty(), "--dry-run sent something");

    let report = setup.deep(&server, &[]);
    let map = &report["map"];
    assert_eq!(map["requests"], 1);
    assert_eq!(map["records"].as_array().unwrap().len(), notes);
    assert_eq!(map["invented_links"], 1);
    assert_eq!(map["failed"], json!([]));
    assert_eq!(report["reduce_requests"], 1);
    assert_eq!(report["recommendations"][0]["notes"], json!(["Home.md"]));
    assert_eq!(report["dropped_paths"], 1);
    assert_eq!(report["action_plan"][0]["text"], "Write the stub out.");
    let weakest = &report["quality_findings"][0];
    assert_eq!(weakest["score"], 1);
    assert_eq!(weakest["issues"], json!(["a stub"]));
    let linked = map["records"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["suggested_links"] == json!(["Home.md"]));
    assert!(linked.is_some(), "the link to Home resolved: {map}");
    // The map request: every note as fenced data, the schema asked for.
    let sent = server.requests();
    assert_eq!(sent.len(), 2);
    assert_eq!(
        sent[0]["response_format"]["json_schema"]["name"],
        "note_records"
    );
    let prompt = messages(&sent[0]);
    assert_eq!(prompt[1].1.matches("\n⟦⟦⟦\n").count(), notes);
    assert_eq!(
        sent[1]["response_format"]["json_schema"]["name"],
        "vault_review"
    );

    // Nothing changed: nothing is sent again (the server has no reply left to give).
    let again = setup.deep(&server, &[]);
    assert_eq!(again["map"]["requests"], 0);
    assert_eq!(again["map"]["from_cache"], notes);
    assert_eq!(again["reduce_requests"], 0);
    assert_eq!(again["recommendations"], report["recommendations"]);
    assert_eq!(server.requests().len(), 2);
    assert!(setup.index.join("audit.sqlite").is_file());
    assert_eq!(
        support::file_hashes(&setup.vault),
        before,
        "the audit wrote into the vault"
    );

    // Markdown: the sections a reader expects.
    let text = ok(&setup
        .quire(Some(&server))
        .args(["audit", "--deep", "--batch-tokens", "1000000"])
        .output()
        .unwrap());
    assert!(text.contains("# Deep audit"), "{text}");
    assert!(
        text.contains("## Recommendations\n\n1. Link the stub from Home. ([[Home]])"),
        "{text}"
    );
    assert!(
        text.contains("0 requests sent for the notes and 0 for the review"),
        "{text}"
    );
}
