//! duvet's error codes: its domain codes, and the generic codes of the service kit it
//! uses. The wire names are those of the contract and the README.

pub use mcp_common::codes::{INTERNAL, INVALID_PARAMS, NOT_FOUND};
use mcp_common::{ErrorClass, ErrorCode};

/// There is no Duvet project where the server runs (no `.duvet/config.toml` and no legacy
/// flags, or the configuration cannot be read): every tool needs one. Not retryable as such,
/// though the server picks up a project created later.
pub const NO_PROJECT: ErrorCode = ErrorCode::new("no_project", ErrorClass::NotFound);

/// A requirement identifier that names several requirements: the hash of a text (the
/// identifier of earlier versions) that several sections state, or a prefix of several
/// identifiers. The message lists their paths; the caller picks one.
pub const AMBIGUOUS_REQUIREMENT: ErrorCode =
    ErrorCode::new("ambiguous_requirement", ErrorClass::InvalidArguments);
