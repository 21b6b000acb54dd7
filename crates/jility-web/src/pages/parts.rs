//! What the ticket's pages and forms share: the ticket's address, a name shown as a person
//! or an agent, and the start of every form of theirs (the viewer, the fields, the CSRF
//! check).

use axum::http::HeaderMap;
use axum::response::Response;
use maud::{Markup, html};
use mcp_common_core::ToolError;

use super::{field, form_pairs, viewer};
use crate::errors::WebError;
use crate::layout;
use crate::security::check_form;
use crate::site::{Site, Viewer};

/// The ticket's page address.
pub fn ticket_href(viewer: &Viewer, number: &str) -> String {
    format!(
        "{}/tickets/{}",
        layout::base(&viewer.workspace),
        layout::segment(number)
    )
}

/// `name` as a person (👤, one of the workspace's `people`) or an agent (🤖), told apart
/// for screen readers too.
pub fn who(name: &str, people: &[String]) -> Markup {
    let person = people.iter().any(|p| p == name);
    let (class, icon, kind) = if person {
        ("who person", "👤", "Person")
    } else {
        ("who agent", "🤖", "Agent")
    };
    html! {
        span class=(class) title=(kind) {
            span aria-hidden="true" { (icon) " " }
            span class="visually-hidden" { (kind) ": " }
            (name)
        }
    }
}

/// A form posted to a ticket: who sent it and its fields (or the answer that refuses the
/// person); the handler checks the form ([`check`]) before it changes anything.
pub async fn posted<S: Site>(
    site: &S,
    headers: &HeaderMap,
    workspace: &str,
    body: &[u8],
) -> Result<(Viewer, Vec<(String, String)>), Response> {
    let viewer = viewer(site, headers, workspace).await?;
    Ok((viewer, form_pairs(body)))
}

/// The form's CSRF token and origin, checked.
pub fn check(
    viewer: &Viewer,
    headers: &HeaderMap,
    pairs: &[(String, String)],
) -> Result<(), WebError> {
    check_form(viewer, headers, field(pairs, "_csrf"))
}

/// The refusal of a change made on a page that is no longer what the person saw.
pub fn stale(what: &str) -> WebError {
    WebError::Tool(
        ToolError::new(
            mcp_common_core::codes::CONFLICT,
            format!("The description changed; reload ({what})"),
        )
        .with_hint("Reload the page to see the description as it is now; nothing was changed."),
    )
}
