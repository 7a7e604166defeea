//! Hardening of the MCP faces and of `quire serve` (what a security review tried): the real binary,
//! spoken to as a client would, with the exact bytes where they matter.
//!
//! - one set of limits on every face (`quire_mcp::limits`): tool arguments over their limit are
//!   tool errors that state the limit and never echo the value; a stdio line over 64 KiB and an
//!   HTTP body over 64 KiB (`quire mcp --http` and `quire serve`'s `/mcp`) are refused;
//! - stdio answers every line: not JSON is -32700, too long is -32600 (with the id when it can
//!   be read), and the server keeps serving;
//! - results stay under 60 KB whatever the notes hold (a 100,000-character title), and a
//!   1,000,000-character line is read back whole in pieces (`next_lines`/`next_offset`), over
//!   MCP and over `/api/notes`;
//! - `quire serve` beyond loopback: `/mcp` answers the same `Host`s as the rest when the token
//!   is right, `bearer` is as good as `Bearer`, and blank or control-character tokens are
//!   refused at start.

#![allow(clippy::unwrap_used)] // tests and benches stop at the first surprise

use std::fs;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::PathBuf;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{self, Receiver};
use std::time::{Duration, Instant};

use quire_testkit::{Server, copy_tree as copy_dir};
use serde_json::{Value, json};

const PATIENCE: Duration = Duration::from_secs(60);
const TOKEN: &str = "correct-horse-battery-staple";
/// The limits the faces document (`quire_mcp::limits`).
const MAX_BODY_BYTES: usize = 64 * 1024;
const MAX_RESULT_BYTES: usize = 60_000;
const MAX_NOTE_TEXT_BYTES: usize = 40_000;

fn workspace() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// A temporary copy of the sample vault, with room for an index beside it.
struct Fixture {
    _dir: tempfile::TempDir,
    vault: PathBuf,
    index: PathBuf,
}

fn sample() -> Fixture {
    let dir = tempfile::tempdir().unwrap();
    let vault = dir.path().join("vault");
    copy_dir(&workspace().join("examples/vault"), &vault);
    let index = dir.path().join("index");
    Fixture {
        _dir: dir,
        vault,
        index,
    }
}

/// A line of `chars` characters that JSON escapes and UTF-8 make awkward to cut: quotes,
/// backslashes, tabs, two- and three-byte characters.
fn awkward_line(chars: usize) -> String {
    let alphabet: Vec<char> = "abc dé\"\\漢\tzq".chars().collect();
    (0..chars)
        .map(|i| alphabet[(i * 7 + i / 13) % alphabet.len()])
        .collect()
}

/// The sample vault plus `Long.md` (one line of 1,000,000 characters) and `Title.md` (a
/// 100,000-character title), indexed without embeddings.
fn vault_with_long_notes() -> (Fixture, String) {
    let f = sample();
    let long = format!("{}\n", awkward_line(1_000_000));
    fs::write(f.vault.join("Long.md"), &long).unwrap();
    fs::write(
        f.vault.join("Title.md"),
        format!("# {}\n\nThe quokka lives here.\n", "T".repeat(100_000)),
    )
    .unwrap();
    index(&f);
    (f, long)
}

/// `quire --vault …` with the index directory of `f` and nothing of the developer's
/// environment that could reach another host.
fn quire(f: &Fixture) -> Command {
    quire_testkit::quire(env!("CARGO_BIN_EXE_quire"), &f.vault, &f.index)
}

