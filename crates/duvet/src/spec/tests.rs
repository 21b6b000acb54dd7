//! The model's sections as made from duvet 0.4.3's reading of IETF and Markdown texts.

use super::*;

fn ietf(text: &str) -> Vec<Section> {
    sections(text, Format::Ietf)
}

fn markdown(text: &str) -> Vec<Section> {
    sections(text, Format::Markdown)
}

mod document_title {
    use super::*;

    #[test]
    fn ietf_titles_indented_little_or_wrapped_are_found() {
        let rfc5869 = "Internet Engineering Task Force (IETF)                       H. Krawczyk\nRequest for Comments: 5869                                  IBM Research\nCategory: Informational                                        P. Eronen\nISSN: 2070-1721                                                    Nokia\n                                                                May 2010\n\n\n       HMAC-based Extract-and-Expand Key Derivation Function (HKDF)\n\nAbstract\n\n   This document specifies a simple HKDF.\n";
        assert_eq!(
            title(rfc5869, Format::Ietf),
            "HMAC-based Extract-and-Expand Key Derivation Function (HKDF)"
        );
        let rfc8446 = "\u{feff}Internet Engineering Task Force (IETF)                       E. Rescorla\nRequest for Comments: 8446                                       Mozilla\n                                                             August 2018\n\n\n          The Transport Layer Security (TLS) Protocol Version 1.3\n\nAbstract\n";
        assert_eq!(
            title(rfc8446, Format::Ietf),
            "The Transport Layer Security (TLS) Protocol Version 1.3"
        );
        let wrapped = "Network Working Group                                         A. Author\nInternet-Draft                                                   Example\nIntended status: Standards Track                          March 1, 2024\n\n               A Rather Long Title for a Protocol That Needs\n                          Two Lines to Say It\n                      draft-ietf-example-long-title-07\n\nAbstract\n";
        assert_eq!(
            title(wrapped, Format::Ietf),
            "A Rather Long Title for a Protocol That Needs Two Lines to Say It"
        );
    }

    #[test]
    fn a_document_without_a_title_has_none() {
        assert_eq!(title("", Format::Ietf), "");
        assert_eq!(
            title("Header line\n\nAbstract\n\n   Text.\n", Format::Ietf),
            ""
        );
        assert_eq!(title("Header\n\n1.  Introduction\n", Format::Ietf), "");
        assert_eq!(title("# Coffee\n\nText.\n", Format::Markdown), "Coffee");
        assert_eq!(
            title("\u{feff}# Coffee\r\n\r\nText.\r\n", Format::Markdown),
            "Coffee"
        );
    }
}

mod ietf_text {
    use super::*;

    /// A condensed RFC 9114 in the RFC Editor's layout: document header, named sections, a
    /// table of contents, page breaks (one in the middle of a paragraph), numbered sections,
    /// appendices and the authors' addresses.
    const RFC: &str = "\
Internet Engineering Task Force (IETF)                     M. Bishop, Ed.
Request for Comments: 9114                                        Akamai
Category: Standards Track                                      June 2022
ISSN: 2070-1721


                                 HTTP/3

Abstract

   The QUIC transport protocol has several features that are desirable
   in a transport for HTTP.

Status of This Memo

   This is an Internet Standards Track document.

Table of Contents

   1.  Introduction  . . . . . . . . . . . . . . . . . . . . . . . .   4
     1.1.  Prior Versions of HTTP  . . . . . . . . . . . . . . . . .   4
   2.  HTTP/3 Protocol Overview  . . . . . . . . . . . . . . . . . .   5
   Appendix A.  Considerations for Transitioning from HTTP/2 . . . .  47
   Authors' Addresses  . . . . . . . . . . . . . . . . . . . . . . .  58

1.  Introduction

   HTTP semantics ([HTTP]) are used for a broad range of services on the
   Internet.

1.1.  Prior Versions of HTTP

   HTTP/1.1 ([HTTP/1.1]) uses whitespace-delimited text fields to convey
   HTTP messages.



Bishop                       Standards Track                    [Page 4]
\u{c}
RFC 9114                         HTTP/3                        June 2022


2.  HTTP/3 Protocol Overview

   HTTP/3 provides a transport for HTTP semantics using the QUIC
   transport protocol and an internal framing layer similar to HTTP/2.

   Once a client knows that an HTTP/3 server exists at a certain
   endpoint, it opens a QUIC connection.  Clients SHOULD support the
   most recent version and MUST

Bishop                       Standards Track                    [Page 5]
\u{c}
RFC 9114                         HTTP/3                        June 2022


