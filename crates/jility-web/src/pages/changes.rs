//! A ticket's change log as people read it: who (person or agent), when, and what, in words
//! and readable values (ticket numbers and statuses, never a comment's id).

use jility_core::model::{Change, Status};
use maud::{Markup, html};

use super::parts::who;
use super::when;

/// The "Recent changes" list.
pub fn render(changes: &[Change], people: &[String]) -> Markup {
    html! {
        ol class="change-log" {
            @for c in changes {
                li data-change=(c.change_type) {
                    time { (when(&c.changed_at)) } " · " (who(&c.changed_by, people)) " "
                    (what(c))
                    @if let Some(m) = &c.message { " — " span class="message" { (m) } }
                }
            }
        }
    }
}

fn status(value: Option<&str>) -> String {
    value.map_or_else(String::new, |v| {
        Status::parse(v).map_or_else(|| v.to_string(), |s| s.label().to_string())
    })
}

fn or_none(value: Option<&str>) -> &str {
    value.filter(|v| !v.is_empty()).unwrap_or("none")
}

/// What a change did, in words.
fn what(c: &Change) -> Markup {
    let (old, new) = (c.old_value.as_deref(), c.new_value.as_deref());
    html! {
        @match c.change_type.as_str() {
            "created" => "created the ticket",
            "title_changed" => { "renamed it to " span class="value" { "“" (or_none(new)) "”" } },
            "description_changed" => {
                "edited the description"
                @if let Some(d) = &c.detail { " (" (d) ")" }
            },
            "status_changed" => {
                "moved it from " span class="value" { (status(old)) }
                " to " span class="value" { (status(new)) }
            },
            "story_points_changed" => {
                "set story points to " span class="value" { (or_none(new)) }
            },
            "assignees_changed" => { "set assignees to " span class="value" { (or_none(new)) } },
            "labels_changed" => { "set labels to " span class="value" { (or_none(new)) } },
            "parent_changed" => { "set the parent to " span class="value" { (or_none(new)) } },
            "epic_changed" => { "set the epic to " span class="value" { (or_none(new)) } },
            "comment_added" => "commented",
            "commit_linked" => {
                "linked commit " code { (new.unwrap_or_default().chars().take(10).collect::<String>()) }
            },
            "dependency_added" => { "made it depend on " span class="value" { (or_none(new)) } },
            "dependency_removed" => {
                "removed its dependency on " span class="value" { (or_none(old.or(new))) }
            },
            "deleted" => "deleted the ticket",
            other => (other.replace('_', " ")),
        }
    }
}
