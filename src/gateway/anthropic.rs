//! Anthropic Messages answers: `tool_use` content blocks, whole or streamed.
//!
//! Server tools (`server_tool_use`) and MCP connector calls (`mcp_tool_use`) are other block
//! types: they are run by the API, not by the agent, and are left alone.

use std::borrow::Cow;
use std::sync::Arc;

use serde_json::{json, Value};

use super::rewrite::{CutCall, EventRewriter, Output};
use super::sse::{self, Fields};
use crate::apis::anthropic::{StreamedBlock, StreamedBlocks};
use crate::apis::Api;
use crate::json::{Json, Parser};
use crate::layer::wire::strip_answer_call;
use crate::layer::{strip_arguments_text, TakenReason, ToolNames};

/// The session a request's `metadata.user_id` names. Claude Code writes
/// `user_…_account_…_session_<uuid>`, or a JSON object with a `session_id`.
pub fn session_of(metadata: &str) -> Option<String> {
    let metadata: Value = serde_json::from_str(metadata).ok()?;
    let user_id = metadata.get("user_id")?.as_str()?;
    if let Ok(Value::Object(user)) = serde_json::from_str::<Value>(user_id) {
        return user.get("session_id")?.as_str().map(str::to_owned);
    }
    let (_, session) = user_id.rsplit_once("_session_")?;
    (!session.is_empty()).then(|| session.to_owned())
}

/// What the gateway keeps beside a `tool_use` block being streamed.
#[derive(Debug, Default)]
struct Kept {
    /// Whether the block calls a tool the request's listing tracks.
    tracked: bool,
    /// The fragments' events held back as they came (a tracked tool, and stripping is on), sent
    /// on unchanged when nothing is taken off.
    held: Option<Vec<u8>>,
}

/// Rewrites a Messages stream: a `tool_use` block's `input_json_delta` fragments are held back
/// until the API's rule ([`StreamedBlocks`]) ends the block, then sent as one fragment holding the
/// stripped input.
pub struct AnthropicRewriter {
    tracked: Arc<ToolNames>,
    strip: bool,
    blocks: StreamedBlocks<Kept>,
    /// Reads the events: a call's input comes a few characters an event, and building a
    /// `serde_json::Value` of each was most of what the gateway spent on a streamed answer.
    parser: Parser,
}

/// What the rewriter reads of an event's data.
struct Read {
    kind: Option<String>,
    index: u64,
    /// An `input_json_delta`'s `partial_json`.
    fragment: Option<String>,
    /// A `content_block_start`'s whole data, which the rewriter may change.
    start: Option<Value>,
}

impl AnthropicRewriter {
    pub fn new(tracked: Arc<ToolNames>, strip: bool) -> AnthropicRewriter {
        AnthropicRewriter {
            tracked,
            strip,
            blocks: StreamedBlocks::default(),
            parser: Parser::default(),
        }
    }

    /// Reads an event's data, when it is a JSON object (the tree accepts exactly what
    /// serde_json accepts).
    fn read(&mut self, data: &str) -> Option<Read> {
        let json = self.parser.parse(data).ok()?;
        let data = json.as_object()?;
        let delta = data.get("delta").and_then(Json::as_object);
        let fragment = delta
            .filter(|delta| {
                let kind = delta.get("type").and_then(Json::as_text);
                kind.is_some_and(|kind| kind.is("input_json_delta"))
            })
            .and_then(|delta| delta.get("partial_json")?.as_str());
        let kind = data.get("type").and_then(Json::as_str).map(Cow::into_owned);
        let start = (kind.as_deref() == Some("content_block_start")).then(|| json.to_value());
        Some(Read {
            kind,
            index: data.get("index").and_then(Json::as_u64).unwrap_or(0),
            fragment: fragment.map(Cow::into_owned),
            start,
        })
    }

    /// A `content_block_start`: a `tool_use` block starts (ending one left open at its index).
    /// The API starts a block with an empty input, but a proxy in between may send a call whole
    /// in its start: then the start loses the reason. Returns the start to send, when it changed.
    fn start(&mut self, data: &mut Value, out: &mut Output) -> bool {
        let index = data["index"].as_u64().unwrap_or(0);
        let block = &mut data["content_block"];
        let (Some("tool_use"), Some(tool)) = (block["type"].as_str(), block["name"].as_str())
        else {
            return false;
        };
        let tracked = self.tracked.contains(tool);
        let started = StreamedBlock {
            id: block["id"].as_str().map(str::to_owned),
            name: tool.to_owned(),
            input: block.get("input").unwrap_or(&Value::Null).to_string(),
            json: String::new(),
            with: Kept {
                tracked,
                held: (tracked && self.strip).then(Vec::new),
            },
        };
        if let Some(earlier) = self.blocks.start(index, started) {
            self.finish(index, earlier, out);
        }
        // The reason is noted when the block ends, from what the rule says its arguments are.
        tracked
            && self.strip
            && strip_answer_call(Api::Anthropic, block, &self.tracked, &mut Vec::new())
    }

