//! The command line's text for people: colour only where it is wanted (a terminal, unless
//! `NO_COLOR`, or `--color`), aligned tables (`comfy-table`), markdown rendered for a
//! terminal ([`markdown`]), times as people say them ("2 min ago"). The MCP tools keep
//! their markdown: models read it; `--json` keeps the data as it is.

pub mod markdown;
pub mod planning;
pub mod related;
pub mod views;

use std::io::IsTerminal;

pub use anstyle::AnsiColor;
use anstyle::{Color, Style};
use chrono::{DateTime, Local, Utc};
use jility_core::model::Status;

use super::output::ColorChoice;

/// How text is painted: whether with colour, and the width to fit (none: the output is
/// not a terminal and `COLUMNS` is unset, so nothing is wrapped).
#[derive(Debug, Clone, Copy)]
pub struct Painter {
    pub color: bool,
    pub width: Option<usize>,
    /// What "now" is for relative times.
    pub now: DateTime<Utc>,
}

/// Widest a paragraph is wrapped to on a wide terminal (easier to read).
const MAX_WIDTH: usize = 120;

impl Painter {
    /// The painter of standard output: colour per `choice` (auto: what the stream and the
    /// environment say, through `anstream`: a terminal, `NO_COLOR`, `CLICOLOR_FORCE`,
    /// `TERM=dumb`), the terminal's width.
    pub fn stdout(choice: Option<ColorChoice>) -> Self {
        let stdout = std::io::stdout();
        Self {
            color: wants_color(choice, &stdout),
            width: width(&stdout),
            now: Utc::now(),
        }
    }

    /// The painter of standard error (messages), colour per `choice`.
    pub fn stderr(choice: Option<ColorChoice>) -> Self {
        let stderr = std::io::stderr();
        Self {
            color: wants_color(choice, &stderr),
            width: width(&stderr),
            now: Utc::now(),
        }
    }

    /// Plain text, no width (tests).
    #[cfg(test)]
    pub fn plain() -> Self {
        Self {
            color: false,
            width: None,
            now: Utc::now(),
        }
    }

    /// `text` in `style` (as it is without colour).
    pub fn paint(&self, style: Style, text: &str) -> String {
        if self.color && style != Style::new() && !text.is_empty() {
            format!("{}{text}{}", style.render(), style.render_reset())
        } else {
            text.to_string()
        }
    }

    pub fn bold(&self, text: &str) -> String {
        self.paint(Style::new().bold(), text)
    }

    /// `text` in the terminal's `color`.
    pub fn fg(&self, color: AnsiColor, text: &str) -> String {
        self.paint(fg(color), text)
    }

    pub fn dim(&self, text: &str) -> String {
        self.paint(Style::new().dimmed(), text)
    }

    /// A ticket's number (`API-42`).
    pub fn number(&self, text: &str) -> String {
        self.paint(fg(AnsiColor::Cyan).bold(), text)
    }

    /// A person or an agent.
    pub fn person(&self, name: &str) -> String {
        self.paint(fg(AnsiColor::Magenta), name)
    }

    /// People, or a dimmed dash for none.
    pub fn people(&self, names: &[String]) -> String {
        if names.is_empty() {
            self.dim("—")
        } else {
            names
                .iter()
                .map(|n| self.person(n))
                .collect::<Vec<_>>()
                .join(", ")
        }
    }

    /// Labels, or a dimmed dash for none.
    pub fn labels(&self, labels: &[String]) -> String {
        if labels.is_empty() {
            self.dim("—")
        } else {
            labels
                .iter()
                .map(|l| self.paint(fg(AnsiColor::Yellow), l))
                .collect::<Vec<_>>()
                .join(", ")
        }
    }

    /// A status by its display name, coloured by where it stands.
    pub fn status(&self, status: Status) -> String {
        let style = match status {
            Status::Backlog => Style::new().dimmed(),
            Status::Todo => fg(AnsiColor::Blue),
            Status::InProgress => fg(AnsiColor::Yellow).bold(),
            Status::Review => fg(AnsiColor::Magenta).bold(),
            Status::Done => fg(AnsiColor::Green),
            Status::Blocked => fg(AnsiColor::Red).bold(),
        };
        self.paint(style, status.label())
    }

    /// A success line's mark.
    pub fn ok(&self) -> String {
        self.paint(fg(AnsiColor::Green).bold(), "✓")
    }

    /// A hint line: what to run next.
    pub fn hint(&self, text: &str) -> String {
        self.dim(text)
    }

    /// A time as people say it: relative within a week ("just now", "5 min ago",
    /// "3 h ago", "yesterday", "4 days ago"), else the local date.
    pub fn when(&self, at: &str) -> String {
        when(at, self.now)
    }
}

/// Whether `c` must not reach a terminal as it is: a control character (C0, DEL and C1:
/// escape sequences, carriage returns, backspaces) or a bidirectional embedding, override
/// or isolate (U+202A–U+202E, U+2066–U+2069: text that reads other than it is stored).
pub fn is_unsafe(c: char) -> bool {
    c.is_control() || matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
}

