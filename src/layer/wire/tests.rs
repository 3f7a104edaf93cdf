//! Each wire format: where its requests declare tools, where its answers carry calls, and what
//! it leaves alone.

use serde_json::{json, Value};

use super::*;
use crate::layer::REASON_PARAM;

const ALL: [Api; 4] = [
    Api::Anthropic,
    Api::OpenAiChat,
    Api::OpenAiResponses,
    Api::Gemini,
];

fn names(names: &[&str]) -> ToolNames {
    names.iter().map(|name| (*name).to_owned()).collect()
}

fn schema() -> Value {
    json!({ "type": "object", "properties": { "command": { "type": "string" } } })
}

fn tools(value: Value) -> Vec<Value> {
    match value {
        Value::Array(tools) => tools,
        other => panic!("not an array: {other}"),
    }
}

/// `strip_answer`, returning what it took.
fn strip(wire: Api, answer: &mut Value, tracked: &ToolNames) -> Vec<TakenReason> {
    let mut taken = Vec::new();
    let changed = strip_answer(wire, answer, tracked, &mut taken);
    assert_eq!(changed, !taken.is_empty());
    taken
}

#[test]
fn each_wire_augments_its_own_shape_only() {
    let anthropic = json!({ "name": "bash", "input_schema": schema() });
    let chat =
        json!({ "type": "function", "function": { "name": "shell", "parameters": schema() } });
    let responses = json!({ "type": "function", "name": "exec_command", "parameters": schema() });
    let gemini = json!({ "functionDeclarations": [
        { "name": "run_shell_command", "parametersJsonSchema": schema() }] });
    let sent = [anthropic, chat, responses, gemini];
    for (own, (wire, name)) in ALL
        .into_iter()
        .zip(["bash", "shell", "exec_command", "run_shell_command"])
        .enumerate()
    {
        let listing = augment_tools(wire, &sent, ReasonPosition::Last);
        assert!(listing.changed);
        assert_eq!(listing.tracked, names(&[name]), "{wire:?}");
        for (index, (published, sent)) in listing.tools.iter().zip(&sent).enumerate() {
            assert_eq!(published == sent, index != own, "{wire:?} tool {index}");
        }
    }
}

#[test]
fn an_empty_tools_array_tracks_nothing() {
    for wire in ALL {
        let listing = augment_tools(wire, &[], ReasonPosition::Last);
        assert!(!listing.changed && listing.tools.is_empty() && listing.tracked.is_empty());
    }
}

#[test]
fn a_foreign_declaration_still_keeps_its_name_from_being_tracked() {
    // An Anthropic-shaped `bash` in a Chat request is not read, and the Chat `bash` beside it is
    // then not the only `bash`: when in doubt, do not strip.
    let sent = tools(json!([
        { "type": "function", "function": { "name": "bash", "parameters": schema() } },
        { "name": "bash", "input_schema": schema() }
    ]));
    assert!(augment_tools(Api::OpenAiChat, &sent, ReasonPosition::Last)
        .tracked
        .is_empty());
}

#[test]
fn hosted_free_text_and_client_search_tools_go_upstream_as_they_came() {
    let cases = [
        (
            Api::Anthropic,
            json!([{ "type": "web_search_20250305", "name": "web_search", "max_uses": 5 },
                   { "type": "bash_20250124", "name": "bash" }]),
        ),
        (
            Api::OpenAiResponses,
            json!([{ "type": "custom", "name": "apply_patch", "format": { "type": "grammar" } },
                   { "type": "local_shell" },
                   { "type": "web_search", "external_web_access": true },
                   { "type": "mcp", "server_label": "x", "server_url": "https://x" },
                   // Codex CLI 0.171.0: client-run, with an object schema, but no function; and
                   // a namespace of functions whose calls' shape is not known yet.
                   { "type": "tool_search", "execution": "client",
                     "parameters": { "type": "object", "properties": { "query": {} } } },
                   { "type": "namespace", "name": "multi_agent_v1", "tools": [
                     { "type": "function", "name": "spawn_agent", "parameters": schema() }] }]),
        ),
        (
            Api::OpenAiChat,
            json!([{ "type": "custom", "custom": { "name": "apply_patch" } }]),
        ),
        (
            Api::Gemini,
            json!([{ "googleSearch": {} }, { "codeExecution": {} }, { "urlContext": {} },
                   { "name": "bare", "parametersJsonSchema": {} }]),
        ),
    ];
    for (wire, sent) in cases {
        let sent = tools(sent);
        let listing = augment_tools(wire, &sent, ReasonPosition::Last);
        assert!(!listing.changed, "{wire:?}");
        assert_eq!(listing.tools, sent);
        assert!(listing.tracked.is_empty());
    }
}

