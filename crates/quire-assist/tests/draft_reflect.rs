//! `draft` (retrieval, wikilinked sources, the guarded atomic insert) and `reflect` (a week's
//! daily notes, days cited) against a fake OpenAI-compatible server on 127.0.0.1.

#![allow(clippy::unwrap_used)] // tests and benches stop at the first surprise

use quire_testkit as support;

use std::path::{Path, PathBuf};

use quire_assist::AssistError;
use quire_assist::ask::AnswerKind;
use quire_assist::context::{self, ContextLimits, RetrievalRequest, SourceReader};
use quire_assist::dates::parse_iso_week;
use quire_assist::draft::{DraftTarget, write_draft};
use quire_assist::prompt;
use quire_assist::reflect::{daily_notes_in, offline_reflection, reflect};
use quire_index::{IndexLocation, SyncOptions};
use quire_llm::{CancelToken, OpenAiCompatible, Provider};
use quire_search::Searcher;
use support::{FakeChat, answer, messages};

const STARTER: &str = "Resources/Sourdough Starter.md";

fn vault() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("vault");
    support::copy_tree(&support::sample_vault(), &root);
    (dir, root)
}

fn reader(root: &Path) -> SourceReader {
    SourceReader::open(root, &Default::default()).unwrap()
}

fn model(server: &FakeChat) -> OpenAiCompatible {
    OpenAiCompatible::new(Provider::new(&server.url, "fake-model"))
}

#[test]
fn a_draft_retrieves_with_the_heading_and_cites_other_notes_as_wikilinks() {
    let (dir, root) = vault();
    let index = IndexLocation::new(dir.path().join("index"));
    quire_index::sync(&root, &index, &SyncOptions::default(), &()).unwrap();
    let reader = reader(&root);
    let target =
        DraftTarget::read(&reader, "Projects/Sourdough Experiment.md", "## Setup").unwrap();
    let query = target.query();
    assert!(
        query.contains("Setup") && query.contains("Sourdough Experiment"),
        "{query}"
    );

    let searcher = Searcher::open(&index).unwrap();
    let mut request = RetrievalRequest::new(query, ContextLimits::default());
    request.exclude = vec![target.path.clone()];
    let retrieval = context::retrieve(&searcher, &request).unwrap();
    drop(searcher);
    let context = context::materialize(&reader, retrieval, &request.limits);
    assert!(context.passages.iter().all(|p| p.path != target.path));
    let starter = context
        .passages
        .iter()
        .position(|p| p.path == STARTER)
        .expect("the starter note is a source");
    let id = format!("S{}", starter + 1);

    let server = FakeChat::start(vec![answer(&[
        "Bubbles is fed at 1:5:5 [",
        &id,
        "]. It doubles in six hours [S99].",
    ])]);
    let mut shown = String::new();
    let draft = write_draft(
        Some(&model(&server)),
        &target,
        context,
        &CancelToken::new(),
        &mut |t| shown.push_str(t),
    )
    .unwrap();
    assert_eq!(draft.kind, AnswerKind::Generated);
    assert_eq!(
        draft.draft,
        "Bubbles is fed at 1:5:5 [[Sourdough Starter]]. It doubles in six hours."
    );
    assert_eq!(shown, draft.draft);
    assert_eq!(draft.citations, [id]);
    assert_eq!(draft.invalid_citations, ["S99"]);

    let sent = messages(&server.requests()[0]);
    assert_eq!(sent[0].1, prompt::system(prompt::DRAFT_SYSTEM).content);
    assert!(
        sent[1]
            .1
            .contains("Section to write: Sourdough Experiment › Setup")
    );
    assert!(sent[1].1.contains(&format!("[S{}] {STARTER}", starter + 1)));
}

