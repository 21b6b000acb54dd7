//! The command line: `jility init`, `jility ticket …`, `jility dep …`, `jility template …`
//! and `jility --mcp-server`. Every command prints the same markdown the MCP tools answer,
//! or with `--json` the same data as JSON.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, Parser, Subcommand};
use mcp_common::serve::TransportArgs;
use mcp_common::{Page, Paged, ToolError};
use serde::Serialize;

#[cfg(feature = "cloud")]
mod cloud;
#[cfg(feature = "cloud")]
mod people;

use jility_core::description::EditOperation;
use jility_core::errors;
use jility_core::params::*;
use jility_core::render;
use jility_sqlite::local::{LocalTracker, Location, open};

#[derive(Debug, Parser)]
#[command(
    name = "jility",
    version,
    about = "AI-native ticket tracker: a CLI and an MCP server on an embedded SQLite database",
    after_help = "The database is .jility/data.db in the working directory or the nearest parent that has one (like git finds .git), or --db / JILITY_DB."
)]
pub struct Cli {
    // Its help names `--http` only where the build has it.
    #[cfg_attr(
        feature = "http",
        arg(
            long,
            help = "Run as an MCP server, over stdio unless --http is given (creates .jility/ in the working directory when none is found)"
        )
    )]
    #[cfg_attr(
        not(feature = "http"),
        arg(
            long,
            help = "Run as an MCP server over stdio (creates .jility/ in the working directory when none is found)"
        )
    )]
    pub mcp_server: bool,
    #[command(flatten)]
    pub transport: TransportArgs,
    /// The database file (default: the nearest .jility/data.db).
    #[arg(long, global = true, env = "JILITY_DB", value_name = "PATH")]
    pub db: Option<PathBuf>,
    /// Print JSON instead of markdown.
    #[arg(long, global = true)]
    pub json: bool,
    /// Log more to stderr (-v info, -vv debug, -vvv trace).
    #[arg(short, long, global = true, action = clap::ArgAction::Count)]
    pub verbose: u8,
    #[command(subcommand)]
    pub command: Option<Command>,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Create .jility/data.db here with a first project.
    Init {
        /// Ticket prefix of the project (tickets are KEY-1, KEY-2, …; default TASK). A
        /// project that has no ticket yet takes a new key.
        #[arg(long)]
        key: Option<String>,
        /// Project name (default: the directory's name).
        #[arg(long)]
        name: Option<String>,
    },
    /// Create, list, show and change tickets.
    #[command(subcommand)]
    Ticket(Box<TicketCommand>),
    /// Dependencies between tickets.
    #[command(subcommand)]
    Dep(DepCommand),
    /// Ticket templates.
    #[command(subcommand)]
    Template(TemplateCommand),
    /// Open the board in a browser: the web app on this project's database, on loopback
    /// only, live while agents and the CLI change tickets.
    #[cfg(feature = "web")]
    #[command(
        after_help = "Open the address it prints. The board answers only on the loopback address it listens on (no accounts: it is yours); changes you make are recorded under JILITY_ACTOR, else $USER. Stop it with Ctrl-C."
    )]
    Web {
        /// The loopback address and port to listen on (port 0 picks a free one).
        #[arg(long, default_value = "127.0.0.1:7878", value_name = "ADDR:PORT")]
        listen: std::net::SocketAddr,
    },
    #[cfg(feature = "cloud")]
    #[command(flatten)]
    Cloud(cloud::CloudCommand),
}

