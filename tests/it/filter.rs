//! `reasons filter`: the layer on a stream, through the real binary.

use std::io::{BufRead, BufReader, Write};
use std::process::{Output, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use serde_json::{json, Value};

use crate::util::{arg, output_with_stdin, read_reasons_log, reasons};

const REASON: &str = "Save the draft you asked for";

/// Runs `reasons filter ARGS` on `input`, keeping stdout as bytes.
#[track_caller]
fn filter(args: &[&str], input: &[u8]) -> Output {
    let output = output_with_stdin(&[&["filter"][..], args].concat(), input);
    assert_eq!(
        output.status.code(),
        Some(0),
        "stderr: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    output
}

fn jsonl(values: &[Value]) -> Vec<u8> {
    let mut bytes = Vec::new();
    for value in values {
        bytes.extend(serde_json::to_vec(value).expect("JSON"));
        bytes.push(b'\n');
    }
    bytes
}

fn lines(bytes: &[u8]) -> Vec<&[u8]> {
    bytes.split_inclusive(|byte| *byte == b'\n').collect()
}

fn tool(name: &str) -> Value {
    json!({"name": name, "inputSchema": {"type": "object", "properties": {"path": {"type": "string"}}}})
}

fn listing(id: u64, tools: &[Value], next_cursor: Option<&str>) -> Value {
    let mut result = json!({"tools": tools});
    if let Some(cursor) = next_cursor {
        result["nextCursor"] = json!(cursor);
    }
    json!({"jsonrpc": "2.0", "id": id, "result": result})
}

fn call(id: u64, tool: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
        "params": {"name": tool, "arguments": {"path": "draft.md", "reason": REASON}}})
}

/// The arguments of the `tools/call` on an output line.
fn arguments(line: &[u8]) -> Value {
    let value: Value = serde_json::from_slice(line).expect("a JSON line");
    value["params"]["arguments"].clone()
}

fn stripped() -> Value {
    json!({"path": "draft.md"})
}

fn kept() -> Value {
    json!({"path": "draft.md", "reason": REASON})
}

#[test]
fn a_call_before_any_listing_is_not_stripped() {
    let input = jsonl(&[call(1, "fs_write"), listing(2, &[tool("fs_write")], None)]);
    let output = filter(&[], &input);
    assert_eq!(lines(&output.stdout)[0], lines(&input)[0]);
    assert!(output.stderr.is_empty());
}

#[test]
fn a_listed_tool_is_augmented_and_its_calls_stripped() {
    let input = jsonl(&[listing(1, &[tool("fs_write")], None), call(2, "fs_write")]);
    let output = filter(&[], &input);
    let out = lines(&output.stdout);
    let listed: Value = serde_json::from_slice(out[0]).expect("JSON");
    assert_eq!(
        listed["result"]["tools"][0]["inputSchema"]["properties"]["reason"]["type"],
        "string"
    );
    assert_eq!(arguments(out[1]), stripped());
    assert_eq!(
        String::from_utf8_lossy(&output.stderr),
        format!("fs_write: {REASON}\n")
    );
}

