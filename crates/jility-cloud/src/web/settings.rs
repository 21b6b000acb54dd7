//! `GET /w/{ws}/settings` (owners and admins): the members with their roles (change,
//! remove) and the pending invites (make one: its link shown once; revoke). The rules of
//! who may change whom are the accounts' ([`crate::accounts::members`]); a member or a
//! viewer is refused the page ([`WebError::Forbidden`]), a person of another workspace
//! gets its 404.

use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::Response;
use jility_web::layout::{self, Section};
use jility_web::pages::{answer_form, field, form_pairs, respond, when};
use jility_web::{WebError, site::Viewer};
use maud::{Markup, html};
use mcp_common::ToolError;

use super::cookies;
use super::site::{Access, CloudSite, Person};
use crate::accounts::{Actor, Invite, Member, Role};
use jility_core::errors;

/// The person of a settings page or form: a manager of the workspace.
pub async fn manager(
    site: &CloudSite,
    headers: &HeaderMap,
    workspace: &str,
) -> Result<Person, Response> {
    let person = site
        .person(headers, workspace)
        .await
        .map_err(|err| err.answer(headers))?;
    if !person.role.manages_members() {
        return Err(WebError::Forbidden(
            "Only owners and admins of the workspace open its settings".to_string(),
        )
        .answer(headers));
    }
    Ok(person)
}

/// A manager's form: the person, checked (CSRF, this origin), and the form's fields.
pub async fn manager_form(
    site: &CloudSite,
    headers: &HeaderMap,
    workspace: &str,
    body: &Bytes,
) -> Result<(Person, Vec<(String, String)>), Response> {
    let person = manager(site, headers, workspace).await?;
    let pairs = form_pairs(body);
    cookies::check_session_form(&person.session, headers, field(&pairs, "_csrf"))
        .map_err(|err| err.answer(headers))?;
    Ok((person, pairs))
}

/// The settings' own navigation.
pub fn tabs(viewer: &Viewer, current: &str) -> Markup {
    let base = format!("{}/settings", layout::base(&viewer.workspace));
    let tab = |path: &str, label: &str, key: &str| {
        html! {
            a href=(format!("{base}{path}")) aria-current=[(key == current).then_some("page")] { (label) }
        }
    };
    html! {
        nav class="tabs" aria-label="Settings" {
            @if viewer.manages {
                (tab("", "Members and invites", "members")) " · "
                (tab("/tokens", "Tokens", "tokens")) " · "
                (tab("/audit", "Audit log", "audit")) " · "
                (tab("/webhooks", "Webhooks", "webhooks")) " · "
            }
            (tab("/clients", "Connected clients", "clients"))
        }
    }
}

fn role_select(id: &str, selected: Role, owner_choices: bool) -> Markup {
    html! {
        select id=(id) name="role" {
            @for role in Role::ALL {
                @if owner_choices || role != Role::Owner || selected == Role::Owner {
                    option value=(role.as_str()) selected[role == selected] { (role.as_str()) }
                }
            }
        }
    }
}

fn render(person: &Person, members: &[Member], invites: &[Invite], made: Option<&str>) -> Markup {
    let viewer = &person.viewer;
    let base = format!("{}/settings", layout::base(&viewer.workspace));
    let owner = person.role == Role::Owner;
    html! {
        main id="main" data-page="settings" {
            h1 { "Settings of " (viewer.workspace) }
            (tabs(viewer, "members"))
            div id="notice" {
                @if let Some(link) = made {
                    (layout::notice("ok", "The invite link: copy it now and pass it on — it is shown only this once.", None))
                    p {
                        label for="invite-link" { "Invite link" } br;
                        input id="invite-link" type="text" readonly value=(link) size="80";
                    }
                }
            }
            h2 { "Members" }
            div class="table-scroll" tabindex="0" role="region" aria-label="Members" {
                table class="plain members" {
                    thead { tr { th { "Name" } th { "Email" } th { "Role" } th { "Since" } th { span class="visually-hidden" { "Remove" } } } }
                    tbody {
                        @for member in members {
                            @let id = format!("role-{}", member.user.id);
                            tr data-member=(member.user.email) {
                                td { (member.user.name) }
                                td { (member.user.email) }
                                td {
                                    form method="post" action=(format!("{base}/members")) {
                                        input type="hidden" name="_csrf" value=(viewer.csrf);
                                        input type="hidden" name="user" value=(member.user.id);
                                        input type="hidden" name="action" value="role";
                                        label for=(id) class="visually-hidden" { "Role of " (member.user.name) }
                                        (role_select(&id, member.role, owner))
                                        " "
                                        button type="submit" { "Save" }
                                    }
                                }
                                td { (when(&member.since)) }
                                td {
                                    form method="post" action=(format!("{base}/members")) {
                                        input type="hidden" name="_csrf" value=(viewer.csrf);
                                        input type="hidden" name="user" value=(member.user.id);
                                        input type="hidden" name="action" value="remove";
                                        button type="submit" class="secondary" { "Remove " span class="visually-hidden" { (member.user.name) } }
                                    }
                                }
                            }
                        }
                    }
                }
            }
            h2 { "Invites" }
            form method="post" action=(format!("{base}/invites")) data-native {
                input type="hidden" name="_csrf" value=(viewer.csrf);
                label for="invite-role" { "Invite someone as " }
                (role_select("invite-role", Role::Member, owner))
                " "
                button type="submit" { "Make an invite link" }
            }
            @if invites.is_empty() {
                p class="empty" { "No pending invites." }
            } @else {
                div class="table-scroll" tabindex="0" role="region" aria-label="Pending invites" {
                    table class="plain invites" {
                        thead { tr { th { "Role" } th { "Made" } th { "Expires" } th { span class="visually-hidden" { "Revoke" } } } }
                        tbody {
                            @for invite in invites {
                                tr data-invite=(invite.id) {
                                    td { (invite.role) }
                                    td { (when(&invite.created_at)) }
                                    td { (when(&invite.expires_at)) }
                                    td {
                                        form method="post" action=(format!("{base}/invites/revoke")) {
                                            input type="hidden" name="_csrf" value=(viewer.csrf);
                                            input type="hidden" name="invite" value=(invite.id);
                                            button type="submit" class="secondary" { "Revoke" }
                                        }
                                    }
                                }
                            }
                        }
                    }
                }
            }
        }
    }
}

