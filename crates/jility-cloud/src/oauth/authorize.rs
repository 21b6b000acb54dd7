//! `GET/POST /oauth/authorize`: where a person approves (or denies) an MCP client.
//!
//! **What is sent to the client's redirect URI, and when.** Only the consent form's answer
//! goes there: a `POST` carrying the signed-in person's session and its CSRF token (so the
//! person saw the consent page naming the client and the host it returns to) is answered
//! with a redirect carrying the `code`, or `access_denied` (they denied), or
//! `invalid_scope` (nothing they could approve was ticked) — with `state` and `iss`
//! (RFC 9207). Nothing else is ever redirected: a wrong client or redirect URI, and every
//! fault of the request itself (`response_type` other than `code`, no PKCE, `plain` PKCE, a
//! malformed challenge, a foreign `resource`, an unknown scope or `full_access`) is a page
//! here (400) that names the error and sends nothing anywhere — for every kind of client
//! (registered with an `https` or a loopback redirect, or described by a metadata
//! document), signed in or not, on `GET` and on `POST`. A request that comes to this server
//! from anywhere therefore cannot bounce a visitor to a stranger's site (the open
//! redirector of RFC 9700 §4.11.2), nor to a port of their own machine (a loopback
//! redirect matches on any port).
//!
//! The order: the client and its redirect URI, then the request's parameters (both a page
//! when wrong), then the person (not signed in: to the sign-in page and back here), then —
//! on `POST` — the CSRF token, before anything is sent anywhere. The page names the client,
//! the host it sends the person back to and the scopes asked; the person picks the workspace
//! (their role there decides which scopes can be granted) and approves some of them, or
//! denies. The consent page's Content-Security-Policy lets forms go to the client's
//! redirect origin too (Chromium applies `form-action` to the redirect after the post).

use axum::body::Bytes;
use axum::extract::{RawQuery, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Redirect, Response};
use jility_web::pages::{field, fields, form_pairs};
use jility_web::{WebError, layout};
use maud::{Markup, html};
use url::Url;

use super::clients::Client;
use super::grants::{NewCode, SCOPES, grantable, parse_scope};
use super::pkce;
use crate::accounts::{Membership, Session};
use crate::web::cookies;

/// The parameters of an authorization request, as sent.
#[derive(Debug, Clone, Default)]
struct Ask {
    response_type: String,
    client_id: String,
    redirect_uri: String,
    state: Option<String>,
    scope: Option<String>,
    code_challenge: String,
    code_challenge_method: String,
    resource: Option<String>,
    /// A parameter sent more than once (RFC 6749 §3.1: they must not be), if any.
    repeated: Option<&'static str>,
}

/// The parameters of an authorization request.
const PARAMETERS: [&str; 8] = [
    "response_type",
    "client_id",
    "redirect_uri",
    "state",
    "scope",
    "code_challenge",
    "code_challenge_method",
    "resource",
];

impl Ask {
    fn from_pairs(pairs: &[(String, String)]) -> Self {
        let get = |name: &str| field(pairs, name).unwrap_or_default().to_string();
        let opt = |name: &str| field(pairs, name).map(str::to_string);
        let repeated = PARAMETERS
            .into_iter()
            .find(|name| pairs.iter().filter(|(k, _)| k == name).count() > 1);
        Self {
            repeated,
            response_type: get("response_type"),
            client_id: get("client_id"),
            redirect_uri: get("redirect_uri"),
            state: opt("state"),
            scope: opt("scope"),
            code_challenge: get("code_challenge"),
            code_challenge_method: get("code_challenge_method"),
            resource: opt("resource").filter(|r| !r.is_empty()),
        }
    }

    /// The request's parameters as hidden fields (the consent form carries them).
    fn hidden(&self) -> Markup {
        let pairs = [
            ("response_type", Some(&self.response_type)),
            ("client_id", Some(&self.client_id)),
            ("redirect_uri", Some(&self.redirect_uri)),
            ("state", self.state.as_ref()),
            ("scope", self.scope.as_ref()),
            ("code_challenge", Some(&self.code_challenge)),
            ("code_challenge_method", Some(&self.code_challenge_method)),
            ("resource", self.resource.as_ref()),
        ];
        html! {
            @for (name, value) in pairs {
                @if let Some(value) = value {
                    input type="hidden" name=(name) value=(value);
                }
            }
        }
    }

