//! `quire serve` end to end: the real binary on an ephemeral port (`--port 0`, the URL read from
//! stderr), spoken to over real HTTP (ureq, and raw TCP where the exact bytes matter), on
//! temporary copies of the sample vault and of a real vault from the shared corpora.
//!
//! - the API: search, notes (whole, lines, heading), outlines, related notes, status, the
//!   OpenAPI document, and JSON errors with stable codes;
//! - confinement: every route that takes a path refuses `..`, `%2e%2e`, double encoding,
//!   absolute paths and symlinks out of the vault;
//! - the guard: a token beyond loopback, checked on every route; `Host`, `Origin` and CORS;
//!   bounded bodies and counts;
//! - ask and draft streamed as server-sent events against a fake OpenAI-compatible server;
//! - the watcher: one per index, edits while serving end in the index of a fresh build, only
//!   changed chunks are embedded (a counting fake embedding server), and searches that run
//!   during syncs return whole results.

#![allow(clippy::unwrap_used)] // tests and benches stop at the first surprise

use quire_testkit as support;

use std::collections::{BTreeSet, HashSet};
use std::fs;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc::{self, Receiver};
use std::time::{Duration, Instant};

use quire_index::store::{ChunkRow, NoteRow};
use quire_index::{FullText, IndexLocation, Store};
use serde_json::{Value, json};
use support::{FakeChat, Server, answer, copy_tree as copy_dir, corpora};

const PATIENCE: Duration = Duration::from_secs(60);
const TOKEN: &str = "correct-horse-battery-staple";
const MCP_TOKEN: &str = "mcp-only-token-for-ai-clients";

fn workspace() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// A temporary copy of a vault, with room for an index beside it.
struct Fixture {
    dir: tempfile::TempDir,
    vault: PathBuf,
    index: PathBuf,
}

fn fixture(source: &Path) -> Fixture {
    let dir = tempfile::tempdir().unwrap();
    let vault = dir.path().join("vault");
    copy_dir(source, &vault);
    let index = dir.path().join("index");
    Fixture { dir, vault, index }
}

fn sample() -> Fixture {
    fixture(&workspace().join("examples/vault"))
}

fn starter() -> Fixture {
    fixture(&corpora().join("vaults/obsidian-starter-vault/vault"))
}

/// `quire --vault … --index-dir …` with nothing of the developer's environment that could
/// reach another host.
fn quire(f: &Fixture) -> Command {
    support::quire(env!("CARGO_BIN_EXE_quire"), &f.vault, &f.index)
}

/// Starts `quire … serve --port 0 ARGS` and waits until it listens.
fn serve(mut command: Command, args: &[&str]) -> Server {
    command
        .args(["serve", "--port", "0", "--debounce-ms", "300"])
        .args(args);
    Server::start(&mut command, PATIENCE)
}

fn agent() -> ureq::Agent {
    ureq::Agent::new_with_config(
        ureq::Agent::config_builder()
            .http_status_as_error(false)
            .timeout_global(Some(PATIENCE))
            .build(),
    )
}

/// GET with optional extra headers: the status and the body as JSON (or as a string).
fn get(url: &str, headers: &[(&str, &str)]) -> (u16, Value) {
    let mut request = agent().get(url);
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    let mut response = request.call().expect("the server answers");
    let status = response.status().as_u16();
    let text = response.body_mut().read_to_string().unwrap_or_default();
    let body = serde_json::from_str(&text).unwrap_or(Value::String(text));
    (status, body)
}

fn get_ok(url: &str) -> Value {
    let (status, body) = get(url, &[]);
    assert_eq!(status, 200, "GET {url}: {body}");
    body
}

fn post(url: &str, body: &str, content_type: Option<&str>) -> (u16, String) {
    let mut request = agent().post(url);
    if let Some(content_type) = content_type {
        request = request.header("Content-Type", content_type);
    }
    let mut response = request.send(body).expect("the server answers");
    let status = response.status().as_u16();
    (
        status,
        response.body_mut().read_to_string().unwrap_or_default(),
    )
}

/// The events of a server-sent event stream: (event name, data as JSON).
fn sse_events(body: &str) -> Vec<(String, Value)> {
    body.split("\n\n")
        .filter_map(|block| {
            let mut name = "message".to_string();
            let mut data = Vec::new();
            for line in block.lines() {
                if let Some(n) = line.strip_prefix("event:") {
                    name = n.trim().to_string();
                } else if let Some(d) = line.strip_prefix("data:") {
                    data.push(d.strip_prefix(' ').unwrap_or(d));
                }
            }
            (!data.is_empty()).then(|| {
                (
                    name,
                    serde_json::from_str(&data.join("\n")).expect("JSON data"),
                )
            })
        })
        .collect()
}

