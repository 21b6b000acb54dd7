//! [`CloudSite`]: the web board's [`Site`] on `jility serve` — people signed in with a
//! session cookie, each page of the workspace its URL names, operations through the API's
//! own [`ApiState`] (the same scope checks, audit entries and events as a token's; its
//! writes counted against a limit of the person's own: [`People`]).
//!
//! A person's request runs as a [`Principal`] of the workspace whose scopes are their role's
//! ([`Role::scopes`]), whose name is their email ([`crate::accounts::User::actor`]: what
//! their changes are recorded under), and whose `token_id` stands for their session
//! ([`Session::principal_token_id`]: negative, no token's).

use std::sync::Arc;
use std::time::Duration;

use axum::http::HeaderMap;
use axum::response::{IntoResponse, Redirect, Response};
use futures::StreamExt as _;
use futures::stream::{self, BoxStream};
use jility_core::backend::Caller;
use jility_web::{LiveEvent, Site, Viewer, WebError, layout};
use maud::html;
use mcp_common::ToolError;
use tokio::sync::broadcast::error::RecvError;

use super::backend::People;
use super::cookies;
pub use crate::accounts::access::Access;
use crate::accounts::{ACCESS_CHANGED, Accounts, Role, Session};
use crate::api::ApiState;
use crate::auth::Principal;
use crate::events::Event;

/// How often an open live stream reads its session and membership again (besides the
/// events that make it check at once: a sign-out, a removal, a role change, a password
/// reset; within [`RESET_SPREAD`] of a `reset`, when such an event may have been missed;
/// and its session's expiry, which ends it to the millisecond without asking the database).
const RECHECK: Duration = Duration::from_secs(60);

/// The web board's site on `jility serve`.
#[derive(Clone)]
pub struct CloudSite {
    inner: Arc<Inner>,
}

struct Inner {
    api: ApiState,
    backend: People,
    accounts: Accounts,
    /// Served over TLS: cookies are `Secure`.
    tls: bool,
}

/// A signed-in person on a page of one of their workspaces.
pub struct Person {
    pub viewer: Viewer,
    pub session: Session,
    pub role: Role,
    pub workspace_id: i64,
}

impl CloudSite {
    pub fn new(api: &ApiState, tls: bool) -> Self {
        Self {
            inner: Arc::new(Inner {
                api: api.clone(),
                backend: People::new(api),
                accounts: Accounts::new(&api.db),
                tls,
            }),
        }
    }

    pub fn api(&self) -> &ApiState {
        &self.inner.api
    }

    pub fn accounts(&self) -> &Accounts {
        &self.inner.accounts
    }

    /// Whether cookies are `Secure` (the server terminates TLS).
    pub fn tls(&self) -> bool {
        self.inner.tls
    }

    /// Run `work` on the accounts off the async threads.
    pub async fn blocking<T: Send + 'static>(
        &self,
        work: impl FnOnce(&Accounts) -> Result<T, ToolError> + Send + 'static,
    ) -> Result<T, WebError> {
        let accounts = self.inner.accounts.clone();
        tokio::task::spawn_blocking(move || work(&accounts))
            .await
            .map_err(|e| WebError::Tool(ToolError::internal(format!("The request failed: {e}"))))?
            .map_err(WebError::Tool)
    }

    /// Tell every server process's open live streams that a person's access changed (a
    /// session ended; a member was removed, a password reset): the streams of that session
    /// or person check their session and membership again now rather than at their next
    /// minute; no other stream does. Published as a revocation of no token (the API's
    /// streams pass over it), naming its target. (A change of a membership publishes it in
    /// its own transaction: [`crate::accounts::notify_access_changed`].)
    pub async fn access_changed(&self, target: Access) {
        let db = self.inner.api.db.clone();
        let change = target.change();
        let published =
            tokio::task::spawn_blocking(move || crate::events::publish(&db, &change)).await;
        if let Err(err) = published {
            tracing::warn!(error = %err, "could not tell the live streams of a change of access");
        }
    }

    /// The session of the request's cookie, if it is live.
    pub async fn session(&self, headers: &HeaderMap) -> Result<Option<Session>, WebError> {
        let Some(secret) = cookies::get(headers, cookies::SESSION) else {
            return Ok(None);
        };
        self.blocking(move |accounts| accounts.session(&secret))
            .await
    }

    /// The person asking for a page of `workspace`: signed in (else [`WebError::SignIn`]) and
    /// a member of it (else [`WebError::NotFound`], as for a workspace that does not exist).
    pub async fn person(&self, headers: &HeaderMap, workspace: &str) -> Result<Person, WebError> {
        let next = format!("{}/board", layout::base(workspace));
        let Some(session) = self.session(headers).await? else {
            return Err(WebError::SignIn { next });
        };
        let user_id = session.user.id;
        let memberships = self
            .blocking(move |accounts| accounts.memberships(user_id))
            .await?;
        let Some(membership) = memberships.iter().find(|m| m.workspace.name == workspace) else {
            return Err(WebError::NotFound);
        };
        let role = membership.role;
        let workspace_id = membership.workspace.id;
        let user = &session.user;
        let principal = Principal {
            workspace_id,
            workspace: membership.workspace.name.clone(),
            token_id: session.principal_token_id(),
            token_name: user.actor().to_string(),
            scopes: role.scopes(),
            expires_at: jility_core::token::parse_time(&session.expires_at),
            resource: None,
            grant_id: None,
        };
        let viewer = Viewer {
            name: user.actor().to_string(),
            email: Some(user.email.clone()),
            display_name: Some(user.name.clone()),
            caller: Caller {
                actor: user.actor().to_string(),
                principal: Some(principal),
                trace_parent: None,
            },
            can_write: role.can_write(),
            manages: role.manages_members(),
            csrf: session.csrf_token.clone(),
            workspace: membership.workspace.name.clone(),
            workspaces: memberships
                .iter()
                .map(|m| m.workspace.name.clone())
                .collect(),
            unread: 0,
        };
        Ok(Person {
            viewer,
            session,
            role,
            workspace_id,
        })
    }
}

