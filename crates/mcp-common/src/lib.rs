//! The service kit shared by every MCP server of this workspace: one way to fail, to page and
//! to serve. It names no server's domain.
//!
//! - [`error`], [`page`], [`text`]: re-exported from `mcp-common-core`, the kit's light core
//!   (errors with classes, signed cursors, excerpts) that domain crates use without the rest;
//!   [`jsonrpc`] turns such an error into rmcp's JSON-RPC error.
//! - [`envelope`]: the `{"status":"ok","data":…,"page"?}` / `{"status":"error","error":…}`
//!   envelope, as `structuredContent` with a text copy, and its `outputSchema`, lean
//!   ([`lean`]: the answer's fields typed, nothing nested described).
//! - [`params`]: a tool-argument extractor that turns malformed arguments into an
//!   `invalid_params` envelope instead of an opaque JSON-RPC error.
//! - [`serve`]: logging, the `--http ADDR` flag, and one entry point that serves a handler
//!   factory over stdio or Streamable HTTP ([`http`]), with [`stdio`]'s optional `shutdown`.
//! - [`edge`]: what every message must be before a handler sees it, over both transports.
//! - [`protocol`]: the protocol-level answers every server gives alike (unknown tools,
//!   undeclared methods, resources not found) and portable input schemas.
//! - [`connections`]: HTTP connections served with read deadlines and drained on stop.
//! - [`sessions`]: the HTTP sessions' owners, fair shares and bounds.
//!
//! Streamable HTTP ([`http`], [`connections`], `--http`) is the default `http` feature; a
//! build without it serves stdio alone, without axum or hyper.
//! - [`signal`]: the termination signals that stop a server.
//! - [`subscribe`]: resource subscriptions as a server accepts them, in both protocol
//!   generations.
//! - [`ask`]: confirmations and choices put to the user through the client (MRTR,
//!   2026-07-28), with signed request state bound to the caller.
//! - [`surface`]: which tools a server offers: toolsets, an allow-list and the read-only
//!   mode, the same options for every server.

pub mod ask;
#[cfg(feature = "http")]
mod body;
#[cfg(feature = "http")]
pub mod connections;
pub mod edge;
pub mod envelope;
#[cfg(feature = "http")]
pub mod http;
pub mod jsonrpc;
pub mod lean;
pub mod memory;
pub mod params;
pub mod protocol;
pub mod serve;
#[cfg(feature = "http")]
pub mod sessions;
pub mod signal;
pub mod start;
pub mod stdio;
pub mod subscribe;
pub mod surface;

pub use envelope::{
    MarkdownReply, PagedReply, Reply, ToolResponse, WireResponse, output_schema,
    paged_output_schema,
};
pub use jsonrpc::ToJsonRpc;
pub use mcp_common_core::MAX_MESSAGE_BYTES;
pub use mcp_common_core::{
    CursorKey, Cursors, ErrorClass, ErrorCode, Limit, Page, Paged, ToolError, WireError, clip,
    codes, error, excerpt, page, text,
};
pub use params::Parameters;
