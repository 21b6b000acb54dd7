//! Why a page or a form was refused, answered as a person reads it (a page with what
//! happened and what to do) or, to the page's own script, as JSON
//! (`{"error": {"code","message","hint","retryable"}}`).

use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Redirect, Response};
use maud::html;
use mcp_common_core::ToolError;

use crate::layout;

/// A refusal of the web app.
#[derive(Debug, Clone)]
pub enum WebError {
    /// No session: sign in first (then come back to `next`).
    SignIn { next: String },
    /// Nothing here for this person (a workspace they are no member of looks the same as one
    /// that does not exist).
    NotFound,
    /// The person may not do this (a viewer's change, a member opening settings).
    Forbidden(String),
    /// The form did not carry this session's token, or came from another site.
    Csrf,
    /// What the operation answered.
    Tool(ToolError),
}

impl From<ToolError> for WebError {
    fn from(err: ToolError) -> Self {
        WebError::Tool(err)
    }
}

impl WebError {
    pub fn status(&self) -> StatusCode {
        match self {
            WebError::SignIn { .. } => StatusCode::SEE_OTHER,
            WebError::NotFound => StatusCode::NOT_FOUND,
            WebError::Forbidden(_) | WebError::Csrf => StatusCode::FORBIDDEN,
            WebError::Tool(err) => StatusCode::from_u16(err.class().http_status())
                .unwrap_or(StatusCode::INTERNAL_SERVER_ERROR),
        }
    }

    /// The refusal as a [`ToolError`] (its code, message and hint).
    pub fn as_tool_error(&self) -> ToolError {
        use mcp_common_core::codes;
        match self {
            WebError::SignIn { .. } => ToolError::new(codes::UNAUTHENTICATED, "Sign in first")
                .with_hint("Your session has ended; sign in again."),
            WebError::NotFound => ToolError::not_found("There is nothing here")
                .with_hint("Check the address, or ask an admin of the workspace to invite you."),
            WebError::Forbidden(why) => ToolError::new(codes::PERMISSION_DENIED, why.clone())
                .with_hint("Ask an admin of the workspace for a role that allows it."),
            WebError::Csrf => ToolError::new(
                codes::PERMISSION_DENIED,
                "The form was not sent from this site's page",
            )
            .with_hint("Reload the page and try again; nothing was changed."),
            WebError::Tool(err) => for_people(err),
        }
    }

    /// The refusal for a request with these headers: JSON to the page's script, else a page.
    pub fn answer(self, headers: &HeaderMap) -> Response {
        if wants_json(headers) {
            self.json()
        } else {
            self.into_response()
        }
    }

    /// `{"error": …}` with the status.
    pub fn json(self) -> Response {
        let status = self.status();
        let status = if status == StatusCode::SEE_OTHER {
            StatusCode::UNAUTHORIZED
        } else {
            status
        };
        let err = self.as_tool_error();
        let retry = err
            .retry_after_secs
            .and_then(|secs| HeaderValue::from_str(&secs.to_string()).ok());
        let body = serde_json::json!({ "error": err });
        let mut response = (status, axum::Json(body)).into_response();
        if let Some(value) = retry {
            response.headers_mut().insert(header::RETRY_AFTER, value);
        }
        response
    }
}

impl IntoResponse for WebError {
    fn into_response(self) -> Response {
        if let WebError::SignIn { next } = &self {
            let target = format!(
                "/login?{}",
                form_urlencoded::Serializer::new(String::new())
                    .append_pair("next", next)
                    .finish()
            );
            return Redirect::to(&target).into_response();
        }
        let status = self.status();
        let err = self.as_tool_error();
        let body = layout::bare(
            &err.message,
            html! {
                main id="main" class="narrow" {
                    h1 { (err.message) }
                    p { (err.hint_text()) }
                    p { a href="/" { "Back to the board" } }
                }
            },
        );
        let mut response = (status, body).into_response();
        if let Some(value) = err
            .retry_after_secs
            .and_then(|secs| HeaderValue::from_str(&secs.to_string()).ok())
        {
            response.headers_mut().insert(header::RETRY_AFTER, value);
        }
        response
    }
}

/// Whether the request is the page's script asking for JSON.
pub fn wants_json(headers: &HeaderMap) -> bool {
    headers
        .get(header::ACCEPT)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|accept| accept.starts_with("application/json"))
}

/// `err` as a person reads it on a page: a hint written for an agent (it names an MCP tool,
/// `jility_…`) gives way to what a person does on the board.
fn for_people(err: &ToolError) -> ToolError {
    let mut err = err.clone();
    if err.hint.as_deref().is_some_and(|h| h.contains("jility_")) {
        use jility_core::errors::{ALREADY_ASSIGNED, DEPENDENCY_CYCLE, NOT_FOUND};
        let hint = if err.code == NOT_FOUND {
            "Check the ticket's number, or find it on the board or with the search."
        } else if err.code == DEPENDENCY_CYCLE {
            "Each arrow reads 'depends on'. Remove one of those dependencies on its ticket's page first, or reverse this one."
        } else if err.code == ALREADY_ASSIGNED {
            "Pick an unassigned ticket, or ask its assignees to hand it over."
        } else {
            err.class().default_hint()
        };
        err.hint = Some(hint.to_string());
    }
    err
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_agents_hint_gives_way_to_a_persons() {
        let agent = ToolError::not_found("Ticket API-99 not found").with_hint(
            "Use jility_list_tickets or jility_search_tickets (CLI: `jility ticket list`) to see available tickets.",
        );
        let shown = WebError::Tool(agent).as_tool_error();
        assert_eq!(shown.message, "Ticket API-99 not found");
        assert!(
            !shown.hint_text().contains("jility_"),
            "{}",
            shown.hint_text()
        );
        assert!(shown.hint_text().contains("board"));
        let plain = ToolError::not_found("x").with_hint("Check the spelling.");
        assert_eq!(
            WebError::Tool(plain).as_tool_error().hint_text(),
            "Check the spelling."
        );
    }
}
