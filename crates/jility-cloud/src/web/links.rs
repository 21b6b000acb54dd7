//! The pages of one-time links: `GET/POST /invite/{secret}` (a new person signs up with
//! name, email and password; a signed-in person joins) and `GET/POST /reset/{secret}` (a
//! new password, twice; every session of the person ends). A link that is unknown, used,
//! revoked or expired is one 404 page. Forms without a session carry the double-submit
//! token ([`super::cookies`]); a signed-in person's, their session's.

use std::net::SocketAddr;

use axum::Extension;
use axum::body::Bytes;
use axum::extract::{ConnectInfo, Path, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Redirect, Response};
use jility_web::pages::{field, form_pairs};
use jility_web::{WebError, layout};
use maud::{Markup, html};
use mcp_common::ToolError;

use super::answers::{client_addr, refusal_status, retry_after, with_cookies};
use super::cookies;
use super::site::CloudSite;
use crate::accounts::{AcceptAs, InviteInfo, Session};
use jility_core::errors;

fn gone(what: &str) -> Response {
    WebError::Tool(
        ToolError::not_found(format!("This {what} link is not valid"))
            .with_hint("It may have been used, revoked or have expired: ask an admin of the workspace for a new one."),
    )
    .into_response()
}

fn notice_of(err: Option<&WebError>) -> Markup {
    html! {
        div id="notice" {
            @if let Some(err) = err {
                @let err = err.as_tool_error();
                (layout::notice("error", &err.message, Some(err.hint_text())))
            }
        }
    }
}

fn invite_page(
    secret: &str,
    info: &InviteInfo,
    csrf: &str,
    session: Option<&Session>,
    typed: (&str, &str),
    err: Option<&WebError>,
) -> Markup {
    let action = format!("/invite/{secret}");
    layout::bare(
        "Join a workspace",
        html! {
            main id="main" class="narrow" data-page="invite" {
                h1 { "Join " (info.workspace) " as " (info.role) }
                (notice_of(err))
                @if let Some(session) = session {
                    p { "Signed in as " (session.user.name) " (" (session.user.email) ")." }
                    form method="post" action=(action) data-native {
                        input type="hidden" name="_csrf" value=(csrf);
                        button type="submit" { "Join " (info.workspace) " as " (info.role) }
                    }
                } @else {
                    p { "Make your account to join. The link works once, until " (jility_web::pages::when(&info.expires_at)) "." }
                    form method="post" action=(action) data-native {
                        input type="hidden" name="_csrf" value=(csrf);
                        p {
                            label for="name" { "Your name" } br;
                            input id="name" type="text" name="name" value=(typed.0) required maxlength="100" autocomplete="name";
                        }
                        p {
                            label for="email" { "Email" } br;
                            input id="email" type="email" name="email" value=(typed.1) required autocomplete="username";
                        }
                        p {
                            label for="password" { "Password (10 characters or more)" } br;
                            input id="password" type="password" name="password" required minlength="10" autocomplete="new-password";
                        }
                        p { button type="submit" { "Join " (info.workspace) } }
                    }
                    p class="help" {
                        "Have an account already? "
                        a href=(format!("/login?next={}", layout::segment(&format!("/invite/{secret}")))) { "Sign in" }
                        " and open this link again."
                    }
                }
            }
        },
    )
}

async fn invite_info(site: &CloudSite, secret: &str) -> Result<Option<InviteInfo>, WebError> {
    let secret = secret.to_string();
    site.blocking(move |accounts| accounts.invite_by_secret(&secret))
        .await
}

/// `GET /invite/{secret}`.
pub async fn invite(
    State(site): State<CloudSite>,
    Path(secret): Path<String>,
    headers: HeaderMap,
) -> Response {
    let info = match invite_info(&site, &secret).await {
        Ok(Some(info)) => info,
        Ok(None) => return gone("invite"),
        Err(err) => return err.into_response(),
    };
    match site.session(&headers).await {
        Ok(Some(session)) => {
            let csrf = session.csrf_token.clone();
            invite_page(&secret, &info, &csrf, Some(&session), ("", ""), None).into_response()
        }
        Ok(None) => match cookies::form_token(&headers, site.tls()) {
            Ok((csrf, cookie)) => with_cookies(
                StatusCode::OK,
                invite_page(&secret, &info, &csrf, None, ("", ""), None),
                &[cookie],
            ),
            Err(err) => err.into_response(),
        },
        Err(err) => err.into_response(),
    }
}

