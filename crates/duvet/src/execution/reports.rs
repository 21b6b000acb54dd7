//! Coverage reports: LCOV tracefiles and JaCoCo XML, read into each file's hit and missed
//! lines.
//!
//! * **LCOV** (`cargo llvm-cov --lcov`, grcov, `cargo tarpaulin --out Lcov`, gcov's
//!   `lcov`): `SF:` opens a file's record, `DA:<line>,<count>[,<checksum>]` gives a line's
//!   count, `BRDA:<line>,<block>,<branch>,<taken>` a branch (`-` or 0: not taken),
//!   `end_of_record` closes it; other records (`TN`, `FN`, `FNDA`, `LF`, …) are skipped. A
//!   line ran when its count is above 0 or one of its branches was taken.
//! * **JaCoCo XML** (`report.xml`): each `<package name>`'s `<sourcefile name>` is the file
//!   `package/name`; a `<line nr mi ci mb cb>` with branches ran when a branch was covered
//!   (`cb` > 0), one without when an instruction was (`ci` > 0), as 0.4.3 reads it. The DTD
//!   is never fetched.
//!
//! A malformed report is an error naming the file and the line or element, never a guess;
//! errors quote at most a short piece of the input.

use std::collections::{BTreeMap, HashMap};
use std::path::Path;

use quick_xml::Reader;
use quick_xml::events::{BytesStart, Event};

/// Whether a line ran.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Hit {
    Hit,
    Miss,
}

/// The lines of one file a report knows, hit or missed.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FileCoverage {
    lines: BTreeMap<usize, bool>,
}

impl FileCoverage {
    /// Record line `line` as run or not; a run line stays run.
    pub fn record(&mut self, line: usize, ran: bool) {
        let entry = self.lines.entry(line).or_insert(false);
        *entry |= ran;
    }

    /// Replace line `line`'s state.
    fn set(&mut self, line: usize, ran: bool) {
        self.lines.insert(line, ran);
    }

    pub fn lines(&self) -> impl Iterator<Item = (usize, Hit)> + '_ {
        self.lines
            .iter()
            .map(|(&line, &ran)| (line, if ran { Hit::Hit } else { Hit::Miss }))
    }

    pub fn get(&self, line: usize) -> Option<Hit> {
        self.lines
            .get(&line)
            .map(|&ran| if ran { Hit::Hit } else { Hit::Miss })
    }

    /// How many lines ran, of how many the report lists.
    pub fn counts(&self) -> (usize, usize) {
        (
            self.lines.values().filter(|r| **r).count(),
            self.lines.len(),
        )
    }
}

/// A coverage report: each file as the report names it, with its lines.
#[derive(Debug, Clone, Default)]
pub struct Report {
    pub files: HashMap<String, FileCoverage>,
}

/// The report formats read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum CoverageFormat {
    /// JaCoCo's XML report.
    JacocoXml,
    /// An LCOV tracefile.
    Lcov,
}

impl CoverageFormat {
    /// The format of reports `patterns` name when none is given: JaCoCo XML when every
    /// pattern ends with `.xml`, else LCOV.
    pub fn for_patterns(patterns: &[String]) -> Self {
        if patterns.iter().all(|p| p.ends_with(".xml")) {
            Self::JacocoXml
        } else {
            Self::Lcov
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Self::JacocoXml => "jacoco-xml",
            Self::Lcov => "lcov",
        }
    }
}

/// At most `max` characters of `text`, for an error message.
fn excerpt(text: &str) -> String {
    mcp_common::clip(text.trim(), 80)
}

