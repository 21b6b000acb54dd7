//! Ticket templates: built-ins plus project templates in
//! `.jility/templates/<name>.md`, rendered with `{{variable}}` substitution.
//!
//! A project template file may start with TOML front matter between `+++`
//! lines:
//!
//! ```text
//! +++
//! title = "Spike: {{topic}}"
//! description = "Time-boxed investigation"
//! labels = ["spike"]
//! story_points = 2
//! +++
//! ## Context
//! Investigate {{topic}}.
//! ```

use std::collections::BTreeMap;
use std::path::Path;

use crate::model::Kind;

/// Template files larger than this are reported instead of read.
const MAX_TEMPLATE_BYTES: u64 = 1024 * 1024;
const FRONT_MATTER_KEYS: [&str; 5] = ["title", "description", "labels", "story_points", "kind"];

#[derive(
    Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum TemplateSource {
    Builtin,
    Project,
}

#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
pub struct Template {
    pub name: String,
    /// One line, shown in listings.
    pub description: String,
    /// Title pattern; may contain `{{variables}}`.
    pub title: String,
    /// Markdown description pattern.
    #[serde(skip)]
    pub body: String,
    pub labels: Vec<String>,
    pub story_points: Option<u8>,
    /// What a ticket made from it is (`kind = "epic"` in the front matter).
    #[serde(default, skip_serializing_if = "Kind::is_ticket")]
    pub kind: Kind,
    /// Every distinct `{{variable}}` in title and body, in order of first appearance.
    pub variables: Vec<String>,
    pub source: TemplateSource,
    /// For project templates: path relative to the project root.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
}

/// A project template file that could not be read or parsed (it is skipped).
#[derive(
    Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize, schemars::JsonSchema,
)]
pub struct TemplateProblem {
    pub path: String,
    pub message: String,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Rendered {
    pub title: String,
    pub description: String,
    pub labels: Vec<String>,
    pub story_points: Option<u8>,
    pub kind: Kind,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RenderError {
    #[error(
        "template {template:?} needs values for these variables: {}",
        .missing.join(", ")
    )]
    Unfilled {
        template: String,
        missing: Vec<String>,
    },
    #[error(
        "template {template:?} rendered an empty title; give its title variables non-empty values"
    )]
    EmptyTitle { template: String },
}

/// A piece of a pattern.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Segment<'a> {
    Text(&'a str),
    Var(&'a str),
}

/// If `s` starts with `{{name}}` (inner spaces allowed), its name and length.
fn variable_at(s: &str) -> Option<(&str, usize)> {
    let rest = s.strip_prefix("{{")?;
    let after_space = rest.trim_start_matches([' ', '\t']);
    let name_len = after_space
        .bytes()
        .take_while(|b| b.is_ascii_alphanumeric() || *b == b'_' || *b == b'-')
        .count();
    let name = after_space.get(..name_len)?;
    if name.is_empty() {
        return None;
    }
    let tail = after_space.get(name_len..)?.trim_start_matches([' ', '\t']);
    let tail = tail.strip_prefix("}}")?;
    Some((name, s.len() - tail.len()))
}

/// Split a pattern into literal text and variables; `\{{name}}` is literal.
fn segments(pattern: &str) -> Vec<Segment<'_>> {
    let bytes = pattern.as_bytes();
    let mut out = Vec::new();
    let mut literal_start = 0;
    let mut i = 0;
    while i < bytes.len() {
        // Only ASCII bytes are inspected, so `i` is a char boundary when sliced.
        let found = match bytes.get(i) {
            Some(b'\\') => pattern
                .get(i + 1..)
                .and_then(variable_at)
                .map(|(_, len)| (1, len, None)),
            Some(b'{') => pattern
                .get(i..)
                .and_then(variable_at)
                .map(|(name, len)| (0, len, Some(name))),
            _ => None,
        };
        let Some((skip, len, name)) = found else {
            i += 1;
            continue;
        };
        if let Some(text) = pattern.get(literal_start..i).filter(|t| !t.is_empty()) {
            out.push(Segment::Text(text));
        }
        let token = pattern.get(i + skip..i + skip + len).unwrap_or_default();
        out.push(match name {
            Some(name) => Segment::Var(name),
            None => Segment::Text(token),
        });
        i += skip + len;
        literal_start = i;
    }
    if let Some(text) = pattern.get(literal_start..).filter(|t| !t.is_empty()) {
        out.push(Segment::Text(text));
    }
    out
}

