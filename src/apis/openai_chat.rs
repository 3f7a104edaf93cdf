//! OpenAI Chat Completions, and every API that copies it.
//!
//! # Streamed calls
//!
//! A streamed answer's chunks carry `choices[].delta.tool_calls[]` fragments, each with the
//! call's `index` in its choice and, on a call's first fragment, its `id` and `function.name`;
//! `function.arguments` arrives in pieces. [`StreamedCalls`] is the one rule that joins them:
//!
//! - a fragment belongs to the call open at its stream (the completion's `id` and the choice's
//!   `index`) and its `index` (else its position in the chunk's `tool_calls`);
//! - a fragment with an `id` other than the open call's at that index ends that call and starts
//!   the next (some OpenAI-compatible servers send every call at index 0);
//! - fragments of several calls may interleave: a new index does not end the others;
//! - a choice's `finish_reason` ends its calls, and the end of the stream (`[DONE]`, or the
//!   stream breaking off) ends every call, in the order they started.

use serde_json::{json, Map, Value};

use super::{items, Api, ApiShape, History, ModelProvider};

/// OpenAI Chat Completions's shape.
pub struct OpenAiChat;

impl ApiShape for OpenAiChat {
    fn declaration_body<'a>(&self, declaration: &'a Value) -> Option<&'a Map<String, Value>> {
        declaration.get("function")?.as_object()
    }

    fn declaration_body_mut<'a>(
        &self,
        declaration: &'a mut Value,
    ) -> Option<&'a mut Map<String, Value>> {
        declaration.get_mut("function")?.as_object_mut()
    }

    fn schema_key(&self, _body: &Map<String, Value>) -> Option<&'static str> {
        Some("parameters")
    }

    fn call_body_key(&self) -> Option<&'static str> {
        Some("function")
    }

    fn declares_a_function(&self, tool: &Value) -> bool {
        is_a_function(tool) && Api::of_declaration(tool) == Some(Api::OpenAiChat)
    }

    /// `choices[].message.tool_calls[]`.
    fn answer_calls<'a>(&self, answer: &'a mut Value) -> Vec<&'a mut Value> {
        items(answer, "choices")
            .filter_map(|choice| choice.get_mut("message"))
            .flat_map(|message| items(message, "tool_calls"))
            .collect()
    }

    /// `messages[].tool_calls[]` of the assistant's messages.
    fn history(&self) -> Option<History> {
        Some(History {
            key: "messages",
            calls: Some("tool_calls"),
            kind: None,
        })
    }

    /// `…/chat/completions`, for OpenAI and every API that copies it.
    fn serves(&self, path: &str) -> bool {
        path.ends_with("/chat/completions")
    }

    fn provider(&self) -> Option<ModelProvider> {
        Some(OPENAI)
    }

    /// OpenAI's clients send their key as `Authorization: Bearer`.
    fn claims(&self, _path: &str, has_header: &dyn Fn(&str) -> bool) -> bool {
        has_header("authorization")
    }

    fn error_body(&self, status: u16, message: &str) -> Value {
        error_body(status, message)
    }
}

/// OpenAI, whose Chat Completions and Responses one upstream serves. Its SDKs and Codex put
/// `/v1` in their base URL, so the paths a gateway sees start with it.
pub(super) const OPENAI: ModelProvider = ModelProvider {
    name: "openai",
    default_upstream: "https://api.openai.com",
};

/// Whether a declaration says `"type": "function"`. Codex CLI declares client-run tools of other
/// types with object schemas too (`tool_search`); their calls come back as other items, which are
/// never stripped, so their declarations must not ask for a reason either.
pub(super) fn is_a_function(tool: &Value) -> bool {
    tool.get("type").and_then(Value::as_str) == Some("function")
}

/// OpenAI's error envelope.
pub(super) fn error_body(status: u16, message: &str) -> Value {
    let kind = match status {
        400..=499 => "invalid_request_error",
        _ => "server_error",
    };
    json!({"error": {"message": message, "type": kind, "param": null, "code": null}})
}

/// The stream a fragment belongs to: the completion's `id`, when the chunk has one, and the
/// choice's `index`.
pub type StreamKey = (Option<String>, u64);

/// The number a choice or a call fragment goes by: its `index`, else its position in its array.
pub fn index_or_position(index: Option<u64>, position: usize) -> u64 {
    index.unwrap_or(position as u64)
}

/// One call fragment of a chunk, as the chunk holds it.
#[derive(Debug, Clone, Copy, Default)]
pub struct Fragment<'a> {
    /// Its `index`, else its position in the chunk's `tool_calls`.
    pub index: u64,
    /// The call's `id`, on the fragment that carries it.
    pub id: Option<&'a str>,
    /// A piece of `function.name`.
    pub name: Option<&'a str>,
    /// A piece of `function.arguments`.
    pub arguments: Option<&'a str>,
}

/// A call being joined from its fragments, with what the reader of the stream keeps beside it.
#[derive(Debug)]
pub struct StreamedCall<T> {
    /// The stream it belongs to.
    pub stream: StreamKey,
    /// Its index in its choice.
    pub index: u64,
    /// Its `id`, from the fragment that started it.
    pub id: Option<String>,
    /// Its tool's name, joined.
    pub name: String,
    /// Its arguments' text, joined.
    pub arguments: String,
    /// What the reader of the stream keeps with the call (where it started; whether it is held).
    pub with: T,
}

/// The calls of a stream still receiving fragments, in the order they started.
#[derive(Debug)]
pub struct StreamedCalls<T> {
    open: Vec<StreamedCall<T>>,
}

