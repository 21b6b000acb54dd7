//! The bulk edits' part of the cloud benchmark (`JILITY_BENCH_ONLY=bulk`, issue 43): on the
//! 100,000-ticket workspace, `jility_bulk_update` of 1,000 and of 5,000 named tickets (two
//! labels' worth of changes each: a label and an assignee added, so every ticket changes),
//! three rounds each, in both modes:
//! - cloud: `POST /api/v1/tickets/bulk` to `jility serve` (the run's copy of the template);
//! - local: `jility ticket bulk` on a copy of the local 100,000-ticket database (the whole
//!   process: start, open, the edit, the answer).
//!
//! Targets: ≤ 1 s for 1,000 tickets and ≤ 5 s for 5,000, in both modes. The request's
//! wall time is measured; each answer is checked (every ticket changed).

use std::path::Path;
use std::process::Command;

use super::*;

use writes::post;

/// Rounds of each size.
const ROUNDS: usize = 3;

/// A label and an assignee no ticket has yet: every ticket of the round changes.
fn tag(size: usize, round: usize) -> String {
    format!("bulk-{size}-{round}")
}

fn body(numbers: &[usize], tag: &str) -> Value {
    json!({
        "tickets": numbers.iter().map(|n| format!("{KEY}-{n}")).collect::<Vec<_>>(),
        "set": {"add_labels": [tag], "add_assignees": [format!("agent-{tag}")]},
        "message": "bench",
    })
}

pub(super) async fn bulk_only(
    server: &Server,
    tokens: &[String],
    bin: &Path,
    local: &Path,
) -> Vec<String> {
    let http = http_client();
    let url = format!("{}/tickets/bulk", server.url);
    let mut lines = Vec::new();
    for (size, target) in [(1_000usize, 1.0f64), (5_000, 5.0)] {
        let mut cloud = Vec::new();
        let mut local_times = Vec::new();
        for round in 0..ROUNDS {
            let numbers = distinct_numbers(0xB01C_0000 + (size + round) as u64, size);
            let t = Instant::now();
            let tag = tag(size, round);
            let (status, text) = post(&http, &url, &tokens[0], &body(&numbers, &tag)).await;
            let took = t.elapsed();
            assert_eq!(status, 200, "{text}");
            let answer: Value = serde_json::from_str(&text).unwrap();
            assert_eq!(
                answer["changed"].as_u64(),
                Some(size as u64),
                "{}",
                answer["changed"]
            );
            eprintln!("bulk: cloud, {size} tickets: {}", ms(took));
            cloud.push(took);

            let mut args = vec![
                "--json".to_string(),
                "ticket".into(),
                "bulk".into(),
                "--add-label".into(),
                tag.clone(),
                "--add-assignee".into(),
                format!("agent-{tag}"),
            ];
            args.extend(numbers.iter().map(|n| format!("{KEY}-{n}")));
            let t = Instant::now();
            let out = Command::new(bin)
                .args(&args)
                .current_dir(local)
                .env("JILITY_ACTOR", "bench")
                .output()
                .unwrap();
            let took = t.elapsed();
            assert!(
                out.status.success(),
                "{}",
                String::from_utf8_lossy(&out.stderr)
            );
            let answer: Value = serde_json::from_slice(&out.stdout).unwrap();
            assert_eq!(answer["changed"].as_u64(), Some(size as u64));
            eprintln!("bulk: local, {size} tickets: {}", ms(took));
            local_times.push(took);
        }
        for (mode, times) in [("cloud (REST)", &cloud), ("local (CLI)", &local_times)] {
            let mut sorted = times.clone();
            sorted.sort();
            let median = sorted[sorted.len() / 2];
            let met = if median.as_secs_f64() <= target {
                "met"
            } else {
                "NOT met"
            };
            lines.push(format!(
                "`jility_bulk_update` of {size} tickets, {mode}: median of {ROUNDS} {} (runs {}; target ≤ {target} s: {met})",
                ms(median),
                times.iter().map(|d| ms(*d)).collect::<Vec<_>>().join(", ")
            ));
        }
    }
    lines
}
