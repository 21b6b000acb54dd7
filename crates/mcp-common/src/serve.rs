//! Logging and stdio serving shared by every server binary.

use rmcp::{ServerHandler, ServiceExt};
use tracing_subscriber::{EnvFilter, fmt};

/// The log level for a `-v` count: 0 → WARN, 1 → INFO, 2 → DEBUG, 3 or more → TRACE.
pub fn level_for_verbosity(verbosity: u8) -> tracing::Level {
    match verbosity {
        0 => tracing::Level::WARN,
        1 => tracing::Level::INFO,
        2 => tracing::Level::DEBUG,
        _ => tracing::Level::TRACE,
    }
}

/// Log to stderr (stdout carries protocol frames only) at the level of the `-v` count.
/// `RUST_LOG`, when set, overrides the level with its own directives.
pub fn init_tracing(verbosity: u8) {
    let level = level_for_verbosity(verbosity);
    let filter = EnvFilter::try_from_env("RUST_LOG")
        .unwrap_or_else(|_| EnvFilter::new(level.as_str().to_ascii_lowercase()));
    // A second initialisation (tests) is harmless, so its error is ignored.
    let _ = fmt()
        .with_writer(std::io::stderr)
        .with_ansi(false)
        .with_env_filter(filter)
        .try_init();
}

/// Serve `handler` over stdin/stdout until the client disconnects.
pub async fn serve_stdio<H: ServerHandler>(handler: H) -> anyhow::Result<()> {
    let service = handler
        .serve(rmcp::transport::io::stdio_pipes())
        .await
        .map_err(|err| anyhow::anyhow!("MCP handshake failed: {err}"))?;
    let reason = service.waiting().await?;
    tracing::info!(?reason, "client disconnected");
    Ok(())
}
