//! Tests of the stream rules: one per rule of SPEC §3 `filter` and `proxy`.

use serde_json::{json, Value};

use super::*;
use crate::layer::{reason_property, REASON_PARAM};

fn line(value: &Value) -> Vec<u8> {
    let mut line = serde_json::to_vec(value).unwrap();
    line.push(b'\n');
    line
}

fn parsed(bytes: &[u8]) -> Value {
    serde_json::from_slice(bytes).unwrap()
}

fn mcp_tool(name: &str) -> Value {
    json!({
        "name": name,
        "inputSchema": {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}
    })
}

fn own_reason_tool(name: &str) -> Value {
    json!({
        "name": name,
        "inputSchema": {"type": "object", "properties": {"reason": {"type": "string"}}}
    })
}

fn list_result(id: Value, tools: Vec<Value>, next_cursor: Option<&str>) -> Value {
    let mut result = json!({ "tools": tools });
    if let Some(cursor) = next_cursor {
        result["nextCursor"] = json!(cursor);
    }
    json!({"jsonrpc": "2.0", "id": id, "result": result})
}

fn list_request(id: Value, cursor: Option<&str>) -> Value {
    match cursor {
        Some(cursor) => {
            json!({"jsonrpc": "2.0", "id": id, "method": "tools/list", "params": {"cursor": cursor}})
        }
        None => json!({"jsonrpc": "2.0", "id": id, "method": "tools/list"}),
    }
}

fn tools_call(id: Value, name: &str, arguments: Value) -> Value {
    json!({
        "jsonrpc": "2.0", "id": id, "method": "tools/call",
        "params": {"name": name, "arguments": arguments}
    })
}

fn with_reason() -> Value {
    json!({"path": "a.txt", "reason": "Save the draft"})
}

/// A filter that has seen one MCP listing of `names`.
fn filter_listing(names: &[&str]) -> Filter {
    let mut filter = Filter::new(Options::default());
    let tools = names.iter().map(|name| mcp_tool(name)).collect();
    filter.line(&line(&list_result(json!(1), tools, None)));
    filter
}

#[track_caller]
fn assert_untouched(out: &Line<'_>, input: &[u8]) {
    assert!(
        !out.is_rewritten(),
        "rewritten: {}",
        String::from_utf8_lossy(&out.bytes)
    );
    assert_eq!(&out.bytes[..], input);
    assert!(out.reasons.is_empty());
}

#[track_caller]
fn assert_stripped(out: &Line<'_>, call: &Value, tool: &str) {
    assert!(out.is_rewritten());
    let mut expected = call.clone();
    expected["params"]["arguments"]
        .as_object_mut()
        .unwrap()
        .shift_remove(REASON_PARAM);
    assert_eq!(&out.bytes[..], &line(&expected)[..]);
    assert_eq!(out.reasons.len(), 1);
    assert_eq!(out.reasons[0].tool, tool);
    assert_eq!(out.reasons[0].reason, json!("Save the draft"));
}

// --- filter: catalogues ---

#[test]
fn an_mcp_listing_is_augmented_and_tracked() {
    let mut filter = Filter::new(Options::default());
    let input = line(&list_result(json!(1), vec![mcp_tool("fs_write")], None));
    let out = filter.line(&input);
    assert!(out.is_rewritten());
    let value = parsed(&out.bytes);
    let schema = &value["result"]["tools"][0]["inputSchema"];
    assert_eq!(schema["properties"][REASON_PARAM], reason_property());
    assert_eq!(schema["required"], json!(["path"]));
    assert_eq!(filter.tracked().unwrap().len(), 1);
}

#[test]
fn a_rewritten_line_keeps_its_key_order_and_ending() {
    let mut filter = Filter::new(Options::default());
    let input = b"{\"result\":{\"tools\":[{\"inputSchema\":{\"properties\":{},\"type\":\"object\"},\"name\":\"x\"}],\"z\":1},\"id\":7,\"jsonrpc\":\"2.0\"}\r\n";
    let out = filter.line(input);
    let expected = format!(
        "{{\"result\":{{\"tools\":[{{\"inputSchema\":{{\"properties\":{{\"reason\":{}}},\"type\":\"object\"}},\"name\":\"x\"}}],\"z\":1}},\"id\":7,\"jsonrpc\":\"2.0\"}}\r\n",
        reason_property()
    );
    assert_eq!(std::str::from_utf8(&out.bytes).unwrap(), expected);
}

