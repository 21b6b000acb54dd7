//! The invariants of `docs/architecture.md` that a machine can check: which crate may depend on
//! which, which modules may import rmcp, and that the kit names no server's domain.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::{Path, PathBuf};

const SERVERS: [&str; 4] = ["twig-mcp", "duvet", "jility", "git-mile"];

/// The modules of each server crate that face the protocol and may import rmcp.
const PROTOCOL_MODULES: [(&str, &[&str]); 4] = [
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
    ("jility", &["server.rs"]),
    ("git-mile", &["server.rs", "writes.rs"]),
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

#[test]
fn dependencies_point_one_way() {
    let workspace: Vec<&str> = ["mcp-common", "mcp-testkit"]
        .into_iter()
        .chain(SERVERS)
        .collect();
    let inner = |krate: &str| -> Vec<String> {
        dependencies(krate)
            .into_iter()
            .filter(|d| workspace.contains(&d.as_str()))
            .collect()
    };
    assert_eq!(inner("mcp-common"), Vec::<String>::new());
    assert_eq!(inner("mcp-testkit"), vec!["mcp-common".to_string()]);
    for server in SERVERS {
        assert_eq!(
            inner(server),
            vec!["mcp-common".to_string()],
            "{server} may depend on mcp-common only (mcp-testkit as a dev-dependency)"
        );
    }
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
