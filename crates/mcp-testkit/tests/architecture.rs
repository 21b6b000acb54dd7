//! The invariants of `docs/architecture.md` that a machine can check: which crate may depend on
//! which, which modules may import rmcp, and that the kit names no server's domain.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::{Path, PathBuf};

/// The modules of each server crate that face the protocol and may import rmcp.
const PROTOCOL_MODULES: [(&str, &[&str]); 11] = [
    (
        "twig-mcp",
        &[
            "server.rs",
            "prompts.rs",
            "resources.rs",
            "subscriptions.rs",
        ],
    ),
    ("duvet", &["server.rs", "resources.rs", "subscriptions.rs"]),
    ("jility", &["server.rs", "confirm.rs"]),
    ("jility-core", &[]),
    ("jility-sqlite", &[]),
    ("jility-pg", &[]),
    ("jility-identity", &[]),
    ("jility-api", &[]),
    ("jility-cloud", &[]),
    ("jility-bridge", &[]),
    (
        "git-mile",
        &["server.rs", "writes.rs", "schema.rs", "confirm.rs"],
    ),
];

fn crates_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn rust_files(dir: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            files.extend(rust_files(&path));
        } else if path.extension().is_some_and(|e| e == "rs") {
            files.push(path);
        }
    }
    files
}

/// The `[dependencies]` table of a crate's manifest (not dev-dependencies).
fn dependencies(krate: &str) -> Vec<String> {
    let manifest = std::fs::read_to_string(crates_dir().join(krate).join("Cargo.toml")).unwrap();
    let manifest: toml::Table = manifest.parse().unwrap();
    manifest
        .get("dependencies")
        .and_then(|d| d.as_table())
        .map(|d| d.keys().cloned().collect())
        .unwrap_or_default()
}

/// Each crate of the workspace and the crates of the workspace it may depend on (not
/// counting dev-dependencies): the kit's light core under the kit, jility's layers under its
/// binary, and no server under another. jility's cloud mode is four floors, each knowing
/// only those below: the PostgreSQL store (`jility-pg`), identity (`jility-identity`), the
/// REST API (`jility-api`) and the web board with OAuth's pages (`jility-cloud`).
const LAYERS: [(&str, &[&str]); 19] = [
    ("mcp-common-core", &[]),
    ("mcp-common", &["mcp-common-core"]),
    ("mcp-testkit", &["mcp-common"]),
    ("mcp-conformance-fixture", &["mcp-common"]),
    ("twig-mcp", &["mcp-common"]),
    ("duvet", &["mcp-common"]),
    ("git-mile", &["mcp-common"]),
    ("jility-core", &["mcp-common-core"]),
    ("jility-sqlite", &["jility-core", "mcp-common-core"]),
    ("jility-bridge", &["jility-core", "mcp-common-core"]),
    ("jility-web", &["jility-core", "mcp-common-core"]),
    ("jility-pg", &["jility-core", "mcp-common-core"]),
    (
        "jility-identity",
        &["jility-core", "jility-pg", "mcp-common-core"],
    ),
    (
        "jility-hooks",
        &[
            "jility-core",
            "jility-identity",
            "jility-pg",
            "mcp-common-core",
        ],
    ),
    (
        "jility-operator",
        &["jility-core", "jility-pg", "mcp-common"],
    ),
    (
        "jility-api",
        &[
            "jility-core",
            "jility-hooks",
            "jility-identity",
            "jility-operator",
            "jility-pg",
            "jility-web",
            "mcp-common",
        ],
    ),
    (
        "jility-cloud",
        &[
            "jility-api",
            "jility-core",
            "jility-hooks",
            "jility-identity",
            "jility-pg",
            "jility-web",
            "mcp-common",
        ],
    ),
    ("jility-testkit", &["jility-pg"]),
    (
        "jility",
        &[
            "jility-bridge",
            "jility-cloud",
            "jility-core",
            "jility-sqlite",
            "jility-web",
            "mcp-common",
        ],
    ),
];

