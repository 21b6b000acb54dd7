//! The GitHub and Jira tools (and the branch context resource) through the built binary,
//! against local mocks of GitHub REST v3 and Jira Cloud REST v3 that record every request.
// Helpers fail the test by panicking; clippy does not see them as test code.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::support;

use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use mcp_common::{ErrorCode, Page, WireError};
use mcp_testkit::McpProcess;
use serde_json::{Value, json};
use support::mock::{MockServer, Reply, Request, base64, gh_error, gh_user};
use support::*;
use twig_mcp::errors;

// ---------------------------------------------------------------------------------------------
// Constants and fixtures
// ---------------------------------------------------------------------------------------------

const GITHUB_TOKEN: &str = "ghp_16C7e42F292c6912E7710c838347Ae178B4a";
const NETRC_LOGIN: &str = "octocat";
const NETRC_PASSWORD: &str = "gho_netrcSecret9b1f0c77e2d4";
const JIRA_LOGIN: &str = "dev@example.com";
const JIRA_TOKEN: &str = "ATATT3xFfGF0jiraSecret5d2c81";

/// The numeric id of octo/widgets; GitHub's pagination links use `/repositories/{id}/…`.
const REPO_ID: u64 = 1_296_269;
/// Head commit of PR #42 (feat/auth).
const AUTH_SHA: &str = "6dcb09b5b57875f334f61aebed695e2e4193db5e";
/// Head commit of PR #7 (feat/billing).
const BILLING_SHA: &str = "e5bd3914e2e596debea16f433f57875b5b90bcd6";
const CREATED_AT: &str = "2026-03-01T10:15:00Z";
const UPDATED_AT: &str = "2026-03-02T08:00:00Z";

const GITHUB_CREDENTIALS_HINT: &str =
    "Add credentials for github.com to `~/.netrc`. See `twig auth --help`.";
const JIRA_CREDENTIALS_HINT: &str =
    "Set $JIRA_HOST and add credentials to `~/.netrc`. See `twig auth --help`.";

/// The stacked fixture with `origin` pointing at github.com/octo/widgets.
fn github_fixture() -> Fixture {
    let fx = stacked();
    fx.git(&[
        "remote",
        "add",
        "origin",
        "https://github.com/octo/widgets.git",
    ]);
    fx
}

/// Detach HEAD at the current commit.
fn detach(fx: &Fixture) {
    let head = fx.git(&["rev-parse", "HEAD"]);
    fx.git(&["checkout", "-q", &head]);
}

/// A netrc entry for `machine` with the Jira test credentials.
fn jira_netrc(fx: &Fixture) {
    fx.write_netrc(&format!(
        "machine 127.0.0.1\n  login {JIRA_LOGIN}\n  password {JIRA_TOKEN}\n"
    ));
}

/// Start twig-mcp against the GitHub mock, authenticating with `$GITHUB_TOKEN`.
async fn start_github(fx: &Fixture, gh: &MockServer, args: &[&str]) -> McpProcess {
    fx.start(
        args,
        &[
            ("GITHUB_API_URL", &gh.origin),
            ("GITHUB_TOKEN", GITHUB_TOKEN),
        ],
    )
    .await
}

/// Start twig-mcp against the Jira mock, with netrc credentials for it.
async fn start_jira(fx: &Fixture, jira: &MockServer, args: &[&str]) -> McpProcess {
    jira_netrc(fx);
    fx.start(args, &[("JIRA_HOST", &jira.origin)]).await
}

/// Check an error's code, message and hint (`None`: the default hint of the code's class),
/// and that its retryability is its class's.
fn assert_error(err: &WireError, code: ErrorCode, message: &str, hint: Option<&str>) {
    assert_eq!(err.code, code, "{err:?}");
    assert_eq!(err.message, message, "{err:?}");
    let hint = hint.unwrap_or(code.class().default_hint());
    assert_eq!(err.hint, hint, "{err:?}");
    assert_eq!(err.retryable, code.class().retryable(), "{err:?}");
}

fn unix_now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs()
}

