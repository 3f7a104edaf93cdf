//! SWE-agent trajectories (`.traj`): the calls are the assistant `tool_calls` in `history`;
//! `trajectory[].messages` are snapshots of the history the model saw at each step.

use serde_json::{Map, Value};

use super::walk::{Visit, Walker};

pub(crate) fn visit(map: &Map<String, Value>, _key: Option<&str>, _walk: &mut Walker) -> Visit {
    if map.get("history").is_some_and(Value::is_array)
        && map.get("trajectory").is_some_and(Value::is_array)
    {
        return Visit::Only("history");
    }
    Visit::Pass
}
