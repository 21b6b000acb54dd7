//! Planning's answers as people read them in a terminal: epics with progress bars, sprints
//! as tables, a sprint's figures with a burndown drawn in text, the planner's proposal.

use jility_core::model::Status;
use jility_core::render::{bar, burndown_chart, points as words};

/// `1 point`, `3 points`.
fn points_of(n: u64) -> String {
    words(n as f64)
}
use jility_core::tracker::{
    AddedToSprint, EpicDetail, EpicList, EpicProgress, RemovedFromSprint, Sprint, SprintCompleted,
    SprintCreated, SprintList, SprintPlan, SprintStarted, SprintStats,
};
use mcp_common::Page;

use super::views::{facts, heading, indent, more, points, table};
use super::{AnsiColor, Painter};

/// A progress bar, green once done.
fn progress_bar(p: &Painter, percent: u8) -> String {
    let bar = bar(percent, 20);
    if percent >= 100 {
        p.fg(AnsiColor::Green, &bar)
    } else {
        bar
    }
}

fn progress_cell(p: &Painter, g: &EpicProgress) -> String {
    format!(
        "{} {:>3}%",
        progress_bar(p, g.percent_done_points),
        g.percent_done_points
    )
}

pub fn epics(p: &Painter, list: &EpicList, page: &Page) -> String {
    if list.epics.is_empty() {
        return format!(
            "No epics.\n{}",
            p.hint("Make one: jility ticket create --kind epic --title \"…\"")
        );
    }
    let rows = list
        .epics
        .iter()
        .map(|e| {
            vec![
                p.number(&e.number),
                p.status(e.status),
                e.title.clone(),
                progress_cell(p, &e.progress),
                format!("{}/{}", e.progress.points_done, e.progress.points_total),
                format!("{}/{}", e.progress.tickets_done, e.progress.tickets),
                if e.progress.blocked > 0 {
                    p.fg(AnsiColor::Red, &e.progress.blocked.to_string())
                } else {
                    String::new()
                },
            ]
        })
        .collect();
    format!(
        "{}\n\n{}",
        table(
            p,
            &[
                "EPIC", "STATUS", "TITLE", "PROGRESS", "POINTS", "TICKETS", "BLOCKED"
            ],
            rows
        ),
        more(p, list.epics.len(), "epics", page, "jility epic list")
    )
}

pub fn epic(p: &Painter, d: &EpicDetail, page: &Page) -> String {
    let e = &d.epic;
    let g = &d.progress;
    let mut out = format!("{}  {}\n", p.number(&e.number), p.bold(&e.title));
    let mut rows = vec![
        ("Status", p.status(e.status)),
        ("Progress", progress_cell(p, g)),
        (
            "Points",
            format!("{} of {} done", g.points_done, g.points_total),
        ),
        (
            "Tickets",
            format!(
                "{} of {} done ({}%)",
                g.tickets_done, g.tickets, g.percent_done_count
            ),
        ),
    ];
    if g.blocked > 0 {
        rows.push(("Blocked", p.fg(AnsiColor::Red, &g.blocked.to_string())));
    }
    out.push_str(&facts(p, &rows));
    out.push_str(&format!("\n\n{}\n", heading(p, "Critical path")));
    if d.critical_path.steps.is_empty() {
        out.push_str(&format!("  {}\n", p.dim("(nothing left to do in order)")));
    } else {
        let rows = d
            .critical_path
            .steps
            .iter()
            .map(|s| {
                vec![
                    p.number(&s.number),
                    p.status(s.status),
                    s.title.clone(),
                    points(s.story_points),
                    s.blocked_by
                        .iter()
                        .map(|b| format!("{} ({})", b.number, b.status.as_str()))
                        .collect::<Vec<_>>()
                        .join(", "),
                ]
            })
            .collect();
        out.push_str(&indent(&table(
            p,
            &["TICKET", "STATUS", "TITLE", "PTS", "WAITS ON"],
            rows,
        )));
        out.push_str(&format!(
            "\n  {}\n",
            p.dim(&format!(
                "{} points left on this path",
                d.critical_path.points
            ))
        ));
    }
    out.push_str(&format!("\n{}\n", heading(p, "Tickets")));
    let rows = Status::GROUP_ORDER
        .iter()
        .flat_map(|s| d.tickets.iter().filter(move |t| t.status == *s))
        .map(|t| {
            vec![
                p.number(&t.number),
                p.status(t.status),
                t.title.clone(),
                p.people(&t.assignees),
                points(t.story_points),
            ]
        })
        .collect();
    out.push_str(&indent(&table(
        p,
        &["TICKET", "STATUS", "TITLE", "ASSIGNEES", "PTS"],
        rows,
    )));
    out.push_str(&format!(
        "\n\n{}",
        more(
            p,
            d.tickets.len(),
            "tickets",
            page,
            &format!("jility epic show {}", e.number)
        )
    ));
    out
}

