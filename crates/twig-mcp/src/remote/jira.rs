//! A read-only client of the Jira Cloud REST API (v3): one issue, and issue searches by JQL.
//!
//! The site comes from `$JIRA_HOST`; credentials (an account e-mail and an API token) from the
//! `~/.netrc` entry of that host.

use std::path::Path;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use url::Url;

use super::RemotePage;
use super::adf;
use super::http::{Auth, HttpClient, RemoteError, strip_userinfo};
use super::netrc::{self, Credentials};
use crate::types::JiraIssueResponse;

/// Page size of issue searches.
const SEARCH_PAGE_SIZE: u32 = 50;
/// The most pages followed for one answer, a guard against endless page tokens.
const MAX_PAGES: usize = 20;

/// Where an issue listing resumes: the search page to fetch (its `nextPageToken`; `None` for
/// the first), how many of its issues were already returned, and how many issues the earlier
/// pages of the listing returned.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SearchPosition {
    pub token: Option<String>,
    pub skip: usize,
    pub seen: u64,
}

/// The site's base URL from a `$JIRA_HOST` value such as `acme.atlassian.net`,
/// `https://acme.atlassian.net/` or `http://jira.local:8080/jira`.
///
/// `https://` is assumed when the value has no scheme; `http://` is honoured. Trailing slashes
/// are trimmed, and a user name or password in the value is dropped (credentials come from
/// `~/.netrc`). Returns `None` for an empty value, another scheme, or an unparsable value.
pub fn base_url_from_host(host: &str) -> Option<Url> {
    let value = host.trim().trim_end_matches('/');
    if value.is_empty() {
        return None;
    }
    let lower = value.to_ascii_lowercase();
    let with_scheme = if lower.starts_with("https://") || lower.starts_with("http://") {
        value.to_string()
    } else if value.contains("://") {
        return None;
    } else {
        format!("https://{value}")
    };
    let mut url = Url::parse(&with_scheme).ok()?;
    url.host_str().filter(|h| !h.is_empty())?;
    strip_userinfo(&mut url);
    url.set_query(None);
    url.set_fragment(None);
    Some(url)
}

/// The `~/.netrc` credentials for the Jira site at `base` (machine = the URL's host, without
/// port; the `default` entry otherwise).
pub fn credentials(home: &Path, base: &Url) -> Option<Credentials> {
    netrc::lookup(home, base.host_str()?)
}

/// The JQL of an issue list: issues of `project`, optionally in `status` and assigned to
/// `assignee` (`me`, in any case, means the authenticated user), most recently updated first.
/// Every value is double-quoted with `\` and `"` escaped; empty filters are ignored.
pub fn build_jql(project: &str, status: Option<&str>, assignee: Option<&str>) -> String {
    let mut jql = format!("project = {}", quote_jql(project));
    if let Some(status) = status.filter(|s| !s.trim().is_empty()) {
        jql.push_str(" AND status = ");
        jql.push_str(&quote_jql(status));
    }
    if let Some(assignee) = assignee.filter(|a| !a.trim().is_empty()) {
        if assignee.trim().eq_ignore_ascii_case("me") {
            jql.push_str(" AND assignee = currentUser()");
        } else {
            jql.push_str(" AND assignee = ");
            jql.push_str(&quote_jql(assignee));
        }
    }
    jql.push_str(" ORDER BY updated DESC");
    jql
}

/// `value` as a JQL string literal.
fn quote_jql(value: &str) -> String {
    let mut quoted = String::with_capacity(value.len() + 2);
    quoted.push('"');
    for c in value.chars() {
        if matches!(c, '"' | '\\') {
            quoted.push('\\');
        }
        quoted.push(c);
    }
    quoted.push('"');
    quoted
}

/// An issue as the API returns it (only the fields used).
#[derive(Debug, Deserialize)]
struct ApiIssue {
    key: String,
    fields: ApiFields,
}

#[derive(Debug, Deserialize)]
struct ApiFields {
    summary: Option<String>,
    status: Option<ApiStatus>,
    #[serde(default)]
    description: serde_json::Value,
    assignee: Option<ApiUser>,
}

#[derive(Debug, Deserialize)]
struct ApiStatus {
    name: String,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct ApiUser {
    display_name: Option<String>,
}

/// A page of `/rest/api/3/search/jql`.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct ApiSearchPage {
    #[serde(default)]
    issues: Vec<ApiIssue>,
    next_page_token: Option<String>,
    is_last: Option<bool>,
}

