//! The deep audit's map against the scripted fake server: malformed JSON repaired once, a reply
//! that stays invalid reported (never guessed), invented links dropped and counted, a 429
//! midway retried, Ctrl-C keeping what was done, and a second run sending nothing.

#![allow(clippy::unwrap_used)] // tests stop at the first surprise

use quire_testkit as support;

use quire_assist::audit::{AuditNote, MapOptions, MapOutcome, MapPlan, plan, run_map};
use quire_index::AuditCache;
use quire_llm::{CancelToken, ChatModel, OpenAiCompatible, Provider};
use serde_json::{Value, json};
use support::{FakeChat, Reply, answer, messages, status};

fn notes() -> Vec<AuditNote> {
    ["Alpha", "Beta", "Gamma", "Delta"]
        .iter()
        .map(|t| AuditNote {
            path: format!("Notes/{t}.md"),
            title: t.to_string(),
            text: format!("# {t}\n\nWhat {t} is about, in one line."),
        })
        .collect()
}

fn resolve(text: &str) -> Option<String> {
    ["Alpha", "Beta", "Gamma", "Delta"]
        .iter()
        .find(|t| t.eq_ignore_ascii_case(text))
        .map(|t| format!("Notes/{t}.md"))
}

/// Two notes per request, one request at a time.
fn options() -> MapOptions {
    MapOptions {
        batch_tokens: 50,
        concurrency: 1,
        ..MapOptions::default()
    }
}

fn record(id: &str, links: &[&str]) -> Value {
    json!({"id": id, "main_idea": format!("The idea of {id}."), "key_points": ["a point"],
           "entities": ["Ada"], "quality": {"score": 3, "issues": ["no sources"]},
           "suggested_tags": ["#topic"], "topics": ["greek letters"], "suggested_links": links})
}

fn reply(records: &[Value]) -> Reply {
    let text = json!({ "records": records }).to_string();
    let (a, b) = text.split_at(text.len() / 2);
    answer(&[a, b])
}

struct Run {
    outcome: MapOutcome,
    plan: MapPlan,
}

fn model(server: &FakeChat) -> OpenAiCompatible {
    OpenAiCompatible::new(Provider::new(&server.url, "fake-model"))
}

fn run(cache: &AuditCache, model: &OpenAiCompatible, cancel: &CancelToken) -> Run {
    let notes = notes();
    let plan = plan(&notes, cache, &model.name(), None, &options()).unwrap();
    let outcome = run_map(
        model,
        &notes,
        &plan,
        cache,
        &resolve,
        &options(),
        cancel,
        &|_, _| {},
    )
    .unwrap();
    Run { outcome, plan }
}

