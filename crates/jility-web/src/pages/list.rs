//! The list: the board's filters (assignee, mine, label, epic, several statuses, a parent)
//! as a table of tickets, paged with the list's cursor; with `q`, a search in the query
//! language (words and qualifiers, the filters added as qualifiers), the hits as a table
//! with their snippets (the matches marked), paged with the search's cursor; a query that
//! does not read is shown with why and how to write one. The "Next page" link carries the filters with the cursor, as the operation
//! requires.

use axum::extract::{Path, RawQuery, State};
use axum::http::HeaderMap;
use axum::response::Response;
use jility_core::model::{Status, TicketSummary};
use jility_core::ops;
use jility_core::params::{ListTickets, SearchTickets, StatusName};
use jility_core::query;
use jility_core::tracker::{SearchHitOut, SearchResults, TicketPage, View};
use maud::{Markup, html};
use mcp_common_core::{Page, Paged, ToolError};
use std::collections::BTreeMap;

use super::board::Filters;
use super::{respond, run, viewer, when};
use crate::errors::WebError;
use crate::layout::{self, Section};
use crate::site::{Site, Viewer};

/// Rows of a page of the list.
pub const PAGE_SIZE: i64 = 50;
/// Rows of a page of search hits.
pub const SEARCH_PAGE_SIZE: i64 = 50;

/// The list's filters, as its URL carries them: the board's, the statuses, a parent, the
/// page's cursor and, after a batch, how many tickets were just created.
#[derive(Debug, Default, Clone)]
pub struct ListFilters {
    /// assignee, mine, label, epic and the search text (`q`).
    pub board: Filters,
    /// Any of these statuses (none: every status).
    pub status: Vec<String>,
    /// Sub-tasks of this ticket.
    pub parent: Option<String>,
    /// The page's cursor (with the same filters).
    pub cursor: Option<String>,
    /// How many tickets a batch just created (shown as a notice).
    pub created: Option<u64>,
    /// How many tickets a bulk edit just changed (shown as a notice).
    pub changed: Option<u64>,
}

impl ListFilters {
    /// The filters of a query string (`status` may come several times).
    pub fn from_query(raw: &str) -> Self {
        let pairs: Vec<(String, String)> = form_urlencoded::parse(raw.as_bytes())
            .map(|(k, v)| (k.into_owned(), v.into_owned()))
            .collect();
        let mut first: BTreeMap<String, String> = BTreeMap::new();
        for (k, v) in &pairs {
            first.entry(k.clone()).or_insert_with(|| v.clone());
        }
        let text = |name: &str| {
            first
                .get(name)
                .map(|v| v.trim().to_string())
                .filter(|v| !v.is_empty())
        };
        let mut status: Vec<String> = Vec::new();
        for (k, v) in &pairs {
            let v = v.trim();
            if k == "status" && !v.is_empty() && !status.iter().any(|s| s == v) {
                status.push(v.to_string());
            }
        }
        Self {
            board: Filters::from_query(&first),
            status,
            parent: text("parent"),
            cursor: text("cursor"),
            created: text("created").and_then(|n| n.parse().ok()),
            changed: text("changed").and_then(|n| n.parse().ok()),
        }
    }

    /// The query string of the filters, without the cursor and the notice.
    pub fn query(&self) -> String {
        let mut q = form_urlencoded::Serializer::new(self.board.query());
        for s in &self.status {
            q.append_pair("status", s);
        }
        if let Some(p) = &self.parent {
            q.append_pair("parent", p);
        }
        q.finish()
    }

    /// The list's address with these filters (and `cursor`, when given).
    pub fn href(&self, base: &str, cursor: Option<&str>) -> String {
        let mut q = form_urlencoded::Serializer::new(self.query());
        if let Some(c) = cursor {
            q.append_pair("cursor", c);
        }
        let q = q.finish();
        if q.is_empty() {
            format!("{base}/list")
        } else {
            format!("{base}/list?{q}")
        }
    }

    fn assignee_for(&self, viewer: &Viewer) -> Option<String> {
        if self.board.mine {
            Some(viewer.name.clone())
        } else {
            self.board.assignee.clone()
        }
    }
}

