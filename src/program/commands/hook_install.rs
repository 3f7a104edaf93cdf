//! `reasons hook install AGENT` and `reasons hook uninstall AGENT`: the hook written into (or
//! taken out of) the agent's user settings, so that nobody edits three JSON files three ways.
//!
//! Claude Code, Codex and Gemini CLI keep hooks the same way: `hooks.<event>` is a list of
//! groups, each with a list of `hooks` handlers `{"type": "command", "command": …}`. Copilot CLI
//! reads every `*.json` file of its user hooks folder, each `{"version": 1, "hooks": {"preToolUse":
//! [handler, …]}}` with handlers `{"type": "command", "bash": …}` straight in the event's list; its
//! hook goes into a file of its own there, `reasons.json`. The settings are read, the
//! hook is merged in (everything else kept, keys in their order), and the file is replaced in one
//! rename, so an agent starting meanwhile reads either the old settings or the new ones. A hook
//! of ours is recognised by its command (`…/reasons hook AGENT …`), whatever path or log it
//! names: installing again replaces it, installing the same twice changes nothing.

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::{bail, Context};
use serde_json::{json, Map, Value};

use super::hook::{Agent, Placement};
use crate::program::agent_asks::{self, handler_command};
use crate::program::agent_homes;
use crate::program::exit_codes::ExitCode;

/// What to install, and where.
pub struct Options {
    pub agent: Agent,
    /// The settings file named with `--file`; `None` for the agent's user settings.
    pub file: Option<PathBuf>,
    /// The reasons log the hook is told to look in, when one was named.
    pub reasons_log: Option<PathBuf>,
    /// Where the hook shows the reason.
    pub placement: Placement,
    /// The gateway the hook asks first (`--gateway`), when one was named.
    pub gateway: Option<String>,
}

impl Agent {
    /// The name `reasons hook` knows the agent by.
    fn command_name(self) -> &'static str {
        match self {
            Agent::ClaudeCode => "claude-code",
            Agent::Codex => "codex",
            Agent::GeminiCli => "gemini-cli",
            Agent::CopilotCli => "copilot-cli",
        }
    }

    /// The agent's name for people.
    fn title(self) -> &'static str {
        match self {
            Agent::ClaudeCode => "Claude Code",
            Agent::Codex => "Codex",
            Agent::GeminiCli => "Gemini CLI",
            Agent::CopilotCli => "Copilot CLI",
        }
    }

    /// The event the hook answers, as the settings name it.
    fn settings_event(self) -> &'static str {
        match self {
            Agent::ClaudeCode | Agent::Codex => "PreToolUse",
            Agent::GeminiCli => "BeforeTool",
            Agent::CopilotCli => "preToolUse",
        }
    }

    /// The agent's user settings, in its home ([`crate::program::agent_homes`]):
    /// `settings.json` in `~/.claude` (or `$CLAUDE_CONFIG_DIR`), `hooks.json` in `~/.codex` (or
    /// `$CODEX_HOME`), `settings.json` in `~/.gemini` (or `$GEMINI_CLI_HOME/.gemini`),
    /// `hooks/reasons.json` in `~/.copilot` (or `$COPILOT_HOME`).
    fn user_settings(self) -> anyhow::Result<PathBuf> {
        let (home, file) = match self {
            Agent::ClaudeCode => (&agent_homes::CLAUDE_CODE, "settings.json"),
            Agent::Codex => (&agent_homes::CODEX, "hooks.json"),
            Agent::GeminiCli => (&agent_homes::GEMINI_CLI, "settings.json"),
            // Copilot CLI reads every file of its hooks folder: ours is a file of its own.
            Agent::CopilotCli => (&agent_homes::COPILOT_CLI, "hooks/reasons.json"),
        };
        let folder = home
            .folder()
            .context("HOME is not set: name the settings file with --file")?;
        Ok(folder.join(file))
    }

    /// The group that holds the hook: every tool's calls. Claude Code matches all tools with
    /// `*`; Codex and Gemini CLI read the matcher as a regular expression, where no matcher
    /// matches all; Copilot CLI's handler is its own entry, run for every tool.
    fn group(self, command: &str) -> Value {
        let handler = json!({"type": "command", "command": command});
        match self {
            Agent::ClaudeCode => json!({"matcher": "*", "hooks": [handler]}),
            Agent::Codex => json!({"hooks": [handler]}),
            Agent::GeminiCli => {
                let mut handler = handler;
                handler["name"] = json!("reasons");
                json!({"hooks": [handler]})
            }
            Agent::CopilotCli => json!({"type": "command", "bash": command}),
        }
    }

    /// What the person will see, said once the hook is in.
    fn what_is_shown(self, placement: Placement) -> &'static str {
        match (self, placement) {
            (Agent::ClaudeCode, Placement::InPrompt) => {
                "Claude Code shows the model's reason inside its permission dialog (\"Why (the \
                 model's claim): ...\") wherever it would ask you anyway; for a command that \
                 dialog offers Yes or No only, no \"don't ask again\" (add a permissions.allow \
                 rule for that). Where it runs a call without asking (auto mode, calls your \
                 settings allow, read-only commands, claude -p) the reason is shown beside the \
                 call, as with --after."
            }
            (Agent::ClaudeCode, Placement::After) => {
                "Claude Code shows the model's reason beside the call, once it has run: after \
                 you answered its dialog."
            }
            (Agent::CopilotCli, Placement::InPrompt) => {
                "Copilot CLI shows the model's reason inside its \"Hook permission request\" \
                 dialog wherever it would ask you anyway; that dialog offers Yes or No only, in \
                 place of its own \"don't ask again\" choices. Elsewhere it shows nothing of the \
                 hook's: `reasons watch` shows every call."
            }
            (Agent::CopilotCli, Placement::After) => {
                "Copilot CLI shows a hook's text only inside its dialog: with --after it shows \
                 nothing; `reasons watch` shows every call."
            }
            (Agent::Codex, _) => {
                "Codex shows the model's reason beside the call (its approval overlay has no \
                 place for a hook's text)."
            }
            (Agent::GeminiCli, _) => {
                "Gemini CLI shows the model's reason on the line right above its confirmation \
                 box, while it asks."
            }
        }
    }
}

