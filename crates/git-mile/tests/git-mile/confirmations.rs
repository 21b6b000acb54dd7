//! Questions through the client (MRTR, 2026-07-28), through rmcp's client on the stateless
//! lifecycle with elicitation declared (mcp-testkit's `asking`): an ambiguous id prefix
//! asks which entity was meant; closing a milestone with open issues asks for a
//! confirmation. A client of the 2025-11-25 era is answered as before.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // assertions in tests

use mcp_testkit::asking::{Asking, Reply};
use rmcp::model::{CallToolRequestParams, CallToolResponse, CallToolResult};
use serde_json::{Value, json};

use crate::support::world::{i, m};
use crate::support::{self, Sandbox, world_repo};

async fn asking(sandbox: &Sandbox, repo: &std::path::Path) -> Asking {
    let env = support::base_env(sandbox.dir.path());
    let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    Asking::spawn(support::bin().as_ref(), &["mcp-server"], repo, &env).await
}

/// The code of a failed call (writes carry the error object as structuredContent too, as
/// their outputSchema has it; `support::error_object` checks a read's).
fn code_of(result: &CallToolResult) -> Value {
    assert_eq!(result.is_error, Some(true), "{result:?}");
    json_of(result)["error"]["code"].clone()
}

fn json_of(result: &CallToolResult) -> Value {
    let text = &result.content[0].as_text().expect("text").text;
    serde_json::from_str(text).expect("JSON text")
}

#[tokio::test]
async fn an_ambiguous_prefix_asks_which_one_and_goes_on_with_it() {
    let sandbox = Sandbox::new();
    let repo = world_repo(&sandbox, "w");
    let mcp = asking(&sandbox, &repo).await;

    mcp.user.will(Reply::Answer(json!(i(2))));
    let shown = mcp
        .call("git_mile.show", json!({"entity": "issue", "id": "4900"}))
        .await;
    assert_ne!(shown.is_error, Some(true), "{shown:?}");
    assert_eq!(json_of(&shown)["title"], "Add dark mode", "{shown:?}");
    let asked = mcp.user.asked();
    assert_eq!(asked.len(), 1);
    let options = asked[0]["requestedSchema"]["properties"]["answer"]["oneOf"]
        .as_array()
        .unwrap()
        .clone();
    assert_eq!(options.len(), 5, "{asked:?}");
    assert!(
        options
            .iter()
            .any(|o| o["const"] == i(1) && o["title"].as_str().unwrap().contains("Fix login crash")),
        "{options:?}"
    );

    // A write goes on with the one chosen, too.
    mcp.user.will(Reply::Answer(json!(i(4))));
    let updated = mcp
        .call(
            "git_mile.update",
            json!({"entity": "issue", "id": "4900", "addLabels": ["docs"]}),
        )
        .await;
    assert_eq!(json_of(&updated)["id"], i(4), "{updated:?}");
    assert!(json_of(&updated)["labels"].to_string().contains("docs"));

    // Declined: nothing is written.
    mcp.user.will(Reply::Decline);
    let declined = mcp
        .call(
            "git_mile.comment",
            json!({"entity": "issue", "id": "4900", "body": "hello"}),
        )
        .await;
    assert_eq!(code_of(&declined), "declined");
}

#[tokio::test]
async fn closing_a_milestone_with_open_issues_asks_first() {
    let sandbox = Sandbox::new();
    let repo = world_repo(&sandbox, "w");
    let mcp = asking(&sandbox, &repo).await;
    let close = json!({"entity": "milestone", "id": m(1), "status": "closed"});

    mcp.user.will(Reply::Answer(json!(false)));
    let kept = mcp.call("git_mile.update", close.clone()).await;
    assert_eq!(code_of(&kept), "declined");
    let asked = mcp.user.asked();
    let message = asked[0]["message"].as_str().unwrap();
    assert!(
        message.contains("Milestone Alpha") && message.contains("2 open issues"),
        "{message}"
    );
    let shown = sandbox.mile_json(&repo, &["show", &m(1)]);
    assert_eq!(shown["status"], "open", "{shown}");

    mcp.user.will(Reply::Answer(json!(true)));
    let closed = mcp.call("git_mile.update", close.clone()).await;
    assert_eq!(json_of(&closed)["status"], "closed", "{closed:?}");

    // A prefix and a close: which one first, then the confirmation.
    let mcp = asking(&sandbox, &repo).await;
    sandbox.mile_ok(&repo, &["open", &m(1)]);
    mcp.user.will(Reply::Answer(json!(m(1))));
    mcp.user.will(Reply::Answer(json!(true)));
    let both = mcp
        .call(
            "git_mile.update",
            json!({"entity": "milestone", "id": "4d00", "status": "closed"}),
        )
        .await;
    assert_eq!(json_of(&both)["status"], "closed", "{both:?}");
    assert_eq!(mcp.user.asked().len(), 2);
}

#[tokio::test]
async fn an_altered_state_is_refused_and_old_clients_are_not_asked() {
    let sandbox = Sandbox::new();
    let repo = world_repo(&sandbox, "w");
    let mcp = asking(&sandbox, &repo).await;
    let arguments = json!({"entity": "issue", "id": "4900"});
    let call = || {
        CallToolRequestParams::new("git_mile.show")
            .with_arguments(arguments.as_object().unwrap().clone())
    };
    let CallToolResponse::InputRequired(asked) = mcp.call_once(call()).await else {
        panic!("a question")
    };
    let mut retry = call();
    retry.request_state = asked.request_state.map(|s| format!("x{s}"));
    retry.input_responses = Some(
        [(
            "answer".to_string(),
            json!({"action": "accept", "content": {"answer": i(1)}}),
        )]
        .into_iter()
        .collect(),
    );
    let err = mcp.raw_call_once(retry).await.expect_err("refused");
    assert!(err.contains("requestState"), "{err}");

    // The 2025-11-25 client: the ambiguity is an error, and the milestone closes at once.
    let old = sandbox.server(&repo, &[]).await;
    let result = support::call_raw(&old, "git_mile.show", arguments.clone())
        .await
        .unwrap();
    assert_eq!(support::error_object(&result)["code"], "ambiguous_id");
    let closed = support::ok(
        &old,
        "git_mile.update",
        json!({"entity": "milestone", "id": m(1), "status": "closed"}),
    )
    .await;
    assert_eq!(closed["status"], "closed");
}
