//! The planner: which backlog and todo tickets fit a sprint, in dependency order. It reads
//! and proposes; it changes nothing (applying a plan is adding its tickets).
//!
//! Candidates are read in rank order (todo first, then oldest first) a chunk at a time, with
//! their dependencies, and the planner stops reading once the sprint is full and the first
//! left-out tickets are known: a proposal of ten tickets reads a hundred rows, not the whole
//! backlog. The result is the one reading every candidate at once would give (tested against
//! that reference on random graphs below), because every ticket not read yet ranks after
//! every ticket read.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap, HashSet};

use mcp_common_core::ToolError;

use super::sprint_stats::velocity;
use super::sprints::{conflict, pick_sprint, rollup, sprint_out};
use super::{LeftOut, Proposed, SprintPlan, Tracker};
use crate::model::Status;
use crate::params::SprintName;
use crate::store::{CandidateRank, DependencyEdge, SprintState, Store, TicketRow, TicketSet};

/// Most candidates one plan considers (todo first, then oldest first).
pub const MAX_CANDIDATES: usize = 10_000;
/// Most left-out tickets an answer names.
const LEFT_OUT_SHOWN: usize = 50;
/// Candidates read at a time: a sprint is usually full within the first chunk.
const CHUNK: usize = 100;

impl<S: Store> Tracker<S> {
    pub fn plan_sprint(&mut self, p: &SprintName) -> Result<SprintPlan, ToolError> {
        self.store.read(|tx| {
            let project = tx.default_project()?;
            let sprints = tx.sprints(project.id)?;
            let sprint = pick_sprint(&sprints, &p.sprint)?;
            if sprint.state == SprintState::Completed {
                return Err(conflict(
                    format!("Sprint '{}' is completed: there is nothing to plan", sprint.name),
                    "Plan a planned or the active sprint.",
                ));
            }
            let (capacity, source) = match sprint.capacity_points {
                Some(c) => (c.max(0) as u64, "sprint"),
                None => match velocity(&sprints).mean {
                    Some(mean) => (mean.floor() as u64, "velocity"),
                    None => {
                        return Err(super::checks::invalid(
                            format!(
                                "Sprint '{}' has no capacity and the project no velocity yet",
                                sprint.name
                            ),
                            "Give the sprint a capacity (capacity_points), or complete a sprint first so that its velocity can stand in.",
                        ));
                    }
                },
            };
            let members = tx.ticket_rows(TicketSet::Sprint(sprint.id))?;
            let planned: u64 = members
                .iter()
                .map(|t| u64::from(t.story_points.unwrap_or(0)))
                .sum();
            let in_sprint: HashSet<i64> = members.iter().map(|t| t.id).collect();
            let plan = propose(
                capacity.saturating_sub(planned),
                &in_sprint,
                CHUNK,
                |after, limit| {
                    let rows = tx.ticket_rows(TicketSet::Candidates {
                        project: project.id,
                        after,
                        limit,
                    })?;
                    let ids: Vec<i64> = rows.iter().map(|t| t.id).collect();
                    let edges = tx.dependency_edges(&ids)?;
                    Ok::<_, ToolError>((rows, edges))
                },
            )?;
            let proposed_points = plan
                .proposed
                .iter()
                .map(|p| u64::from(p.story_points))
                .sum();
            Ok(SprintPlan {
                sprint: sprint_out(&sprint, rollup(sprint.id, &members)),
                capacity_points: capacity,
                capacity_source: source.to_string(),
                planned_points: planned,
                proposed_points,
                tickets: plan.proposed.iter().map(|p| p.number.clone()).collect(),
                proposed: plan.proposed,
                left_out_total: plan.left_out_total,
                left_out: plan.left_out,
                candidates: plan.considered,
                candidates_exact: plan.all_read,
            })
        })
    }
}

struct Plan {
    proposed: Vec<Proposed>,
    /// The first left-out tickets (at most [`LEFT_OUT_SHOWN`]), in rank order.
    left_out: Vec<LeftOut>,
    /// Candidates read, and of them how many were left out.
    considered: u64,
    left_out_total: u64,
    /// Whether every candidate was read (else more wait beyond `considered`).
    all_read: bool,
}

