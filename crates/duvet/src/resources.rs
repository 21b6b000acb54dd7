//! The resource tree of the Duvet MCP specification under `duvet:///`:
//!
//! ```text
//! duvet:///specifications
//! duvet:///specifications/{spec_id}
//! duvet:///specifications/{spec_id}/sections
//! duvet:///specifications/{spec_id}/sections/{section_id}
//! duvet:///specifications/{spec_id}/sections/{section_id}/requirements
//! duvet:///specifications/{spec_id}/sections/{section_id}/requirements/{req_identifier}
//! duvet:///specifications/{spec_id}/sections/{section_id}/requirements/{req_identifier}/citations
//! duvet:///specifications/{spec_id}/sections/{section_id}/requirements/{req_identifier}/citations/{citation_id}
//! duvet:///specifications/{spec_id}/sections/{section_id}/citations
//! duvet:///specifications/{spec_id}/sections/{section_id}/citations/{citation_id}
//! duvet:///requirements
//! duvet:///citations
//! ```
//!
//! `duvet:///citations` lists every valid citation: under each requirement it quotes, then
//! those that quote no requirement (with `why`), under their section. A section's
//! `citations` lists all of its citations, attached or not.
//!
//! The citation lists and citations belong to the toolset `citations`, the rest to
//! `requirements` ([`toolset`]): each is offered while a tool of its toolset is.
//!
//! Each read answers the JSON the specification shows. Lists are paged with the query
//! parameters `limit` (default 500, at most 5,000) and `cursor`, the same signed cursors as the
//! list tools, bound to the list's path; the content's `_meta` carries `total` and, when there
//! is more, `next_cursor` and `next` (the URI of the next page). A cursor that was altered, or
//! belongs to another list, is refused as invalid params.

use std::path::Path;

use mcp_common::{CursorKey, Limit, ToolError, page::page_by_offset};
use rmcp::{
    ErrorData as McpError,
    model::{MetaObject, ReadResourceResult, Resource, ResourceContents, ResourceTemplate},
};
use serde::Serialize;
use serde_json::{Value, json};

use crate::{checks, model::Model, tools};

pub const SCHEME: &str = "duvet://";
const JSON: &str = "application/json";
/// The most characters of a resource error's message (which may quote the request).
const MESSAGE_SHOWN: usize = 500;
/// The page sizes of list resources.
const LIMIT: Limit = Limit::new(500, 5000);

/// The fixed roots and one entry per specification.
pub fn list(model: Option<&Model>) -> Vec<Resource> {
    let mut resources = vec![
        Resource::new("duvet:///specifications", "specifications")
            .with_description("All specifications of the project")
            .with_mime_type(JSON),
        Resource::new("duvet:///requirements", "requirements")
            .with_description("All requirements across the project")
            .with_mime_type(JSON),
        Resource::new("duvet:///citations", "citations")
            .with_description("All citations across the project")
            .with_mime_type(JSON),
    ];
    if let Some(model) = model {
        for spec in &model.specs {
            resources.push(
                Resource::new(
                    format!("duvet:///specifications/{}", spec.id),
                    spec.name.clone(),
                )
                .with_description(if spec.description.is_empty() {
                    spec.url.clone()
                } else {
                    spec.description.clone()
                })
                .with_mime_type(JSON),
            );
        }
    }
    resources
}

pub fn templates() -> Vec<ResourceTemplate> {
    let base = "duvet:///specifications/{spec_id}";
    [
        (base.to_string(), "specification", "A specification"),
        (format!("{base}/sections"), "sections", "The sections of a specification"),
        (format!("{base}/sections/{{section_id}}"), "section", "A section with its text"),
        (
            format!("{base}/sections/{{section_id}}/requirements"),
            "section-requirements",
            "The requirements of a section",
        ),
        (
            format!("{base}/sections/{{section_id}}/requirements/{{req_identifier}}"),
            "requirement",
            "A requirement with its status",
        ),
        (
            format!("{base}/sections/{{section_id}}/requirements/{{req_identifier}}/citations"),
            "requirement-citations",
            "The citations of a requirement",
        ),
        (
            format!(
                "{base}/sections/{{section_id}}/requirements/{{req_identifier}}/citations/{{citation_id}}"
            ),
            "citation",
            "A citation with the code around it (citation_id like src/main.rs:42)",
        ),
        (
            format!("{base}/sections/{{section_id}}/citations"),
            "section-citations",
            "Every citation of a section, including those that quote no requirement",
        ),
        (
            format!("{base}/sections/{{section_id}}/citations/{{citation_id}}"),
            "section-citation",
            "A citation of a section with the code around it, and why it quotes no requirement when it does not",
        ),
    ]
    .into_iter()
    .map(|(uri, name, description)| {
        ResourceTemplate::new(uri, name)
            .with_description(description)
            .with_mime_type(JSON)
    })
    .collect()
}

