//! The reader's tests: logs of every shape read from start to end, the rules of a source, the
//! line loop's edge cases. `support` reads text the way they need it; `properties` holds the
//! readers against hostile input.

mod properties;
pub(crate) mod support;

use std::io::{self, BufRead, Read};

use crate::formats::call_reader::first_call_format;
use crate::formats::events::Event;
use crate::formats::options::ReadOptions;
use crate::formats::reading::read_whole as read_log;
use crate::formats::shapes;
use crate::json::Parser;
use crate::record::Format;
use crate::record::Status::{Declared, Freeform, Invalid, Missing, Present};
use support::{brief, expect, read_with, records};

const TOOL_USE: &str = r#"{"type":"assistant","sessionId":"s","message":{"content":[{"type":"tool_use","id":"t1","name":"Bash","input":{"command":"ls","reason":"look"}}]}}"#;

#[test]
fn jsonl_lines_are_events_with_their_own_line_numbers() {
    let text = format!("{{\"type\":\"summary\"}}\n{TOOL_USE}\n\n{TOOL_USE}\n");
    let text = text.replacen("\"t1\"", "\"t2\"", 1);
    assert_eq!(
        brief(&text),
        expect(&[(2, "Bash", Present), (4, "Bash", Present)])
    );
}

#[test]
fn crlf_line_endings_and_a_missing_last_newline_are_read() {
    let text = format!("{TOOL_USE}\r\n{}", TOOL_USE.replace("t1", "t2"));
    let (calls, malformed, _) = read_with(&text, &ReadOptions::default());
    assert_eq!(calls.len(), 2);
    assert!(malformed.is_empty());
}

#[test]
fn a_byte_order_mark_is_not_part_of_the_first_line() {
    assert_eq!(records(&format!("\u{feff}{TOOL_USE}\n")).len(), 1);
}

#[test]
fn a_pretty_printed_document_is_read_whole_and_lines_point_at_each_call() {
    let text = "{\n  \"messages\": [\n    {\n      \"role\": \"assistant\",\n      \"tool_calls\": [\n        {\n          \"id\": \"c1\",\n          \"function\": {\"name\": \"ls\", \"arguments\": \"{}\"}\n        },\n        {\n          \"id\": \"c2\",\n          \"function\": {\"name\": \"cat\", \"arguments\": \"{}\"}\n        }\n      ]\n    }\n  ]\n}\n";
    assert_eq!(
        brief(text),
        expect(&[(6, "ls", Missing), (10, "cat", Missing)])
    );
}

#[test]
fn a_document_on_one_line_is_one_event_at_line_one() {
    let text = r#"[{"type":"function_call","name":"a","arguments":"{}","call_id":"x"},{"type":"function_call","name":"a","arguments":"{}","call_id":"x"}]"#;
    // One event: the same call twice in it counts twice.
    assert_eq!(brief(text), expect(&[(1, "a", Missing), (1, "a", Missing)]));
}

#[test]
fn a_bad_json_line_is_malformed_and_reading_goes_on() {
    let text = format!(
        "{TOOL_USE}\n{{\"type\":\"tool_use\", oops}}\n{}\n",
        TOOL_USE.replace("t1", "t2")
    );
    let (calls, malformed, summary) = read_with(&text, &ReadOptions::default());
    assert_eq!(calls.len(), 2);
    assert_eq!(malformed.len(), 1);
    assert_eq!(malformed[0].0, 2);
    assert_eq!(summary.malformed_lines, 1);
}

#[test]
fn a_truncated_last_line_is_malformed() {
    let text = format!("{TOOL_USE}\n{}", &TOOL_USE[..60]);
    let (calls, malformed, _) = read_with(&text, &ReadOptions::default());
    assert_eq!(calls.len(), 1);
    assert_eq!(malformed, [(2, "truncated last line".to_owned())]);
}

#[test]
fn a_cut_line_the_prefilter_skips_is_still_malformed() {
    let text = "{\"type\":\"user\",\"message\":{\"content\":\"hel\n";
    let (_, malformed, _) = read_with(text, &ReadOptions::default());
    assert_eq!(malformed.len(), 1);
}