/// What the page shows: a page of the list or of search hits, or why the search's query
/// was refused (shown beside the search box, to be corrected).
enum Found {
    List(Paged<TicketPage>),
    Search(Paged<SearchResults>),
    Refused(ToolError),
}

/// `GET /w/{workspace}/list`.
pub async fn page<S: Site>(
    State(site): State<S>,
    Path(workspace): Path<String>,
    RawQuery(raw): RawQuery,
    headers: HeaderMap,
) -> Response {
    let viewer = match viewer(&site, &headers, &workspace).await {
        Ok(v) => v,
        Err(refusal) => return refusal,
    };
    let filters = ListFilters::from_query(raw.as_deref().unwrap_or_default());
    let found = match find(&site, &viewer, &filters).await {
        Ok(found) => found,
        // A query in the language that does not read: the page, with what to correct.
        Err(WebError::Tool(err))
            if filters.board.text.is_some() && err.code == jility_core::errors::INVALID_INPUT =>
        {
            Found::Refused(err)
        }
        Err(err) => return err.answer(&headers),
    };
    let people = site.people(&viewer).await;
    let views = super::views::seen(&site, &viewer).await;
    let title = match &filters.board.text {
        Some(q) => format!("Search: {q}"),
        None => "Tickets".to_string(),
    };
    let main = render(&viewer, &filters, &found, &people, &views);
    respond(&site, &viewer, &headers, Section::List, &title, main)
}

async fn find<S: Site>(
    site: &S,
    viewer: &Viewer,
    filters: &ListFilters,
) -> Result<Found, WebError> {
    if let Some(text) = &filters.board.text {
        // The search applies every filter: they go into its query as qualifiers.
        let query =
            filters
                .board
                .search_query(viewer, &filters.status, filters.parent.as_deref())?;
        // A query with no words, or sorted by a field, is a listing: the list's columns
        // (points, labels) instead of snippets it would not have.
        let listed = query::parse(text, &query::Clock::now())
            .is_ok_and(|q| !q.has_words() || matches!(q.order, Some(query::Order::By(_))));
        if listed {
            let page = run::<S, ops::ListTickets>(
                site,
                viewer,
                ListTickets {
                    sprint: filters.board.sprint.clone(),
                    query: Some(query),
                    limit: Some(PAGE_SIZE),
                    cursor: filters.cursor.clone(),
                    ..ListTickets::default()
                },
            )
            .await?;
            return Ok(Found::List(page));
        }
        let found = run::<S, ops::SearchTickets>(
            site,
            viewer,
            SearchTickets {
                query,
                limit: Some(SEARCH_PAGE_SIZE),
                cursor: filters.cursor.clone(),
                sprint: filters.board.sprint.clone(),
            },
        )
        .await?;
        return Ok(Found::Search(found));
    }
    let page = run::<S, ops::ListTickets>(
        site,
        viewer,
        ListTickets {
            status: filters.status.iter().cloned().map(StatusName).collect(),
            assignee: filters.assignee_for(viewer),
            labels: filters.board.label.iter().cloned().collect(),
            parent_id: filters.parent.clone(),
            epic_id: filters.board.epic.clone(),
            unassigned: false,
            sprint: filters.board.sprint.clone(),
            query: None,
            limit: Some(PAGE_SIZE),
            cursor: filters.cursor.clone(),
        },
    )
    .await?;
    Ok(Found::List(page))
}