/// Unix seconds of an RFC 3339 UTC timestamp such as `2026-11-22T10:00:42Z`.
fn parse_rfc3339(ts: &str) -> u64 {
    assert_eq!(ts.len(), 20, "not YYYY-MM-DDTHH:MM:SSZ: {ts}");
    assert!(ts.ends_with('Z'), "{ts}");
    let num = |range: std::ops::Range<usize>| -> i64 { ts[range].parse().unwrap() };
    let (y, m, d) = (num(0..4), num(5..7), num(8..10));
    let (hh, mm, ss) = (num(11..13), num(14..16), num(17..19));
    // Days from civil (proleptic Gregorian), after H. Hinnant.
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let doy = (153 * (if m > 2 { m - 3 } else { m + 9 }) + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    u64::try_from(days * 86_400 + hh * 3600 + mm * 60 + ss).unwrap()
}

/// Check a `Retry in N seconds (at TIMESTAMP).` hint: the timestamp must be N seconds after
/// a moment between `before` and `after`.
fn assert_retry_in(hint: &str, service: &str, secs: u64, before: u64, after: u64) {
    let unit = if secs == 1 { "second" } else { "seconds" };
    let prefix = format!("Rate limited by {service}. Retry in {secs} {unit} (at ");
    let ts = hint
        .strip_prefix(&prefix)
        .and_then(|rest| rest.strip_suffix(")."))
        .unwrap_or_else(|| panic!("unexpected hint {hint:?}"));
    let at = parse_rfc3339(ts);
    assert!(
        (before + secs..=after + secs).contains(&at),
        "{ts} ({at}) not within [{}, {}]",
        before + secs,
        after + secs
    );
}

// ---------------------------------------------------------------------------------------------
// GitHub REST v3 payloads
// ---------------------------------------------------------------------------------------------

fn gh_repo() -> Value {
    json!({
        "id": REPO_ID,
        "node_id": "MDEwOlJlcG9zaXRvcnkxMjk2MjY5",
        "name": "widgets",
        "full_name": "octo/widgets",
        "private": false,
        "owner": gh_user("octo", 9919),
        "html_url": "https://github.com/octo/widgets",
        "description": "Widgets, stacked",
        "fork": false,
        "url": "https://api.github.com/repos/octo/widgets",
        "default_branch": "main",
        "visibility": "public",
        "archived": false,
        "pushed_at": "2026-03-02T07:59:00Z",
    })
}

/// A pull request as `GET /repos/{owner}/{repo}/pulls/{number}` returns it: open, by
/// octocat, into main, not a draft, mergeable.
fn gh_pull(number: u32, title: &str, head_ref: &str, head_sha: &str) -> Value {
    let api = "https://api.github.com/repos/octo/widgets";
    json!({
        "url": format!("{api}/pulls/{number}"),
        "id": 1_800_000_000u64 + u64::from(number),
        "node_id": format!("PR_kwDOABNfTc5{number:08}"),
        "html_url": format!("https://github.com/octo/widgets/pull/{number}"),
        "diff_url": format!("https://github.com/octo/widgets/pull/{number}.diff"),
        "patch_url": format!("https://github.com/octo/widgets/pull/{number}.patch"),
        "issue_url": format!("{api}/issues/{number}"),
        "commits_url": format!("{api}/pulls/{number}/commits"),
        "review_comments_url": format!("{api}/pulls/{number}/comments"),
        "comments_url": format!("{api}/issues/{number}/comments"),
        "statuses_url": format!("{api}/statuses/{head_sha}"),
        "number": number,
        "state": "open",
        "locked": false,
        "title": title,
        "user": gh_user("octocat", 583_231),
        "body": "Implements the change.\r\n\r\nRefs PROJ-101",
        "labels": [{
            "id": 208_045_946,
            "node_id": "MDU6TGFiZWwyMDgwNDU5NDY=",
            "url": format!("{api}/labels/enhancement"),
            "name": "enhancement",
            "description": "New feature or request",
            "color": "a2eeef",
            "default": true,
        }],
        "milestone": null,
        "active_lock_reason": null,
        "created_at": CREATED_AT,
        "updated_at": UPDATED_AT,
        "closed_at": null,
        "merged_at": null,
        "merge_commit_sha": "9049f1265b7d61be4a8904a9a27120d2064dab3b",
        "assignee": null,
        "assignees": [],
        "requested_reviewers": [gh_user("hubot", 1)],
        "requested_teams": [],
        "head": {
            "label": format!("octo:{head_ref}"),
            "ref": head_ref,
            "sha": head_sha,
            "user": gh_user("octo", 9919),
            "repo": gh_repo(),
        },
        "base": {
            "label": "octo:main",
            "ref": "main",
            "sha": "7638417db6d59f3c431d3e1f261cc637155684cd",
            "user": gh_user("octo", 9919),
            "repo": gh_repo(),
        },
        "_links": {
            "self": {"href": format!("{api}/pulls/{number}")},
            "html": {"href": format!("https://github.com/octo/widgets/pull/{number}")},
            "statuses": {"href": format!("{api}/statuses/{head_sha}")},
        },
        "author_association": "MEMBER",
        "auto_merge": null,
        "draft": false,
        "merged": false,
        "mergeable": true,
        "rebaseable": true,
        "mergeable_state": "clean",
        "merged_by": null,
        "comments": 3,
        "review_comments": 1,
        "maintainer_can_modify": false,
        "commits": 4,
        "additions": 120,
        "deletions": 8,
        "changed_files": 6,
    })
}

/// A pull request as the list endpoint returns it (no merge details).
fn gh_pull_simple(number: u32) -> Value {
    let mut pr = gh_pull(
        number,
        &format!("Change #{number}"),
        &format!("change-{number}"),
        &format!("{number:040x}"),
    );
    let object = pr.as_object_mut().unwrap();
    for key in [
        "merged",
        "mergeable",
        "rebaseable",
        "mergeable_state",
        "merged_by",
        "comments",
        "review_comments",
        "maintainer_can_modify",
        "commits",
        "additions",
        "deletions",
        "changed_files",
    ] {
        object.remove(key);
    }
    pr
}

fn gh_review(id: u64, user: Option<(&str, u64)>, state: &str, submitted_at: Option<&str>) -> Value {
    let api = "https://api.github.com/repos/octo/widgets";
    json!({
        "id": id,
        "node_id": format!("PRR_kwDOABNfTc4{id:08}"),
        "user": user.map(|(login, uid)| gh_user(login, uid)),
        "body": "",
        "state": state,
        "html_url": format!("https://github.com/octo/widgets/pull/42#pullrequestreview-{id}"),
        "pull_request_url": format!("{api}/pulls/42"),
        "author_association": "MEMBER",
        "_links": {
            "html": {"href": format!("https://github.com/octo/widgets/pull/42#pullrequestreview-{id}")},
            "pull_request": {"href": format!("{api}/pulls/42")},
        },
        "submitted_at": submitted_at,
        "commit_id": AUTH_SHA,
    })
}

fn gh_check_run(id: u64, name: &str, status: &str, conclusion: Option<&str>) -> Value {
    json!({
        "id": id,
        "name": name,
        "node_id": format!("CR_kwDOABNfTc8{id:010}"),
        "head_sha": AUTH_SHA,
        "external_id": "ca395085-040a-526b-2ce8-bdc85f692774",
        "url": format!("https://api.github.com/repos/octo/widgets/check-runs/{id}"),
        "html_url": format!("https://github.com/octo/widgets/actions/runs/1/job/{id}"),
        "details_url": format!("https://github.com/octo/widgets/actions/runs/1/job/{id}"),
        "status": status,
        "conclusion": conclusion,
        "started_at": "2026-03-02T08:01:00Z",
        "completed_at": conclusion.map(|_| "2026-03-02T08:04:00Z"),
        "output": {
            "title": null,
            "summary": null,
            "text": null,
            "annotations_count": 0,
            "annotations_url": format!("https://api.github.com/repos/octo/widgets/check-runs/{id}/annotations"),
        },
        "check_suite": {"id": 5},
        "app": {
            "id": 15_368,
            "slug": "github-actions",
            "node_id": "MDM6QXBwMTUzNjg=",
            "name": "GitHub Actions",
            "owner": gh_user("github", 9_919),
        },
        "pull_requests": [{
            "url": "https://api.github.com/repos/octo/widgets/pulls/42",
            "id": 1_800_000_042u64,
            "number": 42,
            "head": {"ref": "feat/auth", "sha": AUTH_SHA, "repo": {"id": REPO_ID, "url": "https://api.github.com/repos/octo/widgets", "name": "widgets"}},
            "base": {"ref": "main", "sha": "7638417db6d59f3c431d3e1f261cc637155684cd", "repo": {"id": REPO_ID, "url": "https://api.github.com/repos/octo/widgets", "name": "widgets"}},
        }],
    })
}

/// A successful GitHub answer with the headers GitHub sends along.
fn gh_ok(body: Value) -> Reply {
    Reply::json(body)
        .header("x-github-api-version-selected", "2022-11-28")
        .header("x-ratelimit-limit", "5000")
        .header("x-ratelimit-remaining", "4987")
        .header("x-ratelimit-reset", "1795341600")
        .header("x-ratelimit-resource", "core")
        .header("x-github-request-id", "CD5E:1C2B:3A4F5E:6B7C8D:67C41A2B")
}

fn gh_not_found() -> Reply {
    gh_error(404, "Not Found")
}

/// `<url>; rel="…"` entries of a `Link` header.
fn link_header(links: &[(String, &str)]) -> String {
    links
        .iter()
        .map(|(url, rel)| format!("<{url}>; rel=\"{rel}\""))
        .collect::<Vec<_>>()
        .join(", ")
}

/// A fake of the GitHub API for octo/widgets: PR #42 (feat/auth, with reviews and two pages
/// of check runs) and PR #7 (feat/billing, a draft whose mergeability is still unknown).
fn github_api(req: &Request) -> Reply {
    let checks_page2 = format!(
        "{}/repositories/{REPO_ID}/commits/{AUTH_SHA}/check-runs?per_page=100&page=2",
        req.origin
    );
    let checks_page1 = format!(
        "{}/repositories/{REPO_ID}/commits/{AUTH_SHA}/check-runs?per_page=100&page=1",
        req.origin
    );
    match req.path.as_str() {
        "/repos/octo/widgets/pulls/42" => gh_ok(gh_pull(
            42,
            "Add OAuth device flow login",
            "feat/auth",
            AUTH_SHA,
        )),
        "/repos/octo/widgets/pulls/7" => {
            let mut pr = gh_pull(7, "Stripe billing", "feat/billing", BILLING_SHA);
            pr["draft"] = json!(true);
            pr["mergeable"] = Value::Null;
            pr["mergeable_state"] = json!("unknown");
            gh_ok(pr)
        }
        "/repos/octo/widgets/pulls" => gh_ok(json!([gh_pull_simple(42), gh_pull_simple(7)])),
        "/repos/octo/widgets/pulls/42/reviews" => gh_ok(json!([
            gh_review(
                80,
                Some(("hubot", 1)),
                "COMMENTED",
                Some("2026-03-01T11:00:00Z")
            ),
            gh_review(81, None, "CHANGES_REQUESTED", Some("2026-03-01T12:00:00Z")),
            gh_review(
                82,
                Some(("monalisa", 2)),
                "APPROVED",
                Some("2026-03-02T09:00:00Z")
            ),
            gh_review(83, Some(("octocat", 583_231)), "PENDING", None),
        ])),
        "/repos/octo/widgets/pulls/7/reviews" => gh_ok(json!([])),
        path if path == format!("/repos/octo/widgets/commits/{AUTH_SHA}/check-runs") => {
            gh_ok(json!({
                "total_count": 3,
                "check_runs": [
                    gh_check_run(4001, "build", "completed", Some("success")),
                    gh_check_run(4002, "lint", "completed", Some("failure")),
                ],
            }))
            .header(
                "link",
                &link_header(&[(checks_page2.clone(), "next"), (checks_page2, "last")]),
            )
        }
        path if path == format!("/repositories/{REPO_ID}/commits/{AUTH_SHA}/check-runs")
            && req.param("page").as_deref() == Some("2") =>
        {
            gh_ok(json!({
                "total_count": 3,
                "check_runs": [gh_check_run(4003, "e2e", "in_progress", None)],
            }))
            .header(
                "link",
                &link_header(&[(checks_page1.clone(), "prev"), (checks_page1, "first")]),
            )
        }
        path if path == format!("/repos/octo/widgets/commits/{BILLING_SHA}/check-runs") => {
            gh_ok(json!({"total_count": 0, "check_runs": []}))
        }
        _ => gh_not_found(),
    }
}

/// The GitHub fake answering every request with an error chosen by the PR number.
fn github_errors(req: &Request) -> Reply {
    match req.path.as_str() {
        "/repos/octo/widgets/pulls/401" => gh_error(401, "Bad credentials"),
        "/repos/octo/widgets/pulls/403" => gh_error(
            403,
            "Resource not accessible by personal access token",
        )
        .header("x-ratelimit-remaining", "4986"),
        "/repos/octo/widgets/pulls/429" => gh_error(
            429,
            "You have exceeded a secondary rate limit. Please wait a few minutes before you try again.",
        )
        .header("retry-after", "42"),
        "/repos/octo/widgets/pulls/430" => gh_error(
            403,
            "API rate limit exceeded for user ID 583231. If you reach out to GitHub Support for help, please include the request ID CD5E:1C2B:3A4F5E:6B7C8D:67C41A2B.",
        )
        .header("x-ratelimit-limit", "5000")
        .header("x-ratelimit-remaining", "0")
        .header("x-ratelimit-used", "5000")
        .header("x-ratelimit-reset", "1795341600")
        .header("x-ratelimit-resource", "core"),
        "/repos/octo/widgets/pulls/500" => gh_error(500, "Server Error"),
        "/repos/octo/widgets/pulls/502" => Reply::text(
            502,
            "text/html",
            "<html><body><h1>502 Bad Gateway</h1></body></html>",
        ),
        "/repos/octo/widgets/pulls/504" => {
            gh_ok(gh_pull(504, "Slow", "slow", AUTH_SHA)).delay(Duration::from_secs(10))
        }
        _ => github_api(req),
    }
}

/// `total` pull requests, newest (highest number) first, served in pages as GitHub does:
/// `per_page` from the query, `Link` headers with `next`/`last`/`prev`/`first` relations
/// pointing at `/repositories/{id}/pulls`.
fn paged_pulls(total: u32) -> impl Fn(&Request) -> Reply + Send + Sync + 'static {
    move |req| {
        let listing = format!("/repositories/{REPO_ID}/pulls");
        if req.path != "/repos/octo/widgets/pulls" && req.path != listing {
            return gh_not_found();
        }
        let state = req.param("state").unwrap_or_else(|| "open".into());
        let per_page: u32 = req.param("per_page").map_or(30, |p| p.parse().unwrap());
        let page: u32 = req.param("page").map_or(1, |p| p.parse().unwrap());
        let pages = total.div_ceil(per_page).max(1);
        let start = (page - 1) * per_page;
        let end = (start + per_page).min(total);
        let items: Vec<Value> = (start..end).map(|i| gh_pull_simple(total - i)).collect();
        let url = |k: u32| {
            format!(
                "{}{listing}?state={state}&per_page={per_page}&page={k}",
                req.origin
            )
        };
        let mut links = Vec::new();
        if page > 1 {
            links.push((url(page - 1), "prev"));
            links.push((url(1), "first"));
        }
        if page < pages {
            links.push((url(page + 1), "next"));
            links.push((url(pages), "last"));
        }
        let reply = gh_ok(Value::Array(items));
        if links.is_empty() {
            reply
        } else {
            reply.header("link", &link_header(&links))
        }
    }
}

fn expected_pr42() -> Value {
    json!({
        "number": 42,
        "title": "Add OAuth device flow login",
        "state": "open",
        "author": "octocat",
        "base": "main",
        "head": "feat/auth",
        "draft": false,
        "mergeable": true,
        "created_at": CREATED_AT,
        "updated_at": UPDATED_AT,
    })
}

fn expected_pr7() -> Value {
    json!({
        "number": 7,
        "title": "Stripe billing",
        "state": "open",
        "author": "octocat",
        "base": "main",
        "head": "feat/billing",
        "draft": true,
        "mergeable": null,
        "created_at": CREATED_AT,
        "updated_at": UPDATED_AT,
    })
}

/// A list entry: mergeability is never reported in lists.
fn expected_list_pr(number: u32) -> Value {
    json!({
        "number": number,
        "title": format!("Change #{number}"),
        "state": "open",
        "author": "octocat",
        "base": "main",
        "head": format!("change-{number}"),
        "draft": false,
        "mergeable": null,
        "created_at": CREATED_AT,
        "updated_at": UPDATED_AT,
    })
}

fn expected_pr42_status() -> Value {
    json!({
        "pull_request": expected_pr42(),
        "reviews": [
            {"author": "hubot", "state": "COMMENTED"},
            {"author": "ghost", "state": "CHANGES_REQUESTED"},
            {"author": "monalisa", "state": "APPROVED"},
            {"author": "octocat", "state": "PENDING"},
        ],
        "checks": [
            {"name": "build", "status": "completed", "conclusion": "success"},
            {"name": "lint", "status": "completed", "conclusion": "failure"},
            {"name": "e2e", "status": "in_progress", "conclusion": null},
        ],
    })
}

/// The requests a PR #42 status lookup makes (reviews and check runs are fetched
/// concurrently, so the order after the first is not fixed: sorted here).
fn expected_pr42_status_targets() -> Vec<String> {
    let mut targets = vec![
        "GET /repos/octo/widgets/pulls/42".to_string(),
        "GET /repos/octo/widgets/pulls/42/reviews?per_page=100".to_string(),
        format!("GET /repos/octo/widgets/commits/{AUTH_SHA}/check-runs?per_page=100"),
        format!("GET /repositories/{REPO_ID}/commits/{AUTH_SHA}/check-runs?per_page=100&page=2"),
    ];
    targets[1..].sort();
    targets
}

fn sorted_after_first(mut targets: Vec<String>) -> Vec<String> {
    if targets.len() > 1 {
        targets[1..].sort();
    }
    targets
}

/// Headers every GitHub request must carry besides `Authorization`.
fn assert_github_headers(req: &Request) {
    assert_eq!(
        req.header("accept"),
        Some("application/vnd.github+json"),
        "{req:?}"
    );
    assert_eq!(
        req.header("x-github-api-version"),
        Some("2022-11-28"),
        "{req:?}"
    );
    assert!(
        req.header("user-agent")
            .is_some_and(|ua| ua.starts_with("twig-mcp/")),
        "{req:?}"
    );
}

// ---------------------------------------------------------------------------------------------
// Jira Cloud REST v3 payloads
// ---------------------------------------------------------------------------------------------

