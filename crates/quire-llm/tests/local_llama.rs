//! The in-process model end to end, with a real model: SmolLM2-135M-Instruct (Q4_1), which
//! `scripts/fetch-llm.sh smollm2` installs. Without it these tests fail and say so: they never
//! skip.
//!
//! A 135M-parameter model writes fluent but unreliable text, so these tests assert the
//! plumbing (streaming, token counts, determinism, cancellation, UTF-8), not what the answer
//! says.

#![allow(clippy::unwrap_used)] // tests and benches stop at the first surprise
#![cfg(feature = "local-llm")]

mod corpus_note;

use std::sync::OnceLock;
use std::time::{Duration, Instant};

use quire_llm::{
    CancelToken, ChatModel, ChatRequest, LlmError, LocalLlama, LocalOptions, Message,
    default_local_model_path,
};

fn model() -> &'static LocalLlama {
    static MODEL: OnceLock<LocalLlama> = OnceLock::new();
    MODEL.get_or_init(|| {
        let path = default_local_model_path();
        assert!(
            path.is_file(),
            "the test model is missing at {}: run `./scripts/fetch-llm.sh smollm2` first (or set \
             QUIRE_LLM_MODEL_PATH to a GGUF chat model)",
            path.display()
        );
        LocalLlama::load(&path, LocalOptions::default())
            .unwrap_or_else(|error| panic!("cannot load the test model: {error}"))
    })
}

/// Runs `request`, returning the pieces given to `on_token` and the result.
fn stream(
    request: &ChatRequest,
    cancel: &CancelToken,
) -> (Vec<String>, Result<quire_llm::Completion, LlmError>) {
    let mut pieces = Vec::new();
    let result = model().stream(request, cancel, &mut |piece| pieces.push(piece.to_owned()));
    (pieces, result)
}

fn request(messages: Vec<Message>, max_tokens: u32) -> ChatRequest {
    ChatRequest {
        max_tokens: Some(max_tokens),
        ..ChatRequest::new(messages)
    }
}

#[test]
fn a_short_chat_streams_tokens_that_make_up_the_answer() {
    let messages = vec![
        Message::system("You are a concise assistant."),
        Message::user("What is the capital of France?"),
    ];
    let (pieces, result) = stream(&request(messages.clone(), 16), &CancelToken::new());
    let answer = result.expect("the model answers");

    assert!(!pieces.is_empty(), "no token was streamed");
    assert_eq!(answer.text, pieces.concat());
    let usage = answer.usage.expect("a local model always reports usage");
    assert!(usage.completion_tokens > 0 && usage.completion_tokens <= 16);
    let reason = answer.finish_reason.as_deref();
    assert_eq!(reason == Some("length"), usage.completion_tokens == 16);
    assert!(matches!(reason, Some("stop" | "length")), "{reason:?}");

    // The prompt is exactly the rendered chat template, and that is the messages' text plus a
    // few tokens of role markers.
    let rendered = model()
        .render_prompt(&messages)
        .expect("the template applies");
    assert!(
        rendered.contains("What is the capital of France?"),
        "{rendered}"
    );
    assert_eq!(usage.prompt_tokens, model().count_tokens(&rendered) as u64);
    let content = model().count_tokens("You are a concise assistant.")
        + model().count_tokens("What is the capital of France?");
    assert!(
        usage.prompt_tokens as usize > content && (usage.prompt_tokens as usize) < content + 32,
        "{} prompt tokens for {content} tokens of content",
        usage.prompt_tokens
    );
}

#[test]
fn the_same_request_gives_the_same_answer_twice() {
    let greedy = request(vec![Message::user("Write one sentence about rivers.")], 24);
    let first = stream(&greedy, &CancelToken::new()).1.expect("first run");
    let second = stream(&greedy, &CancelToken::new()).1.expect("second run");
    assert_eq!(first.text, second.text);

    // Sampling with a temperature draws from a generator seeded with the fixed seed.
    let sampled = ChatRequest {
        temperature: Some(0.8),
        ..greedy
    };
    let first = stream(&sampled, &CancelToken::new())
        .1
        .expect("first sampled run");
    let second = stream(&sampled, &CancelToken::new())
        .1
        .expect("second sampled run");
    assert!(!first.text.is_empty());
    assert_eq!(first.text, second.text);
}

