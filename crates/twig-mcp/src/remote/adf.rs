//! Atlassian Document Format (ADF) to plain text.
//!
//! Jira Cloud's REST API v3 returns rich-text fields such as an issue's description as ADF, a
//! JSON tree of nodes (`doc` → `paragraph` → `text`, ...). No maintained Rust crate converts
//! ADF, so this module does, aiming for text that reads well in a chat rather than for a
//! faithful rendering:
//!
//! * blocks (paragraphs, headings, lists, code, quotes, ...) are separated by a blank line;
//! * text marks (bold, links, ...) are dropped;
//! * list items start with `- ` (bullet), `N. ` (ordered, from `attrs.order`), `[ ] `/`[x] `
//!   (tasks); nested lists and an item's further lines are indented by two spaces;
//! * code blocks keep their lines verbatim, block quotes prefix lines with `> `;
//! * rules become `---`, table rows become lines of cells joined by ` | `;
//! * mentions, emoji, cards, status lozenges and dates become their text, URL or timestamp;
//! * media is skipped, and unknown nodes contribute the text of their content.

use serde_json::Value;

/// Convert an ADF document (or any ADF node) to plain text, without trailing whitespace.
///
/// A JSON string (some servers return plain-text descriptions) is returned as is; `null` and
/// other non-node values give an empty string.
pub fn to_plain_text(doc: &Value) -> String {
    match doc {
        Value::String(text) => text.clone(),
        Value::Array(nodes) => blocks(nodes).join("\n\n").trim_end().to_string(),
        Value::Object(_) => block(doc).trim_end().to_string(),
        _ => String::new(),
    }
}

fn node_type(node: &Value) -> &str {
    node.get("type").and_then(Value::as_str).unwrap_or("")
}

fn content(node: &Value) -> &[Value] {
    node.get("content")
        .and_then(Value::as_array)
        .map_or(&[], Vec::as_slice)
}

/// A string attribute of a node (numbers are rendered as text).
fn attr(node: &Value, name: &str) -> Option<String> {
    match node.get("attrs")?.get(name)? {
        Value::String(s) if !s.is_empty() => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    }
}

/// Whether a node is inline content (part of a line of text) rather than a block.
fn is_inline(node: &Value) -> bool {
    matches!(
        node_type(node),
        "text"
            | "hardBreak"
            | "mention"
            | "emoji"
            | "inlineCard"
            | "status"
            | "date"
            | "placeholder"
            | "mediaInline"
            | "inlineExtension"
    ) || node.get("text").is_some_and(Value::is_string)
}

/// Render a sequence of sibling nodes as blocks: each block node becomes one block, and each
/// run of inline nodes becomes one block too. Empty blocks are left out.
fn blocks(nodes: &[Value]) -> Vec<String> {
    let mut out = Vec::new();
    let mut run = String::new();
    for node in nodes {
        if is_inline(node) {
            run.push_str(&inline(node));
            continue;
        }
        push_block(&mut out, std::mem::take(&mut run));
        push_block(&mut out, block(node));
    }
    push_block(&mut out, run);
    out
}

fn push_block(out: &mut Vec<String>, text: String) {
    if !text.trim().is_empty() {
        out.push(text);
    }
}

/// Render one block node.
fn block(node: &Value) -> String {
    let children = content(node);
    match node_type(node) {
        "paragraph" | "heading" => children.iter().map(inline).collect(),
        "bulletList" | "orderedList" | "taskList" | "decisionList" => list(node),
        "listItem" | "taskItem" | "decisionItem" => blocks(children).join("\n"),
        "codeBlock" => children
            .iter()
            .filter_map(|c| c.get("text").and_then(Value::as_str))
            .collect::<String>()
            .trim_end_matches('\n')
            .to_string(),
        "blockquote" => blocks(children)
            .join("\n\n")
            .lines()
            .map(|line| {
                if line.is_empty() {
                    ">".to_string()
                } else {
                    format!("> {line}")
                }
            })
            .collect::<Vec<_>>()
            .join("\n"),
        "rule" => "---".to_string(),
        "table" => table(node),
        "mediaSingle" | "mediaGroup" | "media" => String::new(),
        "blockCard" | "embedCard" => attr(node, "url").unwrap_or_default(),
        "expand" | "nestedExpand" => {
            let mut parts: Vec<String> = attr(node, "title").into_iter().collect();
            parts.extend(blocks(children));
            parts.join("\n\n")
        }
        // `doc`, `panel`, and any unknown node: the text of their content.
        _ => blocks(children).join("\n\n"),
    }
}

