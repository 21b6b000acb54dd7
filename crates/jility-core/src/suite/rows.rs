//! Projects, numbering, ticket rows, references, and a write that fails.

use mcp_common_core::ToolError;

use super::{Ctx, Spec, assert_same, at, made, make, project, read, terms, write};
use crate::errors;
use crate::model::{Status, TicketRef};
use crate::store::{
    Filter, ListFilter, NewChange, Project, Store, StoreError, TicketLookup, TicketRow,
    TicketUpdate, wait,
};

/// A store with no project: `default_project` is [`StoreError::NoProject`], a ticket of
/// the default project cannot be looked up (the error says why), a keyed lookup finds
/// nothing, listings and search are empty, and the domain cannot create a ticket.
pub(super) fn no_project<S: Store + Clone>(cx: &mut Ctx<'_, S>) {
    let store = &mut cx.store;
    read(store, |tx| {
        let found = tx.default_project();
        assert!(
            matches!(found, Err(StoreError::NoProject)),
            "default_project of a store with no project: {found:?}"
        );
        Ok(())
    });
    assert_eq!(read(store, |tx| Ok(tx.projects()?)), Vec::<Project>::new());
    let err = wait(store.whole_tickets(&[TicketLookup::Number {
        key: None,
        number: 1,
    }]))
    .expect_err("a ticket of the default project, with no project");
    let want = ToolError::from(StoreError::NoProject);
    assert_eq!((err.code, &err.message), (want.code, &want.message));
    let found = wait(store.whole_tickets(&[
        TicketLookup::Number {
            key: Some("TASK".into()),
            number: 1,
        },
        TicketLookup::Uuid(uuid::Uuid::new_v4().to_string()),
    ]))
    .unwrap();
    assert_eq!(found.len(), 2);
    assert!(found.iter().all(Option::is_none), "{found:?}");
    let page = read(store, |tx| Ok(tx.list(&ListFilter::default(), None, 10)?));
    assert_eq!(
        (
            page.items.len(),
            page.total,
            page.total_exact,
            page.next_after
        ),
        (0, 0, true, None)
    );
    let hits = store
        .search(&terms(&[&["anything"]]), &Filter::default(), 0, 10)
        .unwrap();
    assert_eq!((hits.hits.len(), hits.total), (0, 0));
    let err = cx
        .tracker()
        .create_ticket(
            "alice",
            crate::params::CreateTicket {
                title: "Nowhere to go".into(),
                ..Default::default()
            },
        )
        .expect_err("a ticket created with no project");
    assert_eq!((err.code, &err.message), (want.code, &want.message));
}

/// Projects in the order they were made, the first the default; a key changes while the
/// project never had a ticket (a number taken counts), and not after.
pub(super) fn projects<S: Store + Clone>(cx: &mut Ctx<'_, S>) {
    let store = &mut cx.store;
    let task = project(store, "TASK");
    assert_eq!(
        (task.key.as_str(), task.name.as_str()),
        ("TASK", "TASK project")
    );
    let ops = project(store, "OPS");
    assert_ne!(task.id, ops.id);
    assert_eq!(read(store, |tx| Ok(tx.default_project()?)), task);
    assert_eq!(
        read(store, |tx| Ok(tx.projects()?)),
        vec![task.clone(), ops.clone()]
    );
    assert!(write(store, |tx| Ok(tx.rekey_project(task.id, "WORK")?)));
    let work = Project {
        key: "WORK".into(),
        ..task.clone()
    };
    assert_eq!(read(store, |tx| Ok(tx.default_project()?)), work);
    assert_eq!(write(store, |tx| Ok(tx.allocate_number(task.id)?)), 1);
    assert!(!write(store, |tx| Ok(tx.rekey_project(task.id, "LATE")?)));
    // The other project never had a number: it may still change its key.
    assert!(write(store, |tx| Ok(tx.rekey_project(ops.id, "OPS2")?)));
    assert_eq!(
        read(store, |tx| Ok(tx.projects()?)),
        vec![
            work,
            Project {
                key: "OPS2".into(),
                ..ops
            }
        ]
    );
}

