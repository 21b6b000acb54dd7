//! Listings ([`StoreTx::list`]) and search ([`Store::search`], [`StoreTx::search`]).

use super::{Ctx, Made, Spec, at, made, project, read, show, terms, write};
use crate::model::{Status, TicketSummary};
use crate::store::{
    COUNT_CAP, Filter, ListFilter, ListPage, NewTicket, SearchPage, SearchTerms, Store, StoreTx,
    TicketUpdate,
};

/// The numbers (of `TASK-N`) of a page's tickets, in its order.
fn numbers(items: &[TicketSummary]) -> Vec<i64> {
    items
        .iter()
        .map(|s| {
            s.number
                .strip_prefix("TASK-")
                .and_then(|n| n.parse().ok())
                .unwrap_or_else(|| panic!("not a TASK ticket: {}", s.number))
        })
        .collect()
}

fn page<S: Store>(
    store: &mut S,
    filter: &ListFilter,
    after: Option<i64>,
    limit: usize,
) -> ListPage {
    read(store, |tx| Ok(tx.list(filter, after, limit)?))
}

/// The listing fixture: seven tickets of TASK, one deleted, one moved to done after its
/// labels and assignees were set. Returns them by number (index 0 is TASK-1).
fn fixture<S: Store>(store: &mut S) -> Vec<Made> {
    let task = project(store, "TASK");
    // (title, status, labels, assignees, parent, epic, points)
    type Row = (
        &'static str,
        Status,
        &'static [&'static str],
        &'static [&'static str],
        Option<usize>,
        Option<usize>,
        Option<u8>,
    );
    let rows: [Row; 7] = [
        (
            "Alpha",
            Status::Backlog,
            &["ui"],
            &["alice"],
            None,
            None,
            Some(1),
        ),
        (
            "Beta",
            Status::Todo,
            &["ui", "api", "Zed"],
            &["bob"],
            None,
            None,
            None,
        ),
        (
            "Gamma",
            Status::InProgress,
            &["api"],
            &["bob"],
            Some(1),
            None,
            Some(3),
        ),
        ("Delta", Status::Review, &[], &[], Some(1), Some(2), None),
        (
            "Epsilon",
            Status::Done,
            &["ui", "api"],
            &[],
            None,
            Some(2),
            None,
        ),
        (
            "Zeta",
            Status::Blocked,
            &["ui"],
            &["carol"],
            None,
            None,
            None,
        ),
        (
            "Eta",
            Status::Todo,
            &["api", "ui"],
            &["alice"],
            Some(1),
            Some(2),
            None,
        ),
    ];
    let mut made_: Vec<Made> = Vec::new();
    for (n, (title, status, labels, assignees, parent, epic, points)) in
        rows.into_iter().enumerate()
    {
        let spec = Spec {
            status,
            points,
            parent: parent.map(|p| made_[p - 1].id),
            epic: epic.map(|e| made_[e - 1].id),
            at: at(n as u32 + 1),
            ..Spec::new(title)
        };
        let t = made(store, &task, spec);
        let labels: Vec<String> = labels.iter().map(|s| s.to_string()).collect();
        let assignees: Vec<String> = assignees.iter().map(|s| s.to_string()).collect();
        write(store, |tx| {
            tx.set_labels(t.id, &labels)?;
            tx.set_assignees(t.id, &assignees, "lead", &at(1))?;
            Ok(())
        });
        made_.push(t);
    }
    write(store, |tx| {
        // Gamma gets a second assignee later; Alpha moves to done; Zeta is deleted.
        tx.set_assignees(made_[2].id, &["bob".into(), "alice".into()], "lead", &at(2))?;
        let done = TicketUpdate {
            status: Some(Status::Done),
            ..Default::default()
        };
        tx.update_ticket(made_[0].id, &done, "alice", &at(20))?;
        let deleted = TicketUpdate {
            deleted: true,
            ..Default::default()
        };
        tx.update_ticket(made_[5].id, &deleted, "alice", &at(21))?;
        Ok(())
    });
    made_
}