fn jira_status(name: &str) -> Value {
    let (id, category) = match name {
        "To Do" => (
            10_000,
            json!({"id": 2, "key": "new", "colorName": "blue-gray", "name": "To Do"}),
        ),
        "Done" => (
            10_002,
            json!({"id": 3, "key": "done", "colorName": "green", "name": "Done"}),
        ),
        _ => (
            10_001,
            json!({"id": 4, "key": "indeterminate", "colorName": "yellow", "name": "In Progress"}),
        ),
    };
    json!({
        "self": format!("https://acme.atlassian.net/rest/api/3/status/{id}"),
        "description": "",
        "iconUrl": "https://acme.atlassian.net/",
        "name": name,
        "id": id.to_string(),
        "statusCategory": category,
    })
}

fn jira_user(display_name: &str) -> Value {
    json!({
        "self": "https://acme.atlassian.net/rest/api/3/user?accountId=5b10ac8d82e05b22cc7d4ef5",
        "accountId": "5b10ac8d82e05b22cc7d4ef5",
        "emailAddress": "alice@example.com",
        "avatarUrls": {
            "48x48": "https://secure.gravatar.com/avatar/9f1e?d=https%3A%2F%2Favatar-management--avatars.us-west-2.prod.public.atl-paas.net%2Finitials%2FAD-1.png",
            "24x24": "https://secure.gravatar.com/avatar/9f1e?s=24",
        },
        "displayName": display_name,
        "active": true,
        "timeZone": "Europe/Berlin",
        "accountType": "atlassian",
    })
}

/// An issue as `GET /rest/api/3/issue/{key}` returns it; `description` is ADF (or null).
fn jira_issue(
    origin: &str,
    key: &str,
    summary: &str,
    status: &str,
    assignee: Option<&str>,
    description: Value,
) -> Value {
    let id = 10_000 + key.rsplit('-').next().unwrap().parse::<u64>().unwrap_or(0);
    json!({
        "expand": "renderedFields,names,schema,operations,editmeta,changelog,versionedRepresentations",
        "id": id.to_string(),
        "self": format!("{origin}/rest/api/3/issue/{id}"),
        "key": key,
        "fields": {
            "summary": summary,
            "status": jira_status(status),
            "assignee": assignee.map(jira_user),
            "description": description,
        },
    })
}

/// An ADF description with paragraphs (marks, a hard break, mentions), a bullet list and a
/// code block.
fn adf_description() -> Value {
    json!({
        "type": "doc",
        "version": 1,
        "content": [
            {"type": "paragraph", "content": [
                {"type": "text", "text": "Sessions expire after "},
                {"type": "text", "text": "15 minutes", "marks": [{"type": "strong"}]},
                {"type": "text", "text": " instead of 8 hours."},
                {"type": "hardBreak"},
                {"type": "text", "text": "Reported by "},
                {"type": "mention", "attrs": {"id": "5b10ac8d82e05b22cc7d4ef5", "text": "@Alice Doe", "accessLevel": ""}},
                {"type": "text", "text": "."},
            ]},
            {"type": "bulletList", "content": [
                {"type": "listItem", "content": [
                    {"type": "paragraph", "content": [{"type": "text", "text": "Log in"}]},
                ]},
                {"type": "listItem", "content": [
                    {"type": "paragraph", "content": [
                        {"type": "text", "text": "Wait "},
                        {"type": "text", "text": "15 minutes", "marks": [{"type": "em"}]},
                    ]},
                ]},
                {"type": "listItem", "content": [
                    {"type": "paragraph", "content": [
                        {"type": "text", "text": "Reload "},
                        {"type": "text", "text": "/dashboard", "marks": [{"type": "code"}]},
                    ]},
                ]},
            ]},
            {"type": "codeBlock", "attrs": {"language": "rust"}, "content": [
                {"type": "text", "text": "let ttl = Duration::from_secs(15 * 60);\nsession.refresh(ttl)?;\n"},
            ]},
            {"type": "paragraph", "content": []},
            {"type": "paragraph", "content": [
                {"type": "text", "text": "cc "},
                {"type": "mention", "attrs": {"id": "712020:0d4a6a7c", "text": "", "accessLevel": ""}},
            ]},
        ],
    })
}

/// What remote/adf.rs makes of [`adf_description`].
const ADF_TEXT: &str = "Sessions expire after 15 minutes instead of 8 hours.\n\
Reported by @Alice Doe.\n\
\n\
- Log in\n\
- Wait 15 minutes\n\
- Reload /dashboard\n\
\n\
let ttl = Duration::from_secs(15 * 60);\n\
session.refresh(ttl)?;\n\
\n\
cc @712020:0d4a6a7c";

fn jira_error(status: u16, message: &str) -> Reply {
    Reply::json(json!({"errorMessages": [message], "errors": {}})).status(status)
}

/// A fake of the Jira API: PROJ-7 (ADF description, assigned), PROJ-101 (feat/auth, no
/// assignee, no description), PROJ-102; everything else 404.
fn jira_api(req: &Request) -> Reply {
    let issue = req
        .path
        .rsplit_once("/rest/api/3/issue/")
        .map(|(_, key)| key.to_string());
    match issue.as_deref() {
        Some("PROJ-7") => Reply::json(jira_issue(
            &req.origin,
            "PROJ-7",
            "Session expires too early",
            "In Progress",
            Some("Alice Doe"),
            adf_description(),
        )),
        Some("PROJ-101") => Reply::json(jira_issue(
            &req.origin,
            "PROJ-101",
            "OAuth device flow login",
            "In Review",
            None,
            Value::Null,
        )),
        Some("PROJ-102") => Reply::json(jira_issue(
            &req.origin,
            "PROJ-102",
            "Login screen",
            "To Do",
            Some("Bob Roe"),
            json!({"type": "doc", "version": 1, "content": [
                {"type": "paragraph", "content": [{"type": "text", "text": "Build the login screen."}]},
            ]}),
        )),
        _ => jira_error(
            404,
            "Issue does not exist or you do not have permission to see it.",
        ),
    }
}

/// Jira's page tokens are opaque base64-ish strings; these carry the page index.
fn page_token(page: usize) -> String {
    format!("Ch0jU3RyaW5nJlVGSlBTZz09JUludCZPVFF3{page}+/=")
}

fn page_from_token(token: &str) -> usize {
    token
        .strip_prefix("Ch0jU3RyaW5nJlVGSlBTZz09JUludCZPVFF3")
        .and_then(|rest| rest.strip_suffix("+/="))
        .unwrap_or_else(|| panic!("unexpected page token {token}"))
        .parse()
        .unwrap()
}

/// An issue of a search page (only the requested fields).
fn jira_list_issue(origin: &str, n: usize) -> Value {
    let assignee = (!n.is_multiple_of(3)).then_some("Alice Doe");
    let status = if n.is_multiple_of(2) {
        "In Progress"
    } else {
        "To Do"
    };
    let mut issue = jira_issue(
        origin,
        &format!("PROJ-{n}"),
        &format!("Task {n}"),
        status,
        assignee,
        Value::Null,
    );
    issue["fields"]
        .as_object_mut()
        .unwrap()
        .remove("description");
    issue
}

fn expected_list_issue(n: usize) -> Value {
    let mut issue = json!({
        "key": format!("PROJ-{n}"),
        "summary": format!("Task {n}"),
        "status": if n.is_multiple_of(2) { "In Progress" } else { "To Do" },
    });
    if !n.is_multiple_of(3) {
        issue["assignee"] = json!("Alice Doe");
    }
    issue
}

/// `total` issues (highest key first) served by `/rest/api/3/search/jql` in pages of
/// `maxResults`, chained with `nextPageToken`.
fn paged_search(total: usize) -> impl Fn(&Request) -> Reply + Send + Sync + 'static {
    move |req| {
        if req.path != "/rest/api/3/search/jql" {
            return jira_error(404, "Not found");
        }
        let max: usize = req.param("maxResults").map_or(50, |m| m.parse().unwrap());
        let page = req
            .param("nextPageToken")
            .map_or(0, |t| page_from_token(&t));
        let start = page * max;
        let end = (start + max).min(total);
        let issues: Vec<Value> = (start..end)
            .map(|i| jira_list_issue(&req.origin, total - i))
            .collect();
        let is_last = end >= total;
        let mut body = json!({"issues": issues, "isLast": is_last});
        if !is_last {
            body["nextPageToken"] = json!(page_token(page + 1));
        }
        Reply::json(body)
    }
}

fn assert_jira_auth(req: &Request) {
    let basic = format!("Basic {}", base64(&format!("{JIRA_LOGIN}:{JIRA_TOKEN}")));
    assert_eq!(req.header("authorization"), Some(basic.as_str()), "{req:?}");
    assert_eq!(req.header("accept"), Some("application/json"), "{req:?}");
    assert!(
        req.header("user-agent")
            .is_some_and(|ua| ua.starts_with("twig-mcp/")),
        "{req:?}"
    );
}

// ---------------------------------------------------------------------------------------------
// GitHub: pull requests
// ---------------------------------------------------------------------------------------------

#[tokio::test]
async fn get_pull_request_by_number_with_bearer_token() {
    let gh = MockServer::start(github_api).await;
    let fx = github_fixture();
    let mcp = start_github(&fx, &gh, &[]).await;

    let data: Value = mcp
        .call_ok("get_pull_request", json!({"pr_number": 42}))
        .await;
    assert_eq!(data, expected_pr42());

    // A draft whose mergeability GitHub is still computing.
    let data: Value = mcp
        .call_ok("get_pull_request", json!({"pr_number": 7}))
        .await;
    assert_eq!(data, expected_pr7());

    assert_eq!(
        gh.targets(),
        [
            "GET /repos/octo/widgets/pulls/42",
            "GET /repos/octo/widgets/pulls/7"
        ]
    );
    let bearer = format!("Bearer {GITHUB_TOKEN}");
    for req in gh.requests() {
        assert_eq!(req.header("authorization"), Some(bearer.as_str()));
        assert_github_headers(&req);
    }
}

#[tokio::test]
async fn get_pull_request_of_current_branch_with_netrc_machine_of_api_host() {
    let gh = MockServer::start(github_api).await;
    let fx = github_fixture();
    fx.git(&["checkout", "-q", "feat/auth"]);
    // The API host is 127.0.0.1, so its machine entry applies (not github.com's), and a
    // netrc machine entry wins over $GITHUB_TOKEN.
    fx.write_netrc(&format!(
        "machine github.com login web-user password web-secret\n\
         machine 127.0.0.1\n  login {NETRC_LOGIN}\n  password {NETRC_PASSWORD}\n"
    ));
    let mcp = start_github(&fx, &gh, &[]).await;

    let data: Value = mcp.call_ok("get_pull_request", json!({})).await;
    assert_eq!(data, expected_pr42());

    let requests = gh.requests();
    assert_eq!(gh.targets(), ["GET /repos/octo/widgets/pulls/42"]);
    let basic = format!(
        "Basic {}",
        base64(&format!("{NETRC_LOGIN}:{NETRC_PASSWORD}"))
    );
    assert_eq!(requests[0].header("authorization"), Some(basic.as_str()));
    assert_github_headers(&requests[0]);

    // Another branch with a linked PR, switched to mid-session.
    fx.git(&["checkout", "-q", "feat/billing"]);
    let data: Value = mcp.call_ok("get_pull_request", json!({})).await;
    assert_eq!(data, expected_pr7());
}

