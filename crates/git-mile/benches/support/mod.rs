//! What git-mile's benchmarks share (`stdio`, `tasks`): a repository written once with `git
//! fast-import`, cached under `target/git-mile-bench/` with its refs loose as the writers leave
//! them, copied for each run; the release server started on a copy, and calls timed on it.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use mcp_testkit::McpProcess;
use mcp_testkit::bench;
use serde_json::Value;

/// Run git in `dir`; its stdout (the benchmark fails when git does).
pub fn git(dir: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .args(args)
        .current_dir(dir)
        .output()
        .expect("git runs");
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The repository cached in `target/git-mile-bench/<name>/repo`, and how it came ("cached",
/// or "built in …"): when missing, a fresh repository (branch `main`, a bench identity) is
/// given to `write`, which fills it (through `git fast-import`, which packs the refs) and says
/// what it wrote; the refs under `refs/git-mile/` are then unpacked into loose refs, one file
/// an entity or task, as git-mile and upstream's writers leave them.
pub fn cached_repo(name: &str, write: impl FnOnce(&Path) -> String) -> (PathBuf, String) {
    let root = bench::target_dir().join("git-mile-bench").join(name);
    let repo = root.join("repo");
    if root.join("ok").is_file() {
        return (repo, "cached".into());
    }
    let _ = std::fs::remove_dir_all(&root);
    std::fs::create_dir_all(&repo).unwrap();
    let t = Instant::now();
    git(&repo, &["init", "-q", "-b", "main"]);
    git(&repo, &["config", "user.name", "Bench User"]);
    git(&repo, &["config", "user.email", "bench@example.com"]);
    let wrote = write(&repo);
    for line in git(
        &repo,
        &[
            "for-each-ref",
            "--format=%(refname) %(objectname)",
            "refs/git-mile",
        ],
    )
    .lines()
    {
        let (name, id) = line.split_once(' ').unwrap();
        let path = repo.join(".git").join(name);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, format!("{id}\n")).unwrap();
    }
    let _ = std::fs::remove_file(repo.join(".git/packed-refs"));
    let built = format!("built in {:.1?} ({wrote})", t.elapsed());
    std::fs::write(root.join("ok"), &built).unwrap();
    (repo, built)
}

/// A copy of the repository `from`, as `repo` in a temporary directory.
pub fn copy_repo(from: &Path) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let status = Command::new("cp")
        .arg("-a")
        .arg(from)
        .arg(dir.path().join("repo"))
        .status()
        .unwrap();
    assert!(status.success());
    dir
}

/// `bin mcp-server` started in `repo`, a client attached.
pub async fn start(bin: &Path, repo: &Path) -> McpProcess {
    McpProcess::spawn_bin(bin, &["mcp-server"], repo, &[])
        .await
        .expect("server starts")
}

/// One call of `tool`, timed; its answer's structured content (an error fails the benchmark).
pub async fn call(mcp: &McpProcess, tool: &str, args: &Value) -> (Duration, Value) {
    let t = Instant::now();
    let result = mcp.call(tool, args.clone()).await;
    let elapsed = t.elapsed();
    assert_ne!(result.is_error, Some(true), "{tool} {args}: {result:?}");
    (elapsed, result.structured_content.unwrap_or(Value::Null))
}
