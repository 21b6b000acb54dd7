//! Command lines made for people (issue 28), checked on the four binaries as built:
//!
//! - **help**: every command's `--help` gives every argument and option a description (text
//!   beside it, or on the lines below it), and every subcommand one in its parent's
//!   `Commands:` list. The walk starts at `<bin> --help` and follows each `Commands:` list down
//!   (clap's own `help` subcommand excepted).
//! - **hints**: every command a message, a hint or a help text names exists. The texts are the
//!   string literals and `///` doc comments (clap help, JSON schema descriptions) of the Rust
//!   sources (`src/`) of the four binaries' crates and the kit's, outside `#[cfg(test)]`
//!   modules (a jility message may name `git mile`); a command is a code span
//!   (backticks) that starts with the binary's name, e.g. `` `jility auth login --token -` ``
//!   or `` `git mile list --entity task` ``. Its words are followed through the binary's
//!   commands as their `--help` lists them: a word where a subcommand must go has to be one,
//!   and an option has to be one of that command's (values of options that take one, and
//!   positional arguments, are skipped).
//!
//! The binaries are those of the profile this test was built with (`target/debug/` for
//! `cargo test`). `cargo test --workspace` builds them before it runs any test (each of the
//! four packages has integration tests, for which Cargo builds the package's binaries); run
//! alone (`cargo test -p mcp-testkit --test cli_help`), this test needs them built first and
//! says so, also when a binary is older than a source file of its crates.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;
use std::time::SystemTime;

/// A binary of the workspace: its file name, how texts name it, and the crates whose sources
/// hold its messages.
struct Binary {
    file: &'static str,
    spelled: &'static [&'static str],
    crates: &'static [&'static str],
}

/// The kit's crates: their flags (`--http`) and messages reach every binary.
const KIT: [&str; 2] = ["mcp-common", "mcp-common-core"];

const TWIG_MCP: Binary = Binary {
    file: "twig-mcp",
    spelled: &["twig-mcp"],
    crates: &["twig-mcp"],
};
const DUVET: Binary = Binary {
    file: "duvet",
    spelled: &["duvet"],
    crates: &["duvet"],
};
const JILITY: Binary = Binary {
    file: "jility",
    spelled: &["jility"],
    crates: &[
        "jility",
        "jility-core",
        "jility-bridge",
        "jility-cloud",
        "jility-sqlite",
        "jility-web",
    ],
};
const GIT_MILE: Binary = Binary {
    file: "git-mile",
    spelled: &["git mile", "git-mile"],
    crates: &["git-mile"],
};
const BINARIES: [&Binary; 4] = [&TWIG_MCP, &DUVET, &JILITY, &GIT_MILE];

/// Commands of another program of the same name that texts name on purpose: `duvet` reproduces
/// awslabs Duvet 0.4.3, and its tool descriptions say which of upstream's commands a tool
/// answers like (`as duvet query --check test (0.4.3)`). Not `init`: no text needs to send
/// anyone to a command this binary does not have.
const UPSTREAM: [(&str, &str); 3] = [
    ("duvet", "report"),
    ("duvet", "query"),
    ("duvet", "extract"),
];

fn workspace() -> PathBuf {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    std::fs::canonicalize(&root).unwrap_or(root)
}

// ---- the binaries --------------------------------------------------------------------------

/// The directory of the binaries built with this test's profile: this executable is
/// `target/<profile>/deps/cli_help-<hash>`.
fn profile_dir() -> PathBuf {
    let exe = std::env::current_exe().expect("the test's own path");
    exe.parent()
        .and_then(Path::parent)
        .map(Path::to_path_buf)
        .unwrap_or_else(|| mcp_testkit::bench::target_dir().join("debug"))
}

fn modified(path: &Path) -> Option<SystemTime> {
    std::fs::metadata(path).and_then(|m| m.modified()).ok()
}

fn rust_files(dir: &Path, into: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let mut entries: Vec<PathBuf> = entries.map(|e| e.unwrap().path()).collect();
    entries.sort();
    for path in entries {
        if path.is_dir() {
            rust_files(&path, into);
        } else if path.extension().is_some_and(|e| e == "rs") {
            into.push(path);
        }
    }
}

