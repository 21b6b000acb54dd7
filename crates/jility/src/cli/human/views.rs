//! Each answer of the tracker as people read it in a terminal: a line that says what
//! happened, the facts aligned, lists as tables, a ticket as a page whose description and
//! comments are rendered markdown nested under its headings, and what to run next.

use comfy_table::{ContentArrangement, Table, presets};
use jility_core::model::{Change, Status, TicketRef, TicketSummary};
use jility_core::tracker::{
    Assigned, Claimed, CommentAdded, CommitLinked, Created, Deleted, DependencyAdded,
    DependencyGraph, DependencyRemoved, DescriptionUpdated, Edited, History, SearchResults,
    StatusUpdated, TemplateList, TicketDetail, TicketPage,
};
use mcp_common::Page;

use super::{AnsiColor, Painter, markdown};

/// A table of `rows` under `header`, fitted to the width (its last wide column wraps)
/// unless that would take long ([`super::fits_quickly`]).
pub fn table(p: &Painter, header: &[&str], rows: Vec<Vec<String>>) -> String {
    let mut table = Table::new();
    table.load_style(presets::NOTHING);
    match p.width {
        Some(width) if super::fits_quickly(rows.iter().flatten()) => {
            table.set_content_arrangement(ContentArrangement::Dynamic);
            table.set_width(u16::try_from(width).unwrap_or(u16::MAX));
        }
        _ => {
            table.set_content_arrangement(ContentArrangement::Disabled);
        }
    }
    table.set_header(header.iter().map(|h| p.bold(h)));
    for row in rows {
        // A tab would move the rest of the line to the terminal's next tab stop, out of
        // its column (the table counts it as one column).
        table.add_row(row.into_iter().map(|cell| cell.replace('\t', " ")));
    }
    for column in table.column_iter_mut() {
        column.set_padding((0, 2));
    }
    table
        .to_string()
        .lines()
        .map(str::trim_end)
        .collect::<Vec<_>>()
        .join("\n")
}

