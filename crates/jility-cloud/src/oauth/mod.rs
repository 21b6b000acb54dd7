//! OAuth 2.1 on `jility serve`, as the MCP authorization spec asks: the server is both the
//! resource server (`/mcp`) and its authorization server, so that a person adds the URL to
//! an MCP client, signs in in the browser and approves, and the client holds a short-lived
//! token scoped to what was approved.
//!
//! - `metadata`: Protected Resource Metadata (RFC 9728) at
//!   `/.well-known/oauth-protected-resource[/mcp]`, Authorization Server Metadata (RFC 8414)
//!   at `/.well-known/oauth-authorization-server` and the OpenID path clients also try.
//! - `clients`: dynamic client registration (RFC 7591) at `POST /oauth/register`: public
//!   clients only, redirect URIs on loopback (any port, RFC 8252) or HTTPS; limited per
//!   client address; a client unused for [`CLIENT_IDLE_DAYS`] is forgotten. `documents`:
//!   clients whose `client_id` is the HTTPS URL of their Client ID Metadata Document,
//!   fetched with SSRF fences (public addresses only — an IPv6 address carrying an IPv4
//!   one judged by it —, pinned, no redirects, small, quick).
//! - `authorize`: `GET/POST /oauth/authorize` — the person signs in (the web board's
//!   session), picks the workspace, sees the client's name, its redirect host and the
//!   scopes asked, and approves (only scopes their role allows) or denies. PKCE with S256
//!   is required, the redirect URI must be one registered exactly, `state` and `iss`
//!   (RFC 9207) come back. Only the consent form's answer (the code, `access_denied`,
//!   `invalid_scope`), posted with the session's CSRF token, is sent to the client's
//!   redirect URI; every fault of a request is a page here, for every client, so the
//!   endpoint redirects no one anywhere on a stranger's link (RFC 9700 §4.11.2).
//! - `token`: `POST /oauth/token` (grants `authorization_code`, `refresh_token`) and
//!   `POST /oauth/revoke` (RFC 7009); errors as RFC 6749 says (`{"error", "error_description"}`),
//!   limited per client address and per `client_id` (`limits`: `429`, `Retry-After`).
//! - `errors`: that form, for the JSON endpoints' own refusals too (a body over
//!   [`BODY_BYTES`]: `413`; unreadable, or a registration not sent as JSON: `400`; another
//!   method: `405`).
//! - `grants`: what is kept — codes (single use, [`CODE_SECS`]; presented again, the grant
//!   they made is revoked), grants (one per approval: the refresh family), refresh tokens
//!   (rotated on use; an old one presented again revokes the family). Access tokens are API
//!   tokens of the workspace marked with their grant and bound to the resource
//!   (`…/mcp`): they expire after [`ACCESS_SECS`] (or `JILITY_OAUTH_ACCESS_SECS`), and are
//!   authenticated, rate-limited, audited and revoked like every token; a grant holds one
//!   live access token at a time (a refresh ends the one before). `full_access` is never
//!   granted this way.
//!
//! - `connected`: Settings → Connected clients (`/w/{ws}/settings/clients`): a member's own
//!   grants, a manager's everyone's, with Revoke.
//!
//! Every grant, refresh, reuse and revocation is written to the workspace's audit log.

mod authorize;
mod clients;
mod connected;
mod documents;
pub(crate) mod errors;
mod grants;
mod limits;
mod metadata;
mod pkce;
mod token;

use axum::Router;
use axum::extract::DefaultBodyLimit;
use axum::routing::{get, post};

pub use clients::{Client, Registration};
pub use errors::OAuthError;
pub use grants::{Grant, Issued, OAuth};

use crate::web::CloudSite;

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

/// The largest body `/oauth/register`, `/oauth/token` and `/oauth/revoke` take (64 KiB:
/// ten 2,000-character redirect URIs and a name fit many times over); a larger one is
/// `413` in RFC 7591 / 6749 JSON.
pub const BODY_BYTES: usize = 64 * 1024;

pub use crate::public::{
    AUTHORIZE_PATH, REGISTER_PATH, RESOURCE_METADATA_PATH, REVOKE_PATH, SCOPES, TOKEN_PATH,
};

/// The authorization server's and the metadata's routes, and Settings → Connected clients
/// (no authentication in front: each checks what it needs itself). `site` is the web
/// board's (sessions, sign-in).
pub fn routes(site: &CloudSite) -> Router {
    let state = State {
        oauth: OAuth::new(&site.api().db),
        site: site.clone(),
    };
    let pages = Router::new()
        .route(AUTHORIZE_PATH, get(authorize::page).post(authorize::decide))
        .layer(axum::middleware::from_fn(jility_web::security::headers));
    // The JSON endpoints: their own body limit, and every refusal in RFC 6749's form.
    let json = Router::new()
        .route(
            REGISTER_PATH,
            post(clients::register).fallback(errors::method_not_allowed),
        )
        .route(
            TOKEN_PATH,
            post(token::token).fallback(errors::method_not_allowed),
        )
        .route(
            REVOKE_PATH,
            post(token::revoke).fallback(errors::method_not_allowed),
        )
        .layer(DefaultBodyLimit::max(BODY_BYTES))
        .layer(axum::middleware::from_fn(errors::announced_too_large));
    let connected = Router::new()
        .route("/w/{workspace}/settings/clients", get(connected::page))
        .route(
            "/w/{workspace}/settings/clients/revoke",
            post(connected::revoke),
        )
        .layer(axum::middleware::from_fn(jility_web::security::headers))
        .with_state(site.clone());
    Router::new()
        .route(
            "/.well-known/oauth-protected-resource",
            get(metadata::protected_resource),
        )
        .route(RESOURCE_METADATA_PATH, get(metadata::protected_resource))
        .route(
            "/.well-known/oauth-authorization-server",
            get(metadata::authorization_server),
        )
        .route(
            "/.well-known/oauth-authorization-server/mcp",
            get(metadata::authorization_server),
        )
        .route(
            "/.well-known/openid-configuration",
            get(metadata::authorization_server),
        )
        .route(
            "/.well-known/openid-configuration/mcp",
            get(metadata::authorization_server),
        )
        .merge(json)
        .merge(pages)
        .with_state(state)
        .merge(connected)
}

/// What the handlers share.
#[derive(Clone)]
struct State {
    oauth: OAuth,
    site: CloudSite,
}
