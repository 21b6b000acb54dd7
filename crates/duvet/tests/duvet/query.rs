//! `duvet query` on the fixture project (tests/fixtures/upstream, and a variant with TODOs,
//! an exception and an implication) against what duvet 0.4.3 printed for it
//! (tests/fixtures/upstream-0.4.3/query-*.txt: its results as it prints them, without the
//! progress lines before them and their timings) and against 0.4.3 itself where it is
//! installed ([`crate::upstream::duvet043`]): the same text and the same exit codes. Run with
//! `DUVET_QUERY_RECORD=1` and 0.4.3 installed to record its outputs again.

use std::path::Path;
use std::process::{Command, Output};

use crate::report::{fixture, recorded, stderr};
use crate::support::{BIN, Project};
use crate::upstream::duvet043;

/// Sources added to the fixture: a requirement both implemented and to do (mixed, complete),
/// one half implemented and half to do in a requirement file (mixed, incomplete), an
/// exception (indented with tabs) and an implication that quotes part of a requirement.
const MORE: &str = "\
// The TODO's requirement, implemented too: mixed (implemented, a duplicate TODO?).
//= specs/proto.md#todo
//# The pot MUST be warmed.
fn warm_now() {}

// Half implemented, half to do: mixed (incomplete).
//= specs/proto.md#halves
//# The server SHOULD rotate
fn rotate_some() {}

\t//= specs/rfc5869.txt#section-2.2
\t//= type=exception
\t//= reason=Never empty here.
\t//# The info string MAY be empty.
\tfn info() {}

//= specs/proto.md#tested
//= type=implication
//# The client MUST send a greeting
fn greets() {}
";

const TODOS: &str = "target = \"specs/proto.md#halves\"

[[TODO]]
quote = '''
logs daily.
'''
";

fn mixed() -> Project {
    let p = fixture();
    p.write("src/more.rs", MORE);
    p.write(".duvet/todos/proto.toml", TODOS);
    p
}

/// `duvet query ARGS` of `bin` in `p`, without colors or timings.
pub(crate) fn query(bin: &Path, p: &Project, args: &[&str]) -> Output {
    Command::new(bin)
        .arg("query")
        .args(args)
        .current_dir(p.root())
        .env("NO_COLOR", "1")
        .env("DUVET_INTERNAL_CI", "1")
        .env_remove("CI")
        .output()
        .unwrap()
}

/// What 0.4.3 prints on standard error, as the results it prints: without the progress lines
/// before them (and the padding the last of them puts before the first check's verdict) and
/// the timing after. The "Coverage model:" lines the coverage checks print while they run are
/// kept: this duvet prints them too.
pub(crate) fn results(text: &str) -> String {
    let mut lines: Vec<&str> = text.split('\n').collect();
    let header = lines
        .iter()
        .rposition(|l| l.trim_start().starts_with("Matched ") && l.contains(" references"));
    if let Some(at) = header {
        lines.drain(..=at);
    }
    lines.retain(|l| {
        let l = l.trim();
        !(l.starts_with("Running ") && l.ends_with(" check..."))
            && l != "Starting duvet in query mode..."
    });
    // 0.4.3 prints the results as a progress line: the text before its first space
    // (`\nCoverage:`) right-aligned to 12 columns, which puts spaces before the line break.
    let first = lines.iter().position(|l| {
        ["Implementation: ", "Tests: ", "Coverage: ", "Duplicates: "]
            .iter()
            .any(|h| l.starts_with(h))
    });
    if let Some(at) = first.and_then(|at| at.checked_sub(1))
        && lines[at].trim().is_empty()
    {
        lines[at] = "";
    }
    if header.is_some() && lines.len() >= 2 && lines[lines.len() - 1].is_empty() {
        lines.remove(lines.len() - 2);
    }
    lines.join("\n")
}

/// Which stream a case compares.
#[derive(Clone, Copy, PartialEq)]
enum Stream {
    Out,
    Err,
}

struct Case {
    /// tests/fixtures/upstream-0.4.3/query-NAME.txt
    name: &'static str,
    project: fn() -> Project,
    args: &'static [&'static str],
    code: i32,
    stream: Stream,
}

