//! Finding tickets with the query language ([`crate::query`]): a query read, its names
//! resolved (tickets, sprints, `me`) into the store's [`Filter`], then run ranked (words,
//! best first) or in an order (`sort:…`, newest first by default), one page at a time with
//! the cursor bound to the query as resolved.

use mcp_common_core::{Page, Paged, ToolError};
use serde::Serialize;

use super::checks::{invalid, page_size, resolve};
use super::tickets::sprint_filter;
use super::{
    LIST_LIMIT, SEARCH_LIMIT, SEARCH_TOOL, SearchHitOut, SearchResults, TicketPage, Tracker,
};
use crate::errors::clip;
use crate::model::{Status, TicketSummary};
use crate::params::{ListTickets, SearchTickets};
use crate::query::{self, Clock, Is, No, Order, Person, Qualifier, Query};
use crate::store::{
    Clause, Filter, Position, SearchPage, SearchTerms, Sort, Store, StoreTx, Test, TimeRange,
    ViewRow,
};

/// A query, resolved: the words to rank by and the filter, or the filter (words in it) and
/// an order.
#[derive(Debug, Serialize)]
enum Plan {
    Ranked { terms: SearchTerms, filter: Filter },
    Sorted { filter: Filter, sort: Sort },
}

/// A page found: each ticket with its snippet (empty unless ranked), and the page.
struct Found {
    hits: Vec<(TicketSummary, String)>,
    page: Page,
}

impl<S: Store> Tracker<S> {
    /// `jility_search_tickets`: the query language, best matches first when it has words
    /// (unless it sorts), newest first otherwise.
    pub fn search(
        &mut self,
        actor: &str,
        p: &SearchTickets,
    ) -> Result<Paged<SearchResults>, ToolError> {
        let limit = page_size(SEARCH_LIMIT, p.limit)?;
        let query = query::parse(&p.query, &Clock::now())?;
        if query.is_empty() && query.order.is_none() {
            return Err(invalid(
                format!("The query '{}' has no words to search for", clip(&p.query)),
                "Search for words that appear in titles, descriptions or comments, or filter with qualifiers such as status:todo.",
            ));
        }
        let sprint = p.sprint.as_deref().map(str::trim).filter(|s| !s.is_empty());
        let found = self.find_query(
            actor,
            SEARCH_TOOL,
            &query,
            sprint,
            None,
            Mode::Search,
            limit,
            p.cursor.as_deref(),
        )?;
        Ok(Paged {
            data: SearchResults {
                query: p.query.clone(),
                sprint: sprint.map(str::to_string),
                hits: found
                    .hits
                    .into_iter()
                    .map(|(t, snippet)| SearchHitOut {
                        number: t.number,
                        title: t.title,
                        status: t.status,
                        assignees: t.assignees,
                        snippet,
                    })
                    .collect(),
            },
            page: found.page,
        })
    }

    /// `jility_list_tickets` with a `query`: its filters and the query's, newest first
    /// unless the query sorts.
    pub(super) fn list_query(
        &mut self,
        actor: &str,
        p: &ListTickets,
        text: &str,
    ) -> Result<Paged<TicketPage>, ToolError> {
        let limit = page_size(LIST_LIMIT, p.limit)?;
        let query = query::parse(text, &Clock::now())?;
        let sprint = p.sprint.as_deref().map(str::trim).filter(|s| !s.is_empty());
        let found = self.find_query(
            actor,
            super::LIST_TOOL,
            &query,
            sprint,
            Some(p),
            Mode::List,
            limit,
            p.cursor.as_deref(),
        )?;
        Ok(Paged {
            data: TicketPage {
                tickets: found.hits.into_iter().map(|(t, _)| t).collect(),
                query: Some(text.to_string()),
            },
            page: found.page,
        })
    }

