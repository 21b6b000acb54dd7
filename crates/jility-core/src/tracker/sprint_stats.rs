//! A sprint's statistics, replayed from its tickets' change logs (`replay`): the committed
//! scope, what was added and removed after the start, the burndown day by day, the velocity
//! of the last sprints and a forecast.
//!
//! The active sprint's figures are also kept as its tickets change (`keep`: the points moved
//! in and out since its start, each day's remaining points), seeded by the replay when it
//! starts; its statistics read those instead of replaying thousands of changes.

use chrono::{Duration, NaiveDate, Utc};
use mcp_common_core::ToolError;

use super::replay::{REPLAYED, Replay, end_of, time};
use super::sprints::{date, pick_sprint, rollup, sprint_out, today};
use super::{BurndownDay, Forecast, SprintStats, SprintVelocity, Tracker, Velocity};
use crate::model::Status;
use crate::params::SprintName;
use crate::store::{KeptSprint, SprintRow, SprintState, Store, TicketRow, TicketSet};

/// How many completed sprints the velocity averages.
const VELOCITY_SPRINTS: usize = 3;

/// The kept remaining points at the end of `day`: its own figure, else the last day's before
/// it that has one (nothing changed since), else none.
fn kept_on(kept: &KeptSprint, day: NaiveDate) -> u64 {
    let day = day.to_string();
    kept.days
        .iter()
        .rev()
        .find(|(d, _)| d.as_str() <= day.as_str())
        .map_or(0, |(_, remaining)| *remaining)
}

fn one_decimal(x: f64) -> f64 {
    (x * 10.0).round() / 10.0
}

/// The ideal remaining points at the end of day `i` (from 0) of a sprint of `days` days.
fn ideal(committed: u64, i: i64, days: i64) -> f64 {
    if days <= 0 {
        return 0.0;
    }
    one_decimal(committed as f64 * ((days - i - 1).max(0) as f64) / days as f64)
}

impl<S: Store> Tracker<S> {
    pub fn sprint_stats(&mut self, p: &SprintName) -> Result<SprintStats, ToolError> {
        self.stats(p, true)
    }

    /// [`Self::sprint_stats`] replayed from the change log even when the sprint's figures
    /// are kept: what the store suite compares the kept ones with.
    #[cfg(feature = "suite")]
    pub fn sprint_stats_replayed(&mut self, p: &SprintName) -> Result<SprintStats, ToolError> {
        self.stats(p, false)
    }

