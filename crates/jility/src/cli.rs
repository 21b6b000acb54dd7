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
    /// Run as an MCP server, over stdio unless --http is given (creates .jility/ in the working directory when none is found).
    #[arg(long)]
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
    /// Administer a cloud database (PostgreSQL): workspaces, without any token yet.
    #[command(subcommand)]
    Admin(AdminCommand),
    /// Serve the REST API (/api/v1) on a cloud database (PostgreSQL), in any JILITY_MODE.
    Serve(ServeArgs),
    /// Manage a cloud workspace's API tokens through the API at JILITY_API_URL, with
    /// JILITY_API_TOKEN (or the token stored by `auth login`), in any JILITY_MODE.
    #[command(subcommand)]
    Auth(AuthCommand),
    /// Read the cloud workspace's audit log (writes and authentication failures, newest
    /// first) through the API at JILITY_API_URL, with a full_access token, in any JILITY_MODE.
    Audit {
        /// Entries per page (1 to 200; default 50).
        #[arg(long, value_name = "N")]
        limit: Option<u64>,
        /// The `next_cursor` of the previous page.
        #[arg(long, value_name = "CURSOR")]
        cursor: Option<String>,
    },
}

#[derive(Debug, Subcommand)]
pub enum AuthCommand {
    /// Create a token (needs a full_access token); it is shown only this once.
    CreateToken {
        /// The token's name, e.g. the agent that will use it.
        #[arg(long)]
        name: String,
        /// Its scopes, comma-separated: tickets:read, tickets:write, tickets:delete,
        /// comments:write, full_access.
        #[arg(long, value_name = "SCOPES", default_value = "tickets:read")]
        scopes: String,
        /// Days until it stops working (default: never).
        #[arg(long, value_name = "DAYS")]
        expires_in_days: Option<i64>,
    },
    /// List the workspace's tokens (needs a full_access token); never their secrets.
    ListTokens,
    /// Revoke a token of the workspace, by id or by the token itself (needs full_access).
    RevokeToken {
        /// The token's id (see list-tokens) or the token itself (jil_live_…).
        #[arg(value_name = "ID_OR_TOKEN")]
        token: String,
    },
    /// Store a token in the user's config directory (mode 0600), used when
    /// JILITY_API_TOKEN is unset.
    Login {
        /// The token (jil_live_…); `-` reads it from stdin, out of the process list.
        #[arg(long, value_name = "TOKEN")]
        token: String,
    },
}

#[derive(Debug, Args)]
pub struct ServeArgs {
    /// The address to listen on (port 0: a free port, announced on stderr).
    #[arg(long, value_name = "ADDR", default_value = "127.0.0.1:3900")]
    pub listen: std::net::SocketAddr,
    /// The PostgreSQL database (postgres://user@host:port/db); migrated at start.
    #[arg(long, env = "DATABASE_URL", value_name = "URL", hide_env_values = true)]
    pub database_url: Option<String>,
    /// Requests per minute per token, shared by every server process on the database.
    #[arg(long, value_name = "N", default_value_t = jility_cloud::ratelimit::DEFAULT_PER_MINUTE, value_parser = clap::value_parser!(u32).range(1..))]
    pub rate_limit: u32,
    /// Terminate TLS with this PEM certificate chain (with --tls-key).
    #[arg(long, value_name = "PEM", requires = "tls_key")]
    pub tls_cert: Option<PathBuf>,
    /// The PEM private key of --tls-cert.
    #[arg(long, value_name = "PEM", requires = "tls_cert")]
    pub tls_key: Option<PathBuf>,
}