#[test]
fn invalid_utf8_is_malformed_and_reading_goes_on() {
    let mut bytes = TOOL_USE.replace("look", "lo\u{e9}k").into_bytes();
    let at = bytes.iter().position(|&byte| byte == 0xC3).expect("é");
    bytes[at] = 0xFF;
    bytes.push(b'\n');
    bytes.extend_from_slice(TOOL_USE.replace("t1", "t2").as_bytes());
    let mut malformed = Vec::new();
    let mut calls = 0;
    read_log("test", &bytes[..], &ReadOptions::default(), &mut |event| {
        match event {
            Event::Call(_) => calls += 1,
            Event::Malformed { line, message } => malformed.push((line, message)),
        }
        Ok(())
    })
    .expect("read");
    assert_eq!(calls, 1);
    assert_eq!(malformed.len(), 1);
    assert_eq!(malformed[0].0, 1);
    assert!(malformed[0].1.contains("UTF-8"), "{}", malformed[0].1);
}

#[test]
fn valid_json_that_is_no_event_is_silently_nothing() {
    let text = "\"tool_use\"\n42\n[1]\nnull\n{\"tools\": 3}\n";
    let (calls, malformed, _) = read_with(text, &ReadOptions::default());
    assert!(calls.is_empty());
    assert!(malformed.is_empty());
}

#[test]
fn a_line_of_any_length_is_read() {
    let long = "x".repeat(3 << 20);
    let line = TOOL_USE.replace("\"ls\"", &format!("\"{long}\""));
    assert_eq!(records(&format!("{line}\n{TOOL_USE}\n")).len(), 2);
}

/// Hands out one line per read, and counts them: what a pipe from `tail -f` does.
struct Trickle {
    lines: Vec<Vec<u8>>,
    given: std::rc::Rc<std::cell::Cell<usize>>,
}

impl Read for Trickle {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let given = self.given.get();
        let Some(line) = self.lines.get(given) else {
            return Ok(0);
        };
        buf[..line.len()].copy_from_slice(line);
        self.given.set(given + 1);
        Ok(line.len())
    }
}

#[test]
fn each_call_is_handed_over_before_the_next_line_is_read() {
    let given = std::rc::Rc::new(std::cell::Cell::new(0));
    let lines = (1..=3)
        .map(|n| format!("{}\n", TOOL_USE.replace("t1", &format!("t{n}"))).into_bytes())
        .collect();
    let input = io::BufReader::with_capacity(
        1 << 16,
        Trickle {
            lines,
            given: given.clone(),
        },
    );
    let mut seen = Vec::new();
    read_log("-", input, &ReadOptions::default(), &mut |event| {
        if let Event::Call(record) = event {
            seen.push((record.line, given.get()));
        }
        Ok(())
    })
    .expect("read");
    assert_eq!(seen, [(1, 1), (2, 2), (3, 3)]);
}

#[test]
fn a_sink_error_stops_reading_and_is_returned() {
    let text = format!("{TOOL_USE}\n{}\n", TOOL_USE.replace("t1", "t2"));
    let mut calls = 0;
    let result = read_log("-", text.as_bytes(), &ReadOptions::default(), &mut |_| {
        calls += 1;
        Err(io::Error::from(io::ErrorKind::BrokenPipe))
    });
    assert_eq!(
        result.map_err(|error| error.kind()),
        Err(io::ErrorKind::BrokenPipe)
    );
    assert_eq!(calls, 1);
}

#[test]
fn within_one_event_every_call_counts_even_when_ids_repeat() {
    let text = r#"{"history":[{"role":"assistant","tool_calls":[{"id":"c","function":{"name":"bash","arguments":"{\"command\":\"ls\"}"}}]},{"role":"assistant","tool_calls":[{"id":"c","function":{"name":"bash","arguments":"{\"command\":\"ls\"}"}}]}]}"#;
    assert_eq!(records(text).len(), 2);
}

