//! Whether the agent would ask the person before it runs a call.
//!
//! Claude Code and Copilot CLI show a hook's text inside their approval dialog only when the hook
//! answers "ask", and an ask is a permission decision: given where the agent would not have asked,
//! it adds a dialog; given in a headless run, it denies the call. So the hook asks only where the
//! agent would have asked the person anyway, in a session a person is attending, and nowhere it
//! cannot tell: every rule here errs towards no ask, where the agent's own dialog (and the
//! message beside the call) is what the person gets, as without the hook.
//!
//! What a hook can see of that: the event's own fields, its environment, the agent's settings
//! files, and the agent's process (its command line, whether it has a terminal), which is the
//! hook's parent or an ancestor.

pub mod claude_code;
pub mod copilot_cli;
pub mod shell;

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use serde_json::Value;

/// What a hook knows about the session it runs in, apart from the event.
#[derive(Debug, Clone, Default)]
pub struct Surroundings {
    /// The hook's environment, as the agent gave it.
    pub env: HashMap<String, String>,
    /// The agent's command line, when its process was found among the hook's ancestors.
    pub agent_command_line: Option<Vec<String>>,
    /// Whether the agent's process reads from or writes to a terminal.
    pub agent_on_terminal: bool,
    /// The machine's configuration folder, `/etc`, where the agents' managed settings are
    /// (Claude Code's `claude-code/`, Copilot CLI's `github-copilot/`).
    pub etc: Option<PathBuf>,
}

impl Surroundings {
    /// This process's surroundings, the agent found among its ancestors by `is_agent` (its
    /// command line).
    pub fn of_this_process(is_agent: fn(&[String]) -> bool) -> Surroundings {
        let env = std::env::vars().collect();
        let agent = find_ancestor(is_agent);
        Surroundings {
            env,
            agent_command_line: agent.as_ref().map(|(_, line)| line.clone()),
            agent_on_terminal: agent.is_some_and(|(pid, _)| on_terminal(pid)),
            etc: Some(PathBuf::from("/etc")),
        }
    }

    /// An environment variable, when set and not empty.
    pub fn var(&self, name: &str) -> Option<&str> {
        self.env
            .get(name)
            .map(String::as_str)
            .filter(|value| !value.is_empty())
    }

    /// Whether a continuous-integration runner set `CI`: nobody is there to answer.
    pub fn in_ci(&self) -> bool {
        self.var("CI")
            .is_some_and(|value| !matches!(value.to_ascii_lowercase().as_str(), "0" | "false"))
    }

    /// The HOME folder.
    pub fn home(&self) -> Option<PathBuf> {
        self.var("HOME").map(PathBuf::from)
    }

    /// The values of a command-line option of the agent (`--name value`, `--name=value`, and
    /// for a `variadic` option every word after it up to the next option).
    pub fn option_values(&self, names: &[&str], variadic: bool) -> Vec<String> {
        let Some(line) = &self.agent_command_line else {
            return Vec::new();
        };
        let mut values = Vec::new();
        let mut words = line.iter().skip(1).peekable();
        while let Some(word) = words.next() {
            if let Some((name, value)) = word.split_once('=') {
                if names.contains(&name) {
                    values.push(value.to_owned());
                }
                continue;
            }
            if !names.contains(&word.as_str()) {
                continue;
            }
            while let Some(value) = words.next_if(|value| !value.starts_with('-')) {
                values.push(value.clone());
                if !variadic {
                    break;
                }
            }
        }
        values
    }

    /// Whether the agent was started with one of these flags.
    pub fn has_flag(&self, names: &[&str]) -> bool {
        self.agent_command_line.as_ref().is_some_and(|line| {
            line.iter().skip(1).any(|word| {
                let name = word.split_once('=').map_or(word.as_str(), |(name, _)| name);
                names.contains(&name)
            })
        })
    }
}

/// How many ancestors are looked at: the agent runs its hooks through a shell or two.
const MAX_ANCESTORS: usize = 8;

/// The first ancestor whose command line `is_agent`, with that command line.
fn find_ancestor(is_agent: fn(&[String]) -> bool) -> Option<(u32, Vec<String>)> {
    let mut pid = std::os::unix::process::parent_id();
    for _ in 0..MAX_ANCESTORS {
        if pid <= 1 {
            return None;
        }
        let line = command_line(pid)?;
        if is_agent(&line) {
            return Some((pid, line));
        }
        pid = parent_of(pid)?;
    }
    None
}

/// A process's command line, from `/proc`.
fn command_line(pid: u32) -> Option<Vec<String>> {
    let bytes = std::fs::read(format!("/proc/{pid}/cmdline")).ok()?;
    Some(
        bytes
            .split(|&byte| byte == 0)
            .filter(|word| !word.is_empty())
            .map(|word| String::from_utf8_lossy(word).into_owned())
            .collect(),
    )
}

/// A process's parent, from `/proc/PID/stat` (the field after the command's name, which may hold
/// spaces and parentheses itself).
fn parent_of(pid: u32) -> Option<u32> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let (_, after_name) = stat.rsplit_once(')')?;
    after_name.split_whitespace().nth(1)?.parse().ok()
}

/// Whether a process's standard input or output is a terminal.
fn on_terminal(pid: u32) -> bool {
    [0, 1].iter().any(|fd| {
        std::fs::read_link(format!("/proc/{pid}/fd/{fd}")).is_ok_and(|target| {
            let target = target.to_string_lossy();
            target.starts_with("/dev/pts/") || target.starts_with("/dev/tty")
        })
    })
}

