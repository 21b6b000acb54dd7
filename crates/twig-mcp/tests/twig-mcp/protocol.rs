//! The MCP surface of twig-mcp: handshake, tool list snapshot, flags, prompts, resources,
//! subscriptions, stdout hygiene and the read-only guarantee.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // assertions in tests

use crate::support;

use std::{collections::BTreeMap, path::Path, process::Stdio, time::Duration};

use serde_json::{Value, json};
use support::*;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use twig_mcp::errors;

const LOCAL_TOOLS: [&str; 8] = [
    "get_branch_metadata",
    "get_branch_stack",
    "get_branch_tree",
    "get_current_branch",
    "get_stack_health",
    "get_worktrees",
    "list_branches",
    "list_repositories",
];

#[tokio::test]
async fn handshake_reports_our_name_version_and_instructions() {
    let fx = stacked();
    let mcp = fx.start(&[], &[]).await;
    let info = mcp.server_info();
    let server = info.server_info.expect("serverInfo");
    assert_eq!(server.name, "twig-mcp");
    assert_eq!(server.version, env!("CARGO_PKG_VERSION"));
    assert_eq!(
        info.instructions.as_deref(),
        Some(
            "Twig MCP server. Provides read-only access to branch metadata, Jira issues, and GitHub PRs for the current repository. Before changing a stack, call get_stack_health: what needs a rebase and in which order, what is merged, stale or missing, and what could be pruned."
        )
    );
    assert!(info.capabilities.tools.is_some());
    assert!(info.capabilities.prompts.is_some());
    let resources = info.capabilities.resources.expect("resources capability");
    assert_eq!(resources.subscribe, Some(true));
}

/// Any change to what clients see of the tools (names, descriptions, schemas, annotations)
/// must be deliberate: regenerate with `UPDATE_SNAPSHOTS=1 cargo test`.
#[tokio::test]
async fn tool_list_matches_the_snapshot() {
    let fx = Fixture::empty();
    let mcp = fx.start_in(&fx.outside(), &[], &[]).await;
    let tools = mcp.tools().await;
    assert_eq!(tools.len(), 13);
    for tool in &tools {
        let annotations = tool.annotations.as_ref().expect("annotations");
        assert_eq!(annotations.read_only_hint, Some(true), "{}", tool.name);
        // The write hints mean nothing for a read-only tool: the listing leaves them out.
        assert_eq!(annotations.idempotent_hint, None, "{}", tool.name);
        assert_eq!(annotations.destructive_hint, None, "{}", tool.name);
        assert!(tool.title.is_some(), "{}: a title", tool.name);
        assert_eq!(
            tool.icons.as_ref().map(Vec::len),
            Some(1),
            "{}: its toolset's icon",
            tool.name
        );
        let schema = tool.output_schema.as_ref().expect("outputSchema");
        assert_eq!(schema.get("type"), Some(&json!("object")), "{}", tool.name);
    }
    mcp.assert_tools_snapshot(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/snapshots/tools.json"),
    )
    .await;
}

#[tokio::test]
async fn disable_flags_hide_tools_prompts_and_resources() {
    let fx = stacked();
    let mcp = fx
        .start(
            &[
                "--disable",
                "github",
                "--disable",
                "jira",
                "--disable",
                "prompts",
                "--disable",
                "resources",
            ],
            &[],
        )
        .await;
    let mut names: Vec<String> = mcp
        .peer()
        .list_all_tools()
        .await
        .unwrap()
        .into_iter()
        .map(|t| t.name.to_string())
        .collect();
    names.sort();
    assert_eq!(names, LOCAL_TOOLS);
    let info = mcp.server_info();
    assert!(info.capabilities.prompts.is_none());
    assert!(info.capabilities.resources.is_none());
    let result = mcp
        .peer()
        .call_tool(
            rmcp::model::CallToolRequestParams::new("get_pull_request")
                .with_arguments(json!({"pr_number": 1}).as_object().unwrap().clone()),
        )
        .await;
    assert!(result.is_err(), "a disabled tool cannot be called");

    let mcp = fx.start(&["--disable", "jira"], &[]).await;
    let tools = mcp.peer().list_all_tools().await.unwrap();
    assert_eq!(tools.len(), 11);
    assert!(tools.iter().all(|t| !t.name.contains("jira")));
}

