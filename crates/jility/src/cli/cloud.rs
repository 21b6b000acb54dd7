//! The cloud mode's commands: `jility admin` and `jility serve` on a PostgreSQL database,
//! `jility auth` and `jility audit` through the API at `JILITY_API_URL` (built with the
//! default `cloud` feature).

use std::io::Write;
use std::path::PathBuf;

use clap::{Args, Subcommand};
use mcp_common::ToolError;
use serde::Serialize;

use jility_core::errors;

use super::Out;
use super::cli_actor;
use super::human::{AnsiColor, Painter, views};
use super::output::OutputArgs;
use super::people;

// The commands of cloud mode, in any `JILITY_MODE` (flattened into the root's commands: a
// doc comment here would become the root command's about).
#[derive(Debug, Subcommand)]
pub enum CloudCommand {
    /// Administer a cloud database (PostgreSQL), without any token: workspaces, people,
    /// invite and password-reset links.
    Admin(Grouped<AdminCommand>),
    /// Serve the REST API (/api/v1) on a cloud database (PostgreSQL), in any JILITY_MODE.
    #[command(after_help = SERVE_SETTINGS)]
    Serve(ServeArgs),
    /// Manage a cloud workspace's API tokens through the API at JILITY_API_URL, with
    /// JILITY_API_TOKEN (or the token stored by `auth login`), in any JILITY_MODE.
    Auth(Grouped<AuthCommand>),
    /// Manage a cloud workspace's webhooks (signed deliveries of its changes) through the
    /// API at JILITY_API_URL, with a full_access token, in any JILITY_MODE.
    Webhook(Grouped<super::webhooks::WebhookCommand>),
    /// Read the cloud workspace's audit log (writes and authentication failures, newest
    /// first) through the API at JILITY_API_URL, with a full_access token, in any JILITY_MODE.
    Audit {
        #[command(flatten)]
        out: OutputArgs,
        /// Entries per page (1 to 200; default 50).
        #[arg(long, value_name = "N")]
        limit: Option<u64>,
        /// The `next_cursor` of the previous page.
        #[arg(long, value_name = "CURSOR")]
        cursor: Option<String>,
    },
}

/// A group of cloud commands and how they print.
#[derive(Debug, Args)]
pub struct Grouped<C: Subcommand> {
    #[command(flatten)]
    pub out: OutputArgs,
    #[command(subcommand)]
    pub command: C,
}

impl CloudCommand {
    /// How this command prints (`--json`, `--color`), when it prints.
    pub fn output(&self) -> Option<&OutputArgs> {
        match self {
            CloudCommand::Admin(group) => Some(&group.out),
            CloudCommand::Auth(group) => Some(&group.out),
            CloudCommand::Webhook(group) => Some(&group.out),
            CloudCommand::Audit { out, .. } => Some(out),
            CloudCommand::Serve(_) => None,
        }
    }
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
    /// Sign in to JILITY_API_URL in the browser (OAuth; the link is printed, and opened
    /// where there is a desktop), or with --token store a token; kept in the user's config
    /// directory (mode 0600) and used when JILITY_API_TOKEN is unset.
    Login {
        /// A token (jil_live_…) to store instead of signing in; `-` reads it from stdin, out
        /// of the process list.
        #[arg(long, value_name = "TOKEN")]
        token: Option<String>,
    },
}

