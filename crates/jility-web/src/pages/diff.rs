//! A unified diff as HTML: one line each, added lines `.add`, removed ones `.del`, hunk
//! headers `.hunk`, file headers `.file` (the text escaped by maud; `+`/`-` kept, so the
//! diff reads the same without colours).

use maud::{Markup, html};

/// What a line of a unified diff is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    File,
    Hunk,
    Add,
    Del,
    Context,
}

impl Kind {
    fn class(self) -> &'static str {
        match self {
            Kind::File => "file",
            Kind::Hunk => "hunk",
            Kind::Add => "add",
            Kind::Del => "del",
            Kind::Context => "ctx",
        }
    }
}

/// The lines of `diff`, each with its kind (`---`/`+++` are file headers only before the
/// first hunk).
pub fn lines(diff: &str) -> Vec<(Kind, &str)> {
    let mut in_hunk = false;
    diff.lines()
        .map(|line| {
            let kind = if line.starts_with("@@") {
                in_hunk = true;
                Kind::Hunk
            } else if !in_hunk && (line.starts_with("--- ") || line.starts_with("+++ ")) {
                Kind::File
            } else if line.starts_with('+') {
                Kind::Add
            } else if line.starts_with('-') {
                Kind::Del
            } else {
                Kind::Context
            };
            (kind, line)
        })
        .collect()
}

/// `diff` as a `<pre class="diff">`, one `<span>` a line.
pub fn render(diff: &str) -> Markup {
    html! {
        pre class="diff" {
            @for (kind, line) in lines(diff) {
                span class=(kind.class()) { (line) "\n" }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_are_told_apart() {
        let diff = "--- v1\n+++ v2\n@@ -1,2 +1,2 @@\n keep\n-old\n+new\n--- not a header\n";
        let kinds: Vec<Kind> = lines(diff).into_iter().map(|(k, _)| k).collect();
        assert_eq!(
            kinds,
            [
                Kind::File,
                Kind::File,
                Kind::Hunk,
                Kind::Context,
                Kind::Del,
                Kind::Add,
                Kind::Del
            ]
        );
    }

    #[test]
    fn text_is_escaped() {
        let html = render("@@ -1 +1 @@\n-<b>a</b>\n+<script>alert(1)</script>\n").into_string();
        assert!(
            html.contains("<span class=\"del\">-&lt;b&gt;a&lt;/b&gt;\n</span>"),
            "{html}"
        );
        assert!(
            html.contains("<span class=\"add\">+&lt;script&gt;"),
            "{html}"
        );
        assert!(!html.contains("<script>"), "{html}");
        assert_eq!(render("").into_string(), "<pre class=\"diff\"></pre>");
    }
}
