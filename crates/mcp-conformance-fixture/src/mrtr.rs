//! The tools and the prompt that ask the client through `InputRequiredResult` (Multi
//! Round-Trip Requests, SEP-2322, the stateless wire): the client calls again with the
//! answers in `inputResponses` and the `requestState` echoed. State is sealed and opened by
//! the kit's [`mcp_common::ask::Asker`], bound to the tool and its arguments: an altered
//! state is refused with `-32602`.
//!
//! Answers that are missing, malformed or of another key are not errors: the question is
//! asked again (keys the tool did not ask for are ignored).

use mcp_common::ToJsonRpc as _;
use mcp_common::ask::Binding;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, GetPromptRequestParams, GetPromptResponse,
    InputRequests, InputRequiredResult,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer};
use serde_json::{Map, Value, json};

use crate::state::Fixture;
use crate::wire::{result_of, text, text_at, wire};

/// The tools of this module.
pub const TOOLS: &[&str] = &[
    "test_input_required_result_elicitation",
    "test_input_required_result_sampling",
    "test_input_required_result_list_roots",
    "test_input_required_result_request_state",
    "test_input_required_result_multiple_inputs",
    "test_input_required_result_multi_round",
    "test_input_required_result_tampered_state",
    "test_input_required_result_capabilities",
];

/// Whom a state is bound to: the stateless wire names no caller, so every caller is one.
const CALLER: &str = "conformance";

/// The tool definitions (none takes arguments).
pub fn definitions() -> Vec<Value> {
    let about = [
        "MRTR: returns InputRequiredResult with elicitation request",
        "MRTR: returns InputRequiredResult with sampling request",
        "MRTR: returns InputRequiredResult with roots/list request",
        "MRTR: returns InputRequiredResult with requestState",
        "MRTR: returns InputRequiredResult with multiple input requests",
        "MRTR: multi-round InputRequiredResult workflow",
        "MRTR: signed requestState integrity test",
        "MRTR: respects client capabilities in inputRequests",
    ];
    TOOLS
        .iter()
        .zip(about)
        .map(|(name, description)| {
            json!({
                "name": name,
                "description": description,
                "inputSchema": {"type": "object", "properties": {}},
            })
        })
        .collect()
}

/// An elicitation of one required field (`field`, of JSON type `kind`).
fn elicitation(message: &str, field: &str, kind: &str) -> Value {
    mcp_common::ask::form(message, field, json!({"type": kind}))
}

/// A sampling request of one user message.
fn sampling(prompt: &str, max_tokens: u32) -> Value {
    json!({
        "method": "sampling/createMessage",
        "params": {
            "messages": [{"role": "user", "content": {"type": "text", "text": prompt}}],
            "maxTokens": max_tokens,
        },
    })
}

fn roots() -> Value {
    json!({"method": "roots/list", "params": {}})
}

/// An `InputRequiredResult` without state.
fn ask(
    requests: impl IntoIterator<Item = (&'static str, Value)>,
) -> Result<InputRequiredResult, ErrorData> {
    let mut input_requests = InputRequests::new();
    for (key, request) in requests {
        input_requests.insert(key.to_string(), wire(request)?);
    }
    Ok(InputRequiredResult::new(Some(input_requests), None))
}

/// The string `field` of an accepted elicitation answer.
fn accepted<'a>(answer: Option<&'a Value>, field: &str) -> Option<&'a str> {
    if text_at(answer, "/action")? != "accept" {
        return None;
    }
    text_at(answer, &format!("/content/{field}"))
}

/// The number of roots of a `roots/list` answer.
fn root_count(answer: Option<&Value>) -> Option<usize> {
    Some(answer?.get("roots")?.as_array()?.len())
}