#[tokio::test]
async fn github_credential_sources_in_order() {
    let gh = MockServer::start(github_api).await;
    let fx = github_fixture();
    // A trailing slash on the API URL is ignored.
    let api = format!("{}/", gh.origin);

    // $GH_TOKEN when $GITHUB_TOKEN is empty.
    let mcp = fx
        .start(
            &[],
            &[
                ("GITHUB_API_URL", &api),
                ("GITHUB_TOKEN", ""),
                ("GH_TOKEN", "gho_fromGhCli"),
            ],
        )
        .await;
    let _: Value = mcp
        .call_ok("get_pull_request", json!({"pr_number": 42}))
        .await;
    mcp.shutdown().await;

    // The netrc default entry only when no token is set.
    fx.write_netrc("default login fallback password default-secret\n");
    let mcp = fx
        .start(
            &[],
            &[("GITHUB_API_URL", &api), ("GITHUB_TOKEN", GITHUB_TOKEN)],
        )
        .await;
    let _: Value = mcp
        .call_ok("get_pull_request", json!({"pr_number": 42}))
        .await;
    mcp.shutdown().await;

    let mcp = fx.start(&[], &[("GITHUB_API_URL", &api)]).await;
    let _: Value = mcp
        .call_ok("get_pull_request", json!({"pr_number": 42}))
        .await;
    mcp.shutdown().await;

    let auth: Vec<Option<String>> = gh
        .requests()
        .iter()
        .map(|r| r.header("authorization").map(str::to_string))
        .collect();
    assert_eq!(
        auth,
        [
            Some("Bearer gho_fromGhCli".to_string()),
            Some(format!("Bearer {GITHUB_TOKEN}")),
            Some(format!("Basic {}", base64("fallback:default-secret"))),
        ]
    );
    assert_eq!(
        gh.targets(),
        ["GET /repos/octo/widgets/pulls/42"; 3],
        "the trailing slash must not double"
    );
}

#[tokio::test]
async fn branch_without_linked_pr_is_not_found() {
    let gh = MockServer::start(github_api).await;
    let fx = github_fixture();
    fx.git(&["checkout", "-q", "feat/auth-ui"]);
    let mcp = start_github(&fx, &gh, &[]).await;
    for tool in ["get_pull_request", "get_pr_status"] {
        let err = mcp.call_err(tool, json!({})).await;
        assert_error(
            &err,
            errors::NOT_FOUND,
            "Branch 'feat/auth-ui' has no linked GitHub PR",
            Some("Provide an explicit pr_number parameter."),
        );
    }
    assert!(gh.requests().is_empty(), "{:?}", gh.targets());
}

#[tokio::test]
async fn detached_head_without_pr_number_is_invalid_params() {
    let gh = MockServer::start(github_api).await;
    let fx = github_fixture();
    detach(&fx);
    let mcp = start_github(&fx, &gh, &[]).await;
    for tool in ["get_pull_request", "get_pr_status"] {
        let err = mcp.call_err(tool, json!({})).await;
        assert_error(
            &err,
            errors::INVALID_PARAMS,
            "No pr_number provided and could not detect current branch",
            Some("Provide an explicit pr_number parameter."),
        );
        let err = mcp.call_err(tool, json!({"pr_number": 0})).await;
        assert_error(
            &err,
            errors::INVALID_PARAMS,
            "`pr_number` must be at least 1",
            Some("Pass the number GitHub shows as #N."),
        );
    }
    assert!(gh.requests().is_empty(), "{:?}", gh.targets());

    // An explicit number works without a branch.
    let data: Value = mcp
        .call_ok("get_pull_request", json!({"pr_number": 42}))
        .await;
    assert_eq!(data, expected_pr42());
}

#[tokio::test]
async fn pr_status_with_reviews_and_paginated_check_runs() {
    let gh = MockServer::start(github_api).await;
    let fx = github_fixture();
    fx.git(&["checkout", "-q", "feat/auth"]);
    let mcp = start_github(&fx, &gh, &[]).await;

    let data: Value = mcp.call_ok("get_pr_status", json!({})).await;
    assert_eq!(data, expected_pr42_status());
    assert_eq!(
        sorted_after_first(gh.targets()),
        expected_pr42_status_targets()
    );
    let bearer = format!("Bearer {GITHUB_TOKEN}");
    for req in gh.requests() {
        assert_eq!(
            req.header("authorization"),
            Some(bearer.as_str()),
            "{req:?}"
        );
        assert_github_headers(&req);
    }

    // No reviews, no checks.
    gh.clear();
    let data: Value = mcp.call_ok("get_pr_status", json!({"pr_number": 7})).await;
    assert_eq!(
        data,
        json!({"pull_request": expected_pr7(), "reviews": [], "checks": []})
    );
    assert_eq!(
        sorted_after_first(gh.targets()),
        [
            "GET /repos/octo/widgets/pulls/7".to_string(),
            format!("GET /repos/octo/widgets/commits/{BILLING_SHA}/check-runs?per_page=100"),
            "GET /repos/octo/widgets/pulls/7/reviews?per_page=100".to_string(),
        ]
    );
}

#[tokio::test]
async fn list_pull_requests_follows_link_pagination() {
    let gh = MockServer::start(paged_pulls(75)).await;
    let fx = github_fixture();
    let mcp = start_github(&fx, &gh, &[]).await;

    let (data, page) = mcp
        .call_paged::<Value>("list_pull_requests", json!({}))
        .await;
    let expected: Vec<Value> = (1..=75).rev().map(expected_list_pr).collect();
    assert_eq!(data, json!({"pull_requests": expected}));
    assert_eq!(page, Page::new(75, None), "the last page knows the total");
    assert_eq!(
        gh.targets(),
        [
            "GET /repos/octo/widgets/pulls?state=open&per_page=50".to_string(),
            format!("GET /repositories/{REPO_ID}/pulls?state=open&per_page=50&page=2"),
        ]
    );

    // `state` is case-insensitive and passed on; an explicit repo is honoured.
    gh.clear();
    let data: Value = mcp
        .call_ok(
            "list_pull_requests",
            json!({"state": " Closed ", "repo": "octo/widgets"}),
        )
        .await;
    assert_eq!(data["pull_requests"].as_array().unwrap().len(), 75);
    assert_eq!(gh.requests()[0].param("state").as_deref(), Some("closed"));
}

/// Walk a list tool to its end with `args` (plus each page's cursor); returns the items of
/// `field` and every page's `page` object.
async fn walk(mcp: &McpProcess, tool: &str, args: Value, field: &str) -> (Vec<Value>, Vec<Page>) {
    let mut items = Vec::new();
    let mut pages = Vec::new();
    let mut cursor: Option<String> = None;
    loop {
        let mut call = args.clone();
        if let Some(cursor) = &cursor {
            call["cursor"] = json!(cursor);
        }
        let (data, page) = mcp.call_paged::<Value>(tool, call).await;
        items.extend(data[field].as_array().unwrap().iter().cloned());
        cursor = page.next_cursor.clone();
        pages.push(page);
        if cursor.is_none() {
            return (items, pages);
        }
        assert!(pages.len() < 1000, "{tool} does not end");
    }
}

#[tokio::test]
async fn list_pull_requests_pages_through_everything() {
    let gh = MockServer::start(paged_pulls(250)).await;
    let fx = github_fixture();
    let mcp = start_github(&fx, &gh, &[]).await;

    // The default page holds 100, as the one answer did before paging.
    let (data, page) = mcp
        .call_paged::<Value>("list_pull_requests", json!({"state": "all"}))
        .await;
    let expected: Vec<Value> = (151..=250).rev().map(expected_list_pr).collect();
    assert_eq!(data, json!({"pull_requests": expected}));
    // GitHub gives no count: more exist, at least one more.
    assert_eq!(page.total, 101);
    assert_eq!(page.total_exact, Some(false));
    let cursor = page.next_cursor.expect("a next page");
    // The third GitHub page is not fetched once 100 are collected.
    assert_eq!(
        gh.targets(),
        [
            "GET /repos/octo/widgets/pulls?state=all&per_page=50".to_string(),
            format!("GET /repositories/{REPO_ID}/pulls?state=all&per_page=50&page=2"),
        ]
    );
    // The next page resumes at GitHub's next page.
    gh.clear();
    let (data, _) = mcp
        .call_paged::<Value>(
            "list_pull_requests",
            json!({"state": "all", "cursor": cursor}),
        )
        .await;
    assert_eq!(data["pull_requests"][0], expected_list_pr(150));
    assert_eq!(
        gh.targets()[0],
        format!("GET /repositories/{REPO_ID}/pulls?state=all&per_page=50&page=3")
    );

    // Every page size walks the whole list once, in order; the last page knows the total.
    let all: Vec<Value> = (1..=250).rev().map(expected_list_pr).collect();
    for limit in [100, 30, 7] {
        let (items, pages) = walk(
            &mcp,
            "list_pull_requests",
            json!({"state": "all", "limit": limit}),
            "pull_requests",
        )
        .await;
        assert_eq!(items, all, "limit {limit}");
        assert_eq!(pages.last(), Some(&Page::new(250, None)), "limit {limit}");
        assert!(pages.iter().all(|p| p.total <= 250), "{pages:?}");
    }

    // Exactly 100: two full pages and no next link: one page, exact total.
    let gh = MockServer::start(paged_pulls(100)).await;
    let mcp = start_github(&fx, &gh, &[]).await;
    let (data, page) = mcp
        .call_paged::<Value>("list_pull_requests", json!({}))
        .await;
    assert_eq!(data["pull_requests"].as_array().unwrap().len(), 100);
    assert_eq!(page, Page::new(100, None));
    assert_eq!(gh.requests().len(), 2);
}

#[tokio::test]
async fn list_pull_requests_refuses_bad_cursors_and_limits() {
    let gh = MockServer::start(paged_pulls(250)).await;
    let fx = github_fixture();
    let mcp = start_github(&fx, &gh, &[]).await;
    let (_, page) = mcp
        .call_paged::<Value>("list_pull_requests", json!({"limit": 10}))
        .await;
    let cursor = page.next_cursor.unwrap();
    gh.clear();

    // Another state, or another repository, is another query.
    for args in [
        json!({"state": "closed", "cursor": cursor}),
        json!({"repo": "octo/gadgets", "cursor": cursor}),
    ] {
        let err = mcp.call_err("list_pull_requests", args.clone()).await;
        assert_eq!(err.code, errors::INVALID_PARAMS, "{args}: {err:?}");
        assert_eq!(
            err.message,
            "the cursor belongs to a different list_pull_requests query"
        );
        assert!(err.hint.contains("same arguments"), "{}", err.hint);
    }
    // `state` is normalised before binding: " OPEN " is the same query as the default.
    let (data, _) = mcp
        .call_paged::<Value>(
            "list_pull_requests",
            json!({"state": " OPEN ", "limit": 10, "cursor": cursor}),
        )
        .await;
    assert_eq!(data["pull_requests"][0], expected_list_pr(240));
    gh.clear();
    for forged in ["2", "Zm9yZ2Vk", &cursor[..cursor.len() - 2]] {
        let err = mcp
            .call_err("list_pull_requests", json!({"cursor": forged}))
            .await;
        assert_eq!(err.code, errors::INVALID_PARAMS, "{forged}");
        assert!(
            err.message.contains("not one this server issued"),
            "{}",
            err.message
        );
    }
    for limit in [0, 101] {
        let err = mcp
            .call_err("list_pull_requests", json!({"limit": limit}))
            .await;
        assert_error(
            &err,
            errors::INVALID_PARAMS,
            &format!("limit {limit} is out of range: give 1 to 100"),
            Some("Omit limit for pages of 100, or page with next_cursor."),
        );
    }
    assert!(gh.requests().is_empty(), "{:?}", gh.targets());
}

