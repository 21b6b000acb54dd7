//! The write tools through the binary and rmcp's client: `git_mile.create`,
//! `git_mile.update`, `git_mile.comment`, every argument and error, `--read-only`,
//! concurrent writers, sync with another clone, and nothing outside `refs/git-mile/` touched.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // assertions in tests

use crate::support;

use std::path::Path;

use mcp_testkit::McpProcess;
use serde_json::{Value, json};
use support::world::{i, m};
use support::{Sandbox, call_raw, data_of, ok, rpc_error, tool_error, world_repo, write_error};

/// Everything git shows of the working tree, the index, HEAD and the branches.
fn worktree_state(sandbox: &Sandbox, repo: &Path) -> (String, String, String, Vec<u8>) {
    (
        sandbox.git(
            repo,
            &[
                "--no-optional-locks",
                "status",
                "--porcelain=v2",
                "--branch",
                "--untracked-files=all",
            ],
        ),
        sandbox.git(repo, &["rev-parse", "HEAD"]),
        sandbox.git(
            repo,
            &["for-each-ref", "refs/heads", "refs/tags", "refs/remotes"],
        ),
        std::fs::read(repo.join(".git/index")).unwrap(),
    )
}

/// How many commits an entity's ref holds.
fn commits(sandbox: &Sandbox, repo: &Path, kind: &str, id: &str) -> usize {
    sandbox
        .git(
            repo,
            &["rev-list", "--count", &format!("refs/git-mile/{kind}/{id}")],
        )
        .trim()
        .parse()
        .unwrap()
}

/// The event types of an entity's ref, oldest first.
fn event_types(sandbox: &Sandbox, repo: &Path, kind: &str, id: &str) -> Vec<String> {
    sandbox
        .git(
            repo,
            &[
                "log",
                "--reverse",
                "--format=%s",
                &format!("refs/git-mile/{kind}/{id}"),
            ],
        )
        .lines()
        .map(|line| line.split_whitespace().nth(1).unwrap_or("").to_string())
        .collect()
}

/// `-32602`, with the error object in `data`; its message.
async fn invalid(mcp: &McpProcess, tool: &str, args: Value) -> String {
    let error = rpc_error(mcp, tool, args).await;
    assert_eq!(error.code.0, -32602, "{error:?}");
    assert_eq!(data_of(&error).code, "invalid_params");
    error.message.to_string()
}

async fn show(mcp: &McpProcess, entity: &str, id: &str) -> Value {
    ok(mcp, "git_mile.show", json!({"entity": entity, "id": id})).await
}

#[tokio::test]
async fn create_files_issues_and_milestones_and_answers_as_show_does() {
    let sandbox = Sandbox::new();
    let repo = world_repo(&sandbox, "repo");
    let before = worktree_state(&sandbox, &repo);
    let mcp = sandbox.server(&repo, &[]).await;

    // Every argument; the milestone in another spelling of its id, labels trimmed and
    // deduplicated.
    let made = ok(
        &mcp,
        "git_mile.create",
        json!({
            "entity": "issue", "title": "  Crash when offline ", "description": "Steps:\n1. go offline",
            "labels": ["bug", " p2", "bug"], "milestone": m(1).to_uppercase()
        }),
    )
    .await;
    let id = made["id"].as_str().unwrap().to_string();
    assert!(uuid::Uuid::parse_str(&id).is_ok(), "{made}");
    assert_eq!(made, show(&mcp, "issue", &id).await, "answers as show does");
    assert_eq!(made["title"], "Crash when offline");
    assert_eq!(made["description"], "Steps:\n1. go offline");
    assert_eq!(made["labels"], json!(["bug", "p2"]));
    assert_eq!(made["status"], "open");
    assert_eq!(made["kind"], "issue");
    assert_eq!(made["author"], "Ann Example");
    assert_eq!(
        made["milestone"],
        json!({"id": m(1), "title": "Milestone Alpha"})
    );
    assert_eq!(made["comments"], json!([]));
    // One event per change, authored with the user's identity.
    assert_eq!(
        event_types(&sandbox, &repo, "issue", &id),
        ["created", "attached"]
    );
    let author = sandbox.git(
        &repo,
        &[
            "log",
            "-1",
            "--format=%an <%ae>",
            &format!("refs/git-mile/issue/{id}"),
        ],
    );
    assert_eq!(author.trim(), "Ann Example <ann@example.com>");
    // The milestone counts its new open issue.
    assert_eq!(
        show(&mcp, "milestone", &m(1)).await["stats"]["open_issues"],
        3
    );

    // The fewest arguments; a milestone.
    let bare = ok(
        &mcp,
        "git_mile.create",
        json!({"entity": "issue", "title": "Bare"}),
    )
    .await;
    assert_eq!(bare["description"], "");
    assert_eq!(bare["labels"], json!([]));
    assert_eq!(bare["milestone"], Value::Null);
    let milestone = ok(
        &mcp,
        "git_mile.create",
        json!({"entity": "milestone", "title": "v3", "labels": ["next"]}),
    )
    .await;
    assert_eq!(milestone["kind"], "milestone");
    assert_eq!(
        milestone["stats"],
        json!({"comment_count": 0, "open_issues": 0})
    );
    assert!(milestone.get("milestone").is_none(), "{milestone}");

    // The CLI and list see them.
    let listed = sandbox.mile_json(&repo, &["list", "--filter", "title == \"Bare\""]);
    assert_eq!(listed["items"][0]["id"], bare["id"]);

    assert_eq!(worktree_state(&sandbox, &repo), before);
    mcp.shutdown().await;
}

