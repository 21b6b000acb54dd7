//! The query language on the store ([`StoreTx::find`], [`StoreTx::search`] with a
//! [`crate::store::Filter`]), through the domain: every qualifier, negations, orders and
//! paging, on a fixture whose answers are written out by hand.

use std::collections::BTreeSet;

use super::{ACTOR, Ctx, Made, Spec, at, make, project, write};
use crate::errors;
use crate::model::{Kind, Status};
use crate::params::{ListTickets, SearchTickets};
use crate::store::{NewSprint, SprintState, SprintUpdate, Store, StoreTx, TicketUpdate};

/// One ticket of the fixture: made at `at(10 × number)`, changed last at `updated`.
struct Row {
    title: &'static str,
    description: &'static str,
    status: Status,
    points: Option<u8>,
    labels: &'static [&'static str],
    assignees: &'static [&'static str],
    parent: Option<usize>,
    epic: Option<usize>,
    depends_on: &'static [usize],
    kind: Kind,
    sprint: Option<&'static str>,
    deleted: bool,
    updated: Option<u32>,
}

const ROW: Row = Row {
    title: "",
    description: "",
    status: Status::Todo,
    points: None,
    labels: &[],
    assignees: &[],
    parent: None,
    epic: None,
    depends_on: &[],
    kind: Kind::Ticket,
    sprint: None,
    deleted: false,
    updated: None,
};

fn rows() -> Vec<Row> {
    vec![
        Row {
            title: "Login page",
            description: "the sign in form",
            status: Status::Backlog,
            points: Some(1),
            labels: &["ui"],
            assignees: &["alice"],
            ..ROW
        },
        Row {
            title: "Token refresh",
            description: "jwt tokens expire",
            labels: &["api", "auth"],
            assignees: &["bob"],
            updated: Some(500),
            ..ROW
        },
        Row {
            title: "Auth",
            points: Some(8),
            labels: &["auth"],
            kind: Kind::Epic,
            ..ROW
        },
        Row {
            title: "Login API",
            description: "jwt login endpoint",
            status: Status::InProgress,
            points: Some(3),
            labels: &["api"],
            assignees: &["bob", "alice"],
            parent: Some(2),
            epic: Some(3),
            ..ROW
        },
        Row {
            title: "Review docs",
            status: Status::Review,
            points: Some(5),
            epic: Some(3),
            updated: Some(900),
            ..ROW
        },
        Row {
            title: "Done thing",
            description: "login done",
            status: Status::Done,
            points: Some(2),
            labels: &["ui", "api"],
            ..ROW
        },
        Row {
            title: "Waits on work",
            points: Some(8),
            labels: &["wontfix"],
            assignees: &["carol"],
            depends_on: &[4],
            ..ROW
        },
        Row {
            title: "Waits on done",
            points: Some(13),
            depends_on: &[6],
            ..ROW
        },
        Row {
            title: "Stuck",
            status: Status::Blocked,
            assignees: &["alice"],
            ..ROW
        },
        Row {
            title: "Deleted login",
            labels: &["ui"],
            deleted: true,
            ..ROW
        },
        Row {
            title: "In the sprint",
            points: Some(3),
            sprint: Some("Open"),
            ..ROW
        },
        Row {
            title: "Done in a closed sprint",
            status: Status::Done,
            sprint: Some("Closed"),
            ..ROW
        },
        Row {
            title: "Left open in a closed sprint",
            status: Status::Backlog,
            sprint: Some("Closed"),
            ..ROW
        },
    ]
}

