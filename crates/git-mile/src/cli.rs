//! The command line: `git mile <command>` (git runs `git-mile` from PATH for it).

mod log;
mod update;

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
#[command(
    name = "git-mile",
    bin_name = "git mile",
    version,
    about,
    long_about = "Issues and milestones stored in the git repository itself (refs under \
                  refs/git-mile/, one commit per change), shared with `git mile push` and \
                  `git mile pull` like any git data, and served to AI assistants by \
                  `git mile mcp-server`.\n\nIds: every command that takes one accepts the \
                  full id (a UUID) or a unique prefix of at least 4 characters, such as the \
                  prefix `git mile list` prints."
)]
pub struct Cli {
    /// The repository: a directory inside it (default: the one containing the working
    /// directory, or GIT_DIR when set).
    #[arg(long, global = true, value_name = "PATH", display_order = 100)]
    pub repo: Option<PathBuf>,

    /// More logging on stderr: -v info, -vv debug, -vvv trace (default: warnings only).
    #[arg(short, long, global = true, action = clap::ArgAction::Count, display_order = 101)]
    pub verbose: u8,

    #[command(subcommand)]
    pub command: Command,
}

/// What a command works on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum EntityArg {
    /// A milestone: a goal issues are attached to.
    Milestone,
    /// An issue: a bug, a request, a piece of work; attached to at most one milestone.
    Issue,
    /// Upstream git-mile's tasks (refs/git-mile/tasks/), written as upstream writes them.
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
}

/// The filter language, as `git mile list --help` explains it (a unit test checks that it
/// names every field of both vocabularies).
const FILTER_HELP: &str = "Filter expression: conditions `FIELD OP VALUE` joined with `and`, \
`or`, `not` and parentheses, e.g. 'status == \"open\" and labels contains \"bug\"'.

