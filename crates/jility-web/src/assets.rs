//! The stylesheet and the script, embedded in the binary (no build step, no Node): served
//! at `/assets/…` with a version from their BLAKE3 hash in the link, so a browser may keep
//! them for a year and still never runs an old script against a new server.

use std::sync::LazyLock;

use axum::extract::Path;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};

const CSS: &str = include_str!("../assets/app.css");
const JS: &str = include_str!("../assets/app.js");

static CSS_VERSION: LazyLock<String> = LazyLock::new(|| version(CSS));
static JS_VERSION: LazyLock<String> = LazyLock::new(|| version(JS));

fn version(text: &str) -> String {
    blake3::hash(text.as_bytes()).to_hex()[..12].to_string()
}

pub fn css_href() -> String {
    format!("/assets/app.css?v={}", *CSS_VERSION)
}

pub fn js_href() -> String {
    format!("/assets/app.js?v={}", *JS_VERSION)
}

/// `GET /assets/{name}`.
pub async fn serve(Path(name): Path<String>) -> Response {
    let (body, kind) = match name.as_str() {
        "app.css" => (CSS, "text/css; charset=utf-8"),
        "app.js" => (JS, "text/javascript; charset=utf-8"),
        _ => return StatusCode::NOT_FOUND.into_response(),
    };
    let mut response = body.into_response();
    let headers = response.headers_mut();
    headers.insert(header::CONTENT_TYPE, HeaderValue::from_static(kind));
    headers.insert(
        header::CACHE_CONTROL,
        HeaderValue::from_static("public, max-age=31536000, immutable"),
    );
    response
}