#[test]
fn dependencies_point_one_way() {
    let mut members: Vec<String> = std::fs::read_dir(crates_dir())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|name| crates_dir().join(name).join("Cargo.toml").is_file())
        .collect();
    members.sort();
    let mut layered: Vec<String> = LAYERS.iter().map(|(k, _)| k.to_string()).collect();
    layered.sort();
    assert_eq!(members, layered, "every crate has its row in LAYERS");
    for (krate, allowed) in LAYERS {
        let mut inner: Vec<String> = dependencies(krate)
            .into_iter()
            .filter(|d| members.contains(d))
            .collect();
        inner.sort();
        assert_eq!(
            inner, allowed,
            "{krate} may depend on {allowed:?} only (mcp-testkit as a dev-dependency)"
        );
    }
}

/// The packages `krate` is built with (its normal dependencies, transitively), from Cargo.lock.
fn built_with(krate: &str) -> std::collections::BTreeSet<String> {
    let lock = std::fs::read_to_string(crates_dir().join("..").join("Cargo.lock")).unwrap();
    let lock: toml::Table = lock.parse().unwrap();
    let packages: std::collections::HashMap<String, Vec<String>> = lock["package"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            let deps = p
                .get("dependencies")
                .and_then(|d| d.as_array())
                .map(|d| {
                    d.iter()
                        // "name version" when the lock holds several versions of a name.
                        .map(|d| d.as_str().unwrap().split(' ').next().unwrap().to_string())
                        .collect()
                })
                .unwrap_or_default();
            (p["name"].as_str().unwrap().to_string(), deps)
        })
        .collect();
    // Cargo.lock lists dev-dependencies too: a crate of the workspace is followed through
    // its manifest's normal ones.
    let mut seen = std::collections::BTreeSet::new();
    let mut todo = dependencies(krate);
    while let Some(name) = todo.pop() {
        let name = name.replace('_', "-");
        let name = if packages.contains_key(&name) {
            name
        } else {
            name.replace('-', "_")
        };
        if seen.insert(name.clone()) {
            if crates_dir().join(&name).join("Cargo.toml").is_file() {
                todo.extend(dependencies(&name));
            } else {
                todo.extend(packages.get(&name).cloned().unwrap_or_default());
            }
        }
    }
    seen
}

/// jility's domain and local store are built without a database server's client, an HTTP
/// stack or MCP: "only the store differs between local and cloud mode" is then the
/// compiler's to keep, and a local-only build leaves those out.
#[test]
fn jility_domain_builds_without_transports() {
    let forbidden = [
        "axum",
        "hyper",
        "postgres",
        "r2d2",
        "reqwest",
        "rusqlite",
        "rmcp",
        "tokio-rustls",
    ];
    for (krate, also_allowed) in [
        ("jility-core", &[][..]),
        ("jility-sqlite", &["rusqlite"][..]),
        ("mcp-common-core", &[][..]),
        // The web app serves HTTP, but knows no database, MCP or HTTP client: it runs every
        // change through a backend, as the MCP adapter does.
        ("jility-web", &["axum", "hyper"][..]),
    ] {
        // The walk does reach what a crate is built with.
        assert!(built_with("jility-cloud").contains("postgres"));
        assert!(built_with("jility-sqlite").contains("rusqlite"));
        let built = built_with(krate);
        assert!(built.contains("serde"), "{krate}: the lock was read");
        for name in forbidden {
            assert!(
                also_allowed.contains(&name) || !built.contains(name),
                "{krate} is built with {name}"
            );
        }
    }
}

/// The floors of cloud mode under the server know no HTTP: the PostgreSQL store
/// (`jility-pg`) and identity (`jility-identity`: people, tokens, OAuth's data, limits,
/// audit) are built without an HTTP server or client, TLS, HTML, the web app or MCP. (Which
/// crates of the workspace each may name is [`LAYERS`]': neither names the API or the web.)
#[test]
fn cloud_store_and_identity_build_without_http() {
    let forbidden = [
        "axum",
        "hyper",
        "reqwest",
        "tokio-rustls",
        "maud",
        "rmcp",
        "rusqlite",
        "jility-web",
        "mcp-common",
    ];
    for krate in ["jility-pg", "jility-identity"] {
        let built = built_with(krate);
        assert!(built.contains("postgres"), "{krate}: the lock was read");
        for name in forbidden {
            assert!(!built.contains(name), "{krate} is built with {name}");
        }
    }
}

