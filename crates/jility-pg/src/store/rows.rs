//! Columns and rows: what a statement selects and how a row becomes the domain's value.

use std::sync::LazyLock;

use super::*;

pub(super) const TICKET_COLUMNS: &str = "t.id, t.uuid, p.key, t.number, t.title, t.description, t.status, \
     t.story_points, t.parent_id, t.epic_id, t.created_by, t.created_at, t.updated_by, \
     t.updated_at, t.deleted_at, t.kind, t.sprint_id, \
     (SELECT s.name FROM sprints s WHERE s.workspace_id = t.workspace_id AND s.id = t.sprint_id)";
pub(super) const TICKET_COLUMN_COUNT: usize = 18;

// Every ticket lookup below is written so that the only plan PostgreSQL can make for it
// probes a unique index with the whole key, whatever its statistics say (none yet after a
// bulk import, a generic plan made while the tables were tiny, tenants of very different
// sizes): a ticket by `(project_id, number)` or `uuid` inside a subquery that `OFFSET 0`
// keeps apart (so no join order can turn the key into a filter over a project's tickets),
// the lookups of a batch each probed on their own (`unnest`, never `number = ANY(…)`, which
// the planner may leave as a filter), the kept context by its primary key. Tickets are tied
// to the workspace through their project (`p.workspace_id = $1`, or the lookup's own
// workspace in a batch; a ticket's
// `(workspace_id, project_id)` is a foreign key to its project's), so no `t.workspace_id`
// condition offers the planner the workspace's index to scan instead.

/// A ticket of workspace `$1` by project key `$2` and number `$3`.
pub(super) static TICKET_BY_NUMBER_SQL: LazyLock<String> = LazyLock::new(|| {
    format!(
        "SELECT {TICKET_COLUMNS} FROM projects p CROSS JOIN LATERAL \
         (SELECT * FROM tickets t WHERE t.project_id = p.id AND t.number = $3 OFFSET 0) t \
         WHERE p.workspace_id = $1 AND p.key = $2"
    )
});

/// A ticket of workspace `$1` by UUID `$2`.
pub(super) static TICKET_BY_UUID_SQL: LazyLock<String> = LazyLock::new(|| {
    format!(
        "SELECT {TICKET_COLUMNS} FROM (SELECT * FROM tickets t WHERE t.uuid = $2 OFFSET 0) t \
         JOIN projects p ON p.workspace_id = $1 AND p.id = t.project_id"
    )
});

/// A ticket of workspace `$1` by id `$2` (the unique `(workspace_id, id)`).
pub(super) static TICKET_BY_ID_SQL: LazyLock<String> = LazyLock::new(|| {
    format!(
        "SELECT {TICKET_COLUMNS} FROM tickets t \
         JOIN projects p ON p.workspace_id = t.workspace_id AND p.id = t.project_id \
         WHERE t.workspace_id = $1 AND t.id = $2"
    )
});

/// The columns of a ticket `t`'s context after its [`TICKET_COLUMNS`]: its kept context `c`
/// ([`CONTEXT_JOIN`]; all NULL when it has none at the ticket's version), and the
/// neighbours it names by id, read live (id, number, title, status, whether live) as JSON,
/// when it names any. The workspace is its project `p`'s (the statement ties `p` to the
/// caller's workspace), so one statement can read tickets of several workspaces.
pub(super) const CONTEXT_COLUMNS: &str = "c.ticket_id, c.assignees, c.labels, c.comment_count, \
     c.dependency_ids, c.dependent_ids, c.comments, c.commits, c.changes, \
     CASE WHEN t.parent_id IS NULL AND t.epic_id IS NULL \
        AND cardinality(c.dependency_ids) = 0 AND cardinality(c.dependent_ids) = 0 THEN NULL \
     ELSE (SELECT json_agg(json_build_array(r.id, r.number, r.title, r.status, r.live))::text \
        FROM unnest(ARRAY[t.parent_id, t.epic_id] || c.dependency_ids || c.dependent_ids) u(id) \
        CROSS JOIN LATERAL (SELECT r.id, rp.key || '-' || r.number AS number, r.title, \
           r.status, r.deleted_at IS NULL AS live FROM tickets r JOIN projects rp \
           ON rp.workspace_id = r.workspace_id AND rp.id = r.project_id \
           WHERE r.workspace_id = p.workspace_id AND r.id = u.id OFFSET 0) r) \
     END";

/// The kept context of `t` when it is at the ticket's version ([`super::contexts`]: a write
/// bumps the version, a read that finds it behind has it refreshed), by its primary key.
pub(super) const CONTEXT_JOIN: &str = "LEFT JOIN LATERAL (SELECT * FROM ticket_contexts c \
     WHERE c.ticket_id = t.id AND c.workspace_id = p.workspace_id \
     AND c.version = t.context_version \
     OFFSET 0) c ON true";