impl ApiIssue {
    /// The response form; `with_description: false` leaves the description out (lists).
    fn into_response(self, with_description: bool) -> JiraIssueResponse {
        let description = if with_description {
            let text = adf::to_plain_text(&self.fields.description);
            let text = text.trim();
            (!text.is_empty()).then(|| text.to_string())
        } else {
            None
        };
        JiraIssueResponse {
            key: self.key,
            summary: self.fields.summary.unwrap_or_default(),
            description,
            status: self.fields.status.map(|s| s.name).unwrap_or_default(),
            assignee: self.fields.assignee.and_then(|a| a.display_name),
        }
    }
}

/// A read-only Jira REST API client.
#[derive(Debug, Clone)]
pub struct JiraClient {
    http: HttpClient,
    base: Url,
}

impl JiraClient {
    /// A client for the site at `base` (see [`base_url_from_host`]) authenticating with HTTP
    /// basic authentication, giving up on a request after `timeout`.
    pub fn new(base: Url, creds: Credentials, timeout: Duration) -> Result<Self, RemoteError> {
        if !matches!(base.scheme(), "https" | "http") || base.cannot_be_a_base() {
            return Err(RemoteError::InvalidUrl(format!(
                "`{base}` is not an http(s) URL"
            )));
        }
        let mut base = base;
        strip_userinfo(&mut base);
        let http = HttpClient::new(
            &[("accept", "application/json")],
            Auth::Basic {
                login: creds.login,
                password: creds.password,
            },
            timeout,
        )?;
        Ok(Self { http, base })
    }

    /// The URL of `/rest/api/3/` followed by `segments` (each percent-encoded as needed).
    fn endpoint(&self, segments: &[&str]) -> Url {
        let mut url = self.base.clone();
        if let Ok(mut path) = url.path_segments_mut() {
            path.pop_if_empty()
                .extend(["rest", "api", "3"])
                .extend(segments);
        }
        url
    }

    /// One issue with its description as plain text.
    pub async fn get_issue(&self, key: &str) -> Result<JiraIssueResponse, RemoteError> {
        let mut url = self.endpoint(&["issue", key]);
        url.query_pairs_mut()
            .append_pair("fields", "summary,status,description,assignee");
        let issue: ApiIssue = self.http.get_json(url).await?.body;
        Ok(issue.into_response(true))
    }

