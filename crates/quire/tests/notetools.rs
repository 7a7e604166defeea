//! `flashcards`, `split` and `transform` end to end: the real binary on a copy of the sample vault
//! against the scripted fake server. Each makes a proposal and writes nothing until it is
//! applied (every file of the vault hashed before and after); the note goes to the model as
//! fenced data; malformed replies get one repair and are refused after it.

#![allow(clippy::unwrap_used)] // tests stop at the first surprise

use quire_testkit as support;

use std::process::Output;

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
    Setup(support::SampleVault::new(env!("CARGO_BIN_EXE_quire")))
}

impl Setup {
    fn run(&self, server: Option<&FakeChat>, args: &[&str]) -> Output {
        self.quire(server).args(args).output().unwrap()
    }

    fn text(&self, path: &str) -> String {
        std::fs::read_to_string(self.vault.join(path)).unwrap()
    }
}

fn failed(out: &Output) -> String {
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[test]
fn flashcards_are_proposed_under_their_heading_citing_valid_lines_and_exported_for_anki() {
    let setup = setup();
    let before = support::file_hashes(&setup.vault);
    let cards = json!({"cards": [
        {"question": "How often is the starter fed on the counter?", "answer": "Once a day", "lines": "15"},
        {"question": "What does a healthy starter smell like?", "answer": "Yoghurt\nand a little like apples", "lines": "23-24"},
        {"question": "Invented", "answer": "x", "lines": "400-401"},
    ]})
    .to_string();
    let server = FakeChat::start(vec![answer(&["Here you go:"]), answer(&[&cards])]);
    let anki = setup.dir.path().join("cards.tsv");
    let out = setup.run(
        Some(&server),
        &[
            "--json",
            "flashcards",
            "Sourdough Starter",
            "--anki",
            anki.to_str().unwrap(),
        ],
    );
    let reply: Value = json_of(&out);
    assert_eq!(reply["cards"]["cards"].as_array().unwrap().len(), 2);
    assert_eq!(reply["cards"]["bad_lines"], 1);
    assert_eq!(
        support::file_hashes(&setup.vault),
        before,
        "flashcards wrote into the vault"
    );
    // The note went as fenced, numbered data; the malformed reply got one repair.
    let sent = server.requests();
    assert_eq!(sent.len(), 2);
    let prompt = &messages(&sent[0])[1].1;
    assert!(prompt.contains("⟦⟦⟦\nL1: "), "{prompt}");
    assert!(prompt.contains("Feed once a day when it lives on the counter"));
    assert!(messages(&sent[1])[3].1.contains("cannot be used"));
    // The Anki file: a header and one row per card, tags from the note and `quire`.
    let tsv = std::fs::read_to_string(&anki).unwrap();
    assert!(
        tsv.starts_with("#separator:tab\n#html:true\n#tags column:3\n"),
        "{tsv}"
    );
    assert!(
        tsv.contains(
            "What does a healthy starter smell like?\tYoghurt<br>and a little like apples\t"
        ),
        "{tsv}"
    );
    assert!(tsv.lines().nth(3).unwrap().ends_with("quire"), "{tsv}");
    // Applying writes the cards under ## Flashcards, in the Spaced Repetition format.
    let id = reply["proposal"]["id"].as_str().unwrap();
    ok(&setup.run(None, &["proposals", "apply", id]));
    let now = setup.text(STARTER);
    let flashcards = now.find("## Flashcards").unwrap();
    assert!(
        now[flashcards..].contains(
            "How often is the starter fed on the counter?::Once a day <!-- lines 15-15 -->"
        ),
        "{now}"
    );
    assert!(now[flashcards..].contains("What does a healthy starter smell like?\n?\nYoghurt\nand a little like apples <!-- lines 23-24 -->"), "{now}");
    // Asked again, the same cards are not made twice.
    let server = FakeChat::start(vec![answer(&[&cards])]);
    let again: Value = json_of(&setup.run(Some(&server), &["--json", "flashcards", STARTER]));
    assert_eq!(again["cards"]["already_in_note"], 2);
    assert!(again["proposal"].is_null());
}

#[test]
fn a_split_by_topic_uses_every_block_once_and_loses_no_line() {
    let setup = setup();
    let original = setup.text(STARTER);
    let before = support::file_hashes(&setup.vault);
    // Fifteen blocks (runs of lines after the properties); the feeding ones first.
    let blocks = quire_assist::split::blocks(&quire_vault::parse_note(
        STARTER,
        &original,
        &Default::default(),
    ));
    assert_eq!(blocks.len(), 15);
    let groups = json!({"notes": [
        {"title": "Feeding", "blocks": [1, 2, 3, 4, 5, 6]},
        {"title": "Health and trouble", "blocks": [7, 8, 9, 10, 11, 12, 13, 14, 15]},
    ]})
    .to_string();
    let bad = json!({"notes": [{"title": "All", "blocks": [1]}]}).to_string();
    let server = FakeChat::start(vec![answer(&[&bad]), answer(&[&groups])]);
    let out = setup.run(Some(&server), &["--json", "split", STARTER]);
    let reply = json_of(&out);
    assert_eq!(reply["method"], "topics", "{reply}");
    assert_eq!(
        reply["notes"],
        json!(["Resources/Feeding.md", "Resources/Health and trouble.md"])
    );
    assert_eq!(
        support::file_hashes(&setup.vault),
        before,
        "split wrote into the vault"
    );
    let prompt = &messages(&server.requests()[0])[1].1;
    assert!(prompt.contains("[B1]\n"), "{prompt}");
    assert!(
        messages(&server.requests()[1])[3]
            .1
            .contains("blocks in no group")
    );
    let id = reply["proposal"]["id"].as_str().unwrap();
    ok(&setup.run(None, &["proposals", "apply", id]));
    let mut kept: Vec<String> = setup.text(STARTER).lines().map(str::to_string).collect();
    for path in ["Resources/Feeding.md", "Resources/Health and trouble.md"] {
        let text = setup.text(path);
        assert!(
            text.starts_with("---\nsource: \"[[Sourdough Starter]]\"\n---\n"),
            "{text}"
        );
        kept.extend(text.lines().map(str::to_string));
    }
    for line in original.lines().filter(|l| !l.trim().is_empty()) {
        assert!(kept.iter().any(|k| k == line), "lost {line:?}");
    }
    let map = setup.text(STARTER);
    assert!(
        map.contains("- [[Feeding]]") && map.contains("- [[Health and trouble]]"),
        "{map}"
    );

    // Offline (no model): by headings.
    let offline = json_of(&setup.run(None, &["--json", "split", "Running Training"]));
    assert_eq!(offline["method"], "headings");
}

#[test]
fn transform_replaces_exactly_the_selected_lines_and_needs_a_model() {
    let setup = setup();
    let original = setup.text(STARTER);
    let server = FakeChat::start(vec![answer(&[
        "```markdown\nFeed it daily on the counter, weekly in the fridge.\n```",
    ])]);
    let out = setup.run(
        Some(&server),
        &[
            "--json",
            "transform",
            STARTER,
            "--lines",
            "15",
            "--preset",
            "shorten",
        ],
    );
    let reply = json_of(&out);
    let diff = reply["proposal"]["changes"][0]["diff"].as_str().unwrap();
    assert!(diff.contains("\n-Feed once a day when it lives on the counter, once a week when it lives in the fridge.\n+Feed it daily on the counter, weekly in the fridge.\n"), "{diff}");
    assert_eq!(
        setup.text(STARTER),
        original,
        "nothing written before apply"
    );
    let sent = messages(&server.requests()[0]);
    assert!(
        sent[1]
            .1
            .contains("Instruction: Make it about half as long."),
        "{}",
        sent[1].1
    );
    assert!(
        sent[1]
            .1
            .contains("The selection to rewrite:\n⟦⟦⟦\nFeed once a day"),
        "{}",
        sent[1].1
    );
    // Applied, only that line changed.
    let server = FakeChat::start(vec![answer(&["Feed it daily."])]);
    ok(&setup.run(
        Some(&server),
        &[
            "transform",
            STARTER,
            "--lines",
            "15",
            "--instruction",
            "Say it in three words",
            "--apply",
        ],
    ));
    let now = setup.text(STARTER);
    let expected: Vec<&str> = original
        .lines()
        .enumerate()
        .map(|(i, l)| if i == 14 { "Feed it daily." } else { l })
        .collect();
    assert_eq!(now.lines().collect::<Vec<_>>(), expected);
    // Mistakes are clear errors.
    assert!(
        failed(&setup.run(None, &["transform", STARTER, "--preset", "shorten"]))
            .contains("needs a language model")
    );
    let server = FakeChat::start(vec![]);
    assert!(
        failed(&setup.run(
            Some(&server),
            &[
                "transform",
                STARTER,
                "--lines",
                "900-901",
                "--preset",
                "grammar"
            ]
        ))
        .contains("not lines of the note")
    );
    assert!(
        failed(&setup.run(Some(&server), &["transform", STARTER, "--preset", "poem"]))
            .contains("unknown preset")
    );
}

#[test]
fn complete_continues_after_a_line_citing_other_notes_as_wikilinks() {
    let setup = setup();
    ok(&setup.run(None, &["index"]));
    let original = setup.text(STARTER);
    let before = support::file_hashes(&setup.vault);
    let server = FakeChat::start(vec![
        answer(&["In summer it peaks ", "sooner [S1]."]),
        answer(&["Keep it warm."]),
    ]);
    let reply = json_of(&setup.run(
        Some(&server),
        &["--json", "complete", STARTER, "--at", "15", "--smart"],
    ));
    let text = reply["completion"]["text"].as_str().unwrap();
    assert!(text.starts_with("In summer it peaks sooner [["), "{text}");
    assert!(!text.contains("[S1]"));
    let cited = reply["completion"]["sources"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| s["cited"] == true)
        .count();
    assert_eq!(cited, 1);
    assert_eq!(support::file_hashes(&setup.vault), before);
    let prompt = &messages(&server.requests()[0])[1].1;
    assert!(prompt.contains("[S1] "), "sources given: {prompt}");
    assert!(prompt.contains("Feed once a day when it lives on the counter"));
    assert!(
        !prompt.contains("Signs of a healthy starter"),
        "only the text before the cursor"
    );
    // The proposal inserts the text right after line 15.
    let id = reply["proposal"]["id"].as_str().unwrap();
    ok(&setup.run(None, &["proposals", "apply", id]));
    let now: Vec<String> = setup.text(STARTER).lines().map(str::to_string).collect();
    let old: Vec<&str> = original.lines().collect();
    assert_eq!(now[14], old[14]);
    assert_eq!(now[15], text);
    assert_eq!(now[16..], old[15..]);
    // --print streams it and proposes nothing.
    let out = ok(&setup.run(Some(&server), &["complete", STARTER, "--print"]));
    assert_eq!(out.trim(), "Keep it warm.");
    assert!(ok(&setup.run(None, &["proposals"])).starts_with("no pending proposals"));
}

#[test]
fn dataview_names_only_what_the_vault_has_and_can_go_into_a_note() {
    let setup = setup();
    let server = FakeChat::start(vec![
        answer(&["```dataview\nTABLE pages, rating FROM \"Books\"\n```"]),
        answer(&[
            "TABLE rating, status FROM \"Resources/Books\" WHERE rating >= 5 SORT rating DESC",
        ]),
    ]);
    let out = ok(&setup.run(
        Some(&server),
        &["dataview", "Which books did I rate highest?"],
    ));
    assert_eq!(
        out.trim(),
        "```dataview\nTABLE rating, status FROM \"Resources/Books\" WHERE rating >= 5 SORT rating DESC\n```"
    );
    let sent = server.requests();
    let prompt = &messages(&sent[0])[1].1;
    assert!(
        prompt.contains("Resources/Books") && prompt.contains("rating"),
        "{prompt}"
    );
    let repair = &messages(&sent[1])[3].1;
    assert!(
        repair.contains("folder \"Books\"") && repair.contains("field pages"),
        "{repair}"
    );
    // Still invented after the repair: refused.
    let server = FakeChat::start(vec![
        answer(&["LIST FROM #novels"]),
        answer(&["LIST FROM #novels"]),
    ]);
    let err = failed(&setup.run(Some(&server), &["dataview", "novels?"]));
    assert!(err.contains("tag #novels"), "{err}");
    // Into a note: a proposal at its end.
    let before = support::file_hashes(&setup.vault);
    let server = FakeChat::start(vec![answer(&["LIST FROM \"Journal\""])]);
    let reply = json_of(&setup.run(
        Some(&server),
        &["--json", "dataview", "my journal", "--into", "Home"],
    ));
    assert_eq!(support::file_hashes(&setup.vault), before);
    let diff = reply["proposal"]["changes"][0]["diff"].as_str().unwrap();
    assert!(
        diff.contains("+```dataview\n+LIST FROM \"Journal\"\n+```"),
        "{diff}"
    );
}

#[test]
fn a_batch_lists_its_notes_first_makes_one_proposal_each_and_resumes() {
    let setup = setup();
    let before = support::file_hashes(&setup.vault);
    let args = [
        "batch",
        "--folder",
        "Resources/Books",
        "--preset",
        "grammar",
        "--concurrency",
        "1",
    ];
    let plan = json_of(&setup.run(None, &[&["--json"][..], &args, &["--dry-run"]].concat()));
    assert_eq!(
        plan["notes"],
        json!([
            "Resources/Books/Crime and Punishment.md",
            "Resources/Books/Make It Stick.md",
            "Resources/Books/The Rust Programming Language.md"
        ])
    );
    assert!(plan["estimated_tokens"].as_u64().unwrap() > 100);
    // One reply: the first note gets its proposal, the other two fail (no server left).
    let server = FakeChat::start(vec![answer(&["Corrected text."])]);
    let first = json_of(&setup.run(Some(&server), &[&["--json"][..], &args].concat()));
    assert_eq!(first["outcome"]["proposals"].as_array().unwrap().len(), 1);
    assert_eq!(first["outcome"]["failed"].as_array().unwrap().len(), 2);
    // Again: the first is skipped, the two others are done.
    let server = FakeChat::start(vec![answer(&["Two."]), answer(&["Three."])]);
    let second = json_of(&setup.run(Some(&server), &[&["--json"][..], &args].concat()));
    assert_eq!(
        second["plan"]["done"],
        json!(["Resources/Books/Crime and Punishment.md"])
    );
    assert_eq!(second["outcome"]["proposals"].as_array().unwrap().len(), 2);
    assert_eq!(server.requests().len(), 2);
    assert_eq!(
        support::file_hashes(&setup.vault),
        before,
        "a batch wrote into the vault"
    );
    assert_eq!(
        json_of(&setup.run(None, &["--json", "proposals"]))
            .as_array()
            .unwrap()
            .len(),
        3
    );
}
