//! The benchmark's repository: `main` with a history of [`MAIN_COMMITS`] commits, 2,000 local
//! branches (loose refs) with commits of their own stacked as twig's state declares them, and
//! a twig state file of 10,000 branches.
//!
//! Every local stack (see [`kind`]) is up to date with `main`, behind it, or stale (its base
//! and commits are [`STALE_BASE_AGE`] days old); in a few stacks the top branch is merged into
//! its parent (the parent was fast-forwarded onto it and went on). The commits are written by
//! one `git fast-import`; the refs by `git update-ref --stdin` (loose, with reflogs, as git
//! writes them). What the health check must report is worked out here from the construction
//! ([`Expected`]).

use std::{
    collections::HashMap,
    fmt::Write as _,
    io::Write as _,
    path::{Path, PathBuf},
    process::{Command, Stdio},
    time::{SystemTime, UNIX_EPOCH},
};

use serde_json::{Map, Value, json};

use super::{
    LOCAL_EVERY, STACK_DEPTH, STACKS, SUBTREE_STACKS, branch_name, head_branch, is_local_stack,
    parent_name,
};

/// Commits on `main`, one a day; the tip is a day old.
pub const MAIN_COMMITS: usize = 300;
/// Seconds in a day.
const DAY: i64 = 86_400;
/// The age in days of the `main` commit that stale stacks start from.
const STALE_BASE_AGE: usize = 200;
/// `get_stack_health`'s default `stale_after_days`.
const STALE_AFTER_DAYS: i64 = 30;

/// What a local stack is like.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// Based on its parent's tip.
    UpToDate,
    /// Based on an older commit of its parent (1–20 `main` commits behind, or one commit
    /// behind a parent branch).
    Behind,
    /// Based on a `main` commit of [`STALE_BASE_AGE`] days ago, with commits as old.
    Stale,
}

/// The kind of local stack `stack`: a 40th stale, half of the rest behind.
pub fn kind(stack: usize) -> Kind {
    let j = stack / LOCAL_EVERY;
    if j.is_multiple_of(40) {
        Kind::Stale
    } else if j % 2 == 1 {
        Kind::Behind
    } else {
        Kind::UpToDate
    }
}

/// Whether the top branch of local stack `stack` is merged into its parent (8 stacks).
pub fn top_merged(stack: usize) -> bool {
    stack / LOCAL_EVERY % 50 == 3
}

/// Commits of a branch's own: 1 to 3.
fn own_commits(stack: usize, level: usize) -> usize {
    1 + (stack / LOCAL_EVERY + level) % 3
}

/// `get_stack_health`'s summary for a scope, as the construction makes it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Expected {
    pub branches: u64,
    pub needs_rebase: u64,
    pub merged: u64,
    pub stale: u64,
    pub missing: u64,
}

impl Expected {
    /// The summary's figures of an answer.
    pub fn of(summary: &Value) -> Self {
        let n = |key: &str| summary[key].as_u64().unwrap_or(u64::MAX);
        Self {
            branches: n("branches"),
            needs_rebase: n("needs_rebase"),
            merged: n("merged"),
            stale: n("stale"),
            missing: n("missing"),
        }
    }
}

pub struct Fixture {
    _dir: tempfile::TempDir,
    pub repo: PathBuf,
    pub home: PathBuf,
    pub state_bytes: usize,
    pub loose_refs: usize,
    pub commits: usize,
    /// The whole repository (no `branch`).
    pub all: Expected,
    /// The subtree of `SUBTREE_STACKS`' first stack's first branch.
    pub subtree: Expected,
}

pub fn git_command(dir: &Path) -> Command {
    let mut command = Command::new("git");
    command
        .current_dir(dir)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_AUTHOR_NAME", "Bench")
        .env("GIT_AUTHOR_EMAIL", "bench@example.com")
        .env("GIT_COMMITTER_NAME", "Bench")
        .env("GIT_COMMITTER_EMAIL", "bench@example.com");
    command
}