/// The settings of `jility serve` that come from the environment (README, "jility serve").
const SERVE_SETTINGS: &str = "\
Settings from the environment:
  JILITY_WORKSPACE_RATE_LIMIT        requests per minute of all a workspace's tokens (default 5 x --rate-limit)
  JILITY_MAX_LIVE_TOKENS             live tokens a workspace may hold (default 50)
  JILITY_EVENTS_HEARTBEAT_SECS       event-stream heartbeat after this much silence (default 5)
  JILITY_PUBLIC_URL                  the address people use (links, OAuth issuer and resource)
  JILITY_OAUTH_ACCESS_SECS           lifetime of OAuth access tokens (default 3600)
  JILITY_OAUTH_ALLOW_PRIVATE_CLIENTS 1: fetch client metadata documents on private addresses
  JILITY_OAUTH_CLIENT_CA             PEM of a CA to trust for client metadata documents
  JILITY_METRICS_TOKEN               bearer token of GET /metrics on the main listener (unset: 404)
  JILITY_WEBHOOKS_ALLOW_PRIVATE      1: webhooks may go to private and loopback addresses (http to loopback)
  JILITY_WEBHOOKS_RETRY_BASE_MS      first wait before a failed delivery is retried (default 5000)
  MCP_HTTP_MAX_SESSIONS              MCP sessions kept at once (default 4096)
  MCP_HTTP_MAX_SESSIONS_PER_TENANT   of which one workspace may hold (default half)
  MCP_HTTP_MAX_SESSIONS_PER_TOKEN    of which one token may hold (default a quarter)
  MCP_HTTP_IDLE_UNDER_PRESSURE_SECS  idle sessions closed when 3/4 full (default 60)
  MCP_HTTP_READ_TIMEOUT_SECS         time to send a request's headers, then its body (default 30)";

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
    /// The most connections to PostgreSQL this process opens, all its uses together (keep
    /// processes × this below the server's max_connections, with room for admin commands).
    #[arg(long, env = "JILITY_DB_POOL_SIZE", value_name = "N", default_value_t = jility_cloud::store::DEFAULT_POOL_SIZE, value_parser = clap::value_parser!(u32).range(i64::from(jility_cloud::store::MIN_POOL_SIZE)..=10_000))]
    pub db_pool_size: u32,
    /// Also serve /metrics (Prometheus), /healthz and /readyz on this address, without
    /// credentials: keep it private (on the main listener /metrics asks for
    /// JILITY_METRICS_TOKEN).
    #[arg(long, env = "JILITY_METRICS_LISTEN", value_name = "ADDR")]
    pub metrics_listen: Option<std::net::SocketAddr>,
    /// A PostgreSQL standby (streaming replica) of the database to send callers' reads to,
    /// once it has replayed their writes (repeat for more; JILITY_READ_REPLICAS takes a
    /// comma-separated list).
    #[arg(
        long = "read-replica",
        env = "JILITY_READ_REPLICAS",
        value_name = "URL",
        value_delimiter = ',',
        hide_env_values = true
    )]
    pub read_replicas: Vec<String>,
    /// A standby further behind the primary than this takes no reads until it catches up.
    #[arg(long, value_name = "MS", default_value_t = 2000, value_parser = clap::value_parser!(u64).range(100..=600_000))]
    pub read_replica_max_lag_ms: u64,
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
        /// Also make this person its owner: an existing user, or a new account (then a
        /// one-time link to set their password is printed).
        #[arg(long, value_name = "EMAIL")]
        owner: Option<String>,
        /// The new owner's name (default: the part of the email before the @).
        #[arg(long, value_name = "NAME", requires = "owner")]
        owner_name: Option<String>,
        #[command(flatten)]
        public: people::PublicUrlArg,
    },
    /// Create a user (a person who signs in to the web board); without --password-stdin,
    /// print a one-time link for them to set their password.
    CreateUser(people::CreateUserArgs),
    /// Make a user a member of a workspace with a role (or change the role of one who is).
    AddMember(people::AddMemberArgs),
    /// Print a one-time link that sets a user's password (valid 24 h); older links stop
    /// working, and using it ends the user's sessions.
    ResetPassword(people::ResetPasswordArgs),
    /// Print a one-time invite link to a workspace with a role (valid 7 days): whoever opens
    /// it signs up or signs in and becomes a member.
    Invite(people::InviteArgs),
    /// Bring the database's schema up to this version's (as `jility serve` does at start),
    /// or with --check say what would run; refuses a schema newer than this jility knows.
    Migrate(super::operate::MigrateArgs),
    /// Write one consistent snapshot of the database (or of some workspaces) to a file:
    /// tickets, history, comments, people, tokens (as hashes), audit log.
    Backup(super::operate::BackupArgs),
    /// Restore a backup into an empty database (migrated first), all or nothing.
    Restore(super::operate::RestoreArgs),
}

/// The name of the token `jility admin create-workspace` mints.
pub const BOOTSTRAP_TOKEN_NAME: &str = "bootstrap";

