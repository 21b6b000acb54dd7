//! HTTP plumbing shared by the GitHub and Jira clients: building a `reqwest` client, one GET
//! that decodes JSON, the mapping of failed responses to [`RemoteError`], and the mapping of
//! [`RemoteError`] to the tools' [`ToolError`].
//!
//! Credentials only ever travel in the `Authorization` header (marked sensitive), never in a
//! URL, so neither error messages (which may quote the URL) nor logs can reveal them.

use std::fmt;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use mcp_common::{ToolError, clip};

use crate::errors;
use reqwest::StatusCode;
use reqwest::header::{HeaderMap, HeaderValue};
use serde::de::DeserializeOwned;
use url::Url;

/// The longest excerpt of a server's error message kept in [`RemoteError::Status`].
const MESSAGE_EXCERPT_CHARS: usize = 200;

/// The `User-Agent` of every request.
pub(crate) fn user_agent() -> String {
    format!("twig-mcp/{}", env!("CARGO_PKG_VERSION"))
}

/// Why a request to a remote service failed.
#[derive(Debug, thiserror::Error)]
pub enum RemoteError {
    /// The service rejected the credentials (HTTP 401, or 403 not caused by rate limiting).
    #[error("credentials were rejected (HTTP {status})")]
    Unauthorized { status: u16 },
    /// The requested entity does not exist (HTTP 404), or the credentials cannot see it.
    #[error("not found (HTTP 404)")]
    NotFound,
    /// The service's rate limit is exhausted. `retry` says when to try again, e.g.
    /// `in 42 seconds (at 2026-11-22T10:00:00Z)`, `at 2026-11-22T10:00:00Z` or `later`;
    /// `after_secs` is the wait in seconds where the headers give one (`Retry-After` in
    /// seconds, or GitHub's `x-ratelimit-reset` in Unix seconds).
    #[error("rate limit exceeded; retry {retry}")]
    RateLimited {
        retry: String,
        after_secs: Option<u64>,
    },
    /// No complete response arrived within the configured timeout.
    #[error("request timed out after {}", format_duration(*timeout))]
    Timeout { timeout: Duration },
    /// Any other unsuccessful HTTP status, with an excerpt of the server's error message when
    /// the body was JSON that carried one.
    #[error("{}", format_status(*status, message.as_deref()))]
    Status {
        status: u16,
        message: Option<String>,
    },
    /// The request could not be sent or the response could not be read (DNS, TLS,
    /// connection reset, ...).
    #[error("request failed: {0}")]
    Transport(String),
    /// The response body was not the JSON the client expected.
    #[error("could not decode the response: {0}")]
    Decode(String),
    /// A configured base URL cannot be used.
    #[error("invalid base URL: {0}")]
    InvalidUrl(String),
}

impl RemoteError {
    /// The HTTP status of the response that caused the error, if there was a response.
    pub fn status(&self) -> Option<u16> {
        match self {
            Self::Unauthorized { status } | Self::Status { status, .. } => Some(*status),
            Self::NotFound => Some(404),
            _ => None,
        }
    }

    /// Map a `reqwest` error; `timeout` is the client's configured timeout, quoted in
    /// [`RemoteError::Timeout`].
    pub(crate) fn from_reqwest(err: reqwest::Error, timeout: Duration) -> Self {
        if err.is_timeout() {
            return Self::Timeout { timeout };
        }
        if err.is_decode() {
            return Self::Decode(error_chain(&err));
        }
        Self::Transport(error_chain(&err))
    }
}

