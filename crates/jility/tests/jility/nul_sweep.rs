//! A NUL character (U+0000, which PostgreSQL's text cannot hold) in every field of every
//! endpoint, form, query and header `jility serve` reads, through the built binary: every
//! answer is a `400` in its path's shape — the envelope (`invalid_input`) under `/api`, a
//! JSON-RPC error with the call's id at `/mcp`, RFC 6749's `invalid_request` on OAuth's JSON
//! endpoints, a person's page elsewhere — never a 5xx, never PostgreSQL's words.
//!
//! The REST operations come from the server's own OpenAPI document and the MCP tools from
//! `tools/list`, so that endpoints added later are swept too; the web forms are scraped from
//! the pages that carry them. Headers the server does not decode (a `%00` stays three
//! characters) are sent too: those answers need only be no failure of the server.
//! Also: a URI longer than the server reads is `414` in the API's (and MCP's) shape.

use reqwest::blocking::{Client, RequestBuilder, Response};
use serde_json::{Value, json};

use crate::browser::{self, Browser, hidden};
use crate::cloud::{self, Server};
use crate::pg::TestDb;

/// What no answer may say: PostgreSQL's words for a NUL it refused.
const POSTGRES_WORDS: [&str; 4] = ["invalid byte sequence", "0x00", "22021", "SQLSTATE"];

/// The shape a refusal must have.
#[derive(Clone, Debug)]
enum Shape {
    /// `{"error": {"code": "invalid_input", …}}`.
    Api,
    /// A JSON-RPC error answering `id`.
    Mcp(Value),
    /// `{"error": "invalid_request", "error_description": …}`.
    OAuth,
    /// A person's HTML page.
    Page,
}

/// The answers that were not what they should be.
#[derive(Default)]
struct Sweep {
    checked: usize,
    wrong: Vec<String>,
}

impl Sweep {
    /// `request` (named `what`) must be refused with `400` in `shape`.
    fn refused(&mut self, what: &str, request: RequestBuilder, shape: Shape) {
        self.checked += 1;
        let response = match request.send() {
            Ok(response) => response,
            Err(err) => {
                self.wrong.push(format!("{what}: no answer ({err})"));
                return;
            }
        };
        let status = response.status().as_u16();
        let html = content_type(&response).starts_with("text/html");
        let text = response.text().unwrap_or_default();
        if let Some(word) = POSTGRES_WORDS.iter().find(|w| text.contains(*w)) {
            self.wrong
                .push(format!("{what}: {status} says {word:?}: {}", cut(&text)));
            return;
        }
        if status != 400 {
            self.wrong
                .push(format!("{what}: {status}, not 400: {}", cut(&text)));
            return;
        }
        let body: Value = serde_json::from_str(&text).unwrap_or(Value::Null);
        let shaped = match &shape {
            Shape::Api => {
                body["error"]["code"] == "invalid_input"
                    && ["message", "hint", "retryable"]
                        .iter()
                        .all(|m| !body["error"][m].is_null())
            }
            Shape::Mcp(id) => {
                body["jsonrpc"] == "2.0" && body["id"] == *id && body["error"]["code"].is_i64()
            }
            Shape::OAuth => {
                body["error"] == "invalid_request" && body["error_description"].is_string()
            }
            Shape::Page => html && text.contains("NUL"),
        };
        if !shaped {
            self.wrong
                .push(format!("{what}: not the {shape:?} shape: {}", cut(&text)));
        }
    }

    /// `request` carries a header the server does not decode: no 5xx, no PostgreSQL words.
    fn answered(&mut self, what: &str, request: RequestBuilder) {
        self.checked += 1;
        let response = request.send().unwrap();
        let status = response.status();
        let text = response.text().unwrap_or_default();
        if status.is_server_error() || POSTGRES_WORDS.iter().any(|w| text.contains(w)) {
            self.wrong.push(format!("{what}: {status}: {}", cut(&text)));
        }
    }

    fn assert_clean(&self) {
        assert!(
            self.wrong.is_empty(),
            "{} of {} answers are wrong:\n{}",
            self.wrong.len(),
            self.checked,
            self.wrong.join("\n")
        );
    }
}

