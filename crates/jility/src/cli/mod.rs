//! The command line: `jility init`, `jility ticket …`, `jility dep …`, `jility template …`,
//! cloud mode's `admin`, `serve`, `auth` and `audit`, and `jility --mcp-server`.
//!
//! Every ticket command is one operation of the table ([`jility_core::ops`]) run on a
//! [`target::Target`]: the local database, or in cloud mode the API. Its answer prints as
//! text for people ([`human`]: tables, colour on a terminal, rendered markdown, relative
//! times) or with `--json` as the same data the MCP tool answers.

use std::collections::BTreeMap;
use std::io::Write;
use std::process::ExitCode;

use mcp_common::{Page, Paged, ToolError};
use serde::Serialize;
use serde::de::DeserializeOwned;

mod args;
mod bulk;
#[cfg(feature = "cloud")]
mod cloud;
pub mod human;
mod inbox;
#[cfg(feature = "cloud")]
mod operate;
mod output;
#[cfg(feature = "cloud")]
mod people;
mod planning;
mod saved;
mod target;
#[cfg(feature = "cloud")]
mod webhooks;

pub use args::*;

use human::{Painter, views};
use jility_core::description::EditOperation;
use jility_core::errors;
use jility_core::model::Kind;
use jility_core::ops;
use jility_core::params::*;
use jility_sqlite::local::{Location, open};
use target::Target;

#[derive(Serialize, serde::Deserialize)]
struct Initialized {
    db: String,
    key: String,
    name: String,
    created: bool,
}

/// The author of local writes: `JILITY_ACTOR`, else `$USER` / `%USERNAME%`, else the
/// account's name as the system knows it.
pub fn cli_actor() -> String {
    ["JILITY_ACTOR", "USER", "USERNAME"]
        .iter()
        .find_map(|v| std::env::var(v).ok().filter(|s| !s.trim().is_empty()))
        .map(|s| s.trim().to_string())
        .or_else(|| whoami::username().ok().filter(|s| !s.trim().is_empty()))
        .unwrap_or_else(|| "cli".to_string())
}

/// How answers print: JSON with `--json`, else text for people.
pub struct Out {
    pub json: bool,
    pub painter: Painter,
}

impl Out {
    fn new(json: bool, color: Option<ColorChoice>) -> Self {
        Self {
            json,
            painter: Painter::stdout(color),
        }
    }

    /// Print an answer: its JSON, or its text.
    fn show<T: Serialize + DeserializeOwned>(
        &self,
        data: T,
        text: fn(&Painter, &T) -> String,
    ) -> Result<(), ToolError> {
        let out = if self.json {
            serde_json::to_string_pretty(&data).map_err(cannot_print)?
        } else {
            text(&self.painter, &clean(data)?)
        };
        print(&out);
        Ok(())
    }

    /// Print one page of a list: its text, or with `--json` the data with a `page` member
    /// beside its own (`{"tickets": […], "page": {"total", "next_cursor"?}}`), so that
    /// `page.next_cursor` can be passed to `--cursor`.
    fn show_page<T: Serialize + DeserializeOwned>(
        &self,
        paged: Paged<T>,
        text: impl Fn(&Painter, &T, &Page) -> String,
    ) -> Result<(), ToolError> {
        let out = if self.json {
            serde_json::to_string_pretty(&ops::paged_encode(&paged)?).map_err(cannot_print)?
        } else {
            text(&self.painter, &clean(paged.data)?, &paged.page)
        };
        print(&out);
        Ok(())
    }
}

fn cannot_print(e: serde_json::Error) -> ToolError {
    ToolError::internal(format!("Cannot print JSON: {e}"))
}

/// Write `text` and a newline to stdout; a closed pipe (`jility … | head`) is not an error
/// worth reporting.
fn print(text: &str) {
    let _ = writeln!(std::io::stdout().lock(), "{text}");
}

/// An answer whose texts cannot drive the terminal: every control character of a stored
/// text (an escape sequence an agent wrote into a title, a carriage return) and every
/// bidirectional override or isolate becomes U+FFFD, but for line feeds and tabs.
fn clean<T: Serialize + DeserializeOwned>(data: T) -> Result<T, ToolError> {
    fn walk(value: &mut serde_json::Value) {
        match value {
            serde_json::Value::String(text)
                if text
                    .chars()
                    .any(|c| human::is_unsafe(c) && c != '\n' && c != '\t') =>
            {
                *text = human::sanitized(&text.replace("\r\n", "\n"), &['\n', '\t']);
            }
            serde_json::Value::Array(items) => items.iter_mut().for_each(walk),
            serde_json::Value::Object(members) => members.values_mut().for_each(walk),
            _ => {}
        }
    }
    let mut value = serde_json::to_value(&data).map_err(cannot_print)?;
    walk(&mut value);
    serde_json::from_value(value).map_err(cannot_print)
}