/// No crate of cloud mode's floors holds more than 6,000 lines of code (`src/`, blank lines
/// and comments not counted): past that, a floor is cut again along what its modules share.
#[test]
fn cloud_floors_stay_small() {
    const MOST: usize = 6_000;
    for krate in [
        "jility-pg",
        "jility-identity",
        "jility-operator",
        "jility-hooks",
        "jility-api",
        "jility-cloud",
    ] {
        let mut lines = 0;
        for file in rust_files(&crates_dir().join(krate).join("src")) {
            let text = std::fs::read_to_string(&file).unwrap();
            let mut in_block = false;
            for line in text.lines().map(str::trim) {
                if in_block || line.starts_with("/*") {
                    in_block = !line.contains("*/");
                } else if !line.is_empty() && !line.starts_with("//") {
                    lines += 1;
                }
            }
        }
        assert!(
            lines <= MOST,
            "{krate} holds {lines} lines of code, more than {MOST} (docs/architecture.md)"
        );
    }
}

/// jility's composition root: only `app.rs` names both the MCP adapter and a backend; the
/// adapter (`server.rs`) names none of the backends' crates.
#[test]
fn only_the_root_wires_the_adapter_to_backends() {
    let src = crates_dir().join("jility").join("src");
    let backends = [
        "jility_cloud",
        "jility_bridge",
        "jility_sqlite",
        "Service::new",
    ];
    let adapter = ["crate::server", "JilityServer"];
    for file in rust_files(&src) {
        let relative = file
            .strip_prefix(&src)
            .unwrap()
            .to_string_lossy()
            .into_owned();
        let code: String = std::fs::read_to_string(&file)
            .unwrap()
            .lines()
            .filter(|l| !l.trim_start().starts_with("//"))
            .collect::<Vec<_>>()
            .join("\n");
        let names_backend = backends.iter().any(|b| code.contains(b));
        let names_adapter = adapter.iter().any(|a| code.contains(a));
        if relative == "server.rs" {
            assert!(!names_backend, "the adapter names a backend");
        } else if names_backend && names_adapter {
            assert_eq!(
                relative, "app.rs",
                "{relative} wires the adapter to a backend"
            );
        }
    }
    let app = std::fs::read_to_string(src.join("app.rs")).unwrap();
    assert!(app.contains("JilityServer") && app.contains("jility_cloud"));
}

#[test]
fn only_protocol_modules_import_rmcp() {
    for (server, allowed) in PROTOCOL_MODULES {
        let src = crates_dir().join(server).join("src");
        for file in rust_files(&src) {
            let text = std::fs::read_to_string(&file).unwrap();
            let imports = text
                .lines()
                .filter(|l| !l.trim_start().starts_with("//"))
                .any(|l| l.contains("rmcp::") || l.contains("use rmcp"));
            let relative = file
                .strip_prefix(&src)
                .unwrap()
                .to_string_lossy()
                .into_owned();
            if imports {
                assert!(
                    allowed.contains(&relative.as_str()),
                    "{server}/src/{relative} imports rmcp, but only its protocol-facing modules \
                     ({allowed:?}) may (docs/architecture.md)"
                );
            }
        }
    }
}

#[test]
fn the_kit_names_no_server_domain() {
    // Words that belong to one server's domain; none may appear in the kit's code.
    let domain = [
        "twig",
        "duvet",
        "jility",
        "git-mile",
        "git_mile",
        "ticket",
        "branch",
        "requirement",
        "milestone",
        "no_repo",
        "dependency_cycle",
    ];
    for file in rust_files(&crates_dir().join("mcp-common").join("src")) {
        let text = std::fs::read_to_string(&file).unwrap().to_lowercase();
        for word in domain {
            assert!(
                !text.contains(word),
                "{} names `{word}`: the kit must name no server's domain",
                file.display()
            );
        }
    }
}

