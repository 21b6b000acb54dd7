//! jility built without its default features (`cargo build -p jility --no-default-features`):
//! local mode over stdio alone. The binary is built here, in a target directory of its own
//! (a test build of this package would unify the features its dev-dependencies ask for), and
//! driven as a user would: cloud mode is refused with a reason, neither the cloud commands nor
//! `--http` exist, and the CLI and the MCP server work on a local database.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::support;

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use mcp_testkit::McpProcess;
use serde_json::{Value, json};

fn local_only_binary() -> PathBuf {
    let target = Path::new(env!("CARGO_TARGET_TMPDIR")).join("local-only");
    let status = mcp_testkit::bench::cargo()
        .args([
            "build",
            "--locked",
            "-p",
            "jility",
            "--no-default-features",
            "--bin",
            "jility",
            "--target-dir",
        ])
        .arg(&target)
        .status()
        .expect("run cargo");
    assert!(status.success(), "the local-only build failed ({status})");
    target.join("debug").join("jility")
}

fn run(bin: &Path, cwd: &Path, env: &[(&str, &str)], args: &[&str]) -> Output {
    let mut command = Command::new(bin);
    command
        .args(args)
        .current_dir(cwd)
        .env_clear()
        .stdin(Stdio::null());
    if let Ok(path) = std::env::var("PATH") {
        command.env("PATH", path);
    }
    command.envs(env.iter().copied());
    command.output().expect("run jility")
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// What the local-only build is made of: no database server's client, no HTTP stack.
#[test]
fn the_local_only_build_leaves_out_the_cloud_and_http() {
    let out = mcp_testkit::bench::cargo()
        .args([
            "tree",
            "--locked",
            "-p",
            "jility",
            "--no-default-features",
            "-e",
            "normal",
            "--prefix",
            "none",
        ])
        .output()
        .expect("run cargo tree");
    assert!(out.status.success(), "{}", stderr(&out));
    let tree = String::from_utf8_lossy(&out.stdout);
    let packages: Vec<&str> = tree.lines().filter_map(|l| l.split(' ').next()).collect();
    assert!(packages.contains(&"rusqlite"), "{tree}");
    for left_out in [
        "axum",
        "hyper",
        "postgres",
        "r2d2",
        "reqwest",
        "tokio-rustls",
        "jility-cloud",
        "jility-bridge",
    ] {
        assert!(
            !packages.contains(&left_out),
            "the local-only build has {left_out}"
        );
    }
}

#[tokio::test]
async fn the_local_only_build_is_local_mode_over_stdio() {
    let bin = local_only_binary();
    let p = support::Project::new();
    let root = p.root();

    // Cloud mode is refused, with what to do instead.
    let out = run(&bin, root, &[("JILITY_MODE", "cloud")], &["--mcp-server"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("built without cloud mode"),
        "{}",
        stderr(&out)
    );
    assert!(
        stderr(&out).contains("Unset JILITY_MODE"),
        "{}",
        stderr(&out)
    );
    // The cloud commands and --http do not exist.
    for command in ["serve", "admin", "auth", "audit"] {
        let out = run(&bin, root, &[], &[command, "--help"]);
        assert_eq!(out.status.code(), Some(2), "{command}: {}", stderr(&out));
        assert!(
            stderr(&out).contains("unrecognized subcommand"),
            "{}",
            stderr(&out)
        );
    }
    let out = run(&bin, root, &[], &["--mcp-server", "--http", "127.0.0.1:0"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("unexpected argument '--http'"),
        "{}",
        stderr(&out)
    );
    let help = run(&bin, root, &[], &["--help"]);
    let help = String::from_utf8_lossy(&help.stdout);
    assert!(
        !help.contains("--http") && !help.contains("Serve the REST API"),
        "{help}"
    );

    // The CLI works on a local database…
    let out = run(&bin, root, &[], &["--json", "init", "--key", "LOC"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let out = run(
        &bin,
        root,
        &[],
        &["--json", "ticket", "create", "--title", "From the CLI"],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let created: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(created["ticket"]["number"], "LOC-1");

    // …and so does the MCP server over stdio, on the same database.
    let mcp = McpProcess::spawn_bin(&bin, &["--mcp-server"], root, &[("JILITY_ACTOR", "agent")])
        .await
        .unwrap();
    assert_eq!(mcp.tools().await.len(), 39);
    let (text, ticket) = mcp
        .call_markdown::<Value>("jility_get_ticket", json!({"ticket_id": "LOC-1"}))
        .await;
    assert!(text.starts_with("# LOC-1: From the CLI"), "{text}");
    assert_eq!(ticket.unwrap()["ticket"]["title"], "From the CLI");
    let (_, claimed) = mcp
        .call_markdown::<Value>("jility_claim_ticket", json!({"ticket_id": "LOC-1"}))
        .await;
    assert_eq!(claimed.unwrap()["assignee"], "agent");
}
