//! Errors: a code plus a class.
//!
//! A server names what went wrong with an [`ErrorCode`]: a wire name (`quota_exceeded`,
//! `stale_revision`, …) and an [`ErrorClass`]. The class decides, here and nowhere else,
//! how the failure reaches a client: whether it is a protocol-level error for servers whose
//! contract asks for those, its JSON-RPC code, its HTTP status, and whether retrying can
//! help. This crate defines only the generic codes ([`codes`]); each server declares its
//! domain codes in its own crate.

use std::borrow::Cow;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize, Serializer, ser::SerializeStruct};

/// What kind of failure an error is. Every decision that depends on the kind of failure is a
/// method of this type.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ErrorClass {
    /// The arguments are missing, malformed or break a rule: fix the call.
    InvalidArguments,
    /// What the call names does not exist (or the context it needs is absent).
    NotFound,
    /// The call contradicts the current state (a workflow rule, a cycle, a claim).
    Conflict,
    /// Credentials are missing, unknown, expired or revoked: who is calling is not known.
    Unauthenticated,
    /// The caller is known but may not do this (a scope its token lacks).
    PermissionDenied,
    /// A service the call needs cannot be reached right now (network, a busy database).
    Unavailable,
    /// A rate limit was hit; `retry_after_secs` says when to try again, where known.
    RateLimited,
    /// A failure inside the server: a bug, or damaged data.
    Internal,
}

impl ErrorClass {
    /// Whether the same call may succeed later without any change to it.
    pub const fn retryable(self) -> bool {
        matches!(self, Self::Unavailable | Self::RateLimited)
    }

    /// Whether a server whose contract reports bad arguments and internal failures at the
    /// protocol level (a strict published contract) answers this class with a JSON-RPC error rather than an
    /// `isError: true` tool result. Every other class, on every server, is an `isError`
    /// tool result that carries the error envelope.
    pub const fn is_protocol_error(self) -> bool {
        matches!(self, Self::InvalidArguments | Self::Internal)
    }

    /// The JSON-RPC error code of this class (`-32602` for bad arguments, `-32001` for an
    /// internal failure (a "server error" of the implementation-defined range), and codes of the
    /// implementation-defined server range for the others).
    pub const fn json_rpc_code(self) -> i32 {
        match self {
            Self::InvalidArguments => -32602,
            Self::Internal => -32001,
            Self::NotFound => -32002,
            Self::Conflict => -32003,
            Self::PermissionDenied => -32004,
            Self::Unavailable => -32005,
            Self::RateLimited => -32006,
            Self::Unauthenticated => -32007,
        }
    }

    /// The HTTP status of this class, for HTTP APIs.
    pub const fn http_status(self) -> u16 {
        match self {
            Self::InvalidArguments => 400,
            Self::NotFound => 404,
            Self::Conflict => 409,
            Self::Unauthenticated => 401,
            Self::PermissionDenied => 403,
            Self::Unavailable => 503,
            Self::RateLimited => 429,
            Self::Internal => 500,
        }
    }

    /// The hint an error of this class carries when its code gave none.
    pub const fn default_hint(self) -> &'static str {
        match self {
            Self::InvalidArguments => {
                "Check the tool's inputSchema and the message, then call again."
            }
            Self::NotFound => {
                "Check the name or id; list what exists with the server's list tools."
            }
            Self::Conflict => "Read the current state again, then decide what to change.",
            Self::Unauthenticated => {
                "Provide a valid token (a new one if it expired or was revoked), then call again."
            }
            Self::PermissionDenied => {
                "Use credentials that allow this (e.g. a token with the scope named), then call again."
            }
            Self::Unavailable => "The failure is temporary: try again shortly.",
            Self::RateLimited => "Wait until the limit resets (retry_after_secs), then try again.",
            Self::Internal => "This is a bug or damaged data; please report it with the message.",
        }
    }
}

/// A machine-readable error code: its wire name and its class.
///
/// Codes are constants: the generic ones are in [`codes`], a server's domain codes in its
/// own crate, e.g. `pub const NO_CONFIG: ErrorCode = ErrorCode::new("no_config", ErrorClass::NotFound);`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ErrorCode {
    name: &'static str,
    class: ErrorClass,
}