fn render(
    viewer: &Viewer,
    filters: &ListFilters,
    found: &Found,
    people: &[String],
    views: &[View],
) -> Markup {
    let base = layout::base(&viewer.workspace);
    let (page, rows) = match found {
        Found::List(p) => (&p.page, p.data.tickets.len()),
        Found::Search(p) => (&p.page, p.data.hits.len()),
        Found::Refused(err) => return refused(viewer, filters, err, views),
    };
    let searching = filters.board.text.is_some();
    html! {
        main id="main" class="list-page" data-page="list" {
            h1 {
                @if let Some(q) = &filters.board.text { "Search: " q { (q) } } @else { "Tickets" }
            }
            (filter_form(&base, filters))
            (super::views::nav(viewer, "list", views, filters.board.text.as_deref()))
            @if let Some(q) = filters.board.text.as_deref().filter(|_| viewer.can_write) {
                (super::views::save_form(viewer, q, &filters.href(&base, None)))
            }
            div id="notice" {
                @if let Some(n) = filters.created {
                    (layout::notice("ok", &created_text(n), None))
                }
                @if let Some(n) = filters.changed {
                    (layout::notice("ok", &format!("Changed {n} ticket{}.", if n == 1 { "" } else { "s" }), None))
                }
            }
            p class="count" data-total=(page.total) {
                (count_text(page, searching))
                @if filters.cursor.is_some() { " · " a href=(filters.href(&base, None)) { "First page" } }
            }
            @if rows == 0 {
                (empty(&base, filters, page.next_cursor.is_some()))
            } @else {
                @let select = viewer.can_write;
                form id="bulk-form" method="post" action=(format!("{base}/bulk")) data-native {
                    @if select { input type="hidden" name="_csrf" value=(viewer.csrf); }
                    div class="table-scroll" {
                        @match found {
                            Found::List(p) => (list_table(&base, &p.data.tickets, people, select)),
                            Found::Search(p) => (search_table(&base, &p.data.hits, people, select)),
                            Found::Refused(_) => {}
                        }
                    }
                    @if select {
                        (super::bulk::change_fieldset(
                            page.total,
                            &bulk_query(viewer, filters).unwrap_or_default(),
                            &filters.href(&base, filters.cursor.as_deref()),
                        ))
                    }
                }
            }
            @if let Some(next) = &page.next_cursor {
                nav class="pager" aria-label="Pages" {
                    a class="next" rel="next" href=(filters.href(&base, Some(next))) { "Next page" }
                }
            }
        }
    }
}

/// The page when the search's query was refused: the form (to correct it) and why.
fn refused(viewer: &Viewer, filters: &ListFilters, err: &ToolError, views: &[View]) -> Markup {
    let base = layout::base(&viewer.workspace);
    html! {
        main id="main" class="list-page" data-page="list" {
            h1 { "Search" }
            (filter_form(&base, filters))
            (super::views::nav(viewer, "list", views, None))
            div id="notice" data-refused=(err.code.as_str()) {
                (layout::notice("error", &err.message, err.hint.as_deref()))
            }
            (query_help())
        }
    }
}

/// The query language in brief, under a refused query.
fn query_help() -> Markup {
    html! {
        details class="help" open {
            summary { "How to write a query" }
            p { "Words and \"quoted phrases\" are searched for; "
                code { "-word" } " leaves out what has it. Qualifiers narrow the search:" }
            ul {
                li { code { "status:todo,review" } " any of the statuses; " code { "-label:wontfix" } " not" }
                li { code { "assignee:me" } ", " code { "is:unassigned" } ", " code { "is:blocked" } ", " code { "is:epic" } }
                li { code { "epic:KEY-N" } ", " code { "parent:KEY-N" } ", " code { "depends-on:KEY-N" } }
                li { code { "sprint:active" } ", " code { "sprint:\"Sprint 3\"" } ", " code { "no:sprint" } }
                li { code { "points:3..8" } ", " code { "points:>5" } ", " code { "created:>2024-10-20" } ", " code { "updated:<7d" } }
                li { code { "sort:updated-desc" } " (or created, points, title; -asc or -desc)" }
            }
        }
    }
}

/// "N tickets" (or "at least N"), "N matches" for a search.
fn count_text(page: &Page, searching: bool) -> String {
    let noun = match (searching, page.total) {
        (true, 1) => "match",
        (true, _) => "matches",
        (false, 1) => "ticket",
        (false, _) => "tickets",
    };
    if page.total_exact == Some(false) {
        format!("At least {} {noun}", page.total)
    } else {
        format!("{} {noun}", page.total)
    }
}

fn created_text(n: u64) -> String {
    if n == 1 {
        "Created 1 ticket.".to_string()
    } else {
        format!("Created {n} tickets.")
    }
}

