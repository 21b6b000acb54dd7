//! Confirmations through the client (Multi Round-Trip Requests, protocol 2026-07-28):
//! deleting a ticket, and a bulk edit without `expected_count`, ask the user first — the
//! question says what will change — when the client can be asked
//! ([`mcp_common::ask::can_ask`]). Other clients are answered as before: the tools' hints
//! (`destructiveHint`) are what their hosts confirm on.
//!
//! The state of a question is sealed by the server's [`Asker`], bound to the caller (its
//! token at `jility serve`, else its actor), the tool and the arguments. A confirmed bulk
//! edit runs with `expected_count` set to the count the user saw, so an edit whose tickets
//! changed meanwhile is refused (`count_mismatch`) rather than applied to others.

use jility_core::backend::{Backend, Caller};
use jility_core::ops::{self, Operation};
use mcp_common::ask::{self, Answer, Asker, Binding, Question};
use mcp_common::{MarkdownReply, ToolError};
use rmcp::ErrorData;
use rmcp::handler::server::tool::ToolCallContext;
use rmcp::model::{CallToolResponse, JsonObject};
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// What a call does after the confirmation step.
pub(crate) enum Step {
    /// Run the operation (with the arguments as they now are).
    Run,
    /// Answer this instead: a question, or the user's refusal.
    Answer(CallToolResponse),
}

/// What a question carries to the next round.
#[derive(Debug, Serialize, Deserialize)]
struct Asked {
    /// The question, asked again when the answer is missing.
    message: String,
    /// For a bulk edit: how many tickets the user agreed to change.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    count: Option<u64>,
}

/// How many tickets a question lists by name.
const NAMED: usize = 5;

/// Whether the tool `name` confirms before it runs.
pub(crate) fn asks(name: &str) -> bool {
    [
        <ops::DeleteTicket as Operation>::NAME,
        <ops::BulkUpdate as Operation>::NAME,
        <ops::BulkAssign as Operation>::NAME,
    ]
    .contains(&name)
}

/// Who the caller is, for binding a question to it.
fn caller_key(caller: &Caller) -> String {
    match &caller.principal {
        Some(p) => format!("token {} {}", p.workspace_id, p.token_id),
        None => format!("actor {}", caller.actor),
    }
}

fn answer_err(err: ToolError) -> Step {
    Step::Answer(MarkdownReply::<()>::err(err).into_call_result().into())
}

/// Runs operations for the questions: where, and for whom.
pub(crate) struct Confirmer<'a, B> {
    pub backend: &'a B,
    pub caller: Caller,
    pub asker: &'a Asker,
}

