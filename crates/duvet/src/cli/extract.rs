//! `duvet extract`: duvet 0.4.3's command, writing a specification's requirement files
//! ([`crate::extract`]); and the extraction `duvet report` runs first for every declared
//! specification ([`requirements`]), as 0.4.3's does.

use std::path::{Component, Path, PathBuf};
use std::process::ExitCode;

use clap::Args;

use super::common::{CargoFlags, fail, note};
use crate::config::{self, Flags, ProjectConfig};
use crate::extract::{self, Extension};
use crate::output;
use crate::project;
use crate::spec::Format;

#[derive(Debug, Args)]
pub struct ExtractArgs {
    /// The specification's format: ietf, markdown (md) or auto (Markdown for .md files and
    /// texts starting with `#`).
    #[arg(short, long, default_value = "IETF", value_name = "FORMAT")]
    format: String,

    /// The files to write: toml (requirement files) or rs (annotated Rust comments).
    #[arg(short, long, default_value = "toml", value_name = "EXTENSION")]
    extension: String,

    /// The directory to write into: `<OUT>/<specification path without extension>/<section>.<EXTENSION>`.
    #[arg(short, long, default_value = ".", value_name = "OUT")]
    out: PathBuf,

    /// The config file whose download cache holds URL specifications (default
    /// .duvet/config.toml when it exists).
    #[arg(long, value_name = "FILE")]
    config_path: Option<PathBuf>,

    /// Legacy form: the directory holding the specs/ download cache.
    #[arg(long, value_name = "DIR", hide = true)]
    spec_path: Option<PathBuf>,

    #[arg(long = "source-pattern", hide = true)]
    source_patterns: Vec<String>,

    #[arg(long = "spec-pattern", hide = true)]
    spec_patterns: Vec<String>,

    #[command(flatten)]
    cargo: CargoFlags,

    /// The specification: a URL (read from the download cache) or a path.
    #[arg(value_name = "TARGET_PATH")]
    target_path: String,
}

/// A format as 0.4.3's `--format` names it; `None` for auto.
fn format_arg(value: &str) -> Result<Option<Format>, String> {
    match value {
        "AUTO" | "auto" => Ok(None),
        "IETF" | "ietf" => Ok(Some(Format::Ietf)),
        "MARKDOWN" | "markdown" | "md" => Ok(Some(Format::Markdown)),
        _ => Err(format!(
            "Invalid spec type {value:?}, expected one of [\"auto\", \"ietf\", \"markdown\"]"
        )),
    }
}

pub fn run(args: ExtractArgs) -> ExitCode {
    let _ = &args.cargo;
    let root = match std::env::current_dir() {
        Ok(root) => root,
        Err(e) => return fail(&[format!("cannot read the working directory: {e}")]),
    };
    let format = match format_arg(&args.format) {
        Ok(format) => format,
        Err(e) => return fail(&[e]),
    };
    let Some(ext) = Extension::parse(&args.extension) else {
        return fail(&[format!("unsupported extraction type: {:?}", args.extension)]);
    };
    if args.out.extension().is_some() {
        return fail(&[format!(
            "single file extraction not supported, got {}",
            args.out.display()
        )]);
    }
    // The download cache: the config's, or the legacy `<spec-path>/specs`, or `specs`.
    let flags = Flags {
        spec_patterns: args.spec_patterns.clone(),
        source_patterns: args.source_patterns.clone(),
        spec_path: args.spec_path.clone(),
        config: args.config_path.clone(),
    };
    let download = match config::load(&root, &flags) {
        Ok(config) if config.config_file.is_some() => relative(&root, &config.spec_cache_dir),
        Ok(_) | Err(config::ConfigError::NoConfig { .. }) => match &args.spec_path {
            Some(dir) => dir.join("specs"),
            None => PathBuf::from("specs"),
        },
        Err(e) => return fail(&[e.to_string()]),
    };
    let target = args.target_path.trim();
    let local = if target.contains("://") {
        match config::cache_path(&download, target) {
            Some(path) => path,
            None => return fail(&[format!("{target} is not a URL duvet can cache")]),
        }
    } else {
        PathBuf::from(target)
    };
    if target.contains("://") {
        let download = crate::download::Download {
            source: target.to_string(),
            url: config::canonical_url(target),
            file: root.join(&local),
            shown: local.display().to_string(),
            cache_dir: root.join(&download),
            root: root.clone(),
        };
        match crate::download::fetch_missing(vec![download]) {
            Ok(lines) => lines.iter().for_each(|line| note(line)),
            Err(errors) => return fail(&errors),
        }
    }
    let text = match output::read(&root.join(&local)) {
        Ok(bytes) => project::text_of(&bytes).into_owned(),
        Err(e) => {
            return fail(&[format!(
                "cannot read {} ({e}){}",
                local.display(),
                if target.contains("://") {
                    format!(
                        "; this duvet reads specifications offline: save the text there first, e.g. `curl -fsSL --create-dirs -o {} {target}`",
                        local.display()
                    )
                } else {
                    String::new()
                }
            )]);
        }
    };
    let format = format.unwrap_or_else(|| Format::auto(target, &text));
    let (files, total) = extract::files(&text, format, &display_target(target), ext);
    let dir = extract::out_dir(&args.out, None, &local);
    let count = files.len();
    // `--out` is the user's: followed wherever it leads; below it, nothing leaves it.
    let out = root.join(&args.out);
    let confinement = output::Confinement::below(&out, "the requirement file");
    if let Err(e) = write_all(&root, &dir, files, |file| confinement.check(file)) {
        return fail(&[e]);
    }
    note(&format!(
        "Extracted {total} requirements across {count} sections"
    ));
    ExitCode::SUCCESS
}