#[test]
fn malformed_json_is_repaired_invented_links_dropped_a_429_retried_and_a_second_run_sends_nothing()
{
    let dir = tempfile::tempdir().unwrap();
    let cache = AuditCache::open(dir.path()).unwrap();
    let server = FakeChat::start(vec![
        status(429, "Retry-After: 0\r\n", "slow down"),
        answer(&["Sure! Here are the records: {\"records\": [", "oops"]),
        reply(&[record("N1", &["Beta", "Nowhere"]), record("N2", &[])]),
        reply(&[
            record("N1", &["[[Alpha]]"]),
            record("N2", &["Invented note"]),
        ]),
    ]);
    let model = model(&server);
    let first = run(&cache, &model, &CancelToken::new());
    assert_eq!(first.plan.requests, 2);
    assert_eq!(first.plan.to_send, 4);
    assert_eq!(
        server.requests().len(),
        4,
        "the 429, a bad reply, its repair, the second batch"
    );
    let outcome = &first.outcome;
    assert_eq!(outcome.requests, 3, "the 429 is retried inside one request");
    assert_eq!(outcome.repaired, 1);
    assert!(outcome.failed.is_empty(), "{:?}", outcome.failed);
    assert_eq!(outcome.records.len(), 4);
    assert_eq!(outcome.records[0].path, "Notes/Alpha.md");
    assert_eq!(outcome.records[0].suggested_links, ["Notes/Beta.md"]);
    assert_eq!(outcome.records[2].suggested_links, ["Notes/Alpha.md"]);
    assert_eq!(outcome.invented_links, 2);
    assert_eq!(outcome.records[1].suggested_tags, ["topic"]);
    assert_eq!(cache.len().unwrap(), 4);

    // What was sent: a JSON schema, the notes fenced as data, the repair naming the error.
    let requests = server.requests();
    assert_eq!(requests[1]["response_format"]["type"], "json_schema");
    let sent = messages(&requests[1]);
    assert!(sent[0].1.contains("never an instruction"));
    assert!(
        sent[1].1.contains("[N1] Alpha\n⟦⟦⟦\n# Alpha"),
        "{}",
        sent[1].1
    );
    assert!(sent[1].1.contains("[N2] Beta"));
    assert!(
        !sent[1].1.contains("Gamma\n⟦⟦⟦"),
        "Gamma is in the second batch"
    );
    let repair = messages(&requests[2]);
    assert_eq!(repair[2].0, "assistant");
    assert!(
        repair[3].1.contains("not the JSON object asked for"),
        "{}",
        repair[3].1
    );

    // Again: every note is cached, nothing is sent (the server has no reply left).
    let second = run(&cache, &model, &CancelToken::new());
    assert_eq!(second.plan.cached, 4);
    assert_eq!(second.plan.requests, 0);
    assert_eq!(server.requests().len(), 4);
    assert_eq!(second.outcome.requests, 0);
    assert_eq!(second.outcome.from_cache, 4);
    assert_eq!(second.outcome.records, first.outcome.records);
}

#[test]
fn a_reply_still_invalid_after_its_repair_is_reported_and_nothing_is_guessed() {
    let dir = tempfile::tempdir().unwrap();
    let cache = AuditCache::open(dir.path()).unwrap();
    let server = FakeChat::start(vec![
        reply(&[record("N1", &[])]),
        reply(&[record("N1", &[]), record("N7", &[])]),
        reply(&[record("N1", &[]), record("N2", &[])]),
    ]);
    let outcome = run(&cache, &model(&server), &CancelToken::new()).outcome;
    assert_eq!(outcome.failed.len(), 1);
    assert_eq!(outcome.failed[0].paths, ["Notes/Alpha.md", "Notes/Beta.md"]);
    assert!(
        outcome.failed[0].reason.contains("N7"),
        "{}",
        outcome.failed[0].reason
    );
    let paths: Vec<&str> = outcome.records.iter().map(|r| r.path.as_str()).collect();
    assert_eq!(paths, ["Notes/Gamma.md", "Notes/Delta.md"]);
    assert_eq!(cache.len().unwrap(), 2, "only validated records are stored");
}

#[test]
fn ctrl_c_midway_keeps_the_records_already_made() {
    let dir = tempfile::tempdir().unwrap();
    let cache = AuditCache::open(dir.path()).unwrap();
    let cancel = CancelToken::new();
    let hook = cancel.clone();
    let server = FakeChat::with_hook(
        vec![
            reply(&[record("N1", &[]), record("N2", &[])]),
            support::slow(
                &["{\"records\": [", "]}"],
                std::time::Duration::from_secs(2),
            ),
        ],
        move |n| {
            if n == 1 {
                hook.cancel();
            }
        },
    );
    let model = model(&server);
    let run = run(&cache, &model, &cancel);
    assert!(run.outcome.cancelled);
    assert_eq!(run.outcome.records.len(), 2);
    assert!(
        run.outcome.failed.is_empty(),
        "a cancelled batch is not a failure"
    );
    assert_eq!(cache.len().unwrap(), 2);
    // The next run sends only the rest.
    let notes = notes();
    let again = plan(&notes, &cache, &model.name(), None, &options());
    assert_eq!(again.unwrap().to_send, 2);
}
