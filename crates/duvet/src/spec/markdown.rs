//! Parsing of Markdown specifications into sections.
//!
//! The rules follow Duvet's Markdown reader (pulldown-cmark with heading attributes enabled):
//!
//! * Every heading starts a section: ATX headings (`#` to `######`, up to three spaces of
//!   indentation, an optional closing `#` sequence) and setext headings (a paragraph underlined
//!   with `===` or `---`; a multi-line paragraph makes one title, its lines joined by spaces).
//! * Sections are **flat**, as in Duvet: a section's body is every line up to the next heading
//!   of any level, so a `##` section does not include its `###` subsections.
//! * The **id** is the heading's explicit attribute id (`## Title {#my-id}`; the attribute
//!   block is removed from the title), or else the slug of the title, computed as Duvet does
//!   with the `slug` crate: ASCII letters lowercased, digits kept, every other run of
//!   characters (spaces, punctuation, `_`, `-`) becomes a single `-`, none at either end
//!   (`What's New?` → `what-s-new`, `TLS_AES_128` → `tls-aes-128`). The title is the raw
//!   heading text, inline markup included (`Foo *bar*` has the slug `foo-bar`). Non-ASCII
//!   letters are approximated: Latin-1 accented letters fold to ASCII (`é` → `e`, `ß` → `ss`),
//!   other letters and digits are kept lowercased (the `slug` crate transliterates them), other
//!   characters separate words. An empty slug becomes `section`.
//! * **Duplicate ids** get `-1`, `-2`, ... in document order, skipping ids already taken
//!   (Duvet's rule): `# Intro`, `## Intro` → `intro`, `intro-1`.
//! * Lines inside fenced code blocks (```` ``` ```` / `~~~`), indented code blocks and HTML
//!   comments are never headings.
//! * Text before the first heading belongs to no section. A leading YAML front matter block
//!   (`---`, `key: value` lines, `---` or `...`) is skipped; Duvet would read its closing
//!   `---` as a setext underline.
//!
//! Section lines are the body lines as written (trailing whitespace removed), with blank lines
//! trimmed at both ends.

use std::collections::HashSet;

use super::{Section, offset_in};

/// Parse a Markdown document into its sections, in document order.
pub fn parse(text: &str) -> Vec<Section> {
    let doc = text;
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let lines: Vec<&str> = text.lines().collect();
    let start = front_matter_end(&lines);
    let mut parser = Parser::new(doc);
    for line in lines.get(start..).unwrap_or(&[]) {
        parser.line(line);
    }
    parser.finish()
}

/// The index of the first line after a leading YAML front matter block (0 if there is none).
fn front_matter_end(lines: &[&str]) -> usize {
    if lines.first().map(|l| l.trim_end()) != Some("---") {
        return 0;
    }
    // The block must look like YAML: its first line is `key: ...`.
    let looks_like_yaml = lines.get(1).is_some_and(|l| {
        l.split_once(':').is_some_and(|(key, _)| {
            !key.is_empty()
                && key
                    .chars()
                    .all(|c| c.is_alphanumeric() || matches!(c, '_' | '-' | ' '))
        })
    });
    if !looks_like_yaml {
        return 0;
    }
    lines
        .iter()
        .enumerate()
        .skip(1)
        .find(|(_, l)| matches!(l.trim_end(), "---" | "..."))
        .map_or(0, |(i, _)| i + 1)
}

/// What the lines since the last blank line (or block boundary) are.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Block {
    /// After a blank line or a block that ended: the next line starts a new block.
    Start,
    /// A paragraph that began at this index of the body: it may become a setext title.
    Paragraph(usize),
    /// Some other block (list, quote, code, HTML) that cannot become a setext title.
    Other,
}

/// The heading a section started with.
struct Heading {
    id: String,
    title: String,
    /// Where its first line starts in the document.
    at: usize,
}

/// The state of the line-by-line reader.
struct Parser<'a> {
    /// The whole document, which the lines are slices of.
    doc: &'a str,
    sections: Vec<Section>,
    used_ids: HashSet<String>,
    /// The heading of the section being read (`None` before the first heading).
    heading: Option<Heading>,
    /// The lines read since the last heading.
    body: Vec<&'a str>,
    block: Block,
    /// The open code fence: its character and length.
    fence: Option<(char, usize)>,
    /// Inside a multi-line HTML comment.
    in_comment: bool,
}

impl<'a> Parser<'a> {
    fn new(doc: &'a str) -> Self {
        Self {
            doc,
            sections: Vec::new(),
            used_ids: HashSet::new(),
            heading: None,
            body: Vec::new(),
            block: Block::Start,
            fence: None,
            in_comment: false,
        }
    }

