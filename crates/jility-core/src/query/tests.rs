use chrono::TimeZone;

use super::*;

fn clock() -> Clock {
    Clock::at(
        chrono::Utc
            .with_ymd_and_hms(2024, 11, 10, 12, 0, 0)
            .unwrap(),
    )
}

fn read(text: &str) -> Query {
    parse(text, &clock()).unwrap_or_else(|e| panic!("{text}: {e:?}"))
}

fn refused(text: &str) -> ToolError {
    let err = parse(text, &clock()).expect_err(text);
    assert_eq!(err.code, errors::INVALID_INPUT, "{text}");
    err
}

fn only(text: &str) -> Qualified {
    let q = read(text);
    assert_eq!(q.qualifiers.len(), 1, "{text}");
    q.qualifiers[0].clone()
}

fn range(from: Option<&str>, until: Option<&str>) -> TimeRange {
    TimeRange {
        from: from.map(str::to_string),
        until: until.map(str::to_string),
    }
}

#[test]
fn words_phrases_and_negations() {
    let q = read(r#"JWT "token refresh" -legacy -"old flow" (auth)*"#);
    let shown: Vec<(bool, String)> = q
        .words
        .iter()
        .map(|w| (w.negated, w.phrase.join(" ")))
        .collect();
    assert_eq!(
        shown,
        [
            (false, "jwt".to_string()),
            (false, "token refresh".to_string()),
            (true, "legacy".to_string()),
            (true, "old flow".to_string()),
            (false, "auth".to_string()),
        ]
    );
    assert!(q.qualifiers.is_empty() && q.order.is_none() && q.has_words());
    // A lone dash, punctuation and times with colons are text, never syntax.
    let q = read("- 10:30 ** C++:");
    assert_eq!(q.words.len(), 3, "{q:?}");
    assert!(read("").is_empty());
    assert!(!read("-legacy").has_words());
}

#[test]
fn every_qualifier_reads_its_value() {
    assert_eq!(
        only("status:todo,review").qualifier,
        Qualifier::Status(vec![Status::Todo, Status::Review])
    );
    let neg = only("-label:wontfix");
    assert!(neg.negated);
    assert_eq!(neg.qualifier, Qualifier::Label(vec!["wontfix".into()]));
    assert_eq!(
        only("assignee:me,agent-1").qualifier,
        Qualifier::Assignee(vec![Person::Me, Person::Named("agent-1".into())])
    );
    assert_eq!(
        only("is:unassigned").qualifier,
        Qualifier::Is(Is::Unassigned)
    );
    assert_eq!(only("is:blocked").qualifier, Qualifier::Is(Is::Blocked));
    assert_eq!(
        only("is:epic").qualifier,
        Qualifier::Is(Is::Kind(Kind::Epic))
    );
    assert_eq!(only("no:sprint").qualifier, Qualifier::No(No::Sprint));
    assert_eq!(
        only("epic:TASK-4").qualifier,
        Qualifier::Epic("TASK-4".into())
    );
    assert_eq!(only("parent:#3").qualifier, Qualifier::Parent("#3".into()));
    assert_eq!(
        only("depends-on:TASK-9").qualifier,
        Qualifier::DependsOn("TASK-9".into())
    );
    assert_eq!(
        only(r#"sprint:"Sprint 3""#).qualifier,
        Qualifier::Sprint("Sprint 3".into())
    );
    assert_eq!(
        only("sprint:active").qualifier,
        Qualifier::Sprint("active".into())
    );
    assert_eq!(only("points:3..8").qualifier, Qualifier::Points(3, 8));
    assert_eq!(only("points:>5").qualifier, Qualifier::Points(6, u8::MAX));
    assert_eq!(only("points:>=5").qualifier, Qualifier::Points(5, u8::MAX));
    assert_eq!(only("points:<3").qualifier, Qualifier::Points(0, 2));
    assert_eq!(only("points:5").qualifier, Qualifier::Points(5, 5));
    assert_eq!(only("points:*..2").qualifier, Qualifier::Points(0, 2));
    // Names are case-insensitive; values keep their case.
    assert_eq!(
        only("LABEL:Backend").qualifier,
        Qualifier::Label(vec!["Backend".into()])
    );
    let q = read("login status:todo label:auth");
    assert_eq!(q.words.len(), 1);
    assert_eq!(q.qualifiers.len(), 2);
}

#[test]
fn times_on_days_instants_and_ages() {
    let created = |text: &str| match only(text).qualifier {
        Qualifier::Created(r) | Qualifier::Updated(r) => r,
        other => panic!("{other:?}"),
    };
    assert_eq!(
        created("created:>2024-10-20"),
        range(Some("2024-10-21T00:00:00.000Z"), None)
    );
    assert_eq!(
        created("created:>=2024-10-20"),
        range(Some("2024-10-20T00:00:00.000Z"), None)
    );
    assert_eq!(
        created("created:<2024-10-20"),
        range(None, Some("2024-10-20T00:00:00.000Z"))
    );
    assert_eq!(
        created("created:<=2024-10-20"),
        range(None, Some("2024-10-21T00:00:00.000Z"))
    );
    assert_eq!(
        created("created:2024-10-20"),
        range(
            Some("2024-10-20T00:00:00.000Z"),
            Some("2024-10-21T00:00:00.000Z")
        )
    );
    assert_eq!(
        created("created:2024-10-01..2024-10-31"),
        range(
            Some("2024-10-01T00:00:00.000Z"),
            Some("2024-11-01T00:00:00.000Z")
        )
    );
    assert_eq!(
        created("created:2024-10-01..*"),
        range(Some("2024-10-01T00:00:00.000Z"), None)
    );
    // Ages: younger than (since), older than (before), within.
    assert_eq!(
        created("updated:<7d"),
        range(Some("2024-11-03T12:00:00.000Z"), None)
    );
    assert_eq!(
        created("updated:7d"),
        range(Some("2024-11-03T12:00:00.000Z"), None)
    );
    assert_eq!(
        created("updated:>2w"),
        range(None, Some("2024-10-27T12:00:00.000Z"))
    );
    assert_eq!(
        created("updated:30d..7d"),
        range(
            Some("2024-10-11T12:00:00.000Z"),
            Some("2024-11-03T12:00:00.000Z")
        )
    );
    assert_eq!(
        created("updated:12h"),
        range(Some("2024-11-10T00:00:00.000Z"), None)
    );
    assert_eq!(
        created("created:2024-10-20T08:30:00Z"),
        range(
            Some("2024-10-20T08:30:00.000Z"),
            Some("2024-10-20T08:30:00.001Z")
        )
    );
}

#[test]
fn sort_each_way() {
    assert_eq!(
        read("sort:updated-desc").order,
        Some(Order::By(Sort {
            field: SortField::Updated,
            descending: true
        }))
    );
    assert_eq!(
        read("sort:points-asc").order,
        Some(Order::By(Sort {
            field: SortField::Points,
            descending: false
        }))
    );
    assert_eq!(
        read("sort:title").order,
        Some(Order::By(Sort {
            field: SortField::Title,
            descending: true
        }))
    );
    assert_eq!(read("sort:relevance").order, Some(Order::Relevance));
    for bad in [
        "sort:size",
        "sort:updated-up",
        "sort:a sort:b",
        "-sort:created",
    ] {
        refused(bad);
    }
    let err = refused("sort:created sort:updated");
    assert!(err.message.contains("sorts twice"), "{}", err.message);
}

#[test]
fn errors_quote_the_part_and_list_the_qualifiers() {
    let err = refused("login colour:red");
    assert!(err.message.contains("'colour:'"), "{}", err.message);
    assert!(err.message.contains("'colour:red'"), "{}", err.message);
    assert!(err.message.contains("status:, label:"), "{}", err.message);
    assert!(err.hint.as_deref().unwrap_or_default().contains("quotes"));
    // A URL is an unknown qualifier; quoted, it is text.
    refused("https://example.com/x");
    assert_eq!(read(r#""https://example.com/x""#).words.len(), 1);

    let err = refused("status:in-progress");
    assert!(
        err.message.contains("'status:in-progress'"),
        "{}",
        err.message
    );
    assert!(err.message.contains("in_progress"), "{}", err.message);
    for bad in [
        "status:",
        "is:sleepy",
        "no:colour",
        "points:many",
        "points:8..3",
        "points:<0",
        "points:999",
        "created:yesterday",
        "created:2024-13-40",
        "updated:<7y",
        "updated:>-3d",
        "label:,",
        "created:>9999-12-31",
        "created:>=+10000-01-01",
        "updated:>100001d",
    ] {
        let err = refused(bad);
        assert!(
            err.message.contains(bad.trim_end_matches(',')) || err.message.contains("no value"),
            "{bad}: {}",
            err.message
        );
        assert!(err.hint.is_some(), "{bad}");
    }
}

#[test]
fn long_queries_are_refused_without_being_quoted() {
    let long = "x".repeat(MAX_QUERY_CHARS + 1);
    let err = refused(&long);
    assert!(!err.message.contains("xxxx"), "{}", err.message);
    let many = (0..=MAX_QUERY_WORDS)
        .map(|i| format!("w{i}"))
        .collect::<Vec<_>>()
        .join(" ");
    assert!(refused(&many).message.contains("too many words"));
    let qualifiers = (0..=MAX_QUALIFIERS)
        .map(|i| format!("label:l{i}"))
        .collect::<Vec<_>>()
        .join(" ");
    assert!(refused(&qualifiers).message.contains("too many qualifiers"));
}
