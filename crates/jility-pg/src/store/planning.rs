//! Planning's statements ([`PlanningTx`] for [`Tx`]): sprints, their members, and the reads
//! epics, sprints and the planner need. Every one names its workspace (`$1`).

use jility_core::store::{
    CandidateRank, DependencyEdge, EpicRollup, KeptSprint, NewSprint, PlanningTx, SprintRollup,
    SprintRow, SprintState, SprintUpdate, TicketSet,
};

use super::*;

const SPRINT_COLUMNS: &str = "id, project_id, number, name, goal, starts_on, ends_on, \
     capacity_points, state, started_at, committed_points, committed_tickets, completed_at, \
     completed_points, carried_over, created_by, created_at";

fn sprint_row(row: &Row) -> StoreResult<SprintRow> {
    let get = |i: usize| -> StoreResult<Option<i64>> { row.try_get(i).map_err(crate::store::db) };
    let state: String = row.try_get(8).map_err(crate::store::db)?;
    Ok(SprintRow {
        id: row.try_get(0).map_err(crate::store::db)?,
        project_id: row.try_get(1).map_err(crate::store::db)?,
        number: row.try_get(2).map_err(crate::store::db)?,
        name: row.try_get(3).map_err(crate::store::db)?,
        goal: row.try_get(4).map_err(crate::store::db)?,
        starts_on: row.try_get(5).map_err(crate::store::db)?,
        ends_on: row.try_get(6).map_err(crate::store::db)?,
        capacity_points: get(7)?,
        state: SprintState::parse(&state)
            .ok_or_else(|| StoreError::Database(format!("unknown sprint state {state:?}")))?,
        started_at: row.try_get(9).map_err(crate::store::db)?,
        committed_points: get(10)?,
        committed_tickets: get(11)?,
        completed_at: row.try_get(12).map_err(crate::store::db)?,
        completed_points: get(13)?,
        carried_over: get(14)?,
        created_by: row.try_get(15).map_err(crate::store::db)?,
        created_at: row.try_get(16).map_err(crate::store::db)?,
    })
}

impl Tx<'_> {
    /// The ticket rows `sql`'s `t` selects (with `TICKET_COLUMNS` in place of `{}`), without
    /// their descriptions (see [`PlanningTx::ticket_rows`]).
    fn ticket_rows_of(
        &mut self,
        sql: &str,
        values: &[&(dyn ToSql + Sync)],
    ) -> StoreResult<Vec<TicketRow>> {
        let columns = TICKET_COLUMNS.replacen("t.description", "''::text", 1);
        self.query(&sql.replace("{}", &columns), values)?
            .iter()
            .map(ticket_row)
            .collect()
    }
}