#[tokio::test]
async fn bad_command_line_fails_fast_with_usage_on_stderr() {
    let output = tokio::process::Command::new(BIN)
        .args(["--disable", "everything"])
        .output()
        .await
        .unwrap();
    assert!(!output.status.success());
    assert!(output.stdout.is_empty());
    assert!(String::from_utf8_lossy(&output.stderr).contains("invalid value"));
}

#[tokio::test]
async fn stack_status_prompt() {
    let fx = stacked();
    // main moves on: every stack on it needs a rebase.
    std::fs::write(fx.repo_path().join("next.txt"), "next\n").unwrap();
    fx.git(&["add", "next.txt"]);
    fx.git(&["commit", "-q", "-m", "next"]);
    fx.git(&["checkout", "-q", "feat/auth"]);
    let mcp = fx.start(&[], &[]).await;
    let prompts = mcp.peer().list_all_prompts().await.unwrap();
    let names: Vec<&str> = prompts.iter().map(|p| p.name.as_str()).collect();
    assert_eq!(names, ["stack-status", "branch-context"]);

    let text = mcp.prompt_text("stack-status", json!({})).await;
    assert_eq!(
        text,
        "Current branch: feat/auth\n\
         \n\
         Branch trees:\n\
         main\n\
         ├── feat/auth (PROJ-101, #42)  ↓1 empty\n\
         │   └── feat/auth-ui (PROJ-102)  empty\n\
         ├── feat/billing (#7)  ↓1 empty\n\
         └── scratch [orphan]\n\
         \n\
         [orphan]: no parent git has; drawn under the default root main as `twig tree` draws it, not a dependency\n\
         \n\
         Health (5 branches): 2 need a rebase, 0 merged, 3 empty (no commit of their own, not merged), 0 stale (last commit over 30 days ago), 1 without a git branch, 0 orphaned\n\
         Rebase order (parents first):\n\
         - feat/auth onto main\n\
         - feat/auth-ui onto feat/auth\n\
         - feat/billing onto main\n\
         Git branches twig does not track: scratch\n\
         \n\
         Branches:\n\
         - feat/auth: Jira PROJ-101, PR #42, parent main\n\
         - feat/auth-ui: Jira PROJ-102, PR none, parent feat/auth\n\
         - feat/billing: Jira none, PR #7, parent main\n\
         - gone/remote-only: Jira PROJ-9, PR none, parent none\n\
         - main: Jira none, PR none, parent none\n\
         \n\
         Summarize the current state of this PR stack, including review status and CI results."
    );

    let fx = Fixture::empty();
    let mcp = fx.start_in(&fx.outside(), &[], &[]).await;
    let text = mcp.prompt_text("stack-status", json!({})).await;
    assert_eq!(text, "No repository or branch data available.");
}

#[tokio::test]
async fn branch_context_prompt() {
    let fx = stacked();
    fx.git(&["checkout", "-q", "feat/auth-ui"]);
    let mcp = fx.start(&[], &[]).await;
    let text = mcp.prompt_text("branch-context", json!({})).await;
    assert_eq!(
        text,
        "Branch: feat/auth-ui (PROJ-102)\n\
         Parent branch: feat/auth\n\
         Jira issue: PROJ-102\n\
         Pull request: none\n\
         Created: 2026-03-01T10:00:00.123456789+00:00\n\
         \n\
         Describe what I'm working on based on this branch context, including its Jira issue and pull request."
    );
    let text = mcp
        .prompt_text("branch-context", json!({"branch": "feat/billing"}))
        .await;
    assert!(
        text.starts_with("Branch: feat/billing (#7)\nParent branch: main\n"),
        "{text}"
    );

    let head = fx.git(&["rev-parse", "HEAD"]);
    fx.git(&["checkout", "-q", &head]);
    let text = mcp.prompt_text("branch-context", json!({})).await;
    assert_eq!(
        text,
        "I'm not currently on a git branch. What should I work on?"
    );

    let fx = Fixture::empty();
    let mcp = fx.start_in(&fx.outside(), &[], &[]).await;
    let text = mcp.prompt_text("branch-context", json!({})).await;
    assert_eq!(
        text,
        "I'm not currently on a git branch. What should I work on?"
    );
    let err = mcp
        .peer()
        .get_prompt(rmcp::model::GetPromptRequestParams::new("nope"))
        .await;
    assert!(err.is_err(), "unknown prompt must be a protocol error");
}

