//! `--coverage-report` patterns expanded as duvet 0.4.3 expands them: with the `glob` crate
//! (0.3.2, `glob::glob`, its default options), relative to the working directory.
//!
//! A pattern is split at `/` into components, each matched against one name: `?` is one
//! character, `*` any run of them (never a `/`, and a leading dot need not be literal), `**`
//! a whole component standing for any number of directories (itself included), `[abc]`,
//! `[a-z]` and `[!…]` sets; nothing else is special (no `{a,b}`, no escapes). `**` that is
//! not a whole component, `***`, and an unclosed `[` are errors, in the crate's words. A
//! component without wildcards is looked up directly; the entries of a directory are walked
//! in the order of their names, depth first, so the matches of a pattern come in the crate's
//! order. A pattern that ends in `/` matches directories only. Every match is returned, a
//! file matched by two patterns twice (0.4.3 then reads it twice).
//!
//! What the crate reports as an error while walking (a directory it cannot read) is one
//! here, when the walk reaches it. The walk follows symbolic links, as the crate does; it
//! stops with an error after [`MAX_VISITS`] entries, so a link loop cannot keep it going.

use std::path::{Path, PathBuf};

/// The most directory entries one pattern's walk visits.
pub const MAX_VISITS: usize = 1_000_000;

#[derive(Debug, Clone, PartialEq, Eq)]
enum Token {
    Char(char),
    AnyChar,
    AnySequence,
    AnyRecursiveSequence,
    AnyWithin(Vec<Set>),
    AnyExcept(Vec<Set>),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Set {
    Single(char),
    Range(char, char),
}

/// One compiled pattern (of a component, or of the whole text when it is checked).
#[derive(Debug, Clone)]
struct Pattern {
    tokens: Vec<Token>,
    recursive: bool,
}

const ERROR_WILDCARDS: &str = "wildcards are either regular `*` or recursive `**`";
const ERROR_RECURSIVE_WILDCARDS: &str = "recursive wildcards must form a single path component";
const ERROR_INVALID_RANGE: &str = "invalid range pattern";

fn syntax(pos: usize, msg: &str) -> String {
    format!("Pattern syntax error near position {pos}: {msg}")
}

impl Pattern {
    /// The crate's `Pattern::new`.
    fn new(pattern: &str) -> Result<Self, String> {
        let chars: Vec<char> = pattern.chars().collect();
        let mut tokens = Vec::new();
        let mut recursive = false;
        let mut i = 0;
        while i < chars.len() {
            match chars[i] {
                '?' => {
                    tokens.push(Token::AnyChar);
                    i += 1;
                }
                '*' => {
                    let old = i;
                    while i < chars.len() && chars[i] == '*' {
                        i += 1;
                    }
                    let count = i - old;
                    if count > 2 {
                        return Err(syntax(old + 2, ERROR_WILDCARDS));
                    } else if count == 2 {
                        // `**` only as a whole component.
                        if i == 2 || chars[i - count - 1] == '/' {
                            if i < chars.len() && chars[i] == '/' {
                                i += 1;
                            } else if i != chars.len() {
                                return Err(syntax(i, ERROR_RECURSIVE_WILDCARDS));
                            }
                        } else {
                            return Err(syntax(old - 1, ERROR_RECURSIVE_WILDCARDS));
                        }
                        let n = tokens.len();
                        if !(n > 1 && tokens[n - 1] == Token::AnyRecursiveSequence) {
                            recursive = true;
                            tokens.push(Token::AnyRecursiveSequence);
                        }
                    } else {
                        tokens.push(Token::AnySequence);
                    }
                }
                '[' => {
                    if i + 4 <= chars.len() && chars[i + 1] == '!' {
                        if let Some(j) = chars[i + 3..].iter().position(|&c| c == ']') {
                            let set = sets(&chars[i + 2..i + 3 + j]);
                            tokens.push(Token::AnyExcept(set));
                            i += j + 4;
                            continue;
                        }
                    } else if i + 3 <= chars.len()
                        && chars[i + 1] != '!'
                        && let Some(j) = chars[i + 2..].iter().position(|&c| c == ']')
                    {
                        let set = sets(&chars[i + 1..i + 2 + j]);
                        tokens.push(Token::AnyWithin(set));
                        i += j + 3;
                        continue;
                    }
                    return Err(syntax(i, ERROR_INVALID_RANGE));
                }
                c => {
                    tokens.push(Token::Char(c));
                    i += 1;
                }
            }
        }
        Ok(Self { tokens, recursive })
    }

