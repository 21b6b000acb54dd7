//! jility's error codes: the wire names its contract (docs/specs, README) uses, each with the
//! class that decides how a client sees it (`isError` result, retryable or not, HTTP status
//! for the API server). The generic codes come from `mcp_common_core::codes`.

use mcp_common_core::{ErrorClass, ErrorCode, codes};

/// A status that does not exist, or a move the workflow does not allow.
pub const INVALID_STATUS: ErrorCode = ErrorCode::new("invalid_status", ErrorClass::Conflict);
/// The ticket is someone else's (claiming it).
pub const ALREADY_ASSIGNED: ErrorCode = ErrorCode::new("already_assigned", ErrorClass::Conflict);
/// Arguments that break a rule of the domain (empty title, oversized text, bad range…).
pub const INVALID_INPUT: ErrorCode = ErrorCode::new("invalid_input", ErrorClass::InvalidArguments);
/// The dependency would close a cycle.
pub const DEPENDENCY_CYCLE: ErrorCode = ErrorCode::new("dependency_cycle", ErrorClass::Conflict);
/// A sprint in a state that does not allow the change (adding to a completed sprint, a
/// second active sprint, a ticket in another open sprint without `move`).
pub const SPRINT_CONFLICT: ErrorCode = ErrorCode::new("sprint_conflict", ErrorClass::Conflict);
/// A bulk edit's tickets are not as many as its `expected_count`: nothing was changed.
pub const COUNT_MISMATCH: ErrorCode = ErrorCode::new("count_mismatch", ErrorClass::Conflict);
/// The database is locked by another writer for longer than the busy timeout: retry.
pub const DATABASE_BUSY: ErrorCode = ErrorCode::new("database_busy", ErrorClass::Unavailable);
/// The database server cannot be reached (refused, reset, shut down, no connection within the
/// pool's checkout timeout): retryable, after `retry_after_secs`. Never carries the driver's
/// wording (the server logs it).
pub const DATABASE_UNAVAILABLE: ErrorCode =
    ErrorCode::new("database_unavailable", ErrorClass::Unavailable);
/// The cloud API cannot be reached (refused, timed out, DNS, TLS): retry later or fix the URL.
pub const NETWORK_ERROR: ErrorCode = ErrorCode::new("network_error", ErrorClass::Unavailable);
/// Too many requests with one token (HTTP 429): retryable, after `retry_after_secs`.
pub const RATE_LIMIT: ErrorCode = ErrorCode::new("rate_limit", ErrorClass::RateLimited);
/// A name that is taken already (a workspace).
pub const ALREADY_EXISTS: ErrorCode = ErrorCode::new("already_exists", ErrorClass::Conflict);
/// No valid credentials: a missing, malformed, unknown, expired or revoked API token (HTTP
/// 401): the caller needs a new token, not new rights.
pub const UNAUTHENTICATED: ErrorCode = codes::UNAUTHENTICATED;
/// A valid token that lacks the scope the operation needs (the message names it).
pub const PERMISSION_DENIED: ErrorCode = codes::PERMISSION_DENIED;
/// A ticket, template or database that does not exist.
pub const NOT_FOUND: ErrorCode = codes::NOT_FOUND;
/// A limit out of range, or a cursor that was altered, is foreign, or belongs to another query.
pub const INVALID_PARAMS: ErrorCode = codes::INVALID_PARAMS;
/// A bug, or damaged data.
pub const INTERNAL: ErrorCode = codes::INTERNAL;

/// Every code of jility's own (those of `mcp_common_core::codes` it answers too), so that
/// the bridge can give an API error back its code.
pub const ALL: [ErrorCode; 16] = [
    INVALID_STATUS,
    COUNT_MISMATCH,
    ALREADY_ASSIGNED,
    INVALID_INPUT,
    DEPENDENCY_CYCLE,
    SPRINT_CONFLICT,
    DATABASE_BUSY,
    DATABASE_UNAVAILABLE,
    NETWORK_ERROR,
    RATE_LIMIT,
    ALREADY_EXISTS,
    UNAUTHENTICATED,
    PERMISSION_DENIED,
    NOT_FOUND,
    INVALID_PARAMS,
    INTERNAL,
];

/// Longest excerpt of someone's input (or a parser's message about it) in an error: input
/// is never echoed whole.
pub const MAX_ERROR_CHARS: usize = 300;

/// `text` cut to [`MAX_ERROR_CHARS`], marked with `…` when cut.
pub fn clip(text: &str) -> String {
    mcp_common_core::clip(text, MAX_ERROR_CHARS)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classes_decide_retry_and_status() {
        assert!(DATABASE_BUSY.class().retryable());
        assert!(DATABASE_UNAVAILABLE.class().retryable());
        assert_eq!(DATABASE_UNAVAILABLE.class().http_status(), 503);
        for code in [INVALID_STATUS, ALREADY_ASSIGNED, DEPENDENCY_CYCLE] {
            assert_eq!(code.class().http_status(), 409, "{code}");
            assert!(!code.class().retryable(), "{code}");
        }
        assert_eq!(INVALID_INPUT.class().http_status(), 400);
        assert_eq!(NOT_FOUND.as_str(), "not_found");
        assert_eq!(INTERNAL.as_str(), "internal");
    }
}
