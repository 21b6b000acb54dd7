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
                                headers.insert(
                                    name.trim().to_ascii_lowercase(),
                                    value.trim().to_string(),
                                );
                            }
                        }
                        let length: usize = headers
                            .get("content-length")
                            .and_then(|v| v.parse().ok())
                            .unwrap_or(0);
                        let mut body = vec![0; length];
                        if reader.read_exact(&mut body).is_err() {
                            return;
                        }
                        let answer = answers.lock().unwrap().pop_front().unwrap_or_else(|| {
                            "HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok".to_string()
                        });
                        kept.lock().unwrap().push(Received {
                            path,
                            headers,
                            body,
                        });
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
            assert!(
                Instant::now() < deadline,
                "the receiver waited in vain; it has {} requests: {:?}",
                got.len(),
                got.iter()
                    .map(|r| r.json()["type"].clone())
                    .collect::<Vec<_>>()
            );
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

fn post(
    http: &reqwest::blocking::Client,
    server: &Server,
    token: &str,
    path: &str,
    body: Value,
) -> Value {
    let answer = call_json(http, server, Method::POST, path, token, Some(body));
    assert!(
        answer.status.is_success(),
        "{path}: {} {}",
        answer.status,
        answer.body
    );
    answer.body
}

/// The delivery log of subscription `id`, newest first.
fn delivery_log(
    http: &reqwest::blocking::Client,
    server: &Server,
    token: &str,
    id: i64,
) -> Vec<Value> {
    let log = call_json(
        http,
        server,
        Method::GET,
        &format!("/webhooks/{id}/deliveries"),
        token,
        None,
    );
    assert_eq!(log.status, StatusCode::OK, "{}", log.body);
    log.body["deliveries"]
        .as_array()
        .cloned()
        .unwrap_or_default()
}