/// The toolset a resource or template of the tree belongs to, as its tools do: `citations`
/// for `duvet:///citations` and whatever lies under a `citations` segment of a section or
/// requirement (the annotations in the code); `requirements` for the rest — specifications,
/// sections, requirements — and for a URI outside the tree. A resource is listed and read
/// only while a tool of its toolset is offered (`--toolsets`, `--tools`, `--read-only`, a
/// request's `X-MCP-*` headers).
pub fn toolset(uri: &str) -> &'static str {
    let path = uri.strip_prefix("duvet:///").unwrap_or_default();
    let path = path.split_once('?').map_or(path, |(path, _)| path);
    let segments: Vec<&str> = path.split('/').collect();
    match segments.as_slice() {
        ["citations", ..]
        | ["specifications", _, "sections", _, "citations", ..]
        | [
            "specifications",
            _,
            "sections",
            _,
            "requirements",
            _,
            "citations",
            ..,
        ] => "citations",
        _ => "requirements",
    }
}

fn not_found(message: String) -> McpError {
    McpError::resource_not_found(message, None)
}

/// Paging parameters from a URI's query.
struct Paging {
    limit: usize,
    cursor: Option<String>,
}

/// A refused paging parameter, as the protocol error resources answer: the message and the
/// hint.
fn invalid(err: ToolError) -> McpError {
    McpError::invalid_params(format!("{} {}", err.message, err.hint_text()), None)
}

fn paging(query: Option<&str>) -> Result<Paging, McpError> {
    let mut limit = None;
    let mut cursor = None;
    for pair in query.unwrap_or("").split('&').filter(|p| !p.is_empty()) {
        let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
        match key {
            "limit" => {
                let number: u64 = value.parse().map_err(|_| {
                    McpError::invalid_params(format!("'{value}' is not a number in ?limit="), None)
                })?;
                limit = Some(number);
            }
            "cursor" => {
                let value = percent_encoding::percent_decode_str(value).decode_utf8_lossy();
                cursor = Some(value.into_owned());
            }
            other => {
                return Err(McpError::invalid_params(
                    format!(
                        "unknown query parameter '{other}': list resources take limit and cursor (the next_cursor of the previous page)"
                    ),
                    None,
                ));
            }
        }
    }
    Ok(Paging {
        limit: LIMIT.resolve(limit).map_err(invalid)?,
        cursor,
    })
}

fn content(
    uri: &str,
    value: &impl Serialize,
    meta: Option<Value>,
) -> Result<ReadResourceResult, McpError> {
    let text = serde_json::to_string(value)
        .map_err(|err| McpError::internal_error(err.to_string(), None))?;
    let mut contents = ResourceContents::text(text, uri).with_mime_type(JSON);
    if let Some(Value::Object(map)) = meta {
        contents = contents.with_meta(MetaObject(map));
    }
    Ok(ReadResourceResult::new(vec![contents]))
}

/// One page of a list, with `_meta` saying the total and the next page.
fn page<T: Serialize + Clone>(
    key: &CursorKey,
    uri_path: &str,
    items: Vec<T>,
    paging: &Paging,
) -> Result<ReadResourceResult, McpError> {
    // Bound to the list's path: a cursor pages only the list it came from.
    let cursors = key.bind(uri_path, &());
    let (slice, page) = page_by_offset(&items, &cursors, paging.cursor.as_deref(), paging.limit)
        .map_err(invalid)?;
    let mut meta = json!({"total": page.total});
    if let Some(next) = page.next_cursor {
        meta["next"] = json!(format!("{uri_path}?cursor={next}&limit={}", paging.limit));
        meta["next_cursor"] = json!(next);
    }
    content(uri_path, &slice, Some(meta))
}

/// Read `uri`; a resource that does not exist is `-32002` with `data.uri` (SEP-2164).
pub fn read(
    model: &Model,
    root: &Path,
    key: &CursorKey,
    uri: &str,
) -> Result<ReadResourceResult, McpError> {
    read_uri(model, root, key, uri).map_err(|mut err| {
        // Messages name what was asked for; never all of a huge request.
        err.message = mcp_common::clip(&err.message, MESSAGE_SHOWN).into();
        mcp_common::protocol::with_uri(err, uri)
    })
}

