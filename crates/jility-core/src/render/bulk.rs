//! The markdown of a bulk edit's answer.

use std::fmt::Write as _;

use crate::tracker::BulkUpdated;

pub fn bulk_updated(b: &BulkUpdated) -> String {
    let mut out = if b.dry_run {
        format!(
            "🔎 Dry run (bulk edit {}): {} of {} tickets would change",
            b.bulk_id, b.changed, b.matched
        )
    } else {
        format!(
            "✅ Bulk edit {}: changed {} of {} tickets",
            b.bulk_id, b.changed, b.matched
        )
    };
    let unchanged = b.matched - b.changed - b.refused_total.min(b.matched - b.changed);
    if unchanged > 0 {
        let _ = write!(out, " ({unchanged} already as asked)");
    }
    out.push('\n');
    for t in &b.tickets {
        let _ = writeln!(
            out,
            "- **{}** {} ({}): {}",
            t.number,
            t.title,
            t.status,
            t.changes.join("; ")
        );
    }
    if b.changed > b.tickets.len() {
        let _ = writeln!(out, "- … and {} more", b.changed - b.tickets.len());
    }
    if b.refused_total > 0 {
        let _ = writeln!(
            out,
            "\n⛔ {} cannot change (the edit would be refused whole):",
            b.refused_total
        );
        for r in &b.refused {
            let _ = writeln!(out, "- **{}**: {}", r.number, r.reason);
        }
        if b.refused_total > b.refused.len() {
            let _ = writeln!(out, "- … and {} more", b.refused_total - b.refused.len());
        }
    }
    if b.dry_run {
        let _ = write!(
            out,
            "\nRun it again without dry_run{} to apply it.",
            if b.refused_total > 0 {
                ", after leaving out the refused tickets,"
            } else {
                ""
            }
        );
    }
    out.trim_end().to_string()
}