/// No file of a crate imports itself through others: the files of each `crates/*/src` and
/// their imports make a graph, and none of its strongly connected components may hold more
/// than one file. Each loop is named by its ties (file -> file).
///
/// What counts as an import:
/// - A file's module is its path: `src/a/b.rs` and `src/a/b/mod.rs` are `crate::a::b`;
///   `lib.rs` and `main.rs` are the crate's root.
/// - An import is a private `use` (each path of its tree; `self` in a group names the module
///   itself), or a path written in the code, from its first word: `crate::…`, `super::…`,
///   `self::…`, or a module the file declares (`mod x;`, then `use x::f` or `x::f()`). The
///   path is followed through the modules that have a file, as far as they go, and imports
///   that file: `crate::a::b::Item` imports `a/b.rs`. Other paths (`std::…`, other crates,
///   `Self::…`, an enum's variants) import nothing of the crate.
/// - A `mod x;` declaration alone is no import, nor is a re-export (`pub use`,
///   `pub(crate) use`): it hands names on; but a re-exported name the file also uses in its
///   own code is an import of it.
/// - No file imports its own module or a module around it (its folder's `mod.rs`, the
///   crate's root): a child's `use super::Thing` is a part of a module using the module's own
///   items, so a parent and a child that use each other (`mod x; use x::f;` in the parent,
///   `use super::Thing` in `x`) are no loop. A parent's use of its child is an import: a loop
///   from a parent through its child and a third file back to the parent is one.
/// - Comments (docs too), string and character literals, and the modules compiled for tests
///   only (`#[cfg(test)] mod tests { … }`, the block alone: code after it is read) are not
///   read.
#[test]
fn no_import_loops() {
    let mut crates: Vec<PathBuf> = std::fs::read_dir(crates_dir())
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.join("src").is_dir())
        .collect();
    crates.sort();
    let mut loops = Vec::new();
    for krate in crates {
        let name = krate.file_name().unwrap().to_string_lossy().into_owned();
        for ties in imports::loops(&krate.join("src")) {
            let ties: Vec<String> = ties
                .iter()
                .map(|(from, to)| format!("    {name}/src/{from} -> {name}/src/{to}"))
                .collect();
            loops.push(ties.join("\n"));
        }
    }
    assert!(
        loops.is_empty(),
        "import loops, each with the imports that tie it (move what the files share into a \
         file of its own that they import):\n{}",
        loops.join("\n  and\n")
    );
}

/// The graph of the imports between the files of a crate's `src/`, as
/// [`no_import_loops`] describes it.
mod imports {
    use std::collections::{BTreeMap, BTreeSet};
    use std::path::Path;

    /// A module's path in its crate: `["query", "sort"]`; empty for the crate root.
    type Module = Vec<String>;

    /// Each loop of the crate whose sources are `src`, as its ties (file -> file, the paths
    /// relative to `src`), the loops and their ties in order.
    pub fn loops(src: &Path) -> Vec<Vec<(String, String)>> {
        let mut modules: BTreeMap<Module, String> = BTreeMap::new();
        let mut read = Vec::new();
        for file in super::rust_files(src) {
            let relative = file
                .strip_prefix(src)
                .unwrap()
                .to_string_lossy()
                .replace('\\', "/");
            let module = module_of(&relative);
            if !module.is_empty() {
                modules.entry(module.clone()).or_insert(relative.clone());
            }
            read.push((relative, module, std::fs::read_to_string(&file).unwrap()));
        }
        let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
        for (relative, module, text) in &read {
            let targets = graph.entry(relative.clone()).or_default();
            let tokens = tokens(&code(text));
            let declared = declared_modules(&tokens);
            for path in paths(&tokens) {
                let Some(target) = resolve(&path, module, &declared, &modules) else {
                    continue;
                };
                // Its own module, or one around it: no import (see `no_import_loops`).
                if module.starts_with(&target) {
                    continue;
                }
                if let Some(file) = modules.get(&target) {
                    targets.insert(file.clone());
                }
            }
        }
        strongly_connected(&graph)
            .into_iter()
            .filter(|component| component.len() > 1)
            .map(|component| {
                let mut ties = Vec::new();
                for from in &component {
                    for to in &graph[from] {
                        if component.contains(to) {
                            ties.push((from.clone(), to.clone()));
                        }
                    }
                }
                ties
            })
            .collect()
    }