impl Site for CloudSite {
    type Backend = People;

    fn backend(&self) -> &People {
        &self.inner.backend
    }

    async fn viewer(&self, headers: &HeaderMap, workspace: &str) -> Result<Viewer, WebError> {
        self.person(headers, workspace).await.map(|p| p.viewer)
    }

    async fn changes(&self, viewer: &Viewer) -> Result<BoxStream<'static, LiveEvent>, WebError> {
        let principal = viewer.caller.principal.as_ref().ok_or(WebError::NotFound)?;
        let session_id =
            crate::accounts::session_of_token_id(principal.token_id).ok_or(WebError::NotFound)?;
        let email = viewer.email.clone().unwrap_or_default();
        let workspace_id = principal.workspace_id;
        // The role the page was shown with (read with the person, before subscribing): the
        // stream ends when it changes, and the page, reconnecting, shows the new one.
        let receiver = self.inner.api.events.subscribe();
        let (user_id, role) = self
            .blocking(move |accounts| {
                let Some(user) = accounts.user_by_email(&email)? else {
                    return Ok(None);
                };
                Ok(accounts
                    .membership(user.id, workspace_id)?
                    .map(|role| (user.id, role)))
            })
            .await?
            .ok_or(WebError::NotFound)?;
        let expires_at = principal.expires_at;
        let live = Live {
            receiver,
            tick: tokio::time::interval_at(tokio::time::Instant::now() + RECHECK, RECHECK),
            expiry: Box::pin(tokio::time::sleep(until(expires_at))),
            expires_at,
            accounts: self.inner.accounts.clone(),
            session_id,
            user_id,
            workspace_id,
            role,
            shutdown: self.inner.api.shutdown.clone(),
            _counted: crate::api::metrics::Subscribed::web(),
        };
        Ok(stream::unfold(live, next_event).boxed())
    }

    async fn home(&self, headers: &HeaderMap) -> Response {
        let session = match self.session(headers).await {
            Ok(Some(session)) => session,
            Ok(None) => return Redirect::to("/login").into_response(),
            Err(err) => return err.answer(headers),
        };
        let user_id = session.user.id;
        let memberships = match self
            .blocking(move |accounts| accounts.memberships(user_id))
            .await
        {
            Ok(memberships) => memberships,
            Err(err) => return err.answer(headers),
        };
        if let Some(first) = memberships.first() {
            return Redirect::to(&format!("{}/board", layout::base(&first.workspace.name)))
                .into_response();
        }
        layout::bare(
            "No workspace yet",
            html! {
                main id="main" class="narrow" data-page="home" {
                    h1 { "You belong to no workspace yet" }
                    p { "Signed in as " (session.user.name) " (" (session.user.email) ")." }
                    p { "Ask an admin of a workspace for an invite link, and open it here." }
                    form method="post" action="/logout" {
                        input type="hidden" name="_csrf" value=(session.csrf_token);
                        button type="submit" { "Sign out" }
                    }
                }
            },
        )
        .into_response()
    }

    fn accounts(&self) -> bool {
        true
    }

    async fn people(&self, viewer: &Viewer) -> Vec<String> {
        let Some(workspace_id) = viewer.caller.principal.as_ref().map(|p| p.workspace_id) else {
            return Vec::new();
        };
        match self
            .blocking(move |accounts| accounts.members(workspace_id))
            .await
        {
            Ok(members) => members
                .into_iter()
                .map(|m| m.user.actor().to_string())
                .collect(),
            Err(_) => vec![viewer.name.clone()],
        }
    }
}

