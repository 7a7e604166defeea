//! `quire mcp`, `quire serve` and `quire watch`: the settings of the served vault from the
//! flags, then the face's library call. Wiring faces together (MCP mounted on serve's router)
//! happens here, in the binary.

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use anyhow::{Context, Result};

use crate::Cli;
use crate::common::{index_location, load_embedder, open_options, vault_root};

/// `quire mcp`'s subcommands.
#[derive(clap::Subcommand, Debug)]
pub(crate) enum McpAction {
    /// Write (or with --print, show) an AI client's MCP configuration so that it starts
    /// `quire mcp` on this vault: merged into the client's own file, other servers kept, a backup
    /// of the file made first. A file that does not parse is refused.
    Install {
        /// The client: claude-desktop, claude-code, cursor, windsurf, gemini, vscode, codex.
        #[arg(long)]
        client: quire_mcp::install::Client,
        /// The name the server is listed under.
        #[arg(long, default_value = "quire")]
        name: String,
        /// The client's configuration file (default: where that client reads it).
        #[arg(long, value_name = "FILE")]
        config: Option<PathBuf>,
        /// Print the configuration instead of writing it.
        #[arg(long)]
        print: bool,
        /// Remove the entry this command added (only if it serves this vault).
        #[arg(long, conflicts_with = "print")]
        uninstall: bool,
        /// Let the client propose changes to notes (`quire mcp --allow-proposals`; applying
        /// stays yours).
        #[arg(long)]
        allow_proposals: bool,
    },
}

/// `quire mcp install`: the entry that starts `quire mcp` on this vault, put into (or taken out
/// of) the client's configuration file; the file is backed up and written atomically.
pub(crate) fn mcp_install(cli: &Cli, action: &McpAction, out: &mut String) -> Result<ExitCode> {
    use quire_mcp::install::{Change, Entry, install, snippet, uninstall};
    let McpAction::Install {
        client,
        name,
        config,
        print,
        uninstall: remove,
        allow_proposals,
    } = action;
    let vault = vault_root(cli)?;
    let program = std::env::current_exe().context("cannot tell where this quire binary is")?;
    let program = program.canonicalize().unwrap_or(program);
    let mut args = vec!["--vault".to_string(), vault.display().to_string()];
    if let Some(dir) = &cli.index_dir {
        let dir = std::path::absolute(dir).unwrap_or_else(|_| dir.clone());
        args.extend(["--index-dir".to_string(), dir.display().to_string()]);
    }
    args.push("mcp".into());
    if *allow_proposals {
        args.push("--allow-proposals".into());
    }
    let entry = Entry {
        name: name.clone(),
        command: program.display().to_string(),
        args,
    };
    if *print {
        out.push_str(&snippet(*client, &entry));
        return Ok(ExitCode::SUCCESS);
    }
    let path = match config {
        Some(path) => path.clone(),
        None => {
            let home = std::env::var_os("HOME")
                .or_else(|| std::env::var_os("USERPROFILE"))
                .map(PathBuf::from)
                .context("no home folder (HOME): give the file with --config")?;
            let project = std::env::current_dir().context("no current folder")?;
            let codex_home = std::env::var_os("CODEX_HOME").map(PathBuf::from);
            client.config_path(&home, &project, codex_home.as_deref())
        }
    };
    let existing = match quire_app::vault::atomic::read_regular(&path, 16 * 1024 * 1024) {
        Ok(bytes) => Some(String::from_utf8(bytes).map_err(|_| {
            anyhow::anyhow!("{}: not UTF-8 text; nothing was written", path.display())
        })?),
        Err(quire_app::vault::atomic::ReadError::Io(e))
            if e.kind() == std::io::ErrorKind::NotFound =>
        {
            None
        }
        Err(quire_app::vault::atomic::ReadError::Io(e)) => {
            return Err(anyhow::anyhow!("cannot read {}: {e}", path.display()));
        }
        Err(quire_app::vault::atomic::ReadError::NotAFile { kind }) => {
            return Err(anyhow::anyhow!(
                "{} is a {kind}, not a file",
                path.display()
            ));
        }
        Err(quire_app::vault::atomic::ReadError::TooLarge { bytes }) => {
            return Err(anyhow::anyhow!(
                "{} is too large ({bytes} bytes)",
                path.display()
            ));
        }
    };
    let change = if *remove {
        uninstall(*client, existing.as_deref().unwrap_or_default(), &entry)
    } else {
        install(*client, existing.as_deref(), &entry)
    }
    .map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))?;
    let Change::Write(text) = change else {
        outln!(
            out,
            "{}: {} (nothing written)",
            path.display(),
            if *remove {
                format!("no server `{name}` to remove")
            } else {
                format!("`{name}` already starts quire mcp on {}", vault.display())
            }
        );
        return Ok(ExitCode::SUCCESS);
    };
    if let Some(before) = &existing {
        let backup = keep_backup(&path, before.as_bytes())?;
        outln!(out, "backup: {}", backup.display());
    } else if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent)
            .with_context(|| format!("cannot create {}", parent.display()))?;
    }
    quire_app::vault::atomic::write_atomic(&path, text.as_bytes())
        .with_context(|| format!("cannot write {}", path.display()))?;
    outln!(
        out,
        "{} {}: `{name}` {} ({})",
        if *remove { "removed from" } else { "wrote" },
        path.display(),
        if *remove {
            "no longer starts quire mcp".to_string()
        } else {
            format!("starts quire mcp on {}", vault.display())
        },
        client.name()
    );
    if !*remove {
        outln!(
            out,
            "restart {} to load it; `quire mcp install --client {} --uninstall` takes it out again",
            client.name(),
            client.name()
        );
    }
    Ok(ExitCode::SUCCESS)
}

