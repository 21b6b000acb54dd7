//! Sprints: creating them, moving tickets in and out (each move in the tickets' change
//! log), starting (the committed scope) and completing (carry-over) them, and listing them.

use std::collections::HashMap;

use chrono::{Datelike as _, NaiveDate};
use mcp_common_core::{Limit, Paged, ToolError, page::page_by_offset};

use super::change_log::{Entry, change, record};
use super::checks::{invalid, page_size, resolve};
use super::{
    AddedToSprint, RemovedFromSprint, Sprint, SprintCompleted, SprintCreated, SprintList,
    SprintStarted, SprintTicket, Tracker, now,
};
use crate::errors::{self, clip};
use crate::model::{Kind, Status};
use crate::params::{
    AddToSprint, CompleteSprint, CreateSprint, ListSprints, RemoveFromSprint, SprintName,
};
use crate::store::{
    NewSprint, Project, SprintRollup, SprintRow, SprintState, SprintUpdate, Store, StoreTx,
    TicketRow, TicketSet, TicketUpdate,
};

pub const SPRINTS_LIMIT: Limit = Limit::new(50, 200);
pub const SPRINTS_TOOL: &str = "jility_list_sprints";

const MAX_NAME_CHARS: usize = 100;
const MAX_GOAL_CHARS: usize = 2_000;
const MAX_CAPACITY: i64 = 10_000;
/// Most days a sprint lasts (its burndown has a row a day).
const MAX_DAYS: i64 = 366;
/// Most tickets one call adds or removes.
const MAX_TICKETS: usize = 500;
/// Names a sprint filter gives a meaning of its own.
const RESERVED: [&str; 3] = ["active", "none", "backlog"];

/// A character that shows nothing: zero-width spaces and joiners, direction marks, the byte
/// order mark and the like (Unicode's format characters in common use).
fn invisible(c: char) -> bool {
    matches!(c, '\u{00AD}' | '\u{034F}' | '\u{061C}' | '\u{115F}' | '\u{1160}' | '\u{17B4}' | '\u{17B5}' | '\u{180E}' | '\u{200B}'..='\u{200F}' | '\u{202A}'..='\u{202E}' | '\u{2060}'..='\u{206F}' | '\u{3164}' | '\u{FE00}'..='\u{FE0F}' | '\u{FEFF}' | '\u{FFA0}')
}

/// Today, UTC.
pub(super) fn today() -> NaiveDate {
    chrono::Utc::now().date_naive()
}

pub(super) fn date(field: &str, text: &str) -> Result<NaiveDate, ToolError> {
    let text = text.trim();
    // Exactly YYYY-MM-DD (the parser alone also takes `2026-1-7` and signed years).
    NaiveDate::parse_from_str(text, "%Y-%m-%d")
        .ok()
        .filter(|d| d.format("%Y-%m-%d").to_string() == text && (1970..=9999).contains(&d.year()))
        .ok_or_else(|| {
            invalid(
                format!("`{field}` '{}' is not a date", clip(text)),
                format!("Give `{field}` as YYYY-MM-DD (1970 to 9999), e.g. 2026-12-07."),
            )
        })
}

pub(super) fn conflict(message: impl Into<String>, hint: impl Into<String>) -> ToolError {
    ToolError::new(errors::SPRINT_CONFLICT, message).with_hint(hint)
}

/// The sprint `reference` names in `project`: its name (any case), its number, or `active`
/// (the active sprint).
pub(super) fn find_sprint(
    tx: &mut dyn StoreTx,
    project: i64,
    reference: &str,
) -> Result<SprintRow, ToolError> {
    pick_sprint(&tx.sprints(project)?, reference)
}

