//! `GET /w/{workspace}/events`: the workspace's changes for its open pages, as server-sent
//! events — `ready` once listening, `change` (`{"tickets": [...], "actor": "..."}`) for each
//! change, `reset` when changes may have been missed, and a comment every 15 s to keep
//! proxies from closing a quiet stream. The viewer is checked like any page's; the stream
//! is the [`Site`]'s for that viewer's workspace alone. The page's script reloads what it
//! shows when it hears a change.

use std::convert::Infallible;
use std::time::Duration;

use axum::extract::{Path, State};
use axum::http::HeaderMap;
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use futures::{StreamExt as _, stream};

use crate::site::{LiveEvent, Site};

/// The interval of the keep-alive comments.
const KEEP_ALIVE: Duration = Duration::from_secs(15);

pub async fn stream<S: Site>(
    State(site): State<S>,
    Path(workspace): Path<String>,
    headers: HeaderMap,
) -> Response {
    let viewer = match site.viewer(&headers, &workspace).await {
        Ok(v) => v,
        Err(err) => return err.json(),
    };
    let changes = match site.changes(&viewer).await {
        Ok(changes) => changes,
        Err(err) => return err.json(),
    };
    let ready =
        stream::once(async { Ok::<_, Infallible>(Event::default().event("ready").data("{}")) });
    let events = changes.map(|event| {
        Ok::<_, Infallible>(match event {
            LiveEvent::Changed { tickets, actor } => Event::default()
                .event("change")
                .data(serde_json::json!({ "tickets": tickets, "actor": actor }).to_string()),
            LiveEvent::Reset => Event::default().event("reset").data("{}"),
        })
    });
    Sse::new(ready.chain(events))
        .keep_alive(KeepAlive::new().interval(KEEP_ALIVE))
        .into_response()
}