   NOT use a version the server does not support.

   *  an item
      that wraps

2.1.  Document Organization

   The following sections provide a detailed overview.

Appendix A.  Considerations for Transitioning from HTTP/2

   HTTP/3 is strongly informed by HTTP/2.

A.1.  Streams

   HTTP/3 permits use of a larger number of streams (2^62-1) than
   HTTP/2.

      +-------+-------+
      | Frame | Value |
      +-------+-------+

Acknowledgments

   Robbie Shade and Mike Warres were the authors of draft-shade-quic-
   http2-mapping.

Index

   A C D

Author's Address

   Mike Bishop (editor)
   Akamai

   Email: mbishop@evequefou.be
";

    fn ids(sections: &[Section]) -> Vec<&str> {
        sections.iter().map(|s| s.id.as_str()).collect()
    }

    fn get<'a>(sections: &'a [Section], id: &str) -> &'a Section {
        sections
            .iter()
            .find(|s| s.id == id)
            .unwrap_or_else(|| unreachable!("no section {id}"))
    }

    #[test]
    fn sections_of_an_rfc() {
        let sections = ietf(RFC);
        assert_eq!(
            ids(&sections),
            vec![
                "name-abstract",
                "name-status-of-this-memo",
                "name-table-of-contents",
                "section-1",
                "section-1.1",
                "section-2",
                "section-2.1",
                "appendix-A",
                "appendix-A.1",
                "name-acknowledgments",
                "name-index",
                "name-author-s-address",
            ]
        );
        let titles: Vec<&str> = sections.iter().map(|s| s.title.as_str()).collect();
        assert_eq!(
            titles,
            vec![
                "Abstract",
                "Status of This Memo",
                "Table of Contents",
                "Introduction",
                "Prior Versions of HTTP",
                "HTTP/3 Protocol Overview",
                "Document Organization",
                "Considerations for Transitioning from HTTP/2",
                "Streams",
                "Acknowledgments",
                "Index",
                "Author's Address",
            ]
        );
    }

    #[test]
    fn body_lines_are_dedented_and_trimmed() {
        let sections = ietf(RFC);
        assert_eq!(
            get(&sections, "name-abstract").lines,
            vec![
                "The QUIC transport protocol has several features that are desirable",
                "in a transport for HTTP.",
            ]
        );
        assert_eq!(
            get(&sections, "appendix-A.1").lines,
            vec![
                "HTTP/3 permits use of a larger number of streams (2^62-1) than",
                "HTTP/2.",
                "",
                "   +-------+-------+",
                "   | Frame | Value |",
                "   +-------+-------+",
            ]
        );
        assert_eq!(
            get(&sections, "name-author-s-address").content(),
            "Mike Bishop (editor)\nAkamai\n\nEmail: mbishop@evequefou.be"
        );
    }

    #[test]
    fn table_of_contents_is_not_headings() {
        let sections = ietf(RFC);
        let toc = get(&sections, "name-table-of-contents");
        assert_eq!(toc.lines.len(), 5);
        assert!(toc.lines[0].starts_with("1.  Introduction  . . ."));
        assert_eq!(sections.iter().filter(|s| s.id == "section-1").count(), 1);
    }

    #[test]
    fn page_furniture_is_removed() {
        let sections = ietf(RFC);
        for section in &sections {
            for line in &section.lines {
                assert!(!line.contains("[Page"), "{line:?}");
                assert!(!line.starts_with("RFC 9114"), "{line:?}");
                assert!(!line.contains('\u{c}'), "{line:?}");
            }
        }
        // A page break between paragraphs: the section ends cleanly.
        assert_eq!(
            get(&sections, "section-1.1").lines,
            vec![
                "HTTP/1.1 ([HTTP/1.1]) uses whitespace-delimited text fields to convey",
                "HTTP messages.",
            ]
        );
        // A page break inside a sentence joins the paragraph back together.
        assert_eq!(
            get(&sections, "section-2").lines,
            vec![
                "HTTP/3 provides a transport for HTTP semantics using the QUIC",
                "transport protocol and an internal framing layer similar to HTTP/2.",
                "",
                "Once a client knows that an HTTP/3 server exists at a certain",
                "endpoint, it opens a QUIC connection.  Clients SHOULD support the",
                "most recent version and MUST",
                "NOT use a version the server does not support.",
                "",
                "*  an item",
                "   that wraps",
            ]
        );
    }

    #[test]
    fn page_break_after_a_sentence_keeps_a_paragraph_break() {
        let text = "\
1.  Intro

   First paragraph ends here.

Doe                          Standards Track                    [Page 1]
\u{c}
RFC 9999                     Example                           June 2024


   Second paragraph.
";
        let sections = ietf(text);
        assert_eq!(
            sections[0].lines,
            vec!["First paragraph ends here.", "", "Second paragraph."]
        );
    }

    #[test]
    fn draft_headers_and_inline_form_feeds() {
        // A form feed on its own line: the line after it (the draft's running header) goes.
        let text = "\
Network Working Group                                          A. Author
Internet-Draft                                                   Example
Intended status: Standards Track                            3 March 2024

1.  Introduction

   Text before the break that continues

Author                  Expires 4 September 2024                [Page 2]
\u{c}
Internet-Draft                  Example Protocol              March 2024


   after the break.

2.  Next

   Done.
";
        let sections = ietf(text);
        assert_eq!(ids(&sections), vec!["section-1", "section-2"]);
        assert_eq!(
            sections[0].lines,
            vec!["Text before the break that continues", "after the break."]
        );
        assert_eq!(sections[1].lines, vec!["Done."]);
        // A form feed starting a line is no page break for 0.4.3: the header is text (and
        // the form feed, whitespace, counts in the indentation the lines share).
        let inline = text.replace("\u{c}\nInternet-Draft", "\u{c}Internet-Draft");
        let sections = ietf(&inline);
        assert_eq!(
            sections[0].lines,
            vec![
                "  Text before the break that continues",
                "Internet-Draft                  Example Protocol              March 2024",
                "",
                "  after the break."
            ]
        );
    }

    #[test]
    fn header_after_form_feed_without_known_prefix() {
        let text = "\
1.  Intro

   Some text.
\u{c}
Draft                           Foo Protocol                    May 2020

   More text.
";
        let sections = ietf(text);
        assert_eq!(sections[0].lines, vec!["Some text.", "", "More text."]);
    }

    #[test]
    fn heading_forms() {
        let text = "\
1.  One

2  Two without a dot

2.1 Single space

2.1.1.  Deep

3:  Colon

4.

   id only

10.1.2.  Not monotonic but after a blank line

Appendix A.  Letter with dot

Appendix B: Colon

APPENDIX C - Dash

Annex D

Appendix E.1.  Numbered in appendix

F.1.  Bare appendix subsection
";
        let sections = ietf(text);
        let found: Vec<(&str, &str)> = sections
            .iter()
            .map(|s| (s.id.as_str(), s.title.as_str()))
            .collect();
        assert_eq!(
            found,
            vec![
                ("section-1", "One"),
                ("section-2", "Two without a dot"),
                ("section-2.1", "Single space"),
                ("section-2.1.1", "Deep"),
                ("section-3", "Colon"),
                ("section-4", ""),
                ("section-10.1.2", "Not monotonic but after a blank line"),
                ("appendix-A", "Letter with dot"),
                ("appendix-B", "Colon"),
                ("appendix-C", "Dash"),
                ("appendix-D", ""),
                ("appendix-E.1", "Numbered in appendix"),
                ("appendix-F.1", "Bare appendix subsection"),
            ]
        );
        assert_eq!(get(&sections, "section-4").lines, vec!["id only"]);
    }

    #[test]
    fn headings_without_a_blank_line_must_follow_the_previous_one() {
        let text = "\
1.  Introduction
   Text.
2.  Next follows 1
   More text.
7.  Does not follow 2
5000 is not a section
0.  Zero is not a section
2.1.A  Letters only first
";
        let sections = ietf(text);
        assert_eq!(ids(&sections), vec!["section-1", "section-2"]);
        assert_eq!(
            sections[1].lines,
            vec![
                "   More text.",
                "7.  Does not follow 2",
                "5000 is not a section",
                "0.  Zero is not a section",
                "2.1.A  Letters only first",
            ]
        );

        // Without a previous heading, only `1` may start without a blank line.
        let sections = ietf("header\n3.  Three\n   x\n");
        assert!(sections.is_empty());
        let sections = ietf("header\n1.  One\n   x\n2.  Two\n");
        assert_eq!(ids(&sections), vec!["section-1", "section-2"]);
    }

    #[test]
    fn rejected_titles() {
        let text = "\
1.  Intro

2.  Entry ........................................ 4

2.  Entry . . . . . . . . . . . . . . . . . . . . 4

2.  ;semicolon

2.  ends with brace {

2.  too     much spacing

5.  | table | row |

2.  Real
";
        let sections = ietf(text);
        assert_eq!(ids(&sections), vec!["section-1", "section-2"]);
        assert_eq!(sections[1].title, "Real");
    }

    #[test]
    fn table_rows_must_follow_in_order() {
        let text = "\
1.  Intro

2.  Good

7   | not | a heading |

3  | still | ok |
";
        let sections = ietf(text);
        assert_eq!(ids(&sections), vec!["section-1", "section-2", "section-3"]);
        assert_eq!(sections[1].lines, vec!["7   | not | a heading |"]);
    }

    #[test]
    fn named_sections_need_blank_lines_around_them() {
        let text = "\
1.  Intro

   Text.
Abstract
   Not a heading.

   Abstract

Security Considerations

   None.

Acknowledgements

   Thanks.
";
        let sections = ietf(text);
        assert_eq!(
            ids(&sections),
            vec![
                "section-1",
                "name-security-considerations",
                "name-acknowledgements"
            ]
        );
        assert_eq!(
            sections[0].lines,
            vec![
                "   Text.",
                "Abstract",
                "   Not a heading.",
                "",
                "   Abstract"
            ]
        );
    }

    #[test]
    fn a_wrapped_title_is_its_first_line_as_0_4_3_reads_it() {
        let text = "\
1.  Intro

4.  A Very Long Section Title That Wraps Onto
    The Next Line

   Body.

Appendix A.  Another Long Title
             Continued

   Body.
";
        let sections = ietf(text);
        assert_eq!(
            sections[1].title,
            "A Very Long Section Title That Wraps Onto"
        );
        assert_eq!(sections[1].lines, vec![" The Next Line", "", "Body."]);
        assert_eq!(sections[2].title, "Another Long Title");
        assert_eq!(sections[2].lines, vec!["          Continued", "", "Body."]);
    }

    #[test]
    fn text_before_the_first_heading_is_no_section() {
        assert!(ietf("Just a title\n\n   Some text.\n").is_empty());
        assert!(ietf("").is_empty());
    }

    #[test]
    fn crlf_and_bom() {
        let text = "\u{feff}1.  Intro\r\n\r\n   Text.\r\n\r\n2.  Next\r\n   More.\r\n";
        let sections = ietf(text);
        assert_eq!(ids(&sections), vec!["section-1", "section-2"]);
        assert_eq!(sections[0].lines, vec!["Text."]);
        assert_eq!(sections[1].lines, vec!["More."]);
    }

    #[test]
    fn blank_runs_collapse() {
        let sections = ietf("1.  A\n\n\n   x\n\n\n\n   y\n   \n\t\n   z\n\n\n");
        assert_eq!(sections[0].lines, vec!["x", "", "y", "", "z"]);
    }

    #[test]
    fn slugs() {
        let slugify = crate::extract::slugify;
        assert_eq!(slugify("Authors' Addresses"), "authors-addresses");
        assert_eq!(slugify("Status of This Memo"), "status-of-this-memo");
        assert_eq!(slugify("  --test_-_cool"), "test-cool");
        assert_eq!(slugify("My Test String!!!1!1"), "my-test-string-1-1");
    }

    #[test]
    fn no_panic_on_odd_input() {
        let odd = [
            "\u{c}",
            "\u{c}\u{c}\u{c}",
            "\u{c}é",
            "é\u{c}",
            "1",
            "1.",
            "1:",
            "A.",
            "A.1",
            "Appendix",
            "Appendix ",
            "Appendix é",
            "Appendix É. Title",
            "Appendix A",
            "Appendix A.",
            "Annex 1",
            "1.é",
            "1. é",
            "1.\u{3000}全角",
            "[Page ]",
            "[Page 1",
            "x [Page é]",
            "RFC ",
            "RFC 1",
            "RFC é  x",
            "999999999999999999999.  Big",
            "1..2.  Empty part",
            ".1  Leading dot",
            "\r",
            "\n\n\n",
            "Abstract",
            "\nAbstract\n",
            "1.  T\n\u{c}\n",
            "1.  T\n    é\n",
        ];
        for text in odd {
            let _ = ietf(text);
        }
        let sections = ietf("Annex 1  One\n");
        assert_eq!(ids(&sections), vec!["appendix-1"]);
        let sections = ietf("\nAbstract\n\n   x\n");
        assert_eq!(ids(&sections), vec!["name-abstract"]);
    }
}

