//! The table: every operation once (see [`operation!`](super)).

use mcp_common_core::{Page, Paged, ToolError};
use serde_json::{Map, Value};

use super::*;
use crate::params;
use crate::render;
use crate::store::Store;
use crate::tracker::{self, Tracker};

operations! {
    CreateTicket {
        params::CreateTicket => tracker::Created, "jility_create_ticket",
        "tickets.create", TicketsWrite, Post "/tickets", cache 0,
        "Create a ticket", creates true,
        tool "Create a new ticket with title, markdown description, story points (1-13), status, assignees, labels, parent and epic.",
        destructive false, idempotent false,
        render render::created,
        |t, a, p| t.create_ticket(a, p)
    }
    CreateBatch {
        params::CreateBatch => tracker::BatchCreated, "jility_create_tickets_batch",
        "tickets.create_batch", TicketsWrite, Post "/tickets/batch", cache 0,
        "Create several tickets, all or none", creates true,
        tool "Create several tickets at once, all or none (e.g. when breaking down an epic). Items may depend on existing tickets or on earlier items of the batch (`#1` or the item's exact title).",
        destructive false, idempotent false,
        render render::batch,
        |t, a, p| t.create_batch(a, p)
    }
    GetTicket {
        params::TicketId => tracker::TicketDetail, "jility_get_ticket",
        "tickets.get", TicketsRead, Get "/tickets/{ticket_id}", cache 30,
        "A ticket with its comments, dependencies, commits and recent changes",
        tool "Get full ticket context: the ticket, its comments, dependencies, dependents, linked commits and recent changes.", idempotent true,
        waits |t, p| t.ticket_detail(&p.ticket_id),
        render render::detail,
        |t, a, p| t.get_ticket(&p.ticket_id)
    }
    ListTickets {
        params::ListTickets => Paged<tracker::TicketPage>, "jility_list_tickets",
        "tickets.list", TicketsRead, Get "/tickets", cache 10,
        "One page of tickets, filtered, grouped by status",
        tool "Query tickets with filters (status, assignee, labels, parent, epic, sprint, unassigned) and/or a `query` of jility_search_tickets' language (e.g. `status:todo assignee:me sort:updated-desc`); newest first unless it sorts; `limit` default 50, at most 200; page on with `cursor` and the same filters.", idempotent true,
        query (list_query, &[("labels", "label"), ("query", "q")]),
        paged tracker::TicketPage,
        render render::page,
        |t, a, p| t.list(a, &p)
    }
    ClaimTicket {
        params::ClaimTicket => tracker::Claimed, "jility_claim_ticket",
        "tickets.claim", TicketsWrite, Post "/tickets/{ticket_id}/claim", cache 0,
        "Claim a ticket: assign it to the caller and start it",
        tool "Claim a ticket: assign it to yourself and move it from backlog/todo to in_progress. Fails with already_assigned when someone else has it.",
        destructive false, idempotent true,
        render render::claimed,
        |t, a, p| t.claim(a, p)
    }
    UpdateDescription {
        params::UpdateDescription => tracker::DescriptionUpdated,
        "jility_update_description", "tickets.update_description", TicketsWrite,
        Post "/tickets/{ticket_id}/description", cache 0,
        "Edit a ticket's description precisely (a new version)",
        tool "Precisely edit a ticket's description (token-efficient): replace_all, append, prepend, replace_lines or replace_section. Each edit is stored as a new version with its message.",
        destructive true, idempotent false,
        render render::description_updated,
        |t, a, p| t.update_description(a, p)
    }
    UpdateStatus {
        params::UpdateStatus => tracker::StatusUpdated, "jility_update_status",
        "tickets.update_status", TicketsWrite, Post "/tickets/{ticket_id}/status", cache 0,
        "Move a ticket through the workflow",
        tool "Move a ticket through the workflow: backlog → todo → in_progress → review → done, blocked from and back to any open status, done reopens to todo or in_progress. Other moves are invalid_status, naming the allowed ones.",
        destructive false, idempotent true,
        render render::status_updated,
        |t, a, p| t.update_status(a, p)
    }
    AddComment {
        params::AddComment => tracker::CommentAdded, "jility_add_comment",
        "tickets.comment", CommentsWrite, Post "/tickets/{ticket_id}/comments", cache 0,
        "Comment on a ticket", creates true,
        tool "Add a markdown comment to a ticket (supports @mentions).",
        destructive false, idempotent false,
        render render::comment_added,
        |t, a, p| t.add_comment(a, p)
    }
    AssignTicket {
        params::AssignTicket => tracker::Assigned, "jility_assign_ticket",
        "tickets.assign", TicketsWrite, Post "/tickets/{ticket_id}/assign", cache 0,
        "Assign, reassign or unassign a ticket",
        tool "Assign or reassign a ticket to humans or agents (several = pairing; empty list = unassign). The handoff message becomes a comment.",
        destructive false, idempotent false,
        render render::assigned,
        |t, a, p| t.assign(a, p)
    }
    LinkCommit {
        params::LinkCommit => tracker::CommitLinked, "jility_link_commit",
        "tickets.link_commit", TicketsWrite, Post "/tickets/{ticket_id}/commits", cache 0,
        "Link a git commit to a ticket", creates true,
        tool "Link a git commit to a ticket for traceability.",
        destructive false, idempotent true,
        render render::commit_linked,
        |t, a, p| t.link_commit(a, p)
    }
    AddDependency {
        params::Dependency => tracker::DependencyAdded, "jility_add_dependency",
        "tickets.add_dependency", TicketsWrite, Post "/tickets/{ticket_id}/dependencies", cache 0,
        "Make a ticket depend on another", creates true,
        tool "Mark that a ticket depends on another (the other must be completed first). Refuses cycles with dependency_cycle, naming the cycle.",
        destructive false, idempotent true,
        render render::dependency_added,
        |t, a, p| t.add_dependency(a, p)
    }
    RemoveDependency {
        params::Dependency => tracker::DependencyRemoved,
        "jility_remove_dependency", "tickets.remove_dependency", TicketsWrite,
        Delete "/tickets/{ticket_id}/dependencies/{depends_on}", cache 0,
        "Remove a dependency",
        tool "Remove a dependency relationship.",
        destructive true, idempotent false,
        render render::dependency_removed,
        |t, a, p| t.remove_dependency(a, p)
    }
    DependencyGraph {
        params::TicketId => tracker::DependencyGraph,
        "jility_get_dependency_graph", "tickets.graph", TicketsRead,
        Get "/tickets/{ticket_id}/graph", cache 30,
        "What blocks a ticket and what it blocks, transitively",
        tool "Get the dependency tree of a ticket: what blocks it and what it blocks, directly and transitively.", idempotent true,
        render render::graph,
        |t, a, p| t.dependency_graph(&p.ticket_id)
    }
    ListTemplates {
        params::ListTemplates => Paged<tracker::TemplateList>,
        "jility_list_templates", "templates.list", TicketsRead, Get "/templates", cache 60,
        "One page of ticket templates",
        tool "List ticket templates: the built-in ones and the project's own (.jility/templates/*.md), with their variables; `limit` default 50, at most 200; page on with `cursor`.", idempotent true,
        query (page_query, &[]),
        paged tracker::TemplateList,
        render render::templates,
        |t, a, p| t.templates(&p)
    }
    CreateFromTemplate {
        params::FromTemplate => tracker::Created,
        "jility_create_from_template", "tickets.create_from_template", TicketsWrite,
        Post "/templates/{template}/tickets", cache 0,
        "Create a ticket from a template", creates true,
        tool "Create a ticket from a template, filling its {{variables}}; every variable the template uses must be given.",
        destructive false, idempotent false,
        render render::created,
        |t, a, p| t.create_from_template(a, p)
    }
    SearchTickets {
        params::SearchTickets => Paged<tracker::SearchResults>,
        "jility_search_tickets", "tickets.search", TicketsRead, Get "/search", cache 60,
        "Search with the query language, best matches first, with snippets",
        tool "Search tickets with the query language. Words match titles, descriptions and comments (all must; \"quoted phrases\" exactly; `-word` must not); qualifiers filter: `status:todo,review` (any of), `label:x`, `assignee:me`, `is:unassigned|assigned|blocked|open|done|epic|ticket`, `no:sprint|epic|parent|points|assignee|label`, `epic:KEY-N`, `parent:KEY-N`, `depends-on:KEY-N`, `sprint:active|\"Sprint 3\"|none`, `points:3..8|>5`, `created:>2024-10-20`, `updated:<7d` (ages in h, d, w); `-` before a qualifier negates it; `sort:created|updated|points|title` with `-desc`/`-asc` (default: best match, else newest). `limit` default 20, at most 100; page on with `cursor`.", idempotent true,
        query (search_query, &[("query", "q")]),
        paged tracker::SearchResults,
        render render::search,
        |t, a, p| t.search(a, &p)
    }
    History {
        params::TicketId => tracker::History, "jility_get_ticket_history",
        "tickets.history", TicketsRead, Get "/tickets/{ticket_id}/history", cache 30,
        "Every version of a ticket's description, with diffs",
        tool "The versions of a ticket's description, numbered from 1 (the original), each with its diff against the previous one, author, time and message.", idempotent true,
        render render::history,
        |t, a, p| t.history(&p.ticket_id)
    }
    RevertDescription {
        params::RevertDescription => tracker::DescriptionUpdated,
        "jility_revert_description", "tickets.revert_description", TicketsWrite,
        Post "/tickets/{ticket_id}/revert", cache 0,
        "Restore an earlier version of a description (as a new version)",
        tool "Restore an earlier version of a ticket's description; recorded as a new version (nothing is lost).",
        destructive false, idempotent false,
        render render::description_updated,
        |t, a, p| t.revert_description(a, p)
    }
    ListEpics {
        params::ListEpics => Paged<tracker::EpicList>, "jility_list_epics",
        "epics.list", TicketsRead, Get "/epics", cache 10,
        "One page of epics with their progress",
        tool "List epics, newest first, each with its progress (by status, points, percent, blocked, last activity). Filter by the epic's `status`; `limit` default 20, at most 100; page on with `cursor`.", idempotent true,
        query (epics_query, &[]),
        paged tracker::EpicList,
        render render::epics,
        |t, a, p| t.list_epics(&p)
    }
    GetEpic {
        params::GetEpic => Paged<tracker::EpicDetail>, "jility_get_epic",
        "epics.get", TicketsRead, Get "/epics/{epic_id}", cache 10,
        "An epic with its progress, its tickets and its critical path",
        tool "Get an epic: its progress, a page of its tickets by status (`limit` default 50, at most 200; page on with `cursor`) and its critical path: the chain of unfinished dependencies with the most points left.", idempotent true,
        query (page_query, &[]),
        paged tracker::EpicDetail,
        render render::epic,
        |t, a, p| t.get_epic(&p)
    }
    CreateSprint {
        params::CreateSprint => tracker::SprintCreated, "jility_create_sprint",
        "sprints.create", TicketsWrite, Post "/sprints", cache 0,
        "Create a sprint", creates true,
        tool "Create a sprint in the project: a unique `name`, an optional `goal`, `starts_on` and `ends_on` (YYYY-MM-DD) and an optional `capacity_points` (else planning uses the velocity). It starts planned.",
        destructive false, idempotent false,
        render render::sprint_created,
        |t, a, p| t.create_sprint(a, p)
    }
    AddToSprint {
        params::AddToSprint => tracker::AddedToSprint, "jility_add_to_sprint",
        "sprints.add", TicketsWrite, Post "/sprints/{sprint}/tickets", cache 0,
        "Add tickets to a sprint, all or none",
        tool "Add tickets to a planned or active sprint (named by name or number), all or none. A ticket in another planned or active sprint moves only with `move: true`; epics and tickets of another project are refused. Says when it is over capacity.",
        destructive false, idempotent true,
        render render::added_to_sprint,
        |t, a, p| t.add_to_sprint(a, p)
    }
    RemoveFromSprint {
        params::RemoveFromSprint => tracker::RemovedFromSprint,
        "jility_remove_from_sprint", "sprints.remove", TicketsWrite,
        Post "/sprints/{sprint}/remove", cache 0,
        "Send tickets of a sprint back to the backlog",
        tool "Take tickets out of a planned or active sprint, back to the backlog (all or none); tickets that were not in it are named.",
        destructive false, idempotent true,
        render render::removed_from_sprint,
        |t, a, p| t.remove_from_sprint(a, p)
    }
    StartSprint {
        params::SprintName => tracker::SprintStarted, "jility_start_sprint",
        "sprints.start", TicketsWrite, Post "/sprints/{sprint}/start", cache 0,
        "Start a sprint: its scope now is what it commits to",
        tool "Start a planned sprint: its tickets and points now are its committed scope. A project has one active sprint.",
        destructive false, idempotent false,
        render render::sprint_started,
        |t, a, p| t.start_sprint(a, p)
    }
    CompleteSprint {
        params::CompleteSprint => tracker::SprintCompleted, "jility_complete_sprint",
        "sprints.complete", TicketsWrite, Post "/sprints/{sprint}/complete", cache 0,
        "Complete the active sprint, carrying its unfinished tickets over",
        tool "Complete the active sprint: done tickets stay in it, unfinished ones move to `carry_over_to` (a planned sprint) or back to the backlog. Answers what was completed and carried over.",
        destructive false, idempotent false,
        render render::sprint_completed,
        |t, a, p| t.complete_sprint(a, p)
    }
    ListSprints {
        params::ListSprints => Paged<tracker::SprintList>, "jility_list_sprints",
        "sprints.list", TicketsRead, Get "/sprints", cache 10,
        "One page of the project's sprints",
        tool "List the project's sprints by number (filter by `state`), each with its dates, capacity, tickets and points done; `limit` default 50, at most 200; page on with `cursor`.", idempotent true,
        query (sprints_query, &[]),
        paged tracker::SprintList,
        render render::sprints,
        |t, a, p| t.list_sprints(&p)
    }
    SprintStats {
        params::SprintName => tracker::SprintStats, "jility_sprint_stats",
        "sprints.stats", TicketsRead, Get "/sprints/{sprint}", cache 10,
        "A sprint's figures: committed, completed, added, removed, burndown, velocity, forecast",
        tool "A sprint's figures from its change log: points committed, completed, added and removed after the start, remaining; the daily burndown beside the ideal line; the last 3 sprints' velocity and mean; the carry-over; the active sprint's end at the current pace.", idempotent true,
        render render::sprint_stats,
        |t, a, p| t.sprint_stats(&p)
    }
    PlanSprint {
        params::SprintName => tracker::SprintPlan, "jility_plan_sprint",
        "sprints.plan", TicketsRead, Get "/sprints/{sprint}/plan", cache 10,
        "Propose tickets for a sprint, in dependency order, up to its capacity",
        tool "Propose backlog and todo tickets for a sprint up to its capacity (or the mean velocity): in dependency order, todo before backlog, oldest first; each with why, and what was left out. Apply it with jility_add_to_sprint.", idempotent true,
        render render::sprint_plan,
        |t, a, p| t.plan_sprint(&p)
    }
    SaveView {
        params::SaveView => tracker::ViewSaved, "jility_save_view",
        "views.save", TicketsWrite, Post "/views", cache 0,
        "Save a query under a name, the caller's own or shared", creates true,
        tool "Save a query of the query language (see jility_search_tickets) under a name, run as `view:NAME` in any query. `shared: true` shares it with the workspace (only its owner deletes it). A name the caller already sees is already_exists.",
        destructive false, idempotent false,
        render render::view_saved,
        |t, a, p| t.save_view(a, p)
    }
    ListViews {
        params::ListViews => tracker::ViewList, "jility_list_views",
        "views.list", TicketsRead, Get "/views", cache 0,
        "The caller's saved views and the shared ones",
        tool "List the saved views the caller sees: their own and those shared with the workspace, by name, each with its query and owner.", idempotent true,
        render render::views,
        |t, a, p| t.list_views(a)
    }
    DeleteView {
        params::ViewName => tracker::ViewDeleted, "jility_delete_view",
        "views.delete", TicketsWrite, Delete "/views/{name}", cache 0,
        "Delete one of the caller's saved views",
        tool "Delete a saved view of the caller's (a shared view only its owner deletes: permission_denied for others).",
        destructive true, idempotent false,
        render render::view_deleted,
        |t, a, p| t.delete_view(a, p)
    }
    ListNotifications {
        params::ListNotifications => Paged<tracker::NotificationPage>, "jility_list_notifications",
        "notifications.list", TicketsRead, Get "/notifications", cache 0,
        "The caller's inbox, newest first",
        tool "The caller's inbox, newest first: `@name` mentions, tickets assigned to them, handoffs to review, their tickets' blockers done, changes to tickets they watch. `unread_only` for new ones; `limit` default 20, at most 100; page on with `cursor`.", idempotent true,
        query (notifications_query, &[]),
        paged tracker::NotificationPage,
        render render::notifications,
        |t, a, p| t.list_notifications(a, &p)
    }
    MarkNotificationsRead {
        params::MarkNotificationsRead => tracker::NotificationsMarked, "jility_mark_notifications_read",
        "notifications.read", TicketsRead, Post "/notifications/read", cache 0,
        "Mark entries of the caller's inbox read",
        tool "Mark entries of the caller's inbox read: `ids` (from jility_list_notifications, at most 500) or `all: true`. Answers how many were marked and how many stay unread.",
        destructive false, idempotent true,
        render render::notifications_marked,
        |t, a, p| t.mark_notifications_read(a, &p)
    }
    WatchTicket {
        params::WatchTicket => tracker::Watched, "jility_watch_ticket",
        "tickets.watch", TicketsRead, Post "/tickets/{ticket_id}/watch", cache 0,
        "Watch a ticket, or stop watching it",
        tool "Watch a ticket (its changes reach the caller's inbox), or stop with `watching: false`, also one the caller created, is assigned to or commented on (watched otherwise).",
        destructive false, idempotent true,
        render render::watched,
        |t, a, p| t.watch_ticket(a, &p)
    }
    BulkUpdate {
        params::BulkUpdate => tracker::BulkUpdated, "jility_bulk_update",
        "tickets.bulk_update", TicketsWrite, Post "/tickets/bulk", cache 0,
        "Change many tickets at once, all or none",
        tool "Change many tickets at once, all or none: those a `query` finds or the `tickets` named. One refused (workflow, sprint or epic rules) refuses the edit, naming each and why. `dry_run: true` previews; `expected_count` refuses any other count (count_mismatch; an empty query needs it). At most 5,000 tickets.",
        destructive false, idempotent false,
        render render::bulk_updated,
        |t, a, p| t.bulk_update(a, p)
    }
    BulkAssign {
        params::BulkAssign => tracker::BulkUpdated, "jility_bulk_assign",
        "tickets.bulk_assign", TicketsWrite, Post "/tickets/bulk/assign", cache 0,
        "Set the assignees of many tickets at once, all or none",
        tool "Set the assignees of many tickets at once (empty: unassign them), all or none: the tickets a `query` finds or the `tickets` named, with `dry_run`, `expected_count` and `message` as jility_bulk_update.",
        destructive false, idempotent false,
        render render::bulk_updated,
        |t, a, p| t.bulk_assign(a, p)
    }
    SuggestRelated {
        params::SuggestRelated => tracker::Related, "jility_suggest_related",
        "tickets.related", TicketsRead, Get "/tickets/related", cache 30,
        "Tickets like a filed ticket or a draft, likely duplicates flagged",
        tool "Find tickets like a filed one (`ticket_id`) or one about to be filed (`title`, `description`), scored 0-1 with the words shared: likely duplicates (score ≥ `duplicate_threshold`, two shared words at least) first and flagged, then related tickets, open before done. Use it before filing. `limit` default 5, at most 20.", idempotent true,
        query (related_query, &[]),
        render render::related,
        |t, a, p| t.suggest_related(p)
    }
    EstimateEffort {
        params::EstimateEffort => tracker::Estimate, "jility_estimate_effort",
        "tickets.estimate", TicketsRead, Get "/tickets/estimate", cache 30,
        "Story points from the most alike done tickets",
        tool "Estimate story points for a filed ticket (`ticket_id`) or one about to be filed (`title`, `description`) from the most alike done tickets: the estimate, their range, a confidence and the tickets it rests on, or `not enough history`.", idempotent true,
        query (estimate_query, &[]),
        render render::estimate,
        |t, a, p| t.estimate_effort(p)
    }
    /// Soft-delete a ticket.
    DeleteTicket {
        params::TicketId => tracker::Deleted, "jility_delete_ticket",
        "tickets.delete", TicketsDelete, Delete "/tickets/{ticket_id}", cache 0,
        "Delete a ticket (soft: it leaves every view, its rows stay)",
        tool "Delete a ticket: it leaves every board, list and search; its history is kept.",
        destructive true, idempotent false,
        render render::deleted,
        |t, a, p| t.delete(a, &p.ticket_id)
    }
    /// Not an MCP tool (the API's and the web's): who watches a ticket, and whether the
    /// caller does.
    TicketWatchers {
        params::TicketId => tracker::Watched, "ticket_watchers",
        "tickets.watchers", TicketsRead, Get "/tickets/{ticket_id}/watchers", cache 0,
        "Who watches a ticket, and whether the caller does",
        render render::watched,
        |t, a, p| t.ticket_watchers(a, &p.ticket_id)
    }
    /// Not an MCP tool (the API's and the web's): change a ticket's fields.
    EditTicket {
        params::EditTicket => tracker::Edited, "jility_edit_ticket",
        "tickets.edit", TicketsWrite, Post "/tickets/{ticket_id}/fields", cache 0,
        "Change a ticket's title, description, points, labels, parent or epic",
        render render::edited,
        |t, a, p| {
            let mut p = p;
            if p.description.is_some() && p.description_edit.is_some() {
                return Err(invalid(
                    "`description` and `description_edit` are given together",
                    "Replace the whole description with `description`, or edit it precisely with `description_edit`, not both.",
                ));
            }
            let edit = p
                .description_edit
                .take()
                .map(|edit| edit.of(p.ticket_id.clone(), p.message.clone()));
            t.edit_with(a, p, edit).map(|(mut edited, updated)| {
                if updated.is_some_and(|u| u.changed)
                    && !edited.changed.iter().any(|c| c == "description")
                {
                    edited.changed.push("description".to_string());
                }
                edited
            })
        }
    }
}