    /// The component's text when it has no wildcard.
    fn literal(&self) -> Option<String> {
        self.tokens
            .iter()
            .map(|t| match t {
                Token::Char(c) => Some(*c),
                _ => None,
            })
            .collect()
    }

    /// Whether `name` (one component) matches: the crate's matching with its default
    /// options, where within one component a sequence is any run of characters. Iterative
    /// (one backtracking point), so no pattern makes it slow or deep.
    fn matches(&self, name: &str) -> bool {
        let text: Vec<char> = name.chars().collect();
        let tokens = &self.tokens;
        let (mut t, mut n) = (0, 0);
        let mut star: Option<(usize, usize)> = None;
        while n < text.len() {
            let one = match tokens.get(t) {
                Some(Token::AnySequence | Token::AnyRecursiveSequence) => {
                    star = Some((t, n));
                    t += 1;
                    continue;
                }
                Some(Token::Char(c)) => *c == text[n],
                Some(Token::AnyChar) => text[n] != '/',
                Some(Token::AnyWithin(set)) => text[n] != '/' && in_sets(set, text[n]),
                Some(Token::AnyExcept(set)) => text[n] != '/' && !in_sets(set, text[n]),
                None => false,
            };
            if one {
                t += 1;
                n += 1;
            } else if let Some((st, sn)) = star {
                // The last sequence takes one more character.
                if text[sn] == '/' {
                    return false;
                }
                star = Some((st, sn + 1));
                t = st + 1;
                n = sn + 1;
            } else {
                return false;
            }
        }
        tokens[t.min(tokens.len())..]
            .iter()
            .all(|tk| matches!(tk, Token::AnySequence | Token::AnyRecursiveSequence))
    }
}

fn sets(chars: &[char]) -> Vec<Set> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        if i + 3 <= chars.len() && chars[i + 1] == '-' {
            out.push(Set::Range(chars[i], chars[i + 2]));
            i += 3;
        } else {
            out.push(Set::Single(chars[i]));
            i += 1;
        }
    }
    out
}

fn in_sets(sets: &[Set], c: char) -> bool {
    sets.iter().any(|s| match *s {
        Set::Single(s) => s == c,
        Set::Range(a, b) => a <= c && c <= b,
    })
}

/// A path the walk reached (as the crate names it) and whether it is a directory.
struct Entry {
    path: PathBuf,
    dir: bool,
}

/// Where the walk continues: a path to match against component `idx`, a path already
/// matched (`None`), or an error the walk reached.
enum Todo {
    Path(Entry, Option<usize>),
    Error(String),
}

struct Walk<'a> {
    /// The directory relative patterns are read from (0.4.3's working directory).
    base: &'a Path,
    components: Vec<Pattern>,
    todo: Vec<Todo>,
    visits: usize,
}

