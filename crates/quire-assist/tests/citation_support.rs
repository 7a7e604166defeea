//! Citations checked against the text (a citation must name a passage that says what the
//! sentence says): the answer's sentences against the
//! passages of the sample vault's Sourdough and Running notes, with the scripted fake chat
//! server and a BM25-only index (so the check is words only, and says so).

#![allow(clippy::unwrap_used)] // tests stop at the first surprise

use quire_testkit as support;

use quire_assist::ask::{AnswerKind, Conversation};
use quire_assist::context::{self, ContextLimits, RetrievalRequest, SourceReader};
use quire_assist::support::{SupportMethod, SupportStatus};
use quire_assist::{Answer, FrozenContext};
use quire_index::{IndexLocation, SyncOptions};
use quire_llm::{CancelToken, OpenAiCompatible, Provider};
use quire_search::Searcher;
use support::{FakeChat, answer};

const QUESTION: &str =
    "How do I feed the sourdough starter, and how should I replace running shoes?";

struct Vault {
    _dir: tempfile::TempDir,
    root: std::path::PathBuf,
    index: IndexLocation,
}

fn vault() -> Vault {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("vault");
    support::copy_tree(&support::sample_vault(), &root);
    let index = IndexLocation::new(dir.path().join("index"));
    quire_index::sync(&root, &index, &SyncOptions::default(), &()).unwrap();
    Vault {
        _dir: dir,
        root,
        index,
    }
}

impl Vault {
    fn context(&self) -> FrozenContext {
        let searcher = Searcher::open(&self.index).unwrap();
        let request = RetrievalRequest::new(QUESTION, ContextLimits::default());
        let found = context::retrieve(&searcher, &request).unwrap();
        let reader = SourceReader::open(&self.root, &Default::default()).unwrap();
        context::materialize(&reader, found, &ContextLimits::default())
    }
}

/// The id the passage containing `text` will have (passages are numbered in order).
fn id_of(context: &FrozenContext, text: &str) -> String {
    let n = context
        .passages
        .iter()
        .position(|p| p.text.contains(text))
        .unwrap_or_else(|| panic!("no passage has {text:?}"));
    format!("S{}", n + 1)
}

/// Asks with the model answering `text` (ids filled in by `write` from the context).
fn ask(mut write: impl FnMut(&str, &str) -> String) -> Answer {
    let vault = vault();
    let context = vault.context();
    let starter = id_of(&context, "Feed once a day when it lives on the counter");
    let shoes = id_of(&context, "Replace the daily trainer around 700 km");
    let server = FakeChat::start(vec![answer(&[&write(&starter, &shoes)])]);
    let model = OpenAiCompatible::new(Provider::new(&server.url, "fake-model"));
    Conversation::new()
        .ask(
            Some(&model),
            context,
            QUESTION,
            &CancelToken::new(),
            &mut |_| {},
        )
        .unwrap()
}

#[test]
fn a_right_citation_is_supported_and_a_wrong_one_names_the_right_source() {
    let answer = ask(|starter, _| {
        format!(
            "Feed the starter once a day while it lives on the counter [{starter}]. \
             Replace the daily trainer at around 700 km [{starter}]."
        )
    });
    assert_eq!(answer.kind, AnswerKind::Generated);
    let report = answer.support.as_ref().unwrap();
    assert_eq!(report.method, SupportMethod::WordsOnly);
    assert!(report.note.as_deref().unwrap().contains("words only"));
    assert_eq!(answer.sentences.len(), 2, "{:?}", answer.sentences);

    let first = &answer.sentences[0];
    assert_eq!(&answer.answer[first.start..first.end], first.text);
    assert!(first.text.starts_with("Feed the starter"));
    assert_eq!(first.citations.len(), 1);
    assert_eq!(first.citations[0].status, SupportStatus::Supported);
    assert!(!first.citations[0].added_by_quire);

    // The shoe sentence cites the starter's passage: misattributed, and the shoes' passage named.
    let second = &answer.sentences[1];
    assert_eq!(second.citations[0].status, SupportStatus::Misattributed);
    let better = second.citations[0].better.as_deref().unwrap();
    assert!(
        answer
            .sources
            .iter()
            .any(|c| c.id == better && c.path == "Resources/Running Shoes.md"),
        "{better} in {:?}",
        answer.sources
    );
    assert_eq!((report.supported, report.misattributed), (1, 1));
    assert!(answer.strict_refusal().is_some());
}

#[test]
fn an_invented_claim_is_unsupported() {
    let answer = ask(|starter, _| {
        format!("Feed the starter pure spelt flour at midnight and keep it frozen [{starter}].")
    });
    let sentence = &answer.sentences[0];
    assert_eq!(sentence.citations[0].status, SupportStatus::Unsupported);
    assert_eq!(sentence.citations[0].better, None);
    let report = answer.support.as_ref().unwrap();
    assert_eq!(report.unsupported, 1);
    let refusal = answer.strict_refusal().unwrap();
    assert!(refusal.contains("1 of 1 cited sentences"), "{refusal}");
}

#[test]
fn an_answer_without_citations_is_attributed_by_quire() {
    let mut shoes_id = String::new();
    let answer = ask(|_, shoes| {
        shoes_id = shoes.to_string();
        "Feed the starter once a day when it lives on the counter.\n\
         - Replace the daily trainer around 700 km.\n\
         I could not find anything about swimming."
            .to_string()
    });
    // The model cited nothing: the warning stays, and quire's attributions are marked as such.
    assert!(answer.citations.is_empty());
    assert!(
        answer
            .warnings
            .iter()
            .any(|w| w.contains("cites no source"))
    );
    assert_eq!(answer.sentences.len(), 3, "{:?}", answer.sentences);
    let [starter, shoes, nothing] = &answer.sentences[..] else {
        unreachable!()
    };
    for sentence in [starter, shoes] {
        assert_eq!(sentence.citations.len(), 1, "{sentence:?}");
        assert!(sentence.citations[0].added_by_quire);
        assert_eq!(sentence.citations[0].status, SupportStatus::Supported);
    }
    assert!(
        answer
            .sources
            .iter()
            .any(|c| c.id == starter.citations[0].id && c.path == "Resources/Sourdough Starter.md")
    );
    assert_eq!(shoes.citations[0].id, shoes_id);
    assert!(nothing.citations.is_empty());
    let report = answer.support.as_ref().unwrap();
    assert_eq!(
        (report.cited, report.added_by_quire, report.unattributed),
        (0, 2, 1)
    );
    // Quire's attributions are no reason to withhold: the model cited nothing wrong.
    assert_eq!(answer.strict_refusal(), None);
    assert!(
        report
            .summary(&answer.sentences)
            .contains("2 uncited sentences attributed by quire")
    );
}

#[test]
fn an_extractive_answer_is_supported_by_construction() {
    let vault = vault();
    let answer = Conversation::new()
        .ask(
            None,
            vault.context(),
            QUESTION,
            &CancelToken::new(),
            &mut |_| {},
        )
        .unwrap();
    assert_eq!(answer.kind, AnswerKind::Extractive);
    let report = answer.support.unwrap();
    assert_eq!(report.method, SupportMethod::ByConstruction);
    assert!(answer.sentences.is_empty());
}
