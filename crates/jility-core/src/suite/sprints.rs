//! Sprints on the store: the active sprint's figures, kept as its tickets change, equal what
//! the replay of its tickets' change log says, after every kind of change.

use super::ACTOR;
use crate::model::Kind;
use crate::params::{
    AddToSprint, CompleteSprint, CreateSprint, CreateTicket, EditTicket, RemoveFromSprint,
    SprintName, StatusName, UpdateStatus,
};
use crate::store::Store;

use super::Ctx;

/// After each step the kept statistics of the active sprint are the replayed ones; a few
/// figures are also checked by hand, so that both cannot be wrong alike.
pub(super) fn kept_equals_replay<S: Store + Clone>(cx: &mut Ctx<'_, S>) {
    let mut t = cx.tracker();
    t.init("TASK", "Demo", false).unwrap();
    let day = |offset: i64| {
        (chrono::Utc::now().date_naive() + chrono::TimeDelta::days(offset)).to_string()
    };
    let mut tickets = Vec::new();
    for (i, points) in [3, 5, 2, 8, 1, 13].into_iter().enumerate() {
        let made = t
            .create_ticket(
                "alice",
                CreateTicket {
                    title: format!("Work {i}"),
                    story_points: Some(points),
                    status: Some(StatusName("todo".into())),
                    ..Default::default()
                },
            )
            .unwrap();
        tickets.push(made.ticket.number);
    }
    let sprint = |name: &str, from: i64, to: i64| CreateSprint {
        name: name.into(),
        goal: None,
        starts_on: day(from),
        ends_on: day(to),
        capacity_points: None,
    };
    t.create_sprint("alice", sprint("One", -3, 10)).unwrap();
    t.create_sprint("alice", sprint("Two", 11, 24)).unwrap();
    let add = |t: &mut crate::Tracker<S>, name: &str, numbers: &[&String], move_tickets: bool| {
        t.add_to_sprint(
            "alice",
            AddToSprint {
                sprint: name.into(),
                tickets: numbers.iter().map(|n| n.to_string()).collect(),
                move_tickets,
            },
        )
        .unwrap();
    };
    add(
        &mut t,
        "One",
        &[&tickets[0], &tickets[1], &tickets[2]],
        false,
    );
    let one = SprintName {
        sprint: "One".into(),
    };
    let same = |t: &mut crate::Tracker<S>, step: &str| {
        let kept = t.sprint_stats(&one).unwrap();
        let replayed = t.sprint_stats_replayed(&one).unwrap();
        assert_eq!(
            serde_json::to_value(&kept).unwrap(),
            serde_json::to_value(&replayed).unwrap(),
            "after {step}: the kept figures differ from the replay"
        );
        kept
    };
    t.start_sprint("alice", one.clone()).unwrap();
    let started = same(&mut t, "the start");
    assert_eq!(started.committed_points, 10);
    assert_eq!(started.remaining_points, 10);
    let status = |t: &mut crate::Tracker<S>, ticket: &String, to: &str| {
        t.update_status(
            "bob",
            UpdateStatus {
                ticket_id: ticket.clone(),
                status: StatusName(to.into()),
                message: None,
            },
        )
        .unwrap();
    };
    status(&mut t, &tickets[0], "in_progress");
    same(&mut t, "a move to in progress");
    status(&mut t, &tickets[0], "done");
    let done = same(&mut t, "a ticket done");
    assert_eq!((done.completed_points, done.remaining_points), (3, 7));
    status(&mut t, &tickets[0], "in_progress");
    same(&mut t, "a ticket reopened");
    t.edit(
        "carol",
        EditTicket {
            ticket_id: tickets[1].clone(),
            story_points: Some(Some(8)),
            ..Default::default()
        },
    )
    .unwrap();
    same(&mut t, "re-estimated 5 → 8");
    add(&mut t, "One", &[&tickets[3], &tickets[4]], false);
    let added = same(&mut t, "two tickets added");
    assert_eq!(added.added_points, 9);
    t.remove_from_sprint(
        "alice",
        RemoveFromSprint {
            sprint: "One".into(),
            tickets: vec![tickets[2].clone()],
        },
    )
    .unwrap();
    let removed = same(&mut t, "a ticket removed");
    assert_eq!(removed.removed_points, 2);
    add(&mut t, "Two", &[&tickets[5]], false);
    add(&mut t, "One", &[&tickets[5]], true);
    same(&mut t, "a ticket moved in from a planned sprint");
    add(&mut t, "Two", &[&tickets[4]], true);
    same(&mut t, "a ticket moved out to a planned sprint");
    t.delete("alice", &tickets[3]).unwrap();
    let deleted = same(&mut t, "a ticket deleted");
    // In: 0 (3, reopened), 1 (8), 5 (13); out: 2, 4 (moved), 3 (deleted).
    assert_eq!(deleted.remaining_points, 3 + 8 + 13);
    assert_eq!(
        (deleted.added_points, deleted.removed_points),
        (9 + 13, 2 + 1)
    );
    // A kind change of a member is refused (an epic is no sprint work): nothing to keep.
    assert!(
        t.edit(
            "alice",
            EditTicket {
                ticket_id: tickets[1].clone(),
                kind: Some(Kind::Epic),
                ..Default::default()
            },
        )
        .is_err()
    );
    same(&mut t, "a refused change");
    // Completed: replayed (nothing kept is read), as it was at its completion.
    t.complete_sprint(
        "alice",
        CompleteSprint {
            sprint: "One".into(),
            carry_over_to: None,
        },
    )
    .unwrap();
    let completed = t.sprint_stats(&one).unwrap();
    assert_eq!(completed.remaining_points, 3 + 8 + 13);
}

