//! Diagnostics drawn as duvet 0.4.3 draws them: the graphical report of its diagnostics
//! library (miette 7), in Unicode. A message behind `×` (an error) or `☞` (advice), wrapped;
//! the annotation it is about with a line of context on either side, its span marked and
//! labelled; a help text; then each related annotation as advice of its own ("Related context
//! for: …"). Text is wrapped as miette wraps it (first fit, at Unicode line-break
//! opportunities, hyphenated words split), to the width of the terminal (80 columns when
//! there is none); colors, when on, are miette's.

use std::fmt::Write as _;
use std::ops::Range;

use textwrap::core::Word;

/// How a diagnostic is marked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Severity {
    Error,
    Advice,
}

/// A marked span of a file, with its label.
#[derive(Debug, Clone)]
pub(super) struct Snippet<'a> {
    /// The file's name as shown (relative to the project root).
    pub file: &'a str,
    pub text: &'a str,
    pub span: Range<usize>,
    pub label: &'a str,
}

/// One diagnostic: a message, the span it is about, a help text and related spans.
#[derive(Debug, Clone)]
pub(super) struct Diagnostic<'a> {
    pub severity: Severity,
    pub message: String,
    pub snippet: Option<Snippet<'a>>,
    pub help: Option<String>,
    pub related: Vec<Snippet<'a>>,
}

impl<'a> Diagnostic<'a> {
    pub(super) fn new(severity: Severity, message: String) -> Self {
        Self {
            severity,
            message,
            snippet: None,
            help: None,
            related: Vec::new(),
        }
    }
}

/// ANSI styles, as miette's theme uses them.
#[derive(Debug, Clone, Copy)]
enum Style {
    Error,
    Advice,
    Help,
    Link,
    Linum,
    Highlight,
    Pass,
    Progress,
}

impl Style {
    fn code(self) -> &'static str {
        match self {
            Self::Error => "31",
            Self::Advice | Self::Help => "36",
            Self::Link => "36;4;1",
            Self::Linum => "2",
            Self::Highlight => "35;1",
            Self::Pass => "32;1",
            Self::Progress => "36;1",
        }
    }
}

/// Draws diagnostics.
#[derive(Debug, Clone)]
pub struct Renderer {
    width: usize,
    color: bool,
    /// The lines of each text drawn from, by where the text is and its length (the texts of
    /// one run stay put): a file with thousands of findings is not split again for each.
    lines: std::cell::RefCell<LineTables>,
}

/// The lines of texts, by where each text is and its length.
type LineTables = std::collections::HashMap<(usize, usize), std::rc::Rc<Vec<Line>>>;

const TAB_WIDTH: usize = 4;

impl Renderer {
    /// A renderer wrapping at `width` columns, with colors or not.
    pub fn new(width: usize, color: bool) -> Self {
        Self {
            width,
            color,
            lines: Default::default(),
        }
    }

    /// [`line_table`] of `text`, made once.
    fn lines_of(&self, text: &str) -> std::rc::Rc<Vec<Line>> {
        let key = (text.as_ptr() as usize, text.len());
        self.lines
            .borrow_mut()
            .entry(key)
            .or_insert_with(|| std::rc::Rc::new(line_table(text)))
            .clone()
    }

    /// As 0.4.3 draws on this terminal: colors when standard error is a terminal and
    /// `NO_COLOR` is not set; the width of the terminal on standard output, else 80.
    pub fn for_terminal() -> Self {
        use std::io::IsTerminal;
        let color = std::env::var_os("NO_COLOR").is_none() && std::io::stderr().is_terminal();
        let width = terminal_size::terminal_size().map_or(80, |(w, _)| usize::from(w.0));
        Self::new(width, color)
    }

    fn paint(&self, text: &str, style: Style) -> String {
        if self.color {
            format!("\x1b[{}m{text}\x1b[0m", style.code())
        } else {
            text.to_string()
        }
    }

    /// A check's verdict, `✓ PASS` or `✗ FAIL` (in green or red on a terminal; 0.4.3 colors
    /// neither).
    pub(super) fn verdict(&self, passed: bool) -> String {
        if passed {
            self.paint("✓ PASS", Style::Pass)
        } else {
            self.paint("✗ FAIL", Style::Error)
        }
    }

    /// A line as 0.4.3's progress lines print it: the text to its first space right-aligned
    /// to 12 columns (cyan on a terminal), then the rest.
    pub(super) fn progress(&self, line: &str) -> String {
        match line.split_once(' ') {
            Some((status, info)) => {
                let status = self.paint(&format!("{status:>12}"), Style::Progress);
                format!("{status} {info}")
            }
            None => line.to_string(),
        }
    }