/// Distinct variables of the patterns, in order of first appearance.
fn collect_variables(patterns: &[&str]) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    for pattern in patterns {
        for segment in segments(pattern) {
            if let Segment::Var(name) = segment
                && !names.iter().any(|n| n == name)
            {
                names.push(name.to_string());
            }
        }
    }
    names
}

fn substitute(segments: &[Segment<'_>], variables: &BTreeMap<String, String>) -> String {
    let mut out = String::new();
    for segment in segments {
        match segment {
            Segment::Text(text) => out.push_str(text),
            Segment::Var(name) => {
                if let Some(value) = variables.get(*name) {
                    out.push_str(value);
                }
            }
        }
    }
    out
}

/// Fill in a template. Extra variables are ignored; missing ones are an error.
pub fn render(
    template: &Template,
    variables: &BTreeMap<String, String>,
) -> Result<Rendered, RenderError> {
    let title = segments(&template.title);
    let body = segments(&template.body);
    let mut missing: Vec<String> = title
        .iter()
        .chain(&body)
        .filter_map(|segment| match segment {
            Segment::Var(name) if !variables.contains_key(*name) => Some(name.to_string()),
            _ => None,
        })
        .collect();
    missing.sort();
    missing.dedup();
    if !missing.is_empty() {
        return Err(RenderError::Unfilled {
            template: template.name.clone(),
            missing,
        });
    }
    // Titles are one line.
    let title = substitute(&title, variables)
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    if title.is_empty() {
        return Err(RenderError::EmptyTitle {
            template: template.name.clone(),
        });
    }
    Ok(Rendered {
        title,
        description: substitute(&body, variables),
        labels: template.labels.clone(),
        story_points: template.story_points,
        kind: template.kind,
    })
}

fn builtin_template(
    name: &str,
    description: &str,
    title: &str,
    body: &str,
    labels: &[&str],
    story_points: u8,
) -> Template {
    Template {
        name: name.to_string(),
        description: description.to_string(),
        title: title.to_string(),
        body: body.to_string(),
        labels: labels.iter().map(|l| l.to_string()).collect(),
        story_points: Some(story_points),
        kind: Kind::Ticket,
        variables: collect_variables(&[title, body]),
        source: TemplateSource::Builtin,
        path: None,
    }
}

const API_ENDPOINT: &str = "\
## Context
Implement {{method}} endpoint for {{resource}} resource.

Route: `{{method}} {{endpoint}}`

## Files to Create
- `src/routes/{{resource}}.rs` - route handler
- `src/schemas/{{resource}}.rs` - request/response types and validation
- `tests/api/{{resource}}.rs` - integration tests

## Implementation Notes
- Validate path, query and body parameters before touching storage
- Return errors in the project's standard error format, naming the invalid field
- Register the route and document request, response and error codes

## Acceptance Criteria
- [ ] `{{method}} {{endpoint}}` returns the documented response on success
- [ ] Invalid input is rejected with 400 and a message naming the field
- [ ] Unknown {{resource}} returns 404; unauthorized requests return 401/403
- [ ] Integration tests cover success, validation errors and not found
- [ ] API documentation updated
";

const DATABASE_MIGRATION: &str = "\
## Context
Change the `{{table}}` table: {{change}}.

## Migration Plan
- Write the forward migration for `{{table}}`
- Write the rollback migration that restores the previous schema exactly
- Backfill or transform existing rows if needed, in batches for large tables
- Update models, queries and fixtures that use `{{table}}`

## Risks
- Locks on large tables: measure how long the migration holds them
- Old and new application versions must both work during the rollout

## Acceptance Criteria
- [ ] Migration applies cleanly on a copy of production-like data
- [ ] Rollback restores the previous schema without data loss
- [ ] Re-running the migration is safe or fails with a clear message
- [ ] Models and queries updated; all tests pass
- [ ] Migration duration measured and noted in this ticket
";

const REACT_COMPONENT: &str = "\
## Context
Build the `{{component}}` React component: {{purpose}}.

## Files to Create
- `src/components/{{component}}/{{component}}.tsx` - component
- `src/components/{{component}}/{{component}}.test.tsx` - tests
- `src/components/{{component}}/index.ts` - export

## Requirements
- Typed props with sensible defaults; no `any`
- Accessible: semantic elements, keyboard navigation, labelled inputs
- Handles loading, empty and error states
- Follows the design system (spacing, colors, typography)

## Acceptance Criteria
- [ ] Renders correctly with only the required props
- [ ] Tests cover rendering, user interaction and edge states
- [ ] No accessibility violations; fully usable with the keyboard
- [ ] Responsive at mobile and desktop widths
- [ ] Used in at least one page or story
";

const BUG_FIX: &str = "\
## Context
Bug: {{summary}}

## Steps to Reproduce
1. _Exact steps, inputs and environment_

## Expected Behavior
_What should happen._

## Actual Behavior
_What happens instead (error messages, logs, screenshots)._

## Investigation
- [ ] Reproduce locally and capture logs or a stack trace
- [ ] Find the root cause, not only the symptom
- [ ] Check other code paths for the same defect

## Acceptance Criteria
- [ ] Root cause identified and described in this ticket
- [ ] Fix covered by a regression test that fails without it
- [ ] Existing test suite passes
";

const REFACTOR: &str = "\
## Context
Refactor {{target}} to {{goal}}.

## Current Problems
- _What makes this code hard to change, test or understand?_

## Approach
- Keep behavior identical: no functional changes in this ticket
- Add characterization tests first where coverage is missing
- Work in small, reviewable steps, each with passing tests

## Out of Scope
- New features or behavior changes (file separate tickets)

## Acceptance Criteria
- [ ] Behavior unchanged: existing tests pass without modification
- [ ] Touched code paths are covered by tests
- [ ] Code is measurably simpler (less duplication, smaller functions)
- [ ] No new compiler or linter warnings
";

/// The built-in templates.
pub fn builtin() -> Vec<Template> {
    vec![
        builtin_template(
            "api-endpoint",
            "REST API endpoint with validation",
            "{{method}} {{endpoint}} endpoint",
            API_ENDPOINT,
            &["backend", "api"],
            3,
        ),
        builtin_template(
            "database-migration",
            "Schema migration with rollback",
            "Migrate {{table}}: {{change}}",
            DATABASE_MIGRATION,
            &["backend", "database"],
            3,
        ),
        builtin_template(
            "react-component",
            "React component with tests",
            "{{component}} component",
            REACT_COMPONENT,
            &["frontend", "react"],
            3,
        ),
        builtin_template(
            "bug-fix",
            "Bug investigation and fix",
            "Fix: {{summary}}",
            BUG_FIX,
            &["bug"],
            2,
        ),
        builtin_template(
            "refactor",
            "Code refactoring task",
            "Refactor {{target}}",
            REFACTOR,
            &["refactor", "tech-debt"],
            3,
        ),
    ]
}

/// Built-ins plus `<dir>/*.md` (non-recursive, sorted by file name). A project
/// template named like a built-in replaces it; unreadable or invalid files are
/// skipped and reported. A missing `dir` is not a problem.
pub fn load(dir: &Path, root: &Path) -> (Vec<Template>, Vec<TemplateProblem>) {
    let mut templates = builtin();
    let mut problems = Vec::new();
    let entries = match std::fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return (templates, problems),
        Err(e) => {
            problems.push(TemplateProblem {
                path: relative(dir, root),
                message: format!("cannot read the templates directory: {e}"),
            });
            return (templates, problems);
        }
    };

    let mut files = Vec::new();
    for entry in entries {
        match entry {
            Ok(entry) => {
                let path = entry.path();
                let is_md = path.extension().is_some_and(|ext| ext == "md");
                let hidden = entry.file_name().to_string_lossy().starts_with('.');
                // Follows symlinks; directories named `x.md` are skipped.
                if is_md && !hidden && path.is_file() {
                    files.push(path);
                }
            }
            Err(e) => problems.push(TemplateProblem {
                path: relative(dir, root),
                message: format!("cannot list the templates directory: {e}"),
            }),
        }
    }
    files.sort();

    for file in files {
        let path = relative(&file, root);
        let result = read_template(&file, &path);
        match result {
            Ok(template) => match templates.iter_mut().find(|t| t.name == template.name) {
                Some(existing) => *existing = template,
                None => templates.push(template),
            },
            Err(message) => problems.push(TemplateProblem { path, message }),
        }
    }
    (templates, problems)
}

