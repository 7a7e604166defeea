//! The OpenAI-compatible client against a fake chat-completions server on 127.0.0.1 that records
//! each request and plays scripted replies: event streams written piece by piece (with pauses),
//! whole JSON replies, error statuses, silence. No test talks to any other host.

#![allow(clippy::unwrap_used)] // tests and benches stop at the first surprise

use std::io::{BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use quire_llm::{
    CancelToken, ChatModel, ChatRequest, Completion, LlmError, Message, OpenAiCompatible, Provider,
    RetryPolicy, Timeouts, Usage,
};
use serde_json::{Value, json};

/// What the fake server received.
#[derive(Debug, Clone)]
struct Received {
    path: String,
    authorization: Option<String>,
    body: Value,
}

/// One scripted reply.
enum Reply {
    /// A status with extra header lines and a body, sent at once.
    Plain {
        status: u16,
        headers: &'static str,
        content_type: &'static str,
        body: String,
    },
    /// A 200 `text/event-stream`, each piece sent as one HTTP chunk, with `pause` between them.
    Stream {
        pieces: Vec<String>,
        pause: Duration,
    },
    /// Reads the request, then says nothing for this long and closes.
    Silent(Duration),
}

/// How the server's writes of one stream went.
#[derive(Debug, Default, Clone, Copy)]
struct StreamReport {
    pieces_written: usize,
    /// A write failed because the client had gone.
    client_left: bool,
}

struct FakeServer {
    url: String,
    received: Arc<Mutex<Vec<Received>>>,
    done: JoinHandle<Vec<StreamReport>>,
}

impl FakeServer {
    /// Serves `replies` in order, one connection each.
    fn start(replies: Vec<Reply>) -> FakeServer {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}/v1", listener.local_addr().unwrap());
        let received = Arc::new(Mutex::new(Vec::new()));
        let log = Arc::clone(&received);
        let done = std::thread::spawn(move || {
            let mut reports = Vec::new();
            for reply in replies {
                let Ok((mut stream, _)) = listener.accept() else {
                    break;
                };
                log.lock().unwrap().push(read_request(&stream));
                reports.push(play(&mut stream, reply));
            }
            reports
        });
        FakeServer {
            url,
            received,
            done,
        }
    }

    fn received(&self) -> Vec<Received> {
        self.received.lock().unwrap().clone()
    }

    /// Waits for the script to end and reports how each stream went.
    fn finish(self) -> Vec<StreamReport> {
        self.done.join().unwrap()
    }
}

fn read_request(stream: &TcpStream) -> Received {
    let mut reader = BufReader::new(stream);
    // The head ends at the first blank line; the body's length is in Content-Length.
    let mut head = Vec::new();
    while !head.ends_with(b"\r\n\r\n") {
        let mut byte = [0u8];
        reader.read_exact(&mut byte).unwrap();
        head.push(byte[0]);
    }
    let head = String::from_utf8(head).unwrap();
    let header = |wanted: &str| {
        head.lines().skip(1).find_map(|line| {
            let (name, value) = line.split_once(':')?;
            name.eq_ignore_ascii_case(wanted)
                .then(|| value.trim().to_string())
        })
    };
    let length: usize = header("content-length").map_or(0, |v| v.parse().unwrap());
    let mut body = vec![0u8; length];
    reader.read_exact(&mut body).unwrap();
    Received {
        path: head.split(' ').nth(1).unwrap_or_default().to_string(),
        authorization: header("authorization"),
        body: serde_json::from_slice(&body).unwrap(),
    }
}

fn play(stream: &mut TcpStream, reply: Reply) -> StreamReport {
    let mut report = StreamReport::default();
    match reply {
        Reply::Plain {
            status,
            headers,
            content_type,
            body,
        } => {
            let head = format!(
                "HTTP/1.1 {status} Scripted\r\nContent-Type: {content_type}\r\nContent-Length: {}\r\nConnection: close\r\n{headers}\r\n",
                body.len()
            );
            let _ = stream.write_all(format!("{head}{body}").as_bytes());
        }
        Reply::Stream { pieces, pause } => {
            let head = "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n";
            if stream.write_all(head.as_bytes()).is_err() {
                report.client_left = true;
                return report;
            }
            for (i, piece) in pieces.into_iter().enumerate() {
                if i > 0 {
                    std::thread::sleep(pause);
                }
                let chunk = format!("{:x}\r\n{piece}\r\n", piece.len());
                if stream.write_all(chunk.as_bytes()).is_err() {
                    report.client_left = true;
                    return report;
                }
                report.pieces_written += 1;
            }
            let _ = stream.write_all(b"0\r\n\r\n");
        }
        Reply::Silent(duration) => std::thread::sleep(duration),
    }
    report
}

