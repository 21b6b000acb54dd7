//! `git-mile`: run as `git mile <command>` once it is on PATH.

use std::io::Write as _;
use std::process::ExitCode;

use clap::Parser;
use git_mile::cli::{Cli, Command};
use git_mile::ops::{self, OpError};

fn main() -> ExitCode {
    let cli = Cli::parse();
    mcp_common::serve::init_tracing(cli.verbose.min(3));
    if matches!(cli.command, Command::McpServer) {
        return serve(&cli);
    }
    match git_mile::cli::run(&cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            let _ = writeln!(std::io::stderr().lock(), "git mile: {err}");
            ExitCode::from(match err {
                OpError::Invalid(_) => 2,
                _ => 1,
            })
        }
    }
}

fn serve(cli: &Cli) -> ExitCode {
    let catalog = ops::open_catalog(cli.repo.as_deref()).map_err(|err| {
        tracing::warn!(%err, "serving without a repository");
        format!("{err}; start the server inside a git repository or pass --repo PATH")
    });
    // One thread answers requests (lowest latency per call); catalog reads run on tokio's
    // blocking pool, so a long refresh never delays a `ping`.
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(err) => {
            let _ = writeln!(std::io::stderr().lock(), "git mile: {err}");
            return ExitCode::FAILURE;
        }
    };
    let result = runtime.block_on(git_mile::server::serve(catalog));
    // When stdin is not a pipe (a socket, as some clients spawn servers with), it is read on a
    // blocking thread that only returns at end of input: do not wait for it after `shutdown`.
    runtime.shutdown_timeout(std::time::Duration::from_millis(100));
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            tracing::error!("{err:#}");
            ExitCode::FAILURE
        }
    }
}