/// [`find_sprint`] among `sprints` (a project's, read already).
pub(super) fn pick_sprint(sprints: &[SprintRow], reference: &str) -> Result<SprintRow, ToolError> {
    let wanted = reference.trim();
    if wanted.eq_ignore_ascii_case("active") {
        return sprints
            .iter()
            .find(|s| s.state == SprintState::Active)
            .cloned()
            .ok_or_else(|| {
                ToolError::not_found("The project has no active sprint").with_hint(
                    "Start one with jility_start_sprint, or name a sprint (see jility_list_sprints).",
                )
            });
    }
    let number = wanted
        .strip_prefix('#')
        .unwrap_or(wanted)
        .parse::<i64>()
        .ok();
    sprints
        .iter()
        .find(|s| s.name.eq_ignore_ascii_case(wanted))
        .or_else(|| number.and_then(|n| sprints.iter().find(|s| s.number == n)))
        .cloned()
        .ok_or_else(|| {
            ToolError::not_found(format!("Sprint '{}' not found", clip(wanted)))
                .with_hint("Name a sprint by its name or number (see jility_list_sprints).")
        })
}

/// The active sprint of `project`, if any.
pub(super) fn active_sprint(
    tx: &mut dyn StoreTx,
    project: i64,
) -> Result<Option<SprintRow>, ToolError> {
    Ok(tx
        .sprints(project)?
        .into_iter()
        .find(|s| s.state == SprintState::Active))
}

/// A sprint as the answers show it, with its live tickets now.
pub(super) fn sprint_out(row: &SprintRow, now: SprintRollup) -> Sprint {
    Sprint {
        number: row.number,
        name: row.name.clone(),
        goal: row.goal.clone(),
        state: row.state.as_str().to_string(),
        starts_on: row.starts_on.clone(),
        ends_on: row.ends_on.clone(),
        capacity_points: row.capacity_points,
        tickets: now.tickets,
        points: now.points,
        points_done: now.points_done,
        started_at: row.started_at.clone(),
        committed_points: row.committed_points,
        completed_at: row.completed_at.clone(),
        completed_points: row.completed_points,
    }
}

/// The sprint's live tickets now, counted from the rows read (what the store's roll-up
/// would count again).
pub(super) fn rollup(sprint_id: i64, members: &[TicketRow]) -> SprintRollup {
    let mut r = SprintRollup {
        sprint_id,
        ..Default::default()
    };
    for t in members
        .iter()
        .filter(|t| t.deleted_at.is_none() && t.sprint_id == Some(sprint_id))
    {
        let points = u64::from(t.story_points.unwrap_or(0));
        r.tickets += 1;
        r.points += points;
        if t.status == Status::Done {
            r.points_done += points;
        }
    }
    r
}

/// [`sprint_out`] of one sprint, read now.
pub(super) fn sprint_now(tx: &mut dyn StoreTx, row: &SprintRow) -> Result<Sprint, ToolError> {
    let rollup = tx.sprint_rollups(&[row.id])?.pop().unwrap_or_default();
    Ok(sprint_out(row, rollup))
}

fn moved(row: &TicketRow, from: Option<String>) -> SprintTicket {
    SprintTicket {
        number: row.display_number(),
        title: row.title.clone(),
        status: row.status,
        story_points: row.story_points,
        moved_from: from,
    }
}

/// Record that `row` moved from the sprint `from` to `to` (either may be none).
fn move_ticket(
    tx: &mut dyn StoreTx,
    row: &TicketRow,
    to: Option<&SprintRow>,
    detail: &str,
    actor: &str,
    at: &str,
) -> Result<(), ToolError> {
    tx.update_ticket(
        row.id,
        &TicketUpdate {
            sprint_id: Some(to.map(|s| s.id)),
            ..Default::default()
        },
        actor,
        at,
    )?;
    if let Some(to) = to {
        tx.note_sprint_member(to.id, row.id)?;
    }
    record(
        tx,
        row.id,
        actor,
        at,
        Entry {
            old: row.sprint.as_deref(),
            new: to.map(|s| s.name.as_str()),
            detail: Some(detail),
            ..change("sprint_changed")
        },
    )
}

/// The sprint `name` names, which must be planned or active: a completed one is a conflict
/// saying `why` its tickets cannot change and `hint` what to do instead.
fn open_sprint(
    tx: &mut dyn StoreTx,
    project_id: i64,
    name: &str,
    why: &str,
    hint: &str,
) -> Result<SprintRow, ToolError> {
    let sprint = find_sprint(tx, project_id, name)?;
    if sprint.state == SprintState::Completed {
        return Err(conflict(
            format!("Sprint '{}' is completed: {why}", sprint.name),
            hint,
        ));
    }
    Ok(sprint)
}

