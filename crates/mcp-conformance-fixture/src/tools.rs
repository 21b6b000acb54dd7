//! The tools that answer at once (content of every kind, an error, logging, progress, the
//! diagnostic tools of the stateless scenarios), and the ones that ask the client for
//! sampling or elicitation within a 2025-11-25 session (server-to-client requests on the
//! call's own stream).

// Logging and sampling are 2025-11-25 features the scenarios test (see `server`).
#![allow(deprecated)]

use std::time::Duration;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, ClientCapabilities, CustomRequest, LoggingLevel,
    LoggingMessageNotificationParam, ProgressNotificationParam, ServerRequest,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer};
use serde_json::{Value, json};

use crate::state::{Fixture, ListChange, level_rank};
use crate::wire::{
    TEST_AUDIO_BASE64, TEST_IMAGE_BASE64, content as result, is_stateless, result_of, text,
    text_at, wire,
};

/// The logger the log messages name.
const LOGGER: &str = "conformance-test-server";

/// A tool without arguments.
fn plain(name: &str, description: &str) -> Value {
    json!({"name": name, "description": description, "inputSchema": {"type": "object", "properties": {}}})
}

/// A tool with one required string argument.
fn with_string(name: &str, description: &str, argument: &str, about: &str) -> Value {
    json!({
        "name": name,
        "description": description,
        "inputSchema": {
            "type": "object",
            "properties": {argument: {"type": "string", "description": about}},
            "required": [argument],
        },
    })
}

/// The JSON Schema 2020-12 input schema of `json_schema_2020_12_tool` (SEP-1613, SEP-2106):
/// `$schema`, `$defs` with an `$anchor`, `$ref`, composition and conditionals, as written.
fn json_schema_2020_12() -> Value {
    json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "type": "object",
        "$defs": {
            "address": {
                "$anchor": "addressDef",
                "type": "object",
                "properties": {"street": {"type": "string"}, "city": {"type": "string"}},
            },
        },
        "properties": {
            "name": {"type": "string"},
            "address": {"$ref": "#/$defs/address"},
            "contactMethod": {"type": "string", "enum": ["phone", "email"]},
            "phone": {"type": "string"},
            "email": {"type": "string"},
        },
        "allOf": [{"anyOf": [{"required": ["phone"]}, {"required": ["email"]}]}],
        "if": {"properties": {"contactMethod": {"const": "phone"}}, "required": ["contactMethod"]},
        "then": {"required": ["phone"]},
        "else": {"required": ["email"]},
        "additionalProperties": false,
    })
}

/// The tools of either wire: the ones both serve; those that send requests to the client in
/// a session; the diagnostic ones of the stateless wire (the input-required ones are
/// [`crate::mrtr`]'s).
pub fn list(stateless: bool) -> Vec<Value> {
    let mut tools = vec![
        plain("test_simple_text", "Tests simple text content response"),
        plain("test_image_content", "Tests image content response"),
        plain("test_audio_content", "Tests audio content response"),
        plain(
            "test_embedded_resource",
            "Tests embedded resource content response",
        ),
        plain(
            "test_multiple_content_types",
            "Tests response with multiple content types (text, image, resource)",
        ),
        plain(
            "test_tool_with_logging",
            "Tests tool that emits log messages during execution",
        ),
        plain(
            "test_tool_with_progress",
            "Tests tool that reports progress notifications",
        ),
        plain("test_error_handling", "Tests error response handling"),
        json!({
            "name": "json_schema_2020_12_tool",
            "description": "Tool with JSON Schema 2020-12 features for conformance testing (SEP-1613)",
            "inputSchema": json_schema_2020_12(),
        }),
    ];
    if stateless {
        tools.extend([
            plain(
                "test_missing_capability",
                "Test tool requiring sampling: refused (-32021) when the client does not declare it",
            ),
            plain(
                "test_streaming_elicitation",
                "Diagnostic tool validating response progress streams",
            ),
            plain("test_logging_tool", "Diagnostic logging validator tool"),
            plain(
                "test_trigger_tool_change",
                "Tells subscriptions/listen streams that the tool list changed",
            ),
            plain(
                "test_trigger_prompt_change",
                "Tells subscriptions/listen streams that the prompt list changed",
            ),
        ]);
    } else {
        tools.extend([
            with_string(
                "test_sampling",
                "Tests server-initiated sampling (LLM completion request)",
                "prompt",
                "The prompt to send to the LLM",
            ),
            with_string(
                "test_elicitation",
                "Tests server-initiated elicitation (user input request)",
                "message",
                "The message to show the user",
            ),
            plain(
                "test_elicitation_sep1034_defaults",
                "Tests elicitation with default values per SEP-1034",
            ),
            plain(
                "test_elicitation_sep1330_enums",
                "Tests elicitation with enum schema improvements per SEP-1330",
            ),
        ]);
    }
    tools
}