/// Every filter alone and combined (all must hold; every label required), newest first,
/// deleted tickets never listed, a status changed after the labels and assignees were set
/// seen by their filters; the summaries exact.
pub(super) fn filters<S: Store + Clone>(cx: &mut Ctx<'_, S>) {
    let store = &mut cx.store;
    let t = fixture(store);
    let id = |n: usize| t[n - 1].id;
    let labels = |l: &[&str]| l.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    let f = ListFilter::default;
    let cases: Vec<(&str, ListFilter, Vec<i64>)> = vec![
        ("everything", f(), vec![7, 5, 4, 3, 2, 1]),
        (
            "todo",
            ListFilter {
                statuses: vec![Status::Todo],
                ..f()
            },
            vec![7, 2],
        ),
        (
            "todo or done",
            ListFilter {
                statuses: vec![Status::Todo, Status::Done],
                ..f()
            },
            vec![7, 5, 2, 1],
        ),
        (
            "backlog (moved away)",
            ListFilter {
                statuses: vec![Status::Backlog],
                ..f()
            },
            vec![],
        ),
        (
            "blocked (deleted)",
            ListFilter {
                statuses: vec![Status::Blocked],
                ..f()
            },
            vec![],
        ),
        (
            "alice",
            ListFilter {
                assignee: Some("alice".into()),
                ..f()
            },
            vec![7, 3, 1],
        ),
        (
            "alice, todo",
            ListFilter {
                assignee: Some("alice".into()),
                statuses: vec![Status::Todo],
                ..f()
            },
            vec![7],
        ),
        (
            "alice, done (moved after assignment)",
            ListFilter {
                assignee: Some("alice".into()),
                statuses: vec![Status::Done],
                ..f()
            },
            vec![1],
        ),
        (
            "carol (deleted)",
            ListFilter {
                assignee: Some("carol".into()),
                ..f()
            },
            vec![],
        ),
        (
            "label ui",
            ListFilter {
                labels: labels(&["ui"]),
                ..f()
            },
            vec![7, 5, 2, 1],
        ),
        (
            "labels ui+api",
            ListFilter {
                labels: labels(&["ui", "api"]),
                ..f()
            },
            vec![7, 5, 2],
        ),
        (
            "labels api+ui",
            ListFilter {
                labels: labels(&["api", "ui"]),
                ..f()
            },
            vec![7, 5, 2],
        ),
        (
            "labels ui+nope",
            ListFilter {
                labels: labels(&["ui", "nope"]),
                ..f()
            },
            vec![],
        ),
        (
            "labels Zed",
            ListFilter {
                labels: labels(&["Zed"]),
                ..f()
            },
            vec![2],
        ),
        (
            "label ui, done (moved after labelling)",
            ListFilter {
                labels: labels(&["ui"]),
                statuses: vec![Status::Done],
                ..f()
            },
            vec![5, 1],
        ),
        (
            "label ui, bob",
            ListFilter {
                labels: labels(&["ui"]),
                assignee: Some("bob".into()),
                ..f()
            },
            vec![2],
        ),
        (
            "label api, alice",
            ListFilter {
                labels: labels(&["api"]),
                assignee: Some("alice".into()),
                ..f()
            },
            vec![7, 3],
        ),
        (
            "labels ui+api, alice, todo",
            ListFilter {
                labels: labels(&["ui", "api"]),
                assignee: Some("alice".into()),
                statuses: vec![Status::Todo],
                ..f()
            },
            vec![7],
        ),
        (
            "parent 1",
            ListFilter {
                parent_id: Some(id(1)),
                ..f()
            },
            vec![7, 4, 3],
        ),
        (
            "parent 2 (none)",
            ListFilter {
                parent_id: Some(id(2)),
                ..f()
            },
            vec![],
        ),
        (
            "parent 1, epic 2",
            ListFilter {
                parent_id: Some(id(1)),
                epic_id: Some(id(2)),
                ..f()
            },
            vec![7, 4],
        ),
        (
            "epic 2",
            ListFilter {
                epic_id: Some(id(2)),
                ..f()
            },
            vec![7, 5, 4],
        ),
        (
            "epic 2, label ui",
            ListFilter {
                epic_id: Some(id(2)),
                labels: labels(&["ui"]),
                ..f()
            },
            vec![7, 5],
        ),
        (
            "parent 1, review or todo",
            ListFilter {
                parent_id: Some(id(1)),
                statuses: vec![Status::Review, Status::Todo],
                ..f()
            },
            vec![7, 4],
        ),
        (
            "parent 1, alice",
            ListFilter {
                parent_id: Some(id(1)),
                assignee: Some("alice".into()),
                ..f()
            },
            vec![7, 3],
        ),
        (
            "unassigned",
            ListFilter {
                unassigned: true,
                ..f()
            },
            vec![5, 4],
        ),
        (
            "unassigned, label ui",
            ListFilter {
                unassigned: true,
                labels: labels(&["ui"]),
                ..f()
            },
            vec![5],
        ),
        (
            "unassigned, review",
            ListFilter {
                unassigned: true,
                statuses: vec![Status::Review],
                ..f()
            },
            vec![4],
        ),
        (
            "unassigned, epic 2",
            ListFilter {
                unassigned: true,
                epic_id: Some(id(2)),
                ..f()
            },
            vec![5, 4],
        ),
    ];
    for (name, filter, want) in &cases {
        let got = page(store, filter, None, 50);
        assert_eq!(numbers(&got.items), *want, "{name}");
        assert_eq!(
            (got.total, got.total_exact, got.next_after),
            (want.len(), true, None),
            "{name}: total, exactness, next"
        );
    }
    // The summaries, exact: assignees and labels in byte order.
    let all = page(store, &f(), None, 50);
    let summary = |n: usize| {
        all.items
            .iter()
            .find(|s| s.number == format!("TASK-{n}"))
            .unwrap_or_else(|| panic!("TASK-{n} listed"))
    };
    let summary_of =
        |n: &str, title: &str, status, points: Option<u8>, a: &[&str], l: &[&str], u: u32| {
            TicketSummary {
                number: n.into(),
                title: title.into(),
                status,
                story_points: points,
                assignees: labels(a),
                labels: labels(l),
                updated_at: at(u),
            }
        };
    for (n, want) in [
        (
            1,
            summary_of(
                "TASK-1",
                "Alpha",
                Status::Done,
                Some(1),
                &["alice"],
                &["ui"],
                20,
            ),
        ),
        (
            2,
            summary_of(
                "TASK-2",
                "Beta",
                Status::Todo,
                None,
                &["bob"],
                &["Zed", "api", "ui"],
                2,
            ),
        ),
        (
            3,
            summary_of(
                "TASK-3",
                "Gamma",
                Status::InProgress,
                Some(3),
                &["alice", "bob"],
                &["api"],
                3,
            ),
        ),
        (
            4,
            summary_of("TASK-4", "Delta", Status::Review, None, &[], &[], 4),
        ),
    ] {
        assert_eq!(show(summary(n)), show(&want), "summary of TASK-{n}");
    }
}