/// A `data:` event carrying one content delta.
fn delta(content: &str) -> String {
    format!(
        "data: {}\n\n",
        json!({"id": "c1", "object": "chat.completion.chunk", "choices": [{"index": 0, "delta": {"content": content}, "finish_reason": null}]})
    )
}

fn stream_of(pieces: &[&str]) -> Reply {
    Reply::Stream {
        pieces: pieces.iter().map(|p| p.to_string()).collect(),
        pause: Duration::ZERO,
    }
}

fn error_reply(status: u16, headers: &'static str, message: &str) -> Reply {
    Reply::Plain {
        status,
        headers,
        content_type: "application/json",
        body: json!({"error": {"message": message, "type": "scripted"}}).to_string(),
    }
}

fn client(server: &FakeServer) -> OpenAiCompatible {
    OpenAiCompatible::new(Provider::new(&server.url, "test-model")).with_retry(RetryPolicy {
        max_retries: 2,
        base_delay: Duration::from_millis(10),
        max_delay: Duration::from_secs(5),
    })
}

fn question() -> ChatRequest {
    let mut request = ChatRequest::new(vec![
        Message::system("Answer from the sources."),
        Message::user("When do I feed the starter?"),
    ]);
    request.temperature = Some(0.25);
    request
}

/// Runs a call, collecting the pieces given to `on_token`.
fn ask(model: &OpenAiCompatible) -> (Result<Completion, LlmError>, Vec<String>) {
    let mut tokens = Vec::new();
    let result = model.stream(&question(), &CancelToken::new(), &mut |t| {
        tokens.push(t.to_string())
    });
    (result, tokens)
}

#[test]
#[allow(unsafe_code)] // std::env::set_var: this test alone uses the variable
fn streams_tokens_in_order_and_sends_the_request_it_was_given() {
    let key_env = "QUIRE_LLM_TEST_STREAM_KEY";
    // SAFETY: only this test uses this variable.
    unsafe { std::env::set_var(key_env, "sk-stream-test") };
    let role_only =
        json!({"choices": [{"index": 0, "delta": {"role": "assistant", "content": ""}}]});
    let null_content = json!({"choices": [{"index": 0, "delta": {"content": null}}]});
    let server = FakeServer::start(vec![stream_of(&[
        ": keep-alive\n\n",
        &format!("data: {role_only}\n\n"),
        &delta("Feed it"),
        // One delta split across two HTTP chunks, then one event split over two data lines.
        "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\" twice",
        "\"}}]}\n\n",
        "data: {\"choices\":[{\"index\":0,\n",
        "data: \"delta\":{\"content\":\" a day\"}}]}\n\n",
        &format!("data: {null_content}\n\n"),
        "data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\n",
        "data: {\"choices\":[],\"usage\":{\"prompt_tokens\":31,\"completion_tokens\":5,\"total_tokens\":36}}\n\n",
        "data: [DONE]\n\n",
    ])]);
    let mut provider = Provider::new(&server.url, "test-model");
    provider.api_key_env = Some(key_env.into());
    let model = OpenAiCompatible::new(provider);

    let mut tokens = Vec::new();
    let completion = model
        .stream(&question(), &CancelToken::new(), &mut |t| {
            tokens.push(t.to_string())
        })
        .unwrap();

    assert_eq!(tokens, ["Feed it", " twice", " a day"]);
    assert_eq!(completion.text, tokens.concat());
    assert_eq!(
        completion.usage,
        Some(Usage {
            prompt_tokens: 31,
            completion_tokens: 5
        })
    );
    assert_eq!(completion.finish_reason.as_deref(), Some("stop"));
    assert!(completion.seconds > 0.0);

    let received = server.received();
    assert_eq!(received.len(), 1);
    assert_eq!(received[0].path, "/v1/chat/completions");
    assert_eq!(
        received[0].authorization.as_deref(),
        Some("Bearer sk-stream-test")
    );
    assert_eq!(
        received[0].body,
        json!({
            "model": "test-model",
            "messages": [
                {"role": "system", "content": "Answer from the sources."},
                {"role": "user", "content": "When do I feed the starter?"},
            ],
            "stream": true,
            "stream_options": {"include_usage": true},
            "temperature": 0.25,
        })
    );
}

#[test]
fn without_a_key_variable_no_authorization_is_sent() {
    let server = FakeServer::start(vec![stream_of(&[&delta("ok"), "data: [DONE]\n\n"])]);
    let mut provider = Provider::new(&server.url, "test-model");
    provider.api_key_env = Some("QUIRE_LLM_TEST_NEVER_SET_KEY".into());
    let (result, _) = ask(&OpenAiCompatible::new(provider));
    assert_eq!(result.unwrap().text, "ok");
    assert_eq!(server.received()[0].authorization, None);
}

