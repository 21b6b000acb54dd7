//! How the webhook endpoints are described in the API's OpenAPI document: their paths and
//! the schemas of what they answer, which `jility-api` merges into the document it serves.
//! Error answers refer to the document's shared responses by their names.

use serde_json::{Value, json};

use crate::kinds::EVENT_TYPES;
use crate::subscriptions::MAX_PAGE;

/// Where the document keeps its schemas.
const SCHEMAS: &str = "#/components/schemas/";

fn schema(name: &str) -> Value {
    json!({"$ref": format!("{SCHEMAS}{name}")})
}

/// One operation: needs `full_access`; answers `status` with `answer`, or one of `errors`
/// (the document's shared responses, by name).
fn operation(
    id: &str,
    summary: &str,
    status: &str,
    answer: Value,
    errors: &[&str],
    body: Option<Value>,
) -> Value {
    let mut responses = serde_json::Map::new();
    responses.insert(
        status.to_string(),
        json!({"description": summary, "content": {"application/json": {"schema": answer}}}),
    );
    for (code, name) in [
        ("400", "InvalidArguments"),
        ("401", "Unauthenticated"),
        ("403", "PermissionDenied"),
        ("404", "NotFound"),
        ("409", "Conflict"),
        ("429", "RateLimited"),
        ("500", "Internal"),
        ("503", "Unavailable"),
    ] {
        if errors.contains(&name)
            || [
                "Unauthenticated",
                "PermissionDenied",
                "RateLimited",
                "Internal",
                "Unavailable",
            ]
            .contains(&name)
        {
            responses.insert(
                code.into(),
                json!({"$ref": format!("#/components/responses/{name}")}),
            );
        }
    }
    let mut op = json!({
        "operationId": id,
        "summary": summary,
        "tags": ["webhooks"],
        "x-required-scope": "full_access",
        "security": [{"bearer": []}],
        "responses": responses,
    });
    if let Some(body) = body {
        op["requestBody"] =
            json!({"required": true, "content": {"application/json": {"schema": body}}});
    }
    op
}

fn with_parameters(mut op: Value, names: &[&str]) -> Value {
    if !names.is_empty() {
        op["parameters"] = Value::Array(
            names
                .iter()
                .map(|name| json!({"name": name, "in": "path", "required": true, "schema": {"type": "integer"}}))
                .collect(),
        );
    }
    op
}

