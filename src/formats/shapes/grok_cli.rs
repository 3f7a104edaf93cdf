//! Grok CLI session updates (`~/.grok/sessions/<cwd>/<id>/updates.jsonl`): the Agent Client
//! Protocol's update stream, one `{"timestamp", "method": "session/update" |
//! "_x.ai/session/update", "params": {"sessionId", "update": {"sessionUpdate", …}}}` a line. A
//! call is an update of kind `tool_call` (`toolCallId`, `rawInput`, the tool's name in
//! `_meta["x.ai/tool"].name`, else its `title`); the `tool_call_update`s after it repeat its id
//! with the call's progress, its input again and its output.

use super::descriptor::{Outer, Shape};
use crate::formats::event_walk::{id_at, str_at, Call, Visit, WalkOptions, Walker};
use crate::json::{Json, Object};
use crate::record::Format;

pub(crate) const SHAPE: Shape = Shape {
    format: Format::GrokCli,
    visit: None,
    tokens: &[&["\"tool_call\""]],
    stream_tokens: &[],
    container: Some(is_session_update),
    holds: Some(SESSION_UPDATE),
    line_start: None,
    flush: None,
};

const SESSION_UPDATE: WalkOptions = WalkOptions {
    shapes: &[visit],
    catalogues: false,
    sessions: WalkOptions::SESSIONS,
    times: WalkOptions::TIMES,
};

fn is_session_update(outer: &Outer<'_>) -> bool {
    outer
        .map
        .get("method")
        .and_then(Json::as_str)
        .is_some_and(|method| method == "session/update" || method == "_x.ai/session/update")
        && outer.map.get("params").is_some_and(Json::is_object)
}

fn visit<'p>(map: Object<'p>, _key: Option<&str>, walk: &mut Walker<'_, 'p>) -> Visit {
    match str_at(map, "sessionUpdate").as_deref() {
        Some("tool_call") => {
            call(map, walk);
            Visit::Skip
        }
        // Progress, results, messages, plans, hooks: no call of the model.
        Some(_) => Visit::Skip,
        None => Visit::Pass,
    }
}

fn call(update: Object<'_>, walk: &mut Walker<'_, '_>) {
    let named = update
        .get("_meta")
        .and_then(Json::as_object)
        .and_then(|meta| meta.get("x.ai/tool"))
        .and_then(Json::as_object)
        .and_then(|tool| str_at(tool, "name"));
    let Some(name) = named.or_else(|| str_at(update, "title")) else {
        return;
    };
    let arguments = walk.arguments(update.get("rawInput"));
    walk.call(Call {
        format: Format::GrokCli,
        call_id: id_at(update, "toolCallId"),
        tool: name.into_owned(),
        arguments,
        freeform: false,
    });
}

#[cfg(test)]
mod tests {
    use crate::formats::tests::support::{brief, expect, records};
    use crate::record::Format;
    use crate::record::Status::Present;

    #[test]
    fn a_tool_call_update_is_a_call_and_its_updates_are_not() {
        let text = [
            r#"{"timestamp":1785000000,"method":"session/update","params":{"sessionId":"g-1","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"Reading."}}}}"#,
            r#"{"timestamp":1785000001,"method":"session/update","params":{"sessionId":"g-1","update":{"sessionUpdate":"tool_call","toolCallId":"call-1","title":"Read","kind":"read","rawInput":{"target_file":"a","reason":"See a."},"_meta":{"x.ai/tool":{"name":"read_file"}}}}}"#,
            r#"{"timestamp":1785000002,"method":"session/update","params":{"sessionId":"g-1","update":{"sessionUpdate":"tool_call_update","toolCallId":"call-1","status":"completed","rawInput":{"target_file":"a"},"rawOutput":{"content":"x"}}}}"#,
        ]
        .join("\n");
        assert_eq!(brief(&text), expect(&[(2, "read_file", Present)]));
        let call = &records(&text)[0];
        assert_eq!(call.format, Format::GrokCli);
        assert_eq!(call.session.as_deref(), Some("g-1"));
        assert_eq!(call.call_id.as_deref(), Some("call-1"));
        assert_eq!(call.timestamp.as_deref(), Some("1785000001"));
    }
}
