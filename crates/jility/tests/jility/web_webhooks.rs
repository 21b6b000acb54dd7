//! The webhook settings page of `jility serve` (Settings → Webhooks), through the built
//! binary as a browser without script uses it (forms, cookies, redirects by hand), with a
//! receiver on loopback (`JILITY_WEBHOOKS_ALLOW_PRIVATE=1`): a webhook made on the page, its
//! secret shown once and never listed, a test event that reaches the receiver signed with
//! it, the delivery log, redelivery, rotation, disabling and deletion, each audited under
//! the person's email; members, viewers, forms without the CSRF token and another
//! workspace's webhook refused; refused URLs and filters explained on the page with what was
//! typed kept (clipped).

use std::time::{Duration, Instant};

use reqwest::Method;
use serde_json::json;

use crate::browser::{Browser, api, hidden, person, readonly_input, workspace};
use crate::cloud::Server;
use crate::pg::TestDb;
use crate::webhooks::{Receiver, signed_with};

const PRIVATE: (&str, &str) = ("JILITY_WEBHOOKS_ALLOW_PRIVATE", "1");
const PAGE: &str = "/w/acme/settings/webhooks";
/// Most webhooks a workspace keeps (jility-hooks' `MAX_WEBHOOKS`).
const MAX_WEBHOOKS: usize = 20;
/// The event types the form offers (jility-hooks' `EVENT_TYPES`).
const EVENT_TYPES: [&str; 10] = [
    "ticket.created",
    "ticket.updated",
    "ticket.status_changed",
    "ticket.assigned",
    "ticket.commented",
    "ticket.description_edited",
    "ticket.dependency_changed",
    "ticket.sprint_changed",
    "ticket.epic_changed",
    "ticket.deleted",
];

/// The `data-webhook` ids of a listing, in order.
fn listed_ids(page: &str) -> Vec<String> {
    page.split("data-webhook=\"")
        .skip(1)
        .map(|rest| rest.split('"').next().unwrap().to_string())
        .collect()
}

/// The error notice of a page (its text), or `None`.
fn error_notice(page: &str) -> Option<String> {
    let at = page.find("class=\"notice error\"")?;
    Some(page[at..].split("</div>").next().unwrap().to_string())
}

fn location(answer: &reqwest::blocking::Response) -> String {
    answer.headers()["location"].to_str().unwrap().to_string()
}

/// The delivery log of webhook `id` once `ready` holds of it (at most 20 s).
fn log_when(browser: &mut Browser, id: &str, ready: impl Fn(&str) -> bool) -> String {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let (status, page) = browser.get(&format!("{PAGE}/{id}"));
        assert_eq!(status, 200, "{page}");
        if ready(&page) {
            return page;
        }
        assert!(Instant::now() < deadline, "the log never got there: {page}");
        std::thread::sleep(Duration::from_millis(200));
    }
}

