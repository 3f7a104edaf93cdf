//! OpenAI Responses answers streamed as typed events. A `function_call` item's arguments travel
//! in `response.function_call_arguments.delta` events and are repeated whole by
//! `…arguments.done`, by `response.output_item.done` and by the `response.completed` copy of
//! the response: the reason comes off in every one of them, and is logged once.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use serde_json::{Map, Value};

use super::rewrite::{CutCall, EventRewriter, Output};
use super::sse::{self, Fields};
use crate::apis::Api;
use crate::layer::wire::{strip_answer, strip_answer_call};
use crate::layer::{strip_arguments_text, TakenReason, ToolNames};

/// A `function_call` item being streamed.
#[derive(Debug)]
struct Item {
    tool: String,
    call_id: Option<String>,
    /// The delta events held back, as they came, and the first of them parsed (the shape of the
    /// one that replaces them).
    held: Vec<u8>,
    first_delta: Option<Map<String, Value>>,
}

/// Rewrites a Responses stream.
pub struct OpenAiResponsesRewriter {
    tracked: Arc<ToolNames>,
    strip: bool,
    /// The function calls to tracked tools, by item id.
    items: HashMap<String, Item>,
    /// Calls whose reason was noted: the same call comes by up to four times.
    noted: HashSet<String>,
    /// The items of tracked calls whose arguments completed: a `done` repeated for one of them
    /// loses the reason too.
    completed: HashSet<String>,
}

impl OpenAiResponsesRewriter {
    pub fn new(tracked: Arc<ToolNames>, strip: bool) -> OpenAiResponsesRewriter {
        OpenAiResponsesRewriter {
            tracked,
            strip,
            items: HashMap::new(),
            noted: HashSet::new(),
            completed: HashSet::new(),
        }
    }

    /// Notes a reason unless this call's was noted already.
    fn note(&mut self, taken: TakenReason, key: Option<&str>, out: &mut Output) {
        let key = taken.call_id.clone().or_else(|| key.map(str::to_owned));
        if key.is_none_or(|key| self.noted.insert(key)) {
            out.reasons.push(taken);
        }
    }

    /// An item's complete arguments have come: its reason is noted and the held deltas go out,
    /// as one stripped delta when there was a reason to take off.
    fn complete(&mut self, item_id: &str, arguments: &str, out: &mut Output) -> Option<String> {
        let Some(item) = self.items.remove(item_id) else {
            // A `done` sent again: its call was noted the first time.
            let again = self.completed.contains(item_id);
            return strip_arguments_text(arguments)
                .filter(|_| again)
                .map(|stripped| stripped.text());
        };
        self.completed.insert(item_id.to_owned());
        let Some(stripped) = strip_arguments_text(arguments) else {
            out.bytes.extend_from_slice(&item.held);
            return None;
        };
        let text = stripped.text();
        let taken = TakenReason::new(
            item.tool,
            item.call_id,
            None,
            stripped.reason,
            Value::Object(stripped.arguments),
        );
        self.note(taken, Some(item_id), out);
        match item.first_delta {
            Some(mut delta) => {
                delta.insert("delta".to_owned(), Value::from(text.as_str()));
                out.bytes.extend(sse::event(
                    Some("response.function_call_arguments.delta"),
                    &Value::Object(delta).to_string(),
                ));
            }
            None => out.bytes.extend_from_slice(&item.held),
        }
        Some(text)
    }

    /// Takes the reasons off complete items (an `output_item.done`'s, or every one of a
    /// `response.completed`'s `response`), noting the ones not noted yet. Returns whether the
    /// event changed.
    fn strip_complete(
        &mut self,
        value: &mut Value,
        whole_response: bool,
        out: &mut Output,
    ) -> bool {
        let mut taken = Vec::new();
        let changed = if whole_response {
            strip_answer(Api::OpenAiResponses, value, &self.tracked, &mut taken)
        } else {
            strip_answer_call(Api::OpenAiResponses, value, &self.tracked, &mut taken)
        };
        for reason in taken {
            self.note(reason, None, out);
        }
        changed && self.strip
    }