/// An error's message followed by those of its sources, e.g. `error sending request for url
/// (...): client error (Connect): dns error: ...`. Sources whose text the previous message
/// already contains are left out.
fn error_chain(err: &(dyn std::error::Error + 'static)) -> String {
    let mut text = err.to_string();
    let mut source = err.source();
    while let Some(cause) = source {
        let cause_text = cause.to_string();
        if !text.contains(&cause_text) {
            text.push_str(": ");
            text.push_str(&cause_text);
        }
        source = cause.source();
    }
    text
}

/// `30s` for whole seconds, `250ms` otherwise.
fn format_duration(d: Duration) -> String {
    if d.subsec_nanos() == 0 {
        format!("{}s", d.as_secs())
    } else {
        format!("{}ms", d.as_millis())
    }
}

/// `HTTP 500 Internal Server Error: <message>`.
fn format_status(status: u16, message: Option<&str>) -> String {
    let mut text = format!("HTTP {status}");
    if let Some(reason) = StatusCode::from_u16(status)
        .ok()
        .and_then(|s| s.canonical_reason())
    {
        text.push(' ');
        text.push_str(reason);
    }
    if let Some(message) = message {
        text.push_str(": ");
        text.push_str(message);
    }
    text
}

/// Map an unsuccessful response to a [`RemoteError`].
///
/// * 429, or 403 with `x-ratelimit-remaining: 0` (GitHub's primary rate limit) or with a
///   `Retry-After` header or a message mentioning a rate limit (GitHub's secondary rate
///   limits) → [`RemoteError::RateLimited`].
/// * Other 401/403 → [`RemoteError::Unauthorized`].
/// * 404 → [`RemoteError::NotFound`].
/// * Anything else → [`RemoteError::Status`] with an excerpt of the body's `message` (GitHub)
///   or `errorMessages`/`errors` (Jira).
///
/// `now` is the current time, used to turn a `Retry-After` delay into a point in time.
pub(crate) fn error_from_response(
    status: StatusCode,
    headers: &HeaderMap,
    body: &[u8],
    now: SystemTime,
) -> RemoteError {
    let message = error_message(body);
    let code = status.as_u16();
    let remaining_zero = header_str(headers, "x-ratelimit-remaining").is_some_and(|v| v == "0");
    let mentions_rate_limit = message
        .as_deref()
        .is_some_and(|m| m.to_ascii_lowercase().contains("rate limit"));
    let rate_limited = code == 429
        || (code == 403
            && (remaining_zero || headers.contains_key("retry-after") || mentions_rate_limit));

    if rate_limited {
        let (retry, after_secs) = retry_time(headers, now);
        return RemoteError::RateLimited { retry, after_secs };
    }
    match code {
        401 | 403 => RemoteError::Unauthorized { status: code },
        404 => RemoteError::NotFound,
        _ => RemoteError::Status {
            status: code,
            message,
        },
    }
}

/// A header's value as trimmed text, if present and valid.
fn header_str<'a>(headers: &'a HeaderMap, name: &str) -> Option<&'a str> {
    headers
        .get(name)
        .and_then(|v| v.to_str().ok())
        .map(str::trim)
        .filter(|v| !v.is_empty())
}

/// When the client may retry, from the `Retry-After` header (seconds, or passed through when
/// it is an HTTP date) or else `x-ratelimit-reset` (Unix seconds as GitHub sends it, or passed
/// through when it is a timestamp as Jira sends it); `later` when neither is present. With
/// it, the wait in seconds where it could be computed (a date passed through gives none; a
/// reset time already past gives 0).
fn retry_time(headers: &HeaderMap, now: SystemTime) -> (String, Option<u64>) {
    if let Some(value) = header_str(headers, "retry-after") {
        return match value.parse::<u64>() {
            Ok(secs) => {
                let at = unix_seconds(now).saturating_add(secs);
                let unit = if secs == 1 { "second" } else { "seconds" };
                (
                    format!("in {secs} {unit} (at {})", format_rfc3339(at)),
                    Some(secs),
                )
            }
            Err(_) => (format!("at {value}"), None),
        };
    }
    if let Some(value) = header_str(headers, "x-ratelimit-reset") {
        return match value.parse::<u64>() {
            Ok(epoch) => (
                format!("at {}", format_rfc3339(epoch)),
                Some(epoch.saturating_sub(unix_seconds(now))),
            ),
            Err(_) => (format!("at {value}"), None),
        };
    }
    ("later".to_string(), None)
}

