use super::*;

#[test]
fn lcov_lines_and_branches_merge_with_a_hit_winning() {
    let report = reports::lcov(
        "TN:\nSF:/p/src/lib.rs\nFN:3,f\nDA:3,1\nDA:4,0\nDA:5,0\nBRDA:5,0,0,-\nBRDA:5,0,1,2\nDA:6,0,abc\nend_of_record\nSF:/p/src/lib.rs\nDA:4,7\nend_of_record\nSF:src/other.rs\nDA:1,18446744073709551616\n",
    )
    .unwrap();
    let lib = &report.files["/p/src/lib.rs"];
    let lines: Vec<(usize, Hit)> = lib.lines().collect();
    assert_eq!(
        lines,
        [(3, Hit::Hit), (4, Hit::Hit), (5, Hit::Hit), (6, Hit::Miss)]
    );
    assert_eq!(report.files["src/other.rs"].get(1), Some(Hit::Hit));
}

#[test]
fn malformed_lcov_is_an_error_with_the_line() {
    for (text, message) in [
        ("DA:1,1\n", "line 1: a line record outside a source file"),
        ("SF:a\nDA:x,1\n", "line 2: the line number is not a number"),
        (
            "SF:a\nDA:1,lots\n",
            "line 2: the execution count is not a number",
        ),
        (
            "SF:a\nBRDA:1,0,0,?\n",
            "line 2: the branch count is not a number or -",
        ),
        ("SF:a\n<xml/>\n", "line 2: not an LCOV record"),
    ] {
        let err = reports::lcov(text).unwrap_err();
        assert!(err.starts_with(message), "{text:?}: {err}");
    }
    let long = format!("SF:a\nDA:{}\n", "9".repeat(10_000));
    assert!(reports::lcov(&long).unwrap_err().len() < 200);
}