impl Walk<'_> {
    /// `path` as the file system sees it.
    fn at(&self, path: &Path) -> PathBuf {
        self.base.join(path)
    }

    fn entry(&self, path: PathBuf) -> Entry {
        let dir = std::fs::metadata(self.at(&path)).is_ok_and(|m| m.is_dir());
        Entry { path, dir }
    }

    /// The crate's `fill_todo`: the paths under `path` to match against component `idx`.
    fn fill(&mut self, idx: usize, path: &Entry) {
        let Some(pattern) = self.components.get(idx) else {
            return;
        };
        let last = idx + 1 == self.components.len();
        let curdir = path.path == Path::new(".");
        match pattern.literal() {
            Some(s) => {
                let special = s == "." || s == "..";
                let next = if curdir {
                    PathBuf::from(&s)
                } else {
                    path.path.join(&s)
                };
                let found = self.at(&next);
                let exists = if special {
                    path.dir
                } else if next.as_os_str().is_empty() {
                    // The crate asks the file system about "", which is nothing.
                    false
                } else {
                    std::fs::metadata(&found).is_ok() || std::fs::symlink_metadata(&found).is_ok()
                };
                if exists {
                    let next = self.entry(next);
                    self.add(idx, last, next);
                }
            }
            None if path.dir => {
                let pattern = pattern.clone();
                match self.children(path, curdir) {
                    Ok(mut children) => {
                        children.sort_by(|a, b| b.path.file_name().cmp(&a.path.file_name()));
                        self.todo
                            .extend(children.into_iter().map(|c| Todo::Path(c, Some(idx))));
                        if pattern.tokens.first() == Some(&Token::Char('.')) {
                            for special in [".", ".."] {
                                if pattern.matches(special) {
                                    let next = self.entry(path.path.join(special));
                                    self.add(idx, last, next);
                                }
                            }
                        }
                    }
                    Err(e) => self.todo.push(Todo::Error(e)),
                }
            }
            None => {}
        }
    }

    fn add(&mut self, idx: usize, last: bool, next: Entry) {
        if last {
            self.todo.push(Todo::Path(next, None));
        } else {
            self.fill(idx + 1, &next);
        }
    }

    /// The entries of directory `path`.
    fn children(&mut self, path: &Entry, curdir: bool) -> Result<Vec<Entry>, String> {
        let failed = |e: std::io::Error| {
            format!(
                "attempting to read `{}` resulted in an error: {e}",
                path.path.display()
            )
        };
        let mut children = Vec::new();
        for entry in std::fs::read_dir(self.at(&path.path)).map_err(failed)? {
            let entry = entry.map_err(failed)?;
            self.visits += 1;
            if self.visits > MAX_VISITS {
                return Err(format!(
                    "the pattern reaches more than {MAX_VISITS} files and directories (a link \
                     loop?); name the coverage reports more precisely"
                ));
            }
            let name = entry.file_name();
            let child = if curdir {
                PathBuf::from(&name)
            } else {
                path.path.join(&name)
            };
            let dir = match entry.file_type() {
                Ok(t) if !t.is_symlink() => t.is_dir(),
                _ => std::fs::metadata(self.at(&child)).is_ok_and(|m| m.is_dir()),
            };
            children.push(Entry { path: child, dir });
        }
        Ok(children)
    }

    /// The crate's `Paths::next`.
    fn next(&mut self, require_dir: bool) -> Option<Result<PathBuf, String>> {
        loop {
            let (path, idx) = match self.todo.pop()? {
                Todo::Error(e) => return Some(Err(e)),
                Todo::Path(path, idx) => (path, idx),
            };
            let Some(mut idx) = idx else {
                if require_dir && !path.dir {
                    continue;
                }
                return Some(Ok(path.path));
            };
            let count = self.components.len();
            if self.components[idx].recursive {
                let mut next = idx;
                while next + 1 < count && self.components[next + 1].recursive {
                    next += 1;
                }
                if path.dir {
                    self.fill(next, &path);
                    if next == count - 1 {
                        return Some(Ok(path.path));
                    }
                    idx = next + 1;
                } else if next == count - 1 {
                    continue;
                } else {
                    idx = next + 1;
                }
            }
            let Some(name) = path.path.file_name().and_then(|s| s.to_str()) else {
                continue;
            };
            if self.components[idx].matches(name) {
                if idx == count - 1 {
                    if !require_dir || path.dir {
                        return Some(Ok(path.path));
                    }
                } else {
                    self.fill(idx + 1, &path);
                }
            }
        }
    }
}

