//! `GET /w/{ws}/settings/webhooks` (owners and admins): the workspace's webhooks — URL,
//! event types, filter, state, pending deliveries — each with its delivery log, "Send a
//! test event", "Rotate secret", enable or disable, and delete; and the form that makes one
//! (its secret shown once, on the answering page). `GET …/webhooks/{id}?cursor=`: a
//! webhook's deliveries, newest first, each with "Redeliver".
//!
//! What is kept and sent is `jility-hooks`'; the checks are the REST API's
//! (`jility_api::api::webhooks`): the URL's rules and the address it resolves to (the SSRF
//! fence), the event types, the filter read by the workspace's tracker as the person. Every
//! write is counted against the person's own rate limit and audited under the same
//! operation as through the API, with the person's email as the actor. A refused form is
//! shown again with what was typed (clipped) and why, in words for a person.

use axum::body::Bytes;
use axum::extract::{Path, RawQuery, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::Response;
use jility_api::api::webhooks::{checked_filter, checked_url};
use jility_core::errors;
use jility_core::store::StoreError;
use jility_hooks::kinds::{EVENT_TYPES, TEST_EVENT};
use jility_hooks::{
    Change, Delivery, NewWebhook, Subscriptions, Webhook, subscriptions as subs, target,
};
use jility_web::WebError;
use jility_web::layout::{self, Section};
use jility_web::pages::{answer_form, field, fields, form_pairs, respond, when};
use maud::{Markup, html};
use mcp_common::text::clip;
use mcp_common::{ErrorClass, ToolError};

use super::settings::{created, manager, manager_form, tabs};
use super::site::{CloudSite, Person};
use crate::auth::Principal;

/// Deliveries a page of a log.
const LOG_PAGE: i64 = 25;
/// How long the secret before a rotation still signs, in hours (as the API's default).
const KEEP_PREVIOUS_HOURS: i64 = 24;
/// Most characters of what a person typed shown back on a refused form.
const ECHO_CHARS: usize = 2_000;
/// Most characters of a receiver's answer shown in a log.
const EXCERPT_CHARS: usize = 300;

/// What the create form held, to show it again when it is refused (clipped: never huge).
#[derive(Default)]
struct Draft {
    url: String,
    events: Vec<String>,
    filter: String,
    description: String,
}

impl Draft {
    fn of(pairs: &[(String, String)]) -> Self {
        let text = |name| clip(field(pairs, name).unwrap_or_default(), ECHO_CHARS);
        // A URL with credentials is not shown back: they are a secret, and refused anyway.
        let url = field(pairs, "url").unwrap_or_default();
        let credentials = url::Url::parse(url.trim())
            .is_ok_and(|u| !u.username().is_empty() || u.password().is_some());
        Self {
            url: if credentials {
                String::new()
            } else {
                text("url")
            },
            events: fields(pairs, "event")
                .into_iter()
                .filter(|e| EVENT_TYPES.contains(e))
                .map(str::to_string)
                .collect(),
            filter: text("filter"),
            description: text("description"),
        }
    }
}

/// What a page says above its content.
#[derive(Default)]
struct Notes<'a> {
    /// A secret just made (`rotated`: by a rotation) for a webhook: shown this once.
    secret: Option<(&'a Webhook, &'a str, bool)>,
    /// A form's refusal, and what it held.
    refused: Option<(&'a ToolError, &'a Draft)>,
    /// What a form just did (the `done` of the address it sent the person to).
    done: Option<&'static str>,
}

fn store(site: &CloudSite) -> Subscriptions {
    Subscriptions::new(&site.api().db)
}

async fn blocking<T: Send + 'static>(
    work: impl FnOnce() -> Result<T, ToolError> + Send + 'static,
) -> Result<T, ToolError> {
    tokio::task::spawn_blocking(work)
        .await
        .map_err(|e| ToolError::internal(format!("The webhook operation failed: {e}")))?
}

/// `err` as a person reads it on this page: hints written for the API's clients (a path
/// under `/api/v1`, the CLI) give way to what a person does here.
fn for_person(err: &ToolError) -> ToolError {
    let mut err = WebError::Tool(err.clone()).as_tool_error();
    if err
        .hint
        .as_deref()
        .is_some_and(|h| h.contains("/api/v1") || h.contains("jility webhook"))
    {
        let hint = match err.class() {
            ErrorClass::NotFound => {
                "It may have been deleted: open Settings → Webhooks to see this workspace's webhooks."
            }
            ErrorClass::Conflict => {
                "Delete a webhook no longer used, or have one webhook receive more event types."
            }
            other => other.default_hint(),
        };
        err.hint = Some(hint.to_string());
    }
    err
}

