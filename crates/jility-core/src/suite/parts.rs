//! A ticket's parts: assignees, labels, comments, dependencies, commit links, changes.

use super::{Ctx, Spec, assert_same, at, made, project, read, write};
use crate::model::{Change, Comment, CommitLink};
use crate::store::{ListFilter, NewChange, Store, TicketUpdate};

/// Assignees in the order they were assigned, those assigned at once in byte order (upper
/// case before lower); a new set keeps who stays (and when they came), drops who goes and
/// adds who is new. Listings show them in byte order alone.
pub(super) fn assignees<S: Store + Clone>(cx: &mut Ctx<'_, S>) {
    let store = &mut cx.store;
    let task = project(store, "TASK");
    let ticket = made(store, &task, Spec::new("Pair work"));
    let other = made(store, &task, Spec::new("Solo work"));
    let names = |list: &[&str]| -> Vec<String> { list.iter().map(|s| s.to_string()).collect() };
    let set = |store: &mut S, list: &[&str], n: u32| {
        let list = names(list);
        write(store, |tx| {
            Ok(tx.set_assignees(ticket.id, &list, "lead", &at(n))?)
        });
        read(store, |tx| Ok(tx.assignees(ticket.id)?))
    };
    assert_eq!(read(store, |tx| Ok(tx.assignees(ticket.id)?)), names(&[]));
    assert_eq!(
        set(store, &["bob", "Carol", "amy"], 1),
        names(&["Carol", "amy", "bob"])
    );
    assert_eq!(
        set(store, &["bob", "Zed", "Carol", "amy"], 2),
        names(&["Carol", "amy", "bob", "Zed"]),
        "one assigned later comes after"
    );
    assert_eq!(
        set(store, &["Zed", "bob"], 3),
        names(&["bob", "Zed"]),
        "who stays keeps their place"
    );
    assert_eq!(read(store, |tx| Ok(tx.assignees(other.id)?)), names(&[]));
    let page = read(store, |tx| {
        let filter = ListFilter {
            assignee: Some("bob".into()),
            ..Default::default()
        };
        Ok(tx.list(&filter, None, 10)?)
    });
    assert_eq!(page.items.len(), 1);
    assert_eq!(page.items[0].assignees, names(&["Zed", "bob"]));
    assert_eq!(set(store, &[], 4), names(&[]));
}

/// Labels in byte order, each once; a new set replaces the old one.
pub(super) fn labels<S: Store + Clone>(cx: &mut Ctx<'_, S>) {
    let store = &mut cx.store;
    let task = project(store, "TASK");
    let ticket = made(store, &task, Spec::new("Labelled"));
    let other = made(store, &task, Spec::new("Plain"));
    let names = |list: &[&str]| -> Vec<String> { list.iter().map(|s| s.to_string()).collect() };
    let set = |store: &mut S, list: &[&str]| {
        let list = names(list);
        write(store, |tx| Ok(tx.set_labels(ticket.id, &list)?));
        read(store, |tx| Ok(tx.labels(ticket.id)?))
    };
    assert_eq!(
        set(store, &["docs", "api", "Api", "docs", "émoji", "Zeta"]),
        names(&["Api", "Zeta", "api", "docs", "émoji"])
    );
    assert_eq!(set(store, &["zeta"]), names(&["zeta"]));
    assert_eq!(read(store, |tx| Ok(tx.labels(other.id)?)), names(&[]));
    let page = read(store, |tx| Ok(tx.list(&ListFilter::default(), None, 10)?));
    let shown: Vec<(String, Vec<String>)> = page
        .items
        .into_iter()
        .map(|s| (s.number, s.labels))
        .collect();
    assert_eq!(
        shown,
        vec![
            ("TASK-2".to_string(), names(&[])),
            ("TASK-1".to_string(), names(&["zeta"]))
        ]
    );
    assert_eq!(set(store, &[]), names(&[]));
}

