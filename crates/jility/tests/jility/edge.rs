//! The protocol edge (`mcp_testkit::edge`): hostile lines before and after `initialize`
//! are answered once each with their id (or `"id": null` when it cannot be read), nothing
//! is fatal, a second `initialize` is refused, nothing huge is echoed; over stdio and HTTP.

const BIN: &str = env!("CARGO_BIN_EXE_jility");

#[test]
fn the_stdio_edge_holds() {
    mcp_testkit::edge::check_stdio_binary(BIN, &["--mcp-server"]);
}

#[tokio::test]
async fn the_http_edge_holds() {
    mcp_testkit::edge::check_http_binary(BIN, &["--mcp-server"]).await;
}