/// The statements of whole-ticket reads: by UUID (`$2`, in workspace `$1`), and by number:
/// the lookups `(workspace $1[i], project key $2[i], number $3[i])`, one or a batch of any
/// workspaces and projects ([`super::reader`]), each row carrying the position (from 1) of
/// the lookup it answers in column [`LOOKUP_COLUMN`]. Each lookup is probed on its own, its
/// project by `(workspace_id, key)` and its ticket by `(project_id, number)`, so the batch
/// reads one ticket a lookup whatever the workspaces' sizes.
static WHOLE_TICKET_SQL: LazyLock<[String; 2]> = LazyLock::new(|| {
    [
        format!(
            "SELECT {TICKET_COLUMNS}, {CONTEXT_COLUMNS} \
             FROM (SELECT * FROM tickets t WHERE t.uuid = $2 OFFSET 0) t \
             JOIN projects p ON p.workspace_id = $1 AND p.id = t.project_id {CONTEXT_JOIN}"
        ),
        format!(
            "SELECT {TICKET_COLUMNS}, {CONTEXT_COLUMNS}, l.at \
             FROM unnest($1::bigint[], $2::text[], $3::bigint[]) WITH ORDINALITY \
                l(ws, key, number, at) \
             CROSS JOIN LATERAL (SELECT * FROM projects p \
                WHERE p.workspace_id = l.ws AND p.key = l.key OFFSET 0) p \
             CROSS JOIN LATERAL (SELECT * FROM tickets t \
                WHERE t.project_id = p.id AND t.number = l.number OFFSET 0) t \
             {CONTEXT_JOIN}"
        ),
    ]
});

/// The statement of a whole-ticket read of `lookup` (by number: a batch of one).
pub(super) fn whole_ticket_sql(lookup: &Lookup) -> &'static str {
    match lookup {
        Lookup::Uuid(_) => &WHOLE_TICKET_SQL[0],
        Lookup::Number { .. } => &WHOLE_TICKET_SQL[1],
    }
}

/// The statement of a batch of whole-ticket reads by number ([`super::reader`]).
pub(super) fn ticket_batch_sql() -> &'static str {
    &WHOLE_TICKET_SQL[1]
}

/// Where a row of [`ticket_batch_sql`] names the lookup it answers (its position, from 1).
pub(super) const LOOKUP_COLUMN: usize = TICKET_COLUMN_COUNT + 10;

/// A whole-ticket statement's row: the ticket whole, or, when it has no kept context at
/// its version, only its id (it is then read part by part).
pub(super) enum Whole {
    Kept(Box<WholeTicket>),
    Stale(i64),
}

/// Whether a whole-ticket statement's row has no kept context at its ticket's version (a
/// look at one column: the rest is decoded once, by [`whole_row`]).
pub(super) fn is_stale(row: &Row) -> bool {
    row.try_get::<_, Option<i64>>(TICKET_COLUMN_COUNT)
        .is_ok_and(|kept| kept.is_none())
}

pub(super) fn whole_row(row: &Row) -> StoreResult<Whole> {
    let ticket = ticket_row(row)?;
    if row
        .try_get::<_, Option<i64>>(TICKET_COLUMN_COUNT)
        .map_err(crate::store::db)?
        .is_none()
    {
        return Ok(Whole::Stale(ticket.id));
    }
    let at = TICKET_COLUMN_COUNT + 1;
    let mut refs: HashMap<i64, (TicketRef, bool)> = HashMap::new();
    let named: Vec<(i64, String, String, String, bool)> = json_column(row, at + 8)?;
    for (id, number, title, status, live) in named {
        let status = status_of(&status)?;
        refs.insert(
            id,
            (
                TicketRef {
                    number,
                    title,
                    status,
                },
                live,
            ),
        );
    }
    let named = |id: i64| -> StoreResult<TicketRef> {
        refs.get(&id)
            .map(|(r, _)| r.clone())
            .ok_or_else(|| StoreError::Database(format!("ticket row {id} vanished")))
    };
    // The kept lists name deleted neighbours too: only live ones are shown.
    let live = |ids: Vec<i64>| -> Vec<TicketRef> {
        ids.into_iter()
            .filter_map(|id| {
                refs.get(&id)
                    .filter(|(_, live)| *live)
                    .map(|(r, _)| r.clone())
            })
            .collect()
    };
    let mut comments: Vec<Comment> = json_column(row, at + 5)?;
    comments.truncate(WHOLE_COMMENTS);
    comments.reverse();
    let mut changes: Vec<Change> = json_column(row, at + 7)?;
    changes.truncate(WHOLE_CHANGES);
    Ok(Whole::Kept(Box::new(WholeTicket {
        parent: ticket.parent_id.map(named).transpose()?,
        epic: ticket.epic_id.map(named).transpose()?,
        assignees: row.try_get(at).map_err(crate::store::db)?,
        labels: row.try_get(at + 1).map_err(crate::store::db)?,
        comment_count: count(row.try_get(at + 2).map_err(crate::store::db)?),
        dependencies: live(row.try_get(at + 3).map_err(crate::store::db)?),
        dependents: live(row.try_get(at + 4).map_err(crate::store::db)?),
        comments,
        commits: json_column(row, at + 6)?,
        changes,
        row: ticket,
    })))
}