/// Comments as inserted (a UUID each); the newest `limit`, oldest first, and how many in
/// all, per ticket.
pub(super) fn comments<S: Store + Clone>(cx: &mut Ctx<'_, S>) {
    let store = &mut cx.store;
    let task = project(store, "TASK");
    let ticket = made(store, &task, Spec::new("Discussed"));
    let quiet = made(store, &task, Spec::new("Quiet"));
    let mut inserted: Vec<Comment> = Vec::new();
    for n in 0..5u32 {
        let author = if n % 2 == 0 { "amy" } else { "bob" };
        let content = format!("note {n}\n\nwith **markdown** — ✓");
        let comment = write(store, |tx| {
            Ok(tx.insert_comment(ticket.id, author, &content, &at(10 + n))?)
        });
        assert!(
            uuid::Uuid::parse_str(&comment.id).is_ok(),
            "{:?}",
            comment.id
        );
        assert_eq!(
            (
                comment.author.as_str(),
                comment.content.as_str(),
                comment.created_at.as_str()
            ),
            (author, content.as_str(), at(10 + n).as_str())
        );
        inserted.push(comment);
    }
    let ids: std::collections::HashSet<&str> = inserted.iter().map(|c| c.id.as_str()).collect();
    assert_eq!(ids.len(), 5, "each comment has its own id");
    let (three, total) = read(store, |tx| Ok(tx.comments(ticket.id, 3)?));
    assert_eq!(total, 5);
    assert_same(&three, &inserted[2..], "the newest 3, oldest first");
    let (all, total) = read(store, |tx| Ok(tx.comments(ticket.id, 50)?));
    assert_eq!(total, 5);
    assert_same(&all, &inserted, "all of them, oldest first");
    let (none, total) = read(store, |tx| Ok(tx.comments(ticket.id, 0)?));
    assert_eq!((none.len(), total), (0, 5), "limit 0");
    let (none, total) = read(store, |tx| Ok(tx.comments(quiet.id, 50)?));
    assert_eq!((none.len(), total), (0, 0), "another ticket's");
}

/// Dependencies: added once (a repeat is `false`), removed once; `dependency_ids` and
/// `dependent_ids` name live tickets only, in project then number order, whichever
/// order they were added in.
pub(super) fn dependencies<S: Store + Clone>(cx: &mut Ctx<'_, S>) {
    let store = &mut cx.store;
    let task = project(store, "TASK");
    let ops = project(store, "OPS");
    // OPS-1 is made first (the lowest id) but sorts after TASK's tickets.
    let o1 = made(store, &ops, Spec::new("Ops one"));
    let t: Vec<_> = (1..=5)
        .map(|n| made(store, &task, Spec::new(&format!("Task {n}"))))
        .collect();
    let (t1, t2, t3, t4, t5) = (&t[0], &t[1], &t[2], &t[3], &t[4]);
    let added = write(store, |tx| {
        Ok(vec![
            tx.add_dependency(t4.id, o1.id, "alice", &at(1))?,
            tx.add_dependency(t4.id, t3.id, "alice", &at(1))?,
            tx.add_dependency(t4.id, t1.id, "alice", &at(1))?,
            tx.add_dependency(t4.id, t2.id, "alice", &at(1))?,
            tx.add_dependency(t4.id, t1.id, "bob", &at(2))?,
            tx.add_dependency(t5.id, t1.id, "alice", &at(1))?,
            tx.add_dependency(t3.id, t1.id, "alice", &at(1))?,
        ])
    });
    assert_eq!(added, vec![true, true, true, true, false, true, true]);
    let ids = |store: &mut S| {
        read(store, |tx| {
            Ok((
                tx.dependency_ids(t4.id)?,
                tx.dependent_ids(t1.id)?,
                tx.dependency_ids(t3.id)?,
                tx.dependent_ids(t3.id)?,
            ))
        })
    };
    assert_eq!(
        ids(store),
        (
            vec![t1.id, t2.id, t3.id, o1.id],
            vec![t3.id, t4.id, t5.id],
            vec![t1.id],
            vec![t4.id]
        )
    );
    // T3 deleted: no longer a dependency of T4 nor a dependent of T1; its own rows stay.
    write(store, |tx| {
        let deleted = TicketUpdate {
            deleted: true,
            ..Default::default()
        };
        Ok(tx.update_ticket(t3.id, &deleted, "alice", &at(3))?)
    });
    assert_eq!(
        ids(store),
        (
            vec![t1.id, t2.id, o1.id],
            vec![t4.id, t5.id],
            vec![t1.id],
            vec![t4.id]
        )
    );
    let removed = write(store, |tx| {
        Ok(vec![
            tx.remove_dependency(t4.id, t2.id)?,
            tx.remove_dependency(t4.id, t2.id)?,
            tx.remove_dependency(t2.id, t4.id)?,
        ])
    });
    assert_eq!(removed, vec![true, false, false]);
    assert_eq!(
        read(store, |tx| Ok(tx.dependency_ids(t4.id)?)),
        vec![t1.id, o1.id]
    );
    assert_eq!(
        read(store, |tx| Ok(tx.dependent_ids(t2.id)?)),
        Vec::<i64>::new()
    );
}

