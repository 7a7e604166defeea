//! `quire mcp` driven from outside the project by the official Python MCP SDK (`mcp==2.3.0` from
//! PyPI, installed into `target/mcp-venv` by `scripts/test.sh`, or the interpreter named by
//! `QUIRE_MCP_PYTHON`). The checks live in `crates/quire-mcp/tests/py/test_mcp.py`; each test
//! here runs one of its scenarios on a fresh copy of the obsidian-starter-vault corpus:
//!
//! - `stdio`: initialize, the six tools and their schemas, every tool's answers checked against
//!   the files (titles, line ranges, sha256, a search that finds the note its words are in),
//!   a `quire://note/…` resource, traversal (`../`, absolute, `%2e%2e`, a symlink out) and
//!   malformed arguments as tool errors, and the server still answering afterwards;
//! - `http`: the same over streamable HTTP, plus the endpoint's guards;
//! - `fresh`: a watching server finds notes added and edited while it runs, and forgets removed
//!   ones, without a restart (and waits for its first sync when there is no index yet);
//! - `noindex`: without an index, search says how to build one and the file tools still answer.

#![allow(clippy::unwrap_used)] // tests and benches stop at the first surprise

use std::path::PathBuf;
use std::process::Command;

fn workspace() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The path in environment variable `var`, else `default`; it must exist (`hint` says how).
fn existing_path(var: &str, default: PathBuf, hint: &str) -> PathBuf {
    let path = std::env::var_os(var).map_or(default, PathBuf::from);
    assert!(path.exists(), "{} not found: {hint}", path.display());
    path
}

/// The Python interpreter that has the `mcp` package.
fn python() -> PathBuf {
    existing_path(
        "QUIRE_MCP_PYTHON",
        workspace().join("target/mcp-venv/bin/python"),
        "run scripts/test.sh once (it installs the MCP client, mcp==2.3.0, into target/mcp-venv), or set QUIRE_MCP_PYTHON",
    )
}

fn starter_vault() -> PathBuf {
    let corpora = existing_path(
        "QUIRE_CORPORA",
        workspace().join("../shared/corpora"),
        "set QUIRE_CORPORA to the shared corpora",
    );
    corpora.join("vaults/obsidian-starter-vault/vault")
}

/// Runs a scenario of the Python client; its output is shown when a check fails.
fn run_client(scenario: &str) {
    let workdir = tempfile::tempdir().expect("temp dir");
    let out = Command::new(python())
        .arg(workspace().join("crates/quire-mcp/tests/py/test_mcp.py"))
        .args([
            "--scenario",
            scenario,
            "--quire",
            env!("CARGO_BIN_EXE_quire"),
        ])
        .arg("--corpus")
        .arg(starter_vault())
        .arg("--workdir")
        .arg(workdir.path())
        .output()
        .expect("the Python MCP client runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "MCP client scenario `{scenario}` failed\n--- checks ---\n{stdout}\n--- stderr ---\n{stderr}"
    );
    assert!(
        stdout.contains(" passed, 0 failed"),
        "no summary line: {stdout}"
    );
    assert!(!stderr.contains("panicked"), "quire panicked: {stderr}");
}

#[test]
fn stdio_client_uses_every_tool_and_is_refused_outside_the_vault() {
    run_client("stdio");
}

#[test]
fn http_client_uses_every_tool_and_is_refused_outside_the_vault() {
    run_client("http");
}

#[test]
fn watching_server_finds_notes_written_while_it_runs() {
    run_client("fresh");
}

#[test]
fn server_without_an_index_explains_search_and_still_reads_notes() {
    run_client("noindex");
}

#[test]
fn allowed_proposals_are_made_by_the_client_and_applied_only_by_the_user() {
    run_client("proposals");
}
