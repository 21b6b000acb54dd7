//! Whole-ticket reads, [`Store::whole_tickets`] of a [`PgStore`]: each ticket in one
//! statement with its kept context ([`super::contexts`]) and the neighbours it names. On a
//! runtime the answer is a future that waits on the async connections of [`Reader`]
//! (batched with other requests' reads of the same project, and asked again on another
//! connection when one stalls) without holding a thread, so `jility serve` awaits it on the
//! request's own task; what they could not answer is read on a connection of the pool, on a
//! blocking thread. Without a runtime (the CLI, a test) everything is read on the pool at
//! once. A ticket whose context is not kept at its version is read part by part in a read
//! transaction, and its context refreshed soon after. None of this shows to the caller:
//! one method, one answer per lookup, each from one snapshot.

use super::*;

pub(super) fn read(store: &mut PgStore, lookups: &[TicketLookup]) -> WholeTickets {
    let store = store.clone();
    let lookups = lookups.to_vec();
    if tokio::runtime::Handle::try_current().is_err() {
        return Box::pin(std::future::ready(read_now(store, &lookups)));
    }
    Box::pin(read_on_runtime(store, lookups))
}

/// Everything on a connection of the pool, on this thread.
fn read_now(
    mut store: PgStore,
    lookups: &[TicketLookup],
) -> Result<Vec<Option<WholeTicket>>, ToolError> {
    let resolved = resolve(lookups, default_key(&mut store, lookups)?);
    let found = on_pool(&store, &resolved, vec![None; resolved.len()])?;
    answer(&mut store, lookups, found)
}

/// The statements on the async connections, awaited; the rest on blocking threads.
async fn read_on_runtime(
    store: PgStore,
    lookups: Vec<TicketLookup>,
) -> Result<Vec<Option<WholeTicket>>, ToolError> {
    let key = match needs_default_key(&lookups) {
        true => {
            let lookups = lookups.clone();
            blocking(&store, move |store| default_key(store, &lookups)).await?
        }
        false => None,
    };
    let resolved = resolve(&lookups, key);
    let db = &store.db;
    let mut found: Vec<Option<Vec<Row>>> = vec![None; resolved.len()];
    // A standby first, when one may answer the caller; what it does not answer within its
    // patience, the primary does.
    if let Some((replicas, replica)) = standby(&store).await {
        let reads = resolved.iter().map(|lookup| {
            replica
                .reader
                .query(&replica.health, lookup, store.workspace)
        });
        match tokio::time::timeout(replicas::PATIENCE, futures::future::join_all(reads)).await {
            Ok(rows) if rows.iter().all(Option::is_some) => {
                Replicas::used(&replica);
                let found = rows.into_iter().map(Option::unwrap_or_default).collect();
                return settle(store, lookups, found).await;
            }
            Ok(_) => replicas.failed(&replica, "read_failed"),
            Err(_) => replicas.failed(&replica, "slow"),
        }
    }
    if !db.health.down() {
        let reads = resolved
            .iter()
            .map(|lookup| db.reader.query(&db.health, lookup, store.workspace));
        // Those not answered in time are read on the pool, which reports why.
        if let Ok(rows) =
            tokio::time::timeout(reach::DEADLINE, futures::future::join_all(reads)).await
        {
            found = rows;
        }
    }
    if found.iter().all(Option::is_some) {
        let found = found.into_iter().map(Option::unwrap_or_default).collect();
        return settle(store, lookups, found).await;
    }
    let asked = resolved.clone();
    let found = blocking(&store, move |store| Ok(on_pool(store, &asked, found)?)).await?;
    settle(store, lookups, found).await
}

/// A standby that may answer the reads of the caller this task works for, with the
/// standbys it is one of.
async fn standby(store: &PgStore) -> Option<(Arc<Replicas>, Arc<Replica>)> {
    let replicas = store.db.replicas.as_ref()?;
    let key = replicas::caller()?;
    if !replicas.any_in_use() {
        return None;
    }
    let needed = store.db.reader.position(&store.db.health, key).await?;
    let replica = replicas.choose(needed)?;
    Some((replicas.clone(), replica))
}

/// [`answer`], on a blocking thread when a ticket must be read part by part.
async fn settle(
    store: PgStore,
    lookups: Vec<TicketLookup>,
    found: Vec<Vec<Row>>,
) -> Result<Vec<Option<WholeTicket>>, ToolError> {
    let stale = found.iter().filter_map(|rows| rows.first()).any(is_stale);
    if !stale {
        let mut store = store;
        return answer(&mut store, &lookups, found);
    }
    blocking(&store, move |store| answer(store, &lookups, found)).await
}

