//! The JSON report of duvet 0.4.3 (`duvet report --json FILE`, `[report.json]`, and the data
//! of the HTML report): the specifications with their sections' lines cut where annotations
//! start and end, the annotations, each requirement's counts, and the table of the status
//! numbers the lines use.
//!
//! Layout, as 0.4.3 writes it: `{"blob_link"?, "issue_link"?, "specifications": {path: {"title"?,
//! "format", "requirements": [n…], "sections": [{"id", "title", "lines": [line…],
//! "requirements"?}]}}, "annotations": [{"source", "target_path", "target_section"?, "line"?,
//! "type"?, "level"?, "comment"?, "feature"?, "tracking_issue"?, "blob_link"? (its source's),
//! "tags"?}], "statuses": {n: {"spec"?, "incomplete"?, "citation"?, "implication"?, "test"?,
//! "exception"?, "todo"?, "related"?}}, "refs": [{"spec"?, "citation"?, …, "level"?}]}`. A line no annotation
//! touches is its text; another is a list of `[[annotation numbers], status number, text]`.

use std::collections::BTreeSet;

use foldhash::{HashMap, HashMapExt};
use std::io::Write;

use super::{Kind, Ref, Report, Target, level_name};

/// `value` as a JSON string, escaped as serde_json escapes it (the common case, a string
/// without a quote, a backslash or a control character, copied as it is).
fn s(out: &mut Vec<u8>, value: &str) {
    if value.bytes().any(|b| b < 0x20 || b == b'"' || b == b'\\') {
        // Writing into a vector cannot fail.
        let _ = serde_json::to_writer(&mut *out, value);
    } else {
        out.reserve(value.len() + 2);
        out.push(b'"');
        out.extend_from_slice(value.as_bytes());
        out.push(b'"');
    }
}

/// `n` in decimal.
fn n(out: &mut Vec<u8>, n: usize) {
    let _ = write!(out, "{n}");
}

/// The status number of the annotations covering a piece of a line: one bit per type (TODO
/// lowest, then exception, test, implication, citation, spec) plus 64 × the level rank.
pub fn status_id(kinds: &BTreeSet<Kind>, level: u8) -> usize {
    let mut id = 0;
    for (bit, kind) in [
        Kind::Todo,
        Kind::Exception,
        Kind::Test,
        Kind::Implication,
        Kind::Citation,
        Kind::Spec,
    ]
    .iter()
    .enumerate()
    {
        if kinds.contains(kind) {
            id |= 1 << bit;
        }
    }
    id + usize::from(level) * 64
}

