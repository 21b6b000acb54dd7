//! Planning's storage in SQLite: sprints, their members, and the reads epics, sprints and
//! the planner need ([`PlanningTx`]).

use rusqlite::{OptionalExtension as _, Row, params, params_from_iter};

use jility_core::model::{Change, Status};
use jility_core::store::{
    COUNT_CAP, CandidateRank, DependencyEdge, EpicRollup, KeptSprint, NewSprint, PlanningTx,
    SprintRollup, SprintRow, SprintState, SprintUpdate, StoreError, StoreResult, TicketRow,
    TicketSet,
};

use crate::rows::{TICKET_COLUMNS, Tx, change_row, db, status_of, ticket_row};

const SPRINT_COLUMNS: &str = "id, project_id, number, name, goal, starts_on, ends_on, \
     capacity_points, state, started_at, committed_points, committed_tickets, completed_at, \
     completed_points, carried_over, created_by, created_at";

/// Most values one statement binds: far below SQLite's limit (32,766), so a long list of
/// tickets is read in a few statements.
const CHUNK: usize = 500;

fn sprint_row(row: &Row<'_>) -> rusqlite::Result<SprintRow> {
    let state: String = row.get(8)?;
    Ok(SprintRow {
        id: row.get(0)?,
        project_id: row.get(1)?,
        number: row.get(2)?,
        name: row.get(3)?,
        goal: row.get(4)?,
        starts_on: row.get(5)?,
        ends_on: row.get(6)?,
        capacity_points: row.get(7)?,
        state: SprintState::parse(&state).ok_or_else(|| {
            rusqlite::Error::FromSqlConversionFailure(
                8,
                rusqlite::types::Type::Text,
                format!("unknown sprint state {state:?}").into(),
            )
        })?,
        started_at: row.get(9)?,
        committed_points: row.get(10)?,
        committed_tickets: row.get(11)?,
        completed_at: row.get(12)?,
        completed_points: row.get(13)?,
        carried_over: row.get(14)?,
        created_by: row.get(15)?,
        created_at: row.get(16)?,
    })
}

fn marks(n: usize) -> String {
    vec!["?"; n].join(", ")
}

/// A ticket row's columns without the description (see [`PlanningTx::ticket_rows`]).
fn planning_columns() -> String {
    TICKET_COLUMNS.replacen("t.description", "''", 1)
}

impl Tx<'_> {
    fn rows_where(&self, condition: &str, values: &[i64]) -> StoreResult<Vec<TicketRow>> {
        let sql = format!(
            "SELECT {} FROM tickets t JOIN projects p ON p.id = t.project_id \
             WHERE {condition} ORDER BY t.id",
            planning_columns()
        );
        let mut stmt = self.tx.prepare_cached(&sql).map_err(db)?;
        let rows = stmt
            .query_map(params_from_iter(values), ticket_row)
            .map_err(db)?;
        rows.collect::<Result<_, _>>().map_err(db)
    }
}