fn subscribe(
    http: &reqwest::blocking::Client,
    server: &Server,
    token: &str,
    body: Value,
) -> (i64, String) {
    let made = call_json(http, server, Method::POST, "/webhooks", token, Some(body));
    assert_eq!(made.status, StatusCode::CREATED, "{}", made.body);
    (
        made.body["id"].as_i64().unwrap(),
        made.body["secret"].as_str().unwrap().to_string(),
    )
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
    let (_, secret) = subscribe(
        &http,
        &server,
        &token,
        json!({"url": all.url, "description": "everything"}),
    );
    let (_, filtered_secret) = subscribe(
        &http,
        &server,
        &token,
        json!({"url": filtered.url, "events": ["ticket.status_changed", "ticket.commented"], "filter": "label:backend"}),
    );

    post(
        &http,
        &server,
        &token,
        "/tickets",
        json!({"title": "Backend work", "labels": ["backend"]}),
    );
    post(
        &http,
        &server,
        &token,
        "/tickets",
        json!({"title": "Other work"}),
    );
    post(
        &http,
        &server,
        &token,
        "/tickets",
        json!({"title": "The epic", "kind": "epic"}),
    );
    post(
        &http,
        &server,
        &token,
        "/tickets/TASK-1/status",
        json!({"status": "todo"}),
    );
    post(
        &http,
        &server,
        &token,
        "/tickets/TASK-2/status",
        json!({"status": "todo"}),
    );
    post(
        &http,
        &server,
        &token,
        "/tickets/TASK-1/assign",
        json!({"assignees": ["alice"]}),
    );
    post(
        &http,
        &server,
        &token,
        "/tickets/TASK-1/comments",
        json!({"content": "On it"}),
    );
    post(
        &http,
        &server,
        &token,
        "/tickets/TASK-2/comments",
        json!({"content": "Not backend"}),
    );
    post(
        &http,
        &server,
        &token,
        "/tickets/TASK-1/description",
        json!({"operation": "replace_all", "content": "New text"}),
    );
    post(
        &http,
        &server,
        &token,
        "/tickets/TASK-1/dependencies",
        json!({"depends_on": "TASK-2"}),
    );
    post(
        &http,
        &server,
        &token,
        "/tickets/TASK-1/fields",
        json!({"title": "Backend work, renamed", "epic_id": "TASK-3"}),
    );
    post(
        &http,
        &server,
        &token,
        "/sprints",
        json!({"name": "S1", "starts_on": "2026-12-01", "ends_on": "2026-12-14"}),
    );
    post(
        &http,
        &server,
        &token,
        "/sprints/S1/tickets",
        json!({"tickets": ["TASK-1"]}),
    );
    let deleted = call_json(
        &http,
        &server,
        Method::DELETE,
        "/tickets/TASK-2",
        &token,
        None,
    );
    assert!(deleted.status.is_success(), "{}", deleted.body);

    let mut expected: Vec<String> = jility_hooks_types();
    expected.sort();
    let got = all.wait(30, |got| {
        let mut types: Vec<String> = got
            .iter()
            .map(|r| r.json()["type"].as_str().unwrap().to_string())
            .collect();
        types.sort();
        types.dedup();
        types == expected && got.iter().any(|r| r.json()["type"] == "ticket.deleted")
    });
    // Each once: no message id twice, every signature valid, timestamps now.
    let ids: HashSet<&str> = got.iter().map(Received::id).collect();
    assert_eq!(ids.len(), got.len(), "a message came twice");
    let now = chrono::Utc::now().timestamp();
    for received in &got {
        assert!(
            signed_with(&secret, received),
            "a bad signature: {:?}",
            received.headers
        );
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
        let of: Vec<Value> = got
            .iter()
            .map(Received::json)
            .filter(|b| b["data"]["ticket"]["number"] == number)
            .collect();
        let change_ids: Vec<i64> = of
            .iter()
            .map(|b| b["data"]["change"]["id"].as_i64().unwrap())
            .collect();
        let mut sorted = change_ids.clone();
        sorted.sort();
        assert_eq!(change_ids, sorted, "{number}'s deliveries out of order");
        assert_eq!(of[0]["type"], "ticket.created");
    }
    let created = got
        .iter()
        .map(Received::json)
        .find(|b| b["type"] == "ticket.created" && b["data"]["ticket"]["number"] == "TASK-1")
        .unwrap();
    assert_eq!(created["data"]["ticket"]["labels"], json!(["backend"]));
    assert_eq!(created["data"]["deleted"], false);
    let gone = got
        .iter()
        .map(Received::json)
        .find(|b| b["type"] == "ticket.deleted")
        .unwrap();
    assert_eq!(gone["data"]["ticket"]["number"], "TASK-2");
    assert_eq!(gone["data"]["deleted"], true);

    // The filtered subscription: only TASK-1's status change and comment.
    let kept = filtered.wait(30, |got| got.len() >= 2);
    std::thread::sleep(Duration::from_millis(1500));
    let kept_now = filtered.got();
    assert_eq!(
        kept_now.len(),
        2,
        "{:?}",
        kept_now.iter().map(Received::json).collect::<Vec<_>>()
    );
    for received in &kept {
        assert!(signed_with(&filtered_secret, received));
        let body = received.json();
        assert_eq!(body["data"]["ticket"]["number"], "TASK-1");
    }
    let types: Vec<Value> = kept.iter().map(|r| r.json()["type"].clone()).collect();
    assert_eq!(
        types,
        vec![json!("ticket.status_changed"), json!("ticket.commented")]
    );

    // The log says what was sent.
    let list = call_json(&http, &server, Method::GET, "/webhooks", &token, None);
    assert_eq!(list.status, StatusCode::OK);
    let first = list.body["webhooks"][0]["id"].as_i64().unwrap();
    assert!(
        list.body["webhooks"][0].get("secret").is_none(),
        "a secret in a listing"
    );
    let log = call_json(
        &http,
        &server,
        Method::GET,
        &format!("/webhooks/{first}/deliveries?limit=5"),
        &token,
        None,
    );
    assert_eq!(log.status, StatusCode::OK, "{}", log.body);
    assert_eq!(log.body["deliveries"].as_array().unwrap().len(), 5);
    assert_eq!(log.body["deliveries"][0]["state"], "delivered");
    assert_eq!(log.body["deliveries"][0]["response_status"], 200);
    let cursor = log.body["next_cursor"].as_str().unwrap().to_string();
    let older = call_json(
        &http,
        &server,
        Method::GET,
        &format!("/webhooks/{first}/deliveries?limit=100&cursor={cursor}"),
        &token,
        None,
    );
    assert_eq!(
        older.body["deliveries"].as_array().unwrap().len() + 5,
        got.len()
    );
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

/// 500 then 200: tried again with the same `webhook-id` and body; 429 waits its
/// `Retry-After`; a 410 is not tried again, until someone redelivers it; a redirect is not
/// followed. The log says each.
#[test]
fn failures_are_retried_with_the_same_id_and_redelivered_on_demand() {
    let db = TestDb::new();
    let token = crate::cloud::admin_workspace(&db.url, "retries", &[]);
    let server = serve(&db, &[PRIVATE, FAST_RETRIES]);
    let http = client();
    let receiver = Receiver::start();
    let (id, secret) = subscribe(&http, &server, &token, json!({"url": receiver.url}));

    receiver.answer("500 Internal Server Error", "", 2);
    post(
        &http,
        &server,
        &token,
        "/tickets",
        json!({"title": "First"}),
    );
    let got = receiver.wait(20, |got| got.len() >= 3);
    assert_eq!(got[0].id(), got[1].id());
    assert_eq!(got[1].id(), got[2].id());
    assert_eq!(got[0].body, got[2].body, "a retry carries the same body");
    assert!(got.iter().all(|r| signed_with(&secret, r)));
    let log = delivery_log(&http, &server, &token, id);
    let first = &log[0];
    assert_eq!(first["state"], "delivered", "{first}");
    assert_eq!(first["attempts"], 3);
    assert_eq!(first["response_status"], 200);

    // 429 with Retry-After: 2 is honoured.
    receiver.answer("429 Too Many Requests", "retry-after: 2\r\n", 1);
    post(
        &http,
        &server,
        &token,
        "/tickets",
        json!({"title": "Second"}),
    );
    let got = receiver.wait(20, |got| got.len() >= 5);
    let waited = got[3].headers["webhook-timestamp"].parse::<i64>().unwrap();
    let retried = got[4].headers["webhook-timestamp"].parse::<i64>().unwrap();
    assert_eq!(got[3].id(), got[4].id());
    assert!(
        retried - waited >= 1,
        "Retry-After not honoured: {waited} → {retried}"
    );

    // 410: failed at once, nothing more, until redelivered.
    receiver.answer("410 Gone", "", 1);
    post(
        &http,
        &server,
        &token,
        "/tickets",
        json!({"title": "Third"}),
    );
    receiver.wait(20, |got| got.len() >= 6);
    std::thread::sleep(Duration::from_millis(1500));
    assert_eq!(receiver.got().len(), 6, "a 410 was tried again");
    let log = call_json(
        &http,
        &server,
        Method::GET,
        &format!("/webhooks/{id}/deliveries?limit=1"),
        &token,
        None,
    );
    let failed = &log.body["deliveries"][0];
    assert_eq!(failed["state"], "failed", "{failed}");
    assert_eq!(failed["response_status"], 410);
    assert_eq!(failed["response_excerpt"], "nope");
    let delivery = failed["id"].as_i64().unwrap();
    let again = call_json(
        &http,
        &server,
        Method::POST,
        &format!("/webhooks/{id}/deliveries/{delivery}/redeliver"),
        &token,
        None,
    );
    assert_eq!(again.status, StatusCode::ACCEPTED, "{}", again.body);
    let got = receiver.wait(20, |got| got.len() >= 7);
    assert_eq!(got[6].id(), got[5].id(), "a redelivery keeps its id");
    assert_eq!(got[6].body, got[5].body);

    // A redirect is not followed: the delivery fails, its target hears nothing.
    let elsewhere = Receiver::start();
    receiver.answer(
        "307 Temporary Redirect",
        &format!("location: {}\r\n", elsewhere.url),
        1,
    );
    let test = call_json(
        &http,
        &server,
        Method::POST,
        &format!("/webhooks/{id}/test"),
        &token,
        None,
    );
    assert_eq!(test.status, StatusCode::ACCEPTED, "{}", test.body);
    let got = receiver.wait(20, |got| got.len() >= 8);
    assert_eq!(got[7].json()["type"], "webhook.test");
    std::thread::sleep(Duration::from_millis(1000));
    assert!(elsewhere.got().is_empty(), "a redirect was followed");
    let log = call_json(
        &http,
        &server,
        Method::GET,
        &format!("/webhooks/{id}/deliveries?limit=1"),
        &token,
        None,
    );
    assert_eq!(log.body["deliveries"][0]["state"], "failed");
    assert!(
        log.body["deliveries"][0]["error"]
            .as_str()
            .unwrap()
            .contains("redirects are not followed")
    );

    // Unknown deliveries and webhooks are not found.
    for path in [
        format!("/webhooks/{id}/deliveries/999999/redeliver"),
        "/webhooks/999999/test".to_string(),
        "/webhooks/x/test".to_string(),
    ] {
        let missing = call_json(&http, &server, Method::POST, &path, &token, None);
        assert_eq!(
            missing.status,
            StatusCode::NOT_FOUND,
            "{path}: {}",
            missing.body
        );
        assert_eq!(missing.code(), "not_found");
    }
}

/// A subscription whose deliveries failed for 24 hours is disabled, with an audit entry;
/// enabling it again clears that.
#[test]
fn a_subscription_failing_for_a_day_is_disabled() {
    let db = TestDb::new();
    let token = crate::cloud::admin_workspace(&db.url, "failing", &[]);
    let server = Server::start_with(
        &db,
        "127.0.0.1:0",
        &["--metrics-listen", "127.0.0.1:0"],
        &[PRIVATE, FAST_RETRIES],
    );
    let http = client();
    let receiver = Receiver::start();
    let (id, _) = subscribe(&http, &server, &token, json!({"url": receiver.url}));
    receiver.answer("503 Service Unavailable", "", 1000);
    post(
        &http,
        &server,
        &token,
        "/tickets",
        json!({"title": "Doomed"}),
    );
    receiver.wait(20, |got| !got.is_empty());
    // A day has passed since the first failure.
    db.client()
        .batch_execute(&format!(
            "UPDATE webhooks SET failing_since = now() - interval '25 hours' WHERE id = {id}; \
             UPDATE webhook_deliveries SET next_attempt_at = now() WHERE webhook_id = {id}"
        ))
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(20);
    let webhook = loop {
        let got = call_json(
            &http,
            &server,
            Method::GET,
            &format!("/webhooks/{id}"),
            &token,
            None,
        );
        if got.body["enabled"] == false {
            break got.body;
        }
        assert!(Instant::now() < deadline, "never disabled: {}", got.body);
        std::thread::sleep(Duration::from_millis(500));
    };
    assert!(
        webhook["disabled_reason"]
            .as_str()
            .unwrap()
            .contains("24 hours"),
        "{webhook}"
    );
    let audit = call_json(&http, &server, Method::GET, "/audit", &token, None);
    assert!(
        audit.body.to_string().contains("webhooks.disabled"),
        "{}",
        audit.body
    );
    // Its maker (the bootstrap token) is told in their inbox.
    let inbox = call_json(
        &http,
        &server,
        Method::GET,
        "/notifications?unread_only=true",
        &token,
        None,
    );
    let told = inbox.body["notifications"]
        .as_array()
        .unwrap()
        .iter()
        .find(|n| n["kind"] == "webhook_disabled")
        .cloned();
    let told = told.unwrap_or_else(|| panic!("no inbox entry: {}", inbox.body));
    assert!(
        told["summary"]
            .as_str()
            .unwrap()
            .contains(&format!("Webhook {id} was disabled")),
        "{told}"
    );
    assert!(told.get("ticket").is_none(), "{told}");
    // The operator sees the attempts, the disabling and the backlog.
    let scrape = http
        .get(crate::probes::metrics_url(&server))
        .send()
        .unwrap()
        .text()
        .unwrap();
    for series in [
        "jility_webhook_attempts_total{outcome=\"retry\"}",
        "jility_webhook_subscriptions_disabled_total 1",
        "jility_webhook_attempt_duration_seconds_count",
        "jility_webhook_backlog{kind=\"pending\"}",
        "jility_webhook_backlog{kind=\"outbox\"}",
    ] {
        assert!(scrape.contains(series), "{series} missing from\n{scrape}");
    }
    // Nothing more is sent while it is disabled.
    std::thread::sleep(Duration::from_millis(800));
    let before = receiver.got().len();
    std::thread::sleep(Duration::from_millis(1200));
    assert_eq!(receiver.got().len(), before);
    // Enabled again: its failures are forgotten and its backlog goes out.
    receiver.script.lock().unwrap().clear();
    let enabled = call_json(
        &http,
        &server,
        Method::PATCH,
        &format!("/webhooks/{id}"),
        &token,
        Some(json!({"enabled": true})),
    );
    assert_eq!(enabled.status, StatusCode::OK, "{}", enabled.body);
    assert!(
        enabled.body.get("failing_since").is_none()
            && enabled.body.get("disabled_reason").is_none(),
        "{}",
        enabled.body
    );
    receiver.wait(20, |got| got.len() > before);
}

/// Rotating a secret signs with both for a while; the listing never shows a secret.
#[test]
fn a_rotated_secret_signs_beside_the_new_one() {
    let db = TestDb::new();
    let token = crate::cloud::admin_workspace(&db.url, "rotation", &[]);
    let server = serve(&db, &[PRIVATE]);
    let http = client();
    let receiver = Receiver::start();
    let (id, old) = subscribe(&http, &server, &token, json!({"url": receiver.url}));
    let rotated = call_json(
        &http,
        &server,
        Method::POST,
        &format!("/webhooks/{id}/rotate-secret"),
        &token,
        Some(json!({"keep_previous_hours": 2})),
    );
    assert_eq!(rotated.status, StatusCode::OK, "{}", rotated.body);
    let new = rotated.body["secret"].as_str().unwrap().to_string();
    assert_ne!(new, old);
    assert!(rotated.body["previous_secret_until"].is_string());
    post(
        &http,
        &server,
        &token,
        "/tickets",
        json!({"title": "Signed twice"}),
    );
    let got = receiver.wait(20, |got| !got.is_empty());
    assert!(signed_with(&old, &got[0]) && signed_with(&new, &got[0]));
    assert_eq!(got[0].headers["webhook-signature"].split(' ').count(), 2);
    // Without keeping the old one: the new one alone.
    let rotated = call_json(
        &http,
        &server,
        Method::POST,
        &format!("/webhooks/{id}/rotate-secret"),
        &token,
        Some(json!({"keep_previous_hours": 0})),
    );
    let newest = rotated.body["secret"].as_str().unwrap().to_string();
    post(
        &http,
        &server,
        &token,
        "/tickets",
        json!({"title": "Signed once"}),
    );
    let got = receiver.wait(20, |got| got.len() >= 2);
    assert!(signed_with(&newest, &got[1]) && !signed_with(&new, &got[1]));
    let bad = call_json(
        &http,
        &server,
        Method::POST,
        &format!("/webhooks/{id}/rotate-secret"),
        &token,
        Some(json!({"keep_previous_hours": 1000})),
    );
    assert_eq!(bad.status, StatusCode::BAD_REQUEST);
    assert_eq!(bad.code(), "invalid_input");
    let text = call_json(&http, &server, Method::GET, "/webhooks", &token, None)
        .body
        .to_string();
    assert!(!text.contains("whsec_"), "{text}");
}

/// Targets on loopback, private, link-local or metadata addresses — by address, by a name
/// that resolves to one, or in IPv6 clothing — are refused without the operator's switch,
/// at creation and again at each delivery; plain http only to loopback, and only with it.
#[test]
fn private_targets_are_refused_without_the_operators_switch() {
    let db = TestDb::new();
    let token = crate::cloud::admin_workspace(&db.url, "fenced", &[]);
    let receiver = Receiver::start();
    let http = client();
    let strict = serve(&db, &[]);
    for url in [
        receiver.url.as_str(),
        "https://127.0.0.1/hook",
        "https://10.1.2.3/hook",
        "https://192.168.0.10/hook",
        "https://169.254.169.254/latest/meta-data",
        "https://[::1]/hook",
        "https://[::ffff:127.0.0.1]/hook",
        "https://localhost/hook",
        "http://example.com/hook",
        "ftp://example.com/hook",
        "https://user:secret@example.com/hook",
    ] {
        let refused = call_json(
            &http,
            &strict,
            Method::POST,
            "/webhooks",
            &token,
            Some(json!({"url": url})),
        );
        assert_eq!(
            refused.status,
            StatusCode::BAD_REQUEST,
            "{url}: {}",
            refused.body
        );
        assert_eq!(refused.code(), "invalid_input", "{url}");
        assert!(
            !refused.body.to_string().contains("secret@"),
            "the URL's credentials echoed"
        );
    }
    let listed = call_json(&http, &strict, Method::GET, "/webhooks", &token, None);
    assert_eq!(listed.body["webhooks"], json!([]));
    drop(strict);

    // With the switch: loopback over http, but plain http nowhere else.
    let open = serve(&db, &[PRIVATE]);
    let refused = call_json(
        &http,
        &open,
        Method::POST,
        "/webhooks",
        &token,
        Some(json!({"url": "http://10.0.0.1/hook"})),
    );
    assert_eq!(refused.status, StatusCode::BAD_REQUEST, "{}", refused.body);
    let (id, _) = subscribe(&http, &open, &token, json!({"url": receiver.url}));
    drop(open);

    // The switch turned off again: the kept subscription's deliveries are refused when sent.
    let strict = serve(&db, &[]);
    post(
        &http,
        &strict,
        &token,
        "/tickets",
        json!({"title": "Not for loopback"}),
    );
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let log = delivery_log(&http, &strict, &token, id);
        if log.first().is_some_and(|d| d["state"] == "failed") {
            // Plain http to loopback is the switch's alone.
            assert!(
                log[0]["error"].as_str().unwrap().contains("https"),
                "{log:?}"
            );
            break;
        }
        assert!(Instant::now() < deadline, "{log:?}");
        std::thread::sleep(Duration::from_millis(300));
    }
    assert!(
        receiver.got().is_empty(),
        "a delivery reached a private address"
    );
}

