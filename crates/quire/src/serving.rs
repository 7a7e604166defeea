//! `quire mcp`, `quire serve` and `quire watch`: the settings of the served vault from the
//! flags, then the face's library call. Wiring faces together (MCP mounted on serve's router)
//! happens here, in the binary.

use std::process::ExitCode;
use std::sync::Arc;

use anyhow::{Context, Result};

use crate::Cli;
use crate::common::{index_location, load_embedder, open_options, vault_root};

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
    let chat: Option<Arc<dyn quire_llm::ChatModel>> = crate::assist::chat_model()?.map(Arc::from);
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
