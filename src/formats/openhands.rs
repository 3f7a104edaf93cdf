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

#[cfg(test)]
mod tests {
    use crate::formats::read::testing::{brief, expect, records};
    use crate::formats::Format;
    use crate::record::Status::Present;

    const ACTION: &str = r#"{"id": 3, "timestamp": "t", "source": "agent", "action": "run",
 "tool_call_metadata": {"function_name": "execute_bash", "tool_call_id": "tc",
  "model_response": {"choices": [{"message": {"tool_calls": [
   {"id": "other", "function": {"name": "execute_bash", "arguments": "{\"command\": \"pwd\"}"}},
   {"id": "tc", "function": {"name": "execute_bash", "arguments": "{\"command\": \"ls\", \"reason\": \"look\"}"}}]}}]}},
 "args": {"command": "ls", "thought": ""}}"#;

    #[test]
    fn actions_are_calls_with_the_models_arguments_and_observations_are_not() {
        let observation = ACTION.replace(
            "\"action\": \"run\"",
            "\"observation\": \"run\", \"cause\": 3",
        );
        let text = format!("[\n{ACTION},\n{observation}\n]\n");
        assert_eq!(brief(&text), expect(&[(2, "execute_bash", Present)]));
        let call = &records(&text)[0];
        assert_eq!(call.format, Format::Openhands);
        assert_eq!(call.call_id.as_deref(), Some("tc"));
        assert_eq!(call.reason.as_deref(), Some("look"));
    }
}