    /// `text` filled as miette fills it: at the width less two, `first` before its first line
    /// and `rest` before the others.
    fn fill(&self, text: &str, first: &str, rest: &str) -> String {
        let options = textwrap::Options::new(self.width.saturating_sub(2))
            .initial_indent(first)
            .subsequent_indent(rest)
            .break_words(true)
            .wrap_algorithm(textwrap::WrapAlgorithm::FirstFit)
            .word_separator(textwrap::WordSeparator::Custom(unicode_words));
        textwrap::fill(text, options)
    }

    /// Append `diagnostic`, drawn, to `out` (it ends with a line break).
    pub(super) fn render(&self, diagnostic: &Diagnostic<'_>, out: &mut String) {
        self.message(diagnostic.severity, &diagnostic.message, out);
        if let Some(snippet) = &diagnostic.snippet {
            self.snippet(snippet, out);
        }
        if let Some(help) = &diagnostic.help {
            let first = self.paint("  help: ", Style::Help);
            out.push_str(&self.fill(help, &first, "        "));
            out.push('\n');
        }
        for related in &diagnostic.related {
            out.push_str("\nAdvice: \n");
            let message = format!("Related context for:\n {}", diagnostic.message);
            self.message(Severity::Advice, &message, out);
            self.snippet(related, out);
        }
    }

    fn message(&self, severity: Severity, message: &str, out: &mut String) {
        let (icon, style) = match severity {
            Severity::Error => ("×", Style::Error),
            Severity::Advice => ("☞", Style::Advice),
        };
        let first = format!("  {} ", self.paint(icon, style));
        let rest = format!("  {} ", self.paint("│", style));
        out.push_str(&self.fill(message, &first, &rest));
        out.push('\n');
    }

    /// The lines around `snippet`'s span, the span marked.
    fn snippet(&self, snippet: &Snippet<'_>, out: &mut String) {
        let text = snippet.text;
        let lines = self.lines_of(text);
        let Some(last_line) = lines.len().checked_sub(1) else {
            return;
        };
        let start = snippet.span.start.min(text.len());
        let end = snippet.span.end.clamp(start, text.len());
        let line_of = |offset: usize| lines.partition_point(|l| l.next <= offset).min(last_line);
        let first = line_of(start);
        let last = if end > start { line_of(end - 1) } else { first };
        let multi = last > first;
        let shown = first.saturating_sub(1)..=(last + 1).min(last_line);
        let width = (shown.end() + 1).to_string().len();
        let column = start - lines[first].start + 1;

        let _ = writeln!(
            out,
            "{}╭─[{}]",
            " ".repeat(width + 2),
            self.paint(
                &format!("{}:{}:{column}", snippet.file, first + 1),
                Style::Link
            )
        );
        let no_linum = format!(" {:width$} · ", "");
        for n in shown {
            let line = &lines[n];
            let number = format!("{:width$}", n + 1);
            let _ = write!(out, " {} │ ", self.paint(&number, Style::Linum));
            let content = &text[line.start..line.end];
            if multi {
                let (mark, pad) = if n == first {
                    ("╭─▶", " ")
                } else if n == last {
                    ("├─▶", " ")
                } else if n > first && n < last {
                    ("│", "   ")
                } else {
                    ("", "    ")
                };
                if !mark.is_empty() {
                    out.push_str(&self.paint(mark, Style::Highlight));
                }
                out.push_str(pad);
            }
            render_line(content, out);
            out.push('\n');
            if !multi && n == first {
                // The span underlined, a tick in its middle, the label below the tick.
                let from = visual_width(&content[..start - line.start]);
                let to = if end > start {
                    visual_width(&content[..(end - line.start).min(content.len())]).max(from + 1)
                } else {
                    from + 1
                };
                let tick = (from + to) / 2;
                let mark = if end == start { "▲" } else { "┬" };
                let underline = format!(
                    "{}{mark}{}",
                    "─".repeat(tick - from),
                    "─".repeat(to - tick - 1)
                );
                let _ = writeln!(
                    out,
                    "{no_linum}{}{}",
                    " ".repeat(from),
                    self.paint(&underline, Style::Highlight)
                );
                let label = format!("╰── {}", snippet.label);
                let _ = writeln!(
                    out,
                    "{no_linum}{}{}",
                    " ".repeat(tick),
                    self.paint(&label, Style::Highlight)
                );
            } else if multi && n == last {
                let label = format!("╰──── {}", snippet.label);
                let _ = writeln!(out, "{no_linum}{}", self.paint(&label, Style::Highlight));
            }
        }
        let _ = writeln!(out, "{}╰────", " ".repeat(width + 2));
    }
}

/// A line of a file: its text's bytes (without the line break) and where the next begins.
#[derive(Debug)]
struct Line {
    start: usize,
    end: usize,
    next: usize,
}

