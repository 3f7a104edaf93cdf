//! Goose sessions: a row of the `messages` table of its `sessions.db` store, read as the object
//! of its columns with `content_json` inline (see `crate::formats::store`); before 1.10, a JSONL
//! file per session, a metadata line first, then one message a line. Either way a message's
//! content holds `toolRequest` parts (`id`, `toolCall.value {name, arguments}`); its
//! `toolResponse` parts are results.

use super::descriptor::{Outer, Shape};
use crate::formats::event_walk::{id_at, str_at, Call, Visit, WalkOptions, Walker};
use crate::json::{Json, Object};
use crate::record::Format;

pub(crate) const SHAPE: Shape = Shape {
    format: Format::Goose,
    visit: None,
    tokens: &[&["\"toolRequest\""]],
    stream_tokens: &[],
    container: Some(is_message),
    holds: Some(MESSAGE),
    line_start: None,
    flush: None,
};

const MESSAGE: WalkOptions = WalkOptions {
    shapes: &[visit],
    catalogues: false,
    sessions: &["session_id"],
    times: &["created_timestamp", "created"],
};

/// A row of the store, or a message of a legacy session: a role, content parts, and when it
/// was `created`. (The legacy session's first line, its metadata, holds no call, and names the
/// session only as its file does.)
fn is_message(outer: &Outer<'_>) -> bool {
    (outer.map.get("content_json").is_some_and(Json::is_array)
        && outer.map.contains_key("session_id"))
        || (outer.map.get("content").is_some_and(Json::is_array)
            && outer
                .map
                .get("created")
                .is_some_and(|created| created.as_number().is_some())
            && outer.map.get("role").is_some_and(Json::is_string))
}

fn visit<'p>(map: Object<'p>, _key: Option<&str>, walk: &mut Walker<'_, 'p>) -> Visit {
    match walk.kind().as_deref() {
        Some("toolRequest") => {
            let value = map
                .get("toolCall")
                .and_then(Json::as_object)
                .and_then(|call| call.get("value"))
                .and_then(Json::as_object);
            // A request the model wrote that Goose could not read as a call holds an error
            // instead of its value: no tool was named.
            let Some((value, tool)) = value.and_then(|value| Some((value, str_at(value, "name")?)))
            else {
                return Visit::Skip;
            };
            let arguments = walk.arguments(value.get("arguments"));
            walk.call(Call {
                format: Format::Goose,
                call_id: id_at(map, "id"),
                tool: tool.into_owned(),
                arguments,
                freeform: false,
            });
            Visit::Skip
        }
        Some("toolResponse") => Visit::Skip,
        _ => Visit::Pass,
    }
}

#[cfg(test)]
mod tests {
    use crate::formats::tests::support::{brief, expect, records};
    use crate::record::Format;
    use crate::record::Status::{Invalid, Present};

    #[test]
    fn a_legacy_sessions_tool_requests_are_calls_and_its_responses_are_not() {
        let text = [
            r#"{"id":"20260101_1","description":"d","working_dir":"/w","extension_data":{},"message_count":2}"#,
            r#"{"id":"msg1","role":"assistant","created":1784278801,"content":[{"type":"toolRequest","id":"tr_1","toolCall":{"status":"success","value":{"name":"developer__shell","arguments":{"command":"ls","reason":"Look."}}}}]}"#,
            r#"{"id":"msg2","role":"user","created":1784278802,"content":[{"type":"toolResponse","id":"tr_1","toolResult":{"status":"success","value":[{"type":"text","text":"a"}]}}]}"#,
            r#"{"id":"msg3","role":"assistant","created":1784278803,"content":[{"type":"toolRequest","id":"tr_2","toolCall":{"status":"error","error":"bad json"}},{"type":"toolRequest","id":"tr_3","toolCall":{"status":"success","value":{"name":"x","arguments":{"reason":7}}}}]}"#,
        ]
        .join("\n");
        assert_eq!(
            brief(&text),
            expect(&[(2, "developer__shell", Present), (4, "x", Invalid)])
        );
        let call = &records(&text)[0];
        assert_eq!(call.format, Format::Goose);
        assert_eq!(call.call_id.as_deref(), Some("tr_1"));
        assert_eq!(call.timestamp.as_deref(), Some("1784278801"));
    }

    #[test]
    fn a_store_row_carries_its_session_and_time() {
        let row = r#"{"id":2,"message_id":"chatcmpl-1","session_id":"20260805_1","role":"assistant","created_timestamp":1785964864,"content_json":[{"type":"toolRequest","id":"tr_9","toolCall":{"status":"success","value":{"name":"shell","arguments":{"command":"ls"}}}}]}"#;
        let call = &records(row)[0];
        assert_eq!(call.format, Format::Goose);
        assert_eq!(call.session.as_deref(), Some("20260805_1"));
        assert_eq!(call.timestamp.as_deref(), Some("1785964864"));
    }
}
