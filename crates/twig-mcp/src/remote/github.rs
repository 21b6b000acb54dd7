//! A read-only client of the GitHub REST API (v3): pull requests, their reviews and the check
//! runs of their head commit.
//!
//! Also here: finding the GitHub repository of a git remote URL, and finding credentials in
//! `~/.netrc` or the `GITHUB_TOKEN`/`GH_TOKEN` environment values.

use std::fmt;
use std::path::Path;
use std::time::Duration;

use reqwest::header::{HeaderMap, LINK};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use url::Url;

use super::RemotePage;
use super::http::{Auth, HttpClient, RemoteError, same_origin, strip_userinfo};
use super::netrc::{self, Credentials};
use crate::types::{CheckRunInfo, PrFact, PrStatusResponse, PullRequestResponse, ReviewInfo};

/// The API base URL of github.com.
pub const DEFAULT_API_BASE: &str = "https://api.github.com";

/// Page size of the pull request list.
const PULLS_PER_PAGE: u32 = 50;
/// Page size of the review and check run lists (GitHub's maximum).
const DETAILS_PER_PAGE: u32 = 100;
/// The most pages followed for one answer, a guard against endless `next` links.
const MAX_PAGES: usize = 20;

/// Where a pull request listing resumes: the API page to fetch (the `Link: rel="next"` URL
/// GitHub gave, or the page already begun), how many of its items were already returned,
/// and how many items the earlier pages of the listing returned.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PullsPosition {
    pub url: String,
    pub skip: usize,
    pub seen: u64,
}

/// The API base URL from its configuration value (e.g. `$GITHUB_API_URL`): the value without
/// surrounding whitespace and trailing slashes, or [`DEFAULT_API_BASE`] when unset or empty.
pub fn api_base_from_env(value: Option<&str>) -> String {
    match value.map(|v| v.trim().trim_end_matches('/')) {
        Some(v) if !v.is_empty() => v.to_string(),
        _ => DEFAULT_API_BASE.to_string(),
    }
}

/// How requests to GitHub authenticate. The `Debug` output never shows the secret.
#[derive(Clone, PartialEq, Eq)]
pub enum GitHubAuth {
    /// Login and password (usually a personal access token) from `~/.netrc`, sent as HTTP
    /// basic authentication.
    Netrc(Credentials),
    /// A token from the environment, sent as `Authorization: Bearer`.
    Token(String),
}

impl fmt::Debug for GitHubAuth {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Netrc(creds) => f.debug_tuple("Netrc").field(creds).finish(),
            Self::Token(_) => f.write_str("Token(<redacted>)"),
        }
    }
}

impl From<GitHubAuth> for Auth {
    fn from(auth: GitHubAuth) -> Self {
        match auth {
            GitHubAuth::Netrc(Credentials { login, password }) => Auth::Basic { login, password },
            GitHubAuth::Token(token) => Auth::Bearer(token),
        }
    }
}

/// Find GitHub credentials, in this order:
///
/// 1. a `machine` entry of `home/.netrc` for the API's host: for `api.github.com` the machine
///    `github.com`, then `api.github.com`; for other hosts the host without a leading `api.`,
///    then the host itself;
/// 2. `github_token` (`$GITHUB_TOKEN`), then `gh_token` (`$GH_TOKEN`), ignoring empty values;
/// 3. the `default` entry of the netrc file.
pub fn credentials(
    home: Option<&Path>,
    api_base: &str,
    github_token: Option<&str>,
    gh_token: Option<&str>,
) -> Option<GitHubAuth> {
    let hosts = Url::parse(api_base)
        .ok()
        .and_then(|url| url.host_str().map(netrc_machines))
        .unwrap_or_default();
    let from_machine = hosts
        .iter()
        .find_map(|host| home.and_then(|home| netrc::lookup_machine(home, host)));
    if let Some(creds) = from_machine {
        return Some(GitHubAuth::Netrc(creds));
    }
    let token = [github_token, gh_token]
        .into_iter()
        .flatten()
        .map(str::trim)
        .find(|t| !t.is_empty());
    if let Some(token) = token {
        return Some(GitHubAuth::Token(token.to_string()));
    }
    home.and_then(netrc::lookup_default).map(GitHubAuth::Netrc)
}

/// The netrc machine names to try for an API host, most specific to the user first.
fn netrc_machines(api_host: &str) -> Vec<String> {
    let host = api_host.to_ascii_lowercase();
    match host.strip_prefix("api.") {
        Some(web) if !web.is_empty() => vec![web.to_string(), host.clone()],
        _ => vec![host],
    }
}

/// A repository on GitHub.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct GitHubRepo {
    pub owner: String,
    pub repo: String,
}

impl fmt::Display for GitHubRepo {
    /// `owner/repo`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.owner, self.repo)
    }
}