/// Keep the figures of the sprints of `moves` (sprint, points moved in, points moved out):
/// their remaining points of the day of `at` and what was moved (a sprint that is not active,
/// or whose figures are not kept, is left alone), once per sprint however many tickets moved.
pub(super) fn keep(
    tx: &mut dyn StoreTx,
    at: &str,
    moves: &[(i64, u64, u64)],
) -> Result<(), ToolError> {
    let mut by_sprint: std::collections::BTreeMap<i64, (u64, u64)> = Default::default();
    for (sprint, added, removed) in moves {
        let e = by_sprint.entry(*sprint).or_default();
        e.0 += added;
        e.1 += removed;
    }
    let day = at.get(..10).unwrap_or(at);
    for (sprint, (added, removed)) in by_sprint {
        tx.keep_sprint(sprint, day, added, removed)?;
    }
    Ok(())
}

/// Keep the figures of `row`'s sprint, if it is in one, after a change of its status, points
/// or life.
pub(super) fn keep_ticket(
    tx: &mut dyn StoreTx,
    row: &TicketRow,
    at: &str,
) -> Result<(), ToolError> {
    match row.sprint_id {
        Some(sprint) => keep(tx, at, &[(sprint, 0, 0)]),
        None => Ok(()),
    }
}

/// The live tickets `references` name, each once, in order; all must be of `project`.
fn tickets_of(
    tx: &mut dyn StoreTx,
    project: &Project,
    references: &[String],
) -> Result<Vec<TicketRow>, ToolError> {
    if references.is_empty() || references.len() > MAX_TICKETS {
        return Err(invalid(
            format!(
                "Give 1 to {MAX_TICKETS} tickets ({} given)",
                references.len()
            ),
            "Name the tickets as KEY-N (e.g. TASK-42) or by UUID.",
        ));
    }
    let mut rows: Vec<TicketRow> = Vec::new();
    for reference in references {
        let row = resolve(tx, reference)?;
        if row.project_key != project.key {
            return Err(invalid(
                format!(
                    "{} is a ticket of project {}, not of {}",
                    row.display_number(),
                    row.project_key,
                    project.key
                ),
                "A sprint takes the tickets of its own project.",
            ));
        }
        if row.kind == Kind::Epic {
            return Err(invalid(
                format!("{} is an epic, not sprint work", row.display_number()),
                "Add the epic's tickets instead (jility_get_epic lists them).",
            ));
        }
        if !rows.iter().any(|r| r.id == row.id) {
            rows.push(row);
        }
    }
    Ok(rows)
}

