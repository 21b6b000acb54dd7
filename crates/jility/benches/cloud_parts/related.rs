//! Related tickets' part of the cloud benchmark (`JILITY_BENCH_ONLY=related`, issue 43):
//!
//! - **Speed**, on the 100,000-ticket workspace, one request at a time on a keep-alive
//!   connection: `GET /tickets/related` for tickets about to be filed (a title and a
//!   description drawn as the workspace's own were) and for filed tickets (`ticket_id`),
//!   beside plain full-text search in the same run (before and after; the baseline is the
//!   slower p50). Target: drafts' p50 ≤ 2× search's.
//! - **Quality**, on the labelled set `tests/data/related.json` (145 tickets, 120 new
//!   tickets about to be filed: 65 reworded duplicates of one of them, 55 near misses), in
//!   both modes: cloud (a workspace of its own on the run's server, through the REST API)
//!   and local (`jility ticket create` and `jility ticket related --json` in a fresh
//!   project). Recall@3 (the duplicate among the first three; target ≥ 0.9), and the
//!   duplicate flag's precision (flags that name the duplicate, over all flags) and recall
//!   (duplicates flagged), and how many near misses were flagged.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

use super::*;

use writes::post;

/// The target: a draft's related tickets against plain search (p50).
const RELATED_TARGET: f64 = 2.0;
/// The target: recall@3 on the labelled set.
const RECALL_TARGET: f64 = 0.9;

/// The labelled set, as the tests keep it.
fn labelled() -> Value {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/related.json");
    serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap()
}

/// Drafts as the workspace's tickets are written (a seed of their own).
fn drafts(n: usize) -> Vec<(String, String)> {
    let mut rng = Rng(0x5e1a_7ed0);
    (0..n)
        .map(|_| {
            let p = Planned::generate(&mut rng, "todo");
            (p.title, p.description)
        })
        .collect()
}

/// What one mode answered for each probe: its id and the labelled ids of the related
/// tickets, in order, with their duplicate flags.
type Answers = Vec<(String, Vec<(String, bool)>)>;

/// Recall@3, the flag's precision and recall, and the near misses flagged.
fn score(set: &Value, answers: &Answers) -> (f64, f64, f64, usize, usize) {
    let (mut dups, mut top3, mut flagged_dups, mut right, mut flags, mut near) = (0, 0, 0, 0, 0, 0);
    let mut near_misses = 0;
    for (probe, (id, related)) in set["probes"].as_array().unwrap().iter().zip(answers) {
        assert_eq!(probe["id"].as_str().unwrap(), id);
        let flagged: Vec<&str> = related
            .iter()
            .filter(|(_, d)| *d)
            .map(|(t, _)| t.as_str())
            .collect();
        flags += flagged.len();
        match probe["duplicate_of"].as_str() {
            Some(dup) => {
                dups += 1;
                if related.iter().take(3).any(|(t, _)| t == dup) {
                    top3 += 1;
                }
                if flagged.contains(&dup) {
                    flagged_dups += 1;
                    right += 1;
                }
            }
            None => {
                near_misses += 1;
                if flagged.contains(&probe["near_miss_of"].as_str().unwrap()) {
                    near += 1;
                }
            }
        }
    }
    (
        top3 as f64 / dups as f64,
        right as f64 / flags.max(1) as f64,
        flagged_dups as f64 / dups as f64,
        near,
        near_misses,
    )
}

fn related_of(answer: &Value, labels: &BTreeMap<String, String>) -> Vec<(String, bool)> {
    answer["related"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| {
            let number = t["number"].as_str().unwrap();
            (
                labels.get(number).cloned().unwrap_or_default(),
                t["duplicate"].as_bool().unwrap(),
            )
        })
        .collect()
}

/// The labelled set through the cloud: a workspace of its own, the tickets made one by one.
async fn cloud_answers(set: &Value, server: &Server, bin: &Path, db_url: &str) -> Answers {
    let token = create_workspace_named(bin, db_url, "labelled");
    let http = http_client();
    let mut labels = BTreeMap::new();
    for t in set["tickets"].as_array().unwrap() {
        let (status, text) = post(
            &http,
            &format!("{}/tickets", server.url),
            &token,
            &json!({
                "title": t["title"], "description": t["description"], "status": t["status"],
                "story_points": t["story_points"], "labels": t["labels"],
            }),
        )
        .await;
        assert_eq!(status, 201, "{text}");
        let made: Value = serde_json::from_str(&text).unwrap();
        labels.insert(
            made["ticket"]["number"].as_str().unwrap().to_string(),
            t["id"].as_str().unwrap().to_string(),
        );
    }
    let mut answers = Vec::new();
    for p in set["probes"].as_array().unwrap() {
        let mut path = format!(
            "/tickets/related?limit=20&title={}",
            urlencode(p["title"].as_str().unwrap())
        );
        let description = p["description"].as_str().unwrap();
        if !description.is_empty() {
            path.push_str(&format!("&description={}", urlencode(description)));
        }
        let (status, body) = get(&http, &format!("{}{path}", server.url), &token).await;
        assert_eq!(status, 200, "{body}");
        let answer: Value = serde_json::from_str(&body).unwrap();
        answers.push((
            p["id"].as_str().unwrap().to_string(),
            related_of(&answer, &labels),
        ));
    }
    answers
}