/// Every route of subscription `id`, with a body where it takes one.
fn routes_of(id: i64) -> Vec<(Method, String, Option<Value>)> {
    vec![
        (Method::GET, format!("/webhooks/{id}"), None),
        (
            Method::PATCH,
            format!("/webhooks/{id}"),
            Some(json!({"enabled": false})),
        ),
        (Method::DELETE, format!("/webhooks/{id}"), None),
        (Method::POST, format!("/webhooks/{id}/test"), None),
        (Method::POST, format!("/webhooks/{id}/rotate-secret"), None),
        (Method::GET, format!("/webhooks/{id}/deliveries"), None),
        (
            Method::POST,
            format!("/webhooks/{id}/deliveries/1/redeliver"),
            None,
        ),
    ]
}

/// Only owners and admins (full_access) manage webhooks; one workspace's subscriptions,
/// deliveries and events are invisible to another's; bad input is refused and says why.
#[test]
fn webhooks_are_for_admins_of_their_own_workspace() {
    let db = TestDb::new();
    let admin = crate::cloud::admin_workspace(&db.url, "alpha", &[]);
    let other = crate::cloud::admin_workspace(&db.url, "beta", &[]);
    let server = serve(&db, &[PRIVATE]);
    let http = client();
    let receiver = Receiver::start();
    let (id, _) = subscribe(&http, &server, &admin, json!({"url": receiver.url}));

    let tokens = jility_cloud::auth::Tokens::new(&db.connect());
    let alpha = db.connect().workspace_by_name("alpha").unwrap().unwrap();
    for scopes in [
        "tickets:read",
        "tickets:read,tickets:write,comments:write,tickets:delete",
    ] {
        let minted = crate::cloud::token(&tokens, &alpha, "limited", scopes);
        let limited = minted.token.expose().to_string();
        for (method, path, body) in [
            (Method::GET, "/webhooks".to_string(), None),
            (
                Method::POST,
                "/webhooks".to_string(),
                Some(json!({"url": receiver.url})),
            ),
        ]
        .into_iter()
        .chain(routes_of(id))
        {
            let refused = call_json(&http, &server, method.clone(), &path, &limited, body);
            assert_eq!(
                refused.status,
                StatusCode::FORBIDDEN,
                "{scopes} {method} {path}: {}",
                refused.body
            );
            assert_eq!(refused.code(), "permission_denied");
        }
    }

    // Another workspace's admin: nothing of alpha's is found, and beta's changes reach no
    // alpha receiver.
    for (method, path, body) in routes_of(id) {
        let hidden = call_json(&http, &server, method.clone(), &path, &other, body);
        assert_eq!(
            hidden.status,
            StatusCode::NOT_FOUND,
            "{method} {path}: {}",
            hidden.body
        );
    }
    assert_eq!(
        call_json(&http, &server, Method::GET, "/webhooks", &other, None).body["webhooks"],
        json!([])
    );
    post(
        &http,
        &server,
        &other,
        "/tickets",
        json!({"title": "Beta's own"}),
    );
    post(
        &http,
        &server,
        &admin,
        "/tickets",
        json!({"title": "Alpha's own"}),
    );
    let got = receiver.wait(20, |got| !got.is_empty());
    std::thread::sleep(Duration::from_millis(1000));
    let got_now = receiver.got();
    assert_eq!(got_now.len(), got.len());
    assert!(
        got_now
            .iter()
            .all(|r| r.json()["data"]["workspace"] == "alpha"),
        "another workspace's event was delivered"
    );

    // Bad input, each refused with what is wrong.
    for (body, says) in [
        (
            json!({"url": receiver.url, "events": ["ticket.exploded"]}),
            "not an event type",
        ),
        (
            json!({"url": receiver.url, "filter": "status:sideways"}),
            "sideways",
        ),
        (
            json!({"url": receiver.url, "filter": "epic:TASK-404"}),
            "TASK-404",
        ),
        (
            json!({"url": receiver.url, "description": "x".repeat(300)}),
            "at most 200",
        ),
        (json!({"url": receiver.url, "colour": "blue"}), "colour"),
        (json!({"url": 7}), "expected a string"),
        (json!({}), "url"),
    ] {
        let refused = call_json(
            &http,
            &server,
            Method::POST,
            "/webhooks",
            &admin,
            Some(body.clone()),
        );
        assert_eq!(
            refused.status,
            StatusCode::BAD_REQUEST,
            "{body}: {}",
            refused.body
        );
        assert!(refused.message().contains(says), "{body}: {}", refused.body);
    }
    for n in 1..20 {
        let (_, _) = subscribe(
            &http,
            &server,
            &admin,
            json!({"url": receiver.url, "description": format!("number {n}")}),
        );
    }
    let full = call_json(
        &http,
        &server,
        Method::POST,
        "/webhooks",
        &admin,
        Some(json!({"url": receiver.url})),
    );
    assert_eq!(full.status, StatusCode::CONFLICT, "{}", full.body);
    assert_eq!(full.code(), "already_exists");

    // Each write is audited, under its operation.
    let audit = call_json(&http, &server, Method::GET, "/audit", &admin, None)
        .body
        .to_string();
    assert!(audit.contains("webhooks.create"), "{audit}");
    let deleted = call_json(
        &http,
        &server,
        Method::DELETE,
        &format!("/webhooks/{id}"),
        &admin,
        None,
    );
    assert_eq!(deleted.status, StatusCode::OK);
    let audit = call_json(&http, &server, Method::GET, "/audit", &admin, None)
        .body
        .to_string();
    assert!(audit.contains("webhooks.delete"), "{audit}");
}

