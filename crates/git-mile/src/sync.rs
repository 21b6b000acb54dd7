//! `git mile push` and `git mile pull`: move `refs/git-mile/*` between clones with the git
//! CLI (which knows the user's remotes, credentials and transports), and merge what arrives.
//!
//! Upstream git-mile's tasks (`refs/git-mile/tasks/<id>`) travel with the issues and
//! milestones, and are merged as upstream's own `git-mile pull` merges them
//! ([`GitStore::merge_task`]): a clone of either tool reads the result as the other does.

use std::collections::{HashSet, VecDeque};
use std::process::Command;

use gix::ObjectId;
use serde::Serialize;

use crate::replay::replay;
use crate::store::{EntityRef, GitStore, MergeOutcome, REF_PREFIX, StoreError, StoreResult};
use crate::task::event::{Decoded, decode};

/// Where fetched entity refs of one remote are kept, like remote-tracking branches.
const FETCH_PREFIX: &str = "refs/git-mile-remotes/";
/// Where upstream git-mile's task refs are, under `refs/git-mile/`.
const TASKS: &str = "refs/git-mile/tasks/";

/// What a pull did. The counts are of every ref pulled: issues, milestones and upstream
/// git-mile's tasks; `tasks` says how many of each were tasks.
#[derive(Debug, Default, Serialize, PartialEq, Eq)]
pub struct PullReport {
    pub remote: String,
    /// Entities new to this clone.
    pub created: usize,
    /// Entities that only moved forward.
    pub fast_forwarded: usize,
    /// Entities whose histories diverged and were merged.
    pub merged: usize,
    pub up_to_date: usize,
    /// The tasks among the counts above.
    pub tasks: PulledTasks,
    /// Entities left as they were because one side's history cannot be read or holds no
    /// git-mile entity: `<kind> <id>: <why>`. The others are pulled all the same.
    pub skipped: Vec<String>,
}

/// The tasks among a pull's counts.
#[derive(Debug, Default, Serialize, PartialEq, Eq)]
pub struct PulledTasks {
    pub created: usize,
    pub fast_forwarded: usize,
    pub merged: usize,
    pub up_to_date: usize,
}

/// What a push did. The counts are of every ref under `refs/git-mile/` pushed, tasks
/// included; `tasks` says how many of each were tasks.
#[derive(Debug, Default, Serialize, PartialEq, Eq)]
pub struct PushReport {
    pub remote: String,
    /// Refs the remote did not have.
    pub created: usize,
    /// Refs moved forward on the remote.
    pub updated: usize,
    pub up_to_date: usize,
    /// The tasks among the counts above.
    pub tasks: PushedTasks,
}

/// The tasks among a push's counts.
#[derive(Debug, Default, Serialize, PartialEq, Eq)]
pub struct PushedTasks {
    pub created: usize,
    pub updated: usize,
    pub up_to_date: usize,
}

impl PullReport {
    fn count(&mut self, outcome: MergeOutcome, task: bool) {
        let (all, tasks) = match outcome {
            MergeOutcome::Created => (&mut self.created, &mut self.tasks.created),
            MergeOutcome::FastForward => (&mut self.fast_forwarded, &mut self.tasks.fast_forwarded),
            MergeOutcome::Merged => (&mut self.merged, &mut self.tasks.merged),
            MergeOutcome::UpToDate => (&mut self.up_to_date, &mut self.tasks.up_to_date),
        };
        *all += 1;
        if task {
            *tasks += 1;
        }
    }

    /// The report as the CLI prints it: the counts, the tasks among them when there were
    /// any, and each ref not pulled.
    pub fn text(&self) -> String {
        let mut text = format!(
            "pulled from {}: {} new, {} fast-forwarded, {} merged, {} up to date",
            self.remote, self.created, self.fast_forwarded, self.merged, self.up_to_date
        );
        let t = &self.tasks;
        if t.created + t.fast_forwarded + t.merged + t.up_to_date > 0 {
            text.push_str(&format!(
                " (tasks among them: {} new, {} fast-forwarded, {} merged, {} up to date)",
                t.created, t.fast_forwarded, t.merged, t.up_to_date
            ));
        }
        for skipped in &self.skipped {
            text.push_str(&format!("\nnot pulled: {skipped}"));
        }
        text
    }
}

impl PushReport {
    /// The report as the CLI prints it: the counts, and the tasks among them when there were
    /// any.
    pub fn text(&self) -> String {
        let mut text = format!(
            "pushed to {}: {} new, {} updated, {} up to date",
            self.remote, self.created, self.updated, self.up_to_date
        );
        let t = &self.tasks;
        if t.created + t.updated + t.up_to_date > 0 {
            text.push_str(&format!(
                " (tasks among them: {} new, {} updated, {} up to date)",
                t.created, t.updated, t.up_to_date
            ));
        }
        text
    }
}

