//! Fixtures for jility's integration tests: projects in temp dirs, the built binary as an
//! MCP server (through mcp-testkit's client) and as a CLI, and a small JSON Schema check.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use mcp_common::{Page, WireError};
use mcp_testkit::McpProcess;
use serde_json::{Value, json};

pub const BIN: &str = env!("CARGO_BIN_EXE_jility");

/// The actor of servers started with [`Project::start`].
pub const AGENT: &str = "agent-1";
/// The actor of CLI commands run with [`Project::cli`].
pub const HUMAN: &str = "alice";

/// A project directory in a temp dir.
pub struct Project {
    pub dir: tempfile::TempDir,
}

impl Default for Project {
    fn default() -> Self {
        Self::new()
    }
}

impl Project {
    pub fn new() -> Self {
        Self {
            dir: tempfile::tempdir().expect("tempdir"),
        }
    }

    pub fn root(&self) -> &Path {
        self.dir.path()
    }

    pub fn path(&self, rel: &str) -> PathBuf {
        self.dir.path().join(rel)
    }

    /// The database `jility init` and the server create here.
    pub fn db(&self) -> PathBuf {
        self.path(".jility/data.db")
    }

    pub fn write(&self, rel: &str, text: &str) {
        let path = self.path(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }

    /// `jility --mcp-server` here, as [`AGENT`].
    pub async fn start(&self) -> McpProcess {
        self.start_as(AGENT).await
    }

    /// `jility --mcp-server` here, with `JILITY_ACTOR=actor`.
    pub async fn start_as(&self, actor: &str) -> McpProcess {
        start(self.root(), &[], &[("JILITY_ACTOR", actor)]).await
    }

    /// `jility --mcp-server` here without `JILITY_ACTOR`: the actor is the client's name.
    pub async fn start_anonymous(&self) -> McpProcess {
        start(self.root(), &[], &[]).await
    }

    /// `jility ARGS` here, as [`HUMAN`].
    pub fn cli(&self, args: &[&str]) -> Run {
        run(self.root(), &[("JILITY_ACTOR", HUMAN)], args)
    }

    /// `jility --json ARGS` here as [`HUMAN`], which must succeed; its JSON.
    pub fn json(&self, args: &[&str]) -> Value {
        json_ok(self.root(), &[("JILITY_ACTOR", HUMAN)], args)
    }

    /// `jility --json ARGS` here as [`HUMAN`], which must fail; its error.
    pub fn json_err(&self, args: &[&str]) -> WireError {
        json_err(self.root(), &[("JILITY_ACTOR", HUMAN)], args)
    }

    /// `jility init --key KEY` here.
    pub fn init(&self, key: &str) {
        let v = self.json(&["init", "--key", key]);
        assert_eq!(v["key"], key, "{v}");
    }
}

/// `jility --mcp-server ARGS` in `cwd` with exactly `env` (plus PATH).
pub async fn start(cwd: &Path, args: &[&str], env: &[(&str, &str)]) -> McpProcess {
    let mut all = vec!["--mcp-server"];
    all.extend_from_slice(args);
    McpProcess::spawn_bin(BIN, &all, cwd, env)
        .await
        .expect("start jility --mcp-server")
}

/// `jility --mcp-server ARGS` in `cwd` with exactly `env` (plus PATH), over `wire`
/// (`Wire::Http` adds `--http 127.0.0.1:0`).
pub async fn start_over(
    wire: mcp_testkit::Wire,
    cwd: &Path,
    args: &[&str],
    env: &[(&str, &str)],
) -> McpProcess {
    let mut all = vec!["--mcp-server"];
    all.extend_from_slice(args);
    McpProcess::spawn_bin_over(wire, BIN, &all, cwd, env)
        .await
        .expect("start jility --mcp-server")
}

/// What a CLI run printed.
#[derive(Debug)]
pub struct Run {
    pub code: Option<i32>,
    pub stdout: String,
    pub stderr: String,
}

impl Run {
    pub fn success(&self) -> bool {
        self.code == Some(0)
    }

    /// Assert exit 0; the stdout.
    pub fn ok(&self) -> &str {
        assert!(self.success(), "expected success: {self:?}");
        &self.stdout
    }
}

/// `jility ARGS` in `cwd` with exactly `env` (plus PATH), stdin closed.
pub fn run(cwd: &Path, env: &[(&str, &str)], args: &[&str]) -> Run {
    let mut command = Command::new(BIN);
    command
        .args(args)
        .current_dir(cwd)
        .env_clear()
        .stdin(Stdio::null());
    if let Ok(path) = std::env::var("PATH") {
        command.env("PATH", path);
    }
    for (key, value) in env {
        command.env(key, value);
    }
    let out = command.output().expect("run jility");
    Run {
        code: out.status.code(),
        stdout: String::from_utf8(out.stdout).expect("stdout is UTF-8"),
        stderr: String::from_utf8(out.stderr).expect("stderr is UTF-8"),
    }
}

fn with_json<'a>(args: &[&'a str]) -> Vec<&'a str> {
    let mut all = vec!["--json"];
    all.extend_from_slice(args);
    all
}