#[test]
fn a_later_event_recording_the_same_call_counts_it_once_at_its_first_place() {
    let first = r#"{"messages":[{"role":"assistant","tool_calls":[{"id":"c1","function":{"name":"ls","arguments":"{\"path\":\".\"}"}}]}]}"#;
    // The next request repeats the history, with the arguments re-encoded.
    let second = r#"{"messages":[{"role":"assistant","tool_calls":[{"id":"c1","function":{"name":"ls","arguments":"{ \"path\": \".\" }"}}]},{"role":"tool","tool_call_id":"c1","content":"a b"},{"role":"assistant","tool_calls":[{"id":"c2","function":{"name":"cat","arguments":"{}"}}]}]}"#;
    let (calls, _, summary) = read_with(&format!("{first}\n{second}\n"), &ReadOptions::default());
    let places: Vec<_> = calls
        .iter()
        .map(|c| (c.line, c.call_id.as_deref()))
        .collect();
    assert_eq!(places, [(1, Some("c1")), (2, Some("c2"))]);
    assert_eq!(summary.repeats, 1);
}

#[test]
fn a_streamed_call_counts_with_the_event_that_started_it() {
    let text = [
        r#"[{"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"x","name":"n","input":{}}},{"type":"tool_use","id":"x","name":"n","input":{}}]"#,
        r#"{"type":"user"}"#,
        r#"{"type":"content_block_stop","index":0}"#,
        r#"{"type":"tool_use","id":"x","name":"n","input":{}}"#,
    ]
    .join("\n");
    // The block and the call are in one event, so both count; a later event's copy does not.
    let (calls, _, summary) = read_with(&text, &ReadOptions::default());
    assert_eq!(calls.iter().map(|c| c.line).collect::<Vec<_>>(), [1, 1]);
    assert_eq!(summary.repeats, 1);
}

#[test]
fn a_later_call_with_the_same_id_but_other_arguments_counts_again() {
    let line = |command: &str| {
        format!(
            r#"{{"type":"response_item","payload":{{"type":"function_call","name":"shell","arguments":"{{\"command\":\"{command}\"}}","call_id":"c"}}}}"#
        )
    };
    let text = format!("{}\n{}\n", line("ls"), line("pwd"));
    assert_eq!(records(&text).len(), 2);
}

#[test]
fn calls_without_an_id_are_never_taken_for_repeats() {
    let line = r#"{"candidates":[{"content":{"parts":[{"functionCall":{"name":"take_snapshot","args":{}}}]}}]}"#;
    assert_eq!(records(&format!("{line}\n{line}\n")).len(), 2);
}

#[test]
fn a_catalogue_later_in_the_event_decides_declared_for_the_whole_event() {
    let text = r#"{"messages":[{"role":"assistant","content":[{"type":"tool_use","id":"a","name":"cancel","input":{"job":1,"reason":"stale"}},{"type":"tool_use","id":"b","name":"ls","input":{"reason":"look"}}]}],"tools":[{"name":"cancel","input_schema":{"type":"object","properties":{"reason":{"type":"string"}}}},{"name":"ls","input_schema":{"type":"object","properties":{"reason":{"type":"string","description":"One short sentence: why this call. Shown to the human reviewing the session."}}}}]}"#;
    assert_eq!(
        brief(text),
        expect(&[(1, "cancel", Declared), (1, "ls", Present)])
    );
}

#[test]
fn a_catalogue_declares_the_calls_of_later_events() {
    let list = r#"{"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"close","inputSchema":{"type":"object","required":["reason"]}}]}}"#;
    let call = r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"close","arguments":{"reason":"done"}}}"#;
    assert_eq!(
        brief(&format!("{list}\n{call}\n")),
        expect(&[(2, "close", Declared)])
    );
}

