//! `duvet report --html` and `[report.html]`: the page on the fixture project
//! (tests/fixtures/upstream) — each requirement's status as duvet 0.4.3's report derives it
//! from its JSON report, the totals, the links to the code and to issues — and on a hostile
//! project, whose text and names never become markup. The page in a browser (axe, phone width,
//! the filters by keyboard and without JavaScript) is clients/web/test/duvet-report.test.mjs.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::{Command, Output};

use serde_json::Value;

use crate::support::{BIN, Project};

const CSP: &str = "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; \
                   style-src 'unsafe-inline'; img-src data:; base-uri 'none'; form-action 'none'\">";

fn fixture() -> Project {
    let p = Project::new();
    let from = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/upstream");
    p.copy_from(&from);
    p
}

fn report(p: &Project, args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut cmd = Command::new(BIN);
    cmd.arg("report")
        .args(args)
        .current_dir(p.root())
        .env_remove("CI");
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = cmd.output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

fn read(p: &Project, rel: &str) -> String {
    std::fs::read_to_string(p.path(rel)).unwrap()
}

/// The tags the page is made of: nothing that runs or loads.
const TAGS: &[&str] = &[
    "!DOCTYPE", "html", "head", "meta", "link", "title", "style", "body", "header", "nav", "main",
    "footer", "section", "h1", "h2", "h3", "p", "ul", "ol", "li", "dl", "dt", "dd", "a", "span",
    "div", "code", "em", "q", "br", "mark", "fieldset", "legend", "input", "label", "details",
    "summary", "table", "caption", "thead", "tbody", "tfoot", "tr", "th", "td",
];

/// The page is one file that loads nothing and runs nothing: every tag (text holds no `<`,
/// escaped) is one of [`TAGS`], without an event handler or a source, and links stay in the
/// page or go to the web.
fn assert_self_contained(html: &str) {
    assert!(html.starts_with("<!DOCTYPE html>\n<html lang=\"en\">"));
    assert!(html.contains(CSP), "the page carries its policy");
    assert!(html.ends_with("</body></html>\n"));
    let style = html
        .split("<style>")
        .nth(1)
        .unwrap()
        .split("</style>")
        .next()
        .unwrap();
    assert!(!style.contains("url(") && !style.contains("@import"));
    for tag in html.split('<').skip(1) {
        let tag = &tag[..tag.find('>').unwrap_or_else(|| panic!("unclosed <{tag}"))];
        let name = tag
            .trim_start_matches('/')
            .split([' ', '>'])
            .next()
            .unwrap();
        assert!(TAGS.contains(&name), "<{tag}>");
        let lower = tag.to_ascii_lowercase();
        assert!(!lower.contains(" src="), "<{tag}>");
        let mut words = lower.split(' ').skip(1);
        assert!(
            words.all(|w| !(w.starts_with("on") && w.contains('='))),
            "<{tag}>"
        );
        if let Some(href) = tag.split(" href=\"").nth(1) {
            assert!(
                ["#", "https://", "http://"]
                    .iter()
                    .any(|start| href.starts_with(start))
                    || (name == "link" && href.starts_with("data:,")),
                "<{tag}>"
            );
        }
    }
    assert_eq!(html.matches("<link ").count(), 1, "only the empty icon");
}

/// Each requirement's text (whitespace collapsed) and status class, from the page.
fn statuses(html: &str) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    for part in html.split("<li class=\"req s-").skip(1) {
        let status = part.split('"').next().unwrap().to_string();
        let text = part
            .split("<p class=\"rt\">")
            .nth(1)
            .unwrap()
            .split("</p>")
            .next()
            .unwrap();
        out.insert(collapse(text), status);
    }
    out
}

fn collapse(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// What duvet 0.4.3's HTML report (its script, `www/public/script.js`) calls a requirement,
/// from the counts of its JSON report.
fn status_0_4_3(s: &Value) -> &'static str {
    let n = |k: &str| s[k].as_u64().unwrap_or(0);
    let spec = n("spec");
    if (spec == n("citation") && spec == n("test")) || spec == n("implication") {
        "complete"
    } else if spec == n("exception") {
        "exception"
    } else if spec == n("citation") {
        "missing-test"
    } else if spec == n("test") {
        "missing-citation"
    } else if n("todo") > 0 {
        "not-started"
    } else if n("incomplete") == spec {
        "not-covered"
    } else {
        "partial"
    }
}

