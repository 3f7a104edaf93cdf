//! Codex CLI rollouts: each line a `{"type", "payload"}` record; the calls are OpenAI Responses
//! items in `response_item` payloads, and `session_meta` names the session once for them all.

use super::descriptor::{Outer, Shape};
use super::openai_responses;
use crate::record::Format;

pub(crate) const SHAPE: Shape = Shape {
    format: Format::Codex,
    // The items are OpenAI Responses': that shape finds them (and the session), and the outer
    // record relabels them.
    visit: None,
    tokens: &[openai_responses::TOKENS, &["\"session_meta\""]],
    stream_tokens: &[],
    container: Some(is_rollout_line),
    holds: None,
    line_start: None,
    flush: None,
};

fn is_rollout_line(outer: &Outer<'_>) -> bool {
    outer.map.contains_key("payload")
        && matches!(
            outer.kind(),
            Some("session_meta" | "response_item" | "event_msg" | "turn_context" | "compacted")
        )
}