#[test]
fn anthropic_custom_type_is_read() {
    let sent = tools(json!([{ "type": "custom", "name": "bash", "input_schema": schema() }]));
    assert_eq!(
        augment_tools(Api::Anthropic, &sent, ReasonPosition::Last).tracked,
        names(&["bash"])
    );
}

#[test]
fn same_tools_give_byte_identical_output() {
    let sent = tools(json!([{ "functionDeclarations": [
        { "name": "b", "parameters": { "properties": { "z": {}, "a": {} } } },
        { "name": "a", "parametersJsonSchema": {} }] }]));
    let text = |listing: AugmentedTools| serde_json::to_string(&listing.tools).unwrap();
    assert_eq!(
        text(augment_tools(Api::Gemini, &sent, ReasonPosition::Last)),
        text(augment_tools(Api::Gemini, &sent, ReasonPosition::Last))
    );
}

#[test]
fn anthropic_answer_loses_reasons_from_tool_use_blocks_only() {
    let mut answer = json!({ "id": "msg_1", "content": [
        { "type": "text", "text": "Looking." },
        { "type": "tool_use", "id": "toolu_1", "name": "bash",
          "input": { "command": "ls", "reason": "See the files" } },
        { "type": "server_tool_use", "id": "srvtoolu_1", "name": "bash",
          "input": { "reason": "hosted" } },
        { "type": "tool_use", "id": "toolu_2", "name": "other", "input": { "reason": "r" } }
    ] });
    let taken = strip(Api::Anthropic, &mut answer, &names(&["bash"]));
    assert_eq!(taken.len(), 1);
    assert_eq!(
        (taken[0].tool.as_str(), taken[0].call_id.as_deref()),
        ("bash", Some("toolu_1"))
    );
    assert_eq!(
        answer.pointer("/content/1/input"),
        Some(&json!({ "command": "ls" }))
    );
    assert_eq!(
        answer.pointer("/content/2/input/reason"),
        Some(&json!("hosted"))
    );
    assert_eq!(answer.pointer("/content/3/input/reason"), Some(&json!("r")));
}

#[test]
fn chat_answer_loses_reasons_from_every_choice_and_parallel_call() {
    let mut answer = json!({ "choices": [
        { "index": 0, "message": { "role": "assistant", "tool_calls": [
            { "id": "call_1", "type": "function", "function": { "name": "shell",
              "arguments": "{\"command\":\"ls\",\"reason\":\"List\"}" } },
            { "id": "call_2", "type": "function", "function": { "name": "shell",
              "arguments": "{\"reason\":\"Again\",\"command\":\"pwd\"}" } }] } },
        { "index": 1, "message": { "role": "assistant", "content": "no calls" } },
        { "index": 2, "message": { "role": "assistant", "tool_calls": [
            { "id": "call_3", "type": "function", "function": { "name": "shell",
              "arguments": "{\"command\":\"true\"}" } }] } }
    ] });
    let taken = strip(Api::OpenAiChat, &mut answer, &names(&["shell"]));
    let ids: Vec<_> = taken
        .iter()
        .map(|t| t.call_id.as_deref().unwrap())
        .collect();
    assert_eq!(ids, ["call_1", "call_2"]);
    assert_eq!(
        answer.pointer("/choices/0/message/tool_calls/1/function/arguments"),
        Some(&json!("{\"command\":\"pwd\"}"))
    );
    assert_eq!(
        answer.pointer("/choices/2/message/tool_calls/0/function/arguments"),
        Some(&json!("{\"command\":\"true\"}"))
    );
}

