//! `--reason-position first|last` through the real binary: where the `reason` property lands in
//! the declarations the model is sent (`gateway`, `filter`), where a reason given back to the
//! history lands among a call's arguments, and that every other rule holds either way.

use serde_json::{json, Value};

use crate::util::gateway::Gateway;
use crate::util::read_reasons_log;
use crate::util::upstream::{chat_completion, Answer, Upstream};
use crate::util::{output_with_stdin, reasons};

const REASON: &str = "Count the lines the user asked about";

fn schema() -> Value {
    json!({"type": "object", "properties": {"command": {"type": "array",
        "items": {"type": "string"}}, "cwd": {"type": "string"}}, "required": ["command"]})
}

fn keys(object: &Value) -> Vec<String> {
    object
        .as_object()
        .unwrap_or_else(|| panic!("not an object: {object}"))
        .keys()
        .cloned()
        .collect()
}

/// A Chat request body with the `shell` tool, and `history` before the user's turn.
fn chat_body(history: &[Value]) -> Vec<u8> {
    let mut messages = history.to_vec();
    messages.push(json!({"role": "user", "content": "How long is notes.txt?"}));
    json!({"model": "gpt-test", "messages": messages, "tools": [{"type": "function",
        "function": {"name": "shell", "parameters": schema()}}]})
    .to_string()
    .into_bytes()
}

#[test]
fn gateway_reason_first_declares_it_first_strips_it_and_gives_it_back_first() {
    // The model writes the reason first, as the schema it was sent asks.
    let upstream = Upstream::start(|_| {
        let arguments = json!({"reason": REASON, "command": ["wc", "-l", "notes.txt"]});
        Answer::Json(200, chat_completion(&[("call_1", "shell", arguments)]))
    });
    let gateway = Gateway::start(&upstream.url(), &["--reason-position", "first"]);
    let reply = gateway.post("/v1/chat/completions", &chat_body(&[]));
    assert_eq!(reply.status, 200);
    let sent = upstream.received()[0].json();
    let parameters = &sent["tools"][0]["function"]["parameters"];
    assert_eq!(
        keys(&parameters["properties"]),
        ["reason", "command", "cwd"]
    );
    assert_eq!(parameters["required"], json!(["command"]));
    assert_eq!(
        parameters["properties"]["reason"],
        reasons::layer::reason_property()
    );
    // The client gets the call without it; the log keeps it.
    let call = &reply.json()["choices"][0]["message"]["tool_calls"][0];
    assert_eq!(
        call["function"]["arguments"],
        json!({"command": ["wc", "-l", "notes.txt"]}).to_string()
    );
    let logged = read_reasons_log(&gateway.log);
    assert_eq!(logged.len(), 1);
    assert_eq!(logged[0]["reason"], REASON);

    // The next turn sends the call back as the client got it: the model sees it with its
    // reason, first, as the declaration lists it.
    let history = [
        json!({"role": "assistant", "content": null, "tool_calls": [call]}),
        json!({"role": "tool", "tool_call_id": "call_1", "content": "3 notes.txt"}),
    ];
    let body = chat_body(&history);
    assert_eq!(gateway.post("/v1/chat/completions", &body).status, 200);
    let sent = upstream.received()[1].json();
    let restored = sent["messages"][0]["tool_calls"][0]["function"]["arguments"]
        .as_str()
        .expect("arguments text");
    let restored: Value = serde_json::from_str(restored).unwrap();
    assert_eq!(keys(&restored), ["reason", "command"]);
    assert_eq!(restored["reason"], REASON);

    // The same body gives the same bytes upstream (a prompt cache keeps hitting).
    assert_eq!(gateway.post("/v1/chat/completions", &body).status, 200);
    let received = upstream.received();
    assert_eq!(received[1].body, received[2].body);
}

#[test]
fn gateway_reason_last_is_the_default() {
    let upstream = Upstream::start(|_| Answer::Json(200, chat_completion(&[])));
    let default = Gateway::start(&upstream.url(), &[]);
    let last = Gateway::start(&upstream.url(), &["--reason-position", "last"]);
    default.post("/v1/chat/completions", &chat_body(&[]));
    last.post("/v1/chat/completions", &chat_body(&[]));
    let received = upstream.received();
    let properties = &received[0].json()["tools"][0]["function"]["parameters"]["properties"];
    assert_eq!(keys(properties), ["command", "cwd", "reason"]);
    assert_eq!(received[0].body, received[1].body);
}

#[test]
fn filter_reason_first_puts_it_first_in_a_listing_and_strips_the_call() {
    let listing = json!({"jsonrpc": "2.0", "id": 1, "result": {"tools": [{"name": "fs_write",
        "inputSchema": {"type": "object", "properties": {"path": {"type": "string"},
        "text": {"type": "string"}}, "required": ["path"]}}]}});
    let call = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
        "name": "fs_write", "arguments": {"reason": "Save the draft", "path": "a.txt"}}});
    let input = format!("{listing}\n{call}\n");
    let output = output_with_stdin(&["filter", "--reason-position", "first"], input.as_bytes());
    assert_eq!(output.status.code(), Some(0));
    let lines: Vec<Value> = output
        .stdout
        .split(|byte| *byte == b'\n')
        .filter(|line| !line.is_empty())
        .map(|line| serde_json::from_slice(line).unwrap())
        .collect();
    let schema = &lines[0]["result"]["tools"][0]["inputSchema"];
    assert_eq!(keys(&schema["properties"]), ["reason", "path", "text"]);
    assert_eq!(schema["required"], json!(["path"]));
    assert_eq!(lines[1]["params"]["arguments"], json!({"path": "a.txt"}));
}

#[test]
fn an_unknown_place_is_a_usage_error() {
    let output = reasons()
        .args(["filter", "--reason-position", "middle"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("first") && stderr.contains("last"),
        "{stderr}"
    );
}