    fn query(&self) -> String {
        let mut out = form_urlencoded::Serializer::new(String::new());
        out.append_pair("response_type", &self.response_type)
            .append_pair("client_id", &self.client_id)
            .append_pair("redirect_uri", &self.redirect_uri)
            .append_pair("code_challenge", &self.code_challenge)
            .append_pair("code_challenge_method", &self.code_challenge_method);
        for (name, value) in [
            ("state", &self.state),
            ("scope", &self.scope),
            ("resource", &self.resource),
        ] {
            if let Some(value) = value {
                out.append_pair(name, value);
            }
        }
        out.finish()
    }
}

/// A fault the client is told of through its redirect URI.
struct Refusal {
    error: &'static str,
    description: String,
}

fn refusal(error: &'static str, description: impl Into<String>) -> Refusal {
    Refusal {
        error,
        description: description.into(),
    }
}

/// Back to the client at `redirect_uri` with `params`, `state` and `iss`.
fn back_to_client(
    redirect_uri: &str,
    params: &[(&str, &str)],
    state: Option<&str>,
    issuer: &str,
) -> Response {
    let Ok(mut url) = Url::parse(redirect_uri) else {
        return WebError::NotFound.into_response();
    };
    {
        let mut query = url.query_pairs_mut();
        for (name, value) in params {
            query.append_pair(name, value);
        }
        if let Some(state) = state {
            query.append_pair("state", state);
        }
        query.append_pair("iss", issuer);
    }
    let mut response = Redirect::to(url.as_str()).into_response();
    response
        .headers_mut()
        .insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    response
}

fn refused(ask: &Ask, refusal: &Refusal, issuer: &str) -> Response {
    back_to_client(
        &ask.redirect_uri,
        &[
            ("error", refusal.error),
            ("error_description", &refusal.description),
        ],
        ask.state.as_deref(),
        issuer,
    )
}

/// A page saying why the request cannot go on (nothing is sent anywhere).
fn dead_end(status: StatusCode, message: &str, hint: &str) -> Response {
    (
        status,
        layout::bare(
            "Cannot sign in this client",
            html! {
                main id="main" class="narrow" data-page="authorize-error" {
                    h1 { "This sign-in request cannot go on" }
                    (layout::notice("error", message, Some(hint)))
                }
            },
        ),
    )
        .into_response()
}

/// The client of `ask`, checked with its redirect URI; else the page to show.
async fn client_of(state: &super::State, ask: &Ask) -> Result<Client, Response> {
    if super::documents::is_document_id(&ask.client_id) {
        let client = match super::documents::document_client(&state.oauth, &ask.client_id).await {
            Ok(client) => client,
            Err(err) => {
                return Err(dead_end(
                    StatusCode::BAD_REQUEST,
                    &err.description,
                    "The application's description (its client ID metadata document) could not be used: nothing was sent to it.",
                ));
            }
        };
        return match redirect_refused(&client, ask) {
            Some(page) => Err(page),
            None => Ok(client),
        };
    }
    let oauth = state.oauth.clone();
    let id = ask.client_id.clone();
    let found = tokio::task::spawn_blocking(move || oauth.client(&id)).await;
    let client = match found {
        Ok(Ok(Some(client))) => client,
        Ok(Ok(None)) => {
            return Err(dead_end(
                StatusCode::BAD_REQUEST,
                "The application asking to sign in is not registered here",
                "Remove the server from the application and add it again: it registers itself anew.",
            ));
        }
        Ok(Err(err)) => return Err(WebError::Tool(err).into_response()),
        Err(err) => {
            return Err(WebError::Tool(mcp_common::ToolError::internal(format!(
                "The request failed: {err}"
            )))
            .into_response());
        }
    };
    match redirect_refused(&client, ask) {
        Some(page) => Err(page),
        None => Ok(client),
    }
}