/// Sends `head` (the request line and headers, without the final blank line) exactly as
/// written, and returns the status and the body.
fn raw(addr: &str, head: &str) -> (u16, String) {
    let mut stream = TcpStream::connect(addr).unwrap();
    stream
        .write_all(format!("{head}\r\nConnection: close\r\n\r\n").as_bytes())
        .unwrap();
    let mut response = Vec::new();
    stream.read_to_end(&mut response).unwrap();
    let response = String::from_utf8_lossy(&response).into_owned();
    let (head, body) = response.split_once("\r\n\r\n").unwrap_or((&response, ""));
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
    (status, body)
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

/// Waits until the server has an index with `notes` notes (any count when `None`).
fn wait_ready(server: &Server, notes: Option<u64>) -> Value {
    let started = Instant::now();
    loop {
        let (status, body) = get(&format!("{}/api/status", server.url), &[]);
        if status == 200
            && body["ready"] == true
            && notes.is_none_or(|n| body["notes_indexed"] == n)
        {
            return body;
        }
        assert!(
            started.elapsed() < PATIENCE,
            "not ready: {body}\n{}",
            server.log()
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

fn enc(path: &str) -> String {
    path.replace(' ', "%20")
}

#[test]
fn the_api_answers_search_notes_outlines_related_notes_and_status() {
    let f = sample();
    let server = serve(quire(&f), &[]);
    // The new index answers a moment before its sync is reported: wait for both.
    let status = wait_synced(&server, 47);
    assert_eq!(status["vault"], "vault");
    assert_eq!(status["watching"], true);
    assert_eq!(status["default_mode"], "bm25");
    assert_eq!(status["skipped_total"], 0);
    assert!(status["chunks"].as_u64().unwrap() > 47);
    assert_eq!(status["last_sync"]["kind"], "index");
    let base = &server.url;

    // Search: grouped by note, lines that point at the text.
    let results = get_ok(&format!("{base}/api/search?q=feeding+the+starter&k=3"));
    assert_eq!(results["mode"], "bm25");
    let notes = results["results"].as_array().unwrap();
    assert!(!notes.is_empty() && notes.len() <= 3);
    assert_eq!(notes[0]["path"], "Resources/Sourdough Starter.md");
    let text = fs::read_to_string(f.vault.join("Resources/Sourdough Starter.md")).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    for section in notes[0]["sections"].as_array().unwrap() {
        let start = section["start_line"].as_u64().unwrap() as usize;
        let heading = section["heading_path"].as_array().unwrap();
        if let Some(last) = heading.last() {
            let heading_line = lines[..start]
                .iter()
                .rev()
                .find(|l| l.starts_with('#'))
                .unwrap();
            assert!(heading_line.contains(last.as_str().unwrap()));
        }
        assert!(!section["snippet"].as_str().unwrap().is_empty());
    }
    let filtered = get_ok(&format!("{base}/api/search?q=starter&folder=Journal"));
    for note in filtered["results"].as_array().unwrap() {
        assert!(note["path"].as_str().unwrap().starts_with("Journal/"));
    }

    // A note: whole, by lines, by heading; the text is the file's.
    let path = "Resources/Sourdough%20Starter.md";
    let whole = get_ok(&format!("{base}/api/notes/{path}"));
    assert_eq!(whole["text"], text.trim_end_matches('\n'));
    assert_eq!(whole["title"], "Sourdough Starter");
    let some = get_ok(&format!("{base}/api/notes/{path}?lines=2-3"));
    assert_eq!(some["text"], format!("{}\n{}", lines[1], lines[2]));
    let by_name = get_ok(&format!("{base}/api/notes/Sourdough%20Starter"));
    assert_eq!(by_name["path"], "Resources/Sourdough Starter.md");
    let outline = get_ok(&format!("{base}/api/outline/{path}"));
    let first = &outline["headings"][0];
    let heading = first["text"].as_str().unwrap();
    let section = get_ok(&format!("{base}/api/notes/{path}?heading={}", enc(heading)));
    assert_eq!(section["start_line"], first["line"]);

    // Related notes: links without embeddings, and why similar notes are missing.
    let related = get_ok(&format!("{base}/api/similar/{path}?k=5"));
    assert!(related["similar_unavailable"].is_string(), "{related}");
    assert!(related["backlinks"].is_array());

    // Filters by frontmatter (`where` repeats) and by date.
    let filtered = get_ok(&format!(
        "{base}/api/search?q=project&k=20&where=type%3Dproject&where=status%3Dactive"
    ));
    let hits = filtered["results"].as_array().unwrap();
    assert!(hits.len() >= 4, "{filtered}");
    for hit in hits {
        let text = fs::read_to_string(f.vault.join(hit["path"].as_str().unwrap())).unwrap();
        assert!(text.contains("\ntype: project\n"), "{hit}");
    }
    let dated = get_ok(&format!(
        "{base}/api/search?q=run&k=20&since=2026-11-20&until=2026-11-22"
    ));
    for hit in dated["results"].as_array().unwrap() {
        let path = hit["path"].as_str().unwrap();
        assert!(
            [
                "Journal/2026-11-20.md",
                "Journal/2026-11-21.md",
                "Journal/2026-11-22.md"
            ]
            .contains(&path),
            "{path}"
        );
    }

    // The OpenAPI document describes every route.
    let openapi = get_ok(&format!("{base}/api/openapi.json"));
    assert_eq!(openapi["openapi"], "3.1.0");
    for route in [
        "/api/search",
        "/api/notes/{path}",
        "/api/outline/{path}",
        "/api/similar/{path}",
        "/api/status",
        "/api/audit",
        "/api/audit/deep",
        "/api/flashcards",
        "/api/split",
        "/api/transform",
        "/api/complete",
        "/api/dataview",
        "/api/batch",
        "/api/ask",
        "/api/article/ask",
        "/api/draft",
        "/api/proposals",
        "/api/proposals/{id}",
        "/api/proposals/{id}/apply",
        "/api/proposals/{id}/reject",
        "/api/moc",
        "/api/events",
        "/api/findings",
        "/api/findings/{id}/dismiss",
        "/api/findings/{id}/snooze",
    ] {
        assert!(openapi["paths"][route].is_object(), "{route} undocumented");
    }

    // The audit is the CLI's report, over the vault the server holds.
    let audit = get_ok(&format!("{base}/api/audit?top=3"));
    let cli = quire_testkit::json(
        &quire(&f)
            .args(["--json", "audit", "--top", "3"])
            .output()
            .unwrap(),
    );
    assert_eq!(audit, cli, "/api/audit and quire audit --json differ");
    assert_eq!(audit["most_linked"].as_array().unwrap().len(), 3);
    assert_eq!(audit["summary"]["notes"], status["notes_indexed"]);

    // The findings inbox: one finding per orphan as the audit lists them; a dismissal is a JSON
    // POST and takes the finding out; a snooze needs a number of days in range.
    let inbox = get_ok(&format!("{base}/api/findings"));
    let orphans: Vec<&Value> = inbox["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["kind"] == "orphan")
        .collect();
    assert_eq!(orphans.len(), audit["orphans"].as_array().unwrap().len());
    let id = inbox["findings"][0]["id"].as_str().unwrap().to_string();
    let (status_code, _) = post(&format!("{base}/api/findings/{id}/dismiss"), "{}", None);
    assert_eq!(
        status_code, 415,
        "a dismissal without a JSON body is refused"
    );
    let (status_code, text) = post(
        &format!("{base}/api/findings/{id}/dismiss"),
        "{}",
        Some("application/json"),
    );
    assert_eq!(status_code, 200, "{text}");
    let (status_code, text) = post(
        &format!("{base}/api/findings/{id}/snooze"),
        r#"{"days": 0}"#,
        Some("application/json"),
    );
    assert_eq!(status_code, 400, "{text}");
    assert!(text.contains("from 1 to 365"), "{text}");
    let again = get_ok(&format!("{base}/api/findings"));
    assert_eq!(again["dismissed"], 1);
    assert!(
        !again["findings"]
            .as_array()
            .unwrap()
            .iter()
            .any(|f| f["id"] == id.as_str())
    );

    // Mistakes are JSON errors with stable codes.
    for (url, code) in [
        ("/api/search", "bad_request"),
        ("/api/search?q=x&k=0", "bad_request"),
        ("/api/search?q=x&k=51", "bad_request"),
        ("/api/search?q=x&k=two", "bad_request"),
        ("/api/search?q=x&mode=psychic", "bad_request"),
        ("/api/search?q=x&where=status", "bad_request"),
        ("/api/search?q=x&since=yesterday", "bad_request"),
        ("/api/audit?top=0", "bad_request"),
        ("/api/notes/No%20such%20note.md", "note_not_found"),
        ("/api/notes/Home.md?lines=9999", "bad_request"),
        ("/api/search?q=x&limit=5", "bad_request"),
        ("/api/status?verbose=1", "bad_request"),
        ("/api/nothing/here", "not_found"),
    ] {
        let (status, body) = get(&format!("{base}{url}"), &[]);
        assert!((400..500).contains(&status), "{url}: {status}");
        assert_eq!(body["error"]["code"], code, "{url}: {body}");
        assert!(body["error"]["message"].as_str().unwrap().len() > 5);
    }

    // A misspelt parameter is named, with the ones the route takes; path parameters are not
    // query parameters.
    let (_, body) = get(&format!("{base}/api/search?q=x&limit=5"), &[]);
    let message = body["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("`limit`") && message.contains("q, k, mode"),
        "{message}"
    );
    let (status, _) = get(&format!("{base}/api/notes/Home.md?path=Home.md"), &[]);
    assert_eq!(status, 400);
    let (status, _) = get(&format!("{base}/api/notes/Home.md?lines=1-3"), &[]);
    assert_eq!(status, 200);
    // HEAD reaches the GET handlers, and the same check.
    let head = |url: &str| {
        agent()
            .head(format!("{base}{url}"))
            .call()
            .expect("the server answers")
            .status()
            .as_u16()
    };
    assert_eq!(head("/api/status?verbose=1"), 400);
    assert_eq!(head("/api/status"), 200);

    let (status, body) = post(&format!("{base}/api/search?q=x"), "", None);
    assert_eq!(status, 405);
    assert!(body.contains("method_not_allowed"), "{body}");

    // The MCP server of `quire mcp`, mounted at /mcp over the same state.
    let mut response = agent()
        .post(&format!("{base}/mcp"))
        .header("Content-Type", "application/json")
        .header("Accept", "application/json, text/event-stream")
        .send(
            json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
                "protocolVersion": "2025-06-18", "capabilities": {},
                "clientInfo": {"name": "serve-test", "version": "0"}}})
            .to_string(),
        )
        .unwrap();
    assert_eq!(response.status().as_u16(), 200);
    let initialized = response.body_mut().read_to_string().unwrap();
    assert!(initialized.contains("serverInfo"), "{initialized}");

    // The page and its assets.
    let (status, page) = get(&format!("{base}/"), &[]);
    assert_eq!(status, 200);
    assert!(page.as_str().unwrap().contains("/assets/app.js"));
    let (status, _) = get(&format!("{base}/assets/app.js"), &[]);
    assert_eq!(status, 200);
    assert!(!server.log().contains("panicked"));
}

#[test]
fn every_route_that_takes_a_path_refuses_paths_out_of_the_vault() {
    let f = starter();
    // Secrets beside the vault, and links to them from inside.
    let secret_dir = f.dir.path().join("secret");
    fs::create_dir_all(&secret_dir).unwrap();
    fs::write(secret_dir.join("keys.md"), "# Keys\n\nTOP-SECRET-VALUE\n").unwrap();
    std::os::unix::fs::symlink(secret_dir.join("keys.md"), f.vault.join("Escape.md")).unwrap();
    std::os::unix::fs::symlink(&secret_dir, f.vault.join("Linked")).unwrap();
    let server = serve(quire(&f), &[]);
    wait_ready(&server, None);

    let bad_paths = [
        "../secret/keys.md",
        "..%2fsecret%2fkeys.md",
        "%2e%2e/secret/keys.md",
        "%2E%2E%2Fsecret%2Fkeys.md",
        "%252e%252e%252fsecret%252fkeys.md",
        "Notes/../../secret/keys.md",
        "/etc/passwd",
        "%2Fetc%2Fpasswd",
        "..%5csecret%5ckeys.md",
        "Escape.md",
        "Escape",
        "Linked/keys.md",
        "Linked/",
    ];
    for route in ["notes", "outline", "similar", "questions"] {
        for bad in bad_paths {
            // Raw bytes: no client gets to normalise the path first.
            let (status, body) = raw(
                &server.addr,
                &format!("GET /api/{route}/{bad} HTTP/1.1\r\nHost: 127.0.0.1"),
            );
            assert!(
                status == 400 || status == 404,
                "/api/{route}/{bad}: {status} {body}"
            );
            assert!(
                !body.contains("TOP-SECRET"),
                "/api/{route}/{bad} leaked: {body}"
            );
            let error: Value = serde_json::from_str(&body).unwrap_or(Value::Null);
            let code = error["error"]["code"].as_str().unwrap_or_default();
            assert!(
                [
                    "path_outside_vault",
                    "note_not_found",
                    "bad_request",
                    "not_found"
                ]
                .contains(&code),
                "/api/{route}/{bad}: {body}"
            );
        }
    }
    // The escapes that are spelled as escapes are named as such.
    for bad in ["../secret/keys.md", "%2e%2e/secret/keys.md", "Escape.md"] {
        let (status, body) = raw(
            &server.addr,
            &format!("GET /api/notes/{bad} HTTP/1.1\r\nHost: 127.0.0.1"),
        );
        assert_eq!(status, 400, "{bad}: {body}");
        assert!(body.contains("path_outside_vault"), "{bad}: {body}");
    }
    // Draft names a note in its body: the same confinement.
    for bad in [
        "../secret/keys.md",
        "%2e%2e/secret/keys",
        "Escape.md",
        "/etc/passwd",
    ] {
        let (status, body) = post(
            &format!("{}/api/draft", server.url),
            &json!({"note": bad, "heading": "## Keys"}).to_string(),
            Some("application/json"),
        );
        assert_eq!(status, 400, "{bad}: {body}");
        assert!(body.contains("path_outside_vault"), "{bad}: {body}");
    }
    // Notes inside the vault still read.
    let (status, _) = get(&format!("{}/api/notes/Dashboard.md", server.url), &[]);
    assert_eq!(status, 200);
    assert!(!server.log().contains("panicked"));
}

#[test]
fn a_token_is_required_beyond_loopback_and_checked_on_every_route() {
    let f = sample();
    // Beyond loopback, no token: refused at start.
    let out = quire(&f)
        .args(["serve", "--host", "0.0.0.0", "--port", "0"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("requires a token"), "{stderr}");
    // A short token is refused too.
    let out = quire(&f)
        .env("QUIRE_TOKEN", "short")
        .args(["serve", "--host", "0.0.0.0", "--port", "0"])
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&out.stderr).contains("at least 16"));

    let mut command = quire(&f);
    command
        .env("QUIRE_TOKEN", TOKEN)
        .env("QUIRE_MCP_TOKEN", MCP_TOKEN);
    let server = serve(command, &["--host", "0.0.0.0"]);
    let port = server.addr.rsplit(':').next().unwrap().to_string();
    let base = format!("http://127.0.0.1:{port}");
    let routes = [
        "/",
        "/assets/app.js",
        "/api/openapi.json",
        "/api/status",
        "/api/audit",
        "/api/search?q=starter",
        "/api/notes/Home.md",
        "/api/outline/Home.md",
        "/api/similar/Home.md",
        "/api/proposals",
        "/api/events",
        "/api/nothing",
        "/mcp",
    ];
    for route in routes {
        let url = format!("{base}{route}");
        let (status, body) = get(&url, &[]);
        assert_eq!(status, 401, "{route} without a token: {body}");
        assert_eq!(body["error"]["code"], "unauthorized");
        let (status, _) = get(&url, &[("Authorization", "Bearer wrong-token-wrong-token")]);
        assert_eq!(status, 401, "{route} with a wrong token");
        let (status, _) = get(
            &url,
            &[("Authorization", "Bearer correct-horse-battery-stapl")],
        );
        assert_eq!(status, 401, "{route} with a prefix of the token");
    }
    for (route, body) in [
        ("/api/ask", json!({"question": "starter?"})),
        (
            "/api/article/ask",
            json!({"text": "# A\n\nText.", "question": "what?"}),
        ),
        ("/api/draft", json!({"note": "Home", "heading": "x"})),
        ("/api/proposals/20261203-120000-abcd/apply", json!({})),
        ("/api/audit/deep", json!({"dry_run": true})),
        ("/api/split", json!({"note": "Home"})),
        (
            "/api/batch",
            json!({"folder": "x", "preset": "grammar", "dry_run": true}),
        ),
        ("/api/moc", json!({"all": true})),
        (
            "/api/proposals",
            json!({"path": "New.md", "change": "create", "text": "x"}),
        ),
    ] {
        let (status, text) = post(
            &format!("{base}{route}"),
            &body.to_string(),
            Some("application/json"),
        );
        assert_eq!(status, 401, "{route}: {text}");
    }
    wait_ready_with_token(&base);
    // The MCP token opens /mcp and nothing else: an AI client holding it cannot apply.
    let mcp_bearer = format!("Bearer {MCP_TOKEN}");
    let mut response = agent()
        .post(&format!("{base}/mcp"))
        .header("Authorization", &mcp_bearer)
        .header("Content-Type", "application/json")
        .header("Accept", "application/json, text/event-stream")
        .send(
            json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
                "protocolVersion": "2025-06-18", "capabilities": {},
                "clientInfo": {"name": "scope-test", "version": "0"}}})
            .to_string(),
        )
        .unwrap();
    assert_eq!(response.status().as_u16(), 200);
    assert!(
        response
            .body_mut()
            .read_to_string()
            .unwrap()
            .contains("serverInfo")
    );
    let (status, body) = get(
        &format!("{base}/api/proposals"),
        &[("Authorization", &mcp_bearer)],
    );
    assert_eq!(status, 403, "{body}");
    assert_eq!(body["error"]["code"], "token_scope");
    let mut response = agent()
        .post(&format!("{base}/api/proposals/20261203-120000-abcd/apply"))
        .header("Authorization", &mcp_bearer)
        .header("Content-Type", "application/json")
        .send("{}")
        .unwrap();
    assert_eq!(response.status().as_u16(), 403);
    assert!(
        response
            .body_mut()
            .read_to_string()
            .unwrap()
            .contains("token_scope")
    );
    let bearer = format!("Bearer {TOKEN}");
    for route in routes
        .iter()
        .filter(|r| !["/api/events", "/api/nothing", "/mcp"].contains(*r))
    {
        let (status, body) = get(&format!("{base}{route}"), &[("Authorization", &bearer)]);
        assert_eq!(status, 200, "{route} with the token: {body}");
    }
    // The page opened with the token sets a cookie that authorizes the page's own requests.
    let mut response = agent()
        .get(&format!("{base}/?token={TOKEN}"))
        .call()
        .unwrap();
    assert_eq!(response.status().as_u16(), 200);
    let cookie = response
        .headers()
        .get("set-cookie")
        .and_then(|v| v.to_str().ok())
        .unwrap()
        .to_string();
    let _ = response.body_mut().read_to_string();
    assert!(cookie.contains("HttpOnly") && cookie.contains("SameSite=Strict"));
    let pair = cookie.split(';').next().unwrap();
    let (status, _) = get(&format!("{base}/api/status"), &[("Cookie", pair)]);
    assert_eq!(status, 200);
    let (status, _) = get(&format!("{base}/api/status?token={TOKEN}"), &[]);
    assert_eq!(status, 200);
    let (status, _) = get(
        &format!("{base}/api/status"),
        &[("Cookie", "quire_token=nope")],
    );
    assert_eq!(status, 401);
}

