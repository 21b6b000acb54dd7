//! `git mile push` and `git mile pull` carry upstream git-mile's tasks as upstream's own push
//! and pull do: two clones holding the task refs upstream's binary wrote when each changed the
//! same task at once (record.sh's stages `a-edited` and `b-edited`) and a bare remote made
//! with `git`; after pushing and pulling with ours, both clones read every task as upstream
//! read it after pushing and pulling with its own (stages `b-merged`, `a-final`), and
//! upstream's binary, when present, reads our merge as we do.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // assertions in tests

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::support::Sandbox;
use crate::upstream_tasks::{Recording, assert_cli_agrees, load, upstream_bin};

const EMPTY_TREE: &str = "4b825dc642cb6eb9a060e54bf8d69288fbee4904";

/// A bare `origin.git` and clones `a` (Ann) and `b` (Bob) of it, each holding the task refs of
/// one side of the recording's concurrent edits.
fn two_clones(sandbox: &Sandbox, recording: &Recording) -> (PathBuf, PathBuf, PathBuf) {
    let origin = sandbox.path("origin.git");
    std::fs::create_dir_all(&origin).unwrap();
    sandbox.git(&origin, &["init", "-q", "--bare"]);
    let mut clones = Vec::new();
    for (name, user, stage) in [
        ("a", ("Ann Example", "ann@example.com"), "a-edited"),
        ("b", ("Bob Example", "bob@example.com"), "b-edited"),
    ] {
        let repo = sandbox.repo(name);
        sandbox.identity(&repo, user.0, user.1);
        sandbox.git(
            &repo,
            &["remote", "add", "origin", origin.to_str().unwrap()],
        );
        load(sandbox, &repo, &recording.bundle(stage));
        clones.push(repo);
    }
    let b = clones.pop().unwrap();
    let a = clones.pop().unwrap();
    (origin, a, b)
}

fn tip(sandbox: &Sandbox, repo: &Path, name: &str) -> String {
    sandbox.git(repo, &["rev-parse", name]).trim().to_string()
}

fn git_mile_refs(sandbox: &Sandbox, repo: &Path) -> String {
    sandbox.git(repo, &["for-each-ref", "refs/git-mile/"])
}

/// Upstream's `show --task ID` in `repo` (its log lines on stdout before the JSON dropped).
fn upstream_show(sandbox: &Sandbox, bin: &Path, repo: &Path, id: &str) -> Value {
    let output = sandbox
        .command(bin.to_str().unwrap(), repo)
        .args(["show", "--task", id])
        .output()
        .unwrap();
    assert!(output.status.success(), "upstream show {id}: {output:?}");
    let text = String::from_utf8(output.stdout).unwrap();
    let start = text.find("\n{").map_or(0, |i| i + 1);
    serde_json::from_str(&text[start..]).unwrap_or_else(|e| panic!("{e}: {text}"))
}