fn read_template(file: &Path, path: &str) -> Result<Template, String> {
    let name = file
        .file_stem()
        .and_then(|stem| stem.to_str())
        .ok_or_else(|| "the file name is not valid UTF-8".to_string())?;
    let size = std::fs::metadata(file)
        .map_err(|e| format!("cannot read the file: {e}"))?
        .len();
    if size > MAX_TEMPLATE_BYTES {
        return Err(format!(
            "the file is too large ({size} bytes; templates are limited to {MAX_TEMPLATE_BYTES})"
        ));
    }
    let text = std::fs::read_to_string(file).map_err(|e| format!("cannot read the file: {e}"))?;
    parse(name, &text, Some(path.to_string()))
}

/// `path` relative to `root` with `/` separators, else `path` as is.
fn relative(path: &Path, root: &Path) -> String {
    match path.strip_prefix(root) {
        Ok(rel) if !rel.as_os_str().is_empty() => rel
            .components()
            .map(|c| c.as_os_str().to_string_lossy())
            .collect::<Vec<_>>()
            .join("/"),
        _ => path.display().to_string(),
    }
}

/// Parsed front matter values.
#[derive(Debug, Default)]
struct FrontMatter {
    title: Option<String>,
    description: Option<String>,
    labels: Vec<String>,
    story_points: Option<u8>,
    kind: Kind,
}

