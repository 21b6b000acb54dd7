//! `duvet mcp` through the built binary and rmcp's client, on small real projects.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // assertions in tests

use crate::support;

use std::time::Duration;

use duvet::errors;
use serde_json::{Value, json};
use support::*;

const ACCEPT: &str = "A coffee pot server MUST accept both the BREW and POST method equivalently.";
const TRADEMARK: &str =
    "However, POST MAY be a trademark for coffee, and so the BREW method has been added.";
const CLIENTS: &str = "Clients SHOULD send BREW rather than GET to start brewing.";
const IDENTIFY: &str = "A client MUST identify the pot.";
const QUICKLY: &str = "The server SHOULD respond quickly.";
const BEANS: &str = "Payments MAY be made in beans.";
const REFUNDS: &str = "Refunds MUST NOT be issued.";
/// The coffee project's uncited requirements.
/// Not cited as `duvet report --ci` counts it (TRADEMARK's exception cites it).
const UNCITED: [&str; 2] = [IDENTIFY, QUICKLY];

/// The identifier of a requirement of the coffee project: the hash of its place and text.
fn id(text: &str) -> String {
    let place = match text {
        ACCEPT | TRADEMARK => "www.rfc-editor.org/rfc/rfc2324.txt#section-2.1.1",
        CLIENTS => "www.rfc-editor.org/rfc/rfc2324.txt#section-2.1.2",
        IDENTIFY | QUICKLY => "specs/coffee.md#ordering",
        BEANS | "Payments MAY be made" => "specs/coffee.md#payment",
        REFUNDS => "specs/coffee.md#payment-1",
        other => panic!("no place for {other}"),
    };
    req_id(place, text)
}

fn texts(list: &Value) -> Vec<String> {
    list.as_array()
        .unwrap()
        .iter()
        .map(|r| r["text"].as_str().unwrap().to_string())
        .collect()
}

#[tokio::test]
async fn handshake_and_system_prompt() {
    let p = coffee_project();
    let mcp = p.start(&[]).await;
    let info = mcp.server_info();
    assert_eq!(info.server_info.as_ref().unwrap().name, "duvet");
    let instructions = info.instructions.unwrap();
    assert!(instructions.starts_with("You are interacting with the Duvet MCP server"));
    assert!(instructions.contains("### Available Tools"));
    let prompts = mcp.peer().list_all_prompts().await.unwrap();
    assert_eq!(prompts.len(), 1);
    let text = mcp.prompt_text(&prompts[0].name, json!({})).await;
    assert_eq!(text, instructions);

    let tools: Vec<String> = mcp
        .tools()
        .await
        .into_iter()
        .map(|t| t.name.to_string())
        .collect();
    assert_eq!(
        tools,
        [
            "get_citation_context",
            "get_prioritized_requirements",
            "get_requirement_status",
            "list_duplicate_citations",
            "list_invalid_citations",
            "list_unattached_citations",
            "list_uncited_requirements",
            "list_untested_citations",
            "resolve_spec_id",
            "search_requirements",
            "validate_citation",
        ]
    );
}

/// Any change to what clients see of the tools must be deliberate: regenerate with
/// `UPDATE_SNAPSHOTS=1 cargo test -p duvet --test duvet mcp::`.
#[tokio::test]
async fn tool_list_matches_the_snapshot() {
    let p = Project::new();
    let mcp = p.start(&[]).await;
    for tool in mcp.tools().await {
        let annotations = tool.annotations.as_ref().expect("annotations");
        assert_eq!(annotations.read_only_hint, Some(true), "{}", tool.name);
        let schema = tool.output_schema.as_ref().expect("outputSchema");
        assert_eq!(schema.get("type"), Some(&json!("object")), "{}", tool.name);
    }
    mcp.assert_tools_snapshot(
        &std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/snapshots/tools.json"),
    )
    .await;
}