/// What `jility admin create-workspace --json` prints: `{"workspace","token"}`, and
/// `"owner"` with `--owner`.
#[derive(Serialize)]
struct CreatedWorkspace<'a> {
    workspace: &'a str,
    token: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    owner: Option<&'a people::Owner>,
}

/// `jility admin …`: on a PostgreSQL database, with no token needed.
fn admin(json: bool, command: AdminCommand) -> Result<(), ToolError> {
    match command {
        AdminCommand::CreateWorkspace {
            name,
            database_url,
            key,
            owner,
            owner_name,
            public,
        } => {
            let key = jility_core::tracker::check_key(&key)?;
            people::check_owner(owner.as_deref(), owner_name.as_deref())?;
            let url = database_url
                .filter(|url| !url.trim().is_empty())
                .ok_or_else(|| {
                    ToolError::new(errors::INVALID_INPUT, "No database URL given").with_hint(
                        "Pass --database-url postgres://user@host:5432/db or set DATABASE_URL.",
                    )
                })?;
            let db = jility_cloud::store::PgDatabase::connect(&url)
                .map_err(|err| jility_cloud::reach::at_start(&url, err))?;
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
            let owner = match owner.as_deref() {
                Some(email) => Some(
                    people::attach_owner(&db, workspace.id, email, owner_name.as_deref(), &public)
                        .map_err(|err| {
                            let hint = format!(
                                "The workspace {} was created; attach its owner with `jility admin add-member --workspace {} --email … --role owner`. {}",
                                workspace.name,
                                workspace.name,
                                err.hint_text()
                            );
                            err.with_hint(hint)
                        })?,
                ),
                None => None,
            };
            let out = if json {
                serde_json::to_string(&CreatedWorkspace {
                    workspace: &workspace.name,
                    token: minted.token.expose(),
                    owner: owner.as_ref(),
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
                ) + &owner
                    .as_ref()
                    .map(|owner| format!("\n\n{}", people::owner_text(owner).trim_end()))
                    .unwrap_or_default()
            };
            let _ = writeln!(std::io::stdout().lock(), "{out}");
            Ok(())
        }
        AdminCommand::CreateUser(args) => people::create_user(json, args),
        AdminCommand::AddMember(args) => people::add_member(json, args),
        AdminCommand::ResetPassword(args) => people::reset_password(json, args),
        AdminCommand::Invite(args) => people::invite(json, args),
        AdminCommand::Migrate(args) => super::operate::migrate(json, args),
        AdminCommand::Backup(args) => super::operate::backup(json, args),
        AdminCommand::Restore(args) => super::operate::restore(json, args),
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
        pool_size: args.db_pool_size,
        metrics_listen: args.metrics_listen,
        read_replicas: args
            .read_replicas
            .into_iter()
            .map(|url| url.trim().to_string())
            .filter(|url| !url.is_empty())
            .collect(),
        replica_max_lag: std::time::Duration::from_millis(args.read_replica_max_lag_ms),
        tls: args.tls_cert.zip(args.tls_key),
    })
}

