//! A probe, not a test of behaviour (ignored): times search with and without qualifiers on
//! a database given by `JILITY_PROBE_URL` (the cloud benchmark's template), for tuning.

use std::time::Instant;

use jility_core::model::Status;
use jility_core::store::{Clause, Filter, SearchTerms, Store, Test, TimeRange};
use jility_pg::store::{PgDatabase, PgStore};

#[test]
#[ignore]
fn probe_qualified_search() {
    let Ok(url) = std::env::var("JILITY_PROBE_URL") else {
        return;
    };
    let db = PgDatabase::connect_with(&url, 2).unwrap();
    let ws = db.workspaces().unwrap()[0].id;
    let mut store = PgStore::open(&db, ws).unwrap();
    let filter = Filter {
        clauses: vec![
            Clause {
                negated: true,
                test: Test::Status(vec![Status::Done]),
            },
            Clause {
                negated: false,
                test: Test::Label(vec!["backend".into(), "bug".into(), "frontend".into()]),
            },
            Clause {
                negated: false,
                test: Test::Updated(TimeRange {
                    from: Some("2016-01-01T00:00:00.000Z".into()),
                    until: None,
                }),
            },
        ],
    };
    let words = std::env::var("JILITY_PROBE_WORDS")
        .unwrap_or("billing,timeout,export,flaky invoice,login".into());
    for word in words.split(',') {
        let terms = SearchTerms(vec![word.split(' ').map(str::to_string).collect()]);
        for (name, f) in [("plain", Filter::default()), ("qualified", filter.clone())] {
            let mut times = Vec::new();
            let mut total = 0;
            for _ in 0..15 {
                let t = Instant::now();
                let page = store.search(&terms, &f, 0, 20).unwrap();
                times.push(t.elapsed());
                total = page.total;
            }
            times.sort();
            println!("{word:>16} {name:>9}: p50 {:?} (total {total})", times[7]);
        }
    }
}