    /// A block the rule ended: its reason is taken off, and its held input goes out.
    fn finish(&self, index: u64, mut block: StreamedBlock<Kept>, out: &mut Output) {
        let held = block.with.held.take().unwrap_or_default();
        let stripped = match block.with.tracked {
            true => strip_arguments_text(block.arguments()),
            false => None,
        };
        let Some(stripped) = stripped else {
            out.bytes.extend_from_slice(&held);
            return;
        };
        // Input that came whole in the start lost its reason there.
        let resent = self.strip && !block.json.trim().is_empty();
        let text = resent.then(|| stripped.text());
        out.reasons.push(TakenReason::new(
            block.name,
            block.id,
            None,
            stripped.reason,
            Value::Object(stripped.arguments),
        ));
        let Some(text) = text else {
            out.bytes.extend_from_slice(&held);
            return;
        };
        let delta = json!({
            "type": "content_block_delta",
            "index": index,
            "delta": { "type": "input_json_delta", "partial_json": text },
        });
        out.bytes
            .extend(sse::event(Some("content_block_delta"), &delta.to_string()));
    }

    /// Every open block ends (a new message, or the message's own end), in index order.
    fn end_all(&mut self, out: &mut Output) {
        let ended: Vec<(u64, StreamedBlock<Kept>)> = self.blocks.end().collect();
        for (index, block) in ended {
            self.finish(index, block, out);
        }
    }
}

/// The event types this rewriter reads once a block is open; all others pass without being
/// parsed.
fn is_block_event(name: &str) -> bool {
    matches!(
        name,
        "content_block_start"
            | "content_block_delta"
            | "content_block_stop"
            | "message_start"
            | "message_stop"
            | "error"
    )
}

impl EventRewriter for AnthropicRewriter {
    fn event(&mut self, event: &[u8], out: &mut Output) {
        if self.tracked.is_empty() {
            out.bytes.extend_from_slice(event);
            return;
        }
        let Some(fields) = Fields::parse(event) else {
            out.bytes.extend_from_slice(event);
            return;
        };
        // A block's deltas and its stop only matter while a block is open.
        let wanted = match fields.name {
            Some("content_block_start") => true,
            Some(name) => is_block_event(name) && !self.blocks.is_idle(),
            None => true,
        };
        let Some(read) = wanted.then(|| self.read(&fields.data)).flatten() else {
            out.bytes.extend_from_slice(event);
            return;
        };
        let index = read.index;
        match read.kind.as_deref() {
            Some("content_block_start") => {
                let mut before = Output::default();
                let mut data = read.start.unwrap_or_default();
                let changed = self.start(&mut data, &mut before);
                out.append(before);
                match changed {
                    true => out.bytes.extend(sse::event(fields.name, &data.to_string())),
                    false => out.bytes.extend_from_slice(event),
                }
            }
            Some("content_block_delta") if self.blocks.is_open(index) => {
                let fragment = read.fragment.as_deref();
                let block = fragment.and_then(|fragment| self.blocks.fragment(index, fragment));
                match block.and_then(|block| block.with.held.as_mut()) {
                    Some(held) => held.extend_from_slice(event),
                    None => out.bytes.extend_from_slice(event),
                }
            }
            Some("content_block_stop") => {
                if let Some(block) = self.blocks.stop(index) {
                    self.finish(index, block, out);
                }
                out.bytes.extend_from_slice(event);
            }
            Some("message_start" | "message_stop") => {
                self.end_all(out);
                out.bytes.extend_from_slice(event);
            }
            // The API's own error ends the stream: the blocks still open never completed.
            Some("error") => {
                self.cut(out);
                out.bytes.extend_from_slice(event);
            }
            _ => out.bytes.extend_from_slice(event),
        }
    }

    fn cut(&mut self, out: &mut Output) {
        // A block still open when the stream breaks off never had its stop: whatever its input
        // looks like, the model had not finished it.
        for (_, block) in self.blocks.end() {
            if block.with.tracked {
                out.cut.push(CutCall {
                    tool: block.name,
                    call_id: block.id,
                });
            }
        }
    }