/// The planner's reads: candidates in rank order a chunk at a time (todo, then backlog,
/// oldest first; this project's live tickets in no open sprint, no epics), and whether each
/// prerequisite is itself a candidate.
pub(super) fn plan_candidates<S: Store + Clone>(cx: &mut Ctx<'_, S>) {
    use crate::model::Status;
    use crate::store::{
        CandidateRank, NewSprint, SprintState, SprintUpdate, TicketSet, TicketUpdate,
    };

    use super::{Spec, made, project, read, write};

    let store = &mut cx.store;
    let task = project(store, "TASK");
    let ops = project(store, "OPS");
    let mut spec = |title: &'static str, status: Status| {
        made(
            store,
            &task,
            Spec {
                status,
                ..Spec::new(title)
            },
        )
    };
    let b1 = spec("b1", Status::Backlog);
    let t1 = spec("t1", Status::Todo);
    let b2 = spec("b2", Status::Backlog);
    let done = spec("done", Status::Done);
    let t2 = spec("t2", Status::Todo);
    let in_open = spec("in an open sprint", Status::Todo);
    let in_closed = spec("in a completed sprint", Status::Backlog);
    let epic = spec("an epic", Status::Todo);
    let gone = spec("deleted", Status::Todo);
    let b3 = spec("b3", Status::Backlog);
    let elsewhere = made(
        store,
        &ops,
        Spec {
            status: Status::Todo,
            ..Spec::new("another project's")
        },
    );
    write(store, |tx| {
        let sprint = |tx: &mut dyn crate::store::StoreTx, name: &str| {
            tx.insert_sprint(&NewSprint {
                project_id: task.id,
                name,
                goal: None,
                starts_on: "2024-10-01",
                ends_on: "2024-10-14",
                capacity_points: None,
                actor: "alice",
                at: &super::at(1),
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
        let update = |sprint_id: Option<Option<i64>>, kind, deleted| TicketUpdate {
            sprint_id,
            kind,
            deleted,
            ..Default::default()
        };
        let at = super::at(2);
        tx.update_ticket(
            in_open.id,
            &update(Some(Some(open.id)), None, false),
            "alice",
            &at,
        )?;
        tx.update_ticket(
            in_closed.id,
            &update(Some(Some(closed.id)), None, false),
            "alice",
            &at,
        )?;
        tx.update_ticket(
            epic.id,
            &update(None, Some(crate::model::Kind::Epic), false),
            "alice",
            &at,
        )?;
        tx.update_ticket(gone.id, &update(None, None, true), "alice", &at)?;
        for on in [
            t2.id,
            done.id,
            in_open.id,
            in_closed.id,
            epic.id,
            elsewhere.id,
            b3.id,
        ] {
            tx.add_dependency(b1.id, on, "alice", &at)?;
        }
        Ok(())
    });
    let all = [t1.id, t2.id, b1.id, b2.id, in_closed.id, b3.id];
    let chunk = |store: &mut S, after: Option<CandidateRank>, limit: usize| {
        read(store, |tx| {
            Ok(tx.ticket_rows(TicketSet::Candidates {
                project: task.id,
                after,
                limit,
            })?)
        })
        .into_iter()
        .map(|t| t.id)
        .collect::<Vec<_>>()
    };
    assert_eq!(
        chunk(store, None, 100),
        all,
        "every candidate, in rank order"
    );
    for size in 1..=7 {
        let mut got: Vec<i64> = Vec::new();
        let mut after = None;
        loop {
            let ids = chunk(store, after, size);
            assert!(ids.len() <= size);
            let Some(&last) = ids.last() else { break };
            got.extend(&ids);
            after = Some(CandidateRank {
                backlog: ![t1.id, t2.id].contains(&last),
                id: last,
            });
        }
        assert_eq!(got, all, "chunks of {size}");
    }
    let ops_candidates = read(store, |tx| {
        Ok(tx.ticket_rows(TicketSet::Candidates {
            project: ops.id,
            after: None,
            limit: 10,
        })?)
    });
    assert_eq!(
        ops_candidates.iter().map(|t| t.id).collect::<Vec<_>>(),
        vec![elsewhere.id]
    );
    let edges = read(store, |tx| Ok(tx.dependency_edges(&[b1.id])?));
    let candidate: Vec<(i64, bool)> = edges.iter().map(|e| (e.on_id, e.on_candidate)).collect();
    assert_eq!(
        candidate,
        vec![
            (done.id, false),
            (t2.id, true),
            (in_open.id, false),
            (in_closed.id, true),
            (epic.id, false),
            (b3.id, true),
            (elsewhere.id, false),
        ],
        "prerequisites that are candidates of b1's project"
    );
}

/// Search within a sprint (by name, `active`) or the backlog (`none`) finds exactly the
/// matches a listing of that sprint holds, page after page; an unknown sprint is refused.
pub(super) fn search_by_sprint<S: Store + Clone>(cx: &mut Ctx<'_, S>) {
    use std::collections::BTreeSet;

    use crate::params::{ListTickets, SearchTickets};

    let mut t = cx.tracker();
    t.init("TASK", "Demo", false).unwrap();
    let mut numbers = Vec::new();
    for i in 0..12 {
        let title = if i % 3 == 2 {
            format!("Unrelated chore {i}")
        } else {
            format!("Rotate the signing keys, part {i}")
        };
        let made = t
            .create_ticket(
                "alice",
                CreateTicket {
                    title,
                    story_points: Some(1),
                    status: Some(StatusName("todo".into())),
                    ..Default::default()
                },
            )
            .unwrap();
        numbers.push(made.ticket.number);
    }
    let day = |offset: i64| {
        (chrono::Utc::now().date_naive() + chrono::TimeDelta::days(offset)).to_string()
    };
    for (name, from, to) in [("Past", -20, -7), ("Now", -3, 10), ("Next", 11, 24)] {
        t.create_sprint(
            "alice",
            CreateSprint {
                name: name.into(),
                goal: None,
                starts_on: day(from),
                ends_on: day(to),
                capacity_points: None,
            },
        )
        .unwrap();
    }
    let add = |t: &mut crate::Tracker<S>, sprint: &str, which: &[usize]| {
        t.add_to_sprint(
            "alice",
            AddToSprint {
                sprint: sprint.into(),
                tickets: which.iter().map(|&i| numbers[i].clone()).collect(),
                move_tickets: false,
            },
        )
        .unwrap();
    };
    // Past: completed with 0 done (counted in no backlog) and 1 carried back to it.
    add(&mut t, "Past", &[0, 1]);
    t.start_sprint(
        "alice",
        SprintName {
            sprint: "Past".into(),
        },
    )
    .unwrap();
    for status in ["in_progress", "done"] {
        t.update_status(
            "alice",
            UpdateStatus {
                ticket_id: numbers[0].clone(),
                status: StatusName(status.into()),
                message: None,
            },
        )
        .unwrap();
    }
    t.complete_sprint(
        "alice",
        CompleteSprint {
            sprint: "Past".into(),
            carry_over_to: None,
        },
    )
    .unwrap();
    add(&mut t, "Now", &[3, 4, 5, 6]);
    t.start_sprint(
        "alice",
        SprintName {
            sprint: "Now".into(),
        },
    )
    .unwrap();
    add(&mut t, "Next", &[7, 8]);

    let searched = |t: &mut crate::Tracker<S>, sprint: Option<&str>| {
        let mut found = Vec::new();
        let mut cursor = None;
        loop {
            let page = t
                .search(
                    ACTOR,
                    &SearchTickets {
                        query: "signing keys".into(),
                        limit: Some(2),
                        cursor: cursor.take(),
                        sprint: sprint.map(str::to_string),
                    },
                )
                .unwrap();
            found.extend(page.data.hits.into_iter().map(|h| h.number));
            assert!(page.page.total >= found.len() as u64);
            match page.page.next_cursor {
                Some(next) => cursor = Some(next),
                None => {
                    assert_eq!(page.page.total, found.len() as u64, "{sprint:?}: total");
                    break;
                }
            }
        }
        let unique: BTreeSet<String> = found.iter().cloned().collect();
        assert_eq!(unique.len(), found.len(), "{sprint:?}: a hit twice");
        unique
    };
    let listed = |t: &mut crate::Tracker<S>, sprint: &str| -> BTreeSet<String> {
        let page = t
            .list(
                ACTOR,
                &ListTickets {
                    sprint: Some(sprint.into()),
                    limit: Some(200),
                    ..Default::default()
                },
            )
            .unwrap();
        page.data.tickets.into_iter().map(|t| t.number).collect()
    };
    let everywhere = searched(&mut t, None);
    assert_eq!(everywhere.len(), 8);
    let want = |which: &[usize]| -> BTreeSet<String> {
        which
            .iter()
            .filter(|&&i| i % 3 != 2)
            .map(|&i| numbers[i].clone())
            .collect()
    };
    for (sprint, which) in [
        ("Now", vec![3, 4, 5, 6]),
        ("active", vec![3, 4, 5, 6]),
        ("2", vec![3, 4, 5, 6]),
        ("Next", vec![7, 8]),
        ("Past", vec![0]),
    ] {
        assert_eq!(
            searched(&mut t, Some(sprint)),
            want(&which),
            "sprint {sprint}"
        );
    }
    let backlog = searched(&mut t, Some("none"));
    assert_eq!(backlog, want(&[1, 9, 10, 11]));
    let in_list: BTreeSet<String> = listed(&mut t, "none")
        .intersection(&everywhere)
        .cloned()
        .collect();
    assert_eq!(
        backlog, in_list,
        "the backlog searched is the backlog listed"
    );
    let unknown = t
        .search(
            ACTOR,
            &SearchTickets {
                query: "signing".into(),
                limit: None,
                cursor: None,
                sprint: Some("Sprint 99".into()),
            },
        )
        .unwrap_err();
    assert!(unknown.to_string().contains("Sprint 99"), "{unknown}");
    // A cursor of one sprint's search is no cursor of another's.
    let first = t
        .search(
            ACTOR,
            &SearchTickets {
                query: "signing keys".into(),
                limit: Some(1),
                cursor: None,
                sprint: Some("Now".into()),
            },
        )
        .unwrap();
    let wrong = t.search(
        ACTOR,
        &SearchTickets {
            query: "signing keys".into(),
            limit: Some(1),
            cursor: first.page.next_cursor,
            sprint: Some("Next".into()),
        },
    );
    assert!(wrong.is_err(), "a cursor crossed sprints");
}
