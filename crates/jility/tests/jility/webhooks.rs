//! Webhooks of `jility serve`, through the binary: a receiver written for the tests on
//! loopback, deliveries checked for their Standard Webhooks signatures (HMAC-SHA256 with
//! the `hmac` crate, not jility-hooks' code), order per ticket, retries with the same id,
//! the delivery log, redelivery, rotation, the SSRF fence, who may manage them, and nothing
//! lost across `kill -9` or sent twice by two processes.

use std::collections::{HashMap, HashSet, VecDeque};
use std::io::{BufRead, BufReader, Read, Write};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use base64::Engine as _;
use hmac::{Hmac, KeyInit, Mac};
use reqwest::{Method, StatusCode};
use serde_json::{Value, json};

use crate::cloud::{Server, call_json, client};
use crate::pg::TestDb;

const PRIVATE: (&str, &str) = ("JILITY_WEBHOOKS_ALLOW_PRIVATE", "1");
const FAST_RETRIES: (&str, &str) = ("JILITY_WEBHOOKS_RETRY_BASE_MS", "200");

/// One request the receiver got.
#[derive(Debug, Clone)]
pub struct Received {
    pub path: String,
    pub headers: HashMap<String, String>,
    pub body: Vec<u8>,
}

impl Received {
    pub fn json(&self) -> Value {
        serde_json::from_slice(&self.body).unwrap()
    }
    pub fn id(&self) -> &str {
        &self.headers["webhook-id"]
    }
}

/// An HTTP/1.1 receiver on loopback: records every request, answers what it is scripted to
/// (raw responses, in order), else `200 OK`.
pub struct Receiver {
    pub url: String,
    got: Arc<Mutex<Vec<Received>>>,
    script: Arc<Mutex<VecDeque<String>>>,
}