#[tokio::test]
async fn list_pull_requests_rejects_unknown_state() {
    let gh = MockServer::start(paged_pulls(3)).await;
    let fx = github_fixture();
    let mcp = start_github(&fx, &gh, &[]).await;
    for state in ["merged", "MERGED", ""] {
        let err = mcp
            .call_err("list_pull_requests", json!({"state": state}))
            .await;
        assert_error(
            &err,
            errors::INVALID_PARAMS,
            &format!(
                "`state` must be open, closed or all, got '{}'",
                state.to_ascii_lowercase()
            ),
            Some("Omit `state` to list open pull requests."),
        );
    }
    assert!(gh.requests().is_empty(), "{:?}", gh.targets());
}

// ---------------------------------------------------------------------------------------------
// GitHub: HTTP failures
// ---------------------------------------------------------------------------------------------

#[tokio::test]
async fn github_401_and_403_are_credentials_missing() {
    let gh = MockServer::start(github_errors).await;
    let fx = github_fixture();
    let mcp = start_github(&fx, &gh, &[]).await;
    for (number, status) in [(401, 401), (403, 403)] {
        for tool in ["get_pull_request", "get_pr_status"] {
            let err = mcp.call_err(tool, json!({"pr_number": number})).await;
            assert_eq!(err.code, errors::CREDENTIALS_MISSING, "{err:?}");
            assert_eq!(
                err.message,
                format!("GitHub credentials were rejected (HTTP {status})")
            );
            // Which machine the hint names is covered (and currently wrong for custom API
            // hosts) in `rejected_credentials_hint_names_the_api_host`.
            let hint = err.hint.as_str();
            assert!(
                hint.starts_with("Add credentials for ")
                    && hint.ends_with(" to `~/.netrc`. See `twig auth --help`."),
                "{hint}"
            );
        }
    }
    assert_eq!(
        gh.targets(),
        [
            "GET /repos/octo/widgets/pulls/401",
            "GET /repos/octo/widgets/pulls/401",
            "GET /repos/octo/widgets/pulls/403",
            "GET /repos/octo/widgets/pulls/403",
        ],
        "nothing more is fetched once the pull request is refused"
    );
}

#[tokio::test]
async fn github_redirect_to_another_origin_drops_credentials() {
    // GitHub answers 301 for renamed repositories; a redirect to another origin must not
    // carry our credentials along.
    let other = MockServer::start(github_api).await;
    let target = other.origin.clone();
    let gh = MockServer::start(move |req: &Request| {
        let location = format!("{target}{}", req.target());
        Reply::json(json!({
            "message": "Moved Permanently",
            "url": location,
            "documentation_url": "https://docs.github.com/rest/guides/best-practices-for-using-the-rest-api#follow-redirects",
        }))
        .status(301)
        .header("location", &location)
    })
    .await;
    let fx = github_fixture();
    let mcp = start_github(&fx, &gh, &[]).await;
    let data: Value = mcp
        .call_ok("get_pull_request", json!({"pr_number": 42}))
        .await;
    assert_eq!(data, expected_pr42());
    let bearer = format!("Bearer {GITHUB_TOKEN}");
    assert_eq!(
        gh.requests()[0].header("authorization"),
        Some(bearer.as_str())
    );
    let followed = other.requests();
    assert_eq!(other.targets(), ["GET /repos/octo/widgets/pulls/42"]);
    assert_eq!(followed[0].header("authorization"), None, "{followed:?}");
}

#[tokio::test]
async fn github_404_is_not_found() {
    let gh = MockServer::start(github_errors).await;
    let fx = github_fixture();
    let mcp = start_github(&fx, &gh, &[]).await;
    for tool in ["get_pull_request", "get_pr_status"] {
        let err = mcp.call_err(tool, json!({"pr_number": 999})).await;
        assert_error(
            &err,
            errors::NOT_FOUND,
            "Pull request #999 in octo/widgets not found",
            Some(
                "Check the PR number or repository name, and that your credentials can see the repository.",
            ),
        );
    }
    let err = mcp
        .call_err(
            "get_pull_request",
            json!({"pr_number": 42, "repo": "octo/gone"}),
        )
        .await;
    assert_eq!(err.code, errors::NOT_FOUND);
    assert_eq!(err.message, "Pull request #42 in octo/gone not found");
    let err = mcp
        .call_err("list_pull_requests", json!({"repo": "octo/gone"}))
        .await;
    assert_eq!(err.code, errors::NOT_FOUND);
    assert_eq!(err.message, "Repository octo/gone not found");
    assert_eq!(
        gh.targets(),
        [
            "GET /repos/octo/widgets/pulls/999",
            "GET /repos/octo/widgets/pulls/999",
            "GET /repos/octo/gone/pulls/42",
            "GET /repos/octo/gone/pulls?state=open&per_page=50",
        ]
    );
}

#[tokio::test]
async fn github_429_with_retry_after_is_rate_limited() {
    let gh = MockServer::start(github_errors).await;
    let fx = github_fixture();
    let mcp = start_github(&fx, &gh, &[]).await;
    for tool in ["get_pull_request", "get_pr_status"] {
        let before = unix_now();
        let err = mcp.call_err(tool, json!({"pr_number": 429})).await;
        let after = unix_now();
        assert_eq!(err.code, errors::RATE_LIMITED, "{err:?}");
        assert_eq!(err.message, "GitHub API rate limit exceeded");
        assert_retry_in(err.hint.as_str(), "GitHub", 42, before, after);
        assert!(err.retryable);
        assert_eq!(err.retry_after_secs, Some(42), "from Retry-After");
    }
}

#[tokio::test]
async fn github_403_with_exhausted_quota_is_rate_limited() {
    let gh = MockServer::start(github_errors).await;
    let fx = github_fixture();
    let mcp = start_github(&fx, &gh, &[]).await;
    for tool in ["get_pull_request", "get_pr_status"] {
        let err = mcp.call_err(tool, json!({"pr_number": 430})).await;
        assert_error(
            &err,
            errors::RATE_LIMITED,
            "GitHub API rate limit exceeded",
            Some("Rate limited by GitHub. Retry at 2026-11-22T10:00:00Z."),
        );
        // The wait until the reset, computed from x-ratelimit-reset.
        let reset = parse_rfc3339("2026-11-22T10:00:00Z");
        let before = unix_now();
        assert!(
            err.retry_after_secs
                .is_some_and(|secs| secs <= reset.saturating_sub(before.saturating_sub(60))),
            "{err:?}"
        );
    }
}

#[tokio::test]
async fn github_server_errors_are_network_errors() {
    let gh = MockServer::start(github_errors).await;
    let fx = github_fixture();
    let mcp = start_github(&fx, &gh, &[]).await;
    let err = mcp
        .call_err("get_pull_request", json!({"pr_number": 500}))
        .await;
    assert_error(
        &err,
        errors::NETWORK_ERROR,
        "GitHub API error: HTTP 500 Internal Server Error: Server Error",
        Some("Check your network connection. HTTP status: 500."),
    );
    // A non-JSON error page has no message to quote.
    let err = mcp
        .call_err("get_pr_status", json!({"pr_number": 502}))
        .await;
    assert_error(
        &err,
        errors::NETWORK_ERROR,
        "GitHub API error: HTTP 502 Bad Gateway",
        Some("Check your network connection. HTTP status: 502."),
    );
}

#[tokio::test]
async fn github_timeout_is_network_error() {
    let gh = MockServer::start(github_errors).await;
    let fx = github_fixture();
    let mcp = start_github(&fx, &gh, &["--timeout", "1"]).await;
    let started = Instant::now();
    let err = mcp
        .call_err("get_pull_request", json!({"pr_number": 504}))
        .await;
    let elapsed = started.elapsed();
    assert_error(
        &err,
        errors::NETWORK_ERROR,
        "GitHub API error: request timed out after 1s",
        Some("Check your network connection."),
    );
    assert!(
        elapsed >= Duration::from_millis(900) && elapsed < Duration::from_secs(8),
        "{elapsed:?}"
    );
    // The client still works afterwards.
    let data: Value = mcp
        .call_ok("get_pull_request", json!({"pr_number": 42}))
        .await;
    assert_eq!(data, expected_pr42());
}

// ---------------------------------------------------------------------------------------------
// GitHub: configuration and repository detection
// ---------------------------------------------------------------------------------------------

#[tokio::test]
async fn github_missing_credentials_then_added_mid_session() {
    let gh = MockServer::start(github_api).await;
    let fx = github_fixture();

    // Default API base: nothing is contacted, the hint names github.com.
    let mcp = fx.start(&[], &[]).await;
    for (tool, args) in [
        ("get_pull_request", json!({"pr_number": 42})),
        ("get_pr_status", json!({"pr_number": 42})),
        ("list_pull_requests", json!({})),
    ] {
        let err = mcp.call_err(tool, args).await;
        assert_error(
            &err,
            errors::CREDENTIALS_MISSING,
            "GitHub credentials not found",
            Some(GITHUB_CREDENTIALS_HINT),
        );
    }
    mcp.shutdown().await;

    // A custom API base: the hint names its host. A netrc entry for another machine, or an
    // empty token, does not count.
    fx.write_netrc("machine github.com login web-user password web-secret\n");
    let mcp = fx
        .start(
            &[],
            &[("GITHUB_API_URL", &gh.origin), ("GITHUB_TOKEN", "  ")],
        )
        .await;
    let err = mcp
        .call_err("get_pull_request", json!({"pr_number": 42}))
        .await;
    assert_error(
        &err,
        errors::CREDENTIALS_MISSING,
        "GitHub credentials not found",
        Some("Add credentials for 127.0.0.1 to `~/.netrc`. See `twig auth --help`."),
    );
    assert!(gh.requests().is_empty(), "{:?}", gh.targets());

    // The failure is not cached: credentials added now are used by the next call.
    fx.write_netrc(&format!(
        "machine 127.0.0.1 login {NETRC_LOGIN} password {NETRC_PASSWORD}\n"
    ));
    let data: Value = mcp
        .call_ok("get_pull_request", json!({"pr_number": 42}))
        .await;
    assert_eq!(data, expected_pr42());
    assert_eq!(gh.requests().len(), 1);
}

#[tokio::test]
async fn github_without_origin_remote_is_not_found() {
    let gh = MockServer::start(github_api).await;
    let fx = stacked();
    let mcp = start_github(&fx, &gh, &[]).await;
    for (tool, args) in [
        ("get_pull_request", json!({"pr_number": 42})),
        ("get_pr_status", json!({"pr_number": 42})),
        ("list_pull_requests", json!({})),
    ] {
        let err = mcp.call_err(tool, args).await;
        assert_error(
            &err,
            errors::NOT_FOUND,
            "No remote named 'origin' in this repository",
            Some("Add a GitHub remote named 'origin'."),
        );
    }
    assert!(gh.requests().is_empty(), "{:?}", gh.targets());

    // A remote added during the session is seen.
    fx.git(&["remote", "add", "origin", "git@github.com:octo/widgets.git"]);
    let data: Value = mcp
        .call_ok("get_pull_request", json!({"pr_number": 42}))
        .await;
    assert_eq!(data, expected_pr42());
}

