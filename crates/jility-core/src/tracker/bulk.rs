//! Bulk edits: one change to many tickets at once — found by a query of the query language
//! or named — all or none, in one transaction. Every ticket is checked first (the
//! workflow's moves, epics and sprints); any refusal changes nothing and names each refused
//! ticket with why. A dry run answers the count, the first tickets and the refusals. Each
//! changed ticket's change log names the edit (`bulk edit <id>`).

use mcp_common_core::ToolError;

use std::collections::{HashMap, HashSet};

use super::checks::{
    check_names, check_points, check_size, invalid, lookup, parse_status, resolve,
};
use super::sprints::{conflict, find_sprint, keep};
use super::{BulkRefusal, BulkTicket, BulkUpdated, MAX_COMMENT_BYTES, Tracker, now};
use crate::errors::{self, clip};
use crate::model::{Kind, Status};
use crate::params::{BulkAssign, BulkSet, BulkUpdate};
use crate::query::{self, Clock};
use crate::store::{
    Filter, NewChange, SprintRow, SprintState, Store, StoreTx, Test, TicketLookup, TicketRow,
    TicketUpdate,
};

/// Most tickets one bulk edit changes.
pub const MAX_BULK: usize = 5_000;
/// Most changed tickets an answer shows, and most refusals.
const SHOWN: usize = 50;
const REFUSALS_SHOWN: usize = 200;
/// Most tickets one statement of a store's many-ticket primitives takes.
const CHUNK: usize = 1_000;
/// Most refusals an error message names.
const REFUSALS_IN_MESSAGE: usize = 10;

/// Who the tickets' assignees become.
enum Assignees {
    Keep,
    Change {
        add: Vec<String>,
        remove: Vec<String>,
    },
    Set(Vec<String>),
}

/// A bulk edit's changes, checked.
struct Edit {
    status: Option<Status>,
    add_labels: Vec<String>,
    remove_labels: Vec<String>,
    assignees: Assignees,
    /// `Some(None)`: back to the backlog.
    sprint: Option<Option<String>>,
    epic: Option<Option<String>>,
    points: Option<Option<u8>>,
}

impl Edit {
    fn of(set: BulkSet) -> Result<Self, ToolError> {
        let edit = Edit {
            status: set.status.as_ref().map(parse_status).transpose()?,
            add_labels: check_names(&set.add_labels, "Labels")?,
            remove_labels: check_names(&set.remove_labels, "Labels")?,
            assignees: if set.add_assignees.is_empty() && set.remove_assignees.is_empty() {
                Assignees::Keep
            } else {
                Assignees::Change {
                    add: check_names(&set.add_assignees, "Assignees")?,
                    remove: check_names(&set.remove_assignees, "Assignees")?,
                }
            },
            sprint: set.sprint.map(|s| {
                let s = s.trim().to_string();
                (!(s.eq_ignore_ascii_case("none") || s.eq_ignore_ascii_case("backlog")))
                    .then_some(s)
            }),
            epic: set.epic_id,
            points: set.story_points.map(check_points).transpose()?,
        };
        if let Some(both) = edit
            .add_labels
            .iter()
            .find(|l| edit.remove_labels.contains(l))
        {
            return Err(invalid(
                format!("The label '{}' is both added and removed", clip(both)),
                "Name each label in add_labels or in remove_labels, not both.",
            ));
        }
        if let Assignees::Change { add, remove } = &edit.assignees
            && let Some(both) = add.iter().find(|a| remove.contains(a))
        {
            return Err(invalid(
                format!(
                    "'{}' is both added to and removed from the assignees",
                    clip(both)
                ),
                "Name each person in add_assignees or in remove_assignees, not both.",
            ));
        }
        Ok(edit)
    }

    fn is_empty(&self) -> bool {
        self.status.is_none()
            && self.add_labels.is_empty()
            && self.remove_labels.is_empty()
            && matches!(self.assignees, Assignees::Keep)
            && self.sprint.is_none()
            && self.epic.is_none()
            && self.points.is_none()
    }
}

