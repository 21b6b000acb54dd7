//! `jility ticket bulk` and `jility ticket bulk-assign`: one change to many tickets, found
//! by a query or named, all or none (the operations `jility_bulk_update` and
//! `jility_bulk_assign`, in local and cloud mode alike).

use clap::Args;
use jility_core::ops;
use jility_core::params::{BulkAssign, BulkSet, BulkUpdate, StatusName};
use jility_core::tracker::BulkUpdated;
use mcp_common::ToolError;

use super::Out;
use super::human::Painter;
use super::target::Target;

#[derive(Debug, Args)]
pub struct BulkArgs {
    /// The tickets to change (KEY-N or UUID), unless --query finds them.
    #[arg(value_name = "TICKET")]
    pub tickets: Vec<String>,
    /// The tickets a query of the query language finds, e.g. 'label:auth status:review'.
    #[arg(long, short, allow_hyphen_values = true, value_name = "QUERY")]
    pub query: Option<String>,
    /// Move every ticket to this status.
    #[arg(long, value_name = "STATUS")]
    pub status: Option<String>,
    /// Add this label to every ticket (repeat for several).
    #[arg(long = "add-label", value_name = "LABEL")]
    pub add_labels: Vec<String>,
    /// Take this label off every ticket (repeat for several).
    #[arg(long = "remove-label", value_name = "LABEL")]
    pub remove_labels: Vec<String>,
    /// Add this person or agent to every ticket's assignees (repeat for several).
    #[arg(long = "add-assignee", value_name = "NAME")]
    pub add_assignees: Vec<String>,
    /// Take this person or agent off every ticket's assignees (repeat for several).
    #[arg(long = "remove-assignee", value_name = "NAME")]
    pub remove_assignees: Vec<String>,
    /// Move every ticket into this sprint (name, number or `active`), or `none`: back to
    /// the backlog.
    #[arg(long, value_name = "SPRINT")]
    pub sprint: Option<String>,
    /// Make every ticket part of this epic (KEY-N or UUID).
    #[arg(long, value_name = "EPIC", conflicts_with = "clear_epic")]
    pub epic: Option<String>,
    /// Take every ticket out of its epic.
    #[arg(long)]
    pub clear_epic: bool,
    /// Set every ticket's story points (1 to 13).
    #[arg(long, value_name = "N", conflicts_with = "clear_points")]
    pub points: Option<i64>,
    /// Clear every ticket's story points.
    #[arg(long)]
    pub clear_points: bool,
    /// Change nothing unless the tickets are exactly this many.
    #[arg(long = "expected", value_name = "N")]
    pub expected_count: Option<u64>,
    /// Show what would change and what would be refused; change nothing.
    #[arg(long)]
    pub dry_run: bool,
    /// Why, kept in each changed ticket's change log.
    #[arg(long, short, allow_hyphen_values = true)]
    pub message: Option<String>,
}

#[derive(Debug, Args)]
pub struct BulkAssignArgs {
    /// The tickets to assign (KEY-N or UUID), unless --query finds them.
    #[arg(value_name = "TICKET")]
    pub tickets: Vec<String>,
    /// The tickets a query of the query language finds.
    #[arg(long, short, allow_hyphen_values = true, value_name = "QUERY")]
    pub query: Option<String>,
    /// Every ticket's assignees from now on (repeat for several), or `none` to unassign
    /// them all.
    #[arg(long = "to", value_name = "NAME", required = true)]
    pub assignees: Vec<String>,
    /// Change nothing unless the tickets are exactly this many.
    #[arg(long = "expected", value_name = "N")]
    pub expected_count: Option<u64>,
    /// Show what would change; change nothing.
    #[arg(long)]
    pub dry_run: bool,
    /// A handoff message, kept in each changed ticket's change log.
    #[arg(long, short, allow_hyphen_values = true)]
    pub message: Option<String>,
}

pub fn bulk(out: &Out, t: &mut Target, a: BulkArgs) -> Result<(), ToolError> {
    let set = BulkSet {
        status: a.status.map(StatusName),
        add_labels: a.add_labels,
        remove_labels: a.remove_labels,
        add_assignees: a.add_assignees,
        remove_assignees: a.remove_assignees,
        sprint: a.sprint,
        epic_id: if a.clear_epic {
            Some(None)
        } else {
            a.epic.map(Some)
        },
        story_points: if a.clear_points {
            Some(None)
        } else {
            a.points.map(Some)
        },
    };
    out.show(
        t.exec::<ops::BulkUpdate>(BulkUpdate {
            query: a.query,
            tickets: a.tickets,
            set,
            expected_count: a.expected_count,
            dry_run: a.dry_run,
            message: a.message,
        })?,
        updated,
    )
}

pub fn bulk_assign(out: &Out, t: &mut Target, a: BulkAssignArgs) -> Result<(), ToolError> {
    let none = |n: &String| n.trim().eq_ignore_ascii_case("none");
    let assignees = match a.assignees.as_slice() {
        [only] if none(only) => Vec::new(),
        names if names.iter().any(none) => {
            return Err(ToolError::new(
                jility_core::errors::INVALID_INPUT,
                "`--to none` unassigns the tickets: it cannot be given with other names",
            )
            .with_hint("Give `--to none` alone to unassign them, or the names to assign."));
        }
        names => names.to_vec(),
    };
    out.show(
        t.exec::<ops::BulkAssign>(BulkAssign {
            query: a.query,
            tickets: a.tickets,
            assignees,
            expected_count: a.expected_count,
            dry_run: a.dry_run,
            message: a.message,
        })?,
        updated,
    )
}

fn updated(p: &Painter, b: &BulkUpdated) -> String {
    let mut out = if b.dry_run {
        format!(
            "Dry run: {} of {} tickets would change",
            p.bold(&b.changed.to_string()),
            b.matched
        )
    } else {
        format!(
            "Changed {} of {} tickets {}",
            p.bold(&b.changed.to_string()),
            b.matched,
            p.dim(&format!("(bulk edit {})", b.bulk_id))
        )
    };
    for t in &b.tickets {
        out.push_str(&format!(
            "\n  {}  {}  {}",
            p.number(&t.number),
            t.title,
            p.dim(&t.changes.join("; "))
        ));
    }
    if b.changed > b.tickets.len() {
        out.push_str(&format!("\n  … and {} more", b.changed - b.tickets.len()));
    }
    if b.refused_total > 0 {
        out.push_str(&format!(
            "\n{} cannot change (the edit would be refused whole):",
            b.refused_total
        ));
        for r in &b.refused {
            out.push_str(&format!("\n  {}  {}", p.number(&r.number), r.reason));
        }
        if b.refused_total > b.refused.len() {
            out.push_str(&format!(
                "\n  … and {} more",
                b.refused_total - b.refused.len()
            ));
        }
    }
    if b.dry_run && b.refused_total > 0 {
        out.push_str(&format!(
            "\n{}",
            p.hint(
                "As it is, the edit would be refused: leave those tickets out, then run it again."
            )
        ));
    } else if b.dry_run {
        out.push_str(&format!(
            "\n{}",
            p.hint("Run it again without --dry-run to apply it.")
        ));
    }
    out
}
