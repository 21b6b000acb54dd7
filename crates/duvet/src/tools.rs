//! The eight tools of the Duvet MCP specification, as functions of the model.

use std::path::{Component, Path, PathBuf};

use mcp_common::{CursorKey, ToolError};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::paging::page_of;
pub use crate::paging::{LIMIT, PAGE_DEFAULT, PAGE_MAX, PageParams, PageResult};
use crate::{
    annotation::{AnnotationType, CommentStyle, Level},
    config::ProjectConfig,
    errors,
    filter::{ListParams, Scope, scope_filter},
    model::{InvalidCitation, Model, Status, StatusKind, path_text},
};

/// The most lines of context around a citation.
pub const CONTEXT_MAX: usize = 50;

/// A requirement in lists.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct RequirementRef {
    /// The requirement's identifier: hex BLAKE3 of its place (`<spec key>#<section id>`) and
    /// normalized text, unique in the project and stable while both are unchanged.
    pub identifier: String,
    /// `/specifications/{spec_id}/sections/{section_id}/requirements/{identifier}`.
    pub full_path: String,
    pub text: String,
    /// Why the project does not implement it: the reason of an exception quoting it, else of
    /// the exception touching its line (only in `list_uncited_requirements` with
    /// `excepted: true`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exception: Option<String>,
}

pub(crate) fn requirement_ref(model: &Model, r: usize) -> RequirementRef {
    RequirementRef {
        identifier: model.requirements[r].identifier.clone(),
        full_path: model.requirement_path(r),
        text: model.requirements[r].text.clone(),
        exception: None,
    }
}

// ---- validate_citation ----------------------------------------------------------------------

