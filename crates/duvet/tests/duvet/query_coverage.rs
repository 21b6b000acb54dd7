//! `duvet query --check coverage|executed-coverage` against duvet 0.4.3: its verdicts, words,
//! drawings and exit codes, recorded (tests/fixtures/upstream-0.4.3/query-coverage-*.txt, its
//! results as [`results`] takes them from its standard error, the "Coverage model:" lines
//! included) and live where it is installed ([`duvet043`]); `DUVET_QUERY_RECORD=1` with 0.4.3
//! installed records them again.
//!
//! * The Java fixture (tests/fixtures/java-coverage) with the JaCoCo report scripts/test makes
//!   (`DUVET_JACOCO_XML`; without it those tests say so and pass, unless
//!   `DUVET_REQUIRE_COVERAGE_TOOLS` is set), given as an absolute path: no report path is
//!   printed, so nothing needs normalizing.
//! * A small Rust project with hand-written LCOV reports, run with `-f lcov`. 0.4.3 cannot
//!   read LCOV, so what it says is what it says of the same data as JaCoCo XML ([`jacoco`]:
//!   each LCOV file a `<sourcefile>` of the `<package>` named by its directory, each line
//!   run or missed as an instruction): the same files are matched (by the same suffix rule),
//!   the same lines hit or missed, so its output is the verdict its rules give the LCOV
//!   reports. Those are recorded too.
//! * The Rust fixture tests/fixtures/rust-coverage measured by `cargo tarpaulin` (as
//!   tests/duvet/coverage.rs measures it, here with `--include-tests` too, so that the tests'
//!   own lines are in the report): the verdicts asserted from 0.4.3's rules, and compared
//!   with 0.4.3 on the report as XML where it is installed.
#![allow(clippy::print_stderr)] // the notes when a tool is absent

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use crate::query::{query, results};
use crate::report::{recorded, stderr};
use crate::support::{BIN, Project};
use crate::upstream::duvet043;

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name)
}

/// The JaCoCo report of the Java fixture, or `None` (with a note) when these tests run
/// without it.
fn java_report() -> Option<String> {
    match std::env::var("DUVET_JACOCO_XML")
        .ok()
        .filter(|v| !v.is_empty())
    {
        Some(path) => Some(path),
        None if std::env::var_os("DUVET_REQUIRE_COVERAGE_TOOLS").is_some() => {
            panic!("DUVET_JACOCO_XML is not set, and DUVET_REQUIRE_COVERAGE_TOOLS requires it")
        }
        None => {
            eprintln!(
                "DUVET_JACOCO_XML is not set: the Java coverage query tests are skipped \
                 (scripts/test makes the report with tests/fixtures/java-coverage/make-report.sh)"
            );
            None
        }
    }
}

/// A recorded case: `duvet query ARGS` and its exit code. Arguments in braces stand for what
/// differs between this duvet's run and 0.4.3's: `{R}` or `{R}name` a report, `{F}` its
/// format.
struct Case {
    /// tests/fixtures/upstream-0.4.3/query-coverage-NAME.txt
    name: &'static str,
    args: &'static [&'static str],
    code: i32,
}

/// An argument in braces, replaced.
type Placeholders<'a> = &'a dyn Fn(&str) -> Option<String>;

