//! SWE-agent trajectories (`.traj`): the calls are the assistant `tool_calls` in `history`;
//! `trajectory[].messages` are snapshots of the history the model saw at each step.

use super::descriptor::{Outer, Shape};
use crate::formats::catalogue;
use crate::formats::event_walk::{Visit, Walker};
use crate::json::{Json, Object};
use crate::record::Format;

pub(crate) const SHAPE: Shape = Shape {
    container: Some(is_trajectory),
    // Its calls are OpenAI chat `tool_calls` in `history`, which that shape finds.
    ..Shape::visiting(
        Format::SweAgent,
        visit,
        &[super::openai_chat::TOKENS, catalogue::TOKENS],
    )
};

fn is_trajectory(outer: &Outer<'_>) -> bool {
    outer.map.get("history").is_some_and(Json::is_array)
}

pub(crate) fn visit<'p>(map: Object<'p>, key: Option<&str>, _walk: &mut Walker<'_, 'p>) -> Visit {
    // A step's own fields are free text (`action`, `observation`); what could look like calls
    // is in its `messages`, which only repeat the history.
    if key == Some("trajectory") && map.contains_key("messages") {
        return Visit::Skip;
    }
    Visit::Pass
}

#[cfg(test)]
mod tests {
    use crate::formats::tests::support::{brief, expect, records};
    use crate::record::Format;
    use crate::record::Status::Missing;

    #[test]
    fn trajectory_messages_are_snapshots_and_history_holds_the_calls() {
        let call = r#"{"role": "assistant", "tool_calls": [{"id": "c", "type": "function", "function": {"name": "bash", "arguments": "{\"command\": \"ls\"}"}}]}"#;
        let text = format!(
            "{{\n\"trajectory\": [{{\"action\": \"ls\", \"messages\": [{call}]}}],\n\"history\": [\n{call}\n]\n}}\n"
        );
        assert_eq!(brief(&text), expect(&[(4, "bash", Missing)]));
        assert_eq!(records(&text)[0].format, Format::SweAgent);
    }
}
