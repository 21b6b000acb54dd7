//! A recording HTTP mock for the remote APIs: an axum server on `127.0.0.1` (random port),
//! spawned on the test's runtime, that answers every request with a test-supplied responder
//! and records each request (method, path, query, headers) for assertions.
//!
//! Helpers panic with a descriptive message: that is how a test fails.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::{
    sync::{Arc, Mutex},
    time::Duration,
};

use axum::{
    Router,
    body::Body,
    extract::{Request as AxRequest, State},
    http::{HeaderName, HeaderValue, StatusCode},
    response::Response,
};
use serde_json::Value;

/// One request the mock received.
#[derive(Debug, Clone)]
pub struct Request {
    pub method: String,
    pub path: String,
    /// The raw query string (still percent-encoded), if any.
    pub query: Option<String>,
    /// Header names lowercased, in arrival order.
    pub headers: Vec<(String, String)>,
    /// `http://127.0.0.1:PORT` of the mock, for building absolute URLs (`Link` headers).
    pub origin: String,
}

impl Request {
    /// `path?query` exactly as received.
    pub fn target(&self) -> String {
        match &self.query {
            Some(query) => format!("{}?{query}", self.path),
            None => self.path.clone(),
        }
    }

    /// The value of header `name` (case-insensitive).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(key, _)| key.eq_ignore_ascii_case(name))
            .map(|(_, value)| value.as_str())
    }

    /// The decoded query parameters (`application/x-www-form-urlencoded`), in order.
    pub fn params(&self) -> Vec<(String, String)> {
        self.query
            .as_deref()
            .unwrap_or("")
            .split('&')
            .filter(|pair| !pair.is_empty())
            .map(|pair| {
                let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
                (form_decode(key), form_decode(value))
            })
            .collect()
    }

    /// The decoded value of query parameter `name` (the first, if repeated).
    pub fn param(&self, name: &str) -> Option<String> {
        self.params()
            .into_iter()
            .find(|(key, _)| key == name)
            .map(|(_, value)| value)
    }
}

/// Decode one `application/x-www-form-urlencoded` component: `+` is a space, `%XX` a byte.
pub fn form_decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'+' => out.push(b' '),
            b'%' if i + 2 < bytes.len() => {
                let hex = std::str::from_utf8(&bytes[i + 1..i + 3]).expect("ASCII escape");
                out.push(u8::from_str_radix(hex, 16).expect("hex escape"));
                i += 2;
            }
            other => out.push(other),
        }
        i += 1;
    }
    String::from_utf8(out).unwrap()
}

/// What the mock answers to one request.
#[derive(Debug, Clone)]
pub struct Reply {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: String,
    /// How long to wait before answering (to provoke client timeouts).
    pub delay: Duration,
}

impl Reply {
    /// `200 OK` with a JSON body.
    pub fn json(body: Value) -> Self {
        Self {
            status: 200,
            headers: vec![(
                "content-type".into(),
                "application/json; charset=utf-8".into(),
            )],
            body: body.to_string(),
            delay: Duration::ZERO,
        }
    }

    /// A non-JSON body (e.g. an HTML error page of a proxy).
    pub fn text(status: u16, content_type: &str, body: &str) -> Self {
        Self {
            status,
            headers: vec![("content-type".into(), content_type.into())],
            body: body.into(),
            delay: Duration::ZERO,
        }
    }

    pub fn status(mut self, status: u16) -> Self {
        self.status = status;
        self
    }

    pub fn header(mut self, name: &str, value: &str) -> Self {
        self.headers.push((name.into(), value.into()));
        self
    }

    pub fn delay(mut self, delay: Duration) -> Self {
        self.delay = delay;
        self
    }
}

type Responder = dyn Fn(&Request) -> Reply + Send + Sync;

struct Inner {
    origin: String,
    responder: Box<Responder>,
    requests: Arc<Mutex<Vec<Request>>>,
}

/// A running mock; stops when dropped.
pub struct MockServer {
    /// `http://127.0.0.1:PORT`.
    pub origin: String,
    pub port: u16,
    requests: Arc<Mutex<Vec<Request>>>,
    task: tokio::task::JoinHandle<()>,
}