pub fn git(dir: &Path, args: &[&str]) -> String {
    let output = git_command(dir)
        .args(args)
        .output()
        .unwrap_or_else(|err| panic!("cannot run git {args:?}: {err}"));
    assert!(
        output.status.success(),
        "git {args:?} failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8_lossy(&output.stdout).trim().to_string()
}

/// Run `git args` with `input` on its standard input.
fn git_stdin(dir: &Path, args: &[&str], input: &[u8]) {
    git_stdin_at(dir, args, input, None);
}

/// `git_stdin` with the committer date (and so the reflog entries' time) set to `at`.
fn git_stdin_at(dir: &Path, args: &[&str], input: &[u8], at: Option<i64>) {
    let mut command = git_command(dir);
    if let Some(at) = at {
        command.env("GIT_COMMITTER_DATE", format!("@{at} +0000"));
    }
    let mut child = command
        .args(args)
        .stdin(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|err| panic!("cannot run git {args:?}: {err}"));
    child.stdin.take().unwrap().write_all(input).unwrap();
    let output = child.wait_with_output().unwrap();
    assert!(
        output.status.success(),
        "git {args:?} failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
}

/// A deterministic, UUID-shaped id (twig writes v4 UUIDs).
fn uuid_like(kind: u64, i: usize) -> String {
    let mut x = (i as u64 + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ kind;
    x ^= x >> 29;
    let y = x.wrapping_mul(0xBF58_476D_1CE4_E5B9);
    format!(
        "{:08x}-{:04x}-4{:03x}-8{:03x}-{:012x}",
        (x >> 32) as u32,
        (x >> 16) as u16,
        x as u16 & 0xfff,
        (y >> 52) as u16 & 0xfff,
        y & 0xffff_ffff_ffff
    )
}

fn timestamp(i: usize) -> String {
    format!(
        "2026-{:02}-{:02}T{:02}:{:02}:{:02}.{:09}+00:00",
        1 + i % 12,
        1 + i % 28,
        i % 24,
        i % 60,
        (i / 60) % 60,
        (i * 7_919) % 1_000_000_000
    )
}

/// `.twig/state.json` in twig 0.7's layout: 10,000 branches, each stack chained to its
/// parent (`main`, or a branch of the subtree's first stack).
fn state_json() -> Value {
    let mut branches = Map::new();
    let mut dependencies = Vec::new();
    let mut n = 0;
    for stack in 0..STACKS {
        for level in 1..=STACK_DEPTH {
            let name = branch_name(stack, level);
            let jira = (n % 3 != 0).then(|| format!("PROJ-{}", 1_000 + n));
            let pr = (n % 2 == 0).then_some(10_000 + n);
            branches.insert(
                name.clone(),
                json!({
                    "branch": name,
                    "jira_issue": jira,
                    "github_pr": pr,
                    "created_at": timestamp(n),
                }),
            );
            dependencies.push(json!({
                "id": uuid_like(1, n),
                "child": name,
                "parent": parent_name(stack, level),
                "created_at": timestamp(n),
            }));
            n += 1;
        }
    }
    let worktrees: Vec<Value> = (0..3)
        .map(|i| {
            let branch = branch_name(i * LOCAL_EVERY, STACK_DEPTH);
            json!({
                "name": format!("wt-{i}"),
                "path": format!("/work/wt/wt-{i}"),
                "branch": branch,
                "created_at": timestamp(i),
            })
        })
        .collect();
    json!({
        "version": 1,
        "updated_at": "2026-03-02T09:30:00.5+00:00",
        "worktrees": worktrees,
        "branches": branches,
        "dependencies": dependencies,
        "root_branches": [{
            "id": uuid_like(2, 0),
            "branch": "main",
            "is_default": true,
            "created_at": timestamp(0),
        }],
    })
}

fn count_files(dir: &Path) -> usize {
    std::fs::read_dir(dir)
        .map(|entries| {
            entries
                .flatten()
                .map(|e| {
                    let path = e.path();
                    if path.is_dir() { count_files(&path) } else { 1 }
                })
                .sum()
        })
        .unwrap_or(0)
}

/// The `git fast-import` stream being written: commits by mark (1-based), their times.
struct Stream {
    text: String,
    /// Committer time of mark `i + 1`.
    times: Vec<i64>,
}

impl Stream {
    /// A commit on `reference` with parent `from` at `time`, changing `path`; its mark.
    fn commit(&mut self, reference: &str, from: Option<usize>, time: i64, path: &str) -> usize {
        self.times.push(time);
        let mark = self.times.len();
        let message = format!("Change {path} ({mark})\n");
        let content = format!("{mark}\n");
        let t = &mut self.text;
        writeln!(t, "commit {reference}\nmark :{mark}").unwrap();
        writeln!(t, "committer Bench <bench@example.com> {time} +0000").unwrap();
        write!(t, "data {}\n{message}", message.len()).unwrap();
        if let Some(parent) = from {
            writeln!(t, "from :{parent}").unwrap();
        }
        writeln!(t, "M 100644 inline {path}").unwrap();
        write!(t, "data {}\n{content}\n", content.len()).unwrap();
        mark
    }

    fn time(&self, mark: usize) -> i64 {
        self.times[mark - 1]
    }
}

/// A local branch as built: its base, its own commits (the last is its tip), how its
/// reflog starts.
struct Built {
    base: usize,
    own: Vec<usize>,
    /// The commit it was created at, when it moved since (a merged branch).
    created_at: Option<usize>,
    behind: bool,
}

impl Built {
    fn tip(&self) -> usize {
        *self.own.last().unwrap()
    }

    /// The commit before the tip.
    fn before_tip(&self) -> usize {
        match self.own.len() {
            0 | 1 => self.base,
            n => self.own[n - 2],
        }
    }
}

pub fn generate_fixture() -> Fixture {
    let dir = tempfile::tempdir().expect("create a temp dir");
    let repo = dir.path().join("repo");
    let home = dir.path().join("home");
    std::fs::create_dir_all(&repo).unwrap();
    std::fs::create_dir_all(&home).unwrap();
    git(&repo, &["init", "-q", "-b", "main"]);
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs() as i64)
        .unwrap();

    let mut stream = Stream {
        text: String::with_capacity(2 << 20),
        times: Vec::new(),
    };
    let mut main = Vec::with_capacity(MAIN_COMMITS);
    for m in 0..MAIN_COMMITS {
        let time = now - (MAIN_COMMITS - m) as i64 * DAY;
        let path = format!("src/file-{:02}.txt", m % 50);
        let mark = stream.commit("refs/heads/main", main.last().copied(), time, &path);
        main.push(mark);
    }
    let main_tip = *main.last().unwrap();

    // Stacks in order: a parent stack (the subtree's first) comes before those under it.
    let scratch = "refs/fixture/scratch";
    let mut built: HashMap<String, Built> = HashMap::new();
    // The parents of merged branches, and their tips when the branches were created.
    let mut merged_parents: Vec<(String, usize)> = Vec::new();
    for stack in (0..STACKS).filter(|s| is_local_stack(*s)) {
        let kind = kind(stack);
        for level in 1..=STACK_DEPTH {
            let name = branch_name(stack, level);
            let parent = parent_name(stack, level);
            let (base, behind) = if level > 1 {
                (built[&parent].tip(), false)
            } else if parent == "main" {
                let j = stack / LOCAL_EVERY;
                match kind {
                    Kind::UpToDate => (main_tip, false),
                    Kind::Behind => (main[MAIN_COMMITS - 2 - j % 20], true),
                    Kind::Stale => (main[MAIN_COMMITS - STALE_BASE_AGE], true),
                }
            } else {
                let parent = &built[&parent];
                match kind {
                    Kind::Behind => (parent.before_tip(), true),
                    _ => (parent.tip(), false),
                }
            };
            let mut time = match kind {
                Kind::Stale => stream.time(base),
                _ => stream.time(base).max(now - 3 * DAY),
            };
            let mut own = Vec::new();
            let mut from = base;
            for k in 0..own_commits(stack, level) {
                time += 600;
                from = stream.commit(scratch, Some(from), time, &format!("{name}/{k}.txt"));
                own.push(from);
            }
            let mut branch = Built {
                base,
                own,
                created_at: None,
                behind,
            };
            if level == STACK_DEPTH && top_merged(stack) {
                // The parent takes the branch's commits and goes on: the branch is merged.
                let parent_branch = built.get_mut(&parent).unwrap();
                branch.created_at = Some(parent_branch.tip());
                merged_parents.push((parent.clone(), parent_branch.tip()));
                let follow_up = format!("{parent}/after-merge.txt");
                let after = stream.commit(scratch, Some(branch.tip()), time + 600, &follow_up);
                parent_branch.own.push(after);
            }
            built.insert(name, branch);
        }
    }

    let marks_file = dir.path().join("marks");
    let export = format!("--export-marks={}", marks_file.display());
    git_stdin(
        &repo,
        &["fast-import", "--quiet", &export],
        stream.text.as_bytes(),
    );
    let marks_text = std::fs::read_to_string(&marks_file).unwrap();
    let mut sha = vec![String::new(); stream.times.len() + 1];
    for line in marks_text.lines() {
        let (mark, id) = line.split_once(' ').unwrap();
        sha[mark.trim_start_matches(':').parse::<usize>().unwrap()] = id.to_string();
    }

    // As the reflogs of real work show it: all local branches in one transaction (loose refs
    // with reflogs), the parent of a merged branch where the branch was created; a minute
    // later the merged branches move to their own commits; a minute later their parents take
    // them (and go on).
    let mut names: Vec<&String> = built.keys().collect();
    names.sort();
    let taken: HashMap<&str, usize> = merged_parents
        .iter()
        .map(|(parent, at)| (parent.as_str(), *at))
        .collect();
    let mut create = format!("delete {scratch}\n");
    let mut moves = String::new();
    let mut takes = String::new();
    for name in &names {
        let branch = &built[*name];
        let first = match taken.get(name.as_str()) {
            Some(at) => {
                writeln!(takes, "update refs/heads/{name} {}", sha[branch.tip()]).unwrap();
                *at
            }
            None => branch.created_at.unwrap_or(branch.tip()),
        };
        writeln!(create, "create refs/heads/{name} {}", sha[first]).unwrap();
        if branch.created_at.is_some() {
            writeln!(moves, "update refs/heads/{name} {}", sha[branch.tip()]).unwrap();
        }
    }
    let update = ["update-ref", "--stdin"];
    git_stdin_at(&repo, &update, create.as_bytes(), Some(now - 180));
    git_stdin_at(&repo, &update, moves.as_bytes(), Some(now - 120));
    git_stdin_at(&repo, &update, takes.as_bytes(), Some(now - 60));
    git(&repo, &["checkout", "-q", "-f", &head_branch()]);

    let state = serde_json::to_vec_pretty(&state_json()).unwrap();
    std::fs::create_dir_all(repo.join(".twig")).unwrap();
    std::fs::write(repo.join(".twig/state.json"), &state).unwrap();
    let loose_refs = count_files(&repo.join(".git/refs/heads"));

    // What the health check must find, from the construction.
    let stale_before = now - STALE_AFTER_DAYS * DAY;
    let mut all = Expected {
        branches: 1 + (STACKS * STACK_DEPTH) as u64,
        ..Expected::default()
    };
    let mut subtree = Expected::default();
    for stack in 0..STACKS {
        for level in 1..=STACK_DEPTH {
            let mut counts = Expected {
                branches: 1,
                ..Expected::default()
            };
            match built.get(&branch_name(stack, level)) {
                None => counts.missing = 1,
                Some(branch) => {
                    let merged = branch.created_at.is_some();
                    counts.merged = u64::from(merged);
                    counts.needs_rebase = u64::from(branch.behind && !merged);
                    counts.stale = u64::from(stream.time(branch.tip()) < stale_before);
                }
            }
            all.needs_rebase += counts.needs_rebase;
            all.merged += counts.merged;
            all.stale += counts.stale;
            all.missing += counts.missing;
            if SUBTREE_STACKS.contains(&stack) {
                subtree.branches += 1;
                subtree.needs_rebase += counts.needs_rebase;
                subtree.merged += counts.merged;
                subtree.stale += counts.stale;
                subtree.missing += counts.missing;
            }
        }
    }
    Fixture {
        _dir: dir,
        repo,
        home,
        state_bytes: state.len(),
        loose_refs,
        commits: stream.times.len(),
        all,
        subtree,
    }
}