#[derive(Debug, Subcommand)]
pub enum AdminCommand {
    /// Create a workspace and print its first token (full_access, shown only this once).
    CreateWorkspace {
        /// The workspace's name (unique in the database).
        name: String,
        /// The PostgreSQL database (postgres://user@host:port/db); migrated if need be.
        #[arg(long, env = "DATABASE_URL", value_name = "URL", hide_env_values = true)]
        database_url: Option<String>,
        /// The ticket prefix of the workspace's project (tickets are KEY-1, KEY-2, …).
        #[arg(long, default_value = "TASK")]
        key: String,
    },
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
    let administers = matches!(
        cli.command,
        Some(Command::Admin(_) | Command::Serve(_) | Command::Auth(_) | Command::Audit { .. })
    );
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
        let served = if cloud {
            crate::app::serve_bridge(transport)
        } else {
            crate::app::serve_local(cli.db.take(), transport)
        };
        return match served {
            Ok(()) => ExitCode::SUCCESS,
            Err(err) => {
                let _ = writeln!(std::io::stderr().lock(), "jility: {err:#}");
                ExitCode::FAILURE
            }
        };
    }
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

/// The name of the token `jility admin create-workspace` mints.
pub const BOOTSTRAP_TOKEN_NAME: &str = "bootstrap";

/// What `jility admin create-workspace --json` prints: `{"workspace","token"}`.
#[derive(Serialize)]
struct CreatedWorkspace<'a> {
    workspace: &'a str,
    token: &'a str,
}

/// `jility admin …`: on a PostgreSQL database, with no token needed.
fn admin(json: bool, command: AdminCommand) -> Result<(), ToolError> {
    match command {
        AdminCommand::CreateWorkspace {
            name,
            database_url,
            key,
        } => {
            let key = jility_core::tracker::check_key(&key)?;
            let url = database_url
                .filter(|url| !url.trim().is_empty())
                .ok_or_else(|| {
                    ToolError::new(errors::INVALID_INPUT, "No database URL given").with_hint(
                        "Pass --database-url postgres://user@host:5432/db or set DATABASE_URL.",
                    )
                })?;
            let db = jility_cloud::store::PgDatabase::connect(&url)?;
            let tokens = jility_cloud::auth::Tokens::new(&db);
            let (workspace, minted) =
                tokens.create_workspace(&name, BOOTSTRAP_TOKEN_NAME, &cli_actor())?;
            // Its project now, with the key asked for (the server would make a TASK one on
            // the first request).
            let store = jility_cloud::store::PgStore::open(&db, workspace.id)?;
            let mut tracker = jility_core::tracker::Tracker::new(
                store,
                std::path::PathBuf::from(jility_cloud::api::NO_TEMPLATES_ROOT),
                mcp_common::CursorKey::random(),
            );
            tracker.init(&key, jility_cloud::api::DEFAULT_PROJECT_NAME, false)?;
            let out = if json {
                serde_json::to_string(&CreatedWorkspace {
                    workspace: &workspace.name,
                    token: minted.token.expose(),
                })
                .map_err(|e| ToolError::internal(format!("Cannot print JSON: {e}")))?
            } else {
                format!(
                    "✅ Created workspace {}\n\nIts first token ({}, named \"{}\", id {}):\n\n    {}\n\nThis is the only time it is shown: the database keeps only its hash. Keep it secret, hand it to whoever administers the workspace (set JILITY_API_TOKEN, or `jility auth login --token …`), and create narrower tokens for agents with `jility auth create-token`.",
                    workspace.name,
                    minted.record.scopes,
                    minted.record.name,
                    minted.record.id,
                    minted.token.expose()
                )
            };
            let _ = writeln!(std::io::stdout().lock(), "{out}");
            Ok(())
        }
    }
}

/// `jility serve`: the REST API on a PostgreSQL database, until SIGINT or SIGTERM.
fn serve(args: ServeArgs) -> Result<(), ToolError> {
    let database_url = args
        .database_url
        .filter(|url| !url.trim().is_empty())
        .ok_or_else(|| {
            ToolError::new(errors::INVALID_INPUT, "No database URL given")
                .with_hint("Pass --database-url postgres://user@host:5432/db or set DATABASE_URL.")
        })?;
    crate::app::serve_cloud(jility_cloud::api::ServeConfig {
        listen: args.listen,
        database_url,
        rate_limit: args.rate_limit,
        tls: args.tls_cert.zip(args.tls_key),
    })
}