#[test]
fn responses_answer_loses_reasons_from_function_call_items_only() {
    let mut answer = json!({ "id": "resp_1", "output": [
        { "type": "reasoning", "id": "rs_1", "summary": [] },
        { "type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "exec_command",
          "arguments": "{\"cmd\":\"echo hi\",\"reason\":\"Say hi\"}" },
        { "type": "custom_tool_call", "call_id": "call_2", "name": "apply_patch",
          "input": "*** Begin Patch" },
        { "type": "mcp_call", "id": "mcp_1", "name": "exec_command",
          "arguments": "{\"reason\":\"hosted\"}", "server_label": "x" }
    ] });
    let before_mcp = answer["output"][3].clone();
    let taken = strip(Api::OpenAiResponses, &mut answer, &names(&["exec_command"]));
    assert_eq!(taken.len(), 1);
    assert_eq!(taken[0].call_id.as_deref(), Some("call_1"));
    assert_eq!(taken[0].reason, json!("Say hi"));
    assert_eq!(
        answer.pointer("/output/1/arguments"),
        Some(&json!("{\"cmd\":\"echo hi\"}"))
    );
    assert_eq!(answer["output"][3], before_mcp);
}

#[test]
fn gemini_chunk_and_array_lose_reasons_from_function_call_parts() {
    let chunk = json!({ "candidates": [{ "content": { "role": "model", "parts": [
        { "text": "Running it." },
        { "functionCall": { "name": "run_shell_command",
          "args": { "command": "echo hi", "reason": "Say hi" } }, "thoughtSignature": "c2ln" },
        { "functionCall": { "id": "gc_2", "name": "run_shell_command",
          "args": { "reason": "Twice", "command": "echo again" } } }
    ] }, "index": 0 }], "modelVersion": "gemini-2.5-pro" });
    let tracked = names(&["run_shell_command"]);
    let mut one = chunk.clone();
    let taken = strip(Api::Gemini, &mut one, &tracked);
    assert_eq!(taken.len(), 2);
    assert_eq!(taken[0].call_id, None);
    assert_eq!(taken[1].call_id.as_deref(), Some("gc_2"));
    assert_eq!(
        serde_json::to_string(&one["candidates"][0]["content"]["parts"][1]).unwrap(),
        r#"{"functionCall":{"name":"run_shell_command","args":{"command":"echo hi"}},"thoughtSignature":"c2ln"}"#
    );
    // Without `alt=sse`, `streamGenerateContent` answers with an array of such chunks.
    let mut array = json!([chunk.clone(), { "candidates": [] }, chunk]);
    assert_eq!(strip(Api::Gemini, &mut array, &tracked).len(), 4);
    assert!(array
        .pointer("/2/candidates/0/content/parts/2/functionCall/args/reason")
        .is_none());
}

#[test]
fn answers_without_tracked_tools_are_left_exactly() {
    let mut answer = json!({ "candidates": [{ "content": { "parts": [
        { "functionCall": { "name": "ls", "args": { "reason": "r" } } }] } }] });
    let before = answer.clone();
    assert!(strip(Api::Gemini, &mut answer, &ToolNames::new()).is_empty());
    assert!(strip(Api::Gemini, &mut answer, &names(&["other"])).is_empty());
    // Another API's reading finds nothing in this one's answer.
    for wire in [Api::Anthropic, Api::OpenAiChat, Api::OpenAiResponses] {
        assert!(strip(wire, &mut answer, &names(&["ls"])).is_empty());
    }
    assert_eq!(answer, before);
}

