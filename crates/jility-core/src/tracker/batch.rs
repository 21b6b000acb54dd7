//! Creating a batch of tickets at once, with dependencies among them.

use mcp_common_core::ToolError;

use super::change_log::{Entry, change, record};
use super::checks::{
    batch_position, check_epic_link, check_names, check_points, check_size, check_title, invalid,
    is_reference, resolve,
};
use super::tickets::{Draft, insert};
use super::{BatchCreated, BatchTicket, MAX_DESCRIPTION_BYTES, Tracker, now};
use crate::errors::clip;
use crate::model::{Kind, Status};
use crate::params::{BatchItem, CreateBatch};
use crate::store::{Store, TicketRow};

impl<S: Store> Tracker<S> {
    pub fn create_batch(&mut self, actor: &str, p: CreateBatch) -> Result<BatchCreated, ToolError> {
        if p.tickets.is_empty() {
            return Err(invalid(
                "The batch has no tickets",
                "Give at least one ticket in `tickets`.",
            ));
        }
        if p.tickets.len() > 200 {
            return Err(invalid(
                format!(
                    "The batch has {} tickets; at most 200 are allowed",
                    p.tickets.len()
                ),
                "Split the work into several batches.",
            ));
        }
        // Validate every item before touching the database.
        let mut drafts = Vec::with_capacity(p.tickets.len());
        for (i, item) in p.tickets.iter().enumerate() {
            let at_item = |e: ToolError| ToolError {
                message: format!("Ticket #{} of the batch: {}", i + 1, e.message),
                ..e
            };
            let BatchItem {
                title,
                description,
                story_points,
                assignees,
                labels,
                ..
            } = item;
            check_size(
                description.as_deref().unwrap_or_default(),
                "The description",
                MAX_DESCRIPTION_BYTES,
            )
            .map_err(at_item)?;
            drafts.push((
                check_title(title).map_err(at_item)?,
                description.clone().unwrap_or_default(),
                check_points(*story_points).map_err(at_item)?,
                check_names(assignees, "Assignees").map_err(at_item)?,
                check_names(labels, "Labels").map_err(at_item)?,
            ));
        }
        // A dependency named by title must name one item: a title that several items of the
        // batch share is refused (it used to link the first silently), before anything is
        // written.
        for (i, item) in p.tickets.iter().enumerate() {
            for dep in &item.depends_on {
                let dep = dep.trim();
                if batch_position(dep).is_some() || is_reference(dep) {
                    continue;
                }
                let items: Vec<String> = drafts
                    .iter()
                    .enumerate()
                    .filter(|(_, draft)| draft.0 == dep)
                    .map(|(j, _)| format!("#{}", j + 1))
                    .collect();
                if items.len() > 1 {
                    return Err(invalid(
                        format!(
                            "Ticket #{} of the batch depends on '{}', a title that items {} of the batch share",
                            i + 1,
                            clip(dep),
                            items.join(", ")
                        ),
                        "Name the item by its position instead (#1 is the first item of the batch), or give the items distinct titles.",
                    ));
                }
            }
        }
        let at = now();
        self.store.write(|tx| {
            let parent = match p.parent_id.as_deref().map(str::trim).filter(|r| !r.is_empty()) {
                Some(r) => Some(resolve(tx, r)?),
                None => None,
            };
            let mut created: Vec<(TicketRow, BatchTicket)> = Vec::new();
            for (i, (item, (title, description, story_points, assignees, labels))) in
                p.tickets.iter().zip(drafts).enumerate()
            {
                let mut depends_on = Vec::new();
                for dep in &item.depends_on {
                    let dep = dep.trim();
                    let earlier = if let Some(pos) = batch_position(dep) {
                        if pos == 0 || pos > i {
                            return Err(invalid(
                                format!(
                                    "Ticket #{} of the batch depends on #{pos}, which is not an earlier item",
                                    i + 1
                                ),
                                "Items may depend only on earlier items of the batch (#1 is the first) or on existing tickets.",
                            ));
                        }
                        Some(pos - 1)
                    } else if is_reference(dep) {
                        // A ticket reference (KEY-N, number, UUID) names an existing ticket.
                        None
                    } else {
                        created.iter().position(|(row, _)| row.title == dep)
                    };
                    let target = match earlier {
                        Some(index) => created[index].0.clone(),
                        None => resolve(tx, dep).map_err(|e| ToolError {
                            message: format!("Ticket #{} of the batch: {}", i + 1, e.message),
                            ..e
                        })?,
                    };
                    if !depends_on.iter().any(|d: &TicketRow| d.id == target.id) {
                        depends_on.push(target);
                    }
                }
                // An epic gathers the batch as its tickets; any other ticket, as sub-tasks.
                let kind = item.kind.unwrap_or_default();
                let (parent_id, epic_id) = match &parent {
                    Some(p) if p.kind == Kind::Epic => (None, Some(p.id)),
                    Some(p) => (Some(p.id), None),
                    None => (None, None),
                };
                check_epic_link(
                    tx,
                    Some(&format!("Ticket #{} of the batch", i + 1)),
                    kind,
                    epic_id,
                    parent_id,
                )?;
                let draft = Draft {
                    title,
                    description,
                    status: Status::Backlog,
                    story_points,
                    assignees,
                    labels,
                    parent_id,
                    epic_id,
                    kind,
                };
                let row = insert(tx, &draft, actor, &at)?;
                for dep in &depends_on {
                    tx.add_dependency(row.id, dep.id, actor, &at)?;
                    let number = dep.display_number();
                    record(
                        tx,
                        row.id,
                        actor,
                        &at,
                        Entry {
                            new: Some(&number),
                            ..change("dependency_added")
                        },
                    )?;
                }
                let out = BatchTicket {
                    number: row.display_number(),
                    title: row.title.clone(),
                    story_points: row.story_points,
                    assignees: draft.assignees,
                    labels: draft.labels,
                    depends_on: depends_on.iter().map(TicketRow::display_number).collect(),
                };
                created.push((row, out));
            }
            let total_story_points = created
                .iter()
                .map(|(row, _)| u32::from(row.story_points.unwrap_or(0)))
                .sum();
            Ok(BatchCreated {
                tickets: created.into_iter().map(|(_, t)| t).collect(),
                parent: parent.map(|p| p.as_ref()),
                total_story_points,
            })
        })
    }
}
