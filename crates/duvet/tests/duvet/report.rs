//! `duvet report` on the fixture project (tests/fixtures/upstream, with the requirement files
//! duvet 0.4.3 extracted from its specifications) against what duvet 0.4.3 wrote for it
//! (tests/fixtures/upstream-0.4.3: the JSON report and the snapshot as written, the LCOV
//! files sorted, since 0.4.3 writes their lines in hash order), and against 0.4.3 itself where
//! it is installed ([`crate::upstream::duvet043`]): the same files, verdicts and exit codes.

use std::path::Path;
use std::process::{Command, Output};

use crate::support::{BIN, Project};

pub(crate) fn fixture() -> Project {
    let p = Project::new();
    let from = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/upstream");
    p.copy_from(&from);
    p
}

pub(crate) fn recorded(name: &str) -> String {
    std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/upstream-0.4.3")
            .join(name),
    )
    .unwrap()
}

fn run(bin: &Path, p: &Project, args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut cmd = Command::new(bin);
    cmd.arg("report")
        .args(args)
        .current_dir(p.root())
        .env_remove("CI");
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.output().unwrap()
}

fn ours(p: &Project, args: &[&str]) -> Output {
    run(Path::new(BIN), p, args, &[])
}

pub(crate) fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

fn sorted_lines(text: &str) -> String {
    let mut lines: Vec<&str> = text.lines().collect();
    lines.sort_unstable();
    lines.iter().map(|l| format!("{l}\n")).collect()
}