/// A JSON text column decoded (NULL: the empty value).
pub(super) fn json_column<T: serde::de::DeserializeOwned + Default>(
    row: &Row,
    at: usize,
) -> StoreResult<T> {
    match row
        .try_get::<_, Option<String>>(at)
        .map_err(crate::store::db)?
    {
        Some(text) => serde_json::from_str(&text)
            .map_err(|e| StoreError::Database(format!("a ticket's context did not decode: {e}"))),
        None => Ok(T::default()),
    }
}

pub(super) fn status_of(text: &str) -> StoreResult<Status> {
    Status::parse(text).ok_or_else(|| StoreError::Database(format!("unknown status {text:?}")))
}

pub(super) fn points_of(points: Option<i16>) -> Option<u8> {
    points.and_then(|p| u8::try_from(p).ok())
}

pub(super) fn ticket_row(row: &Row) -> StoreResult<TicketRow> {
    let status: String = row.try_get(6).map_err(crate::store::db)?;
    Ok(TicketRow {
        id: row.try_get(0).map_err(crate::store::db)?,
        uuid: row.try_get(1).map_err(crate::store::db)?,
        project_key: row.try_get(2).map_err(crate::store::db)?,
        number: row.try_get(3).map_err(crate::store::db)?,
        title: row.try_get(4).map_err(crate::store::db)?,
        description: row.try_get(5).map_err(crate::store::db)?,
        status: status_of(&status)?,
        story_points: points_of(row.try_get(7).map_err(crate::store::db)?),
        parent_id: row.try_get(8).map_err(crate::store::db)?,
        epic_id: row.try_get(9).map_err(crate::store::db)?,
        created_by: row.try_get(10).map_err(crate::store::db)?,
        created_at: row.try_get(11).map_err(crate::store::db)?,
        updated_by: row.try_get(12).map_err(crate::store::db)?,
        updated_at: row.try_get(13).map_err(crate::store::db)?,
        deleted_at: row.try_get(14).map_err(crate::store::db)?,
        kind: kind_of(&row.try_get::<_, String>(15).map_err(crate::store::db)?)?,
        sprint_id: row.try_get(16).map_err(crate::store::db)?,
        sprint: row.try_get(17).map_err(crate::store::db)?,
    })
}

pub(super) fn kind_of(text: &str) -> StoreResult<Kind> {
    Kind::parse(text).ok_or_else(|| StoreError::Database(format!("unknown kind {text:?}")))
}

/// Columns of a summary of `t`: number, title, status, points, assignees and labels (in
/// byte order, as local mode sorts them), updated_at.
pub(super) const SUMMARY_COLUMNS: &str = "p.key || '-' || t.number, t.title, t.status, t.story_points, \
     ARRAY(SELECT a.assignee FROM ticket_assignees a \
           WHERE a.workspace_id = t.workspace_id AND a.ticket_id = t.id \
           ORDER BY a.assignee COLLATE \"C\"), \
     ARRAY(SELECT l.label FROM ticket_labels l \
           WHERE l.workspace_id = t.workspace_id AND l.ticket_id = t.id \
           ORDER BY l.label COLLATE \"C\"), \
     t.updated_at";

pub(super) fn summary_row(row: &Row, offset: usize) -> StoreResult<TicketSummary> {
    let status: String = row.try_get(offset + 2).map_err(crate::store::db)?;
    Ok(TicketSummary {
        number: row.try_get(offset).map_err(crate::store::db)?,
        title: row.try_get(offset + 1).map_err(crate::store::db)?,
        status: status_of(&status)?,
        story_points: points_of(row.try_get(offset + 3).map_err(crate::store::db)?),
        assignees: row.try_get(offset + 4).map_err(crate::store::db)?,
        labels: row.try_get(offset + 5).map_err(crate::store::db)?,
        updated_at: row.try_get(offset + 6).map_err(crate::store::db)?,
    })
}

pub(super) const CHANGE_COLUMNS: &str =
    "change_type, old_value, new_value, detail, message, changed_by, changed_at";

pub(super) fn change_row(row: &Row) -> StoreResult<Change> {
    Ok(Change {
        change_type: row.try_get(0).map_err(crate::store::db)?,
        old_value: row.try_get(1).map_err(crate::store::db)?,
        new_value: row.try_get(2).map_err(crate::store::db)?,
        detail: row.try_get(3).map_err(crate::store::db)?,
        message: row.try_get(4).map_err(crate::store::db)?,
        changed_by: row.try_get(5).map_err(crate::store::db)?,
        changed_at: row.try_get(6).map_err(crate::store::db)?,
    })
}

pub(super) fn project_row(row: &Row) -> StoreResult<Project> {
    Ok(Project {
        id: row.try_get(0).map_err(crate::store::db)?,
        key: row.try_get(1).map_err(crate::store::db)?,
        name: row.try_get(2).map_err(crate::store::db)?,
    })
}

pub(super) fn count(value: i64) -> usize {
    usize::try_from(value).unwrap_or(0)
}

pub(super) fn refs(values: &[Param]) -> Vec<&(dyn ToSql + Sync)> {
    values
        .iter()
        .map(|v| v.as_ref() as &(dyn ToSql + Sync))
        .collect()
}