/// Run `cases`, each in a fresh project made by `project`, with `ours` replacing the
/// placeholders of this duvet's run and `theirs` those of 0.4.3's; compare this duvet's output
/// with 0.4.3's recorded one and, where 0.4.3 is installed, 0.4.3's with its recording.
fn compare(
    cases: &[Case],
    project: &dyn Fn() -> Project,
    ours: Placeholders<'_>,
    theirs: Placeholders<'_>,
) {
    let live = duvet043();
    let record = live.is_some() && std::env::var_os("DUVET_QUERY_RECORD").is_some();
    let args = |case: &Case, with: Placeholders<'_>| -> Vec<String> {
        case.args
            .iter()
            .map(|a| with(a).unwrap_or_else(|| a.to_string()))
            .collect()
    };
    // 0.4.3 first, so that recording records every case.
    if let Some(bin) = &live {
        for case in cases {
            let file = format!("query-coverage-{}.txt", case.name);
            let args = args(case, theirs);
            let args: Vec<&str> = args.iter().map(String::as_str).collect();
            let out = query(bin, &project(), &args);
            let text = results(&stderr(&out));
            assert_eq!(out.status.code(), Some(case.code), "0.4.3, {}", case.name);
            if record {
                std::fs::write(fixture("upstream-0.4.3").join(&file), &text).unwrap();
            }
            assert_eq!(text, recorded(&file), "0.4.3 now prints, {}", case.name);
        }
    }
    for case in cases {
        let file = format!("query-coverage-{}.txt", case.name);
        let args = args(case, ours);
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let out = query(Path::new(BIN), &project(), &args);
        assert_eq!(
            stderr(&out),
            recorded(&file),
            "duvet query {}",
            args.join(" ")
        );
        assert_eq!(out.status.code(), Some(case.code), "{}", case.name);
        assert!(out.stdout.is_empty(), "{}", case.name);
    }
}

const JAVA: &[Case] = &[
    Case {
        name: "java",
        args: &["-c", "coverage", "-r", "{R}", "-f", "jacoco-xml"],
        code: 1,
    },
    Case {
        name: "java-verbose",
        args: &["-c", "coverage", "-v", "-r", "{R}", "-f", "jacoco-xml"],
        code: 1,
    },
    Case {
        name: "java-executed",
        args: &[
            "--check",
            "executed-coverage",
            "-r",
            "{R}",
            "-f",
            "jacoco-xml",
        ],
        code: 1,
    },
    Case {
        name: "java-executed-verbose",
        args: &[
            "-c",
            "executed-coverage",
            "--verbose",
            "--coverage-report",
            "{R}",
            "--coverage-format",
            "jacoco-xml",
        ],
        code: 1,
    },
    // -s and -q choose the tests; what covers them is never filtered.
    Case {
        name: "java-section",
        args: &[
            "-c",
            "coverage",
            "-s",
            "specs/cache.md#kinds",
            "-r",
            "{R}",
            "-f",
            "jacoco-xml",
        ],
        code: 1,
    },
    Case {
        name: "java-quote",
        args: &[
            "-c",
            "coverage",
            "-v",
            "-q",
            "codec",
            "-r",
            "{R}",
            "-f",
            "jacoco-xml",
        ],
        code: 1,
    },
    Case {
        name: "java-passing",
        args: &[
            "-c",
            "coverage",
            "-v",
            "-q",
            "replace an older",
            "-r",
            "{R}",
            "-f",
            "jacoco-xml",
        ],
        code: 0,
    },
    // One report named twice is read twice (two reports checked, each file's issues twice),
    // and each coverage check says what it says of the models before the results.
    Case {
        name: "java-twice",
        args: &[
            "-c",
            "test,coverage,executed-coverage",
            "-r",
            "{R}",
            "-r",
            "{R}",
            "-f",
            "jacoco-xml",
        ],
        code: 1,
    },
];

#[test]
fn the_java_fixture_s_coverage_is_0_4_3_s_byte_for_byte() {
    let Some(xml) = java_report() else { return };
    let project = || {
        let p = Project::new();
        p.copy_from(&fixture("java-coverage"));
        p
    };
    let report = |a: &str| (a == "{R}").then(|| xml.clone());
    compare(JAVA, &project, &report, &report);
}

