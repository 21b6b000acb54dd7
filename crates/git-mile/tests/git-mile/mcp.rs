//! `git mile mcp-server` through rmcp's client: the tools, the filter language, sorting,
//! cursors, and every error code of the contract.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // assertions in tests

use crate::support;

use mcp_testkit::McpProcess;
use serde_json::{Value, json};
use support::world::{i, m};
use support::{Sandbox, call_raw, data_of, ok, rpc_error, world_repo};

async fn code_of(mcp: &McpProcess, tool: &str, args: Value) -> (i32, String) {
    let error = rpc_error(mcp, tool, args).await;
    (error.code.0, error.message.to_string())
}

/// Ids listed by a filter over issues (closed ones included), in the default order.
async fn ids(mcp: &McpProcess, entity: &str, filter: &str) -> Vec<String> {
    let page = ok(
        mcp,
        "git_mile.list",
        json!({"entity": entity, "filter": filter, "includeClosed": true, "limit": 200}),
    )
    .await;
    page["items"]
        .as_array()
        .expect("items")
        .iter()
        .map(|item| item["id"].as_str().expect("id").to_string())
        .collect()
}

/// The fixture world in a repository, and a server on it.
async fn world_server() -> (Sandbox, std::path::PathBuf, McpProcess) {
    let sandbox = Sandbox::new();
    let repo = world_repo(&sandbox, "repo");
    let mcp = sandbox.server(&repo, &[]).await;
    (sandbox, repo, mcp)
}

#[tokio::test]
async fn handshake_tools_and_ping() {
    let (_sandbox, _repo, mcp) = world_server().await;
    let info = mcp.server_info();
    let server = info.server_info.as_ref().expect("serverInfo");
    assert_eq!(server.name, "git-mile");
    assert_eq!(server.version, env!("CARGO_PKG_VERSION"));
    assert!(info.capabilities.tools.is_some());
    let tools = mcp.tools().await;
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
    assert_eq!(
        names,
        [
            "git_mile.comment",
            "git_mile.create",
            "git_mile.list",
            "git_mile.log",
            "git_mile.show",
            "git_mile.update",
        ],
        "the test kit lists tools sorted by name"
    );
    let list = tools.iter().find(|t| t.name == "git_mile.list").unwrap();
    assert_eq!(list.input_schema["required"], json!(["entity"]));
    assert_eq!(list.input_schema["additionalProperties"], json!(false));
    assert_eq!(
        list.input_schema["properties"]["entity"]["enum"],
        json!(["issue", "milestone", "task"]),
        "the reads read upstream git-mile's tasks too"
    );
    assert!(list.input_schema["properties"]["includeClosed"].is_object());
    let annotations = list.annotations.as_ref().expect("annotations");
    assert_eq!(annotations.read_only_hint, Some(true));
    assert!(list.output_schema.is_some());
    mcp.ping().await;
    mcp.shutdown().await;
}

#[tokio::test]
async fn list_and_show_payloads() {
    let (_sandbox, _repo, mcp) = world_server().await;

    let page = ok(&mcp, "git_mile.list", json!({"entity": "milestone"})).await;
    assert_eq!(
        page,
        json!({"items": [{
            "id": m(1), "title": "Milestone Alpha", "status": "open", "labels": ["alpha"],
            "stats": {"comment_count": 1, "open_issues": 2}
        }], "nextCursor": null})
    );
    let page = ok(
        &mcp,
        "git_mile.list",
        json!({"entity": "issue", "limit": 1}),
    )
    .await;
    assert_eq!(page["items"][0]["id"], json!(i(5)));
    assert_eq!(page["items"][0]["stats"], json!({"comment_count": 1}));
    assert!(page["nextCursor"].is_string());

    let issue = show(&mcp, "issue", &i(1)).await;
    assert_eq!(issue["title"], "Fix login crash");
    assert_eq!(issue["description"], "The app crashes on login.");
    assert_eq!(issue["labels"], json!(["bug", "p1"]));
    assert_eq!(issue["author"], "Ann Example");
    assert_eq!(issue["created"], "2026-01-01T00:01:40Z");
    assert_eq!(issue["updated"], "2026-01-01T00:02:40Z");
    assert_eq!(
        issue["comments"],
        json!([
            {"author": "Bob Example", "body": "Repro on 2.1", "ts": "2026-01-01T00:02:30Z"},
            {"author": "Ann Example", "body": "Fixed in abc123", "ts": "2026-01-01T00:02:40Z"}
        ])
    );
    assert_eq!(issue["stats"], json!({"comment_count": 2}));
    assert_eq!(
        issue["milestone"],
        json!({"id": m(1), "title": "Milestone Alpha"})
    );

    let unattached = show(&mcp, "issue", &i(4)).await;
    assert_eq!(unattached["milestone"], Value::Null);

    // A closed milestone is shown, with its counts.
    let beta = show(&mcp, "milestone", &m(2)).await;
    assert_eq!(beta["status"], "closed");
    assert_eq!(beta["stats"], json!({"comment_count": 0, "open_issues": 0}));
    assert!(
        beta.get("milestone").is_none(),
        "milestones have no milestone: {beta}"
    );
    mcp.shutdown().await;
}

