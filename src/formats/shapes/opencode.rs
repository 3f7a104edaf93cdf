//! OpenCode sessions, in each of the places it keeps them: a row of the `part` table of its
//! `opencode.db` store (read as the part it holds, see `crate::formats::store`), a part file of
//! its legacy `storage/part/<message>/<part>.json` tree, and `opencode export` output
//! (`{info, messages: [{info, parts}]}`). A call is a part `{type: "tool", callID, tool,
//! state: {input, time: {start}}}`; the other parts hold none (a `step-finish` part's
//! `"reason": "tool-calls"` is why the model stopped, not a call's reason).

use super::descriptor::{Outer, Shape};
use crate::formats::event_walk::{id_at, scalar_text, str_at, Call, Visit, WalkOptions, Walker};
use crate::json::{Json, Object};
use crate::record::Format;

/// A tool part, wherever it sits.
pub(crate) const TOKENS: &[&str] = &["\"tool\""];

pub(crate) const SHAPE: Shape = Shape {
    format: Format::Opencode,
    visit: None,
    tokens: &[TOKENS],
    stream_tokens: &[],
    container: Some(is_session_record),
    holds: Some(SESSION_RECORD),
    line_start: None,
    flush: None,
};

/// What a part, or an export, holds: parts, which name their session as `sessionID`.
pub(crate) const SESSION_RECORD: WalkOptions = WalkOptions {
    shapes: &[visit],
    catalogues: false,
    sessions: &["sessionID"],
    times: &[],
};

/// A part (it names its message and session), or an export (its session's `info` and
/// `messages`).
fn is_session_record(outer: &Outer<'_>) -> bool {
    (outer.map.contains_key("messageID") && outer.map.contains_key("sessionID"))
        || (outer.map.get("info").is_some_and(Json::is_object)
            && outer.map.get("messages").is_some_and(Json::is_array))
}

fn visit<'p>(map: Object<'p>, _key: Option<&str>, walk: &mut Walker<'_, 'p>) -> Visit {
    match walk.kind().as_deref() {
        Some("tool") => {
            let (Some(tool), Some(call_id)) = (str_at(map, "tool"), id_at(map, "callID")) else {
                return Visit::Pass;
            };
            let state = map.get("state").and_then(Json::as_object);
            let arguments = walk.arguments(state.and_then(|state| state.get("input")));
            // When the tool started: a part is written again as its call runs and ends.
            let started = state
                .and_then(|state| state.get("time"))
                .and_then(Json::as_object)
                .and_then(|time| time.get("start"))
                .and_then(scalar_text);
            let mut place = walk.place();
            place.timestamp = started.or(place.timestamp);
            walk.call_at(
                Call {
                    format: Format::Opencode,
                    call_id: Some(call_id),
                    tool: tool.into_owned(),
                    arguments,
                    freeform: false,
                },
                place,
            );
            Visit::Skip
        }
        // Every other part (text, reasoning, step-start and step-finish, patch, file…): no call
        // is in it.
        Some(_) if map.contains_key("messageID") => Visit::Skip,
        _ => Visit::Pass,
    }
}

#[cfg(test)]
mod tests {
    use crate::formats::tests::support::{brief, expect, records};
    use crate::record::Format;
    use crate::record::Status::{Missing, Present};

    #[test]
    fn a_tool_part_is_a_call_and_a_step_finish_reason_is_not_one() {
        let text = [
            r#"{"id":"prt_1","sessionID":"ses_1","messageID":"msg_1","type":"tool","callID":"call_1","tool":"bash","state":{"status":"completed","input":{"command":"ls","description":"List","reason":"See the files."},"output":"a","time":{"start":1785878930703,"end":1785878930722}}}"#,
            r#"{"id":"prt_2","sessionID":"ses_1","messageID":"msg_1","type":"step-finish","reason":"tool-calls","tokens":{"input":1}}"#,
        ]
        .join("\n");
        assert_eq!(brief(&text), expect(&[(1, "bash", Present)]));
        let call = &records(&text)[0];
        assert_eq!(call.format, Format::Opencode);
        assert_eq!(call.session.as_deref(), Some("ses_1"));
        assert_eq!(call.call_id.as_deref(), Some("call_1"));
        assert_eq!(call.timestamp.as_deref(), Some("1785878930703"));
    }

    #[test]
    fn an_export_holds_its_calls_in_its_messages_parts() {
        let text = r#"{"info":{"id":"ses_2","title":"t"},"messages":[{"info":{"id":"msg_1","sessionID":"ses_2","role":"user"},"parts":[{"id":"p0","sessionID":"ses_2","messageID":"msg_1","type":"text","text":"{\"type\":\"tool\"}"}]},{"info":{"id":"msg_2","sessionID":"ses_2","role":"assistant"},"parts":[{"id":"p1","sessionID":"ses_2","messageID":"msg_2","type":"tool","callID":"c9","tool":"read","state":{"status":"pending","input":{}}},{"id":"p2","sessionID":"ses_2","messageID":"msg_2","type":"step-finish","reason":"tool-calls"}]}]}"#;
        assert_eq!(brief(text), expect(&[(1, "read", Missing)]));
        assert_eq!(records(text)[0].session.as_deref(), Some("ses_2"));
    }
}