/// A small project: two implementations and three tests of a Markdown specification, and a
/// source file with no annotation (which report entries are matched to too).
fn small() -> Project {
    let p = Project::new();
    p.write(
        ".duvet/config.toml",
        "'$schema' = \"https://awslabs.github.io/duvet/config/v0.4.0.json\"\n\n[[source]]\npattern = \"src/**/*.rs\"\n\n[[source]]\npattern = \"tests/**/*.rs\"\n\
         type = \"test\"\n\n[[specification]]\nsource = \"specs/s.md\"\n\n[report.html]\n\
         enabled = false\n",
    );
    p.write(
        "specs/s.md",
        "# S\n\n## A\n\nThe thing MUST run.\n\nThe other thing MUST run too.\n\n## B\n\n\
         A third thing MAY happen.\n",
    );
    p.write(
        "src/lib.rs",
        "pub fn run() {\n    //= specs/s.md#a\n    //# The thing MUST run.\n    step();\n}\n\n\
         pub fn other() {\n    //= specs/s.md#a\n    //# The other thing MUST run too.\n    \
         step();\n}\n\nfn step() {}\n",
    );
    p.write(
        "tests/t.rs",
        "#[test]\nfn runs() {\n    //= specs/s.md#a\n    //= type=test\n    //# The thing MUST \
         run.\n    super::run();\n}\n\n#[test]\nfn others() {\n    //= specs/s.md#a\n    \
         //= type=test\n    //# The other thing MUST run too.\n    super::other();\n}\n\n\
         #[test]\nfn third() {\n    //= specs/s.md#b\n    //= type=test\n    //# A third thing \
         MAY happen.\n    happen();\n}\n",
    );
    p.write("src/util/mod.rs", "pub fn helper() {}\n");
    for (name, lcov) in SMALL_REPORTS {
        p.write(&format!("coverage/{name}.info"), lcov);
        p.write(&format!("coverage/{name}.xml"), &jacoco(lcov));
    }
    p
}

/// Hand-written reports of [`small`]: in `a` the tests `runs` and `others` ran and only the
/// first implementation; in `b` no test ran and only the second implementation; in `c` the
/// line after the test `runs` is not listed (unknown) and nothing else ran but the first
/// implementation.
const SMALL_REPORTS: [(&str, &str); 3] = [
    (
        "a",
        "TN:\nSF:src/lib.rs\nDA:4,3\nDA:10,0\nend_of_record\nSF:tests/t.rs\nDA:6,1\nDA:14,1\n\
         DA:22,0\nend_of_record\n",
    ),
    (
        "b",
        "SF:src/lib.rs\nDA:4,0\nDA:10,2\nend_of_record\nSF:tests/t.rs\nDA:6,0\nDA:14,0\n\
         DA:22,0\nend_of_record\n",
    ),
    (
        "c",
        "SF:src/lib.rs\nDA:4,1\nend_of_record\nSF:tests/t.rs\nDA:14,0\nDA:22,0\n\
         end_of_record\n",
    ),
];

/// An LCOV tracefile as JaCoCo XML, for 0.4.3: each file a `<sourcefile>` in the `<package>`
/// of its directory (so `package/name` is the LCOV path, less a leading `/`), each line with
/// one instruction, covered when it ran.
fn jacoco(lcov: &str) -> String {
    let mut xml = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?><report name=\"t\">");
    let mut open = false;
    for line in lcov.lines() {
        if let Some(path) = line.strip_prefix("SF:") {
            let (dir, name) = path.rsplit_once('/').unwrap_or(("", path));
            xml.push_str(&format!(
                "<package name=\"{dir}\"><sourcefile name=\"{name}\">"
            ));
            open = true;
        } else if let Some(da) = line.strip_prefix("DA:") {
            let mut fields = da.split(',');
            let nr = fields.next().unwrap();
            let ran = fields.next().unwrap().trim() != "0";
            let (mi, ci) = if ran { (0, 1) } else { (1, 0) };
            xml.push_str(&format!(
                "<line nr=\"{nr}\" mi=\"{mi}\" ci=\"{ci}\" mb=\"0\" cb=\"0\"/>"
            ));
        } else if line == "end_of_record" && open {
            xml.push_str("</sourcefile></package>");
            open = false;
        }
    }
    xml.push_str("</report>");
    xml
}

const SMALL: &[Case] = &[
    // A pair is discharged only by a report where both ran: `others` ran in a, its
    // implementation only in b. `third` has no implementation.
    Case {
        name: "lcov-witnesses",
        args: &[
            "-c", "coverage", "-v", "-r", "{R}a", "-r", "{R}b", "-f", "{F}",
        ],
        code: 1,
    },
    // No test ran in b: each fails as not executed...
    Case {
        name: "lcov-not-run",
        args: &["-c", "coverage", "-r", "{R}b", "-f", "{F}"],
        code: 1,
    },
    // ...and executed-coverage passes over them, and over the test without implementation.
    Case {
        name: "lcov-executed-not-run",
        args: &["-c", "executed-coverage", "-v", "-r", "{R}b", "-f", "{F}"],
        code: 0,
    },
    // An unknown test is not passed over: the line it stands on is shown.
    Case {
        name: "lcov-unknown",
        args: &["-c", "executed-coverage", "-r", "{R}c", "-f", "{F}"],
        code: 1,
    },
    // The section filter chooses the tests.
    Case {
        name: "lcov-section",
        args: &[
            "-c",
            "coverage",
            "-v",
            "-s",
            "specs/s.md#a",
            "-q",
            "The thing",
            "-r",
            "{R}a",
            "-f",
            "{F}",
        ],
        code: 0,
    },
];