#[tokio::test]
async fn create_refuses_bad_arguments_and_writes_nothing() {
    let sandbox = Sandbox::new();
    let repo = world_repo(&sandbox, "repo");
    let mcp = sandbox.server(&repo, &[]).await;
    let refs = || sandbox.git(&repo, &["for-each-ref", "refs/git-mile"]);
    let before = refs();

    for (args, says) in [
        (json!({"entity": "issue", "title": ""}), "title is empty"),
        (json!({"entity": "issue", "title": "   "}), "title is empty"),
        (
            json!({"entity": "issue", "title": "two\nlines"}),
            "one line",
        ),
        (
            json!({"entity": "issue", "title": "x".repeat(501)}),
            "longer than 500",
        ),
        (
            json!({"entity": "issue", "title": "t", "labels": [""]}),
            "invalid label",
        ),
        (
            json!({"entity": "issue", "title": "t", "description": "d".repeat(300 * 1024)}),
            "larger than 256 KiB",
        ),
        (
            json!({"entity": "milestone", "title": "t", "milestone": m(1)}),
            "issues only",
        ),
        (
            json!({"entity": "issue", "title": "t", "milestone": " "}),
            "milestone is empty",
        ),
    ] {
        let message = invalid(&mcp, "git_mile.create", args.clone()).await;
        assert!(message.contains(says), "{args}: {message}");
        assert!(message.len() < 400, "no echo of the input: {message}");
    }
    // Undecodable: -32600.
    for args in [
        json!({"entity": "issue"}),
        json!({"entity": "epic", "title": "t"}),
        json!({"entity": "issue", "title": "t", "labels": "bug"}),
        json!({"entity": "issue", "title": "t", "assignee": "bob"}),
    ] {
        let error = rpc_error(&mcp, "git_mile.create", args.clone()).await;
        assert_eq!(error.code.0, -32600, "{args}: {error:?}");
    }
    // An unknown or ambiguous milestone: tool-level, naming the milestone.
    let error = tool_error(
        &mcp,
        "git_mile.create",
        json!({"entity": "issue", "title": "t", "milestone": "abcdef12"}),
    )
    .await;
    assert_eq!(error["code"], "not_found");
    assert!(
        error["message"]
            .as_str()
            .unwrap()
            .starts_with("milestone `abcdef12` not found"),
        "{error}"
    );
    let error = tool_error(
        &mcp,
        "git_mile.create",
        json!({"entity": "issue", "title": "t", "milestone": "4d00"}),
    )
    .await;
    assert_eq!(error["code"], "ambiguous_id");
    assert!(
        error["message"].as_str().unwrap().contains(&m(2)),
        "{error}"
    );

    assert_eq!(refs(), before, "nothing was written");
    mcp.shutdown().await;
}

#[tokio::test]
async fn update_writes_one_event_per_change_and_nothing_when_nothing_differs() {
    let sandbox = Sandbox::new();
    let repo = world_repo(&sandbox, "repo");
    let before = worktree_state(&sandbox, &repo);
    let mcp = sandbox.server(&repo, &[]).await;
    let issue = i(1);
    let start = commits(&sandbox, &repo, "issue", &issue);

    // Every field at once, the id spelled as a URN: one event each.
    let updated = ok(
        &mcp,
        "git_mile.update",
        json!({
            "entity": "issue", "id": format!("urn:uuid:{issue}"), "title": "Login crash on 2.1",
            "description": "Crashes on login with SSO.", "status": "closed",
            "addLabels": ["sso", "bug"], "removeLabels": ["p1", "absent"], "milestone": m(2)
        }),
    )
    .await;
    assert_eq!(updated, show(&mcp, "issue", &issue).await);
    assert_eq!(updated["title"], "Login crash on 2.1");
    assert_eq!(updated["description"], "Crashes on login with SSO.");
    assert_eq!(updated["status"], "closed");
    assert_eq!(updated["labels"], json!(["bug", "sso"]));
    assert_eq!(
        updated["milestone"],
        json!({"id": m(2), "title": "Milestone Beta"})
    );
    let types = event_types(&sandbox, &repo, "issue", &issue);
    assert_eq!(
        types[types.len() - 6..],
        [
            "title_edited",
            "description_edited",
            "status_changed",
            "label_added",
            "label_removed",
            "attached"
        ]
    );
    let after = commits(&sandbox, &repo, "issue", &issue);
    assert_eq!(after, start + 6);

    // What it has already: nothing is written, the entity is answered.
    let same = ok(
        &mcp,
        "git_mile.update",
        json!({
            "entity": "issue", "id": issue, "title": "Login crash on 2.1", "status": "closed",
            "addLabels": ["bug"], "removeLabels": ["p1"], "milestone": m(2)
        }),
    )
    .await;
    assert_eq!(same, updated);
    assert_eq!(commits(&sandbox, &repo, "issue", &issue), after);

    // Detach with null, reopen; any spelling of the full id.
    let spelled = format!("{{{}}}", issue.to_uppercase());
    let detached = ok(
        &mcp,
        "git_mile.update",
        json!({"entity": "issue", "id": spelled, "milestone": null, "status": "open"}),
    )
    .await;
    assert_eq!(detached["milestone"], Value::Null);
    assert_eq!(detached["status"], "open");
    // Detaching what has no milestone writes nothing.
    let count = commits(&sandbox, &repo, "issue", &issue);
    ok(
        &mcp,
        "git_mile.update",
        json!({"entity": "issue", "id": issue, "milestone": null}),
    )
    .await;
    assert_eq!(commits(&sandbox, &repo, "issue", &issue), count);

    // A milestone: closed, relabelled; its open issues counted.
    let milestone = ok(
        &mcp,
        "git_mile.update",
        json!({"entity": "milestone", "id": m(1), "status": "closed", "addLabels": ["shipped"]}),
    )
    .await;
    assert_eq!(milestone["status"], "closed");
    assert_eq!(milestone["labels"], json!(["alpha", "shipped"]));
    assert_eq!(milestone["stats"]["open_issues"], 1);

    assert_eq!(worktree_state(&sandbox, &repo), before);
    mcp.shutdown().await;
}

