//! The JSON report of duvet 0.4.3 (`duvet report --json FILE`, `[report.json]`, and the data
//! of the HTML report): the specifications with their sections' lines cut where annotations
//! start and end, the annotations, each requirement's counts, and the table of the status
//! numbers the lines use.
//!
//! Layout, as 0.4.3 writes it: `{"blob_link"?, "issue_link"?, "specifications": {path: {"title"?,
//! "format", "requirements": [n…], "sections": [{"id", "title", "lines": [line…],
//! "requirements"?}]}}, "annotations": [{"source", "target_path", "target_section"?, "line"?,
//! "type"?, "level"?, "comment"?, "feature"?, "tracking_issue"?, "tags"?}], "statuses": {n:
//! {"spec"?, "incomplete"?, "citation"?, "implication"?, "test"?, "exception"?, "todo"?,
//! "related"?}}, "refs": [{"spec"?, "citation"?, …, "level"?}]}`. A line no annotation
//! touches is its text; another is a list of `[[annotation numbers], status number, text]`.

use std::collections::{BTreeSet, HashMap};
use std::io::{self, Write};

use super::{Kind, Ref, Report, Target, level_name};

/// A JSON string.
fn s(value: &str) -> String {
    serde_json::Value::String(value.to_string()).to_string()
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

/// Write the report.
pub fn write(
    report: &Report,
    blob_link: Option<&str>,
    issue_link: Option<&str>,
    out: &mut dyn Write,
) -> io::Result<()> {
    out.write_all(b"{")?;
    if let Some(link) = blob_link {
        write!(out, "\"blob_link\":{},", s(link))?;
    }
    if let Some(link) = issue_link {
        write!(out, "\"issue_link\":{},", s(link))?;
    }
    out.write_all(b"\"specifications\":{")?;
    let mut targets: Vec<&Target> = report.targets.iter().collect();
    targets.sort_by(|a, b| a.key.cmp(&b.key));
    for (i, target) in targets.iter().enumerate() {
        if i > 0 {
            out.write_all(b",")?;
        }
        write!(out, "{}:", s(&target.key))?;
        specification(target, out)?;
    }
    out.write_all(b"},\"annotations\":[")?;
    for (i, entry) in report.entries.iter().enumerate() {
        if i > 0 {
            out.write_all(b",")?;
        }
        let a = &entry.annotation;
        write!(
            out,
            "{{\"source\":{},\"target_path\":{}",
            s(&entry.source),
            s(&entry.target_path)
        )?;
        if let Some(section) = &entry.section {
            write!(out, ",\"target_section\":{}", s(section))?;
        }
        if a.line > 0 {
            write!(out, ",\"line\":{}", a.line)?;
        }
        let kind = Kind::of(a.kind);
        if kind != Kind::Citation {
            write!(out, ",\"type\":\"{}\"", kind.upper())?;
        }
        if let Some(level) = a.level {
            write!(out, ",\"level\":\"{}\"", level.as_str())?;
        }
        if !a.comment.is_empty() {
            write!(out, ",\"comment\":{}", s(&a.comment))?;
        }
        if let Some(feature) = &a.feature {
            write!(out, ",\"feature\":{}", s(feature))?;
        }
        if let Some(issue) = &a.tracking_issue {
            write!(out, ",\"tracking_issue\":{}", s(issue))?;
        }
        if !a.tags.is_empty() {
            let tags: Vec<String> = a.tags.iter().map(|t| s(t)).collect();
            write!(out, ",\"tags\":[{}]", tags.join(","))?;
        }
        out.write_all(b"}")?;
    }
    out.write_all(b"],\"statuses\":{")?;
    let mut first = true;
    for target in &report.targets {
        for (anno, c) in &target.statuses {
            if !std::mem::take(&mut first) {
                out.write_all(b",")?;
            }
            write!(out, "\"{anno}\":{{")?;
            let mut fields = Vec::new();
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
                    fields.push(format!("\"{name}\":{value}"));
                }
            }
            if !c.related.is_empty() {
                let related: Vec<String> = c.related.iter().map(usize::to_string).collect();
                fields.push(format!("\"related\":[{}]", related.join(",")));
            }
            write!(out, "{}}}", fields.join(","))?;
        }
    }
    out.write_all(b"},\"refs\":[")?;
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
            out.write_all(b",")?;
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
        write!(out, "{{{}}}", fields.join(","))?;
    }
    out.write_all(b"]}")?;
    Ok(())
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
fn specification(target: &Target, out: &mut dyn Write) -> io::Result<()> {
    let mut by_line: HashMap<usize, Vec<&Ref>> = HashMap::new();
    let mut requirements = BTreeSet::new();
    for r in &target.refs {
        if r.kind == Kind::Spec {
            requirements.insert(r.anno);
        }
        by_line.entry(r.line).or_default().push(r);
    }
    out.write_all(b"{")?;
    if let Some(title) = &target.title {
        write!(out, "\"title\":{},", s(title))?;
    }
    let format = match target.format {
        crate::spec::Format::Ietf => "ietf",
        crate::spec::Format::Markdown => "markdown",
    };
    write!(
        out,
        "\"format\":\"{format}\",\"requirements\":[{}],\"sections\":[",
        join(&requirements)
    )?;
    for (i, section) in target.sections.iter().enumerate() {
        if i > 0 {
            out.write_all(b",")?;
        }
        write!(
            out,
            "{{\"id\":{},\"title\":{},\"lines\":[",
            s(&section.id),
            s(&section.title)
        )?;
        let mut in_section = BTreeSet::new();
        for (j, line) in section.lines.iter().enumerate() {
            if j > 0 {
                out.write_all(b",")?;
            }
            let text = target.slice(&line.bytes);
            match by_line.get(&line.number) {
                None => out.write_all(s(text).as_bytes())?,
                Some(refs) => {
                    let pieces = pieces(line.bytes.start, line.bytes.end, refs);
                    out.write_all(b"[")?;
                    for (k, piece) in pieces.iter().enumerate() {
                        if k > 0 {
                            out.write_all(b",")?;
                        }
                        let ids: Vec<String> =
                            piece.refs.iter().map(|r| r.anno.to_string()).collect();
                        for r in &piece.refs {
                            if r.kind == Kind::Spec {
                                in_section.insert(r.anno);
                            }
                        }
                        write!(
                            out,
                            "[[{}],{},{}]",
                            ids.join(","),
                            piece.status,
                            s(target.slice(&(piece.start..piece.end)))
                        )?;
                    }
                    out.write_all(b"]")?;
                }
            }
        }
        out.write_all(b"]")?;
        if !in_section.is_empty() {
            write!(out, ",\"requirements\":[{}]", join(&in_section))?;
        }
        out.write_all(b"}")?;
    }
    out.write_all(b"]}")?;
    Ok(())
}

fn join(ids: &BTreeSet<usize>) -> String {
    ids.iter()
        .map(usize::to_string)
        .collect::<Vec<_>>()
        .join(",")
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
