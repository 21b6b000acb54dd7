//! Fixtures for duvet's integration tests: small real projects in temp dirs, in the layouts
//! Duvet 0.4 (config file) and older Duvet (flags) read, and the built binary behind an MCP
//! client.
#![allow(dead_code)]

use std::path::{Path, PathBuf};

use mcp_testkit::{McpProcess, Wire};

pub const BIN: &str = env!("CARGO_BIN_EXE_duvet");

pub const RFC2324_URL: &str = "https://www.rfc-editor.org/rfc/rfc2324";

/// An excerpt of an IETF RFC in rfc-editor layout, with a page break.
pub const RFC2324_TEXT: &str = "\
Network Working Group                                        L. Masinter
Request for Comments: 2324                                 1 April 1998
Category: Informational


          Hyper Text Coffee Pot Control Protocol (HTCPCP/1.0)

Status of this Memo

   This memo provides information for the Internet community.

Abstract

   This document describes HTCPCP, a protocol for controlling coffee
   pots.

1.  Rationale and Scope

   There is coffee all over the world. Increasingly, in a world in
   which computing is ubiquitous, the computists want to make coffee.

2.  HTCPCP Protocol

   The HTCPCP protocol is built on top of HTTP.

2.1.  HTCPCP Added Methods

2.1.1.  The BREW method, and the use of POST

   Commands to control a coffee pot are sent from client to coffee
   server using either a BREW or POST method. A coffee pot server MUST
   accept both the BREW and POST method equivalently. However, the use
   of POST for causing actions to happen is deprecated.

   Coffee pots heat water using electronic mechanisms, so there is no
   fire. Thus, no firewalls are necessary. However, POST MAY be a
   trademark for coffee, and so the BREW method has been added.



Masinter                      Informational                     [Page 2]
\u{c}
RFC 2324                          HTCPCP/1.0                1 April 1998


2.1.2.  The GET method

   In HTTP, the GET method is used to mean \"retrieve whatever
   information is identified by the Request-URI\". Clients SHOULD send
   BREW rather than GET to start brewing.
";

/// A Markdown specification with an explicit id and a duplicated heading.
pub const COFFEE_MD: &str = "\
# Coffee Service

## Ordering {#ordering}

A client MUST identify the pot. The server SHOULD respond quickly.

## Payment

Payments MAY be made in beans.

## Payment

Refunds MUST NOT be issued.
";

/// A requirement's identifier as documented: the hex BLAKE3 of its place
/// (`<spec key>#<section id>`), a line feed and its normalized text. Computed here, not by the
/// crate, so that a change of the scheme fails the tests.
pub fn req_id(place: &str, text: &str) -> String {
    blake3::hash(format!("{place}\n{text}").as_bytes())
        .to_hex()
        .to_string()
}

/// The hash of a requirement's text alone: the identifier of earlier versions.
pub fn text_hash(text: &str) -> String {
    blake3::hash(text.as_bytes()).to_hex().to_string()
}

/// A project directory in a temp dir.
pub struct Project {
    pub dir: tempfile::TempDir,
}

impl Project {
    pub fn new() -> Self {
        Self {
            dir: tempfile::tempdir().expect("tempdir"),
        }
    }

    pub fn root(&self) -> &Path {
        self.dir.path()
    }

    pub fn path(&self, rel: &str) -> PathBuf {
        self.dir.path().join(rel)
    }