/// `reasons hook install`.
pub fn install(options: Options, out: &mut dyn Write) -> anyhow::Result<ExitCode> {
    let agent = options.agent;
    let (path, create) = settings_path(agent, options.file)?;
    let command = hook_command(
        agent,
        options.reasons_log.as_deref(),
        options.placement,
        options.gateway.as_deref(),
    )?;
    let mut settings = read_settings(&path)?;
    let event = agent.settings_event();
    let groups = event_groups(&mut settings, event, &path)?;
    let ours: Vec<String> = our_commands(groups, agent)
        .into_iter()
        .map(str::to_owned)
        .collect();
    if ours == [command.as_str()] {
        writeln!(
            out,
            "The {} hook is already in {}: {event} runs {command}",
            agent.title(),
            path.display()
        )?;
        return Ok(ExitCode::Success);
    }
    remove_ours(groups, agent);
    groups.push(agent.group(&command));
    if agent == Agent::CopilotCli {
        // Copilot CLI reads a hooks file of this version only.
        let settings = settings.as_object_mut().expect("read as an object");
        if !settings.contains_key("version") {
            settings.shift_insert(0, "version".into(), json!(1));
        }
    }
    write_settings(&path, &settings, create)?;
    let verb = if ours.is_empty() { "Added" } else { "Replaced" };
    writeln!(
        out,
        "{verb} the {} hook in {}: {event} runs {command}",
        agent.title(),
        path.display()
    )?;
    writeln!(out, "{}", agent.what_is_shown(options.placement))?;
    writeln!(out, "Undo with: {}", undo_command(agent, &path, create))?;
    if agent == Agent::Codex {
        writeln!(
            out,
            "Codex runs a new hook only once you trust it: start `codex` and review it when \
             asked (or under /hooks). A headless `codex exec` runs untrusted hooks only with \
             --dangerously-bypass-hook-trust."
        )?;
    }
    Ok(ExitCode::Success)
}

