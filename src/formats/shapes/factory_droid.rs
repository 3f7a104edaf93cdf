//! Factory Droid sessions (`~/.factory/sessions/<cwd>/<id>.jsonl`): a first line
//! `{"type": "session_start", "id", "title", "cwd", "version"}` names the session, then one
//! `{"type": "message", "id", "parentId", "timestamp", "message"}` a line, the message with
//! Anthropic content blocks: the calls are `tool_use` blocks, which the Anthropic shape reads,
//! labelled `factory-droid` after the first line said whose they are.

use super::anthropic;
use super::descriptor::{Outer, Shape};
use crate::formats::event_walk::{str_at, Visit, WalkOptions, Walker};
use crate::json::Object;
use crate::record::Format;

pub(crate) const SHAPE: Shape = Shape {
    format: Format::FactoryDroid,
    // Only its first line is its own: the other formats' events never pay for its look.
    visit: None,
    tokens: &[anthropic::TOKENS, &["\"session_start\""]],
    stream_tokens: &[],
    container: Some(is_session_start),
    holds: Some(SESSION_START),
    line_start: None,
    flush: None,
};

const SESSION_START: WalkOptions = WalkOptions {
    shapes: &[visit],
    catalogues: false,
    sessions: WalkOptions::SESSIONS,
    times: WalkOptions::TIMES,
};

fn is_session_start(outer: &Outer<'_>) -> bool {
    outer.kind() == Some("session_start")
}

fn visit<'p>(map: Object<'p>, key: Option<&str>, walk: &mut Walker<'_, 'p>) -> Visit {
    if key.is_some() {
        return Visit::Skip;
    }
    if let Some(session) = str_at(map, "id") {
        walk.session_meta(session.into_owned());
    }
    walk.names_agent(Format::FactoryDroid, Format::Anthropic);
    Visit::Skip
}

#[cfg(test)]
mod tests {
    use crate::formats::tests::support::{brief, expect, records};
    use crate::record::Format;
    use crate::record::Status::{Blank, Present};

    #[test]
    fn tool_use_blocks_after_the_session_start_are_droids_and_results_are_not_calls() {
        let text = [
            r#"{"type":"session_start","id":"d-1","title":"t","sessionTitle":"t","owner":"me","version":2,"cwd":"/src"}"#,
            r#"{"type":"message","id":"m1","parentId":"d-1","timestamp":"2026-04-01T09:00:01.000Z","message":{"role":"assistant","content":[{"type":"tool_use","id":"toolu_1","name":"Execute","input":{"command":"ls","reason":"List."}}]}}"#,
            r#"{"type":"message","id":"m2","parentId":"m1","timestamp":"2026-04-01T09:00:02.000Z","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","content":"a"}]}}"#,
            r#"{"type":"message","id":"m3","parentId":"m2","timestamp":"2026-04-01T09:00:03.000Z","message":{"role":"assistant","content":[{"type":"tool_use","id":"toolu_2","name":"Read","input":{"file_path":"a","reason":""}}]}}"#,
        ]
        .join("\n");
        assert_eq!(
            brief(&text),
            expect(&[(2, "Execute", Present), (4, "Read", Blank)])
        );
        let call = &records(&text)[0];
        assert_eq!(call.format, Format::FactoryDroid);
        assert_eq!(call.session.as_deref(), Some("d-1"));
        assert_eq!(call.call_id.as_deref(), Some("toolu_1"));
        assert_eq!(call.timestamp.as_deref(), Some("2026-04-01T09:00:01.000Z"));
    }

    #[test]
    fn a_claude_code_line_after_a_droid_header_stays_claude_codes() {
        let text = [
            r#"{"type":"session_start","id":"d-2","title":"t","cwd":"/src"}"#,
            r#"{"parentUuid":null,"sessionId":"s","type":"assistant","message":{"content":[{"type":"tool_use","id":"t","name":"Read","input":{}}]}}"#,
        ]
        .join("\n");
        assert_eq!(records(&text)[0].format, Format::ClaudeCode);
    }
}
