//! Confirmations through the client (MRTR, 2026-07-28): deleting a ticket and a bulk edit
//! without `expected_count` ask the user first, through rmcp's client on the stateless
//! lifecycle with elicitation declared (mcp-testkit's `asking`); a client of the
//! 2025-11-25 era sees no question. The state is signed and bound to the call: altered, or
//! replayed with other arguments, it is refused with -32602.

use mcp_testkit::asking::{Asking, Reply};
use rmcp::model::{CallToolRequestParams, CallToolResponse};
use serde_json::{Value, json};

use crate::support::{AGENT, BIN, Project};

async fn asking(project: &Project) -> Asking {
    Asking::spawn(
        BIN.as_ref(),
        &["--mcp-server"],
        project.root(),
        &[("JILITY_ACTOR", AGENT)],
    )
    .await
}

fn project_with(titles: &[&str]) -> Project {
    let project = Project::new();
    project.init("TASK");
    for title in titles {
        project.json(&["ticket", "create", "--title", title]);
    }
    project
}

fn structured(result: &rmcp::model::CallToolResult) -> Value {
    result
        .structured_content
        .clone()
        .expect("structuredContent")
}

#[tokio::test]
async fn deleting_a_ticket_asks_the_user_and_their_no_keeps_it() {
    let project = project_with(&["Login page", "Signup page"]);
    let mcp = asking(&project).await;

    mcp.user.will(Reply::Answer(json!(false)));
    let kept = mcp
        .call("jility_delete_ticket", json!({"ticket_id": "TASK-1"}))
        .await;
    let asked = mcp.user.asked();
    assert_eq!(asked.len(), 1, "{asked:?}");
    let message = asked[0]["message"].as_str().unwrap();
    assert!(
        message.contains("TASK-1") && message.contains("Login page"),
        "{message}"
    );
    assert_eq!(kept.is_error, Some(true));
    assert_eq!(structured(&kept)["error"]["code"], "declined", "{kept:?}");
    assert_eq!(structured(&kept)["error"]["retryable"], false);
    let shown = project.json(&["ticket", "show", "TASK-1"]);
    assert_eq!(shown["ticket"]["title"], "Login page", "{shown}");

    // Declined (not just "no") keeps it too.
    mcp.user.will(Reply::Decline);
    let kept = mcp
        .call("jility_delete_ticket", json!({"ticket_id": "TASK-1"}))
        .await;
    assert_eq!(structured(&kept)["error"]["code"], "declined");

    mcp.user.will(Reply::Answer(json!(true)));
    let deleted = mcp
        .call("jility_delete_ticket", json!({"ticket_id": "TASK-1"}))
        .await;
    assert_eq!(deleted.is_error, Some(false), "{deleted:?}");
    assert_eq!(structured(&deleted)["data"]["number"], "TASK-1");
    let gone = project.json_err(&["ticket", "show", "TASK-1"]);
    assert_eq!(gone.code, "not_found");

    // A missing ticket is not asked about: the error comes at once.
    let missing = mcp
        .call("jility_delete_ticket", json!({"ticket_id": "TASK-99"}))
        .await;
    assert_eq!(structured(&missing)["error"]["code"], "not_found");
    assert!(
        mcp.user.asked().len() == 2,
        "one question per confirmed or declined call"
    );
}