#[tokio::test]
async fn github_non_github_origin_is_not_found_without_leaking_credentials() {
    let gh = MockServer::start(github_api).await;
    let fx = stacked();
    fx.git(&[
        "remote",
        "add",
        "origin",
        "https://oauth2:glpat-s3cr3tT0ken@gitlab.com/octo/widgets.git",
    ]);
    let mcp = start_github(&fx, &gh, &[]).await;
    let result = mcp.call("get_pull_request", json!({"pr_number": 42})).await;
    let text = serde_json::to_string(&result).unwrap();
    assert!(!text.contains("glpat-s3cr3tT0ken"), "{text}");
    let err = mcp
        .call_err("get_pull_request", json!({"pr_number": 42}))
        .await;
    assert_error(
        &err,
        errors::NOT_FOUND,
        "Remote 'origin' (https://gitlab.com/octo/widgets.git) is not a GitHub repository",
        Some("Ensure the 'origin' remote points to a GitHub repository."),
    );

    fx.git(&[
        "remote",
        "set-url",
        "origin",
        "git@gitlab.com:octo/widgets.git",
    ]);
    let err = mcp.call_err("list_pull_requests", json!({})).await;
    assert_error(
        &err,
        errors::NOT_FOUND,
        "Remote 'origin' (git@gitlab.com:octo/widgets.git) is not a GitHub repository",
        Some("Ensure the 'origin' remote points to a GitHub repository."),
    );
    assert!(gh.requests().is_empty(), "{:?}", gh.targets());
}

#[tokio::test]
async fn github_outside_a_repository() {
    let gh = MockServer::start(github_api).await;
    let fx = Fixture::empty();
    let mcp = fx
        .start_in(
            &fx.outside(),
            &[],
            &[
                ("GITHUB_API_URL", &gh.origin),
                ("GITHUB_TOKEN", GITHUB_TOKEN),
            ],
        )
        .await;

    // Explicit number and repository need no repository.
    let data: Value = mcp
        .call_ok(
            "get_pull_request",
            json!({"pr_number": 42, "repo": "octo/widgets"}),
        )
        .await;
    assert_eq!(data, expected_pr42());
    let data: Value = mcp
        .call_ok(
            "get_pr_status",
            json!({"pr_number": 42, "repo": "octo/widgets.git"}),
        )
        .await;
    assert_eq!(data, expected_pr42_status());
    let data: Value = mcp
        .call_ok("list_pull_requests", json!({"repo": "octo/widgets"}))
        .await;
    assert_eq!(
        data,
        json!({"pull_requests": [expected_list_pr(42), expected_list_pr(7)]})
    );
    let requests = gh.requests().len();

    for (tool, args) in [
        ("get_pull_request", json!({"pr_number": 42})),
        ("get_pull_request", json!({})),
        ("get_pr_status", json!({})),
        ("list_pull_requests", json!({})),
    ] {
        let err = mcp.call_err(tool, args).await;
        assert_error(
            &err,
            errors::NO_REPO,
            "twig-mcp was started outside a git repository",
            Some("Run twig-mcp from within a git repository."),
        );
    }
    for repo in ["octo", "octo/widgets/extra", "/widgets", "octo /widgets"] {
        let err = mcp
            .call_err("get_pull_request", json!({"pr_number": 42, "repo": repo}))
            .await;
        assert_error(
            &err,
            errors::INVALID_PARAMS,
            &format!("`repo` must be `owner/name`, got '{repo}'"),
            Some("Pass the repository as `owner/name`, e.g. `octo/widgets`."),
        );
    }
    assert_eq!(gh.requests().len(), requests, "{:?}", gh.targets());
}

// ---------------------------------------------------------------------------------------------
// GitHub: secrets
// ---------------------------------------------------------------------------------------------

/// Call every GitHub tool on success and failure paths; return the full JSON of each result.
async fn exercise_github_tools(mcp: &McpProcess) -> Vec<String> {
    let mut texts = Vec::new();
    for (tool, args) in [
        ("get_pull_request", json!({"pr_number": 42})),
        ("get_pr_status", json!({"pr_number": 42})),
        ("list_pull_requests", json!({})),
        ("get_pull_request", json!({"pr_number": 401})),
        ("get_pull_request", json!({"pr_number": 404})),
        ("get_pull_request", json!({"pr_number": 429})),
        ("get_pull_request", json!({"pr_number": 500})),
        ("get_pull_request", json!({"pr_number": 504})),
    ] {
        let result = mcp.call(tool, args).await;
        texts.push(serde_json::to_string(&result).unwrap());
    }
    texts
}

