//! Asking the user through the client (Multi Round-Trip Requests, SEP-2322, protocol
//! 2026-07-28): a tool that needs a confirmation or a choice answers `resultType:
//! "input_required"` with an elicitation for the client to put to its user and a signed
//! `requestState`; the client calls again with the same arguments, the user's answer in
//! `inputResponses` and the state echoed.
//!
//! - [`can_ask`]: whether the caller can be asked at all (2026-07-28 or later, elicitation
//!   declared). Older clients, and clients without elicitation, are never asked: the tool
//!   keeps the behaviour it had before MRTR.
//! - [`Asker`] seals the state with a key of the server's (bound to the caller, the tool and
//!   the arguments, valid for [`STATE_TTL`]) and opens it again, once: a state altered,
//!   expired, made for another caller, replayed with other arguments or answered already is
//!   refused with `-32602` (each round of a question carries a new state).
//! - [`Question`]: a yes/no confirmation or a choice between named options, as the
//!   elicitation's form; [`Answer`]: what the user said.

use std::time::Duration;

use rmcp::ErrorData;
use rmcp::RoleServer;
use rmcp::model::{
    InputRequest, InputRequests, InputRequiredResult, RequestStateCodec, SealOptions,
};
use rmcp::service::RequestContext;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value, json};

use mcp_common_core::CursorKey;
use mcp_common_core::error::{ErrorClass, ErrorCode, ToolError};

/// The first protocol version whose clients can be answered `input_required`.
pub const FIRST_VERSION: &str = "2026-07-28";

/// How long a question stays answerable: long enough for a person to read and decide.
pub const STATE_TTL: Duration = Duration::from_secs(15 * 60);

/// The key of the one question a [`Question`] puts in `inputRequests`.
pub const KEY: &str = "answer";

/// The user declined (or cancelled) what a tool asked: nothing was changed.
pub const DECLINED: ErrorCode = ErrorCode::new("declined", ErrorClass::Conflict);

/// The context of the state key derived from a server's key.
const KEY_CONTEXT: &str = "mcp-common ask 2026-12-06 request state";

/// Whether the client of `context` can be asked: its protocol is 2026-07-28 or later and it
/// declares elicitation (in the request's `_meta` on the stateless wire).
pub fn can_ask(context: &RequestContext<RoleServer>) -> bool {
    let Some(version) = context.protocol_version() else {
        return false;
    };
    // Dated versions compare as strings.
    if version.as_str() < FIRST_VERSION {
        return false;
    }
    context
        .client_capabilities()
        .is_some_and(|capabilities| capabilities.elicitation.is_some())
}

/// What a tool asks.
#[derive(Debug, Clone)]
pub enum Question {
    /// Yes or no, about `message` (what will change, in a sentence a person reads).
    Confirm { message: String },
    /// One of `options` (value, label), about `message`.
    Choose {
        message: String,
        options: Vec<(String, String)>,
    },
}

impl Question {
    /// The elicitation that puts this question to the user (a one-field form).
    fn elicitation(&self) -> Value {
        let (message, field) = match self {
            Self::Confirm { message } => (
                message,
                json!({"type": "boolean", "title": "Go ahead?", "default": false}),
            ),
            Self::Choose { message, options } => (
                message,
                json!({
                    "type": "string",
                    "title": "Which one?",
                    "oneOf": options
                        .iter()
                        .map(|(value, label)| json!({"const": value, "title": label}))
                        .collect::<Vec<_>>(),
                }),
            ),
        };
        form(message, KEY, field)
    }
}

/// An `elicitation/create` input request of a form with one required field `name` of
/// JSON Schema `schema`, asking `message`.
pub fn form(message: &str, name: &str, schema: Value) -> Value {
    json!({
        "method": "elicitation/create",
        "params": {
            "mode": "form",
            "message": message,
            "requestedSchema": {
                "type": "object",
                "properties": {name: schema},
                "required": [name],
            },
        },
    })
}

/// What the user answered.
#[derive(Debug, Clone, PartialEq)]
pub enum Answer {
    /// Yes, to a confirmation.
    Confirmed,
    /// The option chosen (one of the question's values).
    Chose(String),
    /// No, declined or cancelled: nothing is to change.
    Declined,
}

impl Answer {
    /// The error a tool answers when the user said no: nothing changed (`what` says what
    /// was not done).
    pub fn declined(what: &str) -> ToolError {
        ToolError::new(DECLINED, format!("the user declined: {what}"))
            .with_hint("Nothing changed. Call again only if the user asks for it.")
    }
}

