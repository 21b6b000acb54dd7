//! The readable markdown of planning's answers: epics, sprints, their statistics and the
//! planner's proposal.

use std::fmt::Write;

use mcp_common_core::Page;

use super::{more, plural, summary_line};
use crate::model::Status;
use crate::tracker::*;

/// `1 point`, `3 points`.
pub fn points(n: impl Into<f64>) -> String {
    let n: f64 = n.into();
    if (n - 1.0).abs() < f64::EPSILON {
        "1 point".to_string()
    } else {
        format!("{n} points")
    }
}

/// A text progress bar of `width` cells for `percent`.
pub fn bar(percent: u8, width: usize) -> String {
    let filled = (usize::from(percent.min(100)) * width + 50) / 100;
    format!("{}{}", "█".repeat(filled), "░".repeat(width - filled))
}

fn progress_line(p: &EpicProgress) -> String {
    format!(
        "{} {}% of points ({}/{}), {}% of tickets ({}/{}){}",
        bar(p.percent_done_points, 20),
        p.percent_done_points,
        p.points_done,
        p.points_total,
        p.percent_done_count,
        p.tickets_done,
        p.tickets,
        if p.blocked > 0 {
            format!(", {} blocked", p.blocked)
        } else {
            String::new()
        }
    )
}

pub fn epics(list: &EpicList, page: &Page) -> String {
    let mut out = format!("🗂️ {}", plural(page.total as usize, "epic"));
    if list.epics.len() < page.total as usize {
        let _ = write!(out, " (showing {})", list.epics.len());
    }
    out.push('\n');
    for e in &list.epics {
        let _ = writeln!(
            out,
            "\n- {}: {} [{}]\n  {}",
            e.number,
            e.title,
            e.status.label(),
            progress_line(&e.progress)
        );
    }
    let mut out = out.trim_end().to_string();
    more(&mut out, page);
    out
}

pub fn epic(d: &EpicDetail, page: &Page) -> String {
    let e = &d.epic;
    let mut out = format!("🗂️ Epic {}: {}\n\n", e.number, e.title);
    let _ = writeln!(out, "**Status:** {}", e.status.label());
    let _ = writeln!(out, "**Progress:** {}", progress_line(&d.progress));
    let counts: Vec<String> = d
        .progress
        .by_status
        .iter()
        .map(|c| format!("{} {} ({} pts)", c.status.label(), c.tickets, c.points))
        .collect();
    if !counts.is_empty() {
        let _ = writeln!(out, "**By status:** {}", counts.join(", "));
    }
    if d.critical_path.steps.is_empty() {
        let _ = writeln!(out, "\n## Critical path\nNothing left to do in order.");
    } else {
        let _ = writeln!(
            out,
            "\n## Critical path ({} points left)",
            d.critical_path.points
        );
        for (i, s) in d.critical_path.steps.iter().enumerate() {
            let points = s
                .story_points
                .map(|p| format!(" • {p} pts"))
                .unwrap_or_default();
            let _ = write!(
                out,
                "{}. {}: {} [{}]{points}",
                i + 1,
                s.number,
                s.title,
                s.status.label()
            );
            if !s.blocked_by.is_empty() {
                let by: Vec<String> = s
                    .blocked_by
                    .iter()
                    .map(|b| format!("{} ({})", b.number, b.status.as_str()))
                    .collect();
                let _ = write!(out, " — waits on {}", by.join(", "));
            }
            out.push('\n');
        }
    }
    let _ = writeln!(out, "\n## Tickets ({})", page.total);
    for status in Status::GROUP_ORDER {
        let group: Vec<_> = d.tickets.iter().filter(|t| t.status == status).collect();
        if group.is_empty() {
            continue;
        }
        let _ = writeln!(out, "\n### {} ({})", status.label(), group.len());
        for t in group {
            let _ = writeln!(out, "{}", summary_line(t));
        }
    }
    let mut out = out.trim_end().to_string();
    more(&mut out, page);
    out
}

fn sprint_line(s: &Sprint) -> String {
    let capacity = s
        .capacity_points
        .map(|c| format!(" of {c} capacity"))
        .unwrap_or_default();
    format!(
        "{} #{} [{}] {} → {} • {} • {}/{} pts done{capacity}",
        s.name,
        s.number,
        s.state,
        s.starts_on,
        s.ends_on,
        plural(s.tickets as usize, "ticket"),
        s.points_done,
        s.points
    )
}

pub fn sprint_created(c: &SprintCreated) -> String {
    let mut out = format!("✅ Created sprint {}", sprint_line(&c.sprint));
    if let Some(goal) = &c.sprint.goal {
        let _ = write!(out, "\n**Goal:** {goal}");
    }
    out
}

pub fn added_to_sprint(a: &AddedToSprint) -> String {
    let mut out = format!(
        "✅ Added {} to {}\n",
        plural(a.added.len(), "ticket"),
        a.sprint.name
    );
    for t in &a.added {
        let from = t
            .moved_from
            .as_ref()
            .map(|f| format!(" (moved from {f})"))
            .unwrap_or_default();
        let _ = writeln!(out, "- {}: {}{from}", t.number, t.title);
    }
    if !a.already_in.is_empty() {
        let _ = writeln!(out, "Already in it: {}", a.already_in.join(", "));
    }
    let _ = write!(out, "\n{}", sprint_line(&a.sprint));
    if a.over_capacity {
        out.push_str("\n⚠️ Over capacity");
    }
    out
}