#[test]
fn a_refresh_replaces_the_tracked_tools() {
    let mut filter = filter_listing(&["fs_read", "fs_write"]);
    filter.line(&line(&list_result(
        json!(2),
        vec![mcp_tool("fs_read")],
        None,
    )));
    let call = line(&tools_call(json!(3), "fs_write", with_reason()));
    assert_untouched(&filter.line(&call), &call);
    let call = tools_call(json!(4), "fs_read", with_reason());
    assert_stripped(&filter.line(&line(&call)), &call, "fs_read");
}

#[test]
fn a_page_after_one_with_next_cursor_continues_the_listing() {
    let mut filter = Filter::new(Options::default());
    let first = list_result(json!(1), vec![mcp_tool("fs_read")], Some("page-2"));
    assert!(filter.line(&line(&first)).is_rewritten());
    let second = list_result(json!(2), vec![mcp_tool("fs_write")], None);
    assert!(filter.line(&line(&second)).is_rewritten());
    let tracked: Vec<_> = filter.tracked().unwrap().iter().cloned().collect();
    assert_eq!(tracked, ["fs_read", "fs_write"]);

    // The listing is complete: the next page is a new listing.
    filter.line(&line(&list_result(json!(3), vec![mcp_tool("clock")], None)));
    let tracked: Vec<_> = filter.tracked().unwrap().iter().cloned().collect();
    assert_eq!(tracked, ["clock"]);
}

#[test]
fn an_empty_next_cursor_ends_the_listing() {
    let mut filter = Filter::new(Options::default());
    filter.line(&line(&list_result(json!(1), vec![mcp_tool("a")], Some(""))));
    filter.line(&line(&list_result(json!(2), vec![mcp_tool("b")], None)));
    let tracked: Vec<_> = filter.tracked().unwrap().iter().cloned().collect();
    assert_eq!(tracked, ["b"]);
}

#[test]
fn a_name_left_alone_on_a_later_page_is_not_tracked() {
    let mut filter = Filter::new(Options::default());
    filter.line(&line(&list_result(
        json!(1),
        vec![mcp_tool("note")],
        Some("2"),
    )));
    filter.line(&line(&list_result(
        json!(2),
        vec![own_reason_tool("note")],
        None,
    )));
    assert!(filter.tracked().unwrap().is_empty());
}

#[test]
fn a_tool_with_its_own_reason_is_neither_augmented_nor_stripped() {
    let mut filter = Filter::new(Options::default());
    let listing = line(&list_result(json!(1), vec![own_reason_tool("note")], None));
    assert_untouched(&filter.line(&listing), &listing);
    let call = line(&tools_call(json!(2), "note", json!({"reason": "mine"})));
    assert_untouched(&filter.line(&call), &call);
}

#[test]
fn a_tool_requiring_reason_is_left_alone() {
    let mut filter = Filter::new(Options::default());
    let tool = json!({"name": "odd", "inputSchema": {"type": "object", "required": ["reason"]}});
    let listing = line(&list_result(json!(1), vec![tool], None));
    assert_untouched(&filter.line(&listing), &listing);
    let call = line(&tools_call(json!(2), "odd", json!({"reason": "theirs"})));
    assert_untouched(&filter.line(&call), &call);
}

#[test]
fn a_tool_without_properties_gains_them() {
    let mut filter = Filter::new(Options::default());
    let tool = json!({"name": "clock", "inputSchema": {"type": "object"}});
    let input = line(&list_result(json!(1), vec![tool], None));
    let out = filter.line(&input);
    let value = parsed(&out.bytes);
    assert_eq!(
        value["result"]["tools"][0]["inputSchema"]["properties"][REASON_PARAM],
        reason_property()
    );
}

