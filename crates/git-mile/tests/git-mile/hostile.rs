//! What a hostile probe found: a ref file git cannot decode must not take the other entities
//! down, and huge argument values must never be copied whole into errors or the log.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // assertions in tests

use crate::support;

use std::path::Path;

use mcp_testkit::McpProcess;
use serde_json::{Value, json};
use support::world::{i, m};
use support::{Sandbox, call_raw, data_of, ok, rpc_error, world_repo};

/// An id no entity of the world has.
const STRAY: &str = "99999999-0000-4000-8000-000000000008";

/// Replace a ref file by `content`, as git writes one (a file renamed over it), so that
/// both ways of telling changes see it.
fn write_ref_file(repo: &Path, kind: &str, id: &str, content: &[u8]) {
    let dir = repo.join(".git/refs/git-mile").join(kind);
    std::fs::create_dir_all(&dir).unwrap();
    let tmp = dir.join(format!("{id}.tmp"));
    std::fs::write(&tmp, content).unwrap();
    std::fs::rename(&tmp, dir.join(id)).unwrap();
}

/// Past the window in which the metadata tracker distrusts file times.
fn settle() {
    std::thread::sleep(std::time::Duration::from_millis(2_500));
}

fn item_ids(page: &Value) -> Vec<String> {
    page["items"]
        .as_array()
        .expect("items")
        .iter()
        .map(|item| item["id"].as_str().unwrap().to_string())
        .collect()
}

async fn all_issues(mcp: &McpProcess) -> Value {
    ok(
        mcp,
        "git_mile.list",
        json!({"entity": "issue", "includeClosed": true, "limit": 200}),
    )
    .await
}

/// `git_mile.show` (or a write) of an entity whose ref file cannot be read: -32001
/// `unreadable`, naming the entity and the damage.
async fn assert_unreadable(mcp: &McpProcess, tool: &str, args: Value, id: &str) {
    let error = rpc_error(mcp, tool, args.clone()).await;
    let message = error.message.to_string();
    assert_eq!(error.code.0, -32001, "{tool} {args}: {message}");
    assert_eq!(data_of(&error).code, "unreadable", "{tool} {args}");
    assert!(
        message.contains(id) && message.contains("could not be decoded"),
        "{message}"
    );
    assert!(message.len() < 1_000, "{message}");
}

async fn a_bad_ref_file_is_left_out(env: &[(&str, &str)]) {
    let sandbox = Sandbox::new();
    let repo = world_repo(&sandbox, "repo");
    let mcp = sandbox.server_with_env(&repo, &[], env).await;
    assert_eq!(item_ids(&all_issues(&mcp).await).len(), 5);
    let tip = sandbox.git(
        &repo,
        &["rev-parse", &format!("refs/git-mile/issue/{}", i(2))],
    );
    settle();

    // A new ref file that is junk, and an existing entity's ref overwritten with junk (1 MB
    // of it: the reason quotes an excerpt), read again by the running server.
    write_ref_file(&repo, "issue", STRAY, b"not a sha\n");
    write_ref_file(&repo, "issue", &i(2), "z".repeat(1 << 20).as_bytes());
    settle();
    let page = all_issues(&mcp).await;
    let listed = item_ids(&page);
    assert_eq!(listed.len(), 4, "{page}");
    assert!(!listed.contains(&i(2)), "{page}");
    let mut broken = vec![i(2), STRAY.to_string()];
    broken.sort();
    assert_eq!(page["unreadable"], json!(broken), "{page}");
    let milestones = ok(&mcp, "git_mile.list", json!({"entity": "milestone"})).await;
    assert!(milestones.get("unreadable").is_none(), "{milestones}");
    // Stats count what can be read (i(1) and i(2) are attached to m(1)).
    let alpha = ok(
        &mcp,
        "git_mile.show",
        json!({"entity": "milestone", "id": m(1)}),
    )
    .await;
    assert_eq!(alpha["stats"]["open_issues"], 1, "{alpha}");
    for id in [STRAY.to_string(), i(2), STRAY[..8].to_string()] {
        let want = if id.starts_with("99") {
            STRAY.to_string()
        } else {
            i(2)
        };
        assert_unreadable(
            &mcp,
            "git_mile.show",
            json!({"entity": "issue", "id": id}),
            &want,
        )
        .await;
    }
    // The others are served.
    let shown = ok(
        &mcp,
        "git_mile.show",
        json!({"entity": "issue", "id": i(1)}),
    )
    .await;
    assert_eq!(shown["title"], "Fix login crash");
    // Writes to it say what is wrong, and write nothing.
    for (tool, args) in [
        (
            "git_mile.update",
            json!({"entity": "issue", "id": i(2), "title": "Changed"}),
        ),
        (
            "git_mile.comment",
            json!({"entity": "issue", "id": STRAY, "body": "hello"}),
        ),
        (
            "git_mile.update",
            json!({"entity": "issue", "id": &STRAY[..8], "status": "closed"}),
        ),
    ] {
        let id = args["id"].as_str().unwrap();
        let want = if id.starts_with("99") {
            STRAY.to_string()
        } else {
            i(2)
        };
        assert_unreadable(&mcp, tool, args, &want).await;
    }
    assert_eq!(
        std::fs::read(repo.join(".git/refs/git-mile/issue").join(STRAY)).unwrap(),
        b"not a sha\n"
    );
    // Writing elsewhere still works.
    let updated = ok(
        &mcp,
        "git_mile.update",
        json!({"entity": "issue", "id": i(1), "title": "Fix the login crash"}),
    )
    .await;
    assert_eq!(updated["title"], "Fix the login crash");

    // A server started on the damaged repository (the full read, its cache present).
    let stderr = mcp.shutdown().await;
    assert!(stderr.len() < 20_000, "{} bytes of stderr", stderr.len());
    let mcp = sandbox.server_with_env(&repo, &[], env).await;
    let page = all_issues(&mcp).await;
    assert_eq!(item_ids(&page).len(), 4, "{page}");
    assert_eq!(page["unreadable"], json!(broken), "{page}");
    assert_unreadable(
        &mcp,
        "git_mile.show",
        json!({"entity": "issue", "id": STRAY}),
        STRAY,
    )
    .await;

    // Repaired: served again.
    settle();
    std::fs::remove_file(repo.join(".git/refs/git-mile/issue").join(STRAY)).unwrap();
    settle();
    let page = all_issues(&mcp).await;
    assert_eq!(page["unreadable"], json!([i(2)]), "{page}");
    write_ref_file(&repo, "issue", &i(2), tip.as_bytes());
    settle();
    let page = all_issues(&mcp).await;
    assert_eq!(item_ids(&page).len(), 5, "{page}");
    assert!(page.get("unreadable").is_none(), "{page}");
    let shown = ok(
        &mcp,
        "git_mile.show",
        json!({"entity": "issue", "id": i(2)}),
    )
    .await;
    assert_eq!(shown["title"], "Add dark mode");
    let stderr = mcp.shutdown().await;
    assert!(stderr.len() < 20_000, "{} bytes of stderr", stderr.len());
    assert!(stderr.contains("could not be decoded"), "{stderr}");
}