fn content_type(response: &Response) -> String {
    response
        .headers()
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_string()
}

fn cut(text: &str) -> String {
    text.chars().take(300).collect()
}

/// `acme` (its first token) with Owen its owner, tickets TASK-1 and TASK-2, and a server.
fn world() -> (TestDb, Server, String) {
    let db = TestDb::new();
    let token = browser::workspace(&db, "acme");
    browser::person(&db, "owen@example.com", "Owen", "acme", "owner");
    let server = Server::start(&db, &[]);
    for title in ["one", "two"] {
        let (status, made) = browser::api(
            &server,
            &token,
            reqwest::Method::POST,
            "/tickets",
            Some(&json!({ "title": title }).to_string()),
        );
        assert_eq!(status, 201, "{made}");
    }
    (db, server, token)
}

// ---- values from schemas ----

/// The schema `$ref` points at, else `schema`.
fn resolve<'a>(schema: &'a Value, document: &'a Value) -> &'a Value {
    match schema["$ref"].as_str() {
        Some(path) => {
            let pointer = path.trim_start_matches('#');
            document.pointer(pointer).unwrap_or(&Value::Null)
        }
        None => schema,
    }
}

/// A value of `schema` with every property filled (strings `"x"`).
fn example(schema: &Value, document: &Value, depth: usize) -> Value {
    let schema = resolve(schema, document);
    if depth > 6 {
        return json!("x");
    }
    if let Some(first) = schema["enum"].as_array().and_then(|e| e.first()) {
        return first.clone();
    }
    for choice in ["oneOf", "anyOf", "allOf"] {
        if let Some(variants) = schema[choice].as_array()
            && let Some(variant) = variants
                .iter()
                .find(|v| resolve(v, document)["type"] != "null")
        {
            return example(variant, document, depth + 1);
        }
    }
    let kind = match &schema["type"] {
        Value::Array(kinds) => kinds
            .iter()
            .find(|k| *k != "null")
            .and_then(Value::as_str)
            .unwrap_or("string"),
        Value::String(kind) => kind.as_str(),
        _ if schema["properties"].is_object() => "object",
        _ => "string",
    };
    match kind {
        "integer" | "number" => json!(1),
        "boolean" => json!(true),
        "array" => json!([example(&schema["items"], document, depth + 1)]),
        "object" => {
            let mut out = serde_json::Map::new();
            if let Some(properties) = schema["properties"].as_object() {
                for (name, property) in properties {
                    out.insert(name.clone(), example(property, document, depth + 1));
                }
            }
            Value::Object(out)
        }
        _ => json!("x"),
    }
}

/// The JSON pointers of every string in `value`.
fn strings(value: &Value, at: &str, out: &mut Vec<String>) {
    match value {
        Value::String(_) => out.push(at.to_string()),
        Value::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                strings(item, &format!("{at}/{i}"), out);
            }
        }
        Value::Object(members) => {
            for (name, member) in members {
                strings(member, &format!("{at}/{name}"), out);
            }
        }
        _ => {}
    }
}

/// Every variant of `value` with a NUL in one of its strings, and one with a NUL in a
/// member name (when it is an object): (where, the variant).
fn nul_variants(value: &Value) -> Vec<(String, Value)> {
    let mut pointers = Vec::new();
    strings(value, "", &mut pointers);
    let mut out: Vec<(String, Value)> = pointers
        .into_iter()
        .map(|pointer| {
            let mut variant = value.clone();
            if let Some(Value::String(text)) = variant.pointer_mut(&pointer) {
                text.push('\0');
                text.push_str("after");
            }
            (pointer, variant)
        })
        .collect();
    if let Value::Object(members) = value {
        let mut variant = members.clone();
        variant.insert("na\0me".into(), json!("x"));
        out.push(("a member name".into(), Value::Object(variant)));
    }
    out
}

// ---- the sweeps ----

/// The value a path parameter of the OpenAPI document gets.
fn path_value(name: &str) -> &'static str {
    match name {
        "ticket_id" => "TASK-1",
        "depends_on" => "TASK-2",
        "template" => "bug",
        _ => "1",
    }
}

