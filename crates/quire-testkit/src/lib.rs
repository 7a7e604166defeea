//! Test support shared by quire's test suites (a dev-dependency only, never shipped):
//!
//! - vault fixtures: [`sample_vault`], [`corpora`], [`copy_tree`], [`copy_notes`], [`edit_file`];
//! - the binary runner: [`quire`] (a `quire` command with no model, no provider and nothing of
//!   the developer's environment that could send a request elsewhere), [`ok`], [`json`];
//! - [`Server`], a running `quire serve` or `quire mcp --http` found by its `listening on` line;
//! - [`FakeChat`], the one fake OpenAI-compatible chat server;
//! - [`pdf`]: PDFs written from known text for the attachment tests.
//!
//! [`FakeChat`] is an OpenAI-compatible chat-completions server on 127.0.0.1: it records every
//! request body and plays a script, one reply per connection (an event stream of content deltas,
//! optionally slow, or an error status). No test talks to any other host.

pub mod pdf;
pub mod pg;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::sync::mpsc::{self, Receiver};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

use serde_json::{Value, json};

/// One scripted reply.
pub enum Reply {
    /// `200 text/event-stream`: one content delta per piece, each its own HTTP chunk, `pause`
    /// between them, then a finish event and `[DONE]`.
    Stream {
        /// The content deltas, in order; the reply's text is their concatenation.
        pieces: Vec<String>,
        /// The sleep before each piece after the first.
        pause: Duration,
    },
    /// An error status with extra header lines (each ending in `\r\n`) and a JSON error body.
    Status {
        /// The HTTP status code.
        code: u16,
        /// Extra header lines, each ending in `\r\n` (`""` for none).
        headers: String,
        /// The `error.message` of the JSON body.
        message: String,
    },
}

/// A streamed answer, sent as fast as possible.
pub fn answer(pieces: &[&str]) -> Reply {
    slow(pieces, Duration::ZERO)
}

/// A streamed answer with a pause before every piece after the first.
pub fn slow(pieces: &[&str], pause: Duration) -> Reply {
    Reply::Stream {
        pieces: pieces.iter().map(|p| p.to_string()).collect(),
        pause,
    }
}

/// An error reply.
pub fn status(code: u16, headers: &str, message: &str) -> Reply {
    Reply::Status {
        code,
        headers: headers.to_string(),
        message: message.to_string(),
    }
}

/// How one reply went.
#[derive(Debug, Clone, Copy, Default)]
pub struct Served {
    /// Content pieces written before the script ended or the client left.
    pub pieces_sent: usize,
    /// A write failed: the client had closed the connection.
    pub client_gone: bool,
}

/// The fake server.
pub struct FakeChat {
    /// The base URL, up to `/v1`.
    pub url: String,
    log: Arc<Mutex<Vec<Value>>>,
    thread: JoinHandle<Vec<Served>>,
}

impl FakeChat {
    /// Starts the server on a free port of 127.0.0.1: it plays `script` in order, one reply per
    /// connection, and stops accepting once the script is played.
    pub fn start(script: Vec<Reply>) -> FakeChat {
        FakeChat::with_hook(script, |_| {})
    }

    /// Like [`start`](Self::start); `on_request(n)` runs once request `n` (from 0) has been
    /// read, before its reply (tests change files there, "while the model thinks").
    pub fn with_hook(
        script: Vec<Reply>,
        mut on_request: impl FnMut(usize) + Send + 'static,
    ) -> FakeChat {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1");
        let url = format!("http://{}/v1", listener.local_addr().expect("address"));
        let log = Arc::new(Mutex::new(Vec::new()));
        let requests = Arc::clone(&log);
        let thread = std::thread::spawn(move || {
            let mut served = Vec::new();
            for (n, reply) in script.into_iter().enumerate() {
                let Ok((mut stream, _)) = listener.accept() else {
                    break;
                };
                let body = read_body(&stream);
                requests.lock().expect("log").push(body);
                on_request(n);
                served.push(play(&mut stream, reply));
            }
            served
        });
        FakeChat { url, log, thread }
    }

    /// The JSON bodies received so far, in order.
    pub fn requests(&self) -> Vec<Value> {
        self.log.lock().expect("log").clone()
    }

    /// Waits until the script has been played and says how each reply went.
    pub fn finish(self) -> Vec<Served> {
        self.thread.join().expect("fake server thread")
    }
}