    /// Read one line.
    fn line(&mut self, line: &'a str) {
        if let Some((c, len)) = self.fence {
            if is_closing_fence(line, c, len) {
                self.fence = None;
                self.block = Block::Start;
            }
            self.body.push(line);
            return;
        }
        if self.in_comment {
            if line.contains("-->") {
                self.in_comment = false;
                self.block = Block::Start;
            }
            self.body.push(line);
            return;
        }
        if line.trim().is_empty() {
            self.block = Block::Start;
            self.body.push(line);
            return;
        }

        let indent = indentation(line);
        let trimmed = line.trim_start();
        if indent < 4 {
            if let Some(fence) = opening_fence(trimmed) {
                self.fence = Some(fence);
                self.block = Block::Other;
                self.body.push(line);
                return;
            }
            if let Some(text) = atx_heading(trimmed) {
                self.start_section(text, offset_in(self.doc, line));
                return;
            }
            if let Block::Paragraph(start) = self.block
                && is_setext_underline(trimmed)
            {
                let title = self
                    .body
                    .get(start..)
                    .unwrap_or(&[])
                    .iter()
                    .map(|l| l.trim())
                    .collect::<Vec<_>>()
                    .join(" ");
                let at = self
                    .body
                    .get(start)
                    .map_or(offset_in(self.doc, line), |l| offset_in(self.doc, l));
                self.body.truncate(start);
                self.start_section(&title, at);
                return;
            }
            if let Some(rest) = trimmed.strip_prefix("<!--") {
                self.in_comment = !rest.contains("-->");
                self.block = Block::Other;
                self.body.push(line);
                return;
            }
            if is_thematic_break(trimmed) {
                self.block = Block::Start;
                self.body.push(line);
                return;
            }
        }

        self.block = match self.block {
            Block::Start if indent < 4 && starts_paragraph(trimmed) => {
                Block::Paragraph(self.body.len())
            }
            Block::Start => Block::Other,
            Block::Paragraph(_) if indent < 4 && interrupts_paragraph(trimmed) => Block::Other,
            block => block,
        };
        self.body.push(line);
    }

    /// Close the current section and start one for a heading with this text (which may end
    /// with an attribute block).
    fn start_section(&mut self, text: &str, at: usize) {
        self.close_section();
        let (title, explicit_id) = split_attributes(text);
        let title = strip_closing_sequence(title);
        let base = match explicit_id {
            Some(id) => id.to_string(),
            None => {
                let slug = slugify(title);
                if slug.is_empty() {
                    "section".to_string()
                } else {
                    slug
                }
            }
        };
        let mut id = base.clone();
        let mut counter = 0;
        while self.used_ids.contains(&id) {
            counter += 1;
            id = format!("{base}-{counter}");
        }
        self.used_ids.insert(id.clone());
        self.heading = Some(Heading {
            id,
            title: title.to_string(),
            at,
        });
        self.block = Block::Start;
    }

    /// Turn the lines read since the last heading into that heading's section.
    fn close_section(&mut self) {
        let body = std::mem::take(&mut self.body);
        let Some(heading) = self.heading.take() else {
            return;
        };
        let mut lines: Vec<String> = body.iter().map(|l| l.trim_end().to_string()).collect();
        let mut at: Vec<usize> = body.iter().map(|l| offset_in(self.doc, l)).collect();
        while lines.last().is_some_and(|l| l.is_empty()) {
            lines.pop();
            at.pop();
        }
        let leading = lines.iter().take_while(|l| l.is_empty()).count();
        lines.drain(..leading);
        at.drain(..leading);
        self.sections.push(Section {
            id: heading.id,
            title: heading.title,
            lines,
            at,
            title_at: heading.at,
        });
    }

    /// The sections, once every line is read.
    fn finish(mut self) -> Vec<Section> {
        self.close_section();
        self.sections
    }
}

/// The indentation of a line in columns (a tab advances to the next multiple of 4).
fn indentation(line: &str) -> usize {
    let mut columns = 0;
    for c in line.chars() {
        match c {
            ' ' => columns += 1,
            '\t' => columns += 4 - columns % 4,
            _ => break,
        }
    }
    columns
}

/// The text of an ATX heading (`## Title ##` → `Title`), given the line without indentation.
fn atx_heading(trimmed: &str) -> Option<&str> {
    let hashes = trimmed.chars().take_while(|&c| c == '#').count();
    if !(1..=6).contains(&hashes) {
        return None;
    }
    let after = trimmed.get(hashes..)?;
    if !after.is_empty() && !after.starts_with([' ', '\t']) {
        return None;
    }
    Some(strip_closing_sequence(after.trim()))
}