    /// One parsed event; returns the event to send instead of the one that came, when it changed,
    /// and `None` inside when it is held back.
    fn typed(&mut self, kind: &str, data: &mut Map<String, Value>, out: &mut Output) -> Verdict {
        let item_id = data
            .get("item_id")
            .and_then(Value::as_str)
            .map(str::to_owned);
        match kind {
            "response.output_item.added" => {
                let item = data.get("item").unwrap_or(&Value::Null);
                let tool = item.get("name").and_then(Value::as_str);
                let id = item.get("id").and_then(Value::as_str);
                let is_call = item.get("type").and_then(Value::as_str) == Some("function_call");
                if let (true, true, Some(tool), Some(id)) = (self.strip, is_call, tool, id) {
                    if self.tracked.contains(tool) {
                        let call_id = item.get("call_id").and_then(Value::as_str);
                        self.items.insert(
                            id.to_owned(),
                            Item {
                                tool: tool.to_owned(),
                                call_id: call_id.map(str::to_owned),
                                held: Vec::new(),
                                first_delta: None,
                            },
                        );
                    }
                }
                // An item announced with its arguments already in it loses the reason there.
                let Some(item) = data.get_mut("item") else {
                    return Verdict::Unchanged;
                };
                match self.strip_complete(item, false, out) {
                    true => Verdict::Changed,
                    false => Verdict::Unchanged,
                }
            }
            "response.function_call_arguments.delta" => {
                let Some(item) = item_id.and_then(|id| self.items.get_mut(&id)) else {
                    return Verdict::Unchanged;
                };
                if item.first_delta.is_none() {
                    item.first_delta = Some(data.clone());
                }
                Verdict::Held
            }
            "response.function_call_arguments.done" => {
                let arguments = data.get("arguments").and_then(Value::as_str).unwrap_or("");
                let arguments = arguments.to_owned();
                match item_id.and_then(|id| self.complete(&id, &arguments, out)) {
                    Some(stripped) => {
                        data.insert("arguments".to_owned(), Value::from(stripped));
                        Verdict::Changed
                    }
                    None => Verdict::Unchanged,
                }
            }
            "response.output_item.done" => {
                let Some(item) = data.get_mut("item") else {
                    return Verdict::Unchanged;
                };
                // An item whose arguments never had their `done` event is complete now.
                if let (Some(id), Some(arguments)) = (
                    item.get("id").and_then(Value::as_str).map(str::to_owned),
                    item.get("arguments")
                        .and_then(Value::as_str)
                        .map(str::to_owned),
                ) {
                    self.complete(&id, &arguments, out);
                }
                let item = data.get_mut("item").expect("looked at above");
                match self.strip_complete(item, false, out) {
                    true => Verdict::Changed,
                    false => Verdict::Unchanged,
                }
            }
            "response.completed" | "response.incomplete" | "response.failed" => {
                // The response's end: an item whose arguments never had their `done` is in
                // its output, whole, and loses its reason there; its deltas are not sent.
                self.items.clear();
                let Some(response) = data.get_mut("response") else {
                    return Verdict::Unchanged;
                };
                match self.strip_complete(response, true, out) {
                    true => Verdict::Changed,
                    false => Verdict::Unchanged,
                }
            }
            // The API's own error ends the stream: the items still held never completed.
            "error" => {
                self.cut(out);
                Verdict::Unchanged
            }
            _ => Verdict::Unchanged,
        }
    }
}

enum Verdict {
    Unchanged,
    Changed,
    Held,
}

/// Whether an event of this type can need rewriting; all others pass without being parsed.
fn is_call_event(kind: &str) -> bool {
    matches!(
        kind,
        "response.output_item.added"
            | "response.function_call_arguments.delta"
            | "response.function_call_arguments.done"
            | "response.output_item.done"
            | "response.completed"
            | "response.incomplete"
            | "response.failed"
            | "error"
    )
}

