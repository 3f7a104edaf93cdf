//! OpenHands event trajectories: an action with `tool_call_metadata` is a call; observations
//! (which repeat the call's id) and the raw model response an action embeds are mirrors.

use serde_json::{Map, Value};

use super::walk::{str_at, Call, Visit, Walker};
use crate::formats::Format;

pub(crate) fn visit(map: &Map<String, Value>, _key: Option<&str>, walk: &mut Walker) -> Visit {
    if let Some(Value::Object(metadata)) = map.get("tool_call_metadata") {
        if !map.contains_key("action") {
            return Visit::Skip;
        }
        let Some(name) = str_at(metadata, "function_name") else {
            return Visit::Skip;
        };
        let call_id = str_at(metadata, "tool_call_id");
        // The model's own arguments are where a reason would be; the action's `args` are
        // OpenHands' rewriting of them, used only when the response is not recorded.
        let arguments = call_id
            .and_then(|id| model_arguments(metadata, id))
            .or_else(|| map.get("args").cloned())
            .unwrap_or(Value::Null);
        walk.call(Call {
            format: Format::Openhands,
            call_id: call_id.map(str::to_owned),
            tool: name.to_owned(),
            arguments,
            freeform: false,
        });
        return Visit::Skip;
    }
    if map.get("observation").is_some_and(Value::is_string) {
        return Visit::Skip;
    }
    Visit::Pass
}

fn model_arguments(metadata: &Map<String, Value>, id: &str) -> Option<Value> {
    let choices = metadata.get("model_response")?.get("choices")?.as_array()?;
    choices
        .iter()
        .filter_map(|choice| choice.get("message")?.get("tool_calls")?.as_array())
        .flatten()
        .find(|call| call.get("id").and_then(Value::as_str) == Some(id))
        .and_then(|call| call.get("function")?.get("arguments").cloned())
}
