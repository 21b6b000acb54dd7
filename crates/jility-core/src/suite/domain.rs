//! The domain ([`crate::Tracker`]) on the store: what its reads show, its numbering, and its
//! cursors over listings and search.

use super::ACTOR;
use super::{Ctx, assert_same};
use crate::errors;
use crate::params::{
    AddComment, BatchItem, CreateBatch, CreateTicket, Dependency, EditTicket, LinkCommit,
    ListTickets, SearchTickets, StatusName,
};
use crate::store::{Store, TicketLookup, wait};

fn create(title: &str) -> CreateTicket {
    CreateTicket {
        title: title.to_string(),
        ..Default::default()
    }
}

/// `get_ticket` shows what [`Store::whole_tickets`] answers, whichever way the ticket is
/// named (`KEY-N`, lower case, a bare number, `#N`, UUID); a deleted or missing ticket is
/// `not_found`, saying which.
pub(super) fn reads<S: Store + Clone>(cx: &mut Ctx<'_, S>) {
    let mut t = cx.tracker();
    t.init("TASK", "Demo", false).unwrap();
    let first = t
        .create_ticket(
            "alice",
            CreateTicket {
                title: "Implement login page".into(),
                description: Some("## Context\n\nUsers log in.\n".into()),
                story_points: Some(5),
                assignees: vec!["dave".into(), "Carol".into()],
                labels: vec!["frontend".into(), "auth".into()],
                ..Default::default()
            },
        )
        .unwrap()
        .ticket;
    assert_eq!(first.number, "TASK-1");
    assert_eq!(
        first.assignees,
        vec!["Carol".to_string(), "dave".to_string()]
    );
    assert_eq!(
        first.labels,
        vec!["auth".to_string(), "frontend".to_string()]
    );
    t.create_ticket(
        "bob",
        CreateTicket {
            status: Some(StatusName("todo".into())),
            kind: Some(crate::model::Kind::Epic),
            ..create("Write the docs")
        },
    )
    .unwrap();
    t.create_ticket(
        "alice",
        CreateTicket {
            parent_id: Some("TASK-1".into()),
            epic_id: Some("TASK-2".into()),
            ..create("Set up CI")
        },
    )
    .unwrap();
    for text in ["First remark", "Second remark"] {
        t.add_comment(
            "carol",
            AddComment {
                ticket_id: "TASK-1".into(),
                content: text.into(),
            },
        )
        .unwrap();
    }
    t.link_commit(
        "alice",
        LinkCommit {
            ticket_id: "TASK-1".into(),
            commit_hash: "ABCDEF1234".into(),
            commit_message: Some("Add the form".into()),
        },
    )
    .unwrap();
    for ticket in ["TASK-2", "TASK-3"] {
        t.add_dependency(
            "alice",
            Dependency {
                ticket_id: ticket.into(),
                depends_on: "TASK-1".into(),
            },
        )
        .unwrap();
    }
    let detail = t.get_ticket("TASK-1").unwrap();
    let upper = first.id.to_uppercase();
    for name in ["task-1", "1", "#1", first.id.as_str(), upper.as_str()] {
        assert_same(&t.get_ticket(name).unwrap(), &detail, name);
    }
    let whole = wait(
        cx.store
            .whole_tickets(&[TicketLookup::Uuid(first.id.clone())]),
    )
    .unwrap()
    .pop()
    .flatten()
    .expect("TASK-1 whole");
    assert_eq!(detail.ticket.id, whole.row.uuid);
    assert_eq!(detail.ticket.title, "Implement login page");
    assert_eq!(detail.ticket.story_points, Some(5));
    assert_eq!(detail.ticket.assignees, whole.assignees);
    assert_eq!(
        detail.ticket.assignees,
        vec!["Carol".to_string(), "dave".to_string()]
    );
    assert_eq!(detail.ticket.labels, whole.labels);
    assert_eq!(detail.comment_count, 2);
    assert_same(&detail.comments, &whole.comments, "comments");
    assert_eq!(
        detail
            .comments
            .iter()
            .map(|c| c.content.as_str())
            .collect::<Vec<_>>(),
        vec!["First remark", "Second remark"]
    );
    assert_eq!(detail.dependencies, whole.dependencies);
    assert_eq!(
        detail
            .dependents
            .iter()
            .map(|r| r.number.as_str())
            .collect::<Vec<_>>(),
        vec!["TASK-2", "TASK-3"]
    );
    assert_same(&detail.linked_commits, &whole.commits, "commits");
    assert_eq!(detail.linked_commits[0].hash, "abcdef1234");
    assert_eq!(
        detail
            .recent_changes
            .iter()
            .map(|c| c.change_type.as_str())
            .collect::<Vec<_>>(),
        whole
            .changes
            .iter()
            .map(|c| c.change_type.as_str())
            .collect::<Vec<_>>()
    );
    assert_eq!(
        detail.recent_changes.last().map(|c| c.change_type.as_str()),
        Some("created")
    );
    let third = t.get_ticket("TASK-3").unwrap().ticket;
    assert_eq!(
        (third.parent.as_deref(), third.epic.as_deref()),
        (Some("TASK-1"), Some("TASK-2"))
    );
    // Deleted and missing tickets. An epic goes once it gathers no ticket.
    let refused = t.delete("alice", "TASK-2").unwrap_err();
    assert_eq!(refused.code, errors::INVALID_INPUT, "{refused:?}");
    t.edit(
        "alice",
        EditTicket {
            ticket_id: "TASK-3".into(),
            epic_id: Some(None),
            ..Default::default()
        },
    )
    .unwrap();
    t.delete("alice", "TASK-2").unwrap();
    let err = t.get_ticket("TASK-2").unwrap_err();
    assert_eq!(
        (err.code, err.message.as_str()),
        (errors::NOT_FOUND, "Ticket TASK-2 was deleted")
    );
    for missing in ["TASK-99", "NOPE-1"] {
        let err = t.get_ticket(missing).unwrap_err();
        assert_eq!(
            (err.code, err.message),
            (errors::NOT_FOUND, format!("Ticket {missing} not found"))
        );
    }
    assert_eq!(
        t.get_ticket("TASK-1")
            .unwrap()
            .dependents
            .iter()
            .map(|r| r.number.as_str())
            .collect::<Vec<_>>(),
        vec!["TASK-3"]
    );
}

