//! The command line's text for people against what a hostile agent or tenant stores:
//! nothing it wrote drives the terminal (escape sequences, C1 controls, bidirectional
//! overrides, also where markdown's entities decode to them), and no text of it makes a
//! view hang or its output explode (deep nesting, long words in tables).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // assertions in tests

use std::time::{Duration, Instant};

use crate::support::*;

fn project() -> Project {
    let p = Project::new();
    p.init("API");
    p
}

/// `jility ARGS` here as alice, the terminal `columns` wide; its run and how long it took.
fn timed(p: &Project, columns: &str, args: &[&str]) -> (Run, Duration) {
    let start = Instant::now();
    let out = run(
        p.root(),
        &[("JILITY_ACTOR", HUMAN), ("COLUMNS", columns)],
        args,
    );
    (out, start.elapsed())
}

/// Every escape of `text` is one of the painter's own (`ESC [ digits ; … m`), and no C1
/// control or bidirectional override is in it.
fn only_own_escapes(text: &str) {
    let bytes = text.as_bytes();
    for (i, _) in text.match_indices('\x1b') {
        let rest = &bytes[i + 1..];
        let ok = rest.first() == Some(&b'[')
            && rest[1..]
                .iter()
                .find(|b| !(b.is_ascii_digit() || **b == b';'))
                == Some(&b'm');
        assert!(
            ok,
            "a foreign escape at {i}: {:?}",
            &text[i..(i + 20).min(text.len())]
        );
    }
    for c in text.chars() {
        assert!(
            !('\u{80}'..='\u{9f}').contains(&c)
                && !('\u{202a}'..='\u{202e}').contains(&c)
                && !('\u{2066}'..='\u{2069}').contains(&c)
                && c != '\r'
                && c != '\x08',
            "{c:?} reached the terminal: {text:?}"
        );
    }
}

#[test]
fn markdown_entities_cannot_drive_the_terminal() {
    let p = project();
    // Entities decode to control characters the stored text never held: in a table's
    // cell, in a link's address, in a heading.
    p.json(&[
        "ticket",
        "create",
        "-t",
        "Entities",
        "-d",
        "| a | b |\n|---|---|\n| &#x1b;]0;pwned&#x7; | &#x9b;31m |\n\n[click](&#x1b;[2Jhttp://x)\n\n# &#x202e;abc\n\ntext &#x1b;[2J &#x202e;rev &#8238;",
    ]);
    p.json(&["ticket", "comment", "API-1", "| x |\n|---|\n| &#x1b;[5m |"]);
    for color in ["always", "never"] {
        let (out, _) = timed(&p, "80", &["ticket", "show", "API-1", "--color", color]);
        only_own_escapes(out.ok());
        assert!(out.stdout.contains("pwned"), "{}", out.stdout);
    }
}

#[test]
fn bidirectional_overrides_of_stored_texts_are_not_shown() {
    let p = project();
    p.json(&[
        "ticket",
        "create",
        "-t",
        "Evil\u{202e}txt.exe",
        "-d",
        "plain \u{2067}isolated\u{2069}",
        "-l",
        "lab\u{202d}el",
        "-a",
        "bob\u{202e}x",
    ]);
    p.json(&["ticket", "comment", "API-1", "see \u{202e}this"]);
    for args in [
        &["ticket", "show", "API-1", "--color", "always"][..],
        &["ticket", "list", "--color", "always"],
        &["ticket", "search", "plain"],
        &["ticket", "history", "API-1"],
    ] {
        let (out, _) = timed(&p, "80", args);
        only_own_escapes(out.ok());
    }
}

#[test]
fn deep_quotes_do_not_explode_the_output() {
    let p = project();
    // 9 kB: 5,000 quotes deep, then 2,000 lines. Each line drawn 5,000 bars deep was 40 MB.
    let bomb = format!("{} a\n{}", ">".repeat(5_000), "b\n".repeat(2_000));
    p.json(&["ticket", "create", "-t", "Quotes", "-d", &bomb]);
    let bomb = format!("{}x\n{}", "- ".repeat(3_000), "y\\\n".repeat(2_000));
    p.json(&["ticket", "comment", "API-1", &bomb]);
    for columns in ["80", "20"] {
        let (out, _) = timed(&p, columns, &["ticket", "show", "API-1"]);
        let size = out.ok().len();
        assert!(size < 200_000, "{size} bytes at {columns} columns");
    }
}