#[test]
fn nul_in_every_rest_operation_is_the_envelope() {
    let (_db, server, token) = world();
    let http = cloud::client();
    let document: Value = http
        .get(format!("{}/openapi.json", server.url))
        .send()
        .unwrap()
        .json()
        .unwrap();
    let paths = document["paths"].as_object().unwrap();
    assert!(paths.len() > 20, "the document lists the operations");
    let mut sweep = Sweep::default();
    let mut operations = 0;
    for (template, methods) in paths {
        for (method, operation) in methods.as_object().unwrap() {
            let Ok(method) = method.to_uppercase().parse::<reqwest::Method>() else {
                continue;
            };
            operations += 1;
            let parameters = operation["parameters"]
                .as_array()
                .cloned()
                .unwrap_or_default();
            let of = |place: &str| -> Vec<String> {
                parameters
                    .iter()
                    .map(|p| resolve(p, &document))
                    .filter(|p| p["in"] == place)
                    .filter_map(|p| p["name"].as_str().map(String::from))
                    .collect()
            };
            let path_params = of("path");
            let fill = |nul_in: Option<&str>| {
                let mut path = template.clone();
                for name in &path_params {
                    let mut value = path_value(name).to_string();
                    if nul_in == Some(name.as_str()) {
                        value.push_str("%00");
                    }
                    path = path.replace(&format!("{{{name}}}"), &value);
                }
                format!("{}{path}", server.url)
            };
            let send = |url: String| {
                let key = uuid_like(&url);
                http.request(method.clone(), url)
                    .bearer_auth(&token)
                    .header("idempotency-key", key)
            };
            let name = format!("{method} {template}");
            for param in &path_params {
                sweep.refused(
                    &format!("{name}: path parameter {param}"),
                    send(fill(Some(param))),
                    Shape::Api,
                );
            }
            let mut queries = of("query");
            queries.push("unknown".into());
            for param in &queries {
                sweep.refused(
                    &format!("{name}: query parameter {param}"),
                    send(format!("{}?{param}=x%00y", fill(None))),
                    Shape::Api,
                );
            }
            sweep.refused(
                &format!("{name}: a query parameter's name"),
                send(format!("{}?a%00b=1", fill(None))),
                Shape::Api,
            );
            let Some(schema) = operation
                .pointer("/requestBody/content/application~1json/schema")
                .cloned()
            else {
                continue;
            };
            let body = example(&schema, &document, 0);
            for (at, variant) in nul_variants(&body) {
                sweep.refused(
                    &format!("{name}: body {at}"),
                    send(fill(None))
                        .header("content-type", "application/json")
                        .body(variant.to_string()),
                    Shape::Api,
                );
            }
            // The same field, sent with a content type that is not JSON (the API reads
            // JSON whatever the header says), and a raw NUL byte.
            if let Some((at, variant)) = nul_variants(&body).into_iter().next() {
                sweep.refused(
                    &format!("{name}: body {at} as text/plain"),
                    send(fill(None))
                        .header("content-type", "text/plain")
                        .body(variant.to_string()),
                    Shape::Api,
                );
            }
            let mut raw = body.to_string().into_bytes();
            raw.insert(raw.len() - 1, 0);
            sweep.refused(
                &format!("{name}: a raw NUL byte in the body"),
                send(fill(None))
                    .header("content-type", "application/json")
                    .body(raw),
                Shape::Api,
            );
        }
    }
    assert!(operations > 25, "{operations} operations");
    assert!(sweep.checked > 100, "{} requests", sweep.checked);
    // Headers the API reads, with a `%00` it does not decode: no failure of the server.
    for (header, value) in [
        ("idempotency-key", "key%00"),
        ("cookie", "jility_session=%00"),
        ("origin", "http://127.0.0.1%00"),
    ] {
        sweep.answered(
            &format!("POST /tickets with {header}: {value}"),
            http.post(format!("{}/tickets", server.url))
                .bearer_auth(&token)
                .header(header, value)
                .json(&json!({"title": "headers"})),
        );
    }
    sweep.answered(
        "a token with %00",
        http.get(format!("{}/tickets", server.url))
            .bearer_auth("jil_live_%00"),
    );
    sweep.assert_clean();
}

