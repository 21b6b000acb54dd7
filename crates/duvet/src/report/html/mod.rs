//! The HTML report of `duvet report` (`--html FILE`, `[report.html]`): one page for people,
//! self-contained and without script, made on the server in one pass into a `String`.
//!
//! For each specification: its totals (requirements by status and level), then each section
//! an annotation references, with its requirements — each one's status, level and text, and
//! the annotations that quote it, linked to the code (`blob_link`) and to their tracking issues
//! (`issue_link`) — and its text, the quoted parts highlighted by what covers them. Status
//! filters are radio buttons that CSS alone reads (`:checked`, `:has()`), so they work with
//! script off; the page's own policy (`default-src 'none'`) forbids any script, and every
//! piece of project text is escaped.
//!
//! A requirement's status is the one duvet 0.4.3's HTML report gives it, from the counts of
//! the JSON report ([`Status::of`]); its words, but for the last status, are 0.4.3's.

mod executed;
mod style;

use std::collections::HashSet;
use std::fmt::Write as _;

use super::executed::Executions;
use super::json::pieces;
use super::{Counts, Entry, Kind, Ref, Report, Target, rank};
use style::STYLE;

/// A requirement's status, in duvet 0.4.3's order (best first).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Status {
    Complete,
    Exception,
    MissingTest,
    MissingCitation,
    Partial,
    NotStarted,
    NotCovered,
}

impl Status {
    pub const ALL: [Self; 7] = [
        Self::Complete,
        Self::Exception,
        Self::MissingTest,
        Self::MissingCitation,
        Self::Partial,
        Self::NotStarted,
        Self::NotCovered,
    ];

    /// As 0.4.3's report decides it from a requirement's counts (in bytes): complete when
    /// citations and tests each cover all of it, or implications do; excepted when exceptions
    /// cover all of it; then missing a test (cited in full), missing a citation (tested in
    /// full), not started (a TODO touches it), not covered (nothing does), else partial.
    pub fn of(c: &Counts) -> Self {
        if (c.spec == c.citation && c.spec == c.test) || c.spec == c.implication {
            Self::Complete
        } else if c.exception == c.spec {
            Self::Exception
        } else if c.spec == c.citation {
            Self::MissingTest
        } else if c.spec == c.test {
            Self::MissingCitation
        } else if c.todo > 0 {
            Self::NotStarted
        } else if c.incomplete == c.spec {
            Self::NotCovered
        } else {
            Self::Partial
        }
    }

    /// Its CSS class suffix and filter name.
    pub fn slug(self) -> &'static str {
        match self {
            Self::Complete => "complete",
            Self::Exception => "exception",
            Self::MissingTest => "missing-test",
            Self::MissingCitation => "missing-citation",
            Self::Partial => "partial",
            Self::NotStarted => "not-started",
            Self::NotCovered => "not-covered",
        }
    }

    pub fn label(self) -> &'static str {
        match self {
            Self::Complete => "Complete",
            Self::Exception => "Exception",
            Self::MissingTest => "Missing test",
            Self::MissingCitation => "Missing citation",
            Self::Partial => "Partial coverage",
            Self::NotStarted => "Not started",
            Self::NotCovered => "Not covered",
        }
    }

    fn meaning(self) -> &'static str {
        match self {
            Self::Complete => {
                "citations and tests each quote all of it, or an implication covers it"
            }
            Self::Exception => "exceptions cover all of it: the project decided not to do it",
            Self::MissingTest => "citations quote all of it, tests not all",
            Self::MissingCitation => "tests quote all of it, citations not all",
            Self::Partial => "annotations quote part of it",
            Self::NotStarted => "a TODO tracks it",
            Self::NotCovered => "no annotation quotes any of it (duvet 0.4.3 says Unknown)",
        }
    }

    /// Done as far as the report goes: complete or excepted.
    fn done(self) -> bool {
        matches!(self, Self::Complete | Self::Exception)
    }

    fn index(self) -> usize {
        self as usize
    }
}

