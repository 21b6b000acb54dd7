//! The foundation shared by every MCP server of this workspace.
//!
//! - [`envelope`]: the `{"status":"ok","data":…}` / `{"status":"error","error":…}` response
//!   envelope, the error-code vocabulary, and the conversion into an MCP `CallToolResult`
//!   that carries both a JSON text copy and `structuredContent` described by an `outputSchema`.
//! - [`params`]: a tool-argument extractor that turns malformed arguments into an
//!   `invalid_params` envelope instead of an opaque JSON-RPC error.
//! - [`serve`]: logging to stderr with `-v` levels and serving a handler over stdio.

pub mod envelope;
pub mod params;
pub mod serve;

pub use envelope::{
    ErrorCode, MarkdownReply, PageInfo, PagedReply, Reply, ToolError, ToolResponse, output_schema,
    paged_output_schema,
};
pub use params::Parameters;
