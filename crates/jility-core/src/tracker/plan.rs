//! The planner: which backlog and todo tickets fit a sprint, in dependency order. It reads
//! and proposes; it changes nothing (applying a plan is adding its tickets).

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap, HashSet};

use mcp_common_core::ToolError;

use super::sprint_stats::velocity;
use super::sprints::{conflict, find_sprint, sprint_now};
use super::{LeftOut, Proposed, SprintPlan, Tracker};
use crate::model::Status;
use crate::params::SprintName;
use crate::store::{DependencyEdge, SprintState, Store, TicketRow, TicketSet};

/// Most candidates one plan considers (todo first, then oldest first).
pub const MAX_CANDIDATES: usize = 10_000;
/// Most left-out tickets an answer names (all are counted).
const LEFT_OUT_SHOWN: usize = 50;

/// Why a candidate was left out.
enum Why {
    Unestimated,
    OverCapacity { needs: u8, left: u64 },
}

impl<S: Store> Tracker<S> {
    pub fn plan_sprint(&mut self, p: &SprintName) -> Result<SprintPlan, ToolError> {
        self.store.read(|tx| {
            let project = tx.default_project()?;
            let sprint = find_sprint(tx, project.id, &p.sprint)?;
            if sprint.state == SprintState::Completed {
                return Err(conflict(
                    format!("Sprint '{}' is completed: there is nothing to plan", sprint.name),
                    "Plan a planned or the active sprint.",
                ));
            }
            let (capacity, source) = match sprint.capacity_points {
                Some(c) => (c.max(0) as u64, "sprint"),
                None => match velocity(&tx.sprints(project.id)?).mean {
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
            let candidates = tx.ticket_rows(TicketSet::Candidates(project.id, MAX_CANDIDATES))?;
            let ids: Vec<i64> = candidates.iter().map(|t| t.id).collect();
            let edges = tx.dependency_edges(&ids)?;
            let plan = propose(&candidates, &edges, &in_sprint, capacity.saturating_sub(planned));
            let proposed_points = plan
                .proposed
                .iter()
                .map(|p| u64::from(p.story_points))
                .sum();
            Ok(SprintPlan {
                sprint: sprint_now(tx, &sprint)?,
                capacity_points: capacity,
                capacity_source: source.to_string(),
                planned_points: planned,
                proposed_points,
                tickets: plan.proposed.iter().map(|p| p.number.clone()).collect(),
                proposed: plan.proposed,
                left_out_total: plan.left_out.len() as u64,
                left_out: plan.left_out.into_iter().take(LEFT_OUT_SHOWN).collect(),
                candidates: candidates.len() as u64,
            })
        })
    }
}

struct Plan {
    proposed: Vec<Proposed>,
    left_out: Vec<LeftOut>,
}

/// Rank: todo before backlog, then oldest (lowest id) first.
fn rank(row: &TicketRow) -> (u8, i64) {
    (u8::from(row.status != Status::Todo), row.id)
}

/// Propose `candidates` into `room` points: a ticket is ready once every live prerequisite is
/// done, in the sprint already, or proposed before it; ready tickets are taken by rank while
/// they fit.
fn propose(
    candidates: &[TicketRow],
    edges: &[DependencyEdge],
    in_sprint: &HashSet<i64>,
    room: u64,
) -> Plan {
    let index: HashMap<i64, usize> = candidates
        .iter()
        .enumerate()
        .map(|(i, t)| (t.id, i))
        .collect();
    // For each candidate: the prerequisites that still hold it (among the candidates, or
    // outside them and not done), and the candidates waiting on it.
    let mut waiting_on: Vec<Vec<i64>> = vec![Vec::new(); candidates.len()];
    let mut outside: Vec<Vec<String>> = vec![Vec::new(); candidates.len()];
    let mut dependents: HashMap<i64, Vec<usize>> = HashMap::new();
    for e in edges {
        let Some(&i) = index.get(&e.ticket_id) else {
            continue;
        };
        if e.on_status == Status::Done || in_sprint.contains(&e.on_id) {
            continue;
        }
        if index.contains_key(&e.on_id) {
            if let Some(w) = waiting_on.get_mut(i) {
                w.push(e.on_id);
            }
            dependents.entry(e.on_id).or_default().push(i);
        } else if let Some(o) = outside.get_mut(i) {
            o.push(format!("{} ({})", e.on_number, e.on_status.as_str()));
        }
    }
    let mut heap: BinaryHeap<Reverse<((u8, i64), usize)>> = BinaryHeap::new();
    for (i, t) in candidates.iter().enumerate() {
        if waiting_on.get(i).is_some_and(Vec::is_empty) && outside.get(i).is_some_and(Vec::is_empty)
        {
            heap.push(Reverse((rank(t), i)));
        }
    }
    let mut room = room;
    let mut taken: HashSet<i64> = HashSet::new();
    let mut why: HashMap<usize, Why> = HashMap::new();
    let mut proposed = Vec::new();
    while let Some(Reverse((_, i))) = heap.pop() {
        let Some(t) = candidates.get(i) else { continue };
        let Some(points) = t.story_points else {
            why.insert(i, Why::Unestimated);
            continue;
        };
        if u64::from(points) > room {
            why.insert(
                i,
                Why::OverCapacity {
                    needs: points,
                    left: room,
                },
            );
            continue;
        }
        room -= u64::from(points);
        taken.insert(t.id);
        let after: Vec<String> = edges
            .iter()
            .filter(|e| e.ticket_id == t.id && taken.contains(&e.on_id) && e.on_id != t.id)
            .map(|e| e.on_number.clone())
            .collect();
        let reason = match (t.status, after.is_empty()) {
            (status, true) => format!("{}, ready (no prerequisite left)", status.as_str()),
            (status, false) => format!(
                "{}, after {} (proposed before it)",
                status.as_str(),
                after.join(", ")
            ),
        };
        proposed.push(Proposed {
            number: t.display_number(),
            title: t.title.clone(),
            status: t.status,
            story_points: points,
            reason,
        });
        for &d in dependents.get(&t.id).map(Vec::as_slice).unwrap_or_default() {
            if let Some(w) = waiting_on.get_mut(d) {
                w.retain(|on| *on != t.id);
                if w.is_empty()
                    && outside.get(d).is_some_and(Vec::is_empty)
                    && let Some(dt) = candidates.get(d)
                {
                    heap.push(Reverse((rank(dt), d)));
                }
            }
        }
    }
    let number_of: HashMap<i64, String> = candidates
        .iter()
        .map(|t| (t.id, t.display_number()))
        .collect();
    let mut left_out = Vec::new();
    let mut order: Vec<usize> = (0..candidates.len())
        .filter(|i| candidates.get(*i).is_some_and(|t| !taken.contains(&t.id)))
        .collect();
    order.sort_by_key(|i| candidates.get(*i).map(rank));
    for i in order {
        let Some(t) = candidates.get(i) else { continue };
        let reason = match why.remove(&i) {
            Some(Why::Unestimated) => "no story points: estimate it first".to_string(),
            Some(Why::OverCapacity { needs, left }) => {
                format!("over capacity: needs {needs} points, {left} left")
            }
            None => {
                let mut on: Vec<String> = outside.get(i).cloned().unwrap_or_default();
                on.extend(
                    waiting_on
                        .get(i)
                        .into_iter()
                        .flatten()
                        .filter_map(|id| number_of.get(id))
                        .map(|n| format!("{n} (not proposed)")),
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
    Plan { proposed, left_out }
}