    /// The module a file of `src/` is: `a/b.rs` and `a/b/mod.rs` are `a::b`, `lib.rs` and
    /// `main.rs` the root.
    fn module_of(relative: &str) -> Module {
        let mut module: Module = relative.split('/').map(str::to_string).collect();
        if let Some(last) = module.last_mut() {
            *last = last.trim_end_matches(".rs").to_string();
        }
        if module.last().is_some_and(|last| last == "mod")
            || (module.len() == 1 && (module[0] == "lib" || module[0] == "main"))
        {
            module.pop();
        }
        module
    }

    /// `text` without its comments, string and character literals (each left as a blank).
    fn code(text: &str) -> String {
        let chars: Vec<char> = text.chars().collect();
        let at = |i: usize| chars.get(i).copied().unwrap_or('\0');
        let mut out = String::with_capacity(text.len());
        let mut i = 0;
        while i < chars.len() {
            let c = chars[i];
            if c == '/' && at(i + 1) == '/' {
                while i < chars.len() && chars[i] != '\n' {
                    i += 1;
                }
            } else if c == '/' && at(i + 1) == '*' {
                let mut depth = 0;
                while i < chars.len() {
                    if chars[i] == '/' && at(i + 1) == '*' {
                        depth += 1;
                        i += 2;
                    } else if chars[i] == '*' && at(i + 1) == '/' {
                        depth -= 1;
                        i += 2;
                        if depth == 0 {
                            break;
                        }
                    } else {
                        i += 1;
                    }
                }
                out.push(' ');
            } else if c == '"' {
                i += 1;
                while i < chars.len() && chars[i] != '"' {
                    i += if chars[i] == '\\' { 2 } else { 1 };
                }
                i += 1;
                out.push(' ');
            } else if let Some(hashes) = raw_string(&chars, i) {
                // r"…", r#"…"#, br"…", cr"…": to the quote and as many `#`s.
                let mut j = i + usize::from(c != 'r') + 1 + hashes + 1;
                while j < chars.len()
                    && !(chars[j] == '"' && (1..=hashes).all(|k| at(j + k) == '#'))
                {
                    j += 1;
                }
                i = j + 1 + hashes;
                out.push(' ');
            } else if c == '\'' && at(i + 1) == '\\' {
                // A character literal with an escape: '\n', '\'', '\u{…}'.
                i += 3;
                while i < chars.len() && chars[i] != '\'' {
                    i += 1;
                }
                i += 1;
                out.push(' ');
            } else if c == '\'' && at(i + 2) == '\'' {
                i += 3;
                out.push(' ');
            } else {
                // Everything else, a lifetime's quote included.
                out.push(c);
                i += 1;
            }
        }
        out
    }

    /// The number of `#`s of the raw string literal that starts at `i`, if one does.
    fn raw_string(chars: &[char], i: usize) -> Option<usize> {
        let at = |i: usize| chars.get(i).copied().unwrap_or('\0');
        let after_word = i > 0 && (chars[i - 1].is_alphanumeric() || chars[i - 1] == '_');
        let mut j = match chars[i] {
            'r' => i + 1,
            'b' | 'c' if at(i + 1) == 'r' => i + 2,
            _ => return None,
        };
        if after_word {
            return None;
        }
        let hashes = chars[j..].iter().take_while(|&&c| c == '#').count();
        j += hashes;
        (at(j) == '"').then_some(hashes)
    }