#[tokio::test]
async fn update_refuses_bad_arguments_and_unknown_ids_and_writes_nothing() {
    let sandbox = Sandbox::new();
    let repo = world_repo(&sandbox, "repo");
    let mcp = sandbox.server(&repo, &[]).await;
    let refs = || sandbox.git(&repo, &["for-each-ref", "refs/git-mile"]);
    let before = refs();
    let issue = i(1);

    for (args, says) in [
        (
            json!({"entity": "issue", "id": issue, "status": "done"}),
            "unknown status `done`",
        ),
        (json!({"entity": "issue", "id": issue}), "nothing to update"),
        (
            json!({"entity": "issue", "id": "", "status": "closed"}),
            "id is empty",
        ),
        (
            json!({"entity": "issue", "id": issue, "milestone": ""}),
            "milestone is empty",
        ),
        (
            json!({"entity": "issue", "id": issue, "title": ""}),
            "title is empty",
        ),
        (
            json!({"entity": "issue", "id": issue, "title": "a\rb"}),
            "one line",
        ),
        (
            json!({"entity": "issue", "id": issue, "addLabels": ["x"], "removeLabels": ["x"]}),
            "both added and removed",
        ),
        (
            json!({"entity": "issue", "id": issue, "addLabels": ["a\u{7}"]}),
            "invalid label",
        ),
        (
            json!({"entity": "milestone", "id": m(1), "milestone": null}),
            "issues only",
        ),
        (
            json!({"entity": "issue", "id": issue, "status": "x".repeat(100_000)}),
            "unknown status",
        ),
    ] {
        let message = invalid(&mcp, "git_mile.update", args.clone()).await;
        assert!(message.contains(says), "{args}: {message}");
        assert!(
            message.len() < 500,
            "no echo of the input: {}",
            message.len()
        );
    }
    for args in [
        json!({"entity": "issue", "status": "closed"}),
        json!({"entity": "issue", "id": issue, "status": true}),
        json!({"entity": "issue", "id": issue, "labels": ["x"]}),
        json!({"entity": "issue", "id": issue, "milestone": 7}),
    ] {
        let error = rpc_error(&mcp, "git_mile.update", args.clone()).await;
        assert_eq!(error.code.0, -32600, "{args}: {error:?}");
    }

    // Unknown, ambiguous, or of the other kind: tool-level.
    let error = tool_error(
        &mcp,
        "git_mile.update",
        json!({"entity": "issue", "id": "00000000-0000-4000-8000-000000000000", "status": "closed"}),
    )
    .await;
    assert_eq!(error["code"], "not_found");
    assert!(
        error["message"].as_str().unwrap().starts_with("issue `"),
        "{error}"
    );
    let error = tool_error(
        &mcp,
        "git_mile.update",
        json!({"entity": "milestone", "id": issue, "status": "closed"}),
    )
    .await;
    assert_eq!(error["code"], "not_found");
    let error = tool_error(
        &mcp,
        "git_mile.update",
        json!({"entity": "issue", "id": "4900", "status": "closed"}),
    )
    .await;
    assert_eq!(error["code"], "ambiguous_id");
    let long = "f".repeat(50_000);
    let error = tool_error(
        &mcp,
        "git_mile.update",
        json!({"entity": "issue", "id": long, "status": "closed"}),
    )
    .await;
    assert_eq!(error["code"], "not_found");
    assert!(error["message"].as_str().unwrap().len() < 600, "{error}");
    // An unknown milestone: nothing at all is written, not even the other fields.
    let error = tool_error(
        &mcp,
        "git_mile.update",
        json!({"entity": "issue", "id": issue, "status": "closed", "milestone": "abcdef12"}),
    )
    .await;
    assert_eq!(error["code"], "not_found");
    assert!(
        error["message"]
            .as_str()
            .unwrap()
            .starts_with("milestone `abcdef12`"),
        "{error}"
    );

    assert_eq!(refs(), before, "nothing was written");
    mcp.shutdown().await;
}