/// Report an error: to stderr as text for people (the message, what to do, whether trying
/// again may help), or to stdout as the JSON envelope with `--json`.
pub fn report(json: bool, color: Option<ColorChoice>, err: &ToolError) {
    if json {
        let envelope = serde_json::json!({"status": "error", "error": err});
        let _ = writeln!(std::io::stdout().lock(), "{envelope:#}");
        return;
    }
    let p = Painter::stderr(color);
    let red = anstyle::Style::new()
        .bold()
        .fg_color(Some(anstyle::Color::Ansi(anstyle::AnsiColor::Red)));
    let mut text = format!(
        "{} {}\n\n{}",
        p.paint(red, "❌ Error:"),
        for_people(&err.message),
        for_people(err.hint_text())
    );
    if err.retryable() {
        text.push_str(&p.dim("\n(This may pass if you try again.)"));
    }
    let _ = writeln!(std::io::stderr().lock(), "{text}");
}

/// The MCP tools an error's text names, as the commands that do the same.
const COMMANDS_OF_TOOLS: &[(&str, &str)] = &[
    (
        "jility_create_tickets_batch",
        "`jility ticket create` (once per ticket)",
    ),
    ("jility_create_from_template", "`jility template create`"),
    ("jility_create_ticket", "`jility ticket create`"),
    ("jility_list_tickets", "`jility ticket list`"),
    ("jility_search_tickets", "`jility ticket search`"),
    ("jility_get_ticket_history", "`jility ticket history`"),
    ("jility_get_ticket", "`jility ticket show`"),
    ("jility_update_status", "`jility ticket move`"),
    ("jility_add_comment", "`jility ticket comment`"),
    ("jility_assign_ticket", "`jility ticket assign`"),
    ("jility_claim_ticket", "`jility ticket claim`"),
    ("jility_update_description", "`jility ticket edit`"),
    (
        "jility_revert_description",
        "`jility ticket history --revert`",
    ),
    ("jility_link_commit", "`jility ticket link`"),
    ("jility_add_dependency", "`jility dep add`"),
    ("jility_remove_dependency", "`jility dep remove`"),
    ("jility_get_dependency_graph", "`jility dep graph`"),
    ("jility_list_templates", "`jility template list`"),
    ("jility_list_epics", "`jility epic list`"),
    ("jility_get_epic", "`jility epic show`"),
    ("jility_create_sprint", "`jility sprint create`"),
    ("jility_add_to_sprint", "`jility sprint add`"),
    ("jility_remove_from_sprint", "`jility sprint remove`"),
    ("jility_start_sprint", "`jility sprint start`"),
    ("jility_complete_sprint", "`jility sprint complete`"),
    ("jility_list_sprints", "`jility sprint list`"),
    ("jility_sprint_stats", "`jility sprint show`"),
    ("jility_plan_sprint", "`jility sprint plan`"),
    ("jility_bulk_update", "`jility ticket bulk`"),
    ("jility_bulk_assign", "`jility ticket bulk-assign`"),
    ("jility_save_view", "`jility view save`"),
    ("jility_list_views", "`jility view list`"),
    ("jility_delete_view", "`jility view delete`"),
    ("jility_delete_ticket", "`jility ticket delete`"),
    ("jility_mark_notifications_read", "`jility inbox read`"),
    ("jility_list_notifications", "`jility inbox list`"),
    ("jility_watch_ticket", "`jility inbox watch`"),
    ("jility_suggest_related", "`jility ticket related`"),
    ("jility_estimate_effort", "`jility ticket estimate`"),
    // The bulk edits' arguments, as the CLI's flags.
    ("dry_run: true", "`--dry-run`"),
    ("without dry_run", "without `--dry-run`"),
    ("expected_count", "`--expected`"),
];

