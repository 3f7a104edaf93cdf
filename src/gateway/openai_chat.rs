//! OpenAI Chat Completions answers streamed as chunks: a call's `arguments` arrive in fragments
//! spread over chunks, joined by the API's one rule ([`StreamedCalls`]).
//!
//! The fragments of a call to a tracked tool are taken out of the chunks that carry them (a chunk
//! left with nothing else is held back whole) until the rule ends the call — a new id at its
//! index, its choice's `finish_reason` or `[DONE]` — and are then sent in one chunk of their own
//! holding the stripped arguments. A stream that ends without any of them broke off: its open
//! calls are dropped.

use std::sync::Arc;

use serde_json::{json, Map, Value};

use super::rewrite::{CutCall, EventRewriter, Output};
use super::sse::{self, Fields};
use crate::apis::openai_chat::{
    index_or_position, Fragment, StreamKey, StreamedCall, StreamedCalls,
};
use crate::layer::{strip_arguments_text, TakenReason, ToolNames};

/// What the gateway keeps beside a call being joined.
#[derive(Debug)]
struct Hold {
    /// Whether its fragments are being held (a call to a tracked tool, and stripping is on).
    held: bool,
    /// The chunk's fields other than `choices` (id, object, created, model…), for the chunk
    /// that carries the stripped arguments.
    template: Map<String, Value>,
}

/// Rewrites a Chat Completions stream.
pub struct OpenAiChatRewriter {
    tracked: Arc<ToolNames>,
    strip: bool,
    calls: StreamedCalls<Hold>,
}

impl OpenAiChatRewriter {
    pub fn new(tracked: Arc<ToolNames>, strip: bool) -> OpenAiChatRewriter {
        OpenAiChatRewriter {
            tracked,
            strip,
            calls: StreamedCalls::default(),
        }
    }

    /// Calls the rule ended: their reasons are noted and their held arguments sent.
    fn finish_all(&self, ended: Vec<StreamedCall<Hold>>, out: &mut Output) {
        for call in ended {
            self.finish(call, out);
        }
    }

    fn finish(&self, call: StreamedCall<Hold>, out: &mut Output) {
        let mut arguments = call.arguments;
        if self.tracked.contains(&call.name) {
            if let Some(stripped) = strip_arguments_text(&arguments) {
                if call.with.held {
                    arguments = stripped.text();
                }
                out.reasons.push(TakenReason::new(
                    call.name,
                    call.id,
                    None,
                    stripped.reason,
                    Value::Object(stripped.arguments),
                ));
            }
        }
        if !call.with.held {
            return;
        }
        let mut chunk = call.with.template;
        chunk.insert(
            "choices".to_owned(),
            json!([{
                "index": call.stream.1,
                "delta": {"tool_calls": [{"index": call.index, "function": {"arguments": arguments}}]},
                "finish_reason": null
            }]),
        );
        out.bytes
            .extend(sse::event(None, &Value::Object(chunk).to_string()));
    }

    /// Reads one chunk, taking the held fragments out of it; returns whether it changed. Calls
    /// it ends go to `ended`.
    fn chunk(
        &mut self,
        chunk: &mut Map<String, Value>,
        ended: &mut Vec<StreamedCall<Hold>>,
    ) -> bool {
        let template: Map<String, Value> = chunk
            .iter()
            .filter(|(key, _)| *key != "choices" && *key != "usage")
            .map(|(key, value)| (key.clone(), value.clone()))
            .collect();
        let completion = chunk.get("id").and_then(Value::as_str).map(str::to_owned);
        let Some(Value::Array(choices)) = chunk.get_mut("choices") else {
            return false;
        };
        let mut changed = false;
        for (position, choice) in choices.iter_mut().enumerate() {
            let number = index_or_position(choice.get("index").and_then(Value::as_u64), position);
            let stream = (completion.clone(), number);
            if let Some(Value::Array(deltas)) = choice
                .get_mut("delta")
                .and_then(|delta| delta.get_mut("tool_calls"))
            {
                for (position, delta) in deltas.iter_mut().enumerate() {
                    changed |= self.fragment(&stream, position, delta, &template, ended);
                }
                deltas.retain(|delta| !is_only_an_index(delta));
            }
            let finished = choice
                .get("finish_reason")
                .is_some_and(|reason| !reason.is_null());
            if finished {
                self.calls.finish(&stream, ended);
            }
        }
        if changed {
            for choice in choices.iter_mut() {
                if let Some(Value::Object(delta)) = choice.get_mut("delta") {
                    if delta
                        .get("tool_calls")
                        .and_then(Value::as_array)
                        .is_some_and(Vec::is_empty)
                    {
                        delta.remove("tool_calls");
                    }
                }
            }
            choices.retain(|choice| !is_empty_choice(choice));
        }
        changed
    }

