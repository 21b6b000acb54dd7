//! What stands in front of every endpoint (but the public OpenAPI document): the bearer
//! token, then the rate limit; before them, on the REST paths, the browser `Origin`.
//!
//! - A request of a REST path with an `Origin` header that is not one of the server's own
//!   (the origins its `/mcp` accepts, over http or https): 403 and the `permission_denied`
//!   envelope ([`origin`]). `/mcp` checks origins itself and answers with a JSON-RPC body.
//! - No `Authorization: Bearer …`, or a token that is malformed, unknown, expired or
//!   revoked: 401 with `WWW-Authenticate: Bearer` and the `unauthenticated` envelope. The
//!   token itself is never logged nor echoed. Each refusal is recorded in the audit log
//!   with its reason (`missing`, `malformed`, `unknown`, `expired`, `revoked`): an expired
//!   or revoked token under its workspace, the others under none; past a few a minute from
//!   one client address (or of one expired or revoked token), the further ones are counted
//!   and recorded as one entry when the minute ends ([`super::refusals`]).
//! - A token authenticated a moment ago is not looked up again ([`super::principals`]);
//!   whether it was revoked since is read with the rate limit's lease, below, and afresh
//!   for a request that may change something (not `GET` or `HEAD`, or at `/mcp`).
//! - Then the request counts against its token's limit and its workspace's ceiling (a
//!   sliding 60 s window counted in the database so that every server process shares it,
//!   in blocks leased for a second; [`crate::ratelimit`]). Every authenticated answer
//!   carries `X-RateLimit-Limit`, `X-RateLimit-Remaining` and `X-RateLimit-Reset`; over the
//!   limit: 429 with `Retry-After` and the `rate_limit` envelope. A database that cannot be
//!   reached is 503 `database_unavailable` with `Retry-After` when the token must be looked
//!   up; a token authenticated a moment ago goes on uncounted instead (its operation then
//!   fails the same way, or as a tool at `/mcp`).
//! - On the way out, an answer that streams (`text/event-stream`: `GET /api/v1/events`, an
//!   MCP session's `GET /mcp`, a streamed MCP answer) ends when its token's credential
//!   lapses — at its expiry, at its revocation, when its holder's role no longer allows it
//!   ([`super::principals::Lapse`]) — rather than living on with the connection; and a
//!   REST `403` refusing a scope the token lacks carries `WWW-Authenticate: Bearer
//!   error="insufficient_scope", scope="…", resource_metadata="…"` ([`scope_challenge`]).

use std::net::{IpAddr, SocketAddr};