fn index(f: &Fixture) {
    let out = quire(f)
        .args(["index", "--no-embeddings"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

// ---- a raw MCP client over stdio ----------------------------------------------------------

/// `quire mcp` on stdin/stdout, spoken to one JSON-RPC line at a time.
struct McpStdio {
    child: Child,
    stdin: ChildStdin,
    replies: Receiver<String>,
    next_id: u64,
}

impl Drop for McpStdio {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl McpStdio {
    fn start(f: &Fixture) -> McpStdio {
        let mut child = quire(f)
            .args(["mcp", "--no-watch"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        quire_testkit::stderr_log(&mut child);
        let stdout = child.stdout.take().unwrap();
        let (sender, replies) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if sender.send(line).is_err() {
                    break;
                }
            }
        });
        let stdin = child.stdin.take().unwrap();
        let mut client = McpStdio {
            child,
            stdin,
            replies,
            next_id: 1,
        };
        let init = client.request(
            "initialize",
            json!({"protocolVersion": "2025-06-18", "capabilities": {},
                   "clientInfo": {"name": "hardening", "version": "0"}}),
        );
        assert_eq!(init["result"]["serverInfo"]["name"], "quire", "{init}");
        client.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}).to_string());
        client
    }

    fn send(&mut self, line: impl AsRef<[u8]>) {
        self.stdin.write_all(line.as_ref()).unwrap();
        self.stdin.write_all(b"\n").unwrap();
        self.stdin.flush().unwrap();
    }

    /// The next line the server writes.
    fn reply_line(&self) -> String {
        self.replies
            .recv_timeout(PATIENCE)
            .expect("the server answers within a minute")
    }

    /// The reply to request `id`, and the length of its line (notifications are skipped).
    fn reply_to(&self, id: &Value) -> (Value, usize) {
        loop {
            let line = self.reply_line();
            let reply: Value = serde_json::from_str(&line).expect("a reply is JSON");
            if &reply["id"] == id {
                return (reply, line.len());
            }
        }
    }

    fn request(&mut self, method: &str, params: Value) -> Value {
        let id = self.next_id;
        self.next_id += 1;
        self.send(
            json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}).to_string(),
        );
        self.reply_to(&json!(id)).0
    }

    /// A tool call: the result (`isError`, `content`, `structuredContent`) and the reply's
    /// length on the wire.
    fn call(&mut self, tool: &str, arguments: Value) -> (Value, usize) {
        let id = self.next_id;
        self.next_id += 1;
        self.send(
            json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
                   "params": {"name": tool, "arguments": arguments}})
            .to_string(),
        );
        let (reply, len) = self.reply_to(&json!(id));
        assert!(reply.get("result").is_some(), "{tool}: {reply}");
        (reply["result"].clone(), len)
    }
}

/// The text of a tool result's first content block.
fn text_of(result: &Value) -> &str {
    result["content"][0]["text"].as_str().unwrap_or_default()
}

fn json_len(value: &Value) -> usize {
    value.to_string().len()
}

// ---- a small HTTP client ------------------------------------------------------------------

/// An HTTP response: the status, the head (status line and headers) and the body (chunked
/// transfer decoded).
struct Response {
    status: u16,
    head: String,
    body: String,
}

/// `head` and `body` of a raw response as far as it has arrived.
fn split_response(bytes: &[u8]) -> Response {
    let text = String::from_utf8_lossy(bytes);
    let (head, body) = text.split_once("\r\n\r\n").unwrap_or((&text, ""));
    let status = head
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    let body = if head
        .to_ascii_lowercase()
        .contains("transfer-encoding: chunked")
    {
        dechunk(body)
    } else {
        body.to_string()
    };
    Response {
        status,
        head: head.to_string(),
        body,
    }
}