/// Read the report at `path` in `format`.
pub fn read(path: &Path, format: CoverageFormat) -> Result<Report, String> {
    let bytes = crate::output::read(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let text = String::from_utf8_lossy(&bytes);
    match format {
        CoverageFormat::Lcov => lcov(&text),
        CoverageFormat::JacocoXml => jacoco(&text),
    }
    .map_err(|e| format!("{}: {e}", path.display()))
}

/// Parse an LCOV tracefile.
pub fn lcov(text: &str) -> Result<Report, String> {
    let mut report = Report::default();
    let mut current: Option<(String, FileCoverage)> = None;
    for (n, line) in text.lines().enumerate() {
        let line = line.trim();
        let bad = |what: &str| format!("line {}: {what}: {}", n + 1, excerpt(line));
        let Some((key, value)) = line.split_once(':') else {
            if line == "end_of_record" {
                if let Some((file, coverage)) = current.take() {
                    merge(&mut report, file, coverage);
                }
            } else if !line.is_empty() {
                return Err(bad("not an LCOV record"));
            }
            continue;
        };
        match key {
            "SF" => {
                if let Some((file, coverage)) = current.take() {
                    merge(&mut report, file, coverage);
                }
                if value.is_empty() {
                    return Err(bad("a source file record without a path"));
                }
                current = Some((value.to_string(), FileCoverage::default()));
            }
            "DA" | "BRDA" => {
                let Some((_, coverage)) = current.as_mut() else {
                    return Err(bad(
                        "a line record outside a source file (no SF: before it)",
                    ));
                };
                let fields: Vec<&str> = value.split(',').collect();
                let number = fields
                    .first()
                    .and_then(|f| f.trim().parse::<usize>().ok())
                    .ok_or_else(|| bad("the line number is not a number"))?;
                let ran = if key == "DA" {
                    let count = fields.get(1).map(|f| f.trim()).unwrap_or_default();
                    // Counts can exceed 64 bits in merged tracefiles; a sign never appears in
                    // a valid one, but gcov wrote negative counts once: they did not run.
                    let digits = count.strip_prefix('-').unwrap_or(count);
                    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
                        return Err(bad("the execution count is not a number"));
                    }
                    !count.starts_with('-') && digits.bytes().any(|b| b != b'0')
                } else {
                    let taken = fields.get(3).map(|f| f.trim()).unwrap_or_default();
                    if taken != "-"
                        && (taken.is_empty() || !taken.bytes().all(|b| b.is_ascii_digit()))
                    {
                        return Err(bad("the branch count is not a number or -"));
                    }
                    taken.bytes().any(|b| b.is_ascii_digit() && b != b'0')
                };
                if number > 0 {
                    coverage.record(number, ran);
                }
            }
            _ => {}
        }
    }
    if let Some((file, coverage)) = current.take() {
        merge(&mut report, file, coverage);
    }
    Ok(report)
}

fn merge(report: &mut Report, file: String, coverage: FileCoverage) {
    let into = report.files.entry(file).or_default();
    for (line, hit) in coverage.lines() {
        into.record(line, hit == Hit::Hit);
    }
}

/// An attribute of `element` as text.
fn attribute(element: &BytesStart<'_>, name: &[u8]) -> Result<Option<String>, String> {
    for attr in element.attributes() {
        let attr = attr.map_err(|e| format!("malformed attribute: {e}"))?;
        if attr.key.as_ref() == name {
            let value = attr
                .normalized_value(quick_xml::XmlVersion::Implicit1_0)
                .map_err(|e| format!("malformed attribute value: {e}"))?;
            return Ok(Some(value.into_owned()));
        }
    }
    Ok(None)
}

fn number(element: &BytesStart<'_>, name: &str) -> Result<u64, String> {
    let value = attribute(element, name.as_bytes())?
        .ok_or_else(|| format!("Missing {name} attribute of a <line>"))?;
    value
        .trim()
        .parse::<u64>()
        .map_err(|_| format!("Invalid {name} value {:?} of a <line>", excerpt(&value)))
}

