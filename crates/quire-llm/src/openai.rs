//! The client of OpenAI-compatible `/chat/completions` endpoints (OpenAI, OpenRouter, Groq,
//! Ollama, llama.cpp's server, vLLM…), streaming with server-sent events.
//!
//! Each attempt runs the HTTP exchange on a short-lived thread that passes the body line by line
//! over a channel. The calling thread parses the lines, calls `on_token` and, while it waits,
//! polls the [`CancelToken`] every 20 ms. That is why cancellation is prompt even while the
//! server is silent (a local model reading a long prompt): a blocking read cannot be interrupted,
//! but the caller need not wait for it. After a cancel the thread ends at its next line (or read
//! timeout), dropping the connection, so the server stops generating.

use std::io::{BufRead, BufReader, Read};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender};
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};
use serde_json::Value;

use quire_openai::{
    CANCEL_POLL, Endpoint, RetryPolicy, is_retryable, parse_retry_after, sleep_unless_cancelled,
};

use crate::provider::Provider;
use crate::sse::{SseEvent, SseParser};
use crate::{CancelToken, ChatModel, ChatRequest, Completion, LlmError, Message, Usage};

/// The chat path under an endpoint's base URL.
const CHAT_PATH: &str = "chat/completions";
/// The longest line accepted from a server (a non-streamed reply is often one line).
const MAX_LINE: u64 = 8 << 20;
/// The most of a reply body read at all.
const MAX_BODY: u64 = 64 << 20;
/// The most of an error body kept for the message.
const MAX_ERROR_BODY: usize = 64 << 10;

/// Network time limits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Timeouts {
    /// Establishing the connection (TCP and TLS).
    pub connect: Duration,
    /// The longest silence from the server: waiting for the first byte (a local model may read
    /// a long prompt first) or between two pieces of the stream.
    pub read: Duration,
}

impl Default for Timeouts {
    fn default() -> Timeouts {
        Timeouts {
            connect: Duration::from_secs(10),
            read: Duration::from_secs(300),
        }
    }
}

/// A [`ChatModel`] served by an OpenAI-compatible chat-completions endpoint.
///
/// ```no_run
/// use quire_llm::{CancelToken, ChatModel, ChatRequest, Message, OpenAiCompatible, Provider};
/// let model = OpenAiCompatible::new(Provider::new("http://127.0.0.1:11434/v1", "llama3.2"));
/// let request = ChatRequest::new(vec![Message::user("Say hello.")]);
/// let answer = model
///     .stream(&request, &CancelToken::new(), &mut |piece| print!("{piece}"))
///     .unwrap();
/// println!("\n{:?} tokens", answer.usage.map(|u| u.completion_tokens));
/// ```
#[derive(Debug, Clone)]
pub struct OpenAiCompatible {
    provider: Provider,
    timeouts: Timeouts,
    retry: RetryPolicy,
    agent: ureq::Agent,
}

impl OpenAiCompatible {
    /// A client of `provider` with the default [`Timeouts`] and [`RetryPolicy`].
    pub fn new(provider: Provider) -> OpenAiCompatible {
        let timeouts = Timeouts::default();
        OpenAiCompatible {
            provider,
            timeouts,
            retry: RetryPolicy::default(),
            agent: agent(timeouts),
        }
    }

    /// The same client with other network time limits.
    pub fn with_timeouts(mut self, timeouts: Timeouts) -> OpenAiCompatible {
        self.timeouts = timeouts;
        self.agent = agent(timeouts);
        self
    }

    /// The same client with another retry policy (retries happen only before the first piece of an
    /// answer).
    pub fn with_retry(mut self, retry: RetryPolicy) -> OpenAiCompatible {
        self.retry = retry;
        self
    }

    /// Where requests go, and which model answers.
    pub fn provider(&self) -> &Provider {
        &self.provider
    }
}

fn agent(timeouts: Timeouts) -> ureq::Agent {
    quire_openai::agent(timeouts.connect, timeouts.read)
}

