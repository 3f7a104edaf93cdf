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
//! - Gemini CLI sends a `BeforeTool` event with `tool_name` and `tool_input` but no id, and
//!   Copilot CLI a `preToolUse` one with `toolName` and `toolArgs` (a JSON text): a reason not in
//!   the input is found in the log by the tool and what the call touched.
//! - With `--gateway URL`, a call with an id is first asked of a team's gateway
//!   ([`crate::program::hook::ask_gateway`]), then looked for in the local log.
//!
//! **In the prompt.** The person decides at the agent's approval dialog. Claude Code and Copilot
//! CLI show a hook's text inside it only when the hook answers "ask", so there the hook answers
//! with an ask carrying the reason, but only where the agent would have asked the person anyway
//! ([`agent_asks`]): an ask anywhere else would add a dialog, or deny a headless call. Nor where
//! Claude Code's dialog shows the reason already: a reason still in the call's input (an MCP tool
//! behind `reasons proxy`) is among the arguments its MCP dialog lists. Elsewhere,
//! and with `--after`, Claude Code gets the message beside the call as before (Copilot CLI has no
//! such message: nothing).
//!
//! An ask never depends on what the reason says, only on there being one, and never changes the
//! call. And the hook never gets in the way of the agent: whatever goes wrong, it prints nothing
//! and exits 0.

pub mod ask_gateway;

pub mod install;

use std::io::{Read, Write};
use std::path::Path;

use reasons::layer::REASON_PARAM;
use reasons::reasons_log;
use reasons::visible::visible;
use serde_json::{json, Value};

use crate::program::agents::asks::Surroundings;
use crate::program::agents::{Agent, FindBy, Hook, Placement};

/// More than any hook input an agent sends: a larger one is not read.
const MAX_INPUT: u64 = 64 << 20;

/// What the hook answers.
#[derive(Debug, PartialEq, Eq)]
enum Answer {
    /// The reason shown beside the call.
    Beside(String),
    /// The agent's ask, with the reason inside its dialog.
    Ask(String),
}

/// Reads the agent's hook input on `input` and writes its answer, if any. `surroundings` tells
/// where the hook runs; it is asked only when an ask is possible.
pub fn run(
    agent: &Agent,
    placement: Placement,
    input: impl Read,
    mut output: impl Write,
    found_in: Where,
    surroundings: impl FnOnce() -> Surroundings,
) {
    let Some(hook) = &agent.hook else {
        return;
    };
    let Some(answer) = answer(hook, placement, input, found_in, surroundings) else {
        return;
    };
    let answer = match (answer, &hook.ask) {
        (Answer::Ask(reason), Some(ask)) => (ask.answer)(reason),
        (Answer::Ask(message) | Answer::Beside(message), _) if hook.message_beside => {
            json!({ "systemMessage": message })
        }
        _ => return,
    };
    let _ = writeln!(output, "{answer}");
    let _ = output.flush();
}

/// The answer, when the call has a reason to show.
fn answer(
    hook: &Hook,
    placement: Placement,
    input: impl Read,
    found_in: Where,
    surroundings: impl FnOnce() -> Surroundings,
) -> Option<Answer> {
    let mut text = Vec::new();
    input.take(MAX_INPUT).read_to_end(&mut text).ok()?;
    let event: Value = serde_json::from_slice(&text).ok()?;
    let Found {
        tool,
        reason,
        in_arguments,
    } = reason(hook, &event, found_in)?;
    let reason = match reason {
        Value::String(text) if !text.trim().is_empty() => text,
        Value::String(_) | Value::Null => return None,
        other => other.to_string(),
    };
    // The reason is the model's claim about its own call, and is shown as one; neither it nor
    // the tool's name can drive the terminal the agent shows it on.
    let reason = visible(reason.trim());
    let asks = placement == Placement::InPrompt
        && hook.ask.as_ref().is_some_and(|ask| {
            // A reason still in the call's input is in a dialog that lists the arguments
            // already: an ask would show it a second time.
            !(in_arguments && ask.dialog_lists_arguments)
                && (ask.would_ask)(&event, &surroundings())
        });
    Some(if asks {
        Answer::Ask(format!("Why (the model's claim): {reason}"))
    } else {
        Answer::Beside(format!("model's reason for {}: {reason}", visible(&tool)))
    })
}

