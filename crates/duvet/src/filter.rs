//! Narrowing a list to a specification, a section and quoted text, as `duvet query`'s
//! `--section` and `--quote` do, for every list of requirements and citations.

use mcp_common::{ToolError, clip};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::model::{Model, did_you_mean, split_target};
use crate::paging::PageParams;

/// Longest `quote` filter accepted.
const QUOTE_MAX: usize = 1000;
/// At most this many characters of a name are quoted back in an error.
const SHOWN: usize = 200;

/// The filter arguments of a list, as given (a list's cursors are bound to them).
#[derive(Debug, Default, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Scope {
    /// Specification id (`rfc9000`), URL or path.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub spec: Option<String>,
    /// Only this section: its id (`section-4.2`, `4.2`, `appendix-A`), or a citation target
    /// (`<URL or path>#section-4.2`). Without `spec`, the section of every specification that
    /// has it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub section: Option<String>,
    /// Only those whose text (or quote) contains this, in any case.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub quote: Option<String>,
}

/// A [`Scope`] resolved against the model.
#[derive(Debug, Default)]
pub struct Filter {
    /// `(spec, section)` pairs in scope; `None` when every section is.
    places: Option<Vec<(usize, Option<usize>)>>,
    quote: Option<String>,
}

impl Scope {
    /// The filters as they act: blank ones dropped, the others trimmed (what cursors are
    /// bound to, so that `"spec": ""` pages like no `spec`).
    pub fn normalized(&self) -> Self {
        Self {
            spec: blank(&self.spec).map(str::to_string),
            section: blank(&self.section).map(str::to_string),
            quote: blank(&self.quote).map(str::to_string),
        }
    }

    /// Whether no filter is set.
    pub fn is_empty(&self) -> bool {
        self.spec.is_none() && self.section.is_none() && self.quote.is_none()
    }

    /// Resolve the names; an unknown specification or section is invalid params, with the
    /// names that exist.
    pub fn resolve(&self, model: &Model) -> Result<Filter, ToolError> {
        let spec = match blank(&self.spec) {
            None => None,
            Some(name) => Some(spec_named(model, name)?),
        };
        let places = match blank(&self.section) {
            None => spec.map(|s| vec![(s, None)]),
            Some(section) => {
                let (spec_part, id) = match section.split_once('#') {
                    // `#section-4.2`: that section of any specification.
                    Some(("", id)) => (None, id.trim()),
                    Some(_) => {
                        let (spec_part, id) = split_target(section);
                        (Some(spec_named(model, spec_part)?), id.unwrap_or_default())
                    }
                    None => (None, section),
                };
                if let (Some(a), Some(b)) = (spec, spec_part)
                    && a != b
                {
                    return Err(ToolError::invalid_params(format!(
                        "`section` '{}' is not a section of `spec` '{}'",
                        clip(section, SHOWN),
                        clip(self.spec.as_deref().unwrap_or_default().trim(), SHOWN)
                    ))
                    .with_hint("Give the section alone, or the same specification in both."));
                }
                let specs: Vec<usize> = match spec_part.or(spec) {
                    Some(s) => vec![s],
                    None => (0..model.specs.len()).collect(),
                };
                let found: Vec<(usize, Option<usize>)> = specs
                    .iter()
                    .filter_map(|&s| Some((s, Some(model.section_index(s, id)?))))
                    .collect();
                if found.is_empty() {
                    let suggestions: Vec<&str> = specs
                        .iter()
                        .flat_map(|&s| model.section_suggestions(s, id))
                        .collect();
                    return Err(ToolError::invalid_params(format!(
                        "Section '{}' not found{}",
                        clip(id, SHOWN),
                        did_you_mean(&suggestions)
                    ))
                    .with_hint("Section ids look like `section-4.2`; list them with the resource duvet:///specifications/{spec_id}/sections."));
                }
                Some(found)
            }
        };
        let quote = match blank(&self.quote) {
            Some(q) if q.len() > QUOTE_MAX => {
                return Err(ToolError::invalid_params(format!(
                    "`quote` is {} bytes long; at most {QUOTE_MAX}",
                    q.len()
                ))
                .with_hint("Filter on a few words of the requirement."));
            }
            q => q.map(|q| crate::spec::requirements::normalize(q).to_lowercase()),
        };
        Ok(Filter { places, quote })
    }
}

/// A filter's value, trimmed; `None` when absent or blank.
fn blank(value: &Option<String>) -> Option<&str> {
    value.as_deref().map(str::trim).filter(|v| !v.is_empty())
}

fn spec_named(model: &Model, name: &str) -> Result<usize, ToolError> {
    model
        .specs
        .iter()
        .position(|s| s.id == name)
        .or_else(|| model.spec_index(name))
        .ok_or_else(|| {
            let known: Vec<&str> = model.specs.iter().map(|s| s.id.as_str()).collect();
            ToolError::invalid_params(format!(
                "'{}' is not a specification of this project",
                clip(name, SHOWN)
            ))
            .with_hint(format!(
                "Give a specification's id, URL or path; ids: {}",
                if known.is_empty() {
                    "none".to_string()
                } else {
                    known.join(", ")
                }
            ))
        })
}

impl Filter {
    fn place(&self, spec: usize, section: usize) -> bool {
        self.places.as_ref().is_none_or(|places| {
            places
                .iter()
                .any(|&(s, c)| s == spec && c.is_none_or(|c| c == section))
        })
    }

    fn text(&self, text: &str) -> bool {
        self.quote.as_ref().is_none_or(|q| {
            crate::spec::requirements::normalize(text)
                .to_lowercase()
                .contains(q.as_str())
        })
    }

    /// Whether requirement `r` is in scope.
    pub fn requirement(&self, model: &Model, r: usize) -> bool {
        let req = &model.requirements[r];
        self.place(req.spec, req.section)
            && self
                .quote
                .as_ref()
                .is_none_or(|q| req.lower.contains(q.as_str()))
    }

    /// Whether citation `c` is in scope (the quote filter applies to what it quotes).
    pub fn citation(&self, model: &Model, c: usize) -> bool {
        let citation = &model.citations[c];
        self.place(citation.spec, citation.section) && self.text(&citation.quote)
    }
}

/// The arguments of a list narrowed by specification, section and quoted text.
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ListParams {
    /// Specification id (`rfc9000`), URL or path.
    #[serde(default)]
    pub spec: Option<String>,
    /// Section, e.g. `4.2`, `section-4.2` or `<spec>#section-4.2`.
    #[serde(default)]
    pub section: Option<String>,
    /// Text (or quote) to contain, in any case.
    #[serde(default)]
    pub quote: Option<String>,
    /// Items per page (default 100).
    #[serde(default)]
    #[schemars(range(min = 1, max = 1000))]
    pub limit: Option<u64>,
    /// The previous answer's `page.next_cursor`.
    #[serde(default)]
    pub cursor: Option<String>,
}

impl ListParams {
    /// The filters (normalized: see [`Scope::normalized`]) and the paging.
    pub fn split(self) -> (Scope, PageParams) {
        (
            Scope {
                spec: self.spec,
                section: self.section,
                quote: self.quote,
            }
            .normalized(),
            PageParams {
                limit: self.limit,
                cursor: self.cursor,
            },
        )
    }
}

/// The filter of `scope`, or `None` when it filters nothing (every item is in scope, and no
/// time is spent asking).
pub fn scope_filter(model: &Model, scope: &Scope) -> Result<Option<Filter>, ToolError> {
    if scope.is_empty() {
        Ok(None)
    } else {
        scope.resolve(model).map(Some)
    }
}
