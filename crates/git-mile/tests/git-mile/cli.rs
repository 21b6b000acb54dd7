//! `git mile` as a user runs it: every command, through git, in real repositories.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // assertions in tests

use crate::support;

use std::path::Path;

use serde_json::{Value, json};
use support::Sandbox;

/// Everything git shows of the working tree, the index, HEAD and the branches.
fn worktree_state(sandbox: &Sandbox, repo: &Path) -> (String, String, String, Vec<u8>) {
    (
        sandbox.git(repo, &["status", "--porcelain", "--untracked-files=all"]),
        sandbox.git(repo, &["rev-parse", "HEAD"]),
        sandbox.git(repo, &["for-each-ref", "refs/heads", "refs/tags"]),
        std::fs::read(repo.join(".git/index")).unwrap(),
    )
}

#[test]
fn every_command_and_nothing_outside_git_mile_refs_changes() {
    let sandbox = Sandbox::new();
    let repo = sandbox.repo("repo");
    let before = worktree_state(&sandbox, &repo);

    let milestone = sandbox.create(
        &repo,
        "milestone",
        "v1.0",
        &["--description", "First release", "--label", "release"],
    );
    assert!(uuid_like(&milestone), "create prints the id: {milestone}");
    let issue = sandbox.create(
        &repo,
        "issue",
        "Crash on start",
        &[
            "--label",
            "bug",
            "--label",
            "p1",
            "--milestone",
            &milestone[..8],
        ],
    );
    let created = sandbox.mile_json(&repo, &["create", "issue", "--title", "Second"]);
    assert_eq!(created["kind"], "issue");
    assert_eq!(created["events"], json!(["created"]));
    let second = created["id"].as_str().unwrap().to_string();

    // The refs and their event commits.
    let refs = sandbox.git(
        &repo,
        &["for-each-ref", "--format=%(refname)", "refs/git-mile"],
    );
    assert!(
        refs.contains(&format!("refs/git-mile/milestone/{milestone}")),
        "{refs}"
    );
    assert!(
        refs.contains(&format!("refs/git-mile/issue/{issue}")),
        "{refs}"
    );
    let log = sandbox.git(
        &repo,
        &[
            "log",
            "--format=%an <%ae>|%s|%T",
            &format!("refs/git-mile/issue/{issue}"),
        ],
    );
    let lines: Vec<&str> = log.lines().collect();
    assert_eq!(lines.len(), 2, "created + attached: {log}");
    assert!(lines[0].starts_with(&format!("Ann Example <ann@example.com>|git-mile: attached issue/{issue}|4b825dc642cb6eb9a060e54bf8d69288fbee4904")), "{log}");
    assert!(lines[1].contains("git-mile: created issue/"), "{log}");

    // edit, comment, label, close, open, attach, detach.
    sandbox.mile_ok(
        &repo,
        &[
            "edit",
            &issue,
            "--title",
            "Crash on startup",
            "--description",
            "Steps:\n1. start",
        ],
    );
    sandbox.mile_ok(
        &repo,
        &["comment", &issue[..6], "--body", "Seen on Linux too"],
    );
    sandbox.mile_ok(
        &repo,
        &["label", &issue, "--add", "linux", "--remove", "p1"],
    );
    let closed = sandbox.mile_json(&repo, &["close", &issue]);
    assert_eq!(closed["events"], json!(["status_changed"]));
    let again = sandbox.mile_ok(&repo, &["close", &issue]);
    assert!(again.contains("nothing to change"), "{again}");

    let shown = sandbox.mile_json(&repo, &["show", &issue]);
    assert_eq!(shown["title"], "Crash on startup");
    assert_eq!(shown["description"], "Steps:\n1. start");
    assert_eq!(shown["status"], "closed");
    assert_eq!(shown["labels"], json!(["bug", "linux"]));
    assert_eq!(shown["comments"][0]["body"], "Seen on Linux too");
    assert_eq!(shown["comments"][0]["author"], "Ann Example");
    assert_eq!(
        shown["milestone"],
        json!({"id": milestone, "title": "v1.0"})
    );
    let text = sandbox.mile_ok(&repo, &["show", &issue]);
    assert!(
        text.contains("Crash on startup") && text.contains("milestone: v1.0"),
        "{text}"
    );

    sandbox.mile_ok(&repo, &["open", &issue]);
    let ms = sandbox.mile_json(&repo, &["show", &milestone]);
    assert_eq!(ms["stats"], json!({"comment_count": 0, "open_issues": 1}));
    assert_eq!(ms["kind"], "milestone");
    sandbox.mile_ok(&repo, &["attach", &second, &milestone]);
    let ms = sandbox.mile_json(&repo, &["show", &milestone]);
    assert_eq!(ms["stats"]["open_issues"], 2);
    sandbox.mile_ok(&repo, &["detach", &issue]);
    assert_eq!(
        sandbox.mile_json(&repo, &["show", &issue])["milestone"],
        Value::Null
    );

    // list: text, JSON, filter, sort, limit and cursor.
    let listed = sandbox.mile_json(&repo, &["list"]);
    assert_eq!(listed["items"].as_array().unwrap().len(), 2);
    let text = sandbox.mile_ok(&repo, &["list", "--filter", "labels contains \"bug\""]);
    assert!(
        text.contains("Crash on startup") && !text.contains("Second"),
        "{text}"
    );
    let page = sandbox.mile_json(&repo, &["list", "--sort", "title:desc", "--limit", "1"]);
    assert_eq!(page["items"][0]["title"], "Second");
    let cursor = page["nextCursor"].as_str().unwrap().to_string();
    let next = sandbox.mile_json(
        &repo,
        &[
            "list",
            "--sort",
            "title:desc",
            "--limit",
            "1",
            "--cursor",
            &cursor,
        ],
    );
    assert_eq!(next["items"][0]["title"], "Crash on startup");
    assert_eq!(next["nextCursor"], Value::Null);
    let milestones = sandbox.mile_json(&repo, &["list", "--entity", "milestone"]);
    assert_eq!(
        milestones["items"][0]["stats"],
        json!({"comment_count": 0, "open_issues": 1})
    );
    sandbox.mile_ok(&repo, &["close", &second]);
    assert_eq!(
        sandbox.mile_json(&repo, &["list"])["items"]
            .as_array()
            .unwrap()
            .len(),
        1
    );
    assert_eq!(
        sandbox.mile_json(&repo, &["list", "--include-closed"])["items"]
            .as_array()
            .unwrap()
            .len(),
        2
    );

    // Nothing but refs/git-mile (and objects) moved.
    assert_eq!(worktree_state(&sandbox, &repo), before);
}

