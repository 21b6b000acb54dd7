//! `jility`: the CLI and `jility --mcp-server [--http ADDR]`; everything is in the library.

use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    jility::cli::main(jility::cli::Cli::parse())
}
