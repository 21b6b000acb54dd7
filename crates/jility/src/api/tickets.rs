//! The ticket endpoints. Each checks its scope, then runs one tracker operation on the
//! principal's workspace, off the async threads ([`crate::service::Service`]).

use axum::Extension;
use axum::body::Bytes;
use axum::extract::rejection::BytesRejection;
use axum::extract::{Path, RawQuery, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Json, Response};
use serde::Deserialize;

use super::body::{clip, invalid, json_body};
use super::{ApiError, ApiState, audited, paged_json, status_of};
use crate::auth::{Principal, Scope};
use crate::params::{AddComment, CreateTicket, ListTickets, SearchTickets, StatusName};

type Answer = Result<Response, ApiError>;

const CREATE_SHAPE: &str = "Send a JSON object with the create-ticket fields, e.g. `{\"title\": \"…\", \"description\": \"…\", \"labels\": [\"bug\"]}` (Content-Type: application/json).";
const COMMENT_SHAPE: &str = "Send `{\"content\": \"…\"}` (Content-Type: application/json).";

/// `POST /api/v1/tickets` (`tickets:write`): the create-ticket parameters; 201 with the
/// created ticket.
pub async fn create(
    State(state): State<ApiState>,
    Extension(principal): Extension<Principal>,
    body: Result<Bytes, BytesRejection>,
) -> Answer {
    let mut ticket = None;
    let answer = async {
        principal.require(Scope::TicketsWrite)?;
        let params: CreateTicket = json_body(body, CREATE_SHAPE)?;
        let service = state.workspaces.service(&principal).await?;
        let actor = principal.token_name.clone();
        let created = service
            .run(move |t| t.create_ticket(&actor, params))
            .await?;
        ticket = Some(created.ticket.number.clone());
        Ok((StatusCode::CREATED, Json(created)).into_response())
    }
    .await;
    audited(
        &state,
        &principal,
        "tickets.create",
        ticket,
        None,
        status_of(&answer),
    )
    .await;
    answer
}

/// `GET /api/v1/tickets/{KEY-N}` (`tickets:read`): the ticket with its context.
pub async fn get(
    State(state): State<ApiState>,
    Extension(principal): Extension<Principal>,
    Path(ticket): Path<String>,
) -> Answer {
    principal.require(Scope::TicketsRead)?;
    let service = state.workspaces.service(&principal).await?;
    let detail = service.run(move |t| t.get_ticket(&ticket)).await?;
    Ok(Json(detail).into_response())
}

/// `GET /api/v1/tickets?status=…&assignee=…&label=…&parent_id=…&epic_id=…&unassigned=…&limit=…&cursor=…`
/// (`tickets:read`): one page of the listing. `status` and `label` may repeat or list
/// several values separated by commas.
pub async fn list(
    State(state): State<ApiState>,
    Extension(principal): Extension<Principal>,
    RawQuery(query): RawQuery,
) -> Answer {
    principal.require(Scope::TicketsRead)?;
    let params = list_params(query.as_deref().unwrap_or_default())?;
    let service = state.workspaces.service(&principal).await?;
    let paged = service.run(move |t| t.list(&params)).await?;
    Ok(Json(paged_json(paged)?).into_response())
}

/// `GET /api/v1/search?q=…&limit=…&cursor=…` (`tickets:read`): one page of hits.
pub async fn search(
    State(state): State<ApiState>,
    Extension(principal): Extension<Principal>,
    RawQuery(query): RawQuery,
) -> Answer {
    principal.require(Scope::TicketsRead)?;
    let params = search_params(query.as_deref().unwrap_or_default())?;
    let service = state.workspaces.service(&principal).await?;
    let paged = service.run(move |t| t.search(&params)).await?;
    Ok(Json(paged_json(paged)?).into_response())
}

/// The body of `POST /api/v1/tickets/{KEY-N}/comments`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct NewComment {
    content: String,
}

/// `POST /api/v1/tickets/{KEY-N}/comments` (`comments:write`): `{"content": "…"}`; 201.
pub async fn comment(
    State(state): State<ApiState>,
    Extension(principal): Extension<Principal>,
    Path(ticket): Path<String>,
    body: Result<Bytes, BytesRejection>,
) -> Answer {
    let named = ticket.clone();
    let answer = async {
        principal.require(Scope::CommentsWrite)?;
        let NewComment { content } = json_body(body, COMMENT_SHAPE)?;
        let service = state.workspaces.service(&principal).await?;
        let actor = principal.token_name.clone();
        let added = service
            .run(move |t| {
                t.add_comment(
                    &actor,
                    AddComment {
                        ticket_id: ticket,
                        content,
                    },
                )
            })
            .await?;
        Ok((StatusCode::CREATED, Json(added)).into_response())
    }
    .await;
    let ticket = audit_ticket(&named);
    audited(
        &state,
        &principal,
        "tickets.comment",
        ticket,
        None,
        status_of(&answer),
    )
    .await;
    answer
}

