//! `jility webhook …`: a cloud workspace's webhooks through the API at `JILITY_API_URL`
//! (a `full_access` token): subscribe, list, change, delete, rotate a secret, send a test
//! event, read the delivery log and redeliver.

use clap::Subcommand;
use jility_bridge::client::ApiClient;
use mcp_common::ToolError;
use reqwest::Method;
use serde_json::{Value, json};

use super::human::{AnsiColor, Painter, views};
use super::{Out, print};

#[derive(Debug, Subcommand)]
pub enum WebhookCommand {
    /// Subscribe a URL to the workspace's events; its signing secret is shown only this once.
    Create {
        /// Where to send: https (http only to this machine, with JILITY_WEBHOOKS_ALLOW_PRIVATE=1).
        url: String,
        /// An event type to send (repeat for several; default all): ticket.created,
        /// ticket.updated, ticket.status_changed, ticket.assigned, ticket.commented,
        /// ticket.description_edited, ticket.dependency_changed, ticket.sprint_changed,
        /// ticket.epic_changed, ticket.deleted.
        #[arg(long = "event", value_name = "TYPE")]
        events: Vec<String>,
        /// Only tickets this query keeps, e.g. "label:backend status:review".
        #[arg(long, value_name = "QUERY", allow_hyphen_values = true)]
        filter: Option<String>,
        /// What receives the events, in a few words.
        #[arg(long, allow_hyphen_values = true)]
        description: Option<String>,
    },
    /// List the workspace's webhooks (never their secrets).
    List,
    /// Change a webhook: its URL, events, filter or description; enable or disable it.
    Update {
        /// The webhook's id (see `jility webhook list`).
        id: i64,
        /// A new URL.
        #[arg(long)]
        url: Option<String>,
        /// The event types to send instead (repeat for several; `*` for all).
        #[arg(long = "event", value_name = "TYPE")]
        events: Vec<String>,
        /// A new filter in the query language.
        #[arg(
            long,
            value_name = "QUERY",
            allow_hyphen_values = true,
            conflicts_with = "no_filter"
        )]
        filter: Option<String>,
        /// Remove the filter: every ticket's events.
        #[arg(long)]
        no_filter: bool,
        /// A new description.
        #[arg(long, allow_hyphen_values = true)]
        description: Option<String>,
        /// Enable it again (its failures are forgotten).
        #[arg(long, conflicts_with = "disable")]
        enable: bool,
        /// Stop sending to it (what it misses waits until it is enabled).
        #[arg(long)]
        disable: bool,
    },
    /// Delete a webhook and its delivery log.
    Delete {
        /// The webhook's id.
        id: i64,
    },
    /// Give a webhook a new secret (shown only this once); the old one still signs for a while.
    RotateSecret {
        /// The webhook's id.
        id: i64,
        /// Hours the old secret still signs beside the new one (0 to 168; default 24).
        #[arg(long, value_name = "HOURS")]
        keep_hours: Option<i64>,
    },
    /// Send a webhook.test event to a webhook.
    Test {
        /// The webhook's id.
        id: i64,
    },
    /// A webhook's deliveries, newest first.
    Deliveries {
        /// The webhook's id.
        id: i64,
        /// Deliveries per page (1 to 100; default 20).
        #[arg(long, value_name = "N")]
        limit: Option<u64>,
        /// The `next_cursor` of the previous page.
        #[arg(long, value_name = "CURSOR")]
        cursor: Option<u64>,
    },
    /// Send a delivery again, with its webhook-id and body.
    Redeliver {
        /// The webhook's id.
        id: i64,
        /// The delivery's id (see `jility webhook deliveries`).
        delivery: i64,
    },
}

fn text(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        Value::Null => String::new(),
        other => other.to_string(),
    }
}

fn when(p: &Painter, value: &Value) -> String {
    value.as_str().map_or_else(|| p.dim("—"), |at| p.when(at))
}

