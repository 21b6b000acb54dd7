//! `duvet`: requirements traceability. `duvet mcp` serves the project to MCP clients over
//! stdio, or over Streamable HTTP with `--http ADDR` (see [`duvet::cli`]).

/// mimalloc, not the system allocator: `duvet report` makes and frees many small strings
/// and vectors on two or more threads, where glibc's malloc, its page faults and its frees
/// took a third of the report's time on aws/s2n-quic (docs/benchmarks.md, issue 47).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// Transparent huge pages off before the runtime's first allocation (`duvet report` on a small
/// project is faster without them; the commands turn them back on where they pay: see
/// [`duvet::memory`]): a function the loader calls before `main`.
#[cfg(target_os = "linux")]
#[used]
#[expect(
    unsafe_code,
    reason = "a function placed in .init_array, which the loader calls before main"
)]
#[unsafe(link_section = ".init_array")]
static SMALL_PAGES_FIRST: extern "C" fn() = small_pages_first;

#[cfg(target_os = "linux")]
extern "C" fn small_pages_first() {
    duvet::memory::small_pages_first();
}

fn main() -> std::process::ExitCode {
    duvet::cli::main()
}