    fn holds(&self) -> bool {
        self.blocks.iter().any(|block| block.with.held.is_some())
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::gateway::sse::Splitter;

    fn tracked(names: &[&str]) -> Arc<ToolNames> {
        Arc::new(names.iter().map(|name| (*name).to_owned()).collect())
    }

    fn event(name: &str, data: Value) -> Vec<u8> {
        sse::event(Some(name), &data.to_string())
    }

    /// A stream with one text block, then a Bash call whose input arrives in three fragments.
    fn bash_stream(fragments: &[&str]) -> Vec<Vec<u8>> {
        let mut events = vec![
            event(
                "message_start",
                json!({"type": "message_start", "message": {"id": "msg_1",
                "content": [], "stop_reason": null}}),
            ),
            event(
                "content_block_start",
                json!({"type": "content_block_start", "index": 0,
                "content_block": {"type": "text", "text": ""}}),
            ),
            event(
                "content_block_delta",
                json!({"type": "content_block_delta", "index": 0,
                "delta": {"type": "text_delta", "text": "Let me look."}}),
            ),
            event(
                "content_block_stop",
                json!({"type": "content_block_stop", "index": 0}),
            ),
            event(
                "content_block_start",
                json!({"type": "content_block_start", "index": 1,
                "content_block": {"type": "tool_use", "id": "toolu_1", "name": "Bash",
                "input": {}}}),
            ),
        ];
        events.push(event("ping", json!({"type": "ping"})));
        for fragment in fragments {
            events.push(event(
                "content_block_delta",
                json!({"type": "content_block_delta",
                "index": 1, "delta": {"type": "input_json_delta", "partial_json": fragment}}),
            ));
        }
        events.push(event(
            "content_block_stop",
            json!({"type": "content_block_stop", "index": 1}),
        ));
        events.push(event(
            "message_delta",
            json!({"type": "message_delta",
            "delta": {"stop_reason": "tool_use"}}),
        ));
        events.push(event("message_stop", json!({"type": "message_stop"})));
        events
    }

    fn run(events: &[Vec<u8>], tracked: Arc<ToolNames>, strip: bool) -> Output {
        let mut rewriter = AnthropicRewriter::new(tracked, strip);
        let mut out = Output::default();
        for event in events {
            rewriter.event(event, &mut out);
        }
        rewriter.cut(&mut out);
        out
    }

    fn partial_json_sent(bytes: &[u8]) -> Vec<String> {
        let mut fragments = Vec::new();
        Splitter::new().push(bytes, &mut |event| {
            let fields = Fields::parse(event).unwrap();
            let data: Value = serde_json::from_str(&fields.data).unwrap();
            if let Some(fragment) = data["delta"]["partial_json"].as_str() {
                fragments.push(fragment.to_owned());
            }
        });
        fragments
    }

    const FRAGMENTS: [&str; 3] = [
        "{\"command\": \"ls -la\", ",
        "\"reason\": \"See what the fol",
        "der holds\", \"timeout\": 5}",
    ];

    #[test]
    fn a_calls_fragments_become_one_stripped_fragment_at_its_stop() {
        let events = bash_stream(&FRAGMENTS);
        let out = run(&events, tracked(&["Bash"]), true);
        assert_eq!(
            partial_json_sent(&out.bytes),
            ["{\"command\":\"ls -la\",\"timeout\":5}"]
        );
        assert_eq!(out.reasons.len(), 1);
        assert_eq!(out.reasons[0].tool, "Bash");
        assert_eq!(out.reasons[0].call_id.as_deref(), Some("toolu_1"));
        assert_eq!(out.reasons[0].reason, json!("See what the folder holds"));
        // Every other event went out unchanged and in order, the ping included.
        let text = String::from_utf8(out.bytes).unwrap();
        let unchanged: Vec<&Vec<u8>> = events
            .iter()
            .filter(|event| !String::from_utf8_lossy(event).contains("input_json_delta"))
            .collect();
        let mut at = 0;
        for event in unchanged {
            let event = std::str::from_utf8(event).unwrap();
            at += text[at..].find(event).expect("the event is sent on") + event.len();
        }
    }

    #[test]
    fn the_stripped_fragment_is_sent_before_the_blocks_stop() {
        let out = run(&bash_stream(&FRAGMENTS), tracked(&["Bash"]), true);
        let text = String::from_utf8(out.bytes).unwrap();
        let fragment = text.find("input_json_delta").unwrap();
        let stop = text.rfind("\"index\":1}").unwrap();
        assert!(fragment < stop);
    }

    #[test]
    fn without_a_reason_or_for_another_tool_the_stream_is_unchanged() {
        let without = bash_stream(&["{\"command\": ", "\"ls\"}"]);
        let out = run(&without, tracked(&["Bash"]), true);
        assert_eq!(out.bytes, without.concat());
        assert!(out.reasons.is_empty());
        let with = bash_stream(&FRAGMENTS);
        let out = run(&with, tracked(&["Read"]), true);
        assert_eq!(out.bytes, with.concat());
        assert!(out.reasons.is_empty());
    }

    #[test]
    fn no_strip_passes_every_byte_and_still_notes_the_reason() {
        let events = bash_stream(&FRAGMENTS);
        let out = run(&events, tracked(&["Bash"]), false);
        assert_eq!(out.bytes, events.concat());
        assert_eq!(out.reasons[0].reason, json!("See what the folder holds"));
    }

    /// The events of `events` that are not a call's input fragments.
    fn without_fragments(events: &[Vec<u8>]) -> Vec<u8> {
        events
            .iter()
            .filter(|event| !String::from_utf8_lossy(event).contains("input_json_delta"))
            .flatten()
            .copied()
            .collect()
    }

    #[test]
    fn a_call_the_stream_cuts_off_sends_nothing_held_and_logs_nothing() {
        for fragments in [&FRAGMENTS[..2], &FRAGMENTS[..]] {
            let mut events = bash_stream(fragments);
            // Cut before the block's stop: even input that parses was not finished.
            events.truncate(events.len() - 3);
            let out = run(&events, tracked(&["Bash"]), true);
            assert_eq!(out.bytes, without_fragments(&events));
            assert!(out.reasons.is_empty());
            assert_eq!(
                out.cut,
                [CutCall {
                    tool: "Bash".to_owned(),
                    call_id: Some("toolu_1".to_owned())
                }]
            );
        }
    }

    #[test]
    fn the_apis_error_event_cuts_the_open_call_and_goes_on() {
        let mut events = bash_stream(&FRAGMENTS);
        events.truncate(events.len() - 3);
        let error = event(
            "error",
            json!({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}),
        );
        events.push(error.clone());
        let out = run(&events, tracked(&["Bash"]), true);
        assert!(out.bytes.ends_with(&error));
        assert!(!String::from_utf8_lossy(&out.bytes).contains("See what"));
        assert_eq!(out.cut.len(), 1);
        assert!(out.reasons.is_empty());
    }

    #[test]
    fn message_stop_completes_a_block_left_open() {
        let mut events = bash_stream(&FRAGMENTS);
        let stop = events.len() - 3;
        events.remove(stop);
        let out = run(&events, tracked(&["Bash"]), true);
        assert_eq!(
            partial_json_sent(&out.bytes),
            ["{\"command\":\"ls -la\",\"timeout\":5}"]
        );
        assert_eq!(out.reasons.len(), 1);
        assert!(out.cut.is_empty());
    }

    #[test]
    fn input_that_does_not_parse_goes_on_as_it_came() {
        let events = bash_stream(&["{\"command\": ", "\"reason\": oops}"]);
        let out = run(&events, tracked(&["Bash"]), true);
        assert_eq!(out.bytes, events.concat());
    }

    #[test]
    fn a_call_sent_whole_in_its_start_loses_the_reason_there() {
        let events = vec![
            event(
                "content_block_start",
                json!({"type": "content_block_start", "index": 0,
                "content_block": {"type": "tool_use", "id": "toolu_w", "name": "Bash",
                "input": {"command": "ls", "reason": "Whole"}}}),
            ),
            event(
                "content_block_stop",
                json!({"type": "content_block_stop", "index": 0}),
            ),
        ];
        let out = run(&events, tracked(&["Bash"]), true);
        let text = String::from_utf8(out.bytes).unwrap();
        assert!(text.contains("\"input\":{\"command\":\"ls\"}"), "{text}");
        assert!(!text.contains("Whole"), "{text}");
        assert_eq!(out.reasons.len(), 1);
        assert_eq!(out.reasons[0].call_id.as_deref(), Some("toolu_w"));
    }

    #[test]
    fn sessions_are_read_from_claude_codes_user_id() {
        assert_eq!(
            session_of(r#"{"user_id":"user_ab12_account__session_0b9e-11"}"#).as_deref(),
            Some("0b9e-11")
        );
        assert_eq!(
            session_of(r#"{"user_id":"{\"device_id\":\"d\",\"session_id\":\"s-1\"}"}"#).as_deref(),
            Some("s-1")
        );
        assert_eq!(session_of(r#"{"user_id":"someone"}"#), None);
        assert_eq!(session_of("[]"), None);
    }
}