impl PlanningTx for Tx<'_> {
    fn insert_sprint(&mut self, s: &NewSprint<'_>) -> StoreResult<SprintRow> {
        let sql = format!(
            "INSERT INTO sprints (project_id, number, name, goal, starts_on, ends_on, \
             capacity_points, created_by, created_at) \
             VALUES (?1, (SELECT coalesce(max(number), 0) + 1 FROM sprints WHERE project_id = ?1), \
             ?2, ?3, ?4, ?5, ?6, ?7, ?8) RETURNING {SPRINT_COLUMNS}"
        );
        self.tx
            .prepare_cached(&sql)
            .map_err(db)?
            .query_row(
                params![
                    s.project_id,
                    s.name,
                    s.goal,
                    s.starts_on,
                    s.ends_on,
                    s.capacity_points,
                    s.actor,
                    s.at
                ],
                sprint_row,
            )
            .map_err(db)
    }

    fn sprints(&mut self, project_id: i64) -> StoreResult<Vec<SprintRow>> {
        let sql =
            format!("SELECT {SPRINT_COLUMNS} FROM sprints WHERE project_id = ?1 ORDER BY number");
        let mut stmt = self.tx.prepare_cached(&sql).map_err(db)?;
        let rows = stmt.query_map([project_id], sprint_row).map_err(db)?;
        rows.collect::<Result<_, _>>().map_err(db)
    }

    fn update_sprint(&mut self, id: i64, u: &SprintUpdate) -> StoreResult<()> {
        self.tx
            .prepare_cached(
                "UPDATE sprints SET state = coalesce(?2, state), \
                 started_at = coalesce(?3, started_at), \
                 committed_points = coalesce(?4, committed_points), \
                 committed_tickets = coalesce(?5, committed_tickets), \
                 completed_at = coalesce(?6, completed_at), \
                 completed_points = coalesce(?7, completed_points), \
                 carried_over = coalesce(?8, carried_over) WHERE id = ?1",
            )
            .map_err(db)?
            .execute(params![
                id,
                u.state.map(SprintState::as_str),
                u.started_at,
                u.committed_points,
                u.committed_tickets,
                u.completed_at,
                u.completed_points,
                u.carried_over
            ])
            .map_err(db)?;
        Ok(())
    }

    fn note_sprint_member(&mut self, sprint_id: i64, ticket_id: i64) -> StoreResult<()> {
        self.tx
            .prepare_cached(
                "INSERT INTO sprint_tickets (sprint_id, ticket_id) VALUES (?1, ?2) \
                 ON CONFLICT DO NOTHING",
            )
            .map_err(db)?
            .execute(params![sprint_id, ticket_id])
            .map_err(db)?;
        Ok(())
    }

    fn ticket_rows(&mut self, set: TicketSet) -> StoreResult<Vec<TicketRow>> {
        match set {
            TicketSet::Epic(id) => {
                self.rows_where("t.epic_id = ?1 AND t.deleted_at IS NULL", &[id])
            }
            TicketSet::Sprint(id) => {
                self.rows_where("t.sprint_id = ?1 AND t.deleted_at IS NULL", &[id])
            }
            TicketSet::EverInSprint(id) => self.rows_where(
                "t.id IN (SELECT ticket_id FROM sprint_tickets WHERE sprint_id = ?1)",
                &[id],
            ),
            TicketSet::Candidates {
                project,
                after,
                limit,
            } => {
                // One status at a time along `tickets_live`, each read only as far as the
                // chunk needs.
                let sql = format!(
                    "SELECT {} FROM tickets t JOIN projects p ON p.id = t.project_id \
                     WHERE t.status = ?2 AND t.deleted_at IS NULL AND t.id > ?3 \
                     AND t.project_id = ?1 AND t.kind = 'ticket' \
                     AND NOT EXISTS (SELECT 1 FROM sprints s WHERE s.id = t.sprint_id \
                        AND s.state <> 'completed') \
                     ORDER BY t.id LIMIT ?4",
                    planning_columns()
                );
                let mut all = Vec::new();
                for (status, after_id) in CandidateRank::ranges(after) {
                    let left = limit.saturating_sub(all.len()) as i64;
                    if left == 0 {
                        break;
                    }
                    let mut stmt = self.tx.prepare_cached(&sql).map_err(db)?;
                    let rows = stmt
                        .query_map(params![project, status, after_id, left], ticket_row)
                        .map_err(db)?;
                    for row in rows {
                        all.push(row.map_err(db)?);
                    }
                }
                Ok(all)
            }
        }
    }

    fn epics(
        &mut self,
        statuses: &[Status],
        after: Option<i64>,
        limit: usize,
    ) -> StoreResult<(Vec<TicketRow>, usize)> {
        let mut values: Vec<rusqlite::types::Value> = Vec::new();
        let mut condition = "t.kind = 'epic' AND t.deleted_at IS NULL".to_string();
        if !statuses.is_empty() {
            condition.push_str(&format!(" AND t.status IN ({})", marks(statuses.len())));
            values.extend(statuses.iter().map(|s| s.as_str().to_string().into()));
        }
        let total: i64 = self
            .tx
            .prepare_cached(&format!(
                "SELECT count(*) FROM (SELECT 1 FROM tickets t WHERE {condition} LIMIT {})",
                COUNT_CAP + 1
            ))
            .map_err(db)?
            .query_row(params_from_iter(values.iter()), |r| r.get(0))
            .map_err(db)?;
        if let Some(after) = after {
            condition.push_str(" AND t.id < ?");
            values.push(after.into());
        }
        values.push((limit as i64).into());
        let sql = format!(
            "SELECT {} FROM tickets t JOIN projects p ON p.id = t.project_id \
             WHERE {condition} ORDER BY t.id DESC LIMIT ?",
            planning_columns()
        );
        let mut stmt = self.tx.prepare_cached(&sql).map_err(db)?;
        let rows = stmt
            .query_map(params_from_iter(values.iter()), ticket_row)
            .map_err(db)?;
        let rows = rows.collect::<Result<_, _>>().map_err(db)?;
        Ok((rows, usize::try_from(total).unwrap_or(0)))
    }

    fn sprint_rollups(&mut self, sprint_ids: &[i64]) -> StoreResult<Vec<SprintRollup>> {
        let mut all = Vec::new();
        for chunk in sprint_ids.chunks(CHUNK) {
            let sql = format!(
                "SELECT sprint_id, count(*), coalesce(sum(story_points), 0), \
                 coalesce(sum(CASE WHEN status = 'done' THEN story_points END), 0) \
                 FROM tickets WHERE sprint_id IN ({}) AND deleted_at IS NULL GROUP BY sprint_id",
                marks(chunk.len())
            );
            let mut stmt = self.tx.prepare_cached(&sql).map_err(db)?;
            let rows = stmt
                .query_map(params_from_iter(chunk), |r| {
                    Ok(SprintRollup {
                        sprint_id: r.get(0)?,
                        tickets: r.get::<_, i64>(1)?.max(0) as u64,
                        points: r.get::<_, i64>(2)?.max(0) as u64,
                        points_done: r.get::<_, i64>(3)?.max(0) as u64,
                    })
                })
                .map_err(db)?;
            for row in rows {
                all.push(row.map_err(db)?);
            }
        }
        Ok(all)
    }

    fn epic_rollups(&mut self, epic_ids: &[i64]) -> StoreResult<Vec<EpicRollup>> {
        let mut all = Vec::new();
        for chunk in epic_ids.chunks(CHUNK) {
            let sql = format!(
                "SELECT t.epic_id, t.status, count(*), coalesce(sum(t.story_points), 0), \
                 sum(t.status = 'blocked' OR (t.status <> 'done' AND EXISTS ( \
                    SELECT 1 FROM dependencies d JOIN tickets o ON o.id = d.depends_on_id \
                    WHERE d.ticket_id = t.id AND o.deleted_at IS NULL AND o.status <> 'done'))), \
                 max(t.updated_at) \
                 FROM tickets t WHERE t.epic_id IN ({}) AND t.deleted_at IS NULL \
                 GROUP BY t.epic_id, t.status",
                marks(chunk.len())
            );
            let mut stmt = self.tx.prepare_cached(&sql).map_err(db)?;
            let rows = stmt
                .query_map(params_from_iter(chunk), |r| {
                    let status: String = r.get(1)?;
                    Ok(EpicRollup {
                        epic_id: r.get(0)?,
                        status: status_of(&status)?,
                        tickets: r.get::<_, i64>(2)?.max(0) as u64,
                        points: r.get::<_, i64>(3)?.max(0) as u64,
                        blocked: r.get::<_, i64>(4)?.max(0) as u64,
                        last_activity: r.get(5)?,
                    })
                })
                .map_err(db)?;
            for row in rows {
                all.push(row.map_err(db)?);
            }
        }
        Ok(all)
    }

    fn dependency_edges(&mut self, ids: &[i64]) -> StoreResult<Vec<DependencyEdge>> {
        let mut all = Vec::new();
        for chunk in ids.chunks(CHUNK) {
            let sql = format!(
                "SELECT d.ticket_id, o.id, p.key || '-' || o.number, o.title, o.status, \
                    o.kind = 'ticket' AND o.status IN ('todo', 'backlog') \
                    AND o.project_id = (SELECT t.project_id FROM tickets t WHERE t.id = d.ticket_id) \
                    AND NOT EXISTS (SELECT 1 FROM sprints s WHERE s.id = o.sprint_id \
                       AND s.state <> 'completed') \
                 FROM dependencies d JOIN tickets o ON o.id = d.depends_on_id \
                 JOIN projects p ON p.id = o.project_id \
                 WHERE d.ticket_id IN ({}) AND o.deleted_at IS NULL \
                 ORDER BY d.ticket_id, o.id",
                marks(chunk.len())
            );
            let mut stmt = self.tx.prepare_cached(&sql).map_err(db)?;
            let rows = stmt
                .query_map(params_from_iter(chunk), |r| {
                    let status: String = r.get(4)?;
                    Ok(DependencyEdge {
                        ticket_id: r.get(0)?,
                        on_id: r.get(1)?,
                        on_number: r.get(2)?,
                        on_title: r.get(3)?,
                        on_status: status_of(&status)?,
                        on_candidate: r.get(5)?,
                    })
                })
                .map_err(db)?;
            for row in rows {
                all.push(row.map_err(db)?);
            }
        }
        Ok(all)
    }

    fn changes_of(&mut self, ids: &[i64], types: &[&str]) -> StoreResult<Vec<(i64, Change)>> {
        if types.is_empty() {
            return Err(StoreError::Database("changes_of needs a type".into()));
        }
        let mut all = Vec::new();
        for chunk in ids.chunks(CHUNK) {
            let sql = format!(
                "SELECT change_type, old_value, new_value, detail, message, changed_by, \
                 changed_at, ticket_id, id FROM ticket_changes \
                 WHERE ticket_id IN ({}) AND change_type IN ({})",
                marks(chunk.len()),
                marks(types.len())
            );
            let mut values: Vec<rusqlite::types::Value> =
                chunk.iter().map(|id| (*id).into()).collect();
            values.extend(types.iter().map(|t| t.to_string().into()));
            let mut stmt = self.tx.prepare_cached(&sql).map_err(db)?;
            let rows = stmt
                .query_map(params_from_iter(values.iter()), |r| {
                    Ok((r.get::<_, i64>(8)?, r.get::<_, i64>(7)?, change_row(r)?))
                })
                .map_err(db)?;
            for row in rows {
                all.push(row.map_err(db)?);
            }
        }
        // Oldest first across chunks: the order the changes were recorded in.
        all.sort_by_key(|(seq, _, _)| *seq);
        Ok(all.into_iter().map(|(_, id, c)| (id, c)).collect())
    }
    fn begin_keeping(&mut self, sprint_id: i64, days: &[(String, u64)]) -> StoreResult<()> {
        self.tx
            .prepare_cached(
                "INSERT INTO sprint_kept (sprint_id) VALUES (?1) \
                 ON CONFLICT (sprint_id) DO UPDATE SET added_points = 0, removed_points = 0",
            )
            .map_err(db)?
            .execute([sprint_id])
            .map_err(db)?;
        self.tx
            .prepare_cached("DELETE FROM sprint_days WHERE sprint_id = ?1")
            .map_err(db)?
            .execute([sprint_id])
            .map_err(db)?;
        let mut insert = self
            .tx
            .prepare_cached(
                "INSERT INTO sprint_days (sprint_id, day, remaining) VALUES (?1, ?2, ?3)",
            )
            .map_err(db)?;
        for (day, remaining) in days {
            insert
                .execute(params![sprint_id, day, *remaining as i64])
                .map_err(db)?;
        }
        Ok(())
    }

    fn keep_sprint(
        &mut self,
        sprint_id: i64,
        day: &str,
        added: u64,
        removed: u64,
    ) -> StoreResult<()> {
        // One writer at a time (the database's write lock): no lock of its own needed.
        let changed = self
            .tx
            .prepare_cached(
                "UPDATE sprint_kept SET added_points = added_points + ?2, \
                 removed_points = removed_points + ?3 WHERE sprint_id = ?1 \
                 AND EXISTS (SELECT 1 FROM sprints s WHERE s.id = ?1 AND s.state = 'active')",
            )
            .map_err(db)?
            .execute(params![sprint_id, added as i64, removed as i64])
            .map_err(db)?;
        if changed == 0 {
            return Ok(());
        }
        self.tx
            .prepare_cached(
                "INSERT INTO sprint_days (sprint_id, day, remaining) \
                 VALUES (?1, ?2, (SELECT coalesce(sum(t.story_points), 0) FROM tickets t \
                    WHERE t.sprint_id = ?1 AND t.deleted_at IS NULL AND t.status <> 'done')) \
                 ON CONFLICT (sprint_id, day) DO UPDATE SET remaining = excluded.remaining",
            )
            .map_err(db)?
            .execute(params![sprint_id, day])
            .map_err(db)?;
        Ok(())
    }

    fn kept_sprint(&mut self, sprint_id: i64) -> StoreResult<Option<KeptSprint>> {
        let kept: Option<(i64, i64)> = self
            .tx
            .prepare_cached(
                "SELECT added_points, removed_points FROM sprint_kept WHERE sprint_id = ?1",
            )
            .map_err(db)?
            .query_row([sprint_id], |r| Ok((r.get(0)?, r.get(1)?)))
            .optional()
            .map_err(db)?;
        let Some((added, removed)) = kept else {
            return Ok(None);
        };
        let mut stmt = self
            .tx
            .prepare_cached(
                "SELECT day, remaining FROM sprint_days WHERE sprint_id = ?1 ORDER BY day",
            )
            .map_err(db)?;
        let days = stmt
            .query_map([sprint_id], |r| {
                Ok((r.get::<_, String>(0)?, r.get::<_, i64>(1)?.max(0) as u64))
            })
            .map_err(db)?
            .collect::<Result<Vec<_>, _>>()
            .map_err(db)?;
        Ok(Some(KeptSprint {
            added_points: added.max(0) as u64,
            removed_points: removed.max(0) as u64,
            days,
        }))
    }
}