impl Receiver {
    pub fn start() -> Self {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}/hook", listener.local_addr().unwrap());
        let got = Arc::new(Mutex::new(Vec::new()));
        let script: Arc<Mutex<VecDeque<String>>> = Arc::new(Mutex::new(VecDeque::new()));
        let (kept, answers) = (got.clone(), script.clone());
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(stream) = stream else { return };
                let (kept, answers) = (kept.clone(), answers.clone());
                std::thread::spawn(move || {
                    let mut reader = BufReader::new(stream.try_clone().unwrap());
                    let mut writer = stream;
                    loop {
                        let mut line = String::new();
                        if reader.read_line(&mut line).unwrap_or(0) == 0 {
                            return;
                        }
                        let path = line.split(' ').nth(1).unwrap_or("").to_string();
                        let mut headers = HashMap::new();
                        loop {
                            line.clear();
                            if reader.read_line(&mut line).unwrap_or(0) == 0 {
                                return;
                            }
                            let header = line.trim_end();
                            if header.is_empty() {
                                break;
                            }
                            if let Some((name, value)) = header.split_once(':') {
                                headers.insert(name.trim().to_ascii_lowercase(), value.trim().to_string());
                            }
                        }
                        let length: usize = headers.get("content-length").and_then(|v| v.parse().ok()).unwrap_or(0);
                        let mut body = vec![0; length];
                        if reader.read_exact(&mut body).is_err() {
                            return;
                        }
                        let answer = answers.lock().unwrap().pop_front().unwrap_or_else(|| {
                            "HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok".to_string()
                        });
                        kept.lock().unwrap().push(Received { path, headers, body });
                        if writer.write_all(answer.as_bytes()).is_err() {
                            return;
                        }
                    }
                });
            }
        });
        Self { url, got, script }
    }

    /// Answer the next requests with `status` (and `extra` headers).
    pub fn answer(&self, status: &str, extra: &str, times: usize) {
        for _ in 0..times {
            self.script.lock().unwrap().push_back(format!(
                "HTTP/1.1 {status}\r\n{extra}content-length: 4\r\n\r\nnope"
            ));
        }
    }

    pub fn got(&self) -> Vec<Received> {
        self.got.lock().unwrap().clone()
    }

    /// Wait until `ready` holds of what was received (at most `secs`).
    pub fn wait(&self, secs: u64, ready: impl Fn(&[Received]) -> bool) -> Vec<Received> {
        let deadline = Instant::now() + Duration::from_secs(secs);
        loop {
            let got = self.got();
            if ready(&got) {
                return got;
            }
            assert!(Instant::now() < deadline, "the receiver waited in vain; it has {} requests: {:?}", got.len(), got.iter().map(|r| r.json()["type"].clone()).collect::<Vec<_>>());
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

/// Whether one of `received`'s signatures is `secret`'s, computed here as the Standard
/// Webhooks specification says.
pub fn signed_with(secret: &str, received: &Received) -> bool {
    let key = base64::engine::general_purpose::STANDARD
        .decode(secret.strip_prefix("whsec_").unwrap())
        .unwrap();
    let mut mac = Hmac::<sha2::Sha256>::new_from_slice(&key).unwrap();
    let signed = format!(
        "{}.{}.",
        received.headers["webhook-id"], received.headers["webhook-timestamp"]
    );
    mac.update(signed.as_bytes());
    mac.update(&received.body);
    let expected = format!(
        "v1,{}",
        base64::engine::general_purpose::STANDARD.encode(mac.finalize().into_bytes())
    );
    received.headers["webhook-signature"]
        .split(' ')
        .any(|s| s == expected)
}

fn serve(db: &TestDb, env: &[(&str, &str)]) -> Server {
    Server::start_with(db, "127.0.0.1:0", &[], env)
}

fn post(http: &reqwest::blocking::Client, server: &Server, token: &str, path: &str, body: Value) -> Value {
    let answer = call_json(http, server, Method::POST, path, token, Some(body));
    assert!(answer.status.is_success(), "{path}: {} {}", answer.status, answer.body);
    answer.body
}

fn subscribe(http: &reqwest::blocking::Client, server: &Server, token: &str, body: Value) -> (i64, String) {
    let made = call_json(http, server, Method::POST, "/webhooks", token, Some(body));
    assert_eq!(made.status, StatusCode::CREATED, "{}", made.body);
    (made.body["id"].as_i64().unwrap(), made.body["secret"].as_str().unwrap().to_string())
}

/// Every event type reaches the receiver once, signed, with the ticket as the API answers
/// it, in the order of each ticket's changes; a filter keeps only its tickets.
#[test]
fn every_event_type_is_delivered_once_signed_and_in_order() {
    let db = TestDb::new();
    let token = crate::cloud::admin_workspace(&db.url, "hooks", &[]);
    let server = serve(&db, &[PRIVATE]);
    let http = client();
    let all = Receiver::start();
    let filtered = Receiver::start();
    let (_, secret) = subscribe(&http, &server, &token, json!({"url": all.url, "description": "everything"}));
    let (_, filtered_secret) = subscribe(
        &http,
        &server,
        &token,
        json!({"url": filtered.url, "events": ["ticket.status_changed", "ticket.commented"], "filter": "label:backend"}),
    );

    post(&http, &server, &token, "/tickets", json!({"title": "Backend work", "labels": ["backend"]}));
    post(&http, &server, &token, "/tickets", json!({"title": "Other work"}));
    post(&http, &server, &token, "/tickets", json!({"title": "The epic", "kind": "epic"}));
    post(&http, &server, &token, "/tickets/TASK-1/status", json!({"status": "todo"}));
    post(&http, &server, &token, "/tickets/TASK-2/status", json!({"status": "todo"}));
    post(&http, &server, &token, "/tickets/TASK-1/assign", json!({"assignees": ["alice"]}));
    post(&http, &server, &token, "/tickets/TASK-1/comments", json!({"content": "On it"}));
    post(&http, &server, &token, "/tickets/TASK-2/comments", json!({"content": "Not backend"}));
    post(&http, &server, &token, "/tickets/TASK-1/description", json!({"operation": "replace_all", "content": "New text"}));
    post(&http, &server, &token, "/tickets/TASK-1/dependencies", json!({"depends_on": "TASK-2"}));
    post(&http, &server, &token, "/tickets/TASK-1/fields", json!({"title": "Backend work, renamed", "epic_id": "TASK-3"}));
    post(&http, &server, &token, "/sprints", json!({"name": "S1", "starts_on": "2026-12-01", "ends_on": "2026-12-14"}));
    post(&http, &server, &token, "/sprints/S1/tickets", json!({"tickets": ["TASK-1"]}));
    let deleted = call_json(&http, &server, Method::DELETE, "/tickets/TASK-2", &token, None);
    assert!(deleted.status.is_success(), "{}", deleted.body);

    let mut expected: Vec<String> = jility_hooks_types();
    expected.sort();
    let got = all.wait(30, |got| {
        let mut types: Vec<String> = got.iter().map(|r| r.json()["type"].as_str().unwrap().to_string()).collect();
        types.sort();
        types.dedup();
        types == expected && got.iter().any(|r| r.json()["type"] == "ticket.deleted")
    });
    // Each once: no message id twice, every signature valid, timestamps now.
    let ids: HashSet<&str> = got.iter().map(Received::id).collect();
    assert_eq!(ids.len(), got.len(), "a message came twice");
    let now = chrono::Utc::now().timestamp();
    for received in &got {
        assert!(signed_with(&secret, received), "a bad signature: {:?}", received.headers);
        assert!(!signed_with(&filtered_secret, received));
        let at: i64 = received.headers["webhook-timestamp"].parse().unwrap();
        assert!((now - at).abs() < 120);
        assert_eq!(received.headers["content-type"], "application/json");
        assert_eq!(received.path, "/hook");
        let body = received.json();
        assert_eq!(body["data"]["workspace"], "hooks");
        assert!(body["data"]["change"]["id"].as_i64().unwrap() > 0);
    }
    // In the order of each ticket's changes, with the ticket as the API has it.
    for number in ["TASK-1", "TASK-2"] {
        let of: Vec<Value> = got.iter().map(Received::json).filter(|b| b["data"]["ticket"]["number"] == number).collect();
        let change_ids: Vec<i64> = of.iter().map(|b| b["data"]["change"]["id"].as_i64().unwrap()).collect();
        let mut sorted = change_ids.clone();
        sorted.sort();
        assert_eq!(change_ids, sorted, "{number}'s deliveries out of order");
        assert_eq!(of[0]["type"], "ticket.created");
    }
    let created = got.iter().map(Received::json).find(|b| b["type"] == "ticket.created" && b["data"]["ticket"]["number"] == "TASK-1").unwrap();
    assert_eq!(created["data"]["ticket"]["labels"], json!(["backend"]));
    assert_eq!(created["data"]["deleted"], false);
    let gone = got.iter().map(Received::json).find(|b| b["type"] == "ticket.deleted").unwrap();
    assert_eq!(gone["data"]["ticket"]["number"], "TASK-2");
    assert_eq!(gone["data"]["deleted"], true);

    // The filtered subscription: only TASK-1's status change and comment.
    let kept = filtered.wait(30, |got| got.len() >= 2);
    std::thread::sleep(Duration::from_millis(1500));
    let kept_now = filtered.got();
    assert_eq!(kept_now.len(), 2, "{:?}", kept_now.iter().map(Received::json).collect::<Vec<_>>());
    for received in &kept {
        assert!(signed_with(&filtered_secret, received));
        let body = received.json();
        assert_eq!(body["data"]["ticket"]["number"], "TASK-1");
    }
    let types: Vec<Value> = kept.iter().map(|r| r.json()["type"].clone()).collect();
    assert_eq!(types, vec![json!("ticket.status_changed"), json!("ticket.commented")]);

    // The log says what was sent.
    let list = call_json(&http, &server, Method::GET, "/webhooks", &token, None);
    assert_eq!(list.status, StatusCode::OK);
    let first = list.body["webhooks"][0]["id"].as_i64().unwrap();
    assert!(list.body["webhooks"][0].get("secret").is_none(), "a secret in a listing");
    let log = call_json(&http, &server, Method::GET, &format!("/webhooks/{first}/deliveries?limit=5"), &token, None);
    assert_eq!(log.status, StatusCode::OK, "{}", log.body);
    assert_eq!(log.body["deliveries"].as_array().unwrap().len(), 5);
    assert_eq!(log.body["deliveries"][0]["state"], "delivered");
    assert_eq!(log.body["deliveries"][0]["response_status"], 200);
    let cursor = log.body["next_cursor"].as_str().unwrap().to_string();
    let older = call_json(&http, &server, Method::GET, &format!("/webhooks/{first}/deliveries?limit=100&cursor={cursor}"), &token, None);
    assert_eq!(older.body["deliveries"].as_array().unwrap().len() + 5, got.len());
    assert!(older.body["next_cursor"].is_null());
}

/// The event types jility-hooks lists, as the API answers them.
fn jility_hooks_types() -> Vec<String> {
    [
        "ticket.created",
        "ticket.updated",
        "ticket.status_changed",
        "ticket.assigned",
        "ticket.commented",
        "ticket.description_edited",
        "ticket.dependency_changed",
        "ticket.sprint_changed",
        "ticket.epic_changed",
        "ticket.deleted",
    ]
    .map(String::from)
    .to_vec()
}
