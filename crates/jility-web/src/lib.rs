//! jility's web app for people: the board, the ticket pages, lists and search, made on the
//! server as HTML (maud's compile-time-checked templates), with one small script of its own
//! for drag-and-drop, inline edits and live updates, and a stylesheet — both embedded in
//! the binary. Pages read without script; every change is a form that works without it.
//!
//! The app is generic over a [`Site`] (who the person is, where the operations run, where
//! the workspace's changes come from), as the MCP adapter is over a `Backend`: local mode's
//! is [`LocalSite`] (`jility web`), `jility serve`'s lives in `jility-cloud` beside the API.
//! Every operation runs through the site's [`jility_core::Backend`], so a person's change
//! passes the same checks, audit and events as an agent's.
//!
//! - `site`: the [`Site`] trait, [`LiveEvent`]; `viewer`: the [`Viewer`];
//! - `pages/`: `board`, `ticket` (one module per page, with its forms);
//! - `live`: the workspace's changes as server-sent events for open pages;
//! - `security`: CSP and the other headers, CSRF and origin checks;
//! - `markdown`: sanitised rendering, task boxes;
//! - `layout`, `assets`, `errors`;
//! - `local`: [`LocalSite`].

pub mod assets;
pub mod errors;
pub mod layout;
pub mod live;
pub mod local;
pub mod markdown;
pub mod pages;
pub mod security;
pub mod site;
pub mod viewer;

use axum::Router;
use axum::extract::{Path, State};
use axum::http::HeaderMap;
use axum::response::{IntoResponse, Redirect, Response};
use axum::routing::{get, post};

pub use errors::WebError;
pub use local::LocalSite;
pub use site::{LiveEvent, Site, Viewer};

/// The web app: [`routes`], and a person's HTML 404 for every other path.
pub fn router<S: Site>(site: S) -> Router {
    routes(site)
        .fallback(not_found)
        .layer(axum::middleware::from_fn(security::headers))
}

/// The web app's routes: `/`, `/assets/…` and every page of `/w/{workspace}/…`, with the
/// security headers on every answer — without a fallback, so that a server with routes of
/// its own (`jility serve`: the API, MCP, the sign-in pages) can merge them and answer the
/// other paths itself (with [`not_found`] for a person's).
pub fn routes<S: Site>(site: S) -> Router {
    Router::new()
        .route("/", get(home::<S>))
        .route("/assets/{name}", get(assets::serve))
        .route("/w/{workspace}", get(workspace_home))
        .route("/w/{workspace}/", get(workspace_home))
        .route("/w/{workspace}/board", get(pages::board::page::<S>))
        .route("/w/{workspace}/events", get(live::stream::<S>))
        .route("/w/{workspace}/list", get(pages::list::page::<S>))
        .route("/w/{workspace}/epics", get(pages::epics::list::<S>))
        .route(
            "/w/{workspace}/epics/{number}",
            get(pages::epics::page::<S>),
        )
        .route("/w/{workspace}/sprints", get(pages::sprints::list::<S>))
        .route("/w/{workspace}/plan", get(pages::plan::page::<S>))
        .route(
            "/w/{workspace}/sprints/{sprint}/tickets",
            post(pages::plan::add::<S>),
        )
        .route(
            "/w/{workspace}/sprints/{sprint}/remove",
            post(pages::plan::remove::<S>),
        )
        .route(
            "/w/{workspace}/sprints/{sprint}",
            get(pages::sprints::page::<S>),
        )
        .route("/w/{workspace}/bulk", post(pages::bulk::post::<S>))
        .route("/w/{workspace}/views", post(pages::views::save::<S>))
        .route(
            "/w/{workspace}/views/delete",
            post(pages::views::delete::<S>),
        )
        .route("/w/{workspace}/new", get(pages::create::page::<S>))
        .route("/w/{workspace}/related", get(pages::create::related::<S>))
        .route(
            "/w/{workspace}/tickets",
            post(pages::create::create_one::<S>),
        )
        .route(
            "/w/{workspace}/tickets/batch",
            post(pages::create::create_batch::<S>),
        )
        .route(
            "/w/{workspace}/tickets/from-template",
            post(pages::create::create_from_template::<S>),
        )
        .route(
            "/w/{workspace}/tickets/{number}",
            get(pages::ticket::page::<S>),
        )
        .route(
            "/w/{workspace}/tickets/{number}/status",
            post(pages::ticket::move_status::<S>),
        )
        .route(
            "/w/{workspace}/tickets/{number}/comments",
            post(pages::ticket::comment::<S>),
        )
        .route(
            "/w/{workspace}/tickets/{number}/tasks",
            post(pages::edit::tick::<S>),
        )
        .route(
            "/w/{workspace}/tickets/{number}/description",
            post(pages::edit::describe::<S>),
        )
        .route(
            "/w/{workspace}/tickets/{number}/fields",
            post(pages::fields::edit::<S>),
        )
        .route(
            "/w/{workspace}/tickets/{number}/dependencies",
            post(pages::fields::add_dependency::<S>),
        )
        .route(
            "/w/{workspace}/tickets/{number}/dependencies/remove",
            post(pages::fields::remove_dependency::<S>),
        )
        .route("/w/{workspace}/inbox", get(pages::inbox::page::<S>))
        .route("/w/{workspace}/inbox/count", get(pages::inbox::count::<S>))
        .route("/w/{workspace}/inbox/open", post(pages::inbox::open::<S>))
        .route(
            "/w/{workspace}/inbox/read",
            post(pages::inbox::read_all::<S>),
        )
        .route(
            "/w/{workspace}/tickets/{number}/watch",
            post(pages::inbox::watch::<S>),
        )
        .route(
            "/w/{workspace}/tickets/{number}/history",
            get(pages::history::page::<S>),
        )
        .route(
            "/w/{workspace}/tickets/{number}/revert",
            post(pages::history::revert::<S>),
        )
        .layer(axum::middleware::from_fn(security::headers))
        .with_state(site)
}

async fn home<S: Site>(State(site): State<S>, headers: HeaderMap) -> Response {
    site.home(&headers).await
}

async fn workspace_home(Path(workspace): Path<String>) -> Response {
    Redirect::to(&format!("{}/board", layout::base(&workspace))).into_response()
}

/// A person's 404 page (JSON to the page's script).
pub async fn not_found(headers: HeaderMap) -> Response {
    WebError::NotFound.answer(&headers)
}