/// A remote is a configured name, a URL or a path; never something git would read as an
/// option.
fn check_remote(remote: &str) -> StoreResult<()> {
    if remote.is_empty() || remote.starts_with('-') || remote.contains('\0') {
        return Err(StoreError::Git(format!("invalid remote `{remote}`")));
    }
    Ok(())
}

/// The namespace of a remote's fetched refs: its name when it is a plain name, else a
/// digest of the URL or path.
fn namespace(remote: &str) -> String {
    let plain = remote
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
        && !remote.starts_with('.');
    if plain {
        remote.to_string()
    } else {
        format!("url-{}", &blake3::hash(remote.as_bytes()).to_hex()[..16])
    }
}

/// `git` aimed at this repository whatever the environment says: an inherited `GIT_DIR`
/// (set when git runs `git-mile`) must not send it elsewhere.
fn git_command(store: &GitStore) -> Command {
    let mut command = Command::new("git");
    command
        .arg(format!("--git-dir={}", store.git_dir().display()))
        .env_remove("GIT_DIR")
        .env_remove("GIT_WORK_TREE")
        .env_remove("GIT_COMMON_DIR")
        .env_remove("GIT_INDEX_FILE")
        .env_remove("GIT_NAMESPACE");
    command
}

fn run_git(store: &GitStore, args: &[&str]) -> StoreResult<String> {
    let output = git_command(store)
        .args(args)
        .output()
        .map_err(|e| StoreError::Git(format!("could not run git: {e}")))?;
    if output.status.success() {
        Ok(String::from_utf8_lossy(&output.stdout).into_owned())
    } else {
        let stderr = String::from_utf8_lossy(&output.stderr);
        // The command's name, after the options (`-c key=value`) before it.
        let mut words = args.iter().copied();
        let mut command = "";
        while let Some(word) = words.next() {
            if word == "-c" {
                words.next();
            } else {
                command = word;
                break;
            }
        }
        Err(StoreError::Git(format!(
            "git {command} failed: {}",
            stderr.trim()
        )))
    }
}

/// Fetch the remote's entity and task refs and merge each into the local one.
pub fn pull(store: &GitStore, remote: &str) -> StoreResult<PullReport> {
    check_remote(remote)?;
    let prefix = format!("{FETCH_PREFIX}{}/", namespace(remote));
    let refspec = format!("+refs/git-mile/*:{prefix}*");
    // git fetch dies on a local ref file it cannot decode ("bad object", in its connectivity
    // check) although it only warns elsewhere: such refs of ours are hidden from it, so the
    // other entities are pulled all the same (the damaged one is reported below).
    let mut hidden = Vec::new();
    for broken in store.refs()?.broken {
        hidden.push(format!(
            "fetch.hideRefs={REF_PREFIX}{}/{}",
            broken.kind.as_str(),
            broken.id
        ));
    }
    for (id, _) in store.task_refs_under(REF_PREFIX)?.1 {
        hidden.push(format!("fetch.hideRefs={TASKS}{id}"));
    }
    // A fetched ref is a copy of the remote's that this fetch writes again; one git cannot
    // read would make it fail ("reference broken"): it goes.
    let mut stale: Vec<String> = store
        .refs_under(&prefix)?
        .broken
        .into_iter()
        .map(|b| format!("{prefix}{}/{}", b.kind.as_str(), b.id))
        .collect();
    stale.extend(
        store
            .task_refs_under(&prefix)?
            .1
            .into_iter()
            .map(|(id, _)| format!("{prefix}tasks/{id}")),
    );
    for name in stale {
        if let Err(err) = std::fs::remove_file(store.git_dir().join(&name)) {
            tracing::warn!(%name, %err, "could not remove a fetched ref git cannot read");
        }
    }
    let mut args: Vec<&str> = Vec::new();
    for hide in &hidden {
        args.extend(["-c", hide.as_str()]);
    }
    args.extend([
        "fetch",
        "--quiet",
        "--no-tags",
        "--no-write-fetch-head",
        remote,
        &refspec,
    ]);
    run_git(store, &args)?;
    let mut report = PullReport {
        remote: remote.to_string(),
        ..PullReport::default()
    };
    let fetched_refs = store.refs_under(&prefix)?;
    for broken in &fetched_refs.broken {
        let kind = broken.kind.as_str();
        tracing::warn!(kind, id = %broken.id, why = %broken.why, "not pulled");
        report.skipped.push(format!(
            "{kind} {}: the fetched ref cannot be read ({})",
            broken.id, broken.why
        ));
    }
    for fetched in &fetched_refs.refs {
        match pull_one(store, fetched) {
            Ok(outcome) => report.count(outcome, false),
            Err(err) => {
                let kind = fetched.kind.as_str();
                tracing::warn!(kind, id = %fetched.id, %err, "not pulled");
                report.skipped.push(format!("{kind} {}: {err}", fetched.id));
            }
        }
    }
    let (tasks, broken_tasks) = store.task_refs_under(&prefix)?;
    for (id, why) in &broken_tasks {
        tracing::warn!(kind = "task", %id, %why, "not pulled");
        report
            .skipped
            .push(format!("task {id}: the fetched ref cannot be read ({why})"));
    }
    for (id, tip) in &tasks {
        match pull_task(store, id, *tip) {
            Ok(outcome) => report.count(outcome, true),
            Err(err) => {
                tracing::warn!(kind = "task", %id, %err, "not pulled");
                report.skipped.push(format!("task {id}: {err}"));
            }
        }
    }
    Ok(report)
}