mod markdown_text {
    use super::*;
    use crate::extract::slugify;

    fn summary(sections: &[Section]) -> Vec<(&str, &str)> {
        sections
            .iter()
            .map(|s| (s.id.as_str(), s.title.as_str()))
            .collect()
    }

    #[test]
    fn atx_sections_are_flat() {
        let sections = markdown(
            "\
# This is a test

Content goes here. Another
sentence here.

## This is another test

More content goes here

### Nested section

Testing 123

## Up one

Another section
",
        );
        assert_eq!(
            summary(&sections),
            vec![
                ("this-is-a-test", "This is a test"),
                ("this-is-another-test", "This is another test"),
                ("nested-section", "Nested section"),
                ("up-one", "Up one"),
            ]
        );
        assert_eq!(
            sections[0].lines,
            vec!["Content goes here. Another", "sentence here."]
        );
        assert_eq!(sections[1].lines, vec!["More content goes here"]);
        assert_eq!(sections[3].content(), "Another section");
    }

    #[test]
    fn explicit_ids() {
        let sections = markdown(
            "\
# Heading with ID {#custom-id}

Content under heading with custom ID.

## Another heading {#another-id .class key=value}

More content here.

### Closing hashes ### {#closed}

# Regular heading

This heading doesn't have a custom ID.

## Classes only {.note}

## Two ids {#first #second}
",
        );
        assert_eq!(
            summary(&sections),
            vec![
                ("custom-id", "Heading with ID"),
                ("another-id", "Another heading"),
                ("closed", "Closing hashes"),
                ("regular-heading", "Regular heading"),
                ("classes-only", "Classes only"),
                ("second", "Two ids"),
            ]
        );
    }

