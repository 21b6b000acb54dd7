//! One way to serve: every binary parses [`TransportArgs`], builds a runtime with
//! [`runtime`], and hands a handler factory to [`serve`], which speaks stdio (the default) or
//! Streamable HTTP (`--http ADDR`).

use std::io::Write as _;

use rmcp::service::ServerInitializeError;
use rmcp::{ServerHandler, ServiceExt};
use tracing_subscriber::{EnvFilter, fmt};

#[cfg(feature = "http")]
use crate::http::HttpConfig;

pub use crate::start::StartError;

/// Kept under its old path for the servers that call it from here.
pub use crate::signal::termination;

/// The log level for a `-v` count: 0 → WARN, 1 → INFO, 2 → DEBUG, 3 or more → TRACE.
pub fn level_for_verbosity(verbosity: u8) -> tracing::Level {
    match verbosity {
        0 => tracing::Level::WARN,
        1 => tracing::Level::INFO,
        2 => tracing::Level::DEBUG,
        _ => tracing::Level::TRACE,
    }
}

/// Libraries whose debug logs carry their statements' parameters (stored secrets among
/// them): never below INFO from `-v` alone.
const QUIET_LIBRARIES: &[&str] = &["tokio_postgres", "postgres"];

/// Log to stderr (stdout carries protocol frames only) at the level of the `-v` count.
/// `RUST_LOG`, when set, overrides the level with its own directives.
pub fn init_tracing(verbosity: u8) {
    init_tracing_with(verbosity, None);
}

/// A layer a server adds beside the log (e.g. one exporting traces), with its own filter.
pub type ExtraLayer =
    Box<dyn tracing_subscriber::Layer<tracing_subscriber::Registry> + Send + Sync + 'static>;

/// [`init_tracing`], with `extra` receiving the spans and events too (its own filter
/// decides which; the log's level does not apply to it).
pub fn init_tracing_with(verbosity: u8, extra: Option<ExtraLayer>) {
    use tracing_subscriber::Layer as _;
    use tracing_subscriber::layer::SubscriberExt as _;
    use tracing_subscriber::util::SubscriberInitExt as _;
    let level = level_for_verbosity(verbosity);
    let mut directives = level.as_str().to_ascii_lowercase();
    if level < tracing::Level::INFO {
        // rmcp's service warns of every error it answers, quoting the request id whole (a
        // megabyte, from a hostile client); the servers log their own failures.
        directives.push_str(",rmcp::service=error");
    }
    if level > tracing::Level::INFO {
        for library in QUIET_LIBRARIES {
            directives.push_str(&format!(",{library}=info"));
        }
    }
    let filter = EnvFilter::try_from_env("RUST_LOG").unwrap_or_else(|_| EnvFilter::new(directives));
    let log = fmt::layer()
        .with_writer(std::io::stderr)
        .with_ansi(false)
        .with_filter(filter);
    // A second initialisation (tests) is harmless, so its error is ignored.
    let _ = tracing_subscriber::registry()
        .with(extra)
        .with(log)
        .try_init();
}

/// The transport flag every server binary takes.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct TransportArgs {
    /// Serve MCP over Streamable HTTP at ADDR (e.g. 127.0.0.1:8808; port 0 picks one), at
    /// path /mcp, instead of stdio. Binding other than loopback requires MCP_HTTP_TOKEN.
    #[cfg(feature = "http")]
    #[arg(long, value_name = "ADDR")]
    pub http: Option<String>,
}

impl TransportArgs {
    /// The transport these flags ask for, with the HTTP settings of the environment.
    pub fn transport(&self) -> Result<Transport, StartError> {
        #[cfg(feature = "http")]
        if let Some(addr) = &self.http {
            return HttpConfig::from_env(addr).map(Transport::Http);
        }
        Ok(Transport::Stdio)
    }
}

/// How a server speaks to its clients.
#[derive(Debug, Clone)]
pub enum Transport {
    /// One client on stdin/stdout.
    Stdio,
    /// Many clients over Streamable HTTP.
    #[cfg(feature = "http")]
    Http(HttpConfig),
}

/// What varies between servers in how they are served.
#[derive(Debug, Clone, Copy, Default)]
pub struct ServeOptions {
    /// Over stdio, answer a `shutdown` request (`null`, after everything before it) and stop
    /// reading, for servers whose contract defines it. Over HTTP a client ends its session instead.
    pub shutdown_request: bool,
}

/// The runtime that suits the transport: one thread for stdio (one client, lowest latency
/// per call, smallest footprint), a worker per core for HTTP (many clients). Where the process
/// may use only one core (a one-CPU container, or pinned), HTTP gets one thread too: workers
/// sharing a core gain nothing and pay for every hand-off between them.
pub fn runtime(transport: &Transport) -> std::io::Result<tokio::runtime::Runtime> {
    match transport {
        #[cfg(feature = "http")]
        Transport::Http(_) if std::thread::available_parallelism().map_or(1, |n| n.get()) > 1 => {
            tokio::runtime::Builder::new_multi_thread()
                .enable_all()
                .build()
        }
        _ => tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build(),
    }
}

/// Serve handlers made by `factory` over `transport` until the client leaves (stdio) or
/// the process is told to stop (HTTP). Over stdio `factory` is called once; over HTTP once
/// per session (or per stateless request), so handlers share state through what `factory`
/// captures. `name` introduces the server in what it writes to stderr.
pub async fn serve<H, F>(
    transport: Transport,
    name: &str,
    options: ServeOptions,
    factory: F,
) -> anyhow::Result<()>
where
    H: ServerHandler + Send + 'static,
    F: Fn() -> H + Send + Sync + 'static,
{
    #[cfg(not(feature = "http"))]
    let _ = name;
    match transport {
        Transport::Stdio => serve_stdio(factory(), options).await,
        #[cfg(feature = "http")]
        Transport::Http(config) => crate::http::serve(config, name, factory).await,
    }
}

async fn serve_stdio<H: ServerHandler>(handler: H, options: ServeOptions) -> anyhow::Result<()> {
    let started = handler
        .serve(crate::stdio::stdio(options.shutdown_request))
        .await;
    let service = match started {
        Ok(service) => service,
        // Input that ends before `initialize` (or with `shutdown`) is a clean end.
        Err(ServerInitializeError::ConnectionClosed(_)) => {
            tracing::info!("input ended before initialize");
            return Ok(());
        }
        Err(err) => anyhow::bail!("MCP handshake failed: {err}"),
    };
    let reason = service.waiting().await?;
    tracing::info!(?reason, "client disconnected");
    Ok(())
}

/// Write a startup failure for the person who started the server: `name: message`.
pub fn report_start_error(name: &str, err: &dyn std::fmt::Display) {
    let _ = writeln!(std::io::stderr().lock(), "{name}: {err}");
}