fn fixture<S: Store>(store: &mut S) -> Vec<Made> {
    let task = project(store, "TASK");
    let rows = rows();
    write(store, |tx| {
        let sprint = |tx: &mut dyn StoreTx, name: &str| {
            tx.insert_sprint(&NewSprint {
                project_id: task.id,
                name,
                goal: None,
                starts_on: "2024-10-01",
                ends_on: "2024-10-14",
                capacity_points: None,
                actor: "alice",
                at: &at(1),
            })
        };
        let open = sprint(tx, "Open")?;
        let closed = sprint(tx, "Closed")?;
        tx.update_sprint(
            closed.id,
            &SprintUpdate {
                state: Some(SprintState::Completed),
                ..Default::default()
            },
        )?;
        let mut made: Vec<Made> = Vec::new();
        for (i, row) in rows.iter().enumerate() {
            let created = at(10 * (i as u32 + 1));
            let id_of = |n: Option<usize>| n.map(|n| made[n - 1].id);
            let ticket = make(
                tx,
                &task,
                &Spec {
                    title: row.title,
                    description: row.description,
                    status: row.status,
                    points: row.points,
                    parent: id_of(row.parent),
                    epic: id_of(row.epic),
                    at: created.clone(),
                    ..Spec::new(row.title)
                },
            )?;
            let labels: Vec<String> = row.labels.iter().map(|l| l.to_string()).collect();
            tx.set_labels(ticket.id, &labels)?;
            let assignees: Vec<String> = row.assignees.iter().map(|a| a.to_string()).collect();
            tx.set_assignees(ticket.id, &assignees, "alice", &created)?;
            for n in row.depends_on {
                tx.add_dependency(ticket.id, made[n - 1].id, "alice", &created)?;
            }
            let sprint_id = row
                .sprint
                .map(|name| if name == "Open" { open.id } else { closed.id });
            tx.update_ticket(
                ticket.id,
                &TicketUpdate {
                    kind: Some(row.kind),
                    sprint_id: Some(sprint_id),
                    deleted: row.deleted,
                    ..Default::default()
                },
                "alice",
                &row.updated.map_or(created, at),
            )?;
            made.push(ticket);
        }
        Ok(made)
    })
}

/// Every page of the listing of `query`, two at a time: the numbers in order.
fn listed<S: Store>(t: &mut crate::Tracker<S>, query: &str) -> Vec<usize> {
    let mut out = Vec::new();
    let mut cursor = None;
    loop {
        let page = t
            .list(
                ACTOR,
                &ListTickets {
                    query: Some(query.to_string()),
                    limit: Some(2),
                    cursor,
                    ..ListTickets::default()
                },
            )
            .unwrap_or_else(|e| panic!("{query}: {e:?}"));
        out.extend(page.data.tickets.iter().map(|s| number(&s.number)));
        match page.page.next_cursor {
            Some(next) => cursor = Some(next),
            None => {
                assert_eq!(page.page.total as usize, out.len(), "{query}: the total");
                return out;
            }
        }
    }
}

fn number(text: &str) -> usize {
    text.strip_prefix("TASK-")
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("not a TASK ticket: {text}"))
}

fn set(numbers: &[usize]) -> BTreeSet<usize> {
    numbers.iter().copied().collect()
}

/// Every live ticket but `except`.
fn all_but(except: &[usize]) -> BTreeSet<usize> {
    (1..=13)
        .filter(|n| *n != 10 && !except.contains(n))
        .collect()
}

