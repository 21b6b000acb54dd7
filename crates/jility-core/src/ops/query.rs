//! Query strings of the listings: what a GET's query means, as the tool's arguments.

use mcp_common_core::ToolError;
use serde_json::{Map, Value};

use super::invalid;
use crate::errors::clip;

pub(super) fn query_pairs(query: &str) -> impl Iterator<Item = (String, String)> + '_ {
    form_urlencoded::parse(query.as_bytes()).map(|(k, v)| (k.into_owned(), v.into_owned()))
}

pub(super) fn several(value: &str) -> impl Iterator<Item = Value> + '_ {
    value
        .split(',')
        .map(str::trim)
        .filter(|v| !v.is_empty())
        .map(|v| Value::String(v.to_string()))
}

pub(super) fn number(name: &str, value: &str) -> Result<Value, ToolError> {
    value.trim().parse::<i64>().map(Value::from).map_err(|_| {
        invalid(
            format!("The query parameter `{name}` must be a whole number"),
            format!("Give `{name}` as a number, e.g. `{name}=20`."),
        )
    })
}

pub(super) fn boolean(name: &str, value: &str) -> Result<Value, ToolError> {
    match value.trim() {
        "" | "true" | "1" => Ok(Value::Bool(true)),
        "false" | "0" => Ok(Value::Bool(false)),
        _ => Err(invalid(
            format!("The query parameter `{name}` must be true or false"),
            format!("Give `{name}=true` or leave it out."),
        )),
    }
}

pub(super) fn unknown_parameter(name: &str, known: &str) -> ToolError {
    invalid(
        format!("Unknown query parameter `{}`", clip(name)),
        format!("The parameters are {known}."),
    )
}

/// Append `args` to a query: strings and numbers as they are, arrays as repeated pairs,
/// `true` as `name=true`; `null` and `false` are left out.
pub(super) fn encode_query(args: &Map<String, Value>, rename: &[(&str, &str)]) -> String {
    let mut query = form_urlencoded::Serializer::new(String::new());
    for (name, value) in args {
        let name = rename
            .iter()
            .find(|(from, _)| from == name)
            .map_or(name.as_str(), |(_, to)| to);
        match value {
            Value::String(s) => {
                query.append_pair(name, s);
            }
            Value::Number(n) => {
                query.append_pair(name, &n.to_string());
            }
            Value::Bool(true) => {
                query.append_pair(name, "true");
            }
            Value::Array(items) => {
                for item in items {
                    if let Value::String(s) = item {
                        query.append_pair(name, s);
                    }
                }
            }
            _ => {}
        }
    }
    query.finish()
}

pub(super) fn append(
    args: &mut Map<String, Value>,
    name: &str,
    values: impl Iterator<Item = Value>,
) {
    let entry = args
        .entry(name.to_string())
        .or_insert_with(|| Value::Array(Vec::new()));
    if let Value::Array(items) = entry {
        items.extend(values);
    }
}

pub(super) fn list_query(query: &str) -> Result<Map<String, Value>, ToolError> {
    const KNOWN: &str = "`q`, `status`, `assignee`, `label`, `parent_id`, `epic_id`, `sprint`, `unassigned`, `limit` and `cursor`";
    let mut args = Map::new();
    for (name, value) in query_pairs(query) {
        match name.as_str() {
            "status" => append(&mut args, "status", several(&value)),
            "label" | "labels" => append(&mut args, "labels", several(&value)),
            "assignee" | "cursor" | "sprint" => {
                args.insert(name, Value::String(value));
            }
            "q" | "query" => {
                args.insert("query".into(), Value::String(value));
            }
            "parent_id" | "parent" => {
                args.insert("parent_id".into(), Value::String(value));
            }
            "epic_id" | "epic" => {
                args.insert("epic_id".into(), Value::String(value));
            }
            "unassigned" => {
                args.insert(name.clone(), boolean(&name, &value)?);
            }
            "limit" => {
                args.insert(name.clone(), number(&name, &value)?);
            }
            _ => return Err(unknown_parameter(&name, KNOWN)),
        }
    }
    Ok(args)
}

