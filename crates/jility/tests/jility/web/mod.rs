//! `jility web` for tests: the built binary serving a project's board on a free loopback
//! port, and a client that reads pages and posts forms with the page's CSRF token, as a
//! browser without script would.
#![allow(dead_code)]

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};

use reqwest::blocking::{Client, Response};

use crate::support::{BIN, HUMAN, Project};

/// A running `jility web`; stopped when dropped.
pub struct LocalWeb {
    child: Child,
    /// `http://127.0.0.1:PORT`
    pub base: String,
    pub client: Client,
}

impl LocalWeb {
    /// `jility web --listen 127.0.0.1:0` in `project`, as [`HUMAN`].
    pub fn start(project: &Project) -> Self {
        let mut child = Command::new(BIN)
            .args(["web", "--listen", "127.0.0.1:0"])
            .current_dir(project.root())
            .env("JILITY_ACTOR", HUMAN)
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("start jility web");
        let stdout = child.stdout.take().expect("stdout");
        let mut line = String::new();
        BufReader::new(stdout)
            .read_line(&mut line)
            .expect("read the address");
        let address = line
            .split("http://")
            .nth(1)
            .and_then(|rest| rest.split('/').next())
            .unwrap_or_else(|| panic!("no address in {line:?}"))
            .to_string();
        let _ = rustls::crypto::ring::default_provider().install_default();
        let client = Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .expect("client");
        Self {
            child,
            base: format!("http://{address}"),
            client,
        }
    }

    /// `base` + `path` (e.g. `/w/local/board`).
    pub fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base)
    }

    /// GET `path`; its status and body.
    pub fn get(&self, path: &str) -> (u16, String) {
        let response = self.client.get(self.url(path)).send().expect("GET");
        let status = response.status().as_u16();
        (status, response.text().expect("body"))
    }

    /// The CSRF token of the page at `path` (its `<meta name="csrf-token">`).
    pub fn csrf(&self, path: &str) -> String {
        let (status, body) = self.get(path);
        assert_eq!(status, 200, "{path}: {body}");
        csrf_of(&body)
    }

    /// POST a form to `path` as a page without script would (this origin, `_csrf` added
    /// unless the fields carry one).
    pub fn post_form(&self, path: &str, fields: &[(&str, &str)]) -> Response {
        let token = self.csrf("/w/local/board");
        let mut all: Vec<(&str, &str)> = fields.to_vec();
        if !fields.iter().any(|(k, _)| *k == "_csrf") {
            all.push(("_csrf", &token));
        }
        self.client
            .post(self.url(path))
            .header("Origin", &self.base)
            .form(&all)
            .send()
            .expect("POST")
    }

    /// POST a form as the page's script does (`Accept: application/json`); status and JSON.
    pub fn post_json(&self, path: &str, fields: &[(&str, &str)]) -> (u16, serde_json::Value) {
        let token = self.csrf("/w/local/board");
        let mut all: Vec<(&str, &str)> = fields.to_vec();
        all.push(("_csrf", &token));
        let response = self
            .client
            .post(self.url(path))
            .header("Origin", &self.base)
            .header("Accept", "application/json")
            .form(&all)
            .send()
            .expect("POST");
        let status = response.status().as_u16();
        (status, response.json().expect("JSON"))
    }
}

impl Drop for LocalWeb {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The content of `<meta name="csrf-token" content="…">` in a page.
pub fn csrf_of(page: &str) -> String {
    let marker = "name=\"csrf-token\" content=\"";
    let start = page.find(marker).expect("a csrf-token meta") + marker.len();
    page[start..]
        .split('"')
        .next()
        .expect("its content")
        .to_string()
}
