//! The protocol-level answers every server of this workspace gives the same way, so that no
//! server drifts from the others:
//!
//! - [`unknown_tool`] / [`unknown_tool_message`] / [`call_routed`]: a call of a tool the server does not offer
//!   names the tool and lists the ones it offers (rmcp's router says a bare "tool not found");
//! - [`not_declared`]: `-32601` for a method of a capability the server does not declare
//!   (rmcp answers `prompts/list` and the like with empty lists by default, which clients read
//!   as a capability served without being declared);
//! - [`resource_not_found`]: `-32002` with `data.uri`, the requested URI (SEP-2164);
//! - [`portable_input_schema`] / [`portable_router`]: tools' input schemas without type arrays
//!   or `null` types, which single-type dialects (the OpenAPI subset behind some clients'
//!   function declarations) reject or strip.

use std::sync::Arc;

use rmcp::ErrorData;
use rmcp::RoleServer;
use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::tool::ToolCallContext;
use rmcp::model::{CallToolRequestParams, CallToolResponse, ErrorCode, JsonObject};
use rmcp::service::RequestContext;
use serde_json::{Map, Value, json};

/// MCP's code for a resource that does not exist (SEP-2164).
pub const RESOURCE_NOT_FOUND: i32 = -32002;

/// How much of a client's tool name or method an error quotes.
const QUOTE: usize = 100;

/// "unknown tool `name`: the tools are a, b, c" (the name quoted as an excerpt).
pub fn unknown_tool_message<'a>(name: &str, tools: impl IntoIterator<Item = &'a str>) -> String {
    let tools: Vec<&str> = tools.into_iter().collect();
    let quoted = crate::text::excerpt(name, QUOTE);
    if tools.is_empty() {
        format!("unknown tool `{quoted}`: this server offers no tools")
    } else {
        format!(
            "unknown tool `{quoted}`: the tools are {}",
            tools.join(", ")
        )
    }
}

/// A call of a tool the server does not offer: `-32602` (the code MCP's specification gives
/// for an unknown tool, and the one rmcp's router used), naming the tool and listing
/// `tools`, with `data: {"tool", "tools"}` for clients that read it.
pub fn unknown_tool<'a>(name: &str, tools: impl IntoIterator<Item = &'a str>) -> ErrorData {
    let mut tools: Vec<&str> = tools.into_iter().collect();
    tools.sort_unstable();
    let message = unknown_tool_message(name, tools.iter().copied());
    ErrorData::new(
        ErrorCode::INVALID_PARAMS,
        message,
        Some(json!({
            "tool": crate::text::excerpt(name, QUOTE),
            "tools": tools,
            "retryable": false,
            "hint": "Call tools/list for the tools this server offers.",
        })),
    )
}

/// A tool call through `router` (what `#[tool_handler]` does), with a call of a tool the
/// router does not hold answered by [`unknown_tool`] instead of rmcp's bare "tool not found".
pub async fn call_routed<S: Send + Sync + 'static>(
    router: &ToolRouter<S>,
    service: &S,
    request: CallToolRequestParams,
    context: RequestContext<RoleServer>,
) -> Result<CallToolResponse, ErrorData> {
    if !router.has_route(&request.name) {
        let tools = router.list_all();
        return Err(unknown_tool(
            &request.name,
            tools.iter().map(|tool| tool.name.as_ref()),
        ));
    }
    let _running = crate::memory::call_started();
    router
        .call(ToolCallContext::new(service, request, context))
        .await
}

/// `-32601` for `method`, whose capability the server does not declare (`declared`: what it
/// does declare, for the message).
pub fn not_declared(method: &str, declared: &str) -> ErrorData {
    ErrorData::new(
        ErrorCode::METHOD_NOT_FOUND,
        format!(
            "unknown method `{}`: this server declares only {declared}",
            crate::text::excerpt(method, QUOTE)
        ),
        None,
    )
}

/// The most characters of a requested URI an error quotes back (`data.uri`).
pub const URI_SHOWN: usize = 1000;

