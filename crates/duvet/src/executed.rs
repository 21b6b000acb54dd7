//! The coverage tools' answers: a requirement's executed state in `get_requirement_status`,
//! and `list_unexecuted_requirements` — the requirements whose implementation citations'
//! code did not (all) run in the coverage reports `duvet mcp --coverage-report` names
//! ([`crate::execution`] decides each citation as duvet 0.4.3's `query --check coverage`).

use mcp_common::{CursorKey, ToolError};
use schemars::JsonSchema;
use serde::Serialize;

use crate::execution::ExecutionStatus;
use crate::execution::view::{CitationRun, Coverage, Executed, ExecutedState};
use crate::filter::{Filter, ListParams, Scope, scope_filter};
use crate::model::Model;
use crate::paging::{LIMIT, PageParams, PageResult, page_of};
use crate::tools::{RequirementRef, bound, requirement_ref};

/// How many citations an answer lists per requirement.
const CITATIONS_SHOWN: usize = 20;

/// Citation `c`'s status, as the answers list it.
pub fn run(model: &Model, coverage: &Coverage, c: usize) -> CitationRun {
    let status = coverage.citation(c);
    CitationRun {
        id: model.citations[c].id.clone(),
        status: status.name().to_string(),
        line: match status {
            ExecutionStatus::Unknown { line } if line > 0 => Some(line),
            _ => None,
        },
    }
}

/// Requirement `r`'s executed state and its implementation citations (those that did not
/// run first).
pub fn execution(model: &Model, coverage: &Coverage, r: usize) -> Executed {
    let (state, mut cites) = coverage.requirement(r);
    cites.sort_by_key(|&c| (coverage.citation(c) == ExecutionStatus::Executed, c));
    Executed {
        state,
        citations: cites
            .iter()
            .take(CITATIONS_SHOWN)
            .map(|&c| run(model, coverage, c))
            .collect(),
        error: None,
    }
}

/// The executed state when the reports cannot be read.
pub fn unreadable(message: String) -> Executed {
    Executed {
        state: ExecutedState::Unknown,
        citations: Vec::new(),
        error: Some(message),
    }
}

/// A cited requirement whose implementation did not all run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct UnexecutedRequirement {
    pub identifier: String,
    pub full_path: String,
    pub text: String,
    pub state: ExecutedState,
    /// Those that did not run first
    pub citations: Vec<CitationRun>,
}

/// The arguments of `list_unexecuted_requirements`, checked against the model before the
/// coverage reports are read: a bad argument (an unknown specification or section, a page
/// size out of range, a cursor of another query) is the caller's mistake whatever the state
/// of the coverage reports, and says so even when none is configured.
pub struct UnexecutedQuery {
    scope: Scope,
    filter: Option<Filter>,
    page: PageParams,
}

const TOOL: &str = "list_unexecuted_requirements";

impl UnexecutedQuery {
    pub fn new(model: &Model, key: &CursorKey, params: ListParams) -> Result<Self, ToolError> {
        let (scope, page) = params.split();
        let filter = scope_filter(model, &scope)?;
        LIMIT.resolve(page.limit)?;
        key.bind(TOOL, &bound(&scope))
            .start::<usize>(page.cursor.as_deref())?;
        Ok(Self {
            scope,
            filter,
            page,
        })
    }

    /// The cited requirements whose implementation citations' code did not all run: not
    /// executed, partly executed, or unknown (no coverage data where they stand).
    pub fn list(
        self,
        model: &Model,
        coverage: &Coverage,
        key: &CursorKey,
    ) -> PageResult<UnexecutedRequirement> {
        let Self {
            scope,
            filter,
            page,
        } = self;
        let listed: Vec<usize> = (0..model.requirements.len())
            .filter(|&r| filter.as_ref().is_none_or(|f| f.requirement(model, r)))
            .filter(|&r| {
                !matches!(
                    coverage.requirement(r).0,
                    ExecutedState::Executed | ExecutedState::Uncited
                )
            })
            .collect();
        page_of(key, TOOL, &bound(&scope), &listed, page, |r| {
            let RequirementRef {
                identifier,
                full_path,
                text,
                ..
            } = requirement_ref(model, r);
            let Executed {
                state, citations, ..
            } = execution(model, coverage, r);
            UnexecutedRequirement {
                identifier,
                full_path,
                text,
                state,
                citations,
            }
        })
    }
}