/// `text` with every character that could drive the terminal ([`is_unsafe`]) shown as
/// U+FFFD, but for those in `keep` (line feeds and tabs where the layout wants them).
pub fn sanitized(text: &str, keep: &[char]) -> String {
    text.chars()
        .map(|c| {
            if is_unsafe(c) && !keep.contains(&c) {
                '\u{fffd}'
            } else {
                c
            }
        })
        .collect()
}

/// Whether a table of `cells` can be fitted to the width (`comfy-table`) in little time: it
/// splits a word longer than its column a character at a time, in time that grows as the
/// square of the word (a minute and a half for a commit message of 100 kB without a
/// space), and a table of thousands of cells takes seconds.
pub fn fits_quickly<'a>(cells: impl IntoIterator<Item = &'a String>) -> bool {
    const MAX_BYTES: usize = 64 * 1024;
    const MAX_WORD: usize = 1024;
    let mut size = 0;
    for cell in cells {
        size += cell.len();
        if size > MAX_BYTES || cell.split_whitespace().any(|w| w.len() > MAX_WORD) {
            return false;
        }
    }
    true
}

fn fg(color: AnsiColor) -> Style {
    Style::new().fg_color(Some(Color::Ansi(color)))
}

fn wants_color(choice: Option<ColorChoice>, stream: &impl anstream::stream::RawStream) -> bool {
    match choice {
        Some(ColorChoice::Always) => true,
        Some(ColorChoice::Never) => false,
        Some(ColorChoice::Auto) | None => !matches!(
            anstream::AutoStream::choice(stream),
            anstream::ColorChoice::Never
        ),
    }
}

fn width(stream: &(impl std::os::fd::AsFd + IsTerminal)) -> Option<usize> {
    let columns = std::env::var("COLUMNS")
        .ok()
        .and_then(|c| c.trim().parse::<usize>().ok())
        .filter(|c| *c >= 20);
    let width = if stream.is_terminal() {
        columns.or_else(|| terminal_size::terminal_size_of(stream).map(|(w, _)| usize::from(w.0)))
    } else {
        columns
    };
    width.map(|w| w.clamp(20, MAX_WIDTH))
}

/// [`Painter::when`] at `now`.
pub fn when(at: &str, now: DateTime<Utc>) -> String {
    let Ok(then) = DateTime::parse_from_rfc3339(at) else {
        return at.to_string();
    };
    let then = then.with_timezone(&Utc);
    let seconds = (now - then).num_seconds();
    match seconds {
        // A little ahead (clocks differ): now.
        -60..45 => "just now".to_string(),
        45..3_600 => format!("{} min ago", ((seconds + 30) / 60).max(1)),
        3_600..86_400 => format!("{} h ago", seconds / 3_600),
        86_400..172_800 => "yesterday".to_string(),
        172_800..604_800 => format!("{} days ago", seconds / 86_400),
        _ => {
            let local = then.with_timezone(&Local);
            if local.date_naive().format("%Y").to_string()
                == now.with_timezone(&Local).format("%Y").to_string()
            {
                local.format("%b %-d, %H:%M").to_string()
            } else {
                local.format("%Y-%m-%d").to_string()
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(text: &str) -> DateTime<Utc> {
        DateTime::parse_from_rfc3339(text)
            .map(|t| t.with_timezone(&Utc))
            .unwrap_or_default()
    }

    #[test]
    fn times_are_said_as_people_say_them() {
        let now = at("2026-11-27T12:00:00Z");
        let cases = [
            ("2026-11-27T11:59:30.123Z", "just now"),
            ("2026-11-27T12:00:20Z", "just now"),
            ("2026-11-27T11:58:00Z", "2 min ago"),
            ("2026-11-27T11:00:00Z", "1 h ago"),
            ("2026-11-26T13:00:00Z", "23 h ago"),
            ("2026-11-26T11:00:00Z", "yesterday"),
            ("2026-11-23T12:00:00Z", "4 days ago"),
            ("not a time", "not a time"),
        ];
        for (then, said) in cases {
            assert_eq!(when(then, now), said, "{then}");
        }
        // Older: the local date (this year: month and day; before: the whole date).
        let older = when("2026-03-03T12:00:00Z", now);
        assert!(older.starts_with("Mar "), "{older}");
        assert_eq!(when("2024-03-03T12:00:00Z", now).len(), 10);
    }

    #[test]
    fn colour_only_when_asked() {
        let mut p = Painter::plain();
        assert_eq!(p.status(Status::Done), "Done");
        assert_eq!(p.bold("x"), "x");
        p.color = true;
        let done = p.status(Status::Done);
        assert!(
            done.starts_with('\x1b') && done.contains("Done"),
            "{done:?}"
        );
    }
}
