//! `GET/POST /login` and `POST /logout`.
//!
//! Sign-in answers one message for an unknown email and a wrong password (the accounts'),
//! and a limited one (too many failures for the email or the address) with `Retry-After`.
//! The password is never logged nor shown back. `next` (where to go after) is kept only
//! when it is a path of this site.

use std::net::SocketAddr;

use axum::Extension;
use axum::body::Bytes;
use axum::extract::{ConnectInfo, RawQuery, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Redirect, Response};
use jility_web::pages::{field, form_pairs};
use jility_web::{WebError, layout};
use maud::{Markup, html};

use super::answers::{client_addr, local_next, refusal_status, retry_after, with_cookies};
use super::cookies;
use super::site::CloudSite;

/// What the sign-in page shows above its form.
enum Said<'a> {
    Nothing,
    Refused(&'a WebError),
    PasswordSet,
}

fn login_page(csrf: &str, next: &str, email: &str, said: Said<'_>) -> Markup {
    layout::bare(
        "Sign in",
        html! {
            main id="main" class="narrow" data-page="login" {
                h1 { "Sign in" }
                div id="notice" {
                    @match said {
                        Said::Refused(err) => {
                            @let err = err.as_tool_error();
                            (layout::notice("error", &err.message, Some(err.hint_text())))
                        }
                        Said::PasswordSet => (layout::notice("ok", "Your password is set. Sign in with it.", None)),
                        Said::Nothing => {}
                    }
                }
                form method="post" action="/login" data-native {
                    input type="hidden" name="_csrf" value=(csrf);
                    input type="hidden" name="next" value=(next);
                    p {
                        label for="email" { "Email" } br;
                        input id="email" type="email" name="email" value=(email) required autocomplete="username";
                    }
                    p {
                        label for="password" { "Password" } br;
                        input id="password" type="password" name="password" required autocomplete="current-password";
                    }
                    p { button type="submit" { "Sign in" } }
                }
                p class="help" { "Lost your password? Ask an admin of your workspace for a reset link." }
            }
        },
    )
}

fn query_pairs(query: Option<&str>) -> Vec<(String, String)> {
    form_pairs(query.unwrap_or_default().as_bytes())
}

/// `GET /login?next=`: the form (or, signed in already, straight on to `next`).
pub async fn page(
    State(site): State<CloudSite>,
    RawQuery(query): RawQuery,
    headers: HeaderMap,
) -> Response {
    let pairs = query_pairs(query.as_deref());
    let next = local_next(field(&pairs, "next"));
    if let Ok(Some(_)) = site.session(&headers).await {
        return Redirect::to(&next).into_response();
    }
    let (csrf, cookie) = match cookies::form_token(&headers, site.tls()) {
        Ok(token) => token,
        Err(err) => return err.into_response(),
    };
    let said = if field(&pairs, "reset").is_some() {
        Said::PasswordSet
    } else {
        Said::Nothing
    };
    with_cookies(
        StatusCode::OK,
        login_page(&csrf, &next, "", said),
        &[cookie],
    )
}

/// `POST /login`: email, password, next, `_csrf`.
pub async fn submit(
    State(site): State<CloudSite>,
    connect: Option<Extension<ConnectInfo<SocketAddr>>>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let pairs = form_pairs(&body);
    let next = local_next(field(&pairs, "next"));
    let email = field(&pairs, "email").unwrap_or_default().to_string();
    if let Err(err) = cookies::check_double_submit(&headers, field(&pairs, "_csrf")) {
        return err.into_response();
    }
    let password = field(&pairs, "password").unwrap_or_default().to_string();
    let addr = client_addr(connect.as_ref().map(|Extension(c)| c));
    let typed = email.clone();
    let signed_in = site
        .blocking(move |accounts| accounts.login(&typed, &password, addr))
        .await;
    match signed_in {
        Ok(new) => {
            let mut response = Redirect::to(&next).into_response();
            if let Some(cookie) = cookies::session(&new.secret, site.tls()) {
                response.headers_mut().append(header::SET_COOKIE, cookie);
            }
            response
        }
        Err(err) => {
            let (csrf, cookie) = match cookies::form_token(&headers, site.tls()) {
                Ok(token) => token,
                Err(err) => return err.into_response(),
            };
            let (status, retry) = refusal_status(&err);
            let page = login_page(&csrf, &next, &email, Said::Refused(&err));
            retry_after(with_cookies(status, page, &[cookie]), retry)
        }
    }
}

/// `POST /logout` (`_csrf` of the session): the session ends, its cookie is cleared.
pub async fn logout(State(site): State<CloudSite>, headers: HeaderMap, body: Bytes) -> Response {
    // Another site's form may not sign this browser out either.
    if let Err(err) = jility_web::security::check_origin(&headers) {
        return err.into_response();
    }
    let pairs = form_pairs(&body);
    let session = match site.session(&headers).await {
        Ok(session) => session,
        Err(err) => return err.into_response(),
    };
    let mut response = Redirect::to("/login").into_response();
    if let Some(session) = session {
        if let Err(err) = cookies::check_session_form(&session, &headers, field(&pairs, "_csrf")) {
            return err.into_response();
        }
        if let Some(secret) = cookies::get(&headers, cookies::SESSION)
            && let Err(err) = site
                .blocking(move |accounts| accounts.logout(&secret))
                .await
        {
            return err.into_response();
        }
        site.access_changed(super::site::Access::Session(session.id))
            .await;
        tracing::info!(session_id = session.id, "signed out");
    }
    response
        .headers_mut()
        .append(header::SET_COOKIE, cookies::end_session(site.tls()));
    response
}
