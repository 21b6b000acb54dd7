//! Whole-ticket reads on async connections ([`Reader`], tokio-postgres), behind
//! [`Store::whole_tickets`](jility_core::Store::whole_tickets): reads by number waiting at
//! the same moment are answered by one statement, whatever their workspaces ([`drive`]),
//! and a read its connection has not answered within [`HEDGE_AFTER`] is also asked on
//! another ([`Reader::query`]). The request's task awaits the answer; the connections' I/O
//! runs on the async runtime.

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use postgres::Row;
use tokio::sync::oneshot;
use tokio_postgres::{Client, NoTls, Statement};

use crate::reach::Health;

/// A whole-ticket read: by number in a project (its key resolved), or by UUID.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) enum Lookup {
    Number { key: String, number: i64 },
    Uuid(String),
}

/// How many async connections a server keeps for whole-ticket reads at most (fewer when
/// the operator's pool size is small, [`super::connect::Budget`]): each answers the reads
/// waiting for it in one statement while the next batch gathers, so a few keep PostgreSQL
/// busy. Measured on two cores with 32 clients (when reads were pipelined one statement
/// each): two or three gave more reads a second but queued many behind a backend the
/// system was slow to schedule; five or more cost a tenth of the rate.
pub(super) const CONNECTIONS: usize = 4;

/// One async connection and the statements prepared on it.
struct Slot {
    client: Client,
    statements: Mutex<HashMap<&'static str, Statement>>,
    /// Reads sent on it and not answered yet.
    in_flight: AtomicUsize,
    /// Reads by number waiting for the connection's next batch ([`drive`]).
    queue: Arc<Queue>,
}

impl Drop for Slot {
    fn drop(&mut self) {
        // Its driver ends (no read can wait on a slot no one holds).
        self.queue.wake.notify_one();
    }
}

/// Reads by number waiting for their connection's next statement.
#[derive(Default)]
struct Queue {
    waiting: Mutex<Vec<Waiting>>,
    wake: tokio::sync::Notify,
}

/// A read of ticket `number` of project `key` in workspace `ws`, and where its row goes
/// (`None`: the statement failed).
struct Waiting {
    ws: i64,
    key: String,
    number: i64,
    answer: oneshot::Sender<Option<Vec<Row>>>,
}

/// The most reads one statement answers.
const BATCH: usize = 64;

/// Answer the reads queued on `slot`'s connection, as long as the slot is held: all those
/// waiting at once (up to [`BATCH`]) in one statement, whatever their workspaces and
/// projects (`ticket_batch_sql`), the next batch gathering while one runs. PostgreSQL spends
/// about a third as much a ticket on a statement that reads eight as on eight statements
/// (measured with pgbench on the benchmark's database), and the server sends one message
/// for them.
async fn drive(slot: std::sync::Weak<Slot>, queue: Arc<Queue>) {
    loop {
        queue.wake.notified().await;
        loop {
            let Some(slot) = slot.upgrade() else {
                return;
            };
            let waiting: Vec<Waiting> = match queue.waiting.lock() {
                Ok(mut waiting) => {
                    let take = waiting.len().min(BATCH);
                    waiting.drain(..take).collect()
                }
                Err(_) => return,
            };
            if waiting.is_empty() {
                break;
            }
            answer(&slot, waiting).await;
        }
    }
}

/// Run the statement of `reads` and hand each its rows (none when the statement failed:
/// the read is then made on the pool). A row goes to the reads of the lookup whose position
/// it carries, so a read is only ever answered with rows of its own workspace.
async fn answer(slot: &Slot, reads: Vec<Waiting>) {
    // Each lookup once: reads of the same ticket share its rows.
    let mut lookups: HashMap<(i64, &str, i64), usize> = HashMap::new();
    let (mut wss, mut keys, mut numbers) = (Vec::new(), Vec::new(), Vec::new());
    let of: Vec<usize> = reads
        .iter()
        .map(|read| {
            *lookups
                .entry((read.ws, read.key.as_str(), read.number))
                .or_insert_with(|| {
                    wss.push(read.ws);
                    keys.push(read.key.as_str());
                    numbers.push(read.number);
                    numbers.len() - 1
                })
        })
        .collect();
    let rows = async {
        let statement = prepared(slot, super::ticket_batch_sql()).await?;
        let timed = crate::measure::Statement::on("reader");
        let answered = slot.client.query(&statement, &[&wss, &keys, &numbers]).await;
        drop(timed);
        match answered {
            Ok(rows) => Some(rows),
            Err(err) => {
                tracing::debug!(error = %err, "a batch of whole-ticket reads failed; reading on the pool");
                None
            }
        }
    }
    .await;
    let Some(rows) = rows else {
        return;
    };
    let mut by_lookup: Vec<Vec<Row>> = vec![Vec::new(); numbers.len()];
    for row in rows {
        let at = row.try_get::<_, i64>(super::LOOKUP_COLUMN).ok();
        let Some(answers) = at
            .and_then(|at| usize::try_from(at - 1).ok())
            .and_then(|at| by_lookup.get_mut(at))
        else {
            return;
        };
        answers.push(row);
    }
    for (read, at) in reads.into_iter().zip(of) {
        let rows = by_lookup.get(at).cloned().unwrap_or_default();
        let _ = read.answer.send(Some(rows));
    }
}