/// What a specification's part of the page is made from.
struct Plan<'a> {
    target: &'a Target,
    /// Of each section: its requirements (annotation numbers, in order).
    requirements: Vec<Vec<usize>>,
    /// Of each section: the other annotations that reference it.
    others: Vec<Vec<usize>>,
    /// Whether a section has any reference (only those are shown).
    shown: Vec<bool>,
    /// Requirements by status and level rank (0 none, 1 MAY, 2 SHOULD, 3 MUST).
    totals: [[usize; 4]; 7],
    /// With executed coverage: requirements by executed state and level rank.
    executed: Option<[[usize; 4]; 5]>,
}

impl<'a> Plan<'a> {
    fn of(report: &Report, target: &'a Target, ex: Option<&Executions>) -> Self {
        let n = target.sections.len();
        let mut plan = Self {
            target,
            requirements: vec![Vec::new(); n],
            others: vec![Vec::new(); n],
            shown: vec![false; n],
            totals: [[0; 4]; 7],
            executed: ex.map(|_| [[0; 4]; 5]),
        };
        // The references sort by annotation first: each annotation's are together.
        for r in &target.refs {
            let Some(shown) = plan.shown.get_mut(r.section) else {
                continue;
            };
            *shown = true;
            let entry = report.entries.get(r.anno);
            if r.kind == Kind::Spec {
                if plan.requirements[r.section].last() != Some(&r.anno) {
                    plan.requirements[r.section].push(r.anno);
                    let level = entry.map_or(0, |e| rank(e.annotation.level));
                    let status = plan.status(r.anno);
                    plan.totals[status.index()][usize::from(level)] += 1;
                    executed::count(&mut plan, ex, r.anno, level);
                }
            } else if plan.others[r.section].last() != Some(&r.anno) {
                plan.others[r.section].push(r.anno);
            }
        }
        plan
    }

    fn status(&self, anno: usize) -> Status {
        self.target
            .statuses
            .get(&anno)
            .map_or(Status::NotCovered, Status::of)
    }

    fn count(&self, status: Status) -> usize {
        self.totals[status.index()].iter().sum()
    }

    fn total(&self) -> usize {
        self.totals.iter().flatten().sum()
    }

    fn title(&self) -> &str {
        self.target.title.as_deref().unwrap_or(&self.target.key)
    }
}

/// The links of the report, as 0.4.3 makes them: `{blob_link}/{source}#L{line}` (the
/// annotation's own blob link, its source's, else the run's) and `{issue_link}/{issue}` (an
/// issue that is a URL as it is), trailing slashes dropped; a link whose scheme is not
/// http(s) or file is not made.
struct Links<'a> {
    blob: Option<&'a str>,
    issue: Option<&'a str>,
}

/// `link` without its trailing slashes, if that is a link to make.
fn link_base(link: &str) -> Option<&str> {
    Some(link.trim_end_matches('/')).filter(|l| !l.is_empty() && safe_url(l))
}

impl<'a> Links<'a> {
    fn new(blob: Option<&'a str>, issue: Option<&'a str>) -> Self {
        Self {
            blob: blob.and_then(link_base),
            issue: issue.and_then(link_base),
        }
    }

    /// Where `entry`'s code is: 0.4.3's page takes an annotation's blob link unless it is
    /// empty, else the run's.
    fn blob_of<'s>(&'s self, entry: &'s Entry) -> Option<&'s str> {
        match entry.blob_link.as_deref().filter(|l| !l.is_empty()) {
            Some(own) => link_base(own),
            None => self.blob,
        }
    }
}

/// Whether a URL may be a link: relative, or http, https or file.
fn safe_url(url: &str) -> bool {
    let scheme_end = url.find(':');
    let path_start = url.find(['/', '?', '#']);
    match (scheme_end, path_start) {
        (Some(colon), Some(slash)) if slash < colon => true,
        (Some(colon), _) => {
            let scheme = url[..colon].to_ascii_lowercase();
            ["http", "https", "file"].contains(&scheme.as_str())
        }
        (None, _) => true,
    }
}

/// Characters of a file path or issue that are percent-encoded in a link (`/` is kept).
const PATH: &percent_encoding::AsciiSet = &percent_encoding::CONTROLS
    .add(b' ')
    .add(b'"')
    .add(b'#')
    .add(b'%')
    .add(b'<')
    .add(b'>')
    .add(b'?')
    .add(b'`')
    .add(b'{')
    .add(b'}');

