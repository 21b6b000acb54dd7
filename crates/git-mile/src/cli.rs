//! The command line: `git mile <command>` (git runs `git-mile` from PATH for it).

use std::io::Write as _;
use std::path::PathBuf;

use clap::{Parser, Subcommand, ValueEnum};
use serde::Serialize;

use crate::catalog::Lookup;
use crate::listing::{self, ListRequest, Target};
use crate::model::{Kind, Status};
use crate::ops::{self, OpError, Written};
use crate::query::cursor::cursor_key;
use crate::sync;
use crate::task::view::TaskView;
use crate::task::{OtherRefs, TaskLookup, TaskSet};
use crate::views::{EntityView, ListResponse};

/// Issues and milestones stored in the git repository itself.
#[derive(Debug, Parser)]
#[command(name = "git-mile", bin_name = "git mile", version, about)]
pub struct Cli {
    /// The repository (default: the one containing the working directory).
    #[arg(long, global = true, value_name = "PATH")]
    pub repo: Option<PathBuf>,

    /// Print JSON instead of text.
    #[arg(long, global = true)]
    pub json: bool,

    /// More logging on stderr: -v info, -vv debug, -vvv trace.
    #[arg(short, long, global = true, action = clap::ArgAction::Count)]
    pub verbose: u8,

    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum EntityArg {
    Milestone,
    Issue,
    /// Upstream git-mile's tasks (read-only).
    Task,
}

impl EntityArg {
    fn target(self) -> Target {
        match self {
            EntityArg::Milestone => Target::Entity(Kind::Milestone),
            EntityArg::Issue => Target::Entity(Kind::Issue),
            EntityArg::Task => Target::Task,
        }
    }

