//! A server's `tools/list` in bytes and tokens, for docs/benchmarks.md:
//! `cargo run -p mcp-testkit --example listing -- BIN [ARGS…]`.

#![allow(clippy::print_stdout, clippy::expect_used)]

use mcp_testkit::Wire;
use mcp_testkit::protocol::spawn;
use mcp_testkit::protocol::{listing_bytes, tokens};

#[tokio::main]
async fn main() {
    let mut args = std::env::args().skip(1);
    let bin = args.next().expect("the server binary");
    let rest: Vec<String> = args.collect();
    let rest: Vec<&str> = rest.iter().map(String::as_str).collect();
    let (_home, mcp) = spawn(Wire::Stdio, &bin, &rest).await;
    let tools = mcp.tools().await;
    let text = serde_json::to_string(&tools).expect("JSON");
    let lean: usize = listing_bytes(&tools).iter().map(|s| s.2).sum();
    let lean_text: String = tools
        .iter()
        .map(|t| {
            serde_json::json!({"name": t.name, "description": t.description, "inputSchema": t.input_schema})
                .to_string()
        })
        .collect();
    println!(
        "{bin}: {} tools; {} bytes, {} tokens; name + description + inputSchema {lean} bytes, {} tokens",
        tools.len(),
        text.len(),
        tokens(&text).unwrap_or(0),
        tokens(&lean_text).unwrap_or(0)
    );
}