#[tokio::test]
async fn comment_adds_one_event_and_refuses_empty_bodies_and_unknown_ids() {
    let sandbox = Sandbox::new();
    let repo = world_repo(&sandbox, "repo");
    let mcp = sandbox.server(&repo, &[]).await;
    // A new issue, named by a prefix of its id (the fixture's ids share long prefixes).
    let issue = ok(
        &mcp,
        "git_mile.create",
        json!({"entity": "issue", "title": "To discuss"}),
    )
    .await["id"]
        .as_str()
        .unwrap()
        .to_string();
    let start = commits(&sandbox, &repo, "issue", &issue);

    let body = "Looks fine.\n\n```rust\nfn main() {}\n```\n";
    let commented = ok(
        &mcp,
        "git_mile.comment",
        json!({"entity": "issue", "id": &issue[..8], "body": body}),
    )
    .await;
    assert_eq!(commented, show(&mcp, "issue", &issue).await);
    let comments = commented["comments"].as_array().unwrap();
    assert_eq!(comments.len(), 1);
    assert_eq!(comments[0]["body"], body, "kept as given");
    assert_eq!(comments[0]["author"], "Ann Example");
    assert_eq!(commented["stats"]["comment_count"], 1);
    assert_eq!(commented["updated"], comments[0]["ts"]);
    assert_eq!(commits(&sandbox, &repo, "issue", &issue), start + 1);
    // Not idempotent: the same body twice is two comments.
    let again = ok(
        &mcp,
        "git_mile.comment",
        json!({"entity": "issue", "id": issue, "body": body}),
    )
    .await;
    assert_eq!(again["stats"]["comment_count"], 2);
    // On a milestone.
    let milestone = ok(
        &mcp,
        "git_mile.comment",
        json!({"entity": "milestone", "id": m(2), "body": "Retro on Friday"}),
    )
    .await;
    assert_eq!(milestone["comments"][0]["body"], "Retro on Friday");

    let refs = || sandbox.git(&repo, &["for-each-ref", "refs/git-mile"]);
    let before = refs();
    for body in ["", " \n\t"] {
        let message = invalid(
            &mcp,
            "git_mile.comment",
            json!({"entity": "issue", "id": issue, "body": body}),
        )
        .await;
        assert!(message.contains("body is empty"), "{message}");
    }
    let message = invalid(
        &mcp,
        "git_mile.comment",
        json!({"entity": "issue", "id": "  ", "body": "b"}),
    )
    .await;
    assert!(message.contains("id is empty"), "{message}");
    let message = invalid(
        &mcp,
        "git_mile.comment",
        json!({"entity": "issue", "id": issue, "body": "b".repeat(257 * 1024)}),
    )
    .await;
    assert!(message.contains("larger than 256 KiB"), "{message}");
    let error = rpc_error(
        &mcp,
        "git_mile.comment",
        json!({"entity": "issue", "id": issue}),
    )
    .await;
    assert_eq!(error.code.0, -32600);
    let error = tool_error(
        &mcp,
        "git_mile.comment",
        json!({"entity": "issue", "id": "deadbeef", "body": "hi"}),
    )
    .await;
    assert_eq!(error["code"], "not_found");
    assert_eq!(refs(), before, "nothing was written");
    mcp.shutdown().await;
}