#[derive(Debug, Subcommand)]
pub enum TicketCommand {
    /// Create a ticket.
    Create {
        #[arg(long, short)]
        title: String,
        #[arg(long, short)]
        description: Option<String>,
        /// Story points, 1 to 13.
        #[arg(long, short = 'p')]
        points: Option<i64>,
        #[arg(long, short)]
        status: Option<String>,
        /// A label (repeat for several).
        #[arg(long = "label", short)]
        labels: Vec<String>,
        /// An assignee (repeat for several).
        #[arg(long = "assignee", short)]
        assignees: Vec<String>,
        #[arg(long)]
        parent: Option<String>,
        #[arg(long)]
        epic: Option<String>,
    },
    /// List tickets, grouped by status.
    List {
        /// A status to include (repeat for several).
        #[arg(long = "status", short)]
        statuses: Vec<String>,
        #[arg(long, short)]
        assignee: Option<String>,
        /// A label every listed ticket carries (repeat for several).
        #[arg(long = "label", short)]
        labels: Vec<String>,
        #[arg(long)]
        parent: Option<String>,
        #[arg(long)]
        epic: Option<String>,
        #[arg(long)]
        unassigned: bool,
        #[arg(long)]
        limit: Option<i64>,
        #[arg(long)]
        cursor: Option<String>,
    },
    /// Show a ticket with comments, dependencies, commits and recent changes.
    Show { ticket: String },
    /// Change fields, or edit the description precisely.
    Edit(EditArgs),
    /// Move a ticket to another status.
    Move {
        ticket: String,
        status: String,
        #[arg(long, short)]
        message: Option<String>,
    },
    /// Set a ticket's assignees (none = unassign).
    Assign {
        ticket: String,
        assignees: Vec<String>,
        /// Handoff message, added as a comment.
        #[arg(long, short)]
        message: Option<String>,
    },
    /// Assign a ticket to yourself and start it.
    Claim {
        ticket: String,
        #[arg(long, short)]
        message: Option<String>,
    },
    /// Comment on a ticket.
    Comment { ticket: String, content: String },
    /// Show every version of the description, or restore one.
    History {
        ticket: String,
        /// Restore this version (recorded as a new version).
        #[arg(long, value_name = "VERSION")]
        revert: Option<i64>,
    },
    /// Full-text search over titles, descriptions and comments.
    Search {
        query: String,
        #[arg(long)]
        limit: Option<i64>,
        #[arg(long)]
        cursor: Option<String>,
    },
    /// Link a git commit to a ticket.
    Link {
        ticket: String,
        commit: String,
        #[arg(long, short)]
        message: Option<String>,
    },
    /// Delete a ticket (kept in the database, gone from every view).
    Delete { ticket: String },
}

#[derive(Debug, Args)]
pub struct EditArgs {
    pub ticket: String,
    #[arg(long, short)]
    pub title: Option<String>,
    /// Replace the whole description.
    #[arg(long, short, conflicts_with_all = ["append", "prepend", "lines", "section"])]
    pub description: Option<String>,
    /// Append text to the description.
    #[arg(long, conflicts_with_all = ["prepend", "lines", "section"])]
    pub append: Option<String>,
    /// Prepend text to the description.
    #[arg(long, conflicts_with_all = ["lines", "section"])]
    pub prepend: Option<String>,
    /// Replace lines START-END (1-indexed, inclusive) with --content.
    #[arg(
        long,
        value_name = "START-END",
        requires = "content",
        conflicts_with = "section"
    )]
    pub lines: Option<String>,
    /// Replace the body of this markdown section (e.g. "## Acceptance Criteria") with --content.
    #[arg(long, value_name = "HEADER", requires = "content")]
    pub section: Option<String>,
    /// The new text for --lines or --section.
    #[arg(long)]
    pub content: Option<String>,
    /// Story points, 1 to 13.
    #[arg(long, short = 'p', conflicts_with = "clear_points")]
    pub points: Option<i64>,
    #[arg(long)]
    pub clear_points: bool,
    /// Replace the labels (repeat for several).
    #[arg(long = "label", short)]
    pub labels: Vec<String>,
    #[arg(long)]
    pub clear_labels: bool,
    #[arg(long, conflicts_with = "clear_parent")]
    pub parent: Option<String>,
    #[arg(long)]
    pub clear_parent: bool,
    #[arg(long, conflicts_with = "clear_epic")]
    pub epic: Option<String>,
    #[arg(long)]
    pub clear_epic: bool,
    /// Change message for the history.
    #[arg(long, short)]
    pub message: Option<String>,
}

#[derive(Debug, Subcommand)]
pub enum DepCommand {
    /// TICKET depends on DEPENDS_ON (DEPENDS_ON must be done first).
    Add { ticket: String, depends_on: String },
    /// Remove a dependency.
    Remove { ticket: String, depends_on: String },
    /// What a ticket waits on and what waits on it.
    Graph { ticket: String },
}