/// The paths (relative to `/api/v1`), each method's operation.
pub fn paths() -> Vec<(&'static str, &'static str, Value)> {
    let events = json!({"type": "array", "items": {"type": "string", "enum": EVENT_TYPES}, "description": "The event types wanted; empty or `[\"*\"]`: all."});
    let create = json!({
        "type": "object",
        "required": ["url"],
        "additionalProperties": false,
        "properties": {
            "url": {"type": "string", "description": "https (http only to loopback, and only with JILITY_WEBHOOKS_ALLOW_PRIVATE=1); not on a private, loopback or link-local address unless the operator allows it."},
            "events": events,
            "filter": {"type": "string", "description": "A query in the query language a ticket must match (as `jility_search_tickets` reads it)."},
            "description": {"type": "string", "maxLength": 200},
        },
    });
    let update = json!({
        "type": "object",
        "additionalProperties": false,
        "properties": {
            "url": {"type": "string"},
            "events": events,
            "filter": {"type": ["string", "null"], "description": "`null` or empty: no filter."},
            "description": {"type": "string", "maxLength": 200},
            "enabled": {"type": "boolean", "description": "`true` enables it again and forgets its failures."},
        },
    });
    let rotate = json!({
        "type": "object",
        "additionalProperties": false,
        "properties": {"keep_previous_hours": {"type": "integer", "minimum": 0, "maximum": 168, "default": 24, "description": "How long the old secret still signs (a second signature)."}},
    });
    let list = json!({
        "type": "object",
        "required": ["webhooks", "event_types"],
        "properties": {
            "webhooks": {"type": "array", "items": schema("Webhook")},
            "event_types": {"type": "array", "items": {"type": "string"}},
        },
    });
    let log = json!({
        "type": "object",
        "required": ["deliveries", "next_cursor"],
        "properties": {
            "deliveries": {"type": "array", "items": schema("WebhookDelivery")},
            "next_cursor": {"type": ["string", "null"], "description": "Pass as `cursor` for older deliveries; null at the oldest."},
        },
    });
    let mut log_op = with_parameters(
        operation(
            "list_webhook_deliveries",
            "A subscription's deliveries, newest first",
            "200",
            log,
            &["NotFound", "InvalidArguments"],
            None,
        ),
        &["id"],
    );
    if let Some(p) = log_op["parameters"].as_array_mut() {
        p.push(json!({"name": "limit", "in": "query", "schema": {"type": "integer", "minimum": 1, "maximum": MAX_PAGE, "default": 20}}));
        p.push(json!({"name": "cursor", "in": "query", "schema": {"type": "string"}}));
    }
    vec![
        (
            "/webhooks",
            "post",
            with_parameters(
                operation(
                    "create_webhook",
                    "Subscribe a URL to the workspace's events; its secret appears only here",
                    "201",
                    schema("WebhookWithSecret"),
                    &["InvalidArguments", "Conflict"],
                    Some(create),
                ),
                &[],
            ),
        ),
        (
            "/webhooks",
            "get",
            with_parameters(
                operation(
                    "list_webhooks",
                    "The workspace's subscriptions, oldest first",
                    "200",
                    list,
                    &[],
                    None,
                ),
                &[],
            ),
        ),
        (
            "/webhooks/{id}",
            "get",
            with_parameters(
                operation(
                    "get_webhook",
                    "A subscription",
                    "200",
                    schema("Webhook"),
                    &["NotFound"],
                    None,
                ),
                &["id"],
            ),
        ),
        (
            "/webhooks/{id}",
            "patch",
            with_parameters(
                operation(
                    "update_webhook",
                    "Change a subscription, or enable it again",
                    "200",
                    schema("Webhook"),
                    &["NotFound", "InvalidArguments"],
                    Some(update),
                ),
                &["id"],
            ),
        ),
        (
            "/webhooks/{id}",
            "delete",
            with_parameters(
                operation(
                    "delete_webhook",
                    "Forget a subscription and its deliveries",
                    "200",
                    schema("Webhook"),
                    &["NotFound"],
                    None,
                ),
                &["id"],
            ),
        ),
        (
            "/webhooks/{id}/rotate-secret",
            "post",
            with_parameters(
                operation(
                    "rotate_webhook_secret",
                    "A new secret, shown only here; the old one signs too for a while",
                    "200",
                    schema("WebhookWithSecret"),
                    &["NotFound", "InvalidArguments"],
                    Some(rotate),
                ),
                &["id"],
            ),
        ),
        (
            "/webhooks/{id}/test",
            "post",
            with_parameters(
                operation(
                    "test_webhook",
                    "Queue a `webhook.test` event",
                    "202",
                    schema("WebhookDelivery"),
                    &["NotFound"],
                    None,
                ),
                &["id"],
            ),
        ),
        ("/webhooks/{id}/deliveries", "get", log_op),
        (
            "/webhooks/{id}/deliveries/{delivery}/redeliver",
            "post",
            with_parameters(
                operation(
                    "redeliver_webhook",
                    "Send a delivery again, with its id and body",
                    "202",
                    schema("WebhookDelivery"),
                    &["NotFound"],
                    None,
                ),
                &["id", "delivery"],
            ),
        ),
    ]
}

/// The schemas the paths refer to.
pub fn schemas() -> Vec<(&'static str, Value)> {
    let text = json!({"type": "string"});
    let webhook = json!({
        "type": "object",
        "description": "A subscription as the API shows it: never its secret.",
        "required": ["id", "url", "events", "description", "enabled", "pending_deliveries", "created_by", "created_at"],
        "properties": {
            "id": {"type": "integer"},
            "url": text,
            "events": {"type": "array", "items": {"type": "string"}},
            "filter": text,
            "description": text,
            "enabled": {"type": "boolean"},
            "disabled_reason": text,
            "failing_since": {"type": "string", "format": "date-time"},
            "previous_secret_until": {"type": "string", "format": "date-time"},
            "pending_deliveries": {"type": "integer"},
            "created_by": text,
            "created_at": {"type": "string", "format": "date-time"},
        },
    });
    let mut with_secret = webhook.clone();
    with_secret["description"] =
        json!("The subscription and its secret (`whsec_…`), shown only in this answer.");
    with_secret["properties"]["secret"] = text.clone();
    if let Some(required) = with_secret["required"].as_array_mut() {
        required.push(json!("secret"));
    }
    let delivery = json!({
        "type": "object",
        "required": ["id", "webhook_id", "message_id", "event_type", "state", "attempts", "created_at"],
        "properties": {
            "id": {"type": "integer"},
            "webhook_id": {"type": "integer"},
            "message_id": {"type": "string", "description": "`webhook-id`: the same on every attempt and redelivery."},
            "event_type": text,
            "ticket": text,
            "state": {"type": "string", "enum": ["pending", "delivered", "failed"]},
            "attempts": {"type": "integer"},
            "created_at": {"type": "string", "format": "date-time"},
            "last_attempt_at": {"type": "string", "format": "date-time"},
            "next_attempt_at": {"type": "string", "format": "date-time"},
            "response_status": {"type": "integer"},
            "response_excerpt": {"type": "string", "description": "The first bytes of the receiver's answer."},
            "error": text,
            "duration_ms": {"type": "integer"},
            "delivered_at": {"type": "string", "format": "date-time"},
        },
    });
    vec![
        ("Webhook", webhook),
        ("WebhookWithSecret", with_secret),
        ("WebhookDelivery", delivery),
    ]
}
