//! The inbox in SQLite ([`InboxTx`]).

use rusqlite::{OptionalExtension as _, Row, params, params_from_iter};

use jility_core::store::{InboxTx, NewNotification, NotificationRow, StoreResult};

use crate::rows::{Tx, db};

fn notification(row: &Row<'_>) -> rusqlite::Result<NotificationRow> {
    Ok(NotificationRow {
        id: row.get(0)?,
        kind: row.get(1)?,
        ticket: row.get(2)?,
        title: row.get(3)?,
        actor: row.get(4)?,
        summary: row.get(5)?,
        created_at: row.get(6)?,
        read_at: row.get(7)?,
    })
}

impl InboxTx for Tx<'_> {
    fn notify(&mut self, n: &NewNotification<'_>) -> StoreResult<()> {
        self.tx
            .prepare_cached(
                "INSERT INTO notifications (recipient, kind, priority, ticket_id, actor, summary, created_at) \
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7) \
                 ON CONFLICT (recipient, ticket_id, created_at) DO UPDATE SET \
                   kind = excluded.kind, priority = excluded.priority, summary = excluded.summary \
                 WHERE excluded.priority > notifications.priority",
            )
            .map_err(db)?
            .execute(params![n.recipient, n.kind, n.priority, n.ticket_id, n.actor, n.summary, n.at])
            .map_err(db)?;
        Ok(())
    }

    fn notifications(
        &mut self,
        recipient: &str,
        unread_only: bool,
        before: Option<i64>,
        limit: usize,
    ) -> StoreResult<Vec<NotificationRow>> {
        let mut stmt = self
            .tx
            .prepare_cached(
                "SELECT n.id, n.kind, p.key || '-' || t.number, t.title, n.actor, n.summary, n.created_at, n.read_at \
                 FROM notifications n JOIN tickets t ON t.id = n.ticket_id JOIN projects p ON p.id = t.project_id \
                 WHERE n.recipient = ?1 AND n.id < ?2 AND (?3 = 0 OR n.read_at IS NULL) \
                 ORDER BY n.id DESC LIMIT ?4",
            )
            .map_err(db)?;
        let rows = stmt
            .query_map(
                params![
                    recipient,
                    before.unwrap_or(i64::MAX),
                    i64::from(unread_only),
                    limit as i64
                ],
                notification,
            )
            .map_err(db)?;
        rows.collect::<Result<_, _>>().map_err(db)
    }

    fn count_notifications(&mut self, recipient: &str, unread_only: bool) -> StoreResult<u64> {
        let n: i64 = self
            .tx
            .prepare_cached(
                "SELECT count(*) FROM notifications WHERE recipient = ?1 AND (?2 = 0 OR read_at IS NULL)",
            )
            .map_err(db)?
            .query_row(params![recipient, i64::from(unread_only)], |row| row.get(0))
            .map_err(db)?;
        Ok(n as u64)
    }

    fn mark_read(&mut self, recipient: &str, ids: Option<&[i64]>, at: &str) -> StoreResult<u64> {
        let n = match ids {
            None => self
                .tx
                .execute(
                    "UPDATE notifications SET read_at = ?2 WHERE recipient = ?1 AND read_at IS NULL",
                    params![recipient, at],
                )
                .map_err(db)?,
            Some(ids) => {
                let mut n = 0;
                let mut stmt = self
                    .tx
                    .prepare_cached(
                        "UPDATE notifications SET read_at = ?3 WHERE recipient = ?1 AND id = ?2 AND read_at IS NULL",
                    )
                    .map_err(db)?;
                for id in ids {
                    n += stmt.execute(params![recipient, id, at]).map_err(db)?;
                }
                n
            }
        };
        Ok(n as u64)
    }

    fn watchers(&mut self, id: i64) -> StoreResult<Vec<String>> {
        let mut stmt = self
            .tx
            .prepare_cached(
                "SELECT person FROM ( \
                   SELECT created_by AS person FROM tickets WHERE id = ?1 \
                   UNION SELECT assignee FROM ticket_assignees WHERE ticket_id = ?1 \
                   UNION SELECT author FROM comments WHERE ticket_id = ?1 \
                   UNION SELECT person FROM watches WHERE ticket_id = ?1 AND watching = 1) \
                 WHERE person NOT IN (SELECT person FROM watches WHERE ticket_id = ?1 AND watching = 0) \
                 ORDER BY person",
            )
            .map_err(db)?;
        let rows = stmt.query_map([id], |row| row.get(0)).map_err(db)?;
        rows.collect::<Result<_, _>>().map_err(db)
    }

    fn set_watch(&mut self, id: i64, person: &str, watching: bool, at: &str) -> StoreResult<()> {
        self.tx
            .execute(
                "INSERT INTO watches (ticket_id, person, watching, at) VALUES (?1, ?2, ?3, ?4) \
                 ON CONFLICT (ticket_id, person) DO UPDATE SET watching = excluded.watching, at = excluded.at",
                params![id, person, i64::from(watching), at],
            )
            .map_err(db)?;
        Ok(())
    }

    fn dependents_of(&mut self, id: i64) -> StoreResult<Vec<i64>> {
        let mut stmt = self
            .tx
            .prepare_cached(
                "SELECT d.ticket_id FROM dependencies d JOIN tickets t ON t.id = d.ticket_id \
                 WHERE d.depends_on_id = ?1 AND t.deleted_at IS NULL ORDER BY d.ticket_id",
            )
            .map_err(db)?;
        let rows = stmt.query_map([id], |row| row.get(0)).map_err(db)?;
        rows.collect::<Result<_, _>>().map_err(db)
    }

    fn known_names(&mut self, names: &[String]) -> StoreResult<Vec<String>> {
        let mut known = Vec::new();
        if names.is_empty() {
            return Ok(known);
        }
        for name in names {
            let found: Option<String> = self
                .tx
                .prepare_cached(
                    "SELECT name FROM ( \
                       SELECT assignee AS name FROM ticket_assignees WHERE assignee = ?1 COLLATE NOCASE \
                       UNION ALL SELECT created_by FROM tickets WHERE created_by = ?1 COLLATE NOCASE \
                       UNION ALL SELECT author FROM comments WHERE author = ?1 COLLATE NOCASE) LIMIT 1",
                )
                .map_err(db)?
                .query_row(params_from_iter([name]), |row| row.get(0))
                .optional()
                .map_err(db)?;
            if let Some(found) = found
                && !known.contains(&found)
            {
                known.push(found);
            }
        }
        Ok(known)
    }
}