/// `-32002` "Resource not found" for `uri`, with `message` and `data: {"uri"}` (SEP-2164;
/// a URI longer than [`URI_SHOWN`] characters is cut, never echoed whole).
pub fn resource_not_found(uri: &str, message: impl Into<String>) -> ErrorData {
    ErrorData::new(
        ErrorCode(RESOURCE_NOT_FOUND),
        message.into(),
        Some(json!({ "uri": crate::clip(uri, URI_SHOWN), "retryable": false })),
    )
}

/// `err` with `data.uri` = `uri` when it is a resource-not-found error (`-32002`) without
/// one: for servers whose resource readers build that error deep down, without the URI.
pub fn with_uri(mut err: ErrorData, uri: &str) -> ErrorData {
    if err.code.0 != RESOURCE_NOT_FOUND {
        return err;
    }
    match &mut err.data {
        Some(Value::Object(data)) => {
            data.entry("uri")
                .or_insert_with(|| Value::from(crate::clip(uri, URI_SHOWN)));
        }
        _ => err.data = Some(json!({ "uri": crate::clip(uri, URI_SHOWN), "retryable": false })),
    }
    err
}

/// `router` with every tool's input schema made portable ([`portable_input_schema`]).
pub fn portable_router<S>(mut router: ToolRouter<S>) -> ToolRouter<S> {
    for route in router.map.values_mut() {
        route.attr.input_schema = portable_schema(&route.attr.input_schema);
    }
    router
}

/// An input schema as a new shared object, made portable, without its `$schema` (MCP's
/// default dialect, 2020-12, is what schemars writes: naming it in every tool of a listing
/// only costs bytes) or schemars' Rust number formats (`int64`…, not JSON Schema's).
pub fn portable_schema(schema: &Arc<JsonObject>) -> Arc<JsonObject> {
    let mut value = Value::Object(schema.as_ref().clone());
    if let Value::Object(map) = &mut value {
        map.remove("$schema");
    }
    crate::envelope::strip_numeric_formats(&mut value);
    portable_input_schema(&mut value);
    match value {
        Value::Object(map) => Arc::new(map),
        _ => schema.clone(),
    }
}

/// Rewrite a JSON Schema (everywhere in it, `$defs` included) so that single-type dialects
/// accept it: schemars writes `Option<T>` as `"type": ["T", "null"]` (or `anyOf` with a
/// `{"type": "null"}` alternative, or `null` in an `enum`). An optional property is simply not
/// required, so the `null` goes: a type array keeps its other type (several become `anyOf`),
/// a `null` alternative of `anyOf`/`oneOf` goes (one alternative left is merged into its parent), and
/// `null` leaves an `enum`. A schema that must let a client send `null` explicitly says so
/// by hand as `anyOf: [{…}, {"type": "null"}]` after this step.
pub fn portable_input_schema(value: &mut Value) {
    match value {
        Value::Object(map) => {
            // This schema first: its `null` alternatives are recognised before they are cleaned.
            portable_object(map);
            for child in map.values_mut() {
                portable_input_schema(child);
            }
        }
        Value::Array(items) => items.iter_mut().for_each(portable_input_schema),
        _ => {}
    }
}

fn portable_object(map: &mut Map<String, Value>) {
    if let Some(Value::Array(types)) = map.get("type") {
        let kept: Vec<Value> = types
            .iter()
            .filter(|t| t.as_str() != Some("null"))
            .cloned()
            .collect();
        match kept.as_slice() {
            [] => {
                map.remove("type");
            }
            [one] => {
                map.insert("type".into(), one.clone());
            }
            _ => {
                map.remove("type");
                let alternatives = kept.into_iter().map(|t| json!({ "type": t })).collect();
                map.insert("anyOf".into(), Value::Array(alternatives));
            }
        }
    }
    if let Some(Value::Array(values)) = map.get_mut("enum") {
        values.retain(|v| !v.is_null());
    }
    for key in ["anyOf", "oneOf"] {
        let Some(Value::Array(alternatives)) = map.get_mut(key) else {
            continue;
        };
        alternatives.retain(|b| !is_null_schema(b));
        if alternatives.len() == 1 {
            let Some(Value::Object(only)) = alternatives.pop() else {
                continue;
            };
            map.remove(key);
            for (k, v) in only {
                map.entry(k).or_insert(v);
            }
        }
    }
    if map.get("type").and_then(Value::as_str) == Some("null") {
        map.remove("type");
    }
    if map.get("const").is_some_and(Value::is_null) {
        map.remove("const");
    }
    if map.get("default").is_some_and(Value::is_null) {
        map.remove("default");
    }
}