impl ChatModel for OpenAiCompatible {
    fn name(&self) -> String {
        format!("{} ({})", self.provider.model, self.provider.base_url)
    }

    fn stream(
        &self,
        request: &ChatRequest,
        cancel: &CancelToken,
        on_token: &mut dyn FnMut(&str),
    ) -> Result<Completion, LlmError> {
        let started = Instant::now();
        let endpoint = self.provider.endpoint();
        let call = Call {
            url: endpoint.url(CHAT_PATH),
            endpoint,
            timeouts: self.timeouts,
            body: request_body(&self.provider.model, request),
        };
        let mut retry = 0;
        loop {
            if cancel.is_cancelled() {
                return Err(LlmError::Cancelled {
                    partial: String::new(),
                });
            }
            match call.attempt(&self.agent, cancel, on_token) {
                Ok(reply) => {
                    return Ok(Completion {
                        text: reply.text,
                        usage: reply.usage,
                        finish_reason: reply.finish_reason,
                        seconds: started.elapsed().as_secs_f64(),
                    });
                }
                Err(Failure::Final(error)) => return Err(error),
                Err(Failure::Retryable { error, retry_after }) => {
                    // Only failures before the first token are retryable, so a retry never
                    // repeats text the caller has already shown.
                    let Some(wait) = self.retry.delay(retry, retry_after) else {
                        return Err(error);
                    };
                    if !sleep_unless_cancelled(wait, cancel) {
                        return Err(LlmError::Cancelled {
                            partial: String::new(),
                        });
                    }
                    retry += 1;
                }
            }
        }
    }
}

/// The JSON body of a chat-completions request.
#[derive(Serialize)]
struct WireRequest<'a> {
    model: &'a str,
    messages: &'a [Message],
    stream: bool,
    stream_options: StreamOptions,
    #[serde(skip_serializing_if = "Option::is_none")]
    temperature: Option<f32>,
    // `max_tokens` rather than OpenAI's newer `max_completion_tokens`: every compatible server
    // understands it.
    #[serde(skip_serializing_if = "Option::is_none")]
    max_tokens: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    response_format: Option<Value>,
}

#[derive(Serialize)]
struct StreamOptions {
    /// Asks for a last chunk with token counts.
    include_usage: bool,
}

fn request_body(model: &str, request: &ChatRequest) -> Vec<u8> {
    let wire = WireRequest {
        model,
        messages: &request.messages,
        stream: true,
        stream_options: StreamOptions {
            include_usage: true,
        },
        temperature: request.temperature,
        max_tokens: request.max_tokens,
        response_format: request.response_format.as_ref().map(|format| {
            serde_json::json!({
                "type": "json_schema",
                "json_schema": {"name": format.name, "schema": format.schema, "strict": false},
            })
        }),
    };
    // Strings, numbers and enums only: serializing cannot fail (a NaN temperature becomes null).
    serde_json::to_vec(&wire).unwrap_or_default()
}

/// One chunk of a streamed reply.
#[derive(Deserialize)]
struct StreamChunk {
    #[serde(default)]
    choices: Vec<StreamChoice>,
    usage: Option<Usage>,
    error: Option<Value>,
}

#[derive(Deserialize)]
struct StreamChoice {
    #[serde(default)]
    index: u32,
    delta: Option<Delta>,
    finish_reason: Option<String>,
}

#[derive(Deserialize)]
struct Delta {
    content: Option<String>,
}

/// A whole reply, from servers that ignore `stream: true`.
#[derive(Deserialize)]
struct WholeReply {
    #[serde(default)]
    choices: Vec<WholeChoice>,
    usage: Option<Usage>,
    error: Option<Value>,
}

#[derive(Deserialize)]
struct WholeChoice {
    #[serde(default)]
    index: u32,
    message: Option<Delta>,
    finish_reason: Option<String>,
}