fn wait_ready_with_token(base: &str) {
    let started = Instant::now();
    let bearer = format!("Bearer {TOKEN}");
    while started.elapsed() < PATIENCE {
        let (_, body) = get(&format!("{base}/api/status"), &[("Authorization", &bearer)]);
        if body["ready"] == true {
            return;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    panic!("not ready");
}

#[test]
fn host_origin_cors_and_sizes_are_guarded() {
    let f = sample();
    let server = serve(quire(&f), &[]);
    wait_ready(&server, None);
    let base = &server.url;
    // DNS rebinding: a loopback server answers only loopback host names.
    let (status, body) = raw(
        &server.addr,
        "GET /api/status HTTP/1.1\r\nHost: evil.example",
    );
    assert_eq!(status, 403, "{body}");
    assert!(body.contains("forbidden_host"));
    let (status, _) = raw(
        &server.addr,
        &format!(
            "GET /api/status HTTP/1.1\r\nHost: localhost:{}",
            server.addr.rsplit(':').next().unwrap()
        ),
    );
    assert_eq!(status, 200);
    // Other sites may not call the API; the Obsidian app and the page itself may.
    let (status, body) = get(
        &format!("{base}/api/status"),
        &[("Origin", "https://evil.example")],
    );
    assert_eq!(status, 403);
    assert_eq!(body["error"]["code"], "forbidden_origin");
    let (status, _) = post(
        &format!("{base}/api/ask"),
        &json!({"question": "x"}).to_string(),
        Some("text/plain"),
    );
    assert_eq!(status, 415);
    let response = agent()
        .get(&format!("{base}/api/status"))
        .header("Origin", "app://obsidian.md")
        .call()
        .unwrap();
    assert_eq!(response.status().as_u16(), 200);
    assert_eq!(
        response
            .headers()
            .get("access-control-allow-origin")
            .unwrap(),
        "app://obsidian.md"
    );
    assert!(response.headers().get("content-security-policy").is_some());
    let own = format!("http://{}", server.addr);
    let (status, _) = get(&format!("{base}/api/status"), &[("Origin", &own)]);
    assert_eq!(status, 200);
    let (status, body) = raw(
        &server.addr,
        "OPTIONS /api/ask HTTP/1.1\r\nHost: 127.0.0.1\r\nOrigin: app://obsidian.md\r\nAccess-Control-Request-Method: POST",
    );
    assert_eq!(status, 204, "{body}");
    // Bounded bodies and fields.
    let huge = json!({"question": "x".repeat(100_000)}).to_string();
    let (status, body) = post(&format!("{base}/api/ask"), &huge, Some("application/json"));
    assert_eq!(status, 413, "{body}");
    assert!(body.contains("payload_too_large"));
    let long = json!({"question": "x".repeat(5_000)}).to_string();
    let (status, body) = post(&format!("{base}/api/ask"), &long, Some("application/json"));
    assert_eq!(status, 400, "{body}");
    let (status, body) = post(
        &format!("{base}/api/ask"),
        &json!({"question": "x", "sneaky": 1}).to_string(),
        Some("application/json"),
    );
    assert_eq!(status, 400, "{body}");
    let (status, _) = get(&format!("{base}/api/search?q={}", "x".repeat(1_001)), &[]);
    assert_eq!(status, 400);
}

#[test]
fn ask_with_expand_searches_with_the_models_passage_first() {
    let f = sample();
    let passage = "Feed the sourdough starter once a day with equal weights of flour and water.";
    let chat = FakeChat::start(vec![answer(&[passage]), answer(&["Once a day [S1]."])]);
    let server = serve_sample_with_model(&f, &chat);
    let (status, body) = post(
        &format!("{}/api/ask", server.url),
        &json!({"question": "How often should the bread culture get its meal?", "expand": true})
            .to_string(),
        Some("application/json"),
    );
    assert_eq!(status, 200, "{body}");
    let events = sse_events(&body);
    let (last, done) = events.last().unwrap();
    assert_eq!(last, "done", "{body}");
    assert_eq!(
        done["citations"][0]["path"], "Resources/Sourdough Starter.md",
        "{body}"
    );
    let requests = chat.requests();
    assert_eq!(requests.len(), 2, "the passage, then the answer");
    assert!(requests[0].to_string().contains("bread culture"));
    assert!(
        !requests[0].to_string().contains("[S1]"),
        "no note in the passage request"
    );
    // `expand` is a boolean; anything else is the request's mistake.
    let (status, body) = post(
        &format!("{}/api/ask", server.url),
        &json!({"question": "x", "expand": "yes"}).to_string(),
        Some("application/json"),
    );
    assert_eq!(status, 400, "{body}");
}

#[test]
fn ask_and_draft_stream_tokens_then_checked_citations_and_source_cards() {
    let f = sample();
    let chat = FakeChat::start(vec![
        answer(&["Once a day", " on the counter [S", "1] [S99]."]),
        answer(&["A draft that cites [S1]."]),
    ]);
    let server = serve_sample_with_model(&f, &chat);
    let (status, body) = post(
        &format!("{}/api/ask", server.url),
        &json!({"question": "How often do I feed the sourdough starter?"}).to_string(),
        Some("application/json"),
    );
    assert_eq!(status, 200, "{body}");
    let events = sse_events(&body);
    let tokens: String = events
        .iter()
        .filter(|(name, _)| name == "token")
        .map(|(_, data)| data["text"].as_str().unwrap())
        .collect();
    assert!(
        events.iter().filter(|(n, _)| n == "token").count() >= 2,
        "{body}"
    );
    let (last, done) = events.last().unwrap();
    assert_eq!(last, "done", "{body}");
    assert_eq!(done["kind"], "generated");
    assert_eq!(
        done["answer"],
        tokens.as_str(),
        "the tokens are the answer as shown"
    );
    assert_eq!(done["answer"], "Once a day on the counter [S1].");
    assert_eq!(done["invalid_citations"], json!(["S99"]));
    let citations = done["citations"].as_array().unwrap();
    assert_eq!(citations.len(), 1);
    let cited = citations[0]["path"].as_str().unwrap();
    let cards = done["sources"].as_array().unwrap();
    let card = cards.iter().find(|c| c["id"] == "S1").unwrap();
    assert_eq!(card["cited"], true);
    assert_eq!(card["path"], cited);
    assert!(card["link"].as_str().unwrap().starts_with("[["));
    let prompt = chat.requests()[0].to_string();
    assert!(prompt.contains("[S1]"), "the model saw numbered sources");

    let (status, body) = post(
        &format!("{}/api/draft", server.url),
        &json!({"note": "Projects/Sourdough Experiment", "heading": "## Setup"}).to_string(),
        Some("application/json"),
    );
    assert_eq!(status, 200, "{body}");
    let events = sse_events(&body);
    let (last, done) = events.last().unwrap();
    assert_eq!(last, "done", "{body}");
    assert_eq!(done["note"], "Projects/Sourdough Experiment.md");
    assert!(done["draft"].as_str().unwrap().contains("[["), "{done}");
    let original =
        fs::read_to_string(workspace().join("examples/vault/Projects/Sourdough Experiment.md"))
            .unwrap();
    assert_eq!(
        fs::read_to_string(f.vault.join("Projects/Sourdough Experiment.md")).unwrap(),
        original,
        "a draft is never written into the note"
    );
    chat.finish();
}

#[test]
fn related_notes_mark_a_near_copy_and_questions_come_one_per_topic() {
    let f = sample();
    // One reply per topic: a list mark, quotes and a citation that the question is cleaned of.
    let replies: Vec<_> = (1..=16)
        .map(|i| answer(&[&format!("1. \"Question number {i}? [S1]\"\nA second line.")]))
        .collect();
    let chat = FakeChat::start(replies);
    // A reworked copy of a note, outside the folder asked about: the related notes mark it.
    let tea = fs::read_to_string(f.vault.join("Resources/Tea Basics.md")).unwrap();
    fs::write(
        f.vault.join("Areas/Tea notes (copy).md"),
        tea.replacen("tea", "brew", 2),
    )
    .unwrap();
    // Topics group paragraphs by their vectors: this index embeds (with e5-small, fetched by
    // scripts/test.sh).
    let model = quire_embed::default_e5_path();
    assert!(
        model.exists(),
        "{} (scripts/fetch-model.sh)",
        model.display()
    );
    let mut command = quire(&f);
    command
        .env("QUIRE_MODEL", &model)
        .env("QUIRE_LLM_BASE_URL", &chat.url)
        .env("QUIRE_LLM_MODEL", "fake-model");
    let server = serve(command, &[]);
    wait_ready(&server, Some(48));

    let related = get_ok(&format!(
        "{}/api/similar/Resources/Tea%20Basics.md?k=5",
        server.url
    ));
    let copies = related["near_copies"].as_array().unwrap();
    assert_eq!(copies.len(), 1, "{related}");
    assert_eq!(copies[0]["path"], "Areas/Tea notes (copy).md");
    assert!(copies[0]["overlap"].as_f64().unwrap() > 0.4, "{related}");
    let unrelated = get_ok(&format!(
        "{}/api/similar/Resources/Rust%20Ownership.md?k=5",
        server.url
    ));
    assert_eq!(unrelated["near_copies"], json!([]), "{unrelated}");

    let folder = get_ok(&format!("{}/api/questions/Resources/", server.url));
    assert_eq!(folder["scope"], "Resources/");
    assert_eq!(folder["kind"], "generated");
    let topics = folder["topics"].as_array().unwrap();
    let k = topics.len();
    assert_eq!(folder["k"], k);
    assert!((2..=8).contains(&k), "{folder}");
    assert!(folder["paragraphs"].as_u64().unwrap() >= k as u64);
    assert_eq!(chat.requests().len(), k, "one model call per topic");
    for (i, topic) in topics.iter().enumerate() {
        assert_eq!(topic["number"], i + 1);
        assert_eq!(topic["question"], format!("Question number {}?", i + 1));
        let passages = topic["passages"].as_array().unwrap();
        assert_eq!(topic["central"], passages[0], "the central passage leads");
        for p in passages {
            let path = p["path"].as_str().unwrap();
            assert!(path.starts_with("Resources/"), "{path}");
            // Each passage names real lines of its note.
            let lines = fs::read_to_string(f.vault.join(path))
                .unwrap()
                .lines()
                .count();
            assert!(p["end_line"].as_u64().unwrap() as usize <= lines, "{p}");
        }
    }

    let note = get_ok(&format!(
        "{}/api/questions/Resources/Sourdough%20Starter.md",
        server.url
    ));
    assert_eq!(note["scope"], "Resources/Sourdough Starter.md");
    let topics = note["topics"].as_array().unwrap();
    assert!(!topics.is_empty());
    for topic in topics {
        for p in topic["passages"].as_array().unwrap() {
            assert_eq!(p["path"], "Resources/Sourdough Starter.md");
        }
        assert!(
            topic["question"]
                .as_str()
                .unwrap()
                .starts_with("Question number")
        );
    }
    assert_eq!(chat.requests().len(), k + topics.len());

    let (status, body) = get(
        &format!("{}/api/questions/No%20Such%20Note.md", server.url),
        &[],
    );
    assert_eq!(status, 404, "{body}");
}

/// Serves the sample vault copy `f` with the fake model `chat`, once it is indexed.
fn serve_sample_with_model(f: &Fixture, chat: &FakeChat) -> Server {
    let mut command = quire(f);
    command
        .env("QUIRE_LLM_BASE_URL", &chat.url)
        .env("QUIRE_LLM_MODEL", "fake-model");
    let server = serve(command, &[]);
    wait_ready(&server, Some(47));
    server
}

/// POSTs `body` as JSON and returns the server-sent events of a 200 answer.
fn post_events(url: &str, body: &Value) -> Vec<(String, Value)> {
    let (status, text) = post(url, &body.to_string(), Some("application/json"));
    assert_eq!(status, 200, "POST {url}: {text}");
    sse_events(&text)
}

/// The `done` object of an event stream (which must end with it).
fn done_of(events: &[(String, Value)]) -> Value {
    let (last, done) = events.last().expect("events");
    assert_eq!(last, "done", "{events:?}");
    done.clone()
}

#[test]
fn a_conversation_continues_with_its_sources_and_reflect_streams_a_week() {
    let f = sample();
    let chat = FakeChat::start(vec![
        answer(&["Once a day [S1]."]),
        answer(&["As said before, daily [S1]."]),
        answer(&["- Ran intervals and baked [S1]."]),
    ]);
    let server = serve_sample_with_model(&f, &chat);
    let ask = format!("{}/api/ask", server.url);

    let first = done_of(&post_events(
        &ask,
        &json!({"question": "How often do I feed the sourdough starter?"}),
    ));
    let id = first["conversation"].as_str().expect("a conversation id");
    assert_eq!(id.len(), 32, "{first}");
    let s1 = first["citations"][0]["path"].clone();
    assert!(s1.is_string(), "{first}");

    let second = done_of(&post_events(
        &ask,
        &json!({"question": "And in summer?", "conversation": id}),
    ));
    assert_eq!(second["conversation"], id);
    // S1 still names the passage the first turn gave it.
    assert_eq!(second["citations"][0]["path"], s1, "{second}");
    let follow_up = support::messages(&chat.requests()[1]);
    let roles: Vec<&str> = follow_up.iter().map(|(role, _)| role.as_str()).collect();
    assert_eq!(
        roles,
        ["system", "user", "assistant", "user"],
        "{follow_up:?}"
    );
    assert_eq!(follow_up[2].1, "Once a day [S1].");
    assert!(
        follow_up[1].1.contains("How often do I feed"),
        "{follow_up:?}"
    );

    // A conversation the server does not know, and a malformed one.
    let (status, body) = post(
        &ask,
        &json!({"question": "More?", "conversation": "0".repeat(32)}).to_string(),
        Some("application/json"),
    );
    assert_eq!(status, 404, "{body}");
    assert!(body.contains("not_found"), "{body}");

    // Reflect on the sample vault's week of daily notes.
    let reflect = format!("{}/api/reflect", server.url);
    let events = post_events(&reflect, &json!({"week": "2026-W48"}));
    assert!(events.iter().any(|(name, _)| name == "token"), "{events:?}");
    let done = done_of(&events);
    assert_eq!(done["kind"], "generated", "{done}");
    assert_eq!(
        done["range"],
        json!({"from": "2026-11-23", "to": "2026-11-29"})
    );
    let days: Vec<&str> = done["days"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["date"].as_str().unwrap())
        .collect();
    assert_eq!(
        days,
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
    assert!(
        done["reflection"]
            .as_str()
            .unwrap()
            .contains("[[2026-11-23"),
        "{done}"
    );
    for (body, wrong) in [
        (
            json!({"week": "2026-W48", "from": "2026-11-01", "to": "2026-11-02"}),
            "both",
        ),
        (json!({"from": "2026-11-01"}), "last day"),
        (json!({"week": "W48"}), "week"),
        (json!({"budget": 0}), "budget"),
        (json!({"weeks": "2026-W48"}), "unknown field"),
    ] {
        let (status, text) = post(&reflect, &body.to_string(), Some("application/json"));
        assert_eq!(status, 400, "{body}: {text}");
        assert!(text.contains(wrong), "{body}: {text}");
    }
    assert_eq!(chat.finish().len(), 3);
}

#[test]
fn without_a_model_ask_streams_an_extractive_answer() {
    let f = sample();
    // --no-watch serves the index as it is: none yet, and the status says so.
    let server = serve(quire(&f), &["--no-watch"]);
    let (status, body) = get(&format!("{}/api/status", server.url), &[]);
    assert_eq!(status, 200);
    assert_eq!(
        (&body["watching"], &body["ready"]),
        (&json!(false), &json!(false))
    );
    let (status, body) = get(&format!("{}/api/search?q=starter", server.url), &[]);
    assert_eq!(status, 503, "{body}");
    assert_eq!(body["error"]["code"], "not_ready");
    drop(server);
    let out = quire(&f).arg("index").output().unwrap();
    assert!(out.status.success());
    let server = serve(quire(&f), &["--no-watch"]);
    wait_ready(&server, Some(47));
    let (status, body) = post(
        &format!("{}/api/ask", server.url),
        &json!({"question": "How often do I feed the sourdough starter?"}).to_string(),
        Some("application/json"),
    );
    assert_eq!(status, 200);
    let events = sse_events(&body);
    let (last, done) = events.last().unwrap();
    assert_eq!(last, "done");
    assert_eq!(done["kind"], "extractive");
    assert!(!done["sources"].as_array().unwrap().is_empty());
    // One note asked, by its name: only its passages, though the vault's best match for the
    // question's words is another note.
    let question = "What water temperature does the sourdough starter need?";
    let whole = done_of(&post_events(
        &format!("{}/api/ask", server.url),
        &json!({ "question": question }),
    ));
    assert_ne!(
        whole["sources"][0]["path"], "Resources/Tea Basics.md",
        "{whole}"
    );
    let done = done_of(&post_events(
        &format!("{}/api/ask", server.url),
        &json!({"question": question, "note": "Tea Basics"}),
    ));
    let sources = done["sources"].as_array().unwrap();
    assert!(!sources.is_empty(), "{done}");
    assert!(
        sources
            .iter()
            .all(|s| s["path"] == "Resources/Tea Basics.md"),
        "{done}"
    );
    let (status, body) = post(
        &format!("{}/api/ask", server.url),
        &json!({"question": "starter?", "note": "Nowhere at all"}).to_string(),
        Some("application/json"),
    );
    assert_eq!(status, 404, "{body}");
    assert!(body.contains("Nowhere at all"), "{body}");
    // Reflect without a model: the notes' own points, every day listed.
    let done = done_of(&post_events(
        &format!("{}/api/reflect", server.url),
        &json!({"from": "2026-11-16", "to": "2026-11-18"}),
    ));
    assert_eq!(done["kind"], "extractive", "{done}");
    assert_eq!(done["days"].as_array().unwrap().len(), 3, "{done}");
    assert!(
        done["reflection"]
            .as_str()
            .unwrap()
            .contains("nothing here is generated"),
        "{done}"
    );
}

#[test]
fn a_second_watching_server_on_the_same_index_is_refused_with_the_pid() {
    let f = sample();
    let first = serve(quire(&f), &[]);
    wait_ready(&first, None);
    let out = quire(&f).args(["serve", "--port", "0"]).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    let pid = first.child.id().to_string();
    assert!(
        stderr.contains(&format!("index is locked by pid {pid}")),
        "{stderr}"
    );
    let out = quire(&f).arg("watch").output().unwrap();
    assert!(String::from_utf8_lossy(&out.stderr).contains("index is locked by pid"));
    // Serving without watching is a reader only: allowed.
    let reader = serve(quire(&f), &["--no-watch"]);
    wait_ready(&reader, Some(47));
}

/// A fake OpenAI-compatible `/v1/embeddings` server that counts the texts it embeds.
struct FakeEmbedder {
    url: String,
    embedded: Arc<AtomicUsize>,
    stop: Arc<AtomicBool>,
}

impl FakeEmbedder {
    fn start() -> FakeEmbedder {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}/v1", listener.local_addr().unwrap());
        let embedded = Arc::new(AtomicUsize::new(0));
        let stop = Arc::new(AtomicBool::new(false));
        let (count, stopping) = (Arc::clone(&embedded), Arc::clone(&stop));
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                if stopping.load(Ordering::Relaxed) {
                    break;
                }
                let Ok(stream) = stream else { continue };
                let count = Arc::clone(&count);
                std::thread::spawn(move || embed_one(stream, &count));
            }
        });
        FakeEmbedder {
            url,
            embedded,
            stop,
        }
    }

    fn count(&self) -> usize {
        self.embedded.load(Ordering::SeqCst)
    }
}