#[tokio::test]
async fn repo_resources_list_and_read() {
    let fx = stacked();
    let mcp = fx.start(&[], &[]).await;
    let resources = mcp.peer().list_all_resources().await.unwrap();
    let uris: Vec<&str> = resources.iter().map(|r| r.uri.as_str()).collect();
    assert_eq!(
        uris,
        [
            "twig://repo/tree",
            "twig://repo/branches",
            "twig://repo/health"
        ]
    );
    let templates = mcp.peer().list_all_resource_templates().await.unwrap();
    assert_eq!(templates[0].uri_template, "twig://branch/{name}/context");

    let tree = mcp.read_resource_json("twig://repo/tree").await;
    assert_eq!(tree["status"], "ok");
    assert_eq!(tree["data"]["root"], "main");
    assert!(
        tree["data"]["tree_text"]
            .as_str()
            .unwrap()
            .contains("feat/auth-ui")
    );

    let branches = mcp.read_resource_json("twig://repo/branches").await;
    assert_eq!(branches["status"], "ok");
    assert_eq!(branches["data"]["branches"].as_array().unwrap().len(), 5);

    // The health resource is the tool's default answer, with its page.
    let health = mcp.read_resource_json("twig://repo/health").await;
    let tool: Value = mcp.call_ok("get_stack_health", json!({})).await;
    assert_eq!(health["status"], "ok");
    assert_eq!(health["data"], tool);
    assert_eq!(health["page"]["total"], 5);
    assert_eq!(health["data"]["untracked"], json!(["scratch"]));

    let err = mcp.read_resource("twig://nope").await;
    assert!(err.is_err());

    // Without state the resource carries the structured error.
    let fx = Fixture::repo(&[]);
    let mcp = fx.start(&[], &[]).await;
    let tree = mcp.read_resource_json("twig://repo/tree").await;
    assert_eq!(tree["status"], "error");
    assert_eq!(tree["error"]["code"], "no_twig_state");
}

#[tokio::test]
async fn branch_context_resource_degrades_per_part() {
    let fx = stacked();
    fx.git(&["remote", "add", "origin", "git@github.com:octo/widgets.git"]);
    // No credentials, no JIRA_HOST: the remote parts are structured errors.
    let mcp = fx.start(&[], &[]).await;
    let ctx = mcp
        .read_resource_json("twig://branch/feat%2Fauth/context")
        .await;
    assert_eq!(ctx["branch"], "feat/auth");
    assert_eq!(ctx["metadata"]["status"], "ok");
    assert_eq!(ctx["metadata"]["data"]["pr_number"], 42);
    assert_eq!(ctx["jira_issue"]["error"]["code"], "credentials_missing");
    assert_eq!(ctx["pull_request"]["error"]["code"], "credentials_missing");

    let ctx = mcp
        .read_resource_json("twig://branch/scratch/context")
        .await;
    assert_eq!(ctx["metadata"]["error"]["code"], "not_found");
    assert_eq!(ctx["jira_issue"]["error"]["code"], "not_found");

    let ctx = mcp
        .read_resource_json("twig://branch/feat%2Fauth-ui/context")
        .await;
    assert_eq!(ctx["pull_request"]["error"]["code"], "not_found");
    assert_eq!(
        ctx["pull_request"]["error"]["message"],
        "Branch 'feat/auth-ui' has no linked GitHub PR"
    );

    let mcp = fx.start(&["--disable", "github"], &[]).await;
    let ctx = mcp
        .read_resource_json("twig://branch/feat%2Fauth/context")
        .await;
    assert!(
        ctx["pull_request"]["error"]["message"]
            .as_str()
            .unwrap()
            .contains("--disable github")
    );
}

