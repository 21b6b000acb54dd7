//! The delivery loop of a `jility serve` process: woken by every change any process
//! publishes (`jility_pg::events`) and by its own finished sends, and at least once a
//! second (retries come due, another process's lease lapses), it fans out the outbox and
//! sends what is due, at most [`IN_FLIGHT`] at a time. Every process on a database runs
//! one; the database decides who sends what.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use jility_identity::audit::Audit;
use jility_pg::events::Events;
use jility_pg::store::PgDatabase;
use tokio::sync::{Notify, OwnedSemaphorePermit, Semaphore};
use tokio_util::sync::CancellationToken;

use crate::deliver::{self, Claimed, Clients};
use crate::outbox::{self, Readers};
use crate::target;

/// Most deliveries one process sends at once.
pub const IN_FLIGHT: usize = 32;
/// Most outcomes recorded in one transaction.
const RECORD_BATCH: usize = 64;
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
    tokio::spawn(run(db, wake, dirty, shutdown));
}

async fn run(
    db: PgDatabase,
    wake: Arc<Notify>,
    dirty: Arc<AtomicBool>,
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
    {
        let (db, audit, wake) = (db.clone(), audit.clone(), wake.clone());
        tokio::spawn(async move {
            while let Some(first) = done_rx.recv().await {
                let mut batch = vec![first];
                while batch.len() < RECORD_BATCH {
                    match done_rx.try_recv() {
                        Ok(more) => batch.push(more),
                        Err(_) => break,
                    }
                }
                let (done, slots): (Vec<_>, Vec<_>) = batch
                    .into_iter()
                    .map(|(claimed, outcome, slot)| ((claimed, outcome), slot))
                    .unzip();
                let (db, audit) = (db.clone(), audit.clone());
                let recorded =
                    tokio::task::spawn_blocking(move || deliver::record(&db, &audit, &done, base))
                        .await;
                match recorded {
                    Ok(Ok(())) => {}
                    Ok(Err(err)) => {
                        tracing::warn!(error = %err.message, "could not record webhook deliveries; they are sent again when their leases lapse")
                    }
                    Err(err) => tracing::warn!(error = %err, "could not record webhook deliveries"),
                }
                drop(slots);
                // The next deliveries of their tickets may be due now.
                wake.notify_one();
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
        // The outbox first, until it is empty (or another process has it): after a change
        // was heard, and at every tick (another process's change, a missed event).
        let ticked = last_fan_out.elapsed() >= TICK;
        let fan = dirty.swap(false, Ordering::AcqRel) || ticked;
        if fan {
            last_fan_out = std::time::Instant::now();
            loop {
                let fan_db = db.clone();
                let fan_readers = readers.clone();
                let taken = tokio::task::spawn_blocking(move || {
                    let mut readers = fan_readers
                        .lock()
                        .map_err(|_| mcp_common_core::ToolError::internal("readers poisoned"))?;
                    outbox::fan_out(&fan_db, &mut readers)
                })
                .await;
                match taken {
                    Ok(Ok(0)) => break,
                    Ok(Ok(_)) => continue,
                    Ok(Err(err)) => {
                        tracing::warn!(error = %err.message, "could not fan out webhook events; trying again");
                        break;
                    }
                    Err(err) => {
                        tracing::warn!(error = %err, "the webhook fan-out stopped; trying again");
                        break;
                    }
                }
            }
        }
        // Then what is due, as many as there are free slots.
        let free = slots.available_permits();
        if free > 0 {
            let claim_db = db.clone();
            let claimed =
                tokio::task::spawn_blocking(move || deliver::claim(&claim_db, free as i64)).await;
            match claimed {
                Ok(Ok(claimed)) => {
                    for delivery in claimed {
                        let Ok(slot) = slots.clone().acquire_owned().await else {
                            return;
                        };
                        let clients = clients.clone();
                        let done = done_tx.clone();
                        tokio::spawn(async move {
                            let outcome = deliver::send(&clients, &delivery, allow_private).await;
                            let _ = done.send((delivery, outcome, slot));
                        });
                    }
                }
                Ok(Err(err)) => {
                    tracing::warn!(error = %err.message, "could not claim webhook deliveries; trying again");
                }
                Err(err) => tracing::warn!(error = %err, "claiming webhook deliveries stopped"),
            }
        }
        tokio::select! {
            () = shutdown.cancelled() => return,
            () = wake.notified() => {}
            () = tokio::time::sleep(TICK) => {}
        }
    }
}