impl<T> Default for StreamedCalls<T> {
    fn default() -> Self {
        StreamedCalls { open: Vec::new() }
    }
}

impl<T> StreamedCalls<T> {
    /// Whether no call is open.
    pub fn is_idle(&self) -> bool {
        self.open.is_empty()
    }

    /// The open calls, in the order they started.
    pub fn iter(&self) -> impl Iterator<Item = &StreamedCall<T>> {
        self.open.iter()
    }

    /// What is kept beside each open call.
    pub fn kept_mut(&mut self) -> impl Iterator<Item = &mut T> {
        self.open.iter_mut().map(|call| &mut call.with)
    }

    /// The open call a fragment of `stream` continues, if it continues one rather than start
    /// the next.
    fn continued(&self, stream: &StreamKey, fragment: &Fragment<'_>) -> Option<usize> {
        let open = self
            .open
            .iter()
            .position(|call| &call.stream == stream && call.index == fragment.index)?;
        let new_id = fragment
            .id
            .is_some_and(|id| self.open[open].id.as_deref() != Some(id));
        (!new_id).then_some(open)
    }

    /// Whether a fragment of `stream` starts a call.
    pub fn starts(&self, stream: &StreamKey, fragment: &Fragment<'_>) -> bool {
        self.continued(stream, fragment).is_none()
    }

    /// One fragment of `stream`. A call it ends goes to `ended`; a call it starts keeps what
    /// `start` gives. Returns the call the fragment belongs to, joined with it.
    pub fn fragment(
        &mut self,
        stream: &StreamKey,
        fragment: Fragment<'_>,
        start: impl FnOnce() -> T,
        ended: &mut Vec<StreamedCall<T>>,
    ) -> &mut StreamedCall<T> {
        if let Some(open) = self.continued(stream, &fragment) {
            let call = &mut self.open[open];
            call.name.push_str(fragment.name.unwrap_or_default());
            call.arguments
                .push_str(fragment.arguments.unwrap_or_default());
            return &mut self.open[open];
        }
        if let Some(open) = self
            .open
            .iter()
            .position(|call| &call.stream == stream && call.index == fragment.index)
        {
            ended.push(self.open.remove(open));
        }
        self.open.push(StreamedCall {
            stream: stream.clone(),
            index: fragment.index,
            id: fragment.id.map(str::to_owned),
            name: fragment.name.unwrap_or_default().to_owned(),
            arguments: fragment.arguments.unwrap_or_default().to_owned(),
            with: start(),
        });
        self.open.last_mut().expect("pushed above")
    }

    /// A choice's `finish_reason`: its calls end, into `ended` in the order they started.
    pub fn finish(&mut self, stream: &StreamKey, ended: &mut Vec<StreamedCall<T>>) {
        if !self.open.iter().any(|call| &call.stream == stream) {
            return;
        }
        let (done, open): (Vec<_>, Vec<_>) = std::mem::take(&mut self.open)
            .into_iter()
            .partition(|call| &call.stream == stream);
        self.open = open;
        ended.extend(done);
    }

    /// The stream ended: every open call ends, in the order they started.
    pub fn end(&mut self, ended: &mut Vec<StreamedCall<T>>) {
        ended.append(&mut self.open);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fragment<'a>(index: u64, id: Option<&'a str>, arguments: &'a str) -> Fragment<'a> {
        Fragment {
            index,
            id,
            name: id.map(|_| "shell"),
            arguments: Some(arguments),
        }
    }

    #[test]
    fn a_new_id_at_an_index_in_use_ends_the_call_there() {
        let mut calls = StreamedCalls::default();
        let stream = (Some("cc".to_owned()), 0);
        let mut ended = Vec::new();
        calls.fragment(&stream, fragment(0, Some("c1"), "{}"), || (), &mut ended);
        calls.fragment(&stream, fragment(0, None, ""), || (), &mut ended);
        assert!(ended.is_empty());
        calls.fragment(&stream, fragment(0, Some("c2"), "{"), || (), &mut ended);
        assert_eq!(ended.len(), 1);
        assert_eq!(ended[0].id.as_deref(), Some("c1"));
        calls.fragment(&stream, fragment(0, None, "}"), || (), &mut ended);
        calls.finish(&stream, &mut ended);
        assert_eq!(ended[1].arguments, "{}");
        assert!(calls.is_idle());
    }

    #[test]
    fn interleaved_indices_stay_open_until_the_finish() {
        let mut calls = StreamedCalls::default();
        let stream = (None, 0);
        let other_choice = (None, 1);
        let mut ended = Vec::new();
        calls.fragment(
            &stream,
            fragment(0, Some("a"), "{\"x\":"),
            || (),
            &mut ended,
        );
        calls.fragment(
            &stream,
            fragment(1, Some("b"), "{\"y\":"),
            || (),
            &mut ended,
        );
        calls.fragment(
            &other_choice,
            fragment(0, Some("c"), "{}"),
            || (),
            &mut ended,
        );
        calls.fragment(&stream, fragment(0, None, "1}"), || (), &mut ended);
        calls.fragment(&stream, fragment(1, None, "2}"), || (), &mut ended);
        calls.finish(&stream, &mut ended);
        let joined: Vec<_> = ended.iter().map(|call| call.arguments.as_str()).collect();
        assert_eq!(joined, ["{\"x\":1}", "{\"y\":2}"]);
        assert!(!calls.is_idle());
        calls.end(&mut ended);
        assert_eq!(ended[2].id.as_deref(), Some("c"));
    }
}
