//! `jility`: an AI-native ticket tracker on an embedded SQLite database, with a CLI and an
//! MCP server (`jility --mcp-server`).

mod cli;
mod description;
mod model;
mod params;
mod render;
mod server;
mod store;
mod templates;
mod tracker;

use std::io::Write;
use std::process::ExitCode;

use clap::Parser;
use mcp_common::{ErrorCode, ToolError};

use crate::cli::{Cli, Location};

fn main() -> ExitCode {
    let mut cli = Cli::parse();
    mcp_common::serve::init_tracing(cli.verbose);
    if let Ok(mode) = std::env::var("JILITY_MODE")
        && !mode.is_empty()
        && !mode.eq_ignore_ascii_case("local")
    {
        let err = ToolError::new(
            ErrorCode::InvalidInput,
            format!("JILITY_MODE={mode} is not supported by this build"),
        )
        .with_hint("This build serves local mode only: unset JILITY_MODE or set it to `local`.");
        cli::report(cli.json, &err);
        return ExitCode::from(2);
    }
    if cli.mcp_server {
        return match serve(&cli) {
            Ok(()) => ExitCode::SUCCESS,
            Err(err) => {
                let _ = writeln!(std::io::stderr().lock(), "jility: {err:#}");
                ExitCode::FAILURE
            }
        };
    }
    let Some(command) = cli.command.take() else {
        let _ = writeln!(
            std::io::stderr().lock(),
            "jility: give a command (init, ticket, dep, template) or --mcp-server; see `jility --help`"
        );
        return ExitCode::from(2);
    };
    let json = cli.json;
    match cli::run(cli, command) {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            cli::report(json, &err);
            ExitCode::FAILURE
        }
    }
}

/// `jility --mcp-server`: find (or create) the database, then serve MCP over stdio.
fn serve(cli: &Cli) -> anyhow::Result<()> {
    let cwd = std::env::current_dir()?;
    let location = match &cli.db {
        Some(db) => Location::explicit(db.clone()),
        None => Location::find(&cwd).unwrap_or_else(|| Location::in_dir(&cwd)),
    };
    let fresh = !location.db.exists();
    let mut tracker = cli::open(&location, true).map_err(|e| anyhow::anyhow!("{}", e.message))?;
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
    tracing::info!(db = %location.db.display(), "serving MCP over stdio");
    let actor = std::env::var("JILITY_ACTOR")
        .ok()
        .map(|a| a.trim().to_string())
        .filter(|a| !a.is_empty());
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    runtime.block_on(mcp_common::serve::serve_stdio(server::JilityServer::new(
        tracker, actor,
    )))
}
