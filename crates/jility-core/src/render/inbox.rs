//! The inbox's answers as markdown.

use std::fmt::Write as _;

use mcp_common_core::Page;

use crate::tracker::{NotificationPage, NotificationsMarked, Watched};

pub fn notifications(page: &NotificationPage, p: &Page) -> String {
    if page.notifications.is_empty() {
        return format!("📭 Nothing in {}'s inbox.", page.recipient);
    }
    let mut out = format!(
        "📬 {}'s inbox: {} unread of {}\n",
        page.recipient, page.unread, p.total
    );
    for n in &page.notifications {
        let mark = if n.read { "  " } else { "• " };
        let _ = writeln!(
            out,
            "{mark}#{} [{}] {} ({})",
            n.id, n.kind, n.summary, n.created_at
        );
    }
    if p.next_cursor.is_some() {
        let _ = write!(out, "\nMore: pass `next_cursor` as `cursor`.");
    }
    let _ = write!(
        out,
        "\nMark entries read with jility_mark_notifications_read."
    );
    out
}

pub fn notifications_marked(m: &NotificationsMarked) -> String {
    format!("✅ Marked {} read; {} unread left", m.marked, m.unread)
}

pub fn watched(w: &Watched) -> String {
    let state = if w.watching {
        "👀 Watching"
    } else {
        "🙈 Not watching"
    };
    format!(
        "{state} **{}** (watchers: {})",
        w.number,
        w.watchers.join(", ")
    )
}