impl<B: Backend> Confirmer<'_, B> {
    /// The confirmation step of `O`'s call in `context` (only for a tool that [`asks`], of a
    /// client that can be asked).
    pub(crate) async fn confirm<O: Operation, S>(
        &self,
        context: &mut ToolCallContext<'_, S>,
    ) -> Result<Step, ErrorData> {
        let asker = self.asker;
        let arguments = context.arguments.clone().unwrap_or_default();
        let bulk = O::NAME != <ops::DeleteTicket as Operation>::NAME;
        if bulk
            && (arguments
                .get("expected_count")
                .is_some_and(|v| !v.is_null())
                || arguments.get("dry_run").and_then(Value::as_bool) == Some(true))
        {
            // A preview changes nothing; an expected count is the caller's own check.
            return Ok(Step::Run);
        }
        let caller = &self.caller;
        let binding = Binding::new(&caller_key(caller), O::NAME, &arguments);
        let asked: Option<Asked> = asker.open(&binding, context.request_state.as_deref())?;
        let asked = match asked {
            Some(asked) => asked,
            None => {
                let preview = if bulk {
                    self.preview_bulk::<O>(caller, &arguments).await
                } else {
                    self.preview_delete(caller, &arguments).await
                };
                match preview {
                    Ok(Some(asked)) => return ask_for(asker, &binding, &asked),
                    // Nothing to confirm (no ticket would change, or the edit is refused
                    // anyway): the operation answers for itself.
                    Ok(None) => return Ok(Step::Run),
                    Err(err) => return Ok(answer_err(err)),
                }
            }
        };
        let question = Question::Confirm {
            message: asked.message.clone(),
        };
        let responses = ask::responses(context.input_responses.as_ref());
        match ask::answer(&question, responses.as_ref()) {
            Some(Answer::Confirmed) => {
                if let Some(count) = asked.count {
                    context
                        .arguments
                        .get_or_insert_with(JsonObject::new)
                        .insert("expected_count".into(), count.into());
                }
                Ok(Step::Run)
            }
            Some(Answer::Declined) => Ok(answer_err(Answer::declined(if bulk {
                "no ticket was changed"
            } else {
                "the ticket was not deleted"
            }))),
            // No answer (or not one to this question): ask again.
            Some(Answer::Chose(_)) | None => ask_for(asker, &binding, &asked),
        }
    }

    /// The question of deleting the ticket the arguments name (its number and title).
    async fn preview_delete(
        &self,
        caller: &Caller,
        arguments: &JsonObject,
    ) -> Result<Option<Asked>, ToolError> {
        let Some(ticket) = arguments.get("ticket_id").and_then(Value::as_str) else {
            // The operation refuses the arguments itself.
            return Ok(None);
        };
        let detail = self
            .run_json::<ops::GetTicket>(caller, serde_json::json!({ "ticket_id": ticket }))
            .await?;
        let number = detail["ticket"]["number"].as_str().unwrap_or(ticket);
        let title = detail["ticket"]["title"].as_str().unwrap_or_default();
        Ok(Some(Asked {
            message: format!(
                "Delete {number} “{}”? It leaves every board, list and search; its history is kept.",
                mcp_common::excerpt(title, 120)
            ),
            count: None,
        }))
    }

    /// The question of a bulk edit: how many tickets it changes, the first few named; none
    /// when it changes nothing or would be refused.
    async fn preview_bulk<O: Operation>(
        &self,
        caller: &Caller,
        arguments: &JsonObject,
    ) -> Result<Option<Asked>, ToolError> {
        let mut preview = arguments.clone();
        preview.insert("dry_run".into(), true.into());
        let data = self.run_json::<O>(caller, Value::Object(preview)).await?;
        let matched = data["matched"].as_u64().unwrap_or(0);
        let changed = data["changed"].as_u64().unwrap_or(0);
        if changed == 0 || data["refused_total"].as_u64().unwrap_or(0) > 0 {
            return Ok(None);
        }
        let named: Vec<&str> = data["tickets"]
            .as_array()
            .map(|tickets| {
                tickets
                    .iter()
                    .filter_map(|t| t["number"].as_str())
                    .take(NAMED)
                    .collect()
            })
            .unwrap_or_default();
        let more = if changed as usize > named.len() {
            ", …"
        } else {
            ""
        };
        let what = data["tickets"][0]["changes"]
            .as_array()
            .map(|changes| {
                changes
                    .iter()
                    .filter_map(Value::as_str)
                    .collect::<Vec<_>>()
                    .join(", ")
            })
            .unwrap_or_default();
        let tickets = if changed == 1 { "ticket" } else { "tickets" };
        Ok(Some(Asked {
            message: format!(
                "Change {changed} {tickets} ({}{more}) of the {matched} found, e.g. {}? All or none.",
                named.join(", "),
                mcp_common::excerpt(&what, 200)
            ),
            count: Some(matched),
        }))
    }

    /// Run `O` with `arguments` as JSON, answering its data as JSON.
    async fn run_json<O: Operation>(
        &self,
        caller: &Caller,
        arguments: Value,
    ) -> Result<Value, ToolError> {
        let params = serde_json::from_value::<O::Params>(arguments)
            .map_err(|err| ToolError::new(jility_core::errors::INVALID_INPUT, err.to_string()));
        let output = self.backend.exec::<O>(caller, params).await?;
        let (data, _) = O::split(output);
        serde_json::to_value(data).map_err(|err| ToolError::internal(err.to_string()))
    }
}

fn ask_for(asker: &Asker, binding: &Binding, asked: &Asked) -> Result<Step, ErrorData> {
    let question = Question::Confirm {
        message: asked.message.clone(),
    };
    match asker.ask(binding, &question, asked) {
        Ok(result) => Ok(Step::Answer(CallToolResponse::InputRequired(result))),
        Err(err) => Ok(answer_err(err)),
    }
}