#[test]
fn each_requirement_has_the_status_0_4_3_derives_from_its_json_report() {
    let p = fixture();
    report(&p, &["--html", "out/report.html"], &[]);
    let html = read(&p, "out/report.html");
    assert_self_contained(&html);

    // 0.4.3's own JSON report of the fixture, as recorded.
    let recorded: Value = serde_json::from_str(
        &std::fs::read_to_string(
            Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/upstream-0.4.3/report.json"),
        )
        .unwrap(),
    )
    .unwrap();
    let mut expected = BTreeMap::new();
    for (n, counts) in recorded["statuses"].as_object().unwrap() {
        let anno = &recorded["annotations"][n.parse::<usize>().unwrap()];
        if anno["type"] == "SPEC" {
            expected.insert(
                collapse(anno["comment"].as_str().unwrap()),
                status_0_4_3(counts).to_string(),
            );
        }
    }
    assert_eq!(expected.len(), 9);
    assert_eq!(statuses(&html), expected);
    // Named as people read them.
    assert_eq!(
        expected["The output length MUST NOT exceed 255 times the hash length."],
        "complete"
    );
    assert_eq!(
        expected["A server MUST accept BREW and POST."], "partial",
        "one space between two quotes is no byte of either"
    );
    assert_eq!(expected["The pot MUST be warmed."], "not-started");
}

#[test]
fn the_page_totals_each_specification_and_the_filters_count_each_status() {
    let p = fixture();
    report(&p, &["--html", "out/report.html"], &[]);
    let html = read(&p, "out/report.html");
    assert!(html.contains(
        "<p class=\"sum\">2 specifications, 9 requirements: 1 complete or excepted (11.1%)</p>"
    ));
    // The filters: a radio group, all of it shown at first, with each status's count.
    for (slug, label, n) in [
        ("all", "All", 9),
        ("complete", "Complete", 1),
        ("exception", "Exception", 0),
        ("missing-test", "Missing test", 1),
        ("missing-citation", "Missing citation", 2),
        ("partial", "Partial coverage", 2),
        ("not-started", "Not started", 1),
        ("not-covered", "Not covered", 2),
    ] {
        let input = format!("<input type=\"radio\" name=\"show\" id=\"f-{slug}\"");
        assert!(html.contains(&input), "{slug}");
        let at = html.find(&format!("<label for=\"f-{slug}\">")).unwrap();
        let label_html = &html[at..at + html[at..].find("</label>").unwrap()];
        assert!(
            label_html.contains(&format!("{label} <span class=\"n\">{n}</span>")),
            "{label_html}"
        );
        // Its rule hides the other requirements.
        if slug != "all" {
            assert!(html.contains(&format!("body:has(#f-{slug}:checked) .req:not(.s-{slug})")));
        }
    }
    assert!(html.contains("id=\"f-all\" checked>"));
    // Per specification: the table by status and level, its last row the totals.
    let proto = section_of(&html, "<section class=\"spec\" id=\"spec0\">");
    assert!(proto.contains("<h2>Proto</h2>"), "the Markdown title");
    assert!(proto.contains("6 requirements: 0 complete or excepted (0%)"));
    assert!(proto.contains(
        "<tfoot><tr><th scope=\"row\">All</th><td>5</td><td>1</td><td class=\"zero\">0</td>\
         <td>6</td></tr></tfoot>"
    ));
    let hkdf = section_of(&html, "<section class=\"spec\" id=\"spec1\">");
    assert!(hkdf.contains("<h2>specs/rfc5869.txt</h2>"));
    assert!(hkdf.contains(
        "<tr><th scope=\"row\"><span class=\"badge b-complete\">Complete</span></th><td>1</td>\
         <td class=\"zero\">0</td><td class=\"zero\">0</td><td>1</td></tr>"
    ));
    // IETF sections are numbered as 0.4.3 shows them; a section nobody references is not shown.
    assert!(hkdf.contains("<h3>2.2. Expand</h3>"));
    assert!(!hkdf.contains("2. HMAC-based Key Derivation Function"));
    // The quoted text is highlighted in the section, and each requirement leads to its place.
    assert!(html.contains(
        "<mark class=\"h-part\" id=\"q0\">A server MUST accept BREW</mark><mark class=\"h-none\"> \
         </mark><mark class=\"h-part\">and POST.</mark>"
    ));
    assert!(html.contains("<a class=\"go\" href=\"#q0\">in the text</a>"));
    assert!(
        html.contains("This section is informative. <mark class=\"h-cite\">Pots are round.</mark>")
    );
    // A reference to a whole section is listed under it.
    assert!(html.contains(
        "References to the whole section:</p><ul class=\"cites\"><li><span class=\"k k-citation\">\
         Citation</span> <code>src/lib.rs#L48</code></li>"
    ));
}

