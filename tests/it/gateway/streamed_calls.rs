//! Every edge case of a streamed call's assembly, through the real gateway and the reader: what
//! the reader finds in the stream as the model sent it is exactly what the gateway takes off
//! (the same calls, the same reasons), and no reason of an augmented tool reaches the client.

use std::collections::BTreeMap;

use serde_json::{json, Value};

use reasons::formats::{read_log, Event, ReadOptions};
use reasons::record::Status;

use crate::util::gateway::Gateway;
use crate::util::read_reasons_log;
use crate::util::upstream::{message_events, sse, whole_start_events, Answer, Upstream};

/// One stream as the model's API sends it, and the request that asks for it.
struct Case {
    name: &'static str,
    path: String,
    request: Value,
    /// The bytes the upstream writes, each piece written and flushed on its own.
    pieces: Vec<Vec<u8>>,
    /// Whether the upstream drops the connection after the pieces, ending nothing.
    cut: bool,
}

fn object_schema() -> Value {
    json!({"type": "object", "properties": {"command": {"type": "string"}}})
}

fn chat_request(case: &str) -> Value {
    json!({"model": case, "stream": true,
        "messages": [{"role": "user", "content": "go"}],
        "tools": [{"type": "function", "function": {"name": "shell", "parameters": object_schema()}}]})
}

fn chat_data(choices: Value) -> Vec<u8> {
    let data = json!({"id": "chatcmpl-s", "object": "chat.completion.chunk", "created": 1,
        "model": "scripted", "choices": choices});
    format!("data: {data}\n\n").into_bytes()
}

fn chat_delta(choice: u64, delta: Value) -> Vec<u8> {
    chat_data(json!([{"index": choice, "delta": delta, "finish_reason": null}]))
}

fn chat_start(choice: u64, index: u64, id: &str, name: &str) -> Vec<u8> {
    chat_delta(
        choice,
        json!({"tool_calls": [{"index": index, "id": id, "type": "function",
            "function": {"name": name, "arguments": ""}}]}),
    )
}

fn chat_fragment(choice: u64, index: u64, text: &str) -> Vec<u8> {
    chat_delta(
        choice,
        json!({"tool_calls": [{"index": index, "function": {"arguments": text}}]}),
    )
}

fn chat_finish(choice: u64) -> Vec<u8> {
    chat_data(json!([{"index": choice, "delta": {}, "finish_reason": "tool_calls"}]))
}

const DONE: &[u8] = b"data: [DONE]\n\n";

/// `text` cut into pieces of `size` characters.
fn pieces(text: &str, size: usize) -> Vec<String> {
    let chars: Vec<char> = text.chars().collect();
    chars
        .chunks(size)
        .map(|piece| piece.iter().collect())
        .collect()
}

fn arguments(command: &str, reason: &str) -> String {
    json!({"command": command, "reason": reason}).to_string()
}

