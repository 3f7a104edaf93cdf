//! Qwen Code chat records: one `{uuid, parentUuid, sessionId, timestamp, type, message}` a
//! line, the message Gemini-shaped (`message.parts[]`), its calls `functionCall {id, name,
//! args}` parts that the Gemini shape reads. `system` records (`ui_telemetry` among them) name
//! tools but hold no call of the model.

use super::descriptor::{Outer, Shape};
use super::gemini;
use crate::formats::event_walk::WalkOptions;
use crate::json::Json;
use crate::record::Format;

pub(crate) const SHAPE: Shape = Shape {
    format: Format::QwenCode,
    // The parts are Gemini's: that shape finds them, and the outer record relabels them.
    visit: None,
    tokens: &[&["\"functionCall\""]],
    stream_tokens: &[],
    container: Some(is_chat_record),
    holds: Some(CHAT_RECORD),
    line_start: None,
    flush: None,
};

const CHAT_RECORD: WalkOptions = WalkOptions {
    shapes: &[gemini::visit],
    catalogues: false,
    sessions: WalkOptions::SESSIONS,
    times: WalkOptions::TIMES,
};

/// A record with Claude Code's `parentUuid` around a Gemini message (`parts`, not `content`).
fn is_chat_record(outer: &Outer<'_>) -> bool {
    outer.map.contains_key("parentUuid")
        && outer
            .map
            .get("message")
            .and_then(Json::as_object)
            .and_then(|message| message.get("parts"))
            .is_some_and(Json::is_array)
}

#[cfg(test)]
mod tests {
    use crate::formats::tests::support::{brief, expect, records};
    use crate::record::Format;
    use crate::record::Status::{Blank, Present};

    #[test]
    fn function_call_parts_are_calls_of_qwen_code_and_telemetry_is_not() {
        let text = [
            r#"{"uuid":"u1","parentUuid":null,"sessionId":"q-1","timestamp":"2026-02-01T00:00:00Z","type":"user","message":{"role":"user","parts":[{"text":"list"}]}}"#,
            r#"{"uuid":"u2","parentUuid":"u1","sessionId":"q-1","timestamp":"2026-02-01T00:00:01Z","type":"assistant","message":{"role":"model","parts":[{"functionCall":{"id":"call_1","name":"run_shell_command","args":{"command":"ls","reason":"See what is here."}}}]}}"#,
            r#"{"uuid":"u3","parentUuid":"u2","sessionId":"q-1","timestamp":"2026-02-01T00:00:02Z","type":"system","subtype":"ui_telemetry","systemPayload":{"uiEvent":{"event.name":"qwen-code.tool_call","function_name":"run_shell_command","function_args":{"command":"ls"}}}}"#,
            r#"{"uuid":"u4","parentUuid":"u3","sessionId":"q-1","timestamp":"2026-02-01T00:00:03Z","type":"tool_result","message":{"role":"user","parts":[{"functionResponse":{"id":"call_1","name":"run_shell_command","response":{"output":"a"}}}]}}"#,
            r#"{"uuid":"u5","parentUuid":"u4","sessionId":"q-1","timestamp":"2026-02-01T00:00:04Z","type":"assistant","message":{"role":"model","parts":[{"functionCall":{"id":"call_2","name":"read_file","args":{"path":"a","reason":" "}}}]}}"#,
        ]
        .join("\n");
        assert_eq!(
            brief(&text),
            expect(&[(2, "run_shell_command", Present), (5, "read_file", Blank)])
        );
        let call = &records(&text)[0];
        assert_eq!(call.format, Format::QwenCode);
        assert_eq!(call.session.as_deref(), Some("q-1"));
        assert_eq!(call.call_id.as_deref(), Some("call_1"));
        assert_eq!(call.timestamp.as_deref(), Some("2026-02-01T00:00:01Z"));
    }
}
