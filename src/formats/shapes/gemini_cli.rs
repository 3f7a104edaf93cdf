//! Gemini CLI session records: `{"sessionId" | "projectHash", "messages": [...]}`, whose
//! messages carry `toolCalls[]`, or the same as JSON lines: a first line
//! `{"sessionId","projectHash",…,"kind":"main"}`, then one message (or `$set` patch) a line. The
//! Gemini shape reads the calls and the first line, in its place in the walk (`gemini.rs`); this
//! one recognises the record.

use super::descriptor::{Outer, Shape};
use crate::json::Json;
use crate::record::Format;

pub(crate) const SHAPE: Shape = Shape {
    format: Format::GeminiCli,
    visit: None,
    // A session log's first line, which names the session, holds no call. `"sessionId"` shares
    // its search with Codex's `"session_meta"`.
    tokens: &[&["\"toolCalls\""], &["\"sessionId\""]],
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
