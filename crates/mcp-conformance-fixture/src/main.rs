//! `mcp-conformance-fixture`: the MCP conformance suite's reference server, built on the
//! kit (`mcp-common`), for `clients/conformance-next/fixture.mjs`. Test-only: built with
//! `--features fixture`.

use std::process::ExitCode;

use clap::Parser;
use mcp_common::serve::{ServeOptions, TransportArgs};

const NAME: &str = "mcp-conformance-fixture";

/// Serve the conformance suite's reference tools, prompts and resources (stdio, or
/// Streamable HTTP with `--http ADDR`).
#[derive(Debug, Parser)]
#[command(name = NAME, version)]
struct Args {
    #[command(flatten)]
    transport: TransportArgs,
    /// More logging on stderr (-v, -vv, -vvv).
    #[arg(short, long, action = clap::ArgAction::Count)]
    verbose: u8,
}

fn main() -> ExitCode {
    let args = Args::parse();
    mcp_common::serve::init_tracing(args.verbose.min(3));
    let transport = match args.transport.transport() {
        Ok(transport) => transport,
        Err(err) => {
            mcp_common::serve::report_start_error(NAME, &err);
            return ExitCode::from(2);
        }
    };
    let runtime = match mcp_common::serve::runtime(&transport) {
        Ok(runtime) => runtime,
        Err(err) => {
            mcp_common::serve::report_start_error(NAME, &format!("cannot start: {err}"));
            return ExitCode::FAILURE;
        }
    };
    let result = runtime.block_on(async move {
        let fixture = mcp_conformance_fixture::Fixture::new();
        mcp_common::serve::serve(transport, NAME, ServeOptions::default(), move || {
            fixture.session()
        })
        .await
    });
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            mcp_common::serve::report_start_error(NAME, &format!("{err:#}"));
            ExitCode::FAILURE
        }
    }
}
