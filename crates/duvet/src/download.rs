//! Downloading specifications into the download cache, as duvet 0.4.3's `report`, `extract`
//! and `query` do for a URL target whose text is not cached yet: a GET of the canonical URL
//! (IETF links rewritten to rfc-editor's `.txt`, [`crate::config::cache_path`]'s rule) with
//! `Accept: text/plain`, the body kept at the cache path.
//!
//! Only the commands download; `duvet mcp` reads the cache and never touches the network.
//! A file is written whole or not at all ([`crate::output`]), so an interrupted download
//! leaves nothing a later run would read as the text, and only inside the cache (a link in
//! the project does not lead it out). Every request is bounded: 20 s to connect, 60 s in all,
//! 10 redirects, 64 MiB. An HTML page served for a text (a GitHub page rather than its raw
//! file, a portal's error page answered with 200) is not cached. Failures are one line each,
//! say whether trying again may help (a timeout, a refused connection, a 5xx or 429 answer)
//! and how to put the file there by hand; a URL's password is never in them.

use std::path::PathBuf;
use std::time::Duration;

/// The largest text accepted (RFC 9000, among the largest, is 0.5 MB).
const MAX_BYTES: usize = 64 << 20;
/// How long one download may take.
const TIMEOUT: Duration = Duration::from_secs(60);
/// How long connecting may take.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(20);
/// How many redirects are followed.
const MAX_REDIRECTS: usize = 10;
/// How many downloads run at once.
const PARALLEL: usize = 8;

/// One text to download: from `url` (already canonical) into `file`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Download {
    /// The URL as the project names it (for messages).
    pub source: String,
    /// The URL fetched.
    pub url: String,
    pub file: PathBuf,
    /// `file` as messages name it (relative to the project's root).
    pub shown: String,
    /// The project's root and the download cache: `file` must stay in the cache (and the
    /// cache in the project, when it is there), whatever links the project holds.
    pub root: PathBuf,
    pub cache_dir: PathBuf,
}

/// Download every one of `downloads` that is not cached yet, several at a time: what to tell
/// the user (the files written, in order, and the URLs that share one), or every failure's
/// message. A URL's user name and password are never in a message.
pub fn fetch_missing(downloads: Vec<Download>) -> Result<Vec<String>, Vec<String>> {
    let mut first: std::collections::HashMap<PathBuf, String> = std::collections::HashMap::new();
    let mut notes = Vec::new();
    let mut todo = Vec::new();
    for d in downloads {
        if d.file.exists() {
            continue;
        }
        match first.get(&d.file) {
            None => {
                first.insert(d.file.clone(), d.source.clone());
                todo.push(d);
            }
            Some(source) if *source != d.source => notes.push(format!(
                "note: {} and {} are cached as the same file, {}: both read the text of the first",
                redact(source),
                redact(&d.source),
                d.shown
            )),
            Some(_) => {}
        }
    }
    if todo.is_empty() {
        return Ok(notes);
    }
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(e) => return Err(vec![format!("cannot start the downloads: {e}")]),
    };
    let written = runtime.block_on(fetch_all(todo))?;
    Ok(written
        .into_iter()
        .map(|shown| format!("Downloaded {shown}"))
        .chain(notes)
        .collect())
}

