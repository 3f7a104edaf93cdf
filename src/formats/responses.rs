//! OpenAI Responses items `{"type": "function_call", "name", "arguments", "call_id"}` and the
//! kinds whose input cannot carry a reason (`custom_tool_call`, `local_shell_call`,
//! `web_search_call`), in API payloads, streamed events and Codex rollouts (which wrap them as
//! `{"type": "response_item", "payload": …}`).

use serde_json::{Map, Value};

use super::walk::{id_at, str_at, Call, Visit, Walker};
use crate::formats::Format;

pub(crate) fn visit(map: &Map<String, Value>, _key: Option<&str>, walk: &mut Walker) -> Visit {
    let Some(kind) = str_at(map, "type") else {
        return Visit::Pass;
    };
    let call_id = || id_at(map, "call_id").or_else(|| id_at(map, "id"));
    let call = match kind {
        "function_call" => str_at(map, "name").map(|name| Call {
            format: Format::OpenaiResponses,
            call_id: call_id(),
            tool: name.to_owned(),
            arguments: map.get("arguments").cloned().unwrap_or(Value::Null),
            freeform: false,
        }),
        "custom_tool_call" => str_at(map, "name").map(|name| Call {
            format: Format::OpenaiResponses,
            call_id: call_id(),
            tool: name.to_owned(),
            arguments: map.get("input").cloned().unwrap_or(Value::Null),
            freeform: true,
        }),
        // Hosted tools have no name of their own: the item's kind names them.
        "local_shell_call" | "web_search_call" => Some(Call {
            format: Format::OpenaiResponses,
            call_id: call_id(),
            tool: kind.trim_end_matches("_call").to_owned(),
            arguments: map.get("action").cloned().unwrap_or(Value::Null),
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
            let payload = map.get("payload").and_then(Value::as_object);
            if let Some(id) = payload.and_then(|payload| str_at(payload, "id")) {
                walk.state.session = Some(id.to_owned());
            }
            return Visit::Skip;
        }
        "response.output_item.done" => return Visit::Streamed,
        kind if kind.starts_with("response.")
            && map.get("response").is_some_and(Value::is_object) =>
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
