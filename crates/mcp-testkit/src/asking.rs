//! A client of the 2026-07-28 era that can be asked (elicitation declared): rmcp's own
//! client, on the stateless lifecycle (`server/discover`, per-request `_meta`), whose
//! `call_tool` answers `input_required` results itself and calls again — as a host that puts
//! a server's questions to its user does. The "user" answers from a script, and every
//! question it was asked is recorded.

use std::collections::VecDeque;
use std::path::Path;
use std::process::Stdio;
use std::sync::{Arc, Mutex};

use rmcp::model::{
    CallToolRequestParams, CallToolResult, ClientCapabilities, ClientConfig, ElicitRequestParams,
    ElicitResult, ElicitationAction, ElicitationCapability, FormElicitationCapability,
    Implementation, ProtocolVersion,
};
use rmcp::service::{ClientLifecycleMode, ClientServiceExt as _, RequestContext, RunningService};
use rmcp::transport::TokioChildProcess;
use rmcp::{ClientHandler, ErrorData, RoleClient};
use serde_json::{Map, Value};

/// What the scripted user answers to the next question.
#[derive(Debug, Clone)]
pub enum Reply {
    /// Accept, with `{"answer": value}` as the form's content.
    Answer(Value),
    Decline,
    Cancel,
}

/// The "user" behind the client: the replies still to give, the questions asked so far.
#[derive(Clone, Default)]
pub struct User {
    replies: Arc<Mutex<VecDeque<Reply>>>,
    asked: Arc<Mutex<Vec<Value>>>,
}

impl User {
    /// Answers `reply` to the next question.
    pub fn will(&self, reply: Reply) {
        self.replies.lock().unwrap().push_back(reply);
    }

    /// Every question asked so far (each the elicitation's params), and forgets them.
    pub fn asked(&self) -> Vec<Value> {
        std::mem::take(&mut *self.asked.lock().unwrap())
    }
}

/// The client handler: declares form elicitation and answers from the [`User`].
#[derive(Clone)]
pub struct AskingClient {
    user: User,
}

impl ClientHandler for AskingClient {
    async fn create_elicitation(
        &self,
        request: ElicitRequestParams,
        _context: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, ErrorData> {
        self.user
            .asked
            .lock()
            .unwrap()
            .push(serde_json::to_value(&request).unwrap_or(Value::Null));
        let reply = self.user.replies.lock().unwrap().pop_front();
        Ok(match reply {
            Some(Reply::Answer(value)) => {
                let mut content = Map::new();
                content.insert("answer".into(), value);
                ElicitResult::new(ElicitationAction::Accept).with_content(Value::Object(content))
            }
            Some(Reply::Cancel) => ElicitResult::new(ElicitationAction::Cancel),
            Some(Reply::Decline) | None => ElicitResult::new(ElicitationAction::Decline),
        })
    }

    fn get_info(&self) -> ClientConfig {
        let mut capabilities = ClientCapabilities::default();
        capabilities.elicitation =
            Some(ElicitationCapability::default().with_form(FormElicitationCapability::default()));
        let mut info = ClientConfig::default();
        info.capabilities = capabilities;
        info.client_info = Implementation::new("mcp-testkit-asking", env!("CARGO_PKG_VERSION"));
        info
    }
}

/// A server binary driven over stdio by an [`AskingClient`] on protocol 2026-07-28.
pub struct Asking {
    pub user: User,
    service: RunningService<RoleClient, AskingClient>,
}

impl Asking {
    /// Spawn `bin` with `args` in `cwd` with exactly `env` (plus `PATH`) and discover it.
    pub async fn spawn(bin: &Path, args: &[&str], cwd: &Path, env: &[(&str, &str)]) -> Self {
        let mut command = crate::clean_command(bin, args, cwd, env);
        command.kill_on_drop(true);
        let (transport, _stderr) = TokioChildProcess::builder(command)
            .stderr(Stdio::null())
            .spawn()
            .expect("the server starts");
        let user = User::default();
        let client = AskingClient { user: user.clone() };
        let lifecycle = ClientLifecycleMode::Discover {
            preferred_versions: vec![ProtocolVersion::V_2026_07_28],
        };
        let service = tokio::time::timeout(
            crate::REQUEST_TIMEOUT,
            client.serve_with_lifecycle(transport, lifecycle),
        )
        .await
        .expect("discovery in time")
        .expect("discovery");
        Self { user, service }
    }

    /// A call of `tool` with `arguments`, its questions answered by the user.
    pub async fn call(&self, tool: &str, arguments: Value) -> CallToolResult {
        let Value::Object(arguments) = arguments else {
            panic!("arguments are an object")
        };
        let params = CallToolRequestParams::new(tool.to_string()).with_arguments(arguments);
        tokio::time::timeout(crate::REQUEST_TIMEOUT, self.service.call_tool(params))
            .await
            .expect("an answer in time")
            .expect("a result")
    }

    /// One round of a call (no question answered): the raw result, `input_required` or not.
    pub async fn call_once(&self, params: CallToolRequestParams) -> rmcp::model::CallToolResponse {
        tokio::time::timeout(crate::REQUEST_TIMEOUT, self.service.call_tool_once(params))
            .await
            .expect("an answer in time")
            .expect("a result")
    }

    /// [`Asking::call_once`], with a refusal (a JSON-RPC error) as its text.
    pub async fn raw_call_once(
        &self,
        params: CallToolRequestParams,
    ) -> Result<rmcp::model::CallToolResponse, String> {
        self.service
            .call_tool_once(params)
            .await
            .map_err(|err| format!("{err:?}"))
    }
}
