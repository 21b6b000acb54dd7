//! Markdown as safe HTML: pulldown-cmark renders (CommonMark with tables, strikethrough and
//! task lists), ammonia keeps only harmless tags and attributes (no `<script>`, no event
//! handlers, no `javascript:` or `data:` links, no styles). Task-list boxes are put back
//! after sanitising as this app's own markup, numbered in the order of the source, so the
//! page can tick the n-th one ([`task_lines`] says which line of the text it is).

use std::sync::LazyLock;

use pulldown_cmark::{CowStr, Event, Options, Parser, Tag, TagEnd, html};

/// Marks a task box in the rendered text until sanitising is done (the private-use
/// character is removed from the source first, so no text can forge one).
const MARK: char = '\u{E000}';

static CLEANER: LazyLock<ammonia::Builder<'static>> = LazyLock::new(|| {
    let mut builder = ammonia::Builder::default();
    builder
        .link_rel(Some("noopener noreferrer nofollow"))
        .url_schemes(["http", "https", "mailto"].into_iter().collect())
        .add_generic_attributes(["align"]);
    builder
});

fn options() -> Options {
    Options::ENABLE_TABLES | Options::ENABLE_STRIKETHROUGH | Options::ENABLE_TASKLISTS
}

/// `text` as sanitised HTML. With `tasks`, task-list boxes are tickable
/// (`<input type="checkbox" data-task="N">`, N counting from 0); else they are shown
/// disabled.
pub fn render(text: &str, tasks: bool) -> String {
    render_with(text, tasks, &|_| None)
}

