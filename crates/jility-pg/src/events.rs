//! The change events of `jility serve`: every successful write is published through
//! PostgreSQL (`NOTIFY jility_events`), so that every server process on the database hears
//! every write, whichever process made it; each process relays them to its subscribers
//! (`GET /api/v1/events`), each of whom sees only its own workspace's.
//!
//! A process listens on a connection of its own. When that connection is lost, events may
//! have been missed: after reconnecting, the process sends every subscriber a `reset`, and a
//! subscriber that falls behind gets one too, so that a cache built on the events (the
//! bridge's) is dropped rather than left stale.

use std::sync::Arc;
use std::time::Duration;

use postgres::fallible_iterator::FallibleIterator as _;
use serde::{Deserialize, Serialize};
use tokio::sync::broadcast;

use crate::store::PgDatabase;

/// The PostgreSQL channel.
pub const CHANNEL: &str = "jility_events";

/// Most ticket numbers one event carries (a NOTIFY payload is at most 8,000 bytes); an
/// event of a larger write carries none, which subscribers take as "anything may have
/// changed".
const MAX_TICKETS: usize = 200;

/// How long [`Events::start`] waits for the listener's first connection.
const START_WAIT: Duration = Duration::from_secs(10);

/// How many events a slow subscriber may fall behind before it is sent a `reset`.
const BUFFER: usize = 1024;

/// A change, as published and as relayed (without the workspace, which only routes it).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Change {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workspace_id: Option<i64>,
    /// The operation, by its MCP tool's name (`jility_claim_ticket`, `jility_delete_ticket`…).
    pub operation: String,
    /// The tickets it touched (`KEY-N`); empty when it touched too many to list.
    pub tickets: Vec<String>,
    /// The name of the token that made it.
    pub actor: String,
    pub at: String,
    /// Set on the event of a token's revocation (never relayed): the streams of that token
    /// end, so that nothing built on them (the bridge's cache) outlives the token.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub revoked_token: Option<i64>,
}

impl Change {
    pub fn new(workspace_id: i64, operation: &str, mut tickets: Vec<String>, actor: &str) -> Self {
        if tickets.len() > MAX_TICKETS {
            tickets.clear();
        }
        Self {
            workspace_id: Some(workspace_id),
            operation: operation.to_string(),
            tickets,
            actor: actor.chars().take(100).collect(),
            at: chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true),
            revoked_token: None,
        }
    }

    /// The revocation of token `token_id` of workspace `workspace_id`, by `actor`.
    pub fn revocation(workspace_id: i64, token_id: i64, actor: &str) -> Self {
        Self {
            revoked_token: Some(token_id),
            ..Self::new(workspace_id, "token_revoked", Vec::new(), actor)
        }
    }
}

/// What a subscriber receives.
#[derive(Debug, Clone)]
pub enum Event {
    Change(Arc<Change>),
    /// Events may have been lost: whatever was built on them must be dropped.
    Reset,
}

/// This process's relay of the database's events.
#[derive(Clone)]
pub struct Events {
    sender: broadcast::Sender<Event>,
}

impl Events {
    /// Listen on the database (on a thread of its own, reconnecting when the connection is
    /// lost) and relay what it hears. Returns once it listens (or after [`START_WAIT`]), so
    /// that no subscriber of this process misses a change made after its `ready`.
    pub fn start(db: &PgDatabase) -> Self {
        let (sender, _) = broadcast::channel(BUFFER);
        let relay = sender.clone();
        let db = db.clone();
        let (listening, started) = std::sync::mpsc::channel();
        let spawned = std::thread::Builder::new()
            .name("jility-events".into())
            .spawn(move || listen(&db, &relay, listening));
        match spawned {
            Ok(_) => {
                if started.recv_timeout(START_WAIT).is_err() {
                    tracing::warn!(
                        "not listening for events yet; subscribers may miss changes until then"
                    );
                }
            }
            Err(err) => {
                tracing::error!(error = %err, "cannot start the event listener; /events will stay silent");
            }
        }
        Self { sender }
    }

    pub fn subscribe(&self) -> broadcast::Receiver<Event> {
        self.sender.subscribe()
    }
}

fn listen(
    db: &PgDatabase,
    relay: &broadcast::Sender<Event>,
    listening: std::sync::mpsc::Sender<()>,
) {
    let mut first = true;
    let mut backoff = Duration::from_millis(200);
    loop {
        match db.dedicated().and_then(|mut client| {
            client
                .batch_execute(&format!("LISTEN {CHANNEL}"))
                .map_err(crate::store::db)?;
            Ok(client)
        }) {
            Ok(mut client) => {
                if !first {
                    tracing::info!("listening for events again; telling subscribers to resync");
                    let _ = relay.send(Event::Reset);
                }
                first = false;
                let _ = listening.send(());
                backoff = Duration::from_millis(200);
                let mut notifications = client.notifications();
                let mut iter = notifications.blocking_iter();
                loop {
                    match iter.next() {
                        Ok(Some(notification)) => {
                            match serde_json::from_str::<Change>(notification.payload()) {
                                Ok(change) => {
                                    let _ = relay.send(Event::Change(Arc::new(change)));
                                }
                                Err(err) => {
                                    tracing::warn!(error = %err, "an event that is not a change");
                                }
                            }
                        }
                        Ok(None) => break,
                        Err(err) => {
                            tracing::warn!(error = %err, "lost the event connection");
                            break;
                        }
                    }
                }
            }
            Err(err) => {
                tracing::warn!(error = %err, "cannot listen for events; retrying");
            }
        }
        std::thread::sleep(backoff);
        backoff = (backoff * 2).min(Duration::from_secs(10));
    }
}

/// Publish the revocation of token `token_id` of `workspace_id` on `client` (a transaction:
/// delivered when it commits), so that every server process stops accepting it at once.
pub fn notify_revoked(
    client: &mut impl postgres::GenericClient,
    workspace_id: i64,
    token_id: i64,
) -> Result<(), mcp_common_core::ToolError> {
    let change = Change::revocation(workspace_id, token_id, "");
    let payload = serde_json::to_string(&change).map_err(|e| {
        mcp_common_core::ToolError::internal(format!("cannot encode an event: {e}"))
    })?;
    client
        .execute("SELECT pg_notify($1, $2)", &[&CHANNEL, &payload])
        .map_err(|e| mcp_common_core::ToolError::from(crate::store::db(e)))?;
    Ok(())
}

/// Publish `change` to every process on the database (on the calling, blocking thread).
pub fn publish(db: &PgDatabase, change: &Change) {
    let payload = match serde_json::to_string(change) {
        Ok(payload) => payload,
        Err(err) => {
            tracing::warn!(error = %err, "cannot encode an event");
            return;
        }
    };
    let sent = db.with_client(|client| -> Result<(), jility_core::store::StoreError> {
        client
            .execute("SELECT pg_notify($1, $2)", &[&CHANNEL, &payload])
            .map_err(crate::store::db)?;
        Ok(())
    });
    if let Err(err) = sent {
        tracing::warn!(error = %err, "cannot publish an event");
    }
}
