//! The tree descent over a vault too large to list at once: the model is shown the folders
//! first, then the notes of the folders it chose, then their outlines, and the sections it
//! chose are read. The model here is scripted: it picks by what each listing says, so the test
//! checks what the descent shows at each step and what it reads in the end.

#![allow(clippy::unwrap_used)] // tests stop at the first surprise

use std::sync::Mutex;

use quire_assist::context::SourceReader;
use quire_assist::descent::{DescentOptions, descend};
use quire_index::{IndexLocation, SyncOptions};
use quire_llm::{CancelToken, ChatModel, ChatRequest, Completion, LlmError};
use quire_search::Searcher;

/// Chooses, in each listing, the id of the first line holding `wanted` for that step.
struct Scripted {
    /// (listing kind as the prompt names it, text a line must hold)
    picks: Vec<(&'static str, &'static str)>,
    /// Each listing shown, in order.
    shown: Mutex<Vec<String>>,
}

impl ChatModel for Scripted {
    fn name(&self) -> String {
        "scripted".into()
    }

    fn stream(
        &self,
        request: &ChatRequest,
        _cancel: &CancelToken,
        on_token: &mut dyn FnMut(&str),
    ) -> Result<Completion, LlmError> {
        let listing = request.messages.last().unwrap().content.clone();
        let step = self.shown.lock().unwrap().len();
        self.shown.lock().unwrap().push(listing.clone());
        let (_, wanted) = self.picks[step.min(self.picks.len() - 1)];
        let id = listing
            .lines()
            .find(|line| line.contains(wanted))
            .and_then(|line| line.split_whitespace().next())
            .unwrap_or("none")
            .trim_start_matches('[')
            .trim_end_matches(']')
            .to_string();
        let text = format!("{{\"choose\": [\"{id}\"], \"why\": \"it names {wanted}\"}}");
        on_token(&text);
        Ok(Completion {
            text,
            usage: None,
            finish_reason: Some("stop".into()),
            seconds: 0.0,
        })
    }
}

#[test]
fn a_large_vault_is_descended_folder_first_then_notes_then_sections() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("vault");
    quire_testkit::copy_tree(&quire_testkit::sample_vault(), &root);
    let index = IndexLocation::new(dir.path().join("index"));
    quire_index::sync(&root, &index, &SyncOptions::default(), &()).unwrap();
    let searcher = Searcher::open(&index).unwrap();
    let reader = SourceReader::open(&root, &Default::default()).unwrap();
    let model = Scripted {
        picks: vec![
            ("folders", "Resources/"),
            ("notes", "Sourdough Starter"),
            ("sections", "Feeding"),
        ],
        shown: Mutex::new(Vec::new()),
    };
    // A listing budget the sample vault's notes do not fit in: folders come first.
    let options = DescentOptions {
        listing_tokens: 400,
        ..DescentOptions::default()
    };
    let (candidates, trace) = descend(
        &model,
        &searcher,
        &reader,
        "How often do I feed the starter?",
        options,
        &CancelToken::new(),
    )
    .unwrap();
    let kinds: Vec<&str> = trace.steps.iter().map(|s| s.kind).collect();
    assert_eq!(kinds, ["folders", "notes", "sections"], "{trace:#?}");
    let shown = model.shown.lock().unwrap();
    // The folder listing names folders (with a sample of their notes), not notes one by one.
    assert!(shown[0].contains("Resources/"), "{}", shown[0]);
    assert!(shown[0].contains("Journal/"), "{}", shown[0]);
    // The notes listing holds the chosen folder's notes only.
    assert!(shown[1].contains("Sourdough Starter"), "{}", shown[1]);
    assert!(!shown[1].contains("Journal/2026-11-16"), "{}", shown[1]);
    assert!(!shown[1].contains("Kyoto Trip 2027"), "{}", shown[1]);
    // What was read: the chosen section of the chosen note, and nothing else.
    assert_eq!(candidates.len(), 1, "{candidates:#?}");
    assert_eq!(candidates[0].path, "Resources/Sourdough Starter.md");
    assert_eq!(trace.sections.len(), 1);
    assert!(
        trace.sections[0]
            .heading_path
            .iter()
            .any(|h| h.contains("Feeding")),
        "{:?}",
        trace.sections[0]
    );
    assert!(trace.stopped.is_none(), "{:?}", trace.stopped);
}