/// Call the tool `request` names, one of [`list`]'s for its wire (the server checked).
pub async fn call(
    fixture: &Fixture,
    request: CallToolRequestParams,
    context: RequestContext<RoleServer>,
) -> Result<CallToolResponse, ErrorData> {
    let stateless = is_stateless(&context);
    let arguments = request.arguments.clone().unwrap_or_default();
    let argument = |name: &str| {
        arguments
            .get(name)
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string()
    };
    match (request.name.as_ref(), stateless) {
        ("test_simple_text", _) => text("This is a simple text response for testing."),
        ("test_image_content", _) => result(
            json!([{"type": "image", "data": TEST_IMAGE_BASE64, "mimeType": "image/png"}]),
        ),
        ("test_audio_content", _) => result(
            json!([{"type": "audio", "data": TEST_AUDIO_BASE64, "mimeType": "audio/wav"}]),
        ),
        ("test_embedded_resource", _) => result(json!([{
            "type": "resource",
            "resource": {
                "uri": "test://embedded-resource",
                "mimeType": "text/plain",
                "text": "This is an embedded resource content.",
            },
        }])),
        ("test_multiple_content_types", _) => result(json!([
            {"type": "text", "text": "Multiple content types test:"},
            {"type": "image", "data": TEST_IMAGE_BASE64, "mimeType": "image/png"},
            {
                "type": "resource",
                "resource": {
                    "uri": "test://mixed-content-resource",
                    "mimeType": "application/json",
                    "text": json!({"test": "data", "value": 123}).to_string(),
                },
            },
        ])),
        ("test_tool_with_logging", _) => {
            for (i, message) in [
                "Tool execution started",
                "Tool processing data",
                "Tool execution completed",
            ]
            .into_iter()
            .enumerate()
            {
                if i > 0 {
                    tokio::time::sleep(Duration::from_millis(50)).await;
                }
                log(fixture, &context, LoggingLevel::Info, message).await;
            }
            text("Tool with logging executed successfully")
        }
        ("test_tool_with_progress", _) => {
            let token = context.meta.get_progress_token();
            if let Some(token) = &token {
                for (i, step) in [0u32, 50, 100].into_iter().enumerate() {
                    if i > 0 {
                        tokio::time::sleep(Duration::from_millis(50)).await;
                    }
                    let mut param = ProgressNotificationParam::new(token.clone(), f64::from(step))
                        .with_total(100.0);
                    param.message = Some(format!("Completed step {step} of 100"));
                    if let Err(err) = context.peer.notify_progress(param).await {
                        tracing::debug!(%err, "could not send progress");
                    }
                }
            }
            let shown = token
                .and_then(|token| serde_json::to_value(token).ok())
                .map_or_else(
                    || "0".to_string(),
                    |value| match value {
                        Value::String(s) => s,
                        other => other.to_string(),
                    },
                );
            text(shown)
        }
        ("test_error_handling", _) => result_of::<rmcp::model::CallToolResult>(json!({
            "content": [{"type": "text", "text": "This tool intentionally returns an error for testing"}],
            "isError": true,
        }))
        .map(Into::into),
        ("json_schema_2020_12_tool", _) => text(format!(
            "JSON Schema 2020-12 tool called with: {}",
            Value::Object(arguments.clone())
        )),
        ("test_missing_capability", true) => {
            let sampling = context
                .client_capabilities()
                .is_some_and(|capabilities| capabilities.sampling.is_some());
            if !sampling {
                let required: ClientCapabilities = wire(json!({"sampling": {}}))?;
                return Err(ErrorData::missing_required_client_capability(required));
            }
            text("Success")
        }
        ("test_streaming_elicitation", true) => {
            // Only notifications may precede the answer on a request's stream.
            if let Some(token) = context.meta.get_progress_token() {
                let param = ProgressNotificationParam::new(token, 50.0).with_total(100.0);
                if let Err(err) = context.peer.notify_progress(param).await {
                    tracing::debug!(%err, "could not send progress");
                }
            }
            text("Streaming complete")
        }
        ("test_logging_tool", true) => {
            log(
                fixture,
                &context,
                LoggingLevel::Info,
                "Diagnostic trace logging activated",
            )
            .await;
            text("Logging evaluated")
        }
        ("test_trigger_tool_change", true) => {
            fixture.changed(ListChange::Tools);
            text("Mutation triggered")
        }
        ("test_trigger_prompt_change", true) => {
            fixture.changed(ListChange::Prompts);
            text("Mutation triggered")
        }
        ("test_sampling", false) => {
            let params = json!({
                "messages": [{"role": "user", "content": {"type": "text", "text": argument("prompt")}}],
                "maxTokens": 100,
            });
            match ask_client(&context, "sampling/createMessage", params).await {
                Ok(answer) => {
                    let said = text_at(Some(&answer), "/content/text")
                        .or_else(|| text_at(Some(&answer), "/message/content/text"))
                        .unwrap_or("No response");
                    text(format!("LLM response: {said}"))
                }
                Err(err) => text(format!("Sampling not supported or error: {err}")),
            }
        }
        ("test_elicitation", false) => {
            let params = json!({
                "message": argument("message"),
                "requestedSchema": {
                    "type": "object",
                    "properties": {"response": {"type": "string", "description": "User's response"}},
                    "required": ["response"],
                },
            });
            elicit(&context, params, "User response").await
        }
        ("test_elicitation_sep1034_defaults", false) => {
            elicit(&context, sep1034_defaults(), "Elicitation completed").await
        }
        ("test_elicitation_sep1330_enums", false) => {
            elicit(&context, sep1330_enums(), "Elicitation completed").await
        }
        (name, _) => Err(ErrorData::internal_error(
            format!("`{name}` is not a tool of this module on this wire"),
            None,
        )),
    }
}

