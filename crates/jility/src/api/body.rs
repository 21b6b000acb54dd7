//! Reading request bodies: JSON of the expected shape, or 400 with the envelope; what the
//! client sent is never echoed beyond a short, clipped excerpt.

use axum::body::Bytes;
use axum::extract::rejection::BytesRejection;
use axum::http::StatusCode;
use mcp_common::ToolError;
use serde::de::DeserializeOwned;

use super::ApiError;
use crate::errors;

/// Longest excerpt of a parser's message in an error.
pub(crate) const MAX_ERROR_CHARS: usize = 300;

pub(crate) fn invalid(message: impl Into<String>, hint: impl Into<String>) -> ApiError {
    ApiError(ToolError::new(errors::INVALID_INPUT, message).with_hint(hint))
}

pub(crate) fn clip(text: &str) -> String {
    if text.chars().count() <= MAX_ERROR_CHARS {
        return text.to_string();
    }
    let mut clipped: String = text.chars().take(MAX_ERROR_CHARS).collect();
    clipped.push('…');
    clipped
}

/// A JSON request body of type `T`, or 400 with the envelope (also for one too large);
/// `shape` is the hint for a body of the wrong shape (what the endpoint takes).
pub(crate) fn json_body<T: DeserializeOwned>(
    body: Result<Bytes, BytesRejection>,
    shape: &str,
) -> Result<T, ApiError> {
    let bytes = body.map_err(|rejection| {
        let status = rejection.status();
        let message = if status == StatusCode::PAYLOAD_TOO_LARGE {
            format!(
                "The request body is larger than {} bytes",
                super::MAX_BODY_BYTES
            )
        } else {
            format!(
                "Cannot read the request body: {}",
                clip(&rejection.body_text())
            )
        };
        invalid(message, "Send a smaller JSON body.")
    })?;
    serde_json::from_slice(&bytes).map_err(|err| {
        let what = if err.is_syntax() || err.is_eof() {
            "The request body is not valid JSON"
        } else {
            "The request body does not have the expected shape"
        };
        invalid(
            format!("{what}: {}", clip(&err.to_string())),
            shape.to_string(),
        )
    })
}
