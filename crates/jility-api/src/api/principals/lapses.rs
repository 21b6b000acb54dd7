//! The watch over the credentials of open streams: a stream (an event stream, an MCP
//! session's `GET /mcp`, any answer that streams) holds a [`Lapse`] of its token, which
//! resolves when the token stops being good, so that the stream ends with its credential
//! rather than at its own pace.
//!
//! A token's credential lapses
//! - at its expiry, to the millisecond (a timer of the stream's own, no database);
//! - at its revocation, as soon as the revocation event is heard ([`crate::events`]: every
//!   revocation is published in the transaction that makes it, whichever process made it);
//! - when a periodic re-read finds it revoked, expired or gone, or — for an OAuth access
//!   token — its grant revoked, or the person who approved it no longer a member of the
//!   workspace, or holding a role that no longer allows the token's scopes. That re-read is
//!   one query for all the tokens this process has streams of, every [`RECHECK`], and at
//!   once when events may have been missed (the listener reconnected, or the watch fell
//!   behind); never one per stream or per event.
//!
//! A database that cannot be reached leaves the streams as they are (the expiry timers
//! still run; a revocation is a database write, so none can happen unheard meanwhile but
//! through another process, whose event arrives when the listener is back, with a re-read).
//!
//! Invariants: a token id is watched while at least one [`Lapse`] of it lives (and
//! forgotten with its last); once lapsed, every [`Lapse`] of that token stays lapsed.

use std::collections::{HashMap, HashSet};
use std::str::FromStr as _;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use chrono::{DateTime, SecondsFormat, Utc};
use tokio::sync::broadcast;
use tokio::sync::broadcast::error::RecvError;
use tokio_util::sync::CancellationToken;

use crate::accounts::Role;
use crate::auth::{Principal, Scope};
use crate::events::{Event, Events};
use crate::store::PgDatabase;
use jility_core::store::StoreError;

/// How often the credentials of the open streams are read again (besides the revocation
/// events, which end a stream at once).
pub const RECHECK: Duration = Duration::from_secs(5);

/// The tokens with open streams in this process.
#[derive(Default)]
pub(super) struct Watches {
    open: Mutex<HashMap<i64, Watched>>,
    started: OnceLock<()>,
}

struct Watched {
    lapsed: CancellationToken,
    /// The [`Lapse`]s of this token alive.
    holders: usize,
}

/// One stream's hold on its token's credential (see the module's documentation).
pub struct Lapse {
    token_id: i64,
    expires_at: Option<DateTime<Utc>>,
    lapsed: CancellationToken,
    watches: Arc<Watches>,
}

impl Watches {
    /// A [`Lapse`] of `principal`'s token; the first starts the watch (on the runtime of the
    /// caller), which ends when `shutdown` is cancelled.
    pub(super) fn watch(
        self: &Arc<Self>,
        principal: &Principal,
        events: &Events,
        db: &PgDatabase,
        shutdown: &CancellationToken,
    ) -> Lapse {
        self.started.get_or_init(|| {
            tokio::spawn(watch_over(
                self.clone(),
                events.subscribe(),
                db.clone(),
                shutdown.clone(),
            ));
        });
        let lapsed = match self.open.lock() {
            Ok(mut open) => {
                let watched = open.entry(principal.token_id).or_insert_with(|| Watched {
                    lapsed: CancellationToken::new(),
                    holders: 0,
                });
                watched.holders += 1;
                watched.lapsed.clone()
            }
            // Unreachable (nothing panics holding the lock); such a stream still ends at
            // its expiry.
            Err(_) => CancellationToken::new(),
        };
        Lapse {
            token_id: principal.token_id,
            expires_at: principal.expires_at,
            lapsed,
            watches: self.clone(),
        }
    }

    /// Token `token_id`'s streams end.
    pub(super) fn lapse(&self, token_id: i64) {
        if let Ok(open) = self.open.lock()
            && let Some(watched) = open.get(&token_id)
        {
            watched.lapsed.cancel();
        }
    }

    /// The tokens watched and not lapsed yet.
    fn current(&self) -> Vec<i64> {
        self.open
            .lock()
            .map(|open| {
                open.iter()
                    .filter(|(_, watched)| !watched.lapsed.is_cancelled())
                    .map(|(id, _)| *id)
                    .collect()
            })
            .unwrap_or_default()
    }
}

impl Lapse {
    /// Whether the credential still holds, as far as is known without asking the database
    /// (its expiry; its revocation as heard or last read): checked before each delivery.
    pub fn holds(&self) -> bool {
        !self.lapsed.is_cancelled() && self.expires_at.is_none_or(|at| Utc::now() < at)
    }