fn unix_seconds(time: SystemTime) -> u64 {
    time.duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}

/// The error text of a JSON error body: GitHub's `message`, or Jira's `errorMessages` (and
/// `errors`, a field → message map), cut to a short excerpt. `None` for non-JSON bodies.
fn error_message(body: &[u8]) -> Option<String> {
    let value: serde_json::Value = serde_json::from_slice(body).ok()?;
    let mut parts: Vec<String> = Vec::new();
    if let Some(message) = value.get("message").and_then(|m| m.as_str()) {
        parts.push(message.to_string());
    }
    if let Some(messages) = value.get("errorMessages").and_then(|m| m.as_array()) {
        parts.extend(messages.iter().filter_map(|m| m.as_str()).map(String::from));
    }
    if let Some(errors) = value.get("errors").and_then(|e| e.as_object()) {
        parts.extend(
            errors
                .iter()
                .filter_map(|(field, m)| m.as_str().map(|m| format!("{field}: {m}"))),
        );
    }
    let joined = parts
        .iter()
        .map(|p| p.trim())
        .filter(|p| !p.is_empty())
        .collect::<Vec<_>>()
        .join("; ");
    if joined.is_empty() {
        return None;
    }
    Some(excerpt(&joined, MESSAGE_EXCERPT_CHARS))
}

/// The first `max` characters of `text` (whitespace collapsed), with `…` when cut.
fn excerpt(text: &str, max: usize) -> String {
    let collapsed = text.split_whitespace().collect::<Vec<_>>().join(" ");
    clip(&collapsed, max)
}

/// Format Unix seconds as an RFC 3339 UTC timestamp, e.g. `2026-11-22T10:00:00Z`.
///
/// Written out to avoid a date-time dependency for this one use: split the seconds into days
/// since 1970-01-01 and the time of day, then turn the day count into a proleptic Gregorian
/// date with [`civil_from_days`].
pub(crate) fn format_rfc3339(unix_secs: u64) -> String {
    let days = unix_secs / 86_400;
    let secs_of_day = unix_secs % 86_400;
    let (year, month, day) = civil_from_days(days);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z",
        secs_of_day / 3600,
        secs_of_day % 3600 / 60,
        secs_of_day % 60
    )
}

/// The (year, month, day) of the date `days` days after 1970-01-01.
///
/// The calendar repeats every 400 years (146 097 days). Counting from 0000-03-01 puts the leap
/// day at the end of each year, so within an era the year of a day follows from the day count
/// with the 4/100/400-year corrections, and the month from a linear formula over the
/// March-based year (months of 30 and 31 days alternate in a 153-day, five-month pattern).
fn civil_from_days(days: u64) -> (u64, u64, u64) {
    // Days from 0000-03-01 to 1970-01-01.
    let z = days + 719_468;
    let era = z / 146_097;
    let day_of_era = z % 146_097; // [0, 146096]
    let year_of_era =
        (day_of_era - day_of_era / 1460 + day_of_era / 36_524 - day_of_era / 146_096) / 365; // [0, 399]
    let day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100); // [0, 365]
    let month_index = (5 * day_of_year + 2) / 153; // [0, 11], March = 0
    let day = day_of_year - (153 * month_index + 2) / 5 + 1; // [1, 31]
    let month = if month_index < 10 {
        month_index + 3
    } else {
        month_index - 9
    };
    let year = year_of_era + era * 400 + u64::from(month <= 2);
    (year, month, day)
}

/// Which service a request went to; decides the wording of [`to_tool_error`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Service<'a> {
    /// GitHub, whose web host (`github.com`, or a GitHub Enterprise host) names the netrc
    /// machine in hints.
    GitHub {
        host: &'a str,
    },
    Jira,
}

