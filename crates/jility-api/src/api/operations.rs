//! Every tracker operation's endpoint ([`jility_core::ops`]), through one handler: read the
//! arguments from the path, query and body, then [`execute`] them on the caller's workspace.
//! The MCP tools served at `/mcp` run on [`ApiState`] as their [`Backend`], which calls
//! [`execute`] too, so both surfaces check the same scope, write the same audit entries and
//! publish the same events.

use axum::Extension;
use axum::body::Bytes;
use axum::extract::rejection::BytesRejection;
use axum::extract::{Path, RawQuery, State};
use axum::http::{HeaderMap, StatusCode, Uri};
use axum::response::{IntoResponse, Json, Response};
use axum::routing::MethodRouter;
use mcp_common::ToolError;
use serde_json::Value;

use super::body::read_body;
use super::idempotency;
use super::{ApiError, ApiState};
use jility_core::backend::{Backend, Caller};
use jility_core::errors;
use jility_core::ops::Described;

use crate::auth::Principal;
use crate::events::Change;
use crate::store::PgStore;
use jility_core::ops::{self, Operation, Touches as _, Verb};
use jility_core::tracker::Tracker;

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
    uri: Uri,
    headers: HeaderMap,
    body: Result<Bytes, BytesRejection>,
) -> Result<Response, ApiError> {
    let segments = segments.map(|Path(s)| s).unwrap_or_default();
    let query = query.unwrap_or_default();
    // A write may carry an idempotency key; a malformed one is refused (and audited) as
    // bad arguments are.
    let key = if O::writes() {
        idempotency::key_of(&headers)
    } else {
        Ok(None)
    };
    let fingerprint = match (&key, &body) {
        (Ok(Some(_)), Ok(bytes)) => Some(idempotency::fingerprint(
            O::VERB.as_str(),
            uri.path(),
            &query,
            bytes,
        )),
        _ => None,
    };
    let params = match O::VERB {
        Verb::Get => ops::params_from_request::<O>(segments, &query, None),
        _ => read_body(body)
            .and_then(|body| ops::params_from_request::<O>(segments, &query, Some(&body))),
    };
    let status = if O::CREATES {
        StatusCode::CREATED
    } else {
        StatusCode::OK
    };
    let (params, keyed) = match key {
        Err(err) => (Err(err), None),
        Ok(key) => (params, key.zip(fingerprint)),
    };
    let Some((key, fingerprint)) = keyed else {
        let output = execute::<O>(&state, &principal, params).await?;
        return Ok((status, Json(O::encode(&output)?)).into_response());
    };
    let keyed = idempotency::Keyed {
        key,
        token_id: principal.token_id,
        fingerprint,
    };
    let workspace_id = principal.workspace_id;
    let answer = execute_as::<O, Keyed<O::Output>>(
        &state,
        &principal,
        params,
        move |t, actor, params| run_keyed::<O>(t, &actor, params, workspace_id, &keyed, status),
        |answer| match answer {
            Keyed::Fresh { output, .. } => Some(output),
            Keyed::Replay(_) => None,
        },
    )
    .await?;
    Ok(match answer {
        Keyed::Fresh { answer, .. } => (
            status,
            [(axum::http::header::CONTENT_TYPE, "application/json")],
            answer.body,
        )
            .into_response(),
        Keyed::Replay(recorded) => recorded.replay(),
    })
}

/// The answer to a request with an idempotency key.
enum Keyed<Out> {
    /// Run now: the output, and the answer recorded with the key in the write's transaction.
    Fresh {
        output: Out,
        answer: idempotency::Recorded,
    },
    /// The first answer to the key.
    Replay(idempotency::Recorded),
}

/// On the blocking thread of the call: the key's first answer if it has one; else run `O`
/// with the store's commit held, encode the answer, and commit it with the key's row in
/// the same transaction (or, when another request took the key meanwhile, roll the write
/// back and answer that one's answer).
fn run_keyed<O: Operation>(
    t: &mut Tracker<PgStore>,
    actor: &str,
    params: O::Params,
    workspace_id: i64,
    keyed: &idempotency::Keyed,
    status: StatusCode,
) -> Result<Keyed<O::Output>, ToolError> {
    let db = t.store().database().clone();
    if let Some(first) = db.with_client(|c| idempotency::lookup(c, workspace_id, keyed))? {
        return Ok(Keyed::Replay(first));
    }
    t.store().hold_next_write();
    let answered = O::run(t, actor, params).and_then(|output| {
        let body = O::encode(&output)?.to_string();
        Ok((output, body))
    });
    let (output, body) = match answered {
        Ok(answered) => answered,
        Err(err) => {
            t.store().release_held();
            return Err(err);
        }
    };
    let answer = idempotency::Recorded {
        status: status.as_u16(),
        body,
    };
    let recorded = match t
        .store()
        .commit_held(|c, ws| idempotency::record(c, ws, keyed, &answer))
    {
        Some(recorded) => recorded?,
        // The operation wrote nothing (no transaction to join): the key alone.
        None => db.with_client(|c| {
            idempotency::record(c, workspace_id, keyed, &answer).map(|(outcome, _)| outcome)
        })?,
    };
    match recorded {
        idempotency::Outcome::Recorded => Ok(Keyed::Fresh { output, answer }),
        idempotency::Outcome::Taken(first) => first.map(Keyed::Replay),
    }
}