#[tokio::test]
async fn a_ref_file_git_cannot_decode_is_listed_as_unreadable_and_the_rest_is_served() {
    // Told by inotify (the default on Linux), and by file metadata.
    a_bad_ref_file_is_left_out(&[]).await;
    a_bad_ref_file_is_left_out(&[("GIT_MILE_NO_INOTIFY", "1")]).await;
}

#[test]
fn the_cli_lists_shows_and_pulls_past_a_bad_ref_file() {
    let sandbox = Sandbox::new();
    let (origin, a) = support::origin_and_clone(&sandbox);
    let one = sandbox.create(&a, "issue", "One", &[]);
    let two = sandbox.create(&a, "issue", "Two", &[]);
    let milestone = sandbox.create(&a, "milestone", "M", &[]);
    sandbox.mile_ok(&a, &["push"]);
    let b = sandbox.path("b");
    sandbox.git(
        sandbox.dir.path(),
        &["clone", "-q", origin.to_str().unwrap(), b.to_str().unwrap()],
    );
    sandbox.identity(&b, "Bob Example", "bob@example.com");
    sandbox.mile_ok(&b, &["pull"]);

    write_ref_file(&b, "issue", &two, b"not a sha\n");
    let page = sandbox.mile_json(&b, &["list"]);
    assert_eq!(item_ids(&page), std::slice::from_ref(&one), "{page}");
    assert_eq!(page["unreadable"], json!([two]), "{page}");
    let text = sandbox.mile_ok(&b, &["list"]);
    assert!(text.contains("One") && text.contains(&two), "{text}");
    for id in [two.as_str(), &two[..8]] {
        let err = sandbox.mile_err(&b, &["show", id], 1);
        assert!(
            err.contains(&two) && err.contains("cannot be read") && err.contains("git fsck"),
            "{err}"
        );
    }
    let err = sandbox.mile_err(&b, &["comment", &two, "--body", "hi"], 1);
    assert!(
        err.contains(&two) && err.contains("cannot be read"),
        "{err}"
    );
    assert_eq!(sandbox.mile_json(&b, &["show", &one])["title"], "One");

    // A pull still brings in the rest (git fetch itself dies on such a ref unless it is
    // kept out of its way) and names the damaged one.
    sandbox.mile_ok(&a, &["comment", &one, "--body", "from A"]);
    sandbox.mile_ok(&a, &["comment", &two, "--body", "from A"]);
    sandbox.mile_ok(&a, &["edit", &milestone, "--title", "M2"]);
    sandbox.mile_ok(&a, &["push"]);
    let output = sandbox.mile(&b, &["pull", "--json"]);
    assert_eq!(output.status.code(), Some(1), "{output:?}");
    let report: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(report["fast_forwarded"], 2, "{report}");
    let skipped = report["skipped"].as_array().unwrap();
    assert_eq!(skipped.len(), 1, "{report}");
    assert!(skipped[0].as_str().unwrap().contains(&two), "{report}");
    assert_eq!(
        sandbox.mile_json(&b, &["show", &one])["comments"][0]["body"],
        "from A"
    );
    assert_eq!(sandbox.mile_json(&b, &["show", &milestone])["title"], "M2");

    // A fetched copy that git cannot read is fetched again.
    let fetched = b.join(".git/refs/git-mile-remotes/origin/issue").join(&one);
    std::fs::write(&fetched, "junk\n").unwrap();
    std::fs::remove_file(b.join(".git/refs/git-mile/issue").join(&two)).unwrap();
    let pulled = sandbox.mile_json(&b, &["pull"]);
    assert_eq!(pulled["created"], 1, "{pulled}");
    assert_eq!(pulled["up_to_date"], 2, "{pulled}");
    assert!(std::fs::read_to_string(&fetched).unwrap().trim().len() == 40);
    assert_eq!(
        sandbox.mile_json(&b, &["show", &two])["comments"][0]["body"],
        "from A"
    );
}