#[test]
fn a_gemini_request_is_augmented_and_its_history_kept_while_a_part_is_stripped() {
    // Trimmed from what Gemini CLI 0.61.0 sends: declarations under `functionDeclarations`
    // with `parametersJsonSchema`, and a tool of its own that declares `reason`.
    let history = json!([
        {"role": "user", "parts": [{"text": "Run echo hi."}]},
        {"role": "model", "parts": [{"functionCall": {"id": "run_shell_command_1_0",
            "name": "run_shell_command", "args": {"command": "echo hi", "reason": REASON}},
            "thoughtSignature": "skip_thought_signature_validator"}]}
    ]);
    let body = json!({"contents": history, "tools": [{"functionDeclarations": [
        {"name": "run_shell_command", "parametersJsonSchema": {"type": "object",
            "properties": {"command": {"type": "string"}}, "required": ["command"]}},
        {"name": "enter_plan_mode", "parametersJsonSchema": {"type": "object",
            "properties": {"reason": {"type": "string"}}}}
    ]}]});
    let part = json!({"functionCall": {"name": "run_shell_command",
        "args": {"command": "echo hi", "reason": REASON}}});
    let input = jsonl(&[body, part]);
    let output = filter(&[], &input);
    let out = lines(&output.stdout);
    let listed: Value = serde_json::from_slice(out[0]).expect("JSON");
    let declarations = &listed["tools"][0]["functionDeclarations"];
    assert_eq!(
        declarations[0]["parametersJsonSchema"]["properties"]["reason"]["type"],
        "string"
    );
    assert_eq!(
        declarations[1]["parametersJsonSchema"]["properties"],
        json!({"reason": {"type": "string"}})
    );
    assert_eq!(listed["contents"], history);
    let forwarded: Value = serde_json::from_slice(out[1]).expect("JSON");
    assert_eq!(
        forwarded["functionCall"]["args"],
        json!({"command": "echo hi"})
    );
    assert_eq!(
        String::from_utf8_lossy(&output.stderr),
        format!("run_shell_command: {REASON}\n")
    );
}

#[test]
fn a_refresh_drops_a_tool_from_the_set() {
    let input = jsonl(&[
        listing(1, &[tool("fs_read"), tool("fs_write")], None),
        listing(2, &[tool("fs_read")], None),
        call(3, "fs_write"),
        call(4, "fs_read"),
    ]);
    let output = filter(&[], &input);
    let out = lines(&output.stdout);
    assert_eq!(out[2], lines(&input)[2]);
    assert_eq!(arguments(out[3]), stripped());
}

#[test]
fn a_listing_over_two_pages_counts_as_one() {
    let input = jsonl(&[
        listing(1, &[tool("fs_read")], Some("2")),
        listing(2, &[tool("fs_write")], None),
        call(3, "fs_read"),
        call(4, "fs_write"),
    ]);
    let output = filter(&[], &input);
    let out = lines(&output.stdout);
    for (index, page) in out[..2].iter().enumerate() {
        assert_ne!(*page, lines(&input)[index], "page {index} is augmented");
    }
    assert_eq!(arguments(out[2]), stripped());
    assert_eq!(arguments(out[3]), stripped());
}

#[test]
fn a_tool_with_its_own_reason_keeps_it() {
    let note = json!({"name": "note", "inputSchema": {"type": "object",
        "properties": {"reason": {"type": "string"}}}});
    let input = jsonl(&[listing(1, &[note, tool("fs_write")], None), call(2, "note")]);
    let output = filter(&[], &input);
    let out = lines(&output.stdout);
    let listed: Value = serde_json::from_slice(out[0]).expect("JSON");
    assert_eq!(
        listed["result"]["tools"][0]["inputSchema"]["properties"]["reason"],
        json!({"type": "string"})
    );
    assert_eq!(out[1], lines(&input)[1]);
    assert!(output.stderr.is_empty());
}

#[test]
fn recorded_messages_and_cancellations_pass_untouched() {
    let input = jsonl(&[
        listing(1, &[tool("fs_write")], None),
        json!({"role": "assistant", "tool_calls": [{"id": "c1", "type": "function",
            "function": {"name": "fs_write", "arguments": "{\"path\":\"a\",\"reason\":\"r\"}"}}]}),
        json!({"type": "assistant", "message": {"content": [
            {"type": "tool_use", "id": "t1", "name": "fs_write", "input": {"reason": "r"}}]}}),
        json!({"model": "m", "input": [{"type": "function_call", "call_id": "c2",
            "name": "fs_write", "arguments": "{\"reason\":\"r\"}"}]}),
        json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
            "params": {"requestId": 2, "reason": "User requested cancellation"}}),
    ]);
    let output = filter(&[], &input);
    assert_eq!(lines(&output.stdout)[1..], lines(&input)[1..]);
    assert!(output.stderr.is_empty());
}

