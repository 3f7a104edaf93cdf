//! Hermes Agent sessions: its session files (`~/.hermes/sessions/session_<id>.json`,
//! `{"session_id", "model", "platform", "session_start", "messages"}`), and the rows of its
//! store's `messages` table (`{"role", "content", "tool_calls", "tool_call_id", "tool_name",
//! "finish_reason", "timestamp", …}`), read from `state.db` itself (`formats::store`) or
//! exported one a line. The messages are OpenAI Chat's, and so are their calls,
//! `tool_calls[].{id, function: {name, arguments}}`, which the OpenAI Chat shape reads; an
//! exported row keeps its list of them as JSON text, decoded here (a row read from the store
//! has it inline). A row of role `tool` is a result.

use super::descriptor::{Outer, Shape};
use super::openai_chat;
use crate::formats::event_walk::{str_is, Visit, WalkOptions, Walker};
use crate::json::{Json, Object, Parser};
use crate::record::Format;

pub(crate) const SHAPE: Shape = Shape {
    format: Format::Hermes,
    visit: None,
    tokens: &[openai_chat::TOKENS],
    stream_tokens: &[],
    container: Some(is_session_or_row),
    holds: Some(SESSION_OR_ROW),
    line_start: None,
    flush: None,
};

const SESSION_OR_ROW: WalkOptions = WalkOptions {
    shapes: &[visit, openai_chat::visit],
    catalogues: false,
    sessions: WalkOptions::SESSIONS,
    times: WalkOptions::TIMES,
};

/// A session file (its `session_id` beside the messages, and when it started), or a row of
/// the store's `messages` table (a message with the columns of a tool's name and a finish).
fn is_session_or_row(outer: &Outer<'_>) -> bool {
    let map = outer.map;
    (map.get("session_id").is_some_and(Json::is_string)
        && map.get("messages").is_some_and(Json::is_array)
        && (map.contains_key("session_start") || map.contains_key("platform")))
        || (map.get("role").is_some_and(Json::is_string)
            && map.contains_key("tool_name")
            && map.contains_key("tool_call_id")
            && map.contains_key("finish_reason"))
}

fn visit<'p>(map: Object<'p>, _key: Option<&str>, walk: &mut Walker<'_, 'p>) -> Visit {
    if str_is(map, "role", "tool") {
        return Visit::Skip;
    }
    let Some(listed) = map.get("tool_calls").and_then(Json::as_str) else {
        return Visit::Pass;
    };
    // A row: its calls are JSON text (empty when it has none).
    let mut parser = Parser::default();
    if let Ok(calls) = parser.parse(&listed) {
        for call in calls.as_array().into_iter().flatten() {
            if let Some(call) = call.as_object() {
                openai_chat::tool_call(call, walk);
            }
        }
    }
    Visit::Skip
}

#[cfg(test)]
mod tests {
    use crate::formats::tests::support::{brief, expect, records};
    use crate::record::Format;
    use crate::record::Status::{Missing, Present};

    #[test]
    fn a_rows_calls_are_decoded_from_their_text_and_tool_rows_are_results() {
        let row = |role: &str, calls: &str, id: &str| {
            format!(
                r#"{{"role":"{role}","content":"","tool_calls":{calls},"tool_call_id":"{id}","tool_name":"","finish_reason":"","timestamp":"2026-08-02T21:54:39.610Z","_ts":1785707679.6}}"#
            )
        };
        let calls = serde_json::to_string(
            r#"[{"id":"call_1","type":"function","function":{"name":"terminal","arguments":"{\"command\":\"ls\",\"reason\":\"See the files.\"}"}},{"id":"call_2","type":"function","function":{"name":"read_file","arguments":"{\"path\":\"a\"}"}}]"#,
        )
        .unwrap();
        let text = [
            row("user", r#""""#, ""),
            row("assistant", &calls, ""),
            row("tool", r#""""#, "call_1"),
        ]
        .join("\n");
        assert_eq!(
            brief(&text),
            expect(&[(2, "terminal", Present), (2, "read_file", Missing)])
        );
        let call = &records(&text)[0];
        assert_eq!(call.format, Format::Hermes);
        assert_eq!(call.call_id.as_deref(), Some("call_1"));
        assert_eq!(call.timestamp.as_deref(), Some("2026-08-02T21:54:39.610Z"));
    }

    #[test]
    fn a_session_file_holds_openai_chat_messages() {
        let text = r#"{"session_id":"h-1","model":"m","platform":"cli","session_start":"2026-08-02T21:54:30","messages":[{"role":"user","content":"go"},{"role":"assistant","content":"","tool_calls":[{"id":"call_9","type":"function","function":{"name":"terminal","arguments":"{\"command\":\"ls\"}"}}]},{"role":"tool","tool_call_id":"call_9","content":"a"}]}"#;
        let calls = records(text);
        assert_eq!(calls.len(), 1);
        assert_eq!(calls[0].format, Format::Hermes);
        assert_eq!(calls[0].session.as_deref(), Some("h-1"));
    }
}
