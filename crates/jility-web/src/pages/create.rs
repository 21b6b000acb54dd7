//! Creating tickets (`/new`): one ticket, a batch from pasted lines (all or none), or one
//! from a template with its variables. Each form checks the session's token and runs its
//! operation as the person (a viewer is refused); a refused form comes back as the page
//! with the message, its hint and what was typed, or as JSON to the page's script.
//! The markup is in `create_forms`.

use std::collections::BTreeMap;

use axum::body::Bytes;
use axum::extract::{Path, Query, State};
use axum::http::HeaderMap;
use axum::response::{IntoResponse, Response};
use jility_core::errors::INVALID_INPUT;
use jility_core::ops;
use jility_core::params::{
    BatchItem, CreateBatch, CreateTicket, FromTemplate, ListTemplates, SuggestRelated,
};
use jility_core::tracker::TemplateList;
use mcp_common_core::ToolError;

use super::create_forms::{self, Form, Kept, NewPage, Templates};
use super::list::ListFilters;
use super::{answer_form, field, form, missing, respond, run, viewer, write};
use crate::errors::{WebError, wants_json};
use crate::layout::{self, Section};
use crate::site::{Site, Viewer};

/// Pages of templates read at most (200 each).
const TEMPLATE_PAGES: usize = 10;

/// `GET /w/{workspace}/new` (`?template=NAME` shows that template's variables).
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
    if !viewer.can_write {
        return refused_to_look(&headers);
    }
    let chosen = query
        .get("template")
        .map(|t| t.trim())
        .filter(|t| !t.is_empty());
    show(&site, &viewer, &headers, chosen, Kept::default(), None).await
}

/// `GET /w/{workspace}/related?title=…&description=…`: the likely duplicates of a ticket
/// being written (jility_suggest_related's answer, as JSON), for the create form's hint as
/// the title is typed. It only reads: anyone who may look at the workspace may ask.
pub async fn related<S: Site>(
    State(site): State<S>,
    Path(workspace): Path<String>,
    Query(query): Query<BTreeMap<String, String>>,
    headers: HeaderMap,
) -> Response {
    let viewer = match viewer(&site, &headers, &workspace).await {
        Ok(v) => v,
        Err(refusal) => return refusal,
    };
    let probe = jility_core::params::as_sent(SuggestRelated {
        ticket_id: None,
        title: query.get("title").cloned(),
        description: query.get("description").cloned(),
        limit: Some(5),
    });
    let answer = match probe {
        Ok(probe) => run::<S, ops::SuggestRelated>(&site, &viewer, probe).await,
        Err(err) => Err(crate::errors::WebError::Tool(err)),
    };
    match answer {
        Ok(related) => axum::Json(related).into_response(),
        Err(err) => err.answer(&headers),
    }
}

fn refused_to_look(headers: &HeaderMap) -> Response {
    WebError::Forbidden(
        "Your role in this workspace lets you look at tickets, not create them".to_string(),
    )
    .answer(headers)
}

/// The page, with a refused form's values and why it was refused.
async fn show<S: Site>(
    site: &S,
    viewer: &Viewer,
    headers: &HeaderMap,
    chosen: Option<&str>,
    kept: Kept<'_>,
    error: Option<&ToolError>,
) -> Response {
    let templates = templates(site, viewer).await;
    let main = create_forms::render(&NewPage {
        viewer,
        templates: &templates,
        chosen,
        kept,
        error,
    });
    respond(site, viewer, headers, Section::New, "New tickets", main)
}

/// Every template (built-in and the project's), page by page.
async fn templates<S: Site>(site: &S, viewer: &Viewer) -> Templates {
    let mut all = TemplateList {
        templates: Vec::new(),
        problems: Vec::new(),
    };
    let mut cursor = None;
    for _ in 0..TEMPLATE_PAGES {
        let page = run::<S, ops::ListTemplates>(
            site,
            viewer,
            ListTemplates {
                limit: Some(200),
                cursor: cursor.take(),
            },
        )
        .await
        .map_err(|e| e.as_tool_error())?;
        all.templates.extend(page.data.templates);
        all.problems = page.data.problems;
        match page.page.next_cursor {
            Some(next) => cursor = Some(next),
            None => break,
        }
    }
    Ok(all)
}