/// The report's JSON, made in one buffer sized for it (with more than one specification,
/// each one's part on its own core, then copied in); each requirement with its `execution`
/// when `executions` is given ([`super::executed`]).
pub fn to_vec(
    report: &Report,
    blob_link: Option<&str>,
    issue_link: Option<&str>,
    executions: Option<&super::executed::Executions>,
) -> Vec<u8> {
    let mut targets: Vec<&Target> = report.targets.iter().collect();
    targets.sort_by(|a, b| a.key.cmp(&b.key));
    // Sized for the specifications' text (most of it) and a few hundred bytes an
    // annotation, not grown into it.
    let text: usize = targets.iter().map(|t| t.text.len()).sum();
    let mut w = Vec::with_capacity(2 * text + 300 * report.entries.len() + 16 * 1024);
    w.push(b'{');
    if let Some(link) = blob_link {
        w.extend_from_slice(b"\"blob_link\":");
        s(&mut w, link);
        w.push(b',');
    }
    if let Some(link) = issue_link {
        w.extend_from_slice(b"\"issue_link\":");
        s(&mut w, link);
        w.push(b',');
    }
    w.extend_from_slice(b"\"specifications\":{");
    let part = |target: &Target, w: &mut Vec<u8>| {
        s(w, &target.key);
        w.push(b':');
        specification(target, w);
    };
    if targets.len() == 1 {
        for target in targets {
            part(target, &mut w);
        }
    } else {
        let parts = crate::par::par_map(targets, |target| {
            let mut w = Vec::with_capacity(2 * target.text.len());
            part(target, &mut w);
            w
        });
        for (i, part) in parts.iter().enumerate() {
            if i > 0 {
                w.push(b',');
            }
            w.extend_from_slice(part);
        }
    }
    w.extend_from_slice(b"},\"annotations\":[");
    for (i, entry) in report.entries.iter().enumerate() {
        if i > 0 {
            w.push(b',');
        }
        let a = &entry.annotation;
        w.extend_from_slice(b"{\"source\":");
        s(&mut w, &entry.source);
        w.extend_from_slice(b",\"target_path\":");
        s(&mut w, &entry.target_path);
        if let Some(section) = &entry.section {
            w.extend_from_slice(b",\"target_section\":");
            s(&mut w, section);
        }
        if a.line > 0 {
            w.extend_from_slice(b",\"line\":");
            n(&mut w, a.line);
        }
        let kind = Kind::of(a.kind);
        if kind != Kind::Citation {
            let _ = write!(w, ",\"type\":\"{}\"", kind.upper());
        }
        if let Some(level) = a.level {
            let _ = write!(w, ",\"level\":\"{}\"", level.as_str());
        }
        if !a.comment.is_empty() {
            w.extend_from_slice(b",\"comment\":");
            s(&mut w, &a.comment);
        }
        if let Some(feature) = &a.feature {
            w.extend_from_slice(b",\"feature\":");
            s(&mut w, feature);
        }
        if let Some(issue) = &a.tracking_issue {
            w.extend_from_slice(b",\"tracking_issue\":");
            s(&mut w, issue);
        }
        if let Some(link) = &entry.blob_link {
            w.extend_from_slice(b",\"blob_link\":");
            s(&mut w, link);
        }
        if !a.tags.is_empty() {
            w.extend_from_slice(b",\"tags\":[");
            for (i, tag) in a.tags.iter().enumerate() {
                if i > 0 {
                    w.push(b',');
                }
                s(&mut w, tag);
            }
            w.push(b']');
        }
        if let Some(executions) = executions {
            executions.json_field(i, &mut w);
        }
        w.push(b'}');
    }
    w.extend_from_slice(b"],\"statuses\":{");
    let mut first = true;
    for target in &report.targets {
        for (anno, c) in &target.statuses {
            if !std::mem::take(&mut first) {
                w.push(b',');
            }
            w.push(b'"');
            n(&mut w, *anno);
            w.extend_from_slice(b"\":{");
            let mut fields = 0;
            for (name, value) in [
                ("spec", c.spec),
                ("incomplete", c.incomplete),
                ("citation", c.citation),
                ("implication", c.implication),
                ("test", c.test),
                ("exception", c.exception),
                ("todo", c.todo),
            ] {
                if value > 0 {
                    if fields > 0 {
                        w.push(b',');
                    }
                    fields += 1;
                    let _ = write!(w, "\"{name}\":{value}");
                }
            }
            if !c.related.is_empty() {
                if fields > 0 {
                    w.push(b',');
                }
                w.extend_from_slice(b"\"related\":[");
                join(&mut w, &c.related);
                w.push(b']');
            }
            w.push(b'}');
        }
    }
    w.extend_from_slice(b"},\"refs\":[");
    let kinds = [
        Kind::Spec,
        Kind::Citation,
        Kind::Implication,
        Kind::Test,
        Kind::Exception,
        Kind::Todo,
    ];
    for id in 0..256usize {
        if id > 0 {
            w.push(b',');
        }
        let mut fields = Vec::new();
        // Bits from the highest: spec, citation, implication, test, exception, todo.
        for (i, kind) in kinds.iter().enumerate() {
            if id & (1 << (5 - i)) != 0 {
                fields.push(format!("\"{}\":true", json_name(*kind)));
            }
        }
        let level = (id / 64) as u8;
        if level > 0 {
            fields.push(format!("\"level\":\"{}\"", level_name(level)));
        }
        let _ = write!(w, "{{{}}}", fields.join(","));
    }
    w.extend_from_slice(b"]}");
    w
}