impl Drop for FakeEmbedder {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        let _ = TcpStream::connect(
            self.url
                .trim_start_matches("http://")
                .trim_end_matches("/v1"),
        );
    }
}

/// Answers one request with a deterministic unit vector per input text.
fn embed_one(mut stream: TcpStream, count: &AtomicUsize) {
    let mut reader = BufReader::new(stream.try_clone().unwrap());
    let mut length = 0;
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).unwrap_or(0) == 0 {
            return;
        }
        let line = line.trim_end();
        if line.is_empty() {
            break;
        }
        if let Some((name, value)) = line.split_once(':')
            && name.eq_ignore_ascii_case("content-length")
        {
            length = value.trim().parse().unwrap_or(0);
        }
    }
    let mut body = vec![0; length];
    if reader.read_exact(&mut body).is_err() {
        return;
    }
    let request: Value = serde_json::from_slice(&body).unwrap_or_default();
    let inputs: Vec<String> = match &request["input"] {
        Value::Array(items) => items
            .iter()
            .map(|i| i.as_str().unwrap_or("").to_string())
            .collect(),
        Value::String(s) => vec![s.clone()],
        _ => Vec::new(),
    };
    if !(inputs.len() == 1 && inputs[0] == "dimension probe") {
        count.fetch_add(inputs.len(), Ordering::SeqCst);
    }
    let data: Vec<Value> = inputs
        .iter()
        .enumerate()
        .map(|(i, text)| json!({"object": "embedding", "index": i, "embedding": vector(text)}))
        .collect();
    let out = json!({"object": "list", "data": data, "model": "fake"}).to_string();
    let _ = write!(
        stream,
        "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{out}",
        out.len()
    );
}

