//! What `jility serve` tells the people who run it: `/healthz`, `/readyz` and `/metrics`
//! (Prometheus' text format, checked with `promtool` when it is installed).

use std::process::Command;
use std::time::{Duration, Instant};

use reqwest::Method;
use reqwest::blocking::Client;
use serde_json::{Value, json};

use crate::cloud::{Server, call, client};
use crate::pg::TestDb;

const METRICS_TOKEN: &str = "metrics-token-for-the-tests-1234";

fn get(http: &Client, url: &str, token: Option<&str>) -> (u16, String) {
    let mut request = http.get(url);
    if let Some(token) = token {
        request = request.bearer_auth(token);
    }
    let response = request.send().unwrap();
    let status = response.status().as_u16();
    (status, response.text().unwrap())
}

fn made_workspace(db: &TestDb, name: &str) -> String {
    crate::cloud::admin_workspace(&db.url, name, &[])
}

fn made_workspace_at(url: &str, name: &str) -> String {
    crate::cloud::admin_workspace(url, name, &[])
}

/// `promtool check metrics` on `text`: its complaints (none: `Ok`). `None` when promtool is
/// not installed (Debian's `prometheus` package; scripts/test installs it).
fn promtool(text: &str) -> Option<Result<(), String>> {
    use std::io::Write;
    let mut child = Command::new("promtool")
        .args(["check", "metrics"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .ok()?;
    child
        .stdin
        .take()
        .unwrap()
        .write_all(text.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    Some(if out.status.success() {
        Ok(())
    } else {
        Err(format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        ))
    })
}

/// The value of the series `name{labels…}` (labels in the order the server gives them), or
/// `None`.
fn series(text: &str, line_start: &str) -> Option<f64> {
    text.lines()
        .find(|line| line.starts_with(line_start) && line[line_start.len()..].starts_with(' '))
        .and_then(|line| line.rsplit(' ').next())
        .and_then(|v| v.parse().ok())
}

#[test]
fn the_probes_answer_without_credentials_and_say_nothing_else() {
    let db = TestDb::new();
    let server = Server::start(&db, &[]);
    let http = client();
    let (status, body) = get(&http, &format!("{}/healthz", server.root()), None);
    assert_eq!(status, 200, "{body}");
    assert_eq!(
        serde_json::from_str::<Value>(&body).unwrap(),
        json!({"status": "ok"})
    );
    let (status, body) = get(&http, &format!("{}/readyz", server.root()), None);
    assert_eq!(status, 200, "{body}");
    assert_eq!(
        serde_json::from_str::<Value>(&body).unwrap(),
        json!({"status": "ready", "checks": {"database": "ok", "schema": "ok", "server": "serving"}})
    );
    // A hundred probes at once: one checks the database, the others wait for its verdict.
    let probes: Vec<_> = (0..100)
        .map(|_| {
            let url = format!("{}/readyz", server.root());
            std::thread::spawn(move || client().get(url).send().unwrap().status().as_u16())
        })
        .collect();
    let statuses: Vec<u16> = probes.into_iter().map(|p| p.join().unwrap()).collect();
    assert!(statuses.iter().all(|s| *s == 200), "{statuses:?}");
    // Nothing of the database: its name, host or port.
    for secret in [db.name.as_str(), "5432", "127.0.0.1", "postgres"] {
        assert!(!body.contains(secret), "{secret} in {body}");
    }
    // Without JILITY_METRICS_TOKEN the main listener serves no metrics.
    let (status, body) = get(&http, &format!("{}/metrics", server.root()), None);
    assert_eq!(status, 404, "{body}");
    assert!(body.contains("JILITY_METRICS_TOKEN"), "{body}");
    let (status, _) = get(
        &http,
        &format!("{}/metrics", server.root()),
        Some(METRICS_TOKEN),
    );
    assert_eq!(status, 404);
}

/// `/readyz` says why the server cannot serve: a schema older than the server's, and
/// PostgreSQL refusing connections (a role's connection limit: SQLSTATE 53300, as
/// `max_connections` gives), which requests are told too, as a retryable 503.
#[test]
fn readyz_says_why_not_and_requests_say_when_postgres_refuses_connections() {
    let db = TestDb::new();
    // A role of its own (superusers have no connection limit), owning the database, which
    // it migrates itself.
    let role = format!("jility_r_{}", &db.name[9..]);
    let mut admin = db.client();
    admin
        .batch_execute(&format!(
            "CREATE ROLE {role} LOGIN; ALTER DATABASE {} OWNER TO {role};",
            db.name
        ))
        .unwrap();
    /// Drops the database, then the role (which owns it), whatever the test did.
    struct DropRole(String, String);
    impl Drop for DropRole {
        fn drop(&mut self) {
            if let Ok(mut c) = postgres::Client::connect(&crate::pg::base_url(), postgres::NoTls) {
                let _ = c.batch_execute(&format!(
                    "DROP DATABASE IF EXISTS {1} WITH (FORCE); DROP ROLE IF EXISTS {0}",
                    self.0, self.1
                ));
            }
        }
    }
    let _role = DropRole(role.clone(), db.name.clone());
    let url = db.url.replacen("postgres@", &format!("{role}@"), 1);
    assert_ne!(url, db.url);
    let token = made_workspace_at(&url, "ready");
    let server = Server::start_on(&url, "127.0.0.1:0", &["--db-pool-size", "8"], &[]);
    let http = client();
    let ready = |expect: u16| -> Value {
        let (status, body) = get(&http, &format!("{}/readyz", server.root()), None);
        assert_eq!(status, expect, "{body}");
        serde_json::from_str(&body).unwrap()
    };
    ready(200);

    // The schema is behind the server's (a migration recorded as not applied).
    let known = jility_cloud::store::MIGRATIONS.len() as i32;
    admin
        .execute(
            "DELETE FROM jility_schema_migrations WHERE version = $1",
            &[&known],
        )
        .unwrap();
    std::thread::sleep(Duration::from_millis(300));
    let verdict = ready(503);
    assert_eq!(verdict["checks"]["schema"], "behind", "{verdict}");
    assert!(
        verdict["reason"]
            .as_str()
            .unwrap()
            .contains("jility admin migrate"),
        "{verdict}"
    );
    admin
        .execute(
            "INSERT INTO jility_schema_migrations (version) VALUES ($1)",
            &[&known],
        )
        .unwrap();
    std::thread::sleep(Duration::from_millis(300));
    ready(200);

    // PostgreSQL refuses every new connection of the role.
    admin
        .batch_execute(&format!("ALTER ROLE {role} CONNECTION LIMIT 0"))
        .unwrap();
    // Requests that need more connections than the server holds are refused, retryably,
    // saying why.
    let answers: Vec<_> = (0..16)
        .map(|i| {
            let (root, token) = (server.url.clone(), token.clone());
            std::thread::spawn(move || {
                let http = client();
                let response = http
                    .post(format!("{root}/tickets"))
                    .bearer_auth(&token)
                    .json(&json!({ "title": format!("ticket {i}") }))
                    .send()
                    .unwrap();
                let status = response.status().as_u16();
                let retry = response.headers().get("retry-after").is_some();
                (status, retry, response.json::<Value>().unwrap())
            })
        })
        .collect();
    let answers: Vec<(u16, bool, Value)> = answers.into_iter().map(|h| h.join().unwrap()).collect();
    let refused: Vec<&(u16, bool, Value)> = answers.iter().filter(|(s, _, _)| *s == 503).collect();
    assert!(
        answers.iter().all(|(s, _, _)| *s == 201 || *s == 503),
        "{answers:?}"
    );
    assert!(!refused.is_empty(), "{answers:?}");
    let verdict = ready(503);
    assert_eq!(
        verdict["checks"]["database"], "refusing_connections",
        "{verdict}"
    );
    assert!(
        verdict["reason"]
            .as_str()
            .unwrap()
            .contains("refuses more connections"),
        "{verdict}"
    );
    for (_, retry, body) in &refused {
        assert!(retry, "{body}");
        assert_eq!(body["error"]["retryable"], true, "{body}");
        assert!(
            body["error"]["message"]
                .as_str()
                .unwrap()
                .contains("refuses more connections"),
            "{body}"
        );
    }
    admin
        .batch_execute(&format!("ALTER ROLE {role} CONNECTION LIMIT -1"))
        .unwrap();
    std::thread::sleep(Duration::from_millis(300));
    ready(200);
    let created = call(
        &http,
        &server,
        Method::POST,
        "/tickets",
        Some(&token),
        Some(r#"{"title":"after"}"#),
    );
    assert_eq!(created.status, 201, "{:?}", created.body);
    drop(server);
}

/// A database that cannot be reached: `/readyz` says so within a couple of seconds, and
/// the metrics; both recover when it is back.
#[test]
fn readyz_and_the_metrics_follow_a_database_outage() {
    let Some(bin) = crate::outage::pg_bin() else {
        eprintln!("SKIPPED: initdb is not installed (no /usr/lib/postgresql/*/bin/initdb)");
        return;
    };
    let cluster = crate::outage::Cluster::create(bin);
    let db = TestDb::on(&cluster.url());
    let server = Server::start_with(
        &db,
        "127.0.0.1:0",
        &["--metrics-listen", "127.0.0.1:0"],
        &[],
    );
    let metrics = metrics_url(&server);
    let http = client();
    let readyz = format!("{}/readyz", server.root());
    assert_eq!(get(&http, &readyz, None).0, 200);
    let up = |http: &Client| series(&get(http, &metrics, None).1, "jility_database_up");
    assert_eq!(up(&http), Some(1.0));
    cluster.stop("fast");
    let down_at = Instant::now();
    let verdict = loop {
        let (status, body) = get(&http, &readyz, None);
        if status == 503 {
            break serde_json::from_str::<Value>(&body).unwrap();
        }
        assert!(
            down_at.elapsed() < Duration::from_secs(5),
            "still ready: {body}"
        );
        std::thread::sleep(Duration::from_millis(100));
    };
    assert_eq!(verdict["checks"]["database"], "unreachable", "{verdict}");
    assert_eq!(up(&http), Some(0.0));
    cluster.start();
    let back_at = Instant::now();
    while get(&http, &readyz, None).0 != 200 {
        assert!(
            back_at.elapsed() < Duration::from_secs(20),
            "not ready again"
        );
        std::thread::sleep(Duration::from_millis(200));
    }
    assert_eq!(up(&http), Some(1.0));
}

/// The metrics listener's address, from the server's log.
pub(crate) fn metrics_url(server: &Server) -> String {
    let started = Instant::now();
    loop {
        if let Some(url) = server
            .log()
            .lines()
            .find_map(|l| l.strip_prefix("jility: serving metrics at "))
        {
            return url.trim().to_string();
        }
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "{}",
            server.log()
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// `/metrics` behind its token: every kind of measurement appears once it happened, with
/// labels from fixed sets (route templates, tool names), never a token, a ticket, an email
/// or a workspace's name; `promtool check metrics` finds nothing to say.
#[test]
fn metrics_count_requests_tools_pools_limits_sessions_and_streams_without_secrets() {
    let db = TestDb::new();
    let token = made_workspace(&db, "metrics-workspace-name");
    let server = Server::start_with(
        &db,
        "127.0.0.1:0",
        &["--rate-limit", "60", "--metrics-listen", "127.0.0.1:0"],
        &[("JILITY_METRICS_TOKEN", METRICS_TOKEN)],
    );
    let http = client();
    let scrape_url = format!("{}/metrics", server.root());
    // The token: none, a wrong one, the right one.
    assert_eq!(get(&http, &scrape_url, None).0, 401);
    assert_eq!(
        get(&http, &scrape_url, Some("metrics-token-for-the-tests-123")).0,
        401
    );
    assert_eq!(
        get(&http, &scrape_url, Some(&token)).0,
        401,
        "an API token is not the metrics token"
    );
    assert_eq!(get(&http, &scrape_url, Some(METRICS_TOKEN)).0, 200);

    // Work of every kind: REST reads and writes over many ticket numbers, unknown paths,
    // an MCP session and tool call, an open event stream, and refusals by the rate limit.
    for i in 1..=5 {
        let created = call(
            &http,
            &server,
            Method::POST,
            "/tickets",
            Some(&token),
            Some(&json!({ "title": format!("secret title {i}") }).to_string()),
        );
        assert_eq!(created.status, 201, "{:?}", created.body);
    }
    for i in 1..=30 {
        let _ = http
            .get(format!("{}/tickets/TASK-{i}", server.url))
            .bearer_auth(&token)
            .send()
            .unwrap();
        let _ = http
            .get(format!("{}/no/such/page/{i}", server.root()))
            .send()
            .unwrap();
    }
    let session = crate::outage::mcp_session(&http, &format!("{}/mcp", server.root()), &token);
    let called = crate::cloud::call_tool_in_session(
        &http,
        server.root(),
        &token,
        &session,
        "jility_get_ticket",
        json!({"ticket_id": "TASK-1"}),
        None,
    );
    assert!(called.is_success());
    let stream = http
        .get(format!("{}/events", server.url))
        .bearer_auth(&token)
        .send()
        .unwrap();
    assert_eq!(stream.status(), 200);
    // Past the limit of 60 a minute.
    let mut limited = 0;
    for _ in 0..80 {
        let answer = http
            .get(format!("{}/tickets?limit=1", server.url))
            .bearer_auth(&token)
            .send()
            .unwrap();
        if answer.status() == 429 {
            limited += 1;
        }
    }
    assert!(limited > 0);

    let (status, text) = get(&http, &scrape_url, Some(METRICS_TOKEN));
    assert_eq!(status, 200);
    let expect = [
        (
            r#"jility_http_requests_total{method="POST",route="/api/v1/tickets",status="201"}"#,
            Some(5.0),
        ),
        (
            r#"jility_http_requests_total{method="GET",route="/api/v1/tickets/{ticket_id}",status="200"}"#,
            Some(5.0),
        ),
        (
            r#"jility_http_requests_total{method="GET",route="/api/v1/tickets/{ticket_id}",status="404"}"#,
            Some(25.0),
        ),
        (
            r#"jility_http_requests_total{method="GET",route="unmatched",status="404"}"#,
            Some(30.0),
        ),
        (
            r#"jility_mcp_tool_calls_total{tool="jility_get_ticket",outcome="ok"}"#,
            Some(1.0),
        ),
        (
            r#"jility_rate_limit_refusals_total{limit="token"}"#,
            Some(f64::from(limited)),
        ),
        (r#"jility_event_subscribers{kind="api"}"#, Some(1.0)),
        ("jility_mcp_sessions", Some(1.0)),
        ("jility_database_up", Some(1.0)),
        ("jility_database_refusing_connections", Some(0.0)),
        (
            r#"jility_db_pool_max_connections{pool="requests"}"#,
            Some(12.0),
        ),
        (r#"jility_build_info{version=""#, None),
        (
            r#"jility_db_statement_duration_seconds_count{via="pool"}"#,
            None,
        ),
        (
            r#"jility_db_statement_duration_seconds_count{via="reader"}"#,
            None,
        ),
        (
            r#"jility_db_pool_wait_duration_seconds_count{pool="requests"}"#,
            None,
        ),
        (
            r#"jility_http_request_duration_seconds_bucket{method="POST",route="/api/v1/tickets",le="0.5"}"#,
            None,
        ),
        (
            r#"jility_mcp_tool_call_duration_seconds_count{tool="jility_get_ticket"}"#,
            Some(1.0),
        ),
    ];
    for (line, value) in expect {
        match value {
            Some(value) => assert_eq!(series(&text, line), Some(value), "{line}\n{text}"),
            None => assert!(text.lines().any(|l| l.starts_with(line)), "{line}\n{text}"),
        }
    }
    // Bounded labels: thirty ticket numbers and thirty unknown paths made no series of
    // their own; no secret or text anywhere.
    for leaked in [
        "TASK-",
        "/no/such",
        &token,
        METRICS_TOKEN,
        "metrics-workspace-name",
        "secret title",
        "@",
        db.name.as_str(),
    ] {
        assert!(!text.contains(leaked), "{leaked} in the metrics");
    }
    match promtool(&text) {
        Some(checked) => checked.unwrap(),
        None => {
            assert!(
                std::env::var_os("JILITY_REQUIRE_PROMTOOL").is_none(),
                "promtool is required (scripts/test installs Debian's prometheus package)"
            );
            eprintln!("SKIPPED: promtool is not installed (Debian's prometheus package)");
        }
    }
    // The same on the private listener, without credentials; the stream closed is no
    // longer counted.
    drop(stream);
    let private = metrics_url(&server);
    let started = Instant::now();
    loop {
        let (status, text) = get(&http, &private, None);
        assert_eq!(status, 200);
        if series(&text, r#"jility_event_subscribers{kind="api"}"#) == Some(0.0) {
            break;
        }
        assert!(started.elapsed() < Duration::from_secs(10), "{text}");
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// On SIGTERM `/readyz` says the server is stopping (on the metrics listener, which stays
/// up while requests in flight are answered), so that a balancer stops sending it work.
#[test]
fn readyz_says_stopping_once_the_server_is_told_to_stop() {
    let db = TestDb::new();
    let token = made_workspace(&db, "stop");
    let server = Server::start_with(
        &db,
        "127.0.0.1:0",
        &["--metrics-listen", "127.0.0.1:0"],
        &[],
    );
    let readyz = metrics_url(&server).replace("/metrics", "/readyz");
    let http = client();
    assert_eq!(get(&http, &readyz, None).0, 200);
    // An event stream keeps the server draining for a while.
    let stream = http
        .get(format!("{}/events", server.url))
        .bearer_auth(&token)
        .send()
        .unwrap();
    assert_eq!(stream.status(), 200);
    let sent = Command::new("kill")
        .args(["-TERM", &server.pid().to_string()])
        .status()
        .unwrap();
    assert!(sent.success());
    let started = Instant::now();
    let verdict = loop {
        let (status, body) = get(&http, &readyz, None);
        if status == 503 {
            break serde_json::from_str::<Value>(&body).unwrap();
        }
        assert!(started.elapsed() < Duration::from_secs(3), "{body}");
        std::thread::sleep(Duration::from_millis(50));
    };
    assert_eq!(verdict["checks"]["server"], "stopping", "{verdict}");
    drop(stream);
}

/// A collector of OTLP/HTTP JSON exports: every body POSTed to it, parsed.
struct Collector {
    url: String,
    bodies: std::sync::Arc<std::sync::Mutex<Vec<Value>>>,
}

impl Collector {
    fn start() -> Self {
        use std::io::{BufRead, BufReader, Read, Write};
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let bodies = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
        let kept = bodies.clone();
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(stream) = stream else { return };
                let kept = kept.clone();
                std::thread::spawn(move || {
                    let mut reader = BufReader::new(stream.try_clone().unwrap());
                    let mut writer = stream;
                    loop {
                        let mut length = 0usize;
                        let mut line = String::new();
                        if reader.read_line(&mut line).unwrap_or(0) == 0 {
                            return;
                        }
                        loop {
                            line.clear();
                            if reader.read_line(&mut line).unwrap_or(0) == 0 {
                                return;
                            }
                            let header = line.trim_end();
                            if header.is_empty() {
                                break;
                            }
                            if let Some((name, value)) = header.split_once(':')
                                && name.eq_ignore_ascii_case("content-length")
                            {
                                length = value.trim().parse().unwrap();
                            }
                        }
                        let mut body = vec![0; length];
                        reader.read_exact(&mut body).unwrap();
                        if let Ok(value) = serde_json::from_slice::<Value>(&body) {
                            kept.lock().unwrap().push(value);
                        }
                        let _ = writer.write_all(
                            b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 2\r\n\r\n{}",
                        );
                    }
                });
            }
        });
        Self { url, bodies }
    }

    /// Every span exported so far.
    fn spans(&self) -> Vec<Value> {
        self.bodies
            .lock()
            .unwrap()
            .iter()
            .flat_map(|body| {
                body["resourceSpans"]
                    .as_array()
                    .cloned()
                    .unwrap_or_default()
            })
            .flat_map(|rs| rs["scopeSpans"].as_array().cloned().unwrap_or_default())
            .flat_map(|ss| ss["spans"].as_array().cloned().unwrap_or_default())
            .collect()
    }
}

/// With `OTEL_EXPORTER_OTLP_ENDPOINT`, requests and tool calls are exported as spans that
/// continue the caller's trace: a `traceparent` header for HTTP, `_meta.traceparent` for MCP.
#[test]
fn traces_go_over_otlp_and_continue_the_callers_trace() {
    let collector = Collector::start();
    let db = TestDb::new();
    let token = made_workspace(&db, "traced");
    let server = Server::start_with(
        &db,
        "127.0.0.1:0",
        &[],
        &[
            ("OTEL_EXPORTER_OTLP_ENDPOINT", collector.url.as_str()),
            ("OTEL_EXPORTER_OTLP_PROTOCOL", "http/json"),
            ("OTEL_BSP_SCHEDULE_DELAY", "100"),
        ],
    );
    let http = client();
    let created = call(
        &http,
        &server,
        Method::POST,
        "/tickets",
        Some(&token),
        Some(r#"{"title":"traced title"}"#),
    );
    assert_eq!(created.status, 201);
    let (rest_trace, rest_parent) = ("0af7651916cd43dd8448eb211c80319c", "b7ad6b7169203331");
    let read = http
        .get(format!("{}/tickets/TASK-1", server.url))
        .bearer_auth(&token)
        .header("traceparent", format!("00-{rest_trace}-{rest_parent}-01"))
        .send()
        .unwrap();
    assert_eq!(read.status(), 200);
    let (mcp_trace, mcp_parent) = ("4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7");
    let session = crate::outage::mcp_session(&http, &format!("{}/mcp", server.root()), &token);
    let called = crate::cloud::call_tool_in_session(
        &http,
        server.root(),
        &token,
        &session,
        "jility_get_ticket",
        json!({"ticket_id": "TASK-1"}),
        Some(json!({"traceparent": format!("00-{mcp_trace}-{mcp_parent}-01")})),
    );
    assert!(called.is_success());
    let find = |trace: &str, name: &str| -> Option<Value> {
        collector
            .spans()
            .into_iter()
            .find(|s| s["traceId"] == trace && s["name"] == name)
    };
    let started = Instant::now();
    let (rest, mcp) = loop {
        if let (Some(rest), Some(mcp)) = (
            find(rest_trace, "GET /api/v1/tickets/{ticket_id}"),
            find(mcp_trace, "tools/call jility_get_ticket"),
        ) {
            break (rest, mcp);
        }
        assert!(
            started.elapsed() < Duration::from_secs(15),
            "spans: {:#?}",
            collector.spans()
        );
        std::thread::sleep(Duration::from_millis(100));
    };
    assert_eq!(rest["parentSpanId"], rest_parent, "{rest}");
    assert_eq!(mcp["parentSpanId"], mcp_parent, "{mcp}");
    let attribute = |span: &Value, key: &str| -> Value {
        span["attributes"]
            .as_array()
            .unwrap()
            .iter()
            .find(|a| a["key"] == key)
            .map(|a| a["value"].clone())
            .unwrap_or(Value::Null)
    };
    assert_eq!(
        attribute(&rest, "http.route")["stringValue"],
        "/api/v1/tickets/{ticket_id}"
    );
    let status = attribute(&rest, "http.response.status_code");
    assert!(
        status["intValue"] == 200 || status["intValue"] == "200",
        "{rest}"
    );
    assert_eq!(
        attribute(&mcp, "gen_ai.tool.name")["stringValue"],
        "jility_get_ticket"
    );
    // A span without a caller's trace starts its own.
    assert!(
        collector
            .spans()
            .iter()
            .any(|s| s["name"] == "POST /api/v1/tickets")
    );
    let all = serde_json::to_string(&collector.spans()).unwrap();
    for leaked in ["TASK-1", "traced title", token.as_str()] {
        assert!(!all.contains(leaked), "{leaked} in the spans");
    }
    assert!(
        serde_json::to_string(&*collector.bodies.lock().unwrap())
            .unwrap()
            .contains("\"jility\""),
        "the service is named"
    );
}