/// An error's text for a person at the command line: the MCP tools it names (written for
/// models) become the commands, and an aside naming the command is dropped.
fn for_people(text: &str) -> String {
    // An error may quote what a request or a server sent: nothing in it drives the terminal.
    let mut text = human::sanitized(text, &['\n']);
    while let Some(start) = text.find(" (CLI: `") {
        match text[start..].find("`)") {
            Some(end) => text.replace_range(start..start + end + 2, ""),
            None => break,
        }
    }
    for (tool, command) in COMMANDS_OF_TOOLS {
        if text.contains(tool) {
            text = text
                .replace(&format!("`{tool}`"), command)
                .replace(tool, command);
        }
    }
    text
}

/// The mode `JILITY_MODE` names: whether it is cloud.
fn cloud_mode() -> Result<bool, ToolError> {
    match std::env::var("JILITY_MODE") {
        Ok(mode) if mode.eq_ignore_ascii_case("cloud") => Ok(true),
        Ok(mode) if mode.is_empty() || mode.eq_ignore_ascii_case("local") => Ok(false),
        Ok(mode) => Err(ToolError::new(
            errors::INVALID_INPUT,
            format!("JILITY_MODE={} is not a mode", errors::clip(&mode)),
        )
        .with_hint(
            "Set JILITY_MODE to `local` (the project's .jility/data.db) or `cloud` (the API at JILITY_API_URL).",
        )),
        Err(_) => Ok(false),
    }
}

/// The whole program: `jility --mcp-server [--http ADDR]`, or one CLI command.
pub fn main(mut cli: Cli) -> ExitCode {
    // Held to the end: the last spans are flushed when it is dropped.
    let _traces = init_logging(&cli);
    let output = cli.command.as_ref().and_then(Command::output);
    let json = cli.json || output.is_some_and(|o| o.json);
    let color = output.and_then(|o| o.color).or(cli.color);
    let cloud = match cloud_mode() {
        Ok(cloud) => cloud,
        Err(err) => {
            report(json, color, &err);
            return ExitCode::from(2);
        }
    };
    #[cfg(not(feature = "cloud"))]
    if cloud {
        let err = ToolError::new(
            errors::INVALID_INPUT,
            "This jility was built without cloud mode (the `cloud` feature)",
        )
        .with_hint("Unset JILITY_MODE for local mode, or install the default build of jility.");
        report(json, color, &err);
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
        let selection = match crate::app::selection(&cli.surface) {
            Ok(selection) => selection,
            Err(err) => {
                mcp_common::serve::report_start_error("jility", &err);
                return ExitCode::from(2);
            }
        };
        #[cfg(feature = "cloud")]
        let served = if cloud {
            crate::app::serve_bridge(transport, selection)
        } else {
            crate::app::serve_local(cli.db.take(), transport, selection)
        };
        #[cfg(not(feature = "cloud"))]
        let served = crate::app::serve_local(cli.db.take(), transport, selection);
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
            "jility: give a command (init, ticket, dep, template, web, auth, …) or --mcp-server; see `jility --help`"
        );
        return ExitCode::from(2);
    };
    let db = command.db().and_then(|d| d.db.clone()).or(cli.db.take());
    let out = Out::new(json, color);
    match run(&out, cloud, db, command) {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            report(json, color, &err);
            ExitCode::FAILURE
        }
    }
}