/// Call one of [`TOOLS`].
pub async fn call(
    fixture: &Fixture,
    request: CallToolRequestParams,
    context: RequestContext<RoleServer>,
) -> Result<CallToolResponse, ErrorData> {
    let responses: Map<String, Value> =
        mcp_common::ask::responses(request.input_responses.as_ref()).unwrap_or_default();
    let response = |key: &str| responses.get(key);
    let arguments = Value::Object(request.arguments.clone().unwrap_or_default());
    let binding = Binding::new(CALLER, &request.name, &arguments);
    let asker = fixture.asker();
    let state: Option<Value> = asker.open(&binding, request.request_state.as_deref())?;
    let sealed = |requests: Vec<(&'static str, Value)>, state: Value| {
        asker
            .ask_with(&binding, requests, &state)
            .map(CallToolResponse::InputRequired)
            .map_err(|err| err.to_json_rpc())
    };
    let kind = |state: &Option<Value>| text_at(state.as_ref(), "/kind").map(str::to_owned);
    match request.name.as_ref() {
        "test_input_required_result_elicitation" => match accepted(response("user_name"), "name") {
            Some(name) => text(format!("Hello, {name}!")),
            None => ask([(
                "user_name",
                elicitation("What is your name?", "name", "string"),
            )])
            .map(CallToolResponse::InputRequired),
        },
        "test_input_required_result_sampling" => {
            match text_at(response("sample_request"), "/content/text") {
                Some(said) => text(format!("Sampling result: {said}")),
                None => ask([(
                    "sample_request",
                    sampling("What is the capital of France?", 100),
                )])
                .map(CallToolResponse::InputRequired),
            }
        }
        "test_input_required_result_list_roots" => match root_count(response("roots_request")) {
            Some(count) => text(format!("Found {count} root(s)")),
            None => ask([("roots_request", roots())]).map(CallToolResponse::InputRequired),
        },
        "test_input_required_result_request_state" => {
            let ok = response("confirm")
                .and_then(|answer| answer.pointer("/content/ok"))
                .and_then(Value::as_bool);
            if kind(&state).as_deref() == Some("request-state") && ok == Some(true) {
                return text("state-ok: requestState validated");
            }
            sealed(
                vec![("confirm", elicitation("Please confirm", "ok", "boolean"))],
                json!({"kind": "request-state"}),
            )
        }
        "test_input_required_result_multiple_inputs" => {
            let name = accepted(response("user_name"), "name");
            let greeting = response("greeting")
                .map(|answer| text_at(Some(answer), "/content/text").unwrap_or("Hello there!"));
            let count = root_count(response("client_roots"));
            if kind(&state).as_deref() == Some("multiple-inputs")
                && let (Some(name), Some(greeting), Some(count)) = (name, greeting, count)
            {
                return text(format!(
                    "Name: {name}; Greeting: {greeting}; Roots: {count}"
                ));
            }
            sealed(
                vec![
                    (
                        "user_name",
                        elicitation("What is your name?", "name", "string"),
                    ),
                    ("greeting", sampling("Generate a greeting", 50)),
                    ("client_roots", roots()),
                ],
                json!({"kind": "multiple-inputs"}),
            )
        }
        "test_input_required_result_multi_round" => {
            let round = state
                .as_ref()
                .and_then(|state| state.get("round"))
                .and_then(Value::as_u64);
            if round == Some(1)
                && let Some(name) = accepted(response("step1"), "name")
            {
                return sealed(
                    vec![(
                        "step2",
                        elicitation("Step 2: What is your favorite color?", "color", "string"),
                    )],
                    json!({"round": 2, "name": name}),
                );
            }
            if round == Some(2)
                && let Some(color) = accepted(response("step2"), "color")
            {
                let name = text_at(state.as_ref(), "/name").unwrap_or("friend");
                return text(format!("Multi-round complete for {name} who likes {color}"));
            }
            sealed(
                vec![(
                    "step1",
                    elicitation("Step 1: What is your name?", "name", "string"),
                )],
                json!({"round": 1}),
            )
        }
        "test_input_required_result_tampered_state" => {
            // A state that does not verify was refused above (`Asker::open`).
            if kind(&state).as_deref() == Some("tamper-test") && response("confirm").is_some() {
                return text("integrity-ok: state verified");
            }
            sealed(
                vec![("confirm", elicitation("Please confirm", "ok", "boolean"))],
                json!({"kind": "tamper-test"}),
            )
        }
        "test_input_required_result_capabilities" => {
            if !responses.is_empty() {
                let keys: Vec<&str> = responses.keys().map(String::as_str).collect();
                return text(format!("capabilities-ok: received {}", keys.join(",")));
            }
            let capabilities = context.client_capabilities().unwrap_or_default();
            let mut requests = Vec::new();
            if capabilities.elicitation.is_some() {
                requests.push((
                    "elicit_input",
                    elicitation("Elicitation input", "value", "string"),
                ));
            }
            if capabilities.sampling.is_some() {
                requests.push(("sample_input", sampling("Sample request", 50)));
            }
            if requests.is_empty() {
                return text("No supported capabilities declared");
            }
            sealed(requests, json!({"kind": "capabilities-test"}))
        }
        other => Err(mcp_common::protocol::unknown_tool(
            other,
            TOOLS.iter().copied(),
        )),
    }
}

/// `prompts/get` of [`crate::prompts::INPUT_REQUIRED`]: asks for the context, then answers a message with it.
pub fn prompt(
    _fixture: &Fixture,
    request: &GetPromptRequestParams,
) -> Result<GetPromptResponse, ErrorData> {
    let responses =
        mcp_common::ask::responses(request.input_responses.as_ref()).unwrap_or_default();
    match accepted(responses.get("user_context"), "context") {
        Some(context) => result_of::<rmcp::model::GetPromptResult>(json!({
            "messages": [{"role": "user", "content": {"type": "text", "text": format!("Prompt with context: {context}")}}],
        }))
        .map(Into::into),
        None => ask([(
            "user_context",
            elicitation("What context should the prompt use?", "context", "string"),
        )])
        .map(GetPromptResponse::InputRequired),
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn the_prompt_asks_until_it_is_answered() {
        let fixture = Fixture::new();
        let mut request = GetPromptRequestParams::new(crate::prompts::INPUT_REQUIRED);
        let GetPromptResponse::InputRequired(asked) = prompt(&fixture, &request).unwrap() else {
            panic!("a first round asks");
        };
        assert!(asked.input_requests.unwrap().contains_key("user_context"));
        let answer = json!({"action": "accept", "content": {"context": "tests"}});
        request.input_responses = Some([("user_context".to_string(), answer)].into());
        let GetPromptResponse::Complete(done) = prompt(&fixture, &request).unwrap() else {
            panic!("an answer completes");
        };
        let wire = serde_json::to_value(done).unwrap();
        assert_eq!(
            wire["messages"][0]["content"]["text"],
            "Prompt with context: tests"
        );
    }

    #[test]
    fn answers_of_the_wrong_shape_are_not_accepted() {
        assert_eq!(accepted(Some(&json!(12345)), "name"), None);
        assert_eq!(accepted(Some(&json!({"action": "decline"})), "name"), None);
        let yes = json!({"action": "accept", "content": {"name": "Alice"}});
        assert_eq!(accepted(Some(&yes), "name"), Some("Alice"));
        assert_eq!(root_count(Some(&json!({"roots": [{}, {}]}))), Some(2));
        assert_eq!(root_count(Some(&json!({"roots": "x"}))), None);
    }
}
