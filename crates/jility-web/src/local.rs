//! `jility web`: the board on this project's own database, for the one person at this
//! machine — no accounts, reachable on loopback only. Like the `--http` servers it answers
//! only requests whose `Host` names the loopback address it listens on (a DNS-rebinding
//! page gets `403`), and every form needs the page's CSRF token and this origin. Its live
//! changes come from whoever writes the database (see `jility_sqlite::watch`): agents
//! through MCP, the CLI, another page.

use std::sync::Arc;

use axum::Router;
use axum::extract::Request;
use axum::http::{HeaderMap, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Redirect, Response};
use futures::StreamExt as _;
use futures::stream::BoxStream;
use jility_core::backend::Backend;
use mcp_common_core::ToolError;
use tokio::sync::broadcast;
use tokio_stream::wrappers::BroadcastStream;

use crate::errors::WebError;
use crate::site::{LiveEvent, Site, Viewer, local_caller};

/// The one workspace of local mode, as its pages' addresses name it: `/w/local/…`.
pub const WORKSPACE: &str = "local";

/// Local mode's [`Site`]: one person, one database.
pub struct LocalSite<B> {
    inner: Arc<Inner<B>>,
}

impl<B> Clone for LocalSite<B> {
    fn clone(&self) -> Self {
        Self {
            inner: Arc::clone(&self.inner),
        }
    }
}

struct Inner<B> {
    backend: B,
    person: String,
    csrf: String,
    changes: broadcast::Sender<LiveEvent>,
}

impl<B: Backend> LocalSite<B> {
    /// The site of `person` (the author of their changes) on `backend`; `changes` carries
    /// what the database's watcher hears.
    pub fn new(
        backend: B,
        person: String,
        changes: broadcast::Sender<LiveEvent>,
    ) -> Result<Self, ToolError> {
        let mut secret = [0u8; 32];
        getrandom::fill(&mut secret)
            .map_err(|e| ToolError::internal(format!("No randomness for the page token: {e}")))?;
        Ok(Self {
            inner: Arc::new(Inner {
                backend,
                person,
                csrf: blake3::hash(&secret).to_hex().to_string(),
                changes,
            }),
        })
    }

    /// The app for a server listening on loopback port `port`.
    pub fn router(self, port: u16) -> Router {
        let allowed = Arc::new(allowed_hosts(port));
        crate::router(self).layer(axum::middleware::from_fn(move |request, next| {
            let allowed = Arc::clone(&allowed);
            async move { check_host(&allowed, request, next).await }
        }))
    }
}

/// The `Host` values a loopback server on `port` answers to.
pub fn allowed_hosts(port: u16) -> Vec<String> {
    ["127.0.0.1", "localhost", "[::1]"]
        .iter()
        .map(|h| format!("{h}:{port}"))
        .collect()
}

async fn check_host(allowed: &[String], request: Request, next: Next) -> Response {
    let hosts: Vec<_> = request.headers().get_all(header::HOST).iter().collect();
    let ok = hosts.len() == 1
        && hosts[0]
            .to_str()
            .is_ok_and(|h| allowed.iter().any(|a| a.eq_ignore_ascii_case(h)));
    if ok {
        next.run(request).await
    } else {
        (
            StatusCode::FORBIDDEN,
            "This board answers only at the loopback address it listens on.",
        )
            .into_response()
    }
}

impl<B: Backend> Site for LocalSite<B> {
    type Backend = B;

    fn backend(&self) -> &B {
        &self.inner.backend
    }

    async fn viewer(&self, _headers: &HeaderMap, workspace: &str) -> Result<Viewer, WebError> {
        if workspace != WORKSPACE {
            return Err(WebError::NotFound);
        }
        Ok(Viewer {
            name: self.inner.person.clone(),
            email: None,
            display_name: None,
            caller: local_caller(&self.inner.person),
            can_write: true,
            manages: false,
            csrf: self.inner.csrf.clone(),
            workspace: WORKSPACE.to_string(),
            workspaces: Vec::new(),
            unread: 0,
        })
    }

    async fn changes(&self, _viewer: &Viewer) -> Result<BoxStream<'static, LiveEvent>, WebError> {
        let receiver = self.inner.changes.subscribe();
        Ok(BroadcastStream::new(receiver)
            .map(|event| event.unwrap_or(LiveEvent::Reset))
            .boxed())
    }

    async fn home(&self, _headers: &HeaderMap) -> Response {
        Redirect::to(&format!("/w/{WORKSPACE}/board")).into_response()
    }
}