/// The answer to one of the page's forms: where the person goes next (and JSON for the
/// script), or the page again with the refusal and their values.
async fn answer<S: Site>(
    site: &S,
    viewer: &Viewer,
    headers: &HeaderMap,
    form: Form,
    pairs: &[(String, String)],
    result: Result<(serde_json::Value, String), WebError>,
) -> Response {
    match result {
        Ok((value, location)) => answer_form(headers, Ok(value), location),
        Err(err) if wants_json(headers) => err.answer(headers),
        Err(err @ WebError::Tool(_)) => {
            let status = err.status();
            let error = err.as_tool_error();
            let kept = Kept {
                form: Some(form),
                pairs,
            };
            let chosen = (form == Form::Template)
                .then(|| field(pairs, "template"))
                .flatten();
            let mut response = show(site, viewer, headers, chosen, kept, Some(&error)).await;
            *response.status_mut() = status;
            response
        }
        Err(err) => err.answer(headers),
    }
}

/// `POST /w/{workspace}/tickets`: title, description, status, story_points, labels and
/// assignees (comma lists), parent, epic. Goes to the new ticket's page.
pub async fn create_one<S: Site>(
    State(site): State<S>,
    Path(workspace): Path<String>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let (viewer, pairs) = match form(&site, &headers, &workspace, &body).await {
        Ok(v) => v,
        Err(refusal) => return refusal,
    };
    let result = async {
        let params = CreateTicket {
            title: field(&pairs, "title")
                .ok_or_else(|| missing("title"))?
                .to_string(),
            description: optional(&pairs, "description"),
            story_points: points(field(&pairs, "story_points"))?,
            status: optional(&pairs, "status").map(jility_core::params::StatusName),
            assignees: comma_list(field(&pairs, "assignees")),
            labels: comma_list(field(&pairs, "labels")),
            parent_id: optional(&pairs, "parent"),
            epic_id: optional(&pairs, "epic"),
            kind: None,
        };
        let out = write::<S, ops::CreateTicket>(&site, &viewer, params).await?;
        let t = out.ticket;
        let location = ticket_href(&viewer, &t.number);
        Ok((
            serde_json::json!({ "number": t.number, "title": t.title }),
            location,
        ))
    }
    .await;
    answer(&site, &viewer, &headers, Form::One, &pairs, result).await
}

/// `POST /w/{workspace}/tickets/batch`: lines (one title a line), parent and labels for
/// all. All or none; goes to the list showing them, with the count.
pub async fn create_batch<S: Site>(
    State(site): State<S>,
    Path(workspace): Path<String>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let (viewer, pairs) = match form(&site, &headers, &workspace, &body).await {
        Ok(v) => v,
        Err(refusal) => return refusal,
    };
    let result = async {
        let lines = batch_titles(field(&pairs, "lines").ok_or_else(|| missing("lines"))?);
        if lines.is_empty() {
            return Err(invalid(
                "There are no titles to create",
                "Paste one title per line; blank lines are skipped.",
            ));
        }
        let labels = comma_list(field(&pairs, "labels"));
        let params = CreateBatch {
            tickets: lines
                .iter()
                .map(|(_, title)| BatchItem {
                    title: title.clone(),
                    description: None,
                    story_points: None,
                    assignees: Vec::new(),
                    labels: labels.clone(),
                    depends_on: Vec::new(),
                    kind: None,
                })
                .collect(),
            parent_id: optional(&pairs, "parent"),
        };
        let out = write::<S, ops::CreateBatch>(&site, &viewer, params)
            .await
            .map_err(|e| by_line(e, &lines))?;
        let count = out.tickets.len();
        // They all start in the backlog: the list of the backlog, of their parent or
        // their first label, shows them first (newest first).
        let mut shown = ListFilters {
            status: vec!["backlog".to_string()],
            ..ListFilters::default()
        };
        if let Some(parent) = &out.parent {
            shown.parent = Some(parent.number.clone());
        } else if let Some(label) = labels.first() {
            shown.board.label = Some(label.clone());
        }
        let list = shown.href(&layout::base(&viewer.workspace), None);
        let location = format!("{list}&created={count}");
        let numbers: Vec<&str> = out.tickets.iter().map(|t| t.number.as_str()).collect();
        Ok((
            serde_json::json!({ "created": count, "numbers": numbers }),
            location,
        ))
    }
    .await;
    answer(&site, &viewer, &headers, Form::Batch, &pairs, result).await
}