/// Where a reason the call no longer carries is looked for.
#[derive(Debug, Clone, Copy, Default)]
pub struct Where<'a> {
    /// The gateway asked first by call id (`--gateway`), when one was named.
    pub gateway: Option<&'a str>,
    /// The reasons log.
    pub log: Option<&'a Path>,
}

/// A call's reason, as the hook found it.
struct Found {
    tool: String,
    reason: Value,
    /// Whether the reason is in the call's own input (an MCP tool behind `reasons proxy`, an
    /// agent behind `reasons gateway --no-strip`), where a dialog that lists the arguments
    /// shows it; else it came from the gateway or the log.
    in_arguments: bool,
}

/// The call's tool and its reason: in its input, else asked of the gateway by call id, else in
/// the log.
fn reason(hook: &Hook, event: &Value, found_in: Where) -> Option<Found> {
    let log = found_in.log;
    // Another agent's event (or another event of this one) is not answered.
    let call = (hook.call)(event)?;
    let tool = call.tool.to_owned();
    if let Some(reason) = call.arguments.get(REASON_PARAM) {
        return Some(Found {
            tool,
            reason: reason.clone(),
            in_arguments: true,
        });
    }
    let reason = match hook.lookup {
        // No call id: the reason logged last for the same tool and what the call touched.
        FindBy::Touched => {
            if call.arguments.is_null() {
                return None;
            }
            let touched = reasons::touched::summary(&call.arguments);
            reasons_log::find_touched_from_end(log?, &tool, &touched)
                .ok()??
                .reason
        }
        FindBy::CallId => crate::program::hook::ask_gateway::reason_by_call_id(
            found_in.gateway,
            log,
            call.call_id?,
        )?,
    };
    Some(Found {
        tool,
        reason,
        in_arguments: false,
    })
}

#[cfg(test)]
mod tests {
    use reasons::layer::TakenReason;
    use reasons::reasons_log::{Record, Via, Writer};

    use super::*;
    use reasons::record::Format;

    use crate::program::agents::{claude_code, codex, copilot_cli, gemini_cli};

    /// The answer where nobody would be asked (no agent process found).
    fn run_as(agent: &Agent, input: &str, log: Option<&Path>) -> String {
        answered(
            agent,
            Placement::InPrompt,
            input,
            log,
            Surroundings::default(),
        )
    }

    fn answered(
        agent: &Agent,
        placement: Placement,
        input: &str,
        log: Option<&Path>,
        around: Surroundings,
    ) -> String {
        let mut out = Vec::new();
        let found_in = Where { gateway: None, log };
        super::run(
            agent,
            placement,
            input.as_bytes(),
            &mut out,
            found_in,
            || around,
        );
        String::from_utf8(out).unwrap()
    }

    /// An attended interactive terminal session of the agent, with no settings.
    fn attended(dir: &Path, agent: &str) -> Surroundings {
        let env = [
            ("CLAUDE_CODE_SESSION_ATTENDED", "1"),
            ("CLAUDE_CODE_ENTRYPOINT", "cli"),
            ("HOME", &dir.to_string_lossy()),
        ]
        .iter()
        .map(|(name, value)| (name.to_string(), value.to_string()))
        .collect();
        Surroundings {
            env,
            agent_command_line: Some(vec![agent.to_owned()]),
            agent_on_terminal: true,
            etc: None,
        }
    }

    fn default_mode(input: Value, id: &str) -> String {
        let mut event: Value = serde_json::from_str(&pre_tool_use(input, id)).unwrap();
        event["permission_mode"] = json!("default");
        event["cwd"] = json!("/nonexistent/work");
        event.to_string()
    }

