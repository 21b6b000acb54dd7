//! Columns and rows: what a statement selects and how a row becomes the domain's value.

use super::*;

pub(super) const TICKET_COLUMNS: &str = "t.id, t.uuid, p.key, t.number, t.title, t.description, t.status, \
     t.story_points, t.parent_id, t.epic_id, t.created_by, t.created_at, t.updated_by, \
     t.updated_at, t.deleted_at";
pub(super) const TICKET_COLUMN_COUNT: usize = 15;

/// The columns of a [`Context`] of the ticket `t`, after its [`TICKET_COLUMNS`]: its kept
/// context `c` ([`CONTEXT_JOIN`]; all NULL when it has none), and the neighbours it names
/// by id, read live (number, title, status, whether live) as JSON, when it names any.
pub(super) const CONTEXT_COLUMNS: &str = "c.ticket_id, c.assignees, c.labels, c.comment_count, \
     c.dependency_ids, c.dependent_ids, c.comments, c.commits, c.changes, \
     CASE WHEN t.parent_id IS NULL AND t.epic_id IS NULL \
        AND cardinality(c.dependency_ids) = 0 AND cardinality(c.dependent_ids) = 0 THEN NULL \
     ELSE (SELECT json_agg(json_build_array(r.id, rp.key || '-' || r.number, r.title, \
        r.status, r.deleted_at IS NULL))::text FROM tickets r JOIN projects rp \
        ON rp.workspace_id = r.workspace_id AND rp.id = r.project_id \
        WHERE r.workspace_id = $1 \
        AND r.id = ANY(ARRAY[t.parent_id, t.epic_id] || c.dependency_ids || c.dependent_ids)) \
     END";

/// The kept context of `t` when it is at the ticket's version ([`super::contexts`]: a write
/// bumps the version, a read that finds it behind has it refreshed). A ticket without a
/// current one is read part by part.
pub(super) const CONTEXT_JOIN: &str = "LEFT JOIN ticket_contexts c ON c.workspace_id = $1 \
     AND c.ticket_id = t.id AND c.version = t.context_version";

/// The statements of whole-ticket reads, by their condition on `t` (values `$2…`): by
/// UUID, by number, and by numbers (a batch, [`ticket_batch_sql`]).
static WHOLE_TICKET_SQL: std::sync::LazyLock<[String; 3]> = std::sync::LazyLock::new(|| {
    [prefetch::BY_UUID, prefetch::BY_NUMBER, prefetch::BY_NUMBERS].map(|condition| {
        format!(
            "SELECT {TICKET_COLUMNS}, {CONTEXT_COLUMNS} FROM tickets t \
             JOIN projects p ON p.workspace_id = t.workspace_id AND p.id = t.project_id \
             {CONTEXT_JOIN} WHERE t.workspace_id = $1 AND {condition}"
        )
    })
});

/// The statement of a whole-ticket read: the ticket `lookup` finds, with its context.
pub(super) fn whole_ticket_sql(lookup: &Lookup) -> &'static str {
    match lookup {
        Lookup::Uuid(_) => &WHOLE_TICKET_SQL[0],
        Lookup::Number { .. } => &WHOLE_TICKET_SQL[1],
    }
}

/// The statement of a batch of whole-ticket reads by number ([`super::prefetch`]): the
/// tickets of workspace `$1`, project key `$2` and numbers `$3` (an array), with their
/// contexts; each row's number is column [`NUMBER_COLUMN`].
pub(super) fn ticket_batch_sql() -> &'static str {
    &WHOLE_TICKET_SQL[2]
}

/// Where a ticket's number is among [`TICKET_COLUMNS`].
pub(super) const NUMBER_COLUMN: usize = 3;

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
    })
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