/// A key per request (the API refuses a key reused with another request).
fn uuid_like(seed: &str) -> String {
    use std::sync::atomic::{AtomicU64, Ordering};
    static NEXT: AtomicU64 = AtomicU64::new(0);
    format!(
        "nul-{}-{}",
        NEXT.fetch_add(1, Ordering::Relaxed),
        seed.len()
    )
}

/// A stateless (2026-07-28) MCP call: the request.
fn mcp_call(
    http: &Client,
    server: &Server,
    token: &str,
    id: i64,
    method: &str,
    mut params: Value,
) -> RequestBuilder {
    params["_meta"] = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": {"name": "nul-sweep", "version": "0"},
        "io.modelcontextprotocol/clientCapabilities": {}
    });
    let body = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
    let mut request = http
        .post(format!("{}/mcp", server.root()))
        .header("accept", "application/json, text/event-stream")
        .header("content-type", "application/json")
        .header("MCP-Protocol-Version", "2026-07-28")
        .header("Mcp-Method", method)
        .bearer_auth(token);
    // (A header cannot carry a NUL: a name holding one goes in the body only.)
    if let Some(name) = params["name"].as_str().filter(|n| !n.contains('\0')) {
        request = request.header("Mcp-Name", name);
    }
    request.body(body.to_string())
}

#[test]
fn nul_in_every_mcp_tool_argument_is_a_json_rpc_error() {
    let (_db, server, token) = world();
    let http = cloud::client();
    let listed = mcp_call(&http, &server, &token, 1, "tools/list", json!({}))
        .send()
        .unwrap();
    assert_eq!(listed.status().as_u16(), 200);
    let text = listed.text().unwrap();
    let listed: Value = serde_json::from_str(&text).unwrap_or_else(|_| {
        text.lines()
            .filter_map(|l| l.strip_prefix("data:"))
            .find_map(|d| serde_json::from_str(d.trim()).ok())
            .unwrap()
    });
    let tools = listed["result"]["tools"].as_array().unwrap().clone();
    assert!(tools.len() > 10, "{listed}");
    let mut sweep = Sweep::default();
    let mut id = 100;
    for tool in &tools {
        let name = tool["name"].as_str().unwrap();
        let arguments = example(&tool["inputSchema"], &tool["inputSchema"], 0);
        for (at, variant) in nul_variants(&arguments) {
            id += 1;
            sweep.refused(
                &format!("tools/call {name}: arguments {at}"),
                mcp_call(
                    &http,
                    &server,
                    &token,
                    id,
                    "tools/call",
                    json!({"name": name, "arguments": variant}),
                ),
                Shape::Mcp(json!(id)),
            );
        }
        id += 1;
        sweep.refused(
            &format!("tools/call with the tool's name {name} and a NUL"),
            mcp_call(
                &http,
                &server,
                &token,
                id,
                "tools/call",
                json!({"name": format!("{name}\0"), "arguments": arguments}),
            ),
            Shape::Mcp(json!(id)),
        );
    }
    sweep.refused(
        "a NUL in /mcp's query",
        http.post(format!("{}/mcp?x=%00", server.root()))
            .bearer_auth(&token)
            .header("content-type", "application/json")
            .body(json!({"jsonrpc": "2.0", "id": 5, "method": "ping"}).to_string()),
        Shape::Mcp(Value::Null),
    );
    sweep.assert_clean();
}

