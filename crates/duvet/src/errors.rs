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

/// No coverage report to answer from: none is configured (`duvet mcp --coverage-report`), none
/// matches the configured pattern, or a report entry matches several files (or a file several
/// entries). Not retryable: fix the configuration, or produce the report.
pub const NO_COVERAGE: ErrorCode = ErrorCode::new("no_coverage", ErrorClass::NotFound);

/// A configured coverage report cannot be read or is malformed, as a report still being
/// written is: retryable once the test run that writes it has finished.
pub const COVERAGE_UNREADABLE: ErrorCode =
    ErrorCode::new("coverage_unreadable", ErrorClass::Unavailable);
