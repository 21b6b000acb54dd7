//! The replay of a sprint's tickets: each ticket's state (in the sprint or not, live,
//! status, points) at any moment is its state now with every later change undone.

use std::collections::HashMap;

use chrono::{DateTime, Duration, NaiveDate, Utc};
use mcp_common_core::ToolError;

use crate::model::{Change, Status};
use crate::store::{SprintRow, StoreTx, TicketRow, TicketSet};

/// The change types that move a burndown.
pub(super) const REPLAYED: [&str; 4] = [
    "sprint_changed",
    "status_changed",
    "story_points_changed",
    "deleted",
];

/// A ticket's state at one moment.
#[derive(Debug, Clone, Copy, PartialEq)]
struct State {
    member: bool,
    live: bool,
    status: Status,
    points: u64,
}

impl State {
    /// Points it leaves to do in the sprint.
    fn remaining(self) -> u64 {
        if self.member && self.live && self.status != Status::Done {
            self.points
        } else {
            0
        }
    }
}

pub(super) fn time(text: &str) -> Option<DateTime<Utc>> {
    DateTime::parse_from_rfc3339(text)
        .ok()
        .map(|t| t.with_timezone(&Utc))
}

fn points_of(text: Option<&str>) -> u64 {
    text.and_then(|p| p.parse::<u64>().ok()).unwrap_or(0)
}

/// One ticket's history: its state now, and its changes newest first.
struct Timeline<'a> {
    now: State,
    changes: Vec<(DateTime<Utc>, &'a Change)>,
}

impl Timeline<'_> {
    /// The state at `at`: every change after it undone.
    fn at(&self, sprint: &str, at: DateTime<Utc>) -> State {
        let mut s = self.now;
        for (when, c) in &self.changes {
            if *when <= at {
                break;
            }
            undo(&mut s, sprint, c);
        }
        s
    }
}

fn undo(s: &mut State, sprint: &str, c: &Change) {
    match c.change_type.as_str() {
        "sprint_changed" => s.member = c.old_value.as_deref() == Some(sprint),
        "status_changed" => {
            if let Some(status) = c.old_value.as_deref().and_then(Status::parse) {
                s.status = status;
            }
        }
        "story_points_changed" => s.points = points_of(c.old_value.as_deref()),
        "deleted" => s.live = true,
        _ => {}
    }
}

/// The replay of one sprint's tickets.
pub(super) struct Replay<'a> {
    timelines: Vec<Timeline<'a>>,
    /// Every sprint move, oldest first: when, the ticket's index, into (true) or out of it.
    pub(super) moves: Vec<(DateTime<Utc>, usize, bool, &'a Change)>,
    sprint: &'a str,
}

impl<'a> Replay<'a> {
    pub(super) fn new(
        sprint: &'a SprintRow,
        rows: &[TicketRow],
        changes: &'a [(i64, Change)],
    ) -> Self {
        let index: HashMap<i64, usize> = rows.iter().enumerate().map(|(i, r)| (r.id, i)).collect();
        let mut timelines: Vec<Timeline<'a>> = rows
            .iter()
            .map(|r| Timeline {
                now: State {
                    member: r.sprint_id == Some(sprint.id),
                    live: r.deleted_at.is_none(),
                    status: r.status,
                    points: u64::from(r.story_points.unwrap_or(0)),
                },
                changes: Vec::new(),
            })
            .collect();
        let mut moves = Vec::new();
        for (id, c) in changes {
            let (Some(&i), Some(when)) = (index.get(id), time(&c.changed_at)) else {
                continue;
            };
            if let Some(t) = timelines.get_mut(i) {
                t.changes.push((when, c));
            }
            if c.change_type == "sprint_changed" {
                let into = c.new_value.as_deref() == Some(sprint.name.as_str());
                let out = c.old_value.as_deref() == Some(sprint.name.as_str());
                if into != out {
                    moves.push((when, i, into, c));
                }
            }
        }
        for t in &mut timelines {
            // Newest first, by time (stable: the log's order among equal times).
            t.changes.sort_by_key(|c| std::cmp::Reverse(c.0));
        }
        moves.sort_by_key(|m| m.0);
        Self {
            timelines,
            moves,
            sprint: &sprint.name,
        }
    }

    /// Points left to do in the sprint at `at`.
    pub(super) fn remaining(&self, at: DateTime<Utc>) -> u64 {
        self.timelines
            .iter()
            .map(|t| t.at(self.sprint, at).remaining())
            .sum()
    }

    /// Points in the sprint at `at` (done or not).
    pub(super) fn scope(&self, at: DateTime<Utc>) -> u64 {
        self.timelines
            .iter()
            .map(|t| t.at(self.sprint, at))
            .filter(|s| s.member && s.live)
            .map(|s| s.points)
            .sum()
    }

    /// Points moved into (`into`) or out of the sprint after `from` and up to `to`, each
    /// counted at its points just before the move; moves made by the completion are not.
    pub(super) fn moved(&self, into: bool, from: DateTime<Utc>, to: DateTime<Utc>) -> u64 {
        self.moves
            .iter()
            .filter(|(when, _, dir, c)| {
                *dir == into
                    && *when > from
                    && *when <= to
                    && !c
                        .detail
                        .as_deref()
                        .unwrap_or_default()
                        .starts_with("carried over")
            })
            .map(|(when, i, _, _)| {
                self.timelines.get(*i).map_or(0, |t| {
                    t.at(self.sprint, *when - Duration::milliseconds(1)).points
                })
            })
            .sum()
    }
}

/// The remaining points at the end of each of `days` (up to now) as the replay of sprint
/// `row` says (what [`crate::store::PlanningTx::begin_keeping`] starts from).
pub(super) fn replayed_days(
    tx: &mut dyn StoreTx,
    row: &SprintRow,
    days: &[NaiveDate],
) -> Result<Vec<(String, u64)>, ToolError> {
    let members = tx.ticket_rows(TicketSet::EverInSprint(row.id))?;
    let ids: Vec<i64> = members.iter().map(|t| t.id).collect();
    let changes = tx.changes_of(&ids, &REPLAYED)?;
    let replay = Replay::new(row, &members, &changes);
    let now = Utc::now();
    Ok(days
        .iter()
        .map(|d| (d.to_string(), replay.remaining(end_of(*d).min(now))))
        .collect())
}

/// The end of `day` (UTC midnight after it).
pub(super) fn end_of(day: NaiveDate) -> DateTime<Utc> {
    let next = day.succ_opt().unwrap_or(day);
    next.and_hms_opt(0, 0, 0)
        .map_or_else(Utc::now, |t| t.and_utc())
        - Duration::milliseconds(1)
}