impl<S: Store> Tracker<S> {
    pub fn create_sprint(
        &mut self,
        actor: &str,
        p: CreateSprint,
    ) -> Result<SprintCreated, ToolError> {
        // Spaces only between words, one at a time: names that look alike are alike.
        if p.name
            .chars()
            .any(|c| c.is_control() || (c.is_whitespace() && c != ' ') || invisible(c))
        {
            return Err(invalid(
                "A sprint's name has a control, invisible or unusual space character",
                "Use letters, digits, punctuation and plain spaces, like `Sprint 12`.",
            ));
        }
        let name = p
            .name
            .split(' ')
            .filter(|w| !w.is_empty())
            .collect::<Vec<_>>()
            .join(" ");
        if name.is_empty() || name.chars().count() > MAX_NAME_CHARS {
            return Err(invalid(
                format!("A sprint's name must have 1 to {MAX_NAME_CHARS} characters"),
                "Name it like `Sprint 12` or `2026-W49`.",
            ));
        }
        if RESERVED.iter().any(|r| name.eq_ignore_ascii_case(r))
            || name
                .strip_prefix('#')
                .unwrap_or(&name)
                .parse::<i64>()
                .is_ok()
        {
            return Err(invalid(
                format!("'{}' cannot name a sprint", clip(&name)),
                "`active`, `none`, `backlog` and bare numbers already mean something in sprint filters; choose a name like `Sprint 12`.",
            ));
        }
        let goal = p
            .goal
            .as_deref()
            .map(str::trim)
            .filter(|g| !g.is_empty())
            .map(str::to_string);
        if goal
            .as_ref()
            .is_some_and(|g| g.chars().count() > MAX_GOAL_CHARS)
        {
            return Err(invalid(
                format!("The goal is longer than {MAX_GOAL_CHARS} characters"),
                "Say the goal in a sentence or two.",
            ));
        }
        let starts = date("starts_on", &p.starts_on)?;
        let ends = date("ends_on", &p.ends_on)?;
        if ends < starts {
            return Err(invalid(
                format!("The sprint ends ({ends}) before it starts ({starts})"),
                "Give an `ends_on` on or after `starts_on`.",
            ));
        }
        let days = (ends - starts).num_days() + 1;
        if days > MAX_DAYS {
            return Err(invalid(
                format!("The sprint would last {days} days; a sprint lasts at most {MAX_DAYS}"),
                "Plan in time boxes of a few weeks: one sprint after another.",
            ));
        }
        if let Some(capacity) = p.capacity_points
            && !(1..=MAX_CAPACITY).contains(&capacity)
        {
            return Err(invalid(
                format!("The capacity {capacity} is out of range: give 1 to {MAX_CAPACITY} points"),
                "Leave capacity_points out to plan by the team's velocity.",
            ));
        }
        let at = now();
        self.store.write(|tx| {
            let project = tx.default_project()?;
            if let Some(same) = tx
                .sprints(project.id)?
                .into_iter()
                .find(|s| s.name.eq_ignore_ascii_case(&name))
            {
                return Err(ToolError::new(
                    errors::ALREADY_EXISTS,
                    format!("The project has a sprint named '{}' already", same.name),
                )
                .with_hint("Sprint names are unique in a project; choose another."));
            }
            let (starts_on, ends_on) = (starts.to_string(), ends.to_string());
            let row = tx.insert_sprint(&NewSprint {
                project_id: project.id,
                name: &name,
                goal: goal.as_deref(),
                starts_on: &starts_on,
                ends_on: &ends_on,
                capacity_points: p.capacity_points,
                actor,
                at: &at,
            })?;
            Ok(SprintCreated {
                sprint: sprint_out(&row, SprintRollup::default()),
            })
        })
    }

    pub fn add_to_sprint(
        &mut self,
        actor: &str,
        p: AddToSprint,
    ) -> Result<AddedToSprint, ToolError> {
        let at = now();
        self.store.write(|tx| {
            let project = tx.default_project()?;
            let sprint = open_sprint(
                tx,
                project.id,
                &p.sprint,
                "it takes no more tickets",
                "Add them to a planned or the active sprint (jility_list_sprints).",
            )?;
            let rows = tickets_of(tx, &project, &p.tickets)?;
            let sprints: HashMap<i64, SprintRow> = tx
                .sprints(project.id)?
                .into_iter()
                .map(|s| (s.id, s))
                .collect();
            let mut added = Vec::new();
            let mut already_in = Vec::new();
            let mut moves = Vec::new();
            if let Some(done) = rows.iter().find(|r| r.status == Status::Done) {
                return Err(invalid(
                    format!(
                        "{} is done: a sprint plans work still to do; nothing was added",
                        done.display_number()
                    ),
                    "Leave it out, or reopen it first (jility_update_status) if there is more to do.",
                ));
            }
            for row in &rows {
                match row.sprint_id.and_then(|id| sprints.get(&id)) {
                    Some(current) if current.id == sprint.id => {
                        already_in.push(row.display_number());
                        continue;
                    }
                    Some(other) if other.state.is_open() && !p.move_tickets => {
                        return Err(conflict(
                            format!(
                                "{} is in sprint '{}' ({}); nothing was added",
                                row.display_number(),
                                other.name,
                                other.state.as_str()
                            ),
                            "Pass `move: true` (CLI: --move) to move it, or leave it out.",
                        ));
                    }
                    _ => {}
                }
                let detail = if row
                    .sprint_id
                    .is_some_and(|id| sprints.get(&id).is_some_and(|s| s.state.is_open()))
                {
                    "moved"
                } else {
                    "added"
                };
                move_ticket(tx, row, Some(&sprint), detail, actor, &at)?;
                let points = u64::from(row.story_points.unwrap_or(0));
                moves.push((sprint.id, points, 0));
                if let Some(from) = row.sprint_id {
                    moves.push((from, 0, points));
                }
                let from = (detail == "moved").then(|| row.sprint.clone()).flatten();
                added.push(moved(row, from));
            }
            keep(tx, &at, &moves)?;
            let out = sprint_now(tx, &sprint)?;
            Ok(AddedToSprint {
                over_capacity: sprint
                    .capacity_points
                    .is_some_and(|c| out.points > c.max(0) as u64),
                sprint: out,
                added,
                already_in,
            })
        })
    }

