//! The response envelope every tool of every server returns.

use std::sync::Arc;

use rmcp::{
    handler::server::tool::IntoCallToolResult,
    model::{CallToolResponse, CallToolResult, JsonObject},
};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The machine-readable error vocabulary shared by all servers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ErrorCode {
    /// The server was started outside a git repository, or the repository was deleted.
    NoRepo,
    /// The repository exists but has no `.twig/state.json`.
    NoTwigState,
    /// Credentials for a remote service are missing or were rejected.
    CredentialsMissing,
    /// The requested entity does not exist.
    NotFound,
    /// The caller provided invalid or missing parameters.
    InvalidParams,
    /// A request to a remote service failed.
    NetworkError,
    /// A remote service's rate limit was exceeded.
    RateLimited,
    /// An unexpected failure inside the server.
    Internal,
    /// The server was started outside a project it can serve (e.g. no `.duvet/config.toml`).
    NoProject,
    /// A workflow transition that the status rules do not allow.
    InvalidStatus,
    /// The entity is already assigned to someone else.
    AlreadyAssigned,
    /// A value given by the caller breaks a domain rule (empty title, out-of-range points…).
    InvalidInput,
    /// The change would create a circular dependency.
    DependencyCycle,
}

impl ErrorCode {
    /// The wire form of the code, e.g. `no_twig_state`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::NoRepo => "no_repo",
            Self::NoTwigState => "no_twig_state",
            Self::CredentialsMissing => "credentials_missing",
            Self::NotFound => "not_found",
            Self::InvalidParams => "invalid_params",
            Self::NetworkError => "network_error",
            Self::RateLimited => "rate_limited",
            Self::Internal => "internal",
            Self::NoProject => "no_project",
            Self::InvalidStatus => "invalid_status",
            Self::AlreadyAssigned => "already_assigned",
            Self::InvalidInput => "invalid_input",
            Self::DependencyCycle => "dependency_cycle",
        }
    }
}

impl std::fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The error object of the envelope: a code, a human-readable message and an optional hint
/// that tells the caller what to do about it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ToolError {
    /// Machine-readable error code.
    pub code: ErrorCode,
    /// Human-readable explanation.
    pub message: String,
    /// Actionable guidance for resolving the error.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hint: Option<String>,
}

impl ToolError {
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        Self {
            code,
            message: message.into(),
            hint: None,
        }
    }

    pub fn with_hint(mut self, hint: impl Into<String>) -> Self {
        self.hint = Some(hint.into());
        self
    }

    pub fn not_found(message: impl Into<String>) -> Self {
        Self::new(ErrorCode::NotFound, message)
    }

    pub fn invalid_params(message: impl Into<String>) -> Self {
        Self::new(ErrorCode::InvalidParams, message)
    }

    /// An unexpected failure; the hint asks for a bug report.
    pub fn internal(message: impl Into<String>) -> Self {
        Self::new(ErrorCode::Internal, message).with_hint("This is a bug. Please report it.")
    }
}

impl std::fmt::Display for ToolError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.code, self.message)
    }
}

impl std::error::Error for ToolError {}

/// The envelope as it appears on the wire.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "status", rename_all = "snake_case")]
pub enum ToolResponse<T> {
    Ok { data: T },
    Error { error: ToolError },
}

impl<T> From<Result<T, ToolError>> for ToolResponse<T> {
    fn from(result: Result<T, ToolError>) -> Self {
        match result {
            Ok(data) => Self::Ok { data },
            Err(error) => Self::Error { error },
        }
    }
}

impl<T> ToolResponse<T> {
    pub fn into_result(self) -> Result<T, ToolError> {
        match self {
            Self::Ok { data } => Ok(data),
            Self::Error { error } => Err(error),
        }
    }
}

/// What a tool handler returns: its typed result, turned into the envelope when sent.
///
/// The `CallToolResult` carries the envelope twice, as `structuredContent` and as a JSON text
/// block (for clients that only read text), and sets `isError` to match the status.
#[derive(Debug)]
pub struct Reply<T>(pub Result<T, ToolError>);

impl<T> From<Result<T, ToolError>> for Reply<T> {
    fn from(result: Result<T, ToolError>) -> Self {
        Self(result)
    }
}

