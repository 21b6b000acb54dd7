//! `get_stack_health` with GitHub and Jira: facts of linked pull requests and issues from
//! local stand-ins replaying realistic JSON, prune reasons, and a service that cannot be asked
//! being one error for the whole answer, never a failed call.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // assertions in tests

use crate::support;

use mcp_testkit::McpProcess;
use serde_json::{Value, json};
use support::health::*;
use support::mock::{MockServer, Reply, Request, gh_error, gh_user};
use support::*;

// ---------------------------------------------------------------------------------------------
// Helpers: the GitHub and Jira stand-ins
// ---------------------------------------------------------------------------------------------

/// A pull request as `GET /repos/octo/widgets/pulls/{number}` returns it: open, or closed
/// and merged (`merged_at` set), or closed unmerged.
fn gh_pull(number: u32, head_ref: &str, state: &str, merged: bool) -> Value {
    let api = "https://api.github.com/repos/octo/widgets";
    let sha = format!("{number:040x}");
    let closed = state == "closed";
    json!({
        "url": format!("{api}/pulls/{number}"),
        "id": 1_800_000_000u64 + u64::from(number),
        "node_id": format!("PR_kwDOABNfTc5{number:08}"),
        "html_url": format!("https://github.com/octo/widgets/pull/{number}"),
        "number": number,
        "state": state,
        "locked": false,
        "title": format!("Change {head_ref}"),
        "user": gh_user("octocat", 583_231),
        "created_at": "2026-03-01T10:15:00Z",
        "updated_at": "2026-03-02T08:00:00Z",
        "closed_at": if closed { json!("2026-03-02T08:00:00Z") } else { Value::Null },
        "merged_at": if merged { json!("2026-03-02T08:00:00Z") } else { Value::Null },
        "merge_commit_sha": "9049f1265b7d61be4a8904a9a27120d2064dab3b",
        "head": {"label": format!("octo:{head_ref}"), "ref": head_ref, "sha": sha, "user": gh_user("octo", 9919)},
        "base": {"label": "octo:main", "ref": "main", "sha": "7638417db6d59f3c431d3e1f261cc637155684cd", "user": gh_user("octo", 9919)},
        "author_association": "MEMBER",
        "draft": false,
        "merged": merged,
        "mergeable": if closed { Value::Null } else { json!(true) },
        "mergeable_state": if closed { "unknown" } else { "clean" },
        "merged_by": if merged { gh_user("octocat", 583_231) } else { Value::Null },
        "comments": 1,
        "commits": 2,
        "additions": 10,
        "deletions": 2,
        "changed_files": 1,
    })
}

/// GitHub: #11 merged, #12 open, #14 closed unmerged, everything else 404.
fn github_api(req: &Request) -> Reply {
    match req.path.as_str() {
        "/repos/octo/widgets/pulls/11" => Reply::json(gh_pull(11, "pr-merged", "closed", true)),
        "/repos/octo/widgets/pulls/12" => Reply::json(gh_pull(12, "pr-open", "open", false)),
        "/repos/octo/widgets/pulls/14" => Reply::json(gh_pull(14, "pr-closed", "closed", false)),
        _ => gh_error(404, "Not Found"),
    }
}

fn jira_issue(origin: &str, key: &str, status: &str) -> Value {
    let (id, category) = if status == "Done" {
        (
            10_002,
            json!({"id": 3, "key": "done", "colorName": "green", "name": "Done"}),
        )
    } else {
        (
            10_001,
            json!({"id": 4, "key": "indeterminate", "colorName": "yellow", "name": "In Progress"}),
        )
    };
    json!({
        "expand": "renderedFields,names,schema,operations,editmeta,changelog,versionedRepresentations",
        "id": "10042",
        "self": format!("{origin}/rest/api/3/issue/10042"),
        "key": key,
        "fields": {
            "summary": format!("Work on {key}"),
            "status": {
                "self": format!("https://acme.atlassian.net/rest/api/3/status/{id}"),
                "description": "",
                "iconUrl": "https://acme.atlassian.net/",
                "name": status,
                "id": id.to_string(),
                "statusCategory": category,
            },
            "assignee": null,
            "description": null,
        },
    })
}

/// Jira: PROJ-1 and PROJ-3 done, PROJ-2 in progress, everything else 404.
fn jira_api(req: &Request) -> Reply {
    let key = req.path.rsplit_once("/rest/api/3/issue/").map(|(_, k)| k);
    match key {
        Some(key @ ("PROJ-1" | "PROJ-3")) => Reply::json(jira_issue(&req.origin, key, "Done")),
        Some(key @ "PROJ-2") => Reply::json(jira_issue(&req.origin, key, "In Progress")),
        _ => Reply::json(json!({"errorMessages": ["Issue does not exist or you do not have permission to see it."], "errors": {}}))
            .status(404),
    }
}

