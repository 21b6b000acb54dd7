//! Tool arguments that fail to deserialize become an `invalid_params` envelope.
//!
//! rmcp's own `Parameters<T>` answers a malformed argument with a JSON-RPC protocol error,
//! which MCP clients render opaquely ("tool result missing"). Ours hands the handler a
//! `Result`, so the caller reads a structured error with a hint, like every other failure.
//! The type keeps the name `Parameters` because rmcp's `#[tool]` macro derives the
//! `inputSchema` from an argument of that name.

use std::borrow::Cow;

use rmcp::handler::server::{common::FromContextPart, tool::ToolCallContext};
use schemars::{JsonSchema, Schema, SchemaGenerator};
use serde::de::DeserializeOwned;

use crate::error::ToolError;

/// The deserialized arguments of a tool call, or the `invalid_params` error describing why
/// they could not be read.
#[derive(Debug)]
pub struct Parameters<T>(pub Result<T, ToolError>);

impl<T> Parameters<T> {
    /// The arguments, or the error to return to the caller.
    pub fn into_inner(self) -> Result<T, ToolError> {
        self.0
    }
}

impl<T: JsonSchema> JsonSchema for Parameters<T> {
    fn schema_name() -> Cow<'static, str> {
        T::schema_name()
    }

    fn schema_id() -> Cow<'static, str> {
        T::schema_id()
    }

    fn json_schema(generator: &mut SchemaGenerator) -> Schema {
        let mut value = T::json_schema(generator).to_value();
        crate::envelope::strip_numeric_formats(&mut value);
        Schema::try_from(value).unwrap_or_else(|_| T::json_schema(generator))
    }

    fn inline_schema() -> bool {
        T::inline_schema()
    }
}

impl<S, T: DeserializeOwned> FromContextPart<ToolCallContext<'_, S>> for Parameters<T> {
    fn from_context_part(context: &mut ToolCallContext<'_, S>) -> Result<Self, rmcp::ErrorData> {
        let arguments = context.arguments.take().unwrap_or_default();
        let parsed = serde_json::from_value(serde_json::Value::Object(arguments)).map_err(|err| {
            // Never the whole of what was sent: a value or a name may be megabytes.
            ToolError::invalid_params(format!(
                "Invalid arguments: {}",
                mcp_common_core::clip(&err.to_string(), 300)
            ))
            .with_hint("Check the tool's inputSchema for parameter names and types.")
        });
        Ok(Self(parsed))
    }
}