/// The domain's numbers: consecutive, a deleted ticket's never given again, none taken by
/// a creation that failed (a single ticket or a batch).
pub(super) fn numbering<S: Store + Clone>(cx: &mut Ctx<'_, S>) {
    let mut t = cx.tracker();
    t.init("TASK", "Demo", false).unwrap();
    let number = |t: &mut crate::Tracker<S>, title: &str| {
        t.create_ticket("alice", create(title))
            .unwrap()
            .ticket
            .number
    };
    assert_eq!(number(&mut t, "One"), "TASK-1");
    assert_eq!(number(&mut t, "Two"), "TASK-2");
    assert_eq!(number(&mut t, "Three"), "TASK-3");
    t.delete("alice", "TASK-3").unwrap();
    assert_eq!(number(&mut t, "Four"), "TASK-4");
    let err = t
        .create_ticket(
            "alice",
            CreateTicket {
                parent_id: Some("TASK-99".into()),
                ..create("Orphan")
            },
        )
        .unwrap_err();
    assert_eq!(err.code, errors::NOT_FOUND);
    let item = |title: &str, depends_on: &[&str]| BatchItem {
        title: title.into(),
        description: None,
        story_points: None,
        assignees: vec![],
        labels: vec!["batch".into()],
        depends_on: depends_on.iter().map(|d| d.to_string()).collect(),
        kind: None,
    };
    let err = t
        .create_batch(
            "alice",
            CreateBatch {
                tickets: vec![
                    item("Batch one", &[]),
                    item("Batch two", &["#1"]),
                    item("Batch three", &["TASK-99"]),
                ],
                parent_id: None,
            },
        )
        .unwrap_err();
    assert_eq!(err.code, errors::NOT_FOUND, "{err:?}");
    assert_eq!(number(&mut t, "Five"), "TASK-5");
    let listed = t.list(ACTOR, &ListTickets::default()).unwrap();
    assert_eq!(
        listed
            .data
            .tickets
            .iter()
            .map(|s| s.number.as_str())
            .collect::<Vec<_>>(),
        vec!["TASK-5", "TASK-4", "TASK-2", "TASK-1"]
    );
    assert_eq!((listed.page.total, listed.page.total_exact), (4, None));
    let batch = t
        .create_batch(
            "alice",
            CreateBatch {
                tickets: vec![item("Batch one", &[]), item("Batch two", &["#1"])],
                parent_id: None,
            },
        )
        .unwrap();
    assert_eq!(
        batch
            .tickets
            .iter()
            .map(|b| (b.number.as_str(), b.depends_on.clone()))
            .collect::<Vec<_>>(),
        vec![("TASK-6", vec![]), ("TASK-7", vec!["TASK-6".to_string()])]
    );
}

