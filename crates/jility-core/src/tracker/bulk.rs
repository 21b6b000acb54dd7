//! Bulk edits: one change to many tickets at once — found by a query of the query language
//! or named — all or none, in one transaction. Every ticket is checked first (the
//! workflow's moves, epics and sprints); any refusal changes nothing and names each refused
//! ticket with why. A dry run answers the count, the first tickets and the refusals. Each
//! changed ticket's change log names the edit (`bulk edit <id>`).

use mcp_common_core::ToolError;

use super::change_log::{Entry, change, record};
use super::checks::{check_names, check_points, check_size, invalid, parse_status, resolve};
use super::sprints::{conflict, find_sprint, keep};
use super::{BulkRefusal, BulkTicket, BulkUpdated, MAX_COMMENT_BYTES, Tracker, now};
use crate::errors::{self, clip};
use crate::model::{Kind, Status};
use crate::params::{BulkAssign, BulkSet, BulkUpdate};
use crate::query::{self, Clock};
use crate::store::{Filter, SprintRow, SprintState, Store, StoreTx, TicketRow, TicketUpdate};

/// Most tickets one bulk edit changes.
pub const MAX_BULK: usize = 5_000;
/// Most changed tickets an answer shows, and most refusals.
const SHOWN: usize = 50;
const REFUSALS_SHOWN: usize = 200;
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
                None => {
                    let mut rows: Vec<TicketRow> = Vec::with_capacity(which.tickets.len());
                    for reference in which.tickets {
                        let row = resolve(tx, reference)?;
                        if !rows.iter().any(|r| r.id == row.id) {
                            rows.push(row);
                        }
                    }
                    rows
                }
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
            let mut planned: Vec<(TicketRow, Plan)> = Vec::with_capacity(rows.len());
            let mut refused: Vec<(BulkRefusal, &'static str)> = Vec::new();
            for row in rows {
                match plan(tx, &edit, &target, &row) {
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
            let mut changed = 0;
            let mut shown = Vec::new();
            let mut moves: Vec<(i64, u64, u64)> = Vec::new();
            for (row, plan) in &planned {
                if plan.changes.is_empty() {
                    continue;
                }
                changed += 1;
                if !dry_run {
                    apply(
                        tx, row, plan, &target, actor, &at, &detail, message, &mut moves,
                    )?;
                }
                if shown.len() < SHOWN {
                    shown.push(BulkTicket {
                        number: row.display_number(),
                        title: row.title.clone(),
                        status: plan.status.unwrap_or(row.status),
                        changes: plan.changes.clone(),
                    });
                }
            }
            if !dry_run {
                keep(tx, &at, &moves)?;
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

/// The plan of `row`, or why it cannot change (and the code of that refusal).
fn plan(
    tx: &mut dyn StoreTx,
    edit: &Edit,
    target: &Target,
    row: &TicketRow,
) -> Result<Plan, (String, &'static str)> {
    let db = |e: ToolError| (e.message, "internal");
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
        let current = tx.labels(row.id).map_err(|e| db(e.into()))?;
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
        let current = tx.assignees(row.id).map_err(|e| db(e.into()))?;
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

/// Apply `plan` to `row`: one update of its fields, its labels and assignees, an entry in
/// its change log per change (each naming the edit), and the sprint moves to keep.
#[allow(clippy::too_many_arguments)]
fn apply(
    tx: &mut dyn StoreTx,
    row: &TicketRow,
    plan: &Plan,
    target: &Target,
    actor: &str,
    at: &str,
    detail: &str,
    message: Option<&str>,
    moves: &mut Vec<(i64, u64, u64)>,
) -> Result<(), ToolError> {
    let to_sprint = target.sprint.as_ref().and_then(|s| s.as_ref());
    let to_epic = target.epic.as_ref().and_then(|e| e.as_ref());
    let update = TicketUpdate {
        status: plan.status,
        story_points: plan.points,
        epic_id: plan.epic.then(|| to_epic.map(|e| e.id)),
        sprint_id: plan.sprint.then(|| to_sprint.map(|s| s.id)),
        ..Default::default()
    };
    tx.update_ticket(row.id, &update, actor, at)?;
    let note = |tx: &mut dyn StoreTx, kind: &str, old: Option<&str>, new: Option<&str>| {
        record(
            tx,
            row.id,
            actor,
            at,
            Entry {
                old,
                new,
                detail: Some(detail),
                message,
                ..change(kind)
            },
        )
    };
    if let Some(to) = plan.status {
        note(
            tx,
            "status_changed",
            Some(row.status.as_str()),
            Some(to.as_str()),
        )?;
    }
    if plan.sprint {
        if let Some(sprint) = to_sprint {
            tx.note_sprint_member(sprint.id, row.id)?;
        }
        note(
            tx,
            "sprint_changed",
            row.sprint.as_deref(),
            to_sprint.map(|s| s.name.as_str()),
        )?;
    }
    if plan.epic {
        let old = match row.epic_id {
            Some(id) => Some(super::checks::ticket_ref(tx, id)?.number),
            None => None,
        };
        let new = to_epic.map(|e| e.display_number());
        note(tx, "epic_changed", old.as_deref(), new.as_deref())?;
    }
    if let Some(points) = plan.points {
        let (old, new) = (
            row.story_points.map(|p| p.to_string()),
            points.map(|p| p.to_string()),
        );
        note(tx, "story_points_changed", old.as_deref(), new.as_deref())?;
    }
    if let Some(labels) = &plan.labels {
        tx.set_labels(row.id, labels)?;
        let (old, new) = (plan.old_labels.join(", "), labels.join(", "));
        note(tx, "labels_changed", Some(&old), Some(&new))?;
    }
    if let Some(assignees) = &plan.assignees {
        tx.set_assignees(row.id, assignees, actor, at)?;
        let (old, new) = (plan.old_assignees.join(", "), assignees.join(", "));
        note(tx, "assignees_changed", Some(&old), Some(&new))?;
    }
    // The sprint figures to keep: the points moved in and out, and the sprint it stays in
    // when its status or points changed.
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
    Ok(())
}