fn section_of<'a>(html: &'a str, start: &str) -> &'a str {
    let at = html.find(start).unwrap();
    let rest = &html[at + start.len()..];
    &rest[..rest.find("<section class=\"spec\"").unwrap_or(rest.len())]
}

#[test]
fn citations_link_to_the_code_and_todos_to_their_issues() {
    let p = fixture();
    // An exception, and TODOs tracked by an issue number and by an issue's URL.
    p.write(
        "src/more.rs",
        "//= specs/proto.md#halves\n//= type=exception\n//= reason=Logs are not rotated here.\n\
         //# The server SHOULD rotate logs daily.\nfn logs() {}\n\n\
         //= specs/rfc5869.txt#section-2.2\n//= type=todo\n//= tracking-issue=42\n//= feature=info\n\
         //# The info string MAY be empty.\nfn info() {}\n\n\
         //= specs/proto.md#todo\n//= type=todo\n//= tracking-issue=https://tracker.example/T-7\n\
         //# The pot MUST be warmed.\nfn warm() {}\n",
    );
    report(
        &p,
        &[
            "--html",
            "out/report.html",
            "--blob-link",
            "https://github.com/o/r/blob/main/",
            "--issue-link",
            "https://github.com/o/r/issues/",
        ],
        &[],
    );
    let html = read(&p, "out/report.html");
    assert_self_contained(&html);
    let s = statuses(&html);
    assert_eq!(s["The server SHOULD rotate logs daily."], "exception");
    assert_eq!(s["The info string MAY be empty."], "not-started");
    // `{blob_link}/{source}#L{line}`, the trailing slash dropped, as 0.4.3 links.
    assert!(html.contains(
        "<a href=\"https://github.com/o/r/blob/main/src/lib.rs#L2\"><code>src/lib.rs#L2</code></a>"
    ));
    assert!(html.contains("<a href=\"https://github.com/o/r/blob/main/tests/t.rs#L20\">"));
    // `{issue_link}/{issue}`; an issue that is a URL is its own link.
    assert!(html.contains(
        "<span class=\"m\">issue <a href=\"https://github.com/o/r/issues/42\">42</a></span> \
         <span class=\"m\">feature info</span>"
    ));
    assert!(
        html.contains(
            "issue <a href=\"https://tracker.example/T-7\">https://tracker.example/T-7</a>"
        )
    );
    // An exception shows its reason.
    assert!(html.contains("<span class=\"why\">Logs are not rotated here.</span>"));
    // A requirement not done can be turned into an issue (0.4.3's body and labels); a done one
    // cannot.
    assert!(html.contains(
        "<a href=\"https://github.com/o/r/issues/new?body=%0AFrom+%5BTodo%5D%28specs%2Fproto.md\
         %23todo%29+in+%5BProto%5D%28specs%2Fproto.md%29%3A%0A%0A%3E+The+pot+MUST+be+warmed.\
         &amp;labels=compliance%2Ccompliance%3AMUST%2Cspec%3AProto\">Open an issue for it</a>"
    ));
    let complete = html
        .split("<li class=\"req s-complete\"")
        .nth(1)
        .unwrap()
        .split("</li></ul></li>")
        .next()
        .unwrap();
    assert!(!complete.contains("Open an issue"), "{complete}");

    // Without links the places are plain text.
    let q = fixture();
    report(&q, &["--html", "out/report.html"], &[]);
    let plain = read(&q, "out/report.html");
    assert!(
        plain.contains("<span class=\"k k-citation\">Citation</span> <code>src/lib.rs#L2</code>")
    );
    assert!(!plain.contains("href=\"https://"));
    assert!(!plain.contains("Open an issue"));
}

#[test]
fn the_configured_report_is_written_where_report_html_says_with_its_links() {
    let p = fixture();
    // The fixture turns it off: nothing is written by default.
    report(&p, &[], &[]);
    assert!(!p.path(".duvet/reports/report.html").exists());

    let config = read(&p, ".duvet/config.toml").replace(
        "[report.html]\nenabled = false\n",
        "[report.html]\npath = \"site/compliance.html\"\n\
         blob-link = \"https://example.com/${{ BRANCH || 'main' }}\"\n\
         issue-link = \"https://example.com/issues\"\n",
    );
    p.write(".duvet/config.toml", &config);
    let out = report(&p, &["--html", "also.html"], &[("BRANCH", "dev")]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("Wrote also.html"), "{err}");
    assert!(err.contains("site/compliance.html"), "{err}");
    let html = read(&p, "site/compliance.html");
    assert_eq!(html, read(&p, "also.html"));
    assert!(html.contains("href=\"https://example.com/dev/src/lib.rs#L2\""));
    assert!(html.contains("href=\"https://example.com/issues/new?body="));
    // The command line's link wins over the config's.
    report(&p, &["--blob-link", "https://cli.example/b"], &[]);
    let html = read(&p, "site/compliance.html");
    assert!(html.contains("href=\"https://cli.example/b/src/lib.rs#L2\""));

    // On by default, as in 0.4.3, where a config has no [report.html].
    let q = fixture();
    let config = read(&q, ".duvet/config.toml").replace("[report.html]\nenabled = false\n", "");
    q.write(".duvet/config.toml", &config);
    report(&q, &[], &[]);
    assert_self_contained(&read(&q, ".duvet/reports/report.html"));
}

