//! Pi sessions (`~/.pi/agent/sessions/--<cwd>--/<time>_<id>.jsonl`), the format OpenClaw writes
//! too, since it runs on Pi's agent runtime: a header `{"type": "session", "version", "id",
//! "cwd"}` names the session once, then tree-linked entries follow (`message`, `model_change`,
//! `custom`, `compaction`…). A call is a `{"type": "toolCall", "id", "name", "arguments"}`
//! block of an assistant message; its result is a message of its own, role `toolResult`.
//!
//! Nothing in a Pi entry says which of the two wrote it, so the log is OpenClaw's from where it
//! says so: an entry whose `customType` is OpenClaw's (`openclaw.…`, `openclaw:…`), or a header
//! whose working directory is in OpenClaw's state folder (its agents work in
//! `~/.openclaw/workspace`). Lines the prefilter skips say nothing: `--input-format openclaw`
//! names a log that never says it.

use super::descriptor::{Outer, Shape};
use crate::formats::event_walk::{id_at, str_at, str_is, Call, Visit, WalkOptions, Walker};
use crate::formats::fragments::Place;
use crate::json::{Json, Object};
use crate::record::Format;

/// A `toolCall` block, and the header that names the session.
pub(crate) const TOKENS: &[&[&str]] = &[&["\"toolCall\""], &["\"session\""]];

pub(crate) const SHAPE: Shape = Shape {
    format: Format::Pi,
    // Its look is only ever needed inside its own entries: other formats' events never pay
    // for it.
    visit: None,
    tokens: TOKENS,
    stream_tokens: &[],
    container: Some(is_session_entry),
    holds: Some(SESSION_ENTRY),
    line_start: None,
    flush: None,
};

const SESSION_ENTRY: WalkOptions = WalkOptions {
    shapes: &[visit],
    catalogues: false,
    sessions: WalkOptions::SESSIONS,
    times: WalkOptions::TIMES,
};

/// The header, an extension's entry, or a message holding a `toolCall` block: Factory Droid's
/// messages have the same outer record, with Anthropic blocks in them.
fn is_session_entry(outer: &Outer<'_>) -> bool {
    match outer.kind() {
        Some("session") => outer.map.contains_key("version"),
        Some("custom" | "custom_message") => outer.map.contains_key("customType"),
        Some("message") => outer
            .map
            .get("message")
            .and_then(Json::as_object)
            .and_then(|message| message.get("content"))
            .and_then(Json::as_array)
            .is_some_and(|mut blocks| {
                blocks.any(|block| {
                    block
                        .as_object()
                        .is_some_and(|block| str_is(block, "type", "toolCall"))
                })
            }),
        _ => false,
    }
}

fn visit<'p>(map: Object<'p>, key: Option<&str>, walk: &mut Walker<'_, 'p>) -> Visit {
    if key.is_none() {
        return entry(map, walk);
    }
    if walk.kind().as_deref() != Some("toolCall") {
        return Visit::Pass;
    }
    let place = walk.place();
    if call(map, place, walk) {
        Visit::Skip
    } else {
        Visit::Pass
    }
}

/// Records the call a `toolCall` block is, at `place`; false when it names no tool.
fn call(block: Object<'_>, place: Place, walk: &mut Walker<'_, '_>) -> bool {
    let Some(name) = str_at(block, "name") else {
        return false;
    };
    let arguments = walk.arguments(block.get("arguments"));
    let call = Call {
        format: Format::Pi,
        call_id: id_at(block, "id"),
        tool: name.into_owned(),
        arguments,
        freeform: false,
    };
    walk.call_at(call, place);
    true
}

/// The calls of a message entry, at the entry's time: the message carries a `timestamp` of its
/// own, when its request was sent, which is not when the entry was written.
fn message<'p>(entry: Object<'p>, walk: &mut Walker<'_, 'p>) -> Visit {
    let Some(message) = entry.get("message").and_then(Json::as_object) else {
        return Visit::Pass;
    };
    if str_is(message, "role", "toolResult") {
        return Visit::Skip;
    }
    let blocks = message.get("content").and_then(Json::as_array);
    let mut calls = blocks
        .into_iter()
        .flatten()
        .filter_map(Json::as_object)
        .filter(|block| str_is(*block, "type", "toolCall"))
        .peekable();
    // Another agent's message of the same outer shape (Factory Droid's) is for its shape.
    if calls.peek().is_none() {
        return Visit::Pass;
    }
    let place = walk.place();
    for block in calls {
        call(block, place.clone(), walk);
    }
    Visit::Skip
}

