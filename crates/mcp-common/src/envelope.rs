//! The response envelope every tool of every server returns, and its `outputSchema`.

use std::sync::Arc;

use rmcp::{
    handler::server::tool::IntoCallToolResult,
    model::{CallToolResponse, CallToolResult, JsonObject},
};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use serde_json::Value;

use crate::error::{ToolError, WireError};
use crate::page::{Page, Paged};

/// The envelope as it is sent: `{"status":"ok","data":…,"page"?}` or
/// `{"status":"error","error":…}`.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "status", rename_all = "snake_case")]
pub enum ToolResponse<T> {
    Ok {
        data: T,
        #[serde(skip_serializing_if = "Option::is_none")]
        page: Option<Page>,
    },
    Error {
        error: ToolError,
    },
}

impl<T> From<Result<T, ToolError>> for ToolResponse<T> {
    fn from(result: Result<T, ToolError>) -> Self {
        match result {
            Ok(data) => Self::Ok { data, page: None },
            Err(error) => Self::Error { error },
        }
    }
}

/// The envelope as a client reads it back (tests, bridges): the error as [`WireError`].
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(tag = "status", rename_all = "snake_case", deny_unknown_fields)]
pub enum WireResponse<T> {
    Ok {
        data: T,
        #[serde(default)]
        page: Option<Page>,
    },
    Error {
        error: WireError,
    },
}

impl<T> WireResponse<T> {
    pub fn into_result(self) -> Result<T, WireError> {
        match self {
            Self::Ok { data, .. } => Ok(data),
            Self::Error { error } => Err(error),
        }
    }

    /// The data and its page (`None` for an answer that is not a page).
    pub fn into_paged(self) -> Result<(T, Option<Page>), WireError> {
        match self {
            Self::Ok { data, page } => Ok((data, page)),
            Self::Error { error } => Err(error),
        }
    }
}

/// The `structuredContent` of an answer: the envelope, never failing (a serialization
/// failure becomes an `internal` error envelope).
fn envelope_value<T: Serialize>(result: Result<T, ToolError>, page: Option<Page>) -> Value {
    let envelope = match result {
        Ok(data) => ToolResponse::Ok { data, page },
        Err(error) => ToolResponse::Error { error },
    };
    serde_json::to_value(&envelope).unwrap_or_else(|err| {
        tracing::error!(error = %err, "failed to serialize a tool response");
        let fallback: ToolResponse<()> = ToolResponse::Error {
            error: ToolError::internal(format!("Failed to serialize the response: {err}")),
        };
        serde_json::to_value(fallback).unwrap_or(Value::Null)
    })
}

/// A tool result carrying `value` as `structuredContent` and as JSON text.
fn structured(value: Value, is_error: bool) -> CallToolResult {
    if is_error {
        CallToolResult::structured_error(value)
    } else {
        CallToolResult::structured(value)
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
        structured(envelope_value(self.0, None), is_error)
    }
}

impl<T: Serialize> IntoCallToolResult for Reply<T> {
    fn into_call_tool_result(self) -> Result<CallToolResponse, rmcp::ErrorData> {
        Ok(self.into_call_result().into())
    }
}

/// What a list tool returns: the envelope's `data` is the page, and a `page` member beside
/// it says the total and the cursor of the next page, so a cut list never passes for a
/// whole one.
#[derive(Debug)]
pub struct PagedReply<T>(pub Result<Paged<T>, ToolError>);

impl<T> From<Result<Paged<T>, ToolError>> for PagedReply<T> {
    fn from(result: Result<Paged<T>, ToolError>) -> Self {
        Self(result)
    }
}

impl<T: Serialize> PagedReply<T> {
    pub fn into_call_result(self) -> CallToolResult {
        match self.0 {
            Ok(Paged { data, page }) => structured(envelope_value(Ok(data), Some(page)), false),
            Err(error) => structured(envelope_value::<()>(Err(error), None), true),
        }
    }
}

impl<T: Serialize> IntoCallToolResult for PagedReply<T> {
    fn into_call_tool_result(self) -> Result<CallToolResponse, rmcp::ErrorData> {
        Ok(self.into_call_result().into())
    }
}

/// A reply whose text block is readable markdown written for the model, while
/// `structuredContent` carries the same facts as the JSON envelope. Errors read
/// `❌ Error: <message>` followed by the hint.
#[derive(Debug)]
pub struct MarkdownReply<T> {
    result: Result<(T, String), ToolError>,
    page: Option<Page>,
}

impl<T> MarkdownReply<T> {
    pub fn ok(data: T, text: impl Into<String>) -> Self {
        Self {
            result: Ok((data, text.into())),
            page: None,
        }
    }

    /// One page of a list, with its markdown.
    pub fn paged(data: T, page: Page, text: impl Into<String>) -> Self {
        Self {
            result: Ok((data, text.into())),
            page: Some(page),
        }
    }

    pub fn err(error: ToolError) -> Self {
        Self {
            result: Err(error),
            page: None,
        }
    }
}

impl<T: Serialize> MarkdownReply<T> {
    pub fn into_call_result(self) -> CallToolResult {
        let (text, mut result) = match self.result {
            Ok((data, text)) => (text, structured(envelope_value(Ok(data), self.page), false)),
            Err(error) => {
                let text = format!("❌ Error: {}\n\n{}", error.message, error.hint_text());
                (
                    text,
                    structured(envelope_value::<()>(Err(error), None), true),
                )
            }
        };
        result.content = vec![rmcp::model::ContentBlock::text(text)];
        result
    }
}