/// Write the report.
pub fn render(report: &Report, blob_link: Option<&str>, issue_link: Option<&str>) -> String {
    render_with(report, blob_link, issue_link, None)
}

/// [`render`], each requirement with its executed state when `ex` is given (totals, a
/// filter, a legend and the reports it was made from too: [`executed`]).
pub fn render_with(
    report: &Report,
    blob_link: Option<&str>,
    issue_link: Option<&str>,
    ex: Option<&Executions>,
) -> String {
    let links = Links::new(blob_link, issue_link);
    let plans: Vec<Plan> = report
        .targets
        .iter()
        .map(|t| Plan::of(report, t, ex))
        .collect();
    // About what the page takes: the sections' text, twice over with its marks, and a few
    // hundred bytes an annotation.
    let text: usize = report.targets.iter().map(|t| t.text.len()).sum();
    let mut out = String::with_capacity(16 * 1024 + 2 * text + 400 * report.entries.len());
    let w = &mut out;

    w.push_str(
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; \
         style-src 'unsafe-inline'; img-src data:; base-uri 'none'; form-action 'none'\">\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
         <meta name=\"referrer\" content=\"no-referrer\">\
         <link rel=\"icon\" href=\"data:,\">\
         <title>Compliance report</title><style>",
    );
    w.push_str(STYLE);
    filter_rules(w);
    if ex.is_some() {
        executed::style(w);
    }
    w.push_str("</style></head><body>\n");

    // The page's summary and the specifications.
    let mut counts = [0usize; 7];
    for plan in &plans {
        for status in Status::ALL {
            counts[status.index()] += plan.count(status);
        }
    }
    let all: usize = counts.iter().sum();
    let done = counts[Status::Complete.index()] + counts[Status::Exception.index()];
    w.push_str("<header><h1>Compliance report</h1><p class=\"sum\">");
    plural(w, plans.len(), "specification", "specifications");
    w.push_str(", ");
    plural(w, all, "requirement", "requirements");
    if all > 0 {
        w.push_str(": ");
        done_share(w, done, all);
    }
    w.push_str("</p>");
    if let Some(ex) = ex {
        executed::header(w, ex, &plans);
    }
    w.push_str("</header>\n");
    if !plans.is_empty() {
        w.push_str("<nav aria-label=\"Specifications\"><ul>");
        for (t, plan) in plans.iter().enumerate() {
            w.push_str("<li class=\"sp");
            for status in Status::ALL {
                if plan.count(status) > 0 {
                    let _ = write!(w, " n-{}", status.slug());
                }
            }
            executed::nav_class(w, plan);
            let _ = write!(w, "\"><a href=\"#spec{t}\">");
            esc(w, plan.title());
            w.push_str("</a> <span class=\"n\">");
            let done = plan.count(Status::Complete) + plan.count(Status::Exception);
            let _ = write!(w, "{done}/{}", plan.total());
            w.push_str(" done</span></li>");
        }
        w.push_str("</ul></nav>\n");
    }

    w.push_str("<main id=\"main\">\n");
    if plans.is_empty() {
        w.push_str("<p>No annotation references a specification.</p>");
    } else {
        filters(w, &counts, all, &plans);
    }
    for (t, plan) in plans.iter().enumerate() {
        specification(w, report, &links, t, plan, ex);
    }
    w.push_str("</main>\n<footer><p>Written by <code>duvet report</code> (duvet-mcp ");
    w.push_str(env!("CARGO_PKG_VERSION"));
    w.push_str(
        "). Statuses count the bytes of each requirement that annotations quote, as duvet \
         0.4.3 does.",
    );
    if ex.is_some() {
        executed::footer(w);
    }
    w.push_str("</p></footer>\n</body></html>\n");
    out
}

