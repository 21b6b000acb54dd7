//! The readable markdown of every answer, as the design shows it. The MCP tools send it
//! as their text block (beside the same facts as JSON) and the CLI prints it.

use std::fmt::Write;

use mcp_common_core::Page;

use crate::model::{Kind, Status, Ticket, TicketRef, TicketSummary};
use crate::tracker::*;

mod bulk;
mod inbox;
mod planning;
mod related;
mod views;

pub use bulk::*;
pub use inbox::*;
pub use planning::*;
pub use related::*;
pub use views::*;

pub(crate) fn names(list: &[String], none: &str) -> String {
    if list.is_empty() {
        none.to_string()
    } else {
        list.join(", ")
    }
}

/// `1 ticket`, `2 tickets`.
pub(crate) fn plural(n: usize, noun: &str) -> String {
    if n == 1 {
        format!("1 {noun}")
    } else {
        format!("{n} {noun}s")
    }
}

fn quote(text: &str) -> String {
    text.lines()
        .map(|l| format!("> {l}"))
        .collect::<Vec<_>>()
        .join("\n")
}

fn ticket_facts(out: &mut String, t: &Ticket) {
    let _ = writeln!(out, "**Title:** {}", t.title);
    let _ = writeln!(out, "**Status:** {}", t.status.label());
    if let Some(points) = t.story_points {
        let _ = writeln!(out, "**Story Points:** {points}");
    }
    let _ = writeln!(out, "**Assignees:** {}", names(&t.assignees, "unassigned"));
    if !t.labels.is_empty() {
        let _ = writeln!(out, "**Labels:** {}", t.labels.join(", "));
    }
    if let Some(parent) = &t.parent {
        let _ = writeln!(out, "**Parent:** {parent}");
    }
    if let Some(epic) = &t.epic {
        let _ = writeln!(out, "**Epic:** {epic}");
    }
    if t.kind == Kind::Epic {
        let _ = writeln!(out, "**Kind:** epic");
    }
    if let Some(sprint) = &t.sprint {
        let _ = writeln!(out, "**Sprint:** {sprint}");
    }
}

pub fn created(c: &Created) -> String {
    let t = &c.ticket;
    let mut out = match &c.template {
        Some(name) => format!("✅ Created {} from template '{name}'\n\n", t.number),
        None => format!("✅ Created ticket {}\n\n", t.number),
    };
    ticket_facts(&mut out, t);
    if c.template.is_some() && !t.description.is_empty() {
        let _ = writeln!(out, "**Description:**\n{}", t.description.trim_end());
    }
    if !c.likely_duplicates.is_empty() {
        let _ = writeln!(
            out,
            "\n⚠️ It may duplicate (created all the same; see jility_suggest_related):"
        );
        for d in &c.likely_duplicates {
            let _ = writeln!(out, "{}", related_line(d));
        }
    }
    let _ = write!(out, "\nView: `jility ticket show {}`", t.number);
    out
}

pub fn batch(b: &BatchCreated) -> String {
    let mut out = match &b.parent {
        Some(parent) => format!(
            "✅ Created {} under {}\n\n",
            plural(b.tickets.len(), "ticket"),
            parent.number
        ),
        None => format!("✅ Created {}\n\n", plural(b.tickets.len(), "ticket")),
    };
    for t in &b.tickets {
        let points = t
            .story_points
            .map(|p| format!(" ({p} pts)"))
            .unwrap_or_default();
        let _ = write!(
            out,
            "- {}: {}{points} → {}",
            t.number,
            t.title,
            names(&t.assignees, "unassigned")
        );
        if !t.depends_on.is_empty() {
            let _ = write!(out, " (depends on {})", t.depends_on.join(", "));
        }
        out.push('\n');
    }
    let _ = write!(out, "\nTotal: {} story points", b.total_story_points);
    out
}

fn ref_line(r: &TicketRef) -> String {
    format!("- {}: {} ({})", r.number, r.title, r.status)
}