#[test]
fn a_draft_is_proposed_only_from_the_bytes_its_target_read() {
    let (_dir, root) = vault();
    let target = DraftTarget::read(&reader(&root), STARTER, "## Feeding schedule").unwrap();
    let original = std::fs::read(root.join(STARTER)).unwrap();
    assert_eq!(target.unchanged_bytes().unwrap(), original);
    let edited = format!(
        "{}\nA line written meanwhile.\n",
        String::from_utf8(original).unwrap()
    );
    std::fs::write(root.join(STARTER), &edited).unwrap();
    let err = target.unchanged_bytes().unwrap_err();
    assert!(matches!(err, AssistError::Changed { .. }), "{err}");
    assert!(err.to_string().contains("nothing was written"));
    assert_eq!(std::fs::read_to_string(root.join(STARTER)).unwrap(), edited);
}

#[test]
fn a_week_sends_only_its_daily_notes_and_every_point_links_its_day() {
    let (_dir, root) = vault();
    let week = parse_iso_week("2026-W48").unwrap();
    let (days, skipped) = daily_notes_in(&reader(&root), week).unwrap();
    assert!(skipped.is_empty());
    let dates: Vec<String> = days.iter().map(|d| d.date.to_string()).collect();
    assert_eq!(
        dates,
        [
            "2026-11-23",
            "2026-11-24",
            "2026-11-25",
            "2026-11-26",
            "2026-11-27",
            "2026-11-28",
            "2026-11-29"
        ]
    );
    let server = FakeChat::start(vec![answer(&[
        "## What happened\n- Easy run instead of intervals [S",
        "2]\n- Crackers for the party [S42]\n",
    ])]);
    let mut shown = String::new();
    let reflection = reflect(
        Some(&model(&server)),
        week,
        &days,
        12_000,
        &CancelToken::new(),
        &mut |t| shown.push_str(t),
    )
    .unwrap();
    assert_eq!(
        reflection.reflection,
        "## What happened\n- Easy run instead of intervals [[2026-11-24]]\n- Crackers for the party\n"
    );
    assert_eq!(shown, reflection.reflection);
    assert_eq!(reflection.invalid_citations, ["S42"]);
    assert!(
        reflection
            .warnings
            .iter()
            .any(|w| w.contains("1 points cite no day"))
    );
    assert!(reflection.days.iter().find(|d| d.id == "S2").unwrap().cited);

    let sent = messages(&server.requests()[0]);
    assert_eq!(sent[0].1, prompt::system(prompt::REFLECT_SYSTEM).content);
    let user = &sent[1].1;
    for day in 23..=29 {
        assert!(
            user.contains(&format!("Journal/2026-11-{day}.md")),
            "day {day}"
        );
    }
    for day in 16..=22 {
        assert!(
            !user.contains(&format!("2026-11-{day}")),
            "day {day} of the week before was sent"
        );
    }
    assert!(user.contains("[S2] Journal/2026-11-24.md › 2026-11-24 (Tuesday)"));
}

#[test]
fn the_offline_reflection_lists_open_loops_with_their_days() {
    let (_dir, root) = vault();
    let week = parse_iso_week("2026-W48").unwrap();
    let (days, _) = daily_notes_in(&reader(&root), week).unwrap();
    let text = offline_reflection(week, &days);
    assert!(text.contains("no language model is configured"));
    let loops = text.split("## Open loops").nth(1).unwrap();
    // Ticked on 2026-11-26: no longer an open loop.
    assert!(!loops.contains("Make the code-block tests green"), "{text}");
    assert!(
        loops.contains("- [ ] Decide on the ryokan night [[2026-11-25]]"),
        "{text}"
    );
    // Carried from day to day: listed once, at the last day it is written on.
    assert_eq!(
        loops.matches("Book the tea ceremony class").count(),
        1,
        "{text}"
    );
    assert!(loops.contains("- [ ] Book the tea ceremony class [[2026-11-29]]"));
    assert!(text.contains("## Themes"));
    assert!(!text.contains("2026-11-22"));
}