Quote text values (\"open\", 'bug'); numbers, dates (2026-01-31 or 2026-01-31T12:00:00Z), true, \
false and null go bare. Operators: == != < <= > >= in [\"a\", \"b\"] contains. More examples: \
'comment_count > 2 or milestone == null', 'updated >= 2026-01-01', 'not has_milestone'.

Fields of issues and milestones: id, title, description, author (text); status (\"open\" or \
\"closed\"); labels (a set: == or contains has the label, != has not, in has any); milestone (an \
issue's milestone: its id, an id prefix of at least 4 characters, or its title; null for none); created, updated (dates); \
comment_count, open_issues (numbers; open_issues of a milestone, null for an issue); \
has_comments, has_milestone (true or false).

Fields of tasks (--entity task): id, title, description, author, state, state_kind (text; \"\" \
when none); status; labels, assignees, parents, children (sets); created, updated; \
comment_count; has_comments.

A filter that tests status (for tasks also state or state_kind) decides which statuses are \
listed: --include-closed changes nothing then.";

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Create a milestone, an issue or an upstream git-mile task; prints its id.
    Create {
        /// What to create: `issue`, `milestone` or `task`.
        #[arg(value_name = "ENTITY")]
        entity: EntityArg,
        /// The title: one line of 1 to 500 characters.
        #[arg(long, value_name = "TEXT")]
        title: String,
        /// The description: any text (Markdown, up to 256 KiB; default: none).
        #[arg(long, value_name = "TEXT")]
        description: Option<String>,
        /// A label, one line of 1 to 100 characters (repeatable: --label bug --label p1; at
        /// most 100).
        #[arg(long = "label", value_name = "LABEL")]
        labels: Vec<String>,
        /// Issues only: attach it to this milestone, by id or unique prefix (at least 4
        /// characters).
        #[arg(long, value_name = "MILESTONE")]
        milestone: Option<String>,
        /// Tasks only: the workflow state (default: the workflow's default state).
        #[arg(long, value_name = "STATE")]
        state: Option<String>,
        /// Tasks only: an assignee (repeatable).
        #[arg(long = "assignee", value_name = "NAME")]
        assignees: Vec<String>,
        /// Tasks only: a parent task, by id or unique prefix (repeatable).
        #[arg(long = "parent", value_name = "TASK")]
        parents: Vec<String>,
        /// Print the result as JSON instead of text.
        #[arg(long)]
        json: bool,
    },
    /// List issues (or milestones, or upstream git-mile's tasks) with the filter language of
    /// `git_mile.list`; open ones only unless asked.
    List {
        /// What to list: issues, milestones or upstream git-mile's tasks.
        #[arg(long, value_enum, value_name = "ENTITY", default_value = "issue")]
        entity: EntityArg,
        #[arg(
            long,
            value_name = "EXPR",
            help = "Filter expression, e.g. 'status == \"open\" and labels contains \"bug\"' \
                    (fields and operators: --help)",
            long_help = FILTER_HELP
        )]
        filter: Option<String>,
        /// Sort key `FIELD[:asc|desc]`, e.g. `created:asc` (repeatable, applied in order;
        /// default updated:desc; ties are broken by id). Any filter field but description and
        /// the sets (labels, assignees, parents, children).
        #[arg(long, value_name = "KEY")]
        sort: Vec<String>,
        /// Page size: 1 to 200 (default 20).
        #[arg(long, value_name = "N")]
        limit: Option<u64>,
        /// The next page: the cursor the previous page printed (`more: --cursor …`), with the
        /// same --entity, --filter, --sort and --include-closed.
        #[arg(long, value_name = "CURSOR")]
        cursor: Option<String>,
        /// List closed entities too (without it, open ones only, unless --filter tests
        /// status).
        #[arg(long)]
        include_closed: bool,
        /// Print the page as JSON (as the MCP tool answers it) instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Show an issue, a milestone or an upstream git-mile task whole.
    Show {
        /// Its id: the full UUID or a unique prefix of at least 4 characters.
        #[arg(value_name = "ID")]
        id: String,
        /// Print it as JSON (as the MCP tool answers it) instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Change the title or the description of an issue, a milestone or a task.
    Edit {
        /// The id: the full UUID or a unique prefix of at least 4 characters.
        #[arg(value_name = "ID")]
        id: String,
        /// The new title: one line of 1 to 500 characters.
        #[arg(long, value_name = "TEXT")]
        title: Option<String>,
        /// The new description, replacing the old one whole (up to 256 KiB).
        #[arg(long, value_name = "TEXT")]
        description: Option<String>,
        /// Print the result as JSON instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Add a comment to an issue, a milestone or a task (or edit a task's comment).
    Comment {
        /// The id: the full UUID or a unique prefix of at least 4 characters.
        #[arg(value_name = "ID")]
        id: String,
        /// What the id names, when it may name several kinds (default: whichever it names).
        #[arg(long, value_enum, value_name = "ENTITY")]
        entity: Option<EntityArg>,
        /// The comment: any text (Markdown, up to 256 KiB).
        #[arg(long, value_name = "TEXT")]
        body: String,
        /// Tasks only: edit this comment (its id or a unique prefix) instead of adding one.
        #[arg(long, value_name = "COMMENT")]
        edit: Option<String>,
        /// Print the result as JSON instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Add or remove labels of an issue, a milestone or a task.
    Label {
        /// The id: the full UUID or a unique prefix of at least 4 characters.
        #[arg(value_name = "ID")]
        id: String,
        /// A label to add, one line of 1 to 100 characters (repeatable).
        #[arg(long = "add", value_name = "LABEL")]
        add: Vec<String>,
        /// A label to remove (repeatable).
        #[arg(long = "remove", value_name = "LABEL")]
        remove: Vec<String>,
        /// Print the result as JSON instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Change anything `git_mile.update` changes: of an issue or a milestone, its title,
    /// description, status, labels or milestone; of a task, also its state, assignees,
    /// parents and relations.
    Update(update::UpdateArgs),
    /// The events of an issue, a milestone or a task, newest first: who changed what, when.
    Log(log::LogArgs),
    /// Reopen an issue or a milestone.
    Open {
        /// The issue's or milestone's id: the full UUID or a unique prefix of at least 4
        /// characters.
        #[arg(value_name = "ID")]
        id: String,
        /// Print the result as JSON instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Close an issue or a milestone.
    Close {
        /// The issue's or milestone's id: the full UUID or a unique prefix of at least 4
        /// characters.
        #[arg(value_name = "ID")]
        id: String,
        /// Print the result as JSON instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Attach an issue to a milestone (replacing any other).
    Attach {
        /// The issue's id: the full UUID or a unique prefix of at least 4 characters.
        #[arg(value_name = "ISSUE")]
        issue: String,
        /// The milestone's id: the full UUID or a unique prefix of at least 4 characters.
        #[arg(value_name = "MILESTONE")]
        milestone: String,
        /// Print the result as JSON instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Detach an issue from its milestone.
    Detach {
        /// The issue's id: the full UUID or a unique prefix of at least 4 characters.
        #[arg(value_name = "ISSUE")]
        issue: String,
        /// Print the result as JSON instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Push every issue, milestone and upstream git-mile task to a remote.
    Push {
        /// The remote: a name `git remote` lists, or a URL or path.
        #[arg(value_name = "REMOTE", default_value = "origin")]
        remote: String,
        /// Print the report as JSON instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Fetch a remote's issues, milestones and upstream git-mile tasks and merge them into
    /// this clone (tasks as upstream's `git-mile pull` merges them).
    Pull {
        /// The remote: a name `git remote` lists, or a URL or path.
        #[arg(value_name = "REMOTE", default_value = "origin")]
        remote: String,
        /// Print the report as JSON instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Serve the MCP tools (git_mile.list, git_mile.show, git_mile.create, git_mile.update,
    /// git_mile.comment) over stdio, or Streamable HTTP at /mcp with --http ADDR.
    McpServer {
        #[command(flatten)]
        transport: mcp_common::serve::TransportArgs,
        /// Which tools to offer (one toolset, entities; `--read-only` offers the reads,
        /// git_mile.list and git_mile.show, as the original surface).
        #[command(flatten)]
        surface: mcp_common::surface::SurfaceArgs,
    },
}

impl Command {
    /// Whether the command prints JSON (`--json`; `mcp-server` has none).
    pub fn json(&self) -> bool {
        match self {
            Command::Create { json, .. }
            | Command::List { json, .. }
            | Command::Show { json, .. }
            | Command::Edit { json, .. }
            | Command::Comment { json, .. }
            | Command::Label { json, .. }
            | Command::Open { json, .. }
            | Command::Close { json, .. }
            | Command::Attach { json, .. }
            | Command::Detach { json, .. }
            | Command::Push { json, .. }
            | Command::Pull { json, .. } => *json,
            Command::Update(args) => args.json,
            Command::Log(args) => args.json,
            Command::McpServer { .. } => false,
        }
    }
}

fn out(text: &str) {
    let mut stdout = std::io::stdout().lock();
    let _ = writeln!(stdout, "{text}");
}

pub(crate) fn emit<T: Serialize>(
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

pub(crate) fn written_text(w: &Written, done: &str) -> String {
    if w.events.is_empty() {
        format!("{} {}: nothing to change", w.kind.as_str(), w.id)
    } else {
        format!("{done} {} {}", w.kind.as_str(), w.id)
    }
}

pub(crate) const BOTH: [Kind; 2] = [Kind::Issue, Kind::Milestone];

/// Run a command other than `mcp-server`.
pub fn run(cli: &Cli) -> Result<(), OpError> {
    let catalog = ops::open_catalog(cli.repo.as_deref())?;
    let store = catalog.store();
    let json = cli.command.json();
    match &cli.command {
        Command::Create {
            entity,
            title,
            description,
            labels,
            milestone,
            state,
            assignees,
            parents,
            ..
        } => {
            let kind = match entity.target() {
                Target::Task => {
                    if milestone.is_some() {
                        return Err(OpError::Invalid(
                            "--milestone applies to issues only; a task takes --parent".into(),
                        ));
                    }
                    let request = crate::task_write::Create {
                        title: title.clone(),
                        description: description.clone(),
                        state: state.clone(),
                        labels: labels.clone(),
                        assignees: assignees.clone(),
                        parents: parents.clone(),
                    };
                    return update::create_task(&catalog, &request, json);
                }
                Target::Entity(kind) => kind,
            };
            if state.is_some() || !assignees.is_empty() || !parents.is_empty() {
                return Err(OpError::Invalid(
                    "--state, --assignee and --parent apply to tasks only".into(),
                ));
            }
            let description = description.as_deref().unwrap_or("");
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
            ..
        } => {
            let target = entity.target();
            let key = cursor_key(store.git_dir());
            let request = ListRequest {
                filter: filter.clone(),
                sort: sort.clone(),
                limit: limit.map(serde_json::Number::from),
                cursor: cursor.clone(),
                include_closed: *include_closed,
            };
            let plan = listing::Plan::of(target, &request, &key)
                .map_err(|e| OpError::Invalid(e.to_string()))?;
            let listing::Listed {
                page,
                snapshot,
                tasks,
            } = plan.read(&catalog)?;
            tell_other_refs(&page.other_refs);
            // Every id of the kind listed: the prefixes printed are unique among them.
            let mut ids: Vec<&str> = match target {
                Target::Task => tasks.ids().collect(),
                Target::Entity(kind) => snapshot
                    .rows(kind)
                    .map(|row| row.entity.id.as_str())
                    .chain(snapshot.unreadable(kind))
                    .collect(),
            };
            ids.sort_unstable();
            emit(json, &page, |page| list_text(page, &ids))
        }
        Command::Show { id, .. } => {
            let snapshot = catalog.snapshot()?;
            // Only the tasks the id may name are read.
            let tasks = catalog.tasks_named(id)?;
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
                    show_task(json, &catalog, &tasks, lookup, what, id)
                }
                (Err(err), _) => Err(err),
            }
        }
        Command::Edit {
            id,
            title,
            description,
            ..
        } => match update::resolve(&catalog, None, id)? {
            update::Named::Task(id) => {
                if title.is_none() && description.is_none() {
                    return Err(OpError::Invalid(
                        "nothing to edit: give --title and/or --description".into(),
                    ));
                }
                let change = crate::task_write::Update {
                    title: title.clone(),
                    description: description.clone(),
                    ..Default::default()
                };
                update::update_task(&catalog, &id, &change, "edited", json)
            }
            update::Named::Entity(kind, id) => {
                let w = ops::edit(store, kind, &id, title.as_deref(), description.as_deref())?;
                emit(json, &w, |w| written_text(w, "edited"))
            }
        },
        Command::Comment {
            id,
            entity,
            body,
            edit,
            ..
        } => match update::resolve(&catalog, *entity, id)? {
            update::Named::Task(id) => {
                update::comment_task(&catalog, &id, body, edit.as_deref(), json)
            }
            update::Named::Entity(kind, id) => {
                if edit.is_some() {
                    return Err(OpError::Invalid(
                        "--edit applies to tasks' comments only".into(),
                    ));
                }
                let w = ops::comment(store, kind, &id, body)?;
                emit(json, &w, |w| written_text(w, "commented on"))
            }
        },
        Command::Label {
            id, add, remove, ..
        } => match update::resolve(&catalog, None, id)? {
            update::Named::Task(id) => {
                if add.is_empty() && remove.is_empty() {
                    return Err(OpError::Invalid(
                        "nothing to change: give --add LABEL and/or --remove LABEL".into(),
                    ));
                }
                let change = crate::task_write::Update {
                    add_labels: add.clone(),
                    remove_labels: remove.clone(),
                    ..Default::default()
                };
                update::update_task(&catalog, &id, &change, "relabelled", json)
            }
            update::Named::Entity(kind, id) => {
                let w = ops::label(store, kind, &id, add, remove)?;
                emit(json, &w, |w| written_text(w, "relabelled"))
            }
        },
        Command::Update(args) => update::run(&catalog, args),
        Command::Log(args) => log::run(&catalog, args),
        Command::Open { id, .. } => {
            let (kind, id) = resolve_writable(&catalog, id)?;
            let w = ops::set_status(store, kind, &id, Status::Open)?;
            emit(json, &w, |w| written_text(w, "opened"))
        }
        Command::Close { id, .. } => {
            let (kind, id) = resolve_writable(&catalog, id)?;
            let w = ops::set_status(store, kind, &id, Status::Closed)?;
            emit(json, &w, |w| written_text(w, "closed"))
        }
        Command::Attach {
            issue, milestone, ..
        } => {
            let (_, issue) = ops::resolve(&catalog, &[Kind::Issue], issue)?;
            let (_, milestone) = ops::resolve(&catalog, &[Kind::Milestone], milestone)?;
            let w = ops::attach(store, &issue, &milestone)?;
            emit(json, &w, |w| written_text(w, "attached"))
        }
        Command::Detach { issue, .. } => {
            let (_, issue) = ops::resolve(&catalog, &[Kind::Issue], issue)?;
            let w = ops::detach(store, &issue)?;
            emit(json, &w, |w| written_text(w, "detached"))
        }
        Command::Push { remote, .. } => {
            let report = sync::push(store, remote)?;
            emit(json, &report, sync::PushReport::text)
        }
        Command::Pull { remote, .. } => {
            let report = sync::pull(store, remote)?;
            emit(json, &report, sync::PullReport::text)?;
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
            if let Ok(tasks) = catalog.tasks_named(&id)
                && let TaskLookup::Found(row) = tasks.lookup(&id)
            {
                return Err(OpError::Invalid(format!(
                    "task {} has no status of its own: its state makes it open or closed; \
                     set one with `git mile update {} --state STATE`",
                    row.task.id, row.task.id
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
    catalog: &crate::catalog::Catalog,
    tasks: &TaskSet,
    lookup: TaskLookup<'_>,
    what: &'static str,
    id: String,
) -> Result<(), OpError> {
    match lookup {
        TaskLookup::Found(row) => emit(
            json,
            &TaskView::shown(&row, |ids| catalog.tasks_among(ids))?,
            task_text,
        ),
        TaskLookup::Ambiguous(candidates) => Err(OpError::Ambiguous { id, candidates }),
        TaskLookup::Unreadable(id, why) => Err(OpError::Unreadable {
            what: "task",
            id,
            why: why.to_string(),
        }),
        TaskLookup::NotFound => {
            tell_other_refs(tasks.other_refs());
            // Tasks of other ids are not read: their refs are counted.
            let what = if tasks.refs() == 0 {
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
            line(&group.prefix),
            plural(group.count, "ref"),
            line(&group.what)
        );
    }
}

fn task_text(t: &TaskView) -> String {
    let none = || "none".to_string();
    let mut text = format!(
        "task {}\n{}  [{}]\nstate: {} (kind: {})\nby {} on {}, updated {}\n",
        t.id,
        line(&t.title),
        t.status,
        t.facts.state.as_deref().map_or_else(none, line),
        t.facts.state_kind.as_deref().map_or_else(none, line),
        line(&t.author),
        t.created.format("%Y-%m-%d %H:%M"),
        t.updated.format("%Y-%m-%d %H:%M"),
    );
    for (name, values) in [("labels", &t.labels), ("assignees", &t.facts.assignees)] {
        if !values.is_empty() {
            text.push_str(&format!("{name}: {}\n", lines(values)));
        }
    }
    // Parents and children one a line, named as far as they can be read.
    for (name, ids) in [("parent", &t.facts.parents), ("child", &t.facts.children)] {
        for id in ids {
            let named = match t.family.get(id) {
                Some(kin) => {
                    let state = kin
                        .state
                        .as_deref()
                        .map(|s| format!("  <{}>", line(s)))
                        .unwrap_or_default();
                    format!("  {}  [{}]{state}", line(&kin.title), kin.status)
                }
                None => "  (not in this repository, or unreadable)".to_string(),
            };
            text.push_str(&format!("{name}: {}{named}\n", line(id)));
        }
    }
    for (kind, ids) in &t.relations {
        text.push_str(&format!("{}: {}\n", line(kind), lines(ids)));
    }
    if !t.description.is_empty() {
        text.push('\n');
        text.push_str(&block(&t.description));
        text.push('\n');
    }
    let omitted = t
        .stats
        .comment_count
        .saturating_sub(t.comments.len() as u64);
    if omitted > 0 {
        text.push_str(&format!(
            "\n({} before these not shown)\n",
            plural(omitted, "comment")
        ));
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
            line(&c.author),
            c.ts.format("%Y-%m-%d %H:%M"),
            block(&c.body)
        ));
    }
    text.trim_end().to_string()
}

/// The longest one-line field (a title, a label, a name) printed on a terminal, in
/// characters; `--json` prints them whole.
const MAX_LINE: usize = 200;
/// The longest text (a description, a comment) printed on a terminal, in characters.
const MAX_BLOCK: usize = 20_000;

/// Whether a terminal must not receive `c` as is: control characters (ESC, CR, NUL, BEL…) and
/// the characters that reorder text (bidirectional controls).
fn unsafe_on_terminal(c: char) -> bool {
    c.is_control()
        || matches!(c, '\u{061c}' | '\u{200e}' | '\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
}

/// `text` cut to `max` characters (`…` marks the cut), with every character a terminal must
/// not receive written as its escape (`\u{1b}`); newlines and tabs kept when `keep_lines`.
fn for_terminal(text: &str, max: usize, keep_lines: bool) -> String {
    crate::quote::cut(text, max)
        .chars()
        .map(|c| {
            if unsafe_on_terminal(c) && !(keep_lines && matches!(c, '\n' | '\t')) {
                c.escape_unicode().to_string()
            } else {
                c.to_string()
            }
        })
        .collect()
}

/// A one-line field for a terminal.
pub fn line(text: &str) -> String {
    for_terminal(text, MAX_LINE, false)
}

/// A text of several lines for a terminal.
pub fn block(text: &str) -> String {
    for_terminal(text, MAX_BLOCK, true)
}

/// One-line fields for a terminal, comma-separated.
fn lines(values: &[String]) -> String {
    values
        .iter()
        .map(|v| line(v))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The shortest prefix of `id` (at least 8 characters) that no other of `ids` (sorted) starts
/// with, so that typing it back names `id`.
fn unique_prefix(id: &str, ids: &[&str]) -> String {
    let common = |other: &str| {
        id.chars()
            .zip(other.chars())
            .take_while(|(a, b)| a == b)
            .count()
    };
    let at = ids.partition_point(|other| *other < id);
    let neighbours = [
        at.checked_sub(1).and_then(|i| ids.get(i)),
        ids.get(at).filter(|other| **other != id),
        ids.get(at + 1),
    ];
    let shared = neighbours
        .into_iter()
        .flatten()
        .filter(|other| **other != id)
        .map(|other| common(other))
        .max()
        .unwrap_or(0);
    id.chars().take((shared + 1).max(8)).collect()
}

/// A state of the tasks' vocabulary for a terminal: `state/todo (todo, default): 3 tasks`.
fn state_text(s: &crate::task::shapes::StateUse) -> String {
    let mut notes: Vec<String> = s.kind.iter().map(|k| line(k)).collect();
    if s.default {
        notes.push("default".into());
    }
    if !s.workflow {
        notes.push("not in the workflow".into());
    }
    let name = s.state.as_deref().map_or_else(|| "no state".into(), line);
    let notes = if notes.is_empty() {
        String::new()
    } else {
        format!(" ({})", notes.join(", "))
    };
    format!("{name}{notes}: {}", plural(s.tasks, "task"))
}

/// A page for a terminal; `ids` (sorted) are every id of the kind listed, among which the
/// prefixes printed are unique.
fn list_text(page: &ListResponse, ids: &[&str]) -> String {
    let mut text = String::new();
    if page.items.is_empty() {
        match &page.tasks {
            // The CLI's own words for the page's note: its commands, not the tool's.
            Some(note) => text.push_str(&format!(
                "nothing matches; this repository holds {} of upstream git-mile: list them with \
                 `git mile list --entity task` (done ones with --include-closed)\n",
                plural(note.count, "task")
            )),
            None => text.push_str("nothing matches\n"),
        }
    }
    for item in &page.items {
        let short = unique_prefix(&item.id, ids);
        let mut line = format!("{short}  {:<6}  {}", item.status, self::line(&item.title));
        if let Some(task) = &item.task {
            if let Some(state) = &task.state {
                line.push_str(&format!("  <{}>", self::line(state)));
            }
            if !task.assignees.is_empty() {
                let names: Vec<String> = task.assignees.iter().map(|a| self::line(a)).collect();
                line.push_str(&format!("  @{}", names.join(", @")));
            }
        }
        if !item.labels.is_empty() {
            line.push_str(&format!("  [{}]", lines(&item.labels)));
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
    if !page.states.is_empty() {
        let states: Vec<String> = page.states.iter().map(state_text).collect();
        text.push_str(&format!("states: {}\n", states.join(", ")));
    }
    if !page.unreadable.is_empty() {
        text.push_str(&format!(
            "unreadable (the repository may be damaged; see `git fsck`): {}\n",
            page.unreadable.join(", ")
        ));
    }
    text.trim_end().to_string()
}

pub(crate) fn plural(n: u64, what: &str) -> String {
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
        line(&e.title),
        e.status,
        line(&e.author),
        e.created.format("%Y-%m-%d %H:%M"),
        e.updated.format("%Y-%m-%d %H:%M"),
    );
    if !e.labels.is_empty() {
        text.push_str(&format!("labels: {}\n", lines(&e.labels)));
    }
    if let Some(milestone) = &e.milestone {
        match milestone {
            Some(m) => text.push_str(&format!(
                "milestone: {} {}\n",
                m.title
                    .as_deref()
                    .map_or_else(|| "(not in this clone)".into(), line),
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
        text.push_str(&block(&e.description));
        text.push('\n');
    }
    for c in &e.comments {
        text.push_str(&format!(
            "\n--- {} on {}\n{}\n",
            line(&c.author),
            c.ts.format("%Y-%m-%d %H:%M"),
            block(&c.body)
        ));
    }
    text.trim_end().to_string()
}

#[cfg(test)]
mod tests {
    use clap::CommandFactory;

    use super::*;
    use crate::query::Field;

    #[test]
    fn the_command_line_is_consistent() {
        Cli::command().debug_assert();
    }

    #[test]
    fn list_help_names_every_filter_field_with_an_example() {
        let mut cli = Cli::command();
        let list = cli.find_subcommand_mut("list").expect("list");
        let help = list.render_long_help().to_string();
        for field in Field::ALL.iter().chain(Field::TASK.iter()) {
            assert!(
                help.contains(field.name()),
                "`git mile list --help` does not name {}",
                field.name()
            );
        }
        assert!(help.contains(r#"'status == "open" and labels contains "bug"'"#));
        // Each example of the help parses.
        for example in [
            r#"status == "open" and labels contains "bug""#,
            "comment_count > 2 or milestone == null",
            "updated >= 2026-01-01",
            "not has_milestone",
        ] {
            assert!(crate::query::Filter::parse(example).is_ok(), "{example}");
        }
    }

    #[test]
    fn json_is_an_option_of_the_commands_that_print() {
        let json = |args: &[&str]| {
            Cli::try_parse_from(std::iter::once("git-mile").chain(args.iter().copied()))
                .map(|cli| cli.command.json())
        };
        assert_eq!(json(&["list", "--json"]).ok(), Some(true));
        assert_eq!(json(&["show", "abcd", "--json"]).ok(), Some(true));
        assert_eq!(json(&["pull", "--json"]).ok(), Some(true));
        assert_eq!(json(&["list"]).ok(), Some(false));
        // The server prints no JSON of its own: it has no --json.
        assert!(json(&["mcp-server", "--json"]).is_err());
        // --repo and -v go anywhere.
        assert!(json(&["--repo", ".", "-v", "list"]).is_ok());
        assert!(json(&["mcp-server", "--repo", ".", "-vv"]).is_ok());
    }

    #[test]
    fn terminals_get_no_control_characters_nor_huge_fields() {
        assert_eq!(
            line("ctl\u{1b}[2J\r\nInjected\u{0}\u{7}\u{202e}"),
            "ctl\\u{1b}[2J\\u{d}\\u{a}Injected\\u{0}\\u{7}\\u{202e}"
        );
        assert_eq!(
            block("a\n\tb\r\u{1b}]0;x\u{7}"),
            "a\n\tb\\u{d}\\u{1b}]0;x\\u{7}"
        );
        let title = line(&"T".repeat(1_000_000));
        assert_eq!(title.chars().count(), MAX_LINE);
        assert!(title.ends_with('…'));
        assert_eq!(line("plain, é"), "plain, é");
    }

    #[test]
    fn prefixes_are_unique_among_the_ids() {
        let ids = [
            "019a5b2c-0001-7000-8000-000000000001",
            "019a5b2c-0002-7000-8000-000000000002",
            "019a5b2c-0002-7000-8000-000000000003",
            "4b000000-0000-4000-8000-000000000000",
        ];
        assert_eq!(unique_prefix(ids[0], &ids), "019a5b2c-0001");
        assert_eq!(
            unique_prefix(ids[1], &ids),
            "019a5b2c-0002-7000-8000-000000000002"
        );
        assert_eq!(unique_prefix(ids[3], &ids), "4b000000");
        assert_eq!(unique_prefix(ids[3], &ids[3..]), "4b000000");
    }
}
