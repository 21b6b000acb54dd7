//! Downloading specifications: `duvet report`, `duvet query` and `duvet extract` fetch a URL
//! specification missing from the download cache, as duvet 0.4.3 does, from a local HTTP
//! server here; where 0.4.3 is installed it runs on a copy of the same project and must write
//! the same cache file, requirement files and JSON. `duvet mcp` never downloads.

use std::io::{BufRead, BufReader, Write};
use std::net::TcpListener;
use std::path::Path;
use std::process::{Command, Output};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use crate::support::{BIN, COFFEE_MD, Project, RFC2324_TEXT};
use crate::upstream::duvet043;

/// A local server: `/rfc/coffee.txt` is RFC 2324's excerpt, `/busy.txt` answers 503, anything
/// else 404. Counts the requests and keeps the last `Accept` header.
struct Server {
    port: u16,
    requests: Arc<AtomicUsize>,
    accept: Arc<std::sync::Mutex<String>>,
}

impl Server {
    fn start() -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let requests = Arc::new(AtomicUsize::new(0));
        let accept = Arc::new(std::sync::Mutex::new(String::new()));
        let (count, seen) = (requests.clone(), accept.clone());
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(mut stream) = stream else { continue };
                let mut reader = BufReader::new(stream.try_clone().unwrap());
                let mut first = String::new();
                if reader.read_line(&mut first).is_err() {
                    continue;
                }
                loop {
                    let mut line = String::new();
                    if reader.read_line(&mut line).unwrap_or(0) == 0 || line.trim().is_empty() {
                        break;
                    }
                    if let Some(value) = line.to_ascii_lowercase().strip_prefix("accept:") {
                        *seen.lock().unwrap() = value.trim().to_string();
                    }
                }
                count.fetch_add(1, Ordering::SeqCst);
                let path = first.split_whitespace().nth(1).unwrap_or("");
                let (status, body) = match path {
                    "/rfc/coffee.txt" => ("200 OK", RFC2324_TEXT),
                    "/busy.txt" => ("503 Service Unavailable", "try later"),
                    _ => ("404 Not Found", "no such page"),
                };
                let _ = write!(
                    stream,
                    "HTTP/1.1 {status}\r\nContent-Type: text/plain\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                    body.len()
                );
            }
        });
        Self {
            port,
            requests,
            accept,
        }
    }

    fn url(&self, path: &str) -> String {
        format!("http://127.0.0.1:{}{path}", self.port)
    }

    fn requests(&self) -> usize {
        self.requests.load(Ordering::SeqCst)
    }
}

const QUOTE: &str = "A coffee pot server MUST accept both the BREW and POST method equivalently.";

/// A config project declaring `url` and citing its requirement.
fn config_project(url: &str) -> Project {
    let p = Project::new();
    p.write(
        ".duvet/config.toml",
        &format!(
            "'$schema' = \"https://awslabs.github.io/duvet/config/v0.4.0.json\"\n\n[[source]]\npattern = \"src/**/*.rs\"\n\n[[specification]]\nsource = \"{url}\"\n"
        ),
    );
    p.write(
        "src/lib.rs",
        &format!("//= {url}#2.1.1\n//# {QUOTE}\npub fn brew() {{}}\n"),
    );
    p
}