#[tokio::test]
async fn read_only_offers_the_reads_alone() {
    let sandbox = Sandbox::new();
    let repo = world_repo(&sandbox, "repo");
    let mcp = sandbox.server(&repo, &["--read-only"]).await;
    let names: Vec<String> = mcp
        .tools()
        .await
        .iter()
        .map(|t| t.name.to_string())
        .collect();
    assert_eq!(names, ["git_mile.list", "git_mile.log", "git_mile.show"]);
    let instructions = mcp.server_info().instructions.clone().unwrap_or_default();
    assert!(!instructions.contains("git_mile.create"), "{instructions}");
    let refs = sandbox.git(&repo, &["for-each-ref", "refs/git-mile"]);
    for (tool, args) in [
        ("git_mile.create", json!({"entity": "issue", "title": "t"})),
        (
            "git_mile.update",
            json!({"entity": "issue", "id": i(1), "status": "closed"}),
        ),
        (
            "git_mile.comment",
            json!({"entity": "issue", "id": i(1), "body": "b"}),
        ),
    ] {
        let error = rpc_error(&mcp, tool, args).await;
        assert_eq!(error.code.0, -32601, "{error:?}");
        assert!(error.message.contains("read-only"), "{error:?}");
        assert!(
            error.message.contains("git_mile.list, git_mile.show"),
            "{error:?}"
        );
    }
    assert_eq!(show(&mcp, "issue", &i(1)).await["status"], "open");
    assert_eq!(sandbox.git(&repo, &["for-each-ref", "refs/git-mile"]), refs);
    mcp.shutdown().await;

    // The default server lists all five, with the annotations of the issue.
    let mcp = sandbox.server(&repo, &[]).await;
    let tools = mcp.tools().await;
    let instructions = mcp.server_info().instructions.clone().unwrap_or_default();
    assert!(instructions.contains("git_mile.create"), "{instructions}");
    for tool in &tools {
        let a = tool.annotations.as_ref().expect("annotations");
        match tool.name.as_ref() {
            "git_mile.list" | "git_mile.show" | "git_mile.log" => {
                assert_eq!(a.read_only_hint, Some(true))
            }
            name => {
                // The specification's defaults (readOnlyHint and idempotentHint false)
                // are left out of the listing.
                assert!(!a.read_only_hint.unwrap_or(false), "{name}");
                assert_eq!(a.destructive_hint, Some(false), "{name}");
                let idempotent = name == "git_mile.update";
                assert_eq!(a.idempotent_hint.unwrap_or(false), idempotent, "{name}");
                assert!(tool.title.is_some() && tool.icons.is_some(), "{name}");
                let schema = tool.output_schema.as_ref().expect("outputSchema");
                assert_eq!(schema["type"], "object", "{name}");
                assert_eq!(tool.input_schema["additionalProperties"], false, "{name}");
            }
        }
    }
    mcp.shutdown().await;
}

#[tokio::test]
async fn without_a_git_identity_nothing_is_written() {
    let sandbox = Sandbox::new();
    let repo = world_repo(&sandbox, "repo");
    sandbox.git(&repo, &["config", "--unset", "user.name"]);
    sandbox.git(&repo, &["config", "--unset", "user.email"]);
    let refs = sandbox.git(&repo, &["for-each-ref", "refs/git-mile"]);
    let mcp = sandbox.server(&repo, &[]).await;
    for (tool, args) in [
        ("git_mile.create", json!({"entity": "issue", "title": "t"})),
        (
            "git_mile.comment",
            json!({"entity": "issue", "id": i(1), "body": "b"}),
        ),
        (
            "git_mile.update",
            json!({"entity": "issue", "id": i(1), "status": "closed"}),
        ),
    ] {
        let error = tool_error(&mcp, tool, args).await;
        assert_eq!(error["code"], "no_identity", "{tool}");
        assert_eq!(error["retryable"], false);
        assert!(
            error["hint"].as_str().unwrap().contains("user.email"),
            "{error}"
        );
    }
    assert_eq!(sandbox.git(&repo, &["for-each-ref", "refs/git-mile"]), refs);
    mcp.shutdown().await;
}

#[tokio::test]
async fn a_ref_held_locked_is_a_conflict_naming_the_entity() {
    let sandbox = Sandbox::new();
    let repo = world_repo(&sandbox, "repo");
    let mcp = sandbox.server(&repo, &[]).await;
    let issue = i(2);
    // Another writer that never lets go: its lock file stays fresh for longer than the
    // server's patience (10 s).
    let lock = repo.join(format!(".git/refs/git-mile/issue/{issue}.lock"));
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let holder = {
        let (lock, stop) = (lock.clone(), stop.clone());
        std::thread::spawn(move || {
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                std::fs::write(&lock, "held\n").unwrap();
                std::thread::sleep(std::time::Duration::from_millis(500));
            }
            std::fs::remove_file(&lock).unwrap();
        })
    };
    std::thread::sleep(std::time::Duration::from_millis(100));
    let count = commits(&sandbox, &repo, "issue", &issue);
    let error = tool_error(
        &mcp,
        "git_mile.comment",
        json!({"entity": "issue", "id": issue, "body": "b"}),
    )
    .await;
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    holder.join().unwrap();
    assert_eq!(error["code"], "conflict", "{error}");
    assert_eq!(error["retryable"], false);
    let message = error["message"].as_str().unwrap();
    assert!(message.contains(&format!("issue `{issue}`")), "{message}");
    assert!(message.contains("nothing was written"), "{message}");
    assert_eq!(commits(&sandbox, &repo, "issue", &issue), count);
    // Once the lock is gone, the same call works.
    let commented = ok(
        &mcp,
        "git_mile.comment",
        json!({"entity": "issue", "id": issue, "body": "b"}),
    )
    .await;
    assert_eq!(commented["stats"]["comment_count"], 1);
    mcp.shutdown().await;
}

