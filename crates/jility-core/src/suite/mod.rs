//! The store conformance suite (cargo feature `suite`, off by default: nothing of it ships):
//! what every [`Store`] must answer the same, checked with exact values, so that the
//! domain ([`crate::tracker`]) behaves alike on every database. `jility-sqlite`
//! (`tests/suite.rs`) and `jility-cloud` (`tests/store_suite.rs`) run it on their stores.
//!
//! [`run`] takes a way to make a fresh store — empty, with no project (each check makes the
//! projects it needs, and one checks what a store without a project answers) — and gives
//! each check a store of its own, so that no check sees another's rows. It runs every check
//! even when one fails, then fails naming each that did (their panics are printed as they
//! happen). `JILITY_SUITE_ONLY=name,other` runs only the checks whose names contain one of
//! those words.
//!
//! The checks, by area:
//!
//! - rows (`rows`): a store with no project; projects and their keys; numbering
//!   (consecutive, never reused, nothing kept by a rolled-back write); ticket rows by number,
//!   UUID and id, updated and deleted; `ticket_refs`; a write that fails writes nothing.
//! - a ticket's parts (`parts`): assignees in the order they were assigned, labels in byte
//!   order, comments (the newest `limit`, oldest first, and the count), dependencies of
//!   live tickets only, commit links, the change log newest first, description versions
//!   oldest first.
//! - whole tickets (`whole`): [`Store::whole_tickets`] by number, by UUID and in the
//!   default project, missing and deleted tickets, live neighbours only, the windows of 50
//!   comments and 20 changes; always equal to [`crate::store::whole_ticket`] run in a read
//!   transaction (and in the write that made the ticket), before and after the store
//!   settles ([`run_with`]) and after a later write.
//! - listings (`listing`): every filter of [`StoreTx::list`] alone and combined, a status
//!   changed after the labels were set, paging with `next_after`, the count capped at
//!   [`crate::store::COUNT_CAP`]; search: every word required, phrases, stems, comments,
//!   ranking (title, then description, then comment; ties by age), paging and the total,
//!   snippets, deleted and changed tickets.
//! - the domain on the store (`domain`): [`Tracker`] reads and numbering, its cursors
//!   over lists and search.
//! - related tickets (`related`): the candidates of a probe's words in each store, and the
//!   domain's scores on them.
//! - sprints (`sprints`): the active sprint's kept figures equal the replay of the change
//!   log after every kind of change (status, points, deletion, adding, removing, moving).

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // a test suite: its assertions panic

use std::fmt::Debug;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::PathBuf;

use mcp_common_core::{CursorKey, ToolError};

use crate::Tracker;
use crate::model::Status;
use crate::store::{NewTicket, Project, SearchTerms, Store, StoreTx};

/// Who the suite's reads are made by (`assignee:me`).
pub const ACTOR: &str = "alice";

mod domain;
mod finding;
mod listing;
mod parts;
mod related;
mod rows;
mod sprints;
mod whole;

/// What a check gets: a fresh store of its own, and the runner's way to let the store
/// settle ([`run_with`]).
pub struct Ctx<'a, S> {
    pub store: S,
    settle: &'a mut dyn FnMut(&S),
}

impl<S: Store + Clone> Ctx<'_, S> {
    /// Let the store finish what it does after a read or write in the background (the
    /// cloud store's kept ticket contexts), so that the next reads take its fast path.
    pub fn settle(&mut self) {
        (self.settle)(&self.store);
    }

    /// A tracker on (a handle of) this check's store.
    pub fn tracker(&self) -> Tracker<S> {
        Tracker::new(
            self.store.clone(),
            PathBuf::from("/nonexistent/jility-suite"),
            CursorKey::random(),
        )
    }
}

