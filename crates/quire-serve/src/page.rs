//! The web page: plain HTML, CSS and JavaScript embedded in the binary (no build step, nothing
//! fetched from elsewhere). Note text reaches the page only as data: the script writes it with
//! `textContent`, and its Markdown renderer escapes every character before adding its own tags.

use std::sync::Arc;

use axum::extract::{Path, State};
use axum::http::header::{self, HeaderValue};
use axum::response::{IntoResponse, Response};

use crate::AppState;
use crate::api::not_found;
use crate::guard::TOKEN_COOKIE;

const INDEX_HTML: &str = include_str!("assets/index.html");
const APP_JS: &str = include_str!("assets/app.js");
const STYLE_CSS: &str = include_str!("assets/style.css");

/// `GET /`. With a token configured, the page was opened with the right one (the guard checked
/// it): it goes into a cookie that only this origin's requests carry, so the page's own
/// requests (script, style, API, events) are authorized without the token in every URL.
pub(crate) async fn index(State(state): State<Arc<AppState>>) -> Response {
    let mut response = (
        [
            (header::CONTENT_TYPE, "text/html; charset=utf-8"),
            (header::CACHE_CONTROL, "no-store"),
        ],
        INDEX_HTML,
    )
        .into_response();
    if let Some(token) = &state.token
        && let Ok(cookie) = HeaderValue::from_str(&format!(
            "{TOKEN_COOKIE}={token}; Path=/; HttpOnly; SameSite=Strict"
        ))
    {
        response.headers_mut().insert(header::SET_COOKIE, cookie);
    }
    response
}

/// `GET /assets/{name}`: the script and the style sheet.
pub(crate) async fn asset(Path(name): Path<String>) -> Response {
    let (content_type, body) = match name.as_str() {
        "app.js" => ("text/javascript; charset=utf-8", APP_JS),
        "style.css" => ("text/css; charset=utf-8", STYLE_CSS),
        _ => return not_found().await.into_response(),
    };
    (
        [
            (header::CONTENT_TYPE, content_type),
            (header::CACHE_CONTROL, "no-cache"),
        ],
        body,
    )
        .into_response()
}