/// Pages of a listing follow each other through `next_after` (the row of the page's last
/// ticket, `None` on the last page), filtered or not; the total is every match's on each.
pub(super) fn paging<S: Store + Clone>(cx: &mut Ctx<'_, S>) {
    let store = &mut cx.store;
    let t = fixture(store);
    let id = |n: i64| t[n as usize - 1].id;
    let labels = |l: &[&str]| l.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    let f = ListFilter::default;
    let cases: Vec<(&str, ListFilter, usize, Vec<Vec<i64>>)> = vec![
        (
            "everything",
            f(),
            2,
            vec![vec![7, 5], vec![4, 3], vec![2, 1]],
        ),
        (
            "everything by 4",
            f(),
            4,
            vec![vec![7, 5, 4, 3], vec![2, 1]],
        ),
        ("everything at once", f(), 6, vec![vec![7, 5, 4, 3, 2, 1]]),
        (
            "todo or done",
            ListFilter {
                statuses: vec![Status::Done, Status::Todo],
                ..f()
            },
            1,
            vec![vec![7], vec![5], vec![2], vec![1]],
        ),
        (
            "label ui",
            ListFilter {
                labels: labels(&["ui"]),
                ..f()
            },
            3,
            vec![vec![7, 5, 2], vec![1]],
        ),
        (
            "alice",
            ListFilter {
                assignee: Some("alice".into()),
                ..f()
            },
            2,
            vec![vec![7, 3], vec![1]],
        ),
        (
            "parent 1",
            ListFilter {
                parent_id: Some(id(1)),
                ..f()
            },
            2,
            vec![vec![7, 4], vec![3]],
        ),
        (
            "unassigned",
            ListFilter {
                unassigned: true,
                ..f()
            },
            1,
            vec![vec![5], vec![4]],
        ),
    ];
    for (name, filter, limit, pages) in &cases {
        let total: usize = pages.iter().map(Vec::len).sum();
        let mut after = None;
        for (at, want) in pages.iter().enumerate() {
            let got = page(store, filter, after, *limit);
            assert_eq!(numbers(&got.items), *want, "{name}: page {}", at + 1);
            assert_eq!((got.total, got.total_exact), (total, true), "{name}: total");
            let last = at + 1 == pages.len();
            let next = (!last).then(|| id(*want.last().unwrap_or(&0)));
            assert_eq!(
                got.next_after,
                next,
                "{name}: next_after of page {}",
                at + 1
            );
            after = got.next_after;
        }
    }
    // Past the last ticket: an empty page, the same total.
    let got = page(store, &f(), Some(id(1)), 2);
    assert_eq!(
        (got.items.len(), got.total, got.next_after),
        (0, 6, None),
        "after the oldest"
    );
}