impl PlanningTx for Tx<'_> {
    fn insert_sprint(&mut self, s: &NewSprint<'_>) -> StoreResult<SprintRow> {
        let ws = self.ws;
        let sql = format!(
            "INSERT INTO sprints (workspace_id, project_id, number, name, goal, starts_on, \
             ends_on, capacity_points, created_by, created_at) \
             VALUES ($1, $2, (SELECT coalesce(max(number), 0) + 1 FROM sprints \
                WHERE workspace_id = $1 AND project_id = $2), $3, $4, $5, $6, $7, $8, $9) \
             RETURNING {SPRINT_COLUMNS}"
        );
        let row = self.query_one(
            &sql,
            &[
                &ws,
                &s.project_id,
                &s.name,
                &s.goal,
                &s.starts_on,
                &s.ends_on,
                &s.capacity_points,
                &s.actor,
                &s.at,
            ],
        )?;
        sprint_row(&row)
    }

    fn sprints(&mut self, project_id: i64) -> StoreResult<Vec<SprintRow>> {
        let ws = self.ws;
        let sql = format!(
            "SELECT {SPRINT_COLUMNS} FROM sprints WHERE workspace_id = $1 AND project_id = $2 \
             ORDER BY number"
        );
        self.query(&sql, &[&ws, &project_id])?
            .iter()
            .map(sprint_row)
            .collect()
    }

    fn update_sprint(&mut self, id: i64, u: &SprintUpdate) -> StoreResult<()> {
        let ws = self.ws;
        let changed = self.execute(
            "UPDATE sprints SET state = coalesce($3, state), \
             started_at = coalesce($4, started_at), \
             committed_points = coalesce($5, committed_points), \
             committed_tickets = coalesce($6, committed_tickets), \
             completed_at = coalesce($7, completed_at), \
             completed_points = coalesce($8, completed_points), \
             carried_over = coalesce($9, carried_over) WHERE workspace_id = $1 AND id = $2",
            &[
                &ws,
                &id,
                &u.state.map(SprintState::as_str),
                &u.started_at,
                &u.committed_points,
                &u.committed_tickets,
                &u.completed_at,
                &u.completed_points,
                &u.carried_over,
            ],
        )?;
        if changed == 0 {
            self.failed = true;
            return Err(StoreError::Database(format!(
                "there is no sprint {id} in this workspace"
            )));
        }
        Ok(())
    }

    fn note_sprint_member(&mut self, sprint_id: i64, ticket_id: i64) -> StoreResult<()> {
        let ws = self.ws;
        self.execute(
            "INSERT INTO sprint_tickets (workspace_id, sprint_id, ticket_id) VALUES ($1, $2, $3) \
             ON CONFLICT DO NOTHING",
            &[&ws, &sprint_id, &ticket_id],
        )?;
        Ok(())
    }

    fn ticket_rows(&mut self, set: TicketSet) -> StoreResult<Vec<TicketRow>> {
        let ws = self.ws;
        const JOIN: &str =
            "JOIN projects p ON p.workspace_id = t.workspace_id AND p.id = t.project_id";
        match set {
            TicketSet::Epic(id) => self.ticket_rows_of(
                &format!(
                    "SELECT {{}} FROM tickets t {JOIN} WHERE t.workspace_id = $1 \
                     AND t.epic_id = $2 AND t.deleted_at IS NULL ORDER BY t.id"
                ),
                &[&ws, &id],
            ),
            TicketSet::Sprint(id) => self.ticket_rows_of(
                &format!(
                    "SELECT {{}} FROM tickets t {JOIN} WHERE t.workspace_id = $1 \
                     AND t.sprint_id = $2 AND t.deleted_at IS NULL ORDER BY t.id"
                ),
                &[&ws, &id],
            ),
            TicketSet::EverInSprint(id) => self.ticket_rows_of(
                &format!(
                    "SELECT {{}} FROM sprint_tickets m \
                     CROSS JOIN LATERAL (SELECT * FROM tickets t WHERE t.workspace_id = $1 \
                        AND t.id = m.ticket_id OFFSET 0) t {JOIN} \
                     WHERE m.workspace_id = $1 AND m.sprint_id = $2 ORDER BY t.id"
                ),
                &[&ws, &id],
            ),
            TicketSet::Candidates {
                project,
                after,
                limit,
            } => {
                // One status at a time along `tickets_plan_candidates`, each read only as far
                // as the chunk needs.
                let mut rows = Vec::new();
                for (status, after_id) in CandidateRank::ranges(after) {
                    let left = limit.saturating_sub(rows.len()) as i64;
                    if left == 0 {
                        break;
                    }
                    rows.extend(self.ticket_rows_of(
                        &format!(
                            "SELECT {{}} FROM (SELECT * FROM tickets t WHERE t.workspace_id = $1 \
                                AND t.status = $3 AND t.deleted_at IS NULL AND t.id > $4 \
                                AND t.project_id = $2 AND t.kind = 'ticket' \
                                AND NOT EXISTS (SELECT 1 FROM sprints s WHERE s.workspace_id = $1 \
                                   AND s.id = t.sprint_id AND s.state <> 'completed' OFFSET 0) \
                                ORDER BY t.id LIMIT $5) t {JOIN} ORDER BY t.id"
                        ),
                        &[&ws, &project, &status, &after_id, &left],
                    )?);
                }
                Ok(rows)
            }
        }
    }

    fn epics(
        &mut self,
        statuses: &[Status],
        after: Option<i64>,
        limit: usize,
    ) -> StoreResult<(Vec<TicketRow>, usize)> {
        let ws = self.ws;
        let statuses: Vec<&str> = if statuses.is_empty() {
            Status::ALL.iter().map(|s| s.as_str()).collect()
        } else {
            statuses.iter().map(|s| s.as_str()).collect()
        };
        let cap = (COUNT_CAP + 1) as i64;
        let total: i64 = self
            .query_one(
                "SELECT count(*) FROM (SELECT 1 FROM tickets t WHERE t.workspace_id = $1 \
                 AND t.kind = 'epic' AND t.deleted_at IS NULL AND t.status = ANY($2) \
                 LIMIT $3) c",
                &[&ws, &statuses, &cap],
            )?
            .try_get(0)
            .map_err(crate::store::db)?;
        let after = after.unwrap_or(i64::MAX);
        let limit = limit as i64;
        let rows = self.ticket_rows_of(
            "SELECT {} FROM (SELECT * FROM tickets t WHERE t.workspace_id = $1 \
                AND t.kind = 'epic' AND t.deleted_at IS NULL AND t.id < $3 \
                AND t.status = ANY($2) ORDER BY t.id DESC LIMIT $4) t \
             JOIN projects p ON p.workspace_id = t.workspace_id AND p.id = t.project_id \
             ORDER BY t.id DESC",
            &[&ws, &statuses, &after, &limit],
        )?;
        Ok((rows, count(total)))
    }

    fn sprint_rollups(&mut self, sprint_ids: &[i64]) -> StoreResult<Vec<SprintRollup>> {
        if sprint_ids.is_empty() {
            return Ok(Vec::new());
        }
        let ws = self.ws;
        let rows = self.query(
            "SELECT s.id, count(*), coalesce(sum(t.story_points), 0)::bigint, \
             coalesce(sum(t.story_points) FILTER (WHERE t.status = 'done'), 0)::bigint \
             FROM unnest($2::bigint[]) s(id) \
             CROSS JOIN LATERAL (SELECT * FROM tickets t WHERE t.workspace_id = $1 \
                AND t.sprint_id = s.id AND t.deleted_at IS NULL OFFSET 0) t \
             GROUP BY s.id",
            &[&ws, &sprint_ids],
        )?;
        rows.iter()
            .map(|r| {
                let n = |i: usize| -> StoreResult<u64> {
                    let v: i64 = r.try_get(i).map_err(crate::store::db)?;
                    Ok(v.max(0) as u64)
                };
                Ok(SprintRollup {
                    sprint_id: r.try_get(0).map_err(crate::store::db)?,
                    tickets: n(1)?,
                    points: n(2)?,
                    points_done: n(3)?,
                })
            })
            .collect()
    }

    fn epic_rollups(&mut self, epic_ids: &[i64]) -> StoreResult<Vec<EpicRollup>> {
        if epic_ids.is_empty() {
            return Ok(Vec::new());
        }
        let ws = self.ws;
        // Each epic's tickets by the epic index, one epic at a time (`unnest`, never
        // `epic_id = ANY(…)`, which the planner may leave as a filter).
        let rows = self.query(
            "SELECT e.id, t.status, count(*), coalesce(sum(t.story_points), 0)::bigint, \
             count(*) FILTER (WHERE t.status = 'blocked' OR (t.status <> 'done' AND EXISTS ( \
                SELECT 1 FROM dependencies d CROSS JOIN LATERAL (SELECT o.status, o.deleted_at \
                   FROM tickets o WHERE o.workspace_id = $1 AND o.id = d.depends_on_id OFFSET 0) o \
                WHERE d.workspace_id = $1 AND d.ticket_id = t.id AND o.deleted_at IS NULL \
                AND o.status <> 'done'))), \
             max(t.updated_at) \
             FROM unnest($2::bigint[]) e(id) \
             CROSS JOIN LATERAL (SELECT * FROM tickets t WHERE t.workspace_id = $1 \
                AND t.epic_id = e.id AND t.deleted_at IS NULL OFFSET 0) t \
             GROUP BY e.id, t.status",
            &[&ws, &epic_ids],
        )?;
        rows.iter()
            .map(|r| {
                let status: String = r.try_get(1).map_err(crate::store::db)?;
                let n = |i: usize| -> StoreResult<u64> {
                    let v: i64 = r.try_get(i).map_err(crate::store::db)?;
                    Ok(v.max(0) as u64)
                };
                Ok(EpicRollup {
                    epic_id: r.try_get(0).map_err(crate::store::db)?,
                    status: status_of(&status)?,
                    tickets: n(2)?,
                    points: n(3)?,
                    blocked: n(4)?,
                    last_activity: r.try_get(5).map_err(crate::store::db)?,
                })
            })
            .collect()
    }

    fn dependency_edges(&mut self, ids: &[i64]) -> StoreResult<Vec<DependencyEdge>> {
        if ids.is_empty() {
            return Ok(Vec::new());
        }
        let ws = self.ws;
        let rows = self.query(
            "SELECT d.ticket_id, o.id, p.key || '-' || o.number, o.title, o.status, \
                o.kind = 'ticket' AND o.status IN ('todo', 'backlog') \
                AND o.project_id = (SELECT t.project_id FROM tickets t \
                   WHERE t.workspace_id = $1 AND t.id = d.ticket_id) \
                AND NOT EXISTS (SELECT 1 FROM sprints s WHERE s.workspace_id = $1 \
                   AND s.id = o.sprint_id AND s.state <> 'completed') \
             FROM unnest($2::bigint[]) i(id) \
             JOIN dependencies d ON d.workspace_id = $1 AND d.ticket_id = i.id \
             CROSS JOIN LATERAL (SELECT * FROM tickets o WHERE o.workspace_id = $1 \
                AND o.id = d.depends_on_id OFFSET 0) o \
             JOIN projects p ON p.workspace_id = o.workspace_id AND p.id = o.project_id \
             WHERE o.deleted_at IS NULL ORDER BY d.ticket_id, o.id",
            &[&ws, &ids],
        )?;
        rows.iter()
            .map(|r| {
                let status: String = r.try_get(4).map_err(crate::store::db)?;
                Ok(DependencyEdge {
                    ticket_id: r.try_get(0).map_err(crate::store::db)?,
                    on_id: r.try_get(1).map_err(crate::store::db)?,
                    on_number: r.try_get(2).map_err(crate::store::db)?,
                    on_title: r.try_get(3).map_err(crate::store::db)?,
                    on_status: status_of(&status)?,
                    on_candidate: r.try_get(5).map_err(crate::store::db)?,
                })
            })
            .collect()
    }

    fn changes_of(&mut self, ids: &[i64], types: &[&str]) -> StoreResult<Vec<(i64, Change)>> {
        if ids.is_empty() {
            return Ok(Vec::new());
        }
        let ws = self.ws;
        let sql = format!(
            "SELECT {CHANGE_COLUMNS}, c.ticket_id FROM unnest($2::bigint[]) i(id) \
             CROSS JOIN unnest($3::text[]) k(kind) \
             CROSS JOIN LATERAL (SELECT * FROM ticket_changes c WHERE c.ticket_id = i.id \
                AND c.change_type = k.kind AND c.workspace_id = $1 OFFSET 0) c \
             ORDER BY c.id"
        );
        self.query(&sql, &[&ws, &ids, &types])?
            .iter()
            .map(|r| {
                Ok((
                    r.try_get::<_, i64>(7).map_err(crate::store::db)?,
                    change_row(r)?,
                ))
            })
            .collect()
    }
    fn begin_keeping(&mut self, sprint_id: i64, days: &[(String, u64)]) -> StoreResult<()> {
        let ws = self.ws;
        self.execute(
            "INSERT INTO sprint_kept (workspace_id, sprint_id) VALUES ($1, $2) \
             ON CONFLICT (sprint_id) DO UPDATE SET added_points = 0, removed_points = 0",
            &[&ws, &sprint_id],
        )?;
        self.execute(
            "DELETE FROM sprint_days WHERE workspace_id = $1 AND sprint_id = $2",
            &[&ws, &sprint_id],
        )?;
        let dates: Vec<&str> = days.iter().map(|(d, _)| d.as_str()).collect();
        let remaining: Vec<i64> = days.iter().map(|(_, r)| *r as i64).collect();
        self.execute(
            "INSERT INTO sprint_days (workspace_id, sprint_id, day, remaining) \
             SELECT $1, $2, d.day, d.remaining FROM unnest($3::text[], $4::bigint[]) d(day, remaining)",
            &[&ws, &sprint_id, &dates, &remaining],
        )?;
        Ok(())
    }

    fn keep_sprint(
        &mut self,
        sprint_id: i64,
        day: &str,
        added: u64,
        removed: u64,
    ) -> StoreResult<()> {
        let ws = self.ws;
        // The workspace's writers take turns (the writer lock every write takes first), so
        // the sum below sees every change committed before this one.
        let (added, removed) = (added as i64, removed as i64);
        let kept = self.query_opt(
            "UPDATE sprint_kept SET added_points = added_points + $3, \
             removed_points = removed_points + $4 WHERE workspace_id = $1 AND sprint_id = $2 \
             AND EXISTS (SELECT 1 FROM sprints s WHERE s.workspace_id = $1 AND s.id = $2 \
                AND s.state = 'active') RETURNING sprint_id",
            &[&ws, &sprint_id, &added, &removed],
        )?;
        if kept.is_none() {
            return Ok(());
        }
        self.execute(
            "INSERT INTO sprint_days (workspace_id, sprint_id, day, remaining) \
             VALUES ($1, $2, $3, (SELECT coalesce(sum(t.story_points), 0)::bigint FROM tickets t \
                WHERE t.workspace_id = $1 AND t.sprint_id = $2 AND t.deleted_at IS NULL \
                AND t.status <> 'done')) \
             ON CONFLICT (sprint_id, day) DO UPDATE SET remaining = EXCLUDED.remaining",
            &[&ws, &sprint_id, &day],
        )?;
        Ok(())
    }

    fn kept_sprint(&mut self, sprint_id: i64) -> StoreResult<Option<KeptSprint>> {
        let ws = self.ws;
        let Some(row) = self.query_opt(
            "SELECT added_points, removed_points FROM sprint_kept \
             WHERE workspace_id = $1 AND sprint_id = $2",
            &[&ws, &sprint_id],
        )?
        else {
            return Ok(None);
        };
        let n = |v: i64| v.max(0) as u64;
        let added: i64 = row.try_get(0).map_err(crate::store::db)?;
        let removed: i64 = row.try_get(1).map_err(crate::store::db)?;
        let days = self
            .query(
                "SELECT day, remaining FROM sprint_days WHERE workspace_id = $1 \
                 AND sprint_id = $2 ORDER BY day",
                &[&ws, &sprint_id],
            )?
            .iter()
            .map(|r| {
                let remaining: i64 = r.try_get(1).map_err(crate::store::db)?;
                Ok((r.try_get(0).map_err(crate::store::db)?, n(remaining)))
            })
            .collect::<StoreResult<Vec<_>>>()?;
        Ok(Some(KeptSprint {
            added_points: n(added),
            removed_points: n(removed),
            days,
        }))
    }
}
