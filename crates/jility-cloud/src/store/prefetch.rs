//! A whole-ticket read without a blocking thread: the tracker's operation runs on the
//! async runtime twice, with no connection. The first time ([`Prefetch::Armed`]) it only
//! notes the one statement it asks for ([`Lookup`]); that statement then runs on an async
//! connection ([`Reader`], tokio-postgres, pipelined); the second time
//! ([`Prefetch::Replay`]) the operation is answered from its row. Anything else a run
//! asks of the store (a second statement, a transaction, a write) ends the attempt
//! ([`Prefetch::Missed`]) and the operation runs as any other, on a blocking thread. So
//! the answer is the same either way; only where it waits differs. A read its connection
//! has not answered within [`HEDGE_AFTER`] is also asked on another ([`Reader::query`]).

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use postgres::Row;
use postgres::types::ToSql;
use tokio_postgres::{Client, NoTls, Statement};

use super::PgStore;
use crate::reach::Health;
use jility_core::tracker::Tracker;

/// The statement that finds a ticket and its context, by what it is looked up by.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) enum Lookup {
    Number { key: String, number: i64 },
    Uuid(String),
}

/// The conditions on `t` of a [`Lookup`], its values `$2…`.
pub(super) const BY_NUMBER: &str = "p.key = $2 AND t.number = $3";
pub(super) const BY_UUID: &str = "t.uuid = $2";

impl Lookup {
    /// The condition on `t`.
    pub(super) fn condition(&self) -> &'static str {
        match self {
            Self::Number { .. } => BY_NUMBER,
            Self::Uuid(_) => BY_UUID,
        }
    }

    /// The statement's values, the workspace first.
    pub(super) fn params<'a>(&'a self, ws: &'a i64) -> Vec<&'a (dyn ToSql + Sync)> {
        match self {
            Self::Number { key, number } => vec![ws, key, number],
            Self::Uuid(uuid) => vec![ws, uuid],
        }
    }
}

/// Where a [`super::PgStore`] handle's prefetched read stands.
#[derive(Default)]
pub(super) enum Prefetch {
    /// Reads and writes run on a connection, as always.
    #[default]
    Off,
    /// The next run only notes its first statement.
    Armed,
    /// It asked for this one statement (and nothing else).
    Planned(Lookup),
    /// The next run is answered from this statement's row.
    Replay(Option<Row>),
    /// It was answered.
    Done,
    /// It asked for more than one prefetched statement gives.
    Missed,
}

/// How many async connections a server keeps for prefetched reads: each carries many
/// reads at once (pipelined), so a few keep PostgreSQL busy. Measured on two cores with 32
/// clients: two or three give more reads a second but queue many behind a backend the
/// system is slow to schedule (p99 50–90 ms); five or more cost a tenth of the rate.
const CONNECTIONS: usize = 4;

/// One async connection and the statements prepared on it.
struct Slot {
    client: Client,
    statements: Mutex<HashMap<&'static str, Statement>>,
    /// Reads sent on it and not answered yet.
    in_flight: AtomicUsize,
}

/// A read counted in its connection's [`Slot::in_flight`] until dropped (answered, failed
/// or abandoned).
struct InFlight(Arc<Slot>);

impl InFlight {
    fn new(slot: Arc<Slot>) -> Self {
        slot.in_flight.fetch_add(1, Ordering::Relaxed);
        Self(slot)
    }
}

impl Drop for InFlight {
    fn drop(&mut self) {
        self.0.in_flight.fetch_sub(1, Ordering::Relaxed);
    }
}

/// Async connections to the database, connected on first use on the runtime that uses
/// them (their I/O runs there as tasks), replaced when closed.
pub(super) struct Reader {
    config: tokio_postgres::Config,
    slots: Vec<Mutex<Option<Arc<Slot>>>>,
    next: AtomicUsize,
    /// Reads being asked again on a second connection ([`HEDGES`] at most).
    hedges: AtomicUsize,
}

impl Reader {
    pub(super) fn new(config: tokio_postgres::Config) -> Self {
        Self {
            config,
            slots: (0..CONNECTIONS).map(|_| Mutex::new(None)).collect(),
            next: AtomicUsize::new(0),
            hedges: AtomicUsize::new(0),
        }
    }

    /// The connection with the fewest reads in flight (ties in turn, one not opened yet
    /// first), other than `except`: a backend PostgreSQL is slow to schedule holds up the
    /// reads queued on its connection, so new ones go elsewhere. `None` when one cannot be
    /// had now (recorded in `health`, as the pool records its own attempts).
    async fn slot(&self, health: &Health, except: Option<&Arc<Slot>>) -> Option<Arc<Slot>> {
        let count = self.slots.len();
        let start = self.next.fetch_add(1, Ordering::Relaxed) % count;
        let mut best: Option<(usize, usize)> = None;
        for at in (start..start + count).map(|i| i % count) {
            let load = match self.slots.get(at)?.lock().ok()?.as_ref() {
                Some(slot) if except.is_some_and(|e| Arc::ptr_eq(e, slot)) => continue,
                Some(slot) if !slot.client.is_closed() => slot.in_flight.load(Ordering::Relaxed),
                _ => 0,
            };
            if best.is_none_or(|(least, _)| load < least) {
                best = Some((load, at));
            }
            if load == 0 {
                break;
            }
        }
        let cell = self.slots.get(best?.1)?;
        if let Some(slot) = cell.lock().ok()?.as_ref()
            && !slot.client.is_closed()
        {
            return Some(slot.clone());
        }
        let connected = self.config.connect(NoTls).await;
        health.record(&connected.as_ref().map(|_| ()));
        let (client, connection) = connected.ok()?;
        tokio::spawn(async move {
            if let Err(err) = connection.await {
                tracing::debug!(error = %err, "an async read connection closed");
            }
        });
        let slot = Arc::new(Slot {
            client,
            statements: Mutex::new(HashMap::new()),
            in_flight: AtomicUsize::new(0),
        });
        *cell.lock().ok()? = Some(slot.clone());
        Some(slot)
    }

