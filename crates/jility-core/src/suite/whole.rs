//! [`Store::whole_tickets`]: a ticket whole, by number or UUID, as of one snapshot, the
//! same as [`whole_ticket`] (the primitives in a read transaction) on every path a store
//! takes.

use super::{Ctx, Made, Spec, assert_same, at, made, make, project, read, show, write};
use crate::model::{Change, Comment, CommitLink, Status, TicketRef};
use crate::store::{
    NewChange, Project, Store, TicketLookup, TicketRow, TicketUpdate, WHOLE_CHANGES,
    WHOLE_COMMENTS, WholeTicket, wait, whole_ticket,
};

fn number(key: Option<&str>, number: i64) -> TicketLookup {
    TicketLookup::Number {
        key: key.map(str::to_string),
        number,
    }
}

/// `lookups` read with the primitives in one read transaction: what
/// [`Store::whole_tickets`] must answer.
fn reference<S: Store>(store: &mut S, lookups: &[TicketLookup]) -> Vec<Option<WholeTicket>> {
    read(store, |tx| {
        lookups
            .iter()
            .map(|lookup| whole_ticket(tx, lookup))
            .collect()
    })
}

/// `whole_tickets(lookups)` equals [`reference`], now and after the store settled (its
/// fast path, if it has one); returns what it answered.
fn same_as_reference<S: Store + Clone>(
    cx: &mut Ctx<'_, S>,
    lookups: &[TicketLookup],
    what: &str,
) -> Vec<Option<WholeTicket>> {
    let want = reference(&mut cx.store, lookups);
    let got = wait(cx.store.whole_tickets(lookups)).unwrap();
    assert_same(
        &got,
        &want,
        &format!("{what}: whole_tickets vs whole_ticket"),
    );
    cx.settle();
    let again = wait(cx.store.whole_tickets(lookups)).unwrap();
    assert_same(
        &again,
        &want,
        &format!("{what}: whole_tickets once the store settled"),
    );
    // Each lookup alone answers as in the batch.
    for (lookup, want) in lookups.iter().zip(&want) {
        let alone = wait(cx.store.whole_tickets(std::slice::from_ref(lookup))).unwrap();
        assert_same(&alone, &[want], &format!("{what}: {lookup:?} alone"));
    }
    got
}

fn row_ref(row: &TicketRow) -> TicketRef {
    row.as_ref()
}

/// The ticket of the whole-ticket checks and everything around it.
struct Scene {
    task: Project,
    main: Made,
    parent: Made,
    epic: Made,
    /// Live tickets the main one depends on (TASK-4, OPS-1) and one deleted (TASK-5).
    on_live: Made,
    on_ops: Made,
    on_deleted: Made,
    /// A live ticket depending on the main one (TASK-6) and a deleted one (TASK-7).
    dependent: Made,
    dependent_deleted: Made,
    comments: Vec<Comment>,
}

