//! When GitHub Copilot CLI would ask the person before a `preToolUse` call runs, as read from
//! its own code (1.0.102) and measured in a terminal.
//!
//! Its hook event carries neither a permission mode nor a session id, so what it would decide is
//! read from its command line and environment:
//! - **Attended and interactive**: not `-p`/`--prompt` (there an ask is a denial, "unable to
//!   ask user for confirmation"), not in CI, its process on a terminal.
//! - **Nothing approved beforehand**: `--allow-all-tools`, `--allow-all`/`--yolo`,
//!   `--autopilot`, `COPILOT_ALLOW_ALL`, any `--allow-tool` or `--deny-tool` rule: the hook does not
//!   repeat Copilot CLI's rule matching, and no ask is the safe side.
//! - **Its tools**: it asks before a shell command that is not read-only (the same superset of
//!   read-only programs as Claude Code's); reads, edits, URL fetches, MCP tools and its own tools
//!   are left to its own dialog.

use serde_json::Value;

use super::{runs_program, Surroundings};

/// Whether Copilot CLI's command line is this one: `copilot`, or node running its package.
pub fn is_copilot_cli(line: &[String]) -> bool {
    runs_program(line, "copilot")
        || line
            .iter()
            .take(2)
            .any(|word| word.contains("@github/copilot/") || word.contains("copilot-cache/"))
}

/// Whether Copilot CLI would show the person its dialog for this `preToolUse` event.
pub fn would_ask(event: &Value, around: &Surroundings) -> bool {
    attended(around) && nothing_approved_beforehand(around) && tool_asks(event)
}

fn attended(around: &Surroundings) -> bool {
    around.agent_command_line.is_some()
        && around.agent_on_terminal
        && !around.in_ci()
        && !around.has_flag(&["-p", "--prompt"])
}

fn nothing_approved_beforehand(around: &Surroundings) -> bool {
    around.var("COPILOT_ALLOW_ALL").is_none()
        && !around.has_flag(&[
            "--allow-all-tools",
            "--allow-all",
            "--yolo",
            "--autopilot",
            "--allow-tool",
            "--deny-tool",
        ])
}

fn tool_asks(event: &Value) -> bool {
    let Some(tool) = event.get("toolName").and_then(Value::as_str) else {
        return false;
    };
    match tool {
        "bash" | "powershell" => {
            let arguments = match event.get("toolArgs") {
                Some(Value::String(text)) => serde_json::from_str(text).ok(),
                arguments => arguments.cloned(),
            };
            let command = arguments
                .as_ref()
                .and_then(|arguments| arguments.get("command"))
                .and_then(Value::as_str);
            command.is_some_and(|command| !super::shell::only_reads(command, &[]))
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn interactive(line: &[&str]) -> Surroundings {
        Surroundings {
            agent_command_line: Some(line.iter().map(|word| word.to_string()).collect()),
            agent_on_terminal: true,
            ..Surroundings::default()
        }
    }

    fn shell(command: &str) -> Value {
        json!({"timestamp": 1, "cwd": "/w", "toolName": "bash",
            "toolArgs": json!({"command": command, "description": "d"}).to_string()})
    }

    #[test]
    fn a_shell_command_in_an_interactive_session_is_asked_for() {
        assert!(would_ask(
            &shell("rm -rf build"),
            &interactive(&["copilot"])
        ));
        let object_args = json!({"toolName": "bash", "toolArgs": {"command": "make"}});
        assert!(would_ask(&object_args, &interactive(&["copilot"])));
    }

    #[test]
    fn a_headless_or_unattended_run_is_never_asked() {
        let call = shell("rm -rf build");
        assert!(!would_ask(&call, &interactive(&["copilot", "-p", "go"])));
        assert!(!would_ask(&call, &interactive(&["copilot", "--prompt=go"])));
        let mut no_terminal = interactive(&["copilot"]);
        no_terminal.agent_on_terminal = false;
        assert!(!would_ask(&call, &no_terminal));
        let mut ci = interactive(&["copilot"]);
        ci.env.insert("CI".into(), "true".into());
        assert!(!would_ask(&call, &ci));
        assert!(!would_ask(&call, &Surroundings::default()));
    }

    #[test]
    fn what_was_approved_beforehand_is_never_asked() {
        let call = shell("rm -rf build");
        for flag in [
            "--allow-all-tools",
            "--allow-all",
            "--yolo",
            "--autopilot",
            "--allow-tool=shell(rm)",
            "--deny-tool=shell(git push)",
        ] {
            assert!(
                !would_ask(&call, &interactive(&["copilot", flag])),
                "{flag}"
            );
        }
        let mut all = interactive(&["copilot"]);
        all.env.insert("COPILOT_ALLOW_ALL".into(), "true".into());
        assert!(!would_ask(&call, &all));
    }

    #[test]
    fn read_only_commands_and_other_tools_are_left_to_copilot() {
        let around = interactive(&["copilot"]);
        assert!(!would_ask(&shell("ls -la && git status"), &around));
        for tool in [
            "view",
            "edit",
            "create",
            "glob",
            "grep",
            "web_fetch",
            "report_intent",
        ] {
            let call = json!({"toolName": tool, "toolArgs": "{\"path\": \"/w/a\"}"});
            assert!(!would_ask(&call, &around), "{tool}");
        }
        assert!(!would_ask(
            &json!({"toolName": "bash", "toolArgs": "not json"}),
            &around
        ));
    }

    #[test]
    fn copilot_cli_is_recognised_by_its_command_line() {
        let line = |words: &[&str]| words.iter().map(|w| w.to_string()).collect::<Vec<_>>();
        assert!(is_copilot_cli(&line(&["/x/.bin/copilot"])));
        assert!(is_copilot_cli(&line(&[
            "node",
            "/x/node_modules/@github/copilot/index.js"
        ])));
        assert!(!is_copilot_cli(&line(&[
            "bash",
            "-c",
            "reasons hook copilot-cli"
        ])));
    }
}