pub(super) fn query<S: Store + Clone>(cx: &mut Ctx<'_, S>) {
    fixture(&mut cx.store);
    cx.settle();
    let mut t = cx.tracker();
    let cases: Vec<(&str, BTreeSet<usize>)> = vec![
        ("status:todo,review", set(&[2, 3, 5, 7, 8, 11])),
        ("-status:done", all_but(&[6, 12])),
        ("label:api", set(&[2, 4, 6])),
        ("label:api,ui", set(&[1, 2, 4, 6])),
        ("label:api label:ui", set(&[6])),
        ("-label:api", all_but(&[2, 4, 6])),
        ("no:label", set(&[5, 8, 9, 11, 12, 13])),
        ("assignee:me", set(&[1, 4, 9])),
        ("assignee:bob", set(&[2, 4])),
        ("-assignee:bob", all_but(&[2, 4])),
        ("is:unassigned", set(&[3, 5, 6, 8, 11, 12, 13])),
        ("no:assignee", set(&[3, 5, 6, 8, 11, 12, 13])),
        ("is:assigned", set(&[1, 2, 4, 7, 9])),
        ("-is:unassigned", set(&[1, 2, 4, 7, 9])),
        ("is:blocked", set(&[7, 9])),
        ("-is:blocked", all_but(&[7, 9])),
        ("is:epic", set(&[3])),
        ("is:ticket", all_but(&[3])),
        ("is:open", all_but(&[6, 12])),
        ("is:done", set(&[6, 12])),
        ("epic:TASK-3", set(&[4, 5])),
        ("-epic:TASK-3", all_but(&[4, 5])),
        ("no:epic", all_but(&[4, 5])),
        ("parent:TASK-2", set(&[4])),
        ("no:parent", all_but(&[4])),
        ("depends-on:TASK-4", set(&[7])),
        ("depends-on:TASK-6 depends-on:TASK-4", set(&[])),
        ("points:3..8", set(&[3, 4, 5, 7, 11])),
        ("points:>5", set(&[3, 7, 8])),
        ("points:<3", set(&[1, 6])),
        ("points:5", set(&[5])),
        ("no:points", set(&[2, 9, 12, 13])),
        ("-points:3..8", set(&[1, 2, 6, 8, 9, 12, 13])),
        ("sprint:Open", set(&[11])),
        ("-sprint:Open", all_but(&[11])),
        ("no:sprint", all_but(&[11, 12])),
        ("sprint:none", all_but(&[11, 12])),
        ("created:>=2024-10-20T10:00:50Z", all_but(&[1, 2, 3, 4])),
        ("created:<2024-10-20T10:00:30Z", set(&[1, 2])),
        ("created:2024-10-20T10:00:30Z", set(&[3])),
        ("created:2024-10-20", all_but(&[])),
        ("created:<2024-10-20", set(&[])),
        ("created:2024-10-19..2024-10-21", all_but(&[])),
        ("updated:>=2024-10-20T10:08:00Z", set(&[2, 5])),
        ("-updated:>=2024-10-20T10:08:00Z", all_but(&[2, 5])),
        ("login", set(&[1, 4, 6])),
        ("login -api", set(&[1, 6])),
        ("\"login api\"", set(&[4])),
        ("login label:ui", set(&[1, 6])),
        ("jwt status:in_progress", set(&[4])),
        ("jwt -status:in_progress is:open", set(&[2])),
    ];
    for (query, want) in &cases {
        let got = listed(&mut t, query);
        assert_eq!(
            got.len(),
            set(&got).len(),
            "{query}: a ticket twice: {got:?}"
        );
        assert_eq!(&set(&got), want, "{query}");
        // Newest first unless asked otherwise.
        let mut newest = got.clone();
        newest.sort_unstable_by(|a, b| b.cmp(a));
        assert_eq!(got, newest, "{query}: the order");
    }

    let orders: [(&str, &[usize]); 7] = [
        ("label:api sort:created-asc", &[2, 4, 6]),
        ("label:api", &[6, 4, 2]),
        (
            "is:open sort:updated-desc",
            &[5, 2, 13, 11, 9, 8, 7, 4, 3, 1],
        ),
        (
            "is:open sort:updated-asc",
            &[1, 3, 4, 7, 8, 9, 11, 13, 2, 5],
        ),
        ("points:1..13 sort:points-asc", &[1, 6, 4, 11, 5, 3, 7, 8]),
        ("points:1..13 sort:points-desc", &[8, 7, 3, 5, 11, 4, 6, 1]),
        ("label:api sort:title-asc", &[6, 4, 2]),
    ];
    for (query, want) in orders {
        assert_eq!(listed(&mut t, query), want, "{query}");
    }

    // Search: ranked by words, filtered by qualifiers; in an order when asked (no snippets).
    let search = |t: &mut crate::Tracker<S>, query: &str| {
        t.search(
            ACTOR,
            &SearchTickets {
                query: query.into(),
                limit: None,
                cursor: None,
                sprint: None,
            },
        )
        .unwrap_or_else(|e| panic!("{query}: {e:?}"))
    };
    let found = search(&mut t, "login");
    let numbers: Vec<usize> = found.data.hits.iter().map(|h| number(&h.number)).collect();
    assert_eq!(set(&numbers), set(&[1, 4, 6]));
    assert!(found.data.hits.iter().all(|h| h.snippet.contains("**")));
    let found = search(&mut t, "login -label:ui assignee:me");
    let numbers: Vec<usize> = found.data.hits.iter().map(|h| number(&h.number)).collect();
    assert_eq!(numbers, [4]);
    assert_eq!(found.page.total, 1);
    let found = search(&mut t, "login sort:created-desc");
    let numbers: Vec<usize> = found.data.hits.iter().map(|h| number(&h.number)).collect();
    assert_eq!(numbers, [6, 4, 1]);
    let found = search(&mut t, "is:blocked");
    let numbers: Vec<usize> = found.data.hits.iter().map(|h| number(&h.number)).collect();
    assert_eq!(numbers, [9, 7]);
    assert!(found.data.hits.iter().all(|h| h.snippet.is_empty()));

    // A cursor is bound to its query; a name that names nothing runs nothing.
    let first = t
        .list(
            ACTOR,
            &ListTickets {
                query: Some("label:api".into()),
                limit: Some(1),
                ..ListTickets::default()
            },
        )
        .unwrap();
    let err = t
        .list(
            ACTOR,
            &ListTickets {
                query: Some("label:ui".into()),
                limit: Some(1),
                cursor: first.page.next_cursor,
                ..ListTickets::default()
            },
        )
        .unwrap_err();
    assert_eq!(err.code, errors::INVALID_PARAMS, "{err:?}");
    for (query, code) in [
        ("epic:TASK-99", errors::NOT_FOUND),
        ("sprint:Nope", errors::NOT_FOUND),
        ("colour:red", errors::INVALID_INPUT),
        ("sort:relevance", errors::INVALID_INPUT),
    ] {
        let err = t
            .list(
                ACTOR,
                &ListTickets {
                    query: Some(query.into()),
                    ..ListTickets::default()
                },
            )
            .unwrap_err();
        assert_eq!(err.code, code, "{query}: {err:?}");
    }
    // The listing's own filters hold beside its query.
    let both = t
        .list(
            ACTOR,
            &ListTickets {
                query: Some("label:api".into()),
                assignee: Some("alice".into()),
                ..ListTickets::default()
            },
        )
        .unwrap();
    let numbers: Vec<usize> = both
        .data
        .tickets
        .iter()
        .map(|s| number(&s.number))
        .collect();
    assert_eq!(numbers, [4]);
}

