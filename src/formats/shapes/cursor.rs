//! Cursor agent transcripts: one `{role, message: {content}}` a line with Anthropic content
//! blocks, and `{"type": "turn_ended"}` lines. Its `tool_use` blocks, which the Anthropic shape
//! reads, carry no id, and the lines no session or time.

use super::anthropic;
use super::descriptor::{Outer, Shape};
use crate::formats::event_walk::WalkOptions;
use crate::json::Json;
use crate::record::Format;

pub(crate) const SHAPE: Shape = Shape {
    format: Format::Cursor,
    visit: None,
    tokens: &[anthropic::TOKENS],
    stream_tokens: &[],
    container: Some(is_transcript_line),
    holds: Some(TRANSCRIPT_LINE),
    line_start: None,
    flush: None,
};

const TRANSCRIPT_LINE: WalkOptions = WalkOptions {
    shapes: &[anthropic::visit],
    catalogues: false,
    sessions: WalkOptions::SESSIONS,
    times: WalkOptions::TIMES,
};

/// A message wrapped with its role beside it, and nothing of Claude Code's around it (its
/// records say their `type`).
fn is_transcript_line(outer: &Outer<'_>) -> bool {
    outer.map.get("role").is_some_and(Json::is_string)
        && outer.map.get("message").is_some_and(Json::is_object)
        && !outer.map.contains_key("type")
        && !outer.map.contains_key("parentUuid")
}

#[cfg(test)]
mod tests {
    use crate::formats::tests::support::records;
    use crate::record::Format;
    use crate::record::Status::Missing;

    #[test]
    fn id_less_anthropic_lines_are_cursor_and_each_block_counts() {
        let line = r#"{"role":"assistant","message":{"content":[{"type":"text","text":"Running."},{"type":"tool_use","name":"Shell","input":{"command":"ls"}}]}}"#;
        let text = format!("{line}\n{line}\n{{\"type\":\"turn_ended\",\"status\":\"success\"}}\n");
        let calls = records(&text);
        let seen: Vec<_> = calls
            .iter()
            .map(|call| (call.line, call.format, call.status, call.call_id.clone()))
            .collect();
        assert_eq!(
            seen,
            [
                (1, Format::Cursor, Missing, None),
                (2, Format::Cursor, Missing, None)
            ]
        );
    }
}