fn uuid_like(id: &str) -> bool {
    id.len() == 36 && id.chars().filter(|c| *c == '-').count() == 4
}

#[test]
fn errors_are_clear_and_change_nothing() {
    let sandbox = Sandbox::new();
    let repo = sandbox.repo("repo");
    let issue = sandbox.create(&repo, "issue", "One", &[]);
    let refs_before = sandbox.git(&repo, &["for-each-ref", "refs/git-mile"]);

    let err = sandbox.mile_err(&repo, &["show", "00000000-0000-4000-8000-000000000000"], 1);
    assert!(err.contains("not found"), "{err}");
    let err = sandbox.mile_err(&repo, &["comment", "zzzz", "--body", "x"], 1);
    assert!(err.contains("not found"), "{err}");
    let err = sandbox.mile_err(&repo, &["list", "--filter", "status == "], 2);
    assert!(err.contains("column 11"), "{err}");
    let err = sandbox.mile_err(&repo, &["list", "--limit", "0"], 2);
    assert!(err.contains("limit"), "{err}");
    let err = sandbox.mile_err(&repo, &["list", "--cursor", "forged"], 2);
    assert!(err.contains("cursor"), "{err}");
    let err = sandbox.mile_err(&repo, &["create", "issue", "--title", "  "], 2);
    assert!(err.contains("title"), "{err}");
    let err = sandbox.mile_err(&repo, &["edit", &issue], 2);
    assert!(err.contains("--title"), "{err}");
    let err = sandbox.mile_err(&repo, &["comment", &issue, "--body", ""], 2);
    assert!(err.contains("empty"), "{err}");
    let err = sandbox.mile_err(&repo, &["attach", &issue, &issue], 1);
    assert!(err.contains("milestone"), "{err}");
    let err = sandbox.mile_err(
        &repo,
        &["create", "milestone", "--title", "M", "--milestone", "x"],
        2,
    );
    assert!(err.contains("issues only"), "{err}");
    sandbox.mile_err(&repo, &["frobnicate"], 2);
    assert_eq!(
        sandbox.git(&repo, &["for-each-ref", "refs/git-mile"]),
        refs_before
    );

    // Outside a repository, and without an identity.
    let outside = sandbox.path("plain");
    std::fs::create_dir_all(&outside).unwrap();
    let err = sandbox.mile_err(&outside, &["list"], 1);
    assert!(err.contains("not a git repository"), "{err}");
    let anon = sandbox.path("anon");
    std::fs::create_dir_all(&anon).unwrap();
    sandbox.git(&anon, &["init", "-q"]);
    let err = sandbox.mile_err(&anon, &["create", "issue", "--title", "x"], 1);
    assert!(err.contains("user.name"), "{err}");
    // --repo reaches a repository from anywhere.
    let listed = sandbox.mile_json(&outside, &["list", "--repo", repo.to_str().unwrap()]);
    assert_eq!(listed["items"][0]["id"], issue);
}