#[test]
fn a_tool_that_declares_its_own_reason_is_never_stripped() {
    // Gemini CLI 0.61.0 declares `enter_plan_mode` with a `reason` of its own.
    let sent = tools(
        json!([{ "functionDeclarations": [{ "name": "enter_plan_mode",
        "parametersJsonSchema": { "type": "object",
            "properties": { REASON_PARAM: { "type": "string" } } } }] }]),
    );
    let listing = augment_tools(Api::Gemini, &sent, ReasonPosition::Last);
    assert!(!listing.changed);
    let mut answer = json!({ "candidates": [{ "content": { "parts": [{ "functionCall": {
        "name": "enter_plan_mode", "args": { "reason": "The task needs a plan." } } }] } }] });
    assert!(strip(Api::Gemini, &mut answer, &listing.tracked).is_empty());
}

#[test]
fn strip_answer_call_takes_one_assembled_call_in_its_own_shape_only() {
    // Assembled from Anthropic `input_json_delta` fragments: the input is still a string.
    let mut assembled = json!({ "type": "tool_use", "id": "toolu_9", "name": "bash",
        "input": "{\"command\":\"ls\",\"reason\":\"r\"}" });
    let mut taken = Vec::new();
    assert!(strip_answer_call(
        Api::Anthropic,
        &mut assembled,
        &names(&["bash"]),
        &mut taken
    ));
    assert_eq!(taken[0].call_id.as_deref(), Some("toolu_9"));
    assert_eq!(assembled["input"], json!("{\"command\":\"ls\"}"));
    let mut chat = json!({ "id": "c", "type": "function", "function": { "name": "bash",
        "arguments": "{\"reason\":\"r\"}" } });
    assert!(!strip_answer_call(
        Api::Anthropic,
        &mut chat,
        &names(&["bash"]),
        &mut taken
    ));
    assert_eq!(taken.len(), 1);
}

/// The layer's own `reason`, as `reasons proxy` writes it, in each wire's declaration.
fn already_augmented(wire: Api, name: &str) -> Value {
    let mut schema = schema();
    schema["properties"][REASON_PARAM] = crate::layer::reason_property();
    match wire {
        Api::Anthropic => json!({ "name": name, "input_schema": schema }),
        Api::OpenAiChat => {
            json!({ "type": "function", "function": { "name": name, "parameters": schema } })
        }
        Api::OpenAiResponses => json!({ "type": "function", "name": name, "parameters": schema }),
        _ => json!({ "functionDeclarations": [{ "name": name, "parametersJsonSchema": schema }] }),
    }
}

#[test]
fn a_declaration_carrying_the_layers_own_reason_is_tracked_as_it_came() {
    for wire in ALL {
        let sent = [already_augmented(wire, "mcp__everything__echo")];
        let listing = augment_tools(wire, &sent, ReasonPosition::Last);
        // No second property, nothing rewritten: the body can go on byte for byte.
        assert!(!listing.changed, "{wire:?}");
        assert_eq!(listing.tools, sent, "{wire:?}");
        assert_eq!(
            listing.tracked,
            names(&["mcp__everything__echo"]),
            "{wire:?}"
        );
    }
}

#[test]
fn any_other_reason_property_is_still_the_tools_own() {
    for wire in ALL {
        let mut foreign = already_augmented(wire, "ticket");
        let text = foreign
            .to_string()
            .replace("Shown to the human", "Shown to the auditor");
        foreign = serde_json::from_str(&text).unwrap();
        // And the layer's own property, listed as required, is somebody's: the layer never
        // requires it.
        let mut required = already_augmented(wire, "refund");
        let schema = match wire {
            Api::Anthropic => "/input_schema",
            Api::OpenAiChat => "/function/parameters",
            Api::OpenAiResponses => "/parameters",
            _ => "/functionDeclarations/0/parametersJsonSchema",
        };
        required.pointer_mut(schema).unwrap()["required"] = json!([REASON_PARAM]);
        let sent = [foreign, required];
        let listing = augment_tools(wire, &sent, ReasonPosition::Last);
        assert!(!listing.changed, "{wire:?}");
        assert!(
            listing.tracked.is_empty(),
            "{wire:?}: {:?}",
            listing.tracked
        );
    }
}
