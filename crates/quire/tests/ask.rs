//! `quire ask`, `draft`, `reflect`, `questions` and `config` end to end: the real binary on a
//! temporary copy of the sample vault, against a fake OpenAI-compatible server on 127.0.0.1
//! (shared with quire-assist's contract tests). Indexes are BM25-only except for `questions`.

#![allow(clippy::unwrap_used)] // tests and benches stop at the first surprise

use quire_testkit as support;

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;
use support::{FakeChat, answer, json, messages, ok, slow, status};

const QUESTION: &str = "How often do I feed the sourdough starter?";
const STARTER: &str = "Resources/Sourdough Starter.md";

struct Setup {
    _dir: tempfile::TempDir,
    vault: PathBuf,
    index: PathBuf,
}

/// A copy of the sample vault, indexed BM25-only.
fn setup() -> Setup {
    let dir = tempfile::tempdir().unwrap();
    let vault = dir.path().join("vault");
    support::copy_tree(&support::sample_vault(), &vault);
    let index = dir.path().join("index");
    let setup = Setup {
        _dir: dir,
        vault,
        index,
    };
    let out = setup.quire(None).arg("index").output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    setup
}

impl Setup {
    /// `quire --vault … ` with no model and no provider unless `server` is given; nothing of
    /// the developer's environment can send a request elsewhere.
    fn quire(&self, server: Option<&FakeChat>) -> Command {
        let mut c = support::quire(env!("CARGO_BIN_EXE_quire"), &self.vault, &self.index);
        if let Some(server) = server {
            c.env("QUIRE_LLM_BASE_URL", &server.url)
                .env("QUIRE_LLM_MODEL", "fake-model");
        }
        c
    }
}

impl Setup {
    /// Runs quire with `args`, against `server` when given.
    fn run(&self, server: Option<&FakeChat>, args: &[&str]) -> Output {
        self.quire(server).args(args).output().unwrap()
    }
}

/// The `[Sn] path` headers of a prompt's sources.
fn source_paths(user_message: &str) -> Vec<String> {
    user_message
        .lines()
        .filter(|l| l.starts_with("[S"))
        .filter_map(|l| l.split_once("] ").map(|(_, rest)| rest))
        .map(|rest| {
            rest.split(" › ")
                .next()
                .unwrap_or(rest)
                .split(" (line")
                .next()
                .unwrap_or(rest)
                .to_string()
        })
        .collect()
}

#[test]
fn ask_json_gives_the_answer_checked_citations_sources_and_retrieval() {
    let setup = setup();
    let server = FakeChat::start(vec![answer(&["Once a day on the counter [S", "1] [S99]."])]);
    let v = json(&setup.run(Some(&server), &["--json", "ask", QUESTION]));
    assert_eq!(v["answer"], "Once a day on the counter [S1].");
    assert_eq!(v["kind"], "generated");
    assert_eq!(v["invalid_citations"], serde_json::json!(["S99"]));
    let citations = v["citations"].as_array().unwrap();
    assert_eq!(citations.len(), 1);
    let mut keys: Vec<&str> = citations[0]
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    keys.sort();
    assert_eq!(keys, ["end_line", "id", "path", "start_line"]);
    assert_eq!(citations[0]["id"], "S1");
    assert_eq!(citations[0]["path"], STARTER);
    let sources = v["sources"].as_array().unwrap();
    let s1 = sources.iter().find(|s| s["id"] == "S1").unwrap();
    assert_eq!(s1["start_line"], citations[0]["start_line"]);
    assert_eq!(s1["cited"], true);
    assert!(sources.iter().all(|s| s["id"] != "S99"));
    let retrieval = &v["retrieval"];
    assert_eq!(retrieval["mode"], "bm25");
    assert!(retrieval["candidate_notes"].as_u64().unwrap() <= 12);
    assert_eq!(retrieval["limits"]["budget"], 12_000);
    assert_eq!(
        retrieval["sources"].as_u64().unwrap() as usize,
        sources.len()
    );

    let sent = messages(&server.requests()[0]);
    assert_eq!(sent[0].0, "system");
    assert!(sent[0].1.contains("untrusted data"));
    assert!(source_paths(&sent[1].1).contains(&STARTER.to_string()));
}

