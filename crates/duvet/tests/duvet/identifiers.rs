//! Requirement identifiers and section names through the built binary: the same sentence in
//! two sections is two requirements with two identifiers, stable across restarts; lookups
//! that match several requirements say which; a citation of an appendix without its prefix
//! is invalid and names the section it probably means.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // assertions in tests

use crate::support;

use std::collections::HashMap;

use duvet::errors;
use serde_json::{Value, json};
use support::*;

/// The sentence RFC 9000 states in §17.2 and again in §17.3.1.
const SAME: &str = "The value included prior to protection MUST be set to 0.";
const ECN: &str = "An endpoint MUST NOT use ECN for a path that fails validation.";
const RFC9000_URL: &str = "https://www.rfc-editor.org/rfc/rfc9000";
/// Duvet's cache file of RFC 9000, relative to the cache: the spec's part of a place.
const RFC9000_KEY: &str = "www.rfc-editor.org/rfc/rfc9000.txt";

/// An excerpt of RFC 9000 in rfc-editor layout.
const RFC9000_TEXT: &str = "\
Internet Engineering Task Force (IETF)                  J. Iyengar, Ed.
Request for Comments: 9000                                        Fastly
Category: Standards Track                                M. Thomson, Ed.
ISSN: 2070-1721                                                  Mozilla
                                                                May 2021


           QUIC: A UDP-Based Multiplexed and Secure Transport

Abstract

   This document defines the core of the QUIC transport protocol.

17.  Packet Formats

   All numeric values are encoded in network byte order.

17.2.  Long Header Packets

   Reserved Bits:  Two bits (those with a mask of 0x0c) of byte 0 are
      reserved across multiple packet types.  These bits are protected
      using header protection; see Section 5.4 of [QUIC-TLS].  The value
      included prior to protection MUST be set to 0.

17.3.  Short Header Packets

   This version of QUIC defines a single packet type that uses the
   short packet header.

17.3.1.  1-RTT Packet

   Reserved Bits:  The next two bits (those with a mask of 0x18) of byte
      0 are reserved.  These bits are protected using header protection;
      see Section 5.4 of [QUIC-TLS].  The value included prior to
      protection MUST be set to 0.

Appendix A.  Pseudocode

A.7.  Sample ECN Validation Algorithm

   An endpoint MUST NOT use ECN for a path that fails validation.
";

const CONFIG: &str = r#"[[source]]
pattern = "src/**/*.rs"

[[specification]]
source = "https://www.rfc-editor.org/rfc/rfc9000"
"#;

/// A project with RFC 9000's excerpt; `src/header.rs` implements the sentence of §17.2 only,
/// `src/ecn.rs` cites Appendix A.7 as `#A.7`.
fn quic_project() -> Project {
    let p = Project::new();
    p.write(".duvet/config.toml", CONFIG);
    p.write(
        &format!(".duvet/specifications/{RFC9000_KEY}"),
        RFC9000_TEXT,
    );
    p.write(
        "src/header.rs",
        &format!("//= {RFC9000_URL}#section-17.2\n//# {SAME}\nfn long_header() {{}}\n"),
    );
    p.write(
        "src/ecn.rs",
        &format!("//= {RFC9000_URL}#A.7\n//# {ECN}\nfn validate_ecn() {{}}\n"),
    );
    p
}

fn place(section: &str) -> String {
    format!("{RFC9000_KEY}#{section}")
}