/// What the pump thread passes to the caller.
enum Wire {
    /// The status line and headers arrived.
    Head {
        status: u16,
        retry_after: Option<Duration>,
        json: bool,
    },
    /// One line of the body, without its `\n`.
    Line(String),
    /// The body ended.
    End,
    /// The request or the body failed.
    Failed(ureq::Error),
}

/// Why an attempt failed, and whether another may succeed.
enum Failure {
    Retryable {
        error: LlmError,
        retry_after: Option<Duration>,
    },
    Final(LlmError),
}

impl Failure {
    fn into_error(self) -> LlmError {
        match self {
            Failure::Retryable { error, .. } | Failure::Final(error) => error,
        }
    }
}

/// The part of a reply an attempt accumulates.
#[derive(Default)]
struct Reply {
    text: String,
    usage: Option<Usage>,
    finish_reason: Option<String>,
    done: bool,
}

/// One request, ready to be sent as often as retries need.
struct Call {
    /// The endpoint's chat URL, for messages.
    url: String,
    /// Where to send it; the key is read from its variable at each attempt.
    endpoint: Endpoint,
    timeouts: Timeouts,
    body: Vec<u8>,
}

impl Call {
    fn attempt(
        &self,
        agent: &ureq::Agent,
        cancel: &CancelToken,
        on_token: &mut dyn FnMut(&str),
    ) -> Result<Reply, Failure> {
        let lines = self.send(agent);
        let cancelled = || {
            Failure::Final(LlmError::Cancelled {
                partial: String::new(),
            })
        };
        let (status, retry_after, json) = match next(&lines, cancel).ok_or_else(cancelled)? {
            Wire::Head {
                status,
                retry_after,
                json,
            } => (status, retry_after, json),
            Wire::Failed(error) => return Err(self.connection_failure(error)),
            Wire::Line(_) | Wire::End => {
                return Err(Failure::Final(
                    self.bad("the reply ended before its headers"),
                ));
            }
        };
        if !(200..300).contains(&status) {
            let body = self.error_body(&lines, cancel).ok_or_else(cancelled)?;
            let error = LlmError::Http {
                url: self.url.clone(),
                status,
                message: server_message(&body),
            };
            return Err(if is_retryable(status) {
                Failure::Retryable { error, retry_after }
            } else {
                Failure::Final(error)
            });
        }
        self.read_reply(&lines, json, cancel, on_token)
            .map_err(Failure::Final)
    }

    /// Starts the exchange on its own thread; its lines arrive on the returned channel.
    fn send(&self, agent: &ureq::Agent) -> Receiver<Wire> {
        let (sender, receiver) = mpsc::channel();
        let agent = agent.clone();
        let endpoint = self.endpoint.clone();
        let body = self.body.clone();
        let spawned = std::thread::Builder::new()
            .name("quire-llm-stream".into())
            .spawn(move || pump(&agent, &endpoint, &body, &sender));
        if let Err(error) = spawned {
            let (sender, receiver) = mpsc::channel();
            let _ = sender.send(Wire::Failed(ureq::Error::Io(error)));
            return receiver;
        }
        receiver
    }