/// `jility --json ARGS`, which must succeed with JSON on stdout.
pub fn json_ok(cwd: &Path, env: &[(&str, &str)], args: &[&str]) -> Value {
    let out = run(cwd, env, &with_json(args));
    assert_eq!(out.code, Some(0), "jility {args:?}: {out:?}");
    serde_json::from_str(&out.stdout)
        .unwrap_or_else(|e| panic!("jility {args:?}: stdout is not JSON ({e}): {out:?}"))
}

/// `jility --json ARGS`, which must fail with exit 1 and the error envelope on stdout.
pub fn json_err(cwd: &Path, env: &[(&str, &str)], args: &[&str]) -> WireError {
    let out = run(cwd, env, &with_json(args));
    assert_eq!(out.code, Some(1), "jility {args:?}: {out:?}");
    let v: Value = serde_json::from_str(&out.stdout)
        .unwrap_or_else(|e| panic!("jility {args:?}: stdout is not JSON ({e}): {out:?}"));
    assert_eq!(v["status"], "error", "{v}");
    serde_json::from_value(v["error"].clone()).unwrap_or_else(|e| panic!("{e}: {v}"))
}

/// Calls of jility's tools, whose text is markdown beside the JSON envelope.
#[allow(async_fn_in_trait)]
pub trait Tools {
    /// Call a tool that must succeed: its markdown and `data`.
    async fn ok(&self, tool: &str, args: Value) -> (String, Value);
    /// Call a tool that must fail: its markdown and error.
    async fn err(&self, tool: &str, args: Value) -> (String, WireError);
    /// Call a list tool that must succeed: its markdown, `data` and `page`.
    async fn paged(&self, tool: &str, args: Value) -> (String, Value, Page);
    /// Call a list tool that must succeed: its `data` and `page`.
    async fn list(&self, tool: &str, args: Value) -> (Value, Page) {
        let (_, data, page) = self.paged(tool, args).await;
        (data, page)
    }
    /// Call a tool that must succeed: its `data`.
    async fn data(&self, tool: &str, args: Value) -> Value {
        self.ok(tool, args).await.1
    }
    /// Create a ticket with this title; its number.
    async fn create(&self, title: &str) -> String {
        let v = self
            .data("jility_create_ticket", json!({"title": title}))
            .await;
        v["ticket"]["number"].as_str().unwrap().to_string()
    }
    /// Create a ticket with these arguments; its number.
    async fn create_with(&self, args: Value) -> String {
        let v = self.data("jility_create_ticket", args).await;
        v["ticket"]["number"].as_str().unwrap().to_string()
    }
    /// The `ticket` of jility_get_ticket.
    async fn ticket(&self, id: &str) -> Value {
        self.data("jility_get_ticket", json!({"ticket_id": id}))
            .await["ticket"]
            .clone()
    }
    /// The description of a ticket.
    async fn description(&self, id: &str) -> String {
        self.ticket(id).await["description"]
            .as_str()
            .unwrap()
            .to_string()
    }
}

impl Tools for McpProcess {
    async fn ok(&self, tool: &str, args: Value) -> (String, Value) {
        let (text, result) = self.call_markdown::<Value>(tool, args.clone()).await;
        match result {
            Ok(data) => (text, data),
            Err(e) => panic!("{tool} {args}: expected ok, got {e:?}\n{text}"),
        }
    }

    async fn paged(&self, tool: &str, args: Value) -> (String, Value, Page) {
        let result = self.call(tool, args.clone()).await;
        let text = result
            .content
            .first()
            .and_then(|c| c.as_text())
            .map(|t| t.text.clone())
            .unwrap_or_default();
        let structured = result.structured_content.clone().unwrap_or_default();
        assert_eq!(result.is_error, Some(false), "{tool} {args}: {text}");
        let envelope: mcp_common::WireResponse<Value> = serde_json::from_value(structured.clone())
            .unwrap_or_else(|e| panic!("{tool}: envelope does not decode ({e}): {structured}"));
        match envelope.into_paged() {
            Ok((data, Some(page))) => (text, data, page),
            Ok((_, None)) => panic!("{tool} {args}: no page in {structured}"),
            Err(e) => panic!("{tool} {args}: expected ok, got {e:?}\n{text}"),
        }
    }

    async fn err(&self, tool: &str, args: Value) -> (String, WireError) {
        let (text, result) = self.call_markdown::<Value>(tool, args.clone()).await;
        match result {
            Ok(data) => panic!("{tool} {args}: expected an error, got {data}\n{text}"),
            Err(e) => {
                let expected = format!("❌ Error: {}\n\n{}", e.message, e.hint);
                assert_eq!(text, expected, "{tool}: the text is the error and its hint");
                (text, e)
            }
        }
    }
}

