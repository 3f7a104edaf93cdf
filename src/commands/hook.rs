//! `reasons hook claude-code`: shows the person the model's reason for the call Claude Code is
//! about to run.
//!
//! Claude Code validates its built-in tools strictly, so behind the gateway their calls arrive
//! without the reason, which waits in the reasons log under the call's `tool_use` id. A call
//! that still carries one (an MCP tool behind `reasons proxy`) has it in its input.
//!
//! The hook informs and nothing more: it never answers with a permission decision, because
//! machine policy never reads the reason. And it never gets in the way of the agent: whatever
//! goes wrong, it prints nothing and exits 0.

use std::io::{Read, Write};
use std::path::Path;

use reasons::layer::{TakenReason, REASON_PARAM};
use reasons::reasons_log;
use serde_json::{json, Value};

/// More than any hook input Claude Code sends: a larger one is not read.
const MAX_INPUT: u64 = 64 << 20;

/// Reads the `PreToolUse` input on `input` and writes the `systemMessage` answer, if any.
pub fn claude_code(input: impl Read, mut output: impl Write, log: Option<&Path>) {
    if let Some(message) = message(input, log) {
        let answer = json!({ "systemMessage": message });
        let _ = writeln!(output, "{answer}");
        let _ = output.flush();
    }
}

/// The message to show, when the call has a reason to show.
fn message(input: impl Read, log: Option<&Path>) -> Option<String> {
    let mut text = Vec::new();
    input.take(MAX_INPUT).read_to_end(&mut text).ok()?;
    let hook: Value = serde_json::from_slice(&text).ok()?;
    let tool = hook.get("tool_name")?.as_str()?;
    let call_id = hook.get("tool_use_id").and_then(Value::as_str);
    let reason = match hook
        .get("tool_input")
        .and_then(|input| input.get(REASON_PARAM))
    {
        Some(reason) => reason.clone(),
        None => reasons_log::find_from_end(log?, call_id?).ok()??,
    };
    if reason.as_str().is_some_and(|text| text.trim().is_empty()) || reason.is_null() {
        return None;
    }
    let taken = TakenReason {
        tool: tool.to_owned(),
        call_id: call_id.map(str::to_owned),
        request_id: None,
        reason,
    };
    // The reason is the model's claim about its own call, and is shown as one.
    Some(format!("model's reason for {taken}"))
}

#[cfg(test)]
mod tests {
    use reasons::reasons_log::{Record, Via, Writer};

    use super::*;

    fn run(input: &str, log: Option<&Path>) -> String {
        let mut out = Vec::new();
        claude_code(input.as_bytes(), &mut out, log);
        String::from_utf8(out).unwrap()
    }

    fn pre_tool_use(input: Value, id: &str) -> String {
        json!({"session_id": "s", "hook_event_name": "PreToolUse", "tool_name": "Bash",
            "tool_input": input, "tool_use_id": id})
        .to_string()
    }

    #[test]
    fn a_reason_in_the_input_is_shown() {
        let input = pre_tool_use(json!({"command": "ls", "reason": "Look around"}), "toolu_1");
        assert_eq!(
            run(&input, None),
            "{\"systemMessage\":\"model's reason for Bash: Look around\"}\n"
        );
    }

    #[test]
    fn a_logged_reason_is_found_by_tool_use_id() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("reasons.jsonl");
        let log = Writer::open(&path).unwrap();
        for (id, reason) in [("toolu_1", "first"), ("toolu_2", "second\nline")] {
            let taken = TakenReason {
                tool: "Bash".into(),
                call_id: Some(id.into()),
                request_id: None,
                reason: json!(reason),
            };
            log.append(&Record::now(Via::Gateway, taken, None)).unwrap();
        }
        let input = pre_tool_use(json!({"command": "ls"}), "toolu_2");
        assert_eq!(
            run(&input, Some(&path)),
            "{\"systemMessage\":\"model's reason for Bash: second\\\\nline\"}\n"
        );
    }

    #[test]
    fn without_a_reason_or_with_bad_input_nothing_is_printed() {
        let dir = tempfile::tempdir().unwrap();
        let missing = dir.path().join("none.jsonl");
        for input in [
            pre_tool_use(json!({"command": "ls"}), "toolu_9"),
            pre_tool_use(json!({"command": "ls", "reason": "  "}), "toolu_9"),
            "not json".to_owned(),
            "{}".to_owned(),
            json!({"tool_name": 5}).to_string(),
        ] {
            assert_eq!(run(&input, Some(&missing)), "", "{input}");
            assert_eq!(run(&input, None), "", "{input}");
        }
    }
}
