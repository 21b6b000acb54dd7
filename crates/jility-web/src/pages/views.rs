//! Saved views on the web: the views a person sees, beside the list and the board (each a
//! link that runs it there), saving the list's search as a view, and deleting one's own.

use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::http::HeaderMap;
use axum::response::Response;
use jility_core::ops;
use jility_core::params::{ListViews, SaveView, ViewName};
use jility_core::tracker::View;
use maud::{Markup, html};

use super::{answer_form, back_to, field, form, missing, run, write};
use crate::errors::WebError;
use crate::layout;
use crate::site::{Site, Viewer};

/// The views `viewer` sees (none when they cannot be read: the page shows without them).
pub async fn seen<S: Site>(site: &S, viewer: &Viewer) -> Vec<View> {
    run::<S, ops::ListViews>(site, viewer, ListViews {})
        .await
        .map(|l| l.views)
        .unwrap_or_default()
}

/// The views as links to `page` (`list` or `board`) running each; the one `current` (the
/// page's query) runs is marked.
pub fn nav(viewer: &Viewer, page: &str, views: &[View], current: Option<&str>) -> Markup {
    let base = layout::base(&viewer.workspace);
    let here = format!("{base}/{page}");
    html! {
        nav class="views" aria-label="Saved views" data-views {
            h2 { "Views" }
            @if views.is_empty() {
                p class="help" { "No saved views. Search, then save the search as a view." }
            } @else {
                ul {
                    @for v in views {
                        @let query = jility_core::query::view_of(&v.name);
                        @let href = format!("{base}/{page}?{}", form_urlencoded::Serializer::new(String::new()).append_pair("q", &query).finish());
                        li {
                            a href=(href) title=(v.query)
                                aria-current=[(current == Some(query.as_str())).then_some("page")] {
                                (v.name)
                            }
                            @if v.shared { " " span class="shared" { "shared by " (v.owner) } }
                            @if viewer.can_write && v.owner == viewer.name {
                                form class="delete-view" method="post" action=(format!("{base}/views/delete")) {
                                    input type="hidden" name="_csrf" value=(viewer.csrf);
                                    input type="hidden" name="name" value=(v.name);
                                    input type="hidden" name="back" value=(here);
                                    button type="submit" aria-label=(format!("Delete the view {}", v.name)) { "×" }
                                }
                            }
                        }
                    }
                }
            }
        }
    }
}

/// The form that saves `query` (the list's search) as a view.
pub fn save_form(viewer: &Viewer, query: &str, back: &str) -> Markup {
    let base = layout::base(&viewer.workspace);
    html! {
        form class="save-view" method="post" action=(format!("{base}/views")) data-save-view data-go {
            input type="hidden" name="_csrf" value=(viewer.csrf);
            input type="hidden" name="query" value=(query);
            input type="hidden" name="back" value=(back);
            label for="v-name" { "Save this search as a view" }
            input id="v-name" type="text" name="name" required maxlength="60" placeholder="triage";
            span class="check" {
                input id="v-shared" type="checkbox" name="shared" value="1";
                label for="v-shared" { "Share with the workspace" }
            }
            button type="submit" { "Save view" }
        }
    }
}

/// `POST /w/{workspace}/views`: `name`, `query`, `shared`; back to the list running it.
pub async fn save<S: Site>(
    State(site): State<S>,
    Path(workspace): Path<String>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let (viewer, pairs) = match form(&site, &headers, &workspace, &body).await {
        Ok(v) => v,
        Err(refusal) => return refusal,
    };
    let base = layout::base(&viewer.workspace);
    let result = async {
        let name = field(&pairs, "name").ok_or_else(|| missing("name"))?;
        let query = field(&pairs, "query").ok_or_else(|| missing("query"))?;
        let shared = field(&pairs, "shared").is_some_and(|v| v == "1" || v == "on");
        let saved = write::<S, ops::SaveView>(
            &site,
            &viewer,
            SaveView {
                name: name.to_string(),
                query: query.to_string(),
                shared,
            },
        )
        .await?;
        Ok::<_, WebError>(saved.view.name)
    }
    .await;
    match result {
        Ok(name) => {
            let back = format!(
                "{base}/list?{}",
                form_urlencoded::Serializer::new(String::new())
                    .append_pair("q", &jility_core::query::view_of(&name))
                    .finish()
            );
            answer_form(&headers, Ok(serde_json::json!({ "saved": name })), back)
        }
        Err(err) => answer_form(&headers, Err(err), String::new()),
    }
}

/// `POST /w/{workspace}/views/delete`: `name`; back to `back`.
pub async fn delete<S: Site>(
    State(site): State<S>,
    Path(workspace): Path<String>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let (viewer, pairs) = match form(&site, &headers, &workspace, &body).await {
        Ok(v) => v,
        Err(refusal) => return refusal,
    };
    let back = back_to(
        &viewer,
        field(&pairs, "back"),
        format!("{}/list", layout::base(&viewer.workspace)),
    );
    let result = async {
        let name = field(&pairs, "name").ok_or_else(|| missing("name"))?;
        let deleted = write::<S, ops::DeleteView>(
            &site,
            &viewer,
            ViewName {
                name: name.to_string(),
            },
        )
        .await?;
        Ok(serde_json::json!({ "deleted": deleted.name }))
    }
    .await;
    answer_form(&headers, result, back)
}