impl<T: Serialize> Reply<T> {
    /// Build the MCP result for this reply.
    pub fn into_call_result(self) -> CallToolResult {
        let is_error = self.0.is_err();
        let envelope = ToolResponse::from(self.0);
        let value = match serde_json::to_value(&envelope) {
            Ok(value) => value,
            Err(err) => {
                tracing::error!(error = %err, "failed to serialize a tool response");
                let fallback: ToolResponse<()> = ToolResponse::Error {
                    error: ToolError::internal(format!("Failed to serialize the response: {err}")),
                };
                serde_json::to_value(fallback).unwrap_or(serde_json::Value::Null)
            }
        };
        if is_error {
            CallToolResult::structured_error(value)
        } else {
            CallToolResult::structured(value)
        }
    }
}

impl<T: Serialize> IntoCallToolResult for Reply<T> {
    fn into_call_tool_result(self) -> Result<CallToolResponse, rmcp::ErrorData> {
        Ok(self.into_call_result().into())
    }
}

/// A reply whose text block is readable markdown written for the model, while
/// `structuredContent` carries the same facts as the JSON envelope. Errors read
/// `❌ Error: <message>` followed by the hint.
#[derive(Debug)]
pub struct MarkdownReply<T>(pub Result<(T, String), ToolError>);

impl<T> MarkdownReply<T> {
    pub fn ok(data: T, text: impl Into<String>) -> Self {
        Self(Ok((data, text.into())))
    }

    pub fn err(error: ToolError) -> Self {
        Self(Err(error))
    }
}

impl<T: Serialize> MarkdownReply<T> {
    pub fn into_call_result(self) -> CallToolResult {
        let (text, reply) = match self.0 {
            Ok((data, text)) => (text, Reply(Ok(data))),
            Err(error) => {
                let mut text = format!("❌ Error: {}", error.message);
                if let Some(hint) = &error.hint {
                    text.push_str("\n\n");
                    text.push_str(hint);
                }
                (text, Reply(Err(error)))
            }
        };
        let mut result = reply.into_call_result();
        result.content = vec![rmcp::model::ContentBlock::text(text)];
        result
    }
}

impl<T: Serialize> IntoCallToolResult for MarkdownReply<T> {
    fn into_call_tool_result(self) -> Result<CallToolResponse, rmcp::ErrorData> {
        Ok(self.into_call_result().into())
    }
}

#[derive(Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
enum Status {
    Ok,
    Error,
}

/// Schema-only mirror of [`ToolResponse`]: an object whose `status` says which of `data` and
/// `error` is present. (A tagged enum would give a schema without a root `type: object`,
/// which older clients reject.)
#[derive(Serialize, Deserialize, JsonSchema)]
#[schemars(rename = "ToolResponse")]
struct EnvelopeSchema<T> {
    /// `ok` when `data` is present, `error` when `error` is present.
    status: Status,
    /// The tool's result (present when `status` is `ok`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    data: Option<T>,
    /// What went wrong (present when `status` is `error`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    error: Option<ToolError>,
}

/// Where a page of a list stands in the whole list.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct PageInfo {
    /// How many items the whole list has.
    pub total: usize,
    /// The position of this page's first item.
    pub offset: usize,
    /// The `offset` of the next page; absent on the last page.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_offset: Option<usize>,
}

/// What a tool that answers a page of a list returns: the envelope's `data` is the page (an
/// array), and a `page` member beside it says the total and where the next page starts, so
/// a cut list never passes for a whole one.
#[derive(Debug)]
pub struct PagedReply<T>(pub Result<(Vec<T>, PageInfo), ToolError>);

impl<T: Serialize> PagedReply<T> {
    pub fn into_call_result(self) -> CallToolResult {
        match self.0 {
            Err(error) => Reply::<()>(Err(error)).into_call_result(),
            Ok((items, page)) => {
                let value = serde_json::json!({"status": "ok", "data": items, "page": page});
                CallToolResult::structured(value)
            }
        }
    }
}

impl<T: Serialize> IntoCallToolResult for PagedReply<T> {
    fn into_call_tool_result(self) -> Result<CallToolResponse, rmcp::ErrorData> {
        Ok(self.into_call_result().into())
    }
}

/// Schema-only mirror of the paged envelope.
#[derive(Serialize, Deserialize, JsonSchema)]
#[schemars(rename = "PagedToolResponse")]
struct PagedEnvelopeSchema<T> {
    /// `ok` when `data` is present, `error` when `error` is present.
    status: Status,
    /// One page of the list (present when `status` is `ok`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    data: Option<Vec<T>>,
    /// Where this page stands in the whole list (present when `status` is `ok`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    page: Option<PageInfo>,
    /// What went wrong (present when `status` is `error`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    error: Option<ToolError>,
}