#[test]
fn a_malformed_line_mid_stream_passes_and_the_stream_goes_on() {
    let mut input = jsonl(&[listing(1, &[tool("fs_write")], None)]);
    input.extend_from_slice(
        b"{\"jsonrpc\":\"2.0\",\"method\":\"tools/call\",\"params\":{\"name\":\"fs_wr\n",
    );
    input.extend(jsonl(&[call(2, "fs_write")]));
    let output = filter(&[], &input);
    let out = lines(&output.stdout);
    assert_eq!(out.len(), 3);
    assert_eq!(out[1], lines(&input)[1]);
    assert_eq!(arguments(out[2]), stripped());
}

#[test]
fn invalid_utf8_blank_lines_and_a_last_line_without_newline_pass_byte_for_byte() {
    let mut input = jsonl(&[listing(1, &[tool("fs_write")], None)]);
    input.extend_from_slice(b"\n\r\n   \n\xff\xfe not text \x80\n{\"tools\":[\xc3\x28]}\n");
    input.extend_from_slice(b"{\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\"}");
    let output = filter(&[], &input);
    let (out, expected) = (lines(&output.stdout), lines(&input));
    assert_eq!(out.len(), expected.len());
    assert_eq!(out[1..], expected[1..]);
}

#[test]
fn a_rewritten_line_keeps_its_crlf() {
    let mut input = jsonl(&[listing(1, &[tool("fs_write")], None)]);
    input.extend(serde_json::to_vec(&call(2, "fs_write")).expect("JSON"));
    input.extend_from_slice(b"\r\n");
    let output = filter(&[], &input);
    let out = lines(&output.stdout);
    assert!(out[1].ends_with(b"}\r\n"));
    assert_eq!(arguments(out[1]), stripped());
}

#[test]
fn the_filter_answers_a_line_before_stdin_closes() {
    let mut child = reasons()
        .arg("filter")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("the reasons binary starts");
    let mut stdin = child.stdin.take().expect("stdin is piped");
    let stdout = child.stdout.take().expect("stdout is piped");
    let (lines_out, lines_in) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            if lines_out.send(line).is_err() {
                break;
            }
        }
    });
    for (index, message) in [listing(1, &[tool("fs_write")], None), call(2, "fs_write")]
        .iter()
        .enumerate()
    {
        stdin
            .write_all(&jsonl(std::slice::from_ref(message)))
            .expect("the filter reads");
        let line = lines_in
            .recv_timeout(Duration::from_secs(10))
            .unwrap_or_else(|_| panic!("no answer to line {index} while stdin is open"))
            .expect("a line");
        if index == 1 {
            assert_eq!(arguments(line.as_bytes()), stripped());
        }
    }
    drop(stdin);
    assert!(child.wait().expect("reasons exits").success());
}

#[test]
fn a_hundred_thousand_lines_keep_their_count_and_untouched_bytes() {
    let mut input = jsonl(&[listing(0, &[tool("fs_write"), tool("fs_read")], None)]);
    for n in 1..100_000u64 {
        match n % 5 {
            0 => input.extend(jsonl(&[call(n, "fs_write")])),
            1 => input.extend(jsonl(&[json!({"jsonrpc": "2.0", "id": n,
                "result": {"content": [{"type": "text", "text": format!("line {n}")}]}})])),
            2 => input.extend_from_slice(
                format!("{{\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{{\"progress\":{n}}}}}\n").as_bytes(),
            ),
            3 => input.extend_from_slice(b"\n"),
            _ => input.extend_from_slice(b"not json \xff\n"),
        }
    }
    let output = filter(&["--reasons-log", "/dev/null"], &input);
    let (out, expected) = (lines(&output.stdout), lines(&input));
    assert_eq!(out.len(), 100_000);
    for (n, (got, sent)) in out.iter().zip(&expected).enumerate().skip(1) {
        if n % 5 == 0 {
            assert_eq!(arguments(got), stripped(), "line {n}");
        } else {
            assert_eq!(got, sent, "line {n}");
        }
    }
}

