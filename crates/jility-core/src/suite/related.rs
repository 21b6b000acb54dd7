//! Related tickets (`related`): the candidates a probe's words find — two of its words (one
//! when it has one), as search stems them; titles' matches first; live tickets only; the
//! probe's own ticket and what the filter refuses left out; descriptions cut to the
//! compared length; at most the limit of each kind — and the domain's answers on them, the
//! same scores in every store.

use super::{ACTOR, Ctx};
use crate::model::Status;
use crate::params::{CreateTicket, EstimateEffort, StatusName, SuggestRelated};
use crate::similarity::COMPARED_CHARS;
use crate::store::{Filter, Probe, Store, Test};

pub(super) fn candidates<S: Store + Clone>(cx: &mut Ctx<'_, S>) {
    let mut t = cx.tracker();
    t.init("TASK", "Demo", false).unwrap();
    let long = format!("resetting {}", "x".repeat(COMPARED_CHARS + 500));
    for (title, description, status) in [
        (
            "Password reset link expires",
            "The email link is dead.",
            "todo",
        ),
        ("Dark mode", "Users keep resetting their theme.", "backlog"),
        ("Invoice export", long.as_str(), "done"),
        ("Reset password form", "", "done"),
        ("Unrelated chore", "Nothing to see.", "todo"),
        ("Password reset for SSO users", "", "todo"),
    ] {
        t.create_ticket(
            ACTOR,
            CreateTicket {
                title: title.into(),
                description: Some(description.into()),
                status: Some(StatusName(status.into())),
                story_points: Some(3),
                ..Default::default()
            },
        )
        .unwrap();
    }
    t.delete(ACTOR, "TASK-6").unwrap();

    let found = |store: &mut S, words: &[&str], exclude: Option<i64>, filter: &Filter, limit| {
        let title = words.join(" ");
        let words: Vec<String> = words.iter().map(|w| w.to_string()).collect();
        store
            .read(|tx| {
                Ok(tx.related_candidates(
                    &Probe {
                        title_words: &words,
                        words: &words,
                        title: &title,
                        exclude,
                        filter,
                    },
                    limit,
                )?)
            })
            .unwrap()
    };
    let all = Filter::default();
    let rows = found(&mut cx.store, &["reset"], None, &all, 10);
    let numbers: Vec<i64> = rows.iter().map(|r| r.number).collect();
    // Titles first (their weight), then descriptions; "resetting" is the stem's; the deleted
    // ticket never.
    assert_eq!(
        &numbers[..2]
            .iter()
            .copied()
            .collect::<std::collections::BTreeSet<_>>(),
        &[1, 4].into()
    );
    assert_eq!(numbers.len(), 4, "{numbers:?}");
    assert!(
        numbers[2..].contains(&2) && numbers[2..].contains(&3),
        "{numbers:?}"
    );
    let invoice = rows.iter().find(|r| r.number == 3).unwrap();
    assert_eq!(invoice.description.chars().count(), COMPARED_CHARS);
    // Two words: a ticket with one of them is none; the probe's own ticket and the filter's
    // refusals left out; the limit of each kind.
    let first = rows.iter().find(|r| r.number == 1).unwrap().id;
    let rows = found(&mut cx.store, &["password", "reset"], Some(first), &all, 10);
    let numbers: Vec<i64> = rows.iter().map(|r| r.number).collect();
    assert_eq!(numbers, [4]);
    assert!(found(&mut cx.store, &["dark", "expires"], None, &all, 10).is_empty());
    let done = Filter::default().with(Test::Status(vec![Status::Done]));
    let rows = found(&mut cx.store, &["reset"], None, &done, 10);
    let mut numbers: Vec<i64> = rows.iter().map(|r| r.number).collect();
    numbers.sort();
    assert_eq!(numbers, [3, 4]);
    let one_each = found(&mut cx.store, &["reset"], None, &all, 1);
    // One of each kind, the same ticket once when it is the best of both.
    assert!((1..=2).contains(&one_each.len()), "{one_each:?}");
    assert!([1, 4].contains(&one_each[0].number));
    assert!(found(&mut cx.store, &[], None, &all, 10).is_empty());
    assert!(found(&mut cx.store, &["kubernetes"], None, &all, 10).is_empty());

    // The domain: the same answer in every store.
    let related = t
        .suggest_related(SuggestRelated {
            title: Some("Password reset link expired".into()),
            ..Default::default()
        })
        .unwrap();
    let got: Vec<(String, f64, bool)> = related
        .related
        .iter()
        .map(|r| (r.number.clone(), r.score, r.duplicate))
        .collect();
    assert_eq!(got[0].0, "TASK-1", "{got:?}");
    assert!(got[0].2, "{got:?}");
    assert!(got.iter().all(|(n, _, _)| n != "TASK-6"), "{got:?}");
    let estimate = t
        .estimate_effort(EstimateEffort {
            title: Some("Reset password form broken".into()),
            ..Default::default()
        })
        .unwrap();
    assert_eq!(estimate.story_points, Some(3), "{estimate:?}");
    assert_eq!(estimate.based_on[0].number, "TASK-4", "{estimate:?}");
}