fn read_body(stream: &TcpStream) -> Value {
    let mut reader = BufReader::new(stream);
    let mut length = 0;
    loop {
        let mut line = String::new();
        reader.read_line(&mut line).expect("request head");
        let line = line.trim_end();
        if line.is_empty() {
            break;
        }
        if let Some((name, value)) = line.split_once(':')
            && name.eq_ignore_ascii_case("content-length")
        {
            length = value.trim().parse().expect("content length");
        }
    }
    let mut body = vec![0; length];
    reader.read_exact(&mut body).expect("request body");
    serde_json::from_slice(&body).expect("JSON request body")
}

fn event(delta: Value, finish: Option<&str>) -> String {
    let chunk = json!({
        "id": "fake", "object": "chat.completion.chunk",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    });
    format!("data: {chunk}\n\n")
}

fn play(stream: &mut TcpStream, reply: Reply) -> Served {
    let mut served = Served::default();
    match reply {
        Reply::Status {
            code,
            headers,
            message,
        } => {
            let body = json!({"error": {"message": message}}).to_string();
            let head = format!(
                "HTTP/1.1 {code} Scripted\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n{headers}\r\n",
                body.len()
            );
            let _ = stream.write_all(format!("{head}{body}").as_bytes());
        }
        Reply::Stream { pieces, pause } => {
            let head = "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n";
            let send = |stream: &mut TcpStream, data: &str| {
                stream
                    .write_all(format!("{:x}\r\n{data}\r\n", data.len()).as_bytes())
                    .and_then(|_| stream.flush())
                    .is_ok()
            };
            if stream.write_all(head.as_bytes()).is_err() {
                served.client_gone = true;
                return served;
            }
            for (i, piece) in pieces.iter().enumerate() {
                if i > 0 {
                    std::thread::sleep(pause);
                }
                if !send(stream, &event(json!({"content": piece}), None)) {
                    served.client_gone = true;
                    return served;
                }
                served.pieces_sent += 1;
            }
            let ending = format!("{}data: [DONE]\n\n", event(json!({}), Some("stop")));
            if !send(stream, &ending) {
                served.client_gone = true;
            }
            let _ = stream.write_all(b"0\r\n\r\n");
        }
    }
    served
}

/// The `(role, content)` pairs of a recorded request.
pub fn messages(request: &Value) -> Vec<(String, String)> {
    request["messages"]
        .as_array()
        .expect("messages")
        .iter()
        .map(|m| {
            (
                m["role"].as_str().unwrap_or_default().to_string(),
                m["content"].as_str().unwrap_or_default().to_string(),
            )
        })
        .collect()
}

/// The sample vault of the repository.
pub fn sample_vault() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../examples/vault")
}

/// A temporary copy of the sample vault with an index directory beside it, run by the `quire`
/// binary at `bin` (a test's `env!("CARGO_BIN_EXE_quire")`).
pub struct SampleVault {
    /// The temporary directory holding both (removed when dropped).
    pub dir: tempfile::TempDir,
    /// The vault copy.
    pub vault: PathBuf,
    /// Its index directory.
    pub index: PathBuf,
    bin: String,
}

impl SampleVault {
    /// A copy, not indexed.
    pub fn new(bin: &str) -> SampleVault {
        let dir = tempfile::tempdir().expect("temp dir");
        let vault = dir.path().join("vault");
        copy_tree(&sample_vault(), &vault);
        let index = dir.path().join("index");
        SampleVault {
            dir,
            vault,
            index,
            bin: bin.to_string(),
        }
    }

    /// A copy indexed BM25-only (`quire index`).
    pub fn indexed(bin: &str) -> SampleVault {
        let copy = SampleVault::new(bin);
        ok(&copy
            .quire(None)
            .arg("index")
            .output()
            .expect("quire index runs"));
        copy
    }

    /// `quire` on this copy ([`quire`]), against `server` when given.
    pub fn quire(&self, server: Option<&FakeChat>) -> Command {
        let mut c = quire(&self.bin, &self.vault, &self.index);
        if let Some(server) = server {
            c.env("QUIRE_LLM_BASE_URL", &server.url)
                .env("QUIRE_LLM_MODEL", "fake-model");
        }
        c
    }
}

