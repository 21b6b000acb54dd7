//! Dependencies: adding and removing them (cycles refused), and the dependency graph.

use std::collections::{HashMap, HashSet, VecDeque};

use mcp_common_core::ToolError;

use super::change_log::{Entry, change, record};
use super::checks::{refs, resolve, ticket_ref};
use super::{DependencyAdded, DependencyGraph, DependencyRemoved, GraphNode, Tracker, now};
use crate::errors;
use crate::model::{Status, TicketRef};
use crate::params::Dependency;
use crate::store::{Store, StoreTx, TicketUpdate};

/// Most tickets a dependency graph walks in each direction.
const GRAPH_LIMIT: usize = 500;

impl<S: Store> Tracker<S> {
    pub fn add_dependency(
        &mut self,
        actor: &str,
        p: Dependency,
    ) -> Result<DependencyAdded, ToolError> {
        let at = now();
        self.store.write(|tx| {
            let ticket = resolve(tx, &p.ticket_id)?;
            let on = resolve(tx, &p.depends_on)?;
            if let Some(cycle) = cycle_path(tx, ticket.id, on.id)? {
                let names = cycle
                    .iter()
                    .map(|id| ticket_ref(tx, *id).map(|r| r.number))
                    .collect::<Result<Vec<_>, _>>()?;
                let message = if ticket.id == on.id {
                    format!("{} cannot depend on itself", ticket.display_number())
                } else {
                    format!(
                        "{} cannot depend on {}: that would create the cycle {}",
                        ticket.display_number(),
                        on.display_number(),
                        names.join(" → ")
                    )
                };
                return Err(ToolError::new(errors::DEPENDENCY_CYCLE, message).with_hint(
                    "Each arrow reads 'depends on'. Remove one of those dependencies first (jility_remove_dependency), or reverse this one.",
                ));
            }
            let inserted = tx.add_dependency(ticket.id, on.id, actor, &at)?;
            if inserted {
                let number = on.display_number();
                record(
                    tx,
                    ticket.id,
                    actor,
                    &at,
                    Entry {
                        new: Some(&number),
                        ..change("dependency_added")
                    },
                )?;
                tx.update_ticket(ticket.id, &TicketUpdate::default(), actor, &at)?;
            }
            let chain = longest_chain(tx, ticket.id)?;
            Ok(DependencyAdded {
                is_blocked: is_blocked(tx, ticket.id)?,
                ticket: ticket.as_ref(),
                depends_on: on.as_ref(),
                chain,
                already_existed: !inserted,
            })
        })
    }

    pub fn remove_dependency(
        &mut self,
        actor: &str,
        p: Dependency,
    ) -> Result<DependencyRemoved, ToolError> {
        let at = now();
        self.store.write(|tx| {
            let ticket = resolve(tx, &p.ticket_id)?;
            let on = resolve(tx, &p.depends_on)?;
            if !tx.remove_dependency(ticket.id, on.id)? {
                return Err(ToolError::not_found(format!(
                    "{} does not depend on {}",
                    ticket.display_number(),
                    on.display_number()
                ))
                .with_hint("See the ticket's dependencies with jility_get_dependency_graph."));
            }
            let number = on.display_number();
            record(
                tx,
                ticket.id,
                actor,
                &at,
                Entry {
                    old: Some(&number),
                    ..change("dependency_removed")
                },
            )?;
            tx.update_ticket(ticket.id, &TicketUpdate::default(), actor, &at)?;
            Ok(DependencyRemoved {
                is_blocked: is_blocked(tx, ticket.id)?,
                ticket: ticket.as_ref(),
                depends_on: on.as_ref(),
            })
        })
    }

    pub fn dependency_graph(&mut self, reference: &str) -> Result<DependencyGraph, ToolError> {
        self.store.read(|tx| {
            let row = resolve(tx, reference)?;
            let dependencies = direct(tx, row.id, true)?;
            let dependents = direct(tx, row.id, false)?;
            let (upstream, cut_up) = walk(tx, row.id, true)?;
            let (downstream, cut_down) = walk(tx, row.id, false)?;
            Ok(DependencyGraph {
                ticket: row.display_number(),
                title: row.title.clone(),
                status: row.status,
                is_blocked: dependencies.iter().any(|d| d.status != Status::Done),
                blocking_count: dependents.len(),
                dependencies,
                dependents,
                upstream,
                downstream,
                truncated: cut_up || cut_down,
            })
        })
    }
}