    fn stats(&mut self, p: &SprintName, use_kept: bool) -> Result<SprintStats, ToolError> {
        let today = today();
        self.store.read(|tx| {
            let project = tx.default_project()?;
            // The project's sprints, read once: the one asked for, and the velocity.
            let sprints = tx.sprints(project.id)?;
            let row = pick_sprint(&sprints, &p.sprint)?;
            // The active sprint's figures are kept as its tickets change (equal to the
            // replay's: tests prove it); any other sprint, or one started before they were
            // kept, is replayed from its tickets' change log.
            let kept = match row.state {
                SprintState::Active if use_kept => tx.kept_sprint(row.id)?,
                _ => None,
            };
            let (members, changes) = match kept {
                Some(_) => (tx.ticket_rows(TicketSet::Sprint(row.id))?, Vec::new()),
                None => {
                    let members = tx.ticket_rows(TicketSet::EverInSprint(row.id))?;
                    let ids: Vec<i64> = members.iter().map(|t| t.id).collect();
                    let changes = tx.changes_of(&ids, &REPLAYED)?;
                    (members, changes)
                }
            };
            let replay = Replay::new(&row, &members, &changes);
            let starts = date("starts_on", &row.starts_on)?;
            let ends = date("ends_on", &row.ends_on)?;
            let now = Utc::now();
            let started = row.started_at.as_deref().and_then(time);
            let completed = row.completed_at.as_deref().and_then(time);
            // A completed sprint ends just before its completion moved its unfinished
            // tickets out.
            let until = completed.map_or(now, |c| c - Duration::milliseconds(1));
            // Committed: as recorded at the start (the replay agrees; tests prove it).
            let committed = match (row.committed_points, started) {
                (Some(points), _) => points.max(0) as u64,
                (None, Some(at)) => replay.scope(at),
                (None, None) => 0,
            };
            let (added, removed) = match (&kept, started) {
                (Some(k), _) => (k.added_points, k.removed_points),
                (None, Some(at)) => (
                    replay.moved(true, at, until),
                    replay.moved(false, at, until),
                ),
                (None, None) => (0, 0),
            };
            let last_day = completed.map(|c| c.date_naive()).unwrap_or(today).min(ends);
            let days = (ends - starts).num_days() + 1;
            let burndown: Vec<BurndownDay> = if started.is_none() {
                Vec::new()
            } else {
                starts
                    .iter_days()
                    .take_while(|d| *d <= last_day)
                    .enumerate()
                    .map(|(i, d)| BurndownDay {
                        date: d.to_string(),
                        remaining: match &kept {
                            Some(k) => kept_on(k, d),
                            None => replay.remaining(end_of(d).min(until)),
                        },
                        ideal: ideal(committed, i as i64, days),
                    })
                    .collect()
            };
            let open: Vec<&TicketRow> = members
                .iter()
                .filter(|t| {
                    t.deleted_at.is_none()
                        && t.sprint_id == Some(row.id)
                        && t.status != Status::Done
                })
                .collect();
            let (completed_points, remaining_points, carry_over, carry_over_points) =
                if row.state == SprintState::Completed {
                    // As it was completed: the tickets that left with the completion.
                    let carried: Vec<&TicketRow> = replay
                        .moves
                        .iter()
                        .filter(|(_, _, into, c)| {
                            !*into
                                && c.detail
                                    .as_deref()
                                    .unwrap_or_default()
                                    .starts_with("carried over")
                        })
                        .filter_map(|(_, i, _, _)| members.get(*i))
                        .collect();
                    let remaining = replay.remaining(until);
                    (
                        row.completed_points.unwrap_or(0).max(0) as u64,
                        remaining,
                        carried.iter().map(|t| t.display_number()).collect(),
                        remaining,
                    )
                } else {
                    let remaining: u64 = open
                        .iter()
                        .map(|t| u64::from(t.story_points.unwrap_or(0)))
                        .sum();
                    let done: u64 = members
                        .iter()
                        .filter(|t| {
                            t.deleted_at.is_none()
                                && t.sprint_id == Some(row.id)
                                && t.status == Status::Done
                        })
                        .map(|t| u64::from(t.story_points.unwrap_or(0)))
                        .sum();
                    (
                        done,
                        remaining,
                        open.iter().map(|t| t.display_number()).collect(),
                        remaining,
                    )
                };
            let velocity = velocity(&sprints);
            let forecast = (row.state == SprintState::Active).then(|| {
                let elapsed = ((today - starts).num_days() + 1).max(1);
                let pace = completed_points as f64 / elapsed as f64;
                let end = (pace > 0.0).then(|| {
                    let more = (remaining_points as f64 / pace).ceil() as i64;
                    today + Duration::days(more)
                });
                Forecast {
                    pace: one_decimal(pace),
                    on_track: remaining_points == 0 || end.is_some_and(|e| e <= ends),
                    ends_on: end.map(|e| e.to_string()),
                }
            });
            Ok(SprintStats {
                sprint: sprint_out(&row, rollup(row.id, &members)),
                committed_points: committed,
                completed_points,
                added_points: added,
                removed_points: removed,
                remaining_points,
                days_left: if row.state == SprintState::Completed {
                    0
                } else {
                    (ends - today).num_days().max(0)
                },
                burndown,
                velocity,
                carry_over,
                carry_over_points,
                forecast,
            })
        })
    }
}

/// The velocity of the last completed sprints, newest first.
pub(super) fn velocity(sprints: &[SprintRow]) -> Velocity {
    let mut done: Vec<&SprintRow> = sprints
        .iter()
        .filter(|s| s.state == SprintState::Completed)
        .collect();
    done.sort_by(|a, b| (&b.completed_at, b.number).cmp(&(&a.completed_at, a.number)));
    let sprints: Vec<SprintVelocity> = done
        .into_iter()
        .take(VELOCITY_SPRINTS)
        .map(|s| SprintVelocity {
            name: s.name.clone(),
            completed_points: s.completed_points.unwrap_or(0),
        })
        .collect();
    let mean = (!sprints.is_empty()).then(|| {
        one_decimal(
            sprints
                .iter()
                .map(|s| s.completed_points as f64)
                .sum::<f64>()
                / sprints.len() as f64,
        )
    });
    Velocity { sprints, mean }
}