/// Split `+++` front matter from the rest: (TOML source, body).
fn split_front_matter(text: &str) -> Result<(Option<&str>, &str), String> {
    let mut lines = text.split_inclusive('\n');
    let Some(first) = lines.next() else {
        return Ok((None, text));
    };
    if first.trim_end() != "+++" {
        return Ok((None, text));
    }
    let toml_start = first.len();
    let mut offset = toml_start;
    for line in lines {
        if line.trim_end() == "+++" {
            let toml = text.get(toml_start..offset).unwrap_or_default();
            let body = text.get(offset + line.len()..).unwrap_or_default();
            return Ok((Some(toml), body));
        }
        offset += line.len();
    }
    Err("the front matter opened by +++ on line 1 is never closed (add a line with +++)".into())
}

fn parse_front_matter(toml: &str) -> Result<FrontMatter, String> {
    let table: toml::Table = toml.parse().map_err(|e: toml::de::Error| {
        match e.span() {
            Some(span) => {
                let before = toml.get(..span.start).unwrap_or(toml);
                // The TOML starts on line 2 of the file, after `+++`.
                let line = before.matches('\n').count() + 2;
                let column = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
                format!(
                    "invalid TOML front matter at line {line}, column {column}: {}",
                    e.message()
                )
            }
            None => format!("invalid TOML front matter: {}", e.message()),
        }
    })?;

    let unknown: Vec<&str> = table
        .keys()
        .map(String::as_str)
        .filter(|key| !FRONT_MATTER_KEYS.contains(key))
        .collect();
    if !unknown.is_empty() {
        let s = if unknown.len() == 1 { "" } else { "s" };
        return Err(format!(
            "unknown front matter key{s}: {}; allowed keys are {}",
            unknown.join(", "),
            FRONT_MATTER_KEYS.join(", ")
        ));
    }

    let mut meta = FrontMatter::default();
    for (key, value) in &table {
        match key.as_str() {
            "title" => {
                let title = value
                    .as_str()
                    .ok_or_else(|| format!("front matter key title must be a string, got {value}"))?
                    .trim();
                if title.is_empty() {
                    return Err("front matter key title must not be empty".into());
                }
                meta.title = Some(title.to_string());
            }
            "description" => {
                let description = value.as_str().ok_or_else(|| {
                    format!("front matter key description must be a string, got {value}")
                })?;
                // Listings show it on one line.
                meta.description =
                    Some(description.split_whitespace().collect::<Vec<_>>().join(" "));
            }
            "labels" => meta.labels = parse_labels(value)?,
            "kind" => {
                meta.kind = value.as_str().and_then(Kind::parse).ok_or_else(|| {
                    format!("front matter key kind must be \"ticket\" or \"epic\", got {value}")
                })?;
            }
            "story_points" => {
                let points = value
                    .as_integer()
                    .and_then(|n| u8::try_from(n).ok())
                    .filter(|n| (1..=13).contains(n))
                    .ok_or_else(|| {
                        format!(
                            "front matter key story_points must be an integer from 1 to 13, got {value}"
                        )
                    })?;
                meta.story_points = Some(points);
            }
            _ => {}
        }
    }
    Ok(meta)
}

fn parse_labels(value: &toml::Value) -> Result<Vec<String>, String> {
    let bad = || {
        format!(
            "front matter key labels must be an array of non-empty strings, e.g. \
             labels = [\"backend\", \"api\"]; got {value}"
        )
    };
    let items = value.as_array().ok_or_else(bad)?;
    let mut labels: Vec<String> = Vec::new();
    for item in items {
        let label = item.as_str().map(str::trim).filter(|l| !l.is_empty());
        let label = label.ok_or_else(bad)?;
        if !labels.iter().any(|l| l == label) {
            labels.push(label.to_string());
        }
    }
    Ok(labels)
}

