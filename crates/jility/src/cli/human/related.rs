//! Related tickets and estimates for a person at a terminal.

use jility_core::tracker::{Estimate, ProbeInfo, Related, RelatedTicket};

use super::Painter;

fn probe(p: &Painter, probe: &ProbeInfo) -> String {
    match &probe.ticket {
        Some(number) => format!("{} {}", p.number(number), p.bold(&probe.title)),
        None => format!("“{}”", p.bold(&probe.title)),
    }
}

/// One related ticket on a line, and what matched on the next.
pub fn line(p: &Painter, t: &RelatedTicket) -> String {
    let flag = if t.duplicate {
        format!("{} ", p.fg(super::AnsiColor::Yellow, "likely duplicate"))
    } else {
        String::new()
    };
    let mut out = format!(
        "  {:.2}  {flag}{}  {}  {}",
        t.score,
        p.number(&t.number),
        p.status(t.status),
        t.title
    );
    if !t.matched.is_empty() {
        out.push_str(&format!(
            "\n        {}",
            p.dim(&format!("matched: {}", t.matched.join(", ")))
        ));
    }
    out
}

pub fn related(p: &Painter, r: &Related) -> String {
    if r.related.is_empty() {
        return format!(
            "No tickets like {}: nothing shares enough of its words.",
            probe(p, &r.probe)
        );
    }
    let mut out = format!("Tickets like {}", probe(p, &r.probe));
    if r.duplicates > 0 {
        out.push_str(&format!(
            " — {} likely duplicate{}",
            r.duplicates,
            if r.duplicates == 1 { "" } else { "s" }
        ));
    }
    out.push('\n');
    for t in &r.related {
        out.push_str(&line(p, t));
        out.push('\n');
    }
    out.push_str(&p.hint(&format!(
        "Scores run from 0 to 1; {:.2} or more, on two shared words, is flagged as a likely duplicate.",
        r.duplicate_threshold
    )));
    out
}

pub fn estimate(p: &Painter, e: &Estimate) -> String {
    let Some(points) = e.story_points else {
        return format!("No estimate for {}. {}", probe(p, &e.probe), e.reason);
    };
    let range = e
        .range
        .filter(|r| r.low != r.high)
        .map(|r| format!(" (range {}–{})", r.low, r.high))
        .unwrap_or_default();
    let mut out = format!(
        "Estimate for {}: {}{range}, {} confidence\n",
        probe(p, &e.probe),
        p.bold(&format!("{points} points")),
        e.confidence
    );
    out.push_str("Based on:\n");
    for b in &e.based_on {
        out.push_str(&format!(
            "  {:.2}  {}  {} pt{}  {}\n",
            b.score,
            p.number(&b.number),
            b.story_points,
            if b.story_points == 1 { "" } else { "s" },
            b.title
        ));
    }
    out.push_str(&p.hint(&e.reason));
    out
}