/// The page to show when `ask`'s redirect URI is not one of `client`'s own.
fn redirect_refused(client: &Client, ask: &Ask) -> Option<Response> {
    if !client.redirects_to(&ask.redirect_uri) {
        return Some(dead_end(
            StatusCode::BAD_REQUEST,
            "The application asked to send you back to an address it did not register",
            "Nothing was sent to it. Remove the server from the application and add it again.",
        ));
    }
    None
}

/// The page for a fault of the request itself: its RFC 6749 error and why, shown to the
/// person — never redirected (see the module's documentation).
fn request_refused(client: &Client, refusal: &Refusal) -> Response {
    let mut response = (
        StatusCode::BAD_REQUEST,
        layout::bare(
            "Cannot sign in this client",
            html! {
                main id="main" class="narrow" data-page="authorize-error" data-error=(refusal.error) {
                    h1 { "This sign-in request cannot go on" }
                    (layout::notice(
                        "error",
                        &format!("{} sent a request this server does not take: {}", client.client_name, refusal.description),
                        Some("Nothing was sent back to the application. Close this page; if the application keeps asking this, tell its makers."),
                    ))
                    p class="help" { "Error: " code { (refusal.error) } }
                }
            },
        ),
    )
        .into_response();
    response
        .headers_mut()
        .insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    response
}

/// What the rest of the request must be (after the client and redirect URI).
fn check_rest(ask: &Ask, resource: &str) -> Result<Vec<String>, Refusal> {
    if let Some(name) = ask.repeated {
        return Err(refusal(
            "invalid_request",
            format!("The parameter `{name}` is sent more than once"),
        ));
    }
    if ask.response_type != "code" {
        return Err(refusal(
            "unsupported_response_type",
            "Only the response type `code` is offered",
        ));
    }
    if ask.code_challenge.is_empty() {
        return Err(refusal(
            "invalid_request",
            "PKCE is required: send code_challenge with code_challenge_method=S256",
        ));
    }
    if ask.code_challenge_method != "S256" {
        return Err(refusal(
            "invalid_request",
            "Only the PKCE method S256 is accepted (not `plain`)",
        ));
    }
    if !pkce::well_formed_challenge(&ask.code_challenge) {
        return Err(refusal(
            "invalid_request",
            "The code_challenge is not an S256 challenge (43 base64url characters)",
        ));
    }
    if let Some(asked) = &ask.resource
        && asked.trim_end_matches('/') != resource
    {
        return Err(refusal(
            "invalid_target",
            format!("This server grants access to {resource} only"),
        ));
    }
    parse_scope(ask.scope.as_deref()).map_err(|e| refusal("invalid_scope", e.description))
}

/// The page's policy: the usual, with forms allowed to go on to the client's origin.
fn csp_for(redirect_uri: &str) -> String {
    let origin = Url::parse(redirect_uri)
        .ok()
        .and_then(|url| {
            let host = url.host_str()?.to_string();
            let loopback = matches!(host.as_str(), "127.0.0.1" | "[::1]" | "localhost");
            Some(if loopback {
                format!("{}://{host}:*", url.scheme())
            } else {
                url.origin().ascii_serialization()
            })
        })
        .unwrap_or_default();
    jility_web::security::CSP.replace(
        "form-action 'self'",
        &format!("form-action 'self' {origin}"),
    )
}

