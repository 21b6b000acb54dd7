//! Clients of the remote services: GitHub REST v3 and Jira Cloud REST v3, with credentials
//! from `~/.netrc` or the environment.

pub mod adf;
pub mod github;
pub mod http;
pub mod jira;
pub mod netrc;

pub use http::{RemoteError, Service, to_tool_error};