fn refusal(err: &ToolError) -> WebError {
    WebError::Tool(for_person(err))
}

/// Count one write of the person against their own limit (as [`super::backend::People`]
/// does for the board's writes); a database that cannot be reached lets it go on.
async fn count(site: &CloudSite, principal: &Principal) -> Result<(), ToolError> {
    let key = format!("person:{}", principal.token_name);
    let (limiter, workspace_id) = (site.api().limiter.clone(), principal.workspace_id);
    let decision =
        tokio::task::spawn_blocking(move || limiter.check_in_workspace(&key, workspace_id))
            .await
            .map_err(|e| ToolError::internal(format!("Counting the request failed: {e}")))?;
    match decision {
        Ok(decision) if !decision.allowed => Err(decision.error()),
        Ok(_) | Err(StoreError::Unavailable(_)) => Ok(()),
        Err(err) => Err(err.into()),
    }
}

/// The webhook a form or page names by the id in its path; another workspace's, or not a
/// number, is not found.
fn id_of(text: &str) -> Result<i64, WebError> {
    text.parse::<i64>().map_err(|_| WebError::NotFound)
}

fn base(person: &Person) -> String {
    format!(
        "{}/settings/webhooks",
        layout::base(&person.viewer.workspace)
    )
}

fn done_text(done: &str) -> Option<&'static str> {
    Some(match done {
        "tested" => {
            "A test event (webhook.test) is on its way: its delivery shows in the webhook's delivery log."
        }
        "enabled" => "The webhook is enabled again: its failures are forgotten.",
        "disabled" => "The webhook is disabled: nothing is sent to it until it is enabled again.",
        "deleted" => "The webhook and its delivery log are deleted.",
        "redelivered" => {
            "The delivery will be sent again, with the same webhook-id and body, after the deliveries of its ticket before it."
        }
        _ => return None,
    })
}

fn notices(notes: &Notes) -> Markup {
    html! {
        div id="notice" {
            @if let Some(done) = notes.done {
                (layout::notice("ok", done, None))
            }
            @if let Some((err, _)) = notes.refused {
                (layout::notice("error", &err.message, err.hint.as_deref()))
            }
            @if let Some((webhook, secret, rotated)) = notes.secret {
                @let what = if rotated { "New signing secret" } else { "Webhook made" };
                (layout::notice("ok", &format!("{what} for {}: copy the secret now — it is shown only this once.", clip(&webhook.url, 80)), None))
                p {
                    label for="new-secret" { "Signing secret" } br;
                    input id="new-secret" type="text" readonly value=(secret) size="60";
                }
                p class="help" {
                    "Each delivery is signed as Standard Webhooks says: it carries the headers "
                    code { "webhook-id" } ", " code { "webhook-timestamp" } " and " code { "webhook-signature" }
                    ". The receiver computes the HMAC-SHA256 of "
                    code { "{webhook-id}.{webhook-timestamp}.{body}" }
                    " keyed with the secret (the base64 after " code { "whsec_" } ", decoded), and accepts the delivery when one of the space-separated signatures in "
                    code { "webhook-signature" } " is " code { "v1," } " followed by it in base64, and the timestamp is recent. Standard Webhooks' libraries do this with the secret as shown."
                }
                @if rotated {
                    @if let Some(until) = &webhook.previous_secret_until {
                        p class="help" { "Until " (when(until)) ", deliveries are signed with the previous secret too, so that the receiver can change over." }
                    }
                }
            }
        }
    }
}

fn state(webhook: &Webhook) -> Markup {
    html! {
        @if !webhook.enabled {
            "disabled"
            @if let Some(reason) = &webhook.disabled_reason { ": " (reason) }
        } @else if let Some(since) = &webhook.failing_since {
            "failing since " (when(since))
        } @else {
            "enabled"
        }
    }
}

fn events_of(webhook: &Webhook) -> String {
    if webhook.events.is_empty() {
        "all".to_string()
    } else {
        webhook.events.join(", ")
    }
}