    #[test]
    fn duplicate_ids_are_numbered() {
        let sections = markdown(
            "\
# Duplicate header

testing 123

## Duplicate header

other test

### Duplicate header

# Other {#duplicate-header-3}

# Duplicate header
",
        );
        assert_eq!(
            sections.iter().map(|s| s.id.as_str()).collect::<Vec<_>>(),
            vec![
                "duplicate-header",
                "duplicate-header-1",
                "duplicate-header-2",
                "duplicate-header-3",
                "duplicate-header-4",
            ]
        );
        assert_eq!(sections[0].lines, vec!["testing 123"]);
        assert_eq!(sections[1].lines, vec!["other test"]);
        assert!(sections[2].lines.is_empty());
    }

    #[test]
    fn slugs_follow_the_slug_crate() {
        assert_eq!(slugify("What's New?"), "what-s-new");
        assert_eq!(slugify("TLS_AES_128 -- Cipher"), "tls-aes-128-cipher");
        assert_eq!(slugify("  --test_-_cool"), "test-cool");
        assert_eq!(slugify("My Test String!!!1!1"), "my-test-string-1-1");
        assert_eq!(slugify("You & Me"), "you-me");
        assert_eq!(slugify("user@example.com"), "user-example-com");
        assert_eq!(slugify("Æúü--cool?"), "aeuu-cool");
        assert_eq!(slugify("Straße über"), "strasse-uber");
        assert_eq!(slugify("Überblick — Δέλτα"), "uberblick-δέλτα");
        assert_eq!(slugify("!!!"), "");
        assert_eq!(slugify("Foo **bar baz**"), "foo-bar-baz");
    }

