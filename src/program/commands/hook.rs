//! `reasons hook AGENT`: shows the person the model's reason for the call the agent is about to
//! run, in the agent's own hook protocol.
//!
//! Behind the gateway an agent's built-in tools receive their calls without the reason (Claude
//! Code validates their input strictly), which waits in the reasons log under the call's id. A
//! call that still carries one (an MCP tool behind `reasons proxy`, an agent behind
//! `reasons gateway --no-strip`) has it in its input.
//!
//! - Claude Code and Codex send a `PreToolUse` event with `tool_name`, `tool_input` and
//!   `tool_use_id`, and show a `systemMessage` of the answer to the person.
//! - Gemini CLI sends a `BeforeTool` event with `tool_name` and `tool_input` but no id: a reason
//!   not in the input is found in the log by the tool and what the call touched.
//!
//! The hook informs and nothing more: it never answers with a decision or a changed input,
//! because machine policy never reads the reason. And it never gets in the way of the agent:
//! whatever goes wrong, it prints nothing and exits 0.

use std::io::{Read, Write};
use std::path::Path;

use reasons::layer::REASON_PARAM;
use reasons::reasons_log;
use reasons::visible::visible;
use serde_json::{json, Value};

/// More than any hook input an agent sends: a larger one is not read.
const MAX_INPUT: u64 = 64 << 20;

/// The agents whose hook protocols `reasons hook` speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Agent {
    /// Claude Code's `PreToolUse`.
    ClaudeCode,
    /// Codex CLI's `PreToolUse`.
    Codex,
    /// Gemini CLI's `BeforeTool`.
    GeminiCli,
}

impl Agent {
    /// The `hook_event_name` of the event this hook answers.
    fn event(self) -> &'static str {
        match self {
            Agent::ClaudeCode | Agent::Codex => "PreToolUse",
            Agent::GeminiCli => "BeforeTool",
        }
    }
}

/// Reads the agent's hook input on `input` and writes its `systemMessage` answer, if any. A call
/// with an id is asked of `gateway` first (`--gateway`), then looked for in `log`.
pub fn run(
    agent: Agent,
    input: impl Read,
    mut output: impl Write,
    log: Option<&Path>,
    gateway: Option<&str>,
) {
    if let Some(message) = message(agent, input, log, gateway) {
        let answer = json!({ "systemMessage": message });
        let _ = writeln!(output, "{answer}");
        let _ = output.flush();
    }
}

/// The message to show, when the call has a reason to show.
fn message(
    agent: Agent,
    input: impl Read,
    log: Option<&Path>,
    gateway: Option<&str>,
) -> Option<String> {
    let mut text = Vec::new();
    input.take(MAX_INPUT).read_to_end(&mut text).ok()?;
    let hook: Value = serde_json::from_slice(&text).ok()?;
    // Another agent's event (or another event of this one) is not answered.
    if hook.get("hook_event_name")?.as_str()? != agent.event() {
        return None;
    }
    let tool = hook.get("tool_name")?.as_str()?;
    let tool_input = hook.get("tool_input");
    let reason = match tool_input.and_then(|input| input.get(REASON_PARAM)) {
        Some(reason) => reason.clone(),
        None => match agent {
            Agent::ClaudeCode | Agent::Codex => {
                let call_id = hook.get("tool_use_id")?.as_str()?;
                super::ask_gateway::reason_by_call_id(gateway, log, call_id)?
            }
            Agent::GeminiCli => {
                let touched = reasons::touched::summary(tool_input?);
                reasons_log::find_touched_from_end(log?, tool, &touched)
                    .ok()??
                    .reason
            }
        },
    };
    let reason = match reason {
        Value::String(text) if !text.trim().is_empty() => text,
        Value::String(_) | Value::Null => return None,
        other => other.to_string(),
    };
    // The reason is the model's claim about its own call, and is shown as one; neither it nor
    // the tool's name can drive the terminal the agent shows it on.
    Some(format!(
        "model's reason for {}: {}",
        visible(tool),
        visible(reason.trim())
    ))
}

#[cfg(test)]
mod tests {
    use reasons::layer::TakenReason;
    use reasons::reasons_log::{Record, Via, Writer};

    use super::*;

    fn run_as(agent: Agent, input: &str, log: Option<&Path>) -> String {
        let mut out = Vec::new();
        super::run(agent, input.as_bytes(), &mut out, log, None);
        String::from_utf8(out).unwrap()
    }

