//! `duvet init`: duvet 0.4.3's command, writing a new project's `.duvet/config.toml` and
//! `.duvet/.gitignore` (files that exist are left alone). Source patterns come from the
//! `--lang-*` flags, or else from the build files in the working directory (`Cargo.toml` →
//! Rust, `go.mod` → Go, `pom.xml`/`build.gradle[.kts]` → Java, `package.json` → JavaScript,
//! `requirements.txt`/`pyproject.toml`/`setup.py` → Python, `tsconfig.json` → TypeScript,
//! `Gemfile` → Ruby, `CMakeLists.txt` → C), as 0.4.3 detects them.

use std::fmt::Write as _;
use std::io::Write as _;
use std::path::Path;
use std::process::ExitCode;

use clap::Args;

use super::common::{fail, note};

/// The config schema 0.4.3 writes.
const SCHEMA: &str = "https://awslabs.github.io/duvet/config/v0.4.0.json";

#[derive(Debug, Args)]
pub struct InitArgs {
    /// Include the given specification (a URL or a path) in the configuration (repeatable).
    #[arg(long, value_name = "SPECIFICATION")]
    specification: Vec<String>,

    /// Include rules for the C language
    #[arg(long = "lang-c")]
    c: bool,
    /// Include rules for the Go language
    #[arg(long = "lang-go")]
    go: bool,
    /// Include rules for the Java language
    #[arg(long = "lang-java")]
    java: bool,
    /// Include rules for the JavaScript language
    #[arg(long = "lang-javascript")]
    javascript: bool,
    /// Include rules for the ProVerif language
    #[arg(long = "lang-proverif")]
    proverif: bool,
    /// Include rules for the CryptoVerif language
    #[arg(long = "lang-cryptoverif")]
    cryptoverif: bool,
    /// Include rules for the Python language
    #[arg(long = "lang-python")]
    python: bool,
    /// Include rules for the TypeScript language
    #[arg(long = "lang-typescript")]
    typescript: bool,
    /// Include rules for the Ruby language
    #[arg(long = "lang-ruby")]
    ruby: bool,
    /// Include rules for the Rust language
    #[arg(long = "lang-rust")]
    rust: bool,
}

/// A language's source rule: its pattern and, when not `//=`/`//#`, its comment style.
struct Lang {
    pattern: &'static str,
    style: Option<(&'static str, &'static str)>,
}

const C_STYLE: Option<(&str, &str)> = Some(("*=", "*#"));
const HASH_STYLE: Option<(&str, &str)> = Some(("##=", "##%"));

impl InitArgs {
    /// The languages asked for, in 0.4.3's order of rules.
    fn langs(&self) -> Vec<Lang> {
        let lang = |on: bool, pattern, style| on.then_some(Lang { pattern, style });
        [
            lang(self.c, "src/**/*.c", C_STYLE),
            lang(self.cryptoverif, "**/*.cv", C_STYLE),
            lang(self.go, "src/**/*.go", None),
            lang(self.java, "src/**/*.java", None),
            lang(self.javascript, "src/**/*.js", None),
            lang(self.proverif, "**/*.pv", C_STYLE),
            lang(self.python, "src/**/*.py", HASH_STYLE),
            lang(self.typescript, "src/**/*.ts", None),
            lang(self.ruby, "lib/**/*.rb", HASH_STYLE),
            lang(self.rust, "src/**/*.rs", None),
        ]
        .into_iter()
        .flatten()
        .collect()
    }

    /// Turn on the languages whose build files are in `dir`.
    fn detect(&mut self, dir: &Path) {
        let any = |names: &[&str]| names.iter().any(|n| dir.join(n).exists());
        self.c = any(&["CMakeLists.txt"]);
        self.go = any(&["go.mod"]);
        self.java = any(&["pom.xml", "build.gradle", "build.gradle.kts"]);
        self.javascript = any(&["package.json"]);
        self.python = any(&["requirements.txt", "pyproject.toml", "setup.py"]);
        self.typescript = any(&["tsconfig.json"]);
        self.ruby = any(&["Gemfile"]);
        self.rust = any(&["Cargo.toml"]);
    }
}

/// A TOML basic string.
fn quoted(value: &str) -> String {
    toml::Value::String(value.to_string()).to_string()
}

/// The config 0.4.3 writes for these languages and specifications.
fn config_text(langs: &[Lang], specifications: &[String]) -> String {
    let mut out = format!("'$schema' = {}\n\n", quoted(SCHEMA));
    if langs.is_empty() {
        out.push_str(
            "# Specify source code patterns here\n# [[source]]\n# pattern = \"src/**/*.rs\"\n\n",
        );
    }
    for lang in langs {
        let _ = writeln!(out, "[[source]]\npattern = {}", quoted(lang.pattern));
        if let Some((meta, content)) = lang.style {
            let _ = writeln!(
                out,
                "comment-style = {{ meta = {}, content = {} }}",
                quoted(meta),
                quoted(content)
            );
        }
        out.push('\n');
    }
    if specifications.is_empty() {
        out.push_str("# Include required specifications here\n# [[specification]]\n# source = \"https://www.rfc-editor.org/rfc/rfc2324\"\n");
    }
    for spec in specifications {
        let _ = writeln!(out, "[[specification]]\nsource = {}", quoted(spec));
    }
    out.push_str("[report.html]\nenabled = true\n\n# Enable snapshots to prevent requirement coverage regressions\n[report.snapshot]\nenabled = true\n");
    out
}

/// Write `text` to a new file at `path`; an existing file is kept, one that cannot be
/// written whole is removed.
fn put(path: &Path, text: &str) -> Result<(), String> {
    let shown = path.display();
    match std::fs::File::create_new(path) {
        Ok(mut file) => {
            file.write_all(text.as_bytes())
                .and_then(|()| file.flush())
                .map_err(|e| {
                    let _ = std::fs::remove_file(path);
                    format!("{shown}: {e}")
                })?;
            note(&format!("Wrote {shown}"));
            Ok(())
        }
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
            note(&format!("Skipping {shown} - already exists"));
            Ok(())
        }
        Err(e) => Err(format!("{shown}: {e}")),
    }
}

pub fn run(mut args: InitArgs) -> ExitCode {
    let cwd = match std::env::current_dir() {
        Ok(cwd) => cwd,
        Err(e) => return fail(&[format!("cannot read the working directory: {e}")]),
    };
    if args.langs().is_empty() {
        args.detect(&cwd);
    }
    let dir = Path::new(".duvet");
    // A link the project holds does not lead the new files out of it.
    if let Err(e) = crate::output::confine(
        &cwd,
        &cwd,
        &cwd.join(".duvet/config.toml"),
        "the config file",
    ) {
        return fail(&[e]);
    }
    if let Err(e) = std::fs::create_dir_all(dir) {
        return fail(&[format!("{}: {e}", dir.display())]);
    }
    let config = config_text(&args.langs(), &args.specification);
    for (name, text) in [
        ("config.toml", config.as_str()),
        (".gitignore", "reports/\n"),
    ] {
        if let Err(e) = put(&dir.join(name), text) {
            return fail(&[e]);
        }
    }
    ExitCode::SUCCESS
}
