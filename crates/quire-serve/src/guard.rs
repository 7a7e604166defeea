//! The checks every request passes before a handler sees it, in this order:
//!
//! 1. **Host.** While the server listens on loopback only, the `Host` header must name a loopback
//!    host (`127.0.0.1`, `localhost`, `[::1]`): a page on another site that rebinds its DNS name to
//!    127.0.0.1 gets 403 `forbidden_host`.
//! 2. **Origin.** A request that carries `Origin` (browsers add it to cross-origin requests, and
//!    to every POST) must come from the page itself (`http://<Host>`) or from the Obsidian app
//!    (`app://obsidian.md`); anything else gets 403 `forbidden_origin`. Allowed origins get CORS
//!    headers; a preflight (`OPTIONS`) from them is answered here, without a token, as browsers
//!    send none.
//! 3. **Token.** A second token (`--mcp-token`) opens `/mcp` only and is refused (403
//!    `token_scope`) everywhere else, so an AI client given it can propose but never apply.
//!    When a token is configured (always, when the server listens beyond loopback),
//!    every request must present it: `Authorization: Bearer <token>`, the `quire_token` cookie
//!    the page receives when opened as `/?token=<token>`, or a `token` query parameter (for
//!    `EventSource`, which cannot set headers). The scheme's name is matched ignoring case
//!    (`bearer` too, RFC 7235 section 2.1). Otherwise 401 `unauthorized`. Tokens are compared in
//!    constant time (`subtle`).
//!
//! 4. **Query parameters.** A GET (or HEAD) route described in the OpenAPI document takes the query
//!    parameters the document lists (and `token`); any other name gets 400 `bad_request` naming
//!    it and the ones the route takes, so `?limit=5` for `k` is not silently ignored.
//!
//! Every response also carries headers that keep the page and the API from being framed,
//! sniffed or leaking the URL: `Content-Security-Policy`, `X-Content-Type-Options`,
//! `Referrer-Policy`, `X-Frame-Options`.

use std::sync::Arc;

use axum::extract::{Request, State};
use axum::http::header::{self, HeaderMap, HeaderValue};
use axum::http::{Method, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use subtle::ConstantTimeEq;

use crate::AppState;
use crate::error::ApiError;

/// The Obsidian desktop app's origin: the plugin calls the API from there.
pub(crate) const OBSIDIAN_ORIGIN: &str = "app://obsidian.md";
/// The cookie that carries the token for the page's own requests.
pub(crate) const TOKEN_COOKIE: &str = "quire_token";

/// The page loads its script and style from the server itself and nothing from anywhere else.
const CONTENT_SECURITY_POLICY: &str = "default-src 'none'; script-src 'self'; style-src 'self'; \
     img-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'none'; \
     frame-ancestors 'none'";

/// Whether `host` (a `Host` header value, with or without a port) names this machine's loopback.
pub(crate) fn is_loopback_host(host: &str) -> bool {
    let name = if let Some(rest) = host.strip_prefix('[') {
        // [::1]:7878
        rest.split(']').next().unwrap_or_default()
    } else {
        host.rsplit_once(':').map_or(host, |(name, _)| name)
    };
    let name = name.to_ascii_lowercase();
    name == "localhost"
        || name
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback())
}

/// Equal strings, compared in constant time (a timing side channel would reveal the token's
/// prefix). Only the length may show, which the token's rules make no secret of.
fn same_secret(given: &str, expected: &str) -> bool {
    bool::from(given.as_bytes().ct_eq(expected.as_bytes()))
}

/// The credentials of an `Authorization: Bearer <token>` header; the scheme's name is
/// case-insensitive.
fn bearer_token(value: &str) -> Option<&str> {
    let (scheme, token) = value.trim_start().split_once(' ')?;
    scheme
        .eq_ignore_ascii_case("bearer")
        .then_some(token.trim())
}

/// The token a request presents, from the header, the cookie or the query string.
fn presented_tokens(headers: &HeaderMap, query: Option<&str>) -> Vec<String> {
    let mut tokens = Vec::new();
    if let Some(bearer) = headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(bearer_token)
    {
        tokens.push(bearer.to_string());
    }
    for cookies in headers.get_all(header::COOKIE) {
        let Ok(cookies) = cookies.to_str() else {
            continue;
        };
        for pair in cookies.split(';') {
            if let Some((name, value)) = pair.trim().split_once('=')
                && name == TOKEN_COOKIE
            {
                tokens.push(value.to_string());
            }
        }
    }
    if let Some(query) = query {
        for pair in query.split('&') {
            if let Some(value) = pair.strip_prefix("token=") {
                tokens.push(percent_decoded(value));
            }
        }
    }
    tokens
}