/// `reasons hook uninstall`.
pub fn uninstall(
    agent: Agent,
    file: Option<PathBuf>,
    out: &mut dyn Write,
) -> anyhow::Result<ExitCode> {
    let (path, _) = settings_path(agent, file)?;
    if !path.exists() {
        writeln!(
            out,
            "No {} hook to remove: {} does not exist",
            agent.title(),
            path.display()
        )?;
        return Ok(ExitCode::Success);
    }
    let mut settings = read_settings(&path)?;
    let event = agent.settings_event();
    let groups = event_groups(&mut settings, event, &path)?;
    if our_commands(groups, agent).is_empty() {
        writeln!(
            out,
            "No {} hook to remove in {}",
            agent.title(),
            path.display()
        )?;
        return Ok(ExitCode::Success);
    }
    remove_ours(groups, agent);
    // An event, or `hooks`, left empty by the removal goes too: the file reads as it did before
    // the hook was installed.
    if groups.is_empty() {
        let hooks = settings["hooks"]
            .as_object_mut()
            .expect("read as an object");
        hooks.shift_remove(event);
        if hooks.is_empty() {
            settings
                .as_object_mut()
                .expect("read as an object")
                .shift_remove("hooks");
        }
    }
    write_settings(&path, &settings, false)?;
    writeln!(
        out,
        "Removed the {} hook from {}",
        agent.title(),
        path.display()
    )?;
    Ok(ExitCode::Success)
}

/// The settings file, and whether its folder may be created: the agent's own folder may be,
/// a folder named with `--file` must exist.
fn settings_path(agent: Agent, file: Option<PathBuf>) -> anyhow::Result<(PathBuf, bool)> {
    match file {
        Some(file) => {
            let folder = file
                .parent()
                .filter(|folder| !folder.as_os_str().is_empty());
            if let Some(folder) = folder {
                if !folder.is_dir() {
                    bail!(
                        "{}: its folder {} does not exist",
                        file.display(),
                        folder.display()
                    );
                }
            }
            Ok((file, false))
        }
        None => Ok((agent.user_settings()?, true)),
    }
}

/// The hook's command line: this binary by its absolute path, and the log, absolute too (the
/// agent runs the hook from wherever it works).
pub(super) fn hook_command(
    agent: Agent,
    reasons_log: Option<&Path>,
    placement: Placement,
    gateway: Option<&str>,
) -> anyhow::Result<String> {
    let binary = std::env::current_exe().context("cannot tell where this reasons binary is")?;
    let binary = fs::canonicalize(&binary).unwrap_or(binary);
    let mut command = format!(
        "{} hook {}",
        shell_quote(&binary.to_string_lossy()),
        agent.command_name()
    );
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

/// How to undo, as a command to paste.
fn undo_command(agent: Agent, path: &Path, user_settings: bool) -> String {
    let mut undo = format!("reasons hook uninstall {}", agent.command_name());
    if !user_settings {
        undo.push_str(" --file ");
        undo.push_str(&shell_quote(&path.to_string_lossy()));
    }
    undo
}

/// A word as a POSIX shell reads it back: as it is when it holds nothing the shell would
/// interpret, else in single quotes.
pub(super) fn shell_quote(word: &str) -> String {
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

/// Whether a handler runs `reasons hook AGENT`.
fn is_ours(handler: &Value, agent: Agent) -> bool {
    agent_asks::is_our_hook(handler, agent.command_name())
}

/// The commands of our hooks among an event's groups (Copilot CLI's: its handlers).
fn our_commands(groups: &[Value], agent: Agent) -> Vec<&str> {
    let handlers: Vec<&Value> = if agent == Agent::CopilotCli {
        groups.iter().collect()
    } else {
        groups
            .iter()
            .filter_map(|group| group.get("hooks")?.as_array())
            .flatten()
            .collect()
    };
    handlers
        .into_iter()
        .filter(|handler| is_ours(handler, agent))
        .filter_map(handler_command)
        .collect()
}

/// Takes our hooks out of an event's groups, and the groups they leave empty.
fn remove_ours(groups: &mut Vec<Value>, agent: Agent) {
    if agent == Agent::CopilotCli {
        groups.retain(|handler| !is_ours(handler, agent));
        return;
    }
    groups.retain_mut(|group| {
        let Some(handlers) = group.get_mut("hooks").and_then(Value::as_array_mut) else {
            return true;
        };
        let before = handlers.len();
        handlers.retain(|handler| !is_ours(handler, agent));
        !(handlers.is_empty() && before > 0)
    });
}

/// The settings as an object: `{}` when the file does not exist or is empty.
fn read_settings(path: &Path) -> anyhow::Result<Value> {
    let text = match fs::read_to_string(path) {
        Ok(text) => text,
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => String::new(),
        Err(error) => {
            return Err(error).with_context(|| format!("{}: cannot read", path.display()))
        }
    };
    if text.trim().is_empty() {
        return Ok(Value::Object(Map::new()));
    }
    let settings: Value = serde_json::from_str(&text).map_err(|error| {
        anyhow::anyhow!(
            "{}:{}: not valid JSON ({error}); the file is left as it was",
            path.display(),
            error.line()
        )
    })?;
    if !settings.is_object() {
        bail!(
            "{}: not a JSON object; the file is left as it was",
            path.display()
        );
    }
    Ok(settings)
}

/// The list of groups of `hooks.<event>`, created when missing.
fn event_groups<'a>(
    settings: &'a mut Value,
    event: &str,
    path: &Path,
) -> anyhow::Result<&'a mut Vec<Value>> {
    let settings = settings.as_object_mut().expect("read as an object");
    let hooks = settings
        .entry("hooks")
        .or_insert_with(|| Value::Object(Map::new()));
    let Some(hooks) = hooks.as_object_mut() else {
        bail!(
            "{}: `hooks` is not an object; the file is left as it was",
            path.display()
        );
    };
    let groups = hooks
        .entry(event)
        .or_insert_with(|| Value::Array(Vec::new()));
    match groups.as_array_mut() {
        Some(groups) => Ok(groups),
        None => bail!(
            "{}: `hooks.{event}` is not a list; the file is left as it was",
            path.display()
        ),
    }
}