/// Which tickets: a query, or the tickets named.
struct Which<'a> {
    query: Option<&'a str>,
    tickets: &'a [String],
    expected: Option<u64>,
}

impl<S: Store> Tracker<S> {
    /// `jility_bulk_update`.
    pub fn bulk_update(&mut self, actor: &str, p: BulkUpdate) -> Result<BulkUpdated, ToolError> {
        let edit = Edit::of(p.set)?;
        if edit.is_empty() {
            return Err(invalid(
                "The bulk edit changes nothing: `set` is empty",
                "Say what to change: status, add_labels, remove_labels, add_assignees, remove_assignees, sprint, epic_id or story_points.",
            ));
        }
        let which = Which {
            query: p.query.as_deref(),
            tickets: &p.tickets,
            expected: p.expected_count,
        };
        self.bulk(actor, which, edit, p.dry_run, p.message.as_deref())
    }

    /// `jility_bulk_assign`: every ticket's assignees become `assignees`.
    pub fn bulk_assign(&mut self, actor: &str, p: BulkAssign) -> Result<BulkUpdated, ToolError> {
        let edit = Edit {
            status: None,
            add_labels: Vec::new(),
            remove_labels: Vec::new(),
            assignees: Assignees::Set(check_names(&p.assignees, "Assignees")?),
            sprint: None,
            epic: None,
            points: None,
        };
        let which = Which {
            query: p.query.as_deref(),
            tickets: &p.tickets,
            expected: p.expected_count,
        };
        self.bulk(actor, which, edit, p.dry_run, p.message.as_deref())
    }

