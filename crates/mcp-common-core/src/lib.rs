//! The dependency-light core of the service kit (`mcp-common`): what a domain needs to fail,
//! to page and to quote input, without knowing MCP or HTTP. It depends on serde, schemars,
//! BLAKE3, base64, uuid and tracing only, so a domain crate can speak it while its transports stay out of
//! its build; `mcp-common` re-exports all of it.
//!
//! - [`error`]: an error is a code plus a class; the class decides whether retrying helps,
//!   the JSON-RPC code and the HTTP status. Generic codes only.
//! - [`page`]: `limit` plus signed, query-bound cursors, the `page` object, a [`Paged`] result.
//! - [`text`]: excerpts of someone's input for a message: never echoed whole.

pub mod error;
pub mod page;
pub mod text;

pub use error::{ErrorClass, ErrorCode, ToolError, WireError, codes};
pub use page::{CursorKey, Cursors, Limit, Page, Paged};
pub use text::{clip, excerpt};

/// The longest message the protocol edge takes, in bytes (a stdio line, an HTTP body).
pub const MAX_MESSAGE_BYTES: usize = 4 * 1024 * 1024;