#[test]
fn an_openai_chat_request_body_is_a_listing_and_its_messages_are_history() {
    let mut filter = Filter::new(Options::default());
    let history = json!([{
        "role": "assistant",
        "tool_calls": [{"id": "c1", "type": "function",
            "function": {"name": "fs_write", "arguments": "{\"path\":\"a\",\"reason\":\"kept\"}"}}]
    }]);
    let body = json!({
        "model": "m",
        "messages": history,
        "tools": [{"type": "function", "function": {"name": "fs_write",
            "parameters": {"type": "object", "properties": {"path": {"type": "string"}}}}}]
    });
    let input = line(&body);
    let out = filter.line(&input);
    let value = parsed(&out.bytes);
    assert_eq!(
        value["tools"][0]["function"]["parameters"]["properties"][REASON_PARAM],
        reason_property()
    );
    assert_eq!(value["messages"], history);
    assert!(out.reasons.is_empty());
    assert!(filter.tracked().unwrap().contains("fs_write"));
}

#[test]
fn anthropic_and_responses_request_bodies_are_listings() {
    let mut filter = Filter::new(Options::default());
    let anthropic = json!({"model": "m", "messages": [], "tools": [
        {"name": "bash", "input_schema": {"type": "object", "properties": {}}},
        {"type": "web_search_20250305", "name": "web_search"}
    ]});
    let value = parsed(&filter.line(&line(&anthropic)).bytes);
    assert_eq!(
        value["tools"][0]["input_schema"]["properties"][REASON_PARAM],
        reason_property()
    );
    assert_eq!(value["tools"][1], anthropic["tools"][1]);

    let transcript = json!([{"type": "function_call", "call_id": "c1", "name": "shell",
        "arguments": "{\"cmd\":\"ls\",\"reason\":\"kept\"}"}]);
    let responses = json!({"model": "m", "input": transcript, "tools": [
        {"type": "function", "name": "shell", "parameters": {"type": "object", "properties": {}}}
    ]});
    let value = parsed(&filter.line(&line(&responses)).bytes);
    assert_eq!(
        value["tools"][0]["parameters"]["properties"][REASON_PARAM],
        reason_property()
    );
    assert_eq!(value["input"], transcript);
    let tracked: Vec<_> = filter.tracked().unwrap().iter().cloned().collect();
    assert_eq!(tracked, ["shell"]);
}

#[test]
fn a_gemini_request_body_is_a_listing_and_its_contents_are_history() {
    let mut filter = Filter::new(Options::default());
    let contents = json!([
        {"role": "user", "parts": [{"text": "List the files."}]},
        {"role": "model", "parts": [{"functionCall": {"name": "run_shell_command",
            "args": {"command": "ls", "reason": "kept"}}}]},
        {"role": "user", "parts": [{"functionResponse": {"name": "run_shell_command",
            "response": {"output": "a.txt"}}}]}
    ]);
    let body = json!({"contents": contents, "tools": [
        {"functionDeclarations": [
            {"name": "run_shell_command", "description": "Runs a command.",
             "parametersJsonSchema": {"type": "object", "properties": {"command": {"type": "string"}}}},
            {"name": "read_file", "parameters": {"type": "OBJECT", "properties": {}}}
        ]},
        {"googleSearch": {}}
    ], "generationConfig": {"temperature": 0}});
    let input = line(&body);
    let out = filter.line(&input);
    let value = parsed(&out.bytes);
    assert_eq!(
        value["tools"][0]["functionDeclarations"][0]["parametersJsonSchema"]["properties"]
            [REASON_PARAM],
        reason_property()
    );
    assert_eq!(
        value["tools"][0]["functionDeclarations"][1]["parameters"]["properties"][REASON_PARAM],
        reason_property()
    );
    assert_eq!(value["tools"][1], json!({"googleSearch": {}}));
    assert_eq!(value["contents"], contents);
    assert!(out.reasons.is_empty());
    let tracked: Vec<_> = filter.tracked().unwrap().iter().cloned().collect();
    assert_eq!(tracked, ["read_file", "run_shell_command"]);

    // The model's answer passing by is a record too; a bare part is a call on its way.
    let answer = line(
        &json!({"candidates": [{"content": {"role": "model", "parts": [
        {"functionCall": {"name": "read_file", "args": {"reason": "r"}}}]}}]}),
    );
    assert_untouched(&filter.line(&answer), &answer);
    let part = json!({"functionCall": {"id": "g1", "name": "read_file",
        "args": {"path": "a", "reason": "Save the draft"}}});
    let input = line(&part);
    let out = filter.line(&input);
    assert_eq!(
        parsed(&out.bytes),
        json!({"functionCall": {"id": "g1", "name": "read_file", "args": {"path": "a"}}})
    );
    assert_eq!(out.reasons[0].call_id.as_deref(), Some("g1"));
    assert_eq!(out.reasons[0].to_string(), "read_file: Save the draft");
}

