//! `GET /api/v1/whoami` (any scope): the caller's own token as the server sees it: its
//! workspace, name and scopes (never the token itself nor its hash). The bridge asks it at
//! start, so that its `tools/list` shows what the token's scopes allow, as `/mcp` does.

use axum::Extension;
use axum::Json;
use serde::Serialize;

use crate::auth::{Principal, Scope};

/// The answer.
#[derive(Debug, Serialize)]
pub struct WhoAmI {
    pub workspace_id: i64,
    pub workspace: String,
    pub token_id: i64,
    pub token_name: String,
    pub scopes: Vec<Scope>,
    /// RFC 3339, or absent when the token never expires.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub expires_at: Option<String>,
}

pub async fn whoami(Extension(principal): Extension<Principal>) -> Json<WhoAmI> {
    Json(WhoAmI {
        workspace_id: principal.workspace_id,
        workspace: principal.workspace.clone(),
        token_id: principal.token_id,
        token_name: principal.token_name.clone(),
        scopes: principal.scopes.iter().collect(),
        expires_at: principal
            .expires_at
            .map(|at| at.to_rfc3339_opts(chrono::SecondsFormat::Secs, true)),
    })
}
