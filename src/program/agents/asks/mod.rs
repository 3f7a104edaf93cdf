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
//! hook's parent or an ancestor. That is here; what each agent decides from it is in its own
//! file of [`crate::program::agents`].

pub mod shell;

use std::collections::HashMap;
use std::path::{Path, PathBuf};

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
    fn a_program_is_recognised_by_its_file_name() {
        let line = |words: &[&str]| words.iter().map(|w| w.to_string()).collect::<Vec<_>>();
        assert!(runs_program(&line(&["/usr/bin/claude", "-p"]), "claude"));
        assert!(runs_program(&line(&["node", "/x/bin/claude.js"]), "claude"));
        assert!(!runs_program(&line(&["bash", "-c", "claude"]), "claude"));
    }
}
