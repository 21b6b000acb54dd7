//! Helpers of the git-mile integration tests: real repositories made with `git` in temp
//! directories, the built `git-mile` binary run as a user runs it, and the MCP server
//! driven through rmcp's client.

#![allow(dead_code, clippy::unwrap_used, clippy::expect_used, clippy::panic)]

pub mod fixture;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use mcp_testkit::McpProcess;
use rmcp::ErrorData;
use rmcp::model::{CallToolRequestParams, CallToolResult};
use rmcp::service::ServiceError;
use serde_json::Value;

pub fn bin() -> &'static str {
    env!("CARGO_BIN_EXE_git-mile")
}

/// A PATH on which `git mile` finds this build of `git-mile`.
pub fn path_with_bin() -> String {
    let dir = Path::new(bin()).parent().expect("bin dir").to_path_buf();
    let path = std::env::var("PATH").unwrap_or_default();
    format!("{}:{path}", dir.display())
}

/// The environment every command runs with: no user or system git configuration.
pub fn base_env(home: &Path) -> Vec<(String, String)> {
    vec![
        ("PATH".into(), path_with_bin()),
        ("HOME".into(), home.display().to_string()),
        ("GIT_CONFIG_NOSYSTEM".into(), "1".into()),
        ("GIT_CONFIG_GLOBAL".into(), "/dev/null".into()),
        ("LC_ALL".into(), "C".into()),
    ]
}

/// A temp directory holding one or more repositories.
pub struct Sandbox {
    pub dir: tempfile::TempDir,
}

impl Sandbox {
    pub fn new() -> Self {
        Self {
            dir: tempfile::tempdir().expect("tempdir"),
        }
    }

    pub fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    /// `git init` a repository named `name` with an identity, one commit on `main`.
    pub fn repo(&self, name: &str) -> PathBuf {
        let repo = self.path(name);
        std::fs::create_dir_all(&repo).expect("mkdir");
        self.git(&repo, &["init", "-q", "-b", "main"]);
        self.identity(&repo, "Ann Example", "ann@example.com");
        std::fs::write(repo.join("README.md"), "hello\n").expect("write");
        self.git(&repo, &["add", "README.md"]);
        self.git(&repo, &["commit", "-q", "-m", "initial"]);
        repo
    }

    pub fn identity(&self, repo: &Path, name: &str, email: &str) {
        self.git(repo, &["config", "user.name", name]);
        self.git(repo, &["config", "user.email", email]);
    }

    pub fn command(&self, program: &str, cwd: &Path) -> Command {
        let mut command = Command::new(program);
        command.current_dir(cwd).env_clear();
        for (k, v) in base_env(self.dir.path()) {
            command.env(k, v);
        }
        command
    }

    /// Run git and return its stdout; fails the test when git fails.
    pub fn git(&self, cwd: &Path, args: &[&str]) -> String {
        let output = self
            .command("git", cwd)
            .args(args)
            .output()
            .expect("git runs");
        assert!(
            output.status.success(),
            "git {args:?} failed: {}",
            String::from_utf8_lossy(&output.stderr)
        );
        String::from_utf8_lossy(&output.stdout).into_owned()
    }

    /// Run `git mile ARGS` (through git, as a user would) in `cwd`.
    pub fn mile(&self, cwd: &Path, args: &[&str]) -> Output {
        self.command("git", cwd)
            .arg("mile")
            .args(args)
            .output()
            .expect("git mile runs")
    }

    /// `git mile ARGS`, which must succeed; its stdout.
    pub fn mile_ok(&self, cwd: &Path, args: &[&str]) -> String {
        let output = self.mile(cwd, args);
        assert!(
            output.status.success(),
            "git mile {args:?} failed ({:?}): {}",
            output.status.code(),
            String::from_utf8_lossy(&output.stderr)
        );
        String::from_utf8_lossy(&output.stdout).into_owned()
    }

    /// `git mile ARGS --json`, which must succeed; its JSON.
    pub fn mile_json(&self, cwd: &Path, args: &[&str]) -> Value {
        let mut all: Vec<&str> = args.to_vec();
        all.push("--json");
        let out = self.mile_ok(cwd, &all);
        serde_json::from_str(&out).unwrap_or_else(|e| panic!("not JSON ({e}): {out}"))
    }

