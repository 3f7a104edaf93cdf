//! The reader and the gateway follow one rule for streamed calls: fed the same stream, cut into
//! fragments and into writes anywhere, the gateway takes off exactly the reasons the reader finds,
//! and the reader finds none in what the gateway sends on.

use proptest::prelude::*;
use serde_json::{json, Value};

use super::Exchange;
use crate::apis::Api;
use crate::formats::{read_log, Event, ReadOptions};
use crate::layer::ReasonPosition;
use crate::record::Status;

type Found = Vec<(Option<String>, String, Option<String>)>;

/// The data of each event, one JSON document a line, as a log of the stream holds them.
fn as_log(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes)
        .split("\n\n")
        .filter_map(|event| {
            let data = event.lines().find_map(|line| line.strip_prefix("data: "))?;
            (data != "[DONE]").then(|| data.to_owned())
        })
        .collect::<Vec<_>>()
        .join("\n")
}

fn reader_finds(bytes: &[u8], tool: &str) -> Found {
    let mut found = Vec::new();
    read_log(
        "-",
        as_log(bytes).as_bytes(),
        &ReadOptions::default(),
        &mut |event| {
            if let Event::Call(call) = event {
                let carries = matches!(
                    call.status,
                    Status::Present | Status::Blank | Status::Invalid
                );
                if carries && call.tool == tool {
                    found.push((call.call_id, call.tool, call.reason));
                }
            }
            Ok(())
        },
    )
    .expect("reading from memory");
    found
}

/// The stream through the gateway, written in pieces of `writes` bytes (cycled): the reasons it
/// took, what it sent, and the ids of the calls the stream's end cut off.
fn gateway_takes(
    path: &str,
    request: &Value,
    stream: &[u8],
    writes: &[usize],
) -> (Found, Vec<u8>, Vec<Option<String>>) {
    let api = Api::of_path(path).expect("an API's path");
    let (exchange, _) = Exchange::new(
        api,
        path,
        request.to_string().as_bytes(),
        true,
        None,
        ReasonPosition::Last,
    );
    let mut rewriter = exchange.streamed_answer();
    let mut sent = Vec::new();
    let mut taken = Vec::new();
    let mut rest = stream;
    for size in writes.iter().cycle() {
        if rest.is_empty() {
            break;
        }
        let (piece, after) = rest.split_at((*size).clamp(1, rest.len()));
        rest = after;
        let out = rewriter.push(piece);
        sent.extend(out.bytes);
        taken.extend(out.reasons);
    }
    let out = rewriter.end(true);
    sent.extend(out.bytes);
    taken.extend(out.reasons);
    let cut = out.cut.into_iter().map(|call| call.call_id).collect();
    let found = taken
        .into_iter()
        .map(|taken| {
            let reason = taken.reason.as_str().map(str::to_owned);
            (taken.call_id, taken.tool, reason)
        })
        .collect();
    (found, sent, cut)
}

/// What the gateway took, against what the reader finds: the same calls, but for those the
/// stream's end cut off, which it neither took nor sent.
fn agrees(
    taken: &Found,
    cut: &[Option<String>],
    expected: &Found,
    complete: bool,
) -> Result<(), TestCaseError> {
    if complete {
        prop_assert!(cut.is_empty(), "{cut:?}");
    }
    let kept: Found = expected
        .iter()
        .filter(|(id, _, _)| !cut.contains(id))
        .cloned()
        .collect();
    prop_assert_eq!(taken, &kept);
    prop_assert_eq!(taken.len() + cut.len(), expected.len());
    Ok(())
}

/// `text` cut into pieces whose sizes in characters are `sizes`, cycled.
fn cut(text: &str, sizes: &[usize]) -> Vec<String> {
    let chars: Vec<char> = text.chars().collect();
    let mut pieces = Vec::new();
    let mut at = 0;
    for size in sizes.iter().cycle() {
        if at >= chars.len() {
            break;
        }
        let end = (at + size.max(&1)).min(chars.len());
        pieces.push(chars[at..end].iter().collect());
        at = end;
    }
    pieces
}

fn schema() -> Value {
    json!({"type": "object", "properties": {"command": {"type": "string"}}})
}

const REASONS: [&str; 4] = [
    "plain words",
    "a \"quoted\" word and a back\\slash",
    "caf\u{e9} \u{1f600} \u{fc}n\u{ef}code",
    "",
];

/// How a generated Chat stream numbers its calls.
#[derive(Debug, Clone, Copy)]
enum Layout {
    /// Index 0, 1, 2…, one after the other.
    Sequential,
    /// Every call at index 0, each with its own id.
    IndexZero,
    /// Index 0, 1, 2…, their fragments interleaved.
    Interleaved,
}