/// `{R}name` as `coverage/name.EXT`, `{F}` as `format`.
fn small_reports(ext: &'static str, format: &'static str) -> impl Fn(&str) -> Option<String> {
    move |a: &str| {
        if a == "{F}" {
            Some(format.to_string())
        } else {
            a.strip_prefix("{R}")
                .map(|name| format!("coverage/{name}.{ext}"))
        }
    }
}

#[test]
fn lcov_reports_give_the_verdicts_0_4_3_gives_the_same_data() {
    compare(
        SMALL,
        &small,
        &small_reports("info", "lcov"),
        &small_reports("xml", "jacoco-xml"),
    );
}

/// The summary of a coverage check in `output` (the first when there are several): reports,
/// executed tests, executed implementations, successful, failed, without implementation.
fn counts(output: &str) -> Vec<[usize; 6]> {
    let mut all = Vec::new();
    let mut current = Vec::new();
    for line in output.lines() {
        let line = line.trim();
        for name in [
            "Coverage reports checked: ",
            "Executed tests: ",
            "Executed implementations: ",
            "Successful correlations: ",
            "Failed correlations: ",
            "Tests with no implementation: ",
        ] {
            if let Some(n) = line.strip_prefix(name) {
                current.push(n.parse::<usize>().unwrap());
            }
        }
        if current.len() == 6 {
            all.push([
                current[0], current[1], current[2], current[3], current[4], current[5],
            ]);
            current.clear();
        }
    }
    all
}

/// Each annotation an output marks, with its label: `file:line label`.
pub(crate) fn labels(output: &str) -> Vec<String> {
    let mut at = String::new();
    let mut found = Vec::new();
    for line in output.lines() {
        if let Some(i) = line.find("╭─[") {
            let place = &line[i + "╭─[".len()..line.rfind(']').unwrap()];
            at = place.rsplit_once(':').unwrap().0.to_string();
        } else if let Some((_, label)) = line
            .split_once("╰──── ")
            .or_else(|| line.split_once("╰── "))
        {
            found.push(format!("{at} {label}"));
        }
    }
    found
}

