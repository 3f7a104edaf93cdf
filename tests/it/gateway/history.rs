//! `reasons gateway` gives the model its own reasons back: each call of the history an agent
//! sends, whose id the reasons log holds, gets the logged reason again on its way upstream.

use serde_json::{json, Value};

use crate::util::gateway::Gateway;
use crate::util::upstream::{bash_tool, Answer, Upstream};
use crate::util::write_reasons_log;

const REASON: &str = "Find the config file the user asked about";

/// A second turn of a Messages session: the agent's record of the call (without its reason, as
/// the gateway sent it) and the call's result. `input` is the call's input as recorded.
fn second_turn(id: &str, input: Value) -> Vec<u8> {
    json!({
        "model": "claude-test", "max_tokens": 1024, "stream": false,
        "tools": [bash_tool()],
        "messages": [
            {"role": "user", "content": "Where is the config? \u{e9}\u{1f600} \\/ \"q\""},
            {"role": "assistant", "content": [
                {"type": "text", "text": "Let me look for it."},
                {"type": "tool_use", "id": id, "name": "Bash", "input": input}]},
            {"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": id, "content": "./config/app.yml"}]},
        ],
    })
    .to_string()
    .into_bytes()
}

/// An upstream that answers every request with text: what it received is what is checked.
fn echo_upstream() -> Upstream {
    Upstream::start(|_| {
        Answer::Json(
            200,
            json!({"id": "msg", "type": "message", "role": "assistant", "model": "m",
                "content": [{"type": "text", "text": "It is in config/app.yml."}],
                "stop_reason": "end_turn", "usage": {"input_tokens": 1, "output_tokens": 1}}),
        )
    })
}

/// The input of the history's call as the upstream received it in request `n`.
fn sent_input(upstream: &Upstream, n: usize) -> Value {
    upstream.received()[n].json()["messages"][1]["content"][1]["input"].clone()
}

#[test]
fn a_history_call_gets_its_logged_reason_back_the_same_bytes_every_time() {
    let upstream = echo_upstream();
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("reasons.jsonl");
    // Logged before this gateway started: a restarted gateway still finds it.
    write_reasons_log(&log, &[("Bash", "toolu_01", REASON)]);
    let gateway = Gateway::start_logging_to(&upstream.url(), &log, &[]);
    let body = second_turn("toolu_01", json!({"command": "find . -name '*.yml'"}));
    for _ in 0..2 {
        assert_eq!(gateway.post("/v1/messages", &body).status, 200);
    }
    let received = upstream.received();
    assert_eq!(
        sent_input(&upstream, 0),
        json!({"command": "find . -name '*.yml'", "reason": REASON})
    );
    // The same body and log give the same bytes: a provider's prompt cache keeps hitting.
    assert_eq!(received[0].body, received[1].body);
    // Only the call's entry was rewritten; the user's message went on as its bytes.
    let sent = String::from_utf8(received[0].body.clone()).unwrap();
    let original = String::from_utf8(body.clone()).unwrap();
    let user = original
        .split("{\"role\":\"assistant\"")
        .next()
        .unwrap()
        .split("\"messages\":")
        .nth(1)
        .unwrap();
    assert!(sent.contains(user), "{sent}");
}

#[test]
fn calls_with_a_reason_of_their_own_unknown_ids_and_other_tools_go_on_as_they_came() {
    let upstream = echo_upstream();
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("reasons.jsonl");
    write_reasons_log(
        &log,
        &[
            ("Bash", "toolu_own", "logged"),
            ("Read", "toolu_read", "another tool's"),
        ],
    );
    let gateway = Gateway::start_logging_to(&upstream.url(), &log, &[]);
    let bodies = [
        second_turn("toolu_own", json!({"command": "ls", "reason": "its own"})),
        second_turn("toolu_unknown", json!({"command": "ls"})),
        second_turn("toolu_read", json!({"command": "ls"})),
    ];
    for body in &bodies {
        gateway.post("/v1/messages", body);
    }
    let received = upstream.received();
    assert_eq!(
        sent_input(&upstream, 0),
        json!({"command": "ls", "reason": "its own"})
    );
    for n in [1, 2] {
        assert_eq!(sent_input(&upstream, n), json!({"command": "ls"}));
        // Nothing else changed either: the tools are augmented, the messages are the bytes sent.
        let sent: Value = received[n].json();
        let original: Value = serde_json::from_slice(&bodies[n]).unwrap();
        assert_eq!(sent["messages"], original["messages"]);
    }
}

