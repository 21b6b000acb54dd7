//! What the pages outside a workspace share: a page with cookies set, a refusal shown on
//! the form it refuses, the client's address, and a `next` that stays on this site.

use std::net::{IpAddr, Ipv4Addr, SocketAddr};

use axum::extract::ConnectInfo;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use jility_web::WebError;
use maud::Markup;

/// `body` with `status`, setting `cookies`.
pub fn with_cookies(status: StatusCode, body: Markup, cookies: &[Option<HeaderValue>]) -> Response {
    let mut response = (status, body).into_response();
    for cookie in cookies.iter().flatten() {
        response
            .headers_mut()
            .append(header::SET_COOKIE, cookie.clone());
    }
    response
}

/// The status a refusal is shown with on its form's page (a sign-in's 401, a limit's 429…),
/// and `Retry-After` when it says when.
pub fn refusal_status(err: &WebError) -> (StatusCode, Option<HeaderValue>) {
    let status = match err.status() {
        StatusCode::SEE_OTHER => StatusCode::UNAUTHORIZED,
        other => other,
    };
    let retry = err
        .as_tool_error()
        .retry_after_secs
        .and_then(|secs| HeaderValue::from_str(&secs.to_string()).ok());
    (status, retry)
}

/// Add `Retry-After` to `response` when there is one.
pub fn retry_after(mut response: Response, retry: Option<HeaderValue>) -> Response {
    if let Some(value) = retry {
        response.headers_mut().insert(header::RETRY_AFTER, value);
    }
    response
}

/// The client's address (for sign-in limits per address); unspecified when unknown.
pub fn client_addr(connect: Option<&ConnectInfo<SocketAddr>>) -> IpAddr {
    connect.map_or(IpAddr::V4(Ipv4Addr::UNSPECIFIED), |ConnectInfo(addr)| {
        addr.ip()
    })
}

/// `next` when it is a path of this site (one leading `/`, no scheme, host, backslash or
/// control character), else `/`: no open redirect.
pub fn local_next(next: Option<&str>) -> String {
    match next {
        Some(path)
            if path.starts_with('/')
                && !path.starts_with("//")
                && !path.contains('\\')
                && !path.contains("://")
                && !path.chars().any(char::is_control)
                && path.len() <= 2000 =>
        {
            path.to_string()
        }
        _ => "/".to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn next_stays_on_this_site() {
        assert_eq!(local_next(Some("/w/a/board")), "/w/a/board");
        assert_eq!(local_next(Some("//evil.example/x")), "/");
        assert_eq!(local_next(Some("https://evil.example/")), "/");
        assert_eq!(local_next(Some("/\\evil.example")), "/");
        assert_eq!(local_next(Some("w/a")), "/");
        assert_eq!(local_next(None), "/");
    }
}
