//! Folding an entity's events into its state. The order is fixed by the events alone —
//! creation first, then by (timestamp, event id) — so the same set of events gives the same
//! entity on every machine, whatever order the histories were merged in.

use std::collections::BTreeSet;

use crate::event::{Change, Event};
use crate::model::{Comment, Entity, Kind, Status};

/// The entity made by `events`, or `None` when they hold no creation event.
pub fn replay(kind: Kind, id: &str, mut events: Vec<Event>) -> Option<Entity> {
    events.sort_by(|a, b| (a.ts, &a.event).cmp(&(b.ts, &b.event)));
    events.dedup_by(|a, b| a.event == b.event);
    let created_at = events
        .iter()
        .position(|e| matches!(e.change, Change::Created { .. }))?;
    let created = events.remove(created_at);
    let Change::Created {
        kind: created_kind,
        title,
        description,
        labels,
    } = created.change
    else {
        return None;
    };
    if created_kind != kind {
        return None;
    }
    let mut entity = Entity {
        kind,
        id: id.to_string(),
        title,
        description,
        status: Status::Open,
        labels: labels.into_iter().collect::<BTreeSet<_>>(),
        milestone: None,
        author: created.actor.name,
        created: created.ts,
        updated: created.ts,
        comments: Vec::new(),
    };
    for event in events {
        entity.updated = entity.updated.max(event.ts);
        match event.change {
            // A second creation (a forged or duplicated history) changes nothing.
            Change::Created { .. } => {}
            Change::TitleEdited { title } => entity.title = title,
            Change::DescriptionEdited { description } => entity.description = description,
            Change::StatusChanged { status } => entity.status = status,
            Change::CommentAdded { comment, body } => entity.comments.push(Comment {
                id: comment,
                author: event.actor.name,
                body,
                ts: event.ts,
            }),
            Change::LabelAdded { label } => {
                entity.labels.insert(label);
            }
            Change::LabelRemoved { label } => {
                entity.labels.remove(&label);
            }
            Change::Attached { milestone } => {
                if kind == Kind::Issue {
                    entity.milestone = Some(milestone);
                }
            }
            Change::Detached { milestone } => {
                if entity.milestone.as_deref() == Some(milestone.as_str()) {
                    entity.milestone = None;
                }
            }
        }
    }
    Some(entity)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::event::Actor;
    use chrono::{TimeZone, Utc};

    fn at(secs: i64, change: Change) -> Event {
        Event {
            schema: crate::event::SCHEMA.into(),
            event: format!("e{secs:04}"),
            ts: Utc.timestamp_opt(1_700_000_000 + secs, 0).unwrap(),
            actor: Actor {
                name: format!("user{secs}"),
                email: "u@example.com".into(),
            },
            change,
        }
    }

    #[test]
    fn order_of_arrival_does_not_matter() {
        let events = vec![
            at(
                0,
                Change::Created {
                    kind: Kind::Issue,
                    title: "T".into(),
                    description: String::new(),
                    labels: vec!["a".into()],
                },
            ),
            at(1, Change::LabelAdded { label: "b".into() }),
            at(2, Change::LabelRemoved { label: "a".into() }),
            at(3, Change::TitleEdited { title: "T2".into() }),
            at(
                4,
                Change::StatusChanged {
                    status: Status::Closed,
                },
            ),
            at(
                5,
                Change::CommentAdded {
                    comment: "c1".into(),
                    body: "hi".into(),
                },
            ),
            at(
                6,
                Change::Attached {
                    milestone: "m".into(),
                },
            ),
        ];
        let forward = replay(Kind::Issue, "i", events.clone()).unwrap();
        let mut reversed = events.clone();
        reversed.reverse();
        reversed.push(events[1].clone()); // the same event twice counts once
        assert_eq!(replay(Kind::Issue, "i", reversed).unwrap(), forward);
        assert_eq!(forward.title, "T2");
        assert_eq!(forward.status, Status::Closed);
        assert_eq!(forward.labels.iter().collect::<Vec<_>>(), ["b"]);
        assert_eq!(forward.milestone.as_deref(), Some("m"));
        assert_eq!(forward.comments.len(), 1);
        assert_eq!(forward.author, "user0");
        assert_eq!(forward.updated, events[6].ts);
    }

    #[test]
    fn no_creation_no_entity() {
        assert!(
            replay(
                Kind::Issue,
                "i",
                vec![at(1, Change::TitleEdited { title: "x".into() })]
            )
            .is_none()
        );
    }
}