fn chat_cases() -> Vec<Case> {
    let case = |name: &'static str, pieces: Vec<Vec<u8>>| Case {
        name,
        path: "/v1/chat/completions".to_owned(),
        request: chat_request(name),
        pieces,
        cut: false,
    };
    let mut cases = Vec::new();

    // Some OpenAI-compatible servers send every call at index 0: a new id starts the next call.
    let mut events = vec![chat_delta(0, json!({"role": "assistant", "content": null}))];
    for (id, reason) in [("c1", "R-first-at-zero"), ("c2", "R-second-at-zero")] {
        events.push(chat_start(0, 0, id, "shell"));
        for piece in pieces(&arguments("ls", reason), 6) {
            events.push(chat_fragment(0, 0, &piece));
        }
    }
    events.extend([chat_finish(0), DONE.to_vec()]);
    cases.push(case("index_zero_reused_with_new_ids", events));

    // `n: 2`: each choice has its own calls, at the same indices.
    let mut events = vec![
        chat_start(0, 0, "n0", "shell"),
        chat_start(1, 0, "n1", "shell"),
    ];
    let first = pieces(&arguments("a", "R-choice-zero"), 5);
    let second = pieces(&arguments("b", "R-choice-one"), 4);
    for at in 0..first.len().max(second.len()) {
        if let Some(piece) = first.get(at) {
            events.push(chat_fragment(0, 0, piece));
        }
        if let Some(piece) = second.get(at) {
            events.push(chat_fragment(1, 0, piece));
        }
    }
    events.push(chat_data(json!([
        {"index": 0, "delta": {}, "finish_reason": "tool_calls"},
        {"index": 1, "delta": {}, "finish_reason": "tool_calls"}
    ])));
    events.push(DONE.to_vec());
    cases.push(case("two_choices", events));

    // Parallel calls whose fragments interleave by index.
    let mut events = vec![
        chat_start(0, 0, "p0", "shell"),
        chat_start(0, 1, "p1", "shell"),
    ];
    let first = pieces(&arguments("x", "R-parallel-zero"), 3);
    let second = pieces(&arguments("y", "R-parallel-one"), 3);
    for at in 0..first.len().max(second.len()) {
        if let Some(piece) = second.get(at) {
            events.push(chat_fragment(0, 1, piece));
        }
        if let Some(piece) = first.get(at) {
            events.push(chat_fragment(0, 0, piece));
        }
    }
    events.extend([chat_finish(0), DONE.to_vec()]);
    cases.push(case("interleaved_parallel_calls", events));

    // Fragments that split the arguments' JSON escapes (`\"`, `\u00e9`, `\\`), and bytes
    // written so that a multi-byte character is cut between two writes.
    let text = r#"{"command":"echo \"h\u00e9 \\ \ud83d\ude00\"","reason":"R-split \"quoted\" caf\u00e9 😀 ünïcode"}"#;
    let mut events = vec![chat_start(0, 0, "e1", "shell")];
    for piece in pieces(text, 3) {
        let event = chat_fragment(0, 0, &piece);
        match event.iter().position(|byte| *byte >= 0x80) {
            // A write ends inside the first multi-byte character of this event.
            Some(at) => {
                events.push(event[..at + 1].to_vec());
                events.push(event[at + 1..].to_vec());
            }
            None => events.push(event),
        }
    }
    events.extend([chat_finish(0), DONE.to_vec()]);
    cases.push(case("fragments_split_escapes_and_characters", events));

    // Arguments that never complete before the finish: sent on untouched (when in doubt, do
    // not strip), nothing logged.
    let events = vec![
        chat_start(0, 0, "i1", "shell"),
        chat_fragment(0, 0, "{\"command\":\"ls\","),
        chat_fragment(0, 0, "\"reason\":\"R-never-ends"),
        chat_finish(0),
        DONE.to_vec(),
    ];
    cases.push(case("arguments_never_complete", events));

    // No `[DONE]`, no finish: the stream broke off inside the call, which is not sent on and
    // not logged, however complete its arguments look.
    let mut events = vec![chat_start(0, 0, "d1", "shell")];
    for piece in pieces(&arguments("pwd", "R-no-done"), 4) {
        events.push(chat_fragment(0, 0, &piece));
    }
    cases.push(case("done_missing", events));
    cases
}

/// The calls a stream completes by its API's rule, as the gateway logs them: the reader's, but
/// for those a stream cut off (`cut_before_block_stop`, `done_missing`), which the reader of a
/// recorded log keeps and the gateway drops.
fn completed(case: &Case, found: Found) -> Found {
    match case.name {
        "cut_before_block_stop" | "done_missing" => found[..found.len() - 1].to_vec(),
        _ => found,
    }
}

fn anthropic_request(case: &str) -> Value {
    json!({"model": case, "max_tokens": 100, "stream": true,
        "messages": [{"role": "user", "content": "go"}],
        "tools": [{"name": "Bash", "input_schema": object_schema()},
                  {"name": "Read", "input_schema": {"type": "object",
                    "properties": {"file_path": {"type": "string"}}}}]})
}