/// `jility auth …`: token management through the API, and `login`.
fn auth(out: &Out, command: AuthCommand) -> Result<(), ToolError> {
    let json = out.json;
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
            print(tokens_text(&out.painter, &super::clean(listed)?))
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
        AuthCommand::Login { token: None } => {
            let root = jility_bridge::client::api_root()?;
            let stored = jility_bridge::signin::sign_in(&root, &|url| {
                let _ = writeln!(
                    std::io::stderr().lock(),
                    "Open this link in a browser to sign in to {root}:\n\n  {url}\n\nWaiting for you to approve…"
                );
                jility_bridge::signin::open_browser(url);
            })?;
            let path = jility_bridge::signin::oauth_file()?;
            if json {
                return print(pretty(&serde_json::json!({
                    "signed_in": root,
                    "scope": stored.scope,
                    "stored": path.display().to_string(),
                }))?);
            }
            print(format!(
                "✅ Signed in to {root} ({}); kept in {} (mode 0600). `jility auth`, `jility audit` and the cloud bridge use it when {} is unset; it refreshes itself.",
                stored.scope,
                path.display(),
                jility_bridge::client::TOKEN_VAR,
            ))
        }
        AuthCommand::Login { token: Some(token) } => {
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

/// `jility audit`: one page of the workspace's audit log, as a table (or the API's JSON
/// with `--json`).
fn audit(out: &Out, limit: Option<u64>, cursor: Option<&str>) -> Result<(), ToolError> {
    let listed = jility_bridge::client::ApiClient::from_env()?.audit(limit, cursor)?;
    let text = if out.json {
        serde_json::to_string_pretty(&listed)
            .map_err(|e| ToolError::internal(format!("Cannot print JSON: {e}")))?
    } else {
        audit_text(&out.painter, &super::clean(listed)?)
    };
    let _ = writeln!(std::io::stdout().lock(), "{text}");
    Ok(())
}

/// A JSON value as a table cell: a dimmed dash for none.
fn cell(p: &Painter, value: &serde_json::Value) -> String {
    match value {
        serde_json::Value::Null => p.dim("—"),
        serde_json::Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// A time of the API as people say it, or a dash.
fn when(p: &Painter, value: &serde_json::Value) -> String {
    match value.as_str() {
        Some(at) => p.when(at),
        None => p.dim("—"),
    }
}

fn tokens_text(p: &Painter, listed: &serde_json::Value) -> String {
    let tokens = listed["tokens"].as_array().cloned().unwrap_or_default();
    if tokens.is_empty() {
        return "No API tokens.".to_string();
    }
    let rows = tokens
        .iter()
        .map(|t| {
            let state = match t["revoked_at"].as_str() {
                Some(at) => p.dim(&format!("revoked {}", p.when(at))),
                None => p.fg(AnsiColor::Green, "active"),
            };
            vec![
                cell(p, &t["id"]),
                p.bold(&text(&t["name"])),
                format!("{}…", text(&t["prefix"])),
                scope_text(&t["scopes"]),
                when(p, &t["created_at"]),
                when(p, &t["expires_at"]),
                when(p, &t["last_used_at"]),
                state,
            ]
        })
        .collect();
    views::table(
        p,
        &[
            "ID",
            "NAME",
            "PREFIX",
            "SCOPES",
            "CREATED",
            "EXPIRES",
            "LAST USED",
            "STATE",
        ],
        rows,
    )
}

fn audit_text(p: &Painter, listed: &serde_json::Value) -> String {
    let entries = listed["entries"].as_array().cloned().unwrap_or_default();
    let page = &listed["page"];
    let total = match page["total_exact"].as_bool() {
        Some(false) => format!("{}+", page["total"]),
        _ => page["total"].to_string(),
    };
    if entries.is_empty() {
        return "The audit log is empty.".to_string();
    }
    let rows = entries
        .iter()
        .map(|e| {
            let status = cell(p, &e["status"]);
            let status = match e["status"].as_u64() {
                Some(code) if code >= 400 => p.fg(AnsiColor::Red, &status),
                _ => status,
            };
            vec![
                cell(p, &e["id"]),
                when(p, &e["at"]),
                cell(p, &e["token_id"]),
                p.person(&cell(p, &e["actor"])),
                cell(p, &e["operation"]),
                cell(p, &e["ticket"]),
                status,
                cell(p, &e["detail"]),
            ]
        })
        .collect();
    let mut out = views::table(
        p,
        &[
            "ID",
            "WHEN",
            "TOKEN",
            "WHO",
            "OPERATION",
            "TICKET",
            "STATUS",
            "DETAIL",
        ],
        rows,
    );
    out.push_str(&format!(
        "\n\n{}",
        p.dim(&format!(
            "{} of {total} entries, newest first",
            entries.len()
        ))
    ));
    if let Some(next) = page["next_cursor"].as_str() {
        out.push_str(&format!(
            "\n{}",
            p.hint(&format!("Next page: jility audit --cursor {next}"))
        ));
    }
    out
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

/// Run a cloud command.
pub fn run(out: &Out, command: CloudCommand) -> Result<(), ToolError> {
    match command {
        CloudCommand::Admin(group) => admin(out.json, group.command),
        CloudCommand::Serve(args) => serve(args),
        CloudCommand::Auth(group) => auth(out, group.command),
        CloudCommand::Webhook(group) => super::webhooks::run(out, group.command),
        CloudCommand::Audit { limit, cursor, .. } => audit(out, limit, cursor.as_deref()),
    }
}