/// A button in a form posted to `action` of webhook `id` (`from`: the page to go back to).
fn action(
    person: &Person,
    id: i64,
    action: &str,
    label: &str,
    about: &str,
    from: Option<&str>,
) -> Markup {
    html! {
        form method="post" action=(format!("{}/{id}/{action}", base(person))) data-native {
            input type="hidden" name="_csrf" value=(person.viewer.csrf);
            @if let Some(from) = from { input type="hidden" name="from" value=(from); }
            button type="submit" class=[(action != "test").then_some("secondary")] {
                (label) span class="visually-hidden" { " " (about) }
            }
        }
    }
}

fn create_form(person: &Person, draft: Option<&Draft>) -> Markup {
    let empty = Draft::default();
    let draft = draft.unwrap_or(&empty);
    html! {
        h2 { "Add a webhook" }
        form method="post" action=(base(person)) data-native class="webhook-form" {
            input type="hidden" name="_csrf" value=(person.viewer.csrf);
            p {
                label for="webhook-url" { "URL" } br;
                input id="webhook-url" type="url" name="url" required size="60" maxlength=(target::MAX_URL_BYTES)
                    placeholder="https://hooks.example.com/jility" value=(draft.url) aria-describedby="webhook-url-help";
                br;
                small id="webhook-url-help" class="help" { "An https address on the public internet; each event is POSTed to it as JSON." }
            }
            fieldset class="events" {
                legend { "Event types" }
                @for kind in EVENT_TYPES {
                    @let id = format!("event-{}", kind.replace(['.', '_'], "-"));
                    span class="check" {
                        input id=(id) type="checkbox" name="event" value=(kind) checked[draft.events.iter().any(|e| e == kind)];
                        " "
                        label for=(id) { (kind) }
                    }
                    " "
                }
                p class="help" { "None ticked: every event type. " (TEST_EVENT) " (Send a test event) reaches every webhook." }
            }
            p {
                label for="webhook-filter" { "Filter (optional)" } br;
                input id="webhook-filter" type="text" name="filter" size="60" maxlength="500"
                    placeholder="label:backend status:review" value=(draft.filter) aria-describedby="webhook-filter-help";
                br;
                small id="webhook-filter-help" class="help" { "Only events of the tickets this search finds, in the list's query language; empty: every ticket." }
            }
            p {
                label for="webhook-description" { "Description (optional)" } br;
                input id="webhook-description" type="text" name="description" size="60" maxlength="200"
                    placeholder="Deploys on review" value=(draft.description);
            }
            p { button type="submit" { "Add the webhook" } }
        }
    }
}

fn render(person: &Person, webhooks: &[Webhook], notes: &Notes) -> Markup {
    let viewer = &person.viewer;
    let base = base(person);
    html! {
        main id="main" data-page="settings" data-settings="webhooks" {
            h1 { "Webhooks of " (viewer.workspace) }
            (tabs(viewer, "webhooks"))
            (notices(notes))
            p class="help" {
                "A webhook POSTs each change of a ticket to a receiver of yours, signed with its secret; failed deliveries are tried again, and a webhook that keeps failing is disabled."
            }
            h2 { "Webhooks" }
            @if webhooks.is_empty() {
                p class="empty" { "No webhooks yet." }
            } @else {
                div class="table-scroll" tabindex="0" role="region" aria-label="Webhooks" {
                    table class="plain webhooks" {
                        thead { tr { th { "URL" } th { "Event types" } th { "Filter" } th { "State" } th { "Pending" } th { "Actions" } } }
                        tbody {
                            @for webhook in webhooks {
                                @let about = format!("of {}", clip(&webhook.url, 60));
                                tr data-webhook=(webhook.id) {
                                    td class="url" {
                                        (webhook.url)
                                        @if !webhook.description.is_empty() { br; span class="help" { (webhook.description) } }
                                        br; span class="help" { "by " (webhook.created_by) ", " (when(&webhook.created_at)) }
                                    }
                                    td { (events_of(webhook)) }
                                    td { @if let Some(filter) = &webhook.filter { code { (filter) } } @else { "—" } }
                                    td { (state(webhook)) }
                                    td { (webhook.pending_deliveries) }
                                    td {
                                        div class="actions" {
                                            a href=(format!("{base}/{}", webhook.id)) { "Delivery log" span class="visually-hidden" { " " (about) } }
                                            (action(person, webhook.id, "test", "Send a test event", &about, None))
                                            (action(person, webhook.id, "rotate", "Rotate secret", &about, None))
                                            @if webhook.enabled {
                                                (action(person, webhook.id, "disable", "Disable", &about, None))
                                            } @else {
                                                (action(person, webhook.id, "enable", "Enable", &about, None))
                                            }
                                            (action(person, webhook.id, "delete", "Delete", &about, None))
                                        }
                                    }
                                }
                            }
                        }
                    }
                }
            }
            (create_form(person, notes.refused.map(|(_, draft)| draft)))
        }
    }
}