    /// The words and the punctuation of `code` (`::` one token), without the modules
    /// compiled for tests only (`#[cfg(test)] mod x { … }` or `mod x;`).
    fn tokens(code: &str) -> Vec<String> {
        let mut all = Vec::new();
        let mut chars = code.chars().peekable();
        while let Some(c) = chars.next() {
            if c.is_alphanumeric() || c == '_' {
                let mut word = c.to_string();
                while let Some(&next) = chars.peek() {
                    if !(next.is_alphanumeric() || next == '_') {
                        break;
                    }
                    word.push(next);
                    chars.next();
                }
                all.push(word);
            } else if c == ':' && chars.peek() == Some(&':') {
                chars.next();
                all.push("::".to_string());
            } else if !c.is_whitespace() {
                all.push(c.to_string());
            }
        }
        let mut kept = Vec::with_capacity(all.len());
        let mut i = 0;
        while i < all.len() {
            match test_module_end(&all, i) {
                Some(end) => i = end,
                None => {
                    kept.push(all[i].clone());
                    i += 1;
                }
            }
        }
        kept
    }

    /// Where a module for tests only that starts at `start` (`#[cfg(test)]`, any other
    /// attributes and a visibility, then `mod x { … }` or `mod x;`) ends.
    fn test_module_end(tokens: &[String], start: usize) -> Option<usize> {
        let is = |i: usize, text: &str| tokens.get(i).is_some_and(|t| t == text);
        let cfg_test = ["#", "[", "cfg", "(", "test", ")", "]"];
        if !cfg_test.iter().enumerate().all(|(k, t)| is(start + k, t)) {
            return None;
        }
        let mut i = start + cfg_test.len();
        // Other attributes, then a visibility.
        while is(i, "#") && is(i + 1, "[") {
            i = matching(tokens, i + 1, "[", "]")?;
        }
        if is(i, "pub") {
            i += 1;
            if is(i, "(") {
                i = matching(tokens, i, "(", ")")?;
            }
        }
        if !is(i, "mod") {
            return None;
        }
        i += 2;
        if is(i, ";") {
            return Some(i + 1);
        }
        if is(i, "{") {
            return matching(tokens, i, "{", "}");
        }
        None
    }

    /// The index after the `close` that matches the `open` at `at`.
    fn matching(tokens: &[String], at: usize, open: &str, close: &str) -> Option<usize> {
        let mut depth = 0usize;
        for (i, token) in tokens.iter().enumerate().skip(at) {
            if token == open {
                depth += 1;
            } else if token == close {
                depth -= 1;
                if depth == 0 {
                    return Some(i + 1);
                }
            }
        }
        None
    }

    /// The modules a file declares (`mod x;`, `mod x { … }`).
    fn declared_modules(tokens: &[String]) -> BTreeSet<String> {
        tokens
            .windows(3)
            .filter(|w| w[0] == "mod" && (w[2] == ";" || w[2] == "{"))
            .map(|w| w[1].clone())
            .collect()
    }

    /// Every path a file imports through: those of its private `use`s, and those written in
    /// its code (two words or more joined by `::`, from the first).
    fn paths(tokens: &[String]) -> Vec<Vec<String>> {
        let word = |t: &str| t.chars().all(|c| c.is_alphanumeric() || c == '_');
        let mut paths = Vec::new();
        let mut i = 0;
        while i < tokens.len() {
            if tokens[i] == "use" {
                let end = tokens[i..]
                    .iter()
                    .position(|t| t == ";")
                    .map_or(tokens.len(), |n| i + n);
                let mut tree = Vec::new();
                let mut at = i + 1;
                use_tree(&tokens[..end], &mut at, Vec::new(), &mut tree);
                if reexport(tokens, i) {
                    // A name handed on is no import, unless the file uses it too.
                    let used = |name: &String| {
                        let all = tokens.iter().filter(|t| *t == name).count();
                        let here = tokens[i..end].iter().filter(|t| *t == name).count();
                        all > here
                    };
                    tree.retain(|path| path.last().is_some_and(used));
                }
                paths.extend(tree);
                i = end + 1;
                continue;
            }
            let starts = word(&tokens[i])
                && tokens.get(i + 1).is_some_and(|t| t == "::")
                && (i == 0 || tokens[i - 1] != "::");
            if starts {
                let mut path = vec![tokens[i].clone()];
                i += 1;
                while tokens.get(i).is_some_and(|t| t == "::")
                    && tokens.get(i + 1).is_some_and(|t| word(t))
                {
                    path.push(tokens[i + 1].clone());
                    i += 2;
                }
                paths.push(path);
                continue;
            }
            i += 1;
        }
        paths
    }