/// The log on stderr; for `jility serve` with `OTEL_EXPORTER_OTLP_ENDPOINT` set, traces over
/// OTLP too (the returned guard flushes them).
fn init_logging(cli: &Cli) -> Option<Box<dyn std::any::Any>> {
    #[cfg(feature = "cloud")]
    if matches!(
        cli.command,
        Some(Command::Cloud(cloud::CloudCommand::Serve(_)))
    ) && jility_cloud::api::traces::requested()
    {
        return match jility_cloud::api::traces::layer() {
            Ok((layer, traces)) => {
                mcp_common::serve::init_tracing_with(cli.verbose, Some(layer));
                Some(Box::new(traces))
            }
            Err(why) => {
                mcp_common::serve::init_tracing(cli.verbose);
                tracing::warn!("{why}; serving without traces");
                None
            }
        };
    }
    mcp_common::serve::init_tracing(cli.verbose);
    None
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

/// Run one command: on the local database found for it, or in cloud mode on the API.
pub fn run(
    out: &Out,
    cloud: bool,
    db: Option<std::path::PathBuf>,
    command: Command,
) -> Result<(), ToolError> {
    let command = match command {
        #[cfg(feature = "cloud")]
        Command::Cloud(cloud_command) => return cloud::run(out, cloud_command),
        other => other,
    };
    let cwd = std::env::current_dir()
        .map_err(|e| ToolError::internal(format!("Cannot read the working directory: {e}")))?;
    let mut target = match command {
        Command::Init { key, name, .. } => {
            if cloud {
                return Err(target::local_only(
                    "init",
                    "In cloud mode the workspace lives on the server: its operator makes one with `jility admin create-workspace NAME`. Unset JILITY_MODE to make a local database here.",
                ));
            }
            return init(out, db, &cwd, key, name);
        }
        #[cfg(feature = "web")]
        Command::Web { listen, .. } => {
            if cloud {
                return Err(target::local_only(
                    "web",
                    "In cloud mode the team's board is the server itself: open JILITY_API_URL in a browser.",
                ));
            }
            let (target, location) = Target::local(db, &cwd)?;
            drop(target);
            return crate::app::serve_web_local(location, listen, cli_actor());
        }
        _ => open_target(cloud, db, &cwd)?,
    };
    match command {
        Command::Ticket(group) => ticket(out, &mut target, group.command),
        Command::Dep(group) => dep(out, &mut target, group.command),
        Command::Template(group) => template(out, &mut target, group.command),
        Command::Epic(group) => planning::epic(out, &mut target, group.command),
        Command::Sprint(group) => planning::sprint(out, &mut target, group.command),
        Command::View(group) => saved::view(out, &mut target, group.command),
        Command::Inbox(group) => inbox::inbox(out, &mut target, group.command),
        _ => Ok(()),
    }
}

/// The tracker of the ticket commands: the API in cloud mode, else the local database.
fn open_target(
    cloud: bool,
    db: Option<std::path::PathBuf>,
    cwd: &std::path::Path,
) -> Result<Target, ToolError> {
    #[cfg(feature = "cloud")]
    if cloud {
        return Ok(Target::Cloud(Box::new(target::cloud::Remote::from_env()?)));
    }
    let _ = cloud;
    Ok(Target::local(db, cwd)?.0)
}

/// `jility init`.
fn init(
    out: &Out,
    db: Option<std::path::PathBuf>,
    cwd: &std::path::Path,
    key: Option<String>,
    name: Option<String>,
) -> Result<(), ToolError> {
    let location = match db {
        Some(db) => Location::explicit(db),
        None => Location::in_dir(cwd),
    };
    let explicit = key.is_some();
    let key = jility_core::tracker::check_key(key.as_deref().unwrap_or("TASK"))?;
    let mut tracker = open(&location, true)?;
    let name = name.unwrap_or_else(|| {
        location
            .root
            .canonicalize()
            .ok()
            .and_then(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()))
            .unwrap_or_else(|| "Default Project".to_string())
    });
    let (project, created) = tracker.init(&key, &name, explicit)?;
    let data = Initialized {
        db: location.db.display().to_string(),
        key: project.key,
        name: project.name,
        created,
    };
    out.show(data, |p, d| {
        if d.created {
            format!(
                "{} Initialized Jility in {}\n  Project  {} (tickets are {}-1, {}-2, …)\n\n{}\n{}",
                p.ok(),
                d.db,
                p.bold(&d.name),
                d.key,
                d.key,
                p.hint("Create a ticket: jility ticket create --title \"…\""),
                p.hint("Keep it out of git: add .jility/ to .gitignore"),
            )
        } else {
            format!(
                "{} Jility is already initialized in {}\n  Project  {} ({})",
                p.ok(),
                d.db,
                p.bold(&d.name),
                d.key
            )
        }
    })
}

