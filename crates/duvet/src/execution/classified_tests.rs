//! The classified model, on the cases duvet 0.4.3 documents (duvet-coverage's tests and
//! `query/checks/coverage.rs`), through [`FileModel`] as its callers reach it.

use std::path::Path;

use super::super::java::ScopeEvent;
use super::super::{
    Execution, ExecutionStatus::*, FileCoverage, FileModel, Issue, IssueKind, Span,
    defeated_messages, model_summary, reports,
};
use super::{imbalance_site, scope_tree};

/// A coverage of `hits` and `misses`.
fn coverage(hits: &[usize], misses: &[usize]) -> FileCoverage {
    let mut c = FileCoverage::default();
    for &line in hits {
        c.record(line, true);
    }
    for &line in misses {
        c.record(line, false);
    }
    c
}

/// The spans of the annotations in `text`: each `//=` line and the `//#` lines after it.
fn spans(text: &str) -> Vec<Span> {
    let mut spans: Vec<Span> = Vec::new();
    for (index, line) in text.lines().enumerate() {
        let line_no = index + 1;
        let trimmed = line.trim();
        if trimmed.starts_with("//=") {
            spans.push(Span {
                start: line_no,
                end: line_no,
            });
        } else if trimmed.starts_with("//#")
            && let Some(last) = spans.last_mut()
            && last.end + 1 == line_no
        {
            last.end = line_no;
        }
    }
    spans
}

/// The model of Java `text` and its annotations' spans.
fn model(text: &str, coverage: &FileCoverage) -> (FileModel, Vec<Span>) {
    let spans = spans(text);
    let model = FileModel::new(Path::new("src/A.java"), text, &spans, coverage);
    assert!(matches!(model, FileModel::Classified(_)), "{model:?}");
    (model, spans)
}

const METHOD: &str = "\
public class Foo {
    //= spec#a
    //# A.
    public void foo() {
        doX();
    }
}
";

#[test]
fn an_annotation_before_a_signature_runs_when_the_body_ran() {
    let (m, s) = model(METHOD, &coverage(&[5], &[]));
    assert_eq!(m.target(s[0]), Some(4));
    // The hit on line 5 reaches the signature, back through the scope's opening line.
    assert_eq!(m.status(s[0]), Executed);
    let (m, s) = model(METHOD, &coverage(&[], &[5]));
    assert_eq!(m.status(s[0]), NotExecuted);
    // A declaration whose innermost scope has no statement is structure.
    let empty = "public class Foo {\n    //= spec#a\n    public void foo() {\n    }\n}\n";
    let (m, s) = model(empty, &coverage(&[], &[]));
    assert_eq!(m.status(s[0]), Structural);
}

#[test]
fn stacked_annotations_share_the_target() {
    let text = "class Foo {\n  void m() {\n    //= spec#a\n    //# A.\n    // a note\n\n    //= spec#b\n    //# B.\n    doX();\n  }\n}\n";
    let (m, s) = model(text, &coverage(&[9], &[]));
    assert_eq!(s.len(), 2);
    assert_eq!((m.target(s[0]), m.target(s[1])), (Some(9), Some(9)));
    assert_eq!((m.status(s[0]), m.status(s[1])), (Executed, Executed));
}

#[test]
fn an_annotation_on_a_closing_brace_has_no_target_and_leaves_the_scopes_alone() {
    let text = "public class Two {\n    public void foo() {\n        //= spec#a\n        doFoo();\n    }\n    public void bar() {\n        //= spec#b\n        //= type=implementation\n    }\n}\n";
    let (m, s) = model(text, &coverage(&[4], &[]));
    assert_eq!(m.target(s[1]), None);
    assert_eq!(m.status(s[1]), Structural);
    assert_eq!(m.status(s[0]), Executed);
}

#[test]
fn compound_brace_lines_are_not_defeated() {
    let text = "public class C {\n    int m() {\n        int x;\n        try {\n            //= spec#a\n            x = 1;\n        } finally {}\n        //= spec#b\n        return x;\n    }\n}\n";
    let (m, s) = model(text, &coverage(&[6, 9], &[]));
    assert_eq!((m.status(s[0]), m.status(s[1])), (Executed, Executed));
    let (m, s) = model(text, &coverage(&[6], &[9]));
    assert_eq!(m.status(s[1]), NotExecuted);
}