#[tokio::test]
async fn two_servers_writing_one_issue_lose_no_event() {
    let sandbox = Sandbox::new();
    let repo = world_repo(&sandbox, "repo");
    let a = sandbox.server(&repo, &[]).await;
    let b = sandbox.server(&repo, &[]).await;
    let issue = i(4);
    const N: usize = 15;
    let writer = |mcp: &'static McpProcess, who: &'static str| {
        let issue = issue.clone();
        async move {
            for n in 0..N {
                ok(
                    mcp,
                    "git_mile.comment",
                    json!({"entity": "issue", "id": issue, "body": format!("{who} {n}")}),
                )
                .await;
                ok(
                    mcp,
                    "git_mile.update",
                    json!({"entity": "issue", "id": issue, "addLabels": [format!("{who}-{n}")]}),
                )
                .await;
            }
        }
    };
    // The clients live as long as the test; leaking them gives the writers 'static borrows.
    let a: &'static McpProcess = Box::leak(Box::new(a));
    let b: &'static McpProcess = Box::leak(Box::new(b));
    tokio::join!(writer(a, "a"), writer(b, "b"));
    let seen = show(a, "issue", &issue).await;
    assert_eq!(seen, show(b, "issue", &issue).await);
    let bodies: std::collections::BTreeSet<&str> = seen["comments"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["body"].as_str().unwrap())
        .collect();
    assert_eq!(bodies.len(), 2 * N, "{seen}");
    let labels = seen["labels"].as_array().unwrap();
    assert_eq!(labels.len(), 2 * N, "{seen}");
    // Every event is on the ref, once: 1 creation + 2 × N × 2.
    assert_eq!(commits(&sandbox, &repo, "issue", &issue), 1 + 4 * N);
}

#[tokio::test]
async fn writes_then_pull_from_a_clone_that_wrote_too_converge() {
    let sandbox = Sandbox::new();
    let (_origin, a) = support::origin_and_clone(&sandbox);
    let shared = sandbox.create(&a, "issue", "Shared issue", &["--label", "triage"]);
    sandbox.mile_ok(&a, &["push"]);
    let b = sandbox.path("b");
    sandbox.git(
        sandbox.dir.path(),
        &[
            "clone",
            "-q",
            sandbox.path("origin.git").to_str().unwrap(),
            "b",
        ],
    );
    sandbox.identity(&b, "Bob Example", "bob@example.com");
    sandbox.mile_ok(&b, &["pull"]);
    let before_a = worktree_state(&sandbox, &a);

    // a writes through MCP; b through the CLI, to the same issue and a new one.
    let mcp = sandbox.server(&a, &[]).await;
    ok(
        &mcp,
        "git_mile.update",
        json!({"entity": "issue", "id": shared, "status": "closed", "removeLabels": ["triage"], "addLabels": ["done"]}),
    )
    .await;
    ok(
        &mcp,
        "git_mile.comment",
        json!({"entity": "issue", "id": shared, "body": "Fixed on a"}),
    )
    .await;
    let from_a = ok(
        &mcp,
        "git_mile.create",
        json!({"entity": "issue", "title": "Filed on a"}),
    )
    .await["id"]
        .as_str()
        .unwrap()
        .to_string();
    sandbox.mile_ok(&b, &["comment", &shared, "--body", "Seen on b"]);
    sandbox.mile_ok(&b, &["label", &shared, "--add", "b-label"]);
    let from_b = sandbox.create(&b, "issue", "Filed on b", &[]);

    // b pushes; a pulls (merging), pushes; b pulls.
    sandbox.mile_ok(&b, &["push"]);
    sandbox.mile_ok(&a, &["pull"]);
    sandbox.mile_ok(&a, &["push"]);
    sandbox.mile_ok(&b, &["pull"]);

    // The server that wrote sees the merged state; both clones hold the same.
    let merged = ok(
        &mcp,
        "git_mile.show",
        json!({"entity": "issue", "id": shared}),
    )
    .await;
    let on_b = sandbox.mile_json(&b, &["show", &shared]);
    assert_eq!(merged, on_b);
    assert_eq!(merged["status"], "closed");
    assert_eq!(merged["labels"], json!(["b-label", "done"]));
    let bodies: Vec<&str> = merged["comments"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["body"].as_str().unwrap())
        .collect();
    assert_eq!(bodies.len(), 2, "{merged}");
    assert!(
        bodies.contains(&"Fixed on a") && bodies.contains(&"Seen on b"),
        "{bodies:?}"
    );
    for id in [&from_a, &from_b] {
        assert_eq!(
            sandbox.mile_json(&a, &["show", id]),
            sandbox.mile_json(&b, &["show", id])
        );
    }
    assert_eq!(
        sandbox.git(&a, &["rev-parse", &format!("refs/git-mile/issue/{shared}")]),
        sandbox.git(&b, &["rev-parse", &format!("refs/git-mile/issue/{shared}")]),
        "the same history"
    );
    assert_eq!(worktree_state(&sandbox, &a), before_a);
    mcp.shutdown().await;
}