/// The status filters: radio buttons, read by the rules of [`filter_rules`].
fn filters(w: &mut String, counts: &[usize; 7], all: usize, plans: &[Plan]) {
    w.push_str(
        "<fieldset class=\"filters\"><legend>Show requirements</legend>\
         <span class=\"f\"><input type=\"radio\" name=\"show\" id=\"f-all\" checked>\
         <label for=\"f-all\">All <span class=\"n\">",
    );
    let _ = write!(w, "{all}");
    w.push_str("</span></label></span>");
    for status in Status::ALL {
        let slug = status.slug();
        let _ = write!(
            w,
            "<span class=\"f\"><input type=\"radio\" name=\"show\" id=\"f-{slug}\">\
             <label for=\"f-{slug}\"><span class=\"dot b-{slug}\"></span>{} \
             <span class=\"n\">{}</span></label></span>",
            status.label(),
            counts[status.index()]
        );
    }
    executed::filter(w, plans);
    w.push_str(
        "</fieldset>\n<details class=\"legend\"><summary>What the statuses and colours \
         mean</summary><dl>",
    );
    for status in Status::ALL {
        let _ = write!(
            w,
            "<dt><span class=\"badge b-{}\">{}</span></dt><dd>{}</dd>",
            status.slug(),
            status.label(),
            status.meaning()
        );
    }
    w.push_str(
        "</dl><p>In a section's text: <mark class=\"h-ok\">requirement text that is covered\
         </mark>, <mark class=\"h-part\">cited or tested only</mark>, <mark class=\"h-none\">\
         not covered</mark> (a TODO covers nothing), <mark class=\"h-cite\">quoted text that is \
         no requirement</mark>.</p>",
    );
    executed::legend(w, plans);
    w.push_str("</details>\n");
}

/// The CSS that hides what a checked filter leaves out: other requirements, and sections and
/// specifications without one it keeps.
fn filter_rules(w: &mut String) {
    for status in Status::ALL {
        let s = status.slug();
        let _ = write!(
            w,
            "body:has(#f-{s}:checked) .req:not(.s-{s}),\
             body:has(#f-{s}:checked) .sec:not(:has(.req.s-{s})),\
             body:has(#f-{s}:checked) .spec:not(:has(.req.s-{s})),\
             body:has(#f-{s}:checked) nav li:not(.n-{s}){{display:none}}"
        );
    }
}

