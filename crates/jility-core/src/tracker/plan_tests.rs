//! The chunked planner against the planner that reads every candidate at once (the one
//! jility had before), on random dependency graphs and every chunk size.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap, HashSet};

use super::{CHUNK, LEFT_OUT_SHOWN, over_capacity, propose, rank};
use crate::model::{Kind, Status};
use crate::store::{CandidateRank, DependencyEdge, TicketRow};

fn row(id: i64, status: Status, points: Option<u8>) -> TicketRow {
    TicketRow {
        id,
        uuid: format!("u{id}"),
        project_key: "P".into(),
        number: id,
        title: format!("ticket {id}"),
        description: String::new(),
        status,
        story_points: points,
        parent_id: None,
        epic_id: None,
        created_by: "t".into(),
        created_at: "2026-01-01T00:00:00Z".into(),
        updated_by: "t".into(),
        updated_at: "2026-01-01T00:00:00Z".into(),
        deleted_at: None,
        kind: Kind::Ticket,
        sprint_id: None,
        sprint: None,
    }
}

/// What the planner answered: proposed (number, points, reason), the left out shown
/// (number, reason), and how many were left out.
type Outcome = (Vec<(String, u8, String)>, Vec<(String, String)>, u64);

/// The planner as it was: every candidate and every edge at once.
fn reference(
    candidates: &[TicketRow],
    edges: &[DependencyEdge],
    in_sprint: &HashSet<i64>,
    room: u64,
) -> Outcome {
    let index: HashMap<i64, usize> = candidates
        .iter()
        .enumerate()
        .map(|(i, t)| (t.id, i))
        .collect();
    let mut waiting_on: Vec<Vec<i64>> = vec![Vec::new(); candidates.len()];
    let mut outside: Vec<Vec<String>> = vec![Vec::new(); candidates.len()];
    let mut dependents: HashMap<i64, Vec<usize>> = HashMap::new();
    for e in edges {
        let Some(&i) = index.get(&e.ticket_id) else {
            continue;
        };
        if e.on_status == Status::Done || in_sprint.contains(&e.on_id) {
            continue;
        }
        if index.contains_key(&e.on_id) {
            waiting_on[i].push(e.on_id);
            dependents.entry(e.on_id).or_default().push(i);
        } else {
            outside[i].push(format!("{} ({})", e.on_number, e.on_status.as_str()));
        }
    }
    let mut heap = BinaryHeap::new();
    for (i, t) in candidates.iter().enumerate() {
        if waiting_on[i].is_empty() && outside[i].is_empty() {
            heap.push(Reverse((rank(t), i)));
        }
    }
    let mut room = room;
    let mut taken: HashSet<i64> = HashSet::new();
    let mut why: HashMap<usize, String> = HashMap::new();
    let mut proposed = Vec::new();
    while let Some(Reverse((_, i))) = heap.pop() {
        let t = &candidates[i];
        let Some(points) = t.story_points else {
            why.insert(i, "no story points: estimate it first".into());
            continue;
        };
        if u64::from(points) > room {
            why.insert(i, over_capacity(points, room));
            continue;
        }
        room -= u64::from(points);
        taken.insert(t.id);
        let after: Vec<String> = edges
            .iter()
            .filter(|e| e.ticket_id == t.id && taken.contains(&e.on_id) && e.on_id != t.id)
            .map(|e| e.on_number.clone())
            .collect();
        let reason = if after.is_empty() {
            format!("{}, ready (no prerequisite left)", t.status.as_str())
        } else {
            format!(
                "{}, after {} (proposed before it)",
                t.status.as_str(),
                after.join(", ")
            )
        };
        proposed.push((t.display_number(), points, reason));
        for &d in dependents.get(&t.id).map(Vec::as_slice).unwrap_or_default() {
            waiting_on[d].retain(|on| *on != t.id);
            if waiting_on[d].is_empty() && outside[d].is_empty() {
                heap.push(Reverse((rank(&candidates[d]), d)));
            }
        }
    }
    let number_of: HashMap<i64, String> = candidates
        .iter()
        .map(|t| (t.id, t.display_number()))
        .collect();
    let mut left_out = Vec::new();
    for (i, t) in candidates.iter().enumerate() {
        if taken.contains(&t.id) {
            continue;
        }
        let reason = why.remove(&i).unwrap_or_else(|| {
            let mut on = outside[i].clone();
            on.extend(
                waiting_on[i]
                    .iter()
                    .map(|id| format!("{} (not proposed)", number_of[id])),
            );
            format!("blocked by {}", on.join(", "))
        });
        left_out.push((t.display_number(), reason));
    }
    let total = left_out.len() as u64;
    left_out.truncate(LEFT_OUT_SHOWN);
    (proposed, left_out, total)
}

struct Graph {
    candidates: Vec<TicketRow>,
    others: Vec<TicketRow>,
    edges: Vec<DependencyEdge>,
    in_sprint: HashSet<i64>,
    room: u64,
}