#[derive(Debug, Subcommand)]
pub enum TemplateCommand {
    /// List the built-in and project templates.
    List {
        #[arg(long)]
        limit: Option<i64>,
        #[arg(long)]
        cursor: Option<String>,
    },
    /// Create a ticket from a template.
    Create {
        template: String,
        /// A variable as NAME=VALUE (repeat for several).
        #[arg(long = "var", value_name = "NAME=VALUE")]
        variables: Vec<String>,
        #[arg(long, short)]
        assignee: Option<String>,
    },
}

#[derive(Serialize)]
struct Initialized {
    db: String,
    key: String,
    name: String,
    created: bool,
    #[serde(skip)]
    text: String,
}

pub fn cli_actor() -> String {
    ["JILITY_ACTOR", "USER", "USERNAME"]
        .iter()
        .find_map(|v| std::env::var(v).ok().filter(|s| !s.trim().is_empty()))
        .map(|s| s.trim().to_string())
        .unwrap_or_else(|| "cli".to_string())
}

/// Print an answer: markdown, or JSON with `--json`.
fn emit<T: Serialize>(json: bool, data: &T, text: fn(&T) -> String) -> Result<(), ToolError> {
    let out = if json {
        serde_json::to_string_pretty(data)
            .map_err(|e| ToolError::internal(format!("Cannot print JSON: {e}")))?
    } else {
        text(data)
    };
    let mut stdout = std::io::stdout().lock();
    // A closed pipe (`jility … | head`) is not an error worth reporting.
    let _ = writeln!(stdout, "{out}");
    Ok(())
}

/// Print one page of a list: its markdown, or with `--json` the data with a `page` member
/// beside its own (`{"tickets": […], "page": {"total", "next_cursor"?}}`), so that
/// `page.next_cursor` can be passed to `--cursor`.
fn emit_page<T: Serialize>(
    json: bool,
    paged: &Paged<T>,
    text: fn(&T, &Page) -> String,
) -> Result<(), ToolError> {
    let out = if json {
        let cannot = |e: serde_json::Error| ToolError::internal(format!("Cannot print JSON: {e}"));
        let mut value = serde_json::to_value(&paged.data).map_err(cannot)?;
        let page = serde_json::to_value(&paged.page).map_err(cannot)?;
        match &mut value {
            serde_json::Value::Object(members) => {
                members.insert("page".to_string(), page);
            }
            _ => value = serde_json::json!({"data": value, "page": page}),
        }
        serde_json::to_string_pretty(&value).map_err(cannot)?
    } else {
        text(&paged.data, &paged.page)
    };
    let _ = writeln!(std::io::stdout().lock(), "{out}");
    Ok(())
}

/// Report an error: to stderr as text (the message, then the hint), or to stdout as the
/// JSON envelope with `--json`.
pub fn report(json: bool, err: &ToolError) {
    if json {
        let envelope = serde_json::json!({"status": "error", "error": err});
        let _ = writeln!(std::io::stdout().lock(), "{envelope:#}");
    } else {
        let text = format!("❌ Error: {}\n\n{}", err.message, err.hint_text());
        let _ = writeln!(std::io::stderr().lock(), "{text}");
    }
}

