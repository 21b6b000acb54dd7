//! Credentials from `~/.netrc` (or `~/_netrc`, the name Windows tools use).
//!
//! The parser is written by hand on purpose: the netrc crates on crates.io are unmaintained
//! and do not handle the `default` entry and `macdef` bodies, both of which appear in
//! real-world files.
//!
//! The format is a sequence of whitespace-separated tokens:
//!
//! * `machine NAME` starts an entry for one host; `default` starts the catch-all entry.
//! * `login NAME`, `password SECRET` and `account VALUE` (ignored) set fields of the current
//!   entry.
//! * `macdef NAME` defines a macro whose body runs up to the next blank line; it is skipped.
//! * A token may be wrapped in double quotes to hold whitespace; inside quotes a backslash
//!   escapes the next character.
//! * Where a keyword is expected, a token starting with `#` comments out the rest of the line
//!   (as curl and Python's `netrc` module allow).

use std::fmt;
use std::path::Path;

/// A login and password from one netrc entry.
///
/// The `Debug` output redacts the password so that credentials never end up in logs.
#[derive(Clone, PartialEq, Eq)]
pub struct Credentials {
    pub login: String,
    pub password: String,
}

impl fmt::Debug for Credentials {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Credentials")
            .field("login", &self.login)
            .field("password", &"<redacted>")
            .finish()
    }
}

/// Look up the credentials for `host` in `home/.netrc`, falling back to `home/_netrc` when
/// `.netrc` cannot be read.
///
/// Returns the first `machine` entry whose name equals `host` (compared case-insensitively),
/// else the `default` entry if the file has one. Entries without a password are ignored: they
/// cannot authenticate a request.
pub fn lookup(home: &Path, host: &str) -> Option<Credentials> {
    lookup_first(home, &[host])
}

/// Like [`lookup`] for several candidate host names: the first of `hosts` that has a
/// `machine` entry wins, and only when none has one is the `default` entry used.
pub fn lookup_first(home: &Path, hosts: &[&str]) -> Option<Credentials> {
    let netrc = read(home)?;
    hosts
        .iter()
        .find_map(|host| netrc.machine(host).cloned())
        .or(netrc.default)
}

/// Look up only a `machine` entry for `host`, ignoring any `default` entry.
pub fn lookup_machine(home: &Path, host: &str) -> Option<Credentials> {
    read(home)?.machine(host).cloned()
}

/// Look up only the `default` entry.
pub fn lookup_default(home: &Path) -> Option<Credentials> {
    read(home)?.default
}

/// Read and parse the netrc file under `home`, if there is a readable one.
fn read(home: &Path) -> Option<Netrc> {
    let text = [".netrc", "_netrc"]
        .iter()
        .find_map(|name| std::fs::read_to_string(home.join(name)).ok())?;
    Some(Netrc::parse(&text))
}

/// The usable entries of a netrc file, in file order.
#[derive(Debug, Default)]
#[doc(hidden)]
pub struct Netrc {
    pub machines: Vec<(String, Credentials)>,
    pub default: Option<Credentials>,
}

impl Netrc {
    /// The first machine entry named `host` (case-insensitive).
    pub fn machine(&self, host: &str) -> Option<&Credentials> {
        self.machines
            .iter()
            .find(|(name, _)| name.eq_ignore_ascii_case(host))
            .map(|(_, creds)| creds)
    }

    /// Parse netrc text. Malformed parts (a keyword missing its value, unknown tokens) are
    /// skipped rather than failing the whole file, as other netrc readers do.
    pub fn parse(text: &str) -> Self {
        let mut netrc = Netrc::default();
        let mut tokens = Tokenizer::new(text);
        let mut current: Option<Entry> = None;

        while let Some(token) = tokens.next_token() {
            if token.starts_with('#') && !token.quoted {
                tokens.skip_line();
                continue;
            }
            match token.text.as_str() {
                "machine" => {
                    netrc.finish(current.take());
                    if let Some(name) = tokens.next_token() {
                        current = Some(Entry::new(Some(name.text)));
                    }
                }
                "default" => {
                    netrc.finish(current.take());
                    current = Some(Entry::new(None));
                }
                "login" => {
                    let value = tokens.next_token().map(|t| t.text);
                    if let (Some(entry), Some(value)) = (current.as_mut(), value) {
                        entry.login = Some(value);
                    }
                }
                "password" => {
                    let value = tokens.next_token().map(|t| t.text);
                    if let (Some(entry), Some(value)) = (current.as_mut(), value) {
                        entry.password = Some(value);
                    }
                }
                "account" => {
                    // Not needed by any client here; consume its value.
                    let _ = tokens.next_token();
                }
                "macdef" => {
                    // The macro name, then the body up to the next blank line. A macro
                    // definition also ends the current entry's fields.
                    let _ = tokens.next_token();
                    tokens.skip_macro_body();
                }
                _ => {}
            }
        }
        netrc.finish(current);
        netrc
    }

