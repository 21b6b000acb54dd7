//! The classifier, on the cases duvet 0.4.3's own tests pin (src/query/classify/java.rs).

use super::Property::*;
use super::*;

fn classify_ok(source: &str) -> Classified {
    match classify(source) {
        Outcome::Classified(c) => c,
        Outcome::ParseErrors(lines) => panic!("parse errors at {lines:?} in {source:?}"),
    }
}

fn lines(source: &str) -> Vec<Option<LineClass>> {
    classify_ok(source).lines
}

fn is(class: Option<LineClass>, props: &[Property]) -> bool {
    class == Some(LineClass::of(props))
}

#[test]
fn declarations_statements_and_braces() {
    let c = lines("public class Foo {\n    public void foo() {\n        doX();\n    }\n}");
    assert!(is(c[0], &[Declaration, ScopeOpen]));
    assert!(is(c[1], &[Declaration, ScopeOpen]));
    assert!(is(c[2], &[Statement]));
    assert!(is(c[3], &[ScopeClose]));
    assert!(is(c[4], &[ScopeClose]));

    let c = lines("public interface IKeyring {\n    void onEncrypt();\n}");
    assert!(is(c[0], &[Declaration, ScopeOpen]));
    assert!(is(c[1], &[Declaration]));
    assert!(is(c[2], &[ScopeClose]));

    // A local or field is a statement too only when a declarator has a value.
    let c = lines(
        "public class Foo {\n    private int f;\n    private static final int X = 5;\n    void bar() {\n        int x;\n        int a, b = 2;\n        int t = a ? 1 : (int) y;\n        java.util.Map<String, Integer> m;\n    }\n}",
    );
    assert!(is(c[1], &[Declaration]));
    assert!(is(c[2], &[Statement, Declaration]));
    assert!(is(c[4], &[Declaration]));
    assert!(is(c[5], &[Statement, Declaration]));
    assert!(is(c[6], &[Statement, Declaration]));
    assert!(is(c[7], &[Declaration]));

    let c = lines(
        "package com.example;\nimport java.util.List;\npublic enum Cipher {\n    AES_128(128, 12),\n    NONE;\n    @Override\n    public String toString() { return \"c\"; }\n}",
    );
    assert!(is(c[0], &[Declaration]));
    assert!(is(c[1], &[Declaration]));
    assert!(is(c[3], &[Statement, Declaration]));
    assert!(is(c[4], &[Declaration]));
    assert!(is(c[5], &[Declaration]));
    // The method starts on `@Override`, its body on the next line: no declaration there.
    assert!(is(c[6], &[Statement, ScopeOpen, ScopeClose]));
}

#[test]
fn blanks_comments_and_duvet_annotations() {
    let c = lines(
        "public class Foo {\n\n    // just a note\n    //= spec.md#section-1\n    //# MUST do X\n    void bar() {\n        doX(); // x\n    } // end bar\n    /* a\n       b */\n}",
    );
    assert!(is(c[1], &[Whitespace]));
    assert!(is(c[2], &[Comment]));
    assert!(is(c[3], &[Annotation]));
    assert!(is(c[4], &[Annotation]));
    // A trailing comment on code is dropped, the code kept.
    assert!(is(c[6], &[Statement]));
    // A brace with a trailing comment keeps its close.
    assert!(is(c[7], &[ScopeClose, Comment]));
    assert!(is(c[8], &[Comment]));
    assert!(is(c[9], &[Comment]));
}

#[test]
fn annotation_lines_inside_a_multi_line_statement_stay_pure() {
    let c = lines(
        "public class Foo {\n    void bar() {\n        Object keyring = SomeBuilder.builder()\n            //= spec.md#section-1\n            //# MUST do X\n            .keyNamespace(\"n\")\n            .build();\n    }\n}",
    );
    assert!(is(c[2], &[Statement, Declaration]));
    assert!(is(c[3], &[Annotation]));
    assert!(is(c[4], &[Annotation]));
    assert!(is(c[5], &[Statement, Declaration]));
    // A comment inside a multi-line statement is no code line.
    let c = lines(
        "public class Foo {\n    void bar() {\n        foo(1,\n            // why\n            2);\n    }\n}",
    );
    assert!(is(c[3], &[Comment]));
}

#[test]
fn modern_constructs() {
    // `static` and its brace on separate lines: the keyword line is a declaration.
    let c = lines("public class Foo {\n    static\n    {\n        setup();\n    }\n}");
    assert!(is(c[1], &[Declaration]));
    assert!(is(c[2], &[ScopeOpen]));
    assert!(is(c[4], &[ScopeClose]));
    let c = lines(
        "public class Foo {\n    record Point(int x) {\n        Point {\n            check(x);\n        }\n    }\n}",
    );
    assert!(is(c[1], &[Declaration, ScopeOpen]));
    assert!(is(c[2], &[Declaration, ScopeOpen]));
    assert!(is(c[3], &[Statement]));
    let c = lines(
        "public class Foo {\n    String c(int n) {\n        return switch (n) {\n            case 0 -> \"zero\";\n            default -> {\n                yield \"many\";\n            }\n        };\n    }\n}",
    );
    assert!(is(c[2], &[Statement, ScopeOpen]));
    assert!(is(c[3], &[Statement]));
    assert!(is(c[4], &[Statement, ScopeOpen]));
    assert!(is(c[5], &[Statement]));
    // The `return` spans the whole switch.
    assert!(is(c[6], &[Statement, ScopeClose]));
    assert!(is(c[7], &[Statement, ScopeClose]));
    // A block lambda opens a scope; an expression lambda does not.
    let c = lines(
        "public class Foo {\n    java.util.function.Function<Integer, Integer> f = x -> x * 2;\n    void bar() {\n        Runnable r = () -> {\n            work();\n        };\n    }\n}",
    );
    assert!(is(c[1], &[Statement, Declaration]));
    assert!(is(c[3], &[Statement, Declaration, ScopeOpen]));
    // The declaration spans the lambda's body.
    assert!(is(c[4], &[Statement, Declaration]));
    assert!(is(c[5], &[Statement, Declaration, ScopeClose]));
}

