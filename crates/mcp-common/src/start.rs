//! Why a server cannot start serving: the errors of its transport's settings, shared by
//! [`crate::serve`] (which reads the flags) and [`crate::http`] (which checks the address).

use std::net::SocketAddr;

/// Why the HTTP server cannot start. The message is for the person who started it.
#[derive(Debug, thiserror::Error)]
pub enum StartError {
    #[error("`{0}` is not an address to listen on: give HOST:PORT, e.g. 127.0.0.1:8808")]
    BadAddress(String),
    #[error(
        "refusing to serve MCP over HTTP on {0} without a token: binding an address other than loopback requires a bearer token in the environment variable {TOKEN_VAR} (e.g. `{TOKEN_VAR}=$(openssl rand -hex 32)`), or bind 127.0.0.1"
    )]
    TokenRequired(SocketAddr),
    #[error("cannot listen on {addr}: {source}")]
    Bind {
        addr: SocketAddr,
        source: std::io::Error,
    },
}

/// The environment variable of the bearer token an HTTP server off loopback requires.
pub const TOKEN_VAR: &str = "MCP_HTTP_TOKEN";
