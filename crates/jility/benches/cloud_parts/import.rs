//! What the fresh-import and skewed-tenant cases share (`cloud_parts/fresh.rs`,
//! `cloud_parts/skew.rs`): a workspace's tickets imported through
//! `POST /api/v1/tickets/batch` (at most [`BATCH`] a request, the API's limit), scratch
//! databases dropped at the end, autovacuum turned off table by table, and the check that
//! PostgreSQL gathered no statistics.
//!
//! The imported tickets are the stdio benchmark's generator's (`support::Planned`: titles,
//! descriptions, labels, story points, assignees as their would-be status has them; a batch
//! item has no status, so every ticket is in the backlog), with what an import from another
//! tracker brings: the first batch opens with epics (one per 500 tickets, at most 40), a third
//! of the later batches are created under one of them (the batch's `parent_id`), one item in
//! ten depends on an earlier item of its batch (`#k`) and one in twenty on a ticket of an
//! earlier batch (`KEY-N`). A workspace's batches are sent one after another, so its tickets
//! are numbered `KEY-1` to `KEY-n` in the plan's order (checked on every answer).

use super::*;

use support::{BATCH, STATUSES};

/// The result of a case, for the full run's report: its ratio lines and a paragraph.
pub struct CaseReport {
    pub lines: Vec<String>,
    pub details: String,
}

/// What a server's stderr (`log`) says that tells of a problem, as the end of a case's
/// paragraph (the first [`SHOWN`] lines), or nothing.
pub fn problems_text(log: &str) -> String {
    /// Lines of a server's problems shown.
    const SHOWN: usize = 12;
    let lines = problems(log);
    if lines.is_empty() {
        return String::new();
    }
    let more = match lines.len() > SHOWN {
        true => format!("\n… {} lines in all", lines.len()),
        false => String::new(),
    };
    format!(
        "\nWhat `jility serve` reported on stderr:\n```\n{}{more}\n```\n",
        lines[..lines.len().min(SHOWN)].join("\n")
    )
}

/// A workspace's tickets, as batches of `POST /tickets/batch` bodies.
pub struct Import {
    /// Ticket `KEY-(i + 1)`'s title.
    pub titles: Vec<String>,
    pub batches: Vec<Value>,
    pub epics: usize,
    pub with_parent: usize,
    pub dependencies: usize,
}

impl Import {
    /// `tickets` tickets generated from `seed`.
    pub fn generate(seed: u64, tickets: usize) -> Self {
        let mut rng = Rng(seed);
        let epics = (tickets / 500).min(40);
        let mut titles = Vec::with_capacity(tickets);
        let mut batches = Vec::new();
        let (mut with_parent, mut dependencies) = (0, 0);
        while titles.len() < tickets {
            let first = titles.len() + 1;
            let size = BATCH.min(tickets - titles.len());
            let mut items = Vec::with_capacity(size);
            for i in 0..size {
                let status = rng.weighted(STATUSES);
                let mut planned = support::Planned::generate(&mut rng, status);
                if first + i <= epics {
                    planned.title = format!("Epic: {}", planned.title);
                }
                let mut item = planned.args(false);
                let mut depends_on = Vec::new();
                if i > 0 && rng.chance(0.10) {
                    depends_on.push(format!("#{}", rng.range(1, i)));
                }
                if first > 1 && rng.chance(0.05) {
                    depends_on.push(format!("{KEY}-{}", rng.range(1, first - 1)));
                }
                if !depends_on.is_empty() {
                    dependencies += depends_on.len();
                    item["depends_on"] = json!(depends_on);
                }
                titles.push(planned.title);
                items.push(item);
            }
            let mut batch = json!({ "tickets": items });
            if first > 1 && epics > 0 && rng.chance(1.0 / 3.0) {
                batch["parent_id"] = json!(format!("{KEY}-{}", rng.range(1, epics)));
                with_parent += size;
            }
            batches.push(batch);
        }
        Self {
            titles,
            batches,
            epics,
            with_parent,
            dependencies,
        }
    }

