//! `jility view …`: saved views on the command line — save, list, delete, and run one (its
//! tickets, as `jility ticket list --query view:NAME`), in local and cloud mode alike.

use clap::Subcommand;
use jility_core::ops;
use jility_core::params::{ListTickets, ListViews, SaveView, ViewName};
use jility_core::tracker::{View, ViewDeleted, ViewList, ViewSaved};
use mcp_common::ToolError;

use super::Out;
use super::human::Painter;
use super::human::views as tickets;
use super::target::Target;

#[derive(Debug, Subcommand)]
pub enum ViewCommand {
    /// Save a query of the query language under a name (run it as view:NAME).
    #[command(
        after_help = "Example:\n  jility view save triage 'label:auth status:review updated:>7d' --shared"
    )]
    Save {
        /// Its name: letters, digits, blanks, - _ . (up to 60).
        name: String,
        /// The query, e.g. 'is:open no:sprint points:>5 sort:points-desc'.
        #[arg(allow_hyphen_values = true)]
        query: String,
        /// Share it with the workspace (everyone runs it; only you delete it).
        #[arg(long)]
        shared: bool,
    },
    /// The views you see: yours and the shared ones.
    List,
    /// The tickets a view finds, newest first unless its query sorts.
    Show {
        /// The view's name (any case).
        name: String,
        /// Tickets per page (1 to 200; default 50).
        #[arg(long, value_name = "N")]
        limit: Option<i64>,
        /// The next page: the cursor the previous page printed.
        #[arg(long)]
        cursor: Option<String>,
    },
    /// Delete one of your views.
    Delete {
        /// The view's name (any case).
        name: String,
    },
}

pub fn view(out: &Out, t: &mut Target, command: ViewCommand) -> Result<(), ToolError> {
    match command {
        ViewCommand::Save {
            name,
            query,
            shared,
        } => out.show(
            t.exec::<ops::SaveView>(SaveView {
                name,
                query,
                shared,
            })?,
            saved,
        ),
        ViewCommand::List => out.show(t.exec::<ops::ListViews>(ListViews {})?, listed),
        ViewCommand::Show {
            name,
            limit,
            cursor,
        } => {
            let query = jility_core::query::view_of(&name);
            let mut next = format!(
                "jility ticket list --query {}",
                tickets::shell_quoted(&query)
            );
            if let Some(n) = limit {
                next.push_str(&format!(" --limit {n}"));
            }
            out.show_page(
                t.exec::<ops::ListTickets>(ListTickets {
                    query: Some(query),
                    limit,
                    cursor,
                    ..ListTickets::default()
                })?,
                |p, found, page| tickets::page(p, found, page, &next),
            )
        }
        ViewCommand::Delete { name } => {
            out.show(t.exec::<ops::DeleteView>(ViewName { name })?, deleted)
        }
    }
}

fn whose(p: &Painter, v: &View) -> String {
    if v.shared {
        p.dim(&format!("shared by {}", v.owner))
    } else {
        p.dim("yours")
    }
}

fn saved(p: &Painter, s: &ViewSaved) -> String {
    format!(
        "Saved view {} ({}): {}\n{}",
        p.bold(&s.view.name),
        whose(p, &s.view),
        s.view.query,
        p.hint(&format!(
            "Run it: jility view show '{}', or {} in any query",
            s.view.name,
            jility_core::query::view_of(&s.view.name)
        ))
    )
}

fn listed(p: &Painter, l: &ViewList) -> String {
    if l.views.is_empty() {
        return format!(
            "No saved views.\n{}",
            p.hint("Save one: jility view save NAME 'QUERY'")
        );
    }
    let width = l
        .views
        .iter()
        .map(|v| v.name.chars().count())
        .max()
        .unwrap_or(0);
    l.views
        .iter()
        .map(|v| {
            let pad = " ".repeat(width - v.name.chars().count());
            format!("{}{pad}  {}  {}", p.bold(&v.name), v.query, whose(p, v))
        })
        .collect::<Vec<_>>()
        .join("\n")
}

fn deleted(p: &Painter, d: &ViewDeleted) -> String {
    format!("Deleted view {}", p.bold(&d.name))
}
