//! OpenAI Responses items `{"type": "function_call", "name", "arguments", "call_id"}` and the
//! kinds whose input cannot carry a reason (`custom_tool_call`, `local_shell_call`,
//! `web_search_call`), in API payloads, streamed events and Codex rollouts (which wrap them as
//! `{"type": "response_item", "payload": …}`).

use super::descriptor::Shape;
use crate::formats::catalogue;
use crate::formats::event_walk::{id_at, str_at, Call, Visit, Walker};
use crate::json::{Json, Object};
use crate::record::Format;

pub(crate) const SHAPE: Shape =
    Shape::visiting(Format::OpenaiResponses, visit, &[TOKENS, catalogue::TOKENS]);

/// The item types that are calls.
pub(crate) const TOKENS: &[&str] = &[
    "\"function_call\"",
    "\"custom_tool_call\"",
    "\"local_shell_call\"",
    "\"web_search_call\"",
];

pub(crate) fn visit<'p>(map: Object<'p>, _key: Option<&str>, walk: &mut Walker<'_, 'p>) -> Visit {
    let Some(kind) = walk.kind() else {
        return Visit::Pass;
    };
    let call_id = || id_at(map, "call_id").or_else(|| id_at(map, "id"));
    let call = match kind.as_ref() {
        "function_call" => str_at(map, "name").map(|name| Call {
            format: Format::OpenaiResponses,
            call_id: call_id(),
            tool: name.into_owned(),
            arguments: walk.arguments(map.get("arguments")),
            freeform: false,
        }),
        "custom_tool_call" => str_at(map, "name").map(|name| Call {
            format: Format::OpenaiResponses,
            call_id: call_id(),
            tool: name.into_owned(),
            arguments: walk.arguments(map.get("input")),
            freeform: true,
        }),
        // Hosted tools have no name of their own: the item's kind names them.
        "local_shell_call" | "web_search_call" => Some(Call {
            format: Format::OpenaiResponses,
            call_id: call_id(),
            tool: kind.trim_end_matches("_call").to_owned(),
            arguments: walk.arguments(map.get("action")),
            freeform: true,
        }),
        // Results, Codex's mirrors of what happened, and a stream's partial items.
        kind if kind.ends_with("_output")
            || kind == "event_msg"
            || kind == "response.output_item.added"
            || kind.starts_with("response.function_call_arguments.")
            || kind.starts_with("response.custom_tool_call_input.") =>
        {
            return Visit::Skip
        }
        "session_meta" => {
            let payload = map.get("payload").and_then(Json::as_object);
            if let Some(id) = payload.and_then(|payload| str_at(payload, "id")) {
                walk.session_meta(id.into_owned());
            }
            return Visit::Skip;
        }
        "response.output_item.done" => return Visit::Streamed,
        kind if kind.starts_with("response.")
            && map.get("response").is_some_and(Json::is_object) =>
        {
            return Visit::Snapshot
        }
        _ => return Visit::Pass,
    };
    match call {
        Some(call) => {
            walk.call(call);
            Visit::Skip
        }
        None => Visit::Pass,
    }
}

#[cfg(test)]
mod tests {
    use crate::formats::tests::support::{brief, expect, records};
    use crate::record::Format;
    use crate::record::Status::{Freeform, Missing, Present};

    #[test]
    fn function_call_items_are_calls_and_their_outputs_are_not() {
        let text = r#"{"input":[{"type":"function_call","name":"get","arguments":"{\"reason\":\"r\"}","call_id":"c1"},{"type":"function_call_output","call_id":"c1","output":"{}"}]}"#;
        let calls = records(text);
        assert_eq!(calls.len(), 1);
        assert_eq!(calls[0].format, Format::OpenaiResponses);
        assert_eq!(calls[0].call_id.as_deref(), Some("c1"));
        assert_eq!(calls[0].status, Present);
    }

    #[test]
    fn custom_local_shell_and_web_search_calls_are_freeform() {
        let text = r#"{"output":[{"type":"custom_tool_call","name":"apply_patch","input":"{\"reason\":\"looks like JSON\"}","call_id":"a"},{"type":"local_shell_call","call_id":"b","action":{"type":"exec","command":["ls"]}},{"type":"web_search_call","id":"ws","action":{"type":"search","query":"q"}}]}"#;
        assert_eq!(
            brief(text),
            expect(&[
                (1, "apply_patch", Freeform),
                (1, "local_shell", Freeform),
                (1, "web_search", Freeform)
            ])
        );
    }

    #[test]
    fn codex_response_items_are_codex_and_event_msgs_are_never_calls() {
        let text = [
            r#"{"timestamp":"t0","type":"session_meta","payload":{"id":"sess-9","cwd":"/"}}"#,
            r#"{"timestamp":"t1","type":"response_item","payload":{"type":"function_call","name":"shell","arguments":"{\"command\":[\"ls\"]}","call_id":"c"}}"#,
            r#"{"timestamp":"t2","type":"event_msg","payload":{"type":"exec_command_end","call_id":"c","command":["ls"]}}"#,
            r#"{"timestamp":"t3","type":"event_msg","payload":{"type":"raw","item":{"type":"function_call","name":"shell","arguments":"{}","call_id":"d"}}}"#,
        ]
        .join("\n");
        let calls = records(&text);
        assert_eq!(calls.len(), 1);
        let call = &calls[0];
        assert_eq!(
            (call.format, call.line, call.status),
            (Format::Codex, 2, Missing)
        );
        assert_eq!(call.session.as_deref(), Some("sess-9"));
        assert_eq!(call.timestamp.as_deref(), Some("t1"));
    }

    #[test]
    fn a_streamed_item_counts_once_not_again_in_the_completed_snapshot() {
        let item = r#"{"type":"function_call","name":"get","arguments":"{}","call_id":"c"}"#;
        let text = format!(
            r#"[{{"type":"response.output_item.added","item":{{"type":"function_call","name":"get","arguments":"","call_id":"c"}}}},
{{"type":"response.function_call_arguments.done","arguments":"{{}}"}},
{{"type":"response.output_item.done","item":{item}}},
{{"type":"response.completed","response":{{"output":[{item}]}}}}]"#
        );
        assert_eq!(brief(&text), expect(&[(3, "get", Missing)]));
    }

    #[test]
    fn a_completed_snapshot_alone_yields_its_calls() {
        let text = r#"{"type":"response.completed","response":{"output":[{"type":"function_call","name":"get","arguments":"{}","call_id":"c"}]}}"#;
        assert_eq!(brief(text), expect(&[(1, "get", Missing)]));
    }
}