/// A megabyte of text.
fn huge(c: char) -> String {
    std::iter::repeat_n(c, 1 << 20).collect()
}

/// A failed call's message and data (or the tool-level error text), which must be short.
async fn short_failure(mcp: &McpProcess, tool: &str, args: Value) -> String {
    let described = format!("{tool} with {}", excerpt_of(&args));
    let text = match call_raw(mcp, tool, args).await {
        Err(error) => {
            let data = error
                .data
                .as_ref()
                .map(Value::to_string)
                .unwrap_or_default();
            assert!(
                data.len() < 1_500,
                "{described}: data of {} bytes",
                data.len()
            );
            error.message.to_string()
        }
        Ok(result) => {
            assert_eq!(result.is_error, Some(true), "{described} succeeded");
            result.content[0].as_text().unwrap().text.clone()
        }
    };
    assert!(
        text.len() < 1_000,
        "{described}: {} bytes: {}",
        text.len(),
        &text[..300]
    );
    text
}

fn excerpt_of(args: &Value) -> String {
    let text = args.to_string();
    text.chars().take(120).collect()
}

#[tokio::test]
async fn huge_argument_values_are_quoted_in_excerpts_only() {
    let sandbox = Sandbox::new();
    let repo = world_repo(&sandbox, "repo");
    let mcp = sandbox.server(&repo, &[]).await;
    let big = huge('x');
    let quote = huge('"');
    let mut list_cases = vec![
        json!({"entity": big}),
        json!({"entity": "issue", "filter": big}),
        json!({"entity": "issue", "filter": format!("title == \"{big}")}),
        json!({"entity": "issue", "filter": format!("{big} == 1")}),
        json!({"entity": "issue", "sort": [big]}),
        json!({"entity": "issue", "sort": [format!("title:{big}")]}),
        json!({"entity": "issue", "sort": ["title", big]}),
        json!({"entity": "issue", "cursor": big}),
        json!({"entity": "issue", "limit": big}),
        json!({"entity": "issue", "includeClosed": big}),
        json!({"entity": "issue", "includeClosed": quote}),
        json!({"entity": "issue", "filter": [big]}),
    ];
    let mut unknown = serde_json::Map::new();
    unknown.insert("entity".into(), json!("issue"));
    unknown.insert(big.clone(), json!(1));
    list_cases.push(Value::Object(unknown.clone()));
    for args in list_cases {
        short_failure(&mcp, "git_mile.list", args).await;
    }
    let mut show_cases = vec![
        json!({"entity": big, "id": i(1)}),
        json!({"entity": "issue", "id": big}),
        json!({"entity": "issue", "id": quote}),
        json!({"entity": "milestone", "id": format!("{}{big}", m(1))}),
        json!({"entity": "issue", "id": [big]}),
    ];
    unknown.insert("id".into(), json!(i(1)));
    show_cases.push(Value::Object(unknown.clone()));
    for args in show_cases {
        short_failure(&mcp, "git_mile.show", args).await;
    }
    // The writes decode their arguments the same way.
    for (tool, args) in [
        ("git_mile.create", json!({"entity": big, "title": "t"})),
        ("git_mile.update", json!({"entity": "issue", "id": big})),
        (
            "git_mile.update",
            json!({"entity": "issue", "id": i(1), "status": big}),
        ),
        ("git_mile.comment", Value::Object(unknown.clone())),
    ] {
        short_failure(&mcp, tool, args).await;
    }
    // What the messages still say.
    let text = short_failure(&mcp, "git_mile.list", json!({"entity": big})).await;
    assert!(
        text.contains("unknown variant `xxxx") && text.contains("bytes)`, expected"),
        "{text}"
    );
    let text = short_failure(
        &mcp,
        "git_mile.list",
        json!({"entity": "issue", "sort": [big]}),
    )
    .await;
    assert!(text.contains("invalid sort key `xxx"), "{text}");
    assert!(text.contains(&format!("({} bytes)", 1 << 20)), "{text}");
    mcp.ping().await;
    let stderr = mcp.shutdown().await;
    assert!(
        stderr.len() < 20_000,
        "{} bytes of stderr: {}",
        stderr.len(),
        stderr.chars().take(500).collect::<String>()
    );
}
