//! `duvet report` and `duvet extract` against a hostile project (a config or links that
//! point out of it) and a careless user (outputs that are devices, directories, or cannot be
//! written whole): what a hostile pass found, each answered with one clear line, nothing
//! written outside the project that the project chose, nothing half-written.

use std::process::{Command, Output};

use crate::support::{BIN, Project, files};

const CONFIG: &str = "'$schema' = \"https://awslabs.github.io/duvet/config/v0.4.0.json\"

[[source]]
pattern = \"src/**/*.rs\"

[[specification]]
source = \"specs/proto.md\"
format = \"markdown\"
";

/// A config project with `extra` appended to its config; `requirements` requirements.
fn project(extra: &str, requirements: usize) -> Project {
    let p = Project::new();
    p.write(".duvet/config.toml", &format!("{CONFIG}{extra}"));
    let mut spec = "# Proto\n\n## A {#a}\n\n".to_string();
    for i in 0..requirements {
        spec.push_str(&format!("The server MUST handle case {i}.\n\n"));
    }
    p.write("specs/proto.md", &spec);
    p.write(
        "src/lib.rs",
        "//= specs/proto.md#a\n//# The server MUST handle case 0.\npub fn f() {}\n",
    );
    p
}

fn run(p: &Project, args: &[&str]) -> Output {
    Command::new(BIN)
        .args(args)
        .current_dir(p.root())
        .env("HOME", p.root())
        .env_remove("CI")
        .output()
        .unwrap()
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// The one error line of a failed run.
fn error_line(out: &Output) -> String {
    let err = stderr(out);
    assert!(!out.status.success(), "{err}");
    let errors: Vec<&str> = err.lines().filter(|l| l.starts_with("error: ")).collect();
    assert_eq!(errors.len(), 1, "{err}");
    errors[0].to_string()
}

#[test]
fn a_config_cannot_send_its_reports_out_of_the_project() {
    let outside = tempfile::tempdir().unwrap();
    let victim = outside.path().join("victim");
    std::fs::write(&victim, "precious").unwrap();
    for table in ["html", "json", "snapshot"] {
        for path in [
            victim.display().to_string(),
            "../../../../../../../../../..".to_string() + &victim.display().to_string(),
        ] {
            let p = project(
                &format!("\n[report.{table}]\nenabled = true\npath = \"{path}\"\n"),
                1,
            );
            let line = error_line(&run(&p, &["report"]));
            assert!(
                line.contains(&format!("[report.{table}] path"))
                    && line.contains("is outside the project"),
                "{line}"
            );
            assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious");
        }
    }
    // A path in the project that is a link out of it (the HTML report's default too).
    for (table, path) in [
        ("json", "report.json"),
        ("html", ".duvet/reports/report.html"),
    ] {
        let p = project(
            &format!("\n[report.{table}]\nenabled = true\npath = \"{path}\"\n"),
            1,
        );
        std::fs::create_dir_all(p.path(path).parent().unwrap()).unwrap();
        std::os::unix::fs::symlink(&victim, p.path(path)).unwrap();
        let line = error_line(&run(&p, &["report"]));
        assert!(
            line.contains(&format!("{path} links outside the project")),
            "{line}"
        );
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious");
    }
    // Inside the project, anywhere: as 0.4.3.
    let p = project("\n[report.html]\npath = \"site/compliance.html\"\n", 1);
    let out = run(&p, &["report"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(p.path("site/compliance.html").is_file());
    // The command line's paths are the user's: written where asked.
    let asked = outside.path().join("asked.html");
    let out = run(&p, &["report", "--html", asked.to_str().unwrap()]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(asked.is_file());
}

#[test]
fn links_in_the_project_do_not_lead_its_files_out_of_it() {
    let outside = tempfile::tempdir().unwrap();
    for link in [".duvet/reports", ".duvet/requirements", ".duvet"] {
        let p = project("", 1);
        if link == ".duvet" {
            // The config elsewhere, named on the command line, the project's .duvet a link.
            std::fs::rename(p.path(".duvet/config.toml"), p.path("duvet.toml")).unwrap();
            std::fs::remove_dir(p.path(".duvet")).unwrap();
        }
        std::os::unix::fs::symlink(outside.path(), p.path(link)).unwrap();
        let args: &[&str] = if link == ".duvet" {
            &["report", "--config-path", "duvet.toml"]
        } else {
            &["report"]
        };
        let out = run(&p, args);
        let line = error_line(&out);
        assert!(
            line.contains(&format!("{link} links outside the project")),
            "{line}"
        );
        assert_eq!(files(outside.path()), Vec::<String>::new(), "{link}");
    }
    // `duvet extract --out` is the user's, links and all; below it, the files stay in it.
    let p = project("", 1);
    std::os::unix::fs::symlink(outside.path(), p.path("compliance")).unwrap();
    let out = run(
        &p,
        &[
            "extract",
            "-f",
            "markdown",
            "-o",
            "compliance",
            "specs/proto.md",
        ],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(
        files(outside.path()),
        vec!["specs/proto/a.toml".to_string()]
    );
}

#[test]
fn a_report_that_cannot_be_written_whole_leaves_the_old_one() {
    let p = project("\n[report.html]\nenabled = false\n", 300);
    let out = run(&p, &["report", "--json", "out.json"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let whole = std::fs::read(p.path("out.json")).unwrap();
    assert!(whole.len() > 16 * 1024, "{}", whole.len());
    std::fs::write(p.path("out.json"), "old").unwrap();
    // Files of at most 8 KiB: the report's write fails part way (EFBIG, the signal ignored).
    let limited = Command::new("bash")
        .args([
            "-c",
            "ulimit -f 8; trap '' XFSZ; exec \"$0\" report --json out.json",
            BIN,
        ])
        .current_dir(p.root())
        .env("HOME", p.root())
        .env_remove("CI")
        .output()
        .unwrap();
    let line = error_line(&limited);
    assert!(line.starts_with("error: out.json: "), "{line}");
    assert_eq!(std::fs::read_to_string(p.path("out.json")).unwrap(), "old");
    assert_eq!(
        files(p.root())
            .into_iter()
            .filter(|f| f.contains(".tmp"))
            .collect::<Vec<_>>(),
        Vec::<String>::new()
    );
}

#[test]
fn devices_and_directories_as_outputs() {
    let p = project("\n[report.html]\nenabled = false\n", 2);
    std::fs::create_dir(p.path("dir")).unwrap();
    for args in [
        ["report", "--json", "dir"],
        ["report", "--json-v2", "dir"],
        ["report", "--html", "dir"],
    ] {
        let line = error_line(&run(&p, &args));
        assert!(
            line.contains("dir") && line.contains("Is a directory"),
            "{line}"
        );
    }
    for args in [
        ["report", "--json", "/dev/full"],
        ["report", "--json-v2", "/dev/full"],
        ["report", "--html", "/dev/full"],
    ] {
        let line = error_line(&run(&p, &args));
        assert!(
            line.contains("/dev/full") && line.contains("No space left"),
            "{line}"
        );
    }
    // A device is written as it is (not replaced by a file).
    let out = run(&p, &["report", "--json", "/dev/stdout"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(out.stdout.starts_with(b"{\"specifications\":"));
}

/// `duvet ARGS` in the project, killed (and the test failed) if it runs 60 s.
fn run_within(p: &Project, args: &[&str]) -> Output {
    let child = Command::new(BIN)
        .args(args)
        .current_dir(p.root())
        .env("HOME", p.root())
        .env_remove("CI")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let id = child.id();
    let (done, waiting) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = done.send(child.wait_with_output());
    });
    match waiting.recv_timeout(std::time::Duration::from_secs(60)) {
        Ok(out) => out.unwrap(),
        Err(_) => {
            let _ = Command::new("kill").args(["-9", &id.to_string()]).status();
            panic!("duvet {args:?} still running after 60 s");
        }
    }
}

#[test]
fn devices_and_pipes_named_as_inputs_are_refused_not_read_forever() {
    let p = project("\n[report.html]\nenabled = false\n", 2);
    let fifo = |rel: &str| {
        let made = Command::new("mkfifo").arg(p.path(rel)).status().unwrap();
        assert!(made.success());
    };
    fifo("lcov.info");
    fifo("specs/pipe.md");
    fifo("v2.json");
    let cases: [&[&str]; 7] = [
        &["report", "--json", "out.json", "-r", "lcov.info"],
        &["report", "--json", "out.json", "-r", "/dev/zero"],
        &["merge", "--input", "/dev/zero", "--output", "m.json"],
        &["merge", "--input", "v2.json", "--output", "m.json"],
        &["extract", "-f", "markdown", "specs/pipe.md"],
        &["extract", "-f", "markdown", "/dev/zero"],
        &["report", "--config-path", "/dev/zero"],
    ];
    for args in cases {
        let line = error_line(&run_within(&p, args));
        assert!(
            line.contains("not a regular file") || line.contains("is not a file"),
            "{args:?}: {line}"
        );
    }
    // A declared specification that is a pipe.
    let q = project(
        "\n[[specification]]\nsource = \"specs/pipe.md\"\nformat = \"markdown\"\n",
        1,
    );
    let made = Command::new("mkfifo")
        .arg(q.path("specs/pipe.md"))
        .status()
        .unwrap();
    assert!(made.success());
    let line = error_line(&run_within(&q, &["report", "--json", "out.json"]));
    assert!(
        line.contains("specs/pipe.md") && line.contains("not a regular file"),
        "{line}"
    );
}

#[test]
fn a_query_of_thousands_of_findings_in_one_file_ends() {
    let p = project("\n[report.html]\nenabled = false\n", 1);
    let mut source = String::new();
    for i in 0..20_000 {
        source.push_str(&format!(
            "//= specs/proto.md#a\n//# The server MUST\npub fn f{i}() {{}}\n"
        ));
    }
    p.write("src/many.rs", &source);
    p.write("src/lib.rs", "pub fn f() {}\n");
    // Each finding drew its file's lines anew: minutes (0.4.3 takes as long).
    let out = run_within(&p, &["query", "--check", "implementation"]);
    let err = stderr(&out);
    assert!(
        err.contains("Overall:"),
        "{}",
        &err[err.len().saturating_sub(500)..]
    );
    assert!(err.matches("src/many.rs:").count() >= 20_000);
}

#[test]
fn no_escape_sequence_from_the_input_reaches_the_terminal() {
    let p = project("\n[report.html]\nenabled = false\n", 1);
    p.write(
        "lcov.info",
        "SF:src/lib.rs\n\u{1b}]0;PWNED\u{7}\u{1b}[31mred\r\nend_of_record\n",
    );
    p.write(
        "src/evil.rs",
        "//= specs/proto.md#\u{1b}[2J\u{9b}31m\n//# The server MUST handle case 0.\npub fn g() {}\n",
    );
    for args in [
        &["report", "--json", "out.json", "-r", "lcov.info"][..],
        &["report", "--json", "out.json"][..],
    ] {
        let out = run(&p, args);
        let err = stderr(&out);
        assert!(!out.status.success(), "{err}");
        assert!(
            !err.contains(['\u{1b}', '\u{7}', '\u{9b}', '\r']),
            "{err:?}"
        );
        assert!(err.contains("\\u{1b}"), "{err}");
    }
}

#[test]
fn init_does_not_follow_a_link_out_of_the_project() {
    let p = Project::new();
    let outside = tempfile::tempdir().unwrap();
    std::os::unix::fs::symlink(outside.path(), p.path(".duvet")).unwrap();
    let line = error_line(&run(&p, &["init", "--lang-rust"]));
    assert!(line.contains(".duvet links outside the project"), "{line}");
    assert_eq!(files(outside.path()), Vec::<String>::new());
}

#[test]
fn a_section_id_does_not_lead_a_requirement_file_out_of_the_project() {
    let outside = tempfile::tempdir().unwrap();
    let p = project("", 1);
    // A Markdown id that climbs out of .duvet/requirements/specs/proto/ to `outside`.
    let depth = p
        .path(".duvet/requirements/specs/proto")
        .components()
        .count();
    let climb = format!(
        "{}{}",
        "../".repeat(depth + 2),
        outside.path().join("planted").display()
    );
    p.write(
        "specs/proto.md",
        &format!(
            "# Proto\n\n## A {{#a}}\n\nThe server MUST handle case 0.\n\n## B {{#{climb}}}\n\nThe client MUST go.\n"
        ),
    );
    let line = error_line(&run(&p, &["report", "--json", "out.json"]));
    assert!(
        line.contains("is outside .duvet/requirements: duvet writes it only there"),
        "{line}"
    );
    let line = error_line(&run(
        &p,
        &["extract", "-f", "markdown", "-o", "out", "specs/proto.md"],
    ));
    assert!(line.contains("duvet writes it only there"), "{line}");
    assert_eq!(files(outside.path()), Vec::<String>::new());
}