impl Service<'_> {
    /// The service's name as shown to users.
    pub fn name(self) -> &'static str {
        match self {
            Self::GitHub { .. } => "GitHub",
            Self::Jira => "Jira",
        }
    }

    /// The hint of a `credentials_missing` error: where to configure credentials.
    pub fn credentials_hint(self) -> String {
        match self {
            Self::GitHub { host } => {
                format!("Add credentials for {host} to `~/.netrc`. See `twig auth --help`.")
            }
            Self::Jira => {
                "Set $JIRA_HOST and add credentials to `~/.netrc`. See `twig auth --help`."
                    .to_string()
            }
        }
    }

    fn not_found_hint(self) -> &'static str {
        match self {
            Self::GitHub { .. } => {
                "Check the PR number or repository name, and that your credentials can see the repository."
            }
            Self::Jira => "Check the issue key and that your Jira account can see this project.",
        }
    }
}

impl fmt::Display for Service<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Turn a [`RemoteError`] into the error a tool returns.
///
/// `what` names the requested entity for [`RemoteError::NotFound`], e.g. `Pull request #42
/// in octo/widgets` or `Jira issue PROJ-1`; the message is then `"{what} not found"`.
pub fn to_tool_error(service: Service<'_>, what: &str, err: RemoteError) -> ToolError {
    match err {
        RemoteError::Unauthorized { status } => ToolError::new(
            errors::CREDENTIALS_MISSING,
            format!("{service} credentials were rejected (HTTP {status})"),
        )
        .with_hint(service.credentials_hint()),
        RemoteError::NotFound => {
            ToolError::not_found(format!("{what} not found")).with_hint(service.not_found_hint())
        }
        RemoteError::RateLimited { retry, after_secs } => {
            let error = ToolError::new(
                errors::RATE_LIMITED,
                format!("{service} API rate limit exceeded"),
            )
            .with_hint(format!("Rate limited by {service}. Retry {retry}."));
            match after_secs {
                Some(secs) => error.with_retry_after(secs),
                None => error,
            }
        }
        RemoteError::InvalidUrl(_) => {
            ToolError::new(errors::NETWORK_ERROR, format!("{service} API error: {err}"))
                .with_hint(format!("Check the configured {service} base URL."))
        }
        other => {
            let hint = match other.status() {
                Some(status) => format!("Check your network connection. HTTP status: {status}."),
                None => "Check your network connection.".to_string(),
            };
            ToolError::new(
                errors::NETWORK_ERROR,
                format!("{service} API error: {other}"),
            )
            .with_hint(hint)
        }
    }
}

/// How a client authenticates; applied to each request as an `Authorization` header.
#[derive(Clone)]
pub(crate) enum Auth {
    Basic { login: String, password: String },
    Bearer(String),
}

impl fmt::Debug for Auth {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Basic { login, .. } => f
                .debug_struct("Basic")
                .field("login", login)
                .field("password", &"<redacted>")
                .finish(),
            Self::Bearer(_) => f.write_str("Bearer(<redacted>)"),
        }
    }
}

/// A decoded JSON body with the response headers (for pagination links).
pub(crate) struct JsonResponse<T> {
    pub body: T,
    pub headers: HeaderMap,
}

/// A `reqwest` client with fixed default headers, authentication and timeout.
#[derive(Debug, Clone)]
pub(crate) struct HttpClient {
    client: reqwest::Client,
    auth: Auth,
    timeout: Duration,
}

impl HttpClient {
    /// Build a client that sends `headers` (plus the twig-mcp `User-Agent`) with every
    /// request and gives up on a request after `timeout`.
    pub(crate) fn new(
        headers: &[(&'static str, &'static str)],
        auth: Auth,
        timeout: Duration,
    ) -> Result<Self, RemoteError> {
        // reqwest is built without a bundled crypto provider; install ring as the process
        // default. This fails harmlessly when a provider is already installed.
        let _ = rustls::crypto::ring::default_provider().install_default();

        let mut default_headers = HeaderMap::new();
        for (name, value) in headers {
            default_headers.insert(*name, HeaderValue::from_static(value));
        }
        let client = reqwest::Client::builder()
            .user_agent(user_agent())
            .default_headers(default_headers)
            .timeout(timeout)
            .build()
            .map_err(|e| RemoteError::Transport(error_chain(&e)))?;
        Ok(Self {
            client,
            auth,
            timeout,
        })
    }

