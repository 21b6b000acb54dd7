//! `duvet extract` against the requirement files duvet 0.4.3 wrote for the fixture project
//! (tests/fixtures/upstream/.duvet/requirements, and the `-e rs` files in
//! tests/fixtures/upstream-0.4.3/extract-rs), and against 0.4.3 itself where it is installed.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use crate::report::{fixture, stderr};
use crate::support::{BIN, Project};

fn extract(bin: &Path, p: &Project, args: &[&str]) -> Output {
    Command::new(bin)
        .arg("extract")
        .args(args)
        .current_dir(p.root())
        .output()
        .unwrap()
}

/// Every file below `dir`, relative to it, with its text.
fn tree(dir: &Path) -> Vec<(PathBuf, String)> {
    let mut files = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
            } else {
                let text = std::fs::read_to_string(&path).unwrap();
                files.push((path.strip_prefix(dir).unwrap().to_path_buf(), text));
            }
        }
    }
    files.sort();
    files
}

fn upstream_dir(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(rel)
}

#[test]
fn requirement_files_are_the_ones_0_4_3_writes() {
    let p = fixture();
    let out = extract(Path::new(BIN), &p, &["-o", "out", "specs/rfc5869.txt"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("Extracted 3 requirements across 2 sections"),
        "{}",
        stderr(&out)
    );
    let out = extract(
        Path::new(BIN),
        &p,
        &["--format", "markdown", "--out", "out", "specs/proto.md"],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(
        tree(&p.path("out")),
        tree(&upstream_dir("upstream/.duvet/requirements"))
    );
    // `-e rs`: annotated Rust comments, as 0.4.3 writes them.
    for (format, spec) in [("ietf", "specs/rfc5869.txt"), ("md", "specs/proto.md")] {
        let out = extract(
            Path::new(BIN),
            &p,
            &["-f", format, "-e", "rs", "-o", "rs", spec],
        );
        assert!(out.status.success(), "{}", stderr(&out));
    }
    assert_eq!(
        tree(&p.path("rs")),
        tree(&upstream_dir("upstream-0.4.3/extract-rs"))
    );
}

#[test]
fn auto_format_and_url_targets_read_as_0_4_3_reads_them() {
    let p = Project::new();
    p.write(
        ".duvet/config.toml",
        "'$schema' = \"https://awslabs.github.io/duvet/config/v0.4.0.json\"\n[[source]]\npattern = \"src/**/*.rs\"\n",
    );
    // A URL target is read from the config's download cache, and written below OUT under
    // the cache path (0.4.3's layout for `duvet extract URL`).
    p.write(
        ".duvet/specifications/www.rfc-editor.org/rfc/rfc9999.txt",
        "Header\n\n1.  Scope\n\n   A peer MUST ack.  It MAY wait.\n",
    );
    // A .txt starting with a heading is Markdown for `--format auto`.
    p.write("notes.txt", "# Notes\n\n- Clients SHOULD retry\n- once.\n");
    let run = |bin: &Path, out: &str| {
        for args in [
            vec!["-o", out, "https://www.rfc-editor.org/rfc/rfc9999"],
            vec!["-f", "auto", "-o", out, "notes.txt"],
        ] {
            let o = extract(bin, &p, &args);
            assert!(o.status.success(), "{}", stderr(&o));
        }
        tree(&p.path(out))
    };
    let ours = run(Path::new(BIN), "ours");
    assert_eq!(
        ours.iter()
            .map(|(p, _)| p.to_str().unwrap())
            .collect::<Vec<_>>(),
        [
            ".duvet/specifications/www.rfc-editor.org/rfc/rfc9999/section-1.toml",
            "notes/notes.toml",
        ]
    );
    assert!(
        ours[0]
            .1
            .starts_with("target = \"https://www.rfc-editor.org/rfc/rfc9999#section-1\"")
    );
    assert!(
        ours[1].1.ends_with(
            "[[spec]]\nlevel = \"SHOULD\"\nquote = '''\n- Clients SHOULD retry\n'''\n\n"
        ),
        "{}",
        ours[1].1
    );
    if let Some(upstream) = crate::upstream::duvet043() {
        // The same files, except that 0.4.3 copies the download cache's *absolute* path
        // below OUT for a URL target in a config project; ours keeps it relative.
        let mut theirs = run(&upstream, "theirs");
        theirs.sort_by_key(|(path, _)| !path.starts_with("notes"));
        assert_eq!(theirs[0], ours[1]);
        assert!(theirs[1].0.ends_with(&ours[0].0), "{:?}", theirs[1].0);
        assert_eq!(theirs[1].1, ours[0].1);
    }
}

#[test]
fn bad_options_and_missing_texts_fail_with_0_4_3_s_words_and_a_hint() {
    let p = fixture();
    for (args, message) in [
        (
            vec!["-e", "json", "specs/rfc5869.txt"],
            "unsupported extraction type: \"json\"",
        ),
        (
            vec!["-o", "out.toml", "specs/rfc5869.txt"],
            "single file extraction not supported, got out.toml",
        ),
        (
            vec!["-f", "pdf", "specs/rfc5869.txt"],
            "Invalid spec type \"pdf\", expected one of [\"auto\", \"ietf\", \"markdown\"]",
        ),
        (vec!["specs/missing.txt"], "cannot read specs/missing.txt"),
        (
            // Nobody listens on port 1: the download fails, retryable, with the way by hand.
            vec!["http://127.0.0.1:1/rfc/rfc9999"],
            "(retrying may help); or save the text there yourself: `curl -fsSL --create-dirs -o .duvet/specifications/127.0.0.1/rfc/rfc9999.txt http://127.0.0.1:1/rfc/rfc9999`",
        ),
    ] {
        let out = extract(Path::new(BIN), &p, &args);
        assert_eq!(out.status.code(), Some(1), "{args:?}");
        assert!(stderr(&out).contains(message), "{args:?}: {}", stderr(&out));
        assert!(out.stdout.is_empty());
    }
    // Nothing was written.
    assert!(!p.path("out.toml").exists() && !p.path("specs/rfc5869").exists());
}