    /// One page of up to `limit` issues of `project`, optionally filtered by status and
    /// assignee (see [`build_jql`]), most recently updated first, without descriptions,
    /// starting at `from` (the first page when `None`). The search gives no count: the total
    /// is exact only on the last page.
    pub async fn list_issues(
        &self,
        project: &str,
        status: Option<&str>,
        assignee: Option<&str>,
        from: Option<&SearchPosition>,
        limit: usize,
    ) -> Result<RemotePage<JiraIssueResponse, SearchPosition>, RemoteError> {
        let jql = build_jql(project, status, assignee);
        let (mut token, mut skip, seen) = match from {
            Some(position) => (position.token.clone(), position.skip, position.seen),
            None => (None, 0, 0),
        };
        let mut issues = Vec::new();
        let mut pages = 0;
        loop {
            let mut url = self.endpoint(&["search", "jql"]);
            {
                let mut query = url.query_pairs_mut();
                query
                    .append_pair("jql", &jql)
                    .append_pair("fields", "summary,status,assignee")
                    .append_pair("maxResults", &SEARCH_PAGE_SIZE.to_string());
                if let Some(token) = &token {
                    query.append_pair("nextPageToken", token);
                }
            }
            let page: ApiSearchPage = self.http.get_json(url).await?.body;
            pages += 1;
            let page_len = page.issues.len();
            let wanted = limit.saturating_sub(issues.len());
            let before = issues.len();
            issues.extend(
                page.issues
                    .into_iter()
                    .skip(skip)
                    .take(wanted)
                    .map(|issue| issue.into_response(false)),
            );
            let consumed = skip + (issues.len() - before);
            let returned = seen + issues.len() as u64;
            let next_token = page
                .next_page_token
                .filter(|t| !t.is_empty() && page.is_last != Some(true));
            if consumed < page_len {
                // The page is full before this search page ends: resume inside it.
                let rest = (page_len - consumed) as u64;
                let more_pages = next_token.is_some();
                return Ok(RemotePage {
                    items: issues,
                    next: Some(SearchPosition {
                        token,
                        skip: consumed,
                        seen: returned,
                    }),
                    total: returned + rest + u64::from(more_pages),
                    exact: !more_pages,
                });
            }
            match next_token {
                None => {
                    return Ok(RemotePage {
                        items: issues,
                        next: None,
                        total: returned,
                        exact: true,
                    });
                }
                Some(next) if issues.len() >= limit || pages >= MAX_PAGES => {
                    return Ok(RemotePage {
                        items: issues,
                        next: Some(SearchPosition {
                            token: Some(next),
                            skip: 0,
                            seen: returned,
                        }),
                        total: returned + 1,
                        exact: false,
                    });
                }
                Some(next) => {
                    token = Some(next);
                    skip = 0;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::{
        Json, Router,
        extract::{Path as AxPath, Query},
        http::{HeaderMap, StatusCode},
        response::{IntoResponse, Response},
        routing::get,
    };
    use serde_json::{Value, json};
    use std::collections::HashMap;

    #[test]
    fn base_url_variants() {
        let url = |s: &str| base_url_from_host(s).map(|u| u.to_string());
        assert_eq!(
            url("acme.atlassian.net").as_deref(),
            Some("https://acme.atlassian.net/")
        );
        assert_eq!(
            url("https://acme.atlassian.net/").as_deref(),
            Some("https://acme.atlassian.net/")
        );
        assert_eq!(
            url("http://jira.local:8080/jira/").as_deref(),
            Some("http://jira.local:8080/jira")
        );
        assert_eq!(
            url(" HTTPS://user:pw@acme.atlassian.net ").as_deref(),
            Some("https://acme.atlassian.net/")
        );
        assert_eq!(url(""), None);
        assert_eq!(url("  / "), None);
        assert_eq!(url("ftp://acme.atlassian.net"), None);
    }

    #[test]
    fn credentials_use_the_host_without_port() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join(".netrc"),
            "machine jira.local login me@example.com password api-token\n",
        )
        .unwrap();
        let base = base_url_from_host("http://jira.local:8080/jira").unwrap();
        assert_eq!(
            credentials(dir.path(), &base),
            Some(Credentials {
                login: "me@example.com".into(),
                password: "api-token".into(),
            })
        );
        let other = base_url_from_host("acme.atlassian.net").unwrap();
        assert_eq!(credentials(dir.path(), &other), None);
    }

    #[test]
    fn jql_building() {
        assert_eq!(
            build_jql("PROJ", None, None),
            r#"project = "PROJ" ORDER BY updated DESC"#
        );
        assert_eq!(
            build_jql("PROJ", Some("In Progress"), Some("ME")),
            r#"project = "PROJ" AND status = "In Progress" AND assignee = currentUser() ORDER BY updated DESC"#
        );
        assert_eq!(
            build_jql("PROJ", None, Some("5b10ac8d82e05b22cc7d4ef5")),
            r#"project = "PROJ" AND assignee = "5b10ac8d82e05b22cc7d4ef5" ORDER BY updated DESC"#
        );
        assert_eq!(
            build_jql(r#"A" OR project = "B"#, Some(r"x\y"), Some("")),
            r#"project = "A\" OR project = \"B" AND status = "x\\y" ORDER BY updated DESC"#
        );
    }

    // --- Client tests against a local mock of the API. ---

    fn authorized(headers: &HeaderMap) -> bool {
        // "me@example.com:api-token" in base64.
        headers.get("authorization").and_then(|v| v.to_str().ok())
            == Some("Basic bWVAZXhhbXBsZS5jb206YXBpLXRva2Vu")
            && headers.get("accept").and_then(|v| v.to_str().ok()) == Some("application/json")
    }

    fn issue_json(key: &str, description: Value) -> Value {
        json!({
            "id": "10001",
            "key": key,
            "fields": {
                "summary": format!("Summary of {key}"),
                "status": {"name": "In Progress", "statusCategory": {"key": "indeterminate"}},
                "assignee": {"displayName": "Alice Doe", "accountId": "abc"},
                "description": description,
            }
        })
    }

    async fn issue(
        headers: HeaderMap,
        AxPath(key): AxPath<String>,
        Query(query): Query<HashMap<String, String>>,
    ) -> Response {
        if !authorized(&headers) {
            return (StatusCode::UNAUTHORIZED, "Unauthorized").into_response();
        }
        assert_eq!(
            query.get("fields").map(String::as_str),
            Some("summary,status,description,assignee")
        );
        match key.as_str() {
            "PROJ-1" => Json(issue_json(
                "PROJ-1",
                json!({"type": "doc", "version": 1, "content": [
                    {"type": "paragraph", "content": [{"type": "text", "text": "Fix the bug."}]}
                ]}),
            ))
            .into_response(),
            "PROJ-2" => {
                let mut issue = issue_json("PROJ-2", Value::Null);
                issue["fields"]["assignee"] = Value::Null;
                Json(issue).into_response()
            }
            "PROJ-3" => Json(issue_json("PROJ-3", json!("plain text\n"))).into_response(),
            "A/B" => Json(issue_json("A/B", Value::Null)).into_response(),
            _ => (
                StatusCode::NOT_FOUND,
                Json(json!({"errorMessages": ["Issue does not exist or you do not have permission to see it."], "errors": {}})),
            )
                .into_response(),
        }
    }

    async fn search(headers: HeaderMap, Query(query): Query<HashMap<String, String>>) -> Response {
        if !authorized(&headers) {
            return (StatusCode::UNAUTHORIZED, "Unauthorized").into_response();
        }
        assert_eq!(
            query.get("jql").map(String::as_str),
            Some(r#"project = "PROJ" AND assignee = currentUser() ORDER BY updated DESC"#)
        );
        assert_eq!(
            query.get("fields").map(String::as_str),
            Some("summary,status,assignee")
        );
        assert_eq!(query.get("maxResults").map(String::as_str), Some("50"));
        // Two pages of 50 and 5 issues; the second is requested with the token of the first.
        let (page, range) = match query.get("nextPageToken").map(String::as_str) {
            None => (json!({"nextPageToken": "tok+/=2", "isLast": false}), 1..51),
            Some("tok+/=2") => (json!({"isLast": true}), 51..56),
            Some(other) => panic!("unexpected token {other}"),
        };
        let issues: Vec<Value> = range
            .map(|n| issue_json(&format!("PROJ-{n}"), Value::Null))
            .collect();
        let mut page = page;
        page["issues"] = Value::Array(issues);
        Json(page).into_response()
    }

    async fn start_mock(password: &str) -> JiraClient {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let base = format!("http://{}/jira", listener.local_addr().unwrap());
        let app = Router::new()
            .route("/jira/rest/api/3/issue/{key}", get(issue))
            .route("/jira/rest/api/3/search/jql", get(search));
        tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        JiraClient::new(
            base_url_from_host(&base).unwrap(),
            Credentials {
                login: "me@example.com".into(),
                password: password.into(),
            },
            Duration::from_secs(10),
        )
        .unwrap()
    }

    #[tokio::test]
    async fn gets_issues() {
        let client = start_mock("api-token").await;
        assert_eq!(
            client.get_issue("PROJ-1").await.unwrap(),
            JiraIssueResponse {
                key: "PROJ-1".into(),
                summary: "Summary of PROJ-1".into(),
                description: Some("Fix the bug.".into()),
                status: "In Progress".into(),
                assignee: Some("Alice Doe".into()),
            }
        );
        let two = client.get_issue("PROJ-2").await.unwrap();
        assert_eq!(two.description, None);
        assert_eq!(two.assignee, None);
        let three = client.get_issue("PROJ-3").await.unwrap();
        assert_eq!(three.description.as_deref(), Some("plain text"));
        // The key is one path segment, even with a slash in it.
        assert_eq!(client.get_issue("A/B").await.unwrap().key, "A/B");
        assert!(matches!(
            client.get_issue("PROJ-404").await,
            Err(RemoteError::NotFound)
        ));
    }

    #[tokio::test]
    async fn rejected_credentials() {
        let client = start_mock("wrong").await;
        assert!(matches!(
            client.get_issue("PROJ-1").await,
            Err(RemoteError::Unauthorized { status: 401 })
        ));
    }

    #[tokio::test]
    async fn lists_issues_across_pages() {
        let client = start_mock("api-token").await;
        let all: Vec<String> = (1..=55).map(|n| format!("PROJ-{n}")).collect();
        for limit in [100, 55, 50, 10, 1] {
            let mut keys = Vec::new();
            let mut totals = Vec::new();
            let mut from: Option<SearchPosition> = None;
            loop {
                let page = client
                    .list_issues("PROJ", None, Some("me"), from.as_ref(), limit)
                    .await
                    .unwrap();
                assert!(page.items.len() <= limit);
                assert!(page.items.iter().all(|i| i.description.is_none()));
                keys.extend(page.items.iter().map(|i| i.key.clone()));
                totals.push((page.total, page.exact));
                match page.next {
                    Some(next) => from = Some(next),
                    None => break,
                }
            }
            assert_eq!(keys, all, "limit {limit}");
            let (last, rest) = totals.split_last().unwrap();
            assert_eq!(*last, (55, true), "limit {limit}");
            assert!(
                rest.iter()
                    .all(|&(total, exact)| if exact { total == 55 } else { total < 55 }),
                "{rest:?}"
            );
        }
        let first = client
            .list_issues("PROJ", None, Some("me"), None, 100)
            .await
            .unwrap();
        assert_eq!(first.items[0].status, "In Progress");
        assert_eq!((first.total, first.exact), (55, true));

        // Stopping inside the second search page keeps its token to resume there.
        let part = client
            .list_issues("PROJ", None, Some("me"), None, 52)
            .await
            .unwrap();
        assert_eq!(
            part.next,
            Some(SearchPosition {
                token: Some("tok+/=2".into()),
                skip: 2,
                seen: 52
            })
        );
        assert_eq!((part.total, part.exact), (55, true));
    }
}
