//! The `[report]` table of a Duvet 0.4 config file: which reports `duvet report` writes by
//! itself, where, and the links of the HTML report.
//!
//! As duvet 0.4.3: `[report.html]` is on unless `enabled = false` (`.duvet/reports/report.html`),
//! `[report.json]` and `[report.snapshot]` are off unless enabled (`.duvet/reports/report.json`,
//! `.duvet/snapshot.txt`); paths are relative to the working directory (the project's root);
//! `blob-link` and `issue-link` may hold `${{ VAR || 'default' }}` templates, read from the
//! environment.
//!
//! A `[[source]]` may have a `blob-link` of its own ([`SourceLinks`]): 0.4.3 gives it to every
//! annotation it reads from that source's files, and its reports link those annotations there
//! (the JSON report's `annotations[].blob_link`, the v2 report's repositories, the HTML
//! report's links to the code), the run's blob link standing for the others.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use toml::Table;

use crate::annotation::{Annotation, AnnotationType, CommentStyle};
use crate::config::ProjectConfig;

/// Where each configured report goes, and the links.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Settings {
    pub html: Option<PathBuf>,
    pub json: Option<PathBuf>,
    pub snapshot: Option<PathBuf>,
    pub blob_link: Option<String>,
    pub issue_link: Option<String>,
}

/// The settings of `config_file` (none without one).
pub fn load(config_file: Option<&Path>, root: &Path) -> Result<Settings, String> {
    let Some(file) = config_file else {
        return Ok(Settings::default());
    };
    let text =
        crate::output::read_to_string(file).map_err(|e| format!("{}: {e}", file.display()))?;
    let table: Table = text
        .parse()
        .map_err(|e: toml::de::Error| format!("{}: {}", file.display(), e.message()))?;
    let report = table.get("report").and_then(|v| v.as_table());
    let part = |name: &str| report.and_then(|r| r.get(name)).and_then(|v| v.as_table());
    let enabled_path = |name: &str, on: bool, default: &str| -> Option<PathBuf> {
        let t = part(name);
        let enabled = t
            .and_then(|t| t.get("enabled"))
            .and_then(|v| v.as_bool())
            .unwrap_or(on);
        let path = t
            .and_then(|t| t.get("path"))
            .and_then(|v| v.as_str())
            .unwrap_or(default);
        enabled.then(|| root.join(path))
    };
    let link = |key: &str| -> Result<Option<String>, String> {
        part("html")
            .and_then(|t| t.get(key))
            .and_then(|v| v.as_str())
            .map(|v| {
                template(v).map_err(|e| format!("{}: [report.html] {key}: {e}", file.display()))
            })
            .transpose()
    };
    Ok(Settings {
        html: enabled_path("html", true, ".duvet/reports/report.html"),
        json: enabled_path("json", false, ".duvet/reports/report.json"),
        snapshot: enabled_path("snapshot", false, ".duvet/snapshot.txt"),
        blob_link: link("blob-link")?,
        issue_link: link("issue-link")?,
    })
}

/// The `blob-link` of each `[[source]]`, its templates filled, with the files the source
/// names.
#[derive(Debug, Default)]
pub struct SourceLinks {
    /// The config's sources in order; empty when none has a blob link.
    sources: Vec<SourceLink>,
}

#[derive(Debug)]
struct SourceLink {
    link: Option<String>,
    style: CommentStyle,
    default_type: AnnotationType,
    files: HashSet<PathBuf>,
}

impl SourceLinks {
    /// The links of `config`'s sources. A template that cannot be filled is an error, as in
    /// 0.4.3 (which fills them when it reads the config). The files are found as the project
    /// finds them ([`crate::project::matching_files`]), and only when a source has a link.
    pub fn load(config: &ProjectConfig) -> Result<Self, String> {
        if config.sources.iter().all(|s| s.blob_link.is_none()) {
            return Ok(Self::default());
        }
        let file = config
            .config_file
            .as_deref()
            .map_or_else(String::new, |f| format!("{}: ", f.display()));
        let mut sources = Vec::with_capacity(config.sources.len());
        for source in &config.sources {
            let link = source
                .blob_link
                .as_deref()
                .map(|link| {
                    template(link).map_err(|e| {
                        format!(
                            "{file}[[source]] pattern = {:?}: blob-link: {e}",
                            source.pattern
                        )
                    })
                })
                .transpose()?;
            let files = crate::project::Pattern::new(&source.pattern)
                .map(|pattern| crate::project::matching_files(&config.root, &pattern))
                .unwrap_or_default();
            sources.push(SourceLink {
                link,
                style: source.style.clone(),
                default_type: source.default_type,
                files: files.into_iter().collect(),
            });
        }
        Ok(Self { sources })
    }