fn run(bin: &Path, root: &Path, args: &[&str]) -> Output {
    Command::new(bin)
        .args(args)
        .current_dir(root)
        .env("HOME", root)
        .env_remove("CI")
        .output()
        .unwrap()
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// Every file below `dir` with its bytes, relative paths sorted.
fn files(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut all: Vec<(String, Vec<u8>)> = walkdir::WalkDir::new(dir)
        .into_iter()
        .flatten()
        .filter(|e| e.file_type().is_file())
        .map(|e| {
            let rel = e
                .path()
                .strip_prefix(dir)
                .unwrap()
                .to_string_lossy()
                .into_owned();
            (rel, std::fs::read(e.path()).unwrap())
        })
        .collect();
    all.sort();
    all
}

#[test]
fn report_downloads_a_missing_specification_once_as_0_4_3_does() {
    let server = Server::start();
    let url = server.url("/rfc/coffee.txt");
    let p = config_project(&url);
    let out = run(Path::new(BIN), p.root(), &["report", "--json", "out.json"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("Downloaded .duvet/specifications/127.0.0.1/rfc/coffee.txt"),
        "{}",
        stderr(&out)
    );
    assert_eq!(server.requests(), 1);
    assert_eq!(*server.accept.lock().unwrap(), "text/plain");
    let cached = p.path(".duvet/specifications/127.0.0.1/rfc/coffee.txt");
    assert_eq!(std::fs::read_to_string(&cached).unwrap(), RFC2324_TEXT);
    // The downloaded text was read: its requirement is cited in the report.
    let json = std::fs::read_to_string(p.path("out.json")).unwrap();
    assert!(json.contains(&url), "the report names the specification");
    assert!(json.contains("\"citation\":74"), "the requirement is cited");
    // Nothing half-written beside it.
    let dir: Vec<_> = std::fs::read_dir(cached.parent().unwrap())
        .unwrap()
        .collect();
    assert_eq!(dir.len(), 1);

    // Cached now: a second run asks nothing.
    let again = run(Path::new(BIN), p.root(), &["report", "--json", "out.json"]);
    assert!(again.status.success(), "{}", stderr(&again));
    assert!(!stderr(&again).contains("Downloaded"), "{}", stderr(&again));
    assert_eq!(server.requests(), 1);

    // duvet 0.4.3 on a copy of the same project writes the same files.
    let Some(upstream) = duvet043() else { return };
    let theirs = config_project(&url);
    let out = run(&upstream, theirs.root(), &["report", "--json", "out.json"]);
    assert!(out.status.success(), "{}", stderr(&out));
    // The cache and the requirement files (the HTML page is ours, not 0.4.3's).
    for dir in [".duvet/specifications", ".duvet/requirements"] {
        let (a, b) = (files(&p.path(dir)), files(&theirs.path(dir)));
        let names = |f: &[(String, Vec<u8>)]| f.iter().map(|(n, _)| n.clone()).collect::<Vec<_>>();
        assert_eq!(names(&a), names(&b), "{dir}");
        assert!(a == b, "{dir}: the same files with other bytes");
    }
    assert_eq!(
        std::fs::read(p.path("out.json")).unwrap(),
        std::fs::read(theirs.path("out.json")).unwrap()
    );
}

#[test]
fn a_report_that_downloads_a_cited_specification_counts_the_requirement_files_it_wrote() {
    // The project declares a specification of its own, whose requirement files the report
    // writes (none is there yet), and cites one by URL it does not declare: the report
    // downloads it, then reads the project again, requirement files included.
    let server = Server::start();
    let url = server.url("/rfc/coffee.txt");
    let project = || {
        let p = Project::new();
        p.write(
            ".duvet/config.toml",
            "'$schema' = \"https://awslabs.github.io/duvet/config/v0.4.0.json\"\n\n[[source]]\npattern = \"src/**/*.rs\"\n\n[[specification]]\nsource = \"specs/coffee.md\"\nformat = \"markdown\"\n",
        );
        p.write("specs/coffee.md", COFFEE_MD);
        p.write(
            "src/lib.rs",
            &format!("//= {url}#2.1.1\n//# {QUOTE}\npub fn brew() {{}}\n"),
        );
        p
    };
    let p = project();
    let out = run(Path::new(BIN), p.root(), &["report", "--json", "out.json"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stderr(&out).contains("Downloaded"), "{}", stderr(&out));
    let first = std::fs::read_to_string(p.path("out.json")).unwrap();
    assert!(
        first.contains(&url),
        "the report names the downloaded specification"
    );
    let requirement_files = files(&p.path(".duvet/requirements"));
    assert!(!requirement_files.is_empty());
    // Every requirement file is in the report, with what it holds.
    for (name, text) in &requirement_files {
        assert!(
            first.contains(&format!("\"source\":\".duvet/requirements/{name}\"")),
            "{name} is not in the report"
        );
        let text = String::from_utf8_lossy(text);
        assert!(text.contains("[[spec]]"), "{name}: {text}");
    }
    // Run again, with everything in place: the same report.
    let again = run(Path::new(BIN), p.root(), &["report", "--json", "out.json"]);
    assert!(again.status.success(), "{}", stderr(&again));
    assert_eq!(std::fs::read_to_string(p.path("out.json")).unwrap(), first);

    let Some(upstream) = duvet043() else { return };
    let theirs = project();
    let out = run(&upstream, theirs.root(), &["report", "--json", "out.json"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(
        files(&theirs.path(".duvet/requirements")),
        requirement_files
    );
    assert_eq!(
        std::fs::read_to_string(theirs.path("out.json")).unwrap(),
        first
    );
}

#[test]
fn a_declared_specification_that_cannot_be_had_fails_the_report_before_it_reads_more() {
    // The declared specification's download fails: the report stops there, as 0.4.3 does,
    // and does not go on to download the one the sources cite.
    let server = Server::start();
    let missing = server.url("/rfc/missing.txt");
    let cited = server.url("/rfc/coffee.txt");
    let p = Project::new();
    p.write(
        ".duvet/config.toml",
        &format!(
            "'$schema' = \"https://awslabs.github.io/duvet/config/v0.4.0.json\"\n\n[[source]]\npattern = \"src/**/*.rs\"\n\n[[specification]]\nsource = \"{missing}\"\n"
        ),
    );
    p.write(
        "src/lib.rs",
        &format!("//= {cited}#2.1.1\n//# {QUOTE}\npub fn brew() {{}}\n"),
    );
    let out = run(Path::new(BIN), p.root(), &["report", "--json", "out.json"]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(stderr(&out).contains("missing.txt"), "{}", stderr(&out));
    assert_eq!(
        server.requests(),
        1,
        "only the declared specification is asked for"
    );
    assert!(!p.path("out.json").exists());
}

#[test]
fn a_target_in_a_project_without_config_is_downloaded_too() {
    let server = Server::start();
    let url = server.url("/rfc/coffee.txt");
    let p = Project::new();
    p.write(
        "src/lib.rs",
        &format!("//= {url}#2.1.1\n//# {QUOTE}\npub fn brew() {{}}\n"),
    );
    let args = [
        "report",
        "--source-pattern",
        "src/**/*.rs",
        "--json",
        "out.json",
    ];
    let out = run(Path::new(BIN), p.root(), &args);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(server.requests(), 1);
    let ours = files(p.root());
    assert!(
        ours.iter()
            .any(|(f, text)| f.ends_with("127.0.0.1/rfc/coffee.txt")
                && text == RFC2324_TEXT.as_bytes()),
        "{:?}",
        ours.iter().map(|(f, _)| f).collect::<Vec<_>>()
    );
    let Some(upstream) = duvet043() else { return };
    let theirs = Project::new();
    theirs.write(
        "src/lib.rs",
        &format!("//= {url}#2.1.1\n//# {QUOTE}\npub fn brew() {{}}\n"),
    );
    let out = run(&upstream, theirs.root(), &args);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(files(p.root()), files(theirs.root()));
}

#[test]
fn a_failed_download_says_why_and_writes_nothing() {
    let server = Server::start();
    for (path, words, retry) in [
        ("/missing.txt", "404 Not Found", false),
        ("/busy.txt", "503 Service Unavailable", true),
    ] {
        let url = server.url(path);
        let p = config_project(&url);
        let out = run(Path::new(BIN), p.root(), &["report", "--json", "out.json"]);
        assert!(!out.status.success());
        let err = stderr(&out);
        assert!(err.contains(&format!("cannot download {url}")), "{err}");
        assert!(err.contains(words), "{err}");
        assert_eq!(err.contains("retrying may help"), retry, "{err}");
        assert!(
            err.contains("curl -fsSL --create-dirs -o .duvet/specifications/127.0.0.1/"),
            "{err}"
        );
        assert!(
            !p.path(".duvet/specifications").exists(),
            "{:?}",
            files(p.root())
        );
        assert!(!p.path("out.json").exists());
    }
    // Nobody listening: a network failure, retryable.
    let closed = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!(
        "http://127.0.0.1:{}/rfc/coffee.txt",
        closed.local_addr().unwrap().port()
    );
    drop(closed);
    let p = config_project(&url);
    let out = run(Path::new(BIN), p.root(), &["report", "--json", "out.json"]);
    assert!(!out.status.success());
    assert!(
        stderr(&out).contains("retrying may help"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn extract_and_query_download_what_they_read() {
    let server = Server::start();
    let url = server.url("/rfc/coffee.txt");
    let p = Project::new();
    let out = run(Path::new(BIN), p.root(), &["extract", "-o", "out", &url]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(server.requests(), 1);
    assert_eq!(
        std::fs::read_to_string(p.path("specs/127.0.0.1/rfc/coffee.txt")).unwrap(),
        RFC2324_TEXT
    );
    assert!(
        files(&p.path("out"))
            .iter()
            .any(|(f, _)| f.ends_with("section-2.1.1.toml"))
    );

    let q = config_project(&url);
    let out = run(
        Path::new(BIN),
        q.root(),
        &["query", "--check", "implementation"],
    );
    // The downloaded text was read: its other requirements are not implemented.
    assert!(!out.status.success());
    let err = stderr(&out);
    assert!(
        err.contains("Missing annotation") && err.contains("section-2.1.2"),
        "{err}"
    );
    assert_eq!(server.requests(), 2);
    assert!(
        q.path(".duvet/specifications/127.0.0.1/rfc/coffee.txt")
            .is_file()
    );
}
