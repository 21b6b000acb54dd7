//! Resource subscriptions as a server accepts them, in both protocol generations: which
//! URIs of a `subscriptions/listen` request it takes ([`accepted_filter`], [`listened_uris`]),
//! and one session's legacy `resources/subscribe` subscriptions ([`SessionSubscriptions`]:
//! the URIs, the peer to tell, the end of the task that tells it). Which URIs may be
//! subscribed to, what changed and when are the server's own.

use std::collections::BTreeSet;
use std::sync::Mutex;

use rmcp::RoleServer;
use rmcp::model::{ResourceUpdatedNotificationParam, SubscriptionFilter};
use rmcp::service::{Peer, SubscriptionContext};
use tokio::sync::oneshot;

/// What a server accepts of a `subscriptions/listen` request: the resource URIs of
/// `requested` that `subscribable` takes, and nothing else.
pub fn accepted_filter(
    requested: &SubscriptionFilter,
    subscribable: impl Fn(&str) -> bool,
) -> SubscriptionFilter {
    let mut accepted = SubscriptionFilter::new();
    accepted.resource_subscriptions = requested.resource_subscriptions.as_ref().map(|uris| {
        uris.iter()
            .filter(|uri| subscribable(uri))
            .cloned()
            .collect::<Vec<_>>()
    });
    accepted
}

/// Whether `filter` subscribes to a resource at all.
pub fn has_resources(filter: &SubscriptionFilter) -> bool {
    filter
        .resource_subscriptions
        .as_ref()
        .is_some_and(|uris| !uris.is_empty())
}

/// The resource URIs that a `subscriptions/listen` stream was accepted for and that
/// `subscribable` takes.
pub fn listened_uris(
    context: &SubscriptionContext,
    subscribable: impl Fn(&str) -> bool,
) -> Vec<String> {
    context
        .accepted()
        .resource_subscriptions
        .clone()
        .unwrap_or_default()
        .into_iter()
        .filter(|uri| subscribable(uri))
        .collect()
}

/// Tell a `subscriptions/listen` stream that each of `uris` was updated; `false` once the
/// stream is closed.
pub async fn notify_listener(context: &SubscriptionContext, uris: &[String]) -> bool {
    for uri in uris {
        if let Err(err) = context.sink().notify_resource_updated(uri.clone()).await {
            tracing::debug!(%err, "could not send a resource update");
            return false;
        }
    }
    true
}

/// The legacy (`resources/subscribe`) subscriptions of one client session, told through the
/// session's own peer. They end with the session: the task that tells them of changes ends
/// on the signal [`Self::accept`] hands out, which fires when they are dropped.
#[derive(Default)]
pub struct SessionSubscriptions {
    inner: Mutex<Inner>,
}

#[derive(Default)]
struct Inner {
    uris: BTreeSet<String>,
    peer: Option<Peer<RoleServer>>,
    /// Dropped with the subscriptions, which ends the task that tells them; `Some` once it
    /// runs.
    stop: Option<oneshot::Sender<()>>,
}

impl SessionSubscriptions {
    pub fn new() -> Self {
        Self::default()
    }

    /// Accept a `resources/subscribe` of `uri` (already checked by the server) from `peer`.
    /// The first one answers the signal that the subscriptions are gone: the caller then
    /// starts the one task that tells them of changes ([`Self::notify`]) and ends it on that
    /// signal.
    pub fn accept(
        &self,
        uri: String,
        peer: Peer<RoleServer>,
    ) -> Result<Option<oneshot::Receiver<()>>, String> {
        let mut inner = self
            .inner
            .lock()
            .map_err(|_| "subscription state is poisoned".to_string())?;
        inner.uris.insert(uri);
        inner.peer = Some(peer);
        if inner.stop.is_some() {
            return Ok(None);
        }
        let (stop, stopped) = oneshot::channel();
        inner.stop = Some(stop);
        Ok(Some(stopped))
    }

    /// End the subscription to `uri` (`resources/unsubscribe`).
    pub fn remove(&self, uri: &str) {
        if let Ok(mut inner) = self.inner.lock() {
            inner.uris.remove(uri);
        }
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

    /// Tell the session's client that every resource it subscribed to was updated; `false`
    /// once the client is gone (the task that tells it then ends).
    pub async fn notify(&self) -> bool {
        let Some((uris, peer)) = self.targets() else {
            return false;
        };
        for uri in uris {
            let param = ResourceUpdatedNotificationParam::new(uri);
            if let Err(err) = peer.notify_resource_updated(param).await {
                tracing::debug!(%err, "could not send a resource update");
            }
        }
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn filter(uris: Option<&[&str]>) -> SubscriptionFilter {
        let mut filter = SubscriptionFilter::new();
        filter.resource_subscriptions =
            uris.map(|uris| uris.iter().map(|uri| uri.to_string()).collect());
        filter
    }

    #[test]
    fn only_subscribable_resources_are_accepted() {
        let subscribable = |uri: &str| uri.starts_with("a://");
        let accepted = accepted_filter(&filter(Some(&["a://x", "b://y"])), subscribable);
        assert_eq!(accepted, filter(Some(&["a://x"])));
        assert!(has_resources(&accepted));
        let none = accepted_filter(&filter(Some(&["b://y"])), subscribable);
        assert!(!has_resources(&none));
        assert!(!has_resources(&accepted_filter(
            &filter(None),
            subscribable
        )));
    }
}