/// The ids of the ticket changes of `workspace` that make events (a new ticket's first
/// description is part of its creation).
fn committed_changes(db: &TestDb, workspace: &str) -> HashSet<i64> {
    db.client()
        .query(
            "SELECT c.id FROM ticket_changes c JOIN workspaces w ON w.id = c.workspace_id \
             WHERE w.name = $1 AND NOT (c.change_type = 'description_changed' AND c.detail = 'created')",
            &[&workspace],
        )
        .unwrap()
        .iter()
        .map(|row| row.get(0))
        .collect()
}

/// Four writers on `server` until `stop`: tickets created and commented on.
fn writers(
    server_url: &str,
    token: &str,
    stop: &Arc<std::sync::atomic::AtomicBool>,
) -> Vec<std::thread::JoinHandle<usize>> {
    (0..4)
        .map(|w| {
            let (url, token, stop) = (server_url.to_string(), token.to_string(), stop.clone());
            std::thread::spawn(move || {
                let http = reqwest::blocking::Client::builder()
                    .timeout(Duration::from_secs(5))
                    .build()
                    .unwrap();
                let mut done = 0;
                let mut n = 0;
                while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                    n += 1;
                    let created = http
                        .post(format!("{url}/tickets"))
                        .bearer_auth(&token)
                        .json(&json!({"title": format!("writer {w} ticket {n}")}))
                        .send();
                    let Ok(created) = created else {
                        std::thread::sleep(Duration::from_millis(20));
                        continue;
                    };
                    let Ok(body) = created.json::<Value>() else {
                        continue;
                    };
                    let Some(number) = body["ticket"]["number"].as_str() else {
                        continue;
                    };
                    let _ = http
                        .post(format!("{url}/tickets/{number}/comments"))
                        .bearer_auth(&token)
                        .json(&json!({"content": "a comment"}))
                        .send();
                    done += 1;
                }
                done
            })
        })
        .collect()
}