    #[test]
    fn code_fences_and_comments_hide_headings() {
        let sections = markdown(
            "\
# Real

```markdown
# Not a heading
Not a title
===
```

~~~~
## Still code
~~~
### Still code (short close)
~~~~

    # indented code

<!--
# commented out
-->
<!-- # one-line comment -->

## After
",
        );
        assert_eq!(
            summary(&sections),
            vec![("real", "Real"), ("after", "After")]
        );
        assert_eq!(sections[0].lines.len(), 18);
        assert_eq!(sections[0].lines[1], "# Not a heading");
        assert_eq!(sections[0].lines[17], "<!-- # one-line comment -->");
    }

    #[test]
    fn setext_headings() {
        let sections = markdown(
            "\
Preamble text.

Title
=====

Intro text.

Foo *bar
baz* {#blah}
---

Content goes here. Another
sentence here.

- a list item
---

> quote
===

***

Sub
--
body
",
        );
        assert_eq!(
            summary(&sections),
            vec![
                ("title", "Title"),
                ("blah", "Foo *bar baz*"),
                ("sub", "Sub"),
            ]
        );
        assert_eq!(sections[0].lines, vec!["Intro text."]);
        assert_eq!(
            sections[1].lines,
            vec![
                "Content goes here. Another",
                "sentence here.",
                "",
                "- a list item",
                "---",
                "",
                "> quote",
                "===",
                "",
                "***",
            ]
        );
        assert_eq!(sections[2].lines, vec!["body"]);
    }

    #[test]
    fn atx_edge_cases() {
        let sections = markdown(
            "\
#hashtag is not a heading
####### seven is not a heading
   # three spaces is a heading
#
# C#
## Trailing ##   
",
        );
        assert_eq!(
            summary(&sections),
            vec![
                ("three-spaces-is-a-heading", "three spaces is a heading"),
                // A heading without text: 0.4.3 titles it with its line, and slugs that.
                ("", "#"),
                ("c", "C#"),
                ("trailing", "Trailing"),
            ]
        );
    }

    #[test]
    fn text_before_the_first_heading_is_dropped() {
        let sections = markdown("Intro paragraph.\n\n# First\n\nBody.\n");
        assert_eq!(summary(&sections), vec![("first", "First")]);
        assert!(markdown("No headings at all.\n").is_empty());
        assert!(markdown("").is_empty());
    }

    #[test]
    fn front_matter_is_a_setext_heading_as_0_4_3_reads_it() {
        let sections = markdown(
            "\
---
title: Example Spec
version: 1
---

# Spec

Body.
",
        );
        assert_eq!(
            summary(&sections),
            vec![
                (
                    "title-example-spec-version-1",
                    "title: Example Spec version: 1"
                ),
                ("spec", "Spec")
            ]
        );

        // A leading thematic break is no heading.
        let sections = markdown("---\n# Spec\n\nBody.\n\n---\n");
        assert_eq!(summary(&sections), vec![("spec", "Spec")]);
        assert_eq!(sections[0].lines, vec!["Body.", "", "---"]);
    }

    #[test]
    fn crlf_bom_and_trailing_whitespace() {
        let sections = markdown("# One\r\n\r\nText.  \r\n\r\n## Two\r\nMore.\r\n");
        assert_eq!(summary(&sections), vec![("one", "One"), ("two", "Two")]);
        assert_eq!(sections[0].lines, vec!["Text."]);
        assert_eq!(sections[1].lines, vec!["More."]);
        // After a byte order mark, `#` starts no heading for 0.4.3 (its CommonMark parser
        // reads the mark as text).
        let sections = markdown("\u{feff}# One\r\n\r\nText.  \r\n\r\n## Two\r\nMore.\r\n");
        assert_eq!(summary(&sections), vec![("two", "Two")]);
    }

    #[test]
    fn requirement_spec_example() {
        let sections = markdown(
            "\
[//]: # \"Copyright Example\"

# AWS Encryption SDK Client

## Overview

The client MUST be constructed with a commitment policy.

### Initialization {#client-init}

On initialization, the caller:

- MUST provide a key provider
- MAY provide a retry count
",
        );
        assert_eq!(
            summary(&sections),
            vec![
                ("aws-encryption-sdk-client", "AWS Encryption SDK Client"),
                ("overview", "Overview"),
                ("client-init", "Initialization"),
            ]
        );
        assert!(sections[0].lines.is_empty());
        assert_eq!(sections[2].lines.len(), 4);
    }

    #[test]
    fn no_panic_on_odd_input() {
        let odd = [
            "#",
            "# {",
            "# }",
            "# {}",
            "# {#}",
            "# é {#é}",
            "# {#a}}",
            "=",
            "a\n=",
            "a\n-",
            "```",
            "```\n# x",
            "~~~\n~~",
            "<!--",
            "<!-- # x",
            "---",
            "---\n",
            "---\nkey: v",
            "---\n: v\n---",
            "\t# tab",
            " \t# mixed",
            "1.",
            "1)",
            "123456789012.",
            "-",
            "*",
            "é\n===",
            "\u{feff}",
        ];
        for text in odd {
            let _ = markdown(text);
        }
        assert_eq!(
            summary(&markdown("# {#}\n")),
            vec![("", "# {#}")],
            "an empty id is no id: the heading's line titles it, as in 0.4.3"
        );
        assert_eq!(summary(&markdown("é\n===\n")), vec![("e", "é")]);
    }
}
