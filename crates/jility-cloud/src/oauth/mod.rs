//! OAuth 2.1 on `jility serve`, as the MCP authorization spec asks: the server is both the
//! resource server (`/mcp`) and its authorization server, so that a person adds the URL to
//! an MCP client, signs in in the browser and approves, and the client holds a short-lived
//! token scoped to what was approved.
//!
//! - `metadata`: Protected Resource Metadata (RFC 9728) at
//!   `/.well-known/oauth-protected-resource[/mcp]`, Authorization Server Metadata (RFC 8414)
//!   at `/.well-known/oauth-authorization-server` and the OpenID path clients also try.
//! - `registration`: dynamic client registration (RFC 7591) at `POST /oauth/register`:
//!   public clients only, redirect URIs on loopback (any port, RFC 8252) or HTTPS; limited
//!   per client address; a client unused for [`CLIENT_IDLE_DAYS`] is forgotten. `documents`:
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
//! - What is kept — clients, codes (single use, [`CODE_SECS`]), grants (the refresh
//!   families), refresh tokens, and access tokens that expire after [`ACCESS_SECS`] — and
//!   its rules are `jility-identity`'s `oauth` (`clients`, `grants`, `limits`, `pkce`).
//!
//! - `connected`: Settings → Connected clients (`/w/{ws}/settings/clients`): a member's own
//!   grants, a manager's everyone's, with Revoke.
//!
//! Every grant, refresh, reuse and revocation is written to the workspace's audit log.

mod authorize;
mod connected;
mod documents;
pub(crate) mod errors;
mod metadata;
mod registration;
mod token;

use axum::Router;
use axum::extract::DefaultBodyLimit;
use axum::routing::{get, post};

pub use jility_identity::oauth::{
    ACCESS_SECS, CLIENT_IDLE_DAYS, CODE_SECS, Client, Grant, Issued, OAuth, OAuthError,
    REFRESH_DAYS, REGISTRATION_WINDOW_SECS, REGISTRATIONS_PER_ADDRESS, Registration, access_secs,
};

// What OAuth keeps, and its rules, are jility-identity's.
use jility_identity::oauth::{clients, grants, limits, pkce};

use crate::web::CloudSite;

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
            post(registration::register).fallback(errors::method_not_allowed),
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
