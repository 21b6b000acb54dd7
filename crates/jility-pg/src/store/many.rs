//! Many tickets at once (a bulk edit's writes and reads), each in one statement over arrays
//! (`unnest`) instead of one round trip a ticket: what [`StoreTx`]'s defaults do ticket by
//! ticket. Every statement names its workspace (`$1`); the composite foreign keys refuse a
//! ticket of another workspace.

use postgres::types::Type;

use jility_core::store::{NewChange, TicketUpdate};

use super::find::Binds;
use super::*;

/// The labels and the assignees of each ticket of `ids`, in their order (the orders of
/// [`LABELS_SQL`] and [`ASSIGNEES_SQL`]).
pub(super) fn names_of(
    tx: &mut Tx<'_>,
    ids: &[i64],
) -> StoreResult<Vec<(Vec<String>, Vec<String>)>> {
    let ws = tx.ws;
    let ids = ids.to_vec();
    tx.query(
        "SELECT ARRAY(SELECT l.label FROM ticket_labels l \
                 WHERE l.workspace_id = $1 AND l.ticket_id = i.id ORDER BY l.label COLLATE \"C\"), \
                ARRAY(SELECT a.assignee FROM ticket_assignees a \
                 WHERE a.workspace_id = $1 AND a.ticket_id = i.id \
                 ORDER BY a.assigned_at COLLATE \"C\", a.assignee COLLATE \"C\") \
         FROM unnest($2::bigint[]) WITH ORDINALITY i(id, n) ORDER BY i.n",
        &[&ws, &ids],
    )?
    .iter()
    .map(|r| {
        Ok((
            r.try_get(0).map_err(crate::store::db)?,
            r.try_get(1).map_err(crate::store::db)?,
        ))
    })
    .collect()
}

/// `update` of every ticket of `ids`: one `UPDATE` joined to the ids.
pub(super) fn update_tickets(
    tx: &mut Tx<'_>,
    ids: &[i64],
    u: &TicketUpdate,
    actor: &str,
    at: &str,
) -> StoreResult<()> {
    let mut binds = Binds::new(tx.ws);
    let ids_mark = binds.bind(Box::new(ids.to_vec()), Type::INT8_ARRAY);
    let mut sets = vec![
        format!(
            "updated_by = {}",
            binds.bind(Box::new(actor.to_string()), Type::TEXT)
        ),
        format!(
            "updated_at = {}",
            binds.bind(Box::new(at.to_string()), Type::TEXT)
        ),
    ];
    if let Some(status) = u.status {
        let mark = binds.bind(Box::new(status.as_str().to_string()), Type::TEXT);
        sets.push(format!("status = {mark}"));
    }
    if let Some(points) = u.story_points {
        let mark = binds.bind(Box::new(points.map(i16::from)), Type::INT2);
        sets.push(format!("story_points = {mark}"));
    }
    if let Some(epic) = u.epic_id {
        sets.push(format!(
            "epic_id = {}",
            binds.bind(Box::new(epic), Type::INT8)
        ));
    }
    if let Some(sprint) = u.sprint_id {
        sets.push(format!(
            "sprint_id = {}",
            binds.bind(Box::new(sprint), Type::INT8)
        ));
    }
    if u.title.is_some()
        || u.description.is_some()
        || u.parent_id.is_some()
        || u.kind.is_some()
        || u.deleted
    {
        // Not a change a bulk edit makes: each ticket on its own.
        for id in ids {
            tx.update_ticket(*id, u, actor, at)?;
        }
        return Ok(());
    }
    let sql = format!(
        "UPDATE tickets t SET {} FROM unnest({ids_mark}::bigint[]) u(id) \
         WHERE t.workspace_id = $1 AND t.id = u.id RETURNING t.id",
        sets.join(", ")
    );
    let changed = tx.query_typed(&sql, &binds.typed())?.len() as u64;
    if changed != ids.len() as u64 {
        tx.failed = true;
        return Err(StoreError::Database(format!(
            "{} of {} tickets to update are not in this workspace",
            ids.len() as u64 - changed,
            ids.len()
        )));
    }
    Ok(())
}