/// The whole program: `jility --mcp-server [--http ADDR]`, or one CLI command.
pub fn main(mut cli: Cli) -> ExitCode {
    mcp_common::serve::init_tracing(cli.verbose);
    // `jility admin` and `jility serve` work on a cloud database directly, and `jility auth`
    // and `jility audit` on the API, in any mode.
    #[cfg(feature = "cloud")]
    let administers = matches!(cli.command, Some(Command::Cloud(_)));
    #[cfg(not(feature = "cloud"))]
    let administers = false;
    let cloud = match std::env::var("JILITY_MODE") {
        Ok(mode) if mode.eq_ignore_ascii_case("cloud") => true,
        Ok(mode) if mode.is_empty() || mode.eq_ignore_ascii_case("local") => false,
        Ok(mode) => {
            let err = ToolError::new(
                errors::INVALID_INPUT,
                format!("JILITY_MODE={} is not a mode", errors::clip(&mode)),
            )
            .with_hint("Set JILITY_MODE to `local` (the project's .jility/data.db) or `cloud` (the API at JILITY_API_URL).");
            report(cli.json, &err);
            return ExitCode::from(2);
        }
        Err(_) => false,
    };
    #[cfg(not(feature = "cloud"))]
    if cloud {
        let err = ToolError::new(
            errors::INVALID_INPUT,
            "This jility was built without cloud mode (the `cloud` feature)",
        )
        .with_hint("Unset JILITY_MODE for local mode, or install the default build of jility.");
        report(cli.json, &err);
        return ExitCode::from(2);
    }
    if cloud && !administers && !cli.mcp_server {
        let err = ToolError::new(
            errors::INVALID_INPUT,
            "In cloud mode this command is not available: the ticket commands work on a local database",
        )
        .with_hint("Use `jility --mcp-server` (the bridge), `jility auth …` and `jility audit` in cloud mode, or unset JILITY_MODE for the local commands.");
        report(cli.json, &err);
        return ExitCode::from(2);
    }
    if cli.mcp_server {
        let transport = match cli.transport.transport() {
            Ok(transport) => transport,
            Err(err) => {
                mcp_common::serve::report_start_error("jility", &err);
                return ExitCode::from(2);
            }
        };
        #[cfg(feature = "cloud")]
        let served = if cloud {
            crate::app::serve_bridge(transport)
        } else {
            crate::app::serve_local(cli.db.take(), transport)
        };
        #[cfg(not(feature = "cloud"))]
        let served = crate::app::serve_local(cli.db.take(), transport);
        return match served {
            Ok(()) => ExitCode::SUCCESS,
            Err(err) => {
                let _ = writeln!(std::io::stderr().lock(), "jility: {err:#}");
                ExitCode::FAILURE
            }
        };
    }
    #[cfg(feature = "http")]
    if cli.transport.http.is_some() {
        let _ = writeln!(
            std::io::stderr().lock(),
            "jility: --http serves MCP: give it with --mcp-server"
        );
        return ExitCode::from(2);
    }
    let Some(command) = cli.command.take() else {
        let _ = writeln!(
            std::io::stderr().lock(),
            "jility: give a command (init, ticket, dep, template) or --mcp-server; see `jility --help`"
        );
        return ExitCode::from(2);
    };
    let json = cli.json;
    match run(cli, command) {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            report(json, &err);
            ExitCode::FAILURE
        }
    }
}

fn parse_range(text: &str) -> Result<(i64, i64), ToolError> {
    let bad = || {
        ToolError::new(
            errors::INVALID_INPUT,
            format!("'{text}' is not a line range"),
        )
        .with_hint("Write the range as START-END, e.g. --lines 8-10 (or a single line: --lines 8).")
    };
    let (start, end) = text.split_once('-').unwrap_or((text, text));
    let start = start.trim().parse().map_err(|_| bad())?;
    let end = end.trim().parse().map_err(|_| bad())?;
    Ok((start, end))
}

fn parse_vars(vars: &[String]) -> Result<BTreeMap<String, String>, ToolError> {
    vars.iter()
        .map(|v| {
            v.split_once('=')
                .map(|(k, v)| (k.trim().to_string(), v.to_string()))
                .ok_or_else(|| {
                    ToolError::new(errors::INVALID_INPUT, format!("'{v}' is not NAME=VALUE"))
                        .with_hint("Give variables as --var resource=users.")
                })
        })
        .collect()
}