/// Numbers are consecutive within a project, across transactions and per project; a
/// rolled-back write gives its number back (no gap), a deleted ticket keeps its number
/// (never given again).
pub(super) fn numbering<S: Store + Clone>(cx: &mut Ctx<'_, S>) {
    let store = &mut cx.store;
    let task = project(store, "TASK");
    let ops = project(store, "OPS");
    let first = write(store, |tx| {
        Ok(vec![
            tx.allocate_number(task.id)?,
            tx.allocate_number(task.id)?,
            tx.allocate_number(ops.id)?,
        ])
    });
    assert_eq!(first, vec![1, 2, 1]);
    let refused = store.write(|tx| {
        assert_eq!(tx.allocate_number(task.id)?, 3);
        Err::<(), _>(ToolError::new(errors::INVALID_INPUT, "rolled back"))
    });
    assert!(refused.is_err());
    assert_eq!(write(store, |tx| Ok(tx.allocate_number(task.id)?)), 3);
    // Tickets: a deleted one keeps its number, and the next ticket gets a new one.
    let four = made(store, &task, Spec::new("Four"));
    assert_eq!(four.number, 4);
    write(store, |tx| {
        let deleted = TicketUpdate {
            deleted: true,
            ..Default::default()
        };
        Ok(tx.update_ticket(four.id, &deleted, "alice", &at(1))?)
    });
    let five = made(store, &task, Spec::new("Five"));
    assert_eq!(five.number, 5);
    let numbers = read(store, |tx| {
        Ok((
            tx.ticket_by_number("TASK", 4)?
                .map(|r| (r.id, r.deleted_at)),
            tx.ticket_by_number("TASK", 5)?.map(|r| r.id),
        ))
    });
    assert_eq!(
        numbers,
        (Some((four.id, Some(at(1)))), Some(five.id)),
        "TASK-4 (deleted) and TASK-5"
    );
    // A number for a project that does not exist is an error.
    assert!(
        store
            .write(|tx| Ok(tx.allocate_number(task.id + ops.id + 1000)?))
            .is_err()
    );
}