pub(super) fn search_query(query: &str) -> Result<Map<String, Value>, ToolError> {
    const KNOWN: &str = "`q`, `sprint`, `limit` and `cursor`";
    let mut args = Map::new();
    for (name, value) in query_pairs(query) {
        match name.as_str() {
            "q" | "query" => {
                args.insert("query".into(), Value::String(value));
            }
            "cursor" | "sprint" => {
                args.insert(name, Value::String(value));
            }
            "limit" => {
                args.insert(name.clone(), number(&name, &value)?);
            }
            _ => return Err(unknown_parameter(&name, KNOWN)),
        }
    }
    if !args.contains_key("query") {
        return Err(invalid(
            "A search needs the query parameter `q`",
            "Search with `/api/v1/search?q=words`.",
        ));
    }
    Ok(args)
}

pub(super) fn page_query(query: &str) -> Result<Map<String, Value>, ToolError> {
    let mut args = Map::new();
    for (name, value) in query_pairs(query) {
        match name.as_str() {
            "cursor" => {
                args.insert(name, Value::String(value));
            }
            "limit" => {
                args.insert(name.clone(), number(&name, &value)?);
            }
            _ => return Err(unknown_parameter(&name, "`limit` and `cursor`")),
        }
    }
    Ok(args)
}

pub(super) fn epics_query(query: &str) -> Result<Map<String, Value>, ToolError> {
    let mut args = Map::new();
    for (name, value) in query_pairs(query) {
        match name.as_str() {
            "status" => append(&mut args, "status", several(&value)),
            "cursor" => {
                args.insert(name, Value::String(value));
            }
            "limit" => {
                args.insert(name.clone(), number(&name, &value)?);
            }
            _ => return Err(unknown_parameter(&name, "`status`, `limit` and `cursor`")),
        }
    }
    Ok(args)
}

pub(super) fn sprints_query(query: &str) -> Result<Map<String, Value>, ToolError> {
    let mut args = Map::new();
    for (name, value) in query_pairs(query) {
        match name.as_str() {
            "state" => append(&mut args, "state", several(&value)),
            "cursor" => {
                args.insert(name, Value::String(value));
            }
            "limit" => {
                args.insert(name.clone(), number(&name, &value)?);
            }
            _ => return Err(unknown_parameter(&name, "`state`, `limit` and `cursor`")),
        }
    }
    Ok(args)
}

pub(super) fn notifications_query(query: &str) -> Result<Map<String, Value>, ToolError> {
    let mut args = Map::new();
    for (name, value) in query_pairs(query) {
        match name.as_str() {
            "unread_only" => {
                args.insert(name.clone(), boolean(&name, &value)?);
            }
            "cursor" => {
                args.insert(name, Value::String(value));
            }
            "limit" => {
                args.insert(name.clone(), number(&name, &value)?);
            }
            _ => {
                return Err(unknown_parameter(
                    &name,
                    "`unread_only`, `limit` and `cursor`",
                ));
            }
        }
    }
    Ok(args)
}

/// `jility_suggest_related`'s and `jility_estimate_effort`'s query: the probe (and a limit).
fn probe_query(query: &str, limit: bool) -> Result<Map<String, Value>, ToolError> {
    let known = if limit {
        "`ticket_id`, `title`, `description` and `limit`"
    } else {
        "`ticket_id`, `title` and `description`"
    };
    let mut args = Map::new();
    for (name, value) in query_pairs(query) {
        match name.as_str() {
            "ticket_id" | "title" | "description" => {
                args.insert(name, Value::String(value));
            }
            "limit" if limit => {
                args.insert(name.clone(), number(&name, &value)?);
            }
            _ => return Err(unknown_parameter(&name, known)),
        }
    }
    Ok(args)
}

pub(super) fn related_query(query: &str) -> Result<Map<String, Value>, ToolError> {
    probe_query(query, true)
}

pub(super) fn estimate_query(query: &str) -> Result<Map<String, Value>, ToolError> {
    probe_query(query, false)
}