    /// Reads a successful reply: an event stream, or one JSON document.
    fn read_reply(
        &self,
        lines: &Receiver<Wire>,
        json: bool,
        cancel: &CancelToken,
        on_token: &mut dyn FnMut(&str),
    ) -> Result<Reply, LlmError> {
        let mut reply = Reply::default();
        let mut parser = SseParser::new();
        // A JSON reply is collected whole; servers that ignore `stream` may also omit the
        // content type, so a body whose first line opens an object is JSON too.
        let mut whole: Option<String> = json.then(String::new);
        let mut first_line = true;
        loop {
            let Some(wire) = next(lines, cancel) else {
                return Err(LlmError::Cancelled {
                    partial: reply.text,
                });
            };
            match wire {
                Wire::Line(line) => {
                    if first_line && !line.trim().is_empty() {
                        first_line = false;
                        if whole.is_none() && line.trim_start().starts_with('{') {
                            whole = Some(String::new());
                        }
                    }
                    if let Some(body) = &mut whole {
                        body.push_str(&line);
                        body.push('\n');
                        continue;
                    }
                    for event in parser.line(&line) {
                        self.apply(event, &mut reply, on_token)?;
                    }
                }
                Wire::End => break,
                Wire::Failed(error) => {
                    // Tokens may have been shown: whatever the cause, this is final.
                    return Err(match self.connection_failure(error).into_error() {
                        LlmError::Transport { url, reason } => LlmError::Transport {
                            url,
                            reason: format!(
                                "the reply broke off after {} characters: {reason}",
                                reply.text.chars().count()
                            ),
                        },
                        other => other,
                    });
                }
                Wire::Head { .. } => return Err(self.bad("a second set of headers")),
            }
            if reply.done {
                return Ok(reply);
            }
            if cancel.is_cancelled() {
                return Err(LlmError::Cancelled {
                    partial: reply.text,
                });
            }
        }
        if let Some(body) = whole {
            return self.whole_reply(&body, on_token);
        }
        if let Some(event) = parser.finish() {
            self.apply(event, &mut reply, on_token)?;
        }
        // A stream that stops without `[DONE]` or a finish reason was cut, not finished.
        if reply.done || reply.finish_reason.is_some() {
            Ok(reply)
        } else {
            Err(self.bad(&format!(
                "the stream ended before [DONE] after {} characters",
                reply.text.chars().count()
            )))
        }
    }

    /// Applies one server-sent event to the reply.
    fn apply(
        &self,
        event: SseEvent,
        reply: &mut Reply,
        on_token: &mut dyn FnMut(&str),
    ) -> Result<(), LlmError> {
        let data = event.data.trim();
        if data == "[DONE]" {
            reply.done = true;
            return Ok(());
        }
        if event.event.as_deref() == Some("error") {
            return Err(self.remote(&server_message(data)));
        }
        let chunk: StreamChunk = serde_json::from_str(data).map_err(|e| {
            self.bad(&format!(
                "malformed JSON in the event stream ({e}): {}",
                excerpt(data)
            ))
        })?;
        if let Some(error) = chunk.error {
            return Err(self.remote(&error_message(&error).unwrap_or_else(|| error.to_string())));
        }
        for choice in chunk.choices.into_iter().filter(|c| c.index == 0) {
            if let Some(content) = choice.delta.and_then(|d| d.content)
                && !content.is_empty()
            {
                reply.text.push_str(&content);
                on_token(&content);
            }
            if choice.finish_reason.is_some() {
                reply.finish_reason = choice.finish_reason;
            }
        }
        if chunk.usage.is_some() {
            reply.usage = chunk.usage;
        }
        Ok(())
    }

    fn whole_reply(&self, body: &str, on_token: &mut dyn FnMut(&str)) -> Result<Reply, LlmError> {
        let whole: WholeReply = serde_json::from_str(body)
            .map_err(|e| self.bad(&format!("malformed JSON reply ({e}): {}", excerpt(body))))?;
        if let Some(error) = whole.error {
            return Err(self.remote(&error_message(&error).unwrap_or_else(|| error.to_string())));
        }
        let choice = whole
            .choices
            .into_iter()
            .find(|c| c.index == 0)
            .ok_or_else(|| self.bad("the reply has no choices"))?;
        let text = choice.message.and_then(|m| m.content).unwrap_or_default();
        if !text.is_empty() {
            on_token(&text);
        }
        Ok(Reply {
            text,
            usage: whole.usage,
            finish_reason: choice.finish_reason,
            done: true,
        })
    }

    /// The body of an error reply, up to [`MAX_ERROR_BODY`]; `None` when cancelled.
    fn error_body(&self, lines: &Receiver<Wire>, cancel: &CancelToken) -> Option<String> {
        let mut body = String::new();
        while body.len() < MAX_ERROR_BODY {
            match next(lines, cancel)? {
                Wire::Line(line) => {
                    body.push_str(&line);
                    body.push('\n');
                }
                Wire::End | Wire::Failed(_) | Wire::Head { .. } => break,
            }
        }
        Some(body)
    }