/// Find the first `# ` heading line outside fenced code blocks: its title
/// text and the body with that line removed.
fn take_title_heading(body: &str) -> Option<(String, String)> {
    let mut fence: Option<(u8, usize)> = None;
    let mut offset = 0;
    for line in body.split_inclusive('\n') {
        let start = offset;
        offset += line.len();
        let content = line.trim_end_matches(['\n', '\r']);
        let indented = content.trim_start_matches(' ');
        let indent = content.len() - indented.len();
        let marker = indented.bytes().next().filter(|b| *b == b'`' || *b == b'~');
        let run = marker.map_or(0, |m| indented.bytes().take_while(|b| *b == m).count());
        match (fence, marker) {
            (Some((open, len)), Some(m)) => {
                let rest = indented.get(run..).unwrap_or_default();
                if m == open && run >= len && indent < 4 && rest.trim().is_empty() {
                    fence = None;
                }
                continue;
            }
            (Some(_), None) => continue,
            (None, Some(m)) if run >= 3 && indent < 4 => {
                fence = Some((m, run));
                continue;
            }
            _ => {}
        }
        let Some(text) = content.strip_prefix("# ") else {
            continue;
        };
        let title = strip_closing_hashes(text.trim());
        if title.is_empty() {
            continue;
        }
        let mut rest = String::with_capacity(body.len());
        rest.push_str(body.get(..start).unwrap_or_default());
        rest.push_str(body.get(offset..).unwrap_or_default());
        return Some((title.to_string(), rest));
    }
    None
}

/// `Title ##` -> `Title` (an ATX closing sequence needs a space before it).
fn strip_closing_hashes(text: &str) -> &str {
    let without = text.trim_end_matches('#');
    if without.len() == text.len() {
        text
    } else if without.is_empty() {
        ""
    } else if without.ends_with([' ', '\t']) {
        without.trim_end()
    } else {
        text
    }
}

/// Body tidy-up: no leading blank lines, exactly one trailing newline.
fn tidy_body(body: &str) -> String {
    let mut rest = body;
    while let Some(pos) = rest.find('\n') {
        let line = rest.get(..pos).unwrap_or_default();
        if !line.trim().is_empty() {
            break;
        }
        rest = rest.get(pos + 1..).unwrap_or_default();
    }
    if rest.trim().is_empty() {
        return String::new();
    }
    let mut out = rest.trim_end().to_string();
    out.push('\n');
    out
}