#[test]
fn a_catalogue_repeated_word_for_word_declares_the_same_and_a_changed_one_anew() {
    let body = |id: usize, properties: &str| {
        format!(
            r#"{{"messages":[{{"role":"assistant","tool_calls":[{{"id":"c{id}","function":{{"name":"cancel","arguments":"{{\"reason\":\"r\"}}"}}}}]}}],"tools":[{{"type":"function","function":{{"name":"cancel","parameters":{{"type":"object","properties":{properties}}}}}}}]}}"#
        )
    };
    let (own, none) = (r#"{"reason":{"type":"string"}}"#, "{}");
    let lines: Vec<String> = [own, own, none, none, own]
        .iter()
        .enumerate()
        .map(|(id, properties)| body(id, properties))
        .collect();
    assert_eq!(
        brief(&lines.join("\n")),
        expect(&[
            (1, "cancel", Declared),
            (2, "cancel", Declared),
            (3, "cancel", Present),
            (4, "cancel", Present),
            (5, "cancel", Declared)
        ])
    );
}

#[test]
fn audit_declared_audits_the_declared_tools_too() {
    let list = r#"{"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"close","inputSchema":{"type":"object","required":["reason"]}}]}}"#;
    let call = r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"close","arguments":{"reason":"done"}}}"#;
    let options = ReadOptions {
        audit_declared: true,
        ..ReadOptions::default()
    };
    let (calls, _, _) = read_with(&format!("{list}\n{call}\n"), &options);
    assert_eq!(calls[0].status, Present);
    assert_eq!(calls[0].reason.as_deref(), Some("done"));
}

#[test]
fn a_forced_format_labels_every_record() {
    let options = ReadOptions {
        format: Some(Format::Anthropic),
        ..ReadOptions::default()
    };
    let (calls, _, summary) = read_with(&format!("{TOOL_USE}\n"), &options);
    assert_eq!(calls[0].format, Format::Anthropic);
    assert_eq!(summary.format, Some(Format::Anthropic));
}

#[test]
fn a_stream_mixing_shapes_yields_every_call() {
    // Transcript event lines come between the others: the prefilter searches them for
    // fewer tokens, and must not carry that over to the lines after them.
    let transcript = r#"{"parentUuid":"p","type":"assistant","message":{"content":[{"type":"tool_use","id":"t2","name":"Read","input":{}}]}}"#;
    let text = [
        transcript,
        transcript,
        TOOL_USE,
        r#"{"timestamp":"t","type":"response_item","payload":{"type":"function_call","name":"shell","arguments":"[\"ls\"]","call_id":"c"}}"#,
        r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"get","arguments":{}}}"#,
        transcript,
        transcript,
        r#"{"candidates":[{"content":{"parts":[{"functionCall":{"name":"grep","args":{"reason":""}}}]}}]}"#,
        r#"{"type":"context.append_loop_event","event":{"type":"tool.call","toolCallId":"k","name":"Read","args":{"reason":1}}}"#,
    ]
    .join("\n");
    let formats: Vec<_> = records(&text)
        .into_iter()
        .map(|r| (r.format, r.status))
        .collect();
    assert_eq!(
        formats,
        [
            (Format::ClaudeCode, Missing),
            (Format::ClaudeCode, Present),
            (Format::Codex, Freeform),
            (Format::Mcp, Missing),
            (Format::Gemini, crate::record::Status::Blank),
            (Format::Kimi, Invalid),
        ]
    );
}

#[test]
fn claude_code_stream_json_keeps_its_snake_case_session() {
    let line = r#"{"type":"assistant","message":{"content":[{"type":"tool_use","id":"t","name":"Read","input":{}}]},"session_id":"s-1"}"#;
    let sessions: Vec<_> = records(line)
        .into_iter()
        .map(|record| (record.format, record.session))
        .collect();
    assert_eq!(sessions, [(Format::ClaudeCode, Some("s-1".to_owned()))]);
}