/// The labelled set in local mode: a fresh project, the CLI.
fn local_answers(set: &Value, bin: &Path) -> Answers {
    let dir = tempfile::tempdir().unwrap();
    let run = |args: &[&str]| -> Value {
        let out = Command::new(bin)
            .args(args)
            .arg("--json")
            .current_dir(dir.path())
            .env("JILITY_ACTOR", "bench")
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        serde_json::from_slice(&out.stdout).unwrap()
    };
    run(&["init", "--key", KEY]);
    let mut labels = BTreeMap::new();
    for t in set["tickets"].as_array().unwrap() {
        let mut args = vec![
            "ticket",
            "create",
            "--title",
            t["title"].as_str().unwrap(),
            "--description",
            t["description"].as_str().unwrap(),
            "--status",
            t["status"].as_str().unwrap(),
        ];
        let points = t["story_points"].as_u64().map(|p| p.to_string());
        if let Some(p) = &points {
            args.extend(["--points", p.as_str()]);
        }
        let made = run(&args);
        labels.insert(
            made["ticket"]["number"].as_str().unwrap().to_string(),
            t["id"].as_str().unwrap().to_string(),
        );
    }
    let mut answers = Vec::new();
    for p in set["probes"].as_array().unwrap() {
        let mut args = vec![
            "ticket",
            "related",
            "--limit",
            "20",
            "--title",
            p["title"].as_str().unwrap(),
        ];
        let description = p["description"].as_str().unwrap();
        if !description.is_empty() {
            args.extend(["--description", description]);
        }
        let answer = run(&args);
        answers.push((
            p["id"].as_str().unwrap().to_string(),
            related_of(&answer, &labels),
        ));
    }
    answers
}

pub(super) async fn related_only(
    server: &Server,
    tokens: &[String],
    bin: &Path,
    db_url: &str,
) -> Vec<String> {
    let base = server.url.as_str();
    let http = http_client();
    let queries = queries();
    let drafts = drafts(WARMUP + ITERS_SEARCH);
    let plain = |label: &'static str| {
        let (http, queries) = (&http, &queries);
        async move {
            let s = sequential(
                http,
                base,
                &tokens[0],
                ITERS_SEARCH,
                |i| format!("/search?q={}", urlencode(&queries[i])),
                |_, v| assert!(v["hits"].is_array(), "{v}"),
            )
            .await;
            eprintln!("related: plain search ({label}) p50 {}", ms(s.p50));
            s
        }
    };
    let before = plain("before").await;
    let listed = std::sync::atomic::AtomicUsize::new(0);
    let by_draft = sequential(
        &http,
        base,
        &tokens[0],
        ITERS_SEARCH,
        |i| {
            let (title, description) = &drafts[i];
            format!(
                "/tickets/related?title={}&description={}",
                urlencode(title),
                urlencode(description)
            )
        },
        |_, v| {
            listed.fetch_add(
                v["related"].as_array().unwrap().len(),
                std::sync::atomic::Ordering::Relaxed,
            );
        },
    )
    .await;
    eprintln!("related: drafts p50 {}", ms(by_draft.p50));
    let numbers = distinct_numbers(0x5e1a_7ed1, WARMUP + ITERS_SEARCH);
    let by_ticket = sequential(
        &http,
        base,
        &tokens[0],
        ITERS_SEARCH,
        |i| format!("/tickets/related?ticket_id={KEY}-{}", numbers[i]),
        |_, v| assert!(v["related"].is_array(), "{v}"),
    )
    .await;
    eprintln!("related: filed tickets p50 {}", ms(by_ticket.p50));
    let estimates = sequential(
        &http,
        base,
        &tokens[0],
        ITERS_SEARCH,
        |i| format!("/tickets/estimate?ticket_id={KEY}-{}", numbers[i]),
        |_, v| assert!(v["confidence"].is_string(), "{v}"),
    )
    .await;
    eprintln!("related: estimates p50 {}", ms(estimates.p50));
    let after = plain("after").await;

    let set = labelled();
    let cloud = cloud_answers(&set, server, bin, db_url).await;
    let local = local_answers(&set, bin);

    let baseline = before.p50.max(after.p50);
    let ratio = |d: Duration| d.as_secs_f64() / baseline.as_secs_f64();
    let verdict = |met: bool| if met { "met" } else { "NOT met" };
    let r = ratio(by_draft.p50);
    let mut lines = vec![
        format!(
            "plain search p50 {} and {} (before and after; baseline the slower)",
            ms(before.p50),
            ms(after.p50)
        ),
        format!(
            "`jility_suggest_related` of a draft (title and description), 100,000 tickets: p50 {} = {r:.2}× plain search (target ≤ {RELATED_TARGET}×: {}); {:.1} related tickets an answer",
            ms(by_draft.p50),
            verdict(r <= RELATED_TARGET),
            listed.load(std::sync::atomic::Ordering::Relaxed) as f64
                / (WARMUP + ITERS_SEARCH) as f64
        ),
        format!(
            "of a filed ticket (`ticket_id`): p50 {} = {:.2}×; `jility_estimate_effort` of a filed ticket: p50 {} = {:.2}×",
            ms(by_ticket.p50),
            ratio(by_ticket.p50),
            ms(estimates.p50),
            ratio(estimates.p50)
        ),
    ];
    for (mode, answers) in [("cloud", &cloud), ("local", &local)] {
        let (recall3, precision, recall, near, near_misses) = score(&set, answers);
        lines.push(format!(
            "labelled set, {mode}: recall@3 {recall3:.3} (target ≥ {RECALL_TARGET}: {}); duplicate flag precision {precision:.3}, recall {recall:.3}; near misses flagged {near} of {near_misses}",
            verdict(recall3 >= RECALL_TARGET)
        ));
    }
    lines
}