fn is_null_schema(schema: &Value) -> bool {
    let Value::Object(map) = schema else {
        return false;
    };
    map.get("type").and_then(Value::as_str) == Some("null")
        || map.get("const").is_some_and(Value::is_null)
        || map
            .get("enum")
            .and_then(Value::as_array)
            .is_some_and(|values| values.iter().all(Value::is_null))
}

/// The first place in `schema` that a single-type dialect rejects, if any: a type array, or
/// a `null` type anywhere but as a alternative of `anyOf` (the explicit form of "may be null").
pub fn first_unportable(schema: &Value) -> Option<String> {
    fn walk(value: &Value, path: &str, in_any_of: bool) -> Option<String> {
        match value {
            Value::Object(map) => {
                match map.get("type") {
                    Some(Value::Array(_)) => return Some(format!("{path}: a type array")),
                    Some(Value::String(t)) if t == "null" && !in_any_of => {
                        return Some(format!("{path}: a null type"));
                    }
                    _ => {}
                }
                map.iter().find_map(|(key, child)| {
                    let path = format!("{path}/{key}");
                    match (key.as_str(), child) {
                        ("anyOf", Value::Array(alternatives)) => alternatives
                            .iter()
                            .enumerate()
                            .find_map(|(i, b)| walk(b, &format!("{path}/{i}"), true)),
                        _ => walk(child, &path, false),
                    }
                })
            }
            Value::Array(items) => items
                .iter()
                .enumerate()
                .find_map(|(i, item)| walk(item, &format!("{path}/{i}"), false)),
            _ => None,
        }
    }
    walk(schema, "", false)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn nullable_forms_become_optional_ones() {
        let mut schema = json!({
            "type": "object",
            "properties": {
                "a": {"type": ["string", "null"], "default": null},
                "b": {"anyOf": [{"$ref": "#/$defs/X"}, {"type": "null"}], "description": "d"},
                "c": {"type": ["integer", "string", "null"]},
                "d": {"enum": ["x", null], "type": ["string", "null"]},
            },
            "$defs": {"X": {"type": "object", "properties": {"y": {"type": ["boolean", "null"]}}}}
        });
        portable_input_schema(&mut schema);
        assert_eq!(first_unportable(&schema), None, "{schema}");
        assert_eq!(schema["properties"]["a"], json!({"type": "string"}));
        assert_eq!(
            schema["properties"]["b"],
            json!({"$ref": "#/$defs/X", "description": "d"})
        );
        assert_eq!(
            schema["properties"]["c"],
            json!({"anyOf": [{"type": "integer"}, {"type": "string"}]})
        );
        assert_eq!(
            schema["properties"]["d"],
            json!({"type": "string", "enum": ["x"]})
        );
        assert_eq!(
            schema["$defs"]["X"]["properties"]["y"],
            json!({"type": "boolean"})
        );
        let explicit = json!({"anyOf": [{"type": "string"}, {"type": "null"}]});
        assert_eq!(first_unportable(&explicit), None);
        assert!(first_unportable(&json!({"x": {"type": ["a", "null"]}})).is_some());
    }

    #[test]
    fn an_unknown_tool_is_named_with_the_tools() {
        let err = unknown_tool("nope", ["b", "a"]);
        assert_eq!(err.message, "unknown tool `nope`: the tools are a, b");
        assert_eq!(err.data.unwrap()["tools"], json!(["a", "b"]));
    }
}
