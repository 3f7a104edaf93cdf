//! OpenHands event trajectories: an action with `tool_call_metadata` is a call; observations
//! (which repeat the call's id) and the raw model response an action embeds are mirrors.

use super::descriptor::Shape;
use crate::formats::event_walk::{str_at, Call, Visit, Walker};
use crate::json::{Json, Object};
use crate::record::Format;

pub(crate) const SHAPE: Shape =
    Shape::visiting(Format::Openhands, visit, &[&["\"tool_call_metadata\""]]);

pub(crate) fn visit<'p>(map: Object<'p>, _key: Option<&str>, walk: &mut Walker<'_, 'p>) -> Visit {
    if let Some(metadata) = map.get("tool_call_metadata").and_then(Json::as_object) {
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
            .as_deref()
            .and_then(|id| model_arguments(metadata, id))
            .or_else(|| map.get("args"));
        let arguments = walk.arguments(arguments);
        walk.call(Call {
            format: Format::Openhands,
            call_id: call_id.map(|id| id.into_owned()),
            tool: name.into_owned(),
            arguments,
            freeform: false,
        });
        return Visit::Skip;
    }
    if map.get("observation").is_some_and(Json::is_string) {
        return Visit::Skip;
    }
    Visit::Pass
}

fn model_arguments<'p>(metadata: Object<'p>, id: &str) -> Option<Json<'p>> {
    let response = metadata.get("model_response")?.as_object()?;
    let choices = response.get("choices")?.as_array()?;
    choices
        .filter_map(|choice| {
            let message = choice.as_object()?.get("message")?.as_object()?;
            message.get("tool_calls")?.as_array()
        })
        .flatten()
        .filter_map(Json::as_object)
        .find(|call| {
            call.get("id")
                .and_then(Json::as_text)
                .is_some_and(|found| found.is(id))
        })
        .and_then(|call| call.get("function")?.as_object()?.get("arguments"))
}

#[cfg(test)]
mod tests {
    use crate::formats::tests::support::{brief, expect, records};
    use crate::record::Format;
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