#[test]
fn an_owner_manages_a_webhook_on_the_settings_page() {
    let db = TestDb::new();
    let token = workspace(&db, "acme");
    let bravo = workspace(&db, "bravo");
    person(&db, "own@example.com", "Owner", "acme", "owner");
    person(&db, "mem@example.com", "Member", "acme", "member");
    person(&db, "val@example.com", "Viewer", "acme", "viewer");
    let server = Server::start_with(&db, "127.0.0.1:0", &[], &[PRIVATE]);
    let receiver = Receiver::start();
    let mut owner = Browser::signed_in(&server, "own@example.com");
    let csrf = owner.csrf("acme");

    // Linked from the settings' navigation; empty at first.
    let (status, settings) = owner.get("/w/acme/settings");
    assert_eq!(status, 200);
    assert!(settings.contains(&format!("href=\"{PAGE}\"")), "{settings}");
    let (status, page) = owner.get(PAGE);
    assert_eq!(status, 200, "{page}");
    assert!(page.contains("No webhooks yet."));
    for kind in EVENT_TYPES {
        assert!(
            page.contains(&format!("value=\"{kind}\"")),
            "a box for {kind}"
        );
    }

    // Made through the form: the secret is shown once, with how a receiver checks it.
    let made = owner.post(
        PAGE,
        &[
            ("_csrf", &csrf),
            ("url", &receiver.url),
            ("event", "ticket.created"),
            ("event", "ticket.commented"),
            ("description", "CI receiver"),
        ],
    );
    assert_eq!(made.status().as_u16(), 201);
    let page = made.text().unwrap();
    let secret = readonly_input(&page, "new-secret");
    assert!(secret.starts_with("whsec_"), "{secret}");
    assert!(page.contains("shown only this once"), "{page}");
    assert!(page.contains("webhook-signature") && page.contains("Standard Webhooks"));

    // The listing: what it is, never its secret.
    let (_, listing) = owner.get(PAGE);
    assert!(!listing.contains(&secret), "the secret is listed");
    assert!(!listing.contains("whsec_"));
    let ids = listed_ids(&listing);
    assert_eq!(ids.len(), 1, "{listing}");
    let id = ids[0].clone();
    assert!(listing.contains(&receiver.url));
    assert!(listing.contains("ticket.created, ticket.commented"));
    assert!(listing.contains("CI receiver") && listing.contains("enabled"));
    assert!(
        listing.contains(&format!("href=\"{PAGE}/{id}\"")),
        "its log"
    );

    // A test event reaches the receiver, signed with the secret shown.
    let tested = owner.post(&format!("{PAGE}/{id}/test"), &[("_csrf", &csrf)]);
    assert_eq!(tested.status().as_u16(), 303);
    assert_eq!(location(&tested), format!("{PAGE}?done=tested"));
    let (_, after) = owner.get(&location(&tested));
    assert!(after.contains("A test event (webhook.test) is on its way"));
    let got = receiver.wait(20, |got| !got.is_empty());
    assert_eq!(got[0].json()["type"], "webhook.test");
    assert_eq!(got[0].json()["data"]["sent_by"], "own@example.com");
    assert!(signed_with(&secret, &got[0]));
    let first_id = got[0].id().to_string();

    // In the delivery log: its event, state, attempts, the receiver's answer.
    let log = log_when(&mut owner, &id, |page| page.contains("delivered"));
    assert!(
        log.contains("webhook.test") && log.contains("HTTP 200"),
        "{log}"
    );
    assert!(log.contains("<pre class=\"excerpt\">ok</pre>"), "{log}");
    assert!(log.contains(&receiver.url));
    let delivery = hidden(&log, "delivery");

    // Redelivered: the same message again.
    let again = owner.post(
        &format!("{PAGE}/{id}/redeliver"),
        &[("_csrf", &csrf), ("delivery", &delivery)],
    );
    assert_eq!(again.status().as_u16(), 303);
    assert_eq!(location(&again), format!("{PAGE}/{id}?done=redelivered"));
    let got = receiver.wait(20, |got| got.len() >= 2);
    assert_eq!(got[1].id(), first_id, "the same webhook-id");
    assert_eq!(got[1].body, got[0].body, "the same body");
    let log = log_when(&mut owner, &id, |page| page.contains("delivered"));
    assert!(log.contains(">2</td>"), "two attempts: {log}");

    // Rotated: a new secret shown once, which signs from then on.
    let rotated = owner.post(&format!("{PAGE}/{id}/rotate"), &[("_csrf", &csrf)]);
    assert_eq!(rotated.status().as_u16(), 200);
    let page = rotated.text().unwrap();
    let second = readonly_input(&page, "new-secret");
    assert!(second.starts_with("whsec_") && second != secret);
    assert!(page.contains("previous secret too"), "{page}");
    let (_, listing) = owner.get(PAGE);
    assert!(!listing.contains(&second));
    owner.post(&format!("{PAGE}/{id}/test"), &[("_csrf", &csrf)]);
    let got = receiver.wait(20, |got| got.len() >= 3);
    assert!(signed_with(&second, &got[2]), "signed with the new secret");

    // Disabled, then enabled again.
    let disabled = owner.post(&format!("{PAGE}/{id}/disable"), &[("_csrf", &csrf)]);
    assert_eq!(disabled.status().as_u16(), 303);
    let (_, listing) = owner.get(&location(&disabled));
    assert!(
        listing.contains("disabled: disabled by a person"),
        "{listing}"
    );
    assert!(listing.contains("The webhook is disabled"));
    let enabled = owner.post(&format!("{PAGE}/{id}/enable"), &[("_csrf", &csrf)]);
    assert_eq!(enabled.status().as_u16(), 303);
    let (_, listing) = owner.get(PAGE);
    assert!(!listing.contains("disabled by a person"));

    // Members and viewers: refused as on every settings page, nothing made.
    for email in ["mem@example.com", "val@example.com"] {
        let mut other = Browser::signed_in(&server, email);
        let theirs = other.csrf("acme");
        assert_eq!(other.get(PAGE).0, 403, "{email}");
        assert_eq!(other.get(&format!("{PAGE}/{id}")).0, 403, "{email}");
        let refused = other.post(PAGE, &[("_csrf", &theirs), ("url", &receiver.url)]);
        assert_eq!(refused.status().as_u16(), 403, "{email}");
        let refused = other.post(&format!("{PAGE}/{id}/delete"), &[("_csrf", &theirs)]);
        assert_eq!(refused.status().as_u16(), 403, "{email}");
    }

    // Without the CSRF token, or from another site: refused, nothing made.
    let bare = owner.post(PAGE, &[("url", &receiver.url)]);
    assert_eq!(bare.status().as_u16(), 403);
    let foreign = owner.post_from(
        PAGE,
        &[("_csrf", &csrf), ("url", &receiver.url)],
        Some("http://evil.example"),
    );
    assert_eq!(foreign.status().as_u16(), 403);
    let bare = owner.post(&format!("{PAGE}/{id}/delete"), &[]);
    assert_eq!(bare.status().as_u16(), 403);
    assert_eq!(listed_ids(&owner.get(PAGE).1), vec![id.clone()]);

    // Another workspace's webhook: a 404, on the log and on every form; it stays.
    let (status, theirs) = api(
        &server,
        &bravo,
        Method::POST,
        "/webhooks",
        Some(&json!({"url": receiver.url}).to_string()),
    );
    assert_eq!(status, 201, "{theirs}");
    let other = theirs["id"].as_i64().unwrap().to_string();
    assert_eq!(owner.get(&format!("{PAGE}/{other}")).0, 404);
    assert_eq!(owner.get(&format!("{PAGE}/nonsense")).0, 404);
    for action in ["test", "rotate", "disable", "delete"] {
        let refused = owner.post(&format!("{PAGE}/{other}/{action}"), &[("_csrf", &csrf)]);
        assert_eq!(refused.status().as_u16(), 404, "{action}");
    }
    let (status, still) = api(
        &server,
        &bravo,
        Method::GET,
        &format!("/webhooks/{other}"),
        None,
    );
    assert_eq!(status, 200);
    assert_eq!(still["enabled"], true, "{still}");

    // Deleted: gone from the list, its log a 404.
    let deleted = owner.post(&format!("{PAGE}/{id}/delete"), &[("_csrf", &csrf)]);
    assert_eq!(deleted.status().as_u16(), 303);
    let (_, listing) = owner.get(&location(&deleted));
    assert!(listing.contains("No webhooks yet.") && listing.contains("are deleted"));
    assert_eq!(owner.get(&format!("{PAGE}/{id}")).0, 404);

    // Each write audited as the person's, under the API's operations.
    let (_, audit) = api(&server, &token, Method::GET, "/audit?limit=100", None);
    let entries = audit["entries"].as_array().unwrap();
    for operation in [
        "webhooks.create",
        "webhooks.test",
        "webhooks.redeliver",
        "webhooks.rotate_secret",
        "webhooks.update",
        "webhooks.delete",
    ] {
        let entry = entries
            .iter()
            .find(|e| e["operation"] == operation && e["status"].as_u64().unwrap() < 300)
            .unwrap_or_else(|| panic!("no {operation} in {audit}"));
        assert_eq!(entry["actor"], "own@example.com", "{entry}");
        assert!(entry["token_id"].is_null(), "{entry}");
        assert!(
            entry["detail"].as_str().unwrap().contains(&id),
            "{operation}: {entry}"
        );
    }
}