#[tokio::test]
async fn statuses_follow_how_much_text_the_annotations_cover() {
    let p = coffee_project();
    let mcp = p.start(&[]).await;
    let status = |text: &str| json!({"req_identifier": id(text)});

    let s: Value = mcp.call_ok("get_requirement_status", status(ACCEPT)).await;
    assert_eq!(s["status"], "fully_implemented");
    assert_eq!(s["level"], "MUST");
    assert_eq!(s["cited"], true);
    assert_eq!(s["tested"], false);
    assert_eq!(s["citation_count"], 1, "invalid citations do not count");
    assert_eq!(
        s["full_path"],
        format!(
            "/specifications/rfc2324/sections/section-2.1.1/requirements/{}",
            id(ACCEPT)
        )
    );

    let s: Value = mcp
        .call_ok("get_requirement_status", status(TRADEMARK))
        .await;
    assert_eq!(
        s["status"], "fully_implemented",
        "an exception accounts for it"
    );
    assert_eq!(s["exception"], "We do not brew trademarks.");
    // duvet's CI check counts an exception as a citation ("mark exceptions as fully covered").
    assert_eq!(s["cited"], true);
    assert_eq!(s["level"], "MAY");

    // Implemented in part, tested in full: as duvet 0.4.3 counts it, the test covers the rest.
    let s: Value = mcp.call_ok("get_requirement_status", status(CLIENTS)).await;
    assert_eq!(s["status"], "fully_implemented");
    assert_eq!(s["cited"], true);
    assert_eq!(s["tested"], true);
    assert_eq!(s["citation_count"], 2);

    let s: Value = mcp.call_ok("get_requirement_status", status(QUICKLY)).await;
    assert_eq!(s["status"], "not_started");
    assert_eq!(s["todo_count"], 1);

    // Within one edit ("beens"), and after whitespace normalization.
    for text in [BEANS, REFUNDS] {
        let s: Value = mcp.call_ok("get_requirement_status", status(text)).await;
        assert_eq!(s["status"], "fully_implemented", "{text}");
    }

    // A unique prefix works; unknown and malformed identifiers are errors.
    let s: Value = mcp
        .call_ok(
            "get_requirement_status",
            json!({"req_identifier": &id(IDENTIFY)[..10]}),
        )
        .await;
    assert_eq!(s["status"], "not_started");
    // So does the identifier of earlier versions (the hash of the text alone) while one
    // requirement has the text; the answer gives the current identifier.
    let s: Value = mcp
        .call_ok(
            "get_requirement_status",
            json!({"req_identifier": text_hash(IDENTIFY)}),
        )
        .await;
    assert_eq!(s["identifier"], id(IDENTIFY));
    let err = mcp
        .call_err(
            "get_requirement_status",
            json!({"req_identifier": "0123456789abcdef"}),
        )
        .await;
    assert_eq!(err.code, errors::NOT_FOUND);
    let err = mcp
        .call_err(
            "get_requirement_status",
            json!({"req_identifier": "not-hex"}),
        )
        .await;
    assert_eq!(err.code, errors::INVALID_PARAMS);
}

#[tokio::test]
async fn uncited_invalid_and_prioritized_lists() {
    let p = coffee_project();
    let mcp = p.start(&[]).await;

    // Uncited: no implementation, implication or exception quotes them (QUICKLY has a TODO,
    // which does not cite; TRADEMARK's exception does).
    let uncited: Value = mcp.call_ok("list_uncited_requirements", json!({})).await;
    assert_eq!(texts(&uncited), UNCITED);
    assert_eq!(
        uncited[0]["full_path"],
        format!(
            "/specifications/coffee/sections/ordering/requirements/{}",
            id(IDENTIFY)
        )
    );

    let invalid: Value = mcp.call_ok("list_invalid_citations", json!({})).await;
    let rows: Vec<(String, u64, String)> = invalid
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            (
                c["file_path"].as_str().unwrap().to_string(),
                c["line_number"].as_u64().unwrap(),
                c["error"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    assert_eq!(rows.len(), 4, "{rows:#?}");
    assert_eq!((rows[0].0.as_str(), rows[0].1), ("src/invalid.rs", 1));
    assert!(rows[0].2.starts_with("Section not found"), "{}", rows[0].2);
    assert_eq!(rows[1].1, 4);
    assert!(
        rows[1]
            .2
            .contains(".duvet/specifications/www.rfc-editor.org/rfc/rfc9999.txt"),
        "names the file it expected: {}",
        rows[1].2
    );
    assert_eq!(rows[2].1, 7);
    assert!(rows[2].2.starts_with("Quote not found"), "{}", rows[2].2);
    assert_eq!(rows[3].1, 11, "the line of the bad key");
    assert!(
        rows[3].2.starts_with("Malformed annotation"),
        "{}",
        rows[3].2
    );
    assert_eq!(
        invalid[0]["comment_text"].as_str().unwrap().lines().next(),
        Some("//= https://www.rfc-editor.org/rfc/rfc2324#section-9.9")
    );

    let prioritized: Value = mcp.call_ok("get_prioritized_requirements", json!({})).await;
    let order: Vec<(String, String, u64)> = prioritized
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["level"].as_str().unwrap().to_string(),
                r["status"].as_str().unwrap().to_string(),
                r["todo_count"].as_u64().unwrap(),
            )
        })
        .collect();
    let expected: Vec<(String, String, u64)> = [
        ("MUST", "not_started", 0),
        ("MUST", "fully_implemented", 0),
        ("MUST", "fully_implemented", 0),
        ("SHOULD", "not_started", 1),
        ("SHOULD", "fully_implemented", 0),
        ("MAY", "fully_implemented", 0),
        ("MAY", "fully_implemented", 0),
    ]
    .iter()
    .map(|(l, s, t)| (l.to_string(), s.to_string(), *t))
    .collect();
    assert_eq!(order, expected);
    assert_eq!(prioritized[0]["identifier"], id(IDENTIFY));

    // Paging: pages of 2 walk the same list.
    let mut walked = Vec::new();
    let mut cursor: Option<String> = None;
    loop {
        let mut args = json!({"limit": 2});
        if let Some(c) = &cursor {
            args["cursor"] = json!(c);
        }
        let (page, info) = mcp
            .call_paged::<Vec<Value>>("get_prioritized_requirements", args)
            .await;
        assert_eq!(info.total, 7);
        assert!(page.len() <= 2);
        walked.extend(page);
        match info.next_cursor {
            Some(next) => cursor = Some(next),
            None => break,
        }
    }
    assert_eq!(Value::Array(walked), prioritized);
    let err = mcp
        .call_err("list_uncited_requirements", json!({"limit": 0}))
        .await;
    assert_eq!(err.code, errors::INVALID_PARAMS);
}

