//! Markdown for a terminal: a description or a comment as `pulldown-cmark` reads it, written
//! as indented, wrapped lines: headings in bold (without their `#`), bullets, numbered
//! items and checklists (☐ ☑), code blocks indented, inline code coloured, links with
//! their address, quotes barred, tables aligned (`comfy-table`).
//!
//! Written here rather than taken from a terminal-markdown crate: the one well-kept crate
//! (termimad) has no checklists and centres headings across the screen, and the page's
//! own headings must stay above the description's (it is indented under them).

use anstyle::{AnsiColor, Color, Style};
use pulldown_cmark::{Event, HeadingLevel, Options, Parser, Tag, TagEnd};

use super::{Painter, sanitized};

/// The deepest nesting of quotes, and of lists, that is drawn: deeper blocks are drawn at
/// this depth (indenting by the depth would make the output grow as its square).
const MAX_DEPTH: usize = 8;

/// The fewest columns of text a wrapped line keeps past its indent (on a narrow terminal a
/// deep indent would otherwise leave one word a line).
const MIN_TEXT_WIDTH: usize = 10;

/// The most work the parser is given, in nesting × lines: it reads each line against every
/// quote and list still open, so a text that opens thousands of them on one line and then
/// writes thousands of lines takes time as their product (minutes for a megabyte).
const MAX_NESTING_WORK: usize = 1 << 24;

/// Whether `markdown` could nest so deep, for so many lines, that reading it would take too
/// long: the longest run of what opens quotes and lists at a line's start (`>`, markers,
/// numbers, indents) bounds the depth.
fn too_deep(markdown: &str) -> bool {
    let mut deepest = 0;
    let mut lines = 0;
    for line in markdown.lines() {
        lines += 1;
        let lead = line
            .bytes()
            .take_while(|b| b" \t>-*+.)".contains(b) || b.is_ascii_digit())
            .count();
        deepest = deepest.max(lead);
    }
    deepest.saturating_mul(lines) > MAX_NESTING_WORK
}

/// `text` without anything that drives the terminal: markdown's entities (`&#x1b;`) and
/// link addresses can decode to what the stored text never held, so each text of the
/// parser is cleaned again. Tabs become spaces; line feeds stay when `newlines`.
fn safe(text: &str, newlines: bool) -> String {
    let keep: &[char] = if newlines { &['\n'] } else { &[] };
    sanitized(&text.replace('\t', " "), keep)
}

/// `markdown` as lines of text, each indented by `indent` spaces.
pub fn render(markdown: &str, p: &Painter, indent: usize) -> Vec<String> {
    let options =
        Options::ENABLE_TASKLISTS | Options::ENABLE_STRIKETHROUGH | Options::ENABLE_TABLES;
    let mut w = Writer {
        p,
        indent,
        lines: Vec::new(),
        text: String::new(),
        styles: Vec::new(),
        lists: Vec::new(),
        marker: None,
        item_indent: 0,
        quote: 0,
        heading: None,
        code: None,
        links: Vec::new(),
        table: None,
    };
    if too_deep(markdown) {
        // As it is written, line by line.
        w.push_text(markdown);
    } else {
        for event in Parser::new_ext(markdown, options) {
            w.event(event);
        }
    }
    w.flush();
    while w.lines.last().is_some_and(|l| l.trim().is_empty()) {
        w.lines.pop();
    }
    w.lines
}

struct TableState {
    rows: Vec<Vec<String>>,
    cell: String,
}

struct Writer<'p> {
    p: &'p Painter,
    indent: usize,
    lines: Vec<String>,
    /// The inline text of the block being read.
    text: String,
    /// Inline styles in force (emphasis, strong, …), innermost last.
    styles: Vec<Style>,
    /// Open lists: the next number of a numbered one.
    lists: Vec<Option<u64>>,
    /// The marker of the item whose first line is still to be written.
    marker: Option<String>,
    /// The indent of the items' text, past their markers.
    item_indent: usize,
    quote: usize,
    heading: Option<HeadingLevel>,
    code: Option<String>,
    links: Vec<String>,
    table: Option<TableState>,
}

