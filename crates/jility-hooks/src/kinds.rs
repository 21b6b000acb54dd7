//! The event types a subscription chooses among, and the change of the ticket's log each
//! stands for.

/// Every event type, in the order they are listed.
pub const EVENT_TYPES: [&str; 10] = [
    "ticket.created",
    "ticket.updated",
    "ticket.status_changed",
    "ticket.assigned",
    "ticket.commented",
    "ticket.description_edited",
    "ticket.dependency_changed",
    "ticket.sprint_changed",
    "ticket.epic_changed",
    "ticket.deleted",
];

/// The event sent by "send a test event"; every subscription gets it.
pub const TEST_EVENT: &str = "webhook.test";

/// The event type of a change of type `change_type` (a ticket's change log:
/// `created`, `status_changed`, …); the changes no type names on its own (title, points,
/// labels, parent, kind, a linked commit) are `ticket.updated`.
pub fn event_type(change_type: &str) -> &'static str {
    match change_type {
        "created" => "ticket.created",
        "status_changed" => "ticket.status_changed",
        "assignees_changed" => "ticket.assigned",
        "comment_added" => "ticket.commented",
        "description_changed" => "ticket.description_edited",
        "dependency_added" | "dependency_removed" => "ticket.dependency_changed",
        "sprint_changed" => "ticket.sprint_changed",
        "epic_changed" => "ticket.epic_changed",
        "deleted" => "ticket.deleted",
        _ => "ticket.updated",
    }
}

/// Whether a subscription to `events` (empty: all) wants `event`.
pub fn wants(events: &[String], event: &str) -> bool {
    event == TEST_EVENT || events.is_empty() || events.iter().any(|e| e == event)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_change_has_a_listed_type() {
        for change in [
            "created",
            "title_changed",
            "description_changed",
            "status_changed",
            "story_points_changed",
            "assignees_changed",
            "labels_changed",
            "parent_changed",
            "epic_changed",
            "kind_changed",
            "sprint_changed",
            "comment_added",
            "commit_linked",
            "dependency_added",
            "dependency_removed",
            "deleted",
        ] {
            assert!(EVENT_TYPES.contains(&event_type(change)), "{change}");
        }
        assert!(wants(&[], "ticket.created"));
        assert!(!wants(&["ticket.deleted".into()], "ticket.created"));
        assert!(wants(&["ticket.deleted".into()], TEST_EVENT));
    }
}
