use super::*;

fn fixture(path: &str) -> String {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/upstream");
    std::fs::read_to_string(root.join(path)).unwrap()
}

#[test]
fn the_fixture_specifications_extract_as_duvet_043_wrote_them() {
    for (spec, format, dir) in [
        ("specs/proto.md", Format::Markdown, "specs/proto"),
        ("specs/rfc5869.txt", Format::Ietf, "specs/rfc5869"),
    ] {
        let (files, total) = files(&fixture(spec), format, spec, Extension::Toml);
        assert!(total > 0);
        let root = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/upstream/.duvet/requirements");
        let mut expected: Vec<String> = std::fs::read_dir(root.join(dir))
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        expected.sort();
        let mut names: Vec<String> = files.iter().map(|(n, _)| n.clone()).collect();
        names.sort();
        assert_eq!(names, expected, "{spec}");
        for (name, text) in files {
            assert_eq!(
                text,
                fixture(&format!(".duvet/requirements/{dir}/{name}")),
                "{spec} {name}"
            );
        }
    }
}

fn quotes(text: &str, format: Format) -> Vec<(String, &'static str, String)> {
    sections(text, format)
        .iter()
        .flat_map(|s| {
            features(s)
                .into_iter()
                .map(|f| (s.id.clone(), f.level.name(), f.quote.join("|")))
                .collect::<Vec<_>>()
        })
        .collect()
}

#[test]
fn a_requirement_runs_from_sentence_end_to_sentence_end_across_lines() {
    let doc = "Header\n\n1.  Intro\n\n   An endpoint MUST send\n   a frame. It MAY stop.  Then\n   the peer SHOULD NOT\n   wait\n\n   x.y MUST z.\n";
    assert_eq!(
        quotes(doc, Format::Ietf),
        vec![
            (
                "section-1".into(),
                "MUST",
                "An endpoint MUST send|a frame.".into()
            ),
            ("section-1".into(), "MAY", "It MAY stop.".into()),
            (
                "section-1".into(),
                "SHOULD",
                "Then|the peer SHOULD NOT|wait".into()
            ),
            ("section-1".into(), "MUST", "x.y MUST z.".into()),
        ]
    );
}

#[test]
fn quoted_keywords_are_definitions_and_duplicates_keep_the_strongest_level() {
    let doc = "# Terms\n\nThe words \"MUST\" and \"MAY\" are defined.\n\nA client MAY retry. A client MAY retry.\n\nIt MUST or MAY act.\n";
    assert_eq!(
        quotes(doc, Format::Markdown),
        vec![
            ("terms".into(), "MAY", "A client MAY retry.".into()),
            ("terms".into(), "MUST", "It MUST or MAY act.".into()),
        ]
    );
}

#[test]
fn markdown_list_items_end_a_requirement() {
    let doc = "# List\n\nClients:\n- MUST send a ping\n- SHOULD wait\n  for a pong\n\n## Next {#custom}\n\nIt MAY go.\n\n# List\n\nIt MUST x.\n";
    let sections = sections(doc, Format::Markdown);
    let ids: Vec<&str> = sections.iter().map(|s| s.id.as_str()).collect();
    assert_eq!(ids, ["list", "custom", "list-1"]);
    assert_eq!(
        quotes(doc, Format::Markdown),
        vec![
            ("list".into(), "MUST", "- MUST send a ping".into()),
            ("list".into(), "SHOULD", "- SHOULD wait|for a pong".into()),
            ("custom".into(), "MAY", "It MAY go.".into()),
            ("list-1".into(), "MUST", "It MUST x.".into()),
        ]
    );
}

#[test]
fn ietf_page_furniture_is_dropped_and_named_sections_are_found() {
    let doc = "RFC 1                  T                  May 2000\n\nAbstract\n\n   Hosts MUST\n   reply.\n\nDoe                          Std                       [Page 1]\n\u{c}\nRFC 1                  T                  May 2000\n\n1.  Intro\n\n   A sender SHALL\n\nDoe                          Std                       [Page 2]\n\u{c}\nRFC 1                  T                  May 2000\n\n   resend it. Done.\n";
    let sections = sections(doc, Format::Ietf);
    let ids: Vec<&str> = sections.iter().map(|s| s.id.as_str()).collect();
    assert_eq!(ids, ["name-abstract", "section-1"]);
    assert_eq!(
        quotes(doc, Format::Ietf),
        vec![
            ("name-abstract".into(), "MUST", "Hosts MUST|reply.".into()),
            ("section-1".into(), "MUST", "A sender SHALL".into()),
        ]
    );
    let (files, _) = files(
        doc,
        Format::Ietf,
        "https://example.com/rfc1",
        Extension::Toml,
    );
    assert!(files[1].1.starts_with("target = \"https://example.com/rfc1#section-1\"\n\n# Intro\n#\n#    A sender SHALL\n# \n#    resend it. Done.\n\n[[spec]]\n"), "{}", files[1].1);
}

#[test]
fn multibyte_text_after_a_dot_does_not_break_extraction() {
    let doc = "# S\n\nA.é b MUST c.ü d. E MAY f\n";
    assert_eq!(
        quotes(doc, Format::Markdown),
        vec![
            ("s".into(), "MUST", "A.é b MUST c.ü d.".into()),
            ("s".into(), "MAY", "E MAY f".into()),
        ]
    );
}

#[test]
fn requirement_directories_stay_under_the_output() {
    let out = Path::new(".duvet/requirements");
    assert_eq!(
        out_dir(out, None, Path::new("specs/proto.md")),
        Path::new(".duvet/requirements/specs/proto")
    );
    assert_eq!(
        out_dir(out, None, Path::new("../up/../x.txt")),
        Path::new(".duvet/requirements/up/x")
    );
    assert_eq!(
        out_dir(
            out,
            Some(Path::new(".duvet/specifications")),
            Path::new(".duvet/specifications/www.rfc-editor.org/rfc/rfc9000.txt")
        ),
        Path::new(".duvet/requirements/www.rfc-editor.org/rfc/rfc9000")
    );
    assert_eq!(
        out_dir(out, None, Path::new(".duvet/requirements/a/b.md")),
        Path::new(".duvet/requirements/a/b")
    );
}