/// A ticket row as inserted, by number, UUID and id; updated field by field (`None`
/// leaves a field, `Some(None)` clears it); deleted (still found, `deleted_at` set).
pub(super) fn ticket_rows<S: Store + Clone>(cx: &mut Ctx<'_, S>) {
    let store = &mut cx.store;
    let task = project(store, "TASK");
    let epic = made(store, &task, Spec::new("The epic"));
    let parent = made(store, &task, Spec::new("The parent"));
    let description = "## Context\n\nÜnïcode — ✓ and \"quotes\" and 'apostrophes'\n\n- a\n- b\n";
    let ticket = made(
        store,
        &task,
        Spec {
            description,
            status: Status::Todo,
            points: Some(8),
            parent: Some(parent.id),
            epic: Some(epic.id),
            actor: "carol",
            at: at(5),
            ..Spec::new("Implement the login page")
        },
    );
    assert_eq!(ticket.number, 3);
    assert!(uuid::Uuid::parse_str(&ticket.uuid).is_ok());
    let mut want = TicketRow {
        id: ticket.id,
        uuid: ticket.uuid.clone(),
        project_key: "TASK".into(),
        number: 3,
        title: "Implement the login page".into(),
        description: description.into(),
        status: Status::Todo,
        story_points: Some(8),
        parent_id: Some(parent.id),
        epic_id: Some(epic.id),
        created_by: "carol".into(),
        created_at: at(5),
        updated_by: "carol".into(),
        updated_at: at(5),
        deleted_at: None,
        kind: crate::model::Kind::Ticket,
        sprint_id: None,
        sprint: None,
    };
    let check = |store: &mut S, want: &TicketRow, what: &str| {
        let (by_number, by_uuid, by_id) = read(store, |tx| {
            Ok((
                tx.ticket_by_number("TASK", 3)?,
                tx.ticket_by_uuid(&ticket.uuid)?,
                tx.ticket_by_id(ticket.id)?,
            ))
        });
        assert_same(&by_number, &Some(want), &format!("{what}, by number"));
        assert_same(&by_uuid, &Some(want), &format!("{what}, by UUID"));
        assert_same(&by_id, &Some(want), &format!("{what}, by id"));
    };
    check(store, &want, "as inserted");
    assert_eq!(want.display_number(), "TASK-3");
    let nothing = read(store, |tx| {
        Ok((
            tx.ticket_by_number("TASK", 4)?.is_some(),
            tx.ticket_by_number("NOPE", 3)?.is_some(),
            tx.ticket_by_uuid(&uuid::Uuid::new_v4().to_string())?
                .is_some(),
            tx.ticket_by_id(ticket.id + 1_000_000)?.is_some(),
        ))
    });
    assert_eq!(nothing, (false, false, false, false), "lookups of nothing");

    write(store, |tx| {
        let update = TicketUpdate {
            title: Some("Implement the sign-in page".into()),
            status: Some(Status::InProgress),
            story_points: Some(None),
            parent_id: Some(None),
            ..Default::default()
        };
        Ok(tx.update_ticket(ticket.id, &update, "dave", &at(6))?)
    });
    want.title = "Implement the sign-in page".into();
    want.status = Status::InProgress;
    want.story_points = None;
    want.parent_id = None;
    want.updated_by = "dave".into();
    want.updated_at = at(6);
    check(store, &want, "after an update");
    write(store, |tx| {
        let update = TicketUpdate {
            description: Some("Short now.".into()),
            story_points: Some(Some(13)),
            parent_id: Some(Some(epic.id)),
            epic_id: Some(None),
            ..Default::default()
        };
        Ok(tx.update_ticket(ticket.id, &update, "erin", &at(7))?)
    });
    want.description = "Short now.".into();
    want.story_points = Some(13);
    want.parent_id = Some(epic.id);
    want.epic_id = None;
    want.updated_by = "erin".into();
    want.updated_at = at(7);
    check(store, &want, "after a second update");
    // An update of no field still says who touched the ticket, and when.
    write(store, |tx| {
        Ok(tx.update_ticket(ticket.id, &TicketUpdate::default(), "frank", &at(8))?)
    });
    want.updated_by = "frank".into();
    want.updated_at = at(8);
    check(store, &want, "after an update of no field");
    write(store, |tx| {
        let update = TicketUpdate {
            deleted: true,
            ..Default::default()
        };
        Ok(tx.update_ticket(ticket.id, &update, "gina", &at(9))?)
    });
    want.updated_by = "gina".into();
    want.updated_at = at(9);
    want.deleted_at = Some(at(9));
    check(store, &want, "deleted");
}

/// `ticket_refs`: one answer per id, in their order (repeats included), `None` for an id
/// with no ticket, deleted tickets answered; nothing for no ids.
pub(super) fn ticket_refs<S: Store + Clone>(cx: &mut Ctx<'_, S>) {
    let store = &mut cx.store;
    let task = project(store, "TASK");
    let ops = project(store, "OPS");
    let a = made(store, &task, Spec::new("Alpha"));
    let b = made(
        store,
        &task,
        Spec {
            status: Status::Review,
            ..Spec::new("Beta")
        },
    );
    let c = made(
        store,
        &ops,
        Spec {
            status: Status::Done,
            ..Spec::new("Gamma")
        },
    );
    write(store, |tx| {
        let deleted = TicketUpdate {
            deleted: true,
            ..Default::default()
        };
        Ok(tx.update_ticket(b.id, &deleted, "alice", &at(1))?)
    });
    let missing = a.id.max(b.id).max(c.id) + 1_000;
    let ids = [b.id, missing, a.id, c.id, a.id];
    let got = read(store, |tx| Ok(tx.ticket_refs(&ids)?));
    let r = |number: &str, title: &str, status| {
        Some(TicketRef {
            number: number.into(),
            title: title.into(),
            status,
        })
    };
    assert_eq!(
        got,
        vec![
            r("TASK-2", "Beta", Status::Review),
            None,
            r("TASK-1", "Alpha", Status::Backlog),
            r("OPS-1", "Gamma", Status::Done),
            r("TASK-1", "Alpha", Status::Backlog),
        ]
    );
    assert_eq!(read(store, |tx| Ok(tx.ticket_refs(&[])?)), vec![]);
}