fn random_graph(rng: &mut fastrand::Rng) -> Graph {
    let n = rng.usize(0..70);
    let points = |rng: &mut fastrand::Rng| match rng.u8(0..10) {
        0 => None,
        p => Some([1, 1, 2, 3, 5, 8, 13, 2, 1][usize::from(p - 1)]),
    };
    let mut candidates: Vec<TicketRow> = (1..=n as i64)
        .map(|id| {
            let status = if rng.bool() {
                Status::Todo
            } else {
                Status::Backlog
            };
            row(id, status, points(rng))
        })
        .collect();
    candidates.sort_by_key(rank);
    // Tickets that are no candidates: done, in progress, in the sprint, or candidates of
    // another project (todo, yet no candidate here).
    let others: Vec<TicketRow> = (0..rng.i64(0..8))
        .map(|k| {
            let status = [
                Status::Done,
                Status::InProgress,
                Status::Todo,
                Status::Blocked,
            ][rng.usize(0..4)];
            row(1000 + k, status, points(rng))
        })
        .collect();
    let in_sprint: HashSet<i64> = others
        .iter()
        .filter(|t| t.status != Status::Done && rng.u8(0..3) == 0)
        .map(|t| t.id)
        .collect();
    let all: Vec<&TicketRow> = candidates.iter().chain(&others).collect();
    let mut pairs: Vec<(i64, i64)> = Vec::new();
    if !candidates.is_empty() {
        for _ in 0..rng.usize(0..(2 * n + 1)) {
            let from = &candidates[rng.usize(0..candidates.len())];
            let on = all[rng.usize(0..all.len())];
            pairs.push((from.id, on.id));
        }
    }
    pairs.sort_unstable();
    pairs.dedup();
    let ids: HashSet<i64> = candidates.iter().map(|t| t.id).collect();
    let edges = pairs
        .into_iter()
        .filter_map(|(from, on)| {
            let o = all.iter().find(|t| t.id == on)?;
            Some(DependencyEdge {
                ticket_id: from,
                on_id: on,
                on_number: o.display_number(),
                on_title: o.title.clone(),
                on_status: o.status,
                on_candidate: ids.contains(&on),
            })
        })
        .collect();
    Graph {
        candidates,
        others,
        edges,
        in_sprint,
        room: rng.u64(0..45),
    }
}

#[test]
fn chunked_planner_equals_reading_every_candidate_at_once() {
    let mut rng = fastrand::Rng::with_seed(42);
    let mut stopped_early = 0;
    for case in 0..3000 {
        let g = random_graph(&mut rng);
        assert!(
            g.others
                .iter()
                .all(|o| g.candidates.iter().all(|c| c.id != o.id))
        );
        let want = reference(&g.candidates, &g.edges, &g.in_sprint, g.room);
        for chunk in [1, 2, 3, 7, CHUNK] {
            let mut reads = 0;
            let plan = propose(
                g.room,
                &g.in_sprint,
                chunk,
                |after: Option<CandidateRank>, limit| {
                    reads += 1;
                    let rows: Vec<TicketRow> = g
                        .candidates
                        .iter()
                        .filter(|t| after.is_none_or(|a| rank(t) > a))
                        .take(limit)
                        .cloned()
                        .collect();
                    let edges = g
                        .edges
                        .iter()
                        .filter(|e| rows.iter().any(|t| t.id == e.ticket_id))
                        .cloned()
                        .collect();
                    Ok::<_, ()>((rows, edges))
                },
            )
            .unwrap_or_else(|()| unreachable!());
            let got: Outcome = (
                plan.proposed
                    .iter()
                    .map(|p| (p.number.clone(), p.story_points, p.reason.clone()))
                    .collect(),
                plan.left_out
                    .iter()
                    .map(|l| (l.number.clone(), l.reason.clone()))
                    .collect(),
                plan.left_out_total,
            );
            assert_eq!(got.0, want.0, "case {case}, chunk {chunk}: proposed");
            assert_eq!(got.1, want.1, "case {case}, chunk {chunk}: left out shown");
            if plan.all_read {
                assert_eq!(got.2, want.2, "case {case}, chunk {chunk}: left out total");
                assert_eq!(plan.considered, g.candidates.len() as u64);
            } else {
                stopped_early += 1;
                assert!(plan.considered < g.candidates.len() as u64 + 1);
                assert!(got.2 <= want.2);
                assert!(got.1.len() == LEFT_OUT_SHOWN || got.2 == want.2);
            }
            assert!(
                reads <= g.candidates.len() / chunk + 1,
                "case {case}: {reads} reads"
            );
        }
    }
    assert!(
        stopped_early > 100,
        "only {stopped_early} plans stopped reading early"
    );
}

#[test]
fn a_full_sprint_stops_reading() {
    // 1,000 one-point candidates, room for 5: the planner reads until 50 are left out.
    let candidates: Vec<TicketRow> = (1..=1000)
        .map(|id| row(id, Status::Todo, Some(1)))
        .collect();
    let mut read = 0;
    let plan = propose(
        5,
        &HashSet::new(),
        20,
        |after: Option<CandidateRank>, limit| {
            let rows: Vec<TicketRow> = candidates
                .iter()
                .filter(|t| after.is_none_or(|a| rank(t) > a))
                .take(limit)
                .cloned()
                .collect();
            read += rows.len();
            Ok::<_, ()>((rows, Vec::new()))
        },
    )
    .unwrap_or_else(|()| unreachable!());
    assert_eq!(plan.proposed.len(), 5);
    assert_eq!(read, 60);
    assert_eq!(plan.considered, 60);
    assert_eq!(plan.left_out_total, 55);
    assert_eq!(plan.left_out.len(), LEFT_OUT_SHOWN);
    assert!(!plan.all_read);
    assert_eq!(
        plan.left_out[0].reason,
        "over capacity: needs 1 point, 0 left"
    );
}