impl Writer<'_> {
    fn event(&mut self, event: Event<'_>) {
        match event {
            Event::Start(tag) => self.start(tag),
            Event::End(tag) => self.end(tag),
            Event::Text(text) => self.push_text(&text),
            Event::Code(code) => {
                let code = safe(&code, false);
                let shown = if self.p.color {
                    self.p.paint(
                        Style::new().fg_color(Some(Color::Ansi(AnsiColor::Cyan))),
                        &code,
                    )
                } else {
                    format!("`{code}`")
                };
                self.push_styled(&shown);
            }
            Event::InlineMath(text) | Event::DisplayMath(text) => self.push_text(&text),
            Event::Html(html) | Event::InlineHtml(html) => self.push_text(&html),
            Event::SoftBreak => self.push_text(" "),
            Event::HardBreak => self.text.push('\n'),
            Event::Rule => {
                self.flush();
                self.blank();
                let prefix = self.prefix();
                let rule = self.p.dim(&"─".repeat(20));
                self.lines.push(format!("{prefix}{rule}"));
            }
            Event::TaskListMarker(done) => {
                self.marker = Some(match (done, self.p.color) {
                    (true, true) => self.p.paint(
                        Style::new().fg_color(Some(Color::Ansi(AnsiColor::Green))),
                        "☑ ",
                    ),
                    (false, true) => "☐ ".to_string(),
                    (true, false) => "[x] ".to_string(),
                    (false, false) => "[ ] ".to_string(),
                });
            }
            Event::FootnoteReference(name) => self.push_text(&format!("[{name}]")),
        }
    }

    fn start(&mut self, tag: Tag<'_>) {
        match tag {
            Tag::Paragraph => {
                self.flush();
                if self.lists.is_empty() {
                    self.blank();
                }
            }
            Tag::Heading { level, .. } => {
                self.flush();
                self.blank();
                self.heading = Some(level);
            }
            Tag::BlockQuote(_) => {
                self.flush();
                self.blank();
                self.quote += 1;
            }
            // The language of a fenced block is not shown.
            Tag::CodeBlock(_) => {
                self.flush();
                self.blank();
                self.code = Some(String::new());
            }
            Tag::List(start) => {
                self.flush();
                if self.lists.is_empty() {
                    self.blank();
                }
                self.lists.push(start);
            }
            Tag::Item => {
                self.flush();
                let depth = self.lists.len().saturating_sub(1);
                self.item_indent = depth.min(MAX_DEPTH) * 2;
                let marker = match self.lists.last_mut() {
                    Some(Some(n)) => {
                        let marker = format!("{n}. ");
                        *n += 1;
                        marker
                    }
                    _ if depth.is_multiple_of(2) => "• ".to_string(),
                    _ => "◦ ".to_string(),
                };
                self.marker = Some(marker);
            }
            Tag::Emphasis => self.open(Style::new().italic()),
            Tag::Strong => self.open(Style::new().bold()),
            Tag::Strikethrough => self.open(Style::new().strikethrough()),
            Tag::Link { dest_url, .. } | Tag::Image { dest_url, .. } => {
                self.links.push(safe(&dest_url, false));
                self.open(Style::new().underline());
            }
            Tag::Table(_) => {
                self.flush();
                self.blank();
                self.table = Some(TableState {
                    rows: Vec::new(),
                    cell: String::new(),
                });
            }
            Tag::TableHead | Tag::TableRow => {
                if let Some(table) = &mut self.table {
                    table.rows.push(Vec::new());
                }
            }
            Tag::TableCell => {
                if let Some(table) = &mut self.table {
                    table.cell.clear();
                }
            }
            _ => {}
        }
    }

    fn end(&mut self, tag: TagEnd) {
        match tag {
            TagEnd::Paragraph => self.flush(),
            TagEnd::Heading(_) => {
                self.flush();
            }
            TagEnd::BlockQuote(_) => {
                self.flush();
                self.quote = self.quote.saturating_sub(1);
            }
            TagEnd::CodeBlock => self.code_block(),
            TagEnd::List(_) => {
                self.flush();
                self.lists.pop();
                if self.lists.is_empty() {
                    self.blank();
                }
            }
            TagEnd::Item => self.flush(),
            TagEnd::Emphasis | TagEnd::Strong | TagEnd::Strikethrough => self.close(),
            TagEnd::Link | TagEnd::Image => {
                self.close();
                if let Some(url) = self.links.pop()
                    && !url.is_empty()
                    && !self.text.ends_with(url.as_str())
                {
                    let shown = self.p.dim(&format!(" ({url})"));
                    self.push_styled(&shown);
                }
            }
            TagEnd::TableCell => {
                if let Some(table) = &mut self.table {
                    let cell = std::mem::take(&mut table.cell);
                    if let Some(row) = table.rows.last_mut() {
                        row.push(cell);
                    }
                }
            }
            TagEnd::Table => self.table_block(),
            _ => {}
        }
    }

    fn open(&mut self, style: Style) {
        self.styles.push(style);
        if self.p.color {
            let code = style.render().to_string();
            self.push_styled(&code);
        }
    }

    fn close(&mut self) {
        self.styles.pop();
        if self.p.color {
            // Reset, then what is still in force.
            let mut codes = anstyle::Reset.render().to_string();
            for style in &self.styles {
                codes.push_str(&style.render().to_string());
            }
            self.push_styled(&codes);
        }
    }

    fn push_text(&mut self, text: &str) {
        if let Some(code) = &mut self.code {
            // Tabs are expanded when the block is written.
            code.push_str(&sanitized(text, &['\n', '\t']));
        } else if let Some(table) = &mut self.table {
            table.cell.push_str(&safe(text, false));
        } else {
            // Control characters of a stored text never reach the terminal.
            self.text.push_str(&safe(text, true));
        }
    }

    /// Text that carries its own escape codes.
    fn push_styled(&mut self, text: &str) {
        if let Some(table) = &mut self.table {
            table.cell.push_str(text);
        } else {
            self.text.push_str(text);
        }
    }

    /// The indent of a line at the current depth (quotes barred), without an item's marker.
    fn prefix(&self) -> String {
        let mut prefix = " ".repeat(self.indent);
        prefix.push_str(&self.p.dim(&"│ ".repeat(self.quote.min(MAX_DEPTH))));
        prefix.push_str(&" ".repeat(self.item_indent));
        prefix
    }

    /// A blank line, unless the last line is one (or there is none yet).
    fn blank(&mut self) {
        if self.lines.last().is_some_and(|l| !l.trim().is_empty()) {
            self.lines.push(String::new());
        }
    }

    /// Write the block's inline text, wrapped, the item's marker on its first line.
    fn flush(&mut self) {
        let marker = self.marker.take();
        let text = std::mem::take(&mut self.text);
        if text.trim().is_empty() {
            // An item whose text comes in a later block keeps its marker for it.
            if marker.is_some() && self.lists.is_empty() {
                return;
            }
            self.marker = marker;
            return;
        }
        let text = match self.heading.take() {
            Some(level) => {
                let style = match level {
                    HeadingLevel::H1 | HeadingLevel::H2 => Style::new().bold().underline(),
                    _ => Style::new().bold(),
                };
                self.p.paint(style, text.trim())
            }
            None => text,
        };
        let prefix = self.prefix();
        let (first, rest) = match &marker {
            Some(marker) => (
                format!("{prefix}{marker}"),
                format!(
                    "{prefix}{}",
                    " ".repeat(textwrap::core::display_width(marker))
                ),
            ),
            None => (prefix.clone(), prefix),
        };
        let mut first_line = true;
        for line in text.split('\n') {
            let lead = if first_line { &first } else { &rest };
            first_line = false;
            match self.p.width {
                Some(width) => {
                    let width = width.max(textwrap::core::display_width(lead) + MIN_TEXT_WIDTH);
                    let options = textwrap::Options::new(width)
                        .initial_indent(lead)
                        .subsequent_indent(&rest);
                    for wrapped in textwrap::wrap(line.trim_end(), options) {
                        self.lines.push(wrapped.into_owned());
                    }
                }
                None => self.lines.push(format!("{lead}{}", line.trim_end())),
            }
        }
    }

    fn code_block(&mut self) {
        let code = self.code.take().unwrap_or_default();
        let prefix = format!("{}    ", self.prefix());
        let style = Style::new().fg_color(Some(Color::Ansi(AnsiColor::Cyan)));
        for line in code.trim_end_matches('\n').split('\n') {
            let line = line.replace('\t', "    ");
            let line = safe(&line, false);
            self.lines
                .push(format!("{prefix}{}", self.p.paint(style, &line)));
        }
        self.blank();
    }

    fn table_block(&mut self) {
        let Some(state) = self.table.take() else {
            return;
        };
        let prefix = self.prefix();
        // A table that would take long to fit is written as plain rows.
        if !super::fits_quickly(state.rows.iter().flatten()) {
            let bar = self.p.dim(" │ ");
            for (i, row) in state.rows.iter().enumerate() {
                let row = if i == 0 {
                    row.iter().map(|h| self.p.bold(h)).collect::<Vec<_>>()
                } else {
                    row.clone()
                };
                self.lines.push(format!("{prefix}{}", row.join(&bar)));
            }
            self.blank();
            return;
        }
        let mut table = comfy_table::Table::new();
        table.load_style(comfy_table::presets::UTF8_FULL_CONDENSED);
        table.set_content_arrangement(comfy_table::ContentArrangement::Dynamic);
        if let Some(width) = self.p.width {
            let width = width.saturating_sub(self.indent).max(20);
            table.set_width(u16::try_from(width).unwrap_or(u16::MAX));
        }
        let mut rows = state.rows.into_iter();
        if let Some(header) = rows.next() {
            table.set_header(header.iter().map(|h| self.p.bold(h)));
        }
        for row in rows {
            table.add_row(row);
        }
        for line in table.to_string().lines() {
            self.lines.push(format!("{prefix}{line}"));
        }
        self.blank();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plain(markdown: &str) -> String {
        render(markdown, &Painter::plain(), 2).join("\n")
    }

    #[test]
    fn headings_lists_checklists_and_code_read_as_text() {
        let text = plain(
            "# Title\n\nSome **bold** and `code`.\n\n## Acceptance Criteria\n- [x] returns 200\n- [ ] logs\n  - nested\n1. one\n2. two\n\n```rust\nfn main() {}\n```\n\n> quoted\n\n[docs](https://example.com)",
        );
        assert_eq!(
            text,
            "  Title\n\n  Some bold and `code`.\n\n  Acceptance Criteria\n\n  [x] returns 200\n  [ ] logs\n    ◦ nested\n\n  1. one\n  2. two\n\n      fn main() {}\n\n  │ quoted\n\n  docs (https://example.com)"
        );
    }

    #[test]
    fn colour_styles_the_text_without_markers() {
        let mut p = Painter::plain();
        p.color = true;
        let text = render("## Goal\n\n**x** and `y`", &p, 0).join("\n");
        assert!(
            !text.contains("##") && !text.contains("**") && !text.contains('`'),
            "{text:?}"
        );
        assert!(text.contains("\x1b["), "{text:?}");
    }

    #[test]
    fn paragraphs_wrap_to_the_width_under_their_indent() {
        let mut p = Painter::plain();
        p.width = Some(24);
        let lines = render("one two three four five six seven eight nine", &p, 4);
        assert!(lines.len() > 1, "{lines:?}");
        for line in &lines {
            assert!(line.starts_with("    ") && line.len() <= 24, "{lines:?}");
        }
    }

    #[test]
    fn control_characters_never_reach_the_terminal() {
        let text = plain("a\x1b[31mred");
        assert!(!text.contains('\x1b'), "{text:?}");
    }
}