#[test]
fn the_small_project_s_verdicts_are_those_of_0_4_3_s_rules() {
    // Reasoned from 0.4.3's rules (engine.rs), independently of its recorded output.
    let p = small();
    let run = |args: &[&str]| {
        let out = query(Path::new(BIN), &p, args);
        (out.status.code(), stderr(&out))
    };
    // Report a: `runs` (t.rs:3) and `others` (t.rs:11) ran; `run`'s implementation
    // (lib.rs:2) ran, `other`'s (lib.rs:8) did not; report b: no test ran, lib.rs:8 did. The
    // pair (t.rs:3, lib.rs:2) ran together in a; the pair (t.rs:11, lib.rs:8) has one witness
    // (a), where only the test ran: it fails, though lib.rs:8 ran in b (so it counts among
    // the executed implementations). `third` (t.rs:19) has no implementation.
    let (code, text) = run(&[
        "-c",
        "coverage",
        "-r",
        "coverage/a.info",
        "-r",
        "coverage/b.info",
        "-f",
        "lcov",
    ]);
    assert_eq!(code, Some(1), "{text}");
    assert_eq!(counts(&text), [[2, 2, 2, 1, 1, 1]], "{text}");
    assert_eq!(
        labels(&text),
        [
            "tests/t.rs:19 Test annotation",
            "tests/t.rs:11 Executed test",
            "src/lib.rs:8 Not executed implementation",
        ]
    );
    // Each report alone.
    let (_, text) = run(&["-c", "coverage", "-r", "coverage/a.info", "-f", "lcov"]);
    assert_eq!(counts(&text), [[1, 2, 1, 1, 1, 1]], "{text}");
    let (code, text) = run(&[
        "-c",
        "executed-coverage",
        "-r",
        "coverage/b.info",
        "-f",
        "lcov",
    ]);
    // No test ran in b: executed-coverage looks at none of them, not even `third`.
    assert_eq!(
        (code, counts(&text)),
        (Some(0), vec![[1, 0, 1, 0, 0, 0]]),
        "{text}"
    );
    // The same as a glob, and a file named twice is two reports.
    let (_, text) = run(&[
        "-c",
        "coverage",
        "-r",
        "coverage/[ab].info",
        "-r",
        "coverage/b.info",
        "-f",
        "lcov",
    ]);
    assert_eq!(counts(&text), [[3, 2, 2, 1, 1, 1]], "{text}");
    // A file no report names is not executed: with no reports, every test failed as such.
    let (code, text) = run(&[
        "-c",
        "coverage,executed-coverage",
        "-r",
        "none/*.info",
        "-f",
        "lcov",
    ]);
    assert_eq!(code, Some(1));
    assert_eq!(
        counts(&text),
        [[0, 0, 0, 0, 2, 1], [0, 0, 0, 0, 0, 0]],
        "{text}"
    );
    assert!(text.starts_with(
        "warning: no coverage report matches 'none/*.info': read as no report, as duvet 0.4.3 \
         reads it"
    ));
    assert!(text.contains("tests/t.rs:3:9]"), "{text}");
    // JaCoCo XML of the same data says the same.
    let (_, xml) = run(&[
        "-c",
        "coverage",
        "-r",
        "coverage/a.xml",
        "-r",
        "coverage/b.xml",
        "-f",
        "jacoco-xml",
    ]);
    let (_, info) = run(&[
        "-c",
        "coverage",
        "-r",
        "coverage/a.info",
        "-r",
        "coverage/b.info",
        "-f",
        "lcov",
    ]);
    assert_eq!(xml, info);
    // A JaCoCo report cut after its last package is read as 0.4.3 reads it (what precedes);
    // one cut inside a package is an error (0.4.3 loops forever on it).
    let a = jacoco(SMALL_REPORTS[0].1);
    let cut = a.strip_suffix("</report>").unwrap();
    p.write("coverage/cut.xml", cut);
    p.write(
        "coverage/inside.xml",
        &cut[..cut.len() - "</package>".len()],
    );
    let args = |report| ["-c", "coverage", "-r", report, "-f", "jacoco-xml"];
    let (code, whole) = run(&args("coverage/a.xml"));
    assert_eq!(
        (code, run(&args("coverage/cut.xml")).1),
        (Some(1), whole.clone())
    );
    let (code, text) = run(&args("coverage/inside.xml"));
    assert_eq!(code, Some(1));
    assert_eq!(
        text,
        "error: coverage/inside.xml: the XML ends before its elements close (a truncated \
         report?)\n"
    );
    if let Some(bin) = duvet043() {
        let q = small();
        q.write("coverage/cut.xml", cut);
        let out = query(&bin, &q, &args("coverage/cut.xml"));
        assert_eq!(results(&stderr(&out)), whole);
    }
}