    /// Whether the `use` at `at` is a re-export: `pub use`, `pub(crate) use`, ….
    fn reexport(tokens: &[String], at: usize) -> bool {
        match at.checked_sub(1).map(|i| tokens[i].as_str()) {
            Some("pub") => true,
            Some(")") => {
                let mut i = at - 1;
                while i > 0 && tokens[i] != "(" {
                    i -= 1;
                }
                i > 0 && tokens[i - 1] == "pub"
            }
            _ => false,
        }
    }

    /// The paths of the `use` tree at `at` (up to the end of `tokens`), each after
    /// `prefix`.
    fn use_tree(
        tokens: &[String],
        at: &mut usize,
        prefix: Vec<String>,
        out: &mut Vec<Vec<String>>,
    ) {
        let mut path = prefix;
        while let Some(token) = tokens.get(*at) {
            match token.as_str() {
                "::" => *at += 1,
                "{" => {
                    *at += 1;
                    while let Some(token) = tokens.get(*at) {
                        match token.as_str() {
                            "}" => {
                                *at += 1;
                                return;
                            }
                            "," => *at += 1,
                            _ => {
                                let before = *at;
                                use_tree(tokens, at, path.clone(), out);
                                if *at == before {
                                    *at += 1;
                                }
                            }
                        }
                    }
                    return;
                }
                "*" => {
                    *at += 1;
                    out.push(path);
                    return;
                }
                "," | "}" => {
                    out.push(path);
                    return;
                }
                "as" => *at += 2,
                _ => {
                    path.push(token.clone());
                    *at += 1;
                }
            }
        }
        out.push(path);
    }

    /// The module that `path`, written in the file of `here` (which declares `declared`),
    /// reaches: as far as `modules` have files.
    fn resolve(
        path: &[String],
        here: &Module,
        declared: &BTreeSet<String>,
        modules: &BTreeMap<Module, String>,
    ) -> Option<Module> {
        let (first, rest) = path.split_first()?;
        let mut at = here.clone();
        match first.as_str() {
            "crate" => at.clear(),
            "super" => {
                at.pop()?;
            }
            "self" => {}
            name if declared.contains(name) => at.push(name.to_string()),
            _ => return None,
        }
        if !at.is_empty() && !modules.contains_key(&at) {
            return Some(here.clone());
        }
        for segment in rest {
            match segment.as_str() {
                "self" => {}
                "super" => {
                    at.pop()?;
                }
                name => {
                    at.push(name.to_string());
                    if !modules.contains_key(&at) {
                        at.pop();
                        break;
                    }
                }
            }
        }
        Some(at)
    }

    /// The strongly connected components of `graph` (Tarjan's algorithm), each sorted.
    fn strongly_connected(graph: &BTreeMap<String, BTreeSet<String>>) -> Vec<Vec<String>> {
        struct Walk<'a> {
            graph: &'a BTreeMap<String, BTreeSet<String>>,
            index: BTreeMap<&'a str, usize>,
            low: BTreeMap<&'a str, usize>,
            stack: Vec<&'a str>,
            on_stack: BTreeSet<&'a str>,
            components: Vec<Vec<String>>,
        }
        impl<'a> Walk<'a> {
            fn visit(&mut self, node: &'a str) {
                let index = self.index.len();
                self.index.insert(node, index);
                self.low.insert(node, index);
                self.stack.push(node);
                self.on_stack.insert(node);
                let graph = self.graph;
                for next in graph.get(node).into_iter().flatten() {
                    let next = next.as_str();
                    if !self.index.contains_key(next) {
                        self.visit(next);
                        let low = self.low[node].min(self.low[next]);
                        self.low.insert(node, low);
                    } else if self.on_stack.contains(next) {
                        let low = self.low[node].min(self.index[next]);
                        self.low.insert(node, low);
                    }
                }
                if self.low[node] == self.index[node] {
                    let mut component = Vec::new();
                    while let Some(member) = self.stack.pop() {
                        self.on_stack.remove(member);
                        component.push(member.to_string());
                        if member == node {
                            break;
                        }
                    }
                    component.sort();
                    self.components.push(component);
                }
            }
        }
        let mut walk = Walk {
            graph,
            index: BTreeMap::new(),
            low: BTreeMap::new(),
            stack: Vec::new(),
            on_stack: BTreeSet::new(),
            components: Vec::new(),
        };
        for node in graph.keys() {
            if !walk.index.contains_key(node.as_str()) {
                walk.visit(node);
            }
        }
        walk.components.sort();
        walk.components
    }
}