fn anthropic_cases() -> Vec<Case> {
    let case = |name: &'static str, pieces: Vec<Vec<u8>>, cut: bool| Case {
        name,
        path: "/v1/messages".to_owned(),
        request: anthropic_request(name),
        pieces,
        cut,
    };
    let content = [
        json!({"type": "text", "text": "Three calls."}),
        json!({"type": "tool_use", "id": "toolu_a", "name": "Bash",
            "input": {"command": "ls", "reason": "R-block-one"}}),
        json!({"type": "tool_use", "id": "toolu_b", "name": "Read",
            "input": {"file_path": "a.txt", "reason": "R-block-two"}}),
        json!({"type": "tool_use", "id": "toolu_c", "name": "Undeclared",
            "input": {"reason": "not the layer's"}}),
        json!({"type": "tool_use", "id": "toolu_d", "name": "Bash",
            "input": {"command": "wc", "reason": "R-block-four"}}),
    ];
    let mut cut = message_events(&content[..2]);
    let stop = cut
        .iter()
        .rposition(|event| String::from_utf8_lossy(event).contains("content_block_stop"))
        .expect("the call stops");
    cut.truncate(stop);
    vec![
        case("several_tool_use_blocks", message_events(&content), false),
        case(
            "input_whole_in_block_start",
            whole_start_events(&content[..3]),
            false,
        ),
        case("cut_before_block_stop", cut, true),
    ]
}

fn responses_cases() -> Vec<Case> {
    let case = |name: &'static str, pieces: Vec<Vec<u8>>| Case {
        name,
        path: "/v1/responses".to_owned(),
        request: json!({"model": name, "stream": true, "input": "go",
            "tools": [{"type": "function", "name": "shell", "parameters": object_schema()}]}),
        pieces,
        cut: false,
    };
    let event = |data: Value| sse(data["type"].as_str().expect("a type"), &data);
    let item = |n: usize, arguments: &str, status: &str| {
        json!({"id": format!("fc_{n}"), "type": "function_call", "status": status,
            "call_id": format!("call_{n}"), "name": "shell", "arguments": arguments})
    };
    let texts = [
        arguments("ls", "R-output-zero"),
        arguments("pwd", "R-output-one"),
    ];
    let mut events = vec![event(
        json!({"type": "response.created", "response": {"id": "resp_s", "output": []}}),
    )];
    for n in 0..2 {
        events.push(event(
            json!({"type": "response.output_item.added", "output_index": n,
            "item": item(n, "", "in_progress")}),
        ));
    }
    let split: Vec<Vec<String>> = texts.iter().map(|text| pieces(text, 5)).collect();
    for at in 0..split[0].len().max(split[1].len()) {
        for (n, pieces) in split.iter().enumerate() {
            if let Some(piece) = pieces.get(at) {
                events.push(event(
                    json!({"type": "response.function_call_arguments.delta",
                    "item_id": format!("fc_{n}"), "output_index": n, "delta": piece}),
                ));
            }
        }
    }
    for (n, text) in texts.iter().enumerate() {
        events.push(event(
            json!({"type": "response.function_call_arguments.done",
            "item_id": format!("fc_{n}"), "output_index": n, "arguments": text}),
        ));
        events.push(event(
            json!({"type": "response.output_item.done", "output_index": n,
            "item": item(n, text, "completed")}),
        ));
    }
    events.push(event(
        json!({"type": "response.completed", "response": {"id": "resp_s",
        "status": "completed", "output": [item(0, &texts[0], "completed"),
        item(1, &texts[1], "completed")]}}),
    ));
    let copies = crate::util::upstream::responses_events(
        "call_copies",
        "shell",
        &json!({"command": "ls", "reason": "R-every-copy"}),
    );
    vec![
        case("two_parallel_output_indices", events),
        case("done_item_done_and_completed_copies", copies),
    ]
}