/// Whom and what a question is bound to: the caller (a workspace and token, a user; the same
/// string for every call of one caller), the tool and its arguments.
pub struct Binding(Vec<u8>);

impl Binding {
    /// The binding of a call of `tool` with `arguments` by `caller`.
    pub fn new(caller: &str, tool: &str, arguments: &impl Serialize) -> Self {
        // serde_json writes maps in key order (no preserve_order), so equal arguments
        // give equal bytes.
        let arguments = serde_json::to_vec(arguments).unwrap_or_default();
        let mut hasher = blake3::Hasher::new();
        for part in [caller.as_bytes(), tool.as_bytes(), &arguments] {
            hasher.update(&(part.len() as u64).to_le_bytes());
            hasher.update(part);
        }
        Self(hasher.finalize().as_bytes().to_vec())
    }
}

/// Seals and opens the state of questions (one per server; see the module's documentation).
pub struct Asker {
    /// `None` only if the codec refused a 32-byte key, its documented minimum: then nothing
    /// is sealed and every state is refused.
    codec: Option<RequestStateCodec>,
    /// The states opened already, until they expire: a state opens once.
    spent: std::sync::Mutex<Spent>,
}

/// Most opened states remembered. Past it the one opened longest ago is forgotten, and
/// every state sealed no later than it is refused from then on (asked anew): forgetting
/// never lets a state open twice.
const MOST_SPENT: usize = 100_000;

/// The states opened, in the order they were.
#[derive(Default)]
struct Spent {
    nonces: std::collections::HashSet<String>,
    order: std::collections::VecDeque<(std::time::Instant, String, u64)>,
    /// States sealed at or before this time (ms since the epoch) are refused.
    floor: u64,
}

/// What is sealed: a nonce (so each state opens once), when (ms since the epoch) and the
/// tool's own state.
#[derive(Serialize, serde::Deserialize)]
struct Sealed<T> {
    n: String,
    t: u64,
    s: T,
}

fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0)
}

impl std::fmt::Debug for Asker {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Asker")
    }
}

impl Asker {
    /// An asker whose key derives from `key`. A state opens once in the process that
    /// asked (which remembers it): give each process its own key (`CursorKey::random`), or
    /// a state answered at one process could be answered again at another that shares it.
    pub fn new(key: &CursorKey) -> Self {
        let subkey = key.subkey(KEY_CONTEXT);
        Self {
            codec: RequestStateCodec::try_new(subkey.to_vec()).ok(),
            spent: std::sync::Mutex::default(),
        }
    }

    /// The answer that asks `question`, carrying `state` (what the tool needs on the next
    /// round, e.g. what it resolved) sealed to `binding`.
    pub fn ask(
        &self,
        binding: &Binding,
        question: &Question,
        state: &impl Serialize,
    ) -> Result<InputRequiredResult, ToolError> {
        self.ask_with(binding, [(KEY, question.elicitation())], state)
    }

