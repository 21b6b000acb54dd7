//! `duvet`: requirements traceability. `duvet mcp` serves the project to MCP clients over
//! stdio, or over Streamable HTTP with `--http ADDR` (see [`duvet::cli`]).

/// mimalloc, not the system allocator: `duvet report` makes and frees many small strings
/// and vectors on two or more threads, where glibc's malloc, its page faults and its frees
/// took a third of the report's time on aws/s2n-quic (docs/benchmarks.md, issue 47).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> std::process::ExitCode {
    duvet::cli::main()
}
