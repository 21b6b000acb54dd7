//! `git-mile`: run as `git mile <command>` once it is on PATH.

use std::io::Write as _;
use std::process::ExitCode;

use clap::Parser;
use git_mile::cli::{Cli, Command};
use git_mile::ops::{self, OpError};
use git_mile::server::{GitMileServer, Shared};
use mcp_common::serve::{ServeOptions, TransportArgs};
use mcp_common::surface::{Selection, SurfaceArgs};

const NAME: &str = "git-mile";

fn main() -> ExitCode {
    let cli = Cli::parse();
    mcp_common::serve::init_tracing(cli.verbose.min(3));
    if let Command::McpServer { transport, surface } = &cli.command {
        return serve(&cli, transport, surface);
    }
    match git_mile::cli::run(&cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            // What the repository holds may be quoted: never raw control characters.
            let message = git_mile::cli::block(&err.to_string());
            let _ = writeln!(std::io::stderr().lock(), "git mile: {message}");
            ExitCode::from(match err {
                OpError::Invalid(_)
                | OpError::Refused {
                    why: ops::Refusal::Invalid,
                    ..
                } => 2,
                _ => 1,
            })
        }
    }
}

/// `git mile mcp-server [--http ADDR] [--toolsets …] [--tools …] [--read-only]`: stdio (with the contract's `shutdown`)
/// by default, Streamable HTTP at `/mcp` with `--http`.
fn serve(cli: &Cli, args: &TransportArgs, surface: &SurfaceArgs) -> ExitCode {
    let transport = match args.transport() {
        Ok(transport) => transport,
        Err(err) => {
            mcp_common::serve::report_start_error(NAME, &err);
            return ExitCode::from(2);
        }
    };
    let selection = match Selection::new(surface, git_mile::server::TOOLS) {
        Ok(selection) => selection,
        Err(err) => {
            mcp_common::serve::report_start_error(NAME, &err);
            return ExitCode::from(2);
        }
    };
    let catalog = ops::open_catalog(cli.repo.as_deref()).map_err(|err| {
        tracing::warn!(%err, "serving without a repository");
        format!("{err}; start the server inside a git repository or pass --repo PATH")
    });
    // Over stdio one thread answers requests (lowest latency per call); over HTTP every core
    // serves. Catalog reads run on tokio's blocking pool either way, so a long refresh never
    // delays a `ping`.
    let runtime = match mcp_common::serve::runtime(&transport) {
        Ok(runtime) => runtime,
        Err(err) => {
            mcp_common::serve::report_start_error(NAME, &err);
            return ExitCode::FAILURE;
        }
    };
    // One repository and one cursor key for every session: a cursor from one HTTP session
    // works in another (and after a restart, and with the CLI).
    let shared = Shared::new(catalog, selection);
    let result = runtime.block_on(async move {
        shared.warm_up();
        mcp_common::serve::serve(
            transport,
            NAME,
            ServeOptions {
                shutdown_request: true,
            },
            move || GitMileServer::new(shared.clone()),
        )
        .await
    });
    // When stdin is not a pipe (a socket, as some clients spawn servers with), it is read on a
    // blocking thread that only returns at end of input: do not wait for it after `shutdown`.
    runtime.shutdown_timeout(std::time::Duration::from_millis(100));
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            mcp_common::serve::report_start_error(NAME, &format!("{err:#}"));
            ExitCode::FAILURE
        }
    }
}
