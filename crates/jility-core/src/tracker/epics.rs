//! Epics: their progress (tickets by status, points, blocked ones) and the critical path
//! through the dependencies among their unfinished tickets.

use std::collections::{BTreeMap, HashMap};

use mcp_common_core::{Limit, Page, Paged, ToolError};

use super::checks::{not_an_epic, page_size, parse_status, resolve};
use super::tickets::full_ticket;
use super::{
    CriticalPath, EpicDetail, EpicList, EpicProgress, EpicSummary, LIST_LIMIT, PathStep,
    StatusCount, Tracker,
};
use crate::model::{Kind, Status, TicketRef};
use crate::params::{GetEpic, ListEpics};
use crate::store::{EpicRollup, ListFilter, Store, StoreTx, TicketRow, TicketSet};

pub const EPICS_LIMIT: Limit = Limit::new(20, 100);
pub const EPICS_TOOL: &str = "jility_list_epics";
pub const EPIC_TOOL: &str = "jility_get_epic";

impl<S: Store> Tracker<S> {
    pub fn list_epics(&mut self, p: &ListEpics) -> Result<Paged<EpicList>, ToolError> {
        let limit = page_size(EPICS_LIMIT, p.limit)?;
        let mut statuses = Vec::new();
        for status in &p.status {
            let status = parse_status(status)?;
            if !statuses.contains(&status) {
                statuses.push(status);
            }
        }
        let mut shape: Vec<&str> = statuses.iter().map(|s| s.as_str()).collect();
        shape.sort_unstable();
        let cursors = self.cursor_key.bind(EPICS_TOOL, &shape);
        let after: Option<i64> = cursors.start(p.cursor.as_deref())?;
        self.store.read(|tx| {
            let (mut rows, total) = tx.epics(&statuses, after, limit + 1)?;
            let next = if rows.len() > limit {
                rows.truncate(limit);
                rows.last().map(|r| cursors.encode(&r.id))
            } else {
                None
            };
            let ids: Vec<i64> = rows.iter().map(|r| r.id).collect();
            let mut rollups = by_epic(tx.epic_rollups(&ids)?);
            let epics = rows
                .into_iter()
                .map(|row| EpicSummary {
                    number: row.display_number(),
                    title: row.title.clone(),
                    status: row.status,
                    progress: progress(&row, rollups.remove(&row.id).unwrap_or_default()),
                })
                .collect();
            let page = if total > crate::store::COUNT_CAP {
                Page::at_least(crate::store::COUNT_CAP as u64, next)
            } else {
                Page::new(total as u64, next)
            };
            Ok(Paged {
                data: EpicList { epics },
                page,
            })
        })
    }

    pub fn get_epic(&mut self, p: &GetEpic) -> Result<Paged<EpicDetail>, ToolError> {
        let limit = page_size(LIST_LIMIT, p.limit)?;
        let key = self.cursor_key.clone();
        self.store.read(|tx| {
            let epic = resolve(tx, &p.epic_id)?;
            if epic.kind != Kind::Epic {
                return Err(not_an_epic(&epic));
            }
            let cursors = key.bind(EPIC_TOOL, &epic.id);
            let after: Option<i64> = cursors.start(p.cursor.as_deref())?;
            let rollup = by_epic(tx.epic_rollups(&[epic.id])?)
                .remove(&epic.id)
                .unwrap_or_default();
            let page = tx.list(
                &ListFilter {
                    epic_id: Some(epic.id),
                    ..Default::default()
                },
                after,
                limit,
            )?;
            let mut tickets = page.items;
            // By status, active work first; newest first within a status.
            tickets.sort_by_key(|t| Status::GROUP_ORDER.iter().position(|s| *s == t.status));
            let critical_path = critical_path(tx, epic.id)?;
            let next = page.next_after.map(|after| cursors.encode(&after));
            Ok(Paged {
                data: EpicDetail {
                    progress: progress(&epic, rollup),
                    epic: full_ticket(tx, &epic)?,
                    tickets,
                    critical_path,
                },
                page: if page.total_exact {
                    Page::new(page.total as u64, next)
                } else {
                    Page::at_least(page.total as u64, next)
                },
            })
        })
    }
}

fn by_epic(rollups: Vec<EpicRollup>) -> HashMap<i64, Vec<EpicRollup>> {
    let mut all: HashMap<i64, Vec<EpicRollup>> = HashMap::new();
    for r in rollups {
        all.entry(r.epic_id).or_default().push(r);
    }
    all
}

/// Whole percent of `part` in `whole`, rounded down (0 when there is nothing).
pub(super) fn percent(part: u64, whole: u64) -> u8 {
    part.saturating_mul(100)
        .checked_div(whole)
        .map_or(0, |p| p.min(100) as u8)
}

