//! `GET /w/{workspace}/events`: the workspace's changes for its open pages, as server-sent
//! events — `ready` once listening, `change` (`{"tickets": [...], "actor": "..."}`) for each
//! change, `reset` when changes may have been missed, and a comment every 15 s to keep
//! proxies from closing a quiet stream. The viewer is checked like any page's; the stream
//! is the [`Site`]'s for that viewer's workspace alone. The page's script reloads what it
//! shows when it hears a change.
//!
//! One session holds at most [`MAX_STREAMS_PER_SESSION`] streams at once (a person's open
//! tabs); past that a stream is refused `429` with `Retry-After`, so that one person cannot
//! hold the server's connections.

use std::collections::HashMap;
use std::convert::Infallible;
use std::sync::{Arc, LazyLock, Mutex};
use std::time::Duration;

use axum::extract::{Path, State};
use axum::http::HeaderMap;
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use futures::{StreamExt as _, stream};

use crate::errors::WebError;
use crate::site::{LiveEvent, Site};

/// Streams one session (told by its CSRF token, which is the session's) may hold at once.
pub const MAX_STREAMS_PER_SESSION: usize = 16;

/// Open streams per session, by a hash of the session's CSRF token.
static OPEN: LazyLock<Mutex<HashMap<[u8; 32], usize>>> = LazyLock::new(Default::default);

/// A stream counted against its session while it lives.
struct Counted([u8; 32]);

impl Counted {
    fn take(csrf: &str) -> Option<Arc<Self>> {
        let key = *blake3::hash(csrf.as_bytes()).as_bytes();
        let mut open = OPEN.lock().unwrap_or_else(|e| e.into_inner());
        let n = open.entry(key).or_insert(0);
        if *n >= MAX_STREAMS_PER_SESSION {
            return None;
        }
        *n += 1;
        Some(Arc::new(Self(key)))
    }
}

impl Drop for Counted {
    fn drop(&mut self) {
        let mut open = OPEN.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(n) = open.get_mut(&self.0) {
            *n = n.saturating_sub(1);
            if *n == 0 {
                open.remove(&self.0);
            }
        }
    }
}

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
    let Some(counted) = Counted::take(&viewer.csrf) else {
        let err = mcp_common_core::ToolError::new(
            mcp_common_core::codes::RATE_LIMITED,
            format!("This session has {MAX_STREAMS_PER_SESSION} live streams open already"),
        )
        .with_hint("Close some of this board's tabs; the others stay live.")
        .with_retry_after(30);
        return WebError::Tool(err).json();
    };
    let changes = match site.changes(&viewer).await {
        Ok(changes) => changes,
        Err(err) => return err.json(),
    };
    let ready =
        stream::once(async { Ok::<_, Infallible>(Event::default().event("ready").data("{}")) });
    let events = changes.map(move |event| {
        let _counted = &counted;
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
