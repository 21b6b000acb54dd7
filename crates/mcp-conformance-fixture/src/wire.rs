//! The suite's constants, and how the modules write answers: as JSON in the suite's format,
//! turned into rmcp's types.

use rmcp::ErrorData;
use rmcp::RoleServer;
use rmcp::model::CallToolResponse;
use rmcp::service::RequestContext;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};

/// The first protocol version of the stateless wire (per-request `_meta`, no sessions).
pub const STATELESS_VERSION: &str = "2026-07-28";

/// A 1×1 red PNG (the suite's test image).
pub const TEST_IMAGE_BASE64: &str = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==";

/// A minimal WAV file (the suite's test audio).
pub const TEST_AUDIO_BASE64: &str = "UklGRiYAAABXQVZFZm10IBAAAAABAAEAQB8AAAB9AAACABAAZGF0YQIAAAA=";

/// Whether the request of `context` speaks the stateless wire (2026-07-28 or later).
pub fn is_stateless(context: &RequestContext<RoleServer>) -> bool {
    context
        .protocol_version()
        .is_some_and(|version| version.as_str() >= STATELESS_VERSION)
}

/// A wire value (written here as JSON, in the suite's format) as rmcp's type.
pub fn wire<T: DeserializeOwned>(value: Value) -> Result<T, ErrorData> {
    serde_json::from_value(value).map_err(|err| {
        ErrorData::internal_error(format!("the fixture built a malformed answer: {err}"), None)
    })
}

/// A result (written here as JSON) as rmcp's type, marked `resultType: "complete"` as rmcp's
/// own constructors mark it (a 2026-07-28 result must carry it; rmcp strips it for older
/// peers). Deserialized results leave it out.
pub fn result_of<T: DeserializeOwned>(mut value: Value) -> Result<T, ErrorData> {
    if let Value::Object(map) = &mut value {
        map.entry("resultType")
            .or_insert_with(|| Value::from("complete"));
    }
    wire(value)
}

/// The string at `pointer` in `value`, if there is one.
pub fn text_at<'a>(value: Option<&'a Value>, pointer: &str) -> Option<&'a str> {
    value?.pointer(pointer)?.as_str()
}

/// A complete tool result of `content`.
pub fn content(content: Value) -> Result<CallToolResponse, ErrorData> {
    result_of::<rmcp::model::CallToolResult>(json!({ "content": content })).map(Into::into)
}

/// A complete tool result of one text.
pub fn text(text: impl Into<String>) -> Result<CallToolResponse, ErrorData> {
    content(json!([{"type": "text", "text": text.into()}]))
}