/// The domain's cursors walk a listing and a search page by page to the end, with the
/// total on each page; search terms come from what the user typed (punctuation is no
/// syntax, quotes make a phrase).
pub(super) fn cursors<S: Store + Clone>(cx: &mut Ctx<'_, S>) {
    let mut t = cx.tracker();
    t.init("TASK", "Demo", false).unwrap();
    for n in 1..=7 {
        t.create_ticket("alice", create(&format!("Ticket {n} about llamas")))
            .unwrap();
    }
    t.create_ticket("alice", create("Unrelated")).unwrap();
    let mut cursor = None;
    let mut pages = Vec::new();
    loop {
        let page = t
            .list(
                ACTOR,
                &ListTickets {
                    limit: Some(3),
                    cursor: cursor.clone(),
                    ..Default::default()
                },
            )
            .unwrap();
        assert_eq!((page.page.total, page.page.total_exact), (8, None));
        pages.push(
            page.data
                .tickets
                .iter()
                .map(|s| s.number.clone())
                .collect::<Vec<_>>(),
        );
        cursor = page.page.next_cursor;
        if cursor.is_none() || pages.len() > 5 {
            break;
        }
    }
    let want = |ns: &[u32]| ns.iter().map(|n| format!("TASK-{n}")).collect::<Vec<_>>();
    assert_eq!(
        pages,
        vec![want(&[8, 7, 6]), want(&[5, 4, 3]), want(&[2, 1])]
    );
    let mut search = |query: &str, limit: i64| {
        let mut cursor = None;
        let mut pages = Vec::new();
        loop {
            let page = t
                .search(
                    ACTOR,
                    &SearchTickets {
                        query: query.into(),
                        limit: Some(limit),
                        cursor: cursor.clone(),
                        sprint: None,
                    },
                )
                .unwrap();
            pages.push((
                page.data
                    .hits
                    .iter()
                    .map(|h| h.number.clone())
                    .collect::<Vec<_>>(),
                page.page.total,
            ));
            cursor = page.page.next_cursor;
            if cursor.is_none() || pages.len() > 5 {
                break pages;
            }
        }
    };
    assert_eq!(
        search("llamas", 3),
        vec![
            (want(&[1, 2, 3]), 7),
            (want(&[4, 5, 6]), 7),
            (want(&[7]), 7)
        ]
    );
    assert_eq!(
        search("LLAMAS & | ! ( :* <->", 7),
        vec![(want(&[1, 2, 3, 4, 5, 6, 7]), 7)]
    );
    assert_eq!(
        search("\"about llamas\" ticket", 10).first().map(|p| p.1),
        Some(7)
    );
    assert_eq!(search("\"llamas about\"", 10), vec![(vec![], 0)]);
    assert_eq!(search("ticket-4", 10), vec![(want(&[4]), 1)]);
}