    /// What it holds, in words.
    pub fn summary(&self) -> String {
        format!(
            "{} tickets in {} batches: {} epics, {} tickets under one, {} dependencies",
            self.titles.len(),
            self.batches.len(),
            self.epics,
            self.with_parent,
            self.dependencies
        )
    }
}

/// `POST {base}/tickets/batch` of `import`'s batch `b` with `token`; checks that it created
/// the tickets numbered as planned.
pub async fn post_batch(
    http: &reqwest::Client,
    base: &str,
    token: &str,
    import: &Import,
    b: usize,
) {
    let url = format!("{base}/tickets/batch");
    let batch = &import.batches[b];
    let response = http
        .post(&url)
        .bearer_auth(token)
        .json(batch)
        .send()
        .await
        .unwrap_or_else(|err| panic!("POST {url}: {err}"));
    let status = response.status().as_u16();
    let body = response.text().await.unwrap();
    assert_eq!(status, 201, "POST {url} (batch {b}): {body}");
    let created: Value = serde_json::from_str(&body).unwrap();
    let first = b * BATCH + 1;
    let tickets = created["tickets"].as_array().unwrap();
    assert_eq!(tickets.len(), batch["tickets"].as_array().unwrap().len());
    for (i, ticket) in tickets.iter().enumerate() {
        assert_eq!(
            number_of(&ticket["number"]),
            first + i,
            "batch {b}: {ticket}"
        );
        assert_eq!(ticket["title"], import.titles[first + i - 1], "batch {b}");
    }
}

/// Every batch of `import`, one after another, with `token`: how long it took.
pub async fn import(base: &str, token: &str, import: &Import) -> Duration {
    let http = http_client();
    let t = Instant::now();
    for b in 0..import.batches.len() {
        post_batch(&http, base, token, import, b).await;
    }
    t.elapsed()
}

/// A scratch database `<prefix><pid>` (a copy of `template`, if given), dropped (connections
/// and all) when it goes out of scope, also when the run panics.
pub struct Scratch {
    pub name: String,
    pub url: String,
}

impl Scratch {
    /// Create it, after dropping those of its prefix that runs killed meanwhile left (their
    /// process is gone); and how long creating it took.
    pub fn create(prefix: &str, template: Option<&str>) -> (Self, Duration) {
        let name = format!("{prefix}{}", std::process::id());
        let mut admin = connect_admin();
        let pattern = format!("{}%", prefix.replace('_', "\\_"));
        let left = admin
            .query(
                "SELECT datname FROM pg_database WHERE datname LIKE $1",
                &[&pattern],
            )
            .unwrap();
        for row in left {
            let stale: String = row.get(0);
            let pid = &stale[prefix.len()..];
            let gone =
                pid.bytes().all(|b| b.is_ascii_digit()) && !Path::new("/proc").join(pid).exists();
            if stale == name || gone {
                eprintln!("dropping {stale}, left by an earlier run");
                admin
                    .batch_execute(&format!("DROP DATABASE IF EXISTS {stale} WITH (FORCE)"))
                    .unwrap();
            }
        }
        let create = match template {
            Some(template) => format!("CREATE DATABASE {name} TEMPLATE {template}"),
            None => format!("CREATE DATABASE {name}"),
        };
        let t = Instant::now();
        let mut attempt = 0;
        // A template must have no connection; one that is closing may linger for a moment.
        while let Err(err) = admin.batch_execute(&create) {
            attempt += 1;
            assert!(attempt < 10, "cannot create {name}: {err}");
            eprintln!("creating {name}: {err}; retrying");
            std::thread::sleep(Duration::from_secs(1));
        }
        let took = t.elapsed();
        let url = with_database(&admin_url(), &name);
        (Self { name, url }, took)
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        drop_database(&self.name);
    }
}