/// The source files of `crates` (their `src/`).
fn sources(crates: &[&str]) -> Vec<PathBuf> {
    let mut files = Vec::new();
    for krate in crates {
        rust_files(
            &workspace().join("crates").join(krate).join("src"),
            &mut files,
        );
    }
    files
}

/// The built binary, which must exist and be newer than every source of its crates.
fn binary_path(bin: &Binary) -> PathBuf {
    let path = profile_dir().join(format!("{}{}", bin.file, std::env::consts::EXE_SUFFIX));
    let build = format!(
        "`cargo build --bins -p {}` (or run the whole `cargo test --workspace`, which builds them first)",
        bin.crates[0]
    );
    let Some(built) = modified(&path) else {
        panic!("{} is missing: build it with {build}", path.display());
    };
    let mut crates = bin.crates.to_vec();
    crates.extend(KIT);
    let newer = sources(&crates)
        .into_iter()
        .filter_map(|file| modified(&file).map(|at| (at, file)))
        .filter(|(at, _)| *at > built)
        .max();
    if let Some((_, file)) = newer {
        panic!(
            "{} is older than {}: this test would read a stale binary; rebuild it with {build}",
            path.display(),
            file.display()
        );
    }
    path
}

/// `bin ARGS --help`'s output, run in an empty directory with nothing of the environment but
/// `PATH` (a developer's settings never change what it says).
fn help(path: &Path, args: &[String]) -> String {
    let home = tempfile::tempdir().expect("tempdir");
    let output = Command::new(path)
        .args(args)
        .arg("--help")
        .current_dir(home.path())
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", home.path())
        .output()
        .unwrap_or_else(|err| panic!("cannot run {}: {err}", path.display()));
    assert!(
        output.status.success(),
        "`{} {} --help` failed ({}): {}",
        path.display(),
        args.join(" "),
        output.status,
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout).expect("help is UTF-8")
}

// ---- reading `--help` ----------------------------------------------------------------------

/// One entry of a help section: an option, an argument or a subcommand.
#[derive(Debug, Clone)]
struct Entry {
    /// As written: `-v, --verbose...`, `--repo <PATH>`, `<ID>`, `list`.
    spec: String,
    described: bool,
}

/// A section of a help page (`Options:`, `Arguments:`, `Commands:`, a custom heading).
#[derive(Debug, Clone)]
struct Section {
    heading: String,
    entries: Vec<Entry>,
}

fn indent(line: &str) -> usize {
    line.len() - line.trim_start().len()
}

/// Whether `line` starts an entry: clap indents entries by 2 (6 for a long option without a
/// short one), descriptions on their own lines by more.
fn is_entry(line: &str, heading: &str) -> bool {
    let trimmed = line.trim_start();
    if trimmed.is_empty() || indent(line) > 6 {
        return false;
    }
    if heading == "Commands" {
        indent(line) == 2
    } else {
        trimmed.starts_with(['-', '<', '['])
    }
}

/// The sections of a help page: a heading is a short line at the margin ending with `:`.
fn sections(help: &str) -> Vec<Section> {
    let lines: Vec<&str> = help.lines().collect();
    let mut sections: Vec<Section> = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        if indent(line) == 0 {
            if let Some(heading) = line.strip_suffix(':')
                && !heading.is_empty()
                && heading.chars().count() <= 40
            {
                sections.push(Section {
                    heading: heading.to_string(),
                    entries: Vec::new(),
                });
            } else if !line.is_empty() {
                // Text at the margin (`Usage: …`, an after-help paragraph) ends a section.
                sections.push(Section {
                    heading: String::new(),
                    entries: Vec::new(),
                });
            }
            continue;
        }
        let Some(section) = sections.last_mut() else {
            continue;
        };
        if section.heading.is_empty() || !is_entry(line, &section.heading) {
            continue;
        }
        let trimmed = line.trim();
        // The spec ends where two spaces separate it from its description on the same line.
        let (spec, beside) = match trimmed.find("  ") {
            Some(at) => (&trimmed[..at], trimmed[at..].trim()),
            None => (trimmed, ""),
        };
        // Or the description starts on the next line, indented further.
        let below = lines
            .get(i + 1)
            .is_some_and(|next| !next.trim().is_empty() && indent(next) > 6);
        section.entries.push(Entry {
            spec: spec.to_string(),
            described: !beside.is_empty() || below,
        });
    }
    sections.retain(|s| !s.heading.is_empty());
    sections
}

