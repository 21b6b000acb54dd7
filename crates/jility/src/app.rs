//! The composition root: the one module that names both the MCP adapter ([`crate::server`])
//! and the backends it runs on, and wires them to the servers that carry them.
//!
//! - local mode (`jility --mcp-server`): the tools on this project's SQLite database;
//! - the cloud bridge (`JILITY_MODE=cloud jility --mcp-server`): the tools as requests to
//!   a team's `jility serve`;
//! - `jility serve`: the REST API on PostgreSQL, with the tools mounted at `/mcp` on the
//!   API's own state, for the caller whose token each request carries;
//! - `jility web`: the web app on this project's SQLite database, live while others write it.

use std::io::Write as _;
use std::path::PathBuf;

use jility_core::Service;
use jility_sqlite::local::{self, Location};
use mcp_common::serve::{ServeOptions, Transport};
use mcp_common::surface::Selection;

use crate::server::{JilityServer, Shared};

/// `jility --mcp-server`: find (or create) the database at `db` (else the nearest
/// `.jility/data.db`, else one in the working directory), then serve MCP over `transport`
/// until the client leaves (stdio) or the process is told to stop (HTTP).
pub fn serve_local(
    db: Option<PathBuf>,
    transport: Transport,
    selection: Selection,
) -> anyhow::Result<()> {
    let cwd = std::env::current_dir()?;
    let location = match db {
        Some(db) => Location::explicit(db),
        None => Location::find(&cwd).unwrap_or_else(|| Location::in_dir(&cwd)),
    };
    let fresh = !location.db.exists();
    let mut tracker = local::open(&location, true).map_err(|e| anyhow::anyhow!("{}", e.message))?;
    // A database without a project (new, or made by hand) gets the default one.
    let (project, created) = tracker
        .init("TASK", "Default Project", false)
        .map_err(|e| anyhow::anyhow!("{}", e.message))?;
    if fresh || created {
        let _ = writeln!(
            std::io::stderr().lock(),
            "jility: created {} (project {}); `jility init --key KEY` gives it another ticket prefix until its first ticket",
            location.db.display(),
            project.key
        );
    }
    tracing::info!(db = %location.db.display(), "serving MCP");
    let actor = std::env::var("JILITY_ACTOR")
        .ok()
        .map(|a| a.trim().to_string())
        .filter(|a| !a.is_empty());
    let shared = Shared::new(Service::new(tracker), actor).with_selection(selection);
    let runtime = mcp_common::serve::runtime(&transport)?;
    runtime.block_on(mcp_common::serve::serve(
        transport,
        "jility",
        ServeOptions::default(),
        move || JilityServer::new(shared.clone()),
    ))
}

/// The tools `--mcp-server` offers, as `surface` (`--toolsets`, `--tools`, `--read-only`)
/// chooses among the server's.
pub fn selection(surface: &mcp_common::surface::SurfaceArgs) -> Result<Selection, String> {
    Selection::new(surface, crate::server::catalog())
}

/// `JILITY_MODE=cloud jility --mcp-server`: check the configuration, ask the API for the
/// token's scopes, start following the API's events, and serve MCP over `transport`.
#[cfg(feature = "cloud")]
pub fn serve_bridge(transport: Transport, selection: Selection) -> anyhow::Result<()> {
    use jility_bridge::bridge::{Bridge, BridgeBackend};
    use jility_bridge::client;
    let base =
        client::api_base().map_err(|e| anyhow::anyhow!("{} {}", e.message, e.hint_text()))?;
    let root =
        client::api_root().map_err(|e| anyhow::anyhow!("{} {}", e.message, e.hint_text()))?;
    let runtime = mcp_common::serve::runtime(&transport)?;
    runtime.block_on(async move {
        // A token, a kept sign-in, or a sign-in started now (its link on stderr).
        let credential = jility_bridge::credential::Credential::from_env(&root)
            .map_err(|e| anyhow::anyhow!("{} {}", e.message, e.hint_text()))?;
        let bridge = Bridge::new(base, credential).map_err(|e| anyhow::anyhow!("{}", e.message))?;
        tracing::info!(api = %bridge.base(), "serving MCP as a bridge to the cloud API");
        // The token's scopes decide which tools are listed (as at /mcp).
        bridge.identify().await;
        bridge.follow_events();
        let shared = Shared::new(BridgeBackend(bridge), None).with_selection(selection);
        mcp_common::serve::serve(transport, "jility", ServeOptions::default(), move || {
            JilityServer::new(shared.clone())
        })
        .await
    })
}

/// `jility serve`: the REST API on PostgreSQL, with the MCP tools at `/mcp` behind the
/// same authentication, on the API's state (each call as its token's principal), and the
/// web board for people at `/` (signed in with their accounts).
#[cfg(feature = "cloud")]
pub fn serve_cloud(config: jility_cloud::ServeConfig) -> Result<(), mcp_common::ToolError> {
    jility_cloud::api::serve(
        config,
        |state, local, sessions| {
            let shared = Shared::new(state, None);
            mcp_common::http::mcp_endpoint_counted(
                &mcp_common::http::HttpConfig::behind_auth(local),
                local.port(),
                sessions,
                move || JilityServer::new(shared.clone()),
            )
        },
        jility_cloud::people,
    )
}

/// `jility web`: the board on the database at `location` for `person`, on loopback
/// `listen`, live (the database's watcher tells open pages of every commit), until SIGINT or
/// SIGTERM.
#[cfg(feature = "web")]
pub fn serve_web_local(
    location: Location,
    listen: std::net::SocketAddr,
    person: String,
) -> Result<(), mcp_common::ToolError> {
    use jility_core::errors;
    use mcp_common::ToolError;
    if !listen.ip().is_loopback() {
        return Err(ToolError::new(
            errors::INVALID_INPUT,
            format!("jility web listens on loopback only, not {}", listen.ip()),
        )
        .with_hint(
            "Give --listen 127.0.0.1:PORT (or [::1]:PORT). A team shares a board through `jility serve`, with accounts.",
        ));
    }
    let tracker = local::open(&location, false)?;
    let (changes, _) = tokio::sync::broadcast::channel(256);
    let heard = changes.clone();
    jility_sqlite::watch::watch(&location.db, move || {
        let _ = heard.send(jility_web::LiveEvent::Changed {
            tickets: Vec::new(),
            actor: String::new(),
        });
        true
    })
    .map_err(|e| ToolError::internal(format!("Cannot start watching the database: {e}")))?;
    let site = jility_web::LocalSite::new(Service::new(tracker), person, changes)?;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(|e| ToolError::internal(format!("Cannot start the runtime: {e}")))?;
    runtime.block_on(async move {
        let listener = tokio::net::TcpListener::bind(listen).await.map_err(|e| {
            ToolError::new(
                mcp_common::codes::UNAVAILABLE,
                format!("Cannot listen on {listen}: {e}"),
            )
            .with_hint("Another program may use the port: give another with --listen 127.0.0.1:PORT (0 picks a free one).")
        })?;
        let local = listener
            .local_addr()
            .map_err(|e| ToolError::internal(format!("Cannot read the listening address: {e}")))?;
        let app = site.router(local.port());
        let _ = writeln!(
            std::io::stdout().lock(),
            "jility web: the board of {} is at http://{}/ (Ctrl-C stops it)",
            location.db.display(),
            local
        );
        axum::serve(listener, app)
            .with_graceful_shutdown(mcp_common::signal::termination())
            .await
            .map_err(|e| ToolError::internal(format!("The web server failed: {e}")))
    })
}