/// `git_mile.show` of one entity, which must succeed.
async fn show(mcp: &McpProcess, entity: &str, id: &str) -> Value {
    ok(mcp, "git_mile.show", json!({"entity": entity, "id": id})).await
}

/// Tool-level failures are `isError` results whose JSON text is
/// `{"error":{code,message,hint,retryable}}`, without `structuredContent` (it would have to
/// validate against the tool's outputSchema, which clients check on error results too).
async fn tool_error(mcp: &McpProcess, args: Value) -> Value {
    support::error_object(
        &call_raw(mcp, "git_mile.show", args)
            .await
            .expect("a tool result"),
    )
}

#[tokio::test]
async fn show_resolves_prefixes_and_reports_unknown_and_ambiguous_ids() {
    let sandbox = Sandbox::new();
    let repo = world_repo(&sandbox, "repo");
    let made = sandbox.create(&repo, "issue", "Made by the CLI", &[]);
    let mcp = sandbox.server(&repo, &[]).await;
    let shown = show(&mcp, "issue", &made[..8]).await;
    assert_eq!(shown["id"], made);
    assert_eq!(shown["title"], "Made by the CLI");

    let missing = tool_error(
        &mcp,
        json!({"entity": "issue", "id": "99999999-0000-4000-8000-000000000000"}),
    )
    .await;
    assert_eq!(missing["code"], "not_found");
    // An issue id asked for as a milestone is not found either.
    let wrong_kind = tool_error(&mcp, json!({"entity": "milestone", "id": i(1)})).await;
    assert_eq!(wrong_kind["code"], "not_found");
    // Too short to be a prefix.
    let short = tool_error(&mcp, json!({"entity": "issue", "id": "49"})).await;
    assert_eq!(short["code"], "not_found");
    let ambiguous = tool_error(&mcp, json!({"entity": "issue", "id": &i(1)[..30]})).await;
    assert_eq!(ambiguous["code"], "ambiguous_id");
    assert!(ambiguous["message"].as_str().unwrap().contains(&i(1)));
    mcp.shutdown().await;
}

/// The bug this guards against: Claude Code's TypeScript SDK validates `structuredContent`
/// against the tool's outputSchema also on `isError` results, and refused git-mile's error
/// object (`-32602 Structured content does not match the tool's output schema`). Every
/// tool-level failure therefore carries its error as JSON text only.
#[tokio::test]
async fn every_error_result_omits_structured_content() {
    let (_sandbox, _repo, mcp) = world_server().await;
    let cases = [
        (
            "not_found",
            json!({"entity": "issue", "id": "99999999-0000-4000-8000-000000000000"}),
        ),
        ("not_found", json!({"entity": "milestone", "id": i(1)})),
        (
            "ambiguous_id",
            json!({"entity": "issue", "id": &i(1)[..30]}),
        ),
    ];
    for (code, args) in cases {
        let result = call_raw(&mcp, "git_mile.show", args.clone())
            .await
            .expect("a tool result");
        let error = support::error_object(&result);
        assert_eq!(error["code"], code, "{args}");
    }
    // Successful results keep theirs.
    let result = call_raw(
        &mcp,
        "git_mile.show",
        json!({"entity": "issue", "id": i(1)}),
    )
    .await
    .expect("a tool result");
    assert!(result.structured_content.is_some());
    mcp.shutdown().await;

    let sandbox = Sandbox::new();
    let empty = sandbox.path("not-a-repo");
    std::fs::create_dir_all(&empty).unwrap();
    let mcp = sandbox.server(&empty, &[]).await;
    for tool in ["git_mile.list", "git_mile.show"] {
        let result = call_raw(&mcp, tool, json!({"entity": "issue", "id": i(1)})).await;
        // `git_mile.list` takes no `id`: -32600 comes first there.
        if tool == "git_mile.list" {
            assert_eq!(result.unwrap_err().code.0, -32600);
            let result = call_raw(&mcp, tool, json!({"entity": "issue"}))
                .await
                .expect("a tool result");
            assert_eq!(support::error_object(&result)["code"], "no_repository");
        } else {
            let error = support::error_object(&result.expect("a tool result"));
            assert_eq!(error["code"], "no_repository");
        }
    }
    mcp.shutdown().await;
}