/// Copies a directory tree (the sample vault into a temporary directory).
pub fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).expect("create copy");
    for entry in std::fs::read_dir(from).expect("read dir") {
        let entry = entry.expect("dir entry");
        let target = to.join(entry.file_name());
        if entry.file_type().expect("file type").is_dir() {
            copy_tree(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).expect("copy file");
        }
    }
}

/// Copies some notes of the sample vault (vault-relative paths) into a new vault at `to`.
pub fn copy_notes(paths: &[&str], to: &Path) {
    for path in paths {
        let target = to.join(path);
        std::fs::create_dir_all(target.parent().expect("a folder")).expect("create folder");
        std::fs::copy(sample_vault().join(path), target).expect("copy note");
    }
}

/// sha256 (hex) of every file under `root`, hidden ones included, by path relative to `root`:
/// compare two to prove a run wrote nothing into a vault (or exactly which files it wrote).
pub fn file_hashes(root: &Path) -> std::collections::BTreeMap<String, String> {
    use sha2::{Digest, Sha256};
    fn walk(root: &Path, dir: &Path, out: &mut std::collections::BTreeMap<String, String>) {
        for entry in std::fs::read_dir(dir).expect("read dir") {
            let path = entry.expect("dir entry").path();
            if path.is_dir() {
                walk(root, &path, out);
            } else {
                let bytes = std::fs::read(&path).expect("read file");
                let hex = Sha256::digest(&bytes)
                    .iter()
                    .map(|b| format!("{b:02x}"))
                    .collect();
                let rel = path
                    .strip_prefix(root)
                    .expect("under root")
                    .display()
                    .to_string();
                out.insert(rel, hex);
            }
        }
    }
    let mut out = std::collections::BTreeMap::new();
    walk(root, root, &mut out);
    out
}

/// Writes `bytes` to the vault-relative `path` under `root`, making its folders.
pub fn write_file(root: &Path, path: &str, bytes: &[u8]) {
    let file = root.join(path);
    if let Some(parent) = file.parent() {
        std::fs::create_dir_all(parent).expect("create the folder");
    }
    std::fs::write(file, bytes).expect("write the file");
}

/// The `(path, reason)` of each entry of a report's skipped list under `key` (`notes_skipped` of
/// `quire index --json`), in its order.
pub fn skipped_list(report: &serde_json::Value, key: &str) -> Vec<(String, String)> {
    report[key]
        .as_array()
        .expect("a skipped list")
        .iter()
        .map(|s| {
            (
                s["path"].as_str().expect("a path").to_string(),
                s["reason"].as_str().expect("a reason").to_string(),
            )
        })
        .collect()
}

/// Replaces `from` with `to` in a file, as an editor would (the text must be there).
pub fn edit_file(file: &Path, from: &str, to: &str) {
    let text = std::fs::read_to_string(file).expect("read the note");
    assert!(
        text.contains(from),
        "{} does not contain {from:?}",
        file.display()
    );
    std::fs::write(file, text.replace(from, to)).expect("write the note");
}

/// The sentence of the sample vault's starter note that the stale-chunk tests edit.
pub const FEEDING: &str = "Feed once a day when it lives on the counter";

/// The shared corpora (`../shared/corpora` beside the repository, or `$QUIRE_CORPORA`).
pub fn corpora() -> PathBuf {
    std::env::var_os("QUIRE_CORPORA")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/corpora")
        })
}

/// The `quire` binary at `bin` (a test's `env!("CARGO_BIN_EXE_quire")`) on `vault` with its
/// index in `index`: no embedding model, no chat provider, no local model, no remote embedder,
/// no failpoint, no server token, whatever the developer's environment says. The index
/// directory is set by environment, so that `--index-dir` can still name another one.
pub fn quire(bin: &str, vault: &Path, index: &Path) -> Command {
    let mut c = Command::new(bin);
    for var in [
        "QUIRE_LLM_BASE_URL",
        "QUIRE_LLM_MODEL",
        "QUIRE_LLM_API_KEY",
        "QUIRE_LLM_PRESET",
        "QUIRE_EMBED_BASE_URL",
        "QUIRE_FAILPOINT",
        "QUIRE_TOKEN",
        "QUIRE_BACKEND",
    ] {
        c.env_remove(var);
    }
    c.env("QUIRE_INDEX_DIR", index)
        .env("QUIRE_MODEL", "/nonexistent/quire-model.bin")
        // A `local-llm` build would otherwise answer with the fetched local model.
        .env("QUIRE_LLM_LOCAL", "0")
        .arg("--vault")
        .arg(vault);
    c
}