#[tokio::test]
async fn search_and_resolve() {
    let p = coffee_project();
    let mcp = p.start(&[]).await;
    let found: Value = mcp
        .call_ok("search_requirements", json!({"query": "coffee POT"}))
        .await;
    assert_eq!(texts(&found), [ACCEPT]);
    let found: Value = mcp
        .call_ok("search_requirements", json!({"query": "must"}))
        .await;
    assert_eq!(found.as_array().unwrap().len(), 3);
    let err = mcp
        .call_err("search_requirements", json!({"query": "  "}))
        .await;
    assert_eq!(err.code, errors::INVALID_PARAMS);

    for (url, spec) in [
        (RFC2324_URL, "rfc2324"),
        ("http://www.rfc-editor.org/rfc/rfc2324/", "rfc2324"),
        (
            "https://www.rfc-editor.org/rfc/rfc2324#section-2.1",
            "rfc2324",
        ),
        ("specs/coffee.md", "coffee"),
    ] {
        let r: Value = mcp.call_ok("resolve_spec_id", json!({"url": url})).await;
        assert_eq!(r, json!({"spec_id": spec}), "{url}");
    }
    let err = mcp
        .call_err(
            "resolve_spec_id",
            json!({"url": "https://example.com/nope"}),
        )
        .await;
    assert_eq!(err.code, errors::NOT_FOUND);
    assert!(err.hint.contains(RFC2324_URL), "{}", err.hint);
    assert!(!err.retryable);
}

#[tokio::test]
async fn validate_citation_cases() {
    let p = coffee_project();
    let mcp = p.start(&[]).await;
    let check = |citation: &str| json!({"citation": citation});

    let v: Value = mcp
        .call_ok(
            "validate_citation",
            check("//= https://www.rfc-editor.org/rfc/rfc2324#section-2.1.1\n//# A coffee pot server MUST accept"),
        )
        .await;
    assert_eq!(v["valid"], true);
    assert_eq!(v["spec_id"], "rfc2324");
    assert_eq!(v["section_id"], "section-2.1.1");
    assert_eq!(v["requirements"], json!([id(ACCEPT)]));

    let v: Value = mcp
        .call_ok(
            "validate_citation",
            check("https://www.rfc-editor.org/rfc/rfc2324#2.1.2"),
        )
        .await;
    assert_eq!(
        v["valid"], true,
        "a bare target without the section- prefix: {v}"
    );

    for (citation, error) in [
        (
            "//= https://www.rfc-editor.org/rfc/rfc2324#section-9.9",
            "Section not found",
        ),
        (
            "//= https://example.com/spec#section-1",
            "Specification not found",
        ),
        (
            "//= https://www.rfc-editor.org/rfc/rfc2324#section-2.1.1\n//# Not in the text.",
            "Quote not found",
        ),
        (
            "//= https://www.rfc-editor.org/rfc/rfc2324#section-2.1.1\n//# Commands to control a coffee pot are sent",
            "Requirement not found",
        ),
        (
            "//= https://www.rfc-editor.org/rfc/rfc2324#section-2.1.1\n//= type=nonsense\n//# A coffee",
            "Malformed annotation",
        ),
    ] {
        let v: Value = mcp.call_ok("validate_citation", check(citation)).await;
        assert_eq!(v["valid"], false, "{citation}");
        assert!(
            v["error"].as_str().unwrap().starts_with(error),
            "{citation}: {}",
            v["error"]
        );
    }
}