#[tokio::test]
async fn filters_of_every_operator() {
    let (_sandbox, _repo, mcp) = world_server().await;
    // Default order: updated:desc (i5, i4, i3, i2, i1).
    let by_id = format!(r#"milestone == "{}""#, m(1));
    let id_in = format!(r#"id in ["{}", "{}"]"#, i(1), i(4));
    let cases: Vec<(&str, Vec<String>)> = vec![
        (r#"status == "open""#, vec![i(5), i(4), i(2), i(1)]),
        (r#"status != "open""#, vec![i(3)]),
        (r#"status in ["closed"]"#, vec![i(3)]),
        (r#"labels contains "bug""#, vec![i(3), i(1)]),
        (r#"labels == "p1""#, vec![i(5), i(1)]),
        (r#"labels != "bug""#, vec![i(5), i(4), i(2)]),
        (r#"labels in ["perf", "feature"]"#, vec![i(5), i(2)]),
        (r#"title contains "LOGIN""#, vec![i(5), i(1)]),
        (r#"description contains "filter""#, vec![i(4)]),
        (r#"title == "Write docs""#, vec![i(4)]),
        (r#"title < "B""#, vec![i(2)]),
        (r#"title >= "L""#, vec![i(5), i(4)]),
        ("comment_count > 1", vec![i(1)]),
        ("comment_count >= 1", vec![i(5), i(1)]),
        ("comment_count == 0", vec![i(4), i(3), i(2)]),
        ("comment_count <= 0", vec![i(4), i(3), i(2)]),
        ("comment_count < 2 and comment_count != 0", vec![i(5)]),
        ("created >= 2026-01-04", vec![i(5), i(4)]),
        ("created < 2026-01-04", vec![i(3), i(2), i(1)]),
        (r#"created == "2026-01-06""#, vec![i(5)]),
        ("updated > 2026-01-04", vec![i(5)]),
        ("updated <= 2026-01-01T00:03:20Z", vec![i(1)]),
        (r#"milestone == "Milestone Alpha""#, vec![i(2), i(1)]),
        (by_id.as_str(), vec![i(2), i(1)]),
        ("milestone == null", vec![i(5), i(4)]),
        ("milestone != null", vec![i(3), i(2), i(1)]),
        (r#"author == "Bob Example""#, vec![i(4), i(2)]),
        (
            r#"not (labels contains "bug") and status == "open""#,
            vec![i(5), i(4), i(2)],
        ),
        // `and` binds tighter than `or`.
        (
            r#"labels contains "bug" or labels contains "feature" and status == "open""#,
            vec![i(3), i(2), i(1)],
        ),
        (
            r#"(labels contains "bug" or labels contains "feature") and status == "open""#,
            vec![i(2), i(1)],
        ),
        (
            r#"(labels contains "feature" or labels contains "perf") and author == "Bob Example""#,
            vec![i(2)],
        ),
        ("has_comments", vec![i(5), i(1)]),
        ("has_milestone == false", vec![i(5), i(4)]),
        (id_in.as_str(), vec![i(4), i(1)]),
        (r#"title contains "zzz""#, vec![]),
    ];
    for (filter, expected) in &cases {
        assert_eq!(
            &ids(&mcp, "issue", filter).await,
            expected,
            "filter: {filter}"
        );
    }
    assert_eq!(ids(&mcp, "milestone", "open_issues >= 1").await, [m(1)]);
    assert_eq!(ids(&mcp, "milestone", "open_issues == 0").await, [m(2)]);
    assert_eq!(
        ids(&mcp, "milestone", "milestone == null").await,
        [m(2), m(1)]
    );
    mcp.shutdown().await;
}

#[tokio::test]
async fn include_closed_and_status_filters() {
    let (_sandbox, _repo, mcp) = world_server().await;
    let list = |filter: Option<&str>, include: Option<bool>| {
        let mut args = json!({"entity": "issue"});
        if let Some(f) = filter {
            args["filter"] = json!(f);
        }
        if let Some(b) = include {
            args["includeClosed"] = json!(b);
        }
        args
    };
    let count = |v: Value| v["items"].as_array().map(Vec::len).unwrap_or(0);
    assert_eq!(count(ok(&mcp, "git_mile.list", list(None, None)).await), 4);
    assert_eq!(
        count(ok(&mcp, "git_mile.list", list(None, Some(false))).await),
        4
    );
    assert_eq!(
        count(ok(&mcp, "git_mile.list", list(None, Some(true))).await),
        5
    );
    assert_eq!(
        count(
            ok(
                &mcp,
                "git_mile.list",
                list(Some(r#"labels contains "bug""#), None)
            )
            .await
        ),
        1
    );
    // A filter on the status decides by itself.
    assert_eq!(
        count(
            ok(
                &mcp,
                "git_mile.list",
                list(Some(r#"status == "closed""#), None)
            )
            .await
        ),
        1
    );
    let milestones = ok(
        &mcp,
        "git_mile.list",
        json!({"entity": "milestone", "includeClosed": true}),
    )
    .await;
    assert_eq!(count(milestones), 2);
    mcp.shutdown().await;
}

#[tokio::test]
async fn sorts() {
    let (_sandbox, _repo, mcp) = world_server().await;
    let sorted = |sort: Vec<&str>| json!({"entity": "issue", "includeClosed": true, "sort": sort});
    let order = |v: Value| -> Vec<String> {
        v["items"]
            .as_array()
            .unwrap()
            .iter()
            .map(|x| x["id"].as_str().unwrap().to_string())
            .collect()
    };
    let cases: Vec<(Vec<&str>, Vec<String>)> = vec![
        (vec![], vec![i(5), i(4), i(3), i(2), i(1)]),
        (vec!["updated:desc"], vec![i(5), i(4), i(3), i(2), i(1)]),
        (vec!["title"], vec![i(2), i(3), i(1), i(5), i(4)]),
        (vec!["title:desc"], vec![i(4), i(5), i(1), i(3), i(2)]),
        (vec!["created:asc"], vec![i(1), i(2), i(3), i(4), i(5)]),
        (
            vec!["comment_count:desc", "title"],
            vec![i(1), i(5), i(2), i(3), i(4)],
        ),
        (
            vec!["status", "id:desc"],
            vec![i(3), i(5), i(4), i(2), i(1)],
        ),
        (
            vec!["author:asc", "created:desc"],
            vec![i(5), i(3), i(1), i(4), i(2)],
        ),
        (vec!["milestone", "id"], vec![i(4), i(5), i(1), i(2), i(3)]),
    ];
    for (sort, expected) in cases {
        assert_eq!(
            order(ok(&mcp, "git_mile.list", sorted(sort.clone())).await),
            expected,
            "sort {sort:?}"
        );
    }
    mcp.shutdown().await;
}

#[tokio::test]
async fn cursors_resume_after_the_last_item_across_inserts() {
    let (sandbox, repo, mcp) = world_server().await;
    let args = |cursor: Option<&str>| {
        let mut a = json!({"entity": "issue", "sort": ["title"], "limit": 2});
        if let Some(c) = cursor {
            a["cursor"] = json!(c);
        }
        a
    };
    let titles = |v: &Value| -> Vec<String> {
        v["items"]
            .as_array()
            .unwrap()
            .iter()
            .map(|x| x["title"].as_str().unwrap().to_string())
            .collect()
    };
    let first = ok(&mcp, "git_mile.list", args(None)).await;
    assert_eq!(titles(&first), ["Add dark mode", "Fix login crash"]);
    let cursor = first["nextCursor"]
        .as_str()
        .expect("a next page")
        .to_string();

    // One issue lands before the cursor, one after it.
    sandbox.create(&repo, "issue", "Aardvark", &[]);
    sandbox.create(&repo, "issue", "Middle thing", &[]);

    let second = ok(&mcp, "git_mile.list", args(Some(&cursor))).await;
    assert_eq!(titles(&second), ["Login page slow", "Middle thing"]);
    let again = ok(&mcp, "git_mile.list", args(Some(&cursor))).await;
    assert_eq!(again, second, "a cursor can be used again");
    let third = ok(
        &mcp,
        "git_mile.list",
        args(Some(second["nextCursor"].as_str().unwrap())),
    )
    .await;
    assert_eq!(titles(&third), ["Write docs"]);
    assert_eq!(third["nextCursor"], Value::Null);

    // Cursors survive a restart of the server.
    mcp.shutdown().await;
    let mcp = sandbox.server(&repo, &[]).await;
    assert_eq!(ok(&mcp, "git_mile.list", args(Some(&cursor))).await, second);

    // Used with another query, altered, or made up: -32602.
    let mut other = args(Some(&cursor));
    other["filter"] = json!("comment_count >= 0");
    let error = rpc_error(&mcp, "git_mile.list", other).await;
    assert_eq!(error.code.0, -32602);
    assert!(
        error.message.contains("different query"),
        "{}",
        error.message
    );
    assert_eq!(data_of(&error).code, "invalid_cursor");
    // Another includeClosed too, even where a status filter makes it change nothing.
    let mut by_status = args(None);
    by_status["filter"] = json!("status == \"open\"");
    let page = ok(&mcp, "git_mile.list", by_status.clone()).await;
    by_status["cursor"] = page["nextCursor"].clone();
    by_status["includeClosed"] = json!(true);
    let (code, message) = code_of(&mcp, "git_mile.list", by_status).await;
    assert_eq!(code, -32602);
    assert!(message.contains("different query"), "{message}");
    let mut altered: Vec<char> = cursor.chars().collect();
    let at = altered.len() / 2;
    altered[at] = if altered[at] == 'x' { 'y' } else { 'x' };
    let altered: String = altered.into_iter().collect();
    for forged in [altered.as_str(), "bm90IGEgY3Vyc29y", "%%%"] {
        let error = rpc_error(&mcp, "git_mile.list", args(Some(forged))).await;
        assert_eq!(error.code.0, -32602, "{forged}");
        assert!(
            error.message.contains("not one this server issued"),
            "{}",
            error.message
        );
        let data = data_of(&error);
        assert_eq!(data.code, "invalid_cursor");
        assert!(data.hint.contains("nextCursor"), "{data:?}");
    }
    mcp.shutdown().await;
}

#[tokio::test]
async fn error_codes() {
    let (sandbox, repo, mcp) = world_server().await;

    // -32601: unknown tool.
    let (code, message) = code_of(&mcp, "git_mile.delete", json!({"entity": "issue"})).await;
    assert_eq!(code, -32601);
    assert!(message.contains("git_mile.list"), "{message}");

    // -32600: arguments that cannot be decoded.
    for args in [
        json!({}),
        json!({"entity": "epic"}),
        json!({"entity": "issue", "includeclosed": true}),
        json!({"entity": "issue", "limit": "ten"}),
        json!({"entity": "issue", "sort": "title"}),
    ] {
        let (code, message) = code_of(&mcp, "git_mile.list", args.clone()).await;
        assert_eq!(code, -32600, "{args}: {message}");
    }
    let (code, _) = code_of(&mcp, "git_mile.show", json!({"entity": "issue"})).await;
    assert_eq!(code, -32600);
    // A whole number written with a fraction is an integer, as in JSON Schema.
    let page = ok(
        &mcp,
        "git_mile.list",
        json!({"entity": "issue", "limit": 2.0}),
    )
    .await;
    assert_eq!(page["items"].as_array().unwrap().len(), 2);

    // -32602: validation.
    let error = rpc_error(
        &mcp,
        "git_mile.list",
        json!({"entity": "issue", "filter": "status = \"open\""}),
    )
    .await;
    assert_eq!(error.code.0, -32602);
    assert!(
        error.message.contains("column 8") && error.message.contains("=="),
        "{}",
        error.message
    );
    assert_eq!(data_of(&error).code, "invalid_filter");
    let (code, message) = code_of(
        &mcp,
        "git_mile.list",
        json!({"entity": "issue", "filter": "title contains"}),
    )
    .await;
    assert_eq!(code, -32602);
    assert!(message.contains("column 15"), "{message}");
    for (args, data_code) in [
        (json!({"entity": "issue", "limit": 0}), "invalid_limit"),
        (json!({"entity": "issue", "limit": 201}), "invalid_limit"),
        (json!({"entity": "issue", "limit": -1}), "invalid_limit"),
        (json!({"entity": "issue", "limit": 1.5}), "invalid_limit"),
        (
            json!({"entity": "issue", "sort": ["labels"]}),
            "invalid_sort",
        ),
        (
            json!({"entity": "issue", "sort": ["title:sideways"]}),
            "invalid_sort",
        ),
        (
            json!({"entity": "issue", "filter": "nonsense == 1"}),
            "invalid_filter",
        ),
    ] {
        let error = rpc_error(&mcp, "git_mile.list", args.clone()).await;
        assert_eq!(error.code.0, -32602, "{args}: {}", error.message);
        assert_eq!(data_of(&error).code, data_code, "{args}");
    }

    // A ref that points at something that is not a commit is left out of listings, which
    // name it; showing it is -32001.
    let broken = "99999999-0000-4000-8000-000000000009";
    let blob = sandbox.git(&repo, &["hash-object", "-w", "README.md"]);
    sandbox.git(
        &repo,
        &[
            "update-ref",
            &format!("refs/git-mile/issue/{broken}"),
            blob.trim(),
        ],
    );
    assert_eq!(ids(&mcp, "issue", "").await.len(), 5);
    let page = ok(&mcp, "git_mile.list", json!({"entity": "issue"})).await;
    assert_eq!(page["unreadable"], json!([broken]));
    let page = ok(&mcp, "git_mile.list", json!({"entity": "milestone"})).await;
    assert!(page.get("unreadable").is_none(), "{page}");
    for id in [broken, "99999999-0000"] {
        let error = rpc_error(&mcp, "git_mile.show", json!({"entity": "issue", "id": id})).await;
        let message = error.message.to_string();
        assert_eq!(error.code.0, -32001, "{message}");
        assert!(
            message.contains(broken) && message.contains("git fsck"),
            "{message}"
        );
        assert_eq!(data_of(&error).code, "unreadable");
    }

    // A ref file git cannot decode (git only warns about it) is left out and named too;
    // showing it is -32001 (hostile.rs covers it further).
    let junk = "99999999-0000-4000-8000-000000000008";
    std::fs::write(
        repo.join(format!(".git/refs/git-mile/issue/{junk}")),
        "not an object id\n",
    )
    .unwrap();
    let page = ok(&mcp, "git_mile.list", json!({"entity": "issue"})).await;
    assert_eq!(page["unreadable"], json!([junk, broken]), "{page}");
    let error = rpc_error(
        &mcp,
        "git_mile.show",
        json!({"entity": "issue", "id": junk}),
    )
    .await;
    assert_eq!(error.code.0, -32001, "{}", error.message);
    assert_eq!(data_of(&error).code, "unreadable");
    mcp.shutdown().await;
}

#[tokio::test]
async fn outside_a_repository_the_server_starts_and_says_so() {
    let sandbox = Sandbox::new();
    let empty = sandbox.path("not-a-repo");
    std::fs::create_dir_all(&empty).unwrap();
    let mcp = sandbox.server(&empty, &[]).await;
    mcp.ping().await;
    for (tool, args) in [
        ("git_mile.list", json!({"entity": "issue"})),
        ("git_mile.show", json!({"entity": "issue", "id": i(1)})),
    ] {
        let result = call_raw(&mcp, tool, args).await.expect("a result");
        let error = support::error_object(&result);
        assert_eq!(error["code"], "no_repository", "{tool}");
        assert!(
            error["message"].as_str().unwrap().contains("--repo"),
            "{error}"
        );
        assert!(
            error["hint"].as_str().unwrap().contains("--repo"),
            "{error}"
        );
    }
    // Arguments are checked first: a bad one is -32602 there too.
    for args in [
        json!({"entity": "issue", "filter": "status = 1"}),
        json!({"entity": "issue", "limit": 0}),
    ] {
        let (code, message) = code_of(&mcp, "git_mile.list", args.clone()).await;
        assert_eq!(code, -32602, "{args}: {message}");
    }

    // --repo points it at one.
    let repo = world_repo(&sandbox, "repo");
    let mcp2 = sandbox
        .server(&empty, &["--repo", repo.to_str().unwrap()])
        .await;
    assert_eq!(ids(&mcp2, "milestone", "").await, [m(2), m(1)]);
    mcp2.shutdown().await;
    mcp.shutdown().await;
}

#[tokio::test]
async fn a_long_running_server_sees_every_change() {
    // Told by inotify (the default on Linux), and by file metadata.
    sees_every_change(&[]).await;
    sees_every_change(&[("GIT_MILE_NO_INOTIFY", "1")]).await;
}

async fn sees_every_change(env: &[(&str, &str)]) {
    let sandbox = Sandbox::new();
    let repo = world_repo(&sandbox, "repo");
    let mcp = sandbox.server_with_env(&repo, &[], env).await;
    let all = || json!({"entity": "issue", "includeClosed": true, "limit": 200, "sort": ["title"]});
    let titles = |v: &Value| -> Vec<String> {
        v["items"]
            .as_array()
            .unwrap()
            .iter()
            .map(|x| x["title"].as_str().unwrap().to_string())
            .collect()
    };
    assert_eq!(titles(&ok(&mcp, "git_mile.list", all()).await).len(), 5);
    // Past the window in which a change could hide in the same timestamp tick, the server
    // trusts the ref directories' times; every kind of change must still move them.
    let settle = || std::thread::sleep(std::time::Duration::from_millis(2_500));
    settle();
    assert_eq!(titles(&ok(&mcp, "git_mile.list", all()).await).len(), 5);
    let made = sandbox.create(&repo, "issue", "Brand new", &[]);
    settle();
    assert!(titles(&ok(&mcp, "git_mile.list", all()).await).contains(&"Brand new".to_string()));
    // An update of an existing ref.
    sandbox.mile_ok(&repo, &["edit", &made, "--title", "Renamed"]);
    settle();
    let listed = titles(&ok(&mcp, "git_mile.list", all()).await);
    assert!(
        listed.contains(&"Renamed".to_string()) && !listed.contains(&"Brand new".to_string()),
        "{listed:?}"
    );
    // A ref file rewritten in place (same inode; no git command does this) is seen with the
    // next change of the ref directories: only the files whose times moved are read again.
    let ref_file = repo.join(format!(".git/refs/git-mile/issue/{made}"));
    let parent = sandbox.git(
        &repo,
        &["rev-parse", &format!("refs/git-mile/issue/{made}^")],
    );
    std::fs::write(&ref_file, parent).unwrap();
    sandbox.create(&repo, "milestone", "Another", &[]);
    settle();
    let listed = titles(&ok(&mcp, "git_mile.list", all()).await);
    assert!(
        listed.contains(&"Brand new".to_string()) && !listed.contains(&"Renamed".to_string()),
        "{listed:?}"
    );
    // Written by this server: seen at once, by the same server and by the next list.
    let renamed = ok(
        &mcp,
        "git_mile.update",
        json!({"entity": "issue", "id": made, "title": "Renamed"}),
    )
    .await;
    assert_eq!(renamed["title"], "Renamed");
    let listed = titles(&ok(&mcp, "git_mile.list", all()).await);
    assert!(listed.contains(&"Renamed".to_string()), "{listed:?}");
    // Packing the refs, then changing a packed one.
    sandbox.git(&repo, &["pack-refs", "--all"]);
    settle();
    assert_eq!(titles(&ok(&mcp, "git_mile.list", all()).await).len(), 6);
    sandbox.mile_ok(&repo, &["edit", &i(4), "--title", "Write the docs"]);
    settle();
    assert!(
        titles(&ok(&mcp, "git_mile.list", all()).await).contains(&"Write the docs".to_string())
    );
    // A deleted ref.
    sandbox.git(
        &repo,
        &["update-ref", "-d", &format!("refs/git-mile/issue/{made}")],
    );
    settle();
    assert_eq!(titles(&ok(&mcp, "git_mile.list", all()).await).len(), 5);
    mcp.shutdown().await;
}

#[tokio::test]
async fn git_mile_mcp_server_runs_as_a_git_subcommand() {
    let sandbox = Sandbox::new();
    let repo = world_repo(&sandbox, "repo");
    let env = support::base_env(sandbox.dir.path());
    let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    let mcp = McpProcess::spawn_bin("git", &["mile", "mcp-server"], &repo, &env)
        .await
        .expect("`git mile mcp-server` starts");
    assert_eq!(
        mcp.server_info()
            .server_info
            .as_ref()
            .map(|s| s.name.clone()),
        Some("git-mile".to_string())
    );
    assert_eq!(ids(&mcp, "milestone", "").await, [m(2), m(1)]);
    mcp.shutdown().await;
}