#[test]
fn a_bare_array_of_gemini_tools_or_declarations_is_a_listing() {
    let mut filter = Filter::new(Options::default());
    let tools = json!([{"functionDeclarations": [{"name": "glob",
        "parametersJsonSchema": {"type": "object"}}]}, {"codeExecution": {}}]);
    let value = parsed(&filter.line(&line(&tools)).bytes);
    assert_eq!(
        value[0]["functionDeclarations"][0]["parametersJsonSchema"]["properties"][REASON_PARAM],
        reason_property()
    );
    assert!(filter.tracked().unwrap().contains("glob"));
    let declarations = json!([{"name": "ls", "parametersJsonSchema": {}}]);
    filter.line(&line(&declarations));
    let tracked: Vec<_> = filter.tracked().unwrap().iter().cloned().collect();
    assert_eq!(tracked, ["ls"]);
}

#[test]
fn bare_gemini_calls_are_stripped_and_call_records_are_not() {
    let mut filter = Filter::new(Options::default());
    filter.line(&line(&json!([{"name": "ls", "parametersJsonSchema": {}}])));
    let bare = line(&json!({"name": "ls", "args": {"reason": "Save the draft", "dir": "."}}));
    let out = filter.line(&bare);
    assert_eq!(
        parsed(&out.bytes),
        json!({"name": "ls", "args": {"dir": "."}})
    );
    assert_eq!(out.reasons[0].call_id, None);
    let parts = line(&json!([
        {"functionCall": {"name": "ls", "args": {"reason": "one"}}},
        {"functionCall": {"name": "ls", "args": {"reason": "two"}}, "thoughtSignature": "s"}
    ]));
    assert_eq!(filter.line(&parts).reasons.len(), 2);
    // A Gemini CLI session's record of a call and its result is history.
    let record = line(&json!({"id": "c1", "name": "ls", "args": {"reason": "r"},
        "result": [], "status": "success", "timestamp": "t"}));
    assert_untouched(&filter.line(&record), &record);
}

#[test]
fn a_bare_array_of_declarations_is_a_listing() {
    let mut filter = Filter::new(Options::default());
    let declarations = json!([{"type": "function", "function": {"name": "f",
        "parameters": {"type": "object", "properties": {}}}}]);
    let value = parsed(&filter.line(&line(&declarations)).bytes);
    assert_eq!(
        value[0]["function"]["parameters"]["properties"][REASON_PARAM],
        reason_property()
    );
    assert!(filter.tracked().unwrap().contains("f"));
}

#[test]
fn an_empty_array_is_not_a_listing() {
    let mut filter = filter_listing(&["fs_write"]);
    assert_untouched(&filter.line(b"[]\n"), b"[]\n");
    assert!(filter.tracked().unwrap().contains("fs_write"));
}

// --- filter: calls ---

#[test]
fn a_call_before_any_listing_is_not_stripped() {
    let mut filter = Filter::new(Options::default());
    let call = line(&tools_call(json!(1), "fs_write", with_reason()));
    assert_untouched(&filter.line(&call), &call);
    assert!(filter.tracked().is_none());
}

#[test]
fn a_tools_call_to_a_tracked_tool_is_stripped_and_its_reason_reported() {
    let mut filter = filter_listing(&["fs_write"]);
    let call = tools_call(json!(2), "fs_write", with_reason());
    let input = line(&call);
    let out = filter.line(&input);
    assert_stripped(&out, &call, "fs_write");
    // The JSON-RPC id is no id a transcript records: it is kept apart from the call's id.
    assert_eq!(out.reasons[0].call_id, None);
    assert_eq!(out.reasons[0].request_id.as_deref(), Some("2"));
}

#[test]
fn a_tools_call_names_the_clients_tool_use_id_from_its_meta() {
    let mut filter = filter_listing(&["fs_write"]);
    let mut call = tools_call(json!(3), "fs_write", with_reason());
    call["params"]["_meta"] = json!({"progressToken": 9, "claudecode/toolUseId": "toolu_01A"});
    let input = line(&call);
    let out = filter.line(&input);
    assert_stripped(&out, &call, "fs_write");
    assert_eq!(out.reasons[0].call_id.as_deref(), Some("toolu_01A"));
    assert_eq!(out.reasons[0].request_id.as_deref(), Some("3"));
}

