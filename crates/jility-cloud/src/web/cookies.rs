//! The cookies of the web board, and the CSRF proof of the forms sent before a session
//! exists.
//!
//! - `jility_session`: the session's secret; `HttpOnly` (no script reads it),
//!   `SameSite=Lax` (no cross-site form carries it), `Path=/`, `Secure` when the server
//!   terminates TLS, for the session's 30 days.
//! - `jility_csrf`: for the sign-in, invite and reset forms (no session yet, so no session
//!   token): a random value set with the form's page (`SameSite=Strict`, `HttpOnly`) and
//!   repeated in the form's hidden `_csrf` field — a double submit: another site can
//!   neither read the cookie nor set it, so it cannot send the pair ([`check_double_submit`]),
//!   and the browser's `Origin` must be this site's as well.

use axum::http::{HeaderMap, HeaderValue, header};
use jility_web::WebError;
use subtle::ConstantTimeEq as _;

use crate::accounts::{PlainSecret, SESSION_DAYS};

/// The session cookie's name.
pub const SESSION: &str = "jility_session";
/// The double-submit cookie's name.
pub const CSRF: &str = "jility_csrf";

/// The value of cookie `name` of the request, if any (the first, non-empty).
pub fn get(headers: &HeaderMap, name: &str) -> Option<String> {
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|line| line.split(';'))
        .filter_map(|pair| pair.trim().split_once('='))
        .find(|(k, v)| *k == name && !v.is_empty())
        .map(|(_, v)| v.trim_matches('"').to_string())
}

fn secure(tls: bool) -> &'static str {
    if tls { "; Secure" } else { "" }
}

/// `Set-Cookie` of a new session.
pub fn session(secret: &PlainSecret, tls: bool) -> Option<HeaderValue> {
    let max_age = SESSION_DAYS * 24 * 60 * 60;
    HeaderValue::from_str(&format!(
        "{SESSION}={}; HttpOnly; SameSite=Lax; Path=/; Max-Age={max_age}{}",
        secret.expose(),
        secure(tls)
    ))
    .ok()
}

/// `Set-Cookie` that ends the session cookie.
pub fn end_session(tls: bool) -> HeaderValue {
    let value = format!(
        "{SESSION}=; HttpOnly; SameSite=Lax; Path=/; Max-Age=0{}",
        secure(tls)
    );
    HeaderValue::from_str(&value).unwrap_or(HeaderValue::from_static(
        "jility_session=; HttpOnly; SameSite=Lax; Path=/; Max-Age=0",
    ))
}

/// The double-submit value of a form's page: the request's own when it has a well-formed
/// one (so that two open tabs share it), else a new one with its `Set-Cookie`.
pub fn form_token(
    headers: &HeaderMap,
    tls: bool,
) -> Result<(String, Option<HeaderValue>), WebError> {
    if let Some(value) = get(headers, CSRF).filter(|v| well_formed(v)) {
        return Ok((value, None));
    }
    let value = PlainSecret::mint()?.into_string();
    let cookie = HeaderValue::from_str(&format!(
        "{CSRF}={value}; HttpOnly; SameSite=Strict; Path=/{}",
        secure(tls)
    ))
    .ok();
    Ok((value, cookie))
}

fn well_formed(value: &str) -> bool {
    value.len() == crate::accounts::SECRET_LEN && value.bytes().all(|b| b.is_ascii_alphanumeric())
}

/// A form sent without a session: its `_csrf` field must equal the `jility_csrf` cookie
/// (compared in constant time), and a browser's `Origin` must be this site's.
pub fn check_double_submit(headers: &HeaderMap, field: Option<&str>) -> Result<(), WebError> {
    jility_web::security::check_origin(headers)?;
    let cookie = get(headers, CSRF).unwrap_or_default();
    let field = field.unwrap_or_default();
    if cookie.is_empty()
        || field.is_empty()
        || !bool::from(cookie.as_bytes().ct_eq(field.as_bytes()))
    {
        return Err(WebError::Csrf);
    }
    Ok(())
}

/// A form of a signed-in person: the session's token and this site's `Origin`.
pub fn check_session_form(
    session: &crate::accounts::Session,
    headers: &HeaderMap,
    field: Option<&str>,
) -> Result<(), WebError> {
    jility_web::security::check_origin(headers)?;
    let sent = field
        .filter(|t| !t.is_empty())
        .or_else(|| {
            headers
                .get(jility_web::security::CSRF_HEADER)
                .and_then(|v| v.to_str().ok())
        })
        .unwrap_or_default();
    if sent.is_empty() || !session.csrf_matches(sent) {
        return Err(WebError::Csrf);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cookies_are_read_by_name() {
        let mut headers = HeaderMap::new();
        headers.insert(
            header::COOKIE,
            HeaderValue::from_static("a=1; jility_session=abc; jility_csrf=x"),
        );
        assert_eq!(get(&headers, SESSION).as_deref(), Some("abc"));
        assert_eq!(get(&headers, CSRF).as_deref(), Some("x"));
        assert_eq!(get(&headers, "missing"), None);
    }

    #[test]
    fn the_double_submit_needs_both_equal() {
        let mut headers = HeaderMap::new();
        headers.insert(header::COOKIE, HeaderValue::from_static("jility_csrf=tok"));
        headers.insert(header::HOST, HeaderValue::from_static("h:1"));
        assert!(check_double_submit(&headers, Some("tok")).is_ok());
        assert!(check_double_submit(&headers, Some("other")).is_err());
        assert!(check_double_submit(&headers, None).is_err());
        headers.insert(header::ORIGIN, HeaderValue::from_static("http://evil:1"));
        assert!(check_double_submit(&headers, Some("tok")).is_err());
    }
}
