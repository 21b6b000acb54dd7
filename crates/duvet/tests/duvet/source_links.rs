//! A `[[source]]`'s own `blob-link` in the reports, against duvet 0.4.3: the fixture project
//! (tests/fixtures/upstream) with four sources — `src/**/*.rs` linked by a template
//! (`${{ DUVET_TEST_SHA || 'main' }}`), `tests/**/*.rs` by a link with a trailing slash,
//! `src/**/*.rs` again in another comment style with a third link, and `extra/**/*.py`
//! without one — reported without a run link (`DUVET_TEST_SHA=abc123`) and with one
//! (`--blob-link`, `--issue-link`, `DUVET_TEST_SHA` unset), and with a fifth source reading
//! the tests again as another type with another link ([`config_with_types`]). 0.4.3's JSON
//! and v2 JSON reports of these runs are recorded in tests/fixtures/upstream-0.4.3
//! (`source-links{,-run,-types}.json`, `source-links{,-run,-types}.v2.json`) and compared live
//! where 0.4.3 is installed ([`crate::upstream::duvet043`]).

use std::collections::BTreeSet;
use std::path::Path;
use std::process::{Command, Output};

use serde_json::Value;

use crate::report::{fixture, recorded, stderr};
use crate::support::{BIN, Project};

const CONFIG: &str = r###"'$schema' = "https://awslabs.github.io/duvet/config/v0.4.0.json"

[[source]]
pattern = "src/**/*.rs"
blob-link = "https://github.com/example/code/blob/${{ DUVET_TEST_SHA || 'main' }}"

[[source]]
pattern = "tests/**/*.rs"
type = "test"
blob-link = "https://github.com/example/tests/blob/v2/"

[[source]]
pattern = "src/**/*.rs"
comment-style = { meta = "//@=", content = "//@#" }
blob-link = "https://github.com/example/alt/blob/main"

[[source]]
pattern = "extra/**/*.py"
comment-style = { meta = "#=", content = "##" }

[[specification]]
source = "specs/proto.md"
format = "markdown"

[[specification]]
source = "specs/rfc5869.txt"
format = "ietf"

[report.html]
enabled = false
"###;

/// [`CONFIG`] with a fifth source: `tests/**/*.rs` again, of the default type and with a
/// link of its own. 0.4.3 reads the tests twice, once a source: each annotation without a
/// `type=` is there as a test and as an implementation, each with its source's link.
fn config_with_types() -> String {
    CONFIG.replace(
        "[[source]]\npattern = \"extra/**/*.py\"",
        "[[source]]\npattern = \"tests/**/*.rs\"\n\
         blob-link = \"https://github.com/example/impl/blob/main\"\n\n\
         [[source]]\npattern = \"extra/**/*.py\"",
    )
}

/// A file both `src/**/*.rs` sources read: each annotation takes the link of the source whose
/// comment style it is written in.
const ALT_RS: &str = "\
// Written in the second source's comment style: its blob link.
//@= specs/proto.md#notes
//@= type=implication
//@# Pots are round.
fn round() {}

// In the first source's style: the first source's link.
//= specs/proto.md#todo
//= type=test
//# The pot MUST be warmed.
fn warmed() {}
";

/// A file of the source without a blob link.
const EXTRA_PY: &str = "\
#= specs/proto.md#halves
## The server MUST log each
def log(): pass
";

const RUN_ARGS: [&str; 4] = [
    "--blob-link",
    "https://github.com/example/run/blob/x/",
    "--issue-link",
    "https://github.com/example/run/issues",
];

fn project(config: &str) -> Project {
    let p = fixture();
    p.write(".duvet/config.toml", config);
    p.write("src/alt.rs", ALT_RS);
    p.write("extra/x.py", EXTRA_PY);
    p
}

/// `duvet report` of `bin` in `p` with `args`, `DUVET_TEST_SHA` set to `sha` (or unset).
fn run(bin: &Path, p: &Project, args: &[&str], sha: Option<&str>) -> Output {
    let mut cmd = Command::new(bin);
    cmd.arg("report")
        .args(args)
        .current_dir(p.root())
        .env_remove("CI")
        .env_remove("DUVET_TEST_SHA");
    if let Some(sha) = sha {
        cmd.env("DUVET_TEST_SHA", sha);
    }
    cmd.output().unwrap()
}