/// What an empty page says to do.
fn empty(base: &str, filters: &ListFilters, more: bool) -> Markup {
    let filtered = !filters.query().is_empty();
    html! {
        div class="empty" data-empty {
            @if filters.board.text.is_some() {
                p { "No ticket matches this search." }
                @if more { p { "The next page may have some." } }
                p { "Try fewer or other words (all words must match; \"quoted phrases\" match exactly) or fewer filters, or "
                    a href=(format!("{base}/list")) { "list every ticket" } "." }
            } @else if filtered {
                p { "No ticket matches these filters." }
                p { a href=(format!("{base}/list")) { "Clear the filters" } " to see every ticket." }
            } @else {
                p { "No tickets yet." }
                p { a href=(format!("{base}/new")) { "Create a ticket" }
                    ", paste a list of titles to make several at once, or start one from a template." }
            }
        }
    }
}

fn ticket_href(base: &str, number: &str) -> String {
    format!("{base}/tickets/{}", layout::segment(number))
}

fn assignees(names: &[String], people: &[String]) -> Markup {
    html! {
        @for name in names {
            (super::parts::who(name, people))
            " "
        }
    }
}

fn status_cell(status: Status) -> Markup {
    html! { span class=(format!("status s-{}", status.as_str())) { (status.label()) } }
}

/// The list's filters as one query of the query language: what "all matching" changes.
fn bulk_query(viewer: &Viewer, filters: &ListFilters) -> Option<String> {
    let mut query = filters
        .board
        .search_query(viewer, &filters.status, filters.parent.as_deref())
        .ok()?;
    if let Some(sprint) = &filters.board.sprint {
        if sprint.contains('"') {
            return None;
        }
        query.push_str(&format!(" sprint:\"{sprint}\""));
    }
    Some(query.trim().to_string())
}

/// A row's box for the bulk edit.
fn select_cell(number: &str) -> Markup {
    html! {
        td class="select" {
            input type="checkbox" name="ticket" value=(number) aria-label=(format!("Select {number}"));
        }
    }
}

fn list_table(base: &str, tickets: &[TicketSummary], people: &[String], select: bool) -> Markup {
    html! {
        table class="tickets" {
            thead {
                tr {
                    @if select { th scope="col" { span class="visually-hidden" { "Select" } } }
                    th scope="col" { "Ticket" }
                    th scope="col" { "Title" }
                    th scope="col" { "Status" }
                    th scope="col" { "Points" }
                    th scope="col" { "Assignees" }
                    th scope="col" { "Labels" }
                    th scope="col" { "Updated" }
                }
            }
            tbody {
                @for t in tickets {
                    tr data-ticket=(t.number) {
                        @if select { (select_cell(&t.number)) }
                        td { a class="key" href=(ticket_href(base, &t.number)) { (t.number) } }
                        td class="title" { a href=(ticket_href(base, &t.number)) { (t.title) } }
                        td { (status_cell(t.status)) }
                        td class="points" { @if let Some(p) = t.story_points { (p) } }
                        td { (assignees(&t.assignees, people)) }
                        td { @for l in &t.labels { span class="label" { (l) } " " } }
                        td { time datetime=(t.updated_at) { (when(&t.updated_at)) } }
                    }
                }
            }
        }
    }
}

fn search_table(base: &str, hits: &[SearchHitOut], people: &[String], select: bool) -> Markup {
    html! {
        table class="tickets search" {
            thead {
                tr {
                    @if select { th scope="col" { span class="visually-hidden" { "Select" } } }
                    th scope="col" { "Ticket" }
                    th scope="col" { "Title" }
                    th scope="col" { "Status" }
                    th scope="col" { "Assignees" }
                    th scope="col" { "Match" }
                }
            }
            tbody {
                @for hit in hits {
                    tr data-ticket=(hit.number) {
                        @if select { (select_cell(&hit.number)) }
                        td { a class="key" href=(ticket_href(base, &hit.number)) { (hit.number) } }
                        td class="title" { a href=(ticket_href(base, &hit.number)) { (hit.title) } }
                        td { (status_cell(hit.status)) }
                        td { (assignees(&hit.assignees, people)) }
                        td class="snippet" { (snippet(&hit.snippet)) }
                    }
                }
            }
        }
    }
}

