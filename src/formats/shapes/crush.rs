//! Crush sessions: a row of the `messages` table of its per-project `.crush/crush.db` store,
//! read as the object of its columns with its `parts` inline (see `crate::formats::store`). A
//! call is a part `{type: "tool_call", data: {id, name, input}}`, `input` a JSON string; its
//! `tool_result` parts are results.

use super::descriptor::{Outer, Shape};
use crate::formats::event_walk::{id_at, str_at, Call, Visit, WalkOptions, Walker};
use crate::json::{Json, Object};
use crate::record::Format;

pub(crate) const SHAPE: Shape = Shape {
    format: Format::Crush,
    visit: None,
    tokens: &[&["\"tool_call\""]],
    stream_tokens: &[],
    container: Some(is_message_row),
    holds: Some(MESSAGE_ROW),
    line_start: None,
    flush: None,
};

const MESSAGE_ROW: WalkOptions = WalkOptions {
    shapes: &[visit],
    catalogues: false,
    sessions: &["session_id"],
    times: &["created_at"],
};

fn is_message_row(outer: &Outer<'_>) -> bool {
    outer.map.get("parts").is_some_and(Json::is_array)
        && outer.map.contains_key("session_id")
        && outer.map.contains_key("role")
}

fn visit<'p>(map: Object<'p>, _key: Option<&str>, walk: &mut Walker<'_, 'p>) -> Visit {
    match walk.kind().as_deref() {
        Some("tool_call") => {
            let Some(data) = map.get("data").and_then(Json::as_object) else {
                return Visit::Skip;
            };
            let Some(tool) = str_at(data, "name") else {
                return Visit::Skip;
            };
            let arguments = walk.arguments(data.get("input"));
            walk.call(Call {
                format: Format::Crush,
                call_id: id_at(data, "id"),
                tool: tool.into_owned(),
                arguments,
                freeform: false,
            });
            Visit::Skip
        }
        Some("tool_result") => Visit::Skip,
        _ => Visit::Pass,
    }
}

#[cfg(test)]
mod tests {
    use crate::formats::tests::support::{brief, expect, records};
    use crate::record::Format;
    use crate::record::Status::{Missing, Present};

    #[test]
    fn tool_call_parts_are_calls_and_tool_results_are_not() {
        let text = [
            r#"{"id":"m1","session_id":"s1","role":"assistant","created_at":1754315346,"parts":[{"type":"tool_call","data":{"id":"call_a","name":"bash","input":"{\"command\": \"ls\", \"reason\": \"Look.\"}","type":"function","finished":true}},{"type":"finish","data":{"reason":"tool_use","time":1754315350}}]}"#,
            r#"{"id":"m2","session_id":"s1","role":"tool","created_at":1754315350,"parts":[{"type":"tool_result","data":{"tool_call_id":"call_a","name":"bash","content":"a"}}]}"#,
            r#"{"id":"m3","session_id":"s1","role":"assistant","created_at":1754315351,"parts":[{"type":"tool_call","data":{"id":"call_b","name":"view","input":"{\"file_path\": \"a\"}"}}]}"#,
        ]
        .join("\n");
        assert_eq!(
            brief(&text),
            expect(&[(1, "bash", Present), (3, "view", Missing)])
        );
        let call = &records(&text)[0];
        assert_eq!(call.format, Format::Crush);
        assert_eq!(call.session.as_deref(), Some("s1"));
        assert_eq!(call.call_id.as_deref(), Some("call_a"));
        assert_eq!(call.timestamp.as_deref(), Some("1754315346"));
    }
}