#[tokio::test]
async fn citation_context_is_confined_and_bounded() {
    let p = coffee_project();
    p.write("secret.txt", "do not read\n");
    let mcp = p.start(&[]).await;
    let ctx: Value = mcp
        .call_ok(
            "get_citation_context",
            json!({"citation_id": "src/main.rs:1", "context_lines": 1}),
        )
        .await;
    assert_eq!(ctx["file_path"], "src/main.rs");
    assert_eq!(ctx["line_number"], 1);
    assert_eq!(
        ctx["context"],
        json!([
            "//= https://www.rfc-editor.org/rfc/rfc2324#section-2.1.1",
            "//# A coffee pot server MUST"
        ])
    );
    let ctx: Value = mcp
        .call_ok(
            "get_citation_context",
            json!({"citation_id": "src/tests/brew.rs:2"}),
        )
        .await;
    assert_eq!(
        ctx["context"].as_array().unwrap().len(),
        5,
        "default 3 lines, clipped at 1"
    );
    assert_eq!(ctx["first_line"], 1);

    for bad in [
        "../outside.rs:1",
        "/etc/passwd:1",
        "src/../../etc/passwd:1",
        "secret.txt",
        "src/main.rs:x",
    ] {
        let err = mcp
            .call_err("get_citation_context", json!({"citation_id": bad}))
            .await;
        assert_eq!(err.code, errors::INVALID_PARAMS, "{bad}");
    }
    // Inside the project but not a citation.
    let err = mcp
        .call_err(
            "get_citation_context",
            json!({"citation_id": "secret.txt:1"}),
        )
        .await;
    assert_eq!(err.code, errors::NOT_FOUND);
    let err = mcp
        .call_err(
            "get_citation_context",
            json!({"citation_id": "src/main.rs:1", "context_lines": 51}),
        )
        .await;
    assert_eq!(err.code, errors::INVALID_PARAMS);
}

#[tokio::test]
async fn resource_tree() {
    let p = coffee_project();
    let mcp = p.start(&[]).await;
    let resources = mcp.peer().list_all_resources().await.unwrap();
    let uris: Vec<&str> = resources.iter().map(|r| r.uri.as_str()).collect();
    assert_eq!(
        &uris[..5],
        [
            "duvet:///specifications",
            "duvet:///requirements",
            "duvet:///citations",
            "duvet:///specifications/rfc2324",
            "duvet:///specifications/coffee",
        ]
    );
    let templates = mcp.peer().list_all_resource_templates().await.unwrap();
    assert_eq!(templates.len(), 9);

    let specs = mcp.read_resource_json("duvet:///specifications").await;
    assert_eq!(
        specs[0],
        json!({
            "id": "rfc2324",
            "name": "RFC 2324",
            "url": RFC2324_URL,
            "description": "Hyper Text Coffee Pot Control Protocol (HTCPCP/1.0)",
        })
    );
    assert_eq!(specs[1]["description"], "Coffee Service");
    assert!(specs[2]["error"].as_str().unwrap().contains("rfc9999.txt"));

    let sections = mcp
        .read_resource_json("duvet:///specifications/rfc2324/sections")
        .await;
    let ids: Vec<&str> = sections
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["id"].as_str().unwrap())
        .collect();
    for expected in [
        "section-1",
        "section-2",
        "section-2.1",
        "section-2.1.1",
        "section-2.1.2",
    ] {
        assert!(ids.contains(&expected), "{expected} in {ids:?}");
    }
    let md = mcp
        .read_resource_json("duvet:///specifications/coffee/sections")
        .await;
    let ids: Vec<&str> = md
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, ["coffee-service", "ordering", "payment", "payment-1"]);

    let section = mcp
        .read_resource_json("duvet:///specifications/rfc2324/sections/section-2.1.2")
        .await;
    assert_eq!(section["title"], "The GET method");
    assert!(
        section["content"]
            .as_str()
            .unwrap()
            .contains("Clients SHOULD send")
    );
    assert!(!section["content"].as_str().unwrap().contains("[Page 2]"));

    let reqs = mcp
        .read_resource_json("duvet:///specifications/rfc2324/sections/section-2.1.1/requirements")
        .await;
    assert_eq!(texts(&reqs), [ACCEPT, TRADEMARK]);
    let base = format!(
        "duvet:///specifications/rfc2324/sections/section-2.1.1/requirements/{}",
        id(ACCEPT)
    );
    let req = mcp.read_resource_json(&base).await;
    assert_eq!(req["status"], "fully_implemented");
    assert_eq!(req["text"], ACCEPT);
    let citations = mcp.read_resource_json(&format!("{base}/citations")).await;
    assert_eq!(
        citations,
        json!([{"id": "src/main.rs:1", "type": "implementation"}])
    );
    let citation = mcp
        .read_resource_json(&format!("{base}/citations/src/main.rs:1"))
        .await;
    assert_eq!(citation["file_path"], "src/main.rs");
    assert_eq!(citation["line_number"], 1);
    assert!(
        citation["comment_text"]
            .as_str()
            .unwrap()
            .starts_with("//= https://")
    );
    assert!(citation["context_lines"].as_array().unwrap().len() >= 3);

    let all = mcp.read_resource_json("duvet:///requirements").await;
    assert_eq!(all.as_array().unwrap().len(), 7);
    let citations = mcp.read_resource_json("duvet:///citations").await;
    assert!(
        citations
            .as_array()
            .unwrap()
            .iter()
            .any(|c| c["id"] == "lib/pay.py:1")
    );

    // Paging of large lists: `_meta` says the total and the next page.
    let result = mcp
        .read_resource("duvet:///requirements?limit=3")
        .await
        .unwrap();
    let rmcp::model::ResourceContents::TextResourceContents { text, meta, .. } =
        &result.contents[0]
    else {
        panic!("text expected")
    };
    assert_eq!(
        serde_json::from_str::<Value>(text)
            .unwrap()
            .as_array()
            .unwrap()
            .len(),
        3
    );
    let meta = serde_json::to_value(meta).unwrap();
    assert_eq!(meta["total"], 7);
    let next_cursor = meta["next_cursor"].as_str().unwrap();
    assert_eq!(
        meta["next"],
        format!("duvet:///requirements?cursor={next_cursor}&limit=3")
    );
    let mut walked: Vec<Value> = serde_json::from_str::<Value>(text)
        .unwrap()
        .as_array()
        .unwrap()
        .clone();
    let mut next = meta["next"].as_str().map(String::from);
    while let Some(uri) = next {
        let result = mcp.read_resource(&uri).await.unwrap();
        let rmcp::model::ResourceContents::TextResourceContents { text, meta, .. } =
            &result.contents[0]
        else {
            panic!("text expected")
        };
        let page: Vec<Value> = serde_json::from_str(text).unwrap();
        assert!(page.len() <= 3);
        walked.extend(page);
        let meta = serde_json::to_value(meta).unwrap();
        assert_eq!(meta["total"], 7);
        next = meta["next"].as_str().map(String::from);
    }
    assert_eq!(
        Value::Array(walked),
        all,
        "the pages make up the whole list"
    );

    for bad in [
        "duvet:///nope",
        "duvet:///specifications/nope",
        "duvet:///specifications/rfc2324/sections/section-7",
        "duvet:///requirements?limit=0",
        "duvet:///requirements?limit=5001",
        "duvet:///requirements?offset=3",
        "duvet:///requirements?cursor=bm90IGEgY3Vyc29y",
    ] {
        assert!(mcp.read_resource(bad).await.is_err(), "{bad}");
    }
    // A cursor of one list does not page another.
    let err = mcp
        .read_resource(&format!("duvet:///citations?cursor={next_cursor}"))
        .await
        .unwrap_err();
    assert!(err.contains("different"), "{err}");
}

