//! Every tracker operation's endpoint ([`jility_core::ops`]), through one handler: read the
//! arguments from the path, query and body, then [`execute`] them on the caller's workspace.
//! The MCP tools served at `/mcp` run on [`ApiState`] as their [`Backend`], which calls
//! [`execute`] too, so both surfaces check the same scope, write the same audit entries and
//! publish the same events.

use axum::Extension;
use axum::body::Bytes;
use axum::extract::rejection::BytesRejection;
use axum::extract::{Path, RawQuery, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Json, Response};
use axum::routing::MethodRouter;
use mcp_common::ToolError;
use serde_json::Value;

use super::body::read_body;
use super::{ApiError, ApiState};
use jility_core::backend::{Backend, Caller};
use jility_core::errors;
use jility_core::ops::Described;

use crate::auth::Principal;
use crate::events::Change;
use jility_core::ops::{self, Operation, Touches as _, Verb};

/// The route of `O`: its method, to the generic handler.
pub(super) fn route<O: Operation>() -> MethodRouter<ApiState> {
    let handler = handle::<O>;
    match O::VERB {
        Verb::Get => axum::routing::get(handler),
        Verb::Post => axum::routing::post(handler),
        Verb::Delete => axum::routing::delete(handler),
    }
}

async fn handle<O: Operation>(
    State(state): State<ApiState>,
    Extension(principal): Extension<Principal>,
    segments: Option<Path<Vec<(String, String)>>>,
    RawQuery(query): RawQuery,
    body: Result<Bytes, BytesRejection>,
) -> Result<Response, ApiError> {
    let segments = segments.map(|Path(s)| s).unwrap_or_default();
    let params = match O::VERB {
        Verb::Get => ops::params_from_request::<O>(segments, query.as_deref().unwrap_or(""), None),
        _ => read_body(body).and_then(|body| {
            ops::params_from_request::<O>(segments, query.as_deref().unwrap_or(""), Some(&body))
        }),
    };
    let output = execute::<O>(&state, &principal, params).await?;
    let status = if O::CREATES {
        StatusCode::CREATED
    } else {
        StatusCode::OK
    };
    Ok((status, Json(O::encode(&output)?)).into_response())
}

/// Run `O` with `params` as `principal`, on its workspace only: the scope first, then the
/// arguments, then the tracker. A write (done or refused) is recorded in the audit log, and
/// a done one published as an event; both are in place before the caller is answered.
pub(crate) async fn execute<O: Operation>(
    state: &ApiState,
    principal: &Principal,
    params: Result<O::Params, ToolError>,
) -> Result<O::Output, ToolError> {
    // The arguments as JSON, once: checked for NUL characters, and the ticket they name.
    let args = params
        .as_ref()
        .ok()
        .and_then(|p| serde_json::to_value(p).ok());
    let params = params.and_then(|p| match &args {
        Some(args) if has_nul(args) => Err(ToolError::new(
            jility_core::errors::INVALID_INPUT,
            "The arguments contain a NUL character (\\u0000)",
        )
        .with_hint("Remove the NUL characters; text may hold any other character.")),
        _ => Ok(p),
    });
    let named = args.as_ref().and_then(named_ticket);
    let result = async {
        principal.require(O::SCOPE)?;
        let params = params?;
        let service = state.workspaces.service(principal).await?;
        let actor = principal.token_name.clone();
        service.run(move |t| O::run(t, &actor, params)).await
    }
    .await;
    if !O::writes() {
        return result;
    }
    let mut tickets: Vec<String> = named
        .iter()
        .filter(|n| ops::is_ticket_number(n))
        .cloned()
        .collect();
    let mut main = named;
    let status = match &result {
        Ok(output) => {
            if main.is_none() {
                main = output.main_ticket();
            }
            let touched = output.touched();
            for ticket in touched {
                if !tickets.contains(&ticket) {
                    tickets.push(ticket);
                }
            }
            if O::CREATES { 201 } else { 200 }
        }
        Err(err) => err.class().http_status(),
    };
    if main.is_none() {
        main = tickets.first().cloned();
    }
    let change = result.is_ok().then(|| {
        Change::new(
            principal.workspace_id,
            O::NAME,
            tickets,
            &principal.token_name,
        )
    });
    super::audited_then(state, principal, O::AUDIT, main, None, status, change).await;
    result
}

/// Record a write refused before it ran (a hidden tool called at `/mcp`), as the same
/// refusal over REST is recorded.
async fn audit_refusal(
    state: &ApiState,
    principal: &Principal,
    operation: &'static str,
    ticket: Option<String>,
    err: &ToolError,
) {
    let ticket = ticket
        .map(|t| t.trim().chars().take(64).collect::<String>())
        .filter(|t| !t.is_empty());
    super::audited(
        state,
        principal,
        operation,
        ticket,
        None,
        err.class().http_status(),
    )
    .await;
}

/// Whether a string of `value` holds a NUL character: PostgreSQL text cannot, so such
/// arguments are refused as bad input rather than failing in the database.
fn has_nul(value: &Value) -> bool {
    match value {
        Value::String(s) => s.contains('\0'),
        Value::Array(items) => items.iter().any(has_nul),
        Value::Object(members) => members.iter().any(|(k, v)| k.contains('\0') || has_nul(v)),
        _ => false,
    }
}

/// The ticket the arguments name (`ticket_id`), clipped: for the audit entry of a write
/// that fails before it finds the ticket.
fn named_ticket(args: &Value) -> Option<String> {
    let named = args.get("ticket_id")?.as_str()?.trim();
    (!named.is_empty()).then(|| named.chars().take(64).collect())
}

/// The tools at `/mcp` of `jility serve`: each call runs as the caller whose token the API's
/// authentication found, on its workspace, with its scopes; the tools a token's scopes do not
/// allow are neither listed nor run, and a write refused so is audited as over REST.
impl Backend for ApiState {
    const PER_CALLER: bool = true;

    async fn exec<O: Operation>(
        &self,
        caller: &Caller,
        params: Result<O::Params, ToolError>,
    ) -> Result<O::Output, ToolError> {
        let principal = principal_of(caller)?;
        execute::<O>(self, principal, params).await
    }

    fn allows(&self, caller: &Caller, op: Described) -> bool {
        caller
            .principal
            .as_ref()
            .is_some_and(|principal| principal.allows(op.scope))
    }

    async fn refuse(
        &self,
        caller: &Caller,
        op: Described,
        ticket: Option<String>,
    ) -> Option<ToolError> {
        let principal = match principal_of(caller) {
            Ok(principal) => principal,
            Err(err) => return Some(err),
        };
        let err = principal.require(op.scope).err()?;
        if op.writes {
            audit_refusal(self, principal, op.audit, ticket, &err).await;
        }
        Some(err)
    }
}

/// The caller's principal, which the API's authentication put in the request.
fn principal_of(caller: &Caller) -> Result<&Principal, ToolError> {
    caller.principal.as_ref().ok_or_else(|| {
        ToolError::new(errors::UNAUTHENTICATED, "The request carries no API token")
            .with_hint("Send `Authorization: Bearer jil_live_…` with every request.")
    })
}
