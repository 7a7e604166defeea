//! Setting AI clients up in one command (`quire mcp install`): the entry that starts `quire mcp`
//! on a vault, merged into a client's own MCP configuration file, and taken out again.
//!
//! Pure functions from a file's text to its new text, so the CLI does the file work (a backup,
//! an atomic write) and tests run on real configuration files. Each client keeps its servers
//! under its own key and format:
//!
//! | client | file | servers under |
//! |---|---|---|
//! | `claude-desktop` | `claude_desktop_config.json` (per operating system) | `mcpServers` |
//! | `claude-code` | `.mcp.json` in the current folder (project scope) | `mcpServers` |
//! | `cursor` | `~/.cursor/mcp.json` | `mcpServers` |
//! | `windsurf` | `~/.codeium/windsurf/mcp_config.json` | `mcpServers` |
//! | `gemini` | `~/.gemini/settings.json` | `mcpServers` |
//! | `vscode` | `.vscode/mcp.json` in the current folder | `servers` (with `"type": "stdio"`) |
//! | `codex` | `$CODEX_HOME/config.toml` (`~/.codex`) | `[mcp_servers.NAME]` (TOML) |
//!
//! Nothing else in a file changes meaning: other servers and settings stay (a JSON file's keys
//! may come back in another order; a TOML file keeps its layout and comments, `toml_edit`). A
//! file that does not parse is refused, never overwritten. An entry of the same name that is not
//! this vault's `quire mcp` is refused too (choose another `--name`); uninstalling removes the
//! entry only when it is this vault's.

use std::path::{Path, PathBuf};
use std::str::FromStr;

use serde_json::{Map, Value, json};

/// The AI clients whose configuration `quire mcp install` writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Client {
    /// Claude Desktop.
    ClaudeDesktop,
    /// Claude Code, project scope (`.mcp.json`).
    ClaudeCode,
    /// Cursor (user scope).
    Cursor,
    /// Windsurf.
    Windsurf,
    /// Gemini CLI (user settings).
    Gemini,
    /// Visual Studio Code, workspace scope (`.vscode/mcp.json`).
    VsCode,
    /// OpenAI Codex CLI (`config.toml`).
    Codex,
}

/// Every client, in the order `--help` lists them.
pub const CLIENTS: [Client; 7] = [
    Client::ClaudeDesktop,
    Client::ClaudeCode,
    Client::Cursor,
    Client::Windsurf,
    Client::Gemini,
    Client::VsCode,
    Client::Codex,
];

impl Client {
    /// The name given on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Client::ClaudeDesktop => "claude-desktop",
            Client::ClaudeCode => "claude-code",
            Client::Cursor => "cursor",
            Client::Windsurf => "windsurf",
            Client::Gemini => "gemini",
            Client::VsCode => "vscode",
            Client::Codex => "codex",
        }
    }

    /// The file the client reads its servers from: under `home` (the user's home folder), or
    /// under `project` (the current folder) for project-scoped clients. `codex_home` is
    /// `$CODEX_HOME` when set.
    pub fn config_path(self, home: &Path, project: &Path, codex_home: Option<&Path>) -> PathBuf {
        match self {
            Client::ClaudeDesktop => {
                if cfg!(target_os = "macos") {
                    home.join("Library/Application Support/Claude/claude_desktop_config.json")
                } else if cfg!(windows) {
                    home.join("AppData/Roaming/Claude/claude_desktop_config.json")
                } else {
                    home.join(".config/Claude/claude_desktop_config.json")
                }
            }
            Client::ClaudeCode => project.join(".mcp.json"),
            Client::Cursor => home.join(".cursor/mcp.json"),
            Client::Windsurf => home.join(".codeium/windsurf/mcp_config.json"),
            Client::Gemini => home.join(".gemini/settings.json"),
            Client::VsCode => project.join(".vscode/mcp.json"),
            Client::Codex => codex_home
                .map_or_else(|| home.join(".codex"), Path::to_path_buf)
                .join("config.toml"),
        }
    }
}

impl FromStr for Client {
    type Err = String;

    fn from_str(s: &str) -> Result<Client, String> {
        CLIENTS
            .into_iter()
            .find(|c| c.name().eq_ignore_ascii_case(s.trim()))
            .ok_or_else(|| {
                let names: Vec<&str> = CLIENTS.iter().map(|c| c.name()).collect();
                format!("unknown client `{s}`: one of {}", names.join(", "))
            })
    }
}

/// The server entry: the name it is listed under, and how the client starts it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    /// The key in the client's list of servers (`quire` unless `--name`).
    pub name: String,
    /// The `quire` binary, as an absolute path.
    pub command: String,
    /// Its arguments: `--vault VAULT … mcp …`.
    pub args: Vec<String>,
}