#[test]
fn ask_streams_the_answer_then_lists_its_sources() {
    let setup = setup();
    let server = FakeChat::start(vec![answer(&["Once a day.", " Less in the fridge."])]);
    let out = ok(&setup.run(Some(&server), &["ask", QUESTION]));
    assert!(
        out.starts_with("Once a day. Less in the fridge.\n"),
        "{out}"
    );
    assert!(out.contains("\nSources:\n  [S1] "));
    assert!(out.contains("warning: the answer cites no source"));
    assert!(out.contains("retrieval: bm25"));
}

#[test]
fn ask_without_a_provider_quotes_the_best_passages_as_an_extractive_answer() {
    let setup = setup();
    let out = ok(&setup.run(None, &["ask", QUESTION]));
    assert!(
        out.starts_with("Extractive answer (no language model is configured)"),
        "{out}"
    );
    assert!(out.contains(&format!("[S1] {STARTER} › ")));
    assert!(out.contains("note: no language model is configured"));
    let v = json(&setup.run(None, &["--json", "ask", QUESTION]));
    assert_eq!(v["kind"], "extractive");
    assert!(!v["citations"].as_array().unwrap().is_empty());
    assert_eq!(v["model"], Value::Null);
}

/// The in-process model (build with `--features local-llm`, model from
/// `scripts/fetch-llm.sh smollm2`) answers when no provider is configured: a generated answer
/// streamed from a real model over the sample vault, whose citations are still checked.
#[cfg(feature = "local-llm")]
#[test]
fn ask_without_a_provider_answers_with_the_local_model_in_a_local_llm_build() {
    let setup = setup();
    let model = std::env::var_os("QUIRE_LLM_MODEL_PATH")
        .map(PathBuf::from)
        .unwrap_or_else(|| dirs_data_dir().join("quire/models/SmolLM2-135M-Instruct.Q4_1.gguf"));
    assert!(
        model.is_file(),
        "run scripts/fetch-llm.sh smollm2 first ({})",
        model.display()
    );
    let run = |args: &[&str]| {
        setup
            .quire(None)
            .env_remove("QUIRE_LLM_LOCAL")
            .env("QUIRE_LLM_MODEL_PATH", &model)
            .args(args)
            .output()
            .unwrap()
    };
    let config = ok(&run(&["config"]));
    assert!(config.contains("llm          local model "), "{config}");
    let v = json(&run(&["--json", "ask", "--budget", "3000", QUESTION]));
    assert_eq!(v["kind"], "generated", "{v}");
    assert!(v["model"].as_str().unwrap().contains("(local)"), "{v}");
    assert!(!v["answer"].as_str().unwrap().trim().is_empty(), "{v}");
    let sources = v["sources"].as_array().unwrap();
    assert!(sources.iter().any(|s| s["path"] == STARTER), "{v}");
    // Whatever the small model cites, only ids of real sources survive as citations.
    for c in v["citations"].as_array().unwrap() {
        assert!(sources.iter().any(|s| s["id"] == c["id"]), "{v}");
    }
}

#[cfg(feature = "local-llm")]
fn dirs_data_dir() -> PathBuf {
    std::env::var_os("XDG_DATA_HOME")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(std::env::var_os("HOME").unwrap()).join(".local/share"))
}

#[test]
fn ask_retries_after_a_429() {
    let setup = setup();
    let server = FakeChat::start(vec![
        status(429, "Retry-After: 0\r\n", "rate limited"),
        answer(&["Once a day [S1]."]),
    ]);
    let v = json(&setup.run(Some(&server), &["--json", "ask", QUESTION]));
    assert_eq!(v["answer"], "Once a day [S1].");
    assert_eq!(server.requests().len(), 2);
}

#[test]
fn ctrl_c_stops_the_request_and_keeps_the_partial_answer() {
    let setup = setup();
    let pieces = ["word "; 60];
    let server = FakeChat::start(vec![slow(&pieces, Duration::from_millis(150))]);
    let mut child = setup
        .quire(Some(&server))
        .args(["ask", QUESTION])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdout = child.stdout.take().unwrap();
    let mut first = [0u8; 5];
    stdout.read_exact(&mut first).unwrap();
    assert_eq!(&first, b"word ", "the answer streams before it is complete");
    let interrupted = Instant::now();
    let kill = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(kill.success());
    let mut rest = String::new();
    stdout.read_to_string(&mut rest).unwrap();
    let status = child.wait().unwrap();
    assert!(
        interrupted.elapsed() < Duration::from_secs(3),
        "{:?}",
        interrupted.elapsed()
    );
    assert_eq!(status.code(), Some(130));
    let mut stderr = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut stderr)
        .unwrap();
    assert!(stderr.contains("cancelled"), "{stderr}");
    let served = server.finish();
    assert!(served[0].pieces_sent < pieces.len(), "{served:?}");
}