/// Saved views: a person's own and the shared ones, names unique among what one sees (any
/// case), run as `view:NAME` (own first), deleted only by their owner.
pub(super) fn views<S: Store + Clone>(cx: &mut Ctx<'_, S>) {
    use crate::params::{SaveView, ViewName};

    fixture(&mut cx.store);
    let mut t = cx.tracker();
    let save = |t: &mut crate::Tracker<S>, actor: &str, name: &str, query: &str, shared| {
        t.save_view(
            actor,
            SaveView {
                name: name.into(),
                query: query.into(),
                shared,
            },
        )
    };
    let mine = save(&mut t, ACTOR, "Triage", "label:api sort:created-asc", false).unwrap();
    assert_eq!((mine.view.owner.as_str(), mine.view.shared), (ACTOR, false));
    save(&mut t, "bob", "team", "is:blocked", true).unwrap();
    save(&mut t, "bob", "bobs", "assignee:me", false).unwrap();
    save(&mut t, "carol", "triage", "is:done", false).unwrap();

    let names = |t: &mut crate::Tracker<S>, actor: &str| -> Vec<String> {
        t.list_views(actor)
            .unwrap()
            .views
            .into_iter()
            .map(|v| format!("{}:{}", v.owner, v.name))
            .collect()
    };
    assert_eq!(names(&mut t, ACTOR), ["bob:team", "alice:Triage"]);
    assert_eq!(names(&mut t, "bob"), ["bob:bobs", "bob:team"]);
    assert_eq!(names(&mut t, "carol"), ["bob:team", "carol:triage"]);

    // Run by name, own first: alice's Triage, carol's triage; a shared one for everyone.
    assert_eq!(listed(&mut t, "view:triage"), [2, 4, 6]);
    assert_eq!(listed(&mut t, "view:team"), [9, 7]);
    assert_eq!(listed(&mut t, "view:Triage sort:created-desc"), [6, 4, 2]);
    assert_eq!(listed(&mut t, "view:team status:blocked"), [9]);
    let carol = t
        .list(
            "carol",
            &ListTickets {
                query: Some("view:TRIAGE".into()),
                ..ListTickets::default()
            },
        )
        .unwrap();
    let numbers: Vec<usize> = carol
        .data
        .tickets
        .iter()
        .map(|s| number(&s.number))
        .collect();
    assert_eq!(numbers, [12, 6]);
    // Another person's own view is not there for others.
    let err = t
        .list(
            ACTOR,
            &ListTickets {
                query: Some("view:bobs".into()),
                ..ListTickets::default()
            },
        )
        .unwrap_err();
    assert_eq!(err.code, errors::NOT_FOUND, "{err:?}");

    // Refusals change nothing.
    for (actor, name, query, code) in [
        (ACTOR, "TRIAGE", "is:open", errors::ALREADY_EXISTS),
        (ACTOR, "Team", "is:open", errors::ALREADY_EXISTS),
        (ACTOR, "bad\"name", "is:open", errors::INVALID_INPUT),
        (ACTOR, "", "is:open", errors::INVALID_INPUT),
        (ACTOR, "x", "", errors::INVALID_INPUT),
        (ACTOR, "x", "colour:red", errors::INVALID_INPUT),
        (ACTOR, "x", "view:team", errors::INVALID_INPUT),
        (ACTOR, "x", "epic:TASK-99", errors::NOT_FOUND),
    ] {
        let err = save(&mut t, actor, name, query, false).unwrap_err();
        assert_eq!(err.code, code, "{name} {query}: {err:?}");
    }
    assert_eq!(names(&mut t, ACTOR), ["bob:team", "alice:Triage"]);

    // Only the owner deletes a shared view.
    let err = t
        .delete_view(
            ACTOR,
            ViewName {
                name: "team".into(),
            },
        )
        .unwrap_err();
    assert_eq!(err.code, errors::PERMISSION_DENIED, "{err:?}");
    let err = t
        .delete_view(
            ACTOR,
            ViewName {
                name: "nope".into(),
            },
        )
        .unwrap_err();
    assert_eq!(err.code, errors::NOT_FOUND, "{err:?}");
    t.delete_view(
        ACTOR,
        ViewName {
            name: "triage".into(),
        },
    )
    .unwrap();
    assert_eq!(names(&mut t, ACTOR), ["bob:team"]);
    assert_eq!(names(&mut t, "carol"), ["bob:team", "carol:triage"]);
    t.delete_view(
        "bob",
        ViewName {
            name: "TEAM".into(),
        },
    )
    .unwrap();
    assert_eq!(names(&mut t, ACTOR), Vec::<String>::new());
}