#[tokio::test]
async fn github_secrets_never_reach_results_or_logs() {
    let gh = MockServer::start(github_errors).await;
    let fx = github_fixture();
    let basic = base64(&format!("{NETRC_LOGIN}:{NETRC_PASSWORD}"));
    let url_basic = base64("apiuser:url-secret");
    let secrets = [
        GITHUB_TOKEN,
        NETRC_PASSWORD,
        basic.as_str(),
        "url-secret",
        url_basic.as_str(),
    ];

    // Run 1: netrc credentials. Run 2: token from the environment, and a password in the
    // API URL itself.
    let url_with_userinfo = format!("http://apiuser:url-secret@{}", gh.host_port());
    let runs: [(&[(&str, &str)], String); 2] = [
        (
            &[("GITHUB_API_URL", gh.origin.as_str())],
            format!("Basic {basic}"),
        ),
        (
            &[
                ("GITHUB_API_URL", url_with_userinfo.as_str()),
                ("GITHUB_TOKEN", GITHUB_TOKEN),
            ],
            format!("Bearer {GITHUB_TOKEN}"),
        ),
    ];
    for (i, (env, expected_auth)) in runs.iter().enumerate() {
        if i == 0 {
            fx.write_netrc(&format!(
                "machine 127.0.0.1 login {NETRC_LOGIN} password {NETRC_PASSWORD}\n"
            ));
        } else {
            std::fs::remove_file(fx.home().join(".netrc")).unwrap();
        }
        gh.clear();
        let mcp = fx.start(&["-vvv", "--timeout", "1"], env).await;
        let texts = exercise_github_tools(&mcp).await;
        let stderr = mcp.shutdown().await;

        // The credentials were really used...
        let requests = gh.requests();
        assert!(requests.len() >= 8, "{:?}", gh.targets());
        for req in &requests {
            assert_eq!(
                req.header("authorization"),
                Some(expected_auth.as_str()),
                "{req:?}"
            );
        }
        // ...the log really is verbose...
        assert!(
            stderr.contains("/repos/octo/widgets/pulls/42"),
            "expected debug logs of requests at -vvv:\n{stderr}"
        );
        // ...and no secret shows anywhere.
        for secret in secrets {
            for text in &texts {
                assert!(!text.contains(secret), "run {i}: {secret} in result {text}");
            }
            assert!(
                !stderr.contains(secret),
                "run {i}: {secret} in stderr:\n{stderr}"
            );
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Jira: issues
// ---------------------------------------------------------------------------------------------

#[tokio::test]
async fn jira_issue_by_key_with_adf_description() {
    let jira = MockServer::start(jira_api).await;
    let fx = stacked();
    let mcp = start_jira(&fx, &jira, &[]).await;

    let data: Value = mcp
        .call_ok("get_jira_issue", json!({"issue_key": " PROJ-7 "}))
        .await;
    assert_eq!(
        data,
        json!({
            "key": "PROJ-7",
            "summary": "Session expires too early",
            "description": ADF_TEXT,
            "status": "In Progress",
            "assignee": "Alice Doe",
        })
    );
    let requests = jira.requests();
    assert_eq!(requests.len(), 1);
    assert_eq!(requests[0].method, "GET");
    assert_eq!(requests[0].path, "/rest/api/3/issue/PROJ-7");
    assert_eq!(
        requests[0].params(),
        [(
            "fields".to_string(),
            "summary,status,description,assignee".to_string()
        )]
    );
    assert_jira_auth(&requests[0]);
}

#[tokio::test]
async fn jira_issue_of_current_branch_omits_null_fields() {
    let jira = MockServer::start(jira_api).await;
    let fx = stacked();
    fx.git(&["checkout", "-q", "feat/auth"]);
    let mcp = start_jira(&fx, &jira, &[]).await;

    let data: Value = mcp.call_ok("get_jira_issue", json!({})).await;
    assert_eq!(
        data,
        json!({"key": "PROJ-101", "summary": "OAuth device flow login", "status": "In Review"}),
        "null assignee and description must be omitted"
    );

    fx.git(&["checkout", "-q", "feat/auth-ui"]);
    let data: Value = mcp.call_ok("get_jira_issue", json!({})).await;
    assert_eq!(
        data,
        json!({
            "key": "PROJ-102",
            "summary": "Login screen",
            "description": "Build the login screen.",
            "status": "To Do",
            "assignee": "Bob Roe",
        })
    );
    let paths: Vec<String> = jira.requests().into_iter().map(|r| r.path).collect();
    assert_eq!(
        paths,
        ["/rest/api/3/issue/PROJ-101", "/rest/api/3/issue/PROJ-102"]
    );
}

#[tokio::test]
async fn jira_issue_key_resolution_errors() {
    let jira = MockServer::start(jira_api).await;
    let fx = stacked();
    fx.git(&["checkout", "-q", "feat/billing"]);
    let mcp = start_jira(&fx, &jira, &[]).await;

    let err = mcp.call_err("get_jira_issue", json!({})).await;
    assert_error(
        &err,
        errors::NOT_FOUND,
        "Branch 'feat/billing' has no linked Jira issue",
        Some("Provide an explicit issue_key parameter."),
    );
    let err = mcp
        .call_err("get_jira_issue", json!({"issue_key": "  "}))
        .await;
    assert_error(
        &err,
        errors::INVALID_PARAMS,
        "`issue_key` must not be empty",
        Some("Pass an issue key such as PROJ-123, or omit it."),
    );

    detach(&fx);
    let err = mcp.call_err("get_jira_issue", json!({})).await;
    assert_error(
        &err,
        errors::INVALID_PARAMS,
        "No issue_key provided and could not detect current branch",
        Some("Provide an explicit issue_key parameter."),
    );
    assert!(jira.requests().is_empty(), "{:?}", jira.targets());

    // Outside a repository the default issue needs the repository (`no_repo`); an explicit
    // key still works.
    let mcp = fx
        .start_in(&fx.outside(), &[], &[("JIRA_HOST", &jira.origin)])
        .await;
    let err = mcp.call_err("get_jira_issue", json!({})).await;
    assert_error(
        &err,
        errors::NO_REPO,
        "twig-mcp was started outside a git repository",
        Some("Run twig-mcp from within a git repository."),
    );
    let data: Value = mcp
        .call_ok("get_jira_issue", json!({"issue_key": "PROJ-101"}))
        .await;
    assert_eq!(data["key"], "PROJ-101");
}

#[tokio::test]
async fn list_jira_issues_builds_jql_and_follows_page_tokens() {
    let jira = MockServer::start(paged_search(70)).await;
    let fx = stacked();
    let mcp = start_jira(&fx, &jira, &[]).await;

    let data: Value = mcp
        .call_ok(
            "list_jira_issues",
            json!({"project": " PROJ ", "status": r#"Code "Review" \ QA"#, "assignee": "Me"}),
        )
        .await;
    let expected: Vec<Value> = (1..=70).rev().map(expected_list_issue).collect();
    assert_eq!(data, json!({"issues": expected}));

    let requests = jira.requests();
    assert_eq!(requests.len(), 2, "{:?}", jira.targets());
    let jql = r#"project = "PROJ" AND status = "Code \"Review\" \\ QA" AND assignee = currentUser() ORDER BY updated DESC"#;
    let first = [
        ("jql".to_string(), jql.to_string()),
        ("fields".to_string(), "summary,status,assignee".to_string()),
        ("maxResults".to_string(), "50".to_string()),
    ];
    assert_eq!(requests[0].path, "/rest/api/3/search/jql");
    assert_eq!(requests[0].params(), first);
    let mut second = first.to_vec();
    second.push(("nextPageToken".to_string(), page_token(1)));
    assert_eq!(requests[1].path, "/rest/api/3/search/jql");
    assert_eq!(requests[1].params(), second);
    for req in &requests {
        assert_jira_auth(req);
    }

    // Another assignee is quoted; empty filters are left out; quotes in the project are
    // escaped rather than ending the literal.
    for (args, jql) in [
        (
            json!({"project": "PROJ", "assignee": "5b10ac8d82e05b22cc7d4ef5", "status": " "}),
            r#"project = "PROJ" AND assignee = "5b10ac8d82e05b22cc7d4ef5" ORDER BY updated DESC"#,
        ),
        (
            json!({"project": r#"PROJ" OR project = "HR"#}),
            r#"project = "PROJ\" OR project = \"HR" ORDER BY updated DESC"#,
        ),
    ] {
        jira.clear();
        let _: Value = mcp.call_ok("list_jira_issues", args).await;
        assert_eq!(jira.requests()[0].param("jql").as_deref(), Some(jql));
    }

    let err = mcp
        .call_err("list_jira_issues", json!({"project": "  "}))
        .await;
    assert_error(
        &err,
        errors::INVALID_PARAMS,
        "`project` must not be empty",
        Some("Pass a Jira project key such as PROJ."),
    );
}

#[tokio::test]
async fn list_jira_issues_pages_through_everything() {
    let jira = MockServer::start(paged_search(180)).await;
    let fx = stacked();
    let mcp = start_jira(&fx, &jira, &[]).await;
    let (data, page) = mcp
        .call_paged::<Value>("list_jira_issues", json!({"project": "PROJ"}))
        .await;
    let expected: Vec<Value> = (81..=180).rev().map(expected_list_issue).collect();
    assert_eq!(data, json!({"issues": expected}));
    // The search gives no count: more exist, at least one more.
    assert_eq!((page.total, page.total_exact), (101, Some(false)));
    assert_eq!(jira.requests().len(), 2, "{:?}", jira.targets());
    let cursor = page.next_cursor.expect("a next page");
    jira.clear();
    let (data, page) = mcp
        .call_paged::<Value>(
            "list_jira_issues",
            json!({"project": "PROJ", "cursor": cursor}),
        )
        .await;
    assert_eq!(data["issues"][0], expected_list_issue(80));
    assert_eq!(page, Page::new(180, None));
    // It resumes with the search's own page token.
    assert_eq!(
        jira.requests()[0].param("nextPageToken"),
        Some(page_token(2))
    );

    let all: Vec<Value> = (1..=180).rev().map(expected_list_issue).collect();
    for limit in [100, 33, 1] {
        let (items, pages) = walk(
            &mcp,
            "list_jira_issues",
            json!({"project": "PROJ", "limit": limit}),
            "issues",
        )
        .await;
        assert_eq!(items, all, "limit {limit}");
        assert_eq!(pages.last(), Some(&Page::new(180, None)), "limit {limit}");
    }

    // Exactly 100 in two pages, the last saying so: one page, exact total.
    let jira = MockServer::start(paged_search(100)).await;
    let mcp = start_jira(&fx, &jira, &[]).await;
    let (data, page) = mcp
        .call_paged::<Value>("list_jira_issues", json!({"project": "PROJ"}))
        .await;
    assert_eq!(data["issues"].as_array().unwrap().len(), 100);
    assert_eq!(page, Page::new(100, None));
}

#[tokio::test]
async fn list_jira_issues_refuses_bad_cursors_and_limits() {
    let jira = MockServer::start(paged_search(180)).await;
    let fx = stacked();
    let mcp = start_jira(&fx, &jira, &[]).await;
    let (_, page) = mcp
        .call_paged::<Value>(
            "list_jira_issues",
            json!({"project": "PROJ", "status": "To Do", "limit": 5}),
        )
        .await;
    let cursor = page.next_cursor.unwrap();
    jira.clear();
    for args in [
        json!({"project": "PROJ", "cursor": cursor}),
        json!({"project": "OTHER", "status": "To Do", "cursor": cursor}),
        json!({"project": "PROJ", "status": "To Do", "assignee": "me", "cursor": cursor}),
    ] {
        let err = mcp.call_err("list_jira_issues", args.clone()).await;
        assert_eq!(err.code, errors::INVALID_PARAMS, "{args}: {err:?}");
        assert_eq!(
            err.message,
            "the cursor belongs to a different list_jira_issues query"
        );
    }
    let err = mcp
        .call_err(
            "list_jira_issues",
            json!({"project": "PROJ", "cursor": "not-a-cursor"}),
        )
        .await;
    assert_eq!(err.code, errors::INVALID_PARAMS);
    assert!(err.hint.contains("next_cursor"), "{}", err.hint);
    for limit in [0, 101] {
        let err = mcp
            .call_err(
                "list_jira_issues",
                json!({"project": "PROJ", "limit": limit}),
            )
            .await;
        assert_error(
            &err,
            errors::INVALID_PARAMS,
            &format!("limit {limit} is out of range: give 1 to 100"),
            Some("Omit limit for pages of 100, or page with next_cursor."),
        );
    }
    assert!(jira.requests().is_empty(), "{:?}", jira.targets());
    // Trimmed filters are the same query.
    let (data, _) = mcp
        .call_paged::<Value>(
            "list_jira_issues",
            json!({"project": " PROJ ", "status": " To Do ", "limit": 5, "cursor": cursor}),
        )
        .await;
    assert_eq!(data["issues"].as_array().unwrap().len(), 5);
}

// ---------------------------------------------------------------------------------------------
// Jira: failures and configuration
// ---------------------------------------------------------------------------------------------

fn jira_errors(req: &Request) -> Reply {
    match req.path.as_str() {
        "/rest/api/3/issue/PROJ-401" => Reply::text(
            401,
            "text/plain;charset=UTF-8",
            "Client must be authenticated to access this resource.",
        ),
        "/rest/api/3/issue/PROJ-429" => {
            jira_error(429, "Rate limit exceeded.").header("retry-after", "7")
        }
        "/rest/api/3/issue/PROJ-430" => jira_error(429, "Rate limit exceeded.")
            .header("x-ratelimit-limit", "100")
            .header("x-ratelimit-remaining", "0")
            .header("x-ratelimit-reset", "2026-11-22T10:00Z"),
        "/rest/api/3/issue/PROJ-500" => jira_error(500, "Internal server error"),
        "/rest/api/3/issue/PROJ-504" => jira_api(&Request {
            path: "/rest/api/3/issue/PROJ-7".into(),
            ..req.clone()
        })
        .delay(Duration::from_secs(10)),
        "/rest/api/3/search/jql" => Reply::json(json!({
            "errorMessages": ["The value 'NOPE' does not exist for the field 'project'."],
            "errors": {},
            "warningMessages": [],
        }))
        .status(400),
        _ => jira_api(req),
    }
}

#[tokio::test]
async fn jira_http_errors() {
    let jira = MockServer::start(jira_errors).await;
    let fx = stacked();
    let mcp = start_jira(&fx, &jira, &[]).await;
    let issue = |key: &str| json!({"issue_key": key});

    let err = mcp.call_err("get_jira_issue", issue("PROJ-401")).await;
    assert_error(
        &err,
        errors::CREDENTIALS_MISSING,
        "Jira credentials were rejected (HTTP 401)",
        Some(JIRA_CREDENTIALS_HINT),
    );

    let err = mcp.call_err("get_jira_issue", issue("PROJ-404")).await;
    assert_error(
        &err,
        errors::NOT_FOUND,
        "Jira issue PROJ-404 not found",
        Some("Check the issue key and that your Jira account can see this project."),
    );

    let before = unix_now();
    let err = mcp.call_err("get_jira_issue", issue("PROJ-429")).await;
    let after = unix_now();
    assert_eq!(err.code, errors::RATE_LIMITED, "{err:?}");
    assert_eq!(err.message, "Jira API rate limit exceeded");
    assert_retry_in(err.hint.as_str(), "Jira", 7, before, after);
    assert_eq!(err.retry_after_secs, Some(7));

    let err = mcp.call_err("get_jira_issue", issue("PROJ-430")).await;
    assert_error(
        &err,
        errors::RATE_LIMITED,
        "Jira API rate limit exceeded",
        Some("Rate limited by Jira. Retry at 2026-11-22T10:00Z."),
    );
    // A reset time Jira gives as a date is passed on in the hint, not computed.
    assert_eq!(err.retry_after_secs, None);

    let err = mcp.call_err("get_jira_issue", issue("PROJ-500")).await;
    assert_error(
        &err,
        errors::NETWORK_ERROR,
        "Jira API error: HTTP 500 Internal Server Error: Internal server error",
        Some("Check your network connection. HTTP status: 500."),
    );

    let err = mcp
        .call_err("list_jira_issues", json!({"project": "NOPE"}))
        .await;
    assert_error(
        &err,
        errors::NETWORK_ERROR,
        "Jira API error: HTTP 400 Bad Request: The value 'NOPE' does not exist for the field 'project'.",
        Some("Check your network connection. HTTP status: 400."),
    );
}

#[tokio::test]
async fn jira_timeout_is_network_error() {
    let jira = MockServer::start(jira_errors).await;
    let fx = stacked();
    let mcp = start_jira(&fx, &jira, &["--timeout", "1"]).await;
    let started = Instant::now();
    let err = mcp
        .call_err("get_jira_issue", json!({"issue_key": "PROJ-504"}))
        .await;
    let elapsed = started.elapsed();
    assert_error(
        &err,
        errors::NETWORK_ERROR,
        "Jira API error: request timed out after 1s",
        Some("Check your network connection."),
    );
    assert!(
        elapsed >= Duration::from_millis(900) && elapsed < Duration::from_secs(8),
        "{elapsed:?}"
    );
}

#[tokio::test]
async fn jira_missing_configuration_is_credentials_missing() {
    let jira = MockServer::start(jira_api).await;
    let fx = stacked();
    fx.git(&["checkout", "-q", "feat/auth"]);
    jira_netrc(&fx);

    // No $JIRA_HOST.
    let mcp = fx.start(&[], &[]).await;
    for (tool, args) in [
        ("get_jira_issue", json!({})),
        ("get_jira_issue", json!({"issue_key": "PROJ-7"})),
        ("list_jira_issues", json!({"project": "PROJ"})),
    ] {
        let err = mcp.call_err(tool, args).await;
        assert_error(
            &err,
            errors::CREDENTIALS_MISSING,
            "Jira credentials not found",
            Some(JIRA_CREDENTIALS_HINT),
        );
    }
    mcp.shutdown().await;

    // $JIRA_HOST but no netrc entry for its host (and no default entry).
    fx.write_netrc(&format!(
        "machine acme.atlassian.net login {JIRA_LOGIN} password {JIRA_TOKEN}\n"
    ));
    let mcp = fx.start(&[], &[("JIRA_HOST", &jira.origin)]).await;
    for (tool, args) in [
        ("get_jira_issue", json!({"issue_key": "PROJ-7"})),
        ("list_jira_issues", json!({"project": "PROJ"})),
    ] {
        let err = mcp.call_err(tool, args).await;
        assert_error(
            &err,
            errors::CREDENTIALS_MISSING,
            "Jira credentials not found",
            Some(JIRA_CREDENTIALS_HINT),
        );
    }
    assert!(jira.requests().is_empty(), "{:?}", jira.targets());

    // Not cached: an entry added now is used.
    jira_netrc(&fx);
    let data: Value = mcp.call_ok("get_jira_issue", json!({})).await;
    assert_eq!(data["key"], "PROJ-101");
    assert_jira_auth(&jira.requests()[0]);
}

#[tokio::test]
async fn jira_host_scheme_defaults_to_https_and_honours_http() {
    let jira = MockServer::start(jira_api).await;
    let fx = stacked();
    jira_netrc(&fx);

    // No scheme: https is assumed, which a plain-HTTP server cannot answer.
    let mcp = fx.start(&[], &[("JIRA_HOST", &jira.host_port())]).await;
    let err = mcp
        .call_err("get_jira_issue", json!({"issue_key": "PROJ-7"}))
        .await;
    assert_eq!(err.code, errors::NETWORK_ERROR, "{err:?}");
    assert!(
        err.message.starts_with("Jira API error: request failed: "),
        "{err:?}"
    );
    assert!(
        err.message.contains(&format!(
            "https://{}/rest/api/3/issue/PROJ-7",
            jira.host_port()
        )),
        "https must be assumed: {err:?}"
    );
    assert_eq!(
        Some(err.hint.as_str()),
        Some("Check your network connection.")
    );
    assert!(jira.requests().is_empty(), "{:?}", jira.targets());
    mcp.shutdown().await;

    // http:// is honoured (any case, trailing slash, context path).
    for (host, path) in [
        (
            format!("http://{}", jira.host_port()),
            "/rest/api/3/issue/PROJ-7",
        ),
        (
            format!("HTTP://{}/", jira.host_port()),
            "/rest/api/3/issue/PROJ-7",
        ),
        (
            format!("http://{}/jira/", jira.host_port()),
            "/jira/rest/api/3/issue/PROJ-7",
        ),
    ] {
        jira.clear();
        let mcp = fx.start(&[], &[("JIRA_HOST", &host)]).await;
        let data: Value = mcp
            .call_ok("get_jira_issue", json!({"issue_key": "PROJ-7"}))
            .await;
        assert_eq!(data["description"], ADF_TEXT, "{host}");
        let paths: Vec<String> = jira.requests().into_iter().map(|r| r.path).collect();
        assert_eq!(paths, [path], "{host}");
        mcp.shutdown().await;
    }
}

#[tokio::test]
async fn jira_secrets_never_reach_results_or_logs() {
    let jira = MockServer::start(jira_errors).await;
    let fx = stacked();
    jira_netrc(&fx);
    let host = format!("http://jirauser:host-secret@{}", jira.host_port());
    let mcp = fx
        .start(&["-vvv", "--timeout", "1"], &[("JIRA_HOST", &host)])
        .await;
    let mut texts = Vec::new();
    for (tool, args) in [
        ("get_jira_issue", json!({"issue_key": "PROJ-7"})),
        ("list_jira_issues", json!({"project": "NOPE"})),
        ("get_jira_issue", json!({"issue_key": "PROJ-401"})),
        ("get_jira_issue", json!({"issue_key": "PROJ-404"})),
        ("get_jira_issue", json!({"issue_key": "PROJ-429"})),
        ("get_jira_issue", json!({"issue_key": "PROJ-500"})),
        ("get_jira_issue", json!({"issue_key": "PROJ-504"})),
    ] {
        let result = mcp.call(tool, args).await;
        texts.push(serde_json::to_string(&result).unwrap());
    }
    let stderr = mcp.shutdown().await;

    let requests = jira.requests();
    assert_eq!(requests.len(), 7, "{:?}", jira.targets());
    for req in &requests {
        assert_jira_auth(req);
    }
    assert!(
        stderr.contains("/rest/api/3/issue/PROJ-7"),
        "expected debug logs of requests at -vvv:\n{stderr}"
    );
    let basic = base64(&format!("{JIRA_LOGIN}:{JIRA_TOKEN}"));
    for secret in [JIRA_TOKEN, basic.as_str(), "host-secret"] {
        for text in &texts {
            assert!(!text.contains(secret), "{secret} in result {text}");
        }
        assert!(!stderr.contains(secret), "{secret} in stderr:\n{stderr}");
    }
}

// ---------------------------------------------------------------------------------------------
// The branch context resource
// ---------------------------------------------------------------------------------------------

#[tokio::test]
async fn branch_context_resource_with_both_services() {
    let gh = MockServer::start(github_api).await;
    let jira = MockServer::start(jira_api).await;
    let fx = github_fixture();
    // One netrc entry serves both mocks: the machine is the host, without port.
    jira_netrc(&fx);
    let mcp = fx
        .start(
            &[],
            &[("GITHUB_API_URL", &gh.origin), ("JIRA_HOST", &jira.origin)],
        )
        .await;

    let ctx = mcp
        .read_resource_json("twig://branch/feat%2Fauth/context")
        .await;
    assert_eq!(
        ctx,
        json!({
            "branch": "feat/auth",
            "metadata": {"status": "ok", "data": {
                "branch": "feat/auth",
                "jira_issue": "PROJ-101",
                "pr_number": 42,
                "parent_branch": "main",
                "parents": ["main"],
                "created_at": "2026-03-01T10:00:00.123456789+00:00",
            }},
            "jira_issue": {"status": "ok", "data": {
                "key": "PROJ-101",
                "summary": "OAuth device flow login",
                "status": "In Review",
            }},
            "pull_request": {"status": "ok", "data": expected_pr42_status()},
        })
    );
    assert_eq!(
        jira.targets(),
        ["GET /rest/api/3/issue/PROJ-101?fields=summary%2Cstatus%2Cdescription%2Cassignee"]
    );
    assert_eq!(
        sorted_after_first(gh.targets()),
        expected_pr42_status_targets()
    );
    let basic = format!("Basic {}", base64(&format!("{JIRA_LOGIN}:{JIRA_TOKEN}")));
    for req in gh.requests().iter().chain(jira.requests().iter()) {
        assert_eq!(req.header("authorization"), Some(basic.as_str()), "{req:?}");
    }

    // A branch with a PR but no Jira issue: that part alone is an error.
    let ctx = mcp
        .read_resource_json("twig://branch/feat%2Fbilling/context")
        .await;
    assert_eq!(ctx["branch"], "feat/billing");
    assert_eq!(ctx["metadata"]["status"], "ok");
    assert_eq!(
        ctx["jira_issue"],
        json!({"status": "error", "error": {
            "code": "not_found",
            "message": "Branch 'feat/billing' has no linked Jira issue",
            "hint": "Link one with `twig` (e.g. `twig jira link` / `twig github link`).",
            "retryable": false,
        }})
    );
    assert_eq!(
        ctx["pull_request"],
        json!({"status": "ok", "data": {"pull_request": expected_pr7(), "reviews": [], "checks": []}})
    );
    assert_eq!(jira.requests().len(), 1, "no further Jira request");
}

// ---------------------------------------------------------------------------------------------
// Known server bugs: these assert the intended behaviour and are ignored until fixed.
// ---------------------------------------------------------------------------------------------

#[tokio::test]
async fn rejected_credentials_hint_names_the_api_host() {
    let gh = MockServer::start(github_errors).await;
    let fx = github_fixture();
    let mcp = start_github(&fx, &gh, &[]).await;
    let err = mcp
        .call_err("get_pull_request", json!({"pr_number": 401}))
        .await;
    // The machine twig-mcp would read for this API host, as the "not found" hint says.
    assert_eq!(
        Some(err.hint.as_str()),
        Some("Add credentials for 127.0.0.1 to `~/.netrc`. See `twig auth --help`.")
    );
}

#[tokio::test]
async fn unfollowed_next_link_gives_a_lower_bound() {
    let gh = MockServer::start(|req: &Request| {
        // The same server under another name, i.e. another origin: not followed.
        let port = req.origin.rsplit(':').next().unwrap();
        let next = format!(
            "http://localhost:{port}/repositories/{REPO_ID}/pulls?state=open&per_page=50&page=2"
        );
        gh_ok(json!([gh_pull_simple(3), gh_pull_simple(2)]))
            .header("link", &link_header(&[(next, "next")]))
    })
    .await;
    let fx = github_fixture();
    let mcp = start_github(&fx, &gh, &[]).await;
    let (data, page) = mcp
        .call_paged::<Value>("list_pull_requests", json!({}))
        .await;
    assert_eq!(gh.requests().len(), 1, "{:?}", gh.targets());
    assert_eq!(data["pull_requests"].as_array().unwrap().len(), 2);
    // A next page exists but cannot be fetched: no cursor, and the total says "at least".
    assert_eq!(page, Page::at_least(3, None));
}

#[tokio::test]
async fn invalid_api_url_does_not_leak_its_password() {
    let fx = github_fixture();
    let mcp = fx
        .start(
            &[],
            &[
                ("GITHUB_API_URL", "ftp://apiuser:url-secret@127.0.0.1"),
                ("GITHUB_TOKEN", GITHUB_TOKEN),
            ],
        )
        .await;
    let result = mcp.call("get_pull_request", json!({"pr_number": 42})).await;
    let text = serde_json::to_string(&result).unwrap();
    assert!(!text.contains("url-secret"), "{text}");
    let err = mcp
        .call_err("get_pull_request", json!({"pr_number": 42}))
        .await;
    assert_eq!(err.code, errors::NETWORK_ERROR);
    assert_eq!(
        Some(err.hint.as_str()),
        Some("Check the configured GitHub base URL.")
    );
}

#[tokio::test]
async fn dot_segments_in_identifiers_are_rejected() {
    let gh = MockServer::start(github_api).await;
    let jira = MockServer::start(jira_api).await;
    let fx = github_fixture();
    jira_netrc(&fx);
    let mcp = fx
        .start(
            &[],
            &[
                ("GITHUB_API_URL", &gh.origin),
                ("GITHUB_TOKEN", GITHUB_TOKEN),
                ("JIRA_HOST", &jira.origin),
            ],
        )
        .await;
    for repo in ["octo/..", "../widgets", "./."] {
        let err = mcp
            .call_err("get_pull_request", json!({"pr_number": 42, "repo": repo}))
            .await;
        assert_eq!(err.code, errors::INVALID_PARAMS, "{repo}: {err:?}");
    }
    for key in ["..", "."] {
        let err = mcp
            .call_err("get_jira_issue", json!({"issue_key": key}))
            .await;
        assert_eq!(err.code, errors::INVALID_PARAMS, "{key}: {err:?}");
    }
    // Today `octo/..` requests /repos/octo/pulls/42 and `..` requests /rest/api/3/issue.
    assert!(gh.requests().is_empty(), "{:?}", gh.targets());
    assert!(jira.requests().is_empty(), "{:?}", jira.targets());
}

/// With several remotes, the repository of `origin` is asked, whatever the others are and
/// whichever is listed first.
#[tokio::test]
async fn several_remotes_use_origin() {
    let gh = MockServer::start(github_api).await;
    let fx = stacked();
    fx.git(&[
        "remote",
        "add",
        "upstream",
        "https://github.com/upstream-org/widgets.git",
    ]);
    fx.git(&[
        "remote",
        "add",
        "fork",
        "git@github.com:someone/widgets.git",
    ]);
    fx.git(&[
        "remote",
        "add",
        "origin",
        "ssh://git@github.com/octo/widgets",
    ]);
    let mcp = start_github(&fx, &gh, &[]).await;
    let data: Value = mcp
        .call_ok("get_pull_request", json!({"pr_number": 42}))
        .await;
    assert_eq!(data, expected_pr42());
    assert_eq!(gh.targets(), ["GET /repos/octo/widgets/pulls/42"]);
}
