//! `jility`: the CLI and `jility --mcp-server [--http ADDR]`; everything is in the library.

use std::process::ExitCode;

use clap::Parser;

/// mimalloc, not the system allocator: a request of `jility serve` makes and frees many
/// small buffers on two or more threads, where glibc's malloc spent a fifth of the
/// server's CPU (docs/benchmarks.md, issue 29).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    jility::cli::main(jility::cli::Cli::parse())
}