fn ticket(out: &Out, t: &mut Target, command: TicketCommand) -> Result<(), ToolError> {
    match command {
        TicketCommand::Create {
            title,
            description,
            points,
            status,
            labels,
            assignees,
            parent,
            epic,
            kind,
        } => out.show(
            t.exec::<ops::CreateTicket>(CreateTicket {
                title,
                description,
                story_points: points,
                status: status.map(StatusName),
                assignees,
                labels,
                parent_id: parent,
                epic_id: epic,
                kind: kind.as_deref().and_then(Kind::parse),
            })?,
            views::created,
        ),
        TicketCommand::List {
            statuses,
            assignee,
            labels,
            parent,
            epic,
            sprint,
            unassigned,
            query,
            limit,
            cursor,
        } => {
            // The next page's command repeats every filter: a cursor is bound to them.
            let mut next = "jility ticket list".to_string();
            let mut flag = |name: &str, value: &str| {
                next.push_str(&format!(" --{name} {}", views::shell_quoted(value)));
            };
            statuses.iter().for_each(|s| flag("status", s));
            assignee.iter().for_each(|a| flag("assignee", a));
            labels.iter().for_each(|l| flag("label", l));
            parent.iter().for_each(|p| flag("parent", p));
            epic.iter().for_each(|e| flag("epic", e));
            sprint.iter().for_each(|s| flag("sprint", s));
            query.iter().for_each(|q| flag("query", q));
            if let Some(n) = limit {
                flag("limit", &n.to_string());
            }
            if unassigned {
                next.push_str(" --unassigned");
            }
            out.show_page(
                t.exec::<ops::ListTickets>(ListTickets {
                    status: statuses.into_iter().map(StatusName).collect(),
                    assignee,
                    labels,
                    parent_id: parent,
                    epic_id: epic,
                    sprint,
                    unassigned,
                    query,
                    limit,
                    cursor,
                })?,
                |p, tickets, page| views::page(p, tickets, page, &next),
            )
        }
        TicketCommand::Show { ticket } => out.show(
            t.exec::<ops::GetTicket>(TicketId { ticket_id: ticket })?,
            views::detail,
        ),
        TicketCommand::Edit(e) => edit(out, t, *e),
        TicketCommand::Bulk(b) => bulk::bulk(out, t, *b),
        TicketCommand::BulkAssign(b) => bulk::bulk_assign(out, t, *b),
        TicketCommand::Related {
            ticket,
            title,
            description,
            limit,
        } => out.show(
            t.exec::<ops::SuggestRelated>(as_sent(SuggestRelated {
                ticket_id: ticket,
                title,
                description,
                limit,
            })?)?,
            human::related::related,
        ),
        TicketCommand::Estimate {
            ticket,
            title,
            description,
        } => out.show(
            t.exec::<ops::EstimateEffort>(as_sent(EstimateEffort {
                ticket_id: ticket,
                title,
                description,
            })?)?,
            human::related::estimate,
        ),
        TicketCommand::Move {
            ticket,
            status,
            message,
        } => out.show(
            t.exec::<ops::UpdateStatus>(UpdateStatus {
                ticket_id: ticket,
                status: StatusName(status),
                message,
            })?,
            views::status_updated,
        ),
        TicketCommand::Assign {
            ticket,
            assignees,
            message,
        } => out.show(
            t.exec::<ops::AssignTicket>(AssignTicket {
                ticket_id: ticket,
                assignees,
                message,
            })?,
            views::assigned,
        ),
        TicketCommand::Claim { ticket, message } => out.show(
            t.exec::<ops::ClaimTicket>(ClaimTicket {
                ticket_id: ticket,
                message,
            })?,
            views::claimed,
        ),
        TicketCommand::Comment { ticket, content } => out.show(
            t.exec::<ops::AddComment>(AddComment {
                ticket_id: ticket,
                content,
            })?,
            views::comment_added,
        ),
        TicketCommand::History { ticket, revert } => match revert {
            Some(version) => out.show(
                t.exec::<ops::RevertDescription>(RevertDescription {
                    ticket_id: ticket,
                    version,
                })?,
                views::description_updated,
            ),
            None => out.show(
                t.exec::<ops::History>(TicketId { ticket_id: ticket })?,
                views::history,
            ),
        },
        TicketCommand::Search {
            query,
            limit,
            cursor,
            sprint,
        } => out.show_page(
            t.exec::<ops::SearchTickets>(SearchTickets {
                query,
                limit,
                cursor,
                sprint,
            })?,
            views::search,
        ),
        TicketCommand::Link {
            ticket,
            commit,
            message,
        } => out.show(
            t.exec::<ops::LinkCommit>(LinkCommit {
                ticket_id: ticket,
                commit_hash: commit,
                commit_message: message,
            })?,
            views::commit_linked,
        ),
        TicketCommand::Delete { ticket } => out.show(
            t.exec::<ops::DeleteTicket>(TicketId { ticket_id: ticket })?,
            views::deleted,
        ),
    }
}

fn dep(out: &Out, t: &mut Target, command: DepCommand) -> Result<(), ToolError> {
    match command {
        DepCommand::Add { ticket, depends_on } => out.show(
            t.exec::<ops::AddDependency>(Dependency {
                ticket_id: ticket,
                depends_on,
            })?,
            views::dependency_added,
        ),
        DepCommand::Remove { ticket, depends_on } => out.show(
            t.exec::<ops::RemoveDependency>(Dependency {
                ticket_id: ticket,
                depends_on,
            })?,
            views::dependency_removed,
        ),
        DepCommand::Graph { ticket } => out.show(
            t.exec::<ops::DependencyGraph>(TicketId { ticket_id: ticket })?,
            views::graph,
        ),
    }
}