fn events_text(value: &Value) -> String {
    let events: Vec<String> = value
        .as_array()
        .map(|e| e.iter().map(text).collect())
        .unwrap_or_default();
    if events.is_empty() {
        "all".to_string()
    } else {
        events.join(", ")
    }
}

fn list_text(p: &Painter, listed: &Value) -> String {
    let hooks = listed["webhooks"].as_array().cloned().unwrap_or_default();
    if hooks.is_empty() {
        return format!(
            "No webhooks. {}",
            p.hint("Subscribe one with `jility webhook create URL`.")
        );
    }
    let rows = hooks
        .iter()
        .map(|h| {
            let state = if h["enabled"] == true {
                match h["failing_since"].as_str() {
                    Some(at) => p.fg(AnsiColor::Yellow, &format!("failing since {}", p.when(at))),
                    None => p.fg(AnsiColor::Green, "enabled"),
                }
            } else {
                p.fg(
                    AnsiColor::Red,
                    &format!("disabled: {}", text(&h["disabled_reason"])),
                )
            };
            vec![
                text(&h["id"]),
                p.bold(&text(&h["url"])),
                events_text(&h["events"]),
                text(&h["filter"]),
                text(&h["pending_deliveries"]),
                state,
            ]
        })
        .collect();
    views::table(
        p,
        &["ID", "URL", "EVENTS", "FILTER", "WAITING", "STATE"],
        rows,
    )
}

fn webhook_text(p: &Painter, verb: &str, hook: &Value) -> String {
    let mut out = format!(
        "{verb} webhook {} → {}\n  events: {}",
        hook["id"],
        p.bold(&text(&hook["url"])),
        events_text(&hook["events"]),
    );
    if let Some(filter) = hook["filter"].as_str() {
        out.push_str(&format!("\n  filter: {filter}"));
    }
    if hook["enabled"] == false {
        out.push_str(&format!("\n  disabled: {}", text(&hook["disabled_reason"])));
    }
    if let Some(secret) = hook["secret"].as_str() {
        out.push_str(&format!(
            "\n\n    {secret}\n\nThe signing secret is shown only this once: give it to the receiver, which checks each delivery's webhook-signature with it (Standard Webhooks)."
        ));
        if let Some(until) = hook["previous_secret_until"].as_str() {
            out.push_str(&format!(
                " The old secret still signs until {}.",
                p.when(until)
            ));
        }
    }
    out
}

fn deliveries_text(p: &Painter, id: i64, listed: &Value) -> String {
    let deliveries = listed["deliveries"].as_array().cloned().unwrap_or_default();
    if deliveries.is_empty() {
        return "No deliveries.".to_string();
    }
    let rows = deliveries
        .iter()
        .map(|d| {
            let state = match d["state"].as_str() {
                Some("delivered") => p.fg(AnsiColor::Green, "delivered"),
                Some("failed") => p.fg(AnsiColor::Red, "failed"),
                other => p.fg(AnsiColor::Yellow, other.unwrap_or("pending")),
            };
            let answer = match (d["response_status"].as_u64(), d["error"].as_str()) {
                (Some(code), Some(error)) => format!("{code} {error}"),
                (Some(code), None) => code.to_string(),
                (None, Some(error)) => error.to_string(),
                (None, None) => p.dim("—"),
            };
            vec![
                text(&d["id"]),
                when(p, &d["created_at"]),
                text(&d["event_type"]),
                text(&d["ticket"]),
                state,
                text(&d["attempts"]),
                answer,
            ]
        })
        .collect();
    let mut out = views::table(
        p,
        &[
            "ID", "WHEN", "EVENT", "TICKET", "STATE", "ATTEMPTS", "ANSWER",
        ],
        rows,
    );
    if let Some(next) = listed["next_cursor"].as_str() {
        out.push_str(&format!(
            "\n{}",
            p.hint(&format!(
                "Older: jility webhook deliveries {id} --cursor {next}"
            ))
        ));
    }
    out
}