fn specification(
    w: &mut String,
    report: &Report,
    links: &Links,
    t: usize,
    plan: &Plan,
    ex: Option<&Executions>,
) {
    let target = plan.target;
    let _ = write!(w, "<section class=\"spec\" id=\"spec{t}\"><h2>");
    esc(w, plan.title());
    w.push_str("</h2>");
    if target.is_url && safe_url(&target.key) {
        w.push_str("<p class=\"key\"><a href=\"");
        esc(w, &target.key);
        w.push_str("\">");
        esc(w, &target.key);
        w.push_str("</a></p>");
    } else if target.title.is_some() {
        w.push_str("<p class=\"key\"><code>");
        esc(w, &target.key);
        w.push_str("</code></p>");
    }
    w.push_str("<div class=\"over\"><div><p class=\"sum\">");
    let total = plan.total();
    plural(w, total, "requirement", "requirements");
    if total > 0 {
        w.push_str(": ");
        done_share(
            w,
            plan.count(Status::Complete) + plan.count(Status::Exception),
            total,
        );
    }
    w.push_str("</p>");
    executed::summary(w, plan);

    // A table of contents of the sections shown.
    let shown = plan.shown.iter().filter(|s| **s).count();
    w.push_str("<details class=\"toc\"><summary>");
    plural(w, shown, "section", "sections");
    w.push_str(" with annotations</summary><ol>");
    for (c, section) in target.sections.iter().enumerate() {
        if !plan.shown[c] {
            continue;
        }
        let _ = write!(w, "<li><a href=\"#s{t}-{c}\">");
        section_title(w, target, section);
        let _ = write!(
            w,
            "</a> <span class=\"n\">{}</span></li>",
            plan.requirements[c].len()
        );
    }
    w.push_str("</ol></details></div>");
    totals(w, plan);
    executed::totals(w, plan);
    w.push_str("</div>\n");

    // The references by line, for the sections' text.
    let mut by_line: Vec<&Ref> = target.refs.iter().collect();
    by_line.sort_unstable_by_key(|r| (r.line, r.start, r.end, r.anno));
    let mut cursor = 0;
    let mut anchored = HashSet::new();
    for (c, section) in target.sections.iter().enumerate() {
        if !plan.shown[c] {
            continue;
        }
        let _ = write!(w, "<section class=\"sec\" id=\"s{t}-{c}\"><h3>");
        section_title(w, target, section);
        w.push_str("</h3><p class=\"at\">Cite as <code>");
        esc(w, &target.key);
        w.push('#');
        esc(w, &section.id);
        w.push_str("</code></p>");
        w.push_str("<div class=\"cols\"><div>");
        if plan.requirements[c].is_empty() {
            w.push_str("<p class=\"noreq\">No requirement of this section is listed.</p>");
        } else {
            w.push_str("<ul class=\"reqs\">");
            for &anno in &plan.requirements[c] {
                requirement(w, report, links, plan, section, anno, ex);
            }
            w.push_str("</ul>");
        }
        // The other annotations: of the whole section, and those that quote no requirement.
        let related: HashSet<usize> = plan.requirements[c]
            .iter()
            .filter_map(|anno| target.statuses.get(anno))
            .flat_map(|counts| counts.related.iter().copied())
            .collect();
        let (whole, unattached): (Vec<usize>, Vec<usize>) = plan.others[c]
            .iter()
            .filter(|anno| !related.contains(anno))
            .partition(|&&anno| {
                report
                    .entries
                    .get(anno)
                    .is_some_and(|e| e.annotation.quote.is_empty())
            });
        for (list, what) in [
            (&whole, "References to the whole section"),
            (&unattached, "Annotations that quote no requirement"),
        ] {
            if list.is_empty() {
                continue;
            }
            let _ = write!(w, "<p class=\"other\">{what}:</p><ul class=\"cites\">");
            for &anno in list {
                citation(w, report, links, anno, ex);
            }
            w.push_str("</ul>");
        }

        // The section's text: paragraphs of consecutive lines, their common indent removed.
        w.push_str("</div><details class=\"text\" open><summary>Text of ");
        section_title(w, target, section);
        w.push_str("</summary><div class=\"body\">");
        let lines = &section.lines;
        let mut i = 0;
        while i < lines.len() {
            let mut j = i + 1;
            while j < lines.len() && lines[j].number == lines[j - 1].number + 1 {
                j += 1;
            }
            let paragraph = &lines[i..j];
            let indent = paragraph
                .iter()
                .map(|l| {
                    let text = target.slice(&l.bytes);
                    text.len() - text.trim_start().len()
                })
                .min()
                .unwrap_or(0);
            w.push_str("<p>");
            for (k, line) in paragraph.iter().enumerate() {
                if k > 0 {
                    w.push('\n');
                }
                while by_line.get(cursor).is_some_and(|r| r.line < line.number) {
                    cursor += 1;
                }
                let mut end = cursor;
                while by_line.get(end).is_some_and(|r| r.line == line.number) {
                    end += 1;
                }
                let start = (line.bytes.start + indent).min(line.bytes.end);
                let on_line = &by_line[cursor..end];
                if on_line.is_empty() {
                    esc(w, target.slice(&(start..line.bytes.end)));
                    continue;
                }
                let first = on_line.iter().map(|r| r.start).min().unwrap_or(start);
                for piece in pieces(start.min(first), line.bytes.end, on_line) {
                    let text = target.slice(&(piece.start..piece.end));
                    if piece.refs.is_empty() {
                        esc(w, text);
                        continue;
                    }
                    let k = &piece.kinds;
                    let class = if !k.contains(&Kind::Spec) {
                        "h-cite"
                    } else if (k.contains(&Kind::Citation) && k.contains(&Kind::Test))
                        || k.contains(&Kind::Implication)
                        || k.contains(&Kind::Exception)
                    {
                        "h-ok"
                    } else if k.contains(&Kind::Citation) || k.contains(&Kind::Test) {
                        "h-part"
                    } else {
                        "h-none"
                    };
                    // The first piece of each requirement is where "in the text" leads.
                    let mut ids = piece
                        .refs
                        .iter()
                        .filter(|r| r.kind == Kind::Spec)
                        .map(|r| r.anno)
                        .filter(|anno| anchored.insert(*anno));
                    w.push_str("<mark class=\"");
                    w.push_str(class);
                    w.push('"');
                    if let Some(anno) = ids.next() {
                        let _ = write!(w, " id=\"q{anno}\"");
                    }
                    w.push('>');
                    for anno in ids {
                        let _ = write!(w, "<span id=\"q{anno}\"></span>");
                    }
                    esc(w, text);
                    w.push_str("</mark>");
                }
            }
            w.push_str("</p>");
            i = j;
        }
        w.push_str("</div></details></div></section>\n");
    }
    w.push_str("</section>\n");
}

