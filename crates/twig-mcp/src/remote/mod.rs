//! Clients of the remote services: GitHub REST v3 and Jira Cloud REST v3, with credentials
//! from `~/.netrc` or the environment.

pub mod adf;
pub mod github;
pub mod http;
pub mod jira;
pub mod netrc;

pub use http::{RemoteError, Service, to_tool_error};

/// One page of a list the remote service pages itself, as a list tool answers it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RemotePage<T, P> {
    pub items: Vec<T>,
    /// Where the next page starts; `None` on the last page (or where the list cannot be
    /// followed further, then `exact` is false).
    pub next: Option<P>,
    /// How many items the whole list has: exactly when `exact`, else at least.
    pub total: u64,
    pub exact: bool,
}