use axum::body::Body;
use axum::extract::{ConnectInfo, Request, State};
use axum::http::{HeaderMap, HeaderName, HeaderValue, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use futures::StreamExt as _;
use mcp_common::ToolError;

use super::refusals::{Reason, Source};
use super::{ApiError, ApiState};
use crate::auth::{AuthError, Principal, Scope};
use crate::ratelimit::Decision;
use jility_core::errors;
use jility_core::store::StoreError;

const LIMIT: HeaderName = HeaderName::from_static("x-ratelimit-limit");
const REMAINING: HeaderName = HeaderName::from_static("x-ratelimit-remaining");
const RESET: HeaderName = HeaderName::from_static("x-ratelimit-reset");

/// Largest refusal body read back to see whether it refuses a scope (an envelope is far
/// smaller).
const MAX_REFUSAL_BYTES: usize = 64 * 1024;

/// The browser origins a REST path accepts (see [`origin`]).
#[derive(Clone)]
pub struct Origins(std::sync::Arc<[String]>);

impl Origins {
    /// The origins of a server bound to `local`: those its `/mcp` accepts, and their https
    /// twins (the server may terminate TLS).
    pub fn of(local: SocketAddr) -> Self {
        let own = mcp_common::http::HttpConfig::behind_auth(local).origins(local.port());
        let secure = own
            .iter()
            .filter_map(|o| {
                o.strip_prefix("http://")
                    .map(|rest| format!("https://{rest}"))
            })
            .collect::<Vec<_>>();
        Self(own.into_iter().chain(secure).collect())
    }

    fn allows(&self, origin: &str) -> bool {
        let origin = origin.trim().trim_end_matches('/');
        self.0.iter().any(|o| o.eq_ignore_ascii_case(origin))
    }
}

/// Refuse a REST request sent by a page of another origin (a middleware, before the token
/// is looked at): 403, `permission_denied`. Requests without `Origin` (programs, the CLI)
/// pass, as do `/mcp`'s, whose transport checks them.
pub async fn origin(State(origins): State<Origins>, request: Request, next: Next) -> Response {
    let path = request.uri().path();
    let mcp = mcp_common::http::MCP_PATH;
    if path == mcp || path.starts_with(&format!("{mcp}/")) {
        return next.run(request).await;
    }
    let refused = request.headers().get(header::ORIGIN).and_then(|value| {
        let text = value.to_str().unwrap_or("");
        (!origins.allows(text)).then(|| jility_core::errors::clip(text))
    });
    let Some(shown) = refused else {
        return next.run(request).await;
    };
    tracing::info!(origin = %shown, "refused a request from a foreign origin");
    ApiError(
        ToolError::new(
            errors::PERMISSION_DENIED,
            format!("Requests from the browser origin `{shown}` are not accepted"),
        )
        .with_hint(
            "Call the API from a program (which sends no Origin header) or from a page of this server's own origin.",
        ),
    )
    .into_response()
}

/// Authenticate, rate-limit, then hand the request on with its [`Principal`] (and its
/// workspace as the tenant its MCP sessions count for, [`mcp_common::http::SessionTenant`]).
pub async fn guard(State(state): State<ApiState>, mut request: Request, next: Next) -> Response {
    // The API's description is public: it says what the API is, not what it holds.
    if request.method() == axum::http::Method::GET && request.uri().path() == super::OPENAPI_PATH {
        return next.run(request).await;
    }
    let client = request
        .extensions()
        .get::<ConnectInfo<SocketAddr>>()
        .map(|ConnectInfo(addr)| addr.ip());
    // At `/mcp`, a refusal says where OAuth starts (RFC 9728), as the MCP spec asks.
    let tls = state.tls;
    let mcp = is_mcp(request.uri().path());
    let token = match bearer(request.headers()) {
        Ok(token) => token,
        Err((err, reason)) => {
            // Handed to the refusals' writer: never waits on the database.
            state
                .refusals
                .record(&state.audit, Source::client(client), reason);
            return unauthorized(err, request.headers(), mcp, tls);
        }
    };
    let known = state.principals.get(&token);
    // A read may be served from a leased request (the token's revocation then known as of
    // its lease, at most a second ago); anything else asks the database afresh.
    let fresh = mcp
        || !matches!(
            *request.method(),
            axum::http::Method::GET | axum::http::Method::HEAD
        );
    // A read by a token authenticated a moment ago with a leased request left here: nothing
    // to ask the database, so no blocking thread either.
    let leased = known.as_ref().filter(|_| !fresh).and_then(|principal| {
        let decision = state
            .limiter
            .check_token_leased(principal.token_id, principal.workspace_id)?;
        Some((principal.clone(), Some(decision)))
    });
    let checked = match leased {
        Some(checked) => Ok(Ok(checked)),
        None => check(state.clone(), client, token, known, fresh).await,
    };
    let (principal, decision) = match checked {
        Ok(Ok(checked)) => checked,
        Ok(Err(err)) if err.code == errors::UNAUTHENTICATED => {
            return unauthorized(err, request.headers(), mcp, tls);
        }
        Ok(Err(err)) => return ApiError(err).into_response(),
        Err(err) => {
            return ApiError(ToolError::internal(format!(
                "Checking the token failed: {err}"
            )))
            .into_response();
        }
    };
    // An OAuth access token works only at the resource it was issued for (RFC 8707).
    if let Some(bound) = &principal.resource
        && *bound != crate::public::resource(request.headers(), tls)
    {
        let resource = crate::public::resource(request.headers(), tls);
        tracing::info!("refused an OAuth token issued for another resource");
        return unauthorized(
            ToolError::new(
                errors::UNAUTHENTICATED,
                "This token was issued for another resource",
            )
            .with_hint(format!(
                "Sign in again through the OAuth flow of {resource}: the token is bound to the server address it was issued for."
            )),
            request.headers(),
            mcp,
            tls,
        );
    }
    let host = request.headers().get(header::HOST).cloned();
    let Some(decision) = decision else {
        request
            .extensions_mut()
            .insert::<Principal>(principal.clone());
        let response = next.run(request).await;
        return outgoing(&state, &principal, host, mcp, response).await;
    };
    if !decision.allowed {
        super::metrics::rate_limited(match decision.scope {
            crate::ratelimit::Scope::Token => "token",
            crate::ratelimit::Scope::Workspace => "workspace",
        });
        let mut response = ApiError(decision.error()).into_response();
        rate_headers(response.headers_mut(), &decision);
        if let Ok(value) = HeaderValue::from_str(&decision.retry_after_secs.to_string()) {
            response.headers_mut().insert(header::RETRY_AFTER, value);
        }
        return response;
    }
    // MCP sessions count against the workspace's share of the server; an OAuth client's
    // session stays its own across refreshed tokens (its grant owns it).
    request
        .extensions_mut()
        .insert(mcp_common::http::SessionTenant(format!(
            "workspace:{}",
            principal.workspace_id
        )));
    if let Some(grant_id) = principal.grant_id {
        request
            .extensions_mut()
            .insert(mcp_common::http::SessionOwner(format!(
                "oauth-grant:{grant_id}"
            )));
    }
    let mut request = match super::step_up::check(&principal, request, tls).await {
        Ok(request) => request,
        Err(mut refused) => {
            rate_headers(refused.headers_mut(), &decision);
            return refused;
        }
    };
    request
        .extensions_mut()
        .insert::<Principal>(principal.clone());
    let response = next.run(request).await;
    let mut response = outgoing(&state, &principal, host, mcp, response).await;
    rate_headers(response.headers_mut(), &decision);
    response
}

/// An answer on its way out: one that streams (`text/event-stream`: the API's events, an MCP
/// session's `GET /mcp`, a streamed MCP answer) ends when its token's credential lapses
/// ([`super::principals::Lapse`]: at its expiry, its revocation, its holder's loss of the
/// role it needs); a REST `403` for a scope the token lacks says which, as a challenge
/// ([`scope_challenge`]).
async fn outgoing(
    state: &ApiState,
    principal: &Principal,
    host: Option<HeaderValue>,
    mcp: bool,
    response: Response,
) -> Response {
    let streams = response
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.trim_start().starts_with("text/event-stream"));
    if streams {
        let lapse = state.principals.watch(principal, state);
        let (parts, body) = response.into_parts();
        let lapsed = async move { lapse.lapsed().await };
        let body = Body::from_stream(body.into_data_stream().take_until(Box::pin(lapsed)));
        return Response::from_parts(parts, body);
    }
    if response.status() == StatusCode::FORBIDDEN && !mcp {
        return scope_challenge(principal, host, state.tls, response).await;
    }
    response
}

