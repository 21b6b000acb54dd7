//! Downloads against a hostile or broken server and a hostile project: what a hostile pass
//! found, each answered with one clear line, nothing written outside the download cache and
//! nothing half-written, and no password repeated.

use std::io::{BufRead, BufReader, Write};
use std::net::{TcpListener, TcpStream};
use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use crate::support::{BIN, Project, files};

const TEXT: &str = "Spec\n\n1.  Intro\n\n   A server MUST work.\n";

/// A local server whose answers are the tests' (see [`answer`]); counts the requests.
struct Server {
    port: u16,
    requests: Arc<AtomicUsize>,
}

/// What the server answers at `path`.
fn answer(stream: &mut TcpStream, path: &str, port: u16) {
    let reply = |stream: &mut TcpStream, status: &str, headers: &str, body: &[u8]| {
        let _ = write!(
            stream,
            "HTTP/1.1 {status}\r\n{headers}Content-Length: {}\r\nConnection: close\r\n\r\n",
            body.len()
        );
        let _ = stream.write_all(body);
    };
    match path {
        "/ok.txt" | "/v1/ok.txt" => reply(
            stream,
            "200 OK",
            "Content-Type: text/plain\r\n",
            TEXT.as_bytes(),
        ),
        "/page.txt" => reply(
            stream,
            "200 OK",
            "Content-Type: text/html; charset=utf-8\r\n",
            b"<!DOCTYPE html>\n<html><body><h1>Page not found</h1></body></html>\n",
        ),
        "/loop.txt" => reply(stream, "302 Found", "Location: /loop.txt\r\n", b""),
        "/file.txt" => reply(stream, "302 Found", "Location: file:///etc/passwd\r\n", b""),
        "/other.txt" => reply(
            stream,
            "301 Moved Permanently",
            &format!("Location: http://localhost:{port}/ok.txt\r\n"),
            b"",
        ),
        "/huge.txt" => {
            // More than the 64 MiB allowed, said up front.
            let _ = write!(
                stream,
                "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: {}\r\n\r\n",
                100 << 20
            );
            let _ = stream.write_all(&[b'x'; 1 << 16]);
        }
        "/endless.txt" => {
            // No length: chunks until the client stops reading.
            let _ = write!(
                stream,
                "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nTransfer-Encoding: chunked\r\n\r\n"
            );
            let chunk = [b'x'; 1 << 16];
            loop {
                let sent = write!(stream, "{:x}\r\n", chunk.len())
                    .and_then(|()| stream.write_all(&chunk))
                    .and_then(|()| stream.write_all(b"\r\n"));
                if sent.is_err() {
                    break;
                }
            }
        }
        "/stall.txt" => {
            // A start, then nothing: the client is stopped by hand.
            let _ = write!(
                stream,
                "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 1000\r\n\r\nSpec"
            );
            let _ = stream.flush();
            std::thread::sleep(Duration::from_secs(30));
        }
        _ => reply(stream, "404 Not Found", "", b"no such page"),
    }
}

impl Server {
    fn start() -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let requests = Arc::new(AtomicUsize::new(0));
        let count = requests.clone();
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(mut stream) = stream else { continue };
                let count = count.clone();
                std::thread::spawn(move || {
                    let mut reader = BufReader::new(stream.try_clone().unwrap());
                    let mut first = String::new();
                    if reader.read_line(&mut first).is_err() {
                        return;
                    }
                    loop {
                        let mut line = String::new();
                        if reader.read_line(&mut line).unwrap_or(0) == 0 || line.trim().is_empty() {
                            break;
                        }
                    }
                    count.fetch_add(1, Ordering::SeqCst);
                    let path = first.split_whitespace().nth(1).unwrap_or("").to_string();
                    answer(&mut stream, &path, port);
                });
            }
        });
        Self { port, requests }
    }

    fn url(&self, path: &str) -> String {
        format!("http://127.0.0.1:{}{path}", self.port)
    }
}

/// A config project declaring the specifications `urls` and citing the first.
fn project(urls: &[&str]) -> Project {
    let p = Project::new();
    let mut config =
        "'$schema' = \"https://awslabs.github.io/duvet/config/v0.4.0.json\"\n\n[[source]]\npattern = \"src/**/*.rs\"\n"
            .to_string();
    for url in urls {
        config.push_str(&format!("\n[[specification]]\nsource = \"{url}\"\n"));
    }
    p.write(".duvet/config.toml", &config);
    p.write(
        "src/lib.rs",
        &format!(
            "//= {}#section-1\n//# A server MUST work.\npub fn f() {{}}\n",
            urls[0]
        ),
    );
    p
}