#[test]
fn hostile_text_and_names_stay_text() {
    let p = Project::new();
    p.write(
        ".duvet/config.toml",
        "[[source]]\npattern = \"src/**/*.rs\"\n\n[[specification]]\nsource = \"specs/hostile.md\"\n\
         format = \"markdown\"\n\n[report.html]\nenabled = false\n",
    );
    p.write(
        "specs/hostile.md",
        "# Hostile <b>title</b> & co\n\n\
         ## Tags & <script>alert(1)</script> {#tags}\n\n\
         A client MUST escape \"<img src=x onerror=alert(1)>\" & 'quotes'.\n\
         </details></main><script>alert(2)</script>\n",
    );
    p.write(
        ".duvet/requirements/specs/hostile/tags.toml",
        "target = \"specs/hostile.md#tags\"\n\n[[spec]]\nlevel = \"MUST\"\nquote = '''\n\
         A client MUST escape \"<img src=x onerror=alert(1)>\" & 'quotes'.\n'''\n",
    );
    p.write(
        "src/we\"ird <x>.rs",
        "//= specs/hostile.md#tags\n//# A client MUST escape \"<img src=x onerror=alert(1)>\"\n\
         fn f() {}\n\n\
         //= specs/hostile.md#tags\n//= type=todo\n//= tracking-issue=1\" onmouseover=\"alert(4)\n\
         //= feature=<b>f</b>\n//= reason=</li><script>alert(3)</script> bell \u{7} nul \u{0}\n\
         //# & 'quotes'.\nfn g() {}\n\n\
         //= specs/hostile.md#tags\n//# </details></main><script>alert(2)</script>\nfn h() {}\n",
    );
    report(
        &p,
        &[
            "--html",
            "r.html",
            "--blob-link",
            "javascript:alert(5)//",
            "--issue-link",
            "https://issues.example/",
        ],
        &[],
    );
    let html = read(&p, "r.html");
    assert_self_contained(&html);
    assert!(!html.contains("<b>"), "no markup from the project");
    assert!(!html.contains(" onmouseover=\""));
    assert!(!html.contains('\u{7}') && !html.contains('\u{0}'));
    for escaped in [
        "<h2>Hostile &lt;b&gt;title&lt;/b&gt; &amp; co</h2>",
        "<h3>Tags &amp; &lt;script&gt;alert(1)&lt;/script&gt;</h3>",
        "<p class=\"rt\">A client MUST escape &quot;&lt;img src=x onerror=alert(1)&gt;&quot; &amp; \
         &#39;quotes&#39;.</p>",
        "<span class=\"why\">&lt;/li&gt;&lt;script&gt;alert(3)&lt;/script&gt; bell \u{fffd} nul \
         \u{fffd}</span>",
        "&lt;/details&gt;&lt;/main&gt;&lt;script&gt;alert(2)&lt;/script&gt;</mark>",
        // Quoted text that is no requirement: its annotation is listed with the section's.
        "Annotations that quote no requirement:</p><ul class=\"cites\"><li><span class=\"k \
         k-citation\">Citation</span> <code>src/we&quot;ird &lt;x&gt;.rs#L13</code><br><q>\
         &lt;/details&gt;&lt;/main&gt;&lt;script&gt;alert(2)&lt;/script&gt;</q></li></ul>",
        "<span class=\"m\">feature &lt;b&gt;f&lt;/b&gt;</span>",
        // A blob link that is no web address makes no link: the place is plain text.
        "<code>src/we&quot;ird &lt;x&gt;.rs#L1</code>",
        // The issue is a path segment of the link, encoded, and text beside it.
        "<a href=\"https://issues.example/1%22%20onmouseover=%22alert(4)\">1&quot; \
         onmouseover=&quot;alert(4)</a>",
    ] {
        assert!(html.contains(escaped), "{escaped} in\n{html}");
    }
}
