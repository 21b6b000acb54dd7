//! Editing a ticket's fields: title, description, points, labels, parent, epic.

use std::collections::HashSet;

use mcp_common_core::ToolError;

use super::change_log::{Entry, change, record};
use super::checks::{
    check_epic_link, check_names, check_points, check_size, check_title, invalid, resolve,
    resolve_opt, ticket_ref,
};
use super::descriptions::{description_lines, update_description_in};
use super::tickets::full_ticket;
use super::{DescriptionUpdated, Edited, MAX_DESCRIPTION_BYTES, Tracker, now};
use crate::model::Kind;
use crate::params::{EditTicket, UpdateDescription};
use crate::store::{Store, StoreTx, TicketRow, TicketSet, TicketUpdate};

impl<S: Store> Tracker<S> {
    /// `jility ticket edit`: change title, description, points, labels, parent or epic.
    pub fn edit(&mut self, actor: &str, p: EditTicket) -> Result<Edited, ToolError> {
        self.edit_with(actor, p, None).map(|(edited, _)| edited)
    }

    /// [`Self::edit`], then a description edit, in one transaction: both or neither.
    pub fn edit_with(
        &mut self,
        actor: &str,
        p: EditTicket,
        description_edit: Option<UpdateDescription>,
    ) -> Result<(Edited, Option<DescriptionUpdated>), ToolError> {
        let lines = description_edit
            .as_ref()
            .map(description_lines)
            .transpose()?;
        let title = p.title.as_deref().map(check_title).transpose()?;
        check_size(
            p.description.as_deref().unwrap_or_default(),
            "The description",
            MAX_DESCRIPTION_BYTES,
        )?;
        let story_points = match p.story_points {
            Some(points) => Some(check_points(points)?),
            None => None,
        };
        let labels = p
            .labels
            .as_deref()
            .map(|l| check_names(l, "Labels"))
            .transpose()?;
        let at = now();
        self.store.write(|tx| {
            let row = resolve(tx, &p.ticket_id)?;
            let mut edit = Editing {
                row: &row,
                actor,
                at: &at,
                message: p.message.as_deref(),
                update: TicketUpdate::default(),
                changed: Vec::new(),
            };
            edit.title(tx, title)?;
            edit.description(tx, p.description.clone())?;
            edit.story_points(tx, story_points)?;
            edit.labels(tx, labels)?;
            edit.link(tx, "parent", p.parent_id.as_ref(), row.parent_id)?;
            edit.link(tx, "epic", p.epic_id.as_ref(), row.epic_id)?;
            edit.kind(tx, p.kind)?;
            let Editing {
                update, changed, ..
            } = edit;
            if !changed.is_empty() {
                tx.update_ticket(row.id, &update, actor, &at)?;
                if update.story_points.is_some() {
                    super::sprints::keep_ticket(tx, &row, &at)?;
                }
            }
            let updated = match (&description_edit, lines) {
                (Some(edit), Some(lines)) => {
                    Some(update_description_in(tx, actor, &at, edit, lines)?)
                }
                _ => None,
            };
            let row = tx
                .ticket_by_id(row.id)?
                .ok_or_else(|| ToolError::internal("ticket vanished"))?;
            Ok((
                Edited {
                    ticket: full_ticket(tx, &row)?,
                    changed,
                },
                updated,
            ))
        })
    }
}

/// An edit of a ticket's fields as it is applied: who edits, when and why (what every change
/// records), the update to store and the fields changed so far.
struct Editing<'a> {
    row: &'a TicketRow,
    actor: &'a str,
    at: &'a str,
    message: Option<&'a str>,
    update: TicketUpdate,
    changed: Vec<String>,
}