/// How long from now until `at` (none when past; a year when there is no expiry).
fn until(at: Option<chrono::DateTime<chrono::Utc>>) -> Duration {
    match at {
        Some(at) => (at - chrono::Utc::now()).to_std().unwrap_or(Duration::ZERO),
        None => Duration::from_secs(365 * 24 * 60 * 60),
    }
}

/// An open live stream of one person's page.
struct Live {
    receiver: tokio::sync::broadcast::Receiver<Event>,
    tick: tokio::time::Interval,
    /// Fires at the session's expiry.
    expiry: std::pin::Pin<Box<tokio::time::Sleep>>,
    expires_at: Option<chrono::DateTime<chrono::Utc>>,
    accounts: Accounts,
    session_id: i64,
    user_id: i64,
    workspace_id: i64,
    /// The person's role when the stream opened.
    role: Role,
    shutdown: tokio_util::sync::CancellationToken,
    /// Counted among the open event streams while the page is live.
    _counted: crate::api::metrics::Subscribed,
}

/// The stream's next event: a change of its workspace (never another's), a reset when
/// events may have been missed; it ends when the server stops, at the session's expiry, or
/// when the session ended, the person left the workspace or their role changed (checked
/// every [`RECHECK`], when told that this session's or person's access changed, and within
/// [`RESET_SPREAD`] of a `reset`, when such news may have been missed). Nothing is delivered
/// past the session's expiry.
async fn next_event(mut live: Live) -> Option<(LiveEvent, Live)> {
    loop {
        tokio::select! {
            () = live.shutdown.cancelled() => return None,
            () = &mut live.expiry => return None,
            _ = live.tick.tick() => {
                if !still_allowed(&live).await {
                    return None;
                }
            }
            received = live.receiver.recv() => match received {
                // This session's or this person's access changed: check again now. Other
                // revocations (of tokens, of other people's access) are not this stream's.
                Ok(Event::Change(change)) if change.revoked_token.is_some() => {
                    let mine = change.operation == ACCESS_CHANGED
                        && (change.actor == Access::Session(live.session_id).actor()
                            || change.actor == Access::User(live.user_id).actor());
                    if mine && !still_allowed(&live).await {
                        return None;
                    }
                }
                Ok(Event::Change(change)) => {
                    if change.workspace_id == Some(live.workspace_id) {
                        if lapsed(&live) {
                            return None;
                        }
                        let event = LiveEvent::Changed {
                            tickets: change.tickets.clone(),
                            actor: change.actor.clone(),
                        };
                        return Some((event, live));
                    }
                }
                // News of this session's or person's access may have been among the events
                // missed: check again soon — not at once, as every stream heard the same
                // reset, but spread over [`RESET_SPREAD`] by the session.
                Ok(Event::Reset) | Err(RecvError::Lagged(_)) => {
                    if lapsed(&live) {
                        return None;
                    }
                    live.tick.reset_after(spread(live.session_id));
                    return Some((LiveEvent::Reset, live));
                }
                Err(RecvError::Closed) => return None,
            },
        }
    }
}

/// The span over which the live streams check again after a `reset` (which they all hear
/// at once: a database whose listener came back must not get every stream's check at once).
const RESET_SPREAD: Duration = Duration::from_secs(10);

/// When, within [`RESET_SPREAD`], the stream of session `session_id` checks again.
fn spread(session_id: i64) -> Duration {
    let span = u64::try_from(RESET_SPREAD.as_millis()).unwrap_or(10_000);
    Duration::from_millis(session_id.unsigned_abs().wrapping_mul(7_919) % span)
}

/// Whether the stream's session is past its expiry (no database).
fn lapsed(live: &Live) -> bool {
    live.expires_at.is_some_and(|at| chrono::Utc::now() >= at)
}

/// Whether the stream's session is live and its person still a member of the workspace,
/// with the role the stream opened with.
async fn still_allowed(live: &Live) -> bool {
    let accounts = live.accounts.clone();
    let (session_id, user_id, workspace_id) = (live.session_id, live.user_id, live.workspace_id);
    let role = live.role;
    tokio::task::spawn_blocking(move || {
        Ok::<_, ToolError>(
            accounts.session_live(session_id, user_id)?
                && accounts.membership(user_id, workspace_id)? == Some(role),
        )
    })
    .await
    .ok()
    .and_then(Result::ok)
    .unwrap_or(false)
}
