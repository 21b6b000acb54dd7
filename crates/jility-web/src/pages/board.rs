//! The board: one column per status with its count, 25 cards a column (a column pages on
//! with its own cursor, so a workspace of any size costs six short reads), filters kept in
//! the URL (assignee, mine, label, epic, text). A card moves by drag-and-drop, by keyboard
//! (`[` and `]` on a focused card, or its "Move" menu) or, without script, by the menu's form.

use axum::extract::{Path, Query, State};
use axum::http::HeaderMap;
use axum::response::{IntoResponse, Response};
use jility_core::model::{Status, TicketSummary};
use jility_core::ops;
use jility_core::params::{ListTickets, SearchTickets, SprintName, StatusName};
use jility_core::tracker::SprintStats;
use maud::{Markup, html};
use mcp_common_core::ToolError;
use std::collections::BTreeMap;

use super::{respond, run, viewer};
use crate::errors::WebError;
use crate::layout::{self, Section};
use crate::site::{Site, Viewer};

/// Cards a column shows at once.
pub const COLUMN_SIZE: i64 = 25;
/// Results of a text filter (grouped into the columns).
const SEARCH_SIZE: i64 = 100;

/// The board's filters, as the URL carries them.
#[derive(Debug, Default, Clone)]
pub struct Filters {
    pub assignee: Option<String>,
    pub mine: bool,
    pub label: Option<String>,
    pub epic: Option<String>,
    /// A sprint: its name or number, `active`, or `none` (the backlog).
    pub sprint: Option<String>,
    pub text: Option<String>,
    /// A column's cursor (`after_<status>`).
    pub after: BTreeMap<String, String>,
}

impl Filters {
    pub fn from_query(query: &BTreeMap<String, String>) -> Self {
        let text = |name: &str| {
            query
                .get(name)
                .map(|v| v.trim().to_string())
                .filter(|v| !v.is_empty())
        };
        Self {
            assignee: text("assignee"),
            mine: query
                .get("mine")
                .is_some_and(|v| v == "1" || v == "on" || v == "true"),
            label: text("label"),
            epic: text("epic"),
            sprint: text("sprint"),
            text: text("q"),
            after: query
                .iter()
                .filter_map(|(k, v)| k.strip_prefix("after_").map(|s| (s.to_string(), v.clone())))
                .collect(),
        }
    }

    /// The query string of these filters (without cursors), e.g. `label=api&mine=1`.
    pub fn query(&self) -> String {
        let mut q = form_urlencoded::Serializer::new(String::new());
        if let Some(a) = &self.assignee {
            q.append_pair("assignee", a);
        }
        if self.mine {
            q.append_pair("mine", "1");
        }
        if let Some(l) = &self.label {
            q.append_pair("label", l);
        }
        if let Some(e) = &self.epic {
            q.append_pair("epic", e);
        }
        if let Some(s) = &self.sprint {
            q.append_pair("sprint", s);
        }
        if let Some(t) = &self.text {
            q.append_pair("q", t);
        }
        q.finish()
    }

    fn assignee_for(&self, viewer: &Viewer) -> Option<String> {
        if self.mine {
            Some(viewer.name.clone())
        } else {
            self.assignee.clone()
        }
    }

    /// The search text with these filters (and `statuses`, `parent`) written after it as
    /// qualifiers of the query language, so that the search applies every one of them; the
    /// sprint goes as the search's own `sprint`.
    pub fn search_query(
        &self,
        viewer: &Viewer,
        statuses: &[String],
        parent: Option<&str>,
    ) -> Result<String, WebError> {
        let mut query = self.text.clone().unwrap_or_default();
        let mut add = |name: &str, value: &str| -> Result<(), WebError> {
            if value.contains('"') {
                return Err(WebError::Tool(
                    ToolError::new(
                        jility_core::errors::INVALID_INPUT,
                        format!("The {name} filter cannot hold a double quote when searching"),
                    )
                    .with_hint("Clear the search, or filter by another name."),
                ));
            }
            let value = if value.contains(char::is_whitespace) || value.contains(',') {
                format!("\"{value}\"")
            } else {
                value.to_string()
            };
            query.push_str(&format!(" {name}:{value}"));
            Ok(())
        };
        if !statuses.is_empty() {
            add("status", &statuses.join(","))?;
        }
        if let Some(a) = self.assignee_for(viewer) {
            add("assignee", &a)?;
        }
        if let Some(l) = &self.label {
            add("label", l)?;
        }
        if let Some(e) = &self.epic {
            add("epic", e)?;
        }
        if let Some(p) = parent {
            add("parent", p)?;
        }
        Ok(query)
    }
}

/// One column as read.
struct Column {
    status: Status,
    cards: Vec<TicketSummary>,
    total: u64,
    exact: bool,
    next: Option<String>,
}