/// `POST /invite/{secret}`: join as the signed-in person, or sign up (then signed in).
pub async fn accept(
    State(site): State<CloudSite>,
    Path(secret): Path<String>,
    connect: Option<Extension<ConnectInfo<SocketAddr>>>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let pairs = form_pairs(&body);
    let info = match invite_info(&site, &secret).await {
        Ok(Some(info)) => info,
        Ok(None) => return gone("invite"),
        Err(err) => return err.into_response(),
    };
    let board = format!("{}/board", layout::base(&info.workspace));
    let session = match site.session(&headers).await {
        Ok(session) => session,
        Err(err) => return err.into_response(),
    };
    if let Some(session) = session {
        if let Err(err) = cookies::check_session_form(&session, &headers, field(&pairs, "_csrf")) {
            return err.into_response();
        }
        let user_id = session.user.id;
        let joined = site
            .blocking(move |accounts| accounts.accept_invite(&secret, AcceptAs::Existing(user_id)))
            .await;
        return match joined {
            Ok(_) => Redirect::to(&board).into_response(),
            Err(err) => err.into_response(),
        };
    }
    if let Err(err) = cookies::check_double_submit(&headers, field(&pairs, "_csrf")) {
        return err.into_response();
    }
    let name = field(&pairs, "name").unwrap_or_default().to_string();
    let email = field(&pairs, "email").unwrap_or_default().to_string();
    let password = field(&pairs, "password").unwrap_or_default().to_string();
    let from = client_addr(connect.as_ref().map(|Extension(c)| c));
    let (n, e, key) = (name.clone(), email.clone(), secret.clone());
    let made = site
        .blocking(move |accounts| {
            accounts.accept_invite(
                &key,
                AcceptAs::NewUser {
                    email: &e,
                    name: &n,
                    password: &password,
                    from,
                },
            )?;
            let user = accounts.user_by_email(&e)?.ok_or_else(|| {
                ToolError::internal("the account an invite just made is not there")
            })?;
            accounts.create_session(user)
        })
        .await;
    match made {
        Ok(new) => {
            tracing::info!(
                workspace_id = info.workspace_id,
                "a new person joined through an invite"
            );
            let mut response = Redirect::to(&board).into_response();
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
            let page = invite_page(&secret, &info, &csrf, None, (&name, &email), Some(&err));
            retry_after(with_cookies(status, page, &[cookie]), retry)
        }
    }
}

fn reset_page(secret: &str, email: &str, csrf: &str, err: Option<&WebError>) -> Markup {
    layout::bare(
        "Set your password",
        html! {
            main id="main" class="narrow" data-page="reset" {
                h1 { "Set your password" }
                p { "For " (email) ". Every browser signed in as you is signed out." }
                (notice_of(err))
                form method="post" action=(format!("/reset/{secret}")) data-native {
                    input type="hidden" name="_csrf" value=(csrf);
                    p {
                        label for="password" { "New password (10 characters or more)" } br;
                        input id="password" type="password" name="password" required minlength="10" autocomplete="new-password";
                    }
                    p {
                        label for="confirm" { "The same again" } br;
                        input id="confirm" type="password" name="confirm" required minlength="10" autocomplete="new-password";
                    }
                    p { button type="submit" { "Set the password" } }
                }
            }
        },
    )
}

/// `GET /reset/{secret}`.
pub async fn reset(
    State(site): State<CloudSite>,
    Path(secret): Path<String>,
    headers: HeaderMap,
) -> Response {
    let key = secret.clone();
    let user = match site
        .blocking(move |accounts| accounts.reset_by_secret(&key))
        .await
    {
        Ok(Some(user)) => user,
        Ok(None) => return gone("reset"),
        Err(err) => return err.into_response(),
    };
    match cookies::form_token(&headers, site.tls()) {
        Ok((csrf, cookie)) => with_cookies(
            StatusCode::OK,
            reset_page(&secret, &user.email, &csrf, None),
            &[cookie],
        ),
        Err(err) => err.into_response(),
    }
}

/// `POST /reset/{secret}`: password, confirm. Then on to the sign-in page.
pub async fn set_password(
    State(site): State<CloudSite>,
    Path(secret): Path<String>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let pairs = form_pairs(&body);
    let key = secret.clone();
    let user = match site
        .blocking(move |accounts| accounts.reset_by_secret(&key))
        .await
    {
        Ok(Some(user)) => user,
        Ok(None) => return gone("reset"),
        Err(err) => return err.into_response(),
    };
    if let Err(err) = cookies::check_double_submit(&headers, field(&pairs, "_csrf")) {
        return err.into_response();
    }
    let password = field(&pairs, "password").unwrap_or_default().to_string();
    let confirm = field(&pairs, "confirm").unwrap_or_default();
    let done = if password == confirm {
        let key = secret.clone();
        site.blocking(move |accounts| accounts.reset_password(&key, &password))
            .await
    } else {
        Err(WebError::Tool(
            ToolError::new(errors::INVALID_INPUT, "The two passwords differ")
                .with_hint("Type the same new password in both fields."),
        ))
    };
    match done {
        Ok(user) => {
            site.access_changed(super::site::Access::User(user.id))
                .await;
            let mut response = Redirect::to("/login?reset=1").into_response();
            // Whatever session this browser had ended with the others.
            response
                .headers_mut()
                .append(header::SET_COOKIE, cookies::end_session(site.tls()));
            response
        }
        Err(err) => {
            let (csrf, cookie) = match cookies::form_token(&headers, site.tls()) {
                Ok(token) => token,
                Err(err) => return err.into_response(),
            };
            let (status, retry) = refusal_status(&err);
            let page = reset_page(&secret, &user.email, &csrf, Some(&err));
            retry_after(with_cookies(status, page, &[cookie]), retry)
        }
    }
}