    /// [`Asker::ask`] with any input requests (`method`/`params` objects by key), for tools
    /// that ask several things at once or ask for sampling or roots.
    pub fn ask_with(
        &self,
        binding: &Binding,
        requests: impl IntoIterator<Item = (&'static str, Value)>,
        state: &impl Serialize,
    ) -> Result<InputRequiredResult, ToolError> {
        let mut input_requests = InputRequests::new();
        for (key, request) in requests {
            let request: InputRequest = serde_json::from_value(request).map_err(|err| {
                ToolError::internal(format!("an input request is malformed: {err}"))
            })?;
            input_requests.insert(key.to_owned(), request);
        }
        let nonce = uuid::Uuid::new_v4().simple().to_string();
        let sealed = Sealed {
            n: nonce,
            t: now_ms(),
            s: state,
        };
        let payload = serde_json::to_vec(&sealed).map_err(|err| {
            ToolError::internal(format!("a request state does not serialize: {err}"))
        })?;
        let codec = self
            .codec
            .as_ref()
            .ok_or_else(|| ToolError::internal("the request-state key was refused"))?;
        let sealed = codec.seal_with(
            &payload,
            &SealOptions::new()
                .associated_data(&binding.0)
                .ttl(STATE_TTL),
        );
        Ok(InputRequiredResult::new(Some(input_requests), Some(sealed)))
    }

    /// The state a previous [`Asker::ask`] sealed, when the request echoes one: `Ok(None)` on
    /// a first round; `-32602` when it was altered, has expired or belongs to another caller,
    /// tool or set of arguments.
    pub fn open<T: DeserializeOwned>(
        &self,
        binding: &Binding,
        request_state: Option<&str>,
    ) -> Result<Option<T>, ErrorData> {
        let Some(sealed) = request_state else {
            return Ok(None);
        };
        // One answer for every failure of the seal (the codec's own advice): which check
        // failed helps only a forger.
        let opened: Option<Sealed<Value>> = self
            .codec
            .as_ref()
            .and_then(|codec| codec.open_json_with(sealed, &binding.0).ok());
        let Some(opened) = opened else {
            return Err(refused());
        };
        if !self.spend(opened.n, opened.t) {
            return Err(ErrorData::invalid_params(
                "requestState was answered already: each round of a question carries a new one",
                Some(json!({
                    "retryable": false,
                    "hint": "Call again without requestState and inputResponses to be asked anew.",
                })),
            ));
        }
        serde_json::from_value(opened.s)
            .map(Some)
            .map_err(|_| refused())
    }

    /// Marks `nonce` (sealed at `sealed_ms`) opened; `false` when it was already, or may
    /// have been and was forgotten.
    fn spend(&self, nonce: String, sealed_ms: u64) -> bool {
        self.spent
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .spend(nonce, sealed_ms, std::time::Instant::now(), MOST_SPENT)
    }
}

impl Spent {
    /// [`Asker::spend`], at `now`, remembering at most `most`.
    fn spend(
        &mut self,
        nonce: String,
        sealed_ms: u64,
        now: std::time::Instant,
        most: usize,
    ) -> bool {
        while let Some((at, _, _)) = self.order.front()
            && now.duration_since(*at) >= STATE_TTL
        {
            if let Some((_, old, _)) = self.order.pop_front() {
                self.nonces.remove(&old);
            }
        }
        if sealed_ms <= self.floor || self.nonces.contains(&nonce) {
            return false;
        }
        if self.order.len() >= most
            && let Some((_, old, old_sealed)) = self.order.pop_front()
        {
            self.nonces.remove(&old);
            self.floor = self.floor.max(old_sealed);
            if sealed_ms <= self.floor {
                return false;
            }
        }
        self.nonces.insert(nonce.clone());
        self.order.push_back((now, nonce, sealed_ms));
        true
    }
}

/// The refusal of a state that does not verify.
fn refused() -> ErrorData {
    ErrorData::invalid_params(
        "requestState does not verify: it was altered, has expired, or belongs to another call",
        Some(json!({
            "retryable": false,
            "hint": "Call again without requestState and inputResponses to be asked anew.",
        })),
    )
}

/// The user's answer to [`Question`] in `responses`, if any: `None` when the responses lack
/// it (or it does not have the question's shape), in which case the tool asks again.
pub fn answer(question: &Question, responses: Option<&Map<String, Value>>) -> Option<Answer> {
    response(question, responses.and_then(|responses| responses.get(KEY)))
}

/// The answer of one elicitation `result` (`{"action", "content"}`) to `question`.
pub fn response(question: &Question, result: Option<&Value>) -> Option<Answer> {
    let result = result?;
    match result.get("action").and_then(Value::as_str)? {
        "accept" => {}
        "decline" | "cancel" => return Some(Answer::Declined),
        _ => return None,
    }
    let value = result.get("content")?.get("answer")?;
    match question {
        Question::Confirm { .. } => match value.as_bool()? {
            true => Some(Answer::Confirmed),
            false => Some(Answer::Declined),
        },
        Question::Choose { options, .. } => {
            let chosen = value.as_str()?;
            options
                .iter()
                .any(|(value, _)| value == chosen)
                .then(|| Answer::Chose(chosen.to_owned()))
        }
    }
}

/// The responses of a call as a JSON map (rmcp hands them over as a `BTreeMap`).
pub fn responses(input: Option<&rmcp::model::InputResponses>) -> Option<Map<String, Value>> {
    input.map(|input| input.iter().map(|(k, v)| (k.clone(), v.clone())).collect())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn confirm() -> Question {
        Question::Confirm {
            message: "Delete JIL-1?".into(),
        }
    }

    #[test]
    fn a_state_opens_only_for_its_caller_tool_and_arguments() {
        let asker = Asker::new(&CursorKey::random());
        let binding = Binding::new("alice", "delete", &json!({"id": 1}));
        let asked = asker.ask(&binding, &confirm(), &json!({"id": 1})).unwrap();
        let state = asked.request_state.clone().unwrap();
        let opened: Value = asker.open(&binding, Some(&state)).unwrap().unwrap();
        assert_eq!(opened, json!({"id": 1}));
        for other in [
            Binding::new("bob", "delete", &json!({"id": 1})),
            Binding::new("alice", "close", &json!({"id": 1})),
            Binding::new("alice", "delete", &json!({"id": 2})),
        ] {
            let err = asker.open::<Value>(&other, Some(&state)).unwrap_err();
            assert_eq!(err.code.0, -32602);
        }
        let tampered = format!("{state}x");
        assert!(asker.open::<Value>(&binding, Some(&tampered)).is_err());
        let other_server = Asker::new(&CursorKey::random());
        assert!(other_server.open::<Value>(&binding, Some(&state)).is_err());
        // Opened once already: a replay is refused.
        let err = asker.open::<Value>(&binding, Some(&state)).unwrap_err();
        assert!(err.message.contains("answered already"), "{}", err.message);
        let fresh = asker.ask(&binding, &confirm(), &json!(2)).unwrap();
        let fresh = fresh.request_state.unwrap();
        assert_eq!(
            asker.open::<Value>(&binding, Some(&fresh)).unwrap(),
            Some(json!(2))
        );
        assert_eq!(asker.open::<Value>(&binding, None).unwrap(), None);
    }

    #[test]
    fn forgetting_an_opened_state_never_lets_one_open_twice() {
        let now = std::time::Instant::now();
        let mut spent = Spent::default();
        assert!(spent.spend("a".into(), 10, now, 2));
        assert!(!spent.spend("a".into(), 10, now, 2), "opened already");
        assert!(spent.spend("b".into(), 30, now, 2));
        // Full: "a" (sealed at 10) is forgotten, and every state sealed by then refused.
        assert!(spent.spend("c".into(), 20, now, 2));
        assert!(
            !spent.spend("a".into(), 10, now, 2),
            "forgotten, still refused"
        );
        assert!(
            !spent.spend("d".into(), 5, now, 2),
            "sealed before the floor"
        );
        assert!(!spent.spend("b".into(), 30, now, 2));
        // Expired entries go first.
        let later = now + STATE_TTL;
        assert!(spent.spend("e".into(), 40, later, 2));
        assert!(spent.order.len() == 1 && spent.nonces.len() == 1);
    }

    #[test]
    fn the_question_is_a_one_field_form() {
        let asker = Asker::new(&CursorKey::random());
        let binding = Binding::new("a", "t", &());
        let asked = asker.ask(&binding, &confirm(), &()).unwrap();
        let wire = serde_json::to_value(&asked).unwrap();
        assert_eq!(wire["resultType"], "input_required");
        let request = &wire["inputRequests"][KEY];
        assert_eq!(request["method"], "elicitation/create");
        assert_eq!(request["params"]["message"], "Delete JIL-1?");
        assert_eq!(
            request["params"]["requestedSchema"]["properties"]["answer"]["type"],
            "boolean"
        );
    }

    #[test]
    fn answers_are_read_from_the_elicitation_result() {
        let yes = json!({"action": "accept", "content": {"answer": true}});
        let no = json!({"action": "accept", "content": {"answer": false}});
        assert_eq!(response(&confirm(), Some(&yes)), Some(Answer::Confirmed));
        assert_eq!(response(&confirm(), Some(&no)), Some(Answer::Declined));
        for action in ["decline", "cancel"] {
            let result = json!({ "action": action });
            assert_eq!(response(&confirm(), Some(&result)), Some(Answer::Declined));
        }
        assert_eq!(response(&confirm(), None), None);
        assert_eq!(
            response(&confirm(), Some(&json!({"action": "accept"}))),
            None
        );
        let choose = Question::Choose {
            message: "Which?".into(),
            options: vec![("a1".into(), "A one".into()), ("a2".into(), "A two".into())],
        };
        let chose = json!({"action": "accept", "content": {"answer": "a2"}});
        assert_eq!(
            response(&choose, Some(&chose)),
            Some(Answer::Chose("a2".into()))
        );
        let other = json!({"action": "accept", "content": {"answer": "zz"}});
        assert_eq!(response(&choose, Some(&other)), None);
    }
}
