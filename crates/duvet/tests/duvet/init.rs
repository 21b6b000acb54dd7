//! `duvet init` against the configs duvet 0.4.3 wrote (tests/fixtures/upstream-0.4.3/init),
//! and the project it starts reported on by `duvet report`.

use std::path::Path;
use std::process::{Command, Output};

use crate::report::stderr;
use crate::support::{BIN, Project};

fn init(p: &Project, args: &[&str]) -> Output {
    Command::new(BIN)
        .arg("init")
        .args(args)
        .current_dir(p.root())
        .output()
        .unwrap()
}

fn recorded(name: &str) -> String {
    std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/upstream-0.4.3/init")
            .join(name),
    )
    .unwrap()
}

fn config(p: &Project) -> String {
    std::fs::read_to_string(p.path(".duvet/config.toml")).unwrap()
}

#[test]
fn the_config_is_0_4_3_s_for_detected_named_or_no_languages() {
    let p = Project::new();
    p.write("Cargo.toml", "[package]\n");
    p.write("package.json", "{}\n");
    let out = init(
        &p,
        &[
            "--specification",
            "https://www.rfc-editor.org/rfc/rfc9000",
            "--specification",
            "specs/x.md",
        ],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(config(&p), recorded("detected.toml"));
    assert_eq!(
        std::fs::read_to_string(p.path(".duvet/.gitignore")).unwrap(),
        "reports/\n"
    );
    assert!(out.stdout.is_empty());

    let p = Project::new();
    p.write("Cargo.toml", "[package]\n");
    let mut args = vec![];
    for lang in [
        "c",
        "go",
        "java",
        "javascript",
        "proverif",
        "cryptoverif",
        "python",
        "typescript",
        "ruby",
        "rust",
    ] {
        args.push(format!("--lang-{lang}"));
    }
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    assert!(init(&p, &args).status.success());
    assert_eq!(config(&p), recorded("all-languages.toml"));

    let p = Project::new();
    assert!(init(&p, &[]).status.success());
    assert_eq!(config(&p), recorded("empty.toml"));
}

#[test]
fn existing_files_are_kept_and_said_so() {
    let p = Project::new();
    p.write(".duvet/config.toml", "# mine\n");
    let out = init(&p, &["--lang-rust"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(config(&p), "# mine\n");
    let err = stderr(&out);
    assert!(
        err.contains("Skipping .duvet/config.toml - already exists")
            && err.contains("Wrote .duvet/.gitignore"),
        "{err}"
    );
}

#[test]
fn a_started_project_reports_and_its_snapshot_guards_ci() {
    let p = Project::new();
    p.write("Cargo.toml", "[package]\n");
    p.write("specs/x.md", "# Ping\n\nA server MUST answer a ping.\n");
    assert!(
        init(&p, &["--specification", "specs/x.md"])
            .status
            .success()
    );
    let report = |args: &[&str]| {
        Command::new(BIN)
            .arg("report")
            .args(args)
            .current_dir(p.root())
            .env_remove("CI")
            .output()
            .unwrap()
    };
    // The first run writes the snapshot, the requirement file and the HTML report.
    let out = report(&[]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(p.path(".duvet/requirements/specs/x/ping.toml").exists());
    assert!(p.path(".duvet/snapshot.txt").exists());
    assert!(p.path(".duvet/reports/report.html").exists());
    // With a snapshot, `--ci` checks that the snapshot is current (as 0.4.3 does).
    let out = report(&["--ci", "--require-tests", "false"]);
    assert!(out.status.success(), "{}", stderr(&out));
    // Cite it: the snapshot changes, so CI fails until it is rewritten, then passes.
    p.write(
        "src/lib.rs",
        "//= specs/x.md#ping\n//# A server MUST answer a ping.\nfn pong() {}\n",
    );
    let out = report(&["--ci", "--require-tests", "false"]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(stderr(&out).contains("Report snapshot does not match with CI mode enabled"));
    assert!(report(&[]).status.success());
    let out = report(&["--ci", "--require-tests", "false"]);
    assert!(out.status.success(), "{}", stderr(&out));
}
