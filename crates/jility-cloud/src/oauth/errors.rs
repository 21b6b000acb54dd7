//! The errors of the OAuth endpoints, in RFC 6749's form: `{"error": "invalid_grant",
//! "error_description": "…"}` with its status, never a token or a secret in the text. A
//! store failure is `temporarily_unavailable` (503, retryable) or `server_error`.

use axum::Json;
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