    /// One call delta, joined by the rule; a fragment of a held call is taken out. Returns
    /// whether the delta changed.
    fn fragment(
        &mut self,
        stream: &StreamKey,
        position: usize,
        delta: &mut Value,
        template: &Map<String, Value>,
        ended: &mut Vec<StreamedCall<Hold>>,
    ) -> bool {
        let fragment = Fragment {
            index: index_or_position(delta.get("index").and_then(Value::as_u64), position),
            id: delta.get("id").and_then(Value::as_str),
            name: delta.pointer("/function/name").and_then(Value::as_str),
            arguments: delta.pointer("/function/arguments").and_then(Value::as_str),
        };
        let name = fragment.name;
        let tracked = &self.tracked;
        let strip = self.strip;
        let hold = || Hold {
            held: strip && name.is_some_and(|name| tracked.contains(name)),
            template: template.clone(),
        };
        let held = self.calls.fragment(stream, fragment, hold, ended).with.held;
        let Some(function) = delta.get_mut("function").and_then(Value::as_object_mut) else {
            return false;
        };
        let is_a_fragment =
            matches!(function.get("arguments"), Some(Value::String(text)) if !text.is_empty());
        if held && is_a_fragment {
            function.remove("arguments");
            return true;
        }
        false
    }
}

/// A call delta with nothing left but its index.
fn is_only_an_index(delta: &Value) -> bool {
    delta.as_object().is_some_and(|delta| {
        delta.iter().all(|(key, value)| {
            key == "index" || (key == "function" && value.as_object().is_some_and(Map::is_empty))
        })
    })
}

/// A choice whose delta is empty and that says nothing else.
fn is_empty_choice(choice: &Value) -> bool {
    choice.as_object().is_some_and(|choice| {
        choice.iter().all(|(key, value)| match key.as_str() {
            "index" => true,
            "delta" => value.as_object().is_some_and(Map::is_empty),
            _ => value.is_null(),
        })
    })
}

impl EventRewriter for OpenAiChatRewriter {
    fn event(&mut self, event: &[u8], out: &mut Output) {
        let Some(fields) = Fields::parse(event) else {
            out.bytes.extend_from_slice(event);
            return;
        };
        if fields.data.trim() == "[DONE]" {
            // The stream's own end: every call it started is complete.
            let mut ended = Vec::new();
            self.calls.end(&mut ended);
            self.finish_all(ended, out);
            out.bytes.extend_from_slice(event);
            return;
        }
        // With no call being assembled, only a chunk that starts one needs reading.
        if self.calls.is_idle() && !fields.data.contains("\"tool_calls\"") {
            out.bytes.extend_from_slice(event);
            return;
        }
        let Ok(Value::Object(mut chunk)) = serde_json::from_str::<Value>(&fields.data) else {
            out.bytes.extend_from_slice(event);
            return;
        };
        // Calls this chunk ends go out before it.
        let mut ended = Vec::new();
        let changed = self.chunk(&mut chunk, &mut ended);
        self.finish_all(ended, out);
        if !changed {
            out.bytes.extend_from_slice(event);
            return;
        }
        let says_more = chunk
            .get("choices")
            .and_then(Value::as_array)
            .is_some_and(|c| !c.is_empty())
            || chunk.get("usage").is_some_and(|usage| !usage.is_null());
        if says_more {
            out.bytes
                .extend(sse::event(fields.name, &Value::Object(chunk).to_string()));
        }
    }

    fn cut(&mut self, out: &mut Output) {
        // A call still open when the stream breaks off had neither its choice's finish nor the
        // stream's `[DONE]`: the model had not finished it.
        let mut open = Vec::new();
        self.calls.end(&mut open);
        for call in open {
            if self.tracked.contains(&call.name) {
                out.cut.push(CutCall {
                    tool: call.name,
                    call_id: call.id,
                });
            }
        }
    }

