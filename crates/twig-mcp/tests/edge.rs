//! The protocol edge over stdio (`mcp_testkit::edge`): hostile lines before and after
//! `initialize` are answered once each with their id (or `"id": null` when it cannot be
//! read), nothing is fatal, a second `initialize` is refused, nothing huge is echoed.

#[test]
fn the_stdio_edge_holds() {
    let home = tempfile::tempdir().expect("tempdir");
    let mut command = std::process::Command::new(env!("CARGO_BIN_EXE_twig-mcp"));
    command
        .current_dir(home.path())
        .env_clear()
        .env("HOME", home.path())
        .env("PATH", std::env::var("PATH").unwrap_or_default());
    mcp_testkit::edge::check_stdio_edge(command);
}