#[test]
fn reports_that_cannot_be_read_or_matched_stop_the_query_in_one_line() {
    let p = small();
    // Every source file is matched to the report's entries, annotated or not: `mod.rs` names
    // both src/util/mod.rs and a second one.
    p.write("src/other/mod.rs", "pub fn other() {}\n");
    p.write("coverage/mod.info", "SF:mod.rs\nDA:1,1\nend_of_record\n");
    p.write(
        "coverage/mod.xml",
        &jacoco("SF:mod.rs\nDA:1,1\nend_of_record\n"),
    );
    let two = "SF:src/lib.rs\nDA:4,1\nend_of_record\nSF:lib.rs\nDA:4,1\nend_of_record\n";
    p.write("coverage/two.info", two);
    p.write("coverage/two.xml", &jacoco(two));
    p.write(
        "coverage/bad.info",
        "SF:src/lib.rs\nDA:four,1\nend_of_record\n",
    );
    p.write(
        "coverage/bad.xml",
        "<report><package name=\"src\"><sourcefile name=\"lib.rs\">\
         <line nr=\"4\" mi=\"0\" ci=\"1\" mb=\"0\"/></sourcefile></package></report>",
    );
    p.write("coverage/dir.info/x", "");
    let cases: [(&str, &str, &str, &str); 6] = [
        (
            "coverage/mod.info",
            "coverage/mod.xml",
            "error: coverage/mod.info: coverage report entry 'mod.rs' is ambiguous: it \
             matches multiple source files (src/other/mod.rs, src/util/mod.rs). duvet cannot \
             tell which file the report refers to.\n",
            "coverage report entry 'mod.rs' is ambiguous: it matches multiple source files \
             (src/other/mod.rs, src/util/mod.rs). duvet cannot tell which file the report \
             refers to.",
        ),
        (
            "coverage/two.info",
            "coverage/two.xml",
            "error: coverage/two.info: coverage is ambiguous for src/lib.rs: its path matches \
             multiple report entries (lib.rs, src/lib.rs). duvet cannot tell which entry \
             refers to this file.\n",
            "coverage is ambiguous for src/lib.rs: its path matches multiple report entries \
             (lib.rs, src/lib.rs). duvet cannot tell which entry refers to this file.",
        ),
        (
            "coverage/bad.info",
            "coverage/bad.xml",
            "error: coverage/bad.info: line 2: the line number is not a number: DA:four,1\n",
            "Coverage error: Invalid coverage data: Missing cb attribute",
        ),
        (
            "coverage/dir.info",
            "coverage/dir.info",
            "error: coverage/dir.info: Is a directory (os error 21)\n",
            "Is a directory (os error 21)",
        ),
        (
            "coverage/a**.info",
            "coverage/a**.info",
            "error: --coverage-report coverage/a**.info: Pattern syntax error near position \
             9: recursive wildcards must form a single path component\n",
            "Pattern syntax error near position 9: recursive wildcards must form a single \
             path component",
        ),
        (
            "coverage/[a.info",
            "coverage/[a.info",
            "error: --coverage-report coverage/[a.info: Pattern syntax error near position 9: \
             invalid range pattern\n",
            "Pattern syntax error near position 9: invalid range pattern",
        ),
    ];
    let words = |text: &str| {
        text.replace(['×', '│', '╰', '─', '▶'], " ")
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ")
    };
    for (ours, theirs, said, upstream) in cases {
        let format = if ours.ends_with(".xml") {
            "jacoco-xml"
        } else {
            "lcov"
        };
        let out = query(
            Path::new(BIN),
            &p,
            &["-c", "test,coverage", "-r", ours, "-f", format],
        );
        assert_eq!(out.status.code(), Some(1), "{ours}");
        assert_eq!(stderr(&out), said, "{ours}");
        if let Some(bin) = duvet043() {
            let q = small();
            q.write("src/other/mod.rs", "pub fn other() {}\n");
            for file in ["mod.xml", "two.xml", "bad.xml", "dir.info/x"] {
                q.write(
                    &format!("coverage/{file}"),
                    &std::fs::read_to_string(p.path(&format!("coverage/{file}"))).unwrap(),
                );
            }
            let out = query(
                &bin,
                &q,
                &["-c", "test,coverage", "-r", theirs, "-f", "jacoco-xml"],
            );
            assert_eq!(out.status.code(), Some(1), "0.4.3, {theirs}");
            assert!(
                words(&stderr(&out)).contains(&words(upstream)),
                "0.4.3, {theirs}: {}",
                stderr(&out)
            );
        }
    }
    // 0.4.3 reads no LCOV.
    if let Some(bin) = duvet043() {
        let out = query(
            &bin,
            &p,
            &["-c", "coverage", "-r", "coverage/a.info", "-f", "lcov"],
        );
        assert_eq!(out.status.code(), Some(2));
    }
}

/// The Rust fixture measured by `cargo tarpaulin --include-tests` (once per test process, in
/// a copy kept for the run), or `None` (with a note) without tarpaulin.
fn measured() -> Option<&'static Path> {
    static DIR: OnceLock<Option<PathBuf>> = OnceLock::new();
    DIR.get_or_init(|| crate::support::tarpaulin_measured(&["--include-tests"]))
        .as_deref()
}