/// A command as its `--help` describes it.
#[derive(Debug, Default)]
struct Cmd {
    /// Its words after the binary's name.
    path: Vec<String>,
    subcommands: BTreeMap<String, Cmd>,
    /// Every spelling of every option (`-v`, `--verbose`), and whether it takes a value.
    options: BTreeMap<String, bool>,
    positionals: bool,
    /// Entries shown without a description: (section, spec).
    undescribed: Vec<(String, String)>,
}

impl Cmd {
    fn read(path: &Path, words: Vec<String>) -> Cmd {
        let page = help(path, &words);
        let mut cmd = Cmd {
            path: words.clone(),
            ..Cmd::default()
        };
        for section in sections(&page) {
            for entry in &section.entries {
                if !entry.described {
                    cmd.undescribed
                        .push((section.heading.clone(), entry.spec.clone()));
                }
                if section.heading == "Commands" {
                    let name = entry.spec.split([' ', ',']).next().unwrap_or_default();
                    if name == "help" {
                        continue;
                    }
                    let mut sub = words.clone();
                    sub.push(name.to_string());
                    cmd.subcommands
                        .insert(name.to_string(), Cmd::read(path, sub));
                } else if entry.spec.starts_with('-') {
                    let takes_value = entry.spec.contains('<');
                    for name in entry.spec.split([',', ' ', '=', '[', '<']) {
                        let name = name.trim_end_matches("...");
                        if name.starts_with('-') && name.len() > 1 {
                            cmd.options.insert(name.to_string(), takes_value);
                        }
                    }
                } else {
                    cmd.positionals = true;
                }
            }
        }
        cmd
    }

    fn walk<'a>(&'a self, out: &mut Vec<&'a Cmd>) {
        out.push(self);
        for sub in self.subcommands.values() {
            sub.walk(out);
        }
    }
}

