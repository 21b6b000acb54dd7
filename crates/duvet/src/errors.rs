//! duvet's error codes: its one domain code, and the generic codes of the service kit it
//! uses. The wire names are those of the contract and the README.

pub use mcp_common::codes::{INTERNAL, INVALID_PARAMS, NOT_FOUND};
use mcp_common::{ErrorClass, ErrorCode};

/// There is no Duvet project where the server runs (no `.duvet/config.toml` and no legacy
/// flags, or the configuration cannot be read): every tool needs one. Not retryable as such,
/// though the server picks up a project created later.
pub const NO_PROJECT: ErrorCode = ErrorCode::new("no_project", ErrorClass::NotFound);
