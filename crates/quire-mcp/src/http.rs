//! The streamable HTTP transport: one endpoint, `/mcp`, served with hyper. Everything else is a
//! 404. Only loopback `Host` headers are accepted unless the server is bound elsewhere, and any
//! request carrying a browser `Origin` is refused (MCP clients send none), so a web page cannot
//! reach a local server through DNS rebinding or a cross-site request.

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::Arc;

use bytes::Bytes;
use http_body_util::{BodyExt, Full, combinators::BoxBody};
use hyper::body::Incoming;
use hyper::{Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use tokio::net::TcpListener;
use tower_service::Service as _;

use crate::error::ServeError;
use crate::server::QuireServer;

/// The path of the MCP endpoint.
pub const ENDPOINT: &str = "/mcp";

/// The MCP endpoint as a tower service, to mount at [`ENDPOINT`] (here, and in `quire serve`).
/// Requests with an `Origin` header are refused; `Host` must be loopback, or the bound address
/// `local` when that is not loopback.
pub fn http_service(
    server: QuireServer,
    local: SocketAddr,
) -> StreamableHttpService<QuireServer, LocalSessionManager> {
    let mut config = StreamableHttpServerConfig::default().enforce_origin_validation();
    if !local.ip().is_loopback() {
        config.allowed_hosts.push(local.ip().to_string());
        config.allowed_hosts.push(local.to_string());
    }
    StreamableHttpService::new(
        move || Ok(server.clone()),
        Arc::new(LocalSessionManager::default()),
        config,
    )
}

/// Serves `server` on `addr` until the process is stopped (Ctrl-C ends it cleanly). Prints the
/// endpoint's URL on stderr once listening (port 0 picks a free port).
pub(crate) async fn serve(server: QuireServer, addr: SocketAddr) -> Result<(), ServeError> {
    let listener = TcpListener::bind(addr)
        .await
        .map_err(|source| ServeError::Bind { addr, source })?;
    let local = listener
        .local_addr()
        .map_err(|source| ServeError::Bind { addr, source })?;
    if !local.ip().is_loopback() {
        eprintln!(
            "quire mcp: warning: listening on {local}, which is not a loopback address: anyone who can reach it can read the vault (there is no authentication)"
        );
    }
    let service = http_service(server, local);
    eprintln!("quire mcp: listening on http://{local}{ENDPOINT}");
    loop {
        let (stream, _) = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok(connection) => connection,
                Err(e) => {
                    eprintln!("quire mcp: cannot accept a connection: {e}");
                    continue;
                }
            },
            _ = tokio::signal::ctrl_c() => return Ok(()),
        };
        let service = service.clone();
        tokio::spawn(async move {
            let route = hyper::service::service_fn(move |request: Request<Incoming>| {
                let mut service = service.clone();
                async move {
                    if request.uri().path() == ENDPOINT {
                        service.call(request).await
                    } else {
                        Ok::<_, Infallible>(not_found())
                    }
                }
            });
            if let Err(e) = hyper::server::conn::http1::Builder::new()
                .serve_connection(TokioIo::new(stream), route)
                .await
            {
                eprintln!("quire mcp: connection: {e}");
            }
        });
    }
}

fn not_found() -> Response<BoxBody<Bytes, Infallible>> {
    let mut response = Response::new(
        Full::new(Bytes::from_static(b"not found: the MCP endpoint is /mcp\n")).boxed(),
    );
    *response.status_mut() = StatusCode::NOT_FOUND;
    response
}
