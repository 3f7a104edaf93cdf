//! GitHub Copilot CLI session events: one `{type, data, id, timestamp, parentId}` a line. A call
//! is an entry of an `assistant.message`'s `data.toolRequests[]` (`toolCallId`, `name`,
//! `arguments`); `tool.execution_start` records it again as the tool starts (`toolCallId`,
//! `toolName`, `arguments`): one call, counted where it was first recorded. `session.start`
//! names the session once for every event after it.

use super::descriptor::{Outer, Shape};
use crate::formats::event_walk::{id_at, str_at, Call, Visit, WalkOptions, Walker};
use crate::json::{Json, Object};
use crate::record::Format;

pub(crate) const SHAPE: Shape = Shape {
    format: Format::CopilotCli,
    // Its visit is only ever needed inside its own events: other formats' events never pay
    // for it.
    visit: None,
    tokens: &[&[
        "\"toolRequests\"",
        "\"tool.execution_start\"",
        "\"session.start\"",
    ]],
    stream_tokens: &[],
    container: Some(is_session_event),
    holds: Some(SESSION_EVENT),
    line_start: None,
    flush: None,
};

/// A Copilot event holds its calls in the places `visit` knows, and no catalogue.
const SESSION_EVENT: WalkOptions = WalkOptions {
    shapes: &[visit],
    catalogues: false,
    sessions: WalkOptions::SESSIONS,
    times: WalkOptions::TIMES,
};

fn is_session_event(outer: &Outer<'_>) -> bool {
    outer.map.get("data").is_some_and(Json::is_object)
        && outer.map.contains_key("parentId")
        && outer.kind().is_some_and(|kind| kind.contains('.'))
}

fn visit<'p>(map: Object<'p>, key: Option<&str>, walk: &mut Walker<'_, 'p>) -> Visit {
    let data = || map.get("data").and_then(Json::as_object);
    if key.is_none() {
        return match walk.kind().as_deref() {
            Some("session.start") => {
                if let Some(session) = data().and_then(|data| str_at(data, "sessionId")) {
                    walk.session_meta(session.into_owned());
                }
                Visit::Skip
            }
            Some("assistant.message") => Visit::Descend,
            Some("tool.execution_start") => {
                if let Some(data) = data() {
                    call(data, "toolName", walk);
                }
                Visit::Skip
            }
            // Results, progress, and the events of subagents and hooks: no call of the model.
            _ => Visit::Skip,
        };
    }
    if key == Some("toolRequests") {
        call(map, "name", walk);
        return Visit::Skip;
    }
    Visit::Pass
}

/// Records the call `map` describes, its tool's name at `name`.
fn call(map: Object<'_>, name: &str, walk: &mut Walker<'_, '_>) {
    let Some(tool) = str_at(map, name) else {
        return;
    };
    let mut arguments = walk.arguments(map.get("arguments"));
    // The same call comes twice, as the model asked for it and as the tool starts, and nothing
    // says the agent records its arguments the same way both times: the id alone says it is the
    // same call (Copilot gives each call its own).
    arguments.key = 0;
    walk.call(Call {
        format: Format::CopilotCli,
        call_id: id_at(map, "toolCallId"),
        tool: tool.into_owned(),
        arguments,
        freeform: false,
    });
}

#[cfg(test)]
mod tests {
    use crate::formats::tests::support::{brief, expect, records};
    use crate::record::Format;
    use crate::record::Status::{Missing, Present};

    const START: &str = r#"{"type":"session.start","data":{"sessionId":"s-7","version":1,"producer":"copilot-agent","startTime":"2026-01-02T03:04:05.000Z"},"id":"e1","timestamp":"2026-01-02T03:04:05.001Z","parentId":null}"#;

    fn request(id: &str, arguments: &str) -> String {
        format!(
            r#"{{"type":"assistant.message","data":{{"messageId":"m","content":"","toolRequests":[{{"toolCallId":"{id}","name":"bash","arguments":{arguments},"type":"function"}}]}},"id":"e2","timestamp":"2026-01-02T03:04:06.000Z","parentId":"e1"}}"#
        )
    }

    fn start(id: &str, arguments: &str) -> String {
        format!(
            r#"{{"type":"tool.execution_start","data":{{"toolCallId":"{id}","toolName":"bash","arguments":{arguments}}},"id":"e3","timestamp":"2026-01-02T03:04:07.000Z","parentId":"e2"}}"#
        )
    }

    #[test]
    fn a_request_and_its_start_are_one_call_at_the_request() {
        let text = [
            START.to_owned(),
            request("c1", r#"{"command":"ls","reason":"See the files."}"#),
            // As the tool starts, the arguments may be recorded otherwise: still the same call.
            start("c1", r#"{"command":"ls"}"#),
            r#"{"type":"tool.execution_complete","data":{"toolCallId":"c1","success":true,"result":{"content":"a"}},"id":"e4","timestamp":"t","parentId":"e3"}"#.to_owned(),
        ]
        .join("\n");
        let calls = records(&text);
        assert_eq!(calls.len(), 1, "{calls:?}");
        let call = &calls[0];
        assert_eq!(
            (call.format, call.line, call.status),
            (Format::CopilotCli, 2, Present)
        );
        assert_eq!(call.session.as_deref(), Some("s-7"));
        assert_eq!(call.call_id.as_deref(), Some("c1"));
        assert_eq!(call.timestamp.as_deref(), Some("2026-01-02T03:04:06.000Z"));
    }

    #[test]
    fn a_start_without_its_request_is_a_call() {
        let text = [START.to_owned(), start("c2", r#"{"command":"pwd"}"#)].join("\n");
        assert_eq!(brief(&text), expect(&[(2, "bash", Missing)]));
        assert_eq!(records(&text)[0].format, Format::CopilotCli);
    }

    #[test]
    fn a_copilot_event_log_is_not_a_claude_code_transcript() {
        let text = request("c3", "{}");
        assert_eq!(records(&text)[0].format, Format::CopilotCli);
    }
}