/// The GitHub repository a git remote URL points to, if it is on GitHub.
///
/// Accepted forms: `https://[user@]HOST/owner/repo[.git]`, the same with `http://`,
/// `ssh://[git@]HOST[:port]/owner/repo[.git]`, `git@HOST:owner/repo[.git]` and
/// `git://HOST/owner/repo[.git]`, each with an optional trailing slash. `HOST` must be
/// `github.com`, `www.github.com`, `ssh.github.com` (GitHub's SSH-over-443 host) or the host of
/// `api_base` without a leading `api.` (so `https://ghe.corp/api/v3` accepts `ghe.corp`).
/// The path must be exactly `owner/repo`.
pub fn parse_remote(url: &str, api_base: &str) -> Option<GitHubRepo> {
    let url = url.trim();
    let (host, path) = match url.split_once("://") {
        Some((scheme, _)) => {
            let scheme = scheme.to_ascii_lowercase();
            if !matches!(
                scheme.as_str(),
                "https" | "http" | "ssh" | "git" | "git+ssh" | "ssh+git"
            ) {
                return None;
            }
            let parsed = Url::parse(url).ok()?;
            (parsed.host_str()?.to_string(), parsed.path().to_string())
        }
        None => {
            // scp-like syntax: [user@]host:path, where the host part has no slash.
            let (left, path) = url.split_once(':')?;
            if left.contains('/') {
                return None;
            }
            let host = left.rsplit_once('@').map_or(left, |(_, host)| host);
            (host.to_string(), path.to_string())
        }
    };

    let host = host.to_ascii_lowercase();
    if !accepted_hosts(api_base).contains(&host) {
        return None;
    }

    let path = path.trim_matches('/');
    let path = path.strip_suffix(".git").unwrap_or(path);
    let mut segments = path.split('/');
    let (Some(owner), Some(repo), None) = (segments.next(), segments.next(), segments.next())
    else {
        return None;
    };
    if !valid_name(owner) || !valid_name(repo) {
        return None;
    }
    Some(GitHubRepo {
        owner: owner.to_string(),
        repo: repo.to_string(),
    })
}

/// Hosts whose remotes [`parse_remote`] accepts, lowercase.
fn accepted_hosts(api_base: &str) -> Vec<String> {
    let mut hosts = vec![
        "github.com".to_string(),
        "www.github.com".to_string(),
        "ssh.github.com".to_string(),
    ];
    if let Some(host) = Url::parse(api_base)
        .ok()
        .and_then(|u| u.host_str().map(str::to_ascii_lowercase))
    {
        let host = match host.strip_prefix("api.") {
            Some(web) if !web.is_empty() => web.to_string(),
            _ => host,
        };
        if !hosts.contains(&host) {
            hosts.push(host);
        }
    }
    hosts
}

/// Whether `name` can be a GitHub owner or repository name (letters, digits, `-`, `_`, `.`;
/// not `.` or `..`).
pub(crate) fn valid_name(name: &str) -> bool {
    !name.is_empty()
        && name != "."
        && name != ".."
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
}

/// The URL of the `rel="next"` link of an RFC 8288 (formerly RFC 5988) `Link` header value,
/// e.g. `<https://api.github.com/repositories/1/pulls?page=2>; rel="next", <…>; rel="last"`.
/// Relation types are compared case-insensitively and may be a space-separated list.
pub(crate) fn next_link(header: &str) -> Option<String> {
    let mut rest = header;
    loop {
        let start = rest.find('<')?;
        let after = &rest[start + 1..];
        let end = after.find('>')?;
        let target = &after[..end];
        let params_and_rest = &after[end + 1..];

        // The link's parameters run up to the next comma outside double quotes.
        let mut in_quotes = false;
        let mut params_end = params_and_rest.len();
        for (i, c) in params_and_rest.char_indices() {
            match c {
                '"' => in_quotes = !in_quotes,
                ',' if !in_quotes => {
                    params_end = i;
                    break;
                }
                _ => {}
            }
        }
        let params = &params_and_rest[..params_end];
        rest = &params_and_rest[params_end..];

        let is_next = params.split(';').any(|param| {
            param.split_once('=').is_some_and(|(key, value)| {
                key.trim().eq_ignore_ascii_case("rel")
                    && value
                        .trim()
                        .trim_matches('"')
                        .split_whitespace()
                        .any(|rel| rel.eq_ignore_ascii_case("next"))
            })
        });
        if is_next {
            return Some(target.trim().to_string());
        }
    }
}

/// A pull request as the API returns it (only the fields used).
#[derive(Debug, Deserialize)]
struct ApiPull {
    number: u32,
    title: String,
    state: String,
    user: Option<ApiUser>,
    base: ApiRef,
    head: ApiRef,
    draft: Option<bool>,
    mergeable: Option<bool>,
    created_at: String,
    updated_at: String,
    /// Set when the pull request was merged.
    #[serde(default)]
    merged_at: Option<String>,
}

#[derive(Debug, Deserialize)]
struct ApiUser {
    login: String,
}

#[derive(Debug, Deserialize)]
struct ApiRef {
    #[serde(rename = "ref")]
    name: String,
    sha: String,
}

#[derive(Debug, Deserialize)]
struct ApiReview {
    user: Option<ApiUser>,
    state: String,
}