#[test]
fn a_retried_call_after_input_required_is_stripped_too() {
    let mut filter = filter_listing(&["fs_write"]);
    let mut call = tools_call(json!("retry-1"), "fs_write", with_reason());
    call["params"]["inputResponses"] = json!({"confirm": {"action": "accept"}});
    call["params"]["requestState"] = json!("opaque");
    let input = line(&call);
    let out = filter.line(&input);
    assert_stripped(&out, &call, "fs_write");
    assert_eq!(out.reasons[0].request_id.as_deref(), Some("retry-1"));
}

#[test]
fn calls_without_a_reason_or_to_other_tools_pass_byte_for_byte() {
    let mut filter = filter_listing(&["fs_write"]);
    for call in [
        tools_call(json!(2), "fs_write", json!({"path": "a"})),
        tools_call(json!(3), "fs_read", with_reason()),
        tools_call(json!(4), "fs_write", json!("not an object")),
    ] {
        let input = line(&call);
        assert_untouched(&filter.line(&input), &input);
    }
}

#[test]
fn bare_calls_in_every_envelope_are_stripped() {
    let mut filter = Filter::new(Options::default());
    filter.line(&line(&json!([
        {"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}},
        {"name": "g", "input_schema": {"type": "object"}},
        {"name": "h", "inputSchema": {"type": "object"}},
    ])));
    let openai = json!({"id": "c1", "type": "function",
        "function": {"name": "f", "arguments": "{\"x\": 1, \"reason\": \"r1\"}"}});
    let input = line(&openai);
    let out = filter.line(&input);
    assert_eq!(
        parsed(&out.bytes)["function"]["arguments"],
        json!("{\"x\":1}")
    );
    assert_eq!(out.reasons[0].call_id.as_deref(), Some("c1"));

    let anthropic = json!({"type": "tool_use", "id": "t1", "name": "g", "input": {"reason": "r2"}});
    let input = line(&anthropic);
    let out = filter.line(&input);
    assert_eq!(parsed(&out.bytes)["input"], json!({}));

    let mcp = json!({"name": "h", "arguments": {"reason": "r3", "y": 2}});
    let input = line(&mcp);
    let out = filter.line(&input);
    assert_eq!(
        parsed(&out.bytes),
        json!({"name": "h", "arguments": {"y": 2}})
    );

    let batch = json!([openai, anthropic]);
    let input = line(&batch);
    let out = filter.line(&input);
    assert_eq!(out.reasons.len(), 2);
}

#[test]
fn a_responses_function_call_is_stripped() {
    let mut filter = Filter::new(Options::default());
    filter.line(&line(&json!({"input": [], "tools": [
        {"type": "function", "name": "shell", "parameters": {"type": "object"}}
    ]})));
    let call = json!({"type": "function_call", "call_id": "fc1", "name": "shell",
        "arguments": "{\"cmd\":\"ls\",\"reason\":\"look\"}"});
    let input = line(&call);
    let out = filter.line(&input);
    assert_eq!(parsed(&out.bytes)["arguments"], json!("{\"cmd\":\"ls\"}"));
    assert_eq!(out.reasons[0].call_id.as_deref(), Some("fc1"));
}

#[test]
fn recorded_messages_pass_untouched() {
    let mut filter = filter_listing(&["fs_write"]);
    for recorded in [
        json!({"role": "assistant", "tool_calls": [{"id": "c1", "type": "function",
            "function": {"name": "fs_write", "arguments": "{\"reason\":\"r\"}"}}]}),
        json!({"type": "assistant", "message": {"role": "assistant", "content": [
            {"type": "text", "text": "Writing."},
            {"type": "tool_use", "id": "t1", "name": "fs_write", "input": {"reason": "r"}}]}}),
        json!([{"type": "text", "text": "Writing."},
            {"type": "tool_use", "id": "t1", "name": "fs_write", "input": {"reason": "r"}}]),
        json!({"input": [{"type": "function_call", "call_id": "c", "name": "fs_write",
            "arguments": "{\"reason\":\"r\"}"}]}),
        json!({"type": "response_item", "payload": {"type": "function_call", "name": "fs_write",
            "arguments": "{\"reason\":\"r\"}", "call_id": "c"}}),
    ] {
        let input = line(&recorded);
        assert_untouched(&filter.line(&input), &input);
    }
}

#[test]
fn other_methods_with_a_name_and_arguments_are_not_calls() {
    let mut filter = filter_listing(&["fs_write"]);
    let prompt = line(&json!({"jsonrpc": "2.0", "id": 9, "method": "prompts/get",
        "params": {"name": "fs_write", "arguments": {"reason": "r"}}}));
    assert_untouched(&filter.line(&prompt), &prompt);
}

#[test]
fn a_json_rpc_batch_is_taken_message_by_message() {
    let mut filter = filter_listing(&["fs_write"]);
    let batch = json!([
        tools_call(json!(2), "fs_write", with_reason()),
        {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 1, "reason": "x"}}
    ]);
    let input = line(&batch);
    let out = filter.line(&input);
    let value = parsed(&out.bytes);
    assert_eq!(value[0]["params"]["arguments"], json!({"path": "a.txt"}));
    assert_eq!(value[1], batch[1]);
    assert_eq!(out.reasons.len(), 1);
}