    /// Record a completed entry. Only the first `default` entry counts, and entries without a
    /// password are dropped.
    fn finish(&mut self, entry: Option<Entry>) {
        let Some(entry) = entry else { return };
        let Some(password) = entry.password else {
            return;
        };
        let creds = Credentials {
            login: entry.login.unwrap_or_default(),
            password,
        };
        match entry.machine {
            Some(name) => self.machines.push((name, creds)),
            None => {
                if self.default.is_none() {
                    self.default = Some(creds);
                }
            }
        }
    }
}

/// An entry while it is being parsed; `machine` is `None` for the `default` entry.
struct Entry {
    machine: Option<String>,
    login: Option<String>,
    password: Option<String>,
}

impl Entry {
    fn new(machine: Option<String>) -> Self {
        Self {
            machine,
            login: None,
            password: None,
        }
    }
}

/// One token; `quoted` records whether it was written in double quotes (so that a quoted
/// `"#"` is not taken for a comment).
struct Token {
    text: String,
    quoted: bool,
}

impl Token {
    fn starts_with(&self, c: char) -> bool {
        self.text.starts_with(c)
    }
}

/// Splits netrc text into tokens, and can skip raw text for comments and macro bodies.
struct Tokenizer<'a> {
    text: &'a str,
    pos: usize,
}

impl<'a> Tokenizer<'a> {
    fn new(text: &'a str) -> Self {
        Self { text, pos: 0 }
    }