/// A REST `403` that refuses a scope `principal`'s token lacks (the `permission_denied`
/// envelope of [`Principal::require`]) carries `WWW-Authenticate: Bearer
/// error="insufficient_scope", scope="…", resource_metadata="…"` (RFC 6750 §3.1, RFC 9728),
/// as `/mcp`'s step-up does, whatever the token's kind: an OAuth client can ask the person
/// for more, any client learns what a token would need. Other `403`s pass unchanged.
async fn scope_challenge(
    principal: &Principal,
    host: Option<HeaderValue>,
    tls: bool,
    response: Response,
) -> Response {
    let (parts, body) = response.into_parts();
    let bytes = match axum::body::to_bytes(body, MAX_REFUSAL_BYTES).await {
        Ok(bytes) => bytes,
        Err(err) => {
            tracing::warn!(error = %err, "could not read a refusal's body");
            return ApiError(ToolError::internal("The refusal could not be sent")).into_response();
        }
    };
    let message = serde_json::from_slice::<serde_json::Value>(&bytes)
        .ok()
        .filter(|body| body["error"]["code"] == errors::PERMISSION_DENIED.as_str())
        .and_then(|body| body["error"]["message"].as_str().map(str::to_string));
    // The scope whose refusal this is: compared with what refusing it says, not parsed.
    let lacking = message.and_then(|message| {
        Scope::ALL.into_iter().find(|scope| {
            principal
                .require(*scope)
                .is_err_and(|refusal| refusal.message == message)
        })
    });
    let mut response = Response::from_parts(parts, Body::from(bytes));
    if let Some(scope) = lacking {
        let mut headers = HeaderMap::new();
        if let Some(host) = host {
            headers.insert(header::HOST, host);
        }
        let challenge = crate::public::insufficient_scope(&headers, tls, &[scope.as_str()]);
        if let Ok(value) = HeaderValue::from_str(&challenge) {
            response
                .headers_mut()
                .insert(header::WWW_AUTHENTICATE, value);
        }
    }
    response
}