/// The requirements `search_requirements` finds for `query`: full path → identifier.
async fn search(mcp: &mcp_testkit::McpProcess, query: &str) -> HashMap<String, String> {
    let found: Value = mcp
        .call_ok("search_requirements", json!({"query": query}))
        .await;
    found
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["full_path"].as_str().unwrap().to_string(),
                r["identifier"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

#[tokio::test]
async fn the_same_sentence_in_two_sections_is_two_requirements_with_two_identifiers() {
    let p = quic_project();
    let mcp = p.start(&[]).await;
    let first = req_id(&place("section-17.2"), SAME);
    let second = req_id(&place("section-17.3.1"), SAME);
    assert_ne!(first, second);

    // Both are listed, each with its own identifier (the documented hash of place and text).
    let found = search(&mcp, "prior to protection").await;
    let path = |section: &str, id: &str| {
        format!("/specifications/rfc9000/sections/{section}/requirements/{id}")
    };
    assert_eq!(
        found,
        HashMap::from([
            (path("section-17.2", &first), first.clone()),
            (path("section-17.3.1", &second), second.clone()),
        ])
    );

    // Each is reached by its identifier, with its own status.
    let s: Value = mcp
        .call_ok("get_requirement_status", json!({"req_identifier": first}))
        .await;
    assert_eq!(s["full_path"], path("section-17.2", &first));
    assert_eq!(s["status"], "fully_implemented");
    let s: Value = mcp
        .call_ok("get_requirement_status", json!({"req_identifier": second}))
        .await;
    assert_eq!(s["full_path"], path("section-17.3.1", &second));
    assert_eq!(s["status"], "not_started");
    assert_eq!(s["citation_count"], 0);
    let uncited: Value = mcp.call_ok("list_uncited_requirements", json!({})).await;
    let uncited: Vec<&str> = uncited
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["identifier"].as_str().unwrap())
        .collect();
    assert!(uncited.contains(&second.as_str()), "{uncited:?}");
    assert!(!uncited.contains(&first.as_str()), "{uncited:?}");

    // And as resources.
    for (section, id, status) in [
        ("section-17.2", &first, "fully_implemented"),
        ("section-17.3.1", &second, "not_started"),
    ] {
        let req = mcp
            .read_resource_json(&format!("duvet://{}", path(section, id)))
            .await;
        assert_eq!(req["identifier"], *id);
        assert_eq!(req["text"], SAME);
        assert_eq!(req["status"], status);
    }
    // An identifier names its own section's requirement only.
    let err = mcp
        .read_resource(&format!("duvet://{}", path("section-17.3.1", &first)))
        .await
        .unwrap_err();
    assert!(err.contains("not found"), "{err}");

    // A citation of §17.3.1 covers §17.3.1's requirement.
    let v: Value = mcp
        .call_ok(
            "validate_citation",
            json!({"citation": format!("//= {RFC9000_URL}#section-17.3.1\n//# {SAME}")}),
        )
        .await;
    assert_eq!(v["valid"], true, "{v}");
    assert_eq!(v["requirements"], json!([second]));

    // Every identifier of the project is unique.
    let all = mcp.read_resource_json("duvet:///requirements").await;
    let ids: Vec<&str> = all
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["identifier"].as_str().unwrap())
        .collect();
    let unique: std::collections::HashSet<&&str> = ids.iter().collect();
    assert_eq!(unique.len(), ids.len(), "{ids:?}");
}

#[tokio::test]
async fn an_identifier_of_several_requirements_lists_them() {
    let p = quic_project();
    let mcp = p.start(&[]).await;
    let first = req_id(&place("section-17.2"), SAME);
    let second = req_id(&place("section-17.3.1"), SAME);

    // The identifier of earlier versions, the hash of the text alone, names both.
    let err = mcp
        .call_err(
            "get_requirement_status",
            json!({"req_identifier": text_hash(SAME)}),
        )
        .await;
    assert_eq!(err.code, errors::AMBIGUOUS_REQUIREMENT);
    assert!(!err.retryable);
    assert!(
        err.message.contains("matches 2 requirements"),
        "{}",
        err.message
    );
    for (section, id) in [("section-17.2", &first), ("section-17.3.1", &second)] {
        let path = format!("/specifications/rfc9000/sections/{section}/requirements/{id}");
        assert!(err.message.contains(&path), "{}", err.message);
    }
    assert!(err.hint.contains("identifier"), "{}", err.hint);

    // Within one section it names one requirement.
    let req = mcp
        .read_resource_json(&format!(
            "duvet:///specifications/rfc9000/sections/section-17.3.1/requirements/{}",
            text_hash(SAME)
        ))
        .await;
    assert_eq!(req["identifier"], second);

    // The hash of a text that only one requirement states still finds it.
    let s: Value = mcp
        .call_ok(
            "get_requirement_status",
            json!({"req_identifier": text_hash(ECN)}),
        )
        .await;
    assert_eq!(s["identifier"], req_id(&place("appendix-A.7"), ECN));
}

/// Sentences `Item N MUST be kept.` for N = 0, 1, …, up to the first two whose identifiers (in
/// section `many` of `specs/many.md`) share their first 6 characters: the sentences and the
/// two colliding indices.
fn sentences_with_a_shared_prefix() -> (Vec<String>, usize, usize) {
    let mut seen: HashMap<String, usize> = HashMap::new();
    let mut sentences = Vec::new();
    for n in 0.. {
        let text = format!("Item {n} MUST be kept.");
        let prefix = req_id("specs/many.md#many", &text)[..6].to_string();
        sentences.push(text);
        if let Some(&other) = seen.get(&prefix) {
            return (sentences, other, n);
        }
        seen.insert(prefix, n);
    }
    unreachable!()
}