#[derive(Debug, Deserialize)]
struct ApiCheckRuns {
    check_runs: Vec<ApiCheckRun>,
}

#[derive(Debug, Deserialize)]
struct ApiCheckRun {
    name: String,
    status: String,
    conclusion: Option<String>,
}

/// The login GitHub shows for deleted accounts.
fn login_or_ghost(user: Option<ApiUser>) -> String {
    user.map_or_else(|| "ghost".to_string(), |u| u.login)
}

impl ApiPull {
    /// The response form; `with_mergeable: false` reports `mergeable` as null (list entries).
    fn into_response(self, with_mergeable: bool) -> PullRequestResponse {
        PullRequestResponse {
            number: self.number,
            title: self.title,
            state: self.state,
            author: login_or_ghost(self.user),
            base: self.base.name,
            head: self.head.name,
            draft: self.draft.unwrap_or(false),
            mergeable: if with_mergeable { self.mergeable } else { None },
            created_at: self.created_at,
            updated_at: self.updated_at,
        }
    }
}

/// A read-only GitHub REST API client.
#[derive(Debug, Clone)]
pub struct GitHubClient {
    http: HttpClient,
    base: Url,
}

impl GitHubClient {
    /// A client for the API at `api_base` (e.g. `https://api.github.com` or
    /// `https://ghe.corp/api/v3`) that gives up on a request after `timeout`.
    pub fn new(api_base: &str, auth: GitHubAuth, timeout: Duration) -> Result<Self, RemoteError> {
        // The configured URL may carry a password: error messages quote it only without one.
        let mut base = Url::parse(api_base.trim())
            .map_err(|e| RemoteError::InvalidUrl(format!("GITHUB_API_URL: {e}")))?;
        strip_userinfo(&mut base);
        if !matches!(base.scheme(), "https" | "http") || base.cannot_be_a_base() {
            return Err(RemoteError::InvalidUrl(format!(
                "`{base}` is not an http(s) URL"
            )));
        }
        base.set_query(None);
        base.set_fragment(None);

        let http = HttpClient::new(
            &[
                ("accept", "application/vnd.github+json"),
                ("x-github-api-version", "2022-11-28"),
            ],
            auth.into(),
            timeout,
        )?;
        Ok(Self { http, base })
    }

    /// The URL of the API path made of `segments` (each percent-encoded as needed).
    fn endpoint(&self, segments: &[&str]) -> Url {
        let mut url = self.base.clone();
        if let Ok(mut path) = url.path_segments_mut() {
            path.pop_if_empty().extend(segments);
        }
        url
    }

    fn repo_endpoint(&self, repo: &GitHubRepo, rest: &[&str]) -> Url {
        let mut segments = vec!["repos", repo.owner.as_str(), repo.repo.as_str()];
        segments.extend_from_slice(rest);
        self.endpoint(&segments)
    }

    /// One pull request.
    pub async fn get_pull_request(
        &self,
        repo: &GitHubRepo,
        number: u32,
    ) -> Result<PullRequestResponse, RemoteError> {
        Ok(self.fetch_pull(repo, number).await?.into_response(true))
    }

    /// Whether pull request `number` is open, closed or merged.
    pub async fn pull_fact(&self, repo: &GitHubRepo, number: u32) -> Result<PrFact, RemoteError> {
        let pull = self.fetch_pull(repo, number).await?;
        Ok(PrFact {
            number: pull.number,
            merged: pull.merged_at.is_some(),
            state: pull.state,
        })
    }

    async fn fetch_pull(&self, repo: &GitHubRepo, number: u32) -> Result<ApiPull, RemoteError> {
        let url = self.repo_endpoint(repo, &["pulls", &number.to_string()]);
        Ok(self.http.get_json(url).await?.body)
    }

    /// A pull request with its reviews (in the order GitHub lists them) and the check runs of
    /// its head commit.
    pub async fn get_pr_status(
        &self,
        repo: &GitHubRepo,
        number: u32,
    ) -> Result<PrStatusResponse, RemoteError> {
        let pull = self.fetch_pull(repo, number).await?;
        let number_text = number.to_string();

        let mut reviews_url = self.repo_endpoint(repo, &["pulls", &number_text, "reviews"]);
        reviews_url
            .query_pairs_mut()
            .append_pair("per_page", &DETAILS_PER_PAGE.to_string());
        let mut checks_url = self.repo_endpoint(repo, &["commits", &pull.head.sha, "check-runs"]);
        checks_url
            .query_pairs_mut()
            .append_pair("per_page", &DETAILS_PER_PAGE.to_string());

        let reviews = self.collect_pages(reviews_url, usize::MAX, |page: Vec<ApiReview>| {
            page.into_iter()
                .map(|r| ReviewInfo {
                    author: login_or_ghost(r.user),
                    state: r.state,
                })
                .collect()
        });
        let checks = self.collect_pages(checks_url, usize::MAX, |page: ApiCheckRuns| {
            page.check_runs
                .into_iter()
                .map(|c| CheckRunInfo {
                    name: c.name,
                    status: c.status,
                    conclusion: c.conclusion,
                })
                .collect()
        });
        let ((reviews, _), (checks, _)) = tokio::try_join!(reviews, checks)?;

        Ok(PrStatusResponse {
            pull_request: pull.into_response(true),
            reviews,
            checks,
        })
    }