/// The head of a table of `plan`'s requirements by `by` (its first column `first`) and level:
/// the levels from MUST down, "none" only when a requirement has no level; returns them.
fn totals_head(w: &mut String, plan: &Plan, by: &str, first: &str) -> Vec<usize> {
    let levels: Vec<usize> = [3, 2, 1, 0]
        .into_iter()
        .filter(|&l| l > 0 || plan.totals.iter().any(|row| row[0] > 0))
        .collect();
    w.push_str("<table class=\"totals\"><caption>Requirements of ");
    esc(w, plan.title());
    let _ = write!(
        w,
        " by {by} and level</caption><thead><tr><th scope=\"col\">{first}</th>"
    );
    for &l in &levels {
        let _ = write!(w, "<th scope=\"col\">{}</th>", level_label(l));
    }
    w.push_str("<th scope=\"col\">All</th></tr></thead><tbody>");
    levels
}

/// The table of a specification's requirements by status and level.
fn totals(w: &mut String, plan: &Plan) {
    let levels = totals_head(w, plan, "status", "Status");
    for status in Status::ALL {
        let row = &plan.totals[status.index()];
        let _ = write!(
            w,
            "<tr><th scope=\"row\"><span class=\"badge b-{}\">{}</span></th>",
            status.slug(),
            status.label()
        );
        for &l in &levels {
            cell(w, row[l]);
        }
        cell(w, row.iter().sum());
        w.push_str("</tr>");
    }
    w.push_str("</tbody><tfoot><tr><th scope=\"row\">All</th>");
    for &l in &levels {
        cell(w, plan.totals.iter().map(|row| row[l]).sum());
    }
    cell(w, plan.total());
    w.push_str("</tr></tfoot></table>");
}

fn cell(w: &mut String, n: usize) {
    if n == 0 {
        w.push_str("<td class=\"zero\">0</td>");
    } else {
        let _ = write!(w, "<td>{n}</td>");
    }
}

fn level_label(rank: usize) -> &'static str {
    match rank {
        3 => "MUST",
        2 => "SHOULD",
        1 => "MAY",
        _ => "No level",
    }
}

/// A section's heading as 0.4.3 shows it: IETF sections with their number.
fn section_title(w: &mut String, target: &Target, section: &super::SectionLines) {
    if target.format == crate::spec::Format::Ietf {
        let short = section
            .id
            .strip_prefix("section-")
            .or_else(|| section.id.strip_prefix("appendix-"));
        if let Some(short) = short {
            esc(w, short);
            w.push_str(". ");
        }
    }
    esc(w, &section.title);
}

/// One requirement: its status, level and text, and what quotes it.
fn requirement(
    w: &mut String,
    report: &Report,
    links: &Links,
    plan: &Plan,
    section: &super::SectionLines,
    anno: usize,
    ex: Option<&Executions>,
) {
    let Some(entry) = report.entries.get(anno) else {
        return;
    };
    let a = &entry.annotation;
    let status = plan.status(anno);
    let slug = status.slug();
    let run = ex.and_then(|ex| ex.requirement(anno));
    let _ = write!(w, "<li class=\"req s-{slug}");
    executed::classes(w, run);
    let _ = write!(
        w,
        "\" id=\"r{anno}\"><div class=\"rh\"><span class=\"badge b-{slug}\">{}</span>",
        status.label()
    );
    if let Some(level) = a.level {
        let _ = write!(w, " <span class=\"lvl\">{}</span>", level.as_str());
    }
    executed::badge(w, run);
    if !a.quote.is_empty() {
        let _ = write!(w, " <a class=\"go\" href=\"#q{anno}\">in the text</a>");
    }
    w.push_str("</div><p class=\"rt\">");
    if a.quote.is_empty() {
        w.push_str("<em>The whole section</em>");
    } else {
        esc(w, &a.quote);
    }
    w.push_str("</p>");
    let related = plan
        .target
        .statuses
        .get(&anno)
        .map(|c| &c.related)
        .filter(|r| !r.is_empty());
    match related {
        None => w.push_str("<p class=\"noreq\">No annotation quotes it.</p>"),
        Some(related) => {
            let mut related: Vec<(u8, usize)> = related
                .iter()
                .filter_map(|&n| Some((kind_order(report.entries.get(n)?), n)))
                .collect();
            related.sort_unstable();
            w.push_str("<ul class=\"cites\">");
            for (_, n) in related {
                citation(w, report, links, n, ex);
            }
            w.push_str("</ul>");
        }
    }
    if !status.done()
        && let Some(issue) = links.issue
    {
        w.push_str("<p class=\"new\"><a href=\"");
        esc(w, &new_issue(issue, plan, section, entry));
        w.push_str("\">Open an issue for it</a></p>");
    }
    w.push_str("</li>");
}