    fn holds(&self) -> bool {
        self.calls.iter().any(|call| call.with.held)
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::gateway::sse::Splitter;

    fn data(chunk: &Value) -> Vec<u8> {
        format!("data: {chunk}\n\n").into_bytes()
    }

    fn chunk(choices: Value) -> Vec<u8> {
        data(
            &json!({"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 7,
            "model": "gpt-test", "choices": choices}),
        )
    }

    fn delta(choice: u64, delta: Value) -> Vec<u8> {
        chunk(json!([{"index": choice, "delta": delta, "finish_reason": null}]))
    }

    fn start(choice: u64, index: u64, id: &str, name: &str) -> Vec<u8> {
        delta(
            choice,
            json!({"tool_calls": [{"index": index, "id": id, "type": "function",
            "function": {"name": name, "arguments": ""}}]}),
        )
    }

    fn fragment(choice: u64, index: u64, text: &str) -> Vec<u8> {
        delta(
            choice,
            json!({"tool_calls": [{"index": index, "function": {"arguments": text}}]}),
        )
    }

    fn finish(choice: u64) -> Vec<u8> {
        chunk(json!([{"index": choice, "delta": {}, "finish_reason": "tool_calls"}]))
    }

    fn run(events: &[Vec<u8>], strip: bool) -> Output {
        let tracked: ToolNames = ["shell".to_owned()].into();
        let mut stream = OpenAiChatRewriter::new(Arc::new(tracked), strip);
        let mut out = Output::default();
        for event in events {
            stream.event(event, &mut out);
        }
        stream.cut(&mut out);
        out
    }

    use std::collections::BTreeMap;

    /// The arguments each (choice, call index) was sent, and the chunks' data in order.
    fn sent(bytes: &[u8]) -> (BTreeMap<(u64, u64), String>, Vec<String>) {
        let mut arguments = BTreeMap::new();
        let mut datas = Vec::new();
        Splitter::new().push(bytes, &mut |event| {
            let fields = Fields::parse(event).unwrap();
            datas.push(fields.data.to_string());
            let Ok(chunk) = serde_json::from_str::<Value>(&fields.data) else {
                return;
            };
            for choice in chunk["choices"].as_array().into_iter().flatten() {
                for call in choice["delta"]["tool_calls"]
                    .as_array()
                    .into_iter()
                    .flatten()
                {
                    if let Some(text) = call["function"]["arguments"].as_str() {
                        let key = (
                            choice["index"].as_u64().unwrap(),
                            call["index"].as_u64().unwrap(),
                        );
                        arguments
                            .entry(key)
                            .or_insert_with(String::new)
                            .push_str(text);
                    }
                }
            }
        });
        (arguments, datas)
    }

    #[test]
    fn parallel_calls_each_get_one_stripped_fragment_when_their_choice_finishes() {
        let events = vec![
            delta(0, json!({"role": "assistant", "content": null})),
            start(0, 0, "call_a", "shell"),
            fragment(0, 0, "{\"command\":[\"ls\"],"),
            fragment(0, 0, "\"reason\":\"Look\"}"),
            start(0, 1, "call_b", "shell"),
            fragment(0, 1, "{\"reason\":\"Count\",\"command\":[\"wc\"]}"),
            finish(0),
            b"data: [DONE]\n\n".to_vec(),
        ];
        let out = run(&events, true);
        let (arguments, datas) = sent(&out.bytes);
        assert_eq!(arguments[&(0, 0)], "{\"command\":[\"ls\"]}");
        assert_eq!(arguments[&(0, 1)], "{\"command\":[\"wc\"]}");
        let reasons: Vec<String> = out.reasons.iter().map(ToString::to_string).collect();
        assert_eq!(reasons, ["shell: Look", "shell: Count"]);
        assert_eq!(out.reasons[1].call_id.as_deref(), Some("call_b"));
        // Fragments of parallel calls may interleave, so a call ends with its choice: both go
        // out before the finish, in the order they started; the stream still ends as it did.
        let sent_at = |text: &str| datas.iter().position(|d| d.contains(text)).unwrap();
        let a = sent_at("{\\\"command\\\":[\\\"ls\\\"]}");
        let b = sent_at("{\\\"command\\\":[\\\"wc\\\"]}");
        let finish = sent_at("\"finish_reason\":\"tool_calls\"");
        assert!(a < b && b < finish);
        assert_eq!(datas.last().unwrap(), "[DONE]");
        assert!(datas
            .iter()
            .any(|d| d.contains("\"finish_reason\":\"tool_calls\"")));
    }

    #[test]
    fn several_choices_are_assembled_apart() {
        let events = vec![
            start(0, 0, "call_0", "shell"),
            start(1, 0, "call_1", "shell"),
            fragment(1, 0, "{\"command\":\"b\",\"reason\":\"second\"}"),
            fragment(0, 0, "{\"command\":\"a\",\"reason\":\"first\"}"),
            chunk(
                json!([{"index": 0, "delta": {}, "finish_reason": "tool_calls"},
                {"index": 1, "delta": {}, "finish_reason": "tool_calls"}]),
            ),
        ];
        let out = run(&events, true);
        let (arguments, _) = sent(&out.bytes);
        assert_eq!(arguments[&(0, 0)], "{\"command\":\"a\"}");
        assert_eq!(arguments[&(1, 0)], "{\"command\":\"b\"}");
        assert_eq!(out.reasons.len(), 2);
    }

    #[test]
    fn a_call_without_a_reason_is_sent_as_it_was_written() {
        let events = vec![
            start(0, 0, "call_a", "shell"),
            fragment(0, 0, "{\"command\": "),
            fragment(0, 0, "\"ls\"}"),
            finish(0),
        ];
        let out = run(&events, true);
        assert_eq!(sent(&out.bytes).0[&(0, 0)], "{\"command\": \"ls\"}");
        assert!(out.reasons.is_empty());
    }

    #[test]
    fn a_call_the_stream_cuts_off_sends_nothing_held_and_logs_nothing() {
        let events = vec![
            delta(0, json!({"content": "Running it."})),
            start(0, 0, "call_a", "shell"),
            fragment(0, 0, "{\"command\":\"ls\","),
            fragment(0, 0, "\"reason\":\"SECRET\"}"),
        ];
        let out = run(&events, true);
        let text = String::from_utf8(out.bytes.clone()).unwrap();
        assert!(
            text.contains("Running it.") && text.contains("call_a"),
            "{text}"
        );
        assert!(
            !text.contains("SECRET") && !text.contains("command"),
            "{text}"
        );
        assert!(out.reasons.is_empty());
        assert_eq!(out.cut.len(), 1);
        assert_eq!(out.cut[0].call_id.as_deref(), Some("call_a"));
        // `[DONE]` is the stream's end: the same call is complete there.
        let mut done = events.clone();
        done.push(b"data: [DONE]\n\n".to_vec());
        let out = run(&done, true);
        assert_eq!(out.reasons.len(), 1);
        assert!(out.cut.is_empty());
    }

    #[test]
    fn other_tools_text_and_no_strip_pass_as_they_came() {
        let events = vec![
            delta(0, json!({"content": "Hello"})),
            start(0, 0, "call_x", "other"),
            fragment(0, 0, "{\"reason\":\"not ours\"}"),
            finish(0),
        ];
        let out = run(&events, true);
        assert_eq!(out.bytes, events.concat());
        let ours = vec![
            start(0, 0, "call_a", "shell"),
            fragment(0, 0, "{\"reason\":\"r\"}"),
            finish(0),
        ];
        let out = run(&ours, false);
        assert_eq!(out.bytes, ours.concat());
        assert_eq!(out.reasons.len(), 1);
    }

    #[test]
    fn a_chunk_with_text_beside_a_fragment_keeps_its_text() {
        let mixed = chunk(
            json!([{"index": 0, "delta": {"content": "and", "tool_calls": [
            {"index": 0, "function": {"arguments": "{\"reason\":\"r\"}"}}]}, "finish_reason": null}]),
        );
        let out = run(&[start(0, 0, "call_a", "shell"), mixed, finish(0)], true);
        let (arguments, datas) = sent(&out.bytes);
        assert_eq!(arguments[&(0, 0)], "{}");
        assert!(datas
            .iter()
            .any(|d| d.contains("\"content\":\"and\"") && !d.contains("\\\"r\\\"")));
    }
}
