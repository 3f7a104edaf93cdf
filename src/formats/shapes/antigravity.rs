//! Antigravity CLI transcripts (`~/.gemini/antigravity-cli/brain/<conversation>/
//! .system_generated/logs/transcript.jsonl`): one trajectory step a line, `{"step_index",
//! "source", "type", "status", "created_at", …}`. A call is an entry `{"name", "args"}` of a
//! `PLANNER_RESPONSE` step's `tool_calls`, with no id, and each of its arguments JSON-encoded
//! on its own (`"CommandLine": "\"ls\""`, `"WaitMsBeforeAsync": "500"`); the steps that run the
//! tools (`RUN_COMMAND`, `VIEW_FILE`…) hold their output.

use serde_json::{Map, Value};

use super::descriptor::{Outer, Shape};
use super::openai_chat;
use crate::formats::event_walk::{str_at, Call, Visit, WalkOptions, Walker};
use crate::json::{Json, Object};
use crate::record::Format;

pub(crate) const SHAPE: Shape = Shape {
    format: Format::Antigravity,
    visit: None,
    tokens: &[openai_chat::TOKENS],
    stream_tokens: &[],
    container: Some(is_step),
    holds: Some(STEP),
    line_start: None,
    flush: None,
};

const STEP: WalkOptions = WalkOptions {
    shapes: &[visit],
    catalogues: false,
    sessions: WalkOptions::SESSIONS,
    times: &["created_at"],
};

fn is_step(outer: &Outer<'_>) -> bool {
    outer
        .map
        .get("step_index")
        .is_some_and(|index| index.as_number().is_some())
        && outer.map.contains_key("source")
        && outer.kind().is_some()
}

fn visit<'p>(map: Object<'p>, key: Option<&str>, walk: &mut Walker<'_, 'p>) -> Visit {
    if key.is_none() {
        return match walk.kind().as_deref() {
            Some("PLANNER_RESPONSE") => Visit::Descend,
            // The user's input, the tools' output, checkpoints and reminders.
            _ => Visit::Skip,
        };
    }
    if key != Some("tool_calls") {
        return Visit::Skip;
    }
    let Some(name) = str_at(map, "name") else {
        return Visit::Skip;
    };
    let arguments = map.get("args").and_then(Json::as_object).map(decoded);
    let arguments = match arguments {
        Some(arguments) => walk.json_text_arguments(&arguments.to_string()),
        None => walk.arguments(map.get("args")),
    };
    walk.call(Call {
        format: Format::Antigravity,
        call_id: None,
        tool: name.into_owned(),
        arguments,
        freeform: false,
    });
    Visit::Skip
}

/// The arguments with each value decoded from the JSON text it was written as; a value that
/// is no JSON text stays the string it is.
fn decoded(args: Object<'_>) -> Value {
    let members = args.iter().map(|(key, value)| {
        let value = match value.as_str() {
            Some(text) => serde_json::from_str(&text).unwrap_or(Value::String(text.into_owned())),
            None => value.to_value(),
        };
        (key.decode().into_owned(), value)
    });
    Value::Object(members.collect::<Map<String, Value>>())
}

#[cfg(test)]
mod tests {
    use crate::formats::tests::support::{brief, expect, records};
    use crate::record::Format;
    use crate::record::Status::{Blank, Invalid, Present};

    fn planner(args: &str) -> String {
        format!(
            r#"{{"step_index":3,"source":"MODEL","type":"PLANNER_RESPONSE","status":"DONE","created_at":"2026-06-20T12:00:16Z","thinking":"t","tool_calls":[{{"name":"run_command","args":{args}}}]}}"#
        )
    }

    #[test]
    fn planner_tool_calls_are_calls_with_each_argument_decoded() {
        let text = [
            r#"{"step_index":0,"source":"USER_EXPLICIT","type":"USER_INPUT","status":"DONE","created_at":"2026-06-20T12:00:15Z","content":"go"}"#.to_owned(),
            planner(r#"{"CommandLine":"\"ls\"","WaitMsBeforeAsync":"500","reason":"\"See the files.\""}"#),
            r#"{"step_index":4,"source":"MODEL","type":"RUN_COMMAND","status":"DONE","created_at":"2026-06-20T12:00:20Z","content":"a","tool_calls":[{"name":"mirror","args":{}}]}"#.to_owned(),
            planner(r#"{"CommandLine":"\"pwd\"","reason":"\"\""}"#),
            planner(r#"{"CommandLine":"\"id\"","reason":"3"}"#),
        ]
        .join("\n");
        assert_eq!(
            brief(&text),
            expect(&[
                (2, "run_command", Present),
                (4, "run_command", Blank),
                (5, "run_command", Invalid)
            ])
        );
        let call = &records(&text)[0];
        assert_eq!(call.format, Format::Antigravity);
        assert_eq!(call.reason.as_deref(), Some("See the files."));
        assert_eq!(call.call_id, None);
        assert_eq!(call.timestamp.as_deref(), Some("2026-06-20T12:00:16Z"));
    }
}