#[tokio::test]
async fn a_prefix_of_several_identifiers_lists_them() {
    let (sentences, a, b) = sentences_with_a_shared_prefix();
    let p = Project::new();
    p.write(
        ".duvet/config.toml",
        "[[source]]\npattern = \"src/**/*.rs\"\n\n[[specification]]\nsource = \"specs/many.md\"\nformat = \"markdown\"\n",
    );
    p.write(
        "specs/many.md",
        &format!("# Items\n\n## Many\n\n{}\n", sentences.join("\n\n")),
    );
    let mcp = p.start(&[]).await;
    let id_a = req_id("specs/many.md#many", &sentences[a]);
    let id_b = req_id("specs/many.md#many", &sentences[b]);
    let err = mcp
        .call_err(
            "get_requirement_status",
            json!({"req_identifier": &id_a[..6]}),
        )
        .await;
    assert_eq!(err.code, errors::AMBIGUOUS_REQUIREMENT);
    assert!(err.message.contains(&id_a), "{}", err.message);
    assert!(err.message.contains(&id_b), "{}", err.message);
    // One more character tells them apart (unless they share it too).
    if id_a.as_bytes()[6] != id_b.as_bytes()[6] {
        let s: Value = mcp
            .call_ok(
                "get_requirement_status",
                json!({"req_identifier": &id_a[..7]}),
            )
            .await;
        assert_eq!(s["identifier"], id_a);
    }
    let err = mcp
        .read_resource(&format!(
            "duvet:///specifications/many/sections/many/requirements/{}",
            &id_a[..6]
        ))
        .await
        .unwrap_err();
    assert!(err.contains(&id_a) && err.contains(&id_b), "{err}");
}

#[tokio::test]
async fn identifiers_are_stable_across_restarts_and_other_occurrences() {
    let p = quic_project();
    let before = search(&p.start(&[]).await, "prior to protection").await;
    assert_eq!(before.len(), 2);

    // The same files: the same identifiers.
    let again = search(&p.start(&[]).await, "prior to protection").await;
    assert_eq!(again, before);

    // The same sentence elsewhere (a new specification, a new section before them) changes
    // none of them.
    p.write(
        ".duvet/config.toml",
        &format!(
            "{CONFIG}\n[[specification]]\nsource = \"specs/extra.md\"\nformat = \"markdown\"\n"
        ),
    );
    p.write("specs/extra.md", &format!("# Extra\n\n## Bits\n\n{SAME}\n"));
    let mut text = RFC9000_TEXT.replace(
        "17.2.  Long Header Packets",
        &format!("17.1.  Packet Numbers\n\n   {SAME}\n\n17.2.  Long Header Packets"),
    );
    text.push('\n');
    p.write(&format!(".duvet/specifications/{RFC9000_KEY}"), &text);
    let mcp = p.start(&[]).await;
    let after = search(&mcp, "prior to protection").await;
    assert_eq!(after.len(), 4, "{after:#?}");
    for (path, id) in &before {
        assert_eq!(after.get(path), Some(id), "{path}");
    }
    let err = mcp
        .call_err(
            "get_requirement_status",
            json!({"req_identifier": text_hash(SAME)}),
        )
        .await;
    assert!(
        err.message.contains("matches 4 requirements"),
        "{}",
        err.message
    );
}

#[tokio::test]
async fn an_appendix_cited_without_its_prefix_is_invalid_with_a_hint() {
    let p = quic_project();
    let mcp = p.start(&[]).await;

    let invalid: Value = mcp.call_ok("list_invalid_citations", json!({})).await;
    let invalid = invalid.as_array().unwrap();
    assert_eq!(invalid.len(), 1, "{invalid:#?}");
    assert_eq!(invalid[0]["file_path"], "src/ecn.rs");
    assert_eq!(invalid[0]["line_number"], 1);
    let error = invalid[0]["error"].as_str().unwrap();
    assert!(error.starts_with("Section not found"), "{error}");
    assert!(error.contains("did you mean appendix-A.7"), "{error}");

    for target in ["#A.7", "#a.7", "#section-A.7", "#A.7."] {
        let v: Value = mcp
            .call_ok(
                "validate_citation",
                json!({"citation": format!("//= {RFC9000_URL}{target}\n//# {ECN}")}),
            )
            .await;
        assert_eq!(v["valid"], false, "{target}: {v}");
        let error = v["error"].as_str().unwrap();
        assert!(
            error.contains("did you mean appendix-A.7"),
            "{target}: {error}"
        );
    }
    // Spelled as the specification does, it holds.
    let v: Value = mcp
        .call_ok(
            "validate_citation",
            json!({"citation": format!("//= {RFC9000_URL}#appendix-A.7\n//# {ECN}")}),
        )
        .await;
    assert_eq!(v["valid"], true, "{v}");
    assert_eq!(v["section_id"], "appendix-A.7");
    // Sections that resemble nothing get no hint.
    let v: Value = mcp
        .call_ok(
            "validate_citation",
            json!({"citation": format!("//= {RFC9000_URL}#B.1\n//# {ECN}")}),
        )
        .await;
    assert_eq!(v["valid"], false);
    assert!(
        !v["error"].as_str().unwrap().contains("did you mean"),
        "{v}"
    );

    // The resource tree says the same.
    let err = mcp
        .read_resource("duvet:///specifications/rfc9000/sections/A.7")
        .await
        .unwrap_err();
    assert!(err.contains("did you mean appendix-A.7"), "{err}");
}
