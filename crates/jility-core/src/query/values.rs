//! The values of qualifiers: lists, statuses, `is:`/`no:`, point ranges, times.

use chrono::{DateTime, Datelike, Duration, NaiveDate, SecondsFormat, Utc};

use super::{Is, No, Order};
use crate::model::{Kind, Status};
use crate::store::{Sort, SortField, TimeRange};

/// Most values in one list (`status:a,b,…`).
const MAX_VALUES: usize = 50;

/// "Now", for relative times: the real clock, or a fixed instant (tests).
#[derive(Debug, Clone, Copy)]
pub struct Clock(DateTime<Utc>);

impl Clock {
    pub fn now() -> Self {
        Self(Utc::now())
    }

    pub fn at(instant: DateTime<Utc>) -> Self {
        Self(instant)
    }
}

/// Whether `name` is a qualifier.
pub(super) fn is_known(name: &str) -> bool {
    !example(name).is_empty()
}

/// An example of a qualifier's value, as errors show it (empty: no such qualifier).
pub(super) fn example(name: &str) -> &'static str {
    match name {
        "status" => "status:todo,review",
        "label" => "label:backend",
        "assignee" => "assignee:me",
        "is" => "is:blocked",
        "no" => "no:sprint",
        "epic" => "epic:TASK-12",
        "parent" => "parent:TASK-3",
        "depends-on" => "depends-on:TASK-7",
        "sprint" => "sprint:active",
        "points" => "points:3..8",
        "created" => "created:>2024-10-20",
        "updated" => "updated:<7d",
        "sort" => "sort:updated-desc",
        "view" => "view:triage",
        _ => "",
    }
}

/// A comma-separated list of names, blanks trimmed, empty items dropped.
pub(super) fn names(value: &str) -> Result<Vec<String>, String> {
    let names: Vec<String> = value
        .split(',')
        .map(str::trim)
        .filter(|v| !v.is_empty())
        .map(str::to_string)
        .collect();
    if names.is_empty() {
        return Err("give at least one name".into());
    }
    if names.len() > MAX_VALUES {
        return Err(format!("at most {MAX_VALUES} values"));
    }
    if names.iter().any(|n| n.chars().count() > 100) {
        return Err("a name is longer than 100 characters".into());
    }
    Ok(names)
}

pub(super) fn statuses(value: &str) -> Result<Vec<Status>, String> {
    let mut out = Vec::new();
    for name in names(value)? {
        let status = Status::parse(&name).ok_or_else(|| {
            format!(
                "'{}' is not a status. Valid statuses: {}",
                crate::errors::clip(&name),
                Status::valid_list()
            )
        })?;
        if !out.contains(&status) {
            out.push(status);
        }
    }
    Ok(out)
}

pub(super) fn is(value: &str) -> Result<Is, String> {
    Ok(match value.to_ascii_lowercase().as_str() {
        "unassigned" => Is::Unassigned,
        "assigned" => Is::Assigned,
        "blocked" => Is::Blocked,
        "open" => Is::Open,
        "done" | "closed" => Is::Done,
        "epic" => Is::Kind(Kind::Epic),
        "ticket" => Is::Kind(Kind::Ticket),
        _ => {
            return Err(
                "is: takes unassigned, assigned, blocked, open, done, epic or ticket".into(),
            );
        }
    })
}

pub(super) fn no(value: &str) -> Result<No, String> {
    Ok(match value.to_ascii_lowercase().as_str() {
        "sprint" => No::Sprint,
        "epic" => No::Epic,
        "parent" => No::Parent,
        "points" => No::Points,
        "assignee" => No::Assignee,
        "label" => No::Label,
        _ => return Err("no: takes sprint, epic, parent, points, assignee or label".into()),
    })
}

pub(super) fn order(value: &str) -> Option<Order> {
    let value = value.to_ascii_lowercase();
    if value == "relevance" || value == "best-match" {
        return Some(Order::Relevance);
    }
    let (field, descending) = match value.rsplit_once('-') {
        Some((field, "desc")) => (field, true),
        Some((field, "asc")) => (field, false),
        _ => (value.as_str(), true),
    };
    let field = SortField::ALL.into_iter().find(|f| f.as_str() == field)?;
    Some(Order::By(Sort { field, descending }))
}

/// `3`, `3..8`, `>5`, `>=5`, `<3`, `<=3`, `*..5`, `5..*`: the inclusive range.
pub(super) fn points(value: &str) -> Result<(u8, u8), String> {
    const TAKES: &str = "points takes a number, a range (3..8, 5..*) or a comparison (>5, <=3)";
    let number = |text: &str| -> Result<u8, String> {
        text.trim().parse::<u8>().map_err(|_| TAKES.to_string())
    };
    let bound = |text: &str, open: u8| -> Result<u8, String> {
        if text.trim() == "*" {
            Ok(open)
        } else {
            number(text)
        }
    };
    let range = if let Some((low, high)) = value.split_once("..") {
        (bound(low, 0)?, bound(high, u8::MAX)?)
    } else if let Some(rest) = value.strip_prefix(">=") {
        (number(rest)?, u8::MAX)
    } else if let Some(rest) = value.strip_prefix("<=") {
        (0, number(rest)?)
    } else if let Some(rest) = value.strip_prefix('>') {
        (number(rest)?.saturating_add(1), u8::MAX)
    } else if let Some(rest) = value.strip_prefix('<') {
        let n = number(rest)?;
        if n == 0 {
            return Err("points are 1 to 13: nothing has fewer than 0".into());
        }
        (0, n - 1)
    } else {
        let n = number(value)?;
        (n, n)
    };
    if range.0 > range.1 {
        return Err(format!(
            "the range {}..{} is empty (the low end comes first)",
            range.0, range.1
        ));
    }
    Ok(range)
}