/// Run one CLI command against the database found for it.
pub fn run(cli: Cli, command: Command) -> Result<(), ToolError> {
    let json = cli.json;
    let command = match command {
        #[cfg(feature = "cloud")]
        Command::Cloud(cloud_command) => return cloud::run(json, cloud_command),
        other => other,
    };
    let cwd = std::env::current_dir()
        .map_err(|e| ToolError::internal(format!("Cannot read the working directory: {e}")))?;
    if let Command::Init { key, name } = &command {
        let location = match &cli.db {
            Some(db) => Location::explicit(db.clone()),
            None => Location::in_dir(&cwd),
        };
        let explicit = key.is_some();
        let key = jility_core::tracker::check_key(key.as_deref().unwrap_or("TASK"))?;
        let mut tracker = open(&location, true)?;
        let name = name.clone().unwrap_or_else(|| {
            location
                .root
                .canonicalize()
                .ok()
                .and_then(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()))
                .unwrap_or_else(|| "Default Project".to_string())
        });
        let (project, created) = tracker.init(&key, &name, explicit)?;
        let db = location.db.display().to_string();
        let text = if created {
            format!(
                "✅ Initialized Jility in {db}\n\n**Project:** {} (tickets are {}-1, {}-2, …)\n\nCreate a ticket: `jility ticket create --title \"…\"`",
                project.name, project.key, project.key
            )
        } else {
            format!(
                "✅ Jility is already initialized in {db}\n\n**Project:** {} ({})",
                project.name, project.key
            )
        };
        let data = Initialized {
            db,
            key: project.key,
            name: project.name,
            created,
            text,
        };
        return emit(json, &data, |d| d.text.clone());
    }
    let location = match &cli.db {
        Some(db) => Location::explicit(db.clone()),
        None => Location::find(&cwd).ok_or_else(|| {
            ToolError::not_found(format!(
                "No Jility database found in {} or its parents",
                cwd.display()
            ))
            .with_hint(
                "Run `jility init` in the project's root, or pass --db PATH / set JILITY_DB.",
            )
        })?,
    };
    let mut t = open(&location, false)?;
    let actor = cli_actor();
    let a = actor.as_str();
    match command {
        Command::Init { .. } => Ok(()),
        #[cfg(feature = "cloud")]
        Command::Cloud(_) => Ok(()),
        #[cfg(feature = "web")]
        Command::Web { listen } => {
            drop(t);
            crate::app::serve_web_local(location, listen, actor)
        }
        Command::Ticket(cmd) => match *cmd {
            TicketCommand::Create {
                title,
                description,
                points,
                status,
                labels,
                assignees,
                parent,
                epic,
            } => {
                let created = t.create_ticket(
                    a,
                    CreateTicket {
                        title,
                        description,
                        story_points: points,
                        status: status.map(StatusName),
                        assignees,
                        labels,
                        parent_id: parent,
                        epic_id: epic,
                    },
                )?;
                emit(json, &created, render::created)
            }
            TicketCommand::List {
                statuses,
                assignee,
                labels,
                parent,
                epic,
                unassigned,
                limit,
                cursor,
            } => {
                let page = t.list(&ListTickets {
                    status: statuses.into_iter().map(StatusName).collect(),
                    assignee,
                    labels,
                    parent_id: parent,
                    epic_id: epic,
                    unassigned,
                    limit,
                    cursor,
                })?;
                emit_page(json, &page, render::page)
            }
            TicketCommand::Show { ticket } => emit(json, &t.get_ticket(&ticket)?, render::detail),
            TicketCommand::Edit(e) => edit(&mut t, a, json, e),
            TicketCommand::Move {
                ticket,
                status,
                message,
            } => {
                let moved = t.update_status(
                    a,
                    UpdateStatus {
                        ticket_id: ticket,
                        status: StatusName(status),
                        message,
                    },
                )?;
                emit(json, &moved, render::status_updated)
            }
            TicketCommand::Assign {
                ticket,
                assignees,
                message,
            } => {
                let assigned = t.assign(
                    a,
                    AssignTicket {
                        ticket_id: ticket,
                        assignees,
                        message,
                    },
                )?;
                emit(json, &assigned, render::assigned)
            }
            TicketCommand::Claim { ticket, message } => {
                let claimed = t.claim(
                    a,
                    ClaimTicket {
                        ticket_id: ticket,
                        message,
                    },
                )?;
                emit(json, &claimed, render::claimed)
            }
            TicketCommand::Comment { ticket, content } => {
                let added = t.add_comment(
                    a,
                    AddComment {
                        ticket_id: ticket,
                        content,
                    },
                )?;
                emit(json, &added, render::comment_added)
            }
            TicketCommand::History { ticket, revert } => match revert {
                Some(version) => {
                    let reverted = t.revert_description(
                        a,
                        RevertDescription {
                            ticket_id: ticket,
                            version,
                        },
                    )?;
                    emit(json, &reverted, render::description_updated)
                }
                None => emit(json, &t.history(&ticket)?, render::history),
            },
            TicketCommand::Search {
                query,
                limit,
                cursor,
            } => emit_page(
                json,
                &t.search(&SearchTickets {
                    query,
                    limit,
                    cursor,
                })?,
                render::search,
            ),
            TicketCommand::Link {
                ticket,
                commit,
                message,
            } => {
                let linked = t.link_commit(
                    a,
                    LinkCommit {
                        ticket_id: ticket,
                        commit_hash: commit,
                        commit_message: message,
                    },
                )?;
                emit(json, &linked, render::commit_linked)
            }
            TicketCommand::Delete { ticket } => emit(json, &t.delete(a, &ticket)?, render::deleted),
        },
        Command::Dep(cmd) => match cmd {
            DepCommand::Add { ticket, depends_on } => {
                let added = t.add_dependency(
                    a,
                    Dependency {
                        ticket_id: ticket,
                        depends_on,
                    },
                )?;
                emit(json, &added, render::dependency_added)
            }
            DepCommand::Remove { ticket, depends_on } => {
                let removed = t.remove_dependency(
                    a,
                    Dependency {
                        ticket_id: ticket,
                        depends_on,
                    },
                )?;
                emit(json, &removed, render::dependency_removed)
            }
            DepCommand::Graph { ticket } => {
                emit(json, &t.dependency_graph(&ticket)?, render::graph)
            }
        },
        Command::Template(cmd) => match cmd {
            TemplateCommand::List { limit, cursor } => emit_page(
                json,
                &t.templates(&ListTemplates { limit, cursor })?,
                render::templates,
            ),
            TemplateCommand::Create {
                template,
                variables,
                assignee,
            } => {
                let created = t.create_from_template(
                    a,
                    FromTemplate {
                        template,
                        variables: parse_vars(&variables)?,
                        assignee,
                    },
                )?;
                emit(json, &created, render::created)
            }
        },
    }
}