/// An element's start: a package or source file opens, a line is recorded.
fn start(
    e: &BytesStart<'_>,
    package: &mut Option<String>,
    source: &mut Option<(String, FileCoverage)>,
) -> Result<(), String> {
    match e.local_name().as_ref() {
        b"package" => *package = Some(attribute(e, b"name")?.unwrap_or_default()),
        b"sourcefile" if package.is_some() => {
            let name = attribute(e, b"name")?.ok_or("a <sourcefile> without a name attribute")?;
            *source = Some((name, FileCoverage::default()));
        }
        b"line" => {
            if let Some((_, coverage)) = source.as_mut() {
                let (ci, mi) = (number(e, "ci")?, number(e, "mi")?);
                let (cb, mb) = (number(e, "cb")?, number(e, "mb")?);
                let nr = number(e, "nr")?;
                let nr = usize::try_from(nr).map_err(|_| "a <line> number too large")?;
                if mb > 0 || cb > 0 {
                    coverage.set(nr, cb > 0);
                } else if ci > 0 || mi > 0 {
                    coverage.set(nr, ci > 0);
                }
            }
        }
        _ => {}
    }
    Ok(())
}

/// Parse a JaCoCo XML report.
pub fn jacoco(text: &str) -> Result<Report, String> {
    jacoco_with(text, false)
}

/// Parse a JaCoCo XML report as duvet 0.4.3's `query` does where it ends early: what precedes
/// the end is read when no `<package>` is open at it (0.4.3 reads a report cut after its last
/// package, before its summary counters and closing tags); a report cut inside a package is
/// an error, as in [`jacoco`] (0.4.3 loops forever on it).
pub fn jacoco_as_0_4_3_query(text: &str) -> Result<Report, String> {
    jacoco_with(text, true)
}

/// [`read`], JaCoCo XML read as [`jacoco_as_0_4_3_query`] reads it.
pub fn read_as_0_4_3_query(path: &Path, format: CoverageFormat) -> Result<Report, String> {
    match format {
        CoverageFormat::Lcov => read(path, format),
        CoverageFormat::JacocoXml => {
            let bytes =
                crate::output::read(path).map_err(|e| format!("{}: {e}", path.display()))?;
            jacoco_as_0_4_3_query(&String::from_utf8_lossy(&bytes))
                .map_err(|e| format!("{}: {e}", path.display()))
        }
    }
}

fn jacoco_with(text: &str, cut_after_packages: bool) -> Result<Report, String> {
    let mut reader = Reader::from_str(text);
    reader.config_mut().expand_empty_elements = true;
    let mut report = Report::default();
    let mut package: Option<String> = None;
    let mut source: Option<(String, FileCoverage)> = None;
    let mut depth = 0usize;
    let mut root = false;
    loop {
        let event = reader.read_event().map_err(|e| {
            format!(
                "not well-formed XML at byte {}: {e}",
                reader.buffer_position()
            )
        })?;
        match event {
            Event::Start(e) => {
                depth += 1;
                root |= depth == 1 && e.local_name().as_ref() == b"report";
                start(&e, &mut package, &mut source)?;
            }
            Event::End(e) => {
                depth = depth.saturating_sub(1);
                match e.local_name().as_ref() {
                    b"sourcefile" => {
                        if let (Some(package), Some((name, coverage))) = (&package, source.take()) {
                            let file = format!("{package}/{name}")
                                .trim_start_matches('/')
                                .to_string();
                            // A file listed twice keeps its last listing, as 0.4.3 reads it.
                            report.files.insert(file, coverage);
                        }
                    }
                    b"package" => package = None,
                    _ => {}
                }
            }
            Event::Eof if depth > 0 && !(cut_after_packages && package.is_none()) => {
                return Err("the XML ends before its elements close (a truncated report?)".into());
            }
            Event::Eof => break,
            _ => {}
        }
    }
    // Another format read as JaCoCo (an LCOV tracefile holds no element) would otherwise be
    // an empty report, every line unmeasured; 0.4.3's `query` reads it so, and so does ours.
    if !root && !cut_after_packages {
        return Err(
            "not a JaCoCo XML report (no <report> element); an LCOV tracefile is read with --coverage-format lcov"
                .into(),
        );
    }
    Ok(report)
}