/// Commit links in the order they were linked; a hash linked twice is `false` and the
/// first link stays.
pub(super) fn commits<S: Store + Clone>(cx: &mut Ctx<'_, S>) {
    let store = &mut cx.store;
    let task = project(store, "TASK");
    let ticket = made(store, &task, Spec::new("Committed"));
    let other = made(store, &task, Spec::new("Other"));
    let linked = write(store, |tx| {
        Ok(vec![
            tx.link_commit(
                ticket.id,
                "fedcba98",
                Some("Second hash first"),
                "amy",
                &at(1),
            )?,
            tx.link_commit(ticket.id, "0123abcd", None, "bob", &at(2))?,
            tx.link_commit(ticket.id, "fedcba98", Some("again"), "carl", &at(3))?,
            tx.link_commit(other.id, "fedcba98", None, "dora", &at(4))?,
        ])
    });
    assert_eq!(linked, vec![true, true, false, true]);
    let want = vec![
        CommitLink {
            hash: "fedcba98".into(),
            message: Some("Second hash first".into()),
            linked_at: at(1),
            linked_by: "amy".into(),
        },
        CommitLink {
            hash: "0123abcd".into(),
            message: None,
            linked_at: at(2),
            linked_by: "bob".into(),
        },
    ];
    assert_same(
        &read(store, |tx| Ok(tx.commits(ticket.id)?)),
        &want,
        "commits",
    );
    assert_eq!(read(store, |tx| Ok(tx.commits(other.id)?)).len(), 1);
}

/// The change log: every field as recorded, the newest `limit` newest first; description
/// versions (the `description_changed` changes) oldest first.
pub(super) fn changes<S: Store + Clone>(cx: &mut Ctx<'_, S>) {
    let store = &mut cx.store;
    let task = project(store, "TASK");
    let ticket = made(store, &task, Spec::new("Changing"));
    let other = made(store, &task, Spec::new("Still"));
    let mut recorded: Vec<Change> = Vec::new();
    for n in 0..25u32 {
        let (kind, old, new, detail, message) = match n % 5 {
            0 => (
                "description_changed",
                Some(format!("text {n}")),
                Some(format!("text {}", n + 1)),
                Some("append".to_string()),
                None,
            ),
            1 => (
                "status_changed",
                Some("todo".to_string()),
                Some("in_progress".to_string()),
                None,
                Some(format!("message {n}")),
            ),
            2 => ("comment_added", None, Some(format!("c{n}")), None, None),
            3 => (
                "title_changed",
                Some(format!("t{n}")),
                Some(String::new()),
                None,
                None,
            ),
            _ => ("deleted", None, None, None, None),
        };
        let actor = format!("actor{n}");
        let when = at(100 + n);
        write(store, |tx| {
            Ok(tx.record_change(
                ticket.id,
                &NewChange {
                    change_type: kind,
                    old_value: old.as_deref(),
                    new_value: new.as_deref(),
                    detail: detail.as_deref(),
                    message: message.as_deref(),
                    actor: &actor,
                    at: &when,
                },
            )?)
        });
        recorded.push(Change {
            change_type: kind.into(),
            old_value: old,
            new_value: new,
            detail,
            message,
            changed_by: actor,
            changed_at: when,
        });
    }
    let newest_first: Vec<Change> = recorded.iter().rev().cloned().collect();
    assert_same(
        &read(store, |tx| Ok(tx.changes(ticket.id, 20)?)),
        &newest_first[..20],
        "the newest 20 changes, newest first",
    );
    assert_same(
        &read(store, |tx| Ok(tx.changes(ticket.id, 100)?)),
        &newest_first,
        "every change, newest first",
    );
    let versions: Vec<Change> = recorded
        .iter()
        .filter(|c| c.change_type == "description_changed")
        .cloned()
        .collect();
    assert_eq!(versions.len(), 5);
    assert_same(
        &read(store, |tx| Ok(tx.description_versions(ticket.id)?)),
        &versions,
        "description versions, oldest first",
    );
    let (changes, versions) = read(store, |tx| {
        Ok((
            tx.changes(other.id, 20)?.len(),
            tx.description_versions(other.id)?.len(),
        ))
    });
    assert_eq!((changes, versions), (0, 0), "another ticket's");
}