/// Render one inline node.
fn inline(node: &Value) -> String {
    match node_type(node) {
        "text" => node
            .get("text")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string(),
        "hardBreak" => "\n".to_string(),
        "mention" => attr(node, "text")
            .or_else(|| attr(node, "id").map(|id| format!("@{id}")))
            .unwrap_or_default(),
        "emoji" => attr(node, "text")
            .or_else(|| attr(node, "shortName"))
            .unwrap_or_default(),
        "inlineCard" => attr(node, "url").unwrap_or_default(),
        "status" => attr(node, "text").unwrap_or_default(),
        "date" => attr(node, "timestamp").unwrap_or_default(),
        "placeholder" | "mediaInline" => String::new(),
        _ if is_inline(node) => node
            .get("text")
            .and_then(Value::as_str)
            .map(str::to_string)
            .unwrap_or_else(|| content(node).iter().map(inline).collect()),
        // A block where inline content was expected: its text, on one line.
        _ => block(node).replace('\n', " "),
    }
}

/// Render a list: one item per line with its marker, further lines of an item (and nested
/// lists) indented by two spaces.
fn list(node: &Value) -> String {
    let kind = node_type(node);
    let mut number = node
        .get("attrs")
        .and_then(|a| a.get("order"))
        .and_then(Value::as_u64)
        .unwrap_or(1);
    let mut lines: Vec<String> = Vec::new();
    for item in content(node) {
        let is_item = matches!(node_type(item), "listItem" | "taskItem" | "decisionItem");
        let body = block(item);
        if !is_item {
            // A list nested directly in a list (ADF nests task lists this way).
            lines.extend(body.lines().map(indent));
            continue;
        }
        let marker = match kind {
            "orderedList" => {
                let marker = format!("{number}. ");
                number = number.saturating_add(1);
                marker
            }
            "taskList" if attr(item, "state").as_deref() == Some("DONE") => "[x] ".to_string(),
            "taskList" => "[ ] ".to_string(),
            _ => "- ".to_string(),
        };
        let mut item_lines = body.lines();
        let first = item_lines.next().unwrap_or("");
        lines.push(format!("{marker}{first}").trim_end().to_string());
        lines.extend(item_lines.map(indent));
    }
    lines.join("\n")
}

fn indent(line: &str) -> String {
    if line.is_empty() {
        String::new()
    } else {
        format!("  {line}")
    }
}