/// `jility auth …`: token management through the API, and `login`.
fn auth(json: bool, command: AuthCommand) -> Result<(), ToolError> {
    use jility_bridge::client::{ApiClient, store_token};
    use reqwest::Method;
    let print = |out: String| {
        let _ = writeln!(std::io::stdout().lock(), "{out}");
        Ok(())
    };
    let pretty = |value: &serde_json::Value| {
        serde_json::to_string_pretty(value)
            .map_err(|e| ToolError::internal(format!("Cannot print JSON: {e}")))
    };
    match command {
        AuthCommand::CreateToken {
            name,
            scopes,
            expires_in_days,
        } => {
            let scopes = jility_core::token::ScopeSet::parse(&scopes)?;
            let mut body = serde_json::json!({"name": name, "scopes": scopes.names()});
            if let Some(days) = expires_in_days {
                body["expires_in_days"] = days.into();
            }
            let created = ApiClient::from_env()?.call(Method::POST, "/tokens", Some(&body))?;
            if json {
                return print(pretty(&created)?);
            }
            print(format!(
                "✅ Created token {} (\"{}\", {}{})\n\n    {}\n\nThis is the only time it is shown: the server keeps only its hash. Hand it to its user (JILITY_API_TOKEN, or `jility auth login --token -`).",
                created["id"],
                text(&created["name"]),
                scope_text(&created["scopes"]),
                match created["expires_at"].as_str() {
                    Some(at) => format!(", expires {at}"),
                    None => String::new(),
                },
                text(&created["token"]),
            ))
        }
        AuthCommand::ListTokens => {
            let listed = ApiClient::from_env()?.call(Method::GET, "/tokens", None)?;
            if json {
                return print(pretty(&listed)?);
            }
            let tokens = listed["tokens"].as_array().cloned().unwrap_or_default();
            let mut out = format!("# API tokens ({})\n", tokens.len());
            if !tokens.is_empty() {
                out.push_str("\n| id | name | prefix | scopes | created | expires | last used | state |\n|---|---|---|---|---|---|---|---|\n");
            }
            for t in &tokens {
                let state = match t["revoked_at"].as_str() {
                    Some(at) => format!("revoked {at}"),
                    None => "active".to_string(),
                };
                let or_dash = |v: &serde_json::Value| v.as_str().unwrap_or("—").to_string();
                out.push_str(&format!(
                    "| {} | {} | {}… | {} | {} | {} | {} | {} |\n",
                    t["id"],
                    text(&t["name"]),
                    text(&t["prefix"]),
                    scope_text(&t["scopes"]),
                    text(&t["created_at"]),
                    or_dash(&t["expires_at"]),
                    or_dash(&t["last_used_at"]),
                    state,
                ));
            }
            print(out.trim_end().to_string())
        }
        AuthCommand::RevokeToken { token } => {
            let client = ApiClient::from_env()?;
            // A token travels in the body, never in a URL; an id in the path.
            let revoked = match token.parse::<jility_core::token::TokenRef>()? {
                jility_core::token::TokenRef::Id(id) => {
                    client.call(Method::DELETE, &format!("/tokens/{id}"), None)?
                }
                jility_core::token::TokenRef::Token(plain) => client.call(
                    Method::DELETE,
                    "/tokens",
                    Some(&serde_json::json!({"token": plain.expose()})),
                )?,
            };
            if json {
                return print(pretty(&revoked)?);
            }
            print(format!(
                "✅ Revoked token {} (\"{}\", {}…) at {}",
                revoked["id"],
                text(&revoked["name"]),
                text(&revoked["prefix"]),
                text(&revoked["revoked_at"]),
            ))
        }
        AuthCommand::Login { token } => {
            let token = if token.trim() == "-" {
                let mut line = String::new();
                std::io::stdin()
                    .read_line(&mut line)
                    .map_err(|e| ToolError::internal(format!("Cannot read stdin: {e}")))?;
                line
            } else {
                token
            };
            let token = jility_core::token::PlainToken::new(token);
            let path = store_token(&token)?;
            if json {
                return print(pretty(&serde_json::json!({
                    "stored": path.display().to_string(),
                    "prefix": token.display_prefix(),
                }))?);
            }
            print(format!(
                "✅ Stored the token {}… in {} (mode 0600); `jility auth` and the cloud bridge use it when {} is unset.",
                token.display_prefix(),
                path.display(),
                jility_bridge::client::TOKEN_VAR,
            ))
        }
    }
}

