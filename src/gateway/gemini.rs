//! Gemini answers streamed as server-sent events: each event is a whole chunk of the answer, and
//! a `functionCall` part arrives whole in one of them, so each chunk is stripped on its own.

use std::sync::Arc;

use serde_json::Value;

use super::rewrite::{EventRewriter, Output};
use super::sse::{self, Fields};
use crate::apis::Api;
use crate::layer::wire::strip_answer;
use crate::layer::ToolNames;

/// Rewrites a `streamGenerateContent?alt=sse` answer, one chunk at a time.
pub struct GeminiRewriter {
    tracked: Arc<ToolNames>,
    strip: bool,
}

impl GeminiRewriter {
    pub fn new(tracked: Arc<ToolNames>, strip: bool) -> GeminiRewriter {
        GeminiRewriter { tracked, strip }
    }
}

impl EventRewriter for GeminiRewriter {
    fn event(&mut self, event: &[u8], out: &mut Output) {
        let mut chunk = Fields::parse(event)
            .filter(|fields| fields.data.contains("\"functionCall\""))
            .and_then(|fields| {
                let chunk = serde_json::from_str::<Value>(&fields.data).ok()?;
                Some((fields.name.map(str::to_owned), chunk))
            });
        let changed = chunk.as_mut().is_some_and(|(_, chunk)| {
            strip_answer(Api::Gemini, chunk, &self.tracked, &mut out.reasons)
        });
        match chunk {
            Some((name, chunk)) if changed && self.strip => {
                out.bytes
                    .extend(sse::event(name.as_deref(), &chunk.to_string()));
            }
            _ => out.bytes.extend_from_slice(event),
        }
    }

    fn cut(&mut self, _out: &mut Output) {}

    /// A Gemini call arrives whole in its chunk, and nothing is held between chunks: a chunk
    /// that names a call and cannot be read is the one place its reason could pass.
    fn unreadable_breaks(&self, event: &[u8]) -> bool {
        self.strip && memchr::memmem::find(event, b"functionCall").is_some()
    }

    fn holds(&self) -> bool {
        false
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn chunk(parts: Value) -> Vec<u8> {
        let data = json!({"candidates": [{"content": {"role": "model", "parts": parts},
            "index": 0}], "modelVersion": "gemini-test"});
        format!("data: {data}\r\n\r\n").into_bytes()
    }

    fn run(events: &[Vec<u8>], strip: bool) -> Output {
        let tracked: ToolNames = ["run_shell_command".to_owned()].into();
        let mut stream = GeminiRewriter::new(Arc::new(tracked), strip);
        let mut out = Output::default();
        for event in events {
            stream.event(event, &mut out);
        }
        out
    }

    #[test]
    fn a_chunk_with_a_call_loses_its_reason_and_the_others_pass_as_they_came() {
        let text = chunk(json!([{"text": "Let me check."}]));
        let call = chunk(json!([{"functionCall": {"name": "run_shell_command",
            "args": {"command": "ls", "reason": "See the files"}}}]));
        let out = run(&[text.clone(), call], true);
        assert!(out.bytes.starts_with(&text));
        let rest = String::from_utf8(out.bytes[text.len()..].to_vec()).unwrap();
        let data: Value =
            serde_json::from_str(rest.trim().strip_prefix("data: ").unwrap()).unwrap();
        assert_eq!(
            data["candidates"][0]["content"]["parts"][0]["functionCall"]["args"],
            json!({"command": "ls"})
        );
        assert_eq!(
            out.reasons[0].to_string(),
            "run_shell_command: See the files"
        );
        assert_eq!(out.reasons[0].call_id, None);
    }

    #[test]
    fn no_strip_passes_the_chunk_and_notes_the_reason() {
        let call = chunk(
            json!([{"functionCall": {"id": "gc_1", "name": "run_shell_command",
            "args": {"command": "ls", "reason": "See the files"}}}]),
        );
        let out = run(std::slice::from_ref(&call), false);
        assert_eq!(out.bytes, call);
        assert_eq!(out.reasons[0].call_id.as_deref(), Some("gc_1"));
    }
}