    pub fn remove_from_sprint(
        &mut self,
        actor: &str,
        p: RemoveFromSprint,
    ) -> Result<RemovedFromSprint, ToolError> {
        let at = now();
        self.store.write(|tx| {
            let project = tx.default_project()?;
            let sprint = open_sprint(
                tx,
                project.id,
                &p.sprint,
                "its tickets stay as they were",
                "A completed sprint's scope is history; plan the next sprint instead.",
            )?;
            let rows = tickets_of(tx, &project, &p.tickets)?;
            let mut removed = Vec::new();
            let mut not_in = Vec::new();
            let mut moves = Vec::new();
            for row in &rows {
                if row.sprint_id != Some(sprint.id) {
                    not_in.push(row.display_number());
                    continue;
                }
                move_ticket(tx, row, None, "removed", actor, &at)?;
                moves.push((sprint.id, 0, u64::from(row.story_points.unwrap_or(0))));
                removed.push(moved(row, None));
            }
            keep(tx, &at, &moves)?;
            Ok(RemovedFromSprint {
                sprint: sprint_now(tx, &sprint)?,
                removed,
                not_in,
            })
        })
    }

    pub fn start_sprint(
        &mut self,
        _actor: &str,
        p: SprintName,
    ) -> Result<SprintStarted, ToolError> {
        let at = now();
        self.store.write(|tx| {
            let project = tx.default_project()?;
            let sprint = find_sprint(tx, project.id, &p.sprint)?;
            if sprint.state != SprintState::Planned {
                return Err(conflict(
                    format!(
                        "Sprint '{}' is {}: only a planned sprint starts",
                        sprint.name,
                        sprint.state.as_str()
                    ),
                    "Start a planned sprint (jility_list_sprints).",
                ));
            }
            if let Some(active) = active_sprint(tx, project.id)? {
                return Err(conflict(
                    format!(
                        "Sprint '{}' is active: a project has one active sprint",
                        active.name
                    ),
                    format!("Complete '{}' first (jility_complete_sprint).", active.name),
                ));
            }
            let members = tx.ticket_rows(TicketSet::Sprint(sprint.id))?;
            let points: u64 = members
                .iter()
                .map(|t| u64::from(t.story_points.unwrap_or(0)))
                .sum();
            tx.update_sprint(
                sprint.id,
                &SprintUpdate {
                    state: Some(SprintState::Active),
                    started_at: Some(at.clone()),
                    committed_points: Some(points as i64),
                    committed_tickets: Some(members.len() as i64),
                    ..Default::default()
                },
            )?;
            let row = find_sprint(tx, project.id, &sprint.name)?;
            // Keep its figures from now on, from each day's so far (the replay's).
            let today = today();
            let (starts, ends) = (
                date("starts_on", &row.starts_on)?,
                date("ends_on", &row.ends_on)?,
            );
            let mut days: Vec<NaiveDate> = starts
                .iter_days()
                .take_while(|d| *d <= today.min(ends))
                .collect();
            if days.last() != Some(&today) {
                days.push(today);
            }
            let days = super::replay::replayed_days(tx, &row, &days)?;
            tx.begin_keeping(row.id, &days)?;
            Ok(SprintStarted {
                sprint: sprint_now(tx, &row)?,
                committed: members.iter().map(TicketRow::display_number).collect(),
            })
        })
    }

