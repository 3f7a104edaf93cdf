//! The hook as an agent's settings hold it: the command line `reasons hook AGENT …` that
//! `hook install` writes and `run` wires, and how a hook of ours is told among the person's, in
//! every shape the agents keep hooks in (a handler in a group, or a handler on its own).

use std::path::Path;

use anyhow::Context;
use serde_json::Value;

use crate::program::agents::asks::shell;

/// Where the hook shows the reason.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Placement {
    /// Inside the agent's approval dialog where the agent asks (Claude Code, Copilot CLI), else
    /// beside the call.
    InPrompt,
    /// Beside the call only (`--after`): Claude Code shows it once the call was answered.
    After,
}

/// A hook handler's command: `command`, or Copilot CLI's `bash` (or `powershell`).
pub fn handler_command(handler: &Value) -> Option<&str> {
    ["command", "bash", "powershell"]
        .iter()
        .find_map(|key| handler.get(key))
        .and_then(Value::as_str)
}

/// Whether a hook handler runs this program's hook for the agent `agent` (`…/reasons hook
/// AGENT …`), whatever path, log or options it names.
pub fn is_our_hook(handler: &Value, agent: &str) -> bool {
    let Some(command) = handler_command(handler) else {
        return false;
    };
    let words = shell::words(command);
    let program = words
        .first()
        .map(|word| Path::new(word).file_stem().unwrap_or_default());
    program.is_some_and(|name| name == "reasons")
        && words.get(1).map(String::as_str) == Some("hook")
        && words.get(2).map(String::as_str) == Some(agent)
}

/// The handlers of a list of hook entries, each either a group of them (`{"matcher": …,
/// "hooks": [handler, …]}`, Claude Code's shape, which Copilot CLI reads too) or a handler
/// itself (Copilot CLI's own shape), with the group's matcher (`None` for a handler on its own).
/// `Err` when the list is not one.
pub fn hook_handlers(entries: &Value) -> Result<Vec<(Option<&Value>, &Value)>, ()> {
    let mut handlers = Vec::new();
    for entry in entries.as_array().ok_or(())? {
        match entry.get("hooks") {
            Some(group) => {
                let matcher = entry.get("matcher");
                handlers.extend(group.as_array().ok_or(())?.iter().map(|h| (matcher, h)));
            }
            None => handlers.push((None, entry)),
        }
    }
    Ok(handlers)
}

/// The hook's command line: this binary by its absolute path, and the log, absolute too (the
/// agent runs the hook from wherever it works).
pub fn hook_command(
    agent: &str,
    reasons_log: Option<&Path>,
    placement: Placement,
    gateway: Option<&str>,
) -> anyhow::Result<String> {
    let binary = std::env::current_exe().context("cannot tell where this reasons binary is")?;
    let binary = std::fs::canonicalize(&binary).unwrap_or(binary);
    let mut command = format!("{} hook {agent}", shell_quote(&binary.to_string_lossy()));
    if let Some(log) = reasons_log {
        let log = std::path::absolute(log)
            .with_context(|| format!("{}: cannot make it an absolute path", log.display()))?;
        command.push_str(" --reasons-log ");
        command.push_str(&shell_quote(&log.to_string_lossy()));
    }
    if placement == Placement::After {
        command.push_str(" --after");
    }
    if let Some(gateway) = gateway {
        command.push_str(" --gateway ");
        command.push_str(&shell_quote(gateway));
    }
    Ok(command)
}

/// A word as a POSIX shell reads it back: as it is when it holds nothing the shell would
/// interpret, else in single quotes.
pub fn shell_quote(word: &str) -> String {
    let plain = !word.is_empty()
        && word
            .bytes()
            .all(|byte| byte.is_ascii_alphanumeric() || b"/._-+,:=@%".contains(&byte));
    if plain {
        word.to_owned()
    } else {
        format!("'{}'", word.replace('\'', r"'\''"))
    }
}

/// The commands of our hooks for `agent` among an event's entries.
pub fn our_commands<'a>(entries: &'a [Value], agent: &str) -> Vec<&'a str> {
    entries
        .iter()
        .flat_map(|entry| match entry.get("hooks").and_then(Value::as_array) {
            Some(handlers) => handlers.iter().collect(),
            None => vec![entry],
        })
        .filter(|handler| is_our_hook(handler, agent))
        .filter_map(handler_command)
        .collect()
}