/// TASK-1 an epic, TASK-2 a parent, TASK-3 the ticket (parent TASK-2, epic TASK-1, two
/// assignees, three labels, three comments, two commits, changes), depending on TASK-4,
/// TASK-5 (deleted) and OPS-1, depended on by TASK-6 and TASK-7 (deleted).
fn scene<S: Store>(store: &mut S) -> Scene {
    let task = project(store, "TASK");
    let ops = project(store, "OPS");
    let epic = made(
        store,
        &task,
        Spec {
            status: Status::InProgress,
            ..Spec::new("The epic")
        },
    );
    let parent = made(
        store,
        &task,
        Spec {
            status: Status::Todo,
            ..Spec::new("The parent")
        },
    );
    let main = made(
        store,
        &task,
        Spec {
            description: "## Context\n\nUsers log in with a password.\n",
            status: Status::Review,
            points: Some(5),
            parent: Some(parent.id),
            epic: Some(epic.id),
            actor: "carol",
            at: at(10),
            ..Spec::new("Implement the login page")
        },
    );
    let on_live = made(store, &task, Spec::new("Live prerequisite"));
    let on_deleted = made(store, &task, Spec::new("Deleted prerequisite"));
    let dependent = made(
        store,
        &task,
        Spec {
            status: Status::Blocked,
            ..Spec::new("Waiting for it")
        },
    );
    let dependent_deleted = made(store, &task, Spec::new("Deleted follower"));
    let on_ops = made(
        store,
        &ops,
        Spec {
            status: Status::Done,
            ..Spec::new("Ops prerequisite")
        },
    );
    let comments = write(store, |tx| {
        tx.set_assignees(main.id, &["dave".into(), "Carol".into()], "carol", &at(11))?;
        tx.set_assignees(
            main.id,
            &["dave".into(), "Carol".into(), "amy".into()],
            "carol",
            &at(12),
        )?;
        tx.set_labels(
            main.id,
            &["frontend".into(), "auth".into(), "Urgent".into()],
        )?;
        for on in [&on_ops, &on_deleted, &on_live] {
            tx.add_dependency(main.id, on.id, "carol", &at(13))?;
        }
        for by in [&dependent_deleted, &dependent] {
            tx.add_dependency(by.id, main.id, "carol", &at(13))?;
        }
        tx.link_commit(
            main.id,
            "abcdef1234",
            Some("Add the form"),
            "carol",
            &at(14),
        )?;
        tx.link_commit(main.id, "0badc0de", None, "dave", &at(15))?;
        let mut comments = Vec::new();
        for (n, text) in ["First remark", "Second remark", "Third remark"]
            .into_iter()
            .enumerate()
        {
            comments.push(tx.insert_comment(main.id, "erin", text, &at(16 + n as u32))?);
        }
        for (n, kind) in ["created", "description_changed", "status_changed"]
            .into_iter()
            .enumerate()
        {
            tx.record_change(
                main.id,
                &NewChange {
                    change_type: kind,
                    old_value: (n > 0).then_some("before"),
                    new_value: Some("after"),
                    detail: (n == 1).then_some("created"),
                    message: (n == 2).then_some("moving on"),
                    actor: "carol",
                    at: &at(20 + n as u32),
                },
            )?;
        }
        let deleted = TicketUpdate {
            deleted: true,
            ..Default::default()
        };
        tx.update_ticket(on_deleted.id, &deleted, "carol", &at(30))?;
        tx.update_ticket(dependent_deleted.id, &deleted, "carol", &at(30))?;
        Ok(comments)
    });
    Scene {
        task,
        main,
        parent,
        epic,
        on_live,
        on_ops,
        on_deleted,
        dependent,
        dependent_deleted,
        comments,
    }
}

/// TASK-3 whole, every field exact.
fn expected_main(s: &Scene) -> WholeTicket {
    let r = |number: &str, title: &str, status| TicketRef {
        number: number.into(),
        title: title.into(),
        status,
    };
    let change = |kind: &str, n: usize| Change {
        change_type: kind.into(),
        old_value: (n > 0).then(|| "before".into()),
        new_value: Some("after".into()),
        detail: (n == 1).then(|| "created".into()),
        message: (n == 2).then(|| "moving on".into()),
        changed_by: "carol".into(),
        changed_at: at(20 + n as u32),
    };
    WholeTicket {
        row: TicketRow {
            id: s.main.id,
            uuid: s.main.uuid.clone(),
            project_key: s.task.key.clone(),
            number: 3,
            title: "Implement the login page".into(),
            description: "## Context\n\nUsers log in with a password.\n".into(),
            status: Status::Review,
            story_points: Some(5),
            parent_id: Some(s.parent.id),
            epic_id: Some(s.epic.id),
            created_by: "carol".into(),
            created_at: at(10),
            updated_by: "carol".into(),
            updated_at: at(10),
            deleted_at: None,
            kind: crate::model::Kind::Ticket,
            sprint_id: None,
            sprint: None,
        },
        assignees: vec!["Carol".into(), "dave".into(), "amy".into()],
        labels: vec!["Urgent".into(), "auth".into(), "frontend".into()],
        parent: Some(r("TASK-2", "The parent", Status::Todo)),
        epic: Some(r("TASK-1", "The epic", Status::InProgress)),
        comments: s.comments.clone(),
        comment_count: 3,
        dependencies: vec![
            r("TASK-4", "Live prerequisite", Status::Backlog),
            r("OPS-1", "Ops prerequisite", Status::Done),
        ],
        dependents: vec![r("TASK-6", "Waiting for it", Status::Blocked)],
        commits: vec![
            CommitLink {
                hash: "abcdef1234".into(),
                message: Some("Add the form".into()),
                linked_at: at(14),
                linked_by: "carol".into(),
            },
            CommitLink {
                hash: "0badc0de".into(),
                message: None,
                linked_at: at(15),
                linked_by: "dave".into(),
            },
        ],
        changes: vec![
            change("status_changed", 2),
            change("description_changed", 1),
            change("created", 0),
        ],
    }
}