/// `POST /w/{workspace}/tickets/from-template`: template, `var_<name>` for each of its
/// variables, assignee. Goes to the new ticket's page.
pub async fn create_from_template<S: Site>(
    State(site): State<S>,
    Path(workspace): Path<String>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let (viewer, pairs) = match form(&site, &headers, &workspace, &body).await {
        Ok(v) => v,
        Err(refusal) => return refusal,
    };
    let result = async {
        let template = field(&pairs, "template").ok_or_else(|| missing("template"))?;
        let variables: BTreeMap<String, String> = pairs
            .iter()
            .filter_map(|(k, v)| {
                let name = k.strip_prefix("var_")?;
                let value = v.trim();
                (!name.is_empty() && !value.is_empty())
                    .then(|| (name.to_string(), value.to_string()))
            })
            .collect();
        let params = FromTemplate {
            template: template.to_string(),
            variables,
            assignee: optional(&pairs, "assignee"),
        };
        let out = write::<S, ops::CreateFromTemplate>(&site, &viewer, params).await?;
        let t = out.ticket;
        let location = ticket_href(&viewer, &t.number);
        Ok((
            serde_json::json!({ "number": t.number, "title": t.title, "template": out.template }),
            location,
        ))
    }
    .await;
    answer(&site, &viewer, &headers, Form::Template, &pairs, result).await
}

/// A ticket's page address.
fn ticket_href(viewer: &Viewer, number: &str) -> String {
    format!(
        "{}/tickets/{}",
        layout::base(&viewer.workspace),
        layout::segment(number)
    )
}

fn invalid(message: &str, hint: &str) -> WebError {
    WebError::Tool(ToolError::new(INVALID_INPUT, message).with_hint(hint))
}

/// A field's trimmed value, `None` when absent or blank.
fn optional(pairs: &[(String, String)], name: &str) -> Option<String> {
    field(pairs, name)
        .map(str::trim)
        .filter(|v| !v.is_empty())
        .map(str::to_string)
}

/// A comma-separated list, trimmed, blanks dropped.
pub fn comma_list(text: Option<&str>) -> Vec<String> {
    text.unwrap_or_default()
        .split(',')
        .map(str::trim)
        .filter(|v| !v.is_empty())
        .map(str::to_string)
        .collect()
}

/// Story points as the form sends them: blank for none, else a whole number (the tracker
/// checks its range).
fn points(text: Option<&str>) -> Result<Option<i64>, WebError> {
    match text.map(str::trim).filter(|t| !t.is_empty()) {
        None => Ok(None),
        Some(t) => t.parse().map(Some).map_err(|_| {
            invalid(
                "Story points must be a whole number",
                "Choose 1, 2, 3, 5, 8 or 13, or None.",
            )
        }),
    }
}

/// The titles of pasted lines, each with its line number (from 1): a leading bullet
/// (`- `, `* `, `+ `, `1. `, `1) `) and a task box (`[ ] `, `[x] `) removed, blank lines
/// skipped.
pub fn batch_titles(text: &str) -> Vec<(usize, String)> {
    text.lines()
        .enumerate()
        .filter_map(|(i, line)| {
            let title = clean_line(line);
            (!title.is_empty()).then(|| (i + 1, title.to_string()))
        })
        .collect()
}