/// A type's field name in the table of status numbers.
fn json_name(kind: Kind) -> &'static str {
    match kind {
        Kind::Spec => "spec",
        Kind::Citation => "citation",
        Kind::Implication => "implication",
        Kind::Test => "test",
        Kind::Exception => "exception",
        Kind::Todo => "todo",
    }
}

/// One specification's entry.
fn specification(target: &Target, w: &mut Vec<u8>) {
    let mut by_line: HashMap<usize, Vec<&Ref>> = HashMap::new();
    let mut requirements = BTreeSet::new();
    for r in &target.refs {
        if r.kind == Kind::Spec {
            requirements.insert(r.anno);
        }
        by_line.entry(r.line).or_default().push(r);
    }
    w.push(b'{');
    if let Some(title) = &target.title {
        w.extend_from_slice(b"\"title\":");
        s(w, title);
        w.push(b',');
    }
    let format = match target.format {
        crate::spec::Format::Ietf => "ietf",
        crate::spec::Format::Markdown => "markdown",
    };
    let _ = write!(w, "\"format\":\"{format}\",\"requirements\":[");
    join(w, &requirements);
    w.extend_from_slice(b"],\"sections\":[");
    for (i, section) in target.sections.iter().enumerate() {
        if i > 0 {
            w.push(b',');
        }
        w.extend_from_slice(b"{\"id\":");
        s(w, &section.id);
        w.extend_from_slice(b",\"title\":");
        s(w, &section.title);
        w.extend_from_slice(b",\"lines\":[");
        let mut in_section = BTreeSet::new();
        for (j, line) in section.lines.iter().enumerate() {
            if j > 0 {
                w.push(b',');
            }
            let text = target.slice(&line.bytes);
            match by_line.get(&line.number) {
                None => s(w, text),
                Some(refs) => {
                    let pieces = pieces(line.bytes.start, line.bytes.end, refs);
                    w.push(b'[');
                    for (k, piece) in pieces.iter().enumerate() {
                        if k > 0 {
                            w.push(b',');
                        }
                        w.extend_from_slice(b"[[");
                        for (i, r) in piece.refs.iter().enumerate() {
                            if i > 0 {
                                w.push(b',');
                            }
                            n(w, r.anno);
                            if r.kind == Kind::Spec {
                                in_section.insert(r.anno);
                            }
                        }
                        w.extend_from_slice(b"],");
                        n(w, piece.status);
                        w.push(b',');
                        s(w, target.slice(&(piece.start..piece.end)));
                        w.push(b']');
                    }
                    w.push(b']');
                }
            }
        }
        w.push(b']');
        if !in_section.is_empty() {
            w.extend_from_slice(b",\"requirements\":[");
            join(w, &in_section);
            w.push(b']');
        }
        w.push(b'}');
    }
    w.extend_from_slice(b"]}");
}

/// Numbers separated by commas.
fn join(w: &mut Vec<u8>, ids: &BTreeSet<usize>) {
    for (i, id) in ids.iter().enumerate() {
        if i > 0 {
            w.push(b',');
        }
        n(w, *id);
    }
}

/// A piece of a line: where the set of annotations covering it is the same.
pub struct Piece<'a> {
    pub start: usize,
    pub end: usize,
    pub refs: Vec<&'a Ref>,
    pub status: usize,
    pub kinds: BTreeSet<Kind>,
    pub level: u8,
}

/// Bytes `start..end` of a line cut at every start and end of `refs` (those on the line).
pub fn pieces<'a>(line_start: usize, end: usize, refs: &[&'a Ref]) -> Vec<Piece<'a>> {
    let mut out = Vec::new();
    let mut start = line_start;
    while start < end {
        let mut min_end = end;
        let mut current = Vec::new();
        for r in refs {
            if r.start <= start {
                if start < r.end {
                    min_end = min_end.min(r.end);
                    current.push(*r);
                }
            } else {
                min_end = min_end.min(r.start);
            }
        }
        let kinds: BTreeSet<Kind> = current.iter().map(|r| r.kind).collect();
        let level = current.iter().map(|r| r.level).max().unwrap_or(0);
        out.push(Piece {
            start,
            end: min_end,
            status: status_id(&kinds, level),
            refs: current,
            kinds,
            level,
        });
        start = min_end;
    }
    out
}