#[test]
fn a_transcript_event_holds_calls_only_as_tool_use_blocks() {
    // A tool's structured output can look like any payload: it is not this session's call,
    // whether or not the line also holds a call of its own.
    let output = r#""toolUseResult":{"type":"function_call","name":"shell","arguments":"{}","call_id":"c","tools":[{"name":"Read","input_schema":{"properties":{"reason":{"type":"string"}}}}]}"#;
    let result = format!(
        r#"{{"parentUuid":"p","type":"user","message":{{"content":[{{"type":"tool_result","tool_use_id":"t0","content":"x"}}]}},{output}}}"#
    );
    let call = format!(
        r#"{{"type":"assistant","message":{{"content":[{{"type":"tool_use","id":"t1","name":"Read","input":{{}}}}]}},{output}}}"#
    );
    assert_eq!(
        brief(&format!("{result}\n{call}\n")),
        expect(&[(2, "Read", Missing)])
    );
}

#[test]
fn kept_arguments_are_decoded_from_their_json_string() {
    let text = r#"{"choices":[{"message":{"tool_calls":[{"id":"c","function":{"name":"ls","arguments":"{\"path\":\"src\"}"}}]}}]}"#;
    let options = ReadOptions {
        keep_arguments: true,
        ..ReadOptions::default()
    };
    let (calls, _, _) = read_with(text, &options);
    assert_eq!(calls[0].arguments, Some(serde_json::json!({"path": "src"})));
    assert_eq!(records(text)[0].arguments, None);
}

/// Every event, with the line a record or a malformed line names, as text to compare.
fn events_through_buffer(bytes: &[u8], capacity: usize) -> Vec<String> {
    let mut events = Vec::new();
    let input = io::BufReader::with_capacity(capacity, bytes);
    read_log("t", input, &ReadOptions::default(), &mut |event| {
        events.push(format!("{event:?}"));
        Ok(())
    })
    .expect("read");
    events
}

#[test]
fn any_input_buffer_size_yields_the_same_events() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut inputs = vec![format!(
        "{TOOL_USE}\r\n{{\"type\":\"user\",\"x\":\"tool_use_id\"}}\n\n{{\"cut\": \"li\n{}\n{{\"type\":\"tool_use\",\"id\":\"q\",\"name\":\"n\",\"input\":{{\"reason\":1}}}}\n{{\"type\":\"tool_use\",",
        TOOL_USE.replace("t1", "t2")
    )
    .into_bytes()];
    for sample in [
        "claude-code.jsonl",
        "codex.jsonl",
        "gemini.jsonl",
        "mcp.jsonl",
        "kimi.jsonl",
    ] {
        inputs.push(std::fs::read(root.join("samples").join(sample)).expect("sample"));
    }
    // Found by fuzzing: a transcript line indented by whitespace was searched for one
    // token when read on its own and for every format's in a block.
    inputs.push(
        format!(
            "{TOOL_USE}\n  {{\"parentUuid\":\":  \"tool_calls\",\n{}\n{}\n",
            TOOL_USE.replace("t1", "t2"),
            TOOL_USE.replace("t1", "t3")
        )
        .into_bytes(),
    );
    for input in inputs {
        let whole = events_through_buffer(&input, 1 << 20);
        assert!(whole.len() > 2, "{whole:?}");
        for capacity in [1, 2, 7, 64, 333, 4096] {
            assert_eq!(
                events_through_buffer(&input, capacity),
                whole,
                "capacity {capacity}"
            );
        }
    }
}

#[test]
fn prefilter_never_skips_a_line_of_the_samples_holding_a_call() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let files: Vec<_> = std::fs::read_dir(root.join("samples"))
        .expect("samples/")
        .map(|entry| entry.expect("entry").path())
        .collect();
    assert!(files.len() > 10, "{files:?}");
    prefilter_never_skips_a_line_holding_a_call(files);
}

#[test]
#[ignore = "reads ../shared/corpus, which is not part of the crate: run with --ignored"]
fn prefilter_never_skips_a_line_of_the_corpus_holding_a_call() {
    let corpus = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/corpus");
    // Every file in the corpus's folders, and in the folders they hold (OpenCode's legacy
    // storage is a tree).
    let mut files = Vec::new();
    let mut folders: Vec<_> = std::fs::read_dir(&corpus)
        .expect("../shared/corpus")
        .map(|entry| entry.expect("entry").path())
        .filter(|path| path.is_dir())
        .collect();
    while let Some(folder) = folders.pop() {
        for entry in std::fs::read_dir(folder).expect("a corpus folder") {
            let path = entry.expect("entry").path();
            if path.is_dir() {
                folders.push(path);
            } else {
                files.push(path);
            }
        }
    }
    assert!(
        !files.is_empty(),
        "no corpus files under {}",
        corpus.display()
    );
    prefilter_never_skips_a_line_holding_a_call(files);
}