    pub fn complete_sprint(
        &mut self,
        actor: &str,
        p: CompleteSprint,
    ) -> Result<SprintCompleted, ToolError> {
        let at = now();
        self.store.write(|tx| {
            let project = tx.default_project()?;
            let sprint = find_sprint(tx, project.id, &p.sprint)?;
            if sprint.state != SprintState::Active {
                return Err(conflict(
                    format!("Sprint '{}' is {}: only the active sprint completes", sprint.name, sprint.state.as_str()),
                    "Start it first (jility_start_sprint), or complete the active one.",
                ));
            }
            if p.carry_over_to.as_deref().is_some_and(|t| t.trim().is_empty()) {
                return Err(invalid(
                    "`carry_over_to` is empty",
                    "Name a planned sprint, or leave carry_over_to out to return the tickets to the backlog.",
                ));
            }
            let target = match p.carry_over_to.as_deref().map(str::trim) {
                None => None,
                Some(reference) => {
                    let target = find_sprint(tx, project.id, reference)?;
                    if target.id == sprint.id {
                        return Err(invalid(
                            format!("Sprint '{}' cannot carry over into itself", sprint.name),
                            "Name a planned sprint, or leave carry_over_to out to return the tickets to the backlog.",
                        ));
                    }
                    if target.state != SprintState::Planned {
                        return Err(conflict(
                            format!("Sprint '{}' is {}: only a planned sprint takes carried-over tickets", target.name, target.state.as_str()),
                            "Name a planned sprint, or leave carry_over_to out to return the tickets to the backlog.",
                        ));
                    }
                    Some(target)
                }
            };
            let members = tx.ticket_rows(TicketSet::Sprint(sprint.id))?;
            let (done, open): (Vec<TicketRow>, Vec<TicketRow>) = members
                .into_iter()
                .partition(|t| t.status == crate::model::Status::Done);
            let detail = if target.is_some() { "carried over" } else { "carried over to the backlog" };
            for row in &open {
                move_ticket(tx, row, target.as_ref(), detail, actor, &at)?;
            }
            let points = |rows: &[TicketRow]| -> u64 {
                rows.iter().map(|t| u64::from(t.story_points.unwrap_or(0))).sum()
            };
            tx.update_sprint(
                sprint.id,
                &SprintUpdate {
                    state: Some(SprintState::Completed),
                    completed_at: Some(at.clone()),
                    completed_points: Some(points(&done) as i64),
                    carried_over: Some(open.len() as i64),
                    ..Default::default()
                },
            )?;
            let row = find_sprint(tx, project.id, &sprint.name)?;
            Ok(SprintCompleted {
                sprint: sprint_now(tx, &row)?,
                completed: done.iter().map(TicketRow::display_number).collect(),
                carried_over: open.iter().map(TicketRow::display_number).collect(),
                carried_to: target.map(|t| t.name),
                carried_points: points(&open),
            })
        })
    }

    pub fn list_sprints(&mut self, p: &ListSprints) -> Result<Paged<SprintList>, ToolError> {
        let limit = page_size(SPRINTS_LIMIT, p.limit)?;
        let mut states = Vec::new();
        for name in &p.state {
            let state = SprintState::parse(name.trim()).ok_or_else(|| {
                invalid(
                    format!("'{}' is not a sprint state", clip(name)),
                    "Sprint states are planned, active and completed.",
                )
            })?;
            if !states.contains(&state) {
                states.push(state);
            }
        }
        let mut shape: Vec<&str> = states.iter().map(|s| s.as_str()).collect();
        shape.sort_unstable();
        let cursors = self.cursor_key.bind(SPRINTS_TOOL, &shape);
        self.store.read(|tx| {
            let project = tx.default_project()?;
            let all: Vec<SprintRow> = tx
                .sprints(project.id)?
                .into_iter()
                .filter(|s| states.is_empty() || states.contains(&s.state))
                .collect();
            let (rows, page) = page_by_offset(&all, &cursors, p.cursor.as_deref(), limit)?;
            let ids: Vec<i64> = rows.iter().map(|s| s.id).collect();
            let rollups: HashMap<i64, SprintRollup> = tx
                .sprint_rollups(&ids)?
                .into_iter()
                .map(|r| (r.sprint_id, r))
                .collect();
            Ok(Paged {
                data: SprintList {
                    sprints: rows
                        .iter()
                        .map(|s| sprint_out(s, rollups.get(&s.id).copied().unwrap_or_default()))
                        .collect(),
                },
                page,
            })
        })
    }
}