#[test]
fn interface_methods_are_structural() {
    let text = "public interface IKeyring {\n    //= spec#a\n    void onEncrypt();\n}\n";
    let (m, s) = model(text, &coverage(&[], &[]));
    assert_eq!(m.target(s[0]), Some(3));
    assert_eq!(m.status(s[0]), Structural);
}

#[test]
fn lambdas_and_anonymous_classes() {
    let text = "\
class L {
    void m() {
        Runnable r = () -> {
            //= spec#a
            work();
        };
        new Thread() {
            //= spec#b
            public void run() {
                anon();
            }
        }.start();
    }
}
";
    let (m, s) = model(text, &coverage(&[3, 7, 10, 12], &[5]));
    assert_eq!(m.status(s[0]), NotExecuted);
    // The anonymous class's method line is part of the statement that creates it, so it
    // needs a hit of its own (JaCoCo gives it none): not executed, as 0.4.3 says.
    assert_eq!(m.target(s[1]), Some(9));
    assert_eq!(m.status(s[1]), NotExecuted);
    let (m, s) = model(text, &coverage(&[5, 9], &[]));
    assert_eq!((m.status(s[0]), m.status(s[1])), (Executed, Executed));
}

#[test]
fn try_and_catch() {
    let text = "\
class T {
    void m() {
        //= spec#try
        try {
            //= spec#a
            a();
        } catch (Exception e) {
            //= spec#b
            b();
        }
    }
}
";
    let (m, s) = model(text, &coverage(&[6], &[9]));
    assert_eq!(m.target(s[0]), Some(4));
    assert_eq!(
        (m.status(s[0]), m.status(s[1]), m.status(s[2])),
        (Executed, Executed, NotExecuted)
    );
}

#[test]
fn switch_labels_are_unknown_arms_are_statements() {
    let text = "\
class S {
    int m(int n) {
        switch (n) {
            //= spec#one
            case 1:
                return 1;
            default:
                //= spec#other
                return 2;
        }
    }
    String c(int n) {
        return switch (n) {
            //= spec#arm
            case 0 -> \"zero\";
            default -> \"many\";
        };
    }
}
";
    let (m, s) = model(text, &coverage(&[3, 6, 9, 13, 16], &[15]));
    assert_eq!(m.status(s[0]), Unknown { line: 5 });
    assert_eq!(m.status(s[1]), Executed);
    assert_eq!(m.status(s[2]), NotExecuted);
}

#[test]
fn labels_are_unknown_and_stop_propagation_in_their_scopes() {
    let text = "\
class N {
    //= spec#a
    void m() {
        //= spec#b
        outer:
        for (;;) {
            x();
            break outer;
        }
    }
}
";
    let (m, s) = model(text, &coverage(&[6, 7, 8], &[]));
    assert_eq!(m.status(s[1]), Unknown { line: 5 });
    // Line 7's hit is not carried back to the signature: its scopes hold a label.
    assert_eq!(m.status(s[0]), NotExecuted);
}

#[test]
fn a_report_line_outside_the_file_makes_every_annotation_unknown() {
    let (m, s) = model(METHOD, &coverage(&[5, 8], &[]));
    assert_eq!(m.status(s[0]), Unknown { line: 2 });
    let (m, s) = model(METHOD, &coverage(&[0, 5], &[]));
    assert_eq!(m.status(s[0]), Unknown { line: 2 });
    // Line 7 is the last.
    let (m, s) = model(METHOD, &coverage(&[5, 7], &[]));
    assert_eq!(m.status(s[0]), Executed);
}