/// Merge one fetched ref, once its history is known to hold an entity: a damaged or foreign
/// ref of the remote must not spread into this clone.
fn pull_one(store: &GitStore, fetched: &EntityRef) -> StoreResult<MergeOutcome> {
    if store.tip(fetched.kind, &fetched.id)? != Some(fetched.tip) {
        let events = store.events(fetched.tip)?;
        if replay(fetched.kind, &fetched.id, events).is_none() {
            return Err(StoreError::Git(
                "its history holds no creation event".to_string(),
            ));
        }
    }
    store.merge(fetched.kind, &fetched.id, fetched.tip)
}

/// Merge one fetched task ref as upstream's pull does, once its history is known to hold an
/// event about the task: a foreign ref of the remote must not spread into this clone. An
/// event this version cannot decode (a later upstream's) counts as one, and is kept: the
/// history is upstream's to read.
fn pull_task(store: &GitStore, id: &str, theirs: ObjectId) -> StoreResult<MergeOutcome> {
    if store.task_tip(id)? != Some(theirs) && !holds_task(store, id, theirs)? {
        return Err(StoreError::Git(
            "its history holds no git-mile-event about this task".to_string(),
        ));
    }
    store.merge_task(id, theirs)
}

/// Whether a commit reachable from `tip` is an event of upstream git-mile about task `id`, or
/// an event this version cannot decode.
fn holds_task(store: &GitStore, id: &str, tip: ObjectId) -> StoreResult<bool> {
    let repo = store.repository();
    let mut seen = HashSet::from([tip]);
    let mut queue = VecDeque::from([tip]);
    while let Some(oid) = queue.pop_front() {
        let commit = repo
            .find_commit(oid)
            .map_err(|e| StoreError::Git(format!("commit {oid}: {e}")))?;
        match decode(commit.message_raw_sloppy()) {
            Decoded::Event(event) if event.task.hyphenated().to_string() == id => return Ok(true),
            Decoded::Bad(_) => return Ok(true),
            Decoded::Event(_) | Decoded::NotAnEvent => {}
        }
        for parent in commit.parent_ids() {
            let parent = parent.detach();
            if seen.insert(parent) {
                queue.push_back(parent);
            }
        }
    }
    Ok(false)
}

/// `count` `what`s, in words.
fn plural(count: usize, what: &str) -> String {
    if count == 1 {
        format!("1 {what}")
    } else {
        format!("{count} {what}s")
    }
}

/// Whether the repository holds any ref under `refs/git-mile/` (readable or not).
fn has_refs(store: &GitStore) -> StoreResult<bool> {
    let repo = store.repository();
    let platform = repo
        .references()
        .map_err(|e| StoreError::Git(e.to_string()))?;
    let mut refs = platform
        .prefixed(REF_PREFIX.as_bytes())
        .map_err(|e| StoreError::Git(e.to_string()))?;
    Ok(refs.next().is_some())
}