/// The target as 0.4.3 writes it into requirement files: a URL as the `url` crate prints it,
/// a path as given.
fn display_target(target: &str) -> String {
    if target.contains("://") {
        url::Url::parse(target).map_or_else(|_| target.to_string(), |u| u.to_string())
    } else {
        target.to_string()
    }
}

/// `path` relative to `root` when inside it.
fn relative(root: &Path, path: &Path) -> PathBuf {
    path.strip_prefix(root)
        .map_or_else(|_| path.to_path_buf(), Path::to_path_buf)
}

/// Write `files` (name, text) into `dir` (relative to `root`), each unless it already holds
/// its text, once they are [`placed`]. Returns each file (its path relative to `root`) with
/// the text it now holds.
fn write_all(
    root: &Path,
    dir: &Path,
    files: Vec<(String, String)>,
    confined: impl Fn(&Path) -> Result<(), String>,
) -> Result<Vec<(PathBuf, String)>, String> {
    placed(root, dir, &files, confined)?;
    write_files(
        root,
        files
            .into_iter()
            .map(|(name, text)| (dir.join(name), text))
            .collect(),
    )
}

/// Check that `confined` accepts where `files` (name, text) go in `dir` (relative to `root`;
/// see [`crate::output::confine`]: a specification's path, or a link in the project, must
/// not lead them elsewhere), and make the directory.
fn placed(
    root: &Path,
    dir: &Path,
    files: &[(String, String)],
    confined: impl Fn(&Path) -> Result<(), String>,
) -> Result<(), String> {
    let full = root.join(dir);
    // Every file: a name is made from a section's id, which the specification writes
    // (`{#../../../x}` in Markdown).
    for (name, _) in files {
        confined(&full.join(name))?;
    }
    if !files.is_empty() {
        std::fs::create_dir_all(&full).map_err(|e| format!("{}: {e}", full.display()))?;
    }
    Ok(())
}

/// The directories [`requirements`] writes in: the requirement files' and the download
/// cache.
pub(crate) fn written_dirs(config: &ProjectConfig) -> Vec<PathBuf> {
    let Some(config_file) = &config.config_file else {
        return Vec::new();
    };
    let base = config_file.parent().unwrap_or(&config.root);
    vec![
        config.root.join(base).join("requirements"),
        config.root.join(&config.spec_cache_dir),
    ]
}

/// What `duvet report` and `duvet query` do first with a config: write the requirement files
/// of every declared specification into `requirements/` beside the config file, as 0.4.3
/// does (files that already hold the text are left alone). Each specification is parsed
/// through `cache`, so that the reading of the project that follows finds the same parse
/// (the report and the extraction read the text once).
pub(crate) fn requirements(
    config: &ProjectConfig,
    cache: &project::FileCache,
) -> Result<(), Vec<String>> {
    requirements_ahead(config, cache).finish()
}