    /// One page of up to `limit` pull requests in `state` (`open`, `closed` or `all`), in
    /// GitHub's default order (newest first), starting at `from` (the first page when
    /// `None`). GitHub's list has no count: the total is exact only on the last page.
    pub async fn list_pull_requests(
        &self,
        repo: &GitHubRepo,
        state: &str,
        from: Option<&PullsPosition>,
        limit: usize,
    ) -> Result<RemotePage<PullRequestResponse, PullsPosition>, RemoteError> {
        let (mut url, mut skip, seen) = match from {
            Some(position) => {
                let url = Url::parse(&position.url)
                    .ok()
                    .filter(|url| same_origin(&self.base, url))
                    .ok_or_else(|| {
                        RemoteError::InvalidUrl(format!(
                            "`{}` is not a page of the configured API",
                            position.url
                        ))
                    })?;
                (url, position.skip, position.seen)
            }
            None => {
                let mut url = self.repo_endpoint(repo, &["pulls"]);
                url.query_pairs_mut()
                    .append_pair("state", state)
                    .append_pair("per_page", &PULLS_PER_PAGE.to_string());
                (url, 0, 0)
            }
        };
        let mut items = Vec::new();
        let mut pages = 0;
        loop {
            let response = self.http.get_json::<Vec<ApiPull>>(url.clone()).await?;
            pages += 1;
            let (next_url, unfollowed) = self.next_page(&url, &response.headers);
            let page_len = response.body.len();
            let wanted = limit.saturating_sub(items.len());
            let before = items.len();
            items.extend(
                response
                    .body
                    .into_iter()
                    .skip(skip)
                    .take(wanted)
                    .map(|p| p.into_response(false)),
            );
            let consumed = skip + (items.len() - before);
            let returned = seen + items.len() as u64;
            let more_pages = next_url.is_some() || unfollowed;
            if consumed < page_len {
                // The page is full before this API page ends: resume inside it.
                let rest = (page_len - consumed) as u64;
                return Ok(RemotePage {
                    items,
                    next: Some(PullsPosition {
                        url: url.to_string(),
                        skip: consumed,
                        seen: returned,
                    }),
                    total: returned + rest + u64::from(more_pages),
                    exact: !more_pages,
                });
            }
            match next_url {
                Some(next) if items.len() >= limit || pages >= MAX_PAGES => {
                    return Ok(RemotePage {
                        items,
                        next: Some(PullsPosition {
                            url: next.to_string(),
                            skip: 0,
                            seen: returned,
                        }),
                        total: returned + 1,
                        exact: false,
                    });
                }
                Some(next) => {
                    url = next;
                    skip = 0;
                }
                // The end of the list, or a next page that must not be followed.
                None => {
                    return Ok(RemotePage {
                        items,
                        next: None,
                        total: returned + u64::from(unfollowed),
                        exact: !unfollowed,
                    });
                }
            }
        }
    }

    /// Fetch `first` and the pages its `Link: rel="next"` headers lead to, collecting up to
    /// `limit` items with `items`. Returns the items and whether any were left out (items
    /// dropped, or a next page not fetched).
    async fn collect_pages<P, I>(
        &self,
        first: Url,
        limit: usize,
        items: impl Fn(P) -> Vec<I>,
    ) -> Result<(Vec<I>, bool), RemoteError>
    where
        P: DeserializeOwned,
    {
        let mut collected = Vec::new();
        let mut next = Some(first);
        let mut pages = 0;
        while let Some(url) = next.take() {
            let response = self.http.get_json::<P>(url.clone()).await?;
            pages += 1;
            let (page_next, unfollowed) = self.next_page(&url, &response.headers);
            for item in items(response.body) {
                if collected.len() >= limit {
                    return Ok((collected, true));
                }
                collected.push(item);
            }
            if page_next.is_some() && (collected.len() >= limit || pages >= MAX_PAGES) {
                return Ok((collected, true));
            }
            if unfollowed {
                return Ok((collected, true));
            }
            next = page_next;
        }
        Ok((collected, false))
    }

