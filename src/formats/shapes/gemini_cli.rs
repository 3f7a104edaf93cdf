//! Gemini CLI session records: `{"sessionId" | "projectHash", "messages": [...]}`, whose
//! messages carry `toolCalls[]`. The Gemini shape reads those entries, in its place in the walk
//! (`gemini.rs`); this one recognises the record.

use crate::format::Format;
use crate::formats::shape::{Outer, Shape};
use crate::json::Json;

pub(crate) const SHAPE: Shape = Shape {
    format: Format::GeminiCli,
    visit: None,
    tokens: &[&["\"toolCalls\""]],
    stream_tokens: &[],
    container: Some(is_session_record),
    holds: None,
    line_start: None,
    flush: None,
};

fn is_session_record(outer: &Outer<'_>) -> bool {
    outer.map.get("messages").is_some_and(Json::is_array)
        && (outer.map.contains_key("projectHash") || outer.map.contains_key("sessionId"))
}