    fn bulk(
        &mut self,
        actor: &str,
        which: Which<'_>,
        edit: Edit,
        dry_run: bool,
        message: Option<&str>,
    ) -> Result<BulkUpdated, ToolError> {
        check_size(
            message.unwrap_or_default(),
            "The message",
            MAX_COMMENT_BYTES,
        )?;
        let message = message.map(str::trim).filter(|m| !m.is_empty());
        let query = match (which.query.map(str::trim), which.tickets.is_empty()) {
            (Some(_), false) => {
                return Err(invalid(
                    "Both `query` and `tickets` are given",
                    "Name the tickets with one of them.",
                ));
            }
            (None, true) => {
                return Err(invalid(
                    "A bulk edit needs `query` or `tickets`",
                    "Find the tickets with a query (e.g. `label:auth status:review`) or name them.",
                ));
            }
            (Some(text), true) => {
                let query = query::parse(text, &Clock::now())?;
                if query.is_empty() && which.expected.is_none() {
                    return Err(invalid(
                        "The query is empty: it matches every ticket",
                        "Narrow it with words or qualifiers, or say how many tickets you mean to change with expected_count.",
                    ));
                }
                Some(query)
            }
            (None, false) => None,
        };
        if which.tickets.len() > MAX_BULK {
            return Err(too_many(which.tickets.len(), true));
        }
        let bulk_id = bulk_id();
        let at = now();
        let work = |tx: &mut dyn StoreTx| -> Result<BulkUpdated, ToolError> {
            let rows = match &query {
                Some(query) => {
                    let filter: Filter = super::finding::filter_of(tx, actor, query)?;
                    let rows = tx.find_rows(&filter, MAX_BULK + 1)?;
                    if rows.len() > MAX_BULK {
                        return Err(too_many(rows.len(), false));
                    }
                    rows
                }
                None => named(tx, which.tickets)?,
            };
            if let Some(expected) = which.expected
                && expected != rows.len() as u64
            {
                return Err(ToolError::new(
                    errors::COUNT_MISMATCH,
                    format!(
                        "The {} names {} tickets, not the {expected} expected; nothing was changed",
                        if query.is_some() { "query" } else { "list" },
                        rows.len()
                    ),
                )
                .with_hint("Check the query (a dry run lists the first tickets), then pass the count it matches."));
            }
            let target = Target::of(tx, &edit)?;
            // Their labels and assignees, read at once when the edit changes them.
            let names = if edit.add_labels.is_empty()
                && edit.remove_labels.is_empty()
                && matches!(edit.assignees, Assignees::Keep)
            {
                vec![(Vec::new(), Vec::new()); rows.len()]
            } else {
                let ids: Vec<i64> = rows.iter().map(|r| r.id).collect();
                let mut names = Vec::with_capacity(ids.len());
                for chunk in ids.chunks(CHUNK) {
                    names.extend(tx.names_of(chunk)?);
                }
                names
            };
            let mut planned: Vec<(TicketRow, Plan)> = Vec::with_capacity(rows.len());
            let mut refused: Vec<(BulkRefusal, &'static str)> = Vec::new();
            for (row, names) in rows.into_iter().zip(names) {
                match plan(&edit, &target, &row, names) {
                    Ok(plan) => planned.push((row, plan)),
                    Err((reason, code)) => refused.push((
                        BulkRefusal {
                            number: row.display_number(),
                            reason,
                        },
                        code,
                    )),
                }
            }
            let matched = planned.len() + refused.len();
            if !refused.is_empty() && !dry_run {
                return Err(refusal(&refused, matched));
            }
            let detail = format!("bulk edit {bulk_id}");
            planned.retain(|(_, plan)| !plan.changes.is_empty());
            let changed = planned.len();
            if !dry_run {
                let change = Change {
                    target: &target,
                    actor,
                    at: &at,
                    detail: &detail,
                    message,
                };
                apply(tx, &planned, &change)?;
            }
            let mut shown = Vec::new();
            for (row, plan) in &planned {
                if shown.len() < SHOWN {
                    shown.push(BulkTicket {
                        number: row.display_number(),
                        title: row.title.clone(),
                        status: plan.status.unwrap_or(row.status),
                        changes: plan.changes.clone(),
                    });
                }
            }
            let refused_total = refused.len();
            Ok(BulkUpdated {
                bulk_id: bulk_id.clone(),
                dry_run,
                matched,
                changed,
                tickets: shown,
                refused: refused
                    .into_iter()
                    .take(REFUSALS_SHOWN)
                    .map(|(r, _)| r)
                    .collect(),
                refused_total,
            })
        };
        if dry_run {
            self.store.read(work)
        } else {
            self.store.write(work)
        }
    }
}

/// The live tickets `references` name, each once, in the order first named: those named
/// `KEY-N` read together, a project's at a time; any other reference, and any ticket not
/// found so, looked up on its own (which says why it names none).
fn named(tx: &mut dyn StoreTx, references: &[String]) -> Result<Vec<TicketRow>, ToolError> {
    let default_key = tx.default_project()?.key;
    let mut by_key: Vec<(String, Vec<i64>)> = Vec::new();
    let mut lookups = Vec::with_capacity(references.len());
    for reference in references {
        let lookup = lookup(reference)?;
        if let TicketLookup::Number { key, number } = &lookup {
            let key = key.clone().unwrap_or_else(|| default_key.clone());
            match by_key.iter_mut().find(|(k, _)| *k == key) {
                Some((_, numbers)) => numbers.push(*number),
                None => by_key.push((key, vec![*number])),
            }
        }
        lookups.push(lookup);
    }
    let mut found: HashMap<(String, i64), TicketRow> = HashMap::new();
    for (key, numbers) in by_key {
        for chunk in numbers.chunks(CHUNK) {
            let filter = Filter::default().with(Test::Numbers {
                key: key.clone(),
                numbers: chunk.to_vec(),
            });
            for row in tx.find_rows(&filter, chunk.len())? {
                found.insert((row.project_key.clone(), row.number), row);
            }
        }
    }
    let mut rows: Vec<TicketRow> = Vec::with_capacity(references.len());
    let mut seen = HashSet::new();
    for (reference, lookup) in references.iter().zip(lookups) {
        let row = match lookup {
            TicketLookup::Number { key, number } => {
                let key = key.unwrap_or_else(|| default_key.clone());
                match found.get(&(key, number)) {
                    Some(row) => row.clone(),
                    None => resolve(tx, reference)?,
                }
            }
            TicketLookup::Uuid(_) => resolve(tx, reference)?,
        };
        if seen.insert(row.id) {
            rows.push(row);
        }
    }
    Ok(rows)
}

/// The refusal of an edit of `n` tickets, past [`MAX_BULK`] (a query's count stops just
/// past it: "more than").
fn too_many(n: usize, counted: bool) -> ToolError {
    let how_many = if counted {
        n.to_string()
    } else {
        format!("more than {MAX_BULK}")
    };
    invalid(
        format!("The bulk edit names {how_many} tickets; one edit changes at most {MAX_BULK}"),
        "Narrow the query (e.g. by status or label), or split the edit into several.",
    )
}

/// A short id for the edit, named in the change logs (8 hex digits of a random UUID).
fn bulk_id() -> String {
    uuid::Uuid::new_v4().simple().to_string()[..8].to_string()
}

/// The error refusing an edit: each refused ticket with why (the first few).
fn refusal(refused: &[(BulkRefusal, &'static str)], matched: usize) -> ToolError {
    let code = if refused.iter().all(|(_, c)| *c == "invalid_status") {
        errors::INVALID_STATUS
    } else if refused.iter().any(|(_, c)| *c == "sprint_conflict") {
        errors::SPRINT_CONFLICT
    } else {
        errors::INVALID_INPUT
    };
    let named: Vec<String> = refused
        .iter()
        .take(REFUSALS_IN_MESSAGE)
        .map(|(r, _)| format!("{}: {}", r.number, r.reason))
        .collect();
    let more = refused.len().saturating_sub(REFUSALS_IN_MESSAGE);
    ToolError::new(
        code,
        format!(
            "{} of the {matched} tickets cannot be changed, so none was: {}{}",
            refused.len(),
            named.join("; "),
            if more > 0 {
                format!("; and {more} more")
            } else {
                String::new()
            }
        ),
    )
    .with_hint("Leave them out (narrow the query, e.g. -status:done), or run it with dry_run: true to see every refusal.")
}

/// What the edit's sprint and epic name, looked up once.
struct Target {
    /// `Some(None)`: the backlog.
    sprint: Option<Option<SprintRow>>,
    /// The key of the project the sprint is of.
    project_key: String,
    epic: Option<Option<TicketRow>>,
}

impl Target {
    fn of(tx: &mut dyn StoreTx, edit: &Edit) -> Result<Self, ToolError> {
        let project = tx.default_project()?;
        let sprint = match &edit.sprint {
            None => None,
            Some(None) => Some(None),
            Some(Some(name)) => {
                let sprint = find_sprint(tx, project.id, name)?;
                if sprint.state == SprintState::Completed {
                    return Err(conflict(
                        format!(
                            "Sprint '{}' is completed: it takes no more tickets; nothing was changed",
                            sprint.name
                        ),
                        "Move them to a planned or the active sprint (jility_list_sprints).",
                    ));
                }
                Some(Some(sprint))
            }
        };
        let epic = match &edit.epic {
            None => None,
            Some(None) => Some(None),
            Some(Some(reference)) => {
                let epic = resolve(tx, reference)?;
                if epic.kind != Kind::Epic {
                    return Err(super::checks::not_an_epic(&epic));
                }
                Some(Some(epic))
            }
        };
        Ok(Target {
            sprint,
            project_key: project.key,
            epic,
        })
    }
}

/// What the edit does to one ticket.
struct Plan {
    status: Option<Status>,
    labels: Option<Vec<String>>,
    assignees: Option<Vec<String>>,
    sprint: bool,
    epic: bool,
    points: Option<Option<u8>>,
    /// What changes, for people (empty: it is already as asked).
    changes: Vec<String>,
    /// Old and new labels and assignees, for the change log.
    old_labels: Vec<String>,
    old_assignees: Vec<String>,
}

/// The plan of `row` (whose labels and assignees are `names`), or why it cannot change (and
/// the code of that refusal).
fn plan(
    edit: &Edit,
    target: &Target,
    row: &TicketRow,
    names: (Vec<String>, Vec<String>),
) -> Result<Plan, (String, &'static str)> {
    let (current_labels, current_assignees) = names;
    let mut p = Plan {
        status: None,
        labels: None,
        assignees: None,
        sprint: false,
        epic: false,
        points: None,
        changes: Vec::new(),
        old_labels: Vec::new(),
        old_assignees: Vec::new(),
    };
    if let Some(to) = edit.status.filter(|to| *to != row.status) {
        if !row.status.can_move_to(to) {
            let allowed: Vec<&str> = row
                .status
                .transitions()
                .iter()
                .map(|s| s.as_str())
                .collect();
            return Err((
                format!(
                    "{} → {} is not a move the workflow allows (from {} only to {})",
                    row.status.as_str(),
                    to.as_str(),
                    row.status.as_str(),
                    allowed.join(", ")
                ),
                "invalid_status",
            ));
        }
        p.status = Some(to);
        p.changes
            .push(format!("status: {} → {}", row.status.as_str(), to.as_str()));
    }
    let status = p.status.unwrap_or(row.status);
    if let Some(sprint) = &target.sprint {
        let now = row.sprint_id;
        match sprint {
            Some(sprint) if now != Some(sprint.id) => {
                if row.kind == Kind::Epic {
                    return Err(("an epic is no sprint work".into(), "invalid_input"));
                }
                if status == Status::Done {
                    return Err((
                        "it is done: a sprint plans work still to do".into(),
                        "sprint_conflict",
                    ));
                }
                if row.project_key != target.project_key {
                    return Err((
                        "it is of another project than the sprint".into(),
                        "invalid_input",
                    ));
                }
                p.sprint = true;
                p.changes.push(format!("sprint: → {}", sprint.name));
            }
            None if now.is_some() => {
                p.sprint = true;
                p.changes.push(format!(
                    "sprint: {} → backlog",
                    row.sprint.as_deref().unwrap_or("?")
                ));
            }
            _ => {}
        }
    }
    if let Some(epic) = &target.epic {
        let wanted = epic.as_ref().map(|e| e.id);
        if wanted != row.epic_id {
            if let Some(e) = epic {
                if row.kind == Kind::Epic {
                    return Err((
                        format!(
                            "it is an epic: an epic cannot belong to epic {}",
                            e.display_number()
                        ),
                        "invalid_input",
                    ));
                }
                p.changes.push(format!("epic: → {}", e.display_number()));
            } else {
                p.changes.push("epic: removed".into());
            }
            p.epic = true;
        }
    }
    if let Some(points) = edit.points.filter(|p| *p != row.story_points) {
        p.points = Some(points);
        p.changes.push(format!(
            "points: {} → {}",
            row.story_points
                .map_or("none".to_string(), |p| p.to_string()),
            points.map_or("none".to_string(), |p| p.to_string())
        ));
    }
    if !edit.add_labels.is_empty() || !edit.remove_labels.is_empty() {
        let current = current_labels;
        let mut labels: Vec<String> = current
            .iter()
            .filter(|l| !edit.remove_labels.contains(l))
            .cloned()
            .collect();
        let mut added = Vec::new();
        for l in &edit.add_labels {
            if !labels.contains(l) {
                labels.push(l.clone());
                added.push(format!("+{l}"));
            }
        }
        let removed: Vec<String> = current
            .iter()
            .filter(|l| edit.remove_labels.contains(l))
            .map(|l| format!("-{l}"))
            .collect();
        if !added.is_empty() || !removed.is_empty() {
            labels.sort();
            p.changes
                .push(format!("labels: {}", [added, removed].concat().join(" ")));
            p.labels = Some(labels);
            p.old_labels = current;
        }
    }
    if !matches!(edit.assignees, Assignees::Keep) {
        let current = current_assignees;
        let wanted: Vec<String> = match &edit.assignees {
            Assignees::Keep => current.clone(),
            Assignees::Set(names) => names.clone(),
            Assignees::Change { add, remove } => {
                let mut names: Vec<String> = current
                    .iter()
                    .filter(|a| !remove.contains(a))
                    .cloned()
                    .collect();
                for a in add {
                    if !names.contains(a) {
                        names.push(a.clone());
                    }
                }
                names
            }
        };
        let mut a = wanted.clone();
        a.sort();
        let mut b = current.clone();
        b.sort();
        if a != b {
            p.changes.push(format!(
                "assignees: {} → {}",
                if current.is_empty() {
                    "none".to_string()
                } else {
                    current.join(", ")
                },
                if wanted.is_empty() {
                    "none".to_string()
                } else {
                    wanted.join(", ")
                }
            ));
            p.assignees = Some(wanted);
            p.old_assignees = current;
        }
    }
    Ok(p)
}

/// The fields a plan changes: the status, the points, whether the epic and the sprint.
type FieldChange = (Option<Status>, Option<Option<u8>>, bool, bool);

/// Who makes the edit, when, and what its change-log entries say.
struct Change<'a> {
    target: &'a Target,
    actor: &'a str,
    at: &'a str,
    detail: &'a str,
    message: Option<&'a str>,
}

/// Apply the plans: the tickets' fields updated together (one update for each kind of
/// change), their labels and assignees, an entry in each one's change log per change (each
/// naming the edit), and the figures of the sprints they left, joined or stayed in.
fn apply(
    tx: &mut dyn StoreTx,
    planned: &[(TicketRow, Plan)],
    c: &Change<'_>,
) -> Result<(), ToolError> {
    let to_sprint = c.target.sprint.as_ref().and_then(|s| s.as_ref());
    let to_epic = c.target.epic.as_ref().and_then(|e| e.as_ref());
    // The fields: tickets whose updates are alike, together.
    let mut groups: Vec<(FieldChange, Vec<i64>)> = Vec::new();
    for (row, plan) in planned {
        let key = (plan.status, plan.points, plan.epic, plan.sprint);
        match groups.iter_mut().find(|(k, _)| *k == key) {
            Some((_, ids)) => ids.push(row.id),
            None => groups.push((key, vec![row.id])),
        }
    }
    for ((status, points, epic, sprint), ids) in &groups {
        let update = TicketUpdate {
            status: *status,
            story_points: *points,
            epic_id: epic.then(|| to_epic.map(|e| e.id)),
            sprint_id: sprint.then(|| to_sprint.map(|s| s.id)),
            ..Default::default()
        };
        for chunk in ids.chunks(CHUNK) {
            tx.update_tickets(chunk, &update, c.actor, c.at)?;
        }
    }
    // The epics they left, by number.
    let mut old_epics: Vec<i64> = planned
        .iter()
        .filter(|(_, p)| p.epic)
        .filter_map(|(r, _)| r.epic_id)
        .collect();
    old_epics.sort_unstable();
    old_epics.dedup();
    let epic_numbers: Vec<(i64, String)> = old_epics
        .iter()
        .copied()
        .zip(tx.ticket_refs(&old_epics)?)
        .map(|(id, r)| (id, r.map(|r| r.number).unwrap_or_default()))
        .collect();
    let epic_number = |id: Option<i64>| {
        id.and_then(|id| {
            epic_numbers
                .iter()
                .find(|(e, _)| *e == id)
                .map(|(_, n)| n.clone())
        })
    };
    // The change log: (ticket, kind, old, new), written together.
    let mut entries: Vec<(i64, &'static str, Option<String>, Option<String>)> = Vec::new();
    let mut labels: Vec<(i64, Vec<String>)> = Vec::new();
    let mut assignees: Vec<(i64, Vec<String>)> = Vec::new();
    let mut moves: Vec<(i64, u64, u64)> = Vec::new();
    for (row, plan) in planned {
        if let Some(to) = plan.status {
            entries.push((
                row.id,
                "status_changed",
                Some(row.status.as_str().into()),
                Some(to.as_str().into()),
            ));
        }
        if plan.sprint {
            if let Some(sprint) = to_sprint {
                tx.note_sprint_member(sprint.id, row.id)?;
            }
            entries.push((
                row.id,
                "sprint_changed",
                row.sprint.clone(),
                to_sprint.map(|s| s.name.clone()),
            ));
        }
        if plan.epic {
            entries.push((
                row.id,
                "epic_changed",
                epic_number(row.epic_id),
                to_epic.map(|e| e.display_number()),
            ));
        }
        if let Some(points) = plan.points {
            entries.push((
                row.id,
                "story_points_changed",
                row.story_points.map(|p| p.to_string()),
                points.map(|p| p.to_string()),
            ));
        }
        if let Some(new) = &plan.labels {
            entries.push((
                row.id,
                "labels_changed",
                Some(plan.old_labels.join(", ")),
                Some(new.join(", ")),
            ));
            labels.push((row.id, new.clone()));
        }
        if let Some(new) = &plan.assignees {
            entries.push((
                row.id,
                "assignees_changed",
                Some(plan.old_assignees.join(", ")),
                Some(new.join(", ")),
            ));
            assignees.push((row.id, new.clone()));
        }
        // The sprint figures to keep: the points moved in and out, and the sprint it stays
        // in when its status or points changed.
        let points = u64::from(plan.points.unwrap_or(row.story_points).unwrap_or(0));
        let old_points = u64::from(row.story_points.unwrap_or(0));
        if plan.sprint {
            if let Some(sprint) = to_sprint {
                moves.push((sprint.id, points, 0));
            }
            if let Some(from) = row.sprint_id {
                moves.push((from, 0, old_points));
            }
        } else if let Some(sprint) = row.sprint_id
            && (plan.status.is_some() || plan.points.is_some())
        {
            moves.push((sprint, 0, 0));
        }
    }
    for chunk in labels.chunks(CHUNK) {
        tx.set_labels_of(chunk)?;
    }
    for chunk in assignees.chunks(CHUNK) {
        tx.set_assignees_of(chunk, c.actor, c.at)?;
    }
    for chunk in entries.chunks(CHUNK) {
        let changes: Vec<(i64, NewChange<'_>)> = chunk
            .iter()
            .map(|(id, kind, old, new)| {
                (
                    *id,
                    NewChange {
                        change_type: kind,
                        old_value: old.as_deref(),
                        new_value: new.as_deref(),
                        detail: Some(c.detail),
                        message: c.message,
                        actor: c.actor,
                        at: c.at,
                    },
                )
            })
            .collect();
        tx.record_changes(&changes)?;
        // Those it assigns and unblocks are told (not each ticket's watchers).
        for (id, kind, old, new) in chunk {
            if matches!(*kind, "assignees_changed" | "status_changed") {
                let entry = super::inbox::Told {
                    kind,
                    old: old.as_deref(),
                    new: new.as_deref(),
                    detail: Some(c.detail),
                };
                super::inbox::after_change(tx, *id, c.actor, c.at, &entry, true)?;
            }
        }
    }
    keep(tx, c.at, &moves)
}