#[test]
fn the_json_report_is_the_one_0_4_3_writes_byte_for_byte() {
    let p = fixture();
    let out = ours(&p, &["--json", "out/report.json"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let json = std::fs::read_to_string(p.path("out/report.json")).unwrap();
    assert_eq!(json, recorded("report.json"));
    // The slip 0.4.3 skips in silence is named, and does not fail the run.
    assert!(
        stderr(&out).contains("src/lib.rs:39: quote lines without a target line"),
        "{}",
        stderr(&out)
    );
    if let Some(upstream) = crate::upstream::duvet043() {
        let q = fixture();
        let out = run(&upstream, &q, &["--json", "out/report.json"], &[]);
        assert!(out.status.success(), "{}", stderr(&out));
        assert_eq!(
            json,
            std::fs::read_to_string(q.path("out/report.json")).unwrap()
        );
    }
}

#[test]
fn the_lcov_report_holds_0_4_3_s_lines() {
    let p = fixture();
    let out = ours(&p, &["--lcov", "lcov"]);
    assert!(out.status.success(), "{}", stderr(&out));
    for n in 0..2 {
        let name = format!("compliance.{n}.lcov");
        let text = std::fs::read_to_string(p.path(&format!("lcov/{name}"))).unwrap();
        assert_eq!(
            sorted_lines(&text),
            recorded(&format!("{name}.sorted")),
            "{name}"
        );
    }
    assert!(!p.path("lcov/compliance.2.lcov").exists());
}

#[test]
fn ci_verdicts_and_messages_are_0_4_3_s() {
    let cases: [(&[&str], Option<&str>); 6] = [
        (
            &["--ci"],
            Some("Specification requirements missing citation."),
        ),
        (
            &["--ci", "--require-tests", "false"],
            Some("Specification requirements missing citation."),
        ),
        (
            &["--ci", "--require-citations", "false"],
            Some("Citation missing test."),
        ),
        (&["--ci=false"], None),
        (
            &["--ci", "--require-citations=false", "--require-tests=false"],
            None,
        ),
        (&[], None),
    ];
    let upstream = crate::upstream::duvet043();
    for (args, failure) in cases {
        let p = fixture();
        let out = ours(&p, args);
        match failure {
            Some(message) => {
                assert_eq!(out.status.code(), Some(1), "{args:?}");
                assert!(stderr(&out).contains(message), "{args:?}: {}", stderr(&out));
            }
            None => assert!(out.status.success(), "{args:?}: {}", stderr(&out)),
        }
        if let Some(upstream) = &upstream {
            let theirs = run(upstream, &fixture(), args, &[]);
            assert_eq!(theirs.status.code(), out.status.code(), "{args:?}");
            if let Some(message) = failure {
                assert!(stderr(&theirs).contains(message), "{args:?}");
            }
        }
    }
}

#[test]
fn the_snapshot_is_written_then_enforced_in_ci() {
    let p = fixture();
    let config = std::fs::read_to_string(p.path(".duvet/config.toml")).unwrap();
    p.write(
        ".duvet/config.toml",
        &format!("{config}\n[report.snapshot]\nenabled = true\n"),
    );
    // With CI on and no snapshot yet: 0.4.3's failure.
    let out = run(Path::new(BIN), &p, &[], &[("CI", "true")]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains("Could not read report snapshot"),
        "{}",
        stderr(&out)
    );
    // Without CI it is written, as 0.4.3 writes it.
    let out = ours(&p, &[]);
    assert!(out.status.success(), "{}", stderr(&out));
    let snapshot = std::fs::read_to_string(p.path(".duvet/snapshot.txt")).unwrap();
    assert_eq!(snapshot, recorded("snapshot.txt"));
    // Unchanged: CI passes (CI=false and CI=0 mean off).
    assert!(
        run(Path::new(BIN), &p, &[], &[("CI", "true")])
            .status
            .success()
    );
    p.write(
        ".duvet/snapshot.txt",
        &format!("{snapshot}    TEXT[!MUST]: gone\n"),
    );
    assert!(
        run(Path::new(BIN), &p, &[], &[("CI", "0")])
            .status
            .success()
    );
    // Changed: CI fails and shows the difference; `--ci false` turns it off.
    p.write(
        ".duvet/snapshot.txt",
        &format!("{snapshot}    TEXT[!MUST]: gone\n"),
    );
    let out = run(Path::new(BIN), &p, &[], &[("CI", "true")]);
    assert_eq!(out.status.code(), Some(1));
    let err = stderr(&out);
    assert!(err.contains("-    TEXT[!MUST]: gone"), "{err}");
    assert!(
        err.contains("Report snapshot does not match with CI mode enabled."),
        "{err}"
    );
    p.write(
        ".duvet/snapshot.txt",
        &format!("{snapshot}    TEXT[!MUST]: gone\n"),
    );
    assert!(
        run(Path::new(BIN), &p, &["--ci", "false"], &[("CI", "true")])
            .status
            .success()
    );
}

#[test]
fn what_0_4_3_refuses_fails_the_report_with_its_words() {
    let cases = [
        (
            "//= specs/proto.md#nowhere\n//# A server MUST accept BREW\n",
            "missing section \"nowhere\" in specs/proto.md",
        ),
        (
            "//= specs/proto.md\n//# A server MUST accept BREW\n",
            "reference to specs/proto.md is missing a section",
        ),
        (
            "//= specs/proto.md#accept\n//# A teapot MUST refuse coffee entirely\n",
            "could not find text in section \"accept\" of specs/proto.md",
        ),
    ];
    for (source, message) in cases {
        let p = fixture();
        p.write("src/bad.rs", source);
        let out = ours(&p, &["--json", "r.json"]);
        assert_eq!(out.status.code(), Some(1), "{source}");
        assert!(stderr(&out).contains(message), "{}", stderr(&out));
        assert!(stderr(&out).contains("src/bad.rs:1"), "{}", stderr(&out));
        // Nothing is written when the report fails.
        assert!(!p.path("r.json").exists());
    }
}

#[test]
fn without_a_project_the_report_fails_and_says_why() {
    let p = Project::new();
    let out = ours(&p, &[]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains("no Duvet configuration"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn the_report_extracts_the_requirement_files_as_0_4_3_does() {
    // 0.4.3 writes the requirement files of every declared specification before it reads the
    // project: missing ones appear, stale ones are rewritten, and the report counts them.
    let p = fixture();
    let dir = ".duvet/requirements/specs/rfc5869";
    let from = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/upstream");
    std::fs::remove_file(p.path(&format!("{dir}/section-2.1.toml"))).unwrap();
    p.write(
        &format!("{dir}/section-2.2.toml"),
        "target = \"specs/rfc5869.txt#section-2.2\"\n",
    );
    let out = ours(&p, &["--json", "out/report.json"]);
    assert!(out.status.success(), "{}", stderr(&out));
    for name in ["section-2.1.toml", "section-2.2.toml"] {
        assert_eq!(
            std::fs::read_to_string(p.path(&format!("{dir}/{name}"))).unwrap(),
            std::fs::read_to_string(from.join(dir).join(name)).unwrap(),
            "{name}"
        );
    }
    assert_eq!(
        std::fs::read_to_string(p.path("out/report.json")).unwrap(),
        recorded("report.json")
    );
    // Nothing else is left behind (no temporary files).
    let mut names: Vec<String> = std::fs::read_dir(p.path(dir))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(names, ["section-2.1.toml", "section-2.2.toml"]);
}

#[test]
fn a_url_specification_that_cannot_be_downloaded_fails_with_how_to_get_it() {
    let p = fixture();
    p.write(
        ".duvet/config.toml",
        "[[source]]\npattern = \"src/**/*.rs\"\n\n[[specification]]\nsource = \"http://127.0.0.1:1/rfc/rfc9999\"\n",
    );
    let out = ours(&p, &[]);
    assert_eq!(out.status.code(), Some(1));
    let err = stderr(&out);
    assert!(
        err.contains("cannot download http://127.0.0.1:1/rfc/rfc9999 into")
            && err.contains(
                "curl -fsSL --create-dirs -o .duvet/specifications/127.0.0.1/rfc/rfc9999.txt"
            ),
        "{err}"
    );
    // Once the text is there, its requirements are extracted beside the others.
    p.write(
        ".duvet/specifications/127.0.0.1/rfc/rfc9999.txt",
        "Header\n\n1.  Scope\n\n   A peer MUST ack.\n",
    );
    let out = ours(&p, &[]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(
        std::fs::read_to_string(p.path(".duvet/requirements/127.0.0.1/rfc/rfc9999/section-1.toml"))
            .unwrap(),
        "target = \"http://127.0.0.1:1/rfc/rfc9999#section-1\"\n\n# Scope\n#\n#    A peer MUST ack.\n\n[[spec]]\nlevel = \"MUST\"\nquote = '''\nA peer MUST ack.\n'''\n\n"
    );
}

#[test]
fn ietf_sections_are_found_without_their_prefix_as_0_4_3_finds_them() {
    // `#2.2` names `section-2.2` of an IETF text (s2n-quic cites this way); the report is
    // the one the prefixed citation gives.
    let p = fixture();
    let lib = std::fs::read_to_string(p.path("src/lib.rs")).unwrap();
    p.write(
        "src/lib.rs",
        &lib.replace("specs/rfc5869.txt#section-2.2", "specs/rfc5869.txt#2.2"),
    );
    let out = ours(&p, &["--json", "out/report.json"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let json = std::fs::read_to_string(p.path("out/report.json")).unwrap();
    // 0.4.3 writes the section as cited.
    assert!(
        json.replace(
            r#""target_section":"2.2""#,
            r#""target_section":"section-2.2""#
        ) == recorded("report.json"),
        "the report differs from the one citing section-2.2"
    );
    if let Some(upstream) = crate::upstream::duvet043() {
        let out = run(&upstream, &p, &["--json", "out/theirs.json"], &[]);
        assert!(out.status.success(), "{}", stderr(&out));
        let theirs = std::fs::read_to_string(p.path("out/theirs.json")).unwrap();
        assert!(theirs == json, "the report differs from 0.4.3's");
    }
}

/// Every file below `dir`, relative to it, sorted.
fn files_below(dir: &Path) -> Vec<String> {
    let mut found = Vec::new();
    let mut dirs = vec![dir.to_path_buf()];
    while let Some(d) = dirs.pop() {
        for entry in std::fs::read_dir(&d).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() && !path.is_symlink() {
                dirs.push(path);
            } else {
                let rel = path.strip_prefix(dir).unwrap();
                found.push(rel.to_string_lossy().into_owned());
            }
        }
    }
    found.sort();
    found
}

#[test]
fn a_fresh_checkout_gets_its_requirement_files_and_a_report_that_counts_them() {
    // No requirement file yet: they are written while the report is made, and the report
    // counts every one as if it had been read from disk.
    let p = fixture();
    let from = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/upstream");
    std::fs::remove_dir_all(p.path(".duvet/requirements")).unwrap();
    let out = ours(&p, &["--json", "out/report.json"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(
        std::fs::read_to_string(p.path("out/report.json")).unwrap(),
        recorded("report.json")
    );
    let written = files_below(&p.path(".duvet/requirements"));
    assert_eq!(written, files_below(&from.join(".duvet/requirements")));
    for name in &written {
        let rel = format!(".duvet/requirements/{name}");
        assert_eq!(
            std::fs::read_to_string(p.path(&rel)).unwrap(),
            std::fs::read_to_string(from.join(&rel)).unwrap(),
            "{rel}"
        );
    }
}

#[test]
fn requirement_files_behind_a_link_are_counted_where_the_walk_finds_them() {
    // `.duvet/requirements/specs` a link to a directory beside it: the report finds the
    // requirement files by walking the requirements directory, which does not follow links,
    // so it counts them once, by their path in `real`, whether or not they were there before.
    let p = fixture();
    std::fs::rename(
        p.path(".duvet/requirements/specs"),
        p.path(".duvet/requirements/real"),
    )
    .unwrap();
    std::os::unix::fs::symlink("real", p.path(".duvet/requirements/specs")).unwrap();
    let recorded: serde_json::Value = serde_json::from_str(&recorded("report.json")).unwrap();
    for state in ["fresh", "warm"] {
        if state == "fresh" {
            std::fs::remove_dir_all(p.path(".duvet/requirements/real")).unwrap();
            std::fs::create_dir(p.path(".duvet/requirements/real")).unwrap();
        }
        let out = ours(&p, &["--json", "out/report.json"]);
        assert!(out.status.success(), "{state}: {}", stderr(&out));
        let json: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(p.path("out/report.json")).unwrap())
                .unwrap();
        let sources: Vec<&str> = json["annotations"]
            .as_array()
            .unwrap()
            .iter()
            .map(|a| a["source"].as_str().unwrap())
            .filter(|s| s.starts_with(".duvet/"))
            .collect();
        assert!(!sources.is_empty(), "{state}");
        assert!(
            sources
                .iter()
                .all(|s| s.starts_with(".duvet/requirements/real/")),
            "{state}: {sources:?}"
        );
        assert_eq!(
            json["annotations"].as_array().unwrap().len(),
            recorded["annotations"].as_array().unwrap().len(),
            "{state}"
        );
    }
}

#[test]
fn a_requirement_file_that_cannot_be_written_fails_the_report_and_writes_none() {
    let p = fixture();
    let file = ".duvet/requirements/specs/rfc5869/section-2.1.toml";
    std::fs::remove_file(p.path(file)).unwrap();
    std::fs::create_dir(p.path(file)).unwrap();
    let out = ours(&p, &["--json", "out/report.json"]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("section-2.1.toml"),
        "{}",
        stderr(&out)
    );
    assert!(!p.path("out/report.json").exists());
    // The requirement files before it are written all the same (another specification's).
    std::fs::remove_file(p.path(".duvet/requirements/specs/proto/accept.toml")).unwrap();
    let out = ours(&p, &["--json", "out/report.json"]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(
        p.path(".duvet/requirements/specs/proto/accept.toml")
            .exists()
    );
}

#[test]
fn a_second_report_of_an_unchanged_project_rewrites_nothing() {
    use std::os::unix::fs::MetadataExt;
    let p = fixture();
    let args = ["--json", "out/report.json", "--html", "out/report.html"];
    let out = ours(&p, &args);
    assert!(out.status.success(), "{}", stderr(&out));
    let files = [
        "out/report.json",
        "out/report.html",
        ".duvet/requirements/specs/rfc5869/section-2.1.toml",
    ];
    // A file replaced is a new inode (written through a temporary file and a rename).
    let stamps = || {
        files.map(|f| {
            let meta = std::fs::metadata(p.path(f)).unwrap();
            (meta.ino(), meta.mtime(), meta.mtime_nsec())
        })
    };
    let before = stamps();
    std::thread::sleep(std::time::Duration::from_millis(20));
    let out = ours(&p, &args);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stamps(), before);
    // A report file that no longer holds the report is written again.
    p.write("out/report.json", "{}");
    p.write("out/report.html", "");
    let out = ours(&p, &args);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(
        std::fs::read_to_string(p.path("out/report.json")).unwrap(),
        recorded("report.json")
    );
    assert!(
        std::fs::read_to_string(p.path("out/report.html"))
            .unwrap()
            .starts_with("<!DOCTYPE html>"),
        "the page is written again"
    );
}

#[test]
fn a_requirement_file_that_is_a_link_is_left_out_as_the_walk_leaves_it() {
    // A link among the requirement files (to one beside it) is not a file the walk of the
    // requirements directory counts, whether or not the report writes its files meanwhile.
    let p = fixture();
    let dir = ".duvet/requirements/specs/rfc5869";
    std::fs::remove_file(p.path(&format!("{dir}/section-2.2.toml"))).unwrap();
    std::os::unix::fs::symlink(
        "section-2.1.toml",
        p.path(&format!("{dir}/section-2.2.toml")),
    )
    .unwrap();
    let out = ours(&p, &["--json", "out/report.json"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let json = std::fs::read_to_string(p.path("out/report.json")).unwrap();
    assert!(
        !json.contains(&format!("\"source\":\"{dir}/section-2.2.toml\"")),
        "the link is counted"
    );
    assert!(p.path(&format!("{dir}/section-2.2.toml")).is_symlink());
}

#[test]
fn a_pattern_that_would_see_the_files_being_written_reads_them_written() {
    // A requirement pattern that matches any file of the requirements directory would see
    // the temporary files of a write in progress: the files are written first.
    let p = fixture();
    let config = std::fs::read_to_string(p.path(".duvet/config.toml")).unwrap();
    p.write(
        ".duvet/config.toml",
        &format!("{config}\n[[requirement]]\npattern = \".duvet/requirements/**\"\n"),
    );
    let mut reports = Vec::new();
    for _ in 0..5 {
        std::fs::remove_dir_all(p.path(".duvet/requirements")).unwrap();
        let out = ours(&p, &["--json", "out/report.json"]);
        assert!(out.status.success(), "{}", stderr(&out));
        reports.push(std::fs::read_to_string(p.path("out/report.json")).unwrap());
    }
    assert!(!reports[0].contains(".tmp"), "a temporary file was read");
    assert!(reports.iter().all(|r| *r == reports[0]));
    assert_eq!(reports[0], recorded("report.json"));
}

#[test]
fn each_specification_s_requirement_files_are_written_when_another_s_fail() {
    // One file of each specification cannot be written (a directory stands there): both are
    // named, in the specifications' order, and the other files of each are written.
    let p = fixture();
    let blocked = [
        ".duvet/requirements/specs/proto/accept.toml",
        ".duvet/requirements/specs/rfc5869/section-2.2.toml",
    ];
    for file in blocked {
        std::fs::remove_file(p.path(file)).unwrap();
        std::fs::create_dir(p.path(file)).unwrap();
    }
    std::fs::remove_file(p.path(".duvet/requirements/specs/rfc5869/section-2.1.toml")).unwrap();
    let out = ours(&p, &["--json", "out/report.json"]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let err = stderr(&out);
    let (first, second) = (err.find("accept.toml"), err.find("section-2.2.toml"));
    assert!(
        first.is_some() && second.is_some() && first < second,
        "{err}"
    );
    assert!(
        p.path(".duvet/requirements/specs/rfc5869/section-2.1.toml")
            .is_file()
    );
    assert!(!p.path("out/report.json").exists());
}

#[test]
fn the_warnings_are_printed_when_the_coverage_cannot_be_read() {
    let p = fixture();
    let out = ours(
        &p,
        &[
            "--json",
            "out/report.json",
            "--coverage-report",
            "missing.info",
        ],
    );
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(
        err.contains("src/lib.rs:39: quote lines without a target line"),
        "{err}"
    );
    assert!(err.contains("error:"), "{err}");
    assert!(!p.path("out/report.json").exists());
}