/// The JSON and v2 JSON reports of `bin` on a fresh project configured by `config`.
fn reports(bin: &Path, config: &str, args: &[&str], sha: Option<&str>) -> (String, String) {
    let p = project(config);
    let mut all = vec!["--json", "out/r.json", "--json-v2", "out/r.v2.json"];
    all.extend_from_slice(args);
    let out = run(bin, &p, &all, sha);
    assert!(out.status.success(), "{}", stderr(&out));
    let read = |rel: &str| std::fs::read_to_string(p.path(rel)).unwrap();
    (read("out/r.json"), read("out/r.v2.json"))
}

#[test]
fn each_source_s_blob_link_is_written_as_0_4_3_writes_it_byte_for_byte() {
    let upstream = crate::upstream::duvet043();
    let with_types = config_with_types();
    assert_ne!(with_types, CONFIG);
    for (name, config, args, sha) in [
        ("source-links", CONFIG, &[][..], Some("abc123")),
        ("source-links-run", CONFIG, &RUN_ARGS[..], None),
        ("source-links-types", with_types.as_str(), &[][..], None),
    ] {
        let (json, v2) = reports(Path::new(BIN), config, args, sha);
        assert_eq!(json, recorded(&format!("{name}.json")), "{name}.json");
        assert_eq!(v2, recorded(&format!("{name}.v2.json")), "{name}.v2.json");
        if let Some(upstream) = &upstream {
            let (their_json, their_v2) = reports(upstream, config, args, sha);
            assert_eq!(json, their_json, "{name}.json (live)");
            assert_eq!(v2, their_v2, "{name}.v2.json (live)");
        }
    }

    // What the recorded reports hold: each annotation its source's link, filled from the
    // environment (or the template's default); none for the source without one.
    let links = |name: &str| -> BTreeSet<(String, String)> {
        let report: Value = serde_json::from_str(&recorded(name)).unwrap();
        report["annotations"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|a| !a["source"].as_str().unwrap().starts_with(".duvet/"))
            .map(|a| {
                (
                    a["source"].as_str().unwrap().to_string(),
                    a["blob_link"].as_str().unwrap_or("-").to_string(),
                )
            })
            .collect()
    };
    let pairs = |sha: &str| -> BTreeSet<(String, String)> {
        [
            ("extra/x.py", "-".to_string()),
            (
                "src/alt.rs",
                "https://github.com/example/alt/blob/main".to_string(),
            ),
            (
                "src/alt.rs",
                format!("https://github.com/example/code/blob/{sha}"),
            ),
            (
                "src/lib.rs",
                format!("https://github.com/example/code/blob/{sha}"),
            ),
            (
                "tests/t.rs",
                "https://github.com/example/tests/blob/v2/".to_string(),
            ),
        ]
        .into_iter()
        .map(|(source, link)| (source.to_string(), link))
        .collect()
    };
    assert_eq!(links("source-links.json"), pairs("abc123"));
    assert_eq!(links("source-links-run.json"), pairs("main"));
    let mut both = pairs("main");
    both.insert((
        "tests/t.rs".to_string(),
        "https://github.com/example/impl/blob/main".to_string(),
    ));
    assert_eq!(links("source-links-types.json"), both);

    // v2: one repository per link, the run's standing for the files without their own.
    let v2: Value = serde_json::from_str(&recorded("source-links-run.v2.json")).unwrap();
    let repositories: BTreeSet<&str> = v2["repositories"]
        .as_object()
        .unwrap()
        .values()
        .map(|r| r["blob_link"].as_str().unwrap())
        .collect();
    assert_eq!(
        repositories,
        BTreeSet::from([
            "https://github.com/example/alt/blob/main",
            "https://github.com/example/code/blob/main",
            "https://github.com/example/run/blob/x/",
            "https://github.com/example/tests/blob/v2/",
        ])
    );
}

