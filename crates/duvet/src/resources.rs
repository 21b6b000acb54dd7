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
//! duvet:///requirements
//! duvet:///citations
//! ```
//!
//! Each read answers the JSON the specification shows. Lists are paged with the query
//! parameters `offset` and `limit` (default 500, at most 5,000); the content's `_meta` carries
//! `total` and, when there is more, `next` (the URI of the next page).

use std::path::Path;

use rmcp::{
    ErrorData as McpError,
    model::{MetaObject, ReadResourceResult, Resource, ResourceContents, ResourceTemplate},
};
use serde::Serialize;
use serde_json::{Value, json};

use crate::{model::Model, tools};

pub const SCHEME: &str = "duvet://";
const JSON: &str = "application/json";
const PAGE_DEFAULT: usize = 500;
const PAGE_MAX: usize = 5000;

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
    ]
    .into_iter()
    .map(|(uri, name, description)| {
        ResourceTemplate::new(uri, name)
            .with_description(description)
            .with_mime_type(JSON)
    })
    .collect()
}

fn not_found(message: String) -> McpError {
    McpError::resource_not_found(message, None)
}

/// Paging parameters from a URI's query.
struct Paging {
    offset: usize,
    limit: usize,
}

fn paging(query: Option<&str>) -> Result<Paging, McpError> {
    let mut paging = Paging {
        offset: 0,
        limit: PAGE_DEFAULT,
    };
    for pair in query.unwrap_or("").split('&').filter(|p| !p.is_empty()) {
        let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
        let number: usize = value.parse().map_err(|_| {
            McpError::invalid_params(format!("'{value}' is not a number in ?{key}="), None)
        })?;
        match key {
            "offset" => paging.offset = number,
            "limit" if (1..=PAGE_MAX).contains(&number) => paging.limit = number,
            "limit" => {
                return Err(McpError::invalid_params(
                    format!("limit must be between 1 and {PAGE_MAX}"),
                    None,
                ));
            }
            other => {
                return Err(McpError::invalid_params(
                    format!("unknown query parameter '{other}' (use offset and limit)"),
                    None,
                ));
            }
        }
    }
    Ok(paging)
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
fn page<T: Serialize>(
    uri_path: &str,
    items: Vec<T>,
    paging: &Paging,
) -> Result<ReadResourceResult, McpError> {
    let total = items.len();
    let slice: Vec<&T> = items
        .iter()
        .skip(paging.offset)
        .take(paging.limit)
        .collect();
    let end = paging.offset.saturating_add(paging.limit);
    let mut meta = json!({"total": total});
    if end < total {
        meta["next"] = json!(format!("{uri_path}?offset={end}&limit={}", paging.limit));
    }
    content(uri_path, &slice, Some(meta))
}

/// Read `uri`.
pub fn read(model: &Model, root: &Path, uri: &str) -> Result<ReadResourceResult, McpError> {
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
            page(&uri_path, specs, &paging)
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
            page(&uri_path, items, &paging)
        }
        ["citations"] => {
            let mut items = Vec::new();
            for (r, req) in model.requirements.iter().enumerate() {
                for &c in &req.citations {
                    let id = &model.citations[c].id;
                    items.push(json!({
                        "full_path": format!("{}/citations/{id}", model.requirement_path(r)),
                        "id": id,
                    }));
                }
            }
            page(&uri_path, items, &paging)
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
                    page(&uri_path, items, &paging)
                }
                ["sections", section_id, tail @ ..] => {
                    let c = model.section_index(s, section_id).ok_or_else(|| {
                        not_found(format!("Section '{section_id}' not found in {}", spec.name))
                    })?;
                    let section = &spec.sections[c];
                    read_section(model, root, &uri_path, section, tail, &paging)
                }
                _ => Err(not_found(format!("Unknown resource '{uri}'"))),
            }
        }
        _ => Err(not_found(format!(
            "Unknown resource '{uri}'; start at duvet:///specifications"
        ))),
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
    uri_path: &str,
    section: &crate::model::SectionEntry,
    tail: &[&str],
    paging: &Paging,
) -> Result<ReadResourceResult, McpError> {
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
            page(uri_path, items, paging)
        }
        ["requirements", identifier, tail @ ..] => {
            let r = section
                .requirements
                .iter()
                .copied()
                .find(|&r| model.requirements[r].identifier == *identifier)
                .ok_or_else(|| {
                    not_found(format!(
                        "Requirement '{identifier}' not found in {}",
                        section.id
                    ))
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
                    page(uri_path, items, paging)
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
                    content(uri_path, &value, None)
                }
                _ => Err(not_found(format!("Unknown resource '{uri_path}'"))),
            }
        }
        _ => Err(not_found(format!("Unknown resource '{uri_path}'"))),
    }
}