async fn fetch_all(todo: Vec<Download>) -> Result<Vec<String>, Vec<String>> {
    // reqwest is built without a bundled crypto provider: ring is the process's (harmless
    // when one is installed already).
    let _ = rustls::crypto::ring::default_provider().install_default();
    let client = reqwest::Client::builder()
        .user_agent(concat!("duvet/", env!("CARGO_PKG_VERSION")))
        .timeout(TIMEOUT)
        .connect_timeout(CONNECT_TIMEOUT)
        .redirect(reqwest::redirect::Policy::limited(MAX_REDIRECTS))
        .build()
        .map_err(|e| vec![format!("cannot start the downloads: {}", chain(&e))])?;
    let limit = std::sync::Arc::new(tokio::sync::Semaphore::new(PARALLEL));
    let mut tasks = tokio::task::JoinSet::new();
    for (i, download) in todo.into_iter().enumerate() {
        let (client, limit) = (client.clone(), limit.clone());
        tasks.spawn(async move {
            let _permit = limit.acquire_owned().await;
            let result = fetch_one(&client, &download).await;
            (i, download.shown, result)
        });
    }
    let mut done = Vec::new();
    while let Some(joined) = tasks.join_next().await {
        match joined {
            Ok(one) => done.push(one),
            Err(e) => done.push((
                usize::MAX,
                String::new(),
                Err(format!("a download stopped: {e}")),
            )),
        }
    }
    done.sort_by_key(|(i, _, _)| *i);
    let (mut written, mut errors) = (Vec::new(), Vec::new());
    for (_, shown, result) in done {
        match result {
            Ok(()) => written.push(shown),
            Err(e) => errors.push(e),
        }
    }
    if errors.is_empty() {
        Ok(written)
    } else {
        Err(errors)
    }
}

/// What to do instead, for a message: a curl command that saves the text there (asking for
/// the password of a URL that holds one rather than repeating it).
fn by_hand(d: &Download) -> String {
    let (url, user) = without_userinfo(&d.url);
    let user = user.map_or_else(String::new, |user| format!("-u {user} "));
    format!(
        "or save the text there yourself: `curl -fsSL --create-dirs {user}-o {} {url}`",
        d.shown
    )
}

/// Why a request failed, and whether trying again may help.
fn request_error(e: &reqwest::Error) -> (String, bool) {
    if e.is_timeout() {
        (
            format!("no complete answer within {} s", TIMEOUT.as_secs()),
            true,
        )
    } else if e.is_redirect() {
        (
            format!("more than {MAX_REDIRECTS} redirects (a redirect loop?)"),
            false,
        )
    } else if e.is_builder() {
        (chain(e), false)
    } else {
        (chain(e), true)
    }
}

async fn fetch_one(client: &reqwest::Client, d: &Download) -> Result<(), String> {
    let fail = |why: String, retry: bool| {
        redact(&format!(
            "cannot download {} into {}: {why}{}; {}",
            d.source,
            d.shown,
            if retry { " (retrying may help)" } else { "" },
            by_hand(d)
        ))
    };
    let scheme = url::Url::parse(&d.url).map(|u| u.scheme().to_string());
    if !matches!(scheme.as_deref(), Ok("http" | "https")) {
        return Err(fail(
            "duvet downloads http and https URLs only".to_string(),
            false,
        ));
    }
    // Checked before asking anything: the file is written only there.
    crate::output::confine(&d.root, &d.cache_dir, &d.file, "the cache file")
        .map_err(|e| redact(&format!("cannot download {}: {e}", d.source)))?;
    let mut response = client
        .get(&d.url)
        .header(reqwest::header::ACCEPT, "text/plain")
        .send()
        .await
        .map_err(|e| {
            let (why, retry) = request_error(&e);
            fail(why, retry)
        })?;
    let status = response.status();
    if status.is_redirection() {
        // Not followed: a redirect to a scheme other than http(s), or without a place.
        let to = response
            .headers()
            .get(reqwest::header::LOCATION)
            .map(|l| String::from_utf8_lossy(l.as_bytes()).into_owned());
        return Err(fail(
            match to {
                Some(to) => format!(
                    "the server answered {status}, to {}, which is not an http(s) URL",
                    clip(&to)
                ),
                None => format!("the server answered {status} without a Location"),
            },
            false,
        ));
    }
    if !status.is_success() {
        let retry = status.is_server_error() || status.as_u16() == 429;
        return Err(fail(format!("the server answered {status}"), retry));
    }
    if let Some(length) = response.content_length()
        && length > MAX_BYTES as u64
    {
        return Err(fail(too_large(), false));
    }
    let html = response
        .headers()
        .get(reqwest::header::CONTENT_TYPE)
        .and_then(|t| t.to_str().ok())
        .is_some_and(|t| t.trim_start().to_ascii_lowercase().starts_with("text/html"));
    let mut body = Vec::new();
    loop {
        let chunk = response.chunk().await.map_err(|e| {
            let (why, retry) = request_error(&e);
            fail(why, retry)
        })?;
        let Some(chunk) = chunk else { break };
        if body.len() + chunk.len() > MAX_BYTES {
            return Err(fail(too_large(), false));
        }
        body.extend_from_slice(&chunk);
    }
    if html && is_html_page(&body) {
        return Err(fail(
            "the server answered an HTML page, not the specification's text (a file on \
             GitHub, for one, is at its raw URL)"
                .to_string(),
            false,
        ));
    }
    crate::output::write(&d.file, &body).map_err(|e| {
        redact(&format!(
            "cannot download {} into {}: {e}",
            d.source, d.shown
        ))
    })
}

