//! Questions through the client (Multi Round-Trip Requests, protocol 2026-07-28), when
//! the client can be asked ([`mcp_common::ask::can_ask`]):
//!
//! - a `ticket_id` that is no ticket reference (words, as of a title) asks which of the
//!   tickets those words find was meant, and the call goes on with it;
//! - deleting a ticket, and a bulk edit without `expected_count`, ask the user first — the
//!   question says what will change.
//!
//! Other clients are answered as before (a `ticket_id` of words is `invalid_input`; the
//! tools' `destructiveHint` is what their hosts confirm on).
//!
//! The state of a question is sealed by the server's [`Asker`], bound to the caller (its
//! token at `jility serve`, else its actor), the tool and the arguments. A confirmed bulk
//! edit changes exactly the tickets the user was shown (up to 50, sealed with the question,
//! whatever its query finds by then); a larger one is previewed again and, if what it finds
//! changed, asked anew; either runs with `expected_count`.

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
#[derive(Debug, Default, Serialize, Deserialize)]
struct Asked {
    /// The question asked last: `choose` (which ticket) or `confirm`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    asked: Option<String>,
    /// The question itself, asked again when its answer is missing.
    #[serde(default)]
    message: String,
    /// A choice's options: ticket numbers and what a person reads.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    options: Vec<(String, String)>,
    /// The ticket chosen for a `ticket_id` that named none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    ticket: Option<String>,
    /// For a bulk edit: how many tickets the query found when the user was asked.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    count: Option<u64>,
    /// For a bulk edit: every ticket it would change, when the preview named them all (at
    /// most 50): the confirmed edit changes exactly these.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    tickets: Option<Vec<String>>,
    /// For a larger bulk edit: what the preview showed (the counts and the first 50
    /// tickets), checked again before the confirmed edit runs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    digest: Option<String>,
}

/// What a preview found.
enum Preview {
    /// A question to ask.
    Ask(Asked),
    /// Nothing to ask: run, with `expected_count` set when given (so a query that finds
    /// other tickets by the time it runs is refused).
    Run(Option<u64>),
}

impl Asked {
    fn question(&self) -> Question {
        match self.asked.as_deref() {
            Some("choose") => Question::Choose {
                message: self.message.clone(),
                options: self.options.clone(),
            },
            _ => Question::Confirm {
                message: self.message.clone(),
            },
        }
    }
}

/// How many tickets a question lists by name.
const NAMED: usize = 5;

/// Most tickets a "which one?" offers.
const CHOICES: usize = 8;

/// Whether the tool `name` confirms before it runs.
pub(crate) fn asks(name: &str) -> bool {
    [
        <ops::DeleteTicket as Operation>::NAME,
        <ops::BulkUpdate as Operation>::NAME,
        <ops::BulkAssign as Operation>::NAME,
    ]
    .contains(&name)
}

/// Whether a call with `arguments` may ask at all: a tool that confirms, or one that takes
/// a `ticket_id` (`takes_ticket`) given as words, not a ticket reference (words of a title,
/// which a person can pick from).
pub(crate) fn may_ask(name: &str, takes_ticket: bool, arguments: Option<&JsonObject>) -> bool {
    asks(name) || (takes_ticket && unreferenced(arguments).is_some())
}

/// The `ticket_id` of `arguments` when it is text that names no ticket (`KEY-N`, a number
/// or a UUID would).
fn unreferenced(arguments: Option<&JsonObject>) -> Option<&str> {
    arguments?
        .get("ticket_id")?
        .as_str()
        .map(str::trim)
        .filter(|text| !text.is_empty() && !jility_core::tracker::is_reference(text))
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
    /// Whether the tool takes a `ticket_id` (only then are words in it asked about).
    pub takes_ticket: bool,
}