fn read_uri(
    model: &Model,
    root: &Path,
    key: &CursorKey,
    uri: &str,
) -> Result<ReadResourceResult, McpError> {
    let rest = uri
        .strip_prefix("duvet:///")
        .ok_or_else(|| not_found(format!("'{uri}' is not a duvet:/// resource")))?;
    let (path, query) = match rest.split_once('?') {
        Some((path, query)) => (path, Some(query)),
        None => (rest, None),
    };
    let uri_path = format!("duvet:///{path}");
    let paging = paging(query)?;
    let decoded: Vec<String> = path
        .split('/')
        .map(|seg| {
            percent_encoding::percent_decode_str(seg)
                .decode_utf8_lossy()
                .into_owned()
        })
        .collect();
    let segments: Vec<&str> = decoded.iter().map(String::as_str).collect();

    match segments.as_slice() {
        ["specifications"] => {
            let specs: Vec<Value> = model.specs.iter().map(spec_json).collect();
            page(key, &uri_path, specs, &paging)
        }
        ["requirements"] => {
            let items: Vec<Value> = (0..model.requirements.len())
                .map(|r| {
                    json!({
                        "full_path": model.requirement_path(r),
                        "identifier": model.requirements[r].identifier,
                        "text": model.requirements[r].text,
                    })
                })
                .collect();
            page(key, &uri_path, items, &paging)
        }
        ["citations"] => {
            let mut items = Vec::new();
            for (r, req) in model.requirements.iter().enumerate() {
                for &c in &req.citations {
                    let id = &model.citations[c].id;
                    items.push(json!({
                        "full_path": format!(
                            "{}/citations/{}",
                            model.requirement_path(r),
                            percent_encoding::utf8_percent_encode(id, crate::model::CITATION_ID)
                        ),
                        "id": id,
                    }));
                }
            }
            for c in checks::unattached(model) {
                let citation = &model.citations[c];
                items.push(json!({
                    "full_path": section_citation_path(model, c),
                    "id": citation.id,
                    "why": checks::unattached_reason(model, c),
                }));
            }
            page(key, &uri_path, items, &paging)
        }
        ["specifications", spec_id, tail @ ..] => {
            let s = model
                .specs
                .iter()
                .position(|s| s.id == *spec_id)
                .ok_or_else(|| not_found(format!("Specification '{spec_id}' not found")))?;
            let spec = &model.specs[s];
            if let (Some(error), false) = (&spec.error, tail.is_empty()) {
                return Err(not_found(format!("{} has no sections: {error}", spec.name)));
            }
            match tail {
                [] => content(&uri_path, &spec_json(spec), None),
                ["sections"] => {
                    let items: Vec<Value> = spec
                        .sections
                        .iter()
                        .map(|c| json!({"id": c.id, "title": c.title}))
                        .collect();
                    page(key, &uri_path, items, &paging)
                }
                ["sections", section_id, tail @ ..] => {
                    let c = model.section_index(s, section_id).ok_or_else(|| {
                        not_found(format!(
                            "Section '{section_id}' not found in {}{}",
                            spec.name,
                            crate::model::did_you_mean(&model.section_suggestions(s, section_id))
                        ))
                    })?;
                    read_section(model, root, key, &uri_path, (s, c), tail, &paging)
                }
                _ => Err(not_found(format!("Unknown resource '{uri}'"))),
            }
        }
        _ => Err(not_found(format!(
            "Unknown resource '{uri}'; start at duvet:///specifications"
        ))),
    }
}

/// Refuse (as invalid params) a URI that is not one of the tree's: the three roots or a path
/// of the templates, with or without a page's query. The resource need not exist yet (a
/// specification may be added later); its updates are announced when the project changes.
pub fn check_subscribable(uri: &str) -> Result<(), McpError> {
    let path = uri
        .strip_prefix("duvet:///")
        .map(|rest| rest.split_once('?').map_or(rest, |(path, _)| path));
    let known = path.is_some_and(|path| {
        let segments: Vec<&str> = path.split('/').collect();
        if segments.iter().any(|s| s.is_empty()) {
            return false;
        }
        match segments.as_slice() {
            ["specifications"] | ["requirements"] | ["citations"] => true,
            ["specifications", _, tail @ ..] => matches!(
                tail,
                [] | ["sections"]
                    | ["sections", _]
                    | ["sections", _, "requirements"]
                    | ["sections", _, "requirements", _]
                    | ["sections", _, "requirements", _, "citations"]
                    | ["sections", _, "requirements", _, "citations", _, ..]
                    | ["sections", _, "citations"]
                    | ["sections", _, "citations", _, ..]
            ),
            _ => false,
        }
    });
    if known {
        Ok(())
    } else {
        Err(McpError::invalid_params(
            format!(
                "'{}' is not a duvet resource; subscribe to duvet:///specifications, duvet:///requirements, duvet:///citations or a path of the resource templates",
                mcp_common::clip(uri, 200)
            ),
            None,
        ))
    }
}

