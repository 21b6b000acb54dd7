//! OAuth's errors ([`OAuthError`], `jility-identity`'s, which knows no HTTP stack) as
//! answers: RFC 6749's JSON (`{"error", "error_description"}`) with their status, never
//! stored by a cache, with `Retry-After` when they say how long to wait. The API's layers
//! answer the OAuth endpoints' refusals in this form too.

use axum::Json;
use axum::http::{HeaderValue, header};
use axum::response::{IntoResponse, Response};
use jility_identity::oauth::OAuthError;

/// An OAuth error as its answer (axum's `IntoResponse`, which the orphan rule keeps from
/// `jility-identity`'s error).
pub trait OAuthResponse {
    fn into_response(self) -> Response;
}

impl OAuthResponse for OAuthError {
    fn into_response(self) -> Response {
        let body = serde_json::json!({
            "error": self.code,
            "error_description": self.description,
        });
        let mut response = (self.status, Json(body)).into_response();
        let headers = response.headers_mut();
        headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
        if let Some(wait) = self.retry_after
            && let Ok(value) = HeaderValue::from_str(&wait.to_string())
        {
            headers.insert(header::RETRY_AFTER, value);
        }
        response
    }
}