#[derive(Debug, Deserialize, JsonSchema)]
pub struct ValidateParams {
    /// As written in code: the `//= <spec URL>#section-4.5` line, then any `//#` quote and
    /// `//= key=value` lines; a bare `URL#section` works too.
    pub citation: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Validation {
    pub valid: bool,
    /// Why the citation is invalid.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// The specification it references (when it resolves).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub spec_id: Option<String>,
    /// The section it references (when it resolves).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub section_id: Option<String>,
    /// Identifiers of the requirements its quote covers.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub requirements: Vec<String>,
}

impl Validation {
    fn invalid(error: impl Into<String>) -> Self {
        Self {
            valid: false,
            error: Some(error.into()),
            spec_id: None,
            section_id: None,
            requirements: Vec::new(),
        }
    }
}

pub fn validate_citation(
    model: &Model,
    config: &ProjectConfig,
    params: ValidateParams,
) -> Result<Validation, ToolError> {
    let text = params.citation.trim();
    if text.is_empty() {
        return Err(ToolError::invalid_params("`citation` must not be empty").with_hint(
            "Pass the citation as written, e.g. `//= https://www.rfc-editor.org/rfc/rfc9000#section-4.5`.",
        ));
    }
    // The comment style the text is written in: the default, or one the project configures.
    let default = CommentStyle::default();
    let style = std::iter::once(&default)
        .chain(config.sources.iter().map(|s| &s.style))
        .filter(|style| text.contains(style.meta.as_str()))
        .max_by_key(|style| style.meta.len())
        .cloned();
    // A bare target (no comment markers) is read as a one-line citation.
    let (style, written) = match style {
        Some(style) => (style, text.to_string()),
        None => {
            let mut lines = text.lines();
            let target = lines.next().unwrap_or_default();
            let mut written = format!("{} {target}", default.meta);
            for line in lines {
                written.push_str(&format!("\n{} {}", default.content, line.trim()));
            }
            (default.clone(), written)
        }
    };
    let (annotations, malformed) = crate::annotation::source::extract(
        &written,
        Path::new("citation"),
        &style,
        AnnotationType::Implementation,
    );
    if let Some(bad) = malformed.first() {
        return Ok(Validation::invalid(format!(
            "Malformed annotation: {}",
            bad.reason
        )));
    }
    let Some(annotation) = annotations.first() else {
        return Ok(Validation::invalid("No citation found in the text"));
    };
    let resolved = match model.resolve(&annotation.target, &annotation.quote) {
        Ok(resolved) => resolved,
        Err(err) => return Ok(Validation::invalid(err.to_string())),
    };
    let spec = &model.specs[resolved.spec];
    let section = &spec.sections[resolved.section];
    let requirements: Vec<String> = resolved
        .matches
        .iter()
        .map(|(r, _)| model.requirements[*r].identifier.clone())
        .collect();
    if resolved.quoted && requirements.is_empty() {
        return Ok(Validation {
            valid: false,
            error: Some(format!(
                "Requirement not found: the quote is in {} of {} but covers none of its requirements",
                section.id, spec.name
            )),
            spec_id: Some(spec.id.clone()),
            section_id: Some(section.id.clone()),
            requirements,
        });
    }
    Ok(Validation {
        valid: true,
        error: None,
        spec_id: Some(spec.id.clone()),
        section_id: Some(section.id.clone()),
        requirements,
    })
}

// ---- search_requirements --------------------------------------------------------------------

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SearchParams {
    /// Words that must all occur in a requirement's text (any case).
    pub query: String,
    /// Specification id (`rfc9000`), URL or path.
    #[serde(default)]
    pub spec: Option<String>,
    /// Section (`section-4.2`, `4.2`, `<spec>#section-4.2`); without `spec`, in every spec.
    #[serde(default)]
    pub section: Option<String>,
    /// Items per page (default 100).
    #[serde(default)]
    #[schemars(range(min = 1, max = 1000))]
    pub limit: Option<u64>,
    /// The previous answer's `page.next_cursor`.
    #[serde(default)]
    pub cursor: Option<String>,
}

pub fn search_requirements(
    model: &Model,
    key: &CursorKey,
    params: SearchParams,
) -> PageResult<RequirementRef> {
    let words: Vec<String> = params
        .query
        .split_whitespace()
        .map(str::to_lowercase)
        .collect();
    if words.is_empty() {
        return Err(ToolError::invalid_params("`query` must not be empty")
            .with_hint("Pass one or more words, e.g. `flow control`."));
    }
    let scope = Scope {
        spec: params.spec,
        section: params.section,
        quote: None,
    }
    .normalized();
    let filter = scope_filter(model, &scope)?;
    let matches: Vec<usize> = (0..model.requirements.len())
        .filter(|&r| filter.as_ref().is_none_or(|f| f.requirement(model, r)))
        .filter(|&r| {
            let text = &model.requirements[r].lower;
            words.iter().all(|w| text.contains(w.as_str()))
        })
        .collect();
    // The cursor is bound to the words searched for (spelling and case aside, the query).
    let page = PageParams {
        limit: params.limit,
        cursor: params.cursor,
    };
    let shape = if scope.is_empty() {
        serde_json::json!(words)
    } else {
        serde_json::json!([words, scope])
    };
    page_of(key, "search_requirements", &shape, &matches, page, |r| {
        requirement_ref(model, r)
    })
}

// ---- get_requirement_status -----------------------------------------------------------------

#[derive(Debug, Deserialize, JsonSchema)]
pub struct RequirementParams {
    /// Requirement identifier (hex) or a unique prefix of 6+ characters; an earlier version's
    /// (the hash of the text alone) works while one requirement has that text.
    pub req_identifier: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct RequirementStatus {
    pub identifier: String,
    pub full_path: String,
    /// `MUST`, `SHOULD` or `MAY` (absent when the text has no keyword).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub level: Option<Level>,
    #[serde(flatten)]
    pub status: Status,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub execution: Option<crate::execution::view::Executed>,
}

/// How many candidates an ambiguous identifier's error lists.
const CANDIDATES_LISTED: usize = 20;

/// The requirement an identifier (the full one, the text hash of earlier versions, or a unique
/// prefix) names, among `within` (a section's requirements) or all of them. Several matches
/// are [`errors::AMBIGUOUS_REQUIREMENT`], listing their paths.
pub fn find_requirement(
    model: &Model,
    identifier: &str,
    within: Option<&[usize]>,
) -> Result<usize, ToolError> {
    let id = identifier.trim();
    // What the messages repeat of it: never a huge argument.
    let identifier = mcp_common::clip(identifier, 100);
    if id.is_empty() || !id.chars().all(|c| c.is_ascii_hexdigit()) {
        return Err(ToolError::invalid_params(format!(
            "'{identifier}' is not a requirement identifier (hex digits)"
        ))
        .with_hint("Use an identifier from search_requirements or list_uncited_requirements."));
    }
    match model.find_requirements(id, within).as_slice() {
        [r] => Ok(*r),
        [] => Err(
            ToolError::not_found(format!("Requirement '{identifier}' not found"))
                .with_hint("Use search_requirements to find requirement identifiers."),
        ),
        many => {
            let mut listed: Vec<String> = many
                .iter()
                .take(CANDIDATES_LISTED)
                .map(|&r| model.requirement_path(r))
                .collect();
            if many.len() > CANDIDATES_LISTED {
                listed.push(format!("and {} more", many.len() - CANDIDATES_LISTED));
            }
            Err(ToolError::new(
                errors::AMBIGUOUS_REQUIREMENT,
                format!(
                    "'{identifier}' matches {} requirements: {}",
                    many.len(),
                    listed.join(", ")
                ),
            )
            .with_hint(
                "Call again with the identifier of the one you mean: the last segment of its path.",
            ))
        }
    }
}

pub fn get_requirement_status(
    model: &Model,
    params: RequirementParams,
) -> Result<RequirementStatus, ToolError> {
    let r = find_requirement(model, &params.req_identifier, None)?;
    let req = &model.requirements[r];
    Ok(RequirementStatus {
        identifier: req.identifier.clone(),
        full_path: model.requirement_path(r),
        level: req.level,
        status: req.status.clone(),
        execution: None,
    })
}

// ---- list_uncited_requirements / list_invalid_citations -------------------------------------

/// The arguments of `list_uncited_requirements`: the filters and paging of every list, and
/// whether to list the exception-only requirements instead.
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct UncitedParams {
    /// Specification id (`rfc9000`), URL or path.
    #[serde(default)]
    pub spec: Option<String>,
    /// Section (`section-4.2`, `4.2`, `<spec>#section-4.2`); without `spec`, in every spec.
    #[serde(default)]
    pub section: Option<String>,
    /// Text to contain, in any case.
    #[serde(default)]
    pub quote: Option<String>,
    /// `true`: instead, those cited only by exceptions, with the reason.
    #[serde(default)]
    pub excepted: Option<bool>,
    /// Items per page (default 100).
    #[serde(default)]
    #[schemars(range(min = 1, max = 1000))]
    pub limit: Option<u64>,
    /// The previous answer's `page.next_cursor`.
    #[serde(default)]
    pub cursor: Option<String>,
}

/// The requirements that are not cited as `duvet report --ci --require-citations` (0.4.3)
/// counts it (`cited: false`: a line of their text that no implementation, implication or
/// exception touches, whatever tests or TODOs say of them); with `excepted`, instead those
/// that exceptions alone make cited.
pub fn list_uncited_requirements(
    model: &Model,
    key: &CursorKey,
    params: UncitedParams,
) -> PageResult<RequirementRef> {
    let excepted = params.excepted.unwrap_or(false);
    let (scope, page) = ListParams {
        spec: params.spec,
        section: params.section,
        quote: params.quote,
        limit: params.limit,
        cursor: params.cursor,
    }
    .split();
    let filter = scope_filter(model, &scope)?;
    let listed: Vec<usize> = (0..model.requirements.len())
        .filter(|&r| {
            let req = &model.requirements[r];
            if excepted {
                req.excepted
            } else {
                !req.status.cited
            }
        })
        .filter(|&r| filter.as_ref().is_none_or(|f| f.requirement(model, r)))
        .collect();
    // Cursors of the two lists are not interchangeable; those of the uncited one are bound
    // as before `excepted` existed.
    let tool = if excepted {
        "list_uncited_requirements?excepted"
    } else {
        "list_uncited_requirements"
    };
    page_of(key, tool, &bound(&scope), &listed, page, |r| {
        let mut item = requirement_ref(model, r);
        if excepted {
            item.exception = model.requirements[r].status.exception.clone();
        }
        item
    })
}

/// What a filtered list's cursors are bound to: nothing for the whole list (as before there
/// were filters, so cursors issued then still work), else the filters.
pub(crate) fn bound(scope: &Scope) -> serde_json::Value {
    if scope.is_empty() {
        serde_json::Value::Null
    } else {
        serde_json::json!(scope)
    }
}

pub fn list_invalid_citations(
    model: &Model,
    key: &CursorKey,
    params: PageParams,
) -> PageResult<InvalidCitation> {
    page_of(
        key,
        "list_invalid_citations",
        &(),
        &model.invalid,
        params,
        |c| c,
    )
}

// ---- get_citation_context -------------------------------------------------------------------

#[derive(Debug, Deserialize, JsonSchema)]
pub struct ContextParams {
    /// `path:line`, the path relative to the project (`src/main.rs:42`).
    pub citation_id: String,
    /// Lines before and after the citation (default 3, at most 50).
    #[serde(default)]
    pub context_lines: Option<usize>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct CitationContext {
    pub file_path: String,
    pub line_number: usize,
    /// The lines around the citation, the citation's own line included.
    pub context: Vec<String>,
    /// Line number of the first line of `context`.
    pub first_line: usize,
}

/// Reject citation ids that point outside the project before looking them up.
fn check_citation_id(id: &str) -> Result<(), ToolError> {
    let (path, line) = id.rsplit_once(':').ok_or_else(|| {
        ToolError::invalid_params(format!("'{id}' is not a citation id"))
            .with_hint("Citation ids look like `src/main.rs:42` (path relative to the project, then the line).")
    })?;
    let rel = Path::new(path);
    let inside = !path.is_empty()
        && rel
            .components()
            .all(|c| matches!(c, Component::Normal(_) | Component::CurDir));
    if !inside {
        return Err(ToolError::invalid_params(format!(
            "'{path}' is not a path inside the project"
        ))
        .with_hint("Citation ids use paths relative to the project root, without `..`."));
    }
    if line.parse::<usize>().is_err() {
        return Err(
            ToolError::invalid_params(format!("'{line}' is not a line number"))
                .with_hint("Citation ids look like `src/main.rs:42`."),
        );
    }
    Ok(())
}

pub fn get_citation_context(
    model: &Model,
    root: &Path,
    params: ContextParams,
) -> Result<CitationContext, ToolError> {
    let lines = params.context_lines.unwrap_or(3);
    if lines > CONTEXT_MAX {
        return Err(ToolError::invalid_params(format!(
            "`context_lines` must be at most {CONTEXT_MAX}, got {lines}"
        ))
        .with_hint("Ask for fewer lines around the citation."));
    }
    let id = params.citation_id.trim();
    check_citation_id(id)?;
    // Valid citations, and invalid ones (their context explains what is wrong).
    let (file, line) = match (model.citation(id), model.invalid_citation(id)) {
        (Some(citation), _) => (citation.file.clone(), citation.line),
        (None, Some(bad)) => (PathBuf::from(&bad.file_path), bad.line_number),
        (None, None) => {
            return Err(ToolError::not_found(format!("Citation '{id}' not found")).with_hint(
                "Use the duvet:///citations resource or list_invalid_citations for citation ids.",
            ));
        }
    };
    citation_context(root, &file, line, lines)
}

/// The lines around `line` of `rel` (a path the project walk found, so inside the root; the
/// resolved path is checked again in case of symbolic links).
pub fn citation_context(
    root: &Path,
    rel: &Path,
    line: usize,
    around: usize,
) -> Result<CitationContext, ToolError> {
    let path = root.join(rel);
    let resolved = std::fs::canonicalize(&path)
        .map_err(|err| ToolError::not_found(format!("Cannot read {}: {err}", path_text(rel))))?;
    let root = std::fs::canonicalize(root).unwrap_or_else(|_| root.to_path_buf());
    if !resolved.starts_with(&root) {
        return Err(ToolError::invalid_params(format!(
            "{} resolves outside the project",
            path_text(rel)
        ))
        .with_hint("Citations are read only inside the project root."));
    }
    let text = std::fs::read(&resolved)
        .map(|bytes| String::from_utf8_lossy(&bytes).into_owned())
        .map_err(|err| ToolError::not_found(format!("Cannot read {}: {err}", path_text(rel))))?;
    let all: Vec<&str> = text.lines().collect();
    let first = line.saturating_sub(around).max(1);
    let last = (line + around).min(all.len());
    let context = all
        .get(first.saturating_sub(1)..last)
        .unwrap_or_default()
        .iter()
        .map(|l| l.to_string())
        .collect();
    Ok(CitationContext {
        file_path: path_text(rel),
        line_number: line,
        context,
        first_line: first,
    })
}

// ---- resolve_spec_id ------------------------------------------------------------------------

#[derive(Debug, Deserialize, JsonSchema)]
pub struct ResolveParams {
    /// Specification URL or project-relative path (`https://www.rfc-editor.org/rfc/rfc9000`).
    pub url: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ResolvedSpec {
    pub spec_id: String,
}

pub fn resolve_spec_id(model: &Model, params: ResolveParams) -> Result<ResolvedSpec, ToolError> {
    let url = params.url.trim();
    let (spec_part, _) = crate::model::split_target(url);
    let known: Vec<&str> = model.specs.iter().map(|s| s.url.as_str()).collect();
    let index = model.spec_index(spec_part).ok_or_else(|| {
        ToolError::not_found(format!(
            "No specification of this project has the URL '{url}'"
        ))
        .with_hint(format!(
            "Known specifications: {}",
            if known.is_empty() {
                "none".to_string()
            } else {
                known.join(", ")
            }
        ))
    })?;
    Ok(ResolvedSpec {
        spec_id: model.specs[index].id.clone(),
    })
}

// ---- get_prioritized_requirements -----------------------------------------------------------

#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct PrioritizedRequirement {
    pub full_path: String,
    pub identifier: String,
    /// `MUST`, `SHOULD`, `MAY`, or `unspecified`.
    pub level: String,
    pub status: StatusKind,
    pub todo_count: usize,
}

pub fn get_prioritized_requirements(
    model: &Model,
    key: &CursorKey,
    params: ListParams,
) -> PageResult<PrioritizedRequirement> {
    let (scope, page) = params.split();
    let ordered: std::borrow::Cow<'_, [usize]> = if scope.is_empty() {
        model.prioritized().into()
    } else {
        let filter = scope.resolve(model)?;
        model
            .prioritized()
            .iter()
            .copied()
            .filter(|&r| filter.requirement(model, r))
            .collect::<Vec<_>>()
            .into()
    };
    page_of(
        key,
        "get_prioritized_requirements",
        &bound(&scope),
        &ordered,
        page,
        |r| {
            let req = &model.requirements[r];
            PrioritizedRequirement {
                full_path: model.requirement_path(r),
                identifier: req.identifier.clone(),
                level: req
                    .level
                    .map_or("unspecified".to_string(), |l| l.as_str().to_string()),
                status: req.status.status,
                todo_count: req.status.todo_count,
            }
        },
    )
}
