//! What the ticket's pages and forms share: the ticket's address, a name shown as a person
//! or an agent, and the start of every form of theirs (the viewer, the fields, the CSRF
//! check).

use maud::{Markup, html};
use mcp_common_core::ToolError;

use crate::errors::WebError;
use crate::layout;
use crate::viewer::Viewer;

/// The ticket's page address.
pub fn ticket_href(viewer: &Viewer, number: &str) -> String {
    format!(
        "{}/tickets/{}",
        layout::base(&viewer.workspace),
        layout::segment(number)
    )
}

/// `name` as a person (one of the workspace's `people`: a round marker) or an agent (a
/// square one), told apart by the stylesheet's shapes and colours (no emoji, which a
/// machine without an emoji font draws as boxes), by a tooltip, and for screen readers.
pub fn who(name: &str, people: &[String]) -> Markup {
    let person = people.iter().any(|p| p == name);
    let (class, kind) = if person {
        ("who person", "Person")
    } else {
        ("who agent", "Agent")
    };
    html! {
        span class=(class) title=(kind) {
            span class="visually-hidden" { (kind) ": " }
            (name)
        }
    }
}

/// The refusal of a change made on a page that is no longer what the person saw.
pub fn stale(what: &str) -> WebError {
    WebError::Tool(
        ToolError::new(
            mcp_common_core::codes::CONFLICT,
            format!("The description changed; reload ({what})"),
        )
        .with_hint("Reload the page to see the description as it is now; nothing was changed."),
    )
}

/// Rendered markdown's headings moved under the page's own: the highest becomes `<h{top}>`,
/// the others keep their distance from it (at most `<h6>`), so the page's headings stay in
/// order. Rendered markdown has no other `<hN>` tags (raw HTML is shown as text).
pub fn nest_headings(html: &str, top: usize) -> String {
    let level_at = |rest: &str| -> Option<usize> {
        let mut chars = rest.chars();
        match (chars.next(), chars.next()) {
            (Some(d @ '1'..='6'), Some('>')) => d.to_digit(10).map(|d| d as usize),
            _ => None,
        }
    };
    let highest = html
        .match_indices("<h")
        .filter_map(|(i, _)| level_at(&html[i + 2..]))
        .min();
    let Some(highest) = highest else {
        return html.to_string();
    };
    let mut out = String::with_capacity(html.len());
    let mut rest = html;
    while let Some(i) = rest.find('<') {
        out.push_str(&rest[..i]);
        let after = &rest[i + 1..];
        let (slash, tail) = match after.strip_prefix('/') {
            Some(tail) => ("/", tail),
            None => ("", after),
        };
        match tail.strip_prefix('h').and_then(level_at) {
            Some(level) => {
                let nested = (level - highest + top).min(6);
                out.push_str(&format!("<{slash}h{nested}>"));
                rest = &tail[3..];
            }
            None => {
                out.push('<');
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn headings_nest_under_the_page() {
        let html = "<h2>A</h2><p>x &lt;h1&gt; <b>y</b></p><h3>B</h3><h6>C</h6><hr>";
        assert_eq!(
            nest_headings(html, 3),
            "<h3>A</h3><p>x &lt;h1&gt; <b>y</b></p><h4>B</h4><h6>C</h6><hr>"
        );
        assert_eq!(nest_headings("<p>no</p>", 3), "<p>no</p>");
        assert_eq!(nest_headings("<h1>T</h1>", 3), "<h3>T</h3>");
    }
}
