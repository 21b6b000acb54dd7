//! The JSON Schemas of the tools' definitions, as rmcp holds them: what the reads
//! ([`crate::server`]) and the writes ([`crate::writes`]) describe their arguments and
//! answers with.

use std::sync::Arc;

use rmcp::model::{JsonObject, Tool, ToolAnnotations};
use serde_json::{Value, json};

/// A JSON Schema as rmcp holds it (anything but an object becomes `{}`).
pub(crate) fn schema(value: Value) -> Arc<JsonObject> {
    match value {
        Value::Object(map) => Arc::new(map),
        _ => Arc::new(JsonObject::new()),
    }
}

/// The `entity` argument of the writes: upstream git-mile's tasks are written too.
pub(crate) fn entity_schema() -> Value {
    read_entity_schema()
}

/// The `entity` argument of the reads, which read upstream git-mile's tasks too (the
/// listing's description says so).
pub(crate) fn read_entity_schema() -> Value {
    json!({
        "type": "string",
        "enum": ["issue", "milestone", "task"]
    })
}

/// The `outputSchema` of a tool whose answer is `T`, with root `type: object` as MCP requires
/// (a schema of alternatives has none of its own).
/// Lean ([`mcp_common::lean`]): the answer's fields typed, nothing nested described.
pub(crate) fn output_schema<T: schemars::JsonSchema + 'static>() -> Arc<JsonObject> {
    let full = serde_json::to_value(schemars::schema_for!(T)).unwrap_or(Value::Null);
    let mut value = mcp_common::lean::lean_data(&full);
    if let Value::Object(map) = &mut value {
        map.entry("type").or_insert_with(|| json!("object"));
    }
    schema(value)
}

/// The `id` argument of the tools that name one entity.
pub(crate) fn id_schema() -> Value {
    json!({
        "type": "string",
        "description": "Id or a 4+ character prefix."
    })
}

/// The `cursor` argument of the tools that page.
pub(crate) fn cursor_schema() -> Value {
    json!({
        "type": "string",
        "description": "The previous page's nextCursor."
    })
}

/// A tool's definition: its name, description, input schema, annotations (its title and
/// hints: [`read_hints`], [`write_hints`]) and output schema.
pub(crate) fn tool(
    name: &'static str,
    description: &'static str,
    input: Value,
    hints: ToolAnnotations,
    output: Arc<JsonObject>,
) -> Tool {
    let mut tool = Tool::new(name, description, schema(input));
    tool.annotations = Some(hints);
    tool.output_schema = Some(output);
    tool
}

/// The annotations of a read titled `title`: read-only and idempotent.
pub(crate) fn read_hints(title: &'static str) -> ToolAnnotations {
    ToolAnnotations::with_title(title)
        .read_only(true)
        .idempotent(true)
}

/// The annotations of a write titled `title`: not read-only, not destructive (nothing is
/// ever lost: every change is an event), idempotent or not.
pub(crate) fn write_hints(title: &'static str, idempotent: bool) -> ToolAnnotations {
    ToolAnnotations::with_title(title)
        .read_only(false)
        .destructive(false)
        .idempotent(idempotent)
}