/// Remove an ATX heading's optional closing sequence of `#`s, which must be preceded by a
/// space or make up the whole text (`Title ##` → `Title`, `C#` stays).
fn strip_closing_sequence(content: &str) -> &str {
    let content = content.trim();
    let without = content.trim_end_matches('#');
    if without.len() != content.len() && (without.is_empty() || without.ends_with([' ', '\t'])) {
        without.trim_end()
    } else {
        content
    }
}

/// Split a trailing attribute block off a heading's text: `Title {#id .class}` → (`Title`,
/// `Some("id")`). The last `#id` of the block wins; a block without one gives no id.
fn split_attributes(text: &str) -> (&str, Option<&str>) {
    let text = text.trim();
    if let Some(inner_end) = text.strip_suffix('}')
        && let Some(open) = inner_end.rfind('{')
        && let Some(inner) = inner_end.get(open + 1..)
        && !inner.contains('}')
    {
        let id = inner
            .split_whitespace()
            .filter_map(|token| token.strip_prefix('#'))
            .rfind(|id| !id.is_empty());
        let title = inner_end.get(..open).unwrap_or("").trim_end();
        return (title, id);
    }
    (text, None)
}

/// Whether a line (without indentation) underlines a setext heading: `=`s, or two or more `-`s.
fn is_setext_underline(trimmed: &str) -> bool {
    let t = trimmed.trim_end();
    (!t.is_empty() && t.chars().all(|c| c == '=')) || (t.len() >= 2 && t.chars().all(|c| c == '-'))
}

/// Whether a line (without indentation) is a thematic break: three or more `-`, `*` or `_`,
/// optionally separated by spaces.
fn is_thematic_break(trimmed: &str) -> bool {
    let Some(c) = trimmed.chars().next() else {
        return false;
    };
    if !matches!(c, '-' | '*' | '_') {
        return false;
    }
    let mut count = 0;
    for x in trimmed.chars() {
        if x == c {
            count += 1;
        } else if x != ' ' && x != '\t' {
            return false;
        }
    }
    count >= 3
}

/// The fence character and length when a line (without indentation) opens a code fence.
fn opening_fence(trimmed: &str) -> Option<(char, usize)> {
    let c = trimmed.chars().next()?;
    if c != '`' && c != '~' {
        return None;
    }
    let len = trimmed.chars().take_while(|&x| x == c).count();
    if len < 3 {
        return None;
    }
    // A backtick fence's info string cannot contain backticks.
    if c == '`' && trimmed.get(len..).is_some_and(|info| info.contains('`')) {
        return None;
    }
    Some((c, len))
}

/// Whether `line` closes a fence opened with `len` times `c`.
fn is_closing_fence(line: &str, c: char, len: usize) -> bool {
    if indentation(line) >= 4 {
        return false;
    }
    let t = line.trim();
    t.chars().take_while(|&x| x == c).count() >= len && t.chars().all(|x| x == c)
}

/// Whether a line (without indentation) starts a list item.
fn is_list_item(trimmed: &str) -> bool {
    let mut chars = trimmed.chars();
    match chars.next() {
        Some('-' | '*' | '+') => chars.next().is_none_or(|c| c == ' ' || c == '\t'),
        Some(c) if c.is_ascii_digit() => {
            let digits = trimmed.chars().take_while(char::is_ascii_digit).count();
            let rest = trimmed.get(digits..).unwrap_or("");
            digits <= 9
                && rest.starts_with(['.', ')'])
                && rest
                    .get(1..)
                    .is_some_and(|r| r.is_empty() || r.starts_with([' ', '\t']))
        }
        _ => false,
    }
}

/// Whether a line (without indentation) after a blank line starts a paragraph (and not a
/// list item or block quote).
fn starts_paragraph(trimmed: &str) -> bool {
    !is_list_item(trimmed) && !trimmed.starts_with('>')
}

/// Whether a line (without indentation) ends the paragraph before it by starting another block.
fn interrupts_paragraph(trimmed: &str) -> bool {
    is_list_item(trimmed) || trimmed.starts_with('>')
}