    /// Describes a failed exchange, and whether another try may succeed: a server that is not
    /// there or stays silent is reported at once, a connection that dropped is worth a retry.
    fn connection_failure(&self, error: ureq::Error) -> Failure {
        use std::io::ErrorKind;
        let url = self.url.clone();
        let timed_out = |reason: String| {
            Failure::Final(LlmError::Timeout {
                url: url.clone(),
                reason,
            })
        };
        let unreachable = |reason: String| {
            Failure::Final(LlmError::Unreachable {
                url: url.clone(),
                reason: format!("{reason} (is the server running?)"),
            })
        };
        match error {
            ureq::Error::Timeout(ureq::Timeout::Resolve | ureq::Timeout::Connect) => {
                timed_out(format!(
                    "no connection within {} s",
                    self.timeouts.connect.as_secs_f64()
                ))
            }
            ureq::Error::Timeout(_) => timed_out(format!(
                "the server sent nothing for {} s",
                self.timeouts.read.as_secs_f64()
            )),
            ureq::Error::HostNotFound => unreachable("host not found".into()),
            ureq::Error::ConnectionFailed => unreachable("connection failed".into()),
            ureq::Error::Io(io) => match io.kind() {
                ErrorKind::ConnectionRefused
                | ErrorKind::AddrNotAvailable
                | ErrorKind::HostUnreachable
                | ErrorKind::NetworkUnreachable => unreachable(io.to_string()),
                ErrorKind::TimedOut => timed_out(io.to_string()),
                _ => Failure::Retryable {
                    error: LlmError::Transport {
                        url,
                        reason: io.to_string(),
                    },
                    retry_after: None,
                },
            },
            other => Failure::Final(LlmError::Transport {
                url,
                reason: other.to_string(),
            }),
        }
    }

    fn bad(&self, reason: &str) -> LlmError {
        LlmError::BadResponse {
            url: self.url.clone(),
            reason: reason.to_string(),
        }
    }

    fn remote(&self, message: &str) -> LlmError {
        LlmError::Remote {
            url: self.url.clone(),
            message: message.to_string(),
        }
    }
}

/// The next message from the pump, or `None` once `cancel` is set.
fn next(lines: &Receiver<Wire>, cancel: &CancelToken) -> Option<Wire> {
    loop {
        if cancel.is_cancelled() {
            return None;
        }
        match lines.recv_timeout(CANCEL_POLL) {
            Ok(wire) => return Some(wire),
            Err(RecvTimeoutError::Timeout) => {}
            // The pump always ends with End or Failed; a silent end means it panicked.
            Err(RecvTimeoutError::Disconnected) => {
                return Some(Wire::Failed(ureq::Error::Io(std::io::Error::other(
                    "the connection thread stopped",
                ))));
            }
        }
    }
}