async fn show(
    site: &CloudSite,
    headers: &HeaderMap,
    person: &Person,
    made: Option<&str>,
) -> Response {
    let workspace_id = person.workspace_id;
    let listed = site
        .blocking(move |accounts| {
            Ok((
                accounts.members(workspace_id)?,
                accounts.invites(workspace_id)?,
            ))
        })
        .await;
    match listed {
        Ok((members, invites)) => {
            let main = render(person, &members, &invites, made);
            respond(
                site,
                &person.viewer,
                headers,
                Section::Settings,
                "Settings",
                main,
            )
        }
        Err(err) => err.answer(headers),
    }
}

/// `GET /w/{ws}/settings`.
pub async fn page(
    State(site): State<CloudSite>,
    Path(workspace): Path<String>,
    headers: HeaderMap,
) -> Response {
    match manager(&site, &headers, &workspace).await {
        Ok(person) => show(&site, &headers, &person, None).await,
        Err(refused) => refused,
    }
}

/// A page shown after something was made: `201` where it would be `200`.
pub(crate) fn created(mut response: Response) -> Response {
    if response.status() == StatusCode::OK {
        *response.status_mut() = StatusCode::CREATED;
    }
    response
}

/// The id a form posts as `name`, or why the form is refused.
pub(crate) fn number(pairs: &[(String, String)], name: &str) -> Result<i64, WebError> {
    field(pairs, name)
        .and_then(|v| v.trim().parse().ok())
        .ok_or_else(|| {
            WebError::Tool(
                ToolError::new(
                    errors::INVALID_INPUT,
                    format!("The form has no valid `{name}`"),
                )
                .with_hint("Reload the page and try again."),
            )
        })
}

/// `POST /w/{ws}/settings/members`: `user`, `action` = `role` (with `role`) or `remove`.
pub async fn member(
    State(site): State<CloudSite>,
    Path(workspace): Path<String>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let (person, pairs) = match manager_form(&site, &headers, &workspace, &body).await {
        Ok(checked) => checked,
        Err(refused) => return refused,
    };
    let back = format!("{}/settings", layout::base(&workspace));
    let workspace_id = person.workspace_id;
    let by = Actor::from(&person.session);
    let result = async {
        let user_id = number(&pairs, "user")?;
        match field(&pairs, "action") {
            Some("remove") => {
                site.blocking(move |accounts| accounts.remove_member(workspace_id, user_id, by))
                    .await?;
                site.access_changed(Access::User(user_id)).await;
                Ok(serde_json::json!({ "removed": user_id }))
            }
            Some("role") | None => {
                let role: Role = field(&pairs, "role").unwrap_or_default().parse()?;
                let member = site
                    .blocking(move |accounts| accounts.set_role(workspace_id, user_id, role, by))
                    .await?;
                Ok(serde_json::json!({ "user": member.user.id, "role": member.role }))
            }
            Some(other) => Err(WebError::Tool(
                ToolError::new(
                    errors::INVALID_INPUT,
                    format!(
                        "`{}` is not an action on a member",
                        mcp_common::text::clip(other, 40)
                    ),
                )
                .with_hint("Change the member's role, or remove them."),
            )),
        }
    }
    .await;
    answer_form(&headers, result, back)
}

/// `POST /w/{ws}/settings/invites`: `role` → the page, with the new link shown once.
pub async fn invite(
    State(site): State<CloudSite>,
    Path(workspace): Path<String>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let (person, pairs) = match manager_form(&site, &headers, &workspace, &body).await {
        Ok(checked) => checked,
        Err(refused) => return refused,
    };
    let role: Role = match field(&pairs, "role").unwrap_or_default().parse() {
        Ok(role) => role,
        Err(err) => return WebError::Tool(err).answer(&headers),
    };
    let workspace_id = person.workspace_id;
    let by = Actor::from(&person.session);
    match site
        .blocking(move |accounts| accounts.create_invite(workspace_id, role, by))
        .await
    {
        Ok((secret, _)) => {
            let link = format!(
                "{}/invite/{}",
                crate::public::base(&headers, site.tls()),
                secret.expose()
            );
            created(show(&site, &headers, &person, Some(&link)).await)
        }
        Err(err) => err.answer(&headers),
    }
}

/// `POST /w/{ws}/settings/invites/revoke`: `invite` (its id).
pub async fn revoke_invite(
    State(site): State<CloudSite>,
    Path(workspace): Path<String>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let (person, pairs) = match manager_form(&site, &headers, &workspace, &body).await {
        Ok(checked) => checked,
        Err(refused) => return refused,
    };
    let back = format!("{}/settings", layout::base(&workspace));
    let workspace_id = person.workspace_id;
    let by = Actor::from(&person.session);
    let result = async {
        let id = number(&pairs, "invite")?;
        site.blocking(move |accounts| accounts.revoke_invite(workspace_id, id, by))
            .await?;
        Ok(serde_json::json!({ "revoked": id }))
    }
    .await;
    answer_form(&headers, result, back)
}