fn consent_page(
    ask: &Ask,
    client: &Client,
    session: &Session,
    memberships: &[Membership],
    chosen: Option<&Membership>,
    asked: &[String],
) -> Response {
    let host = Client::redirect_host(&ask.redirect_uri);
    let body = html! {
        main id="main" class="narrow" data-page="authorize" {
            h1 { "Allow " (client.client_name) " to use jility?" }
            p {
                "Signed in as " (session.user.name) " (" (session.user.email) "). "
                "After you decide you go back to "
                strong { (host) } "."
            }
            @if let Some(uri) = &client.client_uri { p class="help" { "The application's site: " (uri) } }
            @match chosen {
                None => {
                    form method="get" action=(super::AUTHORIZE_PATH) data-native {
                        (ask.hidden())
                        p {
                            label for="workspace" { "Workspace" } br;
                            select id="workspace" name="workspace" {
                                @for m in memberships {
                                    option value=(m.workspace.name) { (m.workspace.name) " (" (m.role) ")" }
                                }
                            }
                        }
                        p { button type="submit" { "Continue" } }
                    }
                }
                Some(membership) => {
                    @let allowed = grantable(membership.role);
                    form method="post" action=(super::AUTHORIZE_PATH) data-native {
                        input type="hidden" name="_csrf" value=(session.csrf_token);
                        input type="hidden" name="workspace" value=(membership.workspace.name);
                        (ask.hidden())
                        p { "In " strong { (membership.workspace.name) } " (your role: " (membership.role) "), it may:" }
                        fieldset class="scopes" {
                            legend { "Scopes" }
                            @for scope in SCOPES {
                                @let wanted = asked.is_empty() || asked.iter().any(|a| a == scope);
                                @let can = allowed.iter().any(|a| a == scope);
                                @if wanted {
                                    div class="check" {
                                        @let id = format!("scope-{}", scope.replace(':', "-"));
                                        input id=(id) type="checkbox" name="grant" value=(scope) checked[can] disabled[!can];
                                        label for=(id) { code { (scope) } (describe(scope)) @if !can { " — not allowed for your role" } }
                                    }
                                }
                            }
                        }
                        p {
                            button type="submit" name="decision" value="approve" { "Allow" } " "
                            button type="submit" name="decision" value="deny" class="secondary" { "Deny" }
                        }
                    }
                    @if memberships.len() > 1 {
                        p class="help" {
                            a href=(format!("{}?{}", super::AUTHORIZE_PATH, ask.query())) { "Choose another workspace" }
                        }
                    }
                }
            }
            p class="help" { "You can revoke its access any time under Settings → Connected clients." }
        }
    };
    let mut response = layout::bare("Allow access", body).into_response();
    if let Ok(csp) = HeaderValue::from_str(&csp_for(&ask.redirect_uri)) {
        response
            .headers_mut()
            .insert(header::CONTENT_SECURITY_POLICY, csp);
    }
    response
}

fn describe(scope: &str) -> &'static str {
    match scope {
        "tickets:read" => ": read tickets, search, history",
        "tickets:write" => ": create, edit, move and claim tickets",
        "tickets:delete" => ": delete tickets",
        "comments:write" => ": comment on tickets",
        _ => "",
    }
}

/// The person's memberships, and the one `workspace` names.
async fn memberships_of(
    state: &super::State,
    session: &Session,
) -> Result<Vec<Membership>, WebError> {
    let user_id = session.user.id;
    state
        .site
        .blocking(move |accounts| accounts.memberships(user_id))
        .await
}

/// An authorization request checked as far as a signed-in person.
struct Checked {
    client: Client,
    issuer: String,
    resource: String,
    asked: Vec<String>,
    session: Session,
}

/// Check `ask` — its client and redirect URI, then the rest (a page when wrong: nothing is
/// sent to the client), then the person (not signed in: to the sign-in page and back here).
async fn checked(
    state: &super::State,
    headers: &HeaderMap,
    ask: &Ask,
) -> Result<Checked, Response> {
    let client = client_of(state, ask).await?;
    let tls = state.site.tls();
    let issuer = crate::public::base(headers, tls);
    let resource = crate::public::resource(headers, tls);
    let asked = check_rest(ask, &resource).map_err(|refusal| request_refused(&client, &refusal))?;
    let session = match state.site.session(headers).await {
        Ok(Some(session)) => session,
        Ok(None) => {
            let next = format!("{}?{}", super::AUTHORIZE_PATH, ask.query());
            return Err(
                Redirect::to(&format!("/login?next={}", layout::segment(&next))).into_response(),
            );
        }
        Err(err) => return Err(err.into_response()),
    };
    Ok(Checked {
        client,
        issuer,
        resource,
        asked,
        session,
    })
}