    /// `git mile ARGS`, which must fail with `code`; its stderr.
    pub fn mile_err(&self, cwd: &Path, args: &[&str], code: i32) -> String {
        let output = self.mile(cwd, args);
        assert_eq!(
            output.status.code(),
            Some(code),
            "git mile {args:?}: stdout {} stderr {}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        );
        String::from_utf8_lossy(&output.stderr).into_owned()
    }

    /// Create an entity through the CLI; its id.
    pub fn create(&self, repo: &Path, kind: &str, title: &str, extra: &[&str]) -> String {
        let mut args = vec!["create", kind, "--title", title];
        args.extend_from_slice(extra);
        self.mile_ok(repo, &args).trim().to_string()
    }

    /// Start `git mile mcp-server` in `cwd` with a real MCP client attached.
    pub async fn server(&self, cwd: &Path, extra: &[&str]) -> McpProcess {
        self.server_with_env(cwd, extra, &[]).await
    }

    /// [`Self::server`] with more environment variables.
    pub async fn server_with_env(
        &self,
        cwd: &Path,
        extra: &[&str],
        more_env: &[(&str, &str)],
    ) -> McpProcess {
        let mut env = base_env(self.dir.path());
        env.extend(more_env.iter().map(|(k, v)| (k.to_string(), v.to_string())));
        let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
        let mut args = vec!["mcp-server"];
        args.extend_from_slice(extra);
        McpProcess::spawn_bin(bin(), &args, cwd, &env)
            .await
            .expect("server starts")
    }
}

/// A server spoken to frame by frame over its stdin/stdout, without an SDK: for the
/// reference session and for methods an SDK client does not send (`shutdown`).
pub struct RawSession {
    child: std::process::Child,
    stdin: Option<std::process::ChildStdin>,
    lines: std::sync::mpsc::Receiver<String>,
}

impl RawSession {
    pub fn start(sandbox: &Sandbox, cwd: &Path) -> Self {
        Self::start_with(sandbox, cwd, &[])
    }

    /// `git mile mcp-server ARGS`.
    pub fn start_with(sandbox: &Sandbox, cwd: &Path, args: &[&str]) -> Self {
        use std::io::BufRead;
        use std::process::Stdio;
        let mut child = sandbox
            .command(bin(), cwd)
            .arg("mcp-server")
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("server starts");
        let stdin = child.stdin.take();
        let stdout = child.stdout.take().expect("stdout");
        let (tx, lines) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in std::io::BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        Self {
            child,
            stdin,
            lines,
        }
    }

    pub fn send(&mut self, frame: &Value) {
        use std::io::Write;
        let stdin = self.stdin.as_mut().expect("stdin open");
        writeln!(stdin, "{}", serde_json::to_string(frame).expect("json")).expect("write frame");
        stdin.flush().expect("flush");
    }

    /// The next frame the server writes (waits up to 30 s).
    pub fn recv(&mut self) -> Value {
        let line = self
            .lines
            .recv_timeout(std::time::Duration::from_secs(30))
            .expect("a frame from the server within 30 s");
        serde_json::from_str(&line).unwrap_or_else(|e| panic!("not a JSON frame ({e}): {line}"))
    }

    /// Whether stdout was closed (no further frame) within `wait`.
    pub fn closed_within(&mut self, wait: std::time::Duration) -> bool {
        matches!(
            self.lines.recv_timeout(wait),
            Err(std::sync::mpsc::RecvTimeoutError::Disconnected)
        )
    }

    /// Wait for the process to exit on its own; its exit status.
    pub fn wait_exit(&mut self, wait: std::time::Duration) -> Option<std::process::ExitStatus> {
        let deadline = std::time::Instant::now() + wait;
        loop {
            if let Ok(Some(status)) = self.child.try_wait() {
                return Some(status);
            }
            if std::time::Instant::now() > deadline {
                return None;
            }
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
    }

    /// `initialize` with `version` and `notifications/initialized`; the server's answer.
    pub fn initialize(&mut self, version: &str) -> Value {
        self.send(
            &serde_json::json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
                "protocolVersion": version, "capabilities": {},
                "clientInfo": {"name": "t", "version": "1"}
            }}),
        );
        let answer = self.recv();
        self.send(&serde_json::json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        answer
    }

    /// The server closes stdout and exits with status 0 on its own (within 10 s each).
    pub fn assert_ends_cleanly(&mut self) {
        let wait = std::time::Duration::from_secs(10);
        assert!(self.closed_within(wait), "stdout stays open");
        let status = self.wait_exit(wait);
        assert!(
            status.is_some_and(|s| s.success()),
            "exit status {status:?}"
        );
    }

