//! REST writers of the cloud benchmark: [`WRITERS`] clients at once (each its own keep-alive
//! connection and token), each sending one write after another, as an agent does, with an
//! `Idempotency-Key` as the bridge sends with every write, for [`MEASURE`] after a [`WARM_UP`]
//! (`writes/s` counts the window's answers, as the GET throughput does):
//!
//! - **creates**: `POST /api/v1/tickets` of a generated ticket (status todo, ~0.5 KiB
//!   description, as the MCP creates); every answer must be 201 and be the ticket sent, and
//!   the tickets created must have distinct, contiguous numbers (nothing else creates
//!   meanwhile), the first and the last readable;
//! - **comments**: `POST /api/v1/tickets/{KEY-N}/comments` on a random ticket, a generated
//!   comment; every answer must be 201 and name its ticket, every comment id distinct.

use super::*;

/// REST writers at once (as many as the MCP writers).
pub const WRITERS: usize = LOAD_PROCESSES;

#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Write {
    Create,
    Comment,
}

impl Write {
    pub fn label(self) -> &'static str {
        match self {
            Write::Create => "`POST /api/v1/tickets`",
            Write::Comment => "`POST /api/v1/tickets/{KEY-N}/comments`",
        }
    }
}

pub struct Writes {
    pub write: Write,
    /// Answered in the measured window.
    pub requests: usize,
    /// Answered over the whole run (warm-up included), all checked.
    pub checked: usize,
    pub window: Duration,
    pub p50: Duration,
    pub p99: Duration,
    /// Creates: the tickets created, lowest and highest (contiguous).
    pub span: Option<(usize, usize)>,
}

impl Writes {
    pub fn per_second(&self) -> f64 {
        self.requests as f64 / self.window.as_secs_f64()
    }
}

/// `POST {url}` of `body` (JSON) with `token` and an idempotency key: the status and the body.
pub async fn post(http: &reqwest::Client, url: &str, token: &str, body: &Value) -> (u16, String) {
    let response = http
        .post(url)
        .bearer_auth(token)
        .header("idempotency-key", uuid::Uuid::new_v4().to_string())
        .header(reqwest::header::CONTENT_TYPE, "application/json")
        .body(body.to_string())
        .send()
        .await
        .unwrap_or_else(|err| panic!("POST {url}: {err}"));
    let status = response.status().as_u16();
    let text = response
        .text()
        .await
        .unwrap_or_else(|err| panic!("POST {url}: {err}"));
    (status, text)
}

/// [`WRITERS`] writers (writer `k` with `tokens[k]`) sending `write`s back to back.
pub async fn rest_writes(base: &str, tokens: &[String], write: Write, seed: u64) -> Writes {
    assert!(tokens.len() >= WRITERS, "a token per writer");
    let start = Instant::now() + WARM_UP;
    let deadline = start + MEASURE;
    let mut tasks = JoinSet::new();
    for (k, token) in tokens.iter().take(WRITERS).enumerate() {
        let http = http_client();
        let token = token.clone();
        let base = base.to_string();
        tasks.spawn(async move {
            let mut rng = Rng(seed + k as u64);
            let mut latencies = Vec::new();
            let mut created = Vec::new();
            let mut ids = Vec::new();
            loop {
                let sent = Instant::now();
                if sent >= deadline {
                    break;
                }
                let (url, body, expect) = match write {
                    Write::Create => {
                        let mut ticket = Planned::generate(&mut rng, "todo");
                        ticket.assignees = vec![];
                        let mut args = ticket.args(true);
                        args["assignees"] = json!([format!("rest-writer-{k}")]);
                        (format!("{base}/tickets"), args, ticket.title)
                    }
                    Write::Comment => {
                        let number = rng.range(1, TICKETS);
                        (
                            format!("{base}/tickets/{KEY}-{number}/comments"),
                            json!({"content": support::comment(&mut rng)}),
                            format!("{KEY}-{number}"),
                        )
                    }
                };
                let (status, answer) = post(&http, &url, &token, &body).await;
                let done = Instant::now();
                assert_eq!(status, 201, "POST {url}: {answer}");
                let value: Value = serde_json::from_str(&answer).unwrap();
                match write {
                    Write::Create => {
                        assert_eq!(value["ticket"]["title"], expect.as_str(), "{value}");
                        assert_eq!(value["ticket"]["status"], "todo", "{value}");
                        created.push(number_of(&value["ticket"]["number"]));
                    }
                    Write::Comment => {
                        assert_eq!(value["number"], expect.as_str(), "{value}");
                        assert_eq!(value["comment"]["content"], body["content"], "{value}");
                        ids.push(value["comment"]["id"].as_str().unwrap().to_string());
                    }
                }
                if sent >= start && done <= deadline {
                    latencies.push(done - sent);
                }
            }
            (latencies, created, ids)
        });
    }
    let mut latencies = Vec::new();
    let mut created = Vec::new();
    let mut ids = Vec::new();
    while let Some(done) = tasks.join_next().await {
        let (l, c, i) = done.unwrap();
        latencies.extend(l);
        created.extend(c);
        ids.extend(i);
    }
    let checked = created.len() + ids.len();
    let distinct: HashSet<String> = ids.iter().cloned().collect();
    assert_eq!(distinct.len(), ids.len(), "a comment id answered twice");
    let span = (write == Write::Create).then(|| {
        let distinct: HashSet<usize> = created.iter().copied().collect();
        assert_eq!(
            distinct.len(),
            created.len(),
            "a ticket number answered twice"
        );
        let (lo, hi) = (
            *distinct.iter().min().unwrap(),
            *distinct.iter().max().unwrap(),
        );
        assert_eq!(hi - lo + 1, distinct.len(), "the created numbers have gaps");
        (lo, hi)
    });
    if let Some((lo, hi)) = span {
        let http = http_client();
        for number in [lo, hi] {
            let url = format!("{base}/tickets/{KEY}-{number}");
            let (status, body) = get(&http, &url, &tokens[0]).await;
            assert_eq!(status, 200, "GET {url}: {body}");
        }
    }
    Writes {
        write,
        requests: latencies.len(),
        checked,
        window: MEASURE,
        p50: percentile(&latencies, 0.50),
        p99: percentile(&latencies, 0.99),
        span,
    }
}
