//! Kimi CLI wire logs: `tool.call` events (`name`, `args`, `toolCallId`).

use serde_json::{Map, Value};

use super::walk::{id_at, str_at, Call, Visit, Walker};
use crate::formats::Format;

pub(crate) fn visit(map: &Map<String, Value>, _key: Option<&str>, walk: &mut Walker) -> Visit {
    match str_at(map, "type") {
        Some("tool.call") => {
            let Some(name) = str_at(map, "name") else {
                return Visit::Pass;
            };
            walk.call(Call {
                format: Format::Kimi,
                call_id: id_at(map, "toolCallId").or_else(|| id_at(map, "id")),
                tool: name.to_owned(),
                arguments: map.get("args").cloned().unwrap_or(Value::Null),
                freeform: false,
            });
            Visit::Skip
        }
        Some("tool.result") => Visit::Skip,
        _ => Visit::Pass,
    }
}
