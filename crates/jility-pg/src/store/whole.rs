//! Whole-ticket reads, [`Store::whole_tickets`] of a [`PgStore`]: each ticket in one
//! statement with its kept context ([`super::contexts`]) and the neighbours it names. On
//! `jility serve`'s runtime the statements run on the async connections of [`Reader`]
//! (batched with other requests' reads of the same project, and asked again on another
//! connection when one stalls) while the calling thread waits; elsewhere, or for what they
//! could not answer, on a connection of the pool. A ticket whose context is not kept at its
//! version is read part by part in a read transaction, and its context refreshed soon
//! after. None of this shows to the caller: one method, one answer per lookup, each from one
//! snapshot.

use std::time::Instant;

use super::*;

pub(super) fn read(
    store: &mut PgStore,
    lookups: &[TicketLookup],
) -> Result<Vec<Option<WholeTicket>>, ToolError> {
    // A number without a key is of the default project.
    let default_key = match lookups
        .iter()
        .any(|l| matches!(l, TicketLookup::Number { key: None, .. }))
    {
        true => Some(store.read(|tx| Ok(tx.default_project()?.key))?),
        false => None,
    };
    let resolved: Vec<Lookup> = lookups
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
        .collect();
    let found = fetch(store, &resolved)?;
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

/// The rows of each lookup's whole-ticket statement.
fn fetch(store: &PgStore, lookups: &[Lookup]) -> StoreResult<Vec<Vec<Row>>> {
    let db = &store.db;
    let ws = store.workspace;
    let mut found: Vec<Option<Vec<Row>>> = vec![None; lookups.len()];
    if !db.health.down()
        && let Ok(runtime) = tokio::runtime::Handle::try_current()
    {
        let (answered, answers) = std::sync::mpsc::channel();
        for (at, lookup) in lookups.iter().enumerate() {
            let reader = db.reader.clone();
            let health = db.health.clone();
            let lookup = lookup.clone();
            let answered = answered.clone();
            runtime.spawn(async move {
                let rows = reader.query(&health, &lookup, ws).await;
                let _ = answered.send((at, rows));
            });
        }
        drop(answered);
        let deadline = Instant::now() + reach::DEADLINE;
        for _ in 0..lookups.len() {
            let left = deadline.saturating_duration_since(Instant::now());
            match answers.recv_timeout(left) {
                Ok((at, rows)) => {
                    if let Some(slot) = found.get_mut(at) {
                        *slot = rows;
                    }
                }
                Err(_) => break,
            }
        }
    }
    // What the async connections did not answer: on a connection of the pool, which also
    // reports why when the database cannot be reached.
    if found.iter().any(Option::is_none) {
        let missing: Vec<usize> = (0..lookups.len())
            .filter(|at| found.get(*at).is_some_and(Option::is_none))
            .collect();
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