/// The links to the code 0.4.3's HTML page makes from its JSON report (its script: an
/// annotation's `blob_link`, else the report's, trailing slashes dropped, then
/// `/{source}#L{line}`).
fn links_0_4_3(report: &Value) -> BTreeSet<String> {
    let run = report["blob_link"].as_str().unwrap_or_default();
    report["annotations"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|a| {
            let own = a["blob_link"].as_str().filter(|l| !l.is_empty());
            let base = own.unwrap_or(run).trim_end_matches('/');
            let line = a["line"].as_u64()?;
            let source = a["source"].as_str()?;
            (!base.is_empty()).then(|| format!("{base}/{source}#L{line}"))
        })
        .collect()
}

#[test]
fn the_html_report_links_each_annotation_where_0_4_3_s_page_does() {
    let p = project(CONFIG);
    let mut args = vec!["--html", "out/r.html"];
    args.extend_from_slice(&RUN_ARGS);
    let out = run(Path::new(BIN), &p, &args, None);
    assert!(out.status.success(), "{}", stderr(&out));
    let html = std::fs::read_to_string(p.path("out/r.html")).unwrap();
    let ours: BTreeSet<String> = html
        .split("href=\"")
        .skip(1)
        .filter_map(|rest| rest.split('"').next())
        .filter(|href| href.starts_with("https://github.com/example/") && href.contains("#L"))
        .map(str::to_string)
        .collect();
    let theirs = links_0_4_3(&serde_json::from_str(&recorded("source-links-run.json")).unwrap());
    assert!(ours.is_subset(&theirs), "{:?}", ours.difference(&theirs));
    for link in [
        "https://github.com/example/code/blob/main/src/lib.rs#L2",
        "https://github.com/example/code/blob/main/src/alt.rs#L8",
        "https://github.com/example/alt/blob/main/src/alt.rs#L2",
        "https://github.com/example/tests/blob/v2/tests/t.rs#L2",
        // The source without a link: the run's.
        "https://github.com/example/run/blob/x/extra/x.py#L1",
    ] {
        assert!(ours.contains(link), "{link} not in {ours:?}");
    }
}

#[test]
fn a_source_s_template_that_cannot_be_filled_fails_the_report_as_in_0_4_3() {
    let config = CONFIG.replace("DUVET_TEST_SHA || 'main'", "DUVET_TEST_SHA");
    let expected = "failed to evaluate expression: \" DUVET_TEST_SHA \"";
    let p = project(&config);
    let out = run(Path::new(BIN), &p, &["--json", "out/r.json"], None);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let text = stderr(&out);
    assert!(
        text.contains(&format!(
            "[[source]] pattern = \"src/**/*.rs\": blob-link: {expected}"
        )),
        "{text}"
    );
    assert!(!p.path("out/r.json").exists());
    // Set, it fills the template.
    let out = run(Path::new(BIN), &p, &["--json", "out/r.json"], Some("f00"));
    assert!(out.status.success(), "{}", stderr(&out));
    if let Some(upstream) = crate::upstream::duvet043() {
        let q = project(&config);
        let out = run(&upstream, &q, &["--json", "out/r.json"], None);
        assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
        assert!(stderr(&out).contains(expected), "{}", stderr(&out));
    }
}

/// Two sources of the same comment style and type reading the same files with different
/// links: 0.4.3 lists the annotations once per source, ours once (the first's link), and says
/// so; sources that agree on the link, or differ in style, get no warning.
#[test]
fn two_sources_linking_one_file_differently_are_warned_about() {
    let config = CONFIG.replace(
        "[[source]]\npattern = \"extra/**/*.py\"",
        "[[source]]\npattern = \"src/lib.rs\"\n\
         blob-link = \"https://github.com/example/other/blob/main\"\n\n\
         [[source]]\npattern = \"extra/**/*.py\"",
    );
    let p = project(&config);
    let out = run(Path::new(BIN), &p, &["--json", "out/r.json"], Some("abc"));
    assert!(out.status.success(), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(
        err.contains(
            "warning: src/lib.rs is read by two [[source]] entries with different blob-links"
        ),
        "{err}"
    );
    let plain = project(CONFIG);
    let out = run(
        Path::new(BIN),
        &plain,
        &["--json", "out/r.json"],
        Some("abc"),
    );
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(!stderr(&out).contains("blob-links"), "{}", stderr(&out));
}
