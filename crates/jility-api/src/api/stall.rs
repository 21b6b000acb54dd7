//! Every request is answered while the database stops answering: the outermost layer of
//! `jility serve` waits for a request's answer only as long as the database answers
//! ([`crate::reach::bounded_request`]; a little longer than an operation's own bound, whose
//! answer knows whether it wrote); once it does not ([`crate::reach::STALL`]), the request
//! is answered `503` `database_unavailable` with `Retry-After`, in the shape its caller
//! reads (a request that may have written, not knowing, says its outcome is unknown). A
//! database that answers slowly is the operations' own bound ([`crate::reach::DEADLINE`]):
//! this layer cannot tell it from a client slow to send its body. The shapes:
//!
//! - the API's envelope under `/api/`;
//! - a JSON-RPC error (`-32000`, the envelope as its `data`) at `/mcp`;
//! - RFC 6749's `temporarily_unavailable` at OAuth's JSON endpoints (token, registration,
//!   revocation);
//! - a person's page (or JSON to a page's script) everywhere else.
//!
//! Only the wait for the answer's head is bounded: a stream (server-sent events) that has
//! begun is not. What the request left running on a blocking thread finishes when the
//! database answers again; operations of the tracker are marked abandoned and commit
//! nothing then ([`super::operations`]).

use axum::extract::{Request, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use mcp_common::ToolError;

use super::{ApiError, ApiState};
use jility_core::store::StoreError;

/// Who reads an answer of a path.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Reader {
    Api,
    Mcp,
    OAuthJson,
    Person,
}

impl Reader {
    fn of(path: &str) -> Self {
        let under = |prefix: &str| {
            path == prefix
                || path
                    .strip_prefix(prefix)
                    .is_some_and(|rest| rest.starts_with('/'))
        };
        if under("/api") {
            Reader::Api
        } else if under(mcp_common::http::MCP_PATH) {
            Reader::Mcp
        } else if [
            crate::public::TOKEN_PATH,
            crate::public::REGISTER_PATH,
            crate::public::REVOKE_PATH,
        ]
        .contains(&path)
        {
            Reader::OAuthJson
        } else {
            Reader::Person
        }
    }
}

/// The outermost layer: the request's answer, or `503` once the database stops answering.
pub async fn answer_while_the_database_answers(
    State(state): State<ApiState>,
    request: Request,
    next: Next,
) -> Response {
    let reader = Reader::of(request.uri().path());
    // Only a page needs the request's headers (JSON to its script, else a page).
    let headers = (reader == Reader::Person).then(|| request.headers().clone());
    // Whether the request may have changed something: then, not knowing, its refusal says
    // the outcome is unknown.
    let writes = !matches!(
        *request.method(),
        axum::http::Method::GET | axum::http::Method::HEAD | axum::http::Method::OPTIONS
    );
    let served = crate::reach::bounded_request(state.db.health(), writes, next.run(request));
    match crate::reach::REQUEST_BEGAN
        .scope(std::time::Instant::now(), served)
        .await
    {
        Ok(response) => response,
        Err(stalled) => refusal(reader, stalled, headers.as_ref()),
    }
}

fn refusal(reader: Reader, stalled: StoreError, headers: Option<&HeaderMap>) -> Response {
    let err = ToolError::from(stalled);
    let retry_after = err.retry_after_secs.unwrap_or(1);
    let mut response = match reader {
        Reader::Api => return ApiError(err).into_response(),
        Reader::Mcp => {
            let body = serde_json::json!({
                "jsonrpc": "2.0",
                "id": null,
                "error": {"code": -32000, "message": err.message, "data": err},
            });
            (StatusCode::SERVICE_UNAVAILABLE, axum::Json(body)).into_response()
        }
        Reader::OAuthJson => {
            let body = serde_json::json!({
                "error": "temporarily_unavailable",
                "error_description": format!("{}. {}", err.message, err.hint_text()),
            });
            let mut response = (StatusCode::SERVICE_UNAVAILABLE, axum::Json(body)).into_response();
            response
                .headers_mut()
                .insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
            response
        }
        Reader::Person => {
            let empty = HeaderMap::new();
            jility_web::WebError::Tool(err).answer(headers.unwrap_or(&empty))
        }
    };
    if let Ok(value) = HeaderValue::from_str(&retry_after.to_string()) {
        response.headers_mut().insert(header::RETRY_AFTER, value);
    }
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_are_read_by_whom_they_serve() {
        assert_eq!(Reader::of("/api/v1/tickets"), Reader::Api);
        assert_eq!(Reader::of("/api"), Reader::Api);
        assert_eq!(Reader::of("/apix"), Reader::Person);
        assert_eq!(Reader::of("/mcp"), Reader::Mcp);
        assert_eq!(Reader::of("/mcp/x"), Reader::Mcp);
        assert_eq!(Reader::of("/oauth/token"), Reader::OAuthJson);
        assert_eq!(Reader::of("/oauth/register"), Reader::OAuthJson);
        assert_eq!(Reader::of("/oauth/authorize"), Reader::Person);
        assert_eq!(Reader::of("/login"), Reader::Person);
        assert_eq!(Reader::of("/w/1/tickets"), Reader::Person);
    }
}
