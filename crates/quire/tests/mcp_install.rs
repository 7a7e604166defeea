//! `quire mcp install`: the real binary writing real client configuration files in a temporary
//! home folder: merged with the servers already there, backed up, refused when the file does
//! not parse, printed without writing, and taken out again exactly.

#![allow(clippy::unwrap_used)] // tests stop at the first surprise

use std::fs;
use std::path::Path;
use std::process::Command;

use serde_json::Value;

const BIN: &str = env!("CARGO_BIN_EXE_quire");

/// `quire --vault VAULT mcp install ARGS` with `home` as the home folder and `project` as the
/// current folder.
fn install(home: &Path, project: &Path, vault: &Path, args: &[&str]) -> std::process::Output {
    Command::new(BIN)
        .env("HOME", home)
        .env_remove("CODEX_HOME")
        .env_remove("QUIRE_INDEX_DIR")
        .current_dir(project)
        .arg("--vault")
        .arg(vault)
        .args(["mcp", "install"])
        .args(args)
        .output()
        .unwrap()
}

fn ok(output: &std::process::Output) -> String {
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout.clone()).unwrap()
}

fn backups(dir: &Path) -> Vec<String> {
    fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.contains(".quire-backup-"))
        .collect()
}

#[test]
fn clients_are_set_up_kept_and_taken_out_exactly() {
    let dir = tempfile::tempdir().unwrap();
    let (home, project, vault) = (
        dir.path().join("home"),
        dir.path().join("project"),
        dir.path().join("vault"),
    );
    for d in [&home, &project, &vault] {
        fs::create_dir_all(d).unwrap();
    }
    fs::write(vault.join("Note.md"), "# Note\n").unwrap();
    let vault_text = vault.canonicalize().unwrap().display().to_string();

    // Cursor, with another server already there.
    let cursor = home.join(".cursor/mcp.json");
    fs::create_dir_all(cursor.parent().unwrap()).unwrap();
    let before =
        r#"{"mcpServers": {"github": {"command": "gh-mcp", "args": []}}, "theme": "dark"}"#;
    fs::write(&cursor, before).unwrap();
    let said = ok(&install(&home, &project, &vault, &["--client", "cursor"]));
    assert!(said.contains("starts quire mcp"), "{said}");
    let v: Value = serde_json::from_str(&fs::read_to_string(&cursor).unwrap()).unwrap();
    assert_eq!(v["mcpServers"]["github"]["command"], "gh-mcp");
    assert_eq!(v["theme"], "dark");
    let args: Vec<&str> = v["mcpServers"]["quire"]["args"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a.as_str().unwrap())
        .collect();
    assert_eq!(args, ["--vault", vault_text.as_str(), "mcp"]);
    assert!(Path::new(v["mcpServers"]["quire"]["command"].as_str().unwrap()).is_absolute());
    let kept = backups(cursor.parent().unwrap());
    assert_eq!(kept.len(), 1);
    assert_eq!(
        fs::read_to_string(cursor.parent().unwrap().join(&kept[0])).unwrap(),
        before
    );
    // Twice: nothing to write. Then out again: the file means what it meant.
    assert!(
        ok(&install(&home, &project, &vault, &["--client", "cursor"])).contains("nothing written")
    );
    ok(&install(
        &home,
        &project,
        &vault,
        &["--client", "cursor", "--uninstall"],
    ));
    assert_eq!(
        serde_json::from_str::<Value>(&fs::read_to_string(&cursor).unwrap()).unwrap(),
        serde_json::from_str::<Value>(before).unwrap()
    );

    // A file that does not parse is refused and left as it is.
    let desktop = home.join(".config/Claude/claude_desktop_config.json");
    fs::create_dir_all(desktop.parent().unwrap()).unwrap();
    fs::write(&desktop, "{ \"mcpServers\": {").unwrap();
    let refused = install(&home, &project, &vault, &["--client", "claude-desktop"]);
    assert!(!refused.status.success());
    assert!(String::from_utf8_lossy(&refused.stderr).contains("cannot read it as JSON"));
    assert_eq!(fs::read_to_string(&desktop).unwrap(), "{ \"mcpServers\": {");

    // VS Code, project scope, no file yet; with proposals allowed.
    ok(&install(
        &home,
        &project,
        &vault,
        &["--client", "vscode", "--allow-proposals"],
    ));
    let v: Value =
        serde_json::from_str(&fs::read_to_string(project.join(".vscode/mcp.json")).unwrap())
            .unwrap();
    assert_eq!(v["servers"]["quire"]["type"], "stdio");
    assert_eq!(
        v["servers"]["quire"]["args"]
            .as_array()
            .unwrap()
            .last()
            .unwrap(),
        "--allow-proposals"
    );

    // Codex: TOML with a comment and another server keeps both.
    let codex = home.join(".codex/config.toml");
    fs::create_dir_all(codex.parent().unwrap()).unwrap();
    let toml = "# mine\nmodel = \"o4-mini\"\n\n[mcp_servers.docs]\ncommand = \"docs\"\n";
    fs::write(&codex, toml).unwrap();
    ok(&install(
        &home,
        &project,
        &vault,
        &["--client", "codex", "--name", "notes"],
    ));
    let written = fs::read_to_string(&codex).unwrap();
    assert!(
        written.starts_with(toml) && written.contains("[mcp_servers.notes]"),
        "{written}"
    );
    ok(&install(
        &home,
        &project,
        &vault,
        &["--client", "codex", "--name", "notes", "--uninstall"],
    ));
    assert_eq!(fs::read_to_string(&codex).unwrap(), toml);

    // --print writes nothing.
    let printed = ok(&install(
        &home,
        &project,
        &vault,
        &["--client", "claude-code", "--print"],
    ));
    assert!(printed.contains("\"mcpServers\""), "{printed}");
    assert!(!project.join(".mcp.json").exists());
}