    #[allow(clippy::too_many_arguments)]
    fn find_query(
        &mut self,
        actor: &str,
        tool: &str,
        query: &Query,
        sprint: Option<&str>,
        listing: Option<&ListTickets>,
        mode: Mode,
        limit: usize,
        cursor: Option<&str>,
    ) -> Result<Found, ToolError> {
        let needs_store = sprint.is_some()
            || listing.is_some()
            || query.qualifiers.iter().any(|q| {
                matches!(
                    q.qualifier,
                    Qualifier::Epic(_)
                        | Qualifier::Parent(_)
                        | Qualifier::DependsOn(_)
                        | Qualifier::Sprint(_)
                        | Qualifier::View(_)
                )
            });
        let plan = |tx: Option<&mut dyn StoreTx>| plan(tx, actor, query, sprint, listing, mode);
        let plan = if needs_store {
            self.store.read(|tx| plan(Some(tx)))?
        } else {
            plan(None)?
        };
        // Bound to the query as resolved, its times as written: an age (`updated:<7d`)
        // resolves against the clock anew on each page.
        let cursors = self
            .cursor_key
            .bind(tool, &(times_as_written(&plan), query_text(query)));
        match plan {
            Plan::Ranked { terms, filter } => {
                let offset: usize = cursors.start(cursor)?.unwrap_or(0);
                let SearchPage {
                    hits,
                    total,
                    total_exact,
                } = self.store.search(&terms, &filter, offset, limit)?;
                // The offset counts index rows, as the store's OFFSET does.
                let end = offset.saturating_add(limit);
                let next = (end < total).then(|| cursors.encode(&end));
                Ok(Found {
                    hits: hits.into_iter().map(|h| (h.ticket, h.snippet)).collect(),
                    page: if total_exact {
                        Page::new(total as u64, next)
                    } else {
                        Page::at_least(total as u64, next)
                    },
                })
            }
            Plan::Sorted { filter, sort } => {
                let after: Option<Position> = cursors.start(cursor)?;
                let page = self
                    .store
                    .read(|tx| Ok(tx.find(&filter, sort, after.as_ref(), limit)?))?;
                let next = page.next.map(|position| cursors.encode(&position));
                let total = page.total as u64;
                Ok(Found {
                    hits: page.items.into_iter().map(|t| (t, String::new())).collect(),
                    page: if page.total_exact {
                        Page::new(total, next)
                    } else {
                        Page::at_least(total, next)
                    },
                })
            }
        }
    }
}

/// `plan` with its time ranges left out (the query's text, bound beside it, has them as
/// written).
fn times_as_written(plan: &Plan) -> Plan {
    let blank = |filter: &Filter| Filter {
        clauses: filter
            .clauses
            .iter()
            .map(|c| Clause {
                negated: c.negated,
                test: match &c.test {
                    Test::Created(_) => Test::Created(TimeRange::default()),
                    Test::Updated(_) => Test::Updated(TimeRange::default()),
                    other => other.clone(),
                },
            })
            .collect(),
    };
    match plan {
        Plan::Ranked { terms, filter } => Plan::Ranked {
            terms: terms.clone(),
            filter: blank(filter),
        },
        Plan::Sorted { filter, sort } => Plan::Sorted {
            filter: blank(filter),
            sort: *sort,
        },
    }
}

/// The time qualifiers of a query as written, in order.
fn query_text(query: &Query) -> Vec<String> {
    query.times.clone()
}

/// How a query's order is chosen: a search ranks its words unless it sorts; a listing is
/// newest first unless it sorts (`sort:relevance` ranks it, and needs words).
#[derive(Debug, Clone, Copy)]
enum Mode {
    Search,
    List,
}

/// Whether `query` would run for `actor` now: its views, tickets and sprints exist (what a
/// saved view is checked with).
pub(super) fn check(tx: &mut dyn StoreTx, actor: &str, query: &Query) -> Result<(), ToolError> {
    plan(Some(tx), actor, query, None, None, Mode::Search).map(|_| ())
}

/// The tickets `query` finds for `actor`, as one filter (its words too, unranked): what a
/// bulk edit changes.
pub(super) fn filter_of(
    tx: &mut dyn StoreTx,
    actor: &str,
    query: &Query,
) -> Result<Filter, ToolError> {
    Ok(
        match plan(Some(tx), actor, query, None, None, Mode::List)? {
            Plan::Sorted { filter, .. } => filter,
            Plan::Ranked { terms, mut filter } => {
                for phrase in terms.0 {
                    filter = filter.with(Test::Text(phrase));
                }
                filter
            }
        },
    )
}

