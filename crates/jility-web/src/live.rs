//! `GET /w/{workspace}/events`: the workspace's changes for its open pages, as server-sent
//! events — `ready` once listening, `change` (`{"tickets": [...], "actor": "..."}`) for each
//! change, `reset` when changes may have been missed, and a comment every 15 s to keep
//! proxies from closing a quiet stream. The viewer is checked like any page's; the stream
//! is the [`Site`]'s for that viewer's workspace alone, and ends when the site's does (on
//! `jility serve`: at the session's expiry or end, the person's removal, a change of their
//! role); the page's script then reconnects, checked like any page, and reloads what it
//! shows. The page's script reloads what it shows when it hears a change.
//!
//! One person holds at most [`MAX_STREAMS_PER_PERSON`] streams at once, across all their
//! sessions (their open tabs, on every device); past that a stream is refused `429` with
//! `Retry-After`, so that one person — however many times they sign in — cannot hold the
//! server's connections. The server holds at most [`MAX_STREAMS`] in all; past that a
//! stream is refused `503` (retryable) and pages fall back to reloading by hand.

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

/// Streams one person (told by their name: a person's email in cloud mode) may hold.
pub const MAX_STREAMS_PER_PERSON: usize = 32;
/// Streams the process holds in all.
pub const MAX_STREAMS: usize = 2000;

#[derive(Default)]
struct Open {
    by_person: HashMap<[u8; 32], usize>,
    total: usize,
}

/// Open streams per person (by a hash of their name), and in all.
static OPEN: LazyLock<Mutex<Open>> = LazyLock::new(Default::default);

/// A stream counted against its person and the server while it lives.
struct Counted([u8; 32]);

/// Why a stream was not counted.
enum Full {
    Person,
    Server,
}

impl Counted {
    fn take(person: &str) -> Result<Arc<Self>, Full> {
        let key = *blake3::hash(person.as_bytes()).as_bytes();
        let mut open = OPEN.lock().unwrap_or_else(|e| e.into_inner());
        if open.total >= MAX_STREAMS {
            return Err(Full::Server);
        }
        let n = open.by_person.entry(key).or_insert(0);
        if *n >= MAX_STREAMS_PER_PERSON {
            return Err(Full::Person);
        }
        *n += 1;
        open.total += 1;
        Ok(Arc::new(Self(key)))
    }
}

impl Drop for Counted {
    fn drop(&mut self) {
        let mut open = OPEN.lock().unwrap_or_else(|e| e.into_inner());
        open.total = open.total.saturating_sub(1);
        if let Some(n) = open.by_person.get_mut(&self.0) {
            *n = n.saturating_sub(1);
            if *n == 0 {
                open.by_person.remove(&self.0);
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
    let counted = match Counted::take(&viewer.name) {
        Ok(counted) => counted,
        Err(Full::Person) => {
            let err = mcp_common_core::ToolError::new(
                mcp_common_core::codes::RATE_LIMITED,
                format!("You have {MAX_STREAMS_PER_PERSON} live pages open already"),
            )
            .with_hint("Close some of the board's tabs (on any device); the others stay live.")
            .with_retry_after(30);
            return WebError::Tool(err).json();
        }
        Err(Full::Server) => {
            let err = mcp_common_core::ToolError::new(
                mcp_common_core::codes::UNAVAILABLE,
                "The server holds as many live pages as it can",
            )
            .with_hint("This page is not live: reload it to see changes, or try again later.")
            .with_retry_after(30);
            return WebError::Tool(err).json();
        }
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