/// The paths `pattern` matches, in the crate's order, as it names them (relative to `base`
/// when the pattern is). Errors are the crate's, in its words.
pub fn expand(base: &Path, pattern: &str) -> Result<Vec<PathBuf>, String> {
    Pattern::new(pattern)?;
    let (root, rest) = match pattern.strip_prefix('/') {
        Some(_) => {
            let rest = pattern.trim_start_matches('/');
            (PathBuf::from("/"), rest)
        }
        None => (PathBuf::from("."), pattern),
    };
    let mut components = rest
        .split_terminator('/')
        .map(Pattern::new)
        .collect::<Result<Vec<_>, _>>()?;
    if rest.is_empty() {
        components.push(Pattern {
            tokens: Vec::new(),
            recursive: false,
        });
    }
    let require_dir = pattern.ends_with('/');
    let mut walk = Walk {
        base,
        components,
        todo: Vec::new(),
        visits: 0,
    };
    let scope = walk.entry(root);
    walk.fill(0, &scope);
    let mut found = Vec::new();
    while let Some(next) = walk.next(require_dir) {
        found.push(next?);
    }
    Ok(found)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn matches(pattern: &str, name: &str) -> bool {
        Pattern::new(pattern).unwrap().matches(name)
    }

    #[test]
    fn components_match_as_the_crate_matches_them() {
        assert!(matches("*.xml", "report.xml"));
        assert!(matches("*.xml", ".hidden.xml"));
        assert!(matches("r?port.*", "report.xml"));
        assert!(matches("[a-c]*", "b"));
        assert!(matches("[!a-c]*", "d"));
        assert!(!matches("[!a-c]*", "a"));
        assert!(matches("*a*b*c", "xxaxxbxxc"));
        assert!(!matches("*a*b*c", "xxaxxbxx"));
        assert!(matches("{a,b}", "{a,b}"));
        assert!(!matches("{a,b}", "a"));
        assert!(matches("[]]", "]"));
        assert!(matches("*", ""));
        assert!(!matches("?", ""));
    }

    #[test]
    fn bad_patterns_are_the_crates_errors() {
        assert_eq!(
            Pattern::new("a/b**/c").unwrap_err(),
            "Pattern syntax error near position 2: recursive wildcards must form a single path component"
        );
        assert_eq!(
            Pattern::new("***").unwrap_err(),
            "Pattern syntax error near position 2: wildcards are either regular `*` or recursive `**`"
        );
        assert_eq!(
            Pattern::new("a[").unwrap_err(),
            "Pattern syntax error near position 1: invalid range pattern"
        );
    }

    #[test]
    fn the_walk_finds_files_in_the_crates_order() {
        let dir = tempfile::tempdir().unwrap();
        let base = dir.path();
        for file in [
            "b/r.xml",
            "a/x/r.xml",
            "a/r.xml",
            "r.xml",
            "a/r.txt",
            ".h/r.xml",
        ] {
            let path = base.join(file);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, "").unwrap();
        }
        let names = |pattern: &str| -> Vec<String> {
            expand(base, pattern)
                .unwrap()
                .iter()
                .map(|p| p.display().to_string())
                .collect()
        };
        assert_eq!(
            names("**/r.xml"),
            [".h/r.xml", "a/r.xml", "a/x/r.xml", "b/r.xml", "r.xml"]
        );
        assert_eq!(names("a/*"), ["a/r.txt", "a/r.xml", "a/x"]);
        assert_eq!(names("a/*/"), ["a/x"]);
        assert_eq!(names("r.xml"), ["r.xml"]);
        assert!(names("nothing.xml").is_empty());
        assert!(names("").is_empty());
        assert!(names("none/*.xml").is_empty());
        let absolute = format!("{}/*.xml", base.display());
        assert_eq!(names(&absolute), [format!("{}/r.xml", base.display())]);
    }
}