fn gemini_cases() -> Vec<Case> {
    let case = |name: &'static str, pieces: Vec<Vec<u8>>| Case {
        name,
        path: format!("/v1beta/models/{name}:streamGenerateContent?alt=sse"),
        request: json!({"contents": [{"role": "user", "parts": [{"text": "go"}]}],
            "tools": [{"functionDeclarations": [{"name": "run_shell_command",
                "parametersJsonSchema": object_schema()}]}]}),
        pieces,
        cut: false,
    };
    let chunk = |parts: Value| {
        let data = json!({"candidates": [{"content": {"role": "model", "parts": parts},
            "index": 0}], "modelVersion": "scripted"});
        format!("data: {data}\n\n").into_bytes()
    };
    let call = |id: Option<&str>, reason: &str| {
        let mut call = json!({"name": "run_shell_command",
            "args": {"command": "ls", "reason": reason}});
        if let Some(id) = id {
            call["id"] = json!(id);
        }
        json!({"functionCall": call})
    };
    vec![
        case(
            "several_function_calls_in_one_chunk",
            vec![
                chunk(json!([{"text": "Three at once."}])),
                chunk(json!([
                    call(Some("g1"), "R-gemini-one"),
                    call(Some("g2"), "R-gemini-two"),
                    call(Some("g3"), "R-gemini-three")
                ])),
            ],
        ),
        case(
            "calls_without_ids",
            vec![
                chunk(json!([
                    call(None, "R-no-id-one"),
                    call(None, "R-no-id-two")
                ])),
                chunk(json!([call(None, "R-no-id-three")])),
            ],
        ),
    ]
}