/// Why a candidate was left out.
enum Why {
    Unestimated,
    OverCapacity { needs: u8, left: u64 },
}

/// Why a ticket that does not fit was left out.
fn over_capacity(needs: u8, left: u64) -> String {
    let unit = if needs == 1 { "point" } else { "points" };
    format!("over capacity: needs {needs} {unit}, {left} left")
}

fn rank(row: &TicketRow) -> CandidateRank {
    CandidateRank {
        backlog: row.status != Status::Todo,
        id: row.id,
    }
}

/// Propose candidates into `room` points: a ticket is ready once every live prerequisite is
/// done, in the sprint already, or proposed before it; ready tickets are taken by rank while
/// they fit. `read(after, limit)` gives the next candidates in rank order with their
/// dependencies, `chunk` of them at a time.
fn propose<E>(
    room: u64,
    in_sprint: &HashSet<i64>,
    chunk: usize,
    mut read: impl FnMut(
        Option<CandidateRank>,
        usize,
    ) -> Result<(Vec<TicketRow>, Vec<DependencyEdge>), E>,
) -> Result<Plan, E> {
    let mut planner = Planner::new(room, in_sprint);
    let mut all_read = false;
    loop {
        planner.take();
        let full = planner.room == 0 && planner.left_out_count() >= LEFT_OUT_SHOWN;
        if all_read || full || planner.rows.len() >= MAX_CANDIDATES {
            break;
        }
        let limit = chunk.max(1).min(MAX_CANDIDATES - planner.rows.len());
        let (rows, edges) = read(planner.rows.last().map(rank), limit)?;
        all_read = rows.len() < limit;
        planner.feed(rows, &edges);
    }
    Ok(planner.finish(all_read))
}

/// The planner's state as it reads candidates.
struct Planner<'a> {
    in_sprint: &'a HashSet<i64>,
    room: u64,
    /// The candidates read, in rank order, and where each id is among them.
    rows: Vec<TicketRow>,
    index: HashMap<i64, usize>,
    /// For each row: its prerequisites among the candidates (id, number), how many of them
    /// are not taken yet, and the prerequisites outside the candidates that hold it.
    needs: Vec<Vec<(i64, String)>>,
    waiting: Vec<usize>,
    outside: Vec<Vec<String>>,
    /// The rows waiting on a candidate (read or not yet).
    dependents: HashMap<i64, Vec<usize>>,
    ready: BinaryHeap<Reverse<(CandidateRank, usize)>>,
    taken: HashSet<i64>,
    why: HashMap<usize, Why>,
    proposed: Vec<Proposed>,
}

impl<'a> Planner<'a> {
    fn new(room: u64, in_sprint: &'a HashSet<i64>) -> Self {
        Planner {
            in_sprint,
            room,
            rows: Vec::new(),
            index: HashMap::new(),
            needs: Vec::new(),
            waiting: Vec::new(),
            outside: Vec::new(),
            dependents: HashMap::new(),
            ready: BinaryHeap::new(),
            taken: HashSet::new(),
            why: HashMap::new(),
            proposed: Vec::new(),
        }
    }

    fn left_out_count(&self) -> usize {
        self.rows.len() - self.taken.len()
    }

    /// Add the next candidates (ranked after every row read) and their dependencies.
    fn feed(&mut self, rows: Vec<TicketRow>, edges: &[DependencyEdge]) {
        let first = self.rows.len();
        for row in rows {
            self.index.insert(row.id, self.rows.len());
            self.rows.push(row);
            self.needs.push(Vec::new());
            self.waiting.push(0);
            self.outside.push(Vec::new());
        }
        for e in edges {
            let Some(&i) = self.index.get(&e.ticket_id) else {
                continue;
            };
            if i < first || e.on_status == Status::Done || self.in_sprint.contains(&e.on_id) {
                continue;
            }
            if e.on_candidate {
                if let Some(n) = self.needs.get_mut(i) {
                    n.push((e.on_id, e.on_number.clone()));
                }
                if !self.taken.contains(&e.on_id) {
                    if let Some(w) = self.waiting.get_mut(i) {
                        *w += 1;
                    }
                    self.dependents.entry(e.on_id).or_default().push(i);
                }
            } else if let Some(o) = self.outside.get_mut(i) {
                o.push(format!("{} ({})", e.on_number, e.on_status.as_str()));
            }
        }
        for i in first..self.rows.len() {
            self.push_if_ready(i);
        }
    }