/// Send a log message at `level`, when the level the client asked for lets it through.
async fn log(
    fixture: &Fixture,
    context: &RequestContext<RoleServer>,
    level: LoggingLevel,
    message: &str,
) {
    if !fixture.logs(context, level_rank(level)) {
        return;
    }
    let mut param = LoggingMessageNotificationParam::new(level, Value::from(message));
    param.logger = Some(LOGGER.to_string());
    if let Err(err) = context.peer.notify_logging_message(param).await {
        tracing::debug!(%err, "could not send a log message");
    }
}

/// Send `method` with `params` to the client (on the call's stream) and return its answer
/// as JSON.
async fn ask_client(
    context: &RequestContext<RoleServer>,
    method: &str,
    params: Value,
) -> Result<Value, String> {
    let request = ServerRequest::CustomRequest(CustomRequest::new(method, Some(params)));
    let answer = context
        .peer
        .send_request(request)
        .await
        .map_err(|err| err.to_string())?;
    serde_json::to_value(answer).map_err(|err| err.to_string())
}

/// Elicit with `params` and answer `"{prefix}: action=…, content=…"`.
async fn elicit(
    context: &RequestContext<RoleServer>,
    params: Value,
    prefix: &str,
) -> Result<CallToolResponse, ErrorData> {
    match ask_client(context, "elicitation/create", params).await {
        Ok(answer) => {
            let action = text_at(Some(&answer), "/action").unwrap_or("unknown");
            let content = answer.get("content").cloned().unwrap_or_else(|| json!({}));
            text(format!("{prefix}: action={action}, content={content}"))
        }
        Err(err) => text(format!("Elicitation not supported or error: {err}")),
    }
}

