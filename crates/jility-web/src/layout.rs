//! The page around every page: head (stylesheet and script from [`crate::assets`], no
//! inline script or style), a skip link, the header with the workspace's navigation, and the
//! live indicator the script drives.

use maud::{DOCTYPE, Markup, PreEscaped, html};

use crate::assets;
use crate::viewer::Viewer;

/// Which part of the navigation a page belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Section {
    Board,
    List,
    Epics,
    Sprints,
    Plan,
    New,
    Ticket,
    Settings,
    Inbox,
}

/// The base of a workspace's pages: `/w/{workspace}`.
pub fn base(workspace: &str) -> String {
    format!("/w/{}", segment(workspace))
}

/// A path segment, percent-encoded.
pub fn segment(text: &str) -> String {
    form_urlencoded::byte_serialize(text.as_bytes())
        .collect::<String>()
        .replace('+', "%20")
}

fn head(title: &str) -> Markup {
    html! {
        meta charset="utf-8";
        meta name="viewport" content="width=device-width, initial-scale=1";
        meta name="color-scheme" content="light";
        title { (title) " · jility" }
        link rel="stylesheet" href=(assets::css_href());
        script src=(assets::js_href()) defer {}
    }
}

/// A page of the workspace for `viewer`.
pub fn page(
    viewer: &Viewer,
    section: Section,
    title: &str,
    accounts: bool,
    body: Markup,
) -> Markup {
    let base = base(&viewer.workspace);
    let current = |s: Section| if s == section { Some("page") } else { None };
    html! {
        (DOCTYPE)
        html lang="en" {
            head {
                (head(title))
                meta name="csrf-token" content=(viewer.csrf);
                meta name="live" content=(format!("{base}/events"));
                meta name="base" content=(base);
            }
            body {
                a class="skip" href="#main" { "Skip to content" }
                header class="top" {
                    nav aria-label="Workspace" {
                        a class="brand" href=(format!("{base}/board")) { "jility" }
                        span class="workspace" title="Workspace" { (viewer.workspace) }
                        a href=(format!("{base}/board")) aria-current=[current(Section::Board)] { "Board" }
                        a href=(format!("{base}/list")) aria-current=[current(Section::List)] { "List" }
                        a href=(format!("{base}/epics")) aria-current=[current(Section::Epics)] { "Epics" }
                        a href=(format!("{base}/sprints")) aria-current=[current(Section::Sprints)] { "Sprints" }
                        a href=(format!("{base}/plan")) aria-current=[current(Section::Plan)] { "Plan" }
                        @if viewer.can_write {
                            a href=(format!("{base}/new")) aria-current=[current(Section::New)] { "New ticket" }
                        }
                        @if viewer.manages {
                            a href=(format!("{base}/settings")) aria-current=[current(Section::Settings)] { "Settings" }
                        } @else if accounts {
                            a href=(format!("{base}/settings/clients")) aria-current=[current(Section::Settings)] { "Connected clients" }
                        }
                    }
                    form class="search" role="search" method="get" action=(format!("{base}/list")) {
                        label for="top-search" class="visually-hidden" { "Search tickets" }
                        input id="top-search" type="search" name="q" placeholder="Search tickets";
                    }
                    div class="account" {
                        span id="live" class="live" role="status" aria-live="polite" data-state="off" { "" }
                        // The count is the link's text too ("Inbox 3 unread"): its name holds
                        // what it shows.
                        a id="inbox-link" class="inbox-link" href=(format!("{base}/inbox"))
                            aria-current=[current(Section::Inbox)] {
                            "Inbox"
                            span id="inbox-count" class="count" data-unread=(viewer.unread) hidden[viewer.unread == 0] {
                                span id="inbox-number" { (viewer.unread) }
                                span class="visually-hidden" { " unread" }
                            }
                        }
                        span class="person" {
                            @if let Some(display) = viewer.display_name.as_deref().filter(|d| *d != viewer.name) {
                                (display) " (" (viewer.name) ")"
                            } @else {
                                (viewer.name)
                            }
                        }
                        @if viewer.workspaces.len() > 1 {
                            details class="switch" {
                                summary { "Workspaces" }
                                ul {
                                    @for ws in &viewer.workspaces {
                                        li { a href=(format!("{}/board", self::base(ws))) { (ws) } }
                                    }
                                }
                            }
                        }
                        @if accounts {
                            form method="post" action="/logout" {
                                input type="hidden" name="_csrf" value=(viewer.csrf);
                                button type="submit" class="link" { "Sign out" }
                            }
                        }
                    }
                }
                (body)
            }
        }
    }
}

/// A page outside any workspace (sign-in, an error).
pub fn bare(title: &str, body: Markup) -> Markup {
    html! {
        (DOCTYPE)
        html lang="en" {
            head { (head(title)) }
            body class="bare" {
                header class="top" {
                    nav aria-label="Site" { a class="brand" href="/" { "jility" } }
                }
                (body)
            }
        }
    }
}

/// A notice above a page's content: what a form did, or why it was refused.
pub fn notice(kind: &str, text: &str, hint: Option<&str>) -> Markup {
    html! {
        div class=(format!("notice {kind}")) role=(if kind == "error" { "alert" } else { "status" }) {
            p { (text) }
            @if let Some(hint) = hint { p class="hint" { (hint) } }
        }
    }
}

/// Text known to be safe HTML (sanitised markdown).
pub fn trusted(html: String) -> Markup {
    PreEscaped(html)
}