/// Render a table: one line per row, the cells' text joined by ` | `.
fn table(node: &Value) -> String {
    content(node)
        .iter()
        .map(|row| {
            content(row)
                .iter()
                .map(|cell| {
                    blocks(content(cell))
                        .join(" ")
                        .split_whitespace()
                        .collect::<Vec<_>>()
                        .join(" ")
                })
                .collect::<Vec<_>>()
                .join(" | ")
        })
        .filter(|row| !row.trim().is_empty())
        .collect::<Vec<_>>()
        .join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn text(t: &str) -> Value {
        json!({"type": "text", "text": t})
    }

    fn para(nodes: Vec<Value>) -> Value {
        json!({"type": "paragraph", "content": nodes})
    }

    fn item(nodes: Vec<Value>) -> Value {
        json!({"type": "listItem", "content": nodes})
    }

    #[test]
    fn realistic_issue_description() {
        let doc = json!({
            "version": 1,
            "type": "doc",
            "content": [
                {"type": "heading", "attrs": {"level": 2}, "content": [text("Problem")]},
                {"type": "paragraph", "content": [
                    text("Checkout fails for "),
                    {"type": "text", "text": "guest users", "marks": [{"type": "strong"}]},
                    text(" since the "),
                    {"type": "text", "text": "v2.3 release", "marks": [{"type": "link", "attrs": {"href": "https://example.com"}}]},
                    text("."),
                    {"type": "hardBreak"},
                    text("Reported by "),
                    {"type": "mention", "attrs": {"id": "5b10ac8d82e05b22cc7d4ef5", "text": "@Alice Doe", "accessLevel": ""}},
                    text(" "),
                    {"type": "emoji", "attrs": {"shortName": ":fire:", "id": "1f525", "text": "🔥"}},
                ]},
                {"type": "paragraph", "content": []},
                {"type": "heading", "attrs": {"level": 3}, "content": [text("Steps")]},
                {"type": "orderedList", "attrs": {"order": 1}, "content": [
                    item(vec![para(vec![text("Open the cart")])]),
                    item(vec![
                        para(vec![text("Click "), json!({"type": "status", "attrs": {"text": "PAY", "color": "green"}})]),
                        json!({"type": "bulletList", "content": [
                            item(vec![para(vec![text("as guest")])]),
                            item(vec![
                                para(vec![text("with a coupon")]),
                                json!({"type": "bulletList", "content": [item(vec![para(vec![text("expired")])])]}),
                            ]),
                        ]}),
                    ]),
                ]},
                {"type": "codeBlock", "attrs": {"language": "text"}, "content": [
                    text("TypeError: cart is undefined\n    at pay (checkout.js:42)\n")
                ]},
                {"type": "blockquote", "content": [
                    para(vec![text("Customers are angry.")]),
                    para(vec![text("Please hurry.")]),
                ]},
                {"type": "rule"},
                {"type": "panel", "attrs": {"panelType": "info"}, "content": [
                    para(vec![text("See "), json!({"type": "inlineCard", "attrs": {"url": "https://acme.atlassian.net/browse/PROJ-7"}})])
                ]},
                {"type": "mediaSingle", "attrs": {"layout": "center"}, "content": [
                    {"type": "media", "attrs": {"id": "abc", "type": "file", "collection": "jira"}}
                ]},
                {"type": "table", "attrs": {"isNumberColumnEnabled": false}, "content": [
                    {"type": "tableRow", "content": [
                        {"type": "tableHeader", "content": [para(vec![text("Browser")])]},
                        {"type": "tableHeader", "content": [para(vec![text("Result")])]},
                    ]},
                    {"type": "tableRow", "content": [
                        {"type": "tableCell", "content": [para(vec![text("Firefox")])]},
                        {"type": "tableCell", "content": [para(vec![text("fails")]), para(vec![text("always")])]},
                    ]},
                ]},
                {"type": "paragraph", "content": [
                    text("Due "),
                    {"type": "date", "attrs": {"timestamp": "1767225600000"}},
                ]},
                {"type": "blockCard", "attrs": {"url": "https://example.com/design"}},
                {"type": "someFutureNode", "content": [para(vec![text("future text")])]},
                {"type": "paragraph", "content": [text("trailing   ")]},
            ]
        });
        let expected = "\
Problem

Checkout fails for guest users since the v2.3 release.
Reported by @Alice Doe 🔥

Steps

1. Open the cart
2. Click PAY
  - as guest
  - with a coupon
    - expired

TypeError: cart is undefined
    at pay (checkout.js:42)

> Customers are angry.
>
> Please hurry.

---

See https://acme.atlassian.net/browse/PROJ-7

Browser | Result
Firefox | fails always

Due 1767225600000

https://example.com/design

future text

trailing";
        assert_eq!(to_plain_text(&doc), expected);
    }

    #[test]
    fn ordered_list_honours_start() {
        let doc = json!({"type": "doc", "content": [
            {"type": "orderedList", "attrs": {"order": 3}, "content": [
                item(vec![para(vec![text("three")])]),
                item(vec![para(vec![text("four")]), para(vec![text("more")])]),
            ]}
        ]});
        assert_eq!(to_plain_text(&doc), "3. three\n4. four\n  more");
    }

    #[test]
    fn task_lists() {
        let doc = json!({"type": "doc", "content": [
            {"type": "taskList", "attrs": {"localId": "x"}, "content": [
                {"type": "taskItem", "attrs": {"state": "DONE"}, "content": [text("write")]},
                {"type": "taskItem", "attrs": {"state": "TODO"}, "content": [text("test")]},
                {"type": "taskList", "content": [
                    {"type": "taskItem", "attrs": {"state": "TODO"}, "content": [text("unit")]},
                ]},
            ]}
        ]});
        assert_eq!(to_plain_text(&doc), "[x] write\n[ ] test\n  [ ] unit");
    }

    #[test]
    fn mention_and_emoji_fallbacks() {
        let doc = para(vec![
            json!({"type": "mention", "attrs": {"id": "abc"}}),
            text(" "),
            json!({"type": "emoji", "attrs": {"shortName": ":smile:"}}),
        ]);
        assert_eq!(to_plain_text(&doc), "@abc :smile:");
    }

    #[test]
    fn strings_null_and_empty_docs() {
        assert_eq!(to_plain_text(&json!("plain  text ")), "plain  text ");
        assert_eq!(to_plain_text(&Value::Null), "");
        assert_eq!(
            to_plain_text(&json!({"type": "doc", "version": 1, "content": []})),
            ""
        );
        assert_eq!(
            to_plain_text(&json!({"type": "doc", "content": [para(vec![])]})),
            ""
        );
    }
}