/// A whole entry: the header, an entry of OpenClaw's, a tool's result, or one to look into.
fn entry<'p>(map: Object<'p>, walk: &mut Walker<'_, 'p>) -> Visit {
    match walk.kind().as_deref() {
        Some("session") if map.contains_key("version") => {
            if let Some(session) = str_at(map, "id") {
                walk.session_meta(session.into_owned());
            }
            let agent = if str_at(map, "cwd").is_some_and(|cwd| in_openclaws_state(&cwd)) {
                Format::Openclaw
            } else {
                Format::Pi
            };
            walk.names_agent(agent, Format::Pi);
            Visit::Skip
        }
        Some("custom" | "custom_message") if map.contains_key("customType") => {
            if str_at(map, "customType").is_some_and(|kind| kind.starts_with("openclaw")) {
                walk.names_agent(Format::Openclaw, Format::Pi);
            }
            Visit::Skip
        }
        Some("message") if map.contains_key("parentId") => message(map, walk),
        _ => Visit::Pass,
    }
}

/// OpenClaw's state folder (`~/.openclaw`, or `~/.clawdbot` before it was renamed), where its
/// agents' workspaces are.
fn in_openclaws_state(cwd: &str) -> bool {
    ["/.openclaw/", "/.clawdbot/"]
        .iter()
        .any(|folder| cwd.contains(folder) || cwd.ends_with(&folder[..folder.len() - 1]))
}

#[cfg(test)]
mod tests {
    use crate::formats::tests::support::{brief, expect, records};
    use crate::record::Format;
    use crate::record::Status::{Invalid, Missing, Present};

    const HEADER: &str = r#"{"type":"session","version":3,"id":"pi-1","timestamp":"2026-03-01T10:00:00.000Z","cwd":"/home/me/src"}"#;

    fn assistant(blocks: &str) -> String {
        format!(
            r#"{{"type":"message","id":"a1","parentId":"u1","timestamp":"2026-03-01T10:00:02.000Z","message":{{"role":"assistant","content":[{blocks}],"stopReason":"toolUse"}}}}"#
        )
    }

    #[test]
    fn tool_call_blocks_are_calls_of_the_session_the_header_names() {
        let text = [
            HEADER.to_owned(),
            assistant(
                r#"{"type":"thinking","thinking":"hm"},{"type":"toolCall","id":"c1","name":"bash","arguments":{"command":"ls","reason":"See the files."}},{"type":"toolCall","id":"c2","name":"read","arguments":{"path":"a","reason":7}}"#,
            ),
            r#"{"type":"message","id":"r1","parentId":"a1","timestamp":"t","message":{"role":"toolResult","toolCallId":"c1","toolName":"bash","content":[{"type":"toolCall","id":"x","name":"fake","arguments":{}}],"isError":false}}"#.to_owned(),
            r#"{"type":"custom","customType":"session-postmortem","data":{"sessionStats":{"toolCalls":1}}}"#.to_owned(),
        ]
        .join("\n");
        assert_eq!(
            brief(&text),
            expect(&[(2, "bash", Present), (2, "read", Invalid)])
        );
        let call = &records(&text)[0];
        assert_eq!(call.format, Format::Pi);
        assert_eq!(call.session.as_deref(), Some("pi-1"));
        assert_eq!(call.call_id.as_deref(), Some("c1"));
        assert_eq!(call.timestamp.as_deref(), Some("2026-03-01T10:00:02.000Z"));
    }

    #[test]
    fn a_log_that_says_it_is_openclaws_labels_its_calls_from_there_on() {
        let call = |id: &str| {
            assistant(&format!(
                r#"{{"type":"toolCall","id":"{id}","name":"exec","arguments":{{"command":"ls"}}}}"#
            ))
        };
        let text = [
            HEADER.to_owned(),
            call("before"),
            r#"{"type":"custom","customType":"openclaw:bootstrap-context:full","data":{"sessionId":"pi-1"},"id":"b","parentId":"a1","timestamp":"t"}"#.to_owned(),
            call("after"),
        ]
        .join("\n");
        let seen: Vec<_> = records(&text)
            .iter()
            .map(|call| (call.call_id.clone().unwrap(), call.format))
            .collect();
        assert_eq!(
            seen,
            [
                ("before".to_owned(), Format::Pi),
                ("after".to_owned(), Format::Openclaw)
            ]
        );
        // An OpenClaw agent's workspace in the header says it from the start.
        let header = HEADER.replace("/home/me/src", "/root/.openclaw/workspace");
        let text = format!("{header}\n{}\n", call("c"));
        assert_eq!(records(&text)[0].format, Format::Openclaw);
        assert_eq!(brief(&text), expect(&[(2, "exec", Missing)]));
    }
}