/// The direct dependencies (`up`) or dependents of a ticket.
pub(super) fn direct(tx: &mut dyn StoreTx, id: i64, up: bool) -> Result<Vec<TicketRef>, ToolError> {
    let ids = if up {
        tx.dependency_ids(id)?
    } else {
        tx.dependent_ids(id)?
    };
    refs(tx, &ids)
}

fn is_blocked(tx: &mut dyn StoreTx, id: i64) -> Result<bool, ToolError> {
    Ok(direct(tx, id, true)?
        .iter()
        .any(|d| d.status != Status::Done))
}

/// Does `to` reach `from` by following "depends on" edges? Returns the path from `from`
/// through `to` back to `from` when it does.
fn cycle_path(tx: &mut dyn StoreTx, from: i64, to: i64) -> Result<Option<Vec<i64>>, ToolError> {
    if from == to {
        return Ok(Some(vec![from, from]));
    }
    let mut came_from: HashMap<i64, i64> = HashMap::new();
    let mut queue = VecDeque::from([to]);
    let mut seen = HashSet::from([to]);
    while let Some(node) = queue.pop_front() {
        for next in tx.dependency_ids(node)? {
            if !seen.insert(next) {
                continue;
            }
            came_from.insert(next, node);
            if next == from {
                // Walk back from `from` to `to`, then prepend `from`.
                let mut path = vec![from];
                let mut at = from;
                while let Some(prev) = came_from.get(&at) {
                    path.push(*prev);
                    at = *prev;
                }
                path.reverse();
                let mut cycle = vec![from];
                cycle.extend(path);
                return Ok(Some(cycle));
            }
            queue.push_back(next);
        }
    }
    Ok(None)
}

/// Breadth-first walk of dependencies (`up`) or dependents, nearest first, capped.
fn walk(tx: &mut dyn StoreTx, start: i64, up: bool) -> Result<(Vec<GraphNode>, bool), ToolError> {
    let mut seen = HashSet::from([start]);
    let mut queue = VecDeque::from([(start, 0usize)]);
    let mut out = Vec::new();
    while let Some((id, depth)) = queue.pop_front() {
        let next = if up {
            tx.dependency_ids(id)?
        } else {
            tx.dependent_ids(id)?
        };
        for n in next {
            if !seen.insert(n) {
                continue;
            }
            if out.len() >= GRAPH_LIMIT {
                return Ok((out, true));
            }
            let r = ticket_ref(tx, n)?;
            out.push(GraphNode {
                number: r.number,
                title: r.title,
                status: r.status,
                depth: depth + 1,
            });
            queue.push_back((n, depth + 1));
        }
    }
    Ok((out, false))
}

/// The longest dependency chain that ends at `id` (bounded walk), first to be done first.
fn longest_chain(tx: &mut dyn StoreTx, id: i64) -> Result<Vec<TicketRef>, ToolError> {
    let mut chain = vec![id];
    let mut visited = HashSet::from([id]);
    let mut at = id;
    // Follow, at each step, the dependency with the deepest own chain; a depth-limited
    // greedy walk keeps this cheap on large graphs.
    for _ in 0..20 {
        let deps = tx.dependency_ids(at)?;
        let mut best: Option<(usize, i64)> = None;
        for d in deps {
            if visited.contains(&d) {
                continue;
            }
            let depth = depth_of(tx, d, 10, &mut HashSet::new())?;
            if best.is_none_or(|(b, _)| depth > b) {
                best = Some((depth, d));
            }
        }
        let Some((_, next)) = best else { break };
        visited.insert(next);
        chain.push(next);
        at = next;
    }
    chain.reverse();
    refs(tx, &chain)
}

/// How deep the dependencies of `id` go, counting at most `budget` steps.
fn depth_of(
    tx: &mut dyn StoreTx,
    id: i64,
    budget: usize,
    seen: &mut HashSet<i64>,
) -> Result<usize, ToolError> {
    if budget == 0 || !seen.insert(id) {
        return Ok(0);
    }
    let mut best = 0;
    for d in tx.dependency_ids(id)? {
        best = best.max(1 + depth_of(tx, d, budget - 1, seen)?);
    }
    Ok(best)
}