/// The command tree of `bin`, read once.
fn tree(bin: &'static Binary) -> &'static Cmd {
    static TREES: OnceLock<std::sync::Mutex<BTreeMap<&'static str, &'static Cmd>>> =
        OnceLock::new();
    let trees = TREES.get_or_init(Default::default);
    if let Some(cmd) = trees.lock().unwrap().get(bin.file) {
        return cmd;
    }
    let cmd: &'static Cmd = Box::leak(Box::new(Cmd::read(&binary_path(bin), Vec::new())));
    trees.lock().unwrap().insert(bin.file, cmd);
    cmd
}

fn shown(bin: &Binary, words: &[String]) -> String {
    std::iter::once(bin.file.to_string())
        .chain(words.iter().cloned())
        .collect::<Vec<_>>()
        .join(" ")
}

/// Every argument, option and subcommand of `bin` shown without a description.
fn undescribed(bin: &'static Binary) -> Vec<String> {
    let mut all = Vec::new();
    tree(bin).walk(&mut all);
    let mut offenders = Vec::new();
    for cmd in all {
        for (section, spec) in &cmd.undescribed {
            offenders.push(format!(
                "`{} --help`, {section}: `{spec}` has no description",
                shown(bin, &cmd.path)
            ));
        }
    }
    offenders
}

// ---- reading the sources -------------------------------------------------------------------

/// A text of the sources with the line of each of its characters.
struct Text {
    chars: Vec<(char, usize)>,
}

/// Everything after `#[cfg(test)]` followed by a `mod` is test code: cut it off.
fn without_tests(source: &str) -> &str {
    let mut offset = 0;
    let mut lines = source.split_inclusive('\n').peekable();
    while let Some(line) = lines.next() {
        if line.trim() == "#[cfg(test)]"
            && lines
                .peek()
                .is_some_and(|next| next.trim_start().starts_with("mod "))
        {
            return &source[..offset];
        }
        offset += line.len();
    }
    source
}

/// The string literals and `///` doc comments of a Rust source (consecutive doc lines form
/// one text), with escapes resolved as Rust does (a `\` at the end of a line skips the line
/// break and the next line's indentation).
fn texts(source: &str) -> Vec<Text> {
    let chars: Vec<char> = without_tests(source).chars().collect();
    let mut texts: Vec<Text> = Vec::new();
    let mut line = 1;
    let mut i = 0;
    // Whether the last text was a doc comment that the next doc line continues.
    let mut doc_open = false;
    let at = |i: usize| chars.get(i).copied().unwrap_or('\0');
    let ident = |c: char| c.is_alphanumeric() || c == '_';
    while i < chars.len() {
        let c = chars[i];
        match c {
            '\n' => {
                line += 1;
                i += 1;
                continue;
            }
            '/' if at(i + 1) == '/' => {
                let doc = at(i + 2) == '/' && at(i + 3) != '/';
                let start = i + if doc { 3 } else { 2 };
                let mut end = start;
                while end < chars.len() && chars[end] != '\n' {
                    end += 1;
                }
                if doc {
                    // Without the space that follows `///`, as rustdoc and clap read it.
                    let start = if at(start) == ' ' { start + 1 } else { start };
                    let piece: Vec<(char, usize)> =
                        chars[start..end].iter().map(|&c| (c, line)).collect();
                    match texts.last_mut() {
                        Some(text) if doc_open => {
                            text.chars.push((' ', line));
                            text.chars.extend(piece);
                        }
                        _ => texts.push(Text { chars: piece }),
                    }
                }
                doc_open = doc;
                i = end;
                continue;
            }
            '/' if at(i + 1) == '*' => {
                let mut depth = 0;
                while i < chars.len() {
                    if at(i) == '/' && at(i + 1) == '*' {
                        depth += 1;
                        i += 2;
                    } else if at(i) == '*' && at(i + 1) == '/' {
                        depth -= 1;
                        i += 2;
                        if depth == 0 {
                            break;
                        }
                    } else {
                        if at(i) == '\n' {
                            line += 1;
                        }
                        i += 1;
                    }
                }
                continue;
            }
            'r' | 'b' if i == 0 || !ident(at(i - 1)) => {
                // r"…", r#"…"#, br"…", b"…", or an identifier.
                let mut j = i + 1;
                if c == 'b' && at(j) == 'r' {
                    j += 1;
                }
                let raw = c == 'r' || at(i + 1) == 'r';
                let mut hashes = 0;
                while raw && at(j) == '#' {
                    hashes += 1;
                    j += 1;
                }
                if at(j) != '"' || (!raw && c != 'b') {
                    // An identifier: skip it whole.
                    while i < chars.len() && ident(chars[i]) {
                        i += 1;
                    }
                    continue;
                }
                if raw {
                    let mut text = Vec::new();
                    j += 1;
                    while j < chars.len() {
                        if chars[j] == '"' && (1..=hashes).all(|k| at(j + k) == '#') {
                            break;
                        }
                        if chars[j] == '\n' {
                            line += 1;
                        }
                        text.push((chars[j], line));
                        j += 1;
                    }
                    texts.push(Text { chars: text });
                    doc_open = false;
                    i = j + 1 + hashes;
                } else {
                    i = j;
                }
                continue;
            }
            c if ident(c) => {
                while i < chars.len() && ident(chars[i]) {
                    i += 1;
                }
                continue;
            }
            '\'' => {
                // A char literal ('x', '\n', '\u{1b}', '"') or a lifetime ('a).
                if at(i + 1) == '\\' {
                    i += 2;
                    while i < chars.len() && chars[i] != '\'' {
                        i += 1;
                    }
                    i += 1;
                } else if at(i + 2) == '\'' {
                    i += 3;
                } else {
                    i += 1;
                }
                continue;
            }
            '"' => {
                let mut text = Vec::new();
                i += 1;
                while i < chars.len() && chars[i] != '"' {
                    match chars[i] {
                        '\\' => {
                            let escaped = at(i + 1);
                            i += 2;
                            match escaped {
                                '\n' => {
                                    line += 1;
                                    while i < chars.len() && chars[i].is_whitespace() {
                                        if chars[i] == '\n' {
                                            line += 1;
                                        }
                                        i += 1;
                                    }
                                }
                                'n' => text.push(('\n', line)),
                                't' => text.push(('\t', line)),
                                other => text.push((other, line)),
                            }
                        }
                        '\n' => {
                            line += 1;
                            text.push(('\n', line));
                            i += 1;
                        }
                        other => {
                            text.push((other, line));
                            i += 1;
                        }
                    }
                }
                texts.push(Text { chars: text });
                doc_open = false;
                i += 1;
                continue;
            }
            _ => {}
        }
        if !c.is_whitespace() && c != '/' {
            doc_open = false;
        }
        i += 1;
    }
    texts
}

/// The code spans of a text that name a command of `bin`: (line, the span).
fn commands_named(text: &Text, bin: &Binary) -> Vec<(usize, String)> {
    let mut spans = Vec::new();
    let mut open: Option<usize> = None;
    for (i, &(c, _)) in text.chars.iter().enumerate() {
        if c != '`' {
            continue;
        }
        match open.take() {
            None => open = Some(i + 1),
            Some(start) => {
                let span: String = text.chars[start..i].iter().map(|&(c, _)| c).collect();
                let names_bin = bin.spelled.iter().any(|name| {
                    span.strip_prefix(name)
                        .is_some_and(|rest| rest.is_empty() || rest.starts_with(' '))
                });
                if names_bin {
                    spans.push((text.chars[start].1, span));
                }
            }
        }
    }
    spans
}

/// What is wrong with the command line `span` of `bin`, if anything.
fn check_command(span: &str, bin: &Binary, root: &Cmd) -> Option<String> {
    let rest = bin
        .spelled
        .iter()
        .find_map(|name| span.strip_prefix(name))
        .unwrap_or_default();
    // Format strings write braces twice.
    let rest = rest.replace("{{", "{").replace("}}", "}");
    let words: Vec<&str> = rest.split_whitespace().collect();
    let mut cmd = root;
    let mut i = 0;
    while let Some(&raw) = words.get(i) {
        i += 1;
        if raw == "|" || raw == ">" || raw == "&&" || raw == ";" {
            break;
        }
        let word = raw.trim_start_matches('[').trim_end_matches([']', ',']);
        if word.starts_with('-') && word.len() > 1 && word != "-" {
            // Options, also written `--a/--b` for either.
            let mut takes_value = false;
            for option in word.split('/') {
                let name = option.split('=').next().unwrap_or_default();
                if ["-h", "--help", "-V", "--version"].contains(&name) {
                    continue;
                }
                match cmd.options.get(name) {
                    Some(&value) => takes_value |= value && !option.contains('='),
                    None => {
                        return Some(format!(
                            "`{}` has no option `{name}`",
                            shown(bin, &cmd.path)
                        ));
                    }
                }
            }
            if takes_value {
                i += 1;
            }
            continue;
        }
        let plain = word.chars().next().is_some_and(|c| c.is_ascii_lowercase())
            && word
                .chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-');
        if !plain || cmd.subcommands.is_empty() {
            // A value (`KEY`, `…`, `{}`), or an argument of a command without subcommands.
            continue;
        }
        if cmd.path.is_empty() && UPSTREAM.iter().any(|&(b, w)| b == bin.file && w == word) {
            return None;
        }
        match cmd.subcommands.get(word) {
            Some(sub) => cmd = sub,
            None if cmd.positionals => continue,
            None => {
                return Some(format!(
                    "`{}` has no command `{word}` (its commands: {})",
                    shown(bin, &cmd.path),
                    cmd.subcommands
                        .keys()
                        .cloned()
                        .collect::<Vec<_>>()
                        .join(", ")
                ));
            }
        }
    }
    None
}

/// Every code span of the texts of the workspace's binaries that names a command of `bin`:
/// (file, line, span). The texts of every binary's crates are read: a jility message may name
/// `git mile`.
fn mentions(bin: &Binary) -> Vec<(String, usize, String)> {
    let mut all: Vec<&str> = BINARIES
        .iter()
        .flat_map(|b| b.crates.iter().copied())
        .collect();
    all.extend(KIT);
    let mut found = Vec::new();
    for file in sources(&all) {
        let source = std::fs::read_to_string(&file).unwrap();
        let shown_file = file
            .strip_prefix(workspace())
            .unwrap_or(&file)
            .display()
            .to_string();
        for text in texts(&source) {
            for (line, span) in commands_named(&text, bin) {
                found.push((shown_file.clone(), line, span));
            }
        }
    }
    found
}

/// Every command the texts name that `bin` does not have, with the file and line of the text.
fn missing_commands(bin: &'static Binary) -> Vec<String> {
    let root = tree(bin);
    let mut offenders: Vec<String> = mentions(bin)
        .into_iter()
        .filter_map(|(file, line, span)| {
            check_command(&span, bin, root)
                .map(|problem| format!("{file}:{line}: `{span}`: {problem}"))
        })
        .collect();
    offenders.sort();
    offenders.dedup();
    offenders
}

fn report(what: &str, bin: &Binary, offenders: &[String]) {
    assert!(
        offenders.is_empty(),
        "{} {what} of {}:\n  {}",
        offenders.len(),
        bin.file,
        offenders.join("\n  ")
    );
}

// ---- the checks ----------------------------------------------------------------------------

#[test]
fn twig_mcp_describes_every_argument_and_option() {
    report("undescribed", &TWIG_MCP, &undescribed(&TWIG_MCP));
}

#[test]
fn duvet_describes_every_argument_and_option() {
    report("undescribed", &DUVET, &undescribed(&DUVET));
}

#[test]
fn jility_describes_every_argument_and_option() {
    report("undescribed", &JILITY, &undescribed(&JILITY));
}

#[test]
fn git_mile_describes_every_argument_and_option() {
    report("undescribed", &GIT_MILE, &undescribed(&GIT_MILE));
}

#[test]
fn twig_mcp_texts_name_commands_it_has() {
    report("missing commands", &TWIG_MCP, &missing_commands(&TWIG_MCP));
}

#[test]
fn duvet_texts_name_commands_it_has() {
    report("missing commands", &DUVET, &missing_commands(&DUVET));
}

#[test]
fn jility_texts_name_commands_it_has() {
    report("missing commands", &JILITY, &missing_commands(&JILITY));
}

#[test]
fn git_mile_texts_name_commands_it_has() {
    report("missing commands", &GIT_MILE, &missing_commands(&GIT_MILE));
}

// ---- the readers themselves ----------------------------------------------------------------

#[test]
fn the_sources_hints_are_found() {
    // Some texts that name commands, as the binaries' sources hold them: were they not found,
    // the checks above would pass for want of reading anything.
    let spans = |bin: &Binary| -> Vec<String> {
        mentions(bin).into_iter().map(|(_, _, span)| span).collect()
    };
    assert!(spans(&DUVET).contains(&"duvet mcp --help".to_string()));
    assert!(spans(&GIT_MILE).contains(&"git mile list".to_string()));
    assert!(spans(&JILITY).iter().any(|s| s.starts_with("jility ")));
}

#[test]
fn the_hint_of_issue_28_would_be_caught() {
    // `duvet mcp` outside a project used to say to run `duvet init` (a command it did not
    // have then); a command it will never have stands for it.
    let found = check_command("duvet frobnicate", &DUVET, tree(&DUVET)).unwrap_or_default();
    assert!(
        found.starts_with("`duvet` has no command `frobnicate` (its commands: ")
            && found.contains(" mcp, "),
        "{found}"
    );
    assert_eq!(
        check_command("git mile list --entity task", &GIT_MILE, tree(&GIT_MILE)),
        None
    );
    assert_eq!(
        check_command("git mile --json list", &GIT_MILE, tree(&GIT_MILE)).as_deref(),
        Some("`git-mile` has no option `--json`")
    );
}

#[test]
fn help_pages_are_read_in_both_layouts() {
    let short = "About\n\nUsage: x [OPTIONS] <ID>\n\nCommands:\n  list  List them\n  bare\n  help  Print this message\n\nArguments:\n  <ID>  Its id\n  [REMOTE]\n\nOptions:\n  -v, --verbose...     More logging\n      --repo <PATH>    The repository\n      --json\n  -h, --help           Print help\n";
    let long = "About\n\nUsage: x [OPTIONS]\n\nOptions:\n      --entity <ENTITY>\n          What to list\n\n          Possible values:\n          - issue: An issue\n\n      --bare <X>\n\n      --json\n          Print JSON\n\nExamples:\n  x --entity issue\n";
    let read = |page: &str| -> Vec<(String, String, bool)> {
        sections(page)
            .into_iter()
            .flat_map(|s| {
                s.entries
                    .into_iter()
                    .map(move |e| (s.heading.clone(), e.spec, e.described))
            })
            .collect()
    };
    let entry = |h: &str, s: &str, d: bool| (h.to_string(), s.to_string(), d);
    assert_eq!(
        read(short),
        vec![
            entry("Commands", "list", true),
            entry("Commands", "bare", false),
            entry("Commands", "help", true),
            entry("Arguments", "<ID>", true),
            entry("Arguments", "[REMOTE]", false),
            entry("Options", "-v, --verbose...", true),
            entry("Options", "--repo <PATH>", true),
            entry("Options", "--json", false),
            entry("Options", "-h, --help", true),
        ]
    );
    assert_eq!(
        read(long),
        vec![
            entry("Options", "--entity <ENTITY>", true),
            entry("Options", "--bare <X>", false),
            entry("Options", "--json", true),
        ]
    );
}

#[test]
fn texts_are_the_literals_and_doc_comments() {
    let source = r####"
//! `jility module-doc` is for developers.
/// Run `jility auth login`
/// then `jility
/// serve`.
fn f<'a>(x: &'a str) -> char {
    let _ = "`jility ticket list` and \
             `jility web`";
    let _ = r#"`jility "raw"`"#; // `jility comment`
    let _ = '"'; let _ = '\''; let _ = b"`jility bytes`";
    /* `jility block` */
    'x'
}
#[cfg(test)]
mod tests {
    const T: &str = "`jility test-only`";
}
"####;
    let found: Vec<(usize, String)> = texts(source)
        .iter()
        .flat_map(|t| commands_named(t, &JILITY))
        .collect();
    let spans: Vec<(usize, &str)> = found.iter().map(|(l, s)| (*l, s.as_str())).collect();
    assert_eq!(
        spans,
        vec![
            (3, "jility auth login"),
            (4, "jility serve"),
            (7, "jility ticket list"),
            (8, "jility web"),
            (9, "jility \"raw\""),
            (10, "jility bytes"),
        ]
    );
}