/// `GET /oauth/authorize?…`.
pub async fn page(
    State(state): State<super::State>,
    RawQuery(query): RawQuery,
    headers: HeaderMap,
) -> Response {
    let pairs = form_pairs(query.as_deref().unwrap_or_default().as_bytes());
    let ask = Ask::from_pairs(&pairs);
    let Checked {
        client,
        asked,
        session,
        ..
    } = match checked(&state, &headers, &ask).await {
        Ok(checked) => checked,
        Err(answer) => return answer,
    };
    let memberships = match memberships_of(&state, &session).await {
        Ok(m) => m,
        Err(err) => return err.into_response(),
    };
    if memberships.is_empty() {
        return dead_end(
            StatusCode::FORBIDDEN,
            "You belong to no workspace on this server",
            "Ask an admin of a workspace for an invite link, then sign in again from the application.",
        );
    }
    let chosen = match field(&pairs, "workspace") {
        Some(name) => memberships.iter().find(|m| m.workspace.name == name),
        None if memberships.len() == 1 => memberships.first(),
        None => None,
    };
    consent_page(&ask, &client, &session, &memberships, chosen, &asked)
}

/// `POST /oauth/authorize`: the person's decision. Only after the session's CSRF token is
/// checked does anything go to the client.
pub async fn decide(
    State(state): State<super::State>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let pairs = form_pairs(&body);
    let ask = Ask::from_pairs(&pairs);
    let Checked {
        client,
        issuer,
        resource,
        asked,
        session,
    } = match checked(&state, &headers, &ask).await {
        Ok(checked) => checked,
        Err(answer) => return answer,
    };
    if let Err(err) = cookies::check_session_form(&session, &headers, field(&pairs, "_csrf")) {
        return err.into_response();
    }
    if field(&pairs, "decision") != Some("approve") {
        tracing::info!(client_id = %client.client_id, "a person denied an OAuth client");
        return refused(
            &ask,
            &refusal("access_denied", "The person denied the request"),
            &issuer,
        );
    }
    let memberships = match memberships_of(&state, &session).await {
        Ok(m) => m,
        Err(err) => return err.into_response(),
    };
    let Some(membership) = field(&pairs, "workspace")
        .and_then(|name| memberships.iter().find(|m| m.workspace.name == name))
    else {
        return WebError::NotFound.into_response();
    };
    let allowed = grantable(membership.role);
    let picked = fields(&pairs, "grant");
    let scopes: Vec<String> = SCOPES
        .iter()
        .filter(|s| picked.contains(s))
        .filter(|s| asked.is_empty() || asked.iter().any(|a| a == *s))
        .filter(|s| allowed.iter().any(|a| a == *s))
        .map(|s| (*s).to_string())
        .collect();
    if scopes.is_empty() {
        return refused(
            &ask,
            &refusal(
                "invalid_scope",
                "None of the scopes asked for was approved, or the person's role allows none of them",
            ),
            &issuer,
        );
    }
    let oauth = state.oauth.clone();
    let (user_id, workspace_id) = (session.user.id, membership.workspace.id);
    let (redirect_uri, challenge) = (ask.redirect_uri.clone(), ask.code_challenge.clone());
    let issued = tokio::task::spawn_blocking(move || {
        oauth.issue_code(&NewCode {
            client: &client,
            user_id,
            workspace_id,
            scopes: &scopes,
            redirect_uri: &redirect_uri,
            code_challenge: &challenge,
            resource: &resource,
        })
    })
    .await;
    match issued {
        Ok(Ok(code)) => back_to_client(
            &ask.redirect_uri,
            &[("code", code.expose())],
            ask.state.as_deref(),
            &issuer,
        ),
        Ok(Err(err)) => WebError::Tool(err).into_response(),
        Err(err) => WebError::Tool(mcp_common::ToolError::internal(format!(
            "The request failed: {err}"
        )))
        .into_response(),
    }
}