/// `f` on a blocking thread with a handle on the store.
async fn blocking<R: Send + 'static>(
    store: &PgStore,
    f: impl FnOnce(&mut PgStore) -> Result<R, ToolError> + Send + 'static,
) -> Result<R, ToolError> {
    let mut store = store.clone();
    // The caller goes with the work: its reads may go to a standby there too.
    let caller = replicas::caller();
    tokio::task::spawn_blocking(move || match caller {
        Some(key) => replicas::as_caller(key, || f(&mut store)),
        None => f(&mut store),
    })
    .await
    .map_err(|err| ToolError::internal(format!("A ticket read failed: {err}")))?
}

fn needs_default_key(lookups: &[TicketLookup]) -> bool {
    lookups
        .iter()
        .any(|l| matches!(l, TicketLookup::Number { key: None, .. }))
}

/// The default project's key when a number without a key asks for it.
fn default_key(store: &mut PgStore, lookups: &[TicketLookup]) -> Result<Option<String>, ToolError> {
    match needs_default_key(lookups) {
        true => Ok(Some(store.read(|tx| Ok(tx.default_project()?.key))?)),
        false => Ok(None),
    }
}

/// The lookups with their keys (a number without one is of the default project).
fn resolve(lookups: &[TicketLookup], default_key: Option<String>) -> Vec<Lookup> {
    lookups
        .iter()
        .map(|lookup| match lookup {
            TicketLookup::Uuid(uuid) => Lookup::Uuid(uuid.clone()),
            TicketLookup::Number { key, number } => Lookup::Number {
                key: key
                    .clone()
                    .or_else(|| default_key.clone())
                    .unwrap_or_default(),
                number: *number,
            },
        })
        .collect()
}

/// The rows of each lookup not `found` yet, read on a connection of the pool (which also
/// reports why when the database cannot be reached).
fn on_pool(
    store: &PgStore,
    lookups: &[Lookup],
    mut found: Vec<Option<Vec<Row>>>,
) -> StoreResult<Vec<Vec<Row>>> {
    let missing: Vec<usize> = (0..lookups.len())
        .filter(|at| found.get(*at).is_some_and(Option::is_none))
        .collect();
    if !missing.is_empty() {
        let rows = store.outside(|tx| {
            missing
                .iter()
                .filter_map(|at| lookups.get(*at))
                .map(|lookup| tx.whole_rows(lookup))
                .collect::<StoreResult<Vec<_>>>()
        })?;
        for (at, rows) in missing.into_iter().zip(rows) {
            if let Some(slot) = found.get_mut(at) {
                *slot = Some(rows);
            }
        }
    }
    Ok(found.into_iter().map(Option::unwrap_or_default).collect())
}

/// Each lookup's ticket from its statement's rows; one whose kept context is stale read
/// part by part in a read transaction (and its context asked for).
fn answer(
    store: &mut PgStore,
    lookups: &[TicketLookup],
    found: Vec<Vec<Row>>,
) -> Result<Vec<Option<WholeTicket>>, ToolError> {
    let mut answers = Vec::with_capacity(lookups.len());
    let mut stale = Vec::new();
    for (at, rows) in found.into_iter().enumerate() {
        if rows.len() > 1 {
            return Err(StoreError::Database("a ticket lookup found two tickets".into()).into());
        }
        match rows.first().map(whole_row).transpose()? {
            None => answers.push(None),
            Some(Whole::Kept(whole)) => answers.push(Some(*whole)),
            Some(Whole::Stale(id)) => {
                stale.push((at, id));
                answers.push(None);
            }
        }
    }
    if stale.is_empty() {
        return Ok(answers);
    }
    let again = store.read(|tx| {
        stale
            .iter()
            .filter_map(|(at, _)| lookups.get(*at))
            .map(|lookup| jility_core::store::whole_ticket(tx, lookup))
            .collect::<Result<Vec<_>, ToolError>>()
    })?;
    for ((at, _), whole) in stale.iter().zip(again) {
        if let Some(answer) = answers.get_mut(*at) {
            *answer = whole;
        }
    }
    let ids: Vec<i64> = stale.iter().map(|(_, id)| *id).collect();
    store.db.refresher.ask(store.workspace, &ids);
    Ok(answers)
}