impl ErrorCode {
    pub const fn new(name: &'static str, class: ErrorClass) -> Self {
        Self { name, class }
    }

    /// The wire form of the code, e.g. `quota_exceeded`.
    pub const fn as_str(self) -> &'static str {
        self.name
    }

    pub const fn class(self) -> ErrorClass {
        self.class
    }
}

impl std::fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name)
    }
}

impl Serialize for ErrorCode {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.name)
    }
}

impl PartialEq<ErrorCode> for String {
    fn eq(&self, other: &ErrorCode) -> bool {
        self == other.name
    }
}

impl PartialEq<ErrorCode> for &str {
    fn eq(&self, other: &ErrorCode) -> bool {
        *self == other.name
    }
}

/// The generic codes, one per class. Domain codes live in the servers' crates.
pub mod codes {
    use super::{ErrorClass, ErrorCode};

    pub const INVALID_PARAMS: ErrorCode =
        ErrorCode::new("invalid_params", ErrorClass::InvalidArguments);
    pub const NOT_FOUND: ErrorCode = ErrorCode::new("not_found", ErrorClass::NotFound);
    pub const CONFLICT: ErrorCode = ErrorCode::new("conflict", ErrorClass::Conflict);
    pub const UNAUTHENTICATED: ErrorCode =
        ErrorCode::new("unauthenticated", ErrorClass::Unauthenticated);
    pub const PERMISSION_DENIED: ErrorCode =
        ErrorCode::new("permission_denied", ErrorClass::PermissionDenied);
    pub const UNAVAILABLE: ErrorCode = ErrorCode::new("unavailable", ErrorClass::Unavailable);
    pub const RATE_LIMITED: ErrorCode = ErrorCode::new("rate_limited", ErrorClass::RateLimited);
    pub const INTERNAL: ErrorCode = ErrorCode::new("internal", ErrorClass::Internal);
}

/// A failure as a tool reports it: `{"code","message","hint","retryable","retry_after_secs"?}`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolError {
    pub code: ErrorCode,
    /// Human-readable explanation.
    pub message: String,
    /// What to do about it; the class's default hint when `None`.
    pub hint: Option<String>,
    /// Seconds to wait before retrying, where the failure says (rate limits).
    pub retry_after_secs: Option<u64>,
}

impl ToolError {
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        Self {
            code,
            message: message.into(),
            hint: None,
            retry_after_secs: None,
        }
    }

    pub fn with_hint(mut self, hint: impl Into<String>) -> Self {
        self.hint = Some(hint.into());
        self
    }

    pub fn with_retry_after(mut self, secs: u64) -> Self {
        self.retry_after_secs = Some(secs);
        self
    }

    pub fn not_found(message: impl Into<String>) -> Self {
        Self::new(codes::NOT_FOUND, message)
    }

    pub fn invalid_params(message: impl Into<String>) -> Self {
        Self::new(codes::INVALID_PARAMS, message)
    }

    /// An unexpected failure; the hint asks for a bug report.
    pub fn internal(message: impl Into<String>) -> Self {
        Self::new(codes::INTERNAL, message)
    }

    pub fn class(&self) -> ErrorClass {
        self.code.class
    }

    pub fn retryable(&self) -> bool {
        self.code.class.retryable()
    }

    /// The hint as sent: the given one, or the class's default.
    pub fn hint_text(&self) -> &str {
        self.hint
            .as_deref()
            .unwrap_or(self.code.class.default_hint())
    }
}

impl Serialize for ToolError {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let fields = 4 + usize::from(self.retry_after_secs.is_some());
        let mut s = serializer.serialize_struct("ToolError", fields)?;
        s.serialize_field("code", &self.code)?;
        s.serialize_field("message", &self.message)?;
        s.serialize_field("hint", self.hint_text())?;
        s.serialize_field("retryable", &self.retryable())?;
        if let Some(secs) = self.retry_after_secs {
            s.serialize_field("retry_after_secs", &secs)?;
        }
        s.end()
    }
}

