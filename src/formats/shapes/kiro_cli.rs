//! Kiro CLI session journals (`~/.kiro/sessions/cli/<id>.jsonl`, beside the session's
//! `<id>.json`): one envelope `{"version", "kind", "data": {"message_id", "content"}}` a line,
//! whose content parts carry a `kind` of their own. A call is a `toolUse` part of an
//! `AssistantMessage` (`data: {toolUseId, name, input}`); a `ToolResults` envelope holds the
//! results, and its `results` map repeats each call's input in the tool's own typed form.

use super::descriptor::{Outer, Shape};
use crate::formats::event_walk::{id_at, str_at, Call, Visit, WalkOptions, Walker};
use crate::json::{Json, Object};
use crate::record::Format;

pub(crate) const SHAPE: Shape = Shape {
    format: Format::KiroCli,
    // Its parts are only ever read inside its own envelopes: other formats never pay for it.
    visit: None,
    tokens: &[&["\"toolUse\""]],
    stream_tokens: &[],
    container: Some(is_journal_entry),
    holds: Some(JOURNAL_ENTRY),
    line_start: None,
    flush: None,
};

const JOURNAL_ENTRY: WalkOptions = WalkOptions {
    shapes: &[visit],
    catalogues: false,
    sessions: WalkOptions::SESSIONS,
    times: WalkOptions::TIMES,
};

fn is_journal_entry(outer: &Outer<'_>) -> bool {
    outer.map.get("version").is_some_and(Json::is_string)
        && outer.map.get("kind").is_some_and(Json::is_string)
        && outer.map.get("data").is_some_and(Json::is_object)
}

fn visit<'p>(map: Object<'p>, _key: Option<&str>, walk: &mut Walker<'_, 'p>) -> Visit {
    match str_at(map, "kind").as_deref() {
        Some("toolUse") => {
            if let Some(data) = map.get("data").and_then(Json::as_object) {
                call(data, walk);
            }
            Visit::Skip
        }
        Some("ToolResults" | "toolResult") => Visit::Skip,
        _ => Visit::Pass,
    }
}

fn call(data: Object<'_>, walk: &mut Walker<'_, '_>) {
    let Some(name) = str_at(data, "name") else {
        return;
    };
    let arguments = walk.arguments(data.get("input"));
    walk.call(Call {
        format: Format::KiroCli,
        call_id: id_at(data, "toolUseId"),
        tool: name.into_owned(),
        arguments,
        freeform: false,
    });
}

#[cfg(test)]
mod tests {
    use crate::formats::tests::support::{brief, expect, records};
    use crate::record::Format;
    use crate::record::Status::{Missing, Present};

    #[test]
    fn tool_use_parts_are_calls_and_tool_results_are_not() {
        let text = [
            r#"{"version":"v1","kind":"Prompt","data":{"message_id":"p","content":[{"kind":"text","data":"go"}],"meta":{"timestamp":1780000000}}}"#,
            r#"{"version":"v1","kind":"AssistantMessage","data":{"message_id":"a","content":[{"kind":"text","data":""},{"kind":"toolUse","data":{"toolUseId":"tooluse_1","name":"shell","input":{"command":"ls","reason":"See the files."}}},{"kind":"toolUse","data":{"toolUseId":"tooluse_2","name":"read","input":{"path":"a"}}}]}}"#,
            r#"{"version":"v1","kind":"ToolResults","data":{"message_id":"r","content":[{"kind":"toolResult","data":{"toolUseId":"tooluse_1","content":[{"kind":"text","data":"a"}],"status":"success"}}],"results":{"tooluse_1":{"tool":{"kind":{"BuiltIn":{"Shell":{"command":"ls"}}}},"result":{"Success":{}}}}}}"#,
        ]
        .join("\n");
        assert_eq!(
            brief(&text),
            expect(&[(2, "shell", Present), (2, "read", Missing)])
        );
        let call = &records(&text)[0];
        assert_eq!(call.format, Format::KiroCli);
        assert_eq!(call.call_id.as_deref(), Some("tooluse_1"));
    }
}