fn spec_json(spec: &crate::model::Spec) -> Value {
    let mut value = json!({
        "id": spec.id,
        "name": spec.name,
        "url": spec.url,
        "description": spec.description,
    });
    if let Some(error) = &spec.error {
        value["error"] = json!(error);
    }
    value
}

fn read_section(
    model: &Model,
    root: &Path,
    key: &CursorKey,
    uri_path: &str,
    (s, c): (usize, usize),
    tail: &[&str],
    paging: &Paging,
) -> Result<ReadResourceResult, McpError> {
    let section = &model.specs[s].sections[c];
    match tail {
        [] => content(
            uri_path,
            &json!({"id": section.id, "title": section.title, "content": section.content}),
            None,
        ),
        ["requirements"] => {
            let items: Vec<Value> = section
                .requirements
                .iter()
                .map(|&r| {
                    json!({
                        "identifier": model.requirements[r].identifier,
                        "text": model.requirements[r].text,
                    })
                })
                .collect();
            page(key, uri_path, items, paging)
        }
        ["requirements", identifier, tail @ ..] => {
            let r = tools::find_requirement(model, identifier, Some(&section.requirements))
                .map_err(|err| {
                    // Several requirements of the section: say which (invalid params).
                    if err.code == crate::errors::AMBIGUOUS_REQUIREMENT {
                        invalid(err)
                    } else {
                        not_found(format!(
                            "Requirement '{identifier}' not found in {}",
                            section.id
                        ))
                    }
                })?;
            let req = &model.requirements[r];
            match tail {
                [] => {
                    let mut value = serde_json::to_value(&req.status)
                        .map_err(|err| McpError::internal_error(err.to_string(), None))?;
                    value["identifier"] = json!(req.identifier);
                    value["text"] = json!(req.text);
                    value["level"] = json!(req.level.map(|l| l.as_str()));
                    content(uri_path, &value, None)
                }
                ["citations"] => {
                    let items: Vec<Value> = req
                        .citations
                        .iter()
                        .map(|&c| json!({"id": model.citations[c].id, "type": model.citations[c].kind}))
                        .collect();
                    page(key, uri_path, items, paging)
                }
                ["citations", citation @ ..] if !citation.is_empty() => {
                    let id = citation.join("/");
                    let c = req
                        .citations
                        .iter()
                        .copied()
                        .find(|&c| model.citations[c].id == id)
                        .ok_or_else(|| {
                            not_found(format!("Citation '{id}' not found for this requirement"))
                        })?;
                    content(uri_path, &citation_json(model, root, c), None)
                }
                _ => Err(not_found(format!("Unknown resource '{uri_path}'"))),
            }
        }
        ["citations"] => {
            let items: Vec<Value> = section_citations(model, (s, c))
                .map(|i| {
                    let citation = &model.citations[i];
                    json!({
                        "id": citation.id,
                        "type": citation.kind,
                        "requirements": citation
                            .requirements
                            .iter()
                            .map(|&r| &model.requirements[r].identifier)
                            .collect::<Vec<_>>(),
                    })
                })
                .collect();
            page(key, uri_path, items, paging)
        }
        ["citations", citation @ ..] if !citation.is_empty() => {
            let id = citation.join("/");
            let i = section_citations(model, (s, c))
                .find(|&i| model.citations[i].id == id)
                .ok_or_else(|| not_found(format!("Citation '{id}' not found in {}", section.id)))?;
            content(uri_path, &citation_json(model, root, i), None)
        }
        _ => Err(not_found(format!("Unknown resource '{uri_path}'"))),
    }
}

/// The citations of a section, in model order.
fn section_citations(model: &Model, (s, c): (usize, usize)) -> impl Iterator<Item = usize> + '_ {
    (0..model.citations.len())
        .filter(move |&i| model.citations[i].spec == s && model.citations[i].section == c)
}

fn section_citation_path(model: &Model, c: usize) -> String {
    let citation = &model.citations[c];
    format!(
        "{}/citations/{}",
        model.specs[citation.spec].sections[citation.section].path,
        percent_encoding::utf8_percent_encode(&citation.id, crate::model::CITATION_ID)
    )
}

/// A citation with the code around it, and why it quotes no requirement when it does not.
fn citation_json(model: &Model, root: &Path, c: usize) -> Value {
    let citation = &model.citations[c];
    let context = tools::citation_context(root, &citation.file, citation.line, 3)
        .map(|ctx| ctx.context)
        .ok();
    let mut value = json!({
        "file_path": crate::model::path_text(&citation.file),
        "line_number": citation.line,
        "comment_text": citation.comment_text,
        "type": citation.kind,
    });
    if let Some(lines) = context {
        value["context_lines"] = json!(lines);
    }
    if citation.requirements.is_empty() {
        value["why"] = json!(checks::unattached_reason(model, c));
    }
    value
}