impl EventRewriter for OpenAiResponsesRewriter {
    fn event(&mut self, event: &[u8], out: &mut Output) {
        let Some(fields) = Fields::parse(event) else {
            out.bytes.extend_from_slice(event);
            return;
        };
        // Events are named by their `event:` field and by their data's `type`.
        let named = fields.name.filter(|name| !name.is_empty());
        if named.is_some_and(|name| !is_call_event(name)) {
            out.bytes.extend_from_slice(event);
            return;
        }
        let Ok(Value::Object(mut data)) = serde_json::from_str::<Value>(&fields.data) else {
            out.bytes.extend_from_slice(event);
            return;
        };
        let kind = data
            .get("type")
            .and_then(Value::as_str)
            .or(named)
            .unwrap_or_default()
            .to_owned();
        let mut before = Output::default();
        let verdict = self.typed(&kind, &mut data, &mut before);
        out.append(before);
        match verdict {
            Verdict::Unchanged => out.bytes.extend_from_slice(event),
            Verdict::Changed => out
                .bytes
                .extend(sse::event(fields.name, &Value::Object(data).to_string())),
            Verdict::Held => {
                let item_id = data
                    .get("item_id")
                    .and_then(Value::as_str)
                    .unwrap_or_default();
                if let Some(item) = self.items.get_mut(item_id) {
                    item.held.extend_from_slice(event);
                }
            }
        }
    }

    fn cut(&mut self, out: &mut Output) {
        // Arguments still held when the stream breaks off never had their `done`: the model had
        // not finished them.
        let mut items: Vec<Item> = self.items.drain().map(|(_, item)| item).collect();
        items.sort_by_key(|item| {
            item.first_delta
                .as_ref()
                .and_then(|d| d.get("sequence_number")?.as_u64())
        });
        for item in items {
            out.cut.push(CutCall {
                tool: item.tool,
                call_id: item.call_id,
            });
        }
    }