    /// Where this report differs from 0.4.3's: a file two sources of the same comment style
    /// and type read, with different links, is read once here (its annotations linked to the
    /// first source's), while 0.4.3 lists its annotations once per source. One warning a
    /// pair of sources, naming a file.
    pub fn differences(&self) -> Vec<String> {
        let mut out = Vec::new();
        for (i, a) in self.sources.iter().enumerate() {
            for b in self.sources.iter().skip(i + 1) {
                if a.link == b.link || a.style != b.style || a.default_type != b.default_type {
                    continue;
                }
                let mut shared: Vec<&PathBuf> = a.files.intersection(&b.files).collect();
                shared.sort();
                if let Some(file) = shared.first() {
                    let more = match shared.len() - 1 {
                        0 => String::new(),
                        n => format!(" (and {n} more files)"),
                    };
                    out.push(format!(
                        "{}{more} is read by two [[source]] entries with different blob-links: its annotations are listed once, linked to the first (duvet 0.4.3 lists them once per source)",
                        crate::model::path_text(file),
                    ));
                }
            }
        }
        out
    }

    /// The blob link of the source `annotation` was read from, if it has one. That source is
    /// the one the project parsed the file with: the first whose pattern names the file, whose
    /// comment style the annotation is written in (a requirement file's annotations are in
    /// none) and whose type is the annotation's, or else the first of another type (the
    /// annotation then says its type).
    pub fn of(&self, annotation: &Annotation) -> Option<&str> {
        let mut candidates = self.sources.iter().filter(|s| {
            s.files.contains(&annotation.file) && annotation.comment_text.starts_with(&s.style.meta)
        });
        let first = candidates.next()?;
        std::iter::once(first)
            .chain(candidates)
            .find(|s| s.default_type == annotation.kind)
            .unwrap_or(first)
            .link
            .as_deref()
    }
}

/// A `${{ A || B || 'literal' }}` template filled from the environment: each choice in turn,
/// a quoted literal or a variable that is set.
pub fn template(value: &str) -> Result<String, String> {
    let mut out = String::new();
    for (i, part) in value.split("${{").enumerate() {
        if i == 0 {
            out.push_str(part);
            continue;
        }
        let (expr, rest) = part
            .split_once("}}")
            .ok_or_else(|| "expected \"}}\"".to_string())?;
        let mut filled = None;
        for choice in expr.split("||") {
            let choice = choice.trim();
            if let Some(literal) = choice.strip_prefix('\'') {
                filled = Some(literal.trim_end_matches('\'').to_string());
                break;
            }
            if let Ok(v) = std::env::var(choice) {
                filled = Some(v);
                break;
            }
        }
        let filled = filled.ok_or_else(|| format!("failed to evaluate expression: {expr:?}"))?;
        out.push_str(&filled);
        out.push_str(rest);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn templates_take_the_first_choice_that_is_set() {
        assert_eq!(template("plain").unwrap(), "plain");
        assert_eq!(
            template("https://x/blob/${{ DUVET_SURELY_UNSET_VAR || 'main' }}/").unwrap(),
            "https://x/blob/main/"
        );
        assert!(template("${{ DUVET_SURELY_UNSET_VAR }}").is_err());
        assert!(template("${{ 'open").is_err());
    }

    #[test]
    fn reports_are_on_and_off_as_in_0_4_3() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("config.toml");
        std::fs::write(&file, "[report.json]\nenabled = true\n[report.snapshot]\nenabled = true\npath = \"snap.txt\"\n").unwrap();
        let s = load(Some(&file), Path::new("/r")).unwrap();
        assert_eq!(s.html, Some(PathBuf::from("/r/.duvet/reports/report.html")));
        assert_eq!(s.json, Some(PathBuf::from("/r/.duvet/reports/report.json")));
        assert_eq!(s.snapshot, Some(PathBuf::from("/r/snap.txt")));
        std::fs::write(&file, "[report.html]\nenabled = false\n").unwrap();
        let s = load(Some(&file), Path::new("/r")).unwrap();
        assert_eq!(s, Settings::default());
        assert_eq!(load(None, Path::new("/r")).unwrap(), Settings::default());
    }
}
