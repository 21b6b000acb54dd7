//! Repositories with git-mile entities written through git itself (`git fast-import`), in
//! the on-disk event format, with fixed ids and times: the same input always gives the same
//! repository. Used by the integration tests and the benchmark.

#![allow(dead_code, clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};

use serde_json::{Value, json};

pub struct Actor {
    pub name: &'static str,
    pub email: &'static str,
}

pub const ANN: Actor = Actor {
    name: "Ann Example",
    email: "ann@example.com",
};
pub const BOB: Actor = Actor {
    name: "Bob Example",
    email: "bob@example.com",
};

/// One event of a fixture entity: seconds after the epoch base, who, and the change JSON
/// (the event's `type` and fields).
pub struct FixtureEvent {
    pub at: i64,
    pub actor: &'static Actor,
    pub change: Value,
}

pub struct FixtureEntity {
    pub kind: &'static str,
    pub id: String,
    pub events: Vec<FixtureEvent>,
}

/// 2026-01-01T00:00:00Z.
pub const BASE: i64 = 1_767_225_600;

pub fn rfc3339(at: i64) -> String {
    chrono::DateTime::from_timestamp(BASE + at, 0)
        .map(|t| t.to_rfc3339_opts(chrono::SecondsFormat::Secs, true))
        .unwrap_or_default()
}

/// A deterministic UUID-shaped id from a number and a kind tag.
pub fn fixed_id(tag: u8, n: u64) -> String {
    format!("{tag:02x}000000-0000-4000-8000-{n:012x}")
}

pub fn created(kind: &str, title: &str, description: &str, labels: &[&str]) -> Value {
    json!({"type": "created", "kind": kind, "title": title, "description": description, "labels": labels})
}

/// Write the fast-import stream for `entities` to `out`.
pub fn stream(entities: &[FixtureEntity], out: &mut impl Write) -> std::io::Result<()> {
    let mut n = 0u64;
    for entity in entities {
        for event in &entity.events {
            n += 1;
            let mut body = json!({
                "schema": "git-mile/1",
                "event": format!("00000000-0000-4000-a000-{n:012x}"),
                "ts": rfc3339(event.at),
                "actor": {"name": event.actor.name, "email": event.actor.email},
            });
            if let (Some(body), Some(change)) = (body.as_object_mut(), event.change.as_object()) {
                for (k, v) in change {
                    body.insert(k.clone(), v.clone());
                }
            }
            let kind_type = event.change["type"].as_str().unwrap_or("event");
            let message = format!(
                "git-mile: {kind_type} {}/{}\n\n{}\n",
                entity.kind,
                entity.id,
                serde_json::to_string(&body).unwrap_or_default()
            );
            let who = format!(
                "{} <{}> {} +0000",
                event.actor.name,
                event.actor.email,
                BASE + event.at
            );
            write!(
                out,
                "commit refs/git-mile/{}/{}\nauthor {who}\ncommitter {who}\ndata {}\n{}\n",
                entity.kind,
                entity.id,
                message.len(),
                message
            )?;
        }
    }
    writeln!(out, "done")
}

/// Import `entities` into the repository at `repo` with `git fast-import`.
pub fn import(repo: &Path, entities: &[FixtureEntity]) {
    import_stream(repo, |out| stream(entities, out));
}

/// Run `git fast-import` in `repo` on the stream `write` writes (ending with `done`).
pub fn import_stream(
    repo: &Path,
    write: impl FnOnce(&mut std::io::BufWriter<&mut std::process::ChildStdin>) -> std::io::Result<()>,
) {
    let mut child = Command::new("git")
        .args(["fast-import", "--quiet", "--done"])
        .current_dir(repo)
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .spawn()
        .expect("git fast-import starts");
    {
        let stdin = child.stdin.as_mut().expect("stdin");
        let mut buf = std::io::BufWriter::new(stdin);
        write(&mut buf).expect("write fast-import stream");
        buf.flush().expect("flush");
    }
    let status = child.wait().expect("git fast-import runs");
    assert!(status.success(), "git fast-import failed");
}