#[test]
fn unparseable_java_is_defeated_loudly() {
    let text = "public class Foo {\n    //= spec#a\n    void m() {\n        int x = ;\n    }\n}\n";
    let spans = spans(text);
    let m = FileModel::new(
        Path::new("src/Foo.java"),
        text,
        &spans,
        &coverage(&[4], &[]),
    );
    let issue = Issue {
        kind: IssueKind::ParseError,
        line: 4,
    };
    assert_eq!(m.issues(), [issue]);
    assert_eq!(m.status(spans[0]), Unknown { line: 4 });
    assert_eq!(m.target(spans[0]), None);

    // Through a run over two reports: the file's issues gathered from both.
    let report =
        reports::lcov("SF:src/Foo.java\nDA:4,1\nSF:src/Ok.java\nDA:1,1\nSF:lib.rs\nDA:1,1\n")
            .unwrap();
    let files = ["src/Foo.java", "src/Ok.java", "lib.rs"].map(std::path::PathBuf::from);
    let texts = [text, "class Ok {}\n", "fn f() {}\n"];
    let spans_of = files
        .iter()
        .map(|f| (f.clone(), vec![Span { start: 1, end: 1 }]))
        .collect();
    let read = |f: &Path| {
        files
            .iter()
            .position(|g| g == f)
            .map(|i| texts[i].to_string())
    };
    let run = Execution::new(Path::new("/p"), &files, &spans_of, &report, read).unwrap();
    let again = run.clone();
    assert_eq!(
        defeated_messages(&[run.clone(), again]),
        [
            "Coverage model: src/Foo.java — the selected classifier could not produce a trustworthy classification (parse error(s) at line(s) 4, 4). The file may not be this language, or the classifier has a gap. Its annotations are reported Unknown; report the file or the classifier gap."
        ]
    );
    assert_eq!(
        model_summary(&[run]),
        [
            "Coverage model: 1 file(s) language-aware (verified), 1 file(s) degraded — no classifier (verified)",
            "  degraded (no classifier, verified): lib.rs",
        ]
    );
    let unbalanced = [
        Issue {
            kind: IssueKind::UnbalancedScopes,
            line: 9,
        },
        issue,
    ];
    assert!(
        super::super::defeated_message(Path::new("A.java"), &unbalanced)
            .contains("(parse error(s) at line(s) 4; unbalanced scope stream near line(s) 9)")
    );
}

#[test]
fn only_the_java_extension_is_classified() {
    let c = coverage(&[5], &[]);
    let s = spans(METHOD);
    for (path, classified) in [
        ("A.java", true),
        ("A.JAVA", false),
        ("A.kt", false),
        ("java", false),
    ] {
        let m = FileModel::new(Path::new(path), METHOD, &s, &c);
        assert_eq!(matches!(m, FileModel::Classified(_)), classified, "{path}");
    }
    // The degraded model reads the signature line, which JaCoCo does not list.
    let m = FileModel::new(Path::new("A.kt"), METHOD, &s, &c);
    assert_eq!(m.status(s[0]), Unknown { line: 4 });
}

fn ev(line: usize, opens: bool) -> ScopeEvent {
    ScopeEvent { line, opens }
}

#[test]
fn scope_trees_and_balance_as_0_4_3_builds_them() {
    // `} finally {}` on line 18: close, open, close.
    let events = [
        ev(6, true),
        ev(8, true),
        ev(10, true),
        ev(18, false),
        ev(18, true),
        ev(18, false),
        ev(23, false),
        ev(24, false),
    ];
    assert_eq!(imbalance_site(&events), None);
    assert_eq!(
        scope_tree(&events, 24),
        [(10, 18), (18, 18), (8, 23), (6, 24)]
    );
    // Identical extents once; no braces: the whole file; an empty file: nothing.
    let same = [ev(5, true), ev(5, true), ev(10, false), ev(10, false)];
    assert_eq!(scope_tree(&same, 12), [(5, 10)]);
    assert_eq!(scope_tree(&[], 4), [(1, 4)]);
    assert_eq!(scope_tree(&[], 0), []);
    // Unbalanced: the first close too many, else the last open.
    assert_eq!(
        imbalance_site(&[ev(1, true), ev(2, false), ev(3, false)]),
        Some(3)
    );
    assert_eq!(
        imbalance_site(&[ev(1, true), ev(2, true), ev(4, false)]),
        Some(2)
    );
}

#[test]
fn big_files_stay_linear() {
    // 20,000 methods, each hit: the model is built once, in linear time.
    let mut text = String::from("class Big {\n");
    let mut hits = Vec::new();
    for i in 0..20_000 {
        text.push_str("  //= spec#a\n  void m() {\n    x();\n  }\n");
        hits.push(2 + 4 * i + 2);
    }
    text.push_str("}\n");
    let started = std::time::Instant::now();
    let (m, s) = model(&text, &coverage(&hits, &[]));
    assert!(s.iter().all(|s| m.status(*s) == Executed));
    assert!(started.elapsed().as_secs() < 20, "{:?}", started.elapsed());
}