/// Whether the program a command line runs (or the script its interpreter runs) is named `name`.
pub fn runs_program(line: &[String], name: &str) -> bool {
    line.iter().take(2).any(|word| {
        Path::new(word)
            .file_name()
            .is_some_and(|file| file == name || file.to_string_lossy() == format!("{name}.js"))
    })
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

/// Reads a JSON settings file: `Ok(None)` when it does not exist, an error when it exists but
/// cannot be read as a JSON object (then the hook cannot tell what the agent decides).
pub fn read_json(path: &Path) -> Result<Option<Value>, ()> {
    match std::fs::read(path) {
        Ok(bytes) if bytes.iter().all(u8::is_ascii_whitespace) => Ok(None),
        Ok(bytes) => match serde_json::from_slice::<Value>(&bytes) {
            Ok(value) if value.is_object() => Ok(Some(value)),
            _ => Err(()),
        },
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(_) => Err(()),
    }
}

/// Reads a JSON settings file that may hold `//` and `/* */` comments (Copilot CLI writes its
/// `config.json` with a comment on top), as [`read_json`] does.
pub fn read_json_with_comments(path: &Path) -> Result<Option<Value>, ()> {
    match std::fs::read_to_string(path) {
        Ok(text) if text.trim().is_empty() => Ok(None),
        Ok(text) => match serde_json::from_str::<Value>(&without_comments(&text)) {
            Ok(value) if value.is_object() => Ok(Some(value)),
            _ => Err(()),
        },
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(_) => Err(()),
    }
}

/// JSON text with its comments blanked out, strings left as they are.
/// The `*.json` files of a folder, in name order.
pub fn json_files(folder: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(folder)
        .into_iter()
        .flatten()
        .filter_map(Result::ok)
        .map(|entry| entry.path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "json"))
        .collect();
    files.sort();
    files
}

fn without_comments(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    let mut in_string = false;
    while let Some(c) = chars.next() {
        if in_string {
            out.push(c);
            match c {
                '\\' => out.extend(chars.next()),
                '"' => in_string = false,
                _ => {}
            }
            continue;
        }
        match (c, chars.peek()) {
            ('"', _) => {
                in_string = true;
                out.push(c);
            }
            ('/', Some('/')) => {
                for c in chars.by_ref() {
                    if c == '\n' {
                        out.push('\n');
                        break;
                    }
                }
            }
            ('/', Some('*')) => {
                chars.next();
                let mut last = ' ';
                for c in chars.by_ref() {
                    if last == '*' && c == '/' {
                        break;
                    }
                    last = c;
                }
                out.push(' ');
            }
            _ => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn with_line(line: &[&str]) -> Surroundings {
        Surroundings {
            agent_command_line: Some(line.iter().map(|word| word.to_string()).collect()),
            ..Surroundings::default()
        }
    }

    #[test]
    fn an_option_s_values_are_read_in_every_spelling() {
        let around = with_line(&[
            "claude",
            "--allowedTools",
            "Bash(ls:*)",
            "Edit",
            "--model",
            "x",
            "--allowed-tools=Read",
            "-p",
        ]);
        assert_eq!(
            around.option_values(&["--allowedTools", "--allowed-tools"], true),
            ["Bash(ls:*)", "Edit", "Read"]
        );
        assert_eq!(around.option_values(&["--model"], false), ["x"]);
        assert!(around.has_flag(&["-p", "--print"]));
        assert!(!around.has_flag(&["--print"]));
        assert!(Surroundings::default()
            .option_values(&["--model"], false)
            .is_empty());
    }

    #[test]
    fn ci_is_any_value_but_false() {
        let mut around = Surroundings::default();
        assert!(!around.in_ci());
        for (value, ci) in [("true", true), ("1", true), ("false", false), ("0", false)] {
            around.env.insert("CI".into(), value.into());
            assert_eq!(around.in_ci(), ci, "{value}");
        }
    }

    #[test]
    fn this_process_s_ancestors_are_walked() {
        // The test harness's own parent is some process: found by a predicate that takes any.
        let found = find_ancestor(|_| true);
        assert!(found.is_some_and(|(pid, line)| pid > 1 && !line.is_empty()));
        assert!(find_ancestor(|_| false).is_none());
    }

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
    fn comments_are_left_out_of_json_but_not_out_of_its_strings() {
        let text =
            "// managed automatically\n{\"a\": \"x // y /* z */\", /* b */ \"c\": [1, 2] // end\n}";
        let value: Value = serde_json::from_str(&without_comments(text)).unwrap();
        assert_eq!(
            value,
            serde_json::json!({"a": "x // y /* z */", "c": [1, 2]})
        );
        let escaped = r#"{"a": "q\"//"}"#;
        assert_eq!(without_comments(escaped), escaped);
    }

    #[test]
    fn a_program_is_recognised_by_its_file_name() {
        let line = |words: &[&str]| words.iter().map(|w| w.to_string()).collect::<Vec<_>>();
        assert!(runs_program(&line(&["/usr/bin/claude", "-p"]), "claude"));
        assert!(runs_program(&line(&["node", "/x/bin/claude.js"]), "claude"));
        assert!(!runs_program(&line(&["bash", "-c", "claude"]), "claude"));
    }
}