impl Editing<'_> {
    /// Record that `field` changed as `entry` says, with the edit's message.
    fn note(
        &mut self,
        tx: &mut dyn StoreTx,
        field: &str,
        entry: Entry<'_>,
    ) -> Result<(), ToolError> {
        record(
            tx,
            self.row.id,
            self.actor,
            self.at,
            Entry {
                message: self.message,
                ..entry
            },
        )?;
        self.changed.push(field.to_string());
        Ok(())
    }

    fn title(&mut self, tx: &mut dyn StoreTx, title: Option<String>) -> Result<(), ToolError> {
        let row = self.row;
        if let Some(title) = title.filter(|t| *t != row.title) {
            self.note(
                tx,
                "title",
                Entry {
                    old: Some(&row.title),
                    new: Some(&title),
                    ..change("title_changed")
                },
            )?;
            self.update.title = Some(title);
        }
        Ok(())
    }

    /// A description given whole (not a description edit).
    fn description(&mut self, tx: &mut dyn StoreTx, text: Option<String>) -> Result<(), ToolError> {
        let row = self.row;
        if let Some(text) = text.filter(|d| *d != row.description) {
            self.note(
                tx,
                "description",
                Entry {
                    old: Some(&row.description),
                    new: Some(&text),
                    detail: Some("edit"),
                    ..change("description_changed")
                },
            )?;
            self.update.description = Some(text);
        }
        Ok(())
    }

    /// `Some(None)` clears the points.
    fn story_points(
        &mut self,
        tx: &mut dyn StoreTx,
        points: Option<Option<u8>>,
    ) -> Result<(), ToolError> {
        let row = self.row;
        if let Some(points) = points.filter(|p| *p != row.story_points) {
            let (old, new) = (
                row.story_points.map(|p| p.to_string()),
                points.map(|p| p.to_string()),
            );
            self.note(
                tx,
                "story_points",
                Entry {
                    old: old.as_deref(),
                    new: new.as_deref(),
                    ..change("story_points_changed")
                },
            )?;
            self.update.story_points = Some(points);
        }
        Ok(())
    }

    /// Labels are stored at once (the update does not carry them).
    fn labels(
        &mut self,
        tx: &mut dyn StoreTx,
        labels: Option<Vec<String>>,
    ) -> Result<(), ToolError> {
        let Some(labels) = labels else {
            return Ok(());
        };
        let current = tx.labels(self.row.id)?;
        let mut sorted = labels.clone();
        sorted.sort();
        if sorted != current {
            tx.set_labels(self.row.id, &labels)?;
            let (old, new) = (current.join(", "), sorted.join(", "));
            self.note(
                tx,
                "labels",
                Entry {
                    old: Some(&old),
                    new: Some(&new),
                    ..change("labels_changed")
                },
            )?;
        }
        Ok(())
    }

    /// Set the ticket's `field` ("parent" or "epic", now `current`) to the ticket `wanted`
    /// names, or clear it (`Some(None)`); a parent chain cannot loop.
    fn link(
        &mut self,
        tx: &mut dyn StoreTx,
        field: &str,
        wanted: Option<&Option<String>>,
        current: Option<i64>,
    ) -> Result<(), ToolError> {
        let Some(wanted) = wanted else {
            return Ok(());
        };
        let row = self.row;
        let target = resolve_opt(tx, wanted.as_deref())?;
        if target == Some(row.id) {
            return Err(invalid(
                format!("{} cannot be its own {field}", row.display_number()),
                format!("Choose another ticket as {field}."),
            ));
        }
        if field == "parent"
            && let Some(target) = target
            && is_ancestor(tx, row.id, target)?
        {
            return Err(invalid(
                format!(
                    "{} cannot be the parent of {}: it is one of its sub-tasks",
                    ticket_ref(tx, target)?.number,
                    row.display_number()
                ),
                "A ticket's parent chain cannot loop; move the sub-task out first.",
            ));
        }
        if target != current {
            let old = current
                .map(|id| ticket_ref(tx, id).map(|r| r.number))
                .transpose()?;
            let new = target
                .map(|id| ticket_ref(tx, id).map(|r| r.number))
                .transpose()?;
            let kind = if field == "parent" {
                "parent_changed"
            } else {
                "epic_changed"
            };
            self.note(
                tx,
                field,
                Entry {
                    old: old.as_deref(),
                    new: new.as_deref(),
                    ..change(kind)
                },
            )?;
            if field == "parent" {
                self.update.parent_id = Some(target);
            } else {
                self.update.epic_id = Some(target);
            }
        }
        Ok(())
    }
}

impl Editing<'_> {
    /// Make the ticket an epic or a plain ticket; whichever epic it ends with (changed or
    /// not) must be an epic it may join.
    fn kind(&mut self, tx: &mut dyn StoreTx, kind: Option<Kind>) -> Result<(), ToolError> {
        let row = self.row;
        let wanted = kind.unwrap_or(row.kind);
        let epic = self.update.epic_id.unwrap_or(row.epic_id);
        let parent = self.update.parent_id.unwrap_or(row.parent_id);
        if wanted != row.kind || self.update.epic_id.is_some() || self.update.parent_id.is_some() {
            check_epic_link(tx, Some(&row.display_number()), wanted, epic, parent)?;
        }
        if wanted == row.kind {
            return Ok(());
        }
        if wanted == Kind::Ticket {
            let members = tx.ticket_rows(TicketSet::Epic(row.id))?.len();
            if members > 0 {
                return Err(invalid(
                    format!(
                        "{} gathers {members} ticket(s): it stays an epic while it has any",
                        row.display_number()
                    ),
                    "Move its tickets to another epic (or out of it) first.",
                ));
            }
        } else if let Some(sprint) = row.sprint_id
            && {
                let project = tx.default_project()?.id;
                tx.sprints(project)?
                    .iter()
                    .any(|s| s.id == sprint && s.state.is_open())
            }
        {
            return Err(invalid(
                format!(
                    "{} is in sprint '{}': an epic is not sprint work",
                    row.display_number(),
                    row.sprint.as_deref().unwrap_or_default()
                ),
                "Remove it from the sprint first (jility_remove_from_sprint).",
            ));
        }
        self.note(
            tx,
            "kind",
            Entry {
                old: Some(row.kind.as_str()),
                new: Some(wanted.as_str()),
                ..change("kind_changed")
            },
        )?;
        self.update.kind = Some(wanted);
        Ok(())
    }
}

/// Is `ancestor` on the parent chain of `id` (its parent, the parent's parent, …)?
fn is_ancestor(tx: &mut dyn StoreTx, ancestor: i64, id: i64) -> Result<bool, ToolError> {
    let mut at = id;
    let mut seen = HashSet::new();
    while seen.insert(at) {
        match tx.ticket_by_id(at)?.and_then(|row| row.parent_id) {
            Some(parent) if parent == ancestor => return Ok(true),
            Some(parent) => at = parent,
            None => return Ok(false),
        }
    }
    Ok(false)
}