/// The numbers (`KEY-N`) of a list of tickets (`tickets` of a page, `hits` of a search).
pub fn numbers(list: &Value) -> Vec<String> {
    list.as_array()
        .unwrap_or_else(|| panic!("not an array: {list}"))
        .iter()
        .map(|t| t["number"].as_str().unwrap().to_string())
        .collect()
}

/// Check `value` against the JSON Schema `schema` (the subset schemars writes: `$ref` into
/// `$defs`, `type`, `properties`, `required`, `additionalProperties`, `items`, `enum`,
/// `const`, `anyOf`/`oneOf`/`allOf`, `minimum`/`maximum`). Returns the first mismatch.
pub fn check_schema(schema: &Value, value: &Value) -> Result<(), String> {
    check_at(schema, schema, value, "$")
}

fn resolve_ref<'a>(root: &'a Value, reference: &str) -> Result<&'a Value, String> {
    let pointer = reference
        .strip_prefix('#')
        .ok_or_else(|| format!("unsupported $ref {reference}"))?;
    root.pointer(pointer)
        .ok_or_else(|| format!("dangling $ref {reference}"))
}

fn type_matches(name: &str, value: &Value) -> bool {
    match name {
        "object" => value.is_object(),
        "array" => value.is_array(),
        "string" => value.is_string(),
        "boolean" => value.is_boolean(),
        "null" => value.is_null(),
        "integer" => value.is_i64() || value.is_u64(),
        "number" => value.is_number(),
        _ => false,
    }
}

fn check_at(root: &Value, schema: &Value, value: &Value, at: &str) -> Result<(), String> {
    let Some(schema) = schema.as_object() else {
        return match schema {
            Value::Bool(true) => Ok(()),
            _ => Err(format!("{at}: schema {schema} rejects everything")),
        };
    };
    if let Some(reference) = schema.get("$ref").and_then(Value::as_str) {
        check_at(root, resolve_ref(root, reference)?, value, at)?;
    }
    match schema.get("type") {
        Some(Value::String(t)) if !type_matches(t, value) => {
            return Err(format!("{at}: expected {t}, got {value}"));
        }
        Some(Value::Array(types))
            if !types
                .iter()
                .any(|t| t.as_str().is_some_and(|t| type_matches(t, value))) =>
        {
            return Err(format!("{at}: expected one of {types:?}, got {value}"));
        }
        _ => {}
    }
    if let Some(options) = schema.get("enum").and_then(Value::as_array)
        && !options.contains(value)
    {
        return Err(format!("{at}: {value} is not one of {options:?}"));
    }
    if let Some(constant) = schema.get("const")
        && constant != value
    {
        return Err(format!("{at}: {value} is not {constant}"));
    }
    if let Some(n) = value.as_f64() {
        if let Some(min) = schema.get("minimum").and_then(Value::as_f64)
            && n < min
        {
            return Err(format!("{at}: {n} < minimum {min}"));
        }
        if let Some(max) = schema.get("maximum").and_then(Value::as_f64)
            && n > max
        {
            return Err(format!("{at}: {n} > maximum {max}"));
        }
    }
    if let Some(all) = schema.get("allOf").and_then(Value::as_array) {
        for s in all {
            check_at(root, s, value, at)?;
        }
    }
    for key in ["anyOf", "oneOf"] {
        if let Some(options) = schema.get(key).and_then(Value::as_array) {
            let passing = options
                .iter()
                .filter(|s| check_at(root, s, value, at).is_ok())
                .count();
            let fine = if key == "oneOf" {
                passing == 1
            } else {
                passing >= 1
            };
            if !fine {
                return Err(format!(
                    "{at}: {passing} of the {key} options match {value}"
                ));
            }
        }
    }
    if let Some(object) = value.as_object() {
        let properties = schema.get("properties").and_then(Value::as_object);
        if let Some(required) = schema.get("required").and_then(Value::as_array) {
            for name in required.iter().filter_map(Value::as_str) {
                if !object.contains_key(name) {
                    return Err(format!("{at}: missing required {name:?} in {value}"));
                }
            }
        }
        for (name, item) in object {
            let path = format!("{at}.{name}");
            match properties.and_then(|p| p.get(name)) {
                Some(s) => check_at(root, s, item, &path)?,
                None => match schema.get("additionalProperties") {
                    Some(Value::Bool(false)) => {
                        return Err(format!("{path}: not allowed by the schema"));
                    }
                    Some(s @ Value::Object(_)) => check_at(root, s, item, &path)?,
                    _ => {}
                },
            }
        }
    }
    if let (Some(items), Some(array)) = (schema.get("items"), value.as_array()) {
        for (i, item) in array.iter().enumerate() {
            check_at(root, items, item, &format!("{at}[{i}]"))?;
        }
    }
    Ok(())
}