pub fn detail(d: &TicketDetail) -> String {
    let t = &d.ticket;
    let mut out = format!("# {}: {}\n\n", t.number, t.title);
    ticket_facts(&mut out, t);
    let _ = writeln!(out, "**Created:** {} by {}", t.created_at, t.created_by);
    let _ = writeln!(out, "**Updated:** {} by {}", t.updated_at, t.updated_by);
    let _ = writeln!(out, "**ID:** {}", t.id);
    out.push_str("\n## Description\n\n");
    if t.description.trim().is_empty() {
        out.push_str("(empty)\n");
    } else {
        let _ = writeln!(out, "{}", t.description.trim_end());
    }
    if !d.dependencies.is_empty() {
        let _ = writeln!(out, "\n## Depends on ({})", d.dependencies.len());
        for r in &d.dependencies {
            let _ = writeln!(out, "{}", ref_line(r));
        }
    }
    if !d.dependents.is_empty() {
        let _ = writeln!(out, "\n## Blocks ({})", d.dependents.len());
        for r in &d.dependents {
            let _ = writeln!(out, "{}", ref_line(r));
        }
    }
    if !d.linked_commits.is_empty() {
        let _ = writeln!(out, "\n## Commits ({})", d.linked_commits.len());
        for c in &d.linked_commits {
            let short: String = c.hash.chars().take(10).collect();
            match &c.message {
                Some(m) => {
                    let _ = writeln!(out, "- {short}: {m}");
                }
                None => {
                    let _ = writeln!(out, "- {short}");
                }
            }
        }
    }
    if d.comment_count > 0 {
        let shown = if d.comment_count > d.comments.len() {
            format!(" (newest {} of {})", d.comments.len(), d.comment_count)
        } else {
            format!(" ({})", d.comment_count)
        };
        let _ = writeln!(out, "\n## Comments{shown}");
        for c in &d.comments {
            let _ = writeln!(
                out,
                "\n**{}** at {}:\n{}",
                c.author,
                c.created_at,
                quote(&c.content)
            );
        }
    }
    if !d.recent_changes.is_empty() {
        let _ = writeln!(out, "\n## Recent changes");
        for c in &d.recent_changes {
            let mut line = format!("- {} {} by {}", c.changed_at, c.change_type, c.changed_by);
            match (&c.old_value, &c.new_value) {
                (Some(old), Some(new)) if !old.is_empty() => {
                    let _ = write!(line, ": {old} → {new}");
                }
                (_, Some(new)) if !new.is_empty() => {
                    let _ = write!(line, ": {new}");
                }
                (Some(old), None) if c.change_type.ends_with("_removed") => {
                    let _ = write!(line, ": {old}");
                }
                (Some(old), None) | (Some(old), Some(_)) if !old.is_empty() => {
                    let _ = write!(line, ": {old} → (none)");
                }
                _ => {}
            }
            if let Some(detail) = &c.detail {
                let _ = write!(line, " ({detail})");
            }
            if let Some(message) = &c.message {
                let _ = write!(line, " — {message}");
            }
            let _ = writeln!(out, "{line}");
        }
    }
    let _ = write!(out, "\nHistory: `jility ticket history {}`", t.number);
    out
}

pub(crate) fn summary_line(t: &TicketSummary) -> String {
    let points = t
        .story_points
        .map(|p| format!(" • {p} pts"))
        .unwrap_or_default();
    format!(
        "- {}: {} ({}){points}",
        t.number,
        t.title,
        names(&t.assignees, "unassigned")
    )
}

/// "More: pass cursor … for the next page." when there is one.
pub(crate) fn more(out: &mut String, page: &Page) {
    if let Some(cursor) = &page.next_cursor {
        let _ = write!(out, "\n\nMore: pass cursor \"{cursor}\" for the next page.");
    }
}

pub fn page(p: &TicketPage, page: &Page) -> String {
    let total = usize::try_from(page.total).unwrap_or(usize::MAX);
    let mut out = if page.total_exact == Some(false) {
        format!("📋 Found more than {total} tickets")
    } else {
        format!("📋 Found {}", plural(total, "ticket"))
    };
    if p.tickets.len() < total {
        let _ = write!(out, " (showing {})", p.tickets.len());
    }
    out.push('\n');
    for status in Status::GROUP_ORDER {
        let group: Vec<&TicketSummary> = p.tickets.iter().filter(|t| t.status == status).collect();
        if group.is_empty() {
            continue;
        }
        let _ = writeln!(out, "\n## {} ({})", status.label(), group.len());
        for t in group {
            let _ = writeln!(out, "{}", summary_line(t));
        }
    }
    let mut out = out.trim_end().to_string();
    more(&mut out, page);
    out
}

pub fn claimed(c: &Claimed) -> String {
    let mut out = if c.already_claimed {
        format!(
            "✅ {} is already yours ({})\n\n",
            c.ticket.number, c.assignee
        )
    } else {
        format!(
            "✅ Claimed {} and assigned to {}\n\n",
            c.ticket.number, c.assignee
        )
    };
    let _ = writeln!(out, "**Title:** {}", c.ticket.title);
    if c.previous_status != c.ticket.status {
        let _ = writeln!(
            out,
            "**Status:** {} (moved from {})",
            c.ticket.status.label(),
            c.previous_status.label()
        );
    } else {
        let _ = writeln!(out, "**Status:** {}", c.ticket.status.label());
    }
    if let Some(points) = c.story_points {
        let _ = writeln!(out, "**Story Points:** {points}");
    }
    let _ = write!(
        out,
        "\nGet context: `jility ticket show {}`",
        c.ticket.number
    );
    out
}