/// Every form of `page` (its HTML): the action and the fields with their values (hidden
/// ones as given, the others `"x"`; checkboxes and selects their first value).
fn forms(page: &str) -> Vec<(String, Vec<(String, String)>)> {
    let mut out = Vec::new();
    let mut rest = page;
    while let Some(at) = rest.find("<form") {
        rest = &rest[at..];
        let end = rest.find("</form>").unwrap_or(rest.len());
        let form = &rest[..end];
        rest = &rest[end..];
        let tag = &form[..form.find('>').unwrap_or(form.len())];
        if !tag.contains("method=\"post\"") {
            continue;
        }
        let Some(action) = attribute(tag, "action") else {
            continue;
        };
        let mut fields: Vec<(String, String)> = Vec::new();
        let mut inner = form;
        while let Some(at) = inner.find("name=\"") {
            let element_start = inner[..at].rfind('<').unwrap_or(0);
            let element_end = inner[at..].find('>').map_or(inner.len(), |e| at + e);
            let element = &inner[element_start..element_end];
            inner = &inner[element_end..];
            let Some(name) = attribute(element, "name") else {
                continue;
            };
            if element.starts_with("<meta") || fields.iter().any(|(n, _)| *n == name) {
                continue;
            }
            let value = if element.starts_with("<select") {
                inner
                    .find("<option")
                    .and_then(|o| attribute(&inner[o..], "value"))
                    .unwrap_or_else(|| "x".into())
            } else {
                attribute(element, "value").unwrap_or_else(|| "x".into())
            };
            fields.push((name, value));
        }
        out.push((action.replace("&amp;", "&"), fields));
    }
    out
}

fn attribute(element: &str, name: &str) -> Option<String> {
    let marker = format!(" {name}=\"");
    let start = element.find(&marker)? + marker.len();
    Some(element[start..].split('"').next()?.to_string())
}

/// POST `fields` as a form to `action` from the site's page, with a NUL in `field`.
fn post_with_nul(
    browser: &Browser,
    action: &str,
    fields: &[(String, String)],
    field: &str,
) -> RequestBuilder {
    let pairs: Vec<(&str, String)> = fields
        .iter()
        .map(|(name, value)| {
            let value = if name == field {
                format!("{value}\0after")
            } else {
                value.clone()
            };
            (name.as_str(), value)
        })
        .collect();
    browser
        .client
        .post(format!("{}{action}", browser.base))
        .header("cookie", browser.cookie_header())
        .header("origin", &browser.base)
        .form(&pairs)
}

/// Sweep every field of every form on `page_path` (as `browser` sees it), and a field the
/// forms do not have.
fn sweep_forms(sweep: &mut Sweep, browser: &mut Browser, page_path: &str) -> usize {
    let (status, page) = browser.get(page_path);
    assert_eq!(status, 200, "{page_path}: {page}");
    let found = forms(&page);
    for (action, fields) in &found {
        let mut names: Vec<String> = fields.iter().map(|(n, _)| n.clone()).collect();
        let mut with_extra = fields.clone();
        with_extra.push(("extra".into(), "x".into()));
        names.push("extra".into());
        for name in &names {
            sweep.refused(
                &format!("{page_path}: form {action}, field {name}"),
                post_with_nul(browser, action, &with_extra, name),
                Shape::Page,
            );
        }
        sweep.refused(
            &format!("{page_path}: form {action}, a field's name"),
            post_with_nul(
                browser,
                action,
                &[fields.clone(), vec![("na\0me".into(), "x".into())]].concat(),
                "",
            ),
            Shape::Page,
        );
    }
    found.len()
}