/// Copies `bytes` (a file's content before a change) to a new `<file>.quire-backup-<time>[-n]`
/// beside it, never over an earlier backup.
fn keep_backup(path: &std::path::Path, bytes: &[u8]) -> Result<PathBuf> {
    let stamp = chrono::Local::now().format("%Y%m%d-%H%M%S");
    for n in 1..=100 {
        let suffix = if n == 1 {
            String::new()
        } else {
            format!("-{n}")
        };
        let backup = PathBuf::from(format!("{}.quire-backup-{stamp}{suffix}", path.display()));
        match quire_app::vault::atomic::write_new(&backup, bytes) {
            Ok(()) => return Ok(backup),
            Err(quire_app::vault::atomic::WriteError::Io { source, .. })
                if source.kind() == std::io::ErrorKind::AlreadyExists => {}
            Err(e) => {
                return Err(anyhow::anyhow!(
                    "cannot keep a backup at {}: {e}",
                    backup.display()
                ));
            }
        }
    }
    Err(anyhow::anyhow!(
        "cannot keep a backup beside {}",
        path.display()
    ))
}

/// `serve`'s flags.
pub(crate) struct ServeFlags<'a> {
    pub host: &'a str,
    pub port: u16,
    pub token: Option<&'a str>,
    pub mcp_token: Option<&'a str>,
    pub no_watch: bool,
    pub debounce_ms: Option<u64>,
}

/// The settings of a vault served by `mcp`, `serve` or `watch`, from the global flags.
fn served_vault(
    cli: &Cli,
    no_watch: bool,
    debounce_ms: Option<u64>,
    name: &'static str,
) -> Result<quire_app::AppConfig> {
    let mut config = quire_app::AppConfig::new(vault_root(cli)?, index_location(cli)?);
    config.open = open_options(cli);
    config.embedder = load_embedder(cli)?;
    config.watch = !no_watch;
    config.debounce = debounce_ms.map(std::time::Duration::from_millis);
    config.name = name;
    config.database = cli.backend.clone();
    Ok(config)
}
/// `quire mcp`: the read-only MCP server (with `allow_proposals`, one more tool that makes
/// proposals). stdout carries the protocol, so everything else (the model note, sync reports)
/// goes to stderr.
pub(crate) fn mcp(
    cli: &Cli,
    http: Option<&str>,
    no_watch: bool,
    debounce_ms: Option<u64>,
    allow_proposals: bool,
) -> Result<ExitCode> {
    let config = served_vault(cli, no_watch, debounce_ms, "quire mcp")?;
    match http {
        Some(spec) => quire_mcp::serve_http(config, listen_addr(spec)?, allow_proposals)?,
        None => quire_mcp::serve_stdio(config, allow_proposals)?,
    }
    Ok(ExitCode::SUCCESS)
}
/// `quire serve`: the HTTP API and page, with MCP mounted at `/mcp`.
pub(crate) fn serve(cli: &Cli, flags: ServeFlags<'_>) -> Result<ExitCode> {
    let live = served_vault(cli, flags.no_watch, flags.debounce_ms, "quire serve")?;
    // The same model `quire ask` uses: the configured provider (QUIRE_LLM_PRESET or
    // QUIRE_LLM_BASE_URL), else in a `local-llm` build the fetched local model, else none
    // (extractive answers).
    let chat: Option<Arc<dyn quire_app::types::ChatModel>> =
        crate::assist::chat_model()?.map(Arc::from);
    let mut config = quire_serve::ServeConfig::new(live);
    config.host = flags.host.to_string();
    config.port = flags.port;
    config.token = flags.token.map(str::to_string);
    config.mcp_token = flags.mcp_token.map(str::to_string);
    config.chat = chat;
    config.mount = Some(Box::new(mount_mcp));
    quire_serve::serve(config)?;
    Ok(ExitCode::SUCCESS)
}

/// `quire watch`: the watcher of `serve`, alone.
pub(crate) fn watch(cli: &Cli, debounce_ms: Option<u64>) -> Result<ExitCode> {
    let live = served_vault(cli, false, debounce_ms, "quire serve")?;
    quire_serve::watch(live)?;
    Ok(ExitCode::SUCCESS)
}

/// MCP's streamable HTTP service at `/mcp` on `quire serve`'s router, over the same live vault.
/// On loopback it keeps its own DNS-rebinding check; beyond loopback serve's guard has checked
/// the token on every request, and `/mcp` answers the same Hosts as the rest of the server.
fn mount_mcp(
    live: Arc<quire_app::Live>,
    local: std::net::SocketAddr,
    loopback_only: bool,
) -> axum::Router {
    let hosts = if loopback_only {
        quire_mcp::AllowedHosts::LoopbackOr(local)
    } else {
        quire_mcp::AllowedHosts::CheckedByCaller
    };
    let service = quire_mcp::http_service(quire_mcp::QuireServer::new(live), hosts);
    axum::Router::new().route_service(quire_mcp::ENDPOINT, service)
}
/// `--http ADDR`: `HOST:PORT`, or a bare port on 127.0.0.1.
fn listen_addr(spec: &str) -> Result<std::net::SocketAddr> {
    use std::net::ToSocketAddrs;
    if let Ok(port) = spec.parse::<u16>() {
        return Ok(([127, 0, 0, 1], port).into());
    }
    spec.to_socket_addrs()
        .ok()
        .and_then(|mut addrs| addrs.next())
        .with_context(|| {
            format!("bad --http address `{spec}`: expected HOST:PORT, e.g. 127.0.0.1:8765")
        })
}
