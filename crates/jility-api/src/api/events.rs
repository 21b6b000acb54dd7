//! `GET /api/v1/events` (`tickets:read`): the workspace's changes as server-sent events.
//!
//! - `ready` first, once the subscription is in place: every change after it is sent. Its
//!   data is `{"heartbeat_secs": N}`: the interval of the heartbeats;
//! - `heartbeat` (data `{}`) whenever nothing else was sent for [`heartbeat_interval`]
//!   (5 s; `JILITY_EVENTS_HEARTBEAT_SECS`, 1 to 60, sets it): a client that hears nothing
//!   for a few intervals (the bridge: three) knows the server is gone or hung, even with
//!   the connection open, and stops trusting what it built on the events;
//! - `change` for each write of the caller's workspace (`{"operation","tickets","actor","at"}`),
//!   never another workspace's;
//! - `reset` when events may have been missed (this process lost its database listener,
//!   or the client fell behind): drop whatever was built on them. The stream ends after
//!   it; the client reconnects (and its token is checked again).
//!
//! A stream ends with its token's credential: at the token's expiry, when it is revoked
//! (through the API, by any server process on the database), and, for an OAuth access
//! token, when the person who approved it leaves the workspace or loses the role its scopes
//! need ([`super::principals::Lapse`]: a timer at the expiry, the revocation events, and a
//! re-read every few seconds shared by all the streams of a process). Nothing is delivered
//! once the credential is known to have lapsed: it is checked (without the database) before
//! each event. A stream also ends after at most [`MAX_STREAM`] (its client reconnects, and
//! its token is checked again in full), and when the server stops.

use std::convert::Infallible;
use std::sync::LazyLock;
use std::time::Duration;

use axum::Extension;
use axum::extract::State;
use axum::response::sse::{Event as SseEvent, KeepAlive, Sse};
use futures::{Stream, StreamExt as _, stream};
use tokio::sync::broadcast::error::RecvError;

use super::{ApiError, ApiState};
use crate::auth::{Principal, Scope};
use crate::events::Event;

/// Longest life of one stream.
const MAX_STREAM: Duration = Duration::from_secs(600);
/// The heartbeat's interval unless `JILITY_EVENTS_HEARTBEAT_SECS` says otherwise.
pub const DEFAULT_HEARTBEAT_SECS: u64 = 5;
/// The variable that sets it (whole seconds, 1 to 60).
pub const HEARTBEAT_VAR: &str = "JILITY_EVENTS_HEARTBEAT_SECS";

/// The interval of the `heartbeat` events (read once per process; a value that is not a
/// number from 1 to 60 is ignored, with a warning).
pub fn heartbeat_interval() -> Duration {
    static INTERVAL: LazyLock<u64> = LazyLock::new(|| match std::env::var(HEARTBEAT_VAR) {
        Err(_) => DEFAULT_HEARTBEAT_SECS,
        Ok(text) => match text.trim().parse::<u64>() {
            Ok(secs @ 1..=60) => secs,
            _ => {
                tracing::warn!(
                    value = %text,
                    "{HEARTBEAT_VAR} is not a number of seconds from 1 to 60; using {DEFAULT_HEARTBEAT_SECS}"
                );
                DEFAULT_HEARTBEAT_SECS
            }
        },
    });
    Duration::from_secs(*INTERVAL)
}

pub async fn stream(
    State(state): State<ApiState>,
    Extension(principal): Extension<Principal>,
) -> Result<Sse<impl Stream<Item = Result<SseEvent, Infallible>>>, ApiError> {
    principal.require(Scope::TicketsRead)?;
    let receiver = state.events.subscribe();
    let workspace = principal.workspace_id;
    let token = principal.token_id;
    let lapse = std::sync::Arc::new(state.principals.watch(&principal, &state));
    let holds = lapse.clone();
    // Counted as an open stream for as long as the stream lives.
    let subscribed = std::sync::Arc::new(super::metrics::Subscribed::api());
    let heartbeat = heartbeat_interval();
    let announced = serde_json::json!({ "heartbeat_secs": heartbeat.as_secs() }).to_string();
    let ready = stream::once(async move { Ok(SseEvent::default().event("ready").data(announced)) });
    // After a `reset` the stream ends: the client reconnects, and its token is checked again
    // (a revocation may have been among the events missed).
    let changes = stream::unfold(Some(receiver), move |receiver| {
        let holds = holds.clone();
        let _subscribed = subscribed.clone();
        async move {
            let _subscribed = _subscribed;
            let mut receiver = receiver?;
            loop {
                let received = receiver.recv().await;
                // Before each delivery: nothing goes to a credential known to have lapsed.
                if !holds.holds() {
                    return None;
                }
                let event = match received {
                    // The caller's token was revoked: its stream ends (it cannot reconnect).
                    Ok(Event::Change(change)) if change.revoked_token == Some(token) => {
                        return None;
                    }
                    Ok(Event::Change(change)) if change.revoked_token.is_some() => continue,
                    Ok(Event::Change(change)) if change.workspace_id == Some(workspace) => {
                        let mut change = (*change).clone();
                        change.workspace_id = None;
                        match SseEvent::default().event("change").json_data(&change) {
                            Ok(event) => event,
                            Err(_) => SseEvent::default().event("reset").data("{}"),
                        }
                    }
                    Ok(Event::Change(_)) => continue,
                    Ok(Event::Reset) | Err(RecvError::Lagged(_)) => {
                        return Some((Ok(SseEvent::default().event("reset").data("{}")), None));
                    }
                    Err(RecvError::Closed) => return None,
                };
                return Some((Ok(event), Some(receiver)));
            }
        }
    });
    let shutdown = state.shutdown.clone();
    let end = async move {
        tokio::select! {
            () = tokio::time::sleep(MAX_STREAM) => {}
            () = shutdown.cancelled() => {}
            () = lapse.lapsed() => {}
        }
    };
    let events = ready.chain(changes).take_until(Box::pin(end));
    // The heartbeat is an event (not a comment), so that a client sees it as such; axum
    // sends it whenever the stream was silent for an interval.
    Ok(Sse::new(events).keep_alive(
        KeepAlive::new()
            .interval(heartbeat)
            .event(SseEvent::default().event("heartbeat").data("{}")),
    ))
}