#[test]
fn nul_in_every_web_form_and_page_query_is_a_persons_page() {
    let (db, server, _token) = world();
    let mut sweep = Sweep::default();
    // Before a session: sign-in, an invite, a reset.
    let mut visitor = Browser::new(&server);
    assert!(sweep_forms(&mut sweep, &mut visitor, "/login") >= 1);
    let invited = browser::admin(
        &db,
        &["invite", "--workspace", "acme", "--role", "member"],
        None,
    );
    let invite = invited["link"]["link"].as_str().unwrap().to_string();
    assert!(invite.starts_with("/invite/"), "{invited}");
    assert!(sweep_forms(&mut sweep, &mut visitor, &invite) >= 1);
    let reset = browser::admin(
        &db,
        &["reset-password", "--email", "owen@example.com"],
        None,
    );
    let reset = find_string(&reset, "/reset/").unwrap_or_else(|| panic!("{reset}"));
    assert!(sweep_forms(&mut sweep, &mut visitor, &reset) >= 1);
    sweep.refused(
        "the invite's secret with a NUL",
        visitor.client.get(format!("{}{invite}%00", visitor.base)),
        Shape::Page,
    );
    sweep.refused(
        "GET /login?next=%00",
        visitor
            .client
            .get(format!("{}/login?next=/w%00", visitor.base)),
        Shape::Page,
    );
    // Signed in: the board's and the ticket's forms, settings, tokens.
    let mut owen = Browser::signed_in(&server, "owen@example.com");
    let mut forms_seen = 0;
    for page in [
        "/w/acme/board",
        "/w/acme/tickets/TASK-1",
        "/w/acme/settings",
        "/w/acme/settings/tokens",
        "/w/acme/settings/clients",
    ] {
        forms_seen += sweep_forms(&mut sweep, &mut owen, page);
    }
    assert!(forms_seen >= 8, "{forms_seen} forms");
    for path in [
        "/w/acme/board?assignee=x%00",
        "/w/acme/list?status=todo%00",
        "/w/acme/search?q=x%00",
        "/w/acme/settings/audit?cursor=%00",
        "/w/ac%00me/board",
        "/w/acme/tickets/TASK-1%00",
    ] {
        sweep.refused(
            &format!("GET {path}"),
            owen.client
                .get(format!("{}{path}", owen.base))
                .header("cookie", owen.cookie_header()),
            Shape::Page,
        );
    }
    // The page script's forms ask for JSON: the envelope of the web app.
    let csrf = owen.csrf("acme");
    let answer = owen
        .client
        .post(format!("{}/w/acme/tickets/TASK-1/comments", owen.base))
        .header("cookie", owen.cookie_header())
        .header("origin", &owen.base)
        .header("accept", "application/json")
        .form(&[("_csrf", csrf.as_str()), ("content", "a\0b")])
        .send()
        .unwrap();
    assert_eq!(answer.status().as_u16(), 400);
    let body: Value = answer.json().unwrap();
    assert_eq!(body["error"]["code"], "invalid_input", "{body}");
    // Cookies with a `%00` (not decoded): no failure.
    sweep.answered(
        "a session cookie of %00",
        visitor
            .client
            .get(format!("{}/w/acme/board", visitor.base))
            .header("cookie", "jility_session=%00; jility_csrf=%00"),
    );
    sweep.assert_clean();
}

fn find_string(value: &Value, prefix: &str) -> Option<String> {
    match value {
        Value::String(text) => text.find(prefix).map(|at| {
            text[at..]
                .split_whitespace()
                .next()
                .unwrap_or("")
                .to_string()
        }),
        Value::Array(items) => items.iter().find_map(|v| find_string(v, prefix)),
        Value::Object(members) => members.values().find_map(|v| find_string(v, prefix)),
        _ => None,
    }
}

const REDIRECT: &str = "http://127.0.0.1:47011/callback";

