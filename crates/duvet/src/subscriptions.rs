//! Resource subscriptions: when the project's files change (specifications, sources,
//! requirement and TOML files, the config), subscribers are told that the resources they
//! subscribed to were updated.
//!
//! The [`Engine`]'s file watcher (inotify; no polling) publishes every change; nothing here
//! watches files itself. A burst of file events (an editor saving, a checkout) is announced
//! once, [`DEBOUNCE`] after its first event. Every change of the project announces every
//! subscribed URI of a session: the model is rebuilt whole, and which resources it changed
//! is not worked out.
//!
//! Two client generations are served: the legacy `resources/subscribe` request (protocol
//! versions up to 2025-11-25) and `subscriptions/listen` (2026-07-28). Each client session
//! (one over stdio, any number over HTTP) keeps its own legacy subscriptions in a
//! [`Session`] and is told through its own peer, as each `listen` stream is through its own
//! sink. A session's subscriptions end with it: its forwarding task stops when the session's
//! handler is dropped or its client is gone.

use std::{
    sync::{Arc, Mutex, Weak},
    time::Duration,
};

use mcp_common::subscribe::{self, SessionSubscriptions};
use rmcp::{
    RoleServer,
    service::{Peer, SubscriptionContext},
};
use tokio::sync::{oneshot, watch};

use crate::{engine::Engine, resources};

/// Changes closer together than this are announced once.
pub const DEBOUNCE: Duration = Duration::from_millis(100);

/// The subscriptions of one client session.
#[derive(Default)]
pub struct Session {
    legacy: SessionSubscriptions,
    /// Changes followed from the moment a `subscriptions/listen` was acknowledged, so that
    /// one between the acknowledgment and the stream's start is not missed.
    listen_from: Mutex<Option<watch::Receiver<u64>>>,
}

impl Session {
    pub fn new() -> Self {
        Self::default()
    }

    /// Subscribe this session to `uri` (already checked); changes reach it through `peer`.
    pub fn subscribe(
        self: &Arc<Self>,
        engine: &Arc<Engine>,
        uri: String,
        peer: Peer<RoleServer>,
    ) -> Result<(), String> {
        if let Some(stopped) = self.legacy.accept(uri, peer)? {
            tokio::spawn(forward(
                engine.clone(),
                engine.changes(),
                Arc::downgrade(self),
                stopped,
            ));
        }
        Ok(())
    }

    pub fn unsubscribe(&self, uri: &str) {
        self.legacy.remove(uri);
    }

    /// Start following changes for a `subscriptions/listen` about to be served.
    pub fn prepare_listen(&self, engine: &Engine) {
        if let Ok(mut listen_from) = self.listen_from.lock() {
            *listen_from = Some(engine.changes());
        }
    }

    /// Serve one `subscriptions/listen` stream until the client cancels it.
    pub async fn listen(&self, engine: &Arc<Engine>, context: SubscriptionContext) {
        let uris =
            subscribe::listened_uris(&context, |uri| resources::check_subscribable(uri).is_ok());
        let prepared = self
            .listen_from
            .lock()
            .ok()
            .and_then(|mut listen_from| listen_from.take());
        if uris.is_empty() {
            context.cancelled().await;
            return;
        }
        let mut changes = prepared.unwrap_or_else(|| engine.changes());
        loop {
            tokio::select! {
                _ = context.cancelled() => return,
                changed = settled(engine, &mut changes) => {
                    if !changed || !subscribe::notify_listener(&context, &uris).await {
                        return;
                    }
                }
            }
        }
    }
}

/// Wait for the next change and for the burst it starts to settle; then rebuild, so that the
/// directories a changed config names are watched from now on (and the next read is quick).
/// `false` when the engine is gone.
async fn settled(engine: &Arc<Engine>, changes: &mut watch::Receiver<u64>) -> bool {
    if changes.changed().await.is_err() {
        return false;
    }
    tokio::time::sleep(DEBOUNCE).await;
    changes.borrow_and_update();
    if let Err(err) = engine.snapshot().await {
        tracing::debug!(%err, "no project after the change");
    }
    true
}

/// Tell `session` about every change until it is dropped or its client is gone.
async fn forward(
    engine: Arc<Engine>,
    mut changes: watch::Receiver<u64>,
    session: Weak<Session>,
    mut stopped: oneshot::Receiver<()>,
) {
    loop {
        tokio::select! {
            _ = &mut stopped => break,
            changed = settled(&engine, &mut changes) => {
                if !changed {
                    break;
                }
            }
        }
        let Some(session) = session.upgrade() else {
            break;
        };
        if !session.legacy.notify().await {
            break;
        }
    }
    tracing::debug!("subscription forwarding ended");
}
