//! Cline session messages (`<id>.messages.json`): one document `{version, sessionId, messages}`
//! whose messages hold Anthropic content blocks, the calls `tool_use` blocks that the Anthropic
//! shape reads. Each message carries its time as `ts` (epoch milliseconds).

use super::anthropic;
use super::descriptor::{Outer, Shape};
use crate::formats::event_walk::WalkOptions;
use crate::json::Json;
use crate::record::Format;

pub(crate) const SHAPE: Shape = Shape {
    format: Format::Cline,
    visit: None,
    tokens: &[anthropic::TOKENS],
    stream_tokens: &[],
    container: Some(is_session_messages),
    holds: Some(SESSION_MESSAGES),
    line_start: None,
    flush: None,
};

const SESSION_MESSAGES: WalkOptions = WalkOptions {
    shapes: &[anthropic::visit],
    catalogues: false,
    sessions: WalkOptions::SESSIONS,
    times: &["ts"],
};

/// Like a Gemini CLI session record (`sessionId`, `messages`), but versioned and without its
/// `projectHash`.
fn is_session_messages(outer: &Outer<'_>) -> bool {
    outer.map.get("messages").is_some_and(Json::is_array)
        && outer.map.get("sessionId").is_some_and(Json::is_string)
        && outer.map.contains_key("version")
        && !outer.map.contains_key("projectHash")
}

#[cfg(test)]
mod tests {
    use crate::formats::tests::support::{brief, expect, records};
    use crate::record::Format;
    use crate::record::Status::{Missing, Present};

    #[test]
    fn a_cline_session_is_not_a_gemini_cli_session() {
        let text = "{\n \"version\": 1,\n \"agent\": \"lead\",\n \"sessionId\": \"c-1\",\n \"messages\": [\n  {\"id\": \"m1\", \"role\": \"assistant\", \"ts\": 1767225600000, \"content\": [\n   {\"type\": \"tool_use\", \"id\": \"toolu_1\", \"name\": \"run_commands\", \"input\": {\"commands\": [\"ls\"], \"reason\": \"Look.\"}}\n  ]},\n  {\"id\": \"m2\", \"role\": \"user\", \"content\": [{\"type\": \"tool_result\", \"tool_use_id\": \"toolu_1\", \"content\": \"a\"}]},\n  {\"id\": \"m3\", \"role\": \"assistant\", \"ts\": 1767225601000, \"content\": [\n   {\"type\": \"tool_use\", \"id\": \"toolu_2\", \"name\": \"read_files\", \"input\": {\"paths\": [\"a\"]}}\n  ]}\n ]\n}\n";
        assert_eq!(
            brief(text),
            expect(&[(7, "run_commands", Present), (11, "read_files", Missing)])
        );
        let calls = records(text);
        assert_eq!(calls[0].format, Format::Cline);
        assert_eq!(calls[0].session.as_deref(), Some("c-1"));
        assert_eq!(calls[0].call_id.as_deref(), Some("toolu_1"));
        assert_eq!(calls[1].timestamp.as_deref(), Some("1767225601000"));
    }
}