/// A write whose body fails is rolled back: its error comes back as it was, and nothing it
/// wrote is there — no ticket, number, label, assignee, comment, change, dependency,
/// commit link, update or search entry.
pub(super) fn failed_write_writes_nothing<S: Store + Clone>(cx: &mut Ctx<'_, S>) {
    let store = &mut cx.store;
    let task = project(store, "TASK");
    let kept = made(
        store,
        &task,
        Spec {
            description: "kept as it was",
            ..Spec::new("Existing ticket")
        },
    );
    let refused = ToolError::new(errors::INVALID_INPUT, "refused on purpose")
        .with_hint("nothing may be written");
    let mut attempted = None;
    let err = store
        .write(|tx| {
            let new = make(
                tx,
                &task,
                &Spec {
                    description: "a platypus",
                    ..Spec::new("Doomed ticket")
                },
            )?;
            tx.set_labels(new.id, &["doomed".into()])?;
            tx.set_assignees(new.id, &["mallory".into()], "mallory", &at(1))?;
            tx.insert_comment(kept.id, "mallory", "a wombat", &at(1))?;
            tx.record_change(
                kept.id,
                &NewChange {
                    change_type: "title_changed",
                    old_value: Some("Existing ticket"),
                    new_value: Some("Changed"),
                    detail: None,
                    message: None,
                    actor: "mallory",
                    at: &at(1),
                },
            )?;
            assert!(tx.add_dependency(kept.id, new.id, "mallory", &at(1))?);
            assert!(tx.link_commit(kept.id, "abcdef12", None, "mallory", &at(1))?);
            tx.set_labels(kept.id, &["tampered".into()])?;
            let update = TicketUpdate {
                title: Some("Changed".into()),
                ..Default::default()
            };
            tx.update_ticket(kept.id, &update, "mallory", &at(1))?;
            // The transaction sees what it wrote.
            assert_eq!(
                tx.ticket_by_id(kept.id)?.map(|r| r.title),
                Some("Changed".into())
            );
            assert_eq!(tx.dependency_ids(kept.id)?, vec![new.id]);
            attempted = Some(new);
            Err::<(), _>(refused.clone())
        })
        .expect_err("a write whose body failed");
    assert_eq!(err, refused);
    let new = attempted.expect("the body ran");
    let after = read(store, |tx| {
        Ok((
            tx.ticket_by_uuid(&new.uuid)?.is_some(),
            tx.ticket_by_id(new.id)?.is_some(),
            tx.ticket_by_number("TASK", new.number)?.is_some(),
            tx.ticket_by_id(kept.id)?.map(|r| (r.title, r.updated_by)),
            tx.labels(kept.id)?,
            tx.assignees(new.id)?,
            tx.comments(kept.id, 10)?.1,
            tx.changes(kept.id, 10)?.len(),
            tx.dependency_ids(kept.id)?,
            tx.commits(kept.id)?.len(),
        ))
    });
    assert_eq!(
        after,
        (
            false,
            false,
            false,
            Some(("Existing ticket".into(), "alice".into())),
            vec![],
            vec![],
            0,
            0,
            vec![],
            0
        )
    );
    let page = read(store, |tx| Ok(tx.list(&ListFilter::default(), None, 10)?));
    assert_eq!(page.total, 1);
    for word in ["doomed", "platypus", "wombat", "changed"] {
        let found = store
            .search(&terms(&[&[word]]), &Filter::default(), 0, 10)
            .unwrap();
        assert_eq!((found.hits.len(), found.total), (0, 0), "search {word}");
    }
    // The number the failed write took is the next one given.
    assert_eq!(
        write(store, |tx| Ok(tx.allocate_number(task.id)?)),
        new.number
    );
}
