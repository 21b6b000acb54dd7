//! The real twig CLI beside the server: `twig tree` and `twig flow` (the `twig-flow` plugin,
//! which shows ahead/behind) run in the benchmark's repository, when a twig binary is found
//! (`TWIG_BIN`, else `twig` on `PATH`).

use std::{
    path::{Path, PathBuf},
    process::Command,
    time::{Duration, Instant},
};

/// Runs of each command.
pub const RUNS: usize = 7;

/// The twig binary: `TWIG_BIN`, else `twig` on `PATH`.
pub fn find_twig() -> Option<PathBuf> {
    if let Some(bin) = std::env::var_os("TWIG_BIN").filter(|b| !b.is_empty()) {
        let bin = PathBuf::from(bin);
        assert!(bin.is_file(), "TWIG_BIN={} is not a file", bin.display());
        return Some(bin);
    }
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|dir| dir.join("twig"))
        .find(|bin| bin.is_file())
}

/// `twig` and the version `twig --version` names (it answers `🌿 Twig 0.7.1`).
pub fn version(bin: &Path) -> String {
    let answer = Command::new(bin)
        .arg("--version")
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).to_string())
        .unwrap_or_default();
    let version = answer
        .split_whitespace()
        .last()
        .unwrap_or("(version unknown)");
    format!("twig {version}")
}

/// The twig command `args` in `repo` with a clean environment: `HOME` (and the XDG
/// directories) in `home`, the binary's directory first on `PATH` (for plugins), no colour.
fn command(bin: &Path, args: &[&str], repo: &Path, home: &Path) -> Command {
    let mut path = vec![bin.parent().map(Path::to_path_buf).unwrap_or_default()];
    if let Some(system) = std::env::var_os("PATH") {
        path.extend(std::env::split_paths(&system));
    }
    let mut command = Command::new(bin);
    command
        .args(args)
        .current_dir(repo)
        .env_clear()
        .env("PATH", std::env::join_paths(path).unwrap())
        .env("HOME", home)
        .env("XDG_CONFIG_HOME", home.join(".config"))
        .env("XDG_DATA_HOME", home.join(".local/share"))
        .env("XDG_CACHE_HOME", home.join(".cache"))
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("NO_COLOR", "1")
        .env("TERM", "dumb");
    command
}

/// A timed command: its run times and the size of its output.
pub struct Timed {
    pub samples: Vec<Duration>,
    pub bytes: usize,
}

/// Run `twig args` [`RUNS`] times (after one untimed run); each must succeed and list at
/// least `min_branches` lines naming a stack branch, among them `must_list`. Why not, when
/// a run does not.
pub fn time_twig(
    bin: &Path,
    args: &[&str],
    repo: &Path,
    home: &Path,
    min_branches: usize,
    must_list: &str,
) -> Result<Timed, String> {
    let mut samples = Vec::with_capacity(RUNS);
    let mut bytes = 0;
    for run in 0..=RUNS {
        let start = Instant::now();
        let output = command(bin, args, repo, home)
            .output()
            .map_err(|err| format!("cannot run twig {args:?}: {err}"))?;
        let elapsed = start.elapsed();
        let stdout = String::from_utf8_lossy(&output.stdout);
        if !output.status.success() {
            return Err(format!(
                "twig {args:?} failed ({}): {}",
                output.status,
                String::from_utf8_lossy(&output.stderr).trim()
            ));
        }
        let listed = stdout.lines().filter(|l| l.contains("stack-")).count();
        if listed < min_branches || !stdout.contains(must_list) {
            return Err(format!(
                "twig {args:?} listed {listed} stack branches (want {min_branches}, with \
                 {must_list}):\n{}",
                stdout.chars().take(2_000).collect::<String>()
            ));
        }
        bytes = output.stdout.len();
        if run > 0 {
            samples.push(elapsed);
        }
    }
    Ok(Timed { samples, bytes })
}