#[test]
fn concurrent_writers_lose_no_event() {
    let sandbox = Sandbox::new();
    let repo = sandbox.repo("repo");
    let issue = sandbox.create(&repo, "issue", "Busy", &[]);
    const PER_WRITER: usize = 15;
    std::thread::scope(|scope| {
        for writer in 0..2 {
            let (sandbox, repo, issue) = (&sandbox, &repo, &issue);
            scope.spawn(move || {
                for n in 0..PER_WRITER {
                    sandbox.mile_ok(
                        repo,
                        &["comment", issue, "--body", &format!("w{writer}-{n}")],
                    );
                }
            });
        }
    });
    let shown = sandbox.mile_json(&repo, &["show", &issue]);
    let mut bodies: Vec<String> = shown["comments"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["body"].as_str().unwrap().to_string())
        .collect();
    bodies.sort();
    let mut expected: Vec<String> = (0..2)
        .flat_map(|w| (0..PER_WRITER).map(move |n| format!("w{w}-{n}")))
        .collect();
    expected.sort();
    assert_eq!(bodies, expected);
    // One linear chain: every event is a commit on the ref.
    let count = sandbox.git(
        &repo,
        &[
            "rev-list",
            "--count",
            &format!("refs/git-mile/issue/{issue}"),
        ],
    );
    assert_eq!(count.trim(), (2 * PER_WRITER + 1).to_string());
}

#[test]
fn two_clones_diverge_then_merge_to_the_same_result() {
    let sandbox = Sandbox::new();
    let (origin, a) = support::origin_and_clone(&sandbox);
    let issue = sandbox.create(&a, "issue", "Shared", &["--label", "start"]);
    let pushed = sandbox.mile_json(&a, &["push"]);
    assert_eq!(pushed["created"], 1);

    let b = sandbox.path("b");
    sandbox.git(
        sandbox.dir.path(),
        &["clone", "-q", origin.to_str().unwrap(), b.to_str().unwrap()],
    );
    sandbox.identity(&b, "Bob Example", "bob@example.com");
    let pulled = sandbox.mile_json(&b, &["pull"]);
    assert_eq!(pulled["created"], 1);
    assert_eq!(sandbox.mile_json(&b, &["show", &issue])["title"], "Shared");

    // Both change the same issue, and each creates one of its own.
    sandbox.mile_ok(&a, &["label", &issue, "--add", "from-a"]);
    sandbox.mile_ok(&a, &["edit", &issue, "--title", "Shared (A)"]);
    let only_a = sandbox.create(&a, "issue", "Only in A", &[]);
    sandbox.mile_ok(&b, &["comment", &issue, "--body", "from B"]);
    sandbox.mile_ok(&b, &["label", &issue, "--remove", "start"]);
    sandbox.mile_ok(&b, &["edit", &issue, "--title", "Shared (B)"]);
    let only_b = sandbox.create(&b, "issue", "Only in B", &[]);

    sandbox.mile_ok(&a, &["push"]);
    // B's history of the issue diverged: its push is refused until it pulls.
    let err = sandbox.mile_err(&b, &["push"], 1);
    assert!(err.contains("git mile pull"), "{err}");
    let pulled = sandbox.mile_json(&b, &["pull"]);
    assert_eq!(
        (pulled["merged"].as_u64(), pulled["created"].as_u64()),
        (Some(1), Some(1)),
        "{pulled}"
    );
    sandbox.mile_ok(&b, &["push"]);
    let pulled = sandbox.mile_json(&a, &["pull"]);
    assert_eq!(pulled["fast_forwarded"], 1, "{pulled}");
    assert_eq!(pulled["created"], 1, "{pulled}");

    let shown_a = sandbox.mile_json(&a, &["show", &issue]);
    let shown_b = sandbox.mile_json(&b, &["show", &issue]);
    assert_eq!(shown_a, shown_b);
    // B edited the title last.
    assert_eq!(shown_a["title"], "Shared (B)");
    assert_eq!(shown_a["labels"], json!(["from-a"]));
    assert_eq!(shown_a["comments"][0]["body"], "from B");
    for id in [&only_a, &only_b] {
        assert_eq!(
            sandbox.mile_json(&a, &["show", id]),
            sandbox.mile_json(&b, &["show", id])
        );
    }
    // The histories themselves converged: same tips in both clones.
    let tips = |repo: &Path| {
        sandbox.git(
            repo,
            &[
                "for-each-ref",
                "--format=%(refname) %(objectname)",
                "refs/git-mile",
            ],
        )
    };
    assert_eq!(tips(&a), tips(&b));
    // Pulling again changes nothing.
    let again = sandbox.mile_json(&a, &["pull"]);
    assert_eq!(again["up_to_date"], 3, "{again}");
}