#[test]
fn refused_input_is_explained_on_the_page_with_the_form_kept() {
    let db = TestDb::new();
    let _token = workspace(&db, "acme");
    person(&db, "own@example.com", "Owner", "acme", "admin");
    let receiver = Receiver::start();

    // Without the operator's switch: loopback and private addresses are refused.
    let strict = Server::start(&db, &[]);
    let mut owner = Browser::signed_in(&strict, "own@example.com");
    let csrf = owner.csrf("acme");
    for (url, why) in [
        (receiver.url.as_str(), "must be https"),
        (
            "https://127.0.0.1/hook",
            "is on a private, loopback or link-local address",
        ),
        (
            "https://10.0.0.1/x",
            "is on a private, loopback or link-local address",
        ),
        ("not a url", "is not a URL"),
        ("https://user:pw@example.com/", "no credentials"),
    ] {
        let refused = owner.post(
            PAGE,
            &[
                ("_csrf", &csrf),
                ("url", url),
                ("event", "ticket.deleted"),
                ("filter", "label:backend"),
                ("description", "Kept as typed"),
            ],
        );
        assert_eq!(refused.status().as_u16(), 400, "{url}");
        let page = refused.text().unwrap();
        let notice = error_notice(&page).unwrap_or_else(|| panic!("{url}: no notice: {page}"));
        assert!(notice.contains(why), "{url}: {notice}");
        assert!(!notice.contains("/api/v1"), "a hint for people: {notice}");
        // What was typed is in the form again.
        assert!(
            page.contains("value=\"Kept as typed\"") && page.contains("value=\"label:backend\""),
            "{url}"
        );
        assert!(
            page.contains("value=\"ticket.deleted\" checked"),
            "{url}: the ticked box"
        );
        assert!(page.contains("No webhooks yet."));
        assert!(
            !page.contains("pw@"),
            "a URL's credentials are not shown back"
        );
    }
    drop(owner);
    drop(strict);

    // With the switch: loopback over http, but not plain http elsewhere; filters are read.
    let server = Server::start_with(&db, "127.0.0.1:0", &[], &[PRIVATE]);
    let mut owner = Browser::signed_in(&server, "own@example.com");
    let csrf = owner.csrf("acme");
    let refused = owner.post(PAGE, &[("_csrf", &csrf), ("url", "http://10.0.0.1/x")]);
    assert_eq!(refused.status().as_u16(), 400);
    let page = refused.text().unwrap();
    assert!(
        error_notice(&page).unwrap().contains("must be https"),
        "{page}"
    );
    assert!(page.contains("value=\"http://10.0.0.1/x\""));

    let refused = owner.post(
        PAGE,
        &[
            ("_csrf", &csrf),
            ("url", &receiver.url),
            ("filter", "view:nosuchview"),
        ],
    );
    assert_eq!(refused.status().as_u16(), 400);
    let page = refused.text().unwrap();
    let notice = error_notice(&page).unwrap();
    assert!(notice.contains("nosuchview"), "{notice}");
    assert!(page.contains(&format!("value=\"{}\"", receiver.url)));

    // Huge input: refused, and not echoed whole.
    let huge = format!("https://example.com/{}", "a".repeat(200_000));
    let refused = owner.post(
        PAGE,
        &[
            ("_csrf", &csrf),
            ("url", &huge),
            ("description", &"d".repeat(100_000)),
        ],
    );
    assert_eq!(refused.status().as_u16(), 400);
    let page = refused.text().unwrap();
    assert!(
        error_notice(&page).unwrap().contains("longer than"),
        "{}",
        error_notice(&page).unwrap()
    );
    assert!(page.len() < 20_000, "the page echoed {} bytes", page.len());

    // Too long a description, and an unknown event type.
    let refused = owner.post(
        PAGE,
        &[
            ("_csrf", &csrf),
            ("url", &receiver.url),
            ("description", &"d".repeat(300)),
        ],
    );
    assert_eq!(refused.status().as_u16(), 400);
    assert!(
        error_notice(&refused.text().unwrap())
            .unwrap()
            .contains("at most 200 characters")
    );
    let refused = owner.post(
        PAGE,
        &[
            ("_csrf", &csrf),
            ("url", &receiver.url),
            ("event", "ticket.exploded"),
        ],
    );
    assert_eq!(refused.status().as_u16(), 400);
    assert!(
        error_notice(&refused.text().unwrap())
            .unwrap()
            .contains("is not an event type")
    );

    // Too many: the twenty-first is refused in words, with what to do.
    for n in 0..MAX_WEBHOOKS {
        let made = owner.post(
            PAGE,
            &[("_csrf", &csrf), ("url", &format!("{}/{n}", receiver.url))],
        );
        assert_eq!(made.status().as_u16(), 201, "webhook {n}");
    }
    let refused = owner.post(PAGE, &[("_csrf", &csrf), ("url", &receiver.url)]);
    assert_eq!(refused.status().as_u16(), 409);
    let page = refused.text().unwrap();
    let notice = error_notice(&page).unwrap();
    assert!(notice.contains("the most it keeps"), "{notice}");
    assert!(
        notice.contains("Delete a webhook no longer used"),
        "{notice}"
    );
    assert!(!notice.contains("/api/v1"), "{notice}");
    assert_eq!(listed_ids(&page).len(), MAX_WEBHOOKS);
}