/// Aligned `name  value` lines, indented by two.
pub(super) fn facts(p: &Painter, rows: &[(&str, String)]) -> String {
    let wide = rows
        .iter()
        .map(|(n, _)| n.chars().count())
        .max()
        .unwrap_or(0);
    rows.iter()
        .map(|(name, value)| {
            format!(
                "  {}{}  {value}",
                p.dim(name),
                " ".repeat(wide - name.chars().count())
            )
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// A page's heading.
pub(super) fn heading(p: &Painter, text: &str) -> String {
    p.bold(text)
}

pub(super) fn points(points: Option<u8>) -> String {
    points.map(|n| n.to_string()).unwrap_or_default()
}

fn ticket_ref(p: &Painter, r: &TicketRef) -> Vec<String> {
    vec![p.number(&r.number), p.status(r.status), r.title.clone()]
}

fn refs_table(p: &Painter, refs: &[TicketRef]) -> String {
    indent(&table(
        p,
        &["TICKET", "STATUS", "TITLE"],
        refs.iter().map(|r| ticket_ref(p, r)).collect(),
    ))
}

pub(super) fn indent(text: &str) -> String {
    text.lines()
        .map(|l| {
            if l.is_empty() {
                String::new()
            } else {
                format!("  {l}")
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// How many of how many, and the command for the next page.
pub(super) fn more(p: &Painter, shown: usize, noun: &str, page: &Page, next: &str) -> String {
    let total = match page.total_exact {
        Some(false) => format!("{}+", page.total),
        _ => page.total.to_string(),
    };
    let mut out = p.dim(&format!("{shown} of {total} {noun}"));
    if let Some(cursor) = &page.next_cursor {
        out.push_str(&format!(
            "\n{}",
            p.hint(&format!("Next page: {next} --cursor {cursor}"))
        ));
    }
    out
}

pub fn created(p: &Painter, c: &Created) -> String {
    let t = &c.ticket;
    let from = c
        .template
        .as_ref()
        .map(|name| format!(" from template {name}"))
        .unwrap_or_default();
    let mut rows = vec![
        ("Status", p.status(t.status)),
        ("Assignees", p.people(&t.assignees)),
    ];
    if !t.labels.is_empty() {
        rows.push(("Labels", p.labels(&t.labels)));
    }
    if let Some(points) = t.story_points {
        rows.push(("Points", points.to_string()));
    }
    if let Some(parent) = &t.parent {
        rows.push(("Parent", p.number(parent)));
    }
    if let Some(epic) = &t.epic {
        rows.push(("Epic", p.number(epic)));
    }
    let mut duplicates = String::new();
    if !c.likely_duplicates.is_empty() {
        duplicates.push_str("\n\nIt may duplicate (created all the same):\n");
        for d in &c.likely_duplicates {
            duplicates.push_str(&super::related::line(p, d));
            duplicates.push('\n');
        }
    }
    format!(
        "{} Created {}{from}  {}\n{}{duplicates}\n\n{}",
        p.ok(),
        p.number(&t.number),
        p.bold(&t.title),
        facts(p, &rows),
        p.hint(&format!("View it: jility ticket show {}", t.number))
    )
}

/// A page of `jility ticket list`; `next` the command that lists the next one (with the
/// same filters), less its cursor.
pub fn page(p: &Painter, tickets: &TicketPage, page: &Page, next: &str) -> String {
    if tickets.tickets.is_empty() {
        return format!(
            "No tickets match.\n{}",
            p.hint("Create one: jility ticket create --title \"…\"")
        );
    }
    let rows = tickets.tickets.iter().map(|t| summary_row(p, t)).collect();
    format!(
        "{}\n\n{}",
        table(
            p,
            &[
                "TICKET",
                "STATUS",
                "TITLE",
                "ASSIGNEES",
                "LABELS",
                "PTS",
                "UPDATED"
            ],
            rows
        ),
        more(p, tickets.tickets.len(), "tickets", page, next)
    )
}

/// `text` as one shell word (POSIX single quotes).
pub fn shell_quoted(text: &str) -> String {
    format!("'{}'", text.replace('\'', "'\\''"))
}

fn summary_row(p: &Painter, t: &TicketSummary) -> Vec<String> {
    vec![
        p.number(&t.number),
        p.status(t.status),
        t.title.clone(),
        p.people(&t.assignees),
        p.labels(&t.labels),
        points(t.story_points),
        p.dim(&p.when(&t.updated_at)),
    ]
}

pub fn detail(p: &Painter, d: &TicketDetail) -> String {
    let t = &d.ticket;
    let mut out = format!("{}  {}\n", p.number(&t.number), p.bold(&t.title));
    let mut rows = vec![
        ("Status", p.status(t.status)),
        ("Assignees", p.people(&t.assignees)),
        ("Labels", p.labels(&t.labels)),
    ];
    if let Some(points) = t.story_points {
        rows.push(("Points", points.to_string()));
    }
    if let Some(parent) = &t.parent {
        rows.push(("Parent", p.number(parent)));
    }
    if let Some(epic) = &t.epic {
        rows.push(("Epic", p.number(epic)));
    }
    if t.kind == jility_core::model::Kind::Epic {
        rows.push(("Kind", p.bold("epic")));
    }
    if let Some(sprint) = &t.sprint {
        rows.push(("Sprint", sprint.clone()));
    }
    rows.push((
        "Created",
        format!("{} by {}", p.when(&t.created_at), p.person(&t.created_by)),
    ));
    rows.push((
        "Updated",
        format!("{} by {}", p.when(&t.updated_at), p.person(&t.updated_by)),
    ));
    out.push_str(&facts(p, &rows));
    out.push_str(&format!("\n\n{}\n", heading(p, "Description")));
    if t.description.trim().is_empty() {
        out.push_str(&format!("  {}\n", p.dim("(none)")));
    } else {
        for line in markdown::render(&t.description, p, 2) {
            out.push_str(&line);
            out.push('\n');
        }
    }
    if !d.dependencies.is_empty() {
        out.push_str(&format!(
            "\n{}\n{}\n",
            heading(p, "Depends on"),
            refs_table(p, &d.dependencies)
        ));
    }
    if !d.dependents.is_empty() {
        out.push_str(&format!(
            "\n{}\n{}\n",
            heading(p, "Blocks"),
            refs_table(p, &d.dependents)
        ));
    }
    if d.comment_count > 0 {
        let title = if d.comment_count > d.comments.len() {
            format!(
                "Comments ({}, the last {})",
                d.comment_count,
                d.comments.len()
            )
        } else {
            format!("Comments ({})", d.comment_count)
        };
        out.push_str(&format!("\n{}\n", heading(p, &title)));
        for c in &d.comments {
            out.push_str(&format!(
                "  {} {}\n",
                p.person(&c.author),
                p.dim(&format!("· {}", p.when(&c.created_at)))
            ));
            for line in markdown::render(&c.content, p, 4) {
                out.push_str(&line);
                out.push('\n');
            }
            out.push('\n');
        }
        out.truncate(out.trim_end().len());
        out.push('\n');
    }
    if !d.linked_commits.is_empty() {
        let rows = d
            .linked_commits
            .iter()
            .map(|c| {
                vec![
                    p.fg(AnsiColor::Yellow, c.hash.get(..10).unwrap_or(&c.hash)),
                    c.message.clone().unwrap_or_default(),
                    format!(
                        "{} {}",
                        p.person(&c.linked_by),
                        p.dim(&p.when(&c.linked_at))
                    ),
                ]
            })
            .collect();
        out.push_str(&format!(
            "\n{}\n{}\n",
            heading(p, "Commits"),
            indent(&table(p, &["COMMIT", "MESSAGE", "LINKED"], rows))
        ));
    }
    if !d.recent_changes.is_empty() {
        let rows = d
            .recent_changes
            .iter()
            .map(|c| {
                vec![
                    p.dim(&p.when(&c.changed_at)),
                    p.person(&c.changed_by),
                    change(p, c),
                ]
            })
            .collect();
        out.push_str(&format!(
            "\n{}\n{}\n",
            heading(p, "Recent changes"),
            indent(&table(p, &["WHEN", "WHO", "WHAT"], rows))
        ));
    }
    out.truncate(out.trim_end().len());
    out
}

/// A status as stored in a change ("in_progress") by its name.
fn status_name(p: &Painter, value: &str) -> String {
    Status::parse(value).map_or_else(|| value.to_string(), |s| p.status(s))
}

fn or_none(value: &Option<String>) -> String {
    match value.as_deref() {
        None | Some("") => "none".to_string(),
        Some(v) => v.to_string(),
    }
}

/// One change of the log as a sentence.
fn change(p: &Painter, c: &Change) -> String {
    let old = || or_none(&c.old_value);
    let new = || or_none(&c.new_value);
    let mut said = match c.change_type.as_str() {
        "created" => "created the ticket".to_string(),
        "title_changed" => format!("renamed it “{}”", new()),
        "description_changed" => match &c.detail {
            Some(detail) if detail == "created" => "wrote the description".to_string(),
            Some(detail) => format!("edited the description ({detail})"),
            None => "edited the description".to_string(),
        },
        "status_changed" => format!(
            "moved it {} → {}",
            status_name(p, &old()),
            status_name(p, &new())
        ),
        "story_points_changed" => format!("points {} → {}", old(), new()),
        "assignees_changed" => match c.new_value.as_deref() {
            None | Some("") => "unassigned it".to_string(),
            Some(to) => format!("assigned {to}"),
        },
        "labels_changed" => format!("labels {}", new()),
        "parent_changed" => format!("parent {} → {}", old(), new()),
        "epic_changed" => format!("epic {} → {}", old(), new()),
        "comment_added" => "commented".to_string(),
        "commit_linked" => format!(
            "linked commit {}",
            c.new_value
                .as_deref()
                .map(|h| h.get(..10).unwrap_or(h))
                .unwrap_or_default()
        ),
        "dependency_added" => format!("made it depend on {}", new()),
        "dependency_removed" => format!("removed its dependency on {}", old()),
        "deleted" => "deleted it".to_string(),
        other => other.replace('_', " "),
    };
    if let Some(message) = &c.message {
        said.push_str(&p.dim(&format!(" — {message}")));
    }
    said
}

pub fn claimed(p: &Painter, c: &Claimed) -> String {
    if c.already_claimed {
        return format!(
            "{} {} is already yours ({})",
            p.ok(),
            p.number(&c.ticket.number),
            p.status(c.ticket.status)
        );
    }
    format!(
        "{} Claimed {}  {}\n{}",
        p.ok(),
        p.number(&c.ticket.number),
        p.bold(&c.ticket.title),
        facts(
            p,
            &[
                ("Assignee", p.person(&c.assignee)),
                (
                    "Status",
                    format!(
                        "{} → {}",
                        p.status(c.previous_status),
                        p.status(c.ticket.status)
                    )
                ),
            ]
        )
    )
}

pub fn description_updated(p: &Painter, d: &DescriptionUpdated) -> String {
    if !d.changed {
        return format!(
            "{} The description of {} was already so; nothing changed",
            p.ok(),
            p.number(&d.number)
        );
    }
    let diff = format!(
        "{} {}",
        p.fg(AnsiColor::Green, &format!("+{}", d.diff.added)),
        p.fg(AnsiColor::Red, &format!("-{}", d.diff.removed))
    );
    let mut rows = vec![
        ("Edit", d.summary.clone()),
        ("Lines", format!("{} ({diff})", d.lines)),
        ("By", p.person(&d.changed_by)),
    ];
    if let Some(message) = &d.message {
        rows.push(("Message", message.clone()));
    }
    format!(
        "{} Updated the description of {} (version {})\n{}\n\n{}",
        p.ok(),
        p.number(&d.number),
        d.version,
        facts(p, &rows),
        p.hint(&format!(
            "Every version: jility ticket history {}",
            d.number
        ))
    )
}

pub fn status_updated(p: &Painter, s: &StatusUpdated) -> String {
    if !s.changed {
        return format!(
            "{} {} is already {}",
            p.ok(),
            p.number(&s.number),
            p.status(s.current)
        );
    }
    let mut out = format!(
        "{} Moved {}  {}\n  {} → {}",
        p.ok(),
        p.number(&s.number),
        p.bold(&s.title),
        p.status(s.previous),
        p.status(s.current)
    );
    if let Some(message) = &s.message {
        out.push_str(&p.dim(&format!(" — {message}")));
    }
    if s.current == Status::Blocked {
        out.push_str(&format!(
            "\n\n{}",
            p.hint(&format!(
                "Say what blocks it: jility ticket comment {} \"…\"",
                s.number
            ))
        ));
    }
    out
}

pub fn comment_added(p: &Painter, c: &CommentAdded) -> String {
    let mut out = format!(
        "{} Commented on {} as {}\n",
        p.ok(),
        p.number(&c.number),
        p.person(&c.comment.author)
    );
    for line in markdown::render(&c.comment.content, p, 2) {
        out.push_str(&line);
        out.push('\n');
    }
    out.truncate(out.trim_end().len());
    out
}

pub fn assigned(p: &Painter, a: &Assigned) -> String {
    let mut out = if a.current.is_empty() {
        format!("{} Unassigned {}", p.ok(), p.number(&a.number))
    } else {
        format!(
            "{} Assigned {} to {}",
            p.ok(),
            p.number(&a.number),
            p.people(&a.current)
        )
    };
    if !a.previous.is_empty() && a.previous != a.current {
        out.push_str(&p.dim(&format!(" (was {})", a.previous.join(", "))));
    }
    if a.comment_added {
        out.push_str(&format!(
            "\n  {}",
            p.dim("The handoff message was added as a comment.")
        ));
    }
    out
}

pub fn commit_linked(p: &Painter, c: &CommitLinked) -> String {
    let verb = if c.already_linked {
        "was already linked to"
    } else {
        "linked to"
    };
    let mut out = format!(
        "{} Commit {} {verb} {}",
        p.ok(),
        c.commit.hash.get(..10).unwrap_or(&c.commit.hash),
        p.number(&c.number)
    );
    if let Some(message) = &c.commit.message {
        out.push_str(&format!("\n  {message}"));
    }
    out
}

pub fn dependency_added(p: &Painter, d: &DependencyAdded) -> String {
    let verb = if d.already_existed {
        "already depends on"
    } else {
        "now depends on"
    };
    let mut out = format!(
        "{} {} {verb} {}  {}",
        p.ok(),
        p.number(&d.ticket.number),
        p.number(&d.depends_on.number),
        d.depends_on.title
    );
    if d.chain.len() > 2 {
        let chain: Vec<String> = d.chain.iter().map(|r| p.number(&r.number)).collect();
        out.push_str(&format!("\n  Chain: {}", chain.join(" → ")));
    }
    if d.is_blocked {
        out.push_str(&format!(
            "\n  {} waits on unfinished work.",
            p.number(&d.ticket.number)
        ));
    }
    out
}

pub fn dependency_removed(p: &Painter, d: &DependencyRemoved) -> String {
    let mut out = format!(
        "{} {} no longer depends on {}",
        p.ok(),
        p.number(&d.ticket.number),
        p.number(&d.depends_on.number)
    );
    if d.is_blocked {
        out.push_str(&format!(
            "\n  {} still waits on other unfinished work.",
            p.number(&d.ticket.number)
        ));
    }
    out
}

pub fn graph(p: &Painter, g: &DependencyGraph) -> String {
    let mut out = format!(
        "{}  {}  {}\n",
        p.number(&g.ticket),
        p.bold(&g.title),
        p.status(g.status)
    );
    if g.is_blocked {
        out.push_str(&format!(
            "  {}\n",
            p.fg(AnsiColor::Red, "Blocked: a dependency is not done.")
        ));
    }
    let nodes = |nodes: &[jility_core::tracker::GraphNode]| {
        indent(&table(
            p,
            &["TICKET", "STATUS", "TITLE", "DEPTH"],
            nodes
                .iter()
                .map(|n| {
                    vec![
                        format!(
                            "{}{}",
                            "  ".repeat(n.depth.saturating_sub(1)),
                            p.number(&n.number)
                        ),
                        p.status(n.status),
                        n.title.clone(),
                        n.depth.to_string(),
                    ]
                })
                .collect(),
        ))
    };
    out.push_str(&format!("\n{}\n", heading(p, "Waits on")));
    if g.upstream.is_empty() {
        out.push_str(&format!("  {}\n", p.dim("nothing")));
    } else {
        out.push_str(&nodes(&g.upstream));
        out.push('\n');
    }
    out.push_str(&format!("\n{}\n", heading(p, "Waited on by")));
    if g.downstream.is_empty() {
        out.push_str(&format!("  {}\n", p.dim("nothing")));
    } else {
        out.push_str(&nodes(&g.downstream));
        out.push('\n');
    }
    if g.truncated {
        out.push_str(&format!(
            "\n{}\n",
            p.dim("The walk stopped at 500 tickets.")
        ));
    }
    out.truncate(out.trim_end().len());
    out
}

pub fn templates(p: &Painter, t: &TemplateList, page: &Page) -> String {
    let rows = t
        .templates
        .iter()
        .map(|t| {
            vec![
                p.bold(&t.name),
                t.description.clone(),
                if t.variables.is_empty() {
                    p.dim("—")
                } else {
                    t.variables.join(", ")
                },
            ]
        })
        .collect();
    let mut out = format!(
        "{}\n\n{}",
        table(p, &["TEMPLATE", "WHAT", "VARIABLES"], rows),
        more(
            p,
            t.templates.len(),
            "templates",
            page,
            "jility template list"
        )
    );
    for problem in &t.problems {
        out.push_str(&format!(
            "\n{} {}: {}",
            p.fg(AnsiColor::Yellow, "skipped"),
            problem.path,
            problem.message
        ));
    }
    out.push_str(&format!(
        "\n{}",
        p.hint("Use one: jility template create NAME --var NAME=VALUE …")
    ));
    out
}

/// A snippet with its `**matches**` highlighted (bold and coloured), without the markers,
/// read as one line of prose: each line's block markup (`## `, `> `, `- [x] `, `1. `) and
/// inline code's backticks left out, lines joined by spaces.
fn snippet(p: &Painter, text: &str) -> String {
    let style = anstyle::Style::new()
        .bold()
        .fg_color(Some(anstyle::Color::Ansi(anstyle::AnsiColor::Yellow)));
    let prose = text
        .lines()
        .map(|line| without_block_markup(line.trim()).replace('`', ""))
        .filter(|line| !line.is_empty())
        .collect::<Vec<_>>()
        .join(" ")
        .replace('\t', " ");
    let mut out = String::new();
    for (i, part) in prose.split("**").enumerate() {
        if i % 2 == 1 {
            out.push_str(&p.paint(style, part));
        } else {
            out.push_str(part);
        }
    }
    out
}

/// A markdown line without its block markup: heading hashes, quote bars, bullets, task
/// boxes and item numbers.
fn without_block_markup(line: &str) -> &str {
    let mut line = line;
    loop {
        let before = line;
        line = line
            .trim_start_matches('#')
            .trim_start_matches('>')
            .trim_start();
        for marker in [
            "- [ ] ", "- [x] ", "- [X] ", "* [ ] ", "* [x] ", "- ", "* ", "+ ",
        ] {
            line = line.strip_prefix(marker).unwrap_or(line);
        }
        let digits = line.len() - line.trim_start_matches(|c: char| c.is_ascii_digit()).len();
        if digits > 0
            && let Some(rest) = line[digits..].strip_prefix(". ")
        {
            line = rest;
        }
        if line == before {
            return line;
        }
    }
}

pub fn search(p: &Painter, s: &SearchResults, page: &Page) -> String {
    if s.hits.is_empty() {
        return format!("Nothing matches “{}”.", s.query);
    }
    let mut out = String::new();
    for hit in &s.hits {
        out.push_str(&format!(
            "{}  {}  {}",
            p.number(&hit.number),
            p.status(hit.status),
            p.bold(&hit.title)
        ));
        if !hit.assignees.is_empty() {
            out.push_str(&format!("  {}", p.people(&hit.assignees)));
        }
        out.push('\n');
        // A search in an order of its own (or with no words) has no snippets.
        if hit.snippet.is_empty() {
            continue;
        }
        let text = snippet(p, &hit.snippet);
        match p.width {
            Some(width) => {
                let options = textwrap::Options::new(width)
                    .initial_indent("  ")
                    .subsequent_indent("  ");
                for line in textwrap::wrap(&text, options) {
                    out.push_str(&line);
                    out.push('\n');
                }
            }
            None => out.push_str(&format!("  {text}\n")),
        }
        out.push('\n');
    }
    let mut next = format!("jility ticket search {}", shell_quoted(&s.query));
    if let Some(sprint) = &s.sprint {
        next.push_str(&format!(" --sprint {}", shell_quoted(sprint)));
    }
    out.push_str(&more(p, s.hits.len(), "hits", page, &next));
    out
}

pub fn history(p: &Painter, h: &History) -> String {
    let mut out = format!(
        "{}  {}  {}\n",
        p.number(&h.number),
        p.bold(&h.title),
        p.dim(&format!("description at version {}", h.current_version))
    );
    for v in &h.versions {
        let mut line = format!(
            "\n{} {} {}",
            p.bold(&format!("Version {}", v.version)),
            p.person(&v.changed_by),
            p.dim(&format!("· {}", p.when(&v.changed_at)))
        );
        if let Some(operation) = &v.operation {
            line.push_str(&p.dim(&format!(" · {operation}")));
        }
        if let Some(message) = &v.message {
            line.push_str(&format!(" — {message}"));
        }
        out.push_str(&line);
        out.push('\n');
        for diff_line in v.diff.lines() {
            let diff_line = &diff_line.replace('\t', "    ");
            let shown = if diff_line.starts_with('+') && !diff_line.starts_with("+++") {
                p.fg(AnsiColor::Green, diff_line)
            } else if diff_line.starts_with('-') && !diff_line.starts_with("---") {
                p.fg(AnsiColor::Red, diff_line)
            } else if diff_line.starts_with("@@") {
                p.dim(diff_line)
            } else {
                diff_line.to_string()
            };
            out.push_str(&format!("    {shown}\n"));
        }
    }
    if h.versions.len() > 1 {
        out.push_str(&format!(
            "\n{}",
            p.hint(&format!(
                "Restore one: jility ticket history {} --revert VERSION",
                h.number
            ))
        ));
    }
    out.truncate(out.trim_end().len());
    out
}

pub fn edited(p: &Painter, e: &Edited) -> String {
    if e.changed.is_empty() {
        return format!(
            "{} {} already had these values; nothing changed",
            p.ok(),
            p.number(&e.ticket.number)
        );
    }
    format!(
        "{} Edited {}  {}\n  Changed: {}",
        p.ok(),
        p.number(&e.ticket.number),
        p.bold(&e.ticket.title),
        e.changed.join(", ")
    )
}

pub fn deleted(p: &Painter, d: &Deleted) -> String {
    format!("{} Deleted {}  {}", p.ok(), p.number(&d.number), d.title)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn snippets_read_as_prose_with_the_matches_marked() {
        let p = Painter::plain();
        assert_eq!(
            snippet(
                &p,
                "…asked for.\n\n## Acceptance Criteria\n- [x] `/login` **redirects**\n1. > done"
            ),
            "…asked for. Acceptance Criteria /login redirects done"
        );
        let mut p = p;
        p.color = true;
        let shown = snippet(&p, "a **b** c");
        assert!(
            shown.contains("\x1b[") && !shown.contains("**"),
            "{shown:?}"
        );
    }
}
