//! What every statement of the store shares: a transaction, the driver's errors as the
//! domain's, and the columns and decoding of ticket, summary and change rows.

use rusqlite::Row;

use jility_core::model::{Change, Kind, Status, TicketSummary};
use jility_core::store::{StoreError, TicketRow};

/// A driver error as the domain's [`StoreError`] (busy or locked: [`StoreError::Busy`]).
pub(crate) fn db(err: rusqlite::Error) -> StoreError {
    {
        match err.sqlite_error_code() {
            Some(rusqlite::ErrorCode::DatabaseBusy | rusqlite::ErrorCode::DatabaseLocked) => {
                StoreError::Busy
            }
            _ => StoreError::Database(err.to_string()),
        }
    }
}

pub(crate) struct Tx<'a> {
    pub(crate) tx: &'a rusqlite::Transaction<'a>,
}

pub(crate) const TICKET_COLUMNS: &str = "t.id, t.uuid, p.key, t.number, t.title, t.description, t.status, \
     t.story_points, t.parent_id, t.epic_id, t.created_by, t.created_at, t.updated_by, \
     t.updated_at, t.deleted_at, t.kind, t.sprint_id, \
     (SELECT s.name FROM sprints s WHERE s.id = t.sprint_id)";

pub(crate) fn status_of(text: &str) -> rusqlite::Result<Status> {
    Status::parse(text).ok_or_else(|| {
        rusqlite::Error::FromSqlConversionFailure(
            0,
            rusqlite::types::Type::Text,
            format!("unknown status {text:?}").into(),
        )
    })
}

pub(crate) fn ticket_row(row: &Row<'_>) -> rusqlite::Result<TicketRow> {
    let status: String = row.get(6)?;
    let kind: String = row.get(15)?;
    Ok(TicketRow {
        id: row.get(0)?,
        uuid: row.get(1)?,
        project_key: row.get(2)?,
        number: row.get(3)?,
        title: row.get(4)?,
        description: row.get(5)?,
        status: status_of(&status)?,
        story_points: row.get(7)?,
        parent_id: row.get(8)?,
        epic_id: row.get(9)?,
        created_by: row.get(10)?,
        created_at: row.get(11)?,
        updated_by: row.get(12)?,
        updated_at: row.get(13)?,
        deleted_at: row.get(14)?,
        kind: Kind::parse(&kind).ok_or_else(|| {
            rusqlite::Error::FromSqlConversionFailure(
                15,
                rusqlite::types::Type::Text,
                format!("unknown kind {kind:?}").into(),
            )
        })?,
        sprint_id: row.get(16)?,
        sprint: row.get(17)?,
    })
}

/// Columns of a summary: number, title, status, points, assignees and labels joined by
/// U+001F (a separator no name contains), updated_at.
pub(crate) const SUMMARY_COLUMNS: &str = "p.key || '-' || t.number, t.title, t.status, t.story_points, \
     (SELECT group_concat(a.assignee, char(31)) FROM (SELECT assignee FROM ticket_assignees \
        WHERE ticket_id = t.id ORDER BY assignee) a), \
     (SELECT group_concat(l.label, char(31)) FROM (SELECT label FROM ticket_labels \
        WHERE ticket_id = t.id ORDER BY label) l), \
     t.updated_at";

fn split_names(value: Option<String>) -> Vec<String> {
    value
        .map(|v| v.split('\u{1f}').map(str::to_string).collect())
        .unwrap_or_default()
}

pub(crate) fn summary_row(row: &Row<'_>, offset: usize) -> rusqlite::Result<TicketSummary> {
    let status: String = row.get(offset + 2)?;
    Ok(TicketSummary {
        number: row.get(offset)?,
        title: row.get(offset + 1)?,
        status: status_of(&status)?,
        story_points: row.get(offset + 3)?,
        assignees: split_names(row.get(offset + 4)?),
        labels: split_names(row.get(offset + 5)?),
        updated_at: row.get(offset + 6)?,
    })
}

pub(crate) fn change_row(row: &Row<'_>) -> rusqlite::Result<Change> {
    Ok(Change {
        change_type: row.get(0)?,
        old_value: row.get(1)?,
        new_value: row.get(2)?,
        detail: row.get(3)?,
        message: row.get(4)?,
        changed_by: row.get(5)?,
        changed_at: row.get(6)?,
    })
}

pub(crate) const CHANGE_COLUMNS: &str =
    "change_type, old_value, new_value, detail, message, changed_by, changed_at";
