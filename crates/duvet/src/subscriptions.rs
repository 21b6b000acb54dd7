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
    collections::BTreeSet,
    sync::{Arc, Mutex, Weak},
    time::Duration,
};

use rmcp::{
    RoleServer,
    model::ResourceUpdatedNotificationParam,
    service::{Peer, SubscriptionContext},
};
use tokio::sync::{oneshot, watch};

use crate::{engine::Engine, resources};

/// Changes closer together than this are announced once.
pub const DEBOUNCE: Duration = Duration::from_millis(100);

/// The subscriptions of one client session.
#[derive(Default)]
pub struct Session {
    inner: Mutex<SessionInner>,
}

#[derive(Default)]
struct SessionInner {
    uris: BTreeSet<String>,
    peer: Option<Peer<RoleServer>>,
    /// Dropped with the session, which ends its forwarding task; `Some` once it runs.
    stop: Option<oneshot::Sender<()>>,
    /// Changes followed from the moment a `subscriptions/listen` was acknowledged, so that
    /// one between the acknowledgment and the stream's start is not missed.
    listen_from: Option<watch::Receiver<u64>>,
}

impl Session {
    pub fn new() -> Self {
        Self::default()
    }

    /// What to tell and whom; `None` once the session's client is gone.
    fn targets(&self) -> Option<(Vec<String>, Peer<RoleServer>)> {
        let inner = self.inner.lock().ok()?;
        let peer = inner.peer.clone()?;
        if peer.is_transport_closed() {
            return None;
        }
        Some((inner.uris.iter().cloned().collect(), peer))
    }

    /// Subscribe this session to `uri` (already checked); changes reach it through `peer`.
    pub fn subscribe(
        self: &Arc<Self>,
        engine: &Arc<Engine>,
        uri: String,
        peer: Peer<RoleServer>,
    ) -> Result<(), String> {
        let mut inner = self
            .inner
            .lock()
            .map_err(|_| "subscription state is poisoned".to_string())?;
        inner.uris.insert(uri);
        inner.peer = Some(peer);
        if inner.stop.is_some() {
            return Ok(());
        }
        let (stop, stopped) = oneshot::channel();
        inner.stop = Some(stop);
        drop(inner);
        tokio::spawn(forward(
            engine.clone(),
            engine.changes(),
            Arc::downgrade(self),
            stopped,
        ));
        Ok(())
    }

    pub fn unsubscribe(&self, uri: &str) {
        if let Ok(mut inner) = self.inner.lock() {
            inner.uris.remove(uri);
        }
    }

    /// Start following changes for a `subscriptions/listen` about to be served.
    pub fn prepare_listen(&self, engine: &Engine) {
        if let Ok(mut inner) = self.inner.lock() {
            inner.listen_from = Some(engine.changes());
        }
    }

    /// Serve one `subscriptions/listen` stream until the client cancels it.
    pub async fn listen(&self, engine: &Arc<Engine>, context: SubscriptionContext) {
        let uris: Vec<String> = context
            .accepted()
            .resource_subscriptions
            .clone()
            .unwrap_or_default()
            .into_iter()
            .filter(|uri| resources::check_subscribable(uri).is_ok())
            .collect();
        let prepared = self
            .inner
            .lock()
            .ok()
            .and_then(|mut inner| inner.listen_from.take());
        if uris.is_empty() {
            context.cancelled().await;
            return;
        }
        let mut changes = prepared.unwrap_or_else(|| engine.changes());
        loop {
            tokio::select! {
                _ = context.cancelled() => return,
                changed = settled(engine, &mut changes) => {
                    if !changed {
                        return;
                    }
                    for uri in &uris {
                        if let Err(err) = context.sink().notify_resource_updated(uri.clone()).await {
                            tracing::debug!(%err, "could not send a resource update");
                            return;
                        }
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
        let Some((uris, peer)) = session.upgrade().and_then(|s| s.targets()) else {
            break;
        };
        for uri in uris {
            let param = ResourceUpdatedNotificationParam::new(uri);
            if let Err(err) = peer.notify_resource_updated(param).await {
                tracing::debug!(%err, "could not send a resource update");
            }
        }
    }
    tracing::debug!("subscription forwarding ended");
}