#[test]
fn cancelling_after_the_first_token_returns_promptly() {
    let long = request(
        vec![Message::user(
            "Tell me a long story about a lighthouse keeper.",
        )],
        400,
    );
    let cancel = CancelToken::new();
    let mut pieces = Vec::new();
    let mut cancelled_at = None;
    let result = model().stream(&long, &cancel, &mut |piece| {
        pieces.push(piece.to_owned());
        if cancelled_at.is_none() {
            cancel.cancel();
            cancelled_at = Some(Instant::now());
        }
    });
    let waited = cancelled_at.expect("a token arrived").elapsed();

    match result {
        Err(LlmError::Cancelled { partial }) => assert_eq!(partial, pieces.concat()),
        other => panic!("expected Cancelled, got {other:?}"),
    }
    assert_eq!(
        pieces.len(),
        1,
        "tokens kept coming after the cancel: {pieces:?}"
    );
    assert!(
        waited < Duration::from_millis(500),
        "took {waited:?} to stop"
    );
}

#[test]
fn a_cancelled_token_stops_before_the_prompt_is_read() {
    let cancel = CancelToken::new();
    cancel.cancel();
    let (pieces, result) = stream(&request(vec![Message::user("Hello")], 8), &cancel);
    assert!(pieces.is_empty());
    assert!(matches!(result, Err(LlmError::Cancelled { partial }) if partial.is_empty()));
}

/// One note of a real vault (with an emoji in its frontmatter), given as source `[S1]` the way
/// `quire ask` gives its sources.
#[test]
fn an_answer_over_a_real_vault_note_streams() {
    let text = corpus_note::evergreen_note_text();
    let messages = vec![
        Message::system(
            "Answer the question using only the sources below. Cite the source you use as [S1].",
        ),
        Message::user(format!(
            "Sources:\n[S1] {}\n{text}\n\nQuestion: What do evergreen notes let you do with ideas?",
            corpus_note::EVERGREEN_NOTE
        )),
    ];
    let (pieces, result) = stream(&request(messages, 48), &CancelToken::new());
    let answer = result.expect("the model answers");

    assert!(!answer.text.trim().is_empty(), "empty answer");
    assert_eq!(answer.text, pieces.concat());
    // Every piece is whole UTF-8 text: no character was cut between two tokens.
    assert!(
        pieces.iter().all(|piece| !piece.contains('\u{FFFD}')),
        "{pieces:?}"
    );
    let usage = answer.usage.expect("usage");
    assert!(
        usage.prompt_tokens > 300,
        "the note is in the prompt: {usage:?}"
    );
}

#[test]
fn a_prompt_longer_than_the_context_is_refused() {
    let small = LocalLlama::load(
        model().path(),
        LocalOptions {
            context_tokens: 32,
            ..LocalOptions::default()
        },
    )
    .expect("loads");
    let long = request(vec![Message::user("word ".repeat(100))], 8);
    let error = small
        .stream(&long, &CancelToken::new(), &mut |_| {})
        .expect_err("too long");
    assert!(
        error
            .to_string()
            .contains("more than the context of 32 tokens"),
        "{error}"
    );
}

#[test]
fn a_missing_model_file_names_the_fetch_script() {
    let missing = std::env::temp_dir().join("quire-no-such-model.gguf");
    let error = LocalLlama::load(&missing, LocalOptions::default()).expect_err("missing");
    let message = error.to_string();
    assert!(message.contains("quire-no-such-model.gguf"), "{message}");
    assert!(message.contains("scripts/fetch-llm.sh"), "{message}");
}

#[test]
fn a_file_that_is_not_gguf_is_refused() {
    let path = std::env::temp_dir().join(format!("quire-not-a-model-{}.gguf", std::process::id()));
    std::fs::write(&path, "# A note, not a model\n").expect("write a temporary file");
    let error = LocalLlama::load(&path, LocalOptions::default()).expect_err("not a model");
    let _ = std::fs::remove_file(&path);
    assert!(matches!(error, LlmError::Local { .. }), "{error:?}");
    assert!(error.to_string().contains("not a GGUF model"), "{error}");
}

#[test]
fn a_json_schema_request_is_held_to_json_by_the_grammar() {
    let mut request = ChatRequest::new(vec![
        Message::system("You describe fruit."),
        Message::user("Describe an apple: its colour and its taste."),
    ]);
    request.max_tokens = Some(48);
    request.response_format = Some(quire_llm::JsonSchema {
        name: "fruit".into(),
        schema: serde_json::json!({"type": "object"}),
    });
    let (_, result) = stream(&request, &CancelToken::new());
    let text = result.expect("a structured answer").text;
    assert!(text.trim_start().starts_with('{'), "{text:?}");
    // Cut at 48 tokens the object may be unfinished, but never anything but JSON so far.
    match serde_json::from_str::<serde_json::Value>(&text) {
        Ok(value) => assert!(value.is_object(), "{text:?}"),
        Err(e) => assert!(e.is_eof(), "not a JSON prefix ({e}): {text:?}"),
    }
}