/// The list page with `notes`, answered with `status`.
async fn show(
    site: &CloudSite,
    headers: &HeaderMap,
    person: &Person,
    notes: &Notes<'_>,
    status: StatusCode,
) -> Response {
    let (store, workspace_id) = (store(site), person.workspace_id);
    match blocking(move || store.list(workspace_id)).await {
        Ok(webhooks) => {
            let main = render(person, &webhooks, notes);
            let mut response = respond(
                site,
                &person.viewer,
                headers,
                Section::Settings,
                "Webhooks",
                main,
            );
            *response.status_mut() = status;
            response
        }
        Err(err) => refusal(&err).answer(headers),
    }
}

/// The `done` of a page's address.
fn done_of(query: Option<&str>) -> (Vec<(String, String)>, Option<&'static str>) {
    let pairs = form_pairs(query.unwrap_or_default().as_bytes());
    let done = field(&pairs, "done").and_then(done_text);
    (pairs, done)
}

/// `GET /w/{ws}/settings/webhooks?done=`.
pub async fn page(
    State(site): State<CloudSite>,
    Path(workspace): Path<String>,
    RawQuery(query): RawQuery,
    headers: HeaderMap,
) -> Response {
    let person = match manager(&site, &headers, &workspace).await {
        Ok(person) => person,
        Err(refused) => return refused,
    };
    let (_, done) = done_of(query.as_deref());
    let notes = Notes {
        done,
        ..Notes::default()
    };
    show(&site, &headers, &person, &notes, StatusCode::OK).await
}

/// `POST /w/{ws}/settings/webhooks`: url, event…, filter, description → the page, with the
/// secret shown once; refused, the page with why and the form as it was typed.
pub async fn create(
    State(site): State<CloudSite>,
    Path(workspace): Path<String>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let (person, pairs) = match manager_form(&site, &headers, &workspace, &body).await {
        Ok(checked) => checked,
        Err(refused) => return refused,
    };
    let Some(principal) = person.viewer.caller.principal.clone() else {
        return WebError::NotFound.answer(&headers);
    };
    let made = async {
        count(&site, &principal).await?;
        let events: Vec<String> = fields(&pairs, "event")
            .into_iter()
            .map(str::to_string)
            .collect();
        let new = NewWebhook {
            url: checked_url(field(&pairs, "url").unwrap_or_default()).await?,
            events: subs::check_events(&events)?,
            filter: checked_filter(
                site.api(),
                &principal,
                field(&pairs, "filter").map(str::to_string),
            )
            .await?,
            description: subs::check_description(field(&pairs, "description").unwrap_or_default())?,
            created_by: principal.token_name.clone(),
        };
        let (store, workspace_id) = (store(&site), person.workspace_id);
        blocking(move || store.create(workspace_id, &new)).await
    }
    .await;
    let (status, detail) = match &made {
        Ok((webhook, _)) => (201, Some(format!("webhook {}", webhook.id))),
        Err(err) => (refusal(err).status().as_u16(), None),
    };
    crate::api::audited(
        site.api(),
        &principal,
        "webhooks.create",
        None,
        detail,
        status,
    )
    .await;
    match made {
        Ok((webhook, secret)) => {
            let notes = Notes {
                secret: Some((&webhook, &secret, false)),
                ..Notes::default()
            };
            created(show(&site, &headers, &person, &notes, StatusCode::OK).await)
        }
        Err(err) => {
            let (shown, draft) = (for_person(&err), Draft::of(&pairs));
            let notes = Notes {
                refused: Some((&shown, &draft)),
                ..Notes::default()
            };
            let status = refusal(&err).status();
            super::answers::retry_after(
                show(&site, &headers, &person, &notes, status).await,
                super::answers::refusal_status(&refusal(&err)).1,
            )
        }
    }
}