// --- filter: everything else, byte for byte ---

#[test]
fn cancellations_keep_their_own_reason() {
    let mut filter = filter_listing(&["fs_write"]);
    let cancel = br#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":2,"reason":"User requested cancellation"}}"#;
    assert_untouched(&filter.line(cancel), cancel);
}

#[test]
fn lines_that_are_not_json_objects_pass_byte_for_byte() {
    let mut filter = filter_listing(&["fs_write"]);
    for input in [
        &b""[..],
        b"\n",
        b"   \r\n",
        b"{\"method\":\"tools/call\",\"params\":{\"name\":\"fs_write\",\"arguments\":{\"reason\":\n",
        b"{\"tools\": [\xff\xfe]}\n",
        b"\"tools/call\"\n",
        b"42",
        b"{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"tools\":\"none\"}}\n",
    ] {
        assert_untouched(&filter.line(input), input);
    }
}

#[test]
fn invalid_utf8_inside_a_call_leaves_it_alone() {
    let mut filter = filter_listing(&["fs_write"]);
    let input = b"{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":{\"name\":\"fs_write\",\"arguments\":{\"reason\":\"\xff\"}}}\n";
    assert_untouched(&filter.line(input), input);
}

#[test]
fn a_last_line_without_ending_stays_without() {
    let mut filter = filter_listing(&["fs_write"]);
    let call = serde_json::to_vec(&tools_call(json!(2), "fs_write", with_reason())).unwrap();
    let out = filter.line(&call);
    assert!(out.is_rewritten());
    assert_ne!(out.bytes.last(), Some(&b'\n'));
}

#[test]
fn keys_spelled_with_escapes_are_still_seen() {
    let mut filter = Filter::new(Options::default());
    let listing = br#"{"jsonrpc":"2.0","id":1,"result":{"\u0074ools":[{"name":"x","inputSchema":{"type":"object"}}]}}"#;
    assert!(filter.line(listing).is_rewritten());
    assert!(filter.tracked().unwrap().contains("x"));
}

// --- filter: options ---

#[test]
fn without_augment_catalogues_pass_but_still_decide_the_strip() {
    let mut filter = Filter::new(Options {
        augment: false,
        strip: true,
        ..Options::default()
    });
    let listing = line(&list_result(json!(1), vec![mcp_tool("fs_write")], None));
    assert_untouched(&filter.line(&listing), &listing);
    let call = tools_call(json!(2), "fs_write", with_reason());
    assert_stripped(&filter.line(&line(&call)), &call, "fs_write");
}

#[test]
fn without_strip_calls_pass() {
    let mut filter = Filter::new(Options {
        augment: true,
        strip: false,
        ..Options::default()
    });
    let listing = line(&list_result(json!(1), vec![mcp_tool("fs_write")], None));
    assert!(filter.line(&listing).is_rewritten());
    let call = line(&tools_call(json!(2), "fs_write", with_reason()));
    assert_untouched(&filter.line(&call), &call);
}

// --- reporting ---

#[test]
fn a_taken_reason_reads_as_one_line() {
    let taken = TakenReason {
        tool: "fs_write".to_owned(),
        call_id: None,
        request_id: None,
        reason: json!("first line\nsecond \u{1b}[31mred"),
        arguments: Value::Null,
    };
    assert_eq!(taken.to_string(), "fs_write: first line␊second ␛[31mred");
    let not_text = TakenReason {
        reason: json!({"why": 1}),
        ..taken.clone()
    };
    assert_eq!(not_text.to_string(), r#"fs_write: {"why":1}"#);
}

// --- proxy halves ---

#[test]
fn the_proxy_augments_only_answers_to_tools_list() {
    let (mut client, mut server) = proxy_halves(ReasonPosition::Last);
    // A result with a `tools` array that answers some other request is not a listing.
    let other = line(&list_result(json!(1), vec![mcp_tool("fs_write")], None));
    assert_untouched(&server.line(&other), &other);

    let request = line(&list_request(json!(2), None));
    assert_untouched(&client.line(&request), &request);
    let listing = line(&list_result(json!(2), vec![mcp_tool("fs_write")], None));
    assert!(server.line(&listing).is_rewritten());
    // Answered: the same id again is no longer a listing.
    assert_untouched(&server.line(&listing), &listing);

    let call = tools_call(json!(3), "fs_write", with_reason());
    assert_stripped(&client.line(&line(&call)), &call, "fs_write");
}

#[test]
fn the_proxy_tells_number_ids_from_string_ids() {
    let (mut client, mut server) = proxy_halves(ReasonPosition::Last);
    client.line(&line(&list_request(json!("1"), None)));
    let listing = line(&list_result(json!(1), vec![mcp_tool("fs_write")], None));
    assert_untouched(&server.line(&listing), &listing);
    let listing = line(&list_result(json!("1"), vec![mcp_tool("fs_write")], None));
    assert!(server.line(&listing).is_rewritten());
}

#[test]
fn the_proxy_strips_nothing_before_a_listing() {
    let (mut client, _server) = proxy_halves(ReasonPosition::Last);
    let call = line(&tools_call(json!(1), "fs_write", with_reason()));
    assert_untouched(&client.line(&call), &call);
}

#[test]
fn the_proxy_continues_a_listing_when_the_request_has_a_cursor() {
    let (mut client, mut server) = proxy_halves(ReasonPosition::Last);
    client.line(&line(&list_request(json!(1), None)));
    server.line(&line(&list_result(
        json!(1),
        vec![mcp_tool("a")],
        Some("p2"),
    )));
    client.line(&line(&list_request(json!(2), Some("p2"))));
    server.line(&line(&list_result(json!(2), vec![mcp_tool("b")], None)));
    for (id, tool) in [(3, "a"), (4, "b")] {
        let call = tools_call(json!(id), tool, with_reason());
        assert_stripped(&client.line(&line(&call)), &call, tool);
    }
    // A request without a cursor starts a new listing.
    client.line(&line(&list_request(json!(5), None)));
    server.line(&line(&list_result(json!(5), vec![mcp_tool("b")], None)));
    let call = line(&tools_call(json!(6), "a", with_reason()));
    assert_untouched(&client.line(&call), &call);
}

#[test]
fn the_proxy_forgets_a_listing_request_answered_with_an_error() {
    let (mut client, mut server) = proxy_halves(ReasonPosition::Last);
    client.line(&line(&list_request(json!(1), None)));
    let error = line(&json!({"jsonrpc": "2.0", "id": 1, "error": {"code": -1, "message": "no"}}));
    assert_untouched(&server.line(&error), &error);
    let late = line(&list_result(json!(1), vec![mcp_tool("a")], None));
    assert_untouched(&server.line(&late), &late);
}

#[test]
fn the_proxy_keeps_the_rest_of_a_2026_listing() {
    let (mut client, mut server) = proxy_halves(ReasonPosition::Last);
    client.line(&line(&list_request(json!("l1"), None)));
    let mut listing = list_result(json!("l1"), vec![mcp_tool("a")], None);
    listing["result"]["ttlMs"] = json!(60000);
    listing["result"]["resultType"] = json!("complete");
    let value = parsed(&server.line(&line(&listing)).bytes);
    assert_eq!(value["result"]["ttlMs"], json!(60000));
    assert_eq!(value["result"]["resultType"], json!("complete"));
}

#[test]
fn the_proxy_passes_everything_else_untouched() {
    let (mut client, mut server) = proxy_halves(ReasonPosition::Last);
    client.line(&line(&list_request(json!(1), None)));
    server.line(&line(&list_result(
        json!(1),
        vec![mcp_tool("fs_write")],
        None,
    )));
    for message in [
        json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
            "params": {"requestId": 2, "reason": "the user stopped it"}}),
        json!({"jsonrpc": "2.0", "id": "s1", "result": {"roots": []}}),
        json!({"name": "fs_write", "arguments": {"reason": "a bare call is not MCP"}}),
    ] {
        let input = line(&message);
        assert_untouched(&client.line(&input), &input);
    }
    let sampling = line(
        &json!({"jsonrpc": "2.0", "id": "s2", "method": "sampling/createMessage",
        "params": {"messages": [], "tools": [mcp_tool("x")], "maxTokens": 10}}),
    );
    assert_untouched(&server.line(&sampling), &sampling);
}