fn edit(t: &mut LocalTracker, a: &str, json: bool, e: EditArgs) -> Result<(), ToolError> {
    // A precise description edit goes through the same operation as the MCP tool.
    let op = if let Some(text) = &e.append {
        Some((EditOperation::Append, text.clone(), None, None))
    } else if let Some(text) = &e.prepend {
        Some((EditOperation::Prepend, text.clone(), None, None))
    } else if let Some(range) = &e.lines {
        let (start, end) = parse_range(range)?;
        Some((
            EditOperation::ReplaceLines,
            e.content.clone().unwrap_or_default(),
            Some((start, end)),
            None,
        ))
    } else {
        e.section.as_ref().map(|header| {
            (
                EditOperation::ReplaceSection,
                e.content.clone().unwrap_or_default(),
                None,
                Some(header.clone()),
            )
        })
    };
    let fields = EditTicket {
        ticket_id: e.ticket.clone(),
        title: e.title.clone(),
        description: e.description.clone(),
        story_points: if e.clear_points {
            Some(None)
        } else {
            e.points.map(Some)
        },
        labels: if e.clear_labels {
            Some(Vec::new())
        } else if e.labels.is_empty() {
            None
        } else {
            Some(e.labels.clone())
        },
        parent_id: if e.clear_parent {
            Some(None)
        } else {
            e.parent.clone().map(Some)
        },
        epic_id: if e.clear_epic {
            Some(None)
        } else {
            e.epic.clone().map(Some)
        },
        message: e.message.clone(),
    };
    let has_fields = fields.title.is_some()
        || fields.description.is_some()
        || fields.story_points.is_some()
        || fields.labels.is_some()
        || fields.parent_id.is_some()
        || fields.epic_id.is_some();
    if op.is_none() && !has_fields {
        return Err(ToolError::new(errors::INVALID_INPUT, "Nothing to edit").with_hint(
            "Give --title, --description, --append, --prepend, --lines/--section with --content, --points, --label, --parent or --epic.",
        ));
    }
    let description_edit = op.map(|(operation, content, range, header)| UpdateDescription {
        ticket_id: e.ticket.clone(),
        operation,
        content,
        start_line: range.map(|r| r.0),
        end_line: range.map(|r| r.1),
        section_header: header,
        message: e.message.clone(),
    });
    match (has_fields, description_edit) {
        // Fields and a description edit: one transaction, both or neither.
        (true, Some(edit)) => match t.edit_with(a, fields, Some(edit))? {
            (_, Some(updated)) => emit(json, &updated, render::description_updated),
            (edited, None) => emit(json, &edited, render::edited),
        },
        (_, Some(edit)) => {
            let updated = t.update_description(a, edit)?;
            emit(json, &updated, render::description_updated)
        }
        (_, None) => {
            let edited = t.edit(a, fields)?;
            emit(json, &edited, render::edited)
        }
    }
}
