//! The dependency rules of ARCHITECTURE.md, checked against every crate's Cargo.toml: which of
//! our crates each may depend on (faces never on each other), and which outside crates the
//! lower layers must never pull in (no network, async runtime or storage in the vault model).

#![allow(clippy::unwrap_used)] // tests and benches stop at the first surprise

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;

/// Our crates each crate may depend on (normal dependencies; tests may use more).
const ALLOWED: &[(&str, &[&str])] = &[
    ("quire-vault", &[]),
    // The structural audit: a pure function of the parsed vault.
    ("quire-audit", &["quire-vault"]),
    // The one OpenAI-compatible HTTP client, under chat and embeddings.
    ("quire-openai", &[]),
    ("quire-embed", &["quire-openai"]),
    ("quire-llm", &["quire-openai"]),
    ("quire-index", &["quire-vault", "quire-embed"]),
    // Proposals: file changes made from hashed bases, applied atomically.
    ("quire-proposals", &["quire-vault"]),
    (
        "quire-search",
        &["quire-vault", "quire-index", "quire-embed"],
    ),
    // The team backend: the index published to PostgreSQL, searched with quire-search's code.
    (
        "quire-pg",
        &["quire-vault", "quire-index", "quire-embed", "quire-search"],
    ),
    (
        "quire-watch",
        &["quire-vault", "quire-index", "quire-embed"],
    ),
    (
        "quire-assist",
        &[
            "quire-vault",
            "quire-index",
            "quire-embed",
            "quire-search",
            "quire-llm",
        ],
    ),
    (
        "quire-app",
        &[
            "quire-vault",
            "quire-audit",
            "quire-index",
            "quire-embed",
            "quire-search",
            "quire-pg",
            "quire-watch",
            "quire-llm",
            "quire-assist",
            "quire-proposals",
        ],
    ),
    // The faces: the application core and the libraries below it, never another face. MCP
    // stands on the application core alone (the model of a thin face).
    ("quire-mcp", &["quire-app"]),
    ("quire-serve", &["quire-app"]),
    // Test support: only ever a dev-dependency (checked below).
    ("quire-testkit", &[]),
    // The binary wires the faces together; its CLI, like the other faces, stands on the
    // application core alone (tests may use more, as dev-dependencies).
    ("quire", &["quire-app", "quire-mcp", "quire-serve"]),
];

/// Outside crates a crate must never depend on: what it never does.
const FORBIDDEN: &[(&str, &[&str])] = &[
    // Pure model of the files: no storage, no network, no async, no models.
    (
        "quire-vault",
        &[
            "rusqlite",
            "tantivy",
            "ureq",
            "tokio",
            "axum",
            "rmcp",
            "candle-core",
        ],
    ),
    // Computed from the parsed vault alone: no storage, no network, no async, no models.
    (
        "quire-audit",
        &[
            "rusqlite",
            "tantivy",
            "ureq",
            "tokio",
            "axum",
            "rmcp",
            "candle-core",
        ],
    ),
    ("quire-index", &["ureq", "tokio", "axum", "rmcp"]),
    // Writes files of the vault and its own store: no index, no network, no async, no models.
    (
        "quire-proposals",
        &[
            "rusqlite",
            "tantivy",
            "ureq",
            "tokio",
            "axum",
            "rmcp",
            "candle-core",
        ],
    ),
    // A blocking client: no async runtime, no server.
    ("quire-openai", &["tokio", "axum", "rmcp", "hyper"]),
    ("quire-search", &["ureq", "tokio", "axum", "rmcp"]),
    // The database backend: the blocking client only; the local index through quire-index.
    (
        "quire-pg",
        &["rusqlite", "tantivy", "ureq", "tokio", "axum", "rmcp"],
    ),
    ("quire-assist", &["tokio", "axum", "rmcp"]),
    // The application core speaks no protocol.
    ("quire-app", &["tokio", "axum", "rmcp", "hyper"]),
    ("quire-serve", &["rmcp"]),
    ("quire-mcp", &["axum"]),
];

fn dependencies() -> BTreeMap<String, BTreeSet<String>> {
    let crates = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut out = BTreeMap::new();
    for entry in std::fs::read_dir(&crates).unwrap() {
        let manifest = entry.unwrap().path().join("Cargo.toml");
        let Ok(text) = std::fs::read_to_string(&manifest) else {
            continue;
        };
        let value: toml::Table = text.parse().unwrap();
        let name = value["package"]["name"].as_str().unwrap().to_string();
        let deps = value
            .get("dependencies")
            .and_then(|d| d.as_table())
            .map(|t| t.keys().cloned().collect())
            .unwrap_or_default();
        out.insert(name, deps);
    }
    out
}

#[test]
fn every_crate_is_in_the_map_and_depends_only_on_what_it_may() {
    let deps = dependencies();
    let allowed: BTreeMap<&str, &[&str]> = ALLOWED.iter().copied().collect();
    assert_eq!(
        deps.keys().map(String::as_str).collect::<BTreeSet<_>>(),
        allowed.keys().copied().collect::<BTreeSet<_>>(),
        "a crate was added or removed: put it in ARCHITECTURE.md's map and in ALLOWED"
    );
    for (name, crate_deps) in &deps {
        for dep in crate_deps.iter().filter(|d| d.starts_with("quire")) {
            assert!(
                allowed[name.as_str()].contains(&dep.as_str()),
                "{name} depends on {dep}, which ARCHITECTURE.md's map does not allow"
            );
        }
    }
}

#[test]
fn no_face_depends_on_another_face() {
    let deps = dependencies();
    for face in ["quire-mcp", "quire-serve"] {
        for other in ["quire-mcp", "quire-serve"] {
            assert!(
                !deps[face].contains(other),
                "{face} depends on {other}: faces share the application core (quire-app), never each other"
            );
        }
    }
}

#[test]
fn lower_layers_pull_in_no_network_storage_or_protocol_crates() {
    let deps = dependencies();
    for (name, forbidden) in FORBIDDEN {
        for crate_name in *forbidden {
            assert!(
                !deps[*name].contains(*crate_name),
                "{name} depends on {crate_name}, which ARCHITECTURE.md says it never uses"
            );
        }
    }
}

#[test]
fn the_testkit_is_never_a_normal_dependency() {
    for (name, crate_deps) in dependencies() {
        assert!(
            !crate_deps.contains("quire-testkit"),
            "{name} depends on quire-testkit outside [dev-dependencies]"
        );
    }
}

#[test]
fn the_application_core_speaks_no_protocol() {
    // The agents' protocol (its name, its URIs, its wire format) and the instructions a tool
    // result gives an agent belong to quire-mcp; the core answers with data for every face.
    let src = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../quire-app/src");
    let mut read = 0;
    for entry in std::fs::read_dir(&src).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_none_or(|e| e != "rs") {
            continue;
        }
        let text = std::fs::read_to_string(&path).unwrap().to_lowercase();
        read += 1;
        for word in [
            "mcp",
            "quire://",
            "json-rpc",
            "rmcp",
            "call get_note",
            "call list_notes",
        ] {
            assert!(
                !text.contains(word),
                "{} mentions `{word}`: protocol matters live in quire-mcp",
                path.display()
            );
        }
    }
    assert!(read > 10, "read only {read} files of {}", src.display());
}