/// The standard output of a run that must have succeeded (its stderr in the failure message).
pub fn ok(out: &Output) -> String {
    assert!(
        out.status.success(),
        "quire failed ({:?}): {}",
        out.status.code(),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout.clone()).expect("UTF-8 on stdout")
}

/// The JSON a successful run printed.
pub fn json(out: &Output) -> serde_json::Value {
    serde_json::from_str(&ok(out)).expect("JSON on stdout")
}

/// The skipped files of `quire scan --json` (or `index --json`'s `notes_skipped` shape with a
/// `reason.kind`): path → reason kind.
pub fn skip_reasons(scan: &serde_json::Value) -> std::collections::BTreeMap<String, String> {
    scan["skipped"]
        .as_array()
        .expect("a skipped list")
        .iter()
        .map(|s| {
            (
                s["path"].as_str().expect("a path").to_string(),
                s["reason"]["kind"]
                    .as_str()
                    .expect("a reason kind")
                    .to_string(),
            )
        })
        .collect()
}

/// Reads `child`'s stderr on a thread (echoed as `[quire] …`) into a shared log; sends the
/// address of each `listening on http://ADDR/` line.
pub fn stderr_log(child: &mut Child) -> (Arc<Mutex<String>>, Receiver<String>) {
    let stderr = child.stderr.take().expect("stderr is piped");
    let log = Arc::new(Mutex::new(String::new()));
    let (sender, address) = mpsc::channel();
    let lines = Arc::clone(&log);
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines() {
            let Ok(line) = line else { break };
            eprintln!("[quire] {line}");
            if let Some(rest) = line.split("listening on http://").nth(1) {
                let addr = rest.split('/').next().unwrap_or_default().to_string();
                let _ = sender.send(addr);
            }
            let mut log = lines.lock().expect("log");
            log.push_str(&line);
            log.push('\n');
        }
    });
    (log, address)
}

/// A running server (`quire serve`, `quire mcp --http`); killed when dropped.
pub struct Server {
    /// The process (for its pid, or to wait for it to exit).
    pub child: Child,
    /// `127.0.0.1:PORT` (a server bound to `0.0.0.0` is reached on loopback).
    pub addr: String,
    /// `http://127.0.0.1:PORT`
    pub url: String,
    log: Arc<Mutex<String>>,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Server {
    /// Starts `command` and waits up to `patience` for its `listening on` line.
    pub fn start(command: &mut Command, patience: Duration) -> Server {
        let mut child = command
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("the server starts");
        let (log, address) = stderr_log(&mut child);
        let addr = address
            .recv_timeout(patience)
            .unwrap_or_else(|_| panic!("the server did not start: {}", log.lock().expect("log")));
        let port = addr.rsplit(':').next().unwrap_or_default().to_string();
        let addr = format!("127.0.0.1:{port}");
        Server {
            child,
            url: format!("http://{addr}"),
            addr,
            log,
        }
    }

    /// The port it listens on.
    pub fn port(&self) -> &str {
        self.addr.rsplit(':').next().unwrap_or_default()
    }

    /// Everything it wrote on stderr so far.
    pub fn log(&self) -> String {
        self.log.lock().expect("log").clone()
    }
}

/// A deterministic generator of unit vectors (xorshift64*), so vector tests and benches see the
/// same vectors on every run.
pub struct VectorRng(pub u64);

impl VectorRng {
    /// A number in [-0.5, 0.5).
    pub fn sample(&mut self) -> f32 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        let x = self.0.wrapping_mul(0x2545_F491_4F6C_DD1D);
        (x >> 40) as f32 / (1u64 << 24) as f32 - 0.5
    }

    /// A unit vector of `dim`: random, or `around` a centre moved by up to `spread` per axis.
    pub fn unit(&mut self, dim: usize, around: Option<&[f32]>, spread: f32) -> Vec<f32> {
        let mut v: Vec<f32> = (0..dim)
            .map(|i| around.map_or(0.0, |c| c[i]) + spread * self.sample())
            .collect();
        let n = v.iter().map(|x| x * x).sum::<f32>().sqrt();
        v.iter_mut().for_each(|x| *x /= n);
        v
    }
}