/// Each ticket's labels replaced: two statements for all of them.
pub(super) fn set_labels_of(tx: &mut Tx<'_>, labels: &[(i64, Vec<String>)]) -> StoreResult<()> {
    let ws = tx.ws;
    let ids: Vec<i64> = labels.iter().map(|(id, _)| *id).collect();
    tx.touched.extend(&ids);
    let (owners, names) = pairs(labels);
    tx.execute(
        "DELETE FROM ticket_labels WHERE workspace_id = $1 AND ticket_id = ANY($2)",
        &[&ws, &ids],
    )?;
    tx.execute(
        "INSERT INTO ticket_labels (workspace_id, ticket_id, label) \
         SELECT $1, u.id, u.label FROM unnest($2::bigint[], $3::text[]) u(id, label) \
         ON CONFLICT DO NOTHING",
        &[&ws, &owners, &names],
    )?;
    Ok(())
}

/// Each ticket's assignees made these: those no longer named removed, the new ones added
/// (those who stay keep when they were assigned).
pub(super) fn set_assignees_of(
    tx: &mut Tx<'_>,
    assignees: &[(i64, Vec<String>)],
    actor: &str,
    at: &str,
) -> StoreResult<()> {
    let ws = tx.ws;
    let ids: Vec<i64> = assignees.iter().map(|(id, _)| *id).collect();
    tx.touched.extend(&ids);
    let (owners, names) = pairs(assignees);
    tx.execute(
        "DELETE FROM ticket_assignees a WHERE a.workspace_id = $1 AND a.ticket_id = ANY($2) \
         AND NOT EXISTS (SELECT 1 FROM unnest($3::bigint[], $4::text[]) w(id, name) \
            WHERE w.id = a.ticket_id AND w.name = a.assignee)",
        &[&ws, &ids, &owners, &names],
    )?;
    tx.execute(
        "INSERT INTO ticket_assignees (workspace_id, ticket_id, assignee, assigned_by, assigned_at) \
         SELECT $1, w.id, w.name, $4, $5 FROM unnest($2::bigint[], $3::text[]) w(id, name) \
         ON CONFLICT DO NOTHING",
        &[&ws, &owners, &names, &actor, &at],
    )?;
    Ok(())
}

/// Every change, in order: one `INSERT` (their ids ascend in the order given).
pub(super) fn record_changes(tx: &mut Tx<'_>, changes: &[(i64, NewChange<'_>)]) -> StoreResult<()> {
    let ws = tx.ws;
    let column = |f: fn(&NewChange<'_>) -> Option<String>| -> Vec<Option<String>> {
        changes.iter().map(|(_, c)| f(c)).collect()
    };
    let ids: Vec<i64> = changes.iter().map(|(id, _)| *id).collect();
    tx.touched.extend(&ids);
    let kinds = column(|c| Some(c.change_type.to_string()));
    let olds = column(|c| c.old_value.map(str::to_string));
    let news = column(|c| c.new_value.map(str::to_string));
    let details = column(|c| c.detail.map(str::to_string));
    let messages = column(|c| c.message.map(str::to_string));
    let actors = column(|c| Some(c.actor.to_string()));
    let ats = column(|c| Some(c.at.to_string()));
    tx.execute(
        "INSERT INTO ticket_changes (workspace_id, ticket_id, change_type, old_value, \
         new_value, detail, message, changed_by, changed_at) \
         SELECT $1, u.id, u.kind, u.old, u.new, u.detail, u.message, u.actor, u.at \
         FROM unnest($2::bigint[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[], \
                     $8::text[], $9::text[]) WITH ORDINALITY \
              u(id, kind, old, new, detail, message, actor, at, n) \
         ORDER BY u.n",
        &[
            &ws, &ids, &kinds, &olds, &news, &details, &messages, &actors, &ats,
        ],
    )?;
    Ok(())
}

/// `(ticket, names)` as two parallel arrays, a row per name.
fn pairs(sets: &[(i64, Vec<String>)]) -> (Vec<i64>, Vec<String>) {
    let mut owners = Vec::new();
    let mut names = Vec::new();
    for (id, list) in sets {
        for name in list {
            owners.push(*id);
            names.push(name.clone());
        }
    }
    (owners, names)
}