/// `GET /w/{workspace}/board`.
pub async fn page<S: Site>(
    State(site): State<S>,
    Path(workspace): Path<String>,
    Query(query): Query<BTreeMap<String, String>>,
    headers: HeaderMap,
) -> Response {
    let viewer = match viewer(&site, &headers, &workspace).await {
        Ok(v) => v,
        Err(refusal) => return refusal,
    };
    let filters = Filters::from_query(&query);
    // The board of a sprint says where the sprint stands.
    let sprint = match &filters.sprint {
        Some(name)
            if !name.eq_ignore_ascii_case("none") && !name.eq_ignore_ascii_case("backlog") =>
        {
            match run::<S, ops::SprintStats>(
                &site,
                &viewer,
                SprintName {
                    sprint: name.clone(),
                },
            )
            .await
            {
                Ok(stats) => Some(stats),
                Err(err) => return err.answer(&headers).into_response(),
            }
        }
        _ => None,
    };
    let (columns, refused) = match columns(&site, &viewer, &filters).await {
        Ok(columns) => (columns, None),
        // A query that does not read: the board, empty, with what to correct.
        Err(WebError::Tool(err))
            if filters.text.is_some() && err.code == jility_core::errors::INVALID_INPUT =>
        {
            (Vec::new(), Some(err))
        }
        Err(err) => return err.answer(&headers).into_response(),
    };
    let people = site.people(&viewer).await;
    let views = super::views::seen(&site, &viewer).await;
    let shown = Shown {
        sprint: sprint.as_ref(),
        columns: &columns,
        people: &people,
        views: &views,
        refused: refused.as_ref(),
    };
    let main = render(&viewer, &filters, &shown);
    respond(&site, &viewer, &headers, Section::Board, "Board", main)
}

/// What the board shows beside its filters.
struct Shown<'a> {
    sprint: Option<&'a SprintStats>,
    columns: &'a [Column],
    people: &'a [String],
    views: &'a [jility_core::tracker::View],
    /// Why the text filter's query was refused.
    refused: Option<&'a ToolError>,
}

async fn columns<S: Site>(
    site: &S,
    viewer: &Viewer,
    filters: &Filters,
) -> Result<Vec<Column>, WebError> {
    let assignee = filters.assignee_for(viewer);
    if filters.text.is_some() {
        // A text filter: the best matches of the query with the board's filters, grouped
        // into their columns.
        let found = run::<S, ops::SearchTickets>(
            site,
            viewer,
            SearchTickets {
                query: filters.search_query(viewer, &[], None)?,
                limit: Some(SEARCH_SIZE),
                cursor: None,
                sprint: filters.sprint.clone(),
            },
        )
        .await?;
        let mut columns: Vec<Column> = Status::ALL
            .iter()
            .map(|&status| Column {
                status,
                cards: Vec::new(),
                total: 0,
                exact: true,
                next: None,
            })
            .collect();
        for hit in found.data.hits {
            let card = TicketSummary {
                number: hit.number,
                title: hit.title,
                status: hit.status,
                story_points: None,
                assignees: hit.assignees,
                labels: Vec::new(),
                updated_at: String::new(),
            };
            if let Some(column) = columns.iter_mut().find(|c| c.status == card.status) {
                column.total += 1;
                column.cards.push(card);
            }
        }
        return Ok(columns);
    }
    let mut columns = Vec::with_capacity(Status::ALL.len());
    for status in Status::ALL {
        let page = run::<S, ops::ListTickets>(
            site,
            viewer,
            ListTickets {
                status: vec![StatusName(status.as_str().to_string())],
                assignee: assignee.clone(),
                labels: filters.label.iter().cloned().collect(),
                parent_id: None,
                epic_id: filters.epic.clone(),
                unassigned: false,
                sprint: filters.sprint.clone(),
                query: None,
                limit: Some(COLUMN_SIZE),
                cursor: filters.after.get(status.as_str()).cloned(),
            },
        )
        .await?;
        columns.push(Column {
            status,
            total: page.page.total,
            exact: page.page.total_exact.unwrap_or(true),
            next: page.page.next_cursor,
            cards: page.data.tickets,
        });
    }
    Ok(columns)
}

/// The header of a sprint's board: its name (a link to its page), dates, points committed
/// and completed, days left.
fn sprint_header(viewer: &Viewer, stats: &SprintStats) -> Markup {
    let s = &stats.sprint;
    html! {
        section class="sprint-header" aria-label="Sprint" data-sprint=(s.number) {
            h2 {
                a href=(super::sprints::sprint_href(viewer, s.number)) { (s.name) }
                " " span class=(format!("sprint-state st-{}", s.state)) { (s.state) }
            }
            p {
                (s.starts_on) " → " (s.ends_on)
                " · " span data-committed { (stats.committed_points) " committed" }
                " · " span data-completed { (stats.completed_points) " completed" }
                " · " span data-remaining { (stats.remaining_points) " remaining" }
                @if s.state != "completed" { " · " span data-days-left { (stats.days_left) " days left" } }
            }
        }
    }
}