#[tokio::test]
async fn a_bulk_edit_without_expected_count_asks_and_runs_on_what_the_user_saw() {
    let project = project_with(&["One", "Two", "Three"]);
    let mcp = asking(&project).await;
    let edit = json!({"query": "is:open", "set": {"add_labels": ["auth"]}});

    mcp.user.will(Reply::Cancel);
    let refused = mcp.call("jility_bulk_update", edit.clone()).await;
    assert_eq!(structured(&refused)["error"]["code"], "declined");
    let asked = mcp.user.asked();
    let message = asked[0]["message"].as_str().unwrap();
    assert!(message.starts_with("Change 3 tickets"), "{message}");
    assert!(message.contains("labels: +auth"), "{message}");
    let listed = project.json(&["ticket", "list", "--label", "auth"]);
    assert_eq!(
        crate::support::numbers(&listed["tickets"]).len(),
        0,
        "{listed}"
    );

    mcp.user.will(Reply::Answer(json!(true)));
    let done = mcp.call("jility_bulk_update", edit.clone()).await;
    assert_eq!(structured(&done)["data"]["changed"], 3, "{done:?}");
    assert_eq!(mcp.user.asked().len(), 1);

    // With expected_count, or as a preview, nothing is asked.
    let again = json!({"query": "is:open", "set": {"add_labels": ["ui"]}, "expected_count": 3});
    let done = mcp.call("jility_bulk_update", again).await;
    assert_eq!(structured(&done)["data"]["changed"], 3, "{done:?}");
    let preview = json!({"query": "is:open", "set": {"add_labels": ["x"]}, "dry_run": true});
    let shown = mcp.call("jility_bulk_update", preview).await;
    assert_eq!(structured(&shown)["data"]["dry_run"], true);
    assert!(mcp.user.asked().is_empty());
}

/// A confirmed bulk edit changes exactly the tickets the user was shown, whatever the query
/// finds by the time they answer: here the label moved from TASK-2 to TASK-3 meanwhile (the
/// same count), and a fourth ticket appeared.
#[tokio::test]
async fn a_confirmed_bulk_edit_changes_the_tickets_the_user_saw() {
    let project = project_with(&["One", "Two", "Three"]);
    for ticket in ["TASK-1", "TASK-2"] {
        project.json(&["ticket", "edit", ticket, "--label", "swap"]);
    }
    let mcp = asking(&project).await;
    let edit = json!({"query": "label:swap", "set": {"add_labels": ["touched"]}});
    let first = mcp.call_once(call("jility_bulk_update", &edit)).await;
    let CallToolResponse::InputRequired(asked) = first else {
        panic!("a question: {first:?}")
    };
    project.json(&["ticket", "edit", "TASK-2", "--clear-labels"]);
    project.json(&["ticket", "edit", "TASK-3", "--label", "swap"]);
    let mut retry = call("jility_bulk_update", &edit);
    retry.request_state = asked.request_state.clone();
    retry.input_responses = Some(
        [(
            "answer".to_string(),
            json!({"action": "accept", "content": {"answer": true}}),
        )]
        .into_iter()
        .collect(),
    );
    let CallToolResponse::Complete(answer) = mcp.call_once(retry).await else {
        panic!("a result")
    };
    assert_eq!(structured(&answer)["data"]["changed"], 2, "{answer:?}");
    let touched = project.json(&["ticket", "list", "--label", "touched"]);
    let mut numbers = crate::support::numbers(&touched["tickets"]);
    numbers.sort();
    assert_eq!(
        numbers,
        ["TASK-1", "TASK-2"],
        "the two the user saw: {touched}"
    );
}

/// A tool that takes no `ticket_id` is not asked about one it was given: its own answer
/// (an unknown field) comes at once.
#[tokio::test]
async fn only_a_tool_that_takes_a_ticket_asks_which() {
    let project = project_with(&["Login page"]);
    let mcp = asking(&project).await;
    let made = mcp
        .call(
            "jility_create_ticket",
            json!({"title": "x", "ticket_id": "login"}),
        )
        .await;
    assert_eq!(
        structured(&made)["error"]["code"],
        "invalid_input",
        "{made:?}"
    );
    assert!(mcp.user.asked().is_empty());
}

fn call(tool: &str, arguments: &Value) -> CallToolRequestParams {
    CallToolRequestParams::new(tool.to_string())
        .with_arguments(arguments.as_object().unwrap().clone())
}