/// The form of SEP-1034: a default for every primitive type.
fn sep1034_defaults() -> Value {
    json!({
        "message": "Please review and update the form fields with defaults",
        "requestedSchema": {
            "type": "object",
            "properties": {
                "name": {"type": "string", "description": "User name", "default": "John Doe"},
                "age": {"type": "integer", "description": "User age", "default": 30},
                "score": {"type": "number", "description": "User score", "default": 95.5},
                "status": {
                    "type": "string",
                    "description": "User status",
                    "enum": ["active", "inactive", "pending"],
                    "default": "active",
                },
                "verified": {"type": "boolean", "description": "Verification status", "default": true},
            },
            "required": [],
        },
    })
}

/// The form of SEP-1330: the five enum forms (untitled and titled, single and multiple
/// choice, and the legacy `enumNames`).
fn sep1330_enums() -> Value {
    json!({
        "message": "Please select options from the enum fields",
        "requestedSchema": {
            "type": "object",
            "properties": {
                "untitledSingle": {
                    "type": "string",
                    "description": "Select one option",
                    "enum": ["option1", "option2", "option3"],
                },
                "titledSingle": {
                    "type": "string",
                    "description": "Select one option with titles",
                    "oneOf": [
                        {"const": "value1", "title": "First Option"},
                        {"const": "value2", "title": "Second Option"},
                        {"const": "value3", "title": "Third Option"},
                    ],
                },
                "legacyEnum": {
                    "type": "string",
                    "description": "Select one option (legacy)",
                    "enum": ["opt1", "opt2", "opt3"],
                    "enumNames": ["Option One", "Option Two", "Option Three"],
                },
                "untitledMulti": {
                    "type": "array",
                    "description": "Select multiple options",
                    "minItems": 1,
                    "maxItems": 3,
                    "items": {"type": "string", "enum": ["option1", "option2", "option3"]},
                },
                "titledMulti": {
                    "type": "array",
                    "description": "Select multiple options with titles",
                    "minItems": 1,
                    "maxItems": 3,
                    "items": {
                        "anyOf": [
                            {"const": "value1", "title": "First Choice"},
                            {"const": "value2", "title": "Second Choice"},
                            {"const": "value3", "title": "Third Choice"},
                        ],
                    },
                },
            },
            "required": [],
        },
    })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn every_tool_is_listed_once_with_a_valid_name_on_its_wire() {
        for stateless in [false, true] {
            let listed = list(stateless);
            let names: Vec<&str> = listed.iter().filter_map(|t| t["name"].as_str()).collect();
            let mut unique = names.clone();
            unique.sort_unstable();
            unique.dedup();
            assert_eq!(unique.len(), names.len(), "{names:?}");
            assert!(names.iter().all(|n| {
                (1..=64).contains(&n.len())
                    && n.chars()
                        .all(|c| c.is_ascii_alphanumeric() || "_./-".contains(c))
            }));
            assert!(names.contains(&"test_simple_text"));
            // Server-to-client requests in a session; input-required results stateless.
            assert_eq!(names.contains(&"test_sampling"), !stateless);
            assert_eq!(names.contains(&"test_missing_capability"), stateless);
        }
    }

    #[test]
    fn the_2020_12_schema_is_listed_as_written() {
        let listed: rmcp::model::ListToolsResult = wire(json!({ "tools": list(false) })).unwrap();
        let tool = listed
            .tools
            .iter()
            .find(|t| t.name == "json_schema_2020_12_tool")
            .unwrap();
        let schema = Value::Object(tool.input_schema.as_ref().clone());
        assert_eq!(schema, json_schema_2020_12());
    }
}
