//! `twig-mcp`: serve twig's branch-stack context to MCP clients over stdio.

use std::{collections::HashSet, path::PathBuf, process::ExitCode, time::Duration};

use clap::Parser;
use twig_mcp::{
    context::{ServerContext, Settings},
    server::{Feature, TwigMcpServer},
};

/// Read-only MCP server for twig branch stacks: branches, dependencies, GitHub PRs and Jira
/// issues. Speaks MCP over stdin/stdout; logs go to stderr.
#[derive(Debug, Parser)]
#[command(name = "twig-mcp", version, about)]
struct Cli {
    /// More logging on stderr: -v info, -vv debug, -vvv trace (default: warnings only).
    #[arg(short, long, action = clap::ArgAction::Count)]
    verbose: u8,

    /// Repository to serve (default: the repository containing the working directory).
    #[arg(long, value_name = "PATH")]
    repo: Option<PathBuf>,

    /// Do not offer these tools or features (repeatable).
    #[arg(long, value_enum, value_name = "FEATURE")]
    disable: Vec<Feature>,

    /// Timeout of each GitHub or Jira request, in seconds.
    #[arg(long, value_name = "SECS", default_value_t = 30, value_parser = clap::value_parser!(u64).range(1..=3600))]
    timeout: u64,
}

// One thread: requests are short, and a single allocator arena keeps the idle footprint small.
#[tokio::main(flavor = "current_thread")]
async fn main() -> ExitCode {
    let cli = Cli::parse();
    mcp_common::serve::init_tracing(cli.verbose.min(3));
    let cwd = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("."));
    let settings = Settings::from_env(Duration::from_secs(cli.timeout));
    let ctx = ServerContext::new(cli.repo.as_deref(), &cwd, settings);
    let disabled: HashSet<Feature> = cli.disable.into_iter().collect();
    let server = TwigMcpServer::new(ctx, disabled);
    match mcp_common::serve::serve_stdio(server).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            tracing::error!("{err:#}");
            ExitCode::FAILURE
        }
    }
}