/// `DELETE /api/v1/tickets/{KEY-N}` (`tickets:delete`): a soft delete; the ticket leaves
/// every view, its rows stay.
pub async fn delete(
    State(state): State<ApiState>,
    Extension(principal): Extension<Principal>,
    Path(ticket): Path<String>,
) -> Answer {
    let named = ticket.clone();
    let answer = async {
        principal.require(Scope::TicketsDelete)?;
        let service = state.workspaces.service(&principal).await?;
        let actor = principal.token_name.clone();
        let deleted = service.run(move |t| t.delete(&actor, &ticket)).await?;
        Ok(Json(deleted).into_response())
    }
    .await;
    let ticket = audit_ticket(&named);
    audited(
        &state,
        &principal,
        "tickets.delete",
        ticket,
        None,
        status_of(&answer),
    )
    .await;
    answer
}

/// The ticket an audit entry names: as the caller named it, clipped (it comes from a URL).
fn audit_ticket(named: &str) -> Option<String> {
    let named = named.trim();
    (!named.is_empty()).then(|| named.chars().take(64).collect())
}

fn query_pairs(query: &str) -> impl Iterator<Item = (String, String)> + '_ {
    form_urlencoded::parse(query.as_bytes()).map(|(k, v)| (k.into_owned(), v.into_owned()))
}

fn several(value: &str) -> impl Iterator<Item = String> + '_ {
    value
        .split(',')
        .map(str::trim)
        .filter(|v| !v.is_empty())
        .map(str::to_string)
}

fn number(name: &str, value: &str) -> Result<i64, ApiError> {
    value.trim().parse().map_err(|_| {
        invalid(
            format!("The query parameter `{name}` must be a whole number"),
            format!("Give `{name}` as a number, e.g. `{name}=20`."),
        )
    })
}

fn boolean(name: &str, value: &str) -> Result<bool, ApiError> {
    match value.trim() {
        "" | "true" | "1" => Ok(true),
        "false" | "0" => Ok(false),
        _ => Err(invalid(
            format!("The query parameter `{name}` must be true or false"),
            format!("Give `{name}=true` or leave it out."),
        )),
    }
}

fn unknown_parameter(name: &str, known: &str) -> ApiError {
    invalid(
        format!("Unknown query parameter `{}`", clip(name)),
        format!("The parameters are {known}."),
    )
}

fn list_params(query: &str) -> Result<ListTickets, ApiError> {
    const KNOWN: &str =
        "`status`, `assignee`, `label`, `parent_id`, `epic_id`, `unassigned`, `limit` and `cursor`";
    let mut params = ListTickets::default();
    for (name, value) in query_pairs(query) {
        match name.as_str() {
            "status" => params.status.extend(several(&value).map(StatusName)),
            "assignee" => params.assignee = Some(value),
            "label" | "labels" => params.labels.extend(several(&value)),
            "parent_id" | "parent" => params.parent_id = Some(value),
            "epic_id" | "epic" => params.epic_id = Some(value),
            "unassigned" => params.unassigned = boolean(&name, &value)?,
            "limit" => params.limit = Some(number(&name, &value)?),
            "cursor" => params.cursor = Some(value),
            _ => return Err(unknown_parameter(&name, KNOWN)),
        }
    }
    Ok(params)
}

fn search_params(query: &str) -> Result<SearchTickets, ApiError> {
    const KNOWN: &str = "`q`, `limit` and `cursor`";
    let mut params = SearchTickets {
        query: String::new(),
        limit: None,
        cursor: None,
    };
    let mut found = false;
    for (name, value) in query_pairs(query) {
        match name.as_str() {
            "q" | "query" => {
                params.query = value;
                found = true;
            }
            "limit" => params.limit = Some(number(&name, &value)?),
            "cursor" => params.cursor = Some(value),
            _ => return Err(unknown_parameter(&name, KNOWN)),
        }
    }
    if !found {
        return Err(invalid(
            "A search needs the query parameter `q`",
            "Search with `/api/v1/search?q=words`.",
        ));
    }
    Ok(params)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::body::MAX_ERROR_CHARS;

    #[test]
    fn list_filters_parse_from_the_query() {
        let p = list_params(
            "status=todo,review&status=done&label=a&labels=b%20c&assignee=al&unassigned&limit=5&cursor=x",
        )
        .unwrap();
        assert_eq!(
            p.status,
            vec![
                StatusName("todo".into()),
                StatusName("review".into()),
                StatusName("done".into())
            ]
        );
        assert_eq!(p.labels, vec!["a".to_string(), "b c".to_string()]);
        assert_eq!(p.assignee.as_deref(), Some("al"));
        assert!(p.unassigned);
        assert_eq!(p.limit, Some(5));
        assert_eq!(p.cursor.as_deref(), Some("x"));
        assert!(list_params("bogus=1").is_err());
        assert!(list_params("limit=many").is_err());
    }

    #[test]
    fn search_needs_q() {
        assert!(search_params("").is_err());
        let p = search_params("q=%22exact%20phrase%22&limit=3").unwrap();
        assert_eq!(p.query, "\"exact phrase\"");
        assert_eq!(p.limit, Some(3));
    }

    #[test]
    fn parse_errors_are_clipped() {
        let huge = format!("{{\"title\": 1, \"{}\": 2}}", "x".repeat(10_000));
        let err = json_body::<CreateTicket>(Ok(Bytes::from(huge)), CREATE_SHAPE).unwrap_err();
        assert!(err.0.message.chars().count() < MAX_ERROR_CHARS + 100);
    }
}