#[tokio::test]
async fn changes_are_seen_without_a_restart() {
    let p = coffee_project();
    let mcp = p.start(&[]).await;
    let uncited: Value = mcp.call_ok("list_uncited_requirements", json!({})).await;
    assert_eq!(texts(&uncited), UNCITED);

    // Remove the citation of ACCEPT and CLIENTS (tested, no longer cited) and cite IDENTIFY.
    p.write(
        "src/main.rs",
        "//= specs/coffee.md#ordering\n//# A client MUST identify the pot.\nfn order() {}\n",
    );
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    loop {
        let uncited: Value = mcp.call_ok("list_uncited_requirements", json!({})).await;
        // QUICKLY shares IDENTIFY's line: cited with it, as duvet's CI check counts lines.
        if texts(&uncited) == [ACCEPT, CLIENTS] {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "change not seen: {uncited}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    // A new specification text is picked up too.
    p.write("specs/coffee.md", &COFFEE_MD.replace("beans", "coins"));
    loop {
        let found: Value = mcp
            .call_ok("search_requirements", json!({"query": "coins"}))
            .await;
        if found.as_array().unwrap().len() == 1 {
            break;
        }
        assert!(std::time::Instant::now() < deadline, "spec change not seen");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test]
async fn legacy_flag_projects() {
    let p = Project::new();
    p.write("specs/www.rfc-editor.org/rfc/rfc2324.txt", RFC2324_TEXT);
    p.write(
        "reqs/rfc2324/section-2.1.1.toml",
        &format!(
            "target = \"{RFC2324_URL}#section-2.1.1\"\n\n[[spec]]\nlevel = \"MUST\"\nquote = '''\n{ACCEPT}\n'''\n"
        ),
    );
    p.write(
        "src/brew.c",
        "/**\n *= https://www.rfc-editor.org/rfc/rfc2324#section-2.1.1\n *# A coffee pot server MUST accept\n */\nvoid brew(void) {}\n",
    );
    let mcp = p
        .start(&[
            "--spec-pattern",
            "reqs/**/*.toml",
            "--source-pattern",
            "(*=,*#)src/**/*.c",
        ])
        .await;
    let all = mcp.read_resource_json("duvet:///requirements").await;
    assert_eq!(texts(&all), [ACCEPT], "only the listed requirements");
    let s: Value = mcp
        .call_ok(
            "get_requirement_status",
            json!({"req_identifier": id(ACCEPT)}),
        )
        .await;
    assert_eq!(s["status"], "partially_implemented");
    assert_eq!(s["level"], "MUST");
    let ctx: Value = mcp
        .call_ok(
            "get_citation_context",
            json!({"citation_id": "src/brew.c:2", "context_lines": 0}),
        )
        .await;
    assert_eq!(
        ctx["context"],
        json!([" *= https://www.rfc-editor.org/rfc/rfc2324#section-2.1.1"])
    );
}

#[tokio::test]
async fn outside_a_project_every_tool_says_no_project() {
    let p = Project::new();
    let mcp = p.start(&[]).await;
    let err = mcp.call_err("list_uncited_requirements", json!({})).await;
    assert_eq!(err.code, errors::NO_PROJECT);
    assert!(
        err.message.contains(".duvet/config.toml"),
        "{}",
        err.message
    );
    assert!(err.hint.contains("--spec-pattern"), "{}", err.hint);
    assert!(!err.retryable);
    let err = mcp
        .call_err("validate_citation", json!({"citation": "//= x#y"}))
        .await;
    assert_eq!(err.code, errors::NO_PROJECT);
    let err = mcp
        .read_resource("duvet:///specifications")
        .await
        .unwrap_err();
    assert!(
        err.contains("no_project") && err.contains("--source-pattern"),
        "{err}"
    );
    // Bad arguments are still reported as such.
    let err = mcp.call_err("validate_citation", json!({})).await;
    assert_eq!(err.code, errors::INVALID_PARAMS);
}

/// Lists carry `page` beside `data`: the total and where the next page starts.
#[tokio::test]
async fn list_tools_say_when_there_is_more() {
    let p = coffee_project();
    let mcp = p.start(&[]).await;
    let result = mcp
        .call("get_prioritized_requirements", json!({"limit": 3}))
        .await;
    let envelope = result.structured_content.unwrap();
    assert_eq!(envelope["data"].as_array().unwrap().len(), 3);
    let page = envelope["page"].as_object().unwrap();
    assert_eq!(page.len(), 2, "total and next_cursor: {page:?}");
    assert_eq!(page["total"], 7);
    let cursor = page["next_cursor"].as_str().unwrap();
    let result = mcp
        .call(
            "get_prioritized_requirements",
            json!({"limit": 4, "cursor": cursor}),
        )
        .await;
    let envelope = result.structured_content.unwrap();
    assert_eq!(envelope["data"].as_array().unwrap().len(), 4);
    assert_eq!(
        envelope["page"],
        json!({"total": 7}),
        "the last page has no next_cursor"
    );
}

/// `offset` is gone: list tools take `limit` and the opaque `cursor` only, and refuse a
/// cursor that was altered, comes from another tool or another query, or a limit out of
/// range, as invalid_params with a hint.
#[tokio::test]
async fn cursors_are_bound_to_their_query_and_checked() {
    let p = coffee_project();
    // Uncite the payment requirements, so that every list has more than one item.
    p.write("lib/pay.py", "def pay():\n    pass\n");
    let mcp = p.start(&[]).await;
    let lists = [
        ("search_requirements", json!({"query": "must"})),
        ("list_uncited_requirements", json!({})),
        ("list_invalid_citations", json!({})),
        ("get_prioritized_requirements", json!({})),
    ];
    let with = |args: &Value, extra: Value| {
        let mut args = args.clone();
        for (k, v) in extra.as_object().unwrap() {
            args[k] = v.clone();
        }
        args
    };
    let mut cursors = Vec::new();
    for (tool, args) in &lists {
        let (_, page) = mcp
            .call_paged::<Vec<Value>>(tool, with(args, json!({"limit": 1})))
            .await;
        let cursor = page.next_cursor.expect("more than one item");
        // Out-of-range limits.
        for limit in [0, 1001] {
            let err = mcp
                .call_err(tool, with(args, json!({"limit": limit})))
                .await;
            assert_eq!(err.code, errors::INVALID_PARAMS, "{tool} limit {limit}");
            assert!(err.message.contains("limit"), "{tool}: {}", err.message);
            assert!(!err.retryable);
        }
        // A forged cursor, and an altered one.
        let mut altered: Vec<char> = cursor.chars().collect();
        altered[5] = if altered[5] == 'A' { 'B' } else { 'A' };
        let altered: String = altered.into_iter().collect();
        for bad in ["not-a-cursor".to_string(), altered] {
            let err = mcp.call_err(tool, with(args, json!({"cursor": bad}))).await;
            assert_eq!(err.code, errors::INVALID_PARAMS, "{tool} {bad}");
            assert!(err.hint.contains("next_cursor"), "{tool}: {}", err.hint);
        }
        // The old offset is refused, not ignored.
        let err = mcp.call_err(tool, with(args, json!({"offset": 1}))).await;
        assert_eq!(err.code, errors::INVALID_PARAMS, "{tool} offset");
        cursors.push(cursor);
    }
    // A cursor pages only the list it came from.
    for (i, (tool, args)) in lists.iter().enumerate() {
        let foreign = &cursors[(i + 1) % cursors.len()];
        let err = mcp
            .call_err(tool, with(args, json!({"cursor": foreign})))
            .await;
        assert_eq!(err.code, errors::INVALID_PARAMS, "{tool}");
        assert!(err.message.contains("different"), "{tool}: {}", err.message);
    }
    // search_requirements' cursor is bound to its query.
    let err = mcp
        .call_err(
            "search_requirements",
            json!({"query": "should", "cursor": cursors[0]}),
        )
        .await;
    assert_eq!(err.code, errors::INVALID_PARAMS);
    assert!(err.message.contains("different"), "{}", err.message);
    assert!(err.hint.contains("same arguments"), "{}", err.hint);
    // The same words in another case are the same query.
    let (page, _) = mcp
        .call_paged::<Vec<Value>>(
            "search_requirements",
            json!({"query": "MUST", "cursor": cursors[0], "limit": 5}),
        )
        .await;
    assert_eq!(page.len(), 2, "the 2nd and 3rd of 3 matches");
}

/// Requests that arrive while the model is being rebuilt wait for the new model: none is
/// answered from the old one once the change is known.
#[tokio::test]
async fn concurrent_requests_after_a_change_agree() {
    let p = coffee_project();
    let mcp = p.start(&[]).await;
    let _: Value = mcp.call_ok("list_uncited_requirements", json!({})).await;
    p.write("src/main.rs", "fn nothing() {}\n");
    // Let the file notification arrive, then ask four times at once.
    tokio::time::sleep(Duration::from_millis(500)).await;
    let call = || mcp.call_ok::<Value>("list_uncited_requirements", json!({}));
    let (a, b, c, d) = tokio::join!(call(), call(), call(), call());
    let sizes: Vec<usize> = [a, b, c, d]
        .iter()
        .map(|v| v.as_array().unwrap().len())
        .collect();
    assert_eq!(sizes, [4, 4, 4, 4], "every request sees the change");
}

async fn eventually<F, Fut>(what: &str, mut check: F)
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = bool>,
{
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while !check().await {
        assert!(std::time::Instant::now() < deadline, "not seen: {what}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test]
async fn config_edits_and_new_directories_are_picked_up() {
    let p = coffee_project();
    let mcp = p.start(&[]).await;
    let _: Value = mcp.call_ok("list_uncited_requirements", json!({})).await;

    // A new [[source]] in the config, whose directory does not exist yet.
    let config = std::fs::read_to_string(p.path(".duvet/config.toml")).unwrap();
    p.write(
        ".duvet/config.toml",
        &format!("{config}\n[[source]]\npattern = \"extra/deep/**/*.go\"\n"),
    );
    p.write(
        "extra/deep/order.go",
        "//= specs/coffee.md#ordering\n//# A client MUST identify the pot.\n",
    );
    eventually("the new source directory", || async {
        let v: Value = mcp.call_ok("list_uncited_requirements", json!({})).await;
        // QUICKLY shares IDENTIFY's line: cited with it.
        texts(&v).is_empty()
    })
    .await;
    // A later edit inside the new directory is seen too.
    p.write("extra/deep/order.go", "package order\n");
    eventually("an edit in the new directory", || async {
        let v: Value = mcp.call_ok("list_uncited_requirements", json!({})).await;
        texts(&v) == UNCITED
    })
    .await;
}

#[tokio::test]
async fn a_project_created_after_start_is_served() {
    let p = Project::new();
    let mcp = p.start(&[]).await;
    let err = mcp.call_err("list_uncited_requirements", json!({})).await;
    assert_eq!(err.code, errors::NO_PROJECT);
    let full = coffee_project();
    // Copy the coffee project into the running server's root.
    for entry in walk(full.root()) {
        let rel = entry.strip_prefix(full.root()).unwrap();
        p.write(
            rel.to_str().unwrap(),
            &std::fs::read_to_string(&entry).unwrap(),
        );
    }
    eventually("the new project", || async {
        matches!(
            mcp.call_envelope::<Value>("list_uncited_requirements", json!({})).await,
            Ok(v) if texts(&v) == UNCITED
        )
    })
    .await;
}

fn walk(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            files.extend(walk(&path));
        } else {
            files.push(path);
        }
    }
    files
}

/// Duvet 0.4 writes its own extraction into .duvet/requirements: where a section has listed
/// requirements, they are the section's requirements (no duplicates from our extraction);
/// a specification that is only cited (not declared) contributes only listed requirements.
#[tokio::test]
async fn listed_requirements_win_and_cited_specs_are_not_extracted() {
    let p = coffee_project();
    p.write(
        ".duvet/requirements/www.rfc-editor.org/rfc/rfc2324/section-2.1.1.toml",
        &format!(
            "target = \"{RFC2324_URL}#section-2.1.1\"\n\n[[spec]]\nlevel = \"MUST\"\nquote = '''\n{ACCEPT}\n'''\n"
        ),
    );
    p.write(
        "src/other.rs",
        "//= https://www.rfc-editor.org/rfc/rfc7168#section-2\n//# TEA MUST be served hot.\n",
    );
    p.write(
        ".duvet/specifications/www.rfc-editor.org/rfc/rfc7168.txt",
        &RFC2324_TEXT.replace("2324", "7168"),
    );
    let mcp = p.start(&[]).await;
    let reqs = mcp
        .read_resource_json("duvet:///specifications/rfc2324/sections/section-2.1.1/requirements")
        .await;
    assert_eq!(texts(&reqs), [ACCEPT], "only the listed requirement");
    let all = mcp.read_resource_json("duvet:///requirements").await;
    assert_eq!(all.as_array().unwrap().len(), 6);
    assert!(
        all.as_array()
            .unwrap()
            .iter()
            .all(|r| !r["full_path"].as_str().unwrap().contains("rfc7168")),
        "nothing extracted from a cited-only specification"
    );
}

#[tokio::test]
async fn more_ways_to_name_things() {
    let p = coffee_project();
    let mcp = p.start(&[]).await;
    // Other spellings of the same RFC.
    for url in [
        "https://tools.ietf.org/rfc/rfc2324.txt",
        "https://datatracker.ietf.org/doc/html/rfc2324",
        "https://www.rfc-editor.org/rfc/rfc2324.html",
    ] {
        let r: Value = mcp.call_ok("resolve_spec_id", json!({"url": url})).await;
        assert_eq!(r["spec_id"], "rfc2324", "{url}");
    }
    // The project's own comment styles are understood by validate_citation.
    let v: Value = mcp
        .call_ok(
            "validate_citation",
            json!({"citation": "##= specs/coffee.md#payment-1\n##% Refunds MUST NOT be issued."}),
        )
        .await;
    assert_eq!(v["valid"], true, "{v}");
    assert_eq!(v["requirements"], json!([id(REFUNDS)]));
    // Invalid citations have context too.
    let ctx: Value = mcp
        .call_ok(
            "get_citation_context",
            json!({"citation_id": "src/invalid.rs:4", "context_lines": 0}),
        )
        .await;
    assert_eq!(
        ctx["context"],
        json!(["//= https://www.rfc-editor.org/rfc/rfc9999#section-1"])
    );
    // A specification that is not cached has no sections, and says which file it expected.
    let err = mcp
        .read_resource("duvet:///specifications/rfc9999/sections")
        .await
        .unwrap_err();
    assert!(err.contains("rfc9999.txt"), "{err}");
    // Percent-encoded citation ids in resource URIs.
    let base = format!(
        "duvet:///specifications/rfc2324/sections/section-2.1.1/requirements/{}/citations",
        id(ACCEPT)
    );
    let c = mcp
        .read_resource_json(&format!("{base}/src%2Fmain.rs%3A1"))
        .await;
    assert_eq!(c["line_number"], 1);
}

/// Duvet 0.1–0.3 caches: `<spec-path>/specs/<host as written>/…`.
#[tokio::test]
async fn legacy_cache_layouts() {
    let p = Project::new();
    p.write(
        "third_party/specs/tools.ietf.org/rfc/rfc2324.txt",
        RFC2324_TEXT,
    );
    p.write(
        "reqs/a.toml",
        &format!(
            "target = \"https://tools.ietf.org/rfc/rfc2324#section-2.1.2\"\n\n[[spec]]\nlevel = \"SHOULD\"\nquote = \"{CLIENTS}\"\n"
        ),
    );
    p.write(
        "src/a.rs",
        "//= https://tools.ietf.org/rfc/rfc2324#section-2.1.2\n//# Clients SHOULD send BREW rather than GET to start brewing.\n",
    );
    let mcp = p
        .start(&[
            "--spec-pattern",
            "reqs/*.toml",
            "--source-pattern",
            "src/**/*.rs",
            "--spec-path",
            "third_party",
        ])
        .await;
    let s: Value = mcp
        .call_ok(
            "get_requirement_status",
            json!({"req_identifier": id(CLIENTS)}),
        )
        .await;
    assert_eq!(s["status"], "fully_implemented");
    let invalid: Value = mcp.call_ok("list_invalid_citations", json!({})).await;
    assert_eq!(invalid, json!([]));
}

/// `type=implication` implements, `type=spec` in source lists a requirement, `level=`
/// overrides the keyword's level.
#[tokio::test]
async fn implication_spec_and_level_annotations() {
    let p = coffee_project();
    p.write(
        "src/more.rs",
        "\
//= specs/coffee.md#ordering
//= type=implication
//# A client MUST identify the pot.

//= specs/coffee.md#payment
//= type=spec
//= level=SHOULD
//# Payments MAY be made
",
    );
    let mcp = p.start(&[]).await;
    let s: Value = mcp
        .call_ok(
            "get_requirement_status",
            json!({"req_identifier": id(IDENTIFY)}),
        )
        .await;
    assert_eq!(s["status"], "fully_implemented");
    assert_eq!(s["cited"], true);
    let listed = "Payments MAY be made";
    let s: Value = mcp
        .call_ok(
            "get_requirement_status",
            json!({"req_identifier": id(listed)}),
        )
        .await;
    assert_eq!(s["level"], "SHOULD", "level= overrides the keyword");
    // The section's requirements are now the listed one (it replaces the extraction).
    let reqs = mcp
        .read_resource_json("duvet:///specifications/coffee/sections/payment/requirements")
        .await;
    assert_eq!(texts(&reqs), [listed]);
}