/// Push every ref under `refs/git-mile/`: issues, milestones, upstream git-mile's tasks. A
/// ref whose history moved on the remote meanwhile (another clone pushed to it) is refused by
/// git, as a push of upstream's is: nothing of it is lost (the local ref stays where it was,
/// the remote's too); pull, which merges both, then push again.
pub fn push(store: &GitStore, remote: &str) -> StoreResult<PushReport> {
    check_remote(remote)?;
    let mut report = PushReport {
        remote: remote.to_string(),
        ..PushReport::default()
    };
    if !has_refs(store)? {
        // git refuses a wildcard refspec that matches nothing; there is nothing to push.
        return Ok(report);
    }
    let result = git_command(store)
        .args([
            "push",
            "--porcelain",
            remote,
            "refs/git-mile/*:refs/git-mile/*",
        ])
        .output()
        .map_err(|e| StoreError::Git(format!("could not run git: {e}")))?;
    let stdout = String::from_utf8_lossy(&result.stdout);
    // Refs the remote refused because their history moved there; refs refused otherwise,
    // with git's reason.
    let mut moved: Vec<String> = Vec::new();
    let mut refused: Vec<String> = Vec::new();
    // Porcelain lines: `<flag>\t<from>:<to>\t<summary>`.
    for line in stdout.lines() {
        let mut fields = line.split('\t');
        let (Some(flag), Some(refs)) = (fields.next(), fields.next()) else {
            continue;
        };
        let summary = fields.next().unwrap_or_default();
        let to = refs.split_once(':').map_or(refs, |(_, to)| to);
        let Some(entity) = to.strip_prefix(REF_PREFIX) else {
            continue;
        };
        let task = to.starts_with(TASKS);
        let (all, tasks) = match flag {
            "*" => (&mut report.created, &mut report.tasks.created),
            " " | "+" => (&mut report.updated, &mut report.tasks.updated),
            "=" => (&mut report.up_to_date, &mut report.tasks.up_to_date),
            "!" => {
                let name = match entity.strip_prefix("tasks/") {
                    Some(id) => format!("task {id}"),
                    None => entity.replacen('/', " ", 1),
                };
                let name = crate::quote::excerpt(&name);
                // git's words for a ref that moved on the remote since it was last fetched.
                if ["non-fast-forward", "fetch first", "stale info"]
                    .iter()
                    .any(|why| summary.contains(why))
                {
                    moved.push(name);
                } else {
                    refused.push(format!("{name} {}", crate::quote::excerpt(summary.trim())));
                }
                continue;
            }
            _ => continue,
        };
        *all += 1;
        if task {
            *tasks += 1;
        }
    }
    if !moved.is_empty() || !refused.is_empty() {
        let mut message = String::new();
        if !moved.is_empty() {
            message.push_str(&format!(
                "the remote refused {} whose history moved there since this clone last pulled \
                 ({}); nothing is lost: {} as {} here and there; run `git mile pull {remote}` to \
                 merge, then push again. ",
                plural(moved.len(), "ref"),
                crate::quote::some_of(&moved),
                if moved.len() == 1 {
                    "it stays"
                } else {
                    "they stay"
                },
                if moved.len() == 1 {
                    "it is"
                } else {
                    "they are"
                },
            ));
        }
        if !refused.is_empty() {
            message.push_str(&format!(
                "the remote refused {}: {}. ",
                plural(refused.len(), "ref"),
                crate::quote::some_of(&refused)
            ));
        }
        message.push_str(&format!("The others: {}", report.text()));
        return Err(StoreError::Git(message));
    }
    if !result.status.success() {
        let stderr = String::from_utf8_lossy(&result.stderr);
        return Err(StoreError::Git(format!(
            "git push failed: {}",
            stderr.trim()
        )));
    }
    Ok(report)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn namespaces_and_remote_checks() {
        assert_eq!(namespace("origin"), "origin");
        assert!(namespace("../other").starts_with("url-"));
        assert!(namespace("https://example.com/r.git").starts_with("url-"));
        assert_ne!(namespace("../a"), namespace("../b"));
        assert!(check_remote("--upload-pack=evil").is_err());
        assert!(check_remote("").is_err());
        assert!(check_remote("origin").is_ok());
    }

    #[test]
    fn reports_name_the_tasks_among_their_counts_when_there_are_any() {
        let mut pull = PullReport {
            remote: "origin".into(),
            ..PullReport::default()
        };
        pull.count(MergeOutcome::Created, false);
        assert_eq!(
            pull.text(),
            "pulled from origin: 1 new, 0 fast-forwarded, 0 merged, 0 up to date"
        );
        pull.count(MergeOutcome::Merged, true);
        pull.count(MergeOutcome::UpToDate, true);
        pull.skipped.push("task x: why".into());
        assert_eq!(
            pull.text(),
            "pulled from origin: 1 new, 0 fast-forwarded, 1 merged, 1 up to date (tasks among \
             them: 0 new, 0 fast-forwarded, 1 merged, 1 up to date)\nnot pulled: task x: why"
        );
        let push = PushReport {
            remote: "origin".into(),
            created: 3,
            tasks: PushedTasks {
                created: 2,
                ..PushedTasks::default()
            },
            ..PushReport::default()
        };
        assert_eq!(
            push.text(),
            "pushed to origin: 3 new, 0 updated, 0 up to date (tasks among them: 2 new, 0 \
             updated, 0 up to date)"
        );
    }
}