/// Takes our hooks for `agent` out of an event's entries: a handler on its own, or one in a
/// group (and the group, when that leaves it empty).
pub fn remove_ours(entries: &mut Vec<Value>, agent: &str) {
    entries.retain_mut(|entry| {
        let Some(handlers) = entry.get_mut("hooks").and_then(Value::as_array_mut) else {
            return !is_our_hook(entry, agent);
        };
        let before = handlers.len();
        handlers.retain(|handler| !is_our_hook(handler, agent));
        !(handlers.is_empty() && before > 0)
    });
}

/// Whether settings already run `reasons hook AGENT` for any event (installed by `reasons hook
/// install`): a run then wires no second one.
pub fn runs_our_hook(settings: &Value, agent: &str) -> bool {
    settings["hooks"]
        .as_object()
        .into_iter()
        .flat_map(|events| events.values())
        .filter_map(|entries| hook_handlers(entries).ok())
        .flatten()
        .any(|(_, handler)| is_our_hook(handler, agent))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn our_hook_is_recognised_by_its_command_for_that_agent_only() {
        use serde_json::json;
        let handler = |command: &str| json!({"type": "command", "command": command});
        assert!(is_our_hook(
            &handler("/usr/bin/reasons hook codex"),
            "codex"
        ));
        assert!(is_our_hook(
            &handler("'/a b/reasons' hook codex --reasons-log /l"),
            "codex"
        ));
        assert!(is_our_hook(
            &json!({"type": "command", "bash": "/x/reasons hook copilot-cli --after"}),
            "copilot-cli"
        ));
        assert!(!is_our_hook(
            &handler("/usr/bin/reasons hook claude-code"),
            "codex"
        ));
        assert!(!is_our_hook(&handler("/usr/bin/other hook codex"), "codex"));
        assert!(!is_our_hook(&json!({"type": "prompt"}), "codex"));
    }

    #[test]
    fn hook_entries_are_read_in_both_shapes() {
        use serde_json::json;
        let entries = json!([
            {"matcher": "Bash", "hooks": [{"command": "a"}, {"command": "b"}]},
            {"type": "command", "bash": "c"},
        ]);
        let handlers = hook_handlers(&entries).unwrap();
        let read: Vec<_> = handlers
            .iter()
            .map(|(matcher, handler)| (matcher.cloned(), handler_command(handler).unwrap()))
            .collect();
        assert_eq!(
            read,
            [
                (Some(json!("Bash")), "a"),
                (Some(json!("Bash")), "b"),
                (None, "c")
            ]
        );
        assert!(hook_handlers(&json!({"a": 1})).is_err());
        assert!(hook_handlers(&json!([{"hooks": 5}])).is_err());
    }

    #[test]
    fn a_hook_already_installed_is_seen() {
        let settings = json!({"hooks": {"PreToolUse": [{"matcher": "*", "hooks": [
            {"type": "command", "command": "/usr/bin/reasons hook claude-code"}]}]}});
        assert!(runs_our_hook(&settings, "claude-code"));
        assert!(!runs_our_hook(&settings, "gemini-cli"));
        assert!(!runs_our_hook(&json!({"hooks": "no"}), "claude-code"));
    }

    #[test]
    fn copilot_cli_s_handler_is_recognised_by_its_bash_command() {
        let handler = json!({"type": "command", "bash": "/usr/bin/reasons hook copilot-cli"});
        let mut entries = vec![handler, json!({"type": "command", "bash": "./other.sh"})];
        assert_eq!(
            our_commands(&entries, "copilot-cli"),
            ["/usr/bin/reasons hook copilot-cli"]
        );
        assert!(our_commands(&entries, "claude-code").is_empty());
        remove_ours(&mut entries, "copilot-cli");
        assert_eq!(entries, [json!({"type": "command", "bash": "./other.sh"})]);
    }

    #[test]
    fn a_quoted_path_reads_back_as_the_same_word() {
        for word in ["/usr/bin/reasons", "/home/a b/reasons", "/it's/reasons", ""] {
            let line = format!("{} hook codex", shell_quote(word));
            assert_eq!(shell::words(&line), [word, "hook", "codex"]);
        }
        assert_eq!(
            shell::words(r#""/a b/reasons" hook x\ y"#),
            ["/a b/reasons", "hook", "x y"]
        );
    }
}
