//! `duvet mcp` against a hostile project (links out of it, odd section ids, huge comments,
//! many identical annotations) and a hostile client (huge names and URIs): what a hostile
//! pass found, each answered in bounds.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // assertions in tests

use crate::support;

use serde_json::{Value, json};
use support::*;

const CONFIG: &str = r#"'$schema' = "https://awslabs.github.io/duvet/config/v0.4.0.json"

[[source]]
pattern = "src/**/*.rs"

[[specification]]
source = "specs/proto.md"
format = "markdown"
"#;

fn project(spec: &str, source: &str) -> Project {
    let p = Project::new();
    p.write(".duvet/config.toml", CONFIG);
    p.write("specs/proto.md", spec);
    p.write("src/lib.rs", source);
    p
}

#[tokio::test]
async fn a_specification_linked_from_outside_the_project_is_not_read() {
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(
        outside.path().join("secret.md"),
        "# Secret\n\n## Keys {#keys}\n\nThe key MUST be hunter2.\n",
    )
    .unwrap();
    let p = project("# Proto\n\n## A\n\nA server MUST work.\n", "fn main() {}\n");
    std::os::unix::fs::symlink(outside.path().join("secret.md"), p.path("specs/link.md")).unwrap();
    p.write(
        "src/leak.rs",
        "//= specs/link.md#keys\n//# The key MUST be hunter2.\nfn leak() {}\n",
    );
    let mcp = p.start(&[]).await;
    let specs = mcp.read_resource_json("duvet:///specifications").await;
    let link = specs
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["url"] == "specs/link.md")
        .unwrap();
    assert!(
        link["error"]
            .as_str()
            .unwrap()
            .contains("outside the project"),
        "{link}"
    );
    let err = mcp
        .read_resource("duvet:///specifications/link/sections/keys")
        .await
        .unwrap_err();
    assert!(!err.contains("hunter2"), "{err}");
    let found: Value = mcp
        .call_ok("search_requirements", json!({"query": "hunter2"}))
        .await;
    assert_eq!(found, json!([]));
    mcp.shutdown().await;
}

#[tokio::test]
async fn huge_names_are_never_echoed_whole() {
    let p = project("# Proto\n\n## A\n\nA server MUST work.\n", "fn main() {}\n");
    let mcp = p.start(&[]).await;
    let huge = "A".repeat(1_000_000);
    for args in [
        json!({"spec": huge}),
        json!({"section": format!("{huge}#x")}),
        json!({"section": huge}),
    ] {
        let err = mcp.call_err("list_uncited_requirements", args).await;
        assert_eq!(err.code, "invalid_params");
        assert!(err.message.len() < 1000, "{} bytes", err.message.len());
    }
    // A requirement identifier: not hex, or hex that names nothing.
    for id in [format!("{huge}\u{0}"), "a".repeat(1_000_000)] {
        let err = mcp
            .call_err("get_requirement_status", json!({"req_identifier": id}))
            .await;
        assert!(
            err.code == "invalid_params" || err.code == "not_found",
            "{}",
            err.code
        );
        assert!(err.message.len() < 1000, "{} bytes", err.message.len());
    }
    for uri in [
        format!("duvet:///specifications/{huge}"),
        format!("duvet:///specifications/proto/sections/{huge}"),
        format!("duvet:///specifications/proto/sections/a/citations/{huge}"),
        format!("duvet:///specifications?limit={}", "9".repeat(100_000)),
        format!("http://{huge}"),
    ] {
        let err = mcp.read_resource(&uri).await.unwrap_err();
        assert!(err.len() < 3000, "{} bytes for {}", err.len(), &uri[..40]);
    }
    mcp.shutdown().await;
}

