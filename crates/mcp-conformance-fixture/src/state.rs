//! The handler, [`Fixture`]: one per session (or stateless request), all sharing the state
//! key and the list-change feed, each with its own log level and subscriptions.

// `logging/setLevel`'s levels are what the 2025-11-25 scenarios test: rmcp marks them
// deprecated (SEP-2577), the fixture serves them all the same.
#![allow(deprecated)]

use std::sync::{Arc, Mutex};

use mcp_common::CursorKey;
use mcp_common::ask::Asker;
use mcp_common::subscribe::SessionSubscriptions;
use rmcp::RoleServer;
use rmcp::service::RequestContext;
use tokio::sync::broadcast;

use crate::wire::is_stateless;

/// A change of a list that `subscriptions/listen` streams are told of (made by the
/// `test_trigger_*_change` tools).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ListChange {
    Tools,
    Prompts,
}

/// What every session shares.
struct Shared {
    /// Seals the `requestState` of the input-required tools.
    asker: Asker,
    /// List changes, for the open `subscriptions/listen` streams.
    changes: broadcast::Sender<ListChange>,
}

/// What one session keeps (2025-11-25; a stateless request has a fresh one).
#[derive(Default)]
struct Session {
    /// The level `logging/setLevel` set: messages below it are not sent.
    level: Mutex<Option<u8>>,
    /// `resources/subscribe`'s subscriptions.
    subscriptions: SessionSubscriptions,
}

/// The fixture's handler.
#[derive(Clone)]
pub struct Fixture {
    shared: Arc<Shared>,
    session: Arc<Session>,
}

impl Default for Fixture {
    fn default() -> Self {
        Self::new()
    }
}

impl Fixture {
    /// A handler with a fresh state key; [`Self::session`] makes the others.
    pub fn new() -> Self {
        let (changes, _) = broadcast::channel(64);
        Self {
            shared: Arc::new(Shared {
                asker: Asker::new(&CursorKey::random()),
                changes,
            }),
            session: Arc::new(Session::default()),
        }
    }

    /// A handler for another session: the same shared state, its own log level and
    /// subscriptions.
    pub fn session(&self) -> Self {
        Self {
            shared: self.shared.clone(),
            session: Arc::new(Session::default()),
        }
    }

    /// The sealer of request states.
    pub fn asker(&self) -> &Asker {
        &self.shared.asker
    }

    /// A feed of the list changes from now on, for a listen stream.
    pub fn changes(&self) -> broadcast::Receiver<ListChange> {
        self.shared.changes.subscribe()
    }

    /// Set the level of this session's log messages (`logging/setLevel`).
    pub fn set_level(&self, level: rmcp::model::LoggingLevel) {
        if let Ok(mut min) = self.session.level.lock() {
            *min = Some(level_rank(level));
        }
    }

    /// This session's `resources/subscribe` subscriptions.
    pub fn subscriptions(&self) -> &SessionSubscriptions {
        &self.session.subscriptions
    }

    /// Tell the open listen streams that a list changed.
    pub fn changed(&self, change: ListChange) {
        // No stream open is no error.
        let _ = self.shared.changes.send(change);
    }

    /// Whether a message at `level` (a rank, [`level_rank`]) is to be sent: in a session,
    /// when `logging/setLevel` did not set a higher level; stateless, only when the request's
    /// `_meta` names a level, and it is not higher.
    pub fn logs(&self, context: &RequestContext<RoleServer>, level: u8) -> bool {
        if is_stateless(context) {
            return context
                .meta
                .log_level()
                .is_some_and(|min| level >= level_rank(min));
        }
        let min = self.session.level.lock().ok().and_then(|level| *level);
        min.is_none_or(|min| level >= min)
    }
}

/// The rank of a logging level (debug 0 … emergency 7).
pub fn level_rank(level: rmcp::model::LoggingLevel) -> u8 {
    level as u8
}