fn vector(text: &str) -> Vec<f32> {
    use std::hash::{DefaultHasher, Hash, Hasher};
    let mut v: Vec<f32> = (0..16u64)
        .map(|i| {
            let mut h = DefaultHasher::new();
            (text, i).hash(&mut h);
            (h.finish() % 2000) as f32 / 1000.0 - 1.0
        })
        .collect();
    let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt().max(1e-6);
    v.iter_mut().for_each(|x| *x /= norm);
    v
}

/// Reads `/api/events` on a thread and passes each event on.
fn subscribe(server: &Server) -> Receiver<(String, Value)> {
    let response = agent()
        .get(&format!("{}/api/events", server.url))
        .call()
        .unwrap();
    let (sender, events) = mpsc::channel();
    std::thread::spawn(move || {
        let reader = BufReader::new(response.into_body().into_reader());
        let mut name = String::new();
        for line in reader.lines() {
            let Ok(line) = line else { break };
            if let Some(n) = line.strip_prefix("event:") {
                name = n.trim().to_string();
            } else if let Some(data) = line.strip_prefix("data:") {
                let data = serde_json::from_str(data.trim()).unwrap_or_default();
                if sender.send((std::mem::take(&mut name), data)).is_err() {
                    break;
                }
            }
        }
    });
    events
}