#[test]
fn ask_leaves_out_a_passage_edited_after_indexing() {
    let setup = setup();
    support::edit_file(
        &setup.vault.join(STARTER),
        support::FEEDING,
        "Feed it twice a day",
    );
    let server = FakeChat::start(vec![answer(&["My notes do not say."])]);
    let v = json(&setup.run(Some(&server), &["--json", "ask", QUESTION]));
    let dropped = v["retrieval"]["dropped"].as_array().unwrap();
    assert!(
        dropped
            .iter()
            .any(|d| d["path"] == STARTER && d["reason"] == "changed"),
        "{dropped:?}"
    );
    let body = server.requests()[0].to_string();
    assert!(
        !body.contains("once a day when it lives"),
        "the stale text was sent"
    );
    assert!(!body.contains("twice a day"), "an unverified text was sent");
}

#[test]
fn a_date_phrase_limits_ask_to_that_weeks_daily_notes() {
    let setup = setup();
    let server = FakeChat::start(vec![answer(&["You ran and baked [S1]."])]);
    let v = json(&setup.run(
        Some(&server),
        &[
            "--json",
            "ask",
            "What did I do last week?",
            "--today",
            "2026-12-01",
        ],
    ));
    assert_eq!(v["retrieval"]["date_range"]["from"], "2026-11-23");
    assert_eq!(v["retrieval"]["date_range"]["to"], "2026-11-29");
    let sent = messages(&server.requests()[0]);
    let mut paths = source_paths(&sent[1].1);
    paths.sort();
    paths.dedup();
    let expected: Vec<String> = (23..=29)
        .map(|d| format!("Journal/2026-11-{d}.md"))
        .collect();
    assert_eq!(paths, expected);
}

#[test]
fn one_note_asked_keeps_to_that_note_even_with_a_date_phrase() {
    let setup = setup();
    let server = FakeChat::start(vec![answer(&["Green tea at 80 °C [S1]."])]);
    let v = json(&setup.run(
        Some(&server),
        &[
            "--json",
            "ask",
            "What did I write last week about water temperature?",
            "--note",
            "Tea Basics",
            "--today",
            "2026-11-24",
        ],
    ));
    let paths: Vec<&str> = v["sources"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["path"].as_str().unwrap())
        .collect();
    assert!(!paths.is_empty(), "{v}");
    assert!(
        paths.iter().all(|p| *p == "Resources/Tea Basics.md"),
        "{paths:?}"
    );
    assert!(v["retrieval"]["date_range"].is_null(), "{v}");
}

#[test]
fn a_date_phrase_in_a_how_to_question_does_not_limit_ask_to_daily_notes() {
    // The tasks docs answer both questions; neither is about what the user did on those days.
    let dir = tempfile::tempdir().unwrap();
    let vault = dir.path().join("vault");
    support::copy_tree(
        &support::corpora().join("vaults/obsidian-tasks-docs/vault"),
        &vault,
    );
    let index = dir.path().join("index");
    let quire = || support::quire(env!("CARGO_BIN_EXE_quire"), &vault, &index);
    support::ok(&quire().arg("index").output().unwrap());
    for question in [
        "What happens to tasks that are due today?",
        "How do I list this week's tasks?",
    ] {
        let v = json(
            &quire()
                .args(["--json", "ask", question, "--today", "2026-12-01"])
                .output()
                .unwrap(),
        );
        assert_eq!(v["kind"], "extractive", "{question}: {v}");
        assert!(v["retrieval"]["date_range"].is_null(), "{question}: {v}");
        let sources = v["sources"].as_array().unwrap();
        assert!(sources.len() >= 3, "{question}: {v}");
        assert!(
            sources
                .iter()
                .any(|s| s["path"].as_str().unwrap().contains("Dates")
                    || s["path"].as_str().unwrap().contains("Queries")
                    || s["path"].as_str().unwrap().contains("Filters")),
            "{question}: the answering pages are about dates, queries or filters: {v}"
        );
    }
    // About the user's days, in a vault without daily notes for them: widened, and said so.
    let v = json(
        &quire()
            .args([
                "--json",
                "ask",
                "What did I do yesterday?",
                "--today",
                "2026-12-01",
            ])
            .output()
            .unwrap(),
    );
    assert!(v["retrieval"]["date_range"].is_null(), "{v}");
    let warnings = v["warnings"].to_string();
    assert!(
        warnings.contains("no daily notes between 2026-11-30 and 2026-11-30"),
        "{v}"
    );
}