/// Replaces the settings file in one rename, keeping its permissions; a read-only file is an
/// error, even for a user the system would let write it.
fn write_settings(path: &Path, settings: &Value, create_folder: bool) -> anyhow::Result<()> {
    let existing = fs::metadata(path).ok();
    if existing
        .as_ref()
        .is_some_and(|meta| meta.permissions().readonly())
    {
        bail!(
            "{}: the file is read-only; it is left as it was",
            path.display()
        );
    }
    // A settings file that is a link (into a dotfiles repository, say) stays one: the file it
    // points to is replaced.
    let target = fs::canonicalize(path).unwrap_or_else(|_| path.to_owned());
    let folder = match target
        .parent()
        .filter(|folder| !folder.as_os_str().is_empty())
    {
        Some(folder) => folder.to_owned(),
        None => PathBuf::from("."),
    };
    if create_folder {
        fs::create_dir_all(&folder)
            .with_context(|| format!("{}: cannot create its folder", path.display()))?;
    }
    let mut text = serde_json::to_string_pretty(settings).expect("JSON values serialise");
    text.push('\n');
    let cannot_write = || {
        format!(
            "{}: cannot write; the file is left as it was",
            path.display()
        )
    };
    let name = target.file_name().unwrap_or_default().to_string_lossy();
    let temporary = folder.join(format!(".{name}.reasons-{}.tmp", std::process::id()));
    let written = (|| {
        let mut file = fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&temporary)?;
        file.write_all(text.as_bytes())?;
        if let Some(meta) = &existing {
            file.set_permissions(meta.permissions())?;
        }
        file.sync_all()?;
        fs::rename(&temporary, &target)
    })();
    if written.is_err() {
        let _ = fs::remove_file(&temporary);
    }
    written.with_context(cannot_write)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn copilot_cli_s_handler_is_recognised_by_its_bash_command() {
        let handler = json!({"type": "command", "bash": "/usr/bin/reasons hook copilot-cli"});
        assert!(is_ours(&handler, Agent::CopilotCli));
        assert!(!is_ours(&handler, Agent::ClaudeCode));
        let mut groups = vec![handler, json!({"type": "command", "bash": "./other.sh"})];
        assert_eq!(
            our_commands(&groups, Agent::CopilotCli),
            ["/usr/bin/reasons hook copilot-cli"]
        );
        remove_ours(&mut groups, Agent::CopilotCli);
        assert_eq!(groups, [json!({"type": "command", "bash": "./other.sh"})]);
    }

    #[test]
    fn a_quoted_path_reads_back_as_the_same_word() {
        for word in ["/usr/bin/reasons", "/home/a b/reasons", "/it's/reasons", ""] {
            let line = format!("{} hook codex", shell_quote(word));
            assert_eq!(agent_asks::shell::words(&line), [word, "hook", "codex"]);
        }
        assert_eq!(
            agent_asks::shell::words(r#""/a b/reasons" hook x\ y"#),
            ["/a b/reasons", "hook", "x y"]
        );
    }
}