/// Bulk edits: all or none, every ticket checked first; dry runs change nothing; the
/// expected count, the empty query, the limit; change logs name the edit.
pub(super) fn bulk<S: Store + Clone>(cx: &mut Ctx<'_, S>) {
    use crate::params::{BulkAssign, BulkSet, BulkUpdate, StatusName};

    fixture(&mut cx.store);
    let mut t = cx.tracker();
    let update = |query: &str, set: BulkSet| BulkUpdate {
        query: Some(query.into()),
        tickets: Vec::new(),
        set,
        expected_count: None,
        dry_run: false,
        message: None,
    };
    let status = |s: &str| BulkSet {
        status: Some(StatusName(s.into())),
        ..BulkSet::default()
    };
    let statuses = |t: &mut crate::Tracker<S>, numbers: &[usize]| -> Vec<String> {
        numbers
            .iter()
            .map(|n| {
                t.get_ticket(&format!("TASK-{n}"))
                    .unwrap()
                    .ticket
                    .status
                    .as_str()
                    .to_string()
            })
            .collect()
    };

    // A move two of them may not make: a dry run names both, the edit is refused whole.
    let preview = t
        .bulk_update(
            ACTOR,
            BulkUpdate {
                dry_run: true,
                ..update("label:api", status("review"))
            },
        )
        .unwrap();
    assert!(preview.dry_run);
    assert_eq!(
        (preview.matched, preview.changed, preview.refused_total),
        (3, 1, 2)
    );
    let refused: Vec<&str> = preview.refused.iter().map(|r| r.number.as_str()).collect();
    assert_eq!(refused, ["TASK-2", "TASK-6"], "{preview:?}");
    assert!(
        preview.refused[0].reason.contains("todo → review"),
        "{preview:?}"
    );
    let err = t
        .bulk_update(ACTOR, update("label:api", status("review")))
        .unwrap_err();
    assert_eq!(err.code, errors::INVALID_STATUS, "{err:?}");
    assert!(
        err.message.contains("TASK-2") && err.message.contains("TASK-6"),
        "{err:?}"
    );
    assert_eq!(
        statuses(&mut t, &[2, 4, 6]),
        ["todo", "in_progress", "done"]
    );

    // The expected count guards a broader query than meant.
    let err = t
        .bulk_update(
            ACTOR,
            BulkUpdate {
                expected_count: Some(2),
                ..update("label:api", status("in_progress"))
            },
        )
        .unwrap_err();
    assert_eq!(err.code, errors::COUNT_MISMATCH, "{err:?}");
    assert!(err.message.contains("names 3 tickets"), "{err:?}");

    // Status, labels and a message at once; a ticket already in the status keeps it.
    let done = t
        .bulk_update(
            ACTOR,
            BulkUpdate {
                expected_count: Some(3),
                message: Some("release cleanup".into()),
                ..update(
                    "label:api",
                    BulkSet {
                        status: Some(StatusName("in_progress".into())),
                        add_labels: vec!["bulk".into()],
                        remove_labels: vec!["api".into()],
                        ..BulkSet::default()
                    },
                )
            },
        )
        .unwrap();
    assert_eq!((done.matched, done.changed, done.refused_total), (3, 3, 0));
    assert_eq!(statuses(&mut t, &[2, 4, 6]), ["in_progress"; 3]);
    assert_eq!(listed(&mut t, "label:bulk"), [6, 4, 2]);
    assert_eq!(listed(&mut t, "label:api"), Vec::<usize>::new());
    let history = t.get_ticket("TASK-2").unwrap().recent_changes;
    let named: Vec<(&str, &str)> = history
        .iter()
        .filter(|c| c.detail.as_deref() == Some(&format!("bulk edit {}", done.bulk_id)))
        .map(|c| {
            (
                c.change_type.as_str(),
                c.message.as_deref().unwrap_or_default(),
            )
        })
        .collect();
    assert_eq!(
        named,
        [
            ("labels_changed", "release cleanup"),
            ("status_changed", "release cleanup")
        ],
        "{history:?}"
    );

    // Into a sprint: the backlog's open tickets, TASK-6 reopened above among them (an epic
    // would be refused).
    let moved = t
        .bulk_update(
            ACTOR,
            update(
                "is:open no:sprint is:ticket",
                BulkSet {
                    sprint: Some("Open".into()),
                    ..BulkSet::default()
                },
            ),
        )
        .unwrap();
    assert_eq!(moved.changed, 9, "{moved:?}");
    assert_eq!(
        listed(&mut t, "sprint:Open"),
        [13, 11, 9, 8, 7, 6, 5, 4, 2, 1]
    );
    let err = t
        .bulk_update(
            ACTOR,
            update(
                "is:epic",
                BulkSet {
                    sprint: Some("Open".into()),
                    ..BulkSet::default()
                },
            ),
        )
        .unwrap_err();
    assert!(
        err.message.contains("TASK-3: an epic is no sprint work"),
        "{err:?}"
    );
    // Back to the backlog by name, with points.
    let back = t
        .bulk_update(
            ACTOR,
            BulkUpdate {
                tickets: vec!["TASK-1".into(), "task-2".into(), "TASK-1".into()],
                query: None,
                ..update(
                    "",
                    BulkSet {
                        sprint: Some("none".into()),
                        story_points: Some(Some(5)),
                        ..BulkSet::default()
                    },
                )
            },
        )
        .unwrap();
    assert_eq!((back.matched, back.changed), (2, 2), "{back:?}");
    assert_eq!(listed(&mut t, "points:5 no:sprint"), [2, 1]);

    // Assign them all.
    let assigned = t
        .bulk_assign(
            ACTOR,
            BulkAssign {
                query: Some("label:bulk".into()),
                tickets: Vec::new(),
                assignees: vec!["dave".into()],
                expected_count: None,
                dry_run: false,
                message: None,
            },
        )
        .unwrap();
    assert_eq!(assigned.changed, 3);
    assert_eq!(listed(&mut t, "assignee:dave"), [6, 4, 2]);
    assert_eq!(listed(&mut t, "assignee:bob"), Vec::<usize>::new());

    // Refusals before anything is read.
    let refusals = [
        (update("", status("todo")), errors::INVALID_INPUT),
        (update("label:x", BulkSet::default()), errors::INVALID_INPUT),
        (
            BulkUpdate {
                tickets: vec!["TASK-1".into()],
                ..update("label:bulk", status("todo"))
            },
            errors::INVALID_INPUT,
        ),
        (
            BulkUpdate {
                query: None,
                ..update("", status("todo"))
            },
            errors::INVALID_INPUT,
        ),
        (
            BulkUpdate {
                query: None,
                tickets: (0..=crate::tracker::MAX_BULK)
                    .map(|n| format!("TASK-{n}"))
                    .collect(),
                ..update("", status("todo"))
            },
            errors::INVALID_INPUT,
        ),
        (update("colour:red", status("todo")), errors::INVALID_INPUT),
        (
            update("label:bulk", status("doing")),
            errors::INVALID_STATUS,
        ),
        (
            update(
                "label:bulk",
                BulkSet {
                    epic_id: Some(Some("TASK-1".into())),
                    ..BulkSet::default()
                },
            ),
            errors::INVALID_INPUT,
        ),
        (
            update(
                "label:bulk",
                BulkSet {
                    sprint: Some("Closed".into()),
                    ..BulkSet::default()
                },
            ),
            errors::SPRINT_CONFLICT,
        ),
    ];
    for (params, code) in refusals {
        let err = t.bulk_update(ACTOR, params.clone()).unwrap_err();
        assert_eq!(err.code, code, "{params:?}: {err:?}");
    }
    // An empty query with the count: every live ticket.
    let all = t
        .bulk_update(
            ACTOR,
            BulkUpdate {
                expected_count: Some(12),
                ..update(
                    "",
                    BulkSet {
                        add_labels: vec!["everything".into()],
                        ..BulkSet::default()
                    },
                )
            },
        )
        .unwrap();
    assert_eq!((all.matched, all.changed), (12, 12));
}
