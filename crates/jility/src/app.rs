//! The composition root: the one module that names both the MCP adapter ([`crate::server`])
//! and the backends it runs on, and wires them to the servers that carry them.
//!
//! - local mode (`jility --mcp-server`): the tools on this project's SQLite database;
//! - the cloud bridge (`JILITY_MODE=cloud jility --mcp-server`): the tools as requests to
//!   a team's `jility serve`;
//! - `jility serve`: the REST API on PostgreSQL, with the tools mounted at `/mcp` on the
//!   API's own state, for the caller whose token each request carries.

use std::io::Write as _;
use std::path::PathBuf;

use jility_core::Service;
use jility_sqlite::local::{self, Location};
use mcp_common::serve::{ServeOptions, Transport};

use crate::server::{JilityServer, Shared};

/// `jility --mcp-server`: find (or create) the database at `db` (else the nearest
/// `.jility/data.db`, else one in the working directory), then serve MCP over `transport`
/// until the client leaves (stdio) or the process is told to stop (HTTP).
pub fn serve_local(db: Option<PathBuf>, transport: Transport) -> anyhow::Result<()> {
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
    let shared = Shared::new(Service::new(tracker), actor);
    let runtime = mcp_common::serve::runtime(&transport)?;
    runtime.block_on(mcp_common::serve::serve(
        transport,
        "jility",
        ServeOptions::default(),
        move || JilityServer::new(shared.clone()),
    ))
}

/// `JILITY_MODE=cloud jility --mcp-server`: check the configuration, ask the API for the
/// token's scopes, start following the API's events, and serve MCP over `transport`.
#[cfg(feature = "cloud")]
pub fn serve_bridge(transport: Transport) -> anyhow::Result<()> {
    use jility_bridge::bridge::{Bridge, BridgeBackend};
    use jility_bridge::client;
    let base =
        client::api_base().map_err(|e| anyhow::anyhow!("{} {}", e.message, e.hint_text()))?;
    let token =
        client::api_token().map_err(|e| anyhow::anyhow!("{} {}", e.message, e.hint_text()))?;
    let runtime = mcp_common::serve::runtime(&transport)?;
    runtime.block_on(async move {
        let bridge = Bridge::new(base, token).map_err(|e| anyhow::anyhow!("{}", e.message))?;
        tracing::info!(api = %bridge.base(), "serving MCP as a bridge to the cloud API");
        // The token's scopes decide which tools are listed (as at /mcp).
        bridge.identify().await;
        bridge.follow_events();
        let shared = Shared::new(BridgeBackend(bridge), None);
        mcp_common::serve::serve(transport, "jility", ServeOptions::default(), move || {
            JilityServer::new(shared.clone())
        })
        .await
    })
}

/// `jility serve`: the REST API on PostgreSQL, with the MCP tools at `/mcp` behind the
/// same authentication, on the API's state (each call as its token's principal).
#[cfg(feature = "cloud")]
pub fn serve_cloud(config: jility_cloud::ServeConfig) -> Result<(), mcp_common::ToolError> {
    jility_cloud::api::serve(config, |state, local, sessions| {
        let shared = Shared::new(state, None);
        mcp_common::http::mcp_endpoint(
            &mcp_common::http::HttpConfig::behind_auth(local),
            local.port(),
            sessions,
            move || JilityServer::new(shared.clone()),
        )
    })
}