/// git-mile's `task/` (upstream git-mile's tasks) is read-only: outside its tests it names
/// none of the ways git-mile writes (the store's writes, the write operations, the writes of
/// tasks (`task_write/`, which reads through `task/`, never the other way round), gix's object
/// and reference writes, files opened for writing, git's plumbing that moves refs).
#[test]
fn git_mile_tasks_only_read() {
    let forbidden = [
        "crate::ops",
        "crate::writes",
        "crate::task_write",
        "append_raw",
        ".write(",
        ".create(",
        "write_object",
        "write_blob",
        "edit_reference",
        "fs::write",
        "File::create",
        "OpenOptions",
        "update-ref",
        "commit-tree",
    ];
    let dir = crates_dir().join("git-mile/src/task");
    let files = rust_files(&dir);
    assert!(files.len() >= 3, "git-mile/src/task has moved: {files:?}");
    for file in files {
        let text = std::fs::read_to_string(&file).unwrap();
        let code = text.split("#[cfg(test)]").next().unwrap_or_default();
        for name in forbidden {
            assert!(
                !code.contains(name),
                "{} names `{name}`: tasks are read-only",
                file.display()
            );
        }
    }
}

/// git-mile's writes of upstream tasks (`task_write/`) go through the store's
/// compare-and-swap (`GitStore::append_raw`, which retries when another writer moved the ref)
/// and nothing else: outside its tests no module of it writes an object or a ref itself,
/// opens a file for writing, or runs a program (upstream's hooks are never run: a write they
/// would see is refused).
#[test]
fn git_mile_task_writes_go_through_the_store() {
    let forbidden = [
        "edit_reference",
        "write_object",
        "write_blob",
        "update-ref",
        "commit-tree",
        "fs::write",
        "File::create",
        "OpenOptions",
        "Command::new",
        "process::Command",
    ];
    let dir = crates_dir().join("git-mile/src/task_write");
    let files = rust_files(&dir);
    assert!(
        files.len() >= 3,
        "git-mile/src/task_write has moved: {files:?}"
    );
    let mut appends = false;
    for file in files {
        let text = std::fs::read_to_string(&file).unwrap();
        let code = text.split("#[cfg(test)]").next().unwrap_or_default();
        appends |= code.contains(".append_raw(");
        for name in forbidden {
            assert!(
                !code.contains(name),
                "{} names `{name}`: task writes go through the store's compare-and-swap",
                file.display()
            );
        }
    }
    assert!(
        appends,
        "task_write no longer appends through GitStore::append_raw"
    );
}

/// `duvet mcp` never touches the network: only the commands (`cli/common`, `cli/extract`)
/// name duvet's `download` module or an HTTP client; the server and the model never do.
#[test]
fn duvet_downloads_only_in_its_commands() {
    let src = crates_dir().join("duvet/src");
    let files = rust_files(&src);
    assert!(
        files.iter().any(|f| f.ends_with("download.rs")),
        "duvet/src/download.rs has moved"
    );
    for file in files {
        let rel = file
            .strip_prefix(&src)
            .unwrap()
            .to_string_lossy()
            .replace('\\', "/");
        if ["download.rs", "cli/common.rs", "cli/extract.rs"].contains(&rel.as_str()) {
            continue;
        }
        let text = std::fs::read_to_string(&file).unwrap();
        let code = text.split("#[cfg(test)]").next().unwrap_or_default();
        for name in ["download::", "reqwest", "fetch_missing"] {
            assert!(
                !code.contains(name),
                "duvet/src/{rel} names `{name}`: only the commands download"
            );
        }
    }
}