/// The count stops at [`COUNT_CAP`]: exactly that many match is exact, one more is "at
/// least" (`total_exact: false`) with the same total; filters count the same way.
pub(super) fn count_cap<S: Store + Clone>(cx: &mut Ctx<'_, S>) {
    let store = &mut cx.store;
    let task = project(store, "TASK");
    let when = at(1);
    let insert = |tx: &mut dyn StoreTx, number: i64, status: Status| {
        let uuid = uuid::Uuid::new_v4().to_string();
        tx.insert_ticket(&NewTicket {
            uuid: &uuid,
            project_id: task.id,
            number,
            title: "Many",
            description: "",
            status,
            story_points: None,
            parent_id: None,
            epic_id: None,
            kind: crate::model::Kind::Ticket,
            actor: "bulk",
            at: &when,
        })
    };
    let cap = COUNT_CAP as i64;
    write(store, |tx| {
        for number in 1..=cap {
            insert(tx, number, Status::Todo)?;
        }
        Ok(())
    });
    let all = ListFilter::default;
    let todo = || ListFilter {
        statuses: vec![Status::Todo],
        ..Default::default()
    };
    let done = || ListFilter {
        statuses: vec![Status::Done],
        ..Default::default()
    };
    let got = page(store, &all(), None, 2);
    assert_eq!(numbers(&got.items), vec![cap, cap - 1]);
    assert_eq!(
        (got.total, got.total_exact),
        (COUNT_CAP, true),
        "exactly the cap"
    );
    assert!(got.next_after.is_some());
    write(store, |tx| {
        insert(tx, cap + 1, Status::Done)?;
        Ok(())
    });
    for (name, filter, want) in [
        ("everything", all(), (COUNT_CAP, false)),
        ("todo", todo(), (COUNT_CAP, true)),
        ("done", done(), (1, true)),
        (
            "todo or done",
            ListFilter {
                statuses: vec![Status::Todo, Status::Done],
                ..Default::default()
            },
            (COUNT_CAP, false),
        ),
    ] {
        let got = page(store, &filter, None, 1);
        assert_eq!((got.total, got.total_exact), want, "{name}");
    }
    let got = page(store, &all(), None, 3);
    assert_eq!(numbers(&got.items), vec![cap + 1, cap, cap - 1]);
}

