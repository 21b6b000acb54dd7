//! Saved views: a query of the query language under a name, the caller's own or shared
//! with the workspace, run as `view:NAME` in any query.

use mcp_common_core::ToolError;

use super::checks::invalid;
use super::{Tracker, View, ViewDeleted, ViewList, ViewSaved, now};
use crate::errors::{self, clip};
use crate::params::{SaveView, ViewName};
use crate::query::{self, Clock};
use crate::store::{NewView, Store, ViewRow};

/// Most views a person keeps.
pub const MAX_VIEWS: usize = 100;
/// Longest view name, in characters.
const MAX_NAME_CHARS: usize = 60;

impl<S: Store> Tracker<S> {
    /// `jility_save_view`: a query that reads and resolves (its tickets and sprints exist),
    /// under a name the caller sees no other view by.
    pub fn save_view(&mut self, actor: &str, p: SaveView) -> Result<ViewSaved, ToolError> {
        let name = check_name(&p.name)?;
        let text = p.query.trim().to_string();
        let query = query::parse(&text, &Clock::now())?;
        if query.is_empty() {
            return Err(invalid(
                "A view needs a query: words or qualifiers",
                "Save what you would search for, e.g. `label:auth status:review updated:>7d`.",
            ));
        }
        if query.has_views() {
            return Err(invalid(
                format!("The query '{}' runs another view", clip(&text)),
                "Write the other view's query out in this one: a view does not run views.",
            ));
        }
        let at = now();
        self.store.write(|tx| {
            // What it names exists: the query would run now.
            super::finding::check(tx, actor, &query)?;
            let seen = tx.views(actor)?;
            if let Some(same) = seen.iter().find(|v| v.name.eq_ignore_ascii_case(&name)) {
                let whose = if same.owner == actor {
                    "yours".to_string()
                } else {
                    format!("shared by {}", same.owner)
                };
                return Err(ToolError::new(
                    errors::ALREADY_EXISTS,
                    format!("A view named '{}' exists already ({whose})", same.name),
                )
                .with_hint("Choose another name, or delete yours first with jility_delete_view."));
            }
            if seen.iter().filter(|v| v.owner == actor).count() >= MAX_VIEWS {
                return Err(invalid(
                    format!("You have {MAX_VIEWS} views, the most one person keeps"),
                    "Delete views you no longer use with jility_delete_view.",
                ));
            }
            let row = tx.insert_view(&NewView {
                name: &name,
                query: &text,
                owner: actor,
                shared: p.shared,
                at: &at,
            })?;
            Ok(ViewSaved { view: view(row) })
        })
    }

    /// `jility_list_views`: the caller's views and the shared ones, by name.
    pub fn list_views(&mut self, actor: &str) -> Result<ViewList, ToolError> {
        let rows = self.store.read(|tx| Ok(tx.views(actor)?))?;
        Ok(ViewList {
            views: rows.into_iter().map(view).collect(),
        })
    }

    /// `jility_delete_view`: the caller's own view (a shared one only its owner deletes).
    pub fn delete_view(&mut self, actor: &str, p: ViewName) -> Result<ViewDeleted, ToolError> {
        self.store.write(|tx| {
            let row = super::finding::find_view(tx, actor, &p.name)?;
            if row.owner != actor {
                return Err(ToolError::new(
                    errors::PERMISSION_DENIED,
                    format!(
                        "The view '{}' is {}'s, shared with the workspace: only they can delete it",
                        row.name, row.owner
                    ),
                )
                .with_hint("Ask its owner, or save a view of your own under another name."));
            }
            tx.delete_view(row.id)?;
            Ok(ViewDeleted { name: row.name })
        })
    }
}

fn view(row: ViewRow) -> View {
    View {
        name: row.name,
        query: row.query,
        owner: row.owner,
        shared: row.shared,
        created_at: row.created_at,
    }
}

fn check_name(name: &str) -> Result<String, ToolError> {
    let name = name.trim();
    let ok = !name.is_empty()
        && name.chars().count() <= MAX_NAME_CHARS
        && name
            .chars()
            .all(|c| c.is_alphanumeric() || matches!(c, ' ' | '-' | '_' | '.'));
    if !ok {
        return Err(invalid(
            format!("'{}' cannot be a view's name", clip(name)),
            format!(
                "Name it with 1 to {MAX_NAME_CHARS} letters, digits, blanks, `-`, `_` or `.`, e.g. `triage`."
            ),
        ));
    }
    Ok(name.to_string())
}
