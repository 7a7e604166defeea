//! `questions` over a small vault indexed with the real local embedding model (the one
//! `scripts/fetch-model.sh` installs; without it the model test says so and passes), against a
//! fake OpenAI-compatible server on 127.0.0.1.

#![allow(clippy::unwrap_used)] // tests and benches stop at the first surprise

use quire_testkit as support;

use std::path::PathBuf;
use std::sync::Arc;

use quire_assist::context::SourceReader;
use quire_assist::prompt;
use quire_assist::questions::{Scope, ask_questions, cluster_count, load_paragraphs, topics};
use quire_index::{IndexLocation, SyncOptions};
use quire_llm::{CancelToken, OpenAiCompatible, Provider};
use quire_search::Searcher;
use support::{FakeChat, answer, messages};

/// A vault of a few notes from the sample vault, in two folders.
fn small_vault(dir: &std::path::Path) -> PathBuf {
    let root = dir.join("vault");
    support::copy_notes(
        &[
            "Resources/Recipes/Country Loaf.md",
            "Resources/Recipes/Miso Soup.md",
            "Resources/Sourdough Starter.md",
            "Resources/Tea Basics.md",
            "Areas/Sleep.md",
        ],
        &root,
    );
    root
}

#[test]
fn each_topic_gets_one_question_from_its_own_passages() {
    let model_path = quire_embed::default_e5_path();
    if !model_path.exists() {
        eprintln!(
            "skipped: no embedding model at {} (scripts/fetch-model.sh)",
            model_path.display()
        );
        return;
    }
    let embedder = Arc::new(quire_embed::E5Model::load(&model_path).unwrap());
    let dir = tempfile::tempdir().unwrap();
    let root = small_vault(dir.path());
    let index = IndexLocation::new(dir.path().join("index"));
    let options = SyncOptions {
        embedder: Some(embedder),
        ..SyncOptions::default()
    };
    let stats = quire_index::sync(&root, &index, &options, &()).unwrap();
    assert!(stats.chunks_embedded > 0);

    // The embedder is not needed any more: the vectors come from the index.
    let searcher = Searcher::open(&index).unwrap();
    let reader = SourceReader::open(&root, &Default::default()).unwrap();
    let scope = Scope::Folder("Resources".into());
    let (paragraphs, dropped) = load_paragraphs(&searcher, &reader, &scope).unwrap();
    assert!(dropped.is_empty());
    assert!(
        paragraphs
            .iter()
            .all(|p| p.passage.path.starts_with("Resources/"))
    );
    let k = cluster_count(paragraphs.len());
    assert!(
        (2..=8).contains(&k),
        "{} paragraphs, k = {k}",
        paragraphs.len()
    );
    let groups = topics(paragraphs.clone(), k);
    assert_eq!(groups.len(), k);
    assert_eq!(groups.iter().map(Vec::len).sum::<usize>(), paragraphs.len());
    // Reproducible: the same paragraphs make the same topics.
    assert_eq!(topics(paragraphs, k), groups);

    let script = (1..=k)
        .map(|n| {
            let q = format!("1. \"Question {n}?\"\nAn answer the model should not have written.");
            answer(&[&q])
        })
        .collect();
    let server = FakeChat::start(script);
    let model = OpenAiCompatible::new(Provider::new(&server.url, "fake-model"));
    let mut seen = 0;
    let found = ask_questions(Some(&model), &groups, &CancelToken::new(), &mut |_| {
        seen += 1
    })
    .unwrap();
    assert_eq!(seen, k);
    let requests = server.requests();
    assert_eq!(requests.len(), k, "one request per topic");
    for (n, (topic, request)) in found.iter().zip(&requests).enumerate() {
        assert_eq!(
            topic.question.as_deref(),
            Some(format!("Question {}?", n + 1).as_str())
        );
        let sent = messages(request);
        assert_eq!(sent[0].1, prompt::system(prompt::QUESTION_SYSTEM).content);
        assert!(sent[0].1.contains("language of the passages"));
        // The passages sent are the topic's own, most central first.
        assert!(sent[1].1.contains(&format!("[S1] {}", topic.central.path)));
        for other in found.iter().filter(|t| t.number != topic.number) {
            let header = format!(
                "{} (lines {}–{})",
                other.central.path, other.central.start_line, other.central.end_line
            );
            assert!(
                !sent[1].1.contains(&header),
                "topic {} got topic {}'s passage",
                topic.number,
                other.number
            );
        }
    }

    // Offline: each topic shows its most central passage instead of a question.
    let offline = ask_questions(None, &groups, &CancelToken::new(), &mut |_| {}).unwrap();
    for (topic, passages) in offline.iter().zip(&groups) {
        assert_eq!(topic.question, None);
        assert_eq!(topic.central.start_line, passages[0].start_line);
        assert!(!topic.central_text.is_empty());
    }
}

#[test]
fn without_vectors_in_the_index_questions_says_what_to_do() {
    let dir = tempfile::tempdir().unwrap();
    let root = small_vault(dir.path());
    let index = IndexLocation::new(dir.path().join("index"));
    quire_index::sync(&root, &index, &SyncOptions::default(), &()).unwrap();
    let searcher = Searcher::open(&index).unwrap();
    let reader = SourceReader::open(&root, &Default::default()).unwrap();
    let err =
        load_paragraphs(&searcher, &reader, &Scope::Note("Areas/Sleep.md".into())).unwrap_err();
    assert!(err.to_string().contains("quire index"), "{err}");
}