#[test]
fn nul_at_the_oauth_endpoints_is_refused_in_their_shapes() {
    let (_db, server, _token) = world();
    let http = cloud::client();
    let base = server.root().to_string();
    let mut sweep = Sweep::default();
    // Registration (JSON): every member.
    let registration = json!({
        "redirect_uris": [REDIRECT],
        "client_name": "Agent",
        "client_uri": "https://agent.example.com",
        "token_endpoint_auth_method": "none",
        "grant_types": ["authorization_code", "refresh_token"],
        "response_types": ["code"],
        "scope": "tickets:read",
    });
    for (at, variant) in nul_variants(&registration) {
        sweep.refused(
            &format!("POST /oauth/register: {at}"),
            http.post(format!("{base}/oauth/register")).json(&variant),
            Shape::OAuth,
        );
    }
    let made: Value = http
        .post(format!("{base}/oauth/register"))
        .json(&registration)
        .send()
        .unwrap()
        .json()
        .unwrap();
    let client_id = made["client_id"].as_str().unwrap().to_string();
    // The token and revocation endpoints (forms): every field.
    let token_form = [
        ("grant_type", "authorization_code"),
        ("code", "c"),
        ("client_id", client_id.as_str()),
        ("redirect_uri", REDIRECT),
        ("code_verifier", "v"),
        ("refresh_token", "r"),
        ("resource", "http://127.0.0.1/mcp"),
        ("scope", "tickets:read"),
    ];
    for endpoint in ["/oauth/token", "/oauth/revoke"] {
        let form: Vec<(String, String)> = if endpoint == "/oauth/revoke" {
            vec![
                ("token".into(), "t".into()),
                ("client_id".into(), client_id.clone()),
                ("token_type_hint".into(), "refresh_token".into()),
            ]
        } else {
            token_form
                .iter()
                .map(|(k, v)| ((*k).into(), (*v).into()))
                .collect()
        };
        for (field, _) in &form {
            let pairs: Vec<(&str, String)> = form
                .iter()
                .map(|(k, v)| {
                    let v = if k == field {
                        format!("{v}\0")
                    } else {
                        v.clone()
                    };
                    (k.as_str(), v)
                })
                .collect();
            sweep.refused(
                &format!("POST {endpoint}: {field}"),
                http.post(format!("{base}{endpoint}")).form(&pairs),
                Shape::OAuth,
            );
        }
    }
    // The consent page (a person's page), signed out and signed in, every parameter.
    let verifier = "v".repeat(50);
    let challenge = {
        use base64::Engine as _;
        use sha2::Digest as _;
        base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(sha2::Sha256::digest(&verifier))
    };
    let params = vec![
        ("response_type".to_string(), "code".to_string()),
        ("client_id".into(), client_id.clone()),
        ("redirect_uri".into(), REDIRECT.into()),
        ("state".into(), "st".into()),
        ("code_challenge".into(), challenge),
        ("code_challenge_method".into(), "S256".into()),
        ("scope".into(), "tickets:read".into()),
        ("resource".into(), format!("{base}/mcp")),
        ("workspace".into(), "acme".into()),
    ];
    let query = |nul_in: &str| {
        form_urlencoded::Serializer::new(String::new())
            .extend_pairs(params.iter().map(|(k, v)| {
                let v = if k == nul_in {
                    format!("{v}\0")
                } else {
                    v.clone()
                };
                (k.clone(), v)
            }))
            .finish()
    };
    let mut owen = Browser::signed_in(&server, "owen@example.com");
    for (name, _) in &params {
        sweep.refused(
            &format!("GET /oauth/authorize signed out: {name}"),
            http.get(format!("{base}/oauth/authorize?{}", query(name))),
            Shape::Page,
        );
        sweep.refused(
            &format!("GET /oauth/authorize signed in: {name}"),
            owen.client
                .get(format!("{base}/oauth/authorize?{}", query(name)))
                .header("cookie", owen.cookie_header()),
            Shape::Page,
        );
    }
    let (status, page) = owen.get(&format!("/oauth/authorize?{}", query("")));
    assert_eq!(status, 200, "{page}");
    let mut fields = params.clone();
    fields.push(("_csrf".into(), hidden(&page, "_csrf")));
    fields.push(("decision".into(), "approve".into()));
    fields.push(("grant".into(), "tickets:read".into()));
    for (name, _) in fields.clone() {
        sweep.refused(
            &format!("POST /oauth/authorize: {name}"),
            post_with_nul(&owen, "/oauth/authorize", &fields, &name),
            Shape::Page,
        );
    }
    sweep.assert_clean();
}

/// A GET of `target` on a connection of its own, written by hand (no HTTP client builds a
/// URI this long): the status, the content type and the body.
fn raw_get(server: &Server, target: &str) -> (u16, String, String) {
    use std::io::{Read as _, Write as _};
    let address = server.root().trim_start_matches("http://");
    let mut stream = std::net::TcpStream::connect(address).unwrap();
    stream
        .set_read_timeout(Some(std::time::Duration::from_secs(30)))
        .unwrap();
    write!(
        stream,
        "GET {target} HTTP/1.1\r\nHost: {address}\r\nAccept: application/json\r\n\r\n"
    )
    .unwrap();
    let mut answer = Vec::new();
    let _ = stream.read_to_end(&mut answer);
    let answer = String::from_utf8_lossy(&answer).to_string();
    let (head, body) = answer.split_once("\r\n\r\n").unwrap_or((&answer, ""));
    let status = head
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    let content_type = head
        .lines()
        .find_map(|l| {
            l.to_ascii_lowercase()
                .strip_prefix("content-type: ")
                .map(String::from)
        })
        .unwrap_or_default();
    (status, content_type, body.to_string())
}