#[tokio::test]
async fn an_altered_or_replayed_state_is_refused() {
    let project = project_with(&["One", "Two"]);
    let mcp = asking(&project).await;
    let first = mcp
        .call_once(call(
            "jility_delete_ticket",
            &json!({"ticket_id": "TASK-1"}),
        ))
        .await;
    let CallToolResponse::InputRequired(asked) = first else {
        panic!("a question: {first:?}")
    };
    let yes: rmcp::model::InputResponses = [(
        "answer".to_string(),
        json!({"action": "accept", "content": {"answer": true}}),
    )]
    .into_iter()
    .collect();
    let state = asked.request_state.clone().unwrap();
    for (arguments, state) in [
        // Altered.
        (json!({"ticket_id": "TASK-1"}), format!("{state}x")),
        // The answer about TASK-1, replayed to delete TASK-2.
        (json!({"ticket_id": "TASK-2"}), state.clone()),
    ] {
        let mut retry = call("jility_delete_ticket", &arguments);
        retry.request_state = Some(state);
        retry.input_responses = Some(yes.clone());
        let err = tokio::time::timeout(mcp_testkit::REQUEST_TIMEOUT, mcp.raw_call_once(retry))
            .await
            .unwrap()
            .expect_err("refused");
        assert!(
            err.contains("-32602") || err.contains("requestState"),
            "{err}"
        );
    }
    for ticket in ["TASK-1", "TASK-2"] {
        let shown = project.json(&["ticket", "show", ticket]);
        assert_eq!(shown["ticket"]["number"], ticket, "{shown}");
    }

    // Answered once, the same answer again is refused: a state opens once.
    let mut answered = call("jility_delete_ticket", &json!({"ticket_id": "TASK-1"}));
    answered.request_state = Some(state);
    answered.input_responses = Some(yes);
    let done = mcp.raw_call_once(answered.clone()).await.expect("deleted");
    assert!(matches!(done, CallToolResponse::Complete(_)), "{done:?}");
    let again = mcp.raw_call_once(answered).await.expect_err("a replay");
    assert!(again.contains("answered already"), "{again}");
}

/// A client of the 2025-11-25 era is never asked: the tool runs as it did.
#[tokio::test]
async fn an_older_client_is_not_asked() {
    let project = project_with(&["One"]);
    let mcp = project.start().await;
    let (text, deleted) = mcp
        .call_markdown::<Value>("jility_delete_ticket", json!({"ticket_id": "TASK-1"}))
        .await;
    assert_eq!(deleted.unwrap()["number"], "TASK-1", "{text}");
    assert!(text.contains("Deleted TASK-1"), "{text}");
}

/// The same questions on the stateless HTTP wire, as the conformance suite's MRTR scenarios
/// check them of its reference server: `resultType` is said, a retry without the answer is
/// asked again (not an error), unknown extra answers are ignored, and a client that declares
/// no elicitation is never asked.
#[tokio::test]
async fn over_http_a_question_follows_the_mrtr_rules() {
    use mcp_testkit::stateless::{request_as, result};
    let (_home, mcp) =
        mcp_testkit::protocol::spawn(mcp_testkit::Wire::Http, BIN, &["--mcp-server"]).await;
    let url = mcp.url().unwrap().to_string();
    let asking = json!({"elicitation": {}});
    let call = |name: &str, arguments: Value| json!({"name": name, "arguments": arguments});
    for title in ["One", "Two"] {
        let made = request_as(
            &url,
            "tools/call",
            call("jility_create_ticket", json!({"title": title})),
            &[],
            asking.clone(),
        )
        .await;
        assert_eq!(result(&made)["isError"], false, "{made}");
    }
    let delete = call("jility_delete_ticket", json!({"ticket_id": "1"}));
    let first = request_as(&url, "tools/call", delete.clone(), &[], asking.clone()).await;
    let asked = result(&first);
    assert_eq!(asked["resultType"], "input_required", "{first}");
    assert_eq!(
        asked["inputRequests"]["answer"]["method"],
        "elicitation/create"
    );
    let state = asked["requestState"].as_str().unwrap().to_string();

    // No answer: asked again.
    let mut retry = delete.clone();
    retry["requestState"] = json!(state);
    retry["inputResponses"] = json!({});
    let again = request_as(&url, "tools/call", retry.clone(), &[], asking.clone()).await;
    assert_eq!(result(&again)["resultType"], "input_required", "{again}");
    // The question again, with a new state: the old one opened once.
    let renewed = result(&again)["requestState"].as_str().unwrap().to_string();
    assert_ne!(renewed, state);
    let reused = request_as(&url, "tools/call", retry.clone(), &[], asking.clone()).await;
    assert_eq!(reused["error"]["code"], -32602, "{reused}");
    retry["requestState"] = json!(renewed);

    // The answer, with answers to questions never asked: those are ignored.
    retry["inputResponses"] = json!({
        "answer": {"action": "accept", "content": {"answer": true}},
        "unexpected": {"action": "accept", "content": {"x": 1}},
    });
    let done = request_as(&url, "tools/call", retry, &[], asking.clone()).await;
    let done = result(&done);
    assert_ne!(done["resultType"], "input_required", "{done}");
    assert_eq!(
        done["structuredContent"]["data"]["number"], "TASK-1",
        "{done}"
    );

    // A client without elicitation is not asked: the tool runs as it always did.
    let sampling_only = json!({"sampling": {}});
    let plain = call("jility_delete_ticket", json!({"ticket_id": "2"}));
    let ran = request_as(&url, "tools/call", plain, &[], sampling_only).await;
    let ran = result(&ran);
    assert!(ran.get("inputRequests").is_none(), "{ran}");
    assert_eq!(
        ran["structuredContent"]["data"]["number"], "TASK-2",
        "{ran}"
    );
}