fn clean_line(line: &str) -> &str {
    let line = line.trim();
    match strip_bullet(line) {
        Some(after) => strip_task(after.trim_start()).trim(),
        None => line,
    }
}

/// What follows `marker` when a space (or nothing) follows it.
fn after_marker<'a>(text: &'a str, marker: &str) -> Option<&'a str> {
    text.strip_prefix(marker)
        .filter(|after| after.is_empty() || after.starts_with(char::is_whitespace))
}

/// The line after its bullet (`-`, `*`, `+`, `1.`, `1)`), if it has one.
fn strip_bullet(line: &str) -> Option<&str> {
    if let Some(after) = ["-", "*", "+"].iter().find_map(|b| after_marker(line, b)) {
        return Some(after);
    }
    let number = line.trim_start_matches(|c: char| c.is_ascii_digit());
    if number.len() == line.len() {
        return None;
    }
    after_marker(number, ".").or_else(|| after_marker(number, ")"))
}

/// The text after a task box (`[ ]`, `[x]`), else the text.
fn strip_task(text: &str) -> &str {
    ["[ ]", "[x]", "[X]"]
        .iter()
        .find_map(|t| after_marker(text, t))
        .unwrap_or(text)
}

/// A batch's refusal naming the pasted line (`Line 4: …`) rather than the item of the
/// batch (`Ticket #3 of the batch: …`), blank lines being skipped.
fn by_line(err: WebError, lines: &[(usize, String)]) -> WebError {
    let WebError::Tool(mut e) = err else {
        return err;
    };
    let line = e
        .message
        .strip_prefix("Ticket #")
        .and_then(|rest| rest.split_once(" of the batch"))
        .and_then(|(n, tail)| {
            let n: usize = n.parse().ok()?;
            let (line, _) = lines.get(n.checked_sub(1)?)?;
            Some(format!("Line {line}{tail}"))
        });
    if let Some(message) = line {
        e.message = message;
    }
    WebError::Tool(e)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pasted_lines_lose_their_bullets_and_blank_lines() {
        let text = "- Login form\n\n* Password reset\n1. Rate limiter\n12) Audit log\n- [ ] Tick me\n- [x] Done one\n  + Nested  \n   \nplain title\n-dash kept\n";
        let titles: Vec<(usize, String)> = batch_titles(text);
        let only: Vec<&str> = titles.iter().map(|(_, t)| t.as_str()).collect();
        assert_eq!(
            only,
            [
                "Login form",
                "Password reset",
                "Rate limiter",
                "Audit log",
                "Tick me",
                "Done one",
                "Nested",
                "plain title",
                "-dash kept"
            ]
        );
        assert_eq!(titles[1].0, 3);
        assert!(batch_titles("\n  \n- \n-\n- [ ]\n").is_empty());
        let kept: Vec<String> = batch_titles("1.5 release\n**bold** idea\n")
            .into_iter()
            .map(|(_, t)| t)
            .collect();
        assert_eq!(kept, ["1.5 release", "**bold** idea"]);
    }

    #[test]
    fn a_refused_item_is_named_by_its_line() {
        let lines = vec![(1, "a".to_string()), (4, "b".to_string())];
        let err = WebError::Tool(ToolError::new(
            INVALID_INPUT,
            "Ticket #2 of the batch: Title is longer than 500 characters",
        ));
        let WebError::Tool(e) = by_line(err, &lines) else {
            panic!("a tool error");
        };
        assert_eq!(e.message, "Line 4: Title is longer than 500 characters");
    }

    #[test]
    fn points_and_lists_are_read_from_the_form() {
        assert_eq!(points(Some("")).ok(), Some(None));
        assert_eq!(points(Some(" 5 ")).ok(), Some(Some(5)));
        assert!(points(Some("five")).is_err());
        assert_eq!(comma_list(Some(" a, ,b ,")), ["a", "b"]);
    }
}