fn tasks_travel(sandbox: &Sandbox, recording: &Recording) {
    let (origin, a, b) = two_clones(sandbox, recording);
    let t = recording.role("shared", "t");
    let t_ref = format!("refs/git-mile/tasks/{t}");
    let b_edited = recording.answers("b-edited");
    let count = b_edited["tasks"].as_object().unwrap().len();

    // A pushes every task to the empty remote, and says so.
    let pushed = sandbox.mile_json(&a, &["push"]);
    assert_eq!(pushed["created"], count, "{pushed}");
    assert_eq!(pushed["tasks"]["created"], count, "{pushed}");
    assert_eq!(git_mile_refs(sandbox, &origin), git_mile_refs(sandbox, &a));
    let again = sandbox.mile_ok(&a, &["push"]);
    assert_eq!(
        again.trim(),
        format!(
            "pushed to origin: 0 new, 0 updated, {count} up to date (tasks among them: 0 new, 0 \
             updated, {count} up to date)"
        )
    );

    // B's T diverged from A's: the remote refuses it, and nothing is lost; B's other changes
    // (the parents it moved T between) go.
    let b_t = tip(sandbox, &b, &t_ref);
    let a_t = tip(sandbox, &a, &t_ref);
    let err = sandbox.mile_err(&b, &["push"], 1);
    assert!(
        err.contains(&format!(
            "the remote refused 1 ref whose history moved there since this clone last pulled \
             (task {t}); nothing is lost: it stays as it is here and there; run `git mile pull \
             origin` to merge, then push again. The others: pushed to origin: 0 new, 2 \
             updated, {} up to date (tasks among them: 0 new, 2 updated, {} up to date)",
            count - 3,
            count - 3
        )),
        "{err}"
    );
    assert_eq!(tip(sandbox, &b, &t_ref), b_t, "B's T stays");
    assert_eq!(tip(sandbox, &origin, &t_ref), a_t, "the remote's T stays");

    // B pulls: T merged as upstream merges, the others up to date.
    let pulled = sandbox.mile_json(&b, &["pull"]);
    assert_eq!(pulled["merged"], 1, "{pulled}");
    assert_eq!(pulled["tasks"]["merged"], 1, "{pulled}");
    assert_eq!(pulled["tasks"]["up_to_date"], count - 1, "{pulled}");
    assert_eq!(pulled["skipped"], serde_json::json!([]), "{pulled}");
    let merge = tip(sandbox, &b, &t_ref);
    let commit = sandbox.git(&b, &["cat-file", "commit", &merge]);
    let (head, message) = commit.split_once("\n\n").unwrap();
    assert_eq!(message, format!("Merge remote changes into {t_ref}"));
    let lines: Vec<&str> = head.lines().collect();
    assert_eq!(lines[0], format!("tree {EMPTY_TREE}"));
    assert_eq!(lines[1], format!("parent {b_t}"), "ours first, as upstream");
    assert_eq!(lines[2], format!("parent {a_t}"));
    assert!(
        lines[3].starts_with("author Bob Example <bob@example.com> "),
        "{head}"
    );
    // Every task of B now reads as upstream's B read after its own pull.
    assert_cli_agrees(
        sandbox,
        &b,
        &recording.answers("b-merged"),
        "b-merged (ours)",
    );

    // B pushes the merge; A pulls it (a fast-forward) and reads the same.
    let pushed = sandbox.mile_json(&b, &["push"]);
    assert_eq!(pushed["tasks"]["updated"], 1, "{pushed}");
    let pulled = sandbox.mile_ok(&a, &["pull"]);
    assert_eq!(
        pulled.trim(),
        format!(
            "pulled from origin: 0 new, 3 fast-forwarded, 0 merged, {} up to date (tasks \
             among them: 0 new, 3 fast-forwarded, 0 merged, {} up to date)",
            count - 3,
            count - 3
        )
    );
    assert_eq!(git_mile_refs(sandbox, &a), git_mile_refs(sandbox, &b));
    assert_cli_agrees(sandbox, &a, &recording.answers("a-final"), "a-final (ours)");

    // Upstream's binary reads our merge as we do, and pulls what ours pushed.
    let Some(bin) = upstream_bin() else {
        return;
    };
    let final_answers = recording.answers("a-final");
    for (id, theirs) in final_answers["tasks"].as_object().unwrap() {
        assert_eq!(
            &upstream_show(sandbox, &bin, &b, id),
            &theirs["show"],
            "upstream's show of our merge of {id}"
        );
    }
    let c = sandbox.repo("c");
    sandbox.git(&c, &["remote", "add", "origin", origin.to_str().unwrap()]);
    let output = sandbox
        .command(bin.to_str().unwrap(), &c)
        .arg("pull")
        .output()
        .unwrap();
    assert!(output.status.success(), "upstream pull: {output:?}");
    assert_eq!(git_mile_refs(sandbox, &c), git_mile_refs(sandbox, &a));
    assert_eq!(
        upstream_show(sandbox, &bin, &c, &t),
        final_answers["tasks"][&t]["show"]
    );
}

#[test]
fn push_and_pull_carry_tasks_and_merge_them_as_upstream() {
    tasks_travel(&Sandbox::new(), &Recording::committed());
}

#[test]
fn push_and_pull_carry_a_live_recording() {
    let Some(bin) = upstream_bin() else {
        return;
    };
    let sandbox = Sandbox::new();
    let recording = Recording::live(&sandbox, &bin);
    tasks_travel(&sandbox, &recording);
}

#[test]
fn a_foreign_or_damaged_task_ref_of_the_remote_does_not_spread() {
    let sandbox = Sandbox::new();
    let recording = Recording::committed();
    let theirs = sandbox.repo("theirs");
    load(&sandbox, &theirs, &recording.bundle("solo"));
    // A task ref whose history holds no git-mile event (a branch's commit).
    let foreign = "019a0000-0000-7000-8000-00000000f0f0";
    let head = tip(&sandbox, &theirs, "HEAD");
    sandbox.git(
        &theirs,
        &[
            "update-ref",
            &format!("refs/git-mile/tasks/{foreign}"),
            &head,
        ],
    );
    let ours = sandbox.repo("ours");
    // One of ours git cannot read: the pull goes on around it.
    let broken = "019a0000-0000-7000-8000-00000000dead";
    let dir = ours.join(".git/refs/git-mile/tasks");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join(broken), "junk\n").unwrap();

    let output = sandbox.mile(&ours, &["pull", theirs.to_str().unwrap()]);
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "{stdout}{stderr}");
    assert!(
        stdout.contains("3 new") && stdout.contains("tasks among them: 3 new"),
        "{stdout}"
    );
    assert!(
        stdout.contains(&format!("not pulled: task {foreign}: "))
            && stdout.contains("its history holds no git-mile-event about this task"),
        "{stdout}"
    );
    assert!(
        stderr.contains("1 of the remote's entities were not pulled"),
        "{stderr}"
    );
    let refs = git_mile_refs(&sandbox, &ours);
    assert!(!refs.contains(foreign), "{refs}");
    assert_cli_agrees(&sandbox, &ours, &recording.answers("solo"), "solo pulled");
}
