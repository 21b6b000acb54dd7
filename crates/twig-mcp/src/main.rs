//! `twig-mcp`: serve twig's branch-stack context to MCP clients over stdio, or over
//! Streamable HTTP with `--http ADDR`. This file only reads the flags and hands the server to
//! the service kit.

use std::{collections::HashSet, path::PathBuf, process::ExitCode, time::Duration};

use clap::Parser;
use mcp_common::serve::{self, ServeOptions, TransportArgs};
use mcp_common::surface::{Selection, SurfaceArgs};
use twig_mcp::{
    context::{ServerContext, Settings},
    server::{Feature, TwigMcpServer},
};

const NAME: &str = "twig-mcp";

/// The environment the server reads, for `--help`.
const ENVIRONMENT: &str = "Environment: GITHUB_API_URL (default https://api.github.com; set it \
for GitHub Enterprise), GITHUB_TOKEN or GH_TOKEN (used when ~/.netrc has no entry for the API's \
host), JIRA_HOST (e.g. acme.atlassian.net; credentials from its ~/.netrc entry: login = email, \
password = API token), XDG_DATA_HOME (twig's registry), RUST_LOG (overrides -v).";

/// Read-only MCP server for twig branch stacks: branches, dependencies, GitHub PRs and Jira
/// issues. Speaks MCP over stdin/stdout (or Streamable HTTP with --http); logs go to stderr.
#[derive(Debug, Parser)]
#[command(name = "twig-mcp", version, about, after_help = ENVIRONMENT)]
struct Cli {
    /// More logging on stderr: -v info, -vv debug, -vvv trace (default: warnings only).
    #[arg(short, long, action = clap::ArgAction::Count)]
    verbose: u8,

    /// Repository to serve: a directory inside it (default: the repository containing the
    /// working directory).
    #[arg(long, value_name = "PATH")]
    repo: Option<PathBuf>,

    /// Do not offer this feature's tools or data (repeatable: --disable github --disable
    /// jira).
    #[arg(long, value_enum, value_name = "FEATURE")]
    disable: Vec<Feature>,

    /// Which tools to offer (toolsets: local, github, jira; all tools read).
    #[command(flatten)]
    surface: SurfaceArgs,

    /// Timeout of each GitHub or Jira request, in seconds.
    #[arg(long, value_name = "SECS", default_value_t = 30, value_parser = clap::value_parser!(u64).range(1..=3600))]
    timeout: u64,

    #[command(flatten)]
    transport: TransportArgs,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    serve::init_tracing(cli.verbose.min(3));
    let transport = match cli.transport.transport() {
        Ok(transport) => transport,
        Err(err) => {
            serve::report_start_error(NAME, &err);
            return ExitCode::from(2);
        }
    };
    if matches!(transport, serve::Transport::Stdio) {
        // One client, and at most one blocking thread at work (a health check): one malloc
        // arena, so that thread's work leaves no second heap behind when idle.
        mcp_common::memory::one_arena();
    }
    let runtime = match serve::runtime(&transport) {
        Ok(runtime) => runtime,
        Err(err) => {
            serve::report_start_error(NAME, &err);
            return ExitCode::FAILURE;
        }
    };
    let cwd = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("."));
    let settings = Settings::from_env(Duration::from_secs(cli.timeout));
    let disabled: HashSet<Feature> = cli.disable.into_iter().collect();
    let selection = match Selection::new(&cli.surface, twig_mcp::server::TOOLS) {
        Ok(selection) => selection,
        Err(err) => {
            serve::report_start_error(NAME, &err);
            return ExitCode::from(2);
        }
    };
    // The repository is detected, and the server built, once: every session shares them.
    let ctx = ServerContext::new(cli.repo.as_deref(), &cwd, settings);
    let server = TwigMcpServer::new(ctx, disabled, selection);
    let served = runtime.block_on(serve::serve(
        transport,
        NAME,
        ServeOptions::default(),
        move || server.session(),
    ));
    match served {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            serve::report_start_error(NAME, &format!("{err:#}"));
            ExitCode::FAILURE
        }
    }
}