/// Sends one HTTP/1.1 request exactly as written (`head` without the final blank line) with
/// `body`, and reads the response: to its end, or for a stream of events, to the end of the
/// event that carries the JSON-RPC reply.
fn raw(addr: &str, head: &str, body: &[u8]) -> Response {
    let mut stream = TcpStream::connect(addr).unwrap();
    stream.set_read_timeout(Some(PATIENCE)).unwrap();
    let request = format!(
        "{head}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    );
    stream.write_all(request.as_bytes()).unwrap();
    // The server may answer (413) before it has read the whole body and close the connection.
    let _ = stream.write_all(body);
    let mut bytes = Vec::new();
    let mut chunk = [0u8; 8192];
    loop {
        match stream.read(&mut chunk) {
            Ok(0) | Err(_) => break,
            Ok(n) => bytes.extend_from_slice(&chunk[..n]),
        }
        let so_far = split_response(&bytes);
        if so_far
            .head
            .to_ascii_lowercase()
            .contains("text/event-stream")
            && let Some(at) = so_far.body.find("\"jsonrpc\"")
            && so_far.body[at..].contains("\n\n")
        {
            break;
        }
    }
    split_response(&bytes)
}

/// The JSON-RPC message in an MCP HTTP response (plain JSON or server-sent events).
fn jsonrpc_in(response: &Response) -> Value {
    let body = response.body.as_str();
    body.lines()
        .filter_map(|line| line.strip_prefix("data:"))
        .map(str::trim)
        .chain(std::iter::once(body.trim()))
        .find_map(|data| serde_json::from_str::<Value>(data).ok())
        .filter(|v| v.get("jsonrpc").is_some())
        .unwrap_or_else(|| panic!("no JSON-RPC message in {}\n\n{body}", response.head))
}

/// The session id header of an MCP response.
fn session_of(response: &Response) -> String {
    response
        .head
        .lines()
        .find_map(|line| {
            let (name, value) = line.split_once(':')?;
            name.eq_ignore_ascii_case("mcp-session-id")
                .then(|| value.trim().to_string())
        })
        .unwrap_or_else(|| panic!("no session id in {}", response.head))
}

fn initialize_body() -> Vec<u8> {
    json!({"jsonrpc": "2.0", "id": 1, "method": "initialize",
           "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                      "clientInfo": {"name": "hardening", "version": "0"}}})
    .to_string()
    .into_bytes()
}

/// `POST /mcp` with the headers MCP clients send, plus `extra` header lines.
fn post_mcp(addr: &str, host: &str, extra: &str, body: &[u8]) -> Response {
    let mut head = format!(
        "POST /mcp HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream"
    );
    if !extra.is_empty() {
        head.push_str("\r\n");
        head.push_str(extra);
    }
    raw(addr, &head, body)
}

/// Initializes an MCP session over HTTP (`host` in the `Host` header, `extra` header lines
/// with every request) and calls one tool: the tool result.
fn http_tool_call(addr: &str, host: &str, extra: &str, tool: &str, arguments: Value) -> Value {
    let response = post_mcp(addr, host, extra, &initialize_body());
    assert_eq!(response.status, 200, "{}\n{}", response.head, response.body);
    let session = session_of(&response);
    let mut headers = format!("Mcp-Session-Id: {session}\r\nMCP-Protocol-Version: 2025-06-18");
    if !extra.is_empty() {
        headers = format!("{extra}\r\n{headers}");
    }
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    let response = post_mcp(addr, host, &headers, initialized.to_string().as_bytes());
    assert!(
        response.status == 202 || response.status == 200,
        "{}",
        response.head
    );
    let call = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                      "params": {"name": tool, "arguments": arguments}});
    let response = post_mcp(addr, host, &headers, call.to_string().as_bytes());
    assert_eq!(response.status, 200, "{}\n{}", response.head, response.body);
    jsonrpc_in(&response)["result"].clone()
}

/// `GET path` with `Host: addr` and `extra` header lines: the status and the body as JSON.
fn get_json(addr: &str, path: &str, extra: &str) -> (u16, Value) {
    let mut head = format!("GET {path} HTTP/1.1\r\nHost: {addr}");
    if !extra.is_empty() {
        head.push_str("\r\n");
        head.push_str(extra);
    }
    let response = raw(addr, &head, b"");
    let body = serde_json::from_str(&response.body).unwrap_or(Value::String(response.body));
    (response.status, body)
}

fn dechunk(mut body: &str) -> String {
    let mut out = String::new();
    while let Some((size, rest)) = body.split_once("\r\n") {
        let size = usize::from_str_radix(size.trim(), 16).unwrap_or(0);
        if size == 0 || rest.len() < size {
            break;
        }
        out.push_str(&rest[..size]);
        body = rest[size..].trim_start_matches("\r\n");
    }
    out
}

fn percent_encoded(text: &str) -> String {
    text.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}

/// Waits until `quire serve` at `addr` has an index.
fn wait_ready(server: &Server, extra: &str) {
    let started = Instant::now();
    loop {
        let (status, body) = get_json(&server.addr, "/api/status", extra);
        if status == 200 && body["ready"] == true {
            return;
        }
        assert!(
            started.elapsed() < PATIENCE,
            "not ready: {body}\n{}",
            server.log()
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

// ---- the tests ----------------------------------------------------------------------------

#[test]
fn mcp_tool_arguments_over_their_limits_are_tool_errors_that_state_the_limit() {
    let f = sample();
    index(&f);
    let mut mcp = McpStdio::start(&f);

    let (result, len) = mcp.call("search_notes", json!({"query": "q".repeat(1_001)}));
    assert_eq!(result["isError"], true, "{result}");
    assert_eq!(
        text_of(&result),
        "invalid arguments for `search_notes`: `query` is 1001 characters long; the limit is 1000 characters"
    );
    assert!(len < 500, "the reply is {len} bytes");
    // At the limit, the query runs.
    let at_limit = "starter ".repeat(125);
    let (result, _) = mcp.call("search_notes", json!({"query": at_limit.trim_end()}));
    assert_eq!(result["isError"], false, "{result}");

    let long = "z".repeat(50_000);
    for (tool, arguments, named) in [
        ("search_notes", json!({"query": long}), "`query` is 50000"),
        (
            "search_notes",
            json!({"query": "x", "folder": long}),
            "`folder` is 50000",
        ),
        (
            "search_notes",
            json!({"query": "x", "tag": long}),
            "`tag` is 50000",
        ),
        (
            "search_notes",
            json!({"query": "x", "k": long}),
            "`k` is 50000",
        ),
        (
            "search_notes",
            json!({"query": "x", "mode": long}),
            "`mode` is 50000",
        ),
        (
            "search_notes",
            json!({"query": "x", long.clone(): 1}),
            "an argument name is 50000",
        ),
        ("get_note", json!({"path": long}), "`path` is 50000"),
        (
            "get_note",
            json!({"path": "Home.md", "lines": long}),
            "`lines` is 50000",
        ),
        (
            "get_note",
            json!({"path": "Home.md", "heading": "h".repeat(501)}),
            "`heading` is 501",
        ),
        ("get_outline", json!({"path": long}), "`path` is 50000"),
        (
            "find_related_notes",
            json!({"path": long}),
            "`path` is 50000",
        ),
        ("list_notes", json!({"folder": long}), "`folder` is 50000"),
        (
            "list_notes",
            json!({"property": "p".repeat(501)}),
            "`property` is 501",
        ),
        ("vault_tree", json!({"folder": long}), "`folder` is 50000"),
    ] {
        let (result, len) = mcp.call(tool, arguments);
        let text = text_of(&result);
        assert_eq!(result["isError"], true, "{tool}: {text}");
        assert!(
            text.contains(named) && text.contains("the limit is"),
            "{tool}: {text}"
        );
        assert!(!text.contains("zzzzzzzzzz"), "{tool} echoes the argument");
        assert!(len < 500, "{tool}: the reply is {len} bytes");
    }
    // An unknown tool with a long name: a protocol error that does not repeat the name.
    let id = json!(900);
    mcp.send(
        json!({"jsonrpc": "2.0", "id": 900, "method": "tools/call",
               "params": {"name": long, "arguments": {}}})
        .to_string(),
    );
    let (reply, len) = mcp.reply_to(&id);
    assert_eq!(reply["error"]["code"], -32602, "{reply}");
    assert!(len < 500, "the reply is {len} bytes");
}

#[test]
fn mcp_stdio_answers_lines_that_are_not_json_or_too_long_with_json_rpc_errors() {
    let f = sample();
    index(&f);
    let mut mcp = McpStdio::start(&f);

    mcp.send("this is not json");
    let reply: Value = serde_json::from_str(&mcp.reply_line()).unwrap();
    assert_eq!(reply["jsonrpc"], "2.0");
    assert_eq!(reply["id"], Value::Null);
    assert_eq!(reply["error"]["code"], -32700, "{reply}");
    assert!(
        reply["error"]["message"]
            .as_str()
            .unwrap()
            .starts_with("Parse error"),
        "{reply}"
    );

    // A 5 MB message: refused unread, with its id, before any search runs.
    let huge = json!({"jsonrpc": "2.0", "id": 41, "method": "tools/call",
                      "params": {"name": "search_notes", "arguments": {"query": "x".repeat(5_000_000)}}})
    .to_string();
    mcp.send(&huge);
    let (reply, len) = mcp.reply_to(&json!(41));
    assert_eq!(reply["error"]["code"], -32600, "{reply}");
    assert_eq!(
        reply["error"]["message"],
        format!(
            "Invalid Request: the message is {} bytes long; the limit is {MAX_BODY_BYTES} bytes",
            huge.len()
        )
    );
    assert!(len < 300, "the reply is {len} bytes");

    // One byte over the limit is too long; the limit itself is not.
    // JSON allows whitespace between tokens: a ping padded to `total` bytes.
    let pad = |total: usize| {
        let head = r#"{"jsonrpc":"2.0","id":43,"method":"ping""#;
        format!("{head}{}}}", " ".repeat(total - head.len() - 1))
    };
    mcp.send(pad(MAX_BODY_BYTES + 1));
    let (reply, _) = mcp.reply_to(&json!(43));
    assert_eq!(reply["error"]["code"], -32600, "{reply}");
    mcp.send(pad(MAX_BODY_BYTES));
    let (reply, _) = mcp.reply_to(&json!(43));
    assert!(reply.get("result").is_some(), "{reply}");

    // The server still serves.
    let tools = mcp.request("tools/list", json!({}));
    assert_eq!(tools["result"]["tools"].as_array().map(Vec::len), Some(6));
    let (result, _) = mcp.call("search_notes", json!({"query": "starter"}));
    assert_eq!(result["isError"], false, "{result}");
}

#[test]
fn mcp_results_stay_under_60_kb_and_a_long_line_reads_back_whole() {
    let (f, long) = vault_with_long_notes();
    let mut mcp = McpStdio::start(&f);

    // get_note in pieces, each cut inside the line and saying where to go on.
    let mut arguments = json!({"path": "Long.md"});
    let mut read = String::new();
    let mut pieces = 0;
    loop {
        let (result, len) = mcp.call("get_note", arguments.clone());
        assert_eq!(result["isError"], false, "{result}");
        let note = &result["structuredContent"];
        assert!(json_len(note) <= MAX_RESULT_BYTES);
        assert!(json_len(&note["text"]) <= MAX_NOTE_TEXT_BYTES + 2);
        assert!(
            len < 2 * MAX_RESULT_BYTES + 20_000,
            "the reply is {len} bytes"
        );
        assert_eq!(note["start_line"], 1);
        read.push_str(note["text"].as_str().unwrap());
        pieces += 1;
        if note["truncated"] == false {
            assert!(note.get("next_lines").is_none());
            break;
        }
        assert_eq!(note["next_lines"], "1-1", "{}", note["next"]);
        let offset = note["next_offset"].as_u64().unwrap();
        assert_eq!(offset as usize, read.chars().count());
        assert!(
            note["next"]
                .as_str()
                .unwrap()
                .contains(&format!("offset={offset}"))
        );
        arguments = json!({"path": "Long.md", "lines": "1-1", "offset": offset});
        assert!(pieces < 200, "no progress");
    }
    assert!(
        read == long.trim_end_matches('\n'),
        "the pieces differ from the file ({} and {} characters)",
        read.chars().count(),
        long.trim_end_matches('\n').chars().count()
    );
    assert!(pieces > 25, "{pieces} pieces");
    // An offset past the end is a tool error.
    let (result, _) = mcp.call("get_note", json!({"path": "Long.md", "offset": 1_000_000}));
    assert_eq!(result["isError"], true);
    assert!(
        text_of(&result).contains("only 1000000 characters"),
        "{}",
        text_of(&result)
    );

    // The note as a resource is cut too, and says how to read the rest.
    let resource = mcp.request("resources/read", json!({"uri": "quire://note/Long.md"}));
    let text = resource["result"]["contents"][0]["text"].as_str().unwrap();
    assert!(
        text.len() < MAX_NOTE_TEXT_BYTES + 500,
        "{} bytes",
        text.len()
    );
    assert!(
        text.contains("get_note(path=\"Long.md\", lines=\"1-1\", offset="),
        "{}",
        text.len()
    );

    // A 100,000-character title does not blow up any result.
    for (tool, arguments) in [
        ("search_notes", json!({"query": "quokka", "mode": "bm25"})),
        ("list_notes", json!({"limit": 200})),
        ("vault_tree", json!({})),
        ("get_outline", json!({"path": "Title.md"})),
        ("get_note", json!({"path": "Title.md"})),
        ("find_related_notes", json!({"path": "Title.md"})),
    ] {
        let (result, len) = mcp.call(tool, arguments);
        assert_eq!(result["isError"], false, "{tool}: {}", text_of(&result));
        let value = &result["structuredContent"];
        assert!(
            json_len(value) <= MAX_RESULT_BYTES,
            "{tool}: {} bytes",
            json_len(value)
        );
        assert!(
            len < 2 * MAX_RESULT_BYTES + 20_000,
            "{tool}: the reply is {len} bytes"
        );
    }
    let (result, _) = mcp.call("search_notes", json!({"query": "quokka", "mode": "bm25"}));
    let hit = &result["structuredContent"]["results"][0];
    assert_eq!(hit["path"], "Title.md");
    assert_eq!(hit["title"].as_str().unwrap().chars().count(), 1_001);
    assert!(hit["title"].as_str().unwrap().ends_with('…'));
}

#[test]
fn api_notes_reads_a_long_line_back_whole_in_pieces() {
    let (f, long) = vault_with_long_notes();
    let mut command = quire(&f);
    command.args(["serve", "--port", "0", "--no-watch"]);
    let server = Server::start(&mut command, PATIENCE);
    wait_ready(&server, "");
    let mut query = String::new();
    let mut read = String::new();
    loop {
        let (status, note) = get_json(&server.addr, &format!("/api/notes/Long.md{query}"), "");
        assert_eq!(status, 200, "{note}");
        assert!(json_len(&note) <= MAX_RESULT_BYTES);
        read.push_str(note["text"].as_str().unwrap());
        if note["truncated"] == false {
            break;
        }
        let lines = note["next_lines"].as_str().unwrap();
        let offset = note["next_offset"].as_u64().unwrap();
        query = format!("?lines={}&offset={offset}", percent_encoded(lines));
    }
    assert!(
        read == long.trim_end_matches('\n'),
        "the pieces differ from the file ({} and {} characters)",
        read.chars().count(),
        long.trim_end_matches('\n').chars().count()
    );
    let (status, body) = get_json(&server.addr, "/api/notes/Long.md?offset=x", "");
    assert_eq!(status, 400, "{body}");
    // The search of a note with a huge title fits the budget too.
    let (status, body) = get_json(&server.addr, "/api/search?q=quokka&mode=bm25", "");
    assert_eq!(status, 200);
    assert!(
        json_len(&body) <= MAX_RESULT_BYTES,
        "{} bytes",
        json_len(&body)
    );
    assert_eq!(body["results"][0]["path"], "Title.md");
}

#[test]
fn mcp_http_refuses_bodies_over_64_kib() {
    let f = sample();
    index(&f);
    let mut command = quire(&f);
    command.args(["mcp", "--no-watch", "--http", "127.0.0.1:0"]);
    let server = Server::start(&mut command, PATIENCE);
    let mut padded: Value = serde_json::from_slice(&initialize_body()).unwrap();
    padded["params"]["clientInfo"]["title"] = "p".repeat(100_000).into();
    let response = post_mcp(
        &server.addr,
        &server.addr,
        "",
        padded.to_string().as_bytes(),
    );
    assert_eq!(response.status, 413, "{}", response.head);
    assert!(
        response
            .body
            .contains(&format!("exceeds {MAX_BODY_BYTES} bytes")),
        "{}",
        response.body
    );
    // The argument limits hold over HTTP too.
    let result = http_tool_call(
        &server.addr,
        &server.addr,
        "",
        "search_notes",
        json!({"query": "q".repeat(1_001)}),
    );
    assert_eq!(result["isError"], true, "{result}");
    assert!(text_of(&result).contains("the limit is 1000 characters"));
}

#[test]
fn serve_mcp_route_has_the_same_body_and_argument_limits() {
    let f = sample();
    index(&f);
    let mut command = quire(&f);
    command.args(["serve", "--port", "0", "--no-watch"]);
    let server = Server::start(&mut command, PATIENCE);
    wait_ready(&server, "");
    let mut padded: Value = serde_json::from_slice(&initialize_body()).unwrap();
    padded["params"]["clientInfo"]["title"] = "p".repeat(100_000).into();
    let response = post_mcp(
        &server.addr,
        &server.addr,
        "",
        padded.to_string().as_bytes(),
    );
    assert_eq!(response.status, 413, "{}", response.head);
    let result = http_tool_call(
        &server.addr,
        &server.addr,
        "",
        "search_notes",
        json!({"query": "q".repeat(1_001)}),
    );
    assert_eq!(result["isError"], true, "{result}");
    assert_eq!(
        text_of(&result),
        "invalid arguments for `search_notes`: `query` is 1001 characters long; the limit is 1000 characters"
    );
    // /api/search states the same limit.
    let (status, body) = get_json(
        &server.addr,
        &format!("/api/search?q={}", "q".repeat(1_001)),
        "",
    );
    assert_eq!(status, 400);
    assert_eq!(
        body["error"]["message"],
        "`q` is 1001 characters long; the limit is 1000 characters"
    );
    // On loopback without a token, /mcp keeps its DNS-rebinding protection.
    let response = post_mcp(&server.addr, "evil.example", "", &initialize_body());
    assert_eq!(response.status, 403);
}

#[test]
fn serve_beyond_loopback_answers_mcp_for_its_hosts_with_the_token() {
    let f = sample();
    index(&f);
    let mut command = quire(&f);
    command.env("QUIRE_TOKEN", TOKEN).args([
        "serve",
        "--port",
        "0",
        "--no-watch",
        "--host",
        "0.0.0.0",
    ]);
    let server = Server::start(&mut command, PATIENCE);
    // The address a remote client uses: not loopback.
    let host = format!("192.0.2.10:{}", server.port());
    let capital = format!("Authorization: Bearer {TOKEN}");
    let started = Instant::now();
    loop {
        let (status, body) = get_json(&server.addr, "/api/status", &capital);
        assert_eq!(status, 200, "{body}");
        if body["ready"] == true {
            break;
        }
        assert!(started.elapsed() < PATIENCE, "not ready: {body}");
        std::thread::sleep(Duration::from_millis(100));
    }
    let response = post_mcp(&server.addr, &host, &capital, &initialize_body());
    assert_eq!(
        response.status,
        200,
        "{}\n{}\n{}",
        response.head,
        response.body,
        server.log()
    );
    assert_eq!(
        jsonrpc_in(&response)["result"]["serverInfo"]["name"],
        "quire"
    );
    // The scheme is case-insensitive (RFC 7235): `bearer` works everywhere too.
    let bearer = format!("Authorization: bearer {TOKEN}");
    let (status, body) = get_json(&server.addr, "/api/status", &bearer);
    assert_eq!(status, 200, "`bearer` in lower case: {body}");
    let response = post_mcp(&server.addr, &host, &bearer, &initialize_body());
    assert_eq!(response.status, 200, "{}", response.head);
    let init = jsonrpc_in(&response);
    assert_eq!(init["result"]["serverInfo"]["name"], "quire", "{init}");
    // Without the token, with a wrong one or another scheme: still refused.
    for extra in [
        String::new(),
        "Authorization: Bearer wrong-token-wrong-token".to_string(),
        format!("Authorization: Basic {TOKEN}"),
    ] {
        let response = post_mcp(&server.addr, &host, &extra, &initialize_body());
        assert_eq!(response.status, 401, "{extra}");
    }
    // A whole session from the remote address.
    let result = http_tool_call(
        &server.addr,
        &host,
        &bearer,
        "search_notes",
        json!({"query": "starter"}),
    );
    assert_eq!(result["isError"], false, "{result}");
    assert!(
        !result["structuredContent"]["results"]
            .as_array()
            .unwrap()
            .is_empty()
    );
}

/// Runs `quire serve` with `token` and expects it to refuse to start: its stderr.
fn refused_at_start(token: &str) -> String {
    let f = sample();
    let mut child = quire(&f)
        .env("QUIRE_TOKEN", token)
        .args(["serve", "--port", "0", "--no-watch", "--host", "0.0.0.0"])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let started = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if started.elapsed() > Duration::from_secs(30) {
            let _ = child.kill();
            let _ = child.wait();
            panic!("quire serve started with the token {token:?}");
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let mut stderr = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut stderr)
        .unwrap();
    assert_eq!(status.code(), Some(1), "{stderr}");
    stderr
}

#[test]
fn serve_refuses_blank_short_and_control_character_tokens_at_start() {
    for blank in [
        " ".repeat(16),
        " \t".repeat(12),
        format!("{}x", " ".repeat(20)),
    ] {
        let stderr = refused_at_start(&blank);
        assert!(
            stderr.contains(
                "the token must be at least 16 characters long, not counting spaces or other whitespace"
            ),
            "{blank:?}: {stderr}"
        );
    }
    let stderr = refused_at_start("correct-horse\u{1b}battery-staple");
    assert!(
        stderr.contains("the token must not contain control characters"),
        "{stderr}"
    );
    // Spaces around a good token are trimmed: the token is what is left.
    let f = sample();
    let mut command = quire(&f);
    command.env("QUIRE_TOKEN", format!("  {TOKEN} \n")).args([
        "serve",
        "--port",
        "0",
        "--no-watch",
        "--host",
        "0.0.0.0",
    ]);
    let server = Server::start(&mut command, PATIENCE);
    let (status, body) = get_json(
        &server.addr,
        "/api/status",
        &format!("Authorization: Bearer {TOKEN}"),
    );
    assert_eq!(status, 200, "{body}");
}

/// Found by the `http_request` fuzz target: a body shorter than its `Content-Length` (the client
/// closes its side) made rmcp answer 500. It is the client's mistake: 400.
#[test]
fn serve_mcp_route_answers_a_truncated_body_with_400() {
    let f = sample();
    index(&f);
    let mut command = quire(&f);
    command.args(["serve", "--port", "0", "--no-watch"]);
    let server = Server::start(&mut command, PATIENCE);
    wait_ready(&server, "");
    let body = br#"{"jsonrpc":"2.0","id":1,"method":"initialize""#;
    let mut stream = TcpStream::connect(&server.addr).unwrap();
    stream.set_read_timeout(Some(PATIENCE)).unwrap();
    let head = format!(
        "POST /mcp HTTP/1.1\r\nHost: {}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: {}\r\n\r\n",
        server.addr,
        body.len() + 100
    );
    stream.write_all(head.as_bytes()).unwrap();
    stream.write_all(body).unwrap();
    stream.shutdown(std::net::Shutdown::Write).unwrap();
    let mut bytes = Vec::new();
    let _ = stream.read_to_end(&mut bytes);
    let response = split_response(&bytes);
    assert_eq!(response.status, 400, "{}\n{}", response.head, response.body);
    assert!(
        response.body.contains("could not be read whole"),
        "{}",
        response.body
    );
}

/// The same request past a limit gets the same refusal, in the same words, from the CLI, the
/// HTTP API and MCP (the limits live once, in `quire_app::limits`).
#[test]
fn the_same_limits_hold_on_every_face() {
    let f = sample();
    index(&f);
    let k_refused = "`k` must be a whole number from 1 to 50, not 51";
    let notes_refused = "`notes` must be a whole number from 1 to 12, not 13";

    // The command line.
    for args in [
        &["search", "starter", "--mode", "bm25", "-k", "51"][..],
        &["similar", "Sourdough Starter", "-k", "51"],
        &["ask", "--notes", "13", "How do I feed the starter?"],
    ] {
        let out = quire(&f).args(args).output().unwrap();
        assert!(!out.status.success(), "{args:?}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        let expected = if args[0] == "ask" {
            notes_refused
        } else {
            k_refused
        };
        assert!(stderr.contains(expected), "{args:?}: {stderr}");
    }

    // HTTP.
    let mut command = quire(&f);
    command.args(["serve", "--port", "0", "--no-watch"]);
    let server = Server::start(&mut command, PATIENCE);
    let agent = ureq::Agent::new_with_config(
        ureq::Agent::config_builder()
            .http_status_as_error(false)
            .timeout_global(Some(PATIENCE))
            .build(),
    );
    let refusal = |mut response: ureq::http::Response<ureq::Body>| -> String {
        assert_eq!(response.status().as_u16(), 400);
        let body: Value =
            serde_json::from_str(&response.body_mut().read_to_string().unwrap()).unwrap();
        assert_eq!(body["error"]["code"], "bad_request", "{body}");
        body["error"]["message"].as_str().unwrap().to_string()
    };
    for path in [
        "/api/search?q=starter&k=51",
        "/api/similar/Resources/Sourdough%20Starter.md?k=51",
    ] {
        let response = agent.get(&format!("{}{path}", server.url)).call().unwrap();
        assert_eq!(refusal(response), k_refused, "{path}");
    }
    let response = agent
        .post(&format!("{}/api/ask", server.url))
        .header("Content-Type", "application/json")
        .send(json!({"question": "How do I feed the starter?", "notes": 13}).to_string())
        .unwrap();
    assert_eq!(refusal(response), notes_refused);

    // MCP.
    let mut mcp = McpStdio::start(&f);
    for (tool, arguments) in [
        ("search_notes", json!({"query": "starter", "k": 51})),
        (
            "find_related_notes",
            json!({"path": "Resources/Sourdough Starter.md", "k": 51}),
        ),
    ] {
        let (result, _) = mcp.call(tool, arguments);
        assert_eq!(result["isError"], true, "{tool}: {result}");
        assert!(text_of(&result).contains(k_refused), "{tool}: {result}");
    }
}