/// The `outputSchema` of a tool answering pages of `T`.
pub fn paged_output_schema<T: JsonSchema + 'static>() -> Arc<JsonObject> {
    strip(rmcp::handler::server::tool::schema_for_output::<
        PagedEnvelopeSchema<T>,
    >())
}

/// The `outputSchema` of a tool whose data is `T`: the envelope around `T`.
pub fn output_schema<T: JsonSchema + 'static>() -> Arc<JsonObject> {
    strip(rmcp::handler::server::tool::schema_for_output::<
        EnvelopeSchema<T>,
    >())
}

fn strip(schema: Arc<JsonObject>) -> Arc<JsonObject> {
    let mut value = serde_json::Value::Object(schema.as_ref().clone());
    strip_numeric_formats(&mut value);
    match value {
        serde_json::Value::Object(object) => Arc::new(object),
        _ => schema,
    }
}

/// Remove schemars' Rust-specific `format`s (`uint32`, `int64`, `double`, …): they are not
/// JSON Schema formats, and validating clients (Ajv in the TypeScript SDK) warn about each
/// one. `minimum: 0` still says a number is unsigned.
pub fn strip_numeric_formats(value: &mut serde_json::Value) {
    match value {
        serde_json::Value::Object(map) => {
            let numeric = map.get("format").and_then(|f| f.as_str()).is_some_and(|f| {
                f.starts_with("int") || f.starts_with("uint") || f == "float" || f == "double"
            });
            if numeric {
                map.remove("format");
            }
            map.values_mut().for_each(strip_numeric_formats);
        }
        serde_json::Value::Array(items) => items.iter_mut().for_each(strip_numeric_formats),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn ok_envelope_has_data_and_is_not_error() {
        let result = Reply::<_>(Ok(json!({"branch": "main"}))).into_call_result();
        assert_eq!(result.is_error, Some(false));
        assert_eq!(
            result.structured_content,
            Some(json!({"status": "ok", "data": {"branch": "main"}}))
        );
        let text = result.content[0].as_text().map(|t| t.text.clone());
        assert_eq!(
            text.as_deref(),
            Some(r#"{"data":{"branch":"main"},"status":"ok"}"#)
        );
    }

    #[test]
    fn markdown_reply_keeps_text_and_envelope_apart() {
        let ok = MarkdownReply::ok(json!({"n": 1}), "✅ Done").into_call_result();
        assert_eq!(ok.is_error, Some(false));
        assert_eq!(
            ok.content[0].as_text().map(|t| t.text.as_str()),
            Some("✅ Done")
        );
        assert_eq!(
            ok.structured_content,
            Some(json!({"status": "ok", "data": {"n": 1}}))
        );
        let err = MarkdownReply::<()>::err(
            ToolError::new(ErrorCode::InvalidInput, "Title cannot be empty")
                .with_hint("Give a title."),
        )
        .into_call_result();
        assert_eq!(err.is_error, Some(true));
        assert_eq!(
            err.content[0].as_text().map(|t| t.text.as_str()),
            Some("❌ Error: Title cannot be empty\n\nGive a title.")
        );
    }

    #[test]
    fn error_envelope_omits_missing_hint() {
        let result = Reply::<()>(Err(ToolError::not_found(
            "Not on any branch (detached HEAD state)",
        )))
        .into_call_result();
        assert_eq!(result.is_error, Some(true));
        assert_eq!(
            result.structured_content,
            Some(
                json!({"status": "error", "error": {"code": "not_found", "message": "Not on any branch (detached HEAD state)"}})
            )
        );
    }

    #[test]
    fn output_schema_has_no_rust_number_formats() {
        #[derive(JsonSchema)]
        #[allow(dead_code)]
        struct Numbers {
            count: u32,
            size: usize,
            ratio: f64,
            when: String,
        }
        let text = serde_json::to_string(&*output_schema::<Numbers>()).unwrap();
        assert!(!text.contains("\"format\""), "{text}");
        assert!(text.contains("\"minimum\":0"), "{text}");
    }

    #[test]
    fn output_schema_is_an_object_with_status() {
        let schema = output_schema::<Vec<String>>();
        assert_eq!(schema.get("type"), Some(&json!("object")));
        let props = schema.get("properties").and_then(|p| p.as_object());
        let props = props.map(|p| p.keys().cloned().collect::<Vec<_>>());
        assert_eq!(
            props,
            Some(vec![
                "data".to_string(),
                "error".to_string(),
                "status".to_string()
            ])
        );
    }
}