#[test]
fn old_style_case_labels_and_else_lines_are_unclassified() {
    let c = lines(
        "class S {\n    void m(int n) {\n        switch (n) {\n            case 1:\n                a();\n                break;\n            default:\n                b();\n        }\n        if (n > 0)\n            a();\n        else\n            b();\n        outer:\n        for (;;) { break outer; }\n    }\n}",
    );
    assert!(is(c[2], &[Statement, ScopeOpen]));
    assert_eq!(c[3], None);
    assert!(is(c[4], &[Statement]));
    assert_eq!(c[6], None);
    assert_eq!(c[11], None);
    assert!(is(c[13], &[NonLinearControl]));
}

#[test]
fn compound_brace_lines_keep_every_brace_in_order() {
    let source = "public class C {\n    int m() {\n        int x;\n        try {\n            x = 1;\n        } finally {}\n        return x;\n    }\n}";
    let c = classify_ok(source);
    assert!(is(c.lines[5], &[Declaration, ScopeOpen, ScopeClose]));
    let at_6: Vec<bool> = c
        .events
        .iter()
        .filter(|e| e.line == 6)
        .map(|e| e.opens)
        .collect();
    assert_eq!(at_6, [false, true, false]);
    for source in [
        source,
        "public class C {\n    void m() {\n        if (true) {\n            work();\n        }}\n}",
        "class C {\n    void m(boolean b) {\n        if (b) {\n            x();\n        } else {\n            y();\n        }\n    }\n}",
    ] {
        let c = classify_ok(source);
        let opens = c.events.iter().filter(|e| e.opens).count();
        assert_eq!(opens * 2, c.events.len(), "{source}");
        assert_eq!(super::super::classified::imbalance_site(&c.events), None);
    }
}

#[test]
fn syntax_errors_are_located_not_classified() {
    assert_eq!(
        classify("public class Foo {\n    void m() {\n        int x = ;\n    }\n}"),
        Outcome::ParseErrors(vec![3])
    );
    match classify("public class Foo {\n    void bar() {\n        doX();") {
        Outcome::ParseErrors(lines) => assert!(!lines.is_empty() && lines.iter().all(|l| *l >= 1)),
        other => panic!("{other:?}"),
    }
    // Not Java at all (Rust's `fn main() { let x = 1; }` would be: a method returning `fn`).
    assert!(matches!(
        classify("def f(x):\n    return x\n"),
        Outcome::ParseErrors(_)
    ));
    // Empty and blank files are Java without lines of code.
    assert_eq!(classify_ok("").lines, Vec::<Option<LineClass>>::new());
    assert!(is(classify_ok("\n  \n").lines[1], &[Whitespace]));
}

#[test]
fn hostile_input_never_panics() {
    // Nesting far deeper than any stack would take recursively.
    let depth = 20_000;
    let source = format!(
        "class C {{ void m() {{\n{}\n{}\n}} }}\n",
        "{".repeat(depth),
        "}".repeat(depth)
    );
    let c = classify_ok(&source);
    assert_eq!(c.events.len(), 2 * (depth + 2));
    // Statements nested in statements, each spanning the lines of all inside it: stamping is
    // linear in the nodes, not in the lines they span.
    let lambdas = format!(
        "class C {{ void m() {{\n{}x();\n{}}} }}\n",
        "a(() -> {\n".repeat(depth),
        "});\n".repeat(depth)
    );
    let started = std::time::Instant::now();
    let c = classify_ok(&lambdas);
    assert!(is(c.lines[depth + 1], &[Statement]));
    assert!(started.elapsed().as_secs() < 20, "{:?}", started.elapsed());
    let parens = format!(
        "class C {{ int x = {}1{}; }}",
        "(".repeat(depth),
        ")".repeat(depth)
    );
    let _ = classify(&parens);
    for text in [
        "\u{0}\u{1}{{{",
        "}}}}",
        "class \u{feff}C {}",
        "/*",
        "\"",
        "class C { String s = \"\"\"\n\n\"\"\"; }",
        "\r\r\n\r",
    ] {
        let _ = classify(text);
    }
    let mut state = 7u64;
    for _ in 0..200 {
        let bytes: String = (0..200)
            .map(|_| {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                let alphabet = b"{}();\n /=#class if else try x\"'";
                alphabet[(state % alphabet.len() as u64) as usize] as char
            })
            .collect();
        let _ = classify(&bytes);
    }
}