const CASES: &[Case] = &[
    Case {
        name: "implementation",
        project: fixture,
        args: &["--check", "implementation"],
        code: 1,
        stream: Stream::Err,
    },
    Case {
        name: "test",
        project: fixture,
        args: &["--check", "test"],
        code: 1,
        stream: Stream::Err,
    },
    Case {
        name: "duplicates",
        project: fixture,
        args: &["-c", "duplicates"],
        code: 1,
        stream: Stream::Err,
    },
    // Several checks at once, in the order given, with what passes too.
    Case {
        name: "all-verbose",
        project: fixture,
        args: &["-c", "implementation,test,duplicates", "--verbose"],
        code: 1,
        stream: Stream::Err,
    },
    Case {
        name: "section",
        project: fixture,
        args: &["-c", "test", "-s", "specs/proto.md#halves"],
        code: 1,
        stream: Stream::Err,
    },
    Case {
        name: "path-and-quotes",
        project: fixture,
        args: &[
            "-c",
            "implementation",
            "--section",
            "specs/rfc5869.txt",
            "-q",
            "SALT",
            "--quote",
            "empty",
        ],
        code: 1,
        stream: Stream::Err,
    },
    // Each check passing.
    Case {
        name: "passing",
        project: fixture,
        args: &[
            "-c",
            "implementation,test,duplicates",
            "-q",
            "output length",
        ],
        code: 0,
        stream: Stream::Err,
    },
    Case {
        name: "passing-section",
        project: fixture,
        args: &[
            "-c",
            "tests,duplicates",
            "-v",
            "-s",
            "specs/rfc5869.txt#section-2.2",
        ],
        code: 0,
        stream: Stream::Err,
    },
    Case {
        name: "mixed-verbose",
        project: mixed,
        args: &["-c", "implementations", "-v"],
        code: 1,
        stream: Stream::Err,
    },
    Case {
        name: "mixed-duplicates",
        project: mixed,
        args: &["-c", "duplicates", "-v"],
        code: 1,
        stream: Stream::Err,
    },
    // Without a config: an empty project, whose checks pass.
    Case {
        name: "no-config",
        project: Project::new,
        args: &["-c", "implementation,test,duplicates"],
        code: 0,
        stream: Stream::Err,
    },
    // Without a check: the help, on standard output.
    Case {
        name: "help",
        project: fixture,
        args: &[],
        code: 0,
        stream: Stream::Out,
    },
    Case {
        name: "bad-check",
        project: fixture,
        args: &["-c", "test,bogus"],
        code: 2,
        stream: Stream::Err,
    },
    Case {
        name: "coverage-arguments",
        project: fixture,
        args: &["-c", "coverage"],
        code: 2,
        stream: Stream::Err,
    },
];

fn shown(out: &Output, stream: Stream) -> String {
    match stream {
        Stream::Out => String::from_utf8_lossy(&out.stdout).into_owned(),
        Stream::Err => stderr(out),
    }
}

#[test]
fn query_prints_what_0_4_3_prints_with_its_exit_codes() {
    let live = duvet043();
    let record = live.is_some() && std::env::var_os("DUVET_QUERY_RECORD").is_some();
    for case in CASES {
        let file = format!("query-{}.txt", case.name);
        if let Some(bin) = &live {
            let out = query(bin, &(case.project)(), case.args);
            let theirs = results(&shown(&out, case.stream));
            assert_eq!(out.status.code(), Some(case.code), "0.4.3, {}", case.name);
            if record {
                let path = Path::new(env!("CARGO_MANIFEST_DIR"))
                    .join("tests/fixtures/upstream-0.4.3")
                    .join(&file);
                std::fs::write(path, &theirs).unwrap();
            }
            assert_eq!(theirs, recorded(&file), "0.4.3 now prints, {}", case.name);
        }
        let out = query(Path::new(BIN), &(case.project)(), case.args);
        assert_eq!(
            shown(&out, case.stream),
            recorded(&file),
            "duvet query {}",
            case.args.join(" ")
        );
        assert_eq!(out.status.code(), Some(case.code), "{}", case.name);
        if case.stream == Stream::Err {
            assert!(out.stdout.is_empty(), "{}", case.name);
        }
    }
}

#[test]
fn a_project_0_4_3_cannot_read_fails_and_says_where() {
    let cases = [
        // A quote duvet's report finds within one edit, which 0.4.3's query stops at.
        (
            "//= specs/proto.md#accept\n//# A server MUST acept BREW\n",
            "src/bad.rs:1: Exactly matchable quote not found in section",
        ),
        (
            "//= specs/proto.md#nowhere\n//# A server MUST accept BREW\n",
            "src/bad.rs:1: missing section \"nowhere\" in specs/proto.md",
        ),
    ];
    for (source, message) in cases {
        for check in ["implementation", "test", "duplicates"] {
            let p = fixture();
            p.write("src/bad.rs", source);
            let out = query(Path::new(BIN), &p, &["-c", check]);
            assert_eq!(out.status.code(), Some(1), "{check}: {source}");
            assert!(stderr(&out).contains(message), "{}", stderr(&out));
            if let Some(bin) = duvet043() {
                let p = fixture();
                p.write("src/bad.rs", source);
                let theirs = query(&bin, &p, &["-c", check]);
                assert_eq!(theirs.status.code(), Some(1), "0.4.3 {check}: {source}");
            }
        }
    }
}

#[test]
fn results_are_taken_from_0_4_3_s_progress_lines() {
    let raw = "    Starting duvet in query mode...\n     Matched 3 references \n     \
               Running test annotation coverage check...\n     \nTests: ✓ PASS\n\nOverall: ✓ PASS\n \n";
    assert_eq!(results(raw), "\nTests: ✓ PASS\n\nOverall: ✓ PASS\n");
    let raw = "     Matched 3 references \n     Running test execution correlation check...\n    \
               Coverage model: 1 file(s) language-aware (verified), 0 file(s) degraded — no \
               classifier (verified)\n  \nCoverage: ✓ PASS\n\nOverall: ✓ PASS\n \n";
    assert_eq!(
        results(raw),
        "    Coverage model: 1 file(s) language-aware (verified), 0 file(s) degraded — no \
         classifier (verified)\n\nCoverage: ✓ PASS\n\nOverall: ✓ PASS\n"
    );
}