#[test]
fn deep_nesting_over_many_lines_is_read_quickly() {
    let p = project();
    // 80 kB: 50,000 quotes open, then 10,000 lines, each read against all of them (5 s).
    let bomb = format!("{} a\n{}", ">".repeat(50_000), "b\\\n".repeat(10_000));
    p.json(&["ticket", "create", "-t", "Deep", "-d", &bomb]);
    let (out, took) = timed(&p, "80", &["ticket", "show", "API-1"]);
    assert!(out.ok().contains('b'));
    assert!(took < Duration::from_millis(2_500), "{took:?}");
}

#[test]
fn a_long_word_in_a_table_is_shown_quickly() {
    let p = project();
    p.json(&["ticket", "create", "-t", "Long", "-d", "x"]);
    // A commit message of 40 kB without a space took 14 s to fit to 80 columns.
    let word = "x".repeat(40_000);
    p.json(&[
        "ticket",
        "link",
        "API-1",
        "0123456789abcdef0123456789abcdef01234567",
        "-m",
        &word,
    ]);
    // A markdown table's cell as well.
    let table = format!("| a |\n|---|\n| {} |", "y".repeat(40_000));
    p.json(&["ticket", "comment", "API-1", &table]);
    let (out, took) = timed(&p, "80", &["ticket", "show", "API-1"]);
    assert!(out.ok().contains(&word));
    assert!(took < Duration::from_millis(2_500), "{took:?}");
}

#[test]
fn narrow_and_wide_terminals_and_wide_characters() {
    let p = project();
    p.json(&[
        "ticket",
        "create",
        "-t",
        "漢字👨‍👩‍👧‍👦 wide\u{200d}title",
        "-d",
        "漢字👨‍👩‍👧‍👦 ".repeat(50).as_str(),
        "-l",
        "ラベル",
    ]);
    for columns in ["1", "20", "10000"] {
        for args in [&["ticket", "show", "API-1"][..], &["ticket", "list"]] {
            let (out, _) = timed(&p, columns, args);
            assert!(out.success() && out.stderr.is_empty(), "{columns}: {out:?}");
        }
    }
}

#[test]
fn a_pipe_closed_early_is_no_error() {
    use std::io::{BufRead, BufReader};
    use std::process::{Command, Stdio};
    let p = project();
    let long = "word ".repeat(20_000);
    p.json(&["ticket", "create", "-t", "Long", "-d", &long]);
    // `jility ticket show API-1 | head -1`: the reader goes after one line.
    let mut child = Command::new(BIN)
        .args(["ticket", "show", "API-1"])
        .current_dir(p.root())
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("JILITY_ACTOR", HUMAN)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut first = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut first)
        .unwrap();
    assert!(first.starts_with("API-1"), "{first:?}");
    let out = child.wait_with_output().unwrap();
    assert!(
        out.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(out.status.code(), Some(0), "{:?}", out.status);
}

#[test]
fn a_tab_in_a_title_keeps_the_list_aligned() {
    let p = project();
    p.json(&["ticket", "create", "-t", "a\tb", "-a", "bob"]);
    p.json(&["ticket", "create", "-t", "ab", "-a", "bob"]);
    let (out, _) = timed(&p, "80", &["ticket", "list"]);
    let text = out.ok();
    assert!(!text.contains('\t'), "{text:?}");
    // Both rows' assignee starts in the same column.
    let columns: Vec<usize> = text
        .lines()
        .filter(|l| l.starts_with("API-"))
        .map(|l| l.find("bob").unwrap())
        .collect();
    assert_eq!(columns.len(), 2, "{text}");
    assert_eq!(columns[0], columns[1], "{text}");
}
