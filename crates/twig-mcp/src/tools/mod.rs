//! Tool logic, one module per context: local twig/git state, GitHub, Jira. Each function
//! takes the shared context and returns the typed result or a structured error; the protocol
//! surface (`server.rs`) only wires them to MCP.

pub mod github;
pub mod health;
pub mod jira;
pub mod local;