/// A ticket whole by number: its row, assignees (in the order assigned), labels (byte
/// order), parent and epic, the comments, the live tickets it depends on and that depend
/// on it (in project, number order), its commits and changes (newest first).
pub(super) fn one_ticket<S: Store + Clone>(cx: &mut Ctx<'_, S>) {
    let s = scene(&mut cx.store);
    let want = expected_main(&s);
    let got = same_as_reference(cx, &[number(Some("TASK"), 3)], "TASK-3");
    assert_same(&got, &[Some(&want)], "TASK-3 whole");
    // A neighbour's later change shows in its reference, and a later write to the ticket
    // shows at once (even where the store keeps tickets' contexts).
    write(&mut cx.store, |tx| {
        let update = TicketUpdate {
            title: Some("Renamed prerequisite".into()),
            status: Some(Status::Done),
            ..Default::default()
        };
        tx.update_ticket(s.on_live.id, &update, "dave", &at(40))?;
        tx.insert_comment(s.main.id, "frank", "Fourth remark", &at(41))?;
        Ok(())
    });
    let got = same_as_reference(cx, &[number(Some("TASK"), 3)], "TASK-3 after writes");
    let got = got[0].as_ref().expect("TASK-3");
    assert_eq!(got.comment_count, 4);
    assert_eq!(
        got.comments.last().map(|c| c.content.as_str()),
        Some("Fourth remark")
    );
    assert_eq!(
        got.dependencies[0],
        TicketRef {
            number: "TASK-4".into(),
            title: "Renamed prerequisite".into(),
            status: Status::Done,
        }
    );
}

/// The lookups: by number in a named project and in the default one (no key), by UUID,
/// in another project; a number, key or UUID that names nothing is `None`; answers come
/// in the order of the lookups, repeats included.
pub(super) fn lookups<S: Store + Clone>(cx: &mut Ctx<'_, S>) {
    let s = scene(&mut cx.store);
    let want = expected_main(&s);
    let lookups = [
        number(Some("TASK"), 99),
        number(None, 3),
        TicketLookup::Uuid(s.main.uuid.clone()),
        number(Some("OPS"), 1),
        number(Some("NOPE"), 1),
        TicketLookup::Uuid(uuid::Uuid::new_v4().to_string()),
        number(Some("TASK"), 3),
        number(Some("OPS"), 3),
        number(Some("TASK"), 2),
    ];
    let got = same_as_reference(cx, &lookups, "the lookups");
    assert_eq!(got.len(), lookups.len());
    let found: Vec<Option<String>> = got
        .iter()
        .map(|w| w.as_ref().map(|w| w.row.display_number()))
        .collect();
    let some = |n: &str| Some(n.to_string());
    assert_eq!(
        found,
        vec![
            None,
            some("TASK-3"),
            some("TASK-3"),
            some("OPS-1"),
            None,
            None,
            some("TASK-3"),
            None,
            some("TASK-2")
        ]
    );
    for at in [1, 2, 6] {
        assert_same(&got[at], &Some(&want), &format!("lookup {:?}", lookups[at]));
    }
    // OPS-1: named as a dependency by TASK-3, in a project that is not the default.
    let ops = got[3].as_ref().expect("OPS-1");
    assert_eq!(ops.row.id, s.on_ops.id);
    assert_eq!(ops.row.project_key, "OPS");
    assert!(ops.dependencies.is_empty(), "{:?}", ops.dependencies);
    assert_eq!(
        ops.dependents,
        vec![TicketRef {
            number: "TASK-3".into(),
            title: "Implement the login page".into(),
            status: Status::Review,
        }]
    );
    // TASK-2: the parent knows nothing of its child.
    let parent = got[8].as_ref().expect("TASK-2");
    assert_eq!(
        (
            parent.parent.clone(),
            parent.epic.clone(),
            parent.comment_count
        ),
        (None, None, 0)
    );
    assert!(parent.dependencies.is_empty() && parent.dependents.is_empty());
}