/// `%XX` escapes and `+` decoded (a query-string value); invalid escapes are kept as written.
fn percent_decoded(value: &str) -> String {
    let bytes = value.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'+' => out.push(b' '),
            b'%' if i + 2 < bytes.len() => {
                let hex = |b: u8| (b as char).to_digit(16);
                match (hex(bytes[i + 1]), hex(bytes[i + 2])) {
                    (Some(high), Some(low)) => {
                        out.push((high * 16 + low) as u8);
                        i += 2;
                    }
                    _ => out.push(b'%'),
                }
            }
            other => out.push(other),
        }
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Whether `origin` may call the API: the Obsidian app, or the page served under `host`.
fn allowed_origin(origin: &str, host: Option<&str>) -> bool {
    origin == OBSIDIAN_ORIGIN
        || host.is_some_and(|host| {
            origin
                .strip_prefix("http://")
                .is_some_and(|rest| rest.eq_ignore_ascii_case(host))
        })
}

fn cors_headers(headers: &mut HeaderMap, origin: &HeaderValue) {
    headers.insert(header::ACCESS_CONTROL_ALLOW_ORIGIN, origin.clone());
    headers.insert(header::VARY, HeaderValue::from_static("Origin"));
    headers.insert(
        header::ACCESS_CONTROL_ALLOW_METHODS,
        HeaderValue::from_static("GET, POST, OPTIONS"),
    );
    headers.insert(
        header::ACCESS_CONTROL_ALLOW_HEADERS,
        HeaderValue::from_static("authorization, content-type"),
    );
    headers.insert(
        header::ACCESS_CONTROL_MAX_AGE,
        HeaderValue::from_static("600"),
    );
}

fn security_headers(headers: &mut HeaderMap) {
    headers.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(CONTENT_SECURITY_POLICY),
    );
    headers.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    headers.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("no-referrer"),
    );
    headers.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
}

/// The middleware: host, origin, token, then the handler; CORS and security headers on the way
/// out.
pub(crate) async fn guard(
    State(app): State<Arc<AppState>>,
    request: Request,
    next: Next,
) -> Response {
    let headers = request.headers();
    let host = headers
        .get(header::HOST)
        .and_then(|v| v.to_str().ok())
        .map(str::to_string);
    if app.loopback_only && !host.as_deref().is_some_and(is_loopback_host) {
        return finish(
            ApiError::new(
                StatusCode::FORBIDDEN,
                "forbidden_host",
                "this server answers only requests addressed to a loopback host (127.0.0.1, localhost, [::1])",
            )
            .into_response(),
            None,
        );
    }
    let origin = headers.get(header::ORIGIN).cloned();
    if let Some(origin) = &origin {
        let allowed = origin
            .to_str()
            .is_ok_and(|o| allowed_origin(o, host.as_deref()));
        if !allowed {
            return finish(
                ApiError::new(
                    StatusCode::FORBIDDEN,
                    "forbidden_origin",
                    "requests from this origin are refused: only the page itself and the Obsidian app (app://obsidian.md) may call this server",
                )
                .into_response(),
                None,
            );
        }
        if request.method() == Method::OPTIONS {
            return finish(StatusCode::NO_CONTENT.into_response(), Some(origin));
        }
    }
    let presented = presented_tokens(headers, request.uri().query());
    let holds = |secret: &Option<String>| {
        secret
            .as_ref()
            .is_some_and(|s| presented.iter().any(|t| same_secret(t, s)))
    };
    let path = request.uri().path();
    let to_mcp = path == "/mcp" || path.starts_with("/mcp/");
    // The MCP token opens /mcp and nothing else: an AI client holding it can propose a change
    // through its tools but never apply one.
    if !to_mcp && holds(&app.mcp_token) && !holds(&app.token) {
        return finish(
            ApiError::new(
                StatusCode::FORBIDDEN,
                "token_scope",
                "this token opens /mcp only: applying proposals and the rest of the API take the server's own token",
            )
            .into_response(),
            origin.as_ref(),
        );
    }
    if app.token.is_some() && !holds(&app.token) && !(to_mcp && holds(&app.mcp_token)) {
        let message = if presented.is_empty() {
            "a token is required: send `Authorization: Bearer <token>`, or open the page as /?token=<token>"
        } else {
            "the token is wrong"
        };
        return finish(
            ApiError::new(StatusCode::UNAUTHORIZED, "unauthorized", message).into_response(),
            origin.as_ref(),
        );
    }
    let response = next.run(request).await;
    finish(response, origin.as_ref())
}