/// `jility audit`: one page of the workspace's audit log, as a markdown table (or the API's
/// JSON with `--json`).
fn audit(json: bool, limit: Option<u64>, cursor: Option<&str>) -> Result<(), ToolError> {
    let listed = jility_bridge::client::ApiClient::from_env()?.audit(limit, cursor)?;
    let out = if json {
        serde_json::to_string_pretty(&listed)
            .map_err(|e| ToolError::internal(format!("Cannot print JSON: {e}")))?
    } else {
        audit_text(&listed)
    };
    let _ = writeln!(std::io::stdout().lock(), "{out}");
    Ok(())
}

fn audit_text(listed: &serde_json::Value) -> String {
    let entries = listed["entries"].as_array().cloned().unwrap_or_default();
    let page = &listed["page"];
    let total = match page["total_exact"].as_bool() {
        Some(false) => format!("{}+", page["total"]),
        _ => page["total"].to_string(),
    };
    let mut out = format!("# Audit log ({} of {total})\n", entries.len());
    if !entries.is_empty() {
        out.push_str("\n| id | at | token | actor | operation | ticket | status | detail |\n|---|---|---|---|---|---|---|---|\n");
    }
    let or_dash = |v: &serde_json::Value| match v {
        serde_json::Value::Null => "—".to_string(),
        serde_json::Value::String(s) => s.replace('|', "\\|"),
        other => other.to_string(),
    };
    for e in &entries {
        out.push_str(&format!(
            "| {} | {} | {} | {} | {} | {} | {} | {} |\n",
            e["id"],
            or_dash(&e["at"]),
            or_dash(&e["token_id"]),
            or_dash(&e["actor"]),
            or_dash(&e["operation"]),
            or_dash(&e["ticket"]),
            or_dash(&e["status"]),
            or_dash(&e["detail"]),
        ));
    }
    if let Some(next) = page["next_cursor"].as_str() {
        out.push_str(&format!("\nMore: `jility audit --cursor {next}`\n"));
    }
    out.trim_end().to_string()
}

fn text(value: &serde_json::Value) -> String {
    value.as_str().unwrap_or_default().to_string()
}

fn scope_text(value: &serde_json::Value) -> String {
    value
        .as_array()
        .map(|scopes| {
            scopes
                .iter()
                .filter_map(|s| s.as_str())
                .collect::<Vec<_>>()
                .join(",")
        })
        .unwrap_or_default()
}

/// Run one CLI command against the database found for it.
pub fn run(cli: Cli, command: Command) -> Result<(), ToolError> {
    let json = cli.json;
    let command = match command {
        Command::Admin(admin_command) => return admin(json, admin_command),
        Command::Serve(args) => return serve(args),
        Command::Auth(auth_command) => return auth(json, auth_command),
        Command::Audit { limit, cursor } => return audit(json, limit, cursor.as_deref()),
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
        Command::Init { .. }
        | Command::Admin(_)
        | Command::Serve(_)
        | Command::Auth(_)
        | Command::Audit { .. } => Ok(()),
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