/// The ASCII spelling of a Latin-1 letter (`é` → `e`), as transliteration would give it.
fn fold_latin1(c: char) -> Option<&'static str> {
    Some(match c {
        'À'..='Å' | 'à'..='å' => "a",
        'Æ' | 'æ' => "ae",
        'Ç' | 'ç' => "c",
        'È'..='Ë' | 'è'..='ë' => "e",
        'Ì'..='Ï' | 'ì'..='ï' => "i",
        'Ð' | 'ð' => "d",
        'Ñ' | 'ñ' => "n",
        'Ò'..='Ö' | 'Ø' | 'ò'..='ö' | 'ø' => "o",
        'Ù'..='Ü' | 'ù'..='ü' => "u",
        'Ý' | 'ý' | 'ÿ' => "y",
        'Þ' | 'þ' => "th",
        'ß' => "ss",
        _ => return None,
    })
}

/// The slug of a heading title (see the module documentation); also names IETF's unnumbered
/// sections (`name-<slug>`).
pub(crate) fn slugify(title: &str) -> String {
    let mut slug = String::with_capacity(title.len());
    let mut dash = true;
    for c in title.chars() {
        if let Some(folded) = fold_latin1(c) {
            slug.push_str(folded);
            dash = false;
        } else if c.is_alphanumeric() {
            slug.extend(c.to_lowercase());
            dash = false;
        } else if !dash {
            slug.push('-');
            dash = true;
        }
    }
    if slug.ends_with('-') {
        slug.pop();
    }
    slug
}

#[cfg(test)]
mod tests {
    use super::*;

    fn summary(sections: &[Section]) -> Vec<(&str, &str)> {
        sections
            .iter()
            .map(|s| (s.id.as_str(), s.title.as_str()))
            .collect()
    }

    #[test]
    fn atx_sections_are_flat() {
        let sections = parse(
            "\
# This is a test

Content goes here. Another
sentence here.

## This is another test

More content goes here

### Nested section

Testing 123

## Up one

Another section
",
        );
        assert_eq!(
            summary(&sections),
            vec![
                ("this-is-a-test", "This is a test"),
                ("this-is-another-test", "This is another test"),
                ("nested-section", "Nested section"),
                ("up-one", "Up one"),
            ]
        );
        assert_eq!(
            sections[0].lines,
            vec!["Content goes here. Another", "sentence here."]
        );
        assert_eq!(sections[1].lines, vec!["More content goes here"]);
        assert_eq!(sections[3].content(), "Another section");
    }

    #[test]
    fn explicit_ids() {
        let sections = parse(
            "\
# Heading with ID {#custom-id}

Content under heading with custom ID.

## Another heading {#another-id .class key=value}

More content here.

### Closing hashes ### {#closed}

# Regular heading

This heading doesn't have a custom ID.

## Classes only {.note}

## Two ids {#first #second}
",
        );
        assert_eq!(
            summary(&sections),
            vec![
                ("custom-id", "Heading with ID"),
                ("another-id", "Another heading"),
                ("closed", "Closing hashes"),
                ("regular-heading", "Regular heading"),
                ("classes-only", "Classes only"),
                ("second", "Two ids"),
            ]
        );
    }

    #[test]
    fn duplicate_ids_are_numbered() {
        let sections = parse(
            "\
# Duplicate header

testing 123

## Duplicate header

other test

### Duplicate header

# Other {#duplicate-header-3}

# Duplicate header
",
        );
        assert_eq!(
            sections.iter().map(|s| s.id.as_str()).collect::<Vec<_>>(),
            vec![
                "duplicate-header",
                "duplicate-header-1",
                "duplicate-header-2",
                "duplicate-header-3",
                "duplicate-header-4",
            ]
        );
        assert_eq!(sections[0].lines, vec!["testing 123"]);
        assert_eq!(sections[1].lines, vec!["other test"]);
        assert!(sections[2].lines.is_empty());
    }

    #[test]
    fn slugs_follow_the_slug_crate() {
        assert_eq!(slugify("What's New?"), "what-s-new");
        assert_eq!(slugify("TLS_AES_128 -- Cipher"), "tls-aes-128-cipher");
        assert_eq!(slugify("  --test_-_cool"), "test-cool");
        assert_eq!(slugify("My Test String!!!1!1"), "my-test-string-1-1");
        assert_eq!(slugify("You & Me"), "you-me");
        assert_eq!(slugify("user@example.com"), "user-example-com");
        assert_eq!(slugify("Æúü--cool?"), "aeuu-cool");
        assert_eq!(slugify("Straße über"), "strasse-uber");
        assert_eq!(slugify("Überblick — Δέλτα"), "uberblick-δέλτα");
        assert_eq!(slugify("!!!"), "");
        assert_eq!(slugify("Foo **bar baz**"), "foo-bar-baz");
    }