fn finish(mut response: Response, origin: Option<&HeaderValue>) -> Response {
    let headers = response.headers_mut();
    if let Some(origin) = origin {
        cors_headers(headers, origin);
    }
    security_headers(headers);
    response
}

/// Refuses a query parameter that the route's GET operation does not document (see the module
/// doc, item 4). Runs after routing, so it knows the route.
pub(crate) async fn known_query(request: Request, next: Next) -> Response {
    if !matches!(*request.method(), Method::GET | Method::HEAD) {
        return next.run(request).await;
    }
    let Some(route) = request
        .extensions()
        .get::<axum::extract::MatchedPath>()
        .map(|m| m.as_str().replace("{*", "{"))
    else {
        return next.run(request).await;
    };
    let Some(known) = crate::openapi::query_parameters(&route) else {
        return next.run(request).await;
    };
    let names = axum::extract::Query::<Vec<(String, String)>>::try_from_uri(request.uri())
        .map(|q| q.0)
        .unwrap_or_default();
    // The token may ride on any route (`EventSource` cannot set headers).
    let unknown = names
        .iter()
        .map(|(name, _)| name)
        .find(|name| *name != "token" && !known.iter().any(|k| k == *name));
    match unknown {
        Some(name) => {
            let name: String = name.chars().take(40).collect();
            let takes = if known.is_empty() {
                "no query parameters".to_string()
            } else {
                format!("only {}", known.join(", "))
            };
            ApiError::bad_request(format!(
                "unknown query parameter `{name}`: {route} takes {takes} (see /api/openapi.json)"
            ))
            .into_response()
        }
        None => next.run(request).await,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loopback_hosts_are_recognised_with_or_without_a_port() {
        for host in [
            "127.0.0.1",
            "127.0.0.1:7878",
            "localhost:1",
            "LOCALHOST",
            "[::1]:80",
            "127.1.2.3:9",
        ] {
            assert!(is_loopback_host(host), "{host}");
        }
        for host in [
            "example.com",
            "evil.localhost.example:80",
            "10.0.0.1:7878",
            "[::2]:1",
            "",
        ] {
            assert!(!is_loopback_host(host), "{host}");
        }
    }

    #[test]
    fn secrets_compare_equal_only_when_equal() {
        assert!(same_secret("abcdefgh", "abcdefgh"));
        assert!(!same_secret("abcdefg", "abcdefgh"));
        assert!(!same_secret("abcdefghi", "abcdefgh"));
        assert!(!same_secret("", "abcdefgh"));
        assert!(!same_secret("abcdefgX", "abcdefgh"));
    }

    #[test]
    fn tokens_come_from_the_header_the_cookie_or_the_query() {
        let mut headers = HeaderMap::new();
        headers.insert(
            header::AUTHORIZATION,
            HeaderValue::from_static("Bearer one"),
        );
        headers.insert(
            header::COOKIE,
            HeaderValue::from_static("a=b; quire_token=two"),
        );
        let tokens = presented_tokens(&headers, Some("q=x&token=th%72ee"));
        assert_eq!(tokens, ["one", "two", "three"]);
        assert_eq!(percent_decoded("a%2"), "a%2");
        for header in ["bearer one", "BEARER one", "Bearer   one ", "bEaReR one"] {
            assert_eq!(bearer_token(header), Some("one"), "{header}");
        }
        assert_eq!(bearer_token("Basic b25lOnR3bw=="), None);
        assert_eq!(bearer_token("Bearerone"), None);
        assert_eq!(percent_decoded("%zz"), "%zz");
    }

    #[test]
    fn only_the_page_and_obsidian_are_allowed_origins() {
        assert!(allowed_origin("app://obsidian.md", None));
        assert!(allowed_origin(
            "http://127.0.0.1:7878",
            Some("127.0.0.1:7878")
        ));
        assert!(!allowed_origin(
            "http://127.0.0.1:7879",
            Some("127.0.0.1:7878")
        ));
        assert!(!allowed_origin(
            "https://evil.example",
            Some("127.0.0.1:7878")
        ));
        assert!(!allowed_origin("null", Some("127.0.0.1:7878")));
    }
}