#[test]
fn independent_merges_in_two_clones_write_the_same_commit() {
    let sandbox = Sandbox::new();
    let (origin, a) = support::origin_and_clone(&sandbox);
    let issue = sandbox.create(&a, "issue", "Shared", &[]);
    sandbox.mile_ok(&a, &["push"]);
    let b = sandbox.repo("b");
    sandbox.identity(&b, "Bob Example", "bob@example.com");
    sandbox.mile_ok(&b, &["pull", origin.to_str().unwrap()]);
    sandbox.mile_ok(&a, &["comment", &issue, "--body", "a"]);
    sandbox.mile_ok(&b, &["comment", &issue, "--body", "b"]);
    // Each pulls the other directly and merges on its own.
    sandbox.mile_ok(&a, &["pull", b.to_str().unwrap()]);
    sandbox.mile_ok(&b, &["pull", a.to_str().unwrap()]);
    let tip = |repo: &Path| {
        sandbox.git(
            repo,
            &["rev-parse", &format!("refs/git-mile/issue/{issue}")],
        )
    };
    assert_eq!(tip(&a), tip(&b));
    assert_eq!(
        sandbox.mile_json(&a, &["show", &issue])["comments"]
            .as_array()
            .unwrap()
            .len(),
        2
    );
}

#[test]
fn the_cache_rereads_only_what_changed() {
    let sandbox = Sandbox::new();
    let repo = sandbox.repo("repo");
    let ids: Vec<String> = (0..5)
        .map(|n| sandbox.create(&repo, "issue", &format!("Issue {n}"), &[]))
        .collect();
    let refresh = |sandbox: &Sandbox| {
        let output = sandbox.mile(&repo, &["list", "-vv"]);
        assert!(output.status.success());
        let stderr = String::from_utf8_lossy(&output.stderr).to_string();
        stderr
            .lines()
            .find(|l| l.contains("catalog refreshed"))
            .unwrap_or_default()
            .to_string()
    };
    assert!(
        refresh(&sandbox).contains("replayed: 5, reused: 0"),
        "first read replays all"
    );
    assert!(repo.join(".git/git-mile/cache-v2.json").is_file());
    assert!(
        refresh(&sandbox).contains("replayed: 0, reused: 5"),
        "then the cache serves"
    );
    sandbox.mile_ok(&repo, &["comment", &ids[2], "--body", "x"]);
    assert!(
        refresh(&sandbox).contains("replayed: 1, reused: 4"),
        "only the changed one"
    );
    // A damaged cache is rebuilt, never trusted.
    std::fs::write(repo.join(".git/git-mile/cache-v2.json"), "{ not json").unwrap();
    assert!(refresh(&sandbox).contains("replayed: 5, reused: 0"));
    let listed = sandbox.mile_json(&repo, &["list"]);
    assert_eq!(listed["items"].as_array().unwrap().len(), 5);
}

