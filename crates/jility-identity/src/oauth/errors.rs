//! The errors of the OAuth endpoints, in RFC 6749's form: `{"error": "invalid_grant",
//! "error_description": "…"}` with its status, never a token or a secret in the text. A
//! store failure is `temporarily_unavailable` (503, retryable) or `server_error`.
//!
//! No HTTP stack here: the status is the `http` crate's [`StatusCode`]; `jility-api` sends an
//! error as its JSON answer, and `jility-cloud` refuses in this form what axum would refuse
//! before a handler of the JSON endpoints (a body too large or unreadable, another method).

use http::StatusCode;
use mcp_common_core::ToolError;

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
    pub fn new(code: &'static str, status: StatusCode, description: impl Into<String>) -> Self {
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
