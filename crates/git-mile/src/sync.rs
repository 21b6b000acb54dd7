//! `git mile push` and `git mile pull`: move `refs/git-mile/*` between clones with the git
//! CLI (which knows the user's remotes, credentials and transports), and merge what arrives.

use std::process::Command;

use serde::Serialize;

use crate::replay::replay;
use crate::store::{EntityRef, GitStore, MergeOutcome, REF_PREFIX, StoreError, StoreResult};

/// Where fetched entity refs of one remote are kept, like remote-tracking branches.
const FETCH_PREFIX: &str = "refs/git-mile-remotes/";

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
    /// Entities left as they were because one side's history cannot be read or holds no
    /// git-mile entity: `<kind> <id>: <why>`. The others are pulled all the same.
    pub skipped: Vec<String>,
}

#[derive(Debug, Default, Serialize, PartialEq, Eq)]
pub struct PushReport {
    pub remote: String,
    /// Refs the remote did not have.
    pub created: usize,
    /// Refs moved forward on the remote.
    pub updated: usize,
    pub up_to_date: usize,
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

/// Fetch the remote's entity refs and merge each into the local one.
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
    // A fetched ref is a copy of the remote's that this fetch writes again; one git cannot
    // read would make it fail ("reference broken"): it goes.
    for broken in store.refs_under(&prefix)?.broken {
        let name = format!("{prefix}{}/{}", broken.kind.as_str(), broken.id);
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
            Ok(MergeOutcome::Created) => report.created += 1,
            Ok(MergeOutcome::FastForward) => report.fast_forwarded += 1,
            Ok(MergeOutcome::Merged) => report.merged += 1,
            Ok(MergeOutcome::UpToDate) => report.up_to_date += 1,
            Err(err) => {
                let kind = fetched.kind.as_str();
                tracing::warn!(kind, id = %fetched.id, %err, "not pulled");
                report.skipped.push(format!("{kind} {}: {err}", fetched.id));
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

/// Push every entity ref. A ref that diverged on the remote is refused by git: pull first.
pub fn push(store: &GitStore, remote: &str) -> StoreResult<PushReport> {
    check_remote(remote)?;
    if store.refs()?.refs.is_empty() {
        // git refuses a wildcard refspec that matches nothing; there is nothing to push.
        return Ok(PushReport {
            remote: remote.to_string(),
            ..PushReport::default()
        });
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
    let mut report = PushReport {
        remote: remote.to_string(),
        ..PushReport::default()
    };
    let mut rejected = 0usize;
    // Porcelain lines: `<flag>\t<from>:<to>\t<summary>`.
    for line in stdout.lines() {
        let Some((flag, rest)) = line.split_once('\t') else {
            continue;
        };
        if !rest.contains("refs/git-mile/") {
            continue;
        }
        match flag {
            "*" => report.created += 1,
            " " | "+" => report.updated += 1,
            "=" => report.up_to_date += 1,
            "!" => rejected += 1,
            _ => {}
        }
    }
    if rejected > 0 {
        return Err(StoreError::Git(format!(
            "the remote refused {rejected} entities whose history moved there too: run `git mile pull {remote}` to merge them, then push again"
        )));
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
}