#[test]
fn a_clock_behind_another_clones_still_orders_its_changes_last() {
    use support::fixture::{self, ANN, FixtureEntity, FixtureEvent, created, fixed_id};
    let sandbox = Sandbox::new();
    let repo = sandbox.repo("repo");
    // Another machine, its clock years ahead, closed this issue.
    let id = fixed_id(0x49, 77);
    let year = 365 * 86_400;
    fixture::import(
        &repo,
        &[FixtureEntity {
            kind: "issue",
            id: id.clone(),
            events: vec![
                FixtureEvent {
                    at: 0,
                    actor: &ANN,
                    change: created("issue", "Skewed", "", &[]),
                },
                FixtureEvent {
                    at: 20 * year,
                    actor: &ANN,
                    change: json!({"type": "status_changed", "status": "closed"}),
                },
            ],
        }],
    );
    assert_eq!(sandbox.mile_json(&repo, &["show", &id])["status"], "closed");
    // Reopening here, after seeing that close, must win.
    sandbox.mile_ok(&repo, &["open", &id]);
    let shown = sandbox.mile_json(&repo, &["show", &id]);
    assert_eq!(shown["status"], "open", "{shown}");
    sandbox.mile_ok(&repo, &["label", &id, "--add", "later"]);
    assert_eq!(
        sandbox.mile_json(&repo, &["show", &id])["labels"],
        json!(["later"])
    );
}

#[test]
fn every_spelling_of_an_id_and_git_dir_from_the_environment() {
    let sandbox = Sandbox::new();
    let repo = sandbox.repo("repo");
    let id = sandbox.create(&repo, "issue", "Spelled", &[]);
    let simple = id.replace('-', "");
    for spelling in [
        id.to_uppercase(),
        format!("{{{id}}}"),
        format!("urn:uuid:{id}"),
        simple.clone(),
        id[..6].to_string(),
    ] {
        assert_eq!(
            sandbox.mile_json(&repo, &["show", &spelling])["id"],
            id,
            "{spelling}"
        );
    }
    // `git --git-dir=… mile` works from anywhere, for reads and for pulls.
    let elsewhere = sandbox.path("elsewhere");
    std::fs::create_dir_all(&elsewhere).unwrap();
    let git_dir = format!("--git-dir={}", repo.join(".git").display());
    let with_git_dir = |args: &[&str]| -> Vec<u8> {
        let out = sandbox
            .command("git", &elsewhere)
            .arg(&git_dir)
            .arg("mile")
            .args(args)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        out.stdout
    };
    let listed: Value = serde_json::from_slice(&with_git_dir(&["list", "--json"])).unwrap();
    assert_eq!(listed["items"][0]["id"], id);
    let other = sandbox.repo("other");
    let other_id = sandbox.create(&other, "issue", "From other", &[]);
    with_git_dir(&["pull", other.to_str().unwrap()]);
    assert_eq!(
        sandbox.mile_json(&repo, &["show", &other_id])["title"],
        "From other"
    );
}

#[test]
fn a_damaged_cursor_key_is_replaced_for_good() {
    let sandbox = Sandbox::new();
    let repo = sandbox.repo("repo");
    for n in 0..3 {
        sandbox.create(&repo, "issue", &format!("Issue {n}"), &[]);
    }
    let key = repo.join(".git/git-mile/cursor.key");
    std::fs::create_dir_all(key.parent().unwrap()).unwrap();
    std::fs::write(&key, "short").unwrap();
    let page = sandbox.mile_json(&repo, &["list", "--limit", "1", "--sort", "title"]);
    assert_eq!(std::fs::read(&key).unwrap().len(), 32);
    let cursor = page["nextCursor"].as_str().unwrap();
    let next = sandbox.mile_json(
        &repo,
        &[
            "list", "--limit", "1", "--sort", "title", "--cursor", cursor,
        ],
    );
    assert_eq!(next["items"][0]["title"], "Issue 1");
}

#[test]
fn damaged_or_foreign_refs_neither_stop_a_pull_nor_spread() {
    let sandbox = Sandbox::new();
    let theirs = sandbox.repo("theirs");
    let ours = sandbox.repo("ours");
    let shared = sandbox.create(&theirs, "issue", "Shared", &[]);
    sandbox.mile_ok(&ours, &["pull", theirs.to_str().unwrap()]);
    // Theirs gains a good issue, a comment, and a ref to a blob.
    let fresh = sandbox.create(&theirs, "issue", "Fresh", &[]);
    sandbox.mile_ok(&theirs, &["comment", &shared, "--body", "more"]);
    let junk = "00000000-0000-4000-8000-00000000000a";
    let blob = sandbox.git(&theirs, &["hash-object", "-w", "README.md"]);
    sandbox.git(
        &theirs,
        &[
            "update-ref",
            &format!("refs/git-mile/issue/{junk}"),
            blob.trim(),
        ],
    );

    let output = sandbox.mile(&ours, &["pull", theirs.to_str().unwrap()]);
    assert_eq!(output.status.code(), Some(1), "{output:?}");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        stdout.contains("1 new") && stdout.contains("1 fast-forwarded"),
        "{stdout}"
    );
    assert!(
        stdout.contains(&format!("not pulled: issue {junk}")),
        "{stdout}"
    );
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("1 of the remote's entities were not pulled"),
        "{stderr}"
    );
    assert_eq!(
        sandbox.mile_json(&ours, &["show", &fresh])["title"],
        "Fresh"
    );
    assert_eq!(
        sandbox.mile_json(&ours, &["show", &shared])["stats"]["comment_count"],
        1
    );
    assert_eq!(
        sandbox.git(
            &ours,
            &["for-each-ref", &format!("refs/git-mile/issue/{junk}")]
        ),
        "",
        "the junk ref spread"
    );
}