fn chat_stream(
    reasons: &[usize],
    layout: Layout,
    sizes: &[usize],
    finish: bool,
    done: bool,
) -> Vec<u8> {
    let chunk = |delta: Value, finish: Value| {
        let data = json!({"id": "chatcmpl-p", "object": "chat.completion.chunk",
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]});
        format!("data: {data}\n\n").into_bytes()
    };
    let index = |n: usize| match layout {
        Layout::IndexZero => 0,
        _ => n,
    };
    let start = |n: usize| {
        chunk(
            json!({"tool_calls": [{"index": index(n), "id": format!("call_{n}"),
            "type": "function", "function": {"name": "shell", "arguments": ""}}]}),
            Value::Null,
        )
    };
    let fragment = |n: usize, text: &str| {
        chunk(
            json!({"tool_calls": [{"index": index(n), "function": {"arguments": text}}]}),
            Value::Null,
        )
    };
    let texts: Vec<Vec<String>> = reasons
        .iter()
        .map(|reason| {
            let arguments = json!({"command": "ls", "reason": REASONS[*reason]}).to_string();
            cut(&arguments, sizes)
        })
        .collect();
    let mut events = Vec::new();
    match layout {
        Layout::Interleaved => {
            events.extend((0..texts.len()).map(start));
            let longest = texts.iter().map(Vec::len).max().unwrap_or(0);
            for at in 0..longest {
                for (n, pieces) in texts.iter().enumerate() {
                    if let Some(piece) = pieces.get(at) {
                        events.push(fragment(n, piece));
                    }
                }
            }
        }
        _ => {
            for (n, pieces) in texts.iter().enumerate() {
                events.push(start(n));
                events.extend(pieces.iter().map(|piece| fragment(n, piece)));
            }
        }
    }
    if finish {
        events.push(chunk(json!({}), json!("tool_calls")));
    }
    if done {
        events.push(b"data: [DONE]\n\n".to_vec());
    }
    events.concat()
}

fn anthropic_stream(reasons: &[usize], sizes: &[usize], whole: bool, stop: bool) -> Vec<u8> {
    let event = |data: Value| {
        let name = data["type"].as_str().unwrap_or_default().to_owned();
        format!("event: {name}\ndata: {data}\n\n").into_bytes()
    };
    let mut events = vec![event(
        json!({"type": "message_start", "message": {"id": "msg_p", "content": []}}),
    )];
    for (index, reason) in reasons.iter().enumerate() {
        let input = json!({"command": "ls", "reason": REASONS[*reason]});
        let opened = match whole {
            true => input.clone(),
            false => json!({}),
        };
        events.push(event(json!({"type": "content_block_start", "index": index,
            "content_block": {"type": "tool_use", "id": format!("toolu_{index}"),
            "name": "Bash", "input": opened}})));
        if !whole {
            for piece in cut(&input.to_string(), sizes) {
                events.push(event(json!({"type": "content_block_delta", "index": index,
                    "delta": {"type": "input_json_delta", "partial_json": piece}})));
            }
        }
        let last = index + 1 == reasons.len();
        if stop || !last {
            events.push(event(json!({"type": "content_block_stop", "index": index})));
        }
    }
    if stop {
        events.push(event(json!({"type": "message_stop"})));
    }
    events.concat()
}

fn layout() -> impl Strategy<Value = Layout> {
    prop_oneof![
        Just(Layout::Sequential),
        Just(Layout::IndexZero),
        Just(Layout::Interleaved)
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn chat_streams_cut_anywhere_agree(
        reasons in prop::collection::vec(0..REASONS.len(), 1..4),
        layout in layout(),
        sizes in prop::collection::vec(1usize..9, 1..6),
        writes in prop::collection::vec(1usize..80, 1..6),
        finish in any::<bool>(),
        done in any::<bool>(),
    ) {
        let request = json!({"model": "m", "stream": true, "messages": [],
            "tools": [{"type": "function", "function": {"name": "shell", "parameters": schema()}}]});
        let stream = chat_stream(&reasons, layout, &sizes, finish, done);
        let expected = reader_finds(&stream, "shell");
        prop_assert_eq!(expected.len(), reasons.len());
        let (taken, sent, cut) =
            gateway_takes("/v1/chat/completions", &request, &stream, &writes);
        agrees(&taken, &cut, &expected, finish || done)?;
        prop_assert_eq!(reader_finds(&sent, "shell"), Found::new());
    }

    #[test]
    fn anthropic_streams_cut_anywhere_agree(
        reasons in prop::collection::vec(0..REASONS.len(), 1..4),
        sizes in prop::collection::vec(1usize..9, 1..6),
        writes in prop::collection::vec(1usize..80, 1..6),
        whole in any::<bool>(),
        stop in any::<bool>(),
    ) {
        let request = json!({"model": "m", "stream": true, "messages": [],
            "tools": [{"name": "Bash", "input_schema": schema()}]});
        let stream = anthropic_stream(&reasons, &sizes, whole, stop);
        let expected = reader_finds(&stream, "Bash");
        prop_assert_eq!(expected.len(), reasons.len());
        let (taken, sent, cut) = gateway_takes("/v1/messages", &request, &stream, &writes);
        agrees(&taken, &cut, &expected, stop)?;
        prop_assert_eq!(reader_finds(&sent, "Bash"), Found::new());
    }
}