/// Autovacuum (and so autoanalyze) off for every table of the database at `url`, and their
/// TOAST tables: how many tables. A server that runs autovacuum then leaves them as a server
/// without it does.
pub fn autovacuum_off(url: &str) -> usize {
    let mut db = postgres::Client::connect(url, postgres::NoTls).unwrap();
    let statements: Vec<String> = db
        .query(
            "SELECT format('ALTER TABLE %I.%I SET (autovacuum_enabled = off, \
             toast.autovacuum_enabled = off)', n.nspname, c.relname) \
             FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace \
             WHERE c.relkind = 'r' AND n.nspname NOT IN ('pg_catalog', 'information_schema') \
             AND n.nspname NOT LIKE 'pg\\_toast%'",
            &[],
        )
        .unwrap()
        .iter()
        .map(|row| row.get(0))
        .collect();
    for statement in &statements {
        db.batch_execute(statement).unwrap();
    }
    statements.len()
}

/// The tables of the database at `url` that were analysed or vacuumed, by hand or by
/// autovacuum (`pg_stat_user_tables`), each with what was done.
pub fn gathered_statistics(url: &str) -> Vec<String> {
    let mut db = postgres::Client::connect(url, postgres::NoTls).unwrap();
    db.query(
        "SELECT relname, last_analyze IS NOT NULL, last_autoanalyze IS NOT NULL, \
         last_vacuum IS NOT NULL, last_autovacuum IS NOT NULL FROM pg_stat_user_tables \
         ORDER BY relname",
        &[],
    )
    .unwrap()
    .iter()
    .filter_map(|row| {
        let done: Vec<&str> = ["ANALYZE", "autoanalyze", "VACUUM", "autovacuum"]
            .iter()
            .enumerate()
            .filter(|(i, _)| row.get::<_, bool>(i + 1))
            .map(|(_, what)| *what)
            .collect();
        let table: String = row.get(0);
        (!done.is_empty()).then(|| format!("{table} ({})", done.join(", ")))
    })
    .collect()
}

/// Rows of `tickets` read so far by sequential scans and fetched by index scans, by every
/// connection to the database at `url` (`pg_stat_user_tables`: a connection reports its
/// counts when it has been idle a while, within about 10 s).
/// (On a thread of its own: the sync client cannot start in the benchmark's runtime.)
pub fn ticket_reads(url: &str) -> (i64, i64) {
    let url = url.to_string();
    std::thread::spawn(move || {
        let mut db = postgres::Client::connect(&url, postgres::NoTls).unwrap();
        let row = db
            .query_one(
                "SELECT coalesce(seq_tup_read, 0), coalesce(idx_tup_fetch, 0) \
                 FROM pg_stat_user_tables WHERE relname = 'tickets'",
                &[],
            )
            .unwrap();
        (row.get(0), row.get(1))
    })
    .join()
    .unwrap()
}

/// What [`ticket_reads`] counted from `before` to `after`, over `requests` requests.
pub fn reads_text(before: (i64, i64), after: (i64, i64), requests: usize) -> String {
    let seq = after.0 - before.0;
    let index = after.1 - before.1;
    format!(
        "{seq} rows of `tickets` read by sequential scans and {index} fetched by index scans \
         (`pg_stat_user_tables`, the context refresher's included) for {requests} requests: \
         about {:.0} rows a request",
        (seq + index) as f64 / requests.max(1) as f64
    )
}

/// Tokens (full access) of workspace `workspace`, minted with the library on `db`, by name.
pub fn mint_in(db: &PgDatabase, workspace: &str, names: &[String]) -> Vec<String> {
    let id = db
        .workspace_by_name(workspace)
        .unwrap()
        .unwrap_or_else(|| panic!("no workspace {workspace}"))
        .id;
    let tokens = Tokens::new(db);
    names
        .iter()
        .map(|name| {
            let minted = tokens
                .create(
                    id,
                    &NewToken {
                        name: name.clone(),
                        scopes: ScopeSet::full_access(),
                        expires_at: None,
                        created_by: "benchmark".to_string(),
                    },
                )
                .unwrap();
            minted.token.expose().to_string()
        })
        .collect()
}

/// The readers' token names.
pub fn reader_names() -> Vec<String> {
    (0..CLIENTS).map(|c| format!("reader-{c}")).collect()
}