/// A deleted ticket is returned, `deleted_at` set, with its parts; the live tickets it
/// names are its neighbours still. A ticket whose parent and epic were deleted still names
/// them (a reference to the row); deleted dependencies and dependents are left out.
pub(super) fn deleted<S: Store + Clone>(cx: &mut Ctx<'_, S>) {
    let s = scene(&mut cx.store);
    let lookups = [
        number(Some("TASK"), 5),
        TicketLookup::Uuid(s.dependent_deleted.uuid.clone()),
        number(Some("TASK"), 3),
    ];
    let got = same_as_reference(cx, &lookups, "deleted tickets");
    let gone = got[0].as_ref().expect("TASK-5, deleted");
    assert_eq!(gone.row.id, s.on_deleted.id);
    assert_eq!(gone.row.deleted_at.as_deref(), Some(at(30).as_str()));
    assert_eq!(
        (gone.row.updated_by.as_str(), gone.row.updated_at.as_str()),
        ("carol", at(30).as_str())
    );
    assert_eq!(
        gone.dependents
            .iter()
            .map(|r| r.number.as_str())
            .collect::<Vec<_>>(),
        vec!["TASK-3"],
        "a deleted ticket's live dependents"
    );
    let follower = got[1].as_ref().expect("TASK-7, deleted");
    assert_eq!(follower.row.number, 7);
    assert!(follower.row.deleted_at.is_some());
    assert_eq!(
        follower
            .dependencies
            .iter()
            .map(|r| r.number.as_str())
            .collect::<Vec<_>>(),
        vec!["TASK-3"]
    );
    // Delete the parent and the epic of TASK-3, and the live prerequisite.
    write(&mut cx.store, |tx| {
        let deleted = TicketUpdate {
            deleted: true,
            ..Default::default()
        };
        for gone in [&s.parent, &s.epic, &s.on_live, &s.dependent] {
            tx.update_ticket(gone.id, &deleted, "dave", &at(50))?;
        }
        Ok(())
    });
    let got = same_as_reference(cx, &lookups, "after deleting neighbours");
    let main = got[2].as_ref().expect("TASK-3");
    let parent = read(&mut cx.store, |tx| Ok(tx.ticket_by_id(s.parent.id)?)).expect("TASK-2");
    assert_eq!(main.parent, Some(row_ref(&parent)));
    assert_eq!(
        main.epic.as_ref().map(|e| e.number.as_str()),
        Some("TASK-1")
    );
    assert_eq!(
        main.dependencies
            .iter()
            .map(|r| r.number.as_str())
            .collect::<Vec<_>>(),
        vec!["OPS-1"]
    );
    assert!(main.dependents.is_empty(), "{:?}", main.dependents);
}