    /// GET `url` and decode its JSON body; unsuccessful statuses become [`RemoteError`]s via
    /// [`error_from_response`].
    pub(crate) async fn get_json<T: DeserializeOwned>(
        &self,
        url: Url,
    ) -> Result<JsonResponse<T>, RemoteError> {
        tracing::debug!(url = %url, "GET");
        let request = self.client.get(url);
        let request = match &self.auth {
            Auth::Basic { login, password } => request.basic_auth(login, Some(password)),
            Auth::Bearer(token) => request.bearer_auth(token),
        };
        let response = request
            .send()
            .await
            .map_err(|e| RemoteError::from_reqwest(e, self.timeout))?;
        let status = response.status();
        let headers = response.headers().clone();
        let body = response
            .bytes()
            .await
            .map_err(|e| RemoteError::from_reqwest(e, self.timeout))?;
        tracing::debug!(status = status.as_u16(), bytes = body.len(), "response");

        if !status.is_success() {
            return Err(error_from_response(
                status,
                &headers,
                &body,
                SystemTime::now(),
            ));
        }
        let body = serde_json::from_slice(&body).map_err(|e| RemoteError::Decode(e.to_string()))?;
        Ok(JsonResponse { body, headers })
    }
}

/// Whether `candidate` has the same scheme, host and port as `base`. Pagination only follows
/// links to the base's origin so that credentials are never sent to another server.
pub(crate) fn same_origin(base: &Url, candidate: &Url) -> bool {
    base.origin() == candidate.origin()
}