#[test]
fn a_stale_lock_and_an_event_at_the_end_of_time_fail_with_a_reason() {
    let sandbox = Sandbox::new();
    let repo = sandbox.repo("repo");
    let issue = sandbox.create(&repo, "issue", "Locked", &[]);
    let lock = repo.join(format!(".git/refs/git-mile/issue/{issue}.lock"));
    std::fs::write(&lock, "").unwrap();
    let old = std::time::SystemTime::now() - std::time::Duration::from_secs(60);
    std::fs::File::options()
        .write(true)
        .open(&lock)
        .unwrap()
        .set_modified(old)
        .unwrap();
    let err = sandbox.mile_err(&repo, &["comment", &issue, "--body", "x"], 1);
    assert!(err.contains(".lock") && err.contains("remove"), "{err}");
    std::fs::remove_file(&lock).unwrap();
    sandbox.mile_ok(&repo, &["comment", &issue, "--body", "x"]);

    // A history whose last event is timed at the latest representable instant.
    let tree = sandbox.git(&repo, &["hash-object", "-t", "tree", "-w", "/dev/null"]);
    let id = "00000000-0000-4000-8000-00000000000b";
    let message = format!(
        "git-mile: created issue/{id}\n\n{}\n",
        json!({"schema": "git-mile/1", "event": "e1", "ts": "+262142-12-31T23:59:59.999999999Z",
            "actor": {"name": "x", "email": "y"}, "type": "created", "kind": "issue", "title": "T"})
    );
    let commit = sandbox.git(&repo, &["commit-tree", tree.trim(), "-m", &message]);
    sandbox.git(
        &repo,
        &[
            "update-ref",
            &format!("refs/git-mile/issue/{id}"),
            commit.trim(),
        ],
    );
    assert_eq!(sandbox.mile_json(&repo, &["show", id])["title"], "T");
    let err = sandbox.mile_err(&repo, &["comment", id, "--body", "x"], 1);
    assert!(err.contains("nothing can be timed"), "{err}");
}

#[test]
fn repositories_git_mile_cannot_serve_are_refused_and_odd_refs_ignored() {
    let sandbox = Sandbox::new();
    for (name, flag) in [
        ("reftable", "--ref-format=reftable"),
        ("sha256", "--object-format=sha256"),
    ] {
        let repo = sandbox.path(name);
        std::fs::create_dir_all(&repo).unwrap();
        sandbox.git(&repo, &["init", "-q", flag]);
        sandbox.identity(&repo, "Ann", "ann@example.com");
        let err = sandbox.mile_err(&repo, &["create", "issue", "--title", "x"], 1);
        assert!(err.contains("unsupported repository"), "{name}: {err}");
    }

    // Push with nothing to push; a ref whose id is not as git-mile writes it is not listed.
    let bare = sandbox.path("bare.git");
    sandbox.git(
        sandbox.dir.path(),
        &["init", "-q", "--bare", bare.to_str().unwrap()],
    );
    let repo = sandbox.repo("repo");
    let out = sandbox.mile_ok(&repo, &["push", bare.to_str().unwrap()]);
    assert!(out.contains("0 new"), "{out}");
    let issue = sandbox.create(&repo, "issue", "One", &[]);
    let tip = sandbox.git(
        &repo,
        &["rev-parse", &format!("refs/git-mile/issue/{issue}")],
    );
    sandbox.git(
        &repo,
        &[
            "update-ref",
            "refs/git-mile/issue/ABCDEF12-1111-4111-8111-111111111111",
            tip.trim(),
        ],
    );
    let listed = sandbox.mile_json(&repo, &["list"]);
    assert_eq!(listed["items"].as_array().unwrap().len(), 1, "{listed}");
}
