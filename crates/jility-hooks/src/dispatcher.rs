//! The delivery loop of a `jility serve` process: woken by every change any process
//! publishes (`jility_pg::events`) and by its own finished sends, and at least once a
//! second (retries come due, another process's lease lapses), it fans out the outbox and
//! sends what is due, at most [`IN_FLIGHT`] at a time. Every process on a database runs
//! one; the database decides who sends what.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;

use jility_identity::audit::Audit;
use jility_pg::events::Events;
use jility_pg::store::PgDatabase;
use tokio::sync::{Notify, OwnedSemaphorePermit, Semaphore};
use tokio_util::sync::CancellationToken;

use crate::deliver::{self, Claimed, Clients};
use crate::housekeeping::Churn;
use crate::outbox::{self, Readers};
use crate::target;

/// Most deliveries one process sends at once.
pub const IN_FLIGHT: usize = 32;
/// Most outcomes recorded in one transaction.
const RECORD_BATCH: usize = 64;
/// How many times a batch's outcomes are recorded when the database says to try again.
const RECORD_TRIES: u64 = 3;
/// How long finished sends wait for the others under way, to be recorded together.
const GATHER: Duration = Duration::from_millis(3);
/// The longest the loop sleeps.
const TICK: Duration = Duration::from_secs(1);
/// How often the backlog is read for the metrics.
const BACKLOG_EVERY: Duration = Duration::from_secs(5);

/// Start the loop on the current runtime; it ends when `shutdown` is cancelled (sends in
/// flight are left to their leases).
pub fn start(db: &PgDatabase, events: &Events, shutdown: CancellationToken) {
    let db = db.clone();
    let mut heard = events.subscribe();
    let wake = Arc::new(Notify::new());
    // Set by a change heard (the outbox may hold rows); a finished send only wakes the loop
    // to claim what is due.
    let dirty = Arc::new(AtomicBool::new(true));
    let listener_wake = wake.clone();
    let listener_dirty = dirty.clone();
    let listener_stop = shutdown.clone();
    tokio::spawn(async move {
        loop {
            tokio::select! {
                () = listener_stop.cancelled() => return,
                received = heard.recv() => match received {
                    Ok(_) | Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => {
                        listener_dirty.store(true, Ordering::Release);
                        listener_wake.notify_one();
                    }
                    Err(tokio::sync::broadcast::error::RecvError::Closed) => return,
                },
            }
        }
    });
    let churn = Arc::new(Churn::default());
    crate::housekeeping::start(&db, churn.clone(), shutdown.clone());
    tokio::spawn(run(db, wake, dirty, churn, shutdown));
}

