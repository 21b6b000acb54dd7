//! `GET /api/v1/audit?limit=…&cursor=…` (`full_access`): one page of the audit log of the
//! caller's workspace, newest first: `{"entries": […], "page": {…}}`. The cursor is the id
//! of the page's last entry, sealed with a key of the workspace ([`super::Workspaces`]), so
//! a forged cursor or another workspace's is `invalid_params`. `limit` is read as the other
//! listings read it: not a whole number is `invalid_input`, a whole number outside
//! `1..=200` (negative ones included) `invalid_params`.

use axum::Extension;
use axum::extract::{RawQuery, State};
use axum::response::{IntoResponse, Json, Response};
use mcp_common::{Limit, Page, ToolError};
use serde::Serialize;

use super::{ApiError, ApiState};
use crate::audit::AuditEntry;
use crate::auth::{Principal, Scope};
use jility_core::errors;

/// Pages of 50 entries unless asked otherwise, 200 at most.
pub const AUDIT_LIMIT: Limit = Limit::new(50, 200);

#[derive(Serialize)]
struct Listing {
    entries: Vec<AuditEntry>,
    page: Page,
}

pub async fn list(
    State(state): State<ApiState>,
    Extension(principal): Extension<Principal>,
    RawQuery(query): RawQuery,
) -> Result<Response, ApiError> {
    principal.require(Scope::FullAccess)?;
    let (limit, cursor) = params(query.as_deref().unwrap_or_default())?;
    let limit = page_size(limit)?;
    let workspace_id = principal.workspace_id;
    let cursors = state.workspaces.audit_cursors(workspace_id);
    let before: Option<i64> = cursors.start(cursor.as_deref())?;
    let audit = state.audit.clone();
    let page = tokio::task::spawn_blocking(move || audit.list(workspace_id, limit, before))
        .await
        .map_err(|e| ToolError::internal(format!("Reading the audit log failed: {e}")))??;
    let next = page
        .more
        .then(|| page.entries.last().map(|last| cursors.encode(&last.id)))
        .flatten();
    let page_info = if page.total_exact {
        Page::new(page.total, next)
    } else {
        Page::at_least(page.total, next)
    };
    Ok(Json(Listing {
        entries: page.entries,
        page: page_info,
    })
    .into_response())
}

/// The page size for a requested `limit`, with the codes and words of the tickets' listing
/// (`jility_core`'s tracker): `invalid_params` outside `1..=max`, zero and negatives included.
fn page_size(requested: Option<i64>) -> Result<usize, ToolError> {
    match requested {
        Some(n) if n < 1 => Err(ToolError::invalid_params(format!(
            "limit {n} is out of range: give 1 to {}",
            AUDIT_LIMIT.max
        ))
        .with_hint(format!(
            "Omit limit for pages of {}, or page with next_cursor.",
            AUDIT_LIMIT.default
        ))),
        other => AUDIT_LIMIT.resolve(other.map(i64::unsigned_abs)),
    }
}

fn params(query: &str) -> Result<(Option<i64>, Option<String>), ApiError> {
    let invalid = |message: String, hint: &str| {
        ApiError(ToolError::new(errors::INVALID_INPUT, message).with_hint(hint))
    };
    let mut limit = None;
    let mut cursor = None;
    for (name, value) in form_urlencoded::parse(query.as_bytes()) {
        match name.as_ref() {
            "limit" => {
                limit = Some(value.trim().parse::<i64>().map_err(|_| {
                    invalid(
                        "The query parameter `limit` must be a whole number".into(),
                        "Give `limit` as a number, e.g. `limit=20`.",
                    )
                })?);
            }
            "cursor" => cursor = Some(value.into_owned()),
            other => {
                let shown: String = other.chars().take(100).collect();
                return Err(invalid(
                    format!("Unknown query parameter `{shown}`"),
                    "The parameters are `limit` and `cursor`.",
                ));
            }
        }
    }
    Ok((limit, cursor))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parameters_parse() {
        let (limit, cursor) = params("limit=2&cursor=abc").unwrap_or_default();
        assert_eq!(limit, Some(2));
        assert_eq!(cursor.as_deref(), Some("abc"));
        assert!(params("limit=x").is_err());
        assert!(params("bogus=1").is_err());
        let negative = params("limit=-1")
            .ok()
            .and_then(|(limit, _)| page_size(limit).err());
        assert_eq!(
            negative.map(|e| e.code),
            Some(mcp_common::codes::INVALID_PARAMS)
        );
    }
}