#[test]
fn reasons_log_appends_json_lines_instead_of_stderr() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let log = dir.path().join("reasons.jsonl");
    let input = jsonl(&[
        listing(1, &[tool("fs_write")], None),
        call(2, "fs_write"),
        json!({"type": "tool_use", "id": "toolu_1", "name": "fs_write",
            "input": {"reason": "bare"}}),
    ]);
    for _ in 0..2 {
        let output = filter(&["--reasons-log", arg(&log)], &input);
        assert!(output.stderr.is_empty());
    }
    let records = read_reasons_log(&log);
    // Each record says what the call touched beside its reason.
    let first = json!({"via": "filter", "tool": "fs_write", "call_id": null, "reason": REASON,
        "touched": "draft.md", "request_id": "2"});
    let second = json!({"via": "filter", "tool": "fs_write", "call_id": "toolu_1",
        "reason": "bare", "touched": ""});
    assert_eq!(records, [first.clone(), second.clone(), first, second]);
}

#[test]
fn an_unwritable_reasons_log_is_an_error() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let not_a_folder = dir.path().join("file");
    std::fs::write(&not_a_folder, "").expect("a file");
    let log = not_a_folder.join("reasons.jsonl");
    let output = reasons()
        .args(["filter", "--reasons-log", arg(&log)])
        .stdin(Stdio::null())
        .output()
        .expect("reasons runs");
    assert_eq!(output.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&output.stderr).starts_with("reasons: cannot open the reasons log")
    );
}

#[test]
fn no_augment_and_no_strip_turn_one_direction_off() {
    let input = jsonl(&[listing(1, &[tool("fs_write")], None), call(2, "fs_write")]);

    let output = filter(&["--no-augment"], &input);
    let out = lines(&output.stdout);
    assert_eq!(out[0], lines(&input)[0]);
    assert_eq!(arguments(out[1]), stripped());

    let output = filter(&["--no-strip"], &input);
    let out = lines(&output.stdout);
    assert_ne!(out[0], lines(&input)[0]);
    assert_eq!(arguments(out[1]), kept());
    assert!(output.stderr.is_empty());
}

#[test]
fn a_closed_stdout_ends_the_filter_quietly() {
    let mut child = reasons()
        .arg("filter")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the reasons binary starts");
    let mut stdin = child.stdin.take().expect("stdin is piped");
    drop(child.stdout.take());
    // Keep writing until the filter has noticed and gone.
    let line = jsonl(&[listing(1, &[tool("fs_write")], None)]);
    for _ in 0..100_000 {
        if stdin.write_all(&line).is_err() {
            break;
        }
    }
    drop(stdin);
    let output = child.wait_with_output().expect("reasons exits");
    assert_eq!(output.status.code(), Some(0));
    assert!(
        output.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
}

/// The README's first `filter` example: on its sample the layer is seen working — the catalogue
/// gains `reason`, the calls lose it, and stderr lists what was taken off. (On `samples/mcp.jsonl`,
/// whose tools declare `reason` already, nothing happened.)
#[test]
fn filter_on_its_sample_shows_the_layer_working() {
    let sample = std::fs::read("samples/mcp-capture.jsonl").unwrap();
    let run = crate::util::run_with_stdin(&["filter"], &sample);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let lines: Vec<serde_json::Value> = run
        .stdout
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    assert_eq!(
        lines.len(),
        String::from_utf8(sample).unwrap().lines().count()
    );
    for tool in lines[4]["result"]["tools"].as_array().unwrap() {
        assert_eq!(
            tool["inputSchema"]["properties"]["reason"]["type"], "string",
            "{tool}"
        );
    }
    for call in [&lines[5], &lines[7]] {
        assert!(
            call["params"]["arguments"].get("reason").is_none(),
            "{call}"
        );
    }
    assert_eq!(
        run.stderr,
        "read_file: See the release steps before changing the version.\n\
         write_file: Bump the version as step 1 says.\n"
    );
}