#[test]
fn command_lines_are_followed_through_the_tree() {
    let leaf = |path: &[&str], options: &[(&str, bool)], positionals: bool| Cmd {
        path: path.iter().map(|s| s.to_string()).collect(),
        options: options.iter().map(|(o, v)| (o.to_string(), *v)).collect(),
        positionals,
        ..Cmd::default()
    };
    let mut auth = leaf(&["auth"], &[], false);
    auth.subcommands.insert(
        "login".into(),
        leaf(&["auth", "login"], &[("--token", true)], false),
    );
    let mut root = leaf(&[], &[("--db", true), ("--json", false)], false);
    root.subcommands.insert("auth".into(), auth);
    root.subcommands
        .insert("show".into(), leaf(&["show"], &[], true));
    let check = |span: &str| check_command(span, &JILITY, &root);
    for good in [
        "jility",
        "jility auth login --token -",
        "jility --db OTHER.db auth login",
        "jility --json auth …",
        "jility show {} --help",
        "jility show 65 | head",
        "jility [--db PATH] auth login --token=x",
    ] {
        assert_eq!(check(good), None, "{good}");
    }
    for (bad, why) in [
        (
            "jility init",
            "`jility` has no command `init` (its commands: auth, show)",
        ),
        (
            "jility auth logout",
            "`jility auth` has no command `logout` (its commands: login)",
        ),
        (
            "jility auth login --key K",
            "`jility auth login` has no option `--key`",
        ),
    ] {
        assert_eq!(check(bad).as_deref(), Some(why), "{bad}");
    }
}
