//! The workflow: claiming a ticket and moving it from status to status.

use mcp_common_core::ToolError;

use super::change_log::{Entry, change, record};
use super::checks::{check_size, parse_status, resolve};
use super::{Claimed, MAX_COMMENT_BYTES, StatusUpdated, Tracker, now};
use crate::errors;
use crate::model::{Status, TicketRef};
use crate::params::{ClaimTicket, UpdateStatus};
use crate::store::{Store, StoreTx, TicketRow, TicketUpdate};

impl<S: Store> Tracker<S> {
    pub fn claim(&mut self, actor: &str, p: ClaimTicket) -> Result<Claimed, ToolError> {
        check_size(
            p.message.as_deref().unwrap_or_default(),
            "The message",
            MAX_COMMENT_BYTES,
        )?;
        let at = now();
        self.store.write(|tx| {
            let row = resolve(tx, &p.ticket_id)?;
            let number = row.display_number();
            let assignees = tx.assignees(row.id)?;
            let others: Vec<&String> = assignees.iter().filter(|a| *a != actor).collect();
            if !others.is_empty() {
                let names = others.iter().map(|s| s.as_str()).collect::<Vec<_>>().join(", ");
                return Err(ToolError::new(
                    errors::ALREADY_ASSIGNED,
                    format!("{number} is already assigned to {names}"),
                )
                .with_hint(format!(
                    "Pick an unassigned ticket (jility_list_tickets with unassigned: true), or ask {names} to hand it over with jility_assign_ticket."
                )));
            }
            if row.status == Status::Done {
                return Err(ToolError::new(
                    errors::INVALID_STATUS,
                    format!("{number} is done; a done ticket cannot be claimed"),
                )
                .with_hint("Reopen it first with jility_update_status (todo or in_progress) if work remains."));
            }
            let already_claimed = !assignees.is_empty();
            let previous_status = row.status;
            if !already_claimed {
                tx.set_assignees(row.id, &[actor.to_string()], actor, &at)?;
                record(
                    tx,
                    row.id,
                    actor,
                    &at,
                    Entry {
                        old: Some(""),
                        new: Some(actor),
                        detail: Some("claimed"),
                        message: p.message.as_deref(),
                        ..change("assignees_changed")
                    },
                )?;
            }
            let mut status = row.status;
            if matches!(row.status, Status::Backlog | Status::Todo) {
                status = Status::InProgress;
                set_status(tx, &row, status, actor, &at, Some("claimed"), None)?;
            } else if !already_claimed {
                tx.update_ticket(row.id, &TicketUpdate::default(), actor, &at)?;
            }
            if let Some(message) = p.message.as_deref().map(str::trim).filter(|m| !m.is_empty()) {
                tx.insert_comment(row.id, actor, message, &at)?;
                record(tx, row.id, actor, &at, change("comment_added"))?;
            }
            Ok(Claimed {
                ticket: TicketRef {
                    number,
                    title: row.title,
                    status,
                },
                story_points: row.story_points,
                assignee: actor.to_string(),
                previous_status,
                already_claimed,
            })
        })
    }

    pub fn update_status(
        &mut self,
        actor: &str,
        p: UpdateStatus,
    ) -> Result<StatusUpdated, ToolError> {
        let to = parse_status(&p.status)?;
        let at = now();
        self.store.write(|tx| {
            let row = resolve(tx, &p.ticket_id)?;
            let number = row.display_number();
            let changed = row.status != to;
            if changed && !row.status.can_move_to(to) {
                let allowed = row
                    .status
                    .transitions()
                    .iter()
                    .map(|s| s.as_str())
                    .collect::<Vec<_>>()
                    .join(", ");
                return Err(ToolError::new(
                    errors::INVALID_STATUS,
                    format!(
                        "Cannot move {number} from {} to {}",
                        row.status.label(),
                        to.label()
                    ),
                )
                .with_hint(format!(
                    "From {} a ticket can move to: {allowed}.",
                    row.status.as_str()
                )));
            }
            if changed {
                set_status(tx, &row, to, actor, &at, None, p.message.as_deref())?;
            }
            Ok(StatusUpdated {
                number,
                title: row.title,
                previous: row.status,
                current: to,
                changed_by: actor.to_string(),
                message: p.message.clone(),
                changed,
            })
        })
    }
}

/// Move `row` to `to` and record `status_changed` (from its status to `to`) with the
/// change's `detail` and `message`; whether the move is allowed is the caller's to decide.
fn set_status(
    tx: &mut dyn StoreTx,
    row: &TicketRow,
    to: Status,
    actor: &str,
    at: &str,
    detail: Option<&str>,
    message: Option<&str>,
) -> Result<(), ToolError> {
    tx.update_ticket(
        row.id,
        &TicketUpdate {
            status: Some(to),
            ..Default::default()
        },
        actor,
        at,
    )?;
    super::sprints::keep_ticket(tx, row, at)?;
    record(
        tx,
        row.id,
        actor,
        at,
        Entry {
            old: Some(row.status.as_str()),
            new: Some(to.as_str()),
            detail,
            message,
            ..change("status_changed")
        },
    )
}
