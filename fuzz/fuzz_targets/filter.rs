//! `filter`'s and `proxy`'s line transform: any line gives exactly one line out, with the same
//! ending; a line not rewritten is the very bytes that came in; a rewritten one is JSON that
//! differs from its input only by what the layer adds and takes off.
//!
//! The input is a stream: its lines go through one `Filter` in order (so catalogues early in the
//! stream decide what later calls lose), through a `Filter` with both halves turned off (which
//! must change nothing), and alternately through the two halves of a proxy.
#![no_main]

use std::borrow::Cow;

use libfuzzer_sys::fuzz_target;
use reasons::layer::ReasonPosition;
use reasons::stream::{proxy_halves, Filter, Line, Options};
use serde_json::Value;

fn ending(line: &[u8]) -> &[u8] {
    match line {
        [.., b'\r', b'\n'] => b"\r\n",
        [.., b'\n'] => b"\n",
        _ => b"",
    }
}

/// What stays of a line once everything the layer may add or take off is set aside: `reason`
/// keys, a `type` that is not a string or is `"object"`, an empty `properties`, and the
/// encoding of a string holding a JSON object.
fn normalised(value: &Value) -> Value {
    match value {
        Value::Object(map) => {
            let mut out = serde_json::Map::new();
            for (key, value) in map {
                if key == "reason" {
                    continue;
                }
                if key == "type" && value.as_str().is_none_or(|kind| kind == "object") {
                    continue;
                }
                let value = normalised(value);
                if key == "properties" && value.as_object().is_some_and(|map| map.is_empty()) {
                    continue;
                }
                out.insert(key.clone(), value);
            }
            Value::Object(out)
        }
        Value::Array(items) => Value::Array(items.iter().map(normalised).collect()),
        Value::String(text) => match serde_json::from_str::<Value>(text) {
            Ok(decoded @ Value::Object(_)) => normalised(&decoded),
            _ => value.clone(),
        },
        _ => value.clone(),
    }
}

fn check(input: &[u8], out: &Line<'_>) {
    let bytes: &[u8] = &out.bytes;
    let (body, end) = bytes.split_at(bytes.len() - ending(bytes).len());
    assert_eq!(end, ending(input), "the line ending changed");
    assert!(!body.contains(&b'\n'), "one line became several");
    match &out.bytes {
        Cow::Borrowed(_) => {
            assert_eq!(bytes, input);
            assert!(
                out.reasons.is_empty(),
                "a reason taken off an untouched line"
            );
        }
        Cow::Owned(_) => {
            assert_ne!(bytes, input, "a rewrite that changed nothing");
            let before: Value = serde_json::from_slice(input).expect("only JSON is rewritten");
            let after: Value = serde_json::from_slice(body).expect("a rewrite is JSON");
            assert_eq!(
                normalised(&before),
                normalised(&after),
                "more than the reason changed"
            );
        }
    }
}

fuzz_target!(|data: &[u8]| {
    let mut filter = Filter::new(Options::default());
    let mut off = Filter::new(Options {
        augment: false,
        strip: false,
        ..Options::default()
    });
    let (mut client, mut server) = proxy_halves(ReasonPosition::Last);
    for (n, line) in data.split_inclusive(|&byte| byte == b'\n').enumerate() {
        check(line, &filter.line(line));
        let untouched = off.line(line);
        assert!(!untouched.is_rewritten() && untouched.reasons.is_empty());
        let out = if n % 2 == 0 {
            client.line(line)
        } else {
            server.line(line)
        };
        check(line, &out);
    }
});