/// What an action on a webhook did.
enum Outcome {
    /// Go back to the list (`log`: to the webhook's log) saying `done`.
    Back(&'static str, bool),
    /// A new secret, shown once.
    Rotated(Box<Webhook>, String),
}

/// `POST /w/{ws}/settings/webhooks/{id}/{action}`: `test`, `rotate`, `enable`, `disable`,
/// `delete`, or `redeliver` (with `delivery`); `from=log`: back to the webhook's log.
pub async fn act(
    State(site): State<CloudSite>,
    Path((workspace, id, action)): Path<(String, String, String)>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let (person, pairs) = match manager_form(&site, &headers, &workspace, &body).await {
        Ok(checked) => checked,
        Err(refused) => return refused,
    };
    let Some(principal) = person.viewer.caller.principal.clone() else {
        return WebError::NotFound.answer(&headers);
    };
    let operation = match action.as_str() {
        "test" => "webhooks.test",
        "rotate" => "webhooks.rotate_secret",
        "enable" | "disable" => "webhooks.update",
        "delete" => "webhooks.delete",
        "redeliver" => "webhooks.redeliver",
        _ => return WebError::NotFound.answer(&headers),
    };
    let id = match id_of(&id) {
        Ok(id) => id,
        Err(err) => return err.answer(&headers),
    };
    let to_log = field(&pairs, "from") == Some("log");
    let (store, workspace_id) = (store(&site), person.workspace_id);
    let mut detail = format!("webhook {id}");
    let done = async {
        count(&site, &principal).await?;
        Ok(match action.as_str() {
            "test" => {
                let by = principal.token_name.clone();
                blocking(move || store.test_event(workspace_id, id, &by)).await?;
                Outcome::Back("tested", to_log)
            }
            "rotate" => {
                let (webhook, secret) =
                    blocking(move || store.rotate(workspace_id, id, KEEP_PREVIOUS_HOURS)).await?;
                Outcome::Rotated(Box::new(webhook), secret)
            }
            "enable" | "disable" => {
                let enable = action == "enable";
                let change = Change {
                    enabled: Some(enable),
                    ..Change::default()
                };
                blocking(move || store.update(workspace_id, id, &change)).await?;
                Outcome::Back(if enable { "enabled" } else { "disabled" }, to_log)
            }
            "delete" => {
                blocking(move || store.delete(workspace_id, id)).await?;
                Outcome::Back("deleted", false)
            }
            _ => {
                let delivery = field(&pairs, "delivery")
                    .and_then(|d| d.trim().parse::<i64>().ok())
                    .ok_or_else(|| {
                        ToolError::new(errors::INVALID_INPUT, "The form names no delivery")
                            .with_hint("Reload the delivery log and try again.")
                    })?;
                detail = format!("webhook {id}, delivery {delivery}");
                blocking(move || store.redeliver(workspace_id, id, delivery)).await?;
                Outcome::Back("redelivered", true)
            }
        })
    }
    .await;
    let status = match &done {
        Ok(Outcome::Back("tested" | "redelivered", _)) => 202,
        Ok(_) => 200,
        Err(err) => refusal(err).status().as_u16(),
    };
    let detail = done.is_ok().then_some(detail);
    crate::api::audited(site.api(), &principal, operation, None, detail, status).await;
    match done {
        Ok(Outcome::Back(done, log)) => {
            let back = if log {
                format!("{}/{id}?done={done}", base(&person))
            } else {
                format!("{}?done={done}", base(&person))
            };
            answer_form(&headers, Ok(serde_json::json!({ "done": done })), back)
        }
        Ok(Outcome::Rotated(webhook, secret)) => {
            let notes = Notes {
                secret: Some((&webhook, &secret, true)),
                ..Notes::default()
            };
            show(&site, &headers, &person, &notes, StatusCode::OK).await
        }
        Err(err) => refusal(&err).answer(&headers),
    }
}

fn answer_of(delivery: &Delivery) -> Markup {
    html! {
        @if let Some(code) = delivery.response_status { "HTTP " (code) }
        @if let Some(error) = &delivery.error {
            @if delivery.response_status.is_some() { br; }
            span class="error" { (clip(error, EXCERPT_CHARS)) }
        }
        @if delivery.response_status.is_none() && delivery.error.is_none() { "—" }
        @if let Some(excerpt) = delivery.response_excerpt.as_deref().filter(|e| !e.is_empty()) {
            pre class="excerpt" { (clip(excerpt, EXCERPT_CHARS)) }
        }
    }
}

fn render_log(
    person: &Person,
    webhook: &Webhook,
    deliveries: &[Delivery],
    next: Option<i64>,
    notes: &Notes,
) -> Markup {
    let viewer = &person.viewer;
    let here = format!("{}/{}", base(person), webhook.id);
    html! {
        main id="main" data-page="settings" data-settings="webhook-log" {
            p class="crumbs" { a href=(base(person)) { "← Webhooks" } }
            h1 { "Deliveries of a webhook" }
            (tabs(viewer, "webhooks"))
            (notices(notes))
            dl class="facts" {
                dt { "URL" } dd class="url" { (webhook.url) }
                dt { "Event types" } dd { (events_of(webhook)) }
                @if let Some(filter) = &webhook.filter { dt { "Filter" } dd { code { (filter) } } }
                dt { "State" } dd { (state(webhook)) }
                dt { "Pending" } dd { (webhook.pending_deliveries) }
            }
            (action(person, webhook.id, "test", "Send a test event", "", Some("log")))
            h2 { "Deliveries, newest first" }
            @if deliveries.is_empty() {
                p class="empty" { "No deliveries yet." }
            } @else {
                div class="table-scroll" tabindex="0" role="region" aria-label="Deliveries" {
                    table class="plain deliveries" {
                        thead { tr { th { "When" } th { "Event" } th { "Ticket" } th { "State" } th { "Attempts" } th { "Answer" } th { span class="visually-hidden" { "Redeliver" } } } }
                        tbody {
                            @for delivery in deliveries {
                                tr data-delivery=(delivery.id) {
                                    td {
                                        (when(&delivery.created_at))
                                        @if let Some(last) = &delivery.last_attempt_at { br; span class="help" { "last tried " (when(last)) } }
                                    }
                                    td { (delivery.event_type) }
                                    td { (delivery.ticket.as_deref().unwrap_or("—")) }
                                    td {
                                        (delivery.state)
                                        @if let Some(next) = &delivery.next_attempt_at { br; span class="help" { "next try " (when(next)) } }
                                    }
                                    td { (delivery.attempts) }
                                    td { (answer_of(delivery)) }
                                    td {
                                        form method="post" action=(format!("{here}/redeliver")) data-native {
                                            input type="hidden" name="_csrf" value=(viewer.csrf);
                                            input type="hidden" name="delivery" value=(delivery.id);
                                            button type="submit" class="secondary" {
                                                "Redeliver" span class="visually-hidden" { " " (delivery.event_type) " of " (when(&delivery.created_at)) }
                                            }
                                        }
                                    }
                                }
                            }
                        }
                    }
                }
            }
            @if let Some(before) = next {
                p { a class="more" rel="next" href=(format!("{here}?cursor={before}")) { "Older deliveries" } }
            }
        }
    }
}

/// `GET /w/{ws}/settings/webhooks/{id}?cursor=&done=`: the webhook's deliveries.
pub async fn log(
    State(site): State<CloudSite>,
    Path((workspace, id)): Path<(String, String)>,
    RawQuery(query): RawQuery,
    headers: HeaderMap,
) -> Response {
    let person = match manager(&site, &headers, &workspace).await {
        Ok(person) => person,
        Err(refused) => return refused,
    };
    let id = match id_of(&id) {
        Ok(id) => id,
        Err(err) => return err.answer(&headers),
    };
    let (pairs, done) = done_of(query.as_deref());
    let before = match field(&pairs, "cursor").map(str::trim) {
        None | Some("") => None,
        Some(cursor) => match cursor.parse::<i64>() {
            Ok(before) => Some(before),
            Err(_) => {
                return WebError::Tool(
                    ToolError::new(
                        errors::INVALID_INPUT,
                        "The link to older deliveries is not one this page gave",
                    )
                    .with_hint(
                        "Open the delivery log again and follow its “Older deliveries” link.",
                    ),
                )
                .answer(&headers);
            }
        },
    };
    let (store, workspace_id) = (store(&site), person.workspace_id);
    let read = blocking(move || {
        let webhook = store.get(workspace_id, id)?;
        let (page, more) = store.deliveries(workspace_id, id, before, LOG_PAGE)?;
        Ok((webhook, page, more))
    })
    .await;
    match read {
        Ok((webhook, page, more)) => {
            let next = more.then(|| page.last().map(|d| d.id)).flatten();
            let notes = Notes {
                done,
                ..Notes::default()
            };
            let main = render_log(&person, &webhook, &page, next, &notes);
            respond(
                &site,
                &person.viewer,
                &headers,
                Section::Settings,
                "Webhook deliveries",
                main,
            )
        }
        Err(err) => refusal(&err).answer(&headers),
    }
}