impl Entry {
    /// Whether `command` and `args` are this entry's: the same vault served by `quire mcp`.
    fn is_this(&self, command: Option<&str>, args: &[String]) -> bool {
        command == Some(self.command.as_str()) && args == self.args
    }

    /// Whether `args` serve this entry's vault (the binary may have moved since).
    fn serves_this_vault(&self, args: &[String]) -> bool {
        vault_of(args).is_some() && vault_of(args) == vault_of(&self.args)
    }
}

/// The `--vault` argument of a `quire … mcp` command line.
fn vault_of(args: &[String]) -> Option<&str> {
    let at = args.iter().position(|a| a == "--vault")?;
    args.get(at + 1).map(String::as_str)
}

/// What an install or uninstall did to the file's text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Change {
    /// The entry was added (or brought up to date): write this text.
    Write(String),
    /// The file already says exactly this (install) or has no such entry (uninstall): nothing
    /// to write.
    Unchanged,
}

/// Why a configuration file was left alone.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum InstallError {
    /// The file is not valid JSON or TOML, or not the shape the client reads.
    #[error("cannot read it as {format}: {reason}; nothing was written")]
    Unparsable {
        /// `JSON` or `TOML`.
        format: &'static str,
        /// The parser's reason.
        reason: String,
    },
    /// Another server already has the name.
    #[error(
        "it already has a server named `{name}` that is not this vault's `quire mcp`; nothing was written (choose another name with --name)"
    )]
    Taken {
        /// The name.
        name: String,
    },
}

/// The file's text with the entry added, for `client`; `existing` is the file's text (`None`
/// or blank: no file yet).
pub fn install(
    client: Client,
    existing: Option<&str>,
    entry: &Entry,
) -> Result<Change, InstallError> {
    let existing = existing.filter(|t| !t.trim().is_empty());
    match client {
        Client::Codex => install_toml(existing, entry),
        _ => install_json(client, existing, entry),
    }
}

/// The file's text with the entry removed, when it is this vault's (`Unchanged` when there is
/// none; refused when an entry of that name serves something else).
pub fn uninstall(client: Client, existing: &str, entry: &Entry) -> Result<Change, InstallError> {
    if existing.trim().is_empty() {
        return Ok(Change::Unchanged);
    }
    match client {
        Client::Codex => uninstall_toml(existing, entry),
        _ => uninstall_json(client, existing, entry),
    }
}

/// What `--print` shows: a file holding only the entry, in the client's format.
pub fn snippet(client: Client, entry: &Entry) -> String {
    match install(client, None, entry) {
        Ok(Change::Write(text)) => text,
        // A fresh file always gets the entry.
        _ => String::new(),
    }
}

/// The key a JSON client keeps its servers under.
fn servers_key(client: Client) -> &'static str {
    match client {
        Client::VsCode => "servers",
        _ => "mcpServers",
    }
}

fn json_entry(client: Client, entry: &Entry) -> Value {
    let mut value = json!({"command": entry.command, "args": entry.args});
    if client == Client::VsCode {
        value["type"] = json!("stdio");
    }
    value
}

fn parse_json(text: &str) -> Result<Map<String, Value>, InstallError> {
    let unparsable = |reason: String| InstallError::Unparsable {
        format: "JSON",
        reason,
    };
    match serde_json::from_str::<Value>(text) {
        Ok(Value::Object(map)) => Ok(map),
        Ok(_) => Err(unparsable("it is not a JSON object".into())),
        Err(e) => Err(unparsable(e.to_string())),
    }
}

fn json_text(root: &Map<String, Value>) -> String {
    let mut text = serde_json::to_string_pretty(root).unwrap_or_default();
    text.push('\n');
    text
}