fn template(out: &Out, t: &mut Target, command: TemplateCommand) -> Result<(), ToolError> {
    match command {
        TemplateCommand::List { limit, cursor } => out.show_page(
            t.exec::<ops::ListTemplates>(ListTemplates { limit, cursor })?,
            views::templates,
        ),
        TemplateCommand::Create {
            template,
            variables,
            assignee,
        } => out.show(
            t.exec::<ops::CreateFromTemplate>(FromTemplate {
                template,
                variables: parse_vars(&variables)?,
                assignee,
            })?,
            views::created,
        ),
    }
}

/// `jility ticket edit`: fields, a precise description edit, or both in one transaction.
fn edit(out: &Out, t: &mut Target, e: EditArgs) -> Result<(), ToolError> {
    let description_edit = if let Some(text) = e.append {
        Some(DescriptionEdit {
            operation: EditOperation::Append,
            content: text,
            start_line: None,
            end_line: None,
            section_header: None,
        })
    } else if let Some(text) = e.prepend {
        Some(DescriptionEdit {
            operation: EditOperation::Prepend,
            content: text,
            start_line: None,
            end_line: None,
            section_header: None,
        })
    } else if let Some(range) = &e.lines {
        let (start, end) = parse_range(range)?;
        Some(DescriptionEdit {
            operation: EditOperation::ReplaceLines,
            content: e.content.clone().unwrap_or_default(),
            start_line: Some(start),
            end_line: Some(end),
            section_header: None,
        })
    } else {
        e.section.map(|header| DescriptionEdit {
            operation: EditOperation::ReplaceSection,
            content: e.content.clone().unwrap_or_default(),
            start_line: None,
            end_line: None,
            section_header: Some(header),
        })
    };
    let fields = EditTicket {
        ticket_id: e.ticket.clone(),
        title: e.title,
        description: e.description,
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
            Some(e.labels)
        },
        parent_id: if e.clear_parent {
            Some(None)
        } else {
            e.parent.map(Some)
        },
        epic_id: if e.clear_epic {
            Some(None)
        } else {
            e.epic.map(Some)
        },
        kind: e.kind.as_deref().and_then(Kind::parse),
        message: e.message.clone(),
        description_edit: None,
    };
    let has_fields = fields.title.is_some()
        || fields.description.is_some()
        || fields.story_points.is_some()
        || fields.labels.is_some()
        || fields.parent_id.is_some()
        || fields.epic_id.is_some()
        || fields.kind.is_some();
    match (has_fields, description_edit) {
        (false, None) => Err(ToolError::new(errors::INVALID_INPUT, "Nothing to edit").with_hint(
            "Give --title, --description, --append, --prepend, --lines/--section with --content, --points, --label, --parent, --epic or --kind (see `jility ticket edit --help`).",
        )),
        // Fields and a description edit: one transaction, both or neither.
        (true, Some(edit)) => out.show(
            t.exec::<ops::EditTicket>(EditTicket {
                description_edit: Some(edit),
                ..fields
            })?,
            views::edited,
        ),
        (false, Some(edit)) => out.show(
            t.exec::<ops::UpdateDescription>(edit.of(e.ticket, e.message))?,
            views::description_updated,
        ),
        (true, None) => out.show(t.exec::<ops::EditTicket>(fields)?, views::edited),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errors_name_commands_not_tools() {
        assert_eq!(
            for_people(
                "Use jility_list_tickets or jility_search_tickets (CLI: `jility ticket list`) to see available tickets."
            ),
            "Use `jility ticket list` or `jility ticket search` to see available tickets."
        );
        assert_eq!(
            for_people("See `jility_get_ticket_history`."),
            "See `jility ticket history`."
        );
        assert_eq!(
            for_people("a\x1b[2Jb\rc\u{202e}d\n"),
            "a\u{fffd}[2Jb\u{fffd}c\u{fffd}d\n"
        );
        // Every tool of the table that a person could meet has its command.
        for op in ops::table().iter().filter(|op| op.tool) {
            assert!(
                COMMANDS_OF_TOOLS.iter().any(|(tool, _)| *tool == op.name),
                "{}",
                op.name
            );
        }
    }
}