impl<T: Serialize> IntoCallToolResult for MarkdownReply<T> {
    fn into_call_tool_result(self) -> Result<CallToolResponse, rmcp::ErrorData> {
        Ok(self.into_call_result().into())
    }
}

/// The `outputSchema` of a list tool whose page data is `T` (usually `Vec<Item>`): lean
/// ([`crate::lean`]).
pub fn paged_output_schema<T: JsonSchema + 'static>() -> Arc<JsonObject> {
    lean_schema::<T>(true)
}

/// The `outputSchema` of a tool whose data is `T`: the envelope around `T`, lean
/// ([`crate::lean`]).
pub fn output_schema<T: JsonSchema + 'static>() -> Arc<JsonObject> {
    lean_schema::<T>(false)
}

fn lean_schema<T: JsonSchema + 'static>(paged: bool) -> Arc<JsonObject> {
    let full = serde_json::to_value(schemars::schema_for!(T)).unwrap_or(Value::Null);
    match crate::lean::lean_envelope(crate::lean::lean_data(&full), paged) {
        Value::Object(object) => Arc::new(object),
        _ => Arc::new(JsonObject::new()),
    }
}

/// Remove schemars' Rust-specific `format`s (`uint32`, `int64`, `double`, …): they are not
/// JSON Schema formats, and validating clients (Ajv in the TypeScript SDK) warn about each
/// one. `minimum: 0` still says a number is unsigned.
pub fn strip_numeric_formats(value: &mut Value) {
    match value {
        Value::Object(map) => {
            let numeric = map.get("format").and_then(|f| f.as_str()).is_some_and(|f| {
                f.starts_with("int") || f.starts_with("uint") || f == "float" || f == "double"
            });
            if numeric {
                map.remove("format");
            }
            map.values_mut().for_each(strip_numeric_formats);
        }
        Value::Array(items) => items.iter_mut().for_each(strip_numeric_formats),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn ok_envelope_has_data_and_is_not_error() {
        let result = Reply::<_>(Ok(json!({"name": "main"}))).into_call_result();
        assert_eq!(result.is_error, Some(false));
        assert_eq!(
            result.structured_content,
            Some(json!({"status": "ok", "data": {"name": "main"}}))
        );
        let text = result.content[0].as_text().map(|t| t.text.clone());
        assert_eq!(
            text.as_deref(),
            Some(r#"{"data":{"name":"main"},"status":"ok"}"#)
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
            ToolError::new(crate::codes::INVALID_PARAMS, "Title cannot be empty")
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
    fn error_envelope_always_has_a_hint_and_retryability() {
        let result =
            Reply::<()>(Err(ToolError::not_found("Nothing by that name"))).into_call_result();
        assert_eq!(result.is_error, Some(true));
        assert_eq!(
            result.structured_content,
            Some(json!({"status": "error", "error": {
                "code": "not_found",
                "message": "Nothing by that name",
                "hint": crate::ErrorClass::NotFound.default_hint(),
                "retryable": false,
            }}))
        );
    }

    #[test]
    fn paged_reply_puts_page_beside_data() {
        let page = Page::new(5, Some("abc".into()));
        let result = PagedReply(Ok(Paged {
            data: vec![1, 2],
            page,
        }))
        .into_call_result();
        assert_eq!(
            result.structured_content,
            Some(
                json!({"status": "ok", "data": [1, 2], "page": {"next_cursor": "abc", "total": 5}})
            )
        );
        let back: WireResponse<Vec<u32>> =
            serde_json::from_value(result.structured_content.unwrap()).unwrap();
        let (data, page) = back.into_paged().unwrap();
        assert_eq!(data, vec![1, 2]);
        assert_eq!(page.unwrap().total, 5);
        let md = MarkdownReply::paged(json!([]), Page::new(0, None), "none").into_call_result();
        assert_eq!(
            md.structured_content,
            Some(json!({"status": "ok", "data": [], "page": {"total": 0}}))
        );
    }

    #[test]
    fn the_lean_envelope_names_status_data_and_page() {
        let schema = serde_json::to_value(&*paged_output_schema::<Vec<u32>>()).unwrap();
        assert_eq!(schema["required"], json!(["status"]));
        assert_eq!(
            schema["properties"]["status"],
            json!({"enum": ["ok", "error"]})
        );
        assert_eq!(schema["properties"]["data"]["type"], json!("array"));
        assert_eq!(schema["properties"]["page"], json!({"type": "object"}));
        // The error object is the same for every tool (and validates against each).
        assert_eq!(schema["properties"].get("error"), None);
        assert!(schema.get("$defs").is_none(), "{schema}");
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
        assert!(text.contains("\"count\":{\"type\":\"integer\"}"), "{text}");
    }

    #[test]
    fn output_schema_is_an_object_with_status() {
        let schema = output_schema::<Vec<String>>();
        assert_eq!(schema.get("type"), Some(&json!("object")));
        let props = schema.get("properties").and_then(|p| p.as_object());
        let props = props.map(|p| p.keys().cloned().collect::<Vec<_>>());
        assert_eq!(props, Some(vec!["data".to_string(), "status".to_string()]));
    }
}