    pub fn write(&self, rel: &str, text: &str) {
        let path = self.path(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }

    /// Copy every file below `from` into the project, at the same relative paths.
    pub fn copy_from(&self, from: &Path) {
        fn walk(base: &Path, dir: &Path, p: &Project) {
            for entry in std::fs::read_dir(dir).unwrap() {
                let path = entry.unwrap().path();
                if path.is_dir() {
                    walk(base, &path, p);
                } else {
                    let rel = path.strip_prefix(base).unwrap().to_str().unwrap();
                    p.write(rel, &std::fs::read_to_string(&path).unwrap());
                }
            }
        }
        walk(from, from, self);
    }

    pub async fn start(&self, args: &[&str]) -> McpProcess {
        self.start_in(self.root(), args).await
    }

    pub async fn start_in(&self, cwd: &Path, args: &[&str]) -> McpProcess {
        start_over(Wire::Stdio, cwd, args).await
    }

    /// `duvet mcp` in the project, reached over `wire`.
    pub async fn start_over(&self, wire: Wire, args: &[&str]) -> McpProcess {
        start_over(wire, self.root(), args).await
    }
}

/// `duvet mcp ARGS` in `cwd`, reached over `wire` (over HTTP, `--http 127.0.0.1:0` is added).
pub async fn start_over(wire: Wire, cwd: &Path, args: &[&str]) -> McpProcess {
    let mut all = vec!["mcp"];
    all.extend_from_slice(args);
    McpProcess::spawn_bin_over(wire, BIN, &all, cwd, &[("HOME", "/nonexistent")])
        .await
        .expect("start duvet mcp")
}

/// The Duvet 0.4 project used by most tests: an IETF spec from the download cache, a local
/// Markdown spec, Rust and Python sources, exception and TODO files.
pub fn coffee_project() -> Project {
    let p = Project::new();
    p.write(
        ".duvet/config.toml",
        r###"'$schema' = "https://awslabs.github.io/duvet/config/v0.4.0.json"

[[source]]
pattern = "src/**/*.rs"

[[source]]
pattern = "lib/**/*.py"
comment-style = { meta = "##=", content = "##%" }

[[specification]]
source = "https://www.rfc-editor.org/rfc/rfc2324"

[[specification]]
source = "specs/coffee.md"
format = "markdown"

[report.html]
enabled = false
"###,
    );
    p.write(
        ".duvet/specifications/www.rfc-editor.org/rfc/rfc2324.txt",
        RFC2324_TEXT,
    );
    p.write("specs/coffee.md", COFFEE_MD);
    p.write(
        "src/main.rs",
        "\
//= https://www.rfc-editor.org/rfc/rfc2324#section-2.1.1
//# A coffee pot server MUST
//# accept both the BREW and POST method equivalently.
fn brew() {}

//= https://www.rfc-editor.org/rfc/rfc2324#2.1.2
//# Clients SHOULD send BREW
fn get() {}
",
    );
    p.write(
        "src/tests/brew.rs",
        "\
fn test_get() {
    //= https://www.rfc-editor.org/rfc/rfc2324#section-2.1.2
    //= type=test
    //# Clients SHOULD send BREW rather than GET to start brewing.
    assert!(true);
}
",
    );
    p.write(
        "src/invalid.rs",
        "\
//= https://www.rfc-editor.org/rfc/rfc2324#section-9.9
//# Anything at all.

//= https://www.rfc-editor.org/rfc/rfc9999#section-1
//# Something else.

//= https://www.rfc-editor.org/rfc/rfc2324#section-2.1.1
//# This text is not in the section at all.

//= https://www.rfc-editor.org/rfc/rfc2324#section-2.1.1
//= type=bogus
//# A coffee pot server MUST
",
    );
    p.write(
        "lib/pay.py",
        "\
##= specs/coffee.md#payment
##% Payments MAY be made in beens.
def pay():
    pass

##= specs/coffee.md#payment-1
##% Refunds   MUST NOT
##% be issued.
def refund():
    pass
",
    );
    p.write(
        ".duvet/exceptions/trademark.toml",
        r#"target = "https://www.rfc-editor.org/rfc/rfc2324#section-2.1.1"

[[exception]]
quote = '''
However, POST MAY be a
trademark for coffee, and so the BREW method has been added.
'''
reason = "We do not brew trademarks."
"#,
    );
    p.write(
        ".duvet/todos/ordering.toml",
        r#"target = "specs/coffee.md#ordering"

[[TODO]]
quote = "The server SHOULD respond quickly."
feature = "fast-service"
tracking-issue = "42"
"#,
    );
    p
}

