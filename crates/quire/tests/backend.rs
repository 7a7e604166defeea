//! `--backend postgres://…` end to end on the binary, against a real PostgreSQL 18 + pgvector
//! (`quire_testkit::pg`): `index` publishes after its sync, `search` and `similar` answer from
//! the database on a machine with neither the vault nor the local index, commands without a
//! database path refuse the flag, and a URL that is not PostgreSQL is refused.

#![allow(clippy::unwrap_used)] // tests stop at the first surprise

use std::path::Path;

use quire_testkit::{SampleVault, json, quire};

const BIN: &str = env!("CARGO_BIN_EXE_quire");

#[test]
fn index_publishes_and_search_reads_the_database_without_the_vault() {
    let sample = SampleVault::new(BIN);
    let url = quire_testkit::pg::database();
    let indexed = json(
        &quire(BIN, &sample.vault, &sample.index)
            .args(["--json", "--backend", &url, "index"])
            .output()
            .unwrap(),
    );
    let notes = indexed["notes_indexed"].as_u64().unwrap();
    assert!(notes > 40);
    assert_eq!(indexed["published"]["added"].as_u64(), Some(notes));
    assert_eq!(indexed["published"]["generation"], indexed["generation"]);

    // Another machine: no vault, no local index; the database is enough.
    let elsewhere = Path::new("/nonexistent/quire-elsewhere");
    let found = json(
        &quire(BIN, elsewhere, &elsewhere.join("index"))
            .args(["--json", "--backend", &url, "search", "Homelab"])
            .output()
            .unwrap(),
    );
    assert_eq!(found["mode"], "bm25", "no model: BM25");
    assert_eq!(found["results"][0]["path"], "Projects/Homelab.md");
    let text = String::from_utf8(
        quire(BIN, elsewhere, &elsewhere.join("index"))
            .args(["--backend", &url, "search", "sourdough starter"])
            .output()
            .unwrap()
            .stdout,
    )
    .unwrap();
    assert!(
        text.starts_with("1. Resources/Sourdough Starter.md"),
        "{text}"
    );
    // Obsidian links name the vault the writer indexed.
    let vault_name = sample.vault.file_name().unwrap().to_string_lossy();
    assert!(
        text.contains(&format!("obsidian://open?vault={vault_name}&")),
        "{text}"
    );

    let status = json(
        &quire(BIN, elsewhere, &elsewhere.join("index"))
            .args(["--json", "--backend", &url, "status"])
            .output()
            .unwrap(),
    );
    assert_eq!(status["notes"].as_u64(), Some(notes));
    assert_eq!(status["chunks"], indexed["chunks_total"]);
    assert_eq!(status["vectors"], 0, "indexed without the model");
    assert_eq!(status["generation"], indexed["generation"]);

    // A second index with nothing changed writes nothing.
    let again = json(
        &quire(BIN, &sample.vault, &sample.index)
            .args(["--json", "--backend", &url, "index"])
            .output()
            .unwrap(),
    );
    assert_eq!(again["published"]["added"], 0);
    assert_eq!(again["published"]["updated"], 0);
}