/// [`render`], with each `@name` that `person` knows (its link: the person's page) a link;
/// a mention of someone it does not know stays text. Not in code or in a link's text.
pub fn render_with(text: &str, tasks: bool, person: &dyn Fn(&str) -> Option<String>) -> String {
    let source: String = text.chars().filter(|c| *c != MARK).collect();
    let mut count = 0usize;
    let mut plain = 0usize; // inside a code block or a link: no mention links
    let events = Parser::new_ext(&source, options()).flat_map(|event| match event {
        Event::TaskListMarker(done) => {
            let marker = format!("{MARK}{}{MARK}", if done { 'x' } else { 'o' });
            vec![Event::Text(marker.into())]
        }
        // Raw HTML is shown as text, never kept.
        Event::Html(raw) | Event::InlineHtml(raw) => vec![Event::Text(raw)],
        Event::Start(tag @ (Tag::CodeBlock(_) | Tag::Link { .. })) => {
            plain += 1;
            vec![Event::Start(tag)]
        }
        Event::End(end @ (TagEnd::CodeBlock | TagEnd::Link)) => {
            plain = plain.saturating_sub(1);
            vec![Event::End(end)]
        }
        Event::Text(text) if plain == 0 && text.contains('@') => mention_links(&text, person),
        other => vec![other],
    });
    let mut raw = String::with_capacity(source.len() * 3 / 2);
    html::push_html(&mut raw, events);
    let clean = CLEANER.clean(&raw).to_string();
    // Put the boxes back.
    let mut out = String::with_capacity(clean.len());
    let mut rest = clean.as_str();
    while let Some(start) = rest.find(MARK) {
        out.push_str(&rest[..start]);
        let after = &rest[start + MARK.len_utf8()..];
        let mut chars = after.chars();
        match (chars.next(), chars.next()) {
            (Some(state @ ('x' | 'o')), Some(MARK)) => {
                let checked = if state == 'x' { " checked" } else { "" };
                if tasks {
                    out.push_str(&format!(
                        "<input type=\"checkbox\" class=\"task\" data-task=\"{count}\" aria-label=\"Done\"{checked}>"
                    ));
                } else {
                    out.push_str(&format!(
                        "<input type=\"checkbox\" class=\"task\" disabled aria-label=\"Done\"{checked}>"
                    ));
                }
                count += 1;
                rest = &after[1 + MARK.len_utf8()..];
            }
            _ => {
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
}

/// `text` with each `@name` `person` knows as a link (HTML, escaped), the rest as text.
fn mention_links<'a>(text: &str, person: &dyn Fn(&str) -> Option<String>) -> Vec<Event<'a>> {
    let mut out: Vec<Event<'a>> = Vec::new();
    let mut plain = String::new();
    let chars: Vec<(usize, char)> = text.char_indices().collect();
    let mut i = 0;
    while i < chars.len() {
        let (at, c) = chars[i];
        let starts = c == '@' && (i == 0 || !chars[i - 1].1.is_alphanumeric());
        if starts {
            let mut j = i + 1;
            while j < chars.len() && (chars[j].1.is_alphanumeric() || "._-+@".contains(chars[j].1))
            {
                j += 1;
            }
            let end = chars.get(j).map_or(text.len(), |(k, _)| *k);
            let name = text[at + 1..end].trim_end_matches(['.', '-', '@']);
            if let Some(href) = (!name.is_empty()).then(|| person(name)).flatten() {
                if !plain.is_empty() {
                    out.push(Event::Text(CowStr::from(std::mem::take(&mut plain))));
                }
                out.push(Event::InlineHtml(CowStr::from(format!(
                    "<a href=\"{}\">@{}</a>",
                    escape(&href),
                    escape(name)
                ))));
                let consumed = at + 1 + name.len();
                // What follows the name (a trailing `.`) stays text.
                while j > i && chars[j - 1].0 >= consumed {
                    j -= 1;
                }
                i = j;
                continue;
            }
            plain.push_str(&text[at..end]);
            i = j;
            continue;
        }
        plain.push(c);
        i += 1;
    }
    if !plain.is_empty() {
        out.push(Event::Text(CowStr::from(plain)));
    }
    out
}

fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// The 1-based line of every task-list item of `text`, in order, with whether it is done.
pub fn task_lines(text: &str) -> Vec<(usize, bool)> {
    let source: String = text.chars().filter(|c| *c != MARK).collect();
    let starts: Vec<usize> = std::iter::once(0)
        .chain(source.match_indices('\n').map(|(i, _)| i + 1))
        .collect();
    Parser::new_ext(&source, options())
        .into_offset_iter()
        .filter_map(|(event, range)| match event {
            Event::TaskListMarker(done) => {
                let line = starts.partition_point(|&s| s <= range.start);
                Some((line, done))
            }
            _ => None,
        })
        .collect()
}

/// `line` with its task box flipped (`[ ]` ↔ `[x]`), if it has one.
pub fn toggle_task(line: &str, done: bool) -> Option<String> {
    let (from, to) = if done {
        (["[x]", "[X]"].as_slice(), "[ ]")
    } else {
        (["[ ]"].as_slice(), "[x]")
    };
    from.iter()
        .filter_map(|f| line.find(f).map(|i| (i, f.len())))
        .min_by_key(|(i, _)| *i)
        .map(|(i, len)| format!("{}{}{}", &line[..i], to, &line[i + len..]))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scripts_handlers_and_javascript_links_do_not_survive() {
        let evil = "# Hi\n<script>alert(1)</script>\n\n<img src=x onerror=alert(2)>\n\n[click](javascript:alert(3)) [ok](https://example.com)\n\n<a href=\"javascript:alert(4)\">x</a>\n\n![i](data:text/html;base64,PHNjcmlwdD4=)";
        let html = render(evil, true);
        assert!(!html.contains("<script"), "{html}");
        assert!(!html.contains("<img src=\"x\""), "{html}");
        assert!(!html.contains("onerror=\""), "{html}");
        for tag in html
            .split('<')
            .filter(|t| t.starts_with("a ") || t.starts_with("img "))
        {
            let tag = &tag[..tag.find('>').unwrap_or(tag.len())];
            assert!(!tag.to_lowercase().contains("javascript:"), "{tag}");
        }
        assert!(!html.contains("src=\"data:"), "{html}");
        assert!(html.contains("href=\"https://example.com\""), "{html}");
        assert!(
            html.contains("&lt;script&gt;"),
            "raw html is shown as text: {html}"
        );
    }

    #[test]
    fn task_boxes_are_numbered_and_only_ours() {
        let text = "## Acceptance\n- [ ] first\n- [x] second\n\nnot a box \u{E000}x\u{E000}\n";
        let html = render(text, true);
        assert!(
            html.contains("data-task=\"0\" aria-label=\"Done\">"),
            "{html}"
        );
        assert!(
            html.contains("data-task=\"1\" aria-label=\"Done\" checked>"),
            "{html}"
        );
        assert_eq!(html.matches("<input").count(), 2, "{html}");
        assert_eq!(task_lines(text), vec![(2, false), (3, true)]);
        let forged = "<input type=\"checkbox\" data-task=\"9\">";
        assert!(!render(forged, true).contains("<input"));
    }

    #[test]
    fn a_task_line_flips() {
        assert_eq!(toggle_task("- [ ] a", false).as_deref(), Some("- [x] a"));
        assert_eq!(toggle_task("  * [X] b", true).as_deref(), Some("  * [ ] b"));
        assert_eq!(toggle_task("- a", false), None);
    }

    #[test]
    fn known_mentions_are_links_and_others_stay_text() {
        let known = |name: &str| {
            (name.eq_ignore_ascii_case("alice")).then(|| "/w/t/list?q=assignee%3Aalice".to_string())
        };
        let html = render_with(
            "Hi @alice and @mallory, mail x@alice.com. `@alice` [@alice](https://e.com)",
            false,
            &known,
        );
        assert!(html.contains("<a href=\"/w/t/list?q=assignee%3Aalice\" rel=\"noopener noreferrer nofollow\">@alice</a>"), "{html}");
        assert_eq!(html.matches("assignee%3Aalice").count(), 1, "{html}");
        assert!(html.contains("@mallory"), "{html}");
        assert!(html.contains("<code>@alice</code>"), "{html}");
        let evil = render_with("@alice<script>", false, &known);
        assert!(!evil.contains("<script"), "{evil}");
    }
}