pub fn description_updated(d: &DescriptionUpdated) -> String {
    let mut out = if d.changed {
        format!("✅ Updated description for {}\n\n", d.number)
    } else {
        format!(
            "✅ Description of {} unchanged (the edit left the same text)\n\n",
            d.number
        )
    };
    let _ = writeln!(out, "**Operation:** {}", d.summary);
    let _ = writeln!(out, "**Changed by:** {}", d.changed_by);
    if let Some(message) = &d.message {
        let _ = writeln!(out, "**Message:** {message}");
    }
    let _ = writeln!(
        out,
        "**Version:** {} (+{} −{} lines, {} lines now)",
        d.version, d.diff.added, d.diff.removed, d.lines
    );
    let _ = write!(
        out,
        "\nVersion history: `jility ticket history {}`",
        d.number
    );
    out
}

pub fn status_updated(s: &StatusUpdated) -> String {
    if !s.changed {
        return format!("✅ {} is already {}", s.number, s.current.label());
    }
    let mut out = format!("✅ Moved {} to {}\n\n", s.number, s.current.label());
    let _ = writeln!(out, "**Previous:** {}", s.previous.label());
    let _ = writeln!(out, "**Current:** {}", s.current.label());
    let _ = writeln!(out, "**Changed by:** {}", s.changed_by);
    if let Some(message) = &s.message {
        let _ = writeln!(out, "**Message:** {message}");
    }
    match s.current {
        Status::Review => out.push_str("\nReady for human review! 🎉"),
        Status::Done => out.push_str("\nDone! ✔"),
        Status::Blocked => out.push_str("\nSay what blocks it in a comment (jility_add_comment)."),
        _ => {}
    }
    out.trim_end().to_string()
}

pub fn comment_added(c: &CommentAdded) -> String {
    format!(
        "✅ Added comment to {}\n\n**From:** {}\n**Content:**\n{}\n\nView: `jility ticket show {}`",
        c.number,
        c.comment.author,
        quote(&c.comment.content),
        c.number
    )
}

pub fn assigned(a: &Assigned) -> String {
    let verb = if a.current.is_empty() {
        "Unassigned"
    } else if a.previous.is_empty() {
        "Assigned"
    } else {
        "Reassigned"
    };
    let mut out = format!("✅ {verb} {}\n\n", a.number);
    let _ = writeln!(out, "**Previous:** {}", names(&a.previous, "unassigned"));
    let pairing = if a.current.len() > 1 {
        " (pairing)"
    } else {
        ""
    };
    let _ = writeln!(
        out,
        "**Current:** {}{pairing}",
        names(&a.current, "unassigned")
    );
    if let Some(message) = &a.message {
        let _ = writeln!(out, "**Message:** \"{message}\"");
    }
    if a.comment_added {
        out.push_str("\nHandoff message added as comment.");
    }
    out.trim_end().to_string()
}

pub fn commit_linked(c: &CommitLinked) -> String {
    let short: String = c.commit.hash.chars().take(10).collect();
    let mut out = if c.already_linked {
        format!("✅ Commit {short} was already linked to {}\n\n", c.number)
    } else {
        format!("✅ Linked commit to {}\n\n", c.number)
    };
    let _ = writeln!(out, "**Commit:** {short}");
    if let Some(message) = &c.commit.message {
        let _ = writeln!(out, "**Message:** {message}");
    }
    let _ = write!(out, "\nView commits: `jility ticket show {}`", c.number);
    out
}

fn chain(refs: &[TicketRef]) -> String {
    refs.iter()
        .map(|r| format!("{} ({})", r.number, r.status))
        .collect::<Vec<_>>()
        .join(" → ")
}

pub fn dependency_added(d: &DependencyAdded) -> String {
    let mut out = if d.already_existed {
        "✅ Dependency already present\n\n".to_string()
    } else {
        "✅ Added dependency\n\n".to_string()
    };
    let _ = writeln!(
        out,
        "{} now depends on {}\n",
        d.ticket.number, d.depends_on.number
    );
    let _ = writeln!(out, "**Dependency chain:**\n{}\n", chain(&d.chain));
    if d.is_blocked {
        if d.depends_on.status == Status::Done {
            let _ = write!(
                out,
                "{} is blocked until its other dependencies are complete ({} is done).",
                d.ticket.number, d.depends_on.number
            );
        } else {
            let _ = write!(
                out,
                "{} is blocked until {} is complete.",
                d.ticket.number, d.depends_on.number
            );
        }
    } else {
        let _ = write!(
            out,
            "{} is not blocked: its dependencies are done.",
            d.ticket.number
        );
    }
    out
}