async fn run(
    db: PgDatabase,
    wake: Arc<Notify>,
    dirty: Arc<AtomicBool>,
    churn: Arc<Churn>,
    shutdown: CancellationToken,
) {
    let audit = Audit::new(&db);
    let clients = Arc::new(Clients::default());
    let slots = Arc::new(Semaphore::new(IN_FLIGHT));
    let readers = Arc::new(std::sync::Mutex::new(Readers::default()));
    let allow_private = target::private_allowed();
    let base = deliver::retry_base();
    crate::measure::describe();
    // Finished sends are recorded together, a batch per trip to the database; each keeps
    // its slot until its outcome is recorded.
    let (done_tx, mut done_rx) =
        tokio::sync::mpsc::unbounded_channel::<(Claimed, deliver::Outcome, OwnedSemaphorePermit)>();
    // Whether the last claim took as many as it could: more may be due than were taken.
    let waiting = Arc::new(AtomicBool::new(false));
    // Sends under way, not yet handed to the recorder.
    let sending = Arc::new(AtomicUsize::new(0));
    {
        let (db, audit, wake, waiting, churn, sending) = (
            db.clone(),
            audit.clone(),
            wake.clone(),
            waiting.clone(),
            churn.clone(),
            sending.clone(),
        );
        tokio::spawn(async move {
            while let Some(first) = done_rx.recv().await {
                let mut batch = vec![first];
                // The sends still under way are waited for a moment (one claim's sends end
                // together), so that they are recorded in one transaction, not one each.
                let gathering = tokio::time::Instant::now() + GATHER;
                while batch.len() < RECORD_BATCH {
                    match done_rx.try_recv() {
                        Ok(more) => batch.push(more),
                        Err(_) if sending.load(Ordering::Acquire) == 0 => break,
                        Err(_) => match tokio::time::timeout_at(gathering, done_rx.recv()).await {
                            Ok(Some(more)) => batch.push(more),
                            Ok(None) | Err(_) => break,
                        },
                    }
                }
                let (done, slots): (Vec<_>, Vec<_>) = batch
                    .into_iter()
                    .map(|(claimed, outcome, slot)| ((claimed, outcome), slot))
                    .unzip();
                let (db, audit) = (db.clone(), audit.clone());
                churn.settled(done.len());
                // A write that collided with another at the same moment (a serialization
                // failure, a lock timeout) is tried again at once, a few times: otherwise the
                // sends wait for their leases to lapse before they are sent again.
                let recorded = tokio::task::spawn_blocking(move || {
                    let mut tries = 1;
                    loop {
                        match deliver::record(&db, &audit, &done, base) {
                            Err(err) if err.retryable() && tries < RECORD_TRIES => {
                                tries += 1;
                                std::thread::sleep(Duration::from_millis(20 * tries));
                            }
                            recorded => return recorded,
                        }
                    }
                })
                .await;
                let due = match recorded {
                    Ok(Ok(more)) => more,
                    Ok(Err(err)) => {
                        tracing::warn!(error = %err.message, "could not record webhook deliveries; they are sent again when their leases lapse");
                        false
                    }
                    Err(err) => {
                        tracing::warn!(error = %err, "could not record webhook deliveries");
                        false
                    }
                };
                drop(slots);
                // The next deliveries of their tickets are due now, or the last claim left
                // some waiting for a free slot.
                if due || waiting.load(Ordering::Acquire) {
                    wake.notify_one();
                }
            }
        });
    }
    let subscriptions = crate::Subscriptions::new(&db);
    let mut backlog_read = std::time::Instant::now()
        .checked_sub(BACKLOG_EVERY)
        .unwrap_or_else(std::time::Instant::now);
    let mut last_fan_out = std::time::Instant::now();
    loop {
        if backlog_read.elapsed() >= BACKLOG_EVERY {
            backlog_read = std::time::Instant::now();
            let reader = subscriptions.clone();
            if let Ok(Ok((pending, outbox))) =
                tokio::task::spawn_blocking(move || reader.backlog()).await
            {
                crate::measure::backlog(pending, outbox);
            }
        }
        // The outbox (after a change was heard, and at every tick: another process's
        // change, a missed event), then what is due, as many as there are free slots: one
        // transaction, one trip to the pool.
        let ticked = last_fan_out.elapsed() >= TICK;
        let fan = dirty.swap(false, Ordering::AcqRel) || ticked;
        if fan {
            last_fan_out = std::time::Instant::now();
        }
        let free = slots.available_permits();
        if free == 0 {
            // Every slot busy: the recorder wakes the loop when it frees some.
            waiting.store(true, Ordering::Release);
        }
        if fan || free > 0 {
            let step_db = db.clone();
            let step_readers = readers.clone();
            let stepped = tokio::task::spawn_blocking(move || {
                let mut readers = step_readers
                    .lock()
                    .map_err(|_| mcp_common_core::ToolError::internal("readers poisoned"))?;
                step(&step_db, &mut readers, fan, free as i64)
            })
            .await;
            match stepped {
                Ok(Ok((fanned, made, claimed))) => {
                    churn.fanned(fanned, made);
                    // A full batch: the outbox may hold more.
                    if fanned as i64 >= outbox::BATCH {
                        dirty.store(true, Ordering::Release);
                        wake.notify_one();
                    }
                    // No free slot, or as many taken as there were: more may be due.
                    waiting.store(claimed.len() >= free, Ordering::Release);
                    for delivery in claimed {
                        let Ok(slot) = slots.clone().acquire_owned().await else {
                            return;
                        };
                        let clients = clients.clone();
                        let done = done_tx.clone();
                        let sending = sending.clone();
                        sending.fetch_add(1, Ordering::AcqRel);
                        tokio::spawn(async move {
                            let outcome = deliver::send(&clients, &delivery, allow_private).await;
                            let _ = done.send((delivery, outcome, slot));
                            sending.fetch_sub(1, Ordering::AcqRel);
                        });
                    }
                }
                Ok(Err(err)) => {
                    tracing::warn!(error = %err.message, "could not fan out or claim webhook deliveries; trying again");
                }
                Err(err) => {
                    tracing::warn!(error = %err, "the webhook fan-out stopped; trying again")
                }
            }
        }
        tokio::select! {
            () = shutdown.cancelled() => return,
            () = wake.notified() => {}
            () = tokio::time::sleep(TICK) => {}
        }
    }
}

/// One trip of the loop, in one transaction that does not wait for the disk (what it
/// writes is redone when lost): the outbox fanned out (when `fan`), then at most `free`
/// due deliveries claimed. How many changes were fanned out into how many deliveries,
/// and what was claimed.
fn step(
    db: &PgDatabase,
    readers: &mut Readers,
    fan: bool,
    free: i64,
) -> Result<(usize, usize, Vec<Claimed>), mcp_common_core::ToolError> {
    let db_err = |e: postgres::Error| mcp_common_core::ToolError::from(jility_pg::store::db(e));
    db.with_cached(|client, cache| {
        let mut tx = client.transaction().map_err(db_err)?;
        // The fan-out's first statement says so itself, saving a trip.
        if !fan {
            tx.batch_execute("SET LOCAL synchronous_commit = off")
                .map_err(db_err)?;
        }
        let (fanned, made) = if fan {
            outbox::fan_out(&mut tx, cache, db, readers)?
        } else {
            (0, 0)
        };
        let claimed = if free > 0 {
            deliver::claim(&mut tx, cache, free)?
        } else {
            Vec::new()
        };
        tx.commit().map_err(db_err)?;
        Ok((fanned, made, claimed))
    })
}