/// The lines of `text` as `str::lines` splits them (`\n` or `\r\n`; a final line break
/// starts no line), with their offsets.
fn line_table(text: &str) -> Vec<Line> {
    let mut lines = Vec::new();
    let mut start = 0;
    while start < text.len() {
        let (end, next) = match memchr::memchr(b'\n', &text.as_bytes()[start..]) {
            Some(at) => {
                let at = start + at;
                let end = if at > start && text.as_bytes()[at - 1] == b'\r' {
                    at - 1
                } else {
                    at
                };
                (end, at + 1)
            }
            None => (text.len(), text.len()),
        };
        lines.push(Line { start, end, next });
        start = next;
    }
    lines
}

/// How many columns `text` takes: tabs to the next multiple of four, other characters by
/// their Unicode width.
fn visual_width(text: &str) -> usize {
    let mut column = 0;
    for c in text.chars() {
        column += char_width(c, column);
    }
    column
}

fn char_width(c: char, column: usize) -> usize {
    if c == '\t' {
        TAB_WIDTH - column % TAB_WIDTH
    } else {
        let mut buf = [0; 4];
        textwrap::core::display_width(c.encode_utf8(&mut buf))
    }
}

/// A line of a file as shown: tabs as spaces.
fn render_line(text: &str, out: &mut String) {
    let mut column = 0;
    for c in text.chars() {
        let width = char_width(c, column);
        if c == '\t' {
            out.extend(std::iter::repeat_n(' ', width));
        } else {
            out.push(c);
        }
        column += width;
    }
}

/// The words of `line` for wrapping, split where the Unicode line-breaking algorithm allows a
/// break, except after a hyphen (hyphens are left to textwrap's splitter): the word separator
/// of textwrap 0.16.2 with its `unicode-linebreak` feature, which duvet 0.4.3 wraps with.
fn unicode_words(line: &str) -> Box<dyn Iterator<Item = Word<'_>> + '_> {
    let mut breaks: Vec<usize> = unicode_linebreak::linebreaks(line)
        .map(|(at, _)| at)
        .filter(|&at| {
            !matches!(
                line.get(..at).and_then(|before| before.chars().next_back()),
                Some('-' | '\u{ad}')
            )
        })
        .collect();
    // The last opportunity is the end of the line.
    breaks.pop();
    let mut words = Vec::with_capacity(breaks.len() + 1);
    let mut start = 0;
    for at in breaks {
        if let Some(word) = line.get(start..at) {
            words.push(Word::from(word));
            start = at;
        }
    }
    if start < line.len() {
        words.push(Word::from(&line[start..]));
    }
    Box::new(words.into_iter())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plain() -> Renderer {
        Renderer::new(80, false)
    }

    #[test]
    fn a_multi_line_span_is_marked_in_the_gutter() {
        let text = "// a\n//= spec.md#s\n//# The text\nfn f() {}\n";
        let d = Diagnostic {
            severity: Severity::Error,
            message: "Missing test".to_string(),
            snippet: Some(Snippet {
                file: "src/a.rs",
                text,
                span: 9..31,
                label: "Implementation",
            }),
            help: None,
            related: Vec::new(),
        };
        let mut out = String::new();
        plain().render(&d, &mut out);
        assert_eq!(
            out,
            "  × Missing test\n   ╭─[src/a.rs:2:5]\n 1 │     // a\n 2 │ ╭─▶ //= spec.md#s\n \
             3 │ ├─▶ //# The text\n   · ╰──── Implementation\n 4 │     fn f() {}\n   ╰────\n"
        );
    }

    #[test]
    fn a_span_on_one_line_is_underlined_and_labelled() {
        let text = "x\n//= spec.md#intro\ny\n";
        let d = Diagnostic {
            severity: Severity::Error,
            message: "Duplicate".to_string(),
            snippet: Some(Snippet {
                file: "a.rs",
                text,
                span: 6..19,
                label: "Duplicate",
            }),
            help: None,
            related: Vec::new(),
        };
        let mut out = String::new();
        plain().render(&d, &mut out);
        assert_eq!(
            out,
            "  × Duplicate\n   ╭─[a.rs:2:5]\n 1 │ x\n 2 │ //= spec.md#intro\n   ·     \
             ──────┬──────\n   ·           ╰── Duplicate\n 3 │ y\n   ╰────\n"
        );
    }

    #[test]
    fn long_help_is_wrapped_under_its_indent() {
        let d = Diagnostic {
            help: Some(format!("\n//# {}\n", "word ".repeat(20).trim_end())),
            ..Diagnostic::new(Severity::Error, "Missing annotation".to_string())
        };
        let mut out = String::new();
        plain().render(&d, &mut out);
        assert_eq!(
            out,
            format!(
                "  × Missing annotation\n  help: \n        //# {}\n        {}\n        \n",
                "word ".repeat(13).trim_end(),
                "word ".repeat(7).trim_end()
            )
        );
    }
}