fn sprint_facts(p: &Painter, s: &Sprint) -> String {
    let mut rows = vec![
        ("State", state(p, &s.state)),
        ("Dates", format!("{} → {}", s.starts_on, s.ends_on)),
        (
            "Points",
            format!(
                "{} of {} done, {} tickets",
                s.points_done, s.points, s.tickets
            ),
        ),
    ];
    if let Some(c) = s.capacity_points {
        let fill = capacity_meter(p, s.points, c);
        rows.push(("Capacity", fill));
    }
    if let Some(goal) = &s.goal {
        rows.push(("Goal", goal.clone()));
    }
    facts(p, &rows)
}

fn capacity_meter(p: &Painter, points: u64, capacity: i64) -> String {
    let capacity = capacity.max(1) as u64;
    let percent = (points.saturating_mul(100) / capacity).min(100) as u8;
    let text = format!("{} {points}/{capacity}", bar(percent, 20));
    if points > capacity {
        p.fg(AnsiColor::Red, &format!("{text} over capacity"))
    } else {
        text
    }
}

fn state(p: &Painter, state: &str) -> String {
    match state {
        "active" => p.fg(AnsiColor::Green, state),
        "completed" => p.dim(state),
        _ => state.to_string(),
    }
}

pub fn sprint_created(p: &Painter, c: &SprintCreated) -> String {
    format!(
        "{} Created sprint {} (#{})\n{}\n\n{}",
        p.ok(),
        p.bold(&c.sprint.name),
        c.sprint.number,
        sprint_facts(p, &c.sprint),
        p.hint(&format!(
            "Fill it: jility sprint add \"{}\" KEY-N … (or see jility sprint plan \"{}\")",
            c.sprint.name, c.sprint.name
        ))
    )
}

pub fn added(p: &Painter, a: &AddedToSprint) -> String {
    let mut out = format!(
        "{} Added {} to {}\n",
        p.ok(),
        a.added.len(),
        p.bold(&a.sprint.name)
    );
    for t in &a.added {
        let from = t
            .moved_from
            .as_ref()
            .map(|f| p.dim(&format!(" (from {f})")))
            .unwrap_or_default();
        out.push_str(&format!("  {}  {}{from}\n", p.number(&t.number), t.title));
    }
    if !a.already_in.is_empty() {
        out.push_str(&format!(
            "  {}\n",
            p.dim(&format!("already in it: {}", a.already_in.join(", ")))
        ));
    }
    out.push_str(&sprint_facts(p, &a.sprint));
    out
}

pub fn removed(p: &Painter, r: &RemovedFromSprint) -> String {
    let mut out = format!(
        "{} Moved {} from {} to the backlog\n",
        p.ok(),
        r.removed.len(),
        p.bold(&r.sprint.name)
    );
    for t in &r.removed {
        out.push_str(&format!("  {}  {}\n", p.number(&t.number), t.title));
    }
    if !r.not_in.is_empty() {
        out.push_str(&format!(
            "  {}\n",
            p.dim(&format!("not in it: {}", r.not_in.join(", ")))
        ));
    }
    out.push_str(&sprint_facts(p, &r.sprint));
    out
}

pub fn started(p: &Painter, s: &SprintStarted) -> String {
    format!(
        "{} Started {}: {} tickets, {} points committed\n{}",
        p.ok(),
        p.bold(&s.sprint.name),
        s.committed.len(),
        s.sprint.committed_points.unwrap_or(0),
        sprint_facts(p, &s.sprint)
    )
}

pub fn completed(p: &Painter, c: &SprintCompleted) -> String {
    let mut out = format!(
        "{} Completed {}: {} tickets, {} points done\n",
        p.ok(),
        p.bold(&c.sprint.name),
        c.completed.len(),
        c.sprint.completed_points.unwrap_or(0)
    );
    if c.carried_over.is_empty() {
        out.push_str(&format!("  {}", p.dim("nothing to carry over")));
    } else {
        out.push_str(&format!(
            "  carried over to {}: {} ({} points)",
            c.carried_to.as_deref().unwrap_or("the backlog"),
            c.carried_over.join(", "),
            c.carried_points
        ));
    }
    out
}