/// Parse a project template file named `<name>.md`.
pub fn parse(name: &str, text: &str, path: Option<String>) -> Result<Template, String> {
    let name = name.trim();
    if name.is_empty() {
        return Err("the template name is empty".into());
    }
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let (toml, rest) = split_front_matter(text)?;
    let meta = match toml {
        Some(toml) => parse_front_matter(toml)?,
        None => FrontMatter::default(),
    };
    let (title, body) = match meta.title {
        Some(title) => (title, rest.to_string()),
        None => take_title_heading(rest).unwrap_or_else(|| (name.to_string(), rest.to_string())),
    };
    let body = tidy_body(&body);
    Ok(Template {
        name: name.to_string(),
        description: meta
            .description
            .unwrap_or_else(|| "Project template".to_string()),
        variables: collect_variables(&[&title, &body]),
        title,
        body,
        labels: meta.labels,
        story_points: meta.story_points,
        kind: meta.kind,
        source: TemplateSource::Project,
        path,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vars(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    fn template(title: &str, body: &str) -> Template {
        builtin_template("t", "test", title, body, &["x"], 1)
    }

    fn find<'a>(templates: &'a [Template], name: &str) -> &'a Template {
        templates.iter().find(|t| t.name == name).unwrap()
    }

    #[test]
    fn builtins_are_complete_and_render() {
        let templates = builtin();
        let names: Vec<&str> = templates.iter().map(|t| t.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "api-endpoint",
                "database-migration",
                "react-component",
                "bug-fix",
                "refactor"
            ]
        );
        for t in &templates {
            let lines = t.body.lines().count();
            assert!((10..=25).contains(&lines), "{}: {lines} lines", t.name);
            assert!(t.body.starts_with("## Context\n"), "{}", t.name);
            assert!(
                t.body.contains("\n## Acceptance Criteria\n- [ ] "),
                "{}",
                t.name
            );
            assert!(t.body.ends_with('\n') && !t.body.ends_with("\n\n"));
            assert!(!t.labels.is_empty() && t.story_points.is_some());
            assert!(!t.variables.is_empty());
            assert_eq!(t.source, TemplateSource::Builtin);
            let values: BTreeMap<String, String> = t
                .variables
                .iter()
                .map(|v| (v.clone(), format!("<{v}>")))
                .collect();
            let rendered = render(t, &values).unwrap();
            assert!(!rendered.title.contains("{{"), "{}", rendered.title);
            assert!(
                !rendered.description.contains("{{"),
                "{}",
                rendered.description
            );
        }
    }

    #[test]
    fn api_endpoint() {
        let templates = builtin();
        let t = find(&templates, "api-endpoint");
        assert_eq!(t.variables, ["method", "endpoint", "resource"]);
        assert_eq!(t.labels, ["backend", "api"]);
        let rendered = render(
            t,
            &vars(&[
                ("method", "POST"),
                ("endpoint", "/api/users"),
                ("resource", "user"),
                ("unused", "ok"),
            ]),
        )
        .unwrap();
        assert_eq!(rendered.title, "POST /api/users endpoint");
        assert!(
            rendered
                .description
                .starts_with("## Context\nImplement POST endpoint for user resource.\n")
        );
        assert!(
            rendered
                .description
                .contains("## Files to Create\n- `src/routes/user.rs`")
        );
        assert!(rendered.description.contains("`src/schemas/user.rs`"));
        assert!(rendered.description.contains("`tests/api/user.rs`"));
        assert_eq!(rendered.labels, ["backend", "api"]);
        assert_eq!(rendered.story_points, Some(3));

        let json = serde_json::to_value(t).unwrap();
        assert_eq!(json["source"], "builtin");
        assert!(json.get("body").is_none() && json.get("path").is_none());
    }

    #[test]
    fn unfilled_lists_all_missing() {
        let t = template("{{b}} {{ a }}", "{{c}} {{a}} {{b}} {{present}}");
        let err = render(&t, &vars(&[("present", "p")])).unwrap_err();
        assert_eq!(
            err,
            RenderError::Unfilled {
                template: "t".into(),
                missing: vec!["a".into(), "b".into(), "c".into()]
            }
        );
        assert_eq!(
            err.to_string(),
            "template \"t\" needs values for these variables: a, b, c"
        );
        // Names are case-sensitive.
        let err = render(
            &t,
            &vars(&[("A", "1"), ("b", "2"), ("c", "3"), ("present", "")]),
        );
        assert!(matches!(err, Err(RenderError::Unfilled { missing, .. }) if missing == ["a"]));
    }

    #[test]
    fn variable_syntax_and_escapes() {
        let t = template(
            "T",
            "{{x}}|{{ x }}|{{\tx\t}}|\\{{x}}|\\{{ y }}|{{ }}|{{a b}}|{{|}}|{{x}|{x}}|{{{x}}}|\\x|{{é}}|{{x-1_Y}}",
        );
        assert_eq!(t.variables, ["x", "x-1_Y"]);
        let rendered = render(&t, &vars(&[("x", "V"), ("x-1_Y", "W")])).unwrap();
        assert_eq!(
            rendered.description,
            "V|V|V|{{x}}|{{ y }}|{{ }}|{{a b}}|{{|}}|{{x}|{x}}|{V}|\\x|{{é}}|W"
        );
    }

    #[test]
    fn single_pass_substitution() {
        let t = template("{{a}}", "{{a}} {{b}}");
        let rendered = render(&t, &vars(&[("a", "{{b}}"), ("b", "{{a}}")])).unwrap();
        assert_eq!(rendered.title, "{{b}}");
        assert_eq!(rendered.description, "{{b}} {{a}}");
    }

    #[test]
    fn title_is_one_line_and_not_empty() {
        let t = template("  {{a}}  {{b}} ", "");
        let rendered = render(&t, &vars(&[("a", "x\ny"), ("b", "z ")])).unwrap();
        assert_eq!(rendered.title, "x y z");
        let err = render(&t, &vars(&[("a", " "), ("b", "")])).unwrap_err();
        assert_eq!(
            err,
            RenderError::EmptyTitle {
                template: "t".into()
            }
        );
        assert!(err.to_string().contains("empty title"));
    }

    #[test]
    fn parse_front_matter_valid() {
        let text = "+++\ntitle = \"Spike: {{topic}}\"\ndescription = \"Time-boxed\\ninvestigation\"\nlabels = [\"spike\", \" research \", \"spike\"]\nstory_points = 2\n+++\n\n\n## Context\nInvestigate {{topic}} for {{team}}.\n\n";
        let t = parse("spike", text, Some(".jility/templates/spike.md".into())).unwrap();
        assert_eq!(t.name, "spike");
        assert_eq!(t.title, "Spike: {{topic}}");
        assert_eq!(t.description, "Time-boxed investigation");
        assert_eq!(t.labels, ["spike", "research"]);
        assert_eq!(t.story_points, Some(2));
        assert_eq!(t.body, "## Context\nInvestigate {{topic}} for {{team}}.\n");
        assert_eq!(t.variables, ["topic", "team"]);
        assert_eq!(t.source, TemplateSource::Project);
        assert_eq!(t.path.as_deref(), Some(".jility/templates/spike.md"));
        let json = serde_json::to_value(&t).unwrap();
        assert_eq!(json["path"], ".jility/templates/spike.md");
        assert_eq!(json["source"], "project");

        // Front matter with CRLF and a `# ` heading kept in the body.
        let t = parse(
            "x",
            "+++\r\ntitle = \"T\"\r\n+++\r\n# Heading\r\nbody\r\n",
            None,
        )
        .unwrap();
        assert_eq!(t.title, "T");
        assert_eq!(t.body, "# Heading\r\nbody\n");
        assert_eq!(t.story_points, None);
        assert!(t.labels.is_empty());
    }

    #[test]
    fn parse_without_title() {
        let t = parse("chore", "\n# Chore: {{what}} ##\n\nDo {{what}}.\n", None).unwrap();
        assert_eq!(t.title, "Chore: {{what}}");
        assert_eq!(t.body, "Do {{what}}.\n");
        assert_eq!(t.variables, ["what"]);
        assert_eq!(t.description, "Project template");

        // Front matter without title: the heading is still used.
        let t = parse(
            "x",
            "+++\nlabels = [\"a\"]\n+++\n# From heading\nBody\n",
            None,
        )
        .unwrap();
        assert_eq!(t.title, "From heading");
        assert_eq!(t.body, "Body\n");

        // `# ` inside a code block or `##` are not titles: use the file name.
        let text = "## Context\n```sh\n# comment\n```\n~~~~\n# also code\n~~~~\n#hashtag\n";
        let t = parse("notes", text, None).unwrap();
        assert_eq!(t.title, "notes");
        assert_eq!(t.body, text);

        let t = parse("empty", "", None).unwrap();
        assert_eq!((t.title.as_str(), t.body.as_str()), ("empty", ""));
    }

    #[test]
    fn parse_errors() {
        let err = parse("x", "+++\ntitle = \"T\"\nlabels = [\"a\"\n+++\nbody", None).unwrap_err();
        assert!(
            err.starts_with("invalid TOML front matter at line "),
            "{err}"
        );
        let err = parse("x", "+++\ntitle = \"T\"\nnope\n+++\n", None).unwrap_err();
        assert!(
            err.starts_with("invalid TOML front matter at line 3, column "),
            "{err}"
        );

        let err = parse(
            "x",
            "+++\ntitle = \"T\"\npriority = 1\nowner = \"me\"\n+++\n",
            None,
        )
        .unwrap_err();
        assert_eq!(
            err,
            "unknown front matter keys: owner, priority; allowed keys are title, description, \
             labels, story_points, kind"
        );
        let epic = parse("x", "+++\nkind = \"epic\"\n+++\n# Roll out SSO\n", None).unwrap();
        assert_eq!(epic.kind, Kind::Epic);
        let err = parse("x", "+++\nkind = \"story\"\n+++\n", None).unwrap_err();
        assert!(err.contains("kind must be \"ticket\" or \"epic\""), "{err}");
        let err = parse("x", "+++\nstory_points = 1\nfoo = 1\n+++\n", None).unwrap_err();
        assert!(err.starts_with("unknown front matter key: foo;"), "{err}");

        for bad in ["0", "14", "-1", "300", "2.5", "\"3\""] {
            let text = format!("+++\nstory_points = {bad}\n+++\n");
            let err = parse("x", &text, None).unwrap_err();
            assert_eq!(
                err,
                format!("front matter key story_points must be an integer from 1 to 13, got {bad}")
            );
        }
        assert_eq!(
            parse("x", "+++\nstory_points = 13\n+++\n", None)
                .unwrap()
                .story_points,
            Some(13)
        );

        let err = parse("x", "+++\nlabels = \"a\"\n+++\n", None).unwrap_err();
        assert!(err.contains("labels must be an array"), "{err}");
        let err = parse("x", "+++\nlabels = [\"a\", 1]\n+++\n", None).unwrap_err();
        assert!(err.contains("labels must be an array"), "{err}");
        let err = parse("x", "+++\ntitle = 1\n+++\n", None).unwrap_err();
        assert!(err.contains("title must be a string"), "{err}");
        let err = parse("x", "+++\ntitle = \" \"\n+++\n", None).unwrap_err();
        assert!(err.contains("title must not be empty"), "{err}");

        let err = parse("x", "+++\ntitle = \"T\"\nbody\n", None).unwrap_err();
        assert!(err.contains("never closed"), "{err}");
        assert!(parse(" ", "body", None).is_err());
    }

    #[test]
    fn parse_never_panics() {
        let pieces = [
            "+++", "\n", "\r\n", "# ", "#", "```", "~~~", "{{", "}}", "\\", "x", "é", " ", "=",
            "\"", "[", "]", "title", "\u{feff}",
        ];
        let mut seed: u64 = 0x2545_F491_4F6C_DD1D;
        for _ in 0..3000 {
            let mut text = String::new();
            for _ in 0..(seed % 24) {
                seed ^= seed << 13;
                seed ^= seed >> 7;
                seed ^= seed << 17;
                text.push_str(pieces[(seed % pieces.len() as u64) as usize]);
            }
            if let Ok(t) = parse("n", &text, None) {
                let values: BTreeMap<String, String> = t
                    .variables
                    .iter()
                    .map(|v| (v.clone(), "{{v}}".into()))
                    .collect();
                let _ = render(&t, &values);
            }
            let _ = segments(&text);
        }
    }

    #[test]
    fn load_templates_from_dir() {
        let root = tempfile::tempdir().unwrap();
        let dir = root.path().join(".jility").join("templates");
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(
            dir.join("spike.md"),
            "+++\ndescription = \"Investigation\"\nstory_points = 2\n+++\n# Spike: {{topic}}\n\n## Context\nLook into {{topic}}.\n",
        )
        .unwrap();
        std::fs::write(
            dir.join("bug-fix.md"),
            "# Bug: {{summary}}\n\n## Context\nOur own bug template.\n",
        )
        .unwrap();
        std::fs::write(dir.join("broken.md"), "+++\ntitle = \n+++\n").unwrap();
        std::fs::write(dir.join("notes.txt"), "not a template").unwrap();
        std::fs::write(dir.join(".hidden.md"), "# Hidden").unwrap();
        std::fs::create_dir(dir.join("nested.md")).unwrap();
        std::fs::write(dir.join("nested.md").join("deep.md"), "# Deep").unwrap();

        let (templates, problems) = load(&dir, root.path());
        let names: Vec<&str> = templates.iter().map(|t| t.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "api-endpoint",
                "database-migration",
                "react-component",
                "bug-fix",
                "refactor",
                "spike"
            ]
        );
        let bug = find(&templates, "bug-fix");
        assert_eq!(bug.source, TemplateSource::Project);
        assert_eq!(bug.title, "Bug: {{summary}}");
        assert_eq!(bug.path.as_deref(), Some(".jility/templates/bug-fix.md"));
        let spike = find(&templates, "spike");
        assert_eq!(spike.title, "Spike: {{topic}}");
        assert_eq!(spike.description, "Investigation");
        assert_eq!(spike.story_points, Some(2));
        assert_eq!(spike.body, "## Context\nLook into {{topic}}.\n");

        assert_eq!(problems.len(), 1, "{problems:?}");
        assert_eq!(problems[0].path, ".jility/templates/broken.md");
        assert!(
            problems[0]
                .message
                .starts_with("invalid TOML front matter at line 2"),
            "{}",
            problems[0].message
        );
    }

    #[test]
    fn load_missing_or_unreadable_dir() {
        let root = tempfile::tempdir().unwrap();
        let (templates, problems) = load(&root.path().join("missing"), root.path());
        assert_eq!(templates, builtin());
        assert!(problems.is_empty());

        // A file where the directory should be is reported.
        let file = root.path().join("templates");
        std::fs::write(&file, "x").unwrap();
        let (templates, problems) = load(&file, root.path());
        assert_eq!(templates, builtin());
        assert_eq!(problems.len(), 1);
        assert_eq!(problems[0].path, "templates");
    }
}
