//! The tool surface every server offers alike (`mcp_common::surface`): `--toolsets`,
//! `--tools` and `--read-only` choose what `tools/list` shows and what may be called.

use std::collections::BTreeSet;

use mcp_common::surface::{Entry, toolsets_of};
use rmcp::model::CallToolRequestParams;
use rmcp::service::ServiceError;

use crate::Wire;
use crate::protocol::spawn;

async fn listed(bin: &str, args: &[&str]) -> BTreeSet<String> {
    let (_home, mcp) = spawn(Wire::Stdio, bin, args).await;
    mcp.tools()
        .await
        .into_iter()
        .map(|t| t.name.to_string())
        .collect()
}

fn names<'a>(entries: impl IntoIterator<Item = &'a Entry>) -> BTreeSet<String> {
    entries.into_iter().map(|e| e.name.to_string()).collect()
}

/// `bin base…` lists exactly the tools of `entries` (every tool has an entry, every entry a
/// tool); with `--toolsets` each toolset alone, with `--tools` two tools, with `--read-only`
/// the reads, with both `--toolsets` and `--tools` the tools of either; a tool left out is
/// an unknown tool when called; an unknown toolset stops the server with the known ones.
pub async fn check_surface(bin: &str, base: &[&str], entries: &[Entry]) {
    let with = |extra: &[&str]| -> Vec<String> {
        base.iter().chain(extra).map(|s| s.to_string()).collect()
    };
    let run = |args: Vec<String>| async move {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        listed(bin, &args).await
    };
    assert_eq!(
        run(with(&[])).await,
        names(entries),
        "{bin}: every tool, each with its entry"
    );
    let sets = toolsets_of(entries);
    for set in &sets {
        let expected = names(entries.iter().filter(|e| e.toolset == *set));
        assert_eq!(
            run(with(&["--toolsets", set])).await,
            expected,
            "{bin} --toolsets {set}"
        );
    }
    let (first, last) = (entries[0], entries[entries.len() - 1]);
    let pair = format!("{},{}", first.name, last.name);
    assert_eq!(
        run(with(&["--tools", &pair])).await,
        names([&first, &last]),
        "{bin} --tools {pair}"
    );
    let reads = names(entries.iter().filter(|e| !e.writes));
    assert_eq!(
        run(with(&["--read-only"])).await,
        reads,
        "{bin} --read-only"
    );
    // The same from the environment, `1` as well as `true`.
    let home = tempfile::tempdir().expect("tempdir");
    let home_str = home.path().display().to_string();
    let mcp = crate::McpProcess::spawn_bin_over(
        Wire::Stdio,
        bin,
        base,
        home.path(),
        &[("HOME", home_str.as_str()), ("MCP_READ_ONLY", "1")],
    )
    .await
    .expect("the server starts");
    let from_env: BTreeSet<String> = mcp
        .tools()
        .await
        .into_iter()
        .map(|t| t.name.to_string())
        .collect();
    assert_eq!(from_env, reads, "{bin} with MCP_READ_ONLY=1");
    if sets.len() > 1 {
        let other = entries.iter().find(|e| e.toolset != first.toolset).copied();
        if let Some(other) = other {
            let expected = names(
                entries
                    .iter()
                    .filter(|e| e.toolset == first.toolset || e.name == other.name),
            );
            assert_eq!(
                run(with(&["--toolsets", first.toolset, "--tools", other.name])).await,
                expected,
                "{bin} --toolsets {} --tools {}",
                first.toolset,
                other.name
            );
            // Left out: unknown when called, named with the tools offered.
            let args = with(&["--toolsets", first.toolset]);
            let args: Vec<&str> = args.iter().map(String::as_str).collect();
            let (_home, mcp) = spawn(Wire::Stdio, bin, &args).await;
            let answer = mcp
                .peer()
                .call_tool(CallToolRequestParams::new(other.name))
                .await;
            let Err(ServiceError::McpError(err)) = answer else {
                panic!("{bin}: {} is not offered, yet: {answer:?}", other.name);
            };
            assert!(err.message.contains(other.name), "{}", err.message);
            assert!(err.message.contains(first.name), "{}", err.message);
        }
    }
    // An unknown toolset is refused at start, with the known ones.
    let args = with(&["--toolsets", "no-such-set"]);
    let home = tempfile::tempdir().expect("tempdir");
    let out = std::process::Command::new(bin)
        .args(&args)
        .current_dir(home.path())
        .env("HOME", home.path())
        .stdin(std::process::Stdio::null())
        .output()
        .expect("the server runs");
    assert_eq!(out.status.code(), Some(2), "{bin}: {out:?}");
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(
        said.contains("no-such-set") && said.contains(sets[0]),
        "{said}"
    );
    assert!(out.stdout.is_empty(), "stdout carries protocol frames only");
}