/// The query resolved with `tx` (only when a name needs the store: views, tickets,
/// sprints).
fn plan(
    mut tx: Option<&mut dyn StoreTx>,
    actor: &str,
    query: &Query,
    sprint: Option<&str>,
    listing: Option<&ListTickets>,
    mode: Mode,
) -> Result<Plan, ToolError> {
    let expanded;
    let query = if query.has_views() {
        expanded = expand(store(&mut tx)?, actor, query)?;
        &expanded
    } else {
        query
    };
    let ranked = match (mode, query.order) {
        (Mode::List, Some(Order::Relevance)) if !query.has_words() => {
            return Err(invalid(
                "sort:relevance needs words to rank by",
                "Add the words to find, or sort by created, updated, points or title.",
            ));
        }
        (Mode::List, order) => order == Some(Order::Relevance),
        (Mode::Search, None | Some(Order::Relevance)) => query.has_words(),
        (Mode::Search, Some(Order::By(_))) => false,
    };
    let mut filter = Filter::default();
    let mut terms = Vec::new();
    for word in &query.words {
        if ranked && !word.negated {
            terms.push(word.phrase.clone());
        } else {
            filter.clauses.push(Clause {
                negated: word.negated,
                test: Test::Text(word.phrase.clone()),
            });
        }
    }
    for q in &query.qualifiers {
        // `flip`: the qualifier means the test's negation (`is:unassigned`: not assigned).
        let (flip, test) = match &q.qualifier {
            Qualifier::Status(statuses) => (false, Test::Status(statuses.clone())),
            Qualifier::Label(labels) => (false, Test::Label(labels.clone())),
            Qualifier::Assignee(people) => (
                false,
                Test::Assignee(
                    people
                        .iter()
                        .map(|p| match p {
                            Person::Me => actor.to_string(),
                            Person::Named(name) => name.clone(),
                        })
                        .collect(),
                ),
            ),
            Qualifier::Is(is) => match is {
                Is::Unassigned => (true, Test::Assigned),
                Is::Assigned => (false, Test::Assigned),
                Is::Blocked => (false, Test::Blocked),
                Is::Open => (true, Test::Status(vec![Status::Done])),
                Is::Done => (false, Test::Status(vec![Status::Done])),
                Is::Kind(kind) => (false, Test::Kind(*kind)),
            },
            Qualifier::No(no) => match no {
                No::Sprint => (false, Test::Sprint(None)),
                No::Epic => (false, Test::Epic(None)),
                No::Parent => (false, Test::Parent(None)),
                No::Points => (false, Test::Points(None)),
                No::Assignee => (true, Test::Assigned),
                No::Label => (true, Test::Labelled),
            },
            Qualifier::Epic(name) => (false, Test::Epic(Some(named(store(&mut tx)?, name)?.id))),
            Qualifier::Parent(name) => {
                (false, Test::Parent(Some(named(store(&mut tx)?, name)?.id)))
            }
            Qualifier::DependsOn(name) => {
                (false, Test::DependsOn(named(store(&mut tx)?, name)?.id))
            }
            Qualifier::Sprint(name) => (false, sprint_test(store(&mut tx)?, name)?),
            Qualifier::Points(min, max) => (false, Test::Points(Some((*min, *max)))),
            Qualifier::Created(range) => (false, Test::Created(range.clone())),
            Qualifier::Updated(range) => (false, Test::Updated(range.clone())),
            Qualifier::View(name) => {
                return Err(ToolError::internal(format!(
                    "the view '{}' was not expanded",
                    clip(name)
                )));
            }
        };
        let negated = flip != q.negated;
        filter.clauses.push(Clause { negated, test });
    }
    if let Some(name) = sprint {
        filter = filter.with(sprint_test(store(&mut tx)?, name)?);
    }
    if let Some(p) = listing {
        for clause in listing_clauses(store(&mut tx)?, p)? {
            filter.clauses.push(clause);
        }
    }
    Ok(if ranked {
        Plan::Ranked {
            terms: SearchTerms(terms),
            filter,
        }
    } else {
        let sort = match query.order {
            Some(Order::By(sort)) => sort,
            _ => Sort::NEWEST,
        };
        Plan::Sorted { filter, sort }
    })
}

