//! Questions put to the user through the client (Multi Round-Trip Requests, protocol
//! 2026-07-28), for clients that can be asked ([`mcp_common::ask::can_ask`]); other clients
//! are answered as before.
//!
//! - An `id` that is the start of several issue or milestone ids (`ambiguous_id`) asks
//!   which one was meant, each named with its title; the call then goes on with the one
//!   chosen.
//! - Closing a milestone that still has open issues asks for a confirmation naming how many.
//!
//! The state of a question (what was chosen so far, which question was asked last) is
//! sealed by the server's [`Asker`] with a key of this process's (a question opens once,
//! where it was asked), and bound to the tool and its arguments as sent.

use mcp_common::ask::{self, Answer, Asker, Binding, Question};
use mcp_common::{ToJsonRpc as _, ToolError, excerpt};
use rmcp::ErrorData;
use rmcp::model::{InputRequiredResult, InputResponses};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::catalog::{Lookup, Snapshot};
use crate::model::{Kind, Status};
use crate::writes::UPDATE;

/// Who a question is bound to: the repository has one user, the git identity's.
const CALLER: &str = "git-mile user";

/// Most candidates a choice lists (a prefix of at least 4 characters rarely matches more).
const MOST_CHOICES: usize = 20;

/// What the rounds so far settled.
#[derive(Debug, Default, Serialize, Deserialize)]
struct State {
    /// The id chosen for an ambiguous prefix.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    id: Option<String>,
    /// The question asked last: `choose` or `confirm`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    asked: Option<String>,
    /// The question itself, asked again when its answer is missing.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    message: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    options: Vec<(String, String)>,
}

/// What a call does after its questions.
pub enum Step {
    /// Go on with these arguments (the chosen id in place of the prefix).
    Run(Value),
    /// Answer this question.
    Ask(InputRequiredResult),
    /// The user said no: answer this error (nothing changed).
    Declined(ToolError),
}

/// The questions of a call of `tool` (`writing` or not) with `args`, on `snapshot`.
pub fn step(
    asker: &Asker,
    snapshot: &Snapshot,
    tool: &str,
    writing: bool,
    args: Value,
    request_state: Option<&str>,
    responses: Option<&InputResponses>,
) -> Result<Step, ErrorData> {
    let binding = Binding::new(CALLER, tool, &args);
    let mut state: State = asker.open(&binding, request_state)?.unwrap_or_default();
    let responses = ask::responses(responses);
    let kind = match args.get("entity").and_then(Value::as_str) {
        Some("issue") => Kind::Issue,
        Some("milestone") => Kind::Milestone,
        _ => return Ok(Step::Run(args)),
    };
    let Some(given) = args.get("id").and_then(Value::as_str) else {
        return Ok(Step::Run(args));
    };
    // Which one: an ambiguous prefix.
    if state.id.is_none()
        && let Lookup::Ambiguous(ids) = snapshot.lookup(kind, given)
    {
        let options: Vec<(String, String)> = ids
            .iter()
            .take(MOST_CHOICES)
            .map(|id| {
                let title = match snapshot.lookup(kind, id) {
                    Lookup::Found(row) => excerpt(&row.entity.title, 80),
                    _ => "(unreadable)".to_string(),
                };
                (id.clone(), format!("{} {title}", &id[..id.len().min(8)]))
            })
            .collect();
        if state.asked.as_deref() == Some("choose") {
            match ask::answer(&choice(&state), responses.as_ref()) {
                Some(Answer::Chose(id)) => state.id = Some(id),
                Some(Answer::Declined) => return Ok(Step::Declined(declined(writing))),
                _ => return again(asker, &binding, &state),
            }
        } else {
            state.asked = Some("choose".into());
            state.message = Some(format!(
                "`{}` is the start of {} {} ids: which one?",
                excerpt(given, 40),
                ids.len(),
                kind.as_str()
            ));
            state.options = options;
            return again(asker, &binding, &state);
        }
    }
    let id = state.id.clone().unwrap_or_else(|| given.to_string());
    // Closing a milestone with open issues.
    if tool == UPDATE
        && kind == Kind::Milestone
        && args.get("status").and_then(Value::as_str) == Some("closed")
        && let Lookup::Found(row) = snapshot.lookup(kind, &id)
        && row.entity.status == Status::Open
        && let Some(open) = row.stats.open_issues.filter(|n| *n > 0)
    {
        if state.asked.as_deref() == Some("confirm") {
            match ask::answer(&confirmation(&state), responses.as_ref()) {
                Some(Answer::Confirmed) => {}
                Some(_) => return Ok(Step::Declined(declined(writing))),
                None => return again(asker, &binding, &state),
            }
        } else {
            let issues = if open == 1 { "issue" } else { "issues" };
            state.asked = Some("confirm".into());
            state.message = Some(format!(
                "Close milestone “{}” with {open} open {issues}? They stay open and attached to it.",
                excerpt(&row.entity.title, 80)
            ));
            state.options.clear();
            return again(asker, &binding, &state);
        }
    }
    let mut args = args;
    if let (Some(chosen), Some(map)) = (state.id, args.as_object_mut()) {
        map.insert("id".into(), Value::String(chosen));
    }
    Ok(Step::Run(args))
}

fn choice(state: &State) -> Question {
    Question::Choose {
        message: state.message.clone().unwrap_or_default(),
        options: state.options.clone(),
    }
}

fn confirmation(state: &State) -> Question {
    Question::Confirm {
        message: state.message.clone().unwrap_or_default(),
    }
}

/// The question `state` holds, asked (again), carrying `state`.
fn again(asker: &Asker, binding: &Binding, state: &State) -> Result<Step, ErrorData> {
    let question = match state.asked.as_deref() {
        Some("choose") => choice(state),
        _ => confirmation(state),
    };
    asker
        .ask(binding, &question, state)
        .map(Step::Ask)
        .map_err(|err| err.to_json_rpc())
}

fn declined(writing: bool) -> ToolError {
    Answer::declined(if writing {
        "nothing was written"
    } else {
        "nothing was shown"
    })
}