fn prefilter_never_skips_a_line_holding_a_call(files: Vec<std::path::PathBuf>) {
    let prefilter = shapes::prefilter(None);
    for file in files {
        let input = std::fs::File::open(&file).expect("a readable file");
        for (number, line) in io::BufReader::new(input).split(b'\n').enumerate() {
            let line = line.expect("line");
            let mut parser = Parser::default();
            let Ok(text) = std::str::from_utf8(&line) else {
                continue;
            };
            let Ok(event) = parser.parse(text) else {
                continue;
            };
            if first_call_format(event).is_some() {
                assert!(
                    prefilter.may_hold_call(&line, false),
                    "{}:{}",
                    file.display(),
                    number + 1
                );
            }
        }
    }
}

fn malformed_lines(log: &str) -> Vec<(u64, String)> {
    let mut found = Vec::new();
    read_log("t", log.as_bytes(), &ReadOptions::default(), &mut |event| {
        if let Event::Malformed { line, message } = event {
            found.push((line, message));
        }
        Ok(())
    })
    .unwrap();
    found
}

#[test]
fn a_text_line_the_prefilter_skips_is_still_malformed() {
    let log = "{\"type\":\"user\"}\nnot json\n{\"type\":\"user\"}\n";
    assert_eq!(
        malformed_lines(log),
        [(2, "invalid JSON: not a JSON value".to_owned())]
    );
}

#[test]
fn skipped_lines_that_are_whole_values_pass() {
    assert!(malformed_lines("{}\n[1]\n\"text\"\n-12\n3\ntrue\nnull\n\n").is_empty());
}

/// `--strict` let `{"a": oops}` pass: the prefilter skipped the line, and a skipped line
/// was only checked to look like one whole value.
#[test]
fn check_every_line_reports_json_wrong_inside_a_line_the_prefilter_skips() {
    let log = "{\"a\": oops}\n{\"type\":\"user\"}\n[1,]\n\"caf\\u00e9\"\n";
    let options = ReadOptions {
        check_every_line: true,
        ..ReadOptions::default()
    };
    let (_, malformed, _) = read_with(log, &options);
    let lines: Vec<u64> = malformed.iter().map(|(line, _)| *line).collect();
    assert_eq!(lines, [1, 3], "{malformed:?}");
    assert!(
        malformed[0].1.starts_with("invalid JSON: expected value"),
        "{malformed:?}"
    );
    assert!(malformed_lines(log).is_empty());
}

#[test]
fn a_skipped_line_cut_short_is_malformed() {
    let found = malformed_lines("{\"a\":1}\n{\"type\":\"user\",\"x\":\n{\"b\":2}\n");
    assert_eq!(found.len(), 1);
    assert_eq!(found[0].0, 2);
}

mod detect {
    use serde_json::Value;

    use crate::formats::{detect, Format};

    const TOOL_USE: &str = r#"{"type":"assistant","sessionId":"s","message":{"content":[{"type":"tool_use","id":"t1","name":"Bash","input":{"command":"ls","reason":"look"}}]}}"#;

    #[test]
    fn detect_tells_a_transcript_from_an_api_payload() {
        let line: Value = serde_json::from_str(TOOL_USE).expect("json");
        assert_eq!(detect(&line), Some(Format::ClaudeCode));
        let payload: Value = serde_json::from_str(r#"{"role":"assistant","content":[{"type":"tool_use","id":"x","name":"n","input":{}}]}"#).expect("json");
        assert_eq!(detect(&payload), Some(Format::Anthropic));
        assert_eq!(detect(&Value::from(3)), None);
    }
}
