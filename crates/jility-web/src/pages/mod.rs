//! The workspace's pages, each a module: `board`, `ticket` (with `edit`, `fields`, `history`,
//! `changes`, `diff`, `parts`), `list` (with `views`, the saved views), `epics`, `sprints` (with `charts`), `plan`, `create` (with
//! `create_forms`). What they
//! share is here: running an operation as the viewer, answering a page whole or as the
//! fragment the live script swaps in, and answering a form (a redirect back, or JSON to the
//! script).

pub mod board;
pub mod bulk;
pub mod changes;
pub mod charts;
pub mod create;
pub mod create_forms;
pub mod diff;
pub mod edit;
pub mod epics;
pub mod fields;
pub mod history;
pub mod inbox;
pub mod list;
pub mod parts;
pub mod plan;
pub mod sprints;
pub mod ticket;
pub mod views;

use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Redirect, Response};
use jility_core::backend::Backend;
use jility_core::ops::Operation;
use maud::Markup;
use mcp_common_core::ToolError;

use crate::errors::{WebError, wants_json};
use crate::layout::{self, Section};
use crate::site::{Site, Viewer};

/// The header the live script sends to get the page's `<main>` alone.
pub const FRAGMENT_HEADER: &str = "x-fragment";

/// Run `O` as `viewer`.
pub async fn run<S: Site, O: Operation>(
    site: &S,
    viewer: &Viewer,
    params: O::Params,
) -> Result<O::Output, WebError> {
    site.backend()
        .exec::<O>(&viewer.caller, Ok(params))
        .await
        .map_err(WebError::Tool)
}

/// A write of `viewer`'s: refused up front when their role allows no change.
pub async fn write<S: Site, O: Operation>(
    site: &S,
    viewer: &Viewer,
    params: O::Params,
) -> Result<O::Output, WebError> {
    if !viewer.can_write {
        return Err(WebError::Forbidden(
            "Your role in this workspace lets you look, not change".to_string(),
        ));
    }
    run::<S, O>(site, viewer, params).await
}

/// The viewer of a page of `workspace`, or the answer that refuses them.
pub async fn viewer<S: Site>(
    site: &S,
    headers: &HeaderMap,
    workspace: &str,
) -> Result<Viewer, Response> {
    let mut viewer = site
        .viewer(headers, workspace)
        .await
        .map_err(|err| err.answer(headers))?;
    // The header's count of unread entries (a failure leaves it at 0: the page still works).
    let asked = jility_core::params::ListNotifications {
        unread_only: true,
        limit: Some(1),
        cursor: None,
    };
    if let Ok(inbox) = run::<S, jility_core::ops::ListNotifications>(site, &viewer, asked).await {
        viewer.unread = inbox.data.unread;
    }
    Ok(viewer)
}

/// A page: whole, or its `<main>` alone when the live script asks for the fragment.
pub fn respond<S: Site>(
    site: &S,
    viewer: &Viewer,
    headers: &HeaderMap,
    section: Section,
    title: &str,
    main: Markup,
) -> Response {
    if headers.contains_key(FRAGMENT_HEADER) {
        return main.into_response();
    }
    layout::page(viewer, section, title, site.accounts(), main).into_response()
}

/// A form posted to a page of `workspace`: who sent it and its fields, its CSRF token and
/// origin checked (or the answer that refuses it: sign-in, not found, CSRF).
pub async fn form<S: Site>(
    site: &S,
    headers: &HeaderMap,
    workspace: &str,
    body: &[u8],
) -> Result<(Viewer, Vec<(String, String)>), Response> {
    // Not the page's `viewer`: a form needs no inbox count.
    let viewer = site
        .viewer(headers, workspace)
        .await
        .map_err(|err| err.answer(headers))?;
    let pairs = form_pairs(body);
    crate::security::check_form(&viewer, headers, field(&pairs, "_csrf"))
        .map_err(|err| err.answer(headers))?;
    Ok((viewer, pairs))
}

/// Where a form sends the person back to: `back` when it is a page of this workspace,
/// else `fallback` (never another site: no open redirect).
pub fn back_to(viewer: &Viewer, back: Option<&str>, fallback: String) -> String {
    let base = format!("{}/", layout::base(&viewer.workspace));
    match back {
        Some(path)
            if path.starts_with(&base)
                && !path.contains("//")
                && !path.contains('\\')
                && !path.chars().any(char::is_control) =>
        {
            path.to_string()
        }
        _ => fallback,
    }
}

/// The answer to a form: JSON `{"ok": true, "location": back, …}` to the script (which goes
/// there when it is another page, else reloads what it shows), else a redirect to `back`;
/// a refusal as JSON to the script, else as a page saying what to do.
pub fn answer_form(
    headers: &HeaderMap,
    result: Result<serde_json::Value, WebError>,
    back: String,
) -> Response {
    match result {
        Ok(mut value) => {
            if wants_json(headers) {
                if let serde_json::Value::Object(members) = &mut value {
                    members.insert("ok".into(), serde_json::Value::Bool(true));
                    members.insert("location".into(), serde_json::Value::String(back));
                }
                (StatusCode::OK, axum::Json(value)).into_response()
            } else {
                Redirect::to(&back).into_response()
            }
        }
        Err(err) => err.answer(headers),
    }
}

/// A form's body, decoded (`application/x-www-form-urlencoded`), as name/value pairs.
pub fn form_pairs(body: &[u8]) -> Vec<(String, String)> {
    form_urlencoded::parse(body)
        .map(|(k, v)| (k.into_owned(), v.into_owned()))
        .collect()
}

/// The first value of `name` in a form.
pub fn field<'a>(pairs: &'a [(String, String)], name: &str) -> Option<&'a str> {
    pairs
        .iter()
        .find(|(k, _)| k == name)
        .map(|(_, v)| v.as_str())
}

/// Every value of `name` in a form.
pub fn fields<'a>(pairs: &'a [(String, String)], name: &str) -> Vec<&'a str> {
    pairs
        .iter()
        .filter(|(k, _)| k == name)
        .map(|(_, v)| v.as_str())
        .collect()
}

/// `ToolError` for a form field that is missing.
pub fn missing(name: &str) -> WebError {
    WebError::Tool(
        ToolError::new(
            jility_core::errors::INVALID_INPUT,
            format!("The form has no `{name}`"),
        )
        .with_hint("Reload the page and try again."),
    )
}

/// Whether the request came from a browser page that accepts HTML (for redirects).
pub fn is_page_request(headers: &HeaderMap) -> bool {
    headers
        .get(header::ACCEPT)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|a| a.contains("text/html"))
}

/// Readable time: `2026-11-26 14:03` from the tracker's ISO-8601 UTC.
pub fn when(iso: &str) -> String {
    let text = iso.replace('T', " ");
    text.chars().take(16).collect::<String>() + " UTC"
}
