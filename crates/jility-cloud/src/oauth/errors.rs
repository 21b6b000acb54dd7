//! The OAuth endpoints' refusals in RFC 6749's form ([`OAuthError`], answered as
//! `jility-api`'s [`OAuthResponse`] says), for what axum would refuse before a handler of
//! the JSON endpoints (`/oauth/register`, `/oauth/token`, `/oauth/revoke`) too: a body over
//! [`super::BODY_BYTES`] is `413` and an unreadable one `400` ([`body`]), another method
//! than `POST` is `405` with `Allow: POST` ([`method_not_allowed`]).

use axum::extract::rejection::BytesRejection;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::Response;
pub use jility_api::oauth_errors::OAuthResponse;
pub use jility_identity::oauth::OAuthError;

/// A body axum could not take (`code`: the endpoint's error for a bad request): over the
/// limit `413`, else `400`; the text says which without echoing the body.
pub fn body(code: &'static str, rejection: &BytesRejection) -> OAuthError {
    let status = rejection.status();
    let description = if status == StatusCode::PAYLOAD_TOO_LARGE {
        format!(
            "The request body is larger than this endpoint takes ({} bytes at most)",
            super::BODY_BYTES
        )
    } else {
        "The request body could not be read".to_string()
    };
    let status = if status == StatusCode::PAYLOAD_TOO_LARGE {
        status
    } else {
        StatusCode::BAD_REQUEST
    };
    OAuthError::new(code, status, description)
}

/// A body announced (`Content-Length`) larger than the endpoints take: `413` at once,
/// before any of it is read.
pub fn too_large(code: &'static str) -> OAuthError {
    OAuthError::new(
        code,
        StatusCode::PAYLOAD_TOO_LARGE,
        format!(
            "The request body is larger than this endpoint takes ({} bytes at most)",
            super::BODY_BYTES
        ),
    )
}

/// Another method than `POST` at an OAuth JSON endpoint: `405`, `Allow: POST`, RFC 6749's
/// form.
pub async fn method_not_allowed() -> Response {
    let mut response = OAuthError::new(
        "invalid_request",
        StatusCode::METHOD_NOT_ALLOWED,
        "This endpoint takes POST only",
    )
    .into_response();
    response
        .headers_mut()
        .insert(header::ALLOW, HeaderValue::from_static("POST"));
    response
}

/// Refuse a request of the JSON endpoints whose announced body is over
/// [`super::BODY_BYTES`] at once (`413`), rather than reading it up to the limit first.
pub async fn announced_too_large(
    request: axum::extract::Request,
    next: axum::middleware::Next,
) -> Response {
    let announced = request
        .headers()
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<u64>().ok());
    if announced.is_some_and(|len| len > super::BODY_BYTES as u64) {
        let code = if request.uri().path() == super::REGISTER_PATH {
            "invalid_client_metadata"
        } else {
            "invalid_request"
        };
        return too_large(code).into_response();
    }
    next.run(request).await
}
