//! twig-mcp's error codes: the domain codes its contract names, each with its class, and the
//! generic codes of the kit it uses. The wire names are those of the design's error table.

use mcp_common::{ErrorClass, ErrorCode};

pub use mcp_common::codes::{INTERNAL, INVALID_PARAMS, NOT_FOUND, RATE_LIMITED};

/// twig-mcp was started outside a git repository, or the repository was deleted: the context
/// a repository tool needs is absent.
pub const NO_REPO: ErrorCode = ErrorCode::new("no_repo", ErrorClass::NotFound);

/// The repository has no readable `.twig/state.json`: the twig context is absent.
pub const NO_TWIG_STATE: ErrorCode = ErrorCode::new("no_twig_state", ErrorClass::NotFound);

/// No credentials for GitHub or Jira were found, or the service rejected them.
pub const CREDENTIALS_MISSING: ErrorCode =
    ErrorCode::new("credentials_missing", ErrorClass::PermissionDenied);

/// A request to GitHub or Jira failed (connectivity, timeout, an unexpected HTTP status):
/// retrying may help.
pub const NETWORK_ERROR: ErrorCode = ErrorCode::new("network_error", ErrorClass::Unavailable);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classes_decide_retryability() {
        assert!(!NO_REPO.class().retryable());
        assert!(!NO_TWIG_STATE.class().retryable());
        assert!(!CREDENTIALS_MISSING.class().retryable());
        assert!(NETWORK_ERROR.class().retryable());
        assert!(RATE_LIMITED.class().retryable());
        assert_eq!(NO_REPO.as_str(), "no_repo");
        assert_eq!(NO_TWIG_STATE.as_str(), "no_twig_state");
        assert_eq!(CREDENTIALS_MISSING.as_str(), "credentials_missing");
        assert_eq!(NETWORK_ERROR.as_str(), "network_error");
    }
}