/// Each change id received, with the message ids it came under.
fn received_changes(got: &[Received]) -> HashMap<i64, HashSet<String>> {
    let mut by_change: HashMap<i64, HashSet<String>> = HashMap::new();
    for received in got {
        let change = received.json()["data"]["change"]["id"].as_i64().unwrap();
        by_change
            .entry(change)
            .or_default()
            .insert(received.id().to_string());
    }
    by_change
}

/// `kill -9` of the server under four writers: every change that committed is delivered
/// (by the server started after it), none that did not — nor one rolled back — is; a
/// change sent twice keeps its `webhook-id`.
#[test]
fn kill_9_under_four_writers_loses_no_delivery_and_sends_none_rolled_back() {
    let db = TestDb::new();
    let token = crate::cloud::admin_workspace(&db.url, "crash", &[]);
    let receiver = Receiver::start();
    let http = client();
    let server = serve(&db, &[PRIVATE]);
    subscribe(&http, &server, &token, json!({"url": receiver.url}));
    post(
        &http,
        &server,
        &token,
        "/tickets",
        json!({"title": "Before"}),
    );
    let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let running = writers(&server.url, &token, &stop);
    std::thread::sleep(Duration::from_millis(1500));
    let killed = std::process::Command::new("kill")
        .args(["-KILL", &server.pid().to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    std::thread::sleep(Duration::from_millis(300));
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    let written: usize = running.into_iter().map(|t| t.join().unwrap()).sum();
    assert!(
        written > 8,
        "the writers wrote too little ({written}) to prove anything"
    );
    drop(server);

    // A change rolled back, in a workspace with a subscription: no event.
    let mut client = db.client();
    let mut tx = client.transaction().unwrap();
    let rolled_back: i64 = tx
        .query_one(
            "INSERT INTO ticket_changes (workspace_id, ticket_id, change_type, changed_by, changed_at) \
             SELECT workspace_id, id, 'title_changed', 'ghost', '2026-01-01T00:00:00.000Z' FROM tickets \
             WHERE workspace_id = (SELECT id FROM workspaces WHERE name = 'crash') ORDER BY id LIMIT 1 RETURNING id",
            &[],
        )
        .unwrap()
        .get(0);
    let outbox: i64 = tx
        .query_one("SELECT count(*) FROM webhook_outbox", &[])
        .unwrap()
        .get(0);
    assert!(
        outbox >= 1,
        "the trigger wrote no outbox row in the change's transaction"
    );
    tx.rollback().unwrap();

    let committed = committed_changes(&db, "crash");
    assert!(committed.len() > 2 * written / 2);
    let _after = serve(&db, &[PRIVATE]);
    // The killed process's leases lapse (30 s) before what it held is sent again.
    let got = receiver.wait(90, |got| {
        let by_change = received_changes(got);
        committed.iter().all(|id| by_change.contains_key(id))
    });
    let by_change = received_changes(&got);
    for (change, ids) in &by_change {
        assert!(
            committed.contains(change),
            "change {change} was delivered but never committed"
        );
        assert_eq!(
            ids.len(),
            1,
            "change {change} came under several message ids: {ids:?}"
        );
    }
    assert!(
        !by_change.contains_key(&rolled_back),
        "a rolled-back change was delivered"
    );
    let outbox: i64 = db
        .client()
        .query_one("SELECT count(*) FROM webhook_outbox", &[])
        .unwrap()
        .get(0);
    assert_eq!(outbox, 0, "the outbox kept rows after they were fanned out");
}

/// Two server processes on one database: each event is sent once, by one of them.
#[test]
fn two_processes_deliver_each_event_once() {
    let db = TestDb::new();
    let token = crate::cloud::admin_workspace(&db.url, "pair", &[]);
    let receiver = Receiver::start();
    let http = client();
    let first = serve(&db, &[PRIVATE]);
    let second = serve(&db, &[PRIVATE]);
    subscribe(&http, &first, &token, json!({"url": receiver.url}));
    let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let mut running = writers(&first.url, &token, &stop);
    running.extend(writers(&second.url, &token, &stop));
    std::thread::sleep(Duration::from_millis(2000));
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    let written: usize = running.into_iter().map(|t| t.join().unwrap()).sum();
    assert!(written > 8, "{written}");
    let committed = committed_changes(&db, "pair");
    let got = receiver.wait(60, |got| received_changes(got).len() >= committed.len());
    std::thread::sleep(Duration::from_millis(1500));
    let got_now = receiver.got();
    assert_eq!(
        got_now.len(),
        got.len(),
        "more came after every change was delivered"
    );
    assert_eq!(
        got.len(),
        committed.len(),
        "an event was sent more than once"
    );
    let by_change = received_changes(&got);
    assert_eq!(by_change.keys().copied().collect::<HashSet<_>>(), committed);
    // Both processes sent some (the database decides who sends what).
    let senders: i64 = db
        .client()
        .query_one(
            "SELECT count(*) FROM webhook_deliveries WHERE state = 'delivered'",
            &[],
        )
        .unwrap()
        .get(0);
    assert_eq!(senders as usize, committed.len());
}

/// The queue tables are vacuumed after churn (the machine's PostgreSQL runs without
/// autovacuum), and settled deliveries older than the log keeps are removed; pending ones
/// and recent ones stay.
#[test]
fn the_webhook_tables_are_kept_small() {
    let db = TestDb::new();
    let token = crate::cloud::admin_workspace(&db.url, "tidy", &[]);
    let receiver = Receiver::start();
    let http = client();
    let server = serve(&db, &[PRIVATE, ("JILITY_WEBHOOKS_KEEP_DAYS", "7")]);
    let (id, _) = subscribe(&http, &server, &token, json!({"url": receiver.url}));
    for n in 0..3 {
        post(
            &http,
            &server,
            &token,
            "/tickets",
            json!({"title": format!("Churn {n}")}),
        );
    }
    receiver.wait(20, |got| got.len() >= 3);
    // Three deliveries settled eight days ago, one five days ago, and one pending since
    // eight days (retrying): only the first three are past the log's keeping.
    let mut pg = db.client();
    pg.batch_execute(&format!(
        "INSERT INTO webhook_deliveries (workspace_id, webhook_id, message_id, event_type, body, state, created_at) \
         SELECT w.workspace_id, w.id, 'msg_old_' || n, 'ticket.created', '{{}}', \
                CASE WHEN n = 5 THEN 'pending' ELSE 'delivered' END, \
                now() - CASE WHEN n = 4 THEN interval '5 days' ELSE interval '8 days' END \
         FROM webhooks w, generate_series(1, 5) n WHERE w.id = {id}; \
         UPDATE webhook_deliveries SET next_attempt_at = now() + interval '1 hour' \
         WHERE message_id = 'msg_old_5'"
    ))
    .unwrap();
    let deadline = Instant::now() + Duration::from_secs(40);
    loop {
        let left: Vec<String> = pg
            .query(
                "SELECT message_id FROM webhook_deliveries WHERE message_id LIKE 'msg_old_%' ORDER BY 1",
                &[],
            )
            .unwrap()
            .iter()
            .map(|r| r.get(0))
            .collect();
        let vacuumed: bool = pg
            .query_one(
                "SELECT vacuum_count > 0 FROM pg_stat_user_tables WHERE relname = 'webhook_outbox'",
                &[],
            )
            .unwrap()
            .get(0);
        if left == ["msg_old_4", "msg_old_5"] && vacuumed {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "left {left:?}, the outbox vacuumed: {vacuumed}"
        );
        std::thread::sleep(Duration::from_millis(500));
    }
    // The recent deliveries are still in the log.
    let log = delivery_log(&http, &server, &token, id);
    assert!(log.len() >= 5, "{log:?}");
}

/// `jility webhook …` through the API: create (the secret once), list, test, the log,
/// redeliver, update, rotate, delete; text for people and the API's JSON with `--json`.
#[test]
fn the_cli_manages_webhooks() {
    let db = TestDb::new();
    let token = crate::cloud::admin_workspace(&db.url, "cli", &[]);
    let server = serve(&db, &[PRIVATE]);
    let home = tempfile::tempdir().unwrap();
    let receiver = Receiver::start();
    let run = |args: &[&str]| crate::cloud::jility(args, server.root(), Some(&token), home.path());
    let made = crate::cloud::stdout_json(&run(&[
        "webhook",
        "create",
        &receiver.url,
        "--event",
        "ticket.created",
        "--filter",
        "label:ops",
        "--description",
        "ops channel",
        "--json",
    ]));
    let id = made["id"].as_i64().unwrap();
    let secret = made["secret"].as_str().unwrap().to_string();
    assert_eq!(made["events"], json!(["ticket.created"]));
    let text = run(&["webhook", "list"]);
    let shown = String::from_utf8_lossy(&text.stdout);
    assert!(
        text.status.success() && shown.contains(&receiver.url) && shown.contains("label:ops"),
        "{shown}"
    );
    assert!(!shown.contains("whsec_"), "a secret in the listing");
    let tested = run(&["webhook", "test", &id.to_string()]);
    assert!(
        tested.status.success(),
        "{}",
        String::from_utf8_lossy(&tested.stderr)
    );
    let got = receiver.wait(20, |got| !got.is_empty());
    assert!(signed_with(&secret, &got[0]));
    let log =
        crate::cloud::stdout_json(&run(&["webhook", "deliveries", &id.to_string(), "--json"]));
    let delivery = log["deliveries"][0]["id"].as_i64().unwrap();
    let shown = run(&["webhook", "deliveries", &id.to_string()]);
    assert!(String::from_utf8_lossy(&shown.stdout).contains("webhook.test"));
    let again = run(&[
        "webhook",
        "redeliver",
        &id.to_string(),
        &delivery.to_string(),
    ]);
    assert!(
        again.status.success(),
        "{}",
        String::from_utf8_lossy(&again.stderr)
    );
    let got = receiver.wait(20, |got| got.len() >= 2);
    assert_eq!(got[0].id(), got[1].id());
    let changed = crate::cloud::stdout_json(&run(&[
        "webhook",
        "update",
        &id.to_string(),
        "--no-filter",
        "--disable",
        "--json",
    ]));
    assert_eq!(changed["enabled"], false);
    assert!(changed.get("filter").is_none());
    let rotated = run(&[
        "webhook",
        "rotate-secret",
        &id.to_string(),
        "--keep-hours",
        "1",
    ]);
    let shown = String::from_utf8_lossy(&rotated.stdout);
    assert!(
        rotated.status.success() && shown.contains("whsec_") && shown.contains("only this once"),
        "{shown}"
    );
    let refused = run(&["webhook", "create", "http://10.0.0.1/x"]);
    assert!(!refused.status.success());
    assert!(
        String::from_utf8_lossy(&refused.stderr).contains("http"),
        "{}",
        String::from_utf8_lossy(&refused.stderr)
    );
    let deleted = run(&["webhook", "delete", &id.to_string()]);
    assert!(deleted.status.success());
    let missing = run(&["webhook", "delete", &id.to_string()]);
    assert!(!missing.status.success());
    assert!(String::from_utf8_lossy(&missing.stderr).contains(&format!("No webhook {id}")));
}