    fn rest(&self) -> &'a str {
        self.text.get(self.pos..).unwrap_or("")
    }

    /// The next whitespace-separated (or double-quoted) token, if any.
    fn next_token(&mut self) -> Option<Token> {
        let rest = self.rest();
        let start = rest.len() - rest.trim_start().len();
        self.pos += start;
        let mut chars = self.rest().char_indices();
        let (_, first) = chars.next()?;

        if first == '"' {
            let mut text = String::new();
            let mut escaped = false;
            for (i, c) in chars {
                if escaped {
                    text.push(c);
                    escaped = false;
                } else if c == '\\' {
                    escaped = true;
                } else if c == '"' {
                    self.pos += i + c.len_utf8();
                    return Some(Token { text, quoted: true });
                } else {
                    text.push(c);
                }
            }
            // Unterminated quote: the token runs to the end of the file.
            self.pos = self.text.len();
            return Some(Token { text, quoted: true });
        }

        let rest = self.rest();
        let end = rest.find(char::is_whitespace).unwrap_or(rest.len());
        self.pos += end;
        Some(Token {
            text: rest[..end].to_string(),
            quoted: false,
        })
    }

    /// Skip to the start of the next line.
    fn skip_line(&mut self) {
        let rest = self.rest();
        self.pos += rest.find('\n').map_or(rest.len(), |i| i + 1);
    }

    /// Skip a macro body: the rest of the `macdef` line, then every line up to and including
    /// the next blank (empty or whitespace-only) line.
    fn skip_macro_body(&mut self) {
        self.skip_line();
        while self.pos < self.text.len() {
            let rest = self.rest();
            let line_end = rest.find('\n').map_or(rest.len(), |i| i + 1);
            let blank = rest[..line_end].trim().is_empty();
            self.pos += line_end;
            if blank {
                break;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Netrc {
        Netrc::parse(text)
    }

    fn creds(login: &str, password: &str) -> Credentials {
        Credentials {
            login: login.to_string(),
            password: password.to_string(),
        }
    }

    #[test]
    fn single_line_entries() {
        let netrc = parse(
            "machine github.com login octocat password ghp_abc\n\
             machine example.com login bob password hunter2\n",
        );
        assert_eq!(
            netrc.machine("github.com"),
            Some(&creds("octocat", "ghp_abc"))
        );
        assert_eq!(netrc.machine("example.com"), Some(&creds("bob", "hunter2")));
        assert_eq!(netrc.machine("other.com"), None);
    }

    #[test]
    fn multi_line_entries_with_tabs_and_account() {
        let netrc = parse(
            "machine jira.example.com\n\tlogin alice@example.com\n\taccount ignored\n\
             \tpassword s3cret\n",
        );
        assert_eq!(
            netrc.machine("jira.example.com"),
            Some(&creds("alice@example.com", "s3cret"))
        );
    }

    #[test]
    fn machine_match_is_case_insensitive_and_first_wins() {
        let netrc = parse(
            "machine GitHub.com login first password one\n\
             machine github.com login second password two\n",
        );
        assert_eq!(netrc.machine("github.COM"), Some(&creds("first", "one")));
    }

    #[test]
    fn default_entry_is_the_fallback() {
        let netrc = parse(
            "default login anon password guest\n\
             machine github.com login octocat password tok\n",
        );
        assert_eq!(netrc.machine("github.com"), Some(&creds("octocat", "tok")));
        assert_eq!(netrc.machine("elsewhere"), None);
        assert_eq!(netrc.default, Some(creds("anon", "guest")));
    }

    #[test]
    fn macdef_body_is_skipped_up_to_blank_line() {
        let netrc = parse(
            "machine ftp.example.com login a password b\n\
             macdef init\n\
             machine evil.example.com login x password y\n\
             cd /pub\n\
             \n\
             machine github.com login octocat password tok\n",
        );
        assert_eq!(netrc.machine("evil.example.com"), None);
        assert_eq!(netrc.machine("ftp.example.com"), Some(&creds("a", "b")));
        assert_eq!(netrc.machine("github.com"), Some(&creds("octocat", "tok")));
    }

    #[test]
    fn quoted_tokens_and_comments() {
        let netrc = parse(
            "# personal credentials\n\
             machine host.example login \"John Smith\" password \"pa ss\\\"word\"\n\
             machine hash.example login me password \"#notacomment\"\n",
        );
        assert_eq!(
            netrc.machine("host.example"),
            Some(&creds("John Smith", "pa ss\"word"))
        );
        assert_eq!(
            netrc.machine("hash.example"),
            Some(&creds("me", "#notacomment"))
        );
    }

    #[test]
    fn entries_without_password_are_ignored() {
        let netrc = parse("machine github.com login octocat\nmachine github.com password t\n");
        assert_eq!(netrc.machine("github.com"), Some(&creds("", "t")));
    }

    #[test]
    fn malformed_input_does_not_fail() {
        assert!(parse("").machines.is_empty());
        assert!(parse("machine").machines.is_empty());
        assert!(parse("login x password y").machines.is_empty());
        let netrc = parse("machine a password \"unterminated");
        assert_eq!(netrc.machine("a"), Some(&creds("", "unterminated")));
    }

    #[test]
    fn debug_redacts_password() {
        let text = format!("{:?}", creds("octocat", "ghp_secret"));
        assert!(text.contains("octocat"));
        assert!(!text.contains("ghp_secret"));
    }

    #[test]
    fn lookup_reads_netrc_then_underscore_netrc() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(lookup(dir.path(), "github.com"), None);

        std::fs::write(dir.path().join("_netrc"), "default login d password dp\n").unwrap();
        assert_eq!(lookup(dir.path(), "github.com"), Some(creds("d", "dp")));

        std::fs::write(
            dir.path().join(".netrc"),
            "machine api.github.com login b password bp\ndefault login d password dp2\n",
        )
        .unwrap();
        assert_eq!(lookup(dir.path(), "github.com"), Some(creds("d", "dp2")));
        assert_eq!(lookup_machine(dir.path(), "github.com"), None);
        assert_eq!(
            lookup_first(dir.path(), &["github.com", "api.github.com"]),
            Some(creds("b", "bp"))
        );
    }
}