fn too_large() -> String {
    format!("the text is larger than {} MiB", MAX_BYTES >> 20)
}

/// Whether `body`, served as HTML, is a page rather than text: it starts with a tag.
fn is_html_page(body: &[u8]) -> bool {
    let body = body.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(body);
    body.iter()
        .find(|b| !b.is_ascii_whitespace())
        .is_some_and(|&b| b == b'<')
}

/// At most 200 bytes of `text` from a server, for a message.
fn clip(text: &str) -> String {
    match text.char_indices().nth(200) {
        Some((end, _)) => format!("{}…", &text[..end]),
        None => text.to_string(),
    }
}

/// `url` without its user name and password, and the user name, if it had one.
fn without_userinfo(url: &str) -> (String, Option<String>) {
    let Some(scheme_end) = url.find("://").map(|i| i + 3) else {
        return (url.to_string(), None);
    };
    let rest = &url[scheme_end..];
    let authority_end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    match rest[..authority_end].rfind('@') {
        Some(at) => {
            let user = rest[..at].split(':').next().unwrap_or_default();
            (
                format!("{}{}", &url[..scheme_end], &rest[at + 1..]),
                (!user.is_empty()).then(|| user.to_string()),
            )
        }
        None => (url.to_string(), None),
    }
}

/// `text` with the password of every URL in it replaced by `***`.
pub fn redact(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(i) = rest.find("://") {
        let (before, after) = rest.split_at(i + 3);
        out.push_str(before);
        let authority_end = after
            .find(|c: char| "/?#".contains(c) || c.is_whitespace() || "`'\"<>()[]".contains(c))
            .unwrap_or(after.len());
        let authority = &after[..authority_end];
        match authority.rfind('@').and_then(|at| {
            let colon = authority[..at].find(':')?;
            Some((colon, at))
        }) {
            Some((colon, at)) => {
                out.push_str(&authority[..=colon]);
                out.push_str("***");
                out.push_str(&authority[at..]);
            }
            None => out.push_str(authority),
        }
        rest = &after[authority_end..];
    }
    out.push_str(rest);
    out
}
/// An error with its causes (reqwest's top message alone says little).
fn chain(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        let message = cause.to_string();
        if !text.contains(&message) {
            text.push_str(": ");
            text.push_str(&message);
        }
        source = cause.source();
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn passwords_are_never_repeated() {
        assert_eq!(
            redact("cannot download http://me:s3cret@h:8/a (`curl http://me:s3cret@h/a`)"),
            "cannot download http://me:***@h:8/a (`curl http://me:***@h/a`)"
        );
        assert_eq!(redact("http://me@h/a:b@c"), "http://me@h/a:b@c");
        assert_eq!(redact("x https://h/a?u=a:b@c"), "x https://h/a?u=a:b@c");
        assert_eq!(redact("no url: a:b@c"), "no url: a:b@c");
        assert_eq!(
            without_userinfo("http://me:s3cret@h:8/a@b"),
            ("http://h:8/a@b".to_string(), Some("me".to_string()))
        );
        assert_eq!(
            without_userinfo("https://h/a"),
            ("https://h/a".to_string(), None)
        );
    }

    #[test]
    fn an_html_page_is_told_from_text() {
        assert!(is_html_page(b"\xEF\xBB\xBF\n  <!DOCTYPE html><html>"));
        assert!(!is_html_page(b"# Spec\n\n<b>bold</b>"));
        assert!(!is_html_page(b""));
    }
}