/// `sql` prepared on `slot`'s connection (once).
async fn prepared(slot: &Slot, sql: &'static str) -> Option<Statement> {
    let known = slot.statements.lock().ok()?.get(sql).cloned();
    match known {
        Some(statement) => Some(statement),
        None => {
            let statement = slot.client.prepare(sql).await.ok()?;
            slot.statements.lock().ok()?.insert(sql, statement.clone());
            Some(statement)
        }
    }
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
    /// Reads on up to `connections` connections (1 to [`CONNECTIONS`]).
    pub(super) fn new(config: tokio_postgres::Config, connections: usize) -> Self {
        Self {
            config,
            slots: (0..connections.clamp(1, CONNECTIONS))
                .map(|_| Mutex::new(None))
                .collect(),
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
        let queue = Arc::new(Queue::default());
        let slot = Arc::new(Slot {
            client,
            statements: Mutex::new(HashMap::new()),
            in_flight: AtomicUsize::new(0),
            queue: queue.clone(),
        });
        tokio::spawn(drive(Arc::downgrade(&slot), queue));
        *cell.lock().ok()? = Some(slot.clone());
        Some(slot)
    }

    /// Where caller `key`'s last write ended ([`super::replicas`]): `Some(None)` when it
    /// wrote nothing since positions are kept, `None` when it could not be read here.
    pub(super) async fn position(&self, health: &Health, key: i64) -> Option<Option<u64>> {
        let slot = self.slot(health, None).await?;
        let slot = InFlight::new(slot);
        let statement = prepared(&slot.0, super::replicas::POSITION_SQL).await?;
        let row = slot.0.client.query_opt(&statement, &[&key]).await.ok()?;
        Some(
            row.and_then(|row| row.try_get::<_, String>(0).ok())
                .and_then(|text| super::replicas::parse_lsn(&text)),
        )
    }

    /// The rows of `lookup` in workspace `ws` (the whole-ticket statement); `None` when it
    /// could not run here (the caller then reads on a blocking thread, which reports why).
    /// A read by number waits for its connection's next batch ([`drive`]).
    ///
    /// A read not answered within [`HEDGE_AFTER`] is asked again on another connection and
    /// the first answer taken ([`HEDGES`] at once at most; a read finding none free asks
    /// again after each further [`HEDGE_AFTER`]): the reads of one connection wait for
    /// each other, so one backend that stops (a page read from a slow disk, a process the
    /// system does not schedule, a stopped one) would hold up all the reads queued behind
    /// it. The slower one runs on to its end in the background, so its connection's count
    /// of reads in flight stays true and new reads keep away from it.
    pub(super) async fn query(
        &self,
        health: &Health,
        lookup: &Lookup,
        ws: i64,
    ) -> Option<Vec<Row>> {
        let first = self.slot(health, None).await?;
        let mut primary = Box::pin(ask(first.clone(), lookup.clone(), ws));
        let _hedging = loop {
            tokio::select! {
                biased;
                rows = &mut primary => return rows,
                () = tokio::time::sleep(HEDGE_AFTER) => {}
            }
            if let Some(hedging) = Hedging::start(&self.hedges) {
                break hedging;
            }
        };
        let Some(second) = self.slot(health, Some(&first)).await else {
            return primary.await;
        };
        let mut hedge = Box::pin(ask(second, lookup.clone(), ws));
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

/// How long a whole-ticket read waits on its connection before it is also asked on another
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

/// `lookup` in workspace `ws` on `slot`'s connection, counted in its reads in flight until
/// answered (or dropped): by number in its next batch, by UUID alone.
async fn ask(slot: Arc<Slot>, lookup: Lookup, ws: i64) -> Option<Vec<Row>> {
    let slot = InFlight::new(slot);
    let slot = &slot.0;
    match lookup {
        Lookup::Number { key, number } => {
            let (answer, answered) = oneshot::channel();
            slot.queue.waiting.lock().ok()?.push(Waiting {
                ws,
                key,
                number,
                answer,
            });
            slot.queue.wake.notify_one();
            answered.await.ok()?
        }
        Lookup::Uuid(ref uuid) => {
            let statement = prepared(slot, super::whole_ticket_sql(&lookup)).await?;
            let timed = crate::measure::Statement::on("reader");
            let answered = slot.client.query(&statement, &[&ws, uuid]).await;
            drop(timed);
            match answered {
                Ok(rows) => Some(rows),
                Err(err) => {
                    tracing::debug!(error = %err, "a whole-ticket read failed; reading on the pool");
                    None
                }
            }
        }
    }
}
