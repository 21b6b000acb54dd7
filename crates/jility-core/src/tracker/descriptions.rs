//! Descriptions: precise edits, every version kept, history and revert.

use mcp_common_core::ToolError;

use super::change_log::{Entry, change, record};
use super::checks::{check_size, invalid, resolve};
use super::{DescriptionUpdated, DescriptionVersion, History, MAX_DESCRIPTION_BYTES, Tracker, now};
use crate::description::{self, Edit};
use crate::params::{RevertDescription, UpdateDescription};
use crate::store::{Store, StoreTx, TicketRow, TicketUpdate};

impl<S: Store> Tracker<S> {
    pub fn update_description(
        &mut self,
        actor: &str,
        p: UpdateDescription,
    ) -> Result<DescriptionUpdated, ToolError> {
        let lines = description_lines(&p)?;
        let at = now();
        self.store
            .write(|tx| update_description_in(tx, actor, &at, &p, lines))
    }

    pub fn history(&mut self, reference: &str) -> Result<History, ToolError> {
        self.store.read(|tx| {
            let row = resolve(tx, reference)?;
            let changes = tx.description_versions(row.id)?;
            let mut previous = String::new();
            let mut versions = Vec::with_capacity(changes.len());
            for (i, c) in changes.into_iter().enumerate() {
                let text = c.new_value.unwrap_or_default();
                let (diff, stats) = description::diff(
                    &previous,
                    &text,
                    &format!("version {i}"),
                    &format!("version {}", i + 1),
                );
                versions.push(DescriptionVersion {
                    version: i + 1,
                    changed_by: c.changed_by,
                    changed_at: c.changed_at,
                    operation: c.detail,
                    message: c.message,
                    diff,
                    added: stats.added,
                    removed: stats.removed,
                    lines: description::line_count(&text),
                });
                previous = text;
            }
            Ok(History {
                number: row.display_number(),
                title: row.title,
                current_version: versions.len(),
                versions,
            })
        })
    }

    pub fn revert_description(
        &mut self,
        actor: &str,
        p: RevertDescription,
    ) -> Result<DescriptionUpdated, ToolError> {
        let at = now();
        self.store.write(|tx| {
            let row = resolve(tx, &p.ticket_id)?;
            let versions = tx.description_versions(row.id)?;
            let count = versions.len();
            let index = usize::try_from(p.version)
                .ok()
                .filter(|v| (1..=count).contains(v))
                .ok_or_else(|| {
                    invalid(
                        format!(
                            "{} has no description version {}; it has versions 1 to {count}",
                            row.display_number(),
                            p.version
                        ),
                        "See the versions with jility_get_ticket_history.",
                    )
                })?;
            write_version(
                tx,
                &row,
                NewVersion {
                    text: versions[index - 1].new_value.clone().unwrap_or_default(),
                    operation: "revert",
                    summary: format!("revert to version {index}"),
                    message: Some(format!("Reverted to version {index}")),
                },
                actor,
                &at,
            )
        })
    }
}

/// A description about to become the ticket's next version.
struct NewVersion<'a> {
    text: String,
    operation: &'a str,
    /// What the edit touched, recorded as the change's detail.
    summary: String,
    message: Option<String>,
}

/// The line range of a `replace_lines` edit, checked.
pub(super) fn description_lines(
    p: &UpdateDescription,
) -> Result<(Option<usize>, Option<usize>), ToolError> {
    let line = |n: Option<i64>, name: &str| -> Result<Option<usize>, ToolError> {
        match n {
            None => Ok(None),
            Some(n) if n >= 1 => Ok(usize::try_from(n).ok()),
            Some(n) => Err(invalid(
                format!("{name} must be 1 or more, got {n}"),
                "Lines are numbered from 1.",
            )),
        }
    };
    Ok((
        line(p.start_line, "start_line")?,
        line(p.end_line, "end_line")?,
    ))
}

/// One description edit inside a write transaction.
pub(super) fn update_description_in(
    tx: &mut dyn StoreTx,
    actor: &str,
    at: &str,
    p: &UpdateDescription,
    (start_line, end_line): (Option<usize>, Option<usize>),
) -> Result<DescriptionUpdated, ToolError> {
    let row = resolve(tx, &p.ticket_id)?;
    let edit = Edit {
        operation: p.operation,
        content: &p.content,
        start_line,
        end_line,
        section_header: p.section_header.as_deref(),
    };
    let applied = description::apply(&row.description, &edit)
        .map_err(|e| invalid(format!("{}: {e}", row.display_number()), e.hint()))?;
    write_version(
        tx,
        &row,
        NewVersion {
            text: applied.text,
            operation: p.operation.as_str(),
            summary: applied.summary,
            message: p.message.clone(),
        },
        actor,
        at,
    )
}

/// Store `new` as the ticket's description and record it as the next version; an edit that
/// leaves the text as it was records nothing.
fn write_version(
    tx: &mut dyn StoreTx,
    row: &TicketRow,
    new: NewVersion<'_>,
    actor: &str,
    at: &str,
) -> Result<DescriptionUpdated, ToolError> {
    check_size(
        &new.text,
        &format!("The new description of {}", row.display_number()),
        MAX_DESCRIPTION_BYTES,
    )?;
    let (_, stats) = description::diff(&row.description, &new.text, "before", "after");
    let changed = new.text != row.description;
    let mut version = tx.description_versions(row.id)?.len();
    if changed {
        tx.update_ticket(
            row.id,
            &TicketUpdate {
                description: Some(new.text.clone()),
                ..Default::default()
            },
            actor,
            at,
        )?;
        record(
            tx,
            row.id,
            actor,
            at,
            Entry {
                old: Some(&row.description),
                new: Some(&new.text),
                detail: Some(&new.summary),
                message: new.message.as_deref(),
                ..change("description_changed")
            },
        )?;
        version += 1;
    }
    Ok(DescriptionUpdated {
        number: row.display_number(),
        operation: new.operation.to_string(),
        summary: new.summary,
        version,
        changed_by: actor.to_string(),
        message: new.message,
        lines: description::line_count(&new.text),
        diff: stats,
        changed,
    })
}