    fn is_ready(&self, i: usize) -> bool {
        self.waiting.get(i) == Some(&0) && self.outside.get(i).is_some_and(Vec::is_empty)
    }

    fn push_if_ready(&mut self, i: usize) {
        if self.is_ready(i)
            && let Some(t) = self.rows.get(i)
        {
            self.ready.push(Reverse((rank(t), i)));
        }
    }

    /// Take ready tickets by rank while there is room. Every ticket not read yet ranks
    /// after those read, so the best ready ticket read is the best of all.
    fn take(&mut self) {
        while self.room > 0 {
            let Some(Reverse((_, i))) = self.ready.pop() else {
                return;
            };
            let Some(t) = self.rows.get(i) else { continue };
            let Some(points) = t.story_points else {
                self.why.insert(i, Why::Unestimated);
                continue;
            };
            if u64::from(points) > self.room {
                self.why.insert(
                    i,
                    Why::OverCapacity {
                        needs: points,
                        left: self.room,
                    },
                );
                continue;
            }
            self.room -= u64::from(points);
            let id = t.id;
            let after: Vec<&str> = self
                .needs
                .get(i)
                .into_iter()
                .flatten()
                .filter(|(on, _)| *on != id)
                .map(|(_, n)| n.as_str())
                .collect();
            let reason = if after.is_empty() {
                format!("{}, ready (no prerequisite left)", t.status.as_str())
            } else {
                format!(
                    "{}, after {} (proposed before it)",
                    t.status.as_str(),
                    after.join(", ")
                )
            };
            self.proposed.push(Proposed {
                number: t.display_number(),
                title: t.title.clone(),
                status: t.status,
                story_points: points,
                reason,
            });
            self.taken.insert(id);
            for d in self.dependents.remove(&id).unwrap_or_default() {
                if let Some(w) = self.waiting.get_mut(d) {
                    *w = w.saturating_sub(1);
                }
                self.push_if_ready(d);
            }
        }
    }

    /// The plan: nothing more is taken, so each ticket left out is over capacity or
    /// unestimated if it was (or would be) ready, else blocked.
    fn finish(mut self, all_read: bool) -> Plan {
        let mut left_out = Vec::new();
        for (i, t) in self.rows.iter().enumerate() {
            if left_out.len() == LEFT_OUT_SHOWN {
                break;
            }
            if self.taken.contains(&t.id) {
                continue;
            }
            let why = self.why.remove(&i).or_else(|| {
                self.is_ready(i).then_some(match t.story_points {
                    None => Why::Unestimated,
                    Some(needs) => Why::OverCapacity {
                        needs,
                        left: self.room,
                    },
                })
            });
            let reason = match why {
                Some(Why::Unestimated) => "no story points: estimate it first".to_string(),
                Some(Why::OverCapacity { needs, left }) => over_capacity(needs, left),
                None => {
                    let mut on: Vec<String> = self.outside.get(i).cloned().unwrap_or_default();
                    on.extend(
                        self.needs
                            .get(i)
                            .into_iter()
                            .flatten()
                            .filter(|(id, _)| !self.taken.contains(id))
                            .map(|(_, n)| format!("{n} (not proposed)")),
                    );
                    format!("blocked by {}", on.join(", "))
                }
            };
            left_out.push(LeftOut {
                number: t.display_number(),
                title: t.title.clone(),
                story_points: t.story_points,
                reason,
            });
        }
        Plan {
            considered: self.rows.len() as u64,
            left_out_total: self.left_out_count() as u64,
            proposed: self.proposed,
            left_out,
            all_read,
        }
    }
}

#[cfg(test)]
#[path = "plan_tests.rs"]
mod tests;