    fn holds(&self) -> bool {
        !self.items.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::gateway::sse::Splitter;

    fn event(data: Value) -> Vec<u8> {
        let kind = data["type"].as_str().unwrap().to_owned();
        sse::event(Some(&kind), &data.to_string())
    }

    fn item(arguments: &str, status: &str) -> Value {
        json!({"id": "fc_1", "type": "function_call", "status": status, "call_id": "call_1",
            "name": "exec_command", "arguments": arguments})
    }

    const WITH: &str = "{\"cmd\":\"ls\",\"reason\":\"See the files\"}";
    const WITHOUT: &str = "{\"cmd\":\"ls\"}";

    fn full_stream() -> Vec<Vec<u8>> {
        vec![
            event(json!({"type": "response.created", "sequence_number": 0,
                "response": {"id": "resp_1", "output": []}})),
            event(
                json!({"type": "response.output_item.added", "sequence_number": 1,
                "output_index": 0, "item": item("", "in_progress")}),
            ),
            event(
                json!({"type": "response.function_call_arguments.delta", "sequence_number": 2,
                "item_id": "fc_1", "output_index": 0, "delta": "{\"cmd\":\"ls\",\"rea"}),
            ),
            event(
                json!({"type": "response.function_call_arguments.delta", "sequence_number": 3,
                "item_id": "fc_1", "output_index": 0, "delta": "son\":\"See the files\"}"}),
            ),
            event(
                json!({"type": "response.function_call_arguments.done", "sequence_number": 4,
                "item_id": "fc_1", "output_index": 0, "arguments": WITH}),
            ),
            event(
                json!({"type": "response.output_item.done", "sequence_number": 5,
                "output_index": 0, "item": item(WITH, "completed")}),
            ),
            event(json!({"type": "response.completed", "sequence_number": 6,
                "response": {"id": "resp_1", "output": [item(WITH, "completed")]}})),
        ]
    }

    fn run(events: &[Vec<u8>], strip: bool) -> (Vec<Value>, Vec<TakenReason>) {
        let tracked: ToolNames = ["exec_command".to_owned()].into();
        let mut stream = OpenAiResponsesRewriter::new(Arc::new(tracked), strip);
        let mut out = Output::default();
        for event in events {
            stream.event(event, &mut out);
        }
        stream.cut(&mut out);
        let mut sent = Vec::new();
        Splitter::new().push(&out.bytes, &mut |event| {
            sent.push(serde_json::from_str(&Fields::parse(event).unwrap().data).unwrap());
        });
        (sent, out.reasons)
    }

    #[test]
    fn every_copy_of_the_arguments_loses_the_reason_and_it_is_noted_once() {
        let (sent, reasons) = run(&full_stream(), true);
        let deltas: Vec<&Value> = sent
            .iter()
            .filter(|e| e["type"] == "response.function_call_arguments.delta")
            .collect();
        assert_eq!(deltas.len(), 1);
        assert_eq!(deltas[0]["delta"], WITHOUT);
        assert_eq!(deltas[0]["sequence_number"], 2);
        let done = sent
            .iter()
            .find(|e| e["type"] == "response.function_call_arguments.done");
        assert_eq!(done.unwrap()["arguments"], WITHOUT);
        let item_done = sent
            .iter()
            .find(|e| e["type"] == "response.output_item.done");
        assert_eq!(item_done.unwrap()["item"]["arguments"], WITHOUT);
        let completed = sent.iter().find(|e| e["type"] == "response.completed");
        assert_eq!(
            completed.unwrap()["response"]["output"][0]["arguments"],
            WITHOUT
        );
        assert!(!sent.iter().any(|e| e.to_string().contains("See the files")));
        assert_eq!(reasons.len(), 1);
        assert_eq!(reasons[0].call_id.as_deref(), Some("call_1"));
        assert_eq!(reasons[0].to_string(), "exec_command: See the files");
    }

    #[test]
    fn a_stream_of_whole_items_only_is_stripped_too() {
        // Codex CLI takes a stream of just the finished item and the completed response.
        let events = full_stream();
        let (sent, reasons) = run(&[events[5].clone(), events[6].clone()], true);
        assert_eq!(sent[0]["item"]["arguments"], WITHOUT);
        assert_eq!(sent[1]["response"]["output"][0]["arguments"], WITHOUT);
        assert_eq!(reasons.len(), 1);
    }

    #[test]
    fn no_strip_sends_every_event_as_it_came_and_notes_the_reason_once() {
        let events = full_stream();
        let tracked: ToolNames = ["exec_command".to_owned()].into();
        let mut stream = OpenAiResponsesRewriter::new(Arc::new(tracked), false);
        let mut out = Output::default();
        for event in &events {
            stream.event(event, &mut out);
        }
        assert_eq!(out.bytes, events.concat());
        assert_eq!(out.reasons.len(), 1);
    }

    #[test]
    fn an_item_announced_with_its_arguments_loses_the_reason_at_once() {
        let added = event(
            json!({"type": "response.output_item.added", "sequence_number": 1,
            "output_index": 0, "item": item(WITH, "in_progress")}),
        );
        let (sent, reasons) = run(&[added], true);
        assert_eq!(sent[0]["item"]["arguments"], WITHOUT);
        assert_eq!(reasons.len(), 1);
    }

    #[test]
    fn arguments_the_stream_cuts_off_are_never_sent() {
        let events = full_stream();
        let (sent, reasons) = run(&events[..4], true);
        // The response's start and the item's announcement; no delta.
        assert_eq!(sent.len(), 2);
        assert!(reasons.is_empty());
        let tracked: ToolNames = ["exec_command".to_owned()].into();
        let mut stream = OpenAiResponsesRewriter::new(Arc::new(tracked), true);
        let mut out = Output::default();
        for event in &events[..4] {
            stream.event(event, &mut out);
        }
        assert!(stream.holds());
        stream.cut(&mut out);
        assert_eq!(out.cut.len(), 1);
        assert_eq!(out.cut[0].call_id.as_deref(), Some("call_1"));
    }
}