/// A search, through [`Store::search`] and [`StoreTx::search`] (which must agree):
/// `(numbers best first, total, exact)` and the page.
fn search<S: Store>(
    store: &mut S,
    terms: &SearchTerms,
    offset: usize,
    limit: usize,
) -> (Vec<i64>, usize, bool, SearchPage) {
    let page = store
        .search(terms, &Filter::default(), offset, limit)
        .unwrap();
    let in_read = read(store, |tx| {
        Ok(tx.search(terms, &Filter::default(), offset, limit)?)
    });
    let shown = |p: &SearchPage| {
        p.hits
            .iter()
            .map(|h| format!("{} {:?}", show(&h.ticket), h.snippet))
            .collect::<Vec<_>>()
    };
    assert_eq!(
        (shown(&page), page.total, page.total_exact),
        (shown(&in_read), in_read.total, in_read.total_exact),
        "Store::search and StoreTx::search of {terms:?}"
    );
    let tickets: Vec<TicketSummary> = page.hits.iter().map(|h| h.ticket.clone()).collect();
    (numbers(&tickets), page.total, page.total_exact, page)
}

fn sorted(mut v: Vec<i64>) -> Vec<i64> {
    v.sort_unstable();
    v
}

/// Search: every term must match (in any of title, description, comments), a phrase's
/// words in order; English stems; titles rank above descriptions above comments; the
/// snippet marks the match; deleted tickets are not found, changed text is found by its
/// new words only.
pub(super) fn search_check<S: Store + Clone>(cx: &mut Ctx<'_, S>) {
    let store = &mut cx.store;
    let task = project(store, "TASK");
    let t: Vec<Made> = [
        (
            "Zebra crossing signals",
            "Paint the road markings near school",
        ),
        ("Road paint order", "The zebra must be painted white again"),
        ("Quarterly report", "Numbers for the board meeting agenda"),
    ]
    .into_iter()
    .map(|(title, description)| {
        made(
            store,
            &task,
            Spec {
                description,
                ..Spec::new(title)
            },
        )
    })
    .collect();
    write(store, |tx| {
        tx.insert_comment(t[2].id, "bob", "Saw a zebra on the way to work", &at(1))?;
        tx.set_assignees(t[0].id, &["bob".into(), "Amy".into()], "lead", &at(1))?;
        Ok(())
    });
    let q = |phrases: &[&[&str]]| terms(phrases);
    let cases: Vec<(SearchTerms, Vec<i64>, bool)> = vec![
        // (terms, tickets, in this order (else any order))
        (q(&[&["zebra"]]), vec![1, 2, 3], true),
        (q(&[&["zebra"], &["road"]]), vec![1, 2], false),
        (q(&[&["zebra"], &["quarterly"]]), vec![3], true),
        (q(&[&["zebra"], &["unicorn"]]), vec![], true),
        (q(&[&["crossing", "signals"]]), vec![1], true),
        (q(&[&["signals", "crossing"]]), vec![], true),
        (q(&[&["zebra", "must"], &["paint"]]), vec![2], true),
        (q(&[&["painting"]]), vec![1, 2], false),
        (q(&[&["work"]]), vec![3], true),
        (q(&[&["the"]]), vec![1, 2, 3], false),
        (q(&[&["board"], &["meeting"]]), vec![3], true),
        (q(&[&["white", "again"]]), vec![2], true),
    ];
    for (terms, want, ordered) in &cases {
        let (got, total, exact, _) = search(store, terms, 0, 20);
        let got = if *ordered { got } else { sorted(got) };
        assert_eq!(got, *want, "search {terms:?}");
        assert_eq!((total, exact), (want.len(), true), "total of {terms:?}");
    }
    // Snippets mark the match; a hit's summary is the ticket's.
    let (_, _, _, page) = search(store, &q(&[&["zebra"]]), 0, 20);
    assert_eq!(page.hits[0].snippet, "**Zebra** crossing signals");
    for hit in &page.hits {
        assert!(
            hit.snippet.to_lowercase().contains("**zebra**"),
            "{}: {:?}",
            hit.ticket.number,
            hit.snippet
        );
    }
    let first = &page.hits[0].ticket;
    assert_eq!(
        (
            first.title.as_str(),
            first.status,
            first.assignees.clone(),
            first.updated_at.as_str()
        ),
        (
            "Zebra crossing signals",
            Status::Backlog,
            vec!["Amy".to_string(), "bob".to_string()],
            at(0).as_str()
        )
    );
    // Deleted: not found. Changed: found by the new words, not the old.
    write(store, |tx| {
        let deleted = TicketUpdate {
            deleted: true,
            ..Default::default()
        };
        tx.update_ticket(t[0].id, &deleted, "alice", &at(2))?;
        let renamed = TicketUpdate {
            title: Some("Giraffe census".into()),
            ..Default::default()
        };
        tx.update_ticket(t[2].id, &renamed, "alice", &at(2))?;
        let described = TicketUpdate {
            description: Some("Nothing about stripes".into()),
            ..Default::default()
        };
        tx.update_ticket(t[1].id, &described, "alice", &at(2))?;
        tx.insert_comment(t[1].id, "carl", "a quokka was here", &at(3))?;
        Ok(())
    });
    for (terms, want) in [
        (q(&[&["zebra"]]), vec![3]),
        (q(&[&["signals"]]), vec![]),
        (q(&[&["giraffe"]]), vec![3]),
        (q(&[&["quarterly"]]), vec![]),
        (q(&[&["white"]]), vec![]),
        (q(&[&["stripes"]]), vec![2]),
        (q(&[&["quokka"]]), vec![2]),
        (q(&[&["road"]]), vec![2]),
    ] {
        let (got, total, _, _) = search(store, &terms, 0, 20);
        assert_eq!(
            (got, total),
            (want.clone(), want.len()),
            "after changes: {terms:?}"
        );
    }
}