    /// The rows of `lookup`'s statement `sql` in workspace `ws`; `None` when it could not
    /// run here (the caller then reads on a blocking thread, which reports why).
    ///
    /// A read not answered within [`HEDGE_AFTER`] is asked again on another connection and
    /// the first answer taken ([`HEDGES`] at most at once): the reads pipelined on one
    /// connection wait for each other, so one backend that stops (a page read from a slow
    /// disk, a process the system does not schedule, a stopped one) would hold up all the
    /// reads queued behind it. The slower one runs on to its end in the background, so its
    /// connection's count of reads in flight stays true and new reads keep away from it.
    pub(super) async fn query(
        &self,
        health: &Health,
        sql: &'static str,
        lookup: &Lookup,
        ws: i64,
    ) -> Option<Vec<Row>> {
        let first = self.slot(health, None).await?;
        let mut primary = Box::pin(read(first.clone(), sql, lookup.clone(), ws));
        tokio::select! {
            biased;
            rows = &mut primary => return rows,
            () = tokio::time::sleep(HEDGE_AFTER) => {}
        }
        let Some(_hedging) = Hedging::start(&self.hedges) else {
            return primary.await;
        };
        let Some(second) = self.slot(health, Some(&first)).await else {
            return primary.await;
        };
        let mut hedge = Box::pin(read(second, sql, lookup.clone(), ws));
        let (rows, other) = tokio::select! {
            rows = &mut primary => (rows, hedge),
            rows = &mut hedge => (rows, primary),
        };
        match rows {
            Some(rows) => {
                tokio::spawn(other);
                Some(rows)
            }
            None => other.await,
        }
    }
}

/// How long a prefetched read waits on its connection before it is also asked on another
/// ([`Reader::query`]). Reads answer in 1–3 ms with 32 clients on two cores (measured on
/// the wire: p99 about 2.5 times the median); one that takes 5 ms waits behind a backend
/// that has stopped.
const HEDGE_AFTER: Duration = Duration::from_millis(5);

/// Reads asked again at once, at most: when every backend is slow (the database
/// overloaded), asking twice would only add to its load.
const HEDGES: usize = CONNECTIONS;

/// A read being asked again, counted in [`Reader::hedges`] until dropped.
struct Hedging<'a>(&'a AtomicUsize);

impl<'a> Hedging<'a> {
    fn start(count: &'a AtomicUsize) -> Option<Self> {
        count
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| {
                (n < HEDGES).then_some(n + 1)
            })
            .ok()
            .map(|_| Self(count))
    }
}

impl Drop for Hedging<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::AcqRel);
    }
}

/// `sql` with `lookup`'s values on `slot` (prepared once per connection), counted in its
/// reads in flight until answered (or dropped).
async fn read(slot: Arc<Slot>, sql: &'static str, lookup: Lookup, ws: i64) -> Option<Vec<Row>> {
    let slot = InFlight::new(slot);
    let slot = &slot.0;
    let known = slot.statements.lock().ok()?.get(sql).cloned();
    let statement = match known {
        Some(statement) => statement,
        None => {
            let statement = slot.client.prepare(sql).await.ok()?;
            slot.statements.lock().ok()?.insert(sql, statement.clone());
            statement
        }
    };
    match slot.client.query(&statement, &lookup.params(&ws)).await {
        Ok(rows) => Some(rows),
        Err(err) => {
            tracing::debug!(error = %err, "a prefetched read failed; reading again");
            None
        }
    }
}

/// Run the read `op` on `tracker` without a blocking thread when it is a whole-ticket
/// read (see the module's documentation): `Some` of its answer, or `None` when it must run
/// on a blocking thread (it asked for more, `op` gave nothing, or the statement could not
/// run here). `op` may run twice; it must only read.
pub async fn read_prefetched<T>(
    tracker: &mut Tracker<PgStore>,
    mut op: impl FnMut(&mut Tracker<PgStore>) -> Option<T>,
) -> Option<T> {
    let state = tracker.store().prefetch.clone();
    let db = tracker.store().db.clone();
    let ws = tracker.store().workspace;
    if db.health.down() {
        return None;
    }
    let set = |to: Prefetch| -> Option<()> {
        *state.lock().ok()? = to;
        Some(())
    };
    let take = || -> Prefetch {
        state
            .lock()
            .map(|mut s| std::mem::take(&mut *s))
            .unwrap_or(Prefetch::Missed)
    };
    set(Prefetch::Armed)?;
    let first = op(tracker);
    let lookup = match take() {
        // It answered without a statement (refused its arguments): that is its answer.
        Prefetch::Armed | Prefetch::Done => return first,
        Prefetch::Planned(lookup) => lookup,
        _ => return None,
    };
    drop(first);
    let rows = db
        .reader
        .query(&db.health, super::whole_ticket_sql(&lookup), &lookup, ws)
        .await?;
    if rows.len() > 1 {
        return None;
    }
    set(Prefetch::Replay(rows.into_iter().next()))?;
    let second = op(tracker);
    match take() {
        Prefetch::Done => second,
        _ => None,
    }
}