    /// Resolves when the credential lapses: at its expiry, or when it is found revoked.
    pub async fn lapsed(&self) {
        let expiry = async {
            match self.expires_at {
                Some(at) => {
                    let left = (at - Utc::now()).to_std().unwrap_or(Duration::ZERO);
                    tokio::time::sleep(left).await;
                }
                None => std::future::pending().await,
            }
        };
        tokio::select! {
            () = expiry => {}
            () = self.lapsed.cancelled() => {}
        }
    }
}

impl Drop for Lapse {
    fn drop(&mut self) {
        if let Ok(mut open) = self.watches.open.lock()
            && let Some(watched) = open.get_mut(&self.token_id)
        {
            watched.holders = watched.holders.saturating_sub(1);
            if watched.holders == 0 {
                open.remove(&self.token_id);
            }
        }
    }
}

/// The watch: revocations as they are heard, and a re-read of every watched token every
/// [`RECHECK`] and whenever events may have been missed.
async fn watch_over(
    watches: Arc<Watches>,
    mut events: broadcast::Receiver<Event>,
    db: PgDatabase,
    shutdown: CancellationToken,
) {
    let mut tick = tokio::time::interval(RECHECK);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let mut hearing = true;
    loop {
        tokio::select! {
            () = shutdown.cancelled() => return,
            _ = tick.tick() => recheck(&watches, &db).await,
            received = events.recv(), if hearing => match received {
                Ok(Event::Change(change)) => {
                    if let Some(token_id) = change.revoked_token {
                        watches.lapse(token_id);
                    }
                }
                // A revocation may have been among the events missed.
                Ok(Event::Reset) | Err(RecvError::Lagged(_)) => {
                    recheck(&watches, &db).await;
                    tick.reset();
                }
                // The relay is gone (the process is stopping): the re-reads go on.
                Err(RecvError::Closed) => hearing = false,
            },
        }
    }
}

/// Read every watched token again; lapse those no longer good.
async fn recheck(watches: &Watches, db: &PgDatabase) {
    let ids = watches.current();
    if ids.is_empty() {
        return;
    }
    let db = db.clone();
    let asked = ids.clone();
    match tokio::task::spawn_blocking(move || still_good(&db, &asked)).await {
        Ok(Ok(good)) => {
            for id in ids.iter().filter(|id| !good.contains(id)) {
                tracing::info!(
                    token_id = id,
                    "a token with open streams no longer holds; its streams end"
                );
                watches.lapse(*id);
            }
        }
        Ok(Err(err)) => {
            tracing::warn!(error = %err, "cannot read the tokens of open streams again; they go on");
        }
        Err(err) => {
            tracing::warn!(error = %err, "cannot read the tokens of open streams again; they go on");
        }
    }
}

/// Which of `ids` are still good: neither revoked nor expired, and, for an OAuth access
/// token, its grant live and the person who approved it a member whose role allows every
/// scope of the token.
fn still_good(db: &PgDatabase, ids: &[i64]) -> Result<HashSet<i64>, StoreError> {
    let now = Utc::now().to_rfc3339_opts(SecondsFormat::Millis, true);
    db.with_client(|client| {
        let rows = client
            .query(
                "SELECT t.id, t.scopes, t.oauth_grant_id IS NOT NULL, g.id IS NOT NULL, m.role \
                 FROM api_tokens t \
                 LEFT JOIN oauth_grants g ON g.id = t.oauth_grant_id AND g.revoked_at IS NULL \
                 LEFT JOIN memberships m ON m.workspace_id = g.workspace_id AND m.user_id = g.user_id \
                 WHERE t.id = ANY($1) AND t.revoked_at IS NULL \
                   AND (t.expires_at IS NULL OR t.expires_at > $2)",
                &[&ids, &now],
            )
            .map_err(crate::store::db)?;
        let mut good = HashSet::new();
        for row in &rows {
            let id: i64 = row.try_get(0).map_err(crate::store::db)?;
            let of_grant: bool = row.try_get(2).map_err(crate::store::db)?;
            if of_grant {
                let live: bool = row.try_get(3).map_err(crate::store::db)?;
                let role: Option<String> = row.try_get(4).map_err(crate::store::db)?;
                let scopes: Vec<String> = row.try_get(1).map_err(crate::store::db)?;
                let allowed = role
                    .and_then(|role| Role::from_str(&role).ok())
                    .is_some_and(|role| {
                        let allows = role.scopes();
                        scopes.iter().all(|name| {
                            Scope::from_str(name).is_ok_and(|scope| allows.allows(scope))
                        })
                    });
                if !(live && allowed) {
                    continue;
                }
            }
            good.insert(id);
        }
        Ok(good)
    })
}