    /// The kind a write makes; tasks are refused.
    fn writable(self) -> Result<Kind, OpError> {
        match self.target() {
            Target::Entity(kind) => Ok(kind),
            Target::Task => Err(OpError::Invalid(
                "tasks are read-only in this version: create and change them with upstream \
                 git-mile; `git mile list --entity task` and `git mile show` read them"
                    .into(),
            )),
        }
    }
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Create a milestone or an issue; prints its id.
    Create {
        entity: EntityArg,
        #[arg(long)]
        title: String,
        #[arg(long, default_value = "")]
        description: String,
        /// A label (repeatable).
        #[arg(long = "label", value_name = "LABEL")]
        labels: Vec<String>,
        /// Issues only: attach to this milestone (id or unique prefix).
        #[arg(long, value_name = "MILESTONE")]
        milestone: Option<String>,
    },
    /// List issues (or milestones, or upstream git-mile's tasks) with the filter language of
    /// `git_mile.list`.
    List {
        /// What to list.
        #[arg(long, value_enum, default_value = "issue")]
        entity: EntityArg,
        /// Filter expression, e.g. 'status == "open" and labels contains "bug"'.
        #[arg(long)]
        filter: Option<String>,
        /// Sort key `field[:asc|desc]` (repeatable; default updated:desc).
        #[arg(long)]
        sort: Vec<String>,
        /// Page size (1 to 200; default 20).
        #[arg(long)]
        limit: Option<u64>,
        /// The cursor a previous page printed.
        #[arg(long)]
        cursor: Option<String>,
        /// Include closed entities.
        #[arg(long)]
        include_closed: bool,
    },
    /// Show an issue, a milestone or an upstream git-mile task whole.
    Show { id: String },
    /// Change the title or the description.
    Edit {
        id: String,
        #[arg(long)]
        title: Option<String>,
        #[arg(long)]
        description: Option<String>,
    },
    /// Add a comment.
    Comment {
        id: String,
        #[arg(long)]
        body: String,
    },
    /// Add or remove labels.
    Label {
        id: String,
        #[arg(long = "add", value_name = "LABEL")]
        add: Vec<String>,
        #[arg(long = "remove", value_name = "LABEL")]
        remove: Vec<String>,
    },
    /// Reopen an issue or a milestone.
    Open { id: String },
    /// Close an issue or a milestone.
    Close { id: String },
    /// Attach an issue to a milestone (replacing any other).
    Attach { issue: String, milestone: String },
    /// Detach an issue from its milestone.
    Detach { issue: String },
    /// Push every issue and milestone to a remote.
    Push {
        #[arg(default_value = "origin")]
        remote: String,
    },
    /// Fetch a remote's issues and milestones and merge them into this clone.
    Pull {
        #[arg(default_value = "origin")]
        remote: String,
    },
    /// Serve the MCP tools (git_mile.list, git_mile.show, git_mile.create, git_mile.update,
    /// git_mile.comment) over stdio, or Streamable HTTP at /mcp with --http ADDR.
    McpServer {
        #[command(flatten)]
        transport: mcp_common::serve::TransportArgs,
        /// Offer only the reads (git_mile.list and git_mile.show), as the original surface.
        #[arg(long)]
        read_only: bool,
    },
}

fn out(text: &str) {
    let mut stdout = std::io::stdout().lock();
    let _ = writeln!(stdout, "{text}");
}

fn emit<T: Serialize>(
    json: bool,
    data: &T,
    text: impl FnOnce(&T) -> String,
) -> Result<(), OpError> {
    if json {
        let rendered = serde_json::to_string_pretty(data)
            .map_err(|e| OpError::Invalid(format!("could not render JSON: {e}")))?;
        out(&rendered);
    } else {
        out(&text(data));
    }
    Ok(())
}

fn written_text(w: &Written, done: &str) -> String {
    if w.events.is_empty() {
        format!("{} {}: nothing to change", w.kind.as_str(), w.id)
    } else {
        format!("{done} {} {}", w.kind.as_str(), w.id)
    }
}

const BOTH: [Kind; 2] = [Kind::Issue, Kind::Milestone];

/// Run a command other than `mcp-server`.
pub fn run(cli: &Cli) -> Result<(), OpError> {
    let catalog = ops::open_catalog(cli.repo.as_deref())?;
    let store = catalog.store();
    let json = cli.json;
    match &cli.command {
        Command::Create {
            entity,
            title,
            description,
            labels,
            milestone,
        } => {
            let kind = entity.writable()?;
            let milestone = match (kind, milestone) {
                (Kind::Milestone, Some(_)) => {
                    return Err(OpError::Invalid(
                        "--milestone applies to issues only".into(),
                    ));
                }
                (Kind::Issue, Some(m)) => Some(ops::resolve(&catalog, &[Kind::Milestone], m)?.1),
                _ => None,
            };
            let written = ops::create(
                store,
                kind,
                title,
                description,
                labels,
                milestone.as_deref(),
            )?;
            emit(json, &written, |w| w.id.clone())
        }
        Command::List {
            entity,
            filter,
            sort,
            limit,
            cursor,
            include_closed,
        } => {
            let target = entity.target();
            let snapshot = match target {
                Target::Entity(_) => catalog.snapshot()?,
                Target::Task => std::sync::Arc::default(),
            };
            let tasks = match catalog.tasks() {
                Ok(tasks) => tasks,
                Err(err) if target == Target::Task => return Err(err.into()),
                Err(err) => crate::task::unread(&err),
            };
            let key = cursor_key(store.git_dir());
            let request = ListRequest {
                filter: filter.clone(),
                sort: sort.clone(),
                limit: limit.map(serde_json::Number::from),
                cursor: cursor.clone(),
                include_closed: *include_closed,
            };
            let page = listing::list(&snapshot, &tasks, target, &request, &key)
                .map_err(|e| OpError::Invalid(e.to_string()))?;
            tell_other_refs(&page.other_refs);
            emit(json, &page, list_text)
        }
        Command::Show { id } => {
            let snapshot = catalog.snapshot()?;
            let tasks = catalog.tasks()?;
            let found = ops::resolve_in(&snapshot, &BOTH, id);
            match (found, tasks.lookup(id)) {
                (Ok((_, found)), TaskLookup::Found(row)) => Err(OpError::Ambiguous {
                    id: id.trim().to_string(),
                    candidates: vec![found, row.task.id.clone()],
                }),
                (Ok((kind, id)), _) => {
                    let Lookup::Found(row) = snapshot.lookup(kind, &id) else {
                        return Err(OpError::NotFound {
                            what: kind.as_str(),
                            id,
                        });
                    };
                    emit(json, &EntityView::from_row(&row), show_text)
                }
                (Err(OpError::NotFound { what, id }), lookup) => {
                    show_task(json, &tasks, lookup, what, id)
                }
                (Err(err), _) => Err(err),
            }
        }
        Command::Edit {
            id,
            title,
            description,
        } => {
            let (kind, id) = resolve_writable(&catalog, id)?;
            let w = ops::edit(store, kind, &id, title.as_deref(), description.as_deref())?;
            emit(json, &w, |w| written_text(w, "edited"))
        }
        Command::Comment { id, body } => {
            let (kind, id) = resolve_writable(&catalog, id)?;
            let w = ops::comment(store, kind, &id, body)?;
            emit(json, &w, |w| written_text(w, "commented on"))
        }
        Command::Label { id, add, remove } => {
            let (kind, id) = resolve_writable(&catalog, id)?;
            let w = ops::label(store, kind, &id, add, remove)?;
            emit(json, &w, |w| written_text(w, "relabelled"))
        }
        Command::Open { id } => {
            let (kind, id) = resolve_writable(&catalog, id)?;
            let w = ops::set_status(store, kind, &id, Status::Open)?;
            emit(json, &w, |w| written_text(w, "opened"))
        }
        Command::Close { id } => {
            let (kind, id) = resolve_writable(&catalog, id)?;
            let w = ops::set_status(store, kind, &id, Status::Closed)?;
            emit(json, &w, |w| written_text(w, "closed"))
        }
        Command::Attach { issue, milestone } => {
            let (_, issue) = ops::resolve(&catalog, &[Kind::Issue], issue)?;
            let (_, milestone) = ops::resolve(&catalog, &[Kind::Milestone], milestone)?;
            let w = ops::attach(store, &issue, &milestone)?;
            emit(json, &w, |w| written_text(w, "attached"))
        }
        Command::Detach { issue } => {
            let (_, issue) = ops::resolve(&catalog, &[Kind::Issue], issue)?;
            let w = ops::detach(store, &issue)?;
            emit(json, &w, |w| written_text(w, "detached"))
        }
        Command::Push { remote } => {
            let report = sync::push(store, remote)?;
            emit(json, &report, |r| {
                format!(
                    "pushed to {}: {} new, {} updated, {} up to date",
                    r.remote, r.created, r.updated, r.up_to_date
                )
            })
        }
        Command::Pull { remote } => {
            let report = sync::pull(store, remote)?;
            emit(json, &report, |r| {
                let mut text = format!(
                    "pulled from {}: {} new, {} fast-forwarded, {} merged, {} up to date",
                    r.remote, r.created, r.fast_forwarded, r.merged, r.up_to_date
                );
                for skipped in &r.skipped {
                    text.push_str(&format!("\nnot pulled: {skipped}"));
                }
                text
            })?;
            if report.skipped.is_empty() {
                Ok(())
            } else {
                Err(OpError::Incomplete(format!(
                    "{} of the remote's entities were not pulled (listed above); `git fsck` in \
                     either clone tells more",
                    report.skipped.len()
                )))
            }
        }
        Command::McpServer { .. } => Err(OpError::Invalid(
            "mcp-server is started by main, not run as a command".into(),
        )),
    }
}

/// The issue or milestone `id` names, for a write; an id of a task is refused as such.
fn resolve_writable(
    catalog: &crate::catalog::Catalog,
    id: &str,
) -> Result<(Kind, String), OpError> {
    match ops::resolve(catalog, &BOTH, id) {
        Err(OpError::NotFound { what, id }) => {
            if let Ok(tasks) = catalog.tasks()
                && let TaskLookup::Found(row) = tasks.lookup(&id)
            {
                return Err(OpError::Invalid(format!(
                    "task {} is read-only in this version: change it with upstream git-mile",
                    row.task.id
                )));
            }
            Err(OpError::NotFound { what, id })
        }
        other => other,
    }
}

/// A task `show` found among no issue nor milestone (`what` and `id`: the not-found of
/// those), or why not; a not-found names the refs this version does not read.
fn show_task(
    json: bool,
    tasks: &TaskSet,
    lookup: TaskLookup<'_>,
    what: &'static str,
    id: String,
) -> Result<(), OpError> {
    match lookup {
        TaskLookup::Found(row) => emit(json, &TaskView::from_row(&row), task_text),
        TaskLookup::Ambiguous(candidates) => Err(OpError::Ambiguous { id, candidates }),
        TaskLookup::Unreadable(id, why) => Err(OpError::Unreadable {
            what: "task",
            id,
            why: why.to_string(),
        }),
        TaskLookup::NotFound => {
            tell_other_refs(tasks.other_refs());
            let what = if tasks.is_empty() && tasks.unreadable().next().is_none() {
                what
            } else {
                "issue, milestone or task"
            };
            Err(OpError::NotFound { what, id })
        }
    }
}

/// One line on stderr per group of refs this version does not read.
fn tell_other_refs(other: &[OtherRefs]) {
    let mut stderr = std::io::stderr().lock();
    for group in other {
        let _ = writeln!(
            stderr,
            "git mile: note: {} holds {} this version does not read: {}",
            group.prefix,
            plural(group.count, "ref"),
            group.what
        );
    }
}

fn task_text(t: &TaskView) -> String {
    let none = || "none".to_string();
    let mut text = format!(
        "task {}\n{}  [{}]\nstate: {} (kind: {})\nby {} on {}, updated {}\n",
        t.id,
        t.title,
        t.status,
        t.facts.state.clone().unwrap_or_else(none),
        t.facts.state_kind.clone().unwrap_or_else(none),
        t.author,
        t.created.format("%Y-%m-%d %H:%M"),
        t.updated.format("%Y-%m-%d %H:%M"),
    );
    for (name, values) in [
        ("labels", &t.labels),
        ("assignees", &t.facts.assignees),
        ("parents", &t.facts.parents),
        ("children", &t.facts.children),
    ] {
        if !values.is_empty() {
            text.push_str(&format!("{name}: {}\n", values.join(", ")));
        }
    }
    for (kind, ids) in &t.relations {
        text.push_str(&format!("{kind}: {}\n", ids.join(", ")));
    }
    if !t.description.is_empty() {
        text.push('\n');
        text.push_str(&t.description);
        text.push('\n');
    }
    for c in &t.comments {
        let edited = match c.edited {
            Some(at) => format!(
                " (edited {}, {})",
                plural(c.edits, "time"),
                at.format("%Y-%m-%d %H:%M")
            ),
            None => String::new(),
        };
        text.push_str(&format!(
            "\n--- {} on {}{edited}\n{}\n",
            c.author,
            c.ts.format("%Y-%m-%d %H:%M"),
            c.body
        ));
    }
    text.trim_end().to_string()
}

fn list_text(page: &ListResponse) -> String {
    let mut text = String::new();
    if page.items.is_empty() {
        text.push_str("nothing matches");
    }
    for item in &page.items {
        let short: String = item.id.chars().take(8).collect();
        let mut line = format!("{short}  {:<6}  {}", item.status, item.title);
        if let Some(task) = &item.task {
            if let Some(state) = &task.state {
                line.push_str(&format!("  <{state}>"));
            }
            if !task.assignees.is_empty() {
                line.push_str(&format!("  @{}", task.assignees.join(", @")));
            }
        }
        if !item.labels.is_empty() {
            line.push_str(&format!("  [{}]", item.labels.join(", ")));
        }
        if item.stats.comment_count > 0 {
            line.push_str(&format!(
                "  ({})",
                plural(item.stats.comment_count, "comment")
            ));
        }
        if let Some(open) = item.stats.open_issues {
            line.push_str(&format!("  ({})", plural(open, "open issue")));
        }
        text.push_str(&line);
        text.push('\n');
    }
    if let Some(cursor) = &page.next_cursor {
        text.push_str(&format!("more: --cursor {cursor}\n"));
    }
    if !page.unreadable.is_empty() {
        text.push_str(&format!(
            "unreadable (the repository may be damaged; see `git fsck`): {}\n",
            page.unreadable.join(", ")
        ));
    }
    text.trim_end().to_string()
}

fn plural(n: u64, what: &str) -> String {
    if n == 1 {
        format!("1 {what}")
    } else {
        format!("{n} {what}s")
    }
}

fn show_text(e: &EntityView) -> String {
    let mut text = format!(
        "{} {}\n{}  [{}]\nby {} on {}, updated {}\n",
        e.kind,
        e.id,
        e.title,
        e.status,
        e.author,
        e.created.format("%Y-%m-%d %H:%M"),
        e.updated.format("%Y-%m-%d %H:%M"),
    );
    if !e.labels.is_empty() {
        text.push_str(&format!("labels: {}\n", e.labels.join(", ")));
    }
    if let Some(milestone) = &e.milestone {
        match milestone {
            Some(m) => text.push_str(&format!(
                "milestone: {} {}\n",
                m.title.as_deref().unwrap_or("(not in this clone)"),
                m.id
            )),
            None => text.push_str("milestone: none\n"),
        }
    }
    if let Some(open) = e.stats.open_issues {
        text.push_str(&format!("open issues: {open}\n"));
    }
    if !e.description.is_empty() {
        text.push('\n');
        text.push_str(&e.description);
        text.push('\n');
    }
    for c in &e.comments {
        text.push_str(&format!(
            "\n--- {} on {}\n{}\n",
            c.author,
            c.ts.format("%Y-%m-%d %H:%M"),
            c.body
        ));
    }
    text.trim_end().to_string()
}