/// An epic's progress from its roll-ups (its last activity counts the epic's own).
fn progress(epic: &TicketRow, rollups: Vec<EpicRollup>) -> EpicProgress {
    let mut by_status: BTreeMap<usize, StatusCount> = BTreeMap::new();
    let (mut tickets, mut points, mut blocked) = (0, 0, 0);
    let mut last = Some(epic.updated_at.clone());
    for r in rollups {
        tickets += r.tickets;
        points += r.points;
        blocked += r.blocked;
        if r.last_activity > last {
            last = r.last_activity;
        }
        let order = Status::GROUP_ORDER
            .iter()
            .position(|s| *s == r.status)
            .unwrap_or(0);
        by_status.insert(
            order,
            StatusCount {
                status: r.status,
                tickets: r.tickets,
                points: r.points,
            },
        );
    }
    let done = by_status
        .values()
        .find(|c| c.status == Status::Done)
        .map_or((0, 0), |c| (c.tickets, c.points));
    EpicProgress {
        tickets,
        tickets_done: done.0,
        points_total: points,
        points_done: done.1,
        percent_done_points: percent(done.1, points),
        percent_done_count: percent(done.0, tickets),
        blocked,
        by_status: by_status.into_values().collect(),
        last_activity: last,
    }
}

/// The chain with the most remaining points through the dependencies among the epic's
/// unfinished tickets.
fn critical_path(tx: &mut dyn StoreTx, epic_id: i64) -> Result<CriticalPath, ToolError> {
    let open: Vec<TicketRow> = tx
        .ticket_rows(TicketSet::Epic(epic_id))?
        .into_iter()
        .filter(|t| t.status != Status::Done)
        .collect();
    let ids: Vec<i64> = open.iter().map(|t| t.id).collect();
    let edges = tx.dependency_edges(&ids)?;
    let rows: HashMap<i64, &TicketRow> = open.iter().map(|t| (t.id, t)).collect();
    // Prerequisites among the open tickets, and every prerequisite not done.
    let mut needs: HashMap<i64, Vec<i64>> = HashMap::new();
    let mut holds: HashMap<i64, Vec<TicketRef>> = HashMap::new();
    for e in &edges {
        if e.on_status == Status::Done {
            continue;
        }
        holds.entry(e.ticket_id).or_default().push(TicketRef {
            number: e.on_number.clone(),
            title: e.on_title.clone(),
            status: e.on_status,
        });
        if rows.contains_key(&e.on_id) {
            needs.entry(e.ticket_id).or_default().push(e.on_id);
        }
    }
    // Longest chain ending at each ticket (dependencies form no cycle), memoised; the
    // tickets in id order so that ties go to the lower numbers.
    let mut best: HashMap<i64, (u64, usize, Option<i64>)> = HashMap::new();
    for id in &ids {
        chain(*id, &rows, &needs, &mut best);
    }
    let end = ids.iter().copied().max_by(|a, b| {
        let (pa, la, _) = best[a];
        let (pb, lb, _) = best[b];
        (pa, la).cmp(&(pb, lb)).then(b.cmp(a))
    });
    let mut steps = Vec::new();
    let mut at = end;
    while let Some(id) = at {
        let row = rows[&id];
        steps.push(PathStep {
            number: row.display_number(),
            title: row.title.clone(),
            status: row.status,
            story_points: row.story_points,
            blocked_by: holds.remove(&id).unwrap_or_default(),
        });
        at = best[&id].2;
    }
    steps.reverse();
    Ok(CriticalPath {
        points: end.map_or(0, |id| best[&id].0),
        steps,
    })
}

/// The points and length of the heaviest chain ending at `id`, and the ticket before it.
fn chain(
    id: i64,
    rows: &HashMap<i64, &TicketRow>,
    needs: &HashMap<i64, Vec<i64>>,
    best: &mut HashMap<i64, (u64, usize, Option<i64>)>,
) -> (u64, usize, Option<i64>) {
    if let Some(found) = best.get(&id) {
        return *found;
    }
    // An explicit stack: a long chain must not exhaust the thread's stack.
    let mut stack = vec![id];
    while let Some(&top) = stack.last() {
        if best.contains_key(&top) {
            stack.pop();
            continue;
        }
        let before = needs.get(&top).map(Vec::as_slice).unwrap_or_default();
        let pending: Vec<i64> = before
            .iter()
            .copied()
            .filter(|b| !best.contains_key(b) && !stack.contains(b))
            .collect();
        if !pending.is_empty() {
            stack.extend(pending);
            continue;
        }
        let own = u64::from(rows[&top].story_points.unwrap_or(0));
        let mut pick: (u64, usize, Option<i64>) = (own, 1, None);
        let mut sorted: Vec<i64> = before.to_vec();
        sorted.sort_unstable();
        for b in sorted {
            if let Some(&(p, l, _)) = best.get(&b)
                && (p + own, l + 1) > (pick.0, pick.1)
            {
                pick = (p + own, l + 1, Some(b));
            }
        }
        best.insert(top, pick);
        stack.pop();
    }
    best[&id]
}