/// The ticket a qualifier names (`epic:`, `parent:`, `depends-on:`): one that does not
/// exist, or was deleted, is `not_found` with what to do about the query.
fn named(tx: &mut dyn StoreTx, name: &str) -> Result<crate::store::TicketRow, ToolError> {
    resolve(tx, name).map_err(|err| {
        if err.code == crate::errors::NOT_FOUND {
            err.with_hint(
                "The query names a ticket that is not there: name another, or leave the qualifier out (a saved view that names it: save it again, or delete it).",
            )
        } else {
            err
        }
    })
}

fn store<'a>(tx: &'a mut Option<&mut dyn StoreTx>) -> Result<&'a mut dyn StoreTx, ToolError> {
    match tx {
        Some(tx) => Ok(&mut **tx),
        None => Err(ToolError::internal(
            "a query name was resolved without the store",
        )),
    }
}

fn sprint_test(tx: &mut dyn StoreTx, name: &str) -> Result<Test, ToolError> {
    Ok(match sprint_filter(tx, Some(name))? {
        Some(sprint) => Test::Sprint(sprint),
        // An empty name (which neither the parser nor the listings pass on): every ticket.
        None => Test::Status(Status::ALL.to_vec()),
    })
}

/// A listing's own filters as clauses, beside its query's.
fn listing_clauses(tx: &mut dyn StoreTx, p: &ListTickets) -> Result<Vec<Clause>, ToolError> {
    let mut tests = Vec::new();
    if !p.status.is_empty() {
        let statuses = p
            .status
            .iter()
            .map(super::checks::parse_status)
            .collect::<Result<Vec<_>, _>>()?;
        tests.push((false, Test::Status(statuses)));
    }
    if let Some(assignee) = p
        .assignee
        .as_deref()
        .map(str::trim)
        .filter(|a| !a.is_empty())
    {
        tests.push((false, Test::Assignee(vec![assignee.to_string()])));
    }
    for label in super::checks::check_names(&p.labels, "Labels")? {
        tests.push((false, Test::Label(vec![label])));
    }
    if let Some(parent) = p.parent_id.as_deref() {
        tests.push((false, Test::Parent(Some(resolve(tx, parent)?.id))));
    }
    if let Some(epic) = p.epic_id.as_deref() {
        tests.push((false, Test::Epic(Some(resolve(tx, epic)?.id))));
    }
    if p.unassigned {
        tests.push((true, Test::Assigned));
    }
    Ok(tests
        .into_iter()
        .map(|(negated, test)| Clause { negated, test })
        .collect())
}

/// The view `name` names for `actor`: their own, else a shared one.
pub(super) fn find_view(
    tx: &mut dyn StoreTx,
    actor: &str,
    name: &str,
) -> Result<ViewRow, ToolError> {
    let name = name.trim();
    let mut seen = tx.views(actor)?;
    let at = seen
        .iter()
        .position(|v| v.owner == actor && v.name.eq_ignore_ascii_case(name))
        .or_else(|| seen.iter().position(|v| v.name.eq_ignore_ascii_case(name)));
    match at {
        Some(i) => Ok(seen.swap_remove(i)),
        None => Err(
            ToolError::not_found(format!("No view named '{}'", clip(name))).with_hint(
                "List the views with jility_list_views, or save one with jility_save_view.",
            ),
        ),
    }
}

/// `query` with each `view:NAME` replaced by that view's query (its words, qualifiers and
/// times; its order unless `query` sorts).
pub(super) fn expand(tx: &mut dyn StoreTx, actor: &str, query: &Query) -> Result<Query, ToolError> {
    let mut out = Query {
        words: query.words.clone(),
        qualifiers: Vec::new(),
        order: query.order,
        times: query.times.clone(),
    };
    for q in &query.qualifiers {
        let query::Qualifier::View(name) = &q.qualifier else {
            out.qualifiers.push(q.clone());
            continue;
        };
        let row = find_view(tx, actor, name)?;
        let saved = query::parse(&row.query, &Clock::now())?;
        if saved.has_views() {
            return Err(invalid(
                format!("The view '{}' runs another view", row.name),
                "Save the view again with the other view's query written out.",
            ));
        }
        out.words.extend(saved.words);
        out.qualifiers.extend(saved.qualifiers);
        out.times.extend(saved.times);
        if out.order.is_none() {
            out.order = saved.order;
        }
    }
    Ok(out)
}
