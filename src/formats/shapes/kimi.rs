//! Kimi CLI wire logs: `tool.call` events (`name`, `args`, `toolCallId`).

use super::descriptor::{Outer, Shape};
use crate::formats::event_walk::{id_at, str_at, Call, Visit, Walker};
use crate::json::Object;
use crate::record::Format;

pub(crate) const SHAPE: Shape = Shape {
    container: Some(is_wire_event),
    ..Shape::visiting(Format::Kimi, visit, &[&["\"tool.call\""]])
};

fn is_wire_event(outer: &Outer<'_>) -> bool {
    outer
        .kind()
        .is_some_and(|kind| kind.starts_with("context.") || kind == "tool.call")
}

pub(crate) fn visit<'p>(map: Object<'p>, _key: Option<&str>, walk: &mut Walker<'_, 'p>) -> Visit {
    match walk.kind().as_deref() {
        Some("tool.call") => {
            let Some(name) = str_at(map, "name") else {
                return Visit::Pass;
            };
            let arguments = walk.arguments(map.get("args"));
            walk.call(Call {
                format: Format::Kimi,
                call_id: id_at(map, "toolCallId").or_else(|| id_at(map, "id")),
                tool: name.into_owned(),
                arguments,
                freeform: false,
            });
            Visit::Skip
        }
        Some("tool.result") => Visit::Skip,
        _ => Visit::Pass,
    }
}

#[cfg(test)]
mod tests {
    use crate::formats::tests::support::records;
    use crate::record::Format;
    use crate::record::Status::Present;

    #[test]
    fn tool_call_events_are_calls_and_tool_results_are_not() {
        let text = [
            r#"{"type":"context.append_loop_event","event":{"type":"tool.call","uuid":"u","toolCallId":"k1","name":"Read","args":{"path":"a","reason":"r"}},"time":1700000000000}"#,
            r#"{"type":"context.append_loop_event","event":{"type":"tool.result","toolCallId":"k1","result":{"output":"x"}},"time":1700000000001}"#,
        ]
        .join("\n");
        let calls = records(&text);
        assert_eq!(calls.len(), 1);
        let call = &calls[0];
        assert_eq!((call.format, call.status), (Format::Kimi, Present));
        assert_eq!(call.call_id.as_deref(), Some("k1"));
        assert_eq!(call.timestamp.as_deref(), Some("1700000000000"));
    }
}