impl MockServer {
    /// Start a mock that answers each request with `responder`.
    pub async fn start(responder: impl Fn(&Request) -> Reply + Send + Sync + 'static) -> Self {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind the mock server");
        let port = listener.local_addr().expect("mock address").port();
        let origin = format!("http://127.0.0.1:{port}");
        let requests = Arc::new(Mutex::new(Vec::new()));
        let inner = Arc::new(Inner {
            origin: origin.clone(),
            responder: Box::new(responder),
            requests: requests.clone(),
        });
        let app = Router::new().fallback(handle).with_state(inner);
        let task = tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        Self {
            origin,
            port,
            requests,
            task,
        }
    }

    /// `127.0.0.1:PORT`.
    pub fn host_port(&self) -> String {
        format!("127.0.0.1:{}", self.port)
    }

    /// Every request received so far, in arrival order.
    pub fn requests(&self) -> Vec<Request> {
        self.requests.lock().unwrap().clone()
    }

    /// `METHOD path?query` of every request received so far.
    pub fn targets(&self) -> Vec<String> {
        self.requests()
            .iter()
            .map(|r| format!("{} {}", r.method, r.target()))
            .collect()
    }

    /// Forget the requests received so far.
    pub fn clear(&self) {
        self.requests.lock().unwrap().clear();
    }
}

impl Drop for MockServer {
    fn drop(&mut self) {
        self.task.abort();
    }
}

async fn handle(State(inner): State<Arc<Inner>>, request: AxRequest) -> Response {
    let recorded = Request {
        method: request.method().to_string(),
        path: request.uri().path().to_string(),
        query: request.uri().query().map(str::to_string),
        headers: request
            .headers()
            .iter()
            .map(|(name, value)| {
                (
                    name.as_str().to_ascii_lowercase(),
                    String::from_utf8_lossy(value.as_bytes()).into_owned(),
                )
            })
            .collect(),
        origin: inner.origin.clone(),
    };
    inner.requests.lock().unwrap().push(recorded.clone());
    let reply = (inner.responder)(&recorded);
    if !reply.delay.is_zero() {
        tokio::time::sleep(reply.delay).await;
    }
    let mut response = Response::new(Body::from(reply.body));
    *response.status_mut() = StatusCode::from_u16(reply.status).unwrap();
    for (name, value) in &reply.headers {
        response.headers_mut().append(
            HeaderName::from_bytes(name.as_bytes()).unwrap(),
            HeaderValue::from_str(value).unwrap(),
        );
    }
    response
}

/// Standard base64 (with padding), to compute expected `Authorization: Basic` values.
pub fn base64(input: &str) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let bytes = input.as_bytes();
    let mut out = String::new();
    for chunk in bytes.chunks(3) {
        let b = [
            chunk[0],
            chunk.get(1).copied().unwrap_or(0),
            chunk.get(2).copied().unwrap_or(0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(ALPHABET[(n >> (18 - 6 * i) & 0x3f) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

/// A GitHub REST error body with `status`, as GitHub answers one.
pub fn gh_error(status: u16, message: &str) -> Reply {
    Reply::json(serde_json::json!({
        "message": message,
        "documentation_url": "https://docs.github.com/rest",
        "status": status.to_string(),
    }))
    .status(status)
}

/// A GitHub user object as the REST API embeds it.
pub fn gh_user(login: &str, id: u64) -> serde_json::Value {
    serde_json::json!({
        "login": login,
        "id": id,
        "node_id": format!("MDQ6VXNlcj{id}"),
        "avatar_url": format!("https://avatars.githubusercontent.com/u/{id}?v=4"),
        "gravatar_id": "",
        "url": format!("https://api.github.com/users/{login}"),
        "html_url": format!("https://github.com/{login}"),
        "followers_url": format!("https://api.github.com/users/{login}/followers"),
        "repos_url": format!("https://api.github.com/users/{login}/repos"),
        "type": "User",
        "user_view_type": "public",
        "site_admin": false,
    })
}