impl std::fmt::Display for ToolError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.code, self.message)
    }
}

impl std::error::Error for ToolError {}

/// The error object as it is read back from the wire (by tests, and by clients such as a
/// bridge to an HTTP API): the same fields as [`ToolError`], owned.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[schemars(
    rename = "ToolError",
    description = "What went wrong: a machine-readable code, a message, a hint on what to do next, and whether the same call may succeed later."
)]
#[serde(deny_unknown_fields)]
pub struct WireError {
    /// Machine-readable error code, e.g. `not_found`.
    pub code: String,
    /// Human-readable explanation.
    pub message: String,
    /// What to do about it.
    pub hint: String,
    /// Whether the same call may succeed later without any change to it.
    pub retryable: bool,
    /// Seconds to wait before retrying, where known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retry_after_secs: Option<u64>,
}

impl WireError {
    /// Whether this is an error of `code`.
    pub fn is(&self, code: ErrorCode) -> bool {
        self.code == code.as_str()
    }
}

impl From<&ToolError> for WireError {
    fn from(error: &ToolError) -> Self {
        Self {
            code: error.code.as_str().to_string(),
            message: error.message.clone(),
            hint: error.hint_text().to_string(),
            retryable: error.retryable(),
            retry_after_secs: error.retry_after_secs,
        }
    }
}

impl std::fmt::Display for WireError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.code, self.message)
    }
}

/// `ToolError`'s schema is the wire form's.
impl JsonSchema for ToolError {
    fn schema_name() -> Cow<'static, str> {
        WireError::schema_name()
    }

    fn schema_id() -> Cow<'static, str> {
        WireError::schema_id()
    }

    fn json_schema(generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
        WireError::json_schema(generator)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const NO_THING: ErrorCode = ErrorCode::new("no_thing", ErrorClass::NotFound);

    #[test]
    fn envelope_carries_hint_and_retryability() {
        let err = ToolError::new(NO_THING, "nothing here");
        assert_eq!(
            serde_json::to_value(&err).unwrap(),
            json!({"code": "no_thing", "message": "nothing here",
                   "hint": ErrorClass::NotFound.default_hint(), "retryable": false})
        );
        let limited = ToolError::new(codes::RATE_LIMITED, "slow down")
            .with_hint("wait")
            .with_retry_after(30);
        assert_eq!(
            serde_json::to_value(&limited).unwrap(),
            json!({"code": "rate_limited", "message": "slow down", "hint": "wait",
                   "retryable": true, "retry_after_secs": 30})
        );
    }

    #[test]
    fn wire_form_round_trips() {
        let err = ToolError::new(codes::UNAVAILABLE, "down").with_hint("later");
        let wire: WireError = serde_json::from_value(serde_json::to_value(&err).unwrap()).unwrap();
        assert_eq!(wire, WireError::from(&err));
        assert!(wire.is(codes::UNAVAILABLE));
        assert!(wire.retryable);
        assert_eq!(wire.code, codes::UNAVAILABLE);
    }

    #[test]
    fn the_class_decides_everything() {
        use ErrorClass::*;
        let all = [
            InvalidArguments,
            NotFound,
            Conflict,
            Unauthenticated,
            PermissionDenied,
            Unavailable,
            RateLimited,
            Internal,
        ];
        let retryable: Vec<_> = all.iter().filter(|c| c.retryable()).collect();
        assert_eq!(retryable, [&Unavailable, &RateLimited]);
        let protocol: Vec<_> = all.iter().filter(|c| c.is_protocol_error()).collect();
        assert_eq!(protocol, [&InvalidArguments, &Internal]);
        let statuses: Vec<_> = all.iter().map(|c| c.http_status()).collect();
        assert_eq!(statuses, [400, 404, 409, 401, 403, 503, 429, 500]);
        let rpc: std::collections::HashSet<_> = all.iter().map(|c| c.json_rpc_code()).collect();
        assert_eq!(rpc.len(), all.len(), "each class has its own JSON-RPC code");
        assert_eq!(InvalidArguments.json_rpc_code(), -32602);
        assert_eq!(Internal.json_rpc_code(), -32001);
    }
}