/// Remove any user name and password from `url` (they must never travel in a URL).
pub(crate) fn strip_userinfo(url: &mut Url) {
    // Both fail only for URLs that cannot have credentials, which is then what we want.
    let _ = url.set_username("");
    let _ = url.set_password(None);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(pairs: &[(&'static str, &'static str)]) -> HeaderMap {
        let mut map = HeaderMap::new();
        for (name, value) in pairs {
            map.insert(*name, HeaderValue::from_static(value));
        }
        map
    }

    /// 2026-11-22T10:00:00Z.
    const NOW: u64 = 1_795_341_600;

    fn now() -> SystemTime {
        UNIX_EPOCH + Duration::from_secs(NOW)
    }

    #[test]
    fn rfc3339_formatting() {
        assert_eq!(format_rfc3339(0), "1970-01-01T00:00:00Z");
        assert_eq!(format_rfc3339(951_782_400), "2000-02-29T00:00:00Z");
        assert_eq!(format_rfc3339(1_709_251_199), "2024-02-29T23:59:59Z");
        assert_eq!(format_rfc3339(1_735_689_600), "2025-01-01T00:00:00Z");
        assert_eq!(format_rfc3339(NOW), "2026-11-22T10:00:00Z");
        assert_eq!(format_rfc3339(4_102_444_800), "2100-01-01T00:00:00Z");
        assert_eq!(format_rfc3339(4_107_542_399), "2100-02-28T23:59:59Z");
        assert_eq!(format_rfc3339(4_107_542_400), "2100-03-01T00:00:00Z");
    }

    #[test]
    fn civil_from_days_round_trips_every_day_for_centuries() {
        // Walk day by day from 1970 and check the date advances like a calendar does.
        let mut expected = (1970, 1, 1);
        for days in 0..(400 * 366) {
            assert_eq!(civil_from_days(days), expected, "day {days}");
            let (y, m, d) = expected;
            let leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
            let month_len = match m {
                2 if leap => 29,
                2 => 28,
                4 | 6 | 9 | 11 => 30,
                _ => 31,
            };
            expected = if d < month_len {
                (y, m, d + 1)
            } else if m < 12 {
                (y, m + 1, 1)
            } else {
                (y + 1, 1, 1)
            };
        }
    }

    #[test]
    fn github_primary_rate_limit_403() {
        let err = error_from_response(
            StatusCode::FORBIDDEN,
            &headers(&[
                ("x-ratelimit-remaining", "0"),
                ("x-ratelimit-reset", "1795341642"),
            ]),
            br#"{"message":"API rate limit exceeded for user ID 1."}"#,
            now(),
        );
        match err {
            RemoteError::RateLimited { retry, after_secs } => {
                assert_eq!(retry, "at 2026-11-22T10:00:42Z");
                assert_eq!(after_secs, Some(42));
            }
            other => panic!("unexpected {other:?}"),
        }
    }

    #[test]
    fn retry_after_seconds_wins() {
        let err = error_from_response(
            StatusCode::TOO_MANY_REQUESTS,
            &headers(&[("retry-after", "42"), ("x-ratelimit-reset", "1")]),
            b"",
            now(),
        );
        match err {
            RemoteError::RateLimited { retry, after_secs } => {
                assert_eq!(retry, "in 42 seconds (at 2026-11-22T10:00:42Z)");
                assert_eq!(after_secs, Some(42));
            }
            other => panic!("unexpected {other:?}"),
        }
    }

    #[test]
    fn rate_limit_without_headers_says_later() {
        let err = error_from_response(StatusCode::TOO_MANY_REQUESTS, &HeaderMap::new(), b"", now());
        let tool = to_tool_error(Service::Jira, "x", err);
        assert_eq!(tool.code, errors::RATE_LIMITED);
        assert_eq!(tool.message, "Jira API rate limit exceeded");
        assert_eq!(
            tool.hint.as_deref(),
            Some("Rate limited by Jira. Retry later.")
        );
        assert!(tool.retryable());
        assert_eq!(tool.retry_after_secs, None);
    }

    #[test]
    fn secondary_rate_limit_with_retry_after_on_403() {
        let err = error_from_response(
            StatusCode::FORBIDDEN,
            &headers(&[("retry-after", "1")]),
            br#"{"message":"You have exceeded a secondary rate limit."}"#,
            now(),
        );
        let tool = to_tool_error(Service::GitHub { host: "github.com" }, "x", err);
        assert_eq!(tool.code, errors::RATE_LIMITED);
        assert_eq!(
            tool.hint.as_deref(),
            Some("Rate limited by GitHub. Retry in 1 second (at 2026-11-22T10:00:01Z).")
        );
        assert_eq!(tool.retry_after_secs, Some(1));
    }

    #[test]
    fn forbidden_without_rate_limit_is_rejected_credentials() {
        let err = error_from_response(
            StatusCode::FORBIDDEN,
            &headers(&[("x-ratelimit-remaining", "4999")]),
            br#"{"message":"Resource not accessible by integration"}"#,
            now(),
        );
        let tool = to_tool_error(Service::GitHub { host: "github.com" }, "x", err);
        assert_eq!(tool.code, errors::CREDENTIALS_MISSING);
        assert_eq!(tool.message, "GitHub credentials were rejected (HTTP 403)");
        assert_eq!(
            tool.hint.as_deref(),
            Some("Add credentials for github.com to `~/.netrc`. See `twig auth --help`.")
        );

        let err = error_from_response(StatusCode::UNAUTHORIZED, &HeaderMap::new(), b"", now());
        let tool = to_tool_error(Service::Jira, "x", err);
        assert_eq!(tool.message, "Jira credentials were rejected (HTTP 401)");
        assert_eq!(
            tool.hint.as_deref(),
            Some("Set $JIRA_HOST and add credentials to `~/.netrc`. See `twig auth --help`.")
        );
    }

    #[test]
    fn not_found_uses_the_callers_description() {
        let err = error_from_response(StatusCode::NOT_FOUND, &HeaderMap::new(), b"{}", now());
        let tool = to_tool_error(
            Service::GitHub { host: "github.com" },
            "Pull request #42 in octo/widgets",
            err,
        );
        assert_eq!(tool.code, errors::NOT_FOUND);
        assert_eq!(tool.message, "Pull request #42 in octo/widgets not found");
        assert_eq!(
            tool.hint.as_deref(),
            Some(
                "Check the PR number or repository name, and that your credentials can see the repository."
            )
        );
        let tool = to_tool_error(Service::Jira, "Jira issue PROJ-1", RemoteError::NotFound);
        assert_eq!(tool.message, "Jira issue PROJ-1 not found");
        assert_eq!(
            tool.hint.as_deref(),
            Some("Check the issue key and that your Jira account can see this project.")
        );
    }

    #[test]
    fn other_status_carries_message_excerpt() {
        let err = error_from_response(
            StatusCode::INTERNAL_SERVER_ERROR,
            &HeaderMap::new(),
            br#"{"message":"Server   Error"}"#,
            now(),
        );
        let tool = to_tool_error(Service::GitHub { host: "github.com" }, "x", err);
        assert_eq!(tool.code, errors::NETWORK_ERROR);
        assert_eq!(
            tool.message,
            "GitHub API error: HTTP 500 Internal Server Error: Server Error"
        );
        assert_eq!(
            tool.hint.as_deref(),
            Some("Check your network connection. HTTP status: 500.")
        );

        let err = error_from_response(
            StatusCode::BAD_REQUEST,
            &HeaderMap::new(),
            br#"{"errorMessages":["The value 'NOPE' does not exist for the field 'project'."],"errors":{}}"#,
            now(),
        );
        assert_eq!(
            err.to_string(),
            "HTTP 400 Bad Request: The value 'NOPE' does not exist for the field 'project'."
        );

        let err = error_from_response(
            StatusCode::BAD_GATEWAY,
            &HeaderMap::new(),
            b"<html>bad gateway</html>",
            now(),
        );
        assert_eq!(err.to_string(), "HTTP 502 Bad Gateway");
    }

    #[test]
    fn long_messages_are_cut() {
        let long = format!(r#"{{"message":"{}"}}"#, "x".repeat(500));
        let message = error_message(long.as_bytes()).unwrap();
        assert_eq!(message.chars().count(), MESSAGE_EXCERPT_CHARS + 1);
        assert!(message.ends_with('…'));
    }

    #[test]
    fn timeout_and_transport_texts() {
        let tool = to_tool_error(
            Service::GitHub { host: "github.com" },
            "x",
            RemoteError::Timeout {
                timeout: Duration::from_secs(30),
            },
        );
        assert_eq!(tool.code, errors::NETWORK_ERROR);
        assert_eq!(
            tool.message,
            "GitHub API error: request timed out after 30s"
        );
        assert_eq!(tool.hint.as_deref(), Some("Check your network connection."));

        let tool = to_tool_error(
            Service::Jira,
            "x",
            RemoteError::Decode("expected value at line 1 column 1".into()),
        );
        assert_eq!(
            tool.message,
            "Jira API error: could not decode the response: expected value at line 1 column 1"
        );
    }

    #[test]
    fn auth_debug_is_redacted() {
        let basic = Auth::Basic {
            login: "me".into(),
            password: "pw-secret".into(),
        };
        let bearer = Auth::Bearer("tok-secret".into());
        assert!(!format!("{basic:?}").contains("pw-secret"));
        assert!(!format!("{bearer:?}").contains("tok-secret"));
    }

    #[test]
    fn userinfo_is_stripped() {
        let mut url = Url::parse("https://me:secret@example.com/api").unwrap();
        strip_userinfo(&mut url);
        assert_eq!(url.as_str(), "https://example.com/api");
    }
}