/// Start twig-mcp against the GitHub stand-in at `api`, with a token.
async fn start_github(fx: &Fixture, api: &str) -> McpProcess {
    fx.start(
        &[],
        &[("GITHUB_API_URL", api), ("GITHUB_TOKEN", GITHUB_TOKEN)],
    )
    .await
}

/// main with four branches, each with a commit of its own, linked to PRs #11 (merged),
/// #12 (open), #13 (unknown to GitHub) and #14 (closed unmerged); `origin` is
/// github.com/octo/widgets.
fn pr_fixture() -> Fixture {
    let fx = new_repo();
    let origin = "https://github.com/octo/widgets.git";
    fx.git(&["remote", "add", "origin", origin]);
    let links = [
        ("pr-closed", 14),
        ("pr-gone", 13),
        ("pr-merged", 11),
        ("pr-open", 12),
    ];
    let stacks: Vec<(&str, &str)> = links.iter().map(|(name, _)| ("main", *name)).collect();
    grow(&fx, &stacks);
    let branches = links
        .iter()
        .map(|(name, pr)| branch(name, None, Some(*pr)))
        .collect();
    let deps: Vec<(&str, &str)> = stacks.iter().map(|(main, name)| (*name, *main)).collect();
    fx.write_state(&state(branches, &deps, &[("main", true)], json!([])));
    fx
}

// ---------------------------------------------------------------------------------------------
// 8–9. Remote facts: GitHub pull requests, Jira issues
// ---------------------------------------------------------------------------------------------

#[tokio::test]
async fn pull_request_facts_merged_open_and_unknown() {
    let gh = MockServer::start(github_api).await;
    let fx = pr_fixture();
    let mcp = start_github(&fx, &gh.origin).await;
    let (data, _) = health(&mcp, json!({})).await;
    assert!(data.get("github").is_none(), "{data:#}");
    let merged = entry(&data, "pr-merged");
    assert_eq!(
        merged["pull_request"],
        json!({"status": "ok", "data": {"number": 11, "state": "closed", "merged": true}})
    );
    assert_eq!(merged["merged"], true);
    assert_eq!(merged["prune"], true);
    // Not merged by git: it has a commit main lacks.
    assert_eq!(merged["against"][0]["merged"], false);
    let open = entry(&data, "pr-open");
    assert_eq!(
        open["pull_request"],
        json!({"status": "ok", "data": {"number": 12, "state": "open", "merged": false}})
    );
    assert_eq!(open["merged"], false);
    assert_eq!(open["prune"], false);
    let closed = entry(&data, "pr-closed");
    assert_eq!(
        closed["pull_request"],
        json!({"status": "ok", "data": {"number": 14, "state": "closed", "merged": false}})
    );
    assert_eq!(
        (&closed["merged"], &closed["prune"]),
        (&json!(false), &json!(false))
    );
    let gone = entry(&data, "pr-gone");
    assert_eq!(gone["pull_request"]["status"], "error", "{gone}");
    let error = &gone["pull_request"]["error"];
    assert_eq!(error["code"], "not_found");
    assert_eq!(
        error["message"],
        "Pull request #13 in octo/widgets not found"
    );
    assert_eq!(error["retryable"], false);
    assert_eq!(gone["merged"], false);
    assert_eq!(
        data["prune"],
        json!([{"branch": "pr-merged", "reason": "pull request #11 merged"}])
    );
    let mut targets = gh.targets();
    targets.sort();
    assert_eq!(
        targets,
        [
            "GET /repos/octo/widgets/pulls/11",
            "GET /repos/octo/widgets/pulls/12",
            "GET /repos/octo/widgets/pulls/13",
            "GET /repos/octo/widgets/pulls/14",
        ]
    );

    // Checked out, a branch whose PR is merged is no prune candidate.
    fx.git(&["checkout", "-q", "pr-merged"]);
    let (data, _) = health(&mcp, json!({})).await;
    assert_eq!(entry(&data, "pr-merged")["merged"], true);
    assert_eq!(entry(&data, "pr-merged")["prune"], false);
    assert_eq!(data["prune"], json!([]));

    // Squash-merged, then moved onto main: empty by git alone, merged by its PR — counted
    // once, as merged.
    fx.git(&["checkout", "-q", "main"]);
    fx.git(&["branch", "-f", "pr-merged", "main"]);
    let (data, _) = health(&mcp, json!({})).await;
    let merged = entry(&data, "pr-merged");
    assert_eq!(merged["against"][0]["ahead"], 0, "{merged}");
    assert_eq!(merged["merged"], true, "{merged}");
    assert!(merged.get("empty").is_none(), "{merged}");
    let empty = data["branches"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|b| b["empty"] == true)
        .count();
    assert_eq!(
        data["summary"]["empty"], empty as u64,
        "{:#}",
        data["summary"]
    );
    assert_eq!(data["summary"]["merged"], 1, "{:#}", data["summary"]);
    mcp.shutdown().await;
}