fn report(p: &Project) -> Output {
    Command::new(BIN)
        .args(["report", "--json", "out.json"])
        .current_dir(p.root())
        .env("HOME", p.root())
        .env_remove("CI")
        .output()
        .unwrap()
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// Every path below `dir`, relative, sorted.
fn tree(dir: &Path) -> Vec<String> {
    let mut all: Vec<String> = walkdir::WalkDir::new(dir)
        .min_depth(1)
        .into_iter()
        .flatten()
        .map(|e| e.path().strip_prefix(dir).unwrap().display().to_string())
        .collect();
    all.sort();
    all
}

/// The run failed with one error line holding every one of `words`, and cached nothing.
fn failed_with(p: &Project, out: &Output, words: &[&str], retry: bool) {
    let err = stderr(out);
    assert!(!out.status.success(), "{err}");
    let errors: Vec<&str> = err.lines().filter(|l| l.starts_with("error:")).collect();
    assert_eq!(errors.len(), 1, "{err}");
    for word in words {
        assert!(errors[0].contains(word), "{word}: {err}");
    }
    assert_eq!(errors[0].contains("retrying may help"), retry, "{err}");
    assert_eq!(
        files(&p.path(".duvet/specifications")),
        Vec::<String>::new()
    );
}

#[test]
fn a_password_in_a_url_is_never_printed_nor_in_a_file_name() {
    let server = Server::start();
    let secret = "hunter2";
    for (path, ok) in [("/ok.txt", true), ("/missing.txt", false)] {
        let url = server
            .url(path)
            .replace("http://", &format!("http://reader:{secret}@"));
        let p = project(&[&url]);
        let out = report(&p);
        let err = stderr(&out);
        assert_eq!(out.status.success(), ok, "{err}");
        assert!(!err.contains(secret), "{err}");
        if ok {
            assert!(
                err.contains("Downloaded .duvet/specifications/127.0.0.1/ok.txt"),
                "{err}"
            );
        } else {
            assert!(err.contains("http://reader:***@127.0.0.1"), "{err}");
            // The command to run instead asks for the password.
            assert!(
                err.contains(&format!(
                    "curl -fsSL --create-dirs -u reader -o .duvet/specifications/127.0.0.1/missing.txt {}`",
                    server.url("/missing.txt")
                )),
                "{err}"
            );
        }
        assert!(
            tree(p.root()).iter().all(|f| !f.contains(secret)),
            "{:?}",
            tree(p.root())
        );
    }
}

#[test]
fn an_html_page_answered_for_a_text_is_not_cached() {
    let server = Server::start();
    let p = project(&[&server.url("/page.txt")]);
    let out = report(&p);
    failed_with(&p, &out, &["an HTML page", "raw URL"], false);
    // A redirect to another host is followed, as curl -L and 0.4.3 do.
    let p = project(&[&server.url("/other.txt")]);
    let out = report(&p);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(
        std::fs::read_to_string(p.path(".duvet/specifications/127.0.0.1/other.txt")).unwrap(),
        TEXT
    );
}

#[test]
fn redirects_that_lead_nowhere_say_so_and_retrying_would_not_help() {
    let server = Server::start();
    let p = project(&[&server.url("/loop.txt")]);
    failed_with(&p, &report(&p), &["more than 10 redirects"], false);
    let p = project(&[&server.url("/file.txt")]);
    failed_with(
        &p,
        &report(&p),
        &["302 Found, to file:///etc/passwd, which is not an http(s) URL"],
        false,
    );
}

#[test]
fn a_text_too_large_is_refused_without_reading_it_all() {
    let server = Server::start();
    for path in ["/huge.txt", "/endless.txt"] {
        let p = project(&[&server.url(path)]);
        let started = Instant::now();
        failed_with(&p, &report(&p), &["larger than 64 MiB"], false);
        assert!(started.elapsed() < Duration::from_secs(50), "{path}");
    }
}

#[test]
fn a_link_in_the_project_does_not_lead_a_download_out_of_the_cache() {
    let server = Server::start();
    let outside = tempfile::tempdir().unwrap();
    // A link to nothing where the text goes: writing would create its target.
    let p = project(&[&server.url("/ok.txt")]);
    std::fs::create_dir_all(p.path(".duvet/specifications/127.0.0.1")).unwrap();
    std::os::unix::fs::symlink(
        outside.path().join("planted"),
        p.path(".duvet/specifications/127.0.0.1/ok.txt"),
    )
    .unwrap();
    let out = report(&p);
    assert!(!out.status.success());
    assert!(
        stderr(&out).contains("ok.txt links outside .duvet/specifications"),
        "{}",
        stderr(&out)
    );
    assert_eq!(tree(outside.path()), Vec::<String>::new());
    for link in [".duvet/specifications/127.0.0.1", ".duvet/specifications"] {
        let p = project(&[&server.url("/ok.txt")]);
        std::fs::create_dir_all(p.path(link).parent().unwrap()).unwrap();
        std::os::unix::fs::symlink(outside.path(), p.path(link)).unwrap();
        let out = report(&p);
        let err = stderr(&out);
        assert!(!out.status.success(), "{err}");
        assert!(
            err.contains(&format!("{link} links outside the project"))
                || err.contains(&format!("{link} links outside .duvet/specifications")),
            "{err}"
        );
        assert_eq!(tree(outside.path()), Vec::<String>::new());
        assert_eq!(server.requests.load(Ordering::SeqCst), 0, "nothing asked");
    }
}

#[test]
fn urls_sharing_a_cache_file_are_named() {
    let server = Server::start();
    let (a, b) = (server.url("/ok.txt"), server.url("/ok.txt?version=2"));
    let p = project(&[&a, &b]);
    let out = report(&p);
    let err = stderr(&out);
    assert!(out.status.success(), "{err}");
    assert!(
        err.contains(&format!(
            "note: {a} and {b} are cached as the same file, .duvet/specifications/127.0.0.1/ok.txt"
        )),
        "{err}"
    );
    assert_eq!(server.requests.load(Ordering::SeqCst), 1);
}

#[test]
fn a_download_stopped_by_ctrl_c_leaves_nothing() {
    let server = Server::start();
    let p = project(&[&server.url("/stall.txt")]);
    let mut child = Command::new(BIN)
        .args(["report", "--json", "out.json"])
        .current_dir(p.root())
        .env("HOME", p.root())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let started = Instant::now();
    while server.requests.load(Ordering::SeqCst) == 0 {
        assert!(started.elapsed() < Duration::from_secs(30), "never asked");
        std::thread::sleep(Duration::from_millis(20));
    }
    std::thread::sleep(Duration::from_millis(200));
    let killed = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    let status = child.wait().unwrap();
    assert!(!status.success());
    assert!(
        started.elapsed() < Duration::from_secs(25),
        "stopped at once"
    );
    assert_eq!(
        files(&p.path(".duvet/specifications")),
        Vec::<String>::new()
    );
}

#[tokio::test]
async fn duvet_mcp_never_downloads_nor_writes() {
    let server = Server::start();
    let p = project(&[&server.url("/ok.txt")]);
    let before = files(p.root());
    let mcp = p.start(&[]).await;
    let specs = mcp.read_resource_json("duvet:///specifications").await;
    assert!(
        specs.to_string().contains("is not in the download cache"),
        "{specs}"
    );
    let _: serde_json::Value = mcp
        .call_ok("list_uncited_requirements", serde_json::json!({}))
        .await;
    mcp.shutdown().await;
    assert_eq!(server.requests.load(Ordering::SeqCst), 0);
    assert_eq!(files(p.root()), before);
}

#[test]
fn only_http_and_https_are_downloaded() {
    let p = Project::new();
    let out = Command::new(BIN)
        .args(["extract", "ftp://127.0.0.1:1/spec.txt"])
        .current_dir(p.root())
        .env("HOME", p.root())
        .output()
        .unwrap();
    failed_with(
        &p,
        &out,
        &["duvet downloads http and https URLs only"],
        false,
    );
    for url in ["file:///etc/passwd", "ftp://127.0.0.1:1/spec.txt"] {
        let p = project(&[url]);
        let out = report(&p);
        failed_with(
            &p,
            &out,
            &[url, "http and https specifications only"],
            false,
        );
    }
}

#[test]
fn a_download_cache_that_is_a_file_is_named() {
    let server = Server::start();
    let p = project(&[&server.url("/ok.txt")]);
    p.write(".duvet/specifications", "not a directory");
    let out = report(&p);
    let err = stderr(&out);
    assert!(!out.status.success(), "{err}");
    assert!(
        err.contains(".duvet/specifications is a file, not a directory"),
        "{err}"
    );
    assert_eq!(
        std::fs::read_to_string(p.path(".duvet/specifications")).unwrap(),
        "not a directory"
    );
}
