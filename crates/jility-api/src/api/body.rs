//! Reading request bodies: JSON of the expected shape, or 400 with the envelope; what the
//! client sent is never echoed beyond a short, clipped excerpt.

use axum::body::Bytes;
use axum::extract::rejection::BytesRejection;
use axum::http::StatusCode;
use mcp_common::ToolError;
use serde::de::DeserializeOwned;

use super::ApiError;
use jility_core::errors::{self, clip};

pub(crate) fn invalid(message: impl Into<String>, hint: impl Into<String>) -> ApiError {
    ApiError(ToolError::new(errors::INVALID_INPUT, message).with_hint(hint))
}

/// The bytes of a request body, or the `invalid_input` error for one that cannot be read
/// (too large, cut off, too late).
pub(crate) fn read_body(body: Result<Bytes, BytesRejection>) -> Result<Bytes, ToolError> {
    body.map_err(|rejection| {
        use mcp_common::connections::{BodyTimedOut, caused_by};
        if caused_by::<BodyTimedOut>(&rejection) {
            return ToolError::new(
                errors::INVALID_INPUT,
                "The request body did not arrive within the server's read timeout",
            )
            .with_hint(format!(
                "Send the whole body right after the headers (the server waits {} s, {}), then try again.",
                mcp_common::connections::read_timeout().as_secs(),
                mcp_common::connections::READ_TIMEOUT_VAR
            ));
        }
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
        ToolError::new(errors::INVALID_INPUT, message).with_hint("Send a smaller JSON body.")
    })
}

/// A JSON request body of type `T`, or 400 with the envelope (also for one too large);
/// `shape` is the hint for a body of the wrong shape (what the endpoint takes).
pub(crate) fn json_body<T: DeserializeOwned>(
    body: Result<Bytes, BytesRejection>,
    shape: &str,
) -> Result<T, ApiError> {
    let bytes = read_body(body)?;
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
