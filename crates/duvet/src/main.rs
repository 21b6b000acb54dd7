//! `duvet`: requirements traceability. `duvet mcp` serves the project to MCP clients over
//! stdio, or over Streamable HTTP with `--http ADDR` (see [`duvet::cli`]).

fn main() -> std::process::ExitCode {
    duvet::cli::main()
}