/// The newest [`WHOLE_COMMENTS`] comments, oldest first, with the count of all, and the
/// newest [`WHOLE_CHANGES`] changes, newest first.
pub(super) fn windows<S: Store + Clone>(cx: &mut Ctx<'_, S>) {
    let store = &mut cx.store;
    let task = project(store, "TASK");
    let ticket = made(store, &task, Spec::new("Busy"));
    let total_comments = WHOLE_COMMENTS + 5;
    let total_changes = WHOLE_CHANGES + 5;
    write(store, |tx| {
        for n in 0..total_comments {
            tx.insert_comment(ticket.id, "dave", &format!("note {n}"), &at(n as u32))?;
        }
        for n in 0..total_changes {
            tx.record_change(
                ticket.id,
                &NewChange {
                    change_type: "comment_added",
                    old_value: None,
                    new_value: Some(&format!("change {n}")),
                    detail: None,
                    message: None,
                    actor: "dave",
                    at: &at(n as u32),
                },
            )?;
        }
        Ok(())
    });
    let lookup = [number(Some("TASK"), 1)];
    let got = same_as_reference(cx, &lookup, "a busy ticket");
    let busy = got[0].as_ref().expect("TASK-1");
    assert_eq!(busy.comment_count, total_comments);
    let contents: Vec<&str> = busy.comments.iter().map(|c| c.content.as_str()).collect();
    let want: Vec<String> = (5..total_comments).map(|n| format!("note {n}")).collect();
    assert_eq!(
        contents,
        want.iter().map(String::as_str).collect::<Vec<_>>()
    );
    let changes: Vec<Option<&str>> = busy
        .changes
        .iter()
        .map(|c| c.new_value.as_deref())
        .collect();
    let want: Vec<String> = (5..total_changes)
        .rev()
        .map(|n| format!("change {n}"))
        .collect();
    assert_eq!(
        changes,
        want.iter().map(|s| Some(s.as_str())).collect::<Vec<_>>()
    );
    // One more comment: the window moves on by one.
    write(&mut cx.store, |tx| {
        tx.insert_comment(ticket.id, "erin", "the last word", &at(4000))?;
        Ok(())
    });
    let got = same_as_reference(cx, &lookup, "one more comment");
    let busy = got[0].as_ref().expect("TASK-1");
    assert_eq!(busy.comment_count, total_comments + 1);
    assert_eq!(busy.comments.len(), WHOLE_COMMENTS);
    assert_eq!(busy.comments[0].content, "note 6");
    assert_eq!(busy.comments[WHOLE_COMMENTS - 1].content, "the last word");
}

/// [`whole_ticket`] in the write that made the ticket sees what the write did, and equals
/// what [`Store::whole_tickets`] answers once it is committed.
pub(super) fn in_its_write<S: Store + Clone>(cx: &mut Ctx<'_, S>) {
    let store = &mut cx.store;
    let task = project(store, "TASK");
    let before = made(store, &task, Spec::new("Before"));
    let (inside, uuid) = write(store, |tx| {
        let new = make(
            tx,
            &task,
            &Spec {
                description: "Made and read in one write",
                parent: Some(before.id),
                at: at(7),
                ..Spec::new("Fresh")
            },
        )?;
        tx.set_assignees(new.id, &["amy".into()], "alice", &at(7))?;
        tx.set_labels(new.id, &["new".into()])?;
        tx.add_dependency(new.id, before.id, "alice", &at(7))?;
        tx.insert_comment(new.id, "alice", "first!", &at(8))?;
        tx.link_commit(new.id, "cafe", None, "alice", &at(8))?;
        let whole = whole_ticket(tx, &TicketLookup::Uuid(new.uuid.clone()))?;
        Ok((whole, new.uuid))
    });
    let inside = inside.expect("the new ticket, inside its write");
    assert_eq!(
        (
            inside.assignees.clone(),
            inside.labels.clone(),
            inside.comment_count,
            inside.commits.len(),
            inside.dependencies.len(),
            inside.parent.as_ref().map(|p| p.number.clone()),
        ),
        (
            vec!["amy".to_string()],
            vec!["new".to_string()],
            1,
            1,
            1,
            Some("TASK-1".to_string())
        )
    );
    let got = same_as_reference(cx, &[TicketLookup::Uuid(uuid)], "committed");
    assert_eq!(show(&got[0]), show(&Some(inside)));
}
