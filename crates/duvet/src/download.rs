//! Downloading specifications into the download cache, as duvet 0.4.3's `report`, `extract`
//! and `query` do for a URL target whose text is not cached yet: a GET of the canonical URL
//! (IETF links rewritten to rfc-editor's `.txt`, [`crate::config::cache_path`]'s rule) with
//! `Accept: text/plain`, the body kept at the cache path.
//!
//! Only the commands download; `duvet mcp` reads the cache and never touches the network.
//! A file is written whole or not at all (a temporary file beside it, then renamed), so an
//! interrupted download leaves nothing a later run would read as the text. Failures say
//! whether trying again may help (a timeout, a refused connection, a 5xx or 429 answer) and
//! how to put the file there by hand.

use std::path::PathBuf;
use std::time::Duration;

/// The largest text accepted (RFC 9000, among the largest, is 0.5 MB).
const MAX_BYTES: usize = 64 << 20;
/// How long one download may take.
const TIMEOUT: Duration = Duration::from_secs(60);
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

/// Download every one of `downloads` that is not cached yet, several at a time; the files
/// written, in order, or every failure's message.
pub fn fetch_missing(downloads: Vec<Download>) -> Result<Vec<String>, Vec<String>> {
    let mut seen = std::collections::HashSet::new();
    let todo: Vec<Download> = downloads
        .into_iter()
        .filter(|d| !d.file.exists() && seen.insert(d.file.clone()))
        .collect();
    if todo.is_empty() {
        return Ok(Vec::new());
    }
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(e) => return Err(vec![format!("cannot start the downloads: {e}")]),
    };
    runtime.block_on(fetch_all(todo))
}

async fn fetch_all(todo: Vec<Download>) -> Result<Vec<String>, Vec<String>> {
    // reqwest is built without a bundled crypto provider: ring is the process's (harmless
    // when one is installed already).
    let _ = rustls::crypto::ring::default_provider().install_default();
    let client = reqwest::Client::builder()
        .user_agent(concat!("duvet/", env!("CARGO_PKG_VERSION")))
        .timeout(TIMEOUT)
        .build()
        .map_err(|e| vec![format!("cannot start the downloads: {}", chain(&e))])?;
    let limit = std::sync::Arc::new(tokio::sync::Semaphore::new(PARALLEL));
    let mut tasks = tokio::task::JoinSet::new();
    for (i, download) in todo.into_iter().enumerate() {
        let (client, limit) = (client.clone(), limit.clone());
        tasks.spawn(async move {
            let _permit = limit.acquire_owned().await;
            let result = fetch_one(&client, &download).await;
            (i, download, result)
        });
    }
    let mut done = Vec::new();
    while let Some(joined) = tasks.join_next().await {
        match joined {
            Ok(one) => done.push(one),
            Err(e) => done.push((
                usize::MAX,
                Download {
                    source: String::new(),
                    url: String::new(),
                    file: PathBuf::new(),
                    shown: String::new(),
                    root: PathBuf::new(),
                    cache_dir: PathBuf::new(),
                },
                Err(format!("a download stopped: {e}")),
            )),
        }
    }
    done.sort_by_key(|(i, _, _)| *i);
    let (mut written, mut errors) = (Vec::new(), Vec::new());
    for (_, download, result) in done {
        match result {
            Ok(()) => written.push(download.shown),
            Err(e) => errors.push(e),
        }
    }
    if errors.is_empty() {
        Ok(written)
    } else {
        Err(errors)
    }
}

/// What to do instead, for a message.
fn by_hand(d: &Download) -> String {
    format!(
        "or save the text there yourself: `curl -fsSL --create-dirs -o {} {}`",
        d.shown, d.url
    )
}

async fn fetch_one(client: &reqwest::Client, d: &Download) -> Result<(), String> {
    let fail = |why: String, retry: bool| {
        format!(
            "cannot download {} into {}: {why}{}; {}",
            d.source,
            d.shown,
            if retry { " (retrying may help)" } else { "" },
            by_hand(d)
        )
    };
    // Checked before asking anything: the file is written only there.
    crate::output::confine(&d.root, &d.cache_dir, &d.file, "the cache file")
        .map_err(|e| format!("cannot download {}: {e}", d.source))?;
    let mut response = client
        .get(&d.url)
        .header(reqwest::header::ACCEPT, "text/plain")
        .send()
        .await
        .map_err(|e| fail(chain(&e), true))?;
    let status = response.status();
    if !status.is_success() {
        let retry = status.is_server_error() || status.as_u16() == 429;
        return Err(fail(format!("the server answered {status}"), retry));
    }
    let mut body = Vec::new();
    while let Some(chunk) = response.chunk().await.map_err(|e| fail(chain(&e), true))? {
        if body.len() + chunk.len() > MAX_BYTES {
            return Err(fail(
                format!("the text is larger than {} MiB", MAX_BYTES >> 20),
                false,
            ));
        }
        body.extend_from_slice(&chunk);
    }
    crate::output::write(&d.file, &body).map_err(|e| {
        format!(
            "cannot download {} into {}: {}: {e}",
            d.source,
            d.shown,
            d.file.display()
        )
    })
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