/// Runs on the pump thread: sends the request and forwards the reply line by line. It returns as
/// soon as the caller stops listening, which drops the connection.
fn pump(agent: &ureq::Agent, endpoint: &Endpoint, body: &[u8], out: &Sender<Wire>) {
    let request = endpoint
        .post(agent, CHAT_PATH)
        .header("Accept", "text/event-stream");
    let response = match request.send(body) {
        Ok(response) => response,
        Err(error) => {
            let _ = out.send(Wire::Failed(error));
            return;
        }
    };
    let header = |name: &str| {
        response
            .headers()
            .get(name)
            .and_then(|v| v.to_str().ok())
            .map(str::to_string)
    };
    let head = Wire::Head {
        status: response.status().as_u16(),
        retry_after: header("retry-after").as_deref().and_then(parse_retry_after),
        json: header("content-type").is_some_and(|t| t.contains("json")),
    };
    if out.send(head).is_err() {
        return;
    }
    let mut reader = BufReader::new(
        response
            .into_body()
            .into_with_config()
            .limit(MAX_BODY)
            .reader(),
    );
    let mut line = Vec::new();
    loop {
        line.clear();
        let read = (&mut reader).take(MAX_LINE).read_until(b'\n', &mut line);
        let wire = match read {
            Ok(0) => Wire::End,
            Ok(_) if line.last() != Some(&b'\n') && line.len() as u64 >= MAX_LINE => {
                Wire::Failed(ureq::Error::Io(std::io::Error::other(format!(
                    "a line longer than {MAX_LINE} bytes"
                ))))
            }
            Ok(_) => {
                if line.last() == Some(&b'\n') {
                    line.pop();
                }
                Wire::Line(String::from_utf8_lossy(&line).into_owned())
            }
            // The reader wraps ureq's own errors (timeouts) in io::Error; `from` unwraps them.
            Err(error) => Wire::Failed(ureq::Error::from(error)),
        };
        let last = matches!(wire, Wire::End | Wire::Failed(_));
        if out.send(wire).is_err() || last {
            return;
        }
    }
}

/// The server's own words from an error body: `error.message`, `error` (a string), `message` or
/// `detail`, else the body itself, shortened.
fn server_message(body: &str) -> String {
    let body = body.trim();
    if body.is_empty() {
        return "(no message)".to_string();
    }
    serde_json::from_str::<Value>(body)
        .ok()
        .and_then(|json| error_message(&json))
        .unwrap_or_else(|| excerpt(body))
}

fn error_message(json: &Value) -> Option<String> {
    let text = |v: &Value| v.as_str().map(str::to_string);
    json.get("error")
        .and_then(|e| e.get("message").and_then(text).or_else(|| text(e)))
        .or_else(|| json.get("message").and_then(text))
        .or_else(|| json.get("detail").and_then(text))
        .or_else(|| text(json))
}

/// The first 300 characters of `text`, for error messages.
fn excerpt(text: &str) -> String {
    let mut short: String = text.trim().chars().take(300).collect();
    if short.len() < text.trim().len() {
        short.push('…');
    }
    short
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_request_body_asks_for_a_stream_with_usage() {
        let mut request = ChatRequest::new(vec![Message::system("s"), Message::user("q")]);
        request.max_tokens = Some(64);
        let body: Value = serde_json::from_slice(&request_body("m", &request)).unwrap();
        assert_eq!(
            body,
            serde_json::json!({
                "model": "m",
                "messages": [{"role": "system", "content": "s"}, {"role": "user", "content": "q"}],
                "stream": true,
                "stream_options": {"include_usage": true},
                "max_tokens": 64,
            })
        );
    }

    #[test]
    fn a_schema_goes_as_response_format() {
        let mut request = ChatRequest::new(vec![Message::user("q")]);
        request.response_format = Some(crate::JsonSchema {
            name: "record".into(),
            schema: serde_json::json!({"type": "object"}),
        });
        let body: Value = serde_json::from_slice(&request_body("m", &request)).unwrap();
        assert_eq!(
            body["response_format"],
            serde_json::json!({
                "type": "json_schema",
                "json_schema": {"name": "record", "schema": {"type": "object"}, "strict": false},
            })
        );
    }

    #[test]
    fn server_messages_are_found_in_the_usual_places() {
        assert_eq!(
            server_message(r#"{"error":{"message":"bad key","type":"auth"}}"#),
            "bad key"
        );
        assert_eq!(
            server_message(r#"{"error":"model not found"}"#),
            "model not found"
        );
        assert_eq!(server_message(r#"{"detail":"nope"}"#), "nope");
        assert_eq!(server_message("<html>502</html>\n"), "<html>502</html>");
        assert_eq!(server_message(""), "(no message)");
        assert!(server_message(&"x".repeat(1000)).ends_with('…'));
    }
}
