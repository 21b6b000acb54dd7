//! A browser without script for the tests of `jility serve`'s pages (forms, cookies,
//! redirects by hand), and people made with `jility admin` as an operator would.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::collections::BTreeMap;
use std::io::Write;
use std::process::{Command, Stdio};
use std::time::Duration;

use reqwest::blocking::{Client, Response};
use serde_json::Value;

use super::cloud::Server;
use super::pg::TestDb;

pub const PASSWORD: &str = "correct horse battery";

/// `jility ARGS` on `db` (`DATABASE_URL`), `stdin` written to it, as an operator runs it.
pub fn jility(db: &TestDb, args: &[&str], stdin: Option<&str>) -> std::process::Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_jility"))
        .args(args)
        .env("DATABASE_URL", &db.url)
        .env_remove("JILITY_PUBLIC_URL")
        .env_remove("JILITY_MODE")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut input = child.stdin.take().unwrap();
    if let Some(text) = stdin {
        input.write_all(text.as_bytes()).unwrap();
    }
    drop(input);
    child.wait_with_output().unwrap()
}

/// [`jility`] that must succeed: its JSON output.
pub fn ok_json(db: &TestDb, args: &[&str], stdin: Option<&str>) -> Value {
    let out = jility(db, args, stdin);
    assert!(
        out.status.success(),
        "{args:?}: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

/// `jility --json admin ARGS` that must succeed: its JSON output.
pub fn admin(db: &TestDb, args: &[&str], stdin: Option<&str>) -> Value {
    let all: Vec<&str> = ["--json", "admin"]
        .into_iter()
        .chain(args.iter().copied())
        .collect();
    ok_json(db, &all, stdin)
}

/// A workspace (its first token) and a person with `role` in it.
pub fn workspace(db: &TestDb, name: &str) -> String {
    let made = admin(db, &["create-workspace", name], None);
    made["token"].as_str().unwrap().to_string()
}

pub fn person(db: &TestDb, email: &str, name: &str, workspace: &str, role: &str) {
    admin(
        db,
        &[
            "create-user",
            "--email",
            email,
            "--name",
            name,
            "--password-stdin",
        ],
        Some(PASSWORD),
    );
    set_role(db, email, workspace, role);
}

/// `jility admin add-member … --role ROLE`: `email` becomes a member of `workspace` with
/// `role`, or a member's role changes.
pub fn set_role(db: &TestDb, email: &str, workspace: &str, role: &str) {
    admin(
        db,
        &[
            "add-member",
            "--workspace",
            workspace,
            "--email",
            email,
            "--role",
            role,
        ],
        None,
    );
}

/// A browser without script: its own cookies, redirects not followed.
pub struct Browser {
    pub base: String,
    pub client: Client,
    pub cookies: BTreeMap<String, String>,
}

impl Browser {
    pub fn new(server: &Server) -> Self {
        let _ = rustls::crypto::ring::default_provider().install_default();
        Self {
            base: server.root().to_string(),
            client: Client::builder()
                .redirect(reqwest::redirect::Policy::none())
                .timeout(Duration::from_secs(30))
                .build()
                .unwrap(),
            cookies: BTreeMap::new(),
        }
    }

    pub fn cookie_header(&self) -> String {
        self.cookies
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect::<Vec<_>>()
            .join("; ")
    }

    pub fn keep(&mut self, response: &Response) {
        for value in response.headers().get_all("set-cookie") {
            let text = value.to_str().unwrap();
            let (pair, _) = text.split_once(';').unwrap_or((text, ""));
            let (name, value) = pair.split_once('=').unwrap();
            if value.is_empty() || text.contains("Max-Age=0") {
                self.cookies.remove(name);
            } else {
                self.cookies.insert(name.to_string(), value.to_string());
            }
        }
    }

    pub fn get_with(&mut self, path: &str, headers: &[(&str, &str)]) -> (u16, String) {
        let mut request = self
            .client
            .get(format!("{}{path}", self.base))
            .header("cookie", self.cookie_header());
        for (k, v) in headers {
            request = request.header(*k, *v);
        }
        let response = request.send().unwrap();
        self.keep(&response);
        let status = response.status().as_u16();
        (status, response.text().unwrap())
    }

    pub fn get(&mut self, path: &str) -> (u16, String) {
        self.get_with(path, &[])
    }

    /// POST a form from this site's page (its `Origin`).
    pub fn post(&mut self, path: &str, fields: &[(&str, &str)]) -> Response {
        let origin = self.base.clone();
        self.post_from(path, fields, Some(&origin))
    }

    pub fn post_from(
        &mut self,
        path: &str,
        fields: &[(&str, &str)],
        origin: Option<&str>,
    ) -> Response {
        let mut request = self
            .client
            .post(format!("{}{path}", self.base))
            .header("cookie", self.cookie_header())
            .form(fields);
        if let Some(origin) = origin {
            request = request.header("origin", origin);
        }
        let response = request.send().unwrap();
        self.keep(&response);
        response
    }

    /// Sign in; the answer to the form.
    pub fn sign_in(&mut self, email: &str, password: &str) -> Response {
        let (status, page) = self.get("/login");
        assert_eq!(status, 200, "{page}");
        let csrf = hidden(&page, "_csrf");
        self.post(
            "/login",
            &[("_csrf", &csrf), ("email", email), ("password", password)],
        )
    }

    pub fn signed_in(server: &Server, email: &str) -> Self {
        let mut browser = Self::new(server);
        let answer = browser.sign_in(email, PASSWORD);
        assert_eq!(answer.status().as_u16(), 303, "{email} signs in");
        browser
    }

    /// The CSRF token of a page of the workspace (its `<meta name="csrf-token">`).
    pub fn csrf(&mut self, workspace: &str) -> String {
        let (status, page) = self.get(&format!("/w/{workspace}/board"));
        assert_eq!(status, 200, "{page}");
        meta(&page, "csrf-token")
    }
}

pub fn hidden(page: &str, name: &str) -> String {
    let marker = format!("name=\"{name}\" value=\"");
    let start = page
        .find(&marker)
        .unwrap_or_else(|| panic!("no {name} in {page}"))
        + marker.len();
    page[start..].split('"').next().unwrap().to_string()
}

pub fn meta(page: &str, name: &str) -> String {
    let marker = format!("name=\"{name}\" content=\"");
    let start = page.find(&marker).expect("the meta") + marker.len();
    page[start..].split('"').next().unwrap().to_string()
}

pub fn readonly_input(page: &str, id: &str) -> String {
    let marker = format!("id=\"{id}\" type=\"text\" readonly value=\"");
    let start = page
        .find(&marker)
        .unwrap_or_else(|| panic!("no {id} in {page}"))
        + marker.len();
    page[start..].split('"').next().unwrap().to_string()
}

pub fn api(
    server: &Server,
    token: &str,
    method: reqwest::Method,
    path: &str,
    body: Option<&str>,
) -> (u16, Value) {
    let mut request = super::cloud::client()
        .request(method, format!("{}{path}", server.url))
        .header("authorization", format!("Bearer {token}"));
    if let Some(body) = body {
        request = request
            .header("content-type", "application/json")
            .body(body.to_string());
    }
    let response = request.send().unwrap();
    let status = response.status().as_u16();
    (status, response.json().unwrap_or(Value::Null))
}

/// Every hidden input of a page's forms, in order (values unescaped).
pub fn hidden_fields(page: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut rest = page;
    while let Some(at) = rest.find(r#"<input type="hidden" name=""#) {
        rest = &rest[at + r#"<input type="hidden" name=""#.len()..];
        let name = rest.split('"').next().unwrap().to_string();
        let marker = "value=\"";
        let start = rest.find(marker).unwrap() + marker.len();
        let value = rest[start..]
            .split('"')
            .next()
            .unwrap()
            .replace("&amp;", "&");
        out.push((name, value));
    }
    out
}