    fn run(input: &str, log: Option<&Path>) -> String {
        run_as(&claude_code::AGENT, input, log)
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
                json!({"command": "ls"}),
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
            arguments,
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
            run_as(&codex::AGENT, &input.to_string(), Some(&path)),
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
            run_as(&gemini_cli::AGENT, &with_reason, None),
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
            run_as(&gemini_cli::AGENT, &stripped, Some(&path)),
            "{\"systemMessage\":\"model's reason for run_shell_command: Newest\"}\n"
        );
        let unknown = before_tool(json!({"command": "whoami"}));
        assert_eq!(run_as(&gemini_cli::AGENT, &unknown, Some(&path)), "");
    }

    #[test]
    fn another_agents_event_is_not_answered() {
        let claude = pre_tool_use(json!({"command": "ls", "reason": "r"}), "toolu_1");
        assert_eq!(run_as(&gemini_cli::AGENT, &claude, None), "");
        let gemini = before_tool(json!({"command": "ls", "reason": "r"}));
        assert_eq!(run_as(&claude_code::AGENT, &gemini, None), "");
        assert_eq!(run_as(&codex::AGENT, &gemini, None), "");
    }

    /// A reasons log in `dir` holding the reason `Clean` for the call `t`, a `Bash` command.
    fn logged_clean(dir: &Path) -> std::path::PathBuf {
        let path = dir.join("reasons.jsonl");
        logged(
            &path,
            "Bash",
            Some("t"),
            "Clean",
            json!({"command": "rm -rf build"}),
        );
        path
    }

    #[test]
    fn where_claude_code_would_ask_the_reason_is_in_its_dialog() {
        let dir = tempfile::tempdir().unwrap();
        let log = logged_clean(dir.path());
        let input = default_mode(json!({"command": "rm -rf build"}), "t");
        let out = answered(
            &claude_code::AGENT,
            Placement::InPrompt,
            &input,
            Some(&log),
            attended(dir.path(), "claude"),
        );
        assert_eq!(
            serde_json::from_str::<Value>(&out).unwrap(),
            json!({"hookSpecificOutput": {"hookEventName": "PreToolUse",
                "permissionDecision": "ask",
                "permissionDecisionReason": "Why (the model's claim): Clean"}})
        );
    }

    #[test]
    fn with_after_or_where_claude_code_would_not_ask_the_message_is_beside_the_call() {
        let dir = tempfile::tempdir().unwrap();
        let log = logged_clean(dir.path());
        let asked = default_mode(json!({"command": "rm -rf build"}), "t");
        let beside = "{\"systemMessage\":\"model's reason for Bash: Clean\"}\n";
        let after = answered(
            &claude_code::AGENT,
            Placement::After,
            &asked,
            Some(&log),
            attended(dir.path(), "claude"),
        );
        assert_eq!(after, beside);
        let read_only = default_mode(json!({"command": "ls", "reason": "Clean"}), "t");
        let out = answered(
            &claude_code::AGENT,
            Placement::InPrompt,
            &read_only,
            None,
            attended(dir.path(), "claude"),
        );
        assert_eq!(out, beside);
        assert_eq!(run(&asked, Some(&log)), beside);
    }

    #[test]
    fn a_reason_claude_code_s_dialog_lists_among_the_arguments_is_not_asked_with_again() {
        // An MCP tool behind `reasons proxy`: Claude Code would ask, and its dialog lists the
        // call's arguments, the reason among them.
        let dir = tempfile::tempdir().unwrap();
        let mut input: Value = serde_json::from_str(&default_mode(
            json!({"message": "hi", "reason": "Check the server answers"}),
            "t",
        ))
        .unwrap();
        input["tool_name"] = json!("mcp__everything__echo");
        let out = answered(
            &claude_code::AGENT,
            Placement::InPrompt,
            &input.to_string(),
            None,
            attended(dir.path(), "claude"),
        );
        assert_eq!(
            out,
            "{\"systemMessage\":\"model's reason for mcp__everything__echo: Check the server answers\"}\n"
        );
        // The same call with its reason in the log (stripped on the way) is asked for.
        let log = dir.path().join("reasons.jsonl");
        logged(
            &log,
            "mcp__everything__echo",
            Some("t"),
            "Check the server answers",
            json!({"message": "hi"}),
        );
        input["tool_input"] = json!({"message": "hi"});
        let out = answered(
            &claude_code::AGENT,
            Placement::InPrompt,
            &input.to_string(),
            Some(&log),
            attended(dir.path(), "claude"),
        );
        assert!(out.contains("\"permissionDecision\":\"ask\""), "{out}");
    }

    #[test]
    fn without_a_reason_there_is_no_ask() {
        let dir = tempfile::tempdir().unwrap();
        for input in [
            default_mode(json!({"command": "rm -rf build"}), "toolu_9"),
            default_mode(json!({"command": "rm -rf build", "reason": " "}), "toolu_9"),
        ] {
            let out = answered(
                &claude_code::AGENT,
                Placement::InPrompt,
                &input,
                Some(&dir.path().join("none.jsonl")),
                attended(dir.path(), "claude"),
            );
            assert_eq!(out, "", "{input}");
        }
    }

    #[test]
    fn the_surroundings_are_looked_at_only_for_an_ask() {
        let input = pre_tool_use(json!({"command": "ls"}), "toolu_9");
        let mut out = Vec::new();
        super::run(
            &claude_code::AGENT,
            Placement::InPrompt,
            input.as_bytes(),
            &mut out,
            Where::default(),
            || panic!("no reason: nothing to ask with"),
        );
        let gemini = before_tool(json!({"command": "ls", "reason": "r"}));
        super::run(
            &gemini_cli::AGENT,
            Placement::InPrompt,
            gemini.as_bytes(),
            &mut out,
            Where::default(),
            || panic!("Gemini CLI shows the message while it asks"),
        );
    }

    fn copilot_event(arguments: Value) -> String {
        json!({"sessionId": "s1", "timestamp": 1_764_000_000_000_u64, "cwd": "/w",
            "toolName": "bash", "toolArgs": arguments})
        .to_string()
    }

    /// A HOME whose Copilot CLI session `s1` has approved nothing beyond single calls.
    fn copilot_home() -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        let session = dir.path().join(".copilot/session-state/s1");
        std::fs::create_dir_all(&session).unwrap();
        std::fs::write(session.join("events.jsonl"), "").unwrap();
        dir
    }

    #[test]
    fn copilot_cli_asks_with_the_reason_in_its_own_schema() {
        let input = copilot_event(json!({"command": "rm -rf b", "reason": "Clean\u{1b}[2J"}));
        let home = copilot_home();
        let out = answered(
            &copilot_cli::AGENT,
            Placement::InPrompt,
            &input,
            None,
            attended(home.path(), "copilot"),
        );
        assert_eq!(
            serde_json::from_str::<Value>(&out).unwrap(),
            json!({"permissionDecision": "ask",
                "permissionDecisionReason": "Why (the model's claim): Clean␛[2J"})
        );
        // Where it would not ask, and with --after, Copilot CLI has no message to show.
        for (placement, around) in [
            (Placement::InPrompt, Surroundings::default()),
            (
                Placement::After,
                attended(Path::new("/nonexistent"), "copilot"),
            ),
        ] {
            assert_eq!(
                answered(&copilot_cli::AGENT, placement, &input, None, around),
                ""
            );
        }
    }

    #[test]
    fn copilot_cli_finds_a_stripped_reason_by_what_the_call_touched() {
        let dir = copilot_home();
        let path = dir.path().join("reasons.jsonl");
        logged(&path, "bash", None, "Rebuild", json!({"command": "make"}));
        let input = copilot_event(json!({"command": "make", "description": "Build"}));
        let out = answered(
            &copilot_cli::AGENT,
            Placement::InPrompt,
            &input,
            Some(&path),
            attended(dir.path(), "copilot"),
        );
        assert!(out.contains("Why (the model's claim): Rebuild"), "{out}");
        let claude = pre_tool_use(json!({"command": "make", "reason": "r"}), "toolu_1");
        assert_eq!(run_as(&copilot_cli::AGENT, &claude, None), "");
    }

    #[test]
    fn a_reason_cannot_drive_the_terminal_the_agent_shows_it_on() {
        let hostile = "fine\u{1b}[2J\u{1b}]8;;https://x\u{7}click\rok\u{202e}txt";
        for agent in [&claude_code::AGENT, &codex::AGENT, &gemini_cli::AGENT] {
            let input = match agent.format {
                Format::GeminiCli => before_tool(json!({"command": "ls", "reason": hostile})),
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