pub fn sprints(p: &Painter, list: &SprintList, page: &Page) -> String {
    if list.sprints.is_empty() {
        return format!(
            "No sprints.\n{}",
            p.hint(
                "Make one: jility sprint create \"Sprint 1\" --starts 2026-12-07 --ends 2026-12-18"
            )
        );
    }
    let rows = list
        .sprints
        .iter()
        .map(|s| {
            vec![
                s.number.to_string(),
                p.bold(&s.name),
                state(p, &s.state),
                format!("{} → {}", s.starts_on, s.ends_on),
                s.tickets.to_string(),
                format!("{}/{}", s.points_done, s.points),
                s.capacity_points.map(|c| c.to_string()).unwrap_or_default(),
            ]
        })
        .collect();
    format!(
        "{}\n\n{}",
        table(
            p,
            &[
                "#", "SPRINT", "STATE", "DATES", "TICKETS", "DONE/PTS", "CAPACITY"
            ],
            rows
        ),
        more(p, list.sprints.len(), "sprints", page, "jility sprint list")
    )
}

pub fn stats(p: &Painter, s: &SprintStats) -> String {
    let mut out = format!(
        "{}  {}\n{}\n\n",
        p.bold(&s.sprint.name),
        p.dim(&format!("#{}", s.sprint.number)),
        sprint_facts(p, &s.sprint)
    );
    let mut rows = vec![
        ("Committed", points_of(s.committed_points)),
        ("Completed", points_of(s.completed_points)),
        (
            "Added",
            format!("{} points after the start", s.added_points),
        ),
        (
            "Removed",
            format!("{} points after the start", s.removed_points),
        ),
        ("Remaining", points_of(s.remaining_points)),
    ];
    if s.sprint.state != "completed" {
        rows.push(("Days left", s.days_left.to_string()));
    }
    if let Some(f) = &s.forecast {
        let end = f
            .ends_on
            .clone()
            .unwrap_or_else(|| "no pace yet".to_string());
        let track = if f.on_track {
            p.fg(AnsiColor::Green, "on track")
        } else {
            p.fg(AnsiColor::Red, "behind")
        };
        rows.push((
            "Forecast",
            format!("{end} at {} a day, {track}", words(f.pace)),
        ));
    }
    let velocity = match s.velocity.mean {
        Some(mean) => format!(
            "{} (mean {mean})",
            s.velocity
                .sprints
                .iter()
                .map(|v| format!("{} {}", v.name, v.completed_points))
                .collect::<Vec<_>>()
                .join(", ")
        ),
        None => "no completed sprint yet".to_string(),
    };
    rows.push(("Velocity", velocity));
    if !s.carry_over.is_empty() {
        rows.push((
            "Carry-over",
            format!(
                "{} ({} points)",
                s.carry_over.join(", "),
                s.carry_over_points
            ),
        ));
    }
    out.push_str(&facts(p, &rows));
    if !s.burndown.is_empty() {
        out.push_str(&format!(
            "\n\n{}\n{}",
            heading(p, "Burndown (remaining points at the end of each day)"),
            indent(burndown_chart(&s.burndown, 30).trim_end())
        ));
    }
    out
}

pub fn plan(p: &Painter, plan: &SprintPlan) -> String {
    let mut out = format!(
        "{}  {}\n",
        p.bold(&format!("Plan for {}", plan.sprint.name)),
        p.dim(&format!(
            "{} of {} points proposed ({} capacity from the {}, {} planned already)",
            plan.proposed_points,
            plan.capacity_points.saturating_sub(plan.planned_points),
            plan.capacity_points,
            plan.capacity_source,
            plan.planned_points
        ))
    );
    if plan.proposed.is_empty() {
        out.push_str(&format!("  {}\n", p.dim("nothing fits")));
    } else {
        let rows = plan
            .proposed
            .iter()
            .map(|t| {
                vec![
                    p.number(&t.number),
                    p.status(t.status),
                    t.title.clone(),
                    t.story_points.to_string(),
                    p.dim(&t.reason),
                ]
            })
            .collect();
        out.push_str(&indent(&table(
            p,
            &["TICKET", "STATUS", "TITLE", "PTS", "WHY"],
            rows,
        )));
        out.push('\n');
    }
    if plan.left_out_total > 0 {
        out.push_str(&format!(
            "\n{}\n",
            heading(p, &format!("Left out ({})", plan.left_out_label()))
        ));
        let rows = plan
            .left_out
            .iter()
            .map(|t| {
                vec![
                    p.number(&t.number),
                    t.title.clone(),
                    points(t.story_points),
                    p.dim(&t.reason),
                ]
            })
            .collect();
        out.push_str(&indent(&table(p, &["TICKET", "TITLE", "PTS", "WHY"], rows)));
        out.push('\n');
        if let Some(rest) = plan.left_out_rest() {
            out.push_str(&indent(&p.dim(&rest)));
            out.push('\n');
        }
    }
    if !plan.tickets.is_empty() {
        out.push_str(&format!(
            "\n{}",
            p.hint(&format!(
                "Apply it: jility sprint add \"{}\" {}",
                plan.sprint.name,
                plan.tickets.join(" ")
            ))
        ));
    }
    out.trim_end().to_string()
}