/// The command and arguments of a JSON server entry.
fn json_command(server: &Value) -> (Option<&str>, Vec<String>) {
    let args = server["args"]
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(|v| v.as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default();
    (server["command"].as_str(), args)
}

fn install_json(
    client: Client,
    existing: Option<&str>,
    entry: &Entry,
) -> Result<Change, InstallError> {
    let mut root = match existing {
        Some(text) => parse_json(text)?,
        None => Map::new(),
    };
    let key = servers_key(client);
    let servers = root.entry(key).or_insert_with(|| Value::Object(Map::new()));
    let Some(servers) = servers.as_object_mut() else {
        return Err(InstallError::Unparsable {
            format: "JSON",
            reason: format!("`{key}` is not an object"),
        });
    };
    if let Some(server) = servers.get(&entry.name) {
        let (command, args) = json_command(server);
        if entry.is_this(command, &args) && *server == json_entry(client, entry) {
            return Ok(Change::Unchanged);
        }
        if !entry.serves_this_vault(&args) {
            return Err(InstallError::Taken {
                name: entry.name.clone(),
            });
        }
    }
    servers.insert(entry.name.clone(), json_entry(client, entry));
    Ok(Change::Write(json_text(&root)))
}

fn uninstall_json(client: Client, existing: &str, entry: &Entry) -> Result<Change, InstallError> {
    let mut root = parse_json(existing)?;
    let Some(servers) = root
        .get_mut(servers_key(client))
        .and_then(Value::as_object_mut)
    else {
        return Ok(Change::Unchanged);
    };
    let Some(server) = servers.get(&entry.name) else {
        return Ok(Change::Unchanged);
    };
    if !entry.serves_this_vault(&json_command(server).1) {
        return Err(InstallError::Taken {
            name: entry.name.clone(),
        });
    }
    servers.remove(&entry.name);
    Ok(Change::Write(json_text(&root)))
}

fn parse_toml(text: &str) -> Result<toml_edit::DocumentMut, InstallError> {
    text.parse::<toml_edit::DocumentMut>()
        .map_err(|e| InstallError::Unparsable {
            format: "TOML",
            reason: e.to_string().trim().to_string(),
        })
}

/// The command and arguments of a `[mcp_servers.NAME]` table.
fn toml_command(server: &toml_edit::Item) -> (Option<&str>, Vec<String>) {
    let args = server
        .get("args")
        .and_then(toml_edit::Item::as_array)
        .map(|a| {
            a.iter()
                .filter_map(|v| v.as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default();
    (
        server.get("command").and_then(toml_edit::Item::as_str),
        args,
    )
}

fn install_toml(existing: Option<&str>, entry: &Entry) -> Result<Change, InstallError> {
    let mut doc = parse_toml(existing.unwrap_or_default())?;
    let servers = doc.entry("mcp_servers").or_insert_with(|| {
        let mut table = toml_edit::Table::new();
        table.set_implicit(true);
        toml_edit::Item::Table(table)
    });
    let Some(servers) = servers.as_table_like_mut() else {
        return Err(InstallError::Unparsable {
            format: "TOML",
            reason: "`mcp_servers` is not a table".into(),
        });
    };
    if let Some(server) = servers.get(&entry.name) {
        let (command, args) = toml_command(server);
        if entry.is_this(command, &args) {
            return Ok(Change::Unchanged);
        }
        if !entry.serves_this_vault(&args) {
            return Err(InstallError::Taken {
                name: entry.name.clone(),
            });
        }
    }
    let mut table = toml_edit::Table::new();
    table.insert("command", toml_edit::value(entry.command.as_str()));
    let args: toml_edit::Array = entry.args.iter().map(String::as_str).collect();
    table.insert("args", toml_edit::value(args));
    servers.insert(&entry.name, toml_edit::Item::Table(table));
    Ok(Change::Write(doc.to_string()))
}

fn uninstall_toml(existing: &str, entry: &Entry) -> Result<Change, InstallError> {
    let mut doc = parse_toml(existing)?;
    let Some(servers) = doc
        .get_mut("mcp_servers")
        .and_then(toml_edit::Item::as_table_like_mut)
    else {
        return Ok(Change::Unchanged);
    };
    let Some(server) = servers.get(&entry.name) else {
        return Ok(Change::Unchanged);
    };
    if !entry.serves_this_vault(&toml_command(server).1) {
        return Err(InstallError::Taken {
            name: entry.name.clone(),
        });
    }
    servers.remove(&entry.name);
    if servers.is_empty() {
        doc.remove("mcp_servers");
    }
    Ok(Change::Write(doc.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(vault: &str) -> Entry {
        Entry {
            name: "quire".into(),
            command: "/usr/local/bin/quire".into(),
            args: vec!["--vault".into(), vault.into(), "mcp".into()],
        }
    }

    fn written(change: Result<Change, InstallError>) -> String {
        match change {
            Ok(Change::Write(text)) => text,
            other => panic!("expected a write, got {other:?}"),
        }
    }

    /// A Claude Desktop file as people have them: another server, preferences.
    const CLAUDE: &str = r#"{
  "mcpServers": {
    "filesystem": {
      "command": "npx",
      "args": ["-y", "@modelcontextprotocol/server-filesystem", "/Users/me/Desktop"]
    }
  },
  "globalShortcut": "Ctrl+Space"
}"#;

    #[test]
    fn a_json_client_keeps_its_other_servers_and_settings() {
        let e = entry("/home/me/vault");
        let text = written(install(Client::ClaudeDesktop, Some(CLAUDE), &e));
        let v: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(v["globalShortcut"], "Ctrl+Space");
        assert_eq!(v["mcpServers"]["filesystem"]["command"], "npx");
        assert_eq!(v["mcpServers"]["quire"]["command"], "/usr/local/bin/quire");
        assert_eq!(v["mcpServers"]["quire"]["args"][1], "/home/me/vault");
        // Again: nothing to write. Then out again: the file means what it meant before.
        assert_eq!(
            install(Client::ClaudeDesktop, Some(&text), &e),
            Ok(Change::Unchanged)
        );
        let back = written(uninstall(Client::ClaudeDesktop, &text, &e));
        assert_eq!(
            serde_json::from_str::<Value>(&back).unwrap(),
            serde_json::from_str::<Value>(CLAUDE).unwrap()
        );
        assert_eq!(
            uninstall(Client::ClaudeDesktop, &back, &e),
            Ok(Change::Unchanged)
        );
    }

    #[test]
    fn vscode_lists_servers_with_their_type_and_a_fresh_file_is_made() {
        let text = written(install(Client::VsCode, None, &entry("/v")));
        let v: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(v["servers"]["quire"]["type"], "stdio");
        assert!(v.get("mcpServers").is_none());
        assert_eq!(snippet(Client::VsCode, &entry("/v")), text);
    }

    #[test]
    fn a_file_that_does_not_parse_or_a_name_taken_by_another_server_is_refused() {
        let e = entry("/v");
        for bad in ["{ \"mcpServers\": ", "[1, 2]", "{\"mcpServers\": 3}"] {
            assert!(
                matches!(
                    install(Client::Cursor, Some(bad), &e),
                    Err(InstallError::Unparsable { .. })
                ),
                "{bad}"
            );
        }
        let taken = r#"{"mcpServers": {"quire": {"command": "other", "args": []}}}"#;
        assert_eq!(
            install(Client::Cursor, Some(taken), &e),
            Err(InstallError::Taken {
                name: "quire".into()
            })
        );
        assert!(uninstall(Client::Cursor, taken, &e).is_err());
        // Another vault's quire under the same name is not removed by this vault's uninstall.
        let other = written(install(Client::Cursor, None, &entry("/other")));
        assert!(uninstall(Client::Cursor, &other, &e).is_err());
        // The same vault with the binary moved is brought up to date.
        let mut moved = e.clone();
        moved.command = "/opt/quire".into();
        let installed = written(install(Client::Cursor, None, &e));
        let updated = written(install(Client::Cursor, Some(&installed), &moved));
        assert!(updated.contains("/opt/quire"));
    }

    /// A Codex file with a comment, a model setting and another server.
    const CODEX: &str = r#"# my settings
model = "o4-mini"

[mcp_servers.docs]
command = "docs-server"
args = ["--port", "0"]
"#;

    #[test]
    fn codex_toml_keeps_its_layout_and_comments() {
        let e = entry("/home/me/vault");
        let text = written(install(Client::Codex, Some(CODEX), &e));
        assert!(text.starts_with(CODEX), "{text}");
        assert!(text.contains("[mcp_servers.quire]"), "{text}");
        assert!(
            text.contains(r#"args = ["--vault", "/home/me/vault", "mcp"]"#),
            "{text}"
        );
        assert_eq!(
            install(Client::Codex, Some(&text), &e),
            Ok(Change::Unchanged)
        );
        assert_eq!(written(uninstall(Client::Codex, &text, &e)), CODEX);
        let fresh = written(install(Client::Codex, None, &e));
        assert!(fresh.starts_with("[mcp_servers.quire]"), "{fresh}");
        assert_eq!(written(uninstall(Client::Codex, &fresh, &e)), "");
        assert!(matches!(
            install(Client::Codex, Some("model = "), &e),
            Err(InstallError::Unparsable { .. })
        ));
    }

    #[test]
    fn clients_are_named_as_on_the_command_line_and_have_their_files() {
        for client in CLIENTS {
            assert_eq!(client.name().parse::<Client>(), Ok(client));
            let path = client.config_path(Path::new("/h"), Path::new("/p"), None);
            assert!(path.starts_with("/h") || path.starts_with("/p"), "{path:?}");
        }
        assert!("notepad".parse::<Client>().is_err());
        assert_eq!(
            Client::Codex.config_path(Path::new("/h"), Path::new("/p"), Some(Path::new("/c"))),
            PathBuf::from("/c/config.toml")
        );
    }
}