#[tokio::test]
#[allow(deprecated)]
async fn subscribers_hear_about_state_and_head_changes() {
    let fx = stacked();
    let mcp = fx.start(&[], &[]).await;
    for uri in ["twig://repo/tree", "twig://repo/branches"] {
        mcp.peer()
            .subscribe(rmcp::model::SubscribeRequestParams::new(uri))
            .await
            .unwrap();
    }
    assert!(
        mcp.peer()
            .subscribe(rmcp::model::SubscribeRequestParams::new(
                "twig://branch/x/context"
            ))
            .await
            .is_err(),
        "only the repository resources are subscribable"
    );
    let wait = Duration::from_secs(10);
    assert_eq!(
        mcp.next_resource_update(Duration::from_millis(300)).await,
        None,
        "no change yet"
    );

    // twig rewrites its state file.
    fx.write_state(&state(
        vec![branch("feat/new", None, None)],
        &[],
        &[("main", true)],
        json!([]),
    ));
    let mut seen = vec![
        mcp.next_resource_update(wait)
            .await
            .expect("update after state change"),
        mcp.next_resource_update(wait).await.expect("second update"),
    ];
    seen.sort();
    assert_eq!(seen, ["twig://repo/branches", "twig://repo/tree"]);
    while mcp
        .next_resource_update(Duration::from_millis(300))
        .await
        .is_some()
    {}

    // Checking out another branch changes HEAD.
    fx.git(&["checkout", "-q", "feat/billing"]);
    assert!(
        mcp.next_resource_update(wait).await.is_some(),
        "update after checkout"
    );
    while mcp
        .next_resource_update(Duration::from_millis(300))
        .await
        .is_some()
    {}

    mcp.peer()
        .unsubscribe(rmcp::model::UnsubscribeRequestParams::new(
            "twig://repo/tree",
        ))
        .await
        .unwrap();
    mcp.peer()
        .unsubscribe(rmcp::model::UnsubscribeRequestParams::new(
            "twig://repo/branches",
        ))
        .await
        .unwrap();
    fx.write_state(&state(vec![], &[], &[], json!([])));
    assert_eq!(
        mcp.next_resource_update(Duration::from_millis(500)).await,
        None
    );
}

/// The health moves with the branches: making, moving and deleting one (loose or packed)
/// updates `twig://repo/health` (and the tree), without any change to the state file.
#[tokio::test]
#[allow(deprecated)]
async fn health_subscribers_hear_about_branch_changes() {
    let fx = stacked();
    let mcp = fx.start(&[], &[]).await;
    mcp.peer()
        .subscribe(rmcp::model::SubscribeRequestParams::new(
            "twig://repo/health",
        ))
        .await
        .unwrap();
    let wait = Duration::from_secs(10);
    let drain = async || {
        while mcp
            .next_resource_update(Duration::from_millis(300))
            .await
            .is_some()
        {}
    };
    assert_eq!(
        mcp.next_resource_update(Duration::from_millis(300)).await,
        None,
        "no change yet"
    );
    fx.git(&["branch", "nested/new-branch"]);
    assert_eq!(
        mcp.next_resource_update(wait).await.as_deref(),
        Some("twig://repo/health"),
        "a new branch (in a new directory)"
    );
    drain().await;
    // A commit moves a branch that is not checked out here (no HEAD change).
    let tip = fx.git(&["commit-tree", "-p", "HEAD", "-m", "moved", "HEAD^{tree}"]);
    fx.git(&["update-ref", "refs/heads/feat/billing", &tip]);
    assert!(
        mcp.next_resource_update(wait).await.is_some(),
        "a moved branch"
    );
    drain().await;
    let health: Value = mcp.call_ok("get_stack_health", json!({})).await;
    let billing = health["branches"]
        .as_array()
        .unwrap()
        .iter()
        .find(|b| b["branch"] == "feat/billing")
        .unwrap();
    assert_eq!(billing["against"][0]["ahead"], 1, "{billing}");
    fx.git(&["pack-refs", "--all"]);
    assert!(
        mcp.next_resource_update(wait).await.is_some(),
        "refs packed"
    );
    drain().await;
    fx.git(&["branch", "-D", "nested/new-branch"]);
    assert!(
        mcp.next_resource_update(wait).await.is_some(),
        "a deleted branch"
    );
}