#[tokio::test]
async fn a_server_that_writes_keeps_the_cache_file_current() {
    let sandbox = Sandbox::new();
    let repo = world_repo(&sandbox, "repo");
    let refresh = || {
        let output = sandbox.mile(&repo, &["list", "-vv"]);
        assert!(output.status.success());
        String::from_utf8_lossy(&output.stderr)
            .lines()
            .find(|l| l.contains("catalog refreshed"))
            .unwrap_or_default()
            .to_string()
    };
    let mcp = sandbox.server(&repo, &[]).await;
    show(&mcp, "issue", &i(1)).await;
    // 99 writes to one issue: the next process replays that one entity.
    for n in 0..99 {
        ok(
            &mcp,
            "git_mile.comment",
            json!({"entity": "issue", "id": i(1), "body": format!("note {n}")}),
        )
        .await;
    }
    assert!(
        refresh().contains("replayed: 1, reused: 6"),
        "{}",
        refresh()
    );
    // The 100th replay since the server wrote the cache file writes it again.
    ok(
        &mcp,
        "git_mile.comment",
        json!({"entity": "issue", "id": i(2), "body": "the 100th"}),
    )
    .await;
    let line = refresh();
    assert!(line.contains("replayed: 0, reused: 7"), "{line}");
    mcp.shutdown().await;
}

#[tokio::test]
async fn arguments_are_checked_before_the_repository_is_read() {
    let sandbox = Sandbox::new();
    let nowhere = sandbox.path("not-a-repo");
    std::fs::create_dir_all(&nowhere).unwrap();
    let mcp = sandbox.server(&nowhere, &[]).await;
    let many: Vec<String> = (0..101).map(|n| format!("l{n}")).collect();
    let huge = "x".repeat(1_000_000);
    for (tool, args, says) in [
        (
            "git_mile.update",
            json!({"entity": "issue", "id": "abcd", "title": "x".repeat(600)}),
            "longer than 500",
        ),
        (
            "git_mile.update",
            json!({"entity": "issue", "id": "abcd", "addLabels": many}),
            "101 labels to add given",
        ),
        (
            "git_mile.update",
            json!({"entity": "issue", "id": "abcd", "removeLabels": [" "]}),
            "invalid label",
        ),
        (
            "git_mile.update",
            json!({"entity": "issue", "id": "abcd", "description": "d".repeat(300 * 1024)}),
            "larger than 256 KiB",
        ),
        (
            "git_mile.comment",
            json!({"entity": "issue", "id": "abcd", "body": "b".repeat(300 * 1024)}),
            "larger than 256 KiB",
        ),
        (
            "git_mile.create",
            json!({"entity": "issue", "title": "a\u{2028}b", "milestone": "zzzz"}),
            "one line",
        ),
        (
            "git_mile.create",
            json!({"entity": "issue", "title": "bell\u{7}"}),
            "control characters",
        ),
        (
            "git_mile.create",
            json!({"entity": "issue", "title": "t", "labels": [huge]}),
            "invalid label",
        ),
    ] {
        let message = invalid(&mcp, tool, args).await;
        assert!(message.contains(says), "{tool}: {message}");
        assert!(
            message.len() < 600,
            "no echo of the input: {}",
            message.len()
        );
    }
    // Valid arguments reach the repository, and learn there is none.
    let error = tool_error(
        &mcp,
        "git_mile.comment",
        json!({"entity": "issue", "id": "abcd", "body": "b"}),
    )
    .await;
    assert_eq!(error["code"], "no_repository");
    mcp.shutdown().await;
}

#[tokio::test]
async fn a_lock_left_behind_is_a_conflict_at_once_and_an_unusable_identity_writes_nothing() {
    let sandbox = Sandbox::new();
    let repo = world_repo(&sandbox, "repo");
    let mcp = sandbox.server(&repo, &[]).await;
    let refs = || sandbox.git(&repo, &["for-each-ref", "refs/git-mile"]);
    let before = refs();
    for lock in [
        format!(".git/refs/git-mile/issue/{}.lock", i(2)),
        ".git/packed-refs.lock".to_string(),
    ] {
        let path = repo.join(&lock);
        std::fs::write(&path, "").unwrap();
        let old = std::process::Command::new("touch")
            .args(["-d", "1 minute ago"])
            .arg(&path)
            .status()
            .unwrap();
        assert!(old.success());
        let started = std::time::Instant::now();
        let error = tool_error(
            &mcp,
            "git_mile.comment",
            json!({"entity": "issue", "id": i(2), "body": "b"}),
        )
        .await;
        assert!(
            started.elapsed() < std::time::Duration::from_secs(5),
            "at once"
        );
        assert_eq!(error["code"], "conflict", "{lock}: {error}");
        let message = error["message"].as_str().unwrap();
        assert!(message.contains(&format!("issue `{}`", i(2))), "{message}");
        assert!(message.contains(&lock[5..]), "names the lock: {message}");
        assert!(
            error["hint"]
                .as_str()
                .unwrap()
                .contains("remove the lock file")
        );
        std::fs::remove_file(&path).unwrap();
    }
    assert_eq!(refs(), before);
    mcp.shutdown().await;

    // An identity git would refuse in a signature.
    let mcp = sandbox
        .server_with_env(&repo, &[], &[("GIT_AUTHOR_NAME", "Ev<il>")])
        .await;
    let error = tool_error(
        &mcp,
        "git_mile.create",
        json!({"entity": "issue", "title": "t"}),
    )
    .await;
    assert_eq!(error["code"], "no_identity", "{error}");
    assert_eq!(refs(), before);
    mcp.shutdown().await;
}