#[test]
fn the_first_logged_reason_wins_and_no_restore_turns_it_off() {
    let upstream = echo_upstream();
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("reasons.jsonl");
    write_reasons_log(
        &log,
        &[
            ("Bash", "toolu_01", "first"),
            ("Bash", "toolu_01", "second"),
        ],
    );
    let body = second_turn("toolu_01", json!({"command": "ls"}));
    let restoring = Gateway::start_logging_to(&upstream.url(), &log, &[]);
    restoring.post("/v1/messages", &body);
    let plain = Gateway::start_logging_to(&upstream.url(), &log, &["--no-restore"]);
    plain.post("/v1/messages", &body);
    assert_eq!(
        sent_input(&upstream, 0),
        json!({"command": "ls", "reason": "first"})
    );
    assert_eq!(sent_input(&upstream, 1), json!({"command": "ls"}));
}

#[test]
fn a_reason_this_gateway_logs_comes_back_in_the_next_turn() {
    // The model calls Bash with a reason; the agent sends the call back without it.
    let upstream = Upstream::messages(|request: &Value| {
        let answered = request.to_string().contains("tool_result");
        match answered {
            true => vec![json!({"type": "text", "text": "Done."})],
            false => vec![json!({"type": "tool_use", "id": "toolu_01", "name": "Bash",
                "input": {"command": "ls", "reason": REASON}})],
        }
    });
    let gateway = Gateway::start(&upstream.url(), &[]);
    let first = json!({"model": "m", "max_tokens": 10, "tools": [bash_tool()],
        "messages": [{"role": "user", "content": "go"}]});
    let reply = gateway.post("/v1/messages", first.to_string().as_bytes());
    assert_eq!(
        reply.json()["content"][0]["input"],
        json!({"command": "ls"})
    );
    gateway.post(
        "/v1/messages",
        &second_turn("toolu_01", json!({"command": "ls"})),
    );
    assert_eq!(
        sent_input(&upstream, 1),
        json!({"command": "ls", "reason": REASON})
    );
}

#[test]
fn a_history_the_gateway_cannot_read_still_goes_upstream_as_it_came() {
    let upstream = echo_upstream();
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("reasons.jsonl");
    write_reasons_log(&log, &[("Bash", "toolu_01", REASON)]);
    let gateway = Gateway::start_logging_to(&upstream.url(), &log, &[]);
    let tools = json!([bash_tool()]);
    let bodies = [
        format!(r#"{{"tools":{tools},"messages":"tool_use toolu_01"}}"#),
        format!(
            r#"{{"tools":{tools},"messages":[{{"role":"assistant","content":"tool_use"}}, 7]}}"#
        ),
        format!(
            r#"{{"tools":{tools},"messages":[{{"role":"assistant","content":[{{"type":"tool_use","id":"toolu_01","name":"Bash","input":"not an object"}}]}}]}}"#
        ),
    ];
    for body in &bodies {
        assert_eq!(gateway.post("/v1/messages", body.as_bytes()).status, 200);
    }
    for (received, body) in upstream.received().iter().zip(&bodies) {
        let sent: Value = received.json();
        let original: Value = serde_json::from_str(body).unwrap();
        assert_eq!(sent["messages"], original["messages"]);
    }
}