#[test]
fn jacoco_lines_count_by_branches_when_they_have_them() {
    let xml = r#"<?xml version="1.0" encoding="UTF-8" standalone="yes"?><!DOCTYPE report PUBLIC "-//JACOCO//DTD Report 1.1//EN" "report.dtd"><report name="r"><package name="com/example"><class name="com/example/Foo"/><sourcefile name="Foo.java"><line nr="3" mi="0" ci="2" mb="0" cb="0"/><line nr="4" mi="3" ci="0" mb="0" cb="0"/><line nr="5" mi="0" ci="4" mb="2" cb="0"/><line nr="6" mi="0" ci="1" mb="1" cb="1"/><counter type="LINE" missed="1" covered="2"/></sourcefile></package><package name=""><sourcefile name="Top.java"><line nr="1" mi="0" ci="1" mb="0" cb="0"/></sourcefile></package></report>"#;
    let report = reports::jacoco(xml).unwrap();
    let foo: Vec<(usize, Hit)> = report.files["com/example/Foo.java"].lines().collect();
    assert_eq!(
        foo,
        [(3, Hit::Hit), (4, Hit::Miss), (5, Hit::Miss), (6, Hit::Hit)]
    );
    assert!(report.files.contains_key("Top.java"));
    let err = reports::jacoco(r#"<report><package name="p"><sourcefile name="A.java"><line nr="1" mi="0" ci="1" mb="0"/></sourcefile></package></report>"#).unwrap_err();
    assert!(err.contains("Missing cb attribute"), "{err}");
    let err = reports::jacoco("<report><package name=\"p\">").unwrap_err();
    assert!(err.contains("ends before its elements close"), "{err}");
    let err = reports::jacoco("<report><a></b></report>").unwrap_err();
    assert!(err.contains("not well-formed XML"), "{err}");
}

#[test]
fn an_lcov_tracefile_read_as_jacoco_is_an_error_not_an_empty_report() {
    let lcov = "TN:\nSF:src/lib.rs\nDA:1,1\nend_of_record\n";
    let err = reports::jacoco(lcov).unwrap_err();
    assert!(err.contains("not a JaCoCo XML report"), "{err}");
    assert!(reports::jacoco("<?xml version=\"1.0\"?><other/>").is_err());
    // 0.4.3's `query` reads it as a report of nothing, and so does `duvet query`.
    assert!(
        reports::jacoco_as_0_4_3_query(lcov)
            .unwrap()
            .files
            .is_empty()
    );
    assert!(
        reports::jacoco("<report name=\"x\"></report>")
            .unwrap()
            .files
            .is_empty()
    );
}

#[test]
fn a_report_path_names_a_file_when_it_ends_its_absolute_path_at_a_slash() {
    assert!(path_matches(
        "/w/p/src/com/example/Foo.java",
        "com/example/Foo.java"
    ));
    assert!(path_matches("/w/p/src/lib.rs", "/w/p/src/lib.rs"));
    assert!(!path_matches("/w/p/src/MyFoo.java", "Foo.java"));
    assert!(!path_matches("/w/p/xcom/Foo.java", "com/Foo.java"));
    assert!(!path_matches("/w/p/src/lib.rs", ""));
}

#[test]
fn ambiguous_matches_are_errors_not_guesses() {
    let root = Path::new("/w/p");
    let report = reports::lcov("SF:lib.rs\nDA:1,1\nSF:src/lib.rs\nDA:1,1\n").unwrap();
    let err = match_files(root, &[PathBuf::from("src/lib.rs")], &report).unwrap_err();
    assert!(err.contains("coverage is ambiguous for src/lib.rs: its path matches multiple report entries (lib.rs, src/lib.rs)"), "{err}");
    let report = reports::lcov("SF:lib.rs\nDA:1,1\n").unwrap();
    let files = [PathBuf::from("a/lib.rs"), PathBuf::from("b/lib.rs")];
    let err = match_files(root, &files, &report).unwrap_err();
    assert!(err.contains("coverage report entry 'lib.rs' is ambiguous: it matches multiple source files (a/lib.rs, b/lib.rs)"), "{err}");
}

#[test]
fn an_annotation_runs_when_the_first_code_line_after_it_ran() {
    let text = "//= spec#a\n//# A.\n\n//= spec#b\n//# B.\nfn f() {\n    g();\n}\n//= spec#c\n//# C.\n// a comment\nfn h() {}\n//= spec#d\n//# D.\n";
    let spans = [
        Span { start: 1, end: 2 },
        Span { start: 4, end: 5 },
        Span { start: 9, end: 10 },
        Span { start: 13, end: 14 },
    ];
    let coverage = reports::lcov("SF:x\nDA:6,1\nDA:7,0\nDA:12,0\n").unwrap();
    let model = FileModel::new(Path::new("x.rs"), text, &spans, &coverage.files["x"]);
    // Stacked annotations share the target past both.
    assert_eq!(model.status(spans[0]), ExecutionStatus::Executed);
    assert_eq!(model.status(spans[1]), ExecutionStatus::Executed);
    // A plain comment is a target without coverage data: unknown, at that line.
    assert_eq!(
        model.status(spans[2]),
        ExecutionStatus::Unknown { line: 11 }
    );
    assert_eq!(model.status(spans[3]), ExecutionStatus::Unknown { line: 0 });
    let missed = reports::lcov("SF:x\nDA:6,0\n").unwrap();
    let model = FileModel::new(Path::new("x.rs"), text, &spans, &missed.files["x"]);
    assert_eq!(model.status(spans[0]), ExecutionStatus::NotExecuted);
}

#[test]
fn statuses_fold_across_reports_executed_first_then_unknown() {
    use ExecutionStatus::*;
    assert_eq!(
        ExecutionStatus::fold([NotExecuted, Executed, Unknown { line: 3 }]),
        Executed
    );
    assert_eq!(
        ExecutionStatus::fold([NotExecuted, Unknown { line: 3 }, Structural]),
        Unknown { line: 3 }
    );
    assert_eq!(ExecutionStatus::fold([NotExecuted, Structural]), Structural);
    assert_eq!(ExecutionStatus::fold([]), NotExecuted);
}
