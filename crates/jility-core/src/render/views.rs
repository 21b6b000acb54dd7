//! The markdown of saved views' answers.

use std::fmt::Write as _;

use crate::tracker::{View, ViewDeleted, ViewList, ViewSaved};

fn line(v: &View) -> String {
    let whose = if v.shared {
        format!("shared by {}", v.owner)
    } else {
        format!("{}'s own", v.owner)
    };
    format!("- **{}** `{}` ({whose})", v.name, v.query)
}

pub fn view_saved(s: &ViewSaved) -> String {
    format!(
        "✅ Saved view **{}**: `{}`{}\n\nRun it with `{}` in jility_search_tickets or jility_list_tickets' `query`.",
        s.view.name,
        s.view.query,
        if s.view.shared {
            " (shared with the workspace)"
        } else {
            ""
        },
        crate::query::view_of(&s.view.name)
    )
}

pub fn views(l: &ViewList) -> String {
    if l.views.is_empty() {
        return "🔖 No saved views yet. Save a query with jility_save_view.".to_string();
    }
    let mut out = format!("🔖 {} saved views\n", l.views.len());
    for v in &l.views {
        let _ = writeln!(out, "{}", line(v));
    }
    let _ = write!(out, "\nRun one with `view:NAME` in a query.");
    out
}

pub fn view_deleted(d: &ViewDeleted) -> String {
    format!("🗑️ Deleted view **{}**", d.name)
}