    #[test]
    fn code_fences_and_comments_hide_headings() {
        let sections = parse(
            "\
# Real

```markdown
# Not a heading
Not a title
===
```

~~~~
## Still code
~~~
### Still code (short close)
~~~~

    # indented code

<!--
# commented out
-->
<!-- # one-line comment -->

## After
",
        );
        assert_eq!(
            summary(&sections),
            vec![("real", "Real"), ("after", "After")]
        );
        assert_eq!(sections[0].lines.len(), 18);
        assert_eq!(sections[0].lines[1], "# Not a heading");
        assert_eq!(sections[0].lines[17], "<!-- # one-line comment -->");
    }

    #[test]
    fn setext_headings() {
        let sections = parse(
            "\
Preamble text.

Title
=====

Intro text.

Foo *bar
baz* {#blah}
---

Content goes here. Another
sentence here.

- a list item
---

> quote
===

***

Sub
--
body
",
        );
        assert_eq!(
            summary(&sections),
            vec![
                ("title", "Title"),
                ("blah", "Foo *bar baz*"),
                ("sub", "Sub"),
            ]
        );
        assert_eq!(sections[0].lines, vec!["Intro text."]);
        assert_eq!(
            sections[1].lines,
            vec![
                "Content goes here. Another",
                "sentence here.",
                "",
                "- a list item",
                "---",
                "",
                "> quote",
                "===",
                "",
                "***",
            ]
        );
        assert_eq!(sections[2].lines, vec!["body"]);
    }

    #[test]
    fn atx_edge_cases() {
        let sections = parse(
            "\
#hashtag is not a heading
####### seven is not a heading
   # three spaces is a heading
#
# C#
## Trailing ##   
",
        );
        assert_eq!(
            summary(&sections),
            vec![
                ("three-spaces-is-a-heading", "three spaces is a heading"),
                ("section", ""),
                ("c", "C#"),
                ("trailing", "Trailing"),
            ]
        );
    }

    #[test]
    fn text_before_the_first_heading_is_dropped() {
        let sections = parse("Intro paragraph.\n\n# First\n\nBody.\n");
        assert_eq!(summary(&sections), vec![("first", "First")]);
        assert!(parse("No headings at all.\n").is_empty());
        assert!(parse("").is_empty());
    }

    #[test]
    fn front_matter_is_skipped() {
        let sections = parse(
            "\
---
title: Example Spec
version: 1
---

# Spec

Body.
",
        );
        assert_eq!(summary(&sections), vec![("spec", "Spec")]);

        // A leading thematic break is not front matter.
        let sections = parse("---\n# Spec\n\nBody.\n\n---\n");
        assert_eq!(summary(&sections), vec![("spec", "Spec")]);
        assert_eq!(sections[0].lines, vec!["Body.", "", "---"]);
    }

    #[test]
    fn crlf_bom_and_trailing_whitespace() {
        let sections = parse("\u{feff}# One\r\n\r\nText.  \r\n\r\n## Two\r\nMore.\r\n");
        assert_eq!(summary(&sections), vec![("one", "One"), ("two", "Two")]);
        assert_eq!(sections[0].lines, vec!["Text."]);
        assert_eq!(sections[1].lines, vec!["More."]);
    }

    #[test]
    fn requirement_spec_example() {
        let sections = parse(
            "\
[//]: # \"Copyright Example\"

# AWS Encryption SDK Client

## Overview

The client MUST be constructed with a commitment policy.

### Initialization {#client-init}

On initialization, the caller:

- MUST provide a key provider
- MAY provide a retry count
",
        );
        assert_eq!(
            summary(&sections),
            vec![
                ("aws-encryption-sdk-client", "AWS Encryption SDK Client"),
                ("overview", "Overview"),
                ("client-init", "Initialization"),
            ]
        );
        assert!(sections[0].lines.is_empty());
        assert_eq!(sections[2].lines.len(), 4);
    }

    #[test]
    fn no_panic_on_odd_input() {
        let odd = [
            "#",
            "# {",
            "# }",
            "# {}",
            "# {#}",
            "# é {#é}",
            "# {#a}}",
            "=",
            "a\n=",
            "a\n-",
            "```",
            "```\n# x",
            "~~~\n~~",
            "<!--",
            "<!-- # x",
            "---",
            "---\n",
            "---\nkey: v",
            "---\n: v\n---",
            "\t# tab",
            " \t# mixed",
            "1.",
            "1)",
            "123456789012.",
            "-",
            "*",
            "é\n===",
            "\u{feff}",
        ];
        for text in odd {
            let _ = parse(text);
        }
        assert_eq!(
            summary(&parse("# {#}\n")),
            vec![("section", "")],
            "an empty id is no id"
        );
        assert_eq!(summary(&parse("é\n===\n")), vec![("e", "é")]);
    }
}
