//! `reasons hook install AGENT` and `reasons hook uninstall AGENT`: the hook written into (or
//! taken out of) the agent's user settings, so that nobody edits three JSON files three ways.
//!
//! The agents keep hooks alike: `hooks.<event>` is a list of entries, each a group with a list
//! of `hooks` handlers or a handler on its own; each agent's file says its entry, its event and
//! its settings file ([`crate::program::agents::Hook`]). The settings are read, the
//! hook is merged in (everything else kept, keys in their order), and the file is replaced in one
//! rename, so an agent starting meanwhile reads either the old settings or the new ones. A hook
//! of ours is recognised by its command (`…/reasons hook AGENT …`), whatever path or log it
//! names: installing again replaces it, installing the same twice changes nothing.

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::{bail, Context};
use serde_json::{Map, Value};

use crate::program::agents::hook_settings::{hook_command, our_commands, remove_ours, shell_quote};
use crate::program::agents::{self, Agent, Hook, Installs, Placement};
use crate::program::exit_codes::ExitCode;
use crate::program::json_settings::replace_file;

/// What to install, and where.
pub struct Options {
    pub agent: &'static Agent,
    /// The settings file named with `--file`; `None` for the agent's user settings.
    pub file: Option<PathBuf>,
    /// The reasons log the hook is told to look in, when one was named.
    pub reasons_log: Option<PathBuf>,
    /// Where the hook shows the reason.
    pub placement: Placement,
    /// The gateway the hook asks first (`--gateway`), when one was named.
    pub gateway: Option<String>,
}

/// The agent's hook: `hook install` and `uninstall` are offered for agents that have one.
fn hook_of(agent: &Agent) -> anyhow::Result<&Hook> {
    agent
        .hook
        .as_ref()
        .with_context(|| format!("{} has no hook of ours", agent.title))
}

/// `reasons hook install`.
pub fn install(options: Options, out: &mut dyn Write) -> anyhow::Result<ExitCode> {
    let agent = options.agent;
    let hook = hook_of(agent)?;
    let command = hook_command(
        agent.name(),
        options.reasons_log.as_deref(),
        options.placement,
        options.gateway.as_deref(),
    )?;
    if let Some(files) = own_files(agent, hook, options.file.as_deref())? {
        (files.0)(&command, out)?;
        return Ok(ExitCode::Success);
    }
    let (path, create) = settings_path(agent, options.file)?;
    let mut settings = read_settings(&path)?;
    let event = hook.event;
    let groups = event_groups(&mut settings, event, &path)?;
    let ours: Vec<String> = our_commands(groups, agent.name())
        .into_iter()
        .map(str::to_owned)
        .collect();
    if ours == [command.as_str()] {
        writeln!(
            out,
            "The {} hook is already in {}: {event} runs {command}",
            agent.title,
            path.display()
        )?;
        return Ok(ExitCode::Success);
    }
    remove_ours(groups, agent.name());
    groups.push((hook.entry)(&command));
    if let Some(version) = hook.file_version {
        let settings = settings.as_object_mut().expect("read as an object");
        if !settings.contains_key("version") {
            settings.shift_insert(0, "version".into(), version.into());
        }
    }
    write_settings(&path, &settings)?;
    let verb = if ours.is_empty() { "Added" } else { "Replaced" };
    writeln!(
        out,
        "{verb} the {} hook in {}: {event} runs {command}",
        agent.title,
        path.display()
    )?;
    writeln!(out, "{}", (hook.what_is_shown)(options.placement))?;
    writeln!(out, "Undo with: {}", undo_command(agent, &path, create))?;
    if let Some(note) = hook.after_install {
        writeln!(out, "{note}")?;
    }
    Ok(ExitCode::Success)
}

/// `reasons hook uninstall`.
pub fn uninstall(
    agent: &Agent,
    file: Option<PathBuf>,
    out: &mut dyn Write,
) -> anyhow::Result<ExitCode> {
    if let Some(files) = own_files(agent, hook_of(agent)?, file.as_deref())? {
        (files.1)(out)?;
        return Ok(ExitCode::Success);
    }
    let (path, _) = settings_path(agent, file)?;
    if !path.exists() {
        writeln!(
            out,
            "No {} hook to remove: {} does not exist",
            agent.title,
            path.display()
        )?;
        return Ok(ExitCode::Success);
    }
    let mut settings = read_settings(&path)?;
    let event = hook_of(agent)?.event;
    let groups = event_groups(&mut settings, event, &path)?;
    if our_commands(groups, agent.name()).is_empty() {
        writeln!(
            out,
            "No {} hook to remove in {}",
            agent.title,
            path.display()
        )?;
        return Ok(ExitCode::Success);
    }
    remove_ours(groups, agent.name());
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
    write_settings(&path, &settings)?;
    writeln!(
        out,
        "Removed the {} hook from {}",
        agent.title,
        path.display()
    )?;
    Ok(ExitCode::Success)
}

/// The install and uninstall of an agent whose hook is files of ours rather than a settings
/// entry; `None` for one whose hook is a settings entry.
type OwnFiles = (
    fn(&str, &mut dyn Write) -> anyhow::Result<()>,
    fn(&mut dyn Write) -> anyhow::Result<()>,
);

fn own_files(agent: &Agent, hook: &Hook, file: Option<&Path>) -> anyhow::Result<Option<OwnFiles>> {
    match hook.installs {
        Installs::Settings => Ok(None),
        Installs::Files {
            install, uninstall, ..
        } => {
            if file.is_some() {
                bail!(
                    "{}'s hook is a plugin in its home, not an entry in a settings file: --file does not apply",
                    agent.title
                );
            }
            Ok(Some((install, uninstall)))
        }
        Installs::RunOnly => bail!(
            "{}'s hook is wired by `reasons run {}` for its run only",
            agent.title,
            agent.names().next().unwrap_or_default()
        ),
    }
}

/// The settings file, and whether its folder may be created: the agent's own folder may be,
/// a folder named with `--file` must exist.
fn settings_path(agent: &Agent, file: Option<PathBuf>) -> anyhow::Result<(PathBuf, bool)> {
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
        None => {
            let file = agents::hook_settings_file(agent)
                .context("HOME is not set: name the settings file with --file")?;
            Ok((file, true))
        }
    }
}

/// How to undo, as a command to paste.
fn undo_command(agent: &Agent, path: &Path, user_settings: bool) -> String {
    let mut undo = format!("reasons hook uninstall {}", agent.name());
    if !user_settings {
        undo.push_str(" --file ");
        undo.push_str(&shell_quote(&path.to_string_lossy()));
    }
    undo
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

/// Replaces the settings file ([`replace_file`]); a read-only file is an error, even for a user
/// the system would let write it.
fn write_settings(path: &Path, settings: &Value) -> anyhow::Result<()> {
    if fs::metadata(path).is_ok_and(|meta| meta.permissions().readonly()) {
        bail!(
            "{}: the file is read-only; it is left as it was",
            path.display()
        );
    }
    let mut text = serde_json::to_string_pretty(settings).expect("JSON values serialise");
    text.push('\n');
    replace_file(path, &text)
}
