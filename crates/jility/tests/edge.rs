//! The protocol edge over stdio (`mcp_testkit::edge`): hostile lines before and after
//! `initialize` are answered once each with their id (or `"id": null` when it cannot be
//! read), nothing is fatal, a second `initialize` is refused, nothing huge is echoed.

#[test]
fn the_stdio_edge_holds() {
    let home = tempfile::tempdir().expect("tempdir");
    let mut command = std::process::Command::new(env!("CARGO_BIN_EXE_jility"));
    command
        .args(["--mcp-server"])
        .current_dir(home.path())
        .env_clear()
        .env("HOME", home.path())
        .env("PATH", std::env::var("PATH").unwrap_or_default());
    mcp_testkit::edge::check_stdio_edge(command);
}

/// The same rules over Streamable HTTP.
#[tokio::test]
async fn the_http_edge_holds() {
    let home = tempfile::tempdir().expect("tempdir");
    let home_path = home.path().display().to_string();
    let mcp = mcp_testkit::McpProcess::spawn_bin_over(
        mcp_testkit::Wire::Http,
        env!("CARGO_BIN_EXE_jility"),
        &["--mcp-server"],
        home.path(),
        &[("HOME", home_path.as_str())],
    )
    .await
    .expect("the server starts");
    let url = mcp.url().expect("an HTTP server").to_string();
    mcp_testkit::edge::check_http_edge(&url).await;
    mcp.ping().await;
}