#[test]
fn the_proxy_sees_a_method_written_with_an_escaped_slash() {
    let (mut client, mut server) = proxy_halves(ReasonPosition::Last);
    client.line(br#"{"jsonrpc":"2.0","id":1,"method":"tools\/list"}"#);
    server.line(&line(&list_result(
        json!(1),
        vec![mcp_tool("fs_write")],
        None,
    )));
    let out = client.line(
        br#"{"jsonrpc":"2.0","id":2,"method":"tools\/call","params":{"name":"fs_write","arguments":{"reason":"r"}}}"#,
    );
    assert_eq!(out.reasons.len(), 1);
}

#[test]
fn prose_that_mentions_tools_is_not_looked_at() {
    let mut filter = filter_listing(&["fs_write"]);
    let result = line(&json!({"jsonrpc": "2.0", "id": 5, "result": {"content": [
        {"type": "text", "text": "tools arguments input parameters"}]}}));
    assert_untouched(&filter.line(&result), &result);
}

/// The property names of the first MCP declaration of a `tools/list` result line.
fn listed_property_names(line: &[u8]) -> Vec<String> {
    parsed(line)["result"]["tools"][0]["inputSchema"]["properties"]
        .as_object()
        .expect("properties")
        .keys()
        .cloned()
        .collect()
}

#[test]
fn the_filter_and_the_proxy_put_the_reason_at_the_place_asked() {
    let tool = json!({"name": "fs_write", "inputSchema": {"type": "object",
        "properties": {"path": {"type": "string"}, "text": {"type": "string"}},
        "required": ["path"]}});
    let listing = line(&list_result(json!(1), vec![tool.clone()], None));
    for (position, order) in [
        (ReasonPosition::First, ["reason", "path", "text"]),
        (ReasonPosition::Last, ["path", "text", "reason"]),
    ] {
        let mut filter = Filter::new(Options {
            position,
            ..Options::default()
        });
        let out = filter.line(&listing);
        assert_eq!(
            listed_property_names(&out.bytes),
            order,
            "filter {position:?}"
        );
        assert_eq!(
            parsed(&out.bytes)["result"]["tools"][0]["inputSchema"]["required"],
            json!(["path"])
        );
        // The same line gives the same bytes.
        assert_eq!(filter.line(&listing).bytes, out.bytes);
        let call = line(&tools_call(json!(2), "fs_write", with_reason()));
        let stripped = filter.line(&call);
        assert_eq!(
            parsed(&stripped.bytes)["params"]["arguments"],
            json!({"path": "a.txt"})
        );

        // A bare array of declarations (a request body's `tools` too) gets the same place.
        let bare_line = line(&json!([tool.clone()]));
        let bare = filter.line(&bare_line);
        let names: Vec<String> = parsed(&bare.bytes)[0]["inputSchema"]["properties"]
            .as_object()
            .unwrap()
            .keys()
            .cloned()
            .collect();
        assert_eq!(names, order, "bare {position:?}");

        let (mut client, mut server) = proxy_halves(position);
        client.line(&line(&list_request(json!(1), None)));
        let out = server.line(&listing);
        assert_eq!(
            listed_property_names(&out.bytes),
            order,
            "proxy {position:?}"
        );
        let stripped = client.line(&call);
        assert_eq!(
            parsed(&stripped.bytes)["params"]["arguments"],
            json!({"path": "a.txt"})
        );
    }
}
