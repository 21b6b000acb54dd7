//! Test harness shared by every server's integration tests: spawn a built server binary as a
//! child process, speak MCP to it through rmcp's client over stdio, and read typed results.
//!
//! Assertion helpers panic with a descriptive message: that is how a test fails.
//!
//! [`bench`] holds the measurement plumbing of the servers' stdio benchmarks.
#![allow(clippy::panic, clippy::expect_used, clippy::unwrap_used)]

pub mod asking;
pub mod bench;
pub mod edge;
pub mod killable;
pub mod protocol;
pub mod stateless;
pub mod surface;

use std::{
    path::Path,
    process::Stdio,
    sync::{Arc, Mutex},
    time::Duration,
};

use mcp_common::{Page, WireError, WireResponse};
use rmcp::{
    ClientHandler, RoleClient, ServiceExt,
    model::{
        CallToolRequestParams, CallToolResult, ClientConfig, ClientRequest, GetPromptRequestParams,
        GetPromptResult, Implementation, PingRequest, ReadResourceRequestParams,
        ReadResourceResult, ResourceContents, ResourceUpdatedNotificationParam,
    },
    service::{NotificationContext, Peer, RunningService},
    transport::TokioChildProcess,
};
use serde::de::DeserializeOwned;
use serde_json::Value;
use tokio::{
    io::AsyncReadExt,
    process::Command,
    sync::{Notify, mpsc},
};

/// How long a single request may take before the harness gives up (a hung server fails the
/// test instead of hanging it).
pub const REQUEST_TIMEOUT: Duration = Duration::from_secs(30);

/// The client side of the connection: records `notifications/resources/updated`.
#[derive(Clone)]
pub struct RecordingClient {
    updates: mpsc::UnboundedSender<String>,
}

impl ClientHandler for RecordingClient {
    async fn on_resource_updated(
        &self,
        params: ResourceUpdatedNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        let _ = self.updates.send(params.uri.to_string());
    }

    fn get_info(&self) -> ClientConfig {
        let mut config = ClientConfig::default();
        config.client_info = Implementation::new("mcp-testkit", env!("CARGO_PKG_VERSION"));
        config
    }
}

/// A running server binary with an MCP client attached.
pub struct McpProcess {
    service: RunningService<RoleClient, RecordingClient>,
    updates: tokio::sync::Mutex<mpsc::UnboundedReceiver<String>>,
    stderr: Arc<Mutex<Vec<u8>>>,
    stderr_done: Arc<Notify>,
    pid: Option<u32>,
    /// The server process when the client speaks HTTP to it (over stdio the transport owns
    /// the child).
    http_child: Option<tokio::process::Child>,
    /// The MCP endpoint, when connected over HTTP.
    url: Option<String>,
}

/// How the harness reaches a server binary.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Wire {
    /// The binary's stdin/stdout.
    Stdio,
    /// `--http 127.0.0.1:0`, then Streamable HTTP at the address it announces.
    Http,
}

/// Collect everything `pipe` yields into `sink`; `done` fires at its end.
fn drain_stderr(
    mut pipe: impl tokio::io::AsyncRead + Unpin + Send + 'static,
    sink: Arc<Mutex<Vec<u8>>>,
    done: Arc<Notify>,
) {
    tokio::spawn(async move {
        let mut buf = [0u8; 4096];
        loop {
            match pipe.read(&mut buf).await {
                Ok(0) | Err(_) => break,
                Ok(n) => sink.lock().unwrap().extend_from_slice(&buf[..n]),
            }
        }
        done.notify_waiters();
    });
}