#[test]
fn a_429_is_retried_after_the_time_retry_after_asks() {
    let server = FakeServer::start(vec![
        error_reply(429, "Retry-After: 1\r\n", "rate limited"),
        stream_of(&[&delta("later"), "data: [DONE]\n\n"]),
    ]);
    let started = Instant::now();
    let (result, tokens) = ask(&client(&server));
    let elapsed = started.elapsed();
    assert_eq!(result.unwrap().text, "later");
    assert_eq!(tokens, ["later"]);
    assert!(elapsed >= Duration::from_millis(950), "{elapsed:?}");
    let received = server.received();
    assert_eq!(received.len(), 2);
    assert_eq!(received[0].body, received[1].body, "the same request again");
}

#[test]
fn a_5xx_beyond_the_retry_budget_reports_status_and_message() {
    let server = FakeServer::start(vec![
        error_reply(500, "", "model crashed"),
        error_reply(502, "", "model crashed"),
        error_reply(503, "", "model crashed"),
    ]);
    let (result, tokens) = ask(&client(&server));
    let error = result.unwrap_err();
    assert!(
        matches!(&error, LlmError::Http { status: 503, message, .. } if message == "model crashed"),
        "{error:?}"
    );
    let text = error.to_string();
    assert!(
        text.contains("HTTP 503") && text.contains(&server.url),
        "{text}"
    );
    assert!(tokens.is_empty());
    // The first try and two retries.
    assert_eq!(server.received().len(), 3);
}

#[test]
fn a_client_error_is_reported_without_retrying() {
    let server = FakeServer::start(vec![error_reply(401, "", "invalid api key")]);
    let (result, _) = ask(&client(&server));
    let error = result.unwrap_err();
    assert_eq!(
        error.to_string(),
        format!("{}/chat/completions: HTTP 401: invalid api key", server.url)
    );
    assert_eq!(server.finish().len(), 1, "one request only");
}

#[test]
fn cancelling_mid_stream_returns_promptly_and_drops_the_connection() {
    let pieces: Vec<String> = (0..40).map(|i| delta(&format!("t{i} "))).collect();
    let server = FakeServer::start(vec![Reply::Stream {
        pieces,
        pause: Duration::from_millis(50),
    }]);
    let model = client(&server);
    let cancel = CancelToken::new();
    let mut tokens = Vec::new();
    let started = Instant::now();
    let result = model.stream(&question(), &cancel, &mut |t| {
        tokens.push(t.to_string());
        cancel.cancel();
    });
    let elapsed = started.elapsed();

    match result {
        Err(LlmError::Cancelled { partial }) => assert_eq!(partial, "t0 "),
        other => panic!("expected Cancelled, got {other:?}"),
    }
    assert_eq!(tokens, ["t0 "]);
    // The whole stream would take 2 s (the bounds leave room for a loaded machine).
    assert!(elapsed < Duration::from_secs(1), "{elapsed:?}");
    let report = server.finish()[0];
    assert!(report.client_left, "{report:?}");
    assert!(report.pieces_written < 20, "{report:?}");
}

#[test]
fn cancelling_from_another_thread_stops_a_wait_for_a_silent_server() {
    let server = FakeServer::start(vec![Reply::Silent(Duration::from_secs(3))]);
    let model = client(&server);
    let cancel = CancelToken::new();
    let canceller = cancel.clone();
    std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(150));
        canceller.cancel();
    });
    let started = Instant::now();
    let result = model.stream(&question(), &cancel, &mut |_| {});
    let elapsed = started.elapsed();
    assert!(
        matches!(&result, Err(LlmError::Cancelled { partial }) if partial.is_empty()),
        "{result:?}"
    );
    // The server would stay silent for 3 s.
    assert!(elapsed < Duration::from_millis(1500), "{elapsed:?}");
}

#[test]
fn a_cancelled_token_sends_nothing() {
    let server = FakeServer::start(vec![]);
    let cancel = CancelToken::new();
    cancel.cancel();
    let result = client(&server).stream(&question(), &cancel, &mut |_| {});
    assert!(
        matches!(result, Err(LlmError::Cancelled { .. })),
        "{result:?}"
    );
    assert!(server.received().is_empty());
}