#[tokio::test]
async fn every_full_path_reads_back_whatever_the_section_id_or_file_name() {
    let p = project(
        "# Proto\n\n## Slash {#a/b}\n\nThe pot MUST be warm.\n\n## Query {#q?x=1}\n\nThe cup MUST be full.\n\n## Percent {#p%41}\n\nThe tea MUST be hot.\n",
        "//= specs/proto.md#a/b\n//# The pot MUST be warm.\nfn a() {}\n",
    );
    p.write(
        "src/we?ird 100%41.rs",
        "//= specs/proto.md#q?x=1\n//# The cup MUST be full.\nfn b() {}\n\n//= specs/proto.md#p%41\n//# The tea MUST be hot.\nfn c() {}\n",
    );
    let mcp = p.start(&[]).await;
    let citations = mcp.read_resource_json("duvet:///citations").await;
    let paths: Vec<&str> = citations
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["full_path"].as_str().unwrap())
        .collect();
    assert_eq!(paths.len(), 3, "{citations}");
    for path in paths {
        let citation = mcp.read_resource_json(&format!("duvet://{path}")).await;
        assert!(
            citation["line_number"].as_u64().unwrap() >= 1,
            "{path}: {citation}"
        );
        let requirement = path.rsplit_once("/citations/").unwrap().0;
        let req = mcp
            .read_resource_json(&format!("duvet://{requirement}"))
            .await;
        assert_eq!(req["status"], "fully_implemented", "{requirement}");
    }
    mcp.shutdown().await;
}

#[tokio::test]
async fn filters_read_as_they_act() {
    let p = project(
        "# Proto\n\n## Accept {#accept}\n\nA server MUST accept.\nA server MUST log.\n",
        "fn main() {}\n",
    );
    let mcp = p.start(&[]).await;
    // `#accept`: that section of any specification.
    let any: Value = mcp
        .call_ok("list_uncited_requirements", json!({"section": "#accept"}))
        .await;
    assert_eq!(any.as_array().unwrap().len(), 2);
    // A blank filter is no filter: its cursor pages the unfiltered list.
    let (_, page) = mcp
        .call_paged::<Vec<Value>>("list_uncited_requirements", json!({"limit": 1}))
        .await;
    let (rest, _) = mcp
        .call_paged::<Vec<Value>>(
            "list_uncited_requirements",
            json!({"spec": " ", "quote": "", "cursor": page.next_cursor.unwrap()}),
        )
        .await;
    assert_eq!(rest.len(), 1);
    mcp.shutdown().await;
}

#[tokio::test]
async fn many_identical_annotations_are_listed_in_bounds() {
    let mut source = String::new();
    for i in 0..60 {
        source.push_str(&format!(
            "//= specs/proto.md#a\n//# The server MUST do it.\nfn f{i}() {{}}\n\n"
        ));
    }
    // A run of quote lines without a target, hundreds of lines long, quoting the spec.
    let mut rules = String::new();
    for i in 0..500 {
        rules.push_str(&format!("Rule {i} MUST hold.\n"));
        source.push_str(&format!("//# Rule {i} MUST hold.\n"));
    }
    let p = project(
        &format!("# Proto\n\n## A {{#a}}\n\nThe server MUST do it.\n\n## Rules {{#b}}\n\n{rules}"),
        &source,
    );
    let mcp = p.start(&[]).await;
    let (dups, page) = mcp
        .call_paged::<Vec<Value>>("list_duplicate_citations", json!({"limit": 2}))
        .await;
    assert_eq!(page.total, 60);
    assert_eq!(dups[0]["duplicates"].as_array().unwrap().len(), 20);
    assert_eq!(dups[0]["duplicates_count"], 59);
    let untested: Value = mcp
        .call_ok("list_untested_citations", json!({"limit": 1}))
        .await;
    assert_eq!(untested[0]["tested"], "none");
    assert_eq!(untested[0]["tests_count"], 0);
    let invalid: Value = mcp.call_ok("list_invalid_citations", json!({})).await;
    let slip = &invalid[0];
    assert!(
        slip["error"].as_str().unwrap().contains("specs/proto.md#b"),
        "{slip}"
    );
    assert!(slip["comment_text"].as_str().unwrap().chars().count() <= 2001);
    mcp.shutdown().await;
}
