//! Claude Code session transcripts and `stream-json` output: an event is a `user` or `assistant`
//! record around an Anthropic message, whose calls are its `tool_use` blocks.

use super::anthropic;
use super::descriptor::{Outer, Shape};
use crate::formats::event_walk::WalkOptions;
use crate::json::Json;
use crate::record::Format;

pub(crate) const SHAPE: Shape = Shape {
    format: Format::ClaudeCode,
    // The blocks are Anthropic's: that shape finds them, and the outer record relabels them.
    visit: None,
    tokens: &[anthropic::TOKENS],
    stream_tokens: &[],
    container: Some(is_transcript_event),
    holds: Some(TRANSCRIPT_EVENT),
    line_start: Some(b"{\"parentUuid\":"),
    flush: None,
};

/// A Claude Code event records its model's calls as `tool_use` blocks, and no catalogue.
/// Anything else in it (a tool's structured output, a pasted payload) is not this session's
/// call. The prefilter relies on this to search a transcript line (which the transcript starts
/// with `parentUuid`) for one token only.
const TRANSCRIPT_EVENT: WalkOptions = WalkOptions {
    shapes: &[anthropic::visit],
    catalogues: false,
    sessions: WalkOptions::SESSIONS,
    times: WalkOptions::TIMES,
};

fn is_transcript_event(outer: &Outer<'_>) -> bool {
    // First, before `type` is looked up: most lines of a long transcript start with
    // `parentUuid`.
    if outer.map.contains_key("parentUuid") || outer.map.contains_key("leafUuid") {
        return true;
    }
    matches!(outer.kind(), Some("user" | "assistant"))
        && outer.map.get("message").is_some_and(Json::is_object)
}