#[test]
fn commands_without_a_database_path_refuse_the_backend_and_bad_urls_are_refused() {
    let sample = SampleVault::new(BIN);
    for args in [
        vec!["ask", "what is it about?", "--file", "article.md"],
        vec!["duplicates"],
        vec!["audit", "--clusters"],
        vec!["moc"],
    ] {
        let out = quire(BIN, &sample.vault, &sample.index)
            .args([
                "--backend",
                "postgresql://nobody@/nowhere?host=/nonexistent",
            ])
            .args(&args)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(1), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("only `index`"), "{args:?}: {err}");
    }
    let out = quire(BIN, &sample.vault, &sample.index)
        .args(["--backend", "mysql://db/quire", "search", "x"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("not a PostgreSQL URL"), "{err}");
    // A database that cannot be reached is an error that names PostgreSQL, not a panic.
    let out = quire(BIN, &sample.vault, &sample.index)
        .args([
            "--backend",
            "postgresql://nobody@/nowhere?host=/nonexistent",
            "search",
            "x",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("PostgreSQL"), "{err}");
}

/// A copy of the sample vault indexed and published (BM25) to a fresh database: the copy and
/// the database's URL.
fn published_sample() -> (SampleVault, String) {
    let sample = SampleVault::new(BIN);
    let url = quire_testkit::pg::database();
    quire_testkit::ok(
        &quire(BIN, &sample.vault, &sample.index)
            .args(["--backend", &url, "index"])
            .output()
            .unwrap(),
    );
    (sample, url)
}

/// An empty vault folder (another machine's, without the vault): its temporary directory (an
/// index can go beside it) and the folder.
fn empty_folder() -> (tempfile::TempDir, std::path::PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let vault = dir.path().join("vault");
    std::fs::create_dir(&vault).unwrap();
    (dir, vault)
}

/// `quire search --backend URL QUERY --json` from a machine without the vault: the paths found.
fn remote_search(url: &str, query: &str) -> Vec<String> {
    let elsewhere = Path::new("/nonexistent/quire-elsewhere");
    let out = quire(BIN, elsewhere, &elsewhere.join("index"))
        .args(["--json", "--backend", url, "search", query])
        .output()
        .unwrap();
    if !out.status.success() {
        return Vec::new(); // not published yet
    }
    let found: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    found["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["path"].as_str().unwrap().to_string())
        .collect()
}

fn wait_for(what: &str, mut done: impl FnMut() -> bool) {
    let start = std::time::Instant::now();
    while !done() {
        assert!(
            start.elapsed() < std::time::Duration::from_secs(60),
            "timed out waiting for {what}"
        );
        std::thread::sleep(std::time::Duration::from_millis(200));
    }
}

#[test]
fn watch_publishes_every_sync_to_the_database() {
    let sample = SampleVault::new(BIN);
    let url = quire_testkit::pg::database();
    let mut watcher = quire(BIN, &sample.vault, &sample.index)
        .args(["--backend", &url, "watch", "--debounce-ms", "200"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    wait_for("the first publish", || {
        remote_search(&url, "Homelab").first().map(String::as_str) == Some("Projects/Homelab.md")
    });
    quire_testkit::edit_file(
        &sample.vault.join("Projects/Homelab.md"),
        "Three small machines",
        "Three small quokkamachines",
    );
    wait_for("the edit in the database", || {
        remote_search(&url, "quokkamachines") == vec!["Projects/Homelab.md".to_string()]
    });
    watcher.kill().unwrap();
    watcher.wait().unwrap();
}

/// Several `quire serve` over one database: two servers on a machine without the vault's index
/// (an empty vault folder, no watching) answer `/api/search` from the database the writer
/// published, and see the writer's next publish.
#[test]
fn several_servers_search_one_database() {
    let (sample, url) = published_sample();
    let (reader, empty_vault) = empty_folder();
    let servers: Vec<quire_testkit::Server> = (0..2)
        .map(|_| {
            let mut command = quire(BIN, &empty_vault, &reader.path().join("index"));
            command.args(["--backend", &url, "serve", "--port", "0", "--no-watch"]);
            quire_testkit::Server::start(&mut command, std::time::Duration::from_secs(60))
        })
        .collect();
    let search = |server: &quire_testkit::Server, q: &str| -> Vec<String> {
        let body = ureq::get(format!("{}/api/search?q={q}", server.url))
            .call()
            .unwrap()
            .body_mut()
            .read_to_string()
            .unwrap();
        let value: serde_json::Value = serde_json::from_str(&body).unwrap();
        value["results"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["path"].as_str().unwrap().to_string())
            .collect()
    };
    for server in &servers {
        assert_eq!(search(server, "Homelab")[0], "Projects/Homelab.md");
        assert!(search(server, "quokkamachines").is_empty());
    }
    quire_testkit::edit_file(
        &sample.vault.join("Projects/Homelab.md"),
        "Three small machines",
        "Three small quokkamachines",
    );
    quire_testkit::ok(
        &quire(BIN, &sample.vault, &sample.index)
            .args(["--backend", &url, "index"])
            .output()
            .unwrap(),
    );
    for server in &servers {
        assert_eq!(
            search(server, "quokkamachines"),
            vec!["Projects/Homelab.md"]
        );
    }
}

/// A writer killed in the middle of a publish (abort just before the commit, as a kill -9
/// would) leaves the database at its previous generation, whole; the next `index` publishes
/// what the killed one did not.
#[test]
fn a_publish_killed_before_its_commit_leaves_the_previous_generation() {
    let sample = SampleVault::new(BIN);
    let url = quire_testkit::pg::database();
    let first = json(
        &quire(BIN, &sample.vault, &sample.index)
            .args(["--json", "--backend", &url, "index"])
            .output()
            .unwrap(),
    );
    quire_testkit::edit_file(
        &sample.vault.join("Projects/Homelab.md"),
        "Three small machines",
        "Three small quokkamachines",
    );
    std::fs::remove_file(sample.vault.join("Resources/Running Shoes.md")).unwrap();
    let killed = quire(BIN, &sample.vault, &sample.index)
        .env("QUIRE_FAILPOINT", "pg_before_commit")
        .args(["--backend", &url, "index"])
        .output()
        .unwrap();
    assert!(!killed.status.success());
    assert!(String::from_utf8_lossy(&killed.stderr).contains("failpoint pg_before_commit"));
    let elsewhere = Path::new("/nonexistent/quire-elsewhere");
    let search = |q: &str| {
        json(
            &quire(BIN, elsewhere, &elsewhere.join("index"))
                .args(["--json", "--backend", &url, "search", q])
                .output()
                .unwrap(),
        )
    };
    let old = search("quokkamachines Running Shoes");
    assert_eq!(old["generation"], first["generation"]);
    let paths: Vec<&str> = old["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["path"].as_str().unwrap())
        .collect();
    assert!(paths.contains(&"Resources/Running Shoes.md"), "{paths:?}");
    assert!(!paths.contains(&"Projects/Homelab.md"), "{paths:?}");
    // The local index has the new generation; the next publish catches the database up.
    let again = json(
        &quire(BIN, &sample.vault, &sample.index)
            .args(["--json", "--backend", &url, "index"])
            .output()
            .unwrap(),
    );
    assert_eq!(again["notes_indexed"], 0, "the local sync had committed");
    assert_eq!(again["published"]["updated"], 1);
    assert_eq!(again["published"]["removed"], 1);
    let new = search("quokkamachines");
    assert_eq!(new["results"][0]["path"], "Projects/Homelab.md");
    assert!(new["generation"].as_u64() > first["generation"].as_u64());
}

/// A database holds one vault's index: another folder publishing to it (a reader's server left
/// watching an empty folder) is refused, and replaces it only with `--rebuild`. A password in
/// the URL never reaches a message.
#[test]
fn another_vault_does_not_replace_the_published_one_without_a_rebuild() {
    let (_sample, url) = published_sample();
    let (other, empty) = empty_folder();
    let refused = quire(BIN, &empty, &other.path().join("index"))
        .args(["--backend", &url, "index"])
        .output()
        .unwrap();
    assert_eq!(refused.status.code(), Some(1));
    let err = String::from_utf8_lossy(&refused.stderr);
    assert!(err.contains("holds the index of the vault at"), "{err}");
    assert_eq!(
        remote_search(&url, "Homelab").first().map(String::as_str),
        Some("Projects/Homelab.md"),
        "the published index is untouched"
    );
    let rebuilt = json(
        &quire(BIN, &empty, &other.path().join("index"))
            .args(["--json", "--backend", &url, "index", "--rebuild"])
            .output()
            .unwrap(),
    );
    assert_eq!(rebuilt["published"]["notes"], 0);
    assert!(remote_search(&url, "Homelab").is_empty());

    let secret = url.replacen("postgres:@", "postgres:hunter2@", 1);
    assert_ne!(secret, url);
    let out = quire(BIN, &empty, &other.path().join("index"))
        .args(["--backend", &secret, "duplicates"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("postgres:***@"), "{err}");
    assert!(!err.contains("hunter2"), "{err}");
}

/// `ask` on a machine with the vault's files but no local index: retrieval from the database,
/// passages re-read from the files (offline here: an extractive answer), no index created.
#[test]
fn ask_answers_from_the_database_and_the_files() {
    let (sample, url) = published_sample();
    let (elsewhere, _) = empty_folder();
    let no_index = elsewhere.path().join("index");
    let answer = json(
        &quire(BIN, &sample.vault, &no_index)
            .args([
                "--json",
                "--backend",
                &url,
                "ask",
                "What is the sourdough starter called?",
            ])
            .output()
            .unwrap(),
    );
    assert_eq!(
        answer["sources"][0]["path"], "Resources/Sourdough Starter.md",
        "{answer}"
    );
    assert_eq!(answer["kind"], "extractive");
    assert!(!no_index.exists(), "no local index was made");
    // The writer's own ask, from its local index, quotes the same notes.
    let local = json(
        &quire(BIN, &sample.vault, &sample.index)
            .args(["--json", "ask", "What is the sourdough starter called?"])
            .output()
            .unwrap(),
    );
    let notes = |a: &serde_json::Value| -> Vec<String> {
        a["citations"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c["path"].as_str().unwrap().to_string())
            .collect()
    };
    assert_eq!(notes(&local), notes(&answer));
}

/// `draft` (offline: the material for a section) on a machine with the files but no local
/// index: retrieved from the database, the note itself left out, the same notes as the writer's
/// local draft, no index created.
#[test]
fn draft_finds_material_in_the_database() {
    let (sample, url) = published_sample();
    let (elsewhere, _) = empty_folder();
    let no_index = elsewhere.path().join("index");
    let args = [
        "--json",
        "draft",
        "Projects/Sourdough Experiment.md",
        "--heading",
        "Results",
    ];
    let remote = json(
        &quire(BIN, &sample.vault, &no_index)
            .args(["--backend", &url])
            .args(args)
            .output()
            .unwrap(),
    );
    let local = json(
        &quire(BIN, &sample.vault, &sample.index)
            .args(args)
            .output()
            .unwrap(),
    );
    let notes = |d: &serde_json::Value| -> std::collections::BTreeSet<String> {
        d["sources"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| s["path"].as_str().unwrap().to_string())
            .collect()
    };
    let found = notes(&remote);
    assert!(
        found.contains("Resources/Sourdough Starter.md"),
        "{found:?}"
    );
    assert!(
        !found.contains("Projects/Sourdough Experiment.md"),
        "{found:?}"
    );
    assert_eq!(found, notes(&local));
    assert!(!no_index.exists(), "no local index was made");
}
