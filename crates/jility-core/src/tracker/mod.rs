//! The domain: every operation of the tracker, written against [`Store`] so that any
//! database serves it. Validation, the workflow, description editing, cycle detection and
//! the change log live here; storage only stores.
//!
//! One file per area, each an `impl<S: Store> Tracker<S>` block with that area's operations:
//! `tickets` (init, create, get, list, search, assign, comment, commit links, delete),
//! `batch`, `edit`, `workflow` (claim, status), `descriptions` (edits, history, revert),
//! `dependencies` (the graph) and `from_templates`; planning: `epics` (progress, critical
//! path), `sprints` (create, add, remove, start, complete, list), `sprint_stats` (the
//! burndown replayed from the change log, velocity, forecast) and `plan` (the planner). They share `checks` (input checks,
//! finding tickets), `change_log` and `answers` (the output types, re-exported here).

use std::path::PathBuf;

use mcp_common_core::{CursorKey, Limit};

use crate::store::Store;

mod answers;
mod batch;
mod bulk;
mod change_log;
mod checks;
mod dependencies;
mod descriptions;
mod edit;
mod epics;
mod finding;
mod from_templates;
mod inbox;
mod observing;
mod plan;
mod planning_answers;
mod related;
mod replay;
mod sprint_stats;
mod sprints;
mod tickets;
mod views;
mod workflow;

pub use answers::*;
pub use bulk::MAX_BULK;
pub use checks::{check_key, is_reference, parse_status};
pub use epics::{EPIC_TOOL, EPICS_LIMIT, EPICS_TOOL};
pub use observing::Observed;
pub use plan::MAX_CANDIDATES;
pub use planning_answers::*;
pub use related::{
    Estimate, EstimateBasis, PointsRange, ProbeInfo, RELATED_LIMIT, Related, RelatedTicket,
};
pub use sprints::{SPRINTS_LIMIT, SPRINTS_TOOL};
pub use views::MAX_VIEWS;

/// Largest description, and largest comment, in bytes: far beyond any real ticket, small
/// enough that no answer or history explodes.
const MAX_DESCRIPTION_BYTES: usize = 1 << 20;
const MAX_COMMENT_BYTES: usize = 256 << 10;
/// Page sizes of jility_list_tickets, jility_search_tickets and jility_list_templates.
pub const LIST_LIMIT: Limit = Limit::new(50, 200);
pub const SEARCH_LIMIT: Limit = Limit::new(20, 100);
pub const TEMPLATES_LIMIT: Limit = Limit::new(50, 200);

/// The tool names cursors are bound to (the CLI's list commands use the same, so a cursor
/// from one works in the other).
pub const LIST_TOOL: &str = "jility_list_tickets";
pub const SEARCH_TOOL: &str = "jility_search_tickets";
pub const TEMPLATES_TOOL: &str = "jility_list_templates";

/// The time stamp of a change: now, UTC, to the millisecond (RFC 3339).
fn now() -> String {
    chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
}

/// The tracker: every operation, on a store. Cheap to clone when the store is (a
/// `jility_sqlite::SqlitePool` is a handle), which is how async code runs it on
/// blocking threads ([`crate::service`]).
#[derive(Clone)]
pub struct Tracker<S> {
    store: S,
    /// Seals the cursors of the list operations.
    cursor_key: CursorKey,
    /// `.jility/templates`, where the project's own templates live.
    templates_dir: PathBuf,
    /// The project root, to show template paths relative to it.
    root: PathBuf,
    /// Whether the caller may read other tickets (a cloud token with `tickets:read`): a new
    /// ticket's answer names its likely duplicates only then.
    may_read: bool,
}

impl<S: Store> Tracker<S> {
    /// A tracker on `store` for the project at `root`, sealing its cursors with
    /// `cursor_key` (see `jility_sqlite::local::cursor_key`).
    pub fn new(store: S, root: PathBuf, cursor_key: CursorKey) -> Self {
        Self {
            templates_dir: root.join(".jility").join("templates"),
            root,
            store,
            cursor_key,
            may_read: true,
        }
    }

    /// Whether the caller may read other tickets (see the field); true unless said.
    pub fn set_may_read(&mut self, may_read: bool) {
        self.may_read = may_read;
    }

    /// The store this tracker runs on.
    pub fn store(&self) -> &S {
        &self.store
    }
}