/// What a check is: a function of its context.
pub type CheckFn<S> = fn(&mut Ctx<'_, S>);

/// One check of the suite.
pub struct Check<S> {
    pub name: &'static str,
    pub run: CheckFn<S>,
}

/// Every check, in the order [`run`] runs them.
pub fn checks<S: Store + Clone>() -> Vec<Check<S>> {
    let all: [(&'static str, CheckFn<S>); 32] = [
        ("no_project", rows::no_project),
        ("projects", rows::projects),
        ("numbering", rows::numbering),
        ("ticket_rows", rows::ticket_rows),
        ("ticket_refs", rows::ticket_refs),
        (
            "failed_write_writes_nothing",
            rows::failed_write_writes_nothing,
        ),
        ("assignees", parts::assignees),
        ("labels", parts::labels),
        ("comments", parts::comments),
        ("dependencies", parts::dependencies),
        ("commits", parts::commits),
        ("changes", parts::changes),
        ("whole_ticket", whole::one_ticket),
        ("whole_ticket_lookups", whole::lookups),
        ("whole_ticket_deleted", whole::deleted),
        ("whole_ticket_windows", whole::windows),
        ("whole_ticket_in_its_write", whole::in_its_write),
        ("list_filters", listing::filters),
        ("list_paging", listing::paging),
        ("list_count_cap", listing::count_cap),
        ("search", listing::search_check),
        ("search_paging_and_ties", listing::search_paging),
        ("domain_reads", domain::reads),
        ("domain_numbering", domain::numbering),
        ("domain_cursors", domain::cursors),
        ("kept_sprint_figures", sprints::kept_equals_replay),
        ("plan_candidates", sprints::plan_candidates),
        ("search_by_sprint", sprints::search_by_sprint),
        ("query_language", finding::query),
        ("saved_views", finding::views),
        ("bulk_edits", finding::bulk),
        ("related", related::candidates),
    ];
    all.into_iter()
        .map(|(name, run)| Check { name, run })
        .collect()
}

/// Run every check, each on a store `fresh` makes (empty, no project); panic naming the
/// checks that failed.
pub fn run<S: Store + Clone>(fresh: impl FnMut() -> S) {
    run_with(fresh, |_| {});
}

/// [`run`], with `settle` called where a check wants the store's background work done
/// (e.g. `PgDatabase::settle_contexts`), so that reads after it take the store's fast path.
pub fn run_with<S: Store + Clone>(mut fresh: impl FnMut() -> S, mut settle: impl FnMut(&S)) {
    let only: Vec<String> = std::env::var("JILITY_SUITE_ONLY")
        .unwrap_or_default()
        .split(',')
        .map(str::trim)
        .filter(|w| !w.is_empty())
        .map(str::to_string)
        .collect();
    let mut failed = Vec::new();
    let mut ran = 0;
    for check in checks::<S>() {
        if !only.is_empty() && !only.iter().any(|w| check.name.contains(w.as_str())) {
            continue;
        }
        ran += 1;
        let mut cx = Ctx {
            store: fresh(),
            settle: &mut settle,
        };
        let outcome = catch_unwind(AssertUnwindSafe(|| (check.run)(&mut cx)));
        if let Err(payload) = outcome {
            let message = payload
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| payload.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_default();
            failed.push(format!("{}: {}", check.name, first_line(&message)));
        }
    }
    assert!(ran > 0, "no check is named like JILITY_SUITE_ONLY");
    assert!(
        failed.is_empty(),
        "{} of {ran} store checks failed:\n  {}",
        failed.len(),
        failed.join("\n  ")
    );
}

fn first_line(text: &str) -> &str {
    text.lines().next().unwrap_or_default()
}

// ---------------------------------------------------------------------------------------
// Helpers of the checks

/// A time stamp `n` seconds after 2024-10-20 10:00:00 UTC, as the domain writes them.
pub(crate) fn at(n: u32) -> String {
    format!(
        "2024-10-20T{:02}:{:02}:{:02}.000Z",
        10 + n / 3600,
        (n / 60) % 60,
        n % 60
    )
}

/// `f` in a read transaction; a failure fails the check.
pub(crate) fn read<S: Store, R>(
    store: &mut S,
    f: impl Fn(&mut dyn StoreTx) -> Result<R, ToolError>,
) -> R {
    store
        .read(f)
        .unwrap_or_else(|e| panic!("a read failed: {e:?}"))
}

/// `f` in a write transaction; a failure fails the check.
pub(crate) fn write<S: Store, R>(
    store: &mut S,
    f: impl FnOnce(&mut dyn StoreTx) -> Result<R, ToolError>,
) -> R {
    store
        .write(f)
        .unwrap_or_else(|e| panic!("a write failed: {e:?}"))
}

/// A project `key` (named "`key` project"), made at [`at`]`(0)`.
pub(crate) fn project<S: Store>(store: &mut S, key: &str) -> Project {
    write(store, |tx| {
        Ok(tx.create_project(key, &format!("{key} project"), &at(0))?)
    })
}

/// A ticket to insert with [`make`].
pub(crate) struct Spec<'a> {
    pub title: &'a str,
    pub description: &'a str,
    pub status: Status,
    pub points: Option<u8>,
    pub parent: Option<i64>,
    pub epic: Option<i64>,
    pub actor: &'a str,
    pub at: String,
}

impl<'a> Spec<'a> {
    pub fn new(title: &'a str) -> Self {
        Self {
            title,
            description: "",
            status: Status::Backlog,
            points: None,
            parent: None,
            epic: None,
            actor: "alice",
            at: at(0),
        }
    }
}

/// A ticket as made: its row id, UUID and number.
#[derive(Debug, Clone)]
pub(crate) struct Made {
    pub id: i64,
    pub uuid: String,
    pub number: i64,
}

/// Insert `spec` into `project` with the next number.
pub(crate) fn make(
    tx: &mut dyn StoreTx,
    project: &Project,
    spec: &Spec<'_>,
) -> Result<Made, ToolError> {
    let number = tx.allocate_number(project.id)?;
    let uuid = uuid::Uuid::new_v4().to_string();
    let id = tx.insert_ticket(&NewTicket {
        uuid: &uuid,
        project_id: project.id,
        number,
        title: spec.title,
        description: spec.description,
        status: spec.status,
        story_points: spec.points,
        parent_id: spec.parent,
        epic_id: spec.epic,
        kind: crate::model::Kind::Ticket,
        actor: spec.actor,
        at: &spec.at,
    })?;
    Ok(Made { id, uuid, number })
}

/// [`make`] in a write of its own.
pub(crate) fn made<S: Store>(store: &mut S, project: &Project, spec: Spec<'_>) -> Made {
    write(store, |tx| make(tx, project, &spec))
}

/// Search terms: each a phrase of words.
pub(crate) fn terms(phrases: &[&[&str]]) -> SearchTerms {
    SearchTerms(
        phrases
            .iter()
            .map(|p| p.iter().map(|w| w.to_string()).collect())
            .collect(),
    )
}

/// `value` as its `{:#?}`: how the checks compare the store's types, which have no `==`.
pub(crate) fn show<T: Debug + ?Sized>(value: &T) -> String {
    format!("{value:#?}")
}

/// Assert that `got` and `want` show the same (`{:#?}`).
#[track_caller]
pub(crate) fn assert_same<A: Debug + ?Sized, B: Debug + ?Sized>(got: &A, want: &B, what: &str) {
    let (got, want) = (show(got), show(want));
    assert!(got == want, "{what}: got\n{got}\nwanted\n{want}");
}