/// Run `jility webhook …`.
pub fn run(out: &Out, command: WebhookCommand) -> Result<(), ToolError> {
    let client = ApiClient::from_env()?;
    let p = &out.painter;
    let (answer, shown) = match command {
        WebhookCommand::Create {
            url,
            events,
            filter,
            description,
        } => {
            let mut body = json!({"url": url, "events": events});
            if let Some(filter) = filter {
                body["filter"] = filter.into();
            }
            if let Some(description) = description {
                body["description"] = description.into();
            }
            let made = client.call(Method::POST, "/webhooks", Some(&body))?;
            let shown = webhook_text(p, "✅ Created", &made);
            (made, shown)
        }
        WebhookCommand::List => {
            let listed = super::clean(client.call(Method::GET, "/webhooks", None)?)?;
            let shown = list_text(p, &listed);
            (listed, shown)
        }
        WebhookCommand::Update {
            id,
            url,
            events,
            filter,
            no_filter,
            description,
            enable,
            disable,
        } => {
            let mut body = json!({});
            if let Some(url) = url {
                body["url"] = url.into();
            }
            if !events.is_empty() {
                body["events"] = events.into();
            }
            if no_filter {
                body["filter"] = Value::Null;
            } else if let Some(filter) = filter {
                body["filter"] = filter.into();
            }
            if let Some(description) = description {
                body["description"] = description.into();
            }
            if enable || disable {
                body["enabled"] = enable.into();
            }
            let changed = super::clean(client.call(
                Method::PATCH,
                &format!("/webhooks/{id}"),
                Some(&body),
            )?)?;
            let shown = webhook_text(p, "✅ Changed", &changed);
            (changed, shown)
        }
        WebhookCommand::Delete { id } => {
            let gone =
                super::clean(client.call(Method::DELETE, &format!("/webhooks/{id}"), None)?)?;
            let shown = format!(
                "✅ Deleted webhook {id} ({}) and its deliveries",
                text(&gone["url"])
            );
            (gone, shown)
        }
        WebhookCommand::RotateSecret { id, keep_hours } => {
            let body = json!({"keep_previous_hours": keep_hours.unwrap_or(24)});
            let rotated = client.call(
                Method::POST,
                &format!("/webhooks/{id}/rotate-secret"),
                Some(&body),
            )?;
            let shown = webhook_text(p, "✅ Rotated the secret of", &rotated);
            (rotated, shown)
        }
        WebhookCommand::Test { id } => {
            let queued = client.call(Method::POST, &format!("/webhooks/{id}/test"), None)?;
            let shown = format!(
                "✅ Queued a webhook.test event (delivery {}, {}). {}",
                queued["id"],
                text(&queued["message_id"]),
                p.hint(&format!(
                    "See how it went: `jility webhook deliveries {id}`."
                ))
            );
            (queued, shown)
        }
        WebhookCommand::Deliveries { id, limit, cursor } => {
            let mut path = format!("/webhooks/{id}/deliveries?limit={}", limit.unwrap_or(20));
            if let Some(cursor) = cursor {
                path.push_str(&format!("&cursor={cursor}"));
            }
            let listed = super::clean(client.call(Method::GET, &path, None)?)?;
            let shown = deliveries_text(p, id, &listed);
            (listed, shown)
        }
        WebhookCommand::Redeliver { id, delivery } => {
            let again = client.call(
                Method::POST,
                &format!("/webhooks/{id}/deliveries/{delivery}/redeliver"),
                None,
            )?;
            let shown = format!(
                "✅ Delivery {delivery} is sent again with its webhook-id {}",
                text(&again["message_id"])
            );
            (again, shown)
        }
    };
    if out.json {
        let pretty = serde_json::to_string_pretty(&answer)
            .map_err(|e| ToolError::internal(format!("Cannot print JSON: {e}")))?;
        print(&pretty);
    } else {
        print(&shown);
    }
    Ok(())
}