impl<B: Backend> Confirmer<'_, B> {
    /// The questions of `O`'s call in `context` (only for a call that [`may_ask`], of a
    /// client that can be asked): which ticket a `ticket_id` of words meant, then whether
    /// to delete or to make a bulk edit.
    pub(crate) async fn confirm<O: Operation, S>(
        &self,
        context: &mut ToolCallContext<'_, S>,
    ) -> Result<Step, ErrorData> {
        let asker = self.asker;
        let arguments = context.arguments.clone().unwrap_or_default();
        let caller = &self.caller;
        let binding = Binding::new(&caller_key(caller), O::NAME, &arguments);
        let mut state: Asked = asker
            .open(&binding, context.request_state.as_deref())?
            .unwrap_or_default();
        let responses = ask::responses(context.input_responses.as_ref());

        // Which ticket: `ticket_id` holds words, not a reference.
        if self.takes_ticket
            && let Some(words) = unreferenced(Some(&arguments))
            && state.ticket.is_none()
        {
            if state.asked.as_deref() == Some("choose") {
                match ask::answer(&state.question(), responses.as_ref()) {
                    Some(Answer::Chose(number)) => state.ticket = Some(number),
                    Some(_) => return Ok(answer_err(Answer::declined("nothing was done"))),
                    None => return ask_for(asker, &binding, &state),
                }
            } else {
                match self.candidates(caller, words).await {
                    // None found: the operation says the reference names no ticket.
                    Ok(options) if options.is_empty() => return Ok(Step::Run),
                    Ok(options) => {
                        state.asked = Some("choose".into());
                        state.message = format!(
                            "“{}” is no ticket number: which ticket is meant?",
                            mcp_common::excerpt(words, 80)
                        );
                        state.options = options;
                        return ask_for(asker, &binding, &state);
                    }
                    Err(err) => return Ok(answer_err(err)),
                }
            }
        }
        let mut current = arguments.clone();
        if let Some(number) = &state.ticket {
            current.insert("ticket_id".into(), number.clone().into());
            context
                .arguments
                .get_or_insert_with(JsonObject::new)
                .insert("ticket_id".into(), number.clone().into());
        }
        if !asks(O::NAME) {
            return Ok(Step::Run);
        }

        // Whether to go ahead.
        let bulk = O::NAME != <ops::DeleteTicket as Operation>::NAME;
        if bulk
            && (current.get("expected_count").is_some_and(|v| !v.is_null())
                || current.get("dry_run").and_then(Value::as_bool) == Some(true))
        {
            // A preview changes nothing; an expected count is the caller's own check.
            return Ok(Step::Run);
        }
        if state.asked.as_deref() != Some("confirm") {
            let preview = if bulk {
                self.preview_bulk::<O>(caller, &current).await
            } else {
                self.preview_delete(caller, &current).await
            };
            return match preview {
                Ok(Preview::Ask(asked)) => {
                    let asked = Asked {
                        asked: Some("confirm".into()),
                        ticket: state.ticket,
                        ..asked
                    };
                    ask_for(asker, &binding, &asked)
                }
                Ok(Preview::Run(expected)) => {
                    if let Some(count) = expected {
                        set(context, "expected_count", count.into());
                    }
                    Ok(Step::Run)
                }
                Err(err) => Ok(answer_err(err)),
            };
        }
        match ask::answer(&state.question(), responses.as_ref()) {
            Some(Answer::Confirmed) => {
                if let Some(tickets) = &state.tickets {
                    // Exactly the tickets the user saw, however the query finds others now.
                    if let Some(arguments) = context.arguments.as_mut() {
                        arguments.remove("query");
                    }
                    set(context, "expected_count", tickets.len().into());
                    set(context, "tickets", tickets.clone().into());
                } else if let Some(digest) = &state.digest {
                    // Too many to name: the preview again, which must show the same.
                    match self.preview_bulk::<O>(caller, &current).await {
                        Ok(Preview::Ask(now)) if now.digest.as_ref() == Some(digest) => {
                            set(context, "expected_count", state.count.unwrap_or(0).into());
                        }
                        Ok(Preview::Ask(now)) => {
                            let now = Asked {
                                asked: Some("confirm".into()),
                                ticket: state.ticket,
                                message: format!(
                                    "The tickets changed since you were asked. {}",
                                    now.message
                                ),
                                ..now
                            };
                            return ask_for(asker, &binding, &now);
                        }
                        Ok(Preview::Run(expected)) => {
                            if let Some(count) = expected {
                                set(context, "expected_count", count.into());
                            }
                        }
                        Err(err) => return Ok(answer_err(err)),
                    }
                }
                Ok(Step::Run)
            }
            Some(Answer::Declined) => Ok(answer_err(Answer::declined(if bulk {
                "no ticket was changed"
            } else {
                "the ticket was not deleted"
            }))),
            // No answer (or not one to this question): ask again.
            Some(Answer::Chose(_)) | None => ask_for(asker, &binding, &state),
        }
    }

    /// The tickets whose words match `words`, best first, as choices.
    async fn candidates(
        &self,
        caller: &Caller,
        words: &str,
    ) -> Result<Vec<(String, String)>, ToolError> {
        // The words as words: quotes and qualifiers of the query language are not theirs.
        let query: String = words
            .split_whitespace()
            .map(|w| w.trim_matches(|c: char| !c.is_alphanumeric()))
            .filter(|w| !w.is_empty() && !w.contains(':'))
            .collect::<Vec<_>>()
            .join(" ");
        if query.is_empty() {
            return Ok(Vec::new());
        }
        let found = self
            .run_json::<ops::SearchTickets>(
                caller,
                serde_json::json!({ "query": query, "limit": CHOICES }),
            )
            .await;
        // A query the language refuses finds nothing to choose from.
        let Ok(found) = found else {
            return Ok(Vec::new());
        };
        Ok(found["hits"]
            .as_array()
            .map(|hits| {
                hits.iter()
                    .filter_map(|hit| {
                        let number = hit["number"].as_str()?;
                        let title = hit["title"].as_str().unwrap_or_default();
                        Some((
                            number.to_string(),
                            format!("{number} {}", mcp_common::excerpt(title, 80)),
                        ))
                    })
                    .collect()
            })
            .unwrap_or_default())
    }

    /// The question of deleting the ticket the arguments name (its number and title; the
    /// number alone for a caller that may delete but not read).
    async fn preview_delete(
        &self,
        caller: &Caller,
        arguments: &JsonObject,
    ) -> Result<Preview, ToolError> {
        let Some(ticket) = arguments.get("ticket_id").and_then(Value::as_str) else {
            // The operation refuses the arguments itself.
            return Ok(Preview::Run(None));
        };
        let shown = match self
            .run_json::<ops::GetTicket>(caller, serde_json::json!({ "ticket_id": ticket }))
            .await
        {
            Ok(detail) => {
                let number = detail["ticket"]["number"].as_str().unwrap_or(ticket);
                let title = detail["ticket"]["title"].as_str().unwrap_or_default();
                format!("{number} “{}”", mcp_common::excerpt(title, 120))
            }
            Err(err) if err.class() == mcp_common::ErrorClass::PermissionDenied => {
                mcp_common::excerpt(ticket, 40)
            }
            Err(err) => return Err(err),
        };
        Ok(Preview::Ask(Asked {
            message: format!(
                "Delete {shown}? It leaves every board, list and search; its history is kept."
            ),
            ..Asked::default()
        }))
    }

    /// The question of a bulk edit: how many tickets it changes, the first few named (all
    /// of them, up to 50, sealed with the question); none when it changes nothing or would
    /// be refused.
    async fn preview_bulk<O: Operation>(
        &self,
        caller: &Caller,
        arguments: &JsonObject,
    ) -> Result<Preview, ToolError> {
        let mut preview = arguments.clone();
        preview.insert("dry_run".into(), true.into());
        let data = self.run_json::<O>(caller, Value::Object(preview)).await?;
        let matched = data["matched"].as_u64().unwrap_or(0);
        let changed = data["changed"].as_u64().unwrap_or(0);
        if data["refused_total"].as_u64().unwrap_or(0) > 0 {
            // Refused whole anyway: the operation says why.
            return Ok(Preview::Run(None));
        }
        if changed == 0 {
            return Ok(Preview::Run(Some(matched)));
        }
        let numbers: Vec<String> = data["tickets"]
            .as_array()
            .map(|tickets| {
                tickets
                    .iter()
                    .filter_map(|t| t["number"].as_str().map(String::from))
                    .collect()
            })
            .unwrap_or_default();
        let named: Vec<&str> = numbers.iter().take(NAMED).map(String::as_str).collect();
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
        let all_named = numbers.len() as u64 == changed;
        // What the preview showed (sealed, so kept as it is: no hash needed).
        let digest = format!("{matched} {changed} {}", numbers.join(" "));
        Ok(Preview::Ask(Asked {
            message: format!(
                "Change {changed} {tickets} ({}{more}) of the {matched} found, e.g. {}? All or none.",
                named.join(", "),
                mcp_common::excerpt(&what, 200)
            ),
            count: Some(matched),
            tickets: all_named.then_some(numbers),
            digest: (!all_named).then_some(digest),
            ..Asked::default()
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

/// Sets the argument `name` of the call in `context`.
fn set<S>(context: &mut ToolCallContext<'_, S>, name: &str, value: Value) {
    context
        .arguments
        .get_or_insert_with(JsonObject::new)
        .insert(name.into(), value);
}

fn ask_for(asker: &Asker, binding: &Binding, asked: &Asked) -> Result<Step, ErrorData> {
    match asker.ask(binding, &asked.question(), asked) {
        Ok(result) => Ok(Step::Answer(CallToolResponse::InputRequired(result))),
        Err(err) => Ok(answer_err(err)),
    }
}