/// The Rust coverage fixture (tests/fixtures/rust-coverage) measured by `cargo tarpaulin`
/// (`DUVET_TARPAULIN` names the binary, else `cargo tarpaulin`) with `extra` arguments, in a
/// copy kept for the test run (the report's absolute paths name it); `None`, with a note,
/// when tarpaulin is not installed, unless `DUVET_REQUIRE_COVERAGE_TOOLS` is set.
#[allow(clippy::print_stderr)]
pub fn tarpaulin_measured(extra: &[&str]) -> Option<PathBuf> {
    let tarpaulin = || match std::env::var_os("DUVET_TARPAULIN") {
        Some(bin) => std::process::Command::new(bin),
        None => {
            let mut c = std::process::Command::new("cargo");
            c.arg("tarpaulin");
            c
        }
    };
    let available = tarpaulin()
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !available {
        assert!(
            std::env::var_os("DUVET_REQUIRE_COVERAGE_TOOLS").is_none(),
            "cargo tarpaulin is required (DUVET_REQUIRE_COVERAGE_TOOLS is set)"
        );
        eprintln!("cargo tarpaulin is not installed: the tests that need its report are skipped");
        return None;
    }
    let project = Project::new();
    project.copy_from(&Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/rust-coverage"));
    let out = tarpaulin()
        .args(extra)
        .args(["--out", "Lcov", "--output-dir", "coverage", "--skip-clean"])
        .current_dir(project.root())
        .env("CARGO_TARGET_DIR", project.path("target"))
        .env_remove("RUSTFLAGS")
        .output()
        .expect("run cargo tarpaulin");
    assert!(
        out.status.success() && project.path("coverage/lcov.info").is_file(),
        "cargo tarpaulin failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    Some(project.dir.keep())
}

/// The identifier `duvet mcp` gives the requirement with `text` (from `search_requirements`).
pub async fn identifier(mcp: &McpProcess, text: &str) -> String {
    let found: serde_json::Value = mcp
        .call_ok("search_requirements", serde_json::json!({"query": text}))
        .await;
    let items = found["items"]
        .as_array()
        .or(found.as_array())
        .unwrap()
        .clone();
    items
        .iter()
        .find(|r| r["text"] == text)
        .unwrap_or_else(|| panic!("{text} in {found}"))["identifier"]
        .as_str()
        .unwrap()
        .to_string()
}

/// Every file below `dir` (none when it does not exist), relative, sorted.
pub fn files(dir: &Path) -> Vec<String> {
    let mut all: Vec<String> = walkdir::WalkDir::new(dir)
        .into_iter()
        .flatten()
        .filter(|e| !e.file_type().is_dir())
        .map(|e| e.path().strip_prefix(dir).unwrap().display().to_string())
        .collect();
    all.sort();
    all
}

/// A copy of the measured Rust fixture (its sources and report, the report's absolute paths
/// made the copy's: tarpaulin names files by absolute path).
pub fn measured_copy(dir: &Path) -> Project {
    let p = Project::new();
    for file in [
        ".duvet/config.toml",
        "Cargo.toml",
        "specs/ping.md",
        "src/lib.rs",
    ] {
        p.write(file, &std::fs::read_to_string(dir.join(file)).unwrap());
    }
    let lcov = std::fs::read_to_string(dir.join("coverage/lcov.info")).unwrap();
    let prefix = format!("SF:{}/", dir.display());
    assert!(
        lcov.contains(&prefix),
        "tarpaulin names files by absolute path: {lcov}"
    );
    p.write(
        "coverage/lcov.info",
        &lcov.replace(&prefix, &format!("SF:{}/", p.root().display())),
    );
    p
}
