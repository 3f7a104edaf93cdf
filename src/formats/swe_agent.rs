//! SWE-agent trajectories (`.traj`): the calls are the assistant `tool_calls` in `history`;
//! `trajectory[].messages` are snapshots of the history the model saw at each step.

use super::walk::{Visit, Walker};
use crate::json::Object;

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
    use crate::formats::read::testing::{brief, expect, records};
    use crate::formats::Format;
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