fn next_index_event(events: &Receiver<(String, Value)>) -> Value {
    loop {
        let (name, data) = events
            .recv_timeout(PATIENCE)
            .expect("an index event in time");
        match name.as_str() {
            "index" => return data,
            "sync_failed" => panic!("sync failed: {data}"),
            _ => {}
        }
    }
}

/// The first `index` event of a generation after `generation` (events of earlier syncs that
/// reach the subscriber late are skipped).
fn next_sync_after(events: &Receiver<(String, Value)>, generation: u64) -> Value {
    loop {
        let event = next_index_event(events);
        if event["generation"].as_u64().unwrap() > generation {
            return event;
        }
    }
}

/// Waits until the server has an index of `notes` notes and has reported its first sync.
fn wait_synced(server: &Server, notes: u64) -> Value {
    let started = Instant::now();
    loop {
        let status = wait_ready(server, Some(notes));
        if status["last_sync"]["kind"] == "index" {
            return status;
        }
        assert!(started.elapsed() < PATIENCE, "no sync reported: {status}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn generation(server: &Server) -> u64 {
    get_ok(&format!("{}/api/status", server.url))["generation"]
        .as_u64()
        .unwrap()
}

fn paths(value: &Value) -> BTreeSet<String> {
    value
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap().to_string())
        .collect()
}

fn set(items: &[&str]) -> BTreeSet<String> {
    items.iter().map(|s| s.to_string()).collect()
}

/// The content hashes of the index's chunks.
fn hashes(index: &Path) -> HashSet<String> {
    let store = Store::open(&IndexLocation::new(index).store_path()).unwrap();
    store
        .chunks(None)
        .unwrap()
        .into_iter()
        .map(|c| c.content_hash)
        .collect()
}

type Dump = (Vec<NoteRow>, Vec<ChunkRow>, u64, u64);

/// Notes, chunks, full-text documents and vectors of the current embedding space.
fn dump(index: &Path) -> Dump {
    let location = IndexLocation::new(index);
    let store = Store::open(&location.store_path()).unwrap();
    let fulltext = FullText::open(&location.fulltext_dir()).unwrap();
    fulltext.reload().unwrap();
    let chunks = store.chunks(None).unwrap();
    let distinct: HashSet<&str> = chunks.iter().map(|c| c.content_hash.as_str()).collect();
    (
        store.notes().unwrap(),
        chunks.clone(),
        fulltext.num_docs(),
        distinct.len() as u64,
    )
}

#[test]
fn edits_while_serving_embed_only_changed_chunks_and_end_in_a_fresh_build() {
    let f = starter();
    let embedder = FakeEmbedder::start();
    let with_embedder = |f: &Fixture| {
        let mut c = quire(f);
        c.env("QUIRE_EMBED_BASE_URL", &embedder.url);
        c
    };
    let server = serve(with_embedder(&f), &[]);
    let events = subscribe(&server);
    // The reconciliation embeds every distinct chunk text once.
    let status = wait_synced(&server, 100);
    let first = &status["last_sync"]["data"];
    let distinct = hashes(&f.index).len();
    assert_eq!(first["chunks_embedded"], distinct as u64, "{first}");
    assert_eq!(embedder.count(), distinct);
    assert_eq!(status["default_mode"], "hybrid");

    // Each step: what changed, and the number of new chunk texts it brings.
    let step = |name: &str, change: &dyn Fn()| {
        let before = hashes(&f.index);
        let count_before = embedder.count();
        let started = Instant::now();
        let before_change = generation(&server);
        change();
        let event = next_sync_after(&events, before_change);
        let new = hashes(&f.index).difference(&before).count() as u64;
        assert_eq!(
            event["chunks_embedded"], new,
            "{name}: embedded {} but {new} chunk texts are new: {event}",
            event["chunks_embedded"]
        );
        assert_eq!(
            (embedder.count() - count_before) as u64,
            new,
            "{name}: the embedding server saw other texts"
        );
        eprintln!(
            "{name}: synced {:.2}s after the change, {new} chunks embedded",
            started.elapsed().as_secs_f64()
        );
        event
    };

    let created = step("create", &|| {
        fs::write(
            f.vault.join("Inbox/Served idea.md"),
            "# Served idea\n\nWritten while quire serve runs.\n\n## Detail\n\nA second section.\n",
        )
        .unwrap()
    });
    assert_eq!(paths(&created["upserts"]), set(&["Inbox/Served idea.md"]));
    assert!(created["chunks_embedded"].as_u64().unwrap() >= 1);

    let solar = f.vault.join("Notes/Solar Cycle Duration.md");
    let modified = step("modify x5 within the debounce", &|| {
        let mut text = fs::read_to_string(&solar).unwrap();
        for i in 0..5 {
            text.push_str(&format!("\nEdit {i} of the burst.\n"));
            fs::write(&solar, &text).unwrap();
            std::thread::sleep(Duration::from_millis(30));
        }
    });
    assert_eq!(
        paths(&modified["upserts"]),
        set(&["Notes/Solar Cycle Duration.md"])
    );
    assert_eq!(modified["notes_indexed"], 1, "one sync for the burst");

    let renamed = step("rename", &|| {
        fs::rename(
            f.vault.join("Notes/Radiation Belt Locations.md"),
            f.vault.join("Notes/Radiation Belts.md"),
        )
        .unwrap()
    });
    assert_eq!(renamed["chunks_embedded"], 0, "a rename embeds nothing");
    assert_eq!(
        paths(&renamed["deletes"]),
        set(&["Notes/Radiation Belt Locations.md"])
    );

    let deleted = step("delete", &|| {
        fs::remove_file(f.vault.join("Inbox/Inbox.md")).unwrap()
    });
    assert_eq!(deleted["chunks_embedded"], 0);
    assert_eq!(paths(&deleted["deletes"]), set(&["Inbox/Inbox.md"]));

    let moved = step("move a folder", &|| {
        fs::create_dir(f.vault.join("Archive")).unwrap();
        fs::rename(
            f.vault.join("Concept Board"),
            f.vault.join("Archive/Concept Board"),
        )
        .unwrap();
    });
    assert_eq!(
        moved["chunks_embedded"], 0,
        "moved notes keep their vectors"
    );
    assert_eq!(moved["notes_deleted"], 3);
    assert_eq!(moved["rescan"], true);

    // The served index equals a fresh build of the vault as it is now.
    let fresh = f.dir.path().join("fresh");
    let out = with_embedder(&f)
        .arg("--index-dir")
        .arg(&fresh)
        .arg("index")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(dump(&f.index), dump(&fresh));
    // Search and similar notes answer from the last generation.
    let results = get_ok(&format!("{}/api/search?q=served+idea", server.url));
    assert_eq!(results["mode"], "hybrid");
    assert_eq!(results["results"][0]["path"], "Inbox/Served idea.md");
    let similar = get_ok(&format!(
        "{}/api/similar/Archive/Concept%20Board/{}",
        server.url,
        enc(&fs::read_dir(f.vault.join("Archive/Concept Board"))
            .unwrap()
            .filter_map(|e| e.ok())
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .find(|n| n.ends_with(".md"))
            .unwrap())
    ));
    assert!(
        similar["similar"].as_array().is_some_and(|s| !s.is_empty()),
        "{similar}"
    );
    assert!(!server.log().contains("panicked"));
}

#[test]
fn a_sync_is_announced_and_its_links_are_current_when_its_index_event_arrives() {
    let f = sample();
    let server = serve(quire(&f), &[]);
    let events = subscribe(&server);
    let (hello, greeting) = events.recv_timeout(PATIENCE).unwrap();
    assert_eq!(hello, "hello");
    assert!(greeting["syncing"].is_boolean(), "{greeting}");
    let status = wait_synced(&server, 47);
    assert_eq!(status["syncing"], false, "{status}");
    let before = generation(&server);
    fs::write(
        f.vault.join("Resources/Backlinker.md"),
        "# Backlinker\n\nFeeding notes: see [[Sourdough Starter]].\n",
    )
    .unwrap();
    let mut announced = None;
    let synced = loop {
        let (name, data) = events.recv_timeout(PATIENCE).expect("events in time");
        match name.as_str() {
            "sync_started" => announced = Some(data),
            "index" if data["generation"].as_u64().unwrap() > before => break data,
            "sync_failed" => panic!("sync failed: {data}"),
            _ => {}
        }
    };
    let announced = announced.expect("a sync_started event before the index event");
    assert_eq!(
        (
            &announced["upserts"],
            &announced["deletes"],
            &announced["rescan"]
        ),
        (&json!(1), &json!(0), &json!(false)),
        "{announced}"
    );
    assert_eq!(paths(&synced["upserts"]), set(&["Resources/Backlinker.md"]));
    // As soon as the event arrives, the server's parsed vault has the new link.
    let related = get_ok(&format!(
        "{}/api/similar/{}",
        server.url,
        enc("Resources/Sourdough Starter.md")
    ));
    let backlinks = paths(&Value::Array(
        related["backlinks"]
            .as_array()
            .unwrap()
            .iter()
            .map(|b| b["path"].clone())
            .collect(),
    ));
    assert!(backlinks.contains("Resources/Backlinker.md"), "{related}");
    assert_eq!(
        get_ok(&format!("{}/api/status", server.url))["syncing"],
        false
    );
}

#[test]
fn searches_during_syncs_return_whole_results() {
    let f = starter();
    let server = serve(quire(&f), &[]);
    let events = subscribe(&server);
    let mut last = wait_synced(&server, 100)["generation"].as_u64().unwrap();
    let url = format!("{}/api/search?q=quasar+telescope&k=50", server.url);
    let stop = Arc::new(AtomicBool::new(false));
    let searchers: Vec<_> = (0..2)
        .map(|_| {
            let (url, stop) = (url.clone(), Arc::clone(&stop));
            std::thread::spawn(move || {
                let mut seen = Vec::new();
                while !stop.load(Ordering::Relaxed) {
                    let (status, body) = get(&url, &[]);
                    assert_eq!(status, 200, "{body}");
                    let generation = body["generation"].as_u64().unwrap();
                    for note in body["results"].as_array().unwrap() {
                        assert!(
                            !note["title"].as_str().unwrap().is_empty()
                                && !note["sections"].as_array().unwrap().is_empty(),
                            "a half result at generation {generation}: {note}"
                        );
                    }
                    seen.push((generation, body["results"].as_array().unwrap().len()));
                }
                seen
            })
        })
        .collect();
    // Many notes appear, then disappear, while the searches run.
    let bulk = f.vault.join("Bulk");
    for round in 0..3 {
        fs::create_dir_all(&bulk).unwrap();
        for i in 0..150 {
            fs::write(
                bulk.join(format!("Quasar {i}.md")),
                format!("# Quasar {i}\n\nA quasar seen through the telescope, round {round}.\n\n## More\n\nTelescope notes {i}.\n"),
            )
            .unwrap();
        }
        last = next_sync_after(&events, last)["generation"]
            .as_u64()
            .unwrap();
        fs::remove_dir_all(&bulk).unwrap();
        last = next_sync_after(&events, last)["generation"]
            .as_u64()
            .unwrap();
    }
    stop.store(true, Ordering::Relaxed);
    let mut generations = BTreeSet::new();
    let mut searches = 0;
    for searcher in searchers {
        let seen = searcher.join().expect("no half result");
        searches += seen.len();
        // Each client sees generations in order.
        assert!(seen.windows(2).all(|w| w[0].0 <= w[1].0), "{seen:?}");
        generations.extend(seen.iter().map(|(g, _)| *g));
    }
    eprintln!("{searches} searches during 6 syncs saw generations {generations:?}");
    assert!(
        generations.len() >= 3,
        "searches ran across syncs: {generations:?}"
    );
}

#[test]
fn quire_watch_alone_keeps_the_index_in_sync() {
    let f = sample();
    let mut child = quire(&f)
        .args(["watch", "--debounce-ms", "200"])
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let stderr = child.stderr.take().unwrap();
    let (sender, lines) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            eprintln!("[quire] {line}");
            let _ = sender.send(line);
        }
    });
    let wait_for = |generation: u64| loop {
        let line = lines.recv_timeout(PATIENCE).expect("a sync report in time");
        if line.contains(&format!("generation {generation}:")) {
            return line;
        }
    };
    let first = wait_for(1);
    assert!(first.contains("47 notes indexed"), "{first}");
    fs::write(
        f.vault.join("Watched.md"),
        "# Watched\n\nThe zeppelin note, written while quire watch runs.\n",
    )
    .unwrap();
    let second = wait_for(2);
    assert!(second.contains("1 notes indexed"), "{second}");
    let out = quire(&f)
        .args(["--json", "search", "zeppelin"])
        .output()
        .unwrap();
    let results: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(results["results"][0]["path"], "Watched.md");
    let _ = child.kill();
    let _ = child.wait();
}