#[test]
fn a_uri_too_long_for_the_server_is_answered_in_the_paths_shape() {
    let (_db, server, token) = world();
    let long = "a".repeat(70_000);
    let (status, content_type, body) = raw_get(&server, &format!("/api/v1/tickets?label={long}"));
    assert_eq!(status, 414, "{}", cut(&body));
    assert_eq!(content_type, "application/json");
    let body: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(body["error"]["code"], "invalid_input", "{body}");
    assert!(!body["error"]["hint"].is_null(), "{body}");
    let (status, _, body) = raw_get(&server, &format!("/mcp?x={long}"));
    assert_eq!(status, 414, "{}", cut(&body));
    let body: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(body["jsonrpc"], "2.0", "{body}");
    assert_eq!(body["error"]["code"], -32600, "{body}");
    // OAuth's JSON endpoints: RFC 6749's error; a person's path: a page.
    let (status, content_type, body) = raw_get(&server, &format!("/oauth/token?x={long}"));
    assert_eq!((status, content_type.as_str()), (414, "application/json"));
    let body: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(body["error"], "invalid_request", "{body}");
    let (status, content_type, body) = raw_get(&server, &format!("/w/acme/board?q={long}"));
    assert_eq!(status, 414, "{}", cut(&body));
    assert!(content_type.starts_with("text/html"), "{content_type}");
    assert!(body.contains("This address is too long"), "{}", cut(&body));
    // On a kept-alive connection, after an answer: the request's own start is read.
    {
        use std::io::{BufRead as _, BufReader, Read as _, Write as _};
        let address = server.root().trim_start_matches("http://").to_string();
        let mut stream = std::net::TcpStream::connect(&address).unwrap();
        stream
            .set_read_timeout(Some(std::time::Duration::from_secs(30)))
            .unwrap();
        write!(
            stream,
            "GET /api/v1/whoami HTTP/1.1\r\nHost: {address}\r\n\r\n"
        )
        .unwrap();
        let mut reader = BufReader::new(stream.try_clone().unwrap());
        let mut length = 0;
        loop {
            let mut line = String::new();
            reader.read_line(&mut line).unwrap();
            if let Some(value) = line.to_ascii_lowercase().strip_prefix("content-length:") {
                length = value.trim().parse().unwrap();
            }
            if line == "\r\n" {
                break;
            }
        }
        let mut first = vec![0; length];
        reader.read_exact(&mut first).unwrap();
        write!(
            stream,
            "GET /api/v1/tickets?q={long} HTTP/1.1\r\nHost: {address}\r\n\r\n"
        )
        .unwrap();
        let mut rest = String::new();
        let _ = reader.read_to_string(&mut rest);
        assert!(rest.starts_with("HTTP/1.1 414 "), "{}", cut(&rest));
        assert!(rest.contains("\"invalid_input\""), "{}", cut(&rest));
    }
    // The absolute form names the same path.
    let address = server.root().to_string();
    let (status, content_type, _) = raw_get(&server, &format!("{address}/api/v1/x?{long}"));
    assert_eq!((status, content_type.as_str()), (414, "application/json"));
    // The server still answers, and a URI within the limit is the route's.
    let (status, _) = browser::api(&server, &token, reqwest::Method::GET, "/tickets", None);
    assert_eq!(status, 200);
    let within = "a".repeat(60_000);
    let answer = cloud::client()
        .get(format!("{}/tickets?label={within}", server.url))
        .bearer_auth(&token)
        .send()
        .unwrap();
    assert_ne!(answer.status().as_u16(), 414);
}