pub fn removed_from_sprint(r: &RemovedFromSprint) -> String {
    let mut out = format!(
        "✅ Moved {} from {} back to the backlog\n",
        plural(r.removed.len(), "ticket"),
        r.sprint.name
    );
    for t in &r.removed {
        let _ = writeln!(out, "- {}: {}", t.number, t.title);
    }
    if !r.not_in.is_empty() {
        let _ = writeln!(out, "Not in it: {}", r.not_in.join(", "));
    }
    let _ = write!(out, "\n{}", sprint_line(&r.sprint));
    out
}

pub fn sprint_started(s: &SprintStarted) -> String {
    format!(
        "🏁 Started {}\nCommitted: {} ({} points)",
        sprint_line(&s.sprint),
        plural(s.committed.len(), "ticket"),
        s.sprint.committed_points.unwrap_or(0)
    )
}

pub fn sprint_completed(c: &SprintCompleted) -> String {
    let mut out = format!(
        "✅ Completed {}\nDone: {} ({} points)",
        c.sprint.name,
        plural(c.completed.len(), "ticket"),
        c.sprint.completed_points.unwrap_or(0)
    );
    if c.carried_over.is_empty() {
        out.push_str("\nNothing to carry over.");
    } else {
        let to = c.carried_to.as_deref().unwrap_or("the backlog");
        let _ = write!(
            out,
            "\nCarried over to {to}: {} ({} points)",
            c.carried_over.join(", "),
            c.carried_points
        );
    }
    out
}

pub fn sprints(list: &SprintList, page: &Page) -> String {
    let mut out = format!("🏃 {}", plural(page.total as usize, "sprint"));
    out.push('\n');
    for s in &list.sprints {
        let _ = writeln!(out, "- {}", sprint_line(s));
    }
    let mut out = out.trim_end().to_string();
    more(&mut out, page);
    out
}

/// A burndown as text: one row per day, remaining beside ideal, with a bar.
pub fn burndown_chart(days: &[BurndownDay], width: usize) -> String {
    let top = days
        .iter()
        .map(|d| d.remaining as f64)
        .chain(days.iter().map(|d| d.ideal))
        .fold(0.0_f64, f64::max);
    let mut out = String::new();
    for d in days {
        let cells = if top > 0.0 {
            ((d.remaining as f64 / top) * width as f64).round() as usize
        } else {
            0
        };
        let _ = writeln!(
            out,
            "{} {:<width$} {:>4} (ideal {:.1})",
            d.date,
            "▇".repeat(cells),
            d.remaining,
            d.ideal
        );
    }
    out
}

pub fn sprint_stats(s: &SprintStats) -> String {
    let mut out = format!("📈 {}\n\n", sprint_line(&s.sprint));
    let _ = writeln!(out, "**Committed:** {}", points(s.committed_points as f64));
    let _ = writeln!(
        out,
        "**Completed:** {} points • **Remaining:** {} points",
        s.completed_points, s.remaining_points
    );
    let _ = writeln!(
        out,
        "**Added after start:** {} points • **Removed:** {} points",
        s.added_points, s.removed_points
    );
    if s.sprint.state != "completed" {
        let _ = writeln!(out, "**Days left:** {}", s.days_left);
    }
    if let Some(f) = &s.forecast {
        let end = f
            .ends_on
            .as_deref()
            .map(|e| format!("done by {e}"))
            .unwrap_or_else(|| "no pace yet".to_string());
        let _ = writeln!(
            out,
            "**Forecast:** {} a day, {end} ({})",
            points(f.pace),
            if f.on_track { "on track" } else { "behind" }
        );
    }
    if !s.burndown.is_empty() {
        let _ = writeln!(
            out,
            "\n## Burndown\n```\n{}```",
            burndown_chart(&s.burndown, 30)
        );
    }
    let v: Vec<String> = s
        .velocity
        .sprints
        .iter()
        .map(|v| format!("{} {}", v.name, v.completed_points))
        .collect();
    match s.velocity.mean {
        Some(mean) => {
            let _ = writeln!(out, "\n**Velocity:** {} (mean {mean})", v.join(", "));
        }
        None => out.push_str("\n**Velocity:** no completed sprint yet\n"),
    }
    if !s.carry_over.is_empty() {
        let _ = writeln!(
            out,
            "**Carry-over:** {} ({} points)",
            s.carry_over.join(", "),
            s.carry_over_points
        );
    }
    out.trim_end().to_string()
}

pub fn sprint_plan(p: &SprintPlan) -> String {
    let mut out = format!(
        "🧭 Plan for {}: {} of {} points proposed ({} capacity from the {}; {} planned already)\n",
        p.sprint.name,
        p.proposed_points,
        p.capacity_points.saturating_sub(p.planned_points),
        p.capacity_points,
        p.capacity_source,
        p.planned_points
    );
    if p.proposed.is_empty() {
        out.push_str("\nNothing fits.\n");
    } else {
        out.push_str("\n## Proposed\n");
        for (i, t) in p.proposed.iter().enumerate() {
            let _ = writeln!(
                out,
                "{}. {}: {} • {} pts — {}",
                i + 1,
                t.number,
                t.title,
                t.story_points,
                t.reason
            );
        }
    }
    if p.left_out_total > 0 {
        let _ = writeln!(out, "\n## Left out ({})", p.left_out_label());
        for t in &p.left_out {
            let _ = writeln!(out, "- {}: {} — {}", t.number, t.title, t.reason);
        }
        if let Some(rest) = p.left_out_rest() {
            let _ = writeln!(out, "{rest}");
        }
    }
    if !p.tickets.is_empty() {
        let _ = write!(
            out,
            "\nApply it: jility_add_to_sprint with tickets [{}]",
            p.tickets.join(", ")
        );
    }
    out.trim_end().to_string()
}