#[tokio::test]
async fn github_unavailable_is_one_top_level_error() {
    let fx = pr_fixture();
    let check = |data: &Value, code: &str, retryable: bool| {
        let error = &data["github"];
        assert_eq!(error["code"], code, "{data:#}");
        assert_eq!(error["retryable"], retryable, "{data:#}");
        for health in data["branches"].as_array().unwrap() {
            assert!(health.get("pull_request").is_none(), "{health}");
            assert_eq!(health["prune"], false, "{health}");
        }
        assert_eq!(data["prune"], json!([]));
        assert_eq!(
            order(data),
            ["main", "pr-closed", "pr-gone", "pr-merged", "pr-open"]
        );
    };

    // HTTP 500 for every request.
    let failing = MockServer::start(|_: &Request| gh_error(500, "Server Error")).await;
    let mcp = start_github(&fx, &failing.origin).await;
    let (data, _) = health(&mcp, json!({})).await;
    check(&data, "network_error", true);
    mcp.shutdown().await;

    // Nothing listens there.
    let closed = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        format!("http://{}", listener.local_addr().unwrap())
    };
    let mcp = start_github(&fx, &closed).await;
    let (data, _) = health(&mcp, json!({})).await;
    check(&data, "network_error", true);
    mcp.shutdown().await;

    // No credentials: nothing is asked.
    let gh = MockServer::start(github_api).await;
    let mcp = fx.start(&[], &[("GITHUB_API_URL", &gh.origin)]).await;
    let (data, _) = health(&mcp, json!({})).await;
    check(&data, "credentials_missing", false);
    assert_eq!(data["github"]["message"], "GitHub credentials not found");
    assert!(gh.requests().is_empty(), "{:?}", gh.targets());
    mcp.shutdown().await;
}

#[tokio::test]
async fn jira_done_issue_prunes_and_a_merged_pr_takes_precedence() {
    let gh = MockServer::start(github_api).await;
    let jira = MockServer::start(jira_api).await;
    let fx = new_repo();
    fx.git(&[
        "remote",
        "add",
        "origin",
        "https://github.com/octo/widgets.git",
    ]);
    grow(
        &fx,
        &[("main", "both"), ("main", "j-done"), ("main", "j-open")],
    );
    fx.write_state(&state(
        vec![
            branch("both", Some("PROJ-3"), Some(11)),
            branch("j-done", Some("PROJ-1"), None),
            branch("j-open", Some("PROJ-2"), Some(12)),
        ],
        &[("both", "main"), ("j-done", "main"), ("j-open", "main")],
        &[("main", true)],
        json!([]),
    ));
    fx.write_netrc("machine 127.0.0.1\n  login dev@example.com\n  password ATATT3xFfGF0jira\n");
    let env = [
        ("GITHUB_API_URL", gh.origin.as_str()),
        ("GITHUB_TOKEN", GITHUB_TOKEN),
        ("JIRA_HOST", jira.origin.as_str()),
    ];

    let mcp = fx.start(&[], &env).await;
    let (data, _) = health(&mcp, json!({})).await;
    assert!(
        data.get("github").is_none() && data.get("jira").is_none(),
        "{data:#}"
    );
    let done = entry(&data, "j-done");
    assert_eq!(
        done["jira_issue"],
        json!({"status": "ok", "data": {"key": "PROJ-1", "status": "Done", "done": true}})
    );
    assert_eq!(done["prune"], true);
    assert_eq!(done["merged"], false, "a done issue is not a merge");
    let open = entry(&data, "j-open");
    assert_eq!(
        open["jira_issue"],
        json!({"status": "ok", "data": {"key": "PROJ-2", "status": "In Progress", "done": false}})
    );
    assert_eq!(open["prune"], false);
    assert_eq!(entry(&data, "both")["merged"], true);
    assert_eq!(
        data["prune"],
        json!([
            {"branch": "both", "reason": "pull request #11 merged"},
            {"branch": "j-done", "reason": "Jira PROJ-1 done"},
        ])
    );
    mcp.shutdown().await;

    // Disabled services: one top-level error each, no facts.
    for (flag, service, field) in [
        ("jira", "Jira", "jira_issue"),
        ("github", "GitHub", "pull_request"),
    ] {
        let mcp = fx.start(&["--disable", flag], &env).await;
        let (data, _) = health(&mcp, json!({})).await;
        let error = &data[flag];
        assert_eq!(error["code"], "invalid_params", "{data:#}");
        assert_eq!(
            error["message"],
            format!("{service} integration is disabled (--disable {flag})")
        );
        assert_eq!(error["retryable"], false);
        for health in data["branches"].as_array().unwrap() {
            assert!(health.get(field).is_none(), "{health}");
        }
        let other = if flag == "jira" { "github" } else { "jira" };
        assert!(data.get(other).is_none(), "{data:#}");
        mcp.shutdown().await;
    }
}