/// A `ticket_id` of words (no `KEY-N`, number or UUID) asks which of the tickets they find
/// was meant, and the call goes on with the one chosen; with a delete, the confirmation
/// follows. An older client gets the `invalid_input` it always got.
#[tokio::test]
async fn a_ticket_named_by_words_is_chosen_by_the_user() {
    let project = project_with(&["Login page crash", "Login form layout", "Signup"]);
    let mcp = asking(&project).await;

    mcp.user.will(Reply::Answer(json!("TASK-2")));
    let shown = mcp
        .call("jility_get_ticket", json!({"ticket_id": "login"}))
        .await;
    assert_eq!(
        structured(&shown)["data"]["ticket"]["number"],
        "TASK-2",
        "{shown:?}"
    );
    let asked = mcp.user.asked();
    let options = asked[0]["requestedSchema"]["properties"]["answer"]["oneOf"]
        .as_array()
        .unwrap()
        .clone();
    let values: Vec<&str> = options
        .iter()
        .map(|o| o["const"].as_str().unwrap())
        .collect();
    assert_eq!(values.len(), 2, "the two login tickets: {options:?}");
    assert!(
        values.contains(&"TASK-1") && values.contains(&"TASK-2"),
        "{values:?}"
    );
    assert!(
        asked[0]["message"].as_str().unwrap().contains("login"),
        "{asked:?}"
    );

    // Which one, then whether to delete it.
    mcp.user.will(Reply::Answer(json!("TASK-1")));
    mcp.user.will(Reply::Answer(json!(true)));
    let deleted = mcp
        .call("jility_delete_ticket", json!({"ticket_id": "login crash"}))
        .await;
    assert_eq!(
        structured(&deleted)["data"]["number"],
        "TASK-1",
        "{deleted:?}"
    );
    assert_eq!(mcp.user.asked().len(), 2);

    // Declined: nothing done. Words that find nothing: the error as before.
    mcp.user.will(Reply::Decline);
    let declined = mcp
        .call(
            "jility_update_status",
            json!({"ticket_id": "layout", "status": "todo"}),
        )
        .await;
    assert_eq!(structured(&declined)["error"]["code"], "declined");
    let nothing = mcp
        .call("jility_get_ticket", json!({"ticket_id": "quantum"}))
        .await;
    assert_eq!(
        structured(&nothing)["error"]["code"],
        "invalid_input",
        "{nothing:?}"
    );

    let old = project.start().await;
    let (text, answer) = old
        .call_markdown::<Value>("jility_get_ticket", json!({"ticket_id": "login"}))
        .await;
    assert_eq!(answer.unwrap_err().code, "invalid_input", "{text}");
}
