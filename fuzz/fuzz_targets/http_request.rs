//! Fuzzes `quire serve`'s HTTP handling from raw bytes: the input is written to an in-memory
//! connection served by hyper's HTTP/1 parser and the real router (guard, routes, query and path
//! parsing, JSON bodies, the `/mcp` service), over a copy of the sample vault. Every input must
//! get a well-formed response or a closed connection, never a panic (libFuzzer aborts on one,
//! also inside a server task) and never a 500.
#![no_main]

mod fixture;

use std::sync::OnceLock;
use std::time::Duration;

use libfuzzer_sys::fuzz_target;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

struct State {
    _fixture: fixture::Fixture,
    runtime: tokio::runtime::Runtime,
    router: axum::Router,
    _live: quire_app::LiveVault,
}

fn state() -> &'static State {
    static STATE: OnceLock<State> = OnceLock::new();
    STATE.get_or_init(|| {
        let fixture = fixture::fixture();
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .expect("runtime");
        let live = quire_app::AppConfig::new(fixture.vault.clone(), fixture.index.clone());
        let mut config = quire_serve::ServeConfig::new(live);
        // `/mcp` mounted as the binary mounts it.
        config.mount = Some(Box::new(|live, local, _| {
            let hosts = quire_mcp::AllowedHosts::LoopbackOr(local);
            let service = quire_mcp::http_service(quire_mcp::QuireServer::new(live), hosts);
            axum::Router::new().route_service(quire_mcp::ENDPOINT, service)
        }));
        let (router, live) = runtime
            .block_on(async { quire_serve::loopback_app(config) })
            .expect("build the app");
        let _ = live.live.vault(Duration::from_secs(60));
        State {
            _fixture: fixture,
            runtime,
            router,
            _live: live,
        }
    })
}

fuzz_target!(|data: &[u8]| {
    // The event stream never ends by design: keep the fuzzer off it.
    if data.windows(7).any(|w| w.eq_ignore_ascii_case(b"/events")) {
        return;
    }
    let state = state();
    state.runtime.block_on(async {
        let (mut client, server) = tokio::io::duplex(1 << 20);
        let service = hyper_util::service::TowerToHyperService::new(state.router.clone());
        let connection = hyper::server::conn::http1::Builder::new()
            .serve_connection(hyper_util::rt::TokioIo::new(server), service);
        // Both sides run in this future (no spawned task), so whatever they hold is dropped
        // before the input is done: a spawned task aborted late looked like a leak.
        let client_side = async move {
            let _ = client.write_all(data).await;
            let _ = client.shutdown().await;
            let mut response = Vec::new();
            let _ = client.read_to_end(&mut response).await;
            response
        };
        let both = async {
            let (_, response) = tokio::join!(connection, client_side);
            response
        };
        // An answer still streaming (ask, draft) after 10 s is no failure of parsing.
        let Ok(response) = tokio::time::timeout(Duration::from_secs(10), both).await else {
            return;
        };
        if !response.is_empty() {
            assert!(response.starts_with(b"HTTP/1."), "not an HTTP response");
            let status = &response[9..12.min(response.len())];
            assert_ne!(
                status,
                b"500",
                "{}",
                String::from_utf8_lossy(&response[..response.len().min(2000)])
            );
        }
    });
});