/// The URL an HTTP server announced on stderr (`…serving MCP over HTTP at URL…`), waiting up
/// to [`REQUEST_TIMEOUT`] for it.
pub async fn announced_url(stderr: &Mutex<Vec<u8>>) -> anyhow::Result<String> {
    let deadline = tokio::time::Instant::now() + REQUEST_TIMEOUT;
    loop {
        {
            let text = String::from_utf8_lossy(&stderr.lock().unwrap()).into_owned();
            // Only a whole line counts: the URL ends at the first whitespace after it.
            if let Some(rest) = text.split("serving MCP over HTTP at ").nth(1)
                && let Some(end) = rest.find(char::is_whitespace)
            {
                return Ok(rest[..end].to_string());
            }
            if tokio::time::Instant::now() > deadline {
                anyhow::bail!("the server announced no HTTP address; stderr: {text}");
            }
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

impl McpProcess {
    /// Spawn `command` (stdin/stdout become the MCP transport, stderr is captured) and
    /// complete the `initialize` handshake.
    pub async fn spawn(mut command: Command) -> anyhow::Result<Self> {
        command.kill_on_drop(true);
        let (transport, stderr_pipe) = TokioChildProcess::builder(command)
            .stderr(Stdio::piped())
            .spawn()?;
        // Recorded now: `serve` consumes the transport, and with it the child handle.
        let pid = transport.id();
        let stderr = Arc::new(Mutex::new(Vec::new()));
        let stderr_done = Arc::new(Notify::new());
        if let Some(pipe) = stderr_pipe {
            drain_stderr(pipe, stderr.clone(), stderr_done.clone());
        }
        let (tx, rx) = mpsc::unbounded_channel();
        let service = tokio::time::timeout(
            REQUEST_TIMEOUT,
            RecordingClient { updates: tx }.serve(transport),
        )
        .await??;
        Ok(Self {
            service,
            updates: tokio::sync::Mutex::new(rx),
            stderr,
            stderr_done,
            pid,
            http_child: None,
            url: None,
        })
    }

    /// Start `command` with `--http 127.0.0.1:0` appended, wait for the address it
    /// announces, and connect to it over Streamable HTTP (with `token` as bearer token).
    pub async fn spawn_http(mut command: Command, token: Option<&str>) -> anyhow::Result<Self> {
        command
            .args(["--http", "127.0.0.1:0"])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .kill_on_drop(true);
        let mut child = command.spawn()?;
        let pid = child.id();
        let stderr = Arc::new(Mutex::new(Vec::new()));
        let stderr_done = Arc::new(Notify::new());
        if let Some(pipe) = child.stderr.take() {
            drain_stderr(pipe, stderr.clone(), stderr_done.clone());
        }
        let url = announced_url(&stderr).await?;
        let mut mcp = Self::connect_http(&url, token).await?;
        mcp.stderr = stderr;
        mcp.stderr_done = stderr_done;
        mcp.pid = pid;
        mcp.http_child = Some(child);
        Ok(mcp)
    }

    /// Connect to a server already listening at `url` (…/mcp) over Streamable HTTP.
    pub async fn connect_http(url: &str, token: Option<&str>) -> anyhow::Result<Self> {
        use rmcp::transport::StreamableHttpClientTransport;
        use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
        install_crypto_provider();
        let mut config = StreamableHttpClientTransportConfig::with_uri(url.to_string());
        config.auth_header = token.map(String::from);
        // rmcp's default client opens a connection per request (it turns pooling off); agents'
        // clients keep theirs alive (Claude Code's fetch does), and so does this one.
        let http = reqwest::Client::builder()
            .tcp_nodelay(true)
            .redirect(reqwest::redirect::Policy::none())
            .build()?;
        let transport = StreamableHttpClientTransport::with_client(http, config);
        let (tx, rx) = mpsc::unbounded_channel();
        let service = tokio::time::timeout(
            REQUEST_TIMEOUT,
            RecordingClient { updates: tx }.serve(transport),
        )
        .await??;
        Ok(Self {
            service,
            updates: tokio::sync::Mutex::new(rx),
            stderr: Arc::new(Mutex::new(Vec::new())),
            stderr_done: Arc::new(Notify::new()),
            pid: None,
            http_child: None,
            url: Some(url.to_string()),
        })
    }

    /// [`Self::spawn_bin`] over the chosen wire.
    pub async fn spawn_bin_over(
        wire: Wire,
        bin: impl AsRef<Path>,
        args: &[&str],
        cwd: impl AsRef<Path>,
        env: &[(&str, &str)],
    ) -> anyhow::Result<Self> {
        let command = clean_command(bin.as_ref(), args, cwd.as_ref(), env);
        match wire {
            Wire::Stdio => Self::spawn(command).await,
            Wire::Http => Self::spawn_http(command, None).await,
        }
    }

    /// Spawn the binary at `bin` with `args`, in `cwd`, with exactly the environment `env`
    /// (plus `PATH`), so that a developer's own credentials never leak into a test.
    pub async fn spawn_bin(
        bin: impl AsRef<Path>,
        args: &[&str],
        cwd: impl AsRef<Path>,
        env: &[(&str, &str)],
    ) -> anyhow::Result<Self> {
        Self::spawn(clean_command(bin.as_ref(), args, cwd.as_ref(), env)).await
    }

    /// The server's process id, recorded when it was spawned (`None` if the operating system
    /// did not report one). It is the server itself: the command runs without a shell.
    pub fn pid(&self) -> Option<u32> {
        self.pid
    }

    /// The MCP endpoint (`http://…/mcp`) when connected over HTTP; more clients can connect
    /// to it with [`Self::connect_http`].
    pub fn url(&self) -> Option<&str> {
        self.url.as_deref()
    }

    /// The MCP peer, for requests the helpers below do not cover.
    pub fn peer(&self) -> &Peer<RoleClient> {
        self.service.peer()
    }

    /// What the server reported in its `initialize` answer.
    pub fn server_info(&self) -> rmcp::model::ServerPeerInfo {
        self.service
            .peer_info()
            .map(|info| info.as_ref().clone())
            .expect("server sent no initialize result")
    }

    /// Send an MCP `ping` and wait for its answer.
    pub async fn ping(&self) {
        let request = ClientRequest::PingRequest(PingRequest::default());
        tokio::time::timeout(REQUEST_TIMEOUT, self.peer().send_request(request))
            .await
            .expect("ping timed out")
            .expect("ping failed");
    }

    /// Call a tool; `args` must be a JSON object (or null for none).
    pub async fn call(&self, tool: &str, args: Value) -> CallToolResult {
        self.call_with(tool, tool_params(tool, args)).await
    }

    /// Send a `tools/call` built by [`tool_params`]; `tool` names it in the failure message.
    pub(crate) async fn call_with(
        &self,
        tool: &str,
        params: CallToolRequestParams,
    ) -> CallToolResult {
        tokio::time::timeout(REQUEST_TIMEOUT, self.peer().call_tool(params))
            .await
            .unwrap_or_else(|_| panic!("tools/call {tool} timed out"))
            .unwrap_or_else(|err| panic!("tools/call {tool} failed at the protocol level: {err}"))
    }

    /// Call a tool and decode its envelope, checking that the text copy, the structured
    /// content and `isError` agree.
    pub async fn call_envelope<T: DeserializeOwned>(
        &self,
        tool: &str,
        args: Value,
    ) -> Result<T, WireError> {
        self.call_wire(tool, args).await.into_result()
    }

    /// Call a list tool that must succeed; returns its data and its `page`.
    pub async fn call_paged<T: DeserializeOwned>(&self, tool: &str, args: Value) -> (T, Page) {
        match self.call_wire::<T>(tool, args).await.into_paged() {
            Ok((data, Some(page))) => (data, page),
            Ok((_, None)) => panic!("{tool}: answer has no page"),
            Err(err) => panic!("{tool}: expected ok, got error {err:?}"),
        }
    }

    /// Call a tool and decode its whole envelope (see [`Self::call_envelope`]).
    pub async fn call_wire<T: DeserializeOwned>(&self, tool: &str, args: Value) -> WireResponse<T> {
        let result = self.call(tool, args).await;
        let structured = result
            .structured_content
            .clone()
            .unwrap_or_else(|| panic!("{tool}: no structuredContent in {result:?}"));
        let text = result
            .content
            .first()
            .and_then(|c| c.as_text())
            .map(|t| t.text.clone())
            .unwrap_or_else(|| panic!("{tool}: no text content in {result:?}"));
        let from_text: Value = serde_json::from_str(&text)
            .unwrap_or_else(|err| panic!("{tool}: text content is not JSON ({err}): {text}"));
        assert_eq!(
            from_text, structured,
            "{tool}: text copy and structuredContent differ"
        );
        let status = structured.get("status").and_then(Value::as_str);
        let is_error = result.is_error.unwrap_or(false);
        assert_eq!(
            is_error,
            status == Some("error"),
            "{tool}: isError={is_error} but status={status:?}"
        );
        serde_json::from_value(structured.clone())
            .unwrap_or_else(|err| panic!("{tool}: envelope does not decode ({err}): {structured}"))
    }

    /// Call a tool whose text block is markdown (see `mcp_common::MarkdownReply`): returns the
    /// text and the decoded envelope, checking that `isError` agrees with the status.
    pub async fn call_markdown<T: DeserializeOwned>(
        &self,
        tool: &str,
        args: Value,
    ) -> (String, Result<T, WireError>) {
        let result = self.call(tool, args).await;
        let structured = result
            .structured_content
            .clone()
            .unwrap_or_else(|| panic!("{tool}: no structuredContent in {result:?}"));
        let text = result
            .content
            .first()
            .and_then(|c| c.as_text())
            .map(|t| t.text.clone())
            .unwrap_or_else(|| panic!("{tool}: no text content in {result:?}"));
        let status = structured.get("status").and_then(Value::as_str);
        let is_error = result.is_error.unwrap_or(false);
        assert_eq!(
            is_error,
            status == Some("error"),
            "{tool}: isError={is_error} but status={status:?}"
        );
        if is_error {
            assert!(text.starts_with("❌ Error: "), "{tool}: error text: {text}");
        }
        let envelope: WireResponse<T> = serde_json::from_value(structured.clone())
            .unwrap_or_else(|err| panic!("{tool}: envelope does not decode ({err}): {structured}"));
        (text, envelope.into_result())
    }

    /// Call a tool that must succeed; returns its `data`.
    pub async fn call_ok<T: DeserializeOwned>(&self, tool: &str, args: Value) -> T {
        match self.call_envelope::<T>(tool, args).await {
            Ok(data) => data,
            Err(err) => panic!("{tool}: expected ok, got error {err:?}"),
        }
    }

    /// Call a tool that must fail; returns its error object.
    pub async fn call_err(&self, tool: &str, args: Value) -> WireError {
        match self.call_envelope::<Value>(tool, args).await {
            Ok(data) => panic!("{tool}: expected an error, got data {data}"),
            Err(err) => err,
        }
    }

    /// Get a prompt and return the text of its single user message.
    pub async fn prompt_text(&self, name: &str, args: Value) -> String {
        let result = self.get_prompt(name, args).await;
        assert_eq!(result.messages.len(), 1, "prompt {name}: {result:?}");
        let message = &result.messages[0];
        assert_eq!(message.role, rmcp::model::Role::User);
        match message.content.as_text() {
            Some(text) => text.text.clone(),
            None => panic!("prompt {name}: not text: {:?}", message.content),
        }
    }

    pub async fn get_prompt(&self, name: &str, args: Value) -> GetPromptResult {
        let mut params = GetPromptRequestParams::new(name.to_string());
        if let Value::Object(map) = args {
            params = params.with_arguments(map);
        }
        tokio::time::timeout(REQUEST_TIMEOUT, self.peer().get_prompt(params))
            .await
            .unwrap_or_else(|_| panic!("prompts/get {name} timed out"))
            .unwrap_or_else(|err| panic!("prompts/get {name} failed: {err}"))
    }

    /// Read a resource.
    pub async fn read_resource(&self, uri: &str) -> Result<ReadResourceResult, String> {
        tokio::time::timeout(
            REQUEST_TIMEOUT,
            self.peer()
                .read_resource(ReadResourceRequestParams::new(uri.to_string())),
        )
        .await
        .unwrap_or_else(|_| panic!("resources/read {uri} timed out"))
        .map_err(|err| err.to_string())
    }

    /// Read a resource whose single content is JSON text, and parse it.
    pub async fn read_resource_json(&self, uri: &str) -> Value {
        let result = self
            .read_resource(uri)
            .await
            .unwrap_or_else(|err| panic!("resources/read {uri} failed: {err}"));
        assert_eq!(result.contents.len(), 1, "{uri}: {result:?}");
        match &result.contents[0] {
            ResourceContents::TextResourceContents {
                text, mime_type, ..
            } => {
                assert_eq!(mime_type.as_deref(), Some("application/json"), "{uri}");
                serde_json::from_str(text)
                    .unwrap_or_else(|err| panic!("{uri}: not JSON ({err}): {text}"))
            }
            other => panic!("{uri}: not text: {other:?}"),
        }
    }

    /// Wait up to `wait` for the next `notifications/resources/updated`; returns its URI.
    pub async fn next_resource_update(&self, wait: Duration) -> Option<String> {
        let mut rx = self.updates.lock().await;
        tokio::time::timeout(wait, rx.recv()).await.ok().flatten()
    }

    /// All tools, sorted by name.
    pub async fn tools(&self) -> Vec<rmcp::model::Tool> {
        let mut tools = tokio::time::timeout(REQUEST_TIMEOUT, self.peer().list_all_tools())
            .await
            .expect("tools/list timed out")
            .expect("tools/list failed");
        tools.sort_by(|a, b| a.name.cmp(&b.name));
        tools
    }

    /// Compare what clients see of the tools (names, descriptions, schemas, annotations) with
    /// the snapshot at `path`; `UPDATE_SNAPSHOTS=1` rewrites it. On a mismatch the new list is
    /// written next to it (`*.new`) and the first differing line is reported.
    pub async fn assert_tools_snapshot(&self, path: &Path) {
        let actual = serde_json::to_string_pretty(&self.tools().await).unwrap() + "\n";
        if std::env::var_os("UPDATE_SNAPSHOTS").is_some() {
            std::fs::write(path, &actual).unwrap();
        }
        let expected = std::fs::read_to_string(path)
            .unwrap_or_else(|_| panic!("missing {}; run with UPDATE_SNAPSHOTS=1", path.display()));
        if actual != expected {
            let line = actual
                .lines()
                .zip(expected.lines())
                .position(|(a, e)| a != e)
                .unwrap_or(actual.lines().count().min(expected.lines().count()));
            let new = path.with_extension("json.new");
            std::fs::write(&new, &actual).unwrap();
            panic!(
                "tool list changed at line {} (actual: {:?}, snapshot: {:?}); the whole list is \
                 in {}; if deliberate, run with UPDATE_SNAPSHOTS=1",
                line + 1,
                actual.lines().nth(line),
                expected.lines().nth(line),
                new.display()
            );
        }
    }

    /// Everything the server wrote to stderr so far.
    pub fn stderr(&self) -> String {
        String::from_utf8_lossy(&self.stderr.lock().unwrap()).into_owned()
    }

    /// Close the connection, wait for the process to exit, and return all of its stderr.
    pub async fn shutdown(self) -> String {
        let Self {
            service,
            stderr,
            stderr_done,
            http_child,
            pid,
            ..
        } = self;
        // A client of a server someone else started has no stderr to wait for.
        let own_process = pid.is_some() || http_child.is_some();
        let done = stderr_done.notified();
        let _ = tokio::time::timeout(REQUEST_TIMEOUT, service.cancel()).await;
        if let Some(mut child) = http_child {
            // An HTTP server outlives its clients: stop it as an operator would.
            if let Some(pid) = child.id() {
                let _ = std::process::Command::new("kill")
                    .args(["-TERM", &pid.to_string()])
                    .status();
            }
            if tokio::time::timeout(Duration::from_secs(10), child.wait())
                .await
                .is_err()
            {
                let _ = child.kill().await;
            }
        }
        if own_process {
            let _ = tokio::time::timeout(Duration::from_secs(5), done).await;
        }
        String::from_utf8_lossy(&stderr.lock().unwrap()).into_owned()
    }
}

/// reqwest is built without a default TLS provider (the servers choose `ring`); HTTP
/// clients of tests need one installed before the first client is built.
pub fn install_crypto_provider() {
    let _ = rustls::crypto::ring::default_provider().install_default();
}

/// `bin` with `args`, in `cwd`, with exactly the environment `env` (plus `PATH`), so that a
/// developer's own credentials never leak into a test.
pub fn clean_command(bin: &Path, args: &[&str], cwd: &Path, env: &[(&str, &str)]) -> Command {
    let mut command = Command::new(bin);
    command.args(args).current_dir(cwd).env_clear();
    if let Ok(path) = std::env::var("PATH") {
        command.env("PATH", path);
    }
    for (key, value) in env {
        command.env(key, value);
    }
    command
}

/// The parameters of a `tools/call` of `tool`; `args` must be a JSON object (or null for none).
pub(crate) fn tool_params(tool: &str, args: Value) -> CallToolRequestParams {
    let params = CallToolRequestParams::new(tool.to_string());
    match args {
        Value::Object(map) => params.with_arguments(map),
        _ => params,
    }
}