/// Authenticate `token` (unless `known`) and count its request (blocking, on a blocking
/// thread): the principal and the decision, none when the database cannot be reached.
async fn check(
    state: ApiState,
    client: Option<IpAddr>,
    token: String,
    known: Option<Principal>,
    fresh: bool,
) -> Result<Result<(Principal, Option<Decision>), ToolError>, tokio::task::JoinError> {
    tokio::task::spawn_blocking(move || -> Result<_, ToolError> {
        let refuse = |refused: AuthError| {
            tracing::info!(reason = %refused, "refused a request's token");
            record_refusal(&state, client, &token, &refused);
            ToolError::from(refused)
        };
        let principal = match known {
            Some(principal) => principal,
            None => {
                let principal = state.tokens.authenticate(&token).map_err(|err| match err {
                    AuthError::Store(_) => ToolError::from(err),
                    refused => refuse(refused),
                })?;
                state.principals.keep(&token, &principal);
                principal
            }
        };
        // Counted, and whether the token was revoked as of its last lease (at most a
        // second ago).
        let (decision, revoked_at) = match state
            .limiter
            .check_token_with(principal.token_id, principal.workspace_id, fresh)
         {
            Ok(checked) => checked,
            // The database cannot be reached: a token authenticated moments ago goes on
            // uncounted, so that what needs no database (MCP's handshake, `tools/list`) is
            // served and a tool call fails as a tool (`database_unavailable`, retryable).
            Err(StoreError::Unavailable(detail)) => {
                tracing::warn!(detail = %detail, "cannot count a request: the database cannot be reached");
                return Ok((principal, None));
            }
            Err(err) => return Err(err.into()),
        };
        if let Some(at) = revoked_at {
            state.forget_token(principal.token_id);
            return Err(refuse(AuthError::Revoked { at }));
        }
        Ok((principal, Some(decision)))
    })
    .await
}

/// Record that `token` was refused (blocking): an expired or revoked token under its
/// workspace, an unknown or malformed one under none; within the bounds of
/// [`super::refusals`].
fn record_refusal(state: &ApiState, client: Option<IpAddr>, token: &str, refused: &AuthError) {
    let (reason, source) = match refused {
        AuthError::Expired { .. } => (Reason::Expired, Source::token(token)),
        AuthError::Revoked { .. } => (Reason::Revoked, Source::token(token)),
        AuthError::Malformed => (Reason::Malformed, Source::client(client)),
        AuthError::Unknown | AuthError::Store(_) => (Reason::Unknown, Source::client(client)),
    };
    state.refusals.record(&state.audit, source, reason);
}

/// The token of `Authorization: Bearer TOKEN`, or why there is none to check (and the
/// reason the audit log records: `missing` or `malformed`).
fn bearer(headers: &HeaderMap) -> Result<String, (ToolError, Reason)> {
    let missing = || {
        ToolError::new(errors::UNAUTHENTICATED, "This request has no API token").with_hint(
            "Send the token as `Authorization: Bearer jil_live_…` (a workspace's first token comes from `jility admin create-workspace`).",
        )
    };
    let value = headers
        .get(header::AUTHORIZATION)
        .ok_or_else(|| (missing(), Reason::Missing))?;
    let malformed = || {
        (
            ToolError::new(
                errors::UNAUTHENTICATED,
                "The Authorization header is not `Bearer TOKEN`",
            )
            .with_hint("Send the token as `Authorization: Bearer jil_live_…`."),
            Reason::Malformed,
        )
    };
    let value = value.to_str().map_err(|_| malformed())?;
    let (scheme, token) = value.trim().split_once(' ').ok_or_else(malformed)?;
    if !scheme.eq_ignore_ascii_case("bearer") || token.trim().is_empty() {
        return Err(malformed());
    }
    Ok(token.trim().to_string())
}

/// A `401` with `WWW-Authenticate`: at `/mcp` (`mcp`), where OAuth starts; else plain
/// `Bearer`.
fn unauthorized(err: ToolError, headers: &HeaderMap, mcp: bool, tls: bool) -> Response {
    let mut response = ApiError(err).into_response();
    let value = mcp
        .then(|| crate::public::challenge(headers, tls))
        .and_then(|c| HeaderValue::from_str(&c).ok())
        .unwrap_or(HeaderValue::from_static("Bearer"));
    response
        .headers_mut()
        .insert(header::WWW_AUTHENTICATE, value);
    response
}

fn is_mcp(path: &str) -> bool {
    let mcp = mcp_common::http::MCP_PATH;
    path == mcp
        || path
            .strip_prefix(mcp)
            .is_some_and(|rest| rest.starts_with('/'))
}

fn rate_headers(headers: &mut HeaderMap, decision: &Decision) {
    for (name, value) in [
        (LIMIT, u64::from(decision.limit).to_string()),
        (REMAINING, u64::from(decision.remaining).to_string()),
        (RESET, decision.reset_at.to_string()),
    ] {
        if let Ok(value) = HeaderValue::from_str(&value) {
            headers.insert(name, value);
        }
    }
}