    fn run(input: &str, log: Option<&Path>) -> String {
        run_as(Agent::ClaudeCode, input, log)
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
            let taken = TakenReason::new(
                "Bash".into(),
                Some(id.into()),
                None,
                json!(reason),
                &json!({"command": "ls"}),
            );
            log.append(&Record::now(Via::Gateway, taken, None)).unwrap();
        }
        let input = pre_tool_use(json!({"command": "ls"}), "toolu_2");
        assert_eq!(
            run(&input, Some(&path)),
            "{\"systemMessage\":\"model's reason for Bash: second␊line\"}\n"
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

    fn logged(path: &Path, tool: &str, id: Option<&str>, reason: &str, arguments: Value) {
        let log = Writer::open(path).unwrap();
        let taken = TakenReason::new(
            tool.into(),
            id.map(Into::into),
            None,
            json!(reason),
            &arguments,
        );
        log.append(&Record::now(Via::Gateway, taken, None)).unwrap();
    }

    #[test]
    fn codex_finds_the_logged_reason_by_tool_use_id() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("reasons.jsonl");
        logged(
            &path,
            "exec_command",
            Some("call_1"),
            "Check the tree",
            json!({"cmd": "ls"}),
        );
        let input = json!({"session_id": "s", "turn_id": "t", "transcript_path": null,
            "cwd": "/w", "hook_event_name": "PreToolUse", "model": "gpt-5.5",
            "permission_mode": "bypassPermissions", "tool_name": "exec_command",
            "tool_input": {"cmd": "ls"}, "tool_use_id": "call_1"});
        assert_eq!(
            run_as(Agent::Codex, &input.to_string(), Some(&path)),
            "{\"systemMessage\":\"model's reason for exec_command: Check the tree\"}\n"
        );
    }

    fn before_tool(tool_input: Value) -> String {
        json!({"session_id": "s", "transcript_path": "/t.json", "cwd": "/w",
            "hook_event_name": "BeforeTool", "timestamp": "2026-12-01T00:00:00.000Z",
            "tool_name": "run_shell_command", "tool_input": tool_input})
        .to_string()
    }

    #[test]
    fn gemini_cli_shows_the_reason_in_the_input_else_the_one_logged_for_what_the_call_touched() {
        let with_reason = before_tool(json!({"command": "ls", "reason": "Look first"}));
        assert_eq!(
            run_as(Agent::GeminiCli, &with_reason, None),
            "{\"systemMessage\":\"model's reason for run_shell_command: Look first\"}\n"
        );
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("reasons.jsonl");
        logged(
            &path,
            "run_shell_command",
            None,
            "Old",
            json!({"command": "ls"}),
        );
        logged(
            &path,
            "run_shell_command",
            None,
            "Other",
            json!({"command": "pwd"}),
        );
        logged(
            &path,
            "read_file",
            None,
            "Other tool",
            json!({"command": "ls"}),
        );
        logged(
            &path,
            "run_shell_command",
            None,
            "Newest",
            json!({"command": "ls"}),
        );
        logged(
            &path,
            "run_shell_command",
            None,
            "Not this",
            json!({"command": "ls -la"}),
        );
        let stripped = before_tool(json!({"command": "ls", "description": "List"}));
        assert_eq!(
            run_as(Agent::GeminiCli, &stripped, Some(&path)),
            "{\"systemMessage\":\"model's reason for run_shell_command: Newest\"}\n"
        );
        let unknown = before_tool(json!({"command": "whoami"}));
        assert_eq!(run_as(Agent::GeminiCli, &unknown, Some(&path)), "");
    }

    #[test]
    fn another_agents_event_is_not_answered() {
        let claude = pre_tool_use(json!({"command": "ls", "reason": "r"}), "toolu_1");
        assert_eq!(run_as(Agent::GeminiCli, &claude, None), "");
        let gemini = before_tool(json!({"command": "ls", "reason": "r"}));
        assert_eq!(run_as(Agent::ClaudeCode, &gemini, None), "");
        assert_eq!(run_as(Agent::Codex, &gemini, None), "");
    }

    #[test]
    fn a_reason_cannot_drive_the_terminal_the_agent_shows_it_on() {
        let hostile = "fine\u{1b}[2J\u{1b}]8;;https://x\u{7}click\rok\u{202e}txt";
        for agent in [Agent::ClaudeCode, Agent::Codex, Agent::GeminiCli] {
            let input = match agent {
                Agent::GeminiCli => before_tool(json!({"command": "ls", "reason": hostile})),
                _ => pre_tool_use(json!({"command": "ls", "reason": hostile}), "toolu_1"),
            };
            let out = run_as(agent, &input, None);
            let message: Value = serde_json::from_str(&out).unwrap();
            let message = message["systemMessage"].as_str().unwrap();
            assert!(
                message.ends_with("fine␛[2J␛]8;;https://x␇click␍ok<U+202E>txt"),
                "{message}"
            );
            assert!(!message.chars().any(char::is_control), "{message}");
        }
    }
}