#[test]
fn a_whole_json_reply_from_a_server_that_ignores_stream_is_accepted() {
    let body = json!({
        "id": "c2",
        "object": "chat.completion",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": "Twice a day [S1]."}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 12, "completion_tokens": 6, "total_tokens": 18},
    });
    for content_type in ["application/json; charset=utf-8", "text/plain"] {
        let server = FakeServer::start(vec![Reply::Plain {
            status: 200,
            headers: "",
            content_type,
            body: serde_json::to_string_pretty(&body).unwrap(),
        }]);
        let (result, tokens) = ask(&client(&server));
        let completion = result.unwrap();
        assert_eq!(completion.text, "Twice a day [S1].");
        assert_eq!(tokens, ["Twice a day [S1]."]);
        assert_eq!(completion.usage.map(|u| u.completion_tokens), Some(6));
        assert_eq!(completion.finish_reason.as_deref(), Some("stop"));
    }
}

#[test]
fn malformed_json_in_the_stream_is_a_clear_error() {
    let server = FakeServer::start(vec![stream_of(&[
        &delta("Feed"),
        "data: {\"choices\": [oops\n\n",
        "data: [DONE]\n\n",
    ])]);
    let (result, tokens) = ask(&client(&server));
    let error = result.unwrap_err();
    assert!(matches!(error, LlmError::BadResponse { .. }), "{error:?}");
    let text = error.to_string();
    assert!(
        text.contains("malformed JSON") && text.contains("[oops"),
        "{text}"
    );
    assert_eq!(tokens, ["Feed"]);
}

#[test]
fn an_error_event_in_the_stream_is_reported() {
    let server = FakeServer::start(vec![stream_of(&[
        &delta("Fe"),
        "data: {\"error\":{\"message\":\"provider overloaded\",\"code\":502}}\n\n",
    ])]);
    let (result, _) = ask(&client(&server));
    let error = result.unwrap_err();
    assert!(
        matches!(&error, LlmError::Remote { message, .. } if message == "provider overloaded"),
        "{error:?}"
    );
    assert_eq!(server.finish().len(), 1, "not retried after a token");
}

#[test]
fn a_stream_cut_before_done_is_an_error_and_is_not_retried() {
    let server = FakeServer::start(vec![
        stream_of(&[&delta("Feed it")]),
        stream_of(&[&delta("again"), "data: [DONE]\n\n"]),
    ]);
    let (result, tokens) = ask(&client(&server));
    let error = result.unwrap_err();
    assert!(error.to_string().contains("before [DONE]"), "{error}");
    assert_eq!(tokens, ["Feed it"]);
    assert_eq!(server.received().len(), 1);
}

#[test]
fn a_refused_connection_names_the_url_at_once() {
    let port = {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        listener.local_addr().unwrap().port()
    };
    let url = format!("http://127.0.0.1:{port}/v1");
    let model = OpenAiCompatible::new(Provider::new(&url, "m"));
    let started = Instant::now();
    let (result, _) = ask(&model);
    let error = result.unwrap_err();
    assert!(matches!(error, LlmError::Unreachable { .. }), "{error:?}");
    assert!(
        error
            .to_string()
            .starts_with(&format!("cannot reach {url}/chat/completions")),
        "{error}"
    );
    assert!(started.elapsed() < Duration::from_secs(2), "not retried");
}

#[test]
fn a_silent_server_times_out() {
    let server = FakeServer::start(vec![Reply::Silent(Duration::from_secs(3))]);
    let model = client(&server).with_timeouts(Timeouts {
        connect: Duration::from_secs(1),
        read: Duration::from_millis(300),
    });
    let started = Instant::now();
    let (result, _) = ask(&model);
    let error = result.unwrap_err();
    assert!(matches!(error, LlmError::Timeout { .. }), "{error:?}");
    assert!(started.elapsed() < Duration::from_secs(2));
}

#[test]
fn a_server_silent_mid_stream_times_out() {
    let server = FakeServer::start(vec![Reply::Stream {
        pieces: vec![delta("Feed"), delta(" more")],
        pause: Duration::from_secs(2),
    }]);
    let model = client(&server).with_timeouts(Timeouts {
        connect: Duration::from_secs(1),
        read: Duration::from_millis(300),
    });
    let (result, tokens) = ask(&model);
    let error = result.unwrap_err();
    assert!(matches!(error, LlmError::Timeout { .. }), "{error:?}");
    assert!(
        error.to_string().contains("sent nothing for 0.3 s"),
        "{error}"
    );
    assert_eq!(tokens, ["Feed"]);
    assert_eq!(server.received().len(), 1, "not retried after a token");
}

#[test]
fn a_connection_dropped_before_the_reply_is_retried() {
    let server = FakeServer::start(vec![
        Reply::Silent(Duration::ZERO),
        stream_of(&[&delta("second try"), "data: [DONE]\n\n"]),
    ]);
    let (result, _) = ask(&client(&server));
    assert_eq!(result.unwrap().text, "second try");
    assert_eq!(server.received().len(), 2);
}
