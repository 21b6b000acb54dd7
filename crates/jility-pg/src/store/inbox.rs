//! The inbox's statements ([`InboxTx`] for [`Tx`]): every one names its workspace (`$1`).

use jility_core::store::{InboxTx, NewNotification, NotificationRow};

use super::*;

fn notification(row: &Row) -> StoreResult<NotificationRow> {
    let get = |e| crate::store::db(e);
    Ok(NotificationRow {
        id: row.try_get(0).map_err(get)?,
        kind: row.try_get(1).map_err(get)?,
        ticket: row
            .try_get::<_, Option<String>>(2)
            .map_err(get)?
            .unwrap_or_default(),
        title: row
            .try_get::<_, Option<String>>(3)
            .map_err(get)?
            .unwrap_or_default(),
        actor: row.try_get(4).map_err(get)?,
        summary: row.try_get(5).map_err(get)?,
        created_at: row.try_get(6).map_err(get)?,
        read_at: row.try_get(7).map_err(get)?,
    })
}

impl InboxTx for Tx<'_> {
    fn notify(&mut self, n: &NewNotification<'_>) -> StoreResult<()> {
        let ws = self.ws;
        self.execute(
            "INSERT INTO notifications (workspace_id, recipient, kind, priority, ticket_id, actor, summary, created_at) \
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8) \
             ON CONFLICT (workspace_id, recipient, ticket_id, created_at) DO UPDATE SET \
               kind = excluded.kind, priority = excluded.priority, summary = excluded.summary \
             WHERE excluded.priority > notifications.priority",
            &[&ws, &n.recipient, &n.kind, &n.priority, &n.ticket_id, &n.actor, &n.summary, &n.at],
        )?;
        Ok(())
    }

    fn notifications(
        &mut self,
        recipient: &str,
        unread_only: bool,
        before: Option<i64>,
        limit: usize,
    ) -> StoreResult<Vec<NotificationRow>> {
        let ws = self.ws;
        let before = before.unwrap_or(i64::MAX);
        let limit = limit as i64;
        let sql = if unread_only {
            "SELECT n.id, n.kind, p.key || '-' || t.number, t.title, n.actor, n.summary, n.created_at, n.read_at \
             FROM notifications n \
             LEFT JOIN tickets t ON t.workspace_id = n.workspace_id AND t.id = n.ticket_id \
             LEFT JOIN projects p ON p.workspace_id = t.workspace_id AND p.id = t.project_id \
             WHERE n.workspace_id = $1 AND n.recipient = $2 AND n.id < $3 AND n.read_at IS NULL \
             ORDER BY n.id DESC LIMIT $4"
        } else {
            "SELECT n.id, n.kind, p.key || '-' || t.number, t.title, n.actor, n.summary, n.created_at, n.read_at \
             FROM notifications n \
             LEFT JOIN tickets t ON t.workspace_id = n.workspace_id AND t.id = n.ticket_id \
             LEFT JOIN projects p ON p.workspace_id = t.workspace_id AND p.id = t.project_id \
             WHERE n.workspace_id = $1 AND n.recipient = $2 AND n.id < $3 \
             ORDER BY n.id DESC LIMIT $4"
        };
        self.query(sql, &[&ws, &recipient, &before, &limit])?
            .iter()
            .map(notification)
            .collect()
    }

    fn count_notifications(&mut self, recipient: &str, unread_only: bool) -> StoreResult<u64> {
        let ws = self.ws;
        let sql = if unread_only {
            "SELECT count(*) FROM notifications WHERE workspace_id = $1 AND recipient = $2 AND read_at IS NULL"
        } else {
            "SELECT count(*) FROM notifications WHERE workspace_id = $1 AND recipient = $2"
        };
        let n: i64 = self
            .query_one(sql, &[&ws, &recipient])?
            .try_get(0)
            .map_err(crate::store::db)?;
        Ok(n as u64)
    }

    fn mark_read(&mut self, recipient: &str, ids: Option<&[i64]>, at: &str) -> StoreResult<u64> {
        let ws = self.ws;
        match ids {
            None => self.execute(
                "UPDATE notifications SET read_at = $3 WHERE workspace_id = $1 AND recipient = $2 AND read_at IS NULL",
                &[&ws, &recipient, &at],
            ),
            Some(ids) => {
                let ids = ids.to_vec();
                self.execute(
                    "UPDATE notifications SET read_at = $4 \
                     WHERE workspace_id = $1 AND recipient = $2 AND id IN (SELECT unnest($3::bigint[])) AND read_at IS NULL",
                    &[&ws, &recipient, &ids, &at],
                )
            }
        }
    }

    fn watchers(&mut self, id: i64) -> StoreResult<Vec<String>> {
        self.strings(
            "SELECT person FROM ( \
               (SELECT created_by AS person FROM tickets WHERE workspace_id = $1 AND id = $2) \
               UNION SELECT assignee FROM ticket_assignees WHERE ticket_id = $2 AND workspace_id = $1 \
               UNION SELECT author FROM comments WHERE ticket_id = $2 AND workspace_id = $1 \
               UNION SELECT person FROM watches WHERE ticket_id = $2 AND workspace_id = $1 AND watching) w \
             WHERE person NOT IN (SELECT person FROM watches WHERE ticket_id = $2 AND workspace_id = $1 AND NOT watching) \
             ORDER BY person",
            id,
        )
    }

    fn set_watch(&mut self, id: i64, person: &str, watching: bool, at: &str) -> StoreResult<()> {
        let ws = self.ws;
        self.execute(
            "INSERT INTO watches (workspace_id, ticket_id, person, watching, at) VALUES ($1, $2, $3, $4, $5) \
             ON CONFLICT (ticket_id, person) DO UPDATE SET watching = excluded.watching, at = excluded.at",
            &[&ws, &id, &person, &watching, &at],
        )?;
        Ok(())
    }

    fn dependents_of(&mut self, id: i64) -> StoreResult<Vec<i64>> {
        self.ids(
            "SELECT d.ticket_id FROM dependencies d \
             JOIN tickets t ON t.workspace_id = d.workspace_id AND t.id = d.ticket_id \
             WHERE d.depends_on_id = $2 AND d.workspace_id = $1 AND t.deleted_at IS NULL \
             ORDER BY d.ticket_id",
            id,
        )
    }

    fn known_names(&mut self, names: &[String]) -> StoreResult<Vec<String>> {
        let ws = self.ws;
        let mut known: Vec<String> = Vec::new();
        for name in names {
            let lower = name.to_lowercase();
            // A member first (the pages' people), then whoever acts in the workspace.
            let found = self.query_opt(
                "SELECT name FROM ( \
                   (SELECT person AS name FROM workspace_people WHERE workspace_id = $1 AND alias = $2 LIMIT 1) \
                   UNION ALL \
                   (SELECT assignee FROM ticket_assignees WHERE workspace_id = $1 AND lower(assignee) = $2 LIMIT 1) \
                   UNION ALL (SELECT created_by FROM tickets WHERE workspace_id = $1 AND lower(created_by) = $2 LIMIT 1) \
                   UNION ALL (SELECT author FROM comments WHERE workspace_id = $1 AND lower(author) = $2 LIMIT 1)) found \
                 LIMIT 1",
                &[&ws, &lower],
            )?;
            if let Some(row) = found {
                let name: String = row.try_get(0).map_err(crate::store::db)?;
                if !known.contains(&name) {
                    known.push(name);
                }
            }
        }
        Ok(known)
    }
}