    pub fn close_stdin(&mut self) {
        self.stdin = None;
    }
}

impl Drop for RawSession {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The fixture of the MCP tests: two milestones, five issues, with fixed ids and times.
pub mod world {
    use super::fixture::*;
    use serde_json::json;

    pub fn m(n: u64) -> String {
        fixed_id(0x4d, n)
    }
    pub fn i(n: u64) -> String {
        fixed_id(0x49, n)
    }

    const DAY: i64 = 86_400;

    pub fn entities() -> Vec<FixtureEntity> {
        let ev = |at: i64, actor: &'static Actor, change: serde_json::Value| FixtureEvent {
            at,
            actor,
            change,
        };
        let comment = |n: u64, body: &str| json!({"type": "comment_added", "comment": format!("c0000000-0000-4000-8000-{n:012x}"), "body": body});
        let attach = |milestone: String| json!({"type": "attached", "milestone": milestone});
        vec![
            FixtureEntity {
                kind: "milestone",
                id: m(1),
                events: vec![
                    ev(
                        0,
                        &ANN,
                        created("milestone", "Milestone Alpha", "First release", &["alpha"]),
                    ),
                    ev(50, &BOB, comment(1, "Kickoff done")),
                ],
            },
            FixtureEntity {
                kind: "milestone",
                id: m(2),
                events: vec![
                    ev(
                        10,
                        &ANN,
                        created("milestone", "Milestone Beta", "", &["beta"]),
                    ),
                    ev(
                        400,
                        &ANN,
                        json!({"type": "status_changed", "status": "closed"}),
                    ),
                ],
            },
            FixtureEntity {
                kind: "issue",
                id: i(1),
                events: vec![
                    ev(
                        100,
                        &ANN,
                        created(
                            "issue",
                            "Fix login crash",
                            "The app crashes on login.",
                            &["bug", "p1"],
                        ),
                    ),
                    ev(101, &ANN, attach(m(1))),
                    ev(150, &BOB, comment(2, "Repro on 2.1")),
                    ev(160, &ANN, comment(3, "Fixed in abc123")),
                ],
            },
            FixtureEntity {
                kind: "issue",
                id: i(2),
                events: vec![
                    ev(
                        200,
                        &BOB,
                        created("issue", "Add dark mode", "", &["feature"]),
                    ),
                    ev(201, &BOB, attach(m(1))),
                ],
            },
            FixtureEntity {
                kind: "issue",
                id: i(3),
                events: vec![
                    ev(300, &ANN, created("issue", "Crash on logout", "", &["bug"])),
                    ev(301, &ANN, attach(m(2))),
                    ev(
                        310,
                        &ANN,
                        json!({"type": "status_changed", "status": "closed"}),
                    ),
                ],
            },
            FixtureEntity {
                kind: "issue",
                id: i(4),
                events: vec![ev(
                    3 * DAY,
                    &BOB,
                    created(
                        "issue",
                        "Write docs",
                        "Document the **filter** language",
                        &[],
                    ),
                )],
            },
            FixtureEntity {
                kind: "issue",
                id: i(5),
                events: vec![
                    ev(
                        5 * DAY + 10,
                        &ANN,
                        created("issue", "Login page slow", "", &["perf", "p1"]),
                    ),
                    ev(
                        5 * DAY + 20,
                        &ANN,
                        comment(4, "Profiling shows N+1 queries"),
                    ),
                ],
            },
        ]
    }
}

/// A bare repository `origin.git` and a repository `a` whose remote `origin` it is.
pub fn origin_and_clone(sandbox: &Sandbox) -> (PathBuf, PathBuf) {
    let origin = sandbox.path("origin.git");
    std::fs::create_dir_all(&origin).unwrap();
    sandbox.git(&origin, &["init", "-q", "--bare"]);
    let a = sandbox.repo("a");
    sandbox.git(&a, &["remote", "add", "origin", origin.to_str().unwrap()]);
    (origin, a)
}

/// A repository holding [`world`].
pub fn world_repo(sandbox: &Sandbox, name: &str) -> PathBuf {
    let repo = sandbox.repo(name);
    fixture::import(&repo, &world::entities());
    repo
}

