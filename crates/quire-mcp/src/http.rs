//! The streamable HTTP transport: one endpoint, `/mcp`, served with hyper. Everything else is a
//! 404. Only loopback `Host` headers are accepted unless the server is bound elsewhere, and any
//! request carrying a browser `Origin` is refused (MCP clients send none), so a web page cannot
//! reach a local server through DNS rebinding or a cross-site request. A request body over
//! [`MAX_BODY_BYTES`] is refused with 413 while it streams in, before it is held in memory.

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
use quire_app::limits::MAX_BODY_BYTES;

/// The path of the MCP endpoint.
pub const ENDPOINT: &str = "/mcp";

/// Which `Host` headers the MCP endpoint answers.
#[derive(Debug, Clone, Copy)]
pub enum AllowedHosts {
    /// Loopback names only, plus the address the server is bound to when that is not loopback
    /// (`quire mcp --http`): a page on another site that rebinds its DNS name to 127.0.0.1
    /// is refused.
    LoopbackOr(SocketAddr),
    /// Any host: whoever mounts the endpoint guards it. `quire serve` beyond loopback, where
    /// every request must carry the token, so a rebound name gains nothing.
    CheckedByCaller,
}

/// The MCP endpoint as a tower service, to mount at [`ENDPOINT`] (here, and in `quire serve`).
/// Requests with an `Origin` header are refused, bodies over [`MAX_BODY_BYTES`] too (413), and
/// `Host` must be one of `hosts`. The body is read here first, within the limit: one that
/// cannot be read whole (a client that sends less than its `Content-Length` and closes) is a
/// 400, never reaching rmcp (which would answer 500).
pub fn http_service(server: QuireServer, hosts: AllowedHosts) -> McpService {
    let mut config = StreamableHttpServerConfig::default()
        .enforce_origin_validation()
        .with_max_request_body_bytes(MAX_BODY_BYTES);
    match hosts {
        AllowedHosts::LoopbackOr(local) if !local.ip().is_loopback() => {
            config.allowed_hosts.push(local.ip().to_string());
            config.allowed_hosts.push(local.to_string());
        }
        AllowedHosts::LoopbackOr(_) => {}
        AllowedHosts::CheckedByCaller => config = config.disable_allowed_hosts(),
    }
    McpService {
        inner: StreamableHttpService::new(
            move || Ok(server.clone()),
            Arc::new(LocalSessionManager::default()),
            config,
        ),
    }
}

/// rmcp's streamable HTTP service behind a body reader with the size limit (see
/// [`http_service`]).
#[derive(Clone)]
pub struct McpService {
    inner: StreamableHttpService<QuireServer, LocalSessionManager>,
}

type HttpResponse = Response<BoxBody<Bytes, Infallible>>;

impl<B> tower_service::Service<Request<B>> for McpService
where
    B: hyper::body::Body<Data = Bytes> + Send + 'static,
    B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    type Response = HttpResponse;
    type Error = Infallible;
    type Future = std::pin::Pin<
        Box<dyn std::future::Future<Output = Result<HttpResponse, Infallible>> + Send>,
    >;

    fn poll_ready(
        &mut self,
        _: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Result<(), Infallible>> {
        std::task::Poll::Ready(Ok(()))
    }

    fn call(&mut self, request: Request<B>) -> Self::Future {
        let mut inner = self.inner.clone();
        Box::pin(async move {
            let (parts, body) = request.into_parts();
            let read = http_body_util::Limited::new(body, MAX_BODY_BYTES)
                .collect()
                .await;
            let bytes = match read {
                Ok(collected) => collected.to_bytes(),
                Err(e) if e.is::<http_body_util::LengthLimitError>() => {
                    return Ok(plain(
                        StatusCode::PAYLOAD_TOO_LARGE,
                        format!("the request body exceeds {MAX_BODY_BYTES} bytes\n"),
                    ));
                }
                Err(e) => {
                    return Ok(plain(
                        StatusCode::BAD_REQUEST,
                        format!("the request body could not be read whole: {e}\n"),
                    ));
                }
            };
            inner
                .call(Request::from_parts(parts, Full::new(bytes)))
                .await
        })
    }
}

fn plain(status: StatusCode, text: String) -> HttpResponse {
    let mut response = Response::new(Full::new(Bytes::from(text)).boxed());
    *response.status_mut() = status;
    response
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
    let service = http_service(server, AllowedHosts::LoopbackOr(local));
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

fn not_found() -> HttpResponse {
    plain(
        StatusCode::NOT_FOUND,
        "not found: the MCP endpoint is /mcp\n".to_string(),
    )
}