#[test]
fn ctrl_c_stops_the_server_even_while_a_page_listens_to_events() {
    let f = sample();
    let mut server = serve(quire(&f), &[]);
    wait_ready(&server, Some(47));
    let events = subscribe(&server);
    let (name, _) = events.recv_timeout(PATIENCE).unwrap();
    assert_eq!(name, "hello");
    let interrupted = Command::new("kill")
        .args(["-INT", &server.child.id().to_string()])
        .status()
        .unwrap();
    assert!(interrupted.success());
    let started = Instant::now();
    loop {
        if let Some(status) = server.child.try_wait().unwrap() {
            assert!(status.success(), "{status:?}: {}", server.log());
            break;
        }
        assert!(
            started.elapsed() < Duration::from_secs(15),
            "still running after Ctrl-C"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn proposals_are_made_shown_and_applied_only_by_a_json_post_from_an_allowed_origin() {
    let f = sample();
    let server = serve(quire(&f), &[]);
    wait_ready(&server, None);
    let base = &server.url;
    let note = "Projects/Sourdough Experiment.md";
    let before = support::file_hashes(&f.vault);
    let (status, text) = post(
        &format!("{base}/api/proposals"),
        &json!({"path": note, "change": "append", "heading": "Next", "text": "- Try rye flour."})
            .to_string(),
        Some("application/json"),
    );
    assert_eq!(status, 200, "{text}");
    let made: Value = serde_json::from_str(&text).unwrap();
    let id = made["id"].as_str().unwrap().to_string();
    assert_eq!(made["status"], "pending");
    assert_eq!(
        support::file_hashes(&f.vault),
        before,
        "making a proposal wrote into the vault"
    );

    let listed = get_ok(&format!("{base}/api/proposals"));
    assert_eq!(listed["proposals"][0]["id"], id.as_str());
    assert_eq!(listed["proposals"][0]["files"], json!([note]));
    let shown = get_ok(&format!("{base}/api/proposals/{id}"));
    assert!(
        shown["diff"]
            .as_str()
            .unwrap()
            .contains("\n+- Try rye flour.\n"),
        "{shown}"
    );
    let (status, body) = get(&format!("{base}/api/proposals/..%2F..%2Fetc"), &[]);
    assert_eq!(status, 404, "{body}");
    assert_eq!(body["error"]["code"], "proposal_not_found");

    // Another site cannot apply it, nor can a form post (no JSON content type).
    let apply = format!("{base}/api/proposals/{id}/apply");
    let mut response = agent()
        .post(&apply)
        .header("Origin", "https://evil.example")
        .header("Content-Type", "application/json")
        .send("{}")
        .unwrap();
    assert_eq!(response.status().as_u16(), 403);
    let _ = response.body_mut().read_to_string();
    let (status, _) = post(&apply, "", Some("application/x-www-form-urlencoded"));
    assert_eq!(status, 415);
    assert_eq!(support::file_hashes(&f.vault), before);

    let (status, text) = post(&apply, "{}", Some("application/json"));
    assert_eq!(status, 200, "{text}");
    let applied: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(applied["proposal"]["status"], "applied");
    assert_eq!(applied["written"], json!([note]));
    let now = std::fs::read_to_string(f.vault.join(note)).unwrap();
    let next = now.find("## Next").unwrap();
    assert!(now[next..].contains("- Try rye flour."), "{now}");
    let (status, text) = post(&apply, "{}", Some("application/json"));
    assert_eq!(status, 409, "{text}");
    assert!(text.contains("proposal_not_pending"));

    // A note changed since its proposal was made: refused, by name; then rejected.
    let (_, text) = post(
        &format!("{base}/api/proposals"),
        &json!({"path": note, "change": "replace", "text": "# Replaced\n"}).to_string(),
        Some("application/json"),
    );
    let second: Value = serde_json::from_str(&text).unwrap();
    let second = second["id"].as_str().unwrap().to_string();
    support::edit_file(&f.vault.join(note), "Try rye flour", "Try spelt flour");
    let edited = support::file_hashes(&f.vault);
    let (status, text) = post(
        &format!("{base}/api/proposals/{second}/apply"),
        "{}",
        Some("application/json"),
    );
    assert_eq!(status, 409, "{text}");
    assert!(
        text.contains("note_changed") && text.contains(note),
        "{text}"
    );
    assert_eq!(support::file_hashes(&f.vault), edited);
    let (status, text) = post(
        &format!("{base}/api/proposals/{second}/reject"),
        "{}",
        Some("application/json"),
    );
    assert_eq!(status, 200, "{text}");
    assert!(text.contains("\"rejected\""));
    assert_eq!(support::file_hashes(&f.vault), edited);
    let (status, text) = post(
        &format!("{base}/api/proposals"),
        &json!({"path": "../outside.md", "change": "create", "text": "x"}).to_string(),
        Some("application/json"),
    );
    assert_eq!(status, 400, "{text}");
}

#[test]
fn the_deep_audit_answers_offline_with_structure_and_what_needs_a_model() {
    let f = sample();
    let server = serve(quire(&f), &[]);
    wait_ready(&server, None);
    let url = format!("{}/api/audit/deep", server.url);
    let (status, text) = post(&url, "{}", Some("application/json"));
    assert_eq!(status, 200, "{text}");
    let report: Value = serde_json::from_str(&text).unwrap();
    assert!(report["model"].is_null());
    assert_eq!(report["needs_model"].as_array().unwrap().len(), 3);
    let cli = support::json(&quire(&f).args(["--json", "audit"]).output().unwrap());
    assert_eq!(report["structural"]["summary"], cli["summary"]);
    let (status, _) = post(&url, "{}", Some("text/plain"));
    assert_eq!(status, 415);
    let (status, text) = post(&url, r#"{"bogus": 1}"#, Some("application/json"));
    assert_eq!(status, 400, "{text}");
}

#[test]
fn the_writing_tools_answer_over_http_with_proposals_and_write_nothing() {
    let f = sample();
    let chat = FakeChat::start(vec![answer(&["Feed it daily."])]);
    let server = serve_sample_with_model(&f, &chat);
    let base = &server.url;
    let before = support::file_hashes(&f.vault);
    let note = "Resources/Sourdough Starter.md";
    let (status, text) = post(
        &format!("{base}/api/transform"),
        &json!({"note": note, "lines": "15", "preset": "shorten"}).to_string(),
        Some("application/json"),
    );
    assert_eq!(status, 200, "{text}");
    let reply: Value = serde_json::from_str(&text).unwrap();
    let diff = reply["proposal"]["changes"][0]["diff"].as_str().unwrap();
    assert!(diff.contains("\n+Feed it daily.\n"), "{diff}");
    let (status, text) = post(
        &format!("{base}/api/split"),
        &json!({"note": "Sourdough Starter", "by_headings": true}).to_string(),
        Some("application/json"),
    );
    assert_eq!(status, 200, "{text}");
    let split: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(split["plan"]["method"], "headings");
    assert_eq!(split["plan"]["notes"].as_array().unwrap().len(), 3);
    let (status, text) = post(
        &format!("{base}/api/transform"),
        &json!({"note": note, "preset": "poem"}).to_string(),
        Some("application/json"),
    );
    assert_eq!(status, 400, "{text}");
    let (status, text) = post(
        &format!("{base}/api/batch"),
        &json!({"folder": "Resources/Books", "preset": "grammar", "dry_run": true}).to_string(),
        Some("application/json"),
    );
    assert_eq!(status, 200, "{text}");
    let plan: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(plan["plan"]["notes"].as_array().unwrap().len(), 3);
    let (status, _) = post(
        &format!("{base}/api/split"),
        &json!({"note": "../outside.md"}).to_string(),
        Some("application/json"),
    );
    assert_eq!(status, 400);
    // Each limit the document states for a tool's body is the server's: one character over is
    // refused, and the limit counts characters, not bytes (1,500 Cyrillic letters are 3,000
    // bytes and fit the 2,000 characters an instruction may have).
    let openapi = get_ok(&format!("{base}/api/openapi.json"));
    for (route, field, extra) in [
        (
            "/api/transform",
            "lines",
            json!({"note": note, "preset": "shorten"}),
        ),
        ("/api/transform", "preset", json!({"note": note})),
        ("/api/transform", "instruction", json!({"note": note})),
        ("/api/flashcards", "note", json!({})),
        ("/api/dataview", "question", json!({})),
        (
            "/api/batch",
            "folder",
            json!({"preset": "grammar", "dry_run": true}),
        ),
    ] {
        let max =
            openapi["paths"][route]["post"]["requestBody"]["content"]["application/json"]["schema"]
                ["properties"][field]["maxLength"]
                .as_u64()
                .unwrap_or_else(|| panic!("{route} {field}: no maxLength in the document"));
        let mut body = extra.clone();
        body[field] = "я".repeat(max as usize + 1).into();
        let (status, text) = post(
            &format!("{base}{route}"),
            &body.to_string(),
            Some("application/json"),
        );
        assert_eq!(status, 400, "{route} {field}: {text}");
        assert!(
            text.contains(&format!("the limit is {max} characters")),
            "{text}"
        );
    }
    let (status, text) = post(
        &format!("{base}/api/batch"),
        &json!({"folder": "Resources/Books", "instruction": "я".repeat(1_500), "dry_run": true})
            .to_string(),
        Some("application/json"),
    );
    assert_eq!(status, 200, "{text}");
    assert_eq!(
        support::file_hashes(&f.vault),
        before,
        "a tool wrote into the vault"
    );
}

#[test]
fn the_vault_map_is_a_canvas_proposal_kept_inside_the_vault() {
    let f = sample();
    // A folder that leads out of the vault.
    let outside = f.dir.path().join("outside");
    fs::create_dir_all(&outside).unwrap();
    std::os::unix::fs::symlink(&outside, f.vault.join("Elsewhere")).unwrap();
    let server = serve(quire(&f), &[]);
    wait_ready(&server, None);
    let base = &server.url;
    let canvas = format!("{base}/api/audit/canvas");
    let before = support::file_hashes(&f.vault);

    let (status, text) = post(&canvas, "{}", Some("application/json"));
    assert_eq!(status, 200, "{text}");
    let made: Value = serde_json::from_str(&text).unwrap();
    let proposal = &made["proposal"];
    assert_eq!(proposal["status"], "pending");
    assert_eq!(proposal["changes"][0]["path"], "Vault map.canvas", "{made}");
    assert_eq!(
        support::file_hashes(&f.vault),
        before,
        "nothing written yet"
    );

    let id = proposal["id"].as_str().unwrap();
    let (status, text) = post(
        &format!("{base}/api/proposals/{id}/apply"),
        "{}",
        Some("application/json"),
    );
    assert_eq!(status, 200, "{text}");
    let map: Value =
        serde_json::from_str(&fs::read_to_string(f.vault.join("Vault map.canvas")).unwrap())
            .unwrap();
    let files: Vec<&str> = map["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|n| n["file"].as_str())
        .collect();
    assert!(
        files.contains(&"Resources/Sourdough Starter.md"),
        "{files:?}"
    );
    assert!(!map["edges"].as_array().unwrap().is_empty());
    // Grouped by component, at another name: groups are the link graph's components.
    let (status, text) = post(
        &canvas,
        &json!({"path": "Areas/Links.canvas", "group": "component"}).to_string(),
        Some("application/json"),
    );
    assert_eq!(status, 200, "{text}");

    // Out of the vault (through a linked folder or `..`), not a canvas, an unknown grouping.
    for (body, code) in [
        (
            json!({"path": "Elsewhere/map.canvas"}),
            "path_outside_vault",
        ),
        (json!({"path": "../map.canvas"}), "path_outside_vault"),
        (json!({"path": "map.md"}), "bad_request"),
        (json!({"group": "colour"}), "bad_request"),
    ] {
        let (status, text) = post(&canvas, &body.to_string(), Some("application/json"));
        assert_eq!(status, 400, "{body}: {text}");
        assert!(text.contains(code), "{body}: {text}");
    }
    assert_eq!(fs::read_dir(&outside).unwrap().count(), 0);
}