/// A copy of the measured fixture ([`crate::support::measured_copy`]), with the report as
/// JaCoCo XML too (`coverage/lcov.xml`, paths relative) for 0.4.3.
fn measured_copy(dir: &Path) -> Project {
    let p = crate::support::measured_copy(dir);
    let lcov = std::fs::read_to_string(p.path("coverage/lcov.info")).unwrap();
    let prefix = format!("SF:{}/", p.root().display());
    p.write("coverage/lcov.xml", &jacoco(&lcov.replace(&prefix, "SF:")));
    p
}

#[test]
fn a_tarpaulin_report_gives_0_4_3_s_verdicts() {
    let Some(dir) = measured() else { return };
    // Reasoned from 0.4.3's rules: the one test (lib.rs:58) ran, and the implementation of
    // its quote (lib.rs:27) ran with it; the implementations that ran are those of
    // lib.rs:14, 19, 24 and 27 (their next lines ran; those of 33 and 40 did not).
    let plain = measured_copy(dir);
    let out = query(
        Path::new(BIN),
        &plain,
        &[
            "-c",
            "coverage",
            "-v",
            "-r",
            "coverage/lcov.info",
            "-f",
            "lcov",
        ],
    );
    let text = stderr(&out);
    assert_eq!(out.status.code(), Some(0), "{text}");
    assert_eq!(counts(&text), [[1, 1, 4, 1, 0, 0]], "{text}");
    assert!(
        text.starts_with(
            "    Coverage model: 0 file(s) language-aware (verified), 1 file(s) degraded — no \
             classifier (verified)\n              degraded (no classifier, verified): \
             src/lib.rs\n"
        ),
        "{text}"
    );
    let executed: Vec<String> = labels(&text)
        .into_iter()
        .filter(|l| l.ends_with(" Executed implementation"))
        .collect();
    assert_eq!(
        executed,
        [27, 14, 19, 24, 27].map(|n| format!("src/lib.rs:{n} Executed implementation"))
    );
    // A test in a file no report covers did not run: coverage fails it, executed-coverage
    // passes over it.
    let more = || {
        let p = measured_copy(dir);
        p.write(
            "src/extra.rs",
            "#[test]\nfn silent() {\n    //= specs/ping.md#shutdown\n    //= type=test\n    \
             //# A server MUST stop answering once it is shut down.\n    \
             assert!(true);\n}\n",
        );
        p
    };
    let args = [
        "-c",
        "coverage,executed-coverage",
        "-r",
        "coverage/lcov.info",
        "-f",
        "lcov",
    ];
    let out = query(Path::new(BIN), &more(), &args);
    let ours = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{ours}");
    // coverage: lib.rs:58 ran with its implementation, extra.rs:3 did not run;
    // executed-coverage: only lib.rs:58.
    assert_eq!(
        counts(&ours),
        [[1, 1, 4, 1, 1, 0], [1, 1, 4, 1, 0, 0]],
        "{ours}"
    );
    assert_eq!(
        labels(&ours),
        ["src/extra.rs:3 Not executed test"],
        "{ours}"
    );
    // 0.4.3 says the same of the report as JaCoCo XML.
    let Some(bin) = duvet043() else { return };
    let plain = || measured_copy(dir);
    let cases: [(&dyn Fn() -> Project, &[&str]); 2] = [
        (&plain, &["-c", "coverage", "-v"]),
        (&more, &["-c", "coverage,executed-coverage"]),
    ];
    for (project, args) in cases {
        let theirs = [args, &["-r", "coverage/lcov.xml", "-f", "jacoco-xml"]].concat();
        let theirs = query(&bin, &project(), &theirs);
        let ours = [args, &["-r", "coverage/lcov.info", "-f", "lcov"]].concat();
        let ours = query(Path::new(BIN), &project(), &ours);
        assert_eq!(stderr(&ours), results(&stderr(&theirs)), "{args:?}");
        assert_eq!(ours.status.code(), theirs.status.code(), "{args:?}");
    }
}
