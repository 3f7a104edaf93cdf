//! Gemini `functionCall {name, args}` parts (API requests, responses and streams) and Gemini CLI
//! `toolCalls[]` in its session records.

use super::descriptor::Shape;
use crate::formats::catalogue;
use crate::formats::event_walk::{id_at, str_at, Call, Visit, Walker};
use crate::json::{Json, Object};
use crate::record::Format;

pub(crate) const SHAPE: Shape = Shape::visiting(
    Format::Gemini,
    visit,
    &[&["\"functionCall\""], catalogue::TOKENS],
);

pub(crate) fn visit<'p>(map: Object<'p>, key: Option<&str>, walk: &mut Walker<'_, 'p>) -> Visit {
    // A Gemini CLI session log (JSON lines) names its session once, on its first line; the
    // messages that follow, and their calls, do not repeat it.
    if key.is_none() && map.contains_key("projectHash") && !map.contains_key("messages") {
        if let Some(session) = str_at(map, "sessionId") {
            walk.session_meta(session.into_owned());
        }
        return Visit::Skip;
    }
    if let Some(function_call) = map.get("functionCall").and_then(Json::as_object) {
        let Some(name) = str_at(function_call, "name") else {
            return Visit::Pass;
        };
        let arguments = walk.arguments(function_call.get("args"));
        walk.call(Call {
            format: Format::Gemini,
            call_id: id_at(function_call, "id"),
            tool: name.into_owned(),
            arguments,
            freeform: false,
        });
        return Visit::Skip;
    }
    if map.contains_key("functionResponse") {
        return Visit::Skip;
    }
    if key == Some("toolCalls") {
        // Each entry carries its own `result`: the call is taken whole, the result never read.
        let Some(name) = str_at(map, "name") else {
            return Visit::Pass;
        };
        let arguments = walk.arguments(map.get("args"));
        walk.call(Call {
            format: Format::GeminiCli,
            call_id: id_at(map, "id"),
            tool: name.into_owned(),
            arguments,
            freeform: false,
        });
        return Visit::Skip;
    }
    Visit::Pass
}

#[cfg(test)]
mod tests {
    use crate::formats::tests::support::{brief, expect, records};
    use crate::record::Format;
    use crate::record::Status::{Invalid, Missing, Present};

    #[test]
    fn function_call_parts_are_calls_and_function_responses_are_not() {
        let text = r#"{"contents":[{"role":"model","parts":[{"functionCall":{"name":"find","args":{"reason":"r"},"id":"g"}}]},{"role":"user","parts":[{"functionResponse":{"name":"find","response":{"functionCall":{"name":"nested"}}}}]}]}"#;
        let calls = records(text);
        assert_eq!(calls.len(), 1);
        assert_eq!(
            (calls[0].format, calls[0].status),
            (Format::Gemini, Present)
        );
        assert_eq!(calls[0].call_id.as_deref(), Some("g"));
    }

    #[test]
    fn a_gemini_cli_session_log_names_its_session_on_its_first_line() {
        let text = concat!(
            r#"{"sessionId":"0a82-s","projectHash":"5e93","startTime":"t0","lastUpdated":"t0","kind":"main"}"#,
            "\n",
            r#"{"$set":{"messages":[{"id":"m0","type":"user","content":[{"text":"hi"}]}]}}"#,
            "\n",
            r#"{"id":"m1","timestamp":"t1","type":"gemini","content":"","toolCalls":[{"id":"run_shell_command__1","name":"run_shell_command","args":{"command":"echo hi","reason":"Say hi"},"result":[],"status":"success"}]}"#,
            "\n",
        );
        let calls = records(text);
        assert_eq!(calls.len(), 1);
        assert_eq!(calls[0].format, Format::GeminiCli);
        assert_eq!(calls[0].session.as_deref(), Some("0a82-s"));
        assert_eq!(calls[0].line, 3);
        assert_eq!(calls[0].status, Present);
    }

    #[test]
    fn gemini_cli_tool_calls_are_calls_and_their_results_are_not() {
        let text = "{\n \"sessionId\": \"s\",\n \"projectHash\": \"h\",\n \"messages\": [\n  {\"type\": \"gemini\", \"timestamp\": \"t\", \"toolCalls\": [\n   {\"id\": \"a\", \"name\": \"ls\", \"args\": {\"reason\": 2}, \"result\": [{\"functionCall\": {\"name\": \"x\"}}]},\n   {\"id\": \"b\", \"name\": \"cat\", \"args\": {}, \"timestamp\": \"t2\"}\n  ]}\n ]\n}\n";
        assert_eq!(
            brief(text),
            expect(&[(6, "ls", Invalid), (7, "cat", Missing)])
        );
        let calls = records(text);
        assert_eq!(calls[0].format, Format::GeminiCli);
        assert_eq!(calls[0].session.as_deref(), Some("s"));
        assert_eq!(calls[1].timestamp.as_deref(), Some("t2"));
    }
}