/// Search pages by offset through one order: titles first, then descriptions, then
/// comments, equal ranks oldest first; the total on every page, past the end too.
pub(super) fn search_paging<S: Store + Clone>(cx: &mut Ctx<'_, S>) {
    let store = &mut cx.store;
    let task = project(store, "TASK");
    for _ in 0..5 {
        made(store, &task, Spec::new("Walrus tusk"));
    }
    made(
        store,
        &task,
        Spec {
            description: "About a walrus",
            ..Spec::new("Sixth")
        },
    );
    let seventh = made(store, &task, Spec::new("Seventh"));
    made(store, &task, Spec::new("Nothing to see"));
    write(store, |tx| {
        tx.insert_comment(seventh.id, "amy", "a walrus in the comments", &at(1))?;
        Ok(())
    });
    let walrus = terms(&[&["walrus"]]);
    let (all, total, exact, _) = search(store, &walrus, 0, 20);
    assert_eq!((all, total, exact), (vec![1, 2, 3, 4, 5, 6, 7], 7, true));
    for (offset, limit, want) in [
        (0, 2, vec![1, 2]),
        (2, 2, vec![3, 4]),
        (4, 2, vec![5, 6]),
        (6, 2, vec![7]),
        (3, 3, vec![4, 5, 6]),
        (7, 2, vec![]),
        (100, 5, vec![]),
    ] {
        let (got, total, exact, _) = search(store, &walrus, offset, limit);
        assert_eq!(
            (got, total, exact),
            (want, 7, true),
            "offset {offset}, limit {limit}"
        );
    }
}
