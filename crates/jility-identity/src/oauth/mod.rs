//! What OAuth 2.1 keeps for MCP clients (the MCP authorization spec), blocking on the
//! database; the endpoints and pages that use it are `jility-cloud`'s.
//!
//! - `clients`: dynamic client registration (RFC 7591): public clients only, redirect URIs
//!   on loopback (any port, RFC 8252) or HTTPS; limited per client address; a client
//!   unused for [`CLIENT_IDLE_DAYS`] is forgotten; clients described by a metadata
//!   document, kept once fetched.
//! - `grants`: codes (single use, [`CODE_SECS`]; presented again, the grant they made is
//!   revoked), grants (one per approval: the refresh family), refresh tokens (rotated on
//!   use; an old one presented again revokes the family). Access tokens are API tokens of
//!   the workspace marked with their grant and bound to the resource (`…/mcp`): they
//!   expire after [`ACCESS_SECS`] (or `JILITY_OAUTH_ACCESS_SECS`), and are authenticated,
//!   rate-limited, audited and revoked like every token; a grant holds one live access
//!   token at a time (a refresh ends the one before). `full_access` is never granted this
//!   way. Every grant, refresh, reuse and revocation is written to the workspace's audit log.
//! - `limits`: token requests per client address and per `client_id`, shared through the
//!   database. `pkce`: S256.
//! - `errors`: RFC 6749's errors (`{"error", "error_description"}`) with their status.

pub mod clients;
pub mod errors;
pub mod grants;
pub mod limits;
pub mod pkce;

pub use clients::{Client, Registration};
pub use errors::OAuthError;
pub use grants::{Grant, Issued, OAuth, SCOPES};

/// How long an access token lasts (1 hour).
pub const ACCESS_SECS: i64 = 60 * 60;
/// How long access tokens last: `JILITY_OAUTH_ACCESS_SECS` (1 to 86,400), else
/// [`ACCESS_SECS`].
pub fn access_secs() -> i64 {
    std::env::var("JILITY_OAUTH_ACCESS_SECS")
        .ok()
        .and_then(|v| v.trim().parse::<i64>().ok())
        .filter(|secs| (1..=86_400).contains(secs))
        .unwrap_or(ACCESS_SECS)
}

/// How long a refresh token lasts unused (30 days).
pub const REFRESH_DAYS: i64 = 30;
/// How long an authorization code lasts (2 minutes).
pub const CODE_SECS: i64 = 120;
/// A registered client unused this long is forgotten, with its grants.
pub const CLIENT_IDLE_DAYS: i64 = 30;
/// Dynamic registrations allowed per client address in [`REGISTRATION_WINDOW_SECS`].
pub const REGISTRATIONS_PER_ADDRESS: usize = 20;
/// The window of the registration limit (1 hour).
pub const REGISTRATION_WINDOW_SECS: i64 = 60 * 60;
