//! What every page answer carries and every state change must prove.
//!
//! - **Headers** ([`headers`]): a strict Content-Security-Policy — scripts and styles only
//!   from this origin's `/assets/` (no inline script, style or event handler runs, so
//!   markdown that slipped through could do nothing), images from this origin or `data:`,
//!   connections to this origin only, no frames, forms posting only here — with `nosniff`,
//!   no referrer to other sites, and `no-store` on pages (they are private to a person).
//! - **CSRF** ([`check_form`]): every state-changing request carries the session's token
//!   (the form's `_csrf` field or the script's `X-CSRF-Token` header), compared in constant
//!   time, and a browser's `Origin`, when sent, must be this site's own (`Host`). The session
//!   cookie is `SameSite=Lax` as well, so a cross-site form never carries it.

use axum::extract::Request;
use axum::http::{HeaderMap, HeaderValue, header};
use axum::middleware::Next;
use axum::response::Response;
use subtle::ConstantTimeEq as _;

use crate::errors::WebError;
use crate::site::Viewer;

/// The Content-Security-Policy of every answer of the web app.
pub const CSP: &str = "default-src 'none'; script-src 'self'; style-src 'self'; \
     img-src 'self' data:; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; \
     base-uri 'none'";

/// The name of the header the page's script sends its CSRF token in.
pub const CSRF_HEADER: &str = "x-csrf-token";

/// Middleware: the security headers on every answer.
pub async fn headers(request: Request, next: Next) -> Response {
    let is_asset = request.uri().path().starts_with("/assets/");
    let mut response = next.run(request).await;
    let headers = response.headers_mut();
    // A page may set a policy of its own (stricter, or naming where its form goes next).
    if !headers.contains_key(header::CONTENT_SECURITY_POLICY) {
        headers.insert(
            header::CONTENT_SECURITY_POLICY,
            HeaderValue::from_static(CSP),
        );
    }
    headers.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    headers.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("same-origin"),
    );
    headers.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    if !is_asset && !headers.contains_key(header::CACHE_CONTROL) {
        headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    }
    response
}

/// A state-changing request of `viewer`: `token` (the form's `_csrf`, else the
/// `X-CSRF-Token` header) must be the session's, and a browser's `Origin` this site.
pub fn check_form(
    viewer: &Viewer,
    headers: &HeaderMap,
    token: Option<&str>,
) -> Result<(), WebError> {
    check_origin(headers)?;
    let sent = token
        .filter(|t| !t.is_empty())
        .or_else(|| headers.get(CSRF_HEADER).and_then(|v| v.to_str().ok()))
        .unwrap_or_default();
    if sent.is_empty() || !bool::from(sent.as_bytes().ct_eq(viewer.csrf.as_bytes())) {
        return Err(WebError::Csrf);
    }
    Ok(())
}

/// A browser's `Origin` (sent with every POST of a form or `fetch`) must name this site's
/// `Host`; `Sec-Fetch-Site: cross-site` is refused too. A request without either (a
/// non-browser client with the session's token) passes on the token alone.
pub fn check_origin(headers: &HeaderMap) -> Result<(), WebError> {
    if headers
        .get("sec-fetch-site")
        .and_then(|v| v.to_str().ok())
        .is_some_and(|site| site == "cross-site")
    {
        return Err(WebError::Csrf);
    }
    let Some(origin) = headers.get(header::ORIGIN) else {
        return Ok(());
    };
    let origin = origin.to_str().map_err(|_| WebError::Csrf)?;
    let host = headers
        .get(header::HOST)
        .and_then(|v| v.to_str().ok())
        .ok_or(WebError::Csrf)?;
    let origin_host = origin
        .strip_prefix("https://")
        .or_else(|| origin.strip_prefix("http://"))
        .ok_or(WebError::Csrf)?;
    if origin_host.eq_ignore_ascii_case(host) {
        Ok(())
    } else {
        Err(WebError::Csrf)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use jility_core::backend::Caller;

    fn viewer() -> Viewer {
        Viewer {
            name: "ada".into(),
            email: None,
            display_name: None,
            caller: Caller::default(),
            can_write: true,
            manages: false,
            csrf: "token-123".into(),
            workspace: "local".into(),
            workspaces: vec![],
            unread: 0,
        }
    }

    fn with(pairs: &[(&str, &str)]) -> HeaderMap {
        let mut headers = HeaderMap::new();
        for (name, value) in pairs {
            headers.insert(
                axum::http::HeaderName::from_bytes(name.as_bytes()).unwrap(),
                HeaderValue::from_str(value).unwrap(),
            );
        }
        headers
    }

    #[test]
    fn a_form_needs_the_session_token() {
        let v = viewer();
        let same = with(&[
            ("host", "127.0.0.1:8080"),
            ("origin", "http://127.0.0.1:8080"),
        ]);
        assert!(check_form(&v, &same, Some("token-123")).is_ok());
        assert!(check_form(&v, &same, Some("token-124")).is_err());
        assert!(check_form(&v, &same, None).is_err());
        assert!(check_form(&v, &same, Some("")).is_err());
        let header = with(&[("host", "h"), ("x-csrf-token", "token-123")]);
        assert!(check_form(&v, &header, None).is_ok());
    }

    #[test]
    fn another_origin_is_refused_even_with_the_token() {
        let v = viewer();
        let other = with(&[
            ("host", "127.0.0.1:8080"),
            ("origin", "http://evil.example"),
        ]);
        assert!(check_form(&v, &other, Some("token-123")).is_err());
        let cross = with(&[("host", "h"), ("sec-fetch-site", "cross-site")]);
        assert!(check_form(&v, &cross, Some("token-123")).is_err());
        let null = with(&[("host", "h"), ("origin", "null")]);
        assert!(check_form(&v, &null, Some("token-123")).is_err());
    }
}