/// The data of each server-sent event in `bytes`, one JSON document a line, as a log of the
/// stream holds them (`[DONE]` is not JSON, and no log keeps it).
fn as_log(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes)
        .split("\n\n")
        .filter_map(|event| {
            let data: Vec<&str> = event
                .lines()
                .filter_map(|line| line.strip_prefix("data:"))
                .map(str::trim_start)
                .collect();
            let data = data.join("\n");
            (!data.is_empty() && data != "[DONE]").then_some(data)
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// What the layer owns in a stream, as the reader finds it: `(call id, tool, reason)` of every
/// call to `tools` whose arguments carry a reason.
type Found = Vec<(Option<String>, String, Option<String>)>;

fn reasons_read(bytes: &[u8], tools: &[&str]) -> Found {
    let log = as_log(bytes);
    let mut found = Vec::new();
    read_log("-", log.as_bytes(), &ReadOptions::default(), &mut |event| {
        if let Event::Call(call) = event {
            let carries = matches!(
                call.status,
                Status::Present | Status::Blank | Status::Invalid
            );
            if carries && tools.contains(&call.tool.as_str()) {
                found.push((call.call_id, call.tool, call.reason));
            }
        }
        Ok(())
    })
    .expect("reading from memory");
    found
}

fn tools_of(case: &Case) -> Vec<&'static str> {
    match case.path.as_str() {
        "/v1/messages" => vec!["Bash", "Read"],
        path if path.contains(":stream") => vec!["run_shell_command"],
        _ => vec!["shell"],
    }
}

fn serve(cases: &[Case]) -> Upstream {
    let scripts: BTreeMap<String, (Vec<Vec<u8>>, bool)> = cases
        .iter()
        .map(|case| (case.name.to_owned(), (case.pieces.clone(), case.cut)))
        .collect();
    Upstream::start(move |request| {
        let body: Value = serde_json::from_slice(&request.body).unwrap_or(Value::Null);
        let name = match body["model"].as_str() {
            Some(model) => model.to_owned(),
            None => request
                .path
                .split("/models/")
                .nth(1)
                .and_then(|rest| rest.split(':').next())
                .unwrap_or_default()
                .to_owned(),
        };
        match scripts.get(&name) {
            Some((pieces, false)) => Answer::Events(pieces.clone()),
            Some((pieces, true)) => Answer::CutAfter(pieces.clone()),
            None => Answer::Json(404, json!({"error": {"message": name}})),
        }
    })
}

fn check_through_the_gateway(cases: Vec<Case>) {
    let upstream = serve(&cases);
    let gateway = Gateway::start(&upstream.url(), &[]);
    let mut logged_before = 0;
    for case in &cases {
        let tools = tools_of(case);
        let sent = case.pieces.concat();
        let found = reasons_read(&sent, &tools);
        let expected = completed(case, found.clone());
        let reply = gateway.post(&case.path, case.request.to_string().as_bytes());
        assert_eq!(reply.status, 200, "{}", case.name);
        let records = read_reasons_log_or_empty(&gateway);
        let logged: Found = records[logged_before..]
            .iter()
            .map(|record| {
                (
                    record["call_id"].as_str().map(str::to_owned),
                    record["tool"].as_str().expect("a tool").to_owned(),
                    record["reason"].as_str().map(str::to_owned),
                )
            })
            .collect();
        logged_before = records.len();
        assert_eq!(
            logged, expected,
            "{}: the log against the reader",
            case.name
        );
        assert_eq!(
            reasons_read(&reply.body, &tools),
            Found::new(),
            "{}: a reason reached the client",
            case.name
        );
        let body = String::from_utf8_lossy(&reply.body);
        for (_, _, reason) in &found {
            let reason = reason.as_deref().expect("the cases' reasons are text");
            let marker = reason.split(' ').next().expect("a word");
            assert!(
                !body.contains(marker),
                "{}: {marker} reached the client",
                case.name
            );
        }
    }
}

fn read_reasons_log_or_empty(gateway: &Gateway) -> Vec<Value> {
    match gateway.log.exists() {
        true => read_reasons_log(&gateway.log),
        false => Vec::new(),
    }
}

#[test]
fn chat_calls_at_index_zero_with_new_ids_each_lose_their_reason() {
    let cases: Vec<Case> = chat_cases()
        .into_iter()
        .filter(|case| case.name == "index_zero_reused_with_new_ids")
        .collect();
    let expected = reasons_read(&cases[0].pieces.concat(), &["shell"]);
    assert_eq!(
        expected.len(),
        2,
        "the reader finds both calls and their reasons"
    );
    check_through_the_gateway(cases);
}

#[test]
fn chat_streams_agree_with_the_reader() {
    let cases = chat_cases();
    // The cases hold what they are about: the reader finds these reasons in them.
    let found: Vec<usize> = cases
        .iter()
        .map(|case| reasons_read(&case.pieces.concat(), &["shell"]).len())
        .collect();
    assert_eq!(found, [2, 2, 2, 1, 0, 1]);
    check_through_the_gateway(cases);
}

#[test]
fn anthropic_streams_agree_with_the_reader() {
    let cases = anthropic_cases();
    let found: Vec<usize> = cases
        .iter()
        .map(|case| reasons_read(&case.pieces.concat(), &["Bash", "Read"]).len())
        .collect();
    assert_eq!(found, [3, 2, 1]);
    check_through_the_gateway(cases);
}

#[test]
fn responses_streams_agree_with_the_reader() {
    let cases = responses_cases();
    let found: Vec<usize> = cases
        .iter()
        .map(|case| reasons_read(&case.pieces.concat(), &["shell"]).len())
        .collect();
    assert_eq!(found, [2, 1]);
    check_through_the_gateway(cases);
}

#[test]
fn gemini_streams_agree_with_the_reader() {
    let cases = gemini_cases();
    let found: Vec<usize> = cases
        .iter()
        .map(|case| reasons_read(&case.pieces.concat(), &["run_shell_command"]).len())
        .collect();
    assert_eq!(found, [3, 3]);
    check_through_the_gateway(cases);
}
