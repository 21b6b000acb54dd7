//! `jility-api`: the REST API of `jility serve` under `/api/v1` on axum, its OpenAPI
//! document, TLS and the event stream. It mounts the MCP endpoint and the pages for people
//! it is handed (built above it, by `jility-cloud` and the binary), and [`api::ApiState`]
//! is the backend of those MCP tools ([`jility_core::Backend`]). [`public`]: where the
//! server is as its users reach it, and the challenges that send a client without a token
//! to OAuth; [`oauth_errors`]: OAuth's errors as answers.

pub mod api;
pub mod oauth_errors;
pub mod public;

// The floors below by the paths they had when they were modules of one crate
// (`crate::store`, `crate::auth`, …), so that the API's code names them as it did.
use jility_identity::{accounts, audit, auth, ratelimit};
use jility_pg::{events, reach, store};

pub use api::{ApiState, ServeConfig};
