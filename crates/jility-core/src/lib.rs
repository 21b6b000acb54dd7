//! `jility-core`: the domain of jility, the AI-native ticket tracker — everything both modes
//! share and nothing that serves or stores. It knows no database driver, no HTTP and no MCP:
//! its errors and pages are the kit's light core ([`mcp_common_core`]).
//!
//! - [`tracker`]: every operation, validation, the workflow and the change log, written
//!   against [`store::Store`]; [`service::Service`] runs it for async callers.
//! - [`store`]: the storage trait (`jility-sqlite` and `jility-pg` implement it).
//! - [`ops`]: the table of operations — name, scope, route, cache time, tracker call — that
//!   the MCP tools, the REST API, the bridge and the OpenAPI document all read;
//!   [`backend`]: where an operation runs, the seam the MCP adapter is generic over.
//! - [`model`], [`params`] (inputs), [`description`] (precise edits, diffs), [`templates`],
//!   [`render`] (the markdown of every answer), [`errors`] (the error codes), [`token`]
//!   (the format of API tokens, scopes, principals).
//! - `suite` (cargo feature `suite`, for tests only): the conformance suite every store runs.

pub mod backend;
pub mod description;
pub mod errors;
pub mod model;
pub mod ops;
pub mod params;
pub mod query;
pub mod render;
pub mod service;
pub mod similarity;
pub mod store;
#[cfg(feature = "suite")]
pub mod suite;
pub mod templates;
pub mod token;
pub mod tracker;

pub use backend::{Backend, Caller};
pub use ops::{Operation, Verb};
pub use service::Service;
pub use store::{Store, StoreError, StoreTx};
pub use token::{PlainToken, Principal, Scope, ScopeSet};
pub use tracker::Tracker;