#[tokio::test]
async fn cursors_after_the_longest_titles_page_on() {
    // Found by fuzzing: an issue's title and its milestone's title, 500 four-byte characters
    // each, made a cursor of ~5,400 characters that the server refused as forged on the next
    // page.
    let sandbox = Sandbox::new();
    let repo = world_repo(&sandbox, "repo");
    let mcp = sandbox.server(&repo, &[]).await;
    let long = |c: &str| c.repeat(500);
    let milestone = ok(
        &mcp,
        "git_mile.create",
        json!({"entity": "milestone", "title": long("🦀")}),
    )
    .await;
    let mut made = Vec::new();
    for c in ["🦊", "🦋", "🦉"] {
        let issue = ok(
            &mcp,
            "git_mile.create",
            json!({"entity": "issue", "title": long(c), "milestone": milestone["id"]}),
        )
        .await;
        made.push(issue["id"].as_str().unwrap().to_string());
    }
    let filter = format!("milestone == \"{}\"", milestone["id"].as_str().unwrap());
    let args = |cursor: Option<&str>| {
        let mut a = json!({
            "entity": "issue", "filter": filter,
            "sort": ["title", "milestone"], "limit": 1
        });
        if let Some(c) = cursor {
            a["cursor"] = json!(c);
        }
        a
    };
    let mut seen = Vec::new();
    let mut cursor: Option<String> = None;
    let mut longest = 0;
    loop {
        let page = ok(&mcp, "git_mile.list", args(cursor.as_deref())).await;
        for item in page["items"].as_array().unwrap() {
            seen.push(item["id"].as_str().unwrap().to_string());
        }
        match page["nextCursor"].as_str() {
            Some(next) => {
                longest = longest.max(next.len());
                cursor = Some(next.to_string());
            }
            None => break,
        }
    }
    assert!(longest > 4096, "the cursors were {longest} characters long");
    // 🦉 U+1F989 < 🦊 U+1F98A < 🦋 U+1F98B.
    assert_eq!(seen, [made[2].clone(), made[0].clone(), made[1].clone()]);
    mcp.shutdown().await;
}

/// `git gc` (or `git prune`) removes an empty fan-out directory of `.git/objects/` at the
/// moment a write puts an object into it. Made to happen on every try, deterministically:
/// `.git/objects/4b`, where the empty tree of every event commit goes, is a link to nowhere,
/// so gix's `mkdir` finds it there and the rename of the object into it fails with ENOENT,
/// as when the directory was removed between the two. The server tries each object again (a
/// bounded number of times, see the store's unit tests for the try that succeeds); when the
/// directory keeps vanishing, the call fails as retryable, a tool-level `repository_busy`
/// (not a -32001 internal error), nothing written; once gc is done, the same call works.
#[cfg(unix)]
#[tokio::test]
async fn a_write_that_git_gc_keeps_removing_a_directory_under_is_retryable() {
    let sandbox = Sandbox::new();
    // No commit: no object at all yet, so the empty tree is written by the first event.
    let repo = sandbox.path("repo");
    std::fs::create_dir_all(&repo).unwrap();
    sandbox.git(&repo, &["init", "-q", "-b", "main"]);
    sandbox.identity(&repo, "Ann Example", "ann@example.com");
    let fan_out = repo.join(".git/objects/4b");
    assert!(!fan_out.exists());
    std::os::unix::fs::symlink(sandbox.path("removed-by-gc"), &fan_out).unwrap();

    let mcp = sandbox.server(&repo, &[]).await;
    let create = json!({"entity": "issue", "title": "written while gc runs"});
    let result = call_raw(&mcp, "git_mile.create", create.clone())
        .await
        .unwrap_or_else(|e| panic!("not a tool-level failure: {e:?}"));
    let error = write_error(&result);
    assert_eq!(error["code"], "repository_busy", "{error}");
    assert_eq!(error["retryable"], true, "{error}");
    let message = error["message"].as_str().unwrap();
    assert!(message.contains("vanished"), "{message}");
    assert!(message.contains("nothing was written"), "{message}");
    assert!(
        error["hint"].as_str().unwrap().contains("git gc"),
        "{error}"
    );
    assert_eq!(sandbox.git(&repo, &["for-each-ref", "refs/git-mile"]), "");

    // gc is done: the same call, as the error said, works.
    std::fs::remove_file(&fan_out).unwrap();
    let issue = ok(&mcp, "git_mile.create", create).await;
    assert_eq!(issue["title"], "written while gc runs");
    let id = issue["id"].as_str().unwrap();
    let commented = ok(
        &mcp,
        "git_mile.comment",
        json!({"entity": "issue", "id": id, "body": "b"}),
    )
    .await;
    assert_eq!(commented["stats"]["comment_count"], 1);
    assert_eq!(commits(&sandbox, &repo, "issue", id), 2);
    sandbox.git(&repo, &["fsck", "--strict"]);
    mcp.shutdown().await;
}
