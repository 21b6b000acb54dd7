//! `duvet`: requirements traceability. `duvet mcp` serves the project to MCP clients over
//! stdio.

use std::{path::PathBuf, process::ExitCode};

use clap::{Args, Parser, Subcommand};
use duvet::{config::Flags, engine::Engine, server::DuvetServer};

#[derive(Debug, Parser)]
#[command(
    name = "duvet",
    version,
    about = "Requirements traceability for Duvet-annotated projects"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Serve the project's specifications, requirements and citations over MCP (stdio).
    Mcp(McpArgs),
}

#[derive(Debug, Args)]
struct McpArgs {
    /// More logging on stderr: -v info, -vv debug, -vvv trace (default: warnings only).
    #[arg(short, long, action = clap::ArgAction::Count)]
    verbose: u8,

    /// Project root (default: the working directory).
    #[arg(long, value_name = "DIR")]
    root: Option<PathBuf>,

    /// Config file (default: .duvet/config.toml under the root).
    #[arg(long, value_name = "FILE")]
    config: Option<PathBuf>,

    /// Requirement TOML files (legacy form; repeatable).
    #[arg(long, value_name = "GLOB")]
    spec_pattern: Vec<String>,

    /// Source files, optionally prefixed with a comment style `(META,CONTENT)`, e.g.
    /// `'(*=,*#)src/**/*.c'` (legacy form; repeatable).
    #[arg(long, value_name = "GLOB")]
    source_pattern: Vec<String>,

    /// Where cached specification texts live in the legacy form (default: specs).
    #[arg(long, value_name = "DIR")]
    spec_path: Option<PathBuf>,
}

#[tokio::main]
async fn main() -> ExitCode {
    let cli = Cli::parse();
    let Command::Mcp(args) = cli.command;
    mcp_common::serve::init_tracing(args.verbose.min(3));
    let cwd = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("."));
    let root = args.root.map(|r| cwd.join(r)).unwrap_or(cwd);
    let root = std::fs::canonicalize(&root).unwrap_or(root);
    let flags = Flags {
        spec_patterns: args.spec_pattern,
        source_patterns: args.source_pattern,
        spec_path: args.spec_path,
        config: args.config,
    };
    let engine = Engine::new(root, flags);
    // Analyse in the background right away, so the first answer is ready sooner.
    let warm = engine.clone();
    tokio::spawn(async move {
        if let Err(err) = warm.snapshot().await {
            tracing::warn!(%err, "no project yet: tools answer no_project until one appears");
        }
    });
    match mcp_common::serve::serve_stdio(DuvetServer::new(engine)).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            tracing::error!("{err:#}");
            ExitCode::FAILURE
        }
    }
}
