//! `jility-bridge`: jility's tools served locally against a team's `jility serve`
//! (`JILITY_MODE=cloud jility --mcp-server`): each operation becomes its request to the REST
//! API ([`bridge::Bridge`], with a read cache kept fresh by the API's event stream), and the
//! command line's blocking client of the same API ([`client`]: where it is, which token).

pub mod bridge;
pub mod client;
mod config;
pub mod credential;
pub mod signin;

pub use bridge::{Bridge, BridgeBackend};
pub use client::ApiClient;