/// Run `O` with `params` as `principal`, on its workspace only: the scope first, then the
/// arguments, then the tracker. A write (done or refused) is recorded in the audit log, and
/// a done one published as an event; both are in place before the caller is answered.
pub(crate) async fn execute<O: Operation>(
    state: &ApiState,
    principal: &Principal,
    params: Result<O::Params, ToolError>,
) -> Result<O::Output, ToolError> {
    if O::WAITS && !O::writes() {
        return awaited::<O>(state, principal, params).await;
    }
    execute_as::<O, O::Output>(
        state,
        principal,
        params,
        |t, actor, params| O::run(t, &actor, params),
        |output| Some(output),
    )
    .await
}

/// [`execute`] of a read whose only wait is the store's ([`Operation::WAITS`]: a ticket,
/// whole): awaited on the request's own task, no blocking thread taken or woken. The same
/// checks in the same order: the scope, the arguments, the workspace.
async fn awaited<O: Operation>(
    state: &ApiState,
    principal: &Principal,
    params: Result<O::Params, ToolError>,
) -> Result<O::Output, ToolError> {
    let work = async {
        principal.require(O::SCOPE)?;
        let params = checked(params).0?;
        let mut tracker = state.workspaces.service(principal).await?.tracker();
        match O::waiting(&mut tracker, &params) {
            Some(answer) => answer.await,
            None => Err(ToolError::internal(format!(
                "{} has no answer to await",
                O::NAME
            ))),
        }
    };
    let work = crate::store::as_caller_async(principal.token_id, work);
    crate::reach::bounded(state.db.health(), None, work)
        .await
        .unwrap_or_else(|stalled| Err(stalled.into()))
}

/// `params` as JSON (once: for the NUL check and the ticket they name), refused when they
/// hold a NUL character.
fn checked<P: serde::Serialize>(
    params: Result<P, ToolError>,
) -> (Result<P, ToolError>, Option<Value>) {
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
    (params, args)
}

/// [`execute`], the tracker's part done by `run` (on a blocking thread), whose result says
/// through `wrote` what `O` answered, or nothing when it wrote nothing (a replay: neither
/// audited nor published).
async fn execute_as<O: Operation, T: Send + 'static>(
    state: &ApiState,
    principal: &Principal,
    params: Result<O::Params, ToolError>,
    run: impl FnOnce(&mut Tracker<PgStore>, String, O::Params) -> Result<T, ToolError> + Send + 'static,
    wrote: fn(&T) -> Option<&O::Output>,
) -> Result<T, ToolError> {
    let (params, args) = checked(params);
    let named = args.as_ref().and_then(named_ticket);
    // Given up on when the database stops answering: the work left on its blocking thread
    // then commits nothing ([`crate::reach::Fate`]).
    let fate = std::sync::Arc::new(crate::reach::Fate::default());
    let work = async {
        principal.require(O::SCOPE)?;
        let params = params?;
        let service = state.workspaces.service(principal).await?;
        let actor = principal.token_name.clone();
        let may_read = principal.allows(jility_core::token::Scope::TicketsRead);
        let fate = fate.clone();
        // Its reads may go to standbys that replayed its token's writes.
        let caller = principal.token_id;
        service
            .run(move |t| {
                t.set_may_read(may_read);
                crate::reach::with_fate(fate, || {
                    crate::store::as_caller(caller, || run(t, actor, params))
                })
            })
            .await
    };
    // What the store reads on this task (a page's whole tickets) is the caller's too.
    let work = crate::store::as_caller_async(principal.token_id, work);
    let result = crate::reach::bounded(state.db.health(), Some(&fate), work)
        .await
        .unwrap_or_else(|stalled| Err(stalled.into()));
    if !O::writes() {
        return result;
    }
    let mut tickets: Vec<String> = named
        .iter()
        .filter(|n| ops::is_ticket_number(n))
        .cloned()
        .collect();
    let mut main = named;
    let mut announce = true;
    let status = match result.as_ref().map(wrote) {
        Ok(None) => return result,
        Ok(Some(output)) => {
            announce = output.changed_tickets();
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
    let change = (result.is_ok() && announce).then(|| {
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
        let started = std::time::Instant::now();
        let answer = match super::traces::tool_call(O::NAME, caller.trace_parent.as_deref()) {
            Some(span) => {
                use tracing::Instrument as _;
                let answer = execute::<O>(self, principal, params)
                    .instrument(span.clone())
                    .await;
                if let Err(err) = &answer {
                    span.record("error.type", err.code.as_str());
                }
                answer
            }
            None => execute::<O>(self, principal, params).await,
        };
        super::metrics::tool_call(O::NAME, started, answer.is_ok());
        answer
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
