//! The benchmark's own GET load generator (async reqwest), for any mix of readers: [`CLIENTS`]
//! clients, each its own connection (keep-alive, `TCP_NODELAY`), each sending
//! `GET /tickets/{KEY-N}` back to back, every request's token and ticket chosen by a
//! [`Pick`] (the template's readers: client `c`'s token and a random ticket of the 100,000,
//! [`super::read_throughput`]; the skewed tenants: a random workspace's). Every answer must
//! be 200 and name the ticket asked for (and its title, when the pick knows it); one in
//! [`PARSE_EVERY`] is decoded and checked whole. Latencies are counted in a [`MEASURE`]
//! window after a [`WARM_UP`], in all and by the pick's population.

use super::*;

/// One request: the token (an index into the tokens given), the ticket number, the
/// population it is counted in, and the ticket's title if known.
pub struct Pick {
    pub token: usize,
    pub number: usize,
    pub population: usize,
    pub title: Option<String>,
}

/// What a mixed load measured: in all, and each population's latencies.
pub struct Mixed {
    pub throughput: Throughput,
    pub populations: Vec<Vec<Duration>>,
}

impl Mixed {
    /// `population`'s requests per second, p50 and p99 (`None` when it had none).
    pub fn population(&self, population: usize) -> Option<(f64, Duration, Duration)> {
        let samples = self.populations.get(population).filter(|s| !s.is_empty())?;
        Some((
            samples.len() as f64 / self.throughput.window.as_secs_f64(),
            percentile(samples, 0.50),
            percentile(samples, 0.99),
        ))
    }
}

/// `CLIENTS` clients on `bases` (client `c` on `bases[c % len]`, whose processes are
/// `servers`), each request chosen by `pick(c, rng)` with client `c`'s generator (seeded
/// `seed + c`).
pub async fn read_mixed<F>(
    bases: &[&str],
    tokens: &[String],
    seed: u64,
    servers: &[u32],
    pick: F,
) -> Mixed
where
    F: Fn(usize, &mut Rng) -> Pick + Send + Sync + 'static,
{
    let start = Instant::now() + WARM_UP;
    let deadline = start + MEASURE;
    let servers = servers.to_vec();
    let cpu = tokio::spawn(async move {
        tokio::time::sleep_until(start.into()).await;
        let first = cpu_ticks(&servers);
        tokio::time::sleep_until(deadline.into()).await;
        first?.split(cpu_ticks(&servers)?)
    });
    let pick = Arc::new(pick);
    let tokens: Arc<[String]> = tokens.into();
    let mut tasks = JoinSet::new();
    for c in 0..CLIENTS {
        // A client of its own per task: its own connection, kept alive.
        let http = http_client();
        let base = bases[c % bases.len()].to_string();
        let (pick, tokens) = (pick.clone(), tokens.clone());
        tasks.spawn(async move {
            let mut rng = Rng(seed + c as u64);
            let mut latencies: Vec<(usize, Duration)> = Vec::new();
            let (mut checked, mut parsed) = (0, 0);
            loop {
                let sent = Instant::now();
                if sent >= deadline {
                    break;
                }
                let asked = pick(c, &mut rng);
                let number = asked.number;
                let url = format!("{base}/tickets/{KEY}-{number}");
                let (status, body) = get(&http, &url, &tokens[asked.token]).await;
                let done = Instant::now();
                assert_eq!(status, 200, "GET {url}: {body}");
                let answered = || body.chars().take(300).collect::<String>();
                assert!(
                    body.contains(&format!("\"number\":\"{KEY}-{number}\"")),
                    "GET {url} answered another ticket: {}",
                    answered()
                );
                if let Some(title) = &asked.title {
                    let title = format!("\"title\":{}", serde_json::to_string(title).unwrap());
                    assert!(
                        body.contains(&title),
                        "GET {url} answered another workspace's ticket (not {title}): {}",
                        answered()
                    );
                }
                if checked % PARSE_EVERY == 0 {
                    let value: Value = serde_json::from_str(&body).unwrap();
                    assert_eq!(number_of(&value["ticket"]["number"]), number, "{url}");
                    assert!(!value["ticket"]["title"].as_str().unwrap().is_empty());
                    assert!(value["ticket"]["description"].as_str().unwrap().len() > 100);
                    parsed += 1;
                }
                checked += 1;
                if sent >= start && done <= deadline {
                    latencies.push((asked.population, done - sent));
                }
            }
            (latencies, checked, parsed)
        });
    }
    let mut latencies = Vec::new();
    let mut populations: Vec<Vec<Duration>> = Vec::new();
    let (mut checked, mut parsed) = (0, 0);
    while let Some(done) = tasks.join_next().await {
        let (l, c, p) = done.unwrap();
        for (population, latency) in l {
            if populations.len() <= population {
                populations.resize_with(population + 1, Vec::new);
            }
            populations[population].push(latency);
            latencies.push(latency);
        }
        checked += c;
        parsed += p;
    }
    assert!(
        !latencies.is_empty(),
        "no request was answered in the window"
    );
    Mixed {
        throughput: Throughput {
            requests: latencies.len(),
            window: MEASURE,
            p50: percentile(&latencies, 0.50),
            p99: percentile(&latencies, 0.99),
            parsed,
            checked,
            cpu: cpu.await.unwrap(),
        },
        populations,
    }
}