/// How related annotations are listed: citations, implications, tests, exceptions, TODOs.
fn kind_order(entry: &Entry) -> u8 {
    match Kind::of(entry.annotation.kind) {
        Kind::Citation => 0,
        Kind::Implication => 1,
        Kind::Test => 2,
        Kind::Exception => 3,
        Kind::Todo => 4,
        Kind::Spec => 5,
    }
}

/// One annotation that quotes a requirement or references a section: its type, its place
/// (linked to the code), and what it says.
fn citation(w: &mut String, report: &Report, links: &Links, anno: usize, ex: Option<&Executions>) {
    let Some(entry) = report.entries.get(anno) else {
        return;
    };
    let a = &entry.annotation;
    let (class, label) = match Kind::of(a.kind) {
        Kind::Citation => ("citation", "Citation"),
        Kind::Implication => ("implication", "Implication"),
        Kind::Test => ("test", "Test"),
        Kind::Exception => ("exception", "Exception"),
        Kind::Todo => ("todo", "TODO"),
        Kind::Spec => ("spec", "Requirement"),
    };
    let _ = write!(w, "<li><span class=\"k k-{class}\">{label}</span> ");
    match links.blob_of(entry) {
        Some(blob) => {
            w.push_str("<a href=\"");
            esc(w, blob);
            w.push('/');
            let encoded = percent_encoding::utf8_percent_encode(&entry.source, PATH).to_string();
            esc(w, &encoded);
            if a.line > 0 {
                let _ = write!(w, "#L{}", a.line);
            }
            w.push_str("\"><code>");
            place(w, entry);
            w.push_str("</code></a>");
        }
        None => {
            w.push_str("<code>");
            place(w, entry);
            w.push_str("</code>");
        }
    }
    executed::citation(w, ex.and_then(|ex| ex.citation(anno)));
    if let Some(issue) = &a.tracking_issue {
        w.push_str(" <span class=\"m\">issue ");
        let href = if issue.starts_with("http://") || issue.starts_with("https://") {
            Some(issue.clone())
        } else {
            links.issue.map(|base| {
                format!(
                    "{base}/{}",
                    percent_encoding::utf8_percent_encode(issue, PATH)
                )
            })
        };
        match href {
            Some(href) => {
                w.push_str("<a href=\"");
                esc(w, &href);
                w.push_str("\">");
                esc(w, issue);
                w.push_str("</a>");
            }
            None => esc(w, issue),
        }
        w.push_str("</span>");
    }
    if let Some(feature) = &a.feature {
        w.push_str(" <span class=\"m\">feature ");
        esc(w, feature);
        w.push_str("</span>");
    }
    for tag in &a.tags {
        w.push_str(" <span class=\"m tag\">");
        esc(w, tag);
        w.push_str("</span>");
    }
    if let Some(reason) = a.reason.as_deref().filter(|r| !r.is_empty()) {
        w.push_str("<br><span class=\"why\">");
        esc(w, reason);
        w.push_str("</span>");
    } else if !a.quote.is_empty() {
        w.push_str("<br><q>");
        esc(w, &a.quote);
        w.push_str("</q>");
    }
    w.push_str("</li>");
}