    /// The next page's URL from the `Link` headers of a response to `current`, resolved
    /// against it. Links to another origin are not followed (they would receive our
    /// credentials); a warning is logged and pagination stops. The flag says whether a next
    /// page exists that will not be fetched.
    fn next_page(&self, current: &Url, headers: &HeaderMap) -> (Option<Url>, bool) {
        let Some(link) = headers
            .get_all(LINK)
            .iter()
            .filter_map(|v| v.to_str().ok())
            .find_map(next_link)
        else {
            return (None, false);
        };
        match current.join(&link) {
            Ok(url) if same_origin(&self.base, &url) => (Some(url), false),
            Ok(url) => {
                tracing::warn!(next = %url, "not following a pagination link to another origin");
                (None, true)
            }
            Err(_) => (None, true),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::{
        Json, Router,
        extract::{Path as AxPath, Query, State},
        http::{HeaderMap as AxHeaders, StatusCode},
        response::{IntoResponse, Response},
        routing::get,
    };
    use serde_json::{Value, json};
    use std::collections::HashMap;

    const API: &str = "https://api.github.com";

    fn repo(owner: &str, name: &str) -> Option<GitHubRepo> {
        Some(GitHubRepo {
            owner: owner.into(),
            repo: name.into(),
        })
    }

    #[test]
    fn api_base_defaults_and_trims() {
        assert_eq!(api_base_from_env(None), "https://api.github.com");
        assert_eq!(api_base_from_env(Some("  ")), "https://api.github.com");
        assert_eq!(
            api_base_from_env(Some("https://ghe.corp/api/v3/")),
            "https://ghe.corp/api/v3"
        );
    }

    #[test]
    fn parses_https_remotes() {
        let expected = repo("octo", "widgets");
        for url in [
            "https://github.com/octo/widgets",
            "https://github.com/octo/widgets.git",
            "https://github.com/octo/widgets/",
            "https://github.com/octo/widgets.git/",
            "https://user@github.com/octo/widgets.git",
            "https://user:token@github.com/octo/widgets",
            "http://github.com/octo/widgets",
            "https://www.github.com/octo/widgets",
            "HTTPS://GitHub.com/octo/widgets",
            "  https://github.com/octo/widgets\n",
        ] {
            assert_eq!(parse_remote(url, API), expected, "{url}");
        }
    }

    #[test]
    fn parses_ssh_and_git_remotes() {
        let expected = repo("octo", "widgets");
        for url in [
            "git@github.com:octo/widgets.git",
            "git@github.com:octo/widgets",
            "git@github.com:octo/widgets/",
            "github.com:octo/widgets.git",
            "ssh://git@github.com/octo/widgets.git",
            "ssh://git@github.com:22/octo/widgets.git",
            "ssh://git@ssh.github.com:443/octo/widgets.git",
            "git+ssh://git@github.com/octo/widgets",
            "git://github.com/octo/widgets",
            "git://github.com/octo/widgets.git",
        ] {
            assert_eq!(parse_remote(url, API), expected, "{url}");
        }
    }

    #[test]
    fn repo_names_keep_inner_dots() {
        assert_eq!(
            parse_remote("https://github.com/octo/my.repo.git", API),
            repo("octo", "my.repo")
        );
        assert_eq!(
            parse_remote("git@github.com:my-org/my.repo", API),
            repo("my-org", "my.repo")
        );
        assert_eq!(
            parse_remote("https://github.com/o_o/.github", API),
            repo("o_o", ".github")
        );
    }

    #[test]
    fn enterprise_hosts_follow_the_api_base() {
        let ghe = "https://ghe.corp/api/v3";
        assert_eq!(
            parse_remote("git@ghe.corp:team/tool.git", ghe),
            repo("team", "tool")
        );
        assert_eq!(
            parse_remote("https://ghe.corp/team/tool", ghe),
            repo("team", "tool")
        );
        assert_eq!(
            parse_remote("https://github.com/team/tool", ghe),
            repo("team", "tool")
        );
        assert_eq!(
            parse_remote("https://acme.ghe.com/team/tool", "https://api.acme.ghe.com"),
            repo("team", "tool")
        );
        assert_eq!(parse_remote("git@ghe.corp:team/tool.git", API), None);
    }

    #[test]
    fn rejects_other_hosts_and_shapes() {
        for url in [
            "https://gitlab.com/octo/widgets",
            "git@bitbucket.org:octo/widgets.git",
            "https://github.com/octo",
            "https://github.com/octo/widgets/pulls",
            "https://github.com//widgets",
            "https://github.com/octo/../x",
            "file:///home/me/widgets",
            "/home/me/widgets",
            "../widgets",
            "ftp://github.com/octo/widgets",
            "",
        ] {
            assert_eq!(parse_remote(url, API), None, "{url}");
        }
    }

    #[test]
    fn link_header_parsing() {
        let header = r#"<https://api.github.com/repositories/1/pulls?page=2&per_page=50>; rel="next", <https://api.github.com/repositories/1/pulls?page=5&per_page=50>; rel="last""#;
        assert_eq!(
            next_link(header).as_deref(),
            Some("https://api.github.com/repositories/1/pulls?page=2&per_page=50")
        );
        let header = r#"<https://x/?page=1>; rel="prev"; title="a, b", <https://x/?page=3>; rel="last next""#;
        assert_eq!(next_link(header).as_deref(), Some("https://x/?page=3"));
        assert_eq!(
            next_link(r#"<https://x/?page=3>; REL=Next"#).as_deref(),
            Some("https://x/?page=3")
        );
        assert_eq!(next_link(r#"<https://x/?page=1>; rel="prev""#), None);
        assert_eq!(next_link(""), None);
        assert_eq!(next_link("garbage"), None);
    }

    #[test]
    fn credentials_order() {
        let dir = tempfile::tempdir().unwrap();
        let home = dir.path();
        let basic = |login: &str, password: &str| {
            Some(GitHubAuth::Netrc(Credentials {
                login: login.into(),
                password: password.into(),
            }))
        };

        assert_eq!(credentials(Some(home), API, None, None), None);
        assert_eq!(
            credentials(Some(home), API, Some(""), Some("gh")),
            Some(GitHubAuth::Token("gh".into()))
        );
        assert_eq!(
            credentials(Some(home), API, Some("env"), Some("gh")),
            Some(GitHubAuth::Token("env".into()))
        );

        std::fs::write(home.join(".netrc"), "default login d password dp\n").unwrap();
        assert_eq!(
            credentials(Some(home), API, Some("env"), None),
            Some(GitHubAuth::Token("env".into()))
        );
        assert_eq!(credentials(Some(home), API, None, None), basic("d", "dp"));

        std::fs::write(
            home.join(".netrc"),
            "machine api.github.com login a password ap\n\
             machine ghe.corp login g password gp\n",
        )
        .unwrap();
        assert_eq!(
            credentials(Some(home), API, Some("env"), None),
            basic("a", "ap")
        );
        assert_eq!(
            credentials(Some(home), "https://ghe.corp/api/v3", None, None),
            basic("g", "gp")
        );

        std::fs::write(
            home.join(".netrc"),
            "machine api.github.com login a password ap\n\
             machine github.com login w password wp\n",
        )
        .unwrap();
        assert_eq!(credentials(Some(home), API, None, None), basic("w", "wp"));
    }

    #[test]
    fn auth_debug_hides_secrets() {
        let token = GitHubAuth::Token("ghp_secret".into());
        let netrc = GitHubAuth::Netrc(Credentials {
            login: "me".into(),
            password: "pw_secret".into(),
        });
        assert!(!format!("{token:?}").contains("ghp_secret"));
        assert!(!format!("{netrc:?}").contains("pw_secret"));
    }

    // --- Client tests against a local mock of the API. ---

    #[derive(Clone)]
    struct Mock {
        base: String,
    }

    fn pull_json(number: u32, sha: &str) -> Value {
        json!({
            "number": number,
            "title": format!("PR {number}"),
            "state": "open",
            "user": {"login": "octocat"},
            "base": {"ref": "main", "sha": "b"},
            "head": {"ref": format!("feature-{number}"), "sha": sha},
            "draft": true,
            "mergeable": true,
            "created_at": "2026-01-01T00:00:00Z",
            "updated_at": "2026-01-02T00:00:00Z",
        })
    }

    fn check_auth(headers: &AxHeaders) -> Option<Response> {
        let ok = headers.get("authorization").and_then(|v| v.to_str().ok())
            == Some("Bearer test-token")
            && headers.get("accept").and_then(|v| v.to_str().ok())
                == Some("application/vnd.github+json")
            && headers
                .get("x-github-api-version")
                .and_then(|v| v.to_str().ok())
                == Some("2022-11-28")
            && headers
                .get("user-agent")
                .and_then(|v| v.to_str().ok())
                .is_some_and(|ua| ua.starts_with("twig-mcp/"));
        (!ok).then(|| {
            (
                StatusCode::UNAUTHORIZED,
                Json(json!({"message": "Bad credentials"})),
            )
                .into_response()
        })
    }

    async fn pull(
        headers: AxHeaders,
        AxPath((owner, name, number)): AxPath<(String, String, u32)>,
    ) -> Response {
        if let Some(denied) = check_auth(&headers) {
            return denied;
        }
        match (owner.as_str(), name.as_str(), number) {
            ("octo", "widgets", 1) => {
                let mut pr = pull_json(1, "abc123");
                pr["user"] = Value::Null;
                pr.as_object_mut().unwrap().remove("draft");
                Json(pr).into_response()
            }
            ("octo", "widgets", 7) => Json(pull_json(7, "abc123")).into_response(),
            ("octo", "widgets", 500) => (
                StatusCode::INTERNAL_SERVER_ERROR,
                Json(json!({"message": "boom"})),
            )
                .into_response(),
            ("octo", "widgets", 429) => (
                StatusCode::FORBIDDEN,
                [
                    ("x-ratelimit-remaining", "0"),
                    ("x-ratelimit-reset", "1795341600"),
                ],
                Json(json!({"message": "API rate limit exceeded"})),
            )
                .into_response(),
            _ => (StatusCode::NOT_FOUND, Json(json!({"message": "Not Found"}))).into_response(),
        }
    }

    async fn pulls(
        State(mock): State<Mock>,
        headers: AxHeaders,
        Query(query): Query<HashMap<String, String>>,
    ) -> Response {
        if let Some(denied) = check_auth(&headers) {
            return denied;
        }
        assert_eq!(query.get("state").map(String::as_str), Some("all"));
        assert_eq!(query.get("per_page").map(String::as_str), Some("50"));
        let page: u32 = query.get("page").and_then(|p| p.parse().ok()).unwrap_or(1);
        // Three pages: 50, 50 and 10 pull requests.
        let count = if page < 3 { 50 } else { 10 };
        let items: Vec<Value> = (0..count)
            .map(|i| pull_json((page - 1) * 50 + i + 1, "x"))
            .collect();
        let mut response = Json(items).into_response();
        if page < 3 {
            let link = format!(
                "<{}/repos/octo/widgets/pulls?state=all&per_page=50&page={}>; rel=\"next\", <{}/repos/octo/widgets/pulls?state=all&per_page=50&page=3>; rel=\"last\"",
                mock.base,
                page + 1,
                mock.base
            );
            response.headers_mut().insert("link", link.parse().unwrap());
        }
        response
    }

    async fn reviews(
        State(mock): State<Mock>,
        Query(query): Query<HashMap<String, String>>,
    ) -> Response {
        assert_eq!(query.get("per_page").map(String::as_str), Some("100"));
        if query.get("page").map(String::as_str) == Some("2") {
            return Json(json!([{"user": null, "state": "COMMENTED", "submitted_at": null}]))
                .into_response();
        }
        let mut response = Json(json!([
            {"user": {"login": "alice"}, "state": "CHANGES_REQUESTED", "submitted_at": "2026-01-01T00:00:00Z"},
            {"user": {"login": "bob"}, "state": "APPROVED", "submitted_at": "2026-01-02T00:00:00Z"},
        ]))
        .into_response();
        let link = format!(
            "<{}/repos/octo/widgets/pulls/7/reviews?per_page=100&page=2>; rel=\"next\"",
            mock.base
        );
        response.headers_mut().insert("link", link.parse().unwrap());
        response
    }

    async fn check_runs(AxPath((_, _, sha)): AxPath<(String, String, String)>) -> Response {
        assert_eq!(sha, "abc123");
        Json(json!({
            "total_count": 2,
            "check_runs": [
                {"name": "build", "status": "completed", "conclusion": "success"},
                {"name": "lint", "status": "in_progress", "conclusion": null},
            ]
        }))
        .into_response()
    }

    async fn start_mock() -> GitHubClient {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let base = format!("http://{}", listener.local_addr().unwrap());
        let app = Router::new()
            .route("/repos/{owner}/{repo}/pulls/{number}", get(pull))
            .route("/repos/{owner}/{repo}/pulls", get(pulls))
            .route("/repos/{owner}/{repo}/pulls/{number}/reviews", get(reviews))
            .route(
                "/repos/{owner}/{repo}/commits/{sha}/check-runs",
                get(check_runs),
            )
            .with_state(Mock { base: base.clone() });
        tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        GitHubClient::new(
            &format!("{base}/"),
            GitHubAuth::Token("test-token".into()),
            Duration::from_secs(10),
        )
        .unwrap()
    }

    fn widgets() -> GitHubRepo {
        GitHubRepo {
            owner: "octo".into(),
            repo: "widgets".into(),
        }
    }

    #[tokio::test]
    async fn gets_a_pull_request() {
        let client = start_mock().await;
        let pr = client.get_pull_request(&widgets(), 7).await.unwrap();
        assert_eq!(
            pr,
            PullRequestResponse {
                number: 7,
                title: "PR 7".into(),
                state: "open".into(),
                author: "octocat".into(),
                base: "main".into(),
                head: "feature-7".into(),
                draft: true,
                mergeable: Some(true),
                created_at: "2026-01-01T00:00:00Z".into(),
                updated_at: "2026-01-02T00:00:00Z".into(),
            }
        );
        let pr = client.get_pull_request(&widgets(), 1).await.unwrap();
        assert_eq!(pr.author, "ghost");
        assert!(!pr.draft);
    }

    #[tokio::test]
    async fn maps_error_statuses() {
        let client = start_mock().await;
        assert!(matches!(
            client.get_pull_request(&widgets(), 404).await,
            Err(RemoteError::NotFound)
        ));
        match client.get_pull_request(&widgets(), 500).await {
            Err(RemoteError::Status {
                status: 500,
                message,
            }) => {
                assert_eq!(message.as_deref(), Some("boom"));
            }
            other => panic!("unexpected {other:?}"),
        }
        match client.get_pull_request(&widgets(), 429).await {
            Err(RemoteError::RateLimited { retry, .. }) => {
                assert_eq!(retry, "at 2026-11-22T10:00:00Z");
            }
            other => panic!("unexpected {other:?}"),
        }

        let base = client.base.as_str().trim_end_matches('/').to_string();
        let wrong = GitHubClient::new(
            &base,
            GitHubAuth::Token("wrong".into()),
            Duration::from_secs(10),
        )
        .unwrap();
        assert!(matches!(
            wrong.get_pull_request(&widgets(), 7).await,
            Err(RemoteError::Unauthorized { status: 401 })
        ));
    }

    #[tokio::test]
    async fn gets_pr_status_with_paginated_reviews() {
        let client = start_mock().await;
        let status = client.get_pr_status(&widgets(), 7).await.unwrap();
        assert_eq!(status.pull_request.number, 7);
        assert_eq!(
            status.reviews,
            vec![
                ReviewInfo {
                    author: "alice".into(),
                    state: "CHANGES_REQUESTED".into()
                },
                ReviewInfo {
                    author: "bob".into(),
                    state: "APPROVED".into()
                },
                ReviewInfo {
                    author: "ghost".into(),
                    state: "COMMENTED".into()
                },
            ]
        );
        assert_eq!(
            status.checks,
            vec![
                CheckRunInfo {
                    name: "build".into(),
                    status: "completed".into(),
                    conclusion: Some("success".into())
                },
                CheckRunInfo {
                    name: "lint".into(),
                    status: "in_progress".into(),
                    conclusion: None
                },
            ]
        );
    }

    /// Walk the whole list in pages of `limit`; returns the numbers and each page's total.
    async fn walk(client: &GitHubClient, limit: usize) -> (Vec<u32>, Vec<(u64, bool)>) {
        let mut numbers = Vec::new();
        let mut totals = Vec::new();
        let mut from: Option<PullsPosition> = None;
        loop {
            let page = client
                .list_pull_requests(&widgets(), "all", from.as_ref(), limit)
                .await
                .unwrap();
            assert!(page.items.len() <= limit);
            assert!(page.items.iter().all(|p| p.mergeable.is_none()));
            numbers.extend(page.items.iter().map(|p| p.number));
            totals.push((page.total, page.exact));
            match page.next {
                Some(next) => from = Some(next),
                None => break,
            }
        }
        (numbers, totals)
    }

    #[tokio::test]
    async fn lists_pull_requests_across_pages() {
        let client = start_mock().await;
        let all: Vec<u32> = (1..=110).collect();
        for limit in [100, 60, 50, 7, 1] {
            let (numbers, totals) = walk(&client, limit).await;
            assert_eq!(numbers, all, "limit {limit}");
            // Lower bounds until the last remote page, which gives the exact count.
            let (last, rest) = totals.split_last().unwrap();
            assert_eq!(*last, (110, true), "limit {limit}");
            assert!(
                rest.iter()
                    .all(|&(total, exact)| if exact { total == 110 } else { total < 110 }),
                "{rest:?}"
            );
        }
        // The first page of 60 stops inside the second API page and resumes there.
        let first = client
            .list_pull_requests(&widgets(), "all", None, 60)
            .await
            .unwrap();
        assert_eq!(first.items.len(), 60);
        let next = first.next.unwrap();
        assert_eq!((next.skip, next.seen), (10, 60));
        assert!(next.url.contains("page=2"), "{}", next.url);
        assert_eq!((first.total, first.exact), (101, false));

        let foreign = PullsPosition {
            url: "https://elsewhere.example/repos/octo/widgets/pulls".into(),
            skip: 0,
            seen: 0,
        };
        assert!(matches!(
            client
                .list_pull_requests(&widgets(), "all", Some(&foreign), 10)
                .await,
            Err(RemoteError::InvalidUrl(_))
        ));
    }

    #[tokio::test]
    async fn transport_errors_do_not_leak_credentials() {
        // Nothing listens on port 9 of localhost (discard), so the connection fails.
        let client = GitHubClient::new(
            "http://user:netrc-secret@127.0.0.1:9",
            GitHubAuth::Token("token-secret".into()),
            Duration::from_secs(5),
        )
        .unwrap();
        let err = client.get_pull_request(&widgets(), 1).await.unwrap_err();
        let text = err.to_string();
        assert!(matches!(err, RemoteError::Transport(_)), "{err:?}");
        assert!(!text.contains("secret"), "{text}");
        assert!(!format!("{client:?}").contains("secret"));
    }

    #[tokio::test]
    async fn slow_servers_time_out() {
        // Accept connections but never answer.
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        tokio::spawn(async move {
            let mut held = Vec::new();
            while let Ok((socket, _)) = listener.accept().await {
                held.push(socket);
            }
        });
        let client = GitHubClient::new(
            &format!("http://{addr}"),
            GitHubAuth::Token("t".into()),
            Duration::from_millis(200),
        )
        .unwrap();
        let err = client.get_pull_request(&widgets(), 1).await.unwrap_err();
        assert!(matches!(err, RemoteError::Timeout { .. }), "{err:?}");
        assert_eq!(err.to_string(), "request timed out after 200ms");
    }

    #[test]
    fn rejects_unusable_api_bases() {
        let auth = GitHubAuth::Token("t".into());
        assert!(matches!(
            GitHubClient::new("not a url", auth.clone(), Duration::from_secs(1)),
            Err(RemoteError::InvalidUrl(_))
        ));
        assert!(matches!(
            GitHubClient::new("mailto:x@example.com", auth, Duration::from_secs(1)),
            Err(RemoteError::InvalidUrl(_))
        ));
    }
}
