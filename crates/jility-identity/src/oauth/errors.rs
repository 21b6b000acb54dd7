//! The errors of the OAuth endpoints, in RFC 6749's form: `{"error": "invalid_grant",
//! "error_description": "…"}` with its status, never a token or a secret in the text. A
//! store failure is `temporarily_unavailable` (503, retryable) or `server_error`.
//!
//! What axum would refuse before a handler is this form too on the JSON endpoints
//! (`/oauth/register`, `/oauth/token`, `/oauth/revoke`): a body over [`super::BODY_BYTES`]
//! is `413` and an unreadable one `400` ([`OAuthError::body`]), another method than `POST`
//! is `405` with `Allow: POST` ([`method_not_allowed`]).

use axum::Json;
use axum::extract::rejection::BytesRejection;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use mcp_common::ToolError;

/// An OAuth error: its RFC 6749 / 7591 code, what happened, and the status it is sent with.
#[derive(Debug, Clone)]
pub struct OAuthError {
    pub code: &'static str,
    pub description: String,
    pub status: StatusCode,
    /// Seconds to wait before retrying (a limit, an unreachable database).
    pub retry_after: Option<u64>,
}

impl OAuthError {
    fn new(code: &'static str, status: StatusCode, description: impl Into<String>) -> Self {
        Self {
            code,
            description: description.into(),
            status,
            retry_after: None,
        }
    }

    pub fn invalid_request(description: impl Into<String>) -> Self {
        Self::new("invalid_request", StatusCode::BAD_REQUEST, description)
    }

    pub fn invalid_client(description: impl Into<String>) -> Self {
        Self::new("invalid_client", StatusCode::UNAUTHORIZED, description)
    }

    pub fn invalid_grant(description: impl Into<String>) -> Self {
        Self::new("invalid_grant", StatusCode::BAD_REQUEST, description)
    }

    pub fn invalid_scope(description: impl Into<String>) -> Self {
        Self::new("invalid_scope", StatusCode::BAD_REQUEST, description)
    }

    pub fn invalid_target(description: impl Into<String>) -> Self {
        Self::new("invalid_target", StatusCode::BAD_REQUEST, description)
    }

    pub fn unsupported_grant_type(description: impl Into<String>) -> Self {
        Self::new(
            "unsupported_grant_type",
            StatusCode::BAD_REQUEST,
            description,
        )
    }

    pub fn invalid_redirect_uri(description: impl Into<String>) -> Self {
        Self::new("invalid_redirect_uri", StatusCode::BAD_REQUEST, description)
    }

    pub fn invalid_client_metadata(description: impl Into<String>) -> Self {
        Self::new(
            "invalid_client_metadata",
            StatusCode::BAD_REQUEST,
            description,
        )
    }

    /// Too many requests (`429`, `Retry-After: wait`), told as `invalid_request`.
    pub fn too_many(description: impl Into<String>, wait: u64) -> Self {
        Self {
            retry_after: Some(wait),
            ..Self::new(
                "invalid_request",
                StatusCode::TOO_MANY_REQUESTS,
                description,
            )
        }
    }

    /// A body axum could not take (`code`: the endpoint's error for a bad request): over
    /// the limit `413`, else `400`; the text says which without echoing the body.
    pub fn body(code: &'static str, rejection: &BytesRejection) -> Self {
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
        Self::new(code, status, description)
    }

    /// A body announced (`Content-Length`) larger than the endpoints take: `413` at once,
    /// before any of it is read.
    pub fn too_large(code: &'static str) -> Self {
        Self::new(
            code,
            StatusCode::PAYLOAD_TOO_LARGE,
            format!(
                "The request body is larger than this endpoint takes ({} bytes at most)",
                super::BODY_BYTES
            ),
        )
    }

    pub fn slow_down(description: impl Into<String>, wait: u64) -> Self {
        Self {
            retry_after: Some(wait),
            ..Self::new("slow_down", StatusCode::TOO_MANY_REQUESTS, description)
        }
    }
}

impl From<ToolError> for OAuthError {
    fn from(err: ToolError) -> Self {
        if err.class().retryable() {
            Self {
                retry_after: err.retry_after_secs.or(Some(2)),
                ..Self::new(
                    "temporarily_unavailable",
                    StatusCode::SERVICE_UNAVAILABLE,
                    err.message,
                )
            }
        } else {
            Self::new(
                "server_error",
                StatusCode::INTERNAL_SERVER_ERROR,
                err.message,
            )
        }
    }
}

impl IntoResponse for OAuthError {
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
        return OAuthError::too_large(code).into_response();
    }
    next.run(request).await
}