fn render(viewer: &Viewer, filters: &Filters, shown: &Shown<'_>) -> Markup {
    let (sprint, columns, people, views) = (shown.sprint, shown.columns, shown.people, shown.views);
    let base = layout::base(&viewer.workspace);
    let query = filters.query();
    let here = if query.is_empty() {
        format!("{base}/board")
    } else {
        format!("{base}/board?{query}")
    };
    html! {
        main id="main" class="board-page" data-page="board" {
            h1 class="visually-hidden" { "Board" }
            @if let Some(stats) = sprint { (sprint_header(viewer, stats)) }
            (filter_form(&base, filters))
            (super::views::nav(viewer, "board", views, filters.text.as_deref()))
            div id="notice" {
                @if let Some(err) = shown.refused {
                    div data-refused=(err.code.as_str()) {
                        (layout::notice("error", &err.message, err.hint.as_deref()))
                    }
                }
            }
            div class="board" data-board data-can-write=(viewer.can_write) data-base=(base) {
                @for column in columns {
                    section class="column" data-status=(column.status.as_str())
                        aria-labelledby=(format!("col-{}", column.status.as_str())) {
                        h2 id=(format!("col-{}", column.status.as_str())) {
                            (column.status.label())
                            " "
                            span class="count" data-count {
                                (column.total) @if !column.exact { "+" }
                            }
                        }
                        ol class="cards" {
                            @for card in &column.cards {
                                li { (card_markup(viewer, &base, card, people, &here)) }
                            }
                        }
                        @if let Some(next) = &column.next {
                            a class="more" href=(more_href(&base, filters, column.status, next)) {
                                "More " (column.status.label())
                            }
                        }
                    }
                }
            }
            p class="help" {
                "Drag a card to another column, or focus it and press [ or ] to move it one column; "
                "its Move menu lists the moves the workflow allows. Assignees: "
                span class="who person" { "a person" } " or " span class="who agent" { "an agent" } "."
            }
        }
    }
}

fn more_href(base: &str, filters: &Filters, status: Status, cursor: &str) -> String {
    let mut q = filters.query();
    let mut extra = form_urlencoded::Serializer::new(String::new());
    extra.append_pair(&format!("after_{}", status.as_str()), cursor);
    if !q.is_empty() {
        q.push('&');
    }
    q.push_str(&extra.finish());
    format!("{base}/board?{q}")
}

fn filter_form(base: &str, filters: &Filters) -> Markup {
    html! {
        form class="filters" method="get" action=(format!("{base}/board")) {
            div {
                label for="f-q" { "Text" }
                input id="f-q" type="search" name="q" value=[filters.text.as_deref()];
            }
            div {
                label for="f-assignee" { "Assignee" }
                input id="f-assignee" type="text" name="assignee" value=[filters.assignee.as_deref()];
            }
            div class="check" {
                input id="f-mine" type="checkbox" name="mine" value="1" checked[filters.mine];
                label for="f-mine" { "Mine" }
            }
            div {
                label for="f-label" { "Label" }
                input id="f-label" type="text" name="label" value=[filters.label.as_deref()];
            }
            div {
                label for="f-epic" { "Epic" }
                input id="f-epic" type="text" name="epic" placeholder="KEY-N" value=[filters.epic.as_deref()];
            }
            div {
                label for="f-sprint" { "Sprint" }
                input id="f-sprint" type="text" name="sprint" placeholder="active" value=[filters.sprint.as_deref()];
            }
            button type="submit" { "Filter" }
            @if !filters.query().is_empty() {
                a href=(format!("{base}/board")) { "Clear" }
            }
        }
    }
}

/// A card: number, title, points, assignees (people and agents told apart), labels, a
/// blocked badge, and its Move menu.
pub fn card_markup(
    viewer: &Viewer,
    base: &str,
    card: &TicketSummary,
    people: &[String],
    back: &str,
) -> Markup {
    let href = format!("{base}/tickets/{}", layout::segment(&card.number));
    html! {
        article class="card" tabindex="0" draggable=[viewer.can_write.then_some("true")]
            data-ticket=(card.number) data-status=(card.status.as_str())
            aria-label=(format!("{} {}", card.number, card.title)) {
            div class="card-head" {
                a class="key" href=(href) { (card.number) }
                @if let Some(points) = card.story_points {
                    span class="points" title="Story points" { (points) " pt" }
                }
                @if card.status == Status::Blocked {
                    span class="badge blocked" { "Blocked" }
                }
            }
            p class="title" { a href=(href) tabindex="-1" { (card.title) } }
            @if !card.assignees.is_empty() || !card.labels.is_empty() {
                div class="meta" {
                    @for name in &card.assignees {
                        (super::parts::who(name, people))
                    }
                    @for label in &card.labels {
                        span class="label" { (label) }
                    }
                }
            }
            @if viewer.can_write {
                details class="move" {
                    summary { "Move" }
                    form method="post" action=(format!("{href}/status")) {
                        input type="hidden" name="_csrf" value=(viewer.csrf);
                        input type="hidden" name="back" value=(back);
                        label for=(format!("mv-{}", card.number)) { "To" }
                        select id=(format!("mv-{}", card.number)) name="status" {
                            @for to in card.status.transitions() {
                                option value=(to.as_str()) { (to.label()) }
                            }
                        }
                        button type="submit" { "Move" }
                    }
                }
            }
        }
    }
}
