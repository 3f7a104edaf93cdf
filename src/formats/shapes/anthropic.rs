//! Anthropic `tool_use` content blocks: Messages API requests and responses, Claude Code
//! transcripts, exports that wrap them, and streamed events whose `input_json_delta` fragments
//! are joined per block index.

use super::descriptor::Shape;
use crate::apis::anthropic::StreamedBlock;
use crate::formats::catalogue;
use crate::formats::event_walk::{id_at, str_at, str_is, Call, Visit, Walker};
use crate::formats::fragments::Place;
use crate::json::{Json, Object};
use crate::record::Format;

pub(crate) const SHAPE: Shape = Shape {
    stream_tokens: &[
        "\"content_block_delta\"",
        "\"content_block_stop\"",
        "\"message_start\"",
    ],
    flush: Some(flush),
    ..Shape::visiting(Format::Anthropic, visit, &[TOKENS, catalogue::TOKENS])
};

/// A `tool_use` block, wherever it sits.
pub(crate) const TOKENS: &[&str] = &["\"tool_use\""];

pub(crate) fn visit<'p>(map: Object<'p>, _key: Option<&str>, walk: &mut Walker<'_, 'p>) -> Visit {
    let kind = walk.kind();
    match kind.as_deref() {
        Some("tool_use") => {
            let Some(name) = str_at(map, "name") else {
                return Visit::Pass;
            };
            let arguments = walk.arguments(map.get("input"));
            walk.call(Call {
                format: Format::Anthropic,
                call_id: id_at(map, "id"),
                tool: name.into_owned(),
                arguments,
                freeform: false,
            });
            Visit::Skip
        }
        Some(kind) if kind == "tool_result" || kind.ends_with("_tool_result") => Visit::Skip,
        Some("message_start") => {
            flush(walk);
            Visit::Descend
        }
        Some("content_block_start") => {
            let block = map.get("content_block").and_then(Json::as_object);
            let Some(block) = block.filter(|block| str_is(*block, "type", "tool_use")) else {
                return Visit::Descend;
            };
            let Some(name) = str_at(block, "name") else {
                return Visit::Skip;
            };
            let index = map.get("index").and_then(Json::as_u64).unwrap_or(0);
            let block = StreamedBlock {
                id: id_at(block, "id"),
                name: name.into_owned(),
                input: block
                    .get("input")
                    .map_or_else(|| "null".to_owned(), |input| input.to_value().to_string()),
                json: String::new(),
                with: walk.place(),
            };
            if let Some(earlier) = walk.fragments.anthropic.start(index, block) {
                finish(walk, earlier);
            }
            Visit::Skip
        }
        Some("content_block_delta") => {
            let index = map.get("index").and_then(Json::as_u64).unwrap_or(0);
            let fragment = map
                .get("delta")
                .and_then(Json::as_object)
                .filter(|delta| str_is(*delta, "type", "input_json_delta"))
                .and_then(|delta| str_at(delta, "partial_json"));
            if let Some(fragment) = fragment {
                walk.fragments.anthropic.fragment(index, &fragment);
            }
            Visit::Skip
        }
        Some("content_block_stop") => {
            let index = map.get("index").and_then(Json::as_u64).unwrap_or(0);
            if let Some(block) = walk.fragments.anthropic.stop(index) {
                finish(walk, block);
            }
            Visit::Skip
        }
        _ => Visit::Pass,
    }
}

/// Hands over every block still open: the stream ended (or a new message began) without a stop.
pub(crate) fn flush(walk: &mut Walker) {
    let ended: Vec<_> = walk.fragments.anthropic.end().collect();
    for (_, block) in ended {
        finish(walk, block);
    }
}

fn finish(walk: &mut Walker, block: StreamedBlock<Place>) {
    // A stream cut short leaves text that is not JSON: it is still the call's input.
    let arguments = walk.json_text_arguments(block.arguments());
    walk.call_at(
        Call {
            format: Format::Anthropic,
            call_id: block.id,
            tool: block.name,
            arguments,
            freeform: false,
        },
        block.with,
    );
}

#[cfg(test)]
mod tests {
    use crate::formats::tests::support::{brief, expect, records};
    use crate::record::Format;
    use crate::record::Status::{Missing, Present};

    #[test]
    fn tool_use_blocks_are_calls_and_tool_results_are_not() {
        let text = r#"{"messages":[{"role":"assistant","content":[{"type":"text","text":"hi"},{"type":"tool_use","id":"t1","name":"get","input":{"reason":"why"}}]},{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":[{"type":"tool_use","id":"fake","name":"x","input":{}}]}]}]}"#;
        let calls = records(text);
        assert_eq!(calls.len(), 1);
        assert_eq!(calls[0].format, Format::Anthropic);
        assert_eq!(calls[0].call_id.as_deref(), Some("t1"));
        assert_eq!(calls[0].reason.as_deref(), Some("why"));
    }

    #[test]
    fn claude_code_lines_carry_session_and_timestamp() {
        let text = r#"{"parentUuid":null,"sessionId":"s-1","timestamp":"2025-01-01T00:00:00Z","type":"assistant","message":{"content":[{"type":"tool_use","id":"t","name":"Read","input":{"file_path":"a"}}]}}"#;
        let call = &records(text)[0];
        assert_eq!(call.format, Format::ClaudeCode);
        assert_eq!(call.session.as_deref(), Some("s-1"));
        assert_eq!(call.timestamp.as_deref(), Some("2025-01-01T00:00:00Z"));
    }

    #[test]
    fn streamed_input_json_deltas_are_joined_per_block_index() {
        let text = [
            r#"{"type":"message_start","message":{"id":"m","content":[]}}"#,
            r#"{"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"a","name":"first","input":{}}}"#,
            r#"{"type":"content_block_start","index":1,"content_block":{"type":"tool_use","id":"b","name":"second","input":{}}}"#,
            r#"{"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"{\"x\": 1"}}"#,
            r#"{"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"{\"reason\": \"be"}}"#,
            r#"{"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"cause\"}"}}"#,
            r#"{"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"}"}}"#,
            r#"{"type":"content_block_stop","index":1}"#,
            r#"{"type":"content_block_stop","index":0}"#,
            r#"{"type":"message_stop"}"#,
        ]
        .join("\n");
        // Each call is handed over when its block stops, at the line where it started.
        assert_eq!(
            brief(&text),
            expect(&[(3, "second", Missing), (2, "first", Present)])
        );
        assert_eq!(records(&text)[1].reason.as_deref(), Some("because"));
    }

    #[test]
    fn a_new_message_hands_over_the_blocks_the_last_one_left_open() {
        let start = |index: u32, name: &str| {
            format!(
                r#"{{"type":"content_block_start","index":{index},"content_block":{{"type":"tool_use","id":"{name}","name":"{name}","input":{{}}}}}}"#
            )
        };
        let text = [
            start(0, "a"),
            start(1, "b"),
            r#"{"type":"message_start","message":{"id":"m2","content":[]}}"#.to_owned(),
            start(0, "c"),
            r#"{"type":"content_block_stop","index":0}"#.to_owned(),
        ]
        .join("\n");
        assert_eq!(
            brief(&text),
            expect(&[(1, "a", Missing), (2, "b", Missing), (4, "c", Missing)])
        );
    }

    #[test]
    fn a_streamed_block_that_never_stops_is_handed_over_at_the_end() {
        let text = r#"[{"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"a","name":"cut","input":{"reason":"r"}}}]"#;
        assert_eq!(brief(text), expect(&[(1, "cut", Present)]));
    }
}
