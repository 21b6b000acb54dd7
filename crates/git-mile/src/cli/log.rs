//! `git mile log`: the events of one issue, milestone or task, newest first, as
//! `git_mile.log` answers them.

use clap::Args;
use serde_json::Value;

use super::{EntityArg, emit, line, plural};
use crate::catalog::Catalog;
use crate::log::{LogError, LogPage, LogPlan};
use crate::ops::OpError;
use crate::query::cursor::cursor_key;

#[derive(Debug, Args)]
pub struct LogArgs {
    /// The id: the full UUID or a unique prefix of at least 4 characters.
    #[arg(value_name = "ID")]
    pub id: String,
    /// What the id names, when it may name several kinds (default: whichever it names).
    #[arg(long, value_enum, value_name = "ENTITY")]
    pub entity: Option<EntityArg>,
    /// Page size: 1 to 200 (default 20).
    #[arg(long, value_name = "N")]
    pub limit: Option<u64>,
    /// The next page: the cursor the previous page printed (`more: --cursor …`), with the
    /// same id and --entity.
    #[arg(long, value_name = "CURSOR")]
    pub cursor: Option<String>,
    /// Print the page as JSON (as the MCP tool answers it) instead of text.
    #[arg(long)]
    pub json: bool,
}

/// `git mile log`.
pub fn run(catalog: &Catalog, args: &LogArgs) -> Result<(), OpError> {
    let key = cursor_key(catalog.store().git_dir());
    let limit = args.limit.map(serde_json::Number::from);
    let plan = LogPlan::new(
        args.entity.map(EntityArg::target),
        &args.id,
        limit.as_ref(),
        args.cursor.as_deref(),
        &key,
    )
    .map_err(|err| OpError::Invalid(err.to_string()))?;
    let page = plan.run(catalog).map_err(|err| match err {
        LogError::Args(err) => OpError::Invalid(err.to_string()),
        LogError::Op(err) => err,
    })?;
    emit(args.json, &page, text)
}

/// What changed, on one line: `field: value` pairs.
fn change_text(change: &Value) -> String {
    let Some(fields) = change.as_object() else {
        return String::new();
    };
    fields
        .iter()
        .filter(|(_, value)| !matches!(value, Value::Array(items) if items.is_empty()))
        .map(|(name, value)| {
            let value = match value {
                Value::String(s) => s.clone(),
                Value::Null => "none".to_string(),
                Value::Array(items) => items
                    .iter()
                    .map(|i| i.as_str().map_or_else(|| i.to_string(), str::to_string))
                    .collect::<Vec<_>>()
                    .join(", "),
                other => other.to_string(),
            };
            format!("{name}: {}", line(&value))
        })
        .collect::<Vec<_>>()
        .join("; ")
}

fn text(page: &LogPage) -> String {
    let mut text = format!(
        "{} {}: {}\n",
        page.entity,
        page.id,
        plural(page.total, "event")
    );
    for e in &page.events {
        let when = e.ts.map_or_else(
            || "(no time)".to_string(),
            |t| t.format("%Y-%m-%d %H:%M:%S").to_string(),
        );
        let who = e
            .actor
            .as_deref()
            .map_or_else(|| "(unknown)".to_string(), line);
        let mut entry = format!("{when}  {who}  {}", line(&e.kind));
        let change = change_text(&e.change);
        if !change.is_empty() {
            entry.push_str(&format!("  {change}"));
        }
        if let Some(why) = &e.unknown {
            entry.push_str(&format!("  (unknown to this version: {})", line(why)));
        }
        text.push_str(&entry);
        text.push('\n');
    }
    if let Some(cursor) = &page.next_cursor {
        text.push_str(&format!("more: --cursor {cursor}\n"));
    }
    text.trim_end().to_string()
}