/// Drive the binary by hand: every stdout line must be a JSON-RPC frame, even at -vvv.
#[tokio::test]
async fn stdout_carries_only_protocol_frames() {
    let fx = stacked();
    fx.write_netrc("machine 127.0.0.1 login me password secret-jira-token\n");
    let mut child = tokio::process::Command::new(BIN)
        .arg("-vvv")
        .current_dir(fx.repo_path())
        .env_clear()
        .env("HOME", fx.home())
        .env("JIRA_HOST", "http://127.0.0.1:9")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let frames = [
        json!({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"0"}}}),
        json!({"jsonrpc":"2.0","method":"notifications/initialized"}),
        json!({"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"get_branch_tree","arguments":{}}}),
        json!({"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"get_branch_metadata","arguments":{"branch":"nope"}}}),
        json!({"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"get_pull_request","arguments":{}}}),
        json!({"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"list_jira_issues","arguments":{"project":"PROJ"}}}),
        json!({"jsonrpc":"2.0","id":6,"method":"prompts/get","params":{"name":"stack-status"}}),
        json!({"jsonrpc":"2.0","id":7,"method":"resources/read","params":{"uri":"twig://branch/feat%2Fauth/context"}}),
        json!({"jsonrpc":"2.0","id":8,"method":"resources/subscribe","params":{"uri":"twig://repo/tree"}}),
    ];
    for frame in &frames {
        stdin
            .write_all(format!("{frame}\n").as_bytes())
            .await
            .unwrap();
    }
    stdin.write_all(b"this is not json\n").await.unwrap();
    stdin.flush().await.unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let mut ids = Vec::new();
    while ids.len() < 8 {
        let line = tokio::time::timeout(Duration::from_secs(30), lines.next_line())
            .await
            .unwrap()
            .unwrap()
            .expect("server closed stdout early");
        let frame: Value = serde_json::from_str(&line)
            .unwrap_or_else(|e| panic!("non-JSON on stdout ({e}): {line}"));
        assert_eq!(frame["jsonrpc"], "2.0");
        if let Some(id) = frame.get("id").and_then(Value::as_i64) {
            ids.push(id);
        }
    }
    drop(stdin);
    let rest = tokio::time::timeout(Duration::from_secs(30), async {
        let mut rest = Vec::new();
        while let Ok(Some(line)) = lines.next_line().await {
            rest.push(line);
        }
        rest
    })
    .await
    .unwrap();
    for line in rest {
        let _: Value = serde_json::from_str(&line)
            .unwrap_or_else(|e| panic!("non-JSON on stdout ({e}): {line}"));
    }
    let output = child.wait_with_output().await.unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("DEBUG") || stderr.contains("TRACE"),
        "-vvv logs go to stderr: {stderr}"
    );
    assert!(
        stderr.contains("127.0.0.1:9"),
        "the Jira call was made: {stderr}"
    );
    assert!(
        !stderr.contains("secret-jira-token"),
        "a secret reached the log: {stderr}"
    );
}

#[tokio::test]
async fn quiet_by_default_verbose_on_request() {
    let fx = stacked();
    let mcp = fx.start(&[], &[]).await;
    mcp.call_ok::<Value>("get_current_branch", json!({})).await;
    let stderr = mcp.shutdown().await;
    assert!(!stderr.contains("INFO"), "default level is WARN: {stderr}");

    let mcp = fx.start(&["-v"], &[]).await;
    mcp.call_ok::<Value>("get_current_branch", json!({})).await;
    let stderr = mcp.shutdown().await;
    assert!(stderr.contains("INFO"), "-v logs INFO: {stderr}");
    assert!(!stderr.contains("DEBUG"), "-v stops at INFO: {stderr}");
}

fn snapshot_tree(root: &Path) -> BTreeMap<String, (Vec<u8>, Option<std::time::SystemTime>)> {
    let mut out = BTreeMap::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let entry = entry.unwrap();
            let path = entry.path();
            let meta = entry.metadata().unwrap();
            let key = path.strip_prefix(root).unwrap().display().to_string();
            if meta.is_dir() {
                out.insert(key, (Vec::new(), None));
                stack.push(path);
            } else {
                out.insert(key, (std::fs::read(&path).unwrap(), meta.modified().ok()));
            }
        }
    }
    out
}

/// A sweep of every tool, prompt and resource leaves the repository, its .git and .twig
/// byte-for-byte unchanged (and untouched: same modification times).
#[tokio::test]
#[allow(deprecated)]
async fn full_sweep_leaves_the_repository_unchanged() {
    let fx = stacked();
    fx.git(&[
        "remote",
        "add",
        "origin",
        "https://github.com/octo/widgets.git",
    ]);
    std::fs::write(fx.repo_path().join("dirty.txt"), "untracked\n").unwrap();
    std::fs::write(fx.repo_path().join("README.md"), "modified\n").unwrap();
    fx.git(&["checkout", "-q", "feat/auth"]);
    fx.write_netrc("machine 127.0.0.1 login me@example.com password jira-token\n");
    let before = snapshot_tree(&fx.repo_path());
    let mcp = fx
        .start(
            &[],
            &[
                ("GITHUB_TOKEN", "ghp_test"),
                ("GITHUB_API_URL", "http://127.0.0.1:9"),
                ("JIRA_HOST", "http://127.0.0.1:9"),
            ],
        )
        .await;
    let tools = mcp.peer().list_all_tools().await.unwrap();
    assert_eq!(tools.len(), 13);
    for tool in tools {
        let args = match tool.name.as_ref() {
            "get_branch_metadata" => json!({"branch": "feat/auth"}),
            "get_branch_tree" => json!({"health": true}),
            "list_jira_issues" => json!({"project": "PROJ"}),
            _ => json!({}),
        };
        let result = mcp.call_envelope::<Value>(&tool.name, args).await;
        if LOCAL_TOOLS.contains(&tool.name.as_ref()) {
            assert!(result.is_ok(), "{}: {result:?}", tool.name);
        } else {
            // The remote services are unreachable (port 9): each call gets that far.
            let err = result.expect_err(&tool.name);
            assert_eq!(err.code, errors::NETWORK_ERROR, "{}: {err:?}", tool.name);
        }
    }
    let text = mcp.prompt_text("stack-status", json!({})).await;
    assert!(text.starts_with("Current branch: feat/auth"), "{text}");
    let text = mcp.prompt_text("branch-context", json!({})).await;
    assert!(text.starts_with("Branch: feat/auth"), "{text}");
    assert_eq!(
        mcp.read_resource_json("twig://repo/tree").await["status"],
        "ok"
    );
    assert_eq!(
        mcp.read_resource_json("twig://repo/branches").await["status"],
        "ok"
    );
    // GitHub and Jira are unreachable: the health says so once, and answers.
    let health = mcp.read_resource_json("twig://repo/health").await;
    assert_eq!(health["status"], "ok");
    assert_eq!(health["data"]["github"]["code"], "network_error");
    assert_eq!(health["data"]["jira"]["code"], "network_error");
    let ctx = mcp
        .read_resource_json("twig://branch/feat%2Fauth/context")
        .await;
    assert_eq!(ctx["metadata"]["status"], "ok");
    for uri in ["twig://repo/tree", "twig://repo/health"] {
        mcp.peer()
            .subscribe(rmcp::model::SubscribeRequestParams::new(uri))
            .await
            .unwrap();
    }
    mcp.shutdown().await;
    let after = snapshot_tree(&fx.repo_path());
    let changed: Vec<&String> = before
        .keys()
        .chain(after.keys())
        .filter(|k| before.get(*k) != after.get(*k))
        .collect();
    assert!(changed.is_empty(), "the sweep changed: {changed:?}");
}

#[tokio::test]
async fn error_codes_are_snake_case_on_the_wire() {
    let fx = Fixture::empty();
    let mcp = fx.start_in(&fx.outside(), &[], &[]).await;
    let result = mcp.call("get_current_branch", json!({})).await;
    let structured = result.structured_content.unwrap();
    assert_eq!(structured["status"], "error");
    assert_eq!(structured["error"]["code"], "no_repo");
}

/// Clients of protocol 2026-07-28 (no `initialize`) subscribe with `subscriptions/listen`.
#[tokio::test]
async fn listen_subscribers_of_the_2026_protocol_hear_about_changes() {
    use rmcp::{
        ClientServiceExt,
        model::{ProtocolVersion, ServerNotification, SubscriptionFilter},
        service::ClientLifecycleMode,
        transport::TokioChildProcess,
    };
    let fx = stacked();
    let mut command = tokio::process::Command::new(BIN);
    command
        .current_dir(fx.repo_path())
        .env_clear()
        .env("HOME", fx.home())
        .kill_on_drop(true);
    let (transport, _stderr) = TokioChildProcess::builder(command)
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let client = tokio::time::timeout(
        Duration::from_secs(30),
        ().serve_with_lifecycle(
            transport,
            ClientLifecycleMode::Discover {
                preferred_versions: vec![ProtocolVersion::V_2026_07_28],
            },
        ),
    )
    .await
    .unwrap()
    .unwrap();
    let mut filter = SubscriptionFilter::new();
    filter.resource_subscriptions = Some(vec![
        "twig://repo/tree".to_string(),
        "twig://branch/x/context".to_string(),
    ]);
    let mut subscription = client.peer().listen(filter).await.unwrap();
    assert_eq!(
        subscription.acknowledged().resource_subscriptions,
        Some(vec!["twig://repo/tree".to_string()]),
        "only the repository resources are subscribable"
    );
    fx.git(&["checkout", "-q", "feat/auth"]);
    let notification = tokio::time::timeout(Duration::from_secs(10), subscription.next())
        .await
        .expect("an update after checkout")
        .unwrap()
        .expect("subscription open");
    match notification {
        ServerNotification::ResourceUpdatedNotification(n) => {
            assert_eq!(n.params.uri, "twig://repo/tree")
        }
        other => panic!("unexpected notification {other:?}"),
    }
    let _ = subscription.cancel().await;
    let _ = client.cancel().await;
}

/// `--repo ..` (a relative path) serves the same repository, and its file watching works.
#[tokio::test]
#[allow(deprecated)]
async fn relative_repo_flag_is_resolved_for_tools_and_subscriptions() {
    let fx = stacked();
    let sub = fx.repo_path().join("src");
    std::fs::create_dir_all(&sub).unwrap();
    let mcp = fx.start_in(&sub, &["--repo", ".."], &[]).await;
    let data: Value = mcp
        .call_ok("get_branch_metadata", json!({"branch": "feat/auth"}))
        .await;
    assert_eq!(data["pr_number"], 42);
    mcp.peer()
        .subscribe(rmcp::model::SubscribeRequestParams::new("twig://repo/tree"))
        .await
        .unwrap();
    fx.git(&["checkout", "-q", "feat/billing"]);
    assert_eq!(
        mcp.next_resource_update(Duration::from_secs(10))
            .await
            .as_deref(),
        Some("twig://repo/tree")
    );
}
