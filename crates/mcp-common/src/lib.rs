//! The service kit shared by every MCP server of this workspace: one way to fail, to page and
//! to serve. It names no server's domain.
//!
//! - [`error`]: an error is a code plus a class; the class decides `isError`/protocol error,
//!   the JSON-RPC code, the HTTP status and whether retrying helps. Generic codes only.
//! - [`envelope`]: the `{"status":"ok","data":…,"page"?}` / `{"status":"error","error":…}`
//!   envelope, as `structuredContent` with a text copy, and its `outputSchema`.
//! - [`page`]: `limit` plus signed, query-bound cursors, and the `page` object.
//! - [`params`]: a tool-argument extractor that turns malformed arguments into an
//!   `invalid_params` envelope instead of an opaque JSON-RPC error.
//! - [`serve`]: logging, the `--http ADDR` flag, and one entry point that serves a handler
//!   factory over stdio or Streamable HTTP ([`http`]), with [`stdio`]'s optional `shutdown`.
//! - [`edge`]: what every message must be before a handler sees it, over both transports.
//! - [`connections`]: HTTP connections served with read deadlines and drained on stop.

pub mod connections;
pub mod edge;
pub mod envelope;
pub mod error;
pub mod http;
pub mod page;
pub mod params;
pub mod serve;
pub mod stdio;

pub use envelope::{
    MarkdownReply, Paged, PagedReply, Reply, ToolResponse, WireResponse, output_schema,
    paged_output_schema,
};
pub use error::{ErrorClass, ErrorCode, ToolError, WireError, codes};
pub use page::{CursorKey, Cursors, Limit, Page};
pub use params::Parameters;