#[test]
fn ask_expand_searches_with_a_passage_the_model_writes_first() {
    let setup = setup();
    // No word of the question is in the starter's note, and BM25 alone does not find it.
    let question = "How often should the bread culture get its meal?";
    let passage = "Feed the sourdough starter once a day with equal weights of flour and water.";
    let server = FakeChat::start(vec![answer(&[passage]), answer(&["Once a day [S1]."])]);
    let v = json(&setup.run(Some(&server), &["--json", "ask", "--expand", question]));
    let requests = server.requests();
    assert_eq!(
        requests.len(),
        2,
        "one request for the passage, one for the answer"
    );
    let first = messages(&requests[0]);
    assert!(first.last().unwrap().1.contains(question), "{first:?}");
    assert!(
        !first.iter().any(|(_, text)| text.contains("[S1]")),
        "the passage request shows no note: {first:?}"
    );
    let second = messages(&requests[1]);
    let sources = source_paths(&second.last().unwrap().1);
    assert_eq!(
        sources.first().map(String::as_str),
        Some(STARTER),
        "{sources:?}"
    );
    assert_eq!(v["retrieval"]["expansion"], passage);
    assert!(
        v["retrieval"]["notes"]
            .to_string()
            .contains("expand: searched with the question"),
        "{v}"
    );
    assert_eq!(v["citations"][0]["path"], STARTER);

    // Without --expand the same question does not reach the note; without a model --expand
    // is refused, with the reason.
    let v = json(&setup.run(None, &["--json", "ask", question]));
    let paths: Vec<&str> = v["sources"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|s| s["path"].as_str())
        .collect();
    assert!(!paths.contains(&STARTER), "{paths:?}");
    let out = setup.run(None, &["ask", "--expand", question]);
    assert!(!out.status.success());
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("needs a language model"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn offline_ask_says_when_the_notes_do_not_cover_the_question() {
    let setup = setup();
    let v = json(&setup.run(
        None,
        &["--json", "ask", "Who won the 2018 football World Cup?"],
    ));
    assert_eq!(v["kind"], "extractive", "{v}");
    assert_eq!(v["covered"], false, "{v}");
    assert!(v["evidence"]["weak"].as_bool().unwrap(), "{v}");
    assert!(
        v["answer"]
            .as_str()
            .unwrap()
            .starts_with("Your notes do not seem to cover this question"),
        "{v}"
    );
    assert!(
        v["warnings"].to_string().contains("probably not an answer"),
        "{v}"
    );
    let v = json(&setup.run(
        None,
        &[
            "--json",
            "ask",
            "How often do I feed the sourdough starter?",
        ],
    ));
    assert_eq!(v["covered"], true, "{v}");
    assert!(v["evidence"]["coverage"].as_f64().unwrap() >= 0.4, "{v}");
    assert!(
        v["answer"]
            .as_str()
            .unwrap()
            .starts_with("Extractive answer"),
        "{v}"
    );
}

#[test]
fn chat_carries_follow_ups_and_checks_every_turn() {
    let setup = setup();
    let server = FakeChat::start(vec![
        answer(&["Once a day [S1]."]),
        answer(&["1:3:3 in summer [S2] [S42]."]),
    ]);
    let mut child = setup
        .quire(Some(&server))
        .args(["--json", "ask", QUESTION, "--chat"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    use std::io::Write;
    child
        .stdin
        .take()
        .unwrap()
        .write_all(b"And the ratio in summer?\n\n")
        .unwrap();
    let out = child.wait_with_output().unwrap();
    let text = ok(&out);
    let turns: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(turns.len(), 2);
    assert_eq!(turns[0]["answer"], "Once a day [S1].");
    assert_eq!(turns[1]["answer"], "1:3:3 in summer [S2].");
    assert_eq!(turns[1]["invalid_citations"], serde_json::json!(["S42"]));
    let sent = messages(&server.requests()[1]);
    let roles: Vec<&str> = sent.iter().map(|(r, _)| r.as_str()).collect();
    assert_eq!(roles, ["system", "user", "assistant", "user"]);
    assert_eq!(sent[2].1, "Once a day [S1].");
    assert!(sent[3].1.ends_with("Question: And the ratio in summer?"));
}

#[test]
fn draft_insert_writes_under_the_heading_and_keeps_a_backup_outside_the_vault() {
    let setup = setup();
    let note = "Projects/Sourdough Experiment.md";
    let original = std::fs::read_to_string(setup.vault.join(note)).unwrap();
    let server = FakeChat::start(vec![answer(&[
        "Bubbles is fed at 1:5:5 [S1].\n\nThe rest stays the same.",
    ])]);
    let out = ok(&setup.run(
        Some(&server),
        &[
            "draft",
            "Sourdough Experiment",
            "--heading",
            "## Setup",
            "--insert",
        ],
    ));
    assert!(
        out.contains("inserted under “Setup” at Projects/Sourdough Experiment.md:"),
        "{out}"
    );
    let backup_dir = setup.index.join("backups");
    assert!(out.contains(&backup_dir.display().to_string()), "{out}");

    let now = std::fs::read_to_string(setup.vault.join(note)).unwrap();
    let sent = messages(&server.requests()[0]);
    let s1 = source_paths(&sent[1].1)[0].clone();
    let link = Path::new(&s1)
        .file_stem()
        .unwrap()
        .to_string_lossy()
        .into_owned();
    let draft = format!("Bubbles is fed at 1:5:5 [[{link}]].\n\nThe rest stays the same.");
    assert!(now.contains(&draft), "{now}");
    assert_eq!(now.replacen(&format!("\n\n{draft}"), "", 1), original);
    let setup_at = now.find("## Setup").unwrap();
    let draft_at = now.find(&draft).unwrap();
    let next = now[setup_at + 1..]
        .find("\n## ")
        .map(|i| i + setup_at + 1)
        .unwrap();
    assert!(setup_at < draft_at && draft_at < next);
    assert!(
        !source_paths(&sent[1].1).contains(&note.to_string()),
        "the note itself is not a source"
    );

    let backups: Vec<PathBuf> = std::fs::read_dir(&backup_dir)
        .unwrap()
        .map(|e| e.unwrap().path().join(note))
        .collect();
    assert_eq!(backups.len(), 1);
    assert_eq!(std::fs::read_to_string(&backups[0]).unwrap(), original);
}

#[test]
fn draft_insert_refuses_when_the_note_changes_while_the_model_writes() {
    let setup = setup();
    let file = setup.vault.join("Projects/Sourdough Experiment.md");
    let edited = format!(
        "{}\nWritten in Obsidian meanwhile.\n",
        std::fs::read_to_string(&file).unwrap()
    );
    let (hook_file, hook_text) = (file.clone(), edited.clone());
    let server = FakeChat::with_hook(vec![answer(&["A draft [S1]."])], move |_| {
        std::fs::write(&hook_file, &hook_text).unwrap();
    });
    let out = setup
        .quire(Some(&server))
        .args([
            "draft",
            "Projects/Sourdough Experiment.md",
            "--heading",
            "Setup",
            "--insert",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("changed since quire read it"), "{stderr}");
    assert_eq!(std::fs::read_to_string(&file).unwrap(), edited);
    assert!(!setup.index.join("backups").exists());
}

#[test]
fn reflect_sends_only_that_weeks_daily_notes_and_links_each_point_to_its_day() {
    let setup = setup();
    let server = FakeChat::start(vec![answer(&[
        "## What happened\n- Easy run instead of intervals [S2]\n",
    ])]);
    let out = ok(&setup.run(Some(&server), &["reflect", "--week", "2026-W48"]));
    assert!(
        out.starts_with("## What happened\n- Easy run instead of intervals [[2026-11-24]]\n"),
        "{out}"
    );
    assert!(out.contains("[S2] 2026-11-24  Journal/2026-11-24.md  (cited)"));
    let sent = messages(&server.requests()[0]);
    let paths = source_paths(&sent[1].1);
    let expected: Vec<String> = (23..=29)
        .map(|d| format!("Journal/2026-11-{d}.md"))
        .collect();
    assert_eq!(paths, expected);

    let range = json(&setup.run(
        None,
        &[
            "--json",
            "reflect",
            "--from",
            "2026-11-16",
            "--to",
            "2026-11-17",
        ],
    ));
    assert_eq!(range["kind"], "extractive");
    assert_eq!(range["days"].as_array().unwrap().len(), 2);
}

#[test]
fn config_shows_the_effective_provider_but_never_the_key() {
    let setup = setup();
    let secret = "sk-test-never-printed-1234";
    let configured = |json: bool| {
        let mut c = setup.quire(None);
        c.env("QUIRE_LLM_BASE_URL", "http://127.0.0.1:9/v1")
            .env("QUIRE_LLM_MODEL", "tiny")
            .env("QUIRE_LLM_API_KEY", secret);
        if json {
            c.arg("--json");
        }
        c.arg("config").output().unwrap()
    };
    let v = json(&configured(true));
    assert_eq!(v["llm"]["base_url"], "http://127.0.0.1:9/v1");
    assert_eq!(v["llm"]["model"], "tiny");
    assert_eq!(v["llm"]["api_key_env"], "QUIRE_LLM_API_KEY");
    assert_eq!(v["llm"]["api_key_set"], true);
    assert_eq!(v["index_exists"], true);
    let text = ok(&configured(false));
    assert!(
        text.contains("model tiny; key from $QUIRE_LLM_API_KEY (set)"),
        "{text}"
    );
    assert!(!text.contains(secret) && !v.to_string().contains(secret));

    let preset = json(
        &setup
            .quire(None)
            .env("QUIRE_LLM_PRESET", "ollama")
            .env("QUIRE_LLM_MODEL", "llama3.2")
            .args(["--json", "config"])
            .output()
            .unwrap(),
    );
    assert_eq!(preset["llm"]["provider"], "ollama");
    let offline = json(&setup.run(None, &["--json", "config"]));
    assert_eq!(offline["llm"], Value::Null);
}

#[test]
fn questions_over_a_folder_with_the_local_model() {
    let model = quire_embed::default_e5_path();
    if !model.exists() {
        eprintln!(
            "skipped: no embedding model at {} (scripts/fetch-model.sh)",
            model.display()
        );
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let vault = dir.path().join("vault");
    support::copy_notes(
        &[
            "Resources/Recipes/Country Loaf.md",
            "Resources/Recipes/Miso Soup.md",
            "Resources/Tea Basics.md",
            "Areas/Sleep.md",
        ],
        &vault,
    );
    let index = dir.path().join("index");
    let setup = Setup {
        _dir: dir,
        vault,
        index,
    };
    let run = |server: Option<&FakeChat>, args: &[&str]| {
        let mut c = setup.quire(server);
        c.arg("--model").arg(&model).args(args);
        c.output().unwrap()
    };
    ok(&run(None, &["index"]));
    let offline = json(&run(None, &["--json", "questions", "Resources"]));
    assert_eq!(offline["kind"], "extractive");
    assert_eq!(offline["scope"], "Resources/");
    let k = offline["k"].as_u64().unwrap() as usize;
    let topics = offline["topics"].as_array().unwrap();
    assert_eq!(topics.len(), k);
    for topic in topics {
        assert_eq!(topic["question"], Value::Null);
        assert!(
            topic["central"]["path"]
                .as_str()
                .unwrap()
                .starts_with("Resources/")
        );
        assert!(!topic["central_text"].as_str().unwrap().is_empty());
    }
    let script = (0..k)
        .map(|n| answer(&[&format!("What is topic {n} about?")]))
        .collect();
    let server = FakeChat::start(script);
    let out = ok(&run(Some(&server), &["questions", "Resources/"]));
    assert!(out.contains("1. What is topic 0 about?"), "{out}");
    assert_eq!(server.requests().len(), k);
}
