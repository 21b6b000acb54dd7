//! The webhook endpoints (`full_access`: owners, admins and the tokens they mint with it):
//! subscribe, list, change, delete, rotate a secret, send a test event, read a delivery log
//! and redeliver. What is kept and sent is `jility-hooks`'; every write is audited. A
//! secret appears once, in the answer that makes it.

use axum::Extension;
use axum::body::Bytes;
use axum::extract::rejection::BytesRejection;
use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Json, Response};
use jility_hooks::{Change, NewWebhook, Subscriptions, subscriptions as subs, target};
use mcp_common::ToolError;
use serde::Deserialize;

use super::body::{invalid, json_body};
use super::{ApiError, ApiState, audited, status_of};
use crate::auth::{Principal, Scope};

type Answer = Result<Response, ApiError>;

const CREATE_SHAPE: &str = "Send `{\"url\": \"https://…\", \"events\": [\"ticket.created\"], \"filter\": \"label:backend\", \"description\": \"…\"}` (all but url optional).";
const UPDATE_SHAPE: &str =
    "Send any of `{\"url\", \"events\", \"filter\", \"description\", \"enabled\"}`.";

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Create {
    url: String,
    #[serde(default)]
    events: Vec<String>,
    #[serde(default)]
    filter: Option<String>,
    #[serde(default)]
    description: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Update {
    #[serde(default)]
    url: Option<String>,
    #[serde(default)]
    events: Option<Vec<String>>,
    /// `null` or `""` removes the filter.
    #[serde(default, deserialize_with = "present")]
    filter: Option<Option<String>>,
    #[serde(default)]
    description: Option<String>,
    #[serde(default)]
    enabled: Option<bool>,
}

fn present<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<Option<String>>, D::Error> {
    Ok(Some(Option::deserialize(d)?))
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Rotate {
    #[serde(default)]
    keep_previous_hours: Option<i64>,
}

#[derive(Debug, Deserialize)]
pub struct LogQuery {
    #[serde(default)]
    limit: Option<i64>,
    #[serde(default)]
    cursor: Option<String>,
}

fn id_of(text: &str, what: &str) -> Result<i64, ApiError> {
    text.parse::<i64>().map_err(|_| {
        ApiError(
            ToolError::not_found(format!("No {what} '{}'", jility_core::errors::clip(text)))
                .with_hint(
                    "Webhooks and deliveries are named by their numeric id (GET /api/v1/webhooks).",
                ),
        )
    })
}

async fn blocking<T: Send + 'static>(
    work: impl FnOnce() -> Result<T, ToolError> + Send + 'static,
) -> Result<T, ApiError> {
    tokio::task::spawn_blocking(work)
        .await
        .map_err(|e| ToolError::internal(format!("The webhook operation failed: {e}")))?
        .map_err(ApiError)
}

fn store(state: &ApiState) -> Subscriptions {
    Subscriptions::new(&state.db)
}

/// The URL checked: its syntax and scheme, and where it resolves now (also the web
/// settings page's check).
pub async fn checked_url(text: &str) -> Result<String, ToolError> {
    if text.trim().is_empty() {
        return Err(ToolError::new(
            jility_core::errors::INVALID_INPUT,
            "Give the receiver's URL",
        )
        .with_hint("An https address such as https://hooks.example.com/jility."));
    }
    let allow = target::private_allowed();
    let url = target::parse(text, allow)?;
    target::address(&url, allow).await?;
    Ok(url.to_string())
}

/// The filter checked: it reads, and what it names exists, for `principal` (also the web
/// settings page's check). Empty: no filter.
pub async fn checked_filter(
    state: &ApiState,
    principal: &Principal,
    filter: Option<String>,
) -> Result<Option<String>, ToolError> {
    let Some(filter) = filter
        .map(|f| f.trim().to_string())
        .filter(|f| !f.is_empty())
    else {
        return Ok(None);
    };
    subs::check_filter_length(&filter)?;
    let service = state.workspaces.service(principal).await?;
    let (actor, text) = (principal.token_name.clone(), filter.clone());
    // What the filter names is not found: the request is wrong, not its path.
    service
        .run(move |tracker| tracker.check_query(&actor, &text))
        .await
        .map_err(|err| match err.class() {
            mcp_common::ErrorClass::NotFound => ToolError {
                code: jility_core::errors::INVALID_INPUT,
                ..err
            },
            _ => err,
        })?;
    Ok(Some(filter))
}

/// Run `work` as the audited write `operation`; `detail` names what it touched.
async fn write<F, Fut>(
    state: &ApiState,
    principal: &Principal,
    operation: &'static str,
    work: F,
) -> Answer
where
    F: FnOnce() -> Fut,
    Fut: std::future::Future<Output = Result<(Response, String), ApiError>>,
{
    let answer = async {
        principal.require(Scope::FullAccess)?;
        work().await
    }
    .await;
    let (answer, detail) = match answer {
        Ok((response, detail)) => (Ok(response), Some(detail)),
        Err(err) => (Err(err), None),
    };
    audited(
        state,
        principal,
        operation,
        None,
        detail,
        status_of(&answer),
    )
    .await;
    answer
}

/// `POST /api/v1/webhooks`: 201 with the subscription and its `secret`, shown only here.
pub async fn create(
    State(state): State<ApiState>,
    Extension(principal): Extension<Principal>,
    body: Result<Bytes, BytesRejection>,
) -> Answer {
    write(&state, &principal, "webhooks.create", || async {
        let Create {
            url,
            events,
            filter,
            description,
        } = json_body(body, CREATE_SHAPE)?;
        // What is cheap to check first; where the URL resolves last.
        let events = subs::check_events(&events)?;
        let description = subs::check_description(description.as_deref().unwrap_or(""))?;
        let filter = checked_filter(&state, &principal, filter).await?;
        let new = NewWebhook {
            url: checked_url(&url).await?,
            events,
            filter,
            description,
            created_by: principal.token_name.clone(),
        };
        let (store, workspace_id) = (store(&state), principal.workspace_id);
        let (webhook, secret) = blocking(move || store.create(workspace_id, &new)).await?;
        let detail = format!("webhook {}", webhook.id);
        let mut answer = serde_json::to_value(&webhook).unwrap_or_default();
        answer["secret"] = serde_json::Value::String(secret);
        Ok(((StatusCode::CREATED, Json(answer)).into_response(), detail))
    })
    .await
}

/// `GET /api/v1/webhooks`: `{"webhooks": […], "event_types": […]}`.
pub async fn list(
    State(state): State<ApiState>,
    Extension(principal): Extension<Principal>,
) -> Answer {
    principal.require(Scope::FullAccess)?;
    let (store, workspace_id) = (store(&state), principal.workspace_id);
    let webhooks = blocking(move || store.list(workspace_id)).await?;
    Ok(Json(
        serde_json::json!({"webhooks": webhooks, "event_types": jility_hooks::kinds::EVENT_TYPES}),
    )
    .into_response())
}

/// `GET /api/v1/webhooks/{id}`.
pub async fn get(
    State(state): State<ApiState>,
    Extension(principal): Extension<Principal>,
    Path(id): Path<String>,
) -> Answer {
    principal.require(Scope::FullAccess)?;
    let id = id_of(&id, "webhook")?;
    let (store, workspace_id) = (store(&state), principal.workspace_id);
    Ok(Json(blocking(move || store.get(workspace_id, id)).await?).into_response())
}

/// `PATCH /api/v1/webhooks/{id}`: change its URL, events, filter, description, or enable it
/// again (which clears its failures) or disable it.
pub async fn update(
    State(state): State<ApiState>,
    Extension(principal): Extension<Principal>,
    Path(id): Path<String>,
    body: Result<Bytes, BytesRejection>,
) -> Answer {
    write(&state, &principal, "webhooks.update", || async {
        let id = id_of(&id, "webhook")?;
        let Update {
            url,
            events,
            filter,
            description,
            enabled,
        } = json_body(body, UPDATE_SHAPE)?;
        let change = Change {
            url: match url {
                Some(url) => Some(checked_url(&url).await?),
                None => None,
            },
            events: events.as_deref().map(subs::check_events).transpose()?,
            filter: match filter {
                Some(filter) => Some(checked_filter(&state, &principal, filter).await?),
                None => None,
            },
            description: description
                .as_deref()
                .map(subs::check_description)
                .transpose()?,
            enabled,
        };
        let (store, workspace_id) = (store(&state), principal.workspace_id);
        let webhook = blocking(move || store.update(workspace_id, id, &change)).await?;
        Ok((Json(webhook).into_response(), format!("webhook {id}")))
    })
    .await
}

/// `DELETE /api/v1/webhooks/{id}`: the subscription and its log are forgotten.
pub async fn delete(
    State(state): State<ApiState>,
    Extension(principal): Extension<Principal>,
    Path(id): Path<String>,
) -> Answer {
    write(&state, &principal, "webhooks.delete", || async {
        let id = id_of(&id, "webhook")?;
        let (store, workspace_id) = (store(&state), principal.workspace_id);
        let webhook = blocking(move || store.delete(workspace_id, id)).await?;
        Ok((Json(webhook).into_response(), format!("webhook {id}")))
    })
    .await
}

/// `POST /api/v1/webhooks/{id}/rotate-secret` (`{"keep_previous_hours": 24}`, 0 to 168):
/// a new secret, shown only here; the old one signs too until then.
pub async fn rotate(
    State(state): State<ApiState>,
    Extension(principal): Extension<Principal>,
    Path(id): Path<String>,
    body: Result<Bytes, BytesRejection>,
) -> Answer {
    write(&state, &principal, "webhooks.rotate_secret", || async {
        let id = id_of(&id, "webhook")?;
        let keep = match body.as_ref().map(|b| b.is_empty()) {
            Ok(true) => 24,
            _ => json_body::<Rotate>(
                body,
                "Send `{\"keep_previous_hours\": 24}` (0 to 168), or no body.",
            )?
            .keep_previous_hours
            .unwrap_or(24),
        };
        if !(0..=168).contains(&keep) {
            return Err(invalid(
                format!("`keep_previous_hours` must be 0 to 168, not {keep}"),
                "Give how long receivers may still check the old secret, in hours.",
            ));
        }
        let (store, workspace_id) = (store(&state), principal.workspace_id);
        let (webhook, secret) = blocking(move || store.rotate(workspace_id, id, keep)).await?;
        let mut answer = serde_json::to_value(&webhook).unwrap_or_default();
        answer["secret"] = serde_json::Value::String(secret);
        Ok((Json(answer).into_response(), format!("webhook {id}")))
    })
    .await
}

/// `POST /api/v1/webhooks/{id}/test`: a `webhook.test` event, queued: 202 with its delivery.
pub async fn test(
    State(state): State<ApiState>,
    Extension(principal): Extension<Principal>,
    Path(id): Path<String>,
) -> Answer {
    write(&state, &principal, "webhooks.test", || async {
        let id = id_of(&id, "webhook")?;
        let (store, workspace_id, by) = (
            store(&state),
            principal.workspace_id,
            principal.token_name.clone(),
        );
        let delivery = blocking(move || store.test_event(workspace_id, id, &by)).await?;
        Ok((
            (StatusCode::ACCEPTED, Json(delivery)).into_response(),
            format!("webhook {id}"),
        ))
    })
    .await
}

/// `GET /api/v1/webhooks/{id}/deliveries?limit=&cursor=`: newest first, `limit` default 20
/// (at most 100); `next_cursor` while older ones follow.
pub async fn deliveries(
    State(state): State<ApiState>,
    Extension(principal): Extension<Principal>,
    Path(id): Path<String>,
    Query(query): Query<LogQuery>,
) -> Answer {
    principal.require(Scope::FullAccess)?;
    let id = id_of(&id, "webhook")?;
    let before = match query.cursor.as_deref().filter(|c| !c.is_empty()) {
        Some(cursor) => Some(cursor.parse::<i64>().map_err(|_| {
            invalid(
                "The cursor is not one this log gave",
                "Pass the next_cursor of the page before, unchanged.",
            )
        })?),
        None => None,
    };
    let limit = query.limit.unwrap_or(20);
    if !(1..=subs::MAX_PAGE).contains(&limit) {
        return Err(invalid(
            format!("`limit` must be 1 to {}, not {limit}", subs::MAX_PAGE),
            "Ask for fewer deliveries a page.",
        ));
    }
    let (store, workspace_id) = (store(&state), principal.workspace_id);
    let (page, more) = blocking(move || store.deliveries(workspace_id, id, before, limit)).await?;
    let next = more
        .then(|| page.last().map(|d| d.id.to_string()))
        .flatten();
    Ok(Json(serde_json::json!({"deliveries": page, "next_cursor": next})).into_response())
}

/// `POST /api/v1/webhooks/{id}/deliveries/{delivery}/redeliver`: sent again, with the
/// same `webhook-id` and body; 202 with the delivery.
pub async fn redeliver(
    State(state): State<ApiState>,
    Extension(principal): Extension<Principal>,
    Path((id, delivery)): Path<(String, String)>,
) -> Answer {
    write(&state, &principal, "webhooks.redeliver", || async {
        let id = id_of(&id, "webhook")?;
        let delivery = id_of(&delivery, "delivery")?;
        let (store, workspace_id) = (store(&state), principal.workspace_id);
        let found = blocking(move || store.redeliver(workspace_id, id, delivery)).await?;
        Ok((
            (StatusCode::ACCEPTED, Json(found)).into_response(),
            format!("webhook {id}, delivery {delivery}"),
        ))
    })
    .await
}