/// `source#Lline`, as 0.4.3 names a citation's place.
fn place(w: &mut String, entry: &Entry) {
    esc(w, &entry.source);
    if entry.annotation.line > 0 {
        let _ = write!(w, "#L{}", entry.annotation.line);
    }
}

/// 0.4.3's link to open an issue for a requirement: `{issue_link}/new` with the requirement
/// quoted in the body and the labels `compliance`, `compliance:LEVEL`, `spec:TITLE`.
fn new_issue(base: &str, plan: &Plan, section: &super::SectionLines, entry: &Entry) -> String {
    let a = &entry.annotation;
    let quoted: Vec<String> = a
        .comment
        .trim()
        .split('\n')
        .map(|l| format!("> {l}"))
        .collect();
    let body = format!(
        "\nFrom [{}]({}#{}) in [{}]({}):\n\n{}",
        section.title,
        plan.target.key,
        section.id,
        plan.title(),
        entry.target_path,
        quoted.join("\n")
    );
    let mut labels = vec!["compliance".to_string()];
    if let Some(level) = a.level {
        labels.push(format!("compliance:{}", level.as_str()));
    }
    labels.push(format!("spec:{}", plan.title()));
    labels.extend(a.feature.clone());
    let query = url::form_urlencoded::Serializer::new(String::new())
        .append_pair("body", &body)
        .append_pair("labels", &labels.join(","))
        .finish();
    format!("{base}/new?{query}")
}

/// "N things".
fn plural(w: &mut String, n: usize, one: &str, many: &str) {
    let _ = write!(w, "{n} {}", if n == 1 { one } else { many });
}

/// "N complete or excepted (P%)".
fn done_share(w: &mut String, done: usize, all: usize) {
    let percent = (done * 1000 / all.max(1)) as f64 / 10.0;
    let _ = write!(w, "{done} complete or excepted ({percent}%)");
}

/// `text` as HTML text or attribute value: `& < > " '` escaped, control characters (but tab
/// and line feed) replaced.
fn esc(w: &mut String, text: &str) {
    let mut last = 0;
    for (i, b) in text.bytes().enumerate() {
        if !ESCAPED[usize::from(b)] {
            continue;
        }
        let replacement = match b {
            b'&' => "&amp;",
            b'<' => "&lt;",
            b'>' => "&gt;",
            b'"' => "&quot;",
            b'\'' => "&#39;",
            _ => "\u{fffd}",
        };
        // `i` is at an ASCII byte: a character boundary.
        w.push_str(text.get(last..i).unwrap_or_default());
        w.push_str(replacement);
        last = i + 1;
    }
    w.push_str(text.get(last..).unwrap_or_default());
}

/// The bytes [`esc`] replaces: `& < > " '` and the control characters but tab and line feed
/// (a table: most text has none, and each byte is looked at once).
const ESCAPED: [bool; 256] = {
    let mut table = [false; 256];
    let mut b = 0;
    while b < 256 {
        table[b] = matches!(b as u8, b'&' | b'<' | b'>' | b'"' | b'\'' | 0x7f)
            || (b < 0x20 && b != 0x09 && b != 0x0a);
        b += 1;
    }
    table
};

#[cfg(test)]
mod tests {
    /// The table of escaped bytes: `& < > " '` and the control characters but tab and line
    /// feed, every other byte (UTF-8 continuation bytes among them) kept.
    #[test]
    fn esc_replaces_exactly_the_markup_and_control_characters() {
        for c in (0u8..0x80).map(char::from).chain(['é', '\u{2028}', '😀']) {
            let mut w = String::new();
            super::esc(&mut w, &format!("a{c}b"));
            let expected = match c {
                '&' => "&amp;".to_string(),
                '<' => "&lt;".to_string(),
                '>' => "&gt;".to_string(),
                '"' => "&quot;".to_string(),
                '\'' => "&#39;".to_string(),
                '\t' | '\n' => c.to_string(),
                c if c.is_ascii_control() => "\u{fffd}".to_string(),
                c => c.to_string(),
            };
            assert_eq!(w, format!("a{expected}b"), "{c:?}");
        }
    }
}