/// The error object of a tool-level failure, checked against the contract: `isError: true`,
/// no `structuredContent` (the tools' outputSchemas describe their data, and clients such as
/// Claude Code's TypeScript SDK validate `structuredContent` also on error results), and a
/// single JSON text `{"error":{"code","message","hint","retryable"}}`.
pub fn error_object(result: &rmcp::model::CallToolResult) -> Value {
    assert_eq!(result.is_error, Some(true), "{result:?}");
    assert_eq!(
        result.structured_content, None,
        "an error result must not carry structuredContent: {result:?}"
    );
    assert_eq!(result.content.len(), 1, "{result:?}");
    let text = &result.content[0].as_text().expect("text content").text;
    let value: Value = serde_json::from_str(text).expect("the text is JSON");
    let object = value.as_object().expect("an object");
    assert_eq!(
        object.keys().collect::<Vec<_>>(),
        ["error"],
        "only the error member: {value}"
    );
    let error = &value["error"];
    let keys: Vec<&str> = error
        .as_object()
        .expect("error is an object")
        .keys()
        .map(String::as_str)
        .collect();
    // (serde_json sorts the keys of a Value: compared as a set, in the text in this order.)
    assert_eq!(keys, ["code", "hint", "message", "retryable"], "{text}");
    assert!(text.starts_with(r#"{"error":{"code":"#), "{text}");
    assert!(error["code"].is_string(), "{error}");
    assert!(!error["message"].as_str().unwrap().is_empty(), "{error}");
    assert!(!error["hint"].as_str().unwrap().is_empty(), "{error}");
    assert_eq!(error["retryable"], Value::Bool(false), "{error}");
    error.clone()
}

/// A `tools/call`: its result, or the JSON-RPC error.
pub async fn call_raw(
    mcp: &McpProcess,
    tool: &str,
    args: Value,
) -> Result<CallToolResult, ErrorData> {
    let mut params = CallToolRequestParams::new(tool.to_string());
    if let Value::Object(map) = args {
        params = params.with_arguments(map);
    }
    match mcp.peer().call_tool(params).await {
        Ok(result) => Ok(result),
        Err(ServiceError::McpError(error)) => Err(error),
        Err(other) => panic!("transport failure: {other}"),
    }
}

/// A successful call's JSON (text copy and structuredContent agree).
pub async fn ok(mcp: &McpProcess, tool: &str, args: Value) -> Value {
    let result = call_raw(mcp, tool, args.clone())
        .await
        .unwrap_or_else(|e| panic!("{tool} {args} failed: {e:?}"));
    assert_ne!(result.is_error, Some(true), "{tool} {args}: {result:?}");
    let text = result.content[0]
        .as_text()
        .expect("text content")
        .text
        .clone();
    let value: Value = serde_json::from_str(&text).expect("text is JSON");
    assert_eq!(Some(&value), result.structured_content.as_ref());
    value
}

pub async fn rpc_error(mcp: &McpProcess, tool: &str, args: Value) -> ErrorData {
    match call_raw(mcp, tool, args.clone()).await {
        Err(error) => error,
        Ok(result) => panic!("{tool} {args} succeeded: {result:?}"),
    }
}

/// The error object a `-32602`/`-32001` error carries in `data` (additive to the contract).
pub fn data_of(error: &ErrorData) -> mcp_common::WireError {
    let data = error.data.clone().expect("the error object in data");
    let wire: mcp_common::WireError = serde_json::from_value(data).expect("a wire error");
    assert_eq!(wire.message, error.message, "{wire:?}");
    assert!(!wire.retryable && !wire.hint.is_empty(), "{wire:?}");
    wire
}

/// A tool-level failure of a write: `isError`, the contract's JSON text, and the same error
/// object as `structuredContent` (the writes' outputSchema admits it).
pub fn write_error(result: &CallToolResult) -> Value {
    assert_eq!(result.is_error, Some(true), "{result:?}");
    let text = &result.content[0].as_text().expect("text").text;
    assert!(text.starts_with(r#"{"error":{"code":"#), "{text}");
    let value: Value = serde_json::from_str(text).unwrap();
    assert_eq!(Some(&value), result.structured_content.as_ref());
    let error = value["error"].clone();
    let wire: mcp_common::WireError = serde_json::from_value(error.clone()).unwrap();
    assert!(
        !wire.hint.is_empty() && !wire.message.is_empty(),
        "{wire:?}"
    );
    error
}

pub async fn tool_error(mcp: &McpProcess, tool: &str, args: Value) -> Value {
    let result = call_raw(mcp, tool, args.clone())
        .await
        .unwrap_or_else(|e| panic!("{tool} {args}: JSON-RPC error {e:?}"));
    write_error(&result)
}