/// A time as written: a day (`2024-10-20`, UTC) spans the day, an instant
/// (`2024-10-20T12:00:00Z`) its millisecond; an age (`7d` ago; `h`, `d`, `w`) is a point.
struct Span {
    start: DateTime<Utc>,
    end: DateTime<Utc>,
    age: bool,
}

fn span(text: &str, clock: &Clock) -> Result<Span, String> {
    raw_span(text, clock).and_then(in_range)
}

fn raw_span(text: &str, clock: &Clock) -> Result<Span, String> {
    const TAKES: &str = "times are days (2024-10-20), instants (2024-10-20T12:00:00Z) or ages (7d, 12h, 2w), with >, >=, <, <= or a range a..b";
    let text = text.trim();
    if let Ok(day) = NaiveDate::parse_from_str(text, "%Y-%m-%d") {
        let start = day
            .and_hms_opt(0, 0, 0)
            .ok_or_else(|| TAKES.to_string())?
            .and_utc();
        return Ok(Span {
            start,
            end: start + Duration::days(1),
            age: false,
        });
    }
    if let Ok(instant) = DateTime::parse_from_rfc3339(text) {
        // The instant's millisecond, as the stores keep times.
        let instant = instant.with_timezone(&Utc);
        return Ok(Span {
            start: instant,
            end: instant + Duration::milliseconds(1),
            age: false,
        });
    }
    let unit = text.chars().last().ok_or_else(|| TAKES.to_string())?;
    let count: i64 = text[..text.len() - unit.len_utf8()]
        .parse()
        .map_err(|_| TAKES.to_string())?;
    let length = match unit {
        'h' => Duration::try_hours(count),
        'd' => Duration::try_days(count),
        'w' => Duration::try_weeks(count),
        _ => None,
    }
    .filter(|_| (0..=100_000).contains(&count))
    .ok_or_else(|| TAKES.to_string())?;
    let instant = clock.0 - length;
    Ok(Span {
        start: instant,
        end: instant,
        age: true,
    })
}

/// Times of a query are within years 1 to 9999 (what the stores' text compares in order).
fn in_range(span: Span) -> Result<Span, String> {
    let ok = |t: DateTime<Utc>| (1..=9999).contains(&t.year());
    if ok(span.start) && ok(span.end) {
        Ok(span)
    } else {
        Err("times are from the year 1 to 9999".into())
    }
}

fn stamp(instant: DateTime<Utc>) -> String {
    instant.to_rfc3339_opts(SecondsFormat::Millis, true)
}

/// A time qualifier's range. On days: `>D` after the day, `>=D` from it, `<D` before it,
/// `<=D` up to its end, `D` within it. On ages, `<7d` is younger than 7 days (since then),
/// `>7d` older; a bare age is "within". `a..b` spans both ends, `*` open.
pub(super) fn times(value: &str, clock: &Clock) -> Result<TimeRange, String> {
    if let Some((low, high)) = value.split_once("..") {
        let low = (low.trim() != "*").then(|| span(low, clock)).transpose()?;
        let high = (high.trim() != "*")
            .then(|| span(high, clock))
            .transpose()?;
        // Ages count backwards: `30d..7d` is the same range as `7d..30d`.
        let (from, until) = match (&low, &high) {
            (Some(a), Some(b)) => (Some(a.start.min(b.start)), Some(a.end.max(b.end))),
            (Some(a), None) => (Some(a.start), None),
            (None, Some(b)) => (None, Some(b.end)),
            (None, None) => (None, None),
        };
        return Ok(TimeRange {
            from: from.map(stamp),
            until: until.map(stamp),
        });
    }
    let (op, rest) = [">=", "<=", ">", "<"]
        .into_iter()
        .find_map(|op| value.strip_prefix(op).map(|rest| (op, rest)))
        .unwrap_or(("", value));
    let span = span(rest, clock)?;
    let (from, until) = match (op, span.age) {
        ("", true) | ("<", true) | ("<=", true) => (Some(span.start), None),
        (">", true) | (">=", true) => (None, Some(span.start)),
        (">", false) => (Some(span.end), None),
        (">=", false) => (Some(span.start), None),
        ("<", false) => (None, Some(span.start)),
        ("<=", false) => (None, Some(span.end)),
        _ => (Some(span.start), Some(span.end)),
    };
    Ok(TimeRange {
        from: from.map(stamp),
        until: until.map(stamp),
    })
}