pub fn dependency_removed(d: &DependencyRemoved) -> String {
    let mut out = format!(
        "✅ Removed dependency\n\n{} no longer depends on {}\n",
        d.ticket.number, d.depends_on.number
    );
    if d.is_blocked {
        let _ = write!(
            out,
            "\n{} still waits on other dependencies.",
            d.ticket.number
        );
    }
    out.trim_end().to_string()
}

pub fn graph(g: &DependencyGraph) -> String {
    let mut out = format!(
        "🔗 Dependencies of {}: {} ({})\n",
        g.ticket, g.title, g.status
    );
    let _ = writeln!(
        out,
        "\n**Blocked:** {} • **Blocking:** {} ticket(s)",
        if g.is_blocked { "yes" } else { "no" },
        g.blocking_count
    );
    let section = |out: &mut String, title: &str, nodes: &[GraphNode]| {
        if nodes.is_empty() {
            let _ = writeln!(out, "\n## {title}\n(none)");
            return;
        }
        let _ = writeln!(out, "\n## {title} ({})", nodes.len());
        for n in nodes {
            let indent = "  ".repeat(n.depth.saturating_sub(1));
            let _ = writeln!(out, "{indent}- {}: {} ({})", n.number, n.title, n.status);
        }
    };
    section(&mut out, "Depends on", &g.upstream);
    section(&mut out, "Blocks", &g.downstream);
    if g.truncated {
        out.push_str("\n(graph cut at 500 tickets per direction)");
    }
    out.trim_end().to_string()
}

pub fn templates(t: &TemplateList, page: &Page) -> String {
    let mut out = "📋 Available Templates\n\n".to_string();
    for (i, template) in t.templates.iter().enumerate() {
        let vars = if template.variables.is_empty() {
            String::new()
        } else {
            format!(" (variables: {})", template.variables.join(", "))
        };
        let _ = writeln!(
            out,
            "{}. **{}** - {}{vars}",
            i + 1,
            template.name,
            template.description
        );
    }
    for problem in &t.problems {
        let _ = writeln!(out, "\n⚠️ Skipped {}: {}", problem.path, problem.message);
    }
    let mut out = out.trim_end().to_string();
    more(&mut out, page);
    out
}

pub fn search(s: &SearchResults, page: &Page) -> String {
    let total = usize::try_from(page.total).unwrap_or(usize::MAX);
    let noun = if total == 1 { "ticket" } else { "tickets" };
    // Past the store's cap the count is a lower bound.
    let at_least = if page.total_exact == Some(false) {
        "at least "
    } else {
        ""
    };
    let mut out = format!("🔍 Found {at_least}{total} {noun} matching \"{}\"", s.query);
    if s.hits.len() < total {
        let _ = write!(out, " (top {})", s.hits.len());
    }
    out.push('\n');
    for (i, h) in s.hits.iter().enumerate() {
        let _ = writeln!(
            out,
            "\n{}. **{}** • {} ({})",
            i + 1,
            h.number,
            h.title,
            h.status
        );
        let snippet = h.snippet.split_whitespace().collect::<Vec<_>>().join(" ");
        if !snippet.is_empty() {
            let _ = writeln!(out, "   > {snippet}");
        }
    }
    let mut out = out.trim_end().to_string();
    more(&mut out, page);
    out
}

pub fn history(h: &History) -> String {
    let mut out = format!(
        "📜 Description history of {}: {} ({})\n",
        h.number,
        h.title,
        plural(h.current_version, "version")
    );
    for v in &h.versions {
        let _ = write!(
            out,
            "\n## Version {} — {} at {}",
            v.version, v.changed_by, v.changed_at
        );
        if v.version == h.current_version {
            out.push_str(" (current)");
        }
        out.push('\n');
        if let Some(op) = &v.operation {
            let _ = writeln!(out, "**Operation:** {op}");
        }
        if let Some(message) = &v.message {
            let _ = writeln!(out, "**Message:** {message}");
        }
        let _ = writeln!(out, "+{} −{} lines", v.added, v.removed);
        if !v.diff.is_empty() {
            let _ = writeln!(out, "```diff\n{}\n```", v.diff.trim_end());
        }
    }
    let _ = write!(
        out,
        "\nRestore a version: jility_revert_description (CLI: `jility ticket history {} --revert N`)",
        h.number
    );
    out
}

pub fn edited(e: &Edited) -> String {
    if e.changed.is_empty() {
        return format!("✅ {} unchanged", e.ticket.number);
    }
    let mut out = format!(
        "✅ Updated {} ({})\n\n",
        e.ticket.number,
        e.changed.join(", ")
    );
    ticket_facts(&mut out, &e.ticket);
    out.trim_end().to_string()
}

pub fn deleted(d: &Deleted) -> String {
    format!("🗑️ Deleted {}: {}", d.number, d.title)
}