/// A search snippet, whose matches the store marks `**like this**`, as text with `<mark>`
/// elements: built from the split text, so nothing the ticket says is ever HTML. A `**` the
/// ticket itself holds and no closing marker follows stays as text.
pub fn snippet(text: &str) -> Markup {
    let parts: Vec<&str> = text.split("**").collect();
    // With an odd count of markers the last part follows an unclosed one.
    let unclosed = parts.len().is_multiple_of(2);
    html! {
        @for (i, part) in parts.iter().enumerate() {
            @if i % 2 == 1 && unclosed && i == parts.len() - 1 {
                "**" (part)
            } @else if i % 2 == 1 {
                @if !part.is_empty() { mark { (part) } }
            } @else {
                (part)
            }
        }
    }
}

fn filter_form(base: &str, filters: &ListFilters) -> Markup {
    let f = &filters.board;
    html! {
        form class="filters" method="get" action=(format!("{base}/list")) {
            div {
                label for="l-q" { "Search" }
                input id="l-q" type="search" name="q" placeholder="words status:todo label:bug" aria-describedby="l-q-help" value=[f.text.as_deref()];
                small id="l-q-help" class="help" { "Words, and qualifiers such as " code { "assignee:me" } ", " code { "-label:wontfix" } ", " code { "updated:<7d" } ", " code { "sort:updated-desc" } "." }
            }
            fieldset class="statuses" {
                legend { "Status" }
                @for s in Status::ALL {
                    span class="check" {
                        input id=(format!("l-s-{}", s.as_str())) type="checkbox" name="status"
                            value=(s.as_str()) checked[filters.status.iter().any(|x| x == s.as_str())];
                        label for=(format!("l-s-{}", s.as_str())) { (s.label()) }
                    }
                }
            }
            div {
                label for="l-assignee" { "Assignee" }
                input id="l-assignee" type="text" name="assignee" value=[f.assignee.as_deref()];
            }
            div class="check" {
                input id="l-mine" type="checkbox" name="mine" value="1" checked[f.mine];
                label for="l-mine" { "Mine" }
            }
            div {
                label for="l-label" { "Label" }
                input id="l-label" type="text" name="label" value=[f.label.as_deref()];
            }
            div {
                label for="l-epic" { "Epic" }
                input id="l-epic" type="text" name="epic" placeholder="KEY-N" value=[f.epic.as_deref()];
            }
            div {
                label for="l-sprint" { "Sprint" }
                input id="l-sprint" type="text" name="sprint" placeholder="active" value=[f.sprint.as_deref()];
            }
            div {
                label for="l-parent" { "Parent" }
                input id="l-parent" type="text" name="parent" placeholder="KEY-N" value=[filters.parent.as_deref()];
            }
            button type="submit" { "Filter" }
            @if !filters.query().is_empty() {
                a href=(format!("{base}/list")) { "Clear" }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_snippet_marks_matches_and_escapes_everything() {
        let out = snippet("a **<b>x</b>** and <script>alert(1)</script>").into_string();
        assert_eq!(
            out,
            "a <mark>&lt;b&gt;x&lt;/b&gt;</mark> and &lt;script&gt;alert(1)&lt;/script&gt;"
        );
        let unclosed = snippet("**hit** then ** alone").into_string();
        assert_eq!(unclosed, "<mark>hit</mark> then ** alone");
        assert_eq!(snippet("plain").into_string(), "plain");
    }

    #[test]
    fn filters_round_trip_with_several_statuses() {
        let f = ListFilters::from_query(
            "status=todo&status=review&label=api&mine=1&cursor=abc&created=3&parent=API-1",
        );
        assert_eq!(f.status, vec!["todo", "review"]);
        assert_eq!(f.cursor.as_deref(), Some("abc"));
        assert_eq!(f.created, Some(3));
        let href = f.href("/w/local", Some("c d"));
        assert_eq!(
            href,
            "/w/local/list?mine=1&label=api&status=todo&status=review&parent=API-1&cursor=c+d"
        );
        assert_eq!(ListFilters::default().href("/w/x", None), "/w/x/list");
    }
}
