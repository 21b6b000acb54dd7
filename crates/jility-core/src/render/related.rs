//! The markdown of related tickets and estimates.

use std::fmt::Write as _;

use crate::tracker::{Estimate, ProbeInfo, Related, RelatedTicket};

fn probe(p: &ProbeInfo) -> String {
    match &p.ticket {
        Some(number) => format!("{number} \"{}\"", p.title),
        None => format!("\"{}\"", p.title),
    }
}

/// One related ticket as a list item.
pub fn related_line(t: &RelatedTicket) -> String {
    let flag = if t.duplicate {
        "⚠️ likely duplicate · "
    } else {
        ""
    };
    let points = t
        .story_points
        .map(|p| format!(" · {p} pts"))
        .unwrap_or_default();
    let matched = if t.matched.is_empty() {
        String::new()
    } else {
        format!(" · matched: {}", t.matched.join(", "))
    };
    format!(
        "- {flag}**{}** {} ({}{points}) · score {:.2}{matched}",
        t.number,
        t.title,
        t.status.as_str(),
        t.score
    )
}

pub fn related(r: &Related) -> String {
    if r.related.is_empty() {
        return format!(
            "🔗 No tickets like {}: nothing shares enough of its words.",
            probe(&r.probe)
        );
    }
    let mut out = format!("🔗 Tickets like {}", probe(&r.probe));
    if r.duplicates > 0 {
        let _ = write!(
            out,
            " — {} likely duplicate{} (score ≥ {:.2})",
            r.duplicates,
            if r.duplicates == 1 { "" } else { "s" },
            r.duplicate_threshold
        );
    }
    out.push('\n');
    for t in &r.related {
        let _ = writeln!(out, "{}", related_line(t));
    }
    out
}

pub fn estimate(e: &Estimate) -> String {
    let Some(points) = e.story_points else {
        return format!("📏 No estimate for {}. {}", probe(&e.probe), e.reason);
    };
    let range = e
        .range
        .filter(|r| r.low != r.high)
        .map(|r| format!(" (range {}–{})", r.low, r.high))
        .unwrap_or_default();
    let mut out = format!(
        "📏 Estimate for {}: **{points} points**{range}, {} confidence\n{}\n\nBased on:\n",
        probe(&e.probe),
        e.confidence,
        e.reason
    );
    for b in &e.based_on {
        let _ = writeln!(
            out,
            "- **{}** {} · {} pt{} · score {:.2}",
            b.number,
            b.title,
            b.story_points,
            if b.story_points == 1 { "" } else { "s" },
            b.score
        );
    }
    out
}
