//! The web board for people on `jility serve`, at `/`: the pages of `jility-web` (board,
//! tickets, lists, live updates) on [`CloudSite`], and this crate's own pages around them.
//!
//! - `site`: [`CloudSite`] — who the person is (the `jility_session` cookie → their
//!   session → their membership of the workspace the URL names: a workspace they are no
//!   member of is the same 404 as one that does not exist), their operations through the
//!   API's [`crate::ApiState`] with their role's scopes, the live stream of their
//!   workspace alone; `backend`: [`backend::People`], the API's state with each write of
//!   a person counted against a rate limit of their own;
//! - `signin`: `GET/POST /login`, `POST /logout`; `links`: `GET/POST /invite/{secret}`,
//!   `GET/POST /reset/{secret}`;
//! - `settings` (members, roles, invites), `tokens`, `audit`, `webhooks` (subscriptions,
//!   their delivery logs): `/w/{ws}/settings…`, for owners and admins (the OAuth pages and
//!   Connected clients are [`crate::oauth`]'s, mounted beside these by [`crate::people`]);
//! - `cookies`: the session cookie, and the double-submit CSRF token of the forms sent
//!   before a session exists; `answers`: what those pages share.

mod answers;
mod audit;
pub mod backend;
pub(crate) mod cookies;
mod links;
pub(crate) mod settings;
mod signin;
pub mod site;
mod tokens;
mod webhooks;

use axum::Router;
use axum::routing::{get, post};

pub use site::CloudSite;

use crate::api::ApiState;

/// The web app's routes on `state` (no fallback: the server answers other paths); `tls`:
/// cookies are `Secure`.
pub fn routes(state: &ApiState, tls: bool) -> Router {
    let site = CloudSite::new(state, tls);
    let own = Router::new()
        .route("/login", get(signin::page).post(signin::submit))
        .route("/logout", post(signin::logout))
        .route("/invite/{secret}", get(links::invite).post(links::accept))
        .route(
            "/reset/{secret}",
            get(links::reset).post(links::set_password),
        )
        .route("/w/{workspace}/settings", get(settings::page))
        .route("/w/{workspace}/settings/members", post(settings::member))
        .route("/w/{workspace}/settings/invites", post(settings::invite))
        .route(
            "/w/{workspace}/settings/invites/revoke",
            post(settings::revoke_invite),
        )
        .route(
            "/w/{workspace}/settings/tokens",
            get(tokens::page).post(tokens::create),
        )
        .route(
            "/w/{workspace}/settings/tokens/revoke",
            post(tokens::revoke),
        )
        .route("/w/{workspace}/settings/audit", get(audit::page))
        .route(
            "/w/{workspace}/settings/webhooks",
            get(webhooks::page).post(webhooks::create),
        )
        .route("/w/{workspace}/settings/webhooks/{id}", get(webhooks::log))
        .route(
            "/w/{workspace}/settings/webhooks/{id}/{action}",
            post(webhooks::act),
        )
        .layer(axum::middleware::from_fn(jility_web::security::headers))
        .with_state(site.clone());
    jility_web::routes(site).merge(own)
}