/// The requirement files of every declared specification ([`requirements`]), made and known
/// to `cache`, their directories made; written by [`Extraction::finish`]. Meanwhile reading
/// the project finds them as if written ([`project::FileCache::expect_requirement_files`]),
/// but for a specification whose directory is reached through a link, whose files are
/// written here (a walk of the project does not follow links, and must find what it finds
/// once they are written).
pub(crate) fn requirements_ahead(config: &ProjectConfig, cache: &project::FileCache) -> Extraction {
    let mut extraction = Extraction {
        root: config.root.clone(),
        steps: Vec::new(),
    };
    let Some(config_file) = &config.config_file else {
        return extraction;
    };
    let root = &config.root;
    let base = config_file.parent().unwrap_or(root);
    let out = relative(root, &base.join("requirements"));
    let download = relative(root, &config.spec_cache_dir);
    if let Err(errors) = super::common::download_specs(
        config,
        config.specifications.iter().map(|s| s.source.as_str()),
    ) {
        extraction
            .steps
            .extend(errors.into_iter().map(Step::Failed));
        return extraction;
    }
    let steps = &mut extraction.steps;
    for spec in &config.specifications {
        let source = spec.source.trim();
        let file = match project::spec_file(config, source) {
            Ok(file) => file,
            Err((_, message)) => {
                steps.push(Step::Failed(message));
                continue;
            }
        };
        let parsed = match cache.spec(&file, &spec.source, spec.format, false) {
            Ok(parsed) => parsed,
            Err(e) => {
                let shown = project::shown(config, &file);
                let http = source.starts_with("http://") || source.starts_with("https://");
                steps.push(Step::Failed(if source.contains("://") && !http {
                    format!(
                        "{source}: duvet downloads http and https specifications only; name a file in the project by its path instead"
                    )
                } else if source.contains("://") {
                    format!(
                        "{source} is not in the download cache: expected {shown} ({e}); this duvet reads specifications offline: save the text there first, e.g. `curl -fsSL --create-dirs -o {shown} {source}`"
                    )
                } else {
                    format!("cannot read {shown}: {e}")
                }));
                continue;
            }
        };
        let local = relative(root, &file);
        let dir = extract::out_dir(&out, Some(&download), &local);
        let made = extract::requirement_files(
            &parsed.read_sections(),
            &display_target(source),
            Extension::Toml,
            Some(&dir),
        );
        let (files, annotations): (Vec<_>, Vec<_>) = made
            .into_iter()
            .map(|file| ((file.name, file.text), file.annotations))
            .unzip();
        // Where 0.4.3 puts them, in the project (or beside a config file elsewhere).
        let within = root.join(&out);
        let confinement = output::Confinement::new(root, &within, "the requirement file");
        if let Err(e) = placed(root, &dir, &files, |file| confinement.check(file)) {
            steps.push(Step::Failed(e));
            continue;
        }
        let full = root.join(&dir);
        let files: Vec<(PathBuf, String)> = files
            .into_iter()
            .map(|(name, text)| (dir.join(name), text))
            .collect();
        // Written later when a walk from the root finds each where it is written: a plain
        // file (or none yet) under its plain name in a directory reached without a link.
        let plain = dir.is_relative()
            && std::fs::canonicalize(&full).is_ok_and(|real| {
                std::fs::canonicalize(root).is_ok_and(|root| real == root.join(&dir))
            })
            && files.iter().all(|(rel, _)| {
                rel.strip_prefix(&dir)
                    .is_ok_and(|name| name.components().all(|c| matches!(c, Component::Normal(_))))
                    && match std::fs::symlink_metadata(root.join(rel)) {
                        Ok(meta) => meta.is_file(),
                        Err(e) => e.kind() == std::io::ErrorKind::NotFound,
                    }
            });
        let files = if plain {
            cache.expect_requirement_files(files.iter().map(|(rel, _)| rel.clone()));
            steps.push(Step::Write(files.clone()));
            files
        } else {
            match write_files(root, files) {
                Ok(files) => files,
                Err(e) => {
                    steps.push(Step::Failed(e));
                    continue;
                }
            }
        };
        // What the files hold, which reading the project then need not read again.
        cache.know_requirement_files(files.into_iter().zip(annotations).map(
            |((rel, text), annotations)| {
                let known = match annotations {
                    Some(annotations) => project::Known::Read(annotations),
                    None => project::Known::Text(text),
                };
                (rel, known)
            },
        ));
    }
    extraction
}

/// The requirement files [`requirements_ahead`] made: the project's root and, a
/// specification at a time, its files to write or what went wrong.
pub(crate) struct Extraction {
    root: PathBuf,
    steps: Vec<Step>,
}

/// A specification's part of an [`Extraction`].
enum Step {
    /// Its files (paths relative to the root, texts), to write.
    Write(Vec<(PathBuf, String)>),
    /// Why it has none.
    Failed(String),
}

impl Extraction {
    /// Whether something already went wrong (a specification that could not be read or
    /// placed): [`Extraction::finish`] will fail.
    pub(crate) fn failed(&self) -> bool {
        self.steps.iter().any(|s| matches!(s, Step::Failed(_)))
    }

    /// The files still to write (paths relative to the root).
    pub(crate) fn pending(&self) -> impl Iterator<Item = &Path> {
        self.steps
            .iter()
            .flat_map(|s| match s {
                Step::Write(files) => files.as_slice(),
                Step::Failed(_) => &[],
            })
            .map(|(rel, _)| rel.as_path())
    }

    /// Write the files, each unless it already holds its text, a specification after the
    /// other (one that fails does not stop the next, as 0.4.3 writes those of every
    /// specification it can); what went wrong, in the specifications' order.
    pub(crate) fn finish(self) -> Result<(), Vec<String>> {
        let mut errors = Vec::new();
        for step in self.steps {
            match step {
                Step::Write(files) => {
                    if let Err(e) = write_files(&self.root, files) {
                        errors.push(e);
                    }
                }
                Step::Failed(e) => errors.push(e),
            }
        }
        if errors.is_empty() {
            Ok(())
        } else {
            Err(errors)
        }
    }
}

/// Write `files` (paths relative to `root`, in directories that exist), each unless it
/// already holds its text, in turn (files of one directory written at once contend for it);
/// the files, or the first failure.
fn write_files(
    root: &Path,
    files: Vec<(PathBuf, String)>,
) -> Result<Vec<(PathBuf, String)>, String> {
    for (rel, text) in &files {
        let path = root.join(rel);
        output::write_in_dir(&path, text.as_bytes())
            .map_err(|e| format!("{}: {e}", path.display()))?;
    }
    Ok(files)
}
